"""oneflow.profiler: which kernels ran, how often and for how long (PyTorch's torch.profiler).

While a ``profile`` runs, the engine times every kernel where it runs (core/eager/profiler.h):
on the CPU stream thread, on the calling thread for kernels run at the call, inside a compiled
graph's replay. ``record_function`` adds named ranges on the calling thread. ``key_averages()``
groups the events by name (and input shapes) into PyTorch's table; ``export_chrome_trace`` writes
them for chrome://tracing or Perfetto. A kernel's time is the kernel's, not the Python call's:
queued ops return before their kernel runs. CUDA kernels are timed on the host around their
launch (no device-side timing), so the device columns stay zero.
"""

import enum
import functools
import json
import os
import socket
import threading
import time
import warnings

from oneflow import _oneflow_internal as _internal

__all__ = [
    "EventList",
    "FunctionEvent",
    "FunctionEventAvg",
    "ProfilerAction",
    "ProfilerActivity",
    "profile",
    "record_function",
    "schedule",
    "supported_activities",
    "tensorboard_trace_handler",
]


class ProfilerActivity(enum.Enum):
    CPU = 0
    CUDA = 1


def supported_activities():
    import oneflow

    acts = {ProfilerActivity.CPU}
    if oneflow.cuda.is_available():
        acts.add(ProfilerActivity.CUDA)
    return acts


