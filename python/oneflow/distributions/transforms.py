"""oneflow.distributions.transforms: invertible maps between constrained sets, with the log
absolute determinant of their Jacobians, as PyTorch's ``torch.distributions.transforms``.

A transform ``t`` maps ``x`` to ``y = t(x)``; ``t.inv`` is its inverse (itself a transform) and
``t.log_abs_det_jacobian(x, y)`` is ``log |dy/dx|``, summed over the transform's event
dimensions. ``TransformedDistribution`` pushes a base distribution through them."""

import math
import numbers

import oneflow
from oneflow.distributions import constraints
from oneflow.distributions.utils import sum_rightmost

__all__ = [
    "AbsTransform",
    "AffineTransform",
    "CatTransform",
    "ComposeTransform",
    "CorrCholeskyTransform",
    "CumulativeDistributionTransform",
    "ExpTransform",
    "IndependentTransform",
    "LowerCholeskyTransform",
    "PositiveDefiniteTransform",
    "PowerTransform",
    "ReshapeTransform",
    "SigmoidTransform",
    "SoftmaxTransform",
    "SoftplusTransform",
    "StackTransform",
    "StickBreakingTransform",
    "TanhTransform",
    "Transform",
    "identity_transform",
]


class Transform:
    """Base of the transforms. Subclasses define ``_call`` (x to y), ``_inverse`` (y to x) and
    ``log_abs_det_jacobian``; ``domain`` and ``codomain`` are constraints, ``bijective`` says
    whether the map is invertible and ``sign`` (for elementwise bijections) whether it is
    increasing (+1) or decreasing (-1). With ``cache_size=1`` the latest pair (x, y) is
    remembered, so that ``inv`` of a value just computed returns the exact input."""

    bijective = False
    domain = constraints.real
    codomain = constraints.real

    def __init__(self, cache_size=0):
        if cache_size not in (0, 1):
            raise ValueError("cache_size must be 0 or 1")
        self._cache_size = cache_size
        self._cached_x_y = (None, None)
        self._inv = None

    @property
    def event_dim(self):
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")

    @property
    def inv(self):
        """The inverse transform, ``t.inv(t(x)) == x``."""
        inv = self._inv
        if inv is None:
            inv = _InverseTransform(self)
            self._inv = inv
        return inv

    @property
    def sign(self):
        raise NotImplementedError

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        raise NotImplementedError(f"{type(self)}.with_cache is not implemented")

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return not self.__eq__(other)

    def __call__(self, x):
        if self._cache_size == 0:
            return self._call(x)
        x_old, y_old = self._cached_x_y
        if x is x_old:
            return y_old
        y = self._call(x)
        self._cached_x_y = (x, y)
        return y

    def _inv_call(self, y):
        if self._cache_size == 0:
            return self._inverse(y)
        x_old, y_old = self._cached_x_y
        if y is y_old:
            return x_old
        x = self._inverse(y)
        self._cached_x_y = (x, y)
        return x

    def _call(self, x):
        raise NotImplementedError

    def _inverse(self, y):
        raise NotImplementedError

    def log_abs_det_jacobian(self, x, y):
        raise NotImplementedError

    def forward_shape(self, shape):
        return shape

    def inverse_shape(self, shape):
        return shape

    def __repr__(self):
        return type(self).__name__ + "()"


class _InverseTransform(Transform):
    """The inverse of a transform: swaps its call and inverse, domain and codomain."""

    def __init__(self, transform):
        super().__init__(cache_size=transform._cache_size)
        self._inv = transform

    @property
    def domain(self):
        return self._inv.codomain

    @property
    def codomain(self):
        return self._inv.domain

    @property
    def bijective(self):
        return self._inv.bijective

    @property
    def sign(self):
        return self._inv.sign

    @property
    def inv(self):
        return self._inv

    def __eq__(self, other):
        return isinstance(other, _InverseTransform) and self._inv == other._inv

    def __repr__(self):
        return f"{type(self).__name__}({self._inv!r})"

    def __call__(self, x):
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x, y):
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape):
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape):
        return self._inv.forward_shape(shape)


