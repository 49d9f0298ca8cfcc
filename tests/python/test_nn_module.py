"""nn.Module and the layers against PyTorch: registration, traversal, state dicts, modes,
hooks, repr; every layer's outputs and gradients with the same weights and inputs."""

from collections import OrderedDict

import numpy as np
import pytest
import torch

import oneflow as flow
from differential import OLD_TORCH, TORCH_PRINTS_BATCHNORM_BIAS


class Net(flow.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = flow.nn.Linear(4, 8)
        self.act = flow.nn.ReLU()
        self.fc2 = flow.nn.Linear(8, 3)
        self.register_buffer("scale", flow.ones(3))
        self.register_buffer("tmp", flow.zeros(1), persistent=False)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x))) * self.scale


def test_registration_and_traversal():
    net = Net()
    assert [n for n, _ in net.named_parameters()] == [
        "fc1.weight",
        "fc1.bias",
        "fc2.weight",
        "fc2.bias",
    ]
    assert [n for n, _ in net.named_buffers()] == ["scale", "tmp"]
    assert [n for n, _ in net.named_children()] == ["fc1", "act", "fc2"]
    assert [n for n, _ in net.named_modules()] == ["", "fc1", "act", "fc2"]
    assert isinstance(net.fc1.weight, flow.nn.Parameter) and net.fc1.weight.requires_grad
    # A module's own parameters and buffers come before its children's, as in PyTorch.
    assert list(net.state_dict().keys()) == [
        "scale",
        "fc1.weight",
        "fc1.bias",
        "fc2.weight",
        "fc2.bias",
    ]
    assert net.get_submodule("fc2") is net.fc2
    assert net.get_parameter("fc1.bias") is net.fc1.bias
    net.extra = flow.nn.Parameter(flow.zeros(2))
    assert "extra" in dict(net.named_parameters())
    del net.extra
    assert "extra" not in dict(net.named_parameters())
    with pytest.raises(TypeError, match="cannot assign"):
        net.fc1 = 3
    with pytest.raises(AttributeError, match="no attribute 'missing'"):
        _ = net.missing


def test_parameter_shares_storage():
    t = flow.zeros(3)
    p = flow.nn.Parameter(t)
    assert p.requires_grad and p.is_leaf
    t.fill_(2.0)
    assert p.numpy().tolist() == [2.0, 2.0, 2.0]
    assert repr(p).startswith("Parameter containing:")
    q = flow.nn.Parameter(flow.zeros(2), requires_grad=False)
    assert not q.requires_grad


def test_state_dict_round_trip_and_errors():
    a, b = Net(), Net()
    b.load_state_dict(a.state_dict())
    for p, q in zip(a.parameters(), b.parameters()):
        np.testing.assert_array_equal(p.numpy(), q.numpy())
    sd = {k: v.numpy() for k, v in a.state_dict().items()}  # NumPy arrays are accepted
    b.load_state_dict(sd)
    sd.pop("fc2.bias")
    sd["bogus"] = np.zeros(1)
    with pytest.raises(RuntimeError, match=r'Missing key\(s\) in state_dict: "fc2.bias"') as e:
        b.load_state_dict(sd)
    assert 'Unexpected key(s) in state_dict: "bogus"' in str(e.value)
    result = b.load_state_dict(sd, strict=False)
    assert result.missing_keys == ["fc2.bias"] and result.unexpected_keys == ["bogus"]
    bad = a.state_dict()
    bad["fc1.weight"] = flow.zeros(2, 2)
    with pytest.raises(RuntimeError, match="size mismatch for fc1.weight"):
        b.load_state_dict(bad)


def test_train_eval_apply_zero_grad_to():
    net = Net()
    assert net.training and net.fc1.training
    net.eval()
    assert not net.training and not net.fc1.training
    net.train()
    seen = []
    net.apply(lambda m: seen.append(type(m).__name__))
    assert seen == ["Linear", "ReLU", "Linear", "Net"]
    net(flow.randn(2, 4)).sum().backward()
    assert net.fc1.weight.grad is not None
    net.zero_grad(set_to_none=False)
    assert net.fc1.weight.grad.abs().sum().item() == 0
    net.zero_grad()
    assert net.fc1.weight.grad is None
    net.double()
    assert net.fc1.weight.dtype == flow.float64 and isinstance(net.fc1.weight, flow.nn.Parameter)
    net.to(flow.float32)
    assert net.fc2.bias.dtype == flow.float32
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())


