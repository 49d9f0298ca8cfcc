"""The layers of oneflow.nn: linear, convolution, pooling, normalisation, dropout, embedding,
activations, padding, resampling and attention modules (the losses are in modules/loss.py), with
PyTorch's constructor arguments, initialisation and extra_repr. Each forwards to
oneflow.nn.functional."""

import math

import oneflow
from oneflow.nn import functional as F
from oneflow.nn import init
from oneflow.nn.modules.module import Module
from oneflow.nn.parameter import Parameter


def _ntuple(n):
    def parse(x):
        if isinstance(x, (list, tuple)):
            return tuple(x)
        return (x,) * n

    return parse


_single, _pair, _triple = _ntuple(1), _ntuple(2), _ntuple(3)


def _factory(device=None, dtype=None):
    return {"device": device, "dtype": dtype}


_HALF = (oneflow.float16, oneflow.bfloat16)


class Identity(Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.weight = Parameter(oneflow.empty(out_features, in_features, **_factory(device, dtype)))
        if bias:
            self.bias = Parameter(oneflow.empty(out_features, **_factory(device, dtype)))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = self.weight.shape[1]
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )


class Bilinear(Module):
    def __init__(
        self, in1_features, in2_features, out_features, bias=True, device=None, dtype=None
    ):
        super().__init__()
        self.in1_features, self.in2_features = in1_features, in2_features
        self.out_features = out_features
        self.weight = Parameter(
            oneflow.empty(out_features, in1_features, in2_features, **_factory(device, dtype))
        )
        if bias:
            self.bias = Parameter(oneflow.empty(out_features, **_factory(device, dtype)))
        else:
            self.register_parameter("bias", None)
        bound = 1 / math.sqrt(in1_features)
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (
            f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
            f"out_features={self.out_features}, bias={self.bias is not None}"
        )


class Flatten(Module):
    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    def __init__(self, dim, unflattened_size):
        super().__init__()
        self.dim, self.unflattened_size = dim, tuple(unflattened_size)

    def forward(self, input):
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


# ---- convolution ------------------------------------------------------------------------


