"""OneFlow's functional names under ``flow._C`` that model code (LiBai, OneFlow's nn modules)
calls directly, supplied by ``oneflow.framework.c_compat``: each checked against a PyTorch or
NumPy reference written from OneFlow's documented semantics (values, and gradients for the fused
and differentiable ops), with OneFlow's argument names and at least one non-default argument."""

import types

import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from c_compat_helpers import RNG, C, close, compare, ft, randn, same, tt  # noqa: F401

import oneflow as flow
from oneflow.framework import c_compat


def test_install_adds_only_missing_names():
    fake = types.ModuleType("fake_C")
    sentinel = object()
    fake.gelu = sentinel
    fake.fused_glu = sentinel
    added = c_compat.install(fake)
    assert fake.gelu is sentinel and fake.fused_glu is sentinel
    assert "fused_glu" not in added and "gelu" not in added
    assert "fused_bias_add_gelu" in added and fake.fused_bias_add_gelu is C.fused_bias_add_gelu
    assert set(added) == set(c_compat._FUNCS) - {"fused_glu"}


def test_install_replaces_no_native_name():
    assert c_compat.install() == []  # everything is in place; a second call adds nothing
    compat_fns = set(map(id, c_compat._FUNCS.values()))
    native = ["gelu", "relu", "tanh", "sigmoid", "matmul", "expand", "reshape", "transpose"]
    native += ["flatten", "where", "gather", "argmax", "topk", "sort", "clamp", "pow", "exp"]
    native += ["sqrt", "rsqrt", "softmax", "slice", "mse_loss", "sum", "mean", "cat"]
    for name in native:
        fn = getattr(C, name)
        assert id(fn) not in compat_fns, name
        assert getattr(fn, "__module__", None) != c_compat.__name__, name
    for name, fn in c_compat._FUNCS.items():
        assert getattr(C, name) is fn or getattr(getattr(C, name), "__module__", None) != (
            c_compat.__name__
        )


# --------------------------------------------------------------------------- fused ops


def _bias_view(b, axis, ndim):
    return b.reshape((1,) * axis + tuple(b.shape) + (1,) * (ndim - axis - b.ndim))


@pytest.mark.parametrize("axis,bshape", [(2, (4,)), (1, (3,)), (-2, (3,)), (1, (3, 4))])
def test_fused_bias_add_gelu(device, axis, bshape):
    a, b = randn(2, 3, 4), randn(*bshape)
    ax = axis % 3
    compare(
        lambda x, y: C.fused_bias_add_gelu(x, y, axis=axis),
        lambda x, y: TF.gelu(x + _bias_view(y, ax, 3)),
        [a, b],
        device,
        grad=(0, 1),
    )


def test_bias_add(device):
    a, b = randn(2, 3, 4), randn(3)
    compare(lambda x, y: C.bias_add(x, y), lambda x, y: x + y.reshape(1, 3, 1), [a, b], device)
    compare(
        lambda x, y: C.bias_add(x, y, axis=2),
        lambda x, y: x + y,
        [a, randn(4)],
        device,
        grad=(0, 1),
    )
    with pytest.raises(RuntimeError):
        C.bias_add(ft(a, device), ft(randn(5), device), axis=2)


def test_fused_bias_add_dropout(device):
    a, b = randn(4, 8), randn(8)
    # p=0: the plain bias add, values and gradients
    compare(
        lambda x, y: C.fused_bias_add_dropout(x, y, p=0.0, axis=1),
        lambda x, y: x + y,
        [a, b],
        device,
        grad=(0, 1),
    )
    # p=0.5 along axis 0: each element is dropped or scaled by 2, and the gradient follows
    x = ft(a, device, True)
    bias0 = randn(4)
    y = C.fused_bias_add_dropout(x, ft(bias0, device), p=0.5, axis=0)
    ref = a + bias0[:, None]
    got = y.detach().cpu().numpy()
    kept = got != 0
    assert 0 < kept.sum() < kept.size
    np.testing.assert_allclose(got[kept], 2 * ref[kept], rtol=1e-5)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.cpu().numpy(), 2.0 * kept, rtol=1e-6)
    # the generator decides the mask
    g = flow.Generator(device=device)
    g.manual_seed(7)
    y1 = C.fused_bias_add_dropout(ft(a, device), ft(b, device), p=0.3, axis=-1, generator=g)
    g.manual_seed(7)
    y2 = C.fused_bias_add_dropout(ft(a, device), ft(b, device), p=0.3, axis=-1, generator=g)
    same(y1, y2.cpu().numpy())


