"""PyTorch's module paths under oneflow (oneflow.nn.modules.batchnorm, oneflow.distributions.normal,
oneflow.version, oneflow.utils._pytree, ...), the private base classes scripts subclass and test
with isinstance, oneflow.jit without TorchScript, and the namespace functions poisson,
svd_lowrank, pca_lowrank, triangular_solve, the functional RNN cells and Tensor.as_subclass,
each compared with PyTorch."""

import collections
import importlib
import inspect
import math
import typing
import warnings

import numpy as np
import pytest
import torch
import torch.distributions
import torch.nn.modules
import torch.utils._pytree as tpytree

import oneflow as flow
import oneflow.utils._pytree as fpytree

# PyTorch 2.13 marks torch.jit.script/trace deprecated and NLLLoss2d for removal.
pytestmark = [
    pytest.mark.filterwarnings("ignore:`torch.jit:DeprecationWarning"),
    pytest.mark.filterwarnings("ignore:`NLLLoss2d` has been deprecated:FutureWarning"),
]

# ---- oneflow.nn.modules -----------------------------------------------------------------------

NN_SUBMODULES = [
    "activation",
    "adaptive",
    "batchnorm",
    "channelshuffle",
    "container",
    "conv",
    "distance",
    "dropout",
    "flatten",
    "fold",
    "instancenorm",
    "lazy",
    "linear",
    "loss",
    "module",
    "normalization",
    "padding",
    "pixelshuffle",
    "pooling",
    "rnn",
    "sparse",
    "transformer",
    "upsampling",
    "utils",
]

# What PyTorch's modules hold that oneflow does not have at all (not only not at that path).
NN_ABSENT = {
    "_LazyNormBase",
    "_ConvTransposeMixin",
    "_LazyConvXdMixin",
    "CrossMapLRN2d",
    "LinearCrossEntropyLoss",
    "LinearCrossEntropyOptions",
    "_WrappedHook",
    "LazyModuleMixin",
    "_LazyProtocol",
    "register_module_forward_pre_hook",
    "register_module_forward_hook",
    "register_module_full_backward_pre_hook",
    "register_module_backward_hook",
    "register_module_full_backward_hook",
    "register_module_buffer_registration_hook",
    "register_module_module_registration_hook",
    "register_module_parameter_registration_hook",
}


def _torch_names(module):
    """The classes `module` defines and the names of its __all__."""
    own = {
        n
        for n, v in vars(module).items()
        if isinstance(v, type) and v.__module__ == module.__name__
    }
    return own | set(getattr(module, "__all__", []))


@pytest.mark.parametrize("name", NN_SUBMODULES)
def test_nn_modules_submodule_names_match_torch(name):
    tmod = importlib.import_module(f"torch.nn.modules.{name}")
    fmod = importlib.import_module(f"oneflow.nn.modules.{name}")
    assert getattr(flow.nn.modules, name) is fmod
    missing = sorted(n for n in _torch_names(tmod) - NN_ABSENT if not hasattr(fmod, n))
    assert not missing, f"oneflow.nn.modules.{name} lacks {missing}"
    # the public classes are oneflow.nn's own
    for n in getattr(tmod, "__all__", []):
        if n not in NN_ABSENT and hasattr(flow.nn, n):
            assert getattr(fmod, n) is getattr(flow.nn, n), (name, n)
    if hasattr(fmod, "__all__") and name != "lazy":  # oneflow's lazy module lists its classes
        assert set(fmod.__all__) == set(getattr(tmod, "__all__", [])) - NN_ABSENT


def test_nn_modules_package_reexports_layers():
    expected = [n for n in torch.nn.modules.__all__ if n not in NN_ABSENT]
    for n in expected:
        assert getattr(flow.nn.modules, n) is getattr(flow.nn, n), n
    assert set(flow.nn.modules.__all__) == set(expected)
    assert flow.nn.modules.Linear is flow.nn.Linear
    namespace = {}
    exec("from oneflow.nn.modules import *", namespace)
    assert namespace["BatchNorm2d"] is flow.nn.BatchNorm2d
    assert "batchnorm" in dir(flow.nn.modules) and "Conv2d" in dir(flow.nn.modules)
    with pytest.raises(AttributeError):
        flow.nn.modules.NoSuchLayer  # noqa: B018


def _instances(lib):
    nn = lib.nn
    return {
        "bn2d": nn.BatchNorm2d(3),
        "in1d": nn.InstanceNorm1d(3),
        "sync": nn.SyncBatchNorm(3),
        "conv": nn.Conv2d(2, 3, 3),
        "convt": nn.ConvTranspose2d(2, 3, 3),
        "maxpool": nn.MaxPool2d(2),
        "avgpool": nn.AvgPool1d(2),
        "amax": nn.AdaptiveMaxPool1d(2),
        "aavg": nn.AdaptiveAvgPool2d(2),
        "unpool": nn.MaxUnpool2d(2),
        "lppool": nn.LPPool2d(2, 2),
        "drop": nn.Dropout2d(),
        "alpha": nn.AlphaDropout(),
        "falpha": nn.FeatureAlphaDropout(),
        "ce": nn.CrossEntropyLoss(),
        "mse": nn.MSELoss(),
        "bcel": nn.BCEWithLogitsLoss(),
        "mm": nn.MultiMarginLoss(),
        "mlsm": nn.MultiLabelSoftMarginLoss(),
        "nll2d": nn.NLLLoss2d(),
        "refl": nn.ReflectionPad2d(1),
        "zero": nn.ZeroPad2d(1),
        "zero1": nn.ZeroPad1d(1),
        "circ": nn.CircularPad3d(1),
        "repl": nn.ReplicationPad1d(1),
    }


