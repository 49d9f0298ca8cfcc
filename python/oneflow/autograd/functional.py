"""oneflow.autograd.functional: Jacobians, Hessians and their products with vectors, built on
autograd.grad (the double-backward trick for forward-mode products), with PyTorch's signatures
and return structures: a tensor for a tensor argument, tuples for tuple arguments."""

from oneflow.autograd import enable_grad, grad


def _as_tuple(name, arg, what):
    """(tuple of tensors, whether arg was a tuple)."""
    import oneflow

    is_tuple = isinstance(arg, (tuple, list))
    items = tuple(arg) if is_tuple else (arg,)
    for i, t in enumerate(items):
        if not isinstance(t, oneflow.Tensor):
            where = f"{what}[{i}]" if is_tuple else what
            raise TypeError(f"{name}: the {where} must be a Tensor, got {type(t).__name__}")
    return items, is_tuple


def _unpack(items, is_tuple):
    return tuple(items) if is_tuple else items[0]


def _prepare_inputs(inputs, create_graph):
    """Inputs that require grad and are differentiable leaves of this computation."""
    out = []
    for x in inputs:
        if create_graph and x.requires_grad:
            out.append(x.view_as(x))  # keeps the caller's graph, records ours on top
        else:
            out.append(x.detach().requires_grad_(True))
    return tuple(out)


def _check_vectors(name, vs, refs, what):
    if len(vs) != len(refs):
        raise RuntimeError(
            f"{name}: the given {what} has {len(vs)} entries, expected {len(refs)} (one per "
            f"{'output' if what == 'v' else 'input'})"
        )
    for v, r in zip(vs, refs):
        if tuple(v.shape) != tuple(r.shape):
            raise RuntimeError(
                f"{name}: entry of {what} has shape {tuple(v.shape)}, expected {tuple(r.shape)}"
            )


def _input_vectors(name, inputs, v):
    """The vectors (one per input) of jvp / vhp / hvp: v checked, or ones for one input of one
    element."""
    import oneflow

    if v is None:
        if len(inputs) != 1 or inputs[0].numel() != 1:
            raise RuntimeError(
                f"{name}: v can be omitted only when inputs is a single tensor of one element"
            )
        return (oneflow.ones_like(inputs[0]),)
    vs, _ = _as_tuple(name, v, "v")
    _check_vectors(name, vs, inputs, "v (one per input)")
    return vs


def _grads_along(name, gradients, wrt, vectors, like, create_graph, strict):
    """Gradients of sum(g_i * v_i) over the gradients g_i that depend on `wrt`; zeros shaped as
    `like` where nothing depends (an error with strict)."""
    import oneflow

    pairs = [(g, w) for g, w in zip(gradients, vectors) if g.requires_grad]
    if not pairs:
        if strict:
            raise RuntimeError(f"{name}: the outputs do not depend on the inputs (strict=True)")
        return tuple(oneflow.zeros_like(t) for t in like)
    got = grad(
        [g for g, _ in pairs],
        list(wrt),
        [w for _, w in pairs],
        retain_graph=True,
        create_graph=create_graph,
        allow_unused=True,
    )
    return tuple(r if r is not None else oneflow.zeros_like(t) for r, t in zip(got, like))


def _grads(name, outputs, inputs, grad_outputs, create_graph, strict, retain_graph=None):
    """autograd.grad with zeros for inputs the outputs do not depend on (an error with strict)."""
    import oneflow

    diff = [i for i, o in enumerate(outputs) if o.requires_grad]
    if not diff:
        if strict:
            raise RuntimeError(f"{name}: the outputs do not require grad (strict=True)")
        return tuple(oneflow.zeros_like(x) for x in inputs)
    got = grad(
        [outputs[i] for i in diff],
        list(inputs),
        [grad_outputs[i] for i in diff] if grad_outputs is not None else None,
        retain_graph=True if retain_graph is None else retain_graph,
        create_graph=create_graph,
        allow_unused=True,
    )
    result = []
    for x, g in zip(inputs, got):
        if g is None:
            if strict:
                raise RuntimeError(f"{name}: an output is independent of an input (strict=True)")
            g = oneflow.zeros_like(x)
        result.append(g)
    return tuple(result)


