"""DataLoader: batching with samplers and collate functions, in the main process or in worker
processes (fork; each worker runs the core single-threaded and synchronously, as PyTorch's
workers do). Large tensors cross from the workers in shared memory (Note [DataLoader shared
memory]). Batches come back in sampler order; a worker that raises re-raises in the main process
with its traceback, and a worker that dies is reported instead of waiting forever."""

import collections
import copy
import itertools
import mmap
import multiprocessing as mp
import multiprocessing.reduction as mp_reduction
import os
import queue
import random
import sys
import traceback
import warnings
import weakref

import numpy as np

import oneflow
from oneflow._oneflow_internal import Tensor
from oneflow.utils.data.dataset import IterableDataset
from oneflow.utils.data.sampler import BatchSampler, RandomSampler, SequentialSampler

# ---- collate ----------------------------------------------------------------------------


def default_convert(data):
    """NumPy arrays and scalars as tensors, through mappings and sequences (PyTorch's rules: a
    plain tuple becomes a list, named tuples and other sequences keep their type)."""
    if isinstance(data, np.ndarray) and data.dtype.kind not in "SaUO":
        return oneflow.from_numpy(data)
    if isinstance(data, np.generic) and data.dtype.kind not in "SaUO":
        return oneflow.tensor(data)
    if isinstance(data, collections.abc.Mapping):
        try:
            if isinstance(data, collections.abc.MutableMapping):
                clone = copy.copy(data)
                clone.update({k: default_convert(data[k]) for k in data})
                return clone
            return type(data)({k: default_convert(data[k]) for k in data})
        except TypeError:
            return {k: default_convert(data[k]) for k in data}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            if isinstance(data, collections.abc.MutableSequence):
                clone = copy.copy(data)
                for i, d in enumerate(data):
                    clone[i] = default_convert(d)
                return clone
            return type(data)([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def default_collate(batch):
    """Stacks tensors and arrays, turns numbers into tensors, and recurses into mappings and
    sequences (PyTorch's rules)."""
    elem = batch[0]
    if isinstance(elem, Tensor):
        if _pool is not None:  # straight into memory the main process maps
            shared = _stack_shared(batch)
            if shared is not None:
                return shared
        return oneflow.stack(list(batch), 0)
    if isinstance(elem, np.ndarray):
        if elem.dtype.kind in "SaUO":
            raise TypeError(
                f"default_collate: batch must contain tensors, numpy arrays, numbers, "
                f"dicts or lists; found {elem.dtype}"
            )
        # (np.ascontiguousarray would make 0-d arrays 1-d)
        arrays = [np.asarray(b, order="C") for b in batch]
        if all(a.shape == elem.shape and a.dtype == elem.dtype for a in arrays):
            # Stacked by NumPy and copied into a fresh tensor: an op reading NumPy's memory
            # would wait for all queued work first.
            return oneflow.tensor(np.stack(arrays, 0))
        return oneflow.stack([oneflow.from_numpy(a) for a in arrays], 0)
    if isinstance(elem, np.generic):
        return oneflow.tensor(np.array(batch))
    if isinstance(elem, bool):
        return oneflow.tensor(batch, dtype=oneflow.bool)
    if isinstance(elem, float):
        return oneflow.tensor(batch, dtype=oneflow.float64)
    if isinstance(elem, int):
        return oneflow.tensor(batch, dtype=oneflow.int64)
    if isinstance(elem, (str, bytes)):
        return batch  # as given: a list at the top, a tuple of a nested field (PyTorch's)
    if isinstance(elem, collections.abc.Mapping):
        return type(elem)({k: default_collate([d[k] for d in batch]) for k in elem})
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(s) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        if any(len(e) != len(elem) for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        out = [default_collate(s) for s in zip(*batch)]
        # As PyTorch: a tuple collates to a list, other sequences keep their type where it can be
        # rebuilt.
        if isinstance(elem, tuple):
            return out
        try:
            if isinstance(elem, collections.abc.MutableSequence):
                clone = copy.copy(elem)
                for i, value in enumerate(out):
                    clone[i] = value
                return clone
            return type(elem)(out)
        except TypeError:
            return out
    raise TypeError(
        f"default_collate: batch must contain tensors, numpy arrays, numbers, dicts "
        f"or lists; found {type(elem)}"
    )


# ---- worker side ------------------------------------------------------------------------

WorkerInfo = collections.namedtuple("WorkerInfo", ["id", "num_workers", "seed", "dataset"])
_worker_info = None


def get_worker_info():
    return _worker_info


class _TensorPayload:
    """A tensor crossing the process boundary as a NumPy array."""

    def __init__(self, array):
        self.array = array


# Note [DataLoader shared memory]: a worker's tensors from _SHARED_MIN_BYTES up cross to the
# main process in shared memory segments: anonymous memory files (memfd) whose descriptor
# multiprocessing passes along with the first batch in a segment. The main process maps each
# segment once and copies a batch out of it into a fresh tensor when it hands the batch over;
# its next task for that worker then releases the segment, which the worker fills again (a pool
# per worker, by byte size). default_collate in a worker stacks straight into a segment. So a
# batch is written once in the worker and read once in the main process, into memory both have
# touched before: no pickling through the result pipe, and no page faults after the first
# batches. The memory goes away with the processes' last mapping and descriptor, so nothing is
# left behind when a process dies.
_SHARED_MIN_BYTES = 1 << 16
_HAS_MEMFD = hasattr(os, "memfd_create")


class _Segment:
    def __init__(self, seg_id, nbytes):
        self.id, self.nbytes = seg_id, nbytes
        self.fd = os.memfd_create("oneflow-dataloader", os.MFD_CLOEXEC)
        try:
            os.ftruncate(self.fd, nbytes)
            self.map = mmap.mmap(self.fd, nbytes)
        except BaseException:
            os.close(self.fd)
            raise
        self.announced = False  # the main process has its descriptor
        self.state = "free"  # "collated": holds a default_collate result not yet sent; "sent"


class _SegmentPool:
    """A worker's segments (Note [DataLoader shared memory])."""

    def __init__(self):
        self.segments, self.free, self.by_address = {}, {}, {}
        self.next_id = 0

    def take(self, nbytes, state):
        ids = self.free.get(nbytes)
        if ids:
            seg = self.segments[ids.pop()]
        else:
            seg = _Segment(self.next_id, nbytes)
            self.segments[seg.id] = seg
            self.next_id += 1
        seg.state = state
        return seg

    def give_back(self, seg):
        seg.state = "free"
        self.free.setdefault(seg.nbytes, []).append(seg.id)

    def release(self, ids):
        """Segments the main process has copied out of."""
        for i in ids:
            seg = self.segments.get(i)
            if seg is not None and seg.state == "sent":
                self.give_back(seg)

    def collated_dropped(self, address):
        seg = self.by_address.pop(address, None)
        if seg is not None and seg.state == "collated":
            self.give_back(seg)  # never sent: free again


_pool = None  # the worker's _SegmentPool


def _stack_shared(batch):
    """The batch stacked (as oneflow.stack along dim 0) into a segment, or None when it is small,
    mixed or not on the CPU."""
    elem = batch[0]
    if elem.device.type != "cpu" or elem.is_global:
        return None
    shape, dtype = tuple(elem.shape), elem.dtype
    if dtype == oneflow.bfloat16 or any(
        tuple(t.shape) != shape or t.dtype != dtype or t.requires_grad for t in batch
    ):
        return None  # oneflow.stack raises its own error, promotes or records the gradient
    arrays = [t.numpy() for t in batch]
    nbytes = arrays[0].nbytes * len(arrays)
    if nbytes < _SHARED_MIN_BYTES or arrays[0].dtype.kind not in "biuf":
        return None
    seg = _pool.take(nbytes, "collated")
    dst = np.ndarray((len(arrays),) + shape, arrays[0].dtype, buffer=seg.map)
    np.stack(arrays, 0, out=dst)
    address = dst.__array_interface__["data"][0]
    _pool.by_address[address] = seg
    weakref.finalize(dst, _pool.collated_dropped, address)
    return oneflow.from_numpy(dst)


class _SharedTensorPayload:
    """A tensor crossing to the main process in a segment (Note [DataLoader shared memory])."""

    def __init__(self, array):
        self.shape, self.dtype = array.shape, array.dtype.str
        self.worker = _worker_info.id
        seg = _pool.by_address.get(array.__array_interface__["data"][0])
        if seg is None or seg.state != "collated" or seg.nbytes != array.nbytes:
            seg = _pool.take(array.nbytes, "sent")
            dst = np.ndarray(array.shape, array.dtype, buffer=seg.map)
            np.copyto(dst, array)
            del dst
        seg.state = "sent"
        self.segment, self.nbytes = seg.id, seg.nbytes
        # the descriptor goes with the segment's first batch only
        self.fd = None if seg.announced else mp_reduction.DupFd(seg.fd)
        seg.announced = True

    def tensor(self, workers):
        mapping = self._mapping(workers)
        src = np.ndarray(self.shape, np.dtype(self.dtype), buffer=mapping)
        # a fresh tensor: one made from NumPy's memory would make its first op wait for all
        # queued work
        t = oneflow._oneflow_internal._copy_from_numpy(src)
        del src
        workers.releases[self.worker].append(self.segment)
        return t

    def discard(self, workers):
        """A batch that will not be handed over (an earlier pass's, or one left when iteration
        stops): its segment goes back to the worker."""
        self._mapping(workers)
        workers.releases[self.worker].append(self.segment)

    def _mapping(self, workers):
        key = (self.worker, self.segment)
        if self.fd is not None:
            fd = self.fd.detach()
            try:
                old = workers.maps.pop(key, None)
                if old is not None:
                    old.close()
                workers.maps[key] = mmap.mmap(fd, self.nbytes)
            finally:
                os.close(fd)
        return workers.maps[key]


def _discard(obj, workers):
    """Returns the segments of an unpacked batch's tensors to their workers."""
    if isinstance(obj, _SharedTensorPayload):
        obj.discard(workers)
    elif isinstance(obj, dict):
        for v in obj.values():
            _discard(v, workers)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            _discard(v, workers)


def _pack(obj):
    if isinstance(obj, Tensor):
        array = obj.numpy()
        if _pool is not None and array.nbytes >= _SHARED_MIN_BYTES:
            return _SharedTensorPayload(array)
        return _TensorPayload(array)
    if isinstance(obj, dict):
        return type(obj)({k: _pack(v) for k, v in obj.items()})
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*(_pack(v) for v in obj))
    if isinstance(obj, (list, tuple)):
        return type(obj)(_pack(v) for v in obj)
    return obj


def _unpack(obj, workers):
    if isinstance(obj, _SharedTensorPayload):
        return obj.tensor(workers)
    if isinstance(obj, _TensorPayload):
        return oneflow.from_numpy(obj.array)
    if isinstance(obj, dict):
        return type(obj)({k: _unpack(v, workers) for k, v in obj.items()})
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*(_unpack(v, workers) for v in obj))
    if isinstance(obj, (list, tuple)):
        return type(obj)(_unpack(v, workers) for v in obj)
    return obj


class _WorkerError:
    def __init__(self, worker_id, exc):
        self.worker_id = worker_id
        self.type_name = type(exc).__name__
        self.exc_type = type(exc)
        self.text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))

    def reraise(self):
        msg = (
            f"Caught {self.type_name} in DataLoader worker process {self.worker_id}.\n"
            f"Original {self.text}"
        )
        try:
            err = self.exc_type(msg)
        except Exception:
            err = RuntimeError(msg)
        raise err


