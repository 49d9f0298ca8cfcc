"""DLPack and PyTorch interop: zero-copy both ways, dtypes, strides, ownership."""

import gc

import numpy as np
import pytest

import oneflow as flow

torch = pytest.importorskip("torch")


@pytest.mark.parametrize(
    "dtype",
    ["float32", "float64", "float16", "int64", "int32", "int8", "uint8", "bool", "bfloat16"],
)
def test_round_trip_with_torch_is_zero_copy(dtype, device):
    t = torch.arange(12).reshape(3, 4).to(getattr(torch, dtype))
    if device == "cuda":
        t = t.cuda()
    f = flow.utils.tensor.from_torch(t)
    assert str(f.dtype) == "oneflow." + dtype and f.shape == (3, 4)
    assert f.data_ptr() == t.data_ptr()
    back = flow.utils.tensor.to_torch(f)
    assert back.data_ptr() == t.data_ptr()
    assert torch.equal(back.cpu(), t.cpu())


def test_writes_are_seen_on_both_sides():
    t = torch.zeros(2, 3)
    f = flow.from_dlpack(t)
    f[0, 1] = 5
    assert t[0, 1].item() == 5
    t[1, 2] = 7
    assert f.numpy()[1, 2] == 7
    g = torch.from_dlpack(flow.ones(4))
    g += 1
    np.testing.assert_array_equal(g.numpy(), [2, 2, 2, 2])


def test_strided_and_offset_views():
    t = torch.arange(20.0).reshape(4, 5)[1:, ::2]
    f = flow.from_dlpack(t)
    assert f.stride() == t.stride()
    np.testing.assert_array_equal(f.numpy(), t.numpy())
    v = flow.arange(20.0).reshape(4, 5).transpose(0, 1)[1:]
    w = torch.from_dlpack(v)
    assert w.stride() == v.stride()
    np.testing.assert_array_equal(w.numpy(), v.numpy())


def test_memory_stays_alive_until_both_sides_drop_it():
    f = flow.from_dlpack(torch.arange(1000.0))
    gc.collect()
    assert f.sum().item() == sum(range(1000))
    t = torch.from_dlpack(flow.arange(1000.0))
    gc.collect()
    assert t.sum().item() == sum(range(1000))


def test_capsules_are_consumed_once():
    cap = flow.to_dlpack(flow.ones(3))
    a = flow.from_dlpack(cap)
    assert a.sum().item() == 3
    with pytest.raises(ValueError, match="consumed"):
        flow.from_dlpack(cap)
    del a
    gc.collect()  # earlier tests' tensors, freed once the queue has run past them
    flow.cpu.synchronize()
    before = flow._oneflow_internal.memory_allocated("cpu")
    cap = flow.to_dlpack(flow.ones(1 << 16))
    del cap  # an unconsumed capsule frees its tensor
    gc.collect()
    assert flow._oneflow_internal.memory_allocated("cpu") == before
