"""Reading checkpoints that OneFlow itself saved, so that existing OneFlow models and pretrained
weights load with oneflow.load.

OneFlow's flow.save writes a directory: `pickled_data` holds a pickle of {"protocol_version": 1,
"data": obj} in which every tensor pickles as a reference {"path": "<subdirectory>"}, and each
such subdirectory holds the tensor's bytes (`out`, C order) and its shape and dtype (`meta`, a
VariableMetaInfo protocol buffer in text form: `shape { dim: 2 dim: 3 } data_type: kFloat`).
OneFlow before 0.8 wrote a state dict as a directory of those subdirectories, one per key, with
a `snapshot_done` marker and no pickle.

The pickle is read by a restricted unpickler: containers, numbers and strings, and OneFlow's
tensor classes, which become references resolved from their subdirectories; any other class or
function is refused (pickle would import and run it), as weights_only=True does for PyTorch's
files."""

import collections
import os
import pickle
import re

import numpy as np

import oneflow

PICKLE_FILENAME = "pickled_data"
DATA_FILENAME = "out"
META_FILENAME = "meta"
SNAPSHOT_DONE_FILENAME = "snapshot_done"

# OneFlow's DataType enum (oneflow/core/common/data_type.proto) by name and by number.
_DTYPES = {
    "kChar": ("int8", "int8"),
    "kFloat": ("float32", "float32"),
    "kDouble": ("float64", "float64"),
    "kInt8": ("int8", "int8"),
    "kInt32": ("int32", "int32"),
    "kInt64": ("int64", "int64"),
    "kUInt8": ("uint8", "uint8"),
    "kFloat16": ("float16", "float16"),
    "kBFloat16": ("bfloat16", None),
    "kBool": ("bool", "bool"),
    "kInt16": ("int16", "int16"),
    "kComplex64": ("complex64", "complex64"),
    "kComplex128": ("complex128", "complex128"),
}
_DTYPE_NUMBERS = {
    1: "kChar",
    2: "kFloat",
    3: "kDouble",
    4: "kInt8",
    5: "kInt32",
    6: "kInt64",
    7: "kUInt8",
    9: "kFloat16",
    11: "kBFloat16",
    12: "kBool",
    17: "kInt16",
    21: "kComplex64",
    22: "kComplex128",
}


def is_oneflow_checkpoint_dir(path):
    return os.path.isdir(path) and (
        os.path.exists(os.path.join(path, PICKLE_FILENAME))
        or os.path.exists(os.path.join(path, SNAPSHOT_DONE_FILENAME))
    )


def _read_meta(var_dir):
    """(shape, dtype name) from a tensor directory's `meta` (text protocol buffer)."""
    with open(os.path.join(var_dir, META_FILENAME)) as f:
        text = f.read()
    shape = tuple(int(d) for d in re.findall(r"\bdim\s*:\s*(-?\d+)", text))
    found = re.search(r"\bdata_type\s*:\s*(\w+)", text)
    if found is None:
        raise RuntimeError(f"load: {var_dir}/meta names no data_type")
    kind = found.group(1)
    if kind.isdigit():
        kind = _DTYPE_NUMBERS.get(int(kind), kind)
    if kind not in _DTYPES:
        raise RuntimeError(f"load: {var_dir}/meta has data_type {kind}, which oneflow cannot read")
    return shape, kind


