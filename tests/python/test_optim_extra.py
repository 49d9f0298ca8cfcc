"""NAdam, RAdam, Adamax, ASGD and Rprop against torch.optim: parameters compared after every
step (gradients from the same loss in both frameworks), state_dict contents and resumption,
argument checks, parameter groups, parameters without gradients and lr schedulers."""

import numpy as np
import pytest
import torch

import oneflow as flow

CASES = [
    ("NAdam", {}),
    ("NAdam", {"lr": 0.01, "weight_decay": 0.1}),
    (
        "NAdam",
        {
            "lr": 0.01,
            "betas": (0.8, 0.95),
            "weight_decay": 0.1,
            "momentum_decay": 0.01,
            "decoupled_weight_decay": True,
        },
    ),
    ("NAdam", {"lr": 0.01, "maximize": True}),
    # beta2 = 0.9 passes the rectification threshold (rho_t > 5) at step 3, the default at
    # step 6: both branches run within the steps below.
    ("RAdam", {}),
    ("RAdam", {"lr": 0.01, "betas": (0.5, 0.9), "weight_decay": 0.05}),
    ("RAdam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("RAdam", {"lr": 0.01, "maximize": True}),
    ("Adamax", {}),
    ("Adamax", {"lr": 0.01, "betas": (0.5, 0.9), "eps": 1e-3, "weight_decay": 0.1}),
    ("Adamax", {"lr": 0.01, "maximize": True}),
    ("ASGD", {}),
    # A small t0 starts the averaging (mu != 1) within the run.
    ("ASGD", {"lr": 0.05, "lambd": 1e-2, "alpha": 0.5, "t0": 3, "weight_decay": 0.01}),
    ("ASGD", {"lr": 0.05, "t0": 0, "maximize": True}),
    ("Rprop", {}),
    ("Rprop", {"lr": 0.05, "etas": (0.3, 1.5), "step_sizes": (1e-3, 0.1)}),
    ("Rprop", {"lr": 0.05, "maximize": True}),
]

# Tolerances on parameters after each step: float64 runs differ only by rounding order; float32
# by the rounding of the same sequence of operations.
TOL = {
    np.float64: dict(rtol=1e-10, atol=1e-12),
    np.float32: dict(rtol=1e-5, atol=1e-6),
}

SHAPES = [(4, 3), (5,), (2, 3, 2)]
STEPS = 12


def _case_id(case):
    name, kwargs = case
    return name + "-" + "-".join(f"{k}={v}" for k, v in kwargs.items())


def _init(dtype, seed=0):
    rng = np.random.default_rng(seed)
    values = [rng.standard_normal(s).astype(dtype) for s in SHAPES]
    coeffs = [rng.standard_normal(s).astype(dtype) for s in SHAPES]
    frozen = rng.standard_normal((3,)).astype(dtype)
    return values, coeffs, frozen


class _Run:
    """One framework's parameters, optimizer and loss; `frozen` never gets a gradient."""

    def __init__(self, lib, name, kwargs, dtype, groups=False, device="cpu", values=None):
        init, coeffs, frozen = _init(dtype)
        values = init if values is None else values
        self.lib = lib

        def param(a):
            t = lib.tensor(a)
            if lib is flow:
                t = t.to(device)
            return lib.nn.Parameter(t)

        self.params = [param(v) for v in values]
        self.coeffs = [lib.tensor(c).to(device) if lib is flow else lib.tensor(c) for c in coeffs]
        self.frozen = param(frozen)
        if groups:
            # The second group overrides the learning rate (and weight decay where there is one).
            extra = {"lr": kwargs.get("lr", 0.01) * 0.5}
            if name != "Rprop":
                extra["weight_decay"] = 0.02
            spec = [
                {"params": self.params[:1] + [self.frozen]},
                dict(params=self.params[1:], **extra),
            ]
        else:
            spec = self.params + [self.frozen]
        self.opt = getattr(lib.optim, name)(spec, **kwargs)

    def step(self):
        self.opt.zero_grad()
        # A loss whose gradient depends on the parameters, so a difference would grow.
        loss = sum(
            ((p * c).sin() + 0.5 * p * p * c).sum() for p, c in zip(self.params, self.coeffs)
        )
        loss.backward()
        self.opt.step()

    def values(self):
        return [p.detach().cpu().numpy() for p in self.params]


def _assert_params_close(fl, th, dtype, what):
    for i, (a, b) in enumerate(zip(fl.values(), th.values())):
        np.testing.assert_allclose(a, b, err_msg=f"{what}, parameter {i}", **TOL[dtype])


def _assert_state_close(fl, th, dtype, what):
    """Every per-parameter state value (ASGD's average "ax" included, which the parameters
    never read back)."""
    for i, (fp, tp) in enumerate(zip(fl.params, th.params)):
        fstate, tstate = fl.opt.state[fp], th.opt.state[tp]
        assert set(fstate) == set(tstate), f"{what}, parameter {i}"
        for key, tv in tstate.items():
            np.testing.assert_allclose(
                _to_numpy(fstate[key]),
                _to_numpy(tv),
                err_msg=f"{what}, parameter {i}, state {key}",
                **TOL[dtype],
            )


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("groups", [False, True])
@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_matches_torch_every_step(case, groups, dtype, device):
    name, kwargs = case
    fl = _Run(flow, name, kwargs, dtype, groups=groups, device=device)
    th = _Run(torch, name, kwargs, dtype, groups=groups)
    frozen0 = fl.frozen.detach().cpu().numpy().copy()
    for step in range(STEPS):
        fl.step()
        th.step()
        _assert_params_close(fl, th, dtype, f"after step {step + 1}")
        _assert_state_close(fl, th, dtype, f"after step {step + 1}")
    # A parameter without a gradient is neither updated nor given state.
    assert fl.frozen.grad is None
    np.testing.assert_array_equal(fl.frozen.detach().cpu().numpy(), frozen0)
    assert fl.frozen not in fl.opt.state and th.frozen not in th.opt.state


def _to_numpy(v):
    if isinstance(v, (flow.Tensor, torch.Tensor)):
        return v.detach().cpu().numpy()
    return v


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_state_dict_contents(case):
    name, kwargs = case
    fl = _Run(flow, name, kwargs, np.float64, groups=True)
    th = _Run(torch, name, kwargs, np.float64, groups=True)
    for _ in range(5):
        fl.step()
        th.step()
    fsd, tsd = fl.opt.state_dict(), th.opt.state_dict()
    assert sorted(fsd["state"]) == sorted(tsd["state"])
    for k, tstate in tsd["state"].items():
        assert set(fsd["state"][k]) == set(tstate), f"state names of parameter {k}"
        for key, tv in tstate.items():
            fv = fsd["state"][k][key]
            assert isinstance(fv, flow.Tensor) == isinstance(tv, torch.Tensor), key
            # Scalar state (step, mu_product, eta, mu) is a float32 tensor in both, whichever
            # the parameter's dtype.
            if isinstance(tv, torch.Tensor):
                assert str(fv.dtype).split(".")[-1] == str(tv.dtype).split(".")[-1], key
            np.testing.assert_allclose(
                _to_numpy(fv), _to_numpy(tv), rtol=1e-10, atol=1e-12, err_msg=key
            )
    assert len(fsd["param_groups"]) == 2
    for fg, tg in zip(fsd["param_groups"], tsd["param_groups"]):
        assert fg["params"] == tg["params"]
        for key, fv in fg.items():
            assert fv == tg[key], key


def _resume(lib, name, kwargs, sd, values):
    run = _Run(lib, name, kwargs, np.float64, groups=True, values=values)
    run.opt.load_state_dict(sd)
    return run


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_state_dict_resume(case):
    """Five steps, save, load into fresh optimizers over copies of the parameters: the next
    steps match torch's resumed the same way, also when oneflow resumes from torch's state.
    (Loading casts scalar state such as mu_product and eta to the parameter's dtype in both, so
    a resumed run is compared with a resumed run.)"""
    name, kwargs = case
    fl = _Run(flow, name, kwargs, np.float64, groups=True)
    th = _Run(torch, name, kwargs, np.float64, groups=True)
    for _ in range(5):
        fl.step()
        th.step()
    values = fl.values()
    tsd = th.opt.state_dict()
    from_torch = {
        "state": {
            k: {n: flow.tensor(_to_numpy(v)) for n, v in s.items()} for k, s in tsd["state"].items()
        },
        "param_groups": tsd["param_groups"],
    }
    resumed = _resume(flow, name, kwargs, fl.opt.state_dict(), values)
    resumed_from_torch = _resume(flow, name, kwargs, from_torch, values)
    th_resumed = _resume(torch, name, kwargs, tsd, th.values())
    # Loading copies the state: the original optimizer stepping on does not move the others.
    fl.step()
    for _ in range(5):
        resumed.step()
        resumed_from_torch.step()
        th_resumed.step()
        _assert_params_close(resumed, th_resumed, np.float64, "resumed from oneflow's state")
        _assert_params_close(
            resumed_from_torch, th_resumed, np.float64, "resumed from torch's state"
        )
    assert resumed.opt.state[resumed.params[0]]["step"].item() == 10
    assert fl.opt.state[fl.params[0]]["step"].item() == 6


BAD_ARGS = [
    ("NAdam", {"lr": -1.0}),
    ("NAdam", {"lr": float("nan")}),
    ("NAdam", {"eps": -1e-8}),
    ("NAdam", {"betas": (1.0, 0.999)}),
    ("NAdam", {"betas": (0.9, -0.1)}),
    ("NAdam", {"weight_decay": -0.1}),
    ("NAdam", {"momentum_decay": -1.0}),
    ("RAdam", {"lr": -1.0}),
    ("RAdam", {"eps": -1.0}),
    ("RAdam", {"betas": (-0.1, 0.999)}),
    ("RAdam", {"betas": (0.9, 1.0)}),
    ("RAdam", {"weight_decay": -1.0}),
    ("Adamax", {"lr": -0.5}),
    ("Adamax", {"eps": -1.0}),
    ("Adamax", {"betas": (1.5, 0.999)}),
    ("Adamax", {"betas": (0.9, 1.0)}),
    ("Adamax", {"weight_decay": -1.0}),
    ("ASGD", {"lr": -1.0}),
    ("ASGD", {"weight_decay": -1.0}),
    ("Rprop", {"lr": -1.0}),
    ("Rprop", {"etas": (1.5, 1.2)}),
    ("Rprop", {"etas": (0.5, 0.9)}),
    ("Rprop", {"etas": (0.0, 1.2)}),
]


@pytest.mark.parametrize("case", BAD_ARGS, ids=_case_id)
def test_argument_errors_match_torch(case):
    name, kwargs = case
    with pytest.raises(Exception) as expected:
        getattr(torch.optim, name)([torch.nn.Parameter(torch.ones(2))], **kwargs)
    with pytest.raises(type(expected.value)) as got:
        getattr(flow.optim, name)([flow.nn.Parameter(flow.ones(2))], **kwargs)
    assert str(got.value) == str(expected.value)


@pytest.mark.parametrize("name", ["NAdam", "RAdam", "Adamax", "ASGD", "Rprop"])
def test_constructor_errors(name):
    cls = getattr(flow.optim, name)
    with pytest.raises(ValueError, match="empty parameter list"):
        cls([])
    with pytest.raises(TypeError):
        cls(flow.nn.Parameter(flow.ones(2)))
    with pytest.raises(ValueError, match="Tensor lr must be 1-element"):
        cls([flow.nn.Parameter(flow.ones(2))], lr=flow.tensor([0.1, 0.2]))


@pytest.mark.parametrize("name", ["NAdam", "RAdam", "Adamax", "ASGD", "Rprop"])
def test_defaults_match_torch(name):
    fopt = getattr(flow.optim, name)([flow.nn.Parameter(flow.ones(2))])
    topt = getattr(torch.optim, name)([torch.nn.Parameter(torch.ones(2))])
    for key, value in fopt.defaults.items():
        assert topt.defaults[key] == value, key
    # The only keys torch has beyond these select its implementation (foreach, capturable, ...).
    assert set(topt.defaults) - set(fopt.defaults) <= {
        "foreach",
        "capturable",
        "differentiable",
        "fused",
    }


@pytest.mark.parametrize("case", [c for c in CASES if not c[1]], ids=_case_id)
def test_step_lr_drives_them(case):
    name, kwargs = case
    kwargs = dict(kwargs, lr=0.02)
    fl = _Run(flow, name, kwargs, np.float64, groups=True)
    th = _Run(torch, name, kwargs, np.float64, groups=True)
    fsched = flow.optim.lr_scheduler.StepLR(fl.opt, step_size=3, gamma=0.5)
    tsched = torch.optim.lr_scheduler.StepLR(th.opt, step_size=3, gamma=0.5)
    assert [g["initial_lr"] for g in fl.opt.param_groups] == [0.02, 0.01]
    for step in range(10):
        fl.step()
        th.step()
        fsched.step()
        tsched.step()
        assert fsched.get_last_lr() == pytest.approx(tsched.get_last_lr(), rel=1e-15)
        _assert_params_close(fl, th, np.float64, f"after step {step + 1}")
    assert fl.opt.param_groups[0]["lr"] == pytest.approx(0.02 * 0.5**3, rel=1e-15)


@pytest.mark.parametrize("name", ["NAdam", "RAdam", "Adamax", "ASGD", "Rprop"])
def test_tensor_lr_and_closure(name):
    fl = _Run(flow, name, {"lr": flow.tensor(0.01, dtype=flow.float64)}, np.float64)
    th = _Run(torch, name, {"lr": torch.tensor(0.01, dtype=torch.float64)}, np.float64)
    for _ in range(3):
        fl.step()
        th.step()
    _assert_params_close(fl, th, np.float64, "tensor lr")
    p = flow.nn.Parameter(flow.ones(2))
    opt = getattr(flow.optim, name)([p])

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    assert opt.step(closure).item() == 2.0
    assert p.grad is not None and (p.detach().numpy() != 1.0).all()


def test_param_group_keys_and_decoupled_adam_like_torch():
    import torch

    tm, fm = torch.nn.Linear(1, 1), flow.nn.Linear(1, 1)
    for name in ("SGD", "Adam", "AdamW"):
        tk = set(getattr(torch.optim, name)(tm.parameters(), lr=0.1).param_groups[0])
        fk = set(getattr(flow.optim, name)(fm.parameters(), lr=0.1).param_groups[0])
        assert tk <= fk, (name, tk - fk)
    w = np.random.default_rng(0).random(3).astype(np.float32)
    tp, fp = torch.nn.Parameter(torch.tensor(w)), flow.nn.Parameter(flow.tensor(w))
    to = torch.optim.Adam([tp], lr=0.1, weight_decay=0.1, decoupled_weight_decay=True)
    fo = flow.optim.Adam([fp], lr=0.1, weight_decay=0.1, decoupled_weight_decay=True)
    for _ in range(3):
        for p, o in ((tp, to), (fp, fo)):
            o.zero_grad()
            (p * p).sum().backward()
            o.step()
    np.testing.assert_allclose(fp.detach().numpy(), tp.detach().numpy(), rtol=1e-6)


def _step_hook_probe(T):
    import importlib

    opt_mod = importlib.import_module(T.__name__ + ".optim.optimizer")
    p = T.nn.Parameter(T.ones(2))
    opt = T.optim.SGD([p], lr=0.5)
    calls = []
    h1 = opt.register_step_pre_hook(lambda o, a, k: calls.append(("pre", len(a))))
    opt.register_step_post_hook(lambda o, a, k: calls.append(("post", o is opt)))
    g = opt_mod.register_optimizer_step_pre_hook(lambda o, a, k: calls.append(("global", 0)))
    (p * p).sum().backward()
    opt.step()
    h1.remove()
    g.remove()
    opt.step()
    return calls, p.detach().tolist()


def test_optimizer_step_hooks_like_torch():
    import torch

    assert _step_hook_probe(flow) == _step_hook_probe(torch)


# LBFGS with line_search_fn="strong_wolfe" against torch.optim.LBFGS: the losses step() returns,
# the parameters, the step length and the evaluation/iteration counters after every step.


def _rosenbrock(lib, x):
    return (100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()


def _hinge(lib, x):
    # Kinks along the search lines make the zoom phase hug the bracket ends.
    scale = lib.tensor([1.0, -2.0, 0.5], dtype=x.dtype)
    return lib.nn.functional.relu(1 - x * scale).sum() + 0.1 * (x**2).sum()


def _weighted_l1(lib, x):
    # The slope jumps across the minimum, so no step meets the curvature condition and the
    # zoom phase runs until the bracket is below tolerance_change.
    return (x * lib.tensor([1.0, 2.0], dtype=x.dtype)).abs().sum()


def _gaussian_well(lib, x):
    # Nearly flat far from the well: long extrapolations, searches that run out of trials.
    return -(-(x**2).sum()).exp() + 0.01 * (x**2).sum()


def _lbfgs_trace(lib, objective, start, steps, dtype=np.float64, **kwargs):
    x = lib.nn.Parameter(lib.tensor(np.asarray(start, dtype=dtype)))
    opt = lib.optim.LBFGS([x], line_search_fn="strong_wolfe", **kwargs)

    def closure():
        opt.zero_grad()
        loss = objective(lib, x)
        loss.backward()
        return loss

    out = []
    for _ in range(steps):
        loss = opt.step(closure)
        st = opt.state[x]
        out.append(
            dict(
                loss=float(loss.detach()),
                x=x.detach().numpy().copy(),
                evals=st["func_evals"],
                n_iter=st["n_iter"],
                t=float(st["t"]),
            )
        )
    return out


def _assert_traces_match(fl, th, rtol, atol):
    assert len(fl) == len(th)
    for i, (a, b) in enumerate(zip(fl, th)):
        what = f"after step {i + 1}"
        assert (a["evals"], a["n_iter"]) == (b["evals"], b["n_iter"]), what
        np.testing.assert_allclose(a["loss"], b["loss"], rtol=rtol, atol=atol, err_msg=what)
        np.testing.assert_allclose(a["x"], b["x"], rtol=rtol, atol=atol, err_msg=what)
        np.testing.assert_allclose(a["t"], b["t"], rtol=rtol, atol=atol, err_msg=what)


F64_TOL = dict(rtol=1e-6, atol=1e-9)

LBFGS_WOLFE_CASES = [
    # Rosenbrock from the classic start: bracketing, cubic steps and the zoom phase.
    (_rosenbrock, [-1.2, 1.0], {}),
    (_rosenbrock, [-1.2, 1.0], {"max_iter": 5}),
    (_rosenbrock, [-1.5, 2.0, 0.3, -0.7, 1.1, 0.2], {"max_iter": 8, "history_size": 3}),
    # A short first step: the search extrapolates before it brackets.
    (_rosenbrock, [-1.2, 1.0], {"lr": 1e-3, "max_iter": 6}),
    (_rosenbrock, [3.0, -2.0], {"lr": 30.0, "max_iter": 6}),
    (_hinge, [1.51, -1.92, 1.12], {"lr": 1.101, "max_iter": 7}),
    (_hinge, [-2.28, 2.59, -0.69], {"lr": 15.773, "max_iter": 4}),
    (_weighted_l1, [1.0, -0.5], {"lr": 1.7, "max_iter": 3, "max_eval": 100}),
    # A loss above the previous trial's ends the extrapolation (from the third trial on).
    (_hinge, [-0.87, -1.24, -2.43], {"lr": 0.094, "max_iter": 3}),
    (_hinge, [-0.4, -0.89, -0.03], {"lr": 0.692, "max_iter": 4, "max_eval": 6}),
    (_gaussian_well, [1.04, 1.86, -2.76], {"lr": 0.003, "max_iter": 7, "max_eval": 11}),
    # Zoom steps moved off the upper end of the bracket.
    (_gaussian_well, [4.23, -0.61, 0.02], {"lr": 17.113, "max_iter": 7, "max_eval": 8}),
    # Out of trials with every trial above the start: the step is 0.
    (_gaussian_well, [-1.92, -0.2, -1.37], {"lr": 2.998, "max_iter": 3}),
]


@pytest.mark.parametrize(
    "objective,start,kwargs",
    LBFGS_WOLFE_CASES,
    ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(LBFGS_WOLFE_CASES)],
)
def test_lbfgs_strong_wolfe_matches_torch_float64(objective, start, kwargs):
    fl = _lbfgs_trace(flow, objective, start, 8, **kwargs)
    th = _lbfgs_trace(torch, objective, start, 8, **kwargs)
    # Same branches (the counters match exactly). The values start out equal to the last bit or
    # two; the frameworks round a few kernels differently (torch fuses x + t * d into one
    # rounding), which the badly conditioned Rosenbrock cases amplify to about 1e-9.
    _assert_traces_match(fl, th, **F64_TOL)
    assert fl[-1]["loss"] <= fl[0]["loss"]


def test_lbfgs_strong_wolfe_rosenbrock_converges_like_torch():
    fl = _lbfgs_trace(flow, _rosenbrock, [-1.2, 1.0], 10, max_iter=5)
    th = _lbfgs_trace(torch, _rosenbrock, [-1.2, 1.0], 10, max_iter=5)
    _assert_traces_match(fl, th, **F64_TOL)
    np.testing.assert_allclose(fl[-1]["x"], [1.0, 1.0], atol=1e-4)


def _linear_model_trace(lib, kind, steps, **kwargs):
    rng = np.random.default_rng(3)
    X = rng.standard_normal((48, 4)).astype(np.float32)
    if kind == "least_squares":
        w_true = np.array([1.5, -2.0, 0.5, 0.25], np.float32)
        Y = X @ w_true + 0.3 + 0.1 * rng.standard_normal(48)
    else:
        logits = X @ np.array([1.0, -1.0, 0.5, 0.0])
        Y = rng.random(48) < 1 / (1 + np.exp(-logits))
    inputs, targets = lib.tensor(X), lib.tensor(Y.astype(np.float32)).reshape(48, 1)
    model = lib.nn.Linear(4, 1)
    with lib.no_grad():
        model.weight.copy_(lib.tensor(np.array([[0.1, 0.2, -0.3, 0.4]], np.float32)))
        model.bias.copy_(lib.tensor(np.array([-0.1], np.float32)))
    loss_fn = lib.nn.MSELoss() if kind == "least_squares" else lib.nn.BCEWithLogitsLoss()
    opt = lib.optim.LBFGS(model.parameters(), line_search_fn="strong_wolfe", **kwargs)

    def closure():
        opt.zero_grad()
        loss = loss_fn(model(inputs), targets)
        loss.backward()
        return loss

    out = []
    for _ in range(steps):
        loss = opt.step(closure)
        st = opt.state[model.weight]
        assert model.weight.dtype == lib.float32 and st["d"].dtype == lib.float32
        out.append(
            dict(
                loss=float(loss.detach()),
                x=np.concatenate(
                    [model.weight.detach().numpy().ravel(), model.bias.detach().numpy()]
                ),
                evals=st["func_evals"],
                n_iter=st["n_iter"],
                t=float(st["t"]),
            )
        )
    return out


@pytest.mark.parametrize(
    "kind,kwargs",
    [
        ("least_squares", {"max_iter": 4}),
        ("least_squares", {"lr": 0.5, "max_iter": 5}),
        ("logistic", {"max_iter": 3, "history_size": 3}),
    ],
)
def test_lbfgs_strong_wolfe_linear_model_float32(kind, kwargs):
    fl = _linear_model_trace(flow, kind, 3, **kwargs)
    th = _linear_model_trace(torch, kind, 3, **kwargs)
    # float32 losses differ in the last bit between the frameworks' kernels; the line search's
    # cubic fits amplify that a little.
    _assert_traces_match(fl, th, rtol=1e-5, atol=1e-5)
    assert fl[-1]["loss"] < 0.6 * fl[0]["loss"]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"max_iter": 1},
        {"max_iter": 3},
        {"max_iter": 10, "max_eval": 7},
        {"max_iter": 4, "max_eval": 2},
        # The search runs out of evaluations while still extrapolating.
        {"lr": 1e-3, "max_iter": 4, "max_eval": 3},
        {"max_iter": 6, "tolerance_change": 1e-3},
        {"max_iter": 20, "tolerance_grad": 1e-2},
    ],
    ids=lambda kw: "-".join(f"{k}={v}" for k, v in kw.items()),
)
def test_lbfgs_strong_wolfe_limits_like_torch(kwargs):
    fl = _lbfgs_trace(flow, _rosenbrock, [-1.2, 1.0], 10, **kwargs)
    th = _lbfgs_trace(torch, _rosenbrock, [-1.2, 1.0], 10, **kwargs)
    _assert_traces_match(fl, th, **F64_TOL)
    max_iter = kwargs["max_iter"]
    max_eval = kwargs.get("max_eval", max_iter * 5 // 4)
    evals = [0] + [r["evals"] for r in fl]
    iters = [0] + [r["n_iter"] for r in fl]
    for i in range(len(fl)):
        assert 1 <= evals[i + 1] - evals[i] <= max_eval + 1
        assert iters[i + 1] - iters[i] <= max_iter


def test_lbfgs_strong_wolfe_state_dict_like_torch():
    def run(lib, steps, sd=None):
        x = lib.nn.Parameter(lib.tensor(np.array([-1.2, 1.0, 0.4])))
        opt = lib.optim.LBFGS([x], line_search_fn="strong_wolfe", max_iter=4, history_size=3)
        if sd is not None:
            opt.load_state_dict(sd)

        def closure():
            opt.zero_grad()
            loss = _rosenbrock(lib, x)
            loss.backward()
            return loss

        if sd is not None:
            x.data.copy_(lib.tensor(sd["x"]))
        for _ in range(steps):
            opt.step(closure)
        return x, opt

    fx, fopt = run(flow, 3)
    tx, topt = run(torch, 3)
    fs, ts = fopt.state_dict()["state"][0], topt.state_dict()["state"][0]
    assert set(fs) == set(ts)
    assert {"func_evals", "n_iter", "d", "t", "old_dirs", "old_stps", "ro"} <= set(fs)
    assert {"H_diag", "prev_flat_grad", "prev_loss", "al"} <= set(fs)
    assert (fs["func_evals"], fs["n_iter"]) == (ts["func_evals"], ts["n_iter"])
    for key in ("d", "t", "H_diag", "prev_flat_grad", "prev_loss"):
        np.testing.assert_allclose(_to_numpy(fs[key]), _to_numpy(ts[key]), rtol=1e-9, err_msg=key)
    for key in ("old_dirs", "old_stps", "ro", "al"):
        assert len(fs[key]) == len(ts[key]), key
        for a, b in zip(fs[key], ts[key]):
            assert (a is None) == (b is None), key
            if b is not None:
                np.testing.assert_allclose(_to_numpy(a), _to_numpy(b), rtol=1e-9, err_msg=key)

    # Resuming from the state dict continues exactly like the uninterrupted run.
    fsd = fopt.state_dict()
    fsd["x"] = fx.detach().numpy().copy()
    resumed, _ = run(flow, 2, fsd)
    straight, _ = run(flow, 5)
    np.testing.assert_allclose(resumed.detach().numpy(), straight.detach().numpy(), rtol=1e-12)
    reference, _ = run(torch, 5)
    np.testing.assert_allclose(resumed.detach().numpy(), reference.detach().numpy(), rtol=1e-8)


def test_lbfgs_rejects_other_line_searches():
    fp = flow.nn.Parameter(flow.ones(2))
    with pytest.raises(ValueError, match="only 'strong_wolfe' is supported"):
        flow.optim.LBFGS([fp], line_search_fn="backtracking")

    # torch accepts the name and raises RuntimeError from step(); the error here is both.
    tp = torch.nn.Parameter(torch.ones(2))
    topt = torch.optim.LBFGS([tp], line_search_fn="backtracking")
    fopt = flow.optim.LBFGS([fp], line_search_fn="strong_wolfe")
    fopt.param_groups[0]["line_search_fn"] = "backtracking"
    errors = []
    for p, opt in ((tp, topt), (fp, fopt)):

        def closure(p=p, opt=opt):
            opt.zero_grad()
            loss = (p * p).sum()
            loss.backward()
            return loss

        with pytest.raises(RuntimeError) as info:
            opt.step(closure)
        errors.append(info.value)
    assert isinstance(errors[1], ValueError)
    assert str(errors[1]) == str(errors[0])
    np.testing.assert_array_equal(fp.detach().numpy(), tp.detach().numpy())


# lr schedulers' state_dict: PyTorch's keys and values; a PyTorch scheduler's state loads here


class _Power:
    """A callable object: state_dict keeps its attributes (a plain function is stored as None)."""

    def __init__(self, base):
        self.base = base

    def __call__(self, epoch):
        return self.base**epoch


def _scheduler(lib, name, opt):
    S = lib.optim.lr_scheduler
    if name == "LambdaLR":
        return S.LambdaLR(opt, [_Power(0.9), lambda e: 1.0 / (e + 1)])
    if name == "MultiplicativeLR":
        return S.MultiplicativeLR(opt, [_Power(1.0), lambda e: 0.95])
    if name == "CyclicLR":
        return S.CyclicLR(opt, 0.01, 0.1, step_size_up=3, scale_fn=_Power(0.8))
    if name == "SequentialLR":
        parts = [S.ConstantLR(opt, 0.5, 2), S.CosineAnnealingLR(opt, T_max=4)]
        return S.SequentialLR(opt, parts, milestones=[3])
    if name == "ChainedScheduler":
        return S.ChainedScheduler([S.ConstantLR(opt, 0.5, 3), S.ExponentialLR(opt, 0.9)])
    kwargs = {
        "StepLR": dict(step_size=2, gamma=0.5),
        "MultiStepLR": dict(milestones=[2, 4, 4], gamma=0.5),
        "ConstantLR": dict(factor=0.5, total_iters=3),
        "LinearLR": dict(start_factor=0.2, total_iters=6),
        "ExponentialLR": dict(gamma=0.9),
        "PolynomialLR": dict(total_iters=8, power=2.0),
        "CosineAnnealingLR": dict(T_max=5, eta_min=0.001),
        "CosineAnnealingWarmRestarts": dict(T_0=3, T_mult=2),
        "OneCycleLR": dict(max_lr=1.0, total_steps=30, three_phase=True),
        "ReduceLROnPlateau": dict(factor=0.5, patience=1, min_lr=[0.0, 0.001]),
    }[name]
    return getattr(S, name)(opt, **kwargs)


SCHEDULER_NAMES = [
    "LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR", "LinearLR",
    "ExponentialLR", "PolynomialLR", "CosineAnnealingLR", "CosineAnnealingWarmRestarts",
    "OneCycleLR", "CyclicLR", "ReduceLROnPlateau", "SequentialLR", "ChainedScheduler",
]  # fmt: skip


def _sched_setup(lib, name):
    a, b = lib.nn.Parameter(lib.zeros(2)), lib.nn.Parameter(lib.ones(3))
    opt = lib.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.05}], lr=0.1, momentum=0.9)
    return a, b, opt, _scheduler(lib, name, opt)


