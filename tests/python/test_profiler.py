"""oneflow.profiler (core/eager/profiler.h): kernels timed where they run, record_function
ranges, PyTorch's key averages, table and chrome trace, schedules, the legacy interface."""

import gzip
import json
import os
import warnings

import pytest

import oneflow as flow
from oneflow.profiler import ProfilerAction, ProfilerActivity, profile, record_function, schedule


def _counts(prof):
    return {e.key: e.count for e in prof.key_averages()}


def test_every_kernel_is_an_event_with_its_inputs_shapes():
    x, y = flow.randn(8, 3), flow.randn(3, 5)
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        for _ in range(4):
            z = x @ y
        w = z.relu() + 1.0
        float(w.sum())
    counts = _counts(prof)
    assert counts["matmul"] == 4 and counts["relu"] == 1 and counts["sum"] == 1
    matmuls = [e for e in prof.events() if e.name == "matmul"]
    assert all(e.input_shapes == [[8, 3], [3, 5]] for e in matmuls)
    assert all(e.cpu_time_total > 0 and e.device_type == "cpu" for e in matmuls)
    by_shape = prof.key_averages(group_by_input_shape=True)
    assert {(e.key, str(e.input_shapes)) for e in by_shape} >= {("matmul", "[[8, 3], [3, 5]]")}
    # without record_shapes the events keep no shapes
    with profile() as prof:
        x @ y
    assert [e.input_shapes for e in prof.events() if e.name == "matmul"] == [[]]


def test_kernels_outside_a_profile_are_not_recorded():
    x = flow.randn(64, 64)
    x.exp()
    with profile() as prof:
        x.sin()
    x.cos()
    assert set(_counts(prof)) == {"sin"}
    assert not flow._oneflow_internal._profiler_enabled()


def test_queued_inline_and_synchronous_kernels_are_all_recorded():
    big = flow.randn(512, 512)
    small = flow.randn(4)
    with profile() as prof:
        for _ in range(3):
            big = big * 1.0001  # large: queued on the stream thread
            small = small + 1  # small: may run at the call
    counts = _counts(prof)
    assert counts["mul"] == 3 and counts["add"] == 3
    prev = flow._oneflow_internal.sync_execution()
    flow._oneflow_internal.set_sync_execution(True)
    try:
        with profile() as prof:
            (small * 2).exp()
    finally:
        flow._oneflow_internal.set_sync_execution(prev)
    assert _counts(prof) == {"mul": 1, "exp": 1}


def test_record_function_ranges_nest_and_decorate():
    @record_function("helper")
    def helper(t):
        return t * 2

    x = flow.randn(16)
    with profile() as prof:
        with record_function("outer"):
            with record_function("inner"):
                helper(x)
            helper(x)
    events = {e.name: e for e in prof.events() if e.is_user_annotation}
    assert _counts(prof)["helper"] == 2 and _counts(prof)["outer"] == 1
    outer, inner = events["outer"], events["inner"]
    assert inner.cpu_parent is outer and inner in outer.cpu_children
    assert outer.start_us <= inner.start_us and inner.end_us <= outer.end_us
    assert outer.self_cpu_time_total <= outer.cpu_time_total
    # outside a profile a range records nothing and costs nothing
    with record_function("nothing"):
        pass
    with pytest.raises(TypeError, match="name must be a str"):
        record_function(3)


def test_a_compiled_graph_replay_and_its_kernels():
    model = flow.nn.Sequential(flow.nn.Linear(8, 16), flow.nn.ReLU(), flow.nn.Linear(16, 2))

    class G(flow.nn.Graph):
        def __init__(self):
            super().__init__()
            self.m = model

        def build(self, x):
            return self.m(x)

    g = G()
    x = flow.randn(4, 8)
    g(x)
    with profile() as prof:
        for _ in range(2):
            g(x).numpy()
    counts = _counts(prof)
    assert counts["matmul"] == 4 and counts["relu"] == 2
    # a CPU program replays as one instruction on the stream thread; its kernels nest inside
    replays = [e for e in prof.events() if e.name == "nn.Graph replay"]
    assert len(replays) == 2
    assert all(len(r.cpu_children) >= 3 for r in replays)
    assert all(r.self_cpu_time_total < r.cpu_time_total for r in replays)


def test_table_sorts_limits_and_refuses_unknown_keys():
    x = flow.randn(32, 32)
    with profile() as prof:
        for _ in range(5):
            x.exp()
        x.sin()
    table = prof.key_averages().table(sort_by="count", row_limit=1)
    lines = table.splitlines()
    assert "Name" in lines[1] and "# of Calls" in lines[1]
    assert lines[3].split()[0] == "exp" and lines[3].split()[-1] == "5"
    assert "sin" not in table and table.rstrip().splitlines()[-1].startswith("Self CPU time total")
    full = prof.key_averages().table(sort_by="self_cpu_time_total")
    assert "exp" in full and "sin" in full
    with pytest.raises(AttributeError, match="sort_by must be one of"):
        prof.key_averages().table(sort_by="bogus")
    total = prof.key_averages().total_average()
    assert total.count == 6
    assert abs(prof.self_cpu_time_total - sum(e.cpu_time_total for e in prof.events())) < 1e-6


