"""The asynchronous eager engine: CPU ops queue to a stream thread, reads wait for them.

Most tests here are about the queue itself and queue every op (ONEFLOW_QUEUE_EVERY_OP=1); by
default a small op that finds the stream idle runs at the call (Note [Small ops run here]), which
the tests marked so cover.

Random programs of in-place and out-of-place ops on views give the same values run queued, run
synchronously and run in PyTorch; a kernel error surfaces at the next synchronisation naming the
op and the line that queued it; waits release the GIL; memory stays bounded however far Python
runs ahead; fork, exit and Ctrl-C with work queued behave."""

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import oneflow as flow

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_internal = flow._oneflow_internal


def _run(code, timeout=120, env=None):
    full_env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), PYTHONFAULTHANDLER="1")
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=full_env,
        timeout=timeout,
    )


@pytest.fixture(autouse=True)
def _queue_every_op(monkeypatch):
    monkeypatch.setenv("ONEFLOW_QUEUE_EVERY_OP", "1")  # and in the subprocesses
    prev = _internal.queue_every_op()
    _internal.set_queue_every_op(True)
    yield
    _internal.set_queue_every_op(prev)


class _small_ops_here:
    """The default: small ops on an idle stream run at the call -- here every one of them,
    however long their kernels took before (sanitizer builds are slow)."""

    def __enter__(self):
        self.prev = _internal.queue_every_op(), _internal._small_kernel_ns_limit()
        _internal.set_queue_every_op(False)
        _internal._set_small_kernel_ns_limit(1 << 30)

    def __exit__(self, *exc):
        _internal.set_queue_every_op(self.prev[0])
        _internal._set_small_kernel_ns_limit(self.prev[1])


class _sync_mode:
    def __enter__(self):
        self.prev = _internal.sync_execution()
        _internal.set_sync_execution(True)

    def __exit__(self, *exc):
        _internal.set_sync_execution(self.prev)


# ---- random programs: queued == synchronous == PyTorch -----------------------------------------

VIEWS = ["rows", "cols", "t", "row", "narrow", "diag"]
INPLACE = ["add_s", "mul_s", "clamp_", "add_", "mul_", "copy_", "set_all", "set_item", "relu_"]
OUTPLACE = ["add", "mul", "tanh", "sin", "sub", "mean_keep"]

step = st.one_of(
    st.tuples(st.just("view"), st.integers(0, 99), st.sampled_from(VIEWS)),
    st.tuples(st.just("inplace"), st.integers(0, 99), st.sampled_from(INPLACE), st.integers(0, 99)),
    st.tuples(st.just("out"), st.integers(0, 99), st.sampled_from(OUTPLACE), st.integers(0, 99)),
    st.tuples(st.just("read"), st.integers(0, 99)),
)


def _view(lib, x, kind):
    if x.ndim == 2:
        r, c = x.shape
        if kind == "rows" and r > 1:
            return x[1:]
        if kind == "cols" and c > 1:
            return x[:, ::2]
        if kind == "t":
            return x.t()
        if kind == "row":
            return x[r - 1]
        if kind == "narrow" and c > 1:
            return x.narrow(1, 1, c - 1)
        if kind == "diag":
            return x.diagonal()
    if x.ndim == 1 and x.shape[0] > 1:
        return x[1::2] if kind in ("rows", "cols") else x[:-1]
    return x[...]


def _inplace(lib, x, kind, y):
    same = tuple(y.shape) == tuple(x.shape)
    if kind == "add_s":
        x.add_(0.5)
    elif kind == "mul_s":
        x.mul_(-1.25)
    elif kind == "clamp_":
        x.clamp_(-1.0, 1.5)
    elif kind == "relu_":
        x.relu_()
    elif kind == "add_" and same:
        x.add_(y, alpha=0.5)
    elif kind == "mul_" and same:
        x.mul_(y)
    elif kind == "copy_" and same:
        x.copy_(y)
    elif kind == "set_all":
        x[...] = 0.75
    elif kind == "set_item" and x.ndim >= 1:
        x[0] = -2.0
    else:
        x.sub_(0.25)


def _outplace(lib, x, kind, y):
    same = tuple(y.shape) == tuple(x.shape)
    if kind == "add" and same:
        return x + y
    if kind == "mul" and same:
        return x * y
    if kind == "sub" and same:
        return x - y * 0.5
    if kind == "tanh":
        return x.tanh()
    if kind == "sin":
        return lib.sin(x)
    if kind == "mean_keep" and x.ndim == 2:
        return x - x.mean(dim=1, keepdim=True)
    return x * 0.5 + 1.0


