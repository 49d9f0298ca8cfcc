"""OneFlow's data-pipeline modules: OFRecord readers and decoders and the image transforms.

An OFRecord file is a sequence of records, each an 8-byte little-endian length and a serialized
OFRecord (a map from feature names to lists of bytes, floats, doubles, int32s or int64s; the
schema is `oneflow/core/data/ofrecord.proto`, wire-compatible with OneFlow's). Files are read,
and records parsed and images decoded (libjpeg, libpng), in the C++ core
(`core/data/ofrecord.{h,cpp}`, `image_codec.cpp`).

What OneFlow keeps in "tensor buffers" (a batch of records, of byte strings, of images of
different sizes) is a `TensorBuffer` here: a host-side batch of N items, each a CPU tensor (a
record: its serialized bytes). The decoders that give fixed shapes return ordinary tensors.

Inside `nn.Graph.build()` (OneFlow's graph data loaders) each call runs on the host with the
graph's recording paused and is noted in the plan's `HostProgram`; the tensors it returns are
captured by reference where the program's kernels read them, and before each replay the host
program runs again and copies the new batch into them. A batch whose shapes differ from the
traced ones raises RuntimeError; the pipeline's tensor inputs must come from the pipeline
(readers, decoders, `CoinFlip`).
"""

import math
import os
import random
import threading
import warnings

import numpy as np

import oneflow
import oneflow._oneflow_internal as _internal
from oneflow._oneflow_internal import Tensor, _data, _graph_tracing
from oneflow.nn.modules.module import Module

__all__ = [
    "COCOReader",
    "CropMirrorNormalize",
    "ImageBatchAlign",
    "ImageDecode",
    "ImageFlip",
    "ImageNormalize",
    "ImageResize",
    "OFRecordBytesDecoder",
    "OFRecordImageDecoder",
    "OFRecordImageDecoderRandomCrop",
    "OFRecordRawDecoder",
    "OFRecordReader",
    "TensorBuffer",
]


def _eager_only(op):
    if _graph_tracing():
        raise RuntimeError(
            f"{op}: call the module (not its forward) inside nn.Graph.build(), so that the "
            "graph replays it on the host at each call"
        )


class _Programs(threading.local):
    def __init__(self):
        self.stack = []


# Per thread, the host programs of the graphs being traced, innermost last (nn/graph/graph.py).
_tracing = _Programs()


class HostProgram:
    """The data-pipeline calls of one traced plan, replayed on the host before the plan."""

    def __init__(self):
        self.steps = []  # (module, args, kwargs with references, traced outputs)
        self._made = {}  # id(object) -> (step, position) of the objects the steps returned

    def _ref(self, v, op):
        if isinstance(v, (Tensor, TensorBuffer)):
            where = self._made.get(id(v))
            if where is None:
                raise RuntimeError(
                    f"{op}: inside nn.Graph.build() the data pipeline's tensor inputs must come "
                    "from the pipeline (readers, decoders, CoinFlip), not from the graph's "
                    "kernels"
                )
            return _Ref(*where)
        if isinstance(v, (list, tuple)):
            return type(v)(self._ref(x, op) for x in v)
        return v

    def call(self, module, args, kwargs):
        op = type(module).__name__
        ref_args = tuple(self._ref(a, op) for a in args)
        ref_kwargs = {k: self._ref(v, op) for k, v in kwargs.items()}
        _internal._graph_trace_pause()
        try:
            out = Module.__call__(module, *args, **kwargs)
        finally:
            _internal._graph_trace_resume()
        flat = list(out) if isinstance(out, tuple) else [out]
        for j, o in enumerate(flat):
            if o is not None:
                self._made[id(o)] = (len(self.steps), j)
        self.steps.append((module, ref_args, ref_kwargs, flat))
        return out

    def made(self, t):
        """Whether a step returned `t`."""
        return id(t) in self._made

    def run(self):
        """Before a replay: every call again; new tensors are copied into the traced ones."""
        results = []

        def resolve(v):
            if isinstance(v, _Ref):
                return results[v.step][v.index]
            if isinstance(v, (list, tuple)):
                return type(v)(resolve(x) for x in v)
            return v

        for module, ref_args, ref_kwargs, traced in self.steps:
            out = module(
                *[resolve(a) for a in ref_args], **{k: resolve(v) for k, v in ref_kwargs.items()}
            )
            flat = list(out) if isinstance(out, tuple) else [out]
            for new, old in zip(flat, traced):
                if isinstance(old, Tensor):
                    if tuple(new.shape) != tuple(old.shape) or new.dtype != old.dtype:
                        raise RuntimeError(
                            f"nn.Graph: {type(module).__name__} gave a {new.dtype} tensor of "
                            f"shape {tuple(new.shape)} where the traced call gave "
                            f"{old.dtype} {tuple(old.shape)}; a compiled graph's batches keep "
                            "their shapes"
                        )
                    with oneflow.no_grad():
                        old.copy_(new)
            results.append(flat)


