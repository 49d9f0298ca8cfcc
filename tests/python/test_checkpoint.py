"""flow.save / flow.load: nested structures round-trip; no code runs on load unless allowed;
truncated or altered files are rejected; an interrupted save leaves the old file loadable."""

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections import OrderedDict

import numpy as np
import pytest

import oneflow as flow


class Custom:
    def __init__(self, v):
        self.v = v


def test_round_trip_nested(tmp_path):
    net = flow.nn.Sequential(flow.nn.Linear(3, 4), flow.nn.BatchNorm1d(4))
    opt = flow.optim.Adam(net.parameters(), lr=0.01)
    net(flow.randn(5, 3)).sum().backward()
    opt.step()
    obj = {
        "model": net.state_dict(),
        "optim": opt.state_dict(),
        "epoch": 3,
        "lr": 1e-3,
        "inf": float("inf"),
        "name": "run",
        "flags": [True, None, (1, 2.5)],
        "arr": np.arange(6, dtype=np.int16).reshape(2, 3),
        "half": flow.ones(2, dtype=flow.float16),
        "bf16": flow.tensor([1.5, -2.0]).to(flow.bfloat16),
        "param": flow.nn.Parameter(flow.ones(2)),
        (1, "k"): b"bytes",
    }
    path = tmp_path / "ckpt.of"
    flow.save(obj, path)
    back = flow.load(path)
    assert isinstance(back["model"], OrderedDict)
    for k, v in obj["model"].items():
        np.testing.assert_array_equal(back["model"][k].numpy(), v.numpy())
        assert back["model"][k].dtype == v.dtype
    assert back["optim"]["param_groups"][0]["lr"] == 0.01
    np.testing.assert_array_equal(back["optim"]["state"][0]["exp_avg"].numpy(),
                                  obj["optim"]["state"][0]["exp_avg"].numpy())  # fmt: skip
    assert back["epoch"] == 3 and back["lr"] == 1e-3 and back["inf"] == float("inf")
    assert back["flags"] == [True, None, (1, 2.5)]
    assert back["arr"].dtype == np.int16 and back["arr"].tolist() == [[0, 1, 2], [3, 4, 5]]
    assert back["half"].dtype == flow.float16 and back["bf16"].dtype == flow.bfloat16
    assert back["bf16"].float().numpy().tolist() == [1.5, -2.0]
    assert isinstance(back["param"], flow.nn.Parameter) and back["param"].requires_grad
    assert back[(1, "k")] == b"bytes"
    fresh = flow.nn.Sequential(flow.nn.Linear(3, 4), flow.nn.BatchNorm1d(4))
    fresh.load_state_dict(back["model"])


def test_pickle_only_when_both_sides_opt_in(tmp_path):
    path = tmp_path / "p.of"
    with pytest.raises(TypeError, match="allow_pickle=True"):
        flow.save({"c": Custom(1)}, path)
    flow.save({"c": Custom(7)}, path, allow_pickle=True)
    with pytest.raises(RuntimeError, match="pickled objects"):
        flow.load(path)
    assert flow.load(path, allow_pickle=True)["c"].v == 7


def test_truncated_and_altered_files_are_rejected(tmp_path):
    path = tmp_path / "c.of"
    flow.save({"w": flow.randn(100)}, path)
    data = path.read_bytes()
    (tmp_path / "trunc.of").write_bytes(data[: len(data) // 2])
    with pytest.raises(RuntimeError, match="checksum|truncated"):
        flow.load(tmp_path / "trunc.of")
    flipped = bytearray(data)
    flipped[len(data) // 2] ^= 0xFF
    (tmp_path / "alt.of").write_bytes(bytes(flipped))
    with pytest.raises(RuntimeError, match="corrupted"):
        flow.load(tmp_path / "alt.of")
    (tmp_path / "junk.of").write_bytes(b"not a checkpoint at all, just text")
    with pytest.raises(RuntimeError, match="not a oneflow save file"):
        flow.load(tmp_path / "junk.of")


def test_map_location_and_file_objects(tmp_path):
    import io

    buf = io.BytesIO()
    flow.save([flow.ones(2)], buf)
    buf.seek(0)
    out = flow.load(buf, map_location="cpu")
    assert out[0].device.type == "cpu" and out[0].numpy().tolist() == [1.0, 1.0]


def test_killed_save_leaves_previous_checkpoint(tmp_path):
    path = tmp_path / "model.of"
    flow.save({"step": 1, "w": flow.zeros(10)}, path)
    script = textwrap.dedent(f"""
        import sys
        sys.path[:0] = {[p for p in sys.path if p]!r}
        import oneflow as flow
        big = {{"step": 2, "w": flow.ones(40_000_000)}}
        print("saving", flush=True)
        while True:
            flow.save(big, {str(path)!r})
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE)
    assert proc.stdout.readline().strip() == b"saving"
    time.sleep(0.3)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    out = flow.load(path)  # the old file or a complete new one, never a partial one
    assert out["step"] in (1, 2)
    assert out["w"].numel() in (10, 40_000_000)
    leftovers = [f for f in os.listdir(tmp_path) if f.startswith(".oneflow-save-")]
    for f in leftovers:  # a killed writer may leave its temporary file, never the target
        os.unlink(tmp_path / f)
