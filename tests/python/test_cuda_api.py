"""oneflow.cuda's device, random-generator and legacy-type API: PyTorch's behaviour without a
CUDA device (checked against the CPU build of PyTorch), the per-device generators (which need no
device: they are Philox counters), and, on a machine with a GPU, the device queries."""

import numpy as np
import pytest
import torch

import oneflow as flow
from oneflow._oneflow_internal import _C

CPU_ONLY = not flow._oneflow_internal.with_cuda and not torch.backends.cuda.is_built()
needs_gpu = pytest.mark.skipif(not flow.cuda.is_available(), reason="needs a CUDA device")


def _outcome(call, lib):
    try:
        result = call(lib)
    except Exception as e:  # noqa: BLE001 - the exception type is what is compared
        return type(e)
    return "none" if result is None else type(result).__name__ + repr(result)


@pytest.mark.skipif(not CPU_ONLY, reason="compares two builds without CUDA")
def test_cuda_calls_without_cuda_behave_like_torch():
    calls = {
        "manual_seed": lambda lib: lib.cuda.manual_seed(1),
        "manual_seed_all": lambda lib: lib.cuda.manual_seed_all(1),
        "seed": lambda lib: lib.cuda.seed(),
        "seed_all": lambda lib: lib.cuda.seed_all(),
        "initial_seed": lambda lib: lib.cuda.initial_seed(),
        "get_rng_state": lambda lib: lib.cuda.get_rng_state(),
        "get_rng_state_all": lambda lib: lib.cuda.get_rng_state_all(),
        "set_rng_state": lambda lib: lib.cuda.set_rng_state(lib.get_rng_state()),
        "set_rng_state_all": lambda lib: lib.cuda.set_rng_state_all([lib.get_rng_state()]),
        "set_device(cpu)": lambda lib: lib.cuda.set_device("cpu"),
        "set_device(-1)": lambda lib: lib.cuda.set_device(-1),
        "get_device_name": lambda lib: lib.cuda.get_device_name(),
        "get_device_capability": lambda lib: lib.cuda.get_device_capability(),
        "get_device_properties": lambda lib: lib.cuda.get_device_properties(0),
        "FloatTensor(2)": lambda lib: lib.cuda.FloatTensor(2),
        "LongTensor([1])": lambda lib: lib.cuda.LongTensor([1]),
        "isinstance cpu tensor": lambda lib: isinstance(lib.ones(2), lib.cuda.FloatTensor),
        "is_initialized": lambda lib: lib.cuda.is_initialized(),
        "is_available": lambda lib: lib.cuda.is_available(),
        "device_count": lambda lib: lib.cuda.device_count(),
    }
    for name, call in calls.items():
        assert _outcome(call, flow) == _outcome(call, torch), name
    # PyTorch's CPU build fails here with an AttributeError from a missing binding; oneflow
    # raises the same AssertionError as for the other calls that need a device.
    with pytest.raises(AssertionError, match="without CUDA"):
        flow.cuda.set_device(0)


def test_legacy_cuda_types_and_type_strings():
    x = flow.ones(2, 3)
    for name in ("FloatTensor", "DoubleTensor", "HalfTensor", "BoolTensor", "ByteTensor"):
        assert not isinstance(x, getattr(flow.cuda, name))
        assert getattr(flow.cuda, name).__module__ == "oneflow.cuda"
    assert isinstance(x, flow.FloatTensor)
    assert x.type("oneflow.DoubleTensor").dtype == flow.float64
    assert x.type("torch.IntTensor").dtype == flow.int32
    assert x.type(flow.LongTensor).dtype == flow.int64
    with pytest.raises(ValueError, match="invalid type"):
        x.type("oneflow.NoSuchTensor")
    if not flow.cuda.is_available():
        with pytest.raises(RuntimeError):
            x.type(flow.cuda.FloatTensor)
        with pytest.raises(RuntimeError):
            x.type("oneflow.cuda.FloatTensor")


