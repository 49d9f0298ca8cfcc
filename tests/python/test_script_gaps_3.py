"""More PyTorch 2.x script idioms, each compared with the installed torch: `size=` keywords of
the factories and of reshape/expand/permute/new_*, numpy(force=True), top-level names
(frombuffer, rms_norm, is_inference, index_put, warn-always, inter-op threads,
set_flush_denormal, get_device_module, xpu, mps, return_types), amp.is_autocast_available,
backends.opt_einsum, containers' pop and reprs, Parameter's str, Generator's device and
state methods, the torch.compile surface (Module.compile, _dynamo, _inductor.config,
compiler.set_stance), func.stack_module_state, DataLoader collation, GradScaler's checks,
_foreach results, lr_scheduler's order warning and the global module hooks."""

import copy
import pickle
import warnings

import numpy as np
import pytest
import torch

import oneflow as flow

LIBS = pytest.mark.parametrize("lib", [flow, torch], ids=["oneflow", "torch"])


def _error(fn):
    try:
        fn()
    except Exception as e:
        return type(e).__name__, str(e).replace("oneflow", "torch").replace("OneFlow", "PyTorch")
    return None


def _same_errors(fn_of_lib):
    got, want = _error(lambda: fn_of_lib(flow)), _error(lambda: fn_of_lib(torch))
    assert want is not None and got is not None and got[0] == want[0], (got, want)
    return got, want


# ---- 1. size= keywords -------------------------------------------------------------------------


@LIBS
def test_factories_take_size_keyword(lib):
    assert tuple(lib.zeros(size=(2, 3)).shape) == (2, 3)
    assert tuple(lib.ones(size=[4]).shape) == (4,)
    assert tuple(lib.empty(size=(2,), dtype=lib.int64).shape) == (2,)
    assert lib.empty(size=(2,), dtype=lib.int64).dtype == lib.int64
    assert tuple(lib.rand(size=(1, 2), generator=lib.Generator()).shape) == (1, 2)
    assert tuple(lib.randn(size=(3,), dtype=lib.float64).shape) == (3,)
    assert lib.zeros(size=lib.Size([2, 2])).sum().item() == 0
    assert tuple(lib.randint(0, 5, size=(2, 3)).shape) == (2, 3)
    assert tuple(lib.randint(high=5, size=(2,)).shape) == (2,)
    assert lib.full(size=(2,), fill_value=3).tolist() == [3, 3]
    assert lib.ones(size=(2,), requires_grad=True).requires_grad


def test_factory_size_keyword_errors_like_torch():
    for fn in (
        lambda lib: lib.zeros(2, size=(3,)),
        lambda lib: lib.ones(size=5),
        lambda lib: lib.empty(size=2),
    ):
        got, want = _same_errors(fn)
        assert got[1] == want[1]
    got, want = _same_errors(lambda lib: lib.rand(1, size=(1,)))
    assert got[0] == "TypeError"


@LIBS
def test_tensor_methods_take_their_size_keywords(lib):
    x = lib.ones(2, 3)
    assert tuple(x.new_zeros(size=(2, 1)).shape) == (2, 1)
    assert x.new_ones(size=(2,), dtype=lib.int64).tolist() == [1, 1]
    assert tuple(x.new_empty(size=[3]).shape) == (3,)
    assert tuple(lib.ones(6).reshape(shape=(2, 3)).shape) == (2, 3)
    assert tuple(lib.ones(1, 3).expand(size=(4, 3)).shape) == (4, 3)
    assert tuple(lib.ones(1, 3).expand(size=[2, 3], implicit=True).shape) == (2, 3)
    assert tuple(x.permute(dims=(1, 0)).shape) == (3, 2)
    assert tuple(x.permute(dims=[1, 0]).shape) == (3, 2)
    # the positional forms are unchanged
    assert tuple(x.reshape(3, 2).shape) == (3, 2) and tuple(x.reshape((6,)).shape) == (6,)
    assert tuple(x.permute(1, 0).shape) == (3, 2) and tuple(x.new_zeros(1, 2).shape) == (1, 2)


def test_tensor_method_size_keyword_errors_like_torch():
    for fn in (
        lambda lib: lib.ones(6).reshape(2, shape=(3,)),
        lambda lib: lib.ones(6).reshape(shape=6),
        lambda lib: lib.ones(1, 3).expand(2, size=(2, 3)),
        lambda lib: lib.ones(2, 3).permute(1, dims=(1, 0)),
        lambda lib: lib.ones(2).new_zeros(2, size=(3,)),
        lambda lib: lib.ones(2).new_ones(size=3),
    ):
        got, want = _same_errors(fn)
        assert got[1] == want[1]


# ---- 2. numpy(force=True) ----------------------------------------------------------------------