def _finish(items, create_graph):
    return tuple(t if create_graph else t.detach() for t in items)


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J): the vector-Jacobian product at inputs."""
    import oneflow

    inputs, in_tuple = _as_tuple("vjp", inputs, "inputs")
    with enable_grad():
        xs = _prepare_inputs(inputs, create_graph)
        outputs, out_tuple = _as_tuple("vjp", func(*xs), "outputs of func")
        if v is None:
            if len(outputs) != 1 or outputs[0].numel() != 1:
                raise RuntimeError(
                    "vjp: v can be omitted only when func returns a single tensor of one element"
                )
            vs = (oneflow.ones_like(outputs[0]),)
        else:
            vs, _ = _as_tuple("vjp", v, "v")
            _check_vectors("vjp", vs, outputs, "v")
        g = _grads("vjp", outputs, xs, vs, create_graph, strict)
    return _unpack(_finish(outputs, create_graph), out_tuple), _unpack(
        _finish(g, create_graph), in_tuple
    )


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v): the Jacobian-vector product at inputs, by differentiating the
    vector-Jacobian product u -> u^T J with respect to u."""
    import oneflow

    inputs, in_tuple = _as_tuple("jvp", inputs, "inputs")
    vs = _input_vectors("jvp", inputs, v)
    with enable_grad():
        xs = _prepare_inputs(inputs, create_graph)
        outputs, out_tuple = _as_tuple("jvp", func(*xs), "outputs of func")
        us = tuple(oneflow.zeros_like(o).requires_grad_(True) for o in outputs)
        g = _grads("jvp", outputs, xs, us, True, strict)
        result = _grads_along("jvp", g, us, vs, outputs, create_graph, strict)
    return _unpack(_finish(outputs, create_graph), out_tuple), _unpack(
        _finish(result, create_graph), out_tuple
    )


def jacobian(
    func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"
):
    """d func(inputs) / d inputs, one reverse pass per output element: for one input and one
    output a tensor of shape output.shape + input.shape; tuples (of tuples) otherwise."""
    import oneflow

    if strategy not in ("reverse-mode", "forward-mode"):
        raise ValueError(
            f'jacobian: strategy must be "reverse-mode" or "forward-mode", got {strategy}'
        )
    inputs, in_tuple = _as_tuple("jacobian", inputs, "inputs")
    with enable_grad():
        xs = _prepare_inputs(inputs, create_graph)
        outputs, out_tuple = _as_tuple("jacobian", func(*xs), "outputs of func")
        table = []
        for out in outputs:
            flat = out.reshape(-1)
            rows = [[] for _ in xs]
            for k in range(flat.numel()):
                if out.requires_grad:
                    g = _grads("jacobian", (flat[k],), xs, None, create_graph, strict)
                else:
                    if strict:
                        raise RuntimeError(
                            "jacobian: an output does not require grad (strict=True)"
                        )
                    g = tuple(oneflow.zeros_like(x) for x in xs)
                for i, gi in enumerate(g):
                    rows[i].append(gi)
            entry = []
            for x, r in zip(xs, rows):
                if r:
                    block = oneflow.stack(r).reshape(*out.shape, *x.shape)
                else:
                    block = oneflow.zeros(*out.shape, *x.shape, dtype=x.dtype, device=x.device)
                entry.append(block if create_graph else block.detach())
            table.append(_unpack(entry, in_tuple))
    return _unpack(table, out_tuple)


def hessian(
    func,
    inputs,
    create_graph=False,
    strict=False,
    vectorize=False,
    outer_jacobian_strategy="reverse-mode",
):
    """The Hessian of a function returning one element: the Jacobian of its gradient, shaped
    input.shape + input.shape (tuples of tuples for several inputs)."""
    inputs, in_tuple = _as_tuple("hessian", inputs, "inputs")

    def gradient(*xs):
        out = func(*xs)
        if not hasattr(out, "numel") or out.numel() != 1:
            raise RuntimeError("hessian: func must return a single tensor of one element")
        g = _grads("hessian", (out.reshape(()),), xs, None, True, strict)
        return _unpack(g, in_tuple)

    return jacobian(gradient, _unpack(inputs, in_tuple), create_graph=create_graph, strict=strict)


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H) for a function returning one element."""
    import oneflow

    inputs, in_tuple = _as_tuple("vhp", inputs, "inputs")
    vs = _input_vectors("vhp", inputs, v)
    with enable_grad():
        xs = _prepare_inputs(inputs, create_graph)
        out = func(*xs)
        if not isinstance(out, oneflow.Tensor) or out.numel() != 1:
            raise RuntimeError("vhp: func must return a single tensor of one element")
        g = _grads("vhp", (out.reshape(()),), xs, None, True, strict)
        h = _grads_along("vhp", g, xs, vs, xs, create_graph, strict)
    return _finish((out,), create_graph)[0], _unpack(_finish(h, create_graph), in_tuple)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v) for a function returning one element (H is symmetric: the same
    values as v^T H)."""
    return vhp(func, inputs, v, create_graph=create_graph, strict=strict)


__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]
