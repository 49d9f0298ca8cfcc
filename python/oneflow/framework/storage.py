"""Tensor.untyped_storage() / Tensor.storage(): read-only handles on the memory behind a tensor
and its views (PyTorch's UntypedStorage and the deprecated TypedStorage), for code that compares
storages (`a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()`), sizes them or
reads their elements. They keep the memory alive; they do not resize or move it."""

import warnings

import oneflow._oneflow_internal as _internal

_C = _internal._C


def _whole(tensor, dtype):
    """The storage's elements (from offset 0) as a 1-D tensor of `dtype` viewing them."""
    _, nbytes = tensor._storage_span()
    count = nbytes // tensor.element_size()
    flat = _C.as_strided(tensor.detach(), (count,), (1,), 0)
    return flat if dtype == tensor.dtype else flat.view(dtype)


class UntypedStorage:
    def __init__(self, tensor):
        self._tensor = tensor
        self._ptr, self._nbytes = tensor._storage_span()

    def data_ptr(self):
        return self._ptr

    def nbytes(self):
        return self._nbytes

    def size(self):
        return self._nbytes

    def __len__(self):
        return self._nbytes

    def element_size(self):
        return 1

    @property
    def device(self):
        return self._tensor.device

    @property
    def is_cuda(self):
        return self._tensor.is_cuda

    def is_shared(self):
        return self._tensor.is_shared()

    def tolist(self):
        return _whole(self._tensor, _internal.uint8).tolist()

    def __getitem__(self, i):
        return _whole(self._tensor, _internal.uint8)[i].item()

    def __eq__(self, other):
        return isinstance(other, UntypedStorage) and (self._ptr, self._nbytes) == (
            other._ptr,
            other._nbytes,
        )

    def __hash__(self):
        return hash((self._ptr, self._nbytes))

    def __repr__(self):
        return f"oneflow.UntypedStorage of {self._nbytes} bytes on {self.device}"


class TypedStorage:
    """The deprecated typed view of a storage (Tensor.storage())."""

    def __init__(self, tensor):
        warnings.warn(
            "TypedStorage is deprecated. It will be removed in the future and UntypedStorage "
            "will be the only storage class. To access UntypedStorage directly, use "
            "tensor.untyped_storage() instead of tensor.storage()",
            UserWarning,
            stacklevel=3,
        )
        self._tensor = tensor
        self._untyped = UntypedStorage(tensor)
        self.dtype = tensor.dtype

    def untyped(self):
        return self._untyped

    def data_ptr(self):
        return self._untyped.data_ptr()

    def size(self):
        return self._untyped.nbytes() // self._tensor.element_size()

    def __len__(self):
        return self.size()

    def element_size(self):
        return self._tensor.element_size()

    def nbytes(self):
        return self._untyped.nbytes()

    @property
    def device(self):
        return self._tensor.device

    def tolist(self):
        return _whole(self._tensor, self.dtype).tolist()

    def __getitem__(self, i):
        return _whole(self._tensor, self.dtype)[i].item()


def _untyped_storage(self):
    return UntypedStorage(self)


def _storage(self):
    return TypedStorage(self)


def is_storage(obj):
    return isinstance(obj, (UntypedStorage, TypedStorage))


def install(flow):
    _internal.Tensor.untyped_storage = _untyped_storage
    _internal.Tensor.storage = _storage
    flow.UntypedStorage, flow.TypedStorage, flow.is_storage = (
        UntypedStorage,
        TypedStorage,
        is_storage,
    )
