"""nn.Module: parameters, buffers and submodules registered by attribute assignment; traversal,
state dicts, train/eval, device and dtype moves, hooks, and PyTorch's repr."""

import itertools
import warnings
from collections import OrderedDict, namedtuple

import numpy as np

import oneflow
from oneflow._oneflow_internal import Tensor
from oneflow.nn.parameter import Parameter

_EXTRA_STATE_KEY = "_extra_state"


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """load_state_dict's result; prints as PyTorch's when every key matched."""

    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


class _RemovableHandle:
    _next_id = itertools.count()

    def __init__(self, registry):
        self._registry = registry
        self.id = next(self._next_id)

    def remove(self):
        self._registry.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class _BackwardHookFunction(oneflow.autograd.Function):
    """Identity on a group of tensors whose backward hands the group's gradients to `on_grads`,
    which may replace them."""

    @staticmethod
    def forward(ctx, on_grads, materialize, *tensors):
        ctx.on_grads = on_grads
        # PyTorch's hooks see None for an output that received no gradient, and zeros for an
        # input that does not require one
        ctx.set_materialize_grads(materialize)
        ctx.mark_non_differentiable(*[t for t in tensors if not t.requires_grad])
        return tensors

    @staticmethod
    def backward(ctx, *grads):
        return (None, None) + tuple(ctx.on_grads(grads))


class _BackwardHook:
    """One module call's full backward hooks: identities on the positional tensor inputs and on
    the outputs, so that hook(module, grad_input, grad_output) sees the gradients w.r.t. the
    inputs and its result only changes what flows on to the inputs."""

    def __init__(self, module, hooks, pre_hooks):
        self.module, self.hooks, self.pre_hooks = module, hooks, pre_hooks
        self.grad_outputs = None
        self.n_inputs, self.input_index = 0, None
        self.n_outputs, self.output_index = 0, None

    @staticmethod
    def _wrap(values, on_grads, materialize):
        index = [i for i, v in enumerate(values) if isinstance(v, Tensor)]
        if not any(values[i].requires_grad for i in index):
            return values, None
        tensors = [values[i] for i in index]
        wrapped = _BackwardHookFunction.apply(on_grads, materialize, *tensors)
        out = list(values)
        for i, t in zip(index, wrapped):
            out[i] = t
        return tuple(out), index

    @staticmethod
    def _pack(index, grads, n):
        out = [None] * n
        for i, g in zip(index, grads):
            out[i] = g
        return tuple(out)

    def setup_input_hook(self, args):
        self.n_inputs = len(args)
        args, self.input_index = self._wrap(tuple(args), self._on_input_grads, True)
        return args

    def setup_output_hook(self, out):
        single = not isinstance(out, tuple)
        values = (out,) if single else out
        self.n_outputs = len(values)
        values, self.output_index = self._wrap(values, self._on_output_grads, False)
        return values[0] if single else values

    def _on_output_grads(self, grads):
        grad_outputs = self._pack(self.output_index, grads, self.n_outputs)
        grad_outputs = self._replaced(
            self.pre_hooks, lambda hook, g: hook(self.module, g), grad_outputs, "pre hook", "output"
        )
        self.grad_outputs = grad_outputs
        if self.input_index is None:
            grad_inputs = (None,) * self.n_inputs
            for hook in self.hooks:
                result = hook(self.module, grad_inputs, grad_outputs)
                if result is not None and not (
                    isinstance(result, tuple) and all(r is None for r in result)
                ):
                    raise RuntimeError(
                        f"{type(self.module).__name__}: a backward hook of a module where no "
                        "input requires grad must return None or None for every gradient"
                    )
            self.grad_outputs = None
        return [grad_outputs[i] for i in self.output_index]

    def _on_input_grads(self, grads):
        index = self.input_index
        if self.grad_outputs is None:
            return grads
        grad_inputs = self._pack(index, grads, self.n_inputs)
        grad_inputs = self._replaced(
            self.hooks,
            lambda hook, g: hook(self.module, g, self.grad_outputs),
            grad_inputs,
            "hook",
            "input",
        )
        self.grad_outputs = None
        return [grad_inputs[i] for i in index]

    def _replaced(self, hooks, call, grads, kind, side):
        """grads after each hook in turn, a hook's non-None result (one gradient per entry)
        replacing them."""
        for hook in hooks:
            result = call(hook, grads)
            if result is None:
                continue
            result = result if isinstance(result, tuple) else (result,)
            if len(result) != len(grads):
                raise RuntimeError(
                    f"{type(self.module).__name__}: backward {kind} returned {len(result)} "
                    f"grad_{side}(s), expected {len(grads)}"
                )
            grads = result
        return grads


