"""`out=` on the functions PyTorch gives one (oneflow/framework/out_arg.py), against PyTorch:
values written into out and out returned, resizing (with PyTorch's warning when out had
elements), non-contiguous outs kept, dtype rules (castable, exact, computed in out's dtype, made
in out's dtype), pairs of outs, partial overlap and autograd refused, out=None as no out."""

import inspect
import warnings

import numpy as np
import pytest
import torch

import oneflow as flow
from oneflow.framework import out_arg

RNG = np.random.default_rng(7)
A = RNG.standard_normal((3, 4)).astype(np.float32)
B = RNG.standard_normal((3, 4)).astype(np.float32)
S = RNG.standard_normal((4, 4)).astype(np.float32) + 4 * np.eye(4, dtype=np.float32)
V = RNG.standard_normal(4).astype(np.float32)
P = (RNG.random((3, 4)) + 0.5).astype(np.float32)
I = np.array([[0, 2, 1, 0], [2, 1, 0, 1], [1, 0, 2, 2]], dtype=np.int64)
N = np.array([[3, 5, 1, 6], [7, 2, 9, 4], [8, 0, 2, 5]], dtype=np.int64)


def _lib(lib):
    return torch if lib == "torch" else flow


def _t(lib, a):
    return torch.from_numpy(np.array(a)) if lib == "torch" else flow.tensor(np.array(a))


