"""OneFlow's functional names that model code calls as ``flow._C.<name>(...)``.

OneFlow model code (LiBai, OneFlow's model zoo, OneFlow's own ``nn`` modules) calls the functional
API directly: ``flow._C.fused_bias_add_gelu(x, bias, axis=x.ndim - 1)``,
``flow._C.layer_norm_affine(x, w, b, begin_norm_axis=..., begin_params_axis=..., epsilon=...)``,
``flow._C.sparse_softmax_cross_entropy(logits, label)`` and so on. Here ``flow._C`` is the native
module ``oneflow._oneflow_internal._C``, which binds only part of OneFlow's list
(``oneflow/core/functional/functional_api.yaml``). ``install()`` attaches Python implementations
of the missing names, with OneFlow's parameter names, defaults, return values and dtypes. Each is
built from the public ops (``oneflow.*``, ``oneflow.nn.functional.*``), so it is differentiable and
runs on every device those ops run on. A name that ``_C`` already has is never replaced (a native
binding may differ from OneFlow's signature: ``_C.gather(input, dim, index)`` is PyTorch's, not
OneFlow's ``gather(x, indices, axis)``; it stays as it is).

Fused kernels are written as their unfused compositions, with the fused op's semantics:

- ``fused_scale_mask_softmax(x, mask)`` is ``softmax(where(mask, x * scale, fill_value))`` over
  the last axis (``mask`` true keeps a score), and ``..._dropout`` returns the tuple
  ``(dropout(softmax_y), softmax_y)``, as OneFlow's kernel (its outputs ``y`` and ``softmax_y``).
- ``fused_scale_tril_softmax_mask_scale(x)`` is ``softmax(tril(x * tril_scale_value, diagonal),
  filling above the diagonal with tril_fill_value)``, then dropout; it returns
  ``(y, softmax_y)`` too. Its dropout is always on (the kernel has no ``training`` flag).
- ``fused_bias_add_gelu(a, b, axis=k)`` adds the bias ``b`` along axis ``k`` of ``a`` (``b``'s
  shape is ``a.shape[k:k + b.ndim]``), then applies the exact (erf) GELU;
  ``fused_bias_add_dropout`` applies dropout (always on, ``p=0`` is the plain bias add).
- ``fused_matmul_bias(x, weight, bias)`` is ``x @ weight.T + bias`` (``weight`` is
  ``(out_features, in_features)``, as ``nn.Linear``'s); ``fused_glu(x, w, b)`` splits
  ``x @ w.T + b`` in two halves ``(hidden, gate)`` along the last axis and returns
  ``hidden * activation(gate)`` (with ``v, c``: ``hidden = x @ w.T + b``, ``gate = x @ v.T + c``).
- ``fused_self_attention(h, head_size, alpha)`` reads ``h`` of shape ``(seq, batch, heads * 3 *
  head_size)`` laid out as ``(seq, batch, heads, 3, head_size)`` and returns
  ``(alpha * q @ k^T, v)`` of shapes ``(batch, heads, seq, seq)`` and
  ``(batch, heads, seq, head_size)``.

Names that OneFlow's signature list and newer OneFlow's ``oneflow/__init__.py`` disagree on follow
the newer one, which model code is written for: ``equal`` is whole-tensor equality (a Python
bool, as ``oneflow.equal``) and ``broadcast_equal`` the elementwise comparison; ``reduce_sum``,
``reduce_mean``, ``reduce_prod``, ``reduce_all`` and ``reduce_any`` take ``(x, dim=None,
keepdim=False)`` as ``oneflow.sum`` and the others they back. The names newer OneFlow binds in
``_C`` with PyTorch's signature (``baddbmm``, ``logsumexp``, ``hstack``, ``clamp_min_`` ...)
forward to this project's ``oneflow.<name>`` or Tensor method.

Where the native OneFlow op takes a required ``Float`` scale that callers pass as ``None`` (LiBai
passes ``scale=self.coeff``, which is ``None`` unless query-key layer scaling is on), ``None``
means 1.
"""

import builtins

import oneflow as flow

_FUNCS = {}


def _export(*names):
    def register(fn):
        for name in names:
            _FUNCS[name] = fn
        return fn

    return register


def install(target=None):
    """Attach the names ``target`` (default: ``oneflow._C``) lacks; returns the names added."""
    if target is None:
        target = flow._oneflow_internal._C
    added = []
    for name, fn in _FUNCS.items():
        if not hasattr(target, name):
            setattr(target, name, fn)
            added.append(name)
    return added


def _F():
    return flow.nn.functional


def _axis(axis, ndim):
    if not -ndim <= axis < builtins.max(ndim, 1):
        raise IndexError(f"axis {axis} is out of range for a tensor of {ndim} dimensions")
    return axis % ndim if ndim else 0


def _axes(dim, ndim):
    if dim is None:
        return list(range(ndim))
    if isinstance(dim, int):
        dim = [dim]
    return [_axis(int(d), ndim) for d in dim]


def _scale(value, default=1.0):
    return default if value is None else value


def _low_precision(t):
    return t.dtype in (flow.float16, flow.bfloat16)


def _softmax_last(z):
    """Softmax over the last axis; float16 and bfloat16 accumulate in float32 (as the kernels)."""
    if _low_precision(z):
        return _F().softmax(z.float(), dim=-1).to(z.dtype)
    return _F().softmax(z, dim=-1)


def _as_bool(mask):
    return mask if mask.dtype == flow.bool else mask != 0


def _reduce(loss, reduction):
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.mean()
    raise ValueError(f"reduction must be 'none', 'mean' or 'sum', got {reduction!r}")


def _bias_view(a, b, axis):
    axis = _axis(axis, a.ndim)
    expect = tuple(a.shape[axis : axis + b.ndim])
    if tuple(b.shape) != expect:
        raise RuntimeError(
            f"bias_add: the bias's shape {tuple(b.shape)} must equal the input's shape at axis "
            f"{axis} ({expect})"
        )
    return b.reshape((1,) * axis + tuple(b.shape) + (1,) * (a.ndim - axis - b.ndim))


