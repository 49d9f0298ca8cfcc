"""Train an MLP on scikit-learn's 8x8 handwritten digits and report the test accuracy.

python examples/digits_mlp.py [--epochs 40] [--model mlp|lenet] [--seed 0] [--graph]

With --graph the training step is compiled once with flow.nn.Graph and replayed.

Data parallel on several processes, each training on its share of every epoch:
python -m oneflow.distributed.launch --nproc_per_node 2 examples/digits_mlp.py [--global-tensors]

With --global-tensors data parallelism is written with global tensors instead of
DistributedDataParallel: the model is broadcast over the ranks and each batch is split along
its first dim (docs/global.md).
"""

import argparse
import sys
import time

import numpy as np
from sklearn.datasets import load_digits

import oneflow as flow
import oneflow.nn as nn
from oneflow.nn.parallel import DistributedDataParallel
from oneflow.utils.data import DataLoader, DistributedSampler, TensorDataset


def mlp():
    return nn.Sequential(
        nn.Flatten(),
        nn.Linear(64, 128),
        nn.ReLU(),
        nn.Dropout(0.1),
        nn.Linear(128, 64),
        nn.ReLU(),
        nn.Linear(64, 10),
    )


def lenet():
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),  # 16 x 4 x 4
        nn.Conv2d(16, 32, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),  # 32 x 2 x 2
        nn.Flatten(),
        nn.Linear(128, 64),
        nn.ReLU(),
        nn.Linear(64, 10),
    )


def progress(epoch, epochs, loss, acc, width=30):
    done = int(width * epoch / epochs)
    bar = "#" * done + "." * (width - done)
    sys.stdout.write(f"\repoch {epoch:3d}/{epochs} [{bar}] loss {loss:.4f} test acc {acc:.2%}")
    sys.stdout.flush()


def evaluate(model, x, y):
    weight = next(model.parameters())
    if weight.is_global:  # the whole test set on every rank
        x = x.to_global(weight.placement, flow.sbp.broadcast)
        y = y.to_global(weight.placement, flow.sbp.broadcast)
    model.eval()
    with flow.no_grad():
        pred = model(x).argmax(1)
    model.train()
    return (pred == y).float().mean().item()


class TrainStep(nn.Graph):
    """The training step as a static graph: forward, loss, backward and the optimizer's update,
    traced on the first call (and on the first call of each new batch shape) and replayed."""

    def __init__(self, model, loss_fn, optimizer):
        super().__init__()
        self.model = model
        self.loss_fn = loss_fn
        self.add_optimizer(optimizer)

    def build(self, x, y):
        loss = self.loss_fn(self.model(x), y)
        loss.backward()
        return loss


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--epochs", type=int, default=40)
    parser.add_argument("--model", choices=["mlp", "lenet"], default="mlp")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--graph", action="store_true", help="train with a compiled nn.Graph")
    parser.add_argument(
        "--global-tensors",
        action="store_true",
        help="data parallel with global tensors (a broadcast model, split batches)",
    )
    args = parser.parse_args()

    flow.manual_seed(args.seed)
    digits = load_digits()
    images = (digits.images / 16.0).astype(np.float32)[:, None]  # N x 1 x 8 x 8
    labels = digits.target.astype(np.int64)
    order = np.random.default_rng(args.seed).permutation(len(labels))
    split = int(0.8 * len(labels))
    train_idx, test_idx = order[:split], order[split:]
    x_train, y_train = flow.tensor(images[train_idx]), flow.tensor(labels[train_idx])
    x_test, y_test = flow.tensor(images[test_idx]), flow.tensor(labels[test_idx])

    model = mlp() if args.model == "mlp" else lenet()
    world, rank = flow.env.get_world_size(), flow.env.get_rank()
    sampler = None
    if (world > 1 or args.global_tensors) and args.graph:
        parser.error("--graph trains on one process with local tensors")
    placement = flow.placement.all("cpu") if args.global_tensors else None
    if placement is not None:
        # Rank 0's initial weights are every rank's; weight gradients are partial sums over the
        # ranks' rows, all-reduced as backward makes them.
        model.to_global(placement, flow.sbp.broadcast)
        if world > 1:
            sampler = DistributedSampler(TensorDataset(x_train, y_train), seed=args.seed)
    elif world > 1:
        # Rank 0's initial weights reach every rank; gradients are averaged over the ranks.
        model = DistributedDataParallel(model)
        sampler = DistributedSampler(TensorDataset(x_train, y_train), seed=args.seed)
    optimizer = flow.optim.Adam(model.parameters(), lr=2e-3)
    scheduler = flow.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)
    g = flow.Generator()
    g.manual_seed(args.seed)
    loader = DataLoader(
        TensorDataset(x_train, y_train),
        batch_size=args.batch_size,
        shuffle=sampler is None,
        sampler=sampler,
        generator=g,
    )
    loss_fn = nn.CrossEntropyLoss()
    train_step = TrainStep(model, loss_fn, optimizer) if args.graph else None

    say = print if rank == 0 else (lambda *a, **k: None)
    say(
        f"{args.model}: {sum(p.numel() for p in model.parameters())} parameters, "
        f"{len(train_idx)} training and {len(test_idx)} test images"
        + (f", {world} processes" if world > 1 else "")
        + (", compiled with nn.Graph" if args.graph else "")
        + (", global tensors" if placement is not None else "")
    )
    start = time.perf_counter()
    for epoch in range(1, args.epochs + 1):
        total, count = 0.0, 0
        if sampler is not None:
            sampler.set_epoch(epoch)
        for xb, yb in loader:
            if placement is not None:  # this rank's rows of the global batch
                # (every rank's batch has the same size: no need to gather the shapes)
                xb = xb.to_global(placement, flow.sbp.split(0), check_meta=False)
                yb = yb.to_global(placement, flow.sbp.split(0), check_meta=False)
            if train_step is not None:
                loss = train_step(xb, yb)
            else:
                optimizer.zero_grad()
                loss = loss_fn(model(xb), yb)
                loss.backward()
                optimizer.step()
            total += loss.item() * len(yb)
            count += len(yb)
        scheduler.step()
        if world > 1 and placement is None:  # the loss over every rank's share
            sums = flow.tensor([total, float(count)], dtype=flow.float64)
            flow.comm.all_reduce(sums)
            total, count = sums.tolist()
        acc = evaluate(model, x_test, y_test) if placement is not None or rank == 0 else 0.0
        if rank == 0:
            progress(epoch, args.epochs, total / count, acc)
    elapsed = time.perf_counter() - start
    acc = evaluate(model, x_test, y_test)
    say()
    say(
        f"summary: model={args.model}{' (nn.Graph)' if args.graph else ''}"
        f"{' (global tensors)' if placement is not None else ''} epochs={args.epochs} "
        f"final train loss={total / count:.4f} "
        f"test accuracy={acc:.2%} time={elapsed:.1f}s "
        f"({args.epochs * len(train_idx) / elapsed:.0f} images/s"
        + (f" over {world} processes)" if world > 1 else ")")
    )
    return acc


if __name__ == "__main__":
    main()