def test_hooks():
    net = Net()
    calls = []
    h1 = net.register_forward_pre_hook(lambda m, args: calls.append("pre"))
    h2 = net.register_forward_hook(lambda m, args, out: out * 0)
    out = net(flow.randn(2, 4))
    assert calls == ["pre"] and out.abs().sum().item() == 0
    h1.remove()
    h2.remove()
    assert net(flow.randn(2, 4)).abs().sum().item() > 0
    grads = []
    net.register_full_backward_hook(lambda m, gin, gout: grads.append(gout[0].shape))
    net(flow.randn(2, 4)).sum().backward()
    assert grads == [flow.Size([2, 3])]


def test_tensor_hooks():
    x = flow.ones(3, requires_grad=True)
    h = x.register_hook(lambda g: g * 2)
    (x * 3).sum().backward()
    assert x.grad.numpy().tolist() == [6.0, 6.0, 6.0]
    h.remove()
    x.grad = None
    (x * 3).sum().backward()
    assert x.grad.numpy().tolist() == [3.0, 3.0, 3.0]
    y = x * 2
    seen = []
    y.register_hook(lambda g: seen.append(g.numpy().tolist()))
    (y * 5).sum().backward()
    assert seen == [[5.0, 5.0, 5.0]]


def test_leaf_hooks_run_under_autograd_grad_like_torch():
    def run(lib):
        x = lib.ones(3, requires_grad=True)
        seen = []
        x.register_hook(lambda g: seen.append(g.tolist()) or g * 2)
        (g,) = lib.autograd.grad((x * 3).sum(), x)
        return g.tolist(), seen, x.grad

    assert run(flow) == run(torch)


def test_containers():
    seq = flow.nn.Sequential(flow.nn.Linear(2, 3), flow.nn.ReLU(), flow.nn.Linear(3, 1))
    assert len(seq) == 3 and isinstance(seq[1], flow.nn.ReLU)
    assert len(seq[:2]) == 2 and isinstance(seq[-1], flow.nn.Linear)
    od = flow.nn.Sequential(OrderedDict([("a", flow.nn.Identity()), ("b", flow.nn.Tanh())]))
    assert [n for n, _ in od.named_children()] == ["a", "b"]
    ml = flow.nn.ModuleList([flow.nn.Linear(1, 1) for _ in range(3)])
    ml.append(flow.nn.ReLU())
    assert len(ml) == 4 and len(list(ml.parameters())) == 6
    md = flow.nn.ModuleDict({"x": flow.nn.Linear(1, 2)})
    md["y"] = flow.nn.ReLU()
    assert list(md.keys()) == ["x", "y"] and "x" in md
    pl = flow.nn.ParameterList([flow.nn.Parameter(flow.ones(2)) for _ in range(2)])
    assert len(list(pl.parameters())) == 2
    pd = flow.nn.ParameterDict({"w": flow.nn.Parameter(flow.ones(1))})
    assert "w" in pd and len(pd) == 1


@pytest.mark.skipif(not TORCH_PRINTS_BATCHNORM_BIAS, reason=f"{OLD_TORCH}: no bias= in its repr")
def test_repr_matches_torch():
    f = flow.nn.Sequential(
        flow.nn.Conv2d(3, 8, 3, padding=1),
        flow.nn.BatchNorm2d(8),
        flow.nn.ReLU(inplace=True),
        flow.nn.Flatten(),
        flow.nn.Linear(8, 2),
    )
    t = torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, padding=1),
        torch.nn.BatchNorm2d(8),
        torch.nn.ReLU(inplace=True),
        torch.nn.Flatten(),
        torch.nn.Linear(8, 2),
    )
    assert repr(f) == repr(t)


def _copy_weights(fm, tm):
    tsd = tm.state_dict()
    fm.load_state_dict({k: v.detach().numpy() for k, v in tsd.items()})


