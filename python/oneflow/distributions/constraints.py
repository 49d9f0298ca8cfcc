"""oneflow.distributions.constraints: the sets a distribution's parameters and values live in.

A constraint's ``check(value)`` returns a bool tensor saying, element by element (or event by
event, for constraints with ``event_dim > 0``), whether ``value`` lies in the set. Distributions
name them in ``arg_constraints`` (checked when the distribution is built) and ``support`` (checked
for the values given to ``log_prob`` and ``cdf``) while argument validation is on. The transforms
are in ``oneflow.distributions.transforms`` and ``biject_to`` / ``transform_to`` in
``oneflow.distributions.constraint_registry``."""

__all__ = [
    "Constraint",
    "boolean",
    "cat",
    "corr_cholesky",
    "dependent",
    "dependent_property",
    "greater_than",
    "greater_than_eq",
    "half_open_interval",
    "independent",
    "integer_interval",
    "interval",
    "is_dependent",
    "less_than",
    "lower_cholesky",
    "lower_triangular",
    "MixtureSameFamilyConstraint",
    "multinomial",
    "nonnegative",
    "nonnegative_integer",
    "one_hot",
    "positive_definite",
    "positive",
    "positive_integer",
    "positive_semidefinite",
    "real",
    "real_vector",
    "simplex",
    "square",
    "stack",
    "symmetric",
    "unit_interval",
]


class Constraint:
    """Base of the constraints: ``is_discrete`` says whether the set is discrete and
    ``event_dim`` how many rightmost dimensions make up one event."""

    is_discrete = False
    event_dim = 0

    def check(self, value):
        raise NotImplementedError

    def __repr__(self):
        return type(self).__name__.lstrip("_") + "()"


class _Dependent(Constraint):
    """A constraint that depends on other parameters of the distribution, so cannot be checked
    on its own (PyTorch raises ValueError when asked to)."""

    def __init__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        self._is_discrete = is_discrete
        self._event_dim = event_dim

    @property
    def is_discrete(self):
        if self._is_discrete is NotImplemented:
            raise NotImplementedError(".is_discrete cannot be determined statically")
        return self._is_discrete

    @property
    def event_dim(self):
        if self._event_dim is NotImplemented:
            raise NotImplementedError(".event_dim cannot be determined statically")
        return self._event_dim

    def __call__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        if is_discrete is NotImplemented:
            is_discrete = self._is_discrete
        if event_dim is NotImplemented:
            event_dim = self._event_dim
        return _Dependent(is_discrete=is_discrete, event_dim=event_dim)

    def check(self, value):
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint):
    return isinstance(constraint, _Dependent)


class _DependentProperty(property, _Dependent):
    """A property of a distribution that returns a constraint built from its parameters (a
    support such as ``integer_interval(0, K - 1)``); on the class it reads as a dependent
    constraint. Used as ``@dependent_property`` or ``@dependent_property(event_dim=0)``."""

    def __init__(self, fn=None, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        property.__init__(self, fn)
        _Dependent.__init__(self, is_discrete=is_discrete, event_dim=event_dim)

    def __call__(self, fn):
        return _DependentProperty(fn, is_discrete=self._is_discrete, event_dim=self._event_dim)


class _Real(Constraint):
    """Every real number except NaN (infinities included, as PyTorch)."""

    def check(self, value):
        return value == value


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value):
        return (value == 0) | (value == 1)


class _IntegerInterval(Constraint):
    is_discrete = True

    def __init__(self, lower_bound, upper_bound):
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound

    def check(self, value):
        return (value % 1 == 0) & (value >= self.lower_bound) & (value <= self.upper_bound)

    def __repr__(self):
        return f"IntegerInterval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _IntegerGreaterThan(Constraint):
    is_discrete = True

    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return (value % 1 == 0) & (value >= self.lower_bound)

    def __repr__(self):
        return f"IntegerGreaterThan(lower_bound={self.lower_bound})"


class _GreaterThan(Constraint):
    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return self.lower_bound < value

    def __repr__(self):
        return f"GreaterThan(lower_bound={self.lower_bound})"


class _GreaterThanEq(Constraint):
    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return self.lower_bound <= value

    def __repr__(self):
        return f"GreaterThanEq(lower_bound={self.lower_bound})"


class _LessThan(Constraint):
    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, value):
        return value < self.upper_bound

    def __repr__(self):
        return f"LessThan(upper_bound={self.upper_bound})"


