"""Trains a two-layer MLP on a regression task whose data the program generates itself
(y = sin-like smooth function of x plus noise, built from the framework's own ops), with plain
SGD written against oneflow tensors. Prints the loss every few steps; it falls steadily.

    python examples/train_mlp.py [--steps N] [--device cpu|cuda]
"""

import argparse
import time

import numpy as np

import oneflow as flow


def make_data(n, d_in, rng):
    x = rng.standard_normal((n, d_in)).astype(np.float32)
    w_true = rng.standard_normal((d_in, 1)).astype(np.float32)
    y = np.tanh(x @ w_true) + 0.3 * (x[:, :1] ** 2) + 0.05 * rng.standard_normal((n, 1))
    return x, y.astype(np.float32)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--device", default="cpu")
    args = ap.parse_args()

    flow.manual_seed(0)
    rng = np.random.default_rng(0)
    n, d_in = 512, 8
    x_np, y_np = make_data(n, d_in, rng)
    x = flow.tensor(x_np, device=args.device)
    y = flow.tensor(y_np, device=args.device)

    def param(*shape, scale):
        return (flow.randn(*shape, device=args.device) * scale).requires_grad_()

    w1 = param(d_in, args.hidden, scale=(2.0 / d_in) ** 0.5)
    b1 = flow.zeros(args.hidden, device=args.device, requires_grad=True)
    w2 = param(args.hidden, 1, scale=(1.0 / args.hidden) ** 0.5)
    b2 = flow.zeros(1, device=args.device, requires_grad=True)
    params = [w1, b1, w2, b2]

    start = time.time()
    first = last = None
    for step in range(args.steps + 1):
        pred = (x @ w1 + b1).relu() @ w2 + b2
        err = pred - y
        loss = (err * err).sum() * (1.0 / n)
        for p in params:
            p.grad = None
        loss.backward()
        with flow.no_grad():
            for p in params:
                p.add_(p.grad, alpha=-args.lr)
        value = loss.item()
        first = value if first is None else first
        last = value
        if step % 25 == 0:
            print(f"step {step:4d}  loss {value:.5f}", flush=True)
    elapsed = time.time() - start
    print(f"loss {first:.5f} -> {last:.5f} in {args.steps} steps ({elapsed:.2f} s)")
    if not last < 0.5 * first:
        raise SystemExit("the loss did not fall by half: training is broken")


if __name__ == "__main__":
    main()
