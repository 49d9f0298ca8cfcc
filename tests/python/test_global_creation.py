"""placement= and sbp= on randperm, eye, linspace, logspace, normal, the *_like functions and the
Tensor.new_* methods (one process, a one-rank placement)."""

import numpy as np
import pytest
import torch

import oneflow as flow
from oneflow.framework import creation
from oneflow.utils.global_view import global_mode

P = flow.placement("cpu", [0])
B = flow.sbp.broadcast
S0 = flow.sbp.split(0)

DETERMINISTIC = {
    "eye": lambda **k: flow.eye(4, 3, **k),
    "linspace": lambda **k: flow.linspace(-1.0, 2.0, 6, **k),
    "logspace": lambda **k: flow.logspace(0.0, 2.0, 5, base=2.0, **k),
}
RANDOM = {
    "randperm": lambda **k: flow.randperm(10, **k),
    "normal": lambda **k: flow.normal(2.0, 3.0, (4, 3), **k),
}
_X = np.arange(12, dtype=np.float32).reshape(4, 3)
LIKE = {
    "zeros_like": lambda x, **k: flow.zeros_like(x, **k),
    "ones_like": lambda x, **k: flow.ones_like(x, **k),
    "empty_like": lambda x, **k: flow.empty_like(x, **k),
    "full_like": lambda x, **k: flow.full_like(x, 7.5, **k),
}
RANDOM_LIKE = {
    "rand_like": lambda x, **k: flow.rand_like(x, **k),
    "randn_like": lambda x, **k: flow.randn_like(x, **k),
    "randint_like": lambda x, **k: creation.randint_like(x, 2, 9, **k),
}
NEW = {
    "new_zeros": lambda t, **k: t.new_zeros(2, 3, **k),
    "new_ones": lambda t, **k: t.new_ones((2, 3), **k),
    "new_empty": lambda t, **k: t.new_empty(2, 3, **k),
    "new_full": lambda t, **k: t.new_full((2, 3), 4.0, **k),
    "new_tensor": lambda t, **k: t.new_tensor([[1, 2, 3], [4, 5, 6]], **k),
}


def _check_global(r, sbp, like):
    assert r.is_global
    assert r.placement == P
    assert r.sbp == (sbp,)
    assert r.shape == like.shape
    assert r.dtype == like.dtype


@pytest.mark.parametrize("name", sorted(DETERMINISTIC))
@pytest.mark.parametrize("sbp", [B, S0, [S0], (B,)])
def test_deterministic_global(name, sbp):
    make = DETERMINISTIC[name]
    local = make()
    r = make(placement=P, sbp=sbp)
    _check_global(r, sbp[0] if isinstance(sbp, (list, tuple)) else sbp, local)
    np.testing.assert_array_equal(r.numpy(), local.numpy())


@pytest.mark.parametrize("name", sorted(DETERMINISTIC) + sorted(RANDOM))
def test_default_sbp_is_broadcast(name):
    make = {**DETERMINISTIC, **RANDOM}[name]
    r = make(placement=P)
    assert r.is_global and r.sbp == (B,)


@pytest.mark.parametrize("name", sorted(RANDOM))
@pytest.mark.parametrize("sbp", [B, S0])
def test_random_global_matches_seeded_local(name, sbp):
    make = RANDOM[name]
    flow.manual_seed(0)
    local = make()
    flow.manual_seed(0)
    r = make(placement=P, sbp=sbp)
    _check_global(r, sbp, local)
    np.testing.assert_array_equal(r.numpy(), local.numpy())


def test_randperm_global_is_permutation():
    r = flow.randperm(50, placement=P, sbp=S0)
    assert r.dtype == flow.int64
    assert sorted(r.numpy().tolist()) == list(range(50))
    g = flow.Generator()
    g.manual_seed(3)
    r = flow.randperm(8, generator=g, dtype=flow.int32, placement=P, sbp=B)
    assert r.dtype == flow.int32 and sorted(r.numpy().tolist()) == list(range(8))


def test_normal_global_distribution():
    r = flow.normal(5.0, 0.5, (200, 50), dtype=flow.float64, placement=P, sbp=S0)
    assert r.dtype == flow.float64 and r.shape == (200, 50)
    v = r.numpy()
    assert abs(v.mean() - 5.0) < 0.05 and abs(v.std() - 0.5) < 0.05
    assert flow.normal(0.0, 1.0, 6, placement=P).shape == (6,)


