"""The timing loop: warm-up, calibrated repetitions, interleaved trials, robust statistics."""

import gc
import math
import statistics
import time
from dataclasses import dataclass

from benchmarks.env import LoadProbe

MISSING = (AttributeError, NotImplementedError)


@dataclass
class RunConfig:
    """How hard to measure. ``quick()`` and ``full()`` are the two CLI presets."""

    warmup: int = 3
    trials: int = 15
    min_trial_s: float = 0.2
    max_reps: int = 100_000
    pause_s: float = 0.02
    import_runs: int = 9
    quick: bool = False

    @classmethod
    def full(cls):
        return cls()

    @classmethod
    def quick_preset(cls):
        return cls(warmup=1, trials=3, min_trial_s=0.02, pause_s=0.01, import_runs=3, quick=True)


def time_reps(fn, reps, sync):
    """Seconds for ``reps`` calls of ``fn``, device-synchronized inside the timed region."""
    sync()
    gc_enabled = gc.isenabled()
    gc.disable()
    try:
        start = time.perf_counter()
        for _ in range(reps):
            fn()
        sync()
        return time.perf_counter() - start
    finally:
        if gc_enabled:
            gc.enable()


def calibrate(fn, sync, cfg):
    """Warms ``fn`` up, then picks the repetitions that make one trial last min_trial_s."""
    for _ in range(cfg.warmup):
        time_reps(fn, 1, sync)
    reps, elapsed = 1, time_reps(fn, 1, sync)
    while elapsed < cfg.min_trial_s / 10 and reps < cfg.max_reps:
        reps *= 10
        elapsed = time_reps(fn, reps, sync)
    per_call = elapsed / reps
    return max(1, min(cfg.max_reps, math.ceil(cfg.min_trial_s / max(per_call, 1e-9))))


def prepare(case, fw):
    """Builds the case for ``fw`` and calls it once: (callable, None) or (None, status)."""
    try:
        fn = case.build(fw)
        fn()
        fw.sync()
    except MISSING as exc:
        return None, {"status": "missing", "note": f"{type(exc).__name__}: {exc}"}
    except Exception as exc:  # a real failure: report it, keep benchmarking the rest
        return None, {"status": "error", "note": f"{type(exc).__name__}: {exc}"}
    return fn, None


class LocalRunner:
    """Runs cases of a framework loaded in this process (``benchmarks.worker.WorkerRunner`` runs
    them in a process of its own). Both hold one prepared case at a time."""

    def __init__(self, fw):
        self.fw = fw
        self.name, self.device, self.version = fw.name, fw.device, fw.version
        self.pid = None
        self._fn = None

    def prepare(self, case):
        """Builds ``case``; returns None when it ran once, else its status record."""
        self._fn, status = prepare(case, self.fw)
        return status

    def calibrate(self, cfg):
        return calibrate(self._fn, self.fw.sync, cfg)

    def time(self, reps):
        return time_reps(self._fn, reps, self.fw.sync)

    def release(self):
        self._fn = None

    def close(self):
        self.release()


def rotated(names, shift):
    """``names`` rotated by ``shift``, so each framework takes its turn going first."""
    if not names:
        return []
    k = shift % len(names)
    return names[k:] + names[:k]


def interleaved_trials(runners, reps, cfg, per_call=1):
    """Alternates frameworks trial by trial; returns {name: [seconds per op, ...]}."""
    names = list(runners)
    samples = {name: [] for name in names}
    for trial in range(cfg.trials):
        for name in rotated(names, trial):
            if runners[name].device == "cpu":
                time.sleep(cfg.pause_s)  # let the other runtime's spinning workers park
            elapsed = runners[name].time(reps[name])
            samples[name].append(elapsed / (reps[name] * per_call))
    return samples


def generic_measure(case, frameworks, cfg):
    """The standard loop over runners (LocalRunner or WorkerRunner): returns
    ({name: samples}, {name: status}, {name: reps})."""
    ready, statuses, reps = {}, {}, {}
    try:
        for name, runner in frameworks.items():
            if name not in case.frameworks:
                continue
            status = runner.prepare(case)
            if status:
                statuses[name] = status
                continue
            ready[name] = runner
            reps[name] = runner.calibrate(cfg)
        samples = interleaved_trials(ready, reps, cfg, case.ops_per_call)
    finally:
        for runner in ready.values():
            runner.release()
    return samples, statuses, reps


def summarize(samples, work):
    """Median, quartiles and extremes of ``samples`` (seconds), plus throughput in G/s."""
    median = statistics.median(samples)
    if len(samples) >= 2:
        q1, _, q3 = statistics.quantiles(samples, n=4, method="inclusive")
    else:
        q1 = q3 = median
    return {
        "status": "ok",
        "median_s": median,
        "q1_s": q1,
        "q3_s": q3,
        "min_s": min(samples),
        "max_s": max(samples),
        "trials": len(samples),
        "throughput": work / median / 1e9 if work and median > 0 else None,
    }


def run_case(case, frameworks, cfg):
    """Measures one case; returns its result record (a JSON-ready dict)."""
    probe = LoadProbe(pids=[r.pid for r in frameworks.values() if r.pid]).start()
    started = time.perf_counter()
    measure = case.measure or generic_measure
    samples, statuses, reps = measure(case, frameworks, cfg)
    results = dict(statuses)
    for name, values in samples.items():
        results[name] = summarize(values, case.work)
        results[name]["reps"] = reps.get(name, 1)
    ratio = None
    if results.get("torch", {}).get("status") == "ok" and "oneflow" in samples:
        if results["oneflow"]["status"] == "ok":
            ratio = results["torch"]["median_s"] / results["oneflow"]["median_s"]
    return {
        "case": case.name,
        "family": case.family,
        "metric": case.metric,
        "work": case.work or None,
        "results": results,
        "ratio": ratio,
        "foreign_load": probe.stop(),
        "seconds": time.perf_counter() - started,
    }
