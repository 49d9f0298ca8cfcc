"""oneflow.one_embedding: embedding tables addressed by arbitrary 64-bit ids, with the optimizer
state kept in the table's rows.

A table is a key-value store in host memory (the C++ store of `core/embedding/`): an id seen for
the first time gets a row that its table's initializer fills, so the vocabulary need not be
known in advance. Several logical tables share one store and one key space (ids must not collide
across tables); the table id of an id only chooses its initializer. A row holds `storage_dim`
floats: the embedding, then the state of the optimizer that trains it (SGD momentum: one more
embedding_dim; Adam: two; Adagrad: one), which is why the store options take a `size_factor`.

Training: the module's only parameter is a 1-element `shadow`. Put it in an optimizer (SGD,
Adam, AdamW or Adagrad), either directly or through `one_embedding.Optimizer`, as OneFlow's eager
scripts do; backward pushes the rows' gradients into the store (duplicate ids sum) and the
optimizer's `step()` updates exactly the rows that received a gradient, with the group's
hyper-parameters. Compiled graphs (`nn.Graph` with `add_optimizer`) record the lookup, the push
and the update, and replay them with each call's ids.

The stores' options follow OneFlow's (`make_device_mem_store_options`, ...); the tiers they
describe (GPU cache, host memory, SSD) are one tier here: the rows live in host memory, and
`persistent_path` holds the snapshots (`save_snapshot`, `state_dict`) under
`<path>/<rank>-<world_size>/snapshots/<name>/`. A device-memory store's `capacity` bounds the
number of ids (a new id beyond it raises); in the cached stores it is a hint, as OneFlow's.
"""

import copy
import json
import math
import numbers
import os
import time
import weakref

import numpy as np

import oneflow
from oneflow._oneflow_internal import Tensor
from oneflow._oneflow_internal import _one_embedding as _store
from oneflow.nn.modules.module import Module
from oneflow.nn.parameter import Parameter

__all__ = [
    "MultiTableEmbedding",
    "MultiTableMultiColumnEmbedding",
    "Optimizer",
    "make_cached_host_mem_store_options",
    "make_cached_ssd_store_options",
    "make_column_options",
    "make_constant_initializer",
    "make_device_mem_store_options",
    "make_normal_initializer",
    "make_persistent_table_reader",
    "make_persistent_table_writer",
    "make_table",
    "make_table_options",
    "make_trunc_normal_initializer",
    "make_uniform_initializer",
]

_OP = "one_embedding"


# ---- initializers and tables ----


def make_uniform_initializer(low=0.0, high=1.0):
    """Values drawn uniformly from [low, high)."""
    return {"type": "uniform", "low": low, "high": high}


def make_normal_initializer(mean=0.0, std=1.0):
    """Values drawn from N(mean, std^2)."""
    return {"type": "normal", "mean": mean, "std": std}


def make_constant_initializer(value):
    return {"type": "constant", "value": value}


def make_trunc_normal_initializer(mean=0.0, std=1.0, a=-2.0, b=2.0):
    """N(mean, std^2) restricted to [a, b] (bounds in the values' units)."""
    return {"type": "trunc_normal", "mean": mean, "std": std, "a": a, "b": b}


def make_table_options(param):
    """A table: one initializer for its whole embedding, or a list of column options
    (`make_column_options`) for MultiTableMultiColumnEmbedding."""
    if isinstance(param, dict):
        return {"initializer": param}
    if isinstance(param, (list, tuple)):
        return {"columns": list(param)}
    raise ValueError("param must be initializer or columns")


make_table = make_table_options


def make_column_options(initializer):
    return {"initializer": initializer}


# ---- store options ----


def _store_options(caches, persistent_path, capacity, size_factor, storage_dim, block):
    return {
        "kv_store": {
            "caches": caches,
            "persistent_table": {
                "path": persistent_path,
                "physical_block_size": block,
                "capacity_hint": int(capacity),
            },
        },
        "size_factor": size_factor,
        "storage_dim": storage_dim,
    }


