"""The fused LSTM cell (ops/rnn_primitives.h) and the sequence-wide input projection of the
recurrent layers, against PyTorch: values and gradients in float32 and float64, hidden states
given or not, second-order gradients, in-place checks, nn.Graph, the composed 16-bit path."""

import math

import numpy as np
import pytest
import torch

import oneflow as flow


def _copy(fm, tm):
    fm.load_state_dict({k: v.detach().numpy() for k, v in tm.state_dict().items()})


def _pair(dtype):
    return (flow.float64, torch.float64) if dtype == "float64" else (flow.float32, torch.float32)


def _states(r):
    return r if isinstance(r, tuple) else (r,)


@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(
    "kw",
    [
        dict(num_layers=2, bidirectional=True),
        dict(batch_first=True),
        dict(num_layers=3, batch_first=True, bias=False),
    ],
)
@pytest.mark.parametrize("with_hidden", [False, True])
def test_recurrent_values_and_gradients_like_torch(mode, dtype, kw, with_hidden):
    fdt, tdt = _pair(dtype)
    torch.manual_seed(1)
    tm = getattr(torch.nn, mode)(5, 7, **kw).to(tdt)
    fm = getattr(flow.nn, mode)(5, 7, **kw).to(fdt)
    _copy(fm, tm)
    rng = np.random.default_rng(2)
    T, B = 9, 3
    x = rng.standard_normal((B, T, 5) if kw.get("batch_first") else (T, B, 5))
    dirs = 2 if kw.get("bidirectional") else 1
    layers = kw.get("num_layers", 1)
    hx = [rng.standard_normal((layers * dirs, B, 7)) for _ in range(2 if mode == "LSTM" else 1)]
    fx = flow.tensor(x, dtype=fdt, requires_grad=True)
    tx = torch.tensor(x, dtype=tdt).requires_grad_()
    fh = [flow.tensor(a, dtype=fdt, requires_grad=True) for a in hx]
    th = [torch.tensor(a, dtype=tdt).requires_grad_() for a in hx]
    pack = tuple if mode == "LSTM" else (lambda s: s[0])
    fo, fs = fm(fx, pack(fh)) if with_hidden else fm(fx)
    to, ts = tm(tx, pack(th)) if with_hidden else tm(tx)
    fr, tr = (fo, *_states(fs)), (to, *_states(ts))
    tol = dict(rtol=1e-10, atol=1e-12) if dtype == "float64" else dict(rtol=1e-4, atol=2e-6)
    for a, b in zip(fr, tr):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), **tol)
    # weighted losses, so that every step's gradients differ
    ws = [rng.standard_normal(tuple(t.shape)) for t in tr]
    sum((a * flow.tensor(w, dtype=fdt)).sum() for a, w in zip(fr, ws)).backward()
    sum((a * torch.tensor(w, dtype=tdt)).sum() for a, w in zip(tr, ws)).backward()
    gtol = dict(rtol=1e-9, atol=1e-11) if dtype == "float64" else dict(rtol=2e-4, atol=2e-5)
    np.testing.assert_allclose(fx.grad.numpy(), tx.grad.numpy(), **gtol)
    if with_hidden:
        for a, b in zip(fh, th):
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), **gtol)
    fp = dict(fm.named_parameters())
    for n, p in tm.named_parameters():
        np.testing.assert_allclose(fp[n].grad.numpy(), p.grad.numpy(), err_msg=n, **gtol)


