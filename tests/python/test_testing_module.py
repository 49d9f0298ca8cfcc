"""oneflow.testing.assert_close / assert_allclose / make_tensor against torch.testing: which
inputs pass, which fail, and the messages."""

import math

import numpy as np
import pytest
import torch

import oneflow as flow

CASES = [
    ([1.0, 2.0, 3.0], [1.0, 2.5, 3.0], {}),
    ([1.0, 2.0, 3.0], [1.0, 2.0 + 1e-6, 3.0], {}),
    ([[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [3.0, 4.1]], {}),
    ([1.0, math.nan], [1.0, math.nan], {}),
    ([1.0, math.nan], [1.0, math.nan], {"equal_nan": True}),
    ([1.0, math.inf], [1.0, math.inf], {}),
    ([1.0, 2.0], [1.1, 2.2], {"rtol": 0.2, "atol": 0.0}),
    ([0.0], [1e-6], {}),
]


def _message(fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
    except AssertionError as e:
        return str(e)
    return None


@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_assert_close_tensors_like_torch(case, dtype):
    a, b, kw = CASES[case]
    got = _message(
        lambda: flow.testing.assert_close(
            flow.tensor(a, dtype=getattr(flow, dtype)),
            flow.tensor(b, dtype=getattr(flow, dtype)),
            **kw,
        )
    )
    want = _message(
        lambda: torch.testing.assert_close(
            torch.tensor(a, dtype=getattr(torch, dtype)),
            torch.tensor(b, dtype=getattr(torch, dtype)),
            **kw,
        )
    )
    assert (got is None) == (want is None)
    if want is not None:
        # same first lines (count and percentage); the numbers may differ in the last digits
        assert got.splitlines()[:3] == want.splitlines()[:3]
        assert "Greatest absolute difference" in got and "at index" in got


COMPLEX_CASES = [
    ([1 + 2j, 3 - 1j], [1 + 2j, 3 - 1j], {}),
    ([1 + 2j, 3 - 1j], [1 + 2j, 3 - 1.5j], {}),  # only an imaginary part differs
    ([1 + 2j], [1 + 2j + 1e-7j], {}),
    ([complex(math.nan, 1)], [complex(math.nan, 1)], {"equal_nan": True}),
    ([1 + 1j], [1.1 + 1j], {"rtol": 0.2, "atol": 0.0}),
]


@pytest.mark.parametrize("case", range(len(COMPLEX_CASES)))
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_assert_close_complex_tensors_and_numbers_like_torch(case, dtype):
    a, b, kw = COMPLEX_CASES[case]
    got = _message(
        flow.testing.assert_close,
        flow.tensor(a, dtype=getattr(flow, dtype)),
        flow.tensor(b, dtype=getattr(flow, dtype)),
        **kw,
    )
    want = _message(
        torch.testing.assert_close,
        torch.tensor(a, dtype=getattr(torch, dtype)),
        torch.tensor(b, dtype=getattr(torch, dtype)),
        **kw,
    )
    assert (got is None) == (want is None), (got, want)
    if want is not None:
        assert got.splitlines()[:3] == want.splitlines()[:3]
    got = _message(flow.testing.assert_close, a[0], b[0], **kw)
    want = _message(torch.testing.assert_close, a[0], b[0], **kw)
    assert (got is None) == (want is None), (got, want)


def test_assert_close_attributes_containers_and_numbers_like_torch():
    pairs = [
        (lambda lib: (lib.tensor([1, 2]), lib.tensor([1.0, 2.0])), {}),
        (lambda lib: (lib.ones(2), lib.ones(3)), {}),
        (lambda lib: ({"a": lib.ones(2)}, {"a": lib.zeros(2)}), {}),
        (lambda lib: ([lib.ones(2), lib.ones(1)], (lib.ones(2), lib.ones(1))), {}),
        (lambda lib: (lib.tensor([1, 2]), lib.tensor([1.0, 2.0])), {"check_dtype": False}),
        (lambda lib: (1.0, 1.1), {}),
        (lambda lib: (1.0, 1.0 + 1e-9), {}),
        (lambda lib: ([1, 2], [1, 2, 3]), {}),
        (lambda lib: ({"a": 1}, {"b": 1}), {}),
    ]
    for make, kw in pairs:
        got = _message(flow.testing.assert_close, *make(flow), **kw)
        want = _message(torch.testing.assert_close, *make(torch), **kw)
        assert (got is None) == (want is None), (got, want)
        if want is not None:
            first = want.splitlines()[0].replace("torch.", "oneflow.")
            assert got.splitlines()[0] == first, (got, want)
    with pytest.raises(AssertionError, match="custom"):
        flow.testing.assert_close(flow.ones(1), flow.zeros(1), msg="custom")
    with pytest.raises(ValueError, match="Both 'rtol' and 'atol'"):
        flow.testing.assert_close(flow.ones(1), flow.ones(1), rtol=1e-3)
    with pytest.raises(TypeError, match="No comparison pair"):
        flow.testing.assert_close(object(), object())
    flow.testing.assert_close(np.ones(3), flow.ones(3, dtype=flow.float64))
    flow.testing.assert_allclose(flow.ones(2), [1, 1])


@pytest.mark.parametrize(
    "dtype", [flow.float32, flow.float64, flow.int64, flow.int32, flow.uint8, flow.bool]
)
def test_make_tensor_ranges_and_layouts(dtype):
    t = flow.testing.make_tensor(3, 40, dtype=dtype, device="cpu", noncontiguous=True)
    assert t.dtype == dtype and tuple(t.shape) == (3, 40)
    assert not t.is_contiguous()
    if dtype != flow.bool:
        v = t.numpy().astype(np.float64)
        lo = 0 if dtype == flow.uint8 else -9
        assert v.min() >= lo and v.max() <= 9
        t = flow.testing.make_tensor(
            (50,), dtype=dtype, device="cpu", low=1, high=3, exclude_zero=True
        )
        assert t.numpy().min() >= 1 and t.numpy().max() <= 3
    if dtype.is_floating_point:
        t = flow.testing.make_tensor(4, dtype=dtype, device="cpu", requires_grad=True)
        assert t.requires_grad
    with pytest.raises(ValueError, match="low"):
        flow.testing.make_tensor(2, dtype=dtype, device="cpu", low=3, high=1)
