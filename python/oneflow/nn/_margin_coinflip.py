"""oneflow.nn.CoinFlip and oneflow.nn.CombinedMarginLoss, composed of existing oneflow ops.

CoinFlip draws a batch of Bernoulli(probability) values as an int8 tensor of 0/1, from its own
generator when a random_seed is given, as a local tensor on `device` or a global one with
`placement` and `sbp`. Inside a traced nn.Graph build() it is part of the data pipeline: it
draws on the host before each replay (nn/modules/dataset.py).

CombinedMarginLoss replaces the target entry x[i, label[i]] of a batch of cosines by
cos(m1 * acos(x) + m2) - m3 (ArcFace, CosFace and SphereFace margins in one formula) and leaves
every other entry unchanged; a row whose label is outside [0, C) is left unchanged, with its
gradient passed straight through."""

import numbers

import oneflow
from oneflow.nn.modules.dataset import DataModule
from oneflow.nn.modules.module import Module

__all__ = ["CoinFlip", "CombinedMarginLoss"]


def _is_int(v):
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def _is_real(v):
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


class CoinFlip(DataModule):
    """Random 0/1 values following a Bernoulli distribution: forward() returns an int8 tensor of
    shape (batch_size,) whose entries are 1 with probability `probability`.

    Args:
        batch_size (int): number of values drawn per call. Default: 1
        random_seed (int, optional): seed of a generator owned by this module, so that two
            modules with the same seed give the same sequence. Default: None (the default
            generator)
        probability (float): probability of a 1, in [0, 1]. Default: 0.5
        device (oneflow.device or str, optional): device of the local result. Default: cpu
        placement (oneflow.placement, optional): makes the result a global tensor on this
            placement; excludes `device`. Default: None
        sbp (oneflow.sbp.sbp or a sequence of them, optional): sbp of the global result; given
            exactly when `placement` is. Default: None
    """

    def __init__(
        self,
        batch_size=1,
        random_seed=None,
        probability=0.5,
        device=None,
        placement=None,
        sbp=None,
    ):
        super().__init__()
        if not _is_int(batch_size) or batch_size < 0:
            raise ValueError(f"CoinFlip: batch_size must be a non-negative int, got {batch_size!r}")
        if not _is_real(probability) or not 0.0 <= float(probability) <= 1.0:
            raise ValueError(f"CoinFlip: probability must be in [0, 1], got {probability!r}")
        if random_seed is not None and not _is_int(random_seed):
            raise TypeError(f"CoinFlip: random_seed must be an int or None, got {random_seed!r}")
        if placement is not None:
            if device is not None:
                raise ValueError("CoinFlip: give either device or placement, not both")
            if not isinstance(placement, oneflow.placement):
                raise TypeError(
                    f"CoinFlip: placement must be an oneflow.placement, got "
                    f"{type(placement).__name__}"
                )
            if sbp is None:
                raise ValueError("CoinFlip: sbp is required with a placement")
            if isinstance(sbp, (tuple, list)):
                if len(sbp) != 1:
                    raise ValueError(
                        f"CoinFlip: expected one sbp for a 1-D placement, got {len(sbp)}"
                    )
                sbp = sbp[0]
            if not isinstance(sbp, oneflow.sbp.sbp):
                raise TypeError(f"CoinFlip: sbp must be an oneflow.sbp.sbp, got {sbp!r}")
            self.device = None
            gen_device = placement.type
        else:
            if sbp is not None:
                raise ValueError("CoinFlip: sbp was given without a placement")
            self.device = oneflow.device("cpu") if device is None else oneflow.device(device)
            gen_device = self.device.type
        self.batch_size = int(batch_size)
        self.probability = float(probability)
        self.random_seed = random_seed
        self.placement = placement
        self.sbp = sbp
        self.generator = None
        if random_seed is not None:
            self.generator = oneflow.Generator(gen_device)
            self.generator.manual_seed(int(random_seed))

    def forward(self):
        if self.placement is not None:
            u = oneflow.rand(
                self.batch_size,
                placement=self.placement,
                sbp=self.sbp,
                generator=self.generator,
            )
        else:
            u = oneflow.rand(self.batch_size, device=self.device, generator=self.generator)
        # rand lies in [0, 1): probability 0 never gives a 1 and probability 1 always does.
        return (u < self.probability).to(oneflow.int8)

    def extra_repr(self):
        return (
            f"batch_size={self.batch_size}, probability={self.probability}, "
            f"random_seed={self.random_seed}"
        )