LAYERS = [
    ("Linear", (5, 3), lambda nn: nn.Linear(3, 4)),
    ("Linear_nobias", (2, 5, 3), lambda nn: nn.Linear(3, 4, bias=False)),
    ("Bilinear", None, lambda nn: nn.Bilinear(3, 2, 4)),
    ("Conv1d", (2, 3, 9), lambda nn: nn.Conv1d(3, 4, 3, stride=2, padding=1)),
    ("Conv2d", (2, 3, 8, 8), lambda nn: nn.Conv2d(3, 4, 3, padding="same", bias=False)),
    (
        "Conv2d_reflect",
        (1, 2, 6, 6),
        lambda nn: nn.Conv2d(2, 2, 3, padding=1, padding_mode="reflect"),
    ),
    ("Conv3d", (1, 2, 4, 5, 5), lambda nn: nn.Conv3d(2, 3, 2)),
    (
        "ConvTranspose2d",
        (2, 4, 5, 5),
        lambda nn: nn.ConvTranspose2d(4, 2, 3, stride=2, output_padding=1),
    ),
    ("MaxPool2d", (2, 3, 8, 8), lambda nn: nn.MaxPool2d(3, 2, 1)),
    ("AvgPool2d", (2, 3, 8, 8), lambda nn: nn.AvgPool2d(2)),
    ("AdaptiveAvgPool2d", (2, 3, 7, 7), lambda nn: nn.AdaptiveAvgPool2d((2, 3))),
    ("AdaptiveMaxPool1d", (2, 3, 7), lambda nn: nn.AdaptiveMaxPool1d(3)),
    ("BatchNorm1d", (6, 4), lambda nn: nn.BatchNorm1d(4)),
    ("BatchNorm2d", (3, 4, 5, 5), lambda nn: nn.BatchNorm2d(4, momentum=0.3)),
    ("LayerNorm", (2, 3, 6), lambda nn: nn.LayerNorm(6)),
    ("GroupNorm", (2, 6, 4), lambda nn: nn.GroupNorm(3, 6)),
    ("InstanceNorm2d", (2, 3, 4, 4), lambda nn: nn.InstanceNorm2d(3, affine=True)),
    ("Embedding", None, lambda nn: nn.Embedding(10, 4, padding_idx=0)),
    ("PReLU", (2, 3, 4), lambda nn: nn.PReLU(3)),
    ("LeakyReLU", (3, 4), lambda nn: nn.LeakyReLU(0.2)),
    ("GELU", (3, 4), lambda nn: nn.GELU(approximate="tanh")),
    ("Softplus", (3, 4), lambda nn: nn.Softplus(beta=2)),
    ("Softmax", (3, 4), lambda nn: nn.Softmax(dim=1)),
    ("LogSoftmax", (3, 4), lambda nn: nn.LogSoftmax(dim=-1)),
    ("Hardswish", (3, 4), lambda nn: nn.Hardswish()),
    ("ELU", (3, 4), lambda nn: nn.ELU(0.5)),
    ("Flatten", (2, 3, 4), lambda nn: nn.Flatten()),
    ("Unflatten", (2, 12), lambda nn: nn.Unflatten(1, (3, 4))),
    ("Upsample", (1, 2, 3, 3), lambda nn: nn.Upsample(scale_factor=2, mode="bilinear")),
    ("PixelShuffle", (1, 8, 2, 2), lambda nn: nn.PixelShuffle(2)),
    ("ReflectionPad2d", (1, 2, 4, 4), lambda nn: nn.ReflectionPad2d((1, 2, 0, 1))),
    ("ZeroPad2d", (1, 2, 3, 3), lambda nn: nn.ZeroPad2d(1)),
]


@pytest.mark.parametrize("name", [c[0] for c in LAYERS])
def test_layer_matches_torch(name):
    _, shape, build = next(c for c in LAYERS if c[0] == name)
    torch.manual_seed(0)
    tm, fm = build(torch.nn), build(flow.nn)
    _copy_weights(fm, tm)
    rng = np.random.default_rng(0)
    if name == "Embedding":
        idx = rng.integers(0, 10, size=(3, 5))
        fin, tin = [flow.tensor(idx)], [torch.tensor(idx)]
    elif name == "Bilinear":
        a, b = rng.standard_normal((5, 3)), rng.standard_normal((5, 2))
        fin = [
            flow.tensor(a, dtype=flow.float32, requires_grad=True),
            flow.tensor(b, dtype=flow.float32, requires_grad=True),
        ]
        tin = [
            torch.tensor(a, dtype=torch.float32, requires_grad=True),
            torch.tensor(b, dtype=torch.float32, requires_grad=True),
        ]
    else:
        x = rng.standard_normal(shape)
        fin = [flow.tensor(x, dtype=flow.float32, requires_grad=True)]
        tin = [torch.tensor(x, dtype=torch.float32, requires_grad=True)]
    fo, to = fm(*fin), tm(*tin)
    np.testing.assert_allclose(fo.detach().numpy(), to.detach().numpy(), rtol=1e-4, atol=1e-5)
    cot = rng.standard_normal(tuple(to.shape))
    (fo * flow.tensor(cot, dtype=flow.float32)).sum().backward()
    (to * torch.tensor(cot, dtype=torch.float32)).sum().backward()
    for fi, ti in zip(fin, tin):
        if ti.grad is not None:
            np.testing.assert_allclose(fi.grad.numpy(), ti.grad.numpy(), rtol=1e-4, atol=1e-5)
    fparams = dict(fm.named_parameters())
    for n, tp in tm.named_parameters():
        np.testing.assert_allclose(
            fparams[n].grad.numpy(), tp.grad.numpy(), rtol=1e-4, atol=1e-5, err_msg=n
        )
    fbuf = dict(fm.named_buffers())
    for n, tb in tm.named_buffers():
        np.testing.assert_allclose(fbuf[n].numpy(), tb.numpy(), rtol=1e-5, atol=1e-6, err_msg=n)


