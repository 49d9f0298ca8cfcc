"""torch._dynamo.config's settings. oneflow.compile reads ``recompile_limit`` (also named
``cache_size_limit``): the plans one compiled object keeps for different module states before
it runs eagerly. The others are kept for scripts that set them; they configure parts of
PyTorch's tracer that oneflow.compile does not have."""

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


class _Config(types.ModuleType):
    @property
    def cache_size_limit(self):  # the older name of recompile_limit
        return self.recompile_limit

    @cache_size_limit.setter
    def cache_size_limit(self, value):
        self.recompile_limit = value


sys.modules[__name__].__class__ = _Config
