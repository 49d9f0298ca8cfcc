"""oneflow.comm: collectives and point-to-point transfers of local tensors between the processes
of a run, with OneFlow's signatures (sums only; oneflow.distributed adds torch.distributed's
names, reduce ops and Work handles on top of the same functions).

They run on the process-wide Gloo communicator of oneflow._oneflow_internal, which the first op
initialises from the launcher's variables (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT;
ONEFLOW_COMM_TIMEOUT seconds bounds every wait). An op is queued on the communication stream and
returns at once: reading a result waits for it, and later ops on the same tensors run after it,
so no op here needs an explicit wait except barrier(), which blocks as its name promises. The
communicator moves contiguous buffers: a non-contiguous tensor goes through a contiguous copy,
and lists of tensors through one flat buffer, a block per rank."""

import atexit
import operator
import os
import sys

import oneflow as flow
from oneflow import _oneflow_internal as _internal
from oneflow._oneflow_internal import Tensor

_DEFAULT_TIMEOUT_SECONDS = 300.0


# ---- the communicator ------------------------------------------------------------------------


def _env_int(op, name, default):
    value = os.environ.get(name, "").strip()
    if not value:
        return default
    try:
        return int(value)
    except ValueError:
        raise ValueError(
            f"{op}: environment variable {name} must be an integer, got {value!r}"
        ) from None


def _timeout_from_env(op):
    value = os.environ.get("ONEFLOW_COMM_TIMEOUT", "").strip()
    if not value:
        return _DEFAULT_TIMEOUT_SECONDS
    try:
        seconds = float(value)
    except ValueError:
        seconds = float("nan")
    if not seconds > 0:
        raise ValueError(
            f"{op}: environment variable ONEFLOW_COMM_TIMEOUT must be a positive number of "
            f"seconds, got {value!r}"
        )
    return seconds


def _init(op, rank, world_size, master_addr, master_port, timeout_seconds):
    """Rendezvous with the other ranks: rank 0 serves the key-value store at
    master_addr:master_port, every rank connects to it, then to every other rank."""
    if world_size < 1:
        raise ValueError(f"{op}: world size must be at least 1, got {world_size}")
    if not 0 <= rank < world_size:
        raise ValueError(f"{op}: rank {rank} is out of range for world size {world_size}")
    if world_size > 1 and not 0 < master_port < 65536:
        raise ValueError(f"{op}: master port must be in [1, 65535], got {master_port}")
    _internal._comm_init(rank, world_size, master_addr, master_port, float(timeout_seconds))
    if world_size > 1:
        atexit.register(_flush_sends_at_exit)


def _flush_sends_at_exit():
    # A send returns once its bytes are posted; the process must not end (and close its
    # connections) before the peer has them. A collective or send that failed and whose error
    # nothing raised is printed.
    if _internal._comm_initialized():
        try:
            _internal._comm_flush_sends()
            _internal.synchronize()
        except Exception as e:
            print(f"oneflow.comm: at exit: {e}", file=sys.stderr)


def _ensure_initialized(op="oneflow.comm"):
    """Initialises the communicator from the environment unless it is initialised already."""
    if _internal._comm_initialized():
        return
    world_size = _env_int(op, "WORLD_SIZE", 1)
    rank = _env_int(op, "RANK", 0)
    master_port = _env_int(op, "MASTER_PORT", None)
    if world_size > 1 and master_port is None:
        raise ValueError(
            f"{op}: environment variable MASTER_PORT is not set (WORLD_SIZE={world_size}); start "
            "the program with `python -m oneflow.distributed.launch`, which sets it"
        )
    master_addr = os.environ.get("MASTER_ADDR", "").strip() or "127.0.0.1"
    _init(op, rank, world_size, master_addr, master_port or 0, _timeout_from_env(op))


def _world_size(op):
    _ensure_initialized(op)
    return _internal._comm_world_size()


def _rank(op):
    _ensure_initialized(op)
    return _internal._comm_rank()


# ---- argument checks -------------------------------------------------------------------------


def _dtype_name(dtype):
    return str(dtype).split(".")[-1]


def _shape(t):
    return tuple(t.shape)


