"""A character-level GPT (causal self-attention, pre-norm blocks) trained on text that ships with
the project: its README, its docs and the source of oneflow.nn. Prints the training and
validation loss and a sample.

    python examples/char_gpt.py [--steps 600] [--layers 4] [--save ckpt.of] [--resume ckpt.of]
"""

import argparse
import math
import pathlib
import sys
import time

import oneflow as flow
import oneflow.nn as nn
import oneflow.nn.functional as F

ROOT = pathlib.Path(__file__).resolve().parents[1]


def corpus():
    files = [
        ROOT / "README.md",
        *sorted((ROOT / "docs").rglob("*.md")),
        *sorted((ROOT / "python" / "oneflow" / "nn").rglob("*.py")),
    ]
    return "\n".join(f.read_text(encoding="utf-8") for f in files)


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, n_head, dropout):
        super().__init__()
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.n_head, self.dropout = n_head, dropout

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        q, k, v = (
            t.reshape(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v)
        )
        y = F.scaled_dot_product_attention(
            q, k, v, is_causal=True, dropout_p=self.dropout if self.training else 0.0
        )
        return self.proj(y.transpose(1, 2).reshape(B, T, C))


class Block(nn.Module):
    def __init__(self, d_model, n_head, dropout):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.attn = CausalSelfAttention(d_model, n_head, dropout)
        self.mlp = nn.Sequential(
            nn.Linear(d_model, 4 * d_model),
            nn.GELU(),
            nn.Linear(4 * d_model, d_model),
            nn.Dropout(dropout),
        )

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, vocab, context, d_model=128, n_head=4, n_layer=4, dropout=0.0):
        super().__init__()
        self.context = context
        self.tok = nn.Embedding(vocab, d_model)
        self.pos = nn.Embedding(context, d_model)
        self.blocks = nn.ModuleList([Block(d_model, n_head, dropout) for _ in range(n_layer)])
        self.ln = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab, bias=False)
        self.apply(self._init)

    @staticmethod
    def _init(m):
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, 0.0, 0.02)
        if isinstance(m, nn.Linear) and m.bias is not None:
            nn.init.zeros_(m.bias)

    def forward(self, idx):
        T = idx.shape[1]
        x = self.tok(idx) + self.pos(flow.arange(T))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln(x))

    @flow.no_grad()
    def generate(self, idx, n, temperature=0.8):
        for _ in range(n):
            logits = self(idx[:, -self.context :])[:, -1] / temperature
            nxt = flow.multinomial(F.softmax(logits, dim=-1), 1)
            idx = flow.cat([idx, nxt], 1)
        return idx


def batch(data, context, batch_size, g):
    starts = flow.randint(0, data.numel() - context - 1, (batch_size,), generator=g)
    offs = flow.arange(context)
    idx = starts.unsqueeze(1) + offs
    return data[idx], data[idx + 1]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--steps", type=int, default=600)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--context", type=int, default=64)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--save", default=None, help="checkpoint path written at the end")
    p.add_argument("--resume", default=None, help="checkpoint to continue from")
    p.add_argument("--stop-at", type=int, default=None, help="stop after this step (for resume)")
    args = p.parse_args(argv)

    text = corpus()
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    data = flow.tensor([stoi[c] for c in text], dtype=flow.int64)
    split = int(0.9 * data.numel())
    train, val = data[:split], data[split:]

    flow.manual_seed(args.seed)
    model = GPT(len(chars), args.context, n_layer=args.layers)
    opt = flow.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    sched = flow.optim.lr_scheduler.OneCycleLR(opt, max_lr=args.lr, total_steps=args.steps)
    g = flow.Generator()
    g.manual_seed(args.seed)
    step0, history = 0, []
    if args.resume:
        ckpt = flow.load(args.resume)
        model.load_state_dict(ckpt["model"])
        opt.load_state_dict(ckpt["optim"])
        sched.load_state_dict(ckpt["sched"])
        g.set_state(ckpt["generator"])
        step0, history = ckpt["step"], ckpt["history"]
    n_params = sum(p.numel() for p in model.parameters())
    print(
        f"char GPT: {args.layers} layers, {n_params} parameters, vocabulary {len(chars)}, "
        f"{data.numel()} characters of text"
    )
    start = time.perf_counter()
    last = args.steps if args.stop_at is None else args.stop_at
    for step in range(step0, last):
        x, y = batch(train, args.context, args.batch_size, g)
        loss = F.cross_entropy(model(x).reshape(-1, len(chars)), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        history.append(loss.item())
        if (step + 1) % 50 == 0 or step + 1 == last:
            done = int(30 * (step + 1) / args.steps)
            sys.stdout.write(
                f"\rstep {step + 1:5d}/{args.steps} [{'#' * done}{'.' * (30 - done)}]"
                f" loss {sum(history[-50:]) / len(history[-50:]):.3f}"
            )
            sys.stdout.flush()
    elapsed = time.perf_counter() - start
    print()
    if args.save:
        flow.save(
            {
                "model": model.state_dict(),
                "optim": opt.state_dict(),
                "sched": sched.state_dict(),
                "generator": g.get_state(),
                "step": last,
                "history": history,
            },
            args.save,
        )
    model.eval()
    with flow.no_grad():
        vx, vy = batch(val, args.context, 64, g)
        val_loss = F.cross_entropy(model(vx).reshape(-1, len(chars)), vy.reshape(-1)).item()
    sample = model.generate(flow.tensor([[stoi["\n"]]]), 120)[0].numpy().tolist()
    print("sample:", "".join(chars[i] for i in sample).replace("\n", "\n        "))
    steps_run = last - step0
    print(
        f"summary: steps={last} train loss (last 50)={sum(history[-50:]) / len(history[-50:]):.3f}"
        f" val loss={val_loss:.3f} (uniform: {math.log(len(chars)):.3f}) "
        f"time={elapsed:.1f}s ({elapsed / max(steps_run, 1) * 1e3:.0f} ms/step)"
    )
    return history, val_loss


if __name__ == "__main__":
    main()