def _load_tensor(var_dir, map_location):
    shape, kind = _read_meta(var_dir)
    flow_dtype, np_dtype = _DTYPES[kind]
    data_path = os.path.join(var_dir, DATA_FILENAME)
    raw = np.fromfile(data_path, dtype=np.uint8)
    count = int(np.prod(shape)) if shape else 1
    itemsize = 2 if np_dtype is None else np.dtype(np_dtype).itemsize
    if raw.size != count * itemsize:
        raise RuntimeError(
            f"load: {data_path} holds {raw.size} bytes, expected {count * itemsize} for a "
            f"{kind} tensor of shape {shape}"
        )
    if np_dtype is None:  # bfloat16: the high halves of float32 values
        halves = raw.view(np.uint16).astype(np.uint32) << 16
        tensor = oneflow.tensor(halves.view(np.float32).reshape(shape)).to(oneflow.bfloat16)
    else:
        tensor = oneflow.tensor(raw.view(np_dtype).reshape(shape).copy())
    tensor = tensor.to(getattr(oneflow, flow_dtype))
    if map_location is not None and not callable(map_location):
        if isinstance(map_location, dict):
            target = map_location.get("cpu")
            if target is not None:
                tensor = tensor.to(target)
        else:
            tensor = tensor.to(map_location)
    return tensor


class _TensorReference:
    """What a pickled OneFlow tensor unpickles to: the subdirectory holding its values."""

    def __init__(self, *args, **kwargs):
        self.path = None

    def __setstate__(self, state):
        self.path = state.get("path") if isinstance(state, dict) else None


def _reconstruct(cls, base, state):  # copyreg._reconstructor, for protocol 0 and 1 pickles
    return cls.__new__(cls)


_TENSOR_CLASSES = {"Tensor", "Parameter"}


class _Unpickler(pickle.Unpickler):
    def __init__(self, file, name):
        super().__init__(file)
        self.name = name

    def find_class(self, module, name):
        root = module.split(".")[0]
        if root == "oneflow" and name in _TENSOR_CLASSES:
            return _TensorReference
        if module == "collections" and name == "OrderedDict":
            return collections.OrderedDict
        if module in ("copyreg", "copy_reg") and name == "_reconstructor":
            return _reconstruct
        if module in ("builtins", "__builtin__") and name in (
            "object",
            "set",
            "frozenset",
            "slice",
            "complex",
        ):
            import builtins

            return getattr(builtins, name)
        raise RuntimeError(
            f"load: {self.name} contains {module}.{name}; a OneFlow checkpoint directory is read "
            "with its tensors, containers, numbers and strings only (pickle would import and "
            "run anything else)"
        )


def _resolve(obj, root, map_location):
    if isinstance(obj, _TensorReference):
        if obj.path is None:
            raise RuntimeError(f"load: {root} holds a tensor saved without external data")
        return _load_tensor(os.path.join(root, obj.path), map_location)
    if isinstance(obj, collections.OrderedDict):
        return collections.OrderedDict((k, _resolve(v, root, map_location)) for k, v in obj.items())
    if isinstance(obj, dict):
        return {k: _resolve(v, root, map_location) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_resolve(v, root, map_location) for v in obj]
    if isinstance(obj, tuple):
        items = [_resolve(v, root, map_location) for v in obj]
        return type(obj)(*items) if hasattr(obj, "_fields") else tuple(items)
    return obj


def load_oneflow_checkpoint_dir(path, map_location=None):
    """The object OneFlow's flow.save wrote to directory `path` (either layout)."""
    pickled = os.path.join(path, PICKLE_FILENAME)
    if not os.path.exists(pickled):  # before OneFlow 0.8: {key: tensor} from subdirectories
        out = {}
        for entry in sorted(os.listdir(path)):
            var_dir = os.path.join(path, entry)
            if os.path.isfile(os.path.join(var_dir, DATA_FILENAME)):
                out[entry] = _load_tensor(var_dir, map_location)
        return out
    with open(pickled, "rb") as f:
        content = _Unpickler(f, path).load()
    if not isinstance(content, dict) or "data" not in content:
        raise RuntimeError(f"load: {pickled} is not a OneFlow save (no 'data' entry)")
    if content.get("protocol_version", 1) != 1:
        raise RuntimeError(
            f"load: {pickled} has protocol_version {content.get('protocol_version')}, expected 1"
        )
    return _resolve(content["data"], path, map_location)