def _worker_loop(
    dataset,
    index_queue,
    result_queue,
    collate_fn,
    worker_id,
    num_workers,
    seed,
    init_fn,
    iterable,
    batch_size,
    drop_last,
    auto_collation,
):
    global _worker_info, _pool
    try:
        oneflow._oneflow_internal._C.set_num_threads(1)
        # Ops run on the worker's own thread: handing each to a stream thread and back costs a
        # scheduler wake-up, dear while the workers and the main process share the cores.
        oneflow._oneflow_internal.set_sync_execution(True)
        oneflow.manual_seed(seed)
        random.seed(seed)
        np.random.seed(seed % (2**32))
        _worker_info = WorkerInfo(worker_id, num_workers, seed, dataset)
        _pool = _SegmentPool() if _HAS_MEMFD else None
        if init_fn is not None:
            init_fn(worker_id)
        it, epoch = None, None
        while True:
            task = index_queue.get()
            if task is None:
                break
            task_epoch, task_id, indices, released = task
            if _pool is not None:
                _pool.release(released)
            if task_epoch != epoch:  # a new pass over the data (persistent workers)
                epoch = task_epoch
                it = iter(dataset) if iterable else None
            try:
                if iterable:
                    items = list(itertools.islice(it, batch_size if auto_collation else 1))
                    if not items or (auto_collation and drop_last and len(items) < batch_size):
                        result_queue.put((epoch, task_id, StopIteration()))
                        continue
                    data = collate_fn(items) if auto_collation else collate_fn(items[0])
                elif auto_collation:
                    data = collate_fn([dataset[i] for i in indices])
                else:
                    data = collate_fn(dataset[indices])
                result_queue.put((epoch, task_id, _pack(data)))
            except Exception as e:  # reported to the main process, which re-raises
                result_queue.put((epoch, task_id, _WorkerError(worker_id, e)))
    except KeyboardInterrupt:
        pass


