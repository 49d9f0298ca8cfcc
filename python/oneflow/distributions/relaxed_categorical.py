"""oneflow.distributions.relaxed_categorical: ExpRelaxedCategorical, RelaxedOneHotCategorical
(PyTorch's module path)."""

from oneflow.distributions.relaxed import ExpRelaxedCategorical, RelaxedOneHotCategorical

__all__ = ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"]
