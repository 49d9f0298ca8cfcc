"""flow.Tensor basics: creation, metadata, NumPy interop, printing, devices, seeding."""

import os

import numpy as np
import pytest
import torch

import oneflow as flow


def test_creation_and_metadata(device):
    x = flow.zeros(2, 3, device=device)
    assert x.shape == flow.Size([2, 3]) and x.shape == (2, 3)
    assert repr(x.shape) == "oneflow.Size([2, 3])"
    assert x.dtype is flow.float32
    assert x.stride() == (3, 1) and x.stride(0) == 3
    assert x.ndim == 2 and x.dim() == 2 and x.numel() == 6 and len(x) == 2
    assert x.size() == (2, 3) and x.size(-1) == 3
    assert x.is_contiguous()
    assert x.device == flow.device(device)
    assert flow.ones((4,), dtype=flow.int64, device=device).dtype is flow.int64
    np.testing.assert_array_equal(flow.ones(2, 2, device=device).numpy(), np.ones((2, 2)))
    np.testing.assert_array_equal(flow.full((2,), 7, device=device).numpy(), [7, 7])
    assert flow.full((2,), 7).dtype is flow.int64
    assert flow.full((2,), 7.0).dtype is flow.float32


def test_size_behaves_like_torch_size():
    # Tensor.shape is built in C (a tuple subclass); its slices, sums and copies stay Sizes.
    import copy
    import pickle

    f, t = flow.zeros(2, 3, 4).shape, torch.zeros(2, 3, 4).shape
    assert isinstance(f, flow.Size) and isinstance(f, tuple)
    assert f == t == (2, 3, 4) and hash(f) == hash((2, 3, 4))
    for key in (0, -1, 2):
        assert f[key] == t[key] and type(f[key]) is int
    for key in (slice(1, None), slice(None, None, -1), slice(5, 9)):
        assert isinstance(f[key], flow.Size) and tuple(f[key]) == tuple(t[key])
    with pytest.raises(IndexError):
        f[3]
    assert isinstance(f + (5,), flow.Size) and f + (5,) == (2, 3, 4, 5)
    assert f.numel() == t.numel() == 24
    assert repr(f[1:]) == "oneflow.Size([3, 4])"
    for other in (pickle.loads(pickle.dumps(f)), copy.deepcopy(f), flow.Size(f)):
        assert isinstance(other, flow.Size) and other == f
    assert flow.Size([flow.tensor(3), np.int64(2)]) == (3, 2)
    assert flow.zeros(()).shape == () and isinstance(flow.zeros(()).shape, flow.Size)
    assert flow.zeros(2, 3).size() == flow.zeros(2, 3).shape


def test_tensor_dtype_inference():
    assert flow.tensor([1, 2]).dtype is flow.int64
    assert flow.tensor([1, 2.5]).dtype is flow.float32
    assert flow.tensor([True, False]).dtype is flow.bool
    assert flow.tensor(np.array([1.0], dtype=np.float64)).dtype is flow.float64
    assert flow.tensor(3).shape == ()
    assert flow.tensor([[1, 2], [3, 4]], dtype=flow.float32).dtype is flow.float32
    with pytest.raises(TypeError):
        flow.tensor(["a", "b"])
    # NumPy scalars keep their dtype (np.float64 is also a Python float), as in PyTorch
    for v in (np.float64(1.5), np.float32(1.5), np.float16(1.5), np.int32(3), np.uint8(3), 2.5, 7):
        got, want = flow.tensor(v), torch.tensor(v)
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1], type(v)
        assert got.shape == () and float(got) == float(want)


def test_dtype_aliases():
    assert flow.float is flow.float32 and flow.double is flow.float64
    assert flow.half is flow.float16 and flow.long is flow.int64 and flow.int is flow.int32
    assert repr(flow.float32) == "oneflow.float32"
    assert flow.float32.is_floating_point and not flow.int64.is_floating_point
    assert flow.get_default_dtype() is flow.float32


