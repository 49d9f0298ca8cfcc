"""oneflow.nn.utils: gradient clipping, parameter/vector conversion, and rnn packing helpers."""

import math

import oneflow
from oneflow._oneflow_internal import Tensor
from oneflow.nn.utils import rnn  # noqa: F401


def _grads(parameters):
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def _on_placement_of(t, like):
    """t (a 0-d norm) on like's placement, broadcast, when both are global tensors on different
    placements (the stages of a pipeline); t itself otherwise."""
    if t.is_global and like.is_global and t.placement != like.placement:
        return t.to_global(placement=like.placement, sbp=oneflow.sbp.broadcast)
    return t


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The norm of the norms of `tensors` (their joint norm), as clip_grad_norm_ measures it."""
    if isinstance(tensors, Tensor):
        tensors = [tensors]
    tensors = [t for t in tensors if t is not None]
    norm_type = float(norm_type)
    if not tensors:
        return oneflow.tensor(0.0)
    with oneflow.no_grad():
        if norm_type == math.inf:
            norms = [_on_placement_of(t.abs().max(), tensors[0]) for t in tensors]
            total = norms[0] if len(norms) == 1 else oneflow.stack(norms).max()
        else:
            norms = [
                _on_placement_of(oneflow.linalg.vector_norm(t, norm_type), tensors[0])
                for t in tensors
            ]
            total = oneflow.linalg.vector_norm(oneflow.stack(norms), norm_type)
        if error_if_nonfinite and not math.isfinite(float(total.item())):
            raise RuntimeError(
                f"The total norm of order {norm_type} for gradients from `parameters` is "
                "non-finite, so it cannot be clipped. To disable this error and scale the "
                "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`"
            )
    return total


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scales the gradients in place by max_norm / (total_norm + 1e-6), at most 1."""
    grads = _grads(parameters)
    if not grads:
        return
    with oneflow.no_grad():
        coef = oneflow.clamp(max_norm / (total_norm + 1e-6), max=1.0)
        for g in grads:
            g.mul_(_on_placement_of(coef, g).to(g.dtype))


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Scales the gradients in place so that their joint norm is at most max_norm; returns the
    norm before clipping."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    parameters = list(parameters)
    grads = _grads(parameters)
    if not grads:
        return oneflow.tensor(0.0)
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total, foreach)
    return total


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Deprecated form of clip_grad_norm_ (PyTorch warns the same way)."""
    import warnings

    warnings.warn(
        "`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
        "`torch.nn.utils.clip_grad_norm_`.",
        FutureWarning,
        stacklevel=2,
    )
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value, foreach=None):
    with oneflow.no_grad():
        for g in _grads(parameters):
            g.clamp_(-clip_value, clip_value)


def parameters_to_vector(parameters):
    return oneflow.cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec, parameters):
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected a Tensor, but got: {type(vec).__name__}")
    offset = 0
    with oneflow.no_grad():
        for p in parameters:
            n = p.numel()
            p.copy_(vec[offset : offset + n].reshape(p.shape))
            offset += n


# ---- weight normalisation ----


def _norm_except_dim(v, dim):
    if dim is None:
        return oneflow.linalg.vector_norm(v)
    dims = [d for d in range(v.ndim) if d != dim % max(v.ndim, 1)]
    return oneflow.linalg.vector_norm(v, 2, dims, keepdim=True) if dims else v.abs()


class _WeightNorm:
    """The forward pre-hook of weight_norm: weight = g * v / ||v||, the norm over every dim but
    `dim` (over the whole tensor with dim None)."""

    def __init__(self, name, dim):
        self.name, self.dim = name, dim

    def compute(self, module):
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return v * (g / _norm_except_dim(v, self.dim))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute(module))


def weight_norm(module, name="weight", dim=0):
    """Reparametrises module.<name> as <name>_g * <name>_v / ||<name>_v|| (PyTorch's weight_norm):
    two new parameters, the weight recomputed before every forward."""
    from oneflow.nn.parameter import Parameter

    for hook in module._forward_pre_hooks.values():
        if isinstance(hook, _WeightNorm) and hook.name == name:
            raise RuntimeError(
                f"Cannot register two weight_norm hooks on the same parameter {name}"
            )
    if dim == -1:
        dim = None
    fn = _WeightNorm(name, dim)
    weight = getattr(module, name)
    del module._parameters[name]
    module.register_parameter(name + "_g", Parameter(_norm_except_dim(weight, dim).detach()))
    module.register_parameter(name + "_v", Parameter(weight.detach()))
    setattr(module, name, fn.compute(module))
    handle = module.register_forward_pre_hook(fn)
    fn.handle = handle
    return module


def remove_weight_norm(module, name="weight"):
    """Undoes weight_norm: module.<name> becomes one parameter again, with the current value."""
    from oneflow.nn.parameter import Parameter

    for key, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, _WeightNorm) and hook.name == name:
            weight = hook.compute(module).detach()
            del module._forward_pre_hooks[key]
            del module._parameters[name + "_g"]
            del module._parameters[name + "_v"]
            module.__dict__.pop(name, None)
            module.register_parameter(name, Parameter(weight))
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")


# ---- spectral normalisation (the hook-based form; parametrizations.spectral_norm is the newer)


class _SpectralNorm:
    """The forward pre-hook of spectral_norm: weight = weight_orig / sigma, sigma estimated by
    power iteration on weight_orig viewed as a matrix (`dim` first), one step per training
    forward, u and v kept as buffers."""

    def __init__(self, name, n_power_iterations, dim, eps):
        if n_power_iterations <= 0:
            raise ValueError(
                "Expected n_power_iterations to be positive, but "
                f"got n_power_iterations={n_power_iterations}"
            )
        self.name, self.n_power_iterations, self.dim, self.eps = name, n_power_iterations, dim, eps

    def reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.ndim) if d != self.dim))
        return weight.reshape(weight.shape[0], -1)

    def compute_weight(self, module, do_power_iteration):
        from oneflow.nn import functional as F

        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with oneflow.no_grad():
                for _ in range(self.n_power_iterations):
                    v.copy_(F.normalize(oneflow.mv(weight_mat.t(), u), dim=0, eps=self.eps))
                    u.copy_(F.normalize(oneflow.mv(weight_mat, v), dim=0, eps=self.eps))
            u, v = u.clone(), v.clone()
        sigma = oneflow.dot(u, oneflow.mv(weight_mat, v))
        return weight / sigma

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module, module.training))


def _spectral_norm_dim(module):
    """The weight dim of the output channels: 1 for transposed convolutions, else 0."""
    transposed = (
        oneflow.nn.ConvTranspose1d,
        oneflow.nn.ConvTranspose2d,
        oneflow.nn.ConvTranspose3d,
    )
    return 1 if isinstance(module, transposed) else 0


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Divides module.<name> by its largest singular value before every forward (PyTorch's
    hook-based spectral_norm: <name>_orig, buffers <name>_u and <name>_v)."""
    from oneflow.nn import functional as F
    from oneflow.nn.parameter import Parameter

    for hook in module._forward_pre_hooks.values():
        if isinstance(hook, _SpectralNorm) and hook.name == name:
            raise RuntimeError(
                f"Cannot register two spectral_norm hooks on the same parameter {name}"
            )
    if dim is None:
        dim = _spectral_norm_dim(module)
    fn = _SpectralNorm(name, n_power_iterations, dim, eps)
    weight = module._parameters[name]
    with oneflow.no_grad():
        weight_mat = fn.reshape_weight_to_matrix(weight)
        h, w = weight_mat.shape
        u = F.normalize(oneflow.randn(h, dtype=weight.dtype, device=weight.device), dim=0, eps=eps)
        v = F.normalize(oneflow.randn(w, dtype=weight.dtype, device=weight.device), dim=0, eps=eps)
    del module._parameters[name]
    module.register_parameter(
        name + "_orig", weight if isinstance(weight, Parameter) else Parameter(weight)
    )
    setattr(module, name, weight.detach())
    module.register_buffer(name + "_u", u)
    module.register_buffer(name + "_v", v)
    module.register_forward_pre_hook(fn)
    return module


def remove_spectral_norm(module, name="weight"):
    """Undoes spectral_norm: module.<name> becomes one parameter with the current value."""
    from oneflow.nn.parameter import Parameter

    for key, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, _SpectralNorm) and hook.name == name:
            with oneflow.no_grad():
                weight = hook.compute_weight(module, do_power_iteration=False)
            del module._forward_pre_hooks[key]
            module.__dict__.pop(name, None)
            del module._parameters[name + "_orig"]
            del module._buffers[name + "_u"]
            del module._buffers[name + "_v"]
            module.register_parameter(name, Parameter(weight.detach()))
            return module
    raise ValueError(f"spectral_norm of '{name}' not found in {module}")


