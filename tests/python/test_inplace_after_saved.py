"""In-place changes after an op whose gradient reads only indices or metas: an index read then
written (x[m] += 1), values returned by max/topk/sort/cummax/median/kthvalue changed in place,
the values put by an index assignment or masked_scatter changed afterwards. PyTorch's gradients
need none of the overwritten values, so backward runs and gives its results."""

import numpy as np
import pytest
import torch

import oneflow as flow


def _case_mask_add(L):
    x = L.tensor([1.0, -2.0, 3.0], requires_grad=True)
    y = x * 1
    y[y > 0] += 1
    y.sum().backward()
    return x.grad.numpy()


def _case_idx_mul(L):
    x = L.tensor([1.0, -2.0, 3.0], requires_grad=True)
    y = x * 1
    y[[0, 2]] *= 3
    y.sum().backward()
    return x.grad.numpy()


def _case_mask_assign(L):
    x = L.tensor([1.0, -2.0, 3.0], requires_grad=True)
    y = x * 1
    m = y > 0
    y[m] = y[m] * 0.5
    y.sum().backward()
    return x.grad.numpy()


def _case_emb_maxnorm(L):
    e = L.nn.Embedding(4, 3, max_norm=1.0)
    with L.no_grad():
        e.weight.copy_(L.arange(12.0).reshape(4, 3))
    i = L.tensor([0, 1])
    out = e(i).sum() + e(L.tensor([1, 2])).sum()
    out.backward()
    return e.weight.grad.numpy()


def _case_interp_relu(L):
    x = L.tensor(np.arange(8.0).reshape(1, 2, 2, 2) - 3, requires_grad=True)
    y = x * 1
    z = L.nn.functional.interpolate(y, scale_factor=2)
    y.relu_()
    (z.sum() + y.sum()).backward()
    return x.grad.numpy()


def _case_index_select_inplace(L):
    x = L.tensor([1.0, -2.0, 3.0], requires_grad=True)
    y = x * 1
    z = y.index_select(0, L.tensor([0, 2]))
    y.mul_(2)
    (z.sum() + y.sum()).backward()
    return x.grad.numpy()


def _case_max_relu(L):
    x = L.tensor([[1.0, 3.0], [4.0, 2.0]], requires_grad=True)
    L.nn.functional.relu((x * 1).max(dim=1)[0], inplace=True).sum().backward()
    return x.grad.numpy()


def _case_topk_div(L):
    x = L.tensor([[1.0, 3.0, 2.0], [4.0, 2.0, 0.0]], requires_grad=True)
    v, i = (x * 1).topk(2)
    v.div_(2)
    v.sum().backward()
    return x.grad.numpy()


def _case_sort_inpl(L):
    x = L.tensor([3.0, 1.0, 2.0], requires_grad=True)
    v, i = (x * 1).sort()
    v.mul_(2)
    v.sum().backward()
    return x.grad.numpy()


def _case_cummax_inpl(L):
    x = L.tensor([1.0, 3.0, 2.0], requires_grad=True)
    v, i = (x * 1).cummax(0)
    v.mul_(2)
    v.sum().backward()
    return x.grad.numpy()


def _case_median_inpl(L):
    x = L.tensor([[1.0, 3.0, 2.0]], requires_grad=True)
    v, i = (x * 1).median(1)
    v.mul_(2)
    v.sum().backward()
    return x.grad.numpy()


def _case_kth_inpl(L):
    x = L.tensor([[1.0, 3.0, 2.0]], requires_grad=True)
    v, i = (x * 1).kthvalue(2, 1)
    v.mul_(2)
    v.sum().backward()
    return x.grad.numpy()


def _case_put_values(L):
    x = L.zeros(3, requires_grad=True)
    v = L.tensor([1.0, 2.0], requires_grad=True)
    w = v * 1
    y = x * 1
    y[L.tensor([0, 2])] = w
    w.mul_(3)
    y.sum().backward()
    return v.grad.numpy()


def _case_masked_scatter_src(L):
    x = L.zeros(3)
    s = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
    t = s * 1
    y = x.masked_scatter(L.tensor([True, False, True]), t)
    t.mul_(2)
    y.sum().backward()
    return s.grad.numpy()


def _case_embbag(L):
    w = L.tensor(np.arange(6.0).reshape(3, 2), requires_grad=True)
    u = w * 1
    o = L.nn.functional.embedding_bag(L.tensor([0, 2]), u, L.tensor([0]))
    u.mul_(2)
    o.sum().backward()
    return w.grad.numpy()


CASES = [
    _case_mask_add,
    _case_idx_mul,
    _case_mask_assign,
    _case_emb_maxnorm,
    _case_interp_relu,
    _case_index_select_inplace,
    _case_max_relu,
    _case_topk_div,
    _case_sort_inpl,
    _case_cummax_inpl,
    _case_median_inpl,
    _case_kth_inpl,
    _case_put_values,
    _case_masked_scatter_src,
    _case_embbag,
]


@pytest.mark.parametrize("case", CASES, ids=lambda f: f.__name__[len("_case_") :])
def test_backward_after_in_place_change_like_torch(case):
    np.testing.assert_allclose(case(flow), case(torch), rtol=1e-6)
