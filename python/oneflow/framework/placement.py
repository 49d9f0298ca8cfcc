"""oneflow.placement: the device type and process ranks a global tensor lives on (DESIGN.md
section 8). Nested ranks describe an N-D hierarchy (Note [N-D placements] in framework/global.h).
"""


def _ranks_of_machines(devices):
    """OneFlow's older form {machine: device ids}: the ranks of those devices, the machines
    holding the same number of processes each."""
    from oneflow import env

    per_machine = max(env.get_world_size() // max(env.get_node_size(), 1), 1)
    return [int(m) * per_machine + int(d) for m in sorted(devices) for d in devices[m]]


def _nested_list(ranks):
    """Ranks as nested lists of ints (from lists, tuples, ranges or NumPy arrays)."""
    if hasattr(ranks, "tolist"):
        ranks = ranks.tolist()
    if isinstance(ranks, (list, tuple, range)):
        return [_nested_list(r) for r in ranks]
    return int(ranks) if not isinstance(ranks, bool) else ranks


def _check_rectangular(ranks):
    """Nested lists of one length per depth with ranks (ints) at the innermost level only."""
    level, shape = ranks, []
    while isinstance(level, list):
        if not level:
            raise ValueError(f"placement: a placement needs at least one rank, got {ranks}")
        shape.append(len(level))
        level = level[0]

    def check(x, depth):
        if depth == len(shape):
            if isinstance(x, list):
                raise ValueError(f"placement: the nested lists of ranks are not regular: {ranks}")
            return
        if not isinstance(x, list) or len(x) != shape[depth]:
            raise ValueError(
                "placement: the nested lists of ranks must all have the same length (an "
                f"N-D array of ranks), got {ranks}"
            )
        for y in x:
            check(y, depth + 1)

    check(ranks, 0)


class placement:
    def __init__(self, type, ranks):
        if type not in ("cpu", "cuda"):
            raise ValueError(f"placement: expected device type 'cpu' or 'cuda', got {type!r}")
        self.type = type
        if isinstance(ranks, dict):
            ranks = _ranks_of_machines(ranks)
        self._ranks = _nested_list(ranks)
        if not isinstance(self._ranks, list):
            self._ranks = [self._ranks]
        _check_rectangular(self._ranks)

    @property
    def ranks(self):
        """The ranks as a NumPy array (OneFlow's placement.ranks: .flat, .shape)."""
        import numpy as np

        return np.array(self._ranks, dtype=np.int64)

    def _flat_ranks(self):
        """The ranks in row-major order (the hierarchy flattened)."""
        out, stack = [], [self._ranks]
        while stack:
            level = stack.pop()
            if isinstance(level, list):
                stack.extend(reversed(level))
            else:
                out.append(level)
        return out

    def __setstate__(self, state):
        state = dict(state)
        if "ranks" in state:  # pickled before ranks became a property
            state["_ranks"] = state.pop("ranks")
        self.__dict__.update(state)

    @staticmethod
    def all(device_type):
        """A placement over every rank of the run on device_type ("cpu" or "cuda")."""
        from oneflow import env

        return placement(device_type, list(range(env.get_world_size())))

    @property
    def hierarchy(self):
        """The shape of the ranks (a oneflow.Size, as OneFlow's)."""
        from oneflow.framework.size import Size

        shape, level = [], self._ranks
        while isinstance(level, list):
            shape.append(len(level))
            level = level[0] if level else None
        return Size(shape)

    def __repr__(self):
        return f'oneflow.placement(type="{self.type}", ranks={self._ranks})'

    __str__ = __repr__

    def __eq__(self, other):
        return isinstance(other, placement) and (self.type, self._ranks) == (
            other.type,
            other._ranks,
        )

    def __hash__(self):
        return hash((self.type, str(self._ranks)))