def test_normal_tensor_form_refuses_placement():
    with pytest.raises(TypeError):
        flow.normal(flow.zeros(3), 1.0, placement=P, sbp=B)


@pytest.mark.parametrize(
    "make",
    [
        lambda **k: flow.eye(3, **k),
        lambda **k: flow.linspace(0, 1, 4, **k),
        lambda **k: flow.logspace(0, 1, 4, **k),
        lambda **k: flow.normal(0.0, 1.0, (2, 2), **k),
        lambda **k: flow.randperm(4, dtype=flow.float32, **k),
    ],
)
def test_requires_grad(make):
    r = make(placement=P, sbp=B, requires_grad=True)
    assert r.is_global and r.requires_grad and r.is_leaf
    assert not make(placement=P, sbp=B).requires_grad


def test_randperm_integer_requires_grad_refused():
    with pytest.raises(RuntimeError):
        flow.randperm(4, requires_grad=True)
    with pytest.raises(RuntimeError):
        flow.randperm(4, requires_grad=True, placement=P, sbp=B)


@pytest.mark.parametrize("name", sorted(LIKE))
@pytest.mark.parametrize("sbp", [B, S0])
def test_like_local_input_with_placement(name, sbp):
    x = flow.tensor(_X)
    local = LIKE[name](x)
    r = LIKE[name](x, placement=P, sbp=sbp)
    _check_global(r, sbp, local)
    if name != "empty_like":  # (unspecified values)
        np.testing.assert_array_equal(r.numpy(), local.numpy())
    r = LIKE[name](x, placement=P, sbp=sbp, dtype=flow.float64, requires_grad=True)
    assert r.dtype == flow.float64 and r.requires_grad


@pytest.mark.parametrize("name", sorted(RANDOM_LIKE))
@pytest.mark.parametrize("sbp", [B, S0])
def test_random_like_local_input_with_placement(name, sbp):
    x = flow.tensor(_X)
    make = RANDOM_LIKE[name]
    flow.manual_seed(0)
    local = make(x)
    flow.manual_seed(0)
    r = make(x, placement=P, sbp=sbp)
    _check_global(r, sbp, local)
    np.testing.assert_array_equal(r.numpy(), local.numpy())


def test_random_like_ranges():
    x = flow.tensor(_X)
    u = flow.rand_like(x, placement=P, sbp=S0).numpy()
    assert (u >= 0).all() and (u < 1).all()
    i = creation.randint_like(x, 2, 9, placement=P, sbp=S0).numpy()
    assert (i >= 2).all() and (i < 9).all() and (i == np.round(i)).all()
    i = creation.randint_like(x.long(), 4, placement=P, sbp=B)
    assert i.dtype == flow.int64 and (i.numpy() < 4).all()


def test_flow_randint_like_takes_placement():
    r = flow.randint_like(flow.tensor(_X), 5, placement=P, sbp=S0)
    assert r.is_global and r.sbp == (S0,)


@pytest.mark.parametrize("name", sorted(LIKE) + sorted(RANDOM_LIKE))
def test_like_layout_of_global_input(name):
    make = {**LIKE, **RANDOM_LIKE}[name]
    g = flow.tensor(_X, placement=P, sbp=S0)
    assert make(g).sbp == (S0,)  # follows the input
    r = make(g, sbp=B)  # sbp alone: the input's placement
    assert r.is_global and r.placement == P and r.sbp == (B,)
    r = make(g, placement=P)  # an explicit placement wins: its default sbp
    assert r.is_global and r.sbp == (B,)
    r = make(g, placement=P, sbp=[S0])
    assert r.sbp == (S0,)


@pytest.mark.parametrize("name", sorted(NEW))
@pytest.mark.parametrize("sbp", [B, S0])
def test_new_methods_local_self_with_placement(name, sbp):
    t = flow.tensor(_X, dtype=flow.float64)
    local = NEW[name](t)
    r = NEW[name](t, placement=P, sbp=sbp)
    _check_global(r, sbp, local)
    assert r.dtype == flow.float64
    if name != "new_empty":  # (unspecified values)
        np.testing.assert_array_equal(r.numpy(), local.numpy())
    r = NEW[name](t, placement=P, sbp=sbp, dtype=flow.float32, requires_grad=True)
    assert r.dtype == flow.float32 and r.requires_grad