def make_device_mem_store_options(
    persistent_path, capacity, size_factor=1, storage_dim=-1, physical_block_size=4096
):
    """The whole table in (device) memory: at most `capacity` ids."""
    assert capacity > 0, f"{_OP}: capacity must be positive, got {capacity}"
    caches = [{"policy": "full", "capacity": int(capacity), "value_memory_kind": "device"}]
    return _store_options(
        caches, persistent_path, capacity, size_factor, storage_dim, physical_block_size
    )


def make_cached_host_mem_store_options(
    cache_budget_mb,
    persistent_path,
    capacity,
    size_factor=1,
    storage_dim=-1,
    physical_block_size=4096,
):
    """Host memory holding the table behind a device cache of `cache_budget_mb` MiB."""
    caches = [
        {"policy": "lru", "cache_memory_budget_mb": cache_budget_mb, "value_memory_kind": "device"},
        {"policy": "full", "capacity": int(capacity), "value_memory_kind": "host"},
    ]
    return _store_options(
        caches, persistent_path, capacity, size_factor, storage_dim, physical_block_size
    )


def make_cached_ssd_store_options(
    cache_budget_mb,
    persistent_path,
    capacity=None,
    size_factor=1,
    storage_dim=-1,
    physical_block_size=4096,
    host_cache_budget_mb=0,
):
    """A persistent table behind a device cache (and a host cache when host_cache_budget_mb >
    0). Here the rows are held in host memory and `persistent_path` keeps the snapshots."""
    assert cache_budget_mb > 0 or host_cache_budget_mb > 0, (
        f"{_OP}: one of cache_budget_mb and host_cache_budget_mb must be positive"
    )
    caches = []
    if cache_budget_mb > 0:
        caches.append(
            {
                "policy": "lru",
                "cache_memory_budget_mb": cache_budget_mb,
                "value_memory_kind": "device",
            }
        )
    if host_cache_budget_mb > 0:
        caches.append(
            {
                "policy": "lru",
                "cache_memory_budget_mb": host_cache_budget_mb,
                "value_memory_kind": "host",
            }
        )
    return _store_options(
        caches, persistent_path, capacity or 0, size_factor, storage_dim, physical_block_size
    )


def _world():
    return oneflow.env.get_rank(), oneflow.env.get_world_size()


def _rank_path(path, rank=None, world=None):
    """The directory of this rank's table: `<path>/<rank>-<world>` (the rank zero-padded to the
    width of world), or path[rank] for a list."""
    if rank is None:
        rank, world = _world()
    if isinstance(path, (list, tuple)):
        assert len(path) == world, (
            f"{_OP}: persistent_path as a list needs one path per rank ({world}), got {len(path)}"
        )
        return str(path[rank])
    return os.path.join(str(path), f"{rank:0{len(str(world))}d}-{world}")


def _check_initializer(init):
    if not isinstance(init, dict) or "type" not in init:
        raise ValueError(f"{_OP}: expected an initializer dict (make_*_initializer), got {init!r}")
    kind = init["type"]
    need = {
        "uniform": ("low", "high"),
        "normal": ("mean", "std"),
        "constant": ("value",),
        "trunc_normal": ("mean", "std", "a", "b"),
    }.get(kind)
    if need is None:
        raise ValueError(
            f"{_OP}: unknown initializer type {kind!r} (uniform, normal, constant, trunc_normal)"
        )
    for k in need:
        if k not in init:
            raise ValueError(f"{_OP}: a {kind} initializer needs {k!r}")
        if not isinstance(init[k], numbers.Real) or not math.isfinite(init[k]):
            raise ValueError(f"{_OP}: the {kind} initializer's {k} must be a finite number")
    if kind == "uniform" and not init["low"] <= init["high"]:
        raise ValueError(f"{_OP}: uniform initializer needs low <= high, got {init}")
    if kind in ("normal", "trunc_normal") and init["std"] < 0:
        raise ValueError(f"{_OP}: normal initializer needs std >= 0, got {init}")
    if kind == "trunc_normal" and not init["a"] < init["b"]:
        raise ValueError(f"{_OP}: trunc_normal initializer needs a < b, got {init}")
    return init


_DEFAULT_INITIALIZER = {"type": "normal", "mean": 0, "std": 0.05}


