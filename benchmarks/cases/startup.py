"""``import oneflow`` vs ``import torch`` (vs ``import numpy``) in fresh subprocesses."""

import os
import subprocess
import sys

from benchmarks.registry import Case, register
from benchmarks.timing import rotated

_SNIPPET = "import time; t = time.perf_counter(); import {0}; print(time.perf_counter() - t)"


def import_seconds(module):
    """Seconds ``import module`` takes in a fresh interpreter (interpreter start excluded)."""
    out = subprocess.run(
        [sys.executable, "-c", _SNIPPET.format(module)],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=600,
        check=True,
    )
    return float(out.stdout.strip().splitlines()[-1])


def measure_imports(case, frameworks, cfg):
    """One warm-up import each (warms the file cache), then interleaved timed runs."""
    names, statuses = [], {}
    for name in frameworks:
        if name not in case.frameworks:
            continue
        try:
            import_seconds(name)
            names.append(name)
        except (subprocess.SubprocessError, ValueError, IndexError) as exc:
            statuses[name] = {"status": "error", "note": f"{type(exc).__name__}: {exc}"}
    samples = {name: [] for name in names}
    for run in range(cfg.import_runs):
        for name in rotated(names, run):
            samples[name].append(import_seconds(name))
    return samples, statuses, {name: 1 for name in names}


register(Case("import (fresh process)", "startup", "ms", measure=measure_imports))