class _ConvNd(Module):
    _dims = 2
    _transposed = False

    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size,
        stride=1,
        padding=0,
        dilation=1,
        groups=1,
        bias=True,
        padding_mode="zeros",
        device=None,
        dtype=None,
        output_padding=0,
    ):
        super().__init__()
        tup = _ntuple(self._dims)
        if in_channels % groups:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups:
            raise ValueError("out_channels must be divisible by groups")
        if padding_mode not in ("zeros", "reflect", "replicate", "circular"):
            raise ValueError("padding_mode must be one of zeros, reflect, replicate, circular")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride = tup(kernel_size), tup(stride)
        self.padding = padding if isinstance(padding, str) else tup(padding)
        self.dilation, self.groups = tup(dilation), groups
        self.padding_mode, self.output_padding = padding_mode, tup(output_padding)
        if self._transposed:
            shape = (in_channels, out_channels // groups) + self.kernel_size
        else:
            shape = (out_channels, in_channels // groups) + self.kernel_size
        self.weight = Parameter(oneflow.empty(*shape, **_factory(device, dtype)))
        if bias:
            self.bias = Parameter(oneflow.empty(out_channels, **_factory(device, dtype)))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        s = (
            f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
            f"stride={self.stride}"
        )
        if self.padding != (0,) * self._dims:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * self._dims:
            s += f", dilation={self.dilation}"
        if self._transposed and self.output_padding != (0,) * self._dims:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s

    def _reversed_padding_repeated_twice(self):
        """F.pad's (left, right) pairs, last dim first: 'same' puts the extra element of an
        odd total padding on the right, as PyTorch."""
        if self.padding == "valid":
            return [0, 0] * self._dims
        pads = []
        for i in reversed(range(self._dims)):
            if self.padding == "same":
                total = self.dilation[i] * (self.kernel_size[i] - 1)
                pads += [total // 2, total - total // 2]
            else:
                pads += [self.padding[i], self.padding[i]]
        return pads

    def forward(self, input):
        fn = getattr(F, f"conv{self._dims}d")
        if self.padding_mode != "zeros":
            return fn(
                F.pad(input, self._reversed_padding_repeated_twice(), mode=self.padding_mode),
                self.weight,
                self.bias,
                self.stride,
                0,
                self.dilation,
                self.groups,
            )
        return fn(
            input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups
        )


class Conv1d(_ConvNd):
    _dims = 1


class Conv2d(_ConvNd):
    _dims = 2


class Conv3d(_ConvNd):
    _dims = 3


class _ConvTransposeNd(_ConvNd):
    _transposed = True

    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size,
        stride=1,
        padding=0,
        output_padding=0,
        groups=1,
        bias=True,
        dilation=1,
        padding_mode="zeros",
        device=None,
        dtype=None,
    ):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
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
            device,
            dtype,
            output_padding,
        )

    def _output_padding_for(self, input, output_size):
        """The output padding that makes the output `output_size` (its spatial sizes, or with
        the batch and channel dims too), which must lie within stride - 1 of the smallest."""
        n = self._dims
        lead = 2 if input.ndim == n + 2 else 1
        sizes = [int(v) for v in output_size]
        if len(sizes) == lead + n:
            sizes = sizes[lead:]
        if len(sizes) != n:
            raise ValueError(
                f"ConvTranspose{n}D: for {input.ndim}D input, output_size must have {n} or "
                f"{lead + n} elements (got {len(sizes)})"
            )
        smallest = [
            (input.shape[lead + d] - 1) * self.stride[d]
            - 2 * self.padding[d]
            + self.dilation[d] * (self.kernel_size[d] - 1)
            + 1
            for d in range(n)
        ]
        largest = [smallest[d] + self.stride[d] - 1 for d in range(n)]
        if any(not lo <= v <= hi for v, lo, hi in zip(sizes, smallest, largest)):
            raise ValueError(
                f"requested an output size of {sizes}, but valid sizes range from {smallest} to "
                f"{largest} (for an input of {list(input.shape[lead:])})"
            )
        return tuple(v - lo for v, lo in zip(sizes, smallest))

    def forward(self, input, output_size=None):
        output_padding = self.output_padding
        if output_size is not None:
            output_padding = self._output_padding_for(input, output_size)
        fn = getattr(F, f"conv_transpose{self._dims}d")
        return fn(
            input,
            self.weight,
            self.bias,
            self.stride,
            self.padding,
            output_padding,
            self.groups,
            self.dilation,
        )


class ConvTranspose1d(_ConvTransposeNd):
    _dims = 1


class ConvTranspose2d(_ConvTransposeNd):
    _dims = 2


class ConvTranspose3d(_ConvTransposeNd):
    _dims = 3


# ---- pooling ----------------------------------------------------------------------------


class _MaxPoolNd(Module):
    _dims = 2

    def __init__(
        self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False
    ):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, input):
        return getattr(F, f"max_pool{self._dims}d")(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.dilation,
            ceil_mode=self.ceil_mode,
            return_indices=self.return_indices,
        )

    def extra_repr(self):
        return (
            f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
            f"dilation={self.dilation}, ceil_mode={self.ceil_mode}"
        )


class MaxPool1d(_MaxPoolNd):
    _dims = 1


class MaxPool2d(_MaxPoolNd):
    _dims = 2


class MaxPool3d(_MaxPoolNd):
    _dims = 3


class _MaxUnpoolNd(Module):
    _dims = 2

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding

    def forward(self, input, indices, output_size=None):
        return getattr(F, f"max_unpool{self._dims}d")(
            input, indices, self.kernel_size, self.stride, self.padding, output_size
        )

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    _dims = 1


class MaxUnpool2d(_MaxUnpoolNd):
    _dims = 2


class MaxUnpool3d(_MaxUnpoolNd):
    _dims = 3


class _AvgPoolNd(Module):
    _dims = 2

    def __init__(
        self,
        kernel_size,
        stride=None,
        padding=0,
        ceil_mode=False,
        count_include_pad=True,
        divisor_override=None,
    ):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input):
        fn = getattr(F, f"avg_pool{self._dims}d")
        args = (
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.ceil_mode,
            self.count_include_pad,
        )
        if self._dims == 1:
            return fn(*args)
        return fn(*args, self.divisor_override)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPoolNd):
    _dims = 1


class AvgPool2d(_AvgPoolNd):
    _dims = 2


class AvgPool3d(_AvgPoolNd):
    _dims = 3


