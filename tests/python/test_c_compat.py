"""OneFlow's functional names under ``flow._C`` that model code (LiBai, OneFlow's nn modules)
calls directly, supplied by ``oneflow.framework.c_compat``: each checked against a PyTorch or
NumPy reference written from OneFlow's documented semantics (values, and gradients for the fused
and differentiable ops), with OneFlow's argument names and at least one non-default argument."""

import types

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import oneflow as flow
from oneflow.framework import c_compat

c_compat.install()
C = flow._C

RNG = np.random.default_rng(0)


def randn(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def close(f, t, rtol=1e-5, atol=1e-5):
    if isinstance(t, torch.Tensor):
        t = t.detach().numpy()
    got = f.detach().cpu().numpy() if isinstance(f, flow.Tensor) else np.asarray(f)
    assert got.shape == np.shape(t), (got.shape, np.shape(t))
    np.testing.assert_allclose(
        np.asarray(got, dtype=np.float64), np.asarray(t, dtype=np.float64), rtol=rtol, atol=atol
    )


def same(f, expect):
    got = f.detach().cpu().numpy()
    np.testing.assert_array_equal(got, np.asarray(expect))


def ft(a, device, grad=False):
    return flow.tensor(np.asarray(a), device=device, requires_grad=grad)


def tt(a, grad=False):
    return torch.tensor(np.asarray(a), requires_grad=grad)


def compare(f_fn, t_fn, arrays, device, grad=(), rtol=1e-5, atol=1e-5):
    """Runs f_fn on oneflow tensors and t_fn on torch tensors made from `arrays`; compares the
    outputs (a tensor or a tuple of them) and the gradients of the inputs listed in `grad`."""
    fs = [ft(a, device, i in grad) for i, a in enumerate(arrays)]
    ts = [tt(a, i in grad) for i, a in enumerate(arrays)]
    fo, to = f_fn(*fs), t_fn(*ts)
    if not isinstance(to, tuple):
        fo, to = (fo,), (to,)
    assert len(fo) == len(to)
    for a, b in zip(fo, to):
        close(a, b, rtol, atol)
    if grad:
        f_loss, t_loss = 0, 0
        for a, b in zip(fo, to):
            g = randn(*b.shape)
            f_loss = f_loss + (a * ft(g, device)).sum()
            t_loss = t_loss + (b * tt(g)).sum()
        f_loss.backward()
        t_loss.backward()
        for i in grad:
            close(fs[i].grad, ts[i].grad, rtol, atol)


# --------------------------------------------------------------------------- install


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


# --------------------------------------------------------------------------- indexing


def test_gather_nd(device):
    params = randn(3, 4, 5)
    for idx in (np.array([[0, 1], [2, 3], [1, 0]]), np.array([[[2], [0]], [[1], [1]]])):
        ref = np.stack([params[tuple(i)] for i in idx.reshape(-1, idx.shape[-1])])
        ref = ref.reshape(idx.shape[:-1] + params.shape[idx.shape[-1] :])
        p = ft(params, device, True)
        out = C.gather_nd(p, ft(idx, device))
        close(out, ref)
        out.sum().backward()
        counts = np.zeros(params.shape, np.float32)
        for i in idx.reshape(-1, idx.shape[-1]):
            counts[tuple(i)] += 1
        close(p.grad, counts)


@pytest.mark.parametrize("name", ["scatternd", "scatter_nd"])
def test_scatternd(device, name):
    idx = np.array([[0, 1], [2, 3], [0, 1]])  # a repeated place adds up
    upd = randn(3, 5)
    ref = np.zeros((3, 4, 5), np.float32)
    np.add.at(ref, (idx[:, 0], idx[:, 1]), upd)
    u = ft(upd, device, True)
    out = getattr(C, name)(ft(idx, device), u, (3, 4, 5))
    close(out, ref)
    g = randn(3, 4, 5)
    (out * ft(g, device)).sum().backward()
    close(u.grad, g[idx[:, 0], idx[:, 1]])
    like = ft(np.zeros((3, 4, 5), np.float32), device)
    close(C.scatterndlike(like, ft(upd, device), ft(idx, device)), ref)


def test_tensor_scatter_nd_update(device):
    base, idx, upd = randn(4, 3), np.array([[1], [3]]), randn(2, 3)
    ref = base.copy()
    ref[[1, 3]] = upd
    b, u = ft(base, device, True), ft(upd, device, True)
    out = C.tensor_scatter_nd_update(b, ft(idx, device), u)
    close(out, ref)
    out.sum().backward()
    close(b.grad, np.array([[1.0] * 3, [0.0] * 3, [1.0] * 3, [0.0] * 3]))
    close(u.grad, np.ones((2, 3)))
    target = ft(base, device)
    res = C.tensor_scatter_nd_update(
        target, ft(np.array([[0, 2]]), device), ft([9.0], device), True
    )
    assert res is target
    assert target.cpu().numpy()[0, 2] == 9.0


def test_batch_gather(device):
    x = randn(2, 3, 4)
    idx = np.array([[2, 0], [1, 1]])
    close(
        C.batch_gather(ft(x, device), ft(idx, device)), np.stack([x[b][idx[b]] for b in range(2)])
    )
    x2, idx1 = randn(4, 3), np.array([3, 0, 0])  # no batch axis: gathers along axis 0
    close(C.batch_gather(ft(x2, device), ft(idx1, device)), x2[idx1])
    x3 = randn(2, 3, 4, 2)
    idx3 = RNG.integers(0, 4, size=(2, 3, 5))
    ref3 = np.take_along_axis(x3, idx3[..., None].repeat(2, -1), axis=2)
    a = ft(x3, device, True)
    out = C.batch_gather(a, ft(idx3, device))
    close(out, ref3)
    out.sum().backward()
    counts = np.zeros_like(x3)
    for i in np.ndindex(2, 3, 5):
        counts[i[0], i[1], idx3[i]] += 1
    close(a.grad, counts)


def test_dim_gather_and_index_select(device):
    x, idx = randn(3, 4), np.array([[0, 3], [1, 1], [2, 0]])
    compare(
        lambda a: C.dim_gather(a, 1, ft(idx, device)),
        lambda a: torch.gather(a, 1, tt(idx)),
        [x],
        device,
        grad=(0,),
    )
    compare(
        lambda a: C.dim_gather(a, 0, ft(idx[:2] % 3, device), sparse_grad=True),
        lambda a: torch.gather(a, 0, tt(idx[:2] % 3)),
        [x],
        device,
    )
    compare(
        lambda a: C.index_select(a, 1, ft([3, 0, 3], device)),
        lambda a: torch.index_select(a, 1, torch.tensor([3, 0, 3])),
        [x],
        device,
        grad=(0,),
    )


def test_slice_update(device):
    x, u = randn(4, 6), randn(2, 2)

    def ref(a, b):
        out = a.clone()
        out[1:4:2, 0:4:2] = b
        return out

    compare(
        lambda a, b: C.slice_update(a, b, [1, 0], [4, 4], [2, 2]),
        ref,
        [x, u],
        device,
        grad=(0, 1),
    )
    target = ft(x, device)
    out = C.slice_update(
        target, ft(np.zeros((4, 1), np.float32), device), [0, 5], [4, 6], [1, 1], inplace=True
    )
    assert out is target
    assert np.all(target.cpu().numpy()[:, 5] == 0)


def test_broadcast_like(device):
    x, like = randn(3), np.zeros((2, 3), np.float32)
    compare(lambda a: C.broadcast_like(a, ft(like, device)), lambda a: a.expand(2, 3), [x], device)
    y = randn(2)
    compare(
        lambda a: C.broadcast_like(a, ft(like, device), broadcast_axes=[1]),
        lambda a: a[:, None].expand(2, 3),
        [y],
        device,
        grad=(0,),
    )
    z = randn(1, 3)
    compare(
        lambda a: C.broadcast_like(a, ft(like, device), [0]),
        lambda a: a.expand(2, 3),
        [z],
        device,
        grad=(0,),
    )


@pytest.mark.parametrize("mask_dtype", [np.bool_, np.int8])
def test_masked_fill(device, mask_dtype):
    x, mask = randn(3, 4), RNG.integers(0, 2, size=(1, 4)).astype(mask_dtype)
    compare(
        lambda a: C.masked_fill(a, ft(mask, device), -2.5),
        lambda a: a.masked_fill(torch.tensor(mask.astype(bool)), -2.5),
        [x],
        device,
        grad=(0,),
    )


def test_pad(device):
    x = randn(1, 2, 3, 4)
    compare(lambda a: C.pad(a, [1, 2]), lambda a: TF.pad(a, [1, 2]), [x], device, grad=(0,))
    compare(
        lambda a: C.pad(a, (1, 0, 2, 1), value=3.5),
        lambda a: TF.pad(a, (1, 0, 2, 1), value=3.5),
        [x],
        device,
    )
    compare(
        lambda a: C.pad(a, [2, 1, 1, 1], mode="reflect"),
        lambda a: TF.pad(a, [2, 1, 1, 1], mode="reflect"),
        [x],
        device,
        grad=(0,),
    )
    compare(
        lambda a: C.pad(a, [1, 1], "replicate"),
        lambda a: TF.pad(a, [1, 1], mode="replicate"),
        [x[0]],
        device,
    )


def test_interpolate_and_upsample(device):
    x = randn(1, 2, 3, 4)
    compare(
        lambda a: C.interpolate(a, scale_factor=2),
        lambda a: TF.interpolate(a, scale_factor=2),
        [x],
        device,
        grad=(0,),
    )
    compare(
        lambda a: C.interpolate(a, size=(5, 7), mode="bilinear", align_corners=True),
        lambda a: TF.interpolate(a, size=(5, 7), mode="bilinear", align_corners=True),
        [x],
        device,
        grad=(0,),
    )
    compare(
        lambda a: C.upsample_nearest_2d(a, 2.0, 3.0),
        lambda a: TF.interpolate(a, scale_factor=(2.0, 3.0), mode="nearest"),
        [x],
        device,
        grad=(0,),
    )
    compare(
        lambda a: C.upsample_nearest_2d(a, output_size=(5, 6)),
        lambda a: TF.interpolate(a, size=(5, 6), mode="nearest"),
        [x],
        device,
    )
    compare(
        lambda a: C.upsample_bilinear_2d(a, 2.0, 2.0, True),
        lambda a: TF.interpolate(a, scale_factor=2.0, mode="bilinear", align_corners=True),
        [x],
        device,
        grad=(0,),
    )
    xl = x.transpose(0, 2, 3, 1).copy()
    compare(
        lambda a: C.upsample_bilinear_2d(a, output_size=(4, 5), data_format="channels_last"),
        lambda a: TF.interpolate(
            a.permute(0, 3, 1, 2), size=(4, 5), mode="bilinear", align_corners=False
        ).permute(0, 2, 3, 1),
        [xl],
        device,
    )


# --------------------------------------------------------------------------- shape and joins


def test_concat_stack(device):
    a, b = randn(2, 3), randn(2, 3)
    compare(
        lambda x, y: C.concat([x, y]), lambda x, y: torch.cat([x, y]), [a, b], device, grad=(0, 1)
    )
    compare(lambda x, y: C.concat((x, y), dim=1), lambda x, y: torch.cat([x, y], 1), [a, b], device)
    compare(lambda x, y: C.stack([x, y]), lambda x, y: torch.stack([x, y]), [a, b], device)
    compare(
        lambda x, y: C.stack((x, y), -1),
        lambda x, y: torch.stack([x, y], -1),
        [a, b],
        device,
        grad=(0, 1),
    )


def test_split_chunk_unbind(device):
    x = randn(6, 4)
    compare(lambda a: C.split(a, 2), lambda a: torch.split(a, 2), [x], device, grad=(0,))
    compare(lambda a: C.split(a, [1, 3], dim=1), lambda a: torch.split(a, [1, 3], 1), [x], device)
    compare(lambda a: C.chunk(a, 3), lambda a: torch.chunk(a, 3), [x], device, grad=(0,))
    compare(lambda a: C.chunk(a, 2, dim=1), lambda a: torch.chunk(a, 2, 1), [x], device)
    compare(lambda a: C.unbind(a), lambda a: torch.unbind(a), [x], device)
    compare(lambda a: C.unbind(a, 1), lambda a: torch.unbind(a, 1), [x], device, grad=(0,))
    compare(lambda a: C.tensor_split(a, 4), lambda a: torch.tensor_split(a, 4), [x], device)
    compare(
        lambda a: C.tensor_split(a, [1, 3], dim=1),
        lambda a: torch.tensor_split(a, [1, 3], 1),
        [x],
        device,
    )
    compare(lambda a: C.hsplit(a, 2), lambda a: torch.hsplit(a, 2), [x], device)
    compare(lambda a: C.vsplit(a, [2]), lambda a: torch.vsplit(a, [2]), [x], device)
    assert isinstance(C.split(ft(x, device), 3), tuple)


def test_movement_ops(device):
    x = randn(2, 3, 4)
    compare(lambda a: C.expand_dims(a, 1), lambda a: a.unsqueeze(1), [x], device)
    compare(lambda a: C.expand_dims(a, -1), lambda a: a.unsqueeze(-1), [x], device)
    compare(lambda a: C.swapaxes(a, 0, 2), lambda a: a.swapaxes(0, 2), [x], device, grad=(0,))
    compare(lambda a: C.swapdims(a, 1, -1), lambda a: a.swapdims(1, -1), [x], device)
    compare(lambda a: C.movedim(a, 0, -1), lambda a: a.movedim(0, -1), [x], device)
    compare(
        lambda a: C.movedim(a, [0, 1], [2, 0]), lambda a: a.movedim([0, 1], [2, 0]), [x], device
    )
    compare(lambda a: C.repeat(a, [2, 1, 3]), lambda a: a.repeat(2, 1, 3), [x], device, grad=(0,))
    compare(lambda a: C.tile(a, (2,)), lambda a: a.tile((2,)), [x], device)
    compare(lambda a: C.roll(a, 1), lambda a: a.roll(1), [x], device)
    compare(lambda a: C.roll(a, [1, -2], [0, 2]), lambda a: a.roll((1, -2), (0, 2)), [x], device)
    compare(lambda a: C.t(a), lambda a: a.t(), [x[0]], device, grad=(0,))
    compare(lambda a: C.tril(a), lambda a: a.tril(), [x], device, grad=(0,))
    compare(lambda a: C.triu(a, diagonal=1), lambda a: a.triu(1), [x], device, grad=(0,))
    compare(lambda a: C.tril(a, -1), lambda a: a.tril(-1), [x], device)
    compare(lambda a: C.triu(a), lambda a: a.triu(), [x], device)


def test_meshgrid_einsum_dot(device):
    a, b = randn(3), randn(4)
    compare(
        lambda x, y: C.meshgrid([x, y]),
        lambda x, y: torch.meshgrid(x, y, indexing="ij"),
        [a, b],
        device,
    )
    compare(
        lambda x, y: C.meshgrid((x, y), indexing="xy"),
        lambda x, y: torch.meshgrid(x, y, indexing="xy"),
        [a, b],
        device,
    )
    m, n = randn(2, 3), randn(3, 4)
    compare(
        lambda x, y: C.einsum("ij,jk->ik", [x, y]),
        lambda x, y: torch.einsum("ij,jk->ik", x, y),
        [m, n],
        device,
        grad=(0, 1),
    )
    compare(
        lambda x, y: C.einsum("ij,jk->ki", x, y),
        lambda x, y: torch.einsum("ij,jk->ki", x, y),
        [m, n],
        device,
    )
    compare(lambda x, y: C.dot(x, y), torch.dot, [a, a[::-1].copy()], device, grad=(0, 1))


def test_scatter_add(device):
    x, idx, src = randn(3, 4), np.array([[0, 1, 2, 0]]), randn(1, 4)
    compare(
        lambda a, s: C.scatter_add(a, 0, ft(idx, device), s),
        lambda a, s: torch.scatter_add(a, 0, tt(idx), s),
        [x, src],
        device,
        grad=(0, 1),
    )
    compare(
        lambda a: C.scatter_add(a, 1, ft(idx, device), 2.0),
        lambda a: torch.scatter_add(a, 1, tt(idx), torch.full((1, 4), 2.0)),
        [x],
        device,
    )


# --------------------------------------------------------------------------- activations


ACTIVATIONS = [
    ("glu", lambda a: C.glu(a), lambda a: TF.glu(a, -1)),
    ("glu", lambda a: C.glu(a, dim=0), lambda a: TF.glu(a, 0)),
    ("softplus", lambda a: C.softplus(a), lambda a: TF.softplus(a)),
    ("softplus", lambda a: C.softplus(a, 2.0, 1.0), lambda a: TF.softplus(a, 2.0, 1.0)),
    ("leaky_relu", lambda a: C.leaky_relu(a, 0.2), lambda a: TF.leaky_relu(a, 0.2)),
    ("leaky_relu", lambda a: C.leaky_relu(a), lambda a: TF.leaky_relu(a)),
    ("elu", lambda a: C.elu(a, 0.5), lambda a: TF.elu(a, 0.5)),
    ("elu", lambda a: C.elu(a), lambda a: TF.elu(a)),
    ("celu", lambda a: C.celu(a, alpha=2.0), lambda a: TF.celu(a, 2.0)),
    ("celu", lambda a: C.celu(a), lambda a: TF.celu(a)),
    ("hardtanh", lambda a: C.hardtanh(a, -0.5, 0.5), lambda a: TF.hardtanh(a, -0.5, 0.5)),
    ("hardtanh", lambda a: C.hardtanh(a), lambda a: TF.hardtanh(a)),
    ("hardswish", lambda a: C.hardswish(a), lambda a: TF.hardswish(a)),
    ("hardsigmoid", lambda a: C.hardsigmoid(a), lambda a: TF.hardsigmoid(a)),
    ("hardshrink", lambda a: C.hardshrink(a, lambd=0.3), lambda a: TF.hardshrink(a, 0.3)),
    ("hardshrink", lambda a: C.hardshrink(a), lambda a: TF.hardshrink(a)),
    ("softshrink", lambda a: C.softshrink(a, alpha=0.3), lambda a: TF.softshrink(a, 0.3)),
    ("softshrink", lambda a: C.softshrink(a), lambda a: TF.softshrink(a)),
    (
        "threshold",
        lambda a: C.threshold(a, threshold=0.1, value=-1.0),
        lambda a: TF.threshold(a, 0.1, -1.0),
    ),
    ("mish", lambda a: C.mish(a), lambda a: TF.mish(a)),
    ("selu", lambda a: C.selu(a), lambda a: TF.selu(a)),
    ("softsign", lambda a: C.softsign(a), lambda a: TF.softsign(a)),
    ("logsigmoid", lambda a: C.logsigmoid(a), lambda a: TF.logsigmoid(a)),
]


@pytest.mark.parametrize("name,f,ref", ACTIVATIONS, ids=[c[0] for c in ACTIVATIONS])
def test_activations(device, name, f, ref):
    compare(f, ref, [randn(4, 6)], device, grad=(0,))


def test_inplace_activation_flags(device):
    x = randn(3, 4)
    for fn, ref in [
        (lambda a: C.leaky_relu(a, 0.1, True), lambda a: TF.leaky_relu(a, 0.1)),
        (lambda a: C.hardsigmoid(a, inplace=True), TF.hardsigmoid),
        (lambda a: C.hardshrink(a, lambd=0.2, inplace=True), lambda a: TF.hardshrink(a, 0.2)),
        (lambda a: C.softshrink(a, alpha=0.2, inplace=True), lambda a: TF.softshrink(a, 0.2)),
        (lambda a: C.celu(a, alpha=0.7, inplace=True), lambda a: TF.celu(a, 0.7)),
    ]:
        a = ft(x, device)
        out = fn(a)
        close(out, ref(tt(x)))
        close(a, ref(tt(x)))


# --------------------------------------------------------------------------- math


def test_elementwise_math(device):
    x = randn(3, 4)
    x[0, 0] = 0.0
    compare(C.square, torch.square, [x], device, grad=(0,))
    compare(C.negative, torch.neg, [x], device, grad=(0,))
    compare(
        C.reciprocal_no_nan,  # 0 where x is 0, with a zero gradient there
        lambda a: torch.where(a == 0, 0.0, 1 / torch.where(a == 0, 1.0, a)),
        [x],
        device,
        grad=(0,),
    )
    compare(C.sqrt_square_sum, lambda a: a.square().sum().sqrt(), [x], device, grad=(0,))
    compare(lambda a: C.clip(a, -0.5, 0.5), lambda a: a.clip(-0.5, 0.5), [x], device, grad=(0,))
    compare(lambda a: C.clip(a, min=0.0), lambda a: a.clip(min=0.0), [x], device)
    for name in ("clamp_", "clip_"):
        a = ft(x, device)
        out = getattr(C, name)(a, max=0.25)
        close(a, tt(x).clamp(max=0.25))
        assert out is a


@pytest.mark.parametrize(
    "name,op",
    [
        ("broadcast_equal", torch.eq),
        ("not_equal", torch.ne),
        ("greater", torch.gt),
        ("greater_equal", torch.ge),
        ("less", torch.lt),
        ("less_equal", torch.le),
    ],
)
def test_comparisons(device, name, op):
    a = np.array([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]], np.float32)
    b = np.array([2.0, 2.0, 2.0], np.float32)
    fn = getattr(C, name)
    same(fn(ft(a, device), ft(b, device)), op(tt(a), tt(b)).numpy())
    same(fn(ft(a, device), 2.0), op(tt(a), 2.0).numpy())
    same(fn(2.0, ft(a, device)), op(torch.tensor(2.0), tt(a)).numpy())