class MultiTableMultiColumnEmbedding(Module):
    """Several embedding tables in one store; each table's embedding is a run of columns with
    their own initializers (`embedding_dim` a list of column widths, or one int)."""

    def __init__(
        self,
        name,
        embedding_dim,
        dtype,
        key_type,
        tables,
        store_options,
        default_initializer=None,
        padding_idx=None,
        seed=0,
    ):
        super().__init__()
        dims = [embedding_dim] if isinstance(embedding_dim, int) else list(embedding_dim)
        assert dims and all(isinstance(d, int) and d > 0 for d in dims), (
            f"{_OP}: embedding_dim must be a positive int or a list of them, got {embedding_dim!r}"
        )
        if dtype not in (oneflow.float32,):
            raise NotImplementedError(
                f"{_OP}: the table stores float32 values; got dtype {dtype} (float16 storage is "
                "not supported)"
            )
        if key_type not in (oneflow.int32, oneflow.int64):
            raise NotImplementedError(f"{_OP}: key_type must be int32 or int64, got {key_type}")
        self.dtype = dtype
        self.key_type = key_type
        self.column_dims = dims
        self.embedding_dim = sum(dims)
        self.embedding_name = name
        self.seed = int(seed)
        self.padding_idx = None if padding_idx is None else int(padding_idx)
        if self.padding_idx is not None and key_type == oneflow.int32:
            assert -(2**31) <= self.padding_idx < 2**31, (
                f"{_OP}: padding_idx {padding_idx} is out of range for int32 keys"
            )
        self.rank_id, self.world_size = _world()
        if self.world_size > 1:
            raise NotImplementedError(
                f"{_OP}: tables sharded over {self.world_size} processes are not supported yet"
            )

        opts = dict(store_options)
        storage_dim = opts.get("storage_dim", -1)
        size_factor = opts.get("size_factor", 1)
        assert isinstance(size_factor, int) and size_factor >= 1, (
            f"{_OP}: size_factor must be a positive int, got {size_factor!r}"
        )
        self.storage_dim = (
            storage_dim if storage_dim not in (None, -1) else size_factor * self.embedding_dim
        )
        assert self.storage_dim >= self.embedding_dim, (
            f"{_OP}: storage_dim ({self.storage_dim}) must be at least embedding_dim "
            f"({self.embedding_dim})"
        )
        kv = opts.get("kv_store", {})
        caches = kv.get("caches", [])
        caches = [caches] if isinstance(caches, dict) else list(caches)
        assert len(caches) <= 2, f"{_OP}: at most two cache levels, got {len(caches)}"
        for c in caches:
            assert c.get("policy") in ("lru", "full"), f"{_OP}: cache policy must be lru or full"
            assert c.get("value_memory_kind") in ("device", "host"), (
                f"{_OP}: value_memory_kind must be device or host"
            )
            assert c.get("capacity", 0) > 0 or c.get("cache_memory_budget_mb", 0) > 0, (
                f"{_OP}: a cache needs a capacity or a cache_memory_budget_mb"
            )
        persistent = kv.get("persistent_table", {})
        assert "path" in persistent, f"{_OP}: the store options need a persistent_table path"
        assert persistent.get("physical_block_size", 4096) in (512, 4096), (
            f"{_OP}: physical_block_size must be 512 or 4096"
        )
        self.persistent_path = _rank_path(persistent["path"], self.rank_id, self.world_size)
        self.is_full_cache = bool(caches) and caches[0]["policy"] == "full"
        # Only a store that is one full cache is bounded; elsewhere capacity is a hint.
        capacity = caches[0]["capacity"] if len(caches) == 1 and self.is_full_cache else 0

        default = _check_initializer(default_initializer or _DEFAULT_INITIALIZER)
        tables = [{"initializer": default}] if not tables else list(tables)
        per_table = []
        for t in tables:
            if "columns" in t:
                assert "initializer" not in t, (
                    f"{_OP}: a table has either columns or an initializer, not both"
                )
                cols = t["columns"]
                assert len(cols) == len(dims), (
                    f"{_OP}: a table has {len(cols)} columns, but embedding_dim gives {len(dims)}"
                )
                per_table.append([_check_initializer(c["initializer"]) for c in cols])
            else:
                init = _check_initializer(t.get("initializer", default))
                per_table.append([init] * len(dims))
        self.num_tables = len(per_table)
        self.embedding_tables = json.dumps(
            {
                "tables": [{"columns": [{"initializer": i} for i in c]} for c in per_table],
                "column_dims": dims,
            }
        )
        self.key_value_store_options = json.dumps(
            {
                "name": name,
                "key_type_size": 4 if key_type == oneflow.int32 else 8,
                "value_type_size": 4,
                "value_type": str(dtype),
                "storage_dim": self.storage_dim,
                "kv_store": kv,
                "parallel_num": self.world_size,
            }
        )
        self._handle = _store.create_store(
            self.embedding_dim, self.storage_dim, dims, per_table, self.seed, capacity
        )
        self._finalizer = weakref.finalize(self, _store.release_store, self._handle)
        self.shadow = Parameter(oneflow.zeros(1))
        # The optimizers find the store through the shadow.
        self.shadow._one_embedding = weakref.ref(self)

    def __deepcopy__(self, memo):
        """A copy with its own table (rows, optimizer state and waiting gradients copied)."""
        cls = type(self)
        new = cls.__new__(cls)
        memo[id(self)] = new
        for k, v in self.__dict__.items():
            if k not in ("_handle", "_finalizer"):
                new.__dict__[k] = copy.deepcopy(v, memo)
        new._handle = _store.clone(self._handle)
        new._finalizer = weakref.finalize(new, _store.release_store, new._handle)
        new.shadow._one_embedding = weakref.ref(new)
        return new

    def __reduce_ex__(self, protocol):
        raise TypeError(
            f"{_OP}: a table does not pickle; save its state_dict (a snapshot under "
            "persistent_path) or call save_snapshot"
        )

    def extra_repr(self):
        dim = self.column_dims if len(self.column_dims) > 1 else self.embedding_dim
        return (
            f"name={self.embedding_name!r}, embedding_dim={dim}, "
            f"storage_dim={self.storage_dim}, num_tables={self.num_tables}"
        )

    def forward(self, ids, table_ids=None):
        """Rows of `ids` ([*ids.shape, embedding_dim], in the shadow's dtype). `table_ids`
        (same shape as ids, or a shape ids' trailing dims broadcast to) picks each id's table
        for initialisation; without it, flattened position i belongs to table
        i % num_tables (for ids of shape (batch, num_tables): the column)."""
        if not isinstance(ids, Tensor):
            raise TypeError(f"{_OP}: expected ids to be a Tensor, got {type(ids).__name__}")
        assert ids.dtype == self.key_type, (
            f"{_OP}: ids data_type must equals key_type ({self.key_type}), got {ids.dtype}"
        )
        if ids.is_global:
            raise NotImplementedError(f"{_OP}: global ids are not supported yet")
        if table_ids is None:
            if self.num_tables > 1:
                table_ids = self._default_table_ids(tuple(ids.shape))
        else:
            if not isinstance(table_ids, Tensor) or table_ids.dtype not in (
                oneflow.int32,
                oneflow.int64,
            ):
                raise TypeError(f"{_OP}: expected table_ids to be an int32 or int64 Tensor")
            ts, ishape = tuple(table_ids.shape), tuple(ids.shape)
            if ts != ishape:
                if len(ts) > len(ishape) or ishape[len(ishape) - len(ts) :] != ts:
                    raise ValueError(
                        f"{_OP}: table_ids of shape {ts} do not match ids of shape {ishape}"
                    )
                table_ids = table_ids.expand(ishape)
            if table_ids.dtype == oneflow.int64:
                # out-of-range ids become -1 (the kernel's IndexError), not wrapped int32s
                bad = (table_ids < 0) | (table_ids >= self.num_tables)
                table_ids = oneflow.where(bad, -1, table_ids)
            table_ids = table_ids.to(oneflow.int32).contiguous()
        return _store.lookup(self.shadow, ids, table_ids, self._handle, self.padding_idx)

    def _default_table_ids(self, shape):
        """Table i % num_tables for flattened position i, made once per ids shape (a few
        shapes are kept: batch sizes vary little)."""
        cache = self.__dict__.setdefault("_table_ids_cache", {})
        t = cache.get(shape)
        if t is None:
            if len(cache) >= 8:
                cache.clear()
            n = 1
            for d in shape:
                n *= d
            t = cache[shape] = (oneflow.arange(n, dtype=oneflow.int32) % self.num_tables).reshape(
                shape
            )
        return t

    # ---- snapshots ----

    def _snapshot_dir(self, snapshot_name):
        return os.path.join(self.persistent_path, "snapshots", str(snapshot_name))

    def save_snapshot(self, snapshot_name):
        """Writes every row (embedding and optimizer state) under
        `<persistent_path>/snapshots/<snapshot_name>/`."""
        _store.save(self._handle, self._snapshot_dir(snapshot_name))

    def load_snapshot(self, snapshot_name):
        """Replaces the table's rows by those of a snapshot saved with the same embedding_dim
        and storage_dim."""
        _store.load(self._handle, self._snapshot_dir(snapshot_name))

    def num_ids(self):
        """How many ids the table holds."""
        return _store.size(self._handle)

    def state_dict(self, destination=None, prefix="", keep_vars=False):
        destination = super().state_dict(destination, prefix, keep_vars)
        name = time.strftime("%Y-%m-%d-%H-%M-%S-") + f"{time.time_ns() // 1000 % 1000000:06d}"
        self.save_snapshot(name)
        destination[prefix + "OneEmbeddingSnapshot"] = name
        destination[prefix + "OneEmbeddingKeyValueOptions"] = self.key_value_store_options
        return destination

    def _load_from_state_dict(
        self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
    ):
        own = (prefix + "OneEmbeddingSnapshot", prefix + "OneEmbeddingKeyValueOptions")
        snapshot = state_dict.get(own[0])
        if snapshot is not None:
            try:
                self.load_snapshot(snapshot)
            except Exception as e:  # noqa: BLE001 (reported as load_state_dict's errors are)
                error_msgs.append(
                    f'While Loading OneEmbedding Snapshot named "{snapshot}" failed, please '
                    f"check whether the Snapshot exist ({e})"
                )
        rest = {k: v for k, v in state_dict.items() if k not in own}
        super()._load_from_state_dict(
            rest, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
        )


