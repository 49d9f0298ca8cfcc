"""autograd.Function, gradcheck, RNN/LSTM/GRU and their cells, MultiheadAttention,
scaled_dot_product_attention and transformer layers against PyTorch, and a 50-step training run
whose loss curve matches PyTorch's."""

import numpy as np
import pytest
import torch

import oneflow as flow


class Square(flow.autograd.Function):
    @staticmethod
    def forward(ctx, x, k):
        ctx.save_for_backward(x)
        ctx.k = k
        return x * x * k, (x > 0).long()

    @staticmethod
    def backward(ctx, grad, _):
        (x,) = ctx.saved_tensors
        assert ctx.needs_input_grad == (True, False)
        return grad * 2 * x * ctx.k, None


def test_custom_function():
    x = flow.tensor([1.0, -2.0, 3.0], requires_grad=True)
    y, mask = Square.apply(x, 3.0)
    assert y.requires_grad and not mask.requires_grad
    assert y.grad_fn.name() == "SquareBackward"
    (y.sum()).backward()
    assert x.grad.numpy().tolist() == [6.0, -12.0, 18.0]
    with flow.no_grad():
        z, _ = Square.apply(x, 1.0)
    assert not z.requires_grad


class Clamp(flow.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        out = x.clamp(0, 1)
        ctx.mark_non_differentiable(out)
        return out

    @staticmethod
    def backward(ctx, g):
        return g


def test_mark_non_differentiable_and_errors():
    x = flow.ones(2, requires_grad=True)
    assert not Clamp.apply(x).requires_grad

    class Bad(flow.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return flow.ones(3)

    with pytest.raises(RuntimeError, match="gradient of shape"):
        Bad.apply(x).sum().backward()


def test_gradcheck():
    x = flow.randn(3, 2, dtype=flow.float64, requires_grad=True)
    w = flow.randn(2, 4, dtype=flow.float64, requires_grad=True)
    assert flow.autograd.gradcheck(lambda a, b: (a @ b).tanh().sum(1), (x, w))
    assert flow.autograd.gradcheck(lambda a: Square.apply(a, 2.0)[0], (x,))

    class Wrong(flow.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * a

        @staticmethod
        def backward(ctx, g):
            return g  # wrong: should be 2 a g

    assert not flow.autograd.gradcheck(Wrong.apply, (x,), raise_exception=False)
    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        flow.autograd.gradcheck(Wrong.apply, (x,))


def _copy(fm, tm):
    fm.load_state_dict({k: v.detach().numpy() for k, v in tm.state_dict().items()})


RNNS = [
    ("RNN", dict(input_size=3, hidden_size=4)),
    ("RNN", dict(input_size=3, hidden_size=4, num_layers=2, nonlinearity="relu")),
    ("LSTM", dict(input_size=3, hidden_size=5, num_layers=2, bidirectional=True)),
    ("LSTM", dict(input_size=3, hidden_size=4, batch_first=True, bias=False)),
    ("GRU", dict(input_size=3, hidden_size=4, num_layers=2, bidirectional=True, batch_first=True)),
]


@pytest.mark.parametrize("case", range(len(RNNS)))
def test_recurrent_layers(case):
    name, kw = RNNS[case]
    torch.manual_seed(case)
    tm = getattr(torch.nn, name)(**kw).double()
    fm = getattr(flow.nn, name)(**kw).double()
    _copy(fm, tm)
    assert [n for n, _ in fm.named_parameters()] == [n for n, _ in tm.named_parameters()]
    rng = np.random.default_rng(case)
    x = rng.standard_normal((4, 6, 3) if kw.get("batch_first") else (6, 4, 3))
    fx = flow.tensor(x, requires_grad=True)
    tx = torch.tensor(x, requires_grad=True)
    fo, fh = fm(fx)
    to, th = tm(tx)
    np.testing.assert_allclose(fo.detach().numpy(), to.detach().numpy(), rtol=1e-10, atol=1e-12)
    fh = fh if isinstance(fh, tuple) else (fh,)
    th = th if isinstance(th, tuple) else (th,)
    for a, b in zip(fh, th):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10)
    (fo.sum() + sum(h.sum() for h in fh)).backward()
    (to.sum() + sum(h.sum() for h in th)).backward()
    np.testing.assert_allclose(fx.grad.numpy(), tx.grad.numpy(), rtol=1e-9, atol=1e-12)
    fp = dict(fm.named_parameters())
    for n, p in tm.named_parameters():
        np.testing.assert_allclose(fp[n].grad.numpy(), p.grad.numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", ["RNNCell", "LSTMCell", "GRUCell"])
def test_cells(name):
    torch.manual_seed(0)
    tm = getattr(torch.nn, name)(3, 4).double()
    fm = getattr(flow.nn, name)(3, 4).double()
    _copy(fm, tm)
    x = np.random.default_rng(0).standard_normal((5, 3))
    fo, to = fm(flow.tensor(x)), tm(torch.tensor(x))
    fo = fo if isinstance(fo, tuple) else (fo,)
    to = to if isinstance(to, tuple) else (to,)
    for a, b in zip(fo, to):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10)


@pytest.mark.parametrize("causal", [False, True])
def test_scaled_dot_product_attention(causal):
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((2, 3, 5, 4)) for _ in range(3))
    fq, fk, fv = (flow.tensor(a, requires_grad=True) for a in (q, k, v))
    tq, tk, tv = (torch.tensor(a, requires_grad=True) for a in (q, k, v))
    fo = flow.nn.functional.scaled_dot_product_attention(fq, fk, fv, is_causal=causal)
    to = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, is_causal=causal)
    np.testing.assert_allclose(fo.detach().numpy(), to.detach().numpy(), rtol=1e-10)
    fo.sum().backward()
    to.sum().backward()
    for a, b in [(fq, tq), (fk, tk), (fv, tv)]:
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-9, atol=1e-12)
    mask = rng.random((5, 5)) > 0.3
    np.fill_diagonal(mask, True)
    fo = flow.nn.functional.scaled_dot_product_attention(fq, fk, fv, flow.tensor(mask))
    to = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, torch.tensor(mask))
    np.testing.assert_allclose(fo.detach().numpy(), to.detach().numpy(), rtol=1e-10)


