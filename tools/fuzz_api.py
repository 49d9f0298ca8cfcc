#!/usr/bin/env python3
"""Fuzz the public Python API with random, mostly invalid arguments.

Each call must either succeed or raise a Python exception: an abort, a segfault or a hang is a
bug. A supervisor (the default mode) runs the calls in a child process (``--worker``), reads
one line per call from it, and when the child dies by a signal, exits early or stays in one
call longer than ``--timeout`` seconds, records the call as crashed or hung and starts a new
child for the remaining calls.

    python tools/fuzz_api.py --calls 3000 --seed 0         # the CI-sized run
    python tools/fuzz_api.py --calls 200000 --seed 1       # the long run
    python tools/fuzz_api.py --replay "flow.add(T((2, 3), 'float32', 7), 2**40)"

The arguments come from hypothesis strategies: tensors of small shapes including 0-size and
0-dim ones, non-contiguous layouts, meta tensors, global tensors, every dtype, NaN/Inf values,
negative and huge ints for dims, sizes and indices, absurd sizes, device strings, wrong Python
types and None. Each
call is printed as a Python expression that ``--replay`` evaluates again (``T(...)`` rebuilds a
tensor from its shape, dtype, seed and layout).
"""

import argparse
import math
import os
import select
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# --------------------------------------------------------------------------------------------
# Worker side: the op table and the argument strategies.
# --------------------------------------------------------------------------------------------

DTYPES = [
    "float32",
    "float64",
    "float16",
    "bfloat16",
    "int8",
    "uint8",
    "int16",
    "int32",
    "int64",
    "bool",
    "complex64",
]

# Entry points left out: they change process-wide state in ways a later call would notice
# (printing options, file system) or are not operations.
SKIP_FLOW = {
    "save",
    "load",
    "set_printoptions",
    "set_default_tensor_type",
}
SKIP_TENSOR = {
    "__class__",
    "__delattr__",
    "__dict__",
    "__dir__",
    "__doc__",
    "__getattribute__",
    "__getstate__",
    "__init__",
    "__init_subclass__",
    "__module__",
    "__new__",
    "__reduce__",
    "__reduce_ex__",
    "__setattr__",
    "__sizeof__",
    "__subclasshook__",
    "__format__",
    "__hash__",
    "__deepcopy__",
    "_pybind11_conduit_v1_",
    "_register_hook",
    "_remove_hook",
    "_shape",
    "_version",
}

HUGE_INTS = [
    2**31 - 1,
    2**31,
    2**32,
    2**40,
    2**62,
    2**63 - 1,
    2**64,
    -(2**31),
    -(2**63),
    -(2**40),
]
ABSURD_SIZES = [
    (2**40,),
    (2**31, 2**31),
    (2**62, 4),
    (2**63 - 1,),
    (2**64,),
    (-1,),
    (3, -2),
    (-(2**63),),
    (2**21, 2**21, 2**21),
    (0, 2**63 - 1),
]
STRINGS = [
    "",
    "cpu",
    "cuda",
    "cuda:0",
    "cuda:-1",
    "meta",
    "xpu",
    "cpu:7",
    "mean",
    "sum",
    "none",
    "bogus",
    "constant",
    "reflect",
    "nearest",
    "bilinear",
    "ij",
    "ii->i",
    "ij,jk->ik",
    "fro",
    "tanh",
    "floor",
    "trunc",
    "\x00",
]
FLOATS = [
    0.0,
    -0.0,
    0.5,
    -1.5,
    1.0,
    2.0,
    float("nan"),
    float("inf"),
    float("-inf"),
    1e308,
    -1e308,
    1e-310,
    3.5,
]


class Lit:
    """A value together with the Python expression that rebuilds it."""

    def __init__(self, value, text):
        self.value = value
        self.text = text


def fmt(v):
    if isinstance(v, Lit):
        return v.text
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, int) and not isinstance(v, bool) and abs(v) >= 2**20:
        for b in range(20, 66):
            for sign, off in ((1, 0), (1, -1), (-1, 0)):
                if v == sign * (2**b) + off:
                    s = f"2**{b}" + (" - 1" if off else "")
                    return f"-({s})" if sign < 0 else s
        return repr(v)
    if isinstance(v, tuple):
        inner = ", ".join(fmt(x) for x in v)
        return f"({inner},)" if len(v) == 1 else f"({inner})"
    if isinstance(v, list):
        return "[" + ", ".join(fmt(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k!r}: {fmt(x)}" for k, x in v.items()) + "}"
    if isinstance(v, slice):
        return f"slice({fmt(v.start)}, {fmt(v.stop)}, {fmt(v.step)})"
    if v is Ellipsis:
        return "..."
    return repr(v)