class _Ref:
    __slots__ = ("step", "index")

    def __init__(self, step, index):
        self.step, self.index = step, index


class DataModule(Module):
    """A data-pipeline module: inside a traced build() its calls go to the plan's host program."""

    def __call__(self, *args, **kwargs):
        if _graph_tracing() and _tracing.stack:
            return _tracing.stack[-1].call(self, args, kwargs)
        return super().__call__(*args, **kwargs)


class TensorBuffer:
    """A batch of N items of different shapes, on the host (OneFlow's tensor buffer of shape
    (N,)): `kind` says what the items are ("ofrecord": serialized records as bytes; "bytes":
    uint8 1-D tensors; "image": HxWxC tensors)."""

    def __init__(self, items, kind):
        self._items = list(items)
        self.kind = kind

    @property
    def shape(self):
        return oneflow.Size([len(self._items)])

    def __len__(self):
        return len(self._items)

    def _items_here(self):
        # Inside a traced build() the items belong to the host program: kernels using them
        # would read the traced batch at every replay.
        if _graph_tracing():
            raise RuntimeError(
                "TensorBuffer: inside nn.Graph.build() a buffer's items can only be passed to "
                "the data pipeline's modules (decode them to tensors with those)"
            )
        return self._items

    def __getitem__(self, i):
        return self._items_here()[i]

    def __iter__(self):
        return iter(self._items_here())

    def numpy(self):
        """The items as NumPy arrays (records: their bytes)."""
        return [x.numpy() if isinstance(x, Tensor) else x for x in self._items_here()]

    def __repr__(self):
        return f"TensorBuffer(kind={self.kind!r}, size={len(self._items)})"


def _expect_buffer(x, op, kinds):
    if not isinstance(x, TensorBuffer) or x.kind not in kinds:
        got = x.kind if isinstance(x, TensorBuffer) else type(x).__name__
        raise TypeError(f"{op}: expected a TensorBuffer of {' or '.join(kinds)}, got {got}")


def _seed_or_random(seed):
    """None or -1: a fresh seed; any other int as its 64-bit pattern."""
    if seed is None or seed == -1:
        return random.SystemRandom().getrandbits(63)
    return int(seed) & ((1 << 64) - 1)


def _part_files(ofrecord_dir, data_part_num, prefix, suffix_length):
    names = []
    for i in range(data_part_num):
        index = str(i)
        names.append(
            os.path.join(ofrecord_dir, prefix + "0" * max(suffix_length - len(index), 0) + index)
        )
    return names


def _rank_block(n, rank, world):
    """Rank r's contiguous block of n items, the first n % world ranks one longer."""
    base, extra = divmod(n, world)
    start = rank * base + min(rank, extra)
    return start, start + base + (1 if rank < extra else 0)


class OFRecordReader(DataModule):
    """Reads batches of records from `data_part_num` part files in `ofrecord_dir` (named
    `part_name_prefix` + the index zero-padded to `part_name_suffix_length`), epoch after epoch
    without end. With several processes each rank reads its own contiguous block of files.
    `random_shuffle` passes the records through a buffer of `shuffle_buffer_size`;
    `shuffle_after_epoch` visits the files in a new order each epoch (the first in the natural
    order). `random_seed` -1 draws a fresh seed. forward() returns a TensorBuffer of batch_size
    records."""

    def __init__(
        self,
        ofrecord_dir,
        batch_size=1,
        data_part_num=1,
        part_name_prefix="part-",
        part_name_suffix_length=-1,
        random_shuffle=False,
        shuffle_buffer_size=1024,
        shuffle_after_epoch=False,
        random_seed=-1,
        device=None,
        placement=None,
        sbp=None,
        name=None,
    ):
        super().__init__()
        if name is not None:
            warnings.warn("OFRecordReader: the name argument is deprecated", stacklevel=2)
        if placement is not None or sbp is not None:
            raise NotImplementedError(
                "OFRecordReader: global readers (placement/sbp) are not supported yet"
            )
        if device is not None and oneflow.device(device).type != "cpu":
            raise NotImplementedError("OFRecordReader: records are read on the CPU")
        if data_part_num < 1:
            raise ValueError(f"OFRecordReader: data_part_num must be positive, got {data_part_num}")
        rank, world = oneflow.env.get_rank(), oneflow.env.get_world_size()
        if world > data_part_num:
            raise ValueError(
                f"OFRecordReader: {world} processes need at least as many part files, got "
                f"data_part_num={data_part_num}"
            )
        files = _part_files(ofrecord_dir, data_part_num, part_name_prefix, part_name_suffix_length)
        lo, hi = _rank_block(len(files), rank, world)
        self.batch_size = batch_size
        self.files = files[lo:hi]
        self._reader = _data.OFRecordReader(
            self.files,
            batch_size,
            bool(random_shuffle),
            shuffle_buffer_size,
            bool(shuffle_after_epoch),
            _seed_or_random(random_seed),
        )

    def forward(self):
        _eager_only("OFRecordReader")
        return TensorBuffer(self._reader.next_batch(), "ofrecord")


