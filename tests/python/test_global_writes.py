"""Writes into global tensors (setitem, in-place ops) split over 2 and 3 processes: a write the
shards can make alone stays on them, one along the split dim or by indices goes through the
whole value; values and gradients against the same writes on a local tensor."""

import pytest
from test_distributed import _run_on_ranks

BODY = """
import numpy as np
import oneflow as flow

rank, world = flow.env.get_rank(), flow.env.get_world_size()
P = flow.placement("cpu", ranks=list(range(world)))
B = flow.sbp.broadcast
a = np.arange(35, dtype=np.float32).reshape(7, 5)


def g(t, sbp=B):
    return t.to_global(P, B).to_global(sbp=sbp)


WRITES = {
    "x[:, 0] = 1": lambda x, h: x.__setitem__((slice(None), 0), 1.0),
    "x[:, 1:3] = 2": lambda x, h: x.__setitem__((slice(None), slice(1, 3)), 2.0),
    "x[2] = 3": lambda x, h: x.__setitem__(2, 3.0),
    "x[1:4] = 4": lambda x, h: x.__setitem__(slice(1, 4), 4.0),
    "x[-1, -1] = 7": lambda x, h: x.__setitem__((-1, -1), 7.0),
    "x[x > 10] = 0": lambda x, h: x.__setitem__(x > 10, 0.0),
    "x[[0, 2]] = 5": lambda x, h: x.__setitem__([0, 2], 5.0),
    "x[:, [1, 3]] = 2": lambda x, h: x.__setitem__((slice(None), [1, 3]), 2.0),
    "x[[0, 2], 1] = t": lambda x, h: x.__setitem__(([0, 2], 1), h(flow.tensor([7.0, 8.0]))),
    "x[1:3, 2:4] = t": lambda x, h: x.__setitem__((slice(1, 3), slice(2, 4)), h(flow.ones(2, 2))),
    "x[idx] = 1.5": lambda x, h: x.__setitem__(h(flow.tensor([6, 1])), 1.5),
    "x.T[0] = 9": lambda x, h: x.T.__setitem__(0, 9.0),
    "x[..., 0] += 1": lambda x, h: x[..., 0].add_(1.0),
    "masked_fill_": lambda x, h: x.masked_fill_(x > 20, -1.0),
    "index_fill_": lambda x, h: x.index_fill_(1, h(flow.tensor([0, 2])), -2.0),
    "copy_": lambda x, h: x.copy_(h(flow.ones(7, 5))),
    "clamp_": lambda x, h: x.clamp_(3, 10),
    "x[mask] = 0": lambda x, h: x.__setitem__(h(flow.tensor([True, False] * 3 + [True])), 0.0),
    "x[mask, 1] = t": lambda x, h: x.__setitem__(
        (flow.tensor([True, False] * 3 + [True]), 1), h(flow.tensor([1.0, 2.0, 3.0, 4.0]))
    ),
    "x[x > 9] = t": lambda x, h: x.__setitem__(x > 9, h(flow.tensor(2.5))),
    "x[1] = (1, 5) value": lambda x, h: x.__setitem__(1, h(flow.ones(1, 5))),
}
for sbp in (flow.sbp.split(0), flow.sbp.split(1)):
    for name, write in WRITES.items():
        if name == "x[..., 0] += 1" and sbp == flow.sbp.split(1):
            continue  # a view across the split dim is a copy: writing into it raises
        x = g(flow.tensor(a), sbp)
        ref = flow.tensor(a)
        write(x, g)
        write(ref, lambda t: t)
        assert x.sbp == (sbp,), (name, x.sbp)
        np.testing.assert_allclose(x.numpy(), ref.numpy(), err_msg=f"{name} {sbp}")

    # gradients through a write along the split dim (the whole value's path)
    w = g(flow.tensor(a), sbp).requires_grad_()
    lw = flow.tensor(a, requires_grad=True)
    v, lv = g(flow.tensor([1.0, 2.0])).requires_grad_(), flow.tensor([1.0, 2.0], requires_grad=True)
    for t, h, u in ((w, g, v), (lw, lambda t: t, lv)):
        y = t * 2
        y[2] = h(flow.tensor(np.ones(5, dtype=np.float32))) * 3
        y[[0, 4], 1] = 0.0
        y[1:3, [0, 4]] = u * u
        y[:, 3] = u[0]
        y[h(flow.tensor([5, 6])), 0] = u  # a global index tensor in the key
        y[3] = h(flow.ones(1, 5)) * u[1]  # a value with a leading 1
        (y * y).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), lw.grad.numpy(), err_msg=f"grad {sbp}")
    np.testing.assert_allclose(v.grad.numpy(), lv.grad.numpy(), err_msg=f"value grad {sbp}")
    # an in-place op through a view that autograd records is refused (its base's history
    # would not change: a wrong gradient)
    y = w * 2
    try:
        y[1].mul_(0)
        raise AssertionError("an in-place op through a global view ran under autograd")
    except NotImplementedError as e:
        assert "view of a global tensor" in str(e), e
    other = 1 - sbp.axis  # a view along the other dim writes into the shards
    with flow.no_grad():
        y.select(other, 1).mul_(0)
    assert (y.numpy().take(1, axis=other) == 0).all()

try:
    x = g(flow.tensor(a), flow.sbp.split(1))
    x[..., 0].add_(1.0)
    raise AssertionError("an in-place op on a copied view ran")
except NotImplementedError as e:
    assert "copy" in str(e), e
print(f"rank {rank} ok", flush=True)
"""