def _tril_keep(x, diagonal):
    """A boolean mask, broadcastable to x, true on and below the `diagonal`-th diagonal of the
    last two axes."""
    if getattr(x, "is_global", False):
        base = flow.ones_like(x, dtype=flow.bool)
    else:
        base = flow.ones(x.shape[-2], x.shape[-1], dtype=flow.bool, device=x.device)
    return flow.tril(base, diagonal)


# --------------------------------------------------------------------------- fused ops


@_export("bias_add")
def bias_add(x, bias, axis=1):
    """``x + bias`` with the bias laid along axis ``axis`` of ``x``."""
    return x + _bias_view(x, bias, axis)


@_export("fused_bias_add_gelu")
def fused_bias_add_gelu(a, b, *, axis):
    """``gelu(a + b)``, the bias ``b`` added along axis ``axis`` of ``a``; exact (erf) GELU."""
    return _F().gelu(bias_add(a, b, axis))


@_export("fused_bias_add_dropout")
def fused_bias_add_dropout(a, b, *, p=0.5, axis, generator=None):
    """``dropout(a + b, p)`` with the bias along axis ``axis``; the dropout is always applied
    (scaled by ``1 / (1 - p)``), ``p=0`` gives the plain bias add."""
    y = bias_add(a, b, axis)
    if p <= 0.0:
        return y
    return _F().dropout(y, p=p, training=True, generator=generator)


@_export("fused_scale_tril")
def fused_scale_tril(x, diagonal=0, fill_value=0, scale=1):
    """``x * scale`` on and below the ``diagonal``-th diagonal of the last two axes,
    ``fill_value`` above it."""
    return flow.where(_tril_keep(x, diagonal), x * _scale(scale), fill_value)


@_export("fused_scale_mask_softmax")
def fused_scale_mask_softmax(x, mask, *, fill_value=0.0, scale=1.0):
    """``softmax(where(mask, x * scale, fill_value))`` over the last axis; ``mask`` (bool or
    integer, broadcastable to ``x``) is true where a score is kept."""
    return _softmax_last(flow.where(_as_bool(mask), x * _scale(scale), fill_value))


@_export("fused_scale_mask_softmax_dropout")
def fused_scale_mask_softmax_dropout(
    x, mask, *, fill_value=0.0, scale=1.0, p=0.5, training=True, generator=None
):
    """Returns ``(y, softmax_y)``: ``softmax_y`` is ``fused_scale_mask_softmax(x, mask)`` and
    ``y`` is its dropout (identity when ``training`` is false)."""
    softmax_y = fused_scale_mask_softmax(x, mask, fill_value=fill_value, scale=scale)
    y = _F().dropout(softmax_y, p=p, training=training, generator=generator)
    return y, softmax_y


@_export("fused_scale_tril_softmax_mask_scale")
def fused_scale_tril_softmax_mask_scale(
    a, *, p=0.5, diagonal, tril_scale_value, tril_fill_value=0.0, generator=None
):
    """Returns ``(y, softmax_y)``: ``softmax_y`` is the last-axis softmax of
    ``fused_scale_tril(a, diagonal, tril_fill_value, tril_scale_value)`` and ``y`` is its dropout
    with rate ``p`` (always applied)."""
    z = fused_scale_tril(a, diagonal, tril_fill_value, _scale(tril_scale_value))
    softmax_y = _softmax_last(z)
    y = _F().dropout(softmax_y, p=p, training=True, generator=generator)
    return y, softmax_y


@_export("fused_matmul_bias")
def fused_matmul_bias(x, weight, bias, _add_to_output=None):
    """``x @ weight.T + bias`` (``+ _add_to_output`` when given)."""
    y = _F().linear(x, weight, bias)
    return y if _add_to_output is None else y + _add_to_output


_GLU_ACTIVATIONS = {
    "none": lambda t: t,
    "sigmoid": lambda t: flow.sigmoid(t),
    "relu": lambda t: _F().relu(t),
    "gelu": lambda t: _F().gelu(t),
    "fast_gelu": lambda t: _F().gelu(t, approximate="tanh"),
    "silu": lambda t: _F().silu(t),
    "tanh": lambda t: flow.tanh(t),
}


@_export("fused_glu")
def fused_glu(x, w, b, v=None, c=None, activation="none"):
    """Gated linear unit of a linear layer: with ``v`` absent, ``x @ w.T + b`` splits into
    ``(hidden, gate)`` halves along the last axis; otherwise ``hidden = x @ w.T + b`` and
    ``gate = x @ v.T + c``. Returns ``hidden * activation(gate)``; activation is one of
    none, sigmoid, relu, gelu, fast_gelu, silu, tanh."""
    if activation not in _GLU_ACTIVATIONS:
        raise ValueError(f"fused_glu: unsupported activation {activation!r}")
    if v is None:
        hidden, gate = _F().linear(x, w, b).chunk(2, dim=-1)
    else:
        hidden = _F().linear(x, w, b)
        gate = _F().linear(x, v, c)
    return hidden * _GLU_ACTIVATIONS[activation](gate)


