"""The meta device: tensors with shapes, dtypes and strides but no memory. Ops infer their
outputs and run nothing; models built there get memory through to_empty or
load_state_dict(assign=True). Shapes, dtypes and strides are compared with PyTorch's meta
tensors."""

import warnings

import numpy as np
import pytest
import torch

import oneflow as flow
import oneflow.nn.functional as F


def test_device_parsing_and_names():
    d = flow.device("meta")
    assert d.type == "meta"
    assert str(d) == "meta"
    assert d == "meta"
    assert flow.device("meta:0") == d
    assert "type='meta'" in repr(d)
    with pytest.raises(ValueError, match="meta"):
        flow.device("metal")


@pytest.mark.parametrize(
    "make",
    [
        lambda m, dev: m.empty(2, 3, device=dev),
        lambda m, dev: m.zeros(4, device=dev, dtype=m.int64),
        lambda m, dev: m.ones(2, 0, 5, device=dev),
        lambda m, dev: m.full((3, 2), 7.5, device=dev),
        lambda m, dev: m.arange(10, device=dev),
        lambda m, dev: m.randn(3, 4, device=dev),
        lambda m, dev: m.rand(5, device=dev, dtype=m.float64),
        lambda m, dev: m.randint(0, 9, (2, 2), device=dev),
        lambda m, dev: m.eye(3, device=dev),
        lambda m, dev: m.tensor([1.0, 2.0], device=dev),
        lambda m, dev: m.empty_strided((2, 3), (1, 2), device=dev),
    ],
)
def test_creation_matches_torch_meta(make):
    a = make(flow, "meta")
    b = make(torch, "meta")
    assert a.is_meta and a.device.type == "meta"
    assert tuple(a.shape) == tuple(b.shape)
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
    assert tuple(a.stride()) == tuple(b.stride())


def _ops():
    return [
        ("add broadcast", lambda m, x, y: x + y[0]),
        ("mul scalar", lambda m, x, y: x * 3),
        ("matmul", lambda m, x, y: x @ y.transpose(-1, -2)),
        ("sum dim", lambda m, x, y: x.sum(dim=1, keepdim=True)),
        ("mean", lambda m, x, y: x.mean()),
        ("max dim", lambda m, x, y: x.max(dim=-1)[0]),
        ("argmax", lambda m, x, y: x.argmax(-1)),
        ("softmax", lambda m, x, y: m.softmax(x, dim=-1)),
        ("reshape", lambda m, x, y: x.reshape(6, -1)),
        ("transpose", lambda m, x, y: x.transpose(0, 2)),
        ("permute contiguous", lambda m, x, y: x.permute(2, 0, 1).contiguous()),
        ("cat", lambda m, x, y: m.cat([x, y], dim=1)),
        ("stack", lambda m, x, y: m.stack([x, y])),
        ("slice", lambda m, x, y: x[:, 1:, ::2]),
        ("index_select", lambda m, x, y: x.index_select(1, m.tensor([0, 2], device="meta"))),
        ("where", lambda m, x, y: m.where(x > 0, x, y)),
        ("compare", lambda m, x, y: x < y),
        ("cast", lambda m, x, y: x.to(m.float16)),
        ("expand", lambda m, x, y: x[:, :1].expand(2, 5, 4)),
        ("unsqueeze", lambda m, x, y: x.unsqueeze(1)),
        ("cumsum", lambda m, x, y: x.cumsum(1)),
        ("topk", lambda m, x, y: x.topk(2, dim=-1)[1]),
        ("layer_norm", lambda m, x, y: F_of(m).layer_norm(x, (4,))),
        ("gelu", lambda m, x, y: F_of(m).gelu(x)),
        ("linear", lambda m, x, y: F_of(m).linear(x, m.empty(7, 4, device="meta"))),
        ("sdpa", lambda m, x, y: F_of(m).scaled_dot_product_attention(x, y, y)),
    ]


def F_of(m):
    return F if m is flow else torch.nn.functional