def _check_tensor(op, name, t):
    if not isinstance(t, Tensor):
        raise TypeError(f"{op}: expected {name} to be a Tensor, got {type(t).__name__}")
    if t.is_global:
        raise TypeError(
            f"{op}: {name} is a global tensor (its values live on several processes); "
            "communicate its shard (to_local()), or change its layout with to_global"
        )


def _check_rank_arg(op, name, value, world_size):
    if isinstance(value, bool):
        raise TypeError(f"{op}: expected {name} to be an int, got bool")
    try:
        value = operator.index(value)
    except TypeError:
        raise TypeError(f"{op}: expected {name} to be an int, got {type(value).__name__}") from None
    if not 0 <= value < world_size:
        raise ValueError(f"{op}: invalid {name} {value} (expected a rank in [0, {world_size - 1}])")
    return value


def _check_like(op, name, t, like, like_name, same_shape=True):
    """`t` must be a tensor with the dtype (and shape) of `like`."""
    _check_tensor(op, name, t)
    if t.dtype != like.dtype:
        raise ValueError(
            f"{op}: {name} has dtype {_dtype_name(t.dtype)}, expected "
            f"{_dtype_name(like.dtype)} (the dtype of {like_name})"
        )
    if same_shape and _shape(t) != _shape(like):
        raise ValueError(
            f"{op}: {name} has shape {_shape(t)}, expected {_shape(like)} (the shape of "
            f"{like_name})"
        )


def _check_list_length(op, name, tensors, world_size):
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(
            f"{op}: expected {name} to be a list of {world_size} tensors, got "
            f"{type(tensors).__name__}"
        )
    if len(tensors) != world_size:
        raise ValueError(
            f"{op}: expected a list of {world_size} tensors for {name}, got {len(tensors)}"
        )


def _check_list(op, name, tensors, world_size, like, like_name):
    """A list (or tuple) with one tensor per rank, each with the dtype and shape of `like`."""
    _check_list_length(op, name, tensors, world_size)
    for i, t in enumerate(tensors):
        _check_like(op, f"{name}[{i}]", t, like, like_name)


def _list_given(tensors):
    """gather_list / scatter_list count as not given when None or empty, as in PyTorch."""
    return tensors is not None and not (isinstance(tensors, (list, tuple)) and len(tensors) == 0)


def _check_numel(op, name, t, expected, why):
    if t.numel() != expected:
        raise ValueError(
            f"{op}: {name} has {t.numel()} elements (shape {_shape(t)}), expected {expected} "
            f"({why})"
        )


# ---- buffers ---------------------------------------------------------------------------------


def _contiguous(t):
    return t if t.is_contiguous() else t.contiguous()


def _write_through(t, run):
    """Runs `run` on t's memory; a non-contiguous t lends a contiguous copy, copied back after
    (the copy is queued behind the communication, so it sees its result)."""
    if t.is_contiguous():
        run(t)
    else:
        tmp = t.contiguous()
        run(tmp)
        t.copy_(tmp)


def _flat_buffer(like, blocks):
    """An uninitialised 1-D tensor of `blocks` times like's elements, on like's device."""
    return flow.empty(blocks * like.numel(), dtype=like.dtype, device=like.device)


def _concat(tensors):
    """The tensors' elements, one block after another, in one contiguous 1-D tensor."""
    return flow.cat([t.reshape(-1) for t in tensors])


def _split_into(buffer, tensors):
    """Copies block i of the 1-D `buffer` into tensors[i] (all of one shape)."""
    n = tensors[0].numel()
    for i, t in enumerate(tensors):
        t.copy_(buffer.narrow(0, i * n, n).view(_shape(t)))


# ---- collectives -----------------------------------------------------------------------------


@flow.no_grad()
def _all_reduce(tensor, reduce_op, op="all_reduce"):
    _check_tensor(op, "tensor", tensor)
    _ensure_initialized(op)
    if tensor.numel() == 0:  # nothing to move; every rank holds the same empty shape
        return
    _write_through(tensor, lambda t: _internal._comm_all_reduce(t, reduce_op))


def all_reduce(tensor):
    """Sums `tensor` over all ranks, in place: afterwards every rank holds the same sum."""
    _all_reduce(tensor, "sum")