class OFRecordRawDecoder(DataModule):
    """Feature `blob_name` of each record as a tensor of shape (N, *shape) in `dtype` (int8,
    uint8, int32, int64, float32, float64), converted from the stored list (a bytes feature
    gives its bytes). A different value count is an error unless `truncate` (extra values
    dropped, missing ones zero) or `dim1_varying_length` (fewer values, zero filled);
    `auto_zero_padding` is the old name of `truncate`."""

    def __init__(
        self,
        blob_name,
        shape,
        dtype,
        dim1_varying_length=False,
        truncate=False,
        auto_zero_padding=False,
        name=None,
    ):
        super().__init__()
        self.blob_name = blob_name
        self.shape = tuple(int(s) for s in shape)
        if any(s < 0 for s in self.shape):
            raise ValueError(f"OFRecordRawDecoder: shape must not be negative, got {self.shape}")
        self.dtype = dtype
        self.dim1_varying_length = bool(dim1_varying_length)
        self.truncate = bool(truncate or auto_zero_padding)

    def forward(self, records):
        _eager_only("OFRecordRawDecoder")
        _expect_buffer(records, "OFRecordRawDecoder", ("ofrecord",))
        return _data.decode_raw(
            list(records),
            self.blob_name,
            self.dtype,
            list(self.shape),
            self.truncate,
            False,
            self.dim1_varying_length,
        )


class OFRecordBytesDecoder(DataModule):
    """The bytes of feature `blob_name` of each record: a TensorBuffer of uint8 1-D tensors."""

    def __init__(self, blob_name, name=None):
        super().__init__()
        self.blob_name = blob_name

    def forward(self, records):
        _eager_only("OFRecordBytesDecoder")
        _expect_buffer(records, "OFRecordBytesDecoder", ("ofrecord",))
        raw = _data.decode_bytes(list(records), self.blob_name)
        return TensorBuffer(
            (oneflow.tensor(np.frombuffer(b, dtype=np.uint8).copy()) for b in raw), "bytes"
        )


def _check_color_space(op, color_space):
    if color_space not in ("BGR", "RGB", "GRAY"):
        raise ValueError(f"{op}: color_space must be BGR, RGB or GRAY, got {color_space!r}")


class OFRecordImageDecoder(DataModule):
    """Decodes the JPEG or PNG image in feature `blob_name` of each record: a TensorBuffer of
    uint8 HxWxC images in `color_space` (BGR, RGB: C = 3; GRAY: C = 1)."""

    def __init__(self, blob_name, color_space="BGR", name=None):
        super().__init__()
        _check_color_space("OFRecordImageDecoder", color_space)
        self.blob_name = blob_name
        self.color_space = color_space

    def forward(self, records):
        _eager_only("OFRecordImageDecoder")
        _expect_buffer(records, "OFRecordImageDecoder", ("ofrecord",))
        raw = _data.decode_bytes(list(records), self.blob_name)
        return TensorBuffer((_data.decode_image(b, self.color_space) for b in raw), "image")


def random_crop_window(rng, height, width, num_attempts, area, aspect_ratio):
    """(y, x, h, w) of a random crop: an area fraction in `area` and a width/height ratio in
    `aspect_ratio` (drawn log-uniformly), tried `num_attempts` times, then the largest window
    with a ratio in range, scaled to at most the largest area."""
    r_min, r_max = aspect_ratio
    a_min, a_max = area
    max_w = max(1, int(height * r_max))
    max_h = max(1, int(width / r_min))
    total = height * width
    min_area = total * a_min
    found = None
    if height * max_w < min_area:
        found = (height, max_w)
    elif width * max_h < min_area:
        found = (max_h, width)
    else:
        for _ in range(num_attempts):
            scale = rng.uniform(a_min, a_max)
            ratio = math.exp(rng.uniform(math.log(r_min), math.log(r_max)))
            w = max(1, round(math.sqrt(scale * total * ratio)))
            h = max(1, round(math.sqrt(scale * total / ratio)))
            if w <= width and h <= height and r_min <= w / h <= r_max:
                found = (h, w)
                break
    if found is None:
        h, w = height, width
        if width / height > r_max:
            h, w = height, max_w
        elif width / height < r_min:
            h, w = max_h, width
        s = min(1.0, a_max * total / (h * w))
        found = (max(1, int(h * math.sqrt(s))), max(1, int(w * math.sqrt(s))))
    h, w = min(found[0], height), min(found[1], width)
    y = rng.randint(0, height - h)
    x = rng.randint(0, width - w)
    return y, x, h, w


