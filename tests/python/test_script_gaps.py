"""Functions PyTorch training scripts call that oneflow lacked: gumbel_softmax, antialiased
interpolate, torch.jit's helpers, torch.compiler, cuda.is_bf16_supported, SDPA with a mask and
is_causal together, einsum's sublist form."""

import numpy as np
import pytest
import torch

import oneflow as flow


def test_gumbel_softmax_samples_and_straight_through_gradient():
    flow.manual_seed(0)
    logits = flow.tensor([[1.0, 2.0, 0.5]]).repeat(20000, 1).requires_grad_()
    hard = flow.nn.functional.gumbel_softmax(logits, tau=0.5, hard=True)
    assert set(np.unique(hard.detach().numpy()).tolist()) == {0.0, 1.0}
    assert (hard.detach().numpy().sum(1) == 1).all()
    # argmax frequencies follow softmax(logits) (the Gumbel-max trick)
    p = np.exp([1.0, 2.0, 0.5]) / np.exp([1.0, 2.0, 0.5]).sum()
    np.testing.assert_allclose(hard.detach().numpy().mean(0), p, atol=0.02)
    # straight-through: the soft sample's gradient reaches the logits
    (hard * flow.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert logits.grad.abs().sum().item() > 0
    soft = flow.nn.functional.gumbel_softmax(logits[:5].detach(), tau=2.0, dim=1)
    np.testing.assert_allclose(soft.numpy().sum(1), np.ones(5), rtol=1e-6)
    assert (soft.numpy() > 0).all() and (soft.numpy() < 1).all()


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize(
    "kw",
    [
        dict(size=(10, 7)),
        dict(scale_factor=0.3),
        dict(size=(50, 40)),
        dict(size=(12, 29)),
        dict(size=(10, 7), align_corners=True),
        dict(scale_factor=0.5, recompute_scale_factor=True),
    ],
)
def test_interpolate_antialias_matches_torch(mode, kw):
    a = np.random.default_rng(0).standard_normal((2, 3, 37, 29)).astype(np.float32)
    ft, tt = flow.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    fo = flow.nn.functional.interpolate(ft, mode=mode, antialias=True, **kw)
    to = torch.nn.functional.interpolate(tt, mode=mode, antialias=True, **kw)
    np.testing.assert_allclose(fo.detach().numpy(), to.detach().numpy(), rtol=1e-4, atol=2e-5)
    w = np.random.default_rng(1).standard_normal(to.shape).astype(np.float32)
    (fo * flow.tensor(w)).sum().backward()
    (to * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(ft.grad.numpy(), tt.grad.numpy(), rtol=1e-4, atol=2e-5)


def test_interpolate_antialias_uint8_and_modes():
    img = np.random.default_rng(2).integers(0, 256, (1, 3, 40, 30), dtype=np.uint8)
    fo = flow.nn.functional.interpolate(flow.tensor(img), size=(13, 11), mode="bilinear",
                                        antialias=True)  # fmt: skip
    to = torch.nn.functional.interpolate(torch.tensor(img), size=(13, 11), mode="bilinear",
                                         antialias=True)  # fmt: skip
    assert fo.dtype == flow.uint8
    assert np.abs(fo.numpy().astype(int) - to.numpy().astype(int)).max() <= 1
    with pytest.raises(NotImplementedError, match="anti-alias"):
        flow.nn.functional.interpolate(flow.ones(1, 1, 4, 4), size=2, antialias=True)


def test_jit_helpers_outside_torchscript():
    assert flow.jit.is_scripting() is False and flow.jit.is_tracing() is False

    @flow.jit.ignore
    def a(x):
        return x + 1

    @flow.jit.ignore(drop=True)
    def b(x):
        return x + 2

    @flow.jit.unused
    def c(x):
        return x + 3

    assert a(1) == 2 and b(1) == 3 and c(1) == 4
    assert flow.jit.annotate(list, []) == []
    assert flow.jit.wait(flow.jit.fork(lambda x: x * 2, 21)) == 42
    assert flow.jit.script(a) is a and flow.jit.trace(a, (flow.ones(1),)) is a
    with pytest.raises(NotImplementedError, match="TorchScript"):
        flow.jit.save(a, "unused.pt")


def test_compiler_namespace():
    assert flow.compiler.is_compiling() is False
    seen = []

    class M(flow.nn.Module):
        def forward(self, x):
            seen.append(flow.compiler.is_compiling())
            return x * 2

    m = flow.compile(M().eval())
    with flow.no_grad():
        out = m(flow.ones(2))
    np.testing.assert_array_equal(out.numpy(), [2.0, 2.0])
    assert True in seen  # traced once as a graph

    @flow.compiler.disable
    def eager(x):
        return x + 1

    assert flow.compile(eager) is eager
    assert flow.compiler.compile(eager) is eager
    assert "inductor" in flow.compiler.list_backends()


def test_cuda_is_bf16_supported_without_a_gpu():
    if flow.cuda.is_available():
        pytest.skip("a GPU is present")
    assert flow.cuda.is_bf16_supported() is False


@pytest.mark.parametrize("log_input", [True, False])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_poisson_nll_loss_full_matches_torch(log_input, reduction):
    x = np.random.default_rng(0).random(6).astype(np.float32)
    t = np.array([0, 1, 2, 3.5, 7, 0.5], np.float32)
    fx, tx = flow.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    f = flow.nn.functional.poisson_nll_loss(fx, flow.tensor(t), log_input, full=True,
                                            reduction=reduction)  # fmt: skip
    g = torch.nn.functional.poisson_nll_loss(tx, torch.tensor(t), log_input, full=True,
                                             reduction=reduction)  # fmt: skip
    np.testing.assert_allclose(f.detach().numpy(), g.detach().numpy(), rtol=1e-6)
    f.sum().backward()
    g.sum().backward()
    np.testing.assert_allclose(fx.grad.numpy(), tx.grad.numpy(), rtol=1e-5)


@pytest.mark.parametrize("mask_kind", ["bool", "float"])
def test_sdpa_with_both_a_mask_and_is_causal_like_torch(mask_kind):
    # PyTorch 2.x applies both (padding plus causal masking in one call)
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((2, 3, n, 8)).astype(np.float32) for n in (5, 6, 6))
    m = rng.random((5, 6)) > 0.3 if mask_kind == "bool" else rng.standard_normal((2, 1, 5, 6))
    outs = []
    for lib in (flow, torch):
        ts = [lib.tensor(a, requires_grad=True) for a in (q, k, v)]
        mask = lib.tensor(m if mask_kind == "bool" else m.astype(np.float32))
        o = lib.nn.functional.scaled_dot_product_attention(*ts, attn_mask=mask, is_causal=True)
        o.sum().backward()
        outs.append([o.detach().numpy()] + [t.grad.numpy() for t in ts])
    for a, b in zip(*outs):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


def test_einsum_sublist_form_like_torch():
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 3, 4))
    for fn in (
        lambda lib, x, y: lib.einsum(x, [0, 1, 2], y, [0, 3, 2], [0, 1, 3]),
        lambda lib, x, y: lib.einsum(x, [0, 1, 2], y, [0, 3, 2]),
        lambda lib, x, y: lib.einsum(x, [0, Ellipsis], [Ellipsis]),
        lambda lib, x, y: lib.einsum(x, [Ellipsis, 2], y, [Ellipsis, 2], [Ellipsis]),
    ):
        got = fn(flow, flow.tensor(x), flow.tensor(y)).numpy()
        np.testing.assert_allclose(got, fn(torch, torch.tensor(x), torch.tensor(y)).numpy())
    with pytest.raises(ValueError, match="subscript"):
        flow.einsum(flow.tensor(x), [0, 1, 60])