@flow.no_grad()
def _reduce(tensor, dst, reduce_op, op="reduce"):
    _check_tensor(op, "tensor", tensor)
    dst = _check_rank_arg(op, "dst", dst, _world_size(op))
    if tensor.numel() == 0:
        return
    _write_through(tensor, lambda t: _internal._comm_reduce(t, dst, reduce_op))


def reduce(tensor, dst):
    """Sums `tensor` over all ranks into rank `dst`'s tensor; other ranks' tensors keep their
    values."""
    _reduce(tensor, dst, "sum")


@flow.no_grad()
def broadcast(tensor, src):
    """Copies rank `src`'s tensor into every rank's `tensor` (same shape and dtype on each)."""
    op = "broadcast"
    _check_tensor(op, "tensor", tensor)
    src = _check_rank_arg(op, "src", src, _world_size(op))
    if tensor.numel() == 0:
        return
    _write_through(tensor, lambda t: _internal._comm_broadcast(t, src))


@flow.no_grad()
def all_gather(tensor_list, tensor):
    """Fills tensor_list[r] with rank r's `tensor`, on every rank."""
    op = "all_gather"
    _check_tensor(op, "tensor", tensor)
    world_size = _world_size(op)
    _check_list(op, "tensor_list", tensor_list, world_size, tensor, "tensor")
    if tensor.numel() == 0:
        return
    out = _flat_buffer(tensor, world_size)
    _internal._comm_all_gather(out, _contiguous(tensor))
    _split_into(out, tensor_list)


@flow.no_grad()
def all_gather_into_tensor(output_tensor, input_tensor):
    """Gathers every rank's `input_tensor` into `output_tensor`, rank r's elements as the r-th
    block: output_tensor is (world_size * n, ...) or (world_size, n, ...) for an input (n, ...)."""
    op = "all_gather_into_tensor"
    _check_tensor(op, "input_tensor", input_tensor)
    world_size = _world_size(op)
    _check_like(op, "output_tensor", output_tensor, input_tensor, "input_tensor", same_shape=False)
    _check_numel(
        op,
        "output_tensor",
        output_tensor,
        world_size * input_tensor.numel(),
        f"world size {world_size} times the {input_tensor.numel()} of input_tensor",
    )
    if input_tensor.numel() == 0:
        return
    inp = _contiguous(input_tensor)
    _write_through(output_tensor, lambda out: _internal._comm_all_gather(out, inp))


@flow.no_grad()
def gather(tensor, gather_list=None, dst=0):
    """Fills gather_list[r] on rank `dst` with rank r's `tensor`; the other ranks pass no list."""
    op = "gather"
    _check_tensor(op, "tensor", tensor)
    world_size = _world_size(op)
    dst = _check_rank_arg(op, "dst", dst, world_size)
    if _internal._comm_rank() == dst:
        if gather_list is None:
            raise ValueError(f"{op}: gather_list must be given on the destination rank {dst}")
        _check_list(op, "gather_list", gather_list, world_size, tensor, "tensor")
    elif _list_given(gather_list):
        raise ValueError(
            f"{op}: gather_list must not be given on rank {_internal._comm_rank()}, which is not "
            f"the destination rank {dst}"
        )
    if tensor.numel() == 0:
        return
    if _internal._comm_rank() == dst:
        out = _flat_buffer(tensor, world_size)
        _internal._comm_gather(out, _contiguous(tensor), dst)
        _split_into(out, gather_list)
    else:
        _internal._comm_gather(None, _contiguous(tensor), dst)


@flow.no_grad()
def scatter(tensor, scatter_list=None, src=0):
    """Copies scatter_list[r] of rank `src` into rank r's `tensor`; the other ranks pass no list."""
    op = "scatter"
    _check_tensor(op, "tensor", tensor)
    world_size = _world_size(op)
    src = _check_rank_arg(op, "src", src, world_size)
    if _internal._comm_rank() == src:
        if scatter_list is None:
            raise ValueError(f"{op}: scatter_list must be given on the source rank {src}")
        _check_list(op, "scatter_list", scatter_list, world_size, tensor, "tensor")
    elif _list_given(scatter_list):
        raise ValueError(
            f"{op}: scatter_list must not be given on rank {_internal._comm_rank()}, which is not "
            f"the source rank {src}"
        )
    if tensor.numel() == 0:
        return
    inp = _concat(scatter_list) if _internal._comm_rank() == src else None
    _write_through(tensor, lambda out: _internal._comm_scatter(out, inp, src))


