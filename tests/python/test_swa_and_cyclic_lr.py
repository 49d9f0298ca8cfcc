"""CyclicLR and torch.optim.swa_utils' AveragedModel, SWALR, update_bn and averaging functions
against PyTorch step by step."""

import numpy as np
import pytest
import torch

import oneflow as flow


def _pair(seed=0):
    torch.manual_seed(seed)
    tm = torch.nn.Sequential(
        torch.nn.Linear(4, 8), torch.nn.BatchNorm1d(8), torch.nn.ReLU(), torch.nn.Linear(8, 2)
    )
    fm = flow.nn.Sequential(
        flow.nn.Linear(4, 8), flow.nn.BatchNorm1d(8), flow.nn.ReLU(), flow.nn.Linear(8, 2)
    )
    fm.load_state_dict({k: v.detach().numpy() for k, v in tm.state_dict().items()})
    return fm, tm


def _optimizers(fm, tm, name, **kw):
    fo = getattr(flow.optim, name)(fm.parameters(), **kw)
    to = getattr(torch.optim, name)(tm.parameters(), **kw)
    return fo, to


@pytest.mark.parametrize(
    "kw",
    [
        dict(mode="triangular"),
        dict(mode="triangular2", step_size_down=3),
        dict(mode="exp_range", gamma=0.9),
        dict(scale_fn=lambda x: 0.5**x, scale_mode="iterations"),
        dict(cycle_momentum=False, base_lr=[0.01, 0.02, 0.03, 0.04], max_lr=0.5),
    ],
)
@pytest.mark.parametrize("opt", ["SGD", "Adam"])
def test_cyclic_lr_like_torch(kw, opt):
    fm, tm = _pair()
    kw = dict(kw)
    groups = isinstance(kw.get("base_lr"), list)
    if groups:  # one group per parameter tensor
        fo = getattr(flow.optim, opt)([{"params": [p]} for p in fm.parameters()][:4], lr=0.1)
        to = getattr(torch.optim, opt)([{"params": [p]} for p in tm.parameters()][:4], lr=0.1)
    else:
        extra = {"momentum": 0.9} if opt == "SGD" else {}
        fo, to = _optimizers(fm, tm, opt, lr=0.1, **extra)
        kw.setdefault("base_lr", 0.01)
        kw.setdefault("max_lr", 0.1)
    if opt == "SGD" and groups:
        kw["cycle_momentum"] = False
    fs = flow.optim.lr_scheduler.CyclicLR(fo, step_size_up=4, **kw)
    ts = torch.optim.lr_scheduler.CyclicLR(to, step_size_up=4, **kw)
    for _ in range(25):
        assert np.allclose(fs.get_last_lr(), ts.get_last_lr(), rtol=1e-12)
        for fg, tg in zip(fo.param_groups, to.param_groups):
            assert fg["lr"] == pytest.approx(tg["lr"], rel=1e-12)
            for key in ("momentum", "betas"):
                if key in tg:
                    assert np.allclose(fg[key], tg[key], rtol=1e-12), key
        fo.step()
        to.step()
        fs.step()
        ts.step()
    state = fs.state_dict()
    assert state.keys() == ts.state_dict().keys()
    assert state["_scale_fn_custom"] is None  # a function is passed again, as in PyTorch
    fs2 = flow.optim.lr_scheduler.CyclicLR(fo, step_size_up=4, **kw)
    fs2.load_state_dict(state)
    assert fs2.last_epoch == fs.last_epoch and fs2.get_last_lr() == fs.get_last_lr()


def test_cyclic_lr_errors_like_torch():
    fm, _ = _pair()
    with pytest.raises(ValueError, match="mode is invalid"):
        flow.optim.lr_scheduler.CyclicLR(
            flow.optim.SGD(fm.parameters(), lr=0.1), 0.01, 0.1, mode="x"
        )
    with pytest.raises(ValueError, match="must support momentum or beta1"):
        flow.optim.lr_scheduler.CyclicLR(flow.optim.Adagrad(fm.parameters(), lr=0.1), 0.01, 0.1)


