"""OneFlow's data pipeline: OFRecord readers and decoders, image transforms, COCOReader.

Records are written here by an independent protobuf wire-format encoder (below), so the C++
parser is checked against the format OneFlow's files use; PNG images by a zlib encoder, so
decoded pixels are known exactly; JPEG through libjpeg at quality 100 (close, not exact)."""

import json
import random
import struct
import zlib

import numpy as np
import pytest
import torch

import oneflow as flow
from oneflow._oneflow_internal import _data
from oneflow.nn.modules.dataset import TensorBuffer, random_crop_window

needs_codecs = pytest.mark.skipif(
    not _data.image_codecs_available(), reason="built without libjpeg/libpng"
)


# ---- protobuf wire format (OFRecord: map<string, Feature> feature = 1) ----


def _varint(v):
    v &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _field(num, payload):  # length-delimited
    return _varint(num << 3 | 2) + _varint(len(payload)) + payload


def _list(kind, values):
    if kind == "bytes":
        return b"".join(_field(1, v) for v in values)
    if kind == "float":
        packed = struct.pack(f"<{len(values)}f", *values)
    elif kind == "double":
        packed = struct.pack(f"<{len(values)}d", *values)
    else:  # int32 / int64: varints, negatives as 64-bit two's complement
        packed = b"".join(_varint(int(v)) for v in values)
    return _field(1, packed)


_KIND_FIELD = {"bytes": 1, "float": 2, "double": 3, "int32": 4, "int64": 5}


def record(**features):
    """features: name=(kind, values)."""
    out = b""
    for name, (kind, values) in features.items():
        feature = _field(_KIND_FIELD[kind], _list(kind, values))
        out += _field(1, _field(1, name.encode()) + _field(2, feature))
    return out


def write_part(path, records):
    with open(path, "wb") as f:
        for r in records:
            f.write(struct.pack("<q", len(r)) + r)


def png(pixels, depth=8):
    """A gray (HxW), RGB (HxWx3) or RGBA (HxWx4) PNG of 8 or 16 bits."""
    pixels = np.asarray(pixels, dtype=np.uint8 if depth == 8 else ">u2")
    h, w = pixels.shape[:2]
    color = 0 if pixels.ndim == 2 else {3: 2, 4: 6}[pixels.shape[2]]
    rows = pixels.reshape(h, -1)
    raw = b"".join(b"\x00" + rows[i].tobytes() for i in range(h))

    def chunk(tag, data):
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))

    ihdr = struct.pack(">IIBBBBB", w, h, depth, color, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", ihdr)
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )


def test_our_encoder_and_the_wire_encoder_agree():
    a = record(x=("int64", [1, -2, 3]))
    b = _data.encode_record([("x", "int64", [1, -2, 3])])
    assert a == b


def _ids(records):
    return flow.nn.OFRecordRawDecoder("id", [1], flow.int64)(records).numpy().reshape(-1).tolist()


def test_reader_reads_parts_in_order_and_cycles(tmp_path):
    write_part(tmp_path / "part-00000", [record(id=("int64", [i])) for i in range(4)])
    write_part(tmp_path / "part-00001", [record(id=("int64", [i])) for i in range(4, 7)])
    reader = flow.nn.OFRecordReader(
        str(tmp_path), batch_size=3, data_part_num=2, part_name_suffix_length=5
    )
    got = []
    for _ in range(5):
        batch = reader()
        assert isinstance(batch, TensorBuffer) and batch.shape == (3,)
        got += _ids(batch)
    assert got == [0, 1, 2, 3, 4, 5, 6, 0, 1, 2, 3, 4, 5, 6, 0]
    # unpadded names: part-0, part-1
    write_part(tmp_path / "part-0", [record(id=("int64", [9]))])
    assert _ids(flow.nn.OFRecordReader(str(tmp_path), batch_size=2)()) == [9, 9]
    with pytest.raises(RuntimeError, match="cannot open the part file"):
        flow.nn.OFRecordReader(str(tmp_path), data_part_num=3)
    write_part(tmp_path / "empty-0", [])
    with pytest.raises(RuntimeError, match="hold no records"):
        flow.nn.OFRecordReader(str(tmp_path), part_name_prefix="empty-")()
    (tmp_path / "bad-0").write_bytes(struct.pack("<q", 100) + b"short")
    with pytest.raises(RuntimeError, match="truncated"):
        flow.nn.OFRecordReader(str(tmp_path), part_name_prefix="bad-")()