# ---- the loader -------------------------------------------------------------------------


class DataLoader:
    def __init__(
        self,
        dataset,
        batch_size=1,
        shuffle=None,
        sampler=None,
        batch_sampler=None,
        num_workers=0,
        collate_fn=None,
        pin_memory=False,
        drop_last=False,
        timeout=0,
        worker_init_fn=None,
        multiprocessing_context=None,
        generator=None,
        *,
        prefetch_factor=None,
        persistent_workers=False,
        pin_memory_device="",
        in_order=True,
    ):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError(
                "prefetch_factor option could only be specified in multiprocessing. "
                "let num_workers > 0 to enable multiprocessing"
            )
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        if pin_memory and not oneflow.cuda.is_available():
            # PyTorch's warning without an accelerator; batches are used as they are.
            warnings.warn(
                "'pin_memory' argument is set as true but no accelerator is found, then "
                "device pinned memory won't be used.",
                stacklevel=2,
            )
        # in_order=False lets PyTorch hand batches over as workers finish them; here they
        # always come in order, which that setting allows.
        self.in_order = in_order
        self.dataset, self.num_workers = dataset, num_workers
        self.prefetch_factor = 2 if prefetch_factor is None and num_workers > 0 else prefetch_factor
        self.pin_memory, self.timeout, self.worker_init_fn = pin_memory, timeout, worker_init_fn
        self.generator, self.persistent_workers = generator, persistent_workers
        self.multiprocessing_context = multiprocessing_context
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified shuffle "
                    f"option, but got shuffle={shuffle}"
                )
            if sampler is not None or batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified sampler")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with batch_size, "
                    "shuffle, sampler, and drop_last"
                )
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError(
                "batch_size=None option disables auto-batching and is mutually "
                "exclusive with drop_last"
            )
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if sampler is None and not self._iterable:
            sampler = (
                RandomSampler(dataset, generator=generator)
                if shuffle
                else SequentialSampler(dataset)
            )
        if batch_size is not None and batch_sampler is None and not self._iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size, self.drop_last = batch_size, drop_last
        self.sampler, self.batch_sampler = sampler, batch_sampler
        self._auto_collation = batch_sampler is not None or (self._iterable and batch_size)
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self._workers = None

    def __len__(self):
        if self._iterable:
            n = len(self.dataset)
            if self.batch_size:
                return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
            return n
        return len(self.batch_sampler) if self.batch_sampler is not None else len(self.sampler)

    def _index_iter(self):
        if self._iterable:
            return itertools.count()
        return iter(self.batch_sampler if self.batch_sampler is not None else self.sampler)

    def __iter__(self):
        it = self._single_process() if self.num_workers == 0 else _MultiProcessIter(self)
        if self.pin_memory and oneflow.cuda.is_available():
            return _LoaderIter(self, map(_pin_batch, it))
        return it if isinstance(it, _MultiProcessIter) else _LoaderIter(self, it)

    def _single_process(self):
        if self._iterable:
            it = iter(self.dataset)
            while True:
                if self._auto_collation:
                    items = list(itertools.islice(it, self.batch_size))
                    if not items or (self.drop_last and len(items) < self.batch_size):
                        return
                    yield self.collate_fn(items)
                else:
                    try:
                        yield self.collate_fn(next(it))
                    except StopIteration:
                        return
        else:
            for indices in self._index_iter():
                if self._auto_collation:
                    yield self.collate_fn([self.dataset[i] for i in indices])
                else:
                    yield self.collate_fn(self.dataset[indices])


