"""GraphModule: the proxy an nn.Graph puts in front of each nn.Module assigned to it.

Calling the proxy calls the module, attribute reads go to the module (submodules come back as
proxies too, so `graph.model.layer1.activation_checkpointing = True` works), and `.origin` is
the module itself: the parameters a graph trains are the module's own objects. The per-module
graph settings (activation checkpointing, pipeline stage) are stored here; a replayed program
keeps every activation it needs, so they do not change results.
"""

from oneflow.nn.modules.module import Module


class GraphModule:
    def __init__(self, module, name, prefix=""):
        if not isinstance(module, Module):
            raise TypeError(f"GraphModule wraps an nn.Module, got {type(module).__name__}")
        d = self.__dict__
        d["_origin"] = module
        d["_name"] = name
        d["_name_prefix"] = prefix
        d["_activation_checkpointing"] = False
        d["_stage_id"] = None
        d["_stage_placement"] = None
        d["_children"] = {}

    @property
    def origin(self):
        return self._origin

    @property
    def name(self):
        return self._name

    @property
    def name_prefix(self):
        return self._name_prefix

    @property
    def activation_checkpointing(self):
        return self._activation_checkpointing

    @activation_checkpointing.setter
    def activation_checkpointing(self, mode):
        self.__dict__["_activation_checkpointing"] = bool(mode)

    @property
    def config(self):
        """OneFlow's older spelling (`graph.block.config.set_stage(...)`,
        `config.activation_checkpointing = True`): the settings live on the proxy itself."""
        return self

    @property
    def stage_id(self):
        return self._stage_id

    @stage_id.setter
    def stage_id(self, stage_id):
        self.__dict__["_stage_id"] = stage_id

    @property
    def stage_placement(self):
        return self._stage_placement

    def set_stage(self, stage_id, placement=None):
        """Pipeline stage of this module (stored: the placements of a stage's parameters and
        activations decide where it runs)."""
        self.__dict__["_stage_id"] = stage_id
        self.__dict__["_stage_placement"] = placement

    def to(self, *args, **kwargs):
        # OneFlow's idiom `graph.model.to(GraphModule)` returns the graph-side proxy.
        if len(args) == 1 and not kwargs and args[0] is GraphModule:
            return self
        return self._origin.to(*args, **kwargs)

    def _child(self, key, module):
        key = str(key)
        child = self._children.get(key)
        if child is None or child._origin is not module:
            child = GraphModule(module, key, self._name_prefix + self._name + ".")
            self._children[key] = child
        return child

    def __call__(self, *args, **kwargs):
        return self._origin(*args, **kwargs)

    def __getattr__(self, name):
        value = getattr(self.__dict__["_origin"], name)
        if isinstance(value, Module):
            return self._child(name, value)
        return value

    def __setattr__(self, name, value):
        if isinstance(getattr(type(self), name, None), property):
            object.__setattr__(self, name, value)
        else:
            setattr(self._origin, name, value)

    def __getitem__(self, idx):
        value = self._origin[idx]
        return self._child(idx, value) if isinstance(value, Module) else value

    def __iter__(self):
        for i, value in enumerate(self._origin):
            yield self._child(i, value) if isinstance(value, Module) else value

    def __len__(self):
        return len(self._origin)

    def __repr__(self):
        body = repr(self._origin).replace("\n", "\n  ")
        return f"(MODULE:{self._name_prefix}{self._name}:{body})"
