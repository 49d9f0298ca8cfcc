"""patch() of the settings modules oneflow._dynamo.config and oneflow._inductor.config, as
PyTorch's config modules have it: ``config.patch(name=value)``, ``config.patch("name", value)``
or ``config.patch({"name": value})`` (dotted names reach the nested groups, "triton.cudagraphs")
is a context manager and decorator that sets the settings on entry and restores them on exit.
A name that is not a setting raises AttributeError on entry."""

import contextlib
import types


class Settings(types.SimpleNamespace):
    """A nested group of settings (config.triton, config.cpp, ...)."""


def _is_setting(value):
    return not (callable(value) and not isinstance(value, Settings)) and not isinstance(
        value, types.ModuleType
    )


def _resolve(module, name):
    """(owner object, attribute name) of a possibly dotted setting name."""
    *path, leaf = name.split(".")
    owner = module
    for part in path:
        owner = getattr(owner, part, None)
        if not isinstance(owner, Settings):
            raise AttributeError(f"{module.__name__}.{name} does not exist")
    if leaf.startswith("_") or not hasattr(owner, leaf) or not _is_setting(getattr(owner, leaf)):
        raise AttributeError(f"{module.__name__}.{name} does not exist")
    return owner, leaf


class ConfigPatch(contextlib.ContextDecorator):
    def __init__(self, module, changes):
        self.module, self.changes, self.saved = module, changes, []

    def __enter__(self):
        targets = [(_resolve(self.module, name), value) for name, value in self.changes.items()]
        saved = []
        for (owner, leaf), value in targets:
            saved.append((owner, leaf, getattr(owner, leaf)))
            setattr(owner, leaf, value)
        self.saved.append(saved)
        return self

    def __exit__(self, *exc):
        for owner, leaf, value in reversed(self.saved.pop()):
            setattr(owner, leaf, value)
        return False


def patch(module, arg1=None, arg2=None, **kwargs):
    if isinstance(arg1, str):
        changes = {arg1: arg2}
    elif isinstance(arg1, dict):
        if arg2 is not None:
            raise TypeError("patch: a dict of changes takes no second argument")
        changes = dict(arg1)
    elif arg1 is None:
        if arg2 is not None:
            raise TypeError("patch: a value was given without a name")
        changes = {}
    else:
        raise TypeError(f"patch: expected a name or a dict, got {type(arg1).__name__}")
    changes.update(kwargs)
    return ConfigPatch(module, changes)
