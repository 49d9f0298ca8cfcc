"""Quantization-aware training in oneflow.nn: the observers that pick a scale and zero point
(MinMaxObserver, MovingAverageMinMaxObserver), the simulated quantizers (FakeQuantization with a
straight-through gradient, Quantization), convolutions that fake-quantize their input and weight
(QatConv1d/2d/3d) and batch norm fused with an addend and ReLU (FusedBatchNorm1d/2d/3d).

Formulas follow OneFlow's kernels: "google" gives a float scale and zero point (symmetric: signed
range, zero point 0; affine: unsigned range, integral zero point), "cambricon" gives a power-of-two
shift in the scale tensor; values round half to even."""

import oneflow
from oneflow.nn import functional as F
from oneflow.nn.modules.layers import Conv1d, Conv2d, Conv3d
from oneflow.nn.modules.module import Module
from oneflow.nn.parameter import Parameter

__all__ = [
    "MinMaxObserver",
    "MovingAverageMinMaxObserver",
    "FakeQuantization",
    "Quantization",
    "QatConv1d",
    "QatConv2d",
    "QatConv3d",
    "FusedBatchNorm1d",
    "FusedBatchNorm2d",
    "FusedBatchNorm3d",
]

_FORMULAS = ("google", "cambricon")
_SCHEMES = ("symmetric", "affine")


def _check_attrs(op, formula, bit, scheme):
    if formula not in _FORMULAS:
        raise ValueError(
            f"{op}: quantization_formula must be 'google' or 'cambricon', got {formula!r}"
        )
    if isinstance(bit, bool) or not isinstance(bit, int) or not 2 <= bit <= 8:
        raise ValueError(f"{op}: quantization_bit must be an int in [2, 8], got {bit!r}")
    if scheme not in _SCHEMES:
        raise ValueError(
            f"{op}: quantization_scheme must be 'symmetric' or 'affine', got {scheme!r}"
        )


def _check_float(op, name, t):
    if not isinstance(t, oneflow.Tensor):
        raise TypeError(f"{op}: {name} must be a Tensor, got {type(t).__name__}")
    if not t.is_floating_point():
        raise TypeError(f"{op}: {name} must be a floating point tensor, got {t.dtype}")


def _signed_bounds(bit):
    return -(2.0 ** (bit - 1)), 2.0 ** (bit - 1) - 1


def _round_half_away(t):
    # The CPU kernel rounds the zero point with std::round, not the ties-to-even of the data.
    return oneflow.sign(t) * oneflow.floor(oneflow.abs(t) + 0.5)


def _cambricon_shift(abs_max, bit):
    return oneflow.floor(oneflow.log2(abs_max)) - (bit - 2)


# ---- observers --------------------------------------------------------------------------


class _Quantizer(Module):
    """The settings the observers and quantizers share (checked when set and when used)."""

    def __init__(self, quantization_formula, quantization_bit, quantization_scheme):
        super().__init__()
        _check_attrs(
            type(self).__name__, quantization_formula, quantization_bit, quantization_scheme
        )
        self.quantization_formula = quantization_formula
        self.quantization_bit = quantization_bit
        self.quantization_scheme = quantization_scheme

    def extra_repr(self):
        return (
            f"quantization_formula={self.quantization_formula!r}, "
            f"quantization_bit={self.quantization_bit}, "
            f"quantization_scheme={self.quantization_scheme!r}"
        )

    def _checked(self, op, input):
        """(formula, bit, scheme) after checking them and a non-empty float input."""
        formula, bit, scheme = (
            self.quantization_formula,
            self.quantization_bit,
            self.quantization_scheme,
        )
        _check_attrs(op, formula, bit, scheme)
        _check_float(op, "input", input)
        if input.numel() == 0:
            raise ValueError(f"{op}: expected a non-empty input")
        return formula, bit, scheme


