"""oneflow.distributions.fishersnedecor: FisherSnedecor (PyTorch's module path)."""

from oneflow.distributions.univariate import FisherSnedecor

__all__ = ["FisherSnedecor"]
