"""torch._dynamo.config's settings. oneflow.compile reads ``recompile_limit`` (also named
``cache_size_limit``): the plans one compiled object keeps for different module states before
it runs eagerly. The others are kept for scripts that set them; they configure parts of
PyTorch's tracer that oneflow.compile does not have. ``patch(...)`` sets settings for a block or
a decorated function."""

import sys
import types

recompile_limit = 8
accumulated_cache_size_limit = 256
suppress_errors = False
verbose = False
optimize_ddp = True
capture_scalar_outputs = False
capture_dynamic_output_shape_ops = False
automatic_dynamic_shapes = True
assume_static_by_default = True
force_parameter_static_shapes = True
inline_inbuilt_nn_modules = True


def patch(arg1=None, arg2=None, **kwargs):
    """Sets settings for a block or a decorated function: patch(name=value),
    patch("name", value) or patch({"name": value})."""
    from oneflow.framework.config_module import patch as _patch

    return _patch(sys.modules[__name__], arg1, arg2, **kwargs)


class _Config(types.ModuleType):
    @property
    def cache_size_limit(self):  # the older name of recompile_limit
        return self.recompile_limit

    @cache_size_limit.setter
    def cache_size_limit(self, value):
        self.recompile_limit = value


sys.modules[__name__].__class__ = _Config