class ComposeTransform(Transform):
    """The transforms of `parts` applied in order: ``ComposeTransform([f, g])(x) == g(f(x))``.
    Its log-Jacobian is the sum of the parts', each summed over the dimensions the composed
    transform's event has beyond that part's."""

    def __init__(self, parts, cache_size=0):
        if cache_size:
            parts = [part.with_cache(cache_size) for part in parts]
        super().__init__(cache_size=cache_size)
        self.parts = list(parts)

    def __eq__(self, other):
        return isinstance(other, ComposeTransform) and self.parts == other.parts

    @property
    def domain(self):
        if not self.parts:
            return constraints.real
        domain = self.parts[0].domain
        event_dim = self.parts[-1].codomain.event_dim
        for part in reversed(self.parts):
            event_dim += part.domain.event_dim - part.codomain.event_dim
            event_dim = max(event_dim, part.domain.event_dim)
        if event_dim > domain.event_dim:
            domain = constraints.independent(domain, event_dim - domain.event_dim)
        return domain

    @property
    def codomain(self):
        if not self.parts:
            return constraints.real
        codomain = self.parts[-1].codomain
        event_dim = self.parts[0].domain.event_dim
        for part in self.parts:
            event_dim += part.codomain.event_dim - part.domain.event_dim
            event_dim = max(event_dim, part.codomain.event_dim)
        if event_dim > codomain.event_dim:
            codomain = constraints.independent(codomain, event_dim - codomain.event_dim)
        return codomain

    @property
    def bijective(self):
        return all(p.bijective for p in self.parts)

    @property
    def sign(self):
        sign = 1
        for p in self.parts:
            sign = sign * p.sign
        return sign

    @property
    def inv(self):
        inv = self._inv
        if inv is None:
            inv = ComposeTransform([p.inv for p in reversed(self.parts)])
            inv._inv = self
            self._inv = inv
        return inv

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return ComposeTransform(self.parts, cache_size=cache_size)

    def __call__(self, x):
        for part in self.parts:
            x = part(x)
        return x

    def log_abs_det_jacobian(self, x, y):
        if not self.parts:
            return oneflow.zeros_like(x)
        xs = [x]
        for part in self.parts[:-1]:
            xs.append(part(xs[-1]))
        xs.append(y)
        terms = []
        event_dim = self.domain.event_dim
        for part, xi, yi in zip(self.parts, xs[:-1], xs[1:]):
            terms.append(
                sum_rightmost(part.log_abs_det_jacobian(xi, yi), event_dim - part.domain.event_dim)
            )
            event_dim += part.codomain.event_dim - part.domain.event_dim
        result = terms[0]
        for term in terms[1:]:
            result = result + term
        return result

    def forward_shape(self, shape):
        for part in self.parts:
            shape = part.forward_shape(shape)
        return shape

    def inverse_shape(self, shape):
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return shape

    def __repr__(self):
        inner = ",\n    ".join(repr(p) for p in self.parts)
        return f"{type(self).__name__}(\n    {inner}\n)"


identity_transform = ComposeTransform([])


