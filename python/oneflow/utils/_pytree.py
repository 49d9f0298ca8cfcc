"""oneflow.utils._pytree: nested containers ("pytrees") taken apart into their leaves and a
TreeSpec describing the nesting, and put back together, as PyTorch's torch.utils._pytree.

Containers that are nodes: tuple, list, dict, namedtuples, OrderedDict, defaultdict, deque, and
any type given to register_pytree_node; everything else (tensors, numbers, None, strings, ...)
is a leaf. Dicts keep their insertion order. The key-path functions (tree_flatten_with_path,
keystr, ...) and TreeSpec serialisation (treespec_dumps/loads) are not provided."""

import collections
import types
from typing import Any, Callable, List, NamedTuple, Tuple

__all__ = [
    "PyTree",
    "Context",
    "FlattenFn",
    "UnflattenFn",
    "TreeSpec",
    "LeafSpec",
    "register_pytree_node",
    "tree_is_leaf",
    "tree_flatten",
    "tree_unflatten",
    "tree_iter",
    "tree_leaves",
    "tree_structure",
    "tree_map",
    "tree_map_",
    "tree_map_only",
    "tree_map_only_",
    "tree_all",
    "tree_any",
    "tree_all_only",
    "tree_any_only",
    "treespec_pprint",
    "is_namedtuple",
    "is_namedtuple_class",
    "is_namedtuple_instance",
]

PyTree = Any
Context = Any
FlattenFn = Callable[[PyTree], Tuple[List[Any], Context]]
UnflattenFn = Callable[[List[Any], Context], PyTree]


class NodeDef(NamedTuple):
    type: Any
    flatten_fn: FlattenFn
    unflatten_fn: UnflattenFn


SUPPORTED_NODES = {}


def register_pytree_node(
    cls,
    flatten_fn,
    unflatten_fn,
    *,
    serialized_type_name=None,
    to_dumpable_context=None,
    from_dumpable_context=None,
    flatten_with_keys_fn=None,
):
    """Make `cls` a node: flatten_fn(node) gives (children, context), and
    unflatten_fn(children, context) rebuilds the node."""
    if cls in SUPPORTED_NODES:
        raise ValueError(f"{cls} is already registered as pytree node.")
    SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn)


_register_pytree_node = register_pytree_node


def is_namedtuple_class(cls):
    return (
        isinstance(cls, type)
        and issubclass(cls, tuple)
        and isinstance(getattr(cls, "_fields", None), tuple)
        and all(isinstance(f, str) for f in cls._fields)
        and callable(getattr(cls, "_make", None))
        and callable(getattr(cls, "_asdict", None))
    )


def is_namedtuple_instance(obj):
    return is_namedtuple_class(type(obj))


def is_namedtuple(obj):
    """Whether `obj` (a class or an instance) is a namedtuple."""
    return is_namedtuple_class(obj if isinstance(obj, type) else type(obj))


def _tuple_flatten(t):
    return list(t), None


def _list_flatten(t):
    return list(t), None


def _dict_flatten(d):
    return list(d.values()), list(d.keys())


def _namedtuple_flatten(t):
    return list(t), type(t)


def _ordereddict_flatten(d):
    return list(d.values()), list(d.keys())


def _defaultdict_flatten(d):
    return list(d.values()), [d.default_factory, list(d.keys())]


def _deque_flatten(d):
    return list(d), d.maxlen


register_pytree_node(tuple, _tuple_flatten, lambda values, context: tuple(values))
register_pytree_node(list, _list_flatten, lambda values, context: list(values))
register_pytree_node(dict, _dict_flatten, lambda values, keys: dict(zip(keys, values)))
register_pytree_node(collections.namedtuple, _namedtuple_flatten, lambda values, cls: cls(*values))
register_pytree_node(
    collections.OrderedDict,
    _ordereddict_flatten,
    lambda values, keys: collections.OrderedDict(zip(keys, values)),
)
register_pytree_node(
    collections.defaultdict,
    _defaultdict_flatten,
    lambda values, context: collections.defaultdict(context[0], zip(context[1], values)),
)
register_pytree_node(
    collections.deque,
    _deque_flatten,
    lambda values, maxlen: collections.deque(values, maxlen=maxlen),
)


