"""oneflow.nn.CombinedMarginLoss against a NumPy reference of OneFlow's combined_margin_loss
kernel (values and the gradient dy * m1 * sin(m1 * theta + m2) / sin(theta) at the label, dy
elsewhere; out-of-range labels leave the row unchanged) over random shapes and ArcFace, CosFace,
A-Softmax and mixed margins; and oneflow.nn.CoinFlip's dtype, shape, frequency of ones,
reproducibility with random_seed, global results, signatures and argument errors."""

import inspect

import numpy as np
import pytest

import oneflow as flow

MARGINS = [
    (1.0, 0.5, 0.0),  # ArcFace
    (1.0, 0.0, 0.35),  # CosFace
    (2.0, 0.0, 0.0),  # A-Softmax
    (0.3, 0.5, 0.4),
    (1.35, 0.25, 0.1),
    (1.0, 0.0, 0.0),  # identity
]


# ---- NumPy reference of OneFlow's kernel -----------------------------------------------------


def ref_margin(x, label, m1, m2, m3, dy):
    """(y, dx) of combined_margin_loss for x of shape (N, C), computed in float64."""
    x = x.astype(np.float64)
    y = x.copy()
    dx = dy.astype(np.float64).copy()
    n, c = x.shape
    for i in range(n):
        j = int(label[i])
        if not 0 <= j < c:
            continue
        theta = np.arccos(x[i, j])
        y[i, j] = np.cos(m1 * theta + m2) - m3
        dx[i, j] = dy[i, j] * np.sin(m1 * theta + m2) * m1 / np.sin(theta)
    return y, dx


def _run(x_np, label_np, margins, dy_np, label_dtype=flow.int64):
    x = flow.tensor(x_np, requires_grad=True)
    label = flow.tensor(label_np, dtype=label_dtype)
    out = flow.nn.CombinedMarginLoss(*margins)(x, label)
    (out * flow.tensor(dy_np)).sum().backward()
    return out, x.grad


# ---- CombinedMarginLoss ----------------------------------------------------------------------


def test_combined_margin_loss_documented_example():
    x = np.array(
        [[-0.7027179, 0.0230609], [-0.02721931, -0.16056311], [-0.4565852, -0.64471215]],
        dtype=np.float32,
    )
    label = np.array([0, 1, 1])
    out = flow.nn.CombinedMarginLoss(0.3, 0.5, 0.4)(
        flow.tensor(x), flow.tensor(label, dtype=flow.int32)
    )
    expected = np.array([[-0.0423, 0.0231], [-0.0272, 0.1237], [-0.4566, -0.0204]])
    assert out.dtype == flow.float32
    np.testing.assert_allclose(out.numpy(), expected, atol=1e-4)


