"""oneflow.backends: facts about the kernels' back ends, as torch.backends."""

from oneflow.backends import cpu  # noqa: F401
