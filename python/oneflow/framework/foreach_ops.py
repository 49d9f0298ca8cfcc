"""PyTorch's `_foreach_*` functions: an op applied to each tensor of a list (optimizer and EMA
code calls them on parameter lists). Each is a loop over the list calling the op: with a second
list the pairs are zipped, a list of numbers gives one number per tensor, a number or a 0-d
tensor applies to every tensor; keyword arguments (alpha=, value=, weight=) pass through. The
out-of-place forms return a tuple of the results, the in-place forms update the tensors and
return the list given, as PyTorch's."""

from oneflow._oneflow_internal import Tensor

_UNARY = """
abs acos asin atan ceil cos cosh erf erfc exp expm1 floor frac lgamma log log10 log1p log2 neg
reciprocal round rsqrt sigmoid sign sin sinh sqrt tan tanh trunc
"""
_BINARY = "add sub mul div pow maximum minimum clamp_max clamp_min"
_TERNARY = "addcmul addcdiv lerp"


def _per_tensor(arg, n, name):
    """arg as a list of n per-tensor values."""
    if isinstance(arg, (list, tuple)):
        if len(arg) != n:
            raise RuntimeError(
                f"{name}: Tensor lists must have the same number of tensors, got {n} and {len(arg)}"
            )
        return list(arg)
    return [arg] * n


def _check_list(name, tensors):
    if not isinstance(tensors, (list, tuple)) or not tensors:
        raise RuntimeError(f"{name}: expected a non-empty list of Tensors")
    for t in tensors:
        if not isinstance(t, Tensor):
            raise TypeError(f"{name}: expected Tensors, got {type(t).__name__}")
    return list(tensors)


def _unary(op):
    def out_of_place(tensors):
        return tuple(getattr(t, op)() for t in _check_list("_foreach_" + op, tensors))

    def in_place(tensors):
        for t in _check_list("_foreach_" + op + "_", tensors):
            getattr(t, op + "_")()
        return tensors

    return out_of_place, in_place


def _nary(op, count):
    name = "_foreach_" + op

    def out_of_place(tensors, *others, **kwargs):
        tensors = _check_list(name, tensors)
        cols = [_per_tensor(o, len(tensors), name) for o in others[:count]]
        return tuple(getattr(t, op)(*row, **kwargs) for t, *row in zip(tensors, *cols))

    def in_place(tensors, *others, **kwargs):
        given = tensors
        tensors = _check_list(name + "_", tensors)
        cols = [_per_tensor(o, len(tensors), name) for o in others[:count]]
        for t, *row in zip(tensors, *cols):
            getattr(t, op + "_")(*row, **kwargs)
        return given

    return out_of_place, in_place


def _norm(tensors, ord=2, dtype=None):
    import oneflow

    return tuple(
        oneflow.linalg.vector_norm(t, ord, dtype=dtype)
        for t in _check_list("_foreach_norm", tensors)
    )


def _powsum(tensors, ord=2, dtype=None):
    import oneflow

    out = []
    for t in _check_list("_foreach_powsum", tensors):
        x = t if dtype is None else t.to(dtype)
        out.append(oneflow.sum(oneflow.abs(x) ** ord))
    return tuple(out)


def functions():
    out = {}
    for op in _UNARY.split():
        out["_foreach_" + op], out["_foreach_" + op + "_"] = _unary(op)
    for op in _BINARY.split():
        out["_foreach_" + op], out["_foreach_" + op + "_"] = _nary(op, 1)
    for op in _TERNARY.split():
        out["_foreach_" + op], out["_foreach_" + op + "_"] = _nary(op, 2)

    def _foreach_zero_(tensors):
        for t in _check_list("_foreach_zero_", tensors):
            t.zero_()
        return tensors

    def _foreach_copy_(tensors, src, non_blocking=False):
        checked = _check_list("_foreach_copy_", tensors)
        for t, s in zip(checked, _per_tensor(src, len(checked), "_foreach_copy_")):
            t.copy_(s)
        return tensors

    def _foreach_clone(tensors):
        return tuple(t.clone() for t in _check_list("_foreach_clone", tensors))

    def _foreach_max(tensors):
        return tuple(t.max() for t in _check_list("_foreach_max", tensors))

    def _foreach_mm(tensors, others):
        tensors = _check_list("_foreach_mm", tensors)
        others = _per_tensor(others, len(tensors), "_foreach_mm")
        return tuple(a @ b for a, b in zip(tensors, others))

    out.update(
        _foreach_zero_=_foreach_zero_,
        _foreach_copy_=_foreach_copy_,
        _foreach_clone=_foreach_clone,
        _foreach_max=_foreach_max,
        _foreach_mm=_foreach_mm,
        _foreach_norm=_norm,
        _foreach_powsum=_powsum,
    )
    for name, fn in out.items():
        fn.__name__ = fn.__qualname__ = name
    return out
