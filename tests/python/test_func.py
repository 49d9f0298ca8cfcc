"""oneflow.func (grad, grad_and_value, vjp, jvp, jacrev, jacfwd, hessian, vmap,
functional_call) and the nn.utils additions (stateless.functional_call, fuse_*_bn_eval,
get_total_norm, clip_grads_with_norm_, skip_init) against PyTorch."""

import numpy as np
import pytest
import torch

import oneflow as flow


def _t(lib, a, grad=False):
    t = lib.tensor(a)
    return t.requires_grad_() if grad else t


def _close(a, b, rtol=1e-9, atol=1e-12):
    if isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _close(x, y, rtol, atol)
        return
    if isinstance(a, dict):
        assert list(a) == list(b)
        for k in a:
            _close(a[k], b[k], rtol, atol)
        return
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=rtol, atol=atol)


def _fn(lib):
    def f(x, y):
        return (x.sin() * y).sum() + (x * x * y.exp()).sum()

    return f


def _transforms(lib, x, y):
    f = _fn(lib)
    fx, fy = _t(lib, x), _t(lib, y)
    out = {}
    out["grad"] = lib.func.grad(f)(fx, fy)
    out["grad01"] = lib.func.grad(f, argnums=(0, 1))(fx, fy)
    out["gv"] = lib.func.grad_and_value(f, argnums=1)(fx, fy)
    out["aux"] = lib.func.grad(lambda a, b: (f(a, b), a * 2), has_aux=True)(fx, fy)
    out["gg"] = lib.func.grad(lambda a, b: lib.func.grad(f)(a, b).sum())(fx, fy)
    out["jacrev"] = lib.func.jacrev(lambda a: a.sin() * a)(fx)
    out["jacfwd"] = lib.func.jacfwd(lambda a, b: a * b.exp(), argnums=(0, 1))(fx, fy)
    out["hessian"] = lib.func.hessian(lambda a: f(a, fy))(fx)
    out["jvp"] = lib.func.jvp(lambda a: (a.sin() * a, a.exp()), (fx,), (fy,))
    value, vjp_fn = lib.func.vjp(lambda a, b: a * b.cos(), fx, fy)
    out["vjp"] = (value, vjp_fn(lib.ones(4, dtype=lib.float64)))
    d = {"w": fx, "b": fy}
    out["tree"] = lib.func.grad(lambda p: (p["w"] * p["b"]).sum())(d)
    return out


def test_grad_and_friends_like_torch():
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(4), rng.standard_normal(4)
    got, want = _transforms(flow, x, y), _transforms(torch, x, y)
    for k in want:
        _close(got[k], want[k])


def test_per_sample_gradients_with_vmap_grad_and_functional_call():
    torch.manual_seed(1)
    tm = torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.Tanh(), torch.nn.Linear(5, 2))
    fm = flow.nn.Sequential(flow.nn.Linear(3, 5), flow.nn.Tanh(), flow.nn.Linear(5, 2))
    fm.load_state_dict({k: v.detach().numpy() for k, v in tm.state_dict().items()})
    rng = np.random.default_rng(2)
    x, y = rng.standard_normal((6, 3)).astype(np.float32), rng.standard_normal((6, 2))
    y = y.astype(np.float32)
    results = []
    for lib, m in ((flow, fm), (torch, tm)):
        params = {k: v.detach() for k, v in m.named_parameters()}

        def loss(p, xi, yi, lib=lib, m=m):
            out = lib.func.functional_call(m, p, (xi.unsqueeze(0),))
            return ((out - yi.unsqueeze(0)) ** 2).sum()

        per_sample = lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(
            params, lib.tensor(x), lib.tensor(y)
        )
        results.append(per_sample)
    for k in results[1]:
        assert (
            tuple(results[0][k].shape)
            == tuple(results[1][k].shape)
            == (6,) + tuple(dict(tm.named_parameters())[k].shape)
        )
        _close(results[0][k], results[1][k], rtol=1e-4, atol=1e-6)
    # the module keeps its own parameters afterwards
    for k, v in tm.state_dict().items():
        np.testing.assert_array_equal(fm.state_dict()[k].numpy(), v.numpy())


def test_vmap_dims_nesting_and_errors_like_torch():
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((4, 3)), rng.standard_normal((3, 4))
    res = {}
    for lib in (flow, torch):
        fa, fb = _t(lib, a), _t(lib, b)
        out = {}
        out["dims"] = lib.func.vmap(lambda u, v: u * v, in_dims=(0, 1), out_dims=1)(fa, fb)
        out["none"] = lib.func.vmap(lambda u, v: u + v, in_dims=(0, None))(fa, fb[:, 0])
        out["nested"] = lib.func.vmap(lib.func.vmap(lambda u: u * 2))(fa)
        out["tuple"] = lib.func.vmap(lambda u: (u.sum(), u * 3))(fa)
        out["dot"] = lib.func.vmap(lib.func.vmap(lambda u, v: (u * v).sum(), (None, 1)), (0, None))(
            fa, fb
        )
        res[lib.__name__] = out
    for k in res["torch"]:
        _close(res["oneflow"][k], res["torch"][k])
    with pytest.raises(ValueError, match="same size in the mapped dimension"):
        flow.func.vmap(lambda u, v: u + v)(flow.ones(3), flow.ones(4))
    with pytest.raises(ValueError, match="in_dims"):
        flow.func.vmap(lambda u, v: u + v, in_dims=(0,))(flow.ones(3), flow.ones(3))
    with pytest.raises(RuntimeError, match="scalar"):
        flow.func.grad(lambda u: u * 2)(flow.ones(3))