class MultiTableEmbedding(MultiTableMultiColumnEmbedding):
    """Several embedding tables of one embedding_dim in one store (see the module docstring).

    >>> tables = [make_table_options(make_uniform_initializer(low=-0.1, high=0.1))] * 3
    >>> store = make_device_mem_store_options(persistent_path="/tmp/emb", capacity=10000)
    >>> emb = MultiTableEmbedding("emb", 16, flow.float, flow.int64, tables, store)
    >>> emb(flow.tensor([[1, 2, 3], [4, 5, 6]])).shape     # (batch, num_tables) ids
    oneflow.Size([2, 3, 16])
    """

    def __init__(
        self,
        name,
        embedding_dim,
        dtype,
        key_type,
        tables,
        store_options,
        default_initializer=None,
        padding_idx=None,
        seed=0,
    ):
        assert isinstance(embedding_dim, int), (
            f"{_OP}: MultiTableEmbedding's embedding_dim must be an int, got {embedding_dim!r}"
        )
        super().__init__(
            name,
            embedding_dim,
            dtype,
            key_type,
            tables,
            store_options,
            default_initializer,
            padding_idx,
            seed,
        )


# ---- training ----


def _embedding_of(p):
    ref = p.__dict__.get("_one_embedding") if hasattr(p, "__dict__") else None
    return ref() if ref is not None else None


