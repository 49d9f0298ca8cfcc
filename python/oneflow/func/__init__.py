"""oneflow.func: function transforms (PyTorch's torch.func): grad, grad_and_value, vjp, jvp,
jacrev, jacfwd, hessian, vmap, functional_call and stack_module_state.

The differentiating transforms run the function on inputs that require grad and take
``autograd.grad`` with ``create_graph`` inside an outer differentiation (so they nest:
``grad(grad(f))``, ``jacrev(jacrev(f))``). ``jvp`` and ``jacfwd`` compute forward-mode
results through reverse mode (the double-vjp construction), so their values equal PyTorch's but
cost a backward pass per tangent. ``vmap`` runs the function once per slice of the batched
inputs and stacks the results: the semantics of PyTorch's vmap (in_dims, out_dims, nesting,
pytrees of tuples, lists and dicts), at the cost of a call per batch element.
"""

import functools

import oneflow
from oneflow.nn.utils.stateless import functional_call as _functional_call

__all__ = [
    "functional_call",
    "grad",
    "grad_and_value",
    "hessian",
    "jacfwd",
    "jacrev",
    "jvp",
    "stack_module_state",
    "vjp",
    "vmap",
]


# ---- pytrees (tuples, lists, dicts of tensors) -------------------------------------------------


def _flatten(tree):
    if isinstance(tree, (tuple, list)):
        leaves, specs = [], []
        for t in tree:
            lv, sp = _flatten(t)
            leaves += lv
            specs.append(sp)
        return leaves, (type(tree), specs)
    if isinstance(tree, dict):
        leaves, specs = [], []
        keys = list(tree)
        for k in keys:
            lv, sp = _flatten(tree[k])
            leaves += lv
            specs.append(sp)
        return leaves, (dict, (keys, specs))
    return [tree], None


def _unflatten(leaves, spec):
    it = iter(leaves)

    def build(sp):
        if sp is None:
            return next(it)
        kind, children = sp
        if kind is dict:
            keys, specs = children
            return {k: build(s) for k, s in zip(keys, specs)}
        return kind(build(s) for s in children)

    return build(spec)


def functional_call(
    module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True, strict=False
):
    return _functional_call(
        module, parameter_and_buffer_dicts, args, kwargs, tie_weights=tie_weights, strict=strict
    )


# ---- reverse mode ------------------------------------------------------------------------------


def _prepared(x):
    """x as a differentiable input: a tensor that requires grad, connected to x's history."""
    if not isinstance(x, oneflow.Tensor):
        raise TypeError(
            f"expected tensors as the arguments to differentiate, got {type(x).__name__}"
        )
    if x.requires_grad:
        return x.view_as(x)
    return x.detach().requires_grad_(True)


def _argnums_tuple(argnums, nargs):
    if isinstance(argnums, int):
        nums = (argnums,)
    elif isinstance(argnums, tuple) and argnums and all(isinstance(a, int) for a in argnums):
        nums = argnums
    else:
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums).__name__}")
    out = []
    for a in nums:
        if not -nargs <= a < nargs:
            raise RuntimeError(f"Got argnum={a}, but only {nargs} positional inputs")
        out.append(a % nargs)
    return tuple(out)


def _grad_of(outputs, inputs, grad_outputs=None):
    grads = oneflow.autograd.grad(
        outputs, inputs, grad_outputs, create_graph=True, allow_unused=True
    )
    return [g if g is not None else oneflow.zeros_like(x) for g, x in zip(grads, inputs)]


