"""oneflow.backends.cudnn: torch.backends.cudnn's switches (enabled, benchmark, deterministic,
allow_tf32, benchmark_limit) and flags(). oneflow's CUDA kernels do not call cuDNN yet
(is_available() is False, version() None), so the switches are kept and reported only;
determinism of oneflow's own kernels is oneflow.use_deterministic_algorithms."""

import contextlib

enabled = True
benchmark = False
benchmark_limit = 10
deterministic = False
allow_tf32 = True


def is_available():
    return False


def version():
    return None


def is_acceptable(tensor):
    return False


@contextlib.contextmanager
def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False, allow_tf32=True):
    """The switches set for the block and restored after it, as torch.backends.cudnn.flags."""
    g = globals()
    names = ("enabled", "benchmark", "benchmark_limit", "deterministic", "allow_tf32")
    saved = {n: g[n] for n in names}
    g.update(
        enabled=enabled,
        benchmark=benchmark,
        benchmark_limit=benchmark_limit,
        deterministic=deterministic,
        allow_tf32=allow_tf32,
    )
    try:
        yield
    finally:
        g.update(saved)
