"""oneflow.autocast / oneflow.amp against torch.autocast / torch.amp on the CPU: which ops run in
the lower precision and which in float32, values and gradients, nesting and restoring, the
GradScaler's scale, skipped steps and state, and nn.Graph's enable_amp."""

import copy
import warnings

import numpy as np
import pytest
import torch

import oneflow as flow


def _pair(seed=0, cin=4, cout=3):
    flow.manual_seed(seed)
    lin = flow.nn.Linear(cin, cout)
    tl = torch.nn.Linear(cin, cout)
    with torch.no_grad():
        tl.weight.copy_(torch.tensor(lin.weight.numpy()))
        tl.bias.copy_(torch.tensor(lin.bias.numpy()))
    return lin, tl


def _np(t):
    t = t.detach()
    return t.float().numpy() if hasattr(t, "numpy") else t


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_op_dtypes_values_and_gradients_like_torch(dtype):
    lin, tl = _pair()
    x = np.random.RandomState(0).randn(5, 4).astype(np.float32)
    fd, td = getattr(flow, dtype), getattr(torch, dtype)
    img = np.random.RandomState(1).randn(2, 3, 6, 6).astype(np.float32)
    w = np.random.RandomState(2).randn(4, 3, 3, 3).astype(np.float32)
    target = np.array([0, 2, 1, 1, 0])
    with flow.autocast("cpu", dtype=fd):
        y = lin(flow.tensor(x))
        mm = flow.matmul(flow.tensor(x), flow.tensor(x).t())
        conv = flow.nn.functional.conv2d(flow.tensor(img), flow.tensor(w))
        mse = flow.nn.functional.mse_loss(y, flow.zeros(5, 3))
        ce = flow.nn.functional.cross_entropy(y, flow.tensor(target))
        sm = flow.softmax(y, -1)
        d = flow.matmul(flow.ones(2, 2, dtype=flow.float64), flow.ones(2, 2, dtype=flow.float64))
        i = flow.matmul(flow.ones(2, 2, dtype=flow.int64), flow.ones(2, 2, dtype=flow.int64))
        loss = mse + ce
    with torch.autocast("cpu", dtype=td):
        ty = tl(torch.tensor(x))
        tmm = torch.matmul(torch.tensor(x), torch.tensor(x).t())
        tconv = torch.nn.functional.conv2d(torch.tensor(img), torch.tensor(w))
        tmse = torch.nn.functional.mse_loss(ty, torch.zeros(5, 3))
        tce = torch.nn.functional.cross_entropy(ty, torch.tensor(target))
        tsm = torch.softmax(ty, -1)
        tloss = tmse + tce
    for a, b in [(y, ty), (mm, tmm), (conv, tconv), (mse, tmse), (ce, tce), (sm, tsm)]:
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1], (a.dtype, b.dtype)
        np.testing.assert_allclose(_np(a), _np(b), rtol=2e-2, atol=2e-2)
    assert d.dtype == flow.float64 and i.dtype == flow.int64
    loss.backward()
    tloss.backward()
    assert lin.weight.grad.dtype == flow.float32
    np.testing.assert_allclose(
        lin.weight.grad.numpy(), tl.weight.grad.numpy(), rtol=3e-2, atol=3e-2
    )


def test_matrix_product_forms_like_torch():
    rs = np.random.RandomState(7)
    a, b, m, n, c, cb = (
        rs.randn(*s).astype(np.float32)
        for s in [(2, 3, 4), (2, 4, 5), (3, 4), (4, 5), (3, 5), (2, 3, 5)]
    )
    F = [flow.tensor(v) for v in (a, b, m, n, c, cb)]
    T = [torch.tensor(v) for v in (a, b, m, n, c, cb)]

    def forms(lib, a, b, m, n, c, cb):
        return [
            lib.bmm(a, b),
            lib.mm(m, n),
            lib.addmm(c, m, n),
            lib.baddbmm(cb, a, b),
            a @ b,
            lib.einsum("ij,jk->ik", m, n),
            lib.nn.functional.linear(m, n.t(), c[0, :5]),
        ]

    with flow.autocast("cpu"):
        ours = forms(flow, *F)
    with torch.autocast("cpu"):
        theirs = forms(torch, *T)
    for x, y in zip(ours, theirs):
        assert str(x.dtype).split(".")[-1] == str(y.dtype).split(".")[-1], (x.dtype, y.dtype)
        np.testing.assert_allclose(_np(x), _np(y), rtol=2e-2, atol=5e-2)


