"""Memory formats: the order in which a 4-d or 5-d tensor's elements lie in memory.

`channels_last` is NHWC order for a tensor whose dims stay (N, C, H, W), as in PyTorch: the
strides change, the shape does not. `contiguous(memory_format=...)`, `clone`, `to`, the `*_like`
factories, `empty` and `Module.to` honour a format; elementwise ops keep their input's dim order.
Convolution, pooling and normalization return NCHW-contiguous results whatever their input's
order (their kernels read NCHW; the values are the same)."""

import oneflow._oneflow_internal as _internal

_C = _internal._C


class memory_format:
    """One of oneflow.contiguous_format, channels_last, channels_last_3d, preserve_format."""

    __slots__ = ("_name",)

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return "oneflow." + self._name

    def __reduce__(self):
        return (_by_name, (self._name,))


contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")
_FORMATS = {
    f._name: f for f in (contiguous_format, channels_last, channels_last_3d, preserve_format)
}


def _by_name(name):
    return _FORMATS[name]


def _check(op, fmt):
    if not isinstance(fmt, memory_format):
        raise TypeError(
            f"{op}: memory_format must be a oneflow.memory_format, got {type(fmt).__name__}"
        )


# the dims from the innermost to the outermost in each channels-last order
_ORDER = {4: (1, 3, 2, 0), 5: (1, 4, 3, 2, 0)}


def _rank_of(op, fmt, ndim):
    want = 4 if fmt is channels_last else 5
    if ndim != want:
        raise RuntimeError(
            f"{op}: required rank {want} tensor to use {fmt._name} format, got a {ndim}-d tensor"
        )


def _is_channels_last(t, ndim):
    if t.ndim != ndim:
        return False
    shape, stride = t.shape, t.stride()
    expected = 1
    for d in _ORDER[ndim]:
        if shape[d] != 1:
            if stride[d] != expected:
                return False
            expected *= shape[d]
    return True


def is_contiguous(self, memory_format=contiguous_format):
    if memory_format is contiguous_format:
        return self._is_contiguous() or self.numel() == 0  # an empty tensor is in every order
    _check("is_contiguous", memory_format)
    if memory_format is channels_last:
        return _is_channels_last(self, 4)
    if memory_format is channels_last_3d:
        return _is_channels_last(self, 5)
    raise RuntimeError("is_contiguous: preserve_format is not a valid memory format to test")


def _to_channels_last(t, ndim):
    """t's values in channels-last order (t itself when they already are)."""
    if _is_channels_last(t, ndim):
        return t
    last = (0,) + tuple(range(2, ndim)) + (1,)
    back = (0, ndim - 1) + tuple(range(1, ndim - 1))
    return _C.permute(_C.contiguous(_C.permute(t, last)), back)


def contiguous(self, memory_format=contiguous_format):
    if memory_format is contiguous_format:
        return _C.contiguous(self)
    _check("contiguous", memory_format)
    if memory_format is preserve_format:
        raise RuntimeError("contiguous: preserve_format is not supported by contiguous()")
    ndim = 4 if memory_format is channels_last else 5
    _rank_of("contiguous", memory_format, self.ndim)
    return _to_channels_last(self, ndim)


def _dense(t):
    """Whether t's elements fill one range of its storage once, in some order of its dims."""
    dims = sorted((st, s) for s, st in zip(t.shape, t.stride()) if s != 1)
    expected = 1
    for st, s in dims:
        if st != expected:
            return False
        expected *= s
    return True


def _suggested(t):
    """The format PyTorch suggests for a tensor that is not dense: channels-last when its strides
    put the channels innermost, else contiguous."""
    if t.ndim in (4, 5) and not t._is_contiguous():
        order = sorted(range(t.ndim), key=lambda d: (t.stride()[d], -d))
        if tuple(order) == _ORDER[t.ndim] and t.stride()[1] > 0:
            return channels_last if t.ndim == 4 else channels_last_3d
    return contiguous_format