LOSSES = [
    ("MSELoss", lambda nn: nn.MSELoss(), "float"),
    ("L1Loss", lambda nn: nn.L1Loss(reduction="sum"), "float"),
    ("SmoothL1Loss", lambda nn: nn.SmoothL1Loss(beta=0.5), "float"),
    ("HuberLoss", lambda nn: nn.HuberLoss(delta=0.5), "float"),
    ("CrossEntropyLoss", lambda nn: nn.CrossEntropyLoss(label_smoothing=0.1), "class"),
    ("NLLLoss", lambda nn: nn.NLLLoss(ignore_index=1), "class"),
    ("BCEWithLogitsLoss", lambda nn: nn.BCEWithLogitsLoss(), "prob"),
    ("KLDivLoss", lambda nn: nn.KLDivLoss(reduction="batchmean"), "prob"),
]


@pytest.mark.parametrize("name", [c[0] for c in LOSSES])
def test_loss_modules(name):
    _, build, kind = next(c for c in LOSSES if c[0] == name)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 5))
    if kind == "class":
        y = rng.integers(0, 5, size=(4,))
    elif kind == "prob":
        y = rng.random((4, 5))
    else:
        y = rng.standard_normal((4, 5))
    fx = flow.tensor(x, dtype=flow.float64, requires_grad=True)
    tx = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    fy, ty = flow.tensor(y), torch.tensor(y)
    fo, to = build(flow.nn)(fx, fy), build(torch.nn)(tx, ty)
    np.testing.assert_allclose(fo.item(), to.item(), rtol=1e-10)
    fo.backward()
    to.backward()
    np.testing.assert_allclose(fx.grad.numpy(), tx.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_dropout_module_modes():
    d = flow.nn.Dropout(0.5)
    x = flow.ones(1000)
    assert (d(x) == 0).sum().item() > 300
    d.eval()
    assert d(x) is x


def test_init_functions():
    w = flow.empty(64, 128)
    flow.nn.init.xavier_uniform_(w)
    bound = (6 / (64 + 128)) ** 0.5
    assert w.abs().max().item() <= bound
    flow.nn.init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu")
    assert abs(w.std().item() - (2 / 64) ** 0.5) < 0.02
    flow.nn.init.trunc_normal_(w, std=1.0, a=-0.5, b=0.5)
    assert w.abs().max().item() <= 0.5
    flow.nn.init.orthogonal_(w)
    wn = w.numpy()
    np.testing.assert_allclose(wn @ wn.T, np.eye(64), atol=1e-5)
    flow.nn.init.constant_(w, 0.3)
    assert np.allclose(w.numpy(), 0.3)
    flow.nn.init.eye_(w)
    assert w.sum().item() == 64
    assert flow.nn.init.calculate_gain("leaky_relu", 0.2) == torch.nn.init.calculate_gain(
        "leaky_relu", 0.2
    )


def test_nn_utils():
    net = Net()
    net(flow.randn(4, 4)).sum().backward()
    grads = [p.grad.numpy().copy() for p in net.parameters()]
    total = np.sqrt(sum((g**2).sum() for g in grads))
    norm = flow.nn.utils.clip_grad_norm_(net.parameters(), 0.1)
    np.testing.assert_allclose(norm.item(), total, rtol=1e-5)
    after = np.sqrt(sum((p.grad.numpy() ** 2).sum() for p in net.parameters()))
    assert after <= 0.1 + 1e-4
    flow.nn.utils.clip_grad_value_(net.parameters(), 0.001)
    assert max(p.grad.abs().max().item() for p in net.parameters()) <= 0.001 + 1e-9
    vec = flow.nn.utils.parameters_to_vector(net.parameters())
    assert vec.numel() == sum(p.numel() for p in net.parameters())
    flow.nn.utils.vector_to_parameters(vec * 0, net.parameters())
    assert all(p.abs().sum().item() == 0 for p in net.parameters())
    seqs = [flow.ones(3, 2), flow.ones(1, 2) * 2, flow.ones(2, 2) * 3]
    padded = flow.nn.utils.rnn.pad_sequence(seqs, batch_first=True)
    tpad = torch.nn.utils.rnn.pad_sequence(
        [torch.tensor(s.numpy()) for s in seqs], batch_first=True
    )
    np.testing.assert_array_equal(padded.numpy(), tpad.numpy())
    packed = flow.nn.utils.rnn.pack_padded_sequence(
        padded, [3, 1, 2], batch_first=True, enforce_sorted=False
    )
    tpacked = torch.nn.utils.rnn.pack_padded_sequence(
        tpad, [3, 1, 2], batch_first=True, enforce_sorted=False
    )
    np.testing.assert_array_equal(packed.data.numpy(), tpacked.data.numpy())
    np.testing.assert_array_equal(packed.batch_sizes.numpy(), tpacked.batch_sizes.numpy())
    out, lengths = flow.nn.utils.rnn.pad_packed_sequence(packed, batch_first=True)
    np.testing.assert_array_equal(out.numpy(), tpad.numpy())
    assert lengths.numpy().tolist() == [3, 1, 2]


@pytest.mark.parametrize("dims", [1, 2, 3])
def test_instance_norm_unbatched_input_like_torch(dims):
    rng = np.random.default_rng(dims)
    a = rng.standard_normal((3,) + (4,) * dims).astype(np.float32)

    def run(lib):
        m = getattr(lib.nn, f"InstanceNorm{dims}d")(3, affine=True, track_running_stats=True)
        out = m(lib.tensor(a))
        with pytest.raises(ValueError):
            m(lib.tensor(a[0, 0]))  # neither batched nor unbatched
        return out.detach().numpy(), m.running_mean.numpy(), m.running_var.numpy()

    for got, want in zip(run(flow), run(torch)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def _module_api_probe(T):
    nn = T.nn

    class Counter(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(2, 2)
            self.register_buffer("b", T.zeros(2))
            self.step = 0

        def get_extra_state(self):
            return {"step": self.step}

        def set_extra_state(self, state):
            self.step = state["step"]

        def forward(self, x, scale=1.0):
            return self.lin(x) * scale

    m = Counter()
    m.step = 7
    sd = m.state_dict()
    m2 = Counter()
    r = m2.load_state_dict(sd)
    out = [sorted(sd), m2.step, r.missing_keys, r.unexpected_keys]
    # dtype casts and submodule access
    out.append(str(Counter().bfloat16().lin.weight.dtype).split(".")[-1])
    out.append(str(Counter().type(T.float64).lin.weight.dtype).split(".")[-1])
    out.append(tuple(m.get_buffer("b").shape))
    m.set_submodule("lin", nn.Linear(2, 3))
    out.append(m.lin.out_features)
    # hooks with kwargs, prepend, state-dict hooks
    calls = []
    m.register_forward_pre_hook(lambda mod, a, k: (a, {"scale": 2.0}), with_kwargs=True)
    m.register_forward_hook(lambda mod, a, k, o: calls.append(("post", k)), with_kwargs=True)
    m.register_forward_pre_hook(lambda mod, a: calls.append("first"), prepend=True)
    y = m(T.ones(1, 2))
    out.append(calls[0])
    out.append(calls[1])
    m.register_state_dict_post_hook(lambda mod, sd, prefix, meta: calls.append("sd"))
    m.register_load_state_dict_post_hook(lambda mod, keys: calls.append("load"))
    m.load_state_dict(m.state_dict())
    out.append(calls[-2:])
    with T.no_grad():
        out.append(np.allclose(y.numpy(), (m.lin(T.ones(1, 2)) * 2).numpy()))
    # Tensor(), flip/tile varargs, split keyword
    acc = T.Tensor()
    for b in (T.tensor([1.0, 2.0]), T.tensor([3.0])):
        acc = T.cat([acc, b])
    out.append(acc.tolist())
    out.append(tuple(T.FloatTensor().shape))
    x = T.arange(6.0).view(1, 2, 3)
    out.append(x.flip(1, 2).tolist())
    out.append(x.tile(2, 1).shape[0])
    out.append([t.tolist() for t in T.arange(6.0).split(split_size=4)])
    out.append(nn.GroupNorm(2, 4, bias=False).bias is None)
    return out


def test_module_apis_scripts_use_like_torch():
    import torch

    assert _module_api_probe(flow) == _module_api_probe(torch)
