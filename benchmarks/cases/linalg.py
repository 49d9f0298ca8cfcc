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


def _crandn(fw, *shape):
    """complex64 matrices with standard normal parts."""
    re, im = randn(fw, *shape), randn(fw, *shape)
    if fw.name == "numpy":
        return (re + 1j * im).astype("complex64")
    return fw.module.complex(re, im)


def _hermitian(fw, *shape):
    x = _crandn(fw, *shape)
    if fw.name == "numpy":
        return x + x.conj().swapaxes(-1, -2)
    return x + x.conj().transpose(-1, -2)


for _name, _path, _make in [
    ("eig 128x128", "linalg.eig", lambda fw: (randn(fw, 128, 128),)),
    ("eigh complex64 128x128", "linalg.eigh", lambda fw: (_hermitian(fw, 128, 128),)),
    ("svd complex64 128x128", "linalg.svd", lambda fw: (_crandn(fw, 128, 128),)),
    ("lu_factor complex64 256x256", "linalg.lu_factor", lambda fw: (_crandn(fw, 256, 256),)),
]:
    register(
        Case(
            _name,
            "linalg",
            "ms",
            _build(_path, _make),
            frameworks=("oneflow", "torch"),
        )
    )


def _det_step(path, make):
    """One forward and backward of a determinant (the real part of a complex one)."""

    def build(fw):
        fn = op(fw, path)
        a = make(fw).requires_grad_()

        def step():
            out = fn(a)
            out = out[1] if isinstance(out, tuple) else out
            out.real.sum().backward()

        return step

    return build


for _name, _path, _make in [
    ("det complex64 fwd+bwd 128x128", "linalg.det", lambda fw: _crandn(fw, 128, 128)),
    ("slogdet fwd+bwd 256x256", "linalg.slogdet", lambda fw: randn(fw, 256, 256)),
    ("det fwd+bwd batch 64 x 16x16", "linalg.det", lambda fw: randn(fw, 64, 16, 16)),
]:
    register(Case(_name, "linalg", "ms", _det_step(_path, _make), frameworks=("oneflow", "torch")))
