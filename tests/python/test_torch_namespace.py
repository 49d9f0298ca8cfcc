"""PyTorch top-level names: constants, *_copy ops, kl_div, typename, OutOfMemoryError,
oneflow.random, oneflow.accelerator, StackDataset."""

import math

import numpy as np
import pytest
import torch

import oneflow as flow


def test_constants():
    assert flow.pi == torch.pi == math.pi
    assert flow.e == torch.e
    assert flow.inf == torch.inf and math.isnan(flow.nan)
    assert flow.newaxis is None
    x = flow.arange(3.0)
    assert x[flow.newaxis].shape == (1, 3)


def test_out_of_memory_error_is_a_runtime_error():
    assert issubclass(flow.OutOfMemoryError, RuntimeError)
    assert flow.cuda.OutOfMemoryError is flow.OutOfMemoryError
    with pytest.raises(flow.OutOfMemoryError, match="out of memory"):
        flow.empty(2**42)
    flow.ones(3).sum().item()  # still usable


COPIES = [
    ("alias_copy", lambda m, x: m.alias_copy(x)),
    ("as_strided_copy", lambda m, x: m.as_strided_copy(x, (2, 2), (1, 3))),
    ("detach_copy", lambda m, x: m.detach_copy(x)),
    ("diagonal_copy", lambda m, x: m.diagonal_copy(x, 1)),
    ("expand_copy", lambda m, x: m.expand_copy(x[:1], (4, 4))),
    ("permute_copy", lambda m, x: m.permute_copy(x, (1, 0))),
    ("select_copy", lambda m, x: m.select_copy(x, 1, 2)),
    ("slice_copy", lambda m, x: m.slice_copy(x, 1, 1, 4, 2)),
    ("squeeze_copy", lambda m, x: m.squeeze_copy(x[:1], 0)),
    ("t_copy", lambda m, x: m.t_copy(x)),
    ("transpose_copy", lambda m, x: m.transpose_copy(x, 0, 1)),
    ("unfold_copy", lambda m, x: m.unfold_copy(x, 1, 2, 1)),
    ("unsqueeze_copy", lambda m, x: m.unsqueeze_copy(x, -1)),
    ("view_copy", lambda m, x: m.view_copy(x, (2, 8))),
    ("view_copy_dtype", lambda m, x: m.view_copy(x, m.int32)),
]


@pytest.mark.parametrize("name,fn", COPIES, ids=[c[0] for c in COPIES])
def test_copy_ops_match_torch(name, fn):
    a = np.arange(16, dtype=np.float32).reshape(4, 4)
    f, t = flow.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    rf, rt = fn(flow, f), fn(torch, t)
    assert rf.stride() == rt.stride() and rf.dtype.itemsize == rt.dtype.itemsize
    np.testing.assert_array_equal(rf.detach().numpy(), rt.detach().numpy())
    # a copy: writing it leaves the input alone
    rf.detach().zero_()
    np.testing.assert_array_equal(f.detach().numpy(), a)
    if rf.dtype.is_floating_point and name != "detach_copy":
        rf.sum().backward(), rt.sum().backward()
        np.testing.assert_array_equal(f.grad.numpy(), t.grad.numpy())


def test_split_and_unbind_copies():
    a = np.arange(10, dtype=np.float32).reshape(5, 2)
    f, t = flow.tensor(a), torch.tensor(a)
    for name, args in [("split_copy", (2,)), ("split_with_sizes_copy", ([1, 4],)),
                       ("unbind_copy", (1,))]:  # fmt: skip
        rf, rt = getattr(flow, name)(f, *args), getattr(torch, name)(t, *args)
        assert len(rf) == len(rt)
        for x, y in zip(rf, rt):
            assert x.is_contiguous() and x.stride() == y.stride()
            np.testing.assert_array_equal(x.numpy(), y.numpy())


def test_copy_op_out_argument():
    outs = [flow.empty(2), flow.empty(2), flow.empty(0)]
    assert flow.split_copy(flow.arange(5.0), 2, out=outs) is None
    np.testing.assert_array_equal(outs[1].numpy(), [2.0, 3.0])
    np.testing.assert_array_equal(outs[2].numpy(), [4.0])
    with pytest.raises(RuntimeError, match="size 3, got size 1"):
        flow.split_copy(flow.arange(5.0), 2, out=[flow.empty(2)])
    out = flow.empty(4, 4)
    r = flow.t_copy(flow.arange(16.0).reshape(4, 4), out=out)
    assert r is out
    np.testing.assert_array_equal(out.numpy(), np.arange(16.0).reshape(4, 4).T)


