"""Tensor.__getitem__ / __setitem__ with PyTorch's semantics.

Basic indices (ints, slices with positive steps, None, Ellipsis) give views. Advanced indices
(integer tensors, lists, NumPy arrays, bool masks) gather into a new tensor: their broadcast
shape takes the place of the indexed dims when those are adjacent, and goes first otherwise.
Writes (__setitem__) go through the view, or scatter into it for advanced indices.
"""

import builtins
import math
import warnings

import numpy as np

import oneflow
from oneflow import _oneflow_internal as _internal
from oneflow._oneflow_internal import _C, Tensor


def _is_int(x):
    if isinstance(x, (builtins.bool, Tensor, np.ndarray)):
        return False
    return isinstance(x, builtins.int) or (
        hasattr(x, "__index__") and not isinstance(x, builtins.float)
    )


def _as_tuple(key):
    """A list key that holds tensors, sequences, slices, Ellipsis or None indexes several dims,
    as a tuple would (PyTorch's and NumPy's rule for short lists)."""
    if isinstance(key, list) and len(key) < 32:
        for it in key:
            if it is None or it is Ellipsis or isinstance(it, (Tensor, list, tuple, slice)):
                return tuple(key)
    return key


def _index_place(x):
    """Where x's index tensors go: x's device, or (placement,) for a global x."""
    return (x.placement,) if x.is_global else x.device


def _index_tensor(it, device):
    if isinstance(it, Tensor):
        t = it
    else:
        arr = np.asarray(it)
        if arr.size == 0:
            arr = arr.astype(np.int64)  # x[[]]: an empty integer index
        if arr.dtype.kind not in "biu":
            raise IndexError(
                "getitem: tensors used as indices must be long, int, byte or bool tensors, "
                f"got {arr.dtype}"
            )
        if arr.dtype.kind in "iu" and arr.dtype != np.uint8:
            arr = arr.astype(np.int64)
        t = _internal.from_numpy(np.require(arr, requirements="C"))
    if t.dtype == _internal.uint8:
        warnings.warn(
            "indexing with dtype uint8 is deprecated, please use a dtype bool instead",
            UserWarning,
            stacklevel=4,
        )
        t = _C.ne(t, 0)
    if isinstance(device, tuple):  # a global tensor's placement: indices are broadcast
        if not t.is_global:
            from oneflow.sbp import broadcast

            t = t.to_global(device[0], broadcast)
        return t
    if t.device != device:
        t = _C.to(t, None, device)
    return t


def _mask_parts(mask, x, start):
    """The int64 index tensors (nonzero) of a bool mask over x's dims from `start`, after
    checking the mask's shape against those dims (IndexError as in PyTorch)."""
    for i, n in enumerate(mask.shape):
        d = start + i
        if d >= x.ndim or x.shape[d] != n:
            raise IndexError(
                f"getitem: the shape of the mask {list(mask.shape)} at index {i} does not match "
                f"the shape of the indexed tensor {list(x.shape)} at index {d}"
            )
    return _C.nonzero(mask)


def _entries(key, x):
    """The key as a list of ("basic", item) and ("adv", int64 tensor) entries, one per dim it
    consumes or adds, with the Ellipsis expanded."""
    items = key if isinstance(key, tuple) else (key,)
    out = []
    ellipsis_at = None
    consumed = 0
    for it in items:
        if it is Ellipsis:
            if ellipsis_at is not None:
                raise IndexError("getitem: an index can only have a single ellipsis ('...')")
            ellipsis_at = len(out)
        elif it is None or isinstance(it, slice) or _is_int(it):
            out.append(("basic", it))
            consumed += it is not None
        elif isinstance(it, (Tensor, list, tuple, np.ndarray)):
            t = _index_tensor(it, _index_place(x))
            if t.dtype == _internal.bool:
                if t.ndim == 0:  # as a Python bool
                    out.append(("bool", bool(t)))
                    continue
                out.append(("mask", t))
                consumed += t.ndim
            else:
                out.append(("adv", t))
                consumed += 1
        elif isinstance(it, builtins.bool):  # a new dim of size 1 (True) or 0 (False)
            out.append(("bool", it))
        else:
            raise IndexError(
                "getitem: only integers, slices, ellipsis, None, and integer or bool "
                f"tensors/lists are valid indices, got {type(it).__name__}"
            )
    if consumed > x.ndim:
        raise IndexError(
            f"getitem: too many indices for tensor of dimension {x.ndim} (got {consumed})"
        )
    kinds = {kind for kind, _ in out}
    if "bool" in kinds and kinds & {"adv", "mask"}:  # PyTorch broadcasts it with those
        raise NotImplementedError(
            "getitem: a bool index together with index tensors or masks is not implemented yet"
        )
    if ellipsis_at is not None:
        out[ellipsis_at:ellipsis_at] = [("basic", slice(None))] * (x.ndim - consumed)
    expanded, d = [], 0
    for kind, it in out:
        if kind == "mask":
            expanded.extend(("adv", p) for p in _mask_parts(it, x, d))
            d += it.ndim
        else:
            expanded.append((kind, it))
            d += kind != "bool" and it is not None
    return expanded


