"""Resident memory stays flat while a million small tensors are created and dropped."""

import os
import time

import oneflow as flow


def rss_mib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def test_million_small_tensors_leave_memory_flat(device):
    x = flow.ones(4, device=device)
    for _ in range(10_000):  # warm up caches and the allocator
        (x + 1).sum()
    start = rss_mib()
    t0 = time.time()
    for _ in range(1_000_000):
        y = x + 1
        del y
    end = rss_mib()
    print(f"\nRSS {start:.1f} MiB -> {end:.1f} MiB after 1e6 tensors ({time.time() - t0:.1f} s)")
    assert end - start < 20, (start, end)


def test_ten_thousand_training_steps_leave_memory_flat():
    flow.manual_seed(0)
    model = flow.nn.Sequential(
        flow.nn.Linear(64, 128), flow.nn.ReLU(), flow.nn.Dropout(0.1), flow.nn.Linear(128, 10)
    )
    opt = flow.optim.Adam(model.parameters(), lr=1e-3)
    x, y = flow.randn(32, 64), flow.randint(0, 10, (32,))

    def step():
        loss = flow.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    for _ in range(500):  # warm up the allocator's caches and the optimizer state
        step()
    start = rss_mib()
    t0 = time.time()
    for _ in range(10_000):
        loss = step()
    end = rss_mib()
    print(
        f"\nRSS {start:.1f} MiB -> {end:.1f} MiB after 10,000 training steps "
        f"({time.time() - t0:.1f} s, final loss {loss.item():.4f})"
    )
    assert loss.item() < 0.1  # it trained: the batch is memorised
    assert end - start < 16, (start, end)
