"""oneflow.fft: discrete Fourier transforms with torch.fft's interface (signatures, defaults,
norm modes, padding and trimming to n / s, out=, error messages).

Every transform is composed here from the three primitives of oneflow._C, which transform whole
dims without changing sizes:

    fft_c2c(x, dims, normalization, forward)    complex -> complex
    fft_r2c(x, dims, normalization, onesided)   real -> complex, the last dim halved if onesided
    fft_c2r(x, dims, normalization, n)          complex (last dim n // 2 + 1) -> real (last dim n)

with normalization 0 (none), 1 (1 / sqrt(N)) or 2 (1 / N). This module checks the arguments,
promotes dtypes, pads or trims the input to the requested signal sizes and picks the primitive:

    fft / ifft / fftn / ifftn    c2c; a real input goes through r2c with onesided=False (the inverse
                                 is the conjugate of the forward transform of a real signal)
    rfft / rfftn                 r2c, onesided
    irfft / irfftn               c2r
    hfft / hfftn                 c2r of the conjugate: the transform of a Hermitian signal whose
                                 half is the input, with the forward direction's normalization
    ihfft / ihfftn               conjugate of the onesided r2c, with the inverse direction's
                                 normalization
    fftfreq, rfftfreq, fftshift, ifftshift   helpers, no transform

Inputs: integers and bool are promoted to the default floating dtype; float16 and bfloat16 raise
"Unsupported dtype Half" as PyTorch's CPU kernels do. Complex tensors take only the ops the core
lists for them (views, cat, zeros, conj, arithmetic), so padding is a cat with zeros and shifting
a cat of two narrowed views. The stft and istft built on these live in
oneflow/framework/spectral.py.
"""

import math
import operator

import oneflow
from oneflow._oneflow_internal import _C, Tensor

__all__ = [
    "fft",
    "ifft",
    "fft2",
    "ifft2",
    "fftn",
    "ifftn",
    "rfft",
    "irfft",
    "rfft2",
    "irfft2",
    "rfftn",
    "irfftn",
    "hfft",
    "ihfft",
    "hfft2",
    "ihfft2",
    "hfftn",
    "ihfftn",
    "fftfreq",
    "rfftfreq",
    "fftshift",
    "ifftshift",
]

# The primitives' normalization codes (PyTorch's fft_norm_mode).
_NORM_NONE, _NORM_BY_ROOT_N, _NORM_BY_N = 0, 1, 2

# PyTorch's ScalarType names, which its FFT messages print.
_TORCH_NAMES = {
    "float32": "Float",
    "float64": "Double",
    "float16": "Half",
    "bfloat16": "BFloat16",
    "complex64": "ComplexFloat",
    "complex128": "ComplexDouble",
    "int64": "Long",
    "int32": "Int",
    "int16": "Short",
    "int8": "Char",
    "uint8": "Byte",
    "bool": "Bool",
}


def _dtype_name(dtype):
    name = str(dtype).rsplit(".", 1)[-1]
    return _TORCH_NAMES.get(name, name)


def _is_complex(t):
    return t.dtype.is_complex


# ---- argument checks ---------------------------------------------------------------------


def _check_input(fname, input):
    if not isinstance(input, Tensor):
        raise TypeError(
            f"{fname}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}"
        )


def _int_arg(fname, arg, value):
    if isinstance(value, bool) or not _is_int(value):
        raise TypeError(f"{fname}(): argument '{arg}' must be int, not {type(value).__name__}")
    return operator.index(value)


def _is_int(value):
    try:
        operator.index(value)
    except TypeError:
        return False
    return True


def _int_list(fname, arg, value):
    """An int or a sequence of ints (PyTorch's IntArrayRef arguments) as a list."""
    if _is_int(value) and not isinstance(value, bool):
        return [operator.index(value)]
    if not isinstance(value, (list, tuple)):  # oneflow.Size is a tuple
        raise TypeError(
            f"{fname}(): argument '{arg}' must be tuple of ints, not {type(value).__name__}"
        )
    out = []
    for i, v in enumerate(value):
        if isinstance(v, bool) or not _is_int(v):
            raise TypeError(
                f"{fname}(): argument '{arg}' must be tuple of ints, but found element of type "
                f"{type(v).__name__} at pos {i}"
            )
        out.append(operator.index(v))
    return out


