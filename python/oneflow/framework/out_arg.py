"""`out=` for the functions PyTorch gives one (Note [out= arguments] in
oneflow/api/python/fast_methods.cpp).

Each listed function of ``oneflow``, ``oneflow.linalg`` and ``oneflow.special`` is wrapped so that
a call with ``out=`` computes the result as usual and then writes it into ``out`` as PyTorch does:
the result's dtype must be castable to ``out``'s (or equal to it, for the ops PyTorch checks
exactly); ``out`` is resized when its shape differs (with PyTorch's warning when it had
elements); it may be an input, but may not overlap one partially; and no argument may require a
gradient while grad mode is on. The function returns ``out`` (a tuple, or the function's named
tuple, of the ``out`` tensors for the ops with several results). The result is computed into new
memory and copied: one extra pass over the output. Calls without ``out`` do not reach this module.
"""

import warnings

from oneflow._oneflow_internal import Tensor, _function_with_out
from oneflow.framework.linalg_decomp import _TORCH_DTYPE_NAMES

# PyTorch's functions with an `out=` keyword that oneflow has, by how the result's dtype meets
# out's. "cast": the result may be cast into out's dtype by PyTorch's can-cast rule (the
# elementwise, comparison and joining ops). "exact": out's dtype must be the result's.
# "any": written in out's dtype whatever it is.
# "dtype": the reduction is computed in out's dtype, as its `dtype=` argument. "factory": the
# tensor is made with out's dtype and device.
_CAST = """
acos acosh add angle addcdiv addcmul addr arccos arccosh arcsin arcsinh arctan arctan2 arctanh asin
asinh atan atan2 atanh bitwise_and bitwise_left_shift bitwise_or bitwise_right_shift bitwise_xor cat
cholesky cholesky_inverse column_stack concat concatenate copysign cos cosh deg2rad diff digamma
div divide dstack eq erf erfc erfinv exp exp2 expm1 floor_divide fmax fmin fmod gcd ge ger greater
greater_equal gt hstack hypot i0 igamma igammac kron lcm ldexp le lerp less less_equal lgamma log
log10 log1p log2
logaddexp logaddexp2 logical_and logical_not logical_or logical_xor logit logsumexp lt maximum mean
minimum mul multiply mvlgamma nanmean ne nextafter not_equal outer polygamma pow rad2deg reciprocal
remainder row_stack rsqrt sigmoid sin sinc sinh sqrt square stack std sub subtract tan tanh
threshold true_divide var vstack xlogy
"""
_EXACT = """
alias_copy as_strided_copy detach_copy diagonal_copy expand_copy permute_copy select_copy slice_copy
squeeze_copy t_copy transpose_copy unfold_copy unsqueeze_copy view_copy
abs absolute addbmm addmm addmv all amax amin aminmax any argmax argmin baddbmm bitwise_not bmm
bucketize ceil chain_matmul cholesky_solve clamp clamp_max clamp_min clip complex conj_physical
cross cummax cummin diag dot fix float_power floor frac frexp gather hardshrink heaviside histc
histogram index_add index_copy index_select inner inverse isin isneginf isposinf kthvalue
log_softmax logcumsumexp lu_solve lu_unpack masked_select matmul matrix_power max median min mm mode
msort multinomial mv nan_to_num nanmedian nanquantile narrow_copy neg negative nonzero norm polar qr
quantile renorm round scatter scatter_add searchsorted sgn sign signbit slice_scatter slogdet
softmax sort svd take take_along_dim tensordot topk triangular_solve tril triu trunc vdot where
"""
_ANY = "bernoulli"  # drawn as floats, written in out's dtype (0 and 1 in every dtype)
_DTYPE = "cumprod cumsum nansum prod sum"
_FACTORY = "arange empty eye full linspace logspace ones rand randint randn randperm zeros"
_NORMAL = "normal"  # a factory when mean and std are numbers, else elementwise
_LINALG = """
cholesky cholesky_ex cond cross det eig eigh eigvals eigvalsh inv inv_ex lstsq lu lu_factor
lu_factor_ex lu_solve matmul matrix_norm matrix_power matrix_rank multi_dot norm pinv qr slogdet
solve solve_ex solve_triangular svd svdvals vecdot vector_norm
"""
_SPECIAL_CAST = """
digamma entr erf erfc erfcx erfinv exp2 expit expm1 gammainc gammaincc gammaln i0 i0e i1 i1e log1p
log_ndtr logit logsumexp multigammaln ndtr ndtri polygamma psi sinc xlog1py xlogy zeta
"""
_SPECIAL_EXACT = "round"