def test_reader_shuffles(tmp_path):
    write_part(tmp_path / "part-0", [record(id=("int64", [i])) for i in range(20)])

    def read(seed, **kw):
        r = flow.nn.OFRecordReader(
            str(tmp_path),
            batch_size=10,
            random_shuffle=True,
            shuffle_buffer_size=8,
            random_seed=seed,
            **kw,
        )
        return sum((_ids(r()) for _ in range(6)), [])

    a, b = read(1), read(1)
    assert a == b and a != read(2)
    assert set(a) == set(range(20)) and a[:20] != list(range(20))
    # file order per epoch: natural first, then shuffled, each file once per epoch
    for i in range(4):
        write_part(tmp_path / f"f-{i}", [record(id=("int64", [i]))])
    r = flow.nn.OFRecordReader(
        str(tmp_path),
        batch_size=4,
        data_part_num=4,
        part_name_prefix="f-",
        shuffle_after_epoch=True,
        random_seed=3,
    )
    epochs = [_ids(r()) for _ in range(8)]
    assert epochs[0] == [0, 1, 2, 3]
    assert all(sorted(e) == [0, 1, 2, 3] for e in epochs)
    assert any(e != [0, 1, 2, 3] for e in epochs[1:])


def test_raw_decoder_converts_and_checks_counts():
    recs = TensorBuffer(
        [
            record(
                i64=("int64", [1, -2, 2**40]),
                f=("float", [1.5, -2.7]),
                d=("double", [0.25]),
                i32=("int32", [7, -8]),
                b=("bytes", [bytes([1, 200, 3])]),
                v=("int64", [1, 2]),
            )
        ]
        * 2,
        "ofrecord",
    )
    dec = flow.nn.OFRecordRawDecoder
    x = dec("i64", [3], flow.int64)(recs)
    assert x.shape == (2, 3) and x.dtype == flow.int64
    assert x.numpy()[1].tolist() == [1, -2, 2**40]
    np.testing.assert_array_equal(
        dec("f", [2], flow.float32)(recs).numpy()[0], np.float32([1.5, -2.7])
    )
    assert dec("f", [2], flow.int32)(recs).numpy()[0].tolist() == [1, -2]  # C cast truncates
    assert dec("d", [1, 1], flow.float64)(recs).shape == (2, 1, 1)
    assert dec("i32", [2], flow.float32)(recs).numpy()[0].tolist() == [7.0, -8.0]
    assert dec("b", [3], flow.uint8)(recs).numpy()[0].tolist() == [1, 200, 3]
    assert dec("b", [3], flow.float32)(recs).numpy()[0].tolist() == [1.0, -56.0, 3.0]
    assert dec("v", [4], flow.int64, truncate=True)(recs).numpy()[0].tolist() == [1, 2, 0, 0]
    assert dec("v", [1], flow.int64, truncate=True)(recs).numpy()[0].tolist() == [1]
    assert dec("v", [3], flow.int64, auto_zero_padding=True)(recs).numpy()[0].tolist() == [1, 2, 0]
    assert dec("v", [3], flow.int64, dim1_varying_length=True)(recs).numpy()[0].tolist() == [
        1,
        2,
        0,
    ]
    with pytest.raises(RuntimeError, match="has 2 values; the shape asks for 3"):
        dec("v", [3], flow.int64)(recs)
    with pytest.raises(
        RuntimeError, match=r"has no feature 'nope' \(it has: b, d, f, i32, i64, v\)"
    ):
        dec("nope", [1], flow.int64)(recs)
    with pytest.raises(TypeError, match="float16"):
        dec("f", [2], flow.float16)(recs)
    with pytest.raises(RuntimeError, match="not a valid OFRecord"):
        dec("f", [2], flow.float32)(TensorBuffer([b"\xff\xff\xff"], "ofrecord"))
    with pytest.raises(TypeError, match="TensorBuffer of ofrecord"):
        dec("f", [2], flow.float32)(flow.zeros(2))
    got = flow.nn.OFRecordBytesDecoder("b")(recs)
    assert got.kind == "bytes" and got[0].dtype == flow.uint8
    assert got[1].numpy().tolist() == [1, 200, 3]
    with pytest.raises(RuntimeError, match="not a bytes feature"):
        flow.nn.OFRecordBytesDecoder("f")(recs)


