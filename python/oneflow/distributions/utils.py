"""oneflow.distributions.utils: helpers shared by the distributions: parameters computed on
first use (lazy_property), broadcasting a mix of numbers and tensors, and the conversions between
probabilities and logits."""

import numbers

import oneflow

__all__ = [
    "broadcast_all",
    "clamp_probs",
    "lazy_property",
    "logits_to_probs",
    "probs_to_logits",
    "sum_rightmost",
    "tril_matrix_to_vec",
    "vec_to_tril_matrix",
]


class lazy_property:
    """A read-once attribute: computed by the wrapped method on first access (with gradients
    recorded, so it stays differentiable when first read under no_grad) and then stored on the
    instance, replacing this non-data descriptor."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__
        self.__name__ = wrapped.__name__

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        with oneflow.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


def broadcast_all(*values):
    """The values broadcast to one shape, each a tensor: numbers become tensors of the first
    tensor's dtype and device (of the default dtype when all are numbers)."""
    for v in values:
        if not isinstance(v, (oneflow.Tensor, numbers.Number)):
            raise ValueError(
                "Input arguments must all be instances of numbers.Number or oneflow.Tensor, "
                f"got {type(v).__name__}"
            )
    first = next((v for v in values if isinstance(v, oneflow.Tensor)), None)
    if first is None:
        dtype, device = oneflow.get_default_dtype(), None
    else:
        dtype, device = first.dtype, first.device
    tensors = [
        v if isinstance(v, oneflow.Tensor) else oneflow.tensor(v, dtype=dtype, device=device)
        for v in values
    ]
    if len(tensors) == 1:
        return (tensors[0],)
    return tuple(oneflow.broadcast_tensors(*tensors))


def clamp_probs(probs):
    """Probabilities clamped into [eps, 1 - eps] of their dtype, so that their logs are finite."""
    eps = oneflow.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def logits_to_probs(logits, is_binary=False):
    """Probabilities from logits: the sigmoid of log-odds (binary), else the softmax over the
    last dimension."""
    if is_binary:
        return oneflow.sigmoid(logits)
    return oneflow.softmax(logits, dim=-1)


def probs_to_logits(probs, is_binary=False):
    """Logits from probabilities (clamped away from 0 and 1): log-odds when binary, else logs."""
    clamped = clamp_probs(probs)
    if is_binary:
        return oneflow.log(clamped) - oneflow.log1p(-clamped)
    return oneflow.log(clamped)


def sum_rightmost(value, dim):
    """`value` summed over its `dim` rightmost dimensions (returned as is when `dim` is 0)."""
    if dim == 0:
        return value
    return value.reshape(*value.shape[: value.ndim - dim], -1).sum(-1)


def _tril_mask(n, diag, device):
    rows = oneflow.arange(n, device=device).reshape(n, 1)
    cols = oneflow.arange(n, device=device).reshape(1, n)
    return cols - rows <= diag


def tril_matrix_to_vec(mat, diag=0):
    """The entries of the last two (square) dimensions on and below diagonal `diag` (a negative
    `diag` drops diagonals), row by row, as a vector."""
    n = mat.shape[-1]
    if not -n <= diag < n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    mask = _tril_mask(n, diag, mat.device).reshape(-1)
    index = oneflow.nonzero(mask).reshape(-1)
    return mat.reshape(*mat.shape[:-2], n * n).index_select(-1, index)


def _tril_count(n, diag):
    """How many entries of an n x n matrix lie on or below diagonal `diag`."""
    return sum(min(max(r + diag + 1, 0), n) for r in range(n))


def vec_to_tril_matrix(vec, diag=0):
    """The inverse of tril_matrix_to_vec: the square matrices whose entries on and below
    diagonal `diag` are those of `vec` (last dimension), row by row; zeros elsewhere."""
    m = vec.shape[-1]
    n = 0
    while _tril_count(n, diag) < m:
        n += 1
    if _tril_count(n, diag) != m:
        raise ValueError(
            f"The size of last dimension is {m} which cannot be expressed as the lower "
            "triangular part of a square D x D matrix."
        )
    index = oneflow.nonzero(_tril_mask(n, diag, vec.device).reshape(-1)).reshape(-1)
    flat = oneflow.zeros(*vec.shape[:-1], n * n, dtype=vec.dtype, device=vec.device)
    return flat.index_copy(-1, index, vec).reshape(*vec.shape[:-1], n, n)