def test_from_numpy_shares_memory():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = flow.from_numpy(a)
    a[0, 0] = 100
    assert t.numpy()[0, 0] == 100
    n = t.numpy()
    n[1, 2] = -1
    assert a[1, 2] == -1
    # a non-contiguous array keeps its strides
    tt = flow.from_numpy(a.T)
    assert tt.stride() == (1, 3)
    np.testing.assert_array_equal(tt.numpy(), a.T)
    with pytest.raises(TypeError):
        flow.from_numpy([1, 2])
    with pytest.raises(TypeError):
        flow.from_numpy(np.array(["x"]))


def test_numpy_view_outlives_tensor():
    n = flow.ones(1000).numpy()
    import gc

    gc.collect()
    assert n.sum() == 1000


def test_casts_round_like_pytorch():
    x = flow.tensor([-1.7, -0.5, 0.5, 2.9])
    np.testing.assert_array_equal(x.long().numpy(), [-1, 0, 0, 2])
    assert x.to(flow.int32).dtype is flow.int32
    assert x.half().numpy().dtype == np.float16
    np.testing.assert_array_equal(x.bool().numpy(), [True, True, True, True])
    assert x.double().dtype is flow.float64


def test_item_tolist_and_conversions():
    assert flow.tensor(3.5).item() == 3.5
    assert flow.tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
    assert float(flow.tensor([2.0])) == 2.0 and int(flow.tensor(7)) == 7
    assert bool(flow.tensor(True))
    with pytest.raises(RuntimeError):
        bool(flow.ones(2))
    with pytest.raises(RuntimeError):
        flow.ones(2).item()
    assert [r.tolist() for r in flow.tensor([[1, 2], [3, 4]])] == [[1, 2], [3, 4]]
    np.testing.assert_array_equal(np.asarray(flow.ones(2)), [1.0, 1.0])


def test_print_format():
    assert repr(flow.tensor([1, 2, 3])) == "tensor([1, 2, 3], dtype=oneflow.int64)"
    assert repr(flow.ones(2, 2)) == ("tensor([[1., 1.],\n        [1., 1.]], dtype=oneflow.float32)")
    assert repr(flow.tensor(3.5)) == "tensor(3.5000, dtype=oneflow.float32)"
    assert repr(flow.tensor([0.5, -1.25])) == "tensor([ 0.5000, -1.2500], dtype=oneflow.float32)"
    assert repr(flow.zeros(0, 3)) == "tensor([], size=(0, 3), dtype=oneflow.float32)"
    assert repr(flow.tensor([True, False])) == "tensor([ True, False], dtype=oneflow.bool)"
    assert repr(flow.tensor([1e-6, 1.0])) == (
        "tensor([1.0000e-06, 1.0000e+00], dtype=oneflow.float32)"
    )
    x = flow.ones(2, requires_grad=True)
    assert repr(x).endswith("dtype=oneflow.float32, requires_grad=True)")
    assert repr(x * 2).endswith("grad_fn=<mulBackward>)")
    big = repr(flow.zeros(100, 100))
    assert "..." in big and big.count("\n") == 6


def test_print_matches_torch_layout():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    for shape in [(5,), (3, 4), (2, 2, 3), (2000,), (40, 40)]:
        a = rng.standard_normal(shape).astype(np.float32)
        f = repr(flow.tensor(a)).replace(", dtype=oneflow.float32", "")
        t = repr(torch.tensor(a))
        assert f == t, f"\n{f}\n!=\n{t}"


def test_set_printoptions():
    try:
        flow.set_printoptions(precision=2)
        assert repr(flow.tensor([0.123456])) == "tensor([0.12], dtype=oneflow.float32)"
    finally:
        flow.set_printoptions(profile="default")