def _program(lib, base, steps, device="cpu"):
    """Runs the steps; returns the values read mid-program and every variable at the end."""
    a = lib.tensor(base[0], device=device)
    b = lib.tensor(base[1], device=device)
    env, reads = [a, b], []
    for s in steps:
        kind, i = s[0], s[1] % len(env)
        if kind == "view":
            env.append(_view(lib, env[i], s[2]))
        elif kind == "inplace":
            _inplace(lib, env[i], s[2], env[s[3] % len(env)])
        elif kind == "out":
            env.append(_outplace(lib, env[i], s[2], env[s[3] % len(env)]))
        else:  # a read in the middle of the queue
            reads.append(float(env[i].sum().item()))
    return reads, [np.array(v.cpu().numpy()) for v in env]


def _same_as_sync_mode_and_torch(base, steps, mode):
    with mode:
        reads_async, vals_async = _program(flow, base, steps)
    with _sync_mode():
        reads_sync, vals_sync = _program(flow, base, steps)
    reads_torch, vals_torch = _program(torch, base, steps)
    # Queued and synchronous runs execute the same kernels in the same order: bit-identical.
    assert reads_async == reads_sync
    for va, vs, vt in zip(vals_async, vals_sync, vals_torch):
        np.testing.assert_array_equal(va, vs)
        np.testing.assert_allclose(va, vt, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(reads_async, reads_torch, rtol=1e-4, atol=1e-4)


@settings(max_examples=60, deadline=None)
@given(steps=st.lists(step, min_size=1, max_size=25), seed=st.integers(0, 2**16))
def test_random_programs_on_views_match_sync_mode_and_torch(steps, seed):
    rng = np.random.default_rng(seed)
    base = [rng.standard_normal((4, 6)).astype(np.float32) for _ in range(2)]
    _same_as_sync_mode_and_torch(base, steps, contextlib.nullcontext())


@settings(max_examples=60, deadline=None)
@given(steps=st.lists(step, min_size=1, max_size=25), seed=st.integers(0, 2**16))
def test_random_programs_mixing_queued_and_small_ops_run_here_match_sync_mode_and_torch(
    steps, seed
):
    # One small tensor, one whose ops are queued (96x64 floats: past the 16 KiB that may run
    # here); views of the large one are small. A small op runs at the call only when everything
    # queued before it has run.
    rng = np.random.default_rng(seed)
    base = [rng.standard_normal(s).astype(np.float32) for s in ((4, 6), (96, 64))]
    _same_as_sync_mode_and_torch(base, steps, _small_ops_here())


def test_small_ops_on_an_idle_stream_run_at_the_call():
    x = flow.randn(64)
    with _small_ops_here():
        flow.cpu.synchronize()
        for _ in range(100):
            y = (x + 1).abs() * 2
            assert _internal.pending_instructions() == 0
        np.testing.assert_allclose(y.numpy(), np.abs(x.numpy() + 1) * 2, rtol=1e-6)
        # Their kernel errors raise at the call, as PyTorch's do.
        with pytest.raises(RuntimeError, match="gather: index 70 is out of bounds") as info:
            flow.gather(x, 0, flow.tensor([0, 70]))
        assert "asynchronously" not in str(info.value)
        # Behind a large queued op a small one is queued too, and runs after it.
        # (Operands NumPy has seen, as x now, always wait: fresh ones here.)
        a = flow.randn(1024, 1024)
        flow.cpu.synchronize()
        m = a @ a  # tens of milliseconds
        z = m.view(-1)[:64] + flow.arange(64.0)
        assert _internal.pending_instructions() >= 2
        np.testing.assert_array_equal(
            z.numpy(), m.numpy().reshape(-1)[:64] + np.arange(64, dtype=np.float32)
        )
        # A large op is queued on an idle stream.
        flow.cpu.synchronize()
        w = flow.full((1 << 20,), 2.0) * 3
        assert _internal.pending_instructions() >= 1
        assert w[5].item() == 6.0
    r = _run(
        """
        import oneflow as flow
        print(flow._oneflow_internal.queue_every_op())
        try:
            flow.gather(flow.randn(3), 0, flow.tensor([7]))
            print("queued")
        except RuntimeError:
            print("raised at the call")
        """,
        env={"ONEFLOW_QUEUE_EVERY_OP": "0"},
    )
    assert r.returncode == 0 and r.stdout.split() == ["False", "raised", "at", "the", "call"], (
        r.stdout + r.stderr
    )


def test_every_read_waits_for_the_queued_ops():
    x = flow.ones(256, 256)
    for _ in range(50):
        x = x * 1.01
    expected = 1.01**50
    np.testing.assert_allclose(x.numpy(), expected, rtol=1e-5)
    y = flow.ones(3)
    for _ in range(20):
        y.add_(1)  # in place: the same storage, queued
    assert y.tolist() == [21.0, 21.0, 21.0]
    assert y[0].item() == 21.0
    assert bool(y.sum() == 63)
    assert "21." in repr(y)
    z = flow.zeros(2)
    z.add_(3)
    assert float(z[1]) == 3.0 and int(z[0]) == 3
    if z.sum() > 5:  # host control flow
        pass
    else:
        raise AssertionError("control flow read a stale value")


def test_memory_shared_with_numpy_sees_every_op():
    t = flow.zeros(4)
    a = t.numpy()  # NumPy now reads t's memory directly
    t.add_(1)
    assert a.tolist() == [1.0, 1.0, 1.0, 1.0]
    arr = np.zeros(3, dtype=np.float32)
    f = flow.from_numpy(arr)
    g = f + 1  # reads f's memory now, not after NumPy writes below
    arr[:] = 100
    assert g.tolist() == [1.0, 1.0, 1.0]


def test_ops_on_numpy_memory_run_on_the_stream_thread():
    # A kernel run on the Python thread would start a second OpenMP team; libgomp then counts
    # more threads than cores and makes every team's idle threads sleep between parallel
    # regions (each op then pays for waking them). The stream thread runs them all.
    r = _run(
        """
        import os, numpy as np, oneflow as flow
        x = flow.randn(512, 512)
        (x * 2).sum().item()  # the stream thread and its team exist now
        before = len(os.listdir("/proc/self/task"))
        a = np.random.rand(512, 512).astype(np.float32)
        a0 = a.copy()
        f = flow.from_numpy(a)
        g = (f + 1) * 2
        t = flow.ones(512, 512)
        view = t.numpy()  # t's memory is now shared with NumPy
        t.add_(1)
        assert view[0, 0] == 2.0
        f.mul_(0)
        assert a.max() == 0.0  # completed before the call returned
        np.testing.assert_allclose(g.numpy(), (a0 + 1) * 2, rtol=1e-6)
        after = len(os.listdir("/proc/self/task"))
        assert after == before, (before, after)
        try:
            flow.gather(f.view(-1), 0, flow.tensor([0, 10**7]))
        except RuntimeError as e:  # its own error raises at the call, unchanged
            assert "asynchronously" not in str(e), e
            assert str(e).startswith("gather: index 10000000 is out of bounds"), e
        else:
            raise AssertionError("no error")
        assert float((t + f).sum()) == 2.0 * 512 * 512
        print("ok")
        """
    )
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize("queue_every_op", ["1", "0"])
def test_kernels_of_every_size_keep_the_same_openmp_threads(queue_every_op):
    # libgomp ends a pool's surplus threads when a parallel region asks for fewer threads than
    # the one before, and starts new ones for the next larger region: kernels that sized their
    # team by their work made a many-core machine create threads on most ops. With 8 threads
    # (on any machine) ops of 2 to 8 chunks of work, each read at once, start no thread after
    # the first rounds. (While Python queues ahead, the engine leaves it a core: the team is one
    # smaller then, and going back to the whole team starts that one thread again. An op of
    # several instructions -- layer_norm queues three -- can meet that switch when the stream
    # thread takes its second instruction before Python reaches the synchronisation: a start or
    # two in the measured rounds, seen once in a sanitizer run. Regions sized by their work, 2 to
    # 8 chunks over the five sizes, started threads on most ops of every round.)
    r = _run(
        """
        import os, oneflow as flow
        import oneflow.nn.functional as F
        def tids(): return set(os.listdir("/proc/self/task"))
        xs = [flow.randn(n) for n in (65536, 131072, 196608, 327680, 1 << 20)]
        ops = [
            lambda x: x + 1, lambda x: x.exp(), lambda x: x.view(-1, 8).t().relu(),
            lambda x: flow.where(x > 0, x, 0.0), lambda x: x.sum(), lambda x: x.view(-1, 8).sum(1),
            lambda x: x.view(8, -1).amax(1), lambda x: F.softmax(x.view(-1, 16), 1),
            lambda x: x.view(-1, 8).cumsum(1), lambda x: x.view(-1, 8).t().contiguous(),
            lambda x: flow.cat([x, x]), lambda x: F.layer_norm(x.view(-1, 16), (16,)),
            lambda x: x[:65536].view(256, 256) @ x[:65536].view(256, 256),
        ]
        small = [flow.randn(n) for n in (64, 1024)]  # run at the call unless queue_every_op
        def round_(sync):
            for op in ops:
                for x in xs + (small if op is not ops[-1] else []):
                    y = op(x)
                    if sync:
                        flow.cpu.synchronize()
            flow.cpu.synchronize()
        round_(False)
        round_(True)
        before = tids()
        for _ in range(2):
            round_(True)
        started = tids() - before
        assert len(started) <= 2, f"{len(started)} threads started"
        print("ok")
        """,
        env={"OMP_NUM_THREADS": "8", "ONEFLOW_QUEUE_EVERY_OP": queue_every_op},
    )
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stdout + r.stderr


def test_data_dependent_ops_run_their_host_passes_on_the_stream_thread():
    # nonzero and the ops built on it (masked_select, boolean indexing, unique, argwhere) count
    # the mask's true elements in parallel before they can allocate their output. Run on the
    # Python thread, that parallel pass started a second OpenMP team, and every later 4 MB op
    # of the process ran 2-4x slower (cat of four 1 MB parts: ~135 -> ~460 us).
    r = _run(
        """
        import os, numpy as np, oneflow as flow
        x = flow.randn(1024, 1024)
        (x * 2).sum().item()  # the stream thread and its team exist now
        before = len(os.listdir("/proc/self/task"))
        m = x > 0
        a, mask = x.numpy(), m.numpy()
        np.testing.assert_array_equal(x.masked_select(m).numpy(), a[mask])
        np.testing.assert_array_equal(x[m].numpy(), a[mask])
        np.testing.assert_array_equal(m.nonzero().numpy(), np.argwhere(mask))
        np.testing.assert_array_equal(flow.argwhere(m).numpy(), np.argwhere(mask))
        i = flow.randint(0, 50, (100000,))
        np.testing.assert_array_equal(flow.unique(i).numpy(), np.unique(i.numpy()))
        after = len(os.listdir("/proc/self/task"))
        assert after == before, (before, after)
        print("ok")
        """
    )
    assert r.returncode == 0, r.stdout + r.stderr


def test_a_full_queue_wakes_the_queuing_thread_once_per_stretch():
    # 200 ops with 1 MiB outputs against an 8 MiB budget: the queuing thread waits for space
    # from the 9th on. It sleeps until half the budget is free, so it wakes a few dozen times,
    # not once per op (a context switch per op, often on the core the kernels use).
    r = _run(
        """
        import oneflow as flow
        x = flow.ones(512, 512)
        (x + 1).sum().item()
        def switches():
            with open("/proc/thread-self/status") as f:
                return int(f.read().split("voluntary_ctxt_switches:")[1].split()[0])
        before = switches()
        y = x
        for _ in range(200):
            y = y * 1.0001
        flow.cpu.synchronize()
        woke = switches() - before
        assert abs(y[0, 0].item() - 1.0001**200) < 1e-4
        print(woke)
        assert woke < 100, woke
        """
    )
    assert r.returncode == 0, r.stdout + r.stderr


def test_outputs_reuse_dropped_buffers_in_stream_order():
    # A new output may take over the memory of a result the program dropped while queued ops
    # still read it: those ops run first. Values must be those of synchronous execution.
    def program():
        x = flow.arange(256 * 256, dtype=flow.float32).reshape(256, 256) / 1000
        zs, reads = [], []
        for k in range(40):
            y = x * (k + 1)  # 256 KiB: may take over the previous y, whose sin may still be queued
            zs.append(y.sin())
            if k % 8 == 7:
                reads.append(float((y * 2).numpy()[3, 5]))  # host read of a reused buffer
        return [float(z.sum()) for z in zs] + reads

    before = _internal.reused_outputs()
    queued = program()
    assert _internal.reused_outputs() - before >= 20  # the path under test was taken
    with _sync_mode():
        synced = program()
    np.testing.assert_allclose(queued, synced, rtol=1e-6)


# ---- errors --------------------------------------------------------------------------------------


def test_kernel_error_surfaces_at_the_next_sync_with_the_op_and_line():
    x = flow.randn(3)
    a = x + 1
    line = sys._getframe().f_lineno + 1
    bad = flow.gather(x, 0, flow.tensor([0, 7]))
    _ = a * 2  # queued behind the failing op
    with pytest.raises(RuntimeError) as info:
        flow.cpu.synchronize()
    msg = str(info.value)
    assert msg.startswith("gather: index 7 is out of bounds for dimension 0 with size 3")
    assert f"{__file__}:{line}" in msg, msg
    assert "'gather'" in msg and "ONEFLOW_SYNC_EXECUTION" in msg
    # reported once; the engine keeps working
    flow.cpu.synchronize()
    np.testing.assert_allclose((x + 1).numpy(), x.numpy() + 1)
    del bad


def test_kernel_error_surfaces_at_a_read_of_the_failed_output():
    x = flow.randn(4, 5)
    line = sys._getframe().f_lineno + 1
    y = flow.nn.functional.cross_entropy(x, flow.tensor([0, 9, 1, 2]))
    with pytest.raises(
        IndexError, match=rf"nll_loss: target 9 .*{os.path.basename(__file__)}:{line}"
    ):
        y.item()
    assert flow.nn.functional.cross_entropy(x, flow.tensor([0, 1, 1, 2])).item() > 0


def test_errors_inside_a_library_function_name_the_users_line():
    def helper(t):
        return flow.linalg.inv(t)

    line = sys._getframe().f_lineno + 1
    r = helper(flow.tensor([[1.0, 2.0], [2.0, 4.0]]))
    with pytest.raises(RuntimeError, match="singular") as info:
        r.numpy()
    # helper is user code too: its line is the one that issued the op
    assert f"{__file__}:{line - 3}" in str(info.value)


def test_sync_mode_raises_where_the_op_is_called():
    x = flow.randn(3)
    with _sync_mode():
        with pytest.raises(RuntimeError, match="gather: index 7") as info:
            flow.gather(x, 0, flow.tensor([7]))
        assert "asynchronously" not in str(info.value)
    r = _run(
        """
        import oneflow as flow
        assert flow._oneflow_internal.sync_execution()
        try:
            flow.gather(flow.randn(3), 0, flow.tensor([7]))
        except RuntimeError as e:
            print("raised at the call:", "asynchronously" not in str(e))
        """,
        env={"ONEFLOW_SYNC_EXECUTION": "1"},
    )
    assert r.returncode == 0, r.stderr
    assert "raised at the call: True" in r.stdout


# ---- threads, memory, processes ------------------------------------------------------------------


def test_waiting_releases_the_gil():
    x = flow.randn(768, 768)
    for _ in range(40):
        y = x @ x  # ~40 x several ms of queued work
    del y
    done = threading.Event()

    def waiter():
        flow.cpu.synchronize()
        done.set()

    t = threading.Thread(target=waiter)
    t.start()
    ticks = 0
    while not done.is_set():
        ticks += 1  # runs only while the waiting thread has released the GIL
    t.join()
    assert ticks > 1000


def test_queue_is_bounded_in_instructions_and_bytes():
    r = _run(
        """
        import resource, oneflow as flow
        x = flow.ones(8 * 1024 * 1024)  # 32 MiB
        x.sum().item()
        base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        most = 0
        for _ in range(100):  # 3.2 GiB of outputs if all were queued at once (budget: 32 MiB)
            x * 2
            most = max(most, flow._oneflow_internal.pending_instructions())
        flow.cpu.synchronize()
        grew = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) / 1024
        small = flow.ones(1)
        for _ in range(1_000_000):
            small + 1
            n = flow._oneflow_internal.pending_instructions()
            most_small = n if _ == 0 else max(most_small, n)
        flow.cpu.synchronize()
        print(f"peak growth {grew:.0f} MiB, most queued {most} big / {most_small} tiny")
        assert grew < 700, grew
        assert most_small <= 1024
        """,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    print(r.stdout)


def test_large_dropped_results_queue_ahead_in_bounded_memory():
    # An output that takes over a dropped result's buffer adds no memory, so it does not count
    # against the byte budget: the program runs ahead (one wake-up per stretch of ops, not per
    # op). Results that are kept still count: few of them are in flight at once.
    r = _run(
        """
        import resource, oneflow as flow
        x = flow.ones(4 * 1024 * 1024)  # 16 MiB
        x.sum().item()
        base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        dropped = 0
        for _ in range(60):
            x.exp()
            dropped = max(dropped, flow._oneflow_internal.pending_instructions())
        flow.cpu.synchronize()
        grew = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) / 1024
        kept, results = 0, []
        for _ in range(12):
            results.append(x.exp())
            kept = max(kept, flow._oneflow_internal.pending_instructions())
        flow.cpu.synchronize()
        print(f"most queued: {dropped} dropped, {kept} kept; growth {grew:.0f} MiB")
        assert dropped >= 8, dropped
        assert grew < 100, grew
        assert kept <= 2, kept
        """
    )
    assert r.returncode == 0, r.stdout + r.stderr
    print(r.stdout)


def test_fork_after_the_engine_started():
    r = _run(
        """
        import os, oneflow as flow
        x = flow.randn(512, 512)
        for _ in range(20):
            x = flow.tanh(x @ x * 0.01)
        pid = os.fork()  # queued work finishes first; the child starts its own stream thread
        if pid == 0:
            y = (x + 1).sum().item()
            os._exit(0 if abs(y - (x.numpy() + 1).sum()) < 1e-2 else 3)
        _, status = os.waitpid(pid, 0)
        print("child", os.waitstatus_to_exitcode(status))
        """
    )
    assert r.returncode == 0, r.stderr
    assert "child 0" in r.stdout


def test_exit_with_work_still_queued_is_clean():
    t0 = time.time()
    r = _run(
        """
        import oneflow as flow
        x = flow.randn(256, 256)
        for _ in range(500):
            x = (x @ x).tanh()
        print("queued", flow._oneflow_internal.pending_instructions() > 0)
        """
    )
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    assert time.time() - t0 < 60


def test_a_kernel_error_after_the_last_sync_is_printed_at_exit():
    r = _run(
        """
        import oneflow as flow
        x = flow.randn(3)
        bad = flow.gather(x, 0, flow.tensor([0, 7]))
        """
    )
    assert r.returncode == 0, r.stderr
    assert "oneflow: a kernel failed after the last synchronisation: gather: index 7" in r.stderr


def test_fork_keeps_a_pending_kernel_error_for_the_parent():
    r = _run(
        """
        import os
        import oneflow as flow
        x = flow.randn(3)
        bad = flow.gather(x, 0, flow.tensor([0, 7]))
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
        try:
            flow.cpu.synchronize()
            print("not raised")
        except RuntimeError as e:
            print("raised", "gather" in str(e))
        """
    )
    assert r.returncode == 0, r.stderr
    assert "raised True" in r.stdout, r.stdout + r.stderr


def _interrupt(code, ready, delay, timeout):
    """Runs `code` in a child; after it prints `ready`, waits `delay` s, sends SIGINT, and
    returns the child's stdout (asserting it exited 0)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python")),
    )
    assert proc.stdout.readline().strip() == ready
    time.sleep(delay)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, err
    return out


def test_ctrl_c_during_a_long_queue_stops_it():
    code = """
        import time, oneflow as flow
        x = flow.randn(2048, 2048)
        try:
            print("start", flush=True)
            while True:
                x.sum()  # ~1 ms each, 4-byte outputs: the queue fills to its 1024 slots
        except KeyboardInterrupt:
            t = time.time()
            flow.cpu.synchronize()
            print(f"drained {time.time() - t:.3f}", flush=True)
        print("after", (flow.ones(3) + 1).sum().item(), flush=True)
        """
    out = _interrupt(code, "start", 1.5, 60)
    drained = float(out.split("drained ")[1].split()[0])
    # The dropped queue is not run: a full queue would take about a second or more.
    assert drained < 0.3, out
    assert "after 6.0" in out


def test_ctrl_c_drops_the_queue_while_python_runs_elsewhere():
    code = """
        import time, oneflow as flow
        x = flow.randn(4096, 4096)
        t = time.time()
        x.sum().item()
        each = time.time() - t
        for _ in range(1000):
            x.sum()  # several seconds of queued work; none of it waited on
        print("queued", flush=True)
        try:
            while True:  # pure Python: the interrupt does not arrive inside a oneflow wait
                pass
        except KeyboardInterrupt:
            t = time.time()
            flow.cpu.synchronize()
            print(f"drained {time.time() - t:.3f} of {1000 * each:.3f}", flush=True)
        print("after", (flow.ones(3) + 1).sum().item(), flush=True)
        """
    out = _interrupt(code, "queued", 0.3, 120)
    drained, total = (float(v) for v in out.split("drained ")[1].split()[0::2][:2])
    assert total > 1.0, out  # the queue held seconds of work
    assert drained < 0.3, out  # dropped, not run
    assert "after 6.0" in out


def test_host_reads_of_an_index_wait_for_its_writers_not_its_readers():
    """The host-side bounds check of an index tensor waits only for queued ops that write it:
    a gather still running on the same index does not make the next indexing op synchronise,
    while an in-place write queued before it is seen."""
    from oneflow import _oneflow_internal as internal

    a = flow.randn(1024, 1024)
    idx = flow.randint(0, 8, (4096,))
    x = flow.randn(8, 3)
    flow.cpu.synchronize()
    product = flow.matmul(a, a)  # milliseconds of work queued ahead
    first = flow.index_select(x, 0, idx)  # queued behind it, reads idx
    second = flow.index_select(x, 0, idx)
    assert internal.pending_instructions() >= 2  # the check did not wait for `first`
    np.testing.assert_array_equal(first.numpy(), x.numpy()[idx.numpy()])
    np.testing.assert_array_equal(second.numpy(), first.numpy())
    del product
    # A queued write of the index is waited for: the check sees the out-of-range values.
    _ = flow.matmul(a, a)
    idx.fill_(9)
    with pytest.raises(IndexError, match="index 9 is out of bounds"):
        flow.index_select(x, 0, idx)


def test_embedding_checks_its_indices_without_waiting_for_queued_work():
    """F.embedding's range check reads only the index values: the lookup queues behind the
    work ahead of it instead of draining the queue, and an index out of range still raises
    IndexError at the call (negative ones too, unlike indexing)."""
    import oneflow.nn.functional as F

    a = flow.randn(1024, 1024)
    weight = flow.randn(10, 3)
    idx = flow.tensor([[1, 9], [0, 4]])
    flow.cpu.synchronize()
    product = flow.matmul(a, a)  # milliseconds of work queued ahead
    rows = F.embedding(idx, weight)
    assert _internal.pending_instructions() >= 2  # the check did not wait for the matmul
    np.testing.assert_array_equal(rows.numpy(), weight.numpy()[idx.numpy()])
    del product
    for bad in ([1, 10], [-1, 0]):
        with pytest.raises(IndexError, match="embedding: index out of range in self"):
            F.embedding(flow.tensor(bad), weight)
    # int32 indices, and max_norm (which renormalises the rows it looks up)
    w = flow.randn(10, 3) * 5
    tw = torch.tensor(w.numpy())
    got = F.embedding(idx.int(), w, max_norm=1.0)
    want = torch.nn.functional.embedding(torch.tensor(idx.numpy()).int(), tw, max_norm=1.0)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5)
    np.testing.assert_allclose(w.numpy(), tw.numpy(), rtol=1e-5)


# ---- CUDA ops on the device's stream (ONEFLOW_ASYNC_CUDA=1) ------------------------------------

_needs_cuda = pytest.mark.skipif(not flow.cuda.is_available(), reason="needs a CUDA device")


class _queued_cuda:
    def __init__(self, queue=True):
        self.queue = queue

    def __enter__(self):
        self.prev = _internal.queue_cuda_ops()
        _internal.set_queue_cuda_ops(self.queue)

    def __exit__(self, *exc):
        _internal.set_queue_cuda_ops(self.prev)


def test_queue_cuda_ops_switch_and_environment_variable():
    with _queued_cuda(True):
        assert _internal.queue_cuda_ops()
        x = flow.ones(3)  # CPU ops are unaffected
        np.testing.assert_array_equal((x + 1).numpy(), [2, 2, 2])
    with _queued_cuda(False):
        assert not _internal.queue_cuda_ops()
    code = "import oneflow as flow; print(flow._oneflow_internal.queue_cuda_ops())"
    assert _run(code, env={"ONEFLOW_ASYNC_CUDA": "1"}).stdout.strip() == "True"
    assert _run(code, env={"ONEFLOW_ASYNC_CUDA": "0"}).stdout.strip() == "False"


@_needs_cuda
@settings(max_examples=30, deadline=None)
@given(steps=st.lists(step, min_size=1, max_size=25), seed=st.integers(0, 2**16))
def test_random_cuda_programs_queued_match_launched_here_and_torch(steps, seed):
    rng = np.random.default_rng(seed)
    base = [rng.standard_normal((4, 6)).astype(np.float32) for _ in range(2)]
    with _queued_cuda(True):
        reads_queued, vals_queued = _program(flow, base, steps, "cuda")
    with _queued_cuda(False):
        reads_here, vals_here = _program(flow, base, steps, "cuda")
    reads_torch, vals_torch = _program(torch, base, steps)
    assert reads_queued == reads_here
    for vq, vh, vt in zip(vals_queued, vals_here, vals_torch):
        np.testing.assert_array_equal(vq, vh)
        np.testing.assert_allclose(vq, vt, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(reads_queued, reads_torch, rtol=1e-4, atol=1e-4)


@_needs_cuda
def test_cuda_ops_are_queued_and_every_read_sees_them():
    """Right after an op returns its launch is still queued (the device's stream thread takes a
    few microseconds per launch); launched from the calling thread nothing is ever pending."""

    def burst():
        x = flow.zeros(4, device="cuda")
        flow.cuda.synchronize()
        seen = 0
        for i in range(2000):
            x = x + 1
            if i % 40 == 0:
                seen = max(seen, _internal.pending_instructions())
        return x, seen

    with _queued_cuda(True):
        x, seen = burst()
        assert seen >= 1
        np.testing.assert_array_equal(x.cpu().numpy(), np.full(4, 2000.0))
        flow.cuda.synchronize()
        assert _internal.pending_instructions() == 0
    with _queued_cuda(False):
        x, seen = burst()
        assert seen == 0
        np.testing.assert_array_equal(x.cpu().numpy(), np.full(4, 2000.0))


@_needs_cuda
def test_copies_between_devices_are_ordered_with_both_streams():
    with _queued_cuda(True):
        x = flow.zeros(1000, device="cuda")
        h = flow.zeros(1000)
        for _ in range(50):
            x.add_(1)  # CUDA stream
            h.add_(2)  # CPU stream
        # a copy in either direction sees every op queued before it on both streams
        x.add_(h.cuda())
        np.testing.assert_array_equal(x.cpu().numpy(), np.full(1000, 150.0))
        h.copy_(x.cpu())
        x.mul_(0)  # queued after the copy read x
        np.testing.assert_array_equal(h.numpy(), np.full(1000, 150.0))
        np.testing.assert_array_equal(x.cpu().numpy(), np.zeros(1000))


@_needs_cuda
@pytest.mark.parametrize("queued", [False, True])
def test_host_to_device_copy_waits_for_kernels_still_reading_reused_memory(queued):
    """Copies to a device run on its host-to-device stream: the caching allocator may hand them a
    block that kernels still running on the compute stream read; the copy waits for them on the
    GPU (Note [Copy streams]), and the kernels after it see its bytes."""
    n, m, steps = 4096, 2048, 24
    rng = np.random.default_rng(0)
    a_np = (rng.standard_normal((n, n)) / np.sqrt(n)).astype(np.float32)
    b_np = rng.standard_normal((m, n)).astype(np.float32)
    fill = flow.tensor(np.full((n, n), 7.0, dtype=np.float32))  # on the host before the chain
    with _queued_cuda(queued):
        a = flow.tensor(a_np, device="cuda")
        b = flow.tensor(b_np, device="cuda")
        flow.cuda.synchronize()
        a_ptr = a.data_ptr()
        for _ in range(steps):  # ~35 ms of matmuls on an H100 that all read a's block
            b = b @ a  # (m x n: the chain's blocks are another size than a's)
        del a  # its block returns to the allocator while the kernels still read it
        x = fill.cuda()
        if not queued:  # (queued, the last instruction still holds a until the next one)
            assert x.data_ptr() == a_ptr  # the hazard is set up: the copy writes a's block
        y = x * 2  # a kernel after the copy reads the new bytes
        expect = b_np
        for _ in range(steps):
            expect = expect @ a_np
        got = b.cpu().numpy()
        err = np.linalg.norm(got - expect) / np.linalg.norm(expect)
        assert err < 1e-2, err
        np.testing.assert_array_equal(x.cpu().numpy(), fill.numpy())
        np.testing.assert_array_equal(y.cpu().numpy(), fill.numpy() * 2)


@_needs_cuda
@pytest.mark.parametrize("queued", [False, True])
def test_host_to_device_copy_does_not_read_the_source_after_it_returns(queued):
    """From pageable memory the host does not wait for the copy: the driver has staged the
    source by then, so writing it right after changes nothing on the device."""
    rng = np.random.default_rng(1)
    with _queued_cuda(queued):
        for size in (1, 1000, 1 << 22):
            h = rng.standard_normal(size).astype(np.float32)
            keep = h.copy()
            t = flow.tensor(h)
            d = t.cuda()
            t.fill_(0)  # a CPU op after the copy
            shared = flow.from_numpy(h)
            d2 = shared.cuda()
            h[:] = -1  # NumPy writes the shared memory after the copy
            np.testing.assert_array_equal(d.cpu().numpy(), keep)
            np.testing.assert_array_equal(d2.cpu().numpy(), keep)
            back = d.cpu()  # device-to-host: returns with the bytes on the host
            d.mul_(0)
            np.testing.assert_array_equal(back.numpy(), keep)
        flow.cuda.synchronize()


@_needs_cuda
def test_cuda_kernel_error_surfaces_at_the_next_sync_with_the_op_and_line():
    with _queued_cuda(True):
        x = flow.randn(3, device="cuda")
        line = sys._getframe().f_lineno + 1
        bad = flow.cumsum(x, 0)  # no CUDA kernel yet: raises on the stream thread
        _ = x * 2
        with pytest.raises(NotImplementedError) as info:
            flow.cuda.synchronize()
        msg = str(info.value)
        assert "cumsum" in msg and f"{__file__}:{line}" in msg, msg
        flow.cuda.synchronize()  # reported once; the stream keeps working
        np.testing.assert_allclose((x + 1).cpu().numpy(), x.cpu().numpy() + 1)
        del bad


@_needs_cuda
def test_many_queued_tiny_cuda_ops_keep_memory_bounded():
    with _queued_cuda(True):
        x = flow.zeros(16, device="cuda")
        flow.cuda.synchronize()
        base = flow.cuda.memory_allocated()
        peak = 0
        for i in range(200_000):
            x = x + 1
            if i % 10_000 == 0:
                peak = max(peak, flow.cuda.memory_allocated() - base)
        assert peak < (64 << 20), peak  # the queue holds at most 1024 instructions' outputs
        np.testing.assert_array_equal(x.cpu().numpy(), np.full(16, 200_000.0))


def test_tensor_from_numpy_waits_for_no_queued_work():
    # flow.tensor(array) copies the array here; a copy kernel reading NumPy's memory would run
    # after every queued op (ops on memory NumPy may touch run to completion before returning).
    import numpy as np

    internal = flow._oneflow_internal
    prev = internal.queue_every_op()
    internal.set_queue_every_op(True)
    try:
        x = flow.randn(384, 384)
        ys = [x @ x for _ in range(40)]  # tens of milliseconds of queued work
        arr = np.arange(12, dtype=np.float32).reshape(3, 4)
        t = flow.tensor(arr)
        assert internal.pending_instructions() > 0
        arr[0, 0] = 100.0  # the copy was taken at the call
        assert t.tolist()[0] == [0.0, 1.0, 2.0, 3.0]
        assert flow.tensor(arr, dtype=flow.float64).dtype == flow.float64
        ys[-1].numpy()
    finally:
        internal.set_queue_every_op(prev)