def _wrap_dim(dim, ndim):
    """PyTorch's maybe_wrap_dim without scalar wrapping: a 0-d tensor has no dim to transform."""
    if ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    if not -ndim <= dim < ndim:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got "
            f"{dim})"
        )
    return dim % ndim


def _norm_code(norm, forward):
    """The normalization code of a norm mode in one direction: "backward" (None) scales the
    inverse by 1/n, "forward" the forward transform, "ortho" both by 1/sqrt(n)."""
    if norm is None or norm == "backward":
        return _NORM_NONE if forward else _NORM_BY_N
    if norm == "forward":
        return _NORM_BY_N if forward else _NORM_NONE
    if norm == "ortho":
        return _NORM_BY_ROOT_N
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _check_points(n):
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


# ---- dtypes and sizes --------------------------------------------------------------------


def _promote(x, require_complex):
    """x in the dtype the transform computes in: complex stays; integers and bool become the
    default floating dtype; float32/float64 (complex64/complex128 when require_complex)."""
    dtype = x.dtype
    if dtype.is_complex:
        return x
    if not dtype.is_floating_point:
        dtype = oneflow.get_default_dtype()
    if dtype not in (oneflow.float32, oneflow.float64):
        raise RuntimeError(f"Unsupported dtype {_dtype_name(dtype)}")
    if require_complex:
        dtype = oneflow.complex64 if dtype == oneflow.float32 else oneflow.complex128
    return x if dtype == x.dtype else x.to(dtype)


def _resize(x, dims, sizes):
    """x trimmed (a narrow view) or zero-padded at the end (a cat) to sizes along dims; a size
    of -1 keeps the dim. Works the same on complex tensors."""
    for d, n in zip(dims, sizes):
        have = x.shape[d]
        if n == -1 or n == have:
            continue
        if n < have:
            x = _C.narrow(x, d, 0, n)
        else:
            shape = list(x.shape)
            shape[d] = n - have
            zeros = oneflow.zeros(shape, dtype=x.dtype, device=x.device)
            x = oneflow.cat([x, zeros], d)
    return x


def _canonical_shape_and_dims(fname, input, s, dim):
    """The transformed dims (wrapped, unique) and their signal sizes, from s and dim as
    torch.fft's n-dimensional transforms read them: dim defaults to the last len(s) dims (all
    dims without s), a size of -1 in s keeps that dim's size."""
    ndim = input.ndim
    dims = None
    if dim is not None:
        dims = [_wrap_dim(d, ndim) for d in _int_list(fname, "dim", dim)]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        sizes = _int_list(fname, "s", s)
        if dims is not None and len(dims) != len(sizes):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        if len(sizes) > ndim:
            raise RuntimeError(
                f"Got shape with {len(sizes)} values but input tensor only has {ndim} dimensions."
            )
        if dims is None:
            dims = list(range(ndim - len(sizes), ndim))
        shape = [input.shape[d] if n == -1 else n for d, n in zip(dims, sizes)]
    elif dims is None:
        dims = list(range(ndim))
        shape = list(input.shape)
    else:
        shape = [input.shape[d] for d in dims]
    for n in shape:
        _check_points(n)
    return shape, dims


def _canonical_c2r(name, fname, input, s, dim):
    """_canonical_shape_and_dims for the transforms with a real output (irfftn, hfftn): the
    input sizes to resize to (the last one n // 2 + 1), the dims, and the output size n of the
    last dim (2 * (m - 1) for an input of m entries there unless s gives it)."""
    shape, dims = _canonical_shape_and_dims(fname, input, s, dim)
    if not dims:
        raise RuntimeError(f"{name} must transform at least one axis")
    explicit = s is not None and _int_list(fname, "s", s)[-1] != -1
    last_size = shape[-1] if explicit else 2 * (input.shape[dims[-1]] - 1)
    _check_points(last_size)
    shape[-1] = last_size // 2 + 1
    return shape, dims, last_size


# ---- out= ----------------------------------------------------------------------------------