def test_manual_seed_reproducible():
    flow.manual_seed(42)
    a = flow.randn(100).numpy()
    flow.manual_seed(42)
    b = flow.randn(100).numpy()
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(flow.randn(100).numpy(), b)
    x = flow.randn(200000).numpy()
    assert abs(x.mean()) < 0.01 and abs(x.std() - 1) < 0.01


def test_device_objects():
    d = flow.device("cuda:1")
    assert d.type == "cuda" and d.index == 1 and repr(d) == "device(type='cuda', index=1)"
    assert flow.device("cpu") == "cpu"
    with pytest.raises(ValueError):
        flow.device("tpu")


def test_cuda_to_and_back(device):
    x = flow.randn(3, 4)
    y = x.to(device)
    assert y.device == flow.device(device)
    np.testing.assert_array_equal(y.cpu().numpy(), x.numpy())
    if device == "cuda":
        assert y.is_cuda and x.cuda().is_cuda
        z = (y * 2 + y).relu().sum(1)
        np.testing.assert_allclose(z.cpu().numpy(), np.maximum(3 * x.numpy(), 0).sum(1), rtol=1e-5)


def test_cuda_without_cuda_is_a_clear_error():
    if flow.cuda.is_available():
        pytest.skip("CUDA is available")
    with pytest.raises(RuntimeError, match="CUDA"):
        flow.ones(2).cuda()
    with pytest.raises(RuntimeError, match="CUDA"):
        flow.ones(2, device="cuda")


def test_generators_and_rng_state(device):
    g = flow.Generator().manual_seed(5)
    a = flow.randn(8, generator=g, device=device).cpu().numpy()
    g.manual_seed(5)
    b = flow.randn(8, generator=g, device=device).cpu().numpy()
    np.testing.assert_array_equal(a, b)
    assert g.initial_seed() == 5
    # A random op draws from its device's default generator: the CPU's, or the CUDA device's.
    rng = flow.cuda if device == "cuda" else flow
    state = rng.get_rng_state()
    assert state.dtype is flow.uint8 and state.shape == (16,)
    x = flow.rand(5, device=device).cpu().numpy()
    rng.set_rng_state(state)
    y = flow.rand(5, device=device).cpu().numpy()
    np.testing.assert_array_equal(x, y)
    with pytest.raises(ValueError):
        flow.set_rng_state(flow.zeros(3, dtype=flow.uint8))


def test_finfo_iinfo_match_torch():
    torch = pytest.importorskip("torch")
    for name in ["float16", "bfloat16", "float32", "float64"]:
        f, t = flow.finfo(getattr(flow, name)), torch.finfo(getattr(torch, name))
        for attr in ["bits", "eps", "max", "min", "tiny", "resolution"]:
            assert getattr(f, attr) == pytest.approx(getattr(t, attr)), (name, attr)
    for name in ["uint8", "int8", "int16", "int32", "int64"]:
        f, t = flow.iinfo(getattr(flow, name)), torch.iinfo(getattr(torch, name))
        assert (f.bits, f.min, f.max) == (t.bits, t.min, t.max)


def test_like_and_new_creation(device):
    x = flow.ones(2, 3, dtype=flow.float64, device=device)
    for y in [
        flow.full_like(x, 7),
        flow.empty_like(x),
        flow.rand_like(x),
        flow.randn_like(x),
        x.new_zeros(2, 3),
        x.new_ones((2, 3)),
        x.new_full((2, 3), 1.5),
        x.new_empty(2, 3),
    ]:
        assert y.shape == (2, 3) and y.dtype is flow.float64 and y.device == x.device
    assert x.new_tensor([1, 2]).dtype is flow.float64
    np.testing.assert_array_equal(flow.full_like(x, 7).cpu().numpy(), np.full((2, 3), 7.0))