@pytest.mark.parametrize("margins", MARGINS)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_combined_margin_loss_matches_reference(margins, seed):
    rng = np.random.default_rng(seed)
    n, c = int(rng.integers(1, 9)), int(rng.integers(2, 13))
    x = rng.uniform(-0.95, 0.95, size=(n, c)).astype(np.float32)
    label = rng.integers(0, c, size=n)
    dy = rng.standard_normal((n, c)).astype(np.float32)
    out, grad = _run(x, label, margins, dy)
    y_ref, dx_ref = ref_margin(x, label, *margins, dy)
    assert out.shape == x.shape and out.dtype == flow.float32
    np.testing.assert_allclose(out.numpy(), y_ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(grad.numpy(), dx_ref, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("margins", MARGINS)
def test_combined_margin_loss_float64_and_int32_labels(margins):
    rng = np.random.default_rng(7)
    x = rng.uniform(-0.9, 0.9, size=(5, 6))
    label = rng.integers(0, 6, size=5)
    dy = rng.standard_normal((5, 6))
    out, grad = _run(x, label, margins, dy, label_dtype=flow.int32)
    y_ref, dx_ref = ref_margin(x, label, *margins, dy)
    assert out.dtype == flow.float64 and grad.dtype == flow.float64
    np.testing.assert_allclose(out.numpy(), y_ref, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(grad.numpy(), dx_ref, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("margins", [(1.0, 0.5, 0.0), (1.0, 0.0, 0.35), (0.3, 0.5, 0.4)])
def test_combined_margin_loss_out_of_range_labels_leave_rows_unchanged(margins):
    rng = np.random.default_rng(3)
    n, c = 6, 5
    x = rng.uniform(-0.9, 0.9, size=(n, c)).astype(np.float32)
    x[1, 0] = 1.0  # column 0 of an ignored row: still no NaN in value or gradient
    label = np.array([2, -1, 0, 5, -7, 4])
    dy = rng.standard_normal((n, c)).astype(np.float32)
    out, grad = _run(x, label, margins, dy)
    y_ref, dx_ref = ref_margin(x, label, *margins, dy)
    for i in (1, 3, 4):
        np.testing.assert_array_equal(out.numpy()[i], x[i])
        np.testing.assert_array_equal(grad.numpy()[i], dy[i])
    np.testing.assert_allclose(out.numpy(), y_ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(grad.numpy(), dx_ref, rtol=1e-4, atol=1e-4)


def test_combined_margin_loss_cosface_is_a_shift():
    rng = np.random.default_rng(11)
    x = rng.uniform(-1.0, 1.0, size=(4, 3)).astype(np.float32)
    x[0, 1] = 1.0  # exactly 1: acos would have an infinite slope, the shift has none
    label = np.array([1, 0, 2, 2])
    dy = rng.standard_normal((4, 3)).astype(np.float32)
    out, grad = _run(x, label, (1.0, 0.0, 0.35), dy)
    expected = x.copy()
    expected[np.arange(4), label] -= 0.35
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(grad.numpy(), dy, rtol=1e-6, atol=1e-6)


def test_combined_margin_loss_flattens_trailing_axes():
    rng = np.random.default_rng(5)
    x = rng.uniform(-0.9, 0.9, size=(3, 2, 4)).astype(np.float32)
    label = np.array([7, 0, 3])
    dy = rng.standard_normal((3, 2, 4)).astype(np.float32)
    out, grad = _run(x, label, (1.0, 0.5, 0.0), dy)
    y_ref, dx_ref = ref_margin(x.reshape(3, 8), label, 1.0, 0.5, 0.0, dy.reshape(3, 8))
    assert out.shape == (3, 2, 4)
    np.testing.assert_allclose(out.numpy().reshape(3, 8), y_ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(grad.numpy().reshape(3, 8), dx_ref, rtol=1e-4, atol=1e-4)


def test_combined_margin_loss_module_and_signature():
    m = flow.nn.CombinedMarginLoss(1.0, 0.5, 0.0)
    assert isinstance(m, flow.nn.Module)
    assert "m2=0.5" in repr(m)
    params = inspect.signature(flow.nn.CombinedMarginLoss).parameters
    assert [(p.name, p.default) for p in params.values()] == [
        ("m1", 1.0),
        ("m2", 0.0),
        ("m3", 0.0),
    ]
    d = flow.nn.CombinedMarginLoss()
    assert (d.m1, d.m2, d.m3) == (1.0, 0.0, 0.0)


def test_combined_margin_loss_errors():
    x = flow.rand(3, 4)
    loss = flow.nn.CombinedMarginLoss(1.0, 0.5, 0.0)
    with pytest.raises(TypeError):
        loss(x, flow.tensor([0.0, 1.0, 2.0]))
    with pytest.raises(TypeError):
        loss(flow.tensor([[0, 1], [1, 0]]), flow.tensor([0, 1]))
    with pytest.raises(ValueError):
        loss(flow.rand(4), flow.tensor([0, 1, 2, 3]))
    with pytest.raises(ValueError):
        loss(x, flow.tensor([0, 1]))
    with pytest.raises(TypeError):
        flow.nn.CombinedMarginLoss("1.0")


# ---- CoinFlip --------------------------------------------------------------------------------


def test_coin_flip_signature_and_defaults():
    params = inspect.signature(flow.nn.CoinFlip).parameters
    assert [(p.name, p.default) for p in params.values()] == [
        ("batch_size", 1),
        ("random_seed", None),
        ("probability", 0.5),
        ("device", None),
        ("placement", None),
        ("sbp", None),
    ]
    out = flow.nn.CoinFlip()()
    assert isinstance(flow.nn.CoinFlip(), flow.nn.Module)
    assert out.dtype == flow.int8 and out.shape == (1,) and out.device == flow.device("cpu")
    assert int(out.numpy()[0]) in (0, 1)


@pytest.mark.parametrize("p", [0.5, 0.2, 0.9])
def test_coin_flip_frequency(p):
    out = flow.nn.CoinFlip(batch_size=20000, random_seed=123, probability=p)()
    assert out.dtype == flow.int8 and out.shape == (20000,)
    values = out.numpy()
    assert set(np.unique(values)) <= {0, 1}
    assert abs(values.mean() - p) < 0.02


def test_coin_flip_extreme_probabilities():
    assert flow.nn.CoinFlip(1000, probability=0.0)().numpy().sum() == 0
    assert flow.nn.CoinFlip(1000, probability=1.0)().numpy().sum() == 1000
    assert flow.nn.CoinFlip(0)().shape == (0,)


def test_coin_flip_random_seed_reproducible():
    a = flow.nn.CoinFlip(64, random_seed=42)
    b = flow.nn.CoinFlip(64, random_seed=42)
    first_a, first_b = a().numpy(), b().numpy()
    np.testing.assert_array_equal(first_a, first_b)
    np.testing.assert_array_equal(a().numpy(), b().numpy())
    c = flow.nn.CoinFlip(64, random_seed=43)
    assert not np.array_equal(first_a, c().numpy())
    # The module's own generator is independent of the default one.
    flow.manual_seed(0)
    d = flow.nn.CoinFlip(64, random_seed=42)
    flow.rand(100)
    np.testing.assert_array_equal(d().numpy(), first_a)


def test_coin_flip_device_argument():
    out = flow.nn.CoinFlip(4, device="cpu")()
    assert out.device == flow.device("cpu") and not out.is_global
    out = flow.nn.CoinFlip(4, device=flow.device("cpu"))()
    assert out.device == flow.device("cpu")


def test_coin_flip_global():
    placement = flow.placement("cpu", ranks=[0])
    for sbp in (flow.sbp.split(0), flow.sbp.broadcast, [flow.sbp.broadcast]):
        out = flow.nn.CoinFlip(16, random_seed=5, placement=placement, sbp=sbp)()
        assert out.is_global and out.placement == placement
        assert out.dtype == flow.int8 and out.shape == (16,)
        local = flow.nn.CoinFlip(16, random_seed=5)()
        np.testing.assert_array_equal(out.numpy(), local.numpy())


def test_coin_flip_errors():
    placement = flow.placement("cpu", ranks=[0])
    with pytest.raises(ValueError):
        flow.nn.CoinFlip(4, device="cpu", placement=placement, sbp=flow.sbp.broadcast)
    with pytest.raises(ValueError):
        flow.nn.CoinFlip(4, sbp=flow.sbp.broadcast)
    with pytest.raises(ValueError):
        flow.nn.CoinFlip(4, placement=placement)
    with pytest.raises(TypeError):
        flow.nn.CoinFlip(4, placement=placement, sbp="split")
    with pytest.raises(ValueError):
        flow.nn.CoinFlip(-1)
    with pytest.raises(ValueError):
        flow.nn.CoinFlip(2.5)
    for p in (-0.1, 1.5):
        with pytest.raises(ValueError):
            flow.nn.CoinFlip(4, probability=p)
    with pytest.raises(TypeError):
        flow.nn.CoinFlip(4, random_seed="7")
