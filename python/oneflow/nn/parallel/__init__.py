"""oneflow.nn.parallel: DistributedDataParallel and DataParallel."""

from oneflow.nn.parallel.data_parallel import DataParallel  # noqa: F401
from oneflow.nn.parallel.distributed import DistributedDataParallel  # noqa: F401
