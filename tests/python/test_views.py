"""Views and basic indexing against PyTorch: random shapes and keys (ints, slices with steps,
None, Ellipsis), values and gradients, writes through views, split/chunk/unbind, zero-size dims."""

import numpy as np
import pytest
import torch

import oneflow as flow
from differential import check


def random_key(rng, shape):
    items = []
    for size in shape:
        r = rng.random()
        if r < 0.3:
            items.append(int(rng.integers(-size, size)))
        elif r < 0.8:
            start = int(rng.integers(-size - 2, size + 2))
            stop = int(rng.integers(-size - 2, size + 2))
            step = int(rng.integers(1, 4))
            items.append(
                slice(
                    start if rng.random() < 0.7 else None,
                    stop if rng.random() < 0.7 else None,
                    step,
                )
            )
        else:
            items.append(slice(None))
        if rng.random() < 0.15:
            items.append(None)
    if rng.random() < 0.3 and items:
        cut = int(rng.integers(0, len(items)))
        items = items[:cut] + [Ellipsis]
    return tuple(items)


@pytest.mark.parametrize("seed", range(40))
def test_getitem_matches_torch(seed, device):
    rng = np.random.default_rng(seed)
    shape = tuple(int(s) for s in rng.integers(1, 6, size=int(rng.integers(1, 4))))
    key = random_key(rng, shape)
    check(lambda lib, a: a[key] * 2, [shape], device=device, seed=seed)
    # the same key on a non-contiguous input of the same shape
    rev = tuple(reversed(shape))
    check(
        lambda lib, a: a.permute(*reversed(range(a.ndim)))[key] * 2, [rev], device=device, seed=seed
    )


def test_views_share_storage_and_write_through(device):
    x = flow.zeros(4, 5, device=device)
    v = x[1:3, ::2]
    assert not v.is_contiguous()
    v.fill_(3)
    x[0] = 1
    x[:, -1] = flow.tensor([5.0, 6.0, 7.0, 8.0], device=device)
    t = torch.zeros(4, 5)
    t[1:3, ::2] = 3
    t[0] = 1
    t[:, -1] = torch.tensor([5.0, 6.0, 7.0, 8.0])
    np.testing.assert_array_equal(x.cpu().numpy(), t.numpy())
    assert x._version == 3


def test_setitem_broadcasts_and_casts(device):
    x = flow.zeros(3, 4, dtype=flow.int64, device=device)
    x[1:] = flow.tensor([1.9, -2.7, 3.0, 4.0], device=device)  # float into int64 truncates
    np.testing.assert_array_equal(x.cpu().numpy()[1:], [[1, -2, 3, 4], [1, -2, 3, 4]])


@pytest.mark.parametrize("seed", range(10))
def test_view_ops_match_torch(seed, device):
    rng = np.random.default_rng(seed)
    shape = tuple(int(s) for s in rng.integers(1, 5, size=3))
    d = int(rng.integers(-3, 3))
    check(
        lambda lib, a: a.narrow(d, 0, a.shape[d] - 1 if a.shape[d] > 1 else 1),
        [shape],
        device=device,
        seed=seed,
    )
    check(lambda lib, a: a.select(d, -1), [shape], device=device, seed=seed)
    check(lambda lib, a: a.unsqueeze(d).squeeze(), [shape], device=device, seed=seed)
    check(lambda lib, a: a.transpose(0, 2).flatten(1), [shape], device=device, seed=seed)
    check(lambda lib, a: a.chunk(2, d)[-1] * 2, [shape], device=device, seed=seed)


def test_split_chunk_unbind_shapes():
    t = torch.arange(10)
    f = flow.arange(10)
    for args in [(3,), ([2, 3, 5],), (10,), (4,)]:
        assert [tuple(p.shape) for p in f.split(*args)] == [tuple(p.shape) for p in t.split(*args)]
    for n in [1, 3, 4, 10]:
        assert [p.tolist() for p in f.chunk(n)] == [p.tolist() for p in t.chunk(n)]
    assert [r.tolist() for r in flow.arange(6).reshape(2, 3).unbind(1)] == [[0, 3], [1, 4], [2, 5]]