_BASES = [
    ("batchnorm", "_NormBase"),
    ("batchnorm", "_BatchNorm"),
    ("instancenorm", "_InstanceNorm"),
    ("conv", "_ConvNd"),
    ("conv", "_ConvTransposeNd"),
    ("pooling", "_MaxPoolNd"),
    ("pooling", "_AvgPoolNd"),
    ("pooling", "_AdaptiveAvgPoolNd"),
    ("pooling", "_AdaptiveMaxPoolNd"),
    ("pooling", "_MaxUnpoolNd"),
    ("pooling", "_LPPoolNd"),
    ("dropout", "_DropoutNd"),
    ("loss", "_Loss"),
    ("loss", "_WeightedLoss"),
    ("padding", "_ConstantPadNd"),
    ("padding", "_ReflectionPadNd"),
    ("padding", "_ReplicationPadNd"),
    ("padding", "_CircularPadNd"),
]


def test_private_bases_isinstance_as_torch():
    f_objs, t_objs = _instances(flow), _instances(torch)
    for module, base in _BASES:
        fbase = getattr(getattr(flow.nn.modules, module), base)
        tbase = getattr(getattr(torch.nn.modules, module), base)
        for key in f_objs:
            expected = isinstance(t_objs[key], tbase)
            assert isinstance(f_objs[key], fbase) == expected, (key, base, expected)
    assert isinstance(flow.nn.BatchNorm2d(3), flow.nn.modules.batchnorm._NormBase)
    assert isinstance(flow.nn.InstanceNorm3d(3), flow.nn.modules.batchnorm._NormBase)


def test_norm_base_keeps_behaviour_and_subclasses_as_torch():
    x = np.random.RandomState(0).randn(4, 3, 5, 5).astype(np.float32)
    for cls in ("BatchNorm2d", "InstanceNorm2d"):
        for kwargs in ({}, {"affine": True, "track_running_stats": True}):
            f = getattr(flow.nn, cls)(3, **kwargs)
            t = getattr(torch.nn, cls)(3, **kwargs)
            np.testing.assert_allclose(
                f(flow.tensor(x)).detach().numpy(), t(torch.tensor(x)).detach().numpy(), atol=1e-5
            )
            assert list(f.state_dict()) == list(t.state_dict())
            assert f.state_dict()._metadata[""] == t.state_dict()._metadata[""]
            assert repr(f) == repr(t)
            f.reset_parameters()
            t.reset_parameters()
    f = flow.nn.BatchNorm1d(3, affine=True, bias=False)
    f.reset_parameters()  # no bias to reset
    assert f.bias is None
    sig = inspect.signature(flow.nn.modules.batchnorm._NormBase.__init__)
    tsig = inspect.signature(torch.nn.modules.batchnorm._NormBase.__init__)
    assert list(sig.parameters) == list(tsig.parameters)

    def norm(lib):
        base = lib.nn.modules.batchnorm._NormBase

        class MyNorm(base):
            def _check_input_dim(self, input):
                if input.dim() != 2:
                    raise ValueError("expected 2D input")

            def forward(self, input):
                self._check_input_dim(input)
                return (input - self.running_mean) * self.weight + self.bias

        return MyNorm(4, momentum=0.2)

    f, t = norm(flow), norm(torch)
    assert list(f.state_dict()) == list(t.state_dict())
    assert f.momentum == t.momentum == 0.2
    np.testing.assert_allclose(f(flow.ones(2, 4)).detach().numpy(), np.ones((2, 4)))
    with pytest.raises(ValueError):
        f(flow.ones(4))
    with pytest.raises(NotImplementedError):
        flow.nn.modules.batchnorm._NormBase(3)._check_input_dim(flow.ones(1))


def test_weighted_loss_base_as_torch():
    def focal(lib):
        class FocalLoss(lib.nn.modules.loss._WeightedLoss):
            def __init__(self, weight=None, gamma=2.0, reduction="mean"):
                super().__init__(weight=weight, reduction=reduction)
                self.gamma = gamma

            def forward(self, input, target):
                logp = lib.nn.functional.log_softmax(input, -1)
                ce = lib.nn.functional.nll_loss(logp, target, weight=self.weight, reduction="none")
                p = lib.exp(-ce)
                return ((1 - p) ** self.gamma * ce).mean()

        return FocalLoss(weight=lib.tensor([1.0, 2.0, 0.5]))

    f, t = focal(flow), focal(torch)
    assert list(f.state_dict()) == list(t.state_dict()) == ["weight"]
    assert f.reduction == t.reduction == "mean"
    x = np.random.RandomState(1).randn(5, 3).astype(np.float32)
    y = np.array([0, 1, 2, 1, 0])
    np.testing.assert_allclose(
        f(flow.tensor(x), flow.tensor(y)).item(), t(torch.tensor(x), torch.tensor(y)).item(), 1e-5
    )
    legacy = flow.nn.modules.loss._WeightedLoss(size_average=False)
    assert legacy.reduction == "sum" and legacy.weight is None