@pytest.mark.parametrize("kwargs", [{}, {"diagonal": 1, "fill_value": -5.0, "scale": 2.0}])
def test_fused_scale_tril(device, kwargs):
    x = randn(2, 4, 5)
    d, fill, s = kwargs.get("diagonal", 0), kwargs.get("fill_value", 0.0), kwargs.get("scale", 1)
    keep = torch.ones(4, 5, dtype=torch.bool).tril(d)
    compare(
        lambda a: C.fused_scale_tril(a, **kwargs),
        lambda a: torch.where(keep, a * s, torch.tensor(fill)),
        [x],
        device,
        grad=(0,),
    )
    out = C.fused_scale_tril(ft(x, device), 0, -1.0, 0.5)  # positional, as OneFlow's order
    close(out, torch.where(keep.tril(0), tt(x) * 0.5, torch.tensor(-1.0)))


def _masked_softmax_ref(x, mask, fill, scale):
    return torch.softmax(torch.where(mask, x * scale, torch.tensor(fill)), dim=-1)


@pytest.mark.parametrize("mask_dtype", [np.bool_, np.int8])
def test_fused_scale_mask_softmax(device, mask_dtype):
    x = randn(2, 3, 4, 5)
    mask = RNG.integers(0, 2, size=(2, 1, 4, 5)).astype(mask_dtype)
    mask[..., 0] = 1
    tmask = torch.tensor(mask.astype(bool))
    compare(
        lambda a: C.fused_scale_mask_softmax(a, ft(mask, device), fill_value=-1e4, scale=0.5),
        lambda a: _masked_softmax_ref(a, tmask, -1e4, 0.5),
        [x],
        device,
        grad=(0,),
    )
    # defaults: fill 0, scale 1
    compare(
        lambda a: C.fused_scale_mask_softmax(a, ft(mask, device)),
        lambda a: _masked_softmax_ref(a, tmask, 0.0, 1.0),
        [x],
        device,
        grad=(0,),
    )


def test_fused_scale_mask_softmax_dropout(device):
    x = randn(2, 3, 4, 4)
    mask = RNG.integers(0, 2, size=(2, 3, 4, 4)).astype(bool)
    tmask = torch.tensor(mask)
    # p=0: (y, softmax_y), both the masked softmax, gradient through both
    compare(
        lambda a: C.fused_scale_mask_softmax_dropout(
            a, ft(mask, device), fill_value=-1e4, scale=2.0, p=0.0
        ),
        lambda a: (_masked_softmax_ref(a, tmask, -1e4, 2.0),) * 2,
        [x],
        device,
        grad=(0,),
    )
    # not training: no dropout whatever p
    y, sy = C.fused_scale_mask_softmax_dropout(ft(x, device), ft(mask, device), training=False)
    same(y, sy.cpu().numpy())
    close(sy, _masked_softmax_ref(tt(x), tmask, 0.0, 1.0))
    # training with p=0.5: y is softmax_y dropped or doubled; LiBai takes [0]
    out = C.fused_scale_mask_softmax_dropout(ft(x, device), ft(mask, device), p=0.5)
    assert isinstance(out, tuple) and len(out) == 2
    y, sy = (o.cpu().numpy() for o in out)
    kept = y != 0
    assert 0 < kept.sum() < kept.size
    np.testing.assert_allclose(y[kept], 2 * sy[kept], rtol=1e-5)
    # scale=None (LiBai's coeff when layer scaling is off) means 1
    y, sy = C.fused_scale_mask_softmax_dropout(ft(x, device), ft(mask, device), scale=None, p=0.0)
    close(sy, _masked_softmax_ref(tt(x), tmask, 0.0, 1.0))


