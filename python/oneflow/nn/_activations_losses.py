"""Activations, normalisation, dropout, embedding and losses of ``oneflow.nn.functional`` with
PyTorch's signatures, composed from the pointwise, reduction and indexing kernels (their
gradients come from those kernels' rules)."""

import builtins
import math
import operator
import warnings

import oneflow
from oneflow._oneflow_internal import _C, Tensor, _graph_tracing
from oneflow.framework.autocast_fp32 import fp32 as _fp32
from oneflow.framework.autocast_fp32 import outside_autocast
from oneflow.nn._global_norm import _batch_norm_of_shards, _batch_split, _spread


def _amp_float(t):
    """t in float32 when autocast is on for its device and t is a 16-bit float (the losses run
    in float32 under autocast, as PyTorch's)."""
    return _C._autocast_to_float(t) if isinstance(t, Tensor) else t


# ---- activations ------------------------------------------------------------------------


def _maybe_inplace(input, out, inplace):
    return _C.copy_(input, out) if inplace else out


def _source(input, inplace):
    """What an in-place activation reads: under autograd a copy, so that the input its kernel
    saves for the backward is not the tensor the result overwrites (PyTorch's in-place forms
    differentiate from their output instead; nn.LeakyReLU(inplace=True) in a model)."""
    if (
        inplace
        and isinstance(input, oneflow.Tensor)
        and input.requires_grad
        and oneflow.is_grad_enabled()
    ):
        return _C.clone(input)
    return input


# Floating inputs run the fused activation kernels (one pass forward, one fused gradient
# kernel backward); the integer and bool inputs PyTorch accepts keep the composites.
_KIND = _C._activation_kinds


def _fused(input):
    return isinstance(input, oneflow.Tensor) and input.is_floating_point()


def _act(name, input, a=0.0, b=0.0, c=0.0):
    return _C._activation(_KIND[name], input, a, b, c)


def _float_act(name, input, a=0.0, b=0.0, c=0.0):
    """An activation PyTorch implements for floating dtypes only (NotImplementedError else)."""
    if isinstance(input, oneflow.Tensor) and not input.is_floating_point():
        raise NotImplementedError(f"{name}: expected a floating point input, got {input.dtype}")
    return _act(name, input, a, b, c)


def relu6(input, inplace=False):
    return hardtanh(input, 0.0, 6.0, inplace)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    return _maybe_inplace(
        input, _float_act("leaky_relu", _source(input, inplace), negative_slope), inplace
    )


def _elu(input, alpha, scale, input_scale, inplace):
    src = _source(input, inplace)
    return _maybe_inplace(input, _float_act("elu", src, alpha, scale, input_scale), inplace)


def elu(input, alpha=1.0, inplace=False):
    return _elu(input, alpha, 1.0, 1.0, inplace)


def celu(input, alpha=1.0, inplace=False):
    return _elu(input, alpha, 1.0, 1.0 / alpha, inplace)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(input, inplace=False):
    return _elu(input, _SELU_ALPHA, _SELU_SCALE, 1.0, inplace)


def silu(input, inplace=False):
    if input.dtype.is_complex:  # z * sigmoid(z), as PyTorch
        return _maybe_inplace(input, _C.mul(input, _C.sigmoid(_source(input, inplace))), inplace)
    return _maybe_inplace(input, _float_act("silu", _source(input, inplace)), inplace)


def softplus(input, beta=1.0, threshold=20.0):
    return _float_act("softplus", input, beta, threshold)


def mish(input, inplace=False):
    return _maybe_inplace(input, _float_act("mish", _source(input, inplace)), inplace)


def softsign(input):
    if _fused(input):
        return _act("softsign", input)
    return _C.div(input, _C.add(_C.abs(input), 1))


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    if min_val > max_val:
        raise ValueError(
            f"hardtanh: min_val cannot be greater than max_val, got {min_val} and {max_val}"
        )
    if isinstance(input, oneflow.Tensor) and input.dtype == oneflow.bool:
        raise RuntimeError("hardtanh: bool inputs not supported, expected a numeric dtype")
    if _fused(input):
        out = _act("hardtanh", _source(input, inplace), min_val, max_val)
    else:  # integers keep their dtype; PyTorch converts the bounds to it (truncation)
        out = _C.clamp(input, int(min_val), int(max_val))
    return _maybe_inplace(input, out, inplace)


def hardsigmoid(input, inplace=False):
    return _maybe_inplace(input, _float_act("hardsigmoid", _source(input, inplace)), inplace)


def hardswish(input, inplace=False):
    return _maybe_inplace(input, _float_act("hardswish", _source(input, inplace)), inplace)


def hardshrink(input, lambd=0.5):
    return _float_act("hardshrink", input, lambd)


def softshrink(input, lambd=0.5):
    return _float_act("softshrink", input, lambd)


def tanhshrink(input):
    if _fused(input):
        return _act("tanhshrink", input)
    return _C.sub(input, _C.tanh(input))


def logsigmoid(input):
    return _float_act("logsigmoid", input)


def threshold(input, threshold, value, inplace=False):
    if isinstance(input, oneflow.Tensor) and input.dtype == oneflow.bool:
        raise NotImplementedError("threshold: expected a numeric input, got oneflow.bool")
    if _fused(input):
        out = _act("threshold", _source(input, inplace), threshold, value)
    else:  # integers keep their dtype; PyTorch converts threshold and value to it
        info = oneflow.iinfo(input.dtype)
        if not info.min <= value <= info.max:
            raise RuntimeError(f"threshold: value {value} cannot be converted to {input.dtype}")
        out = _C.where(_C.gt(input, int(threshold)), input, int(value))
    return _maybe_inplace(input, out, inplace)


def prelu(input, weight):
    # on PyTorch's lower-precision autocast list: float32 operands go to the autocast dtype
    input, weight = _C._autocast_lower(input), _C._autocast_lower(weight)
    if not input.is_floating_point():
        raise NotImplementedError(f"prelu: expected a floating point input, got {input.dtype}")
    if weight.ndim > 1:
        raise RuntimeError(
            f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.ndim}"
        )
    w = weight
    if weight.numel() > 1:
        channels = input.shape[1] if input.ndim >= 2 else 1
        if channels != weight.numel():
            raise RuntimeError(
                "Mismatch of parameter numbers and input channel size. Found parameter numbers "
                f"= {weight.numel()} and channel size = {channels}."
            )
        w = weight.reshape(1, -1, *([1] * (input.ndim - 2)))
    return _C.prelu(input, w)


def glu(input, dim=-1):
    if input.ndim == 0:
        raise RuntimeError("glu: does not support scalars because halving size must be even")
    if not input.is_floating_point():
        raise NotImplementedError(f"glu: expected a floating point input, got {input.dtype}")
    n = input.shape[dim]
    if n % 2:
        raise RuntimeError(f"glu: halving dimension must be even, but dimension {dim} is size {n}")
    a, b = _C.narrow(input, dim, 0, n // 2), _C.narrow(input, dim, n // 2, n // 2)
    return _C.mul(a, _C.sigmoid(b))


def implicit_softmax_dim(name, ndim):
    """PyTorch's dim for softmax-like functions called without one (deprecated, with a
    warning): 0 for 0-, 1- and 3-dimensional inputs, else 1."""
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to include "
        "dim=X as an argument.",
        UserWarning,
        stacklevel=3,
    )
    return 0 if ndim in (0, 1, 3) else 1


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if isinstance(_stacklevel, oneflow.dtype):  # dtype passed third (an older signature)
        dtype = _stacklevel
    x = input if dtype is None else input.to(dtype)
    if not x.is_floating_point():
        raise NotImplementedError(f"log_softmax: expected a floating point input, got {x.dtype}")
    if dim is None:
        dim = implicit_softmax_dim("log_softmax", x.ndim)
    if not x.is_cuda:  # the kernel: 16-bit floats computed in float, rounded once (PyTorch)
        return _C._log_softmax(x, dim)
    return _C.sub(x, oneflow.logsumexp(x, dim, keepdim=True))