# Ops whose single result is cast into out even though their results with a `dim` are pairs
# checked exactly (max(x) -> one value; max(x, dim) -> values and indices).
_EXACT_ONLY_FOR_PAIRS = {"max", "min"}

_SCALAR_TYPE = _TORCH_DTYPE_NAMES  # PyTorch's names in its can-cast message
_C_TYPE = {  # ... and in its exact-dtype message
    "float32": "float",
    "float64": "double",
    "float16": "c10::Half",
    "bfloat16": "c10::BFloat16",
    "int64": "long int",
    "int32": "int",
    "int16": "short int",
    "int8": "signed char",
    "uint8": "unsigned char",
    "bool": "bool",
    "complex64": "c10::complex<float>",
    "complex128": "c10::complex<double>",
}


def _dtype_name(dtype, table):
    key = str(dtype).rsplit(".", 1)[-1]
    return table.get(key, key)


def _can_cast(src, dst):
    if src.is_complex and not dst.is_complex:
        return False
    if src.is_floating_point and not (dst.is_floating_point or dst.is_complex):
        return False
    return src == dst or str(dst) != "oneflow.bool"


def _span(t):
    """The byte range of a tensor whose elements fill it without gaps, else None."""
    n = t.numel()
    if n == 0:
        return None
    dims = sorted((st, sz) for st, sz in zip(t.stride(), t.shape) if sz != 1)
    expect = 1
    for st, sz in dims:
        if st != expect:
            return None
        expect *= sz
    begin = t.data_ptr()
    return begin, begin + n * t.element_size()


def _tensors(args, kwargs):
    for a in list(args) + list(kwargs.values()):
        if isinstance(a, Tensor):
            yield a
        elif isinstance(a, (list, tuple)):
            yield from (x for x in a if isinstance(x, Tensor))


def _check_overlap(name, outs, args, kwargs):
    for o in outs:
        so = _span(o)
        if so is None:
            continue
        for t in _tensors(args, kwargs):
            st = _span(t)
            if st is None or (st == so and tuple(t.stride()) == tuple(o.stride())):
                continue
            if st[0] < so[1] and so[0] < st[1]:
                raise RuntimeError(
                    f"{name}(): unsupported operation: some elements of the input tensor and the "
                    "written-to tensor refer to a single memory location. Please clone() the "
                    "tensor before performing the operation."
                )


def _check(name, result, out, exact, any_dtype=False):
    if out.device != result.device:
        raise RuntimeError(
            f"{name}(): Expected out tensor to have device {result.device}, but got "
            f"{out.device} instead"
        )
    if out.dtype != result.dtype and not any_dtype:
        if exact:
            raise RuntimeError(
                f"{name}(): Expected out tensor to have dtype "
                f"{_dtype_name(result.dtype, _C_TYPE)}, but got "
                f"{_dtype_name(out.dtype, _C_TYPE)} instead"
            )
        if not _can_cast(result.dtype, out.dtype):
            raise RuntimeError(
                f"{name}(): result type {_dtype_name(result.dtype, _SCALAR_TYPE)} can't be cast "
                f"to the desired output type {_dtype_name(out.dtype, _SCALAR_TYPE)}"
            )


def _check_grad(flow, name, results, outs):
    """PyTorch's rule: no out= while recording a differentiable result (a floating one, or one
    that requires grad) whose inputs or out require grad."""
    if not flow.is_grad_enabled():
        return
    if any(t.requires_grad for t in results) or any(
        o.requires_grad and r.dtype.is_floating_point for o, r in zip(outs, results)
    ):
        raise RuntimeError(
            f"{name}(): functions with out=... arguments don't support automatic "
            "differentiation, but one of the arguments requires grad."
        )


def _without_autocast(flow, fn, args, kwargs):
    """PyTorch runs out= forms outside autocast: out's dtype is the caller's choice."""
    if not (flow.is_autocast_enabled("cpu") or flow.is_autocast_enabled("cuda")):
        return fn(*args, **kwargs)
    with flow.autocast("cpu", enabled=False), flow.autocast("cuda", enabled=False):
        return fn(*args, **kwargs)


def _resize(name, out, shape):
    if out.numel() != 0:
        # PyTorch's words, so that filters written for its warning match this one.
        warnings.warn(
            f"An output with one or more elements was resized since it had shape "
            f"{list(out.shape)}, which does not match the required output shape {list(shape)}. "
            "This behavior is deprecated, and in a future release outputs will not be resized "
            "unless they have zero elements. You can explicitly reuse an out tensor t by "
            f"resizing it, inplace, to zero elements with t.resize_(0). ({name})",
            UserWarning,
            stacklevel=3,  # the caller of the function: the wrapper adds no Python frame
        )
    out.resize_(shape)