def test_normal_and_inplace_random(device):
    flow.manual_seed(1)
    n = flow.normal(2.0, 0.5, (20000,), device=device).cpu().numpy()
    assert abs(n.mean() - 2.0) < 0.02 and abs(n.std() - 0.5) < 0.02
    u = flow.empty(20000, device=device).uniform_(3, 4).cpu().numpy()
    assert u.min() >= 3 and u.max() < 4
    z = flow.zeros(20000, device=device).normal_(1.0, 2.0).cpu().numpy()
    assert abs(z.mean() - 1.0) < 0.05
    assert flow.ones(2, 3).mT.shape == (3, 2)
    assert flow.arange(6).unflatten(0, (2, 3)).tolist() == [[0, 1, 2], [3, 4, 5]]


def test_random_numbers_do_not_depend_on_thread_count():
    import subprocess
    import sys

    code = (
        "import hashlib, oneflow as flow; flow.manual_seed(7); "
        "print(hashlib.sha1(flow.randn(100000).numpy().tobytes()).hexdigest(), "
        "hashlib.sha1(flow.rand(100000).numpy().tobytes()).hexdigest())"
    )
    outs = set()
    for threads in ("1", "2"):
        env = dict(os.environ, OMP_NUM_THREADS=threads)
        r = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
        )
        assert r.returncode == 0, r.stderr
        outs.add(r.stdout)
    assert len(outs) == 1, outs


def test_data_property_like_torch():
    for lib in (flow, torch):
        x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
        d = x.data
        assert not d.requires_grad and d.is_leaf
        d.add_(1)  # the same memory; autograd's version checks do not see it
        assert x.tolist() == [2.0, -1.0, 4.0]
        y = (x * x).sum()
        x.data.mul_(2)
        y.backward()  # the saved x is the modified memory, as in PyTorch
        assert x.grad.tolist() == [8.0, -4.0, 16.0]
        x.data = lib.zeros(2, 2, dtype=lib.float64)  # new shape and dtype, same autograd state
        assert tuple(x.shape) == (2, 2) and x.requires_grad and x.is_leaf
        assert str(x.dtype).endswith("float64")
        with pytest.raises(RuntimeError):
            x.data = lib.zeros(2, dtype=lib.int64)  # requires grad: floating data only
    # assignment waits for queued work on the old memory
    a = flow.randn(256, 256)
    before = a.numpy().astype(np.float64)
    b = (a @ a).sum()
    c = a * 2  # queued after b: reads the old layout too
    a.data = flow.ones(3)
    assert a.tolist() == [1.0, 1.0, 1.0] and b.numel() == 1
    np.testing.assert_allclose(b.item(), (before @ before).sum(), rtol=1e-3)
    np.testing.assert_allclose(c.numpy(), before * 2, rtol=1e-6)


def test_builtin_tensor_methods_forward_self_and_arguments_like_torch():
    """Tensor methods backed by _C functions are forwarding descriptors: bound and unbound
    calls, keyword arguments, operators, attribute access and errors behave as methods do."""
    a = np.array([[-1.5, 2.0], [0.25, -3.0]])
    x, t = flow.tensor(a), torch.tensor(a)
    for name in ("abs", "exp", "relu", "sigmoid"):
        np.testing.assert_allclose(getattr(x, name)().numpy(), getattr(t, name)().numpy())
        np.testing.assert_allclose(
            getattr(flow.Tensor, name)(x).numpy(), getattr(torch.Tensor, name)(t).numpy()
        )
    np.testing.assert_array_equal(x.transpose(0, 1).numpy(), t.transpose(0, 1).numpy())
    np.testing.assert_array_equal(x.transpose(dim0=1, dim1=0).numpy(), a.T)
    np.testing.assert_array_equal(x.narrow(1, 1, 1).numpy(), t.narrow(1, 1, 1).numpy())
    np.testing.assert_array_equal((x == x.abs()).numpy(), (t == t.abs()).numpy())
    np.testing.assert_array_equal((x < 0).numpy(), a < 0)
    np.testing.assert_array_equal(abs(x).numpy(), np.abs(a))
    np.testing.assert_array_equal((-x).numpy(), -a)
    bound = x.abs
    assert bound.__self__ is x and bound.__name__ == "abs"
    assert flow.Tensor.abs.__name__ == "abs" and flow.Tensor.abs.__qualname__ == "Tensor.abs"
    assert flow.Tensor.abs.__doc__
    np.testing.assert_array_equal(bound().numpy(), np.abs(a))
    np.testing.assert_array_equal(list(map(flow.Tensor.neg, [x]))[0].numpy(), -a)
    with pytest.raises(TypeError, match="abs"):
        x.abs(1, 2)
    with pytest.raises(TypeError):
        flow.Tensor.abs()
    # the gradient flows through a method call as through the function
    w = flow.tensor(a, requires_grad=True)
    w.tanh().sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), 1 - np.tanh(a) ** 2)