def test_layers_fed_16_bit_inputs_like_torch():
    rs = np.random.RandomState(8)
    img = rs.randn(2, 3, 8, 8).astype(np.float32)
    flow.manual_seed(8)

    def cnn(nn):
        return nn.Sequential(
            nn.Conv2d(3, 4, 3), nn.ReLU(), nn.Conv2d(4, 2, 3), nn.ConvTranspose2d(2, 2, 3)
        )

    ours, theirs = cnn(flow.nn), cnn(torch.nn)
    with torch.no_grad():
        for p, q in zip(ours.parameters(), theirs.parameters()):
            q.copy_(torch.tensor(p.detach().numpy()))
    q = rs.randn(2, 4, 5, 8).astype(np.float32)
    with flow.autocast("cpu"):
        y = ours(flow.tensor(img))
        lin = flow.nn.functional.linear(flow.tensor(q[0, 0]).half(), flow.tensor(q[1, 0, :, :]))
        qf = flow.tensor(q)
        att = flow.nn.functional.scaled_dot_product_attention(qf, qf, qf, is_causal=True)
    with torch.autocast("cpu"):
        ty = theirs(torch.tensor(img))
        tlin = torch.nn.functional.linear(torch.tensor(q[0, 0]).half(), torch.tensor(q[1, 0, :, :]))
        qt = torch.tensor(q)
        tatt = torch.nn.functional.scaled_dot_product_attention(qt, qt, qt, is_causal=True)
    for a, b in [(y, ty), (lin, tlin), (att, tatt)]:
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1], (a.dtype, b.dtype)
        np.testing.assert_allclose(_np(a), _np(b), rtol=3e-2, atol=3e-2)


def test_nesting_disabling_restoring_and_decorator():
    assert not flow.is_autocast_enabled("cpu")
    x = flow.randn(3, 3)
    with flow.autocast("cpu"):
        assert flow.is_autocast_enabled("cpu") and flow.get_autocast_dtype("cpu") == flow.bfloat16
        with flow.autocast("cpu", enabled=False):
            assert (x @ x).dtype == flow.float32
        assert (x @ x).dtype == flow.bfloat16
        with pytest.raises(ZeroDivisionError):
            with flow.cpu.amp.autocast(dtype=flow.float16):
                assert (x @ x).dtype == flow.float16
                raise ZeroDivisionError
        assert (x @ x).dtype == flow.bfloat16
    assert not flow.is_autocast_enabled("cpu") and (x @ x).dtype == flow.float32

    @flow.autocast("cpu")
    def f(a):
        return a @ a

    assert f(x).dtype == flow.bfloat16 and (x @ x).dtype == flow.float32
    with pytest.warns(UserWarning, match="not supported"):
        with flow.autocast("cpu", dtype=flow.float32):
            assert not flow.is_autocast_enabled("cpu")
    with pytest.raises(RuntimeError, match="not supported"):
        flow.autocast("xpu")
    with flow.autocast("cpu", dtype=flow.float16):
        with flow.autocast("cpu"):  # the enclosing dtype, as PyTorch
            assert (x @ x).dtype == flow.float16


def test_backward_inside_the_block_runs_in_the_forward_dtypes():
    lin, tl = _pair(3)
    x = np.random.RandomState(3).randn(6, 4).astype(np.float32)
    with flow.autocast("cpu"):
        lin(flow.tensor(x)).float().pow(2).sum().backward()
    with torch.autocast("cpu"):
        tl(torch.tensor(x)).float().pow(2).sum().backward()
    np.testing.assert_allclose(
        lin.weight.grad.numpy(), tl.weight.grad.numpy(), rtol=3e-2, atol=3e-2
    )


