"""oneflow.backends: facts and switches of the kernels' back ends, as torch.backends."""

from oneflow.backends import cpu, cuda, cudnn, mha, mkl, mkldnn, mps, openmp  # noqa: F401