@pytest.mark.parametrize("name,op", _ops(), ids=[n for n, _ in _ops()])
def test_ops_infer_like_torch_meta(name, op):
    out = op(flow, flow.empty(2, 3, 4, device="meta"), flow.empty(2, 3, 4, device="meta"))
    ref = op(torch, torch.empty(2, 3, 4, device="meta"), torch.empty(2, 3, 4, device="meta"))
    assert out.is_meta
    assert tuple(out.shape) == tuple(ref.shape)
    assert str(out.dtype).split(".")[-1] == str(ref.dtype).split(".")[-1]


def test_conv_and_pool_shapes():
    x = flow.empty(2, 3, 17, 19, device="meta")
    w = flow.empty(8, 3, 3, 5, device="meta")
    y = F.conv2d(x, w, stride=2, padding=1)
    ref = torch.nn.functional.conv2d(
        torch.empty(2, 3, 17, 19, device="meta"),
        torch.empty(8, 3, 3, 5, device="meta"),
        stride=2,
        padding=1,
    )
    assert y.is_meta and tuple(y.shape) == tuple(ref.shape)
    assert tuple(F.max_pool2d(y, 2).shape) == tuple(torch.nn.functional.max_pool2d(ref, 2).shape)


def test_in_place_ops_and_init_run_nothing():
    x = flow.empty(3, 4, device="meta")
    assert x.add_(1) is x and x.is_meta
    x.zero_()
    x.uniform_(-1, 1)
    x.normal_()
    flow.nn.init.kaiming_uniform_(x)
    flow.nn.init.xavier_normal_(x)
    flow.nn.init.trunc_normal_(x)
    x.fill_(2.0)
    assert x.is_meta and tuple(x.shape) == (3, 4)


def test_autograd_on_meta():
    w = flow.empty(5, 4, device="meta", requires_grad=True)
    x = flow.empty(3, 4, device="meta")
    loss = F.relu(x @ w.t()).sum()
    assert loss.is_meta and loss.shape == ()
    loss.backward()
    assert w.grad.is_meta and tuple(w.grad.shape) == (5, 4)


def test_no_memory_is_taken():
    before = flow._oneflow_internal.memory_allocated("cpu")
    big = flow.nn.Linear(100_000, 100_000, device="meta")  # 40 GB of float32 weights
    assert big.weight.is_meta and big.weight.numel() == 10**10
    y = big(flow.empty(8, 100_000, device="meta"))
    assert tuple(y.shape) == (8, 100_000)
    assert flow._oneflow_internal.memory_allocated("cpu") - before < 1 << 20
    assert big.weight.data_ptr() == 0


def test_device_context_builds_a_model_on_meta():
    with flow.device("meta"):
        model = flow.nn.Sequential(
            flow.nn.Embedding(100, 16), flow.nn.LayerNorm(16), flow.nn.Linear(16, 4)
        )
        assert flow.empty(2).is_meta
    assert not flow.empty(2).is_meta
    assert all(p.is_meta for p in model.parameters())
    assert sum(p.numel() for p in model.parameters()) == 100 * 16 + 2 * 16 + 16 * 4 + 4
    out = model(flow.zeros(2, 5, dtype=flow.int64, device="meta"))
    assert out.is_meta and tuple(out.shape) == (2, 5, 4)


def test_to_empty_gives_memory_on_the_target_device():
    model = flow.nn.Linear(4, 3, device="meta")
    params = list(model.parameters())
    assert model.to_empty(device="cpu") is model
    assert [p is q for p, q in zip(params, model.parameters())] == [True, True]
    assert model.weight.device.type == "cpu" and not model.weight.is_meta
    assert tuple(model.weight.shape) == (3, 4) and model.weight.requires_grad
    model.reset_parameters()
    x = flow.randn(2, 4)
    ref = x.numpy() @ model.weight.numpy().T + model.bias.numpy()
    np.testing.assert_allclose(model(x).detach().numpy(), ref, rtol=1e-5, atol=1e-6)


def test_to_empty_not_recursive_keeps_children():
    model = flow.nn.Sequential(flow.nn.Linear(2, 2, device="meta"))
    model.register_buffer("b", flow.empty(3, device="meta"))
    model.to_empty(device="cpu", recurse=False)
    assert not model.b.is_meta
    assert model[0].weight.is_meta