def _handler(name, mode):
    import oneflow as flow

    def call(fn, args, kwargs, out):
        several = isinstance(out, (tuple, list))
        outs = tuple(out) if several else (out,)
        for o in outs:
            if not isinstance(o, Tensor):
                raise TypeError(
                    f"{name}(): argument 'out' must be "
                    f"{'tuple of Tensors' if several else 'Tensor'}, not {type(o).__name__}"
                )
        if name == "nonzero" and kwargs.get("as_tuple"):
            raise RuntimeError("nonzero does not support the out kwarg when as_tuple is True")
        _check_overlap(name, outs, args, kwargs)
        form = mode
        if form == "normal":
            form = "cast" if any(True for _ in _tensors(args, kwargs)) else "factory"
        requires_grad = False
        if form in ("dtype", "factory"):
            given = kwargs.get("dtype")
            if given is not None and form == "factory" and given != outs[0].dtype:
                raise RuntimeError(
                    f"{name}(): dtype {_dtype_name(given, _SCALAR_TYPE)} does not match dtype of "
                    f"out parameter ({_dtype_name(outs[0].dtype, _SCALAR_TYPE)})"
                )
            if given is None:
                kwargs["dtype"] = outs[0].dtype
            if form == "factory":
                if kwargs.get("device") is None:
                    kwargs["device"] = outs[0].device
                requires_grad = bool(kwargs.pop("requires_grad", False))
        result = _without_autocast(flow, fn, args, kwargs)
        results = tuple(result) if isinstance(result, (tuple, list)) else (result,)
        if several != isinstance(result, (tuple, list)) or len(results) != len(outs):
            raise TypeError(
                (
                    f"{name}(): expected 'out' to be a tuple of {len(results)} tensors"
                    if several
                    else f"{name}(): argument 'out' must be tuple of {len(results)} Tensors, "
                    "not Tensor"
                )
                if isinstance(result, (tuple, list))
                else f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}"
            )
        _check_grad(flow, name, results, outs)
        exact = form in ("exact", "dtype", "factory") or several
        if name in _EXACT_ONLY_FOR_PAIRS and not several:
            exact = False
        for r, o in zip(results, outs):
            # bernoulli draws into any dtype; all/any also write uint8 outs (as PyTorch).
            free = form == "any" or (name in ("all", "any") and str(o.dtype) == "oneflow.uint8")
            _check(name, r, o, exact, free)
        # Nothing here records a gradient: results and outs that require one were refused above
        # while grad mode is on, except outs of results without gradients (gt(x, 0, out=o) with
        # o requiring grad, as PyTorch), written as data.
        for r, o in zip(results, outs):
            target = o.detach() if o.requires_grad else o
            if tuple(o.shape) != tuple(r.shape):
                if target is not o:
                    raise RuntimeError(f"{name}(): cannot resize variables that require grad")
                _resize(name, o, r.shape)
            target.copy_(r)
        if requires_grad:
            outs[0].requires_grad_(True)
        if not several:
            return out
        if isinstance(result, tuple) and hasattr(result, "_fields"):
            return type(result)(*outs)
        return outs

    return call


def _names(text):
    return text.split()


WRAPPED = {}  # module name -> {function name: mode}, for the tests


def install(flow):
    """Wraps the listed functions of oneflow, oneflow.linalg and oneflow.special in place."""
    tables = [
        (
            flow,
            "oneflow",
            [
                (_CAST, "cast"),
                (_EXACT, "exact"),
                (_ANY, "any"),
                (_DTYPE, "dtype"),
                (_FACTORY, "factory"),
                (_NORMAL, "normal"),
            ],
        ),
        (flow.linalg, "oneflow.linalg", [(_LINALG, "exact")]),
        (flow.special, "oneflow.special", [(_SPECIAL_CAST, "cast"), (_SPECIAL_EXACT, "exact")]),
    ]
    for module, module_name, groups in tables:
        done = WRAPPED.setdefault(module_name, {})
        for text, mode in groups:
            for name in _names(text):
                fn = getattr(module, name, None)
                if fn is None or name in done:
                    continue
                prefix = "" if module is flow else module_name.rsplit(".", 1)[-1] + "_"
                wrapped = _function_with_out(fn, _handler(prefix + name, mode), module_name, name)
                setattr(module, name, wrapped)
                done[name] = mode