class _Interval(Constraint):
    """The closed interval [lower_bound, upper_bound]."""

    def __init__(self, lower_bound, upper_bound):
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound

    def check(self, value):
        return (self.lower_bound <= value) & (value <= self.upper_bound)

    def __repr__(self):
        return f"Interval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _HalfOpenInterval(Constraint):
    """The interval [lower_bound, upper_bound)."""

    def __init__(self, lower_bound, upper_bound):
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound

    def check(self, value):
        return (self.lower_bound <= value) & (value < self.upper_bound)

    def __repr__(self):
        return f"HalfOpenInterval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _Independent(Constraint):
    """`base` over events of `reinterpreted_batch_ndims` more rightmost dimensions: an event
    satisfies it when all its elements do."""

    def __init__(self, base_constraint, reinterpreted_batch_ndims):
        self.base_constraint = base_constraint
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    @property
    def is_discrete(self):
        return self.base_constraint.is_discrete

    @property
    def event_dim(self):
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def check(self, value):
        result = self.base_constraint.check(value)
        n = self.reinterpreted_batch_ndims
        if result.ndim < n:
            raise ValueError(
                f"Expected value.dim() >= {self.event_dim} but got {value.ndim} (value of shape "
                f"{tuple(value.shape)})"
            )
        if n:
            result = result.reshape(*result.shape[: result.ndim - n], -1).all(-1)
        return result

    def __repr__(self):
        return f"IndependentConstraint({self.base_constraint!r}, {self.reinterpreted_batch_ndims})"


class _Simplex(Constraint):
    """Vectors (along the last dimension) of nonnegative entries summing to 1, within 1e-6."""

    event_dim = 1

    def check(self, value):
        return (value >= 0).all(-1) & ((value.sum(-1) - 1).abs() < 1e-6)


class _Multinomial(Constraint):
    """Vectors (along the last dimension) of nonnegative counts summing to at most
    `upper_bound`."""

    is_discrete = True
    event_dim = 1

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, value):
        return (value >= 0).all(-1) & (value.sum(-1) <= self.upper_bound)

    def __repr__(self):
        return f"Multinomial(upper_bound={self.upper_bound})"


class _OneHot(Constraint):
    """One-hot vectors (along the last dimension): entries 0 or 1 summing to 1."""

    is_discrete = True
    event_dim = 1

    def check(self, value):
        is_boolean = (value == 0) | (value == 1)
        return is_boolean.all(-1) & (value.sum(-1) == 1)


class _LowerCholesky(Constraint):
    """Square lower-triangular matrices (last two dimensions) with a positive diagonal."""

    event_dim = 2

    def check(self, value):
        lower = (value.tril() == value).reshape(*value.shape[:-2], -1).all(-1)
        positive_diagonal = (value.diagonal(dim1=-2, dim2=-1) > 0).all(-1)
        return lower & positive_diagonal


class _CorrCholesky(Constraint):
    """Lower Cholesky factors of correlation matrices (last two dimensions): lower-triangular
    with a positive diagonal and rows of unit Euclidean length, within 10 * n * eps of the
    dtype for n x n matrices."""

    event_dim = 2

    def check(self, value):
        import oneflow

        tol = oneflow.finfo(value.dtype).eps * value.shape[-1] * 10
        row_norm = oneflow.linalg.norm(value.detach(), dim=-1)
        unit_rows = ((row_norm - 1).abs() <= tol).all(-1)
        return _LowerCholesky().check(value) & unit_rows


class _PositiveDefinite(Constraint):
    """Symmetric positive-definite matrices (last two dimensions): symmetric within
    1e-6 + 1e-5 * |entry| and with a Cholesky factorisation."""

    event_dim = 2

    def check(self, value):
        import oneflow

        transposed = value.transpose(-1, -2)
        near = (value - transposed).abs() <= 1e-6 + 1e-5 * transposed.abs()
        symmetric = near.reshape(*value.shape[:-2], -1).all(-1)
        _, info = oneflow.linalg.cholesky_ex(value)
        return symmetric & (info == 0)


class _LowerTriangular(Constraint):
    """Lower-triangular matrices (last two dimensions)."""

    event_dim = 2

    def check(self, value):
        return (value.tril() == value).reshape(*value.shape[:-2], -1).all(-1)


class _Square(Constraint):
    """Square matrices (last two dimensions): the answer is the same for every matrix."""

    event_dim = 2

    def check(self, value):
        import oneflow

        is_square = value.shape[-2] == value.shape[-1]
        return oneflow.full(tuple(value.shape[:-2]), is_square, dtype=oneflow.bool).to(value.device)


