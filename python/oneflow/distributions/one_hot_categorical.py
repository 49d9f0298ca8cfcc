"""oneflow.distributions.one_hot_categorical: OneHotCategorical, OneHotCategoricalStraightThrough
(PyTorch's module path)."""

from oneflow.distributions.counts import OneHotCategorical, OneHotCategoricalStraightThrough

__all__ = ["OneHotCategorical", "OneHotCategoricalStraightThrough"]