@pytest.mark.parametrize("batch_first", [False, True])
def test_multihead_attention_and_transformer_layers(batch_first):
    torch.manual_seed(0)
    kw = dict(batch_first=batch_first)
    tmha, fmha = (
        torch.nn.MultiheadAttention(8, 2, **kw).double(),
        flow.nn.MultiheadAttention(8, 2, **kw).double(),
    )
    _copy(fmha, tmha)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 5, 8))
    n, src = (3, 5) if batch_first else (5, 3)
    kpm = np.zeros((n, src), dtype=bool)  # (batch, source length) in both layouts
    kpm[0, -1] = True
    fo, fw = fmha(flow.tensor(x), flow.tensor(x), flow.tensor(x), key_padding_mask=flow.tensor(kpm))
    to, tw = tmha(
        torch.tensor(x), torch.tensor(x), torch.tensor(x), key_padding_mask=torch.tensor(kpm)
    )
    np.testing.assert_allclose(fo.detach().numpy(), to.detach().numpy(), rtol=1e-9)
    np.testing.assert_allclose(fw.detach().numpy(), tw.detach().numpy(), rtol=1e-9)
    for norm_first in [False, True]:
        tl = torch.nn.TransformerEncoderLayer(
            8, 2, 16, dropout=0.0, norm_first=norm_first, **kw
        ).double()
        fl = flow.nn.TransformerEncoderLayer(
            8, 2, 16, dropout=0.0, norm_first=norm_first, **kw
        ).double()
        _copy(fl, tl)
        tenc = torch.nn.TransformerEncoder(tl, 2, enable_nested_tensor=False)
        fenc = flow.nn.TransformerEncoder(fl, 2)
        _copy(fenc, tenc)
        mask = torch.nn.Transformer.generate_square_subsequent_mask(3 if batch_first else 3)
        seq = rng.standard_normal((2, 3, 8) if batch_first else (3, 2, 8))
        fo = fenc(flow.tensor(seq), mask=flow.tensor(mask.numpy()).double())
        to = tenc(torch.tensor(seq), mask=mask.double())
        np.testing.assert_allclose(fo.detach().numpy(), to.detach().numpy(), rtol=1e-8, atol=1e-10)
    td = torch.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, **kw).double()
    fd = flow.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, **kw).double()
    _copy(fd, td)
    tgt, mem = rng.standard_normal((2, 3, 8)), rng.standard_normal((2, 4, 8))
    if not batch_first:
        tgt, mem = tgt.transpose(1, 0, 2), mem.transpose(1, 0, 2)
    fo = fd(flow.tensor(tgt), flow.tensor(mem))
    to = td(torch.tensor(tgt), torch.tensor(mem))
    np.testing.assert_allclose(fo.detach().numpy(), to.detach().numpy(), rtol=1e-8, atol=1e-10)


def test_50_step_training_matches_torch():
    """A small CNN + MLP with identical initial weights and data: the loss curves agree."""

    def build(nn):
        return nn.Sequential(
            nn.Conv2d(1, 4, 3, padding=1),
            nn.BatchNorm2d(4),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Flatten(),
            nn.Linear(4 * 4 * 4, 16),
            nn.GELU(),
            nn.Dropout(0.0),
            nn.Linear(16, 3),
        )

    torch.manual_seed(0)
    tm = build(torch.nn)
    fm = build(flow.nn)
    _copy(fm, tm)
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((50, 8, 1, 8, 8)).astype(np.float32)
    ys = rng.integers(0, 3, size=(50, 8))
    topt = torch.optim.AdamW(tm.parameters(), lr=1e-2)
    fopt = flow.optim.AdamW(fm.parameters(), lr=1e-2)
    tsched = torch.optim.lr_scheduler.CosineAnnealingLR(topt, 50)
    fsched = flow.optim.lr_scheduler.CosineAnnealingLR(fopt, 50)
    tl, fl = [], []
    for x, y in zip(xs, ys):
        for m, opt, sched, lib, out in [
            (tm, topt, tsched, torch, tl),
            (fm, fopt, fsched, flow, fl),
        ]:
            opt.zero_grad()
            loss = lib.nn.functional.cross_entropy(m(lib.tensor(x)), lib.tensor(y))
            loss.backward()
            opt.step()
            sched.step()
            out.append(loss.item())
    np.testing.assert_allclose(fl, tl, rtol=2e-3, atol=2e-4)
    assert fl[-1] < fl[0]
