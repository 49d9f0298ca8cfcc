"""oneflow.distributions.constraint_registry: ``biject_to(constraint)`` and
``transform_to(constraint)``, the transforms from unconstrained reals onto a constraint's set, as
PyTorch's: ``biject_to`` gives a bijection (usable in ``TransformedDistribution`` and with
``log_abs_det_jacobian``), ``transform_to`` any map onto the set (for optimising constrained
parameters through unconstrained ones). ``register`` adds a factory for a constraint class or
instance."""

import numbers

from oneflow.distributions import constraints, transforms

__all__ = ["biject_to", "transform_to"]


class ConstraintRegistry:
    """Factories of transforms, keyed by constraint instance (checked first) or class."""

    def __init__(self):
        self._registry = {}

    def register(self, constraint, factory=None):
        """Registers ``factory(constraint) -> Transform`` for `constraint` (a Constraint
        instance or subclass); usable as a decorator when `factory` is omitted."""
        if factory is None:
            return lambda factory: self.register(constraint, factory)
        if not isinstance(constraint, (type, constraints.Constraint)):
            raise TypeError(
                "Expected constraint to be either a Constraint subclass or instance, but got "
                f"{constraint}"
            )
        self._registry[constraint] = factory
        return factory

    def __call__(self, constraint):
        for key in (constraint, type(constraint)):
            try:
                factory = self._registry[key]
            except (KeyError, TypeError):
                continue
            return factory(constraint)
        raise NotImplementedError(
            f"Cannot transform {type(constraint).__name__} constraints"
        ) from None


biject_to = ConstraintRegistry()
transform_to = ConstraintRegistry()


def _is_scalar(value):
    return isinstance(value, numbers.Number)


for _registry in (biject_to, transform_to):
    _registry.register(constraints.real, lambda c: transforms.identity_transform)
    _registry.register(
        constraints.independent,
        lambda c, _r=_registry: transforms.IndependentTransform(
            _r(c.base_constraint), c.reinterpreted_batch_ndims
        ),
    )
    _registry.register(constraints.positive, lambda c: transforms.ExpTransform())
    _registry.register(constraints.nonnegative, lambda c: transforms.ExpTransform())
    _registry.register(
        type(constraints.positive),
        lambda c: transforms.ComposeTransform(
            [transforms.ExpTransform(), transforms.AffineTransform(c.lower_bound, 1)]
        ),
    )
    _registry.register(
        constraints.greater_than_eq,
        lambda c: transforms.ComposeTransform(
            [transforms.ExpTransform(), transforms.AffineTransform(c.lower_bound, 1)]
        ),
    )
    _registry.register(
        constraints.less_than,
        lambda c: transforms.ComposeTransform(
            [transforms.ExpTransform(), transforms.AffineTransform(c.upper_bound, -1)]
        ),
    )
    _registry.register(constraints.unit_interval, lambda c: transforms.SigmoidTransform())

    def _interval(c):
        if _is_scalar(c.lower_bound) and _is_scalar(c.upper_bound):
            if c.lower_bound == 0 and c.upper_bound == 1:
                return transforms.SigmoidTransform()
        scale = c.upper_bound - c.lower_bound
        return transforms.ComposeTransform(
            [transforms.SigmoidTransform(), transforms.AffineTransform(c.lower_bound, scale)]
        )

    _registry.register(constraints.interval, _interval)
    _registry.register(constraints.half_open_interval, _interval)

    _registry.register(constraints.corr_cholesky, lambda c: transforms.CorrCholeskyTransform())
    _registry.register(
        constraints.cat,
        lambda c, _r=_registry: transforms.CatTransform(
            [_r(part) for part in c.cseq], c.dim, c.lengths
        ),
    )
    _registry.register(
        constraints.stack,
        lambda c, _r=_registry: transforms.StackTransform([_r(part) for part in c.cseq], c.dim),
    )

biject_to.register(constraints.simplex, lambda c: transforms.StickBreakingTransform())
transform_to.register(constraints.simplex, lambda c: transforms.SoftmaxTransform())
transform_to.register(constraints.lower_cholesky, lambda c: transforms.LowerCholeskyTransform())
transform_to.register(
    constraints.positive_definite, lambda c: transforms.PositiveDefiniteTransform()
)
