"""Run environment: thread pinning, machine metadata and a measure of foreign CPU load."""

import datetime
import os
import platform
import subprocess
import time
from dataclasses import dataclass

_THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def thread_count():
    """The thread count every framework gets: $OMP_NUM_THREADS, else os.cpu_count()."""
    value = os.environ.get("OMP_NUM_THREADS", "").strip()
    if value.isdigit() and int(value) > 0:
        return int(value)
    return os.cpu_count() or 1


def pin_threads():
    """Export the thread count for OpenMP/BLAS; call before numpy, torch or oneflow load.

    OneFlow's CPU kernels use OpenMP (omp_get_max_threads) and OpenBLAS, so the environment
    variables fix its count; torch additionally gets torch.set_num_threads in frameworks.py.
    """
    n = thread_count()
    for var in _THREAD_VARS:
        os.environ[var] = str(n)
    return n


def _cpu_jiffies():
    """(busy, total) jiffies over all CPUs from /proc/stat, or None off Linux."""
    try:
        with open("/proc/stat") as f:
            fields = [int(v) for v in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    total = sum(fields[:8])
    return total - idle, total


def _own_cpu_seconds(pids=()):
    """CPU seconds of this process, its finished children and the running processes ``pids``
    (the benchmark workers)."""
    t = os.times()
    total = t.user + t.system + t.children_user + t.children_system
    hz = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / hz  # utime, stime
        except (OSError, ValueError, IndexError):
            pass
    return total


@dataclass
class LoadProbe:
    """Measures the share of CPU time used by other processes between start and stop."""

    jiffies: tuple = None
    own: float = 0.0
    pids: tuple = ()

    def start(self):
        self.jiffies = _cpu_jiffies()
        self.own = _own_cpu_seconds(self.pids)
        return self

    def stop(self):
        """Foreign CPU use as a fraction of the machine's capacity (0..1), or None."""
        end = _cpu_jiffies()
        if self.jiffies is None or end is None or end[1] <= self.jiffies[1]:
            return None
        hz = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
        busy_s = (end[0] - self.jiffies[0]) / hz
        total_s = (end[1] - self.jiffies[1]) / hz
        foreign = busy_s - (_own_cpu_seconds(self.pids) - self.own)
        return max(0.0, min(1.0, foreign / total_s))


def _cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _git_commit():
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=10
        )
        return out.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def machine_info(threads):
    """Metadata written into every result file."""
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    return {
        "date": datetime.date.today().isoformat(),
        "started": datetime.datetime.now().isoformat(timespec="seconds"),
        "host_cpu": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "threads": threads,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "git_commit": _git_commit(),
        "loadavg_at_start": [round(v, 2) for v in load] if load else None,
        "unix_time": time.time(),
    }
