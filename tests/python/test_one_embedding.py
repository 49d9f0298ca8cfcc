"""oneflow.one_embedding: key-value embedding tables. Training is checked against PyTorch's
dense nn.Embedding with the same optimizer (every step touches every id, where the dense and the
row-wise updates agree), compiled graphs against eager, and snapshots, state dicts and the
persistent-table tools by round trips."""

import os

import numpy as np
import pytest
import torch

import oneflow as flow
import oneflow.one_embedding as oe


def _store(tmp_path, size_factor=1, capacity=100000, **kw):
    return oe.make_device_mem_store_options(
        persistent_path=str(tmp_path), capacity=capacity, size_factor=size_factor, **kw
    )


def _emb(tmp_path, dim=4, size_factor=1, tables=None, seed=0, **kw):
    return oe.MultiTableEmbedding(
        "emb", dim, flow.float, flow.int64, tables, _store(tmp_path, size_factor), seed=seed, **kw
    )


def test_option_helpers_match_oneflow_layout():
    assert oe.make_uniform_initializer(low=-1, high=2) == {"type": "uniform", "low": -1, "high": 2}
    assert oe.make_normal_initializer() == {"type": "normal", "mean": 0.0, "std": 1.0}
    assert oe.make_constant_initializer(3)["value"] == 3
    init = oe.make_normal_initializer(0, 0.1)
    assert oe.make_table_options(init) == {"initializer": init}
    assert oe.make_table(init) == oe.make_table_options(init)
    cols = [oe.make_column_options(init)] * 2
    assert oe.make_table_options(cols) == {"columns": cols}
    with pytest.raises(ValueError, match="param must be initializer or columns"):
        oe.make_table_options(3)
    dev = oe.make_device_mem_store_options("/tmp/p", 100, size_factor=2)
    assert dev["kv_store"]["caches"] == [
        {"policy": "full", "capacity": 100, "value_memory_kind": "device"}
    ]
    assert dev["kv_store"]["persistent_table"]["path"] == "/tmp/p"
    assert dev["size_factor"] == 2 and dev["storage_dim"] == -1
    host = oe.make_cached_host_mem_store_options(16, "/tmp/p", 100)
    assert [c["policy"] for c in host["kv_store"]["caches"]] == ["lru", "full"]
    ssd = oe.make_cached_ssd_store_options(16, "/tmp/p", host_cache_budget_mb=8)
    assert [c["value_memory_kind"] for c in ssd["kv_store"]["caches"]] == ["device", "host"]
    assert ssd["kv_store"]["persistent_table"]["capacity_hint"] == 0
    with pytest.raises(AssertionError):
        oe.make_cached_ssd_store_options(0, "/tmp/p")
    with pytest.raises(AssertionError):
        oe.make_device_mem_store_options("/tmp/p", 0)


def test_lookup_shapes_and_a_key_keeps_its_row(tmp_path):
    emb = _emb(tmp_path, dim=5, seed=7)
    assert [n for n, _ in emb.named_parameters()] == ["shadow"]
    ids = flow.tensor([[3, 9], [1 << 40, 3]], dtype=flow.int64)
    y = emb(ids)
    assert y.shape == (2, 2, 5) and y.dtype == flow.float32 and y.requires_grad
    np.testing.assert_array_equal(y[0, 0].numpy(), y[1, 1].numpy())
    assert emb.num_ids() == 3
    np.testing.assert_array_equal(emb(flow.tensor([3])).numpy()[0], y[0, 0].numpy())
    assert emb(flow.tensor([], dtype=flow.int64)).shape == (0, 5)
    # A key's first row depends on (seed, key) only, not on the batch it came in.
    other = _emb(tmp_path, dim=5, seed=7)
    np.testing.assert_array_equal(other(flow.tensor([1 << 40])).numpy()[0], y[1, 0].numpy())
    assert not np.array_equal(
        _emb(tmp_path, dim=5, seed=8)(flow.tensor([3])).numpy(), y[0, 0:1].numpy()
    )
    # int32 keys
    e32 = oe.MultiTableEmbedding("e", 3, flow.float, flow.int32, None, _store(tmp_path))
    assert e32(flow.tensor([1, 2], dtype=flow.int32)).shape == (2, 3)
    with pytest.raises(AssertionError, match="key_type"):
        e32(flow.tensor([1, 2], dtype=flow.int64))
    # non-contiguous ids
    ids = flow.tensor([[1, 2, 3], [4, 5, 6]]).t()
    np.testing.assert_array_equal(emb(ids).numpy(), emb(ids.contiguous()).numpy())