@flow.no_grad()
def _reduce_scatter(output, input_list, reduce_op, op="reduce_scatter"):
    _check_tensor(op, "output", output)
    world_size = _world_size(op)
    _check_list(op, "input_list", input_list, world_size, output, "output")
    if output.numel() == 0:
        return
    inp = _concat(input_list)
    _write_through(output, lambda out: _internal._comm_reduce_scatter(out, inp, reduce_op))


def reduce_scatter(output, input_list):
    """Rank r's `output` becomes the sum over all ranks of their input_list[r]."""
    _reduce_scatter(output, input_list, "sum")


@flow.no_grad()
def _reduce_scatter_tensor(output, input, reduce_op, op="reduce_scatter_tensor"):
    _check_tensor(op, "output", output)
    world_size = _world_size(op)
    _check_like(op, "input", input, output, "output", same_shape=False)
    _check_numel(
        op,
        "input",
        input,
        world_size * output.numel(),
        f"world size {world_size} times the {output.numel()} of output",
    )
    if output.numel() == 0:
        return
    inp = _contiguous(input)
    _write_through(output, lambda out: _internal._comm_reduce_scatter(out, inp, reduce_op))


def reduce_scatter_tensor(output_tensor, input_tensor):
    """Rank r's `output_tensor` becomes the sum over all ranks of the r-th block of their
    `input_tensor`, which holds world_size blocks of output_tensor's size."""
    _reduce_scatter_tensor(output_tensor, input_tensor, "sum")


@flow.no_grad()
def all_to_all(output_tensor_list, input_tensor_list):
    """input_tensor_list[j] of rank i lands in output_tensor_list[i] of rank j. Every tensor
    must have the same number of elements (uneven blocks are not supported yet)."""
    op = "all_to_all"
    world_size = _world_size(op)
    _check_list_length(op, "input_tensor_list", input_tensor_list, world_size)
    _check_list_length(op, "output_tensor_list", output_tensor_list, world_size)
    first = input_tensor_list[0]
    _check_tensor(op, "input_tensor_list[0]", first)
    for name, tensors in (
        ("input_tensor_list", input_tensor_list),
        ("output_tensor_list", output_tensor_list),
    ):
        for i, t in enumerate(tensors):
            _check_like(op, f"{name}[{i}]", t, first, "input_tensor_list[0]", same_shape=False)
    sizes = [t.numel() for t in list(input_tensor_list) + list(output_tensor_list)]
    if len(set(sizes)) != 1:
        raise NotImplementedError(
            f"{op}: tensors with different numbers of elements are not supported yet (got "
            f"{sizes[:world_size]} in input_tensor_list and {sizes[world_size:]} in "
            "output_tensor_list); every tensor must have the same number of elements"
        )
    if first.numel() == 0:
        return
    out = _flat_buffer(first, world_size)
    _internal._comm_all_to_all(out, _concat(input_tensor_list))
    _split_into(out, output_tensor_list)


def barrier():
    """Returns once every rank has called barrier() and the ops each queued before it ran."""
    _ensure_initialized("barrier")
    _internal._comm_barrier()
    _internal.synchronize()


# ---- point to point --------------------------------------------------------------------------

# With send_meta, a fixed-size int64 header goes ahead of the data: a magic number (so a recv
# that expects a header and gets data says so), ndim, dtype, device type, then the dims.
_META_MAGIC = 0x6F6E65666C6F77  # "oneflow"
_META_MAX_DIMS = 32
_META_LEN = 4 + _META_MAX_DIMS
_META_DTYPES = (
    "bool",
    "uint8",
    "int8",
    "int16",
    "int32",
    "int64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
)
_META_DEVICES = ("cpu", "cuda")
_TAG = 0


def _encode_meta(op, tensor):
    name = _dtype_name(tensor.dtype)
    if name not in _META_DTYPES:
        raise ValueError(f"{op}: cannot send the meta of a {name} tensor")
    if tensor.ndim > _META_MAX_DIMS:
        raise ValueError(
            f"{op}: cannot send the meta of a {tensor.ndim}-D tensor (at most {_META_MAX_DIMS} "
            "dims); pass send_meta=False and give the shape to recv"
        )
    dims = list(_shape(tensor))
    header = [
        _META_MAGIC,
        len(dims),
        _META_DTYPES.index(name),
        _META_DEVICES.index(tensor.device.type),
    ]
    header += dims + [0] * (_META_MAX_DIMS - len(dims))
    return flow.tensor(header, dtype=flow.int64)