def _clamp64(v):
    """A slice bound as an int64 (Python ints beyond it clamp, as PyTorch)."""
    return None if v is None else max(-(2**63) + 1, min(v.__index__(), 2**63 - 1))


def _basic(t, entries):
    """Applies the basic entries; advanced ones keep their dim (a full slice). Returns the view
    and the dims of the advanced entries in it."""
    d = 0
    adv_dims = []
    for kind, it in entries:
        if kind == "adv":
            adv_dims.append(d)
            d += 1
        elif it is None:
            t = _C.unsqueeze(t, d)
            d += 1
        elif kind == "bool":
            t = _C.unsqueeze(t, d)
            if not it:
                t = _C.slice(t, d, 0, 0, 1)
            d += 1
        elif isinstance(it, slice):
            step = 1 if it.step is None else _clamp64(it.step)
            t = _C.slice(t, d, _clamp64(it.start), _clamp64(it.stop), step)
            d += 1
        else:
            t = _C.select(t, d, it.__index__())
    return t, adv_dims


def _advanced_target(t, adv_dims):
    """The view to index and the first indexed dim: adjacent advanced dims stay in place,
    separated ones move to the front (PyTorch's rule)."""
    if all(b == a + 1 for a, b in zip(adv_dims, adv_dims[1:])):
        return t, adv_dims[0]
    rest = [d for d in range(t.ndim) if d not in adv_dims]
    return _C.permute(t, *(adv_dims + rest)), 0


def _whole_mask(self, key):
    """Whether key is a bool tensor of self's shape on self's device (x[x > 0])."""
    return (
        isinstance(key, Tensor)
        and key.dtype == _internal.bool
        and key.ndim > 0
        and key.shape == self.shape
        and key.device == self.device
    )


def getitem(self, key):
    if type(key) is int:  # x[i], the per-sample read of datasets: straight to select
        return _C.select(self, 0, key)
    if type(key) is tuple and 0 < len(key) <= self.ndim and all(type(k) is int for k in key):
        t = self  # x[i, j]: one select per index
        for d, k in enumerate(key):
            n = self.shape[d]
            if not -n <= k < n:
                raise IndexError(f"index {k} is out of bounds for dimension {d} with size {n}")
            t = _C.select(t, 0, k)
        return t
    key = _as_tuple(key)
    if _whole_mask(self, key):
        return _C.masked_select(self, key)
    entries = _entries(key, self)
    t, adv_dims = _basic(self, entries)
    if not adv_dims:
        return t
    target, dim = _advanced_target(t, adv_dims)
    return _C.index(target, [it for kind, it in entries if kind == "adv"], dim)


