"""Saved nn.Graph plans: runtime_state_dict() writes each compiled program in the protobuf IR
(core/graph/graph.proto) and load_runtime_state_dict() runs it again without tracing build(),
in the same process and in a fresh one; outputs equal the traced graph's and eager execution's,
parameters stay bound by name (in-place updates reach the loaded program), constants travel by
value, random steps draw what the traced graph draws; errors for what does not fit."""

import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import oneflow as flow
import oneflow._oneflow_internal as _internal

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


# The schema's message class in a child process (protoc's descriptor set, the protobuf package).
_PROTO_PRELUDE = f"""
import subprocess
import numpy as np
import oneflow as flow
import oneflow._oneflow_internal as _internal
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

_fds = subprocess.run(
    ["protoc", "-I", r"{_ROOT}", "--descriptor_set_out=/dev/stdout",
     r"{os.path.join(_ROOT, "oneflow", "core", "graph", "graph.proto")}"],
    capture_output=True, check=True,
).stdout
_pool = descriptor_pool.DescriptorPool()
for _f in descriptor_pb2.FileDescriptorSet.FromString(_fds).file:
    _pool.Add(_f)
Graph = message_factory.GetMessageClass(_pool.FindMessageTypeByName("oneflow.graph.proto.Graph"))
"""