def test_load_state_dict_assign_replaces_meta_parameters():
    src = flow.nn.Sequential(flow.nn.Linear(4, 3), flow.nn.BatchNorm1d(3))
    with flow.device("meta"):
        dst = flow.nn.Sequential(flow.nn.Linear(4, 3), flow.nn.BatchNorm1d(3))
    dst[0].bias.requires_grad_(False)
    dst.load_state_dict(src.state_dict(), assign=True)
    assert not any(t.is_meta for t in dst.state_dict().values())
    assert isinstance(dst[0].weight, flow.nn.Parameter)
    assert dst[0].weight.requires_grad and not dst[0].bias.requires_grad
    assert dst[1].running_var.device.type == "cpu"
    x = flow.randn(5, 4)
    src.eval(), dst.eval()
    np.testing.assert_array_equal(dst(x).detach().numpy(), src(x).detach().numpy())


def test_load_state_dict_into_meta_without_assign_warns_and_stays_meta():
    src = flow.nn.Linear(2, 2)
    dst = flow.nn.Linear(2, 2, device="meta")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        dst.load_state_dict(src.state_dict())
    assert any("assign=True" in str(w.message) for w in caught)
    assert dst.weight.is_meta


def test_skip_init():
    m = flow.nn.utils.skip_init(flow.nn.Linear, 3, 5)
    assert m.weight.device.type == "cpu" and tuple(m.weight.shape) == (5, 3)
    with pytest.raises(RuntimeError, match="device"):
        flow.nn.utils.skip_init(lambda n: flow.nn.Linear(n, n), 2)


def test_moves_to_and_from_meta():
    x = flow.randn(2, 3)
    m = x.to("meta")
    assert m.is_meta and tuple(m.shape) == (2, 3) and not x.is_meta
    assert flow.empty_like(x, device="meta").is_meta
    with pytest.raises(NotImplementedError, match="meta"):
        m.to("cpu")
    with pytest.raises(NotImplementedError, match="meta"):
        m.cpu()


@pytest.mark.parametrize(
    "read",
    [
        lambda t: t.item(),
        lambda t: t.numpy(),
        lambda t: t.tolist(),
        lambda t: bool(t.sum() > 0),
        lambda t: t.nonzero(),
        lambda t: t[t > 0],
    ],
)
def test_reading_values_raises(read):
    t = flow.empty(1, device="meta")
    with pytest.raises(NotImplementedError, match="meta"):
        read(t)
    # the process is fine and meta ops still work
    assert (t + 1).is_meta


def test_mixing_meta_and_cpu_raises():
    with pytest.raises(RuntimeError, match="same device"):
        flow.empty(2, device="meta") + flow.ones(2)


def test_repr():
    s = repr(flow.empty(2, 3, device="meta", requires_grad=True))
    assert s.startswith("tensor(...")
    assert "device='meta'" in s and "size=(2, 3)" in s and "requires_grad=True" in s
    assert "size=()" in str(flow.empty((), device="meta"))


def test_parameter_of_a_meta_tensor():
    p = flow.nn.Parameter(flow.empty(3, device="meta"))
    assert p.is_meta and p.requires_grad
    q = flow.nn.Parameter(flow.ones(3).to(flow.device("meta")))
    assert q.is_meta


def _char_gpt():
    import os
    import sys

    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
    try:
        import char_gpt
    finally:
        sys.path.pop(0)
    return char_gpt


def test_a_7b_sized_gpt_builds_and_trains_a_step_on_meta():
    gpt = _char_gpt()
    with flow.device("meta"):
        model = gpt.GPT(32000, 4096, d_model=4096, n_head=32, n_layer=32)
    n = sum(p.numel() for p in model.parameters())
    assert n > 6 * 10**9 and all(p.is_meta for p in model.parameters())
    idx = flow.zeros(2, 64, dtype=flow.int64, device="meta")
    with flow.device("meta"):  # the model's own arange
        logits = model(idx)
    assert tuple(logits.shape) == (2, 64, 32000) and logits.is_meta
    loss = F.cross_entropy(logits.reshape(-1, 32000), idx.reshape(-1))
    loss.backward()
    assert model.head.weight.grad.is_meta
    assert tuple(model.head.weight.grad.shape) == (32000, 4096)