@_export("fused_self_attention")
def fused_self_attention(hidden_states, head_size=8, alpha=1.0):
    """``hidden_states`` ``(seq, batch, heads * 3 * head_size)``, laid out as
    ``(seq, batch, heads, 3, head_size)``; returns ``(alpha * q @ k^T, v)`` of shapes
    ``(batch, heads, seq, seq)`` and ``(batch, heads, seq, head_size)``."""
    if hidden_states.ndim != 3:
        raise RuntimeError("fused_self_attention: hidden_states must be (seq, batch, hidden)")
    s, b, hidden = hidden_states.shape
    if hidden % (3 * head_size):
        raise RuntimeError(
            f"fused_self_attention: hidden size {hidden} is not a multiple of 3 * {head_size}"
        )
    h = hidden_states.reshape(s, b, hidden // (3 * head_size), 3, head_size)
    q, k, v = (h.select(3, i).permute(1, 2, 0, 3) for i in range(3))
    qmk = flow.matmul(q, k.transpose(-1, -2))
    if alpha != 1.0:
        qmk = qmk * alpha
    return qmk, v.contiguous()


@_export("fast_gelu")
def fast_gelu(x):
    """GELU's tanh approximation."""
    return _F().gelu(x, approximate="tanh")


@_export("quick_gelu")
def quick_gelu(x):
    """``x * sigmoid(1.702 * x)``."""
    return x * flow.sigmoid(1.702 * x)


@_export("fused_fast_gelu_mul")
def fused_fast_gelu_mul(x, multiplier):
    """``fast_gelu(x) * multiplier``."""
    return fast_gelu(x) * multiplier


# --------------------------------------------------------------------------- normalization


@_export("layer_norm")
def layer_norm(x, begin_norm_axis, begin_params_axis, epsilon):
    """Normalizes over the axes from ``begin_norm_axis`` on (no affine parameters)."""
    begin = _axis(begin_norm_axis, x.ndim)
    return _F().layer_norm(x, tuple(x.shape[begin:]), eps=epsilon)


@_export("layer_norm_affine")
def layer_norm_affine(x, gamma, beta, begin_norm_axis, begin_params_axis, epsilon):
    """Normalizes over the axes from ``begin_norm_axis`` on, then ``* gamma + beta`` whose shape
    is ``x.shape[begin_params_axis:]``."""
    begin = _axis(begin_norm_axis, x.ndim)
    params = _axis(begin_params_axis, x.ndim)
    shape = tuple(x.shape[begin:])
    if params == begin:
        return _F().layer_norm(x, shape, gamma, beta, eps=epsilon)
    return _F().layer_norm(x, shape, eps=epsilon) * gamma + beta


@_export("rms_norm")
def rms_norm(x, weight, normalized_shape, epsilon=1e-5):
    """``x * rsqrt(mean(x**2) + epsilon) * weight``, the mean over the last
    ``len(normalized_shape)`` axes; float16 and bfloat16 compute in float32. ``weight`` may be
    None."""
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    n = len(normalized_shape)
    if tuple(x.shape[x.ndim - n :]) != tuple(normalized_shape):
        raise RuntimeError(
            f"rms_norm: normalized_shape {tuple(normalized_shape)} does not match the input's "
            f"trailing shape {tuple(x.shape)}"
        )
    xc = x.float() if _low_precision(x) else x
    dims = list(range(x.ndim - n, x.ndim))
    y = xc * flow.rsqrt((xc * xc).mean(dim=dims, keepdim=True) + epsilon)
    if weight is not None:
        y = y * weight.to(y.dtype)
    return y.to(x.dtype)


@_export("rms_layer_norm")
def rms_layer_norm(hidden_states, weight, variance_epsilon):
    """T5's layer norm: ``weight * (x * rsqrt(mean(x.float()**2, -1) + eps))``, the normalized
    value cast to float16 when ``weight`` is float16."""
    variance = hidden_states.float().square().mean(dim=-1, keepdim=True)
    y = hidden_states * flow.rsqrt(variance + variance_epsilon)
    if weight.dtype == flow.float16:
        y = y.to(flow.float16)
    return weight * y


@_export("group_norm")
def group_norm(
    x,
    gamma=None,
    beta=None,
    affine=True,
    num_groups=1,
    epsilon=1e-5,
    data_format="channels_first",
    activation="none",
):
    """Group normalization; ``data_format="channels_last"`` takes the channels from the last
    axis; ``activation`` is ``"none"`` or ``"silu"`` (applied after the affine transform)."""
    if activation not in ("none", "silu"):
        raise ValueError(f"group_norm: unsupported activation {activation!r}")
    channels_last = data_format == "channels_last"
    if channels_last:
        x = x.movedim(-1, 1)
    y = _F().group_norm(
        x, num_groups, gamma if affine else None, beta if affine else None, eps=epsilon
    )
    if activation == "silu":
        y = _F().silu(y)
    return y.movedim(1, -1) if channels_last else y


@_export("normalization", "batch_norm")
def batch_norm(
    x,
    moving_mean=None,
    moving_variance=None,
    gamma=None,
    beta=None,
    axis=1,
    epsilon=1e-5,
    momentum=0.9,
    is_training=False,
):
    """OneFlow's batch normalization (argument order: x, moving_mean, moving_variance, gamma,
    beta, axis, epsilon, momentum, is_training). ``axis`` is the channel axis; in training the
    moving statistics, when given, are updated in place with PyTorch's rule
    ``new = (1 - momentum) * old + momentum * batch`` (OneFlow's functor converts the same way);
    out of training they are required."""
    if (moving_mean is None) != (moving_variance is None):
        raise RuntimeError("Both moving_mean and moving_variance should be None or Tensor.")
    if not is_training and moving_mean is None:
        raise RuntimeError("Must have moving_mean and moving_variance in eval mode.")
    if x.ndim < 2:
        raise RuntimeError("NumAxes of x should be greater or equal than 2.")
    axis = _axis(axis, x.ndim)
    xc = x.movedim(axis, 1) if axis != 1 else x
    y = _F().batch_norm(
        xc,
        moving_mean,
        moving_variance,
        gamma,
        beta,
        training=is_training,
        momentum=momentum,
        eps=epsilon,
    )
    return y.movedim(1, axis) if axis != 1 else y


# --------------------------------------------------------------------------- nn functions


@_export("dropout")
def dropout(input, p=0.5, training=True, inplace=False, generator=None, *, addend=None):
    """Dropout; ``addend``, when given, is added to the result (OneFlow's fused residual)."""
    return _F().dropout(input, p, training, inplace, generator, addend=addend)


@_export("one_hot")
def one_hot(input, num_classes=-1, on_value=1, off_value=0):
    """One-hot encoding along a new last axis; int64 when both values are integers, float32
    when either is a float; ``num_classes=-1`` uses ``input.max() + 1``."""
    if input.is_floating_point():
        raise RuntimeError("one_hot is only applicable to index tensor.")
    if num_classes == -1:
        num_classes = int(input.max().item()) + 1
    floating = isinstance(on_value, float) or isinstance(off_value, float)
    dtype = flow.float32 if floating else flow.int64
    if getattr(input, "is_global", False):
        sbp = [flow.sbp.broadcast] * len(input.sbp)
        classes = flow.arange(num_classes, placement=input.placement, sbp=sbp)
    else:
        classes = flow.arange(num_classes, device=input.device)
    hot = (input.long().unsqueeze(-1) == classes).to(dtype)
    if (on_value, off_value) == (1, 0):
        return hot
    return hot * (on_value - off_value) + off_value


@_export("linear")
def linear(input, weight, bias=None):
    """``input @ weight.T + bias``."""
    return _F().linear(input, weight, bias)


@_export("embedding")
def embedding(weight, indices, padding_idx=None, scale_grad_by_freq=False):
    """Rows of ``weight`` at ``indices`` (OneFlow's argument order: weight first); the
    ``padding_idx`` row gets no gradient."""
    return _F().embedding(
        indices, weight, padding_idx=padding_idx, scale_grad_by_freq=scale_grad_by_freq
    )


@_export("cast")
def cast(x, dtype, pin_memory=False):
    """``x`` converted to ``dtype`` (``x`` itself when it already has it)."""
    y = x.to(dtype)
    return y.pin_memory() if pin_memory and not y.is_pinned() else y


@_export("identity")
def identity(x):
    """A copy of ``x`` (gradient passes through)."""
    return x.clone()


def _autocast_state(x):
    kind = x.device.type if not getattr(x, "is_global", False) else x.placement.type
    if kind not in ("cpu", "cuda") or not flow.amp.is_autocast_enabled(kind):
        return None
    return flow.amp.get_autocast_dtype(kind)


@_export("amp_white_identity")
def amp_white_identity(x):
    """Identity on OneFlow's autocast allow list: inside an autocast block a floating ``x`` is
    cast to the block's lower-precision dtype; outside, a copy of ``x``."""
    fast = _autocast_state(x)
    if fast is not None and x.is_floating_point():
        return x.to(fast) if x.dtype != fast else x.clone()
    return x.clone()


@_export("amp_black_identity")
def amp_black_identity(x):
    """Identity on OneFlow's autocast deny list: inside an autocast block a floating ``x`` is
    cast to float32; outside, a copy of ``x``."""
    if _autocast_state(x) is not None and x.is_floating_point() and x.dtype != flow.float32:
        return x.float()
    return x.clone()


def _softmax_dim(x, dim):
    if dim is not None:
        return dim
    return 0 if x.ndim in (0, 1, 3) else 1


@_export("log_softmax")
def log_softmax(x, dim=None):
    """Log-softmax; ``dim=None`` picks the implicit axis (0 for 0-, 1- and 3-D inputs, else 1)."""
    return _F().log_softmax(x, dim=_softmax_dim(x, dim))


@_export("silu")
def silu(x):
    return _F().silu(x)


@_export("batch_matmul")
def batch_matmul(a, b, transpose_a=False, transpose_b=False, alpha=1.0):
    """Batched ``alpha * op(a) @ op(b)`` of 3-D tensors, ``op`` transposing the last two axes
    when asked."""
    if a.ndim != 3 or b.ndim != 3:
        raise RuntimeError("batch_matmul expects 3-D tensors")
    if transpose_a:
        a = a.transpose(1, 2)
    if transpose_b:
        b = b.transpose(1, 2)
    y = flow.bmm(a, b)
    return y if alpha == 1.0 else y * alpha


# --------------------------------------------------------------------------- losses


@_export("cross_entropy")
def cross_entropy(
    input, target, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0
):
    """PyTorch's cross entropy of logits: class indices or class probabilities as target."""
    if not target.is_floating_point():
        target = target.long()
    return _F().cross_entropy(
        input,
        target,
        weight=weight,
        ignore_index=ignore_index,
        reduction=reduction,
        label_smoothing=label_smoothing,
    )


@_export("nll_loss")
def nll_loss(input, target, weight=None, ignore_index=-100, reduction="mean"):
    """Negative log-likelihood of log-probabilities (PyTorch's semantics)."""
    return _F().nll_loss(
        input, target.long(), weight=weight, ignore_index=ignore_index, reduction=reduction
    )


@_export("sparse_softmax_cross_entropy")
def sparse_softmax_cross_entropy(logits, label, depth=None):
    """Per-example ``-log_softmax(logits)[label]`` over the last axis, shaped as ``label`` (no
    reduction, no ignored index). ``depth`` (older OneFlow's argument) must be the class count."""
    if depth is not None and depth != logits.shape[-1]:
        raise RuntimeError(f"depth {depth} must equal the class axis size {logits.shape[-1]}")
    lp = log_softmax(logits, dim=-1)
    return -lp.gather(-1, label.long().unsqueeze(-1)).squeeze(-1)


@_export("softmax_cross_entropy")
def softmax_cross_entropy(logits, label):
    """Per-example ``-sum(label * log_softmax(logits))`` over the last axis (``label`` holds
    probabilities, shaped as ``logits``)."""
    return -(label * log_softmax(logits, dim=-1)).sum(dim=-1)


@_export("sparse_cross_entropy")
def sparse_cross_entropy(prediction, label, depth):
    """Per-example ``-log(prediction[label])`` over the last axis (``prediction`` holds
    probabilities)."""
    if depth != prediction.shape[-1]:
        raise RuntimeError(f"depth {depth} must equal the class axis size {prediction.shape[-1]}")
    return -flow.log(prediction.gather(-1, label.long().unsqueeze(-1)).squeeze(-1))


@_export("kl_div_loss")
def kl_div_loss(input, target, log_target=False, reduction="mean"):
    """Kullback-Leibler divergence of log-probabilities ``input`` to ``target``: elementwise
    ``exp(t) * (t - x)`` when ``log_target``, else ``t * (log t - x)`` (0 where ``t <= 0``);
    reduction none, sum, mean (over elements) or batchmean (sum over the batch size)."""
    if log_target:
        loss = flow.exp(target) * (target - input)
    else:
        positive = target > 0
        safe = flow.where(positive, target, flow.ones_like(target))
        loss = flow.where(positive, target * (flow.log(safe) - input), flow.zeros_like(input))
    if reduction == "batchmean":
        return loss.sum() / (input.shape[0] if input.ndim else 1)
    return _reduce(loss, reduction)


@_export("l1_loss")
def l1_loss(input, target, reduction="mean"):
    return _reduce((input - target).abs(), reduction)


@_export("smooth_l1_loss")
def smooth_l1_loss(input, target, beta=1.0, reduction="mean"):
    """Huber-like loss: ``0.5 * d**2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 * beta``
    (``beta=0`` is the L1 loss)."""
    d = (input - target).abs()
    if beta == 0.0:
        return _reduce(d, reduction)
    loss = flow.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta)
    return _reduce(loss, reduction)


