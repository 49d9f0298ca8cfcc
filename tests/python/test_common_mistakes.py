"""The mistakes users make most, table-driven: each raises the exception type PyTorch raises, with a
message that names the op and the offending shapes, dtypes or values, and leaves the process
usable."""

import re

import pytest

import oneflow as flow
import oneflow.nn as nn
import oneflow.nn.functional as F
from oneflow.utils.data import DataLoader


def _leaf(*shape):
    return flow.randn(*shape, requires_grad=True)


def _backward_twice():
    x = _leaf(3)
    y = (x * x).sum()
    y.backward()
    y.backward()


def _inplace_on_leaf():
    _leaf(3).add_(1)


def _modified_saved_tensor():
    x = _leaf(3)
    h = x * 2
    y = (h * h).sum()
    h.add_(1)
    y.backward()


def _backward_non_scalar():
    (_leaf(3) * 2).backward()


def _load_state_dict(sd):
    def call():
        nn.Linear(3, 2).load_state_dict(sd)

    return call


def _batchnorm_one_value():
    nn.BatchNorm1d(3)(flow.randn(1, 3))


def _collate_ragged():
    next(iter(DataLoader([flow.zeros(2), flow.zeros(3)], batch_size=2)))


def _bad_tensor_assign():
    flow.zeros(2, 3)[0] = flow.ones(4)