@LIBS
def test_numpy_force_detaches_and_shares_cpu_memory(lib):
    x = lib.ones(3, requires_grad=True)
    a = x.numpy(force=True)
    assert isinstance(a, np.ndarray) and a.tolist() == [1, 1, 1] and a.flags.writeable
    a[0] = 5  # on the CPU: the tensor's memory, as PyTorch's detach().cpu().numpy()
    assert x.tolist() == [5, 1, 1]
    y = lib.arange(4.0)[::2]
    assert y.numpy(force=True).tolist() == [0.0, 2.0]
    assert lib.ones(2).numpy(force=False).tolist() == [1.0, 1.0]


# ---- 3. top-level names ------------------------------------------------------------------------


@LIBS
def test_frombuffer_shares_the_buffer(lib):
    b = bytearray(8)
    t = lib.frombuffer(b, dtype=lib.int32)
    assert t.dtype == lib.int32 and t.tolist() == [0, 0]
    b[0] = 7
    assert t.tolist() == [7, 0]
    t[1] = 3
    assert b == bytearray(b"\x07\x00\x00\x00\x03\x00\x00\x00")
    import array

    arr = array.array("i", [1, 2, 3])
    assert lib.frombuffer(arr, dtype=lib.int32, offset=4, count=2).tolist() == [2, 3]
    assert lib.frombuffer(arr, dtype=lib.int32, count=-2).tolist() == [1, 2, 3]
    assert lib.frombuffer(bytearray(4), dtype=lib.float16).tolist() == [0.0, 0.0]
    assert lib.frombuffer(bytearray(4), dtype=lib.bfloat16).dtype == lib.bfloat16
    assert lib.frombuffer(bytearray(8), dtype=lib.float32, requires_grad=True).requires_grad
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        assert lib.frombuffer(bytes(8), dtype=lib.int64).tolist() == [0]


def test_frombuffer_errors_like_torch():
    for fn in (
        lambda lib: lib.frombuffer(bytearray(8), lib.int32),
        lambda lib: lib.frombuffer(bytearray(0), dtype=lib.int32),
        lambda lib: lib.frombuffer(bytearray(8), dtype=lib.int32, count=0),
        lambda lib: lib.frombuffer(bytearray(8), dtype=lib.int32, offset=8),
        lambda lib: lib.frombuffer(bytearray(8), dtype=lib.int32, offset=-1),
        lambda lib: lib.frombuffer(bytearray(7), dtype=lib.int32),
        lambda lib: lib.frombuffer(bytearray(8), dtype=lib.int32, count=3),
        lambda lib: lib.frombuffer([1, 2], dtype=lib.int32),
    ):
        got, want = _same_errors(fn)
        if got[0] == "ValueError":
            assert got[1] == want[1]


def test_is_inference_index_put_and_rms_norm_like_torch():
    for lib in (flow, torch):
        assert lib.is_inference(lib.ones(1)) is False
        with lib.inference_mode():
            assert lib.is_inference(lib.ones(1)) is True
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    idx = ([0, 1, 1], [2, 0, 2])
    vals = np.array([10.0, 20.0, 30.0], dtype=np.float32)
    for accumulate in (False, True):
        outs = []
        for lib in (flow, torch):
            t = lib.tensor(x)
            r = lib.index_put(
                t, tuple(lib.tensor(i) for i in idx), lib.tensor(vals), accumulate=accumulate
            )
            assert t.tolist() == x.tolist()  # out of place
            outs.append(r.numpy())
        np.testing.assert_array_equal(*outs)
    w = np.random.default_rng(0).standard_normal(3).astype(np.float32)
    got = flow.rms_norm(flow.tensor(x), [3], flow.tensor(w), eps=1e-6).numpy()
    want = torch.rms_norm(torch.tensor(x), [3], torch.tensor(w), eps=1e-6).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_warn_always_and_interop_threads_like_torch():
    for lib in (flow, torch):
        assert lib.is_warn_always_enabled() is False
        lib.set_warn_always(True)
        assert lib.is_warn_always_enabled() is True
        lib.set_warn_always(False)
        n = lib.get_num_interop_threads()
        assert isinstance(n, int) and n >= 1
    assert flow.get_num_interop_threads() == torch.get_num_interop_threads()
    for fn in (
        lambda lib: lib.set_num_interop_threads(0),
        lambda lib: lib.set_num_interop_threads(2.0),
    ):
        got, want = _same_errors(fn)
        assert got[1] == want[1]
    # set once (torch's own flag is left alone: a process sets it at most once)
    from oneflow.framework import toplevel_extra

    saved = toplevel_extra._interop_threads[0]
    try:
        toplevel_extra._interop_threads[0] = None
        flow.set_num_interop_threads(3)
        assert flow.get_num_interop_threads() == 3
        with pytest.raises(RuntimeError, match="cannot set number of interop threads"):
            flow.set_num_interop_threads(4)
    finally:
        toplevel_extra._interop_threads[0] = saved