# ---- fusing BatchNorm into the layer before it (inference) -----------------------------------


def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, transpose=False):
    """The weight and bias of a convolution followed by an inference BatchNorm, as one."""
    from oneflow.nn.parameter import Parameter

    w_dtype = conv_w.dtype
    b_dtype = conv_b.dtype if conv_b is not None else w_dtype
    if conv_b is None:
        conv_b = oneflow.zeros_like(bn_rm)
    if bn_w is None:
        bn_w = oneflow.ones_like(bn_rm)
    if bn_b is None:
        bn_b = oneflow.zeros_like(bn_rm)
    rsqrt = oneflow.rsqrt(bn_rv + bn_eps)
    shape = ([1, -1] if transpose else [-1, 1]) + [1] * (conv_w.ndim - 2)
    fused_w = (conv_w * (bn_w * rsqrt).reshape(shape)).to(w_dtype)
    fused_b = ((conv_b - bn_rm) * rsqrt * bn_w + bn_b).to(b_dtype)
    return (
        Parameter(fused_w.detach(), conv_w.requires_grad),
        Parameter(fused_b.detach(), conv_b.requires_grad),
    )


def fuse_conv_bn_eval(conv, bn, transpose=False):
    """A copy of `conv` with the inference BatchNorm `bn` folded into its weight and bias."""
    import copy

    if conv.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused = copy.deepcopy(conv)
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("fuse_conv_bn_eval: the BatchNorm keeps no running statistics")
    fused.weight, fused.bias = fuse_conv_bn_weights(
        fused.weight,
        fused.bias,
        bn.running_mean,
        bn.running_var,
        bn.eps,
        bn.weight,
        bn.bias,
        transpose,
    )
    return fused


def fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    """The weight and bias of a linear layer followed by an inference BatchNorm, as one."""
    from oneflow.nn.parameter import Parameter

    if linear_b is None:
        linear_b = oneflow.zeros_like(bn_rm)
    scale = bn_w * oneflow.rsqrt(bn_rv + bn_eps)
    fused_w = linear_w * scale.unsqueeze(-1)
    fused_b = (linear_b - bn_rm) * scale + bn_b
    return (
        Parameter(fused_w.detach(), linear_w.requires_grad),
        Parameter(fused_b.detach(), linear_b.requires_grad),
    )


def fuse_linear_bn_eval(linear, bn):
    """A copy of `linear` with the inference BatchNorm `bn` folded into its weight and bias."""
    import copy

    if linear.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    if not (linear.out_features == bn.num_features or bn.num_features == 1):
        raise AssertionError(
            "To fuse, linear.out_features must equal bn.num_features or bn.num_features must "
            "equal 1"
        )
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("fuse_linear_bn_eval: the BatchNorm keeps no running statistics")
    fused = copy.deepcopy(linear)
    fused.weight, fused.bias = fuse_linear_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias
    )
    return fused


def skip_init(module_cls, *args, **kwargs):
    """module_cls(*args, **kwargs) with its parameters and buffers left uninitialised: built on
    the meta device, then given memory on `device` (default cpu)."""
    import inspect

    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    final_device = kwargs.pop("device", "cpu")
    kwargs["device"] = "meta"
    return module_cls(*args, **kwargs).to_empty(device=final_device)


from oneflow.framework.memory_format import (  # noqa: E402,F401
    convert_conv2d_weight_memory_format,
    convert_conv3d_weight_memory_format,
)
from oneflow.nn.utils import (  # noqa: E402,F401
    clip_grad,
    convert_parameters,
    parametrizations,
    parametrize,
    prune,
    stateless,
)