@pytest.mark.parametrize(
    "dims,stride,out", [(1, 2, [10]), (2, 2, [9, 10]), (2, 3, [1, 4, 13, 15]), (3, 2, [9, 10, 10])]
)
def test_conv_transpose_output_size_like_torch(dims, stride, out):
    torch.manual_seed(0)
    tm = getattr(torch.nn, f"ConvTranspose{dims}d")(4, 3, 3, stride=stride, padding=1)
    fm = getattr(flow.nn, f"ConvTranspose{dims}d")(4, 3, 3, stride=stride, padding=1)
    fm.load_state_dict({k: flow.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    x = np.random.default_rng(dims).standard_normal((1, 4) + (5,) * dims).astype(np.float32)
    want = tm(torch.tensor(x), output_size=out).detach().numpy()
    got = fm(flow.tensor(x), output_size=out).detach().numpy()
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="valid sizes range"):
        fm(flow.tensor(x), output_size=[100] * dims)


def test_bool_indices_and_huge_slice_bounds_like_torch():
    a = np.arange(12.0).reshape(3, 4)
    for key in (
        True,
        False,
        (True, 1),
        (slice(None), True),
        (False, slice(1, None)),
        slice(2, 10**20),
        slice(-(10**20), 2),
    ):
        want = torch.tensor(a)[key].numpy()
        got = flow.tensor(a)[key].numpy()
        assert got.shape == want.shape, key
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(
        flow.tensor(a)[flow.tensor(True)].numpy(), torch.tensor(a)[torch.tensor(True)].numpy()
    )
    # a step beyond int64 takes the first element, as Python and NumPy (PyTorch's length
    # computation overflows there and gives none)
    for key in ((slice(None), slice(None, None, 10**20)), (slice(None), slice(1, None, 2**63 - 1))):
        np.testing.assert_array_equal(flow.tensor(a)[key].numpy(), a[key])
    x, t = flow.tensor(a), torch.tensor(a)
    x[True] = 5.0
    t[True] = 5.0
    np.testing.assert_array_equal(x.numpy(), t.numpy())
    # PyTorch broadcasts a bool with index tensors (not done here): refused, not a wrong shape
    with pytest.raises(NotImplementedError, match="bool index"):
        flow.tensor(a)[True, [0, 1]]


def test_sdpa_takes_a_float32_mask_with_16_bit_queries_like_torch():
    rng = np.random.default_rng(0)
    q = rng.standard_normal((1, 2, 3, 4)).astype(np.float32)
    m = rng.standard_normal((3, 3)).astype(np.float32)
    for dt, tdt in ((flow.bfloat16, torch.bfloat16), (flow.float64, torch.float64)):
        fq, tq = flow.tensor(q).to(dt), torch.tensor(q).to(tdt)
        got = flow.nn.functional.scaled_dot_product_attention(fq, fq, fq, attn_mask=flow.tensor(m))
        want = torch.nn.functional.scaled_dot_product_attention(
            tq, tq, tq, attn_mask=torch.tensor(m)
        )
        assert got.dtype == dt
        np.testing.assert_allclose(got.float().numpy(), want.float().numpy(), rtol=2e-2, atol=2e-2)
    with pytest.raises(RuntimeError, match="attn_mask dtype"):
        fq = flow.tensor(q)
        flow.nn.functional.scaled_dot_product_attention(
            fq, fq, fq, attn_mask=flow.tensor(m).to(flow.float16)
        )


@pytest.mark.parametrize("pad", [(0, 0), (-1, -1), (-1, 0, 0, -1), (0, 0) * 4, (-1, 0) * 4])
def test_constant_pad_that_only_crops_copies_like_torch(pad):
    a = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)
    x, t = flow.tensor(a), torch.tensor(a)
    y, ty = flow.nn.functional.pad(x, pad), torch.nn.functional.pad(t, pad)
    np.testing.assert_array_equal(y.numpy(), ty.numpy())
    assert y.is_contiguous()
    y.fill_(-1.0)
    np.testing.assert_array_equal(x.numpy(), a)  # the input is untouched


def test_reshape_is_a_view_where_view_would_be_like_torch():
    a = np.arange(48.0).reshape(2, 3, 8)
    for make in (
        lambda m: m.tensor(a)[:, :, :4].reshape(6, 4),
        lambda m: m.tensor(a)[:, 1:].reshape(-1, 8),
        lambda m: m.tensor(a)[::2].reshape(3, 8),
        lambda m: m.tensor(a).transpose(0, 1).reshape(3, 16),  # not viewable: a copy
    ):
        x, t = make(flow), make(torch)
        assert tuple(x.stride()) == tuple(t.stride())
        np.testing.assert_array_equal(x.numpy(), t.numpy())
    base = flow.tensor(a)
    base[:, :, :4].reshape(6, 4).fill_(-1.0)  # writes reach the base, as through a view
    assert (base[:, :, :4] == -1).all() and (base[:, :, 4:] >= 0).all()
    w = flow.tensor(a, requires_grad=True)
    (w[:, :, :4].reshape(6, 4) * flow.arange(4.0)).sum().backward()
    tw = torch.tensor(a, requires_grad=True)
    (tw[:, :, :4].reshape(6, 4) * torch.arange(4.0)).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), tw.grad.numpy())
