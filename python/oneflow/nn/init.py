"""oneflow.nn.init: in-place initialisers (PyTorch's formulas and defaults)."""

import math
import warnings

import numpy as np

import oneflow


def calculate_gain(nonlinearity, param=None):
    linear = [
        "linear",
        "conv1d",
        "conv2d",
        "conv3d",
        "conv_transpose1d",
        "conv_transpose2d",
        "conv_transpose3d",
        "sigmoid",
    ]
    if nonlinearity in linear:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        if not isinstance(slope, (int, float)) or isinstance(slope, bool):
            raise ValueError(f"negative_slope {slope} not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    if tensor.ndim < 2:
        raise ValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions"
        )
    receptive = 1
    for s in tensor.shape[2:]:
        receptive *= s
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _fan(tensor, mode):
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


_calculate_correct_fan = _fan  # PyTorch's private name, which initialisers in the wild import


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    with oneflow.no_grad():
        return tensor.uniform_(a, b)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    with oneflow.no_grad():
        return tensor.normal_(mean, std)


def constant_(tensor, val):
    with oneflow.no_grad():
        return tensor.fill_(val)


def ones_(tensor):
    return constant_(tensor, 1.0)


def zeros_(tensor):
    return constant_(tensor, 0.0)


def eye_(tensor):
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with oneflow.no_grad():
        return tensor.copy_(oneflow.eye(*tensor.shape, dtype=tensor.dtype))


def dirac_(tensor, groups=1):
    nd = tensor.ndim
    if nd not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    if tensor.shape[0] % groups != 0:
        raise ValueError(
            f"dirac_: dim 0 must be divisible by groups, got size {tensor.shape[0]} and "
            f"groups={groups}"
        )
    out_per_group = tensor.shape[0] // groups
    min_dim = min(out_per_group, tensor.shape[1])
    w = np.zeros(tuple(tensor.shape))
    for g in range(groups):
        for d in range(min_dim):
            w[(g * out_per_group + d, d) + tuple(s // 2 for s in tensor.shape[2:])] = 1
    with oneflow.no_grad():
        return tensor.copy_(oneflow.tensor(w, dtype=tensor.dtype))


def xavier_uniform_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    a = gain * math.sqrt(6.0 / float(fan_in + fan_out))
    return uniform_(tensor, -a, a)


def xavier_normal_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)))


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    if 0 in tuple(tensor.shape):
        return tensor
    bound = math.sqrt(3.0) * calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))
    return uniform_(tensor, -bound, bound)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    if 0 in tuple(tensor.shape):
        return tensor
    return normal_(tensor, 0.0, calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode)))


def _no_grad_trunc_normal_(tensor, mean, std, a, b, generator=None):
    """Fills `tensor` in place with Normal(mean, std) truncated to [a, b], by inverse-CDF
    sampling, outside autograd; warns when the mean is more than 2 std outside [a, b]."""

    def cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn(
            "mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
            "The distribution of values may be incorrect.",
            stacklevel=2,
        )
    lo, hi = cdf((a - mean) / std), cdf((b - mean) / std)
    with oneflow.no_grad():
        tensor.uniform_(2 * lo - 1, 2 * hi - 1, generator=generator)
        tensor.copy_(oneflow.erfinv(tensor) * (std * math.sqrt(2.0)) + mean)
        return tensor.clamp_(min=a, max=b)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Normal(mean, std) truncated to [a, b], by inverse-CDF sampling."""
    return _no_grad_trunc_normal_(tensor, mean, std, a, b, generator=generator)


def orthogonal_(tensor, gain=1, generator=None):
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flat = oneflow.randn(rows, cols).numpy().astype(np.float64)
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q *= np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    with oneflow.no_grad():
        return tensor.copy_(
            oneflow.tensor(q.reshape(tuple(tensor.shape)) * gain, dtype=tensor.dtype)
        )


def sparse_(tensor, sparsity, std=0.01, generator=None):
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    zeros = int(math.ceil(sparsity * rows))
    with oneflow.no_grad():
        tensor.normal_(0, std)
        for c in range(cols):
            idx = oneflow.randperm(rows)[:zeros]
            tensor[idx, c] = 0
    return tensor


# Names without the trailing underscore, kept by OneFlow and older PyTorch code.
uniform = uniform_
normal = normal_
constant = constant_
xavier_uniform = xavier_uniform_
xavier_normal = xavier_normal_
kaiming_uniform = kaiming_uniform_
kaiming_normal = kaiming_normal_
orthogonal = orthogonal_
from oneflow.nn._extra2_init import *  # noqa: E402,F401,F403
