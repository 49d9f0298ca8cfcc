"""flow.save / flow.load: nested structures round-trip; no code runs on load unless allowed;
truncated or altered files are rejected; an interrupted save leaves the old file loadable."""

import io
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


def test_other_objects_are_pickled_and_loaded_only_when_trusted(tmp_path):
    # as PyTorch: save pickles any object; load refuses them unless weights_only=False
    path = tmp_path / "p.of"
    with pytest.raises(TypeError, match="allow_pickle=True"):
        flow.save({"c": Custom(1)}, path, allow_pickle=False)
    flow.save({"c": Custom(7)}, path)
    with pytest.raises(RuntimeError, match="weights_only=False"):
        flow.load(path)
    with pytest.raises(RuntimeError, match="pickled objects"):
        flow.load(path, weights_only=True)
    assert flow.load(path, allow_pickle=True)["c"].v == 7
    assert flow.load(path, weights_only=False)["c"].v == 7
    # whole modules and argparse namespaces, as scripts save them
    import argparse

    model = flow.nn.Sequential(flow.nn.Linear(3, 2))
    flow.save({"model": model, "args": argparse.Namespace(lr=0.1)}, path)
    back = flow.load(path, weights_only=False)
    assert back["args"].lr == 0.1
    np.testing.assert_array_equal(back["model"][0].weight.numpy(), model[0].weight.numpy())


def test_sets_sizes_dtypes_and_devices_need_no_pickle(tmp_path):
    path = tmp_path / "s.of"
    obj = {
        "s": {1, 2},
        "fs": frozenset({"a"}),
        "size": flow.Size([2, 3]),
        "dtype": flow.float16,
        "device": flow.device("cpu"),
    }
    flow.save(obj, path, allow_pickle=False)
    back = flow.load(path)  # weights_only: nothing pickled
    assert back == obj and isinstance(back["size"], flow.Size)


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


def test_loads_files_written_by_torch_save(tmp_path):
    import torch

    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
    opt = torch.optim.SGD(tm.parameters(), lr=0.1, momentum=0.9)
    tm(torch.randn(5, 3)).sum().backward()
    opt.step()
    base = torch.arange(12.0).reshape(3, 4)
    payload = {
        "model": tm.state_dict(),
        "optim": opt.state_dict(),
        "epoch": 3,
        "view": base[:, 1:3],  # a strided view of a shared storage
        "same_storage": base,
        "dtypes": [
            torch.ones(2, dtype=d)
            for d in (
                torch.float16,
                torch.bfloat16,
                torch.int8,
                torch.uint8,
                torch.int16,
                torch.int32,
                torch.bool,
                torch.float64,
            )
        ],  # fmt: skip
        "param": torch.nn.Parameter(torch.full((2,), 1.5)),
        "size": torch.Size([2, 3]),
        "dtype": torch.float16,
        "device": torch.device("cpu"),
        "nested": ({"a": [torch.zeros(0)]}, {1, 2}),
    }
    path = tmp_path / "torch.pt"
    torch.save(payload, path)
    back = flow.load(path)  # weights_only by default
    assert back["epoch"] == 3 and back["size"] == flow.Size([2, 3])
    assert back["dtype"] == flow.float16 and back["device"] == flow.device("cpu")
    assert list(back["model"]) == list(payload["model"])
    for k, v in payload["model"].items():
        got = back["model"][k]
        assert str(got.dtype).split(".")[-1] == str(v.dtype).split(".")[-1], k
        np.testing.assert_array_equal(got.numpy(), v.numpy())
    np.testing.assert_array_equal(back["view"].numpy(), base[:, 1:3].numpy())
    assert back["view"].stride() == (4, 1)
    for got, want in zip(back["dtypes"], payload["dtypes"]):
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
        np.testing.assert_array_equal(got.float().numpy(), want.float().numpy())
    assert isinstance(back["param"], flow.nn.Parameter) and back["param"].requires_grad
    assert back["nested"][1] == {1, 2} and back["nested"][0]["a"][0].numel() == 0
    momentum = back["optim"]["state"][0]["momentum_buffer"]
    np.testing.assert_array_equal(
        momentum.numpy(), payload["optim"]["state"][0]["momentum_buffer"].numpy()
    )
    # the state dict loads into the same oneflow model
    fm = flow.nn.Sequential(flow.nn.Linear(3, 4), flow.nn.BatchNorm1d(4))
    fm.load_state_dict(back["model"])
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    tm.eval(), fm.eval()
    np.testing.assert_allclose(
        fm(flow.tensor(x)).detach().numpy(), tm(torch.tensor(x)).detach().numpy(), rtol=1e-5
    )


