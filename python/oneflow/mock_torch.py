"""oneflow.mock_torch: run a PyTorch script on oneflow without editing its imports.

    from oneflow.mock_torch import enable
    enable()
    import torch  # oneflow; torch.nn is oneflow.nn, ...

enable() maps `torch` and every `torch.<sub>` import to `oneflow` and `oneflow.<sub>` (through
sys.modules for what is imported already and an import hook for the rest) until disable();
PyTorch modules imported before are set aside and come back with disable(). Both also work as
context managers (`with enable(): ...` disables at the end of the block).
lazy=True imports a missing `torch.<sub>` as an empty module instead of raising ImportError;
verbose=True says which it was; extra_dict maps more module names (e.g. {"torchvision":
"flowvision"})."""

import importlib
import importlib.abc
import importlib.machinery
import sys
import types

__all__ = ["enable", "disable", "is_enabled"]

_state = {"on": False, "saved": {}, "aliases": {}, "lazy": False, "verbose": False}


def _target(fullname):
    """The oneflow module name that `fullname` stands for, or None."""
    for alias, real in _state["aliases"].items():
        if fullname == alias or fullname.startswith(alias + "."):
            return real + fullname[len(alias) :]
    return None


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, real):
        self.real = real
        self.spec = None

    def create_module(self, spec):
        try:
            module = importlib.import_module(self.real)
        except ImportError:
            if not _state["lazy"]:
                raise
            if _state["verbose"]:
                print(f"oneflow.mock_torch: {spec.name} is not in oneflow; an empty module")
            module = types.ModuleType(spec.name)
            return module
        self.spec = getattr(module, "__spec__", None)
        return module

    def exec_module(self, module):
        # the import machinery set module.__spec__ to the alias's spec: the module keeps its own
        if self.spec is not None:
            module.__spec__ = self.spec


class _AliasFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        if not _state["on"]:
            return None
        real = _target(fullname)
        if real is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(real), is_package=True)


_FINDER = _AliasFinder()


class enable:
    def __init__(self, lazy=False, verbose=False, extra_dict=None):
        self._previous = dict(_state["aliases"]) if _state["on"] else None
        aliases = {"torch": "oneflow"}
        aliases.update(extra_dict or {})
        _state.update(on=True, aliases=aliases, lazy=bool(lazy), verbose=bool(verbose))
        for name in list(sys.modules):
            if _target(name) is not None and not _is_alias(sys.modules[name], name):
                _state["saved"][name] = sys.modules.pop(name)
        for name, module in list(sys.modules.items()):  # oneflow's loaded modules, at once
            for alias, real in aliases.items():
                if name == real or name.startswith(real + "."):
                    sys.modules.setdefault(alias + name[len(real) :], module)
        if _FINDER not in sys.meta_path:
            sys.meta_path.insert(0, _FINDER)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        disable()
        return False


def _is_alias(module, name):
    real = _target(name)
    return real is not None and getattr(module, "__name__", None) == real


class disable:
    def __init__(self):
        if not _state["on"]:
            return
        for name in list(sys.modules):
            if _target(name) is not None:
                del sys.modules[name]
        sys.modules.update(_state["saved"])
        _state["saved"] = {}
        _state["on"] = False
        if _FINDER in sys.meta_path:
            sys.meta_path.remove(_FINDER)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def is_enabled():
    return _state["on"]
