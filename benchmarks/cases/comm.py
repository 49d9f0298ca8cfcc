"""Collectives between two processes on this machine: oneflow.comm (Gloo, queued on the
communication stream) vs torch.distributed's Gloo backend, a DistributedDataParallel train
step, and the same data-parallel step written with oneflow's global tensors (broadcast model,
split batch) against torch's DDP, and a two-stage pipeline on global placements against torch
send/recv, and 2-D hybrid parallelism on 4 processes against torch process groups by hand.
Each measurement starts fresh processes; rank 0 reports seconds per call."""

import os
import socket
import subprocess
import sys

from benchmarks.registry import Case, register
from benchmarks.timing import rotated

# Each script defines step() and sync(); rank 0 prints the seconds per step of each trial.
_TIMING = r"""
for _ in range(3):
    step()
sync()
out = []
for _ in range(trials):
    t = time.perf_counter()
    for _ in range(iters):
        step()
    sync()
    out.append((time.perf_counter() - t) / iters)
if int(os.environ["RANK"]) == 0:
    print(" ".join(map(str, out)))
if fw != "oneflow":
    dist.destroy_process_group()  # torch aborts at exit otherwise
"""

_ALL_REDUCE = r"""
import os, sys, time
fw, n, iters, trials = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
if fw == "oneflow":
    import oneflow as flow
    x = flow.ones(n)
    def step():
        flow.comm.all_reduce(x)
    def sync():
        flow.cpu.synchronize()
else:
    import torch, torch.distributed as dist
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    x = torch.ones(n)
    def step():
        dist.all_reduce(x)
    def sync():
        pass
"""

# The framework as `lib` (torch joins its Gloo group), `sync()`, seeded.
_FRAMEWORK = r"""
import os, sys, time
fw, n, iters, trials = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
if fw == "oneflow":
    import oneflow as flow
    lib = flow
    def sync():
        flow.cpu.synchronize()
else:
    import torch, torch.distributed as dist
    lib = torch
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    def sync():
        pass
lib.manual_seed(0)
"""

_DDP = (
    _FRAMEWORK
    + r"""
DDP = lib.nn.parallel.DistributedDataParallel
model = DDP(lib.nn.Sequential(lib.nn.Linear(256, n), lib.nn.ReLU(), lib.nn.Linear(n, n),
                              lib.nn.ReLU(), lib.nn.Linear(n, 10)))
opt = lib.optim.SGD(model.parameters(), lr=0.01)
x, y = lib.randn(64, 256), lib.randint(0, 10, (64,))
loss_fn = lib.nn.CrossEntropyLoss()
def step():
    opt.zero_grad()
    loss_fn(model(x), y).backward()
    opt.step()
"""
)


# oneflow: the model made global (broadcast) and the batch split over the ranks; the weight
# gradients come out as partial sums, all-reduced as each is accumulated into its broadcast
# parameter's .grad. torch: DDP as above. `context()` wraps a step: on oneflow, creation ops
# inside it (lib.arange in a model) make broadcast global tensors.
_GLOBAL_PRELUDE = r"""
import contextlib, os, sys, time
fw, n, iters, trials = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
if fw == "oneflow":
    import oneflow as flow
    from oneflow.utils import global_view
    lib = flow
    P = flow.placement("cpu", [0, 1])
    def wrap(m):
        return m.to_global(P, flow.sbp.broadcast)
    def shard(t):
        return t.to_global(P, flow.sbp.split(0))
    def context():
        return global_view.global_mode(True, placement=P, sbp=flow.sbp.broadcast)
    def sync():
        flow.cpu.synchronize()
else:
    import torch, torch.distributed as dist
    lib = torch
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    from torch.nn.parallel import DistributedDataParallel as wrap
    def shard(t):
        return t
    context = contextlib.nullcontext
    def sync():
        pass
lib.manual_seed(0)
"""
_GLOBAL_DP = (
    _GLOBAL_PRELUDE
    + r"""
model = wrap(lib.nn.Sequential(lib.nn.Linear(256, n), lib.nn.ReLU(), lib.nn.Linear(n, n),
                               lib.nn.ReLU(), lib.nn.Linear(n, 10)))
opt = lib.optim.SGD(model.parameters(), lr=0.01)
x, y = shard(lib.randn(64, 256)), shard(lib.randint(0, 10, (64,)))
loss_fn = lib.nn.CrossEntropyLoss()
def step():
    opt.zero_grad()
    loss_fn(model(x), y).backward()
    opt.step()
"""
)

