"""Functions of PyTorch's namespace composed of existing oneflow ops: Poisson sampling
(``poisson``), the randomized low-rank SVD and PCA (``svd_lowrank``, ``pca_lowrank``), the
deprecated ``triangular_solve``, the functional RNN cells (``rnn_tanh_cell``, ``rnn_relu_cell``,
``lstm_cell``, ``gru_cell``) and ``Tensor.as_subclass``.

Nothing here replaces a name oneflow already has: functions() and methods() drop those."""

import collections
import warnings

from oneflow._oneflow_internal import Tensor


def _flow():
    import oneflow

    return oneflow


# ---- sampling ---------------------------------------------------------------------------------


def _poisson_function():
    from oneflow.autograd import Function

    class _Poisson(Function):
        # PyTorch's derivative of a Poisson sample with respect to its rate is zero.
        @staticmethod
        def forward(ctx, rates, sample):
            return sample

        @staticmethod
        def backward(ctx, grad):
            return grad.mul(0), None

    return _Poisson


_POISSON = []


def poisson(input, generator=None):
    """A tensor of `input`'s shape and dtype whose elements are drawn from Poisson(rate) with
    the rates in `input` (nonnegative floats), using `generator` or the default generator."""
    flow = _flow()
    from oneflow.distributions.counts import _sample_poisson

    if not input.dtype.is_floating_point:
        raise RuntimeError(f"poisson: expected a floating-point tensor of rates, got {input.dtype}")
    if input.numel() and bool((input < 0).any()):
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    sample = _sample_poisson(input.detach(), generator=generator)
    if input.requires_grad and flow.is_grad_enabled():
        if not _POISSON:
            _POISSON.append(_poisson_function())
        return _POISSON[0].apply(input, sample)
    return sample


# ---- randomized low-rank decompositions -------------------------------------------------------


def _mH(x):
    return x.transpose(-2, -1).conj() if x.is_complex() else x.transpose(-2, -1)


def _approximate_basis(A, q, niter, M):
    """An orthonormal basis Q (m x q) whose span nearly holds the range of A - M: a Gaussian
    sketch followed by `niter` power iterations, re-orthonormalised by QR at every step
    (Halko, Martinsson and Tropp, 2009, Algorithm 4.4)."""
    flow = _flow()
    n = A.shape[-1]
    if A.is_global:  # one draw, the same on every process
        sketch = flow.randn(
            *A.shape[:-2], n, q, dtype=A.dtype, placement=A.placement, sbp=flow.sbp.broadcast
        )
    else:
        sketch = flow.randn(*A.shape[:-2], n, q, dtype=A.dtype, device=A.device)

    def times(X):
        out = flow.matmul(A, X)
        return out if M is None else out - flow.matmul(M, X)

    def adjoint_times(X):
        out = flow.matmul(_mH(A), X)
        return out if M is None else out - flow.matmul(_mH(M), X)

    Q = flow.linalg.qr(times(sketch)).Q
    for _ in range(niter):
        Q = flow.linalg.qr(adjoint_times(Q)).Q
        Q = flow.linalg.qr(times(Q)).Q
    return Q


def svd_lowrank(A, q=6, niter=2, M=None):
    """(U, S, V) of a randomized rank-`q` SVD of A - M (M broadcast to A's shape; None: 0):
    A - M ~= U diag(S) V^H with U (*, m, q), S (*, q) and V (*, n, q). `niter` power iterations
    sharpen the basis. The sketch is drawn from the default generator."""
    flow = _flow()
    q = 6 if q is None else q
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.shape)
    transposed = m < n
    if transposed:  # sketch the smaller side
        A = _mH(A)
        M = None if M is None else _mH(M)
    Q = _approximate_basis(A, q, niter, M)
    B = flow.matmul(_mH(Q), A)
    if M is not None:
        B = B - flow.matmul(_mH(Q), M)
    U, S, Vh = flow.linalg.svd(B, full_matrices=False)
    V = _mH(Vh)
    U = flow.matmul(Q, U)
    if transposed:
        U, V = V, U
    return U, S, V


def pca_lowrank(A, q=None, center=True, niter=2):
    """(U, S, V) of a randomized principal component analysis of the rows of A: svd_lowrank of
    A with its column means subtracted (unless center=False); q defaults to min(6, m, n)."""
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not (isinstance(q, int) and 0 <= q <= min(m, n)):
        raise ValueError(
            f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}"
        )
    if not (isinstance(niter, int) and niter >= 0):
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return svd_lowrank(A, q, niter=niter, M=None)
    return svd_lowrank(A - A.mean(dim=-2, keepdim=True), q, niter=niter, M=None)


# ---- the deprecated triangular solve ------------------------------------------------------------

TriangularSolveResult = collections.namedtuple(
    "triangular_solve", ["solution", "cloned_coefficient"]
)
_warned_triangular_solve = []


