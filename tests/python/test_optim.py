"""Optimizers and schedulers against PyTorch over 100 steps with identical parameters and
gradients (float64, so differences are the algorithms', not rounding)."""

import math

import numpy as np
import pytest
import torch

import oneflow as flow

OPTIMIZERS = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.05, "momentum": 0.9, "dampening": 0.1, "weight_decay": 0.01}),
    ("SGD", {"lr": 0.05, "momentum": 0.9, "nesterov": True, "maximize": True}),
    ("Adam", {"lr": 0.01}),
    ("Adam", {"lr": 0.01, "betas": (0.8, 0.99), "weight_decay": 0.1, "amsgrad": True}),
    ("AdamW", {"lr": 0.01, "weight_decay": 0.05}),
    ("AdamW", {"lr": 0.01, "amsgrad": True}),
    ("RMSprop", {"lr": 0.01}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.9, "centered": True, "weight_decay": 0.01}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.01, "initial_accumulator_value": 0.1}),
    ("Adadelta", {"lr": 1.0, "rho": 0.8, "weight_decay": 0.01}),
]


def _run(lib, name, kwargs, steps=100, groups=False):
    rng = np.random.default_rng(0)
    w0, b0 = rng.standard_normal((4, 3)), rng.standard_normal(4)
    x = lib.tensor(rng.standard_normal((16, 3)))
    y = lib.tensor(rng.standard_normal((16, 4)))
    w = lib.nn.Parameter(lib.tensor(w0))
    b = lib.nn.Parameter(lib.tensor(b0))
    params = [{"params": [w]}, {"params": [b], "lr": kwargs["lr"] * 0.5}] if groups else [w, b]
    opt = getattr(lib.optim, name)(params, **kwargs)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = ((x @ w.T + b - y) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return np.array(losses), w.detach().numpy(), b.detach().numpy(), opt


@pytest.mark.parametrize("case", range(len(OPTIMIZERS)))
def test_optimizer_matches_torch(case):
    name, kwargs = OPTIMIZERS[case]
    fl, fw, fb, _ = _run(flow, name, kwargs)
    tl, tw, tb, _ = _run(torch, name, kwargs)
    np.testing.assert_allclose(fl, tl, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(fw, tw, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(fb, tb, rtol=1e-9, atol=1e-12)


def test_param_groups_and_state_dict():
    fl, fw, _, fopt = _run(flow, "Adam", {"lr": 0.01}, steps=30, groups=True)
    tl, tw, _, topt = _run(torch, "Adam", {"lr": 0.01}, steps=30, groups=True)
    np.testing.assert_allclose(fl, tl, rtol=1e-9)
    sd = fopt.state_dict()
    assert [g["lr"] for g in sd["param_groups"]] == [0.01, 0.005]
    assert sorted(sd["state"].keys()) == [0, 1]
    assert set(sd["state"][0]) == set(topt.state_dict()["state"][0])
    # Resume into a fresh optimizer: the next steps match an uninterrupted run.
    w = flow.nn.Parameter(flow.zeros(4, 3, dtype=flow.float64))
    b = flow.nn.Parameter(flow.zeros(4, dtype=flow.float64))
    fresh = flow.optim.Adam([{"params": [w]}, {"params": [b], "lr": 0.005}], lr=0.01)
    fresh.load_state_dict(sd)
    assert (
        fresh.state[w]["exp_avg"].numpy().tolist()
        == fopt.state[fopt.param_groups[0]["params"][0]]["exp_avg"].numpy().tolist()
    )


def test_optimizer_errors():
    p = flow.nn.Parameter(flow.ones(2))
    with pytest.raises(ValueError, match="Invalid learning rate"):
        flow.optim.SGD([p], lr=-1)
    with pytest.raises(ValueError, match="empty parameter list"):
        flow.optim.Adam([])
    with pytest.raises(ValueError, match="more than one parameter group"):
        flow.optim.SGD([{"params": [p]}, {"params": [p]}], lr=0.1)
    with pytest.raises(ValueError, match="Nesterov"):
        flow.optim.SGD([p], lr=0.1, nesterov=True)


def _fit(name, kwargs):
    rng = np.random.default_rng(0)
    x = flow.tensor(rng.standard_normal((32, 3)))
    y = x @ flow.tensor([[1.0], [-2.0], [0.5]], dtype=flow.float64) + 0.3
    w = flow.nn.Parameter(flow.zeros(3, 1, dtype=flow.float64))
    b = flow.nn.Parameter(flow.zeros(1, dtype=flow.float64))
    opt = getattr(flow.optim, name)([w, b], **kwargs)

    def closure():
        opt.zero_grad()
        loss = ((x @ w + b - y) ** 2).mean()
        loss.backward()
        return loss

    first = closure().item()
    for _ in range(50):
        opt.step(closure)
    return first, closure().item()


@pytest.mark.parametrize("name,kwargs", [("LAMB", {"lr": 0.1}), ("LBFGS", {"lr": 0.5})])
def test_lamb_and_lbfgs_reduce_the_loss(name, kwargs):
    first, last = _fit(name, kwargs)
    assert last < first * 0.1, name


def test_lbfgs_matches_torch_without_line_search():
    def run(lib):
        rng = np.random.default_rng(0)
        x = lib.tensor(rng.standard_normal((20, 3)))
        y = lib.tensor(rng.standard_normal((20, 1)))
        w = lib.nn.Parameter(lib.tensor(rng.standard_normal((3, 1))))
        opt = lib.optim.LBFGS([w], lr=0.8, max_iter=5, history_size=4)
        losses = []

        def closure():
            opt.zero_grad()
            loss = ((x @ w - y) ** 2).mean() + (w**4).sum() * 0.01
            loss.backward()
            return loss

        for _ in range(6):
            losses.append(float(opt.step(closure)))
        return np.array(losses), w.detach().numpy()

    fl, fw = run(flow)
    tl, tw = run(torch)
    np.testing.assert_allclose(fl, tl, rtol=1e-8)
    np.testing.assert_allclose(fw, tw, rtol=1e-8)


SCHEDULERS = [
    ("StepLR", {"step_size": 7, "gamma": 0.5}),
    ("MultiStepLR", {"milestones": [10, 30, 31], "gamma": 0.3}),
    ("ExponentialLR", {"gamma": 0.97}),
    ("CosineAnnealingLR", {"T_max": 30, "eta_min": 0.001}),
    ("CosineAnnealingWarmRestarts", {"T_0": 10, "T_mult": 2, "eta_min": 0.01}),
    ("LambdaLR", {"lr_lambda": lambda e: 0.95**e}),
    ("LinearLR", {"start_factor": 0.2, "total_iters": 20}),
    ("ConstantLR", {"factor": 0.5, "total_iters": 10}),
    ("PolynomialLR", {"total_iters": 50, "power": 2.0}),
    ("OneCycleLR", {"max_lr": 1.0, "total_steps": 101}),
    (
        "OneCycleLR",
        {"max_lr": 0.5, "total_steps": 101, "three_phase": True, "anneal_strategy": "linear"},
    ),
]


def _lrs(lib, name, kwargs, momentum=0.9, steps=100):
    p = lib.nn.Parameter(lib.zeros(1))
    opt = lib.optim.SGD([p], lr=0.1, momentum=momentum)
    sched = getattr(lib.optim.lr_scheduler, name)(opt, **kwargs)
    out = []
    for _ in range(steps):
        opt.step()
        sched.step()
        out.append(opt.param_groups[0]["lr"])
    return out, [g.get("momentum") for g in opt.param_groups]


@pytest.mark.parametrize("case", range(len(SCHEDULERS)))
def test_scheduler_matches_torch(case):
    name, kwargs = SCHEDULERS[case]
    f, fm = _lrs(flow, name, kwargs)
    t, tm = _lrs(torch, name, kwargs)
    np.testing.assert_allclose(f, t, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(fm, tm, rtol=1e-12)


def test_sequential_chained_plateau():
    def run(lib, kind):
        p = lib.nn.Parameter(lib.zeros(1))
        opt = lib.optim.SGD([p], lr=1.0)
        S = lib.optim.lr_scheduler
        if kind == "sequential":
            s = S.SequentialLR(
                opt, [S.LinearLR(opt, 0.1, 1.0, 5), S.ExponentialLR(opt, 0.9)], milestones=[5]
            )
        elif kind == "chained":
            s = S.ChainedScheduler([S.ConstantLR(opt, 0.5, 4), S.ExponentialLR(opt, 0.9)])
        else:
            s = S.ReduceLROnPlateau(opt, factor=0.5, patience=2, cooldown=1)
        out = []
        for i in range(40):
            opt.step()
            if kind == "plateau":
                s.step(1.0 if i < 10 else 1.0 - 0.001 * (i % 3))
            else:
                s.step()
            out.append(opt.param_groups[0]["lr"])
        return out

    for kind in ["sequential", "chained", "plateau"]:
        np.testing.assert_allclose(run(flow, kind), run(torch, kind), rtol=1e-12, err_msg=kind)


def test_warmup_lr():
    p = flow.nn.Parameter(flow.zeros(1))
    opt = flow.optim.SGD([p], lr=1.0)
    cos = flow.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=20)
    s = flow.optim.lr_scheduler.WarmupLR(cos, warmup_factor=0.1, warmup_iters=5)
    lrs = [opt.param_groups[0]["lr"]]
    for _ in range(10):
        s.step()
        lrs.append(opt.param_groups[0]["lr"])
    expect = [
        (0.1 + 0.9 * t / 5 if t < 5 else 1.0) * (1 + math.cos(math.pi * t / 20)) / 2
        for t in range(11)
    ]
    np.testing.assert_allclose(lrs, expect, rtol=1e-12)
    sd = s.state_dict()
    assert sd["last_epoch"] == 10 and "optimizer" not in sd


def test_cosine_decay_lr():
    """OneFlow's CosineDecayLR: cosine from the base rate to base * alpha over decay_steps, then
    held at base * alpha; an explicit step takes the closed form; state_dict round-trips."""
    p = flow.nn.Parameter(flow.zeros(1))
    opt = flow.optim.SGD([p], lr=0.5)
    s = flow.optim.lr_scheduler.CosineDecayLR(opt, decay_steps=8, alpha=0.1)
    lrs = [opt.param_groups[0]["lr"]]
    for _ in range(12):
        opt.step()
        s.step()
        lrs.append(opt.param_groups[0]["lr"])
    expect = [
        0.5 * ((0.9 * 0.5 * (1 + math.cos(math.pi * t / 8)) + 0.1) if t < 8 else 0.1)
        for t in range(13)
    ]
    np.testing.assert_allclose(lrs, expect, rtol=1e-12)
    np.testing.assert_allclose(s.get_last_lr(), [0.05], rtol=1e-12)
    s.step(2)
    np.testing.assert_allclose(opt.param_groups[0]["lr"], expect[2], rtol=1e-12)
    sd = s.state_dict()
    again = flow.optim.lr_scheduler.CosineDecayLR(opt, decay_steps=3)
    again.load_state_dict(sd)
    assert again.decay_steps == 8 and again.alpha == 0.1
    with pytest.raises(ValueError):
        flow.optim.lr_scheduler.CosineDecayLR(opt, decay_steps=0)


@pytest.mark.parametrize("opt_name", ["Adam", "AdamW"])
def test_adam_steps_never_read_the_step_tensor_back(opt_name, monkeypatch):
    """The step counter stays a tensor (as in PyTorch's state dict) but its value is kept on the
    host: after the first step no `item()` waits for the queue. A loaded state dict (new step
    tensors, another count) and zero_grad(set_to_none=False) (in place) keep matching PyTorch."""
    rng = np.random.default_rng(3)
    w0, x0 = rng.standard_normal((5, 4)).astype(np.float32), rng.standard_normal((8, 4))
    x0 = x0.astype(np.float32)

    def make(lib):
        w = lib.nn.Parameter(lib.tensor(w0))
        return w, getattr(lib.optim, opt_name)([w], lr=0.1, weight_decay=0.01)

    def steps(lib, w, opt, n):
        for _ in range(n):
            opt.zero_grad(set_to_none=False)
            (lib.tensor(x0) @ w.t()).square().mean().backward()
            opt.step()

    calls = []
    original = flow.Tensor.item
    monkeypatch.setattr(flow.Tensor, "item", lambda t: calls.append(1) or original(t))
    fw, fopt = make(flow)
    tw, topt = make(torch)
    steps(flow, fw, fopt, 1)
    first = len(calls)
    steps(flow, fw, fopt, 4)
    assert len(calls) == first  # no reads after the first step
    grad = fw.grad
    steps(flow, fw, fopt, 1)
    assert fw.grad is grad  # zero_grad(set_to_none=False) zeroes in place
    steps(torch, tw, topt, 6)
    np.testing.assert_allclose(fw.detach().numpy(), tw.detach().numpy(), rtol=1e-5, atol=1e-6)
    # A state dict from 6 steps loaded into an optimizer that took 2: the count restarts at 6.
    sd = fopt.state_dict()
    fw2, fopt2 = make(flow)
    steps(flow, fw2, fopt2, 2)
    fopt2.load_state_dict(sd)
    with flow.no_grad():
        fw2.copy_(fw)
    steps(flow, fw2, fopt2, 3)
    steps(torch, tw, topt, 3)
    np.testing.assert_allclose(fw2.detach().numpy(), tw.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_clip_grad_by_param_group_like_torch_clip_grad_norm():
    # OneFlow's param-group clipping: each group with clip_grad_max_norm is clipped on its own.
    rng = np.random.default_rng(5)
    values = [rng.standard_normal(s) * 3 for s in ((4, 3), (4,), (2, 2), (5,))]
    grads = [rng.standard_normal(v.shape) * 4 for v in values]
    ps = [flow.tensor(v, requires_grad=True) for v in values]
    for p, g in zip(ps, grads):
        p.grad = flow.tensor(g)
    opt = flow.optim.SGD(
        [
            {"params": ps[:2], "clip_grad_max_norm": 0.5},
            {"params": ps[2:3], "clip_grad_max_norm": 1.0, "clip_grad_norm_type": math.inf},
            {"params": ps[3:]},
        ],
        lr=0.1,
    )
    opt.clip_grad()
    ts = [torch.tensor(v, requires_grad=True) for v in values]
    for t, g in zip(ts, grads):
        t.grad = torch.tensor(g)
    torch.nn.utils.clip_grad_norm_(ts[:2], 0.5)
    torch.nn.utils.clip_grad_norm_(ts[2:3], 1.0, norm_type=math.inf)
    for p, t in zip(ps, ts):
        np.testing.assert_allclose(p.grad.numpy(), t.grad.numpy(), rtol=1e-12)
    assert not np.allclose(ps[0].grad.numpy(), grads[0])  # the clip did something
    np.testing.assert_array_equal(ps[3].grad.numpy(), grads[3])  # no clip set: untouched
    ps[0].grad = flow.tensor(np.full((4, 3), np.inf))
    with pytest.raises(RuntimeError, match="non-finite"):
        opt.clip_grad(error_if_nonfinite=True)


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"weight_decay": 0.01},
        {"momentum": 0.9},
        {"momentum": 0.9, "dampening": 0.1, "weight_decay": 0.01},
        {"momentum": 0.9, "nesterov": True},
        {"momentum": 0.8, "nesterov": True, "weight_decay": 0.02},
    ],
)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fused_sgd_forms_match_torch_over_blocks(kwargs, dtype):
    # Parameters large enough for several blocks of the fused CPU kernel and its threads, one
    # odd size for the tails; four steps cover the momentum buffer's first and later steps.
    rng = np.random.default_rng(1)
    shapes = [(300, 257), (1000,), (3,)]
    values = [rng.standard_normal(s) for s in shapes]
    grads = [[rng.standard_normal(s) for s in shapes] for _ in range(4)]
    results = {}
    for lib in (flow, torch):
        params = [lib.nn.Parameter(lib.tensor(v, dtype=getattr(lib, dtype))) for v in values]
        opt = lib.optim.SGD(params, lr=0.05, **kwargs)
        for step in grads:
            for p, g in zip(params, step):
                p.grad = lib.tensor(g, dtype=getattr(lib, dtype))
            opt.step()
        results[lib.__name__] = [p.detach().numpy() for p in params]
    tol = 1e-12 if dtype == "float64" else 2e-6
    for got, want in zip(results["oneflow"], results["torch"]):
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
