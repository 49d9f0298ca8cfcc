"""Benchmark cases, one module per family; importing this package registers them all.

Rows appear in the order of ``benchmarks.registry.FAMILY_ORDER``.
"""

from benchmarks.cases import (  # noqa: F401
    comm,
    conv,
    data,
    dispatch,
    elementwise,
    graph,
    linalg,
    matmul,
    models,
    movement,
    norm,
    ops,
    reduction,
    startup,
    training,
)