def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False):
    """(X, A) where A X = b (A^T X = b with transpose=True) for the triangular A (its upper
    triangle when upper, else its lower; a unit diagonal assumed with unitriangular), batched
    and broadcast over the leading dimensions; the second result is a copy of A broadcast to
    the batch. Deprecated in PyTorch in favour of linalg.solve_triangular."""
    flow = _flow()
    if not _warned_triangular_solve:
        _warned_triangular_solve.append(True)
        warnings.warn(
            "oneflow.triangular_solve is deprecated (as in PyTorch) in favor of "
            "oneflow.linalg.solve_triangular, which has its arguments reversed and does not "
            "return a copy of one of the inputs. X = oneflow.triangular_solve(B, A).solution "
            "should be replaced with X = oneflow.linalg.solve_triangular(A, B).",
            UserWarning,
            stacklevel=3,  # the caller of oneflow.triangular_solve (autocast wraps it)
        )
    if b.ndim < 2 or A.ndim < 2:
        raise RuntimeError(
            f"triangular_solve: The input tensor b must have at least 2 dimensions (got "
            f"{b.ndim}) and A at least 2 (got {A.ndim})"
        )
    batch = tuple(flow.broadcast_shapes(tuple(b.shape[:-2]), tuple(A.shape[:-2])))
    A_full = A.broadcast_to(batch + tuple(A.shape[-2:]))
    b_full = b.broadcast_to(batch + tuple(b.shape[-2:]))
    coefficient = A_full.transpose(-2, -1) if transpose else A_full
    solution = flow.linalg.solve_triangular(
        coefficient,
        b_full,
        upper=(not upper) if transpose else upper,
        unitriangular=unitriangular,
    )
    return TriangularSolveResult(solution, A_full.clone())


# ---- functional RNN cells -------------------------------------------------------------------


def _check_cell(name, input, hx, w_ih, w_hh):
    if input.shape[-1] != w_ih.shape[-1]:
        raise RuntimeError(
            f"{name}: input has inconsistent input_size: got {input.shape[-1]} expected "
            f"{w_ih.shape[-1]}"
        )
    if hx.shape[-1] != w_hh.shape[-1]:
        raise RuntimeError(
            f"{name}: hidden state has inconsistent hidden_size: got {hx.shape[-1]}, expected "
            f"{w_hh.shape[-1]}"
        )


def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One step of an Elman RNN: tanh(input w_ih^T + b_ih + hx w_hh^T + b_hh)."""
    from oneflow.nn.modules.rnn import _cell

    _check_cell("rnn_tanh_cell", input, hx, w_ih, w_hh)
    return _cell("RNN_TANH", input, hx, None, w_ih, w_hh, b_ih, b_hh)[0]


def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One step of an Elman RNN with ReLU: relu(input w_ih^T + b_ih + hx w_hh^T + b_hh)."""
    from oneflow.nn.modules.rnn import _cell

    _check_cell("rnn_relu_cell", input, hx, w_ih, w_hh)
    return _cell("RNN_RELU", input, hx, None, w_ih, w_hh, b_ih, b_hh)[0]


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One LSTM step: hx is (h, c); returns (h', c'). Gates in PyTorch's order i, f, g, o."""
    from oneflow.nn.modules.rnn import _cell

    if not isinstance(hx, (tuple, list)) or len(hx) != 2:
        raise RuntimeError("lstm_cell expects two hidden states")
    h, c = hx
    _check_cell("lstm_cell", input, h, w_ih, w_hh)
    h, c = _cell("LSTM", input, h, c, w_ih, w_hh, b_ih, b_hh)
    return h, c


def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One GRU step (gates r, z, n in PyTorch's order); returns h'."""
    from oneflow.nn.modules.rnn import _cell

    _check_cell("gru_cell", input, hx, w_ih, w_hh)
    return _cell("GRU", input, hx, None, w_ih, w_hh, b_ih, b_hh)[0]


# ---- Tensor.as_subclass -----------------------------------------------------------------------


def as_subclass(self, cls):
    """This tensor as an instance of `cls` (a subclass of Tensor), sharing its memory, without
    calling cls's constructor. Where `cls` adds no instance layout (``__slots__ = ()``) the
    result is a view that stays in the autograd graph, as PyTorch's. Otherwise the result is
    built as a new tensor object: when this tensor requires a gradient (in grad mode) it is a
    differentiable copy (new memory) so that gradients reach this tensor; else it shares the
    memory."""
    flow = _flow()
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError(
            "Creating a Tensor subclass from a class that does not inherit from Tensor is not "
            "possible. Make sure your class inherits from Tensor."
        )
    view = self.view_as(self)
    try:
        view.__class__ = cls
        return view
    except TypeError:
        pass
    result = Tensor.__new__(cls)
    if self.requires_grad and flow.is_grad_enabled():
        Tensor.__init__(result, flow.empty_like(self))
        result.copy_(self)
    else:
        Tensor.__init__(result, self)
    return result


_FUNCTIONS = [
    poisson,
    svd_lowrank,
    pca_lowrank,
    triangular_solve,
    rnn_tanh_cell,
    rnn_relu_cell,
    lstm_cell,
    gru_cell,
]


def functions():
    """Name -> function for the oneflow namespace, only names oneflow doesn't have yet."""
    flow = _flow()
    return {fn.__name__: fn for fn in _FUNCTIONS if fn.__name__ not in vars(flow)}


def methods():
    """Name -> Tensor method, only names oneflow's Tensor doesn't have yet."""
    out = {"as_subclass": as_subclass, "triangular_solve": triangular_solve}
    return {name: fn for name, fn in out.items() if not hasattr(Tensor, name)}