def test_set_flush_denormal_reports_no_support():
    assert flow.set_flush_denormal(True) is False
    assert flow.set_flush_denormal(False) is False
    assert isinstance(torch.set_flush_denormal(False), bool)


def test_get_device_module_like_torch():
    default = flow.cuda if flow.cuda.is_available() else flow.cpu
    assert flow.get_device_module() is default
    if not torch.cuda.is_available():
        assert torch.get_device_module() is torch.cpu
    for lib in (flow, torch):
        assert lib.get_device_module("cpu") is lib.cpu
        assert lib.get_device_module(lib.device("cpu")) is lib.cpu
        assert lib.get_device_module("cuda:0") is lib.cuda
        assert lib.get_device_module("xpu") is lib.xpu
        assert lib.get_device_module("mps") is lib.mps
    for fn in (
        lambda lib: lib.get_device_module("meta"),
        lambda lib: lib.get_device_module("foo"),
        lambda lib: lib.get_device_module(3),
    ):
        got, want = _same_errors(fn)
        assert got[1] == want[1]


def test_xpu_and_mps_modules_like_torch_without_them():
    calls = [
        ("xpu", "is_available", ()),
        ("xpu", "device_count", ()),
        ("xpu", "is_initialized", ()),
        ("xpu", "is_bf16_supported", ()),
        ("xpu", "get_arch_list", ()),
        ("xpu", "get_gencode_flags", ()),
        ("xpu", "empty_cache", ()),
        ("xpu", "memory_allocated", ()),
        ("xpu", "max_memory_reserved", ()),
        ("xpu", "memory_stats", ()),
        ("xpu", "manual_seed", (1,)),
        ("xpu", "manual_seed_all", (1,)),
        ("xpu", "seed", ()),
        ("xpu", "get_rng_state_all", ()),
        ("mps", "is_available", ()),
        ("mps", "device_count", ()),
        ("mps", "manual_seed", (1,)),
    ]
    for mod, name, args in calls:
        got = getattr(getattr(flow, mod), name)(*args)
        want = getattr(getattr(torch, mod), name)(*args)
        assert got == want and type(got) is type(want), (mod, name, got, want)
    for mod, name in [("xpu", "current_device"), ("xpu", "synchronize"), ("mps", "synchronize")]:
        got, want = _same_errors(lambda lib, mod=mod, name=name: getattr(getattr(lib, mod), name)())
        assert got[0] == want[0]


def test_is_autocast_available_like_torch():
    for lib in (flow, torch):
        amp = lib.amp
        assert amp.is_autocast_available("cpu") and amp.is_autocast_available("cuda")
        assert amp.is_autocast_available("cuda:0")
        assert not amp.is_autocast_available("meta")
    got, want = _same_errors(lambda lib: lib.amp.is_autocast_available("foo"))
    assert got[1] == want[1]
    got, want = _same_errors(lambda lib: lib.amp.is_autocast_available(lib.device("cpu")))
    assert got[0] == "TypeError"


def test_backends_opt_einsum_like_torch():
    ours, theirs = flow.backends.opt_einsum, torch.backends.opt_einsum
    assert ours.is_available() == theirs.is_available()
    assert ours.enabled == theirs.enabled and ours.strategy == theirs.strategy
    assert (ours.get_opt_einsum() is None) == (theirs.get_opt_einsum() is None)
    with ours.flags(enabled=False):
        assert ours.enabled is False
    assert ours.enabled == theirs.enabled
    if not theirs.is_available():
        for fn in (
            lambda lib: lib.backends.opt_einsum.set_flags(True),
            lambda lib: lib.backends.opt_einsum.set_flags(None, "auto"),
        ):
            got, want = _same_errors(fn)
            assert got[1] == want[1]