@pytest.mark.parametrize("diagonal,scale,fill", [(0, 1.0, 0.0), (-1, 0.5, -1e4), (1, 2.0, -1e4)])
def test_fused_scale_tril_softmax_mask_scale(device, diagonal, scale, fill):
    x = randn(2, 5, 5)
    keep = torch.ones(5, 5, dtype=torch.bool).tril(diagonal)

    def ref(a):
        sy = torch.softmax(torch.where(keep, a * scale, torch.tensor(fill)), dim=-1)
        return sy, sy

    compare(
        lambda a: C.fused_scale_tril_softmax_mask_scale(
            a, p=0.0, diagonal=diagonal, tril_scale_value=scale, tril_fill_value=fill
        ),
        ref,
        [x],
        device,
        grad=(0,),
    )
    y, sy = C.fused_scale_tril_softmax_mask_scale(
        ft(x, device), p=0.5, diagonal=0, tril_scale_value=1.0
    )
    y, sy = y.cpu().numpy(), sy.cpu().numpy()
    kept = y != 0
    np.testing.assert_allclose(y[kept], 2 * sy[kept], rtol=1e-5)
    # OneFlow's own test reference: tril (fill 0), scale, softmax
    close(sy, torch.softmax(torch.tril(tt(x)), dim=-1))


@pytest.mark.parametrize("add", [False, True])
def test_fused_matmul_bias(device, add):
    x, w, b, r = randn(2, 3, 6), randn(5, 6), randn(5), randn(2, 3, 5)
    if add:
        compare(
            lambda *a: C.fused_matmul_bias(*a),
            lambda x_, w_, b_, r_: x_ @ w_.T + b_ + r_,
            [x, w, b, r],
            device,
            grad=(0, 1, 2, 3),
        )
    else:
        compare(
            lambda *a: C.fused_matmul_bias(*a),
            lambda x_, w_, b_: x_ @ w_.T + b_,
            [x, w, b],
            device,
            grad=(0, 1, 2),
        )


_TORCH_ACT = {
    "none": lambda t: t,
    "sigmoid": torch.sigmoid,
    "relu": torch.relu,
    "gelu": TF.gelu,
    "fast_gelu": lambda t: TF.gelu(t, approximate="tanh"),
    "silu": TF.silu,
    "tanh": torch.tanh,
}


@pytest.mark.parametrize("act", list(_TORCH_ACT))
def test_fused_glu(device, act):
    x, w, b = randn(2, 3, 4), randn(10, 4), randn(10)

    def merged_ref(x_, w_, b_):
        hidden, gate = (x_ @ w_.T + b_).chunk(2, dim=-1)
        return hidden * _TORCH_ACT[act](gate)

    compare(
        lambda x_, w_, b_: C.fused_glu(x_, w_, b_, activation=act),
        merged_ref,
        [x, w, b],
        device,
        grad=(0, 1, 2),
    )
    v, c = randn(5, 4), randn(5)
    compare(
        lambda x_, w_, b_, v_, c_: C.fused_glu(x=x_, w=w_, b=b_, v=v_, c=c_, activation=act),
        lambda x_, w_, b_, v_, c_: (x_ @ w_.T + b_) * _TORCH_ACT[act](x_ @ v_.T + c_),
        [x, w[:5], b[:5], v, c],
        device,
        grad=(1, 2, 3, 4),
    )


def test_fused_glu_default_activation_is_none(device):
    x, w, b = randn(3, 4), randn(6, 4), randn(6)
    h = tt(x) @ tt(w).T + tt(b)
    close(C.fused_glu(ft(x, device), ft(w, device), ft(b, device)), h[:, :3] * h[:, 3:])
    with pytest.raises(ValueError):
        C.fused_glu(ft(x, device), ft(w, device), ft(b, device), activation="bogus")