class _LoaderIter:
    """An epoch's batches with the loader's length (len(iter(loader)), as PyTorch's iterators)."""

    def __init__(self, loader, batches):
        self._loader, self._batches = loader, batches

    def __iter__(self):
        return self

    def __next__(self):
        return next(self._batches)

    def __len__(self):
        return len(self._loader)


def _pin_batch(data):
    """The batch with its CPU tensors copied into page-locked memory (Tensor.pin_memory), in
    the same containers."""
    if isinstance(data, oneflow.Tensor):
        return data.pin_memory() if not data.is_cuda else data
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(_pin_batch(d) for d in data))
    if isinstance(data, (list, tuple)):
        return type(data)(_pin_batch(d) for d in data)
    if isinstance(data, dict):
        return {k: _pin_batch(v) for k, v in data.items()}
    return data


_epochs = itertools.count()


class _Workers:
    def __init__(self, loader):
        ctx = loader.multiprocessing_context
        if ctx is None or isinstance(ctx, str):
            ctx = mp.get_context(ctx or ("fork" if sys.platform != "win32" else "spawn"))
        self.result_queue = ctx.Queue()
        self.index_queues, self.procs = [], []
        # Note [DataLoader shared memory]: the main process's mappings of the workers'
        # segments, by (worker, segment), and the segments to release with each worker's next
        # task.
        self.maps = {}
        self.releases = [[] for _ in range(loader.num_workers)]
        base_seed = int(oneflow.randint(0, 2**31 - 1, (1,), generator=loader.generator).item())
        for wid in range(loader.num_workers):
            q = ctx.Queue()
            p = ctx.Process(
                target=_worker_loop,
                args=(
                    loader.dataset,
                    q,
                    self.result_queue,
                    loader.collate_fn,
                    wid,
                    loader.num_workers,
                    base_seed + wid,
                    loader.worker_init_fn,
                    loader._iterable,
                    loader.batch_size,
                    loader.drop_last,
                    loader._auto_collation,
                ),
                daemon=True,
            )
            p.start()
            self.index_queues.append(q)
            self.procs.append(p)

    def all_alive(self):
        return all(p.is_alive() for p in self.procs)

    def check_alive(self):
        # A worker only exits by itself on a signal (exit code 0 after a Ctrl-C); while tasks
        # are outstanding any exit is an error, or the main process would wait forever.
        for p in self.procs:
            if not p.is_alive():
                pids = ", ".join(str(q.pid) for q in self.procs if not q.is_alive())
                raise RuntimeError(
                    f"DataLoader worker (pid(s) {pids}) exited unexpectedly with "
                    f"exit code {p.exitcode}"
                )

    def shutdown(self):
        for q in self.index_queues:
            try:
                q.put(None)
            except Exception:
                pass
        for p in self.procs:
            p.join(timeout=2)
            if p.is_alive():
                p.terminate()
        self.procs = []
        for m in self.maps.values():
            try:
                m.close()
            except BufferError:  # still viewed (not by oneflow: batches are copies)
                pass
        self.maps.clear()


