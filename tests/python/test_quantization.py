"""Quantization-aware training modules of oneflow.nn (MinMaxObserver,
MovingAverageMinMaxObserver, FakeQuantization, Quantization, QatConv1d/2d/3d) against a NumPy
reference of OneFlow's formulas written here, over random shapes and every formula, scheme,
bit width and per-layer/per-channel choice; the straight-through gradient; FusedBatchNorm1d/2d/3d
against PyTorch's batch_norm + addend + relu in train and eval mode; and the argument errors."""

import numpy as np
import pytest
import torch

import oneflow as flow

BITS = range(2, 9)
GOOGLE = [("google", s, p) for s in ("symmetric", "affine") for p in (True, False)]
ALL_CONFIGS = GOOGLE + [("cambricon", s, True) for s in ("symmetric", "affine")]


# ---- NumPy reference of OneFlow's kernels ------------------------------------------------


def ref_observer(x, formula, bit, scheme, per_layer):
    """(scale, zero_point) of min_max_observer, in x's dtype."""
    dt = x.dtype.type
    rows = x.reshape(1, -1) if per_layer else x.reshape(x.shape[0], -1)
    hi, lo = rows.max(axis=1), rows.min(axis=1)
    absmax = np.maximum(np.abs(hi), np.abs(lo))
    zero = np.zeros_like(hi)
    if formula == "cambricon":
        return (np.floor(np.log2(absmax)) - dt(bit - 2)).astype(dt), zero
    if scheme == "symmetric":
        return (absmax / dt(2 ** (bit - 1) - 1)).astype(dt), zero
    scale = ((hi - lo) / dt(2**bit - 1)).astype(dt)
    return scale, (-np.rint(lo / scale)).astype(dt)


def _half_away(z):
    return np.where(z >= 0, np.floor(z + 0.5), np.ceil(z - 0.5))


def ref_quant(x, scale, zero_point, formula, bit, scheme, dequantize):
    """fake_quantization (dequantize=True) or quantization (False) of OneFlow's kernels."""
    dt = x.dtype.type
    smin, smax = -(2 ** (bit - 1)), 2 ** (bit - 1) - 1
    if formula == "cambricon":
        step = dt(2.0 ** int(scale.reshape(-1)[0]))
        q = np.clip(np.rint(x / step), smin, smax)
        return (q * step if dequantize else q).astype(dt)
    shape = (scale.size,) + (1,) * (x.ndim - 1) if scale.size > 1 else (1,) * x.ndim
    s = scale.astype(dt).reshape(shape)
    if scheme == "symmetric":
        q = np.clip(np.rint(x / s), smin, smax)
        return (q * s if dequantize else q).astype(dt)
    z = _half_away(zero_point.astype(dt)).reshape(shape).astype(dt)
    q = np.clip(np.rint(x / s + z), 0, 2**bit - 1)
    return ((q - z) * s if dequantize else q).astype(dt)


class RefMovingAverage:
    """moving_average_min_max_observer with its two statistics held as float32 scalars."""

    def __init__(self, formula, bit, scheme, momentum, stop_update_after_iters=1):
        self.formula, self.bit, self.scheme = formula, bit, scheme
        self.m = np.float32(momentum)
        self.one_minus_m = np.float32(1 - momentum)
        self.stop = stop_update_after_iters
        self.mmax = np.float32(0)
        self.mmin = np.float32(0)

    def _ema(self, old, new):
        return new if old == 0 else np.float32(old * self.m + new * self.one_minus_m)

    def __call__(self, x, step, training=True):
        if training and step <= self.stop:
            hi, lo = np.float32(x.max()), np.float32(x.min())
            if self.formula == "google" and self.scheme == "affine":
                self.mmax = self._ema(self.mmax, hi)
                self.mmin = self._ema(self.mmin, lo)
            else:
                self.mmax = self._ema(self.mmax, max(abs(hi), abs(lo)))
                self.mmin = self.mmax
        if self.formula == "cambricon":
            scale = np.floor(np.log2(self.mmax)) - (self.bit - 2)
            return np.array([scale], np.float32), np.zeros(1, np.float32)
        if self.scheme == "symmetric":
            scale = self.mmax / np.float32(2 ** (self.bit - 1) - 1)
            return np.array([scale], np.float32), np.zeros(1, np.float32)
        scale = np.float32((self.mmax - self.mmin) / np.float32(2**self.bit - 1))
        return np.array([scale], np.float32), np.array([-self.mmin / scale], np.float32)