def test_return_types_are_the_classes_the_ops_return():
    rt = flow.return_types
    x = flow.tensor(np.random.default_rng(0).standard_normal((3, 3)).astype(np.float32))
    spd = x @ x.T + flow.eye(3)
    cases = {
        "max": flow.max(x, 0),
        "min": x.min(1),
        "sort": flow.sort(x),
        "topk": flow.topk(x, 2),
        "kthvalue": flow.kthvalue(x, 1),
        "median": flow.median(x, 0),
        "nanmedian": flow.nanmedian(x, 0),
        "mode": flow.mode(x),
        "cummax": flow.cummax(x, 0),
        "cummin": flow.cummin(x, 0),
        "aminmax": flow.aminmax(x),
        "frexp": flow.frexp(x),
        "histogram": flow.histogram(x.flatten(), bins=3),
        "slogdet": flow.slogdet(x),
        "qr": flow.qr(x),
        "svd": flow.svd(x),
        "linalg_eigh": flow.linalg.eigh(spd),
        "linalg_slogdet": flow.linalg.slogdet(x),
        "linalg_qr": flow.linalg.qr(x),
        "linalg_svd": flow.linalg.svd(x),
        "linalg_inv_ex": flow.linalg.inv_ex(spd),
        "linalg_cholesky_ex": flow.linalg.cholesky_ex(spd),
        "linalg_lu_factor": flow.linalg.lu_factor(x),
        "linalg_lu": flow.linalg.lu(x),
        "linalg_solve_ex": flow.linalg.solve_ex(spd, x),
    }
    t = torch.tensor(x.numpy())
    t_spd = t @ t.T + torch.eye(3)
    torch_cases = {
        "max": torch.max(t, 0),
        "min": t.min(1),
        "sort": torch.sort(t),
        "topk": torch.topk(t, 2),
        "kthvalue": torch.kthvalue(t, 1),
        "median": torch.median(t, 0),
        "nanmedian": torch.nanmedian(t, 0),
        "mode": torch.mode(t),
        "cummax": torch.cummax(t, 0),
        "cummin": torch.cummin(t, 0),
        "aminmax": torch.aminmax(t),
        "frexp": torch.frexp(t),
        "histogram": torch.histogram(t.flatten(), bins=3),
        "slogdet": torch.slogdet(t),
        "qr": torch.qr(t),
        "svd": torch.svd(t),
        "linalg_eigh": torch.linalg.eigh(t_spd),
        "linalg_slogdet": torch.linalg.slogdet(t),
        "linalg_qr": torch.linalg.qr(t),
        "linalg_svd": torch.linalg.svd(t),
        "linalg_inv_ex": torch.linalg.inv_ex(t_spd),
        "linalg_cholesky_ex": torch.linalg.cholesky_ex(t_spd),
        "linalg_lu_factor": torch.linalg.lu_factor(t),
        "linalg_lu": torch.linalg.lu(t),
        "linalg_solve_ex": torch.linalg.solve_ex(t_spd, t),
    }
    for name, result in cases.items():
        cls = getattr(rt, name)
        assert type(result) is cls and isinstance(result, cls), name
        theirs = torch_cases[name]
        assert isinstance(theirs, getattr(torch.return_types, name)), name
        for i, field in enumerate(cls._fields):  # the same fields, in the same order
            assert getattr(theirs, field) is theirs[i], (name, field)
        assert len(cls._fields) == len(theirs), name
    assert set(rt.__all__) <= set(dir(torch.return_types))


# ---- 4. containers and Parameter ---------------------------------------------------------------


def _text(lib, s):
    return s.replace("oneflow", "torch").replace(", dtype=torch.float32", "")


def test_module_list_pop_like_torch():
    out = []
    for lib in (flow, torch):
        nn = lib.nn
        ml = nn.ModuleList([nn.ReLU(), nn.Tanh(), nn.Sigmoid(), nn.GELU()])
        popped = [ml.pop(0), ml.pop(-1)]
        sliced = ml.pop(slice(0, 1))
        out.append(([repr(p) for p in popped], repr(sliced), repr(ml), len(ml)))
        with pytest.raises(TypeError):
            ml.pop()
    assert out[0] == out[1]


def test_parameter_containers_and_parameter_print_like_torch():
    out = []
    for lib in (flow, torch):
        nn = lib.nn
        pd = nn.ParameterDict(
            {
                "a": nn.Parameter(lib.ones(2)),
                "b": nn.Parameter(lib.ones(2, 3, dtype=lib.float64)),
                "c": lib.ones(3),
            }
        )
        pl = nn.ParameterList(
            [nn.Parameter(lib.ones(2)), lib.ones(3, dtype=lib.float64), lib.ones(1, 4)]
        )
        one = nn.ParameterList([nn.Parameter(lib.ones(2))])
        holder = nn.Sequential(nn.Linear(1, 1))
        holder.pd, holder.pl = pd, pl
        p = nn.Parameter(lib.ones(2))
        frozen = nn.Parameter(lib.ones(2), requires_grad=False)
        texts = [repr(pd), repr(pl), repr(one), repr(nn.ParameterDict()), repr(holder)]
        texts += [str(p), repr(p), f"{p}", f"{p}", format(p), str(frozen)]
        out.append([_text(lib, s) for s in texts])
    assert out[0] == out[1]
    assert str(flow.nn.Parameter(flow.ones(1))).startswith("Parameter containing:\n")


# ---- 5. Generator ------------------------------------------------------------------------------