def grad_and_value(func, argnums=0, has_aux=False):
    """A function returning (gradient of func's scalar output with respect to the arguments
    `argnums`, func's output) (with has_aux: ((gradient), (output, aux)))."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        nums = _argnums_tuple(argnums, len(args))
        args = list(args)
        flat = {}
        for n in nums:
            leaves, spec = _flatten(args[n])
            leaves = [_prepared(x) for x in leaves]
            flat[n] = (leaves, spec)
            args[n] = _unflatten(leaves, spec)
        with oneflow.enable_grad():
            result = func(*args, **kwargs)
            if has_aux:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError(
                        "grad_and_value(f)(*args): output of function f should be a tuple: "
                        "(output, aux) if has_aux is True"
                    )
                output, aux = result
            else:
                output, aux = result, None
            if not isinstance(output, oneflow.Tensor) or output.numel() != 1:
                got = (
                    f"a tensor of shape {tuple(output.shape)}"
                    if isinstance(output, oneflow.Tensor)
                    else type(output).__name__
                )
                raise RuntimeError(
                    "grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, "
                    f"got {got}"
                )
            all_inputs = [x for n in nums for x in flat[n][0]]
            grads = _grad_of(output, all_inputs)
        per_arg, i = [], 0
        for n in nums:
            leaves, spec = flat[n]
            per_arg.append(_unflatten(grads[i : i + len(leaves)], spec))
            i += len(leaves)
        g = per_arg[0] if isinstance(argnums, int) else tuple(per_arg)
        return (g, (output, aux)) if has_aux else (g, output)

    return wrapper


def grad(func, argnums=0, has_aux=False):
    """A function returning the gradient of func's scalar output with respect to the arguments
    `argnums` (with has_aux: (gradient, aux))."""
    gv = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, value = gv(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return wrapper


def vjp(func, *primals, has_aux=False):
    """(func(*primals), vjp_fn): vjp_fn(cotangents) gives the cotangents of the primals."""
    flat_primals, primals_spec = _flatten(primals)
    inputs = [_prepared(x) for x in flat_primals]
    with oneflow.enable_grad():
        result = func(*_unflatten(inputs, primals_spec))
        if has_aux:
            output, aux = result
        else:
            output, aux = result, None
    flat_out, out_spec = _flatten(output)

    def vjp_fn(cotangents):
        flat_ct, _ = _flatten(cotangents)
        if len(flat_ct) != len(flat_out):
            raise RuntimeError(
                f"Expected pytree structure of cotangents to be the same as pytree structure "
                f"of outputs to the function ({len(flat_out)} tensors, got {len(flat_ct)})"
            )
        with oneflow.enable_grad():
            grads = _grad_of(flat_out, inputs, flat_ct)
        return _unflatten(grads, primals_spec)

    return (output, vjp_fn, aux) if has_aux else (output, vjp_fn)


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """(func(*primals), the directional derivative along `tangents`), computed through two
    reverse-mode passes (the vjp of the vjp)."""
    if not isinstance(primals, tuple) or not isinstance(tangents, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to be tuples")
    flat_p, spec = _flatten(primals)
    flat_t, _ = _flatten(tangents)
    if len(flat_p) != len(flat_t):
        raise RuntimeError(
            "jvp(f, primals, tangents): Expected primals and tangents to have the same structure"
        )
    inputs = [_prepared(x) for x in flat_p]
    with oneflow.enable_grad():
        result = func(*_unflatten(inputs, spec))
        output, aux = result if has_aux else (result, None)
        flat_out, out_spec = _flatten(output)
        # u -> J^T u is linear in u; its vjp along the tangents is J t
        dummies = [oneflow.zeros_like(o).requires_grad_(True) for o in flat_out]
        jt_u = oneflow.autograd.grad(
            flat_out, inputs, dummies, create_graph=True, allow_unused=True
        )
        pairs = [(g, t) for g, t in zip(jt_u, flat_t) if g is not None]
        if pairs:
            jt = _grad_of([g for g, _ in pairs], dummies, [t for _, t in pairs])
        else:
            jt = [oneflow.zeros_like(o) for o in flat_out]
    tangent_out = _unflatten(jt, out_spec)
    return (output, tangent_out, aux) if has_aux else (output, tangent_out)


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None):
    """A function returning the Jacobian of func's output(s) with respect to the arguments
    `argnums`, one reverse pass per output element: shape output.shape + input.shape."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        nums = _argnums_tuple(argnums, len(args))
        args = list(args)
        inputs = {}
        for n in nums:
            inputs[n] = _prepared(args[n])
            args[n] = inputs[n]
        with oneflow.enable_grad():
            result = func(*args, **kwargs)
            output, aux = result if has_aux else (result, None)
            flat_out, out_spec = _flatten(output)
            xs = [inputs[n] for n in nums]
            jac_per_out = []
            for o in flat_out:
                rows = []
                flat_o = o.reshape(-1)
                for k in range(flat_o.numel()):
                    rows.append(_grad_of(flat_o[k], xs))
                per_input = []
                for j, x in enumerate(xs):
                    if rows:
                        stacked = oneflow.stack([r[j] for r in rows])
                    else:
                        stacked = oneflow.zeros(0, *x.shape, dtype=x.dtype, device=x.device)
                    per_input.append(stacked.reshape(*o.shape, *x.shape))
                jac_per_out.append(per_input[0] if isinstance(argnums, int) else tuple(per_input))
        jac = _unflatten(jac_per_out, out_spec)
        return (jac, aux) if has_aux else jac

    return wrapper


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The Jacobian as jacrev's (forward mode is computed through reverse mode here)."""
    return jacrev(func, argnums, has_aux=has_aux)


def hessian(func, argnums=0):
    """The Hessian of a scalar function: the Jacobian of its gradient."""
    return jacfwd(jacrev(func, argnums), argnums)


# ---- vmap --------------------------------------------------------------------------------------