def test_torch_files_map_location_and_weights_only(tmp_path):
    import argparse

    import torch

    path = tmp_path / "t.pt"
    torch.save({"w": torch.ones(2), "args": argparse.Namespace(lr=0.1)}, path)
    with pytest.raises(RuntimeError, match="argparse.Namespace.*weights_only=False"):
        flow.load(path)
    back = flow.load(path, weights_only=False, map_location=lambda storage, loc: storage)
    assert back["args"].lr == 0.1 and back["w"].device == flow.device("cpu")
    assert flow.load(path, map_location="cpu", weights_only=False)["w"].sum().item() == 2
    assert flow.load(path, map_location={"cpu": "cpu"}, weights_only=False)["w"].numel() == 2
    torch.save(torch.nn.Linear(2, 2), path)  # a whole PyTorch module: oneflow's counterpart
    assert isinstance(flow.load(path, weights_only=False), flow.nn.Linear)
    torch.save(torch.nn.Linear(2, 2).weight.untyped_storage(), path)  # no counterpart
    with pytest.raises(RuntimeError, match="torch.storage.UntypedStorage|cannot rebuild"):
        flow.load(path, weights_only=False)
    # PyTorch's map_location forms work on oneflow's own files too
    flow.save({"w": flow.ones(2)}, tmp_path / "f.of")
    got = flow.load(tmp_path / "f.of", map_location=lambda storage, loc: storage)
    assert got["w"].numpy().tolist() == [1.0, 1.0]


def test_training_resumes_from_a_torch_checkpoint_like_torch(tmp_path):
    import torch

    torch.manual_seed(0)
    tm = torch.nn.Linear(3, 2)
    opt = torch.optim.Adam(tm.parameters(), lr=0.01)
    tm(torch.randn(4, 3)).square().sum().backward()
    opt.step()
    opt.zero_grad()
    torch.save({"model": tm.state_dict(), "opt": opt.state_dict(), "epoch": 1}, tmp_path / "c.pt")
    ck = flow.load(tmp_path / "c.pt", map_location="cpu")
    fm = flow.nn.Linear(3, 2)
    fm.load_state_dict(ck["model"])
    fo = flow.optim.Adam(fm.parameters(), lr=0.01)
    fo.load_state_dict(ck["opt"])
    rng = np.random.default_rng(0)
    for _ in range(3):
        x = rng.standard_normal((4, 3)).astype(np.float32)
        tm(torch.tensor(x)).square().sum().backward()
        opt.step()
        opt.zero_grad()
        fm(flow.tensor(x)).square().sum().backward()
        fo.step()
        fo.zero_grad()
        np.testing.assert_allclose(
            fm.weight.detach().numpy(), tm.weight.detach().numpy(), rtol=1e-6, atol=1e-7
        )


# torch.save's legacy format (_use_new_zipfile_serialization=False)

_LEGACY_DTYPES = ("float32", "float64", "float16", "bfloat16", "int8", "int16", "int32", "int64",
                  "uint8", "bool")  # fmt: skip


def _legacy_bytes(obj, **kwargs):
    import torch

    f = io.BytesIO()
    torch.save(obj, f, _use_new_zipfile_serialization=False, **kwargs)
    return f.getvalue()


