"""flow._C compatibility names, second half: indexing, shape, math and the PyTorch-signature
names (see test_c_compat.py for the fused and nn ones)."""

import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from c_compat_helpers import RNG, C, close, compare, ft, randn, same, tt  # noqa: F401

import oneflow as flow

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