def _decode_meta(op, src, header):
    values = header.tolist()
    magic, ndim, dtype_code, device_code = values[:4]
    if (
        magic != _META_MAGIC
        or not 0 <= ndim <= _META_MAX_DIMS
        or not 0 <= dtype_code < len(_META_DTYPES)
        or not 0 <= device_code < len(_META_DEVICES)
    ):
        raise RuntimeError(
            f"{op}: the message from rank {src} is not a tensor's meta; if it was sent with "
            "send_meta=False, pass shape, dtype and device to recv"
        )
    shape = tuple(values[4 : 4 + ndim])
    return shape, getattr(flow, _META_DTYPES[dtype_code]), flow.device(_META_DEVICES[device_code])


@flow.no_grad()
def send(tensor, dst, send_meta=True):
    """Sends `tensor` to rank `dst`. With send_meta its shape, dtype and device type go first,
    so the receiver's recv(src) needs no shape; without, recv must be given them."""
    op = "send"
    _check_tensor(op, "tensor", tensor)
    dst = _check_rank_arg(op, "dst", dst, _world_size(op))
    if dst == _internal._comm_rank():
        raise ValueError(f"{op}: invalid destination rank {dst}: a process cannot send to itself")
    if send_meta:
        _internal._comm_send(_encode_meta(op, tensor), dst, _TAG)
    if tensor.numel() > 0:
        _internal._comm_send(_contiguous(tensor), dst, _TAG)


@flow.no_grad()
def recv(src, shape=None, dtype=None, device=None, *, out=None):
    """Receives a tensor from rank `src`. Give all of shape, dtype and device when the sender
    used send_meta=False, none of them when it sent the meta. With `out` the data lands there
    (and out is returned), else in a new tensor."""
    op = "recv"
    if src is None:
        raise NotImplementedError(f"{op}: receiving from any rank (src=None) is not supported")
    given = [shape is not None, dtype is not None, device is not None]
    if any(given) and not all(given):
        raise ValueError(
            f"{op}: give all or none of shape, dtype and device (none when the sender used "
            "send_meta=True)"
        )
    src = _check_rank_arg(op, "src", src, _world_size(op))
    if src == _internal._comm_rank():
        raise ValueError(f"{op}: invalid source rank {src}: a process cannot receive from itself")
    if out is not None:
        _check_tensor(op, "out", out)
    if all(given):
        shape = (shape,) if isinstance(shape, int) else tuple(int(d) for d in shape)
        if not isinstance(dtype, flow.dtype):
            raise TypeError(
                f"{op}: expected dtype to be a oneflow.dtype, got {type(dtype).__name__}"
            )
        device = flow.device(device) if isinstance(device, str) else device
        if out is not None and (_shape(out) != shape or out.dtype != dtype):
            raise ValueError(
                f"{op}: out has shape {_shape(out)} and dtype {_dtype_name(out.dtype)}, but shape "
                f"{shape} and dtype {_dtype_name(dtype)} were given"
            )
    else:
        header = flow.empty(_META_LEN, dtype=flow.int64)
        _internal._comm_recv(header, src, _TAG)
        shape, dtype, device = _decode_meta(op, src, header)
        if out is not None and (_shape(out) != shape or out.dtype != dtype):
            # Take the data off the wire all the same, so the next recv from src is in step.
            drained = flow.empty(shape, dtype=dtype, device=out.device)
            if drained.numel() > 0:
                _internal._comm_recv(drained, src, _TAG)
            raise RuntimeError(
                f"{op}: rank {src} sent a tensor of shape {shape} and dtype "
                f"{_dtype_name(dtype)}, but out has shape {_shape(out)} and dtype "
                f"{_dtype_name(out.dtype)}"
            )
    target = out if out is not None else flow.empty(shape, dtype=dtype, device=device)
    if target.numel() > 0:
        _write_through(target, lambda t: _internal._comm_recv(t, src, _TAG))
    return target