class _AdaptivePoolNd(Module):
    _kind, _dims = "avg", 1
    return_indices = False  # (PyTorch's average pools, pickled, have none)

    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def forward(self, input):
        fn = getattr(F, f"adaptive_{self._kind}_pool{self._dims}d")
        if self._kind == "max":
            return fn(input, self.output_size, self.return_indices)
        return fn(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class _AdaptiveAvgPoolNd(_AdaptivePoolNd):
    _kind = "avg"


class _AdaptiveMaxPoolNd(_AdaptivePoolNd):
    _kind = "max"


def _adaptive(kind, dims):
    base = _AdaptiveAvgPoolNd if kind == "avg" else _AdaptiveMaxPoolNd
    name = f"Adaptive{kind.capitalize()}Pool{dims}d"
    return type(name, (base,), {"_dims": dims, "__module__": __name__, "__qualname__": name})


AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d = (_adaptive("avg", d) for d in (1, 2, 3))
AdaptiveMaxPool1d, AdaptiveMaxPool2d, AdaptiveMaxPool3d = (_adaptive("max", d) for d in (1, 2, 3))


# ---- normalisation ----------------------------------------------------------------------


class _NormBase(Module):
    """What BatchNorm and InstanceNorm share (PyTorch's _NormBase): the affine parameters, the
    running statistics and their reset, and loading checkpoints that predate
    num_batches_tracked. Subclasses define forward and the input check."""

    _version = 2

    def __setstate__(self, state):
        # a norm pickled by PyTorch has no bias flag: the bias parameter tells
        state = dict(state)
        state.setdefault("use_bias", state.get("_parameters", {}).get("bias") is not None)
        super().__setstate__(state)

    def __init__(
        self,
        num_features,
        eps=1e-5,
        momentum=0.1,
        affine=True,
        track_running_stats=True,
        device=None,
        dtype=None,
        *,
        bias=True,
    ):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        self.use_bias = affine and bias
        fk = _factory(device, dtype)
        if affine:
            self.weight = Parameter(oneflow.ones(num_features, **fk))
        else:
            self.register_parameter("weight", None)
        if self.use_bias:
            self.bias = Parameter(oneflow.zeros(num_features, **fk))
        else:
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", oneflow.zeros(num_features, **fk))
            self.register_buffer("running_var", oneflow.ones(num_features, **fk))
            self.register_buffer(
                "num_batches_tracked", oneflow.tensor(0, dtype=oneflow.int64, device=device)
            )
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def reset_running_stats(self):
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def _load_from_state_dict(
        self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
    ):
        # Version 1 checkpoints have no num_batches_tracked: the module keeps its own count.
        version = local_metadata.get("version", None)
        key = prefix + "num_batches_tracked"
        if (version is None or version < 2) and self.track_running_stats and key not in state_dict:
            state_dict[key] = (
                self.num_batches_tracked
                if self.num_batches_tracked is not None
                else oneflow.tensor(0, dtype=oneflow.int64)
            )
        super()._load_from_state_dict(
            state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
        )

    def reset_parameters(self):
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input_dim(self, input):
        raise NotImplementedError

    def extra_repr(self):
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={self.affine}, bias={self.use_bias}, "
            f"track_running_stats={self.track_running_stats}"
        )


class _BatchNorm(_NormBase):
    _expected_dims = (2, 3)

    def forward(self, input):
        if input.ndim not in self._expected_dims:
            raise ValueError(
                f"{type(self).__name__}: expected "
                f"{' or '.join(f'{d}D' for d in self._expected_dims)} input (got {input.ndim}D "
                "input)"
            )
        momentum = self.momentum if self.momentum is not None else 0.0
        # PyTorch's rule: batch statistics in training, and in eval only without running ones
        # (buffers kept when track_running_stats is turned off after construction are used in
        # eval and left alone in training)
        use_batch = self.training or (self.running_mean is None and self.running_var is None)
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None and oneflow._oneflow_internal._graph_tracing():
                # a cumulative average in a graph: the count is read where it lives at each
                # replay (its value read on the host would be baked into the program)
                momentum = 1.0 / self.num_batches_tracked.to(oneflow.float64)
            elif self.momentum is None:
                momentum = 1.0 / float(self.num_batches_tracked.item())
        keep = not self.training or self.track_running_stats
        return F.batch_norm(
            input,
            self.running_mean if keep else None,
            self.running_var if keep else None,
            self.weight,
            self.bias,
            use_batch,
            momentum,
            self.eps,
        )