@pytest.mark.parametrize("use", ["output", "h_n", "c_n"])
def test_lstm_gradients_when_only_one_result_is_used(use):
    torch.manual_seed(3)
    tm = torch.nn.LSTM(4, 6, num_layers=2).double()
    fm = flow.nn.LSTM(4, 6, num_layers=2).double()
    _copy(fm, tm)
    x = np.random.default_rng(4).standard_normal((5, 2, 4))
    fx, tx = flow.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    fo, (fh, fc) = fm(fx)
    to, (th, tc) = tm(tx)
    pick = {"output": 0, "h_n": 1, "c_n": 2}[use]
    (fo, fh, fc)[pick].square().sum().backward()
    (to, th, tc)[pick].square().sum().backward()
    np.testing.assert_allclose(fx.grad.numpy(), tx.grad.numpy(), rtol=1e-9, atol=1e-12)
    fp = dict(fm.named_parameters())
    for n, p in tm.named_parameters():
        np.testing.assert_allclose(fp[n].grad.numpy(), p.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_lstm_cell_second_order_gradients_like_torch():
    torch.manual_seed(5)
    tm = torch.nn.LSTMCell(3, 4).double()
    fm = flow.nn.LSTMCell(3, 4).double()
    _copy(fm, tm)
    rng = np.random.default_rng(6)
    x, h0, c0 = (rng.standard_normal(s) for s in ((2, 3), (2, 4), (2, 4)))
    fx, fh0, fc0 = (flow.tensor(a, requires_grad=True) for a in (x, h0, c0))
    tx, th0, tc0 = (torch.tensor(a, requires_grad=True) for a in (x, h0, c0))
    fh, fc = fm(fx, (fh0, fc0))
    th, tc = tm(tx, (th0, tc0))
    fin = [fx, fh0, fc0, *fm.parameters()]
    tin = [tx, th0, tc0, *tm.parameters()]
    fg = flow.autograd.grad((fh * fc).sum() + fh.sum(), fin, create_graph=True)
    tg = torch.autograd.grad((th * tc).sum() + th.sum(), tin, create_graph=True)
    for a, b in zip(fg, tg):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-9, atol=1e-12)
    fgg = flow.autograd.grad(sum((g * g).sum() for g in fg), fin)
    tgg = torch.autograd.grad(sum((g * g).sum() for g in tg), tin)
    for a, b in zip(fgg, tgg):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-8, atol=1e-11)


def test_fused_cell_passes_gradcheck():
    rng = np.random.default_rng(7)
    gi, gh = (flow.tensor(rng.standard_normal((3, 8)), requires_grad=True) for _ in range(2))
    c = flow.tensor(rng.standard_normal((3, 2)), requires_grad=True)

    def cell(a, b, s):
        h, c2 = flow._C._lstm_cell(a, b, s)
        return h * 1.5 + c2

    assert flow.autograd.gradcheck(cell, (gi, gh, c))


def test_lstm_cell_refuses_a_state_changed_in_place_before_backward():
    fm = flow.nn.LSTMCell(3, 4)
    x = flow.randn(2, 3)
    base = flow.randn(2, 4, requires_grad=True)
    c0 = base * 1.0
    h, c = fm(x, (flow.zeros(2, 4), c0))
    c0.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        c.sum().backward()


def test_lstm_training_in_a_graph_equals_eager():
    def make():
        flow.manual_seed(8)
        m = flow.nn.LSTM(4, 5, num_layers=2, batch_first=True)
        return m, flow.optim.SGD(m.parameters(), lr=0.1)

    x = flow.randn(3, 6, 4)
    m1, o1 = make()
    m2, o2 = make()

    class G(flow.nn.Graph):
        def __init__(self):
            super().__init__()
            self.m = m2
            self.add_optimizer(o2)

        def build(self, x):
            loss = self.m(x)[0].square().mean()
            loss.backward()
            return loss

    g = G()
    for _ in range(3):
        loss1 = m1(x)[0].square().mean()
        o1.zero_grad()
        loss1.backward()
        o1.step()
        loss2 = g(x)
        np.testing.assert_allclose(loss2.numpy(), loss1.numpy(), rtol=1e-6)
    for (n, p1), p2 in zip(m1.named_parameters(), m2.parameters()):
        np.testing.assert_allclose(p2.numpy(), p1.numpy(), rtol=1e-5, atol=1e-7, err_msg=n)


@pytest.mark.parametrize("dtype", [flow.bfloat16, flow.float16])
def test_lstm_in_16_bit_floats_composes_ops(dtype):
    flow.manual_seed(9)
    m = flow.nn.LSTM(4, 5)
    x = flow.randn(6, 2, 4)
    ref = m(x)[0]
    m16 = flow.nn.LSTM(4, 5).to(dtype)
    m16.load_state_dict(m.state_dict())
    x16 = x.to(dtype).requires_grad_()
    out = m16(x16)[0]
    assert out.dtype == dtype
    np.testing.assert_allclose(out.float().detach().numpy(), ref.detach().numpy(), atol=0.05)
    out.float().sum().backward()
    assert x16.grad.dtype == dtype and bool(flow.isfinite(x16.grad.float()).all())