def test_functional_call_ties_strictness_and_buffers_like_torch():
    for lib in (flow, torch):
        m = lib.nn.Sequential(lib.nn.Linear(2, 2, bias=False), lib.nn.BatchNorm1d(2))
        m[0].weight = lib.nn.Parameter(lib.eye(2))
        x = lib.tensor([[1.0, 2.0], [3.0, 5.0]])
        w = lib.full((2, 2), 2.0)
        m.eval()
        out = lib.func.functional_call(m, {"0.weight": w}, (x,))
        np.testing.assert_allclose(
            out.detach().numpy(), (x @ w.t()).numpy() / np.sqrt(1 + 1e-5), rtol=1e-5
        )
        assert float(m[0].weight.sum()) == 2.0  # restored
        out = lib.func.functional_call(m, ({"0.weight": w}, {"1.running_mean": lib.ones(2)}), x)
        with pytest.raises(RuntimeError, match="Missing key"):
            lib.func.functional_call(m, {"0.weight": w}, (x,), strict=True)
        with pytest.raises(ValueError, match="multiple dictionaries"):
            lib.func.functional_call(m, ({"0.weight": w}, {"0.weight": w}), (x,))
    flow_tied = flow.nn.Module()
    flow_tied.a = flow.nn.Linear(2, 2, bias=False)
    flow_tied.b = flow_tied.a
    flow_tied.forward = lambda x: flow_tied.a(x) + flow_tied.b(x)
    # tied weights: the one name given replaces both
    x = flow.tensor([[1.0, 2.0], [3.0, 5.0]])
    out = flow.nn.utils.stateless.functional_call(flow_tied, {"a.weight": flow.zeros(2, 2)}, (x,))
    assert float(out.abs().sum()) == 0.0


@pytest.mark.parametrize("transpose", [False, True])
def test_fuse_conv_and_linear_with_batch_norm_like_torch(transpose):
    torch.manual_seed(4)
    conv_cls = "ConvTranspose2d" if transpose else "Conv2d"
    tconv, fconv = getattr(torch.nn, conv_cls)(3, 4, 3), getattr(flow.nn, conv_cls)(3, 4, 3)
    tbn, fbn = torch.nn.BatchNorm2d(4), flow.nn.BatchNorm2d(4)
    with torch.no_grad():
        tbn.running_mean.uniform_(-1, 1)
        tbn.running_var.uniform_(0.5, 2)
        tbn.weight.uniform_(0.5, 2)
        tbn.bias.uniform_(-1, 1)
    for f, t in ((fconv, tconv), (fbn, tbn)):
        f.load_state_dict({k: v.detach().numpy() for k, v in t.state_dict().items()})
        f.eval()
        t.eval()
    tf = torch.nn.utils.fuse_conv_bn_eval(tconv, tbn, transpose=transpose)
    ff = flow.nn.utils.fuse_conv_bn_eval(fconv, fbn, transpose=transpose)
    x = np.random.default_rng(5).standard_normal((2, 3, 6, 6)).astype(np.float32)
    np.testing.assert_allclose(
        ff(flow.tensor(x)).detach().numpy(),
        tf(torch.tensor(x)).detach().numpy(),
        rtol=1e-4,
        atol=1e-5,
    )
    np.testing.assert_allclose(
        ff(flow.tensor(x)).detach().numpy(),
        fbn(fconv(flow.tensor(x))).detach().numpy(),
        rtol=1e-4,
        atol=1e-5,
    )
    with pytest.raises(AssertionError, match="Fusion only for eval"):
        flow.nn.utils.fuse_conv_bn_eval(fconv.train(), fbn)
    tl, fl = torch.nn.Linear(3, 4), flow.nn.Linear(3, 4)
    tb1, fb1 = torch.nn.BatchNorm1d(4), flow.nn.BatchNorm1d(4)
    with torch.no_grad():
        tb1.running_mean.uniform_(-1, 1)
        tb1.running_var.uniform_(0.5, 2)
    for f, t in ((fl, tl), (fb1, tb1)):
        f.load_state_dict({k: v.detach().numpy() for k, v in t.state_dict().items()})
        f.eval()
        t.eval()
    xl = np.random.default_rng(6).standard_normal((5, 3)).astype(np.float32)
    np.testing.assert_allclose(
        flow.nn.utils.fuse_linear_bn_eval(fl, fb1)(flow.tensor(xl)).detach().numpy(),
        torch.nn.utils.fuse_linear_bn_eval(tl, tb1)(torch.tensor(xl)).detach().numpy(),
        rtol=1e-4,
        atol=1e-5,
    )


def test_total_norm_clipping_and_skip_init_like_torch():
    rng = np.random.default_rng(7)
    grads = [rng.standard_normal((3, 4)), rng.standard_normal(5)]
    res = []
    for lib in (flow, torch):
        ps = [lib.nn.Parameter(lib.zeros(*g.shape, dtype=lib.float64)) for g in grads]
        for p, g in zip(ps, grads):
            p.grad = lib.tensor(g)
        norms = [
            lib.nn.utils.get_total_norm([p.grad for p in ps], nt) for nt in (2.0, 1.0, float("inf"))
        ]
        lib.nn.utils.clip_grads_with_norm_(ps, 1.0, norms[0])
        res.append(norms + [p.grad for p in ps])
    _close(res[0], res[1])
    with pytest.warns(FutureWarning, match="deprecated"):
        flow.nn.utils.clip_grad_norm([flow.nn.Parameter(flow.ones(2))], 1.0)
    m = flow.nn.utils.skip_init(flow.nn.Linear, 3, 4)
    assert isinstance(m, flow.nn.Linear) and tuple(m.weight.shape) == (4, 3)

    class NoDevice(flow.nn.Module):
        def __init__(self):
            super().__init__()

    with pytest.raises(RuntimeError, match="device"):
        flow.nn.utils.skip_init(NoDevice)