class BatchNorm1d(_BatchNorm):
    _expected_dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    _expected_dims = (4,)


class BatchNorm3d(_BatchNorm):
    _expected_dims = (5,)


class LayerNorm(Module):
    def __init__(
        self,
        normalized_shape,
        eps=1e-5,
        elementwise_affine=True,
        bias=True,
        device=None,
        dtype=None,
    ):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape, self.eps = tuple(normalized_shape), eps
        self.elementwise_affine = elementwise_affine
        fk = _factory(device, dtype)
        if elementwise_affine:
            self.weight = Parameter(oneflow.ones(*self.normalized_shape, **fk))
            if bias:
                self.bias = Parameter(oneflow.zeros(*self.normalized_shape, **fk))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (
            f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
            f", bias={self.bias is not None}"
        )


class GroupNorm(Module):
    def __init__(
        self, num_groups, num_channels, eps=1e-5, affine=True, bias=True, device=None, dtype=None
    ):
        super().__init__()
        if num_channels % num_groups:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups, self.num_channels, self.eps, self.affine = (
            num_groups,
            num_channels,
            eps,
            affine,
        )
        fk = _factory(device, dtype)
        if affine:
            self.weight = Parameter(oneflow.ones(num_channels, **fk))
            if bias:
                self.bias = Parameter(oneflow.zeros(num_channels, **fk))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (
            f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
            f"bias={self.bias is not None}"
        )


class _InstanceNorm(_NormBase):
    def __init__(
        self,
        num_features,
        eps=1e-5,
        momentum=0.1,
        affine=False,
        track_running_stats=False,
        device=None,
        dtype=None,
        *,
        bias=True,
    ):
        super().__init__(
            num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias
        )

    _batched_dim = None

    def forward(self, input):
        if self._batched_dim is not None and input.ndim not in (
            self._batched_dim,
            self._batched_dim - 1,
        ):
            raise ValueError(
                f"{type(self).__name__}: expected {self._batched_dim - 1}D (unbatched) or "
                f"{self._batched_dim}D (batched) input, got {input.ndim}D input"
            )
        if self._batched_dim is not None and input.ndim == self._batched_dim - 1:
            return self.forward(input.unsqueeze(0)).squeeze(0)  # one unbatched sample
        use_input_stats = self.training or not self.track_running_stats
        return F.instance_norm(
            input,
            self.running_mean,
            self.running_var,
            weight=self.weight,
            bias=self.bias,
            use_input_stats=use_input_stats,
            # As PyTorch: momentum=None leaves the running statistics as they are.
            momentum=self.momentum if self.momentum is not None else 0.0,
            eps=self.eps,
        )


class InstanceNorm1d(_InstanceNorm):
    _batched_dim = 3


class InstanceNorm2d(_InstanceNorm):
    _batched_dim = 4


class InstanceNorm3d(_InstanceNorm):
    _batched_dim = 5


# ---- dropout, embedding -----------------------------------------------------------------


class _Dropout(Module):
    _fn = "dropout"

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if not 0 <= p <= 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input):
        return getattr(F, self._fn)(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_Dropout):
    """PyTorch's Dropout; OneFlow's `generator` keyword draws the masks, and forward takes
    OneFlow's `addend` (added to the result)."""

    _fn = "dropout"

    def __init__(self, p=0.5, inplace=False, generator=None):
        super().__init__(p, inplace)
        self.generator = generator

    def forward(self, input, addend=None):
        return F.dropout(
            input, self.p, self.training, self.inplace, generator=self.generator, addend=addend
        )


class Dropout1d(_Dropout):
    _fn = "dropout1d"


class Dropout2d(_Dropout):
    _fn = "dropout2d"


class Dropout3d(_Dropout):
    _fn = "dropout3d"


class AlphaDropout(_Dropout):
    _fn = "alpha_dropout"