@needs_codecs
def test_image_decoders(tmp_path):
    rng = np.random.default_rng(0)
    rgb = rng.integers(0, 256, (12, 17, 3), dtype=np.uint8)
    gray = np.repeat(rng.integers(0, 256, (12, 17, 1), dtype=np.uint8), 3, axis=2)
    jpg_src = np.clip(
        np.add.outer(np.arange(16) * 8, np.arange(24) * 4)[..., None] + [0, 30, 60], 0, 255
    )
    jpg_src = jpg_src.astype(np.uint8)
    recs = TensorBuffer(
        [
            record(img=("bytes", [png(rgb)])),
            record(img=("bytes", [png(gray)])),
            record(img=("bytes", [_data.encode_jpeg(jpg_src, 100)])),
        ],
        "ofrecord",
    )
    out = flow.nn.OFRecordImageDecoder("img", color_space="RGB")(recs)
    assert out.kind == "image" and out[0].dtype == flow.uint8
    np.testing.assert_array_equal(out[0].numpy(), rgb)
    assert np.abs(out[2].numpy().astype(int) - jpg_src).max() <= 4
    bgr = flow.nn.OFRecordImageDecoder("img")(recs)  # default BGR
    np.testing.assert_array_equal(bgr[0].numpy(), rgb[..., ::-1])
    g = flow.nn.OFRecordImageDecoder("img", color_space="GRAY")(recs)
    assert g[1].shape == (12, 17, 1)
    np.testing.assert_array_equal(g[1].numpy()[..., 0], gray[..., 0])
    with pytest.raises(ValueError, match="color_space"):
        flow.nn.OFRecordImageDecoder("img", color_space="HSV")
    bad = TensorBuffer([record(img=("bytes", [b"\xff\xd8\xff" + b"junk" * 10]))], "ofrecord")
    with pytest.raises(RuntimeError, match="not a valid JPEG"):
        flow.nn.OFRecordImageDecoder("img")(bad)
    with pytest.raises(RuntimeError, match="neither a JPEG nor a PNG"):
        flow.nn.OFRecordImageDecoder("img")(
            TensorBuffer([record(img=("bytes", [b"GIF89a"]))], "ofrecord")
        )
    # nn.image.decode from a bytes buffer, in float32
    buf = flow.nn.OFRecordBytesDecoder("img")(recs)
    dec = flow.nn.image.decode(dtype=flow.float32, color_space="RGB")(buf)
    np.testing.assert_array_equal(dec[0].numpy(), rgb.astype(np.float32))

    # random crops: sub-windows of the decoded image within the area and ratio bounds
    big = rng.integers(0, 256, (40, 60, 3), dtype=np.uint8)
    recs = TensorBuffer([record(img=("bytes", [png(big)]))] * 4, "ofrecord")
    crop = flow.nn.OFRecordImageDecoderRandomCrop(
        "img", color_space="RGB", random_seed=5, random_area=[0.3, 0.6]
    )
    first = crop(recs)
    again = flow.nn.OFRecordImageDecoderRandomCrop(
        "img", color_space="RGB", random_seed=5, random_area=[0.3, 0.6]
    )(recs)
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    for c in first:
        h, w = c.shape[:2]
        assert 0.3 * 2400 * 0.9 <= h * w <= 0.6 * 2400 * 1.1 and 0.7 <= w / h <= 1.4
        cn = c.numpy()
        hits = [
            (y, x)
            for y in range(41 - h)
            for x in range(61 - w)
            if np.array_equal(big[y : y + h, x : x + w], cn)
        ]
        assert hits
    assert len({tuple(c.shape) for c in first}) > 1  # each slot draws its own window


def test_random_crop_window_bounds_and_fallback():
    rng = random.Random(0)
    for _ in range(200):
        H, W = rng.randint(1, 300), rng.randint(1, 300)
        y, x, h, w = random_crop_window(rng, H, W, 10, (0.08, 1.0), (0.75, 4 / 3))
        assert 0 <= y <= H - h and 0 <= x <= W - w and h >= 1 and w >= 1
    # an impossible ratio window falls back to the largest in-range crop
    y, x, h, w = random_crop_window(random.Random(1), 10, 100, 10, (0.9, 1.0), (0.75, 1.33))
    assert h == 10 and w == 13


def _cmn_reference(batch, h, w, py, px, mean, std, mirror, layout):
    n, H, W, C = batch.shape
    y0 = int(np.float32(H - h) * np.float32(py))
    x0 = int(np.float32(W - w) * np.float32(px))
    out = batch[:, y0 : y0 + h, x0 : x0 + w].astype(np.float32)
    if mirror is not None:
        out = np.stack([o[:, ::-1] if m else o for o, m in zip(out, mirror)])
    out = (out - np.float32(mean)) * (np.float32(1) / np.float32(std))
    return out.transpose(0, 3, 1, 2) if layout == "NCHW" else out