@pytest.mark.parametrize("head_size,alpha", [(8, 1.0), (4, 0.25)])
def test_fused_self_attention(device, head_size, alpha):
    s, b, n = 5, 2, 3
    h = randn(s, b, n * 3 * head_size)

    def ref(h_):
        hh = h_.reshape(s, b, n, 3, head_size)
        q, k, v = (hh[:, :, :, i].permute(1, 2, 0, 3) for i in range(3))
        return alpha * q @ k.transpose(-1, -2), v

    if (head_size, alpha) == (8, 1.0):
        f = lambda h_: C.fused_self_attention(h_)  # noqa: E731  (the defaults)
    else:
        f = lambda h_: C.fused_self_attention(h_, head_size=head_size, alpha=alpha)  # noqa: E731
    compare(lambda h_: tuple(f(h_)), ref, [h], device, grad=(0,))
    qmk, v = f(ft(h, device))
    assert tuple(qmk.shape) == (b, n, s, s) and tuple(v.shape) == (b, n, s, head_size)


def test_fast_and_quick_gelu(device):
    x, m = randn(3, 7), randn(3, 7)
    compare(C.fast_gelu, lambda a: TF.gelu(a, approximate="tanh"), [x], device, grad=(0,))
    compare(C.quick_gelu, lambda a: a * torch.sigmoid(1.702 * a), [x], device, grad=(0,))
    compare(
        C.fused_fast_gelu_mul,
        lambda a, b: TF.gelu(a, approximate="tanh") * b,
        [x, m],
        device,
        grad=(0, 1),
    )


# --------------------------------------------------------------------------- normalization


@pytest.mark.parametrize("begin,eps", [(1, 1e-5), (-1, 1e-3)])
def test_layer_norm(device, begin, eps):
    x = randn(2, 3, 4)
    shape = x.shape[begin % 3 :]
    compare(
        lambda a: C.layer_norm(a, begin_norm_axis=begin, begin_params_axis=begin, epsilon=eps),
        lambda a: TF.layer_norm(a, shape, eps=eps),
        [x],
        device,
        grad=(0,),
    )


def test_layer_norm_affine(device):
    x, g, b = randn(2, 3, 4), randn(3, 4), randn(3, 4)
    compare(
        lambda *a: C.layer_norm_affine(*a, begin_norm_axis=1, begin_params_axis=1, epsilon=1e-5),
        lambda x_, g_, b_: TF.layer_norm(x_, (3, 4), g_, b_, eps=1e-5),
        [x, g, b],
        device,
        grad=(0, 1, 2),
    )
    # parameters over fewer axes than the normalization (positional, OneFlow's order)
    compare(
        lambda x_, g_, b_: C.layer_norm_affine(x_, g_, b_, 1, 2, 1e-2),
        lambda x_, g_, b_: TF.layer_norm(x_, (3, 4), eps=1e-2) * g_ + b_,
        [x, g[0], b[0]],
        device,
        grad=(0, 1, 2),
    )


def _rms_ref(x, w, n, eps):
    dims = tuple(range(x.ndim - n, x.ndim))
    y = x * torch.rsqrt((x * x).mean(dim=dims, keepdim=True) + eps)
    return y if w is None else y * w


def test_rms_norm(device):
    x, w = randn(2, 3, 8), randn(8)
    compare(
        lambda a, b: C.rms_norm(a, b, [8], 1e-6),
        lambda a, b: _rms_ref(a, b, 1, 1e-6),
        [x, w],
        device,
        grad=(0, 1),
    )
    compare(
        lambda a: C.rms_norm(a, None, (3, 8), epsilon=1e-2),
        lambda a: _rms_ref(a, None, 2, 1e-2),
        [x],
        device,
        grad=(0,),
    )
    # float16 input: computed in float32, returned in float16
    y = C.rms_norm(ft(x, device).half(), ft(w, device).half(), [8], 1e-6)
    assert y.dtype == flow.float16
    close(y.float(), _rms_ref(tt(x), tt(w), 1, 1e-6), rtol=2e-3, atol=2e-3)
    with pytest.raises(RuntimeError):
        C.rms_norm(ft(x, device), None, [4], 1e-6)