def test_a_gpt_built_on_meta_takes_a_checkpoint_and_matches():
    gpt = _char_gpt()
    flow.manual_seed(3)
    ref = gpt.GPT(40, 16, d_model=32, n_head=4, n_layer=2)
    with flow.device("meta"):
        model = gpt.GPT(40, 16, d_model=32, n_head=4, n_layer=2)
    model.load_state_dict(ref.state_dict(), assign=True)
    idx = flow.randint(0, 40, (3, 16))
    np.testing.assert_array_equal(model(idx).detach().numpy(), ref(idx).detach().numpy())
    opt = flow.optim.AdamW(model.parameters(), lr=1e-3)
    loss = F.cross_entropy(model(idx).reshape(-1, 40), idx.reshape(-1))
    loss.backward()
    opt.step()
    assert not any(p.is_meta for p in model.parameters())


def test_elementwise_ops_keep_the_input_layout_like_torch():
    for f, t in ((flow, torch),):
        x, tx = f.empty(3, 4, device="meta").t(), t.empty(3, 4, device="meta").t()
        assert tuple(f.exp(x).stride()) == tuple(t.exp(tx).stride())
        assert tuple((x + x).stride()) == tuple((tx + tx).stride())
        y = f.empty(2, 3, 4, device="meta").permute(2, 0, 1)
        ty = t.empty(2, 3, 4, device="meta").permute(2, 0, 1)
        assert tuple(y.neg().stride()) == tuple(ty.neg().stride())


def test_cpu_scalars_mix_with_meta_tensors():
    x = flow.empty(2, 3, device="meta")
    for y in (x * flow.tensor(0.5), flow.tensor(2.0) + x, flow.clamp(x, min=flow.tensor(0.0))):
        assert y.is_meta and tuple(y.shape) == (2, 3)
    assert x.add_(flow.tensor(1.0)) is x
    with pytest.raises(RuntimeError, match="same device"):
        x + flow.ones(3)
    s = flow.tensor(1.0)
    with pytest.raises(RuntimeError, match="same device"):
        s.add_(flow.empty((), device="meta"))
    assert s.item() == 1.0


def test_init_empty_weights_pattern_sees_every_parameter():
    """accelerate's init_empty_weights: a patched register_parameter moves each new parameter
    to the meta device."""
    old = flow.nn.Module.register_parameter
    calls = []

    def register_empty_parameter(module, name, param):
        old(module, name, param)
        if param is not None:
            calls.append(name)
            kwargs = dict(module._parameters[name].__dict__)
            kwargs["requires_grad"] = param.requires_grad
            module._parameters[name] = type(param)(param.to("meta"), **kwargs)

    flow.nn.Module.register_parameter = register_empty_parameter
    try:
        model = flow.nn.Sequential(flow.nn.Linear(3, 4), flow.nn.LayerNorm(4))
    finally:
        flow.nn.Module.register_parameter = old
    assert calls == ["weight", "bias", "weight", "bias"]
    assert all(p.is_meta and isinstance(p, flow.nn.Parameter) for p in model.parameters())


def test_save_load_and_pickle_keep_meta_tensors(tmp_path):
    import pickle

    model = flow.nn.Linear(3, 2, device="meta")
    path = str(tmp_path / "meta.of")
    flow.save({"sd": model.state_dict(), "t": flow.empty(4, 5, device="meta").t()}, path)
    back = flow.load(path)
    assert back["sd"]["weight"].is_meta and tuple(back["sd"]["weight"].shape) == (2, 3)
    assert tuple(back["t"].stride()) == (1, 5)
    p = pickle.loads(pickle.dumps(model.weight))
    assert p.is_meta and isinstance(p, flow.nn.Parameter) and p.requires_grad
    t = pickle.loads(pickle.dumps(flow.empty(2, dtype=flow.int64, device="meta")))
    assert t.is_meta and t.dtype == flow.int64


def test_resize_and_value_errors_name_the_call():
    x = flow.empty(2, 3, device="meta")
    x.resize_(4, 5)
    assert tuple(x.shape) == (4, 5) and x.is_meta
    with pytest.raises(NotImplementedError, match="item.*meta tensors"):
        x[0, 0].item()
    with pytest.raises(NotImplementedError, match="numpy.*meta tensors"):
        x.numpy()