def test_crop_mirror_normalize_matches_numpy():
    rng = np.random.default_rng(1)
    batch = rng.integers(0, 256, (4, 11, 13, 3), dtype=np.uint8)
    mirror = np.array([1, 0, 1, 1], dtype=np.int8)
    mean, std = [10.0, 120.0, 200.0], [2.0, 50.0, 60.0]
    for layout in ("NCHW", "NHWC"):
        m = flow.nn.CropMirrorNormalize(
            output_layout=layout,
            crop_h=7,
            crop_w=5,
            crop_pos_y=0.3,
            crop_pos_x=0.9,
            mean=mean,
            std=std,
        )
        got = m(flow.tensor(batch), flow.tensor(mirror)).numpy()
        ref = _cmn_reference(batch, 7, 5, 0.3, 0.9, mean, std, mirror, layout)
        np.testing.assert_allclose(got, ref, rtol=1e-6, atol=1e-5)
    full = flow.nn.CropMirrorNormalize(mean=[1.0], std=[2.0])(flow.tensor(batch))
    np.testing.assert_allclose(
        full.numpy(), _cmn_reference(batch, 11, 13, 0.5, 0.5, [1.0], [2.0], None, "NCHW")
    )
    # a TensorBuffer of images of different sizes
    imgs = [rng.integers(0, 256, (9 + i, 8 + 2 * i, 3), dtype=np.uint8) for i in range(3)]
    buf = TensorBuffer([flow.tensor(a) for a in imgs], "image")
    got = flow.nn.CropMirrorNormalize(crop_h=6, crop_w=6, output_layout="NHWC")(
        buf, flow.tensor([0, 1, 0], dtype=flow.int8)
    )
    for i, a in enumerate(imgs):
        ref = _cmn_reference(a[None], 6, 6, 0.5, 0.5, [0.0], [1.0], [i == 1], "NHWC")[0]
        np.testing.assert_allclose(got.numpy()[i], ref)
    with pytest.raises(ValueError, match="smaller than the crop"):
        flow.nn.CropMirrorNormalize(crop_h=20, crop_w=6)(buf)
    with pytest.raises(ValueError, match="needs 1 or 3 values"):
        flow.nn.CropMirrorNormalize(mean=[1.0, 2.0])
    with pytest.raises(NotImplementedError, match="uint8 NHWC"):
        flow.nn.CropMirrorNormalize()(flow.zeros(1, 2, 2, 3))
    with pytest.raises(ValueError, match="3 channels"):
        flow.nn.CropMirrorNormalize()(flow.zeros(1, 2, 2, 1, dtype=flow.uint8))


def test_image_flip_normalize_batch_align():
    a = np.arange(2 * 3 * 1, dtype=np.uint8).reshape(2, 3, 1)
    buf = TensorBuffer([flow.tensor(a)] * 4, "image")
    out = flow.nn.image.flip()(buf, flow.tensor([0, 1, 16, 17], dtype=flow.int8))
    for o, ref in zip(out, [a, a[:, ::-1], a[::-1], a[::-1, ::-1]]):
        np.testing.assert_array_equal(o.numpy(), ref)
    with pytest.raises(ValueError, match="unknown flip code 5"):
        flow.nn.image.flip()(buf, flow.tensor([5, 0, 0, 0], dtype=flow.int8))
    f = TensorBuffer([flow.tensor(np.full((2, 2, 3), 10.0, np.float32))], "image")
    n = flow.nn.image.normalize(std=[1.0, 2.0, 5.0], mean=[0.0, 4.0, 5.0])(f)
    np.testing.assert_allclose(n[0].numpy()[0, 0], [10.0, 3.0, 1.0])
    with pytest.raises(TypeError, match="float images"):
        flow.nn.image.normalize(std=[1.0], mean=[0.0])(buf)
    imgs = TensorBuffer(
        [flow.tensor(np.ones((3, 5, 1), np.uint8)), flow.tensor(np.full((6, 2, 1), 2, np.uint8))],
        "image",
    )
    al = flow.nn.image.batch_align(shape=(8, 8, 1), dtype=flow.float32, alignment=8)(imgs)
    assert al.shape == (2, 8, 8, 1) and al.dtype == flow.float32
    ref = np.zeros((2, 8, 8, 1), np.float32)
    ref[0, :3, :5] = 1
    ref[1, :6, :2] = 2
    np.testing.assert_array_equal(al.numpy(), ref)
    with pytest.raises(ValueError, match="does not fit"):
        flow.nn.image.batch_align(shape=(4, 8, 1), dtype=flow.uint8, alignment=8)(imgs)
    with pytest.raises(ValueError, match="power of 2"):
        flow.nn.image.batch_align(shape=(8, 8, 1), dtype=flow.uint8, alignment=3)