def test_generator_device_state_and_offsets_like_torch():
    for lib in (flow, torch):
        g = lib.Generator()
        assert isinstance(g.device, lib.device) and g.device.type == "cpu"
        assert lib.default_generator.device.type == "cpu"
        assert lib.Generator("cpu").device.type == "cpu"
        g.manual_seed(3)
        lib.rand(4, generator=g)
        c = g.clone_state()
        assert isinstance(c, lib.Generator) and c is not g and c.device == g.device
        assert c.initial_seed() == g.initial_seed() == 3
        assert lib.rand(4, generator=g).tolist() == lib.rand(4, generator=c).tolist()
        h = lib.Generator()
        assert h.set_state(g.get_state()) is h
        assert lib.rand(2, generator=h).tolist() == lib.rand(2, generator=g).tolist()
    for fn in (lambda lib: lib.Generator().get_offset(), lambda lib: lib.Generator().set_offset(1)):
        got, want = _same_errors(fn)
        assert got[1] == want[1]


def test_generator_offset_of_a_cuda_generator():
    g = flow.Generator("cuda")  # the device is remembered without a CUDA device
    assert g.device == flow.device("cuda", 0)
    g.manual_seed(7)
    assert g.get_offset() == 0
    assert g.set_offset(12) is g and g.get_offset() == 12
    assert g.initial_seed() == 7 and g.clone_state().get_offset() == 12
    assert isinstance(g, flow.Generator)


# ---- 6. the torch.compile surface ---------------------------------------------------------------


