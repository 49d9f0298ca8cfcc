"""Helpers of the flow._C compatibility tests (test_c_compat.py, test_c_compat_ops.py)."""

import numpy as np
import torch

import oneflow as flow
from oneflow.framework import c_compat

c_compat.install()
C = flow._C

RNG = np.random.default_rng(0)


def randn(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def close(f, t, rtol=1e-5, atol=1e-5):
    if isinstance(t, torch.Tensor):
        t = t.detach().numpy()
    got = f.detach().cpu().numpy() if isinstance(f, flow.Tensor) else np.asarray(f)
    assert got.shape == np.shape(t), (got.shape, np.shape(t))
    np.testing.assert_allclose(
        np.asarray(got, dtype=np.float64), np.asarray(t, dtype=np.float64), rtol=rtol, atol=atol
    )


def same(f, expect):
    got = f.detach().cpu().numpy()
    np.testing.assert_array_equal(got, np.asarray(expect))


def ft(a, device, grad=False):
    return flow.tensor(np.asarray(a), device=device, requires_grad=grad)


def tt(a, grad=False):
    return torch.tensor(np.asarray(a), requires_grad=grad)


def compare(f_fn, t_fn, arrays, device, grad=(), rtol=1e-5, atol=1e-5):
    """Runs f_fn on oneflow tensors and t_fn on torch tensors made from `arrays`; compares the
    outputs (a tensor or a tuple of them) and the gradients of the inputs listed in `grad`."""
    fs = [ft(a, device, i in grad) for i, a in enumerate(arrays)]
    ts = [tt(a, i in grad) for i, a in enumerate(arrays)]
    fo, to = f_fn(*fs), t_fn(*ts)
    if not isinstance(to, tuple):
        fo, to = (fo,), (to,)
    assert len(fo) == len(to)
    for a, b in zip(fo, to):
        close(a, b, rtol, atol)
    if grad:
        f_loss, t_loss = 0, 0
        for a, b in zip(fo, to):
            g = randn(*b.shape)
            f_loss = f_loss + (a * ft(g, device)).sum()
            t_loss = t_loss + (b * tt(g)).sum()
        f_loss.backward()
        t_loss.backward()
        for i in grad:
            close(fs[i].grad, ts[i].grad, rtol, atol)


# --------------------------------------------------------------------------- install