def test_image_resize():
    rng = np.random.default_rng(2)
    a = rng.integers(0, 256, (6, 10, 3), dtype=np.uint8)
    b = rng.integers(0, 256, (9, 4, 3), dtype=np.uint8)
    buf = TensorBuffer([flow.tensor(a), flow.tensor(b)], "image")
    img, scale, size = flow.nn.image.Resize(target_size=(12, 8), interpolation_type="bilinear")(buf)
    assert img.shape == (2, 8, 12, 3) and img.dtype == flow.uint8 and size is None
    np.testing.assert_allclose(scale.numpy(), [[12 / 10, 8 / 6], [12 / 4, 8 / 9]], rtol=1e-6)
    ref = torch.nn.functional.interpolate(
        torch.from_numpy(a).permute(2, 0, 1)[None].float(),
        size=(8, 12),
        mode="bilinear",
        align_corners=False,
    )[0].permute(1, 2, 0)
    np.testing.assert_array_equal(img.numpy()[0], ref.round().clamp(0, 255).to(torch.uint8).numpy())
    out, scale, size = flow.nn.image.Resize(target_size=4, keep_aspect_ratio=True)(buf)
    assert isinstance(out, TensorBuffer)
    assert size.numpy().tolist() == [[7, 4], [4, 9]] and size.dtype == flow.int32
    assert [tuple(o.shape) for o in out] == [(4, 7, 3), (9, 4, 3)]
    _, _, size = flow.nn.image.Resize(target_size=4, keep_aspect_ratio=True, max_size=6)(buf)
    assert size.numpy().tolist() == [[6, 4], [3, 6]]  # 7 and 9 capped at 6, short side rescaled
    _, _, size = flow.nn.image.Resize(target_size=5, keep_aspect_ratio=True, resize_side="longer")(
        buf
    )
    assert size.numpy().tolist() == [[5, 3], [2, 5]]
    with pytest.raises(ValueError, match="resize_side"):
        flow.nn.image.Resize(target_size=4, keep_aspect_ratio=True, resize_side="middle")
    with pytest.raises(ValueError, match="pair of positive ints"):
        flow.nn.image.Resize(target_size=4)
    with pytest.raises(ValueError, match="channels"):
        flow.nn.image.Resize(target_size=(2, 2), channels=1)(buf)


@needs_codecs
def test_coco_reader(tmp_path):
    for i, (h, w) in enumerate([(4, 6), (5, 3), (6, 6)]):
        (tmp_path / f"{i}.png").write_bytes(png(np.full((h, w, 3), i, np.uint8)))
    coco = {
        "images": [
            {"id": 10, "file_name": "0.png", "height": 4, "width": 6},
            {"id": 11, "file_name": "1.png", "height": 5, "width": 3},
            {"id": 12, "file_name": "2.png", "height": 6, "width": 6},
        ],
        "categories": [{"id": 7}, {"id": 3}],
        "annotations": [
            {
                "image_id": 10,
                "bbox": [1, 1, 3, 2],
                "category_id": 7,
                "segmentation": [[0, 0, 1, 0, 1, 1]],
            },
            {"image_id": 10, "bbox": [0, 0, 1, 1], "category_id": 3},  # empty: dropped
            {"image_id": 11, "bbox": [0, 0, 2, 2], "category_id": 3, "iscrowd": 1},
            {
                "image_id": 12,
                "bbox": [2, 3, 10, 10],
                "category_id": 3,
                "segmentation": [[5, 5, 6, 6, 5, 6]],
            },
        ],
    }
    ann = tmp_path / "ann.json"
    ann.write_text(json.dumps(coco))
    reader = flow.nn.COCOReader(
        str(ann), str(tmp_path), batch_size=2, shuffle=False, group_by_aspect_ratio=False
    )
    image, image_id, image_size, bbox, label, segm, segm_index = reader()
    assert image_id.numpy().tolist() == [10, 12]  # image 11 has only a crowd annotation
    assert image_size.numpy().tolist() == [[4, 6], [6, 6]]
    # corners with x2 = x + w - 1, clipped to the image
    np.testing.assert_array_equal(bbox[0].numpy(), [[1, 1, 3, 2]])
    np.testing.assert_array_equal(bbox[1].numpy(), [[2, 3, 5, 5]])
    assert label[0].numpy().tolist() == [2] and label[1].numpy().tolist() == [1]
    assert segm[0].shape == (3, 2) and segm_index[0].numpy()[-1].tolist() == [2, 0, 0]
    decoded = flow.nn.image.decode(color_space="RGB")(image)
    assert decoded[1].shape == (6, 6, 3) and int(decoded[1].numpy()[0, 0, 0]) == 2
    # landscape images are batched apart from square and portrait ones
    grouped = flow.nn.COCOReader(str(ann), str(tmp_path), batch_size=2, shuffle=False)
    assert grouped()[1].numpy().tolist() == [10, 10]
    extra = {"image_id": 12, "bbox": [0, 0, 3, 3], "category_id": 99}
    ann.write_text(json.dumps(dict(coco, annotations=coco["annotations"] + [extra])))
    with pytest.raises(ValueError, match="category_id 99"):
        flow.nn.COCOReader(str(ann), str(tmp_path), batch_size=1)
    odd = dict(coco["annotations"][0], segmentation=[[0, 0, 1, 1, 2]])
    ann.write_text(json.dumps(dict(coco, annotations=[odd])))
    with pytest.raises(ValueError, match="5 coordinates"):
        flow.nn.COCOReader(str(ann), str(tmp_path), batch_size=1)()


