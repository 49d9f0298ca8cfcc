"""oneflow.cuda.amp: torch.cuda.amp's names, on oneflow.amp with device type "cuda"."""

import oneflow
from oneflow import amp as _amp


class autocast(_amp.autocast):
    def __init__(self, enabled=True, dtype=None, cache_enabled=True):
        super().__init__("cuda", dtype or oneflow.float16, enabled, cache_enabled)


class GradScaler(_amp.GradScaler):
    def __init__(
        self,
        init_scale=2.0**16,
        growth_factor=2.0,
        backoff_factor=0.5,
        growth_interval=2000,
        enabled=True,
    ):
        super().__init__(
            "cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled
        )