def embedding_rule(optimizer, group):
    """(kind, hyper-parameters) of the store update that `optimizer` applies with `group`."""
    from oneflow.optim.algorithms import SGD, Adagrad, Adam

    maximize = bool(group.get("maximize", False))
    wd = float(group.get("weight_decay", 0.0))
    if isinstance(optimizer, SGD):
        return "sgd", dict(
            momentum=float(group["momentum"]),
            dampening=float(group["dampening"]),
            nesterov=bool(group["nesterov"]),
            weight_decay=wd,
            maximize=maximize,
        )
    if isinstance(optimizer, Adam):
        if group.get("amsgrad"):
            raise NotImplementedError(f"{_OP}: Adam with amsgrad does not update embeddings")
        b1, b2 = group["betas"]
        return "adam", dict(
            beta1=float(b1),
            beta2=float(b2),
            eps=float(group["eps"]),
            decoupled=bool(optimizer._decoupled),
            weight_decay=wd,
            maximize=maximize,
        )
    if isinstance(optimizer, Adagrad):
        return "adagrad", dict(
            eps=float(group["eps"]),
            initial_accumulator_value=float(group["initial_accumulator_value"]),
            weight_decay=wd,
            maximize=maximize,
        )
    raise NotImplementedError(
        f"{_OP}: only SGD, Adam, AdamW and Adagrad update an embedding table, got "
        f"{type(optimizer).__name__}"
    )