class ProfilerAction(enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """The profiler's action at each step: after ``skip_first`` steps, cycles of ``wait`` idle,
    ``warmup`` warm-up and ``active`` recorded steps (the last one saves), ``repeat`` times
    (0: forever); ``skip_first_wait`` drops the first cycle's wait."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError("Invalid profiler schedule arguments")
    if warmup == 0:
        warnings.warn(
            "Profiler won't be using warmup, this can skew profiler results", stacklevel=2
        )

    def action(step):
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait:
            step += wait
        cycle = wait + warmup + active
        if repeat > 0 and step // cycle >= repeat:
            return ProfilerAction.NONE
        pos = step % cycle
        if pos < wait:
            return ProfilerAction.NONE
        if pos < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if pos < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    return action


def _default_schedule(_step):
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False, use_python_export=False):
    """An ``on_trace_ready`` that writes each trace as ``<worker>.<ns>.pt.trace.json(.gz)``
    into ``dir_name``."""

    def handler(prof):
        os.makedirs(dir_name, exist_ok=True)
        worker = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        name = f"{worker}.{time.time_ns()}.pt.trace.json" + (".gz" if use_gzip else "")
        prof.export_chrome_trace(os.path.join(dir_name, name))

    return handler


def _format_time(us, unit=None):
    if unit is not None:
        if unit not in ("s", "ms", "us"):
            raise ValueError(f"profiler: time_unit must be 's', 'ms' or 'us', got {unit!r}")
        scale = {"s": 1e6, "ms": 1e3, "us": 1.0}[unit]
        return f"{us / scale:.3f}{unit}"
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


class FunctionEvent:
    """One timed kernel or ``record_function`` range; times in microseconds."""

    def __init__(self, id, name, thread, start_us, end_us, input_shapes, device_type, range_):
        self.id, self.name, self.thread = id, name, thread
        self.start_us, self.end_us = start_us, end_us
        self.input_shapes = input_shapes
        self.device_type = device_type
        self.is_user_annotation = range_
        self.cpu_children = []
        self.cpu_parent = None
        self.count = 1

    key = property(lambda self: self.name)
    cpu_time_total = property(lambda self: self.end_us - self.start_us)
    cpu_time = cpu_time_total
    self_cpu_time_total = property(
        lambda self: self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)
    )
    # not recorded: no device timing, no memory
    device_time_total = self_device_time_total = cuda_time_total = property(lambda self: 0.0)
    cpu_memory_usage = self_cpu_memory_usage = property(lambda self: 0)
    device_memory_usage = self_device_memory_usage = property(lambda self: 0)

    @property
    def time_range(self):
        return (self.start_us, self.end_us)

    def __repr__(self):
        return (
            f"<FunctionEvent id={self.id} name={self.name} thread={self.thread} "
            f"cpu_time={_format_time(self.cpu_time_total)} "
            f"input_shapes={self.input_shapes}>"
        )


class FunctionEventAvg:
    """The events of one key (a name, or a name and input shapes) summed."""

    def __init__(self, key, input_shapes):
        self.key, self.input_shapes = key, input_shapes
        self.count = 0
        self.cpu_time_total = self.self_cpu_time_total = 0.0
        self.device_time_total = self.self_device_time_total = self.cuda_time_total = 0.0
        self.cpu_memory_usage = self.self_cpu_memory_usage = 0
        self.device_memory_usage = self.self_device_memory_usage = 0
        self.is_user_annotation = False

    def add(self, e):
        self.count += e.count
        self.cpu_time_total += e.cpu_time_total
        self.self_cpu_time_total += e.self_cpu_time_total
        self.is_user_annotation = e.is_user_annotation
        return self

    @property
    def cpu_time(self):
        return self.cpu_time_total / self.count if self.count else 0.0

    def __repr__(self):
        return (
            f"<FunctionEventAvg key={self.key} "
            f"self_cpu_time={_format_time(self.self_cpu_time_total)} "
            f"cpu_time={_format_time(self.cpu_time)} count={self.count} "
            f"input_shapes={self.input_shapes}>"
        )


_SORT_KEYS = (
    "cpu_time",
    "cpu_time_total",
    "self_cpu_time_total",
    "count",
    "cuda_time_total",
    "device_time_total",
    "self_cuda_time_total",
    "self_device_time_total",
    "cpu_memory_usage",
    "self_cpu_memory_usage",
    "cuda_memory_usage",
    "self_cuda_memory_usage",
    "device_memory_usage",
    "self_device_memory_usage",
)


class EventList(list):
    """A list of events (or of their averages) with PyTorch's table and trace export."""

    def __init__(self, events=(), group_by_input_shape=False):
        super().__init__(events)
        self._by_shape = group_by_input_shape

    @property
    def self_cpu_time_total(self):
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        groups = {}
        for e in self:
            shapes = str(e.input_shapes) if group_by_input_shape else ""
            k = (e.key, shapes)
            if k not in groups:
                groups[k] = FunctionEventAvg(
                    e.key, e.input_shapes if group_by_input_shape else None
                )
            groups[k].add(e)
        return EventList(groups.values(), group_by_input_shape)

    def total_average(self):
        total = FunctionEventAvg("Total", None)
        for e in self:
            total.add(e)
        return total

    def table(
        self,
        sort_by=None,
        row_limit=100,
        max_src_column_width=75,
        max_name_column_width=55,
        max_shapes_column_width=80,
        header=None,
        top_level_events_only=False,
        time_unit=None,
    ):
        rows = list(self)
        if sort_by is not None:
            key = sort_by.replace("cuda", "device")
            if sort_by not in _SORT_KEYS:
                raise AttributeError(
                    f"profiler: sort_by must be one of {', '.join(_SORT_KEYS)}, got {sort_by!r}"
                )
            rows.sort(key=lambda e: getattr(e, key), reverse=True)
        if top_level_events_only:
            rows = [e for e in rows if getattr(e, "cpu_parent", None) is None]
        if row_limit is not None and row_limit >= 0:
            rows = rows[:row_limit]
        total_self = self.self_cpu_time_total
        name_w = min(max_name_column_width, max([len(e.key) for e in rows] + [4]) + 4)
        shapes = self._by_shape and any(e.input_shapes is not None for e in self)
        cols = [
            ("Name", name_w),
            ("Self CPU %", 12),
            ("Self CPU", 12),
            ("CPU total %", 12),
            ("CPU total", 12),
            ("CPU time avg", 12),
            ("# of Calls", 12),
        ]
        if shapes:
            widest = max([len(str(e.input_shapes)) for e in rows] + [0])
            shape_w = min(max_shapes_column_width, widest + 4)
            cols.append(("Input Shapes", max(shape_w, 14)))
        line = "".join("-" * w + "  " for _, w in cols)
        out = []
        if header:
            out += ["=" * len(line), header]
        out += [line, "".join(f"{t:>{w}}  " for t, w in cols), line]

        def pct(v):
            return f"{100.0 * v / total_self:.2f}%" if total_self else "0.00%"

        for e in rows:
            name = e.key if len(e.key) <= name_w else e.key[: name_w - 3] + "..."
            cells = [
                name,
                pct(e.self_cpu_time_total),
                _format_time(e.self_cpu_time_total, time_unit),
                pct(e.cpu_time_total),
                _format_time(e.cpu_time_total, time_unit),
                _format_time(e.cpu_time, time_unit),
                str(e.count),
            ]
            if shapes:
                s = str(e.input_shapes)
                cells.append(s if len(s) <= cols[-1][1] else s[: cols[-1][1] - 3] + "...")
            out.append("".join(f"{c:>{w}}  " for c, (_, w) in zip(cells, cols)))
        out += [line, f"Self CPU time total: {_format_time(total_self, time_unit)}", ""]
        return "\n".join(out)

    def __str__(self):
        return self.table()

    def export_chrome_trace(self, path):
        events = []
        for e in self:
            if not isinstance(e, FunctionEvent):
                raise RuntimeError("profiler: export_chrome_trace needs events, not averages")
            args = {} if e.input_shapes is None else {"Input Dims": e.input_shapes}
            events.append(
                {
                    "ph": "X",
                    "cat": "user_annotation" if e.is_user_annotation else "kernel",
                    "name": e.name,
                    "pid": os.getpid(),
                    "tid": e.thread,
                    "ts": e.start_us,
                    "dur": e.cpu_time_total,
                    "args": dict(args, device=e.device_type),
                }
            )
        data = json.dumps({"traceEvents": events, "displayTimeUnit": "ms"})
        if path.endswith(".gz"):
            import gzip

            with gzip.open(path, "wt") as f:
                f.write(data)
        else:
            with open(path, "w") as f:
                f.write(data)


# ranges of record_function while a profile records: (name, thread, start_ns, end_ns)
_ranges_lock = threading.Lock()
_ranges = None


class record_function:
    """A named range on the calling thread, shown with the kernels while a profile records.
    A context manager and a decorator."""

    def __init__(self, name, args=None):
        if not isinstance(name, str):
            raise TypeError(f"record_function: name must be a str, got {type(name).__name__}")
        self.name, self.args = name, args
        self._start = None

    def __enter__(self):
        if _ranges is not None:
            self._start = _internal._profiler_now_ns()
        return self

    def __exit__(self, *exc):
        if self._start is not None:
            end = _internal._profiler_now_ns()
            with _ranges_lock:
                if _ranges is not None:
                    _ranges.append((self.name, _internal._profiler_thread(), self._start, end))
            self._start = None
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)

        return wrapper