def _sched_step(lib, name, a, b, opt, sched, i):
    opt.zero_grad()
    ((a * a).sum() + (b * b).sum()).backward()
    opt.step()
    if name == "ReduceLROnPlateau":
        sched.step(1.0)  # no improvement: the rates drop after `patience` steps
    else:
        sched.step()


def _assert_same(got, want, where):
    if isinstance(want, dict):
        assert isinstance(got, dict), where
        assert set(got) == set(want), (where, sorted(set(got) ^ set(want)))
        for k in want:
            _assert_same(got[k], want[k], f"{where}.{k}")
    elif isinstance(want, (list, tuple)):
        assert isinstance(got, (list, tuple)) and len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want)):
            _assert_same(g, w, f"{where}[{i}]")
    elif isinstance(want, float):
        assert got == pytest.approx(want, rel=1e-12, abs=1e-15), where
    else:
        assert got == want, (where, got, want)


def _torch_to_flow(x):
    if isinstance(x, torch.Tensor):
        return flow.tensor(x.detach().numpy())
    if isinstance(x, dict):
        return type(x)({k: _torch_to_flow(v) for k, v in x.items()})
    if isinstance(x, (list, tuple)):
        return type(x)(_torch_to_flow(v) for v in x)
    return x


@pytest.mark.parametrize("name", SCHEDULER_NAMES)
def test_scheduler_state_dict_keys_and_values_like_torch(name):
    f, t = _sched_setup(flow, name), _sched_setup(torch, name)
    for i in range(5):
        _sched_step(flow, name, *f, i)
        _sched_step(torch, name, *t, i)
    fsd, tsd = f[3].state_dict(), t[3].state_dict()
    assert set(fsd) == set(tsd), sorted(set(fsd) ^ set(tsd))
    if name not in ("ReduceLROnPlateau", "ChainedScheduler", "SequentialLR"):
        assert fsd["_get_lr_called_within_step"] is False and fsd["_is_initial"] is False
    _assert_same(fsd, tsd, name)
    for fg, tg in zip(f[2].param_groups, t[2].param_groups):
        assert fg["lr"] == pytest.approx(tg["lr"], rel=1e-12)