class MinMaxObserver(_Quantizer):
    """Scale and zero point of a tensor from its min and max (OneFlow's min_max_observer).

    google/symmetric: scale = max(|max|, |min|) / (2^(bit-1) - 1), zero_point = 0.
    google/affine: scale = (max - min) / (2^bit - 1), zero_point = -round(min / scale).
    cambricon: scale = floor(log2(max(|max|, |min|))) - (bit - 2) (a shift), zero_point = 0.
    Both outputs have the input's dtype and shape (1,), or (input.shape[0],) when
    per_layer_quantization is False (google only). No gradient flows to the input."""

    def __init__(
        self,
        quantization_formula: str = "google",
        quantization_bit: int = 8,
        quantization_scheme: str = "symmetric",
        per_layer_quantization: bool = True,
    ) -> None:
        super().__init__(quantization_formula, quantization_bit, quantization_scheme)
        self.per_layer_quantization = per_layer_quantization

    def extra_repr(self):
        return f"{super().extra_repr()}, per_layer_quantization={self.per_layer_quantization}"

    def forward(self, input):
        op = "MinMaxObserver"
        formula, bit, scheme = self._checked(op, input)
        per_layer = bool(self.per_layer_quantization)
        if formula == "cambricon" and not per_layer:
            raise ValueError(f"{op}: per-channel quantization is not supported by 'cambricon'")
        if not per_layer and input.ndim == 0:
            raise ValueError(f"{op}: per-channel quantization needs at least a 1D input")
        with oneflow.no_grad():
            x = input.detach()
            rows = x.reshape(1, -1) if per_layer else x.reshape(x.shape[0], -1)
            hi = rows.max(dim=1).values
            lo = rows.min(dim=1).values
            zero_point = oneflow.zeros_like(hi)
            if formula == "cambricon":
                scale = _cambricon_shift(oneflow.maximum(hi.abs(), lo.abs()), bit)
            elif scheme == "symmetric":
                scale = oneflow.maximum(hi.abs(), lo.abs()) / (2.0 ** (bit - 1) - 1)
            else:
                scale = (hi - lo) / (2.0**bit - 1)
                zero_point = -oneflow.round(lo / scale)
        return scale, zero_point


class MovingAverageMinMaxObserver(_Quantizer):
    """Scale and zero point from moving averages of the input's min and max.

    In training mode, while current_train_step <= stop_update_after_iters, the statistics
    update as moving = moving * momentum + batch * (1 - momentum), starting from the first batch
    (a statistic still at 0 takes the batch value). Symmetric and cambricon track max(|max|,
    |min|) in both buffers; affine tracks max and min. Then symmetric: scale = moving_max /
    (2^(bit-1) - 1), zero_point = 0; affine: scale = (moving_max - moving_min) / (2^bit - 1),
    zero_point = -moving_min / scale (not rounded); cambricon: scale = floor(log2(moving_max)) -
    (bit - 2). Outputs have shape (1,) and the input's dtype. In eval mode the stored
    statistics are used unchanged."""

    def __init__(
        self,
        stop_update_after_iters: int = 1,
        quantization_formula: str = "google",
        quantization_bit: int = 8,
        quantization_scheme: str = "symmetric",
        momentum: float = 0.95,
    ) -> None:
        super().__init__(quantization_formula, quantization_bit, quantization_scheme)
        self.stop_update_after_iters = stop_update_after_iters
        self.momentum = momentum
        self.register_buffer("moving_max", oneflow.zeros(1))
        self.register_buffer("moving_min", oneflow.zeros(1))

    def reset_running_stats(self) -> None:
        self.moving_max.fill_(0)
        self.moving_min.fill_(0)

    def extra_repr(self):
        return (
            f"stop_update_after_iters={self.stop_update_after_iters}, "
            f"quantization_formula={self.quantization_formula!r}, "
            f"quantization_bit={self.quantization_bit}, "
            f"quantization_scheme={self.quantization_scheme!r}, momentum={self.momentum}"
        )

    def _ema(self, buf, value):
        m = float(self.momentum)
        value = value.to(buf.dtype)
        # A statistic still at 0 has never been observed: it starts at the batch value.
        buf.copy_(oneflow.where(buf == 0, value, buf * m + value * (1 - m)))

    def forward(self, input, current_train_step):
        op = "MovingAverageMinMaxObserver"
        formula, bit, scheme = self._checked(op, input)
        if isinstance(current_train_step, oneflow.Tensor):
            if current_train_step.numel() != 1:
                raise ValueError(f"{op}: current_train_step must hold a single value")
            step = int(current_train_step.reshape(-1)[0].item())
        else:
            step = int(current_train_step)
        with oneflow.no_grad():
            if self.training and step <= self.stop_update_after_iters:
                x = input.detach().reshape(-1)
                hi, lo = x.max().reshape(1), x.min().reshape(1)
                if scheme == "affine" and formula == "google":
                    self._ema(self.moving_max, hi)
                    self._ema(self.moving_min, lo)
                else:
                    self._ema(self.moving_max, oneflow.maximum(hi.abs(), lo.abs()))
                    self.moving_min.copy_(self.moving_max)
            mmax = self.moving_max.to(input.dtype).clone()
            mmin = self.moving_min.to(input.dtype).clone()
            zero_point = oneflow.zeros_like(mmax)
            if formula == "cambricon":
                scale = _cambricon_shift(mmax, bit)
            elif scheme == "symmetric":
                scale = mmax / (2.0 ** (bit - 1) - 1)
            else:
                scale = (mmax - mmin) / (2.0**bit - 1)
                zero_point = -mmin / scale
        return scale, zero_point