def test_linear_of_a_transposed_sequence_like_torch():
    rng = np.random.default_rng(10)
    x = rng.standard_normal((3, 5, 4)).astype(np.float32)
    w = rng.standard_normal((6, 4)).astype(np.float32)
    b = rng.standard_normal(6).astype(np.float32)
    fx, tx = flow.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    fw, tw = flow.tensor(w, requires_grad=True), torch.tensor(w, requires_grad=True)
    for bias in (True, False):
        fo = flow.nn.functional.linear(fx.transpose(0, 1), fw, flow.tensor(b) if bias else None)
        to = torch.nn.functional.linear(tx.transpose(0, 1), tw, torch.tensor(b) if bias else None)
        assert tuple(fo.shape) == tuple(to.shape)
        np.testing.assert_allclose(fo.detach().numpy(), to.detach().numpy(), rtol=1e-5, atol=1e-6)
        fo.square().sum().backward()
        to.square().sum().backward()
        np.testing.assert_allclose(fx.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(fw.grad.numpy(), tw.grad.numpy(), rtol=1e-5, atol=1e-5)
        # a slice along the last dim (rows further apart than their length)
        fo = fx[..., :3] @ fw[:, :3].t()
        to = tx[..., :3] @ tw[:, :3].t()
        np.testing.assert_allclose(fo.detach().numpy(), to.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_unbind_gradients_like_torch():
    rng = np.random.default_rng(11)
    x = rng.standard_normal((4, 3, 2))
    for dim in (0, 1, -1):
        fx, tx = flow.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        fs, ts = fx.unbind(dim), tx.unbind(dim)
        assert len(fs) == len(ts)
        for a, b in zip(fs, ts):
            assert tuple(a.shape) == tuple(b.shape)
            np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
        sum((s * (k + 1)).sum() for k, s in enumerate(fs[:-1])).backward()
        sum((s * (k + 1)).sum() for k, s in enumerate(ts[:-1])).backward()
        np.testing.assert_array_equal(fx.grad.numpy(), tx.grad.numpy())
    assert flow.zeros(0, 3).unbind(0) == ()
    assert len(flow.zeros(0, 3).unbind(1)) == 3


@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_layer_second_order_gradients_like_torch(mode, bidirectional):
    torch.manual_seed(12)
    tm = getattr(torch.nn, mode)(3, 4, bidirectional=bidirectional).double()
    fm = getattr(flow.nn, mode)(3, 4, bidirectional=bidirectional).double()
    _copy(fm, tm)
    x = np.random.default_rng(13).standard_normal((5, 2, 3))
    fx, tx = flow.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    fo, fs = fm(fx)
    to, ts = tm(tx)
    fin, tin = [fx, *fm.parameters()], [tx, *tm.parameters()]
    fg = flow.autograd.grad(
        fo.square().sum() + math.prod(_states(fs)).sum(), fin, create_graph=True
    )
    tg = torch.autograd.grad(
        to.square().sum() + math.prod(_states(ts)).sum(), tin, create_graph=True
    )
    for a, b in zip(fg, tg):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-9, atol=1e-12)
    fgg = flow.autograd.grad(sum((g * g).sum() for g in fg), fin)
    tgg = torch.autograd.grad(sum((g * g).sum() for g in tg), tin)
    for a, b in zip(fgg, tgg):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-8, atol=1e-11)


@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
@pytest.mark.parametrize("hidden", [1, 8, 37, 100])
def test_layer_hidden_sizes_split_among_threads_like_torch(mode, hidden):
    # the layer kernels split the hidden units among threads in chunks of 8 (Note [LSTM layer
    # kernels]): sizes below, at and between the chunk boundaries
    torch.manual_seed(hidden)
    tm = getattr(torch.nn, mode)(6, hidden, bidirectional=True)
    fm = getattr(flow.nn, mode)(6, hidden, bidirectional=True)
    _copy(fm, tm)
    x = np.random.default_rng(hidden).standard_normal((7, 5, 6)).astype(np.float32)
    fx, tx = flow.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    fo, fs = fm(fx)
    to, ts = tm(tx)
    np.testing.assert_allclose(fo.detach().numpy(), to.detach().numpy(), rtol=1e-4, atol=2e-6)
    w = np.random.default_rng(0).standard_normal(tuple(to.shape)).astype(np.float32)
    ((fo * flow.tensor(w)).sum() + _states(fs)[-1].sum()).backward()
    ((to * torch.tensor(w)).sum() + _states(ts)[-1].sum()).backward()
    np.testing.assert_allclose(fx.grad.numpy(), tx.grad.numpy(), rtol=2e-4, atol=2e-5)
    fp = dict(fm.named_parameters())
    for n, p in tm.named_parameters():
        np.testing.assert_allclose(fp[n].grad.numpy(), p.grad.numpy(), rtol=2e-4, atol=2e-5)


