"""OneFlow vs PyTorch (and NumPy) benchmarks.

Run from the repository root with ``python -m benchmarks run [--filter F] [--device cpu|cuda]
[--quick]``. Each case runs the same work in every framework, interleaved trial by trial, and
reports medians, spreads and the ratio ``torch_time / oneflow_time`` (>1 means OneFlow is faster).
Timing never decides a test's pass or fail; the results land in ``benchmarks/results/``.

Importing this package is cheap: numpy, torch and oneflow are imported only when a run starts,
after the thread count has been pinned (see :mod:`benchmarks.env`).
"""

from benchmarks.registry import all_cases
from benchmarks.timing import RunConfig, run_case

__all__ = ["RunConfig", "all_cases", "run_case"]
