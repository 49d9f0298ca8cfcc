"""Helpers shared by the cases: float32 random data and op lookup per framework."""

_SEED = 0


def randn(fw, *shape):
    """A float32 standard-normal tensor (or ndarray) of ``shape`` on ``fw``'s device."""
    if fw.name == "numpy":
        rng = fw.module.random.default_rng(_SEED)
        return rng.standard_normal(shape, dtype=fw.module.float32)
    fw.module.manual_seed(_SEED)
    return fw.module.randn(*shape, device=fw.device)


def op(fw, path):
    """``fw.module`` attribute at dotted ``path``; AttributeError means 'missing op'."""
    target = fw.module
    for part in path.split("."):
        target = getattr(target, part)
    return target


MB = 1024 * 1024
FLOAT_BYTES = 4
