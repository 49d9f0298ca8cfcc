"""oneflow.nn (grows with the training work: modules, layers, losses)."""

from oneflow.nn import functional  # noqa: F401