def test_each_cuda_device_has_its_own_generator():
    gen0 = _C.default_generator_of("cuda:0")
    assert gen0 is not flow.default_generator
    assert _C.default_generator_of(flow.device("cuda:0")) is gen0
    assert _C.default_generator_of("cpu") is flow.default_generator
    flow.manual_seed(7)  # seeds the CPU's and every CUDA device's, also those made later
    assert gen0.initial_seed() == 7
    assert _C.default_generator_of("cuda:5").initial_seed() == 7
    # An absurd index costs one generator, not a table up to it.
    assert _C.default_generator_of("cuda:2000000000").initial_seed() == 7
    # Drawing from or reseeding a CUDA generator leaves the CPU's stream where it was.
    flow.manual_seed(1)
    a = flow.rand(6).numpy()
    flow.manual_seed(1)
    gen0.manual_seed(99)
    gen0.set_state(gen0.get_state())
    b = flow.rand(6).numpy()
    np.testing.assert_array_equal(a, b)
    # State round trip on a CUDA generator.
    gen0.manual_seed(3)
    state = gen0.get_state()
    gen0.manual_seed(4)
    gen0.set_state(state)
    assert gen0.initial_seed() == 3
    with pytest.raises(ValueError):
        _C.default_generator_of("tpu")


def test_cuda_without_an_index_names_the_current_device():
    internal = flow._oneflow_internal
    assert flow.cuda.current_device() == 0
    assert flow.device("cuda") == flow.device("cuda:0")
    internal.cuda_set_device(2)  # the bare setter: oneflow.cuda.set_device also checks the index
    try:
        assert flow.cuda.current_device() == 2
        assert flow.device("cuda").index == 2
        assert flow.device("cuda:1").index == 1
    finally:
        internal.cuda_set_device(0)
    assert flow.device("cuda").index == 0


@needs_gpu
def test_cuda_device_queries():
    props = flow.cuda.get_device_properties(0)
    assert isinstance(props.name, str) and props.name
    assert props.total_memory > 0 and props.multi_processor_count > 0
    assert flow.cuda.get_device_name() == props.name
    assert flow.cuda.get_device_name("cuda:0") == props.name
    assert flow.cuda.get_device_capability(flow.device("cuda:0")) == (props.major, props.minor)
    assert props.major >= 3
    assert props.name in repr(props)
    flow.cuda.set_device(0)
    assert flow.cuda.current_device() == 0
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        flow.cuda.set_device(flow.cuda.device_count())
    with pytest.raises(AssertionError):
        flow.cuda.get_device_properties(flow.cuda.device_count())


@needs_gpu
def test_cuda_random_ops_use_the_device_generator():
    flow.cuda.manual_seed(3)
    a = flow.rand(1000, device="cuda").numpy()
    flow.cuda.manual_seed(3)
    b = flow.rand(1000, device="cuda").numpy()
    np.testing.assert_array_equal(a, b)
    assert flow.cuda.initial_seed() == 3
    state = flow.cuda.get_rng_state()
    c = flow.randn(100, device="cuda").numpy()
    flow.cuda.set_rng_state(state)
    np.testing.assert_array_equal(flow.randn(100, device="cuda").numpy(), c)
    assert len(flow.cuda.get_rng_state_all()) == flow.cuda.device_count()
    flow.cuda.set_rng_state_all(flow.cuda.get_rng_state_all())
    flow.cuda.seed()
    flow.cuda.seed_all()
    flow.cuda.manual_seed_all(5)
    assert flow.cuda.initial_seed() == 5
    # A CUDA random op does not move the CPU generator.
    flow.manual_seed(0)
    x = flow.rand(8).numpy()
    flow.manual_seed(0)
    flow.rand(8, device="cuda")
    flow.nn.functional.dropout(flow.ones(64, device="cuda"), 0.5)
    np.testing.assert_array_equal(flow.rand(8).numpy(), x)


@needs_gpu
def test_legacy_cuda_types_on_a_device():
    x = flow.cuda.FloatTensor(2, 3)
    assert x.is_cuda and x.dtype == flow.float32 and tuple(x.shape) == (2, 3)
    assert isinstance(x, flow.cuda.FloatTensor) and not isinstance(x, flow.FloatTensor)
    y = flow.cuda.LongTensor([1, 2])
    assert y.is_cuda and y.dtype == flow.int64
    z = flow.ones(2).type(flow.cuda.DoubleTensor)
    assert z.is_cuda and z.dtype == flow.float64
    assert z.type() == "oneflow.cuda.DoubleTensor"
    assert flow.ones(2).type("oneflow.cuda.HalfTensor").is_cuda