def _global_setitem(self, key, value):
    """self[key] = value for a global self: a value that is not global joins as a broadcast
    tensor; a write the shards cannot make alone (along a split dim, by indices) goes into the
    whole value, which is laid out as self again and copied in."""
    if not (isinstance(value, Tensor) and value.is_global):
        if not isinstance(value, Tensor):
            value = _internal.from_numpy(np.array(value))
        value = _C.to(value, self.dtype, value.device).to_global(
            self.placement, [oneflow.sbp.broadcast] * len(self.sbp)
        )
    recorded = oneflow.is_grad_enabled() and (self.requires_grad or value.requires_grad)
    if recorded or _has_mask(key):  # (a mask's positions are found on the host: whole values)
        return _recorded_global_setitem(self, key, value)
    if all(s == oneflow.sbp.broadcast for s in self.sbp):
        return _setitem(self, key, value)
    try:
        return _setitem(self, key, value)
    except NotImplementedError:
        whole = self.to_global(sbp=[oneflow.sbp.broadcast] * len(self.sbp))
        _setitem(whole, key, value)
        _C.copy_(self, whole)


def _has_mask(key):
    keys = key if isinstance(key, tuple) else (key,)
    return any(isinstance(k, Tensor) and k.dtype == _internal.bool for k in keys)


def _whole_key(key):
    """The key with its global index tensors as local whole values (for masks made here)."""

    def whole(k):
        if isinstance(k, Tensor) and k.is_global:
            from oneflow.framework.global_tensor import whole_value

            return whole_value(k)  # on every process, also those its placement leaves out
        return k

    return tuple(whole(k) for k in key) if isinstance(key, tuple) else whole(key)


def _recorded_global_setitem(self, key, value):
    """self[key] = value recorded by autograd on a global self: an in-place write through a view
    of a global tensor is refused, so the write selects from the whole value: the key's region
    (a mask made on the host) takes the value's elements, which a map made by the same write on
    the host places."""
    layout = (self.placement, [oneflow.sbp.broadcast] * len(self.sbp))
    with oneflow.no_grad():
        key = _whole_key(key)
        region = oneflow.zeros(self.shape, dtype=oneflow.bool)
        shape = tuple(getitem(region, key).shape)  # the key's shape, without communicating
        _setitem(region, key, True)
        if value.ndim:  # which element of the value (expanded to the key's shape) lands where
            where_from = oneflow.zeros(self.shape, dtype=_internal.int64)
            _setitem(where_from, key, oneflow.arange(math.prod(shape)).reshape(shape))
    region = region.to_global(*layout)
    if value.ndim:
        while value.ndim > len(shape) and value.shape[0] == 1:  # leading 1s, as assignment
            value = value.squeeze(0)
        value = value.expand(shape).reshape(-1)[where_from.to_global(*layout)]
    _C.copy_(self, oneflow.where(region, value.to(self.dtype), self))


def setitem(self, key, value):
    if self.is_global:
        return _global_setitem(self, key, value)
    return _setitem(self, key, value)


def _setitem(self, key, value):
    key = _as_tuple(key)
    if isinstance(value, complex):  # a 0-dim tensor of self's (complex) dtype
        value = _C.to(_internal.from_numpy(np.array(value)), self.dtype, self.device, copy=True)
    if _whole_mask(self, key) and (
        isinstance(value, (int, float)) or (isinstance(value, Tensor) and value.ndim == 0)
    ):
        if isinstance(value, Tensor):
            value = _C.to(value, self.dtype, self.device)
        _C.copy_(self, _C.where(key, value, self))
        return
    entries = _entries(key, self)
    t, adv_dims = _basic(self, entries)
    if not adv_dims:
        _C.copy_(t, value)
        return
    target, dim = _advanced_target(t, adv_dims)
    _C.index_put_(target, [it for kind, it in entries if kind == "adv"], dim, value)


def index_put_(self, indices, values, accumulate=False):
    """self[indices] = values (or += with accumulate), indices a tuple of index tensors for the
    leading dims."""
    idx = [_index_tensor(i, _index_place(self)) for i in indices]
    if any(t.dtype == _internal.bool for t in idx):
        parts, d = [], 0
        for t in idx:
            if t.dtype == _internal.bool:
                parts.extend(_mask_parts(t, self, d))
                d += t.ndim
            else:
                parts.append(t)
                d += 1
        idx = parts
    return _C.index_put_(self, idx, 0, values, accumulate)


def index_put(self, indices, values, accumulate=False):
    return index_put_(_C.clone(self), indices, values, accumulate)
