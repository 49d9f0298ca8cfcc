"""torch._dynamo.eval_frame's public class: OptimizedModule, the type oneflow.compile returns
for a module (isinstance checks and unwrapping through ``_orig_mod``)."""

from oneflow.framework.compile import OptimizedModule

__all__ = ["OptimizedModule"]