# ---- quantizers -------------------------------------------------------------------------


def _quantize(op, input, scale, zero_point, formula, bit, scheme, dequantize):
    """The integer code of input (dequantize=False) or that code mapped back to floats."""
    _check_attrs(op, formula, bit, scheme)
    _check_float(op, "input", input)
    _check_float(op, "scale", scale)
    n = scale.numel()
    if n == 0:
        raise ValueError(f"{op}: scale must not be empty")
    x = input.detach()
    s = scale.detach().to(x.dtype)
    if formula == "cambricon":
        # The scale holds a shift: the step is 2^shift, truncated to an int as the kernel does.
        step = oneflow.pow(2.0, oneflow.trunc(s.reshape(-1)[0]))
        lo, hi = _signed_bounds(bit)
        q = oneflow.clamp(oneflow.round(x / step), lo, hi)
        return q * step if dequantize else q
    if n > 1:
        # Per-channel: one scale per slice of axis 0.
        if x.ndim == 0 or n != x.shape[0]:
            raise ValueError(
                f"{op}: a per-channel scale needs input.shape[0] == scale.numel(), got "
                f"input shape {list(x.shape)} and {n} scales"
            )
        view = [n] + [1] * (x.ndim - 1)
    else:
        view = [1] * x.ndim
    s = s.reshape(view)
    if scheme == "symmetric":
        lo, hi = _signed_bounds(bit)
        q = oneflow.clamp(oneflow.round(x / s), lo, hi)
        return q * s if dequantize else q
    _check_float(op, "zero_point", zero_point)
    if zero_point.numel() != n:
        raise ValueError(
            f"{op}: zero_point must have as many elements as scale, got "
            f"{zero_point.numel()} and {n}"
        )
    zp = _round_half_away(zero_point.detach().to(x.dtype)).reshape(view)
    q = oneflow.clamp(oneflow.round(x / s + zp), 0.0, 2.0**bit - 1)
    return (q - zp) * s if dequantize else q


class _FakeQuantizeSTE(oneflow.autograd.Function):
    """Quantize-dequantize forward; the gradient passes to the input unchanged (OneFlow's
    fake_quantization grad is an identity, without a mask for clamped values)."""

    @staticmethod
    def forward(ctx, input, scale, zero_point, formula, bit, scheme):
        return _quantize("FakeQuantization", input, scale, zero_point, formula, bit, scheme, True)

    @staticmethod
    def backward(ctx, grad):
        return grad, None, None, None, None, None


