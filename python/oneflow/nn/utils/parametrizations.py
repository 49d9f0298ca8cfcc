"""oneflow.nn.utils.parametrizations: weight_norm, spectral_norm and orthogonal as
parametrizations (PyTorch's torch.nn.utils.parametrizations), registered through
oneflow.nn.utils.parametrize with PyTorch's state_dict keys."""

from enum import Enum

import oneflow
from oneflow.nn import functional as F
from oneflow.nn.modules.module import Module
from oneflow.nn.utils import parametrize

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


def _norm_except_dim(v, dim):
    if dim == -1:
        return oneflow.linalg.vector_norm(v)
    dims = [d for d in range(v.ndim) if d != dim % max(v.ndim, 1)]
    return oneflow.linalg.vector_norm(v, 2, dims, keepdim=True) if dims else v.abs()


# ---- weight_norm -----------------------------------------------------------------------------


class _WeightNorm(Module):
    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return weight_v * (weight_g / _norm_except_dim(weight_v, self.dim))

    def right_inverse(self, weight):
        return _norm_except_dim(weight, self.dim), weight


def _weight_norm_compat_hook(state_dict, prefix, local_metadata, strict, missing, unexpected, errs):
    # checkpoints of the hook-based weight_norm: <name>_g / <name>_v
    for key in list(state_dict):
        for suffix, index in (("_g", 0), ("_v", 1)):
            if key.startswith(prefix) and key.endswith(suffix) and "." not in key[len(prefix) :]:
                name = key[len(prefix) : -len(suffix)]
                state_dict[f"{prefix}parametrizations.{name}.original{index}"] = state_dict.pop(key)


def weight_norm(module, name="weight", dim=0):
    """module.<name> = g * v / ||v|| (the norm over every dim but `dim`, over all with None),
    g and v stored as parametrizations.<name>.original0 / original1."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    if hasattr(module, "_register_load_state_dict_pre_hook"):
        module._register_load_state_dict_pre_hook(_weight_norm_compat_hook)
    return module


# ---- spectral_norm ---------------------------------------------------------------------------


class _SpectralNorm(Module):
    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(
                "Dimension out of range (expected to be in range of "
                f"[-{ndim}, {ndim - 1}] but got {dim})"
            )
        if n_power_iterations <= 0:
            raise ValueError(
                "Expected n_power_iterations to be positive, but "
                f"got n_power_iterations={n_power_iterations}"
            )
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.shape
            u = F.normalize(
                oneflow.randn(h, dtype=weight.dtype, device=weight.device), dim=0, eps=self.eps
            )
            v = F.normalize(
                oneflow.randn(w, dtype=weight.dtype, device=weight.device), dim=0, eps=self.eps
            )
            self.register_buffer("_u", u)
            self.register_buffer("_v", v)
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.ndim) if d != self.dim))
        return weight.flatten(1)

    @oneflow.no_grad()
    def _power_method(self, weight_mat, n_power_iterations):
        for _ in range(n_power_iterations):
            self._u.copy_(F.normalize(oneflow.mv(weight_mat, self._v), dim=0, eps=self.eps))
            self._v.copy_(F.normalize(oneflow.mv(weight_mat.t(), self._u), dim=0, eps=self.eps))

    def forward(self, weight):
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()
        sigma = oneflow.vdot(u, oneflow.mv(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """module.<name> divided by its largest singular value, estimated by power iteration (one
    step per forward in training, buffers parametrizations.<name>.0._u / _v)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, oneflow.Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        from oneflow.nn.utils import _spectral_norm_dim

        dim = _spectral_norm_dim(module)
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps)
    )
    return module


# ---- orthogonal ------------------------------------------------------------------------------


class _OrthMaps(Enum):
    matrix_exp = 0
    cayley = 1
    householder = 2


def _householder_product(a, tau):
    """The first n columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^T with v_i the i-th column of
    a below the diagonal and 1 on it (LAPACK's orgqr), from differentiable ops."""
    m, n = a.shape[-2], a.shape[-1]
    eye = oneflow.eye(m, dtype=a.dtype, device=a.device)
    q = eye.expand(*a.shape[:-2], m, m)
    below = a.tril(-1) + oneflow.eye(m, n, dtype=a.dtype, device=a.device)
    for i in range(tau.shape[-1]):
        v = below[..., :, i : i + 1]
        q = q - (q @ v) * tau[..., i : i + 1, None] @ v.transpose(-2, -1)
    return q[..., :n]


