"""oneflow.utils.tensorboard.SummaryWriter: event files read back record by record (framing and
CRC-32C checksums) and protocol buffer field by field."""

import glob
import os
import struct

import numpy as np
import pytest

import oneflow as flow
from oneflow.utils.tensorboard import SummaryWriter, crc32c


def _masked(data):
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def _records(path):
    data = open(path, "rb").read()
    out, i = [], 0
    while i < len(data):
        header = data[i : i + 8]
        (n,) = struct.unpack("<Q", header)
        assert struct.unpack("<I", data[i + 8 : i + 12])[0] == _masked(header)
        body = data[i + 12 : i + 12 + n]
        assert struct.unpack("<I", data[i + 12 + n : i + 16 + n])[0] == _masked(body)
        out.append(body)
        i += 16 + n
    return out


def _fields(buf):
    """(field, wire type, value) of a protocol buffer message."""
    i, out = 0, []
    while i < len(buf):
        key, i = _varint(buf, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            v, i = _varint(buf, i)
        elif wire == 1:
            v, i = struct.unpack("<d", buf[i : i + 8])[0], i + 8
        elif wire == 5:
            v, i = struct.unpack("<f", buf[i : i + 4])[0], i + 4
        else:
            n, i = _varint(buf, i)
            v, i = buf[i : i + n], i + n
        out.append((field, wire, v))
    return out


def _varint(buf, i):
    shift = result = 0
    while True:
        b = buf[i]
        i += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, i
        shift += 7


def _events(path):
    evs = []
    for rec in _records(path):
        f = {k: v for k, _, v in _fields(rec)}
        ev = {"step": f.get(2), "version": f.get(3)}
        if 5 in f:
            (value,) = [v for k, _, v in _fields(f[5]) if k == 1]
            vf = {k: v for k, _, v in _fields(value)}
            ev.update(tag=vf[1].decode(), simple=vf.get(2), histo=vf.get(5), tensor=vf.get(8))
        evs.append(ev)
    return evs


def test_crc32c_check_value():
    assert crc32c(b"123456789") == 0xE3069283


def test_scalars_histograms_and_text_read_back(tmp_path):
    with SummaryWriter(log_dir=str(tmp_path)) as w:
        for step in range(3):
            w.add_scalar("loss/train", 1.5 / (step + 1), step)
        w.add_scalar("lr", flow.tensor(0.25), flow.tensor(7))
        w.add_histogram("weights", flow.tensor([0.5, -1.0, 2.0, 2.0]), 4)
        w.add_text("note", "hello", 5)
        w.add_scalars("run", {"a": 1.0, "b": 2.0}, 6)
    (path,) = glob.glob(os.path.join(tmp_path, "events.out.tfevents.*"))
    evs = _events(path)
    assert evs[0]["version"] == b"brain.Event:2"
    scalars = [(e["tag"], e["step"], e["simple"]) for e in evs if e.get("simple") is not None]
    assert scalars[:3] == [("loss/train", 0, 1.5), ("loss/train", 1, 0.75), ("loss/train", 2, 0.5)]
    assert scalars[3] == ("lr", 7, 0.25)
    (h,) = [e for e in evs if e.get("histo") is not None]
    hf = {}
    for k, _, v in _fields(h["histo"]):
        hf[k] = v
    assert (hf[1], hf[2], hf[3], hf[4], hf[5]) == (-1.0, 2.0, 4.0, 3.5, 9.25)
    counts = np.frombuffer(hf[7], dtype="<f8")
    assert counts.sum() == 4 and len(np.frombuffer(hf[6], dtype="<f8")) == len(counts)
    (t,) = [e for e in evs if e.get("tensor") is not None]
    assert t["tag"] == "note/text_summary" and b"hello" in t["tensor"]
    for sub, value in (("run_a", 1.0), ("run_b", 2.0)):
        (p,) = glob.glob(os.path.join(tmp_path, sub, "events.out.tfevents.*"))
        (e,) = [e for e in _events(p) if e.get("simple") is not None]
        assert (e["tag"], e["step"], e["simple"]) == ("run", 6, value)


def test_default_log_dir_and_unsupported_entries(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    w = SummaryWriter(comment="_exp")
    assert w.get_logdir().startswith("runs" + os.sep) and w.get_logdir().endswith("_exp")
    with pytest.raises(NotImplementedError, match="scalars"):
        w.add_image("img", flow.zeros(3, 4, 4))
    with pytest.raises(ValueError, match="no element"):
        w.add_histogram("empty", flow.zeros(0))
    w.close()
