"""oneflow.autograd.function: custom differentiable functions (Function, its ctx, and
once_differentiable)."""

from oneflow.autograd import Function, FunctionCtx, once_differentiable

__all__ = ["Function", "FunctionCtx", "once_differentiable"]
