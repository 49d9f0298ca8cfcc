"""Bad input raises a Python exception that names the op, what was expected and what came; the
process survives and the next op works."""

import pytest

import oneflow as flow


def test_matmul_shape_mismatch_names_op_and_shapes():
    with pytest.raises(RuntimeError) as e:
        flow.matmul(flow.ones(2, 3), flow.ones(2, 3))
    msg = str(e.value)
    assert msg.startswith("matmul") and "(2, 3)" in msg and "2x3" in msg
    # the process is fine afterwards
    assert (flow.ones(2, 3) @ flow.ones(3, 2)).sum().item() == 12.0


def test_broadcast_mismatch_is_runtime_error():
    with pytest.raises(RuntimeError, match=r"add: shapes \(3,\) and \(4,\)"):
        flow.ones(3) + flow.ones(4)


def test_wrong_argument_types_are_type_errors():
    with pytest.raises(TypeError, match="add"):
        flow.add(flow.ones(2), "x")
    with pytest.raises(TypeError, match="matmul"):
        flow.matmul(flow.ones(2, 2), [[1, 2], [3, 4]])
    with pytest.raises(TypeError, match="dtype"):
        flow.zeros(2, dtype="float32")
    with pytest.raises(TypeError):
        flow.zeros(2.5)


def test_dim_out_of_range_is_index_error():
    with pytest.raises(IndexError, match=r"sum: dimension out of range"):
        flow.ones(2, 3).sum(2)
    with pytest.raises(IndexError):
        flow.ones(2, 3).transpose(0, 5)


def test_negative_size_and_bad_reshape():
    with pytest.raises(RuntimeError, match="negative dimension"):
        flow.zeros(2, -1)
    with pytest.raises(RuntimeError, match="invalid for input of size 6"):
        flow.ones(2, 3).reshape(4, 2)


def test_requires_grad_on_integer_tensor():
    with pytest.raises(RuntimeError, match="floating point"):
        flow.ones(2, dtype=flow.int64, requires_grad=True)


def test_device_mismatch_or_missing_backend():
    with pytest.raises((RuntimeError, ValueError)):
        flow.ones(2, device="gpu")


def test_lazy_and_global_modes_are_explicitly_not_implemented():
    prev = flow._oneflow_internal._set_lazy_mode(True)
    try:
        with pytest.raises(NotImplementedError, match="lazy"):
            flow.ones(2) + 1
    finally:
        flow._oneflow_internal._set_lazy_mode(prev)
    with pytest.raises(NotImplementedError, match="global"):
        flow.zeros(2, placement=flow.placement("cpu", [0]), sbp=flow.sbp.broadcast)
    assert (flow.ones(2) + 1).sum().item() == 4.0


def test_float_only_ops_reject_integers_clearly():
    with pytest.raises(RuntimeError, match="mean.*int64"):
        flow.ones(3, dtype=flow.int64).mean()
    with pytest.raises(TypeError, match="softmax.*int64"):
        flow.ones(3, dtype=flow.int64).softmax(0)
    with pytest.raises(ValueError, match="gelu: approximate"):
        flow.nn.functional.gelu(flow.ones(2), approximate="fast")
    with pytest.raises(IndexError, match="softmax"):
        flow.ones(2, 3).softmax(2)


def test_expand_past_int64_element_count_is_an_error():
    with pytest.raises(RuntimeError, match=r"expand: the expanded size .* more elements"):
        flow.ones(1).expand(2**62, 2**62)
    assert flow.ones(1).expand(2**31, 2**31).shape == (2**31, 2**31)  # a view: no memory
