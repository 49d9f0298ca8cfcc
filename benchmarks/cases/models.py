"""Training steps of small models in the shape users train on a CPU: a CIFAR-style ResNet
(BatchNorm, residual adds, global pooling) and a small vision transformer (patch embedding,
multi-head attention through nn.MultiheadAttention, LayerNorm, GELU)."""

from benchmarks.cases._util import randn
from benchmarks.cases.training import eager_step
from benchmarks.registry import Case, register


def resnet(lib, width=32, blocks=(1, 1, 1), classes=10):
    nn, F = lib.nn, lib.nn.functional

    class Block(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.short = None
            if stride != 1 or cin != cout:
                self.short = nn.Sequential(
                    nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout)
                )

        def forward(self, x):
            y = F.relu(self.bn1(self.conv1(x)))
            y = self.bn2(self.conv2(y))
            return F.relu(y + (x if self.short is None else self.short(x)))

    class ResNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(
                nn.Conv2d(3, width, 3, 1, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU()
            )
            layers, cin = [], width
            for i, n in enumerate(blocks):
                cout = width * 2**i
                for j in range(n):
                    layers.append(Block(cin, cout, 2 if (i > 0 and j == 0) else 1))
                    cin = cout
            self.layers = nn.Sequential(*layers)
            self.head = nn.Linear(cin, classes)

        def forward(self, x):
            x = self.layers(self.stem(x))
            return self.head(F.adaptive_avg_pool2d(x, 1).flatten(1))

    return ResNet()


def vit(lib, image=32, patch=4, d=128, heads=4, depth=4, classes=10):
    nn = lib.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
            self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

        def forward(self, x):
            h = self.ln1(x)
            x = x + self.attn(h, h, h, need_weights=False)[0]
            return x + self.mlp(self.ln2(x))

    class ViT(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Conv2d(3, d, patch, patch)
            tokens = (image // patch) ** 2
            self.cls = nn.Parameter(lib.zeros(1, 1, d))
            self.pos = nn.Parameter(lib.zeros(1, tokens + 1, d))
            self.blocks = nn.Sequential(*[Block() for _ in range(depth)])
            self.ln, self.head = nn.LayerNorm(d), nn.Linear(d, classes)

        def forward(self, x):
            x = self.embed(x).flatten(2).transpose(1, 2)
            x = lib.cat([self.cls.expand(x.shape[0], -1, -1), x], 1) + self.pos
            x = self.blocks(x)
            return self.head(self.ln(x[:, 0]))

    return ViT()


def _setup(make, batch, optimizer):
    def build(fw):
        lib = fw.module
        lib.manual_seed(0)
        model = make(lib).to(fw.device)
        model.train()
        if optimizer == "sgd":
            opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
        else:
            opt = lib.optim.AdamW(model.parameters(), lr=1e-3)
        x = randn(fw, batch, 3, 32, 32)
        y = lib.randint(0, 10, (batch,), device=fw.device)
        return eager_step(model, opt, lib.nn.functional.cross_entropy, x, y)

    return build


register(
    Case(
        "train step CIFAR ResNet 3 stages x 32-128, batch 32",
        "training",
        "steps/s",
        _setup(resnet, 32, "sgd"),
        1.0,
        frameworks=("oneflow", "torch"),
    )
)
register(
    Case(
        "train step ViT 4x128 patch 4, batch 32",
        "training",
        "steps/s",
        _setup(vit, 32, "adamw"),
        1.0,
        frameworks=("oneflow", "torch"),
    )
)
