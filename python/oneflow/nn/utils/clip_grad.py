"""torch.nn.utils.clip_grad: the gradient clipping functions of oneflow.nn.utils."""

from oneflow.nn.utils import (  # noqa: F401
    clip_grad_norm,
    clip_grad_norm_,
    clip_grad_value_,
    clip_grads_with_norm_,
    get_total_norm,
)
