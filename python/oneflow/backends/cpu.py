"""oneflow.backends.cpu: the CPU kernels' vector tier."""

from oneflow._oneflow_internal import _C


def get_cpu_capability():
    """The vector instruction set the CPU kernels use: "AVX512", "AVX2" or "DEFAULT" (the
    baseline SSE2 build), as torch.backends.cpu.get_cpu_capability(). It is the widest the CPU
    has, capped by the environment variable ONEFLOW_CPU_CAPABILITY ("avx2" or "default") read
    when the first kernel runs."""
    return _C._cpu_capability()