def test_equal_is_whole_tensor_equality(device):
    a = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    assert C.equal(ft(a, device), ft(a.copy(), device)) is True
    b = a.copy()
    b[1, 1] = 0
    assert C.equal(ft(a, device), ft(b, device)) is False
    assert C.equal(ft(a, device), ft(a[:1], device)) is False


def test_max_min_median(device):
    x, y = randn(3, 5), randn(3, 5)
    compare(lambda a: C.max(a), torch.max, [x], device, grad=(0,))
    compare(lambda a: C.min(a), torch.min, [x], device)
    compare(lambda a: C.max(a, 1)[0], lambda a: torch.max(a, 1)[0], [x], device, grad=(0,))
    same(C.max(ft(x, device), 1, True)[1], torch.max(tt(x), 1, True)[1].numpy())
    same(C.min(ft(x, device), dim=0)[1], torch.min(tt(x), 0)[1].numpy())
    compare(lambda a, b: C.max(a, b), torch.maximum, [x, y], device, grad=(0, 1))
    compare(lambda a, b: C.min(a, b), torch.minimum, [x, y], device)
    compare(lambda a: C.median(a), torch.median, [x], device)
    vals, idx = C.median(ft(x, device), 1, keepdim=True)
    tv, ti = torch.median(tt(x), 1, keepdim=True)
    close(vals, tv)
    same(idx, ti.numpy())