# The same step compiled: oneflow's nn.Graph traces the global step once (the shards' kernels
# and the gradients' all-reduce) and replays it. torch: DDP, eagerly, as above.
_GLOBAL_DP_GRAPH = (
    _GLOBAL_DP
    + r"""
if fw == "oneflow":
    class Step(flow.nn.Graph):
        def __init__(self):
            super().__init__()
            self.model = model
            self.add_optimizer(opt)

        def build(self, x, y):
            loss = loss_fn(self.model(x), y)
            loss.backward()
            return loss

    graph = Step()

    def step():
        graph(x, y)
"""
)


# A small CNN (conv, pool, a norm): the batch split keeps through the per-sample ops, so each
# rank convolves its own samples; batch norm's statistics are composed of per-rank sums
# all-reduced. torch: DDP (batch norm with each rank's statistics, as DDP does).
def _global_dp_cnn(norm):
    return (
        _GLOBAL_PRELUDE
        + f"""
model = wrap(lib.nn.Sequential(
    lib.nn.Conv2d(3, 32, 3, padding=1), lib.nn.ReLU(), lib.nn.MaxPool2d(2),
    lib.nn.Conv2d(32, 64, 3, padding=1), lib.nn.{norm}, lib.nn.ReLU(),
    lib.nn.AdaptiveAvgPool2d(1), lib.nn.Flatten(), lib.nn.Linear(64, 10)))
opt = lib.optim.SGD(model.parameters(), lr=0.01)
x, y = shard(lib.randn(64, 3, 32, 32)), shard(lib.randint(0, 10, (64,)))
loss_fn = lib.nn.CrossEntropyLoss()
def step():
    opt.zero_grad()
    loss_fn(model(x), y).backward()
    opt.step()
"""
    )


# The char GPT of the training benchmarks (4 blocks, d 128, context 64), batch 16 per rank:
# the split batch keeps through the embeddings, attention and the (B * T, V) logits.
_GLOBAL_DP_GPT = (
    _GLOBAL_PRELUDE
    + r"""
from benchmarks.cases.training import gpt
model = wrap(gpt(lib))
opt = lib.optim.AdamW(model.parameters(), lr=1e-3)
x, y = shard(lib.randint(0, 96, (16, 64))), shard(lib.randint(0, 96, (16, 64)))
def step():
    with context():
        opt.zero_grad()
        logits = model(x)
        lib.nn.functional.cross_entropy(logits.reshape(-1, 96), y.reshape(-1)).backward()
        opt.step()
"""
)

# A two-stage pipeline (no micro-batches): stage 0 (Linear-ReLU-Linear) on rank 0, stage 1
# (ReLU-Linear and the loss) on rank 1. oneflow: each stage's module placed on its rank, the
# activation moved with to_global(placement=); every process runs the whole program (the
# other stage's ops only infer metas). torch: the same split written by hand with send/recv of
# the activation and of its gradient.
_PIPELINE = (
    _FRAMEWORK
    + r"""
rank = int(os.environ["RANK"])
micro = int(os.environ.get("PIPELINE_MICRO", "1"))  # micro-batches per step (graph only)
nn = lib.nn
stage0 = nn.Sequential(nn.Linear(256, n), nn.ReLU(), nn.Linear(n, n))
stage1 = nn.Sequential(nn.ReLU(), nn.Linear(n, 10))
if micro > 1:  # stages of about equal work: micro-batches can overlap
    stage1 = nn.Sequential(nn.ReLU(), nn.Linear(n, n), nn.ReLU(), nn.Linear(n, 10))
x, y = lib.randn(64, 256), lib.randint(0, 10, (64,))
loss_fn = nn.CrossEntropyLoss()
if fw == "oneflow":
    B = flow.sbp.broadcast
    P0, P1 = flow.placement("cpu", [0]), flow.placement("cpu", [1])
    stage0.to_global(P0, B)
    stage1.to_global(P1, B)
    x, y = x.to_global(P0, B), y.to_global(P1, B)
    opt = flow.optim.SGD(list(stage0.parameters()) + list(stage1.parameters()), lr=0.01)
    def step():
        opt.zero_grad()
        h = stage0(x).to_global(placement=P1, sbp=B)
        loss_fn(stage1(h), y).backward()
        opt.step()
    if os.environ.get("PIPELINE_GRAPH") == "1":  # the same step traced into an nn.Graph
        class Step(flow.nn.Graph):
            def __init__(self):
                super().__init__()
                self.stage0, self.stage1 = stage0, stage1
                self.add_optimizer(opt)
                if micro > 1:
                    self.config.set_gradient_accumulation_steps(micro)
            def build(self, x, y):
                h = self.stage0(x).to_global(placement=P1, sbp=B)
                loss = loss_fn(self.stage1(h), y)
                loss.backward()
                return loss
        graph = Step()
        def step():
            graph(x, y)
elif micro > 1:
    # the schedule oneflow's graph runs: stage 0 all forwards, then the backwards as the
    # gradients come back; stage 1 each micro-batch's forward and backward in turn
    opt = torch.optim.SGD((stage0 if rank == 0 else stage1).parameters(), lr=0.01)
    m = 64 // micro
    def step():
        opt.zero_grad()
        if rank == 0:
            hs, works = [], []
            for k in range(micro):
                hs.append(stage0(x[k * m : (k + 1) * m]))
                works.append(dist.isend(hs[-1].detach(), 1))
            for h in hs:
                g = torch.empty_like(h)
                dist.recv(g, 1)
                h.backward(g)
            for w in works:
                w.wait()
        else:
            for k in range(micro):
                h = torch.empty(m, n)
                dist.recv(h, 0)
                h.requires_grad_()
                (loss_fn(stage1(h), y[k * m : (k + 1) * m]) / micro).backward()
                dist.send(h.grad, 0)
        opt.step()
else:
    opt = torch.optim.SGD((stage0 if rank == 0 else stage1).parameters(), lr=0.01)
    def step():
        opt.zero_grad()
        if rank == 0:
            h = stage0(x)
            dist.send(h.detach(), 1)
            g = torch.empty_like(h)
            dist.recv(g, 1)
            h.backward(g)
        else:
            h = torch.empty(64, n)
            dist.recv(h, 0)
            h.requires_grad_()
            loss_fn(stage1(h), y).backward()
            dist.send(h.grad, 0)
        opt.step()
"""
)