class OFRecordImageDecoderRandomCrop(DataModule):
    """OFRecordImageDecoder followed by a random crop per image (see random_crop_window), each
    batch slot with its own generator from `random_seed` (None: a fresh seed)."""

    def __init__(
        self,
        blob_name,
        color_space="BGR",
        num_attempts=10,
        random_seed=None,
        random_area=(0.08, 1.0),
        random_aspect_ratio=(0.75, 1.333333),
        name=None,
    ):
        super().__init__()
        _check_color_space("OFRecordImageDecoderRandomCrop", color_space)
        if num_attempts < 1:
            raise ValueError("OFRecordImageDecoderRandomCrop: num_attempts must be positive")
        a, r = tuple(random_area), tuple(random_aspect_ratio)
        if not (len(a) == 2 and 0 < a[0] <= a[1] <= 1):
            raise ValueError(
                f"OFRecordImageDecoderRandomCrop: random_area must be 0 < lo <= hi <= 1, got {a}"
            )
        if not (len(r) == 2 and 0 < r[0] <= r[1]):
            raise ValueError(
                f"OFRecordImageDecoderRandomCrop: random_aspect_ratio must be 0 < lo <= hi, got {r}"
            )
        self.blob_name = blob_name
        self.color_space = color_space
        self.num_attempts = num_attempts
        self.random_area, self.random_aspect_ratio = a, r
        self._seed = _seed_or_random(random_seed)
        self._rngs = []

    def forward(self, records):
        _eager_only("OFRecordImageDecoderRandomCrop")
        _expect_buffer(records, "OFRecordImageDecoderRandomCrop", ("ofrecord",))
        raw = _data.decode_bytes(list(records), self.blob_name)
        while len(self._rngs) < len(raw):
            self._rngs.append(random.Random(self._seed * 1000003 + len(self._rngs)))
        out = []
        for rng, b in zip(self._rngs, raw):
            img = _data.decode_image(b, self.color_space)
            y, x, h, w = random_crop_window(
                rng,
                img.shape[0],
                img.shape[1],
                self.num_attempts,
                self.random_area,
                self.random_aspect_ratio,
            )
            out.append(img[y : y + h, x : x + w].contiguous())
        return TensorBuffer(out, "image")


def _per_channel(op, values, channels, name):
    v = [float(x) for x in np.asarray(values, dtype=np.float64).reshape(-1)]
    if len(v) == 1:
        v = v * channels
    if len(v) != channels:
        raise ValueError(f"{op}: {name} needs 1 or {channels} values, got {len(v)}")
    return v


class CropMirrorNormalize(DataModule):
    """Crops each image to (crop_h, crop_w) at relative position (crop_pos_y, crop_pos_x),
    mirrors it horizontally where `mirror` (int8, one per image) is nonzero, and returns
    (x - mean) / std per channel as float32 in `output_layout` NCHW or NHWC. The input is a
    uint8 NHWC tensor (crop 0: the full size) or a TensorBuffer of images."""

    def __init__(
        self,
        color_space="BGR",
        output_layout="NCHW",
        crop_h=0,
        crop_w=0,
        crop_pos_y=0.5,
        crop_pos_x=0.5,
        mean=(0.0,),
        std=(1.0,),
        output_dtype=oneflow.float,
    ):
        super().__init__()
        _check_color_space("CropMirrorNormalize", color_space)
        if output_layout not in ("NCHW", "NHWC"):
            raise ValueError(
                f"CropMirrorNormalize: output_layout must be NCHW or NHWC, got {output_layout!r}"
            )
        if output_dtype != oneflow.float32:
            raise NotImplementedError(
                f"CropMirrorNormalize: output_dtype must be float32, got {output_dtype}"
            )
        self.channels = 1 if color_space == "GRAY" else 3
        self.output_layout = output_layout
        self.crop_h, self.crop_w = int(crop_h), int(crop_w)
        self.crop_pos_y, self.crop_pos_x = float(crop_pos_y), float(crop_pos_x)
        for name, v in (("crop_pos_y", self.crop_pos_y), ("crop_pos_x", self.crop_pos_x)):
            if not 0.0 <= v <= 1.0:
                raise ValueError(f"CropMirrorNormalize: {name} must be in [0, 1], got {v}")
        if self.crop_h < 0 or self.crop_w < 0:
            raise ValueError("CropMirrorNormalize: crop_h and crop_w must not be negative")
        self.mean = _per_channel("CropMirrorNormalize", mean, self.channels, "mean")
        self.std = _per_channel("CropMirrorNormalize", std, self.channels, "std")

    def _crop(self, img, h, w, flip):
        H, W = img.shape[0], img.shape[1]
        y = int(np.float32(H - h) * np.float32(self.crop_pos_y))
        x = int(np.float32(W - w) * np.float32(self.crop_pos_x))
        out = img[y : y + h, x : x + w]
        return out.flip(1) if flip else out

    def forward(self, input, mirror=None):
        op = "CropMirrorNormalize"
        _eager_only(op)
        images = list(input) if isinstance(input, TensorBuffer) else None
        if images is None:
            if not isinstance(input, Tensor) or input.dtype != oneflow.uint8 or input.ndim != 4:
                raise NotImplementedError(
                    f"{op}: expected a uint8 NHWC tensor or a TensorBuffer of images, got "
                    f"{getattr(input, 'dtype', type(input).__name__)}"
                )
            n, H, W, C = input.shape
            if self.crop_h == 0 or self.crop_w == 0:  # OneFlow's rule: the full image
                h, w = H, W
            else:
                h, w = min(self.crop_h, H), min(self.crop_w, W)
        else:
            _expect_buffer(input, op, ("image",))
            n = len(images)
            if self.crop_h == 0 or self.crop_w == 0:
                raise ValueError(f"{op}: a TensorBuffer of images needs crop_h and crop_w")
            h, w = self.crop_h, self.crop_w
            for i, img in enumerate(images):
                if img.ndim != 3 or img.shape[2] != self.channels:
                    raise ValueError(
                        f"{op}: color_space gives {self.channels} channels, image {i} has shape "
                        f"{tuple(img.shape)}"
                    )
                if img.shape[0] < h or img.shape[1] < w:
                    raise ValueError(
                        f"{op}: image {i} of shape {tuple(img.shape)} is smaller than the crop "
                        f"({h}, {w})"
                    )
            C = images[0].shape[2] if images else self.channels
        if C != self.channels:
            raise ValueError(
                f"{op}: color_space gives {self.channels} channels, the images have {C}"
            )
        flips = [False] * n
        if mirror is not None:
            m = (
                mirror.numpy().reshape(-1)
                if isinstance(mirror, Tensor)
                else np.asarray(mirror).reshape(-1)
            )
            if len(m) != n:
                raise ValueError(f"{op}: mirror has {len(m)} values for {n} images")
            flips = [bool(v) for v in m]
        if images is None:
            crops = [self._crop(input[i], h, w, flips[i]) for i in range(n)]
        else:
            crops = [self._crop(img, h, w, f) for img, f in zip(images, flips)]
        if not crops:
            batch = oneflow.empty(0, h, w, C, dtype=oneflow.float32)
        else:
            batch = oneflow.stack(crops).to(oneflow.float32)
        mean = oneflow.tensor(self.mean, dtype=oneflow.float32)
        with np.errstate(divide="ignore"):  # std 0 gives inf, as OneFlow's kernel
            inv = oneflow.tensor(np.float32(1) / np.float32(self.std), dtype=oneflow.float32)
        out = (batch - mean) * inv
        if self.output_layout == "NCHW":
            out = out.permute(0, 3, 1, 2).contiguous()
        return out