def test_module_addindent_and_nn_modules_utils():
    from torch.nn.modules.module import _addindent as t_addindent
    from torch.nn.modules.utils import consume_prefix_in_state_dict_if_present as t_consume

    from oneflow.nn.modules.module import _addindent
    from oneflow.nn.modules.utils import consume_prefix_in_state_dict_if_present

    for s in ["a\nb\n\nc", "single", "", "a\n", "\nq\n  r"]:
        assert _addindent(s, 3) == t_addindent(s, 3)

    def checkpoint():
        d = collections.OrderedDict([("module.w", 1), ("module.sub.b", 2), ("other", 3)])
        d._metadata = collections.OrderedDict(
            [("", {"version": 1}), ("module", {"version": 2}), ("module.sub", {"version": 3})]
        )
        return d

    f, t = checkpoint(), checkpoint()
    consume_prefix_in_state_dict_if_present(f, "module.")
    t_consume(t, "module.")
    assert f == t and f._metadata == t._metadata


# ---- oneflow.distributions ------------------------------------------------------------------


def _torch_distribution_modules():
    return sorted(
        n for n, v in vars(torch.distributions).items() if inspect.ismodule(v) and n[0] != "_"
    )


def test_distributions_submodules_as_torch():
    names = _torch_distribution_modules()
    assert "normal" in names and "one_hot_categorical" in names and "studentT" in names
    for name in names:
        tmod = getattr(torch.distributions, name)
        fmod = importlib.import_module(f"oneflow.distributions.{name}")
        assert getattr(flow.distributions, name) is fmod
        missing = [n for n in getattr(tmod, "__all__", []) if not hasattr(fmod, n)]
        assert not missing, f"oneflow.distributions.{name} lacks {missing}"
        for n in getattr(tmod, "__all__", []):
            top = getattr(flow.distributions, n, None)
            if top is not None and not inspect.ismodule(top):
                assert getattr(fmod, n) is top, (name, n)
    from oneflow.distributions.normal import Normal
    from oneflow.distributions.relaxed_bernoulli import LogitRelaxedBernoulli

    assert Normal is flow.distributions.Normal
    d = LogitRelaxedBernoulli(flow.tensor(0.5), probs=flow.tensor([0.3]))
    assert tuple(d.sample((4,)).shape) == (4, 1)


def test_new_constraints_match_torch():
    from torch.distributions import constraints as tc

    from oneflow.distributions import constraints as fc

    rs = np.random.RandomState(2)
    cases = [
        np.array([[1.0, 2.0], [2.0, 1.0]]),
        np.array([[2.0, 1.0], [1.0, 2.0]]),
        np.array([[1.0, 0.0], [3.0, 1.0]]),
        np.zeros((2, 3, 4)),
        rs.randn(4, 3, 3),
    ]
    for name in ("symmetric", "square", "lower_triangular", "positive_semidefinite"):
        fcon, tcon = getattr(fc, name), getattr(tc, name)
        assert repr(fcon) == repr(tcon) and fcon.event_dim == tcon.event_dim
        for a in cases:
            got = fcon.check(flow.tensor(a)).numpy()
            want = tcon.check(torch.tensor(a)).numpy()
            assert got.shape == want.shape and (got == want).all(), (name, a)
    value = np.array([[1.0, np.nan], [1.0, 2.0]])
    for base in ("real", "real_vector"):
        f = fc.MixtureSameFamilyConstraint(getattr(fc, base))
        t = tc.MixtureSameFamilyConstraint(getattr(tc, base))
        assert f.event_dim == t.event_dim and f.is_discrete == t.is_discrete
        np.testing.assert_array_equal(
            f.check(flow.tensor(value)).numpy(), t.check(torch.tensor(value)).numpy()
        )


def test_tril_vec_helpers_match_torch():
    from torch.distributions.utils import tril_matrix_to_vec as t_to_vec
    from torch.distributions.utils import vec_to_tril_matrix as t_to_mat

    from oneflow.distributions.utils import tril_matrix_to_vec, vec_to_tril_matrix

    rs = np.random.RandomState(3)
    for diag in (-2, -1, 0, 1):
        for n in (3, 4):
            a = rs.randn(2, n, n).astype(np.float32)
            v = tril_matrix_to_vec(flow.tensor(a), diag)
            tv = t_to_vec(torch.tensor(a), diag)
            np.testing.assert_array_equal(v.numpy(), tv.numpy())
            np.testing.assert_array_equal(
                vec_to_tril_matrix(v, diag).numpy(), t_to_mat(tv, diag).numpy()
            )
    x = flow.randn(6, requires_grad=True)
    vec_to_tril_matrix(x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.ones(6))
    with pytest.raises(ValueError):
        vec_to_tril_matrix(flow.zeros(5))
    with pytest.raises(ValueError):
        tril_matrix_to_vec(flow.zeros(3, 3), diag=5)


# ---- small modules: version, common_types, types, grad_mode, init ---------------------------


