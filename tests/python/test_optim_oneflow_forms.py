"""OneFlow's documented forms of the optimizers and learning-rate schedulers, next to PyTorch's:
WarmUpLR, PolynomialLR(decay_batch, end_learning_rate, cycle), last_step, custom schedulers
overriding get_lr(base_lr, step), SequentialLR(interval_rescaling), contiguous_params and
fused, named parameters (PyTorch 2.x) and RMSprop's state dict.

OneFlow's numbers are hard-coded from its documentation and sources (python/oneflow/nn/
optimizer/*.py of Oneflow-Inc/oneflow); where the name is shared, PyTorch's forms are compared
with torch."""

import math

import numpy as np
import pytest
import torch

import oneflow as flow

S = flow.optim.lr_scheduler


def _sgd(lib=flow, lr=1.0, groups=1):
    params = [lib.nn.Parameter(lib.zeros(1)) for _ in range(groups)]
    return lib.optim.SGD([{"params": [p], "lr": lr * (i + 1)} for i, p in enumerate(params)])


def _lrs(opt, sched, steps, group=0):
    out = [opt.param_groups[group]["lr"]]
    for _ in range(steps):
        opt.step()
        sched.step()
        out.append(opt.param_groups[group]["lr"])
    return out


# -- 1. WarmUpLR ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["WarmUpLR", "WarmupLR"])
def test_warm_up_lr_both_names_documented_values(name):
    cls = getattr(S, name)
    assert cls is S.WarmupLR
    # OneFlow's docs, example 1: constant warmup
    opt = _sgd(lr=0.001)
    s = cls(opt, warmup_factor=0.5, warmup_iters=5, warmup_method="constant")
    np.testing.assert_allclose(_lrs(opt, s, 6), [0.0005] * 5 + [0.001, 0.001], rtol=1e-12)
    # example 2: linear warmup
    opt = _sgd(lr=0.001)
    s = cls(opt, warmup_factor=0.5, warmup_iters=5, warmup_method="linear")
    want = [0.0005, 0.0006, 0.0007, 0.0008, 0.0009, 0.001, 0.001]
    np.testing.assert_allclose(_lrs(opt, s, 6), want, rtol=1e-12)
    assert s.last_step == 6 and s.state_dict()["last_step"] == 6


# -- 2. PolynomialLR ----------------------------------------------------------------------------


def test_polynomial_lr_oneflow_documented_values():
    opt = _sgd()
    s = S.PolynomialLR(opt, decay_batch=4, end_learning_rate=1e-4, power=1.0, cycle=False)
    want = [1.0, 0.750025, 0.50005, 0.250075, 1e-4, 1e-4, 1e-4]
    np.testing.assert_allclose(_lrs(opt, s, 6), want, rtol=1e-12)
    # decay_batch positionally (OneFlow's order), end_learning_rate by default 0.0001
    opt = _sgd()
    s = S.PolynomialLR(opt, 4, end_learning_rate=1e-4)
    np.testing.assert_allclose(_lrs(opt, s, 6), want, rtol=1e-12)
    opt = _sgd()
    s = S.PolynomialLR(opt, decay_batch=4)
    np.testing.assert_allclose(_lrs(opt, s, 6), want, rtol=1e-12)
    # OneFlow's power: (base - end) * (1 - t / D) ** 2 + end
    opt = _sgd(lr=0.1)
    s = S.PolynomialLR(opt, decay_batch=5, end_learning_rate=1e-5, power=2)
    want = [0.1, 0.0640036, 0.0360064, 0.0160084, 0.0040096, 1e-5, 1e-5]
    np.testing.assert_allclose(_lrs(opt, s, 6), want, rtol=1e-12)


