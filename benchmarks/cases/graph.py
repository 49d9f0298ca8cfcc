"""Train steps compiled with ``flow.nn.Graph`` against PyTorch's eager steps, and inference
forwards compiled with ``oneflow.compile`` against ``torch.compile``.

The models and data are the training family's (``benchmarks/cases/training.py``). For the train
steps PyTorch runs the same step eagerly (its counterpart of a compiled training graph,
``torch.compile``, needs a C++ toolchain at run time and is not what OneFlow scripts switch
from). The inference cases compile both (torch's inductor compiles C++ at setup, outside the
timing: seconds).
"""

from benchmarks.cases.training import digits_setup, eager_step, gpt_setup
from benchmarks.registry import Case, register


def _graph_step(fw, model, opt, loss_fn, x, y):
    if fw.name != "oneflow":
        return eager_step(model, opt, loss_fn, x, y)

    class TrainGraph(fw.module.nn.Graph):
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


for _setup, _label in [
    (lambda fw: digits_setup(fw, "mlp"), "digits MLP 64x128x64x10, batch 64"),
    (lambda fw: digits_setup(fw, "lenet"), "digits LeNet, batch 64"),
    (gpt_setup, "char GPT 4x128, batch 32x64"),
]:
    register(
        Case(
            f"graph train step {_label}",
            "graph",
            "steps/s",
            lambda fw, setup=_setup: _graph_step(fw, *setup(fw)),
            1.0,
            frameworks=("oneflow", "torch"),
        )
    )


def _compiled_inference(setup):
    def build(fw):
        model, _, _, x, _ = setup(fw)
        model.eval()
        compiled = fw.module.compile(model)
        no_grad = fw.module.no_grad

        def step():
            with no_grad():
                return compiled(x)

        step()  # traced / compiled here, outside the timing
        return step

    return build


for _setup, _label in [
    (lambda fw: digits_setup(fw, "mlp"), "digits MLP 64x128x64x10, batch 64"),
    (gpt_setup, "char GPT 4x128, batch 32x64"),
]:
    register(
        Case(
            f"compiled inference forward {_label} (oneflow.compile vs torch.compile)",
            "graph",
            "steps/s",
            _compiled_inference(_setup),
            1.0,
            frameworks=("oneflow", "torch"),
        )
    )