class ExpTransform(Transform):
    """y = exp(x), from the reals to the positive reals."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = 1

    def __eq__(self, other):
        return isinstance(other, ExpTransform)

    def _call(self, x):
        return x.exp()

    def _inverse(self, y):
        return y.log()

    def log_abs_det_jacobian(self, x, y):
        return x


class PowerTransform(Transform):
    """y = x ** exponent, on the positive reals."""

    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent, cache_size=0):
        super().__init__(cache_size=cache_size)
        if isinstance(exponent, numbers.Number):
            exponent = oneflow.tensor(float(exponent))
        self.exponent = exponent

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return PowerTransform(self.exponent, cache_size=cache_size)

    def __eq__(self, other):
        if not isinstance(other, PowerTransform):
            return False
        a, b = self.exponent, other.exponent
        try:
            return bool((a == b).all())
        except RuntimeError:  # shapes that do not broadcast
            return False

    @property
    def sign(self):
        return self.exponent.sign()

    def forward_shape(self, shape):
        return oneflow.broadcast_shapes(tuple(shape), tuple(self.exponent.shape))

    def inverse_shape(self, shape):
        return self.forward_shape(shape)

    def _call(self, x):
        return x.pow(self.exponent)

    def _inverse(self, y):
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        return (self.exponent * y / x).abs().log()


class SigmoidTransform(Transform):
    """y = sigmoid(x) = 1 / (1 + exp(-x)), from the reals to the unit interval."""

    domain = constraints.real
    codomain = constraints.unit_interval
    bijective = True
    sign = 1

    def __eq__(self, other):
        return isinstance(other, SigmoidTransform)

    def _call(self, x):
        eps = oneflow.finfo(x.dtype).eps
        return oneflow.sigmoid(x).clamp(min=eps, max=1 - eps)

    def _inverse(self, y):
        eps = oneflow.finfo(y.dtype).eps
        y = y.clamp(min=eps, max=1 - eps)
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x, y):
        softplus = oneflow.nn.functional.softplus
        return -softplus(-x) - softplus(x)


class SoftplusTransform(Transform):
    """y = log(1 + exp(x)), from the reals to the positive reals."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = 1

    def __eq__(self, other):
        return isinstance(other, SoftplusTransform)

    def _call(self, x):
        return oneflow.nn.functional.softplus(x)

    def _inverse(self, y):
        return (-(-y).expm1()).log() + y

    def log_abs_det_jacobian(self, x, y):
        return -oneflow.nn.functional.softplus(-x)


class TanhTransform(Transform):
    """y = tanh(x), from the reals to the interval [-1, 1]. Its inverse, atanh, loses precision
    near -1 and 1: build it with ``cache_size=1`` to invert values it has just produced exactly
    (as for the squashed Gaussian policies of RL)."""

    domain = constraints.real
    codomain = constraints.interval(-1.0, 1.0)
    bijective = True
    sign = 1

    def __eq__(self, other):
        return isinstance(other, TanhTransform)

    def _call(self, x):
        return x.tanh()

    def _inverse(self, y):
        return oneflow.atanh(y)

    def log_abs_det_jacobian(self, x, y):
        # log(1 - tanh(x)^2) written stably: 2 * (log 2 - x - softplus(-2x)).
        return 2.0 * (math.log(2.0) - x - oneflow.nn.functional.softplus(-2.0 * x))


class AffineTransform(Transform):
    """y = loc + scale * x (elementwise), with `loc` and `scale` numbers or tensors;
    `event_dim` says how many rightmost dimensions make up one event (the log-Jacobian is summed
    over them)."""

    bijective = True

    def __init__(self, loc, scale, event_dim=0, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.loc = loc
        self.scale = scale
        self._event_dim = event_dim

    @property
    def event_dim(self):
        return self._event_dim

    @property
    def domain(self):
        if self._event_dim == 0:
            return constraints.real
        return constraints.independent(constraints.real, self._event_dim)

    @property
    def codomain(self):
        return self.domain

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self._event_dim, cache_size=cache_size)

    def __eq__(self, other):
        if not isinstance(other, AffineTransform):
            return False
        for a, b in ((self.loc, other.loc), (self.scale, other.scale)):
            if isinstance(a, numbers.Number) and isinstance(b, numbers.Number):
                if a != b:
                    return False
            elif isinstance(a, numbers.Number) or isinstance(b, numbers.Number):
                return False
            elif a.shape != b.shape or not bool((a == b).all()):
                return False
        return True

    @property
    def sign(self):
        if isinstance(self.scale, numbers.Number):
            return 1 if float(self.scale) > 0 else -1 if float(self.scale) < 0 else 0
        return self.scale.sign()

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        scale = self.scale
        if isinstance(scale, numbers.Number):
            result = oneflow.full_like(x, math.log(abs(scale)))
        else:
            result = scale.abs().log() + oneflow.zeros_like(x)
        return sum_rightmost(result, self._event_dim)

    def forward_shape(self, shape):
        for p in (self.loc, self.scale):
            if isinstance(p, oneflow.Tensor):
                shape = oneflow.broadcast_shapes(tuple(shape), tuple(p.shape))
        return shape

    def inverse_shape(self, shape):
        return self.forward_shape(shape)