class FakeQuantization(_Quantizer):
    """Simulated quantize then dequantize of the input, for training.

    google/symmetric: clamp(round(x / scale), -2^(bit-1), 2^(bit-1) - 1) * scale.
    google/affine: (clamp(round(x / scale + zp), 0, 2^bit - 1) - zp) * scale, zp the rounded
    zero_point. cambricon: as symmetric with scale 2^shift, shift = scale[0].
    A scale with more than one element quantizes per channel along axis 0. The gradient with
    respect to the input is the incoming gradient (straight-through estimator); scale and
    zero_point get none."""

    def __init__(
        self,
        quantization_formula: str = "google",
        quantization_bit: int = 8,
        quantization_scheme: str = "symmetric",
    ) -> None:
        super().__init__(quantization_formula, quantization_bit, quantization_scheme)

    def forward(self, input, scale, zero_point):
        # Validate outside the Function so errors are raised before any graph is built.
        _check_attrs(
            "FakeQuantization",
            self.quantization_formula,
            self.quantization_bit,
            self.quantization_scheme,
        )
        return _FakeQuantizeSTE.apply(
            input,
            scale,
            zero_point,
            self.quantization_formula,
            self.quantization_bit,
            self.quantization_scheme,
        )


class Quantization(_Quantizer):
    """Simulated quantize operation for inference: the integer code, stored in the input's
    dtype. google/symmetric: clamp(round(x / scale), -2^(bit-1), 2^(bit-1) - 1);
    google/affine: clamp(round(x / scale + zp), 0, 2^bit - 1) (the unsigned code, as OneFlow's
    kernel returns it); cambricon: the symmetric code with scale 2^shift. Not differentiable."""

    def __init__(
        self,
        quantization_formula: str = "google",
        quantization_bit: int = 8,
        quantization_scheme: str = "symmetric",
    ) -> None:
        super().__init__(quantization_formula, quantization_bit, quantization_scheme)

    def forward(self, input, scale, zero_point):
        with oneflow.no_grad():
            return _quantize(
                "Quantization",
                input,
                scale,
                zero_point,
                self.quantization_formula,
                self.quantization_bit,
                self.quantization_scheme,
                False,
            )


# ---- quantization-aware convolutions ----------------------------------------------------


class _QatConvMixin:
    """Observers and fake quantizer for a convolution's input (moving average, updated while
    training) and weight (min/max, per layer or per output channel)."""

    def _init_fake_quant(
        self,
        quantization_formula,
        quantization_bit,
        quantization_scheme,
        weight_quant_per_layer,
        input_quant_momentum,
    ):
        self.channel_pos = "channels_first"
        self.input_min_max_observer = MovingAverageMinMaxObserver(
            stop_update_after_iters=1,
            quantization_formula=quantization_formula,
            quantization_bit=quantization_bit,
            quantization_scheme=quantization_scheme,
            momentum=input_quant_momentum,
        )
        # Never advanced here, so the input statistics keep updating while training.
        self.register_buffer("current_train_step", oneflow.zeros(1, dtype=oneflow.int64))
        self.weight_min_max_observer = MinMaxObserver(
            quantization_formula=quantization_formula,
            quantization_bit=quantization_bit,
            quantization_scheme=quantization_scheme,
            per_layer_quantization=weight_quant_per_layer,
        )
        self.fake_quantizer = FakeQuantization(
            quantization_formula=quantization_formula,
            quantization_bit=quantization_bit,
            quantization_scheme=quantization_scheme,
        )

    def _conv_forward(self, input, weight, bias):
        fn = getattr(F, f"conv{self._dims}d")
        if self.padding_mode != "zeros":
            padded = F.pad(input, self._reversed_padding_repeated_twice(), mode=self.padding_mode)
            return fn(padded, weight, bias, self.stride, 0, self.dilation, self.groups)
        return fn(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, x):
        in_scale, in_zero_point = self.input_min_max_observer(x, self.current_train_step)
        x_q = self.fake_quantizer(x, in_scale, in_zero_point)
        w_scale, w_zero_point = self.weight_min_max_observer(self.weight)
        w_q = self.fake_quantizer(self.weight, w_scale, w_zero_point)
        return self._conv_forward(x_q, w_q, self.bias)


