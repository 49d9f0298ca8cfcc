"""Smoke test for benchmarks/: one case runs briefly and yields a well-formed record.

No timing is asserted; timing belongs in ``python -m benchmarks run``, never in pass/fail tests.
"""

import os
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/ is at the repo root

from benchmarks import RunConfig, all_cases, report, run_case  # noqa: E402
from benchmarks.frameworks import load  # noqa: E402
from benchmarks.timing import LocalRunner  # noqa: E402
from benchmarks.worker import start_workers  # noqa: E402

TINY = RunConfig(warmup=1, trials=2, min_trial_s=0.0, pause_s=0.0, import_runs=1)
RESULT_FIELDS = {"status", "median_s", "q1_s", "q3_s", "min_s", "max_s", "trials", "reps"}


@pytest.fixture(scope="module")
def frameworks():
    loaded, _ = load("cpu", torch.get_num_threads())
    assert "oneflow" in loaded and "torch" in loaded
    return {name: LocalRunner(fw) for name, fw in loaded.items()}


def test_registry_lists_the_families():
    families = {case.family for case in all_cases()}
    assert {"dispatch", "elementwise", "reduction", "matmul", "training", "startup"} <= families
    assert all_cases("no-such-case-anywhere") == []


def test_dispatch_case_record(frameworks):
    (case,) = all_cases(r"dispatch/x \+ 1, 1 elem")
    record = run_case(case, frameworks, TINY)
    assert {"case", "family", "metric", "results", "ratio", "foreign_load"} <= set(record)
    assert record["case"] == case.name and record["metric"] == "us/op"
    for name in ("oneflow", "torch", "numpy"):
        result = record["results"][name]
        assert RESULT_FIELDS <= set(result) and result["status"] == "ok"
        assert result["trials"] == TINY.trials
    assert record["ratio"] > 0
    table = report.markdown([record], _meta())
    assert "Ratio" in table and case.name in table and "Geometric mean" in table


def test_workers_run_each_framework_in_its_own_process():
    runners, skipped = start_workers("cpu", 1)
    try:
        assert set(runners) == {"oneflow", "torch", "numpy"}, skipped
        pids = {r.pid for r in runners.values()}
        assert len(pids) == 3 and os.getpid() not in pids
        (case,) = all_cases(r"elementwise/add 16M")
        record = run_case(case, runners, TINY)
        for name in ("oneflow", "torch", "numpy"):
            assert record["results"][name]["status"] == "ok"
            assert record["results"][name]["trials"] == TINY.trials
        assert record["ratio"] > 0
        # a case for two of the frameworks; the workers keep serving after it
        (softmax,) = all_cases(r"reduction/softmax")
        record = run_case(softmax, runners, TINY)
        assert set(record["results"]) == {"oneflow", "torch"}
        assert record["results"]["oneflow"]["status"] == "ok"
        assert run_case(case, runners, TINY)["results"]["oneflow"]["status"] == "ok"
    finally:
        for runner in runners.values():
            runner.close()
    assert all(r._proc.poll() is not None for r in runners.values())


def test_missing_op_is_reported_not_raised(frameworks):
    (case,) = all_cases(r"reduction/softmax")
    record = run_case(case, frameworks, TINY)
    assert record["results"]["oneflow"]["status"] in ("ok", "missing")
    if record["results"]["oneflow"]["status"] == "missing":
        assert record["ratio"] is None
        assert "n/a (missing in oneflow)" in report.markdown([record], _meta())


def _meta():
    return {
        "device": "cpu",
        "date": "1970-01-01",
        "mode": "test",
        "host_cpu": "test",
        "cpu_count": 1,
        "threads": 1,
        "frameworks": {"oneflow": "0", "torch": "0"},
        "python": "3",
        "git_commit": None,
        "command": "pytest",
        "duration_s": 0.0,
        "trials": TINY.trials,
        "import_runs": TINY.import_runs,
        "loadavg_at_start": None,
        "foreign_load": None,
    }