def test_legacy_torch_files_every_dtype_matches_torch_load(tmp_path):
    import torch

    torch.manual_seed(0)
    state = OrderedDict((d, (torch.randn(3, 5) * 50).to(getattr(torch, d))) for d in _LEGACY_DTYPES)
    state["bf16_exact"] = torch.tensor([1.5, -2.25, 3e38, -0.0]).to(torch.bfloat16)
    path = tmp_path / "legacy.pt"
    path.write_bytes(_legacy_bytes(state))
    want = torch.load(path)
    back = flow.load(path)
    assert isinstance(back, OrderedDict) and list(back) == list(want)
    for k, w in want.items():
        got = back[k]
        assert str(got.dtype).split(".")[-1] == str(w.dtype).split(".")[-1], k
        assert tuple(got.shape) == tuple(w.shape), k
        if w.dtype == torch.bfloat16:  # compare the exact bits
            np.testing.assert_array_equal(
                got.view(flow.int16).numpy(), w.view(torch.int16).numpy(), err_msg=k
            )
        else:
            np.testing.assert_array_equal(got.numpy(), w.numpy(), err_msg=k)
    # a model's state dict loads into the oneflow model and computes the same
    tm = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4)).eval()
    path.write_bytes(_legacy_bytes(tm.state_dict()))
    fm = flow.nn.Sequential(flow.nn.Linear(3, 4), flow.nn.BatchNorm1d(4)).eval()
    fm.load_state_dict(flow.load(path))
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    np.testing.assert_allclose(
        fm(flow.tensor(x)).detach().numpy(), tm(torch.tensor(x)).detach().numpy(), rtol=1e-5
    )


def test_legacy_torch_files_keep_shared_storages_views_and_parameters(tmp_path):
    import torch

    base = torch.arange(24.0).reshape(4, 6)
    payload = {
        "base": base,
        "cols": base[:, 2:5],  # offset 2, strides (6, 1)
        "t": base.t(),
        "flat_tail": base.view(-1)[7:],
        "param": torch.nn.Parameter(torch.full((3,), 2.5)),
        "frozen": torch.nn.Parameter(torch.ones(2), requires_grad=False),
        "nested": [{"a": (torch.zeros(0), 3)}, {1, 2}, {"deep": [base[1]]}],
    }
    for protocol in (2, 4):
        back = flow.load(io.BytesIO(_legacy_bytes(payload, pickle_protocol=protocol)))
        for k in ("base", "cols", "t", "flat_tail"):
            np.testing.assert_array_equal(back[k].numpy(), payload[k].numpy(), err_msg=k)
            assert back[k].stride() == payload[k].stride(), k
        assert isinstance(back["param"], flow.nn.Parameter) and back["param"].requires_grad
        assert back["param"].numpy().tolist() == [2.5] * 3
        assert isinstance(back["frozen"], flow.nn.Parameter) and not back["frozen"].requires_grad
        assert back["nested"][0]["a"][0].numel() == 0 and back["nested"][0]["a"][1] == 3
        assert back["nested"][1] == {1, 2}
        # every view still aliases the one storage: writing through the base shows in them
        back["base"][1, 3] = -1.0
        assert back["cols"][1, 1].item() == -1.0
        assert back["t"][3, 1].item() == -1.0
        assert back["flat_tail"][2].item() == -1.0
        assert back["nested"][2]["deep"][0][3].item() == -1.0


