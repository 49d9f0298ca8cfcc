"""oneflow.autograd.profiler: PyTorch's older profiler interface over oneflow.profiler."""

from oneflow.profiler import (  # noqa: F401
    EventList,
    FunctionEvent,
    FunctionEventAvg,
    ProfilerActivity,
    record_function,
)
from oneflow.profiler import profile as _profile


class profile(_profile):
    """torch.autograd.profiler.profile: records while ``enabled`` (the kernels of every device
    this process runs)."""

    def __init__(
        self,
        enabled=True,
        *,
        use_cuda=False,
        use_device=None,
        record_shapes=False,
        with_flops=False,
        profile_memory=False,
        with_stack=False,
        with_modules=False,
        use_kineto=False,
        use_cpu=True,
        experimental_config=None,
        acc_events=False,
        custom_trace_id_callback=None,
    ):
        self.enabled = enabled
        super().__init__(
            record_shapes=record_shapes,
            profile_memory=profile_memory,
            with_stack=with_stack,
            with_flops=with_flops,
            with_modules=with_modules,
            acc_events=acc_events,
        )

    def __enter__(self):
        return self.start() if self.enabled else self

    @property
    def function_events(self):
        return self.events()
