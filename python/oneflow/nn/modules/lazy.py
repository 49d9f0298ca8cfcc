"""Lazy convolutions and normalisations (PyTorch's LazyConv1d/2d/3d, LazyConvTranspose1d/2d/3d,
LazyBatchNorm1d/2d/3d, LazyInstanceNorm1d/2d/3d): the input channels come from the first
input. Until then the parameters and buffers are empty placeholders with their final names;
the first forward resizes those same tensors in place, initialises them as the eager module
would, and turns the module into its plain class (PyTorch's cls_to_become), so an optimizer
built before the first call trains them."""

import oneflow
from oneflow.nn.modules.layers import (
    BatchNorm1d,
    BatchNorm2d,
    BatchNorm3d,
    Conv1d,
    Conv2d,
    Conv3d,
    ConvTranspose1d,
    ConvTranspose2d,
    ConvTranspose3d,
    InstanceNorm1d,
    InstanceNorm2d,
    InstanceNorm3d,
    Linear,
)
from oneflow.nn.modules.module import Module
from oneflow.nn.parameter import UninitializedBuffer, UninitializedParameter

__all__ = [
    "LazyModuleMixin",
    "LazyBatchNorm1d",
    "LazyBatchNorm2d",
    "LazyBatchNorm3d",
    "LazyConv1d",
    "LazyConv2d",
    "LazyConv3d",
    "LazyConvTranspose1d",
    "LazyConvTranspose2d",
    "LazyConvTranspose3d",
    "LazyInstanceNorm1d",
    "LazyInstanceNorm2d",
    "LazyInstanceNorm3d",
    "LazyLinear",
]


_REGISTRIES = ("_parameters", "_buffers", "_modules", "_non_persistent_buffers")


class _LazyModule(Module):
    cls_to_become = None
    _spatial = 0  # the dims after the channels of one sample

    def __init__(self, *args, **kwargs):
        Module.__init__(self)
        self._lazy_args, self._lazy_kwargs = args, kwargs
        template = self.cls_to_become(1, *args, **kwargs)  # for the names and flags
        for name, p in template._parameters.items():
            if p is None:
                self.register_parameter(name, None)
            else:
                placeholder = UninitializedParameter(p.requires_grad, p.device, p.dtype)
                self.register_parameter(name, placeholder)
        # the plain attributes (out_channels, kernel_size, affine, ...) as the template's; the
        # channel count 0 until the first input, as PyTorch's
        for key, value in template.__dict__.items():
            if key not in _REGISTRIES and "hook" not in key and key != "training":
                self.__dict__[key] = value
        for key in ("in_channels", "num_features", "in_features"):
            if key in self.__dict__:
                self.__dict__[key] = 0
        for name, b in template._buffers.items():
            empty = None if b is None else UninitializedBuffer(False, b.device, b.dtype)
            self.register_buffer(
                name, empty, persistent=name not in template._non_persistent_buffers
            )

    def has_uninitialized_params(self):
        return True

    def reset_parameters(self):
        """Nothing to reset before the first input gives the parameters their shapes."""

    def extra_repr(self):
        # the plain class's text over this module's attributes (and that class's constants)
        view = object.__new__(self.cls_to_become)
        view.__dict__.update(self.__dict__)
        return view.extra_repr()

    def _in_channels(self, input):
        if input.ndim == self._spatial + 1:  # an unbatched input
            return input.shape[0]
        if input.ndim != self._spatial + 2:
            raise ValueError(
                f"{type(self).__name__}: expected a {self._spatial + 1}-D (unbatched) or "
                f"{self._spatial + 2}-D (batched) input, got {input.ndim}-D"
            )
        return input.shape[1]

    def initialize_parameters(self, input):
        real = self.cls_to_become(self._in_channels(input), *self._lazy_args, **self._lazy_kwargs)
        with oneflow.no_grad():
            for name, p in real._parameters.items():
                mine = self._parameters.get(name)
                if p is None or mine is None:
                    continue
                mine.materialize(p.shape)  # the same object: optimizers keep it
                mine.copy_(p)
            for name, b in real._buffers.items():
                if b is not None and self._buffers.get(name) is not None:
                    self._buffers[name] = b
        for key, value in real.__dict__.items():
            if key not in _REGISTRIES and "hook" not in key and key != "training":
                self.__dict__[key] = value
        del self.__dict__["_lazy_args"], self.__dict__["_lazy_kwargs"]
        self.__class__ = self.cls_to_become

    def forward(self, input, *args, **kwargs):
        self.initialize_parameters(input)
        return self.forward(input, *args, **kwargs)


# PyTorch's name of the lazy modules' base. The lazy linear and convolution modules also derive
# from their plain classes, so that isinstance(nn.LazyLinear(2), nn.Linear) holds, as PyTorch's.
LazyModuleMixin = _LazyModule


class LazyLinear(_LazyModule, Linear):
    cls_to_become = Linear

    def _in_channels(self, input):
        if input.ndim == 0:
            raise ValueError("LazyLinear: expected an input of at least 1 dimension, got 0-D")
        return input.shape[-1]


class LazyConv1d(_LazyModule, Conv1d):
    cls_to_become, _spatial = Conv1d, 1


class LazyConv2d(_LazyModule, Conv2d):
    cls_to_become, _spatial = Conv2d, 2


class LazyConv3d(_LazyModule, Conv3d):
    cls_to_become, _spatial = Conv3d, 3


class LazyConvTranspose1d(_LazyModule, ConvTranspose1d):
    cls_to_become, _spatial = ConvTranspose1d, 1


class LazyConvTranspose2d(_LazyModule, ConvTranspose2d):
    cls_to_become, _spatial = ConvTranspose2d, 2


class LazyConvTranspose3d(_LazyModule, ConvTranspose3d):
    cls_to_become, _spatial = ConvTranspose3d, 3


class LazyBatchNorm1d(_LazyModule):
    cls_to_become = BatchNorm1d

    def _in_channels(self, input):  # (N, C) or (N, C, L)
        if input.ndim not in (2, 3):
            raise ValueError(f"LazyBatchNorm1d: expected 2D or 3D input (got {input.ndim}D input)")
        return input.shape[1]


class LazyBatchNorm2d(_LazyModule):
    cls_to_become, _spatial = BatchNorm2d, 2


class LazyBatchNorm3d(_LazyModule):
    cls_to_become, _spatial = BatchNorm3d, 3


class _LazyInstanceNorm(_LazyModule):
    # PyTorch's lazy instance norms learn an affine map and track running statistics by default
    # (InstanceNorm itself does neither)
    def __init__(self, *args, **kwargs):
        if len(args) < 3:
            kwargs.setdefault("affine", True)
        if len(args) < 4:
            kwargs.setdefault("track_running_stats", True)
        super().__init__(*args, **kwargs)


class LazyInstanceNorm1d(_LazyInstanceNorm):
    cls_to_become, _spatial = InstanceNorm1d, 1


class LazyInstanceNorm2d(_LazyInstanceNorm):
    cls_to_become, _spatial = InstanceNorm2d, 2


class LazyInstanceNorm3d(_LazyInstanceNorm):
    cls_to_become, _spatial = InstanceNorm3d, 3