def test_rms_layer_norm(device):
    x, w = randn(2, 3, 8), randn(8)
    compare(
        lambda a, b: C.rms_layer_norm(a, b, 1e-6),
        lambda a, b: b * (a * torch.rsqrt(a.pow(2).mean(-1, keepdim=True) + 1e-6)),
        [x, w],
        device,
        grad=(0, 1),
    )
    y = C.rms_layer_norm(ft(x, device), ft(w, device).half(), 1e-3)
    assert y.dtype == flow.float16


@pytest.mark.parametrize(
    "affine,fmt,act", [(True, "channels_first", "none"), (False, "channels_last", "silu")]
)
def test_group_norm(device, affine, fmt, act):
    x, g, b = randn(2, 6, 5), randn(6), randn(6)

    def ref(x_, g_, b_):
        xc = x_.movedim(-1, 1) if fmt == "channels_last" else x_
        y = TF.group_norm(xc, 3, g_ if affine else None, b_ if affine else None, eps=1e-3)
        y = TF.silu(y) if act == "silu" else y
        return y.movedim(1, -1) if fmt == "channels_last" else y

    xs = x.transpose(0, 2, 1).copy() if fmt == "channels_last" else x
    compare(
        lambda x_, g_, b_: C.group_norm(
            x_, g_, b_, affine, 3, 1e-3, data_format=fmt, activation=act
        ),
        ref,
        [xs, g, b],
        device,
        grad=(0, 1, 2) if affine else (0,),
    )


@pytest.mark.parametrize("name", ["batch_norm", "normalization"])
def test_batch_norm(device, name):
    fn = getattr(C, name)
    x, g, b = randn(4, 3, 5), randn(3), randn(3)
    # training, moving statistics updated in place with PyTorch's momentum rule
    mean_f, var_f = ft(np.zeros(3, np.float32), device), ft(np.ones(3, np.float32), device)
    mean_t, var_t = torch.zeros(3), torch.ones(3)
    compare(
        lambda x_, g_, b_: fn(x_, mean_f, var_f, g_, b_, 1, 1e-5, 0.2, True),
        lambda x_, g_, b_: TF.batch_norm(x_, mean_t, var_t, g_, b_, True, 0.2, 1e-5),
        [x, g, b],
        device,
        grad=(0, 1, 2),
    )
    close(mean_f, mean_t)
    close(var_f, var_t)
    # evaluation uses the moving statistics; keyword names as OneFlow's
    y = fn(
        ft(x, device),
        moving_mean=mean_f,
        moving_variance=var_f,
        gamma=ft(g, device),
        beta=ft(b, device),
        epsilon=1e-3,
    )
    close(y, TF.batch_norm(tt(x), mean_t, var_t, tt(g), tt(b), False, 0.1, 1e-3))
    # channels on the last axis, no affine parameters, no moving statistics
    xl = x.transpose(0, 2, 1).copy()
    y = fn(ft(xl, device), axis=-1, is_training=True)
    close(y, TF.batch_norm(tt(x), None, None, training=True).transpose(1, 2))
    with pytest.raises(RuntimeError):
        fn(ft(x, device))  # evaluation needs the moving statistics


# --------------------------------------------------------------------------- nn functions


def test_dropout(device):
    x, r = randn(6, 8), randn(6, 8)
    compare(lambda a: C.dropout(a, p=0.0), lambda a: a, [x], device, grad=(0,))
    compare(lambda a: C.dropout(a, 0.7, False), lambda a: a, [x], device, grad=(0,))
    compare(
        lambda a, b: C.dropout(a, p=0.0, addend=b), lambda a, b: a + b, [x, r], device, grad=(0,)
    )
    y = C.dropout(ft(x, device), 0.25).cpu().numpy()
    kept = y != 0
    assert 0 < kept.sum() < kept.size
    np.testing.assert_allclose(y[kept], x[kept] / 0.75, rtol=1e-5)
    g = flow.Generator(device=device)
    g.manual_seed(3)
    y1 = C.dropout(ft(x, device), 0.5, True, False, g)
    g.manual_seed(3)
    same(C.dropout(ft(x, device), 0.5, generator=g), y1.cpu().numpy())