# name -> (function of the library, arguments built for that library)
CASES = {
    "add": lambda L, t: (L.add, (t(A), t(B)), {"alpha": 2}),
    "sub_scalar": lambda L, t: (L.sub, (t(A), 1.5), {}),
    "mul_int": lambda L, t: (L.mul, (t(N), t(N)), {}),
    "div_floor": lambda L, t: (L.div, (t(A), t(P)), {"rounding_mode": "floor"}),
    "pow": lambda L, t: (L.pow, (t(P), 2.5), {}),
    "exp": lambda L, t: (L.exp, (t(A),), {}),
    "sqrt": lambda L, t: (L.sqrt, (t(P),), {}),
    "neg_int": lambda L, t: (L.neg, (t(N),), {}),
    "sigmoid": lambda L, t: (L.sigmoid, (t(A),), {}),
    "eq": lambda L, t: (L.eq, (t(A), t(A[0])), {}),
    "lt_scalar": lambda L, t: (L.lt, (t(A), 0.0), {}),
    "logical_and": lambda L, t: (L.logical_and, (t(A), t(B)), {}),
    "maximum": lambda L, t: (L.maximum, (t(A), t(B)), {}),
    "atan2": lambda L, t: (L.atan2, (t(A), t(B)), {}),
    "addcmul": lambda L, t: (L.addcmul, (t(A), t(B), t(P)), {"value": 0.5}),
    "lerp": lambda L, t: (L.lerp, (t(A), t(B), 0.25), {}),
    "where": lambda L, t: (L.where, (t(A) > 0, t(A), t(B)), {}),
    "cat": lambda L, t: (L.cat, ([t(A), t(B)],), {"dim": 1}),
    "stack": lambda L, t: (L.stack, ([t(A), t(B)],), {}),
    "hstack": lambda L, t: (L.hstack, ([t(A), t(B)],), {}),
    "mean_dim": lambda L, t: (L.mean, (t(A), 1), {}),
    "std_dim": lambda L, t: (L.std, (t(A), 0), {}),
    "logsumexp": lambda L, t: (L.logsumexp, (t(A), 1), {}),
    "sum_dim": lambda L, t: (L.sum, (t(A * 10), 1), {}),
    "prod_dim": lambda L, t: (L.prod, (t(P), 0), {}),
    "cumsum": lambda L, t: (L.cumsum, (t(A * 10), 1), {}),
    "amax": lambda L, t: (L.amax, (t(A), 0), {}),
    "argmax": lambda L, t: (L.argmax, (t(A), 1), {}),
    "max_all": lambda L, t: (L.max, (t(A),), {}),
    "clamp": lambda L, t: (L.clamp, (t(A), -0.5, 0.5), {}),
    "round": lambda L, t: (L.round, (t(A * 10),), {}),
    "matmul": lambda L, t: (L.matmul, (t(A), t(S)), {}),
    "mm": lambda L, t: (L.mm, (t(A), t(S)), {}),
    "mv": lambda L, t: (L.mv, (t(A), t(V)), {}),
    "addmm": lambda L, t: (L.addmm, (t(A), t(A), t(S)), {"beta": 0.5}),
    "outer": lambda L, t: (L.outer, (t(V), t(V)), {}),
    "dot": lambda L, t: (L.dot, (t(V), t(V)), {}),
    "gather": lambda L, t: (L.gather, (t(A), 0, t(I)), {}),
    "index_select": lambda L, t: (L.index_select, (t(A), 1, t(np.array([3, 0]))), {}),
    "masked_select": lambda L, t: (L.masked_select, (t(A), t(A) > 0), {}),
    "nonzero": lambda L, t: (L.nonzero, (t(A) > 0,), {}),
    "tril": lambda L, t: (L.tril, (t(A),), {"diagonal": 1}),
    "diag": lambda L, t: (L.diag, (t(V),), {}),
    "cross": lambda L, t: (L.cross, (t(A[:, :3]), t(B[:, :3])), {"dim": 1}),
    "inverse": lambda L, t: (L.inverse, (t(S),), {}),
    "searchsorted": lambda L, t: (L.searchsorted, (t(np.sort(V)), t(A)), {}),
    "isneginf": lambda L, t: (L.isneginf, (t(A),), {}),
    "nan_to_num": lambda L, t: (L.nan_to_num, (t(A),), {}),
    "kron": lambda L, t: (L.kron, (t(A[:2, :2]), t(B[:2, :2])), {}),
    "diff": lambda L, t: (L.diff, (t(A),), {}),
    "abs": lambda L, t: (L.abs, (t(A),), {}),
    "floor_int": lambda L, t: (L.floor, (t(N),), {}),
    "heaviside": lambda L, t: (L.heaviside, (t(A), t(B)), {}),
    "float_power": lambda L, t: (L.float_power, (t(P), 2.0), {}),
    "ger": lambda L, t: (L.ger, (t(V), t(V)), {}),
    "cholesky": lambda L, t: (L.cholesky, (t(S @ S.T),), {}),
    "all_dim": lambda L, t: (L.all, (t(A) > -1, 1), {}),
    "special.round": lambda L, t: (L.special.round, (t(A * 10),), {}),
    "linalg.inv": lambda L, t: (L.linalg.inv, (t(S),), {}),
    "linalg.vector_norm": lambda L, t: (L.linalg.vector_norm, (t(A),), {"dim": 1}),
    "special.erfc": lambda L, t: (L.special.erfc, (t(A),), {}),
    "special.xlogy": lambda L, t: (L.special.xlogy, (t(P), t(P)), {}),
}


def _call(case, lib, **extra):
    fn, args, kwargs = CASES[case](_lib(lib), lambda a: _t(lib, a))
    return fn(*args, **kwargs, **extra)


def _dt(lib, name):
    return getattr(_lib(lib), name)


def _same(got, want, tol=1e-5):
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1], (got.dtype, want.dtype)
    assert tuple(got.shape) == tuple(want.shape), (got.shape, want.shape)
    np.testing.assert_allclose(
        got.numpy().astype(np.float64), want.numpy().astype(np.float64), rtol=tol, atol=tol
    )