def _sync():
    import oneflow

    oneflow.cpu.synchronize()
    if oneflow.cuda.is_available():
        oneflow.cuda.synchronize()


def _build_events(kernels, ranges, t0):
    """FunctionEvents (times in us from t0), each with its enclosing event on its thread."""
    events = []
    for name, cuda, thread, start, end, shapes in kernels:
        events.append(
            FunctionEvent(
                len(events),
                name,
                thread,
                (start - t0) / 1e3,
                (end - t0) / 1e3,
                shapes,
                "cuda" if cuda else "cpu",
                False,
            )
        )
    for name, thread, start, end in ranges:
        events.append(
            FunctionEvent(
                len(events), name, thread, (start - t0) / 1e3, (end - t0) / 1e3, [], "cpu", True
            )
        )
    by_thread = {}
    for e in events:
        by_thread.setdefault(e.thread, []).append(e)
    for evs in by_thread.values():
        # outer first at equal starts; an event's parent is the innermost open one around it
        evs.sort(key=lambda e: (e.start_us, -e.end_us))
        stack = []
        for e in evs:
            while stack and stack[-1].end_us <= e.start_us:
                stack.pop()
            if stack and e.end_us <= stack[-1].end_us:
                e.cpu_parent = stack[-1]
                stack[-1].cpu_children.append(e)
            stack.append(e)
    events.sort(key=lambda e: e.start_us)
    return EventList(events)