def test_initializers_per_table_and_column(tmp_path):
    tables = [
        oe.make_table_options(oe.make_uniform_initializer(low=2.0, high=3.0)),
        oe.make_table_options(oe.make_normal_initializer(mean=-5.0, std=0.5)),
        oe.make_table_options(oe.make_constant_initializer(1.5)),
        oe.make_table_options(oe.make_trunc_normal_initializer(mean=0.0, std=1.0, a=-0.5, b=0.5)),
    ]
    emb = _emb(tmp_path, dim=16, tables=tables)
    n = 2000
    ids = flow.arange(4 * n).reshape(n, 4)  # column j: table j
    y = emb(ids).numpy()
    u, g, c, t = (y[:, j] for j in range(4))
    assert u.min() >= 2.0 and u.max() < 3.0 and abs(u.mean() - 2.5) < 0.01
    assert abs(g.mean() + 5.0) < 0.01 and abs(g.std() - 0.5) < 0.01
    np.testing.assert_array_equal(c, 1.5)
    assert t.min() >= -0.5 and t.max() <= 0.5 and t.std() > 0.2
    # explicit table ids, broadcast from the trailing dims
    z = emb(flow.tensor([[10**9, 10**9 + 1]]), flow.tensor([2, 2], dtype=flow.int32)).numpy()
    np.testing.assert_array_equal(z, 1.5)
    with pytest.raises(IndexError, match="table id 7"):
        emb(flow.tensor([10**10]), flow.tensor([7], dtype=flow.int32)).numpy()
    assert emb(flow.tensor([5])).shape == (1, 16)  # the engine stays usable
    with pytest.raises(ValueError, match="do not match"):
        emb(flow.tensor([[1, 2]]), flow.tensor([1, 2, 3], dtype=flow.int32))

    cols = [oe.make_column_options(oe.make_constant_initializer(v)) for v in (1.0, 2.0)]
    mc = oe.MultiTableMultiColumnEmbedding(
        "mc", [2, 3], flow.float, flow.int64, [oe.make_table_options(cols)], _store(tmp_path)
    )
    np.testing.assert_array_equal(mc(flow.tensor([4])).numpy(), [[1, 1, 2, 2, 2]])
    with pytest.raises(AssertionError, match="columns"):
        oe.MultiTableMultiColumnEmbedding(
            "mc", [2, 3, 1], flow.float, flow.int64, [oe.make_table_options(cols)], _store(tmp_path)
        )
    with pytest.raises(ValueError, match="unknown initializer"):
        _emb(tmp_path, tables=[oe.make_table_options({"type": "xavier"})])
    with pytest.raises(AssertionError, match="embedding_dim must be an int"):
        oe.MultiTableEmbedding("e", [2, 3], flow.float, flow.int64, None, _store(tmp_path))


# (optimizer name, kwargs, size_factor)
CONFIGS = [
    ("SGD", dict(lr=0.3), 1),
    ("SGD", dict(lr=0.3, weight_decay=0.1, maximize=True), 1),
    ("SGD", dict(lr=0.2, momentum=0.9), 2),
    ("SGD", dict(lr=0.2, momentum=0.9, dampening=0.3, weight_decay=0.05), 2),
    ("SGD", dict(lr=0.2, momentum=0.8, nesterov=True), 2),
    ("Adam", dict(lr=0.05), 3),
    ("Adam", dict(lr=0.05, betas=(0.8, 0.9), eps=1e-6, weight_decay=0.1), 3),
    ("AdamW", dict(lr=0.05, weight_decay=0.2), 3),
    ("Adagrad", dict(lr=0.3, lr_decay=0.1, initial_accumulator_value=0.2, weight_decay=0.01), 2),
]