class _Net(flow.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = flow.nn.Linear(3, 3)
        self.drop = flow.nn.Dropout(0.5)

    def forward(self, x):
        return self.drop(self.lin(x))


def test_module_compile_compiles_forward_in_place():
    for lib in (torch,):
        m = lib.nn.Linear(2, 2)
        assert m.compile() is None  # torch: compiles in place, returns None
    m = _Net()
    seen = []
    m.register_forward_hook(lambda mod, args, out: seen.append(1))
    assert m.compile() is None
    x = flow.ones(2, 3)
    m.eval()
    with flow.no_grad():
        got, want = m(x), _Net.forward(m, x)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert seen == [1]  # the module's hooks still run
    m.forward._compiled._module.__dict__["_graphs"] = {}
    with flow.no_grad():
        m(x)
    assert len(m.forward._compiled._module.__dict__["_graphs"]) == 0  # hooks: eager
    m._forward_hooks.clear()
    with flow.no_grad():
        m(x)
    assert len(m.forward._compiled._module.__dict__["_graphs"]) == 1  # compiled
    m.train()  # training mode: eager (dropout draws)
    with flow.no_grad():
        assert (m(flow.ones(1000, 3)) == 0).any()
    m(x).sum().backward()
    assert m.lin.weight.grad is not None
    assert list(m.state_dict()) == ["lin.weight", "lin.bias"]
    for twin in (copy.deepcopy(m), pickle.loads(pickle.dumps(m))):
        assert twin.forward.__wrapped__.__self__ is twin
        twin.eval()
        with flow.no_grad():
            np.testing.assert_array_equal(twin(x).numpy(), _Net.forward(twin, x).numpy())
    with pytest.raises(TypeError):
        _Net().compile("inductor")


def test_dynamo_and_inductor_modules_like_torch():
    import torch._dynamo
    import torch._inductor.config as torch_inductor

    import oneflow._dynamo.eval_frame as flow_eval_frame
    import oneflow._inductor.config as flow_inductor

    assert isinstance(flow.compile(flow.nn.Linear(1, 1)), flow_eval_frame.OptimizedModule)
    assert isinstance(
        torch.compile(torch.nn.Linear(1, 1)), torch._dynamo.eval_frame.OptimizedModule
    )
    for name in (
        "max_autotune",
        "coordinate_descent_tuning",
        "epilogue_fusion",
        "freezing",
        "fx_graph_cache",
        "triton.cudagraphs",
        "triton.unique_kernel_names",
        "cpp.threads",
    ):
        got, want = flow_inductor, torch_inductor
        for part in name.split("."):
            got, want = getattr(got, part), getattr(want, part)
        assert got == want, name
    assert flow._inductor.config is flow_inductor
    for lib in (flow, torch):
        assert lib._dynamo.graph_break() is None
        assert lib.compiler.cudagraph_mark_step_begin() is None
        assert {"inductor", "cudagraphs"} <= set(lib._dynamo.list_backends())
        assert "eager" not in lib._dynamo.list_backends()
        assert "eager" in lib._dynamo.list_backends(exclude_tags=())


@pytest.mark.parametrize("which", ["dynamo", "inductor"])
def test_config_patch_like_torch(which):
    import torch._dynamo
    import torch._inductor.config

    def config(lib):
        return lib._dynamo.config if which == "dynamo" else lib._inductor.config

    name = "verbose" if which == "dynamo" else "max_autotune"
    for lib in (flow, torch):
        cfg = config(lib)
        before = getattr(cfg, name)
        with cfg.patch(**{name: not before}):
            assert getattr(cfg, name) is (not before)
        assert getattr(cfg, name) is before
        with cfg.patch(name, not before):
            assert getattr(cfg, name) is (not before)
        with cfg.patch({name: not before}):
            assert getattr(cfg, name) is (not before)

        @cfg.patch(**{name: not before})
        def read(cfg=cfg):
            return getattr(cfg, name)

        assert read() is (not before) and getattr(cfg, name) is before
    if which == "dynamo":
        for lib in (flow, torch):
            cfg = config(lib)
            limit = cfg.cache_size_limit
            with cfg.patch(cache_size_limit=3):
                assert cfg.cache_size_limit == 3 and cfg.recompile_limit == 3
            assert cfg.cache_size_limit == limit
    else:
        for lib in (flow, torch):
            cfg = config(lib)
            with cfg.patch("triton.cudagraphs", True):
                assert cfg.triton.cudagraphs is True
            assert cfg.triton.cudagraphs is False

    def enter_unknown(lib):
        with config(lib).patch(not_a_setting=1):
            pass

    got, want = _same_errors(enter_unknown)
    assert got[0] == "AttributeError"


def test_compiler_set_stance():
    m = flow.nn.Linear(3, 3).eval()
    cm = flow.compile(m)
    x = flow.ones(2, 3)
    graphs = cm.__dict__["_graphs"]
    with flow.no_grad():
        with flow.compiler.set_stance("force_eager"):
            cm(x)
        assert not graphs
        flow.compiler.set_stance("eager_then_compile")
        try:
            cm(x)
            assert not graphs  # the first call is eager
            cm(x)
            assert len(graphs) == 1
        finally:
            flow.compiler.set_stance("default")
        with flow.compiler.set_stance("fail_on_recompile"):
            cm(x)  # a plan for this state exists
            m.extra_setting = 1  # the module's state changes: a recompile
            with pytest.raises(RuntimeError, match="fail_on_recompile"):
                cm(x)
        with flow.compiler.set_stance("eager_on_recompile"):
            m.extra_setting = 2
            np.testing.assert_array_equal(cm(x).numpy(), m(x).numpy())
            assert len(graphs) == 1

        @flow.compiler.set_stance("force_eager")
        def run():
            m.extra_setting = 3
            return cm(x)

        run()
        assert len(graphs) == 1 and flow.compiler._stance == ["default", None]
        with flow.compiler.set_stance("not_a_stance"):
            with pytest.raises(RuntimeError, match="invalid oneflow.compile stance"):
                cm(x)
    for lib in (flow, torch):
        with pytest.raises(RuntimeError, match="non-default stance cannot have force_backend"):
            lib.compiler.set_stance("force_eager", force_backend="eager")
        lib.compiler.set_stance("not_a_stance")  # checked when a compiled call runs
        lib.compiler.set_stance("default")


# ---- 7. func.stack_module_state -----------------------------------------------------------------


def test_stack_module_state_like_torch():
    results = []
    for lib in (flow, torch):
        lib.manual_seed(0)
        models = [lib.nn.BatchNorm1d(3) for _ in range(3)]
        for i, mod in enumerate(models):
            with lib.no_grad():
                mod.weight.fill_(float(i))
        params, buffers = lib.func.stack_module_state(models)
        results.append(
            (
                {
                    k: (tuple(v.shape), v.requires_grad, v.is_leaf, v.detach().numpy().tolist())
                    for k, v in params.items()
                },
                {
                    k: (tuple(v.shape), v.requires_grad, str(v.dtype)[-5:])
                    for k, v in buffers.items()
                },
            )
        )
        params["weight"].sum().backward()  # new leaves: the models' parameters get nothing
        assert models[0].weight.grad is None and params["weight"].grad is not None
        frozen = [lib.nn.Linear(1, 1) for _ in range(2)]
        frozen[1].weight.requires_grad_(False)
        with pytest.raises(RuntimeError, match="same .requires_grad"):
            lib.func.stack_module_state(frozen)
        with pytest.raises(RuntimeError, match="same training/eval mode"):
            lib.func.stack_module_state([lib.nn.Linear(1, 1), lib.nn.Linear(1, 1).eval()])
        with pytest.raises(RuntimeError, match="Expected at least one model"):
            lib.func.stack_module_state([])
    assert results[0] == results[1]


# ---- 8. DataLoader collation --------------------------------------------------------------------


def _structure(v):
    if hasattr(v, "numpy") and hasattr(v, "dtype") and not isinstance(v, np.ndarray):
        return ("tensor", v.tolist(), str(v.dtype).rsplit(".", 1)[-1])
    if isinstance(v, tuple) and hasattr(v, "_fields"):
        return (type(v).__name__, [_structure(x) for x in v])
    if isinstance(v, (list, tuple)):
        return (type(v).__name__, [_structure(x) for x in v])
    if isinstance(v, dict):
        return ("dict", {k: _structure(x) for k, x in v.items()})
    return v


def test_default_collate_and_convert_keep_torch_types():
    cases = [
        [(1, (2.0, "a")), (3, (4.0, "b"))],
        [(1, ("x", "a")), (3, ("y", "b"))],
        [("x", "a"), ("y", "b")],
        ["p", "q"],
        [{"a": (1, "s")}, {"a": (2, "t")}],
    ]
    for batch in cases:
        got = flow.utils.data.default_collate(batch)
        want = torch.utils.data.default_collate(batch)
        assert _structure(got) == _structure(want), batch
    from torch.utils.data._utils.collate import default_convert as torch_convert

    from oneflow.utils.data._utils.collate import default_convert as flow_convert

    for data in [(np.ones(2), [np.ones(1)]), (1, "a"), [np.zeros(1), (2, 3)], {"k": (np.ones(1),)}]:
        assert _structure(flow_convert(data)) == _structure(torch_convert(data)), data


def test_dataloader_without_batching_converts_like_torch():
    datasets = [
        [(1, 2.0, "a"), (3, 4.0, "b")],
        [(np.ones(2), (np.zeros(1), "s")), (np.ones(2), (np.zeros(1), "t"))],
        [[1, 2], [3, 4]],
    ]
    for ds in datasets:
        got = [_structure(b) for b in flow.utils.data.DataLoader(ds, batch_size=None)]
        want = [_structure(b) for b in torch.utils.data.DataLoader(ds, batch_size=None)]
        assert got == want


# ---- 9. GradScaler, _foreach, lr_scheduler ------------------------------------------------------


def test_grad_scaler_refuses_steps_before_scale_like_torch():
    def setup(lib):
        m = lib.nn.Linear(2, 2)
        opt = lib.optim.SGD(m.parameters(), lr=0.1)
        m(lib.ones(1, 2)).sum().backward()
        return m, opt, lib.amp.GradScaler("cpu")

    for call in ("step", "unscale_", "update"):

        def run(lib, call=call):
            m, opt, s = setup(lib)
            if call == "update":
                s.update()
            else:
                getattr(s, call)(opt)

        got, want = _same_errors(run)
        assert got == want and got[0] == "AssertionError"
    for lib in (flow, torch):
        m, opt, s = setup(lib)
        before = m.weight.detach().clone()
        s.scale(m(lib.ones(1, 2)).sum()).backward()
        s.step(opt)
        s.update()
        assert not np.array_equal(before.numpy(), m.weight.detach().numpy())
        s.step(opt)  # after the first scale(), as PyTorch: no check
        s.update()

    def no_grads(lib):
        m = lib.nn.Linear(2, 2)
        opt = lib.optim.SGD(m.parameters(), lr=0.1)
        s = lib.amp.GradScaler("cpu")
        s.scale(lib.ones(()))
        s.step(opt)

    got, want = _same_errors(no_grads)
    assert got == want == ("AssertionError", "No inf checks were recorded for this optimizer.")
    assert flow.amp.GradScaler("cpu", enabled=False).step(setup(flow)[1]) is None


def test_foreach_results_are_tuples_like_torch():
    for lib in (flow, torch):
        ts = [lib.ones(2), lib.full((3,), 2.0)]
        norms = lib._foreach_norm(ts)
        assert type(norms) is tuple
        assert [round(n.item(), 5) for n in norms] == [1.41421, 3.4641]
        assert type(lib._foreach_norm(ts, 1)) is tuple
        for out in (
            lib._foreach_add(ts, 1),
            lib._foreach_mul(ts, ts),
            lib._foreach_sqrt(ts),
            lib._foreach_addcmul(ts, ts, ts),
            lib._foreach_max(ts),
            lib._foreach_clone(ts),
        ):
            assert type(out) is tuple and len(out) == 2
        assert lib._foreach_add_(ts, 1) is ts  # in place: the list itself


def _order_warnings(lib, make, pattern):
    m = lib.nn.Linear(2, 2)
    opt = lib.optim.SGD(m.parameters(), lr=0.1)
    if pattern == "step_before_scheduler":
        opt.step()
    sch = make(lib, opt)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for _ in range(3):
            if pattern == "opt_first":
                opt.step()
                sch.step()
            else:
                sch.step()
                opt.step()
    return [(x.category.__name__, str(x.message)) for x in w if "Detected call" in str(x.message)]


@pytest.mark.parametrize("pattern", ["scheduler_first", "opt_first", "step_before_scheduler"])
def test_lr_scheduler_order_warning_like_torch(pattern):
    makers = [
        lambda lib, o: lib.optim.lr_scheduler.StepLR(o, 1),
        lambda lib, o: lib.optim.lr_scheduler.LambdaLR(o, lambda e: 1.0),
        lambda lib, o: lib.optim.lr_scheduler.OneCycleLR(o, 1.0, total_steps=10),
        lambda lib, o: lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(o, 2),
        lambda lib, o: lib.optim.lr_scheduler.ChainedScheduler(
            [lib.optim.lr_scheduler.StepLR(o, 1), lib.optim.lr_scheduler.ExponentialLR(o, 0.9)]
        ),
    ]
    for make in makers:
        got = _order_warnings(flow, make, pattern)
        want = _order_warnings(torch, make, pattern)
        assert got == want
    assert _order_warnings(flow, makers[0], "scheduler_first")  # the warning is given


def test_lr_scheduler_order_warning_points_at_the_caller():
    m = flow.nn.Linear(2, 2)
    opt = flow.optim.SGD(m.parameters(), lr=0.1)
    sch = flow.optim.lr_scheduler.StepLR(opt, 1)
    with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`") as w:
        sch.step()
    assert w[0].filename == __file__


# ---- 10. global module hooks --------------------------------------------------------------------


def _hook_log(lib):
    nn = lib.nn
    M = nn.modules.module
    log = []

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(2, 2)

        def forward(self, x, scale=1.0):
            return self.lin(x) * scale

    net = Net()
    net.register_forward_pre_hook(lambda m, a: log.append(("pre", type(m).__name__)))
    net.register_forward_hook(lambda m, a, o: log.append(("fwd", type(m).__name__)))
    net.register_full_backward_hook(lambda m, gi, go: log.append(("bwd", type(m).__name__)))
    handles = [
        M.register_module_forward_pre_hook(lambda m, a: log.append(("g_pre", type(m).__name__))),
        M.register_module_forward_hook(lambda m, a, o: log.append(("g_fwd", type(m).__name__))),
        M.register_module_forward_hook(
            lambda m, a, k, o: log.append(("g_fwd_kw", type(m).__name__, sorted(k))),
            with_kwargs=True,
        ),
        M.register_module_full_backward_hook(
            lambda m, gi, go: log.append(("g_bwd", type(m).__name__, len(gi), len(go)))
        ),
        M.register_module_full_backward_pre_hook(
            lambda m, go: log.append(("g_bwd_pre", type(m).__name__, len(go)))
        ),
    ]
    try:
        net(lib.ones(1, 2, requires_grad=True), scale=2.0).sum().backward()
        zero = M.register_module_forward_pre_hook(
            lambda m, a: (a[0] * 0,) if isinstance(m, Net) else None
        )
        handles.append(zero)
        log.append(net(lib.ones(1, 2)).tolist() == net.lin(lib.zeros(1, 2)).tolist())
    finally:
        for h in handles:
            h.remove()
    log.append("removed")
    net(lib.ones(1, 2))

    class Bad(nn.Module):
        def forward(self, x):
            raise ValueError("boom")

    always = M.register_module_forward_hook(
        lambda m, a, o: log.append(("always", o)), always_call=True
    )
    try:
        with pytest.raises(ValueError):
            Bad()(lib.ones(1))
    finally:
        always.remove()
    regs = [
        M.register_module_parameter_registration_hook(
            lambda m, n, p: log.append(("param", type(m).__name__, n))
        ),
        M.register_module_buffer_registration_hook(
            lambda m, n, b: log.append(("buf", type(m).__name__, n, b is None))
        ),
        M.register_module_module_registration_hook(
            lambda m, n, s: log.append(("mod", type(m).__name__, n, type(s).__name__))
        ),
    ]
    try:
        nn.BatchNorm1d(2)
        seq = nn.Sequential(nn.Linear(1, 1))
        seq.extra = nn.ReLU()
        seq.extra = None
        seq.register_buffer("b", lib.ones(1))
        seq.b = lib.zeros(1)
        seq.register_buffer("c", None)
        seq.p = nn.Parameter(lib.ones(1))
        seq.add_module("q", nn.Tanh())
        doubling = M.register_module_buffer_registration_hook(
            lambda m, n, b: b * 2 if b is not None else None
        )
        regs.append(doubling)
        seq.register_buffer("d", lib.ones(1))
        log.append(seq.d.tolist())
    finally:
        for h in regs:
            h.remove()
    log.append("removed")
    nn.Linear(1, 1)
    return log


def test_global_module_hooks_like_torch():
    got, want = _hook_log(flow), _hook_log(torch)
    assert got == want
    assert ("g_pre", "Net") in got and ("param", "Sequential", "p") in got
    from oneflow.nn.modules import module

    assert module._global_call_hooks is False  # every handle removed: the fast path again


def test_global_hooks_run_only_while_registered():
    M = flow.nn.modules.module
    calls = []
    h = M.register_module_forward_hook(lambda m, a, o: calls.append(type(m).__name__))
    try:
        flow.nn.Sequential(flow.nn.ReLU(), flow.nn.Tanh())(flow.ones(2))
    finally:
        h.remove()
        h.remove()  # removing twice is harmless
    assert calls == ["ReLU", "Tanh", "Sequential"]
    flow.nn.ReLU()(flow.ones(1))
    assert len(calls) == 3
