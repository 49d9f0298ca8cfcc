"""Smaller PyTorch and OneFlow script idioms: module traversal flags and containers, class
relations (ReLU6 is a Hardtanh, lazy modules are their plain classes), Dropout2d on 3-D input,
BatchNorm with track_running_stats turned off after construction, len(iter(loader)), PyTorch's
module paths (clip_grad, convert_parameters, autograd.variable, data._utils.collate,
serialization with its weights_only allowlist), bernoulli(input, p), OneFlow's callable sbp
objects and flow.to_global / to_local, and oneflow.mock_torch."""

import dataclasses
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
import torch

import oneflow as flow


@dataclasses.dataclass
class Point:
    x: int
    y: int


@pytest.mark.parametrize("lib", [flow, torch], ids=["oneflow", "torch"])
def test_module_traversal_and_containers(lib):
    nn = lib.nn
    lin = nn.Linear(2, 2)
    seq = nn.Sequential(lin, lin)
    assert len(list(seq.named_parameters())) == 2
    assert len(list(seq.named_parameters(remove_duplicate=False))) == 4
    assert len(list(seq.modules(remove_duplicate=False))) == 3
    both = nn.ModuleList([nn.ReLU()]) + nn.ModuleList([nn.Tanh(), nn.ReLU()])
    assert isinstance(both, nn.ModuleList) and len(both) == 3
    m = nn.Module()
    m.register_buffer("a", lib.zeros(1), persistent=False)
    assert m._non_persistent_buffers_set == {"a"} and "a" not in m.state_dict()
    assert (
        isinstance(nn.ReLU6(), nn.Hardtanh)
        and repr(nn.ReLU6(inplace=True)) == "ReLU6(inplace=True)"
    )
    assert repr(nn.GELU(approximate="tanh")) == "GELU(approximate='tanh')"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lazy = nn.LazyLinear(3)
        assert isinstance(lazy, nn.Linear) and isinstance(nn.LazyConv2d(4, 3), nn.Conv2d)
        assert tuple(lazy(lib.ones(2, 5)).shape) == (2, 3) and type(lazy) is nn.Linear
    assert hasattr(lib.nn.modules.lazy, "LazyModuleMixin")


def test_relu6_values():
    x = np.linspace(-3, 9, 13).astype("float32")
    np.testing.assert_array_equal(flow.nn.ReLU6()(flow.tensor(x)).numpy(), np.clip(x, 0, 6))


def test_dropout2d_on_3d_input_drops_channels_like_torch():
    flow.manual_seed(0)
    with pytest.warns(UserWarning, match="dropout1d"):
        y = flow.nn.Dropout2d(0.5)(flow.ones(8, 6, 5)).numpy()
    # one draw per (sample, channel), as PyTorch's (N, C, L) reading
    assert all(len(set(y[n, c])) == 1 for n in range(8) for c in range(6))
    assert any(len(set(y[n].reshape(-1))) > 1 for n in range(8))


def _bn_toggle(lib):
    b = lib.nn.BatchNorm1d(1)
    with lib.no_grad():
        b.running_mean.fill_(10.0)
    b.track_running_stats = False
    b.eval()
    evaluated = b(lib.tensor([[0.0], [2.0]])).detach().numpy().ravel()
    b.train()
    trained = b(lib.tensor([[0.0], [2.0]])).detach().numpy().ravel()
    return evaluated, trained, b.running_mean.numpy()


def test_batch_norm_with_tracking_turned_off_later_like_torch():
    for ours, ref in zip(_bn_toggle(flow), _bn_toggle(torch)):
        np.testing.assert_allclose(ours, ref, rtol=1e-5)


def test_len_of_a_loader_iterator():
    loader = flow.utils.data.DataLoader(list(range(7)), batch_size=2)
    it = iter(loader)
    assert len(it) == 4 and next(it).tolist() == [0, 1]


def test_pytorch_module_paths():
    from oneflow.autograd.variable import Variable
    from oneflow.nn.utils.clip_grad import clip_grad_norm_, clip_grad_value_
    from oneflow.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters
    from oneflow.utils.data._utils.collate import collate, default_collate_fn_map

    assert Variable is flow.autograd.Variable
    p = flow.nn.Parameter(flow.ones(3))
    p.grad = flow.full((3,), 4.0)
    assert abs(float(clip_grad_norm_([p], 1.0)) - np.sqrt(48)) < 1e-5
    clip_grad_value_([p], 0.1)
    assert float(p.grad.max()) <= 0.1 + 1e-7
    v = parameters_to_vector([p, flow.nn.Parameter(flow.zeros(2))])
    assert tuple(v.shape) == (5,)
    vector_to_parameters(flow.arange(3.0), [p])
    assert p.tolist() == [0, 1, 2]

    def collate_point(batch, *, collate_fn_map=None):
        return flow.tensor([[b.x, b.y] for b in batch])

    batch = [{"p": Point(1, 2), "n": 1.5}, {"p": Point(3, 4), "n": 2.5}]
    out = collate(batch, collate_fn_map={Point: collate_point, **default_collate_fn_map})
    assert out["p"].tolist() == [[1, 2], [3, 4]] and out["n"].dtype == flow.float64


