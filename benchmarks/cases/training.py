"""A small training step: forward and backward of ``sum(relu(x @ w1) @ w2)``."""

from benchmarks.cases._util import randn
from benchmarks.registry import Case, register

BATCH, HIDDEN, OUT = 256, 1024, 10


def _flops():
    """Forward: two matmuls; backward: grad of h, grad of w2, grad of w1 (x needs none)."""
    mm1 = 2 * BATCH * HIDDEN * HIDDEN
    mm2 = 2 * BATCH * HIDDEN * OUT
    return mm1 + mm2 + mm2 + mm2 + mm1


def _build_step(fw):
    x = randn(fw, BATCH, HIDDEN)
    w1 = randn(fw, HIDDEN, HIDDEN).requires_grad_(True)
    w2 = randn(fw, HIDDEN, OUT).requires_grad_(True)

    def step():
        w1.grad = None
        w2.grad = None
        loss = ((x @ w1).relu() @ w2).sum()
        loss.backward()
        return w1.grad

    return step


register(
    Case(
        "train step MLP 256x1024x1024x10",
        "training",
        "GFLOP/s",
        _build_step,
        _flops(),
        frameworks=("oneflow", "torch"),
    )
)


# ---- the examples' models (examples/digits_mlp.py, examples/char_gpt.py) ------------------


def _digits_model(lib, kind):
    nn = lib.nn
    if kind == "mlp":
        return nn.Sequential(
            nn.Flatten(),
            nn.Linear(64, 128),
            nn.ReLU(),
            nn.Linear(128, 64),
            nn.ReLU(),
            nn.Linear(64, 10),
        )
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(128, 64),
        nn.ReLU(),
        nn.Linear(64, 10),
    )


def digits_setup(fw, kind):
    """The digits example's model, Adam, loss and one batch: (model, opt, loss_fn, x, y)."""
    lib = fw.module
    lib.manual_seed(0)
    model = _digits_model(lib, kind).to(fw.device)
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)
    x = lib.randn(64, 1, 8, 8, device=fw.device)
    y = lib.randint(0, 10, (64,), device=fw.device)
    return model, opt, lib.nn.CrossEntropyLoss(), x, y


def eager_step(model, opt, loss_fn, x, y):
    """One eager training step over (x, y)."""

    def step():
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss

    return step


def _build_digits(kind):
    return lambda fw: eager_step(*digits_setup(fw, kind))