# 2-D hybrid parallelism on 4 processes as a 2 x 2 array: data parallel over its rows (each
# row's ranks hold one half of the batch), tensor parallel within a row (Linear 256 -> n split
# by columns, Linear n -> 256 by rows, the second's partial products summed). oneflow: global
# tensors on placement [[0, 1], [2, 3]] with (S(0), B) data and (B, S(1)) / (B, S(0))
# weights. torch: the same written by hand with two sets of process groups (an all-reduce of
# the partial products in the row, autograd through it; gradient all-reduces in the column).
_HYBRID = (
    _FRAMEWORK
    + r"""
rank = int(os.environ["RANK"])
i, j = divmod(rank, 2)
w1, w2 = lib.randn(256, n) * 0.02, lib.randn(n, 256) * 0.02
x, t = lib.randn(128, 256), lib.randn(128, 256)
if fw == "oneflow":
    S0, S1, B = flow.sbp.split(0), flow.sbp.split(1), flow.sbp.broadcast
    P2 = flow.placement("cpu", [[0, 1], [2, 3]])
    w1 = flow.nn.Parameter(w1.to_global(P2, (B, B)).to_global(P2, (B, S1)))
    w2 = flow.nn.Parameter(w2.to_global(P2, (B, B)).to_global(P2, (B, S0)))
    x = x.to_global(P2, (B, B)).to_global(P2, (S0, B))
    t = t.to_global(P2, (B, B)).to_global(P2, (S0, B))
    opt = flow.optim.SGD([w1, w2], lr=0.01)
    def step():
        opt.zero_grad()
        y = (x @ w1).relu() @ w2
        ((y - t) ** 2).mean().backward()
        opt.step()
else:
    rows = [dist.new_group([0, 1]), dist.new_group([2, 3])]
    cols = [dist.new_group([0, 2]), dist.new_group([1, 3])]
    row, col = rows[i], cols[j]
    h = n // 2
    w1 = torch.nn.Parameter(w1[:, j * h:(j + 1) * h].contiguous())
    w2 = torch.nn.Parameter(w2[j * h:(j + 1) * h].contiguous())
    x, t = x[i * 64:(i + 1) * 64].contiguous(), t[i * 64:(i + 1) * 64].contiguous()
    class SumRow(torch.autograd.Function):
        @staticmethod
        def forward(ctx, p):
            p = p.clone()
            dist.all_reduce(p, group=row)
            return p
        @staticmethod
        def backward(ctx, g):
            return g
    opt = torch.optim.SGD([w1, w2], lr=0.01)
    def step():
        opt.zero_grad()
        y = SumRow.apply((x @ w1).relu() @ w2)
        ((y - t) ** 2).mean().backward()
        for w in (w1, w2):
            dist.all_reduce(w.grad, group=col)
            w.grad /= 2
        opt.step()
"""
)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _pair(script, fw, n, iters, trials, attempts=2, world=2):
    """Per-call seconds of rank 0 in a fresh pair (or `world`) of processes (one OpenMP thread
    each). A run that fails is run again once (torch's Gloo backend sometimes aborts while
    tearing down)."""
    for attempt in range(attempts):
        try:
            return _pair_once(script, fw, n, iters, trials, world)
        except RuntimeError:
            if attempt == attempts - 1:
                raise


