"""Differential testing: run the same computation in oneflow and PyTorch (and NumPy where
given) on the same random inputs; compare forward values, dtypes and input gradients.

A test writes the computation once against a module argument ``lib`` that is either
``oneflow`` or ``torch``:

    check(lambda lib, a, b: lib.matmul(a, b).relu(), [(3, 4), (4, 5)], device=device)
"""

import numpy as np
import torch

import oneflow as flow

_TORCH_DTYPES = {
    "float32": torch.float32,
    "float64": torch.float64,
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
    "int64": torch.int64,
    "int32": torch.int32,
    "int16": torch.int16,
    "int8": torch.int8,
    "uint8": torch.uint8,
    "bool": torch.bool,
}
_FLOW_DTYPES = {
    "float32": flow.float32,
    "float64": flow.float64,
    "float16": flow.float16,
    "bfloat16": flow.bfloat16,
    "int64": flow.int64,
    "int32": flow.int32,
    "int16": flow.int16,
    "int8": flow.int8,
    "uint8": flow.uint8,
    "bool": flow.bool,
}


# The reference is PyTorch 2.13 (requirements/test.txt). An older PyTorch, as on a GPU host with
# its own build, lacks a few things the tests compare against; those comparisons are skipped there.
def _torch_can(fn):
    try:
        fn()
        return True
    except (RuntimeError, NotImplementedError):
        return False


TORCH_HAS_AMINMAX_GRAD = _torch_can(
    lambda: torch.aminmax(torch.ones(2, requires_grad=True))[0].backward()
)
TORCH_HAS_HALF_TRACE = _torch_can(lambda: torch.trace(torch.ones(2, 2, dtype=torch.float16)))
TORCH_PRINTS_BATCHNORM_BIAS = "bias=" in repr(torch.nn.BatchNorm1d(1))
OLD_TORCH = f"PyTorch {torch.__version__} is older than the 2.13 reference"

# (atol, rtol). Half types: a few units in the last place (float16 eps 2^-10, bfloat16 2^-7).
_TOL = {
    "float32": (1e-5, 1e-4),
    "float64": (1e-10, 1e-9),
    "float16": (1e-2, 1e-2),
    "bfloat16": (3e-2, 3e-2),
}


def random_array(rng, shape, dtype):
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if dtype == "uint8":
        return rng.integers(0, 11, size=shape).astype(dtype)
    if dtype.startswith("int"):
        return rng.integers(-5, 6, size=shape).astype(dtype)
    if dtype == "bfloat16":
        # NumPy has no bfloat16: float32 values already rounded to bfloat16 (round to nearest even).
        bits = rng.standard_normal(shape).astype(np.float32).view(np.uint32)
        bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
        return bits.astype(np.uint32).view(np.float32)
    return rng.standard_normal(shape).astype(dtype)


def _to_numpy(t):
    t = t.detach().cpu()
    if str(t.dtype).split(".")[-1] == "bfloat16":  # NumPy has no bfloat16; exact in float32
        t = t.float()
    return t.numpy()


def assert_close(actual, expected, dtype, what):
    atol, rtol = _TOL.get(dtype, (0, 0))
    a, e = np.asarray(actual), np.asarray(expected)
    assert a.shape == e.shape, f"{what}: shape {a.shape} != {e.shape}"
    wide = np.complex128 if np.iscomplexobj(a) or np.iscomplexobj(e) else np.float64
    np.testing.assert_allclose(a.astype(wide), e.astype(wide), atol=atol, rtol=rtol, err_msg=what)


def check(
    fn,
    shapes,
    dtype="float32",
    device="cpu",
    grad=True,
    seed=0,
    numpy_fn=None,
    transform=None,
):
    """Compares fn(flow, *inputs) with fn(torch, *inputs).

    shapes: one shape per input. transform(lib, tensor, i) may return a non-contiguous view
    of input i (e.g. a transpose) before fn sees it. Gradients are compared for floating
    dtypes, with a random cotangent so every output element matters.
    """
    rng = np.random.default_rng(seed)
    arrays = [random_array(rng, s, dtype) for s in shapes]
    floating = dtype.startswith(("float", "bfloat"))
    grad = grad and floating

    def run(lib, dtypes, dev):
        leaves = [
            lib.tensor(a, dtype=dtypes[dtype], device=dev, requires_grad=grad) for a in arrays
        ]
        inputs = [transform(lib, t, i) if transform else t for i, t in enumerate(leaves)]
        return leaves, fn(lib, *inputs)

    f_leaves, f_out = run(flow, _FLOW_DTYPES, device)
    t_leaves, t_out = run(torch, _TORCH_DTYPES, "cpu")
    assert str(f_out.dtype).split(".")[-1] == str(t_out.dtype).split(".")[-1], (
        f"dtype {f_out.dtype} != {t_out.dtype}"
    )
    assert tuple(f_out.shape) == tuple(t_out.shape), f"shape {f_out.shape} != {t_out.shape}"
    out_dtype = str(f_out.dtype).split(".")[-1]
    assert_close(_to_numpy(f_out), _to_numpy(t_out), out_dtype, "forward")
    if numpy_fn is not None:
        assert_close(_to_numpy(f_out), numpy_fn(*arrays), out_dtype, "forward vs numpy")
    if grad:
        cot = random_array(rng, tuple(t_out.shape), dtype)
        (f_out * flow.tensor(cot, device=device)).sum().backward()
        (t_out * torch.tensor(cot)).sum().backward()
        for i, (fl, tl) in enumerate(zip(f_leaves, t_leaves)):
            assert fl.grad is not None, f"input {i} got no gradient"
            assert_close(_to_numpy(fl.grad), _to_numpy(tl.grad), dtype, f"grad of input {i}")
    return f_out


# Small helpers the module-level differential tests share.
LIBS = (torch, flow)


def leaf_pair(a, requires_grad=True):
    """The same data as a (torch, oneflow) pair of leaves."""
    return (
        torch.tensor(a, requires_grad=requires_grad),
        flow.tensor(a, requires_grad=requires_grad),
    )


def error_name(fn):
    """The name of the exception fn() raises, or None."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return type(e).__name__
    return None


def same_error(make):
    """make(lib) raises the same exception type under torch and oneflow (and does raise)."""
    names = [error_name(lambda lib=lib: make(lib)) for lib in LIBS]
    assert names[0] is not None, "torch accepted the case"
    assert names[1] == names[0]