def embedding_numbers(kind, group, step):
    """The per-step numbers of the update at 1-based `step`: [lr] (Adagrad: the decayed lr),
    Adam [lr, bias_correction1, bias_correction2]."""
    lr = float(group["lr"])
    if kind == "adam":
        if not group.get("do_bias_correction", True):
            return [lr, 1.0, 1.0]
        b1, b2 = group["betas"]
        return [lr, 1.0 - b1**step, 1.0 - b2**step]
    if kind == "adagrad":
        return [lr / (1.0 + (step - 1) * float(group["lr_decay"]))]
    return [lr]


def _step_embedding(optimizer, group, p):
    """Eager: the update of the embedding whose shadow is p, if backward reached it."""
    emb = _embedding_of(p)
    if emb is None or p.grad is None:
        return
    kind, hyper = embedding_rule(optimizer, group)
    st = optimizer.state[p]
    st["step"] = st.get("step", 0) + 1
    scalars = oneflow._C._float64_tensor(embedding_numbers(kind, group, st["step"]))
    _store.update(p, scalars, emb._handle, kind, hyper)


def _scale_pending(p, factor):
    """Multiplies the gradients waiting in the store of the shadow p (a kernel, so a compiled
    graph records it)."""
    emb = _embedding_of(p)
    if emb is not None:
        _store.update(p, oneflow._C._float64_tensor([factor]), emb._handle, "scale_grad", {})


def _unscale_pending(p, factor):
    """GradScaler.unscale_: multiplies the waiting gradients on the host; whether they were all
    finite."""
    emb = _embedding_of(p)
    return True if emb is None else _store.scale_grad(emb._handle, factor)


def _clear_pending(p):
    """zero_grad of a shadow: drops the gradients pushed into its store."""
    emb = _embedding_of(p)
    if emb is not None:
        _store.update(p, oneflow._C._float64_tensor([0.0]), emb._handle, "clear_grad", {})


class Optimizer:
    """OneFlow's eager form, `opt = one_embedding.Optimizer(opt, [embedding, ...])`: checks
    that the optimizer holds the embeddings' shadows and updates tables (SGD, Adam, AdamW,
    Adagrad), then returns the optimizer itself, whose `step()` updates the tables (it does so
    unwrapped too), so schedulers, GradScaler and `nn.Graph.add_optimizer` take it."""

    def __new__(cls, optimizer, embeddings):
        shadows = {id(p) for g in optimizer.param_groups for p in g["params"]}
        for emb in embeddings:
            if id(emb.shadow) not in shadows:
                raise ValueError("embedding must in optimizers param_group")
        for g in optimizer.param_groups:
            embedding_rule(optimizer, g)  # NotImplementedError for other optimizers
        return optimizer


# ---- persistent tables ----


def _table_store(storage_dim):
    return _store.create_store(
        storage_dim, storage_dim, [storage_dim], [[{"type": "constant", "value": 0.0}]], 0, 0
    )


def _check_value_type(key_type, value_type):
    if key_type not in (oneflow.int32, oneflow.int64):
        raise NotImplementedError(f"{_OP}: key_type must be int32 or int64, got {key_type}")
    if value_type != oneflow.float32:
        raise NotImplementedError(f"{_OP}: value_type must be float32, got {value_type}")


