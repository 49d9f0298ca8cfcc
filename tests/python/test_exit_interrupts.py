"""Exit and Ctrl-C: the interpreter exits cleanly with work, workers and tensors still alive, and a
KeyboardInterrupt during long ops or a DataLoader loop leaves the process usable."""

import os
import signal
import subprocess
import sys
import textwrap
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _start(code):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), PYTHONFAULTHANDLER="1")
    # A session of its own: a signal to its process group reaches the DataLoader workers too,
    # as a Ctrl-C in a terminal does.
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )


def _wait_for(proc, line, timeout=60):
    deadline = time.time() + timeout
    seen = []
    while time.time() < deadline:
        out = proc.stdout.readline()
        if not out:
            break
        seen.append(out)
        if out.strip() == line:
            return
    proc.kill()
    raise AssertionError(f"never printed {line!r}; got {seen}, stderr {proc.stderr.read()}")


def _finish(proc, timeout=60):
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        raise AssertionError("the process hung") from None
    return proc.returncode, out, err


def test_exit_with_live_tensors_graphs_and_workers_is_clean():
    proc = _start(
        """
        import oneflow as flow
        from oneflow.utils.data import DataLoader
        model = flow.nn.Sequential(flow.nn.Linear(8, 8), flow.nn.ReLU())
        loss = model(flow.randn(4, 8)).sum()  # a graph never run backward
        big = flow.randn(1024, 1024) @ flow.randn(1024, 1024)
        loader = DataLoader(list(range(100)), batch_size=4, num_workers=2,
                            persistent_workers=True)
        it = iter(loader)
        next(it)  # workers alive, batches in flight
        print("leaving", flush=True)
        """
    )
    rc, out, err = _finish(proc)
    assert rc == 0, err
    assert "leaving" in out
    assert err == "", err


def test_ctrl_c_during_long_ops_leaves_the_process_usable():
    proc = _start(
        """
        import oneflow as flow
        a = flow.randn(512, 512)
        print("ready", flush=True)
        try:
            while True:
                a = flow.tanh(a @ a)
        except KeyboardInterrupt:
            print("interrupted", flush=True)
        assert (flow.ones(2, 3) @ flow.ones(3, 2)).sum().item() == 12.0
        assert not flow.isnan(a).any()
        print("usable", flush=True)
        """
    )
    _wait_for(proc, "ready")
    time.sleep(0.5)
    os.killpg(proc.pid, signal.SIGINT)
    rc, out, err = _finish(proc)
    assert rc == 0, err
    assert out.split() == ["interrupted", "usable"], (out, err)


def test_ctrl_c_during_a_dataloader_loop_leaves_the_process_usable():
    proc = _start(
        """
        import time
        import oneflow as flow
        from oneflow.utils.data import DataLoader, Dataset

        class Slow(Dataset):
            def __len__(self):
                return 10_000
            def __getitem__(self, i):
                time.sleep(0.01)
                return flow.tensor([i])

        for persistent in (False, True):
            loader = DataLoader(Slow(), batch_size=4, num_workers=2,
                                persistent_workers=persistent)
            print("ready", flush=True)
            try:
                for batch in loader:
                    pass
            except KeyboardInterrupt:
                print("interrupted", flush=True)
            # the same loader starts a new pass, with new workers where the old ones stopped
            first = next(iter(loader))
            assert first.flatten().tolist() == [0, 1, 2, 3], first
        print("usable", flush=True)
        """
    )
    for _ in range(2):
        _wait_for(proc, "ready")
        time.sleep(1.0)
        os.killpg(proc.pid, signal.SIGINT)
        _wait_for(proc, "interrupted")
    rc, out, err = _finish(proc)
    assert rc == 0, err
    assert out.split() == ["usable"], (out, err)
    assert "Traceback" not in err, err


def test_worker_exception_after_interrupts_still_reaches_the_main_process():
    proc = _start(
        """
        import oneflow as flow
        from oneflow.utils.data import DataLoader
        class Bad:
            def __len__(self):
                return 8
            def __getitem__(self, i):
                raise ValueError(f"bad sample {i}")
        try:
            next(iter(DataLoader(Bad(), batch_size=2, num_workers=2)))
        except ValueError as e:
            print("caught", "bad sample" in str(e), flush=True)
        """
    )
    rc, out, err = _finish(proc)
    assert rc == 0, err
    assert out.split() == ["caught", "True"], (out, err)