@_export("binary_cross_entropy_loss")
def binary_cross_entropy_loss(input, target, weight=None, reduction="mean"):
    return _F().binary_cross_entropy(input, target, weight=weight, reduction=reduction)


@_export("binary_cross_entropy_with_logits_loss")
def binary_cross_entropy_with_logits_loss(
    input, target, weight=None, pos_weight=None, reduction="mean"
):
    return _F().binary_cross_entropy_with_logits(
        input, target, weight=weight, pos_weight=pos_weight, reduction=reduction
    )


@_export("in_top_k")
def in_top_k(targets, predictions, k):
    """For each row ``i`` of ``predictions`` ``(N, C)``: whether fewer than ``k`` classes score
    strictly higher than class ``targets[i]`` (bool, shape ``(N,)``)."""
    target_score = predictions.gather(1, targets.long().reshape(-1, 1))
    return (predictions > target_score).sum(dim=1) < k


# --------------------------------------------------------------------------- indexing


def _nd_index(indices):
    k = indices.shape[-1]
    flat = indices.long().reshape(-1, k)
    return k, tuple(flat[:, i] for i in range(k))


@_export("gather_nd")
def gather_nd(params, indices):
    """``indices[..., :]`` indexes the leading ``indices.shape[-1]`` axes of ``params``; the
    result is shaped ``indices.shape[:-1] + params.shape[k:]``."""
    k, index = _nd_index(indices)
    out = params[index]
    return out.reshape(tuple(indices.shape[:-1]) + tuple(params.shape[k:]))