@pytest.mark.parametrize("name,kw,size_factor", CONFIGS)
def test_training_matches_torch_dense_embedding(tmp_path, name, kw, size_factor):
    vocab, dim = 10, 6
    keys = np.array([7, 100, 3, 2**33, 12, 5, 999, 41, 8, 77])
    emb = _emb(tmp_path, dim=dim, size_factor=size_factor, seed=1)
    weight0 = emb(flow.tensor(keys)).numpy()
    ref = torch.nn.Embedding(vocab, dim)
    with torch.no_grad():
        ref.weight.copy_(torch.from_numpy(weight0))
    opt = getattr(flow.optim, name)(emb.parameters(), **kw)
    ropt = getattr(torch.optim, name)(ref.parameters(), **kw)
    rng = np.random.default_rng(0)
    target = rng.standard_normal((24, dim)).astype(np.float32)
    for _ in range(4):
        # every id at least once (a dense step touches every row), with duplicates
        pos = np.concatenate([rng.permutation(vocab), rng.integers(0, vocab, 14)])
        y = emb(flow.tensor(keys[pos]))
        ((y - flow.tensor(target)) ** 2).sum().backward()
        assert emb.shadow.grad is not None and float(emb.shadow.grad.abs().sum()) == 0
        opt.step()
        opt.zero_grad()
        r = ref(torch.from_numpy(pos))
        ((r - torch.from_numpy(target)) ** 2).sum().backward()
        ropt.step()
        ropt.zero_grad()
    np.testing.assert_allclose(
        emb(flow.tensor(keys)).numpy(), ref.weight.detach().numpy(), rtol=1e-5, atol=1e-6
    )


def test_only_rows_with_a_gradient_move_and_gradients_accumulate(tmp_path):
    emb = _emb(tmp_path, dim=3, size_factor=2, padding_idx=0)
    opt = flow.optim.SGD(emb.parameters(), lr=1.0, momentum=0.5)
    w = emb(flow.tensor([1, 2])).numpy()
    emb(flow.tensor([1, 2, 0])).sum().backward()
    opt.step()
    opt.zero_grad()
    np.testing.assert_allclose(emb(flow.tensor([1, 2])).numpy(), w - 1, rtol=1e-6)
    # id 2 gets no gradient: its row and its momentum stay (no decay of untouched rows)
    emb(flow.tensor([1])).sum().backward()
    opt.step()
    opt.zero_grad()
    out = emb(flow.tensor([1, 2])).numpy()
    np.testing.assert_allclose(out[0], w[0] - 1 - 1.5, rtol=1e-6)
    np.testing.assert_allclose(out[1], w[1] - 1, rtol=1e-6)
    # the padding id reads zeros, is never stored and gets no update
    np.testing.assert_array_equal(emb(flow.tensor([0])).numpy(), 0)
    assert emb.num_ids() == 2
    # two backward passes before a step add; zero_grad drops what was pushed
    plain = _emb(tmp_path, dim=2)
    sgd = flow.optim.SGD(plain.parameters(), lr=1.0)
    w = plain(flow.tensor([5])).numpy()
    plain(flow.tensor([5])).sum().backward()
    sgd.zero_grad()
    plain(flow.tensor([5])).sum().backward()
    plain(flow.tensor([5, 5])).sum().backward()
    sgd.step()
    np.testing.assert_allclose(plain(flow.tensor([5])).numpy(), w - 3, rtol=1e-6)