def _shape(rng, ndim, low=1, high=6):
    return tuple(int(s) for s in rng.integers(low, high, size=ndim))


def _rand(rng, shape, dtype=np.float32):
    return (rng.standard_normal(shape) * rng.uniform(0.1, 4.0)).astype(dtype)


def _np(t):
    return t.detach().cpu().numpy()


# ---- MinMaxObserver ----------------------------------------------------------------------


@pytest.mark.parametrize("formula,scheme,per_layer", ALL_CONFIGS)
def test_min_max_observer_matches_reference(device, formula, scheme, per_layer):
    rng = np.random.default_rng(11)
    for bit in BITS:
        for ndim in (1, 2, 4) if per_layer else (2, 4):
            x = _rand(rng, _shape(rng, ndim, 2, 7))
            obs = flow.nn.MinMaxObserver(
                quantization_formula=formula,
                quantization_bit=bit,
                quantization_scheme=scheme,
                per_layer_quantization=per_layer,
            )
            scale, zero_point = obs(flow.tensor(x, device=device))
            want_scale, want_zp = ref_observer(x, formula, bit, scheme, per_layer)
            n = 1 if per_layer else x.shape[0]
            assert tuple(scale.shape) == (n,) and tuple(zero_point.shape) == (n,)
            assert scale.dtype == flow.float32 and zero_point.dtype == flow.float32
            np.testing.assert_allclose(_np(scale), want_scale, rtol=1e-6, atol=0)
            np.testing.assert_array_equal(_np(zero_point), want_zp)


def test_min_max_observer_known_values_and_dtype(device):
    x = np.array([[-1.0, 0.5], [2.0, -4.0], [0.25, 1.0]], np.float64)
    xt = flow.tensor(x, device=device)
    scale, zp = flow.nn.MinMaxObserver()(xt)
    assert scale.dtype == flow.float64 and zp.dtype == flow.float64
    np.testing.assert_allclose(_np(scale), [4.0 / 127])
    np.testing.assert_array_equal(_np(zp), [0.0])
    scale, zp = flow.nn.MinMaxObserver(
        quantization_scheme="affine", per_layer_quantization=False, quantization_bit=4
    )(xt)
    np.testing.assert_allclose(_np(scale), [1.5 / 15, 6.0 / 15, 0.75 / 15])
    # -round(min / scale) per row: -round(-1 / 0.1), -round(-4 / 0.4), -round(0.25 / 0.05)
    np.testing.assert_array_equal(_np(zp), [10.0, 10.0, -5.0])
    scale, zp = flow.nn.MinMaxObserver(quantization_formula="cambricon")(xt)
    # floor(log2(4)) - (8 - 2) = -4
    np.testing.assert_array_equal(_np(scale), [-4.0])
    np.testing.assert_array_equal(_np(zp), [0.0])


def test_min_max_observer_passes_no_gradient(device):
    x = flow.randn(3, 4, device=device, requires_grad=True)
    scale, zero_point = flow.nn.MinMaxObserver(quantization_scheme="affine")(x)
    assert not scale.requires_grad and not zero_point.requires_grad


# ---- FakeQuantization / Quantization -----------------------------------------------------


def _scale_for(rng, x, formula, bit, scheme, per_layer):
    """The observer's scale, sometimes shrunk so that some values clamp at the range ends."""
    scale, zp = ref_observer(x, formula, bit, scheme, per_layer)
    if formula == "google" and rng.random() < 0.5:
        scale = (scale * np.float32(0.6)).astype(np.float32)
        if scheme == "affine":
            zp = (zp + np.float32(rng.integers(-3, 4))).astype(np.float32)
    if formula == "cambricon" and rng.random() < 0.5:
        scale = (scale - 1).astype(np.float32)
    return scale, zp


