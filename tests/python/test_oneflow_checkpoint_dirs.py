"""oneflow.load of checkpoint directories written by OneFlow itself: the pickled_data layout
(tensors as references to subdirectories of raw bytes and a text VariableMetaInfo) and the
older layout (one subdirectory per state-dict key and a snapshot_done marker). The pickle is
read without importing anything but tensors and containers."""

import collections
import os
import pickle
import sys
import types

import numpy as np
import pytest

import oneflow as flow

_META = "shape {{\n{dims}}}\ndata_type: {kind}\n"


def _write_tensor(root, rel, array, kind):
    d = os.path.join(root, rel)
    os.makedirs(d)
    with open(os.path.join(d, "out"), "wb") as f:
        f.write(np.ascontiguousarray(array).tobytes())
    dims = "".join(f"  dim: {n}\n" for n in array.shape)
    with open(os.path.join(d, "meta"), "w") as f:
        f.write(_META.format(dims=dims, kind=kind))


@pytest.fixture
def oneflow_tensor_class():
    """A stand-in for OneFlow's tensor class at a oneflow module path, pickling as OneFlow's
    flow.save does: its state is {"path": <subdirectory>}."""
    name = "oneflow.framework.tensor_saved_by_oneflow"
    module = types.ModuleType(name)

    class Tensor:
        def __init__(self, path):
            self.path = path

        def __getstate__(self):
            return {"path": self.path}

    Tensor.__module__ = name
    Tensor.__qualname__ = "Tensor"
    module.Tensor = Tensor
    sys.modules[name] = module
    yield Tensor
    del sys.modules[name]


@pytest.mark.parametrize("protocol", [0, 2, 4])
def test_pickled_data_directory(tmp_path, oneflow_tensor_class, protocol):
    root = str(tmp_path / "model")
    os.makedirs(root)
    w = np.arange(6, dtype=np.float32).reshape(2, 3)
    steps = np.array([3, 4], dtype=np.int64)
    _write_tensor(root, "tensor_1", w, "kFloat")
    _write_tensor(root, "tensor_2", steps, "kInt64")
    T = oneflow_tensor_class
    state = collections.OrderedDict(
        [("fc.weight", T("tensor_1")), ("meta", {"steps": T("tensor_2"), "epoch": 7})]
    )
    with open(os.path.join(root, "pickled_data"), "wb") as f:
        f.write(pickle.dumps({"protocol_version": 1, "data": state}, protocol=protocol))
    loaded = flow.load(root)
    assert isinstance(loaded, collections.OrderedDict) and list(loaded) == ["fc.weight", "meta"]
    assert loaded["fc.weight"].dtype == flow.float32
    np.testing.assert_array_equal(loaded["fc.weight"].numpy(), w)
    assert loaded["meta"]["steps"].dtype == flow.int64
    assert loaded["meta"]["steps"].tolist() == [3, 4] and loaded["meta"]["epoch"] == 7
    model = flow.nn.Linear(3, 2, bias=False)
    model.load_state_dict({"weight": loaded["fc.weight"]})
    np.testing.assert_array_equal(model.weight.detach().numpy(), w)


def test_legacy_directory_with_bfloat16_and_float64(tmp_path):
    root = str(tmp_path / "legacy")
    os.makedirs(root)
    a = np.array([[1.5, -2.0]], dtype=np.float64)
    bf = (np.array([1.0, -3.5, 0.15625], dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16)
    _write_tensor(root, "a", a, "kDouble")
    _write_tensor(root, "b", bf, "kBFloat16")
    open(os.path.join(root, "snapshot_done"), "w").close()
    loaded = flow.load(root)
    assert sorted(loaded) == ["a", "b"]
    assert loaded["a"].dtype == flow.float64 and loaded["a"].tolist() == [[1.5, -2.0]]
    assert loaded["b"].dtype == flow.bfloat16
    assert loaded["b"].float().tolist() == [1.0, -3.5, 0.15625]


def test_unknown_classes_and_bad_sizes_are_refused(tmp_path, oneflow_tensor_class):
    root = str(tmp_path / "evil")
    os.makedirs(root)
    with open(os.path.join(root, "pickled_data"), "wb") as f:
        f.write(pickle.dumps({"protocol_version": 1, "data": os.system}))
    with pytest.raises(RuntimeError, match="posix.system|os.system|nt.system"):
        flow.load(root)
    bad = str(tmp_path / "bad")
    os.makedirs(bad)
    _write_tensor(bad, "t", np.zeros(4, np.float32), "kFloat")
    with open(os.path.join(bad, "t", "out"), "ab") as f:
        f.write(b"\0")
    open(os.path.join(bad, "snapshot_done"), "w").close()
    with pytest.raises(RuntimeError, match="bytes"):
        flow.load(bad)
    with pytest.raises(RuntimeError, match="directory"):
        flow.load(str(tmp_path))
