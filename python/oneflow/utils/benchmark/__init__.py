"""utils.benchmark (torch.utils.benchmark): Timer and Measurement for timing statements.

A Timer compiles `stmt` and `setup` once, runs setup in a namespace made of `globals`, and times
runs of the statement with time.perf_counter, waiting for queued oneflow work (and the GPU)
before it reads the clock, so asynchronous kernels are counted. timeit(number) gives one
measurement of `number` runs; blocked_autorange repeats blocks until min_run_time has passed;
adaptive_autorange stops once the interquartile range is within threshold of the median."""

import statistics
import textwrap
import time
import timeit as _timeit

__all__ = ["Measurement", "Timer"]


def _sync():
    import oneflow

    oneflow._oneflow_internal.synchronize()
    if oneflow.cuda.is_available():
        oneflow.cuda.synchronize()


class Measurement:
    """Times (seconds per run) of number_per_run runs each, and their summary."""

    def __init__(self, number_per_run, raw_times, task_spec=None, metadata=None):
        self.number_per_run = number_per_run
        self.raw_times = list(raw_times)
        self.task_spec = task_spec or {}
        self.metadata = metadata

    @property
    def times(self):
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def mean(self):
        return statistics.fmean(self.times)

    @property
    def median(self):
        return statistics.median(self.times)

    @property
    def iqr(self):
        ts = sorted(self.times)
        if len(ts) < 2:
            return 0.0
        q = statistics.quantiles(ts, n=4, method="inclusive")
        return q[2] - q[0]

    @property
    def has_warnings(self):
        return len(self.times) > 1 and self.iqr / self.median > 0.1

    @property
    def title(self):
        spec = self.task_spec
        return spec.get("label") or spec.get("stmt", "")

    def meets_confidence(self, threshold=0.1):
        return len(self.times) > 1 and self.iqr / self.median < threshold

    @staticmethod
    def merge(measurements):
        by_task = {}
        for m in measurements:
            key = tuple(sorted(m.task_spec.items()))
            if key in by_task:
                prev = by_task[key]
                times = prev.times + m.times
                by_task[key] = Measurement(1, times, m.task_spec, m.metadata)
            else:
                by_task[key] = m
        return list(by_task.values())

    def __repr__(self):
        spec = self.task_spec
        head = spec.get("label", "")
        if spec.get("sub_label"):
            head += ": " + spec["sub_label"]
        lines = [f"<oneflow.utils.benchmark.Measurement object at {hex(id(self))}>"]
        if head:
            lines.append(head)
        if spec.get("description"):
            lines.append(spec["description"])
        elif spec.get("stmt"):
            lines.append(spec["stmt"])
        if spec.get("setup") and spec["setup"] != "pass":
            lines.append("setup: " + spec["setup"])
        value, unit = _scaled(self.median if len(self.times) > 1 else self.mean)
        lines.append(f"  {'Median: ' if len(self.times) > 1 else ''}{value:.2f} {unit}")
        if len(self.times) > 1:
            iqr, iqr_unit = _scaled(self.iqr)
            lines.append(f"  IQR:    {iqr:.2f} {iqr_unit}")
        lines.append(
            f"  {len(self.times)} measurement{'s' if len(self.times) != 1 else ''}, "
            f"{self.number_per_run} runs , {spec.get('num_threads', 1)} thread"
        )
        return "\n".join(lines)


def _scaled(seconds):
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)):
        if seconds >= scale:
            return seconds / scale, unit
    return seconds / 1e-9, "ns"


class Timer:
    def __init__(
        self,
        stmt="pass",
        setup="pass",
        global_setup="",
        timer=time.perf_counter,
        globals=None,
        label=None,
        sub_label=None,
        description=None,
        env=None,
        num_threads=1,
        language="python",
    ):
        if language not in ("python", "py"):
            raise ValueError(f"Timer: only Python statements are timed, got language={language!r}")
        self._stmt = textwrap.dedent(stmt).strip() or "pass"
        self._setup = textwrap.dedent(setup).strip() or "pass"
        self._globals = dict(globals or {})
        self._num_threads = num_threads
        self._task_spec = {
            "stmt": self._stmt,
            "setup": self._setup,
            "label": label,
            "sub_label": sub_label,
            "description": description,
            "env": env,
            "num_threads": num_threads,
        }
        self._timer = _timeit.Timer(
            stmt=self._stmt, setup=self._setup, timer=self._synced(timer), globals=self._globals
        )

    @staticmethod
    def _synced(timer):
        def clock():
            _sync()
            return timer()

        return clock

    def _run(self, number):
        import oneflow

        previous = oneflow.get_num_threads()
        oneflow.set_num_threads(self._num_threads)
        try:
            return self._timer.timeit(number)
        finally:
            oneflow.set_num_threads(previous)

    def timeit(self, number=1000000):
        self._run(max(1, number // 100))  # warm-up
        return Measurement(number, [self._run(number)], self._task_spec)

    def repeat(self, repeat=-1, number=-1):
        raise NotImplementedError("Timer.repeat: use timeit or blocked_autorange")

    def autorange(self, callback=None):
        number, total = self._timer.autorange(callback)
        return number, total

    def _block_size(self):
        number = 1
        while True:
            if self._run(number) >= 2e-4:
                return number
            number *= 10

    def blocked_autorange(self, callback=None, min_run_time=0.2):
        number = self._block_size()
        times, start = [], time.perf_counter()
        while time.perf_counter() - start < min_run_time or not times:
            t = self._run(number)
            times.append(t)
            if callback is not None:
                callback(number, t)
        return Measurement(number, times, self._task_spec)

    def adaptive_autorange(self, threshold=0.1, *, min_run_time=0.01, max_run_time=10.0,
                           callback=None):  # fmt: skip
        number = self._block_size()
        times, start = [], time.perf_counter()
        while True:
            t = self._run(number)
            times.append(t)
            if callback is not None:
                callback(number, t)
            elapsed = time.perf_counter() - start
            m = Measurement(number, times, self._task_spec)
            if len(times) > 3 and elapsed >= min_run_time and m.meets_confidence(threshold):
                return m
            if elapsed >= max_run_time:
                return m
