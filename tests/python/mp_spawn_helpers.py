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


def add_to_shared(i, t, model):
    # t and the model's parameters arrive as shared memory: the parent sees the writes
    t[i] += 10.0 * (i + 1)
    import oneflow as flow

    with flow.no_grad():
        model.weight.add_(1.0)


def hogwild_train(rank, model, steps):
    # PyTorch's Hogwild example: every process steps an optimizer on the shared parameters
    import oneflow as flow

    flow.manual_seed(rank)
    opt = flow.optim.SGD(model.parameters(), lr=0.05)
    x = flow.randn(64, 4)
    y = x @ flow.tensor([[1.0], [-2.0], [0.5], [3.0]])
    for _ in range(steps):
        opt.zero_grad()
        flow.nn.functional.mse_loss(model(x), y).backward()
        opt.step()