@pytest.mark.parametrize("name", SCHEDULER_NAMES)
def test_torch_scheduler_state_dict_loads_and_continues_like_torch(name):
    t = _sched_setup(torch, name)
    for i in range(5):
        _sched_step(torch, name, *t, i)
    if name in ("LambdaLR", "CyclicLR"):  # a callable object's attributes travel in the state
        (t[3].lr_lambdas[0] if name == "LambdaLR" else t[3]._scale_fn_custom).base = 0.7
    saved_opt = _torch_to_flow(t[2].state_dict())
    saved = _torch_to_flow(t[3].state_dict())
    f = _sched_setup(flow, name)
    f[0].data.copy_(flow.tensor(t[0].detach().numpy()))
    f[1].data.copy_(flow.tensor(t[1].detach().numpy()))
    f[2].load_state_dict(saved_opt)
    f[3].load_state_dict(saved)
    assert f[3].get_last_lr() == pytest.approx(t[3].get_last_lr(), rel=1e-12)
    for i in range(5, 12):
        _sched_step(flow, name, *f, i)
        _sched_step(torch, name, *t, i)
        for fg, tg in zip(f[2].param_groups, t[2].param_groups):
            assert fg["lr"] == pytest.approx(tg["lr"], rel=1e-12), (name, i)
            assert fg["momentum"] == pytest.approx(tg["momentum"], rel=1e-12), (name, i)
    _assert_same(f[3].state_dict(), t[3].state_dict(), name)
    # and ours loads into PyTorch's
    fresh = _sched_setup(torch, name)[3]
    fresh.load_state_dict(f[3].state_dict())
    assert fresh.get_last_lr() == pytest.approx(t[3].get_last_lr(), rel=1e-12)