def softmax_dim_arg(name, dim):
    """dim as an int: an integer-like value, TypeError for anything else (a float), as
    PyTorch's argument parser."""
    try:
        return operator.index(dim)
    except TypeError:
        raise TypeError(f"{name}(): argument 'dim' must be int, not {type(dim).__name__}") from None


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    if isinstance(_stacklevel, oneflow.dtype):  # dtype passed third (an older signature)
        dtype = _stacklevel
    if dim is None:
        dim = implicit_softmax_dim("softmin", input.ndim)
    elif not isinstance(dim, int):
        dim = softmax_dim_arg("softmin", dim)
    return _C.softmax(_C.neg(input), dim, dtype=dtype)


def gumbel_softmax(logits, tau=1.0, hard=False, eps=1e-10, dim=-1):
    """A sample of the Gumbel-softmax distribution (softmax((logits + g) / tau) with g drawn
    from Gumbel(0, 1)); hard=True gives the one-hot of its argmax, with the soft sample's
    gradient (straight-through), as PyTorch. `eps` is unused, as there."""
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    gumbels = -oneflow.empty_like(logits).exponential_().log()
    y_soft = _C.softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y_soft
    index = y_soft.argmax(dim, keepdim=True)
    y_hard = oneflow.zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


# ---- linear, dropout, embedding, normalisation --------------------------------------------


def linear(input, weight, bias=None):
    try:
        # x @ weight^T + bias; on the CPU the bias starts the GEMM's output
        return _C._linear(input, weight, bias)
    except RuntimeError as e:
        if not str(e).startswith("matmul: shapes"):
            raise
        raise RuntimeError(
            f"linear: input of shape {tuple(input.shape)} has {input.shape[-1]} features but "
            f"weight of shape {tuple(weight.shape)} expects {weight.shape[-1]} "
            f"({str(e)[len('matmul: ') :]})"
        ) from None


@outside_autocast  # PyTorch's autocast leaves it alone; its matmul would be lowered
def bilinear(input1, input2, weight, bias=None):
    t = _C.matmul(_C.unsqueeze(input1, 0), weight)  # (o, b, j)
    out = _C.transpose(_C.sum(_C.mul(t, _C.unsqueeze(input2, 0)), [-1], False), 0, 1)
    if out.dtype != t.dtype:  # the sum widens integers; PyTorch keeps the inputs' dtype
        out = out.to(t.dtype)
    return out if bias is None else _C.add(out, bias)


