"""oneflow.boxing: settings of OneFlow's collective communication between layouts (boxing).
Scripts written for OneFlow set them before training (oneflow.boxing.nccl.*); they are kept
here (`settings()`) and have no effect: boxing runs one collective per conversion on the
communication stream (docs/global.md), with no fusion, buffers or stream choices to tune."""

from oneflow.boxing import nccl  # noqa: F401


def enable_fusion(val=True):
    """OneFlow's fusion of boxing collectives; kept, without effect."""
    nccl._set("enable_fusion", val)