@_export("scatternd", "scatter_nd")
def scatternd(indices, updates, shape):
    """A zero tensor of ``shape`` with ``updates`` scattered to ``indices`` (see ``gather_nd``);
    updates to the same place add up."""
    shape = tuple(shape)
    k, index = _nd_index(indices)
    out = flow.zeros(shape, dtype=updates.dtype, device=updates.device)
    return out.index_put(index, updates.reshape((-1,) + shape[k:]), accumulate=True)


@_export("scatterndlike")
def scatterndlike(like, updates, indices):
    """``scatternd(indices, updates, like.shape)``."""
    return scatternd(indices, updates, like.shape)


@_export("tensor_scatter_nd_update")
def tensor_scatter_nd_update(tensor, indices, updates, inplace=False):
    """``tensor`` with the places at ``indices`` (see ``gather_nd``) replaced by ``updates``."""
    k, index = _nd_index(indices)
    values = updates.reshape((-1,) + tuple(tensor.shape[k:])).to(tensor.dtype)
    if inplace:
        return tensor.index_put_(index, values)
    return tensor.index_put(index, values)


@_export("batch_gather")
def batch_gather(input, indices):
    """Gathers along axis ``indices.ndim - 1`` of ``input``, the leading axes being batch axes
    shared with ``indices``: ``out[b..., j, rest] = input[b..., indices[b..., j], rest]``."""
    axis = indices.ndim - 1
    if tuple(input.shape[:axis]) != tuple(indices.shape[:axis]):
        raise RuntimeError("batch_gather: the batch axes of input and indices differ")
    shape = list(input.shape)
    shape[axis] = indices.shape[axis]
    idx = indices.long().reshape(tuple(indices.shape) + (1,) * (input.ndim - indices.ndim))
    return flow.gather(input, axis, idx.expand(*shape))


@_export("dim_gather")
def dim_gather(input, dim, index, sparse_grad=False):
    """PyTorch's ``gather(input, dim, index)``."""
    return flow.gather(input, dim, index)


@_export("index_select")
def index_select(input, dim, index):
    return flow.index_select(input, dim, index)


@_export("slice_update")
def slice_update(x, update, start, stop, step, *, inplace=False):
    """``x`` with ``x[start[i]:stop[i]:step[i], ...]`` (one slice per axis) replaced by
    ``update``; a copy unless ``inplace``."""
    if not len(start) == len(stop) == len(step) == x.ndim:
        raise RuntimeError("slice_update: start, stop and step need one entry per axis")
    out = x if inplace else x.clone()
    out[tuple(slice(a, b, c) for a, b, c in zip(start, stop, step))] = update
    return out


