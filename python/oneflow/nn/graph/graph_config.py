"""GraphConfig: the per-graph settings of oneflow.nn.Graph (`graph.config`).

OneFlow's graph compiler reads these as optimisation hints (fusions, memory strategies, the
straighten pass, auto parallel costs). Here a graph is a recorded eager program replayed as is,
so the hints are stored and readable (`config.settings`, `config.<name>_enabled`) but change
nothing in the results. Settings that would change the program raise NotImplementedError when
enabled (ZeRO, auto parallel), except mixed precision and gradient accumulation, which graph.py
applies.
"""

_STRAIGHTEN_MODES = ("Disable", "SpeedFirst", "MemoryFirst", "OverlapCpuGpu", "DelayShortGpu")
_AUTO_MEMORY_MODES = (
    "Disable",
    "SlightMemoryDown",
    "ModerateMemoryDown",
    "HeavyMemoryDown",
    "AdaptiveMemory",
)


def _not_implemented(what):
    return NotImplementedError(f"nn.GraphConfig: {what} in graphs is not implemented yet")


class GraphConfig:
    """Settings of one nn.Graph; every setter records its value in `settings`."""

    def __init__(self):
        self.training = False
        self.settings = {
            "allow_fuse_add_to_output": False,
            "allow_fuse_cast_scale": False,
            "allow_fuse_model_update_ops": False,
            "enable_compress_memory": False,
            "enable_cudnn_conv_heuristic_search_algo": True,
            "enable_multi_tensor_update": False,
            "enable_fused_model_update_cast": False,
            "straighten_algorithm": "MemoryFirst",
            "auto_memory": "AdaptiveMemory",
            "auto_parallel_computation_cost_ratio": 0.05,
            "auto_parallel_wait_time": 1.65e4,
            "enable_amp": False,
            "enable_zero": False,
            "enable_auto_parallel": False,
            "enable_auto_parallel_ignore_user_sbp_config": False,
            "enable_auto_parallel_sbp_collector": False,
            "enable_auto_parallel_trunk_algo": False,
            "gradient_accumulation_steps": 1,
        }

    def __getattr__(self, name):
        # `config.allow_fuse_add_to_output_enabled` reads the boolean setting of that name.
        if name.endswith("_enabled"):
            settings = self.__dict__.get("settings", {})
            key = name[: -len("_enabled")]
            if key in settings:
                return settings[key]
        raise AttributeError(f"'GraphConfig' object has no attribute '{name}'")

    # ---- optimisation hints: stored, no effect on results ----

    def allow_fuse_add_to_output(self, mode: bool = True):
        self.settings["allow_fuse_add_to_output"] = bool(mode)

    def allow_fuse_cast_scale(self, mode: bool = True):
        self.settings["allow_fuse_cast_scale"] = bool(mode)

    def allow_fuse_model_update_ops(self, mode: bool = True):
        self.settings["allow_fuse_model_update_ops"] = bool(mode)

    def enable_compress_memory(self, mode: bool = True):
        self.settings["enable_compress_memory"] = bool(mode)

    def enable_cudnn_conv_heuristic_search_algo(self, mode: bool = True):
        self.settings["enable_cudnn_conv_heuristic_search_algo"] = bool(mode)

    def enable_multi_tensor_update(self, mode: bool = True):
        self.settings["enable_multi_tensor_update"] = bool(mode)

    def enable_fused_model_update_cast(self, mode: bool = True):
        self.settings["enable_fused_model_update_cast"] = bool(mode)

    def enable_straighten_algorithm(self, mode: str = "MemoryFirst"):
        if mode not in _STRAIGHTEN_MODES:
            raise ValueError(
                f"nn.GraphConfig.enable_straighten_algorithm: mode must be one of "
                f"{', '.join(_STRAIGHTEN_MODES)}, got {mode!r}"
            )
        self.settings["straighten_algorithm"] = mode

    def enable_auto_memory(self, mode: str = "AdaptiveMemory"):
        if mode not in _AUTO_MEMORY_MODES:
            raise ValueError(
                f"nn.GraphConfig.enable_auto_memory: mode must be one of "
                f"{', '.join(_AUTO_MEMORY_MODES)}, got {mode!r}"
            )
        self.settings["auto_memory"] = mode

    def set_auto_parallel_computation_cost_ratio(self, ratio: float):
        self.settings["auto_parallel_computation_cost_ratio"] = float(ratio)

    def set_auto_parallel_wait_time(self, cost: float):
        self.settings["auto_parallel_wait_time"] = float(cost)

    # ---- settings that would change the program: only "off" is accepted ----

    def _only_off(self, key, mode, what):
        if mode:
            raise _not_implemented(what)
        self.settings[key] = False

    def enable_amp(self, mode: bool = True, *, dtype=None):
        """Traces build() under oneflow.autocast on the parameters' device (dtype: float16 on
        CUDA, bfloat16 on the CPU unless given): matmuls and convolutions in that dtype, losses
        in float32, gradients and the optimizer's update on the float32 parameters."""
        self.settings["enable_amp"] = bool(mode)
        self.settings["amp_dtype"] = dtype

    def enable_zero(
        self,
        mode: bool = True,
        *,
        stage: int = 1,
        shard_min_size: int = 1024,
        shard_restore_level: int = 1,
    ):
        self._only_off("enable_zero", mode, "ZeRO optimizer state sharding")

    def enable_auto_parallel(self, mode: bool = True):
        self._only_off("enable_auto_parallel", mode, "auto parallel")

    def enable_auto_parallel_ignore_user_sbp_config(self, mode: bool = True):
        self._only_off("enable_auto_parallel_ignore_user_sbp_config", mode, "auto parallel")

    def enable_auto_parallel_sbp_collector(self, mode: bool = True):
        self._only_off("enable_auto_parallel_sbp_collector", mode, "auto parallel")

    def enable_auto_parallel_trunk_algo(self, mode: bool = True):
        self._only_off("enable_auto_parallel_trunk_algo", mode, "auto parallel")

    def set_gradient_accumulation_steps(self, value: int):
        """Each call's batch (dim 0 of every input tensor) is split into `value` micro-batches;
        build() runs once per micro-batch, gradients are summed over them and divided by
        `value` (the full batch's mean-loss gradient when the loss is a mean), the optimizers
        step once, and tensor outputs come back concatenated along dim 0 (0-d outputs stacked
        into a vector of one value per micro-batch)."""
        if int(value) < 1:
            raise ValueError(
                "nn.GraphConfig.set_gradient_accumulation_steps: expected a positive number "
                f"of steps, got {value}"
            )
        self.settings["gradient_accumulation_steps"] = int(value)

    def __repr__(self):
        items = ", ".join(f"{k}={v!r}" for k, v in self.settings.items())
        return f"GraphConfig(training={self.training}, {items})"