class Embedding(Module):
    def __init__(
        self,
        num_embeddings,
        embedding_dim,
        padding_idx=None,
        max_norm=None,
        norm_type=2.0,
        scale_grad_by_freq=False,
        sparse=False,
        _weight=None,
        _freeze=False,
        device=None,
        dtype=None,
    ):
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ValueError("padding_idx must be within num_embeddings")
            padding_idx %= num_embeddings
        self.padding_idx, self.max_norm, self.norm_type = padding_idx, max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        if _weight is None:
            self.weight = Parameter(
                oneflow.empty(num_embeddings, embedding_dim, **_factory(device, dtype)), not _freeze
            )
            self.reset_parameters()
        else:
            self.weight = Parameter(_weight, not _freeze)

    def reset_parameters(self):
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with oneflow.no_grad():
                self.weight[self.padding_idx] = 0

    def forward(self, input):
        return F.embedding(
            input,
            self.weight,
            self.padding_idx,
            self.max_norm,
            self.norm_type,
            self.scale_grad_by_freq,
            self.sparse,
        )

    @classmethod
    def from_pretrained(
        cls,
        embeddings,
        freeze=True,
        padding_idx=None,
        max_norm=None,
        norm_type=2.0,
        scale_grad_by_freq=False,
        sparse=False,
    ):
        rows, cols = embeddings.shape
        return cls(
            rows,
            cols,
            padding_idx,
            max_norm,
            norm_type,
            scale_grad_by_freq,
            sparse,
            _weight=embeddings,
            _freeze=freeze,
        )

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        return s


# ---- activations ------------------------------------------------------------------------


def _activation(name, fn, params=(), inplace=False, repr_fmt=None):
    """A Module class calling F.<fn> with the constructor's arguments."""

    def __init__(self, *args, **kwargs):
        Module.__init__(self)
        names = list(params) + (["inplace"] if inplace else [])
        values = dict(zip(names, args))
        values.update(kwargs)
        for p, default in list(params.items()) + ([("inplace", False)] if inplace else []):
            setattr(self, p, values.get(p, default))

    def forward(self, input):
        kwargs = {p: getattr(self, p) for p in params}
        if inplace and self.inplace:
            kwargs["inplace"] = True
        return getattr(F, fn)(input, **kwargs)

    def extra_repr(self):
        parts = [
            f"{p}={getattr(self, p)!r}"
            if isinstance(getattr(self, p), str)
            else f"{p}={getattr(self, p)}"
            for p in params
        ]
        if inplace and self.inplace:
            parts.append("inplace=True")
        return ", ".join(parts)

    return type(
        name,
        (Module,),
        {
            "__init__": __init__,
            "forward": forward,
            "extra_repr": extra_repr,
            "__module__": __name__,
        },
    )


ReLU = _activation("ReLU", "relu", {}, inplace=True)
LeakyReLU = _activation("LeakyReLU", "leaky_relu", {"negative_slope": 0.01}, inplace=True)
ELU = _activation("ELU", "elu", {"alpha": 1.0}, inplace=True)
CELU = _activation("CELU", "celu", {"alpha": 1.0}, inplace=True)
SELU = _activation("SELU", "selu", {}, inplace=True)
GELU = _activation("GELU", "gelu", {"approximate": "none"})
SiLU = _activation("SiLU", "silu", {}, inplace=True)
Mish = _activation("Mish", "mish", {}, inplace=True)
Softplus = _activation("Softplus", "softplus", {"beta": 1.0, "threshold": 20.0})
Softsign = _activation("Softsign", "softsign", {})
Hardtanh = _activation("Hardtanh", "hardtanh", {"min_val": -1.0, "max_val": 1.0}, inplace=True)