@_export("broadcast_like")
def broadcast_like(x, like, broadcast_axes=()):
    """``x`` broadcast to ``like``'s shape; ``broadcast_axes`` names the axes of the result that
    ``x`` lacks (``x`` aligned to the right when they are not given)."""
    shape = tuple(like.shape)
    if broadcast_axes and x.ndim < len(shape):
        for a in sorted(_axis(a, len(shape)) for a in broadcast_axes):
            x = x.unsqueeze(a)
    return x.expand(*shape)


@_export("masked_fill")
def masked_fill(x, mask, value):
    """``x`` with ``value`` where ``mask`` (bool or nonzero) is set."""
    return flow.masked_fill(x, _as_bool(mask), value)


@_export("masked_fill_")
def masked_fill_(x, mask, value):
    """In-place ``masked_fill``."""
    return x.masked_fill_(_as_bool(mask), value)


@_export("pad")
def pad(x, pad, mode="constant", value=0):
    """PyTorch's pad: ``pad`` lists (before, after) pairs from the last axis backwards."""
    if mode == "constant":
        return _F().pad(x, list(pad), mode=mode, value=value)
    return _F().pad(x, list(pad), mode=mode)


@_export("interpolate")
def interpolate(
    input,
    size=None,
    scale_factor=None,
    mode="nearest",
    align_corners=None,
    recompute_scale_factor=None,
):
    """``oneflow.nn.functional.interpolate`` (OneFlow's own kernels are ``upsample_*``)."""
    return _F().interpolate(
        input,
        size=size,
        scale_factor=scale_factor,
        mode=mode,
        align_corners=align_corners,
        recompute_scale_factor=recompute_scale_factor,
    )


def _upsample_2d(x, height_scale, width_scale, output_size, data_format, **kw):
    channels_last = data_format == "channels_last"
    if channels_last:
        x = x.permute(0, 3, 1, 2)
    if output_size is not None:
        y = _F().interpolate(x, size=tuple(output_size), **kw)
    else:
        y = _F().interpolate(x, scale_factor=(float(height_scale), float(width_scale)), **kw)
    return y.permute(0, 2, 3, 1) if channels_last else y


@_export("upsample_nearest_2d")
def upsample_nearest_2d(
    x, height_scale=0.0, width_scale=0.0, output_size=None, data_format="channels_first"
):
    """Nearest 2-D upsampling to ``output_size``, or by the given scales."""
    return _upsample_2d(x, height_scale, width_scale, output_size, data_format, mode="nearest")


@_export("upsample_bilinear_2d")
def upsample_bilinear_2d(
    x,
    height_scale=0.0,
    width_scale=0.0,
    align_corners=False,
    output_size=None,
    data_format="channels_first",
):
    """Bilinear 2-D upsampling to ``output_size``, or by the given scales."""
    return _upsample_2d(
        x,
        height_scale,
        width_scale,
        output_size,
        data_format,
        mode="bilinear",
        align_corners=align_corners,
    )


# --------------------------------------------------------------------------- shape and joins


@_export("concat")
def concat(inputs, dim=0):
    return flow.cat(list(inputs), dim=dim)


@_export("stack")
def stack(inputs, dim=0):
    return flow.stack(list(inputs), dim=dim)


@_export("split")
def split(x, split_size_or_sections, dim=0):
    """A tuple of pieces: of size ``split_size_or_sections`` (an int) or of the listed sizes."""
    return tuple(flow.split(x, split_size_or_sections, dim=dim))


@_export("chunk")
def chunk(x, chunks, dim=0):
    return tuple(flow.chunk(x, chunks, dim=dim))


@_export("unbind")
def unbind(x, dim=0):
    return tuple(flow.unbind(x, dim))


@_export("tensor_split")
def tensor_split(input, indices_or_sections, dim=0):
    return tuple(flow.tensor_split(input, indices_or_sections, dim))


@_export("hsplit")
def hsplit(input, indices_or_sections):
    return tuple(flow.hsplit(input, indices_or_sections))


@_export("vsplit")
def vsplit(input, indices_or_sections):
    return tuple(flow.vsplit(input, indices_or_sections))


@_export("expand_dims")
def expand_dims(input, dim):
    return flow.unsqueeze(input, dim)


@_export("swapaxes", "swapdims")
def swapaxes(input, dim0, dim1):
    return input.transpose(dim0, dim1)


@_export("movedim")
def movedim(input, source, destination):
    return flow.movedim(input, source, destination)


def _shape_args(args):
    if len(args) == 1 and not isinstance(args[0], int):
        return tuple(args[0])
    return tuple(args)


@_export("repeat")
def repeat(input, *repeat_shape):
    """``input`` repeated ``repeat_shape`` times per axis (a sequence, or the sizes as
    arguments)."""
    return input.repeat(*_shape_args(repeat_shape))


@_export("tile")
def tile(input, *dims):
    """``input`` tiled ``dims`` times per axis (a sequence, or the counts as arguments)."""
    return flow.tile(input, _shape_args(dims))


@_export("roll")
def roll(x, shifts, dims=None):
    return flow.roll(x, shifts, dims)


@_export("t")
def t(input):
    return flow.t(input)


@_export("tril")
def tril(x, diagonal=0):
    return flow.tril(x, diagonal)


@_export("triu")
def triu(x, diagonal=0):
    return flow.triu(x, diagonal)


@_export("meshgrid")
def meshgrid(tensors, indexing="ij"):
    return tuple(flow.meshgrid(*tensors, indexing=indexing))


@_export("einsum")
def einsum(equation, *operands):
    """``einsum(equation, operands)`` (OneFlow's form, a sequence) or ``einsum(equation, *ops)``."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    return flow.einsum(equation, *operands)


@_export("dot")
def dot(input, other):
    return flow.dot(input, other)


@_export("scatter_add")
def scatter_add(input, dim, index, src):
    """PyTorch's ``scatter_add``; ``src`` may be a scalar."""
    if not isinstance(src, flow.Tensor):
        src = flow.full_like(index, src, dtype=input.dtype)
    return flow.scatter_add(input, dim, index, src)