class IndependentTransform(Transform):
    """`base_transform` applied to events of `reinterpreted_batch_ndims` more rightmost
    dimensions: its log-Jacobian is summed over them."""

    def __init__(self, base_transform, reinterpreted_batch_ndims, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return IndependentTransform(
            self.base_transform, self.reinterpreted_batch_ndims, cache_size=cache_size
        )

    @property
    def domain(self):
        return constraints.independent(self.base_transform.domain, self.reinterpreted_batch_ndims)

    @property
    def codomain(self):
        return constraints.independent(self.base_transform.codomain, self.reinterpreted_batch_ndims)

    @property
    def bijective(self):
        return self.base_transform.bijective

    @property
    def sign(self):
        return self.base_transform.sign

    def _call(self, x):
        return self.base_transform(x)

    def _inverse(self, y):
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y):
        result = self.base_transform.log_abs_det_jacobian(x, y)
        return sum_rightmost(result, self.reinterpreted_batch_ndims)

    def forward_shape(self, shape):
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape):
        return self.base_transform.inverse_shape(shape)

    def __repr__(self):
        return f"{type(self).__name__}({self.base_transform!r}, {self.reinterpreted_batch_ndims})"


class SoftmaxTransform(Transform):
    """y = softmax(x) over the last dimension, from vectors of reals to the simplex. Not a
    bijection (adding a constant to x leaves y unchanged): the inverse is log(y), and there is no
    log-Jacobian."""

    domain = constraints.real_vector
    codomain = constraints.simplex

    def __eq__(self, other):
        return isinstance(other, SoftmaxTransform)

    def _call(self, x):
        probs = (x - x.max(-1, keepdim=True)[0]).exp()
        return probs / probs.sum(-1, keepdim=True)

    def _inverse(self, y):
        return y.log()


def _stick_breaking_offset(x):
    """log(K - k) for k = 0..K-1 (K the size of x's last dimension), so that x = 0 maps to the
    centre of the simplex."""
    n = x.shape[-1]
    return oneflow.arange(n, 0, -1, dtype=x.dtype, device=x.device).log()