@pytest.mark.parametrize("name", sorted(NEW))
def test_new_methods_global_self(name):
    g = flow.tensor(_X, placement=P, sbp=S0)
    r = NEW[name](g)
    assert r.is_global and r.sbp == (B,)
    r = NEW[name](g, sbp=S0)
    assert r.is_global and r.placement == P and r.sbp == (S0,)
    assert not NEW[name](g, device="cpu").is_global


SBP_ONLY = {
    "randperm": lambda: flow.randperm(4, sbp=B),
    "eye": lambda: flow.eye(3, sbp=B),
    "linspace": lambda: flow.linspace(0, 1, 3, sbp=B),
    "logspace": lambda: flow.logspace(0, 1, 3, sbp=B),
    "normal": lambda: flow.normal(0.0, 1.0, (2,), sbp=B),
    **{n: (lambda f=f: f(flow.tensor(_X), sbp=B)) for n, f in {**LIKE, **RANDOM_LIKE}.items()},
    **{n: (lambda f=f: f(flow.tensor(_X), sbp=B)) for n, f in NEW.items()},
}


@pytest.mark.parametrize("name", sorted(SBP_ONLY))
def test_sbp_without_placement_raises(name):
    with pytest.raises(ValueError, match="sbp was given without a placement"):
        SBP_ONLY[name]()


@pytest.mark.parametrize(
    "make",
    [
        lambda: flow.eye(3),
        lambda: flow.randperm(5),
        lambda: flow.linspace(0, 1, 5),
        lambda: flow.logspace(0, 1, 5),
        lambda: flow.normal(0.0, 1.0, (3,)),
        lambda: flow.zeros_like(flow.tensor(_X)),
        lambda: flow.full_like(flow.tensor(_X), 2.0),
        lambda: creation.randint_like(flow.tensor(_X), 3),
    ],
)
def test_global_mode(make):
    with global_mode(True, placement=P, sbp=B):
        r = make()
    assert r.is_global and r.placement == P and r.sbp == (B,)
    assert not make().is_global


def test_global_mode_eye_values():
    with global_mode(True, placement=P, sbp=S0):
        r = flow.eye(3)
        with global_mode(False):
            assert not flow.eye(3).is_global
    assert r.is_global and r.sbp == (S0,)
    np.testing.assert_array_equal(r.numpy(), np.eye(3, dtype=np.float32))


def test_local_calls_match_torch():
    np.testing.assert_array_equal(flow.eye(3, 5).numpy(), torch.eye(3, 5).numpy())
    np.testing.assert_allclose(
        flow.linspace(-2, 3, 11).numpy(), torch.linspace(-2, 3, 11).numpy(), rtol=1e-6
    )
    np.testing.assert_allclose(
        flow.logspace(0, 3, 4, base=2.0).numpy(), torch.logspace(0, 3, 4, base=2.0).numpy()
    )
    assert flow.linspace(0, 1, 3, dtype=flow.float64).dtype == flow.float64
    assert flow.linspace(0, 1, steps=3, requires_grad=True).requires_grad
    assert flow.randperm(6).dtype == flow.int64 and not flow.randperm(6).is_global
    assert sorted(flow.randperm(n=6).numpy().tolist()) == list(range(6))
    assert flow.randperm(4, dtype=flow.float32, requires_grad=True).requires_grad
    assert flow.normal(0.0, 1.0, (2, 3)).shape == (2, 3)
    x = flow.tensor(_X)
    assert not flow.zeros_like(x).is_global and not x.new_full((2,), 1.0).is_global
    assert x.new_tensor([1, 2]).dtype == flow.float32


def test_local_out_forms_unchanged():
    out = flow.empty(5, dtype=flow.int64)
    assert flow.randperm(5, out=out) is out
    assert sorted(out.numpy().tolist()) == list(range(5))
    out = flow.empty(3)
    assert flow.linspace(0, 1, 3, out=out) is out
    np.testing.assert_allclose(out.numpy(), [0.0, 0.5, 1.0])
