"""The README's main job: the example trains and its loss falls."""

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_train_mlp_loss_falls(device):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    r = subprocess.run(
        [
            sys.executable,
            os.path.join(ROOT, "examples", "train_mlp.py"),
            "--steps",
            "100",
            "--device",
            device,
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    first = float(r.stdout.splitlines()[0].split()[-1])
    last = float(r.stdout.splitlines()[-2].split()[-1])
    assert last < 0.5 * first, r.stdout


def _run_example(name, *args, timeout=600):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    r = subprocess.run(
        [sys.executable, os.path.join(ROOT, "examples", name), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def _summary(out):
    line = next(s for s in out.splitlines() if s.startswith("summary:"))
    return dict(kv.split("=", 1) for kv in line.split() if "=" in kv)


def test_digits_mlp_and_lenet_reach_97_percent():
    for model in ["mlp", "lenet"]:
        s = _summary(_run_example("digits_mlp.py", "--model", model))
        assert float(s["accuracy"].rstrip("%")) >= 97.0, s


def test_digits_mlp_compiled_with_graph_trains_as_eager():
    # The same seed gives the same dropout masks and updates: the graph's replays run the
    # kernels eager execution runs, so the printed loss and accuracy agree.
    eager = _summary(_run_example("digits_mlp.py", "--epochs", "8"))
    graph = _summary(_run_example("digits_mlp.py", "--epochs", "8", "--graph"))
    assert graph["loss"] == eager["loss"] and graph["accuracy"] == eager["accuracy"], (graph, eager)
    assert float(graph["accuracy"].rstrip("%")) >= 90.0, graph


@pytest.mark.parametrize("flags", [[], ["--global-tensors"]], ids=["ddp", "global"])
def test_digits_mlp_data_parallel_on_two_processes(flags):
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    r = subprocess.run(
        [sys.executable, "-m", "oneflow.distributed.launch", "--nproc_per_node", "2"]
        + ["--master_port", str(port), os.path.join(ROOT, "examples", "digits_mlp.py")]
        + ["--epochs", "40"]
        + flags,
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("summary:") == 1, r.stdout  # rank 0 reports
    s = _summary(r.stdout)
    assert float(s["accuracy"].rstrip("%")) >= 96.0, s


def test_char_gpt_learns():
    s = _summary(_run_example("char_gpt.py", "--steps", "150"))
    assert float(s["loss"]) < 3.0, s


def test_char_gpt_resume_gives_the_same_curve(tmp_path):
    import oneflow as flow

    sys.path.insert(0, os.path.join(ROOT, "examples"))
    try:
        import char_gpt
    finally:
        sys.path.pop(0)
    ckpt = str(tmp_path / "gpt.of")
    full, _ = char_gpt.main(["--steps", "40", "--layers", "2"])
    char_gpt.main(["--steps", "40", "--layers", "2", "--stop-at", "20", "--save", ckpt])
    resumed, _ = char_gpt.main(["--steps", "40", "--layers", "2", "--resume", ckpt])
    assert len(resumed) == 40
    import numpy as np

    np.testing.assert_allclose(resumed, full, rtol=1e-5)
    assert flow.load(ckpt)["step"] == 20