def test_grad_scaler_like_torch():
    lin, tl = _pair(4)
    opt = flow.optim.SGD(lin.parameters(), lr=0.1)
    topt = torch.optim.SGD(tl.parameters(), lr=0.1)
    s = flow.amp.GradScaler("cpu", init_scale=8.0, growth_interval=2)
    ts = torch.amp.GradScaler("cpu", init_scale=8.0, growth_interval=2)
    rs = np.random.RandomState(4)
    for step in range(6):
        x = rs.randn(5, 4).astype(np.float32)
        if step == 3:
            x[0, 0] = np.inf  # this step's gradients are not finite: skipped, scale halved
        opt.zero_grad()
        topt.zero_grad()
        s.scale(lin(flow.tensor(x)).pow(2).mean()).backward()
        ts.scale(tl(torch.tensor(x)).pow(2).mean()).backward()
        s.step(opt)
        ts.step(topt)
        s.update()
        ts.update()
        assert s.get_scale() == ts.get_scale(), step
        np.testing.assert_allclose(
            lin.weight.detach().numpy(), tl.weight.detach().numpy(), rtol=1e-5
        )
    sd = s.state_dict()
    assert sd["scale"] == ts.state_dict()["scale"]
    assert sd["_growth_tracker"] == ts.state_dict()["_growth_tracker"]
    s2 = flow.amp.GradScaler("cpu")
    s2.load_state_dict(sd)
    assert s2.get_scale() == s.get_scale()
    s.unscale_(opt)
    with pytest.raises(RuntimeError, match="unscale_"):
        s.unscale_(opt)
    with pytest.raises(AssertionError):
        flow.amp.GradScaler("cpu", growth_factor=1.0)
    s.step(opt)
    with pytest.raises(RuntimeError, match="already been called"):
        s.step(opt)
    s.update()
    half = flow.amp.GradScaler("cpu")
    assert half.scale(flow.tensor(2.0, dtype=flow.float16)).dtype == flow.float32
    empty = flow.optim.SGD([flow.nn.Parameter(flow.ones(1))], lr=0.1)
    with pytest.raises(AssertionError, match="No inf checks"):
        half.step(empty)


def test_cuda_grad_scaler_without_cuda_disables_itself():
    if flow.cuda.is_available():
        pytest.skip("CUDA is available")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        s = flow.cuda.amp.GradScaler()
    assert any("CUDA is not available" in str(m.message) for m in w)
    assert not s.is_enabled() and s.get_scale() == 1.0 and s.state_dict() == {}
    loss = flow.ones(1)
    assert s.scale(loss) is loss
    with pytest.warns(UserWarning, match="CUDA is not available"):
        ctx = flow.cuda.amp.autocast()
    assert isinstance(ctx, flow.amp.autocast)
    with ctx:
        assert not flow.is_autocast_enabled("cuda")


def test_graph_enable_amp_trains_like_eager_autocast():
    flow.manual_seed(5)
    model = flow.nn.Sequential(flow.nn.Linear(4, 8), flow.nn.ReLU(), flow.nn.Linear(8, 2))
    me = copy.deepcopy(model)
    opt = flow.optim.SGD(model.parameters(), lr=0.1)
    opte = flow.optim.SGD(me.parameters(), lr=0.1)

    class G(flow.nn.Graph):
        def __init__(self):
            super().__init__()
            self.m = model
            self.add_optimizer(opt)
            self.config.enable_amp(True)

        def build(self, x):
            out = self.m(x)
            loss = flow.nn.functional.mse_loss(out, flow.zeros_like(out))
            loss.backward()
            return out, loss

    g = G()
    for _ in range(3):
        x = flow.randn(6, 4)
        out, loss = g(x)
        opte.zero_grad()
        with flow.autocast("cpu"):
            eo = me(x)
            el = flow.nn.functional.mse_loss(eo, flow.zeros_like(eo))
        el.backward()
        opte.step()
        assert out.dtype == flow.bfloat16 and loss.dtype == flow.float32
        np.testing.assert_allclose(loss.numpy(), el.detach().numpy(), rtol=1e-6)
    for p, q in zip(model.parameters(), me.parameters()):
        assert p.dtype == flow.float32
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-6, atol=1e-7)


