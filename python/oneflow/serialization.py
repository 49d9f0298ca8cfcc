"""torch.serialization: save and load, and the allowlist of classes weights_only=True loads from
PyTorch's pickled checkpoints (add_safe_globals, get_safe_globals, clear_safe_globals, and the
safe_globals context manager)."""

import contextlib

from oneflow.framework.serialization import load, save  # noqa: F401
from oneflow.framework.torch_format import (  # noqa: F401
    _SAFE_GLOBALS,
    add_safe_globals,
    clear_safe_globals,
    get_safe_globals,
)

DEFAULT_PROTOCOL = 2


@contextlib.contextmanager
def safe_globals(objects):
    """add_safe_globals(objects) for the duration of the block."""
    before = dict(_SAFE_GLOBALS)
    add_safe_globals(objects)
    try:
        yield
    finally:
        _SAFE_GLOBALS.clear()
        _SAFE_GLOBALS.update(before)