def _per_arg_dims(in_dims, args):
    if isinstance(in_dims, int) or in_dims is None:
        return [in_dims] * len(args)
    if not isinstance(in_dims, (tuple, list)) or len(in_dims) != len(args):
        raise ValueError(
            f"vmap: in_dims is not compatible with the structure of inputs: expected one entry "
            f"per positional argument ({len(args)}), got {in_dims!r}"
        )
    return list(in_dims)


def _leaf_dims(dims, arg):
    """The in_dim of every tensor leaf of `arg` (dims: an int, None, or a matching pytree)."""
    leaves, spec = _flatten(arg)
    if dims is None or isinstance(dims, int):
        return leaves, spec, [dims] * len(leaves)
    dim_leaves, _ = _flatten(dims)
    if len(dim_leaves) != len(leaves):
        raise ValueError("vmap: in_dims is not compatible with the structure of inputs")
    return leaves, spec, dim_leaves


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """func mapped over a batch dimension of its inputs: in_dims says which dim of each
    argument is the batch (None: not batched), out_dims where the batch goes in the outputs."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(
            "Only allowed values for randomness are 'error', 'different', or 'same'. "
            f"Got {randomness}"
        )

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        dims = _per_arg_dims(in_dims, args)
        prepared, size = [], None
        for d, arg in zip(dims, args):
            leaves, spec, ld = _leaf_dims(d, arg)
            for leaf, dim in zip(leaves, ld):
                if dim is None:
                    continue
                if not isinstance(leaf, oneflow.Tensor):
                    raise ValueError(
                        f"vmap: Got in_dim={dim} for an input but the input is of type "
                        f"{type(leaf).__name__}. We cannot vmap over non-Tensor arguments"
                    )
                if not -leaf.ndim <= dim < max(leaf.ndim, 1) or leaf.ndim == 0:
                    raise ValueError(
                        f"vmap: Got in_dim={dim} for some input, but that input is a Tensor of "
                        f"dimensionality {leaf.ndim} so expected in_dim to satisfy "
                        f"-{leaf.ndim} <= in_dim < {leaf.ndim}."
                    )
                n = leaf.shape[dim]
                if size is not None and n != size:
                    raise ValueError(
                        "vmap: Expected all tensors to have the same size in the mapped "
                        f"dimension, got sizes {size} and {n} for the mapped dimension"
                    )
                size = n
            prepared.append((leaves, spec, ld))
        if size is None:
            raise ValueError(
                "vmap: at least one input must be a Tensor with a dimension to map over "
                "(in_dims were all None)"
            )
        results = []
        for i in range(size):
            call_args = []
            for leaves, spec, ld in prepared:
                sliced = [
                    leaf if dim is None else leaf.select(dim, i) for leaf, dim in zip(leaves, ld)
                ]
                call_args.append(_unflatten(sliced, spec))
            results.append(func(*call_args, **kwargs))
        flat0, out_spec = _flatten(results[0])
        per_result = [_flatten(r)[0] for r in results]
        if isinstance(out_dims, int) or out_dims is None:
            odims = [out_dims] * len(flat0)
        else:
            odims, _ = _flatten(out_dims)
            if len(odims) != len(flat0):
                raise ValueError("vmap: out_dims is not compatible with the structure of outputs")
        stacked = []
        for k, od in enumerate(odims):
            column = [r[k] for r in per_result]
            if not isinstance(column[0], oneflow.Tensor):
                raise ValueError(
                    f"vmap: `func` must only return Tensors, got type {type(column[0]).__name__}"
                )
            if od is None:
                stacked.append(column[0])
            else:
                ndim = column[0].ndim + 1
                stacked.append(oneflow.stack(column, dim=od % ndim))
        return _unflatten(stacked, out_spec)

    return wrapper


# ---- ensembles -------------------------------------------------------------------------------


def _stacked_leaf(tensors, name):
    all_grad = all(t.requires_grad for t in tensors)
    if not all_grad and any(t.requires_grad for t in tensors):
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    result = oneflow.stack(tensors)
    if all_grad:
        result = result.detach().requires_grad_()
    return result


def stack_module_state(models):
    """(params, buffers): the models' parameters and buffers by state-dict name, each stacked
    along a new first dim (for vmap over functional_call). Stacked parameters are new leaves
    that require grad (where the models' do); buffers are stacked as they are."""
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError(
            "stack_module_state: Expected all models to have the same training/eval mode."
        )
    if not all(type(m) is type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    all_params = [dict(m.named_parameters()) for m in models]
    params = {k: _stacked_leaf([p[k] for p in all_params], k) for k in all_params[0]}
    all_buffers = [dict(m.named_buffers()) for m in models]
    buffers = {k: _stacked_leaf([b[k] for b in all_buffers], k) for k in all_buffers[0]}
    return params, buffers