def test_sequential_lr_restarts_the_next_scheduler_like_torch():
    """At a milestone the next scheduler restarts at epoch 0 without counting a step (SWALR's
    rate depends on its step count); nested schedulers' initial steps are taken back too."""

    def run(lib):
        p = lib.nn.Parameter(lib.zeros(1))
        opt = lib.optim.SGD([p], lr=1.0)
        S = lib.optim.lr_scheduler
        swa = lib.optim.swa_utils.SWALR(opt, swa_lr=0.05, anneal_epochs=3)
        s = S.SequentialLR(opt, [S.ConstantLR(opt, 0.5, 3), swa], milestones=[3])
        lrs = [opt.param_groups[0]["lr"]]
        for _ in range(8):
            opt.step()
            s.step()
            lrs.append(opt.param_groups[0]["lr"])
        return lrs, swa._step_count

    (flrs, fcount), (tlrs, tcount) = run(flow), run(torch)
    np.testing.assert_allclose(flrs, tlrs, rtol=1e-12)
    assert fcount == tcount

    def nested(lib):
        p = lib.nn.Parameter(lib.zeros(1))
        opt = lib.optim.SGD([p], lr=1.0)
        S = lib.optim.lr_scheduler
        inner = S.ChainedScheduler([S.ConstantLR(opt, 0.5, 2), S.ExponentialLR(opt, 0.8)])
        S.SequentialLR(opt, [inner, S.ExponentialLR(opt, 0.9)], milestones=[3])
        return [s.last_epoch for s in inner._schedulers], opt.param_groups[0]["lr"]

    assert nested(flow) == nested(torch)


