"""oneflow.placement: the device type and process ranks a global tensor lives on (DESIGN.md
section 8). Nested ranks describe an N-D hierarchy; global ops support 1-D placements over the
whole process group (framework/global.h).
"""


class placement:
    def __init__(self, type, ranks):
        if type not in ("cpu", "cuda"):
            raise ValueError(f"placement: expected device type 'cpu' or 'cuda', got {type!r}")
        self.type = type
        self.ranks = list(ranks)

    @staticmethod
    def all(device_type):
        """A placement over every rank of the run on device_type ("cpu" or "cuda")."""
        from oneflow import env

        return placement(device_type, list(range(env.get_world_size())))

    @property
    def hierarchy(self):
        shape, level = [], self.ranks
        while isinstance(level, list):
            shape.append(len(level))
            level = level[0] if level else None
        return tuple(shape)

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