def test_version_module():
    import oneflow.version as v

    assert flow.version is v
    assert set(torch.version.__all__) <= set(dir(v))
    assert v.__version__ == flow.__version__
    assert v.debug is False and v.hip is None and v.rocm is None and v.xpu is None
    assert isinstance(v.git_version, str) and v.git_version
    if flow._oneflow_internal.with_cuda:
        assert isinstance(v.cuda, str) and v.cuda[0].isdigit()
    else:
        assert v.cuda is None


def test_common_types_and_types():
    import torch.nn.common_types as tct

    import oneflow.nn.common_types as fct
    import oneflow.types as ftypes

    names = [n for n in dir(tct) if n.startswith("_") and not n.startswith("__")]
    names = [n for n in names if n != "_TypeAlias"]
    assert not [n for n in names if not hasattr(fct, n)]
    for n in ("_size_1_t", "_size_2_t", "_size_3_opt_t", "_ratio_2_t", "_size_any_t"):
        assert typing.get_args(getattr(fct, n)) == typing.get_args(getattr(tct, n)), n
    assert typing.get_args(fct._tensor_list_t)[0] is flow.Tensor

    assert set(torch.types.__all__) <= set(dir(ftypes))
    assert set(typing.get_args(ftypes.Number)) == set(typing.get_args(torch.types.Number))
    assert ftypes._int is int and ftypes._float is float and ftypes._bool is bool
    assert ftypes._dtype is flow.dtype and ftypes._device is flow.device
    assert set(typing.get_args(ftypes.Device)) == {flow.device, str, int, type(None)}
    for n in ("_complex", "_str", "_size", "_TensorOrTensors", "IntLikeType", "FileLike"):
        assert hasattr(ftypes, n), n


def test_autograd_grad_mode_module():
    import oneflow.autograd.grad_mode as gm

    assert flow.autograd.grad_mode is gm
    assert gm.no_grad is flow.no_grad and gm.enable_grad is flow.enable_grad
    assert gm.set_grad_enabled is flow.set_grad_enabled
    assert gm.inference_mode is flow.inference_mode
    assert set(gm.__all__) <= set(torch.autograd.grad_mode.__all__)
    x = flow.ones(2, requires_grad=True)
    with gm.no_grad():
        assert not (x * 2).requires_grad
    with gm.set_grad_enabled(False):
        with gm.enable_grad():
            assert (x * 2).requires_grad


def test_no_grad_trunc_normal():
    t = flow.empty(20000)
    out = flow.nn.init._no_grad_trunc_normal_(t, 0.5, 2.0, -1.0, 1.5)
    assert out is t
    a = t.numpy()
    assert a.min() >= -1.0 and a.max() <= 1.5
    # the mean of N(0.5, 2) truncated to [-1, 1.5], as PyTorch's samples give it
    ref = torch.nn.init._no_grad_trunc_normal_(torch.empty(200000), 0.5, 2.0, -1.0, 1.5)
    assert abs(a.mean() - ref.mean().item()) < 0.03
    g = flow.Generator()
    g.manual_seed(7)
    first = flow.nn.init._no_grad_trunc_normal_(flow.empty(5), 0.0, 1.0, -2.0, 2.0, generator=g)
    g.manual_seed(7)
    second = flow.nn.init.trunc_normal_(flow.empty(5), generator=g)
    np.testing.assert_array_equal(first.numpy(), second.numpy())
    with pytest.warns(UserWarning, match="more than 2 std"):
        flow.nn.init._no_grad_trunc_normal_(flow.empty(3), 10.0, 1.0, -1.0, 1.0)
    p = flow.nn.Parameter(flow.empty(3))
    flow.nn.init._no_grad_trunc_normal_(p, 0.0, 1.0, -2.0, 2.0)
    assert p.grad_fn is None and p.is_leaf


# ---- oneflow.utils._pytree ----------------------------------------------------------------

_Point = collections.namedtuple("_Point", "x y")


def _trees():
    return [
        None,
        5,
        "leaf",
        [],
        (),
        {},
        [1, (2, 3)],
        {"b": 1, "a": [2, {"c": (3,)}]},
        _Point(1, [2, 3]),
        collections.OrderedDict(x=1, y=(2,)),
        collections.defaultdict(int, a=1),
        collections.deque([1, 2], maxlen=4),
        [[1, {"k": (2,)}], 3, None],
    ]


def test_pytree_flatten_unflatten_as_torch():
    for tree in _trees():
        leaves, spec = fpytree.tree_flatten(tree)
        tleaves, tspec = tpytree.tree_flatten(tree)
        assert leaves == tleaves, tree
        assert repr(spec) == repr(tspec), tree
        assert (spec.num_leaves, spec.num_nodes, spec.num_children) == (
            tspec.num_leaves,
            tspec.num_nodes,
            tspec.num_children,
        )
        assert spec.is_leaf() == tspec.is_leaf()
        assert fpytree.treespec_pprint(spec) == tpytree.treespec_pprint(tspec)
        rebuilt = fpytree.tree_unflatten(leaves, spec)
        assert rebuilt == tree and type(rebuilt) is type(tree)
        assert fpytree.tree_leaves(tree) == tpytree.tree_leaves(tree)
        assert list(fpytree.tree_iter(tree)) == tleaves
    assert fpytree.tree_structure([1, 2]) == fpytree.tree_structure([3, 4])
    assert fpytree.tree_structure([1, 2]) != fpytree.tree_structure((1, 2))
    assert fpytree.tree_structure(1) == fpytree.LeafSpec()
    assert fpytree.tree_structure({"a": 1}).context == ["a"]


