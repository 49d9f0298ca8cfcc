"""The case registry: a Case names its work and builds one callable per framework."""

import re
from dataclasses import dataclass
from typing import Callable, Optional

_CASES = []
FAMILY_ORDER = (
    "dispatch",
    "elementwise",
    "reduction",
    "norm",
    "movement",
    "ops",
    "matmul",
    "linalg",
    "conv",
    "training",
    "data",
    "graph",
    "comm",
    "startup",
)


@dataclass
class Case:
    """A benchmark case.

    ``build(fw)`` returns a zero-argument callable doing the work once (tensors are created
    in ``build``, outside the timed region). It may raise AttributeError or NotImplementedError
    (or the callable may, on first call) when the framework lacks the op: that is reported as
    ``n/a (missing in <framework>)``. ``work`` is bytes (metric GB/s) or flops (GFLOP/s) per
    call; ``ops_per_call`` divides the time for per-op metrics. ``measure`` replaces the
    generic timing loop for cases such as import time.
    """

    name: str
    family: str
    metric: str
    build: Optional[Callable] = None
    work: float = 0.0
    ops_per_call: int = 1
    frameworks: tuple = ("oneflow", "torch", "numpy")
    measure: Optional[Callable] = None

    @property
    def key(self):
        return f"{self.family}/{self.name}"


def register(case):
    """Adds ``case`` to the registry and returns it."""
    _CASES.append(case)
    return case


def all_cases(pattern=None):
    """Registered cases by family, then definition order; ``pattern`` filters ``family/name``."""
    import benchmarks.cases  # noqa: F401  (registers the cases)

    cases = sorted(_CASES, key=_family_rank)
    if not pattern:
        return cases
    rx = re.compile(pattern, re.IGNORECASE)
    return [c for c in cases if rx.search(c.key)]


def _family_rank(case):
    if case.family in FAMILY_ORDER:
        return FAMILY_ORDER.index(case.family)
    return len(FAMILY_ORDER)