def test_one_hot(device):
    idx = np.array([[0, 2], [1, 3]], dtype=np.int64)
    y = C.one_hot(ft(idx, device))
    assert y.dtype == flow.int64
    same(y, np.eye(4, dtype=np.int64)[idx])
    y = C.one_hot(ft(idx, device), num_classes=5, on_value=2.5, off_value=-1.0)
    assert y.dtype == flow.float32
    same(y, np.where(np.eye(5)[idx] == 1, 2.5, -1.0).astype(np.float32))
    y = C.one_hot(ft(idx.astype(np.int32), device), 6, 7, 1)
    assert y.dtype == flow.int64
    same(y, np.where(np.eye(6)[idx] == 1, 7, 1))
    with pytest.raises(RuntimeError):
        C.one_hot(ft(randn(3), device))


def test_linear(device):
    x, w, b = randn(2, 3, 4), randn(5, 4), randn(5)
    compare(C.linear, TF.linear, [x, w, b], device, grad=(0, 1, 2))
    compare(lambda a, b_: C.linear(a, b_), lambda a, b_: a @ b_.T, [x, w], device, grad=(0, 1))


def test_embedding(device):
    w = randn(6, 3)
    idx = np.array([[0, 2, 5], [2, 2, 1]])
    compare(
        lambda w_: C.embedding(w_, ft(idx, device)),
        lambda w_: TF.embedding(tt(idx), w_),
        [w],
        device,
        grad=(0,),
    )
    compare(
        lambda w_: C.embedding(w_, ft(idx, device), padding_idx=2),
        lambda w_: TF.embedding(tt(idx), w_, padding_idx=2),
        [w],
        device,
        grad=(0,),
    )


def test_cast(device):
    x = ft(randn(3, 4), device, True)
    y = C.cast(x, flow.float64)
    assert y.dtype == flow.float64
    close(y, x.detach().cpu().numpy().astype(np.float64))
    y.sum().backward()
    assert x.grad.dtype == flow.float32
    close(x.grad, np.ones((3, 4)))
    assert C.cast(x, flow.float32) is x
    same(C.cast(ft([1.7, -2.2], device), dtype=flow.int32), [1, -2])


@pytest.mark.parametrize("name", ["identity", "amp_white_identity", "amp_black_identity"])
def test_identities(device, name):
    fn = getattr(C, name)
    x = ft(randn(3, 4), device, True)
    y = fn(x)
    assert y is not x and y.dtype == x.dtype
    close(y, x.detach().cpu().numpy())
    (y * 3).sum().backward()
    close(x.grad, np.full((3, 4), 3.0))


def test_amp_identities_under_autocast():
    x = flow.tensor(randn(3, 4))
    with flow.amp.autocast("cpu", dtype=flow.bfloat16):
        white = C.amp_white_identity(x)
        black = C.amp_black_identity(x.to(flow.bfloat16))
    assert white.dtype == flow.bfloat16
    assert black.dtype == flow.float32
    close(black, x.to(flow.bfloat16).float().numpy())
    assert C.amp_white_identity(flow.tensor([1, 2])).dtype == flow.int64


def test_log_softmax_and_silu(device):
    x3 = randn(2, 3, 4)
    compare(lambda a: C.log_softmax(a), lambda a: torch.log_softmax(a, 0), [x3], device)
    x2 = randn(2, 3)
    compare(lambda a: C.log_softmax(a), lambda a: torch.log_softmax(a, 1), [x2], device)
    compare(
        lambda a: C.log_softmax(a, dim=-1),
        lambda a: torch.log_softmax(a, -1),
        [x3],
        device,
        grad=(0,),
    )
    compare(C.silu, TF.silu, [x3], device, grad=(0,))