def test_serialization_allowlist_for_weights_only(tmp_path):
    path = os.path.join(tmp_path, "point.pt")
    torch.save({"w": torch.ones(2), "point": Point(1, 2)}, path)
    with pytest.raises(RuntimeError, match="weights_only"):
        flow.load(path)
    with flow.serialization.safe_globals([Point]):
        loaded = flow.load(path)
    assert loaded["point"] == Point(1, 2) and loaded["w"].tolist() == [1, 1]
    assert Point not in flow.serialization.get_safe_globals()
    flow.serialization.add_safe_globals([Point])
    try:
        assert flow.load(path)["point"].y == 2
    finally:
        flow.serialization.clear_safe_globals()


@pytest.mark.parametrize("lib", [flow, torch], ids=["oneflow", "torch"])
def test_bernoulli_with_p(lib):
    assert lib.bernoulli(lib.ones(3), p=0.0).tolist() == [0, 0, 0]
    assert lib.bernoulli(lib.zeros(3), 1.0).tolist() == [1, 1, 1]
    assert lib.ones(2, 2).bernoulli(p=1.0).tolist() == [[1, 1], [1, 1]]
    lib.manual_seed(0)
    draws = lib.bernoulli(lib.zeros(10000), 0.25)
    assert abs(float(draws.mean()) - 0.25) < 0.03


def test_oneflow_global_forms_on_one_rank():
    placement = flow.placement("cpu", ranks=[0])
    assert flow.sbp.broadcast() is flow.sbp.broadcast
    assert flow.sbp.partial_sum() == flow.sbp.partial_sum
    assert flow.sbp.split(axis=1) == flow.sbp.split(1)
    x = flow.to_global(flow.arange(4.0), placement, flow.sbp.broadcast)
    assert x.is_global and flow.to_local(x).tolist() == [0, 1, 2, 3]


def test_mock_torch_maps_torch_imports_to_oneflow():
    script = """
import torch as real
from oneflow.mock_torch import enable, disable
import oneflow
enable()
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader
assert torch is oneflow and F is oneflow.nn.functional
assert DataLoader is oneflow.utils.data.DataLoader
disable()
import torch
assert torch is real
with enable():
    import torch
    assert torch is oneflow
import torch
assert torch is real
print("ok")
"""
    env = dict(os.environ)
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_oneflow_tensor_constructor_keywords():
    placement = flow.placement("cpu", ranks=[0])
    g = flow.Tensor([[1.0, 2.0]], placement=placement, sbp=flow.sbp.broadcast)
    assert g.is_global and tuple(g.shape) == (1, 2) and g.to_local().tolist() == [[1, 2]]
    assert flow.Tensor(2, 3, placement=placement, sbp=flow.sbp.broadcast).is_global
    assert tuple(flow.Tensor(flow.Size([2, 2])).shape) == (2, 2)
    assert tuple(torch.Tensor(torch.Size([2, 2])).shape) == (2, 2)
    assert flow.Tensor([1, 2], dtype=flow.int64).dtype == flow.int64
    t = flow.Tensor([1.0, 2.0], requires_grad=True)
    assert t.requires_grad and t.is_leaf and t.dtype == flow.float32
    with pytest.raises(ValueError, match="placement and sbp"):
        flow.Tensor([1.0], placement=placement)