def test_resize_to_an_overflowing_size_raises():
    for device in ("cpu", "meta"):
        x = flow.empty((), dtype=flow.bfloat16, device=device)
        with pytest.raises(RuntimeError, match="overflow"):
            x.resize_(2**63 - 1)
        with pytest.raises(RuntimeError, match="overflow"):
            x.resize_(2**40, 2**40)


_LINALG = {
    "cholesky": lambda m, A: m.linalg.cholesky(A),
    "qr": lambda m, A: m.linalg.qr(A)[0],
    "qr complete r": lambda m, A: m.linalg.qr(A, mode="complete")[1],
    "svd": lambda m, A: m.linalg.svd(A, full_matrices=False)[2],
    "svdvals": lambda m, A: m.linalg.svdvals(A),
    "eigh": lambda m, A: m.linalg.eigh(A)[1],
    "eigvalsh": lambda m, A: m.linalg.eigvalsh(A),
    "eig": lambda m, A: m.linalg.eig(A)[1],
    "eigvals": lambda m, A: m.linalg.eigvals(A),
    "solve": lambda m, A: m.linalg.solve(A, A[..., :2]),
    "inv": lambda m, A: m.linalg.inv(A),
    "det": lambda m, A: m.linalg.det(A),
    "slogdet": lambda m, A: m.linalg.slogdet(A)[1],
    "pinv": lambda m, A: m.linalg.pinv(A),
    "matrix_rank": lambda m, A: m.linalg.matrix_rank(A),
    "lu": lambda m, A: m.linalg.lu(A)[1],
    "lu_factor": lambda m, A: m.linalg.lu_factor(A)[0],
    "lu_solve": lambda m, A: m.linalg.lu_solve(*m.linalg.lu_factor(A), A),
    "solve_triangular": lambda m, A: m.linalg.solve_triangular(A, A, upper=True),
    "matrix_norm 2": lambda m, A: m.linalg.matrix_norm(A, 2),
    "cond": lambda m, A: m.linalg.cond(A),
    "orthogonal_": lambda m, A: m.nn.init.orthogonal_(A),
}


@pytest.mark.parametrize("name", list(_LINALG))
def test_linalg_infers_like_torch_meta(name):
    out = _LINALG[name](flow, flow.empty(3, 4, 4, device="meta"))
    ref = _LINALG[name](torch, torch.empty(3, 4, 4, device="meta"))
    assert out.is_meta and tuple(out.shape) == tuple(ref.shape)
    assert str(out.dtype).split(".")[-1] == str(ref.dtype).split(".")[-1]


def test_one_hot_and_bce_on_meta():
    idx = flow.zeros(4, dtype=flow.int64, device="meta")
    assert tuple(F.one_hot(idx, 10).shape) == (4, 10)
    p = flow.empty(3, 2, device="meta")
    assert F.binary_cross_entropy(p, p).is_meta


def test_masked_scatter_multinomial_and_embedding_bag_on_meta_like_torch():
    for m in (flow, torch):
        x = m.empty(3, 4, device="meta")
        mask = m.empty(4, dtype=m.bool, device="meta")
        assert tuple(x.masked_scatter(mask, m.empty(20, device="meta")).shape) == (3, 4)
        assert tuple(m.multinomial(m.empty(2, 5, device="meta"), 3).shape) == (2, 3)
        s = m.multinomial(m.empty(5, device="meta"), 2, True)
        assert tuple(s.shape) == (2,) and s.is_meta and str(s.dtype).endswith("int64")
        bag = m.nn.EmbeddingBag(10, 3, device="meta")
        out = bag(m.zeros(2, 4, dtype=m.int64, device="meta"))
        assert tuple(out.shape) == (2, 3) and out.is_meta
        offsets = m.tensor([0, 2, 5], device="meta")
        assert tuple(bag(m.zeros(7, dtype=m.int64, device="meta"), offsets).shape) == (3, 3)


def test_grad_of_another_device_is_refused_as_torch():
    for lib in (flow, torch):
        x = lib.zeros(2, requires_grad=True)
        with pytest.raises(RuntimeError, match="device"):
            x.grad = lib.zeros(2, device="meta")
        x.grad = lib.ones(2)
        assert x.grad.sum().item() == 2
