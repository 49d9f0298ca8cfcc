"""nn.Module, containers, losses, optimizers, LR schedulers and data utilities behaving as
PyTorch's: each test runs the same code on torch and oneflow and compares what comes out."""

import collections
import inspect
import warnings
from importlib import import_module

import numpy as np
import pytest
import torch

import oneflow as flow

LIBS = (torch, flow)


def _np(t):
    return None if t is None else t.detach().numpy()


def _data(lib):
    return import_module(lib.__name__ + ".utils.data")


def _raised(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return type(e)
    return None


# ---- state dicts --------------------------------------------------------------------------


def _shared(lib, tie_weight_only):
    class M(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = lib.nn.Linear(2, 2)
            if tie_weight_only:
                self.b = lib.nn.Linear(2, 2)
                self.b.weight = self.a.weight
            else:
                self.b = self.a

    return M()


@pytest.mark.parametrize("tie_weight_only", [False, True])
def test_load_own_state_dict_with_shared_submodule_or_parameter(tie_weight_only):
    for lib in LIBS:
        m = _shared(lib, tie_weight_only)
        sd = m.state_dict()
        assert list(sd) == ["a.weight", "a.bias", "b.weight", "b.bias"]
        result = m.load_state_dict(sd)
        assert (result.missing_keys, result.unexpected_keys) == ([], [])


def test_batchnorm_loads_checkpoint_without_num_batches_tracked():
    for lib in LIBS:
        bn = lib.nn.BatchNorm1d(2)
        bn.num_batches_tracked.fill_(5)
        old = {k: v for k, v in bn.state_dict().items() if k != "num_batches_tracked"}
        assert bn.load_state_dict(old).missing_keys == []
        assert int(bn.num_batches_tracked) == 5
        current = bn.state_dict()
        del current["num_batches_tracked"]
        with pytest.raises(RuntimeError, match="num_batches_tracked"):
            bn.load_state_dict(current)


def test_reassigned_parameter_keeps_its_position():
    for lib in LIBS:
        m = lib.nn.Linear(2, 2)
        m.weight = lib.nn.Parameter(lib.ones(2, 2))
        assert [n for n, _ in m.named_parameters()] == ["weight", "bias"]
        assert list(m.state_dict()) == ["weight", "bias"]


# ---- dtype moves ------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["double", "half", "float", "to"])
def test_dtype_move_keeps_parameter_objects(method):
    results = []
    for lib in LIBS:
        m = lib.nn.Linear(2, 1)
        with lib.no_grad():
            m.weight.copy_(lib.tensor([[1.0, 2.0]]))
            m.bias.zero_()
        w, b = m.weight, m.bias
        w.grad = lib.ones(1, 2)
        g = w.grad
        opt = lib.optim.SGD(m.parameters(), lr=0.5)
        dtype = {"double": lib.float64, "half": lib.float16, "float": lib.float32}
        if method == "to":
            m.to(lib.float64)
        else:
            getattr(m, method)()
        target = lib.float64 if method == "to" else dtype[method]
        assert m.weight is w and m.bias is b and w.grad is g
        assert w.dtype == target and g.dtype == target
        m.zero_grad()
        if target != lib.float16:
            m(lib.ones(1, 2, dtype=target)).sum().backward()
            opt.step()
        results.append(_np(m.weight.float()))
    np.testing.assert_allclose(results[0], results[1])


def test_cpu_and_to_device_keep_parameter_objects():
    for lib in LIBS:
        m = lib.nn.Linear(2, 1)
        w = m.weight
        m.cpu()
        m.to("cpu")
        m.to(device="cpu", dtype=lib.float64)
        assert m.weight is w and w.dtype == lib.float64


def test_zero_grad_without_set_to_none_zeros_in_place():
    for lib in LIBS:
        m = lib.nn.Linear(2, 2)
        m(lib.ones(1, 2)).sum().backward()
        g = m.weight.grad
        m.zero_grad(set_to_none=False)
        assert m.weight.grad is g
        np.testing.assert_array_equal(_np(g), np.zeros((2, 2)))


# ---- backward hooks ----------------------------------------------------------------------------


def _hooked_linear(lib, hook, pre_hook=None):
    m = lib.nn.Linear(2, 2)
    with lib.no_grad():
        m.weight.copy_(lib.tensor([[1.0, 2.0], [3.0, 4.0]]))
        m.bias.zero_()
    if hook is not None:
        m.register_full_backward_hook(hook)
    if pre_hook is not None:
        m.register_full_backward_pre_hook(pre_hook)
    return m


def test_full_backward_hook_sees_input_grads_and_replaces_only_them():
    def run(lib):
        seen = {}

        def hook(module, grad_input, grad_output):
            seen["gi"] = [_np(g) for g in grad_input]
            seen["go"] = [_np(g) for g in grad_output]
            return (grad_input[0] * 10,)

        m = _hooked_linear(lib, hook)
        x = lib.ones(1, 2, requires_grad=True)
        m(x).sum().backward()
        return seen, _np(x.grad), _np(m.weight.grad), _np(m.bias.grad)

    out = [run(lib) for lib in LIBS]
    (s_t, *r_t), (s_f, *r_f) = out
    np.testing.assert_allclose(s_f["gi"][0], s_t["gi"][0])
    np.testing.assert_allclose(s_f["go"][0], s_t["go"][0])
    np.testing.assert_allclose(s_t["gi"][0], [[4.0, 6.0]])
    for a, b in zip(r_t, r_f):
        np.testing.assert_allclose(b, a)


def test_full_backward_hook_with_inputs_not_requiring_grad():
    def run(lib):
        seen = {}

        def hook(module, grad_input, grad_output):
            seen["v"] = ([g is None for g in grad_input], _np(grad_output[0]))

        m = _hooked_linear(lib, hook)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m(lib.ones(1, 2)).sum().backward()
        return seen["v"]

    out = [run(lib) for lib in LIBS]
    assert out[0][0] == out[1][0] == [True]
    np.testing.assert_allclose(out[1][1], out[0][1])


def test_full_backward_hook_fires_for_tuple_outputs():
    def run(lib):
        seen = []

        def hook(module, grad_input, grad_output):
            seen.append(
                (
                    [g is None for g in grad_input],
                    [None if g is None else tuple(g.shape) for g in grad_output],
                )
            )

        lstm = lib.nn.LSTM(2, 3)
        lstm.register_full_backward_hook(hook)
        y, _ = lstm(lib.randn(4, 1, 2, requires_grad=True))
        y.sum().backward()
        return seen

    out = [run(lib) for lib in LIBS]
    assert out[0] == out[1] == [([False], [(4, 1, 3), None])]


def test_full_backward_pre_hook_replaces_grad_output():
    out = []
    for lib in LIBS:
        m = _hooked_linear(lib, None, lambda module, go: (go[0] * 2,))
        x = lib.ones(1, 2, requires_grad=True)
        m(x).sum().backward()
        out.append((_np(x.grad), _np(m.weight.grad), _np(m.bias.grad)))
    for a, b in zip(*out):
        np.testing.assert_allclose(b, a)


# ---- losses ------------------------------------------------------------------------------------


def _loss_names():
    return sorted(
        n
        for n in dir(torch.nn)
        if n.endswith("Loss") and isinstance(getattr(torch.nn, n), type) and hasattr(flow.nn, n)
    )


@pytest.mark.parametrize("name", _loss_names())
def test_loss_constructor_signature(name):
    def params(cls):
        return [
            (p.name, p.default, p.kind)
            for p in inspect.signature(cls).parameters.values()
            if p.name != "self"
        ]

    assert params(getattr(flow.nn, name)) == params(getattr(torch.nn, name))


@pytest.mark.parametrize(
    "name, args, attrs",
    [
        ("HuberLoss", ("sum", 2.0), {"reduction": "sum", "delta": 2.0}),
        ("TripletMarginLoss", (0.5, 1.0, 1e-3, True), {"margin": 0.5, "p": 1.0, "swap": True}),
        ("MarginRankingLoss", (0.3,), {"margin": 0.3, "reduction": "mean"}),
        ("HingeEmbeddingLoss", (2.0,), {"margin": 2.0}),
        ("CosineEmbeddingLoss", (0.1,), {"margin": 0.1}),
        ("PoissonNLLLoss", (False, True, None, 1e-3), {"log_input": False, "eps": 1e-3}),
        ("CrossEntropyLoss", (None, None, 3), {"ignore_index": 3}),
        ("NLLLoss", (None, None, 2, None, "sum"), {"ignore_index": 2, "reduction": "sum"}),
    ],
)
def test_loss_positional_arguments(name, args, attrs):
    for lib in LIBS:
        loss = getattr(lib.nn, name)(*args)
        for k, v in attrs.items():
            assert getattr(loss, k) == v, (lib.__name__, k)


@pytest.mark.parametrize("lib", LIBS, ids=["torch", "oneflow"])
def test_loss_rejects_arguments_torch_rejects(lib):
    assert _raised(lambda: lib.nn.HuberLoss(size_average=True)) is TypeError
    assert _raised(lambda: lib.nn.GaussianNLLLoss(True)) is TypeError


def test_gaussian_nll_loss_var_clamp_passes_gradient_through():
    out = []
    for lib in LIBS:
        v = lib.tensor([0.001, 2.0], requires_grad=True)
        loss = lib.nn.GaussianNLLLoss(eps=0.1)(lib.tensor([0.5, 1.0]), lib.zeros(2), v)
        loss.backward()
        out.append((_np(loss), _np(v.grad)))
    np.testing.assert_allclose(out[1][0], out[0][0], rtol=1e-6)
    np.testing.assert_allclose(out[1][1], out[0][1], rtol=1e-6)


# ---- LR schedulers and optimizers ------------------------------------------------------------


def test_scheduler_base_lrs_from_lr_at_construction():
    for lib in LIBS:
        p = lib.nn.Parameter(lib.ones(1))
        opt = lib.optim.SGD([p], lr=0.1)
        assert "initial_lr" not in opt.param_groups[0]
        assert "initial_lr" not in opt.state_dict()["param_groups"][0]
        opt.param_groups[0]["lr"] = 0.5
        s = lib.optim.lr_scheduler.LambdaLR(opt, lambda e: 1.0)
        assert opt.state_dict()["param_groups"][0]["initial_lr"] == 0.5
        opt.step()
        s.step()
        assert s.get_last_lr() == [0.5] and s.base_lrs == [0.5]


_RESUMABLE = [
    ("ExponentialLR", {"gamma": 0.5}),
    ("LinearLR", {"start_factor": 0.5, "total_iters": 4}),
    ("CosineAnnealingLR", {"T_max": 10}),
    ("PolynomialLR", {"total_iters": 6}),
    ("MultiplicativeLR", {"lr_lambda": lambda e: 0.9}),
    ("StepLR", {"step_size": 2}),
]


@pytest.mark.parametrize("name, kwargs", _RESUMABLE, ids=[n for n, _ in _RESUMABLE])
def test_resumed_scheduler_takes_no_extra_step(name, kwargs):
    seqs = []
    for lib in LIBS:
        p = lib.nn.Parameter(lib.ones(1))
        opt = lib.optim.SGD([{"params": [p], "initial_lr": 1.0, "lr": 0.5}], lr=0.5)
        s = getattr(lib.optim.lr_scheduler, name)(opt, last_epoch=3, **kwargs)
        seq = [opt.param_groups[0]["lr"]]
        for _ in range(4):
            opt.step()
            s.step()
            seq.append(opt.param_groups[0]["lr"])
        seqs.append(seq)
        fresh = lib.optim.SGD([p], lr=0.5)
        with pytest.raises(KeyError):
            getattr(lib.optim.lr_scheduler, name)(fresh, last_epoch=3, **kwargs)
    np.testing.assert_allclose(seqs[1], seqs[0], rtol=1e-6)


def test_adagrad_after_add_param_group():
    out = []
    for lib in LIBS:
        a, b = lib.nn.Parameter(lib.ones(2)), lib.nn.Parameter(lib.ones(2))
        opt = lib.optim.Adagrad([a], lr=0.1, initial_accumulator_value=0.25)
        opt.add_param_group({"params": [b], "initial_accumulator_value": 0.5})
        for _ in range(2):
            opt.zero_grad()
            (a.sum() + (b * b).sum()).backward()
            opt.step()
        out.append((_np(a), _np(b), _np(opt.state[b]["sum"])))
    for x, y in zip(*out):
        np.testing.assert_allclose(y, x, rtol=1e-6)


# ---- containers ----------------------------------------------------------------------------


@pytest.mark.parametrize("lib", LIBS, ids=["torch", "oneflow"])
def test_parameter_list_index_out_of_range(lib):
    pl = lib.nn.ParameterList([lib.nn.Parameter(lib.ones(1)), lib.nn.Parameter(lib.zeros(1))])
    assert _raised(lambda: pl[2]) is IndexError
    assert _raised(lambda: pl[-3]) is IndexError
    assert _raised(lambda: lib.nn.ParameterList()[0]) is IndexError
    assert _raised(lambda: pl.__setitem__(2, lib.nn.Parameter(lib.ones(1)))) is IndexError
    assert float(pl[-1].detach()) == 0.0


def test_parameter_dict_key_order():
    def run(lib):
        def p():
            return lib.nn.Parameter(lib.ones(1))

        plain = lib.nn.ParameterDict({"b": p(), "a": p()})
        ordered = lib.nn.ParameterDict(collections.OrderedDict([("b", p()), ("a", p())]))
        pairs = lib.nn.ParameterDict([("b", p()), ("a", p())])
        pairs.update({"d": p(), "c": p()})
        return [list(d.keys()) for d in (plain, ordered, pairs)]

    assert run(flow) == run(torch)


# ---- recurrent and attention layers ----------------------------------------------------------


_RNN_CASES = {
    "empty_sequence": lambda L: L.nn.LSTM(2, 3)(L.randn(0, 1, 2)),
    "gru_empty_sequence": lambda L: L.nn.GRU(2, 3)(L.randn(0, 1, 2)),
    "h0_layers": lambda L: L.nn.LSTM(2, 3)(L.randn(4, 1, 2), (L.zeros(2, 1, 3), L.zeros(1, 1, 3))),
    "c0_layers": lambda L: L.nn.LSTM(2, 3)(L.randn(4, 1, 2), (L.zeros(1, 1, 3), L.zeros(2, 1, 3))),
    "h0_batch": lambda L: L.nn.LSTM(2, 3)(L.randn(4, 1, 2), (L.zeros(1, 2, 3), L.zeros(1, 1, 3))),
    "gru_h0_layers": lambda L: L.nn.GRU(2, 3, num_layers=2)(L.randn(4, 1, 2), L.zeros(1, 1, 3)),
    "rnn_h0_rank": lambda L: L.nn.RNN(2, 3)(L.randn(4, 1, 2), L.zeros(1, 3)),
    "rnn_unbatched_h0_rank": lambda L: L.nn.RNN(2, 3)(L.randn(4, 2), L.zeros(1, 1, 3)),
    "bidirectional_h0": lambda L: L.nn.GRU(2, 3, bidirectional=True)(
        L.randn(4, 1, 2), L.zeros(1, 1, 3)
    ),
}


@pytest.mark.parametrize("case", sorted(_RNN_CASES))
def test_rnn_rejects_bad_input_or_hidden(case):
    fn = _RNN_CASES[case]
    expected = _raised(lambda: fn(torch))
    assert expected is RuntimeError
    assert _raised(lambda: fn(flow)) is expected


def test_rnn_accepts_matching_unbatched_hidden():
    for lib in LIBS:
        out, (h, c) = lib.nn.LSTM(2, 3)(lib.randn(4, 2), (lib.zeros(1, 3), lib.zeros(1, 3)))
        assert tuple(out.shape) == (4, 3) and tuple(h.shape) == (1, 3)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("average", [True, False])
def test_multihead_attention_unbatched(batch_first, average):
    rng = np.random.default_rng(0)
    q = rng.standard_normal((3, 4)).astype(np.float32)
    k = rng.standard_normal((5, 4)).astype(np.float32)
    mask = np.array([False, False, True, False, False])
    tm = torch.nn.MultiheadAttention(4, 2, batch_first=batch_first)
    fm = flow.nn.MultiheadAttention(4, 2, batch_first=batch_first)
    fm.load_state_dict({n: flow.tensor(_np(v)) for n, v in tm.state_dict().items()})
    results = []
    for lib, m in ((torch, tm), (flow, fm)):
        out, w = m(
            lib.tensor(q),
            lib.tensor(k),
            lib.tensor(k),
            key_padding_mask=lib.tensor(mask),
            average_attn_weights=average,
        )
        results.append((_np(out), _np(w)))
    for a, b in zip(*results):
        assert a.shape == b.shape
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


# ---- data utilities and init ------------------------------------------------------------------


def _describe(x, lib):
    if isinstance(x, lib.Tensor):
        return ("tensor", tuple(x.shape), str(x.dtype).split(".")[-1])
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [_describe(e, lib) for e in x])
    if isinstance(x, dict):
        return {k: _describe(v, lib) for k, v in x.items()}
    return x


_P = collections.namedtuple("_P", "a b")

_COLLATE_CASES = {
    "zero_dim_arrays": [np.array(1.5), np.array(2.0)],
    "tuples": [(1, 2.0), (3, 4.0)],
    "lists": [[1, 2.0], [3, 4.0]],
    "namedtuples": [_P(1, 2.0), _P(3, 4.0)],
    "numpy_scalars": [np.float64(2.0), np.float64(3.0)],
    "dict_of_zero_dim": [{"a": np.array(1.0)}, {"a": np.array(2.0)}],
}


@pytest.mark.parametrize("case", sorted(_COLLATE_CASES))
def test_default_collate(case):
    batch = _COLLATE_CASES[case]
    expected = _describe(_data(torch).default_collate(batch), torch)
    assert _describe(_data(flow).default_collate(batch), flow) == expected


@pytest.mark.parametrize(
    "value", [np.float64(2.0), np.int32(2), np.bool_(True), np.array(1.5), [np.float64(1.0)]]
)
def test_default_convert(value):
    expected = _describe(_data(torch).default_convert(value), torch)
    assert _describe(_data(flow).default_convert(value), flow) == expected


@pytest.mark.parametrize("lengths", [[-0.5, 1.5], [1.2, -0.2], [0.5, 0.5], [0.25, 0.25, 0.5]])
def test_random_split_fractions(lengths):
    outcomes = []
    for lib in LIBS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                parts = _data(lib).random_split(range(4), lengths)
                outcomes.append([len(p) for p in parts])
            except ValueError:
                outcomes.append(ValueError)
    assert outcomes[0] == outcomes[1]


@pytest.mark.parametrize("lib", LIBS, ids=["torch", "oneflow"])
def test_dirac_groups_must_divide_out_channels(lib):
    assert _raised(lambda: lib.nn.init.dirac_(lib.empty(3, 2, 3), groups=2)) is ValueError
    assert _raised(lambda: lib.nn.init.dirac_(lib.empty(4, 2, 3), groups=2)) is None


@pytest.mark.parametrize(
    "make",
    [
        lambda nn: nn.LeakyReLU(0.2, inplace=True),
        lambda nn: nn.ELU(0.7, inplace=True),
        lambda nn: nn.CELU(1.3, inplace=True),
        lambda nn: nn.SELU(inplace=True),
        lambda nn: nn.Hardtanh(-0.5, 0.5, inplace=True),
        lambda nn: nn.ReLU6(inplace=True),
        lambda nn: nn.SiLU(inplace=True),
        lambda nn: nn.Mish(inplace=True),
        lambda nn: nn.Hardsigmoid(inplace=True),
        lambda nn: nn.Hardswish(inplace=True),
        lambda nn: nn.Threshold(0.1, -2.0, inplace=True),
        lambda nn: nn.ReLU(inplace=True),
    ],
)
def test_in_place_activations_inside_a_graph_like_torch(make):
    # Module(inplace=True) after a layer (DCGAN's LeakyReLU(0.2, inplace=True)): the backward
    # must not trip over the overwritten input.
    rng = np.random.default_rng(8)
    x = rng.standard_normal((4, 6)).astype(np.float64) * 3
    w = rng.standard_normal((6, 6)).astype(np.float64)
    grads = []
    for lib in (flow, torch):
        a = lib.tensor(x, requires_grad=True)
        h = a @ lib.tensor(w)
        y = make(lib.nn)(h)
        assert y is h
        (y * y).sum().backward()
        grads.append((y.detach().numpy(), a.grad.numpy()))
    # PyTorch's float64 backward of CELU and Hardsigmoid multiplies by float constants (1/alpha,
    # 1/6): ~1e-8 off the float64 formula, which these kernels follow.
    rtol = 1e-7 if isinstance(make(torch.nn), (torch.nn.CELU, torch.nn.Hardsigmoid)) else 1e-10
    for g, t in zip(*grads):
        np.testing.assert_allclose(g, t, rtol=rtol, atol=1e-12)


@pytest.mark.parametrize("name", ["dropout", "alpha_dropout"])
def test_in_place_dropout_inside_a_graph(name):
    a = flow.randn(64, 32, dtype=flow.float64, requires_grad=True)
    h = a * 2
    y = getattr(flow.nn.functional, name)(h, 0.3, training=True, inplace=True)
    assert y is h
    y.sum().backward()
    # d y / d a = 2 * (the mask's scale) where kept; dropout zeroes the rest
    g = a.grad.numpy()
    assert np.isfinite(g).all() and len(np.unique(np.round(g, 12))) <= 2


@pytest.mark.parametrize("mask_kind", ["bool", "float"])
def test_attention_rows_with_every_key_masked_give_zeros_like_torch(mask_kind):
    # left padding under a causal mask: query 0 may attend to nothing (PyTorch 2.13: zeros, and
    # finite gradients)
    a = np.random.default_rng(0).standard_normal((2, 2, 3, 4)).astype(np.float32)
    keep = np.array([False, True, True])
    allowed = np.tril(np.ones((3, 3), bool)) & keep
    res = []
    for T in (torch, flow):
        q = T.tensor(a, requires_grad=True)
        mask = T.tensor(allowed)
        if mask_kind == "float":
            mask = T.zeros(3, 3).masked_fill(~mask, float("-inf"))
        o = T.nn.functional.scaled_dot_product_attention(q, q * 0.5, q * 2.0, attn_mask=mask)
        o.square().sum().backward()
        res.append((o.detach().numpy().copy(), q.grad.numpy().copy()))
    assert (res[1][0][:, :, 0] == 0).all()
    np.testing.assert_allclose(res[1][0], res[0][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(res[1][1], res[0][1], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("need_weights", [False, True])
def test_multihead_attention_with_a_fully_padded_sequence_like_torch(need_weights):
    torch.manual_seed(0)
    tm = torch.nn.MultiheadAttention(4, 2, batch_first=True)
    fm = flow.nn.MultiheadAttention(4, 2, batch_first=True)
    fm.load_state_dict({k: flow.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    x = np.random.default_rng(1).standard_normal((2, 3, 4)).astype(np.float32)
    pad = np.array([[True, True, True], [False, False, True]])
    to, _ = tm(
        *(torch.tensor(x),) * 3, key_padding_mask=torch.tensor(pad), need_weights=need_weights
    )
    fo, _ = fm(*(flow.tensor(x),) * 3, key_padding_mask=flow.tensor(pad), need_weights=need_weights)
    # without weights: zeros through the output projection (its bias); with them: NaN, as torch
    np.testing.assert_allclose(fo.detach().numpy(), to.detach().numpy(), rtol=1e-5, atol=1e-6)


MHA_CONFIGS = {
    "kdim_vdim": dict(kdim=6, vdim=5),
    "bias_kv": dict(add_bias_kv=True),
    "zero_attn": dict(add_zero_attn=True),
    "all": dict(kdim=6, vdim=5, add_bias_kv=True, add_zero_attn=True, bias=False),
}


@pytest.mark.parametrize("name", sorted(MHA_CONFIGS))
@pytest.mark.parametrize("batch_first", [False, True])
def test_multihead_attention_options_match_torch(name, batch_first):
    cfg = MHA_CONFIGS[name]
    torch.manual_seed(0)
    tm = torch.nn.MultiheadAttention(8, 2, batch_first=batch_first, **cfg)
    fm = flow.nn.MultiheadAttention(8, 2, batch_first=batch_first, **cfg)
    sd = tm.state_dict()
    assert sorted(fm.state_dict()) == sorted(sd)
    fm.load_state_dict({k: flow.tensor(v.numpy()) for k, v in sd.items()})
    rng = np.random.default_rng(2)
    kd, vd = cfg.get("kdim", 8), cfg.get("vdim", 8)
    shape = (lambda s, d: (2, s, d)) if batch_first else (lambda s, d: (s, 2, d))
    q, k, v = (
        rng.standard_normal(shape(3, 8)),
        rng.standard_normal(shape(4, kd)),
        rng.standard_normal(shape(4, vd)),
    )
    pad = np.array([[False, False, True, True], [False, False, False, False]])
    mask = np.triu(np.ones((3, 4), bool), 2)
    res = []
    for T, m in ((torch, tm), (flow, fm)):
        args = [T.tensor(a.astype(np.float32), requires_grad=True) for a in (q, k, v)]
        out, w = m(*args, key_padding_mask=T.tensor(pad), attn_mask=T.tensor(mask))
        (out.square().sum() + w.sum()).backward()
        res.append([out.detach().numpy(), w.detach().numpy()] + [a.grad.numpy() for a in args])
        res[-1] += [p.grad.numpy() for p in m.parameters()]
    for got, want in zip(res[1], res[0]):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_functional_multi_head_attention_forward_takes_torchs_signature():
    torch.manual_seed(0)
    E, H = 8, 2
    w_in, b_in = torch.randn(3 * E, E), torch.randn(3 * E)
    w_out, b_out = torch.randn(E, E), torch.randn(E)
    x = torch.randn(5, 3, E)  # (L, N, E)
    want, want_w = torch.nn.functional.multi_head_attention_forward(
        x, x, x, E, H, w_in, b_in, None, None, False, 0.0, w_out, b_out, training=False,
        average_attn_weights=False,
    )  # fmt: skip
    f = [flow.tensor(t.numpy()) for t in (x, w_in, b_in, w_out, b_out)]
    got, got_w = flow.nn.functional.multi_head_attention_forward(
        f[0], f[0], f[0], E, H, f[1], f[2], None, None, False, 0.0, f[3], f[4], training=False,
        average_attn_weights=False,
    )  # fmt: skip
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got_w.numpy(), want_w.numpy(), rtol=1e-4, atol=1e-6)
    # unbatched (L, E)
    want, _ = torch.nn.functional.multi_head_attention_forward(
        x[:, 0], x[:, 0], x[:, 0], E, H, w_in, b_in, None, None, False, 0.0, w_out, b_out,
        training=False,
    )  # fmt: skip
    got, _ = flow.nn.functional.multi_head_attention_forward(
        f[0][:, 0], f[0][:, 0], f[0][:, 0], E, H, f[1], f[2], None, None, False, 0.0, f[3], f[4],
        training=False,
    )  # fmt: skip
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("mode", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("with_hx", [False, True])
def test_recurrent_layers_on_packed_sequences_match_torch(mode, bidirectional, with_hx):
    torch.manual_seed(0)
    kw = dict(num_layers=2, bidirectional=bidirectional, batch_first=True)
    tm = getattr(torch.nn, mode)(3, 4, **kw)
    fm = getattr(flow.nn, mode)(3, 4, **kw)
    fm.load_state_dict({k: flow.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 5, 3)).astype(np.float32)
    lengths = [3, 5, 2]  # unsorted: enforce_sorted=False
    dirs = 2 if bidirectional else 1
    h = rng.standard_normal((2 * dirs, 3, 4)).astype(np.float32)
    res = []
    for T, m in ((torch, tm), (flow, fm)):
        xt = T.tensor(x, requires_grad=True)
        packed = T.nn.utils.rnn.pack_padded_sequence(xt, lengths, True, enforce_sorted=False)
        hx = None
        if with_hx:
            hx = T.tensor(h, requires_grad=True)
            hx = (hx, T.tensor(h * 0.5)) if mode == "LSTM" else hx
        out, state = m(packed, hx)
        padded, lens = T.nn.utils.rnn.pad_packed_sequence(out, batch_first=True)
        hn = state[0] if mode == "LSTM" else state
        (padded.square().sum() + hn.sum()).backward()
        res.append([padded.detach().numpy(), hn.detach().numpy(), xt.grad.numpy()])
        res[-1] += [p.grad.numpy() for p in m.parameters()]
        assert lens.tolist() == lengths
    for got, want in zip(res[1], res[0]):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_rnn_utilities_like_torch():
    seqs = [flow.arange(3.0), flow.arange(5.0), flow.arange(2.0)]
    padded = flow.nn.utils.rnn.pad_sequence(seqs, batch_first=True)
    back = flow.nn.utils.rnn.unpad_sequence(padded, flow.tensor([3, 5, 2]), batch_first=True)
    assert [b.tolist() for b in back] == [s.tolist() for s in seqs]
    packed = flow.nn.utils.rnn.pack_sequence(seqs, enforce_sorted=False)
    assert [u.tolist() for u in flow.nn.utils.rnn.unpack_sequence(packed)] == [
        s.tolist() for s in seqs
    ]
    lstm = flow.nn.LSTM(2, 3, num_layers=2)
    lstm.flatten_parameters()
    assert [len(w) for w in lstm.all_weights] == [4, 4]


@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("packed", [False, True])
def test_lstm_with_projections_matches_torch(bidirectional, packed):
    torch.manual_seed(0)
    kw = dict(num_layers=2, bidirectional=bidirectional, batch_first=True, proj_size=3)
    tm, fm = torch.nn.LSTM(4, 5, **kw), flow.nn.LSTM(4, 5, **kw)
    assert sorted(fm.state_dict()) == sorted(tm.state_dict())
    fm.load_state_dict({k: flow.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 5, 4)).astype(np.float32)
    dirs = 2 if bidirectional else 1
    h = rng.standard_normal((2 * dirs, 2, 3)).astype(np.float32)
    c = rng.standard_normal((2 * dirs, 2, 5)).astype(np.float32)
    res = []
    for T, m in ((torch, tm), (flow, fm)):
        xt = T.tensor(x, requires_grad=True)
        inp = T.nn.utils.rnn.pack_padded_sequence(xt, [5, 3], True) if packed else xt
        out, (hn, cn) = m(inp, (T.tensor(h), T.tensor(c)))
        if packed:
            out = T.nn.utils.rnn.pad_packed_sequence(out, batch_first=True)[0]
        (out.square().sum() + hn.sum() + cn.sum()).backward()
        res.append([out.detach().numpy(), hn.detach().numpy(), cn.detach().numpy()])
        res[-1] += [xt.grad.numpy()] + [p.grad.numpy() for p in m.parameters()]
    for got, want in zip(res[1], res[0]):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match="smaller than hidden_size"):
        flow.nn.LSTM(4, 5, proj_size=5)
    with pytest.raises(ValueError, match="only supported for LSTM"):
        flow.nn.GRU(4, 5, proj_size=2)
