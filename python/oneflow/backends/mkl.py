"""oneflow.backends.mkl: oneflow links OpenBLAS and oneDNN, not Intel MKL."""


def is_available():
    return False
