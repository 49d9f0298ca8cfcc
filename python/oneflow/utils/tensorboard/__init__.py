"""oneflow.utils.tensorboard (torch.utils.tensorboard): SummaryWriter writes TensorBoard event
files itself, without the tensorboard package: a TFRecord file of Event protocol buffers (each
record framed by its length and masked CRC-32C checksums), encoded here field by field.

Written: scalars (add_scalar, add_scalars into per-tag subdirectories as PyTorch), histograms
(add_histogram, add_histogram_raw), text (add_text, the text plugin's format) and custom
scalars' raw values; flush / close / context manager. Images, audio, graphs, embeddings and
hparams are not written (they raise NotImplementedError)."""

import os
import socket
import struct
import time

import numpy as np

__all__ = ["SummaryWriter"]

# ---- CRC-32C (Castagnoli), as TFRecord frames records --------------------------------------

_CRC_TABLE = []
for _i in range(256):
    _c = _i
    for _ in range(8):
        _c = (_c >> 1) ^ 0x82F63B78 if _c & 1 else _c >> 1
    _CRC_TABLE.append(_c)


def crc32c(data):
    crc = 0xFFFFFFFF
    table = _CRC_TABLE
    for b in data:
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def _masked_crc(data):
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def _record(data):
    header = struct.pack("<Q", len(data))
    return (
        header
        + struct.pack("<I", _masked_crc(header))
        + data
        + struct.pack("<I", _masked_crc(data))
    )


# ---- protocol buffer encoding (the few field types the event protos use) ---------------------


def _varint(n):
    out = bytearray()
    n &= (1 << 64) - 1
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _key(field, wire):
    return _varint((field << 3) | wire)


def _f_varint(field, n):
    return _key(field, 0) + _varint(int(n))


def _f_double(field, x):
    return _key(field, 1) + struct.pack("<d", float(x))


def _f_float(field, x):
    return _key(field, 5) + struct.pack("<f", float(x))


def _f_bytes(field, b):
    if isinstance(b, str):
        b = b.encode()
    return _key(field, 2) + _varint(len(b)) + b


def _f_packed_doubles(field, xs):
    return _f_bytes(field, b"".join(struct.pack("<d", float(x)) for x in xs))


def _event(wall_time, step=None, summary=None, file_version=None):
    out = _f_double(1, wall_time)
    if step is not None:
        out += _f_varint(2, step)
    if file_version is not None:
        out += _f_bytes(3, file_version)
    if summary is not None:
        out += _f_bytes(5, summary)
    return out


def _summary_value(tag, payload_field, payload, metadata=None):
    value = _f_bytes(1, tag)
    if metadata is not None:
        value += _f_bytes(9, metadata)
    value += payload_field(payload)
    return _f_bytes(1, value)  # Summary.value (repeated)


def _scalar_value(tag, x):
    return _summary_value(tag, lambda v: _f_float(2, v), x)


def _histogram_proto(mn, mx, num, total, sum_squares, limits, counts):
    return (
        _f_double(1, mn)
        + _f_double(2, mx)
        + _f_double(3, num)
        + _f_double(4, total)
        + _f_double(5, sum_squares)
        + _f_packed_doubles(6, limits)
        + _f_packed_doubles(7, counts)
    )


def _text_value(tag, text):
    # SummaryMetadata{plugin_data{plugin_name: "text"}} and a TensorProto of one DT_STRING
    metadata = _f_bytes(1, _f_bytes(1, "text"))
    shape = _f_bytes(2, _f_varint(1, 1))  # TensorShapeProto{dim{size: 1}}
    tensor = _f_varint(1, 7) + _f_bytes(2, shape) + _f_bytes(8, text)  # dtype DT_STRING = 7
    return _summary_value(tag, lambda t: _f_bytes(8, t), tensor, metadata)


def _to_number(v):
    if hasattr(v, "item"):
        return float(v.item())
    return float(v)


def _to_numpy(values):
    if hasattr(values, "detach"):
        values = values.detach()
    if hasattr(values, "numpy"):
        values = values.cpu().float().numpy() if hasattr(values, "cpu") else values.numpy()
    return np.asarray(values, dtype=np.float64)


# ---- the writer --------------------------------------------------------------------------------


class _EventFile:
    _counter = 0

    def __init__(self, log_dir, filename_suffix=""):
        os.makedirs(log_dir, exist_ok=True)
        _EventFile._counter += 1
        name = (
            f"events.out.tfevents.{int(time.time()):010d}.{socket.gethostname()}."
            f"{os.getpid()}.{_EventFile._counter}{filename_suffix}"
        )
        self.path = os.path.join(log_dir, name)
        self.file = open(self.path, "wb")
        self.write(_event(time.time(), file_version="brain.Event:2"))
        self.flush()

    def write(self, event):
        self.file.write(_record(event))

    def flush(self):
        self.file.flush()

    def close(self):
        if not self.file.closed:
            self.file.flush()
            self.file.close()