class ReLU6(Hardtanh):
    """hardtanh between 0 and 6 (a Hardtanh, as PyTorch's)."""

    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)

    def forward(self, input):
        return F.relu6(input, inplace=self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


Hardsigmoid = _activation("Hardsigmoid", "hardsigmoid", {}, inplace=True)
Hardswish = _activation("Hardswish", "hardswish", {}, inplace=True)
Hardshrink = _activation("Hardshrink", "hardshrink", {"lambd": 0.5})
Softshrink = _activation("Softshrink", "softshrink", {"lambd": 0.5})
Tanhshrink = _activation("Tanhshrink", "tanhshrink", {})
LogSigmoid = _activation("LogSigmoid", "logsigmoid", {})
Sigmoid = _activation("Sigmoid", "sigmoid", {})
Tanh = _activation("Tanh", "tanh", {})
Threshold = _activation("Threshold", "threshold", {"threshold": 0.0, "value": 0.0}, inplace=True)
GLU = _activation("GLU", "glu", {"dim": -1})
Softmax = _activation("Softmax", "softmax", {"dim": None})
LogSoftmax = _activation("LogSoftmax", "log_softmax", {"dim": None})
Softmin = _activation("Softmin", "softmin", {"dim": None})
QuickGELU = _activation("QuickGELU", "quick_gelu", {})


class PReLU(Module):
    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        super().__init__()
        self.num_parameters = num_parameters
        self.weight = Parameter(oneflow.full((num_parameters,), init, **_factory(device, dtype)))

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


# ---- padding, resampling, shuffling, distances ---------------------------------------------


class _ConstantPadNd(Module):
    pass


class _ReflectionPadNd(Module):
    pass


class _ReplicationPadNd(Module):
    pass


class _CircularPadNd(Module):
    pass


_PAD_BASES = {
    "constant": _ConstantPadNd,
    "reflect": _ReflectionPadNd,
    "replicate": _ReplicationPadNd,
    "circular": _CircularPadNd,
}


def _padding(name, mode, dims):
    def __init__(self, padding, value=0.0):
        Module.__init__(self)
        self.padding = (padding,) * (2 * dims) if isinstance(padding, int) else tuple(padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, mode, self.value if mode == "constant" else None)

    def extra_repr(self):
        return f"{self.padding}" + (f", value={self.value}" if mode == "constant" else "")

    return type(
        name,
        (_PAD_BASES[mode],),
        {
            "__init__": __init__,
            "forward": forward,
            "extra_repr": extra_repr,
            "__module__": __name__,
        },
    )


ConstantPad1d, ConstantPad2d, ConstantPad3d = (
    _padding(f"ConstantPad{d}d", "constant", d) for d in (1, 2, 3)
)
ReflectionPad1d, ReflectionPad2d, ReflectionPad3d = (
    _padding(f"ReflectionPad{d}d", "reflect", d) for d in (1, 2, 3)
)
ReplicationPad1d, ReplicationPad2d, ReplicationPad3d = (
    _padding(f"ReplicationPad{d}d", "replicate", d) for d in (1, 2, 3)
)
CircularPad1d, CircularPad2d, CircularPad3d = (
    _padding(f"CircularPad{d}d", "circular", d) for d in (1, 2, 3)
)


class ZeroPad2d(ConstantPad2d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)


class Upsample(Module):
    def __init__(
        self,
        size=None,
        scale_factor=None,
        mode="nearest",
        align_corners=None,
        recompute_scale_factor=None,
    ):
        super().__init__()
        self.size, self.scale_factor, self.mode = size, scale_factor, mode
        self.align_corners, self.recompute_scale_factor = align_corners, recompute_scale_factor

    def forward(self, input):
        return F.interpolate(
            input,
            self.size,
            self.scale_factor,
            self.mode,
            self.align_corners,
            self.recompute_scale_factor,
        )

    def extra_repr(self):
        what = (
            f"scale_factor={float(self.scale_factor)}" if self.scale_factor else f"size={self.size}"
        )
        return f"{what}, mode='{self.mode}'"


class UpsamplingNearest2d(Upsample):
    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, "nearest")


class UpsamplingBilinear2d(Upsample):
    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, "bilinear", True)


class PixelShuffle(Module):
    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self):
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        return F.pixel_unshuffle(input, self.downscale_factor)


class Unfold(Module):
    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = (
            kernel_size,
            dilation,
            padding,
            stride,
        )

    def forward(self, input):
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)


class Fold(Module):
    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, input):
        return F.fold(
            input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride
        )


class CosineSimilarity(Module):
    def __init__(self, dim=1, eps=1e-8):
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1, x2):
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    def __init__(self, p=2.0, eps=1e-6, keepdim=False):
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1, x2):
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


# ---- attention and transformers ------------------------------------------------------------