def test_autocast_state_functions_like_torch():
    import warnings

    for lib in (torch, flow):
        assert lib.is_autocast_enabled("cpu") is False and lib.is_autocast_enabled() is False
        lib.set_autocast_enabled("cpu", True)
        assert lib.is_autocast_enabled("cpu")
        with pytest.warns(DeprecationWarning):
            assert lib.is_autocast_cpu_enabled()
        lib.set_autocast_enabled("cpu", False)
        lib.set_autocast_enabled(True)  # the legacy form: CUDA
        assert lib.is_autocast_enabled() and lib.is_autocast_enabled("cuda")
        lib.set_autocast_enabled(False)
        lib.set_autocast_dtype("cpu", lib.float16)
        assert lib.get_autocast_dtype("cpu") == lib.float16
        with pytest.warns(DeprecationWarning):
            assert lib.get_autocast_cpu_dtype() == lib.float16
        lib.set_autocast_dtype("cpu", lib.bfloat16)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            assert lib.get_autocast_gpu_dtype() == lib.float16
        assert lib.is_autocast_cache_enabled()
        assert [
            lib.autocast_increment_nesting(),
            lib.autocast_increment_nesting(),
            lib.autocast_decrement_nesting(),
            lib.autocast_decrement_nesting(),
        ] == [1, 2, 1, 0]
        assert lib.clear_autocast_cache() is None
        with pytest.raises(RuntimeError):
            lib.set_autocast_enabled("xpu2", True)
        # A block still restores what the functions set.
        lib.set_autocast_enabled("cpu", True)
        with lib.autocast("cpu", enabled=False):
            assert not lib.is_autocast_enabled("cpu")
        assert lib.is_autocast_enabled("cpu")
        lib.set_autocast_enabled("cpu", False)


def _custom_mm(lib, **fwd_options):
    seen = {}

    class MM(lib.autograd.Function):
        @staticmethod
        @lib.amp.custom_fwd(device_type="cpu", **fwd_options)
        def forward(ctx, a, b):
            seen["fwd"] = (a.dtype, b.dtype, lib.is_autocast_enabled("cpu"))
            ctx.save_for_backward(a, b)
            return a.mm(b)

        @staticmethod
        @lib.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            seen["bwd"] = lib.is_autocast_enabled("cpu")
            return g.mm(b.t().to(g.dtype)), a.t().to(g.dtype).mm(g)

    return MM, seen


@pytest.mark.parametrize("cast_inputs", [None, "float32"])
def test_custom_fwd_and_bwd_like_torch(cast_inputs):
    results = {}
    for lib in (torch, flow):
        options = {} if cast_inputs is None else {"cast_inputs": getattr(lib, cast_inputs)}
        MM, seen = _custom_mm(lib, **options)
        a = lib.ones(2, 3, requires_grad=True)
        b = lib.ones(3, 2, requires_grad=True)
        with lib.autocast("cpu"):
            x = a.mm(lib.eye(3))  # bfloat16 under autocast
            out = MM.apply(x, b)
        out.float().sum().backward()
        results[lib.__name__] = (
            str(out.dtype).split(".")[-1],
            [str(d).split(".")[-1] for d in seen["fwd"][:2]],
            seen["fwd"][2],
            seen["bwd"],
            str(a.grad.dtype).split(".")[-1],
        )
    assert results["oneflow"] == results["torch"], results


def test_cpu_autocast_result_dtypes_match_torch():
    import torch

    def run(T):
        F = T.nn.functional
        x = T.tensor(np.random.default_rng(0).standard_normal((4, 5)), dtype=T.bfloat16)
        y = T.tensor(np.random.default_rng(1).standard_normal((4, 5)), dtype=T.bfloat16)
        sq = T.tensor(np.eye(4) * 2 + 0.1, dtype=T.bfloat16)
        ops = {
            "prod": lambda: x.prod(),
            "l1": lambda: F.l1_loss(x, y),
            "mse": lambda: F.mse_loss(x, y),
            "cdist": lambda: T.cdist(x, y),
            "trace": lambda: sq.trace(),
            "inverse": lambda: T.inverse(sq),
            "linalg_inv": lambda: T.linalg.inv(sq),
            "matmul": lambda: x @ y.t(),
            "exp": lambda: x.exp(),
        }
        with T.autocast("cpu", dtype=T.bfloat16):
            return {k: str(f().dtype).split(".")[-1] for k, f in ops.items()}

    assert run(flow) == run(torch)
    x = flow.ones(3, dtype=flow.bfloat16)
    assert x.prod().dtype == flow.bfloat16  # outside autocast: unchanged