def test_data_pipeline_inside_a_graph_reads_a_new_batch_each_call(tmp_path):
    """OneFlow's graph data loaders: the reader and decoders called in build() run on the
    host before each replay; the graph trains on every batch in turn, as eager code would."""
    rng = np.random.default_rng(4)
    xs = rng.standard_normal((12, 4)).astype(np.float32)
    ys = (xs.sum(1) > 0).astype(np.int64)
    write_part(
        tmp_path / "part-0",
        [record(x=("float", x.tolist()), y=("int64", [int(y)])) for x, y in zip(xs, ys)],
    )

    def pipeline():
        return (
            flow.nn.OFRecordReader(str(tmp_path), batch_size=4),
            flow.nn.OFRecordRawDecoder("x", [4], flow.float32),
            flow.nn.OFRecordRawDecoder("y", [], flow.int64),
        )

    flow.manual_seed(0)
    eager_model = flow.nn.Linear(4, 2)
    graph_model = flow.nn.Linear(4, 2)
    graph_model.load_state_dict(eager_model.state_dict())
    eager_opt = flow.optim.SGD(eager_model.parameters(), lr=0.1)
    graph_opt = flow.optim.SGD(graph_model.parameters(), lr=0.1)

    class Train(flow.nn.Graph):
        def __init__(self):
            super().__init__()
            self.reader, self.dx, self.dy = pipeline()
            self.model = graph_model
            self.add_optimizer(graph_opt)

        def build(self):
            rec = self.reader()
            loss = flow.nn.functional.cross_entropy(self.model(self.dx(rec)), self.dy(rec))
            loss.backward()
            return loss

    g = Train()
    reader, dx, dy = pipeline()
    for _ in range(7):
        rec = reader()
        loss = flow.nn.functional.cross_entropy(eager_model(dx(rec)), dy(rec))
        loss.backward()
        eager_opt.step()
        eager_opt.zero_grad()
        np.testing.assert_allclose(float(g()), float(loss), rtol=1e-5)
    np.testing.assert_allclose(graph_model.weight.numpy(), eager_model.weight.numpy(), rtol=1e-5)

    # a pipeline stage fed by the graph's own kernels cannot run before the replay
    class Bad(flow.nn.Graph):
        def __init__(self):
            super().__init__()
            self.cmn = flow.nn.CropMirrorNormalize(output_layout="NHWC")

        def build(self, x):
            return self.cmn(x + 1)

    with pytest.raises(RuntimeError, match="must come from the pipeline"):
        Bad()(flow.zeros(1, 2, 2, 3, dtype=flow.uint8))


