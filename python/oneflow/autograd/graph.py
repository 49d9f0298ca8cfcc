"""oneflow.autograd.graph: hooks on the tensors autograd saves for backward (PyTorch's
torch.autograd.graph). While ``saved_tensors_hooks(pack, unpack)`` is active on a thread, every
tensor an op saves for backward there goes through ``pack`` and the node keeps its result;
backward calls ``unpack`` on it and must get a tensor of the same shape and dtype back (Note
[Saved tensor hooks] in core/autograd/autograd.h). Tensors saved by custom autograd.Functions
(ctx.save_for_backward) are kept as they are."""

import threading

from oneflow._oneflow_internal import autograd as _engine

__all__ = ["disable_saved_tensors_hooks", "save_on_cpu", "saved_tensors_hooks"]

_state = threading.local()


def _disabled_message():
    return getattr(_state, "disabled", None)


class saved_tensors_hooks:
    """Context manager: ``pack_hook(tensor) -> object`` when an op saves a tensor for backward,
    ``unpack_hook(object) -> tensor`` when backward needs it. The innermost pair applies; the
    hooks run with no hooks set."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook, self.unpack_hook = pack_hook, unpack_hook

    def __enter__(self):
        message = _disabled_message()
        if message is not None:
            raise RuntimeError(message)
        _engine._push_saved_tensors_hooks(self.pack_hook, self.unpack_hook)
        _state.depth = getattr(_state, "depth", 0) + 1
        return self

    def __exit__(self, *exc):
        _engine._pop_saved_tensors_hooks()
        _state.depth -= 1
        return False


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors are kept as host copies (page-locked with ``pin_memory`` when CUDA is
    available) and moved back to their device in backward."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        import oneflow

        def pack(t):
            if t.device.type == "cpu":
                return (t.device, t)
            host = oneflow.empty(t.size(), dtype=t.dtype, device="cpu")
            if pin_memory and oneflow.cuda.is_available():
                host = host.pin_memory()
            host.copy_(t)
            return (t.device, host)

        def unpack(packed):
            device, host = packed
            return host if device.type == "cpu" else host.to(device, non_blocking=pin_memory)

        super().__init__(pack, unpack)


class disable_saved_tensors_hooks:
    """Context manager under which entering ``saved_tensors_hooks`` raises RuntimeError with
    ``error_message`` (for code whose saved tensors must stay as they are)."""

    def __init__(self, error_message):
        self.error_message = error_message

    def __enter__(self):
        if getattr(_state, "depth", 0) > 0:  # hooks already set: PyTorch refuses here too
            raise RuntimeError(self.error_message)
        self._prev = _disabled_message()
        _state.disabled = self.error_message
        return self

    def __exit__(self, *exc):
        _state.disabled = self._prev
        return False
