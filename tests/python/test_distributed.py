"""Multi-process OneFlow: `python -m oneflow.distributed.launch` (the ranks' variables, exit codes,
teardown of the group when a rank fails, signals, --logdir, -m, --no_python) with plain scripts;
every op of oneflow.comm and oneflow.distributed on 2 and 3 real processes over loopback,
compared with NumPy (dtypes, non-contiguous and empty tensors, queue ordering, Work.wait); a
dead peer failing the survivor; argument errors on a world of one; oneflow.env and
DistributedSampler in this process.

Every child runs with a timeout, so a hang fails the test instead of the suite."""

import inspect
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
import torch

import oneflow as flow

REPO_PYTHON = Path(__file__).resolve().parents[2] / "python"
TIMEOUT = 60
RANK_VARIABLES = (
    "RANK",
    "WORLD_SIZE",
    "LOCAL_RANK",
    "LOCAL_WORLD_SIZE",
    "MASTER_ADDR",
    "MASTER_PORT",
    "OMP_NUM_THREADS",
    "ONEFLOW_COMM_TIMEOUT",
)


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env(**extra):
    """This interpreter's environment for a child: the repo's package first on an absolute
    PYTHONPATH (children run in tmp_path), and no rank variables leaking from outside."""
    env = {k: v for k, v in os.environ.items() if k not in RANK_VARIABLES}
    paths = [str(REPO_PYTHON)] + [
        os.path.abspath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p
    ]
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env.update({k: str(v) for k, v in extra.items()})
    return env


def _launch_cmd(*args, port=None):
    port = _free_port() if port is None else port
    return [sys.executable, "-m", "oneflow.distributed.launch", "--master_port", str(port), *args]