@pytest.mark.parametrize("strategy", ["cos", "linear"])
@pytest.mark.parametrize("anneal_epochs", [0, 1, 5])
def test_swalr_like_torch(strategy, anneal_epochs):
    fm, tm = _pair()
    fo, to = _optimizers(fm, tm, "SGD", lr=0.5)
    fs = flow.optim.swa_utils.SWALR(
        fo, swa_lr=0.05, anneal_epochs=anneal_epochs, anneal_strategy=strategy
    )
    ts = torch.optim.swa_utils.SWALR(
        to, swa_lr=0.05, anneal_epochs=anneal_epochs, anneal_strategy=strategy
    )
    for _ in range(8):
        assert fs.get_last_lr() == pytest.approx(ts.get_last_lr(), rel=1e-12)
        fo.step()
        to.step()
        fs.step()
        ts.step()
    with pytest.raises(ValueError, match="anneal_strategy"):
        flow.optim.swa_utils.SWALR(fo, 0.1, anneal_strategy="step")
    with pytest.raises(ValueError, match="anneal_epochs"):
        flow.optim.swa_utils.SWALR(fo, 0.1, anneal_epochs=-1)


@pytest.mark.parametrize("kind", ["swa", "ema", "ema_multi", "swa_multi", "buffers"])
def test_averaged_model_like_torch(kind):
    fm, tm = _pair(1)
    kw = {
        "swa": ({}, {}),
        "ema": (
            dict(avg_fn=flow.optim.swa_utils.get_ema_avg_fn(0.9)),
            dict(avg_fn=torch.optim.swa_utils.get_ema_avg_fn(0.9)),
        ),
        "ema_multi": (
            dict(multi_avg_fn=flow.optim.swa_utils.get_ema_multi_avg_fn(0.9)),
            dict(multi_avg_fn=torch.optim.swa_utils.get_ema_multi_avg_fn(0.9)),
        ),
        "swa_multi": (
            dict(multi_avg_fn=flow.optim.swa_utils.get_swa_multi_avg_fn()),
            dict(multi_avg_fn=torch.optim.swa_utils.get_swa_multi_avg_fn()),
        ),
        "buffers": (dict(use_buffers=True), dict(use_buffers=True)),
    }[kind]
    fa = flow.optim.swa_utils.AveragedModel(fm, **kw[0])
    ta = torch.optim.swa_utils.AveragedModel(tm, **kw[1])
    fo, to = _optimizers(fm, tm, "SGD", lr=0.1)
    rng = np.random.default_rng(2)
    for _ in range(5):
        x = rng.standard_normal((6, 4)).astype(np.float32)
        for m, o, a, lib in ((fm, fo, fa, flow), (tm, to, ta, torch)):
            o.zero_grad()
            m(lib.tensor(x)).square().sum().backward()
            o.step()
            a.update_parameters(m)
    fs, ts = fa.state_dict(), ta.state_dict()
    assert list(fs) == list(ts)
    for k in ts:
        np.testing.assert_allclose(fs[k].numpy(), ts[k].numpy(), rtol=1e-5, atol=1e-6, err_msg=k)
    x = rng.standard_normal((3, 4)).astype(np.float32)
    fa.eval()
    ta.eval()
    np.testing.assert_allclose(
        fa(flow.tensor(x)).detach().numpy(),
        ta(torch.tensor(x)).detach().numpy(),
        rtol=1e-5,
        atol=1e-6,
    )


