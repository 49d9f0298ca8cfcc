"""A sweep over the op library at one mid size (about 1M float32 elements, or a typical
N x C x H x W activation for the nn ops): forward, or forward + backward where the op is
differentiable ("fwd+bwd"). It finds the ops that are slower than PyTorch; the focused
families (elementwise, norm, movement, ...) measure the important ones in depth. Rates count
the bytes of the input once."""

from benchmarks.cases._util import FLOAT_BYTES, op, randn
from benchmarks.registry import Case, register

_BOTH = ("oneflow", "torch")
_N = 1024  # 2-D cases: _N x _N
_IMG = (8, 32, 64, 64)  # nn cases on images


def _elems(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def _grad_input(fw, *shape):
    x = randn(fw, *shape)
    x.requires_grad_(True)
    return x


def _fwd(path, shape=(_N, _N), args=(), kwargs=None, prep=None):
    kwargs = kwargs or {}

    def build(fw):
        f, x = op(fw, path), randn(fw, *shape)
        if prep is not None:
            x = prep(fw, x)
        return lambda: f(x, *args, **kwargs)

    return build


def _fwd_bwd(path, shape=(_N, _N), args=(), kwargs=None, prep=None):
    kwargs = kwargs or {}

    def build(fw):
        f = op(fw, path)
        x = randn(fw, *shape)
        if prep is not None:
            x = prep(fw, x)
        x.requires_grad_(True)

        def step():
            y = f(x, *args, **kwargs)
            if isinstance(y, tuple):
                y = y[0]
            y.sum().backward()

        return step

    return build


def _positive(fw, x):
    return x.abs() + 0.5


def _unit(fw, x):
    return x.clamp(-0.9, 0.9)


def _index_build(path, dim, count):
    def build(fw):
        f, x = op(fw, path), randn(fw, _N, _N)
        fw.module.manual_seed(3)
        i = fw.module.randint(0, _N, (count,), device=fw.device)
        return lambda: f(x, dim, i)

    return build


def _binary_build(path):
    def build(fw):
        f, x, y = op(fw, path), randn(fw, _N, _N), randn(fw, _N, _N) + 3.0
        return lambda: f(x, y)

    return build


def _bcast_build(path):
    def build(fw):
        f, x, y = op(fw, path), randn(fw, _N, _N), randn(fw, 1, _N)
        return lambda: f(x, y)

    return build


def _cross_entropy_build(**kwargs):
    def build(fw):
        f = op(fw, "nn.functional.cross_entropy")
        x = randn(fw, 4096, 256)
        x.requires_grad_(True)
        fw.module.manual_seed(4)
        t = fw.module.randint(0, 256, (4096,), device=fw.device)

        def step():
            f(x, t, **kwargs).backward()

        return step

    return build


def _embedding_build(fw):
    f, w = op(fw, "nn.functional.embedding"), randn(fw, 8192, 128)
    w.requires_grad_(True)
    fw.module.manual_seed(5)
    i = fw.module.randint(0, 8192, (64, 128), device=fw.device)

    def step():
        f(i, w).sum().backward()

    return step


def _grid_sample_build(fw):
    """Bilinear sampling of 8x16x64x64 images at 48x48 points each, forward + backward to the
    input and the grid."""
    lib = fw.module
    x = _grad_input(fw, 8, 16, 64, 64)
    lib.manual_seed(3)
    grid = (lib.rand(8, 48, 48, 2, device=fw.device) * 2 - 1).requires_grad_(True)

    def step():
        lib.nn.functional.grid_sample(x, grid, align_corners=False).sum().backward()

    return step


def _pdist_build(fw):
    x = _grad_input(fw, 256, 64)

    def step():
        fw.module.nn.functional.pdist(x).sum().backward()

    return step


def _ctc_build(fw):
    """CTC loss of 16 sequences of 50 steps over 20 classes, targets of 10-29 labels."""
    lib = fw.module
    lib.manual_seed(4)
    lp = randn(fw, 50, 16, 20).log_softmax(2).detach().requires_grad_(True)
    targets = lib.randint(1, 20, (16, 30), device=fw.device)
    in_len = lib.full((16,), 50, dtype=lib.int64)
    tgt_len = lib.randint(10, 30, (16,))

    def step():
        lib.nn.functional.ctc_loss(lp, targets, in_len, tgt_len).backward()

    return step


def _embedding_bag_max_build(fw):
    lib = fw.module
    w = _grad_input(fw, 10000, 64)
    lib.manual_seed(6)
    idx = lib.randint(0, 10000, (2048,), device=fw.device)
    offsets = lib.arange(0, 2048, 16, device=fw.device)

    def step():
        lib.nn.functional.embedding_bag(idx, w, offsets, mode="max").sum().backward()

    return step


def _gammainc_build(fw):
    lib = fw.module
    a = randn(fw, _N, _N).abs() * 4 + 0.1
    x = randn(fw, _N, _N).abs() * 4
    return lambda: lib.special.gammainc(a, x)


def _rfft_build(fw):
    """rfft of 1024 rows of 1024 float32 values (a power of two: radix-4 butterflies)."""
    x = randn(fw, _N, _N)
    return lambda: fw.module.fft.rfft(x)


def _fft_prime_build(fw):
    """Complex fft of 64 rows of 1009 values (a prime: Bluestein's convolution here)."""
    x = randn(fw, 64, 1009, 2)
    z = fw.module.view_as_complex(x)
    return lambda: fw.module.fft.fft(z)


def _stft_build(fw):
    """Spectrogram of 8 one-second 16 kHz signals, n_fft 400, hop 160, fwd+bwd."""
    lib = fw.module
    x = randn(fw, 8, 16000).requires_grad_(True)
    window = lib.hann_window(400, device=fw.device)

    def step():
        spec = lib.stft(x, 400, hop_length=160, window=window, return_complex=True)
        spec.abs().pow(2).sum().backward()

    return step


def _complex_mul_build(fw):
    """RoPE-style rotation: complex64 (8, 64, 256, 32) times (64, 1, 32) phases, fwd+bwd."""
    lib = fw.module
    q = randn(fw, 8, 64, 256, 64).requires_grad_(True)
    angles = randn(fw, 64, 1, 32)
    phases = lib.polar(lib.ones_like(angles), angles)

    def step():
        z = lib.view_as_complex(q.reshape(8, 64, 256, 32, 2))
        lib.view_as_real(z * phases).sum().backward()

    return step


def _masked_fill_build(fw):
    x = randn(fw, _N, _N)
    m = x > 0.5
    return lambda: x.masked_fill(m, 0.0)


def _masked_select_build(fw):
    x = randn(fw, _N, _N)
    m = x > 0.5
    return lambda: fw.module.masked_select(x, m)


def _where_build(fw):
    x, y = randn(fw, _N, _N), randn(fw, _N, _N) * 2
    m = x > y
    return lambda: fw.module.where(m, x, y)


def _cat_build(fw):
    xs = [randn(fw, _N // 4, _N) for _ in range(4)]
    return lambda: fw.module.cat(xs, 1)


def _transpose_copy_build(fw):
    x = randn(fw, _N, _N)
    return lambda: x.t().contiguous()


def _permute_copy_build(fw):
    x = randn(fw, *_IMG)
    return lambda: x.permute(0, 2, 3, 1).contiguous()


def _heads_copy_build(fw):
    # attention's (batch, seq, heads, dim) -> (batch, heads, seq, dim)
    x = randn(fw, 32, 128, 8, 64)
    return lambda: x.permute(0, 2, 1, 3).contiguous()


def _heads_copy_build_d32(fw):
    x = randn(fw, 32, 128, 8, 32)
    return lambda: x.permute(0, 2, 1, 3).contiguous()


def _one_hot_build(fw):
    f = op(fw, "nn.functional.one_hot")
    labels = (fw.module.rand(_N * _N) * 10).long()
    return lambda: f(labels, 10)


def _bincount_build(fw):
    values = (fw.module.rand(_N * _N) * 1000).long()
    return lambda: fw.module.bincount(values)


def _cross_build(fw):
    a, b = randn(fw, _N * _N // 3, 3), randn(fw, _N * _N // 3, 3)
    return lambda: fw.module.linalg.cross(a, b)


def _outer_build(fw):
    a, b = randn(fw, _N), randn(fw, _N)
    return lambda: fw.module.outer(a, b)


def _gather_last_build(fw):
    x = randn(fw, _N, _N)
    idx = (fw.module.rand(_N, _N) * _N).long()
    return lambda: fw.module.gather(x, 1, idx)


def _prelu_build(fw):
    x, w = randn(fw, *_IMG), randn(fw, _IMG[1])
    x.requires_grad_(True)
    w.requires_grad_(True)
    f = op(fw, "nn.functional.prelu")
    return lambda: f(x, w).sum().backward()


def _mse_build(fw):
    f = op(fw, "nn.functional.mse_loss")
    x, y = _grad_input(fw, _N, _N), randn(fw, _N, _N)
    return lambda: f(x, y).backward()


def _searchsorted_build(fw):
    # 1M values into 1024 sorted boundaries.
    x = randn(fw, _N, _N)
    bounds = randn(fw, _N).sort()[0]
    return lambda: fw.module.searchsorted(bounds, x)


def _transposed_build(step):
    # An op on the transpose of a 1024 x 1024 matrix (a non-contiguous input).
    def build(fw):
        x = randn(fw, _N, _N).t()
        return lambda: step(fw, x)

    return build


def _int64_sort_build(unique):
    # 1M int64 values in [0, 1000): sort, or unique with inverse and counts.
    def build(fw):
        x = (randn(fw, _N * _N).abs() * 300).long().clamp(0, 999)
        if unique:
            return lambda: fw.module.unique(x, return_inverse=True, return_counts=True)
        return lambda: fw.module.sort(x)

    return build


def _pair_loss_build(path, binary_target=False, **kw):
    def build(fw):
        f = op(fw, path)
        x, y = randn(fw, _N, _N), randn(fw, _N, _N)
        if binary_target:
            y = (y > 0).float()
        return lambda: f(x, y, **kw)

    return build


def _unique_rows_build(fw):
    # Distinct rows of 65536 x 16 small integers (each row about 4^16 choices: most distinct).
    x = (randn(fw, 65536, 16) * 2).round().long()
    return lambda: fw.module.unique(x, dim=0, return_inverse=True, return_counts=True)


def _interp(mode, **kw):
    def build(fw):
        f, x = op(fw, "nn.functional.interpolate"), _grad_input(fw, 8, 32, 32, 32)

        def step():
            f(x, scale_factor=2, mode=mode, **kw).sum().backward()

        return step

    return build


_CASES = [
    # unary / activations (fwd+bwd)
    ("sigmoid", _fwd_bwd("sigmoid")),
    ("tanh", _fwd_bwd("tanh")),
    ("sqrt", _fwd_bwd("sqrt", prep=_positive)),
    ("log", _fwd_bwd("log", prep=_positive)),
    ("sin", _fwd_bwd("sin")),
    ("abs", _fwd_bwd("abs")),
    ("erf", _fwd_bwd("erf")),
    ("atan", _fwd_bwd("atan")),
    ("asin", _fwd_bwd("asin", prep=_unit)),
    ("floor", _fwd("floor")),
    ("round", _fwd("round")),
    ("relu", _fwd_bwd("relu")),
    ("silu", _fwd_bwd("nn.functional.silu")),
    ("leaky_relu", _fwd_bwd("nn.functional.leaky_relu")),
    ("elu", _fwd_bwd("nn.functional.elu")),
    ("softplus", _fwd_bwd("nn.functional.softplus")),
    ("mish", _fwd_bwd("nn.functional.mish")),
    ("hardswish", _fwd_bwd("nn.functional.hardswish")),
    ("hardtanh", _fwd_bwd("nn.functional.hardtanh")),
    ("logsigmoid", _fwd_bwd("nn.functional.logsigmoid")),
    ("gelu tanh", _fwd_bwd("nn.functional.gelu", kwargs={"approximate": "tanh"})),
    ("clamp", _fwd_bwd("clamp", args=(-0.5, 0.5))),
    ("pow 2.5", _fwd_bwd("pow", args=(2.5,), prep=_positive)),
    ("nan_to_num", _fwd("nan_to_num")),
    # binary
    ("maximum", _binary_build("maximum")),
    ("atan2", _binary_build("atan2")),
    ("fmod", _binary_build("fmod")),
    ("remainder", _binary_build("remainder")),
    ("div broadcast row", _bcast_build("div")),
    ("lt", _binary_build("lt")),
    ("where", _where_build),
    # reductions
    ("max(dim=1)", _fwd("max", args=(1,))),
    ("argmax(dim=1)", _fwd("argmax", args=(1,))),
    ("amax(dim=0)", _fwd("amax", args=(0,))),
    ("sum(dim=0)", _fwd("sum", args=(0,))),
    ("prod(dim=1)", _fwd("prod", args=(1,), prep=_unit)),
    ("var(dim=1)", _fwd_bwd("var", args=(1,))),
    ("std(dim=0)", _fwd("std", args=(0,))),
    ("logsumexp(dim=1)", _fwd_bwd("logsumexp", args=(1,))),
    ("norm", _fwd_bwd("linalg.vector_norm")),
    ("all(x>0)", _fwd("all", prep=lambda fw, x: x > -10)),
    ("cummax(dim=1)", _fwd("cummax", args=(1,))),
    # the same 1M elements in other layouts: short rows, a middle dim, few long rows
    ("sum(dim=1) 16384x64", _fwd("sum", shape=(16384, 64), args=(1,))),
    ("amax(dim=1) 256x64x64", _fwd("amax", shape=(256, 64, 64), args=(1,))),
    ("sum(dim=1) 256x64x64", _fwd("sum", shape=(256, 64, 64), args=(1,))),
    ("prod(dim=1) 256x64x64", _fwd("prod", shape=(256, 64, 64), args=(1,), prep=_unit)),
    ("cumsum(dim=1)", _fwd("cumsum", args=(1,))),
    ("cumsum(dim=1) 65536x16", _fwd("cumsum", shape=(65536, 16), args=(1,))),
    ("cumsum 1-D", _fwd("cumsum", shape=(_N * _N,), args=(0,))),
    (
        "log_softmax(dim=0) 64x16384",
        _fwd("nn.functional.log_softmax", shape=(64, 16384), args=(0,)),
    ),
    ("topk(16, dim=1)", _fwd("topk", args=(16,))),
    ("median(dim=1)", _fwd("median", args=(1,))),
    ("argsort(dim=1)", _fwd("argsort", args=(1,))),
    ("unique", _fwd("unique", prep=lambda fw, x: (x * 100).round())),
    ("searchsorted 1M in 1K", _searchsorted_build),
    ("unique(dim=0) rows", _unique_rows_build),
    # movement
    ("index_select(dim=0)", _index_build("index_select", 0, 512)),
    ("index_select(dim=1)", _index_build("index_select", 1, 512)),
    ("masked_fill", _masked_fill_build),
    ("masked_select", _masked_select_build),
    ("cat(dim=1) 4 parts", _cat_build),
    ("transpose copy", _transpose_copy_build),
    ("permute NCHW->NHWC copy", _permute_copy_build),
    ("flip(dim=1)", _fwd("flip", args=([1],))),
    ("roll(dim=1)", _fwd("roll", args=(7, 1))),
    ("repeat 2x2", _fwd("Tensor.repeat", args=(2, 2))),
    ("tril", _fwd("tril")),
    ("nonzero", _fwd("nonzero", prep=lambda fw, x: x > 1.0)),
    # nn
    ("max_pool2d 3x3/2", _fwd_bwd("nn.functional.max_pool2d", _IMG, (3, 2, 1))),
    ("avg_pool2d 2x2", _fwd_bwd("nn.functional.avg_pool2d", _IMG, (2,))),
    ("adaptive_avg_pool2d 1", _fwd_bwd("nn.functional.adaptive_avg_pool2d", _IMG, (1,))),
    ("pad reflect 2", _fwd_bwd("nn.functional.pad", _IMG, ((2, 2, 2, 2),), {"mode": "reflect"})),
    ("pad constant 2", _fwd_bwd("nn.functional.pad", _IMG, ((2, 2, 2, 2),))),
    ("interpolate nearest x2", _interp("nearest")),
    ("interpolate bilinear x2", _interp("bilinear", align_corners=False)),
    ("dropout", _fwd_bwd("nn.functional.dropout", kwargs={"p": 0.1})),
    ("softmax(dim=1) images", _fwd_bwd("softmax", _IMG, (1,))),
    ("pixel_shuffle 2", _fwd_bwd("nn.functional.pixel_shuffle", _IMG, (2,))),
    ("unfold 3x3", _fwd_bwd("nn.functional.unfold", (8, 32, 32, 32), (3,))),
    ("cross_entropy 4096x256", _cross_entropy_build()),
    ("cross_entropy label_smoothing=0.1 4096x256", _cross_entropy_build(label_smoothing=0.1)),
    ("embedding 64x128 of 8192", _embedding_build),
    ("mse_loss", _mse_build),
    ("smooth_l1_loss none", _pair_loss_build("nn.functional.smooth_l1_loss", reduction="none")),
    ("huber_loss", _pair_loss_build("nn.functional.huber_loss")),
    (
        "bce_with_logits",
        _pair_loss_build("nn.functional.binary_cross_entropy_with_logits", binary_target=True),
    ),
    ("frac", _fwd("frac")),
    # non-contiguous inputs and integer sorts
    ("transposed: x.t() * 2", _transposed_build(lambda fw, x: x * 2)),
    ("transposed: exp(x.t())", _transposed_build(lambda fw, x: fw.module.exp(x))),
    ("transposed: x.t().amax(1)", _transposed_build(lambda fw, x: x.amax(1))),
    ("transposed: var(x.t(), 1)", _transposed_build(lambda fw, x: fw.module.var(x, 1))),
    ("transposed: logsumexp(x.t(), 1)", _transposed_build(lambda fw, x: fw.module.logsumexp(x, 1))),
    ("erfinv", _fwd("erfinv", prep=lambda fw, x: x.tanh() * 0.99)),
    ("erfc", _fwd("erfc")),
    ("histc 100 bins", _fwd("histc", args=(100, -3, 3))),
    ("prelu fwd+bwd", _prelu_build),
    ("heads copy (B,S,H,D)->(B,H,S,D)", _heads_copy_build),
    ("gather(dim=1) random", _gather_last_build),
    ("sort 1M int64", _int64_sort_build(False)),
    ("unique 1M int64 inverse counts", _int64_sort_build(True)),
    ("heads copy (B,S,H,D)->(B,H,S,D) D=32", _heads_copy_build_d32),
    ("one_hot 1M labels 10 classes", _one_hot_build),
    ("bincount 1M values 1000 bins", _bincount_build),
    ("cross 1M x 3 rows", _cross_build),
    ("trace 1024x1024", _fwd("trace")),
    ("outer 1024 x 1024", _outer_build),
    ("grid_sample bilinear fwd+bwd 8x16x64x64 at 48x48", _grid_sample_build),
    ("pdist fwd+bwd 256x64", _pdist_build),
    ("ctc_loss fwd+bwd T=50 N=16 C=20", _ctc_build),
    ("embedding_bag max fwd+bwd 2048 in 128 bags", _embedding_bag_max_build),
    ("gammainc 1024x1024", _gammainc_build),
    ("rfft 1024x1024", _rfft_build),
    ("fft complex 64x1009 (prime)", _fft_prime_build),
    ("stft fwd+bwd 8x16000 n_fft 400", _stft_build),
    ("complex mul rope fwd+bwd", _complex_mul_build),
]


for name, build in _CASES:
    register(Case(name, "ops", "GB/s", build, _N * _N * FLOAT_BYTES, frameworks=_BOTH))