class _PersistentTableReader:
    def __init__(self, paths, snapshot_name, key_type, value_type, storage_dim, batch=65536):
        _check_value_type(key_type, value_type)
        self._key_np = np.int32 if key_type == oneflow.int32 else np.int64
        self._paths = [str(p) for p in (paths if isinstance(paths, (list, tuple)) else [paths])]
        self._snapshot = str(snapshot_name)
        self._storage_dim = storage_dim
        self._batch = batch
        self._gen = self._batches()

    def _batches(self):
        for path in self._paths:
            h = _table_store(self._storage_dim)
            try:
                _store.load(h, os.path.join(path, "snapshots", self._snapshot))
                keys = _store.keys(h)
                for b in range(0, len(keys), self._batch):
                    k = keys[b : b + self._batch]
                    yield k.astype(self._key_np), _store.read_rows(h, k)
            finally:
                _store.release_store(h)

    def __iter__(self):
        return self

    def __next__(self):
        return next(self._gen)

    def close(self):
        self._gen.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class _PersistentTableWriter:
    def __init__(self, paths, snapshot_name, key_type, value_type, storage_dim):
        _check_value_type(key_type, value_type)
        self._key_np = np.int32 if key_type == oneflow.int32 else np.int64
        self._paths = [str(p) for p in (paths if isinstance(paths, (list, tuple)) else [paths])]
        self._snapshot = str(snapshot_name)
        self._storage_dim = storage_dim
        self._stores = [_table_store(storage_dim) for _ in self._paths]
        self._closed = False

    def write(self, keys, values):
        """Rows for `keys` (1-D, the key dtype) from `values` ((n, storage_dim) float32); each
        key goes to the table of its hash, as the sharded tables are read."""
        if self._closed:
            raise RuntimeError(f"{_OP}: the persistent table writer is closed")
        keys, values = np.asarray(keys), np.asarray(values)
        if keys.ndim != 1 or values.ndim != 2 or values.shape != (len(keys), self._storage_dim):
            raise ValueError(
                f"{_OP}: expected keys of shape (n,) and values of shape (n, {self._storage_dim}), "
                f"got {keys.shape} and {values.shape}"
            )
        if keys.dtype != self._key_np or values.dtype != np.float32:
            raise TypeError(
                f"{_OP}: expected {np.dtype(self._key_np).name} keys and float32 values, got "
                f"{keys.dtype} and {values.dtype}"
            )
        shard = _shard_of(keys.astype(np.int64), len(self._stores))
        for i, h in enumerate(self._stores):
            sel = shard == i
            if sel.any():
                _store.write_rows(h, keys[sel].astype(np.int64), values[sel])

    def close(self):
        if self._closed:
            return
        self._closed = True
        try:
            for path, h in zip(self._paths, self._stores):
                _store.save(h, os.path.join(path, "snapshots", self._snapshot))
        finally:
            for h in self._stores:
                _store.release_store(h)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 (nothing to report to at interpreter exit)
            pass


def _shard_of(keys, n):
    if n == 1:
        return np.zeros(len(keys), dtype=np.int64)
    x = keys.view(np.uint64).copy()
    with np.errstate(over="ignore"):
        x ^= x >> np.uint64(30)
        x *= np.uint64(0xBF58476D1CE4E5B9)
        x ^= x >> np.uint64(27)
        x *= np.uint64(0x94D049BB133111EB)
        x ^= x >> np.uint64(31)
    return (x % np.uint64(n)).astype(np.int64)


def make_persistent_table_reader(
    paths, snapshot_name, key_type, value_type, storage_dim, physical_block_size=4096
):
    """Iterates the rows of a snapshot of per-rank tables (`paths`: the rank directories, e.g.
    `<persistent_path>/0-1`): (keys, values) NumPy batches of up to 65536 rows, table by
    table. Also a context manager."""
    return _PersistentTableReader(paths, snapshot_name, key_type, value_type, storage_dim)


def make_persistent_table_writer(
    paths, snapshot_name, key_type, value_type, storage_dim, physical_block_size=4096
):
    """Writes rows into a snapshot of per-rank tables: `write(keys, values)`, then `close()`
    (or leave the `with` block), which saves the snapshot that `load_snapshot` reads."""
    return _PersistentTableWriter(paths, snapshot_name, key_type, value_type, storage_dim)