def test_std_var(device):
    x = randn(3, 4, 5)
    compare(lambda a: C.std(a), lambda a: a.std(), [x], device, grad=(0,))
    compare(lambda a: C.var(a), lambda a: a.var(), [x], device)
    compare(
        lambda a: C.std(a, [0, 2], False, True),
        lambda a: a.std((0, 2), unbiased=False, keepdim=True),
        [x],
        device,
        grad=(0,),
    )
    compare(
        lambda a: C.var(a, dim=1, unbiased=False),
        lambda a: a.var(1, unbiased=False),
        [x],
        device,
    )


def test_reductions(device):
    x = randn(2, 3, 4)
    compare(lambda a: C.reduce_sum(a), torch.sum, [x], device, grad=(0,))
    compare(lambda a: C.reduce_sum(a, [0, 2], True), lambda a: a.sum((0, 2), True), [x], device)
    y = C.reduce_sum(ft(x, device), 1, dtype=flow.float64)
    assert y.dtype == flow.float64
    close(y, x.sum(1))
    compare(lambda a: C.reduce_mean(a), torch.mean, [x], device, grad=(0,))
    compare(lambda a: C.reduce_mean(a, [1], keepdim=True), lambda a: a.mean(1, True), [x], device)
    compare(lambda a: C.reduce_max(a, [1, 2]), lambda a: a.amax((1, 2)), [x], device, grad=(0,))
    compare(lambda a: C.reduce_max(a, 0, True), lambda a: a.amax(0, True), [x], device)
    compare(lambda a: C.reduce_min(a, [-1]), lambda a: a.amin(-1), [x], device, grad=(0,))
    compare(lambda a: C.reduce_min(a, axis=1, keepdim=True), lambda a: a.amin(1, True), [x], device)
    compare(lambda a: C.reduce_prod(a), torch.prod, [x], device, grad=(0,), rtol=1e-4)
    compare(
        lambda a: C.reduce_prod(a, [0, 2], keepdim=True),
        lambda a: a.prod(2, True).prod(0, True),
        [x],
        device,
        grad=(0,),
    )
    y = C.reduce_prod(ft(x, device), 1, dtype=flow.float64)
    assert y.dtype == flow.float64
    close(y, x.astype(np.float64).prod(1))
    b = x > 0
    same(C.reduce_all(ft(b, device)), b.all())
    same(C.reduce_all(ft(b, device), [1], True), b.all(1, keepdims=True))
    same(C.reduce_any(ft(b, device)), b.any())
    same(C.reduce_any(ft(b, device), 2), b.any(2))