# --------------------------------------------------------------------------- activations


@_export("glu")
def glu(input, dim=-1):
    return _F().glu(input, dim)


@_export("softplus")
def softplus(x, beta=1.0, threshold=20.0):
    return _F().softplus(x, beta=beta, threshold=threshold)


@_export("leaky_relu")
def leaky_relu(x, alpha=0.01, inplace=False):
    return _F().leaky_relu(x, alpha, inplace)


@_export("elu")
def elu(x, alpha=1.0):
    return _F().elu(x, alpha)


@_export("celu")
def celu(x, *, alpha=1.0, inplace=False):
    return _F().celu(x, alpha, inplace)


@_export("hardtanh")
def hardtanh(x, min_val=-1.0, max_val=1.0):
    return _F().hardtanh(x, min_val, max_val)


@_export("hardswish")
def hardswish(x):
    return _F().hardswish(x)


@_export("hardsigmoid")
def hardsigmoid(input, inplace=False):
    return _F().hardsigmoid(input, inplace)


@_export("hardshrink")
def hardshrink(x, *, lambd=0.5, inplace=False):
    y = _F().hardshrink(x, lambd)
    return x.copy_(y) if inplace else y


@_export("softshrink")
def softshrink(x, *, alpha=0.5, inplace=False):
    """Soft shrinkage with threshold ``alpha`` (OneFlow's name for PyTorch's ``lambd``)."""
    y = _F().softshrink(x, alpha)
    return x.copy_(y) if inplace else y


@_export("threshold")
def threshold(x, *, threshold, value):
    return _F().threshold(x, threshold, value)


@_export("mish")
def mish(x):
    return _F().mish(x)


@_export("selu")
def selu(x):
    return _F().selu(x)


@_export("softsign")
def softsign(x):
    return _F().softsign(x)


@_export("logsigmoid")
def logsigmoid(x):
    return _F().logsigmoid(x)


# --------------------------------------------------------------------------- math


@_export("square")
def square(x):
    return x * x


@_export("negative")
def negative(x):
    return flow.neg(x)


@_export("reciprocal_no_nan")
def reciprocal_no_nan(x):
    """``1 / x``, 0 where ``x`` is 0."""
    zero = x == 0
    return flow.where(zero, flow.zeros_like(x), 1 / flow.where(zero, flow.ones_like(x), x))


@_export("sqrt_square_sum")
def sqrt_square_sum(x):
    """``sqrt(sum(x**2))`` over all elements."""
    return flow.sqrt((x * x).sum())


@_export("clip")
def clip(input, min=None, max=None):
    return flow.clamp(input, min, max)


@_export("clamp_", "clip_")
def clamp_(input, min=None, max=None):
    return input.clamp_(min, max)


def _compare(op):
    def compare(input, other):
        return op(input, other)

    return compare


@_export("equal")
def equal(input, other):
    """Whether ``input`` and ``other`` have the same shape and elements (a Python bool, as
    ``oneflow.equal``; the elementwise form is ``broadcast_equal``)."""
    return flow.equal(input, other)


for _name, _op in {
    "broadcast_equal": lambda a, b: a == b,
    "not_equal": lambda a, b: a != b,
    "greater": lambda a, b: a > b,
    "greater_equal": lambda a, b: a >= b,
    "less": lambda a, b: a < b,
    "less_equal": lambda a, b: a <= b,
}.items():
    _f = _compare(_op)
    _f.__name__ = _f.__qualname__ = _name
    _f.__doc__ = f"Elementwise (broadcasting) ``{_name}``; either side may be a scalar."
    _export(_name)(_f)
del _name, _op, _f


@_export("max")
def max(input, dim=None, keepdim=False, *, other=None):
    """``max(input)``: the largest element; ``max(input, dim, keepdim=False)``: the tuple
    ``(values, indices)``; ``max(input, other)``: the elementwise maximum."""
    if isinstance(dim, flow.Tensor):
        other, dim = dim, None
    if other is not None:
        return flow.maximum(input, other)
    if dim is None:
        return flow.max(input)
    values, indices = flow.max(input, dim, keepdim)
    return values, indices


@_export("min")
def min(input, dim=None, keepdim=False, *, other=None):
    """As ``max`` with the smallest values."""
    if isinstance(dim, flow.Tensor):
        other, dim = dim, None
    if other is not None:
        return flow.minimum(input, other)
    if dim is None:
        return flow.min(input)
    values, indices = flow.min(input, dim, keepdim)
    return values, indices


@_export("median")
def median(input, dim=None, keepdim=False):
    """``median(input)``: the lower median of all elements; with ``dim``, ``(values, indices)``."""
    if dim is None:
        return flow.median(input)
    values, indices = flow.median(input, dim, keepdim)
    return values, indices


@_export("std")
def std(x, dim=None, unbiased=None, keepdim=None):
    """Standard deviation (unbiased unless ``unbiased=False``) over ``dim`` (all axes by
    default)."""
    dims = _axes(dim, x.ndim)
    return flow.std(x, dim=dims, unbiased=unbiased is not False, keepdim=bool(keepdim))


@_export("var")
def var(x, dim=None, unbiased=None, keepdim=None):
    """Variance (unbiased unless ``unbiased=False``) over ``dim`` (all axes by default)."""
    dims = _axes(dim, x.ndim)
    return flow.var(x, dim=dims, unbiased=unbiased is not False, keepdim=bool(keepdim))


@_export("reduce_sum")
def reduce_sum(x, dim=None, keepdim=False, *, dtype=None):
    """Sum over the axes ``dim`` (every axis when None)."""
    return flow.sum(x, dim=_axes(dim, x.ndim), keepdim=keepdim, dtype=dtype)


