"""utils.hooks (torch.utils.hooks): RemovableHandle, the handle hook registrations return."""

import itertools
import weakref


class RemovableHandle:
    """Removes its hook from `hooks_dict` (held weakly) on remove() or on leaving a with block."""

    _next_id = itertools.count()

    def __init__(self, hooks_dict, *, extra_dict=None):
        self.hooks_dict_ref = _ref(hooks_dict)
        self.id = next(RemovableHandle._next_id)
        extras = extra_dict if isinstance(extra_dict, list) else [extra_dict]
        self.extra_dict_ref = tuple(_ref(d) for d in extras if d is not None)

    def remove(self):
        for ref in (self.hooks_dict_ref,) + self.extra_dict_ref:
            d = ref()
            if d is not None and self.id in d:
                del d[self.id]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def _ref(d):
    """A weak reference where the dict allows one (OrderedDict), else the dict itself."""
    try:
        return weakref.ref(d)
    except TypeError:
        return lambda: d
