"""Matrix products of ``oneflow.*`` and ``oneflow.Tensor`` (mm, bmm, addmm, baddbmm, dot, mv,
outer, tensordot, trace, cross) on the matmul kernel, with PyTorch's shape checks."""

import math

import oneflow
from oneflow._oneflow_internal import _C
from oneflow.framework.autocast_fp32 import outside_autocast


def _fail(op, msg):
    raise RuntimeError(f"{op}: {msg}")


def mm(input, mat2):
    if not (input.ndim == 2 and mat2.ndim == 2):
        _fail("mm", f"expected 2-D tensors, got {input.ndim}-D and {mat2.ndim}-D")
    return _C.matmul(input, mat2)


def bmm(input, mat2):
    if not (input.ndim == 3 and mat2.ndim == 3):
        _fail("bmm", f"expected 3-D tensors, got {input.ndim}-D and {mat2.ndim}-D")
    if not (input.shape[0] == mat2.shape[0]):
        _fail("bmm", f"batch sizes differ: {input.shape[0]} and {mat2.shape[0]}")
    return _C.matmul(input, mat2)


def _scaled_sum(input, prod, beta, alpha):
    input = _C._autocast_lower(input)  # under autocast, the added term too (as PyTorch)
    if alpha != 1:
        prod = _C.mul(prod, alpha)
    if beta == 0:
        return _C.add(prod, _C.mul(input, 0))  # broadcast shape, without input's NaNs
    return _C.add(prod, input if beta == 1 else _C.mul(input, beta))


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    return _scaled_sum(input, mm(mat1, mat2), beta, alpha)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    return _scaled_sum(input, bmm(batch1, batch2), beta, alpha)


@outside_autocast  # PyTorch's autocast leaves it alone; its matmul would be lowered
def addmv(input, mat, vec, *, beta=1, alpha=1):
    return _scaled_sum(input, mv(mat, vec), beta, alpha)


def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    # the batch of products summed over the batch dim
    return _scaled_sum(input, bmm(batch1, batch2).sum(0), beta, alpha)


def addr(input, vec1, vec2, *, beta=1, alpha=1):
    if not (vec1.ndim == 1 and vec2.ndim == 1):
        _fail("addr", f"expected 1-D vectors, got {vec1.ndim}-D and {vec2.ndim}-D")
    return _scaled_sum(input, outer(vec1, vec2), beta, alpha)


def dot(input, other):
    return _C._dot(input, other)  # checks in C++; BLAS's dot on the CPU


@outside_autocast
def mv(input, vec):
    if not (input.ndim == 2 and vec.ndim == 1):
        _fail("mv", f"expected a 2-D matrix and a 1-D vector, got {input.ndim}-D and {vec.ndim}-D")
    return _C.matmul(input, vec)


def outer(input, vec2):
    return _C._outer(input, vec2)


def tensordot(a, b, dims=2):
    if isinstance(dims, int):
        dims_a, dims_b = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    else:
        dims_a, dims_b = [list(d) if isinstance(d, (list, tuple)) else [d] for d in dims]
    dims_a = [d % a.ndim for d in dims_a]
    dims_b = [d % b.ndim for d in dims_b]
    free_a = [d for d in range(a.ndim) if d not in dims_a]
    free_b = [d for d in range(b.ndim) if d not in dims_b]
    k = 1
    for d in dims_a:
        k *= a.shape[d]
    shape = [a.shape[d] for d in free_a] + [b.shape[d] for d in free_b]
    # Explicit sizes: -1 cannot be inferred when a dim is 0.
    m = math.prod(a.shape[d] for d in free_a)
    am = a.permute(*free_a, *dims_a).reshape(m, k)
    bm = b.permute(*dims_b, *free_b).reshape(k, math.prod(b.shape[d] for d in free_b))
    return _C.matmul(am, bm).reshape(*shape)


def trace(input):
    return _C._trace(input)


def cross(input, other, dim=None):
    # One kernel on the CPU; checks, broadcasting and the default dim in C++.
    if input.dtype.is_complex or other.dtype.is_complex:  # bilinear: on the parts
        a, b = input.real, other.real
        ai = input.imag if input.dtype.is_complex else None
        bi = other.imag if other.dtype.is_complex else None
        re, im = _C._cross(a, b, dim), None
        if ai is not None and bi is not None:
            re = _C.sub(re, _C._cross(ai, bi, dim))
        if bi is not None:
            im = _C._cross(a, bi, dim)
        if ai is not None:
            t = _C._cross(ai, b, dim)
            im = t if im is None else _C.add(im, t)
        return _C.complex(re, im)
    return _C._cross(input, other, dim)


def functions():
    return dict(
        mm=mm,
        bmm=bmm,
        addmm=addmm,
        baddbmm=baddbmm,
        addmv=addmv,
        addbmm=addbmm,
        addr=addr,
        dot=dot,
        mv=mv,
        outer=outer,
        ger=outer,
        tensordot=tensordot,
        trace=trace,
        cross=cross,
        einsum=einsum,
        inverse=inv,
        det=det,
        logdet=logdet,
        slogdet=slogdet,
    )


def methods():
    from oneflow.framework.math_ops import inplace

    out = functions()
    out.pop("tensordot")
    out.pop("einsum")
    for name in ["addmm", "baddbmm", "addmv", "addbmm", "addr"]:
        out[name + "_"] = inplace(name + "_", out[name])
    return out


