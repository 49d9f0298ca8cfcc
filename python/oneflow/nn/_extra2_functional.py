"""Local response norm, power-average pooling, embedding bags, the triplet loss with a custom
distance, pdist, channel shuffle, feature alpha dropout and the `*_with_indices` pooling forms
of ``oneflow.nn.functional``, with PyTorch's signatures and errors. All are composites of
existing kernels, so their gradients come from those kernels' rules."""

import math
import warnings

import numpy as np

import oneflow
from oneflow._oneflow_internal import _C
from oneflow.nn._activations_losses import (
    _SELU_ALPHA,
    _SELU_SCALE,
    _dropout_trivial,
    _maybe_inplace,
    _source,
    embedding,
    pairwise_distance,
)
from oneflow.nn._conv_pool import (
    adaptive_max_pool1d,
    adaptive_max_pool2d,
    adaptive_max_pool3d,
    avg_pool1d,
    avg_pool2d,
    avg_pool3d,
    max_pool1d,
    max_pool2d,
    max_pool3d,
)
from oneflow.nn._spatial import pad

__all__ = [
    "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d_with_indices",
    "adaptive_max_pool3d_with_indices",
    "channel_shuffle",
    "conv_tbc",
    "native_channel_shuffle",
    "embedding_bag",
    "feature_alpha_dropout",
    "local_response_norm",
    "lp_pool1d",
    "lp_pool2d",
    "lp_pool3d",
    "max_pool1d_with_indices",
    "max_pool2d_with_indices",
    "max_pool3d_with_indices",
    "pdist",
    "triplet_margin_with_distance_loss",
]