def test_numpy_copies_formatting_and_comparisons_like_torch():
    import copy as copy_module
    import pickle

    for lib in (flow, torch):
        t = lib.zeros(3)
        a, b = np.array(t), np.copy(t)  # copies: writing them leaves the tensor alone
        a[0], b[1] = 7, 8
        assert t.tolist() == [0.0, 0.0, 0.0]
        np.asarray(t)[2] = 5  # a view
        assert t[2].item() == 5
        assert f"{lib.tensor(3.14159):.2f}" == "3.14" and f"{lib.tensor(2)}" == "2"
        with pytest.raises(TypeError):
            f"{lib.tensor([1.0, 2.0]):.2f}"
        x = lib.tensor([1, 2])
        assert (x == None) is False and (x != None) is True  # noqa: E711
        assert (x == "a") is False and (x == [1, 2]) is False
        assert x in [None, x] and [None, x].index(x) == 1
        y = np.float64(2.0) * lib.tensor([1.0], requires_grad=True)
        assert isinstance(y, lib.Tensor) and y.requires_grad
        for v in (lib.float16, lib.float32, lib.int64, lib.device("cpu")):
            assert pickle.loads(pickle.dumps(v)) == v and copy_module.deepcopy(v) == v
    with pytest.warns(UserWarning):
        assert flow.zeros(3, 4, 5).T.shape == (5, 4, 3)


def _overflowing_creations(lib):
    return [
        lambda: lib.tensor([300], dtype=lib.uint8),
        lambda: lib.tensor([1, 2**40], dtype=lib.int32),
        lambda: lib.tensor([float("nan")], dtype=lib.int32),
        lambda: lib.full((2,), 2**40, dtype=lib.int32),
    ]


def test_creation_checks_values_against_the_dtype_like_torch():
    for lib in (flow, torch):
        with pytest.raises(ValueError):
            lib.tensor(2**63)
        for f in _overflowing_creations(lib):
            with pytest.raises(RuntimeError):
                f()
        assert lib.tensor([-1], dtype=lib.uint8).tolist() == [255]
        assert lib.tensor([1.5], dtype=lib.int32).tolist() == [1]
        with pytest.raises(ValueError):
            lib.from_numpy(np.arange(3, dtype=">f4"))  # big-endian bytes
    with pytest.raises(ValueError):
        flow.tensor(np.arange(3, dtype=">i4"))


@pytest.mark.parametrize(
    "values",
    [
        [float("nan"), float("inf"), -float("inf"), 1.0],
        [-0.0, 0.0],
        [0.0, 10.5, -3.0],
        [100.0, 0.0],
        [[1e-5, 1.0], [float("nan"), 0.0]],
        [float("nan")],
    ],
)
def test_float_columns_are_as_wide_as_the_nonzero_finite_values_like_torch(values):
    ours = repr(flow.tensor(values)).replace(", dtype=oneflow.float32", "")
    assert ours == repr(torch.tensor(values))
