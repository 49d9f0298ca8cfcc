"""oneflow.placement and oneflow.sbp: the layout of global tensors (DESIGN.md section 8).

Creating a tensor with ``placement=`` reaches the dispatcher's eager-global mode, which raises
NotImplementedError until global tensors are built.
"""


class placement:
    def __init__(self, type, ranks):
        if type not in ("cpu", "cuda"):
            raise ValueError(f"placement: expected device type 'cpu' or 'cuda', got {type!r}")
        self.type = type
        self.ranks = list(ranks)

    def __repr__(self):
        return f'oneflow.placement(type="{self.type}", ranks={self.ranks})'

    __str__ = __repr__

    def __eq__(self, other):
        return isinstance(other, placement) and (self.type, self.ranks) == (
            other.type,
            other.ranks,
        )

    def __hash__(self):
        return hash((self.type, str(self.ranks)))