def test_pytree_map_and_errors_as_torch():
    for lib in (fpytree, tpytree):
        assert lib.tree_map(lambda x, y: x + y, [1, (2, 3)], [10, (20, 30)]) == [11, (22, 33)]
        assert lib.tree_map(lambda x, y: (x, y), [1, 2], [[5, 6], 7]) == [(1, [5, 6]), (2, 7)]
        assert lib.tree_map_only(int, lambda x: x * 2, [1, 2.0, "a"]) == [2, 2.0, "a"]
        assert lib.tree_map_only((int, float), lambda x: x * 2, [1, 2.0, "a"]) == [2, 4.0, "a"]
        assert lib.tree_all(lambda x: x > 0, [1, (2,)]) and not lib.tree_any(
            lambda x: x > 5, {"a": 1}
        )
        assert lib.tree_any_only(str, lambda s: s == "a", [1, "a"])
        assert lib.tree_all_only(int, lambda x: x > 0, [1, "a", -1.0])
        seen = []
        assert lib.tree_map_(seen.append, {"a": 1, "b": [2]}) == {"a": 1, "b": [2]}
        assert seen == [1, 2]
        only_lists = lib.tree_leaves(
            [1, [2]], is_leaf=lambda x: isinstance(x, list) and len(x) == 1
        )
        assert only_lists == [1, [2]]
    t = flow.ones(2)
    out = fpytree.tree_map(lambda x: x * 2, {"w": t, "n": [t, 3]})
    np.testing.assert_array_equal(out["n"][0].numpy(), [2.0, 2.0])
    cases = [
        lambda lib: lib.tree_unflatten([1], lib.tree_structure([1, 2])),
        lambda lib: lib.tree_map(lambda x, y: x, [1, 2], [1]),
        lambda lib: lib.tree_map(lambda x, y: x, [1, 2], (1, 2)),
        lambda lib: lib.tree_map(lambda x, y: x, {"a": 1, "c": 2}, {"b": 1, "c": 3}),
    ]
    for case in cases:
        with pytest.raises(ValueError) as fe:
            case(fpytree)
        with pytest.raises(ValueError) as te:
            case(tpytree)
        assert str(fe.value) == str(te.value)


def test_pytree_register_node():
    class Pair:
        def __init__(self, a, b):
            self.a, self.b = a, b

    fpytree.register_pytree_node(
        Pair, lambda p: ([p.a, p.b], "pair"), lambda values, ctx: Pair(*values)
    )
    leaves, spec = fpytree.tree_flatten([Pair(1, (2, 3))])
    assert leaves == [1, 2, 3] and spec.children_specs[0].context == "pair"
    rebuilt = fpytree.tree_map(lambda x: x * 10, [Pair(1, (2, 3))])[0]
    assert (rebuilt.a, rebuilt.b) == (10, (20, 30))
    with pytest.raises(ValueError):
        fpytree.register_pytree_node(Pair, lambda p: ([], None), lambda v, c: None)
    assert fpytree.is_namedtuple(_Point) and fpytree.is_namedtuple_instance(_Point(1, 2))
    assert not fpytree.is_namedtuple((1, 2))


# ---- oneflow.jit ----------------------------------------------------------------------------


def test_jit_script_returns_objects_unchanged():
    @flow.jit.script
    def gelu_approx(x):
        return 0.5 * x * (1.0 + flow.tanh(0.79788456 * (x + 0.044715 * x * x * x)))

    @torch.jit.script
    def t_gelu_approx(x):
        return 0.5 * x * (1.0 + torch.tanh(0.79788456 * (x + 0.044715 * x * x * x)))

    x = np.linspace(-3, 3, 7).astype(np.float32)
    np.testing.assert_allclose(
        gelu_approx(flow.tensor(x)).numpy(), t_gelu_approx(torch.tensor(x)).numpy(), rtol=1e-6
    )
    m = flow.nn.Linear(3, 2)
    assert flow.jit.script(m) is m
    assert not isinstance(flow.jit.script(m), flow.jit.ScriptModule)
    assert not isinstance(gelu_approx, flow.jit.ScriptFunction)

    @flow.jit.script
    class Counter:
        def __init__(self):
            self.n = 0

    assert Counter().n == 0
    assert flow.jit.script_if_tracing(gelu_approx) is gelu_approx
    assert flow.jit.script_method(gelu_approx) is gelu_approx
    assert flow.jit.is_scripting() is False