@_export("reduce_mean")
def reduce_mean(x, dim=None, keepdim=False):
    """Mean over the axes ``dim`` (every axis when None)."""
    return flow.mean(x, dim=_axes(dim, x.ndim), keepdim=keepdim)


@_export("reduce_max")
def reduce_max(x, axis=None, keepdim=False):
    """Largest value over the axes ``axis`` (every axis when None)."""
    return flow.amax(x, dim=_axes(axis, x.ndim), keepdim=keepdim)


@_export("reduce_min")
def reduce_min(x, axis=None, keepdim=False):
    """Smallest value over the axes ``axis`` (every axis when None)."""
    return flow.amin(x, dim=_axes(axis, x.ndim), keepdim=keepdim)


@_export("reduce_prod")
def reduce_prod(x, dim=None, keepdim=False, *, dtype=None):
    """Product over the axes ``dim`` (every axis when None)."""
    y = x if dtype is None else x.to(dtype)
    for d in sorted(_axes(dim, x.ndim), reverse=True):
        y = flow.prod(y, dim=d, keepdim=keepdim)
    return y


@_export("reduce_all")
def reduce_all(x, dim=None, keepdim=False):
    """Whether every element is nonzero over the axes ``dim`` (every axis when None)."""
    return flow.all(x, dim=tuple(_axes(dim, x.ndim)), keepdim=keepdim)


@_export("reduce_any")
def reduce_any(x, dim=None, keepdim=False):
    """Whether any element is nonzero over the axes ``dim`` (every axis when None)."""
    return flow.any(x, dim=tuple(_axes(dim, x.ndim)), keepdim=keepdim)


@_export("top_k")
def top_k(input, k, sorted=True):
    """int32 indices of the ``k`` largest values along the last axis."""
    return flow.topk(input, k, dim=-1, largest=True, sorted=sorted).indices.to(flow.int32)


@_export("arg_sort")
def arg_sort(input, direction):
    """int32 indices sorting the last axis, ``direction`` ``"ASCENDING"`` or ``"DESCENDING"``."""
    if direction not in ("ASCENDING", "DESCENDING"):
        raise ValueError(f"direction must be ASCENDING or DESCENDING, got {direction!r}")
    order = flow.argsort(input, dim=-1, descending=direction == "DESCENDING")
    return order.to(flow.int32)


@_export("cosine_similarity")
def cosine_similarity(x, y, dim=1, eps=1e-8):
    return flow.cosine_similarity(x, y, dim=dim, eps=eps)


@_export("normalize")
def normalize(input, p=2.0, dim=1, eps=1e-12, use_l2_norm_kernel=True):
    """``input / max(norm_p(input, dim), eps)``."""
    return _F().normalize(input, p=p, dim=dim, eps=eps)


@_export("gelu_with_approximate")
def gelu_with_approximate(x, approximate="none"):
    """GELU, exact (``"none"``) or with the tanh approximation (``"tanh"``); OneFlow's
    ``oneflow.gelu``."""
    return _F().gelu(x, approximate=approximate)


# Names newer OneFlow binds in _C and re-exports as oneflow.<name> with PyTorch's signature:
# here they forward to this project's oneflow.<name> (or the Tensor method, for in-place forms).


def _delegate(name, target):
    def fn(*args, **kwargs):
        impl = getattr(flow, target)
        if impl is fn:  # oneflow.<target> taken from _C itself: nothing to forward to
            raise NotImplementedError(f"oneflow.{target} is not implemented")
        return impl(*args, **kwargs)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``oneflow.{target}`` (OneFlow's ``_C.{name}``)."
    _export(name)(fn)


def _delegate_method(name, method):
    def fn(input, *args, **kwargs):
        return getattr(input, method)(*args, **kwargs)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``Tensor.{method}``, in place (OneFlow's ``_C.{name}``)."
    _export(name)(fn)


for _name, _target in {
    "baddbmm": "baddbmm",
    "logaddexp": "logaddexp",
    "quantile": "quantile",
    "repeat_interleave": "repeat_interleave",
    "diag": "diag",
    "addcdiv": "addcdiv",
    "addcmul": "addcmul",
    "frac": "frac",
    "clamp_min": "clamp_min",
    "clamp_max": "clamp_max",
    "reduce_nansum": "nansum",
    "logsumexp": "logsumexp",
    "mm": "mm",
    "matrix_vector_product": "mv",
    "isnan": "isnan",
    "isinf": "isinf",
    "isfinite": "isfinite",
    "inv": "inverse",
    "iinfo": "iinfo",
    "finfo": "finfo",
    "bincount": "bincount",
    "isclose": "isclose",
    "allclose": "allclose",
    "lerp": "lerp",
    "index_add": "index_add",
    "randn_like": "randn_like",
    "randint_like": "randint_like",
    "hstack": "hstack",
    "vstack": "vstack",
    "dstack": "dstack",
    "column_stack": "column_stack",
    "row_stack": "row_stack",
    "atleast_1d": "atleast_1d",
    "atleast_2d": "atleast_2d",
    "atleast_3d": "atleast_3d",
    "hann_window": "hann_window",
}.items():
    _delegate(_name, _target)

for _name, _method in {
    "div_": "div_",
    "floor_": "floor_",
    "ceil_": "ceil_",
    "round_": "round_",
    "frac_": "frac_",
    "sin_": "sin_",
    "erfinv_": "erfinv_",
    "greater_": "gt_",
    "clamp_min_": "clamp_min_",
    "clamp_max_": "clamp_max_",
    "lerp_": "lerp_",
    "index_add_": "index_add_",
    "as_strided_": "as_strided_",
}.items():
    _delegate_method(_name, _method)
del _name, _target, _method


@_export("linalg_cross")
def linalg_cross(input, other, dim=-1):
    """Cross product of 3-vectors along ``dim`` (``oneflow.linalg.cross``)."""
    return flow.linalg.cross(input, other, dim=dim)