def _launch(tmp_path, *args, env=None, timeout=TIMEOUT):
    return subprocess.run(
        _launch_cmd(*args),
        cwd=tmp_path,
        env=env or _env(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _run_on_ranks(tmp_path, body, world):
    """Runs `body` (a script, dedented) on `world` processes through the launcher; every rank
    must exit cleanly and print "rank <r> ok"."""
    (tmp_path / "ranks.py").write_text(textwrap.dedent(body))
    proc = _launch(
        tmp_path, "--nproc_per_node", str(world), "ranks.py", env=_env(ONEFLOW_COMM_TIMEOUT=30)
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for r in range(world):
        assert f"rank {r} ok" in proc.stdout, proc.stdout + proc.stderr


def _write(path, text, mode=None):
    path.write_text(textwrap.dedent(text))
    if mode is not None:
        path.chmod(mode)
    return path


def _pid_running(pid):
    """Alive and not a zombie (an orphan's exit is collected by whoever adopts it)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


# ---- the launcher, with plain Python children ------------------------------------------------

ENV_SCRIPT = """
import json, os, sys
names = ["MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK", "LOCAL_RANK", "LOCAL_WORLD_SIZE",
         "OMP_NUM_THREADS"]
seen = {name: os.environ.get(name) for name in names}
seen["argv"] = sys.argv[1:]
with open(f"env_{os.environ['RANK']}.json", "w") as f:
    json.dump(seen, f)
"""


def test_launch_sets_rank_variables(tmp_path):
    _write(tmp_path / "script.py", ENV_SCRIPT)
    port = _free_port()
    proc = subprocess.run(
        _launch_cmd("--nproc_per_node", "3", "script.py", "--lr", "0.1", "x", port=port),
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Warning" not in proc.stderr  # runpy warns if the package imported the launcher
    for rank in range(3):
        seen = json.loads((tmp_path / f"env_{rank}.json").read_text())
        assert seen == {
            "MASTER_ADDR": "127.0.0.1",
            "MASTER_PORT": str(port),
            "WORLD_SIZE": "3",
            "RANK": str(rank),
            "LOCAL_RANK": str(rank),
            "LOCAL_WORLD_SIZE": "3",
            "OMP_NUM_THREADS": "1",  # several ranks share the node's cores
            "argv": ["--lr", "0.1", "x"],
        }


def test_launch_multi_node_ranks(tmp_path):
    # Node 1 of 2: its ranks follow node 0's. The children do not communicate, so no peer
    # node is needed.
    _write(tmp_path / "script.py", ENV_SCRIPT)
    proc = _launch(
        tmp_path,
        "--nnodes",
        "2",
        "--node_rank",
        "1",
        "--nproc_per_node",
        "2",
        "--master_addr",
        "10.1.2.3",
        "script.py",
        env=_env(OMP_NUM_THREADS=3),
    )
    assert proc.returncode == 0, proc.stderr
    for local_rank, rank in enumerate((2, 3)):
        seen = json.loads((tmp_path / f"env_{rank}.json").read_text())
        assert seen["WORLD_SIZE"] == "4" and seen["LOCAL_RANK"] == str(local_rank)
        assert seen["MASTER_ADDR"] == "10.1.2.3" and seen["LOCAL_WORLD_SIZE"] == "2"
        assert seen["OMP_NUM_THREADS"] == "3"  # the user's choice is kept


def test_launch_single_process_defaults(tmp_path):
    _write(tmp_path / "script.py", ENV_SCRIPT)
    proc = subprocess.run(
        [sys.executable, "-m", "oneflow.distributed.launch", "script.py"],
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert proc.returncode == 0, proc.stderr
    seen = json.loads((tmp_path / "env_0.json").read_text())
    assert seen["MASTER_PORT"] == "29500" and seen["WORLD_SIZE"] == "1"
    assert seen["OMP_NUM_THREADS"] is None  # one process: OpenMP keeps every core


FAILING_SCRIPT = """
import os, signal, sys, time
rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
with open(f"pid_{rank}", "w") as f:
    f.write(str(os.getpid()))
if rank == 1:
    # Fail once every other rank is up and sleeping.
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not all(
        os.path.exists(f"pid_{r}") for r in range(world)
    ):
        time.sleep(0.05)
    if sys.argv[1] == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    sys.exit(int(sys.argv[1]))
time.sleep(60)
"""


@pytest.mark.parametrize("how, code", [("7", 7), ("kill", 128 + 9)])
def test_launch_failing_rank_stops_the_others(tmp_path, how, code):
    _write(tmp_path / "script.py", FAILING_SCRIPT)
    start = time.monotonic()
    proc = _launch(tmp_path, "--nproc_per_node", "3", "script.py", how)
    elapsed = time.monotonic() - start
    assert proc.returncode == code, proc.stderr
    assert elapsed < 15, f"the sleeping ranks were stopped after {elapsed:.1f} s"
    assert "local rank 1" in proc.stderr
    for rank in (0, 2):
        assert not _pid_alive(int((tmp_path / f"pid_{rank}").read_text()))


def test_launch_single_rank_exit_code(tmp_path):
    _write(tmp_path / "script.py", "import sys\nsys.exit(5)\n")
    proc = _launch(tmp_path, "script.py")
    assert proc.returncode == 5
    assert proc.stderr == ""  # one rank: its own output says why


SIGNAL_SCRIPT = """
import os, signal, sys, time
rank = int(os.environ["RANK"])
def on_term(signum, frame):
    with open(f"term_{rank}", "w") as f:
        f.write(str(signum))
    sys.exit(0)
signal.signal(signal.SIGTERM, on_term)
with open(f"ready_{rank}", "w") as f:
    f.write(str(os.getpid()))
time.sleep(60)
"""


def test_launch_forwards_sigterm(tmp_path):
    _write(tmp_path / "script.py", SIGNAL_SCRIPT)
    launcher = subprocess.Popen(
        _launch_cmd("--nproc_per_node", "2", "script.py"),
        cwd=tmp_path,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while not all((tmp_path / f"ready_{r}").exists() for r in range(2)):
            assert time.monotonic() < deadline, "the ranks did not start"
            assert launcher.poll() is None, launcher.communicate()
            time.sleep(0.05)
        start = time.monotonic()
        launcher.send_signal(signal.SIGTERM)
        launcher.communicate(timeout=TIMEOUT)
        assert time.monotonic() - start < 10
    finally:
        if launcher.poll() is None:
            launcher.kill()
            launcher.communicate()
    assert launcher.returncode == 128 + signal.SIGTERM
    for rank in range(2):
        assert (tmp_path / f"term_{rank}").read_text() == str(int(signal.SIGTERM))


def test_ranks_die_with_a_killed_launcher(tmp_path):
    # SIGKILL leaves the launcher no chance to stop the ranks: the kernel does it.
    _write(tmp_path / "script.py", SIGNAL_SCRIPT)
    launcher = subprocess.Popen(
        _launch_cmd("--nproc_per_node", "2", "script.py"), cwd=tmp_path, env=_env()
    )
    try:
        deadline = time.monotonic() + 30
        while not all((tmp_path / f"ready_{r}").exists() for r in range(2)):
            assert time.monotonic() < deadline and launcher.poll() is None
            time.sleep(0.05)
    finally:
        launcher.kill()
        launcher.wait(timeout=TIMEOUT)
    pids = [int((tmp_path / f"ready_{r}").read_text()) for r in range(2)]
    deadline = time.monotonic() + 10
    while any(_pid_running(pid) for pid in pids):
        assert time.monotonic() < deadline, "the ranks outlived their launcher"
        time.sleep(0.05)


def test_launch_logdir(tmp_path):
    _write(
        tmp_path / "script.py",
        """
        import os, sys
        print("out of rank", os.environ["RANK"])
        print("err of rank", os.environ["RANK"], file=sys.stderr)
        """,
    )
    proc = _launch(tmp_path, "--nproc_per_node", "2", "--logdir", "logs", "script.py")
    assert proc.returncode == 0, proc.stderr
    assert "of rank" not in proc.stdout + proc.stderr
    for rank in range(2):
        rank_dir = tmp_path / "logs" / f"local_rank_{rank}"
        assert (rank_dir / "stdout").read_text() == f"out of rank {rank}\n"
        assert (rank_dir / "stderr").read_text() == f"err of rank {rank}\n"


def test_launch_module_mode(tmp_path):
    package = tmp_path / "mypkg"
    package.mkdir()
    _write(package / "__init__.py", "")
    _write(
        package / "train.py",
        """
        import os, sys
        with open(f"module_{os.environ['RANK']}.txt", "w") as f:
            f.write(__name__ + " " + " ".join(sys.argv[1:]))
        """,
    )
    proc = _launch(tmp_path, "--nproc_per_node", "2", "-m", "mypkg.train", "--epochs", "3")
    assert proc.returncode == 0, proc.stderr
    for rank in range(2):
        assert (tmp_path / f"module_{rank}.txt").read_text() == "__main__ --epochs 3"


def test_launch_no_python(tmp_path):
    _write(
        tmp_path / "run.sh",
        """\
        #!/bin/sh
        echo "$RANK $WORLD_SIZE $1" > "shell_$RANK.txt"
        """,
        mode=0o755,
    )
    proc = _launch(tmp_path, "--nproc_per_node", "2", "--no_python", "./run.sh", "hello")
    assert proc.returncode == 0, proc.stderr
    for rank in range(2):
        assert (tmp_path / f"shell_{rank}.txt").read_text() == f"{rank} 2 hello\n"


@pytest.mark.parametrize(
    "args, message",
    [
        (["-m", "--no_python", "x"], "--module and --no_python"),
        (["--nnodes", "2", "--node_rank", "2", "x"], "--node_rank must be in [0, 2)"),
        (["--nproc_per_node", "0", "x"], "--nproc_per_node must be at least 1"),
        (["--redirect_stdout_and_stderr", "x"], "needs --logdir"),
    ],
)
def test_launch_rejects_bad_flags(tmp_path, args, message):
    proc = _launch(tmp_path, *args)
    assert proc.returncode == 2
    assert message in proc.stderr


def test_launch_missing_program(tmp_path):
    proc = _launch(tmp_path, "--nproc_per_node", "2", "--no_python", "./does_not_exist")
    assert proc.returncode == 127
    assert "cannot start ./does_not_exist" in proc.stderr


# ---- collectives on 2 and 3 processes --------------------------------------------------------


def rank_input(seed, shape=(2, 3), dtype="float32"):
    """A rank's input: small integers, distinct per seed and element, so that every sum,
    product, max and min over three ranks is exact in every dtype, float16 included."""
    n = int(np.prod(shape))
    return ((np.arange(n) % 5) + seed % 7 + 1).reshape(shape).astype(dtype)


PRELUDE = (
    """
import os, sys
import numpy as np
import oneflow as flow
import oneflow.distributed as dist

rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
results = {}

def keep(key, value):
    # Converted at the end: reading values now would wait and hide ordering bugs.
    results[key] = value

def save():
    arrays = {k: v.numpy() if isinstance(v, flow.Tensor) else np.asarray(v)
              for k, v in results.items()}
    np.savez(f"rank{rank}.npz", **arrays)

def T(seed, shape=(2, 3), dtype="float32"):
    return flow.tensor(rank_input(seed, shape, dtype))

def ring(send_fn, recv_fn):
    # Rank r receives from r - 1 and sends to r + 1; rank 0 sends first, the others receive
    # first, so the chain never waits on itself.
    dst, src = (rank + 1) % world, (rank - 1) % world
    if rank == 0:
        send_fn(dst)
        return recv_fn(src)
    got = recv_fn(src)
    send_fn(dst)
    return got

"""
    + inspect.getsource(rank_input)
    + "\n"
)

DTYPES = ["float32", "float64", "int64", "int32"]


def _run_ranks(tmp_path, world, body, timeout_s=30):
    """Runs PRELUDE + body on `world` ranks through the launcher; returns each rank's results."""
    script = tmp_path / "ranks.py"
    script.write_text(PRELUDE + textwrap.dedent(body) + "\nsave()\n")
    proc = _launch(
        tmp_path,
        "--nproc_per_node",
        str(world),
        "ranks.py",
        env=_env(ONEFLOW_COMM_TIMEOUT=timeout_s, REINIT_PORT=_free_port()),
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = []
    for rank in range(world):
        with np.load(tmp_path / f"rank{rank}.npz") as f:
            out.append({k: f[k] for k in f.files})
    return out


def _check(results, expected):
    assert set(results) == set(expected), sorted(set(results) ^ set(expected))
    for key, want in expected.items():
        got = results[key]
        assert got.dtype == np.asarray(want).dtype, key
        assert got.shape == np.shape(want), key
        if got.dtype.kind == "f":
            np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=key)
        else:
            np.testing.assert_array_equal(got, want, err_msg=key)


COMM_BODY = """
for dt in ("float32", "float64", "int64", "int32"):
    x = T(rank, dtype=dt); flow.comm.all_reduce(x); keep(f"all_reduce_{dt}", x)
    x = T(rank, dtype=dt); flow.comm.broadcast(x, world - 1); keep(f"broadcast_{dt}", x)
    x = T(rank, dtype=dt); flow.comm.reduce(x, 1); keep(f"reduce_{dt}", x)
    outs = [flow.zeros(2, 3, dtype=getattr(flow, dt)) for _ in range(world)]
    flow.comm.all_gather(outs, T(rank, dtype=dt)); keep(f"all_gather_{dt}", flow.stack(outs))
    out = flow.zeros(world * 2, 3, dtype=getattr(flow, dt))
    flow.comm.all_gather_into_tensor(out, T(rank, dtype=dt)); keep(f"all_gather_into_{dt}", out)
    if rank == 0:
        outs = [flow.zeros(2, 3, dtype=getattr(flow, dt)) for _ in range(world)]
        flow.comm.gather(T(rank, dtype=dt), outs, dst=0); keep(f"gather_{dt}", flow.stack(outs))
    else:
        flow.comm.gather(T(rank, dtype=dt), dst=0)
    x = flow.zeros(2, 3, dtype=getattr(flow, dt))
    sources = [T(100 + j, dtype=dt) for j in range(world)] if rank == world - 1 else None
    flow.comm.scatter(x, sources, src=world - 1); keep(f"scatter_{dt}", x)
    x = flow.zeros(2, 3, dtype=getattr(flow, dt))
    flow.comm.reduce_scatter(x, [T(10 * rank + j, dtype=dt) for j in range(world)])
    keep(f"reduce_scatter_{dt}", x)
    x = flow.zeros(2, 3, dtype=getattr(flow, dt))
    inp = flow.cat([T(10 * rank + j, dtype=dt) for j in range(world)])
    flow.comm.reduce_scatter_tensor(x, inp); keep(f"reduce_scatter_tensor_{dt}", x)
    outs = [flow.zeros(2, 3, dtype=getattr(flow, dt)) for _ in range(world)]
    flow.comm.all_to_all(outs, [T(10 * rank + j, dtype=dt) for j in range(world)])
    keep(f"all_to_all_{dt}", flow.stack(outs))
    keep(f"send_recv_{dt}", ring(lambda d: flow.comm.send(T(rank, dtype=dt), d),
                                 lambda s: flow.comm.recv(s)))
    keep(f"send_recv_nometa_{dt}", ring(
        lambda d: flow.comm.send(T(rank, dtype=dt), d, send_meta=False),
        lambda s: flow.comm.recv(s, (2, 3), getattr(flow, dt), "cpu")))
    y = flow.zeros(2, 3, dtype=getattr(flow, dt))
    ring(lambda d: flow.comm.send(T(rank, dtype=dt), d), lambda s: flow.comm.recv(s, out=y))
    keep(f"recv_out_{dt}", y)
x = T(rank, dtype="float16"); flow.comm.all_reduce(x); keep("all_reduce_float16", x)
out = flow.zeros(world, 2, 3)
flow.comm.all_gather_into_tensor(out, T(rank)); keep("all_gather_into_stacked", out)
flow.comm.barrier()
"""


def _comm_expected(world, rank):
    def ins(seed_of, dt, shape=(2, 3)):
        return [rank_input(seed_of(r), shape, dt) for r in range(world)]

    exp = {}
    prev = (rank - 1) % world
    for dt in DTYPES:
        own = ins(lambda r: r, dt)
        exp[f"all_reduce_{dt}"] = sum(own)
        exp[f"broadcast_{dt}"] = own[world - 1]
        exp[f"reduce_{dt}"] = sum(own) if rank == 1 else own[rank]
        exp[f"all_gather_{dt}"] = np.stack(own)
        exp[f"all_gather_into_{dt}"] = np.concatenate(own)
        if rank == 0:
            exp[f"gather_{dt}"] = np.stack(own)
        exp[f"scatter_{dt}"] = rank_input(100 + rank, dtype=dt)
        to_me = ins(lambda r: 10 * r + rank, dt)  # every rank's block for this rank
        exp[f"reduce_scatter_{dt}"] = sum(to_me)
        exp[f"reduce_scatter_tensor_{dt}"] = sum(to_me)
        exp[f"all_to_all_{dt}"] = np.stack(to_me)
        for key in ("send_recv", "send_recv_nometa", "recv_out"):
            exp[f"{key}_{dt}"] = own[prev]
    exp["all_reduce_float16"] = sum(ins(lambda r: r, "float16"))
    exp["all_gather_into_stacked"] = np.stack(ins(lambda r: r, "float32"))
    return exp


@pytest.mark.parametrize("world", [2, 3])
def test_comm_ops(tmp_path, world):
    for rank, results in enumerate(_run_ranks(tmp_path, world, COMM_BODY)):
        _check(results, _comm_expected(world, rank))


DIST_BODY = """
dist.init_process_group("gloo")
keep("info", [dist.is_initialized(), dist.get_rank(), dist.get_world_size(),
              dist.get_backend() == "gloo", flow.env.get_rank(), flow.env.get_world_size()])
ops = {"sum": dist.ReduceOp.SUM, "product": dist.ReduceOp.PRODUCT, "min": dist.ReduceOp.MIN,
       "max": dist.ReduceOp.MAX}
for dt in ("float32", "int64"):
    for name, op in ops.items():
        x = T(rank, dtype=dt); assert dist.all_reduce(x, op=op) is None
        keep(f"all_reduce_{name}_{dt}", x)
    x = T(rank, dtype=dt); dist.reduce(x, world - 1, op=dist.ReduceOp.MAX)
    keep(f"reduce_max_{dt}", x)
    x = flow.zeros(2, 3, dtype=getattr(flow, dt))
    dist.reduce_scatter(x, [T(10 * rank + j, dtype=dt) for j in range(world)],
                        op=dist.ReduceOp.MIN)
    keep(f"reduce_scatter_min_{dt}", x)
    x = flow.zeros(2, 3, dtype=getattr(flow, dt))
    dist.reduce_scatter_tensor(x, flow.cat([T(10 * rank + j, dtype=dt) for j in range(world)]),
                               op=dist.ReduceOp.MAX)
    keep(f"reduce_scatter_tensor_max_{dt}", x)
x = T(rank); dist.all_reduce(x, op=dist.ReduceOp.AVG); keep("all_reduce_avg", x)
x = T(rank); dist.reduce(x, 0, op=dist.ReduceOp.AVG); keep("reduce_avg", x)
x = flow.zeros(2, 3)
dist.reduce_scatter_tensor(x, flow.cat([T(10 * rank + j) for j in range(world)]),
                           op=dist.ReduceOp.AVG)
keep("reduce_scatter_tensor_avg", x)
x = T(rank, dtype="float16"); dist.all_reduce(x, op=dist.ReduceOp.PRODUCT)
keep("all_reduce_product_float16", x)
x = T(rank); dist.broadcast(x, 1); keep("broadcast", x)
outs = [flow.zeros(2, 3) for _ in range(world)]
dist.all_gather(outs, T(rank)); keep("all_gather", flow.stack(outs))
out = flow.zeros(world * 2, 3)
dist.all_gather_into_tensor(out, T(rank)); keep("all_gather_into", out)
if rank == world - 1:
    outs = [flow.zeros(2, 3) for _ in range(world)]
    dist.gather(T(rank), outs, dst=world - 1); keep("gather", flow.stack(outs))
else:
    dist.gather(T(rank), dst=world - 1)
x = flow.zeros(2, 3)
dist.scatter(x, [T(100 + j) for j in range(world)] if rank == 0 else None, src=0)
keep("scatter", x)
outs = [flow.zeros(2, 3) for _ in range(world)]
dist.all_to_all(outs, [T(10 * rank + j) for j in range(world)])
keep("all_to_all", flow.stack(outs))
inp = flow.cat([T(10 * rank + j) for j in range(world)])
out = flow.zeros(world * 2, 3); dist.all_to_all_single(out, inp); keep("all_to_all_single", out)
out = flow.zeros(world * 2, 3)
dist.all_to_all_single(out, inp, [2] * world, [2] * world); keep("all_to_all_single_splits", out)

def send(d):
    dist.send(T(rank), d, tag=5)
def recv(s):
    y = flow.zeros(2, 3)
    keep("recv_returns", dist.recv(y, s, tag=5))
    return y
keep("send_recv", ring(send, recv))

def isend(d):
    dist.isend(T(rank, dtype="int64"), d).wait()
def irecv(s):
    y = flow.zeros(2, 3, dtype=flow.int64)
    work = dist.irecv(y, s)
    keep("irecv_source", work.source_rank())
    work.wait()
    return y
keep("isend_irecv", ring(isend, irecv))

x = T(rank)
work = dist.all_reduce(x, async_op=True)
keep("async_wait", [work.wait(), work.is_completed()])
keep("async_all_reduce", x)
outs = [flow.zeros(2, 3) for _ in range(world)]
dist.all_gather(outs, T(rank), async_op=True).wait(); keep("async_all_gather", flow.stack(outs))
dist.barrier()
dist.barrier(async_op=True).wait()

dist.destroy_process_group()
keep("destroyed", dist.is_initialized())
# The same port again: destroy closes rank 0's store before any rank leaves it.
dist.init_process_group("gloo", rank=rank, world_size=world)
x = T(rank); dist.all_reduce(x); keep("after_same_port", x)
dist.destroy_process_group()
# And another port.
addr, port = os.environ["MASTER_ADDR"], os.environ["REINIT_PORT"]
dist.init_process_group("gloo", init_method=f"tcp://{addr}:{port}", rank=rank, world_size=world)
x = T(rank); dist.all_reduce(x); keep("after_reinit", x)
dist.destroy_process_group()
"""


def _dist_expected(world, rank):
    def ins(seed_of, dt="float32"):
        return [rank_input(seed_of(r), dtype=dt) for r in range(world)]

    reducers = {"sum": np.sum, "product": np.prod, "min": np.min, "max": np.max}
    own32 = ins(lambda r: r)
    to_me32 = ins(lambda r: 10 * r + rank)
    prev = (rank - 1) % world
    exp = {"info": np.array([1, rank, world, 1, rank, world])}
    for dt in ("float32", "int64"):
        own = ins(lambda r: r, dt)
        for name, fn in reducers.items():
            exp[f"all_reduce_{name}_{dt}"] = fn(np.stack(own), axis=0).astype(dt)
        exp[f"reduce_max_{dt}"] = np.max(own, axis=0) if rank == world - 1 else own[rank]
        to_me = ins(lambda r: 10 * r + rank, dt)
        exp[f"reduce_scatter_min_{dt}"] = np.min(to_me, axis=0)
        exp[f"reduce_scatter_tensor_max_{dt}"] = np.max(to_me, axis=0)
    exp["all_reduce_avg"] = sum(own32) / np.float32(world)
    exp["reduce_avg"] = sum(own32) / np.float32(world) if rank == 0 else own32[rank]
    exp["reduce_scatter_tensor_avg"] = sum(to_me32) / np.float32(world)
    exp["all_reduce_product_float16"] = np.prod(ins(lambda r: r, "float16"), axis=0)
    exp["broadcast"] = own32[1]
    exp["all_gather"] = exp["async_all_gather"] = np.stack(own32)
    exp["all_gather_into"] = np.concatenate(own32)
    if rank == world - 1:
        exp["gather"] = np.stack(own32)
    exp["scatter"] = rank_input(100 + rank)
    exp["all_to_all"] = np.stack(to_me32)
    exp["all_to_all_single"] = exp["all_to_all_single_splits"] = np.concatenate(to_me32)
    exp["recv_returns"] = np.array(prev)
    exp["send_recv"] = own32[prev]
    exp["irecv_source"] = np.array(prev)
    exp["isend_irecv"] = rank_input(prev, dtype="int64")
    exp["async_wait"] = np.array([True, True])
    exp["async_all_reduce"] = sum(own32)
    exp["destroyed"] = np.array(False)
    exp["after_reinit"] = exp["after_same_port"] = sum(own32)
    return exp


@pytest.mark.parametrize("world", [2, 3])
def test_distributed_ops(tmp_path, world):
    for rank, results in enumerate(_run_ranks(tmp_path, world, DIST_BODY)):
        _check(results, _dist_expected(world, rank))


# Non-contiguous tensors (transposed views) in every role, empty tensors, 0-d tensors, a large
# tensor, and the order of queued ops around the collectives.
EDGE_BODY = """
def NC(seed, dtype="float32"):
    # A (2, 3) view with the values of T(seed), laid out transposed.
    return flow.tensor(np.ascontiguousarray(rank_input(seed, (2, 3), dtype).T)).t()

assert not NC(0).is_contiguous()
x = NC(rank); flow.comm.all_reduce(x); keep("nc_all_reduce", x)
x = NC(rank, "int64"); flow.comm.broadcast(x, 0); keep("nc_broadcast", x)
x = NC(rank); flow.comm.reduce(x, 0); keep("nc_reduce", x)
outs = [flow.zeros(3, 2).t() for _ in range(world)]
flow.comm.all_gather(outs, NC(rank)); keep("nc_all_gather", flow.stack(outs))
out = flow.zeros(3, world * 2).t()
flow.comm.all_gather_into_tensor(out, NC(rank)); keep("nc_all_gather_into", out)
x = flow.zeros(3, 2).t()
flow.comm.scatter(x, [NC(100 + j) for j in range(world)] if rank == 0 else None, 0)
keep("nc_scatter", x)
if rank == 0:
    outs = [flow.zeros(3, 2).t() for _ in range(world)]
    flow.comm.gather(NC(rank), outs, 0); keep("nc_gather", flow.stack(outs))
else:
    flow.comm.gather(NC(rank), None, 0)
x = flow.zeros(3, 2).t()
flow.comm.reduce_scatter(x, [NC(10 * rank + j) for j in range(world)]); keep("nc_reduce_scatter", x)
logical = np.concatenate([rank_input(10 * rank + j) for j in range(world)])
inp = flow.tensor(np.ascontiguousarray(logical.T)).t()
x = flow.zeros(3, 2).t()
flow.comm.reduce_scatter_tensor(x, inp); keep("nc_reduce_scatter_tensor", x)
out = flow.zeros(3, world * 2).t()
dist.all_to_all_single(out, inp); keep("nc_all_to_all_single", out)
outs = [flow.zeros(3, 2).t() for _ in range(world)]
flow.comm.all_to_all(outs, [NC(10 * rank + j) for j in range(world)])
keep("nc_all_to_all", flow.stack(outs))
x = NC(rank); dist.all_reduce(x, op=dist.ReduceOp.AVG); keep("nc_avg", x)
y = flow.zeros(3, 2).t()
ring(lambda d: flow.comm.send(NC(rank), d), lambda s: flow.comm.recv(s, out=y))
keep("nc_recv_out", y)
y = flow.zeros(3, 2).t()
ring(lambda d: dist.send(NC(rank), d), lambda s: dist.recv(y, s)); keep("nc_dist_recv", y)

e = flow.zeros(0, 3)
flow.comm.all_reduce(e); flow.comm.broadcast(e, 0); flow.comm.reduce(e, 0)
flow.comm.all_gather([flow.zeros(0, 3) for _ in range(world)], e)
flow.comm.all_gather_into_tensor(flow.zeros(0, 3), e)
flow.comm.gather(e, [flow.zeros(0, 3) for _ in range(world)] if rank == 0 else None, 0)
flow.comm.scatter(e, [flow.zeros(0, 3) for _ in range(world)] if rank == 0 else None, 0)
flow.comm.reduce_scatter(e, [flow.zeros(0, 3) for _ in range(world)])
flow.comm.reduce_scatter_tensor(flow.zeros(0), flow.zeros(0))
flow.comm.all_to_all([flow.zeros(0) for _ in range(world)], [flow.zeros(0) for _ in range(world)])
dist.all_reduce(e, op=dist.ReduceOp.AVG)
dist.all_to_all_single(flow.zeros(0), flow.zeros(0))
keep("empty_recv", ring(lambda d: flow.comm.send(flow.zeros(0, 3, dtype=flow.int32), d),
                        lambda s: flow.comm.recv(s)))
x = T(rank); flow.comm.all_reduce(x); keep("after_empty", x)  # the ranks are still in step

s = flow.tensor(float(rank + 1)); flow.comm.all_reduce(s); keep("scalar", s)
big = flow.ones(100000) * (rank + 1); flow.comm.all_reduce(big); keep("big", big)

# Ordering: the collective waits for the op that produced its input, and the ops after it see
# its result; a write to a sent tensor waits for the send.
x = flow.ones(4); y = x * 2; flow.comm.all_reduce(y); z = y + 1; keep("order_z", z)
y.mul_(3); flow.comm.all_reduce(y); keep("order_twice", y)
a = flow.ones(1000)
for _ in range(5):
    flow.comm.all_reduce(a)
keep("order_chain", a[:3])
b = flow.full((4,), float(rank)); c = b.clone(); flow.comm.all_reduce(b); keep("order_mixed", c + b)
def send_then_write(d):
    t = T(rank)
    flow.comm.send(t, d)
    t.add_(100)
keep("order_send_write", ring(send_then_write, lambda s: flow.comm.recv(s)))
keep("lazy_init", [dist.is_initialized(), dist.get_rank()])

# Values read right after an in-place op, while the last rank is still late to join it.
import time
def late():
    if rank == world - 1:
        time.sleep(0.2)
late(); x = T(rank); flow.comm.all_reduce(x); keep("read_now_all_reduce", x.numpy().copy())
late(); x = T(rank); flow.comm.broadcast(x, world - 1)
keep("read_now_broadcast", np.array(x.tolist(), np.float32))
late(); x = flow.zeros(2, 3); flow.comm.reduce_scatter_tensor(x, flow.cat([T(rank)] * world))
keep("read_now_reduce_scatter", x.numpy().copy())
late(); x = T(rank); flow.comm.reduce(x, 0); keep("read_now_reduce", x.numpy().copy())
"""


def _edge_expected(world, rank):
    own = [rank_input(r) for r in range(world)]
    to_me = [rank_input(10 * r + rank) for r in range(world)]
    prev = (rank - 1) % world
    return {
        "nc_all_reduce": sum(own),
        "nc_broadcast": rank_input(0, dtype="int64"),
        "nc_reduce": sum(own) if rank == 0 else own[rank],
        "nc_all_gather": np.stack(own),
        "nc_all_gather_into": np.concatenate(own),
        "nc_scatter": rank_input(100 + rank),
        **({"nc_gather": np.stack(own)} if rank == 0 else {}),
        "nc_reduce_scatter": sum(to_me),
        "nc_reduce_scatter_tensor": sum(to_me),
        "nc_all_to_all_single": np.concatenate(to_me),
        "nc_all_to_all": np.stack(to_me),
        "nc_avg": sum(own) / np.float32(world),
        "nc_recv_out": own[prev],
        "nc_dist_recv": own[prev],
        "empty_recv": np.zeros((0, 3), np.int32),
        "after_empty": sum(own),
        "scalar": np.float32(world * (world + 1) / 2),
        "big": np.full(100000, world * (world + 1) / 2, np.float32),
        "order_z": np.full(4, 2 * world + 1, np.float32),
        "order_twice": np.full(4, 2 * world * 3 * world, np.float32),
        "order_chain": np.full(3, world**5, np.float32),
        "order_mixed": np.full(4, rank + world * (world - 1) / 2, np.float32),
        "order_send_write": own[prev],
        "lazy_init": np.array([1, rank]),
        "read_now_all_reduce": sum(own),
        "read_now_broadcast": own[world - 1],
        "read_now_reduce_scatter": sum(own),
        "read_now_reduce": sum(own) if rank == 0 else own[rank],
    }


@pytest.mark.parametrize("world", [2, 3])
def test_edge_cases(tmp_path, world):
    for rank, results in enumerate(_run_ranks(tmp_path, world, EDGE_BODY)):
        _check(results, _edge_expected(world, rank))


# ---- a dead peer -----------------------------------------------------------------------------

DEAD_PEER_SCRIPT = """
import os, sys, time
import oneflow as flow
rank = int(os.environ["RANK"])
flow.comm.barrier()  # both ranks are connected
if rank == int(os.environ.get("DEAD_RANK", "1")):
    os._exit(3)
time.sleep(1)
x = flow.ones(4)
start = time.monotonic()
try:
    flow.comm.all_reduce(x)
    x.numpy()
except RuntimeError as e:
    print(f"raised after {time.monotonic() - start:.1f} s: {e}", flush=True)
    sys.exit(0)
print("no error", flush=True)
sys.exit(1)
"""


@pytest.mark.parametrize("dead", [1, 0])
def test_dead_peer_fails_the_survivor(tmp_path, dead):
    # Started without the launcher, which would stop the survivor as soon as the other exits.
    _write(tmp_path / "script.py", DEAD_PEER_SCRIPT)
    port = _free_port()
    start = time.monotonic()
    procs = [
        subprocess.Popen(
            [sys.executable, "script.py"],
            cwd=tmp_path,
            env=_env(
                RANK=rank,
                WORLD_SIZE=2,
                MASTER_ADDR="127.0.0.1",
                MASTER_PORT=port,
                ONEFLOW_COMM_TIMEOUT=10,
                DEAD_RANK=dead,
            ),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for rank in range(2)
    ]
    try:
        outputs = [p.communicate(timeout=TIMEOUT) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.communicate()
    elapsed = time.monotonic() - start
    live = 1 - dead
    assert procs[dead].returncode == 3, outputs[dead]
    assert procs[live].returncode == 0, outputs[live]
    assert outputs[live][0].startswith("raised after"), outputs[live]
    # The error names the rank that has gone.
    assert f"rank {dead} " in outputs[live][0] and "exited" in outputs[live][0], outputs[live]
    assert elapsed < 30


def test_dead_peer_through_the_launcher(tmp_path):
    _write(tmp_path / "script.py", DEAD_PEER_SCRIPT)
    start = time.monotonic()
    proc = _launch(
        tmp_path, "--nproc_per_node", "2", "script.py", env=_env(ONEFLOW_COMM_TIMEOUT=10)
    )
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert time.monotonic() - start < 30


# ---- argument errors, on a world of one ------------------------------------------------------

ERRORS_SCRIPT = """
import json, os
import oneflow as flow
import oneflow.distributed as dist

t = flow.zeros(3)
i64 = flow.zeros(3, dtype=flow.int64)
seen = {}

def case(name, fn):
    try:
        fn()
        seen[name] = ["no error", ""]
    except Exception as e:
        seen[name] = [type(e).__name__, str(e)]

# torch.distributed-style calls before init_process_group (oneflow.comm is not used yet, so
# nothing initialised the communicator)
# (get_rank works before the group is joined, as OneFlow's: the launcher's rank)
seen["dist_get_rank_uninit"] = [str(dist.get_rank()), str(dist.get_world_size())]
case("dist_all_reduce_uninit", lambda: dist.all_reduce(t))
case("dist_destroy_uninit", lambda: dist.destroy_process_group())
case("init_nccl", lambda: dist.init_process_group("nccl"))
case("init_mpi", lambda: dist.init_process_group("mpi"))
case("init_store", lambda: dist.init_process_group("gloo", store=object()))
case("init_file", lambda: dist.init_process_group("gloo", init_method="file:///tmp/x"))
case("init_tcp_no_rank", lambda: dist.init_process_group("gloo", init_method="tcp://127.0.0.1:1"))
case("init_bad_scheme", lambda: dist.init_process_group("gloo", init_method="udp://a:1"))
seen["initialized_after_errors"] = [str(dist.is_initialized()), ""]
dist.init_process_group("gloo")
case("init_twice", lambda: dist.init_process_group("gloo"))
case("dist_band", lambda: dist.all_reduce(t, op=dist.ReduceOp.BAND))
case("dist_avg_int", lambda: dist.all_reduce(i64, op=dist.ReduceOp.AVG))
case("dist_op_string", lambda: dist.all_reduce(t, op="sum"))
case("dist_group", lambda: dist.all_reduce(t, group=object()))
case("dist_a2a_single_numel", lambda: dist.all_to_all_single(flow.zeros(3), flow.zeros(2)))
case("dist_a2a_single_splits", lambda: dist.all_to_all_single(
    flow.zeros(3), flow.zeros(3), None, [1, 2]))
case("dist_a2a_single_0d", lambda: dist.all_to_all_single(flow.zeros(()), flow.zeros(())))
case("dist_recv_any", lambda: dist.recv(t))
case("dist_send_self", lambda: dist.send(t, 0))
case("dist_send_tag", lambda: dist.send(t, 0, tag=-1))
case("dist_new_group_subset", lambda: dist.new_group([0, 1]))
seen["dist_new_group_all"] = [repr(dist.new_group([0])), ""]

case("all_reduce_list", lambda: flow.comm.all_reduce([t]))
case("all_gather_len", lambda: flow.comm.all_gather([t, t, t], t))
case("all_gather_not_list", lambda: flow.comm.all_gather(t, t))
case("all_gather_shape", lambda: flow.comm.all_gather([flow.zeros(2)], t))
case("all_gather_dtype", lambda: flow.comm.all_gather([i64], t))
case("all_gather_into_numel", lambda: flow.comm.all_gather_into_tensor(flow.zeros(4), t))
case("all_gather_into_dtype", lambda: flow.comm.all_gather_into_tensor(i64, t))
case("broadcast_src", lambda: flow.comm.broadcast(t, 1))
case("broadcast_src_type", lambda: flow.comm.broadcast(t, 0.0))
case("reduce_dst", lambda: flow.comm.reduce(t, -1))
case("gather_no_list", lambda: flow.comm.gather(t, None, 0))
case("gather_dst", lambda: flow.comm.gather(t, [t], 3))
case("scatter_no_list", lambda: flow.comm.scatter(t, None, 0))
case("scatter_shape", lambda: flow.comm.scatter(t, [flow.zeros(4)], 0))
case("reduce_scatter_len", lambda: flow.comm.reduce_scatter(t, [t, t]))
case("reduce_scatter_tensor_numel", lambda: flow.comm.reduce_scatter_tensor(flow.zeros(2), t))
case("all_to_all_len", lambda: flow.comm.all_to_all([t, t], [t]))
case("all_to_all_uneven", lambda: flow.comm.all_to_all([flow.zeros(2)], [t]))
case("all_to_all_dtype", lambda: flow.comm.all_to_all([i64], [t]))
case("send_self", lambda: flow.comm.send(t, 0))
case("send_dst", lambda: flow.comm.send(t, 1))
case("recv_partial", lambda: flow.comm.recv(0, shape=(3,)))
case("recv_self", lambda: flow.comm.recv(0))
case("recv_any", lambda: flow.comm.recv(None))
# The group of one still works after the errors.
x = flow.ones(3); flow.comm.all_reduce(x)
seen["works"] = [str(x.tolist()), ""]
print(json.dumps(seen))
"""

ERRORS = {
    "dist_get_rank_uninit": ("0", "1"),
    "dist_all_reduce_uninit": ("ValueError", "all_reduce: Default process group has not been"),
    "dist_destroy_uninit": ("ValueError", "destroy_process_group: Default process group"),
    "init_nccl": ("NotImplementedError", "init_process_group: the NCCL backend is not built"),
    "init_mpi": ("ValueError", "init_process_group: unsupported backend 'mpi'"),
    "init_store": ("NotImplementedError", "init_process_group: store= is not supported"),
    "init_file": ("NotImplementedError", "init_process_group: file:// rendezvous"),
    "init_tcp_no_rank": ("ValueError", "init_process_group: rank missing"),
    "init_bad_scheme": ("ValueError", "init_process_group: unsupported init_method 'udp://a:1'"),
    "initialized_after_errors": ("False", ""),
    "init_twice": ("ValueError", "trying to initialize the default process group twice!"),
    "dist_band": ("NotImplementedError", "all_reduce: ReduceOp.BAND is not supported"),
    "dist_avg_int": ("ValueError", "all_reduce: ReduceOp.AVG needs a floating-point tensor"),
    "dist_op_string": ("TypeError", "all_reduce: expected op to be a ReduceOp"),
    "dist_group": ("TypeError", "all_reduce: expected a group made by new_group"),
    "dist_a2a_single_numel": ("ValueError", "all_to_all_single: output has 3 elements"),
    "dist_a2a_single_splits": ("ValueError", "all_to_all_single: expected 1 input_split_sizes"),
    "dist_a2a_single_0d": ("ValueError", "all_to_all_single: input must have at least one"),
    "dist_recv_any": ("NotImplementedError", "recv: receiving from any rank"),
    "dist_send_self": ("ValueError", "send: invalid dst rank 0: it is the rank of the current"),
    "dist_send_tag": ("ValueError", "send: expected tag to be a non-negative int"),
    "dist_new_group_subset": ("ValueError", "new_group: expected distinct ranks in [0, 0]"),
    "dist_new_group_all": ("<oneflow.distributed.ProcessGroup ranks=[0]>", ""),  # a group apart
    "all_reduce_list": ("TypeError", "all_reduce: expected tensor to be a Tensor, got list"),
    "all_gather_len": (
        "ValueError",
        "all_gather: expected a list of 1 tensors for tensor_list, got 3",
    ),
    "all_gather_not_list": ("TypeError", "all_gather: expected tensor_list to be a list"),
    "all_gather_shape": ("ValueError", "all_gather: tensor_list[0] has shape (2,), expected (3,)"),
    "all_gather_dtype": (
        "ValueError",
        "all_gather: tensor_list[0] has dtype int64, expected float32",
    ),
    "all_gather_into_numel": ("ValueError", "all_gather_into_tensor: output_tensor has 4 elements"),
    "all_gather_into_dtype": (
        "ValueError",
        "all_gather_into_tensor: output_tensor has dtype int64",
    ),
    "broadcast_src": ("ValueError", "broadcast: invalid src 1 (expected a rank in [0, 0])"),
    "broadcast_src_type": ("TypeError", "broadcast: expected src to be an int, got float"),
    "reduce_dst": ("ValueError", "reduce: invalid dst -1"),
    "gather_no_list": ("ValueError", "gather: gather_list must be given on the destination rank"),
    "gather_dst": ("ValueError", "gather: invalid dst 3"),
    "scatter_no_list": ("ValueError", "scatter: scatter_list must be given on the source rank"),
    "scatter_shape": ("ValueError", "scatter: scatter_list[0] has shape (4,), expected (3,)"),
    "reduce_scatter_len": ("ValueError", "reduce_scatter: expected a list of 1 tensors"),
    "reduce_scatter_tensor_numel": ("ValueError", "reduce_scatter_tensor: input has 3 elements"),
    "all_to_all_len": ("ValueError", "all_to_all: expected a list of 1 tensors"),
    "all_to_all_uneven": ("NotImplementedError", "all_to_all: tensors with different numbers"),
    "all_to_all_dtype": ("ValueError", "all_to_all: output_tensor_list[0] has dtype int64"),
    "send_self": ("ValueError", "send: invalid destination rank 0: a process cannot send to"),
    "send_dst": ("ValueError", "send: invalid dst 1"),
    "recv_partial": ("ValueError", "recv: give all or none of shape, dtype and device"),
    "recv_self": ("ValueError", "recv: invalid source rank 0"),
    "recv_any": ("NotImplementedError", "recv: receiving from any rank (src=None)"),
    "works": ("[1.0, 1.0, 1.0]", ""),
}


def _run_script(tmp_path, text, **env):
    _write(tmp_path / "script.py", text)
    return subprocess.run(
        [sys.executable, "script.py"],
        cwd=tmp_path,
        env=_env(**env),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )


def test_argument_errors(tmp_path):
    proc = _run_script(tmp_path, ERRORS_SCRIPT, RANK=0, WORLD_SIZE=1)
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout.splitlines()[-1])
    assert set(seen) == set(ERRORS)
    for name, (kind, prefix) in ERRORS.items():
        assert seen[name][0] == kind and seen[name][1].startswith(prefix), (name, seen[name])


INIT_ERRORS_SCRIPT = """
import json, os
import oneflow as flow

seen = {}
def case(name, env):
    for key in ("RANK", "WORLD_SIZE", "MASTER_PORT", "ONEFLOW_COMM_TIMEOUT"):
        os.environ.pop(key, None)
    os.environ.update(env)
    try:
        flow.comm.all_reduce(flow.ones(1))
        seen[name] = ["no error", ""]
    except Exception as e:
        seen[name] = [type(e).__name__, str(e)]

case("no_port", {"RANK": "0", "WORLD_SIZE": "2"})
case("rank_range", {"RANK": "2", "WORLD_SIZE": "2", "MASTER_PORT": "1"})
case("bad_world", {"WORLD_SIZE": "two"})
case("bad_timeout", {"ONEFLOW_COMM_TIMEOUT": "-1"})
print(json.dumps(seen))
"""


def test_initialisation_errors(tmp_path):
    proc = _run_script(tmp_path, INIT_ERRORS_SCRIPT)
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout.splitlines()[-1])
    assert seen == {
        "no_port": [
            "ValueError",
            "all_reduce: environment variable MASTER_PORT is not set (WORLD_SIZE=2); start the "
            "program with `python -m oneflow.distributed.launch`, which sets it",
        ],
        "rank_range": ["ValueError", "all_reduce: rank 2 is out of range for world size 2"],
        "bad_world": [
            "ValueError",
            "all_reduce: environment variable WORLD_SIZE must be an integer, got 'two'",
        ],
        "bad_timeout": [
            "ValueError",
            "all_reduce: environment variable ONEFLOW_COMM_TIMEOUT must be a positive number "
            "of seconds, got '-1'",
        ],
    }


# ---- oneflow.env and DistributedSampler, in this process --------------------------------------


def _clear_rank_variables(monkeypatch):
    for name in RANK_VARIABLES:
        monkeypatch.delenv(name, raising=False)


def test_env_defaults_without_launcher(monkeypatch):
    _clear_rank_variables(monkeypatch)
    assert (flow.env.get_rank(), flow.env.get_world_size()) == (0, 1)
    assert (flow.env.get_local_rank(), flow.env.get_node_size()) == (0, 1)
    assert flow.env.all_device_placement("cpu") == flow.placement("cpu", [0])
    assert flow.env.rdma_is_initialized() is False
    with pytest.raises(NotImplementedError, match="init_rdma: RDMA is not supported"):
        flow.env.init_rdma()


def test_env_reads_launcher_variables(monkeypatch):
    _clear_rank_variables(monkeypatch)
    for name, value in dict(RANK=5, WORLD_SIZE=8, LOCAL_RANK=1, LOCAL_WORLD_SIZE=4).items():
        monkeypatch.setenv(name, str(value))
    assert flow.env.get_rank() == 5 and flow.env.get_world_size() == 8
    assert flow.env.get_local_rank() == 1 and flow.env.get_node_size() == 2
    assert flow.env.all_device_placement("cuda").ranks.tolist() == list(range(8))
    monkeypatch.setenv("RANK", "x")
    with pytest.raises(ValueError, match="environment variable RANK must be an integer"):
        flow.env.get_rank()


def test_distributed_module_surface():
    dist = flow.distributed
    assert dist.is_available() and dist.is_gloo_available() and not dist.is_nccl_available()
    assert flow.distributed.launch.main is not None
    ops = [dist.ReduceOp.SUM, dist.ReduceOp.PRODUCT, dist.ReduceOp.MIN, dist.ReduceOp.MAX]
    assert len(set(ops)) == 4 and dist.ReduceOp.AVG not in ops
    assert flow.utils.data.DistributedSampler is flow.utils.data.distributed.DistributedSampler


def _interleave(shares):
    """The order the shares were dealt from: element k of share r is at k * len(shares) + r."""
    return [share[k] for k in range(len(shares[0])) for share in shares]


@pytest.mark.parametrize("n", [1, 7, 10, 11, 12])
@pytest.mark.parametrize("replicas", [1, 2, 3, 4])
@pytest.mark.parametrize("drop_last", [False, True])
def test_distributed_sampler_partition(n, replicas, drop_last):
    dataset = list(range(n))
    for shuffle in (False, True):
        samplers = [
            flow.utils.data.DistributedSampler(
                dataset, replicas, r, shuffle=shuffle, seed=3, drop_last=drop_last
            )
            for r in range(replicas)
        ]
        references = [
            torch.utils.data.DistributedSampler(
                dataset, replicas, r, shuffle=shuffle, seed=3, drop_last=drop_last
            )
            for r in range(replicas)
        ]
        shares = [list(s) for s in samplers]
        for share, sampler, reference in zip(shares, samplers, references):
            assert len(share) == len(sampler) == len(reference)
            if not shuffle:  # the order needs no random numbers: it is PyTorch's
                assert share == list(reference)
        dealt = _interleave(shares)
        if drop_last:
            # A prefix of a permutation: disjoint shares, the tail dropped.
            assert len(set(dealt)) == len(dealt) == len(shares[0]) * replicas
            assert n - len(dealt) < replicas
        else:
            # A permutation, padded by repeating its start.
            assert sorted(dealt[:n]) == dataset
            assert dealt[n:] == (dealt[:n] * replicas)[: len(dealt) - n]


def test_distributed_sampler_epochs_and_defaults(monkeypatch):
    dataset = list(range(20))
    sampler = flow.utils.data.DistributedSampler(dataset, 2, 0, seed=7)
    first = list(sampler)
    assert list(sampler) == first  # the same epoch gives the same order
    sampler.set_epoch(1)
    second = list(sampler)
    assert second != first
    other = flow.utils.data.DistributedSampler(dataset, 2, 1, seed=7)
    other.set_epoch(1)
    assert sorted(second + list(other)) == dataset  # every replica shuffles alike

    _clear_rank_variables(monkeypatch)
    monkeypatch.setenv("RANK", "2")
    monkeypatch.setenv("WORLD_SIZE", "3")
    sampler = flow.utils.data.DistributedSampler(dataset, shuffle=False)
    assert (sampler.num_replicas, sampler.rank) == (3, 2)
    assert list(sampler) == [2, 5, 8, 11, 14, 17, 0]
    loader = flow.utils.data.DataLoader(dataset, batch_size=3, sampler=sampler)
    assert [b.tolist() for b in loader] == [[2, 5, 8], [11, 14, 17], [0]]
    with pytest.raises(
        ValueError, match=r"Invalid rank 3, rank should be in the interval \[0, 2\]"
    ):
        flow.utils.data.DistributedSampler(dataset, 3, 3)


def test_init_process_group_after_oneflow_style_code_joined_the_group(tmp_path):
    _write(
        tmp_path / "mixed.py",
        """
        import oneflow as flow
        import oneflow.distributed as dist

        flow.comm.barrier()  # joins the launcher's group implicitly (as a global tensor would)
        dist.init_process_group("gloo")  # PyTorch-style code after it names the same group
        t = flow.ones(2) * (dist.get_rank() + 1)
        dist.all_reduce(t)
        try:
            dist.init_process_group("gloo")
            second = "accepted"
        except ValueError as e:
            second = "twice" if "twice" in str(e) else str(e)
        print(f"rank {dist.get_rank()} {t.tolist()} {second}")  # one write: ranks interleave
        """,
    )
    proc = _launch(tmp_path, "--nproc_per_node", "2", "mixed.py")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "[3.0, 3.0] twice" in proc.stdout


def test_save_and_load_take_oneflow_positional_ranks_and_a_placement(tmp_path):
    _write(
        tmp_path / "ckpt.py",
        """
        import oneflow as flow

        p = flow.placement("cpu", ranks=[0, 1])
        y = flow.arange(3.0).to_global(p, flow.sbp.broadcast)
        flow.save({"y": y}, "ckpt.of", 0)  # OneFlow's save(obj, path, global_dst_rank)
        flow.comm.barrier()
        a = flow.load("ckpt.of", 0)["y"]  # OneFlow's load(path, global_src_rank)
        b = flow.load("ckpt.of", map_location=p)["y"]  # a placement: global there
        # one write: the ranks' unbuffered output interleaves
        print(f"rank {flow.env.get_rank()} {a.is_global} {a.placement} {a.numpy().tolist()} "
              f"{b.is_global} {b.sbp} {b.to_local().tolist()}")
        """,
    )
    proc = _launch(tmp_path, "--nproc_per_node", "2", "ckpt.py")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # the loaded tensors live on the reading rank (OneFlow's), their values reach every rank
    placed = 'oneflow.placement(type="cpu", ranks=[0])'
    line = f"True {placed} [0.0, 1.0, 2.0] True (oneflow.sbp.broadcast,) [0.0, 1.0, 2.0]"
    assert proc.stdout.count(line) == 2, proc.stdout
