"""Reading files written by torch.save, without PyTorch: oneflow.load of a PyTorch checkpoint
gives the same structure with oneflow tensors and Parameters. Two formats are read:

- the zip format (PyTorch's default since 1.6): a pickle of the object whose tensors refer to
  raw storages stored beside it as zip members;
- the legacy format (torch.save(..., _use_new_zipfile_serialization=False) and PyTorch before
  1.6): pickles one after another (a magic number, the format's protocol version, the saving
  system's byte order and type sizes, the object, the list of storage keys), then each listed
  storage as its element count (8 bytes) followed by its raw elements.

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


# the legacy format's first two pickles: this number, then the format's protocol version
_LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
_LEGACY_VERSION = 1001
# how pickle writes _LEGACY_MAGIC (LONG1, 10 bytes, little-endian), after its protocol header
_LEGACY_MAGIC_OP = b"\x8a\x0a" + _LEGACY_MAGIC.to_bytes(10, "little")


def is_torch_zip(data):
    return data[:4] == b"PK\x03\x04"


def is_torch_legacy(data):
    """Whether data starts as torch.save's legacy format does: a pickle of its magic number."""
    if data[:1] != b"\x80" or _LEGACY_MAGIC_OP not in data[:24]:
        return False
    try:
        return _PlainUnpickler(io.BytesIO(data)).load() == _LEGACY_MAGIC
    except Exception:
        return False


class _StorageType:
    def __init__(self, name):
        self.np_dtype, self.dtype = _STORAGES[name]


class _Storage:
    """A storage's elements as a 1-D oneflow tensor, and the device it was saved from; a view of
    another storage (legacy files) is that storage's elements from `offset` on."""

    def __init__(self, flat, location, offset=0):
        self.flat, self.location, self.offset = flat, location, offset


def _flat(raw, storage_type):
    """A 1-D oneflow tensor of a storage's elements from a numpy array of its bytes' type."""
    flat = _internal._copy_from_numpy(np.ascontiguousarray(raw))
    if storage_type.dtype == "bfloat16":
        flat = flat.view(oneflow.bfloat16)
    return flat


def _size(*args):
    return oneflow.Size(*args) if args else oneflow.Size([])


class _Loader:
    """What both formats share: the classes a pickle may name, and rebuilding tensors from
    storages. A subclass reads the storages (storage(pid)) and the pickles (load())."""

    def __init__(self, name, map_location, weights_only):
        self.name, self.map_location, self.weights_only = name, map_location, weights_only
        self.storages = {}

    def _unpickler(self, stream):
        loader = self

        class Unpickler(pickle.Unpickler):
            def find_class(self, module, name):
                found = loader.find_class(module, name)
                return super().find_class(module, name) if found is None else found

            def persistent_load(self, pid):
                return loader.storage(pid)

        return Unpickler(stream)

    def rebuild_tensor(self, storage, offset, size, stride, requires_grad=False, *rest):
        t = oneflow.as_strided(storage.flat, tuple(size), tuple(stride), storage.offset + offset)
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
        if module.split(".")[0] == "torch" and not self.weights_only:
            # a whole pickled model (torch.save(model)): its classes and functions by their
            # oneflow counterparts at the same paths (torch.nn.modules.linear.Linear ->
            # oneflow.nn.modules.linear.Linear), which take PyTorch's pickled state
            found = _counterpart(module, name)
            if found is not None:
                return found
        if module.split(".")[0] == "torch" and not self.weights_only:
            raise RuntimeError(
                f"load: {self.name} needs {module}.{name}, a PyTorch object oneflow cannot rebuild"
            )
        allowed = _SAFE_GLOBALS.get(f"{module}.{name}")
        if allowed is not None:  # serialization.add_safe_globals
            return allowed
        if self.weights_only:
            raise RuntimeError(
                f"load: {self.name} contains {module}.{name}, which weights_only=True does not "
                "load (pickle would import and run it); pass weights_only=False only if you "
                "trust the file"
            )
        return None  # the default lookup


# The classes and functions weights_only=True loads besides tensors and containers, by their
# pickled path "module.qualname" (oneflow.serialization.add_safe_globals).
_SAFE_GLOBALS = {}


def add_safe_globals(safe_globals):
    """Marks objects (or (object, "module.name") pairs) as safe for weights_only loading."""
    for entry in safe_globals:
        if isinstance(entry, tuple):
            obj, path = entry
        else:
            obj, path = entry, f"{entry.__module__}.{entry.__qualname__}"
        _SAFE_GLOBALS[path] = obj


def get_safe_globals():
    return list(_SAFE_GLOBALS.values())


def clear_safe_globals():
    _SAFE_GLOBALS.clear()


def _counterpart(module, name):
    """oneflow's object at the path of PyTorch's `module.name`, or None."""
    import importlib

    try:
        owner = importlib.import_module("oneflow" + module[len("torch") :])
    except ImportError:
        return None
    found = owner
    for part in name.split("."):
        found = getattr(found, part, None)
        if found is None:
            return None
    return found


class _ZipLoader(_Loader):
    def __init__(self, data, name, map_location, weights_only):
        super().__init__(name, map_location, weights_only)
        self.zip = zipfile.ZipFile(io.BytesIO(data))
        pkl = [n for n in self.zip.namelist() if n.endswith("data.pkl")]
        if not pkl:
            raise RuntimeError(f"load: {name} is a zip file without data.pkl (not torch.save's)")
        self.prefix = pkl[0][: -len("data.pkl")]
        order = self._read("byteorder", b"little").decode().strip()
        if order != "little":
            raise RuntimeError(f"load: {name} holds {order}-endian storages; expected little")

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
            self.storages[key] = _Storage(_flat(raw, storage_type), str(location))
        return self.storages[key]

    def load(self):
        return self._unpickler(io.BytesIO(self._read("data.pkl"))).load()