def test_top_k_and_arg_sort(device):
    x = randn(3, 6)
    out = C.top_k(ft(x, device), 2)
    assert out.dtype == flow.int32
    same(out, np.argsort(-x, axis=-1, kind="stable")[:, :2])
    out = C.top_k(ft(x, device), 3, sorted=True)
    same(out, np.argsort(-x, axis=-1, kind="stable")[:, :3])
    up = C.arg_sort(ft(x, device), "ASCENDING")
    assert up.dtype == flow.int32
    same(up, np.argsort(x, axis=-1, kind="stable"))
    same(C.arg_sort(ft(x, device), direction="DESCENDING"), np.argsort(-x, axis=-1, kind="stable"))
    with pytest.raises(ValueError):
        C.arg_sort(ft(x, device), "UP")


def test_cosine_similarity_and_normalize(device):
    a, b = randn(4, 5), randn(4, 5)
    compare(C.cosine_similarity, TF.cosine_similarity, [a, b], device, grad=(0, 1))
    compare(
        lambda x, y: C.cosine_similarity(x, y, dim=0, eps=1e-6),
        lambda x, y: TF.cosine_similarity(x, y, dim=0, eps=1e-6),
        [a, b],
        device,
    )
    compare(C.normalize, TF.normalize, [a], device, grad=(0,))
    compare(
        lambda x: C.normalize(x, p=1.0, dim=0, eps=1e-3),
        lambda x: TF.normalize(x, p=1.0, dim=0, eps=1e-3),
        [a],
        device,
        grad=(0,),
    )