def gpt(lib, vocab=96, context=64, d=128, heads=4, layers=4):
    """The char GPT of examples/char_gpt.py, written against `lib` (oneflow or torch)."""
    nn, F = lib.nn, lib.nn.functional

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = (
                t.reshape(B, T, heads, C // heads).transpose(1, 2)
                for t in self.qkv(x).split(C, dim=2)
            )
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            return self.proj(y.transpose(1, 2).reshape(B, T, C))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.attn = Attention()
            self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

        def forward(self, x):
            x = x + self.attn(self.ln1(x))
            return x + self.mlp(self.ln2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(context, d)
            self.blocks = nn.ModuleList([Block() for _ in range(layers)])
            self.ln, self.head = nn.LayerNorm(d), nn.Linear(d, vocab, bias=False)

        def forward(self, idx):
            x = self.tok(idx) + self.pos(lib.arange(idx.shape[1], device=idx.device))
            for b in self.blocks:
                x = b(x)
            return self.head(self.ln(x))

    return GPT()


def gpt_setup(fw):
    """The char GPT example's model, AdamW, loss and one batch: (model, opt, loss_fn, x, y)."""
    lib = fw.module
    lib.manual_seed(0)
    model = gpt(lib).to(fw.device)
    opt = lib.optim.AdamW(model.parameters(), lr=1e-3)
    x = lib.randint(0, 96, (32, 64), device=fw.device)
    y = lib.randint(0, 96, (32, 64), device=fw.device)

    def loss_fn(logits, target):
        return lib.nn.functional.cross_entropy(logits.reshape(-1, 96), target.reshape(-1))

    return model, opt, loss_fn, x, y


def _build_gpt(fw):
    return eager_step(*gpt_setup(fw))


for _kind, _label in [
    ("mlp", "digits MLP 64x128x64x10, batch 64"),
    ("lenet", "digits LeNet, batch 64"),
]:
    register(
        Case(
            f"train step {_label}",
            "training",
            "steps/s",
            _build_digits(_kind),
            1.0,
            frameworks=("oneflow", "torch"),
        )
    )
register(
    Case(
        "train step char GPT 4x128, batch 32x64",
        "training",
        "steps/s",
        _build_gpt,
        1.0,
        frameworks=("oneflow", "torch"),
    )
)


def _build_recurrent(kind):
    """Forward and backward of a one-layer recurrent layer over 32 steps (batch 16, 128 -> 256)."""

    def build(fw):
        lib = fw.module
        lib.manual_seed(0)
        layer = getattr(lib.nn, kind)(128, 256, batch_first=True).to(fw.device)
        x = randn(fw, 16, 32, 128).requires_grad_(True)

        def step():
            layer.zero_grad()
            layer(x)[0].sum().backward()
            return x.grad

        return step

    return build


for _kind in ("LSTM", "GRU"):
    register(
        Case(
            f"train step {_kind} 16x32x128 -> 256",
            "training",
            "steps/s",
            _build_recurrent(_kind),
            1.0,
            frameworks=("oneflow", "torch"),
        )
    )


def _optimizer_update(kind):
    """One optimizer update of a 1M-float32 parameter whose gradient is set (no backward)."""

    def build(fw):
        lib = fw.module
        p = lib.nn.Parameter(randn(fw, 1 << 20))
        p.grad = randn(fw, 1 << 20)
        if kind == "add_":  # the update older scripts write by hand

            def step():
                with lib.no_grad():
                    p.add_(p.grad, alpha=-0.01)

            return step
        opt = {
            "sgd": lambda: lib.optim.SGD([p], lr=0.01),
            "sgd momentum": lambda: lib.optim.SGD([p], lr=0.01, momentum=0.9),
            "adamw": lambda: lib.optim.AdamW([p], lr=1e-3),
        }[kind]()
        return opt.step

    return build


for _kind in ("add_", "sgd", "sgd momentum", "adamw"):
    register(
        Case(
            f"optimizer update {_kind}, 1M float32"
            if _kind != "add_"
            else "p.add_(g, alpha=-lr), 1M float32",
            "training",
            "GB/s",
            _optimizer_update(_kind),
            # arrays read or written once: p and g (read), p (written); the buffer or the two
            # moments read and written
            {"add_": 3, "sgd": 3, "sgd momentum": 5, "adamw": 7}[_kind] * (1 << 20) * 4,
            frameworks=("oneflow", "torch"),
        )
    )


# ---- a recommender's embedding step ----------------------------------------------------------

EMB_IDS, EMB_DIM, EMB_VOCAB = 4096, 64, 1 << 20


def _embedding_step(fw):
    """Lookup of 4096 ids (Zipf-distributed over a 1M vocabulary), backward of the rows' sum
    and an Adagrad update of the rows hit: oneflow.one_embedding (a key-value table) against
    PyTorch's nn.Embedding(sparse=True) with its sparse Adagrad."""
    import tempfile

    import numpy as np

    lib = fw.module
    rng = np.random.default_rng(0)
    batches = [
        lib.tensor(np.minimum(rng.zipf(1.2, EMB_IDS) - 1, EMB_VOCAB - 1).astype(np.int64))
        for _ in range(8)
    ]
    if fw.name == "oneflow":
        oe = lib.one_embedding
        store = oe.make_device_mem_store_options(
            persistent_path=tempfile.mkdtemp(), capacity=EMB_VOCAB, size_factor=2
        )
        emb = oe.MultiTableEmbedding("bench", EMB_DIM, lib.float, lib.int64, None, store)
    else:
        emb = lib.nn.Embedding(EMB_VOCAB, EMB_DIM, sparse=True)
    opt = lib.optim.Adagrad(emb.parameters(), lr=0.01)
    it = [0]

    def step():
        ids = batches[it[0] % len(batches)]
        it[0] += 1
        emb(ids).sum().backward()
        opt.step()
        opt.zero_grad()

    return step


register(
    Case(
        "embedding step 4096 ids x 64, Adagrad (one_embedding vs sparse nn.Embedding)",
        "training",
        "GB/s",
        _embedding_step,
        # rows read by the lookup, gradient rows written, rows and accumulators read and written
        EMB_IDS * EMB_DIM * 4 * 6,
        frameworks=("oneflow", "torch"),
    )
)
