"""Resident memory stays flat while a million small tensors are created and dropped."""

import os
import subprocess
import sys
import time

import pytest

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


HUGE_PAGE_PROBE = """
import oneflow as flow
x = flow.randn(16, 1024, 1024)  # 64 MiB
x.sum().item()
lo_t = x.data_ptr()
hi_t = lo_t + x.numel() * 4
with open("/proc/self/smaps") as f:
    lines = f.read().splitlines()
# The huge-page-backed KiB of the mappings that hold the tensor's memory.
total = 0
for i, line in enumerate(lines):
    head = line.split()[0]
    if "-" in head and not head.endswith(":"):
        lo, hi = (int(v, 16) for v in head.split("-"))
        if lo < hi_t and hi > lo_t:
            total += next(int(l.split()[1]) for l in lines[i:] if l.startswith("AnonHugePages:"))
print(total)
"""


def _thp_mode():
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
            return f.read().split("[")[1].split("]")[0]
    except (OSError, IndexError):
        return "never"


@pytest.mark.skipif(_thp_mode() == "never", reason="transparent huge pages are off on this host")
def test_large_cpu_tensors_ask_for_huge_pages():
    """Blocks of 4 MiB and more are advised to use transparent huge pages (one TLB entry per
    2 MiB); ONEFLOW_CPU_HUGE_PAGES=0 turns the advice off."""

    def huge_kib(**env):
        out = subprocess.run(
            [sys.executable, "-c", HUGE_PAGE_PROBE],
            env={**os.environ, **env},
            capture_output=True,
            text=True,
            check=True,
        )
        return int(out.stdout.strip().splitlines()[-1])

    assert huge_kib() >= 32 * 1024  # most of the 64 MiB
    if _thp_mode() == "madvise":
        assert huge_kib(ONEFLOW_CPU_HUGE_PAGES="0") == 0