def test_gelu_with_approximate(device):
    x = randn(3, 5)
    compare(C.gelu_with_approximate, TF.gelu, [x], device, grad=(0,))
    compare(
        lambda a: C.gelu_with_approximate(a, approximate="tanh"),
        lambda a: TF.gelu(a, approximate="tanh"),
        [x],
        device,
        grad=(0,),
    )


# --------------------------------------------------------------------------- PyTorch-form names


def _pos(*shape):
    return np.abs(randn(*shape)) + 0.5


_SPECIAL = np.array([1.0, np.nan, -np.inf, 2.5, np.inf, -0.5], np.float32)
_WELL = (randn(3, 3) + 4 * np.eye(3)).astype(np.float32)

DELEGATES = [
    (
        "baddbmm",
        lambda i, a, b: C.baddbmm(i, a, b, beta=0.5, alpha=2.0),
        lambda i, a, b: torch.baddbmm(i, a, b, beta=0.5, alpha=2.0),
        [randn(2, 3, 5), randn(2, 3, 4), randn(2, 4, 5)],
    ),
    ("logaddexp", C.logaddexp, torch.logaddexp, [randn(3, 4), randn(3, 4)]),
    (
        "quantile",
        lambda a: C.quantile(a, 0.3, dim=1, keepdim=True),
        lambda a: torch.quantile(a, 0.3, dim=1, keepdim=True),
        [randn(3, 6)],
    ),
    (
        "repeat_interleave",
        lambda a: C.repeat_interleave(a, 2, dim=1),
        lambda a: torch.repeat_interleave(a, 2, dim=1),
        [randn(2, 3)],
    ),
    ("diag", lambda a: C.diag(a, 1), lambda a: torch.diag(a, 1), [randn(4, 4)]),
    (
        "addcdiv",
        lambda i, a, b: C.addcdiv(i, a, b, value=0.5),
        lambda i, a, b: torch.addcdiv(i, a, b, value=0.5),
        [randn(5), randn(5), _pos(5)],
    ),
    (
        "addcmul",
        lambda i, a, b: C.addcmul(i, a, b, value=2.0),
        lambda i, a, b: torch.addcmul(i, a, b, value=2.0),
        [randn(5), randn(5), randn(5)],
    ),
    ("frac", C.frac, torch.frac, [3 * randn(6)]),
    ("clamp_min", lambda a: C.clamp_min(a, 0.1), lambda a: a.clamp_min(0.1), [randn(6)]),
    ("clamp_max", lambda a: C.clamp_max(a, -0.1), lambda a: a.clamp_max(-0.1), [randn(6)]),
    (
        "reduce_nansum",
        lambda a: C.reduce_nansum(a, 1),
        lambda a: torch.nansum(a, 1),
        [np.where(randn(3, 4) > 1, np.nan, randn(3, 4)).astype(np.float32)],
    ),
    (
        "logsumexp",
        lambda a: C.logsumexp(a, 1, keepdim=True),
        lambda a: torch.logsumexp(a, 1, keepdim=True),
        [randn(3, 4)],
    ),
    ("mm", C.mm, torch.mm, [randn(2, 3), randn(3, 4)]),
    ("matrix_vector_product", C.matrix_vector_product, torch.mv, [randn(2, 3), randn(3)]),
    ("isnan", C.isnan, torch.isnan, [_SPECIAL]),
    ("isinf", C.isinf, torch.isinf, [_SPECIAL]),
    ("isfinite", C.isfinite, torch.isfinite, [_SPECIAL]),
    ("inv", C.inv, torch.linalg.inv, [_WELL]),
    (
        "bincount",
        lambda a: C.bincount(a, minlength=6),
        lambda a: torch.bincount(a, minlength=6),
        [np.array([0, 2, 2, 3])],
    ),
    (
        "isclose",
        lambda a, b: C.isclose(a, b, rtol=0.1),
        lambda a, b: torch.isclose(a, b, rtol=0.1),
        [np.array([1.0, 2.0, 3.0], np.float32), np.array([1.05, 2.5, 3.0], np.float32)],
    ),
    ("lerp", lambda a, b: C.lerp(a, b, 0.3), lambda a, b: torch.lerp(a, b, 0.3), [randn(4)] * 2),
    (
        "index_add",
        lambda a, s: C.index_add(a, 0, ft(np.array([2, 0]), "cpu").to(a.device), s, alpha=2.0),
        lambda a, s: torch.index_add(a, 0, torch.tensor([2, 0]), s, alpha=2.0),
        [randn(3, 2), randn(2, 2)],
    ),
    ("hstack", lambda a, b: C.hstack([a, b]), lambda a, b: torch.hstack([a, b]), [randn(2, 3)] * 2),
    ("vstack", lambda a, b: C.vstack((a, b)), lambda a, b: torch.vstack([a, b]), [randn(2, 3)] * 2),
    ("dstack", lambda a, b: C.dstack([a, b]), lambda a, b: torch.dstack([a, b]), [randn(2, 3)] * 2),
    (
        "column_stack",
        lambda a, b: C.column_stack([a, b]),
        lambda a, b: torch.column_stack([a, b]),
        [randn(3), randn(3, 2)],
    ),
    (
        "row_stack",
        lambda a, b: C.row_stack([a, b]),
        lambda a, b: torch.vstack([a, b]),
        [randn(3), randn(2, 3)],
    ),
    ("atleast_1d", C.atleast_1d, torch.atleast_1d, [np.array(2.0, np.float32)]),
    ("atleast_2d", C.atleast_2d, torch.atleast_2d, [randn(3)]),
    ("atleast_3d", C.atleast_3d, torch.atleast_3d, [randn(2, 3)]),
    ("linalg_cross", C.linalg_cross, torch.linalg.cross, [randn(2, 3), randn(2, 3)]),
    (
        "linalg_cross",
        lambda a, b: C.linalg_cross(a, b, dim=0),
        lambda a, b: torch.linalg.cross(a, b, dim=0),
        [randn(3, 2), randn(3, 2)],
    ),
]