def test_one_embedding_optimizer_wrapper_and_refusals(tmp_path):
    emb = _emb(tmp_path, dim=2)
    lin = flow.nn.Linear(2, 1)
    base = flow.optim.SGD(list(emb.parameters()) + list(lin.parameters()), lr=0.1)
    opt = oe.Optimizer(base, [emb])
    w = emb(flow.tensor([1])).numpy()
    lin(emb(flow.tensor([1]))).sum().backward()
    opt.step()
    opt.zero_grad()
    assert not np.array_equal(emb(flow.tensor([1])).numpy(), w)
    assert opt.param_groups is base.param_groups
    with pytest.raises(ValueError, match="embedding must in optimizers param_group"):
        oe.Optimizer(flow.optim.SGD(lin.parameters(), lr=0.1), [emb])
    with pytest.raises(NotImplementedError, match="RMSprop"):
        oe.Optimizer(flow.optim.RMSprop(emb.parameters()), [emb])
    # an optimizer whose state does not fit the row
    small = _emb(tmp_path, dim=2, size_factor=1)
    adam = flow.optim.Adam(small.parameters())
    small(flow.tensor([1])).sum().backward()
    with pytest.raises(RuntimeError, match="size_factor=3"):
        adam.step()
        small.num_ids()
    assert small(flow.tensor([1])).shape == (1, 2)


def test_capacity_bounds_a_device_memory_table(tmp_path):
    emb = oe.MultiTableEmbedding("e", 2, flow.float, flow.int64, None, _store(tmp_path, capacity=3))
    emb(flow.tensor([1, 2, 3])).numpy()
    with pytest.raises(RuntimeError, match="the table is full"):
        emb(flow.tensor([4])).numpy()
    assert emb(flow.tensor([1, 2, 3])).shape == (3, 2)
    # cached stores take capacity as a hint
    opts = oe.make_cached_host_mem_store_options(1, str(tmp_path), 2)
    loose = oe.MultiTableEmbedding("e", 2, flow.float, flow.int64, None, opts)
    assert loose(flow.arange(10)).shape == (10, 2)
    with pytest.raises(NotImplementedError, match="float32"):
        oe.MultiTableEmbedding("e", 2, flow.float16, flow.int64, None, _store(tmp_path))


def _graph_for(emb, lin, opt):
    class G(flow.nn.Graph):
        def __init__(self):
            super().__init__()
            self.emb, self.lin = emb, lin
            self.add_optimizer(opt)

        def build(self, ids):
            loss = self.lin(self.emb(ids)).square().mean()
            loss.backward()
            return loss

    return G()


@pytest.mark.parametrize(
    "name,kw,size_factor",
    [("Adam", dict(lr=0.1), 3), ("SGD", dict(lr=0.1, momentum=0.9), 2), ("Adagrad", {}, 2)],
)
def test_graph_training_matches_eager(tmp_path, name, kw, size_factor):
    rng = np.random.default_rng(0)
    batches = [flow.tensor(rng.integers(0, 30, (8, 3))) for _ in range(5)]
    results = []
    for mode in ("eager", "graph"):
        emb = _emb(tmp_path / mode, dim=4, size_factor=size_factor, seed=3)
        lin = flow.nn.Linear(4, 1)
        with flow.no_grad():
            lin.weight.fill_(0.3)
            lin.bias.fill_(0.1)
        opt = getattr(flow.optim, name)(list(emb.parameters()) + list(lin.parameters()), **kw)
        losses = []
        if mode == "eager":
            for b in batches:
                loss = lin(emb(b)).square().mean()
                loss.backward()
                opt.step()
                opt.zero_grad()
                losses.append(float(loss))
        else:
            g = _graph_for(emb, lin, opt)
            losses = [float(g(b)) for b in batches]
        results.append((emb(flow.arange(30)).numpy(), emb.num_ids(), losses))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-6, atol=1e-7)
    assert results[0][1] == results[1][1] == 30
    np.testing.assert_allclose(results[0][2], results[1][2], rtol=1e-6)