def test_split_is_one_view_op_whose_gradient_is_one_cat():
    # Sections used or not, zero-size sections, a negative dim, non-contiguous input; the
    # gradient of the input equals PyTorch's, and the sections share the input's memory.
    rng = np.random.default_rng(4)
    a = rng.standard_normal((5, 12, 3))
    g = rng.standard_normal((5, 7, 3))
    res = {}
    for lib in (flow, torch):
        x = lib.tensor(a, requires_grad=True)
        base = x.transpose(0, 2)  # (3, 12, 5), strided
        p, q, r, s = base.split([4, 0, 7, 1], dim=-2)
        assert q.shape[-2] == 0
        out = (p * 3).sum() + (r * lib.tensor(g).transpose(0, 2)).sum()  # s unused
        out.backward()
        res[lib] = x.grad.numpy()
        chunks = x.detach().chunk(5, dim=1)
        assert [tuple(c.shape) for c in chunks] == [(5, 3, 3)] * 4
    np.testing.assert_allclose(res[flow], res[torch], rtol=1e-12, atol=1e-12)
    x = flow.zeros(4, 6)
    t = flow.randn(4, 6, requires_grad=True)
    parts = t.split(2, dim=1)
    assert parts[0].grad_fn is parts[2].grad_fn  # one node for all sections
    assert parts[0].grad_fn.name() == "splitBackward"
    left, right = x.split(3, dim=1)
    left.fill_(1.0)
    assert x.numpy()[:, :3].sum() == 12 and x.numpy()[:, 3:].sum() == 0
    # An in-place op on one section keeps the gradients of the others right.
    w = flow.tensor(a[:, :4, 0], requires_grad=True)
    y = w * 1.0
    u, v = y.split(2, dim=1)
    u.mul_(3.0)
    (y * y).sum().backward()
    want = 2 * a[:, :4, 0] * np.concatenate([np.full((5, 2), 9.0), np.ones((5, 2))], axis=1)
    np.testing.assert_allclose(w.grad.numpy(), want, rtol=1e-12)
    with pytest.raises(RuntimeError, match="sum exactly to 6"):
        x.split([2, 2], dim=1)
    with pytest.raises(RuntimeError, match="non-negative"):
        x.split([7, -1], dim=1)


def test_repeat_function_like_tensor_repeat():
    a = np.arange(6.0).reshape(2, 3)
    x = flow.tensor(a, requires_grad=True)
    y = flow.repeat(x, (2, 1, 2))
    t = torch.tensor(a, requires_grad=True)
    u = t.repeat(2, 1, 2)
    np.testing.assert_array_equal(y.detach().numpy(), u.detach().numpy())
    g = np.arange(float(u.numel())).reshape(tuple(u.shape))
    y.backward(flow.tensor(g))
    u.backward(torch.tensor(g))
    np.testing.assert_array_equal(x.grad.numpy(), t.grad.numpy())
    np.testing.assert_array_equal(
        flow.repeat(x, 2, 2).detach().numpy(), t.repeat(2, 2).detach().numpy()
    )
    with pytest.raises(RuntimeError, match="repeat"):
        flow.repeat(x, (2,))


def test_indexing_errors():
    x = flow.zeros(2, 3)
    with pytest.raises(IndexError, match="out of bounds"):
        x[2]
    with pytest.raises(IndexError, match="too many indices"):
        x[0, 0, 0]
    with pytest.raises(ValueError, match="step must be greater than zero"):
        x[::-1]
    with pytest.raises(IndexError, match="valid indices"):
        x[1.5]


def _inplace_on_views(lib, xv, wv):
    x = lib.tensor(xv, requires_grad=True)
    w = lib.tensor(wv, requires_grad=True)
    h = x * 2
    h[0] = 5  # setitem on a row
    h[:, 1].mul_(w)  # an in-place op on a view, with a grad-requiring operand
    h[1] += 1  # getitem view, __iadd__, setitem
    v = h.t()
    v[2].add_(h[2, :3].clone())  # a view of a view; the operand reads the base
    h.narrow(0, 2, 1).clamp_(-1.0, 1.0)
    u = h[0]
    h.mul_(1.5)  # in place on the base: u and v now view the new history
    loss = (h * h).sum() + (v[1] * 3).sum() + (u * u).sum()
    loss.backward()
    return h.detach().numpy(), x.grad.numpy(), w.grad.numpy()