def test_jit_trace_runs_example_once():
    calls = []

    def f(x, y):
        calls.append(1)
        return x + y

    traced = flow.jit.trace(f, (flow.ones(2), flow.ones(2)))
    assert traced is f and len(calls) == 1
    np.testing.assert_array_equal(traced(flow.ones(2), flow.ones(2)).numpy(), [2.0, 2.0])
    m = flow.nn.Linear(2, 3)
    assert flow.jit.trace(m, flow.ones(1, 2)) is m
    assert flow.jit.trace(lambda x: x * 2, example_kwarg_inputs={"x": flow.ones(1)}) is not None
    with pytest.raises(RuntimeError):
        flow.jit.trace(m, flow.ones(1, 5))  # as torch.jit.trace: the example's error surfaces
    with pytest.raises(RuntimeError):
        torch.jit.trace(torch.nn.Linear(2, 3), torch.ones(1, 5))

    class Two(flow.nn.Module):
        def forward(self, x):
            return x + 1

        def other(self, x):
            calls.append(2)
            return x - 1

    two = Two()
    assert flow.jit.trace_module(two, {"forward": flow.ones(1), "other": (flow.ones(1),)}) is two
    assert calls[-1] == 2


def test_jit_freeze_save_load():
    m = flow.nn.Linear(2, 2)
    with pytest.raises(RuntimeError, match="eval mode"):
        flow.jit.freeze(m)
    assert flow.jit.freeze(m.eval()) is m
    m.train()
    assert flow.jit.optimize_for_inference(m) is m and not m.training
    with pytest.raises(NotImplementedError, match="TorchScript"):
        flow.jit.save(m, "model.pt")
    with pytest.raises(NotImplementedError, match="TorchScript"):
        flow.jit.load("model.pt")

    class Legacy(flow.jit.ScriptModule):
        def __init__(self):
            super().__init__()
            self.lin = flow.nn.Linear(2, 2)

        @flow.jit.script_method
        def forward(self, x):
            return self.lin(x)

    assert tuple(Legacy()(flow.ones(1, 2)).shape) == (1, 2)


# ---- namespace functions --------------------------------------------------------------------


def test_poisson_statistics_and_seeding():
    rates = [0.5, 4.0, 30.0, 200.0]
    n = 20000
    x = flow.poisson(flow.tensor(rates).repeat(n, 1))
    assert x.dtype == flow.float32 and tuple(x.shape) == (n, 4)
    a = x.numpy()
    assert (a == np.round(a)).all() and (a >= 0).all()
    for j, rate in enumerate(rates):
        # mean and variance both equal the rate: 6 standard errors of margin
        assert abs(a[:, j].mean() - rate) < 6 * np.sqrt(rate / n), rate
        assert abs(a[:, j].var() / rate - 1) < 6 * np.sqrt(2 / n) + 0.02, rate
    small = a[:, 0]
    for k in range(3):  # P(X = k) for rate 0.5
        p = math.exp(-0.5) * 0.5**k / math.factorial(k)
        assert abs((small == k).mean() - p) < 6 * np.sqrt(p * (1 - p) / n)
    np.testing.assert_array_equal(flow.poisson(flow.zeros(5)).numpy(), np.zeros(5))
    flow.manual_seed(11)
    first = flow.poisson(flow.full((100,), 3.0, dtype=flow.float64))
    flow.manual_seed(11)
    second = flow.poisson(flow.full((100,), 3.0, dtype=flow.float64))
    assert first.dtype == flow.float64
    np.testing.assert_array_equal(first.numpy(), second.numpy())
    g = flow.Generator()
    g.manual_seed(3)
    third = flow.poisson(flow.full((100,), 3.0), generator=g)
    g.manual_seed(3)
    np.testing.assert_array_equal(
        third.numpy(), flow.poisson(flow.full((100,), 3.0), generator=g).numpy()
    )
    with pytest.raises(RuntimeError):
        torch.poisson(torch.tensor([-1.0]))
    with pytest.raises(RuntimeError):
        flow.poisson(flow.tensor([-1.0]))
    # the sample's gradient with respect to the rates is zero, as PyTorch's
    r = flow.tensor([2.0, 3.0], requires_grad=True)
    s = flow.poisson(r)
    assert s.requires_grad
    s.sum().backward()
    tr = torch.tensor([2.0, 3.0], requires_grad=True)
    torch.poisson(tr).sum().backward()
    np.testing.assert_array_equal(r.grad.numpy(), tr.grad.numpy())


def _low_rank(rs, shape, rank):
    *batch, m, n = shape
    return rs.randn(*batch, m, rank) @ rs.randn(*batch, rank, n)


