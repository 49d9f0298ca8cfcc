"""The smaller names of oneflow.* and oneflow.Tensor (aliases, in-place forms, queries), each
checked against PyTorch or NumPy; and a check that every name of the public API list that
resolves in these two areas is referenced by some test."""

import pathlib
import re

import numpy as np
import pytest
import torch

import oneflow as flow

ROOT = pathlib.Path(__file__).resolve().parents[2]
API_LIST = ROOT.parent / "shared" / "api" / "oneflow_public_api.txt"


def same(a, b, **kw):
    np.testing.assert_allclose(
        np.asarray(a.numpy(), dtype=np.float64), np.asarray(b.numpy(), dtype=np.float64), **kw
    )


def pair(values, dtype=None):
    a = np.asarray(values, dtype=dtype)
    return flow.tensor(a), torch.tensor(a)


def test_inplace_methods_match_torch():
    cases = [
        ("addcdiv_", lambda t, lib: (lib.tensor([1.0, 2.0, 4.0]), lib.tensor([2.0, 4.0, 8.0]))),
        ("addcmul_", lambda t, lib: (lib.tensor([1.0, 2.0, 4.0]), lib.tensor([2.0, 4.0, 8.0]))),
        ("ceil_", lambda t, lib: ()),
        ("round_", lambda t, lib: ()),
        ("clip_", lambda t, lib: (-0.5, 0.5)),
        ("div_", lambda t, lib: (2.0,)),
        ("mul_", lambda t, lib: (3.0,)),
        ("sub_", lambda t, lib: (lib.tensor([1.0, 1.0, 1.0]),)),
        ("erfinv_", lambda t, lib: ()),
        ("gt_", lambda t, lib: (0.0,)),
        ("zero_", lambda t, lib: ()),
    ]
    for name, args in cases:
        f, t = pair([0.25, -0.75, 0.5], np.float32)
        out = getattr(f, name)(*args(f, flow))
        getattr(t, name)(*args(t, torch))
        assert out is f, name
        same(f, t, rtol=1e-6, err_msg=name)
    f, t = pair([[0.0, 0.0], [0.0, 0.0]], np.float32)
    idx = [[1, 0]]
    f.scatter_add_(0, flow.tensor(idx), flow.ones(1, 2))
    t.scatter_add_(0, torch.tensor(idx), torch.ones(1, 2))
    same(f, t)
    f.index_add_(1, flow.tensor([1]), flow.ones(2, 1))
    t.index_add_(1, torch.tensor([1]), torch.ones(2, 1))
    same(f, t)
    g = flow.zeros(1000)
    g.bernoulli_(0.25)
    assert 150 < g.sum().item() < 350 and set(np.unique(g.numpy())) <= {0.0, 1.0}


def test_views_copies_and_queries():
    f, t = pair(np.arange(6.0).reshape(2, 3), np.float32)
    same(f.clone(), t.clone())
    same(f.t().contiguous(), t.t().contiguous())
    assert f.t().contiguous().is_contiguous()
    same(f.expand(4, 2, 3), t.expand(4, 2, 3))
    same(f[:1].expand_as(f), t[:1].expand_as(t))
    same(flow.expand(f[:1], 2, 3), t[:1].expand(2, 3))
    same(flow.ones(3, 2).view_as(f) * 0 + f.reshape_as(flow.ones(3, 2)).view_as(f), t)
    same(f.swapdims(0, 1), t.swapdims(0, 1))
    same(flow.swapdims(f, 0, 1), torch.swapdims(t, 0, 1))
    z = flow.zeros(2, 3)
    z.copy_(f)
    same(z, t)
    assert f.element_size() == t.element_size() == 4
    assert f.nelement() == t.nelement() == 6
    assert f[1:].storage_offset() == t[1:].storage_offset() == 3
    assert f.byte().dtype == flow.uint8
    assert not f.is_global and not f.is_lazy and not f.is_pinned()
    x = flow.ones(2)
    assert x.requires_grad_() is x and x.requires_grad
    b = flow.tensor([[0, 1], [2, 0]])
    assert b.nonzero().numpy().tolist() == torch.tensor([[0, 1], [2, 0]]).nonzero().tolist()
    assert flow.nonzero(b).numpy().tolist() == b.argwhere().numpy().tolist()
    assert flow.argwhere(b).numpy().tolist() == [[0, 1], [1, 0]]


