"""oneflow.boxing.nccl: OneFlow's tuning of NCCL collectives. Each setter checks its value's
type and records it (`settings()`); none changes how collectives run here."""

_settings = {}


def _set(name, value, kind=bool):
    if kind is bool and not isinstance(value, bool):
        raise TypeError(f"oneflow.boxing.nccl.{name}: expected a bool, got {type(value).__name__}")
    if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise TypeError(f"oneflow.boxing.nccl.{name}: expected an int, got {type(value).__name__}")
    _settings[name] = value


def settings():
    """The values set so far, by setter name."""
    return dict(_settings)


def _flag(name):
    def setter(val=True):
        _set(name, val)

    setter.__name__ = name
    setter.__doc__ = f"OneFlow's {name} setting; recorded, without effect here."
    return setter


def _count(name):
    def setter(val):
        _set(name, val, int)

    setter.__name__ = name
    setter.__doc__ = f"OneFlow's {name} setting; recorded, without effect here."
    return setter


enable_all_to_all = _flag("enable_all_to_all")
enable_use_buffer_to_fuse_all_reduce = _flag("enable_use_buffer_to_fuse_all_reduce")
enable_use_compute_stream = _flag("enable_use_compute_stream")
disable_group_boxing_by_dst_parallel = _flag("disable_group_boxing_by_dst_parallel")
allow_fuse_all_reduce = _flag("allow_fuse_all_reduce")
allow_fuse_reduce_scatter = _flag("allow_fuse_reduce_scatter")
allow_fuse_all_gather = _flag("allow_fuse_all_gather")
allow_fuse_reduce = _flag("allow_fuse_reduce")
allow_fuse_broadcast = _flag("allow_fuse_broadcast")
allow_fuse_mixed_ops = _flag("allow_fuse_mixed_ops")
set_fusion_threshold_mbytes = _count("set_fusion_threshold_mbytes")
set_fusion_max_ops_num = _count("set_fusion_max_ops_num")