def test_chrome_trace_and_tensorboard_handler(tmp_path):
    x = flow.randn(8, 8)
    with profile(record_shapes=True) as prof:
        with record_function("block"):
            x @ x
    path = str(tmp_path / "trace.json")
    prof.export_chrome_trace(path)
    trace = json.load(open(path))["traceEvents"]
    names = {e["name"] for e in trace}
    assert {"matmul", "block"} <= names
    mm = next(e for e in trace if e["name"] == "matmul")
    assert mm["ph"] == "X" and mm["dur"] >= 0 and mm["args"]["Input Dims"] == [[8, 8], [8, 8]]
    gz = str(tmp_path / "trace.json.gz")
    prof.export_chrome_trace(gz)
    assert json.loads(gzip.open(gz, "rt").read())["traceEvents"]
    out = tmp_path / "tb"
    with profile(on_trace_ready=flow.profiler.tensorboard_trace_handler(str(out), "w0")):
        x.exp()
    files = os.listdir(out)
    assert len(files) == 1 and files[0].startswith("w0.") and files[0].endswith(".pt.trace.json")
    with pytest.raises(RuntimeError, match="needs events"):
        prof.key_averages().export_chrome_trace(path)


def test_schedule_records_only_the_active_steps():
    plan = schedule(skip_first=1, wait=1, warmup=1, active=2, repeat=2)
    actions = [plan(i) for i in range(12)]
    N, W, R, S = (
        ProfilerAction.NONE,
        ProfilerAction.WARMUP,
        ProfilerAction.RECORD,
        ProfilerAction.RECORD_AND_SAVE,
    )
    assert actions == [N, N, W, R, S, N, W, R, S, N, N, N]
    saved = []
    x = flow.randn(4)
    with profile(
        schedule=plan, on_trace_ready=lambda p: saved.append(_counts(p).get("mul", 0))
    ) as prof:
        for step in range(12):
            for _ in range(step + 1):
                x * 2  # step k queues k + 1 multiplications
            prof.step()
    # the recorded steps are 3 and 4, then 7 and 8
    assert saved == [4 + 5, 8 + 9]


def test_nested_profiles_refuse_and_errors_inside_stop_the_profiler():
    with profile():
        with pytest.raises(RuntimeError, match="already running"):
            profile().start()
    with pytest.raises(ZeroDivisionError):
        with profile():
            raise ZeroDivisionError
    assert not flow._oneflow_internal._profiler_enabled()
    with profile() as prof:
        flow.ones(2).add(1)
    assert _counts(prof)["add"] == 1


def test_unsupported_options_warn_and_the_legacy_interface():
    with pytest.warns(UserWarning, match="profile_memory"):
        profile(profile_memory=True)
    x = flow.randn(4)
    with flow.autograd.profiler.profile(record_shapes=True) as prof:
        with flow.autograd.profiler.record_function("r"):
            x.exp()
    assert {"exp", "r"} <= {e.key for e in prof.function_events}
    assert "exp" in prof.table()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with flow.autograd.profiler.profile(enabled=False) as off:
            x.exp()
    assert len(off.events()) == 0


def test_stopped_profiles_stay_stopped_and_every_trace_is_kept(tmp_path):
    p = profile()
    p.start()
    flow.ones(3).add(1)
    p.stop()
    p.step()  # nothing: PyTorch's step after stop
    assert not flow._oneflow_internal._profiler_enabled()
    with profile():
        pass
    out = tmp_path / "traces"
    plan = schedule(wait=0, warmup=0, active=1, repeat=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with profile(
            schedule=plan, on_trace_ready=flow.profiler.tensorboard_trace_handler(str(out))
        ) as p:
            for _ in range(4):
                flow.ones(3).add(1)
                p.step()
    assert len(os.listdir(out)) == 3  # one file per cycle, even within a millisecond
    saved = []
    with pytest.raises(KeyError):
        with profile(on_trace_ready=lambda prof: saved.append(len(prof.events()))):
            flow.ones(2).add(1)
            raise KeyError("body")
    assert saved == [2]  # fill and add; as PyTorch's: stopped and saved on the way out


def test_table_edge_cases_and_pytorch_options():
    with profile(record_shapes=True) as prof:
        flow.ones(3).add(1)
    empty = prof.key_averages(group_by_input_shape=True).table(row_limit=0)
    assert "Input Shapes" in empty and "Self CPU time total" in empty
    assert "ms" in prof.key_averages().table(time_unit="ms").splitlines()[3]
    with pytest.raises(ValueError, match="time_unit"):
        prof.key_averages().table(time_unit="min")
    prof.key_averages().table(sort_by="self_cpu_memory_usage")  # accepted; not recorded (zeros)
    assert prof.total_average().count == 2  # fill and add
    plan = schedule(wait=2, warmup=1, active=1, skip_first_wait=1)
    assert [plan(i) for i in range(3)] == [
        ProfilerAction.WARMUP,
        ProfilerAction.RECORD_AND_SAVE,
        ProfilerAction.NONE,
    ]
    profile(custom_trace_id_callback=None, post_processing_timeout_s=None)