class profile:
    """Records the kernels that run between start and stop (``with`` or ``start``/``stop``),
    stepwise with a ``schedule`` and ``step()``, as PyTorch's torch.profiler.profile."""

    def __init__(
        self,
        activities=None,
        *,
        schedule=None,
        on_trace_ready=None,
        record_shapes=False,
        profile_memory=False,
        with_stack=False,
        with_flops=False,
        with_modules=False,
        experimental_config=None,
        execution_trace_observer=None,
        acc_events=False,
        use_cuda=None,
        custom_trace_id_callback=None,
        post_processing_timeout_s=None,
    ):
        self.activities = set(activities) if activities else supported_activities()
        for a in self.activities:
            if not isinstance(a, ProfilerActivity):
                raise ValueError(f"profiler: unknown activity {a!r}")
        if profile_memory or with_stack or with_flops or with_modules:
            unsupported = [
                name
                for name, on in (
                    ("profile_memory", profile_memory),
                    ("with_stack", with_stack),
                    ("with_flops", with_flops),
                    ("with_modules", with_modules),
                )
                if on
            ]
            warnings.warn(
                f"oneflow.profiler records kernel times only: {', '.join(unsupported)} "
                "is not recorded",
                stacklevel=2,
            )
        self.record_shapes = record_shapes
        self.schedule = schedule or _default_schedule
        self.on_trace_ready = on_trace_ready
        self.acc_events = acc_events
        self.step_num = 0
        self._action = None
        self._recording = False
        self._stopped = True
        self._t0 = None
        self._events = EventList()

    # -- collection ------------------------------------------------------------------------
    def _start_recording(self):
        global _ranges
        _sync()  # kernels queued before the start are not this profile's
        _internal._profiler_start(self.record_shapes)
        if self._t0 is None:
            self._t0 = _internal._profiler_now_ns()
        with _ranges_lock:
            _ranges = []
        self._recording = True

    def _stop_recording(self, quiet=False):
        """Waits for the queued kernels, then stops; a kernel error raises after the stop
        (unless ``quiet``: another exception is already on its way)."""
        global _ranges
        try:
            _sync()
        except Exception:
            if not quiet:
                raise
        finally:
            kernels = _internal._profiler_stop()
            with _ranges_lock:
                ranges, _ranges = _ranges or [], None
            self._recording = False
            events = _build_events(kernels, ranges, self._t0)
            if self.acc_events:
                self._events = EventList(list(self._events) + list(events))
            else:
                self._events = events

    def _enter_action(self, action, previous):
        recording = (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)
        if previous in recording and (
            action not in recording or previous == ProfilerAction.RECORD_AND_SAVE
        ):
            self._stop_recording()
            if self.on_trace_ready is not None:
                self.on_trace_ready(self)
        if action in recording and not self._recording:
            self._start_recording()

    def start(self):
        self._stopped = False
        self._action = self.schedule(self.step_num)
        self._enter_action(self._action, None)
        return self

    def stop(self, _quiet=False):
        self._action = None
        self._stopped = True
        if self._recording:
            self._stop_recording(_quiet)
            if self.on_trace_ready is not None:
                self.on_trace_ready(self)

    def step(self):
        if self._stopped:  # a stopped profile stays stopped, as PyTorch's
            return
        previous = self._action
        self.step_num += 1
        self._action = self.schedule(self.step_num)
        self._enter_action(self._action, previous)

    def __enter__(self):
        return self.start()

    def __exit__(self, exc_type, exc, tb):
        self.stop(_quiet=exc_type is not None)
        return False

    # -- results -----------------------------------------------------------------------------
    def events(self):
        return self._events

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        return self._events.key_averages(group_by_input_shape, group_by_stack_n)

    def export_chrome_trace(self, path):
        self._events.export_chrome_trace(path)

    def table(self, *args, **kwargs):
        return self.key_averages().table(*args, **kwargs)

    def total_average(self):
        return self._events.total_average()

    @property
    def self_cpu_time_total(self):
        return self._events.self_cpu_time_total