def _node_type(tree):
    """The registry key of `tree`'s node kind (namedtuples share collections.namedtuple)."""
    if is_namedtuple_instance(tree):
        return collections.namedtuple
    return type(tree)


def _is_leaf(tree, is_leaf=None):
    if is_leaf is not None and is_leaf(tree):
        return True
    return _node_type(tree) not in SUPPORTED_NODES


def tree_is_leaf(tree, is_leaf=None):
    return _is_leaf(tree, is_leaf)


class TreeSpec:
    """The nesting of a pytree: its node `type`, the node's `context` (dict keys, the
    namedtuple class, ...) and one TreeSpec per child. A leaf's spec has type None."""

    def __init__(self, type, context, children_specs):
        self.type = type
        self.context = context
        self.children_specs = list(children_specs)
        if type is None:
            self.num_nodes, self.num_leaves = 1, 1
        else:
            self.num_nodes = 1 + sum(c.num_nodes for c in self.children_specs)
            self.num_leaves = sum(c.num_leaves for c in self.children_specs)
        self.num_children = len(self.children_specs)

    def is_leaf(self):
        return self.num_nodes == 1 and self.num_leaves == 1

    def child(self, index):
        return self.children_specs[index]

    def children(self):
        return list(self.children_specs)

    def __repr__(self, indent=0):
        if self.is_leaf():
            return "*"
        name = getattr(self.type, "__name__", repr(self.type))
        parts = [c.__repr__(indent + 2) for c in self.children_specs]
        children = (",\n" + " " * (indent + 2)).join(parts)
        return f"TreeSpec({name}, {self.context!r}, [{children}])"

    def flatten_up_to(self, tree):
        """The subtrees of `tree` at this spec's leaves; `tree` must have this spec's nodes
        (ValueError otherwise)."""
        out = []
        self._flatten_up_to(tree, out)
        return out

    def _flatten_up_to(self, tree, out):
        if self.is_leaf():
            out.append(tree)
            return
        node_type = _node_type(tree)
        if node_type not in SUPPORTED_NODES:
            raise ValueError(
                f"Expected tree to be a {self.type.__name__} node, but got {type(tree).__name__}"
            )
        if node_type is not self.type:
            raise ValueError(f"Node type mismatch; expected {self.type!r}, but got {type(tree)!r}.")
        children, context = SUPPORTED_NODES[node_type].flatten_fn(tree)
        if len(children) != self.num_children:
            raise ValueError(
                f"Node arity mismatch; expected {self.num_children}, but got {len(children)}."
            )
        if node_type in (dict, collections.OrderedDict, collections.defaultdict):
            keys = context if node_type is not collections.defaultdict else context[1]
            mine = self.context if node_type is not collections.defaultdict else self.context[1]
            if set(keys) != set(mine):
                missing, extra = set(mine) - set(keys), set(keys) - set(mine)
                message = "Node keys mismatch"
                if missing:
                    message += f"; missing key(s): {missing}"
                if extra:
                    message += f"; extra key(s): {extra}"
                raise ValueError(message + ".")
            by_key = dict(zip(keys, children))
            children = [by_key[k] for k in mine]
        elif context != self.context:
            raise ValueError(
                f"Node context mismatch for custom node type {self.type!r}: expected "
                f"{self.context!r}, but got {context!r}."
            )
        for spec, child in zip(self.children_specs, children):
            spec._flatten_up_to(child, out)

    def unflatten(self, leaves):
        leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(
                f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} but the spec "
                f"refers to a pytree that holds {self.num_leaves} items ({self!r})."
            )
        return self._unflatten(iter(leaves))

    def _unflatten(self, it):
        if self.is_leaf():
            return next(it)
        children = [spec._unflatten(it) for spec in self.children_specs]
        return SUPPORTED_NODES[self.type].unflatten_fn(children, self.context)

    def __eq__(self, other):
        if not isinstance(other, TreeSpec):
            return NotImplemented
        return (
            self.type == other.type
            and self.context == other.context
            and self.children_specs == other.children_specs
        )

    def __hash__(self):
        return hash((self.type, repr(self.context), tuple(self.children_specs)))