@pytest.mark.parametrize("name,f,ref,arrays", DELEGATES, ids=[d[0] for d in DELEGATES])
def test_pytorch_form_names(device, name, f, ref, arrays):
    float_inputs = tuple(
        i for i, a in enumerate(arrays) if a.dtype == np.float32 and np.isfinite(a).all()
    )
    differentiable = name not in ("isnan", "isinf", "isfinite", "bincount", "isclose", "frac")
    compare(f, ref, arrays, device, grad=float_inputs if differentiable else (), rtol=1e-4)


def test_pytorch_form_misc(device):
    x = randn(3)
    for shift, kw in [(0.0, {}), (1e-3, {}), (1e-3, {"atol": 1e-2}), (1.0, {"rtol": 0.5})]:
        got = C.allclose(ft(x, device), ft(x + shift, device), **kw)
        assert got is torch.allclose(tt(x), tt(x + shift), **kw)
    assert C.finfo(flow.float16).max == torch.finfo(torch.float16).max
    assert C.iinfo(flow.int8).min == -128
    close(C.hann_window(5, periodic=False), torch.hann_window(5, periodic=False))
    close(C.hann_window(6), torch.hann_window(6))
    r = C.randn_like(ft(randn(2, 3), device))
    assert tuple(r.shape) == (2, 3) and r.dtype == flow.float32
    r = C.randint_like(ft(randn(2, 3), device), 3, 7)
    assert tuple(r.shape) == (2, 3)
    assert ((r.cpu().numpy() >= 3) & (r.cpu().numpy() < 7)).all()