def call_str(callee, args, kwargs=None):
    parts = [fmt(a) for a in args] + [f"{k}={fmt(v)}" for k, v in (kwargs or {}).items()]
    return f"{callee}({', '.join(parts)})"


def unwrap(v):
    if isinstance(v, Lit):
        return v.value
    if isinstance(v, tuple):
        return tuple(unwrap(x) for x in v)
    if isinstance(v, list):
        return [unwrap(x) for x in v]
    if isinstance(v, dict):
        return {k: unwrap(x) for k, x in v.items()}
    if isinstance(v, slice):
        return slice(unwrap(v.start), unwrap(v.stop), unwrap(v.step))
    return v


def make_tensor(shape, dtype, seed, layout="c", special=False, requires_grad=False):
    """Builds the tensor that ``T(...)`` in a call's text stands for."""
    import numpy as np

    import oneflow as flow

    rng = np.random.RandomState(seed % (2**32))
    shape = tuple(shape)
    base = list(shape)
    if layout == "t" and len(shape) >= 2:
        base[-1], base[-2] = base[-2], base[-1]
    elif layout == "s" and len(shape) >= 1:
        base[0] = base[0] * 2
    elif layout == "e":
        base = [1 if i % 2 == 0 else d for i, d in enumerate(shape)]
    n = int(np.prod(base)) if base else 1
    if dtype in ("float32", "float64", "float16", "bfloat16"):
        a = rng.randn(n) * 3
        if special and n:
            k = rng.randint(0, n, size=max(1, n // 3))
            a[k] = rng.choice([np.nan, np.inf, -np.inf, 1e30, -0.0], size=len(k))
        a = a.astype(np.float64 if dtype == "float64" else np.float32)
    elif dtype == "complex64":
        a = (rng.randn(n) + 1j * rng.randn(n)).astype(np.complex64)
    elif dtype == "bool":
        a = rng.rand(n) > 0.5
    else:
        info = np.iinfo(dtype)
        a = rng.randint(-3 if info.min < 0 else 0, 6, size=n)
        if special and n:
            k = rng.randint(0, n, size=max(1, n // 3))
            a[k] = rng.choice([info.min, info.max, -1, 2**30 % info.max], size=len(k))
        a = a.astype(dtype)
    a = a.reshape(base)
    fdtype = getattr(flow, dtype)
    if dtype in ("float16", "bfloat16"):
        t = flow.tensor(a).to(fdtype)
    else:
        t = flow.tensor(a, dtype=fdtype)
    if layout == "t" and len(shape) >= 2:
        t = t.transpose(-1, -2)
    elif layout == "s" and len(shape) >= 1:
        t = t[::2]
    elif layout == "e":
        t = t.expand(*shape)
    elif layout == "m":  # the same metas on the meta device, without values
        t = t.to("meta")
    elif layout == "g":  # a global tensor, broadcast on this process's placement
        t = t.to_global(flow.placement("cpu", ranks=[0]), flow.sbp.broadcast)
    if requires_grad and t.is_floating_point():
        if layout in ("e", "t", "s", "m", "g"):
            t = t.detach()
        t.requires_grad_(True)
    return t


def T(shape, dtype="float32", seed=0, layout="c", special=False, requires_grad=False):
    return make_tensor(shape, dtype, seed, layout, special, requires_grad)


def BW(x):
    """Calls backward on an op's (first floating) result, as ``BW(flow.op(...))`` replays."""
    import oneflow as flow

    if isinstance(x, (tuple, list)):
        x = next((y for y in x if isinstance(y, flow.Tensor)), None)
    if isinstance(x, flow.Tensor) and x.requires_grad:
        x.sum().backward()
    return x


def SETITEM(t, idx, value):
    t[idx] = value
    return t


def MOD(cls, args, kwargs, inputs):
    m = cls(*args, **kwargs)
    return m(*inputs)


def namespace():
    import oneflow as flow
    import oneflow.nn as nn
    import oneflow.nn.functional as F

    return {
        "flow": flow,
        "nn": nn,
        "F": F,
        "T": T,
        "BW": BW,
        "SETITEM": SETITEM,
        "MOD": MOD,
        "nan": float("nan"),
        "inf": float("inf"),
    }


def doc_params(fn):
    """Parameter names from a signature, or from the first line of a pybind11 docstring."""
    import inspect

    try:
        sig = inspect.signature(fn)
        out = []
        for p in sig.parameters.values():
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                continue
            out.append((p.name, p.default is p.empty, p.kind == p.KEYWORD_ONLY))
        has_var = any(p.kind == p.VAR_POSITIONAL for p in sig.parameters.values())
        return None if has_var and not out else out
    except (TypeError, ValueError):
        pass
    lines = [
        ln.strip().split(". ", 1)[-1]
        for ln in (getattr(fn, "__doc__", None) or "").strip().splitlines()
        if "(" in ln and "*args, **kwargs" not in ln
    ]
    if not lines:
        return None
    inner = lines[0].split("(", 1)[1].rsplit(")", 1)[0]
    out, kwonly, depth, cur = [], False, 0, ""
    parts = []
    for ch in inner:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    for p in parts:
        p = p.strip()
        if not p:
            continue
        if p == "*":
            kwonly = True
            continue
        if p.startswith("*"):
            continue
        name = p.split(":")[0].split("=")[0].strip()
        if name in ("self",):
            continue
        out.append((name, "=" not in p, kwonly))
    return out


def build_table():
    """(text of the callee, callee, parameters, kind) for every entry point."""
    import inspect

    import oneflow as flow
    import oneflow.nn as nn
    import oneflow.nn.functional as F

    table = []
    for modname, mod in (
        ("flow", flow),
        ("F", F),
        ("flow.linalg", flow.linalg),
        ("flow.autograd", flow.autograd),
    ):
        names = getattr(mod, "__all__", None) if modname == "flow.linalg" else None
        for name in names or dir(mod):
            if name.startswith("_") or name in SKIP_FLOW:
                continue
            obj = getattr(mod, name, None)
            if not callable(obj) or inspect.ismodule(obj):
                continue
            if inspect.isclass(obj) and modname not in ("flow",):
                continue
            if modname == "flow.autograd" and name not in ("grad", "backward"):
                continue
            table.append((f"{modname}.{name}", obj, doc_params(obj), "func"))
    for name in dir(flow.Tensor):
        if name in SKIP_TENSOR or (name.startswith("_") and not name.startswith("__")):
            continue
        attr = inspect.getattr_static(flow.Tensor, name)
        if isinstance(attr, property) or type(attr).__name__ in ("getset_descriptor",):
            table.append((name, None, [], "prop"))
        else:
            fn = getattr(flow.Tensor, name)
            params = doc_params(fn)
            if params and (inspect.isfunction(fn) or params[0][0] == "self"):
                params = params[1:]  # the tensor the method is called on
            table.append((name, fn, params, "method"))
    for name in (
        "Linear",
        "Bilinear",
        "Conv1d",
        "Conv2d",
        "Conv3d",
        "ConvTranspose2d",
        "MaxPool2d",
        "AvgPool2d",
        "AdaptiveAvgPool2d",
        "BatchNorm1d",
        "BatchNorm2d",
        "LayerNorm",
        "GroupNorm",
        "InstanceNorm2d",
        "Embedding",
        "LSTM",
        "GRU",
        "RNN",
        "LSTMCell",
        "MultiheadAttention",
        "TransformerEncoderLayer",
        "Dropout",
        "Flatten",
        "Unflatten",
        "Upsample",
        "PixelShuffle",
        "Fold",
        "Unfold",
        "CrossEntropyLoss",
        "CTCLoss",
        "Softmax",
        "PReLU",
        "ZeroPad2d",
        "ReflectionPad2d",
        "RMSNorm",
    ):
        cls = getattr(nn, name, None)
        if cls is not None:
            table.append((f"nn.{name}", cls, doc_params(cls), "module"))
    for special in ("getitem", "setitem", "creation", "view"):
        # These take the shapes, sizes and indices the issue is about: drawn more often.
        table.extend([(special, None, [], special)] * 12)
    return table


TENSORISH = {
    "input",
    "other",
    "weight",
    "bias",
    "target",
    "mask",
    "index",
    "src",
    "source",
    "mat1",
    "mat2",
    "mat",
    "vec",
    "vec2",
    "tensor1",
    "tensor2",
    "batch1",
    "batch2",
    "x",
    "y",
    "x1",
    "x2",
    "input1",
    "input2",
    "a",
    "b",
    "condition",
    "values",
    "indices",
    "boundaries",
    "sorted_sequence",
    "weights",
    "running_mean",
    "running_var",
    "query",
    "key",
    "value",
    "attn_mask",
    "pos_weight",
    "log_probs",
    "targets",
    "input_lengths",
    "target_lengths",
    "updates",
    "anchor",
    "positive",
    "negative",
    "gradient",
    "like",
    "var",
    "end",
    "start",
    "min",
    "max",
    "exponent",
    "tensor",
    "label",
    "pred",
    "boxes",
    "scores",
    "sorter",
    "in_proj_weight",
    "in_proj_bias",
    "out_proj_weight",
    "out_proj_bias",
    "key_padding_mask",
    "predictions",
}
DIMISH = {
    "dim",
    "dims",
    "axis",
    "dim0",
    "dim1",
    "dim2",
    "axis0",
    "axis1",
    "start_dim",
    "end_dim",
    "source",
    "destination",
    "diagonal",
    "offset",
    "k",
    "shifts",
    "chunks",
    "split_size_or_sections",
    "indices_or_sections",
    "repeats",
    "num_classes",
    "minlength",
    "bins",
    "num_groups",
    "upscale_factor",
    "downscale_factor",
    "blank",
    "padding_idx",
    "ignore_index",
    "groups",
    "n",
    "m",
    "steps",
    "window_length",
    "num_heads",
    "num_samples",
}
SIZEISH = {
    "size",
    "shape",
    "sizes",
    "output_size",
    "kernel_size",
    "stride",
    "padding",
    "dilation",
    "output_padding",
    "normalized_shape",
    "pad",
    "scale_factor",
    "unflattened_size",
}


CALL_SHAPE = []  # the base shape of the call being drawn


def strategies():
    from hypothesis import strategies as st

    small_dim = st.sampled_from([0, 1, 1, 2, 2, 3, 3, 4, 5])
    shape = st.lists(small_dim, min_size=0, max_size=4)

    @st.composite
    def tensor(draw, shape_st=shape, float_only=False):
        # Most tensors of a call share the call's base shape (or broadcast against it), so that
        # binary ops, losses and indexing get past the shape checks into the kernels.
        how = draw(st.sampled_from(["base", "free", "base", "broadcast"]))
        base = CALL_SHAPE[0] if CALL_SHAPE and shape_st is shape else None
        if how == "free" or base is None:
            shp = draw(shape_st)
        elif how == "base":
            shp = list(base)
        else:
            shp = [d if draw(st.booleans()) else 1 for d in base[draw(st.integers(0, len(base))) :]]
        dtype = draw(st.sampled_from(DTYPES[:4] if float_only else DTYPES + ["float32"] * 4))
        seed = draw(st.integers(0, 2**16))
        layout = draw(st.sampled_from("ccccctsemg"))
        special = draw(st.sampled_from([False, False, False, True]))
        rg = dtype in DTYPES[:4] and draw(st.sampled_from([False, False, True]))
        text = f"T({tuple(shp)!r}, {dtype!r}, {seed}"
        if layout != "c" or special or rg:
            text += f", {layout!r}"
        if special or rg:
            text += f", {special}"
        if rg:
            text += ", True"
        text += ")"
        return Lit(make_tensor(shp, dtype, seed, layout, special, rg), text)

    ints = st.one_of(
        st.integers(-4, 5),
        st.integers(-4, 5),
        st.sampled_from(HUGE_INTS),
    )
    dims = st.one_of(
        st.integers(-6, 6),
        st.sampled_from(HUGE_INTS),
        st.lists(st.integers(-5, 5), max_size=4).map(tuple),
    )
    size_tuple = st.one_of(
        st.lists(st.integers(-2, 5), min_size=0, max_size=4).map(tuple),
        st.sampled_from(ABSURD_SIZES),
    )
    dtypes = st.sampled_from(DTYPES).map(lambda d: Lit(None, f"flow.{d}"))
    devices = st.one_of(
        st.sampled_from(["cpu", "cuda", "cuda:0", "meta", "xpu", "cpu:1", "", "cuda:99"]),
        st.sampled_from(["cpu", "cuda", "meta"]).map(lambda d: Lit(None, f"flow.device({d!r})")),
    )
    scalars = st.one_of(
        ints,
        st.sampled_from(FLOATS),
        st.booleans(),
        st.none(),
        st.just(complex(1, 2)),
    )
    leaf = st.one_of(
        scalars,
        st.sampled_from(STRINGS),
        dtypes,
        devices,
        st.just(Ellipsis),
        st.just(b"x"),
        st.just(Lit(None, "object()")),
    )

    def _fill(v):
        # dtypes, devices and object() are built when the call's text is evaluated.
        return v

    weird = st.deferred(
        lambda: st.one_of(
            tensor(),
            tensor(),
            leaf,
            st.lists(st.one_of(ints, st.sampled_from(FLOATS)), max_size=4),
            st.lists(tensor(), max_size=3),
            st.tuples(ints, ints),
            size_tuple,
            st.lists(st.lists(st.integers(-2, 3), max_size=3), max_size=3),
        )
    )
    index = st.deferred(
        lambda: st.one_of(
            ints,
            st.builds(
                slice,
                st.one_of(st.none(), ints),
                st.one_of(st.none(), ints),
                st.one_of(st.none(), st.sampled_from([1, 2, 3, -1, 0, 2**63 - 1])),
            ),
            st.none(),
            st.just(Ellipsis),
            st.booleans(),
            tensor(shape_st=st.lists(small_dim, max_size=2)),
            st.lists(st.integers(-6, 6), max_size=4),
            st.sampled_from(FLOATS),
            st.sampled_from(["a", ""]),
            st.lists(
                st.one_of(ints, st.none(), st.just(Ellipsis), st.builds(slice, st.none(), ints)),
                max_size=4,
            ).map(tuple),
        )
    )
    return dict(
        tensor=tensor,
        ints=ints,
        dims=dims,
        size_tuple=size_tuple,
        dtypes=dtypes,
        devices=devices,
        weird=weird,
        index=index,
        fill=_fill,
    )


def draw_param(data, S, name):
    from hypothesis import strategies as st

    r = data.draw(st.integers(0, 9))
    if r == 9:
        return data.draw(S["weird"])
    if name in ("dtype",):
        return data.draw(S["dtypes"])
    if name in ("device",):
        return data.draw(S["devices"])
    if name in TENSORISH:
        if r <= 6:
            return data.draw(S["tensor"]())
        return data.draw(st.one_of(S["ints"], S["weird"]))
    if name in DIMISH:
        return data.draw(S["dims"])
    if name in SIZEISH:
        return data.draw(st.one_of(S["size_tuple"], S["ints"]))
    if name in ("tensors", "operands", "inputs"):
        return data.draw(st.lists(S["tensor"](), max_size=4))
    return data.draw(S["weird"])


def resolve(v):
    """Builds the values whose text is code (dtypes, devices, object())."""
    import oneflow as flow

    if isinstance(v, Lit) and v.value is None:
        if v.text == "object()":
            return object()
        return eval(v.text, {"flow": flow})
    if isinstance(v, tuple):
        return tuple(resolve(x) for x in v)
    if isinstance(v, list):
        return [resolve(x) for x in v]
    if isinstance(v, dict):
        return {k: resolve(x) for k, x in v.items()}
    if isinstance(v, slice):
        return slice(resolve(v.start), resolve(v.stop), resolve(v.step))
    return unwrap(v)


def draw_call(data, S, entry):
    """Returns (text, thunk) for one call of the entry."""
    from hypothesis import strategies as st

    text, obj, params, kind = entry
    nargs_extra = data.draw(st.sampled_from([0, 0, 0, 0, 1]))
    args, kwargs = [], {}

    def fill_params(ps, first_tensor=False):
        for name, required, kwonly in ps or ():
            take = required or data.draw(st.sampled_from([False, False, True]))
            if required and data.draw(st.integers(0, 19)) == 19:
                take = False  # a missing argument
            if not take:
                continue
            v = draw_param(data, S, name)
            if kwonly or (not required and data.draw(st.booleans())) or kwargs:
                kwargs[name] = v
            else:
                args.append(v)
        if ps is None:  # unknown signature: a tensor first, then a few of anything
            if first_tensor:
                args.append(data.draw(S["tensor"]()))
            for _ in range(data.draw(st.integers(0, 3))):
                args.append(data.draw(st.one_of(S["tensor"](), S["dims"], S["weird"], S["ints"])))
            if data.draw(st.integers(0, 3)) == 3:
                k = data.draw(
                    st.sampled_from(["dim", "keepdim", "dtype", "out", "alpha", "inplace"])
                )
                kwargs[k] = draw_param(data, S, k)
        for _ in range(nargs_extra):
            if data.draw(st.booleans()):
                args.append(data.draw(S["weird"]))
            else:
                kwargs[data.draw(st.sampled_from(["bogus", "dim", "out", "dtype"]))] = data.draw(
                    S["weird"]
                )

    def argtext():
        parts = [fmt(a) for a in args] + [f"{k}={fmt(v)}" for k, v in kwargs.items()]
        return ", ".join(parts)

    bw = False
    if kind == "func" or kind == "module_fn":
        fill_params(params, first_tensor=True)
        call_text = f"{text}({argtext()})"
        fn = obj
    elif kind == "method":
        self_t = data.draw(S["tensor"]())
        fill_params(params)
        call_text = f"{self_t.text}.{text}({argtext()})"
        fn = getattr(self_t.value, text)
    elif kind == "prop":
        self_t = data.draw(S["tensor"]())
        call_text = f"{self_t.text}.{text}"
        val = self_t.value
        return call_text, lambda: getattr(val, text)
    elif kind == "module":
        fill_params(params)
        ctor_args, ctor_kwargs = list(args), dict(kwargs)
        args.clear()
        kwargs.clear()
        inputs = [data.draw(S["tensor"]()) for _ in range(data.draw(st.integers(1, 3)))]
        call_text = call_str("MOD", [Lit(None, text), tuple(ctor_args), ctor_kwargs, tuple(inputs)])
        cls = obj
        return call_text, lambda: MOD(cls, *resolve((ctor_args, ctor_kwargs, inputs)))
    elif kind == "getitem":
        t = data.draw(S["tensor"]())
        idx = data.draw(S["index"])
        call_text = f"{t.text}[{fmt(idx)}]"
        tv = t.value
        return call_text, lambda: tv[resolve(idx)]
    elif kind == "setitem":
        t = data.draw(S["tensor"]())
        idx = data.draw(S["index"])
        val = data.draw(st.one_of(S["tensor"](), S["weird"]))
        call_text = f"SETITEM({t.text}, {fmt(idx)}, {fmt(val)})"
        tv = t.value
        return call_text, lambda: SETITEM(tv, resolve(idx), resolve(val))
    elif kind == "creation":
        name = data.draw(
            st.sampled_from(
                [
                    "zeros",
                    "ones",
                    "empty",
                    "randn",
                    "rand",
                    "full",
                    "arange",
                    "linspace",
                    "eye",
                    "randint",
                    "randperm",
                    "tensor",
                    "ones_like",
                    "new_zeros",
                    "new_full",
                    "expand",
                    "repeat",
                    "view",
                    "reshape",
                    "tile",
                    "broadcast_to",
                ]
            )
        )
        size = data.draw(S["size_tuple"])
        dtype = data.draw(st.one_of(st.none(), S["dtypes"]))
        kw = {} if dtype is None else {"dtype": dtype}
        if name in ("zeros", "ones", "empty", "randn", "rand"):
            args = [size] if data.draw(st.booleans()) else list(size)
        elif name == "full":
            args = [size, data.draw(S["weird"])]
        elif name in ("arange", "linspace"):
            args = [
                data.draw(st.one_of(S["ints"], st.sampled_from(FLOATS)))
                for _ in range(data.draw(st.integers(1, 3)))
            ]
        elif name in ("eye", "randperm"):
            args = [data.draw(S["ints"]) for _ in range(data.draw(st.integers(1, 2)))]
        elif name == "randint":
            args = [data.draw(S["ints"]), data.draw(S["ints"]), size]
        elif name == "tensor":
            args = [
                data.draw(
                    st.one_of(
                        S["weird"],
                        st.lists(
                            st.one_of(
                                S["ints"], st.sampled_from(FLOATS), st.lists(S["ints"], max_size=3)
                            ),
                            max_size=4,
                        ),
                    )
                )
            ]
        else:
            t = data.draw(S["tensor"]())
            a = [size] if data.draw(st.booleans()) else list(size)
            if name in ("new_full",):
                a = [size, data.draw(S["weird"])]
            if name in ("ones_like",):
                a = []
            call_text = (
                call_str(f"{t.text}.{name}", a)
                if name != "ones_like"
                else call_str("flow.ones_like", [t], kw)
            )
            tv = t.value
            if name == "ones_like":
                import oneflow as flow

                return call_text, lambda: flow.ones_like(tv, **resolve(kw))
            return call_text, lambda: getattr(tv, name)(*resolve(a))
        import oneflow as flow

        fn = getattr(flow, name)
        call_text = call_str(f"flow.{name}", args, kw)
        return call_text, lambda: fn(*resolve(args), **resolve(kw))
    elif kind == "view":
        name = data.draw(
            st.sampled_from(
                [
                    "view",
                    "reshape",
                    "expand",
                    "permute",
                    "transpose",
                    "squeeze",
                    "unsqueeze",
                    "flatten",
                    "narrow",
                    "select",
                    "unfold",
                    "as_strided",
                    "diagonal",
                    "split",
                    "chunk",
                    "movedim",
                    "unflatten",
                ]
            )
        )
        t = data.draw(S["tensor"]())
        a = [
            data.draw(st.one_of(S["dims"], S["ints"], S["size_tuple"]))
            for _ in range(data.draw(st.integers(0, 3)))
        ]
        call_text = f"{t.text}.{name}({', '.join(fmt(x) for x in a)})"
        tv = t.value
        return call_text, lambda: getattr(tv, name)(*resolve(a))
    else:
        raise AssertionError(kind)
    if data.draw(st.integers(0, 5)) == 5:
        bw = True
        call_text = f"BW({call_text})"
    if bw:
        return call_text, lambda: BW(fn(*resolve(args), **resolve(kwargs)))
    return call_text, lambda: fn(*resolve(args), **resolve(kwargs))


def reset_state():
    import oneflow as flow

    flow.set_default_dtype(flow.float32)
    flow.set_grad_enabled(True)
    flow.set_num_threads(1)
    # The process-wide switches a call may have flipped (autocast, determinism, anomaly mode,
    # matmul precision): each call starts from the defaults.
    flow.set_autocast_enabled("cpu", False)
    flow.set_autocast_dtype("cpu", flow.bfloat16)
    flow.set_autocast_dtype("cuda", flow.float16)
    flow.set_autocast_enabled("cuda", False)
    flow.set_deterministic_debug_mode(0)
    flow.set_anomaly_enabled(False)
    flow.set_float32_matmul_precision("highest")


def worker(calls, seed, mem_limit_gb):
    """Makes `calls` calls, writing 'C <op>\t<call>' before and 'R <result>' after each."""
    import resource
    import warnings

    if mem_limit_gb > 0:
        lim = int(mem_limit_gb * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
    # The protocol goes to the original stdout; whatever the ops print goes to stderr.
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    warnings.simplefilter("ignore")

    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hseed
    from hypothesis import strategies as st

    import oneflow as flow  # noqa: F401

    table = build_table()
    S = strategies()
    done = [0]

    def one(data):
        if done[0] >= calls:
            return
        # The op is chosen uniformly (hypothesis would favour the first entries of the table);
        # the arguments come from hypothesis, which favours edge cases.
        entry = table[data.draw(st.integers(0, 2**64 - 1)) % len(table)]
        CALL_SHAPE[:] = [data.draw(st.lists(st.sampled_from([0, 1, 2, 3, 4, 5]), max_size=4))]
        text, thunk = draw_call(data, S, entry)
        done[0] += 1
        proto.write(f"C {entry[0]}\t{text}\n")
        try:
            r = thunk()
            # Touch the result the way a user would: its repr and, for tensors, the values.
            if isinstance(r, flow.Tensor):
                repr(r)
            result = "OK"
        except Exception as e:  # any Python exception is a correct answer
            result = type(e).__name__
        finally:
            reset_state()
        proto.write(f"R {result}\n")

    round_ = 0
    while done[0] < calls:
        s = settings(
            database=None,
            deadline=None,
            max_examples=calls - done[0],
            suppress_health_check=list(HealthCheck),
            phases=[Phase.generate],
            derandomize=False,
        )
        before = done[0]
        try:
            hseed(seed * 1000 + round_)(s(given(st.data())(one)))()
        except Exception as e:  # hypothesis' own complaints; carry on with a new seed
            print(f"fuzz_api worker: hypothesis stopped: {type(e).__name__}: {e}", file=sys.stderr)
        round_ += 1
        if done[0] == before and round_ > 3:
            break
    proto.write(f"DONE {done[0]}\n")


# --------------------------------------------------------------------------------------------
# Supervisor side.
# --------------------------------------------------------------------------------------------


def child_env():
    env = dict(os.environ)
    env["OMP_NUM_THREADS"] = "1"
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    paths = [os.path.join(ROOT, "python")]
    if env.get("PYTHONPATH"):
        paths.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env["PYTHONFAULTHANDLER"] = "1"
    return env


def run_child(calls, seed, timeout, mem_limit_gb, on_call):
    """Runs one child. Returns (calls started, failure or None, last call text, stderr tail)."""
    import tempfile

    err = tempfile.TemporaryFile()
    cmd = [
        sys.executable,
        os.path.abspath(__file__),
        "--worker",
        "--calls",
        str(calls),
        "--seed",
        str(seed),
        "--mem-limit-gb",
        str(mem_limit_gb),
    ]
    p = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=err, env=child_env(), start_new_session=True
    )
    started, last, failure, buf = 0, None, None, b""
    in_call = False
    deadline = time.monotonic() + timeout + 60  # start-up (imports, table) gets a minute more
    fd = p.stdout.fileno()
    finished = False
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            failure = "hung"
            os.killpg(p.pid, signal.SIGKILL)
            break
        r, _, _ = select.select([fd], [], [], left)
        if not r:
            continue
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        buf += chunk
        *lines, buf = buf.split(b"\n")
        for line in lines:
            line = line.decode("utf-8", "replace")
            if line.startswith("C "):
                started += 1
                last = line[2:]
                in_call = True
            elif line.startswith("R "):
                in_call = False
                on_call(last, line[2:])
            elif line.startswith("DONE"):
                finished = True
            deadline = time.monotonic() + timeout
    rc = p.wait()
    if failure is None:
        if rc != 0:
            failure = f"signal {signal.Signals(-rc).name}" if rc < 0 else f"exit code {rc}"
        elif not finished:
            failure = "exited early"
    if failure is not None and not in_call and failure != "hung":
        last = (last or "") + "  (after this call returned)"
    err.seek(0)
    tail = err.read().decode("utf-8", "replace")[-3000:]
    err.close()
    return started, failure, last, tail, finished


def supervise(args):
    t0 = time.monotonic()
    remaining = args.calls
    total, crashes, hangs = 0, [], []
    internal = []  # SystemError: an extension returned with a Python error left set
    ops = set()
    results = {}
    child = 0

    def on_call(text, result):
        ops.add(text.split("\t", 1)[0])
        results[result] = results.get(result, 0) + 1
        if result == "SystemError":
            internal.append(text.split("\t", 1)[-1])

    while remaining > 0:
        seed = args.seed * 7919 + child
        started, failure, last, tail, finished = run_child(
            remaining, seed, args.timeout, args.mem_limit_gb, on_call
        )
        child += 1
        total += started
        remaining -= started
        if failure is not None:
            if last:
                ops.add(last.split("\t", 1)[0])
            rec = (
                failure,
                last.split("\t", 1)[-1] if last else "(before the first call)",
                seed,
                started,
                tail,
            )
            (hangs if failure == "hung" else crashes).append(rec)
            if started == 0:
                remaining -= 1  # a child that cannot even start would otherwise loop forever
                total += 1
        elif finished and started == 0:
            break
    dt = time.monotonic() - t0
    print(
        f"fuzz_api: {total} calls, {len(crashes)} crashed, {len(hangs)} hung, "
        f"{len(internal)} SystemError ({len(ops)} distinct ops, {dt:.1f} s)"
    )
    top = sorted(results.items(), key=lambda kv: -kv[1])[:8]
    print("fuzz_api: results " + ", ".join(f"{k} {v}" for k, v in top))
    for failure, last, seed, started, tail in crashes + hangs:
        print(f"\n{failure.upper()} in call {started} of the child seeded {seed}:\n  {last}")
        if tail.strip():
            print("  stderr tail:\n    " + "\n    ".join(tail.strip().splitlines()[-15:]))
    for last in internal:
        print(f"\nSYSTEMERROR (an error left set by native code):\n  {last}")
    return 1 if crashes or hangs or internal else 0


def replay(text, mem_limit_gb):
    import resource

    if mem_limit_gb > 0:
        lim = int(mem_limit_gb * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
    ns = namespace()
    if "\t" in text:
        text = text.split("\t", 1)[1]
    r = eval(text, ns)
    print(repr(r))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds one call may take")
    ap.add_argument(
        "--mem-limit-gb",
        type=float,
        default=4.0,
        help="address-space limit of the child (absurd allocations fail instead of swapping)",
    )
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--replay", metavar="CALL", help="evaluate one printed call in this process")
    args = ap.parse_args()
    if args.replay:
        sys.path.insert(0, os.path.join(ROOT, "python"))
        replay(args.replay, args.mem_limit_gb)
        return 0
    if args.worker:
        worker(args.calls, args.seed, args.mem_limit_gb)
        return 0
    return supervise(args)


if __name__ == "__main__":
    sys.exit(main())
