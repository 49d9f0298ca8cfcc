"""oneflow.backends.mkldnn: oneDNN (formerly MKL-DNN), which the CPU kernels use for float32
products, convolutions and more. `enabled` and flags() are kept as torch.backends.mkldnn's; the
kernels use oneDNN regardless."""

import contextlib

enabled = True
deterministic = False


def is_available():
    return True


@contextlib.contextmanager
def flags(enabled=False, deterministic=False):
    g = globals()
    saved = (g["enabled"], g["deterministic"])
    g.update(enabled=enabled, deterministic=deterministic)
    try:
        yield
    finally:
        g["enabled"], g["deterministic"] = saved
