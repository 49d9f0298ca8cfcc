"""SyncBatchNorm: batch normalisation whose training statistics cover the batch of every rank.

In training, each rank sums its elements and their squares per channel and one all-reduce adds
them over the ranks; backward all-reduces the two per-channel sums the input's gradient needs.
The weight's and bias's gradients stay local (DistributedDataParallel averages them). In eval
mode, or in a group of one, it is BatchNorm.
"""

import oneflow
from oneflow import _oneflow_internal as _internal
from oneflow.nn.modules.layers import _BatchNorm


def _world_size():
    from oneflow import comm

    comm._ensure_initialized("SyncBatchNorm")
    return _internal._comm_world_size()


def _all_reduce(t, group):
    """Sums t over the process group, or over a new_group's (its ranks and id) when given."""
    if group is None:
        _internal._comm_all_reduce(t, "sum")
        return
    ranks, gid = group
    with _internal._CommGroupScope(list(ranks), gid):
        _internal._comm_all_reduce(t, "sum")


def _channel_view(t, ndim):
    """A (C,) tensor shaped to broadcast over (N, C, *)."""
    return t.reshape([1, -1] + [1] * (ndim - 2))


class _SyncBatchNormFunction(oneflow.autograd.Function):
    @staticmethod
    def forward(ctx, input, weight, bias, running_mean, running_var, eps, momentum, ranks):
        dims = [0] + list(range(2, input.ndim))
        local_count = input.numel() // input.shape[1]
        # Sums in float64: E[x^2] - E[x]^2 cancels badly in float32.
        x64 = input.to(oneflow.float64)
        stats = oneflow.cat(
            [
                x64.sum(dim=dims),
                (x64 * x64).sum(dim=dims),
                oneflow.tensor([float(local_count)], dtype=oneflow.float64),
            ]
        )
        _all_reduce(stats, ranks)
        c = input.shape[1]
        count = stats[2 * c]
        mean = stats[:c] / count
        var = (stats[c : 2 * c] / count - mean * mean).clamp(min=0.0)
        # checked eagerly (a graph's program cannot read the count on the host)
        if not _internal._graph_tracing() and float(count) <= 1:
            raise ValueError(
                f"SyncBatchNorm: expected more than 1 value per channel when training, got "
                f"input size {list(input.shape)} over all ranks"
            )
        if running_mean is not None:
            with oneflow.no_grad():
                running_mean.mul_(1 - momentum).add_((mean * momentum).to(running_mean.dtype))
                unbiased = var * (count / (count - 1))
                running_var.mul_(1 - momentum).add_((unbiased * momentum).to(running_var.dtype))
        invstd = (var + eps).rsqrt().to(input.dtype)
        mean = mean.to(input.dtype)
        xhat = (input - _channel_view(mean, input.ndim)) * _channel_view(invstd, input.ndim)
        out = xhat
        if weight is not None:
            out = out * _channel_view(weight, input.ndim)
        if bias is not None:
            out = out + _channel_view(bias, input.ndim)
        ctx.save_for_backward(xhat, invstd, weight)
        ctx.total = count
        ctx.has_bias = bias is not None
        ctx.ranks = ranks
        return out

    @staticmethod
    def backward(ctx, grad):
        if oneflow.is_grad_enabled():  # backward(create_graph=True)
            raise NotImplementedError(
                "SyncBatchNorm (and batch_norm of a global batch split over ranks): its "
                "gradient is not differentiable yet (create_graph=True)"
            )
        xhat, invstd, weight = ctx.saved_tensors
        nd = grad.ndim
        dims = [0] + list(range(2, nd))
        sum_dy = grad.sum(dim=dims)
        sum_dy_xhat = (grad * xhat).sum(dim=dims)
        grad_weight = sum_dy_xhat if weight is not None else None
        grad_bias = sum_dy if ctx.has_bias else None
        grad_input = None
        if ctx.needs_input_grad[0]:
            c = sum_dy.shape[0]
            both = oneflow.cat([sum_dy, sum_dy_xhat])
            _all_reduce(both, ctx.ranks)
            mean_dy = _channel_view(both[:c] / ctx.total, nd)
            mean_dy_xhat = _channel_view(both[c:] / ctx.total, nd)
            scale = invstd if weight is None else invstd * weight
            grad_input = (grad - mean_dy - xhat * mean_dy_xhat) * _channel_view(scale, nd)
        return grad_input, grad_weight, grad_bias, None, None, None, None, None


class SyncBatchNorm(_BatchNorm):
    """BatchNorm over the batches of all ranks, or of a new_group's ranks (PyTorch's signature).
    On a global input it is BatchNorm (whose statistics cover the global batch)."""

    _expected_dims = tuple(range(2, 9))

    def __init__(
        self,
        num_features,
        eps=1e-5,
        momentum=0.1,
        affine=True,
        track_running_stats=True,
        process_group=None,
        device=None,
        dtype=None,
    ):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)
        if process_group is not None:
            from oneflow import distributed as dist

            dist._check_group("SyncBatchNorm", process_group)
            process_group = dist._sub(process_group)
        self.process_group = process_group  # a new_group's, or None: the default group

    def forward(self, input):
        if input.ndim < 2:
            raise ValueError(f"SyncBatchNorm: expected at least 2D input (got {input.ndim}D input)")
        if input.is_global:  # batch norm of a global tensor covers every rank's batch already
            return super().forward(input)
        group = self.process_group
        # outside its process_group (PyTorch's): plain BatchNorm of this process's batch
        size = _world_size() if group is None else group.size() if group.rank() >= 0 else 1
        if not self.training or size == 1:
            return super().forward(input)
        momentum = self.momentum if self.momentum is not None else 0.0
        if self.track_running_stats:
            self.num_batches_tracked.add_(1)
            if self.momentum is None and oneflow._oneflow_internal._graph_tracing():
                momentum = 1.0 / self.num_batches_tracked.to(oneflow.float64)  # as BatchNorm's
            elif self.momentum is None:
                momentum = 1.0 / float(self.num_batches_tracked.item())
        return _SyncBatchNormFunction.apply(
            input,
            self.weight,
            self.bias,
            self.running_mean if self.track_running_stats else None,
            self.running_var if self.track_running_stats else None,
            self.eps,
            momentum,
            None
            if self.process_group is None
            else (tuple(self.process_group._ranks), self.process_group._id),
        )

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """A copy of `module` whose BatchNorm1d/2d/3d layers are SyncBatchNorm layers holding the
        same parameters and buffers (the module itself when it is such a layer)."""
        out = module
        if isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm):
            out = SyncBatchNorm(
                module.num_features,
                module.eps,
                module.momentum,
                module.affine,
                module.track_running_stats,
                process_group,
            )
            if module.affine:
                with oneflow.no_grad():
                    out.weight = module.weight
                    out.bias = module.bias
            out.running_mean = module.running_mean
            out.running_var = module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out