@pytest.mark.parametrize("formula,scheme,per_layer", ALL_CONFIGS)
def test_fake_quantization_matches_reference(device, formula, scheme, per_layer):
    rng = np.random.default_rng(5)
    for bit in BITS:
        for ndim in (1, 3, 4) if per_layer else (3, 4):
            x = _rand(rng, _shape(rng, ndim, 2, 6))
            scale, zp = _scale_for(rng, x, formula, bit, scheme, per_layer)
            fq = flow.nn.FakeQuantization(
                quantization_formula=formula, quantization_bit=bit, quantization_scheme=scheme
            )
            out = fq(
                flow.tensor(x, device=device),
                flow.tensor(scale, device=device),
                flow.tensor(zp, device=device),
            )
            want = ref_quant(x, scale, zp, formula, bit, scheme, True)
            assert tuple(out.shape) == x.shape and out.dtype == flow.float32
            np.testing.assert_allclose(_np(out), want, rtol=1e-6, atol=1e-7)
            # The output has at most 2^bit distinct values per quantized slice.
            rows = _np(out).reshape(1 if per_layer else x.shape[0], -1)
            assert all(len(np.unique(r)) <= 2**bit for r in rows)


@pytest.mark.parametrize("formula,scheme,per_layer", ALL_CONFIGS)
def test_quantization_matches_reference(device, formula, scheme, per_layer):
    rng = np.random.default_rng(7)
    for bit in BITS:
        x = _rand(rng, _shape(rng, 3, 2, 6))
        scale, zp = _scale_for(rng, x, formula, bit, scheme, per_layer)
        args = [flow.tensor(a, device=device) for a in (x, scale, zp)]
        kw = dict(quantization_formula=formula, quantization_bit=bit, quantization_scheme=scheme)
        q = flow.nn.Quantization(**kw)(*args)
        want = ref_quant(x, scale, zp, formula, bit, scheme, False)
        np.testing.assert_array_equal(_np(q), want)
        codes = _np(q)
        np.testing.assert_array_equal(codes, np.round(codes))
        if formula == "google" and scheme == "affine":
            assert codes.min() >= 0 and codes.max() <= 2**bit - 1
        else:
            assert codes.min() >= -(2 ** (bit - 1)) and codes.max() <= 2 ** (bit - 1) - 1
        # Dequantizing the code gives FakeQuantization's output.
        fq = _np(flow.nn.FakeQuantization(**kw)(*args))
        if formula == "cambricon":
            deq = codes * np.float32(2.0 ** int(scale[0]))
        else:
            view = (-1,) + (1,) * (x.ndim - 1) if scale.size > 1 else (1,) * x.ndim
            z = _half_away(zp).reshape(view) if scheme == "affine" else 0.0
            deq = (codes - z) * scale.reshape(view)
        np.testing.assert_allclose(fq, deq, rtol=1e-6, atol=1e-7)


def test_fake_quantization_known_values(device):
    x = flow.tensor([-2.0, -0.26, -0.25, 0.05, 0.25, 0.75, 3.0], device=device)
    one = flow.tensor([0.5], device=device)
    zero = flow.tensor([0.0], device=device)
    # 2-bit symmetric: codes clamp to [-2, 1]; -0.25/0.5 = -0.5 and 0.25/0.5 round to even (0).
    out = flow.nn.FakeQuantization(quantization_bit=2)(x, one, zero)
    np.testing.assert_array_equal(_np(out), [-1.0, -0.5, 0.0, 0.0, 0.0, 0.5, 0.5])
    # 2-bit affine, zero point 2.5 rounds half away from zero to 3: codes clamp to [0, 3].
    out = flow.nn.FakeQuantization(quantization_bit=2, quantization_scheme="affine")(
        x, one, flow.tensor([2.5], device=device)
    )
    np.testing.assert_array_equal(_np(out), [-1.5, -0.5, -0.5, 0.0, 0.0, 0.0, 0.0])
    # cambricon: shift -1 means a step of 0.5, 3-bit codes in [-4, 3].
    out = flow.nn.FakeQuantization(quantization_formula="cambricon", quantization_bit=3)(
        x, flow.tensor([-1.0], device=device), zero
    )
    np.testing.assert_array_equal(_np(out), [-2.0, -0.5, 0.0, 0.0, 0.0, 1.0, 1.5])


