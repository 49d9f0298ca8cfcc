"""OneFlow's distributed idioms: oneflow.boxing settings, ranks before any communication,
OneFlow's DistributedDataParallel arguments, global_view's sbp functions of (input, tensor),
the older placement form, graph checkpoints that resume the learning-rate schedule, a static
grad scaler with global parameters, and save's global_dst_rank."""

import numpy as np
import pytest
from test_distributed import _run_on_ranks

import oneflow as flow

P1 = flow.placement("cpu", [0])


def test_boxing_settings_are_recorded_and_checked():
    flow.boxing.nccl.set_fusion_threshold_mbytes(16)
    flow.boxing.nccl.set_fusion_max_ops_num(24)
    flow.boxing.nccl.enable_use_compute_stream(True)
    flow.boxing.nccl.allow_fuse_all_reduce(False)
    flow.boxing.enable_fusion(True)
    s = flow.boxing.nccl.settings()
    assert s["set_fusion_threshold_mbytes"] == 16 and s["enable_use_compute_stream"] is True
    assert s["allow_fuse_all_reduce"] is False and s["enable_fusion"] is True
    with pytest.raises(TypeError, match="set_fusion_threshold_mbytes: expected an int"):
        flow.boxing.nccl.set_fusion_threshold_mbytes(1.5)
    with pytest.raises(TypeError, match="enable_all_to_all: expected a bool"):
        flow.boxing.nccl.enable_all_to_all("yes")


def test_ranks_before_any_communication():
    assert flow.distributed.get_rank() == 0 and flow.distributed.get_world_size() == 1
    assert flow.env.is_multi_client() and flow.distributed.is_multi_client()


def test_collectives_refuse_global_tensors_at_the_call():
    g = flow.ones(3).to_global(P1, flow.sbp.broadcast)
    with pytest.raises(TypeError, match="all_reduce: tensor is a global tensor"):
        flow.comm.all_reduce(g)


def test_placement_of_machines_and_devices():
    p = flow.placement("cpu", {0: [0]})
    assert p == P1 and list(p.ranks) == [0]
    assert flow.placement("cpu", {0: range(1)}) == P1


def test_global_view_sbp_functions_take_the_input_and_the_tensor():
    net = flow.nn.Sequential(flow.nn.Linear(4, 3), flow.nn.Linear(3, 2))
    sd = net.state_dict()

    def by_name(state_dict, tensor):  # OneFlow's form
        return flow.sbp.broadcast if tensor is state_dict["1.bias"] else flow.sbp.split(0)

    out = flow.utils.global_view.to_global(sd, placement=P1, sbp=by_name)
    assert out["1.bias"].sbp == (flow.sbp.broadcast,) and out["0.weight"].sbp == (
        flow.sbp.split(0),
    )
    out = flow.utils.global_view.to_global(sd, placement=P1, sbp=lambda t: flow.sbp.broadcast)
    assert all(v.sbp == (flow.sbp.broadcast,) for v in out.values())


def _scheduled_graph():
    flow.manual_seed(0)
    m = flow.nn.Linear(4, 2)
    opt = flow.optim.Adam(m.parameters(), lr=0.1)
    sch = flow.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)

    class Step(flow.nn.Graph):
        def __init__(self):
            super().__init__()
            self.m = m
            self.add_optimizer(opt, lr_sch=sch)

        def build(self, x):
            loss = (self.m(x) ** 2).mean()
            loss.backward()
            return loss

    return Step()


def test_graph_checkpoints_resume_the_learning_rate_schedule(tmp_path):
    rng = np.random.RandomState(0)
    xs = [flow.tensor(rng.randn(3, 4).astype(np.float32)) for _ in range(6)]
    g = _scheduled_graph()
    whole = [float(g(x)) for x in xs]
    g = _scheduled_graph()
    first = [float(g(x)) for x in xs[:3]]
    sd = g.state_dict()
    assert int(sd["System-Train-TrainStep"]) == 3 and "lr_scheduler_0" in sd
    flow.save(sd, tmp_path / "ckpt")
    resumed = _scheduled_graph()
    resumed.load_state_dict(flow.load(tmp_path / "ckpt"))
    rest = [float(resumed(x)) for x in xs[3:]]
    np.testing.assert_allclose(first + rest, whole, rtol=1e-6)
    assert int(resumed.state_dict()["System-Train-TrainStep"]) == 6