def _run_with_schema(body):
    """Runs `body` after _PROTO_PRELUDE in a child process (a crash shows as its return code)."""
    pytest.importorskip("google.protobuf")  # both come with the test set-up (not on GPU hosts)
    if shutil.which("protoc") is None:
        pytest.skip("protoc is not installed")
    env = dict(os.environ, PYTHONPATH=os.path.join(_ROOT, "python"))
    r = subprocess.run(
        [sys.executable, "-c", _PROTO_PRELUDE + textwrap.dedent(body)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout


def _model(seed=0, hidden=8):
    flow.manual_seed(seed)
    return flow.nn.Sequential(
        flow.nn.Linear(6, hidden),
        flow.nn.BatchNorm1d(hidden),
        flow.nn.GELU(),
        flow.nn.Dropout(0.3),
        flow.nn.Linear(hidden, 3),
    )


class Infer(flow.nn.Graph):
    traces = 0

    def __init__(self, model):
        super().__init__()
        self.model = model

    def build(self, x, scale=1.0, extra=None):
        Infer.traces += 1
        y = flow.softmax(self.model(x) * scale, dim=-1)
        out = {"probs": y, "top": y.argmax(dim=-1)}
        if extra is not None:
            out["extra"] = (extra + 1, "tag")
        return out


def _x(rows=5, seed=1):
    return flow.tensor(np.random.RandomState(seed).randn(rows, 6).astype(np.float32))


def _assert_same(a, b):
    assert a.keys() == b.keys()
    for k in a:
        if isinstance(a[k], tuple):
            np.testing.assert_array_equal(a[k][0].numpy(), b[k][0].numpy())
            assert a[k][1] == b[k][1]
        else:
            np.testing.assert_array_equal(a[k].numpy(), b[k].numpy())


def test_saved_plans_run_without_tracing_and_match_the_traced_graph(tmp_path):
    model = _model().eval()
    g = Infer(model)
    x, e = _x(), flow.ones(2)
    eager = {"probs": flow.softmax(model(x) * 2.0, dim=-1)}
    first = g(x, scale=2.0, extra=e)
    g(_x(rows=3))  # a second plan: another signature and arguments
    state = g.runtime_state_dict()
    assert len(state["plans"]) == 2
    path = tmp_path / "graph.of"
    flow.save(state, path)

    g2 = Infer(model)
    g2.load_runtime_state_dict(flow.load(path))
    before = Infer.traces
    again = g2(x, scale=2.0, extra=e)
    g2(_x(rows=3))
    assert Infer.traces == before  # both plans ran the saved programs
    _assert_same(first, again)
    np.testing.assert_allclose(again["probs"].numpy(), eager["probs"].numpy(), rtol=1e-6)
    # parameters are bound by name, by reference: in-place updates reach the loaded program
    with flow.no_grad():
        model[0].weight.mul_(0.5)
    np.testing.assert_allclose(
        g2(x, scale=2.0, extra=e)["probs"].numpy(),
        flow.softmax(model(x) * 2.0, dim=-1).numpy(),
        rtol=1e-6,
    )
    # another argument value is another signature: traced as usual
    g2(x, scale=3.0, extra=e)
    assert Infer.traces == before + 1


def test_saved_program_is_protobuf_text_naming_primitives_and_variables():
    model = _model().eval()
    g = Infer(model)
    g(_x())
    program = g.runtime_state_dict()["plans"][0]["program"]
    assert isinstance(program, bytes)
    text = _internal._graph_proto_text(program)
    assert 'primitive: "matmul"' in text and 'primitive: "softmax"' in text
    assert 'variable: "model.0.weight"' in text and 'variable: "model.1.running_mean"' in text
    assert "version: 1" in text


def test_loading_in_a_fresh_process_runs_the_saved_program(tmp_path):
    model = _model().eval()
    g = Infer(model)
    x = _x()
    expect = g(x)["probs"].numpy()
    flow.save(g.runtime_state_dict(with_eager=True), tmp_path / "graph.of")
    np.save(tmp_path / "x.npy", x.numpy())
    np.save(tmp_path / "expect.npy", expect)
    script = textwrap.dedent(
        f"""
        import numpy as np
        import oneflow as flow

        class Infer(flow.nn.Graph):
            def __init__(self, model):
                super().__init__()
                self.model = model

            def build(self, x, scale=1.0, extra=None):
                raise AssertionError("build() traced: the saved plan was not used")

        flow.manual_seed(123)  # other weights: the saved states replace them
        model = flow.nn.Sequential(
            flow.nn.Linear(6, 8), flow.nn.BatchNorm1d(8), flow.nn.GELU(), flow.nn.Dropout(0.3),
            flow.nn.Linear(8, 3),
        ).eval()
        g = Infer(model)
        g.load_runtime_state_dict(flow.load(r"{tmp_path / "graph.of"}"), warmup_with_run=True)
        out = g(flow.tensor(np.load(r"{tmp_path / "x.npy"}")))
        np.testing.assert_array_equal(out["probs"].numpy(), np.load(r"{tmp_path / "expect.npy"}"))
        print("ok")
        """
    )
    env = dict(os.environ, PYTHONPATH=os.path.join(_ROOT, "python"))
    r = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-3000:]


class Noisy(flow.nn.Graph):
    def __init__(self, model, constant):
        super().__init__()
        self.model = model
        self.constant = constant

    def build(self, x):
        # dropout in training mode draws from the default generator; `constant` is a tensor of
        # no module (captured, saved by value)
        return flow.nn.functional.dropout(self.model(x), p=0.5, training=True) + self.constant


def test_random_steps_draw_as_the_traced_graph_and_constants_travel_by_value():
    model = _model().eval()
    constant = flow.tensor([1.0, 2.0, 3.0])
    g = Noisy(model, constant)
    x = _x()
    g(x)
    flow.manual_seed(7)
    a = g(x).numpy()
    state = g.runtime_state_dict()
    constant.fill_(100.0)  # the saved program keeps the value it had
    g2 = Noisy(model, flow.zeros(3))
    g2.load_runtime_state_dict(state)
    flow.manual_seed(7)
    b = g2(x).numpy()
    np.testing.assert_array_equal(a, b)
    dropped = b == np.array([1.0, 2.0, 3.0], dtype=np.float32)  # the saved constant's value
    assert dropped.any() and not dropped.all()


def test_refusals_and_errors():
    model = _model().eval()
    g = Infer(model)
    g(_x())
    state = g.runtime_state_dict()
    # another architecture: the variable's layout differs
    with pytest.raises(ValueError, match="model.0.weight"):
        Infer(_model(hidden=9).eval()).load_runtime_state_dict(state)
    # a graph without the saved variables
    other = Infer(flow.nn.Sequential(flow.nn.Linear(6, 3)).eval())
    with pytest.raises(KeyError, match="model.1.running_mean"):
        other.load_runtime_state_dict(state)
    # another train/eval mode
    with pytest.raises(ValueError, match="training flags"):
        Infer(_model().train()).load_runtime_state_dict(state)
    with pytest.raises(ValueError, match="runtime_state_dict"):
        Infer(model).load_runtime_state_dict({"plans": []})
    bad = dict(state, plans=[dict(state["plans"][0], program=b"\x00garbage")])
    with pytest.raises(ValueError, match="saved graph"):
        Infer(model).load_runtime_state_dict(bad)

    class Train(flow.nn.Graph):
        def __init__(self):
            super().__init__()
            self.model = model
            self.add_optimizer(flow.optim.SGD(model.parameters(), lr=0.1))

        def build(self, x):
            loss = self.model(x).sum()
            loss.backward()
            return loss

    t = Train()
    with pytest.raises(NotImplementedError, match="optimizers"):
        t.runtime_state_dict()

    class Gen(flow.nn.Graph):
        def __init__(self):
            super().__init__()
            self.gen = flow.Generator()

        def build(self, x):
            return x + flow.rand(x.shape, generator=self.gen)

    gg = Gen()
    gg(_x())
    with pytest.raises(NotImplementedError, match="generator"):
        gg.runtime_state_dict()

    class Odd(flow.nn.Graph):
        def build(self, x, opt):
            return x * 2

    o = Odd()
    o(_x(), object())
    with pytest.raises(NotImplementedError, match="arguments and results"):
        o.runtime_state_dict()


class _Block(flow.nn.Module):
    """Convolutions, pooling, norms, embedding, attention, a loss: many primitives in one
    program, so the loader's table of primitives is exercised widely."""

    def __init__(self):
        super().__init__()
        self.conv = flow.nn.Conv2d(3, 4, 3, padding=1)
        self.bn = flow.nn.BatchNorm2d(4)
        self.emb = flow.nn.Embedding(10, 8)
        self.ln = flow.nn.LayerNorm(8)
        self.gn = flow.nn.GroupNorm(2, 4)
        self.attn = flow.nn.MultiheadAttention(8, 2, batch_first=True)
        self.head = flow.nn.Linear(8, 5)

    def forward(self, img, tokens, target):
        f = flow.nn.functional.max_pool2d(flow.relu(self.bn(self.conv(img))), 2)
        f = flow.nn.functional.adaptive_avg_pool2d(self.gn(f), 1).flatten(1)
        h = self.ln(self.emb(tokens))
        h, _ = self.attn(h, h, h)
        logits = self.head(flow.nn.functional.silu(h.mean(dim=1))) + f.sum(dim=1, keepdim=True)
        loss = flow.nn.functional.cross_entropy(logits, target, label_smoothing=0.1)
        interp = flow.nn.functional.interpolate(img, scale_factor=2, mode="bilinear")
        return logits.log_softmax(-1), loss, interp.amax(dim=(2, 3)).cumsum(-1)


class Wide(flow.nn.Graph):
    def __init__(self, block):
        super().__init__()
        self.block = block

    def build(self, img, tokens, target):
        return self.block(img, tokens, target)


def test_a_program_of_many_primitives_round_trips():
    flow.manual_seed(3)
    block = _Block().eval()
    rs = np.random.RandomState(0)
    img = flow.tensor(rs.randn(2, 3, 8, 8).astype(np.float32))
    tokens = flow.tensor(rs.randint(0, 10, (2, 6)))
    target = flow.tensor(rs.randint(0, 5, (2,)))
    g = Wide(block)
    first = g(img, tokens, target)
    g2 = Wide(block)
    g2.load_runtime_state_dict(g.runtime_state_dict())
    again = g2(img, tokens, target)
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    eager = block(img, tokens, target)
    for a, b in zip(eager, again):
        np.testing.assert_allclose(a.detach().numpy(), b.numpy(), rtol=1e-5, atol=1e-6)


class One(flow.nn.Graph):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def build(self, x):
        return self.model(x)


def test_only_plans_that_would_run_again_are_saved():
    model = flow.nn.Sequential(flow.nn.Linear(3, 2), flow.nn.Dropout(0.5))
    g = One(model)
    g(flow.ones(4, 3))  # traced in training mode
    model.eval()
    assert g.runtime_state_dict()["plans"] == []  # that plan is for the training mode
    g(flow.ones(4, 3))
    state = g.runtime_state_dict()
    assert len(state["plans"]) == 1
    g2 = One(model)
    g2.load_runtime_state_dict(state)
    np.testing.assert_allclose(g2(flow.ones(4, 3)).numpy(), model(flow.ones(4, 3)).numpy())
    # a replaced parameter: the old plans capture the old tensor
    model[0].weight = flow.nn.Parameter(flow.zeros(2, 3))
    assert g.runtime_state_dict()["plans"] == []
    # a captured tensor of no module that changed layout: the plan is out of date
    c = flow.ones(4)

    class WithConstant(flow.nn.Graph):
        def build(self, x):
            return x + c

    w = WithConstant()
    w(flow.ones(4))
    c.data = flow.ones(1)
    assert w.runtime_state_dict()["plans"] == []


def test_slices_of_parameters_a_module_keeps_stay_bound_to_the_parameter():
    class Half(flow.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = flow.nn.Parameter(flow.full((4,), 2.0))
            self.w_half = self.w[2:]  # a plain attribute viewing the parameter

        def forward(self, x):
            return x * self.w_half

    m = Half()
    g = One(m)
    g(flow.ones(2))
    g2 = One(m)
    g2.load_runtime_state_dict(g.runtime_state_dict())
    with flow.no_grad():
        m.w.mul_(3)
    np.testing.assert_array_equal(g2(flow.ones(2)).numpy(), [6.0, 6.0])
    np.testing.assert_array_equal(g(flow.ones(2)).numpy(), [6.0, 6.0])


def test_two_slices_of_one_constant_round_trip():
    class Rope(flow.nn.Module):
        def __init__(self):
            super().__init__()
            self.cos, self.sin = flow.randn(2, 4).chunk(2)  # slices of a tensor of no module

        def forward(self, x):
            return x * self.cos + x * self.sin

    m = Rope()
    g = One(m)
    x = flow.randn(3, 4)
    expect = g(x).numpy()
    g2 = One(m)
    g2.load_runtime_state_dict(g.runtime_state_dict())
    np.testing.assert_array_equal(g2(x).numpy(), expect)


def test_hooks_amp_and_unusual_names():
    model = flow.nn.Linear(3, 2)
    g = One(model)
    handle = model.register_forward_hook(lambda m, i, o: o * 100)
    g(flow.ones(1, 3))
    with pytest.raises(NotImplementedError, match="hooks"):
        g.runtime_state_dict()
    handle.remove()
    g(flow.ones(1, 3))
    state = g.runtime_state_dict()
    amp = One(model)
    amp.config.enable_amp(True)
    with pytest.raises(ValueError, match="enable_amp"):
        amp.load_runtime_state_dict(state)

    class Odd(flow.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_parameter('权重"q', flow.nn.Parameter(flow.ones(3)))

        def forward(self, x):
            return x * getattr(self, '权重"q')

    odd = Odd()
    g = One(odd)
    g(flow.ones(3))
    g2 = One(odd)
    g2.load_runtime_state_dict(g.runtime_state_dict())
    np.testing.assert_array_equal(g2(flow.full((3,), 2.0)).numpy(), [2.0, 2.0, 2.0])


@pytest.mark.parametrize(
    "edit",
    [
        "none",
        "release_a_capture",
        "read_before_made",
        "view_out_of_bounds",
        "wrong_output_shape",
        "kernel_without_inputs",
        "output_released",
        "in_place_into_another_shape",
        "kernel_without_outputs",
    ],
)
def test_crafted_programs_raise_instead_of_running(edit):
    """Programs edited through the protobuf schema: each damage raises ValueError at load."""
    out = _run_with_schema(
        f"""
        class One(flow.nn.Graph):
            def __init__(self, m):
                super().__init__()
                self.m = m
            def build(self, x):
                y = self.m(x)
                return y.t().relu() + 1

        m = flow.nn.Linear(3, 4)
        x = flow.ones(2, 3)
        g = One(m)
        g(x)
        p = Graph.FromString(g.runtime_state_dict()["plans"][0]["program"])
        made = [i for i, v in enumerate(p.values) if v.kind == 0]
        kernels = [s for s in p.steps if s.kind == 0 and len(s.outputs) == 1]
        views = [s for s in p.steps if s.kind == 1]
        edit = "{edit}"
        if edit == "release_a_capture":
            cap = [i for i, v in enumerate(p.values) if v.kind == 2][0]
            p.steps[0].release.append(cap)
        elif edit == "read_before_made":
            p.steps[0].inputs.append(made[-1])
        elif edit == "view_out_of_bounds":
            views[0].offset_delta = 10**11
        elif edit == "wrong_output_shape":
            out = p.values[kernels[0].outputs[0]]
            del out.meta.shape[:]
            del out.meta.strides[:]
        elif edit == "kernel_without_inputs":
            add = [s for s in p.steps if s.primitive == "add"][0]
            del add.inputs[:]
        elif edit == "output_released":
            p.steps[-1].release.append(p.outputs[0])
        elif edit == "in_place_into_another_shape":
            add = [s for s in p.steps if s.primitive == "add"][0]
            add.in_place = True
            add.outputs[0] = p.inputs[0]
        elif edit == "kernel_without_outputs":
            del kernels[0].outputs[:]
        variables = [("m.weight", m.weight), ("m.bias", m.bias)]
        try:
            out = _internal._graph_load(p.SerializeToString(), variables).run([x])
            np.testing.assert_allclose(out[0].numpy(), g(x).numpy())
            print("ok")
        except ValueError as e:
            print("ValueError", e)
        """
    )
    expect = "ok" if edit == "none" else "ValueError"
    assert out.startswith(expect), out


def test_broadcast_operands_of_non_elementwise_kernels_are_made_dense_on_load():
    """A loaded program gives kernels other than the elementwise ones dense copies of broadcast
    views (a kernel reading its operand as contiguous stays inside its memory); a traced program
    that feeds such views still computes the same values."""

    class B(flow.nn.Graph):
        def build(self, x, v):
            e = x.expand(3, 4)
            return e.sum(dim=0), flow.dot(v.expand(8), flow.arange(8.0)), e.cumsum(1)

    x, v = flow.randn(1, 4), flow.randn(1)
    g = B()
    expect = [t.numpy() for t in g(x, v)]
    g2 = B()
    g2.load_runtime_state_dict(g.runtime_state_dict())
    for a, b in zip(expect, g2(x, v)):
        np.testing.assert_allclose(b.numpy(), a, rtol=1e-6)

    # a crafted program: dot of a one-element input viewed as 2^20 elements (stride 0)
    out = _run_with_schema(
        """
        class D(flow.nn.Graph):
            def build(self, x):
                return flow.dot(x, x)

        g = D()
        g(flow.ones(4))
        p = Graph.FromString(g.runtime_state_dict()["plans"][0]["program"])
        x = p.inputs[0]
        del p.values[x].meta.shape[:]
        del p.values[x].meta.strides[:]
        p.values[x].meta.shape.append(1)
        p.values[x].meta.strides.append(1)
        wide = len(p.values)
        v = p.values.add()
        v.CopyFrom(p.values[x])
        v.kind = 0
        v.root = x
        v.meta.shape[0] = 1 << 20
        v.meta.strides[0] = 0
        view = p.steps.add()
        view.kind = 1
        view.inputs.append(x)
        view.outputs.append(wide)
        steps = [view] + [s for s in p.steps[:-1]]
        for s in steps[1:]:
            s.inputs[:] = [wide if i == x else i for i in s.inputs]
        del p.steps[:]
        p.steps.extend(steps)
        out = _internal._graph_load(p.SerializeToString(), []).run([flow.full((1,), 3.0)])
        print(out[0].item())
        """
    )
    assert float(out.strip()) == 9.0 * (1 << 20), out


class _Kernels(flow.nn.Module):
    """grid_sample (4-D), pdist, ctc_loss and igamma: primitives of their own files."""

    def forward(self, img, grid, rows, lp, targets):
        sampled = flow.nn.functional.grid_sample(img, grid, align_corners=False)
        dist = flow.nn.functional.pdist(rows)
        lengths = flow.tensor([lp.shape[0]] * lp.shape[1])
        ctc = flow.nn.functional.ctc_loss(lp, targets, lengths, flow.tensor([2] * lp.shape[1]))
        return sampled, dist, ctc, flow.special.gammainc(rows.abs() + 0.5, rows.abs())


class _ManyArgs(flow.nn.Graph):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def build(self, *args):
        return self.model(*args)


def test_every_registered_primitive_can_be_saved():
    rs = np.random.RandomState(1)
    args = (
        flow.tensor(rs.randn(2, 3, 5, 5).astype(np.float32)),
        flow.tensor(rs.uniform(-1, 1, (2, 4, 4, 2)).astype(np.float32)),
        flow.tensor(rs.randn(6, 3).astype(np.float32)),
        flow.tensor(rs.randn(7, 2, 4).astype(np.float32)).log_softmax(2),
        flow.tensor([[1, 2], [3, 3]]),
    )
    block = _Kernels()
    g = _ManyArgs(block)
    first = g(*args)
    g2 = _ManyArgs(block)
    g2.load_runtime_state_dict(g.runtime_state_dict())
    again = g2(*args)
    eager = block(*args)
    for a, b, c in zip(first, again, eager):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
        np.testing.assert_allclose(c.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)