def test_svd_lowrank_matches_svd():
    rs = np.random.RandomState(4)
    for shape in [(30, 20), (20, 30), (2, 25, 12)]:
        a = _low_rank(rs, shape, 5)
        U, S, V = flow.svd_lowrank(flow.tensor(a), q=6)
        tU, tS, tV = torch.svd_lowrank(torch.tensor(a), q=6)
        assert U.shape == tU.shape and S.shape == tS.shape and V.shape == tV.shape
        ref = torch.linalg.svdvals(torch.tensor(a)).numpy()[..., :5]
        np.testing.assert_allclose(S.numpy()[..., :5], ref, rtol=1e-8)
        rebuilt = (U * S.unsqueeze(-2)) @ V.transpose(-2, -1)
        np.testing.assert_allclose(rebuilt.numpy(), a, atol=1e-9)
    # M: the decomposition of A - M
    a = _low_rank(rs, (30, 20), 4)
    m = rs.randn(30, 20)
    U, S, V = flow.svd_lowrank(flow.tensor(a + m), q=5, niter=3, M=flow.tensor(m))
    np.testing.assert_allclose(((U * S) @ V.T).numpy(), a, atol=1e-9)
    U, S, V = flow.svd_lowrank(flow.tensor(a + m[:1]), q=5, M=flow.tensor(m[:1]))  # broadcast
    np.testing.assert_allclose(((U * S) @ V.T).numpy(), a, atol=1e-9)
    # full-rank input: the leading singular values, within the randomized method's accuracy
    full = rs.randn(40, 10) @ np.diag([10, 8, 6, 1e-3, 1e-3, 1e-3, 1e-3, 1e-3, 1e-3, 1e-3])
    S = flow.svd_lowrank(flow.tensor(full), q=4)[1].numpy()
    np.testing.assert_allclose(S[:3], np.linalg.svd(full, compute_uv=False)[:3], rtol=1e-5)
    A = flow.tensor(a, requires_grad=True)
    flow.svd_lowrank(A, q=4)[1].sum().backward()
    assert A.grad is not None and tuple(A.grad.shape) == a.shape


def test_pca_lowrank_matches_torch():
    rs = np.random.RandomState(5)
    x = rs.randn(50, 8) @ np.diag([5.0, 4, 3, 2, 1, 0.01, 0.01, 0.01])
    U, S, V = flow.pca_lowrank(flow.tensor(x))
    tU, tS, tV = torch.pca_lowrank(torch.tensor(x))
    assert U.shape == tU.shape and S.shape == tS.shape and V.shape == tV.shape
    np.testing.assert_allclose(S.numpy()[:5], tS.numpy()[:5], rtol=1e-4)
    centered = x - x.mean(0)
    np.testing.assert_allclose(
        S.numpy()[:5], np.linalg.svd(centered, compute_uv=False)[:5], rtol=1e-4
    )
    # the principal directions span what PyTorch's do
    proj = V.numpy()[:, :5] @ V.numpy()[:, :5].T
    tproj = tV.numpy()[:, :5] @ tV.numpy()[:, :5].T
    np.testing.assert_allclose(proj, tproj, atol=1e-4)
    Su = flow.pca_lowrank(flow.tensor(x), q=6, center=False)[1]
    tSu = torch.pca_lowrank(torch.tensor(x), q=6, center=False)[1]
    np.testing.assert_allclose(Su.numpy()[:5], tSu.numpy()[:5], rtol=1e-4)
    np.testing.assert_allclose(Su.numpy()[:5], np.linalg.svd(x, compute_uv=False)[:5], rtol=1e-4)
    for kwargs in ({"q": 9}, {"q": -1}, {"niter": -1}):
        with pytest.raises(ValueError) as fe:
            flow.pca_lowrank(flow.tensor(x), **kwargs)
        with pytest.raises(ValueError) as te:
            torch.pca_lowrank(torch.tensor(x), **kwargs)
        assert str(fe.value) == str(te.value)