def test_inplace_on_views_of_grad_tensors_matches_torch():
    rng = np.random.default_rng(0)
    xv = rng.standard_normal((3, 4)).astype(np.float32)
    wv = rng.standard_normal(3).astype(np.float32)
    for got, want in zip(_inplace_on_views(flow, xv, wv), _inplace_on_views(torch, xv, wv)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def _index_puts_on_views(lib, xv):
    x = lib.tensor(xv, requires_grad=True)
    outs = []
    for put in (
        lambda b: b.view(3, 4).index_put_((lib.tensor([1]),), lib.tensor(9.0)),
        lambda b: b.reshape(12).index_put_((lib.tensor([0, 5]),), lib.tensor([7.0, 8.0]), True),
        lambda b: b.flatten().__setitem__(lib.tensor([1, 11]), 9.0),
        lambda b: b[1].__setitem__(lib.tensor([2, 0]), -1.0),
        lambda b: b.unsqueeze(0).squeeze(0).__setitem__((lib.tensor([0]), lib.tensor([2])), 4.0),
        lambda b: b.__setitem__((None, lib.tensor([0, 1])), 7.0),
    ):
        b = x * 2
        put(b)
        outs.append(b)
    loss = sum((b * lib.arange(12.0).reshape(4, 3)).sum() for b in outs)
    loss.backward()
    return [b.detach().numpy() for b in outs] + [x.grad.numpy()]


def test_index_put_on_views_of_grad_tensors_keeps_the_other_elements():
    # The put runs out of place on a copy of the view's values: the elements it does not index
    # must keep theirs (they were left as the fresh buffer's leftovers).
    xv = np.random.default_rng(1).standard_normal((4, 3)).astype(np.float32)
    for got, want in zip(_index_puts_on_views(flow, xv), _index_puts_on_views(torch, xv)):
        np.testing.assert_allclose(got, want, rtol=1e-6)


def _overlap_cases(lib):
    def shifted(op):
        a = lib.arange(6.0)
        return lambda: op(a[1:], a[:-1])

    def expanded(op):
        return lambda: op(lib.zeros(1, 3).expand(2, 3))

    def put_own_row():
        x = lib.arange(6.0).reshape(2, 3)
        x[lib.tensor([1])] = x[0]
        return x

    a = lib.arange(6.0)
    b = lib.arange(6.0).reshape(2, 3)
    return {
        "copy_ shifted": shifted(lambda d, s: d.copy_(s)),
        "add_ shifted": shifted(lambda d, s: d.add_(s)),
        "mul_ shifted": shifted(lambda d, s: d.mul_(s)),
        "setitem shifted": shifted(lambda d, s: d.__setitem__(slice(None), s)),
        "add_ expanded": expanded(lambda d: d.add_(1)),
        "relu_ expanded": expanded(lambda d: d.relu_()),
        "copy_ expanded": expanded(lambda d: d.copy_(lib.ones(2, 3))),
        "index_add_ expanded": expanded(lambda d: d.index_add_(0, lib.tensor([0]), lib.ones(1, 3))),
        "index_put_ own row": put_own_row,
        # allowed: the same elements, interleaved strided views, fills of one value
        "add_ itself": lambda: a.add_(a),
        "add_ same view": lambda: a[1:].add_(a[1:]),
        "add_ transposed twice": lambda: b.t().add_(b.t()),
        "add_ interleaved": lambda: a[::2].add_(a[1::2]),
        "fill_ expanded": expanded(lambda d: d.fill_(2.0)),
        "zero_ expanded": expanded(lambda d: d.zero_()),
    }


def test_in_place_writes_refuse_overlapping_memory_like_torch():
    # Note [In-place overlap]: expanded destinations and inputs that overlap the destination
    # without being it raise RuntimeError, as in PyTorch; the rest runs.
    got, want = _overlap_cases(flow), _overlap_cases(torch)
    for name in want:
        try:
            w = want[name]().numpy()
        except RuntimeError:
            with pytest.raises(RuntimeError, match="unsupported operation"):
                got[name]()
            continue
        np.testing.assert_array_equal(got[name]().numpy(), w, err_msg=name)


def test_inplace_on_view_of_grad_leaf_is_refused():
    x = flow.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        x[0:2].add_(1)
    with flow.no_grad():
        x[0:2].add_(1)  # initialisation code does this
    assert x.tolist() == [2.0, 2.0, 1.0]


def test_zero_size_views(device):
    x = flow.zeros(0, 3, device=device)
    assert x[:, 1].shape == (0,) and x[1:].shape == (0, 3)
    assert flow.zeros(4, device=device)[3:1].shape == (0,)
    check(lambda lib, a: a[2:2] + 1, [(5, 2)], device=device)


def test_creation_matches_torch(device):
    for args in [(5,), (2, 9), (1, 10, 3), (0, 1, 0.25), (-3, 3)]:
        f, t = flow.arange(*args, device=device), torch.arange(*args)
        assert str(f.dtype) == "oneflow." + str(t.dtype).split(".")[1]
        np.testing.assert_allclose(f.cpu().numpy(), t.numpy())
    np.testing.assert_allclose(
        flow.linspace(-1, 2, 7, device=device).cpu().numpy(),
        torch.linspace(-1, 2, 7).numpy(),
        rtol=1e-6,
    )
    np.testing.assert_array_equal(flow.eye(3, 4, device=device).cpu().numpy(), np.eye(3, 4))


def test_rand_and_randint(device):
    flow.manual_seed(3)
    a = flow.rand(1000, device=device).cpu().numpy()
    flow.manual_seed(3)
    b = flow.rand(1000, device=device).cpu().numpy()
    np.testing.assert_array_equal(a, b)
    assert a.min() >= 0 and a.max() < 1 and abs(a.mean() - 0.5) < 0.05
    r = flow.randint(-3, 4, (2000,), device=device)
    assert r.dtype is flow.int64
    vals = r.cpu().numpy()
    assert vals.min() == -3 and vals.max() == 3
    with pytest.raises(RuntimeError):
        flow.randint(5, 5, (3,))


def test_rand_same_on_cpu_and_device(device):
    flow.manual_seed(11)
    a = flow.rand(64, device=device).cpu().numpy()
    flow.manual_seed(11)
    b = flow.rand(64).numpy()
    np.testing.assert_allclose(a, b, rtol=1e-6)


def random_advanced_key(rng, shape):
    items = []
    for size in shape:
        r = rng.random()
        if r < 0.35:
            n = int(rng.integers(1, 4))
            items.append(rng.integers(-size, size, size=n).tolist())
        elif r < 0.5:
            items.append(int(rng.integers(-size, size)))
        else:
            items.append(slice(None, None, int(rng.integers(1, 3))))
    if not any(isinstance(i, list) for i in items):
        items[0] = [0]
    return tuple(items)


def _torch_key(key):
    return tuple(torch.tensor(k) if isinstance(k, list) else k for k in key)


@pytest.mark.parametrize("seed", range(30))
def test_advanced_indexing_matches_torch(seed, device):
    rng = np.random.default_rng(seed)
    shape = tuple(int(s) for s in rng.integers(1, 5, size=int(rng.integers(1, 4))))
    key = random_advanced_key(rng, shape)
    # lists of equal length broadcast together; give every list the same length
    lists = [k for k in key if isinstance(k, list)]
    n = min(len(k) for k in lists)
    key = tuple(k[:n] if isinstance(k, list) else k for k in key)
    check(
        lambda lib, a: a[key if lib is flow else _torch_key(key)] * 2,
        [shape],
        device=device,
        seed=seed,
    )


def test_bool_mask_indexing_and_assignment(device):
    a = np.arange(12.0).reshape(3, 4)
    mask = a % 3 == 0
    f = flow.tensor(a, device=device)
    np.testing.assert_array_equal(f[flow.tensor(mask, device=device)].cpu().numpy(), a[mask])
    np.testing.assert_array_equal(
        f[:, [True, False, True, False]].cpu().numpy(), a[:, [True, False, True, False]]
    )
    f[flow.tensor(mask, device=device)] = -1
    b = a.copy()
    b[mask] = -1
    np.testing.assert_array_equal(f.cpu().numpy(), b)


def test_advanced_setitem_and_index_put(device):
    x = flow.zeros(3, 4, device=device)
    x[[0, 2], 1:3] = flow.tensor([5.0, 6.0], device=device)
    t = torch.zeros(3, 4)
    t[[0, 2], 1:3] = torch.tensor([5.0, 6.0])
    np.testing.assert_array_equal(x.cpu().numpy(), t.numpy())
    y = flow.zeros(5, device=device)
    y.index_put_(
        (flow.tensor([1, 1, 3], device=device),),
        flow.tensor([1.0, 2.0, 3.0], device=device),
        accumulate=True,
    )
    np.testing.assert_array_equal(y.cpu().numpy(), [0, 3, 0, 3, 0])


def test_advanced_indexing_gradients_accumulate_repeats(device):
    x = flow.ones(4, 3, device=device, requires_grad=True)
    (x[[0, 0, 2], 1] * flow.tensor([1.0, 2.0, 3.0], device=device)).sum().backward()
    expected = np.zeros((4, 3))
    expected[0, 1] = 3
    expected[2, 1] = 3
    np.testing.assert_array_equal(x.grad.cpu().numpy(), expected)


def test_advanced_index_errors():
    x = flow.zeros(3, 4)
    with pytest.raises(IndexError, match="out of bounds"):
        x[[0, 3]]
    with pytest.raises(IndexError, match="long, int, byte or bool"):
        x[flow.tensor([0.5])]
    with pytest.raises(IndexError, match="broadcast"):
        x[[0, 1], [0, 1, 2]]


@pytest.mark.parametrize("seed", range(6))
def test_diagonal_unfold_as_strided_match_torch(seed, device):
    rng = np.random.default_rng(seed)
    shape = tuple(int(s) for s in rng.integers(2, 6, size=3))
    off = int(rng.integers(-2, 3))
    check(lambda lib, a: a.diagonal(off, 0, 2) * 2, [shape], device=device, seed=seed)
    check(lambda lib, a: lib.diagonal(a, -1, 1, 0), [shape], device=device, seed=seed)
    size = int(rng.integers(1, shape[1] + 1))
    step = int(rng.integers(1, 3))
    # overlapping windows: the gradient accumulates
    check(lambda lib, a: a.unfold(1, size, step) * 3, [shape], device=device, seed=seed)
    check(lambda lib, a: lib.as_strided(a, (2, 2), (1, 2), 1), [shape], device=device, seed=seed)


def test_strided_view_gradients_over_many_dims_match_torch(device):
    # the backward walks runs of the innermost dim with an odometer over the outer ones:
    # unfold twice (patches, overlapping both ways), as_strided with an offset and a zero
    # stride, windows along a leading dim, an empty result and a 0-dim input
    check(lambda lib, a: a.unfold(1, 3, 2).unfold(2, 4, 1) * 2, [(2, 9, 10)], device=device)
    check(lambda lib, a: lib.as_strided(a, (3, 2, 4), (5, 0, 2), 3), [(4, 6)], device=device)
    check(lambda lib, a: a.unfold(0, 2, 1) * 1.5, [(5, 3, 2)], device=device)
    check(lambda lib, a: a.unfold(1, 2, 1) * 2, [(0, 4)], device=device)
    check(lambda lib, a: a.unfold(0, 1, 1) * 2, [()], device=device)


def test_diagonal_of_strided_input_is_a_view_with_gradient(device):
    check(lambda lib, a: a.transpose(0, 1).diagonal() * 2, [(3, 4)], device=device)
    x = flow.zeros(3, 3, device=device)
    x.diagonal().fill_(1)
    np.testing.assert_array_equal(x.cpu().numpy(), np.eye(3))


def test_as_strided_out_of_bounds():
    with pytest.raises(RuntimeError, match="as_strided"):
        flow.zeros(4).as_strided((3,), (2,))


def test_bernoulli_randperm_multinomial(device):
    flow.manual_seed(0)
    p = flow.full((20000,), 0.3, device=device)
    b = flow.bernoulli(p).cpu().numpy()
    assert set(np.unique(b)) <= {0.0, 1.0} and abs(b.mean() - 0.3) < 0.02
    r = flow.randperm(50, device=device).cpu().numpy()
    assert sorted(r.tolist()) == list(range(50)) and r.tolist() != list(range(50))
    w = flow.tensor([0.0, 1.0, 3.0], device=device)
    m = flow.multinomial(w, 4000, replacement=True).cpu().numpy()
    assert (m != 0).all() and abs((m == 2).mean() - 0.75) < 0.03
    m2 = flow.multinomial(w, 2).cpu().numpy()
    assert sorted(m2.tolist()) == [1, 2]
    with pytest.raises(RuntimeError):
        flow.multinomial(w, 4)


def test_logspace_matches_torch():
    np.testing.assert_allclose(
        flow.logspace(-2, 2, 9).numpy(), torch.logspace(-2, 2, 9).numpy(), rtol=1e-6
    )
    np.testing.assert_allclose(
        flow.logspace(0, 3, 4, base=2).numpy(), torch.logspace(0, 3, 4, base=2).numpy(), rtol=1e-6
    )


def test_in_place_view_ops_like_torch():
    """squeeze_ / unsqueeze_ / as_strided_ change the tensor itself (same object, same memory)
    like PyTorch, carry autograd history on non-leaves, refuse grad-requiring leaves, and leave
    the ops queued before them reading the old layout."""
    for lib in (torch, flow):
        a = lib.arange(6.0).reshape(2, 1, 3)
        assert a.squeeze_(1) is a and tuple(a.shape) == (2, 3)
        assert a.unsqueeze_(-1) is a and tuple(a.shape) == (2, 3, 1)
    results = []
    for lib in (torch, flow):
        base = lib.arange(12.0).reshape(3, 4)
        row = base[1]
        row.unsqueeze_(0)  # a view keeps writing through to its base
        row.mul_(10)
        w = lib.arange(6.0)
        w.as_strided_((2, 2), (1, 2), 1)
        s = lib.zeros(2, 1, 1, 3)
        s.squeeze_()
        t = lib.zeros(2, 1, 1, 3)
        t.squeeze_((1, 2))
        results.append(
            [base.numpy(), tuple(row.shape), tuple(row.stride()), w.numpy(), s.shape, t.shape]
        )
    for got, want in zip(results[1], results[0]):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    # Gradients through the in-place views of non-leaves.
    grads = []
    for lib in (torch, flow):
        x = lib.arange(6.0).reshape(2, 1, 3).requires_grad_()
        y = x * 2
        y.squeeze_(1)
        z = x * 1
        z.as_strided_((2, 2), (1, 2))
        u = x.reshape(6) * 3
        u.unsqueeze_(1)
        ((y * lib.arange(3.0)).sum() + z.sum() + (u * u).sum()).backward()
        grads.append(x.grad.numpy())
        with pytest.raises(RuntimeError, match="leaf"):
            x.squeeze_(1)
        with lib.no_grad():
            leaf = lib.zeros(2, 1, requires_grad=True)
            leaf.squeeze_()
            assert tuple(leaf.shape) == (2,)
    np.testing.assert_allclose(grads[1], grads[0])
    for bad in [lambda t: t.squeeze_(3), lambda t: t.unsqueeze_(5)]:
        with pytest.raises(IndexError):
            bad(torch.zeros(2, 1, 1))
        with pytest.raises(IndexError):
            bad(flow.zeros(2, 1, 1))
    # Ops queued before the change read the layout they were queued with.
    x = flow.arange(6.0).reshape(2, 3)
    y = x + 1
    x.unsqueeze_(0)
    z = x * 2
    np.testing.assert_array_equal(y.numpy(), np.arange(6.0).reshape(2, 3) + 1)
    np.testing.assert_array_equal(z.numpy(), np.arange(6.0).reshape(1, 2, 3) * 2)


def _factorizations(n, rng, parts):
    shape = []
    for _ in range(parts - 1):
        divisors = [d for d in range(1, n + 1) if n % d == 0]
        d = int(rng.choice(divisors))
        shape.append(d)
        n //= d
    shape.append(n)
    rng.shuffle(shape)
    return shape


def test_view_of_strided_inputs_like_torch():
    # PyTorch's rule: a strided input views without a copy when each memory-contiguous run of its
    # dims is covered by whole dims of the new shape; otherwise RuntimeError.
    rng = np.random.default_rng(5)
    for _ in range(300):
        shape = [int(v) for v in rng.integers(1, 5, int(rng.integers(1, 5)))]
        base = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
        perm = [int(v) for v in rng.permutation(len(shape))]
        target = _factorizations(base.size, rng, int(rng.integers(1, 5)))
        narrow = rng.random() < 0.3
        res = []
        for lib in (flow, torch):
            x = lib.tensor(base, requires_grad=True)
            y = x.permute(*perm)
            if narrow and y.shape[0] > 1:
                y = y[:1]
            try:
                v = y.view(*target) if y.numel() == base.size else y.view(-1)
            except RuntimeError:
                res.append(None)
                continue
            (v * lib.arange(float(v.numel())).reshape(v.shape)).sum().backward()
            res.append((v.detach().numpy(), x.grad.numpy()))
        if res[1] is None:
            assert res[0] is None, (shape, perm, target)
            continue
        assert res[0] is not None, (shape, perm, target)
        np.testing.assert_array_equal(res[0][0], res[1][0])
        np.testing.assert_array_equal(res[0][1], res[1][1])


def test_dims_past_a_0d_or_1d_tensor_raise_index_error():
    s = flow.tensor(1.0)
    for f in (
        lambda: s.squeeze(1),
        lambda: s.transpose(0, 1),
        lambda: s.flatten(1),
        lambda: s.squeeze(-2),
        lambda: flow.diagonal(flow.ones(3)),
        lambda: flow.diagonal(s),
    ):
        with pytest.raises(IndexError):
            f()
    assert s.transpose(0, -1).shape == () and s.squeeze(0).shape == ()
    assert s.flatten(0, -1).shape == (1,)