class MultiheadAttention(Module):
    def __init__(
        self,
        embed_dim,
        num_heads,
        dropout=0.0,
        bias=True,
        add_bias_kv=False,
        add_zero_attn=False,
        kdim=None,
        vdim=None,
        batch_first=False,
        device=None,
        dtype=None,
    ):
        super().__init__()
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(
                f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and "
                f"num_heads={num_heads} instead"
            )
        if embed_dim % num_heads:
            raise AssertionError("embed_dim must be divisible by num_heads")
        self.embed_dim, self.num_heads, self.dropout = embed_dim, num_heads, dropout
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.batch_first, self.head_dim = batch_first, embed_dim // num_heads
        fk = _factory(device, dtype)
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(oneflow.empty(3 * embed_dim, embed_dim, **fk))
            for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(name, None)
        else:
            self.q_proj_weight = Parameter(oneflow.empty(embed_dim, embed_dim, **fk))
            self.k_proj_weight = Parameter(oneflow.empty(embed_dim, self.kdim, **fk))
            self.v_proj_weight = Parameter(oneflow.empty(embed_dim, self.vdim, **fk))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(oneflow.zeros(3 * embed_dim, **fk))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **fk)
        if add_bias_kv:
            self.bias_k = Parameter(oneflow.empty(1, 1, embed_dim, **fk))
            self.bias_v = Parameter(oneflow.empty(1, 1, embed_dim, **fk))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if bias:
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
            init.xavier_normal_(self.bias_v)

    def forward(
        self,
        query,
        key,
        value,
        key_padding_mask=None,
        need_weights=True,
        attn_mask=None,
        average_attn_weights=True,
        is_causal=False,
    ):
        batched = query.ndim == 3
        if not batched:
            if query.ndim != 2 or key.ndim != 2 or value.ndim != 2:
                raise AssertionError(
                    "MultiheadAttention: for unbatched (2-D) query, expected key and value to be "
                    f"2-D, got {key.ndim}-D and {value.ndim}-D tensors"
                )
            if key_padding_mask is not None and key_padding_mask.ndim != 1:
                raise AssertionError(
                    "MultiheadAttention: for unbatched (2-D) query, expected "
                    f"key_padding_mask to be None or 1-D, got {key_padding_mask.ndim}-D"
                )
        elif self.batch_first:
            query, key, value = (t.transpose(0, 1) for t in (query, key, value))
        out, weights = F.multi_head_attention_forward(
            query,
            key,
            value,
            self.embed_dim,
            self.num_heads,
            self.in_proj_weight,
            self.in_proj_bias,
            self.bias_k,
            self.bias_v,
            self.add_zero_attn,
            self.dropout,
            self.out_proj.weight,
            self.out_proj.bias,
            training=self.training,
            key_padding_mask=key_padding_mask,
            need_weights=need_weights,
            attn_mask=attn_mask,
            use_separate_proj_weight=not self._qkv_same_embed_dim,
            q_proj_weight=self.q_proj_weight,
            k_proj_weight=self.k_proj_weight,
            v_proj_weight=self.v_proj_weight,
            average_attn_weights=average_attn_weights,
            is_causal=is_causal,
        )
        if batched and self.batch_first:
            out = out.transpose(0, 1)
        return out, weights


class NonDynamicallyQuantizableLinear(Linear):
    pass


# The transformer layers live in transformer_layers.py (they build on the classes above).
from oneflow.nn.modules.transformer_layers import (  # noqa: E402, F401
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
    _activation_fn,
)


class RMSNorm(Module):
    def __init__(
        self, normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None
    ):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape, self.eps = tuple(normalized_shape), eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(oneflow.ones(*self.normalized_shape, **_factory(device, dtype)))
        else:
            self.register_parameter("weight", None)

    def forward(self, input):
        return F.rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return (
            f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
        )


class RMSLayerNorm(Module):
    """OneFlow's T5-style layer norm: x / sqrt(mean(x^2 over the last dim) + eps) * weight, no
    mean subtracted and no bias; the statistics in float32 for 16-bit inputs, the result in the
    weight's dtype."""

    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.weight = Parameter(oneflow.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        x = hidden_states.float() if hidden_states.dtype in _HALF else hidden_states
        variance = (x * x).mean(-1, keepdim=True)
        x = x * oneflow.rsqrt(variance + self.variance_epsilon)
        if self.weight.dtype in _HALF:
            x = x.to(self.weight.dtype)
        return self.weight * x

    def extra_repr(self):
        return f"{tuple(self.weight.shape)}, eps={self.variance_epsilon}"


class SquareReLU(Module):
    """relu(x) ** 2 (the Primer activation)."""

    def forward(self, input):
        return oneflow.square(F.relu(input))


__all__ = [
    name
    for name, value in list(globals().items())
    if isinstance(value, type) and issubclass(value, Module) and not name.startswith("_")
]