# (id, call, exception type, patterns that must all appear in the message)
MISTAKES = [
    (
        "matmul shapes",
        lambda: flow.ones(2, 3) @ flow.ones(4, 5),
        RuntimeError,
        ["^matmul", r"\(2, 3\)", r"\(4, 5\)"],
    ),
    (
        "linear in_features",
        lambda: nn.Linear(4, 2)(flow.randn(5, 3)),
        RuntimeError,
        ["^linear", r"\(5, 3\)", r"\(2, 4\)"],
    ),
    (
        "linear dtype",
        lambda: nn.Linear(2, 2)(flow.ones(3, 2, dtype=flow.float64)),
        RuntimeError,
        ["matmul", "float64", "float32"],
    ),
    (
        "bmm batch",
        lambda: flow.bmm(flow.ones(2, 3, 4), flow.ones(3, 4, 5)),
        RuntimeError,
        ["^bmm", "2", "3"],
    ),
    (
        "embedding index out of range",
        lambda: nn.Embedding(10, 3)(flow.tensor([1, 10])),
        IndexError,
        ["^embedding", "out of range", r"\(10, 3\)"],
    ),
    (
        "embedding negative index",
        lambda: F.embedding(flow.tensor([-1]), flow.randn(10, 3)),
        IndexError,
        ["^embedding", r"\[0, 10\)"],
    ),
    (
        "embedding float index",
        lambda: nn.Embedding(10, 3)(flow.tensor([1.0, 2.0])),
        RuntimeError,
        ["^embedding", "integer", "float32"],
    ),
    (
        "conv2d input rank",
        lambda: nn.Conv2d(3, 8, 3)(flow.randn(3, 5)),
        RuntimeError,
        ["^conv2d", "4D", r"\(3, 5\)"],
    ),
    (
        "conv2d channels",
        lambda: nn.Conv2d(3, 8, 3)(flow.randn(1, 4, 5, 5)),
        RuntimeError,
        ["^conv2d", "3 channels", "4 channels", r"\(1, 4, 5, 5\)"],
    ),
    (
        "conv2d kernel larger than input",
        lambda: nn.Conv2d(3, 8, 5)(flow.randn(1, 3, 3, 3)),
        RuntimeError,
        ["^conv2d", "3 x 3", "5 x 5"],
    ),
    (
        "max_pool2d output too small",
        lambda: F.max_pool2d(flow.randn(1, 1, 2, 2), 3),
        RuntimeError,
        ["^max_pool2d", "too small", "1x2x2"],
    ),
    (
        "cross_entropy float class target",
        lambda: F.cross_entropy(flow.randn(4, 5), flow.tensor([1.0, 2.0, 0.0, 1.0])),
        RuntimeError,
        ["^cross_entropy", "integer", "float32", r"\(4, 5\)", r"\(4,\)"],
    ),
    (
        "cross_entropy batch mismatch",
        lambda: F.cross_entropy(flow.randn(4, 5), flow.tensor([1, 2, 0])),
        ValueError,
        ["^cross_entropy", r"\(4,\)", r"\(3,\)"],
    ),
    (
        "nll_loss target out of range",
        lambda: F.nll_loss(flow.randn(4, 5), flow.tensor([1, 2, 0, 7])),
        IndexError,
        ["^nll_loss", "out of bounds", r"\[0, 5\)"],
    ),
    (
        "mse_loss shapes",
        lambda: F.mse_loss(flow.randn(3, 4), flow.randn(5)),
        RuntimeError,
        ["^mse_loss", r"\(3, 4\)", r"\(5,\)"],
    ),
    (
        "binary_cross_entropy on logits",
        lambda: F.binary_cross_entropy(flow.tensor([0.5, 2.0]), flow.tensor([0.0, 1.0])),
        RuntimeError,
        ["^binary_cross_entropy", "between 0 and 1", r"\(2,\)"],
    ),
    (
        "one_hot num_classes too small",
        lambda: F.one_hot(flow.tensor([0, 5]), num_classes=3),
        RuntimeError,
        ["^one_hot", "5", "num_classes=3"],
    ),
    ("backward twice", _backward_twice, RuntimeError, ["second time", "retain_graph=True"]),
    (
        "in-place on a leaf requiring grad",
        _inplace_on_leaf,
        RuntimeError,
        ["^add", "leaf Variable", "in-place"],
    ),
    (
        "saved tensor modified in place",
        _modified_saved_tensor,
        RuntimeError,
        ["^mul", "modified by an inplace operation", r"float32 \(3,\)", "version 1"],
    ),
    (
        "backward of a non-scalar",
        _backward_non_scalar,
        RuntimeError,
        ["^backward", "scalar outputs", r"\(3,\)"],
    ),
    (
        "requires_grad on integers",
        lambda: flow.ones(2, dtype=flow.int64).requires_grad_(),
        RuntimeError,
        ["requires_grad", "floating point", "int64"],
    ),
    (
        "view of non-contiguous memory",
        lambda: flow.randn(3, 4).t().view(12),
        RuntimeError,
        ["^view", "stride", r"\.reshape"],
    ),
    (
        "reshape to the wrong size",
        lambda: flow.ones(2, 3).reshape(4, 2),
        RuntimeError,
        ["^reshape", r"\(4, 2\)", "size 6"],
    ),
    (
        "expand to an incompatible size",
        lambda: flow.ones(3).expand(4),
        RuntimeError,
        ["^expand", r"\(4,\)", r"\(3,\)"],
    ),
    (
        "broadcast mismatch",
        lambda: flow.ones(3) + flow.ones(4),
        RuntimeError,
        ["^add", r"\(3,\)", r"\(4,\)"],
    ),
    (
        "cat shapes",
        lambda: flow.cat([flow.ones(2, 3), flow.ones(3, 3)], dim=1),
        RuntimeError,
        ["^cat", r"\(2, 3\)", r"\(3, 3\)"],
    ),
    (
        "stack shapes",
        lambda: flow.stack([flow.ones(2), flow.ones(3)]),
        RuntimeError,
        ["^stack", r"\(2,\)", r"\(3,\)"],
    ),
    (
        "index out of bounds",
        lambda: flow.ones(3)[5],
        IndexError,
        ["index 5", "out of bounds", "size 3"],
    ),
    (
        "dim out of range",
        lambda: flow.ones(2, 3).sum(dim=2),
        IndexError,
        ["^sum", r"\[-2, 1\]", "got 2"],
    ),
    (
        "unsqueeze dim out of range",
        lambda: flow.ones(2, 3).unsqueeze(5),
        IndexError,
        ["^unsqueeze", r"\[-3, 2\]", "got 5"],
    ),
    (
        "gather index rank",
        lambda: flow.gather(flow.ones(3, 4), 1, flow.zeros(3, dtype=flow.int64)),
        RuntimeError,
        ["^gather", r"\(3, 4\)", r"\(3,\)"],
    ),
    ("item of many elements", lambda: flow.ones(4).item(), RuntimeError, ["^item", "4 elements"]),
    (
        "bool of many elements",
        lambda: bool(flow.ones(4)),
        RuntimeError,
        ["^bool", "ambiguous", "4 elements"],
    ),
    (
        "in-place result type",
        lambda: flow.ones(3, dtype=flow.int64).add_(flow.ones(3) * 0.5),
        RuntimeError,
        ["^add_", "float32", "int64"],
    ),
    (
        "masked_fill float mask",
        lambda: flow.ones(3).masked_fill(flow.ones(3), 0.0),
        RuntimeError,
        ["^masked_fill", "bool", "float32"],
    ),
    (
        "softmax of integers",
        lambda: F.softmax(flow.ones(3, dtype=flow.int64), dim=0),
        NotImplementedError,
        ["^softmax", "floating point", "int64"],
    ),
    (
        "split sizes",
        lambda: flow.ones(5).split([2, 2]),
        RuntimeError,
        ["^split", "sum exactly to 5", r"\[2, 2\]"],
    ),
    (
        "permute dims",
        lambda: flow.ones(2, 3).permute(0),
        RuntimeError,
        ["^permute", "expected 2 dims", "got 1"],
    ),
    ("negative size", lambda: flow.randn(-2), RuntimeError, ["negative dimension -2"]),
    ("arange step zero", lambda: flow.arange(0, 10, 0), RuntimeError, ["^arange", "nonzero"]),
    ("setitem shape", _bad_tensor_assign, RuntimeError, [r"\(4,\)", r"\(3,\)"]),
    (
        "LSTM input_size",
        lambda: nn.LSTM(4, 8)(flow.randn(5, 2, 3)),
        RuntimeError,
        ["^LSTM", "input_size", "Expected 4, got 3", r"\(5, 2, 3\)"],
    ),
    (
        "BatchNorm one value per channel",
        _batchnorm_one_value,
        ValueError,
        ["^batch_norm", "more than 1 value per channel", r"\(1, 3\)"],
    ),
    (
        "state_dict missing key",
        _load_state_dict({"weight": flow.zeros(2, 3)}),
        RuntimeError,
        ["loading state_dict for Linear", "Missing key", '"bias"'],
    ),
    (
        "state_dict unexpected key",
        _load_state_dict(
            {"weight": flow.zeros(2, 3), "bias": flow.zeros(2), "extra": flow.zeros(1)}
        ),
        RuntimeError,
        ["loading state_dict for Linear", "Unexpected key", '"extra"'],
    ),
    (
        "state_dict shape",
        _load_state_dict({"weight": flow.zeros(4, 3), "bias": flow.zeros(2)}),
        RuntimeError,
        ["size mismatch for weight", r"\(4, 3\)", r"\(2, 3\)"],
    ),
    (
        "optimizer without parameters",
        lambda: flow.optim.SGD([], lr=0.1),
        ValueError,
        ["empty parameter list"],
    ),
    (
        "negative learning rate",
        lambda: flow.optim.Adam(nn.Linear(2, 2).parameters(), lr=-0.1),
        ValueError,
        ["Invalid learning rate", "-0.1"],
    ),
    ("collate of ragged samples", _collate_ragged, RuntimeError, ["^stack", r"\(2,\)", r"\(3,\)"]),
    (
        "forward with extra arguments",
        lambda: nn.Linear(2, 2)(flow.randn(2, 2), flow.randn(2)),
        TypeError,
        ["forward", "3 were given"],
    ),
    (
        "load of a missing checkpoint",
        lambda: flow.load("/nonexistent/dir/ckpt"),
        FileNotFoundError,
        ["/nonexistent/dir/ckpt"],
    ),
    (
        "multinomial negative probability",
        lambda: flow.multinomial(flow.tensor([0.5, -1.0]), 1),
        RuntimeError,
        ["^multinomial", "< 0"],
    ),
]

