"""flow.save / flow.load: nested dicts, lists, tuples and sets of tensors, NumPy arrays and plain
values (Size, dtype, device too) in a file that loading never executes: a JSON description of the
structure, the tensors' raw bytes, and a SHA-256 of everything, so a truncated or altered file is
rejected. Other objects (a whole nn.Module, an argparse.Namespace) are stored with pickle, as
PyTorch stores them, and are only unpickled when the loader passes weights_only=False (or
allow_pickle=True): PyTorch's default since 2.6. Files are written to a temporary name and
renamed, so an interrupted save leaves the previous file intact. load() also reads files written
by torch.save, in its zip or legacy format (framework/torch_format.py)."""

import base64
import hashlib
import io
import json
import os
import pickle
import struct
import tempfile
from collections import OrderedDict

import numpy as np

import oneflow
from oneflow._oneflow_internal import Tensor
from oneflow.framework import torch_format

MAGIC = b"OFSAVE01"
_ALIGN = 64


class _Writer:
    def __init__(self, allow_pickle):
        self.allow_pickle = allow_pickle
        self.blobs, self.entries, self.offset = [], [], 0
        # The same view of one storage saved twice (tied weights: a state dict holds both names)
        # is written once; load gives both names one tensor, as PyTorch's shared storage does.
        self.views = {}
        self.has_global = False

    def add(self, array):
        array = np.array(
            array, order="C", copy=True
        )  # (ascontiguousarray would make 0-d arrays 1-d)
        data = array.tobytes()
        pad = (-self.offset) % _ALIGN
        if pad:
            self.blobs.append(b"\0" * pad)
            self.offset += pad
        self.entries.append(
            {
                "dtype": array.dtype.str,
                "shape": list(array.shape),
                "offset": self.offset,
                "nbytes": len(data),
            }
        )
        self.blobs.append(data)
        self.offset += len(data)
        return len(self.entries) - 1

    def encode(self, obj):
        if obj is None or isinstance(obj, (bool, int, float, str)):
            if isinstance(obj, float) and not np.isfinite(obj):
                return {"__float__": repr(obj)}
            return obj
        if isinstance(obj, Tensor):
            from oneflow.nn.parameter import Parameter

            t = obj.detach()
            if t.is_meta:  # no values: the layout alone
                return {
                    "__meta_tensor__": {
                        "shape": list(t.shape),
                        "stride": list(t.stride()),
                        "dtype": str(t.dtype).split(".")[-1],
                    },
                    "requires_grad": bool(obj.requires_grad),
                    "parameter": isinstance(obj, Parameter),
                }
            # A copy: the values as of this call, and the tensor's memory stays oneflow's own
            # (a NumPy view would make later ops on it synchronous, see docs/eager.md).
            key = None
            self.has_global = self.has_global or t.is_global
            if not t.is_global:
                key = (
                    t._storage_id(),
                    t.storage_offset(),
                    tuple(t.shape),
                    t.stride(),
                    str(t.dtype),
                )
            entry = self.views.get(key) if key is not None else None
            if t.dtype == oneflow.bfloat16:
                kind = "bfloat16"
                if entry is None:
                    entry = self.add(t.float()._numpy_copy())
            else:
                kind = None
                if entry is None:
                    entry = self.add(t.cpu()._numpy_copy())
            if key is not None:
                self.views[key] = entry
            return {
                "__tensor__": entry,
                "requires_grad": bool(obj.requires_grad),
                "parameter": isinstance(obj, Parameter),
                "cast": kind,
                "device": str(obj.device),
            }
        if isinstance(obj, np.ndarray) and obj.dtype.kind not in "OV":
            return {"__ndarray__": self.add(obj)}
        if isinstance(obj, np.generic):
            return {"__npscalar__": self.add(np.asarray(obj))}
        if isinstance(obj, bytes):
            return {"__bytes__": base64.b64encode(obj).decode()}
        if isinstance(obj, dict) and type(obj) in (dict, OrderedDict):
            items = [[self.encode(k), self.encode(v)] for k, v in obj.items()]
            return {"__odict__" if isinstance(obj, OrderedDict) else "__dict__": items}
        if type(obj) is list:
            return {"__list__": [self.encode(v) for v in obj]}
        if type(obj) is tuple:
            return {"__tuple__": [self.encode(v) for v in obj]}
        if type(obj) in (set, frozenset):
            kind = "__set__" if type(obj) is set else "__frozenset__"
            return {kind: [self.encode(v) for v in obj]}
        if isinstance(obj, oneflow.Size):
            return {"__size__": [int(v) for v in obj]}
        if isinstance(obj, oneflow.dtype):
            return {"__dtype__": str(obj).split(".")[-1]}
        if isinstance(obj, oneflow.device):
            return {"__device__": str(obj)}
        if self.allow_pickle:
            return {"__pickle__": base64.b64encode(pickle.dumps(obj)).decode()}
        raise TypeError(
            f"save: cannot store an object of type {type(obj).__name__} without pickle; pass "
            "allow_pickle=True to store it with pickle (loading it then needs allow_pickle=True)"
        )


