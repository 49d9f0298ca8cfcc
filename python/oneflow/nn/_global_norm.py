"""Batch normalisation of global tensors laid out over several ranks (docs/global.md): a batch
split along dim 0 runs SyncBatchNorm's computation on the shards."""

import oneflow


def _spread(input):
    """A global input laid out over several ranks other than broadcast: the fused kernel would
    need the whole value on every rank; batch statistics composed of reductions keep the
    layout (each rank sums its part; the per-channel sums are all-reduced)."""
    if not input.is_global:
        return False
    return len(input.placement.ranks) > 1 and any(s != oneflow.sbp.broadcast for s in input.sbp)


def _batch_split(input):
    """A global batch split along dim 0 over every process: SyncBatchNorm's computation on the
    shards (per-channel sums all-reduced once, in float64) gives the whole batch's statistics.
    (Its all-reduces span the process group: a placement over part of the processes takes the
    composed path.)"""
    if not (_spread(input) and tuple(input.sbp) == (oneflow.sbp.split(0),)):
        return False
    return list(input.placement.ranks) == list(range(oneflow.env.get_world_size()))


def _batch_norm_of_shards(input, running_mean, running_var, weight, bias, momentum, eps):
    from oneflow.framework.global_tensor import shard_to_global
    from oneflow.nn.modules.sync_batch_norm import _SyncBatchNormFunction

    def local(t):
        return t.to_local() if isinstance(t, oneflow.Tensor) and t.is_global else t

    out = _SyncBatchNormFunction.apply(
        input.to_local(),
        local(weight),
        local(bias),
        local(running_mean),
        local(running_var),
        eps,
        local(momentum),  # a tensor in a graph (BatchNorm's momentum=None)
        None,  # the process group's all-reduces
    )
    return shard_to_global(out, input)
