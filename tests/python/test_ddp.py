"""DistributedDataParallel over two processes started by the launcher: gradients averaged over
the ranks equal the full batch's, replicas stay identical, no_sync accumulates locally, unused
parameters are reported or reduced as zeros."""

import json
import os
import socket
import subprocess
import sys
import textwrap

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _launch(tmp_path, body, nproc=2):
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(body))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([os.path.join(ROOT, "python"), env.get("PYTHONPATH", "")])
    env["ONEFLOW_COMM_TIMEOUT"] = "30"
    cmd = [
        sys.executable,
        "-m",
        "oneflow.distributed.launch",
        "--nproc_per_node",
        str(nproc),
        "--master_port",
        str(_free_port()),
        str(script),
        str(tmp_path),
    ]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in range(nproc)]


_PRELUDE = """
import json, sys
import numpy as np
import oneflow as flow
from oneflow.nn.parallel import DistributedDataParallel as DDP

out_dir = sys.argv[1]
rank, world = flow.env.get_rank(), flow.env.get_world_size()

def make_model(seed):
    flow.manual_seed(seed)
    return flow.nn.Sequential(
        flow.nn.Linear(8, 16), flow.nn.Tanh(), flow.nn.Linear(16, 16), flow.nn.ReLU(),
        flow.nn.Linear(16, 4))

def params(m):
    return {n: p.detach().numpy().tolist() for n, p in m.named_parameters()}

rng = np.random.RandomState(0)
X = rng.randn(16, 8).astype(np.float32)
Y = rng.randn(16, 4).astype(np.float32)
"""


def _close(a, b, tol=2e-6):
    for k in a:
        np.testing.assert_allclose(np.array(a[k]), np.array(b[k]), rtol=tol, atol=tol, err_msg=k)


@pytest.mark.parametrize("bucket_cap_mb", [25, 0.0005])
def test_ddp_training_matches_full_batch_training(tmp_path, bucket_cap_mb):
    results = _launch(
        tmp_path,
        _PRELUDE
        + f"""
model = DDP(make_model(seed=rank), bucket_cap_mb={bucket_cap_mb})  # rank 0's weights win
ref = make_model(seed=0)
start = params(model.module)
opt = flow.optim.SGD(model.parameters(), lr=0.1)
ref_opt = flow.optim.SGD(ref.parameters(), lr=0.1)
shard = slice(rank * 8, rank * 8 + 8)
for step in range(3):
    opt.zero_grad()
    loss = ((model(flow.tensor(X[shard])) - flow.tensor(Y[shard])) ** 2).mean()
    loss.backward()
    opt.step()
    ref_opt.zero_grad()
    ((ref(flow.tensor(X)) - flow.tensor(Y)) ** 2).mean().backward()
    ref_opt.step()
json.dump({{"start": start, "ddp": params(model.module), "ref": params(ref),
           "buckets": len(model._buckets)}}, open(f"{{out_dir}}/rank{{rank}}.json", "w"))
""",
    )
    r0, r1 = results
    _close(r0["start"], r1["start"], 0)  # the initial broadcast
    _close(r0["ddp"], r1["ddp"], 0)  # replicas stay identical
    _close(r0["ddp"], r0["ref"])  # and equal full-batch training
    if bucket_cap_mb < 1:
        assert r0["buckets"] > 2