def _autocast_cases(lib):
    F = lib.nn.functional
    rng = np.random.default_rng(0)
    b = lib.tensor(rng.standard_normal((1, 2, 6, 6)), dtype=lib.float32).bfloat16()
    b5 = lib.tensor(rng.standard_normal((1, 2, 4, 4, 4)), dtype=lib.float32).bfloat16()
    f32 = lib.tensor(rng.standard_normal((3, 4)), dtype=lib.float32)
    vec = lib.tensor(rng.standard_normal(4), dtype=lib.float32)
    return {
        "grid_sample": lambda: F.grid_sample(b, lib.zeros(1, 2, 2, 2), align_corners=False),
        "avg_pool3d": lambda: F.avg_pool3d(b5, 2),
        "AvgPool3d": lambda: lib.nn.AvgPool3d(2)(b5),
        "max_pool3d": lambda: F.max_pool3d(b5, 2),
        "adaptive_avg_pool3d": lambda: F.adaptive_avg_pool3d(b5, 2),
        "adaptive_max_pool3d": lambda: F.adaptive_max_pool3d(b5, 2),
        "local_response_norm": lambda: F.local_response_norm(b, 2),
        "pad reflect": lambda: F.pad(b, (1, 1, 1, 1), mode="reflect"),
        "pad replicate": lambda: F.pad(b, (1, 1, 1, 1), mode="replicate"),
        "pad constant": lambda: F.pad(b, (1, 1, 1, 1)),
        "max_unpool2d": lambda: F.max_unpool2d(*F.max_pool2d(b, 2, return_indices=True), 2),
        "multi_margin_loss": lambda: F.multi_margin_loss(b.reshape(2, -1), lib.tensor([0, 1])),
        "multilabel_margin_loss": lambda: F.multilabel_margin_loss(
            b.reshape(2, -1), lib.zeros(2, 36, dtype=lib.long)
        ),
        "ctc_loss": lambda: F.ctc_loss(
            b.reshape(6, 2, 6).log_softmax(2),
            lib.tensor([[1, 2], [1, 1]]),
            lib.tensor([6, 6]),
            lib.tensor([2, 2]),
        ),
        "linalg.lstsq": lambda: lib.linalg.lstsq(f32.t().bfloat16(), vec[:, None].bfloat16()),
        "mv": lambda: lib.mv(f32, vec),
        "addmv": lambda: lib.addmv(f32[:, 0], f32, vec),
        "bilinear": lambda: F.bilinear(f32[:2, :3], f32[:2], lib.ones(5, 3, 4)),
        "prelu": lambda: F.prelu(f32, lib.ones(1) * 0.25),
    }


@pytest.mark.parametrize("name", list(_autocast_cases(torch)))
def test_autocast_cpu_lists_like_torch(name):
    """The ops on PyTorch's CPU float32 autocast list widen 16-bit inputs (and run without
    lowering inside); mv/addmv/bilinear are on no list; prelu is on the lower-precision list."""
    results = []
    for lib in (torch, flow):
        with lib.autocast("cpu", dtype=lib.bfloat16):
            out = _autocast_cases(lib)[name]()
        out = out[0] if isinstance(out, tuple) else out
        results.append(out)
    want, got = results
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1], (got.dtype, want.dtype)
    np.testing.assert_allclose(got.float().numpy(), want.float().numpy(), rtol=2e-2, atol=2e-2)


def test_recurrent_layers_under_cpu_autocast_like_torch():
    """LSTM gives PyTorch's lower-precision dtype under CPU autocast (computed in float32 here,
    so its values are closer to the float32 ones); GRU stays float32 and RNN lowers, as in
    PyTorch; gradients reach the float32 parameters."""
    x = np.random.default_rng(1).standard_normal((2, 3, 4)).astype(np.float32)
    torch.manual_seed(0)
    layers = {k: getattr(torch.nn, k)(4, 8, batch_first=True) for k in ("LSTM", "GRU", "RNN")}
    for kind, t_layer in layers.items():
        f_layer = getattr(flow.nn, kind)(4, 8, batch_first=True)
        f_layer.load_state_dict(
            {k: flow.tensor(v.numpy()) for k, v in t_layer.state_dict().items()}
        )
        outs = []
        for lib, layer in ((torch, t_layer), (flow, f_layer)):
            xi = lib.tensor(x, requires_grad=True)
            with lib.autocast("cpu", dtype=lib.bfloat16):
                out = layer(xi)[0]
            out.float().sum().backward()
            outs.append((out, xi.grad, layer.weight_ih_l0.grad))
        (t_out, t_gx, t_gw), (f_out, f_gx, f_gw) = outs
        assert str(f_out.dtype).split(".")[-1] == str(t_out.dtype).split(".")[-1], kind
        assert f_gw.dtype == flow.float32 and f_gx.dtype == flow.float32
        np.testing.assert_allclose(
            f_out.detach().float().numpy(), t_out.detach().float().numpy(), atol=3e-2
        )
        np.testing.assert_allclose(f_gx.numpy(), t_gx.numpy(), atol=1e-1)