def _dropout_trivial(op, input, p, training, inplace):
    """The result of a dropout that draws no mask (not training, p = 0 or 1, no elements), or
    None. p = 1 multiplies by a zero of the input's dtype (integer inputs stay integer, as in
    PyTorch); other p need a floating input."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0 or input.numel() == 0:
        return input
    if p == 1.0:
        zero = oneflow.zeros((), dtype=input.dtype, device=input.device)
        return _maybe_inplace(input, _C.mul(_source(input, inplace), zero), inplace)
    if not input.is_floating_point():
        raise RuntimeError(
            f"{op}: expected a floating point input for p={p}, got {input.dtype} (the "
            "scaled result can't be cast back to it)"
        )
    return None


def dropout(input, p=0.5, training=True, inplace=False, generator=None, addend=None):
    """PyTorch's dropout; OneFlow's keywords: `generator` draws the mask, `addend` is added to
    the result (dropout(x) + addend)."""
    out = _dropout_trivial("dropout", input, p, training, inplace)
    if out is None:
        keep = _C.bernoulli(_C.mul(_C.ones_like(input), 1.0 - p), generator=generator)
        scale = _C.mul(keep, 1.0 / (1.0 - p))
        out = _maybe_inplace(input, _C.mul(_source(input, inplace), scale), inplace)
    if addend is not None:
        out = out.add_(addend) if inplace else _C.add(out, addend)
    return out


def dropout1d(input, p=0.5, training=True, inplace=False):
    return _channel_dropout("dropout1d", input, p, training, inplace, 1)


def dropout2d(input, p=0.5, training=True, inplace=False):
    if input.ndim == 3:  # PyTorch's reading of a 3-D input: (N, C, L), one draw per channel
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
            "dropout behavior is desired - input is interpreted as shape (N, C, L), where C is "
            "the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=2,
        )
        return _channel_dropout("dropout2d", input, p, training, inplace, 1)
    return _channel_dropout("dropout2d", input, p, training, inplace, 2)


def dropout3d(input, p=0.5, training=True, inplace=False):
    return _channel_dropout("dropout3d", input, p, training, inplace, 3)


def _channel_dropout(op, input, p, training, inplace, spatial):
    out = _dropout_trivial(op, input, p, training, inplace)
    if out is not None:
        return out
    shape = list(input.shape[: input.ndim - spatial]) + [1] * spatial
    from oneflow.framework.global_tensor import constant_like

    probs = oneflow.full(shape, 1.0 - p, dtype=input.dtype, device=input.device)
    keep = _C.bernoulli(constant_like(input, probs))  # a global input: one draw, broadcast
    scale = _C.mul(keep, 1.0 / (1.0 - p))
    return _maybe_inplace(input, _C.mul(_source(input, inplace), scale), inplace)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    out = _dropout_trivial("alpha_dropout", input, p, training, inplace)
    if out is not None:
        return out
    # PyTorch's affine correction: dropped entries become SELU's negative saturation value,
    # then a * x + b keeps the mean and variance.
    alpha = _SELU_ALPHA * _SELU_SCALE
    a = 1.0 / math.sqrt((alpha * alpha * p + 1) * (1 - p))
    keep = _C.bernoulli(_C.mul(_C.ones_like(input), 1.0 - p))
    b = _C.add(_C.mul(_C.sub(keep, 1.0), alpha * a), alpha * a * p)
    return _maybe_inplace(
        input, _C.add(_C.mul(_source(input, inplace), _C.mul(keep, a)), b), inplace
    )


def embedding(
    input,
    weight,
    padding_idx=None,
    max_norm=None,
    norm_type=2.0,
    scale_grad_by_freq=False,
    sparse=False,
):
    if input.dtype.is_floating_point or input.dtype == oneflow.bool:
        raise RuntimeError(
            f"embedding: expected an integer index tensor (int64 or int32), got {input.dtype}"
        )
    if weight.ndim != 2:
        raise RuntimeError(f"embedding: 'weight' must be 2-D, got shape {tuple(weight.shape)}")
    n = weight.shape[0]
    if padding_idx is not None and not -n <= padding_idx < n:
        # PyTorch asserts this (AssertionError).
        raise AssertionError(
            f"embedding: padding_idx must be within num_embeddings ({n}), got {padding_idx}"
        )
    # _embedding_rows raises IndexError for an index outside [0, n) (checked on the index's
    # values only: no wait for the queued ops).
    if max_norm is not None:
        with oneflow.no_grad():
            rows = _C._embedding_rows(weight, input.reshape(-1))
            norms = oneflow.linalg.vector_norm(rows, norm_type, 1, keepdim=True)
            scale = _C.where(_C.gt(norms, max_norm), _C.div(max_norm, _C.add(norms, 1e-7)), 1.0)
            _C.index_put_(weight, [input.reshape(-1)], 0, _C.mul(rows, scale), False)
    out = _C._embedding_rows(weight, input)
    if padding_idx is not None and out.requires_grad:
        # No gradient flows into the padding row: route it through a mask.
        keep = _C.ne(input, padding_idx % n).unsqueeze(-1)
        out = _C.where(keep, out, out.detach())
    if scale_grad_by_freq and out.requires_grad:
        # Each row's gradient is divided by how often its index occurs in the batch.
        with oneflow.no_grad():
            counts = oneflow.bincount(input.reshape(-1), minlength=n)
            scale = _C.reciprocal(counts[input].to(out.dtype)).unsqueeze(-1)
        out.register_hook(lambda grad: _C.mul(grad, scale))
    return out


def one_hot(tensor, num_classes=-1, on_value=1, off_value=0):
    """PyTorch's one_hot (int64 ones and zeros); OneFlow's on_value and off_value fill the hot
    and the other entries (int64 when both are integers, else the default float dtype)."""
    out = _C._one_hot(tensor, num_classes)
    if on_value == 1 and off_value == 0 and type(on_value) is int and type(off_value) is int:
        return out
    ints = isinstance(on_value, int) and isinstance(off_value, int)
    dtype = oneflow.int64 if ints else oneflow.get_default_dtype()
    on = oneflow.full((), on_value, dtype=dtype, device=out.device)
    off = oneflow.full((), off_value, dtype=dtype, device=out.device)
    return oneflow.where(out.bool(), on, off)


def normalize(input, p=2.0, dim=1, eps=1e-12):
    norm = oneflow.linalg.vector_norm(input, p, dim, keepdim=True)
    return _C.div(input, _C.clamp(norm, eps, None))


def _check_floating(op, input):
    if not input.is_floating_point():
        raise NotImplementedError(f"{op}: expected a floating point input, got {input.dtype}")


def _cpu_16bit(t):
    return t.dtype in (oneflow.float16, oneflow.bfloat16) and not t.is_cuda


def _f32(t):
    return None if t is None else t.float()


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    _check_floating("layer_norm", input)
    if _cpu_16bit(input):
        # 16-bit floats: computed in float32 and rounded once into the input's dtype, which the
        # result keeps (PyTorch's CPU kernels; float32 parameters, as under autocast, too)
        out = layer_norm(input.float(), normalized_shape, _f32(weight), _f32(bias), eps)
        return out.to(input.dtype)
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    k = len(normalized_shape)
    if tuple(input.shape[input.ndim - k :]) != tuple(normalized_shape):
        raise RuntimeError(
            f"layer_norm: expected input with shape [*, {', '.join(map(str, normalized_shape))}], "
            f"but got input of size {tuple(input.shape)}"
        )
    fused_ok = input.dtype in (oneflow.float32, oneflow.float64) and not input.is_cuda
    for t in (weight, bias):
        fused_ok = fused_ok and (t is None or (t.dtype == input.dtype and not t.is_cuda))
    if fused_ok and input.numel() > 0:
        size = math.prod(normalized_shape)
        return _C._layer_norm(input, size, weight, bias, eps)
    dims = list(range(input.ndim - k, input.ndim))
    mean = _C.mean(input, dims, True)
    centered = _C.sub(input, mean)
    var = _C.mean(_C.mul(centered, centered), dims, True)
    out = _C.mul(centered, _C.rsqrt(_C.add(var, eps)))
    if weight is not None:
        out = _C.mul(out, weight)
    if bias is not None:
        out = _C.add(out, bias)
    return out


def rms_norm(input, normalized_shape, weight=None, eps=None):
    _check_floating("rms_norm", input)
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    dims = list(range(input.ndim - len(normalized_shape), input.ndim))
    eps = oneflow.finfo(input.dtype).eps if eps is None else eps
    out = _C.mul(input, _C.rsqrt(_C.add(_C.mean(_C.mul(input, input), dims, True), eps)))
    return out if weight is None else _C.mul(out, weight)


def quick_gelu(input):
    return _C.mul(input, _C.sigmoid(_C.mul(input, 1.702)))


def square_relu(input):
    r = _C.relu(input)
    return _C.mul(r, r)


def _fused_norm_ok(input, *tensors):
    """float32/float64 CPU tensors of the same dtype: the batch-normalisation kernels take them."""
    ok = input.dtype in (oneflow.float32, oneflow.float64) and not input.is_cuda
    ok = ok and input.ndim >= 2
    for t in tensors:
        ok = ok and (t is None or (t.dtype == input.dtype and not t.is_cuda))
    return ok


def _per_channel(t, ndim):
    return t.reshape(*([1, t.numel()] + [1] * (ndim - 2)))


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    _check_floating("group_norm", input)
    if _cpu_16bit(input):  # as layer_norm
        out = group_norm(input.float(), num_groups, _f32(weight), _f32(bias), eps)
        return out.to(input.dtype)
    n, c = input.shape[0], input.shape[1]
    if c % num_groups:
        raise RuntimeError(
            f"group_norm: expected {c} channels to be divisible by {num_groups} groups"
        )
    if _fused_norm_ok(input, weight, bias) and input.numel() > 0:
        # One kernel: statistics per (sample, group), the affine parameters per channel.
        return _C._group_norm(input, num_groups, weight, bias, eps)
    x = input.reshape(n, num_groups, input.numel() // builtins.max(n * num_groups, 1))
    mean = _C.mean(x, [2], True)
    centered = _C.sub(x, mean)
    var = _C.mean(_C.mul(centered, centered), [2], True)
    out = _C.mul(centered, _C.rsqrt(_C.add(var, eps))).reshape(*input.shape)
    if weight is not None:
        out = _C.mul(out, _per_channel(weight, input.ndim))
    if bias is not None:
        out = _C.add(out, _per_channel(bias, input.ndim))
    return out


def _check_batch_norm_rank(input, running_mean, running_var, weight, bias, training):
    """PyTorch's errors for a 0-d or 1-D batch_norm input (no channel dim: zero channels)."""
    if input.ndim == 1 or not training:
        if not training and running_mean is None:
            raise RuntimeError("batch_norm: running_mean must be defined in evaluation mode")
        for name, t in (
            ("running_mean", running_mean),
            ("running_var", running_var),
            ("weight", weight),
            ("bias", bias),
        ):
            if t is not None and t.numel():
                raise RuntimeError(
                    f"batch_norm: {name} should contain 0 elements (the channels of a "
                    f"{input.ndim}-D input), not {t.numel()}"
                )
    raise IndexError(
        f"batch_norm: expected an input of at least 2 dims (N, C, ...), got a {input.ndim}-D input"
    )


