"""PyTorch's torch.utils.data._utils: the collate helpers (collate.py)."""

from oneflow.utils.data._utils import collate  # noqa: F401