# ---- nn.image ----


class ImageDecode(DataModule):
    """Decodes a TensorBuffer of encoded JPEG/PNG bytes into HxWxC images in `color_space`,
    of dtype uint8 or float32."""

    def __init__(self, dtype=oneflow.uint8, color_space="BGR"):
        super().__init__()
        _check_color_space("image.decode", color_space)
        if dtype not in (oneflow.uint8, oneflow.float32):
            raise NotImplementedError(f"image.decode: dtype must be uint8 or float32, got {dtype}")
        self.dtype, self.color_space = dtype, color_space

    def forward(self, input):
        _eager_only("image.decode")
        _expect_buffer(input, "image.decode", ("bytes",))
        out = []
        for b in input:
            img = _data.decode_image(b.numpy().tobytes(), self.color_space)
            out.append(img if self.dtype == oneflow.uint8 else img.to(self.dtype))
        return TensorBuffer(out, "image")


class ImageFlip(DataModule):
    """Flips each image of a TensorBuffer by its code: 0 none, 1 horizontal, 16 (or 2)
    vertical, 17 (or 3) both."""

    def forward(self, images, flip_code):
        op = "image.flip"
        _eager_only(op)
        _expect_buffer(images, op, ("image",))
        codes = (
            flip_code.numpy().reshape(-1)
            if isinstance(flip_code, Tensor)
            else np.asarray(flip_code).reshape(-1)
        )
        if len(codes) != len(images):
            raise ValueError(f"{op}: {len(codes)} flip codes for {len(images)} images")
        out = []
        for img, code in zip(images, codes):
            code = int(code)
            if code not in (0, 1, 2, 3, 16, 17):
                raise ValueError(f"{op}: unknown flip code {code} (0, 1, 16, 17)")
            dims = []
            if code in (16, 17, 2, 3):
                dims.append(0)
            if code in (1, 17, 3):
                dims.append(1)
            out.append(img.flip(dims).contiguous() if dims else img)
        return TensorBuffer(out, "image")