def _make_orthogonal(a):
    """The Q of a = QR with diag(R) >= 0 (a tall)."""
    q, r = oneflow.linalg.qr(a)
    signs = oneflow.sign(r.diagonal(dim1=-2, dim2=-1))
    signs = oneflow.where(signs == 0, oneflow.ones_like(signs), signs)
    return q * signs.unsqueeze(-2)


def _is_orthogonal(q):
    n, k = q.shape[-2], q.shape[-1]
    eye = oneflow.eye(k, dtype=q.dtype, device=q.device)
    eps = 10.0 * n * oneflow.finfo(q.dtype).eps
    return bool(oneflow.allclose(q.transpose(-2, -1) @ q, eye, atol=eps))


class _Orthogonal(Module):
    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        self.shape = tuple(weight.shape)
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, x):
        n, k = x.shape[-2], x.shape[-1]
        transposed = n < k
        if transposed:
            x = x.transpose(-2, -1)
            n, k = k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            x = x.tril()
            if n != k:  # embedded in a square matrix
                pad = oneflow.zeros(*x.shape[:-1], n - k, dtype=x.dtype, device=x.device)
                x = oneflow.cat([x, pad], dim=-1)
            a = x - x.transpose(-2, -1)  # skew-symmetric
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                q = oneflow.linalg.matrix_exp(a)
            else:
                eye = oneflow.eye(n, dtype=a.dtype, device=a.device)
                q = oneflow.linalg.solve(eye - 0.5 * a, eye + 0.5 * a)
            if n != k:
                q = q[..., :k]
        else:
            a = x.tril(-1)
            tau = 2.0 / (1.0 + (a * a).sum(dim=-2))
            q = _householder_product(a, tau)
            # x's diagonal holds the signs (+-1), neither differentiated nor updated
            q = q * x.diagonal(dim1=-2, dim2=-1).int().to(q.dtype).unsqueeze(-2)
        if self._buffers.get("base") is not None:
            q = self.base @ q
        if transposed:
            q = q.transpose(-2, -1)
        return q

    @oneflow.no_grad()
    def right_inverse(self, q):
        if tuple(q.shape) != self.shape:
            raise ValueError(
                f"Expected a matrix or batch of matrices of shape {self.shape}. "
                f"Got a tensor of shape {tuple(q.shape)}."
            )
        q_init = q
        n, k = q.shape[-2], q.shape[-1]
        transpose = n < k
        if transpose:
            q = q.transpose(-2, -1)
            n, k = k, n
        if "base" not in self._buffers:
            if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                raise NotImplementedError(
                    "It is not possible to assign to the matrix exponential or the Cayley "
                    "parametrizations when use_trivialization=False."
                )
            raise NotImplementedError(
                "orthogonal: the householder map with use_trivialization=False needs geqrf, "
                "which is not implemented"
            )
        if n == k:
            q = q.clone() if _is_orthogonal(q) else _make_orthogonal(q)
        else:  # completed to a full n x n orthogonal matrix
            extra = oneflow.randn(*q.shape[:-2], n, n - k, dtype=q.dtype, device=q.device)
            q = _make_orthogonal(oneflow.cat([q, extra], dim=-1))
        self.base = q
        # -Id: householder(zeros(m, n)) == eye(m, n) needs the signs on the diagonal
        neg_id = oneflow.zeros_like(q_init)
        neg_id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_id


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """Keeps module.<name> (a matrix or a batch of them) orthogonal: a map ("matrix_exp",
    "cayley" or "householder") of an unconstrained tensor, times a base buffer with
    use_trivialization."""
    weight = getattr(module, name, None)
    if not isinstance(weight, oneflow.Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(
            f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions."
        )
    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if weight.shape[-2] == weight.shape[-1] else "householder"
    orth_enum = (
        getattr(_OrthMaps, orthogonal_map, None) if isinstance(orthogonal_map, str) else None
    )
    if orth_enum is None:
        raise ValueError(
            'orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
            f"Got: {orthogonal_map}"
        )
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module
