"""oneflow.backends.cuda: the CUDA back end's switches, as torch.backends.cuda.

``matmul.allow_tf32`` is another view of ``oneflow.set_float32_matmul_precision`` ("high" when
True, "highest" when False; cuBLAS then uses TF32 tensor cores for float32 products).
The reduced-precision-reduction switches and the scaled-dot-product-attention backend switches
are kept and reported; oneflow's CUDA products and attention have one implementation each, so
they select nothing yet."""

import contextlib

from oneflow import _oneflow_internal as _internal
from oneflow.framework import determinism as _determinism


def is_built():
    """Whether oneflow was built with CUDA (not whether a GPU is present)."""
    return bool(_internal.with_cuda)


class cuBLASModule:
    """torch.backends.cuda.matmul: allow_tf32, allow_fp16_reduced_precision_reduction,
    allow_bf16_reduced_precision_reduction; other names raise AttributeError."""

    _FLAGS = ("allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction")

    def __init__(self):
        object.__setattr__(self, "_values", {name: True for name in self._FLAGS})

    def __getattr__(self, name):
        if name == "allow_tf32":
            return _determinism.get_float32_matmul_precision() != "highest"
        values = object.__getattribute__(self, "_values")
        if name in values:
            return values[name]
        raise AttributeError("Unknown attribute " + name)

    def __setattr__(self, name, value):
        if name == "allow_tf32":
            _determinism.set_float32_matmul_precision("high" if value else "highest")
            return
        if name in self._values:
            self._values[name] = bool(value)
            return
        raise AttributeError("Unknown attribute " + name)


matmul = cuBLASModule()

_sdp = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}


def flash_sdp_enabled():
    return _sdp["flash"]


def enable_flash_sdp(enabled: bool):
    _sdp["flash"] = bool(enabled)


def mem_efficient_sdp_enabled():
    return _sdp["mem_efficient"]


def enable_mem_efficient_sdp(enabled: bool):
    _sdp["mem_efficient"] = bool(enabled)


def math_sdp_enabled():
    return _sdp["math"]


def enable_math_sdp(enabled: bool):
    _sdp["math"] = bool(enabled)


def cudnn_sdp_enabled():
    return _sdp["cudnn"]


def enable_cudnn_sdp(enabled: bool):
    _sdp["cudnn"] = bool(enabled)


@contextlib.contextmanager
def sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True, enable_cudnn=True):
    """The backend switches set for the block and restored after it."""
    saved = dict(_sdp)
    _sdp.update(
        flash=bool(enable_flash),
        math=bool(enable_math),
        mem_efficient=bool(enable_mem_efficient),
        cudnn=bool(enable_cudnn),
    )
    try:
        yield
    finally:
        _sdp.update(saved)