def inv(input):
    if input.dtype.is_complex:  # the inverse of the real block matrix, as complex again
        from oneflow.framework.linalg_complex import from_real_block, real_block

        if input.ndim < 2 or input.shape[-1] != input.shape[-2]:
            return _C.inverse(input)  # its shape errors
        n = input.shape[-1]
        return from_real_block(_C.inverse(real_block(input)), n, n)
    return _C.inverse(input)


def det(input):
    if (
        input.device.type == "cpu"
        and not input.is_global
        and (input.dtype.is_complex or (input.requires_grad and oneflow.is_grad_enabled()))
    ):
        from oneflow.framework.linalg_decomp import det_lu

        return det_lu(input)  # LAPACK's LU, and a gradient for singular matrices too
    if input.dtype.is_complex and input.ndim >= 2 and input.shape[-1] == input.shape[-2]:
        from oneflow.framework.linalg_complex import det as complex_det

        return complex_det(input)  # Gaussian elimination in complex arithmetic
    return _C.det(input)


def slogdet(input):
    d = _C.det(input)
    return _C.sign(d), _C.log(_C.abs(d))


def logdet(input):
    d = _C.det(input)
    return _C.where(_C.lt(d, 0), float("nan"), _C.log(d))


def _sublist_equation(args):
    """einsum(a, [0, 1], b, [1, 2], [0, 2]): the equation and operands of the sublist form
    (subscripts are ints below 52, Ellipsis for '...')."""
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

    def subs(sublist):
        out = []
        for i in sublist:
            if i is Ellipsis:
                out.append("...")
            elif isinstance(i, int) and 0 <= i < len(letters):
                out.append(letters[i])
            else:
                raise ValueError(
                    "einsum(): subscript in subscript list is not within the valid range "
                    f"[0, 52), got {i}"
                )
        return "".join(out)

    output = None
    if len(args) % 2 == 1:  # a trailing output sublist
        args, output = args[:-1], args[-1]
    operands, terms = list(args[0::2]), [subs(t) for t in args[1::2]]
    equation = ",".join(terms)
    return (equation if output is None else equation + "->" + subs(output)), operands


def einsum(equation, *operands):
    """Einstein summation: operands contracted pairwise, left to right, as batched matmuls."""
    if not isinstance(equation, str):  # the sublist form
        equation, operands = _sublist_equation((equation, *operands))
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(operands):
        raise RuntimeError(
            f"einsum: {len(terms)} operands in the equation but {len(operands)} were given"
        )
    used = set(eq)
    spare = iter(c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in used)
    ell_len = max(
        (t.ndim - len(s.replace("...", "")) for s, t in zip(terms, operands) if "..." in s),
        default=0,
    )
    ell = "".join(next(spare) for _ in range(ell_len))
    subs = []
    for s, t in zip(terms, operands):
        if "..." in s:
            n = t.ndim - len(s.replace("...", ""))
            s = s.replace("...", ell[ell_len - n :])
        if len(s) != t.ndim:
            raise RuntimeError(
                f"einsum: the subscripts {s!r} do not match an operand with {t.ndim} dimensions"
            )
        subs.append(s)
    if arrow:
        out = rhs.replace("...", ell)
    else:
        counts = {}
        for s in subs:
            for c in s:
                counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, k in counts.items() if k == 1 and c not in ell))
    ops = list(operands)
    # Repeated letters within one operand: take the diagonal.
    for i, s in enumerate(subs):
        while len(set(s)) != len(s):
            c = next(c for c in s if s.count(c) > 1)
            a = s.index(c)
            b = s.index(c, a + 1)
            ops[i] = _C.diagonal(ops[i], 0, a, b)
            s = s[:a] + s[a + 1 : b] + s[b + 1 :] + c
        subs[i] = s

    def needed(k, c):
        return c in out or any(c in subs[j] for j in range(len(subs)) if j != k)

    # Letters only one operand has and the output lacks are summed away first.
    for i, s in enumerate(subs):
        drop = [d for d, c in enumerate(s) if not needed(i, c)]
        if drop:
            ops[i] = _C.sum(ops[i], drop, False)
            subs[i] = "".join(c for c in s if needed(i, c))
    a, sa = ops[0], subs[0]
    for k in range(1, len(ops)):
        b, sb = ops[k], subs[k]
        rest = out + "".join(subs[k + 1 :])
        batch = [c for c in sa if c in sb and c in rest]
        contract = [c for c in sa if c in sb and c not in rest]
        left = [c for c in sa if c not in sb]
        right = [c for c in sb if c not in sa]
        size = {}
        for s_, t_ in ((sa, a), (sb, b)):
            for c, n in zip(s_, t_.shape):
                size[c] = n if size.get(c, 1) == 1 else size[c]  # broadcasts 1, keeps 0
        pa = a.permute(*[sa.index(c) for c in batch + left + contract])
        pb = b.permute(*[sb.index(c) for c in batch + contract + right])
        pa = _C.expand(pa, *[size[c] for c in batch + left + contract])
        pb = _C.expand(pb, *[size[c] for c in batch + contract + right])

        nb, nl, nk, nr = (math.prod(size[c] for c in cs) for cs in (batch, left, contract, right))
        r = _C.matmul(pa.reshape(nb, nl, nk), pb.reshape(nb, nk, nr))
        a = r.reshape(*[size[c] for c in batch + left + right])
        sa = "".join(batch + left + right)
    drop = [d for d, c in enumerate(sa) if c not in out]
    if drop:
        a = _C.sum(a, drop, False)
        sa = "".join(c for c in sa if c in out)
    if sorted(sa) != sorted(out):
        raise RuntimeError(f"einsum: output subscripts {out!r} are not in the inputs")
    return a.permute(*[sa.index(c) for c in out]) if out else a