@pytest.mark.parametrize("ta,tb,alpha", [(False, False, 1.0), (True, True, 0.5), (False, True, 2)])
def test_batch_matmul(device, ta, tb, alpha):
    a = randn(2, 4, 3) if ta else randn(2, 3, 4)
    b = randn(2, 5, 4) if tb else randn(2, 4, 5)

    def ref(a_, b_):
        a_ = a_.transpose(1, 2) if ta else a_
        b_ = b_.transpose(1, 2) if tb else b_
        return alpha * torch.bmm(a_, b_)

    compare(
        lambda a_, b_: C.batch_matmul(a_, b_, ta, tb, alpha),
        ref,
        [a, b],
        device,
        grad=(0, 1),
        rtol=1e-4,
    )


# --------------------------------------------------------------------------- losses


def test_cross_entropy(device):
    x, target = randn(6, 5), np.array([0, 4, 2, 2, 1, 3])
    w = np.abs(randn(5)) + 0.5
    compare(
        lambda a: C.cross_entropy(a, ft(target, device)),
        lambda a: TF.cross_entropy(a, tt(target)),
        [x],
        device,
        grad=(0,),
    )
    # LiBai's call: positional, int32 target, no reduction, label smoothing
    compare(
        lambda a: C.cross_entropy(a, ft(target.astype(np.int32), device), None, -100, "none", 0.1),
        lambda a: TF.cross_entropy(a, tt(target), reduction="none", label_smoothing=0.1),
        [x],
        device,
        grad=(0,),
    )
    compare(
        lambda a, w_: C.cross_entropy(a, ft(target, device), w_, ignore_index=2, reduction="sum"),
        lambda a, w_: TF.cross_entropy(a, tt(target), w_, ignore_index=2, reduction="sum"),
        [x, w],
        device,
        grad=(0,),
    )
    probs = np.abs(randn(6, 5))
    probs /= probs.sum(1, keepdims=True)
    compare(
        lambda a, p: C.cross_entropy(a, p),
        lambda a, p: TF.cross_entropy(a, p),
        [x, probs],
        device,
        grad=(0,),
    )


def test_nll_loss(device):
    x, target = randn(6, 5), np.array([0, 4, 2, 2, 1, 3])
    w = np.abs(randn(5)) + 0.5
    compare(
        lambda a: C.nll_loss(a, ft(target, device)),
        lambda a: TF.nll_loss(a, tt(target)),
        [x],
        device,
        grad=(0,),
    )
    compare(
        lambda a, w_: C.nll_loss(a, ft(target, device), w_, 4, "none"),
        lambda a, w_: TF.nll_loss(a, tt(target), w_, ignore_index=4, reduction="none"),
        [x, w],
        device,
        grad=(0,),
    )


def test_sparse_softmax_cross_entropy(device):
    x = randn(2, 3, 5)
    label = RNG.integers(0, 5, size=(2, 3))
    ref = lambda a: TF.cross_entropy(a.reshape(6, 5), tt(label).reshape(6), reduction="none")  # noqa: E731
    compare(
        lambda a: C.sparse_softmax_cross_entropy(a, ft(label, device)),
        lambda a: ref(a).reshape(2, 3),
        [x],
        device,
        grad=(0,),
    )
    # older OneFlow's form, with depth
    compare(
        lambda a: C.sparse_softmax_cross_entropy(
            a.reshape(6, 5), ft(label.astype(np.int32), device).reshape(6), depth=5
        ),
        ref,
        [x],
        device,
        grad=(0,),
    )


def test_softmax_and_sparse_cross_entropy(device):
    x = randn(4, 5)
    probs = np.abs(randn(4, 5))
    probs /= probs.sum(1, keepdims=True)
    compare(
        C.softmax_cross_entropy,
        lambda a, p: -(p * torch.log_softmax(a, -1)).sum(-1),
        [x, probs],
        device,
        grad=(0,),
    )
    label = np.array([1, 0, 4, 4])
    compare(
        lambda p: C.sparse_cross_entropy(p, ft(label, device), 5),
        lambda p: -torch.log(p[torch.arange(4), tt(label)]),
        [probs],
        device,
        grad=(0,),
    )