class _Symmetric(_Square):
    """Square matrices equal to their transpose within an absolute 1e-6 (and PyTorch's relative
    1e-5 of isclose)."""

    def check(self, value):
        import oneflow

        square = super().check(value)
        if not bool(square.all()):
            return square
        close = oneflow.isclose(value, value.transpose(-1, -2), atol=1e-6)
        return close.all(-2).all(-1)


class _PositiveSemidefinite(_Symmetric):
    """Symmetric matrices whose eigenvalues are all nonnegative."""

    def check(self, value):
        import oneflow

        symmetric = super().check(value)
        if not bool(symmetric.all()):
            return symmetric
        return (oneflow.linalg.eigvalsh(value) >= 0).all(-1)


class MixtureSameFamilyConstraint(Constraint):
    """The support of a MixtureSameFamily whose components have support `base_constraint`: a
    value (without the component dimension) is checked as one component's value."""

    def __init__(self, base_constraint):
        if not isinstance(base_constraint, Constraint):
            raise AssertionError("base_constraint must be a Constraint instance")
        self.base_constraint = base_constraint

    @property
    def is_discrete(self):
        return self.base_constraint.is_discrete

    @property
    def event_dim(self):
        return self.base_constraint.event_dim

    def check(self, value):
        if value.ndim < self.event_dim:
            raise ValueError(
                f"Expected value.dim() >= {self.event_dim} but got {value.ndim} (value of shape "
                f"{tuple(value.shape)})"
            )
        # the component dimension, of size 1, just left of the event dimensions
        result = self.base_constraint.check(value.unsqueeze(-1 - self.event_dim))
        return result.all(-1)

    def __repr__(self):
        return f"MixtureSameFamilyConstraint({self.base_constraint!r})"


class _Cat(Constraint):
    """The constraints `cseq` applied to consecutive slices of lengths `lengths` (default all
    1) along dimension `dim`, as ``oneflow.cat`` joins them."""

    def __init__(self, cseq, dim=0, lengths=None):
        if not all(isinstance(c, Constraint) for c in cseq):
            raise AssertionError("All elements of cseq must be Constraint instances")
        self.cseq = list(cseq)
        self.lengths = [1] * len(self.cseq) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.cseq):
            raise AssertionError(
                f"lengths ({len(self.lengths)}) must match cseq ({len(self.cseq)})"
            )
        self.dim = dim

    @property
    def is_discrete(self):
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self):
        return max(c.event_dim for c in self.cseq)

    def check(self, value):
        import oneflow

        _check_dim(self.dim, value)
        checks = []
        start = 0
        for constraint, length in zip(self.cseq, self.lengths):
            checks.append(constraint.check(value.narrow(self.dim, start, length)))
            start += length
        return oneflow.cat(checks, self.dim)


class _Stack(Constraint):
    """The constraints `cseq` applied to the slices along dimension `dim` (one each), as
    ``oneflow.stack`` joins them."""

    def __init__(self, cseq, dim=0):
        if not all(isinstance(c, Constraint) for c in cseq):
            raise AssertionError("All elements of cseq must be Constraint instances")
        self.cseq = list(cseq)
        self.dim = dim

    @property
    def is_discrete(self):
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self):
        # A negative dim reaching into the event adds the stacked dimension to it.
        dim = max(c.event_dim for c in self.cseq)
        return dim + 1 if self.dim + dim < 0 else dim

    def check(self, value):
        import oneflow

        _check_dim(self.dim, value)
        slices = [value.select(self.dim, i) for i in range(value.shape[self.dim])]
        return oneflow.stack([c.check(v) for v, c in zip(slices, self.cseq)], self.dim)


def _check_dim(dim, value):
    if not -value.ndim <= dim < value.ndim:
        raise AssertionError(f"dim {dim} out of range for value with {value.ndim} dimensions")


dependent = _Dependent()
dependent_property = _DependentProperty
independent = _Independent
boolean = _Boolean()
real = _Real()
real_vector = _Independent(real, 1)
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
unit_interval = _Interval(0.0, 1.0)
interval = _Interval
half_open_interval = _HalfOpenInterval
integer_interval = _IntegerInterval
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
simplex = _Simplex()
one_hot = _OneHot()
multinomial = _Multinomial
lower_cholesky = _LowerCholesky()
corr_cholesky = _CorrCholesky()
positive_definite = _PositiveDefinite()
lower_triangular = _LowerTriangular()
square = _Square()
symmetric = _Symmetric()
positive_semidefinite = _PositiveSemidefinite()
cat = _Cat
stack = _Stack