class SummaryWriter:
    """Writes entries to event files in `log_dir` for TensorBoard (default
    runs/<date>_<host><comment>, as PyTorch)."""

    def __init__(
        self,
        log_dir=None,
        comment="",
        purge_step=None,
        max_queue=10,
        flush_secs=120,
        filename_suffix="",
    ):
        if log_dir is None:
            current_time = time.strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", current_time + "_" + socket.gethostname() + comment)
        self.log_dir = str(log_dir)
        self.filename_suffix = filename_suffix
        self.max_queue, self.flush_secs = max_queue, flush_secs
        self._file = _EventFile(self.log_dir, filename_suffix)
        self._scalar_writers = {}
        self._pending, self._last_flush = 0, time.time()

    def get_logdir(self):
        return self.log_dir

    def _write(self, summary, global_step, walltime, file=None):
        walltime = time.time() if walltime is None else walltime
        step = None if global_step is None else int(_to_number(global_step))
        (file or self._file).write(_event(walltime, step, summary))
        self._pending += 1
        if self._pending >= self.max_queue or time.time() - self._last_flush >= self.flush_secs:
            self.flush()

    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None, new_style=False,
                   double_precision=False):  # fmt: skip
        self._write(_scalar_value(tag, _to_number(scalar_value)), global_step, walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None):
        """Each scalar into log_dir/<main_tag>_<tag>, under the tag main_tag (PyTorch's layout)."""
        for tag, value in tag_scalar_dict.items():
            key = main_tag.replace("/", "_") + "_" + tag
            writer = self._scalar_writers.get(key)
            if writer is None:
                writer = _EventFile(os.path.join(self.log_dir, key), self.filename_suffix)
                self._scalar_writers[key] = writer
            self._write(_scalar_value(main_tag, _to_number(value)), global_step, walltime, writer)

    def add_histogram(self, tag, values, global_step=None, bins="tensorflow", walltime=None,
                      max_bins=None):  # fmt: skip
        v = _to_numpy(values).ravel()
        if v.size == 0:
            raise ValueError("The input has no element.")
        if isinstance(bins, str) and bins == "tensorflow":
            bins = _tf_bucket_limits(v)
        counts, edges = np.histogram(v, bins=bins)
        limits = edges[1:]
        proto = _histogram_proto(v.min(), v.max(), v.size, v.sum(), (v * v).sum(), limits, counts)
        self._write(_summary_value(tag, lambda p: _f_bytes(5, p), proto), global_step, walltime)

    def add_histogram_raw(self, tag, min, max, num, sum, sum_squares, bucket_limits,
                          bucket_counts, global_step=None, walltime=None):  # fmt: skip
        if len(bucket_limits) != len(bucket_counts):
            raise ValueError("len(bucket_limits) != len(bucket_counts), see the document.")
        proto = _histogram_proto(min, max, num, sum, sum_squares, bucket_limits, bucket_counts)
        self._write(_summary_value(tag, lambda p: _f_bytes(5, p), proto), global_step, walltime)

    def add_text(self, tag, text_string, global_step=None, walltime=None):
        self._write(_text_value(tag + "/text_summary", text_string), global_step, walltime)

    def _not_written(self, *args, **kwargs):
        raise NotImplementedError(
            "SummaryWriter: only scalars, histograms and text are written by this build"
        )

    add_image = add_images = add_figure = add_video = add_audio = _not_written
    add_graph = add_embedding = add_hparams = add_mesh = add_pr_curve = _not_written

    def flush(self):
        self._file.flush()
        for w in self._scalar_writers.values():
            w.flush()
        self._pending, self._last_flush = 0, time.time()

    def close(self):
        self._file.close()
        for w in self._scalar_writers.values():
            w.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _tf_bucket_limits(v):
    """TensorFlow's default histogram buckets: powers of 1.1 from 1e-12 both ways, cut to the
    data's range."""
    pos = [1e-12]
    while pos[-1] < 1e20:
        pos.append(pos[-1] * 1.1)
    edges = np.array([-x for x in reversed(pos)] + [0.0] + pos)
    lo = np.searchsorted(edges, v.min(), side="left")
    hi = np.searchsorted(edges, v.max(), side="right")
    edges = edges[max(lo - 1, 0) : min(hi + 1, len(edges))]
    if len(edges) < 2:
        edges = np.array([v.min() - 0.5, v.max() + 0.5])
    return edges
