"""DistributedDataParallel: data parallel training across the processes of the group.

Every rank holds a replica of the module. At construction rank 0's parameters and buffers are
broadcast to the others; in backward, each parameter's gradient is copied into a bucket (a flat
buffer of about bucket_cap_mb) as soon as it is computed, and a full bucket is averaged over the
ranks by an all-reduce queued on the communication stream, so the reduction of the last layers'
gradients overlaps the backward of the first ones. A gradient accumulated locally before (under
no_sync) joins the new one in the bucket. When backward ends the averages replace the parameters'
.grad (new tensors: the buckets are reused by the next backward). Buckets are reduced in the
same order on every rank (a bucket waits for the ones before it), since collectives match by
order.
"""

import contextlib

import oneflow as flow
from oneflow import _oneflow_internal as _C
from oneflow.nn.modules.module import Module


def _group_ready():
    from oneflow import comm

    comm._ensure_initialized()
    return _C._comm_world_size()


class _Bucket:
    def __init__(self, params, dtype):
        self.params = params
        self.offsets = []
        n = 0
        for p in params:
            self.offsets.append(n)
            n += p.numel()
        self.flat = flow.zeros(n, dtype=dtype)
        self.reset()

    def reset(self):
        self.ready = set()
        self.launched = False


class DistributedDataParallel(Module):
    """Averages the gradients of `module`'s parameters over the ranks (PyTorch's and OneFlow's
    signature: OneFlow's bucket_size (parameters per bucket), use_bucket and
    broadcast_parameters; device_ids and output_device are accepted as None only; a
    process_group from new_group averages over its ranks). A PyTorch wrapper module (state
    dict keys with the `module.` prefix, which load_state_dict also takes without it); the
    module's attributes are reachable through it, as through OneFlow's, which returns the
    module itself."""

    def __init__(
        self,
        module,
        device_ids=None,
        output_device=None,
        dim=0,
        broadcast_buffers=True,
        process_group=None,
        bucket_cap_mb=25,
        find_unused_parameters=False,
        check_reduction=False,
        gradient_as_bucket_view=False,
        static_graph=False,
        *,
        bucket_size=None,
        broadcast_parameters=True,
        use_bucket=True,
    ):
        super().__init__()
        from oneflow import distributed as dist

        dist._check_group("DistributedDataParallel", process_group)
        self._group = dist._sub(process_group)  # None: the default group
        if self._group is not None and self._group.rank() < 0:
            raise ValueError(
                f"DistributedDataParallel: this process (rank {dist.get_rank()}) is not in "
                f"process_group {self._group}"
            )
        if any(p.is_global for p in module.parameters()):
            raise ValueError(
                "DistributedDataParallel: the module's parameters are global tensors, whose "
                "gradients the global ops already reduce; use the module without "
                "DistributedDataParallel"
            )
        if device_ids is not None and len(device_ids) > 1:
            raise ValueError("DistributedDataParallel: expected at most one device id")
        self.module = module
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self._world = _group_ready() if self._group is None else self._group.size()
        self._require_sync = True
        if not use_bucket or bucket_size is not None:  # OneFlow's: parameters per bucket
            cap_bytes = None
            per_bucket = 1 if not use_bucket else int(bucket_size)
        else:
            cap_bytes = int(bucket_cap_mb * 1024 * 1024)
            per_bucket = None
        with flow.no_grad():
            params = list(module.parameters()) if broadcast_parameters else []
            self._broadcast_coalesced(params + list(module.buffers()))
        params = [p for p in module.parameters() if p.requires_grad]
        # Gradients come roughly in reverse order of registration: the last layers first.
        self._buckets = []
        self._where = {}
        current, size = [], 0
        for p in reversed(params):
            nbytes = p.numel() * p.element_size()
            # The first bucket is small (1 MiB at most): the last layers' gradients are then
            # reduced while backward goes on, instead of waiting for a full 25 MiB.
            cap = cap_bytes if self._buckets or cap_bytes is None else min(cap_bytes, 1 << 20)
            full = (
                len(current) >= per_bucket
                if per_bucket is not None
                else size + nbytes > cap and current
            )
            if current and (full or p.dtype != current[0].dtype):
                self._add_bucket(current)
                current, size = [], 0
            current.append(p)
            size += nbytes
        if current:
            self._add_bucket(current)
        self._next = 0  # the next bucket to reduce
        self._in_backward = False
        self._hooks = [p.register_hook(self._make_hook(p)) for p in params]

    def __getattr__(self, name):
        # OneFlow's DistributedDataParallel returns the module itself: its attributes
        # (model.weight, model.config) stay reachable through the wrapper
        try:
            return super().__getattr__(name)
        except AttributeError:
            modules = self.__dict__.get("_modules", {})
            if "module" not in modules:
                raise
            return getattr(modules["module"], name)

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """PyTorch's keys (`module.` prefix), or OneFlow's, whose wrapper is the module itself
        (keys without the prefix)."""
        own = set(self.state_dict())
        if state_dict and not set(state_dict) <= own and {"module." + k for k in state_dict} <= own:
            state_dict = type(state_dict)(("module." + k, v) for k, v in state_dict.items())
        return super().load_state_dict(state_dict, strict=strict, assign=assign)

    def __setstate__(self, state):
        # A copy (deepcopy, pickle) holds copies of the parameters: its hooks and bucket slots
        # are registered on those, as PyTorch's DDP rebuilds its reducer when unpickled.
        super().__setstate__(state)
        self._where = {
            id(p): (bi, i) for bi, b in enumerate(self._buckets) for i, p in enumerate(b.params)
        }
        for b in self._buckets:
            b.reset()
        self._next, self._in_backward = 0, False
        self._hooks = [p.register_hook(self._make_hook(p)) for b in self._buckets for p in b.params]

    def _add_bucket(self, params):
        b = _Bucket(params, params[0].dtype)
        for i, p in enumerate(params):
            self._where[id(p)] = (len(self._buckets), i)
        self._buckets.append(b)

    def _in_group(self):
        """Runs the collectives inside among the process group's ranks (rank 0: its first)."""
        if self._group is None:
            return contextlib.nullcontext()
        return _C._CommGroupScope(self._group._ranks, self._group._id)

    def _broadcast(self, t):
        if self._world == 1 or t.numel() == 0:
            return
        data = t.detach()
        with self._in_group():
            if data.is_contiguous():
                _C._comm_broadcast(data, 0)
            else:
                tmp = data.contiguous()
                _C._comm_broadcast(tmp, 0)
                data.copy_(tmp)

    def _make_hook(self, p):
        def hook(grad):
            if not self._require_sync or self._world == 1:
                return None
            if not self._in_backward:
                self._in_backward = True
                flow.autograd._queue_callback(self._finish)
            bi, i = self._where[id(p)]
            b = self._buckets[bi]
            off = b.offsets[i]
            # The slot takes the gradient's shape, not the gradient a flat view: a view of it
            # held by the queued copy would make the engine copy it again to accumulate it.
            slot = b.flat[off : off + p.numel()].view(grad.shape)
            slot.copy_(grad)
            if p.grad is not None:  # accumulated locally (no_sync): reduced with the new one
                slot.add_(p.grad)
            b.ready.add(i)
            self._launch_ready()
            # The engine accumulates the local gradient as usual; _finish replaces .grad.
            return None

        return hook

    def _launch(self, b):
        with self._in_group():
            _C._comm_all_reduce(b.flat, "sum")
        b.launched = True

    def _launch_ready(self):
        while self._next < len(self._buckets):
            b = self._buckets[self._next]
            if len(b.ready) < len(b.params):
                return
            self._launch(b)
            self._next += 1

    def _finish(self):
        self._in_backward = False
        missing = [
            (bi, i)
            for bi, b in enumerate(self._buckets)
            for i in range(len(b.params))
            if i not in b.ready
        ]
        if missing and not self.find_unused_parameters:
            for b in self._buckets:
                b.reset()
            self._next = 0
            names = {id(p): n for n, p in self.module.named_parameters()}
            unused = [names.get(id(self._buckets[bi].params[i]), "?") for bi, i in missing]
            raise RuntimeError(
                "DistributedDataParallel: parameters received no gradient in this backward "
                f"pass: {unused}; pass find_unused_parameters=True if the forward does not "
                "use every parameter"
            )
        # Unused parameters contribute zeros (every rank reduces every bucket, in order).
        for bi, i in missing:
            b = self._buckets[bi]
            p = b.params[i]
            b.flat[b.offsets[i] : b.offsets[i] + p.numel()].zero_()
        for b in self._buckets[self._next :]:
            self._launch(b)
        self._next = 0
        # With unused parameters, which ones some rank used (PyTorch's bitmap): those get the
        # average everywhere, the others keep no gradient.
        used = None
        if self.find_unused_parameters:
            flags = flow.tensor(
                [int(i in b.ready) for b in self._buckets for i in range(len(b.params))],
                dtype=flow.int64,
            )
            with self._in_group():
                _C._comm_all_reduce(flags, "sum")
            used = iter(flags.tolist())
        # The averages replace .grad (one pass: the division writes a new tensor).
        with flow.no_grad():
            for b in self._buckets:
                for i, p in enumerate(b.params):
                    if not (next(used) if used is not None else i in b.ready):
                        continue
                    total = b.flat[b.offsets[i] : b.offsets[i] + p.numel()].view(p.shape)
                    p.grad = total / self._world
                b.reset()

    def _broadcast_coalesced(self, tensors):
        """Broadcasts rank 0's values of `tensors` with one collective per dtype (a network with
        50 BatchNorm layers has 150 buffers: one broadcast each cost ~150 round trips)."""
        by_dtype = {}
        for t in tensors:
            if t.numel():
                by_dtype.setdefault(t.dtype, []).append(t.detach())
        src = _C._comm_rank() == 0 if self._group is None else self._group.rank() == 0
        for group in by_dtype.values():
            if len(group) == 1:
                self._broadcast(group[0])
                continue
            flat = flow.cat([t.reshape(-1) for t in group])
            with self._in_group():
                _C._comm_broadcast(flat, 0)
            if src:
                continue
            offset = 0
            for t in group:
                t.copy_(flat[offset : offset + t.numel()].view(t.shape))
                offset += t.numel()

    def forward(self, *args, **kwargs):
        if self.broadcast_buffers and self._world > 1:
            with flow.no_grad():
                self._broadcast_coalesced(list(self.module.buffers()))
        return self.module(*args, **kwargs)

    @contextlib.contextmanager
    def no_sync(self):
        """Gradients of the backward passes inside accumulate locally, unreduced; the first
        backward after it reduces the sum."""
        prev = self._require_sync
        self._require_sync = False
        try:
            yield
        finally:
            self._require_sync = prev
