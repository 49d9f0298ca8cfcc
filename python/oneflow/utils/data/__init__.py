"""oneflow.utils.data: datasets, samplers and the DataLoader."""

from oneflow.utils.data import _utils  # noqa: E402,F401  (torch.utils.data._utils)
from oneflow.utils.data.dataloader import (  # noqa: F401
    DataLoader,
    default_collate,
    default_convert,
    get_worker_info,
)
from oneflow.utils.data.dataset import (  # noqa: F401
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from oneflow.utils.data.distributed import DistributedSampler  # noqa: F401
from oneflow.utils.data.sampler import (  # noqa: F401
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)