def test_polynomial_lr_oneflow_cycle():
    # cycle=True: D = decay_batch * ceil(t / decay_batch), t = max(step, 1) (OneFlow's formula
    # counts step 0 as step 1)
    opt = _sgd()
    s = S.PolynomialLR(opt, decay_batch=4, end_learning_rate=1e-4, cycle=True)
    want = [
        0.750025,  # step 0: t = 1, D = 4
        0.750025,
        0.50005,
        0.250075,
        1e-4,  # step 4: D = 4
        0.3750625,  # step 5: D = 8, 1 - 5/8
        0.250075,
        0.1250875,
        1e-4,  # step 8: D = 8
        0.250075,  # step 9: D = 12, 1 - 9/12
    ]
    np.testing.assert_allclose(_lrs(opt, s, 9), want, rtol=1e-12)
    # an explicit step takes the same closed form
    s.step(5)
    assert opt.param_groups[0]["lr"] == pytest.approx(0.3750625, rel=1e-12)


def test_polynomial_lr_pytorch_forms_match_torch():
    for args, kwargs in [
        ((), {}),
        ((4,), {}),
        ((), {"total_iters": 4, "power": 2.0}),
        ((6, 0.5), {}),
    ]:
        fo, to = _sgd(flow, 0.5, groups=2), _sgd(torch, 0.5, groups=2)
        fs = S.PolynomialLR(fo, *args, **kwargs)
        ts = torch.optim.lr_scheduler.PolynomialLR(to, *args, **kwargs)
        np.testing.assert_allclose(_lrs(fo, fs, 8), _lrs(to, ts, 8), rtol=1e-12)
        assert set(fs.state_dict()) == set(ts.state_dict())  # no OneFlow keys in PyTorch's form
    # and OneFlow's form differs from it only by end_learning_rate and cycle
    opt = _sgd()
    s = S.PolynomialLR(opt, decay_batch=4, end_learning_rate=0.0)
    np.testing.assert_allclose(_lrs(opt, s, 5), [1.0, 0.75, 0.5, 0.25, 0.0, 0.0], atol=1e-15)
    with pytest.raises(TypeError, match="total_iters and decay_batch"):
        S.PolynomialLR(_sgd(), total_iters=4, decay_batch=4)
    with pytest.raises(ValueError, match="decay_batch"):
        S.PolynomialLR(_sgd(), decay_batch=0)


def test_polynomial_lr_oneflow_state_dict():
    opt = _sgd()
    s = S.PolynomialLR(opt, decay_batch=4, end_learning_rate=1e-4, cycle=True)
    for _ in range(5):
        s.step()
    sd = s.state_dict()
    assert sd["last_step"] == sd["last_epoch"] == 5
    assert sd["end_learning_rate"] == 1e-4 and sd["cycle"] is True
    # a state dict written by OneFlow (its names: max_decay_steps, last_step)
    opt2 = _sgd()
    s2 = S.PolynomialLR(opt2, decay_batch=2, end_learning_rate=1e-4)
    s2.load_state_dict(
        {
            "max_decay_steps": 4,
            "end_learning_rate": 1e-4,
            "power": 1.0,
            "cycle": True,
            "last_step": 5,
            "verbose": False,
            "base_lrs": [1.0],
            "_last_lr": [0.3750625],
        }
    )
    assert s2.last_epoch == 5 and s2.total_iters == 4
    s.step()
    s2.step()
    assert opt2.param_groups[0]["lr"] == pytest.approx(opt.param_groups[0]["lr"], rel=1e-12)


# -- 3. last_step -------------------------------------------------------------------------------