@needs_codecs
def test_image_pipeline_with_coin_flips_inside_a_graph(tmp_path):
    rng = np.random.default_rng(5)
    imgs = [rng.integers(0, 256, (6, 8, 3), dtype=np.uint8) for _ in range(4)]
    write_part(tmp_path / "part-0", [record(img=("bytes", [png(a)])) for a in imgs])

    class Load(flow.nn.Graph):
        def __init__(self):
            super().__init__()
            self.reader = flow.nn.OFRecordReader(str(tmp_path), batch_size=2)
            self.decode = flow.nn.OFRecordImageDecoder("img", color_space="RGB")
            self.flip = flow.nn.CoinFlip(batch_size=2, random_seed=7)
            self.cmn = flow.nn.CropMirrorNormalize(
                color_space="RGB", crop_h=4, crop_w=4, mean=[10.0], std=[2.0]
            )

        def build(self):
            rng_flags = self.flip()
            return self.cmn(self.decode(self.reader()), rng_flags) * 1.0, rng_flags + 0

    g = Load()
    flips = flow.nn.CoinFlip(batch_size=2, random_seed=7)
    for call in range(4):
        out, flags = g()
        expect_flags = flips().numpy()
        np.testing.assert_array_equal(flags.numpy(), expect_flags)
        for k in range(2):
            a = imgs[(2 * call + k) % 4][1:5, 2:6]
            a = a[:, ::-1] if expect_flags[k] else a
            ref = ((a.astype(np.float32) - 10.0) * 0.5).transpose(2, 0, 1)
            np.testing.assert_allclose(out.numpy()[k], ref)


def test_training_from_ofrecords(tmp_path):
    """A small classifier trained from records, as OneFlow's OFRecord examples are."""
    rng = np.random.default_rng(3)
    xs = rng.standard_normal((64, 4)).astype(np.float32)
    ys = (xs.sum(1) > 0).astype(np.int64)
    write_part(
        tmp_path / "part-0",
        [record(x=("float", x.tolist()), y=("int64", [int(y)])) for x, y in zip(xs, ys)],
    )
    reader = flow.nn.OFRecordReader(
        str(tmp_path), batch_size=16, random_shuffle=True, random_seed=0
    )
    dx, dy = (
        flow.nn.OFRecordRawDecoder("x", [4], flow.float32),
        flow.nn.OFRecordRawDecoder("y", [], flow.int64),
    )
    model = flow.nn.Linear(4, 2)
    opt = flow.optim.SGD(model.parameters(), lr=0.5)
    losses = []
    for _ in range(40):
        rec = reader()
        loss = flow.nn.functional.cross_entropy(model(dx(rec)), dy(rec))
        loss.backward()
        opt.step()
        opt.zero_grad()
        losses.append(float(loss))
    assert np.mean(losses[-5:]) < 0.5 * np.mean(losses[:5])


def test_hardening_found_by_review(tmp_path):
    import threading

    # one reader shared by threads: every record read as often as the others
    write_part(tmp_path / "part-0", [record(id=("int64", [i])) for i in range(10)])
    reader = flow.nn.OFRecordReader(str(tmp_path), batch_size=5)
    seen = []

    def work():
        for _ in range(40):
            seen.extend(_ids(reader()))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert np.bincount(seen).tolist() == [80] * 10
    # a length prefix larger than the rest of the file fails at once
    (tmp_path / "huge-0").write_bytes(struct.pack("<q", 1 << 31) + b"abc")
    with pytest.raises(RuntimeError, match="3 remain"):
        flow.nn.OFRecordReader(str(tmp_path), part_name_prefix="huge-")()
    (tmp_path / "dir-0").mkdir()
    with pytest.raises(RuntimeError, match="not a regular file"):
        flow.nn.OFRecordReader(str(tmp_path), part_name_prefix="dir-")()
    for seed in (-5, 2**64 - 1):
        flow.nn.OFRecordReader(str(tmp_path), random_shuffle=True, random_seed=seed)

    dec = flow.nn.OFRecordRawDecoder
    empty = TensorBuffer([record(b=("bytes", []))], "ofrecord")
    with pytest.raises(RuntimeError, match="holds 0 values; expected one"):
        dec("b", [2], flow.int64, truncate=True)(empty)
    long = TensorBuffer([record(b=("bytes", [bytes([1, 2, 3, 4])]))], "ofrecord")
    assert dec("b", [2], flow.uint8)(long).numpy().tolist() == [[1, 2]]  # as many as fit
    sat = TensorBuffer([record(f=("float", [300.7, float("nan"), -1e30]))], "ofrecord")
    assert dec("f", [3], flow.int8)(sat).numpy().tolist() == [[127, 0, -128]]
    with pytest.raises(ValueError, match="negative"):
        dec("f", [-1], flow.int8)

    # CropMirrorNormalize's checks and OneFlow's full-image rule
    x = flow.tensor(np.arange(1 * 4 * 6 * 3, dtype=np.uint8).reshape(1, 4, 6, 3))
    with pytest.raises(ValueError, match=r"crop_pos_y must be in \[0, 1\]"):
        flow.nn.CropMirrorNormalize(crop_h=2, crop_w=2, crop_pos_y=1.5)
    assert flow.nn.CropMirrorNormalize(crop_h=0, crop_w=5)(x).shape == (1, 3, 4, 6)
    inf = flow.nn.CropMirrorNormalize(mean=np.array([1.0, 2.0, 3.0]), std=[0.0])(x)
    assert np.isinf(inf.numpy()).any()
    mixed = TensorBuffer(
        [flow.zeros(4, 4, 3, dtype=flow.uint8), flow.zeros(4, 4, 1, dtype=flow.uint8)], "image"
    )
    with pytest.raises(ValueError, match="image 1 has shape"):
        flow.nn.CropMirrorNormalize(crop_h=2, crop_w=2)(mixed)
    # aspect-keeping resizes never reach a zero side
    thin = TensorBuffer([flow.zeros(1, 4000, 3, dtype=flow.uint8)], "image")
    _, _, size = flow.nn.image.Resize(target_size=800, keep_aspect_ratio=True, max_size=1333)(thin)
    assert size.numpy().tolist() == [[1333, 1]]


