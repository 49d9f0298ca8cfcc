"""oneflow.distributions.relaxed_bernoulli: LogitRelaxedBernoulli, RelaxedBernoulli
(PyTorch's module path)."""

from oneflow.distributions.relaxed import LogitRelaxedBernoulli, RelaxedBernoulli

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]