@pytest.mark.parametrize("formula,scheme,per_layer", ALL_CONFIGS)
def test_fake_quantization_gradient_is_straight_through(device, formula, scheme, per_layer):
    rng = np.random.default_rng(3)
    x = _rand(rng, (4, 3, 5))
    # A shrunk scale clamps many values: the gradient still passes to them unchanged.
    scale, zp = ref_observer(x, formula, 4, scheme, per_layer)
    if formula == "google":
        scale = (scale * np.float32(0.3)).astype(np.float32)
    xt = flow.tensor(x, device=device, requires_grad=True)
    st = flow.tensor(scale, device=device, requires_grad=True)
    zt = flow.tensor(zp, device=device)
    fq = flow.nn.FakeQuantization(
        quantization_formula=formula, quantization_bit=4, quantization_scheme=scheme
    )
    out = fq(xt, st, zt)
    assert out.requires_grad
    g = rng.standard_normal(x.shape).astype(np.float32)
    out.backward(flow.tensor(g, device=device))
    np.testing.assert_array_equal(_np(xt.grad), g)
    assert st.grad is None
    # Through a loss: d/dx sum(fq(x)^2) = 2 * fq(x).
    xt2 = flow.tensor(x, device=device, requires_grad=True)
    (fq(xt2, st.detach(), zt) ** 2).sum().backward()
    np.testing.assert_allclose(_np(xt2.grad), 2 * _np(out), rtol=1e-6)


def test_quantization_is_not_differentiable(device):
    x = flow.randn(2, 3, device=device, requires_grad=True)
    s, z = flow.nn.MinMaxObserver()(x)
    assert not flow.nn.Quantization()(x, s, z).requires_grad


# ---- MovingAverageMinMaxObserver ---------------------------------------------------------


@pytest.mark.parametrize(
    "formula,scheme", [("google", "symmetric"), ("google", "affine"), ("cambricon", "symmetric")]
)
def test_moving_average_observer_matches_reference(device, formula, scheme):
    rng = np.random.default_rng(21)
    for bit, momentum, stop in [(8, 0.95, 1), (4, 0.5, 3), (2, 0.9, 0), (6, 0.0, 10)]:
        obs = flow.nn.MovingAverageMinMaxObserver(
            stop_update_after_iters=stop,
            quantization_formula=formula,
            quantization_bit=bit,
            quantization_scheme=scheme,
            momentum=momentum,
        ).to(device)
        ref = RefMovingAverage(formula, bit, scheme, momentum, stop)
        for step in range(6):
            x = _rand(rng, _shape(rng, 3, 2, 6))
            step_t = flow.tensor([step], dtype=flow.int64, device=device)
            scale, zp = obs(flow.tensor(x, device=device), step_t)
            want_scale, want_zp = ref(x, step)
            assert tuple(scale.shape) == (1,) and tuple(zp.shape) == (1,)
            np.testing.assert_allclose(_np(scale), want_scale, rtol=1e-5)
            np.testing.assert_allclose(_np(zp), want_zp, rtol=1e-5, atol=1e-5)
            np.testing.assert_allclose(_np(obs.moving_max), [ref.mmax], rtol=1e-5)
            np.testing.assert_allclose(_np(obs.moving_min), [ref.mmin], rtol=1e-5)
        # Eval mode: the statistics stay as they are.
        obs.eval()
        before = _np(obs.moving_max).copy()
        scale, zp = obs(flow.tensor(_rand(rng, (3, 4)) * 100, device=device), 0)
        np.testing.assert_array_equal(_np(obs.moving_max), before)
        want_scale, want_zp = ref(None, 0, training=False)
        np.testing.assert_allclose(_np(scale), want_scale, rtol=1e-5)