def _addindent(s_, numSpaces):
    """`s_` with every nonempty line after the first indented by `numSpaces` spaces (how a
    child's repr is nested in its parent's)."""
    first, sep, rest = s_.partition("\n")
    if not sep:
        return s_
    pad = " " * numSpaces
    return first + "\n" + "\n".join(pad + line if line else line for line in rest.split("\n"))


# Bumped whenever a module's parameters or children are assigned, registered or deleted:
# nn.Graph re-lists a model's members (and traces again for a replaced parameter) only then.
_structure_version = [0]


def _structure_changed():
    _structure_version[0] += 1


# ---- global hooks (nn.modules.module.register_module_*_hook) ----------------------------------
# They run for every module, before the module's own hooks. Module.__call__ tests one name,
# _global_call_hooks, which is True while any forward or backward hook is registered.

_global_forward_pre_hooks = OrderedDict()
_global_forward_hooks = OrderedDict()
_global_forward_hooks_with_kwargs = set()
_global_forward_hooks_always_called = set()
_global_backward_pre_hooks = OrderedDict()
_global_backward_hooks = OrderedDict()
_global_buffer_registration_hooks = OrderedDict()
_global_module_registration_hooks = OrderedDict()
_global_parameter_registration_hooks = OrderedDict()
_global_call_hooks = False


def _refresh_global_call_hooks():
    global _global_call_hooks
    _global_call_hooks = bool(
        _global_forward_pre_hooks
        or _global_forward_hooks
        or _global_backward_pre_hooks
        or _global_backward_hooks
    )


class _GlobalHandle(_RemovableHandle):
    def remove(self):
        super().remove()
        _global_forward_hooks_with_kwargs.discard(self.id)
        _global_forward_hooks_always_called.discard(self.id)
        _refresh_global_call_hooks()


def _add_global(registry, hook):
    handle = _GlobalHandle(registry)
    registry[handle.id] = hook
    _refresh_global_call_hooks()
    return handle


def register_module_forward_pre_hook(hook):
    """hook(module, args) runs before every module's forward, before the module's own pre-hooks;
    it may return new args (a tuple, or one value)."""
    return _add_global(_global_forward_pre_hooks, hook)


def register_module_forward_hook(hook, *, with_kwargs=False, always_call=False):
    """hook(module, args, output) (with_kwargs: hook(module, args, kwargs, output)) runs after
    every module's forward, before the module's own forward hooks; it may return a new output.
    always_call: also when forward raises (with output None)."""
    handle = _add_global(_global_forward_hooks, hook)
    if with_kwargs:
        _global_forward_hooks_with_kwargs.add(handle.id)
    if always_call:
        _global_forward_hooks_always_called.add(handle.id)
    return handle


def register_module_full_backward_pre_hook(hook):
    """hook(module, grad_output) for every module, before the module's own backward pre-hooks
    (see Module.register_full_backward_pre_hook)."""
    return _add_global(_global_backward_pre_hooks, hook)


def register_module_full_backward_hook(hook):
    """hook(module, grad_input, grad_output) for every module, before the module's own backward
    hooks (see Module.register_full_backward_hook)."""
    return _add_global(_global_backward_hooks, hook)


# As Module.register_backward_hook here, the non-full form is the full one.
register_module_backward_hook = register_module_full_backward_hook


def register_module_buffer_registration_hook(hook):
    """hook(module, name, buffer) runs whenever a module registers a buffer; a non-None result
    is registered instead."""
    return _add_global(_global_buffer_registration_hooks, hook)


def register_module_module_registration_hook(hook):
    """hook(module, name, submodule) runs whenever a module registers a child module; a
    non-None result is registered instead."""
    return _add_global(_global_module_registration_hooks, hook)


