"""Pytrees: nested containers whose leaves are arrays.

tuple, list, dict (by sorted key), None, namedtuples and registered user classes are
nodes; anything else is a leaf. A `PyTreeDef` is hashable, so it can key caches.
"""
from __future__ import annotations

from collections import OrderedDict

_registry = {}


class PyTreeDef:
    __slots__ = ("kind", "aux", "children", "num_leaves", "_hash")

    def __init__(self, kind, aux, children):
        self.kind, self.aux, self.children = kind, aux, children
        self.num_leaves = 1 if kind is None else sum(c.num_leaves for c in children)
        self._hash = hash((kind, aux, children))

    def __hash__(self):
        return self._hash

    def __eq__(self, other):
        return (type(other) is PyTreeDef and self._hash == other._hash and self.kind == other.kind
                and self.aux == other.aux and self.children == other.children)

    def __repr__(self):
        if self.kind is None:
            return "*"
        name = getattr(self.kind, "__name__", str(self.kind))
        return f"PyTreeDef({name}, [{', '.join(map(repr, self.children))}])"

    def unflatten(self, leaves):
        it = iter(leaves)
        out = _unflatten(self, it)
        return out


LEAF = PyTreeDef(None, None, ())


_hooks = []


def register_pytree_node(cls, flatten, unflatten):
    """flatten(obj) -> (children, hashable aux); unflatten(aux, children) -> obj.

    Parameters: cls (type): the container type. flatten (callable): obj -> (children, aux).
        unflatten (callable): (aux, children) -> obj.
    Returns: None.
    Raises: nothing (a later registration of cls replaces the earlier).

    >>> class Pair:
    ...     def __init__(self, a, b):
    ...         self.a, self.b = a, b
    >>> register_pytree_node(Pair, lambda p: ((p.a, p.b), None), lambda aux, kids: Pair(*kids))
    >>> tree_leaves(Pair(1, (2, 3)))
    [1, 2, 3]
    """
    _registry[cls] = (flatten, unflatten)
    for hook in _hooks:
        hook(cls, flatten, unflatten)


def registered_nodes():
    """The registered node types and their (flatten, unflatten) functions, as a list of pairs."""
    return list(_registry.items())


def add_registration_hook(hook):
    """hook(cls, flatten, unflatten) runs for every later registration (the C++ dispatcher mirrors them)."""
    _hooks.append(hook)


def _is_namedtuple(t):
    return issubclass(t, tuple) and hasattr(t, "_fields")


def _flatten(x, leaves):
    t = type(x)
    if t is tuple or t is list:
        return PyTreeDef(t, len(x), tuple(_flatten(c, leaves) for c in x))
    if t is dict:
        keys = tuple(sorted(x))
        return PyTreeDef(dict, keys, tuple(_flatten(x[k], leaves) for k in keys))
    if x is None:
        return PyTreeDef(type(None), None, ())
    if t in _registry:
        children, aux = _registry[t][0](x)
        return PyTreeDef(t, aux, tuple(_flatten(c, leaves) for c in children))
    if t is OrderedDict:
        keys = tuple(x)
        return PyTreeDef(OrderedDict, keys, tuple(_flatten(x[k], leaves) for k in keys))
    if issubclass(t, tuple) and _is_namedtuple(t):
        return PyTreeDef(t, None, tuple(_flatten(c, leaves) for c in x))
    leaves.append(x)
    return LEAF


def _unflatten(td, it):
    k = td.kind
    if k is None:
        return next(it)
    kids = [_unflatten(c, it) for c in td.children]
    if k is tuple:
        return tuple(kids)
    if k is list:
        return kids
    if k is dict or k is OrderedDict:
        return k(zip(td.aux, kids))
    if k is type(None):
        return None
    if k in _registry:
        return _registry[k][1](td.aux, kids)
    return k(*kids)  # namedtuple


def tree_flatten(tree):
    """The leaves of a pytree (nested tuples, lists, dicts, namedtuples, None and registered
    nodes), left to right, and its structure.

    Parameters: tree: any pytree.
    Returns: tuple: (list of leaves, PyTreeDef).
    Raises: nothing.

    >>> tree_flatten({"a": 1, "b": (2, 3)})
    ([1, 2, 3], PyTreeDef(dict, [*, PyTreeDef(tuple, [*, *])]))
    """
    leaves = []
    td = _flatten(tree, leaves)
    return leaves, td


def tree_unflatten(treedef, leaves):
    """The pytree of structure treedef holding leaves.

    Parameters: treedef (PyTreeDef): from tree_flatten or tree_structure. leaves (iterable): the leaves.
    Returns: the rebuilt pytree.
    Raises: ValueError: if the number of leaves does not match.

    >>> leaves, treedef = tree_flatten((1, [2]))
    >>> tree_unflatten(treedef, [5, 6])
    (5, [6])
    """
    return treedef.unflatten(leaves)


def tree_leaves(tree):
    """The leaves of a pytree, left to right.

    Parameters: tree: any pytree.
    Returns: list: the leaves.
    Raises: nothing.

    >>> tree_leaves([1, (2, 3)])
    [1, 2, 3]
    """
    return tree_flatten(tree)[0]


def tree_structure(tree):
    """The structure (PyTreeDef) of a pytree.

    Parameters: tree: any pytree.
    Returns: PyTreeDef: compares equal for pytrees of the same shape.
    Raises: nothing.

    >>> tree_structure((1, [2]))
    PyTreeDef(tuple, [*, PyTreeDef(list, [*])])
    """
    return tree_flatten(tree)[1]


def tree_map(f, tree, *rest):
    """f applied to the leaves of tree (and the corresponding leaves of rest), in tree's structure.

    Parameters: f (callable): takes 1 + len(rest) leaves. tree: a pytree. rest: pytrees of the same structure.
    Returns: the pytree of results.
    Raises: ValueError: if the structures differ.

    >>> tree_map(lambda v: v * 10, {"a": 1, "b": [2]})
    {'a': 10, 'b': [20]}
    """
    leaves, td = tree_flatten(tree)
    others = []
    for r in rest:
        rl, rtd = tree_flatten(r)
        if rtd != td:
            raise ValueError(f"tree_map: tree structures differ: {td} vs {rtd}")
        others.append(rl)
    return td.unflatten([f(*xs) for xs in zip(leaves, *others)])


def broadcast_prefix(prefix, tree, what="in_axes"):
    """Expand a prefix tree (e.g. in_axes) to one entry per leaf of `tree`."""
    out = []

    def rec(p, t):
        if isinstance(p, (tuple, list, dict)) and type(p) is not type(t) and not (
                isinstance(p, (tuple, list)) and isinstance(t, (tuple, list))):
            raise ValueError(f"{what} {p!r} does not match the structure of the arguments ({type(t).__name__})")
        if p is None or not isinstance(p, (tuple, list, dict)):
            out.extend([p] * len(tree_leaves(t)))
            return
        if isinstance(p, dict):
            if sorted(p) != sorted(t):
                raise ValueError(f"{what} keys {sorted(p)} do not match argument keys {sorted(t)}")
            for k in sorted(p):
                rec(p[k], t[k])
            return
        if len(p) != len(t):
            raise ValueError(f"{what} has {len(p)} entries but the arguments have {len(t)}")
        for pc, tc in zip(p, t):
            rec(pc, tc)

    rec(prefix, tree)
    return out