CONSTRUCTORS = {
    "LambdaLR": lambda o, **k: S.LambdaLR(o, lambda e: 0.9**e, **k),
    "MultiplicativeLR": lambda o, **k: S.MultiplicativeLR(o, lambda e: 0.9, **k),
    "StepLR": lambda o, **k: S.StepLR(o, step_size=2, gamma=0.5, **k),
    "MultiStepLR": lambda o, **k: S.MultiStepLR(o, milestones=[2, 5], gamma=0.5, **k),
    "ConstantLR": lambda o, **k: S.ConstantLR(o, factor=0.5, total_iters=3, **k),
    "LinearLR": lambda o, **k: S.LinearLR(o, start_factor=0.5, total_iters=4, **k),
    "ExponentialLR": lambda o, **k: S.ExponentialLR(o, gamma=0.9, **k),
    "PolynomialLR": lambda o, **k: S.PolynomialLR(o, decay_batch=6, **k),
    "CosineAnnealingLR": lambda o, **k: S.CosineAnnealingLR(o, T_max=6, **k),
    "CosineAnnealingWarmRestarts": lambda o, **k: S.CosineAnnealingWarmRestarts(o, T_0=3, **k),
    "OneCycleLR": lambda o, **k: S.OneCycleLR(o, max_lr=1.0, total_steps=20, **k),
    "CyclicLR": lambda o, **k: S.CyclicLR(o, base_lr=0.1, max_lr=1.0, step_size_up=3, **k),
    "CosineDecayLR": lambda o, **k: S.CosineDecayLR(o, decay_steps=6, **k),
    "WarmupLR": lambda o, **k: S.WarmupLR(o, warmup_iters=3, **k),
    "SWALR": lambda o, **k: flow.optim.swa_utils.SWALR(o, swa_lr=0.05, anneal_epochs=3, **k),
}


def _momentum_sgd():
    return flow.optim.SGD([flow.nn.Parameter(flow.zeros(1))], lr=1.0, momentum=0.9)


@pytest.mark.parametrize("name", sorted(CONSTRUCTORS))
def test_last_step_keyword_alias_and_state_dict(name):
    make = CONSTRUCTORS[name]
    ref_opt, opt = _momentum_sgd(), _momentum_sgd()
    ref, s = make(ref_opt), make(opt, last_step=-1)
    np.testing.assert_allclose(_lrs(opt, s, 5), _lrs(ref_opt, ref, 5), rtol=1e-12)
    assert s.last_step == s.last_epoch == 5
    sd = s.state_dict()
    assert sd["last_step"] == sd["last_epoch"] == 5  # OneFlow's form: both counters
    # the alias is writable
    s.last_step = 2
    assert s.last_epoch == 2
    s.last_epoch = 5
    assert s.last_step == 5
    # resuming with OneFlow's last_step equals resuming with PyTorch's last_epoch
    if name not in ("CosineAnnealingWarmRestarts", "CyclicLR", "OneCycleLR"):
        a_opt, b_opt = _momentum_sgd(), _momentum_sgd()
        for o in (a_opt, b_opt):
            o.param_groups[0]["initial_lr"] = 1.0
        kw_a = {"last_step": 3}
        kw_b = {"last_epoch": 3} if name not in ("CosineDecayLR", "WarmupLR") else {}
        a = make(a_opt, **kw_a)
        b = make(b_opt, **kw_b) if kw_b else make(b_opt, last_step=3)
        assert a.last_step == b.last_epoch == 4  # the constructor's step
        np.testing.assert_allclose(_lrs(a_opt, a, 3), _lrs(b_opt, b, 3), rtol=1e-12)


@pytest.mark.parametrize("name", ["StepLR", "ExponentialLR", "CosineAnnealingLR", "LambdaLR"])
def test_state_dicts_with_either_counter_load(name):
    make = CONSTRUCTORS[name]
    opt = _momentum_sgd()
    s = make(opt, last_step=-1)
    for _ in range(4):
        s.step()
    sd = s.state_dict()
    only_step = {k: v for k, v in sd.items() if k != "last_epoch"}  # OneFlow's
    only_epoch = {k: v for k, v in sd.items() if k != "last_step"}  # PyTorch's
    for saved in (sd, only_step, only_epoch):
        fresh = make(_momentum_sgd())
        fresh.load_state_dict(saved)
        assert fresh.last_epoch == fresh.last_step == 4
        assert "last_step" not in fresh.__dict__  # an alias, not a second counter
    # PyTorch's form keeps PyTorch's keys exactly; ours loads into torch
    t = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0, momentum=0.9)
    tcls = getattr(torch.optim.lr_scheduler, name)
    targs = {
        "StepLR": dict(step_size=2, gamma=0.5),
        "ExponentialLR": dict(gamma=0.9),
        "CosineAnnealingLR": dict(T_max=6),
        "LambdaLR": dict(lr_lambda=lambda e: 0.9**e),
    }[name]
    ts = tcls(t, **targs)
    plain = make(_momentum_sgd())
    assert set(plain.state_dict()) == set(ts.state_dict())
    ts.load_state_dict(only_epoch)
    assert ts.last_epoch == 4