@pytest.mark.parametrize("maximize", [False, True])
def test_sparse_adam_on_embedding_rows_like_torch(maximize):
    """SparseAdam updates the moments and the weights only in the rows looked up (padding_idx
    excluded) with the parameter's step count, as PyTorch's lazy Adam on sparse gradients."""
    w0 = np.random.default_rng(0).standard_normal((20, 4)).astype(np.float32)
    res = []
    for lib in (torch, flow):
        emb = lib.nn.Embedding(20, 4, sparse=True, padding_idx=0)
        with lib.no_grad():
            emb.weight.copy_(lib.tensor(w0))
        opt = lib.optim.SparseAdam(list(emb.parameters()), lr=0.05, maximize=maximize)
        for step in range(6):
            idx = lib.tensor([[1, 3, 3, 0], [7, 1, 9, 0], [12, 12, 5, 0]][step % 3])
            loss = (emb(idx) * lib.arange(1.0, 5.0)).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
        state = opt.state[emb.weight]
        res.append([emb.weight.detach(), state["exp_avg"], state["exp_avg_sq"]])
    for got, want in zip(res[1], res[0]):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
    untouched = [r for r in range(20) if r not in (0, 1, 3, 5, 7, 9, 12)]
    np.testing.assert_array_equal(res[1][0].numpy()[untouched], w0[untouched])
    with pytest.raises(ValueError):
        flow.optim.SparseAdam([flow.nn.Parameter(flow.ones(2))], lr=-1)


@pytest.mark.parametrize("strategy", ["cos", "linear"])
def test_swalr_state_dict_like_torch(strategy):
    dicts = []
    for lib in (torch, flow):
        p = lib.nn.Parameter(lib.ones(1))
        opt = lib.optim.SGD([p], lr=0.1)
        sched = lib.optim.swa_utils.SWALR(
            opt, swa_lr=0.05, anneal_epochs=3, anneal_strategy=strategy
        )
        for _ in range(2):
            opt.step()
            sched.step()
        dicts.append(sched.state_dict())
    want, got = dicts
    assert list(got) == list(want)
    _assert_same(got, want, "SWALR")
    p = flow.nn.Parameter(flow.ones(1))
    sched = flow.optim.swa_utils.SWALR(flow.optim.SGD([p], lr=0.1), swa_lr=0.05)
    sched.load_state_dict(want)
    assert (sched.anneal_func == sched._linear_anneal) == (strategy == "linear")