def test_triangular_solve_matches_torch():
    rs = np.random.RandomState(6)
    a = rs.randn(3, 4, 4) + 4 * np.eye(4)
    b = rs.randn(3, 4, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for upper in (True, False):
            for transpose in (True, False):
                for unit in (True, False):
                    got = flow.triangular_solve(
                        flow.tensor(b), flow.tensor(a), upper, transpose, unit
                    )
                    want = torch.triangular_solve(
                        torch.tensor(b), torch.tensor(a), upper, transpose, unit
                    )
                    np.testing.assert_allclose(got.solution.numpy(), want.solution.numpy(), 1e-10)
                    np.testing.assert_array_equal(
                        got.cloned_coefficient.numpy(), want.cloned_coefficient.numpy()
                    )
        # broadcast batch dimensions; the coefficient copy is broadcast too
        got = flow.triangular_solve(flow.tensor(b), flow.tensor(a[0]), upper=False)
        want = torch.triangular_solve(torch.tensor(b), torch.tensor(a[0]), upper=False)
        assert type(got).__name__ == type(want).__name__ == "triangular_solve"
        assert len(got) == len(want) == 2
        assert got.cloned_coefficient.shape == want.cloned_coefficient.shape
        np.testing.assert_allclose(got[0].numpy(), want[0].numpy(), 1e-10)
        method = flow.tensor(b).triangular_solve(flow.tensor(a), upper=True)
        np.testing.assert_allclose(
            method.solution.numpy(),
            torch.tensor(b).triangular_solve(torch.tensor(a), upper=True).solution.numpy(),
            1e-10,
        )
        fa = flow.tensor(a, requires_grad=True)
        fb = flow.tensor(b, requires_grad=True)
        ta = torch.tensor(a, requires_grad=True)
        tb = torch.tensor(b, requires_grad=True)
        flow.triangular_solve(fb, fa, transpose=True).solution.sum().backward()
        torch.triangular_solve(tb, ta, transpose=True).solution.sum().backward()
    np.testing.assert_allclose(fa.grad.numpy(), ta.grad.numpy(), 1e-8)
    np.testing.assert_allclose(fb.grad.numpy(), tb.grad.numpy(), 1e-8)
    flow.framework.torch_extra_functions._warned_triangular_solve.clear()
    with pytest.warns(UserWarning, match="deprecated"):
        flow.triangular_solve(flow.tensor(b), flow.tensor(a))


@pytest.mark.parametrize(
    "name,gates", [("rnn_tanh_cell", 1), ("rnn_relu_cell", 1), ("gru_cell", 3), ("lstm_cell", 4)]
)
@pytest.mark.parametrize("bias", [True, False])
def test_functional_rnn_cells_match_torch(name, gates, bias):
    rs = np.random.RandomState(7)
    hidden = 5
    arrays = [
        rs.randn(3, 4),
        rs.randn(3, hidden),
        rs.randn(3, hidden),
        rs.randn(gates * hidden, 4),
        rs.randn(gates * hidden, hidden),
        rs.randn(gates * hidden),
        rs.randn(gates * hidden),
    ]

    def run(lib):
        x, h, c, wi, wh, bi, bh = [
            lib.tensor(a.astype(np.float32), requires_grad=True) for a in arrays
        ]
        hx = (h, c) if name == "lstm_cell" else h
        args = (x, hx, wi, wh) + ((bi, bh) if bias else ())
        out = getattr(lib, name)(*args)
        if name == "lstm_cell":
            assert isinstance(out, tuple) and len(out) == 2
            loss = out[0].sum() + 2 * out[1].sum()
            values = [o.detach().numpy() for o in out]
        else:
            loss = out.sum()
            values = [out.detach().numpy()]
        loss.backward()
        grads = [t.grad for t in (x, h, c, wi, wh, bi, bh)]
        return values, [None if g is None else g.numpy() for g in grads]

    fv, fg = run(flow)
    tv, tg = run(torch)
    for a, b in zip(fv, tv):
        np.testing.assert_allclose(a, b, atol=1e-5)
    for a, b in zip(fg, tg):
        if b is None:
            assert a is None or not a.any()
        else:
            np.testing.assert_allclose(a, b, atol=1e-4)
    if name == "lstm_cell":
        with pytest.raises(RuntimeError, match="two hidden states"):
            flow.lstm_cell(flow.ones(1, 4), (flow.ones(1, 5),), flow.ones(20, 4), flow.ones(20, 5))


def test_fusion_utils():
    from oneflow.nn.utils.fusion import (
        fuse_conv_bn_eval,
        fuse_conv_bn_weights,
        fuse_linear_bn_eval,
    )

    conv = flow.nn.Conv2d(3, 4, 3).eval()
    bn = flow.nn.BatchNorm2d(4).eval()
    bn.running_mean.normal_()
    bn.running_var.uniform_(0.5, 2.0)
    bn.weight.data.normal_()
    x = flow.randn(2, 3, 6, 6)
    fused = fuse_conv_bn_eval(conv, bn)
    np.testing.assert_allclose(fused(x).detach().numpy(), bn(conv(x)).detach().numpy(), atol=1e-5)
    w, b = fuse_conv_bn_weights(
        conv.weight, conv.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias
    )
    assert isinstance(w, flow.nn.Parameter) and isinstance(b, flow.nn.Parameter)
    lin = flow.nn.Linear(3, 4).eval()
    bn1 = flow.nn.BatchNorm1d(4).eval()
    bn1.running_mean.normal_()
    y = flow.randn(5, 3)
    np.testing.assert_allclose(
        fuse_linear_bn_eval(lin, bn1)(y).detach().numpy(),
        bn1(lin(y)).detach().numpy(),
        atol=1e-5,
    )
    assert sorted(n for n in dir(flow.nn.utils.fusion) if n.startswith("fuse")) == sorted(
        n for n in dir(torch.nn.utils.fusion) if n.startswith("fuse")
    )


def test_tensor_as_subclass():
    class Tagged(flow.Tensor):
        def __init__(self, *args, **kwargs):
            raise AssertionError("as_subclass does not call the constructor")

        def tag(self):
            return "tagged"

    class Slim(flow.Tensor):
        __slots__ = ()

    base = flow.zeros(3)
    r = base.as_subclass(Tagged)
    assert type(r) is Tagged and r.tag() == "tagged"
    r.add_(1)  # shares the memory
    np.testing.assert_array_equal(base.numpy(), [1.0, 1.0, 1.0])
    assert not r.requires_grad
    for cls in (Tagged, Slim):
        t = flow.tensor([1.0, 2.0], requires_grad=True)
        out = (t * 2).as_subclass(cls)
        assert type(out) is cls and out.requires_grad and not out.is_leaf
        (out * 3).sum().backward()
        np.testing.assert_array_equal(t.grad.numpy(), [6.0, 6.0])
    s = base.as_subclass(Slim)
    s.add_(1)
    np.testing.assert_array_equal(base.numpy(), [2.0, 2.0, 2.0])
    p = flow.nn.Parameter(flow.ones(2)).as_subclass(flow.Tensor)
    assert type(p) is flow.Tensor and p.requires_grad

    class TTagged(torch.Tensor):
        pass

    assert torch.zeros(1).as_subclass(TTagged).__class__ is TTagged
    for lib in (flow, torch):
        with pytest.raises(TypeError, match="inherit from Tensor"):
            lib.zeros(1).as_subclass(int)
