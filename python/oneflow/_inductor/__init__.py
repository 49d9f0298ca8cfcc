"""oneflow._inductor (torch._inductor): ``config``, the settings scripts write for PyTorch's
code generator; oneflow.compile does not read them (see oneflow._inductor.config)."""

from oneflow._inductor import config  # noqa: F401

__all__ = ["config"]
