"""oneflow.nn.functional."""

from oneflow import _oneflow_internal as _internal
from oneflow._oneflow_internal import _C


def relu(input, inplace=False):
    if inplace:  # the result written back into input: version-counted, differentiable
        return _C.copy_(input, _C.relu(input))
    return _C.relu(input)


# Keywords go to _C only when not their default: pybind11 matches them by name on every call.
def gelu(input, approximate="none"):
    if approximate == "none":
        return _C.gelu(input)
    return _C.gelu(input, approximate=approximate)


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if isinstance(_stacklevel, _internal.dtype):  # dtype passed third (an older signature)
        dtype = _stacklevel
    if dim is None:
        from oneflow.nn._activations_losses import implicit_softmax_dim

        dim = implicit_softmax_dim("softmax", input.ndim)
    elif not isinstance(dim, int):
        from oneflow.nn._activations_losses import softmax_dim_arg

        dim = softmax_dim_arg("softmax", dim)
    if dtype is None:
        return _C.softmax(input, dim)
    return _C.softmax(input, dim, dtype=dtype)


def sigmoid(input):
    return _C.sigmoid(input)


def tanh(input):
    return _C.tanh(input)


from oneflow.nn._activations_losses import *  # noqa: E402,F401,F403
from oneflow.nn._conv_pool import *  # noqa: E402,F401,F403
from oneflow.nn._deform_conv import *  # noqa: E402,F401,F403
from oneflow.nn._extra2_functional import *  # noqa: E402,F401,F403
from oneflow.nn._extra_functional import *  # noqa: E402,F401,F403
from oneflow.nn._oneflow_functional import *  # noqa: E402,F401,F403
from oneflow.nn._spatial import *  # noqa: E402,F401,F403
from oneflow.nn.modules.fractional import (  # noqa: E402,F401
    fractional_max_pool2d,
    fractional_max_pool2d_with_indices,
    fractional_max_pool3d,
    fractional_max_pool3d_with_indices,
)