def test_legacy_torch_optimizer_state_resumes_training_like_torch(tmp_path):
    import torch

    torch.manual_seed(0)
    tm = torch.nn.Linear(3, 2)
    opt = torch.optim.Adam(tm.parameters(), lr=0.01)
    for _ in range(2):
        tm(torch.randn(4, 3)).square().sum().backward()
        opt.step()
        opt.zero_grad()
    path = tmp_path / "c.pt"
    ck = {"model": tm.state_dict(), "opt": opt.state_dict(), "epoch": 2}
    path.write_bytes(_legacy_bytes(ck))
    with open(path, "rb") as f:  # an open file object
        back = flow.load(f, map_location="cpu")
    assert back["epoch"] == 2
    assert back["opt"]["param_groups"][0]["lr"] == 0.01
    np.testing.assert_array_equal(
        back["opt"]["state"][0]["exp_avg_sq"].numpy(), ck["opt"]["state"][0]["exp_avg_sq"].numpy()
    )
    fm = flow.nn.Linear(3, 2)
    fm.load_state_dict(back["model"])
    fo = flow.optim.Adam(fm.parameters(), lr=0.01)
    fo.load_state_dict(back["opt"])
    rng = np.random.default_rng(0)
    for _ in range(3):
        x = rng.standard_normal((4, 3)).astype(np.float32)
        tm(torch.tensor(x)).square().sum().backward()
        opt.step()
        opt.zero_grad()
        fm(flow.tensor(x)).square().sum().backward()
        fo.step()
        fo.zero_grad()
        np.testing.assert_allclose(
            fm.weight.detach().numpy(), tm.weight.detach().numpy(), rtol=1e-6, atol=1e-7
        )
        np.testing.assert_allclose(
            fm.bias.detach().numpy(), tm.bias.detach().numpy(), rtol=1e-6, atol=1e-7
        )