def save(
    obj,
    path=None,
    allow_pickle=True,
    global_dst_rank=None,
    pickle_module=None,
    pickle_protocol=None,
    _use_new_zipfile_serialization=True,
    _disable_byteorder_record=False,
    *,
    f=None,
):
    """Writes `obj` to `path` (a path or a writable binary file object). Global tensors are
    saved as their whole values (every rank must call save: gathering them communicates); with
    global_dst_rank only that rank writes. allow_pickle=False refuses objects that would need
    pickle. PyTorch's pickle_module / pickle_protocol / zip-format arguments are accepted; the
    format is oneflow's. `f` is PyTorch's name for `path`."""
    if path is None:
        path = f
    if path is None:
        raise TypeError("save() missing required argument 'f' (the file or path)")
    if isinstance(allow_pickle, int) and not isinstance(allow_pickle, bool):
        # OneFlow's order: save(obj, path, global_dst_rank)
        global_dst_rank, allow_pickle = allow_pickle, True
    writer = _Writer(allow_pickle)
    tree = writer.encode(obj)
    if writer.has_global and global_dst_rank is None:
        from oneflow import env

        if env.get_world_size() > 1:  # every rank would write the file (OneFlow refuses too)
            raise ValueError(
                "save: set global_dst_rank to save global tensors: the rank that writes the file"
            )
    header = json.dumps({"format": 1, "tree": tree, "tensors": writer.entries}).encode()
    body = io.BytesIO()
    body.write(MAGIC)
    body.write(struct.pack("<Q", len(header)))
    body.write(header)
    start = body.tell()
    pad = (-start) % _ALIGN
    body.write(b"\0" * pad)
    for blob in writer.blobs:
        body.write(blob)
    if global_dst_rank is not None:
        from oneflow import env

        if env.get_rank() != global_dst_rank:
            return
    payload = body.getvalue()
    digest = hashlib.sha256(payload).digest()
    if hasattr(path, "write"):
        path.write(payload + digest)
        return
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".oneflow-save-", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
            f.write(digest)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def load(
    path,
    map_location=None,
    allow_pickle=False,
    global_src_rank=None,
    *,
    weights_only=None,
    pickle_module=None,
    mmap=None,
    **pickle_load_args,
):
    """Reads what save() or torch.save wrote. Raises RuntimeError naming the problem when the
    file is neither, is truncated, or fails its checksum. Pickled objects are loaded only with
    weights_only=False or allow_pickle=True. map_location: as PyTorch's (a device, a dict of
    locations, a function of (storage, location) or of the location). With global_src_rank only
    that rank reads the file; its bytes are sent to the others (every process gets the object's
    structure) and tensors are returned as broadcast global tensors placed on that rank alone,
    as OneFlow's (load_state_dict moves them to the parameters' placements)."""
    if isinstance(map_location, int) and not isinstance(map_location, bool):
        # OneFlow's order: load(path, global_src_rank, map_location)
        global_src_rank, map_location = map_location, allow_pickle or None
        allow_pickle = False
    if isinstance(map_location, oneflow.placement):  # OneFlow's: the tensors made global there
        placement = map_location
        loaded = load(
            path, None, allow_pickle, global_src_rank, weights_only=weights_only, mmap=mmap
        )
        return _map_tensors(loaded, lambda t: t.to_global(placement, [oneflow.sbp.broadcast] * 1))
    allow_pickle = bool(allow_pickle) or weights_only is False
    if global_src_rank is not None:
        return _load_global(path, map_location, allow_pickle, global_src_rank)
    if hasattr(path, "read"):
        data = path.read()
        name = getattr(path, "name", "<file object>")
    else:
        name = os.fspath(path)
        if os.path.isdir(name):
            from oneflow.framework import oneflow_format

            if oneflow_format.is_oneflow_checkpoint_dir(name):  # saved by OneFlow itself
                return oneflow_format.load_oneflow_checkpoint_dir(name, map_location)
            raise RuntimeError(
                f"load: {name} is a directory, expected a file written by oneflow.save (or a "
                "OneFlow checkpoint directory, with pickled_data or snapshot_done)"
            )
        with open(name, "rb") as f:
            data = f.read()
    if torch_format.is_torch_zip(data):
        return torch_format.load_torch_zip(data, name, map_location, not allow_pickle)
    if torch_format.is_torch_legacy(data):
        return torch_format.load_torch_legacy(data, name, map_location, not allow_pickle)
    if len(data) < len(MAGIC) + 8 + 32 or not data.startswith(MAGIC):
        raise RuntimeError(f"load: {name} is not a oneflow save file (bad header or truncated)")
    payload, digest = data[:-32], data[-32:]
    if hashlib.sha256(payload).digest() != digest:
        raise RuntimeError(
            f"load: {name} is corrupted: its checksum does not match (the file "
            "was truncated or altered)"
        )
    (hlen,) = struct.unpack("<Q", payload[len(MAGIC) : len(MAGIC) + 8])
    hstart = len(MAGIC) + 8
    header = json.loads(payload[hstart : hstart + hlen].decode())
    base = hstart + hlen
    base += (-base) % _ALIGN
    entries = header["tensors"]

    def array(i):
        e = entries[i]
        raw = payload[base + e["offset"] : base + e["offset"] + e["nbytes"]]
        return np.frombuffer(raw, dtype=np.dtype(e["dtype"])).reshape(e["shape"]).copy()

    loaded = {}  # tensors by (entry, flags): names saved as one view get one tensor

    def decode(node):
        if not isinstance(node, dict):
            return node
        if "__float__" in node:
            return float(node["__float__"])
        if "__tensor__" in node or "__meta_tensor__" in node:
            if "__meta_tensor__" in node:  # stays on the meta device, as PyTorch's
                m = node["__meta_tensor__"]
                dtype = getattr(oneflow, m["dtype"])
                t = oneflow.empty_strided(m["shape"], m["stride"], dtype=dtype, device="meta")
            else:
                shared = (
                    node["__tensor__"],
                    bool(node.get("parameter")),
                    bool(node.get("requires_grad")),
                    node.get("device", "cpu"),
                )
                if shared in loaded:  # saved once for several names (tied weights)
                    return loaded[shared]
                t = oneflow.from_numpy(array(node["__tensor__"]))
                if node.get("cast") == "bfloat16":
                    t = t.to(oneflow.bfloat16)
                t = torch_format.place(t, map_location, node.get("device", "cpu"))
                if node.get("parameter"):
                    from oneflow.nn.parameter import Parameter

                    t = Parameter(t, node.get("requires_grad", True))
                elif node.get("requires_grad"):
                    t.requires_grad_(True)
                loaded[shared] = t
                return t
            if node.get("parameter"):
                from oneflow.nn.parameter import Parameter

                return Parameter(t, node.get("requires_grad", True))
            if node.get("requires_grad"):
                t.requires_grad_(True)
            return t
        if "__ndarray__" in node:
            return array(node["__ndarray__"])
        if "__npscalar__" in node:
            return array(node["__npscalar__"])[()]
        if "__bytes__" in node:
            return base64.b64decode(node["__bytes__"])
        if "__dict__" in node:
            return {_hashable(decode(k)): decode(v) for k, v in node["__dict__"]}
        if "__odict__" in node:
            return OrderedDict((_hashable(decode(k)), decode(v)) for k, v in node["__odict__"])
        if "__list__" in node:
            return [decode(v) for v in node["__list__"]]
        if "__tuple__" in node:
            return tuple(decode(v) for v in node["__tuple__"])
        if "__set__" in node:
            return {_hashable(decode(v)) for v in node["__set__"]}
        if "__frozenset__" in node:
            return frozenset(_hashable(decode(v)) for v in node["__frozenset__"])
        if "__size__" in node:
            return oneflow.Size(node["__size__"])
        if "__dtype__" in node:
            return getattr(oneflow, node["__dtype__"])
        if "__device__" in node:
            return oneflow.device(node["__device__"])
        if "__pickle__" in node:
            if not allow_pickle:
                raise RuntimeError(
                    f"load: {name} contains pickled objects, which can run code when loaded "
                    "(weights_only=True, the default); pass weights_only=False only if you trust "
                    "the file"
                )
            return pickle.loads(base64.b64decode(node["__pickle__"]))
        raise RuntimeError(f"load: {name} has an unknown entry {sorted(node)}")

    return decode(header["tree"])