class ImageNormalize(DataModule):
    """(x - mean[c]) / std[c] for each float image of a TensorBuffer."""

    def __init__(self, std, mean):
        super().__init__()
        self.std, self.mean = [float(s) for s in std], [float(m) for m in mean]

    def forward(self, images):
        op = "image.normalize"
        _eager_only(op)
        _expect_buffer(images, op, ("image",))
        out = []
        for img in images:
            if not img.is_floating_point():
                raise TypeError(f"{op}: expected float images, got {img.dtype}")
            C = img.shape[2]
            if len(self.std) != C or len(self.mean) != C:
                raise ValueError(f"{op}: std and mean need {C} values each")
            mean = oneflow.tensor(self.mean, dtype=img.dtype)
            std = oneflow.tensor(self.std, dtype=img.dtype)
            out.append((img - mean) / std)
        return TensorBuffer(out, "image")


class ImageBatchAlign(DataModule):
    """Stacks the images of a TensorBuffer into one zero-filled (N, *shape) tensor of `dtype`,
    each image in the top-left corner; `shape` (H, W, C) must hold the largest image rounded up
    to `alignment` (0 or a power of 2)."""

    def __init__(self, shape, dtype, alignment):
        super().__init__()
        shape = tuple(int(s) for s in shape)
        if len(shape) != 3:
            raise ValueError(f"image.batch_align: shape must be (H, W, C), got {shape}")
        if alignment < 0 or (alignment and alignment & (alignment - 1)):
            raise ValueError(
                f"image.batch_align: alignment must be 0 or a power of 2, got {alignment}"
            )
        if dtype not in (oneflow.uint8, oneflow.float32):
            raise NotImplementedError(
                f"image.batch_align: dtype must be uint8 or float32, got {dtype}"
            )
        self.shape, self.dtype, self.alignment = shape, dtype, alignment

    def forward(self, images):
        op = "image.batch_align"
        _eager_only(op)
        _expect_buffer(images, op, ("image",))
        H, W, C = self.shape

        def up(v):
            a = self.alignment
            return v if a == 0 else (v + a - 1) // a * a

        if len(images):
            mh = up(max(img.shape[0] for img in images))
            mw = up(max(img.shape[1] for img in images))
            if mh > H or mw > W:
                raise ValueError(
                    f"{op}: the aligned largest image ({mh}, {mw}) does not fit shape {self.shape}"
                )
        out = oneflow.zeros(len(images), H, W, C, dtype=self.dtype)
        for i, img in enumerate(images):
            if img.shape[2] != C:
                raise ValueError(f"{op}: image {i} has {img.shape[2]} channels, shape says {C}")
            out[i, : img.shape[0], : img.shape[1]] = img.to(self.dtype)
        return out


_INTERPOLATIONS = {
    "bilinear": "bilinear",
    "nearest_neighbor": "nearest",
    "nn": "nearest",
    "bicubic": "bicubic",
    "area": "area",
}


def _resize(img, h, w, interpolation):
    """img (H, W, C) resized to (h, w) with oneflow's interpolate; uint8 results are rounded."""
    H, W = img.shape[0], img.shape[1]
    mode = interpolation
    if mode == "auto":
        mode = "bilinear" if h * w >= H * W else "area"
    mode = _INTERPOLATIONS[mode]
    x = img.to(oneflow.float32).permute(2, 0, 1).unsqueeze(0)
    kw = {} if mode in ("nearest", "area") else {"align_corners": False}
    y = oneflow.nn.functional.interpolate(x, size=(h, w), mode=mode, **kw)[0].permute(1, 2, 0)
    if img.dtype == oneflow.uint8:
        y = y.round().clamp(0, 255).to(oneflow.uint8)
    return y.contiguous()