class StickBreakingTransform(Transform):
    """A bijection from vectors of K reals to the simplex of K + 1 entries: each entry takes
    the fraction sigmoid(x_k - log(K - k)) of the stick left by the ones before it."""

    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def __eq__(self, other):
        return isinstance(other, StickBreakingTransform)

    def _call(self, x):
        z = oneflow.sigmoid(x - _stick_breaking_offset(x))
        remaining = oneflow.cumprod(1 - z, -1)
        ones = oneflow.ones_like(z[..., :1])
        return oneflow.cat([z, ones], -1) * oneflow.cat([ones, remaining], -1)

    def _inverse(self, y):
        y_crop = y[..., :-1]
        left = (1 - oneflow.cumsum(y_crop, -1)).clamp(min=oneflow.finfo(y.dtype).tiny)
        return y_crop.log() - left.log() + _stick_breaking_offset(y_crop)

    def log_abs_det_jacobian(self, x, y):
        x = x - _stick_breaking_offset(x)
        logsigmoid = oneflow.nn.functional.logsigmoid
        return (-x + logsigmoid(x) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return tuple(shape[:-1]) + (shape[-1] + 1,)

    def inverse_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return tuple(shape[:-1]) + (shape[-1] - 1,)


class LowerCholeskyTransform(Transform):
    """Square matrices to lower-triangular ones with a positive diagonal: the strictly lower
    part is kept and the diagonal exponentiated (the upper part is dropped, so not a
    bijection)."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def __eq__(self, other):
        return isinstance(other, LowerCholeskyTransform)

    def _call(self, x):
        return x.tril(-1) + oneflow.diag_embed(x.diagonal(dim1=-2, dim2=-1).exp())

    def _inverse(self, y):
        return y.tril(-1) + oneflow.diag_embed(y.diagonal(dim1=-2, dim2=-1).log())


class AbsTransform(Transform):
    """y = |x|, from the reals onto the nonnegative reals. Not a bijection: the inverse
    returns y itself (the nonnegative preimage), and there is no log-Jacobian."""

    domain = constraints.real
    codomain = constraints.positive

    def __eq__(self, other):
        return isinstance(other, AbsTransform)

    def _call(self, x):
        return x.abs()

    def _inverse(self, y):
        return y


class ReshapeTransform(Transform):
    """Reshapes the rightmost dimensions of shape `in_shape` to `out_shape` (of as many
    elements); the leading (batch) dimensions are kept. Its log-Jacobian is 0."""

    bijective = True

    def __init__(self, in_shape, out_shape, cache_size=0):
        self.in_shape = oneflow.Size(in_shape)
        self.out_shape = oneflow.Size(out_shape)
        if self.in_shape.numel() != self.out_shape.numel():
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    @property
    def domain(self):
        return constraints.independent(constraints.real, len(self.in_shape))

    @property
    def codomain(self):
        return constraints.independent(constraints.real, len(self.out_shape))

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return ReshapeTransform(self.in_shape, self.out_shape, cache_size=cache_size)

    def _call(self, x):
        batch_shape = tuple(x.shape[: x.ndim - len(self.in_shape)])
        return x.reshape(*batch_shape, *self.out_shape)

    def _inverse(self, y):
        batch_shape = tuple(y.shape[: y.ndim - len(self.out_shape)])
        return y.reshape(*batch_shape, *self.in_shape)

    def log_abs_det_jacobian(self, x, y):
        batch_shape = tuple(x.shape[: x.ndim - len(self.in_shape)])
        return oneflow.zeros(batch_shape, dtype=x.dtype, device=x.device)

    @staticmethod
    def _replace_event(shape, old, new):
        shape = tuple(shape)
        if len(shape) < len(old):
            raise ValueError("Too few dimensions on input")
        cut = len(shape) - len(old)
        if shape[cut:] != tuple(old):
            raise ValueError(f"Shape mismatch: expected {shape[cut:]} but got {tuple(old)}")
        return oneflow.Size(shape[:cut] + tuple(new))

    def forward_shape(self, shape):
        return self._replace_event(shape, self.in_shape, self.out_shape)

    def inverse_shape(self, shape):
        return self._replace_event(shape, self.out_shape, self.in_shape)


def _tril_entries(matrices, offset):
    """The entries of the n x n `matrices` on and below diagonal `offset` (< 0), row by row,
    as vectors."""
    n = matrices.shape[-1]
    rows, cols = oneflow.tril_indices(n, n, offset, device=matrices.device)
    flat = matrices.reshape(*matrices.shape[:-2], n * n)
    return flat.index_select(-1, rows * n + cols)


def _strict_tril_from_vector(vector, n):
    """Vectors of the n (n - 1) / 2 strictly lower entries of n x n matrices, row by row, as
    those matrices (zeros elsewhere): a product with a 0/1 placement matrix, so exact and
    differentiable."""
    rows, cols = oneflow.tril_indices(n, n, -1)
    m = rows.shape[0]
    place = oneflow.zeros(m, n * n, dtype=vector.dtype)
    place[oneflow.arange(m), rows * n + cols] = 1
    place = place.to(vector.device)
    flat = (vector.unsqueeze(-2) @ place).squeeze(-2)
    return flat.reshape(*vector.shape[:-1], n, n)


class CorrCholeskyTransform(Transform):
    """A bijection from vectors of D (D - 1) / 2 reals onto the lower Cholesky factors of D x D
    correlation matrices (lower-triangular, positive diagonal, rows of unit length). The
    vector fills the strictly lower triangle row by row as r = tanh(x) in (-1, 1); each row
    is then a signed stick-breaking of the unit length: y_ij = r_ij sqrt(1 - sum_{k<j} y_ik^2)
    for j < i, and the diagonal takes what is left.

    The log-Jacobian is that of the map onto the strictly lower entries of y (which determine
    the rest). The inverse clamps the recovered tanh values into the range the forward map
    clamps them to, so that factors it produced from large inputs invert to finite vectors
    (PyTorch's give NaN for some)."""

    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def _call(self, x):
        eps = oneflow.finfo(x.dtype).eps
        r = x.tanh().clamp(min=-1 + eps, max=1 - eps)
        n = self.forward_shape(tuple(x.shape))[-1]
        r = _strict_tril_from_vector(r, n)
        # sqrt(1 - sum_{k<j} y_ik^2) = prod_{k<j} sqrt(1 - r_ik^2): the part of the row's unit
        # length left for column j.
        left = (1 - r.pow(2)).sqrt().cumprod(-1)
        left = oneflow.nn.functional.pad(left[..., :-1], (1, 0), value=1.0)
        eye = oneflow.eye(n, dtype=x.dtype, device=x.device)
        return (r + eye) * left

    @staticmethod
    def _left(y):
        """1 - sum_{k<=j} y_ik^2, positive (at least the dtype's tiny: rounding can take rows
        of factors with entries near +-1 to 0 or below)."""
        tiny = oneflow.finfo(y.dtype).tiny
        return (1 - oneflow.cumsum(y * y, -1)).clamp(min=tiny)

    def _inverse(self, y):
        left = oneflow.nn.functional.pad(self._left(y)[..., :-1], (1, 0), value=1.0)
        t = _tril_entries(y, -1) / _tril_entries(left, -1).sqrt()
        # Into the range the forward map clamps tanh to, so that what it produced inverts to
        # finite values.
        eps = oneflow.finfo(y.dtype).eps
        t = t.clamp(min=-1 + eps, max=1 - eps)
        return 0.5 * (oneflow.log1p(t) - oneflow.log1p(-t))

    def log_abs_det_jacobian(self, x, y):
        # dy_ij / dr_ij = sqrt(1 - sum_{k<j} y_ik^2) (y_ij depends on r_ik for k <= j only: a
        # triangular Jacobian). Those with j >= 1 are the entries (i, j - 1) of
        # 1 - cumsum(y^2), j - 1 <= i - 2; those with j = 0 are 1.
        left = self._left(y)
        stick_breaking = 0.5 * _tril_entries(left, -2).log().sum(-1)
        # log(1 - tanh(x)^2) = 2 (log 2 - x - softplus(-2x)).
        softplus = oneflow.nn.functional.softplus
        tanh = 2.0 * (math.log(2.0) - x - softplus(-2.0 * x)).sum(-1)
        return stick_breaking + tanh

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        n = shape[-1]
        d = round((0.25 + 2 * n) ** 0.5 + 0.5)
        if d * (d - 1) // 2 != n:
            raise ValueError("Input is not a flattened lower-diagonal number")
        return tuple(shape[:-1]) + (d, d)

    def inverse_shape(self, shape):
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        d = shape[-1]
        return tuple(shape[:-2]) + (d * (d - 1) // 2,)


class PositiveDefiniteTransform(Transform):
    """Square matrices onto symmetric positive-definite ones: L L^T for the lower Cholesky
    factor L that ``LowerCholeskyTransform`` makes of them (so not a bijection; the inverse
    maps back from the Cholesky factor)."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def __eq__(self, other):
        return isinstance(other, PositiveDefiniteTransform)

    def _call(self, x):
        factor = LowerCholeskyTransform()(x)
        return factor @ factor.transpose(-1, -2)

    def _inverse(self, y):
        return LowerCholeskyTransform().inv(oneflow.linalg.cholesky(y))


def _check_slicing(dim, size, value, name):
    """AssertionError unless `value` has dimension `dim` of size `size`."""
    if not -value.ndim <= dim < value.ndim:
        raise AssertionError(f"dim {dim} out of range for {name} with {value.ndim} dimensions")
    if value.shape[dim] != size:
        raise AssertionError(f"{name}.size({dim}) = {value.shape[dim]} must equal {size}")


class CatTransform(Transform):
    """The transforms `tseq` applied to consecutive slices of lengths `lengths` (default all 1)
    along dimension `dim`, the results joined as ``oneflow.cat`` would."""

    def __init__(self, tseq, dim=0, lengths=None, cache_size=0):
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.lengths = [1] * len(self.transforms) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.transforms):
            raise AssertionError(
                f"lengths ({len(self.lengths)}) must match transforms ({len(self.transforms)})"
            )
        self.dim = dim

    @property
    def event_dim(self):
        return max(t.event_dim for t in self.transforms)

    @property
    def length(self):
        return sum(self.lengths)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @property
    def domain(self):
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @property
    def codomain(self):
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _slices(self, value):
        start = 0
        for length in self.lengths:
            yield value.narrow(self.dim, start, length)
            start += length

    def _call(self, x):
        _check_slicing(self.dim, self.length, x, "x")
        parts = [t(xs) for t, xs in zip(self.transforms, self._slices(x))]
        return oneflow.cat(parts, self.dim)

    def _inverse(self, y):
        _check_slicing(self.dim, self.length, y, "y")
        parts = [t.inv(ys) for t, ys in zip(self.transforms, self._slices(y))]
        return oneflow.cat(parts, self.dim)

    def log_abs_det_jacobian(self, x, y):
        _check_slicing(self.dim, self.length, x, "x")
        _check_slicing(self.dim, self.length, y, "y")
        event_dim = self.event_dim
        terms = []
        for t, xs, ys in zip(self.transforms, self._slices(x), self._slices(y)):
            terms.append(sum_rightmost(t.log_abs_det_jacobian(xs, ys), event_dim - t.event_dim))
        # The joined dimension, counted from the right of the log-Jacobians (which lack the
        # event dimensions): joined there when it is a batch dimension, summed over when it
        # lies inside the event.
        dim = (self.dim - x.ndim if self.dim >= 0 else self.dim) + event_dim
        if dim < 0:
            return oneflow.cat(terms, dim)
        result = terms[0]
        for term in terms[1:]:
            result = result + term
        return result


class StackTransform(Transform):
    """The transforms `tseq` applied to the slices along dimension `dim` (one each), the
    results joined as ``oneflow.stack`` would."""

    def __init__(self, tseq, dim=0, cache_size=0):
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.dim = dim

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @property
    def domain(self):
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @property
    def codomain(self):
        return constraints.stack([t.codomain for t in self.transforms], self.dim)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    def _slices(self, value):
        return [value.select(self.dim, i) for i in range(value.shape[self.dim])]

    def _call(self, x):
        _check_slicing(self.dim, len(self.transforms), x, "x")
        parts = [t(xs) for t, xs in zip(self.transforms, self._slices(x))]
        return oneflow.stack(parts, self.dim)

    def _inverse(self, y):
        _check_slicing(self.dim, len(self.transforms), y, "y")
        parts = [t.inv(ys) for t, ys in zip(self.transforms, self._slices(y))]
        return oneflow.stack(parts, self.dim)

    def log_abs_det_jacobian(self, x, y):
        _check_slicing(self.dim, len(self.transforms), x, "x")
        _check_slicing(self.dim, len(self.transforms), y, "y")
        terms = [
            t.log_abs_det_jacobian(xs, ys)
            for t, xs, ys in zip(self.transforms, self._slices(x), self._slices(y))
        ]
        return oneflow.stack(terms, self.dim)


class CumulativeDistributionTransform(Transform):
    """y = F(x), F the CDF of `distribution`: from its support onto the unit interval, with
    inverse its ``icdf`` and log-Jacobian its ``log_prob`` (e.g. the marginals of a Gaussian
    copula)."""

    bijective = True
    codomain = constraints.unit_interval
    sign = 1

    def __init__(self, distribution, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self):
        return self.distribution.support

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CumulativeDistributionTransform(self.distribution, cache_size=cache_size)

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)
