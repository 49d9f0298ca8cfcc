"""oneflow.backends.mha: the switch of the fast path of nn.TransformerEncoder in inference (see
TransformerEncoder.forward: padded positions of the output become zeros, as PyTorch's nested
tensor path gives them)."""

_fastpath_enabled = True


def get_fastpath_enabled():
    """Whether the inference fast path of the transformer encoder is on (default True)."""
    return _fastpath_enabled


def set_fastpath_enabled(value):
    """Turns the inference fast path of the transformer encoder on or off."""
    global _fastpath_enabled
    _fastpath_enabled = bool(value)