class ImageResize(DataModule):
    """Resizes images. With keep_aspect_ratio=False, each image of a TensorBuffer (or each
    image of a uint8 NHWC tensor) to target_size = (width, height): returns (images (N, h, w,
    channels) tensor, scale (N, 2) float (w/W, h/H), None). With keep_aspect_ratio, the
    `resize_side` ("shorter" or "longer") side to target_size, the other by the aspect ratio
    (bounded by max_size / min_size): returns (TensorBuffer, scale (N, 2), new_size (N, 2)
    int32 (w, h)). interpolation_type: bilinear, nearest_neighbor, bicubic, area or auto
    (bilinear when enlarging, area when shrinking)."""

    def __init__(
        self,
        target_size=None,
        min_size=None,
        max_size=None,
        keep_aspect_ratio=False,
        resize_side="shorter",
        channels=3,
        dtype=None,
        interpolation_type="auto",
        name=None,
        color_space=None,
        interp_type=None,
        resize_shorter=0,
        resize_x=0,
        resize_y=0,
    ):
        super().__init__()
        op = "image.Resize"
        if color_space is not None:
            channels = 1 if color_space == "GRAY" else 3
        if interp_type is not None:
            interpolation_type = {
                "Linear": "bilinear",
                "NN": "nearest_neighbor",
                "Cubic": "bicubic",
            }.get(interp_type, interp_type)
        if resize_x and resize_y:
            target_size = (resize_x, resize_y)
        elif resize_shorter:
            target_size, keep_aspect_ratio, resize_side = resize_shorter, True, "shorter"
        if interpolation_type not in ("auto",) + tuple(_INTERPOLATIONS):
            raise ValueError(f"{op}: unknown interpolation_type {interpolation_type!r}")
        if keep_aspect_ratio:
            if not isinstance(target_size, int) or target_size <= 0:
                raise ValueError(
                    f"{op}: keep_aspect_ratio needs a positive int target_size, got {target_size!r}"
                )
            if resize_side not in ("shorter", "longer"):
                raise ValueError(
                    f"{op}: resize_side must be 'shorter' or 'longer', got {resize_side!r}"
                )
            min_size, max_size = min_size or 0, max_size or 0
            if max_size and max_size < target_size:
                raise ValueError(f"{op}: max_size ({max_size}) must be 0 or at least target_size")
        else:
            if (
                not isinstance(target_size, (list, tuple))
                or len(target_size) != 2
                or not all(isinstance(v, int) and v > 0 for v in target_size)
            ):
                raise ValueError(
                    f"{op}: target_size must be a pair of positive ints (width, height), got "
                    f"{target_size!r}"
                )
        if dtype is not None and dtype not in (oneflow.uint8, oneflow.float32):
            raise NotImplementedError(f"{op}: dtype must be uint8 or float32, got {dtype}")
        self.target_size, self.min_size, self.max_size = target_size, min_size, max_size
        self.keep_aspect_ratio, self.resize_side = keep_aspect_ratio, resize_side
        self.channels, self.dtype, self.interpolation_type = channels, dtype, interpolation_type

    def _keep_aspect_size(self, H, W):
        short, long_ = min(H, W), max(H, W)
        aspect = short / long_
        if self.resize_side == "shorter":
            s, l_ = self.target_size, round(self.target_size / aspect)
            if self.max_size and l_ > self.max_size:
                l_ = self.max_size
                s = round(l_ * aspect)
        else:
            l_, s = self.target_size, round(self.target_size * aspect)
            if self.min_size and s < self.min_size:
                s = self.min_size
                l_ = round(s / aspect)
        w = s if W < H else l_
        h = l_ if W < H else s
        return max(h, 1), max(w, 1)

    def forward(self, images):
        op = "image.Resize"
        _eager_only(op)
        if isinstance(images, Tensor):
            images = TensorBuffer(list(images), "image")
        _expect_buffer(images, op, ("image",))
        out, scales, sizes = [], [], []
        for img in images:
            H, W = img.shape[0], img.shape[1]
            if img.shape[2] != self.channels:
                raise ValueError(
                    f"{op}: expected {self.channels} channels, got an image of shape "
                    f"{tuple(img.shape)}"
                )
            if self.keep_aspect_ratio:
                h, w = self._keep_aspect_size(H, W)
            else:
                w, h = self.target_size
            r = _resize(img, h, w, self.interpolation_type)
            if self.dtype is not None:
                r = r.to(self.dtype)
            out.append(r)
            scales.append((w / W, h / H))
            sizes.append((w, h))
        scale = oneflow.tensor(scales, dtype=oneflow.float32).reshape(len(out), 2)
        if self.keep_aspect_ratio:
            new_size = oneflow.tensor(sizes, dtype=oneflow.int32).reshape(len(out), 2)
            return TensorBuffer(out, "image"), scale, new_size
        w, h = self.target_size
        dtype = self.dtype or oneflow.uint8
        batch = oneflow.stack(out) if out else oneflow.empty(0, h, w, self.channels, dtype=dtype)
        return batch, scale, None


def _coco_box(bbox, height, width):
    """COCO's (x, y, w, h) as corners (x1, y1, x2, y2) with x2 = x + max(w - 1, 0), clipped
    to the image; None when empty (OneFlow's conversion)."""
    x, y, w, h = (float(v) for v in bbox)
    x1, y1 = min(max(x, 0.0), width - 1.0), min(max(y, 0.0), height - 1.0)
    x2 = min(max(x + max(w - 1.0, 0.0), 0.0), width - 1.0)
    y2 = min(max(y + max(h - 1.0, 0.0), 0.0), height - 1.0)
    if x2 <= x1 or y2 <= y1:
        return None
    return (x1, y1, x2, y2)