if flow.cuda.is_available():
    MISTAKES.append(
        (
            "device mismatch",
            lambda: flow.ones(2, device="cuda") + flow.ones(2),
            RuntimeError,
            ["cuda", "cpu"],
        )
    )
else:
    MISTAKES.append(
        (
            "cuda on a build without CUDA",
            lambda: flow.ones(2, device="cuda"),
            RuntimeError,
            ["^cuda", "without CUDA", "ONEFLOW_WITH_CUDA"],
        )
    )


def test_the_table_is_large_enough():
    assert len(MISTAKES) >= 30
    assert len({m[0] for m in MISTAKES}) == len(MISTAKES)


@pytest.mark.parametrize("name,call,exc,patterns", MISTAKES, ids=[m[0] for m in MISTAKES])
def test_mistake_raises_a_clear_error(name, call, exc, patterns):
    with pytest.raises(Exception) as info:
        call()
        # Checks made inside kernels (index ranges) raise at the next synchronisation point.
        flow.cpu.synchronize()
    assert type(info.value) is exc or isinstance(info.value, exc), (
        f"{name}: expected {exc.__name__}, got {type(info.value).__name__}: {info.value}"
    )
    msg = str(info.value)
    for pattern in patterns:
        assert re.search(pattern, msg), f"{name}: {pattern!r} not in message {msg!r}"
    # the process is fine afterwards
    assert (flow.ones(2, 3) @ flow.ones(3, 2)).sum().item() == 12.0