def test_ddp_no_sync_accumulates_locally_then_reduces_the_sum(tmp_path):
    r0, r1 = _launch(
        tmp_path,
        _PRELUDE
        + """
model = DDP(make_model(seed=1))
ref = make_model(seed=1)
def quarter_loss(m, i):
    rows = slice(i * 4, i * 4 + 4)
    return ((m(flow.tensor(X[rows])) - flow.tensor(Y[rows])) ** 2).sum()

with model.no_sync():
    quarter_loss(model, 2 * rank).backward()
local = {n: p.grad.numpy().tolist() for n, p in model.module.named_parameters()}
quarter_loss(model, 2 * rank + 1).backward()
((ref(flow.tensor(X)) - flow.tensor(Y)) ** 2).sum().backward()
grads = {n: p.grad.numpy().tolist() for n, p in model.module.named_parameters()}
# Averaged over the ranks: the full batch's sum over two ranks is twice the average.
refg = {n: (p.grad / world).numpy().tolist() for n, p in ref.named_parameters()}
json.dump({"local": local, "grads": grads, "ref": refg}, open(f"{out_dir}/rank{rank}.json", "w"))
""",
    )
    _close(r0["grads"], r1["grads"], 0)
    _close(r0["grads"], r0["ref"], 1e-5)
    assert not np.allclose(r0["local"]["0.weight"], r1["local"]["0.weight"])


def test_ddp_unused_parameters(tmp_path):
    r0, r1 = _launch(
        tmp_path,
        _PRELUDE
        + """
class Two(flow.nn.Module):
    def __init__(self):
        super().__init__()
        self.used = flow.nn.Linear(8, 4)
        self.unused = flow.nn.Linear(8, 4)
    def forward(self, x):
        return self.used(x)

flow.manual_seed(0)
strict = DDP(Two())
err = None
try:
    strict(flow.tensor(X)).sum().backward()
except RuntimeError as e:
    err = str(e)
loose = DDP(Two(), find_unused_parameters=True)
loose(flow.tensor(X[rank * 8 : rank * 8 + 8])).sum().backward()
g = loose.module.used.weight.grad.numpy().tolist()
json.dump({"err": err, "g": g, "unused": loose.module.unused.weight.grad is None},
          open(f"{out_dir}/rank{rank}.json", "w"))
""",
    )
    assert "unused.weight" in r0["err"] and "find_unused_parameters" in r0["err"]
    np.testing.assert_allclose(r0["g"], r1["g"])
    assert r0["unused"]