class COCOReader(DataModule):
    """COCO detection data: reads the annotation JSON and yields batches of (encoded image bytes
    as a TensorBuffer, image_id int64 (N,), image_size int32 (N, 2) (height, width), gt_bbox
    TensorBuffer of float (n, 4), gt_label TensorBuffer of int32 (n,), gt_segm TensorBuffer of
    float (P, 2) polygon points, gt_segm_index TensorBuffer of int32 (P, 3) (point, polygon,
    object)); boxes are corners with x2 = x + w - 1, clipped to the image, and empty ones are
    dropped. Crowd annotations are skipped; images left without annotations are removed when
    `remove_images_without_annotations`; `group_by_aspect_ratio` batches landscape images
    apart from the others."""

    def __init__(
        self,
        annotation_file,
        image_dir,
        batch_size,
        shuffle=True,
        random_seed=None,
        group_by_aspect_ratio=True,
        remove_images_without_annotations=True,
        stride_partition=True,
        device=None,
        placement=None,
        sbp=None,
    ):
        super().__init__()
        import json

        if placement is not None or sbp is not None:
            raise NotImplementedError(
                "COCOReader: global readers (placement/sbp) are not supported yet"
            )
        if batch_size < 1:
            raise ValueError(f"COCOReader: batch_size must be positive, got {batch_size}")
        with open(annotation_file) as f:
            coco = json.load(f)
        categories = sorted(c["id"] for c in coco.get("categories", []))
        self._label_of = {cid: i + 1 for i, cid in enumerate(categories)}
        sizes = {im["id"]: (im["height"], im["width"]) for im in coco.get("images", [])}
        anns = {}
        for a in coco.get("annotations", []):
            if a.get("iscrowd", 0) or a["image_id"] not in sizes:
                continue
            if a["category_id"] not in self._label_of:
                raise ValueError(
                    f"COCOReader: annotation {a.get('id')} has category_id {a['category_id']}, "
                    "which is not among the categories"
                )
            box = _coco_box(a["bbox"], *sizes[a["image_id"]])
            if box is None:  # empty after conversion: dropped, as OneFlow's reader does
                continue
            anns.setdefault(a["image_id"], []).append((a, box))
        images = sorted(coco.get("images", []), key=lambda im: im["id"])
        if remove_images_without_annotations:
            images = [im for im in images if anns.get(im["id"])]
        if not images:
            raise ValueError(f"COCOReader: {annotation_file} has no usable images")
        rank, world = oneflow.env.get_rank(), oneflow.env.get_world_size()
        if world > 1:
            if stride_partition:
                images = images[rank::world]
            else:
                lo, hi = _rank_block(len(images), rank, world)
                images = images[lo:hi]
        self._images, self._anns, self._dir = images, anns, image_dir
        self.batch_size, self.shuffle = batch_size, shuffle
        self.group_by_aspect_ratio = group_by_aspect_ratio
        self._rng = random.Random(_seed_or_random(random_seed) if shuffle else 0)
        self._order, self._pos = [], 0
        self._pending = {True: [], False: []}

    def _next_image(self):
        if self._pos == len(self._order):
            self._order = list(range(len(self._images)))
            if self.shuffle:
                self._rng.shuffle(self._order)
            self._pos = 0
        im = self._images[self._order[self._pos]]
        self._pos += 1
        return im

    def _batch_images(self):
        if not self.group_by_aspect_ratio:
            return [self._next_image() for _ in range(self.batch_size)]
        while True:
            im = self._next_image()
            group = self._pending[im["height"] >= im["width"]]  # OneFlow's int(h / w) > 0
            group.append(im)
            if len(group) == self.batch_size:
                batch = list(group)
                group.clear()
                return batch

    def forward(self):
        _eager_only("COCOReader")
        batch = self._batch_images()
        raw, ids, sizes, boxes, labels, segms, segm_index = [], [], [], [], [], [], []
        for im in batch:
            with open(os.path.join(self._dir, im["file_name"]), "rb") as f:
                raw.append(oneflow.tensor(np.frombuffer(f.read(), dtype=np.uint8).copy()))
            ids.append(im["id"])
            sizes.append((im["height"], im["width"]))
            b, lab, pts, idx = [], [], [], []
            for k, (a, box) in enumerate(self._anns.get(im["id"], [])):
                b.append(box)
                lab.append(self._label_of[a["category_id"]])
                polys = a.get("segmentation", [])
                if isinstance(polys, list):
                    for p, poly in enumerate(polys):
                        if len(poly) < 6 or len(poly) % 2:
                            raise ValueError(
                                f"COCOReader: a polygon of annotation {a.get('id')} has "
                                f"{len(poly)} coordinates; expected an even number, at least 6"
                            )
                        for q in range(len(poly) // 2):
                            pts.append((poly[2 * q], poly[2 * q + 1]))
                            idx.append((q, p, k))
            boxes.append(oneflow.tensor(np.asarray(b, dtype=np.float32).reshape(-1, 4)))
            labels.append(oneflow.tensor(np.asarray(lab, dtype=np.int32)))
            segms.append(oneflow.tensor(np.asarray(pts, dtype=np.float32).reshape(-1, 2)))
            segm_index.append(oneflow.tensor(np.asarray(idx, dtype=np.int32).reshape(-1, 3)))
        return (
            TensorBuffer(raw, "bytes"),
            oneflow.tensor(ids, dtype=oneflow.int64),
            oneflow.tensor(sizes, dtype=oneflow.int32).reshape(len(batch), 2),
            TensorBuffer(boxes, "bbox"),
            TensorBuffer(labels, "label"),
            TensorBuffer(segms, "segm"),
            TensorBuffer(segm_index, "segm_index"),
        )