def _map_tensors(obj, fn):
    """obj with fn applied to each tensor in its dicts, lists and tuples."""
    if isinstance(obj, Tensor):
        return fn(obj)
    if isinstance(obj, OrderedDict):
        return OrderedDict((k, _map_tensors(v, fn)) for k, v in obj.items())
    if isinstance(obj, dict):
        return {k: _map_tensors(v, fn) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)) and not hasattr(obj, "_fields"):
        return type(obj)(_map_tensors(v, fn) for v in obj)
    return obj


def _hashable(key):
    return tuple(_hashable(k) for k in key) if isinstance(key, list) else key


def _load_global(path, map_location, allow_pickle, src):
    from oneflow import comm, env
    from oneflow.framework import global_tensor
    from oneflow.framework.placement import placement
    from oneflow.sbp import broadcast

    world = env.get_world_size()
    data, error = b"", None
    if env.get_rank() == src:
        try:
            if hasattr(path, "read"):
                data = path.read()
            else:
                with open(os.fspath(path), "rb") as f:
                    data = f.read()
        except OSError as e:
            error = e
    if world > 1:
        comm._ensure_initialized("load")
        # a size of -1 tells the other ranks that the reading rank failed (they raise too,
        # instead of waiting for bytes that never come)
        size = oneflow.tensor([-1 if error else len(data)], dtype=oneflow.int64)
        comm.broadcast(size, src)
        if int(size.item()) < 0 and error is None:
            raise RuntimeError(f"load: rank {src} could not read {path!r} (see its error)")
    if error is not None:
        raise error
    if world > 1:
        buf = oneflow.zeros(int(size.item()), dtype=oneflow.uint8)
        if env.get_rank() == src:
            buf = oneflow.from_numpy(np.frombuffer(data, dtype=np.uint8).copy())
        comm.broadcast(buf, src)
        data = buf.numpy().tobytes()
    obj = load(io.BytesIO(data), map_location, allow_pickle)
    on_src = placement("cpu", [src])  # as OneFlow: the tensors live on the reading rank

    def to_global(x):
        if isinstance(x, Tensor):
            return global_tensor.make_global(x, on_src, broadcast, x.requires_grad)
        if isinstance(x, dict):
            return type(x)((k, to_global(v)) for k, v in x.items())
        if isinstance(x, (list, tuple)):
            return type(x)(to_global(v) for v in x)
        return x

    return to_global(obj)
