"""nn.utils.fusion (torch.nn.utils.fusion): folding BatchNorm into the layer before it."""

from oneflow.nn.utils import (  # noqa: F401
    fuse_conv_bn_eval,
    fuse_conv_bn_weights,
    fuse_linear_bn_eval,
    fuse_linear_bn_weights,
)