@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
def test_layer_with_empty_batch_like_torch(mode):
    fm, tm = getattr(flow.nn, mode)(3, 4), getattr(torch.nn, mode)(3, 4)
    _copy(fm, tm)
    fo, fs = fm(flow.zeros(5, 0, 3, requires_grad=True))
    to, ts = tm(torch.zeros(5, 0, 3, requires_grad=True))
    assert tuple(fo.shape) == tuple(to.shape)
    assert [tuple(a.shape) for a in _states(fs)] == [tuple(a.shape) for a in _states(ts)]
    fo.sum().backward()
    assert float(fm.weight_hh_l0.grad.abs().sum()) == 0.0


@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
def test_recurrent_layer_in_16_bit_and_in_a_graph(mode):
    flow.manual_seed(18)
    m = getattr(flow.nn, mode)(4, 5)
    x = flow.randn(6, 2, 4)
    ref = m(x)[0]
    m16 = getattr(flow.nn, mode)(4, 5).to(flow.bfloat16)
    m16.load_state_dict(m.state_dict())
    out = m16(x.to(flow.bfloat16))[0]
    np.testing.assert_allclose(out.float().detach().numpy(), ref.detach().numpy(), atol=0.05)

    class G(flow.nn.Graph):
        def __init__(self):
            super().__init__()
            self.m = m

        def build(self, x):
            return self.m(x)[0]

    np.testing.assert_allclose(G()(x).numpy(), ref.detach().numpy(), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
@pytest.mark.parametrize("what", ["output", "h_n", "c_n", "bias"])
def test_in_place_changes_the_backward_does_not_need(mode, what):
    # oneflow's results are copies and its backward reads neither gi nor b_hh, so these in-place
    # changes are allowed (PyTorch's oneDNN LSTM refuses some of them); the gradients equal
    # PyTorch's for the same values computed out of place
    if mode == "GRU" and what == "c_n":
        return
    torch.manual_seed(20)
    tm = getattr(torch.nn, mode)(3, 5)
    fm = getattr(flow.nn, mode)(3, 5)
    _copy(fm, tm)
    x = np.random.default_rng(21).standard_normal((4, 2, 3)).astype(np.float32)
    grads = []
    for lib, m in ((flow, fm), (torch, tm)):
        tx = lib.tensor(x, requires_grad=True)
        o, s = m(tx)
        s = list(_states(s))
        in_place = lib is flow
        if what == "output":
            o = o.mul_(2) if in_place else o * 2
        elif what == "h_n":
            s[0] = s[0].mul_(3) if in_place else s[0] * 3
        elif what == "c_n":
            s[1] = s[1].mul_(3) if in_place else s[1] * 3
        elif in_place:
            with lib.no_grad():
                m.bias_hh_l0.add_(0.1)
        (o.sum() + sum(t.square().sum() for t in s)).backward()
        grads.append([tx.grad.numpy().copy()] + [p.grad.numpy().copy() for p in m.parameters()])
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=2e-4, atol=2e-5)


def test_lstm_cell_states_masked_in_place_between_steps_like_torch():
    torch.manual_seed(22)
    tm, fm = torch.nn.LSTMCell(4, 6), flow.nn.LSTMCell(4, 6)
    _copy(fm, tm)
    x = np.random.default_rng(23).standard_normal((5, 3, 4)).astype(np.float32)
    mask = np.array([[1.0], [0.0], [1.0]], dtype=np.float32)
    grads = []
    for lib, m in ((flow, fm), (torch, tm)):
        tx = lib.tensor(x, requires_grad=True)
        h = c = lib.zeros(3, 6)
        total = 0
        for t in range(5):
            h, c = m(tx[t], (h, c))
            total = total + (h * (t + 1)).sum() + c.sum()
            h.mul_(lib.tensor(mask))  # an episode ends: reset the state in place
            c.mul_(lib.tensor(mask))
        total.backward()
        grads.append([tx.grad.numpy().copy()] + [p.grad.numpy().copy() for p in m.parameters()])
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=2e-4, atol=2e-5)