@pytest.mark.parametrize("world", [2, 3])
def test_writes_into_split_global_tensors_on_ranks(tmp_path, world):
    _run_on_ranks(tmp_path, BODY, world)


INPLACE_WHOLE = """
import numpy as np
import oneflow as flow

rank = flow.env.get_rank()
P = flow.placement("cpu", ranks=[0, 1])
S0, S1, B, PS = flow.sbp.split(0), flow.sbp.split(1), flow.sbp.broadcast, flow.sbp.partial_sum
a = np.arange(12, dtype=np.float32).reshape(4, 3) + 1


def g(v, sbp):
    return flow.tensor(v).to_global(P, B).to_global(P, sbp)


idx = np.array([[0, 2, 1], [1, 0, 2], [2, 2, 0], [0, 1, 1]])
mask = a > 5
for sbp in (S0, S1, PS):
    # in-place ops no layout rule covers run on the whole value and land in the shards again
    cases = {
        "scatter_": lambda t, T: t.scatter_(1, T(idx), T(-a)),
        "masked_scatter": lambda t, T: t.masked_scatter(T(mask), T(-a.reshape(-1))),
        "put": lambda t, T: t.put(T(np.array([0, 7])), T(np.array([9.0, 8.0], np.float32))),
        "index_fill_": lambda t, T: t.index_fill_(0, T(np.array([1, 3])), 0.5),
        "mul_self": lambda t, T: t.mul_(t),
        "pow_": lambda t, T: t.pow_(2),
    }
    for name, fn in cases.items():
        want = fn(flow.tensor(a), flow.tensor).numpy()
        t = g(a, sbp)
        out = fn(t, lambda v: g(v, B))
        assert t.sbp == (sbp,), (name, t.sbp)
        np.testing.assert_array_equal(out.numpy(), want, err_msg=f"{name} {sbp}")
        if name.endswith("_") or name == "mul_self":
            np.testing.assert_array_equal(t.numpy(), want, err_msg=f"{name} {sbp} in place")
# with autograd: a scatter_ into a split non-leaf, gradients as the local computation
w = g(a, S0).requires_grad_()
lw = flow.tensor(a).requires_grad_()
for x, T in ((w, lambda v: g(v, B)), (lw, flow.tensor)):
    y = x * 2
    y.scatter_(1, T(idx[:, :1]), T(np.zeros((4, 1), np.float32)))
    (y * y).sum().backward()
np.testing.assert_array_equal(w.grad.numpy(), lw.grad.numpy())
print(f"rank {rank} ok", flush=True)
"""


def test_inplace_ops_without_a_rule_run_through_the_whole_value(tmp_path):
    _run_on_ranks(tmp_path, INPLACE_WHOLE, 2)
