"""Train steps compiled with ``flow.nn.Graph`` against PyTorch's eager steps.

The models and data are the training family's (``benchmarks/cases/training.py``); PyTorch runs
the same step eagerly (its counterpart of a compiled graph, ``torch.compile``, needs a C++
toolchain at run time and is not what OneFlow scripts switch from).
"""

from benchmarks.cases.training import _digits_model, gpt
from benchmarks.registry import Case, register


def _graph_step(fw, model, opt, loss_fn, x, y):
    lib = fw.module
    if fw.name != "oneflow":

        def step():
            opt.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
            return loss

        return step

    class TrainGraph(lib.nn.Graph):
        def __init__(self):
            super().__init__()
            self.model = model
            self.add_optimizer(opt)

        def build(self, x, y):
            loss = loss_fn(self.model(x), y)
            loss.backward()
            return loss

    graph = TrainGraph()
    return lambda: graph(x, y)


def _build_digits(kind):
    def build(fw):
        lib = fw.module
        lib.manual_seed(0)
        model = _digits_model(lib, kind).to(fw.device)
        opt = lib.optim.Adam(model.parameters(), lr=1e-3)
        x = lib.randn(64, 1, 8, 8, device=fw.device)
        y = lib.randint(0, 10, (64,), device=fw.device)
        return _graph_step(fw, model, opt, lib.nn.CrossEntropyLoss(), x, y)

    return build


def _build_gpt(fw):
    lib = fw.module
    lib.manual_seed(0)
    model = gpt(lib).to(fw.device)
    opt = lib.optim.AdamW(model.parameters(), lr=1e-3)
    x = lib.randint(0, 96, (32, 64), device=fw.device)
    y = lib.randint(0, 96, (32, 64), device=fw.device)

    def loss_fn(logits, target):
        return lib.nn.functional.cross_entropy(logits.reshape(-1, 96), target.reshape(-1))

    return _graph_step(fw, model, opt, loss_fn, x, y)


for _kind, _label in [
    ("mlp", "digits MLP 64x128x64x10, batch 64"),
    ("lenet", "digits LeNet, batch 64"),
]:
    register(
        Case(
            f"graph train step {_label}",
            "graph",
            "steps/s",
            _build_digits(_kind),
            1.0,
            frameworks=("oneflow", "torch"),
        )
    )
register(
    Case(
        "graph train step char GPT 4x128, batch 32x64",
        "graph",
        "steps/s",
        _build_gpt,
        1.0,
        frameworks=("oneflow", "torch"),
    )
)