def batch_norm(
    input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5
):
    _check_floating("batch_norm", input)
    if _cpu_16bit(input):  # as layer_norm; the running statistics keep their dtype
        out = batch_norm(input.float(), running_mean, running_var, _f32(weight), _f32(bias),
                         training, momentum, eps)  # fmt: skip
        return out.to(input.dtype)
    if input.ndim < 2:
        _check_batch_norm_rank(input, running_mean, running_var, weight, bias, training)
    c = input.shape[1]
    shape = [1, c] + [1] * (input.ndim - 2)
    dims = [0] + list(range(2, input.ndim))
    if input.numel() == 0:
        # As PyTorch: nothing to normalise, the running statistics stay as they are.
        out = _C.mul(input, 1.0)
    elif training:
        count = input.numel() // c
        if count <= 1:
            raise ValueError(
                "batch_norm: expected more than 1 value per channel when training, got input "
                f"size {tuple(input.shape)}"
            )
        if _batch_split(input) and _fused_norm_ok(input, weight, bias):
            return _batch_norm_of_shards(
                input, running_mean, running_var, weight, bias, momentum, eps
            )
        if _fused_norm_ok(input, weight, bias) and not _spread(input):
            # One kernel for the statistics and the affine output.
            out, mean, var = _C._batch_norm_train(input, weight, bias, eps)
            if running_mean is not None:
                with oneflow.no_grad():
                    v = var.detach() * (count / (count - 1))
                    running_mean.mul_(1 - momentum).add_(mean.detach() * momentum)
                    running_var.mul_(1 - momentum).add_(v * momentum)
            return out
        mean = _C.mean(input, dims, True)
        centered = _C.sub(input, mean)
        var = _C.mean(_C.mul(centered, centered), dims, True)
        if running_mean is not None:
            with oneflow.no_grad():
                m = mean.detach().reshape(c)
                v = var.detach().reshape(c) * (count / (count - 1))
                _C.copy_(
                    running_mean, _C.add(_C.mul(running_mean, 1 - momentum), _C.mul(m, momentum))
                )
                _C.copy_(
                    running_var, _C.add(_C.mul(running_var, 1 - momentum), _C.mul(v, momentum))
                )
        out = _C.mul(centered, _C.rsqrt(_C.add(var, eps)))
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError(
                "batch_norm: running_mean and running_var must be defined in evaluation mode"
            )
        if _fused_norm_ok(input, running_mean, running_var, weight, bias):
            # (x - mean) / sqrt(var + eps) * weight + bias in one pass.
            return _C._batch_norm_inference(input, running_mean, running_var, weight, bias, eps)
        mean = running_mean.reshape(*shape)
        var = running_var.reshape(*shape)
        out = _C.mul(_C.sub(input, mean), _C.rsqrt(_C.add(var, eps)))
    if weight is not None:
        out = _C.mul(out, weight.reshape(*shape))
    if bias is not None:
        out = _C.add(out, bias.reshape(*shape))
    return out


def instance_norm(
    input,
    running_mean=None,
    running_var=None,
    weight=None,
    bias=None,
    use_input_stats=True,
    momentum=0.1,
    eps=1e-5,
):
    _check_floating("instance_norm", input)
    n, c = input.shape[0], input.shape[1]
    if not use_input_stats:
        # The running statistics normalise every sample, as batch_norm's evaluation mode.
        return batch_norm(input, running_mean, running_var, weight, bias, False, momentum, eps)
    count = input.numel() // max(n * c, 1)
    if count <= 1 and input.numel() > 0:
        raise ValueError(
            "instance_norm: expected more than 1 spatial element when training, got input "
            f"size {tuple(input.shape)}"
        )
    # Each (sample, channel) is one channel of a batch normalisation over a batch of one.
    x = input.reshape(1, n * c, -1)
    if _fused_norm_ok(input, weight, bias) and input.numel() > 0:
        w = None if weight is None else weight.repeat(n)
        b = None if bias is None else bias.repeat(n)
        out, mean, var = _C._batch_norm_train(x, w, b, eps)
        out = out.reshape(*input.shape)
        affine_done = True
    else:
        mean = _C.mean(x, [2], True)
        centered = _C.sub(x, mean)
        var = _C.mean(_C.mul(centered, centered), [2], True)
        out = _C.mul(centered, _C.rsqrt(_C.add(var, eps))).reshape(*input.shape)
        affine_done = False
    if running_mean is not None and running_var is not None:
        with oneflow.no_grad():
            m = mean.detach().reshape(n, c).mean(0)
            v = (var.detach().reshape(n, c) * (count / max(count - 1, 1))).mean(0)
            running_mean.mul_(1 - momentum).add_(m * momentum)
            running_var.mul_(1 - momentum).add_(v * momentum)
    if not affine_done:
        if weight is not None:
            out = _C.mul(out, _per_channel(weight, input.ndim))
        if bias is not None:
            out = _C.add(out, _per_channel(bias, input.ndim))
    return out


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    if not (x1.is_floating_point() or x2.is_floating_point()):
        raise RuntimeError(
            f"cosine_similarity: expected a floating point common dtype, got {x1.dtype} and "
            f"{x2.dtype}"
        )
    dot = _C.sum(_C.mul(x1, x2), [dim], False)
    n1 = _C.sqrt(_C.sum(_C.mul(x1, x1), [dim], False))
    n2 = _C.sqrt(_C.sum(_C.mul(x2, x2), [dim], False))
    return _C.div(dot, _C.mul(_C.clamp(n1, eps, None), _C.clamp(n2, eps, None)))


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    diff = _C.add(_C.sub(x1, x2), eps)
    return oneflow.linalg.vector_norm(diff, p, -1, keepdim=keepdim)


# ---- losses -----------------------------------------------------------------------------


def _reduce(loss, reduction):
    if reduction == "mean":
        return _C.mean(loss)
    if reduction == "sum":
        return _C.sum(loss)
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _check_same_shape(op, input, target):
    if tuple(input.shape) != tuple(target.shape):
        raise ValueError(
            f"{op}: target size {tuple(target.shape)} is different from input size "
            f"{tuple(input.shape)}"
        )


def _pairwise(op, input, target, fn):
    """fn(), a broadcast failure of input and target reported under the loss's name."""
    try:
        return fn()
    except RuntimeError as e:
        if "broadcast" not in str(e):
            raise
        raise RuntimeError(
            f"{op}: input of shape {tuple(input.shape)} and target of shape "
            f"{tuple(target.shape)} cannot be broadcast together"
        ) from None


def _diff(op, input, target):
    """input - target."""
    return _pairwise(op, input, target, lambda: _C.sub(input, target))


def _pointwise_loss(op, kind, input, target, param, reduction):
    """The activation `kind` of input - target in one pass, reduced (in the same pass for same-
    shaped operands)."""
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return _pairwise(
        op,
        input,
        target,
        lambda: _C._pointwise_loss(_KIND[kind], float(param), input, target, reduction),
    )