def _with_out(fname, name, primitive, complex_result, out, compute, input):
    """compute() written into out as torch.fft's out= does: out must be complex for a complex
    result and real for a real one (any width: the result is cast), and is resized to the
    result's shape (oneflow.framework.out_arg does the resizing, overlap and autograd checks;
    its messages name the primitive, as PyTorch's do)."""
    if out is None:
        return compute()
    if not isinstance(out, Tensor):
        raise TypeError(f"{fname}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if complex_result and not _is_complex(out):
        raise RuntimeError(
            f"{name} expects a complex output tensor, but got {_dtype_name(out.dtype)}"
        )
    if not complex_result and _is_complex(out):
        raise RuntimeError(
            f"{name} expects a floating point output tensor, but got {_dtype_name(out.dtype)}"
        )
    from oneflow.framework.out_arg import _handler

    return _handler(primitive, "any")(lambda _input: compute(), (input,), {}, out)


# ---- one-dimensional transforms --------------------------------------------------------------

# name -> (family, forward): "c2c" complex or real input to a complex result, "r2c" real input
# to a one-sided complex result, "c2r" a one-sided complex input to a real result.
_ONE_DIM = {
    "fft": ("c2c", True),
    "ifft": ("c2c", False),
    "rfft": ("r2c", True),
    "ihfft": ("r2c", False),
    "irfft": ("c2r", False),
    "hfft": ("c2r", True),
}


def _primitive(family, input):
    if family == "c2r":
        return "_fft_c2r"
    if family == "c2c" and _is_complex(input):
        return "_fft_c2c"
    return "_fft_r2c"


def _transform_1d(name, input, n, dim, norm, out):
    fname = "fft_" + name
    _check_input(fname, input)
    if n is not None:
        n = _int_arg(fname, "n", n)
    dim = _int_arg(fname, "dim", dim)
    family, forward = _ONE_DIM[name]

    def compute():
        if family == "r2c" and _is_complex(input):
            raise RuntimeError(
                f"{name} expects a real input tensor, but got {_dtype_name(input.dtype)}"
            )
        x = _promote(input, require_complex=family == "c2r")
        d = _wrap_dim(dim, x.ndim)
        if family == "c2r":
            size = n if n is not None else 2 * (x.shape[d] - 1)
            _check_points(size)
            if n is not None:
                x = _resize(x, [d], [size // 2 + 1])
            code = _norm_code(norm, forward)
            if forward:  # hfft: the inverse real transform of the conjugate
                x = x.conj()
            return _C.fft_c2r(x, [d], code, size)
        size = n if n is not None else x.shape[d]
        _check_points(size)
        if n is not None:
            x = _resize(x, [d], [size])
        code = _norm_code(norm, forward)
        if _is_complex(x):
            return _C.fft_c2c(x, [d], code, forward)
        y = _C.fft_r2c(x, [d], code, family == "r2c")
        # The inverse transform of a real signal is the conjugate of its forward transform.
        return y if forward else y.conj()

    primitive = _primitive(family, input)
    return _with_out(fname, name, primitive, family != "c2r", out, compute, input)


def fft(input, n=None, dim=-1, norm=None, *, out=None):
    """The one-dimensional discrete Fourier transform of input along dim, zero-padded or trimmed
    to n points first when n is given. norm: "backward" (default, no scaling), "forward"
    (scaled by 1/n) or "ortho" (1/sqrt(n)). A real input gives the full complex spectrum."""
    return _transform_1d("fft", input, n, dim, norm, out)


def ifft(input, n=None, dim=-1, norm=None, *, out=None):
    """The one-dimensional inverse discrete Fourier transform (fft's inverse under the same
    norm: "backward" scales this direction by 1/n)."""
    return _transform_1d("ifft", input, n, dim, norm, out)


def rfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The one-dimensional transform of a real input: the n // 2 + 1 non-negative frequencies
    (the others are their conjugates)."""
    return _transform_1d("rfft", input, n, dim, norm, out)


def irfft(input, n=None, dim=-1, norm=None, *, out=None):
    """rfft's inverse: a real signal of n points (default 2 * (m - 1) for m input frequencies)
    from its one-sided spectrum. The imaginary parts of the zero (and, for even n, the Nyquist)
    frequency are ignored."""
    return _transform_1d("irfft", input, n, dim, norm, out)


def hfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The transform of a Hermitian-symmetric signal given by its one-sided half: a real
    spectrum of n points (default 2 * (m - 1))."""
    return _transform_1d("hfft", input, n, dim, norm, out)


def ihfft(input, n=None, dim=-1, norm=None, *, out=None):
    """hfft's inverse: the one-sided half (n // 2 + 1 entries) of the inverse transform of a
    real signal."""
    return _transform_1d("ihfft", input, n, dim, norm, out)


# ---- n-dimensional transforms -----------------------------------------------------------------


def _transform_nd(name, fname, input, s, dim, norm, out):
    """fftn, ifftn, rfftn, ihfftn, irfftn and hfftn (fname names the public function in type
    errors; the 2-D forms report their n-dimensional name otherwise, as PyTorch does)."""
    _check_input(fname, input)
    family, forward = _ONE_DIM[name[:-1]]

    def compute():
        if family == "c2r":
            shape, dims, last_size = _canonical_c2r(name, fname, input, s, dim)
            x = _resize(_promote(input, require_complex=True), dims, shape)
            code = _norm_code(norm, forward)
            if forward:  # hfftn: the inverse real transform of the conjugate
                x = x.conj()
            return _C.fft_c2r(x, dims, code, last_size)
        if family == "r2c" and forward and _is_complex(input):
            raise RuntimeError(
                f"{name} expects a real-valued input tensor, but got {_dtype_name(input.dtype)}"
            )
        shape, dims = _canonical_shape_and_dims(fname, input, s, dim)
        if family == "r2c":
            if not dims:
                raise RuntimeError(f"{name} must transform at least one axis")
            if _is_complex(input):  # ihfftn
                raise RuntimeError(
                    f"Only supports floating-point dtypes, but found: {_dtype_name(input.dtype)}"
                )
        x = _resize(_promote(input, require_complex=False), dims, shape)
        code = _norm_code(norm, forward)
        if not dims:  # fftn over no dims: the input as a complex tensor
            return x.to(_complex_dtype(x.dtype)) if not _is_complex(x) else _C.clone(x)
        if _is_complex(x):
            return _C.fft_c2c(x, dims, code, forward)
        y = _C.fft_r2c(x, dims, code, family == "r2c")
        return y if forward else y.conj()

    primitive = _primitive(family, input)
    return _with_out(fname, name, primitive, family != "c2r", out, compute, input)


def _complex_dtype(dtype):
    return oneflow.complex64 if dtype == oneflow.float32 else oneflow.complex128


def fftn(input, s=None, dim=None, norm=None, *, out=None):
    """The n-dimensional discrete Fourier transform over dim (default: the last len(s) dims, or
    all), each zero-padded or trimmed to its size in s (-1 keeps a dim's size)."""
    return _transform_nd("fftn", "fft_fftn", input, s, dim, norm, out)


def ifftn(input, s=None, dim=None, norm=None, *, out=None):
    """The n-dimensional inverse discrete Fourier transform."""
    return _transform_nd("ifftn", "fft_ifftn", input, s, dim, norm, out)


def rfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The n-dimensional transform of a real input, one-sided in the last transformed dim."""
    return _transform_nd("rfftn", "fft_rfftn", input, s, dim, norm, out)


def irfftn(input, s=None, dim=None, norm=None, *, out=None):
    """rfftn's inverse; the last transformed dim gives s[-1] real points (default 2 * (m - 1))."""
    return _transform_nd("irfftn", "fft_irfftn", input, s, dim, norm, out)


def hfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The n-dimensional transform of a Hermitian-symmetric signal given by its half along the
    last transformed dim: a real result."""
    return _transform_nd("hfftn", "fft_hfftn", input, s, dim, norm, out)


def ihfftn(input, s=None, dim=None, norm=None, *, out=None):
    """hfftn's inverse: the one-sided (in the last transformed dim) inverse transform of a real
    signal."""
    return _transform_nd("ihfftn", "fft_ihfftn", input, s, dim, norm, out)


def fft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """fftn over two dims (default the last two)."""
    return _transform_nd("fftn", "fft_fft2", input, s, dim, norm, out)


def ifft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """ifftn over two dims (default the last two)."""
    return _transform_nd("ifftn", "fft_ifft2", input, s, dim, norm, out)


def rfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """rfftn over two dims (default the last two)."""
    return _transform_nd("rfftn", "fft_rfft2", input, s, dim, norm, out)


def irfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """irfftn over two dims (default the last two)."""
    return _transform_nd("irfftn", "fft_irfft2", input, s, dim, norm, out)


def hfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """hfftn over two dims (default the last two)."""
    return _transform_nd("hfftn", "fft_hfft2", input, s, dim, norm, out)


def ihfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """ihfftn over two dims (default the last two)."""
    return _transform_nd("ihfftn", "fft_ihfft2", input, s, dim, norm, out)


# ---- frequencies and shifts --------------------------------------------------------------------


def _frequencies(name, n, d, indices, out, dtype, device, requires_grad):
    fname = "fft_" + name
    n = _int_arg(fname, "n", n)
    if isinstance(d, bool) or not isinstance(d, (int, float)):
        raise TypeError(f"{fname}(): argument 'd' must be float, not {type(d).__name__}")
    if out is not None:
        if not isinstance(out, Tensor):
            raise TypeError(f"{fname}(): argument 'out' must be Tensor, not {type(out).__name__}")
        dtype = out.dtype if dtype is None else dtype
        device = out.device if device is None else device
    if dtype is None:
        dtype = oneflow.get_default_dtype()
    if not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"{name} requires a floating point or complex dtype")
    if dtype.is_complex:  # as PyTorch, whose arange has no complex kernel
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{_dtype_name(dtype)}'")
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    # 1 / (n * d) in double arithmetic as PyTorch computes it: +-inf when n * d is zero.
    span = float(n) * float(d)
    scale = 1.0 / span if span != 0 else math.copysign(math.inf, span)
    values = oneflow.tensor(indices(n), dtype=dtype, device=device) * scale
    if out is not None:
        from oneflow.framework.out_arg import _handler

        return _handler(fname, "any")(lambda: values, (), {}, out)
    return values.requires_grad_(requires_grad) if requires_grad else values


def fftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """The sample frequencies of a signal of n points spaced d apart, in fft's order:
    [0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (d * n). layout is accepted for PyTorch's
    signature (strided is the only layout)."""
    return _frequencies(
        "fftfreq",
        n,
        d,
        lambda n: list(range((n + 1) // 2)) + list(range(-(n // 2), 0)),
        out,
        dtype,
        device,
        requires_grad,
    )


def rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """The sample frequencies of rfft's output for a signal of n points spaced d apart:
    [0, 1, ..., n // 2] / (d * n)."""
    return _frequencies(
        "rfftfreq", n, d, lambda n: list(range(n // 2 + 1)), out, dtype, device, requires_grad
    )


def _shift(fname, input, dim, inverse):
    _check_input(fname, input)
    if dim is None:
        dims = list(range(input.ndim))
    else:
        dims = [_wrap_dim(d, input.ndim) for d in _int_list(fname, "dim", dim)]
    if not dims:
        raise RuntimeError("`shifts` required")
    out = input
    for d in dims:  # a roll by half the size: two narrowed views joined in swapped order
        size = out.shape[d]
        s = ((size + 1) // 2 if inverse else size // 2) % size if size else 0
        if s:
            out = oneflow.cat([_C.narrow(out, d, size - s, s), _C.narrow(out, d, 0, size - s)], d)
    return _C.clone(out) if out is input else out


def fftshift(input, dim=None):
    """input with the zero frequency moved to the centre of each dim in dim (default all): a
    roll by size // 2, so fftfreq's order becomes ascending."""
    return _shift("fft_fftshift", input, dim, inverse=False)


def ifftshift(input, dim=None):
    """fftshift's inverse: a roll by -(size // 2), i.e. (size + 1) // 2."""
    return _shift("fft_ifftshift", input, dim, inverse=True)