def test_pin_memory_and_offload_on_the_cpu():
    import warnings

    x = flow.arange(6.0).reshape(2, 3)
    assert not x.is_pinned() and not x.is_offloaded()
    if not flow.cuda.is_available():
        # PyTorch's error without an accelerator
        with pytest.raises(RuntimeError, match="cannot access accelerator device"):
            x.pin_memory()
        with pytest.raises(RuntimeError, match="Cannot access accelerator device"):
            torch.arange(3.0).pin_memory()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        x.offload()
        x.load()
    assert [str(m.message).split(";")[0] for m in w] == [
        "offload: the tensor is already in host (CPU) memory",
        "load: the tensor is not offloaded",
    ]
    np.testing.assert_array_equal(x.numpy(), np.arange(6.0).reshape(2, 3))


@needs_gpu
def test_pin_memory_and_offload_on_a_gpu():
    x = flow.arange(12.0).reshape(3, 4).t()
    p = x.pin_memory()
    assert p.is_pinned() and not x.is_pinned() and p.device.type == "cpu"
    np.testing.assert_array_equal(p.numpy(), x.numpy())
    assert p.pin_memory() is p
    d = p.to("cuda", non_blocking=True)
    np.testing.assert_array_equal(d.cpu().numpy(), x.numpy())
    with pytest.raises(RuntimeError, match="only dense CPU tensors can be pinned"):
        d.pin_memory()
    w = flow.nn.Linear(4, 4).to("cuda").weight
    before, ident = w.detach().cpu().numpy(), id(w)
    w.offload()
    assert w.is_offloaded() and id(w) == ident and w.device.type == "cpu"
    w.load()
    assert not w.is_offloaded() and w.is_cuda
    np.testing.assert_array_equal(w.detach().cpu().numpy(), before)


@needs_gpu
def test_dataloader_pins_batches():
    from oneflow.utils.data import DataLoader, TensorDataset

    ds = TensorDataset(flow.arange(8.0).reshape(4, 2), flow.arange(4))
    for workers in (0, 2):
        for x, y in DataLoader(ds, batch_size=2, pin_memory=True, num_workers=workers):
            assert x.is_pinned() and y.is_pinned()


def test_memory_queries_without_a_gpu_and_allocator_peaks():
    if flow.cuda.is_available():
        pytest.skip("a GPU is present")
    # as PyTorch without CUDA: zeros and an empty dict
    assert flow.cuda.memory_allocated() == 0 and flow.cuda.max_memory_allocated() == 0
    assert flow.cuda.memory_reserved() == 0 and flow.cuda.max_memory_reserved() == 0
    assert dict(flow.cuda.memory_stats()) == {}
    flow.cuda.reset_peak_memory_stats()
    # the caching allocator's peaks, seen through the CPU's
    internal = flow._oneflow_internal
    internal._reset_peak_memory_stats("cpu")
    base = internal._memory_stats("cpu")["allocated_bytes.all.current"]
    x = flow.empty(1 << 20)
    (x + 1).sum().item()
    stats = internal._memory_stats("cpu")
    assert stats["allocated_bytes.all.peak"] >= base + (4 << 20)
    assert stats["reserved_bytes.all.peak"] >= stats["allocated_bytes.all.peak"]
    del x
    internal._reset_peak_memory_stats("cpu")
    after = internal._memory_stats("cpu")
    assert after["allocated_bytes.all.peak"] == after["allocated_bytes.all.current"]


def test_manual_seed_returns_the_generator_and_load_state_dict_prints_like_torch():
    assert flow.manual_seed(3) is flow.default_generator
    assert flow.random.manual_seed(3) is flow.default_generator
    m = flow.nn.Linear(2, 2)
    r = m.load_state_dict(m.state_dict())
    assert repr(r) == "<All keys matched successfully>" and r.missing_keys == []
    r = m.load_state_dict({"weight": m.weight.detach()}, strict=False)
    assert r.missing_keys == ["bias"] and "missing_keys" in repr(r)
