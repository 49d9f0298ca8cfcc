"""oneflow.nn.parallel: DistributedDataParallel."""

from oneflow.nn.parallel.distributed import DistributedDataParallel  # noqa: F401