def test_moving_average_observer_defaults_and_first_batch(device):
    obs = flow.nn.MovingAverageMinMaxObserver().to(device)
    assert obs.stop_update_after_iters == 1 and obs.momentum == 0.95
    assert obs.quantization_formula == "google" and obs.quantization_bit == 8
    assert obs.quantization_scheme == "symmetric"
    assert set(obs.state_dict()) == {"moving_max", "moving_min"}
    x = flow.tensor([[-3.0, 1.0], [2.0, 0.5]], device=device)
    scale, zp = obs(x, flow.tensor([0], dtype=flow.int64, device=device))
    np.testing.assert_allclose(_np(scale), [3.0 / 127])
    np.testing.assert_array_equal(_np(obs.moving_max), [3.0])
    obs(flow.tensor([[1.0, -1.0]], device=device), 1)
    np.testing.assert_allclose(_np(obs.moving_max), [3.0 * 0.95 + 1.0 * 0.05], rtol=1e-6)
    # After stop_update_after_iters the statistics are frozen.
    obs(flow.tensor([[10.0]], device=device), 2)
    np.testing.assert_allclose(_np(obs.moving_max), [3.0 * 0.95 + 1.0 * 0.05], rtol=1e-6)
    obs.reset_running_stats()
    np.testing.assert_array_equal(_np(obs.moving_max), [0.0])


# ---- QatConv -----------------------------------------------------------------------------


def _torch_conv(dims, x, w, b, m):
    fn = getattr(torch.nn.functional, f"conv{dims}d")
    if m.padding_mode != "zeros":
        pads = []
        for p in reversed(m.padding):
            pads += [p, p]
        x = torch.nn.functional.pad(x, pads, mode=m.padding_mode)
        return fn(x, w, b, m.stride, 0, m.dilation, m.groups)
    return fn(x, w, b, m.stride, m.padding, m.dilation, m.groups)


QAT_CASES = [
    (1, dict(stride=2, padding=1), "google", "symmetric", True),
    (1, dict(groups=2, bias=False), "google", "affine", False),
    (2, dict(padding=(1, 2), dilation=(2, 1)), "google", "affine", True),
    (2, dict(padding=1, padding_mode="reflect"), "google", "symmetric", False),
    (2, dict(stride=(2, 1), groups=2), "cambricon", "symmetric", True),
    (3, dict(padding=1), "google", "symmetric", False),
    (3, dict(stride=2), "google", "affine", True),
]


