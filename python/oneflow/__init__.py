"""OneFlow: a deep learning framework with a C++ core, used as ``import oneflow as flow``."""


def _select_openblas_kernels():
    """Debian's OpenBLAS falls back to its generic x86 kernels (core "Prescott") on CPUs its
    cpuid table does not name, e.g. recent Xeons under a hypervisor: float64 GEMM then runs ~5x
    slower. Unless the user chose, name the kernels the CPU's flags allow. OpenBLAS reads the
    variable when it is loaded, so this runs before the native module is imported."""
    import os

    if "OPENBLAS_CORETYPE" in os.environ:
        return
    try:
        with open("/proc/cpuinfo") as f:
            flags = next(
                (line.split(":", 1)[1].split() for line in f if line.startswith("flags")), []
            )
    except OSError:
        return
    if {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= set(flags):
        os.environ["OPENBLAS_CORETYPE"] = "SkylakeX"
    elif {"avx2", "fma"} <= set(flags):
        os.environ["OPENBLAS_CORETYPE"] = "Haswell"


_select_openblas_kernels()

from oneflow import _oneflow_internal


def _start_eager_engine():
    """CPU ops run asynchronously on the eager engine's stream thread (see docs/eager.md).
    Frames under this folder are the framework's: a failing queued kernel names the user's
    line that issued it. Queued work finishes at exit (a kernel error not yet reported is printed)
    and before fork()."""
    import atexit
    import os

    _oneflow_internal._set_package_dir(os.path.dirname(os.path.abspath(__file__)) + os.sep)
    atexit.register(_oneflow_internal._drain_at_exit)
    os.register_at_fork(before=_oneflow_internal._drain)
    _oneflow_internal._hook_sigint()  # Ctrl-C drops the queued ops


_start_eager_engine()
from oneflow._oneflow_internal import (
    Tensor,
    bfloat16,
    bool,
    complex64,
    complex128,
    device,
    dtype,
    float16,
    float32,
    float64,
    from_numpy,
    get_default_dtype,
    int8,
    int16,
    int32,
    int64,
    promote_types,
    set_default_dtype,
    uint8,
)
from oneflow._oneflow_internal import _C  # noqa: F401  (oneflow._C, the functional API)
from oneflow._oneflow_internal._C import Generator, default_generator

import sys as _sys

_sys.modules["oneflow._C"] = _C

# dtype aliases, as in OneFlow and PyTorch
float = float32
double = float64
half = float16
int = int32
long = int64
char = int8
short = int16
cfloat = complex64
cdouble = complex128

from oneflow.framework.size import Size  # noqa: E402
from oneflow.framework import tensor_methods as _tensor_methods  # noqa: E402
from oneflow.framework import global_tensor as _global_tensor  # noqa: E402
from oneflow.framework.tensor_str import set_printoptions  # noqa: E402,F401
from oneflow.framework.creation import (  # noqa: E402,F401
    as_tensor,
    empty,
    empty_like,
    empty_strided,
    eye,
    full_like,
    get_rng_state,
    logspace,
    normal,
    rand,
    rand_like,
    randint,
    randn_like,
    set_rng_state,
    full,
    manual_seed,
    initial_seed,
    ones,
    ones_like,
    randn,
    scalar_tensor,
    seed,
    tensor,
    tril_indices,
    triu_indices,
    zeros,
    zeros_like,
)
from oneflow.framework.placement import placement  # noqa: E402,F401
from oneflow.framework.dtype_info import finfo, iinfo  # noqa: E402,F401
from oneflow.autograd import (  # noqa: E402,F401
    enable_grad,
    inference_mode,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_anomaly_enabled,
    set_grad_enabled,
)
from oneflow import autograd, backends, cpu, cuda, linalg, nn, optim, sbp, utils  # noqa: E402,F401
from oneflow import boxing, comm, distributed, env  # noqa: E402,F401
from oneflow.utils.dlpack import from_dlpack, to_dlpack  # noqa: E402,F401

_tensor_methods.install()
_global_tensor.install()

add = _C.add
sub = _C.sub
mul = _C.mul
matmul = _C.matmul
relu = _C.relu
sum = _C.sum
neg = _C.neg
div = _C.div
true_divide = _C.div
exp = _C.exp
where = _C.where
abs = _C.abs
sqrt = _C.sqrt
rsqrt = _C.rsqrt
log = _C.log
log1p = _C.log1p
sin = _C.sin
cos = _C.cos
tanh = _C.tanh
sigmoid = _C.sigmoid
floor = _C.floor
ceil = _C.ceil
round = _C.round
reciprocal = _C.reciprocal
eq = _C.eq
ne = _C.ne
lt = _C.lt
le = _C.le
gt = _C.gt
ge = _C.ge
greater = _C.gt
pow = _C.pow
maximum = _C.maximum
minimum = _C.minimum
clamp = _C.clamp
clip = _C.clamp
less = _C.lt


def nonzero(input, *, as_tuple=False):
    return input.nonzero(as_tuple=as_tuple)


mean = _C.mean
softmax = _C.softmax
narrow = _C.narrow
as_strided = _C.as_strided
diagonal = _C.diagonal


def bernoulli(input, p=None, *, generator=None):
    """Draws 0 or 1 per element with the probability in input, or with `p` (a number) for every
    element of input's shape and dtype (PyTorch's bernoulli(input, p))."""
    if p is None:
        return _C.bernoulli(input, generator=generator)
    dt = input.dtype if input.dtype.is_floating_point else float32
    probs = full(tuple(input.shape), p * 1.0, dtype=dt, device=input.device)  # (float: the dtype)
    return _C.bernoulli(probs, generator=generator).to(input.dtype)


from oneflow.framework.creation import randperm  # noqa: E402,F401

multinomial = _C.multinomial
select = _C.select
squeeze = _C.squeeze
unsqueeze = _C.unsqueeze
flatten = _C.flatten
arange = _C.arange
from oneflow.framework.creation import linspace  # noqa: E402,F401

chunk = _tensor_methods.chunk
split = _tensor_methods.split
unbind = _tensor_methods.unbind

negative = _C.neg
reshape = _C.reshape
transpose = _C.transpose
permute = _C.permute
clone = _C.clone
view_as_real = _C.view_as_real
view_as_complex = _C.view_as_complex
complex = _C.complex
polar = _C.polar
result_type = _C.result_type


def mm(input, mat2):
    """Matrix product of two 2-D tensors."""
    if input.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError(f"mm: expected 2-D tensors, got {input.ndim}-D and {mat2.ndim}-D")
    return _C.matmul(input, mat2)


def is_tensor(obj):
    return isinstance(obj, Tensor)


def numel(input):
    return input.numel()


from oneflow import version  # noqa: E402  (oneflow.version, as torch.version)
from oneflow.version import __version__  # noqa: E402

del _sys

from oneflow.framework import linalg_decomp as _linalg_decomp  # noqa: E402
from oneflow.framework import linalg_ops as _linalg_ops  # noqa: E402
from oneflow.framework import math_extra as _math_extra  # noqa: E402
from oneflow.framework import math_ops as _math_ops  # noqa: E402
from oneflow.framework import misc_ops as _misc_ops  # noqa: E402
from oneflow.framework import movement_ops as _movement_ops  # noqa: E402
from oneflow.framework import reduce_ops as _reduce_ops  # noqa: E402
from oneflow.framework import torch_compat as _torch_compat  # noqa: E402
from oneflow.framework import tensor_extra as _tensor_extra  # noqa: E402

globals().update(_math_ops.functions())
globals().update(_math_extra.functions())
globals().update(_torch_compat.functions())
globals().update(_tensor_extra.functions())
from oneflow.framework import special_extra as _special_extra  # noqa: E402

globals().update(_special_extra.top_level())
globals().update(_reduce_ops.functions())
globals().update(_movement_ops.functions())
globals().update(_linalg_ops.functions())
globals().update(_linalg_decomp.functions())
globals().update(_misc_ops.functions())
from oneflow.framework import torch_extra_functions as _torch_extra_functions  # noqa: E402

globals().update(_torch_extra_functions.functions())
for _name, _method in _torch_extra_functions.methods().items():
    setattr(Tensor, _name, _method)
del _method
from oneflow.framework import determinism as _determinism  # noqa: E402
from oneflow.framework.compile import compile  # noqa: E402,F401

globals().update(_determinism.functions())
from oneflow.nn import functional as _nnf  # noqa: E402

for _name in [
    "selu",
    "silu",
    "mish",
    "softplus",
    "softsign",
    "gelu",
    "relu6",
    "logsigmoid",
    "hardswish",
    "hardsigmoid",
    "hardtanh",
    "log_softmax",
    "prelu",
    "celu",
    "elu",
]:
    globals()[_name] = getattr(_nnf, _name)
# Convolution and pooling at top level, as torch has them (torch.conv2d, torch.max_pool2d, ...).
from oneflow.nn._conv_pool import (  # noqa: E402,F401
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_avg_pool3d,
    adaptive_max_pool1d,
    avg_pool1d,
    conv1d,
    conv2d,
    conv3d,
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose3d,
    max_pool1d,
    max_pool2d,
    max_pool3d,
)

set_num_threads = _C.set_num_threads
get_num_threads = _C.get_num_threads
from oneflow.framework.serialization import load, save  # noqa: E402,F401
from oneflow import special  # noqa: E402,F401  (its names are the functions above)
from oneflow import fft  # noqa: E402,F401
from oneflow.framework.spectral import istft, stft  # noqa: E402,F401
from oneflow import amp  # noqa: E402,F401
from oneflow.amp import (  # noqa: E402,F401
    autocast,
    autocast_decrement_nesting,
    autocast_increment_nesting,
    clear_autocast_cache,
    get_autocast_cpu_dtype,
    get_autocast_dtype,
    get_autocast_gpu_dtype,
    is_autocast_cache_enabled,
    is_autocast_cpu_enabled,
    is_autocast_enabled,
    set_autocast_cache_enabled,
    set_autocast_cpu_dtype,
    set_autocast_cpu_enabled,
    set_autocast_dtype,
    set_autocast_enabled,
    set_autocast_gpu_dtype,
)
from oneflow.cuda import amp as _cuda_amp  # noqa: E402,F401  (oneflow.cuda.amp)
from oneflow.cpu import amp as _cpu_amp  # noqa: E402,F401  (oneflow.cpu.amp)
from oneflow import distributions  # noqa: E402,F401
from oneflow import hub  # noqa: E402,F401
from oneflow import one_embedding  # noqa: E402,F401
from oneflow import profiler  # noqa: E402,F401
from oneflow import func  # noqa: E402,F401
from oneflow import testing  # noqa: E402,F401
from oneflow import multiprocessing  # noqa: E402,F401
from oneflow import _dynamo, accelerator, compiler, jit, random  # noqa: E402,F401
from oneflow import serialization  # noqa: E402,F401  (torch.serialization)
from oneflow.framework import c_compat as _c_compat  # noqa: E402

_c_compat.install()  # OneFlow's functional names on oneflow._C that oneflow has no kernel for
from oneflow.framework.global_tensor import to_global, to_local  # noqa: E402,F401
from oneflow.framework import memory_format as _memory_format  # noqa: E402
from oneflow.framework import out_arg as _out_arg  # noqa: E402
from oneflow.framework import torch_namespace as _torch_namespace  # noqa: E402

globals().update(_torch_namespace.functions())
from oneflow.framework import foreach_ops as _foreach_ops  # noqa: E402

globals().update(_foreach_ops.functions())
_torch_namespace.install()

_memory_format.install(__import__(__name__))
from oneflow.framework import autocast_fp32 as _autocast_fp32  # noqa: E402

_autocast_fp32.install(__import__(__name__))
from oneflow.framework import storage as _storage  # noqa: E402

_storage.install(__import__(__name__))

from oneflow.framework import toplevel_extra as _toplevel_extra  # noqa: E402

globals().update(_toplevel_extra.functions())
from oneflow.framework import generator as _generator  # noqa: E402

_generator.install(__import__(__name__))
from oneflow import _inductor, mps, return_types, xpu  # noqa: E402,F401

_out_arg.install(__import__(__name__))
