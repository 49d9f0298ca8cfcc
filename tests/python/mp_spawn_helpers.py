"""Functions that spawned processes import by name (test_multiprocessing.py)."""

import os
import sys


def write_rank(i, directory, value):
    import oneflow as flow

    t = flow.tensor([float(value), float(i)])
    with open(os.path.join(directory, f"rank{i}.txt"), "w") as f:
        f.write(f"{t.sum().item()}")


def fail_on_one(i):
    if i == 1:
        raise ValueError("rank one failed on purpose")


def exit_with(i, code):
    if i == 0:
        sys.exit(code)