def apply(op, like, result, fmt):
    """A fresh factory result (contiguous, of like's shape) laid out in format `fmt`; preserve
    means like's strides when `like` is dense, else the format its strides suggest."""
    if fmt is contiguous_format or fmt is None:
        return result
    _check(op, fmt)
    if fmt is preserve_format:
        if like._is_contiguous() or result.ndim != like.ndim:
            return result
        if not _dense(like):
            fmt = _suggested(like)
            if fmt is contiguous_format:
                return result
    else:
        _rank_of(op, fmt, result.ndim)
    import oneflow

    with oneflow.no_grad():
        if fmt is preserve_format:
            out = _strided_copy(result, like)
        else:
            out = _to_channels_last(result, 4 if fmt is channels_last else 5)
            if out is not result:
                out = out.detach()
    return out.requires_grad_() if result.requires_grad and out is not result else out


def _strided_copy(t, like):
    """A copy of t laid out with like's (dense) strides."""
    out = _C.as_strided(
        _C.zeros(like.numel(), dtype=t.dtype, device=t.device), tuple(like.shape), like.stride(), 0
    )
    return out.copy_(t)


def clone(input, *, memory_format=preserve_format):
    if memory_format is preserve_format and input._is_contiguous():
        return _C.clone(input)
    _check("clone", memory_format)
    if memory_format is contiguous_format:
        return _C.clone(input)
    if memory_format is preserve_format:
        if _dense(input):
            return _strided_copy(input, input)
        memory_format = _suggested(input)
        if memory_format is contiguous_format:
            return _C.clone(input)
    ndim = 4 if memory_format is channels_last else 5
    _rank_of("clone", memory_format, input.ndim)
    out = _to_channels_last(input, ndim)
    return _strided_copy(input, input) if out is input else out


def keep_layout(out, like):
    """A conversion's result (contiguous) laid out as its input: PyTorch's preserve_format for
    Tensor.to and the dtype methods, which keep a dense input's strides (a transposed matrix
    stays transposed) and suggest channels-last from the strides of one that is not dense."""
    if out is like or like._is_contiguous() or out.ndim != like.ndim or like.is_global:
        return out
    if _dense(like):
        return _strided_copy(out, like)
    fmt = _suggested(like)
    if fmt is contiguous_format:
        return out
    return _to_channels_last(out, 4 if fmt is channels_last else 5)


def _tensor_clone(self, *, memory_format=preserve_format):
    return clone(self, memory_format=memory_format)


def convert_conv2d_weight_memory_format(module, memory_format):
    """Lays out the weights of module's (transposed) 2-d convolutions in `memory_format`."""
    return _convert_conv_weights(module, memory_format, "Conv2d", "ConvTranspose2d")


def convert_conv3d_weight_memory_format(module, memory_format):
    """Lays out the weights of module's (transposed) 3-d convolutions in `memory_format`."""
    return _convert_conv_weights(module, memory_format, "Conv3d", "ConvTranspose3d")


def _convert_conv_weights(module, memory_format, *kinds):
    import oneflow

    classes = tuple(getattr(oneflow.nn, k) for k in kinds)
    if isinstance(module, classes):
        with oneflow.no_grad():
            module.weight.data = contiguous(module.weight.detach(), memory_format)
    for child in module.children():
        _convert_conv_weights(child, memory_format, *kinds)
    return module


def install(flow):
    Tensor = _internal.Tensor
    if not hasattr(Tensor, "_is_contiguous"):
        Tensor._is_contiguous = Tensor.is_contiguous
    Tensor.is_contiguous = is_contiguous
    Tensor.contiguous = contiguous
    Tensor.clone = _tensor_clone
    flow.clone = clone
    flow.memory_format = memory_format
    for name, fmt in _FORMATS.items():
        setattr(flow, name, fmt)