@pytest.mark.filterwarnings("ignore:reduction. 'mean' divides")
@pytest.mark.parametrize("log_target", [False, True])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none", "batchmean"])
def test_kl_div_loss(device, log_target, reduction):
    x = torch.log_softmax(tt(randn(4, 5)), -1).numpy()
    target = np.abs(randn(4, 5))
    target[0, 0] = 0.0
    if log_target:
        target = np.log(target + 0.1).astype(np.float32)
    compare(
        lambda a, t: C.kl_div_loss(a, t, log_target, reduction),
        lambda a, t: TF.kl_div(a, t, reduction=reduction, log_target=log_target),
        [x, target],
        device,
        grad=(0,),
    )


@pytest.mark.filterwarnings("ignore:reduction. 'mean' divides")
def test_kl_div_loss_defaults(device):
    x, target = randn(3, 4), np.abs(randn(3, 4))
    close(C.kl_div_loss(ft(x, device), ft(target, device)), TF.kl_div(tt(x), tt(target)))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_l1_and_smooth_l1_loss(device, reduction):
    a, b = randn(3, 4), randn(3, 4)
    compare(
        lambda x, y: C.l1_loss(x, y, reduction),
        lambda x, y: TF.l1_loss(x, y, reduction=reduction),
        [a, b],
        device,
        grad=(0, 1),
    )
    for beta in (1.0, 0.5, 0.0):
        compare(
            lambda x, y, beta=beta: C.smooth_l1_loss(x, y, beta, reduction),
            lambda x, y, beta=beta: TF.smooth_l1_loss(x, y, reduction=reduction, beta=beta),
            [a, b],
            device,
            grad=(0,),
        )
    close(C.l1_loss(ft(a, device), ft(b, device)), TF.l1_loss(tt(a), tt(b)))
    close(C.smooth_l1_loss(ft(a, device), ft(b, device)), TF.smooth_l1_loss(tt(a), tt(b)))


def test_binary_cross_entropy_losses(device):
    p = 1 / (1 + np.exp(-randn(3, 4)))
    t, w, pw = RNG.random((3, 4)).astype(np.float32), np.abs(randn(3, 4)), np.abs(randn(4))
    compare(
        lambda a, t_: C.binary_cross_entropy_loss(a, t_),
        lambda a, t_: TF.binary_cross_entropy(a, t_),
        [p.astype(np.float32), t],
        device,
        grad=(0,),
    )
    compare(
        lambda a, t_, w_: C.binary_cross_entropy_loss(a, t_, w_, "sum"),
        lambda a, t_, w_: TF.binary_cross_entropy(a, t_, w_, reduction="sum"),
        [p.astype(np.float32), t, w],
        device,
        grad=(0,),
    )
    x = randn(3, 4)
    compare(
        lambda a, t_, w_, pw_: C.binary_cross_entropy_with_logits_loss(a, t_, w_, pw_, "none"),
        lambda a, t_, w_, pw_: TF.binary_cross_entropy_with_logits(
            a, t_, w_, pos_weight=pw_, reduction="none"
        ),
        [x, t, w, pw],
        device,
        grad=(0,),
    )
    close(
        C.binary_cross_entropy_with_logits_loss(ft(x, device), ft(t, device)),
        TF.binary_cross_entropy_with_logits(tt(x), tt(t)),
    )


def test_in_top_k(device):
    pred = np.array([[0.1, 0.8, 0.1], [0.5, 0.5, 0.0], [0.3, 0.2, 0.5], [0.0, 0.1, 0.9]])
    targets = np.array([1, 1, 1, 0], dtype=np.int32)

    def ref(k):  # the target is in the top k when fewer than k classes score strictly higher
        return np.array([(row > row[t]).sum() < k for row, t in zip(pred, targets)])

    for k in (1, 2, 3):
        out = C.in_top_k(ft(targets, device), ft(pred.astype(np.float32), device), k)
        assert out.dtype == flow.bool
        same(out, ref(k))
    same(C.in_top_k(ft(targets, device), ft(pred, device), k=1), [True, True, False, False])
