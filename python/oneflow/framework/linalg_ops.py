"""Matrix products of ``oneflow.*`` and ``oneflow.Tensor`` (mm, bmm, addmm, baddbmm, dot, mv,
outer, tensordot, trace, cross) on the matmul kernel, with PyTorch's shape checks."""

from oneflow._oneflow_internal import _C


def _check(op, cond, msg):
    if not cond:
        raise RuntimeError(f"{op}: {msg}")


def mm(input, mat2):
    _check(
        "mm",
        input.ndim == 2 and mat2.ndim == 2,
        f"expected 2-D tensors, got {input.ndim}-D and {mat2.ndim}-D",
    )
    return _C.matmul(input, mat2)


def bmm(input, mat2):
    _check(
        "bmm",
        input.ndim == 3 and mat2.ndim == 3,
        f"expected 3-D tensors, got {input.ndim}-D and {mat2.ndim}-D",
    )
    _check(
        "bmm",
        input.shape[0] == mat2.shape[0],
        f"batch sizes differ: {input.shape[0]} and {mat2.shape[0]}",
    )
    return _C.matmul(input, mat2)


def _scaled_sum(input, prod, beta, alpha):
    if alpha != 1:
        prod = _C.mul(prod, alpha)
    if beta == 0:
        return _C.add(prod, _C.mul(input, 0))  # broadcast shape, without input's NaNs
    return _C.add(prod, input if beta == 1 else _C.mul(input, beta))


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    return _scaled_sum(input, mm(mat1, mat2), beta, alpha)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    return _scaled_sum(input, bmm(batch1, batch2), beta, alpha)


def addmv(input, mat, vec, *, beta=1, alpha=1):
    return _scaled_sum(input, mv(mat, vec), beta, alpha)


def dot(input, other):
    _check(
        "dot",
        input.ndim == 1 and other.ndim == 1,
        f"1D tensors expected, but got {input.ndim}D and {other.ndim}D tensors",
    )
    _check(
        "dot",
        input.shape[0] == other.shape[0],
        f"inconsistent tensor size, expected tensor [{input.shape[0]}] and src "
        f"[{other.shape[0]}] to have the same number of elements",
    )
    return _C.matmul(input, other)


def mv(input, vec):
    _check(
        "mv",
        input.ndim == 2 and vec.ndim == 1,
        f"expected a 2-D matrix and a 1-D vector, got {input.ndim}-D and {vec.ndim}-D",
    )
    return _C.matmul(input, vec)


def outer(input, vec2):
    return _C.mul(_C.unsqueeze(input, 1), _C.unsqueeze(vec2, 0))


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
    am = a.permute(*free_a, *dims_a).reshape(-1, k)
    bm = b.permute(*dims_b, *free_b).reshape(k, -1)
    shape = [a.shape[d] for d in free_a] + [b.shape[d] for d in free_b]
    return _C.matmul(am, bm).reshape(*shape)


def trace(input):
    _check("trace", input.ndim == 2, f"expected a matrix, got a {input.ndim}-D tensor")
    return _C.sum(_C.diagonal(input, 0, 0, 1))


def cross(input, other, dim=None):
    if dim is None:
        dim = next(d for d in range(input.ndim) if input.shape[d] == 3)
    _check("cross", input.shape[dim] == 3, f"dimension {dim} does not have size 3")

    def part(t, i):
        return _C.narrow(t, dim, i, 1)

    a0, a1, a2 = (part(input, i) for i in range(3))
    b0, b1, b2 = (part(other, i) for i in range(3))
    return _C.cat(
        [
            _C.sub(_C.mul(a1, b2), _C.mul(a2, b1)),
            _C.sub(_C.mul(a2, b0), _C.mul(a0, b2)),
            _C.sub(_C.mul(a0, b1), _C.mul(a1, b0)),
        ],
        dim,
    )


def functions():
    return dict(
        mm=mm,
        bmm=bmm,
        addmm=addmm,
        baddbmm=baddbmm,
        addmv=addmv,
        dot=dot,
        mv=mv,
        outer=outer,
        ger=outer,
        tensordot=tensordot,
        trace=trace,
        cross=cross,
    )


def methods():
    out = functions()
    out.pop("tensordot")
    return out