def test_update_bn_like_torch():
    fm, tm = _pair(3)
    rng = np.random.default_rng(4)
    batches = [rng.standard_normal((5, 4)).astype(np.float32) for _ in range(4)]
    fm.eval()
    tm.eval()
    flow.optim.swa_utils.update_bn([flow.tensor(b) for b in batches], fm)
    torch.optim.swa_utils.update_bn([torch.tensor(b) for b in batches], tm)
    assert not fm.training and fm[1].momentum == tm[1].momentum == 0.1
    fs, ts = fm.state_dict(), tm.state_dict()
    for k in ("1.running_mean", "1.running_var", "1.num_batches_tracked"):
        np.testing.assert_allclose(fs[k].numpy(), ts[k].numpy(), rtol=1e-5, atol=1e-6, err_msg=k)
    # (input, target) batches use their first element
    flow.optim.swa_utils.update_bn([(flow.tensor(b), 0) for b in batches], fm)
    np.testing.assert_allclose(
        fm.state_dict()["1.running_mean"].numpy(),
        ts["1.running_mean"].numpy(),
        rtol=1e-5,
        atol=1e-6,
    )


def test_ema_with_buffers_of_a_batch_norm_model_and_decay_checks_like_torch():
    fm, tm = _pair(5)
    fa = flow.optim.swa_utils.AveragedModel(
        fm, multi_avg_fn=flow.optim.swa_utils.get_ema_multi_avg_fn(0.9), use_buffers=True
    )
    ta = torch.optim.swa_utils.AveragedModel(
        tm, multi_avg_fn=torch.optim.swa_utils.get_ema_multi_avg_fn(0.9), use_buffers=True
    )
    rng = np.random.default_rng(6)
    for _ in range(3):
        x = rng.standard_normal((6, 4)).astype(np.float32)
        fm(flow.tensor(x))
        tm(torch.tensor(x))
        fa.update_parameters(fm)
        ta.update_parameters(tm)
    for k, v in ta.state_dict().items():
        np.testing.assert_allclose(
            fa.state_dict()[k].numpy(), v.numpy(), rtol=1e-5, atol=1e-6, err_msg=k
        )
    for fn in ("get_ema_avg_fn", "get_ema_multi_avg_fn"):
        with pytest.raises(ValueError, match="Invalid decay value"):
            getattr(flow.optim.swa_utils, fn)(1.5)


@pytest.mark.parametrize(
    "kw",
    [
        {},
        dict(lr=0.05, weight_decay=0.1),
        dict(maximize=True, d=2.0),
        dict(eps=(1e-20, 1e-2), beta2_decay=-0.5),
    ],
)
def test_adafactor_like_torch(kw):
    torch.manual_seed(7)
    tm = torch.nn.Sequential(torch.nn.Linear(6, 5), torch.nn.Tanh(), torch.nn.Linear(5, 1))
    fm = flow.nn.Sequential(flow.nn.Linear(6, 5), flow.nn.Tanh(), flow.nn.Linear(5, 1))
    fm.load_state_dict({k: v.detach().numpy() for k, v in tm.state_dict().items()})
    extra = torch.nn.Parameter(torch.randn(3, 4, 5))  # factored over the last two dims
    fextra = flow.nn.Parameter(flow.tensor(extra.detach().numpy()))
    fo = flow.optim.Adafactor(list(fm.parameters()) + [fextra], **kw)
    to = torch.optim.Adafactor(list(tm.parameters()) + [extra], **kw)
    rng = np.random.default_rng(8)
    for _ in range(6):
        x = rng.standard_normal((7, 6)).astype(np.float32)
        for m, o, e, lib in ((fm, fo, fextra, flow), (tm, to, extra, torch)):
            o.zero_grad()
            (m(lib.tensor(x)).square().sum() + (e * e).sum()).backward()
            o.step()
    for (n, p), q in zip(tm.named_parameters(), fm.parameters()):
        np.testing.assert_allclose(
            q.detach().numpy(), p.detach().numpy(), rtol=1e-5, atol=1e-6, err_msg=n
        )
    np.testing.assert_allclose(
        fextra.detach().numpy(), extra.detach().numpy(), rtol=1e-5, atol=1e-6
    )
    with pytest.raises(ValueError, match="beta2_decay"):
        flow.optim.Adafactor(fm.parameters(), beta2_decay=0.5)