@pytest.mark.parametrize("dims,conv_kw,formula,scheme,per_layer", QAT_CASES)
def test_qat_conv_matches_reference(device, dims, conv_kw, formula, scheme, per_layer):
    rng = np.random.default_rng(dims * 10 + len(conv_kw))
    cls = getattr(flow.nn, f"QatConv{dims}d")
    bit = 8 if formula == "cambricon" else int(rng.integers(4, 9))
    momentum = 0.8
    m = cls(
        4,
        6,
        3,
        quantization_formula=formula,
        quantization_bit=bit,
        quantization_scheme=scheme,
        weight_quant_per_layer=per_layer,
        input_quant_momentum=momentum,
        **conv_kw,
    ).to(device)
    assert isinstance(m, getattr(flow.nn, f"Conv{dims}d"))
    ref_in = RefMovingAverage(formula, bit, scheme, momentum)
    w = _np(m.weight)
    b = None if m.bias is None else _np(m.bias)
    for _ in range(2):
        x = _rand(rng, (2, 4) + (7,) * dims)
        xt = flow.tensor(x, device=device, requires_grad=True)
        out = m(xt)
        # Reference: fake-quantize input and weight, then PyTorch's convolution.
        in_scale, in_zp = ref_in(x, 0)
        x_q = ref_quant(x, in_scale, in_zp, formula, bit, scheme, True)
        w_scale, w_zp = ref_observer(w, formula, bit, scheme, per_layer)
        w_q = ref_quant(w, w_scale, w_zp, formula, bit, scheme, True)
        tx = torch.tensor(x_q, requires_grad=True)
        tw = torch.tensor(w_q, requires_grad=True)
        tb = None if b is None else torch.tensor(b, requires_grad=True)
        want = _torch_conv(dims, tx, tw, tb, m)
        assert tuple(out.shape) == tuple(want.shape)
        np.testing.assert_allclose(_np(out), want.detach().numpy(), rtol=1e-4, atol=1e-5)
        g = rng.standard_normal(tuple(want.shape)).astype(np.float32)
        want.backward(torch.tensor(g))
        m.zero_grad()
        out.backward(flow.tensor(g, device=device))
        # Straight-through: the gradients are the convolution's at the quantized values.
        np.testing.assert_allclose(_np(xt.grad), tx.grad.numpy(), rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(_np(m.weight.grad), tw.grad.numpy(), rtol=1e-4, atol=1e-5)
        if tb is not None:
            np.testing.assert_allclose(_np(m.bias.grad), tb.grad.numpy(), rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(
            _np(m.input_min_max_observer.moving_max), [ref_in.mmax], rtol=1e-5
        )
    # Eval: the input statistics are frozen and used as they are.
    m.eval()
    x = _rand(rng, (2, 4) + (7,) * dims) * 3
    before = _np(m.input_min_max_observer.moving_max).copy()
    out = m(flow.tensor(x, device=device))
    np.testing.assert_array_equal(_np(m.input_min_max_observer.moving_max), before)
    in_scale, in_zp = ref_in(x, 0, training=False)
    x_q = ref_quant(x, in_scale, in_zp, formula, bit, scheme, True)
    w_scale, w_zp = ref_observer(w, formula, bit, scheme, per_layer)
    w_q = ref_quant(w, w_scale, w_zp, formula, bit, scheme, True)
    tb = None if b is None else torch.tensor(b)
    want = _torch_conv(dims, torch.tensor(x_q), torch.tensor(w_q), tb, m)
    np.testing.assert_allclose(_np(out), want.numpy(), rtol=1e-4, atol=1e-5)


def test_qat_conv_constructor_and_state(device):
    m = flow.nn.QatConv2d(16, 33, (3, 5), stride=(2, 1), padding=(4, 2), dilation=(3, 1))
    assert m.weight.shape == (33, 16, 3, 5) and m.stride == (2, 1) and m.padding == (4, 2)
    assert m.fake_quantizer.quantization_bit == 8
    assert m.input_min_max_observer.momentum == 0.95
    assert m.input_min_max_observer.stop_update_after_iters == 1
    assert m.weight_min_max_observer.per_layer_quantization is True
    assert set(m.state_dict()) == {
        "weight",
        "bias",
        "current_train_step",
        "input_min_max_observer.moving_max",
        "input_min_max_observer.moving_min",
    }
    assert m.current_train_step.dtype == flow.int64
    out = m.to(device)(flow.randn(2, 16, 10, 12, device=device))
    assert tuple(out.shape) == (2, 33, 6, 12)
    with pytest.raises(ValueError, match="cambricon"):
        flow.nn.QatConv1d(
            2, 2, 1, quantization_formula="cambricon", weight_quant_per_layer=False
        ).to(device)(flow.randn(1, 2, 3, device=device))


# ---- FusedBatchNorm ----------------------------------------------------------------------


FUSED = [(flow.nn.FusedBatchNorm1d, 2), (flow.nn.FusedBatchNorm1d, 3)]
FUSED += [(flow.nn.FusedBatchNorm2d, 4), (flow.nn.FusedBatchNorm3d, 5)]


def _torch_fused(x, addend, rm, rv, w, b, training, momentum, eps):
    y = torch.nn.functional.batch_norm(x, rm, rv, w, b, training, momentum, eps)
    return torch.relu(y if addend is None else y + addend)


@pytest.mark.parametrize("cls,ndim", FUSED)
@pytest.mark.parametrize("with_addend", [True, False])
@pytest.mark.parametrize("affine", [True, False])
def test_fused_batch_norm_matches_torch(device, cls, ndim, with_addend, affine):
    rng = np.random.default_rng(ndim * 4 + with_addend * 2 + affine)
    c = 3
    eps, momentum = 1e-3, 0.2
    m = cls(c, eps=eps, momentum=momentum, affine=affine).to(device)
    t_rm, t_rv = torch.zeros(c), torch.ones(c)
    if affine:
        wv = rng.uniform(0.5, 1.5, c).astype(np.float32)
        bv = rng.standard_normal(c).astype(np.float32)
        with flow.no_grad():
            m.weight.copy_(flow.tensor(wv, device=device))
            m.bias.copy_(flow.tensor(bv, device=device))
    for training in (True, True, False):
        m.train(training)
        shape = (4, c) + _shape(rng, ndim - 2, 2, 5)
        x = _rand(rng, shape) + np.float32(0.5)
        a = _rand(rng, shape) if with_addend else None
        fx = flow.tensor(x, device=device, requires_grad=True)
        tx = torch.tensor(x, requires_grad=True)
        fa = None if a is None else flow.tensor(a, device=device, requires_grad=True)
        ta = None if a is None else torch.tensor(a, requires_grad=True)
        if affine:
            m.zero_grad()
            tw = torch.tensor(wv, requires_grad=True)
            tb = torch.tensor(bv, requires_grad=True)
        else:
            tw = tb = None
        out = m(fx, fa)
        want = _torch_fused(tx, ta, t_rm, t_rv, tw, tb, training, momentum, eps)
        np.testing.assert_allclose(_np(out), want.detach().numpy(), rtol=1e-4, atol=1e-5)
        assert _np(out).min() >= 0
        g = rng.standard_normal(shape).astype(np.float32)
        want.backward(torch.tensor(g))
        out.backward(flow.tensor(g, device=device))
        np.testing.assert_allclose(_np(fx.grad), tx.grad.numpy(), rtol=1e-4, atol=1e-5)
        if a is not None:
            np.testing.assert_allclose(_np(fa.grad), ta.grad.numpy(), rtol=1e-4, atol=1e-5)
        if affine:
            np.testing.assert_allclose(_np(m.weight.grad), tw.grad.numpy(), rtol=1e-4, atol=1e-4)
            np.testing.assert_allclose(_np(m.bias.grad), tb.grad.numpy(), rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(_np(m.running_mean), t_rm.numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(_np(m.running_var), t_rv.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("cls,ndim", FUSED)
def test_fused_batch_norm_without_running_stats_and_cumulative(device, cls, ndim):
    rng = np.random.default_rng(ndim)
    shape = (5, 2) + (3,) * (ndim - 2)
    m = cls(2, track_running_stats=False).to(device)
    assert m.running_mean is None and set(m.state_dict()) == {"weight", "bias"}
    m.eval()
    x, a = _rand(rng, shape), _rand(rng, shape)
    out = m(flow.tensor(x, device=device), flow.tensor(a, device=device))
    want = _torch_fused(torch.tensor(x), torch.tensor(a), None, None, None, None, True, 0.1, 1e-5)
    np.testing.assert_allclose(_np(out), want.numpy(), rtol=1e-4, atol=1e-5)
    # momentum=None: running statistics are the cumulative average of the batch statistics.
    m = cls(2, momentum=None).to(device)
    assert set(m.state_dict()) == {"weight", "bias", "running_mean", "running_var"}
    t_rm, t_rv = torch.zeros(2), torch.ones(2)
    means = []
    for n in range(1, 4):
        x = _rand(rng, shape)
        m(flow.tensor(x, device=device))
        torch.nn.functional.batch_norm(torch.tensor(x), t_rm, t_rv, None, None, True, 1.0 / n)
        means.append(x.swapaxes(0, 1).reshape(2, -1).mean(axis=1))
    np.testing.assert_allclose(_np(m.running_mean), np.mean(means, axis=0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_np(m.running_var), t_rv.numpy(), rtol=1e-5, atol=1e-6)


def test_fused_batch_norm_defaults(device):
    m = flow.nn.FusedBatchNorm2d(4)
    assert (m.eps, m.momentum, m.affine, m.track_running_stats) == (1e-5, 0.1, True, True)
    np.testing.assert_array_equal(_np(m.weight), np.ones(4))
    np.testing.assert_array_equal(_np(m.bias), np.zeros(4))
    np.testing.assert_array_equal(_np(m.running_var), np.ones(4))
    assert "num_features=4" in repr(m)


# ---- argument errors ---------------------------------------------------------------------

CTORS = [
    ("MinMaxObserver", flow.nn.MinMaxObserver),
    ("MovingAverageMinMaxObserver", flow.nn.MovingAverageMinMaxObserver),
    ("FakeQuantization", flow.nn.FakeQuantization),
    ("Quantization", flow.nn.Quantization),
]


@pytest.mark.parametrize("name,ctor", CTORS)
def test_bad_quantization_arguments(name, ctor):
    for bad in (0, 1, 9, 16, 8.0, True, "8"):
        with pytest.raises(ValueError, match=f"{name}: quantization_bit"):
            ctor(quantization_bit=bad)
    with pytest.raises(ValueError, match=f"{name}: quantization_formula"):
        ctor(quantization_formula="tensorrt")
    with pytest.raises(ValueError, match=f"{name}: quantization_scheme"):
        ctor(quantization_scheme="asymmetric")
    for bit in BITS:
        assert ctor(quantization_bit=bit).quantization_bit == bit


def test_bad_arguments_at_call_time(device):
    x = flow.randn(3, 4, device=device)
    s, z = flow.nn.MinMaxObserver(per_layer_quantization=False)(x)
    obs = flow.nn.MinMaxObserver()
    obs.quantization_bit = 9
    with pytest.raises(ValueError, match="MinMaxObserver: quantization_bit"):
        obs(x)
    with pytest.raises(ValueError, match="MinMaxObserver: per-channel .* 'cambricon'"):
        flow.nn.MinMaxObserver(quantization_formula="cambricon", per_layer_quantization=False)(x)
    with pytest.raises(TypeError, match="MinMaxObserver: input must be a floating point"):
        flow.nn.MinMaxObserver()(flow.ones(3, dtype=flow.int64))
    with pytest.raises(ValueError, match="MinMaxObserver: expected a non-empty input"):
        flow.nn.MinMaxObserver()(flow.zeros(0))
    fq = flow.nn.FakeQuantization()
    with pytest.raises(ValueError, match=r"FakeQuantization: a per-channel scale"):
        fq(flow.randn(4, 4, device=device), s, z)
    fq.quantization_formula = "nvidia"
    with pytest.raises(ValueError, match="FakeQuantization: quantization_formula"):
        fq(x, s, z)
    affine = flow.nn.Quantization(quantization_scheme="affine")
    with pytest.raises(ValueError, match="Quantization: zero_point must have"):
        affine(x, s, z[:1])
    ma = flow.nn.MovingAverageMinMaxObserver()
    with pytest.raises(ValueError, match="MovingAverageMinMaxObserver: current_train_step"):
        ma(x, flow.zeros(2, dtype=flow.int64))
    bn = flow.nn.FusedBatchNorm2d(3)
    with pytest.raises(ValueError, match=r"FusedBatchNorm2d: expected 4D input \(got 3D"):
        bn(flow.randn(2, 3, 4))
    with pytest.raises(ValueError, match="FusedBatchNorm1d: expected 2D or 3D input"):
        flow.nn.FusedBatchNorm1d(3)(flow.randn(2, 3, 4, 4))
    with pytest.raises(ValueError, match="FusedBatchNorm3d: addend must have"):
        flow.nn.FusedBatchNorm3d(3)(flow.randn(2, 3, 2, 2, 2), flow.randn(2, 3, 2, 2, 1))
    with pytest.raises(ValueError, match="FusedBatchNorm2d: expected 3 channels"):
        bn(flow.randn(2, 5, 4, 4))


def test_names_are_exported():
    for name in [
        "MinMaxObserver",
        "MovingAverageMinMaxObserver",
        "FakeQuantization",
        "Quantization",
        "QatConv1d",
        "QatConv2d",
        "QatConv3d",
        "FusedBatchNorm1d",
        "FusedBatchNorm2d",
        "FusedBatchNorm3d",
    ]:
        obj = getattr(flow.nn, name)
        assert obj.__name__ == name and issubclass(obj, flow.nn.Module)
