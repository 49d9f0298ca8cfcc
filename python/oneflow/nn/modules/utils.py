"""nn.modules.utils (torch.nn.modules.utils): the argument normalisers custom layers import."""

import collections.abc
from itertools import repeat


def _ntuple(n, name="parse"):
    def parse(x):
        if isinstance(x, collections.abc.Iterable) and not isinstance(x, str):
            return tuple(x)
        return tuple(repeat(x, n))

    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t, n):
    """Each element of t repeated n times, in reverse order (padding arguments)."""
    return tuple(x for x in reversed(t) for _ in range(n))


def _list_with_default(out_size, defaults):
    if isinstance(out_size, (int,)):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    return [v if v is not None else d for v, d in zip(out_size, defaults[-len(out_size) :])]


def consume_prefix_in_state_dict_if_present(state_dict, prefix):
    """Strips `prefix` (e.g. "module." of a DataParallel/DDP checkpoint) from the keys of
    `state_dict` that start with it, in place, and from the keys of its _metadata (where the
    prefix without its trailing dot names the wrapped module itself and becomes "")."""
    for key in list(state_dict.keys()):
        if key.startswith(prefix):
            state_dict[key[len(prefix) :]] = state_dict.pop(key)
    metadata = getattr(state_dict, "_metadata", None)
    if metadata is not None:
        for key in list(metadata.keys()):
            if not key:
                continue
            if key.startswith(prefix):
                metadata[key[len(prefix) :]] = metadata.pop(key)
            elif key == prefix.rstrip("."):
                metadata[""] = metadata.pop(key)