class _RunsOnLoadAt:
    """Unpickling it creates a directory: loading must not run it unless trusted."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (os.mkdir, (self.path,))


def test_legacy_torch_files_weights_only_map_location_and_file_objects(tmp_path):
    import argparse

    import torch

    data = _legacy_bytes({"w": torch.ones(2), "args": argparse.Namespace(lr=0.1)})
    with pytest.raises(RuntimeError, match="argparse.Namespace.*weights_only=False"):
        flow.load(io.BytesIO(data))
    back = flow.load(io.BytesIO(data), weights_only=False)
    assert back["args"].lr == 0.1 and back["w"].numpy().tolist() == [1.0, 1.0]
    # nothing the pickle names is imported or run when weights_only refuses it
    marker = tmp_path / "ran"
    evil = _legacy_bytes({"w": torch.ones(1), "x": _RunsOnLoadAt(str(marker))})
    with pytest.raises(RuntimeError, match="weights_only"):
        flow.load(io.BytesIO(evil))
    assert not marker.exists()
    # trusted, it runs exactly once (a second os.mkdir of the same path would raise)
    assert flow.load(io.BytesIO(evil), weights_only=False)["w"].numpy().tolist() == [1.0]
    assert marker.is_dir()
    legacy_module = flow.load(io.BytesIO(_legacy_bytes(torch.nn.Linear(2, 2))), weights_only=False)
    assert isinstance(legacy_module, flow.nn.Linear)
    # map_location forms
    data = _legacy_bytes({"w": torch.arange(3.0)})
    for m in ("cpu", {"cpu": "cpu"}, lambda storage, loc: storage, lambda loc: "cpu"):
        got = flow.load(io.BytesIO(data), map_location=m)["w"]
        assert got.device == flow.device("cpu") and got.numpy().tolist() == [0.0, 1.0, 2.0]
    # a path, an open file and a file object positioned after other bytes
    path = tmp_path / "w.pt"
    path.write_bytes(data)
    assert flow.load(str(path))["w"].numpy().tolist() == [0.0, 1.0, 2.0]
    with open(path, "rb") as f:
        assert flow.load(f)["w"].numpy().tolist() == [0.0, 1.0, 2.0]
    f = io.BytesIO(b"header" + data)
    f.seek(6)
    assert flow.load(f)["w"].numpy().tolist() == [0.0, 1.0, 2.0]
    # a truncated legacy file is reported, not misread
    with pytest.raises(RuntimeError, match="truncated"):
        flow.load(io.BytesIO(data[:-3]))


def test_legacy_torch_files_from_big_endian_machines():
    """The header records the saving machine's byte order; the element counts and elements
    are stored in it. Rewrites a little-endian file as a big-endian machine writes it."""
    import pickle
    import pickletools
    import struct

    import torch

    data = _legacy_bytes({"a": torch.arange(5.0) - 2.5, "b": torch.tensor([[1e30, -7.0]])})
    f = io.BytesIO(data)
    spans = []
    for _ in range(5):  # magic, version, system info, object, storage keys
        start = f.tell()
        for _ in pickletools.genops(f):
            pass
        spans.append(data[start : f.tell()])
    info = pickle.loads(spans[2])
    assert info["little_endian"] is True
    info["little_endian"] = False
    out = spans[:2] + [pickle.dumps(info, protocol=2)] + spans[3:]
    pos = f.tell()
    for _ in pickle.loads(spans[4]):  # every storage here holds float32
        (count,) = struct.unpack("<q", data[pos : pos + 8])
        elements = np.frombuffer(data, "<f4", count, pos + 8)
        out += [struct.pack(">q", count), elements.astype(">f4").tobytes()]
        pos += 8 + 4 * count
    assert pos == len(data)
    back = flow.load(io.BytesIO(b"".join(out)))
    assert back["a"].numpy().tolist() == [-2.5, -1.5, -0.5, 0.5, 1.5]
    np.testing.assert_array_equal(back["b"].numpy(), np.array([[1e30, -7.0]], np.float32))


def test_loads_a_whole_model_pickled_by_torch_save(tmp_path):
    """torch.save(model) pickles the module objects: with weights_only=False their classes (and
    functions they hold) come from oneflow's counterparts at the same paths and take PyTorch's
    pickled state; the model computes and trains as PyTorch's. weights_only=True refuses."""
    import torch

    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 4, 3, padding=1),
        torch.nn.BatchNorm2d(4),
        torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(1),
        torch.nn.Flatten(),
        torch.nn.Linear(4, 2),
        torch.nn.LayerNorm(2),
    )
    model.register_buffer("scratch", torch.ones(1), persistent=False)
    path = tmp_path / "model.pt"
    torch.save(model, path)
    with pytest.raises(RuntimeError, match="weights_only=True does not load"):
        flow.load(path)
    loaded = flow.load(path, weights_only=False)
    assert isinstance(loaded, flow.nn.Sequential) and isinstance(loaded[1], flow.nn.BatchNorm2d)
    assert repr(loaded) == repr(model)
    assert list(loaded.state_dict()) == list(model.state_dict())
    x = np.random.default_rng(0).standard_normal((2, 3, 5, 5)).astype(np.float32)
    for train in (False, True):
        model.train(train)
        loaded.train(train)
        want = model(torch.tensor(x))
        got = loaded(flow.tensor(x))
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), atol=1e-5)
    want.sum().backward()
    got.sum().backward()
    np.testing.assert_allclose(
        loaded[0].weight.grad.numpy(), model[0].weight.grad.numpy(), rtol=1e-4, atol=1e-5
    )


def test_tied_weights_are_saved_once_and_load_as_one_tensor(tmp_path):
    class Tied(flow.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = flow.nn.Embedding(100, 64)
            self.head = flow.nn.Linear(64, 100, bias=False)
            self.head.weight = self.emb.weight

    model = Tied()
    path = str(tmp_path / "tied.of")
    flow.save(model.state_dict(), path)
    single = str(tmp_path / "single.of")
    flow.save({"w": model.emb.weight.detach()}, single)
    assert os.path.getsize(path) < os.path.getsize(single) + 1024  # one copy of the matrix
    loaded = flow.load(path)
    assert loaded["emb.weight"] is loaded["head.weight"]
    other = Tied()
    other.load_state_dict(loaded)
    np.testing.assert_array_equal(
        other.head.weight.detach().numpy(), model.emb.weight.detach().numpy()
    )
    x = flow.arange(6.0)
    flow.save({"a": x, "b": x, "c": x[2:]}, path)
    back = flow.load(path)
    assert back["a"] is back["b"] and back["c"].tolist() == [2, 3, 4, 5]