def test_last_step_errors_and_plateau_alias():
    with pytest.raises(ValueError, match="last_epoch=2 and last_step=3"):
        S.StepLR(_momentum_sgd(), step_size=2, last_epoch=2, last_step=3)
    opt = _momentum_sgd()
    s = S.ReduceLROnPlateau(opt, patience=0)
    s.step(1.0)
    s.step(1.0)
    assert s.last_step == s.last_epoch == 2
    sd = dict(s.state_dict())
    sd["last_step"] = sd.pop("last_epoch")
    fresh = S.ReduceLROnPlateau(_momentum_sgd(), patience=0)
    fresh.load_state_dict(sd)
    assert fresh.last_epoch == 2 and "last_step" not in fresh.__dict__


# -- 4. custom schedulers in OneFlow's form and in PyTorch's -----------------------------------


class _OneFlowHalving(S.LRScheduler):
    """A OneFlow-style scheduler: get_lr(base_lr, step) returns one rate."""

    def __init__(self, optimizer, every, last_step=-1, verbose=False):
        self.every = every
        super().__init__(optimizer, last_step, verbose)

    def get_lr(self, base_lr, step):
        return base_lr * 0.5 ** (step // self.every)


def _pytorch_halving(lib):
    class Halving(lib.optim.lr_scheduler.LRScheduler):
        def __init__(self, optimizer, every, last_epoch=-1):
            self.every = every
            super().__init__(optimizer, last_epoch)

        def get_lr(self):
            return [b * 0.5 ** (self.last_epoch // self.every) for b in self.base_lrs]

    return Halving


def test_custom_scheduler_oneflow_get_lr_base_lr_step():
    opt = _sgd(lr=0.8, groups=2)
    s = _OneFlowHalving(opt, every=2)
    assert _lrs(opt, s, 5) == [0.8, 0.8, 0.4, 0.4, 0.2, 0.2]
    assert opt.param_groups[1]["lr"] == 1.6 * 0.25
    assert s.get_last_lr() == [0.2, 0.4] and s.last_step == 5
    assert s.state_dict()["last_step"] == 5
    s.step(0)  # an explicit step
    assert s.get_last_lr() == [0.8, 1.6]
    # OneFlow's update_lrs
    s.update_lrs([0.3, 0.6])
    assert [g["lr"] for g in opt.param_groups] == [0.3, 0.6] and s.get_last_lr() == [0.3, 0.6]
    # inside SequentialLR and WarmupLR
    opt = _sgd(lr=1.0)
    seq = S.SequentialLR(opt, [S.ConstantLR(opt, 0.5, 2), _OneFlowHalving(opt, 2)], [2])
    assert _lrs(opt, seq, 5) == [0.5, 0.5, 1.0, 1.0, 0.5, 0.5]
    opt = _sgd(lr=1.0)
    warm = S.WarmupLR(_OneFlowHalving(opt, 2), warmup_factor=0.5, warmup_iters=2)
    # this WarmupLR multiplies the wrapped schedule by the warmup factor
    np.testing.assert_allclose(_lrs(opt, warm, 4), [0.5, 0.75, 0.5, 0.5, 0.25], rtol=1e-12)


def test_custom_scheduler_pytorch_get_lr_matches_torch():
    fo, to = _sgd(flow, 0.8, groups=2), _sgd(torch, 0.8, groups=2)
    fs, ts = _pytorch_halving(flow)(fo, 2), _pytorch_halving(torch)(to, 2)
    assert _lrs(fo, fs, 6) == _lrs(to, ts, 6)
    assert "last_step" not in fs.state_dict() and fs.last_step == 6
    assert set(fs.state_dict()) == set(ts.state_dict())


# -- 5. SequentialLR(interval_rescaling) --------------------------------------------------------


def _constant_then_exponential(interval_rescaling=None, positional=False):
    opt = _sgd()
    first = S.ConstantLR(opt, factor=0.1, total_iters=2)
    second = S.ExponentialLR(opt, gamma=0.9)
    if positional:  # OneFlow's order: (optimizer, schedulers, milestones, interval_rescaling)
        s = S.SequentialLR(opt, [first, second], [2], interval_rescaling)
    elif interval_rescaling is None:
        s = S.SequentialLR(opt, [first, second], milestones=[2])
    else:
        s = S.SequentialLR(
            opt, [first, second], milestones=[2], interval_rescaling=interval_rescaling
        )
    return opt, s


def test_sequential_lr_interval_rescaling():
    # False (OneFlow's default): the second scheduler is at the global step, 0.9 ** step
    global_step = [0.1, 0.1, 0.81, 0.729, 0.6561, 0.59049]
    # True: it counts from its milestone, 0.9 ** (step - 2)
    rescaled = [0.1, 0.1, 1.0, 0.9, 0.81, 0.729]
    for arg, positional, want in [
        (False, False, global_step),
        ([False], False, global_step),
        (False, True, global_step),
        (True, False, rescaled),
        ([True], True, rescaled),
    ]:
        opt, s = _constant_then_exponential(arg, positional)
        np.testing.assert_allclose(_lrs(opt, s, 5), want, rtol=1e-12, err_msg=str(arg))
        assert s.state_dict()["interval_rescaling"] == [bool(np.all(arg))]
    with pytest.raises(ValueError, match="interval_rescaling"):
        _constant_then_exponential([True, False])
    # left out: PyTorch's SequentialLR (a restart at the milestone), as torch
    opt, s = _constant_then_exponential()
    to = _sgd(torch)
    TS = torch.optim.lr_scheduler
    ts = TS.SequentialLR(to, [TS.ConstantLR(to, 0.1, 2), TS.ExponentialLR(to, 0.9)], [2])
    np.testing.assert_allclose(_lrs(opt, s, 5), _lrs(to, ts, 5), rtol=1e-12)
    assert set(s.state_dict()) == set(ts.state_dict())


def test_sequential_lr_oneflow_positional_last_step_and_nested_oneflow_form():
    opt = _sgd()
    first = S.ConstantLR(opt, factor=0.1, total_iters=2)
    second = S.PolynomialLR(opt, decay_batch=4, end_learning_rate=1e-4)
    s = S.SequentialLR(opt, [first, second], [2], [False], -1)
    # the second at the global step: OneFlow's polynomial values from step 2
    np.testing.assert_allclose(
        _lrs(opt, s, 5), [0.1, 0.1, 0.50005, 0.250075, 1e-4, 1e-4], rtol=1e-12
    )
    sd = s.state_dict()
    assert sd["last_step"] == sd["last_epoch"] == 5
    assert sd["_schedulers"][1]["last_step"] == 5


# -- 6. contiguous_params and fused -------------------------------------------------------------

OPTIMIZERS = [
    ("SGD", {"lr": 0.1, "momentum": 0.9}),
    ("Adam", {"lr": 0.01}),
    ("AdamW", {"lr": 0.01}),
    ("LAMB", {"lr": 0.01}),
    ("RMSprop", {"lr": 0.01}),
    ("Adagrad", {"lr": 0.1}),
    ("Adadelta", {"lr": 1.0}),
    ("LBFGS", {"lr": 0.5}),
]


def _train(name, kwargs, steps=4):
    rng = np.random.default_rng(0)
    w = flow.nn.Parameter(flow.tensor(rng.standard_normal((4, 3))))
    b = flow.nn.Parameter(flow.tensor(rng.standard_normal(4)))
    x, y = flow.tensor(rng.standard_normal((8, 3))), flow.tensor(rng.standard_normal((8, 4)))
    opt = getattr(flow.optim, name)([w, b], **kwargs)

    def closure():
        opt.zero_grad()
        loss = ((x @ w.T + b - y) ** 2).mean()
        loss.backward()
        return loss

    for _ in range(steps):
        opt.step(closure)
    return [w.detach().numpy(), b.detach().numpy()], opt


@pytest.mark.parametrize("name,kwargs", OPTIMIZERS, ids=[n for n, _ in OPTIMIZERS])
def test_contiguous_params_and_fused_accepted(name, kwargs):
    want, plain = _train(name, kwargs)
    for extra in (
        {"contiguous_params": False},
        {"contiguous_params": True},
        {"fused": False},
        {"fused": True, "contiguous_params": True},
    ):
        got, opt = _train(name, dict(kwargs, **extra))
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-12, err_msg=str(extra))
        # contiguous_params is no hyper-parameter: the groups are as without it
        assert "contiguous_params" not in opt.param_groups[0]
        assert set(opt.param_groups[0]) <= set(plain.param_groups[0]) | {"fused"}


def test_lamb_rejects_amsgrad_as_oneflow():
    with pytest.raises(RuntimeError, match="LAMB does not support AMSGrad"):
        flow.optim.LAMB([flow.nn.Parameter(flow.ones(2))], amsgrad=True)


# -- 7. named parameters ------------------------------------------------------------------------


def _linear(lib):
    lib.manual_seed(0)
    m = lib.nn.Linear(3, 2)
    rng = np.random.default_rng(1)
    with lib.no_grad():
        m.weight.copy_(lib.tensor(rng.standard_normal((2, 3)), dtype=m.weight.dtype))
        m.bias.copy_(lib.tensor(rng.standard_normal(2), dtype=m.bias.dtype))
    return m


def _named_run(lib, name, make_params, steps=3, **kwargs):
    m = _linear(lib)
    opt = getattr(lib.optim, name)(make_params(m), **kwargs)
    x = lib.tensor(np.arange(6.0).reshape(2, 3), dtype=lib.float32)
    for _ in range(steps):
        opt.zero_grad()
        (m(x) ** 2).sum().backward()
        opt.step()
    return m, opt


def _to_np(v):
    return v.detach().cpu().numpy() if hasattr(v, "detach") else v


def _same_state_dict(fsd, tsd):
    assert fsd["param_groups"] == tsd["param_groups"]
    assert [list(g) for g in fsd["param_groups"]] == [list(g) for g in tsd["param_groups"]]
    assert sorted(fsd["state"]) == sorted(tsd["state"])
    for k, ts in tsd["state"].items():
        assert list(fsd["state"][k]) == list(ts)
        for key, tv in ts.items():
            np.testing.assert_allclose(_to_np(fsd["state"][k][key]), _to_np(tv), rtol=1e-5)


@pytest.mark.parametrize("name,kwargs", [("SGD", {"lr": 0.1, "momentum": 0.9}), ("RMSprop", {})])
def test_named_parameters_like_torch(name, kwargs):
    def named(m):
        return m.named_parameters()

    def named_groups(m):
        (wn, w), (bn, b) = list(m.named_parameters())
        return [{"params": [(wn, w)]}, {"params": [(bn, b)], "lr": 0.05}]

    for make in (named, named_groups):
        fm, fo = _named_run(flow, name, make, **kwargs)
        tm, to = _named_run(torch, name, make, **kwargs)
        assert [g["param_names"] for g in fo.param_groups] == [
            g["param_names"] for g in to.param_groups
        ]
        assert fo.param_groups[0]["params"][0] is fm.weight
        _same_state_dict(fo.state_dict(), to.state_dict())
        for fp, tp in zip(fm.parameters(), tm.parameters()):
            np.testing.assert_allclose(_to_np(fp), _to_np(tp), rtol=1e-5)


def test_named_parameters_state_dict_loading_and_errors_like_torch():
    fm, fo = _named_run(flow, "SGD", lambda m: m.named_parameters(), lr=0.1, momentum=0.9)
    # a named state dict loads into an unnamed optimizer, which takes the names (as torch)
    plain = flow.optim.SGD(_linear(flow).parameters(), lr=0.1, momentum=0.9)
    plain.load_state_dict(fo.state_dict())
    assert plain.param_groups[0]["param_names"] == ["weight", "bias"]
    # an unnamed one into a named optimizer, which keeps its names
    tm = _linear(torch)
    to = torch.optim.SGD(tm.parameters(), lr=0.1)
    named = flow.optim.SGD(_linear(flow).named_parameters(), lr=0.1)
    named.load_state_dict(to.state_dict())
    assert named.param_groups[0]["param_names"] == ["weight", "bias"]
    # mixing named and unnamed: torch's errors
    for lib in (torch, flow):
        m = _linear(lib)
        (wn, w), (bn, b) = list(m.named_parameters())
        with pytest.raises(ValueError, match="Some param names are missing"):
            lib.optim.SGD([(wn, w), b], lr=0.1)
        with pytest.raises(ValueError, match="cannot add param group without names"):
            lib.optim.SGD([{"params": [(wn, w)]}, {"params": [b]}], lr=0.1)
        opt = lib.optim.SGD([w], lr=0.1)
        with pytest.raises(ValueError, match="cannot add param group with names"):
            opt.add_param_group({"params": [(bn, b)]})


# -- 8. RMSprop's state dict and the optimizers' param_groups keys ------------------------------


def test_rmsprop_state_dict_like_torch():
    for kwargs in ({}, {"momentum": 0.9, "centered": True}):
        fm, fo = _named_run(flow, "RMSprop", lambda m: m.parameters(), **kwargs)
        tm, to = _named_run(torch, "RMSprop", lambda m: m.parameters(), **kwargs)
        fsd, tsd = fo.state_dict(), to.state_dict()
        step = fsd["state"][0]["step"]
        assert isinstance(step, flow.Tensor) and step.dtype == flow.float32
        assert tuple(step.shape) == () and float(step) == 3.0
        _same_state_dict(fsd, tsd)
        # and each loads into the other
        fo2 = flow.optim.RMSprop(_linear(flow).parameters(), **kwargs)
        fo2.load_state_dict(
            {
                "state": {
                    k: {n: flow.tensor(_to_np(v)) for n, v in s.items()}
                    for k, s in tsd["state"].items()
                },
                "param_groups": tsd["param_groups"],
            }
        )
        assert float(fo2.state[fo2.param_groups[0]["params"][0]]["step"]) == 3.0


@pytest.mark.parametrize(
    "name", ["RMSprop", "Adagrad", "Adadelta", "NAdam", "RAdam", "Adamax", "ASGD", "Rprop"]
)
def test_param_group_keys_like_torch(name):
    fo = getattr(flow.optim, name)([flow.nn.Parameter(flow.ones(2))], lr=0.1)
    to = getattr(torch.optim, name)([torch.nn.Parameter(torch.ones(2))], lr=0.1)
    fg, tg = fo.param_groups[0], to.param_groups[0]
    assert set(fg) == set(tg)
    for key in ("foreach", "differentiable", "capturable", "fused"):
        if key in tg:
            assert fg[key] == tg[key], key


def test_adadelta_step_is_a_tensor_like_torch():
    fm, fo = _named_run(flow, "Adadelta", lambda m: m.parameters())
    tm, to = _named_run(torch, "Adadelta", lambda m: m.parameters())
    _same_state_dict(fo.state_dict(), to.state_dict())
    step = fo.state_dict()["state"][0]["step"]
    assert isinstance(step, flow.Tensor) and step.dtype == flow.float32
    assert math.isclose(float(step), 3.0)