def test_snapshots_and_state_dict_round_trip(tmp_path):
    emb = _emb(tmp_path, dim=3, size_factor=3, seed=2)
    opt = flow.optim.Adam(emb.parameters(), lr=0.1)
    for _ in range(2):
        emb(flow.tensor([1, 2, 3])).sum().backward()
        opt.step()
        opt.zero_grad()
    saved = emb(flow.tensor([1, 2, 3])).numpy()
    emb.save_snapshot("s1")
    rank_dir = tmp_path / "0-1"
    assert (rank_dir / "snapshots" / "s1" / "meta").exists()
    emb(flow.tensor([1, 2, 3, 4])).sum().backward()
    opt.step()
    emb.load_snapshot("s1")
    np.testing.assert_array_equal(emb(flow.tensor([1, 2, 3])).numpy(), saved)
    assert emb.num_ids() == 3
    with pytest.raises(RuntimeError, match="no snapshot"):
        emb.load_snapshot("missing")
    other_dim = _emb(tmp_path, dim=5, size_factor=3)
    with pytest.raises(RuntimeError, match="embedding_dim 3"):
        other_dim.load_snapshot("s1")

    sd = emb.state_dict()
    assert set(sd) == {"shadow", "OneEmbeddingSnapshot", "OneEmbeddingKeyValueOptions"}
    fresh = _emb(tmp_path, dim=3, size_factor=3, seed=99)
    fresh.load_state_dict(sd)
    np.testing.assert_array_equal(fresh(flow.tensor([1, 2, 3])).numpy(), saved)
    # the optimizer state travels in the rows: one more step agrees
    for e in (emb, fresh):
        o = flow.optim.Adam(e.parameters(), lr=0.1)
        e(flow.tensor([1, 2])).sum().backward()
        o.step()
    np.testing.assert_array_equal(
        emb(flow.tensor([1, 2])).numpy(), fresh(flow.tensor([1, 2])).numpy()
    )
    # nested in a model, under its prefix
    model = flow.nn.Sequential(_emb(tmp_path, dim=3, size_factor=3))
    msd = model.state_dict()
    assert "0.OneEmbeddingSnapshot" in msd
    model.load_state_dict(msd)
    bad = dict(sd, OneEmbeddingSnapshot="nope")
    with pytest.raises(RuntimeError, match="nope"):
        fresh.load_state_dict(bad)


def test_persistent_table_writer_and_reader(tmp_path):
    paths = [str(tmp_path / "0-2"), str(tmp_path / "1-2")]
    rng = np.random.default_rng(1)
    keys = rng.choice(10**12, 70000, replace=False).astype(np.int64)
    values = rng.standard_normal((70000, 6)).astype(np.float32)
    with oe.make_persistent_table_writer(paths, "snap", flow.int64, flow.float, 6) as w:
        w.write(keys[:40000], values[:40000])
        w.write(keys[40000:], values[40000:])
        with pytest.raises(ValueError, match=r"\(n, 6\)"):
            w.write(keys[:3], values[:3, :5])
        with pytest.raises(TypeError, match="int64 keys"):
            w.write(keys[:3].astype(np.int32), values[:3])
    got_k, got_v, sizes = [], [], []
    with oe.make_persistent_table_reader(paths, "snap", flow.int64, flow.float, 6) as r:
        for k, v in r:
            assert k.dtype == np.int64 and v.shape == (len(k), 6) and len(k) <= 65536
            got_k.append(k)
            got_v.append(v)
            sizes.append(len(k))
    k, v = np.concatenate(got_k), np.concatenate(got_v)
    assert sorted(k.tolist()) == sorted(keys.tolist())
    order = {int(x): i for i, x in enumerate(keys)}
    np.testing.assert_array_equal(v, values[[order[int(x)] for x in k]])
    assert 0 < sum(len(x) for x in got_k[:1]) < 70000  # both shards hold rows
    # a writer's snapshot loads into an embedding whose rank directory it wrote
    one = [str(tmp_path / "0-1")]
    with oe.make_persistent_table_writer(one, "w", flow.int64, flow.float, 3) as w:
        w.write(np.array([5, 6]), np.arange(6, dtype=np.float32).reshape(2, 3))
    emb = _emb(tmp_path, dim=3)
    emb.load_snapshot("w")
    np.testing.assert_array_equal(emb(flow.tensor([6, 5])).numpy(), [[3, 4, 5], [0, 1, 2]])
    with pytest.raises(NotImplementedError, match="float32"):
        oe.make_persistent_table_reader(one, "w", flow.int64, flow.float16, 3)


