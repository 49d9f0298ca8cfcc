"""Reading files written by torch.save (its zip format: a pickle of the object whose tensors
refer to raw storages stored beside it), without PyTorch: oneflow.load of a PyTorch checkpoint
gives the same structure with oneflow tensors and Parameters.

By default (weights_only=True, PyTorch's default since 2.6) the pickle may only name the classes
a checkpoint of tensors needs (OrderedDict, PyTorch's tensor and parameter rebuild functions,
storages, Size, dtype, device, and plain containers); any other class is refused before it is
imported. weights_only=False unpickles other classes too (only for trusted files), except
PyTorch's own, which have no oneflow counterpart here."""

import builtins
import collections
import io
import pickle
import zipfile

import numpy as np

import oneflow
from oneflow import _oneflow_internal as _internal

# storage class -> (numpy dtype of its bytes, oneflow dtype name)
_STORAGES = {
    "FloatStorage": (np.float32, "float32"),
    "DoubleStorage": (np.float64, "float64"),
    "HalfStorage": (np.float16, "float16"),
    "BFloat16Storage": (np.int16, "bfloat16"),
    "LongStorage": (np.int64, "int64"),
    "IntStorage": (np.int32, "int32"),
    "ShortStorage": (np.int16, "int16"),
    "CharStorage": (np.int8, "int8"),
    "ByteStorage": (np.uint8, "uint8"),
    "BoolStorage": (np.bool_, "bool"),
}
_DTYPES = {
    "float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8",
    "bool", "float", "double", "half", "long", "int", "short",
}  # fmt: skip


def is_torch_zip(data):
    return data[:4] == b"PK\x03\x04"


class _StorageType:
    def __init__(self, name):
        self.np_dtype, self.dtype = _STORAGES[name]


class _Storage:
    """A storage's elements as a 1-D oneflow tensor, and the device it was saved from."""

    def __init__(self, flat, location):
        self.flat, self.location = flat, location


def _size(*args):
    return oneflow.Size(*args) if args else oneflow.Size([])


class _Loader:
    def __init__(self, data, name, map_location, weights_only):
        self.name, self.map_location, self.weights_only = name, map_location, weights_only
        self.zip = zipfile.ZipFile(io.BytesIO(data))
        pkl = [n for n in self.zip.namelist() if n.endswith("data.pkl")]
        if not pkl:
            raise RuntimeError(f"load: {name} is a zip file without data.pkl (not torch.save's)")
        self.prefix = pkl[0][: -len("data.pkl")]
        order = self._read("byteorder", b"little").decode().strip()
        if order != "little":
            raise RuntimeError(f"load: {name} holds {order}-endian storages; expected little")
        self.storages = {}

    def _read(self, member, default=None):
        try:
            return self.zip.read(self.prefix + member)
        except KeyError:
            if default is None:
                raise RuntimeError(f"load: {self.name} lacks {self.prefix + member}") from None
            return default

    def storage(self, pid):
        if not (isinstance(pid, tuple) and pid and pid[0] == "storage"):
            raise RuntimeError(f"load: {self.name} has an unknown persistent id {pid!r}")
        _, storage_type, key, location, _numel = pid
        if key not in self.storages:
            if not isinstance(storage_type, _StorageType):
                raise RuntimeError(f"load: {self.name}: unsupported storage {storage_type!r}")
            raw = np.frombuffer(bytearray(self._read(f"data/{key}")), storage_type.np_dtype)
            flat = _internal._copy_from_numpy(np.ascontiguousarray(raw))
            if storage_type.dtype == "bfloat16":
                flat = flat.view(oneflow.bfloat16)
            self.storages[key] = _Storage(flat, str(location))
        return self.storages[key]

    def rebuild_tensor(self, storage, offset, size, stride, requires_grad=False, *rest):
        t = oneflow.as_strided(storage.flat, tuple(size), tuple(stride), offset)
        t = place(t, self.map_location, storage.location)
        if requires_grad:
            t.requires_grad_(True)
        return t

    def find_class(self, module, name):
        if module == "collections" and name == "OrderedDict":
            return collections.OrderedDict
        if module == "torch._utils":
            if name == "_rebuild_tensor_v2":
                return self.rebuild_tensor
            if name in ("_rebuild_parameter", "_rebuild_parameter_with_state"):
                return _rebuild_parameter
        if module == "torch":
            if name in _STORAGES:
                return _StorageType(name)
            if name == "Size":
                return _size
            if name == "device":
                return oneflow.device
            if name in _DTYPES:
                return getattr(oneflow, name)
        if module in ("builtins", "__builtin__") and name in (
            "set",
            "frozenset",
            "slice",
            "complex",
        ):
            return getattr(builtins, name)
        if module.split(".")[0] == "torch":
            raise RuntimeError(
                f"load: {self.name} needs {module}.{name}, a PyTorch object oneflow cannot rebuild"
            )
        if self.weights_only:
            raise RuntimeError(
                f"load: {self.name} contains {module}.{name}, which weights_only=True does not "
                "load (pickle would import and run it); pass weights_only=False only if you "
                "trust the file"
            )
        return None  # the default lookup

    def load(self):
        loader = self

        class Unpickler(pickle.Unpickler):
            def find_class(self, module, name):
                found = loader.find_class(module, name)
                return super().find_class(module, name) if found is None else found

            def persistent_load(self, pid):
                return loader.storage(pid)

        return Unpickler(io.BytesIO(self._read("data.pkl"))).load()


def _rebuild_parameter(data, requires_grad, backward_hooks=None, state=None):
    from oneflow.nn.parameter import Parameter

    p = Parameter(data.detach(), requires_grad)
    if state:
        p.__dict__.update(state)
    return p


def _takes_two(fn):
    import inspect

    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 2 or any(p.kind == p.VAR_POSITIONAL for p in params)


def place(t, map_location, location):
    """t (on the CPU) where map_location sends a tensor saved on `location`: None keeps the saved
    device where it exists; a device or string; a dict from saved to new locations; a function
    of the location giving a device (oneflow's), or PyTorch's function of (storage, location)
    giving the storage to use."""
    m = map_location
    if m is None:
        device = location if location.startswith("cpu") or oneflow.cuda.is_available() else None
    elif callable(m) and not isinstance(m, (str, _internal.device)):
        if _takes_two(m):
            r = m(t, location)
            return r if isinstance(r, _internal.Tensor) else t
        device = m(location)
    elif isinstance(m, dict):
        device = m.get(location, location)
    else:
        device = str(m)
    if device is None or str(device).startswith("cpu"):
        return t
    return t.to(str(device))


def load_torch_zip(data, name, map_location, weights_only):
    return _Loader(data, name, map_location, weights_only).load()