BODY = """
import copy
import pickle

import numpy as np
import oneflow as flow
from oneflow.nn.parallel import DistributedDataParallel as DDP

rank, world = flow.env.get_rank(), flow.env.get_world_size()
assert flow.distributed.get_rank() == rank and flow.distributed.get_world_size() == world
P = flow.placement("cpu", ranks=list(range(world)))
B, S0 = flow.sbp.broadcast, flow.sbp.split(0)

# OneFlow's DistributedDataParallel arguments; the module's attributes through the wrapper
flow.manual_seed(rank)  # different weights: broadcast_parameters makes them rank 0's
lin = DDP(flow.nn.Linear(3, 2), use_bucket=False, broadcast_parameters=True)
assert lin.weight.shape == (2, 3) and lin.in_features == 3
w = flow.tensor(lin.weight.detach().numpy())
flow.comm.broadcast(w, 0)
assert np.array_equal(w.numpy(), lin.weight.detach().numpy())
plain = flow.nn.Linear(3, 2)
lin.load_state_dict(plain.state_dict())  # OneFlow's keys: no module. prefix
assert np.array_equal(lin.weight.detach().numpy(), plain.weight.detach().numpy())
class Wrapped(flow.nn.Module):  # a child named "module": keys that start with "module."
    def __init__(self):
        super().__init__()
        self.module = flow.nn.Linear(2, 2)
        self.head = flow.nn.Linear(2, 1)


source = Wrapped()
wrapped = DDP(Wrapped())
wrapped.load_state_dict(source.state_dict())
assert np.array_equal(wrapped.head.weight.detach().numpy(), source.head.weight.detach().numpy())
x = flow.ones(4, 3) * (rank + 1)
lin(x).sum().backward()
assert np.allclose(lin.weight.grad.numpy(), 4 * (world + 1) / 2)
# copies (deepcopy, pickle) average their own gradients too
for copy_of in (copy.deepcopy, lambda m: pickle.loads(pickle.dumps(m))):
    twin = copy_of(lin)
    twin(x).sum().backward()
    assert np.allclose(twin.weight.grad.numpy(), 4 * (world + 1) / 2), twin.weight.grad

# a static grad scaler with a global model in a graph
def make():
    flow.manual_seed(0)
    m = flow.nn.Sequential(flow.nn.Linear(4, 8), flow.nn.ReLU(), flow.nn.Linear(8, 3))
    m.to_global(P, B)
    return m, flow.optim.SGD(m.parameters(), lr=0.1)

m, opt = make()
ref, ref_opt = make()

class Step(flow.nn.Graph):
    def __init__(self):
        super().__init__()
        self.m = m
        self.add_optimizer(opt)
        self.set_grad_scaler(flow.amp.StaticGradScaler(1024.0))

    def build(self, x, y):
        loss = flow.nn.functional.cross_entropy(self.m(x), y)
        loss.backward()
        return loss

step = Step()
rng = np.random.RandomState(0)
for _ in range(3):
    x = flow.tensor(rng.randn(6, 4).astype(np.float32)).to_global(P, B).to_global(sbp=S0)
    y = flow.tensor(rng.randint(0, 3, 6)).to_global(P, B).to_global(sbp=S0)
    loss = step(x, y)
    eager = flow.nn.functional.cross_entropy(ref(x), y)
    eager.backward()
    ref_opt.step()
    ref_opt.zero_grad()
    np.testing.assert_allclose(loss.numpy(), eager.numpy(), rtol=1e-5)

# saving global tensors names the rank that writes the file
try:
    flow.save(m.state_dict(), "no_rank.of")
    raise AssertionError("every rank saved the file")
except ValueError as e:
    assert "global_dst_rank" in str(e), e
flow.save(m.state_dict(), "ckpt.of", global_dst_rank=0)

# a checkpoint the reading rank cannot open fails on every rank at once
try:
    flow.load("missing.of", global_src_rank=0)
    raise AssertionError("loaded a missing file")
except (FileNotFoundError, RuntimeError) as e:
    expected = FileNotFoundError if rank == 0 else RuntimeError
    assert type(e) is expected and ("missing.of" in str(e)), e
print(f"rank {rank} ok", flush=True)
"""


def test_oneflow_distributed_idioms_on_ranks(tmp_path):
    _run_on_ranks(tmp_path, BODY, 2)
