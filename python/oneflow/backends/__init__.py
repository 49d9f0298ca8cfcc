"""oneflow.backends: facts and switches of the kernels' back ends, as torch.backends."""

from oneflow.backends import (  # noqa: F401
    cpu,
    cuda,
    cudnn,
    mha,
    mkl,
    mkldnn,
    mps,
    openmp,
    opt_einsum,
)