def test_persistent_path_per_rank(tmp_path):
    from oneflow.one_embedding import _rank_path

    assert _rank_path("/p", 3, 12) == os.path.join("/p", "03-12")
    assert _rank_path("/p", 0, 1) == os.path.join("/p", "0-1")
    assert _rank_path(["/a", "/b"], 1, 2) == "/b"
    with pytest.raises(AssertionError, match="one path per rank"):
        _rank_path(["/a"], 0, 2)


def test_output_takes_the_shadow_dtype(tmp_path):
    emb = _emb(tmp_path, dim=3).to(flow.float64)
    y = emb(flow.tensor([1, 2]))
    assert y.dtype == flow.float64
    opt = flow.optim.SGD(emb.parameters(), lr=1.0)
    w = y.detach().numpy()
    y.sum().backward()
    opt.step()
    np.testing.assert_allclose(emb(flow.tensor([1, 2])).numpy(), w - 1, rtol=1e-6)


def test_lookups_from_two_threads(tmp_path):
    import threading

    emb = _emb(tmp_path, dim=8)
    keys = [np.random.default_rng(s).integers(0, 2**62, (300, 16)) for s in (0, 1)]

    def work(k):
        with flow.no_grad():
            for row in k:
                emb(flow.tensor(row))

    threads = [threading.Thread(target=work, args=(k,)) for k in keys]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert emb.num_ids() == len(np.unique(np.concatenate(keys)))


def test_grad_scaler_unscales_the_table(tmp_path):
    emb = _emb(tmp_path, dim=2)
    dense = flow.nn.Embedding(5, 2)
    opt = flow.optim.SGD(list(emb.parameters()) + list(dense.parameters()), lr=1.0)
    ids = flow.tensor([1, 2, 3])
    w, d = emb(ids).numpy(), dense.weight[1:4].detach().numpy().copy()
    scaler = flow.amp.GradScaler(init_scale=1024.0, device="cpu")
    scaler.scale(emb(ids).sum() + dense(ids).sum()).backward()
    scaler.step(opt)
    scaler.update()
    opt.zero_grad()
    np.testing.assert_allclose(emb(ids).numpy(), w - 1, rtol=1e-6)
    np.testing.assert_allclose(dense.weight[1:4].detach().numpy(), d - 1, rtol=1e-6)
    # an inf only in the table's gradient skips the step
    w = emb(ids).numpy()
    scaler.scale((emb(ids) * float("inf")).sum() + dense(ids).sum()).backward()
    assert scaler.step(opt) is None
    scaler.update()
    opt.zero_grad()
    np.testing.assert_array_equal(emb(ids).numpy(), w)


def test_graph_gradient_accumulation_averages_the_table(tmp_path):
    emb = _emb(tmp_path, dim=2)
    dense = flow.nn.Embedding(8, 2)
    opt = flow.optim.SGD(list(emb.parameters()) + list(dense.parameters()), lr=1.0)

    class G(flow.nn.Graph):
        def __init__(self):
            super().__init__()
            self.emb, self.dense = emb, dense
            self.add_optimizer(opt)
            self.config.set_gradient_accumulation_steps(2)

        def build(self, x):
            loss = self.emb(x).sum() + self.dense(x).sum()
            loss.backward()
            return loss

    x = flow.tensor([1, 2, 3, 4])
    w, d = emb(x).numpy(), dense(x).detach().numpy()
    G()(x)
    np.testing.assert_allclose(emb(x).numpy() - w, dense(x).detach().numpy() - d, rtol=1e-6)
    np.testing.assert_allclose(emb(x).numpy() - w, -0.5, rtol=1e-6)


