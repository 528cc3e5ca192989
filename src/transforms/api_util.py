"""Adapters between user functions (pytrees of Arrays) and flat functions on raw values."""
from __future__ import annotations

import numpy as np

from .backend import backend
from .core import ShapedArray, Tracer, boxing, get_aval
from .pytree import tree_flatten, tree_unflatten

_SCALARS = (bool, int, float, complex)


def to_raw(x, where="argument"):
    """An argument leaf as a raw value: Array -> payload; scalars/NumPy -> device values."""
    if type(x) is boxing.box_type:
        return x._v
    if isinstance(x, Tracer):
        return x
    if type(x) is boxing.buffer_type:
        return backend.adopt(x)   # (another runtime's array of that type, e.g. a jax.Array: copied in)
    if type(x) in _SCALARS or isinstance(x, (np.ndarray, np.generic)):
        from .primitives.elementwise import convert_element_type
        a = get_aval(x)
        if isinstance(x, (np.ndarray, np.generic)) and x.dtype.kind not in "biufc":
            raise TypeError(f"{where}: NumPy dtype {x.dtype} is not an array dtype")
        return convert_element_type(x, a.dtype, a.weak_type)
    raise TypeError(f"{where}: expected an array, a Python scalar or a pytree of them, "
                    f"got {type(x).__name__}")


def arg_aval(x, where="argument"):
    """The aval of an argument leaf without running anything (make_jaxpr needs only types): an Array,
    a raw value, a Python/NumPy scalar or array, or a shape-and-dtype spec (ShapedArray, ShapeDtypeStruct)."""
    if type(x) is boxing.box_type:
        x = x._v
    aval = getattr(x, "aval", None)
    if aval is not None:
        return aval
    if isinstance(x, ShapedArray):
        return x
    if type(x) in _SCALARS or isinstance(x, (np.ndarray, np.generic)):
        if isinstance(x, (np.ndarray, np.generic)) and x.dtype.kind not in "biufc":
            raise TypeError(f"{where}: NumPy dtype {x.dtype} is not an array dtype")
        return get_aval(x)
    if hasattr(x, "shape") and hasattr(x, "dtype"):
        return ShapedArray(tuple(x.shape), np.dtype(x.dtype))
    raise TypeError(f"{where}: expected an array, a Python scalar, a shape-and-dtype spec or a pytree of "
                    f"them, got {type(x).__name__}")


def box(v):
    return boxing.box(v)


class Store:
    """Receives the output tree of a flattened function when it runs, and (with write-back) the
    argument leaves the function wrote into."""
    __slots__ = ("val", "mutated")

    def __init__(self):
        self.val = None
        self.mutated = ()


def alias_pattern(leaves):
    """Per argument leaf, the index of the first leaf that is the same Array handle (else its own)."""
    seen, pat = {}, []
    for i, x in enumerate(leaves):
        pat.append(seen.setdefault(id(x), i) if type(x) is boxing.box_type else i)
    return tuple(pat)


def flatten_fun(f, in_tree, store, where="function output", aliases=None, writeback=False):
    """f(*pytree args) -> out  ==>  flat(*raw leaves) -> raw leaves; out tree into store.

    With `writeback`, the final values of the argument handles the function rebound (x[i] = v,
    x += y) follow the outputs, and their leaf indices go into `store.mutated`: the transform then
    rebinds the caller's handles (`write_back`), so writes into arguments mean what they mean eagerly.
    `aliases` (from alias_pattern) gives leaves that are one handle for the caller one handle here too.
    """
    def flat(*raw):
        boxes = []
        for i, v in enumerate(raw):
            j = i if aliases is None else aliases[i]
            boxes.append(box(v) if j == i else boxes[j])
        args = tree_unflatten(in_tree, boxes)
        out = f(*args)
        leaves, out_tree = tree_flatten(out)
        store.val = out_tree
        outs = [to_raw(x, where) for x in leaves]
        if writeback:
            store.mutated = tuple(i for i, (b, r) in enumerate(zip(boxes, raw))
                                  if (aliases is None or aliases[i] == i) and type(b) is boxing.box_type
                                  and b._v is not r)
            outs += [boxes[i]._v for i in store.mutated]
        return outs
    return flat


def run_flat(run, f, tree, store, aliases, where="function output"):
    """run(flat) for flat = flatten_fun(f, ..., writeback=True): first with a box per leaf, so that an Array
    handle the caller passed twice is two independent inputs (its tangents, batch axes and jit parameters
    stay apart, as JAX's are); then, only where the function wrote into a handle passed more than once,
    again with those leaves sharing one box, as eager code shares the handle (the write must show
    through the other). aliases: alias_pattern of the argument leaves (or None: no handle twice).
    Returns run's result; store holds the run that counts."""
    out = run(flatten_fun(f, tree, store, where, writeback=True))
    if store.mutated and aliases is not None and any(aliases.count(aliases[i]) > 1 for i in store.mutated):
        out = run(flatten_fun(f, tree, store, where, aliases=aliases, writeback=True))
    return out


def split_mutated(outs, store):
    """(the function's own outputs, the final values of the arguments it wrote into)."""
    n = len(outs) - len(store.mutated)
    return outs[:n], outs[n:]


def write_back(leaves, mutated, finals, transform):
    """Rebind the caller's argument handles the transformed function wrote into (as eager code does)."""
    for i, v in zip(mutated, finals):
        h = leaves[i]
        if type(h) is boxing.box_type:
            h._rebind(box(v), f"{transform}: a write into argument leaf {i}")


def flatten_args(args):
    leaves, tree = tree_flatten(tuple(args))
    return [to_raw(x) for x in leaves], tree


def with_args(fun, args, nums, kwargs=None):
    """fun as a function of the positional arguments at `nums` only; the others stay fixed."""
    kwargs = kwargs or {}

    def f(*dyn):
        full = list(args)
        for i, d in zip(nums, dyn):
            full[i] = d
        return fun(*full, **kwargs)
    return f


def argnums_tuple(argnums, nargs, fname):
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)
    for a in nums:
        if not isinstance(a, int) or not -nargs <= a < nargs:
            raise ValueError(f"{fname}: argnums {argnums!r} out of range for {nargs} positional arguments")
    return tuple(a % nargs for a in nums), single
