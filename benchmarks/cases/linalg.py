"""Matrix decompositions and solves (LAPACK) in float32: one matrix and a batch of small ones."""

from benchmarks.cases._util import op, randn
from benchmarks.registry import Case, register


def _spd(fw, *shape):
    """A batch of well-conditioned symmetric positive-definite matrices."""
    x = randn(fw, *shape)
    n = shape[-1]
    if fw.name == "numpy":
        return x @ x.swapaxes(-1, -2) + n * fw.module.eye(n, dtype=x.dtype)
    return x @ x.transpose(-1, -2) + n * fw.module.eye(n, device=fw.device)


def _build(path, make_args):
    def build(fw):
        fn = op(fw, path)
        args = make_args(fw)
        return lambda: fn(*args)

    return build


_CASES = [
    ("cholesky", "linalg.cholesky", lambda n: lambda fw: (_spd(fw, n, n),)),
    ("solve", "linalg.solve", lambda n: lambda fw: (_spd(fw, n, n), randn(fw, n, 16))),
    ("qr", "linalg.qr", lambda n: lambda fw: (randn(fw, n, n),)),
    ("eigh", "linalg.eigh", lambda n: lambda fw: (_spd(fw, n, n),)),
    ("svd", "linalg.svd", lambda n: lambda fw: (randn(fw, n, n),)),
]

for _name, _path, _args in _CASES:
    register(
        Case(
            f"{_name} 256x256",
            "linalg",
            "ms",
            _build(_path, _args(256)),
            frameworks=("oneflow", "torch", "numpy"),
        )
    )
register(
    Case(
        "cholesky batch 1024 x 8x8",
        "linalg",
        "ms",
        _build("linalg.cholesky", lambda fw: (_spd(fw, 1024, 8, 8),)),
        frameworks=("oneflow", "torch", "numpy"),
    )
)
register(
    Case(
        "eigh batch 256 x 16x16",
        "linalg",
        "ms",
        _build("linalg.eigh", lambda fw: (_spd(fw, 256, 16, 16),)),
        frameworks=("oneflow", "torch", "numpy"),
    )
)
