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


def ddp_step(i, world, port, directory):
    import oneflow as flow
    import oneflow.distributed as dist

    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=i, world_size=world)
    flow.manual_seed(0)
    model = flow.nn.parallel.DistributedDataParallel(flow.nn.Linear(4, 2))
    opt = flow.optim.SGD(model.parameters(), lr=0.1)
    flow.manual_seed(10 + i)  # each rank its own batch
    model(flow.randn(3, 4)).square().sum().backward()
    opt.step()
    total = sum(float(p.sum()) for p in model.parameters())
    with open(os.path.join(directory, f"ddp{i}.txt"), "w") as f:
        f.write(repr(total))
    dist.destroy_process_group()