@needs_codecs
def test_png_decoding_follows_opencv():
    rgb = np.array([[[255, 0, 0], [0, 255, 0], [0, 0, 255], [10, 200, 30]]], np.uint8)
    gray = _data.decode_image(png(rgb), "GRAY").numpy()[0, :, 0]
    r, g, b = (rgb[0, :, c].astype(np.int64) for c in range(3))
    ref = (r * 4899 + g * 9617 + b * 1868 + 8192) >> 14
    assert gray.tolist() == ref.tolist() == [76, 150, 29, 124]
    rgba = np.array([[[200, 100, 50, 128], [10, 20, 30, 0]]], np.uint8)
    assert _data.decode_image(png(rgba), "RGB").numpy().tolist() == [[[200, 100, 50], [10, 20, 30]]]
    deep = np.array([[[0x8080, 0x4000, 0xFFFF]]])
    assert _data.decode_image(png(deep, depth=16), "RGB").numpy().tolist() == [[[128, 64, 255]]]
    ihdr = b"IHDR" + struct.pack(">IIBBBBB", 40000, 40000, 8, 2, 0, 0, 0)
    big = (
        b"\x89PNG\r\n\x1a\n"
        + struct.pack(">I", 13)
        + ihdr
        + struct.pack(">I", zlib.crc32(ihdr))
        + png(np.zeros((1, 1, 3), np.uint8))[33:]
    )
    with pytest.raises(RuntimeError, match="more than 2\\^30 pixels"):
        _data.decode_image(big, "RGB")


def test_graph_pipeline_outputs_buffers_and_retraces(tmp_path):
    write_part(
        tmp_path / "part-0", [record(id=("int64", [i]), b=("bytes", [b"xy"])) for i in range(12)]
    )

    def graph(build):
        class G(flow.nn.Graph):
            def __init__(self):
                super().__init__()
                self.r = flow.nn.OFRecordReader(str(tmp_path), batch_size=2)
                self.d = flow.nn.OFRecordRawDecoder("id", [], flow.int64)
                self.bd = flow.nn.OFRecordBytesDecoder("b")
                self.lin = flow.nn.Linear(1, 1)

        G.build = build
        return G()

    # a decoder's output returned from build() is a new tensor at each call
    g = graph(lambda s: s.d(s.r()))
    a, b, c = g(), g(), g()
    assert a.numpy().tolist() == [0, 1] and b.numpy().tolist() == [2, 3] and b is not c
    assert c.numpy().tolist() == [4, 5]
    with pytest.raises(NotImplementedError, match="reads its data in build"):
        g.runtime_state_dict()
    # a buffer's items stay with the pipeline; a buffer is no graph output
    with pytest.raises(RuntimeError, match="can only be passed to the data pipeline"):
        graph(lambda s: flow.stack(list(s.bd(s.r()))))()
    with pytest.raises(TypeError, match="TensorBuffer"):
        graph(lambda s: s.r())()
    # a re-trace forced by a changed parameter layout reads the next batch once
    g = graph(lambda s: s.d(s.r()).sum() + s.lin.weight.sum() * 0)
    assert [int(g()) for _ in range(2)] == [1, 5]
    g.lin.weight.data = flow.zeros(1, 2)[:, :1]  # same shape, other strides
    assert [int(g()) for _ in range(2)] == [9, 13]