def _pair_once(script, fw, n, iters, trials, world=2):
    port = str(_free_port())
    procs = []
    for rank in range(world):
        env = dict(os.environ)
        env.update(
            RANK=str(rank),
            WORLD_SIZE=str(world),
            LOCAL_RANK=str(rank),
            MASTER_ADDR="127.0.0.1",
            MASTER_PORT=port,
            OMP_NUM_THREADS="1",
        )
        procs.append(
            subprocess.Popen(
                [sys.executable, "-c", script + _TIMING, fw, str(n), str(iters), str(trials)],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    outs = [p.communicate(timeout=600) for p in procs]
    for p, (_, err) in zip(procs, outs):
        if p.returncode != 0:
            raise RuntimeError(f"{fw} rank exited with {p.returncode}: {err[-500:]}")
    return [float(v) for v in outs[0][0].split()]


def _measure(script, n, iters, world=2):
    def measure(case, frameworks, cfg):
        names = [name for name in frameworks if name in case.frameworks]
        samples, statuses = {name: [] for name in names}, {}
        trials = max(3, cfg.trials // 2)
        for run in range(2):
            for name in rotated(names, run):
                try:
                    samples[name] += _pair(script, name, n, iters, trials, world=world)
                except (subprocess.SubprocessError, RuntimeError, ValueError) as exc:
                    statuses[name] = {"status": "error", "note": f"{type(exc).__name__}: {exc}"}
        for name in statuses:
            samples.pop(name, None)
        return samples, statuses, {name: 1 for name in samples}

    return measure


for _n, _iters in ((1024, 200), (1 << 20, 20), (1 << 24, 3)):
    register(
        Case(
            f"all_reduce {_n} float32, 2 processes",
            "comm",
            "ms",
            measure=_measure(_ALL_REDUCE, _n, _iters),
            frameworks=("oneflow", "torch"),
        )
    )
register(
    Case(
        "DDP train step MLP 256x1024x1024x10, batch 64 per rank, 2 processes",
        "comm",
        "ms",
        measure=_measure(_DDP, 1024, 10),
        frameworks=("oneflow", "torch"),
    )
)
register(
    Case(
        "global data-parallel train step (oneflow global tensors vs torch DDP), MLP "
        "256x1024x1024x10, batch 64 per rank, 2 processes",
        "comm",
        "ms",
        measure=_measure(_GLOBAL_DP, 1024, 10),
        frameworks=("oneflow", "torch"),
    )
)
register(
    Case(
        "global data-parallel nn.Graph train step (oneflow) vs torch DDP eager, MLP "
        "256x1024x1024x10, batch 64 per rank, 2 processes",
        "comm",
        "ms",
        measure=_measure(_GLOBAL_DP_GRAPH, 1024, 10),
        frameworks=("oneflow", "torch"),
    )
)
for _label, _norm in (("groupnorm", "GroupNorm(1, 64)"), ("batchnorm", "BatchNorm2d(64)")):
    register(
        Case(
            "global data-parallel train step (oneflow global tensors vs torch DDP), CNN "
            f"conv32-pool-conv64-{_label}, batch 64 of 3x32x32 per rank, 2 processes",
            "comm",
            "ms",
            measure=_measure(_global_dp_cnn(_norm), 0, 5),
            frameworks=("oneflow", "torch"),
        )
    )
register(
    Case(
        "global data-parallel train step (oneflow global tensors vs torch DDP), char GPT "
        "4x128, batch 16x64 per rank, 2 processes",
        "comm",
        "ms",
        measure=_measure(_GLOBAL_DP_GPT, 0, 3),
        frameworks=("oneflow", "torch"),
    )
)
for _how, _prefix, _stage1 in (
    ("eagerly", "", "1024x10"),
    ("as an nn.Graph", "os.environ['PIPELINE_GRAPH'] = '1'\n", "1024x10"),
    (
        "as an nn.Graph in 4 micro-batches",
        "os.environ['PIPELINE_GRAPH'] = '1'\nos.environ['PIPELINE_MICRO'] = '4'\n",
        "1024x1024x10",
    ),
):
    register(
        Case(
            f"two-stage pipeline train step {_how} (oneflow global placements) vs torch "
            f"send/recv by hand, MLP 256x1024 then {_stage1}, batch 64, 2 processes",
            "comm",
            "ms",
            measure=_measure("import os\n" + _prefix + _PIPELINE, 1024, 10),
            frameworks=("oneflow", "torch"),
        )
    )
register(
    Case(
        "2-D hybrid parallel train step (oneflow (S(0), B) data with (B, S(1)) and (B, S(0)) "
        "weights on a 2 x 2 placement) vs torch row/column process groups by hand, MLP "
        "256x1024x256, batch 128, 4 processes",
        "comm",
        "ms",
        measure=_measure(_HYBRID, 1024, 10, world=4),
        frameworks=("oneflow", "torch"),
    )
)