class _MultiProcessIter:
    def __init__(self, loader):
        self.loader = loader
        if loader.persistent_workers and loader._workers is not None:
            if not loader._workers.all_alive():  # e.g. stopped by a Ctrl-C in the last pass
                loader._workers.shutdown()
                loader._workers = None
        if loader.persistent_workers and loader._workers is not None:
            self.workers = loader._workers
        else:
            self.workers = _Workers(loader)
            if loader.persistent_workers:
                loader._workers = self.workers
        self.index_iter = loader._index_iter()
        # Results of an earlier, unfinished pass over the same persistent workers carry an older
        # epoch and are dropped.
        self.epoch = next(_epochs)
        self.next_task = 0  # next task id to send
        self.next_out = 0  # next task id to yield
        self.pending = {}
        self.exhausted_workers = set()
        self.sent_out = False
        self.task_worker = {}
        self.stopped = False
        for _ in range(loader.prefetch_factor * loader.num_workers):
            self._send()

    def _send(self):
        if self.sent_out:
            return
        wid = self.next_task % self.loader.num_workers
        if self.loader._iterable:
            live = [w for w in range(self.loader.num_workers) if w not in self.exhausted_workers]
            if not live:
                self.sent_out = True
                return
            while wid in self.exhausted_workers:
                wid = (wid + 1) % self.loader.num_workers
            indices = None
        else:
            try:
                indices = next(self.index_iter)
            except StopIteration:
                self.sent_out = True
                return
        released, self.workers.releases[wid] = self.workers.releases[wid], []
        self.workers.index_queues[wid].put((self.epoch, self.next_task, indices, released))
        self.task_worker[self.next_task] = wid
        self.next_task += 1

    def __iter__(self):
        return self

    def _get(self):
        timeout = self.loader.timeout or None
        waited = 0.0
        while True:
            try:
                return self.workers.result_queue.get(timeout=0.5)
            except queue.Empty:
                self.workers.check_alive()
                waited += 0.5
                if timeout is not None and waited >= timeout:
                    raise RuntimeError(f"DataLoader timed out after {timeout} seconds") from None

    def __next__(self):
        while True:
            if self.next_out >= self.next_task and self.sent_out:
                self._finish()
                raise StopIteration
            if self.next_out in self.pending:
                data = self.pending.pop(self.next_out)
                wid = self.task_worker.pop(self.next_out)
                self.next_out += 1
                if isinstance(data, StopIteration):
                    self.exhausted_workers.add(wid)
                    self._send()
                    continue
                self._send()
                if isinstance(data, _WorkerError):
                    self._finish()
                    data.reraise()
                return _unpack(data, self.workers)
            try:
                epoch, task_id, data = self._get()
            except BaseException:
                # Interrupted (Ctrl-C reaches the workers too) or a dead worker: persistent
                # workers are replaced on the next pass.
                self._finish(abandon=True)
                raise
            if epoch == self.epoch:
                self.pending[task_id] = data
            else:
                _discard(data, self.workers)

    def _finish(self, abandon=False):
        if self.stopped:
            return
        self.stopped = True
        for data in self.pending.values():
            _discard(data, self.workers)
        self.pending.clear()
        if not self.loader.persistent_workers:
            self.workers.shutdown()
        elif abandon:
            self.workers.shutdown()
            if self.loader._workers is self.workers:
                self.loader._workers = None

    def __len__(self):
        return len(self.loader)

    def __del__(self):
        try:
            self._finish()
        except Exception:
            pass