def test_autograd_grad_and_zero_grad_leave_the_table_alone(tmp_path):
    from oneflow._oneflow_internal import _one_embedding as store

    emb = _emb(tmp_path, dim=2)
    lin = flow.nn.Linear(2, 1)
    opt = flow.optim.SGD(emb.parameters(), lr=1.0)
    ids = flow.tensor([1, 2, 3, 4])
    y = emb(ids)
    (gy,) = flow.autograd.grad(lin(y).sum(), y)
    assert gy.shape == (4, 2) and store.pending(emb._handle) == 0
    w = emb(ids).numpy()
    emb(ids).sum().backward()
    emb.zero_grad()  # Module.zero_grad drops what backward pushed
    emb(ids).sum().backward()
    opt.step()
    opt.zero_grad()
    np.testing.assert_allclose(emb(ids).numpy(), w - 1, rtol=1e-6)
    emb(ids).sum().backward()
    emb.shadow.grad = None
    opt.zero_grad()  # also with the shadow's gradient already gone
    assert store.pending(emb._handle) == 0


def test_autograd_grad_runs_only_the_nodes_it_needs():
    x = flow.randn(3, requires_grad=True)
    calls = []
    y = x * 2
    z = (x * 3).sum()
    x3 = x * 3
    x3.register_hook(lambda g: calls.append("unused branch"))
    (g,) = flow.autograd.grad((y.sum() + (x3 * 0).sum()) * 0 + y.sum(), y)
    np.testing.assert_array_equal(g.numpy(), np.ones(3))
    assert calls == []
    (gx,) = flow.autograd.grad(z, x)
    np.testing.assert_array_equal(gx.numpy(), np.full(3, 3.0))


def test_copies_pickles_and_release(tmp_path):
    import copy
    import gc
    import pickle

    emb = _emb(tmp_path, dim=2)
    ids = flow.tensor([1, 2])
    w = emb(ids).numpy()
    twin = copy.deepcopy(emb)
    np.testing.assert_array_equal(twin(ids).numpy(), w)
    opt = flow.optim.SGD(twin.parameters(), lr=1.0)
    twin(ids).sum().backward()
    opt.step()
    np.testing.assert_array_equal(emb(ids).numpy(), w)
    np.testing.assert_allclose(twin(ids).numpy(), w - 1, rtol=1e-6)
    del emb
    gc.collect()
    assert twin(ids).shape == (2, 2)
    with pytest.raises(TypeError, match="does not pickle"):
        pickle.dumps(twin)
    # releasing a table keeps another op's queued error for the next synchronisation
    three = _emb(
        tmp_path, dim=2, tables=[oe.make_table_options(oe.make_constant_initializer(0))] * 3
    )
    gone = _emb(tmp_path, dim=2)
    internal = flow._oneflow_internal
    prev = internal.queue_every_op()
    internal.set_queue_every_op(True)  # the bad lookup queues instead of running at the call
    try:
        y = three(flow.arange(5), flow.full((5,), 7, dtype=flow.int32))
        del gone
        gc.collect()
    finally:
        internal.set_queue_every_op(prev)
    with pytest.raises(IndexError, match="table id 7"):
        y.numpy()


def test_a_failed_snapshot_load_keeps_the_table(tmp_path):
    big = _emb(tmp_path, dim=2)
    big(flow.arange(10)).numpy()
    big.save_snapshot("ten")
    small = oe.MultiTableEmbedding(
        "e", 2, flow.float, flow.int64, None, _store(tmp_path, capacity=5)
    )
    w = small(flow.tensor([100, 101])).numpy()
    with pytest.raises(RuntimeError, match="the table is full"):
        small.load_snapshot("ten")
    assert small.num_ids() == 2
    np.testing.assert_array_equal(small(flow.tensor([100, 101])).numpy(), w)