INPLACE = [
    ("div_", lambda t: (2.0,), "div_"),
    ("floor_", lambda t: (), "floor_"),
    ("ceil_", lambda t: (), "ceil_"),
    ("round_", lambda t: (), "round_"),
    ("frac_", lambda t: (), "frac_"),
    ("sin_", lambda t: (), "sin_"),
    ("erfinv_", lambda t: (), "erfinv_"),
    ("greater_", lambda t: (0.1,), "gt_"),
    ("clamp_min_", lambda t: (0.2,), "clamp_min_"),
    ("clamp_max_", lambda t: (-0.2,), "clamp_max_"),
    ("lerp_", lambda t: (t.full((4, 3), 2.0), 0.25), "lerp_"),
    ("index_add_", lambda t: (0, t.tensor([3, 1]), t.ones(2, 3)), "index_add_"),
    ("masked_fill_", lambda t: (t.tensor([True, False, True]), 7.0), "masked_fill_"),
    ("as_strided_", lambda t: ((2, 2), (1, 2)), "as_strided_"),
    ("clamp_", lambda t: (-0.3, 0.3), "clamp_"),
    ("clip_", lambda t: (None, 0.3), "clip_"),
]


@pytest.mark.parametrize("name,args,method", INPLACE, ids=[c[0] for c in INPLACE])
def test_inplace_names(device, name, args, method):
    x = np.clip(randn(4, 3), -0.9, 0.9).astype(np.float32)
    a, b = ft(x, device), tt(x)
    f_args = tuple(v.to(device) if isinstance(v, flow.Tensor) else v for v in args(flow))
    out = getattr(C, name)(a, *f_args)
    getattr(b, method)(*args(torch))
    assert out is a
    close(a, b)