def _qat_conv(base, dims):
    class QatConv(_QatConvMixin, base):
        def __init__(
            self,
            in_channels: int,
            out_channels: int,
            kernel_size,
            stride=1,
            padding=0,
            dilation=1,
            groups: int = 1,
            bias: bool = True,
            padding_mode: str = "zeros",
            quantization_formula: str = "google",
            quantization_bit: int = 8,
            quantization_scheme: str = "symmetric",
            weight_quant_per_layer: bool = True,
            input_quant_momentum: float = 0.95,
        ):
            super().__init__(
                in_channels,
                out_channels,
                kernel_size,
                stride,
                padding,
                dilation,
                groups,
                bias,
                padding_mode,
            )
            self._init_fake_quant(
                quantization_formula,
                quantization_bit,
                quantization_scheme,
                weight_quant_per_layer,
                input_quant_momentum,
            )

    name = f"QatConv{dims}d"
    QatConv.__name__ = QatConv.__qualname__ = name
    QatConv.__doc__ = (
        f"A Conv{dims}d (same arguments) whose input and weight are fake-quantized before the "
        "convolution, for quantization-aware training: the input through a "
        "MovingAverageMinMaxObserver (momentum input_quant_momentum), the weight through a "
        "MinMaxObserver (per layer, or per output channel when weight_quant_per_layer is "
        "False), both through FakeQuantization with the given formula, bit width and scheme."
    )
    return QatConv


QatConv1d = _qat_conv(Conv1d, 1)
QatConv2d = _qat_conv(Conv2d, 2)
QatConv3d = _qat_conv(Conv3d, 3)


# ---- fused batch norm -------------------------------------------------------------------


class _FusedBatchNorm(Module):
    """relu(batch_norm(x) + addend), OneFlow's normalization_add_relu, with the buffers and
    parameters of OneFlow's fused batch norm (no num_batches_tracked)."""

    _expected_dims = (4,)

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-05,
        momentum: float = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
    ) -> None:
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        self.channel_axis = 1
        if affine:
            self.weight = Parameter(oneflow.ones(num_features))
            self.bias = Parameter(oneflow.zeros(num_features))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", oneflow.zeros(num_features))
            self.register_buffer("running_var", oneflow.ones(num_features))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
        # Only for momentum=None (cumulative average); kept out of the state dict as in OneFlow.
        self._batches_seen = 0

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            self.running_mean.fill_(0)
            self.running_var.fill_(1)
        self._batches_seen = 0

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        if self.affine:
            with oneflow.no_grad():
                self.weight.fill_(1)
                self.bias.fill_(0)

    def extra_repr(self):
        return (
            f"num_features={self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={self.affine}, track_running_stats={self.track_running_stats}"
        )

    def forward(self, x, addend=None):
        name = type(self).__name__
        if x.ndim not in self._expected_dims:
            dims = " or ".join(f"{d}D" for d in self._expected_dims)
            raise ValueError(f"{name}: expected {dims} input (got {x.ndim}D input)")
        if x.shape[1] != self.num_features:
            raise ValueError(
                f"{name}: expected {self.num_features} channels on axis 1, got {x.shape[1]}"
            )
        if addend is not None and tuple(addend.shape) != tuple(x.shape):
            raise ValueError(
                f"{name}: addend must have the input's shape {list(x.shape)}, got "
                f"{list(addend.shape)}"
            )
        momentum = self.momentum
        if self.training and self.track_running_stats and momentum is None:
            self._batches_seen += 1
            momentum = 1.0 / self._batches_seen
        use_batch = self.training or not self.track_running_stats
        y = F.batch_norm(
            x,
            self.running_mean if self.track_running_stats else None,
            self.running_var if self.track_running_stats else None,
            self.weight,
            self.bias,
            use_batch,
            0.0 if momentum is None else momentum,
            self.eps,
        )
        if addend is not None:
            y = y + addend
        return F.relu(y)


class FusedBatchNorm1d(_FusedBatchNorm):
    """relu(BatchNorm1d(x) + addend) over an (N, C) or (N, C, L) input; forward(x, addend=None)
    with addend of the input's shape, or None for relu(BatchNorm1d(x))."""

    _expected_dims = (2, 3)


class FusedBatchNorm2d(_FusedBatchNorm):
    """relu(BatchNorm2d(x) + addend) over an (N, C, H, W) input; forward(x, addend=None) with
    addend of the input's shape, or None for relu(BatchNorm2d(x))."""

    _expected_dims = (4,)


class FusedBatchNorm3d(_FusedBatchNorm):
    """relu(BatchNorm3d(x) + addend) over an (N, C, D, H, W) input; forward(x, addend=None)
    with addend of the input's shape, or None for relu(BatchNorm3d(x))."""

    _expected_dims = (5,)
