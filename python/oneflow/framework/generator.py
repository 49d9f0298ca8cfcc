"""PyTorch's Generator API on oneflow.Generator (a C++ class; these are Python attributes of that
class, so every generator, the default ones included, has them): ``device``, ``set_state``
returning the generator, ``clone_state()``, and ``get_offset()``/``set_offset()`` (the offset
half of the state; as PyTorch's, a CPU generator refuses them).

The C++ generator keeps no device: the one given to the constructor is remembered here, by
generator (weakly); the default CUDA generators are found among oneflow.cuda's."""

import weakref

_devices = weakref.WeakKeyDictionary()


def _device_of(g):
    import oneflow

    d = _devices.get(g)
    if d is not None:
        return d
    if g is not oneflow.default_generator:
        for i in range(oneflow.cuda.device_count()):
            if g is oneflow._C.default_generator_of(f"cuda:{i}"):
                return oneflow.device("cuda", i)
    return oneflow.device("cpu")


def _check_offset(g):
    if _device_of(g).type == "cpu":
        raise RuntimeError("CPU Generator does not use offset")


def install(flow):
    Generator = flow.Generator
    init, get_state, set_state = Generator.__init__, Generator.get_state, Generator.set_state

    def __init__(self, device="cpu"):
        init(self, device)  # checks the device
        _devices[self] = flow.device(device if device is not None else "cpu")

    def set_state_method(self, new_state):
        """Sets the generator's state (a uint8 tensor from get_state); returns the
        generator."""
        set_state(self, new_state)
        return self

    def clone_state(self):
        """A new generator on this one's device with a copy of its state."""
        g = Generator(self.device)
        set_state(g, get_state(self))
        return g

    def get_offset(self):
        """The generator's offset (how far its counter-based stream has been drawn)."""
        _check_offset(self)
        return int.from_bytes(bytes(get_state(self).numpy()[8:16]), "little")

    def set_offset(self, offset):
        """Moves the generator's stream to `offset`; returns the generator."""
        _check_offset(self)
        state = get_state(self).numpy().copy()
        state[8:16] = list(int(offset).to_bytes(8, "little"))
        set_state(self, flow.from_numpy(state))
        return self

    __init__.__doc__ = init.__doc__
    Generator.__init__ = __init__
    Generator.device = property(_device_of, doc="The device of the generator's draws.")
    Generator.set_state = set_state_method
    Generator.clone_state = clone_state
    Generator.get_offset = get_offset
    Generator.set_offset = set_offset
