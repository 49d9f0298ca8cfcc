"""torch.autograd.variable: the deprecated Variable (a tensor)."""

from oneflow.autograd import Variable  # noqa: F401
