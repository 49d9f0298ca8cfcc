"""Convolution and pooling (conv1d/2d/3d, conv_transpose*, max/avg/adaptive pools) against
PyTorch: random shapes and parameters, float32 and float64, values, gradients and indices,
non-contiguous and unbatched inputs, empty batches, and the errors PyTorch raises."""

import numpy as np
import pytest
import torch

import oneflow as flow
from differential import assert_close, check

FLOAT_DTYPES = ["float32", "float64"]
_TORCH = {"float32": torch.float32, "float64": torch.float64}
_FLOW = {"float32": flow.float32, "float64": flow.float64}


def _ints(rng, lo, hi, n):
    return tuple(int(v) for v in rng.integers(lo, hi + 1, size=n))


def _conv_case(rng, nsp, transposed=False):
    """Random shapes and parameters of a valid convolution."""
    groups = int(rng.choice([1, 2, 3]))
    cin, cout = groups * int(rng.integers(1, 4)), groups * int(rng.integers(1, 4))
    k = _ints(rng, 1, 3, nsp)
    stride = _ints(rng, 1, 3, nsp)
    dilation = _ints(rng, 1, 2, nsp)
    padding = _ints(rng, 0, 2, nsp)
    size = tuple(d * (kk - 1) + 1 + int(rng.integers(0, 5)) for d, kk in zip(dilation, k))
    n = int(rng.integers(1, 4))
    kw = {"stride": stride, "dilation": dilation, "groups": groups}
    if transposed:
        kw["padding"] = tuple(min(p, d * (kk - 1)) for p, d, kk in zip(padding, dilation, k))
        kw["output_padding"] = tuple(
            int(rng.integers(0, max(s, d))) for s, d in zip(stride, dilation)
        )
        w_shape = (cin, cout // groups) + k
        bias = (cout,)
    else:
        r = rng.random()
        if r < 0.2:
            kw["padding"], kw["stride"] = "same", (1,) * nsp
        elif r < 0.3:
            kw["padding"] = "valid"
        else:
            kw["padding"] = padding
        w_shape = (cout, cin // groups) + k
        bias = (cout,)
    return (n, cin) + size, w_shape, bias, kw


def _fn(name, nsp):
    return f"{name}{nsp}d"


@pytest.mark.filterwarnings("ignore:Using padding='same'")
@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("nsp", [1, 2, 3])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_conv(nsp, dtype, seed):
    rng = np.random.default_rng(seed * 10 + nsp)
    x, w, b, kw = _conv_case(rng, nsp)
    name = _fn("conv", nsp)
    if rng.random() < 0.5:
        check(
            lambda lib, x, w, b: getattr(lib.nn.functional, name)(x, w, b, **kw),
            [x, w, b],
            dtype=dtype,
            seed=seed,
        )
    else:
        check(
            lambda lib, x, w: getattr(lib.nn.functional, name)(x, w, **kw),
            [x, w],
            dtype=dtype,
            seed=seed,
        )


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("nsp", [1, 2, 3])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_conv_transpose(nsp, dtype, seed):
    rng = np.random.default_rng(seed * 10 + nsp + 100)
    x, w, b, kw = _conv_case(rng, nsp, transposed=True)
    name = _fn("conv_transpose", nsp)
    check(
        lambda lib, x, w, b: getattr(lib.nn.functional, name)(x, w, b, **kw),
        [x, w, b],
        dtype=dtype,
        seed=seed,
    )


def test_conv2d_bigger_float32():
    # Enough channels that oneDNN picks blocked formats (reorders in and out).
    kw = {"stride": 1, "padding": 1}
    check(
        lambda lib, x, w, b: lib.nn.functional.conv2d(x, w, b, **kw),
        [(2, 16, 12, 12), (32, 16, 3, 3), (32,)],
        dtype="float32",
    )
    check(
        lambda lib, x, w: lib.nn.functional.conv2d(x, w, stride=2, groups=4),
        [(2, 16, 13, 11), (32, 4, 3, 3)],
        dtype="float32",
    )


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_conv_non_contiguous_and_unbatched(dtype):
    def t(lib, tensor, i):
        return tensor.transpose(2, 3) if i == 0 else tensor

    check(
        lambda lib, x, w: lib.nn.functional.conv2d(x, w, padding=1),
        [(2, 3, 7, 5), (4, 3, 3, 3)],
        dtype=dtype,
        transform=t,
    )
    check(
        lambda lib, x, w, b: lib.nn.functional.conv1d(x, w, b, padding="same", dilation=2),
        [(3, 9), (5, 3, 4), (5,)],
        dtype=dtype,
    )
    check(
        lambda lib, x, w: lib.nn.functional.conv_transpose2d(x, w, stride=2),
        [(3, 4, 5), (3, 2, 3, 3)],
        dtype=dtype,
    )


def test_top_level_names():
    x = flow.randn(1, 2, 6, 6)
    w = flow.randn(3, 2, 3, 3)
    assert flow.conv2d(x, w).shape == (1, 3, 4, 4)
    assert flow.max_pool2d(x, 2).shape == (1, 2, 3, 3)
    assert flow.avg_pool1d(flow.randn(1, 2, 6), 2).shape == (1, 2, 3)
    assert flow.conv_transpose2d(x, flow.randn(2, 3, 3, 3)).shape == (1, 3, 8, 8)
    assert flow.nn.functional.adaptive_avg_pool3d(flow.randn(1, 1, 4, 4, 4), 2).shape == (
        1,
        1,
        2,
        2,
        2,
    )


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_conv_double_backward(dtype):
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((2, 3, 6, 6))
    ws = rng.standard_normal((4, 3, 3, 3))

    def run(lib, dt):
        x = lib.tensor(xs, dtype=dt, requires_grad=True)
        w = lib.tensor(ws, dtype=dt, requires_grad=True)
        y = lib.nn.functional.conv2d(x, w, stride=2, padding=1)
        (gx,) = lib.autograd.grad((y * y).sum(), x, create_graph=True)
        (gx * gx).sum().backward()
        return x.grad.detach().numpy(), w.grad.detach().numpy()

    for a, e in zip(run(flow, _FLOW[dtype]), run(torch, _TORCH[dtype])):
        assert_close(a, e, dtype, "second-order gradient")


@pytest.mark.parametrize(
    "dims,groups,stride,padding,dilation",
    [(1, 1, 2, 1, 1), (2, 2, 1, 2, 2), (2, 1, 2, 0, 1), (3, 3, 1, 1, 1)],
)
def test_conv_second_order_through_both_gradients(dims, groups, stride, padding, dilation):
    # Both first-order gradients (input and weight) take part in the second backward.
    rng = np.random.default_rng(dims * 10 + groups)
    xs = rng.standard_normal((2, 6) + (7,) * dims)
    ws = rng.standard_normal((3 * groups, 6 // groups) + (3,) * dims)
    bs = rng.standard_normal(3 * groups)

    def run(lib):
        x, w, b = (lib.tensor(a, requires_grad=True) for a in (xs, ws, bs))
        conv = getattr(lib.nn.functional, f"conv{dims}d")
        y = conv(x, w, b, stride=stride, padding=padding, dilation=dilation, groups=groups)
        gx, gw = lib.autograd.grad((y * y).sum(), [x, w], create_graph=True)
        (gx.sin().sum() + (gw * gw).sum()).backward()
        return [t.grad.detach().numpy() for t in (x, w, b)]

    for got, want in zip(run(flow), run(torch)):
        np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-8)


# ---- pooling ----


def _pool_case(rng, nsp, dilation=True):
    k = _ints(rng, 1, 3, nsp)
    stride = _ints(rng, 1, 3, nsp)
    dil = _ints(rng, 1, 2, nsp) if dilation else (1,) * nsp
    pad = tuple(int(rng.integers(0, kk // 2 + 1)) for kk in k)
    size = tuple(d * (kk - 1) + 1 + int(rng.integers(0, 6)) for d, kk in zip(dil, k))
    shape = (int(rng.integers(1, 3)), int(rng.integers(1, 4))) + size
    return shape, k, stride, pad, dil, bool(rng.random() < 0.5)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("nsp", [1, 2, 3])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_max_pool(nsp, dtype, seed):
    rng = np.random.default_rng(seed * 10 + nsp + 200)
    shape, k, s, p, d, ceil = _pool_case(rng, nsp)
    name = _fn("max_pool", nsp)
    kw = {"stride": s, "padding": p, "dilation": d, "ceil_mode": ceil}
    check(lambda lib, x: getattr(lib.nn.functional, name)(x, k, **kw), [shape], dtype=dtype)
    # indices equal torch's, with and without autograd (the inference path has no indices)
    xs = rng.standard_normal(shape)
    fx, tx = flow.tensor(xs, dtype=_FLOW[dtype]), torch.tensor(xs, dtype=_TORCH[dtype])
    fy, fi = getattr(flow.nn.functional, name)(fx, k, return_indices=True, **kw)
    ty, ti = getattr(torch.nn.functional, name)(tx, k, return_indices=True, **kw)
    assert np.array_equal(fi.numpy(), ti.numpy())
    assert_close(fy.numpy(), ty.numpy(), dtype, "values")
    assert_close(getattr(flow.nn.functional, name)(fx, k, **kw).numpy(), ty.numpy(), dtype, "inf")


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("nsp", [1, 2, 3])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_avg_pool(nsp, dtype, seed):
    rng = np.random.default_rng(seed * 10 + nsp + 300)
    shape, k, s, p, _, ceil = _pool_case(rng, nsp, dilation=False)
    kw = {"stride": s, "padding": p, "ceil_mode": ceil, "count_include_pad": rng.random() < 0.5}
    if nsp > 1 and rng.random() < 0.3:
        kw["divisor_override"] = int(rng.integers(1, 5))
    name = _fn("avg_pool", nsp)
    check(lambda lib, x: getattr(lib.nn.functional, name)(x, k, **kw), [shape], dtype=dtype)


def test_avg_pool_ceil_mode_include_pad_edge():
    # The last window reaches past the padded input: PyTorch divides by the clipped window.
    for dtype in FLOAT_DTYPES:
        check(
            lambda lib, x: lib.nn.functional.avg_pool2d(x, 3, 2, 1, ceil_mode=True),
            [(2, 3, 6, 6)],
            dtype=dtype,
        )
        check(
            lambda lib, x: lib.nn.functional.avg_pool2d(x, 2, 2, 0, ceil_mode=True),
            [(1, 2, 5, 7)],
            dtype=dtype,
        )


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("nsp", [1, 2, 3])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_adaptive_pools(nsp, dtype, seed):
    rng = np.random.default_rng(seed * 10 + nsp + 400)
    size = _ints(rng, 1, 9, nsp)
    shape = (int(rng.integers(1, 3)), int(rng.integers(1, 4))) + size
    out = [int(rng.integers(1, 7)) for _ in range(nsp)]
    if nsp > 1 and rng.random() < 0.3:
        out[0] = None
    out = tuple(out) if nsp > 1 else out[0]
    avg, mx = _fn("adaptive_avg_pool", nsp), _fn("adaptive_max_pool", nsp)
    check(lambda lib, x: getattr(lib.nn.functional, avg)(x, out), [shape], dtype=dtype)
    check(lambda lib, x: getattr(lib.nn.functional, mx)(x, out), [shape], dtype=dtype)
    xs = rng.standard_normal(shape)
    _, fi = getattr(flow.nn.functional, mx)(flow.tensor(xs), out, return_indices=True)
    _, ti = getattr(torch.nn.functional, mx)(torch.tensor(xs), out, return_indices=True)
    assert np.array_equal(fi.numpy(), ti.numpy())


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_pool_non_contiguous_and_unbatched(dtype):
    def t(lib, tensor, i):
        return tensor.transpose(2, 3)

    check(
        lambda lib, x: lib.nn.functional.max_pool2d(x, 3, 2, 1),
        [(2, 3, 9, 8)],
        dtype=dtype,
        transform=t,
    )
    check(
        lambda lib, x: lib.nn.functional.avg_pool2d(x, 2), [(2, 3, 9, 8)], dtype=dtype, transform=t
    )
    check(lambda lib, x: lib.nn.functional.max_pool1d(x, 2), [(3, 9)], dtype=dtype)
    check(lambda lib, x: lib.nn.functional.adaptive_avg_pool2d(x, 3), [(3, 7, 5)], dtype=dtype)


def test_max_pool_ties_and_negative_infinity():
    x = np.zeros((1, 1, 4, 4), dtype=np.float32)
    x[0, 0, 1:, 1:] = -np.inf
    for xs in (x, np.ones_like(x)):
        fy, fi = flow.nn.functional.max_pool2d(flow.tensor(xs), 2, 1, 1, return_indices=True)
        ty, ti = torch.nn.functional.max_pool2d(torch.tensor(xs), 2, 1, 1, return_indices=True)
        assert np.array_equal(fi.numpy(), ti.numpy())
        assert np.array_equal(fy.numpy(), ty.numpy())


def test_empty_batch():
    for lib in (flow, torch):
        x = lib.zeros(0, 3, 6, 6, requires_grad=True)
        w = lib.ones(4, 3, 3, 3, requires_grad=True)
        y = lib.nn.functional.conv2d(x, w, padding=1)
        assert tuple(y.shape) == (0, 4, 6, 6)
        y.sum().backward()
        assert tuple(x.grad.shape) == (0, 3, 6, 6)
        assert float(w.grad.abs().sum()) == 0.0
        assert tuple(lib.nn.functional.max_pool2d(x, 2).shape) == (0, 3, 3, 3)
        assert tuple(lib.nn.functional.avg_pool2d(x, 2).shape) == (0, 3, 3, 3)
        z = lib.nn.functional.conv_transpose2d(x, lib.ones(3, 2, 3, 3), stride=2)
        assert tuple(z.shape) == (0, 2, 13, 13)


def _bad_calls():
    x = ((1, 2, 5, 5),)
    return [
        ("conv2d", x + ((3, 2, 3, 3),), {"stride": 2, "padding": "same"}),
        ("conv2d", x + ((3, 2, 3, 3),), {"padding": "foo"}),
        ("conv2d", x + ((3, 3, 3, 3),), {}),
        ("conv2d", ((5, 5), (3, 2, 3, 3)), {}),
        ("conv2d", x + ((3, 2, 3, 3),), {"stride": 0}),
        ("conv2d", x + ((3, 2, 7, 7),), {}),
        ("conv2d", x + ((3, 2, 3, 3),), {"groups": 2}),
        ("conv2d", x + ((3, 2, 3, 3),), {"dilation": 0}),
        ("conv2d", x + ((3, 2, 3, 3),), {"padding": -1}),
        ("conv2d", x + ((3, 2, 3, 3),), {"groups": 0}),
        ("conv2d", x + ((3, 2, 3, 3), (2,)), {}),
        ("conv1d", ((1, 2, 5), (3, 2, 3)), {"stride": (1, 1)}),
        ("conv_transpose2d", x + ((2, 3, 3, 3),), {"stride": 2, "output_padding": 2}),
        ("conv_transpose2d", x + ((3, 3, 3, 3),), {}),
        ("max_pool2d", x, {"kernel_size": 3, "padding": 2}),
        ("max_pool2d", x, {"kernel_size": 7}),
        ("max_pool2d", x, {"kernel_size": 3, "stride": 0}),
        ("max_pool1d", ((1, 2, 9),), {"kernel_size": 3, "padding": 2, "dilation": 2}),
        ("max_pool2d", ((5,),), {"kernel_size": 1}),
        ("avg_pool2d", x, {"kernel_size": 3, "padding": 2}),
        ("avg_pool2d", x, {"kernel_size": 2, "divisor_override": 0}),
        ("avg_pool3d", x, {"kernel_size": 2, "stride": (1, 1)}),
        ("adaptive_avg_pool2d", ((5,),), {"output_size": 2}),
        ("adaptive_max_pool2d", x, {"output_size": -2}),
    ]


@pytest.mark.parametrize("case", range(len(_bad_calls())))
def test_errors_match_torch(case):
    name, shapes, kw = _bad_calls()[case]

    def run(lib):
        args = [lib.ones(*s) for s in shapes]
        getattr(lib.nn.functional, name)(*args, **kw)

    with pytest.raises(Exception) as te:
        run(torch)
    with pytest.raises(Exception) as fe:
        run(flow)
    assert type(fe.value) is type(te.value), (fe.value, te.value)
    msg = str(fe.value)
    assert msg.startswith(name), msg


def test_error_messages_name_shapes():
    with pytest.raises(
        RuntimeError, match=r"conv2d: Given groups=1, weight of size \(3, 3, 3, 3\)"
    ):
        flow.conv2d(flow.ones(1, 2, 5, 5), flow.ones(3, 3, 3, 3))
    with pytest.raises(RuntimeError, match=r"conv2d: Expected 3D \(unbatched\) or 4D"):
        flow.conv2d(flow.ones(5, 5), flow.ones(3, 2, 3, 3))
    with pytest.raises(RuntimeError, match="max_pool2d: Given input size"):
        flow.max_pool2d(flow.ones(1, 2, 5, 5), 7)
    with pytest.raises(NotImplementedError, match="conv2d: expected input of dtype .* got bool"):
        flow.conv2d(flow.ones(1, 2, 5, 5, dtype=flow.bool), flow.ones(3, 2, 3, 3, dtype=flow.bool))
    # the process is fine afterwards
    assert flow.conv2d(flow.ones(1, 2, 5, 5), flow.ones(3, 2, 3, 3)).shape == (1, 3, 3, 3)