def test_masked_fill_inplace_integer_mask(device):
    x = randn(2, 3)
    a = ft(x, device)
    C.masked_fill_(a, ft(np.array([1, 0, 2], np.int8), device), -1.0)
    close(a, np.where(np.array([True, False, True]), -1.0, x))


def test_global_tensors(device):
    """LiBai's tensors are global: the fused names keep them global and compute as on local
    tensors."""
    placement = flow.placement(device, ranks=[0])
    sbp = flow.sbp.broadcast
    x, m, b = randn(2, 2, 4, 4), RNG.integers(0, 2, size=(2, 1, 4, 4)).astype(bool), randn(4)
    label = RNG.integers(0, 4, size=(16,))

    def run(g):
        xs, ms, bs = g(ft(x, device)), g(ft(m, device)), g(ft(b, device))
        return [
            C.fused_scale_mask_softmax_dropout(xs, ms, fill_value=-1e4, scale=0.5, p=0.0)[0],
            C.fused_scale_tril_softmax_mask_scale(xs, p=0.0, diagonal=0, tril_scale_value=2.0)[1],
            C.fused_bias_add_gelu(xs, bs, axis=3),
            C.fused_bias_add_dropout(xs, bs, p=0.0, axis=3),
            C.layer_norm_affine(xs, bs, bs, begin_norm_axis=3, begin_params_axis=3, epsilon=1e-5),
            C.rms_norm(xs, bs, [4], 1e-5),
            C.sparse_softmax_cross_entropy(xs.reshape(-1, 4), g(ft(label, device))),
            C.one_hot(g(ft(label, device)), 4, 1.0, 0.0),
            C.amp_white_identity(xs),
        ]

    local = run(lambda t: t)
    glob = run(lambda t: t.to_global(placement=placement, sbp=sbp))
    for a, g_ in zip(local, glob):
        assert g_.is_global
        close(g_.to_local(), a.detach().cpu().numpy())


def test_matmul_takes_oneflow_transpose_and_alpha_keywords():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 3, 4)).astype("float32")
    b = rng.standard_normal((2, 5, 4)).astype("float32")
    out = flow.matmul(flow.tensor(a), flow.tensor(b), transpose_b=True, alpha=0.5)
    np.testing.assert_allclose(out.numpy(), 0.5 * a @ b.transpose(0, 2, 1), rtol=1e-5)
    out = flow.matmul(
        flow.tensor(a.transpose(0, 2, 1)), flow.tensor(b), transpose_a=True, transpose_b=True
    )
    np.testing.assert_allclose(out.numpy(), a @ b.transpose(0, 2, 1), rtol=1e-5)