def test_sync_batch_norm_matches_batch_norm_over_the_whole_batch(tmp_path):
    r0, r1 = _launch(
        tmp_path,
        _PRELUDE
        + """
flow.manual_seed(0)
bn = flow.nn.BatchNorm2d(3)
with flow.no_grad():
    bn.weight.copy_(flow.tensor([1.5, -0.5, 2.0]))
    bn.bias.copy_(flow.tensor([0.1, 0.2, -0.3]))
net = flow.nn.Sequential(flow.nn.Identity(), bn)
sync = flow.nn.SyncBatchNorm.convert_sync_batchnorm(net)
ref = flow.nn.BatchNorm2d(3)
ref.load_state_dict(bn.state_dict())
full = rng.randn(6, 3, 4, 5).astype(np.float32) * 3 + 1
G = rng.randn(6, 3, 4, 5).astype(np.float32)
rows = slice(rank * 3, rank * 3 + 3)
x = flow.tensor(full[rows], requires_grad=True)
out = sync(x)
(out * flow.tensor(G[rows])).sum().backward()
xr = flow.tensor(full, requires_grad=True)
ref_out = ref(xr)
(ref_out * flow.tensor(G)).sum().backward()
sb = sync[1]
json.dump({
    "kind": type(sb).__name__,
    "out": out.detach().numpy().tolist(), "ref_out": ref_out[rows].detach().numpy().tolist(),
    "x_grad": x.grad.numpy().tolist(), "ref_x_grad": xr.grad[rows].numpy().tolist(),
    "w_grad": sb.weight.grad.numpy().tolist(), "ref_w_grad": ref.weight.grad.numpy().tolist(),
    "mean": sb.running_mean.numpy().tolist(), "ref_mean": ref.running_mean.numpy().tolist(),
    "var": sb.running_var.numpy().tolist(), "ref_var": ref.running_var.numpy().tolist(),
}, open(f"{out_dir}/rank{rank}.json", "w"))
""",
    )
    assert r0["kind"] == "SyncBatchNorm"
    for r in (r0, r1):
        np.testing.assert_allclose(r["out"], r["ref_out"], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(r["x_grad"], r["ref_x_grad"], rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(r["mean"], r["ref_mean"], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(r["var"], r["ref_var"], rtol=1e-5, atol=1e-6)
    # The weight's gradient is local: the ranks' sum is the whole batch's.
    np.testing.assert_allclose(
        np.add(r0["w_grad"], r1["w_grad"]), r0["ref_w_grad"], rtol=1e-4, atol=1e-5
    )


def test_sync_batch_norm_in_a_graph_matches_eager(tmp_path):
    # its all-reduces are recorded in the program; momentum=None reads the count on the device
    r0, r1 = _launch(
        tmp_path,
        _PRELUDE
        + """
res = {}
for mom in (0.1, None):
    def make():
        flow.manual_seed(0)
        return flow.nn.Sequential(
            flow.nn.Conv2d(3, 4, 3), flow.nn.SyncBatchNorm(4, momentum=mom), flow.nn.ReLU(),
            flow.nn.Flatten(), flow.nn.Linear(64, 2))
    m, ref = make(), make()
    opt, ref_opt = flow.optim.SGD(m.parameters(), lr=0.1), flow.optim.SGD(ref.parameters(), lr=0.1)
    class Step(flow.nn.Graph):
        def __init__(self):
            super().__init__()
            self.m = m
            self.add_optimizer(opt)
        def build(self, x, y):
            loss = flow.nn.functional.cross_entropy(self.m(x), y)
            loss.backward()
            return loss
    step = Step()
    rng = np.random.RandomState(rank)
    losses = []
    for _ in range(3):
        x = flow.tensor(rng.randn(5, 3, 6, 6).astype(np.float32))
        y = flow.tensor(rng.randint(0, 2, 5))
        loss = flow.nn.functional.cross_entropy(ref(x), y)
        loss.backward()
        ref_opt.step()
        ref_opt.zero_grad()
        losses.append([float(step(x, y).numpy()), float(loss.numpy())])
    res[str(mom)] = {"losses": losses, "plans": len(step._plans),
                     "mean": [m[1].running_mean.numpy().tolist(),
                              ref[1].running_mean.numpy().tolist()]}
json.dump(res, open(f"{out_dir}/rank{rank}.json", "w"))
""",
    )
    for r in (r0, r1):
        for mom in ("0.1", "None"):
            got = np.array(r[mom]["losses"])
            np.testing.assert_allclose(got[:, 0], got[:, 1], rtol=1e-5)
            np.testing.assert_allclose(*r[mom]["mean"], rtol=1e-5, atol=1e-6)
            assert r[mom]["plans"] == 1


def test_ddp_module_in_a_graph_matches_eager_ddp(tmp_path):
    # the gradients' all-reduce issued in backward is recorded in the program and reissued
    r0, r1 = _launch(
        tmp_path,
        _PRELUDE
        + """
m, ref = DDP(make_model(0)), DDP(make_model(0))
opt, ref_opt = flow.optim.Adam(m.parameters(), lr=0.01), flow.optim.Adam(ref.parameters(), lr=0.01)
class Step(flow.nn.Graph):
    def __init__(self):
        super().__init__()
        self.m = m
        self.add_optimizer(opt)
    def build(self, x, y):
        loss = ((self.m(x) - y) ** 2).mean()
        loss.backward()
        return loss
step = Step()
rng = np.random.RandomState(rank)
losses = []
for _ in range(3):
    x = flow.tensor(rng.randn(6, 8).astype(np.float32))
    y = flow.tensor(rng.randn(6, 4).astype(np.float32))
    loss = ((ref(x) - y) ** 2).mean()
    loss.backward()
    ref_opt.step()
    ref_opt.zero_grad()
    losses.append([float(step(x, y).numpy()), float(loss.numpy())])
json.dump({"losses": losses, "plans": len(step._plans),
           "w": [m.module[0].weight.numpy().tolist(), ref.module[0].weight.numpy().tolist()]},
          open(f"{out_dir}/rank{rank}.json", "w"))
""",
    )
    for r in (r0, r1):
        got = np.array(r["losses"])
        np.testing.assert_allclose(got[:, 0], got[:, 1], rtol=1e-5)
        np.testing.assert_allclose(*r["w"], rtol=1e-5, atol=1e-6)
        assert r["plans"] == 1
    np.testing.assert_allclose(r0["w"][0], r1["w"][0], rtol=1e-6)  # the replicas agree


def test_object_collectives_and_batched_point_to_point(tmp_path):
    results = _launch(
        tmp_path,
        """
import json, sys
import oneflow as flow
import oneflow.distributed as dist

out_dir = sys.argv[1]
dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
mine = {"rank": rank, "payload": "x" * (10 * rank), "nested": [rank, (rank, None)]}
gathered = [None] * world
dist.all_gather_object(gathered, mine)
at_one = [None] * world if rank == 1 else None
dist.gather_object(mine, at_one, dst=1)
objs = [f"from {rank}", rank * 7, {"k": [rank]}] if rank == 2 else [None, None, None]
dist.broadcast_object_list(objs, src=2)
got = [None]
dist.scatter_object_list(got, [f"for {r}" for r in range(world)] if rank == 0 else None, src=0)
nxt, prv = (rank + 1) % world, (rank - 1) % world
if rank % 2 == 0:
    dist.send_object_list([rank, "ring"], nxt)
    ring = [None, None]
    dist.recv_object_list(ring, prv)
else:
    ring = [None, None]
    dist.recv_object_list(ring, prv)
    dist.send_object_list([rank, "ring"], nxt)
send, recv = flow.full((3,), float(rank)), flow.zeros(3)
works = dist.batch_isend_irecv(
    [dist.P2POp(dist.irecv, recv, prv), dist.P2POp(dist.isend, send, nxt)]
)
for w in works:
    w.wait()
dist.monitored_barrier()
json.dump({
    "gathered": gathered, "at_one": at_one, "objs": objs, "got": got, "ring": ring,
    "recv": recv.tolist(), "ranks": dist.get_process_group_ranks(dist.group.WORLD),
    "global": dist.get_global_rank(None, rank), "local": dist.get_node_local_rank(),
}, open(f"{out_dir}/rank{rank}.json", "w"))
dist.destroy_process_group()
""",
        nproc=3,
    )
    world = 3
    expect = [
        {"rank": r, "payload": "x" * (10 * r), "nested": [r, [r, None]]} for r in range(world)
    ]
    for rank, res in enumerate(results):
        assert res["gathered"] == expect
        assert res["at_one"] == (expect if rank == 1 else None)
        assert res["objs"] == ["from 2", 14, {"k": [2]}]
        assert res["got"] == [f"for {rank}"]
        assert res["ring"] == [(rank - 1) % world, "ring"]
        assert res["recv"] == [float((rank - 1) % world)] * 3
        assert res["ranks"] == [0, 1, 2] and res["global"] == rank and res["local"] == rank


def test_a_send_reaches_its_peer_when_the_sender_exits_at_once(tmp_path):
    # A send returns once its bytes are posted (sends never block the communication stream,
    # so ranks that all send before they receive do not deadlock); at exit the sender waits
    # until its peer has them.
    results = _launch(
        tmp_path,
        """
import json, sys, time
import oneflow as flow
import oneflow.distributed as dist

out_dir = sys.argv[1]
rank = flow.env.get_rank()
flow.comm.barrier()
if rank == 0:
    x = flow.arange(1000, dtype=flow.float32)
    dist.send(x, 1)
    x.fill_(-1.0)  # the send has its own copy
    got = None
else:
    time.sleep(1.0)
    y = flow.zeros(1000)
    dist.recv(y, 0)
    got = y.sum().item()
json.dump({"got": got}, open(f"{out_dir}/rank{rank}.json", "w"))
""",
    )
    assert results[1]["got"] == sum(range(1000))
