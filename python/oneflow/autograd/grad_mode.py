"""oneflow.autograd.grad_mode: the gradient-mode context managers under PyTorch's module path
(torch.autograd.grad_mode); they are the classes of oneflow.autograd."""

from oneflow.autograd import (  # noqa: F401
    _DecoratorContextManager,
    _NoParamDecoratorContextManager,
    enable_grad,
    inference_mode,
    no_grad,
    set_grad_enabled,
    set_multithreading_enabled,
)

__all__ = [
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "inference_mode",
    "set_multithreading_enabled",
]