class _PlainUnpickler(pickle.Unpickler):
    """For the legacy format's header pickles and storage key list, which name no class."""

    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"unexpected {module}.{name} in a header pickle")


class _Anything:
    """While the legacy reader scans the object pickle for the storages it names, this stands
    in for every class the pickle names and every object it builds, so nothing is imported or
    run."""

    def __new__(cls, *args, **kwargs):
        return object.__new__(cls)

    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, *args, **kwargs):
        return _Anything()

    def __setstate__(self, state):
        pass

    def __setitem__(self, key, value):
        pass

    def append(self, value):
        pass

    def extend(self, values):
        pass

    def add(self, value):
        pass


class _LegacyLoader(_Loader):
    """The object pickle rebuilds tensors while it is read, but the storages' bytes come after
    it, and how many bytes each takes depends on its type, which only the object pickle names.
    So the object pickle is read twice: first with stand-ins (_Anything) for everything but the
    storage types, noting each storage's type and device, which locates the storages' bytes;
    then for real, with the storages loaded. Both reads apply the same class rules."""

    def __init__(self, data, name, map_location, weights_only):
        super().__init__(name, map_location, weights_only)
        self.stream = io.BytesIO(data)
        if self._plain("magic number") != _LEGACY_MAGIC:
            raise RuntimeError(f"load: {name} is not a file written by torch.save")
        version = self._plain("protocol version")
        if version != _LEGACY_VERSION:
            raise RuntimeError(
                f"load: {name} has legacy format version {version!r}; only "
                f"{_LEGACY_VERSION} is read"
            )
        info = self._plain("system information")
        little = info.get("little_endian", True) if isinstance(info, dict) else True
        self.order = "<" if little else ">"
        self.object_start = self.stream.tell()
        self.found = {}  # storage key -> (_StorageType, location), from the first read
        self._scan()
        keys = self._plain("storage key list")
        if not (isinstance(keys, list) and all(isinstance(k, str) for k in keys)):
            raise RuntimeError(f"load: {name} has a malformed storage key list")
        self._read_storages(data, self.stream.tell(), keys)

    def _plain(self, what):
        try:
            return _PlainUnpickler(self.stream).load()
        except Exception as e:
            raise RuntimeError(
                f"load: {self.name} is truncated or malformed: cannot read its {what} ({e})"
            ) from None

    def _scan(self):
        loader = self

        class Scanner(pickle.Unpickler):
            def find_class(self, module, name):
                found = loader.find_class(module, name)  # raises for what the rules refuse
                return found if isinstance(found, _StorageType) else _Anything

            def persistent_load(self, pid):
                if _is_module_source(pid):
                    return _Anything  # stands for the class while scanning
                storage_type, key, location, _, _ = loader._parse_pid(pid)
                loader.found[key] = (storage_type, str(location))
                return _Anything()

        try:
            Scanner(self.stream).load()
        except RuntimeError:  # a class the rules refuse, or an unknown persistent id
            raise
        except Exception as e:
            raise RuntimeError(f"load: {self.name} is truncated or malformed ({e!r})") from None

    def _parse_pid(self, pid):
        if not (isinstance(pid, tuple) and len(pid) == 6 and pid[0] == "storage"):
            raise RuntimeError(f"load: {self.name} has an unknown persistent id {pid!r}")
        if not isinstance(pid[1], _StorageType):
            raise RuntimeError(f"load: {self.name}: unsupported storage {pid[1]!r}")
        return pid[1:]

    def _read_storages(self, data, pos, keys):
        for key in keys:
            if key not in self.found:
                raise RuntimeError(f"load: {self.name} lists storage {key!r} that nothing uses")
            storage_type, location = self.found[key]
            dtype = np.dtype(storage_type.np_dtype).newbyteorder(self.order)
            if pos + 8 > len(data):
                raise RuntimeError(f"load: {self.name} is truncated (storage {key})")
            order = "little" if self.order == "<" else "big"
            count = int.from_bytes(data[pos : pos + 8], order, signed=True)
            pos += 8
            if count < 0 or pos + count * dtype.itemsize > len(data):
                raise RuntimeError(f"load: {self.name} is truncated (storage {key})")
            raw = np.frombuffer(data, dtype, count, pos).astype(storage_type.np_dtype)
            pos += count * dtype.itemsize
            self.storages[key] = _Storage(_flat(raw, storage_type), location)

    def storage(self, pid):
        if _is_module_source(pid):
            return pid[1]  # the module's class (found by find_class); its saved source is unused
        _, key, _, _, view = self._parse_pid(pid)
        if key not in self.storages:
            raise RuntimeError(f"load: {self.name} does not list storage {key!r}")
        if view is None:
            return self.storages[key]
        view_key, offset, _size = view  # a view of the storage `key` (written by old PyTorch)
        if view_key not in self.storages:
            root = self.storages[key]
            self.storages[view_key] = _Storage(root.flat, root.location, int(offset))
        return self.storages[view_key]

    def load(self):
        self.stream.seek(self.object_start)
        return self._unpickler(self.stream).load()


def _is_module_source(pid):
    """The legacy format's persistent id of a pickled module class: ("module", class, source
    file, source)."""
    return isinstance(pid, tuple) and len(pid) == 4 and pid[0] == "module"


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
    return _ZipLoader(data, name, map_location, weights_only).load()


def load_torch_legacy(data, name, map_location, weights_only):
    return _LegacyLoader(data, name, map_location, weights_only).load()