def _outcome(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            return fn(), None, [str(x.message) for x in w]
        except (RuntimeError, TypeError) as e:
            return None, e, [str(x.message) for x in w]


@pytest.mark.filterwarnings("ignore:torch.cholesky is deprecated")
@pytest.mark.parametrize("case", sorted(CASES))
def test_out_receives_the_result_like_torch(case):
    want = _call(case, "torch")
    dtype = str(want.dtype).split(".")[-1]
    # An empty out of the result's dtype: resized silently, returned.
    o = flow.empty(0, dtype=_dt("flow", dtype))
    got, err, warned = _outcome(lambda: _call(case, "flow", out=o))
    assert err is None, err
    assert got is o and not warned
    _same(o, want)
    # An out of the right shape keeps its memory.
    o = flow.empty(*want.shape, dtype=_dt("flow", dtype))
    ptr = o.data_ptr()
    assert _call(case, "flow", out=o) is o
    _same(o, want)
    assert o.data_ptr() == ptr
    # A non-contiguous out keeps its strides.
    if want.ndim == 2:
        base = flow.zeros(want.shape[1], want.shape[0], dtype=_dt("flow", dtype))
        o = base.t()
        strides = o.stride()
        assert _call(case, "flow", out=o) is o
        assert o.stride() == strides
        _same(o, want)
        _same(base, want.t())
    # An out of another shape with elements: PyTorch's warning, then resized.
    if want.numel() != 5:
        o = flow.zeros(5, dtype=_dt("flow", dtype))
        with pytest.warns(UserWarning, match="resized"):
            assert _call(case, "flow", out=o) is o
        _same(o, want)


@pytest.mark.filterwarnings("ignore:torch.cholesky is deprecated")
@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("dtype", ["float64", "float16", "int64", "uint8", "bool"])
def test_out_of_another_dtype_like_torch(case, dtype):
    want, terr, _ = _outcome(
        lambda: _call(case, "torch", out=torch.empty(0, dtype=_dt("torch", dtype)))
    )
    if isinstance(terr, TypeError) and "can't be cast" in str(terr):
        terr = RuntimeError(str(terr))  # torch.cat's cast error is a TypeError; ours is not
    if isinstance(terr, TypeError):
        pytest.skip(f"torch's {case} takes no out of this form: {terr}")
    if isinstance(terr, NotImplementedError):
        pytest.skip(f"torch has no kernel for this dtype: {terr}")
    o = flow.empty(0, dtype=_dt("flow", dtype))
    got, ferr, _ = _outcome(lambda: _call(case, "flow", out=o))
    if terr is not None:
        assert isinstance(ferr, RuntimeError), (terr, got)
        return
    assert ferr is None, ferr
    _same(o, want, tol=2e-3 if dtype == "float16" else 1e-5)


PAIRS = {
    "max_dim": lambda L, t: (L.max, (t(A), 1), {}),
    "min_dim_keepdim": lambda L, t: (L.min, (t(A), 0), {"keepdim": True}),
    "sort": lambda L, t: (L.sort, (t(A),), {"dim": 1, "descending": True}),
    "topk": lambda L, t: (L.topk, (t(A), 2), {}),
    "kthvalue": lambda L, t: (L.kthvalue, (t(A), 2, 1), {}),
    "median_dim": lambda L, t: (L.median, (t(A), 1), {}),
    "mode": lambda L, t: (L.mode, (t(N % 3), 1), {}),
    "cummax": lambda L, t: (L.cummax, (t(A), 1), {}),
    "aminmax": lambda L, t: (L.aminmax, (t(A),), {"dim": 0}),
    "frexp": lambda L, t: (L.frexp, (t(A),), {}),
    "linalg.slogdet": lambda L, t: (L.linalg.slogdet, (t(S),), {}),
}


@pytest.mark.parametrize("case", sorted(PAIRS))
def test_pairs_of_outs_like_torch(case):
    fn, args, kwargs = PAIRS[case](torch, lambda a: _t("torch", a))
    want = fn(*args, **kwargs)
    fn, args, kwargs = PAIRS[case](flow, lambda a: _t("flow", a))
    outs = tuple(flow.empty(0, dtype=_dt("flow", str(w.dtype).split(".")[-1])) for w in want)
    got = fn(*args, **kwargs, out=outs)
    assert len(got) == len(want) and all(g is o for g, o in zip(got, outs))
    if hasattr(want, "_fields"):
        assert got._fields == want._fields
    for o, w in zip(outs, want):
        _same(o, w)
    # A list works as a tuple; each out's dtype must be its result's exactly.
    assert fn(*args, **kwargs, out=list(outs))[0] is outs[0]
    wrong = (flow.empty(0, dtype=flow.float64),) + outs[1:]
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype"):
        fn(*args, **kwargs, out=wrong)
    with pytest.raises(TypeError, match="tuple of 2"):
        fn(*args, **kwargs, out=outs[:1])
    with pytest.raises(TypeError, match="must be"):
        fn(*args, **kwargs, out=outs[0])


@pytest.mark.parametrize(
    "name,args,kwargs",
    [
        ("zeros", (2, 3), {}),
        ("ones", ((2, 3),), {}),
        ("full", ((2, 3), 7), {}),
        ("arange", (1, 10, 2), {}),
        ("linspace", (0, 1, 5), {}),
        ("logspace", (0, 2, 3), {}),
        ("eye", (3, 4), {}),
    ],
)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32"])
def test_factories_make_outs_dtype_like_torch(name, args, kwargs, dtype):
    t = torch.empty(0, dtype=_dt("torch", dtype))
    getattr(torch, name)(*args, **kwargs, out=t)
    o = flow.empty(0, dtype=_dt("flow", dtype))
    assert getattr(flow, name)(*args, **kwargs, out=o) is o
    _same(o, t)
    other = "float64" if dtype != "float64" else "float32"
    with pytest.raises(RuntimeError, match="does not match dtype of out"):
        getattr(flow, name)(*args, **kwargs, dtype=_dt("flow", other), out=o)


def test_random_factories_fill_out_with_its_dtype():
    o = flow.empty(0, dtype=flow.float64)
    assert flow.rand(2, 3, out=o) is o and o.dtype == flow.float64 and o.shape == (2, 3)
    assert ((o >= 0) & (o < 1)).all()
    o = flow.empty(0, dtype=flow.int32)
    flow.randint(0, 5, (100,), out=o)
    assert o.dtype == flow.int32 and int(o.min()) >= 0 and int(o.max()) < 5
    o = flow.empty(0, dtype=flow.int32)
    flow.randperm(6, out=o)
    assert sorted(o.tolist()) == list(range(6))
    flow.manual_seed(3)
    a = flow.randn(4, 4, out=flow.empty(0))
    flow.manual_seed(3)
    np.testing.assert_array_equal(a.numpy(), flow.randn(4, 4).numpy())


def test_autograd_refuses_out_while_recording_like_torch():
    x = flow.tensor(A, requires_grad=True)
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        flow.exp(x, out=flow.empty(0))
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        flow.add(flow.tensor(A), 1, out=flow.empty(3, 4, requires_grad=True))
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        flow.max(x, 1, out=(flow.empty(0), flow.empty(0, dtype=flow.int64)))
    with flow.no_grad():
        o = flow.exp(x, out=flow.empty(0))
    np.testing.assert_allclose(o.numpy(), np.exp(A), rtol=1e-6)
    assert not o.requires_grad
    # Results that carry no gradient may be written while recording (as PyTorch).
    assert flow.eq(x, x, out=flow.empty(0, dtype=flow.bool)).all()
    assert flow.argmax(x, 1, out=flow.empty(0, dtype=flow.int64)).tolist() == A.argmax(1).tolist()
    # Writing out bumps its version: a graph that saved it notices.
    w = flow.tensor(P, requires_grad=True)
    o = flow.empty(3, 4)
    y = (w * o).sum()
    with flow.no_grad():
        flow.add(o, 1, out=o)
    with pytest.raises(RuntimeError):
        y.backward()


def test_out_may_be_an_input_but_not_overlap_one_like_torch():
    for lib in ("torch", "flow"):
        L = _lib(lib)
        a = _t(lib, A.copy())
        L.add(a, a, out=a)
        np.testing.assert_allclose(a.numpy(), 2 * A)
        x = _t(lib, np.arange(8.0))
        with pytest.raises(RuntimeError, match="single memory location"):
            L.add(x[:4], 1, out=x[2:6])
        y = _t(lib, S.copy())
        with pytest.raises(RuntimeError, match="single memory location"):
            L.exp(y, out=y.t())
        z = _t(lib, np.arange(8.0))
        L.add(z[:4], 1, out=z[4:])  # disjoint halves of one tensor
        assert z.tolist() == [0, 1, 2, 3, 1, 2, 3, 4]


def test_out_may_be_an_operand_of_a_product():
    # The product is computed before out is written (PyTorch's mm into an operand gives zeros).
    b = flow.tensor(S)
    flow.mm(b, b, out=b)
    np.testing.assert_allclose(b.numpy(), S @ S, rtol=1e-5)


def test_out_errors_and_none():
    x = flow.tensor(A)
    with pytest.raises(TypeError, match="argument 'out' must be Tensor, not str"):
        flow.add(x, x, out="y")
    with pytest.raises(TypeError, match="argument 'out' must be Tensor, not int"):
        flow.exp(x, out=3)
    np.testing.assert_allclose(flow.exp(x, out=None).numpy(), np.exp(A), rtol=1e-6)
    np.testing.assert_allclose(flow.cat([x, x], out=None, dim=0).numpy(), np.concatenate([A, A]))
    # Errors of the op itself come first, as without out.
    with pytest.raises(RuntimeError):
        flow.mm(x, x, out=flow.empty(0))


def test_wrapped_functions_look_like_the_functions():
    assert flow.cat.__name__ == "cat" and flow.cat.__doc__ == flow.cat.__wrapped__.__doc__
    assert "dim" in inspect.signature(flow.cat).parameters
    assert flow.exp.__name__ == "exp" and flow.linalg.inv.__name__ == "inv"
    assert repr(flow.exp) == repr(flow.exp.__wrapped__)


def _torch_takes_out(f):
    """Whether torch's Python binding of f accepts `out=` (a None out is parsed as no out)."""
    try:
        return "out" in inspect.signature(f).parameters
    except (ValueError, TypeError):
        pass
    x = torch.rand(3, 3) + 0.5
    tries = [(x,), (x, x), (x, 0), (x, 1, 1), (x, x, x), ([x, x],), (3,), (3, 3), (x, 0.5)]
    tries += [(1, x), (0.5, x), (x, [0]), (3, 3, 3), (x, 2, 0, 1.0)]
    for args in tries:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                f(*args, out=None)
            return True
        except TypeError as e:
            m = str(e)
            if "unexpected keyword argument 'out'" in m:
                return False
            if "expected one of" in m and "out" not in m:
                return False
        except Exception:
            return True  # the arguments were parsed, out among them
    return False


# torch functions that take out= whose oneflow counterpart is not a plain function of tensors.
# The split copies take a list of outs, handled by the functions themselves
# (test_torch_namespace.py::test_copy_op_out_argument).
NOT_WRAPPED = {
    "": {"split_copy", "split_with_sizes_copy", "unbind_copy"},
    "linalg.": set(),
    "special.": set(),
}


@pytest.mark.parametrize("prefix", ["", "linalg.", "special."])
def test_every_torch_function_with_out_takes_out_here(prefix):
    tmod = {"": torch, "linalg.": torch.linalg, "special.": torch.special}[prefix]
    fmod = {"": flow, "linalg.": flow.linalg, "special.": flow.special}[prefix]
    wrapped = out_arg.WRAPPED["oneflow" + ("." + prefix[:-1] if prefix else "")]
    names = [
        n
        for n in dir(tmod)
        if not n.startswith("_")
        and hasattr(fmod, n)
        and callable(getattr(tmod, n))
        and not isinstance(getattr(tmod, n), type)
    ]
    missing = [
        n
        for n in names
        if n not in wrapped and n not in NOT_WRAPPED[prefix] and _torch_takes_out(getattr(tmod, n))
    ]
    assert not missing, missing
    for n in wrapped:
        assert getattr(fmod, n).__wrapped__ is not None


def test_bernoulli_draws_into_any_dtype():
    p = flow.full((1000,), 0.5)
    for dtype in (flow.int64, flow.bool, flow.float64):
        o = flow.bernoulli(p, out=flow.empty(0, dtype=dtype))
        assert o.dtype == dtype and o.shape == (1000,)
        assert set(o.tolist()) <= {0, 1} and 300 < int(o.to(flow.int64).sum()) < 700


def test_normal_of_numbers_is_made_in_outs_dtype():
    o = flow.normal(0.0, 1.0, (3, 4), out=flow.empty(0, dtype=flow.float64))
    assert o.dtype == flow.float64 and o.shape == (3, 4)


def test_out_runs_outside_autocast_like_torch():
    a = flow.ones(2, 2)
    with flow.autocast("cpu"):
        o = flow.mm(a, a, out=flow.empty(0))
        assert o.dtype == flow.float32 and o.tolist() == [[2, 2], [2, 2]]
        with pytest.raises(RuntimeError, match="Expected out tensor to have dtype"):
            flow.mm(a, a, out=flow.empty(0, dtype=flow.bfloat16))
        assert flow.mm(a, a).dtype == flow.bfloat16  # without out, autocast applies


def test_gradient_rules_follow_differentiability_like_torch():
    x = flow.tensor(A)
    o = flow.empty(3, 4, requires_grad=True)
    assert flow.gt(x, 0, out=o) is o and o.requires_grad
    assert o.detach().numpy().tolist() == (A > 0).astype(np.float32).tolist()
    o = flow.empty(0)
    flow.zeros(2, 3, requires_grad=True, out=o)
    assert o.requires_grad and o.shape == (2, 3)
    with pytest.raises(RuntimeError, match="as_tuple"):
        flow.nonzero(x, as_tuple=True, out=flow.empty(0, dtype=flow.int64))


def test_resize_warning_names_the_callers_line_in_torchs_words():
    x = flow.tensor(A)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        flow.add(x, x, out=flow.empty(5))
        line = inspect.currentframe().f_lineno - 1
    assert len(w) == 1 and w[0].filename == __file__ and w[0].lineno == line
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "error", message="An output with one or more elements was resized", category=UserWarning
        )
        with pytest.raises(UserWarning):
            flow.add(x, x, out=flow.empty(5))


def test_wrapped_functions_pickle_copy_and_introspect_like_functions():
    import copy
    import functools
    import pickle
    import weakref

    class M(flow.nn.Module):
        def __init__(self):
            super().__init__()
            self.act = flow.tanh

    assert copy.deepcopy(M()).act is flow.tanh
    for f in (flow.add, flow.cat, flow.linalg.inv, flow.special.erfc, flow.max):
        assert pickle.loads(pickle.dumps(f)) is f and copy.copy(f) is f
    p = pickle.loads(pickle.dumps(functools.partial(flow.stack, dim=0)))
    assert p.func is flow.stack
    assert inspect.isroutine(flow.add) and weakref.ref(flow.exp)() is flow.exp
    assert flow.add.__module__ == "oneflow" and flow.linalg.inv.__module__ == "oneflow.linalg"

    class Holder:
        f = flow.exp  # a class attribute stays a plain function, as torch's

    np.testing.assert_allclose(Holder().f(flow.tensor(A)).numpy(), np.exp(A), rtol=1e-6)
