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
