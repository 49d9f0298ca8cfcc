"""nn.DataParallel: PyTorch's single-process data parallelism.

Without CUDA the module runs as it is (device_ids is empty), and with one CUDA device the module
is moved there at construction and the inputs at each call, as PyTorch's DataParallel does.
Splitting a batch over several GPUs in one process (module replicas on each, outputs gathered)
is not implemented: constructing one over more than one device raises NotImplementedError;
DistributedDataParallel (one process per device) is the supported way to use several."""

import oneflow as flow
from oneflow.nn.modules.module import Module


def _device_index(d):
    if isinstance(d, int):
        return d
    d = flow.device(d) if isinstance(d, str) else d
    if d.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {d}")
    return 0 if d.index is None else d.index


def _to_device(obj, device):
    if isinstance(obj, flow.Tensor):
        return obj.to(device)
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*(_to_device(o, device) for o in obj))
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to_device(o, device) for o in obj)
    if isinstance(obj, dict):
        return type(obj)((k, _to_device(v, device)) for k, v in obj.items())
    return obj


class DataParallel(Module):
    """DataParallel(module, device_ids=None, output_device=None, dim=0)."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module
        self.dim = dim
        if not flow.cuda.is_available():
            self.device_ids = []
            self.output_device = None
            self.src_device_obj = None
            return
        if device_ids is None:
            device_ids = list(range(flow.cuda.device_count()))
        self.device_ids = [_device_index(d) for d in device_ids]
        if len(self.device_ids) > 1:
            raise NotImplementedError(
                f"DataParallel over {len(self.device_ids)} devices (replicas in one process) is "
                "not implemented; use DistributedDataParallel with one process per device "
                "(python -m oneflow.distributed.launch)"
            )
        self.output_device = _device_index(
            output_device if output_device is not None else self.device_ids[0]
        )
        self.src_device_obj = flow.device("cuda", self.device_ids[0])
        self.module.to(self.src_device_obj)  # one device: the module moves there (as PyTorch)

    def forward(self, *inputs, **kwargs):
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        for t in list(self.module.parameters()) + list(self.module.buffers()):
            if t.device != self.src_device_obj:
                raise RuntimeError(
                    "module must have its parameters and buffers on device "
                    f"{self.src_device_obj} (device_ids[0]) but found one of them on device: "
                    f"{t.device}"
                )
        # One device: the outputs stay where the module made them (output_device is for the
        # gather of several devices' outputs, as PyTorch's).
        return self.module(
            *_to_device(inputs, self.src_device_obj), **_to_device(kwargs, self.src_device_obj)
        )
