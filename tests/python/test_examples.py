"""The README's main job: the example trains and its loss falls."""

import os
import subprocess
import sys

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