class LeafSpec(TreeSpec):
    """The spec of a leaf."""

    def __init__(self):
        super().__init__(None, None, [])


_LEAF = LeafSpec()


def tree_flatten(tree, is_leaf=None):
    """(leaves, TreeSpec) of `tree`; `is_leaf(node)` True stops the descent at that node."""
    leaves = []

    def walk(node):
        if _is_leaf(node, is_leaf):
            leaves.append(node)
            return _LEAF
        node_type = _node_type(node)
        children, context = SUPPORTED_NODES[node_type].flatten_fn(node)
        return TreeSpec(node_type, context, [walk(c) for c in children])

    spec = walk(tree)
    return leaves, spec


def tree_unflatten(leaves, treespec):
    if not isinstance(treespec, TreeSpec):
        raise TypeError(
            f"tree_unflatten(leaves, treespec): Expected `treespec` to be instance of "
            f"TreeSpec but got item of type {type(treespec)}."
        )
    return treespec.unflatten(leaves)


def tree_iter(tree, is_leaf=None):
    """The leaves of `tree`, one at a time."""
    if _is_leaf(tree, is_leaf):
        yield tree
        return
    children, _ = SUPPORTED_NODES[_node_type(tree)].flatten_fn(tree)
    for child in children:
        yield from tree_iter(child, is_leaf)


def tree_leaves(tree, is_leaf=None):
    return list(tree_iter(tree, is_leaf))


def tree_structure(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[1]


def tree_map(func, tree, *rests, is_leaf=None):
    """`tree` with each leaf x replaced by func(x, *the matching leaves of `rests`); each of
    `rests` must have `tree`'s structure (or hold whole subtrees where `tree` has leaves)."""
    leaves, spec = tree_flatten(tree, is_leaf)
    flat = [leaves] + [spec.flatten_up_to(r) for r in rests]
    return spec.unflatten(map(func, *flat))


def tree_map_(func, tree, *rests, is_leaf=None):
    """Calls func on the leaves as tree_map does, for its side effects; returns `tree`."""
    leaves, spec = tree_flatten(tree, is_leaf)
    flat = [leaves] + [spec.flatten_up_to(r) for r in rests]
    collections.deque(map(func, *flat), maxlen=0)
    return tree


def _type_filter(type_or_types_or_pred):
    if isinstance(type_or_types_or_pred, (type, tuple, getattr(types, "UnionType", ()))):
        kinds = type_or_types_or_pred
        return lambda x: isinstance(x, kinds)
    if callable(type_or_types_or_pred):
        return type_or_types_or_pred
    raise TypeError("Argument must be a type, a tuple of types, or a callable.")


def _map_only(type_or_types_or_pred, func):
    keep = _type_filter(type_or_types_or_pred)

    def wrapped(x):
        return func(x) if keep(x) else x

    return wrapped


def tree_map_only(type_or_types_or_pred, func, tree, is_leaf=None):
    """tree_map applying func only to the leaves of the given type(s) (or passing the
    predicate); the other leaves stay as they are."""
    return tree_map(_map_only(type_or_types_or_pred, func), tree, is_leaf=is_leaf)


def tree_map_only_(type_or_types_or_pred, func, tree, is_leaf=None):
    return tree_map_(_map_only(type_or_types_or_pred, func), tree, is_leaf=is_leaf)


def tree_all(pred, tree, is_leaf=None):
    return all(map(pred, tree_iter(tree, is_leaf)))


def tree_any(pred, tree, is_leaf=None):
    return any(map(pred, tree_iter(tree, is_leaf)))


def tree_all_only(type_or_types, pred, tree, is_leaf=None):
    keep = _type_filter(type_or_types)
    return all(pred(x) for x in tree_iter(tree, is_leaf) if keep(x))


def tree_any_only(type_or_types, pred, tree, is_leaf=None):
    keep = _type_filter(type_or_types)
    return any(pred(x) for x in tree_iter(tree, is_leaf) if keep(x))


class _Star:
    def __repr__(self):
        return "*"


def treespec_pprint(treespec):
    """The structure drawn as the containers' own repr with * at each leaf: [*, (*, *)],
    {'a': *}, NT(a=*, b=*), ..."""
    return repr(treespec.unflatten([_Star()] * treespec.num_leaves))