def _check_floating_loss(op, input, target):
    for t in (input, target):
        if not t.is_floating_point():
            raise NotImplementedError(f"{op}: expected floating point inputs, got {t.dtype}")


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    _check_floating_loss("mse_loss", input, target)
    if reduction in ("mean", "sum") and tuple(input.shape) == tuple(target.shape):
        return _C.mse_loss(input, target, reduction)  # one fused kernel where it can
    d = _diff("mse_loss", input, target)
    return _reduce(_C.mul(d, d), reduction)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    input, target = _amp_float(input), _amp_float(target)  # float32 under autocast
    return _reduce(_C.abs(_diff("l1_loss", input, target)), reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    _check_floating_loss("smooth_l1_loss", input, target)
    if beta < 0:
        raise RuntimeError(f"smooth_l1_loss: expected a non-negative beta, got {beta}")
    if beta == 0:
        return _reduce(_C.abs(_diff("smooth_l1_loss", input, target)), reduction)
    return _pointwise_loss("smooth_l1_loss", "smooth_l1", input, target, beta, reduction)


def huber_loss(input, target, reduction="mean", delta=1.0):
    _check_floating_loss("huber_loss", input, target)
    if delta <= 0:
        raise RuntimeError(f"huber_loss: expected a positive delta, got {delta}")
    return _pointwise_loss("huber_loss", "huber", input, target, delta, reduction)


def _check_class_target(op, input, target):
    expected = (input.shape[0],) + tuple(input.shape[2:]) if input.ndim > 1 else ()
    if input.ndim > 1 and tuple(target.shape) != expected:
        # As PyTorch: ValueError when the batch sizes differ, RuntimeError for other shapes.
        batch = target.ndim == 0 or target.shape[0] != input.shape[0]
        raise (ValueError if batch else RuntimeError)(
            f"{op}: expected target of shape {expected} for input of shape {tuple(input.shape)}, "
            f"got {tuple(target.shape)}"
        )
    if target.dtype.is_floating_point or target.dtype == oneflow.bool:
        raise RuntimeError(
            f"{op}: expected target of an integer dtype (class indices) for input of shape "
            f"{tuple(input.shape)}, got a target of dtype {target.dtype} and shape "
            f"{tuple(target.shape)}; for class probabilities pass a floating target of the "
            "input's shape"
        )
    if tuple(target.shape) != expected:
        raise ValueError(
            f"{op}: expected target of shape {expected} for input of shape {tuple(input.shape)}, "
            f"got {tuple(target.shape)}"
        )


def _class_indices(target):
    """uint8 class indices (labels read from images) as int64, which PyTorch also accepts."""
    return target.long() if target.dtype == oneflow.uint8 else target


def _fused_nll(input, target, weight, reduction):
    # The cases nll_loss's CPU kernel takes (float32/float64 input, int64 targets, a weight of the
    # input's dtype, reduction mean or sum); the others compose.
    return (
        reduction in ("mean", "sum")
        and input.dtype in (oneflow.float32, oneflow.float64)
        and target.dtype == oneflow.int64
        and not input.is_cuda
        and not target.is_cuda
        and (weight is None or (weight.dtype == input.dtype and not weight.is_cuda))
    )


def nll_loss(
    input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"
):
    input = _amp_float(input)  # float32 under autocast, as PyTorch
    target = _class_indices(target)
    _check_class_target("nll_loss", input, target)
    _check_floating("nll_loss", input)
    if _fused_nll(input, target, weight, reduction):
        # One kernel (and one for the gradient): the picked values, weights and their sum.
        return _C._nll_loss(input, target, weight, ignore_index, reduction == "mean")
    valid = _C.ne(target, ignore_index)
    safe = _C.where(valid, target, 0)
    dim = 1 if input.ndim > 1 else 0
    # The gather kernel checks the targets' range (no separate pass, no host sync): IndexError
    # "nll_loss: target 7 is out of bounds (expected values in [0, 5))".
    picked = _C.squeeze(
        _C.gather(input, dim, _C.unsqueeze(safe, dim), _target_of="nll_loss"), [dim]
    )
    w = _C.where(valid, 1.0, 0.0).to(input.dtype)
    if weight is not None:
        w = _C.mul(w, _C.index(weight, [safe], 0))
    loss = _C.neg(_C.mul(picked, w))
    if reduction == "mean":
        return _C.div(_C.sum(loss), _C.sum(w))
    return _reduce(loss, reduction)


def cross_entropy(
    input,
    target,
    weight=None,
    size_average=None,
    ignore_index=-100,
    reduce=None,
    reduction="mean",
    label_smoothing=0.0,
):
    input = _amp_float(input)  # float32 under autocast, as PyTorch
    target = _class_indices(target)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(
            f"cross_entropy: label_smoothing must be between 0.0 and 1.0, got {label_smoothing}"
        )
    if tuple(target.shape) == tuple(input.shape) and not target.is_floating_point():
        raise RuntimeError(
            "cross_entropy: expected a floating point target for class probabilities (a target "
            f"of the input's shape {tuple(input.shape)}), got {target.dtype}"
        )
    if input.ndim <= 2 and _fused_nll(input, target, weight, reduction):  # (int64 targets)
        # log_softmax inside nll_loss's kernel: one pass over the logits forward, one backward.
        _check_class_target("cross_entropy", input, target)
        return _C._cross_entropy(
            input, target, weight, ignore_index, reduction == "mean", float(label_smoothing)
        )
    dim = 1 if input.ndim > 1 else 0
    logp = log_softmax(input, dim)
    c = input.shape[dim]
    if target.dtype.is_floating_point and tuple(target.shape) == tuple(input.shape):
        t = target  # class probabilities
        if label_smoothing:
            t = _C.add(_C.mul(t, 1 - label_smoothing), label_smoothing / c)
        per = _C.mul(logp, t)
        if weight is not None:
            per = _C.mul(per, weight.reshape(-1, *([1] * (input.ndim - 2))) if dim else weight)
        loss = _C.neg(_C.sum(per, [dim], False))
        if reduction == "mean":
            return _C.div(_C.sum(loss), loss.numel())  # NaN for an empty batch, as PyTorch
        return _reduce(loss, reduction)
    _check_class_target("cross_entropy", input, target)
    nll = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    if not label_smoothing:
        return nll
    valid = _C.ne(target, ignore_index)
    w = weight.reshape(-1, *([1] * (input.ndim - 2))) if (weight is not None and dim) else weight
    smooth = _C.neg(_C.sum(logp if w is None else _C.mul(logp, w), [dim], False))
    smooth = _C.where(valid, smooth, 0.0)
    if reduction == "mean":
        if weight is None:
            denom = _C.sum(valid)
        else:
            denom = _C.sum(_C.where(valid, _C.index(weight, [_C.where(valid, target, 0)], 0), 0.0))
        smooth = _C.div(_C.sum(smooth), denom)
    else:
        smooth = _reduce(smooth, reduction)
    return _C.add(_C.mul(nll, 1 - label_smoothing), _C.mul(smooth, label_smoothing / c))


class _BinaryCrossEntropy(oneflow.autograd.Function):
    """-(t log x + (1 - t) log(1 - x)) with the logs clamped at -100, and PyTorch's gradients:
    (x - t) / max((1 - x) x, 1e-12) for the input (finite at x = 0 and x = 1) and
    log(1 - x) - log(x) for the target."""

    @staticmethod
    def forward(ctx, input, target):
        ctx.save_for_backward(input, target)
        log_p = _C.clamp(_C.log(input), -100.0, None)
        log_q = _C.clamp(_C.log(_C.add(_C.neg(input), 1.0)), -100.0, None)
        return _C.neg(_C.add(_C.mul(target, log_p), _C.mul(_C.add(_C.neg(target), 1.0), log_q)))

    @staticmethod
    def backward(ctx, grad):
        input, target = ctx.saved_tensors
        one_minus = _C.add(_C.neg(input), 1.0)
        grad_input = grad_target = None
        if ctx.needs_input_grad[0]:
            denom = _C.clamp(_C.mul(one_minus, input), 1e-12, None)
            grad_input = _C.div(_C.mul(grad, _C.sub(input, target)), denom)
        if ctx.needs_input_grad[1]:
            grad_target = _C.mul(grad, _C.sub(_C.log(one_minus), _C.log(input)))
        return grad_input, grad_target


def binary_cross_entropy(
    input, target, weight=None, size_average=None, reduce=None, reduction="mean"
):
    input = _amp_float(input)  # float32 under autocast, as PyTorch
    target = _amp_float(target)
    _check_same_shape("binary_cross_entropy", input, target)
    _check_floating("binary_cross_entropy", input)
    if input.dtype != target.dtype:
        raise RuntimeError(
            f"binary_cross_entropy: expected target of dtype {input.dtype} (the input's), got "
            f"{target.dtype}"
        )
    if (
        input.numel()
        and not input.is_meta
        and not bool(_C.all(_C.logical_and(_C.ge(input, 0.0), _C.le(input, 1.0))))
    ):
        raise RuntimeError(
            "binary_cross_entropy: all elements of input should be between 0 and 1 (input of "
            f"shape {tuple(input.shape)}, min {float(_C.amin(input))}, max "
            f"{float(_C.amax(input))}); use binary_cross_entropy_with_logits for logits"
        )
    loss = _BinaryCrossEntropy.apply(input, target)
    if weight is not None:
        loss = _C.mul(loss, weight)
    return _reduce(loss, reduction)


def binary_cross_entropy_with_logits(
    input, target, weight=None, size_average=None, reduce=None, reduction="mean", pos_weight=None
):
    input = _amp_float(input)  # float32 under autocast, as PyTorch
    target = _amp_float(target)
    _check_same_shape("binary_cross_entropy_with_logits", input, target)
    _check_floating("binary_cross_entropy_with_logits", input)
    # -(w t log s(x) + (1 - t) log(1 - s(x))) = (1 - t) x - (1 + (w - 1) t) log s(x), as
    # log(1 - s(x)) = log s(x) - x: one logsigmoid and three fused passes.
    log_sig = logsigmoid(input)
    if pos_weight is not None:
        log_sig = _C.mul(_C.add(_C.mul(target, _C.sub(pos_weight, 1)), 1), log_sig)
    loss = _C.sub(oneflow.addcmul(input, target, input, value=-1), log_sig)
    if weight is not None:
        loss = _C.mul(loss, weight)
    return _reduce(loss, reduction)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    input = _amp_float(input)  # float32 under autocast, as PyTorch
    target = _amp_float(target)
    if not (input.is_floating_point() and target.is_floating_point()):
        raise RuntimeError(f"kl_div: integral inputs are not supported, got {input.dtype}")
    if log_target:
        loss = _C.mul(_C.exp(target), _C.sub(target, input))
    else:
        loss = _C.sub(oneflow.xlogy(target, target), _C.mul(target, input))
    if reduction == "batchmean":
        return _C.div(_C.sum(loss), input.shape[0] if input.ndim else 1)
    return _reduce(loss, reduction)


def margin_ranking_loss(
    input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"
):
    loss = _C.relu(_C.add(_C.mul(_C.neg(target), _C.sub(input1, input2)), margin))
    return _reduce(loss, reduction)


def hinge_embedding_loss(
    input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"
):
    input = _amp_float(input)  # float32 under autocast, as PyTorch
    if reduction == "mean" and not input.is_floating_point():
        raise RuntimeError(
            f"hinge_embedding_loss: the mean of a {input.dtype} loss has no floating dtype"
        )
    neg = _C.relu(_C.add(_C.neg(input), margin))
    loss = _C.where(_C.eq(target, 1), input, _C.zeros_like(input))
    loss = _C.add(loss, _C.where(_C.eq(target, -1), neg, _C.zeros_like(input)))
    return _reduce(loss, reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    if input.dtype != oneflow.bool and not input.is_floating_point():
        raise RuntimeError(f"soft_margin_loss: a float result cannot be stored in {input.dtype}")
    return _reduce(softplus(_C.neg(_C.mul(target, input))), reduction)


def cosine_embedding_loss(
    input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"
):
    if not (input1.is_floating_point() or input2.is_floating_point()):  # PyTorch: in float
        dtype = oneflow.get_default_dtype()
        input1, input2 = input1.to(dtype), input2.to(dtype)
    cos = cosine_similarity(input1, input2, dim=-1, eps=1e-8)
    loss = _C.where(_C.eq(target, 1), _C.add(_C.neg(cos), 1.0), _C.relu(_C.sub(cos, margin)))
    return _reduce(loss, reduction)


def triplet_margin_loss(
    anchor,
    positive,
    negative,
    margin=1.0,
    p=2.0,
    eps=1e-6,
    swap=False,
    size_average=None,
    reduce=None,
    reduction="mean",
):
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = _C.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return _reduce(_C.relu(_C.add(_C.sub(d_pos, d_neg), margin)), reduction)


def poisson_nll_loss(
    input,
    target,
    log_input=True,
    full=False,
    size_average=None,
    eps=1e-8,
    reduce=None,
    reduction="mean",
):
    if log_input:
        loss = _C.sub(_C.exp(input), _C.mul(target, input))
    else:
        loss = _C.sub(input, _C.mul(target, _C.log(_C.add(input, eps))))
    if full:
        # Stirling's approximation of log(target!), added where target > 1 (PyTorch's rule)
        t = target
        safe = _C.where(_C.gt(t, 1.0), t, _C.ones_like(t))
        stirling = _C.add(
            _C.sub(_C.mul(safe, _C.log(safe)), safe),
            _C.mul(_C.log(_C.mul(safe, 2 * math.pi)), 0.5),
        )
        loss = _C.add(loss, _C.where(_C.gt(t, 1.0), stirling, _C.zeros_like(stirling)))
    return _reduce(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    if not input.is_floating_point():
        raise RuntimeError(f"gaussian_nll_loss: a float result cannot be stored in {input.dtype}")
    # Clamped without grad, as PyTorch does: the gradient w.r.t. var passes straight through.
    v = var.clone()
    with oneflow.no_grad():
        v.clamp_(min=eps)
    d = _C.sub(input, target)
    loss = _C.mul(_C.add(_C.log(v), _C.div(_C.mul(d, d), v)), 0.5)
    if full:
        loss = _C.add(loss, 0.5 * math.log(2 * math.pi))
    return _reduce(loss, reduction)


def _logsumexp_safe(terms):
    """log(sum(exp(t))) over same-shaped tensors, -inf where every term is -inf, with finite
    gradients there (so unreachable CTC states do not turn gradients into NaN)."""
    m = terms[0]
    for t in terms[1:]:
        m = _C.maximum(m, t)
    m = m.detach()
    finite = _C.ne(m, float("-inf"))
    m_safe = _C.where(finite, m, 0.0)
    total = None
    for t in terms:
        e = _C.exp(_C.sub(t, m_safe))
        total = e if total is None else _C.add(total, e)
    positive = _C.gt(total, 0.0)
    out = _C.add(_C.log(_C.where(positive, total, 1.0)), m_safe)
    return _C.where(positive, out, float("-inf"))


def _ctc_lengths(lengths):
    """CTC input or target lengths (a tensor of any rank, or a sequence) as a list of ints."""
    if isinstance(lengths, oneflow.Tensor):
        if lengths.is_floating_point() or lengths.dtype == oneflow.bool:
            raise RuntimeError(f"ctc_loss: lengths must be integral, got {lengths.dtype}")
        return [int(v) for v in lengths.reshape(-1).numpy().tolist()]
    if isinstance(lengths, int):
        return [lengths]
    return [int(v) for v in lengths]


@_fp32  # on PyTorch's float32 autocast list
def ctc_loss(
    log_probs,
    targets,
    input_lengths,
    target_lengths,
    blank=0,
    reduction="mean",
    zero_infinity=False,
):
    """Connectionist temporal classification loss. On the CPU one kernel runs the forward
    (alpha) and, for the gradient, the backward (beta) recursions of each sequence in log space;
    elsewhere the recursion is composed of other ops (_ctc_composed)."""
    batched = log_probs.ndim != 2
    if not batched:
        log_probs = _C.unsqueeze(log_probs, 1)
    T, N, C = log_probs.shape
    if log_probs.numel() == 0:
        raise RuntimeError("ctc_loss: log_probs tensor must not be empty")
    if not 0 <= blank < C:
        raise RuntimeError(f"ctc_loss: blank must be in label range [0, {C}), got {blank}")
    kernel = (
        log_probs.dtype in (oneflow.float32, oneflow.float64)
        and not log_probs.is_global
        and log_probs.device.type == "cpu"
    )
    if kernel and _graph_tracing():
        # Inside nn.Graph no value is read on the host: the kernel checks lengths and targets
        # when it runs.
        il_t, tl_t = (_ctc_length_tensor(v, N) for v in (input_lengths, target_lengths))
        loss = _C._ctc_loss(log_probs, targets.long(), il_t, tl_t, blank, zero_infinity)
        return _ctc_reduce(loss, tl_t, reduction, zero_infinity, batched)
    il = _ctc_lengths(input_lengths)
    tl = _ctc_lengths(target_lengths)
    if len(il) != N:
        raise RuntimeError("input_lengths must be of size batch_size")
    if len(tl) != N:
        raise RuntimeError("target_lengths must be of size batch_size")
    for v in il:
        if v > T:
            raise RuntimeError(
                f"ctc_loss: expected input_lengths to have value at most {T}, but got value {v}"
            )
    tgt = targets.numpy()
    if tgt.ndim == 1:
        if tgt.shape[0] != builtins.sum(tl):
            raise RuntimeError(
                f"ctc_loss: expected tensor to have size {builtins.sum(tl)} at dimension 0, "
                f"but got size {tgt.shape[0]} for argument #2 'targets'"
            )
    else:
        if tgt.shape[0] != N:
            raise RuntimeError(
                f"ctc_loss: expected tensor to have size {N} at dimension 0, "
                f"but got size {tgt.shape[0]} for argument #2 'targets'"
            )
        if tl and tgt.shape[1] < max(tl):
            raise RuntimeError(
                f"ctc_loss: expected tensor to have size at least {max(tl)} at dimension 1, "
                f"but got size {tgt.shape[1]} for argument #2 'targets'"
            )
    il_t, tl_t = (oneflow.tensor(v, dtype=oneflow.int64) for v in (il, tl))
    if kernel:
        loss = _C._ctc_loss(log_probs, targets.long(), il_t, tl_t, blank, zero_infinity)
    else:
        loss = _ctc_composed(log_probs, tgt, il, tl, blank)
    from oneflow.framework.global_tensor import constant_like

    return _ctc_reduce(loss, constant_like(loss, tl_t), reduction, zero_infinity, batched)


def _ctc_length_tensor(lengths, n):
    """CTC lengths (a tensor of any rank, an int or a sequence) as an int64 (n,) CPU tensor,
    without reading a tensor's values."""
    if isinstance(lengths, oneflow.Tensor):
        if lengths.is_floating_point() or lengths.dtype == oneflow.bool:
            raise RuntimeError(f"ctc_loss: lengths must be integral, got {lengths.dtype}")
        lengths = lengths.reshape(-1).to(oneflow.int64)
    else:
        lengths = oneflow.tensor([lengths] if isinstance(lengths, int) else list(lengths))
    if lengths.shape[0] != n:
        raise RuntimeError("input_lengths and target_lengths must be of size batch_size")
    return lengths


def _ctc_reduce(loss, target_lengths, reduction, zero_infinity, batched):
    """The per-sequence losses, infinite ones zeroed when asked, reduced as PyTorch: "mean"
    divides each by its target length (at least 1) before the batch mean."""
    if zero_infinity:
        loss = _C.where(_C.eq(loss, float("inf")), 0.0, loss)
    if reduction == "mean":
        lengths = _C.clamp(target_lengths, 1, None).to(dtype=loss.dtype, device=loss.device)
        return _C.mean(_C.div(loss, lengths))
    loss = _reduce(loss, reduction)
    return loss if batched or reduction != "none" else _C.squeeze(loss, [0])


def _ctc_composed(log_probs, tgt, il, tl, blank):
    """The per-sequence CTC loss composed of other ops (off the CPU): the alpha recursion in log
    space, one batched step per time step, differentiated by autograd (the true gradient of
    log_probs; the CPU kernel's follows PyTorch's, which assumes a log_softmax before it)."""
    T, N, C = log_probs.shape
    rows, offset = [], 0
    for b in range(N):
        if tgt.ndim == 1:
            rows.append(tgt[offset : offset + tl[b]].tolist())
            offset += tl[b]
        else:
            rows.append(tgt[b, : tl[b]].tolist())
    S = max(tl) if tl else 0
    L = 2 * S + 1
    ext = [[blank] * L for _ in range(N)]
    allow_skip = [[False] * L for _ in range(N)]
    for b, row in enumerate(rows):
        for i, c in enumerate(row):
            ext[b][2 * i + 1] = int(c)
            if i > 0 and c != row[i - 1]:
                allow_skip[b][2 * i + 1] = True
    from oneflow.framework.global_tensor import constant_like

    dev = log_probs.device

    def const(t):  # beside a global log_probs: a broadcast global tensor
        return constant_like(log_probs, t)

    ext_t = const(oneflow.tensor(ext, dtype=oneflow.int64, device=dev))  # (N, L)
    skip = const(oneflow.tensor(allow_skip, dtype=oneflow.bool, device=dev))
    neg_inf = const(oneflow.full((N, 1), float("-inf"), dtype=log_probs.dtype, device=dev))
    neg_inf2 = const(oneflow.full((N, 2), float("-inf"), dtype=log_probs.dtype, device=dev))
    # emissions[t] = log_probs[t, b, ext[b, s]]  -> (T, N, L)
    emissions = _C.gather(log_probs, 2, _C.expand(_C.unsqueeze(ext_t, 0), T, N, L))
    start = const(oneflow.full((N, L), float("-inf"), dtype=log_probs.dtype, device=dev))
    init_mask = const(oneflow.tensor([[s < 2 for s in range(L)]] * N, device=dev))
    alpha = _C.where(init_mask, emissions[0], start)
    alphas = [alpha]
    for t in range(1, T):
        prev1 = _C.cat([neg_inf, alpha[:, :-1]], 1)
        prev2 = _C.cat([neg_inf2, alpha[:, :-2]], 1) if L > 1 else alpha
        prev2 = _C.where(skip, prev2, float("-inf"))
        alpha = _C.add(_logsumexp_safe([alpha, prev1, prev2]), emissions[t])
        alphas.append(alpha)
    stacked = oneflow.stack(alphas, 0)  # (T, N, L)
    last_t = const(oneflow.tensor([max(v - 1, 0) for v in il], device=dev))
    final = stacked[last_t, const(oneflow.arange(N, device=dev))]  # (N, L)
    ends = const(oneflow.tensor([[2 * v, max(2 * v - 1, 0)] for v in tl], device=dev))
    picked = _C.gather(final, 1, ends)
    both = [
        _C.select(picked, 1, 0),
        _C.where(
            const(oneflow.tensor([v > 0 for v in tl], device=dev)),
            _C.select(picked, 1, 1),
            float("-inf"),
        ),
    ]
    return _C.neg(_logsumexp_safe(both))


# ---- attention ----------------------------------------------------------------------------


_CAUSAL_MASKS = {}


def _causal_mask(L, S, device):
    """The lower-triangular keep-mask of an L x S causal attention (cached; never written)."""
    key = (L, S, str(device))
    mask = _CAUSAL_MASKS.get(key)
    if mask is None:
        if len(_CAUSAL_MASKS) > 64:
            _CAUSAL_MASKS.clear()
        mask = _CAUSAL_MASKS[key] = oneflow.ones(L, S, dtype=oneflow.bool, device=device).tril()
    return mask


def _softmax_zeroing_masked_rows(scores):
    """softmax over the last dim, with rows whose every score is -inf (a query that may attend to
    nothing: left padding under a causal mask) giving zeros instead of NaN, as PyTorch's fused
    attention does; their gradient is zero too (their scores are replaced before the softmax)."""
    empty = oneflow.isneginf(scores).all(-1, keepdim=True)
    attn = _C.softmax(_C.where(empty, 0.0, scores), -1)
    return _C.where(empty, 0.0, attn)


def scaled_dot_product_attention(
    query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False
):
    """softmax(Q K^T * scale + mask) V over the last two dims; a bool mask keeps True entries."""
    L, S = query.shape[-2], key.shape[-2]
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    if enable_gqa and query.shape[-3] != key.shape[-3]:
        rep = query.shape[-3] // key.shape[-3]
        key = key.repeat_interleave(rep, dim=-3)
        value = value.repeat_interleave(rep, dim=-3)
    # Under autocast attention runs in its lower precision, as PyTorch's.
    query, key, value = (_C._autocast_lower(t) for t in (query, key, value))
    from oneflow.nn import attention as _attention

    fused_ok = _attention.fused_allowed()
    if not fused_ok and not _attention.math_allowed():
        raise RuntimeError(
            "scaled_dot_product_attention: no available kernel among the backends sdpa_kernel "
            "allows"
        )
    if (
        fused_ok
        and attn_mask is None
        and dropout_p == 0.0
        and _C._fused_attention_supported(query, key, value)
    ):
        # One fused CPU kernel (ops/attention_primitives.h): no L x S scores in memory, and a
        # backward that recomputes them from the saved log-sum-exp.
        return _C._fused_attention(query, key, value, float(scale), bool(is_causal))
    if not _attention.math_allowed():
        raise RuntimeError(
            "scaled_dot_product_attention: the fused kernel takes no mask or dropout (and "
            "float32/float64 CPU tensors); sdpa_kernel allows no other backend"
        )
    scores = _C.mul(_C.matmul(query, key.transpose(-2, -1)), scale)
    if is_causal:  # with a mask too, both apply (PyTorch 2.x)
        scores = _C.where(_causal_mask(L, S, query.device), scores, float("-inf"))
    if attn_mask is not None:
        if attn_mask.dtype == oneflow.bool:
            scores = _C.where(attn_mask, scores, float("-inf"))
        else:
            if attn_mask.dtype != query.dtype:  # a float32 mask is taken in query's dtype
                if attn_mask.dtype != oneflow.float32:
                    raise RuntimeError(
                        "scaled_dot_product_attention: Expected attn_mask dtype to be bool or "
                        f"float or to match query dtype, but got attn_mask.dtype: "
                        f"{attn_mask.dtype} and query.dtype: {query.dtype} instead."
                    )
                attn_mask = _C.to(attn_mask, query.dtype, None)
            scores = _C.add(scores, attn_mask)
    attn = _C.softmax(scores, -1) if attn_mask is None else _softmax_zeroing_masked_rows(scores)
    if dropout_p > 0.0:
        attn = dropout(attn, dropout_p, True)
    return _C.matmul(attn, value)


def _pad_mask(m):
    """A mask with one more key column that masks nothing (False, or 0.0)."""
    zero = oneflow.zeros(*m.shape[:-1], 1, dtype=m.dtype, device=m.device)
    return oneflow.cat([m, zero], -1)


def multi_head_attention_forward(
    query,
    key,
    value,
    embed_dim_to_check,
    num_heads,
    in_proj_weight,
    in_proj_bias,
    bias_k,
    bias_v,
    add_zero_attn,
    dropout_p,
    out_proj_weight,
    out_proj_bias,
    training=True,
    key_padding_mask=None,
    need_weights=True,
    attn_mask=None,
    use_separate_proj_weight=False,
    q_proj_weight=None,
    k_proj_weight=None,
    v_proj_weight=None,
    static_k=None,
    static_v=None,
    average_attn_weights=True,
    is_causal=False,
):
    """PyTorch's multi-head attention on (L, N, E) query and (S, N, E) key and value (or
    unbatched (L, E) and (S, E)): packed or separate in-projections, bias_k / bias_v,
    add_zero_attn, static keys and values, bool (True: may not attend) or float masks."""
    batched = query.ndim == 3
    if not batched:
        query, key, value = (t.unsqueeze(1) for t in (query, key, value))
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    L, N, E = query.shape
    if E != embed_dim_to_check:
        raise AssertionError(
            f"was expecting embedding dimension of {embed_dim_to_check}, but got {E}"
        )
    H = num_heads
    hd = E // H
    if hd * H != E:
        raise AssertionError(f"embed_dim {E} not divisible by num_heads {H}")
    if use_separate_proj_weight:
        wq, wk, wv = q_proj_weight, k_proj_weight, v_proj_weight
    else:
        wq, wk, wv = in_proj_weight.chunk(3, 0)
    bq, bk, bv = in_proj_bias.chunk(3, 0) if in_proj_bias is not None else (None, None, None)
    q = linear(query, wq, bq)
    k = linear(key, wk, bk) if static_k is None else None
    v = linear(value, wv, bv) if static_v is None else None
    if is_causal and attn_mask is None:
        attn_mask = _C.logical_not(_causal_mask(L, key.shape[0], query.device))
    if bias_k is not None and bias_v is not None:
        if static_k is not None or static_v is not None:
            raise AssertionError("bias cannot be added to static key and value")
        k = oneflow.cat([k, bias_k.repeat(1, N, 1)])
        v = oneflow.cat([v, bias_v.repeat(1, N, 1)])
        attn_mask = None if attn_mask is None else _pad_mask(attn_mask)
        key_padding_mask = None if key_padding_mask is None else _pad_mask(key_padding_mask)
    q = q.reshape(L, N * H, hd).transpose(0, 1)
    k = static_k if static_k is not None else k.reshape(k.shape[0], N * H, hd).transpose(0, 1)
    v = static_v if static_v is not None else v.reshape(v.shape[0], N * H, hd).transpose(0, 1)
    if add_zero_attn:
        k = oneflow.cat([k, oneflow.zeros(N * H, 1, hd, dtype=k.dtype, device=k.device)], 1)
        v = oneflow.cat([v, oneflow.zeros(N * H, 1, hd, dtype=v.dtype, device=v.device)], 1)
        attn_mask = None if attn_mask is None else _pad_mask(attn_mask)
        key_padding_mask = None if key_padding_mask is None else _pad_mask(key_padding_mask)
    S = k.shape[1]
    scores = _C.mul(_C.matmul(q, k.transpose(-2, -1)), 1.0 / math.sqrt(hd)).reshape(N, H, L, S)
    for mask in (attn_mask, key_padding_mask):
        if mask is None:
            continue
        if mask is key_padding_mask:
            mask = mask.reshape(N, 1, 1, S)
        elif mask.ndim == 3:
            mask = mask.reshape(N, H, L, S)
        if mask.dtype == oneflow.bool:  # True marks positions that may not attend
            scores = _C.where(mask, float("-inf"), scores)
        else:
            scores = _C.add(scores, mask)
    masked = attn_mask is not None or key_padding_mask is not None
    # Without weights PyTorch runs its fused attention, which gives fully masked rows zeros; with
    # them, the softmax's NaN.
    if masked and not need_weights:
        attn = _softmax_zeroing_masked_rows(scores)
    else:
        attn = _C.softmax(scores, -1)
    if dropout_p > 0.0 and training:
        attn = dropout(attn, dropout_p, True)
    out = _C.matmul(attn, v.reshape(N, H, S, hd)).permute(2, 0, 1, 3).reshape(L, N, E)
    out = linear(out, out_proj_weight, out_proj_bias)
    weights = None
    if need_weights:
        weights = attn.mean(1) if average_attn_weights else attn
    if not batched:
        out = out.squeeze(1)
        weights = None if weights is None else weights.squeeze(0)
    return out, weights


def relu_(input):
    return oneflow._C.copy_(input, oneflow._C.relu(input))


def leaky_relu_(input, negative_slope=0.01):
    return leaky_relu(input, negative_slope, inplace=True)


def elu_(input, alpha=1.0):
    return elu(input, alpha, inplace=True)


def celu_(input, alpha=1.0):
    return celu(input, alpha, inplace=True)


def selu_(input):
    return selu(input, inplace=True)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return hardtanh(input, min_val, max_val, inplace=True)


def threshold_(input, threshold, value):
    return globals()["threshold"](input, threshold, value, inplace=True)


__all__ = [
    n
    for n, v in list(globals().items())
    if callable(v) and not n.startswith("_") and n not in ("Tensor", "oneflow")
]
