"""oneflow.nn.utils.stateless: calling a module with other tensors in place of its parameters
and buffers (PyTorch's torch.nn.utils.stateless / torch.func.functional_call)."""

import contextlib

__all__ = ["functional_call"]


def _owner(module, name):
    *path, leaf = name.split(".")
    for part in path:
        module = getattr(module, part)
    return module, leaf


def _registry(module, leaf):
    for registry in ("_parameters", "_buffers"):
        if leaf in module.__dict__.get(registry, {}):
            return registry
    return None


@contextlib.contextmanager
def _reparametrize(module, tensors, tie_weights=True, strict=False):
    names = {n for n, _ in module.named_parameters(remove_duplicate=False)}
    names |= {n for n, _ in module.named_buffers(remove_duplicate=False)}
    if strict:
        missing = sorted(names - set(tensors))
        unexpected = sorted(set(tensors) - names)
        if missing or unexpected:
            parts = []
            if unexpected:
                parts.append("Unexpected key(s): " + ", ".join(repr(k) for k in unexpected))
            if missing:
                parts.append("Missing key(s): " + ", ".join(repr(k) for k in missing))
            raise RuntimeError(
                f"Error(s) in reparametrizing for {type(module).__name__}:\n\t" + "\n\t".join(parts)
            )
    given = dict(tensors)
    if tie_weights:
        # a tensor reachable under several names (shared weights) is replaced under all of them
        by_id = {}
        for name, t in list(module.named_parameters(remove_duplicate=False)) + list(
            module.named_buffers(remove_duplicate=False)
        ):
            by_id.setdefault(id(t), []).append(name)
        for group in by_id.values():
            values = {n: given[n] for n in group if n in given}
            if len(values) > 1 and len({id(v) for v in values.values()}) > 1:
                raise ValueError(
                    f"functional_call got multiple values for keys {sorted(values)}, which are "
                    "tied. Consider using tie_weights=False"
                )
            if values:
                value = next(iter(values.values()))
                for n in group:
                    given.setdefault(n, value)
    saved = []
    try:
        for name, value in given.items():
            owner, leaf = _owner(module, name)
            registry = _registry(owner, leaf)
            if registry is None:
                saved.append((owner, leaf, None, owner.__dict__.get(leaf, _MISSING)))
                object.__setattr__(owner, leaf, value)
            else:
                saved.append((owner, leaf, registry, owner.__dict__[registry][leaf]))
                owner.__dict__[registry][leaf] = value
        yield
    finally:
        for owner, leaf, registry, old in reversed(saved):
            if registry is None:
                if old is _MISSING:
                    owner.__dict__.pop(leaf, None)
                else:
                    object.__setattr__(owner, leaf, old)
            else:
                owner.__dict__[registry][leaf] = old


_MISSING = object()


def functional_call(
    module, parameters_and_buffers, args=None, kwargs=None, *, tie_weights=True, strict=False
):
    """module(*args, **kwargs) with the tensors of `parameters_and_buffers` (a dict by name, or
    a sequence of dicts) in place of the module's parameters and buffers of those names; the
    module is unchanged afterwards."""
    if isinstance(parameters_and_buffers, (list, tuple)):
        merged = {}
        for d in parameters_and_buffers:
            for k, v in d.items():
                if k in merged:
                    raise ValueError(
                        f"{k} appeared in multiple dictionaries; behavior of functional call is "
                        "ambiguous"
                    )
                merged[k] = v
        parameters_and_buffers = merged
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    kwargs = kwargs or {}
    with _reparametrize(module, parameters_and_buffers, tie_weights, strict):
        return module(*args, **kwargs)