def test_oneflow_one_hot_values_and_dropout_keywords():
    F = flow.nn.functional
    hot = F.one_hot(flow.tensor([0, 2]), num_classes=4, on_value=5, off_value=-1)
    assert hot.dtype == flow.int64 and hot.tolist() == [[5, -1, -1, -1], [-1, -1, 5, -1]]
    half = F.one_hot(flow.tensor([1]), 3, on_value=0.5, off_value=0.0)
    assert half.dtype == flow.float32 and half.tolist() == [[0, 0.5, 0]]
    assert F.one_hot(flow.tensor([1]), 2).tolist() == [[0, 1]]
    assert F.dropout(flow.ones(2, 3), p=0.0, addend=flow.ones(2, 3)).tolist() == [[2] * 3] * 2
    g = flow.Generator()
    g.manual_seed(3)
    a = F.dropout(flow.ones(64), 0.5, generator=g)
    g.manual_seed(3)
    assert bool((F.dropout(flow.ones(64), 0.5, generator=g) == a).all())
    drop = flow.nn.Dropout(p=0.0, generator=g)
    assert drop(flow.ones(2), addend=flow.full((2,), 3.0)).tolist() == [4, 4]


def test_oneflow_placement_ranks_and_hierarchy():
    p = flow.placement("cpu", ranks=[[0, 1], [2, 3]])
    assert isinstance(p.ranks, np.ndarray) and p.ranks.shape == (2, 2) and p.ranks.flat[3] == 3
    assert p.hierarchy == flow.Size([2, 2]) and isinstance(p.hierarchy, flow.Size)
    q = flow.placement("cpu", ranks=[0])
    assert (
        flow.placement("cpu", q.ranks) == q
        and repr(q) == 'oneflow.placement(type="cpu", ranks=[0])'
    )


@pytest.mark.parametrize("lib", [flow, torch], ids=["oneflow", "torch"])
def test_hook_options_like_torch(lib):
    class Boom(lib.nn.Module):
        def forward(self, x):
            raise ValueError("boom")

    seen = []
    m = Boom()
    m.register_forward_hook(lambda mod, args, out: seen.append(out), always_call=True)
    m.register_forward_hook(lambda mod, args, out: seen.append("plain"))
    with pytest.raises(ValueError, match="boom"):
        m(lib.ones(1))
    assert seen == [None]
    order = []
    lin = lib.nn.Linear(2, 2)
    lin.register_full_backward_hook(lambda *a: order.append("second"))
    lin.register_full_backward_hook(lambda *a: order.append("first"), prepend=True)
    lin(lib.ones(1, 2, requires_grad=True)).sum().backward()
    assert order == ["first", "second"]
    loader = lib.utils.data.DataLoader(list(range(4)), batch_size=2, in_order=False)
    assert [b.tolist() for b in loader] == [[0, 1], [2, 3]]
    F = lib.nn.functional
    assert F.softmax(lib.ones(2), dim=0, _stacklevel=5).tolist() == [0.5, 0.5]
    assert F.log_softmax(lib.zeros(2), 0, 3, dtype=lib.float64).dtype == lib.float64


@pytest.mark.parametrize("lib", [flow, torch], ids=["oneflow", "torch"])
def test_max_gradient_goes_to_a_nan_maximum(lib):
    x = lib.tensor([float("nan"), 1.0, 2.0], requires_grad=True)
    x.max().backward()
    assert x.grad.tolist() == [1.0, 0.0, 0.0]


def _full_backward_hook_log(lib, case):
    class Pair(lib.nn.Module):
        def forward(self, a, b):
            return a * b, a + b

    m, log = Pair(), []

    def summary(grads):
        return [None if g is None else float(g.sum()) for g in grads]

    m.register_full_backward_hook(lambda mod, gi, go: log.append((summary(gi), summary(go))))
    a = lib.ones(2, requires_grad=True)
    b = lib.full((2,), 3.0, requires_grad=case != 1)
    x, y = m(a, b)
    (x.sum() if case < 2 else x.sum() + y.sum()).backward()
    return log


@pytest.mark.parametrize("case", [0, 1, 2])
def test_full_backward_hook_sees_none_for_unused_outputs_like_torch(case):
    # an output without a gradient gives None in grad_output; an input that needs none, zeros
    assert _full_backward_hook_log(flow, case) == _full_backward_hook_log(torch, case)


@pytest.mark.parametrize(
    "call",
    [
        lambda: flow.gather(flow.zeros(0), 0, flow.tensor([2])),
        lambda: flow.gather(
            flow.zeros(0, requires_grad=True), 0, flow.tensor(25, dtype=flow.int32)
        ),
        lambda: flow.zeros(0).scatter(0, flow.tensor([2]), flow.tensor([1.0])),
        lambda: flow.take_along_dim(flow.zeros(0), flow.tensor([1]), 0),
    ],
)
def test_indexing_an_empty_tensor_out_of_range_raises(call):
    # the gather kernel read element 0 in place of a bad index, which an empty input lacks
    with pytest.raises((RuntimeError, IndexError), match="out of bounds"):
        call().tolist()
