"""DataLoader throughput: one pass over 1024 float32 images of 3x96x96 in batches of 64, from two
persistent worker processes (started outside the timed region). The batches cross from the
workers to the main process: oneflow in shared memory segments it reuses, PyTorch in new shared
memory per batch."""

import numpy as np

from benchmarks.registry import Case, register

N, SHAPE, BATCH = 1024, (3, 96, 96), 64


class _Images:
    """A map-style dataset of framework tensors (any object with __len__ and __getitem__)."""

    def __init__(self, module_name):
        self.module_name = module_name

    def __len__(self):
        return N

    def __getitem__(self, i):
        import importlib

        fw = importlib.import_module(self.module_name)
        return fw.from_numpy(np.full(SHAPE, i % 7, dtype=np.float32)), i % 10


def _build(fw):
    loader = fw.module.utils.data.DataLoader(
        _Images(fw.module.__name__),
        batch_size=BATCH,
        shuffle=True,
        num_workers=2,
        persistent_workers=True,
    )
    next(iter(loader))  # starts the workers

    def one_pass():
        total = 0
        for x, _ in loader:
            total += x.shape[0]
        assert total == N

    return one_pass


register(
    Case(
        "dataloader 2 workers 1024x3x96x96 f32, batch 64",
        "data",
        "GB/s",
        _build,
        N * int(np.prod(SHAPE)) * 4,
        frameworks=("oneflow", "torch"),
    )
)
