"""Randomized leaky ReLU and the multi-class margin losses of ``oneflow.nn.functional`` with
PyTorch's signatures, errors and reductions. All are composites of existing kernels, so their
gradients come from those kernels' rules."""

import oneflow
from oneflow._oneflow_internal import _C
from oneflow.framework.autocast_fp32 import fp32 as _fp32
from oneflow.nn._activations_losses import leaky_relu, logsigmoid, one_hot

# ---- rrelu ------------------------------------------------------------------------------


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if not training:
        # PyTorch's eval mode is exactly leaky_relu at the mean slope.
        return leaky_relu(input, (lower + upper) / 2, inplace)
    if not input.is_floating_point():
        raise NotImplementedError(f"rrelu: expected a floating point input, got {input.dtype}")
    noise = oneflow.rand(*input.shape, dtype=input.dtype, device=input.device)
    noise = noise * (upper - lower) + lower
    # As PyTorch, zero counts as negative: it draws a slope too, which is its gradient.
    slope = oneflow.where(input > 0, oneflow.ones_like(noise), noise)
    out = input * slope
    return _C.copy_(input, out) if inplace else out


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    return rrelu(input, lower, upper, training, inplace=True)


# ---- multi-class margin losses ----------------------------------------------------------


def _legacy_reduction(size_average, reduce, reduction):
    """PyTorch's mapping of the deprecated size_average/reduce pair onto `reduction`."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if size_average and reduce:
        return "mean"
    return "sum" if reduce else "none"


def _check_reduction(reduction):
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    return loss.sum() if reduction == "sum" else loss


def _check_vector_or_matrix(input):
    ndim = input.ndim
    if not (
        (ndim == 2 and input.shape[1] != 0) or (ndim == 1 and input.shape[0] != 0) or ndim == 0
    ):
        raise RuntimeError(
            "Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
            f"{list(input.shape)}"
        )


def _check_floating(op, input):
    if not input.is_floating_point():
        raise NotImplementedError(f"{op}: expected a floating point input, got {input.dtype}")


def _check_long_target(target):
    if target.dtype != oneflow.int64:
        raise RuntimeError(f"expected scalar type Long but found {target.dtype}")


@_fp32  # on PyTorch's float32 autocast list
def multi_margin_loss(
    input,
    target,
    p=1,
    margin=1.0,
    weight=None,
    size_average=None,
    reduce=None,
    reduction="mean",
):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.ndim != 1:
        raise ValueError("weight must be one-dimensional")
    _check_vector_or_matrix(input)
    nframe = 1 if input.ndim <= 1 else input.shape[0]
    dim = 1 if input.ndim == 0 else input.shape[-1]
    if target.ndim > 1 or target.numel() != nframe:
        raise RuntimeError(
            "multi_margin_loss: target tensor should be 1-D with size equal to the number of "
            f"input samples (batch size). Expected target size [{nframe}], but got "
            f"{list(target.shape)}. Input size: {list(input.shape)}"
        )
    if weight is not None and weight.numel() != dim:
        raise RuntimeError(f"inconsistent weight size, expected {dim} but got {list(weight.shape)}")
    _check_floating("multi_margin_loss", input)
    _check_long_target(target)
    t = target.reshape(nframe, 1)
    if nframe and bool(((t < 0) | (t >= dim)).any()):
        raise RuntimeError("target out of range")

    x = input.reshape(nframe, dim)
    z = margin - x.gather(1, t) + x
    h = _C.relu(z)
    if p == 2:
        h = h * h
    if weight is not None:
        h = h * weight[t.reshape(-1)].reshape(nframe, 1)
    # The target's own class is not a competitor.
    own = one_hot(t.reshape(-1), dim).bool()
    h = oneflow.where(own, oneflow.zeros_like(h), h)
    loss = (h.sum(dim=1) / dim).reshape(target.shape)
    return _reduce(loss, reduction)


@_fp32  # on PyTorch's float32 autocast list
def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    _check_vector_or_matrix(input)
    if input.ndim <= 1:
        nframe, dim = 1, (1 if input.ndim == 0 else input.shape[0])
        ok = target.ndim <= 1 and target.numel() == dim
    else:
        nframe, dim = input.shape
        ok = target.ndim == 2 and tuple(target.shape) == (nframe, dim)
    if not ok:
        raise RuntimeError(
            f"inconsistent target size: {list(target.shape)} for input of size: {list(input.shape)}"
        )
    _check_floating("multilabel_margin_loss", input)
    _check_long_target(target)
    t = target.reshape(nframe, dim)
    if nframe and bool(((t < -1) | (t >= dim)).any()):
        raise RuntimeError("argument #2 'target' is out of range")

    x = input.reshape(nframe, dim)
    # A row's targets are its entries before the first -1; a repeated target counts twice.
    valid = oneflow.cumprod((t != -1).long(), dim=1).bool()  # (N, K)
    tc = oneflow.where(valid, t, oneflow.zeros_like(t))
    hits = one_hot(tc, dim) * valid.long().unsqueeze(2)  # (N, K, C)
    is_target = hits.sum(dim=1) > 0  # (N, C)
    z = 1.0 - x.gather(1, tc).unsqueeze(2) + x.unsqueeze(1)  # (N, K, C)
    keep = valid.unsqueeze(2) & is_target.logical_not().unsqueeze(1)
    h = oneflow.where(keep, _C.relu(z), oneflow.zeros_like(z))
    loss = h.sum(dim=(1, 2)) / dim
    if input.ndim <= 1:
        loss = loss.reshape(())
    if reduction == "mean" and nframe == 0:
        return loss.sum()  # PyTorch gives 0 for an empty batch, not NaN
    return _reduce(loss, reduction)


def multilabel_soft_margin_loss(
    input, target, weight=None, size_average=None, reduce=None, reduction="mean"
):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.ndim - 1
    loss = loss.sum(dim=class_dim) / input.shape[class_dim]
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not valid")
    return _reduce(loss, reduction)


__all__ = [
    "rrelu",
    "rrelu_",
    "multi_margin_loss",
    "multilabel_margin_loss",
    "multilabel_soft_margin_loss",
]