def test_truncated_normal_in_a_far_tail_and_bad_numbers(tmp_path):
    import time

    init = oe.make_trunc_normal_initializer(0.0, 1.0, a=8.0, b=9.0)
    emb = _emb(tmp_path, dim=16, tables=[oe.make_table_options(init)])
    t = time.perf_counter()
    v = emb(flow.arange(1000)).numpy()
    assert time.perf_counter() - t < 5
    assert v.min() >= 8.0 and v.max() <= 9.0
    assert abs(v.mean() - 8.1200) < 0.01 and len(np.unique(v)) > 1000  # E[Z | 8 < Z < 9] = 8.12
    with pytest.raises(ValueError, match="finite"):
        _emb(
            tmp_path, tables=[oe.make_table_options(oe.make_normal_initializer(0.0, float("nan")))]
        )
    two = _emb(tmp_path, dim=2, tables=[oe.make_table_options(oe.make_constant_initializer(0))] * 2)
    with pytest.raises(IndexError, match="table id -1"):
        two(flow.tensor([1]), flow.tensor([2**32 + 1])).numpy()
    with pytest.raises(AssertionError, match="out of range for int32"):
        oe.MultiTableEmbedding(
            "e", 2, flow.float, flow.int32, None, _store(tmp_path), padding_idx=2**40
        )


def test_wrapper_is_the_optimizer_and_unsupported_optimizers_refuse(tmp_path):
    emb = _emb(tmp_path, dim=2)
    base = flow.optim.SGD(emb.parameters(), lr=1.0)
    opt = oe.Optimizer(base, [emb])
    assert opt is base
    sched = flow.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    ids = flow.tensor([3])
    w = emb(ids).numpy()
    for _ in range(2):
        emb(ids).sum().backward()
        opt.step()
        opt.zero_grad()
        sched.step()
    np.testing.assert_allclose(emb(ids).numpy(), w - 1.5, rtol=1e-6)
    with pytest.raises(NotImplementedError, match="LBFGS"):
        flow.optim.LBFGS(emb.parameters())
    with pytest.raises(NotImplementedError, match="RMSprop"):
        flow.optim.RMSprop(emb.parameters())


def test_autograd_grad_leaves_other_branches_alone_like_torch():
    for lib in (flow, torch):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        a, b = x * 2, x * 3
        fired = []
        b.register_hook(fired.append)
        b.retain_grad()
        (g,) = lib.autograd.grad((a * b).sum(), a)
        np.testing.assert_allclose(g.detach().numpy(), [3.0, 6.0, 9.0])
        assert not fired and b.grad is None and x.grad is None
        with pytest.raises(RuntimeError, match=r"argument to `grad\(\)` cannot be empty"):
            lib.autograd.grad((x * x).sum(), [])


def test_autograd_grad_runs_no_backward_off_the_path():
    # only x's gradient is asked for: the custom Function on W's side does not run, and x's
    # gradient (the matmul no longer computes W's) equals PyTorch's
    seen = []

    class Spy(flow.autograd.Function):
        @staticmethod
        def forward(ctx, w):
            return w * 1

        @staticmethod
        def backward(ctx, g):
            seen.append(True)
            return g

    x = flow.randn(3, 4, requires_grad=True)
    w = flow.randn(4, 2, requires_grad=True)
    (gx,) = flow.autograd.grad((x.tanh() @ Spy.apply(w)).sum(), x)
    assert gx.shape == (3, 4) and not seen
    xt = torch.tensor(x.numpy(), requires_grad=True)
    wt = torch.tensor(w.numpy())
    (ref,) = torch.autograd.grad((xt.tanh() @ wt).sum(), xt)
    np.testing.assert_allclose(gx.numpy(), ref.numpy(), rtol=1e-5)