def test_aliases_and_creation_helpers():
    f, t = pair([1.5, 2.0, 3.0], np.float64)
    same(flow.arccosh(f), torch.arccosh(t))
    same(f.arccosh(), t.arccosh())
    same(flow.arcsinh(f), torch.arcsinh(t))
    same(f.arcsinh(), t.arcsinh())
    same(flow.zeros_like(f), torch.zeros_like(t))
    assert flow.is_tensor(f) and not flow.is_tensor([1])
    a = flow.as_tensor([1, 2])
    assert a.dtype == flow.int64 and a.numpy().tolist() == [1, 2]
    r = flow.randint_like(flow.zeros(50, dtype=flow.int32), 3, 7)
    assert r.dtype == flow.int32 and r.numpy().min() >= 3 and r.numpy().max() < 7
    same(flow.broadcast_like(flow.ones(1, 3), flow.zeros(4, 3)), torch.ones(4, 3))
    same(flow.concat([f, f]), torch.cat([t, t]))
    same(flow.row_stack([f, f]), torch.row_stack([t, t]))
    for n in ["atleast_1d", "atleast_2d", "atleast_3d"]:
        assert tuple(getattr(flow, n)(flow.tensor(1.0)).shape) == tuple(
            getattr(torch, n)(torch.tensor(1.0)).shape
        )
    x = flow.tensor([0.4, 1.6])
    flow.ceil_(x)
    assert x.numpy().tolist() == [1.0, 2.0]
    flow.round_(x.mul_(0.75))
    assert x.numpy().tolist() == [1.0, 2.0]
    same(flow.adaptive_avg_pool1d(flow.ones(1, 2, 6), 3), torch.ones(1, 2, 3))


def test_grad_mode_and_defaults():
    x = flow.ones(2, requires_grad=True)
    with flow.no_grad():
        with flow.enable_grad():
            assert (x * 2).requires_grad
    with flow.inference_mode():
        assert not (x * 2).requires_grad
    old = flow.get_default_dtype()
    try:
        flow.set_default_dtype(flow.float64)
        assert flow.ones(1).dtype == flow.float64
        flow.set_default_tensor_type(flow.FloatTensor)
        assert flow.ones(1).dtype == flow.float32
    finally:
        flow.set_default_dtype(old)
    for name, dtype in [
        ("BoolTensor", flow.bool),
        ("ByteTensor", flow.uint8),
        ("CharTensor", flow.int8),
        ("HalfTensor", flow.float16),
        ("IntTensor", flow.int32),
    ]:
        assert getattr(flow, name)(2).dtype == dtype


def _resolves(name):
    obj = flow
    for part in name.split(".")[1:]:
        if not hasattr(obj, part):
            return False
        obj = getattr(obj, part)
    return True


@pytest.mark.skipif(not API_LIST.exists(), reason="the shared API list is not next to the repo")
def test_every_resolved_name_is_referenced_by_a_test():
    names = [n.strip() for n in API_LIST.read_text().splitlines() if n.strip()]
    text = "\n".join(p.read_text() for p in (ROOT / "tests" / "python").glob("*.py"))
    untested = []
    for name in names:
        parts = name.split(".")
        in_area = len(parts) == 2 or (len(parts) == 3 and parts[1] == "Tensor")
        if in_area and _resolves(name):
            leaf = re.escape(parts[-1])
            if not re.search(r"(\.|\"|')" + leaf + r"(\b|_)", text):
                untested.append(name)
    assert not untested, f"names that resolve but no test mentions: {untested}"


def test_set_num_threads():
    old = flow.get_num_threads()
    try:
        flow.set_num_threads(1)
        assert flow.get_num_threads() == 1
        x = flow.randn(1000, 1000)
        np.testing.assert_allclose((x + x).numpy(), 2 * x.numpy())
    finally:
        flow.set_num_threads(old)
    with pytest.raises(RuntimeError, match="set_num_threads"):
        flow.set_num_threads(0)