# ---- normalisation ----------------------------------------------------------------------


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    dim = input.ndim
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {dim} dimensions)")
    if input.numel() == 0:
        return input
    # The sum of squares over `size` neighbouring channels is an average pool along the
    # channel axis, zero-padded so that every channel has a full window (PyTorch's recipe).
    div = _C.mul(input, input)
    if dim == 3:
        div = pad(div.unsqueeze(1), (0, 0, size // 2, (size - 1) // 2))
        div = avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        sizes = tuple(input.shape)
        div = div.reshape(sizes[0], 1, sizes[1], sizes[2], -1)
        div = pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = avg_pool3d(div, (size, 1, 1), stride=1).squeeze(1).reshape(sizes)
    return _C.div(input, _C.pow(_C.add(_C.mul(div, alpha), k), beta))


# ---- pooling ----------------------------------------------------------------------------


def _lp_pool(max_pool, avg_pool, window, input, norm_type, kernel_size, stride, ceil_mode):
    if isinstance(norm_type, (int, float)):
        if norm_type == float("inf"):
            return max_pool(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
        if norm_type == -float("inf"):
            return -max_pool(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    out = avg_pool(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    # sign * relu(|out|) keeps the sign and gives a zero gradient at zero, as PyTorch does.
    out = _C.mul(_C.sign(out), _C.relu(_C.abs(out)))
    return _C.mul(out, float(window)).pow(1.0 / norm_type)


def _window(kernel_size, n):
    sizes = kernel_size if isinstance(kernel_size, (list, tuple)) else (kernel_size,) * n
    return math.prod(sizes)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    window = _window(kernel_size, 1)
    return _lp_pool(
        max_pool1d, avg_pool1d, window, input, norm_type, kernel_size, stride, ceil_mode
    )


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    window = _window(kernel_size, 2)
    return _lp_pool(
        max_pool2d, avg_pool2d, window, input, norm_type, kernel_size, stride, ceil_mode
    )


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    window = _window(kernel_size, 3)
    return _lp_pool(
        max_pool3d, avg_pool3d, window, input, norm_type, kernel_size, stride, ceil_mode
    )


def max_pool1d_with_indices(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool3d_with_indices(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    return adaptive_max_pool2d(input, output_size, True)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    return adaptive_max_pool3d(input, output_size, True)


# ---- embedding bags ---------------------------------------------------------------------


_SEGMENT_DTYPES = (oneflow.float32, oneflow.float64)


def _bag_bounds(offsets, num_indices, include_last_offset):
    """Host-side (starts, ends) of each bag, with PyTorch's checks on the offsets."""
    off = offsets.numpy().astype(np.int64)
    if off.size and off[0] != 0:
        raise RuntimeError(
            "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start "
            f"from position 0. However, got {off[0]}"
        )
    if off.size and off[-1] > num_indices:
        raise RuntimeError(
            f"offsets[-1] can not be greater than input's length {num_indices} but got "
            f"offsets[-1] of {off[-1]}"
        )
    if np.any(np.diff(off) < 0):
        raise RuntimeError(f"embedding_bag: offsets must be non-decreasing, got {off.tolist()}")
    if include_last_offset:
        return off[:-1], off[1:]
    return off, np.append(off[1:], num_indices)


def embedding_bag(
    input,
    weight,
    offsets=None,
    max_norm=None,
    norm_type=2,
    scale_grad_by_freq=False,
    mode="mean",
    sparse=False,
    per_sample_weights=None,
    include_last_offset=False,
    padding_idx=None,
):
    if weight.dtype == oneflow.int64 and input.is_floating_point():
        warnings.warn(
            "Argument order of nn.functional.embedding_bag was changed. Usage "
            "`embedding_bag(weight, input, ...)` is deprecated, and should now be "
            "`embedding_bag(input, weight, ...)`.",
            stacklevel=2,
        )
        weight, input = input, weight
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(
            f"embedding_bag: If per_sample_weights ({tuple(per_sample_weights.shape)}) is not "
            f"None, then it must have the same shape as the input ({tuple(input.shape)})"
        )
    if weight.ndim != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.ndim}")
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError(
                "if input is 2D, then offsets has to be None, as input is treated is a "
                "mini-batch of fixed length sequences. However, found offsets of type "
                f"{type(offsets)}"
            )
        from oneflow.framework.global_tensor import constant_like

        offsets = oneflow.arange(0, input.numel(), input.shape[1], device=input.device)
        offsets = constant_like(input, offsets)
        include_last_offset = False
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.ndim == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.ndim != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(
            f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim}"
        )
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    for name, t in (("indices", input), ("offsets", offsets)):
        if t.dtype not in (oneflow.int64, oneflow.int32):
            raise RuntimeError(
                f"Expected tensor for argument '{name}' to have one of the following scalar "
                f"types: Long, Int; but got {t.dtype} instead"
            )
    n = weight.shape[0]
    if padding_idx is not None:
        if not -n <= padding_idx < n:
            raise RuntimeError(
                "padding_idx must be within the number of embeddings, "
                f"{-n} through {n - 1}, but got {padding_idx}"
            )
        padding_idx %= n
    if weight.is_meta or input.is_meta:  # no indices to read: the bags' shape alone
        bags = offsets.shape[0] - (1 if include_last_offset else 0)
        return oneflow.empty(bags, weight.shape[1], dtype=weight.dtype, device="meta")
    idx = input.numpy().astype(np.int64)
    bad = np.flatnonzero((idx < 0) | (idx >= n))
    if bad.size:
        raise RuntimeError(
            f"Index {bad[0]} of input takes value {idx[bad[0]]} which is not in the valid "
            f"range [0, {n})"
        )
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            "embedding_bag: per_sample_weights was not None. per_sample_weights is only "
            f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
            "GitHub."
        )
    if per_sample_weights is not None and per_sample_weights.dtype != weight.dtype:
        raise RuntimeError(
            f"embedding_bag: expected per_sample_weights of dtype {weight.dtype}, got "
            f"{per_sample_weights.dtype}"
        )
    starts, ends = _bag_bounds(offsets, idx.size, include_last_offset)
    bags, dim = len(starts), weight.shape[1]
    # Which bag each index falls in; indices past the last bag and padding entries are left
    # out of every reduction (and out of a mean's count).
    # (The bags tile [0, ends[-1]): position i is in the bag of the first end above it.)
    bag_of = np.searchsorted(ends, np.arange(idx.size), side="right")
    bag_of[bag_of >= bags] = -1
    keep = bag_of >= 0
    if padding_idx is not None:
        keep &= idx != padding_idx
    from oneflow.framework.global_tensor import constant_like

    pos = oneflow.tensor(np.flatnonzero(keep), dtype=oneflow.int64, device=weight.device)
    bag = oneflow.tensor(bag_of[keep], dtype=oneflow.int64, device=weight.device)
    pos, bag = constant_like(weight, pos), constant_like(weight, bag)
    counts = np.bincount(bag_of[keep], minlength=bags)

    if mode == "max" and max_norm is None and weight.dtype in _SEGMENT_DTYPES and _on_cpu(weight):
        # one pass over the weight's rows, grouped by bag: the first maximum of each bag and
        # column takes the gradient, as in PyTorch; an empty bag is zeros
        rows_of = oneflow.tensor(idx[keep], dtype=oneflow.int64)
        return _C._segment_max(weight, bag, bags, rows_of)
    # The renorm (max_norm) and the frequency scaling are those of embedding.
    rows = embedding(input, weight, None, max_norm, norm_type, scale_grad_by_freq)
    rows = oneflow.index_select(rows, 0, pos)
    out = constant_like(weight, oneflow.zeros(bags, dim, dtype=weight.dtype, device=weight.device))
    if mode == "max":
        if rows.dtype in _SEGMENT_DTYPES and _on_cpu(rows):
            # one pass over the rows, grouped by bag: the first maximum of each bag and column
            # takes the gradient, as in PyTorch; an empty bag is zeros
            return _C._segment_max(rows, bag, bags)
        # Elsewhere a scatter-max into zeros that ignores them. Its gradient reaches the maximal
        # entries; a tie between two entries of one bag (the same index twice) splits it, and
        # both add to the same row.
        index = bag.unsqueeze(1).expand(bag.shape[0], dim)
        return out.scatter_reduce(0, index, rows, "amax", include_self=False)
    if per_sample_weights is not None:
        psw = oneflow.index_select(per_sample_weights.reshape(-1), 0, pos)
        rows = _C.mul(rows, psw.unsqueeze(-1))
    out = out.index_add(0, bag, rows)
    if mode == "mean":
        scale = oneflow.tensor(
            1.0 / np.maximum(counts, 1), dtype=weight.dtype, device=weight.device
        ).unsqueeze(-1)
        scale = constant_like(weight, scale)
        out = _C.mul(out, scale)
    return out


# ---- distances and losses ---------------------------------------------------------------


def _on_cpu(t):
    """Whether t is a local CPU tensor (what the one-pass CPU kernels take)."""
    return not t.is_global and t.device.type == "cpu"


def pdist(input, p=2):
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if not input.is_floating_point():
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    if input.dtype in (oneflow.float32, oneflow.float64) and _on_cpu(input):
        return _C._pdist(input, float(p))
    # Row pairs i < j in row-major order: PyTorch's layout of the condensed distance matrix.
    from oneflow.framework.global_tensor import constant_like

    i, j = oneflow.triu_indices(input.shape[0], input.shape[0], 1, device=input.device)
    i, j = constant_like(input, i), constant_like(input, j)
    diff = _C.sub(oneflow.index_select(input, 0, i), oneflow.index_select(input, 0, j))
    return oneflow.linalg.vector_norm(diff, p, 1)


def triplet_margin_with_distance_loss(
    anchor, positive, negative, *, distance_function=None, margin=1.0, swap=False, reduction="mean"
):
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    a_dim, p_dim, n_dim = anchor.ndim, positive.ndim, negative.ndim
    if not (a_dim == p_dim and p_dim == n_dim):
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number "
            f"of dimensions, but got: anchor {a_dim}D, positive {p_dim}D, and negative {n_dim}D "
            "inputs"
        )
    if distance_function is None:
        distance_function = pairwise_distance
    dist_pos = distance_function(anchor, positive)
    dist_neg = distance_function(anchor, negative)
    if swap:
        dist_neg = _C.minimum(dist_neg, distance_function(positive, negative))
    loss = oneflow.clamp_min(_C.sub(_C.add(dist_pos, margin), dist_neg), 0)
    if reduction == "sum":
        return _C.sum(loss)
    return _C.mean(loss) if reduction == "mean" else loss


# ---- shuffling and dropout --------------------------------------------------------------


def channel_shuffle(input, groups):
    if input.ndim <= 2:
        raise RuntimeError(
            f"channel_shuffle expects input with > 2 dims, but got input with sizes "
            f"{list(input.shape)}"
        )
    if groups <= 0:
        raise RuntimeError(
            f"Number of groups to divide channels in must be positive. Value of groups:{groups}"
        )
    c = input.shape[1]
    if c % groups != 0:
        raise RuntimeError(
            f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups."
        )
    n, rest = input.shape[0], tuple(input.shape[2:])
    out = input.reshape(n, groups, c // groups, *rest).transpose(1, 2)
    return out.reshape(n, c, *rest)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    out = _dropout_trivial("feature_alpha_dropout", input, p, training, inplace)
    if out is not None:
        return out
    if input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    # One draw per (sample, channel), broadcast over the spatial axes; the affine correction
    # is alpha_dropout's.
    shape = list(input.shape[:2]) + [1] * (input.ndim - 2)
    keep = _C.bernoulli(oneflow.full(shape, 1.0 - p, dtype=input.dtype, device=input.device))
    alpha = _SELU_ALPHA * _SELU_SCALE
    a = 1.0 / math.sqrt((alpha * alpha * p + 1) * (1 - p))
    b = _C.add(_C.mul(_C.sub(keep, 1.0), alpha * a), alpha * a * p)
    return _maybe_inplace(
        input, _C.add(_C.mul(_source(input, inplace), _C.mul(keep, a)), b), inplace
    )


def native_channel_shuffle(input, groups):
    """channel_shuffle under its other name (PyTorch's native_channel_shuffle)."""
    return channel_shuffle(input, groups)


def conv_tbc(input, weight, bias, pad=0):
    """A 1-d convolution over time-major input (T, B, C_in) with weight (k, C_in, C_out) and
    bias (C_out), `pad` zeros at both ends of time: (T + 2 pad - k + 1, B, C_out)."""
    if input.ndim != 3 or weight.ndim != 3 or bias.ndim != 1:
        raise RuntimeError(
            "conv_tbc: expected a 3-D input (time, batch, channels), a 3-D weight "
            f"(kernel, in, out) and a 1-D bias, got {input.ndim}-D, {weight.ndim}-D and "
            f"{bias.ndim}-D"
        )
    if input.shape[2] != weight.shape[1] or weight.shape[2] != bias.shape[0]:
        raise RuntimeError(
            f"conv_tbc: input channels {input.shape[2]}, weight {tuple(weight.shape)} and bias "
            f"{tuple(bias.shape)} do not match"
        )
    out = oneflow.nn.functional.conv1d(
        input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, padding=pad
    )
    return out.permute(2, 0, 1)