def register_module_parameter_registration_hook(hook):
    """hook(module, name, param) runs whenever a module registers a parameter; a non-None
    result is registered instead."""
    return _add_global(_global_parameter_registration_hooks, hook)


def _registered(hooks, module, name, value):
    for hook in list(hooks.values()):
        out = hook(module, name, value)
        if out is not None:
            value = out
    return value


class Module:
    """Base class of every layer and model."""

    training: bool
    _version = 1

    def __init__(self, *args, **kwargs):
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got unexpected arguments")
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = OrderedDict()
        d["_buffers"] = OrderedDict()
        d["_non_persistent_buffers"] = set()
        d["_modules"] = OrderedDict()
        d["_forward_hooks"] = OrderedDict()
        d["_forward_pre_hooks"] = OrderedDict()
        d["_backward_hooks"] = OrderedDict()
        d["_backward_pre_hooks"] = OrderedDict()

    def forward(self, *args, **kwargs):
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the "forward" function'
        )

    @property
    def _non_persistent_buffers_set(self):
        """PyTorch's name of the set of buffer names left out of state_dict."""
        return self.__dict__["_non_persistent_buffers"]

    @_non_persistent_buffers_set.setter
    def _non_persistent_buffers_set(self, names):
        self.__dict__["_non_persistent_buffers"] = set(names)

    def __setstate__(self, state):
        """A pickled module's attributes; one pickled by PyTorch (torch.save(model), read with
        weights_only=False) keeps its non-persistent buffer names under another key."""
        state = dict(state)
        if "_non_persistent_buffers_set" in state:
            state["_non_persistent_buffers"] = set(state.pop("_non_persistent_buffers_set"))
        for key, default in (
            ("_parameters", OrderedDict),
            ("_buffers", OrderedDict),
            ("_non_persistent_buffers", set),
            ("_modules", OrderedDict),
            ("_forward_hooks", OrderedDict),
            ("_forward_pre_hooks", OrderedDict),
            ("_backward_hooks", OrderedDict),
            ("_backward_pre_hooks", OrderedDict),
        ):
            if key not in state:
                state[key] = default()
        self.__dict__.update(state)

    # ---- calling and hooks ----

    def __call__(self, *args, **kwargs):
        # Global hooks (register_module_*) run before the module's own of each kind, as PyTorch;
        # without any, the module's own lists are walked as they are.
        with_global = _global_call_hooks
        kw_hooks = self.__dict__.get("_hooks_with_kwargs", ())
        pre = self._forward_pre_hooks.items()
        if with_global:
            pre = [*_global_forward_pre_hooks.items(), *pre]
        for hid, hook in list(pre):
            if hid in kw_hooks:
                result = hook(self, args, kwargs)
                if result is not None:
                    if not (isinstance(result, tuple) and len(result) == 2):
                        raise RuntimeError(
                            "forward pre-hook must return None or a tuple of (new_args, "
                            f"new_kwargs), but got {result}."
                        )
                    args, kwargs = result
                continue
            result = hook(self, args)
            if result is not None:
                args = result if isinstance(result, tuple) else (result,)
        bw_hook = None
        hooks = self._backward_hooks
        pre_hooks = self.__dict__.get("_backward_pre_hooks") or {}
        if with_global:
            hooks = {**_global_backward_hooks, **hooks}
            pre_hooks = {**_global_backward_pre_hooks, **pre_hooks}
        if (hooks or pre_hooks) and oneflow.is_grad_enabled():
            bw_hook = _BackwardHook(self, list(hooks.values()), list(pre_hooks.values()))
            args = bw_hook.setup_input_hook(args)
        try:
            out = self.forward(*args, **kwargs)
        except Exception:
            if with_global:
                self._call_global_always_called_hooks(args)
            self._call_always_called_hooks(args, kwargs, kw_hooks)
            raise
        hooks_after = self._forward_hooks.items()
        if with_global:
            hooks_after = [*_global_forward_hooks.items(), *hooks_after]
        for hid, hook in list(hooks_after):
            if hid in kw_hooks or (with_global and hid in _global_forward_hooks_with_kwargs):
                result = hook(self, args, kwargs, out)
            else:
                result = hook(self, args, out)
            if result is not None:
                out = result
        if bw_hook is not None:
            out = bw_hook.setup_output_hook(out)
        return out

    def _call_global_always_called_hooks(self, args):
        """The global forward hooks registered with always_call=True, after forward raised."""
        for hid, hook in list(_global_forward_hooks.items()):
            if hid not in _global_forward_hooks_always_called:
                continue
            try:
                hook(self, args, None)
            except Exception as e:
                warnings.warn(
                    "global module forward hook with ``always_call=True`` raised an "
                    "exception that was silenced as another error was raised in forward: "
                    f"{e}",
                    stacklevel=4,
                )

    def _call_always_called_hooks(self, args, kwargs, kw_hooks):
        """The forward hooks registered with always_call=True, after forward raised: called with
        output None (an exception of theirs is a warning; forward's is raised), as PyTorch."""
        always = self.__dict__.get("_forward_hooks_always_called")
        if not always:
            return
        for hid, hook in list(self._forward_hooks.items()):
            if hid not in always:
                continue
            try:
                if hid in kw_hooks:
                    hook(self, args, kwargs, None)
                else:
                    hook(self, args, None)
            except Exception as e:
                warnings.warn(
                    "module forward hook with ``always_call=True`` raised an exception that was "
                    f"silenced as another error was raised in forward: {e}",
                    stacklevel=3,
                )

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """hook(module, args) (with_kwargs: hook(module, args, kwargs)) runs before forward;
        it may return new args (with_kwargs: an (args, kwargs) pair)."""
        return self._add_hook(self._forward_pre_hooks, hook, prepend, with_kwargs)

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        """hook(module, args, output) (with_kwargs: hook(module, args, kwargs, output)) runs
        after forward; it may return a new output. always_call: also when forward raises
        (with output None)."""
        handle = self._add_hook(self._forward_hooks, hook, prepend, with_kwargs)
        if always_call:
            self.__dict__.setdefault("_forward_hooks_always_called", set()).add(handle.id)
        return handle

    def _add_hook(self, hooks, hook, prepend, with_kwargs):
        handle = _RemovableHandle(hooks)
        hooks[handle.id] = hook
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        if with_kwargs:
            self.__dict__.setdefault("_hooks_with_kwargs", set()).add(handle.id)
        return handle

    def register_full_backward_hook(self, hook, prepend=False):
        handle = _RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        if prepend:
            self._backward_hooks.move_to_end(handle.id, last=False)
        return handle

    register_backward_hook = register_full_backward_hook

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """hook(module, grad_output) runs before the gradients w.r.t. the inputs are computed; a
        returned tuple replaces grad_output."""
        handle = _RemovableHandle(self._backward_pre_hooks)
        self._backward_pre_hooks[handle.id] = hook
        if prepend:
            self._backward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def compile(self, *args, **kwargs):
        """Compiles this module's forward in place with oneflow.compile (the arguments are
        oneflow.compile's options): calls of the module then run its forward compiled; its
        hooks stay eager. As PyTorch's nn.Module.compile, returns None."""
        from oneflow.framework.compile import CompiledForward

        if args:
            raise TypeError(
                f"compile() takes its options as keyword arguments, got {len(args)} positional"
            )
        self.__dict__["forward"] = CompiledForward(self, kwargs)

    # ---- registration by attribute ----

    def __setattr__(self, name, value):
        d = self.__dict__
        if isinstance(value, (Parameter, Module)) or name in d.get("_parameters", ()):
            _structure_changed()
        elif name in d.get("_modules", ()):
            _structure_changed()
        if isinstance(value, Parameter):
            if "_parameters" not in d:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._drop(name, keep="_parameters")
            # through register_parameter, as PyTorch: tools that patch it (accelerate's
            # init_empty_weights) see every parameter
            self.register_parameter(name, value)
        elif isinstance(value, Module):
            if "_modules" not in d:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._drop(name, keep="_modules")
            if _global_module_registration_hooks:
                value = _registered(_global_module_registration_hooks, self, name, value)
            self._modules[name] = value
        elif (
            isinstance(value, Tensor)
            and getattr(value, "_is_buffer", False)
            and name not in d.get("_parameters", ())
            and name not in d.get("_modules", ())
        ):
            # nn.Buffer(tensor, persistent=...): registered as a buffer (torch.nn.Buffer); over a
            # parameter or child module name the branches below refuse it, and over a plain
            # attribute register_buffer does (as PyTorch).
            if "_buffers" not in d:
                raise AttributeError("cannot assign buffer before Module.__init__() call")
            self.register_buffer(name, value, persistent=value.persistent)
        elif "_parameters" in d and name in self._parameters:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                    "(oneflow.nn.Parameter or None expected)"
                )
            self._parameters[name] = None
        elif "_modules" in d and name in self._modules:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as child module '{name}' "
                    "(oneflow.nn.Module or None expected)"
                )
            if _global_module_registration_hooks:
                value = _registered(_global_module_registration_hooks, self, name, value)
            self._modules[name] = value
        elif "_buffers" in d and name in self._buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                    "(oneflow.Tensor or None expected)"
                )
            if _global_buffer_registration_hooks:
                value = _registered(_global_buffer_registration_hooks, self, name, value)
            self._buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def _drop(self, name, keep=None):
        # The registry that receives the new value keeps the entry, and with it the position.
        self.__dict__.pop(name, None)
        for registry in ("_parameters", "_buffers", "_modules"):
            if registry != keep:
                self.__dict__[registry].pop(name, None)
        self._non_persistent_buffers.discard(name)

    def __getattr__(self, name):
        d = self.__dict__
        for registry in ("_parameters", "_buffers", "_modules"):
            if registry in d and name in d[registry]:
                return d[registry][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        _structure_changed()
        for registry in ("_parameters", "_buffers", "_modules"):
            if name in self.__dict__.get(registry, {}):
                del self.__dict__[registry][name]
                self._non_persistent_buffers.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        return sorted(
            set(super().__dir__()) | set(self._parameters) | set(self._buffers) | set(self._modules)
        )

    def register_parameter(self, name, param):
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if not isinstance(name, str) or not name or "." in name:
            raise KeyError(f'parameter name must be a non-empty string without ".", got {name!r}')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{type(param).__name__}' object to parameter '{name}' "
                "(oneflow.nn.Parameter or None required)"
            )
        _structure_changed()
        if param is not None and _global_parameter_registration_hooks:
            param = _registered(_global_parameter_registration_hooks, self, name, param)
        self._parameters[name] = param

    def register_buffer(self, name, tensor, persistent=True):
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if not isinstance(name, str) or not name or "." in name:
            raise KeyError(f'buffer name must be a non-empty string without ".", got {name!r}')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' "
                "(oneflow.Tensor or None required)"
            )
        if _global_buffer_registration_hooks:
            tensor = _registered(_global_buffer_registration_hooks, self, name, tensor)
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers.discard(name)
        else:
            self._non_persistent_buffers.add(name)

    def register_module(self, name, module):
        self.add_module(name, module)

    def add_module(self, name, module):
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        if not isinstance(name, str) or "." in name or not name:
            raise KeyError(f'module name must be a non-empty string without ".", got {name!r}')
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        _structure_changed()
        if _global_module_registration_hooks:
            module = _registered(_global_module_registration_hooks, self, name, module)
        self._modules[name] = module

    def get_submodule(self, target):
        mod = self
        for part in target.split(".") if target else []:
            if part not in mod._modules:
                raise AttributeError(f"{type(mod).__name__} has no attribute `{part}`")
            mod = mod._modules[part]
        return mod

    def get_buffer(self, target):
        mod_path, _, name = target.rpartition(".")
        mod = self.get_submodule(mod_path)
        if name not in mod._buffers:
            raise AttributeError(f"{type(mod).__name__} has no buffer `{name}`")
        return mod._buffers[name]

    def set_submodule(self, target, module, strict=False):
        """Replaces (or, without strict, adds) the submodule at the dotted path `target`."""
        if not target:
            raise ValueError("Cannot set the submodule without a target name!")
        parent_path, _, name = target.rpartition(".")
        parent = self.get_submodule(parent_path)
        if strict and name not in parent._modules:
            raise AttributeError(f"{type(parent).__name__} has no attribute `{name}`")
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
        setattr(parent, name, module)

    def get_parameter(self, target):
        mod_path, _, name = target.rpartition(".")
        mod = self.get_submodule(mod_path)
        if name not in mod._parameters:
            raise AttributeError(f"{type(mod).__name__} has no parameter `{name}`")
        return mod._parameters[name]

    # ---- traversal ----

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        if memo is None:
            memo = set()
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, sub, remove_duplicate)

    def modules(self, remove_duplicate=True):
        for _, m in self.named_modules(remove_duplicate=remove_duplicate):
            yield m

    def named_children(self):
        seen = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def children(self):
        for _, m in self.named_children():
            yield m

    def _named_members(self, get, prefix, recurse, remove_duplicate=True):
        seen = set()
        modules = (
            self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
            if recurse
            else [(prefix, self)]
        )
        for mod_prefix, module in modules:
            for name, value in get(module):
                if value is None or (remove_duplicate and id(value) in seen):
                    continue
                if remove_duplicate:
                    seen.add(id(value))
                yield mod_prefix + ("." if mod_prefix else "") + name, value

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members(
            lambda m: m._parameters.items(), prefix, recurse, remove_duplicate
        )

    def parameters(self, recurse=True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members(
            lambda m: m._buffers.items(), prefix, recurse, remove_duplicate
        )

    def buffers(self, recurse=True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    # ---- modes, moves, init ----

    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        for p in self.parameters():
            if "_one_embedding" in p.__dict__:
                oneflow.one_embedding._clear_pending(p)
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                if p.grad.grad_fn is not None:
                    p.grad.detach_()
                else:
                    p.grad.requires_grad_(False)
                p.grad.zero_()

    def apply(self, fn):
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def _apply(self, fn):
        for module in self.children():
            module._apply(fn)
        # Parameters keep their objects (an optimizer holding them still sees the model) and
        # take the converted data; their grads likewise. Buffers are replaced.
        for p in self._parameters.values():
            if p is None:
                continue
            with oneflow.no_grad():
                moved = fn(p)
            if moved is not p:
                p.data = moved
            if p.grad is not None:
                with oneflow.no_grad():
                    moved = fn(p.grad)
                if moved is not p.grad:
                    p.grad.data = moved
        for name, b in self._buffers.items():
            if b is not None:
                self._buffers[name] = fn(b)
        return self

    def to(self, *args, **kwargs):
        device, dtype = kwargs.pop("device", None), kwargs.pop("dtype", None)
        kwargs.pop("non_blocking", None)
        memory_format = kwargs.pop("memory_format", None)
        if kwargs:
            raise TypeError(f"Module.to: unexpected keyword arguments {sorted(kwargs)}")
        for a in args:
            if isinstance(a, oneflow.dtype):
                dtype = a
            elif isinstance(a, Tensor):
                device, dtype = a.device, a.dtype
            else:
                device = a
        if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
            raise TypeError(
                f"nn.Module.to only accepts floating point or complex dtypes, but got {dtype}"
            )

        def convert(t):
            floating = t.dtype.is_floating_point or t.dtype.is_complex
            t = t.to(device=device, dtype=dtype if floating else None)
            if memory_format is not None and t.ndim in (4, 5):
                t = t.to(memory_format=memory_format)  # as PyTorch: 4-d and 5-d tensors only
            return t

        return self._apply(convert)

    def cuda(self, device=None):
        return self._apply(lambda t: t.cuda(device))

    def to_empty(self, *, device, recurse=True):
        """Moves the parameters and buffers to `device` as new uninitialised tensors of the same
        shapes and dtypes: how a model built on the meta device gets memory."""
        if not recurse:
            saved = self._modules
            self._modules = OrderedDict()
        try:
            return self._apply(lambda t: oneflow.empty_like(t, device=device))
        finally:
            if not recurse:
                self._modules = saved

    def to_global(self, placement=None, sbp=None):
        """Makes the parameters (keeping their objects) and buffers global tensors on
        `placement` with `sbp`, or with sbp(tensor) when sbp is a function."""

        def convert(t):
            by_tensor = callable(sbp) and not isinstance(sbp, oneflow.sbp.sbp)
            return t.to_global(placement, sbp(t) if by_tensor else sbp)

        return self._apply(convert)

    def cpu(self):
        return self._apply(lambda t: t.cpu())

    def float(self):
        return self._apply(lambda t: t.float() if t.dtype.is_floating_point else t)

    def double(self):
        return self._apply(lambda t: t.double() if t.dtype.is_floating_point else t)

    def half(self):
        return self._apply(lambda t: t.half() if t.dtype.is_floating_point else t)

    def bfloat16(self):
        return self._apply(lambda t: t.bfloat16() if t.dtype.is_floating_point else t)

    def type(self, dst_type):
        """Every parameter and buffer cast to dst_type (a dtype or a type name)."""
        return self._apply(lambda t: t.type(dst_type))

    # ---- state dict ----

    def register_state_dict_pre_hook(self, hook):
        """hook(module, prefix, keep_vars) runs before state_dict() collects this module."""
        hooks = self.__dict__.setdefault("_state_dict_pre_hooks", OrderedDict())
        handle = _RemovableHandle(hooks)
        hooks[handle.id] = hook
        return handle

    def state_dict(self, destination=None, prefix="", keep_vars=False):
        for hook in list(self.__dict__.get("_state_dict_pre_hooks", {}).values()):
            hook(self, prefix, keep_vars)
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        metadata = getattr(destination, "_metadata", None)
        if metadata is not None:
            metadata[prefix[:-1]] = {"version": self._version}
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers:
                destination[prefix + name] = b if keep_vars else b.detach()
        if type(self).get_extra_state is not Module.get_extra_state:
            destination[prefix + _EXTRA_STATE_KEY] = self.get_extra_state()
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination, prefix + name + ".", keep_vars)
        for hook in list(self.__dict__.get("_state_dict_hooks", {}).values()):
            result = hook(self, destination, prefix, {})
            if result is not None:
                destination = result
        return destination

    def get_extra_state(self):
        """State beyond parameters and buffers that state_dict() saves (under
        `_extra_state`) when a subclass overrides this; set_extra_state restores it."""
        raise RuntimeError(
            "Reached a code path in Module.get_extra_state() that should never be called."
        )

    def set_extra_state(self, state):
        raise RuntimeError(
            "Reached a code path in Module.set_extra_state() that should never be called."
        )

    def register_state_dict_post_hook(self, hook):
        """hook(module, state_dict, prefix, local_metadata) runs after state_dict() collected
        this module; a returned dict replaces it."""
        hooks = self.__dict__.setdefault("_state_dict_hooks", OrderedDict())
        handle = _RemovableHandle(hooks)
        hooks[handle.id] = hook
        return handle

    _register_state_dict_hook = register_state_dict_post_hook

    def register_load_state_dict_pre_hook(self, hook):
        """hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs) runs before this module loads its entries."""
        hooks = self.__dict__.setdefault("_load_state_dict_pre_hooks", OrderedDict())
        handle = _RemovableHandle(hooks)
        hooks[handle.id] = hook
        return handle

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        if with_module:
            return self.register_load_state_dict_pre_hook(hook)
        return self.register_load_state_dict_pre_hook(lambda module, *args: hook(*args))

    def register_load_state_dict_post_hook(self, hook):
        """hook(module, incompatible_keys) runs after load_state_dict(); it may edit the
        missing and unexpected key lists in place."""
        hooks = self.__dict__.setdefault("_load_state_dict_post_hooks", OrderedDict())
        handle = _RemovableHandle(hooks)
        hooks[handle.id] = hook
        return handle

    def _load_from_state_dict(
        self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
    ):
        """Copies this module's own parameters and persistent buffers from `state_dict` (keys
        under `prefix`); subclasses override it to upgrade checkpoints of older versions."""
        for hook in list(self.__dict__.get("_load_state_dict_pre_hooks", {}).values()):
            hook(self, state_dict, prefix, local_metadata, strict, missing_keys,
                 unexpected_keys, error_msgs)  # fmt: skip
        local = list(self._parameters.items()) + [
            (n, b) for n, b in self._buffers.items() if n not in self._non_persistent_buffers
        ]
        local = {n: t for n, t in local if t is not None}
        for name, target in local.items():
            key = prefix + name
            if key not in state_dict:
                missing_keys.append(key)
                continue
            value = state_dict[key]
            if isinstance(value, np.ndarray):
                value = oneflow.tensor(value)
            if not isinstance(value, Tensor):
                error_msgs.append(
                    f'While copying the parameter named "{key}", expected a '
                    f"Tensor or NumPy array, got {type(value).__name__}."
                )
                continue
            if tuple(value.shape) != tuple(target.shape):
                error_msgs.append(
                    f"size mismatch for {key}: copying a param with shape "
                    f"{tuple(value.shape)} from checkpoint, the shape in current model is "
                    f"{tuple(target.shape)}."
                )
                continue
            if local_metadata.get("assign_to_params_buffers", False):
                self._assign_loaded(name, target, value)
                continue
            if target.is_meta and not value.is_meta:
                warnings.warn(
                    f"for {key}: copying from a non-meta parameter in the checkpoint to a meta "
                    "parameter in the current model, which is a no-op. (Did you mean to pass "
                    "`assign=True` to assign items in the state dictionary to their "
                    "corresponding key in the module instead of copying them in place?)",
                    stacklevel=3,
                )
            with oneflow.no_grad():
                if target.is_global and not value.is_global:
                    # a whole value read on every rank (oneflow.load): the parameter's layout
                    value = value.to_global(target.placement, oneflow.sbp.broadcast, copy=True)
                    value = value.to_global(sbp=target.sbp)
                elif value.is_global and not target.is_global:
                    from oneflow.framework.global_tensor import whole_value

                    value = whole_value(value)  # on every process
                elif value.is_global and value.placement != target.placement:
                    value = value.to_global(placement=target.placement, sbp=target.sbp)
                target.copy_(value)
        extra = type(self).set_extra_state is not Module.set_extra_state
        if extra:
            key = prefix + _EXTRA_STATE_KEY
            if key in state_dict:
                self.set_extra_state(state_dict[key])
            elif strict:
                missing_keys.append(key)
        if strict:
            for key in state_dict:
                if not key.startswith(prefix):
                    continue
                head, dot, _ = key[len(prefix) :].partition(".")
                if extra and not dot and head == _EXTRA_STATE_KEY:
                    continue
                if (dot and head not in self._modules) or (not dot and head not in local):
                    unexpected_keys.append(key)

    def _assign_loaded(self, name, target, value):
        """load_state_dict(assign=True): `value` itself becomes the parameter or buffer (a
        parameter keeps the module's requires_grad)."""
        _structure_changed()
        if name in self._parameters:
            if isinstance(value, Parameter):
                value.requires_grad_(target.requires_grad)
            else:
                value = Parameter(value, requires_grad=target.requires_grad)
            self._parameters[name] = value
        else:
            self._buffers[name] = value

    def load_state_dict(self, state_dict, strict=True, assign=False):
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)
        missing, unexpected, errors = [], [], []

        # Every path to a shared submodule is walked, as state_dict() writes each of them.
        def load(module, local_state, prefix):
            local_metadata = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
            if assign:
                local_metadata["assign_to_params_buffers"] = True
            module._load_from_state_dict(
                local_state, prefix, local_metadata, True, missing, unexpected, errors
            )
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    child_state = {
                        k: v for k, v in local_state.items() if k.startswith(child_prefix)
                    }
                    load(child, child_state, child_prefix)

        load(self, state_dict, "")
        result = _IncompatibleKeys(missing, unexpected)
        for module in self.modules():
            for hook in list(module.__dict__.get("_load_state_dict_post_hooks", {}).values()):
                hook(module, result)
        if strict:
            if unexpected:
                errors.insert(
                    0,
                    "Unexpected key(s) in state_dict: "
                    + ", ".join(f'"{k}"' for k in unexpected)
                    + ". ",
                )
            if missing:
                errors.insert(
                    0,
                    "Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ". ",
                )
        if errors:
            raise RuntimeError(
                f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                + "\n\t".join(errors)
            )
        return result

    # ---- repr ----

    def extra_repr(self):
        return ""

    def _get_name(self):
        return type(self).__name__

    def __repr__(self):
        lines = []
        extra = self.extra_repr()
        if extra:
            lines = extra.split("\n")
        for name, module in self._modules.items():
            mod = repr(module).replace("\n", "\n  ")
            lines.append(f"({name}): {mod}")
        main = self._get_name() + "("
        if lines:
            if len(lines) == 1 and not self._modules:
                main += lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"
