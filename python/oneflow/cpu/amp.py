"""oneflow.cpu.amp: torch.cpu.amp's autocast, on oneflow.amp with device type "cpu"."""

import oneflow
from oneflow import amp as _amp


class autocast(_amp.autocast):
    def __init__(self, enabled=True, dtype=None, cache_enabled=True):
        super().__init__("cpu", dtype or oneflow.bfloat16, enabled, cache_enabled)