@pytest.mark.parametrize("reduction", [0, 1, 2])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div_matches_torch(reduction, log_target):
    rng = np.random.default_rng(reduction)
    x = np.log(rng.dirichlet(np.ones(5), size=3)).astype(np.float32)
    y = rng.dirichlet(np.ones(5), size=3).astype(np.float32)
    if log_target:
        y = np.log(y)
    got = flow.kl_div(flow.tensor(x), flow.tensor(y), reduction, log_target=log_target)
    want = torch.kl_div(torch.tensor(x), torch.tensor(y), reduction, log_target=log_target)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-7)
    assert flow.kl_div(flow.tensor(x), flow.tensor(y)).shape == (3, 5)  # default: none
    with pytest.raises(ValueError, match="reduction"):
        flow.kl_div(flow.tensor(x), flow.tensor(y), 3)


def test_typename_get_device_vmap():
    assert flow.typename(flow.ones(2)) == "oneflow.FloatTensor"
    assert flow.typename(flow.ones(2, dtype=flow.int64)) == "oneflow.LongTensor"
    assert flow.typename(3) == torch.typename(3) == "int"
    assert flow.typename(flow.nn.Linear).endswith(".Linear")
    assert flow.get_device(flow.ones(1)) == torch.get_device(torch.ones(1)) == -1
    out = flow.vmap(lambda v: (v * v).sum())(flow.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(out.numpy(), [5.0, 50.0])


def test_random_module_and_fork_rng():
    flow.random.manual_seed(3)
    assert flow.random.initial_seed() == 3
    a = flow.rand(4).numpy()
    flow.random.manual_seed(3)
    np.testing.assert_array_equal(flow.rand(4).numpy(), a)
    state = flow.random.get_rng_state()
    with flow.random.fork_rng():
        inside = flow.rand(4).numpy()
    np.testing.assert_array_equal(flow.rand(4).numpy(), inside)  # the state was restored
    flow.random.set_rng_state(state)
    np.testing.assert_array_equal(flow.rand(4).numpy(), inside)
    with flow.random.fork_rng(enabled=False):
        flow.rand(1)
    assert not np.array_equal(flow.rand(4).numpy(), inside)
    assert flow.random.default_generator is flow.default_generator


def test_accelerator_without_a_gpu():
    if flow.cuda.is_available():
        pytest.skip("a GPU is present")
    assert flow.accelerator.is_available() is False
    assert flow.accelerator.device_count() == 0
    assert flow.accelerator.current_accelerator(check_available=True) is None
    with pytest.raises(RuntimeError, match="no accelerator"):
        flow.accelerator.current_device_index()
    flow.accelerator.empty_cache()
    with flow.accelerator.device_index(None):
        pass


def test_stack_dataset_like_torch():
    from oneflow.utils.data import DataLoader, StackDataset, TensorDataset

    d = StackDataset(flow.arange(4), [10, 11, 12, 13])
    assert len(d) == 4 and d[2][1] == 12 and int(d[2][0]) == 2
    kd = StackDataset(a=TensorDataset(flow.arange(4)), b=list(range(4)))
    batch = next(iter(DataLoader(kd, batch_size=2)))
    assert set(batch) == {"a", "b"}
    np.testing.assert_array_equal(batch["b"].numpy(), [0, 1])
    with pytest.raises(ValueError, match="Size mismatch"):
        StackDataset([1, 2], [1])
    with pytest.raises(ValueError, match="both"):
        StackDataset([1], b=[2])


FACTORIES = [
    lambda: flow.zeros(2),
    lambda: flow.ones(2, 3),
    lambda: flow.full((2,), 1.5),
    lambda: flow.empty(3),
    lambda: flow.rand(2),
    lambda: flow.randn(2),
    lambda: flow.randint(0, 5, (3,)),
    lambda: flow.randperm(4),
    lambda: flow.arange(3),
    lambda: flow.linspace(0, 1, 4),
    lambda: flow.eye(2),
    lambda: flow.tensor([1.0, 2.0]),
    lambda: flow.as_tensor([1, 2]),
    lambda: flow.tril_indices(3, 3),
    lambda: flow.nn.Linear(2, 2),
]


def _no_cuda_error():
    return pytest.raises(RuntimeError, match="(?i)cuda")


@pytest.mark.skipif(flow.cuda.is_available(), reason="needs a machine without a GPU")
def test_default_device_reaches_every_factory():
    assert flow.get_default_device() == flow.device("cpu")
    flow.set_default_device("cuda")
    try:
        assert flow.get_default_device() == flow.device("cuda:0")
        for make in FACTORIES:  # each tries the default device: CUDA, absent here
            with _no_cuda_error():
                make()
        # an explicit device, and the *_like factories (the input's device), are unaffected
        assert flow.zeros(2, device="cpu").device == flow.device("cpu")
        assert flow.ones_like(flow.zeros(2, device="cpu")).device == flow.device("cpu")
        assert flow.from_numpy(np.ones(2)).device == flow.device("cpu")
    finally:
        flow.set_default_device(None)
    assert flow.zeros(2).device == flow.device("cpu")


@pytest.mark.skipif(flow.cuda.is_available(), reason="needs a machine without a GPU")
def test_device_as_a_context_manager_nests_and_is_per_thread():
    import threading

    with flow.device("cuda:1") as d:
        assert d == flow.device("cuda:1")
        assert flow.get_default_device() == flow.device("cuda:1")
        with _no_cuda_error():
            flow.zeros(1)
        seen = []
        t = threading.Thread(target=lambda: seen.append(flow.zeros(1).device))
        t.start()
        t.join()
        assert seen == [flow.device("cpu")]  # another thread keeps its own default
        with flow.device("cpu"):
            assert flow.zeros(1).device == flow.device("cpu")
        assert flow.get_default_device() == flow.device("cuda:1")
    assert flow.get_default_device() == flow.device("cpu")
    assert flow.zeros(1).device == flow.device("cpu")


def test_untyped_and_typed_storages_like_torch():
    res = {}
    for T in (torch, flow):
        t = T.arange(6.0).reshape(2, 3)
        v = t[1]
        s = v.untyped_storage()
        with pytest.warns(UserWarning, match="TypedStorage is deprecated"):
            ts = v.storage()
        res[T.__name__] = (
            s.nbytes(),
            s.size(),
            len(s),
            s.element_size(),
            s.data_ptr() == t.untyped_storage().data_ptr() == t.data_ptr(),
            ts.size(),
            ts.tolist(),
            ts[4],
            T.is_storage(s),
            T.arange(3.0).untyped_storage().data_ptr() != s.data_ptr(),
        )
    assert res["oneflow"] == res["torch"]
    assert isinstance(flow.ones(2).untyped_storage(), flow.UntypedStorage)
    assert flow.zeros(0).untyped_storage().nbytes() == 0


def _foreach_probe(T):
    rng = np.random.default_rng(0)
    ema = [
        T.tensor(rng.random(3).astype(np.float32)),
        T.tensor(rng.random((2, 2)).astype(np.float32)),
    ]
    params = [
        T.tensor(rng.random(3).astype(np.float32)),
        T.tensor(rng.random((2, 2)).astype(np.float32)),
    ]
    out = []
    T._foreach_mul_(ema, 0.9)
    T._foreach_add_(ema, params, alpha=0.1)
    out.append([e.tolist() for e in ema])
    T._foreach_lerp_(ema, params, 0.5)
    out.append([e.tolist() for e in ema])
    out.append([t.tolist() for t in T._foreach_sqrt(params)])
    out.append([t.tolist() for t in T._foreach_add(params, [1.0, 2.0])])
    out.append([t.tolist() for t in T._foreach_addcmul(params, ema, params, value=0.5)])
    out.append([round(float(t), 5) for t in T._foreach_norm(params)])
    out.append([t.tolist() for t in T._foreach_maximum(params, 0.5)])
    T._foreach_zero_(ema)
    out.append([e.tolist() for e in ema])
    T._foreach_copy_(ema, params)
    out.append([e.tolist() for e in ema])
    out.append(T._foreach_neg_(ema) is not None)
    return out


def test_foreach_functions_like_torch():
    got, want = _foreach_probe(flow), _foreach_probe(torch)
    np.testing.assert_allclose(np.array(got[5]), np.array(want[5]), rtol=1e-5)
    for g, w in zip(got[:5] + got[6:], want[:5] + want[6:]):
        if isinstance(g, bool):
            assert g == w
            continue
        for a, b in zip(g, w):
            np.testing.assert_allclose(np.array(a), np.array(b), rtol=1e-6, atol=1e-7)
    missing = [n for n in dir(torch) if n.startswith("_foreach_") and not hasattr(flow, n)]
    assert not missing, missing