class CombinedMarginLoss(Module):
    """The combined angular margin of InsightFace's margin softmax:

        y[i, j] = cos(m1 * acos(x[i, j]) + m2) - m3   if j == label[i]
        y[i, j] = x[i, j]                             otherwise

    m1=1, m2>0, m3=0 is ArcFace, m1=1, m2=0, m3>0 is CosFace (AM-Softmax) and m1>1, m2=m3=0 is
    A-Softmax. With m1=1 and m2=0 the target becomes x - m3 directly.

    forward(x, label): x holds cosines of shape (N, C, ...) (axes after the first are taken as the
    classes, flattened), label integer class indices of shape (N,). A label outside [0, C) leaves
    its row unchanged. The result has x's shape and dtype; gradients flow to x.
    """

    def __init__(self, m1=1.0, m2=0.0, m3=0.0):
        super().__init__()
        for name, v in (("m1", m1), ("m2", m2), ("m3", m3)):
            if not _is_real(v):
                raise TypeError(f"CombinedMarginLoss: {name} must be a float, got {v!r}")
        self.m1 = float(m1)
        self.m2 = float(m2)
        self.m3 = float(m3)

    def forward(self, x, label):
        if not isinstance(x, oneflow.Tensor) or not isinstance(label, oneflow.Tensor):
            raise TypeError("CombinedMarginLoss: x and label must be tensors")
        if not x.is_floating_point():
            raise TypeError(f"CombinedMarginLoss: x must be floating point, got {x.dtype}")
        if label.dtype.is_floating_point or label.dtype == oneflow.bool:
            raise TypeError(
                f"CombinedMarginLoss: label must be an integer tensor, got {label.dtype}"
            )
        if x.dim() < 2:
            raise ValueError(f"CombinedMarginLoss: x must have at least 2 dims, got {x.dim()}")
        n = x.shape[0]
        if label.dim() < 1 or label.shape[0] != n or label.numel() != n:
            raise ValueError(
                f"CombinedMarginLoss: label must have shape ({n},) to match x, got "
                f"{tuple(label.shape)}"
            )
        shape = x.shape
        x2 = x.reshape(n, -1)
        c = x2.shape[1]
        label = label.reshape(n).to(oneflow.int64)
        if x.is_global:
            cols = oneflow.arange(
                c, dtype=oneflow.int64, placement=x.placement, sbp=oneflow.sbp.broadcast
            )
        else:
            cols = oneflow.arange(c, dtype=oneflow.int64, device=x.device)
        mask = label.unsqueeze(1) == cols.unsqueeze(0)  # (N, C), no True in invalid rows
        valid = (label >= 0) & (label < c)
        # Invalid rows read column 0 (a 0 is put in its place) so that no NaN reaches them.
        safe = oneflow.where(valid, label, oneflow.zeros_like(label)).unsqueeze(1)
        target = oneflow.gather(x2, 1, safe)
        target = oneflow.where(valid.unsqueeze(1), target, oneflow.zeros_like(target))
        if self.m1 == 1.0 and self.m2 == 0.0:
            margin = target - self.m3
        else:
            margin = oneflow.cos(oneflow.acos(target) * self.m1 + self.m2) - self.m3
        out = oneflow.where(mask, margin, x2)
        return out.reshape(shape)

    def extra_repr(self):
        return f"m1={self.m1}, m2={self.m2}, m3={self.m3}"
