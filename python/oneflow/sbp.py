"""oneflow.sbp: split(dim), broadcast and partial_sum layouts of a global tensor."""


class sbp:
    def __init__(self, kind, axis=None):
        self.kind = kind
        self.axis = axis

    def __repr__(self):
        if self.kind == "split":
            return f"oneflow.sbp.split(dim={self.axis})"
        return f"oneflow.sbp.{self.kind}"

    def __eq__(self, other):
        return isinstance(other, sbp) and (self.kind, self.axis) == (other.kind, other.axis)

    def __hash__(self):
        return hash((self.kind, self.axis))

    def __call__(self):
        """OneFlow's docs also write broadcast() and partial_sum(): the same layout."""
        return self


def split(dim=None, *, axis=None):
    """Split along `dim` (OneFlow's older keyword: axis)."""
    if dim is None:
        if axis is None:
            raise TypeError("split() missing 1 required argument: 'dim'")
        dim = axis
    return sbp("split", int(dim))


broadcast = sbp("broadcast")
partial_sum = sbp("partial_sum")
