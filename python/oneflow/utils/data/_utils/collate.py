"""torch.utils.data._utils.collate: default_collate and default_convert (the DataLoader's, in
utils/data/dataloader.py), and the extensible form collate(batch, collate_fn_map=...) that
libraries use to collate their own element types: the function registered for an element's
type (or the first base type registered) collates the batch, containers recurse."""

import collections.abc
import copy

import numpy as np

import oneflow
from oneflow._oneflow_internal import Tensor
from oneflow.utils.data.dataloader import default_collate, default_convert

__all__ = [
    "collate",
    "collate_float_fn",
    "collate_int_fn",
    "collate_numpy_array_fn",
    "collate_numpy_scalar_fn",
    "collate_str_fn",
    "collate_tensor_fn",
    "default_collate",
    "default_collate_fn_map",
    "default_convert",
]

default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
)


def collate(batch, *, collate_fn_map=None):
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for kind, fn in collate_fn_map.items():
            if isinstance(elem, kind):
                return fn(batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        return elem_type(
            {k: collate([d[k] for d in batch], collate_fn_map=collate_fn_map) for k in elem}
        )
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return elem_type(*(collate(s, collate_fn_map=collate_fn_map) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        if any(len(e) != len(elem) for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        out = [collate(s, collate_fn_map=collate_fn_map) for s in zip(*batch)]
        if isinstance(elem, tuple):
            return out
        try:
            if isinstance(elem, collections.abc.MutableSequence):
                clone = copy.copy(elem)
                for i, value in enumerate(out):
                    clone[i] = value
                return clone
            return elem_type(out)
        except TypeError:
            return out
    raise TypeError(default_collate_err_msg_format.format(elem_type))


def collate_tensor_fn(batch, *, collate_fn_map=None):
    return default_collate(batch)


def collate_numpy_array_fn(batch, *, collate_fn_map=None):
    if batch[0].dtype.kind in "SaUO":
        raise TypeError(default_collate_err_msg_format.format(batch[0].dtype))
    return default_collate(batch)


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None):
    return oneflow.tensor(np.array(batch))


def collate_float_fn(batch, *, collate_fn_map=None):
    return oneflow.tensor(batch, dtype=oneflow.float64)


def collate_int_fn(batch, *, collate_fn_map=None):
    return oneflow.tensor(batch)


def collate_str_fn(batch, *, collate_fn_map=None):
    return batch


default_collate_fn_map = {
    Tensor: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}
