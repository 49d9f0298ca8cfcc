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
