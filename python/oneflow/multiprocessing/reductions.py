"""Tensors in shared memory: Tensor.share_memory_() / is_shared(), Module.share_memory(), and
the multiprocessing pickler's reduction that sends tensors between processes as shared memory
(torch.multiprocessing's file-descriptor strategy).

A shared CPU tensor's storage is an anonymous memory file (memfd) mapped MAP_SHARED: forked
children inherit the mapping, and a tensor sent through a multiprocessing Queue or Pipe, or
passed to a spawned process, travels as the file's descriptor plus its size, strides and
offset, so the receiver maps the same memory. Writes on either side are seen by the other (Hogwild
training). As in PyTorch, sending a CPU tensor that is not shared yet moves it to shared memory
first; CUDA tensors are not shared this way (they are pickled as copies)."""

import mmap
import multiprocessing.reduction as _mp_reduction
import os
import weakref

import numpy as np

import oneflow as _flow
from oneflow._oneflow_internal import Tensor

# storage id -> (memfd descriptor, byte count), while the storage lives
_segments = {}


def _forget(storage_id, fd):
    _segments.pop(storage_id, None)
    os.close(fd)


def _map(fd, nbytes):
    """A uint8 tensor over the memfd `fd` (owned: closed with the tensor's storage)."""
    m = mmap.mmap(fd, nbytes)
    buf = np.ndarray((nbytes,), np.uint8, buffer=m)
    t = _flow.from_numpy(buf)
    _segments[t._storage_id()] = (fd, nbytes)
    weakref.finalize(buf, _forget, t._storage_id(), fd)
    return t


def _check_cpu(op, t):
    if t.is_global:
        raise RuntimeError(f"{op}: global tensors cannot be moved to shared memory")


def is_shared(self):
    """Whether the tensor's memory is shared between processes (CUDA memory counts as shared,
    as in PyTorch)."""
    if self.is_cuda:
        return True
    return not self.is_global and self._storage_id() in _segments


def share_memory_(self):
    """Moves the tensor's values to shared memory, in place (the object and its autograd state
    stay); a no-op for shared and CUDA tensors."""
    _check_cpu("share_memory_", self)
    if self.is_cuda or is_shared(self):
        return self
    if not hasattr(os, "memfd_create"):
        raise RuntimeError("share_memory_: this platform has no memfd_create")
    if self.numel() == 0:
        return self  # no memory to share
    with _flow.no_grad():
        src = self.detach().contiguous()
        nbytes = src.numel() * src.element_size()
        fd = os.memfd_create("oneflow-shared-tensor", os.MFD_CLOEXEC)
        try:
            os.ftruncate(fd, nbytes)
            raw = _map(fd, nbytes)
        except BaseException:
            os.close(fd)
            raise
        shared = raw.view(self.dtype).view(tuple(self.shape))
        shared.copy_(src)
        self.data = shared
    return self


def _module_share_memory(self):
    """Moves the parameters and buffers (and their gradients) to shared memory."""
    for t in list(self.parameters()) + list(self.buffers()):
        share_memory_(t)
        if t.grad is not None:
            share_memory_(t.grad)
    return self


# ---- sending tensors between processes --------------------------------------------------------


def _rebuild_shared(df, nbytes, dtype_name, shape, stride, offset, requires_grad, is_param):
    fd = df.detach()
    raw = _map(fd, nbytes)
    dtype = getattr(_flow, dtype_name)
    t = _flow.as_strided(raw.view(dtype), shape, stride, offset)
    if is_param:
        return _flow.nn.Parameter(t, requires_grad=requires_grad)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _reduce_tensor(t):
    if t.is_cuda or t.is_global or t.numel() == 0:
        return t.__reduce_ex__(2)  # a copy, as before
    if t.requires_grad and not t.is_leaf:
        raise RuntimeError(
            "Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd "
            "does not support crossing process boundaries.  If you just want to transfer the "
            "data, call detach() on the tensor before serializing (e.g., putting it on the "
            "queue)."
        )
    share_memory_(t)
    fd, nbytes = _segments[t._storage_id()]
    dtype_name = str(t.dtype).split(".")[-1]
    is_param = isinstance(t, _flow.nn.Parameter)
    return (
        _rebuild_shared,
        (
            _mp_reduction.DupFd(fd),
            nbytes,
            dtype_name,
            tuple(t.shape),
            tuple(t.stride()),
            t.storage_offset(),
            bool(t.requires_grad),
            is_param,
        ),
    )


def install():
    Tensor.share_memory_ = share_memory_
    Tensor.is_shared = is_shared
    _flow.nn.Module.share_memory = _module_share_memory
    _mp_reduction.ForkingPickler.register(Tensor, _reduce_tensor)
    _mp_reduction.ForkingPickler.register(_flow.nn.Parameter, _reduce_tensor)
