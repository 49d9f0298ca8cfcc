"""torch._inductor.config's settings, with PyTorch's defaults, for scripts that set them
(``config.coordinate_descent_tuning = True``, ``config.triton.cudagraphs = False``,
``config.patch(...)``). They configure PyTorch's code generator, which oneflow.compile does not
have (it compiles through nn.Graph): they are kept, not read."""

import sys

from oneflow.framework.config_module import Settings

debug = False
disable_progress = True
verbose_progress = False
max_autotune = False
max_autotune_pointwise = False
max_autotune_gemm = False
max_autotune_gemm_backends = "ATEN,TRITON,CPP"
search_autotune_cache = False
autotune_local_cache = True
coordinate_descent_tuning = False
coordinate_descent_check_all_directions = False
epilogue_fusion = True
pattern_matcher = True
freezing = False
fx_graph_cache = True
fx_graph_remote_cache = None
force_disable_caches = False
force_fuse_int_mm_with_mul = False
use_mixed_mm = True
split_reductions = True
benchmark_kernel = False
compile_threads = 1
worker_start_method = "subprocess"
cpp_wrapper = False
shape_padding = True
comprehensive_padding = True
permute_fusion = False
aggressive_fusion = False
layout_optimization = True
keep_output_stride = True
fallback_random = False
implicit_fallbacks = True
dce = False
size_asserts = True
nan_asserts = False
reorder_for_compute_comm_overlap = False
memory_planning = False
emulate_precision_casts = False
unroll_reductions_threshold = 8
realize_opcount_threshold = None
conv_1x1_as_mm = False
allow_buffer_reuse = True
inplace_buffers = True
post_grad_fusion_options = {}
pre_grad_fusion_options = {}
group_fusion = False
batch_fusion = True
max_fusion_size = 64
optimize_scatter_upon_const_tensor = True
decompose_mem_bound_mm = False
assume_aligned_inputs = False
generate_intermediate_hooks = False
profiler_mark_wrapper_call = False
online_softmax = True
use_fast_math = False

triton = Settings(
    cudagraphs=False,
    cudagraph_trees=True,
    unique_kernel_names=True,
    descriptive_names="original_aten",
    autotune_pointwise=True,
    multi_kernel=0,
    cooperative_reductions=False,
    max_tiles=None,
)
cpp = Settings(
    threads=-1,
    simdlen=None,
    enable_kernel_profile=False,
    weight_prepack=True,
    dynamic_threads=False,
)
cuda = Settings(arch=None, version=None, compile_opt_level="-O1")
trace = Settings(enabled=False, debug_dir=None)
aot_inductor = Settings(output_path="")


def patch(arg1=None, arg2=None, **kwargs):
    """Sets settings for a block or a decorated function: patch(name=value),
    patch("triton.cudagraphs", value) or patch({"name": value})."""
    from oneflow.framework.config_module import patch as _patch

    return _patch(sys.modules[__name__], arg1, arg2, **kwargs)
