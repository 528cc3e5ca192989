"""Adapters between user functions (pytrees of Arrays) and flat functions on raw values."""
from __future__ import annotations

import numpy as np

from . import returned
from .backend import backend
from .core import ShapedArray, Tracer, boxing, get_aval, trace_state
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
        if type(x) is int and not -2 ** 63 <= x < 2 ** 63:
            raise OverflowError(f"{where}: the Python int {x} is beyond int64, the integer a Python int argument "
                                "becomes; pass float(n) for its value as a float, or make the argument static")
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
    __slots__ = ("val", "mutated", "numbers")

    def __init__(self):
        self.val = None
        self.mutated = ()
        self.numbers = ()   # (leaf index, Python type, traced value): float() results returned (returned.py)


def alias_pattern(leaves, views=True):
    """Per argument leaf, the index of the first leaf that is the same Array handle (else its own); with
    `views`, for a leaf that is a view (a chain of views) of another leaf, (that leaf's index, the chain)."""
    seen, pat = {}, []
    for i, x in enumerate(leaves):
        pat.append(seen.setdefault(id(x), i) if type(x) is boxing.box_type else i)
    if views and boxing.views is not None:
        boxing.views.derivations(leaves, pat)
    return tuple(pat)


def _group(aliases, i):
    j = aliases[i]
    return j[0] if type(j) is tuple else j


def shares_data(mutated, aliases):
    """Whether a leaf the function wrote into is one handle with, or a view of, another leaf's."""
    if not mutated or aliases is None:
        return False
    groups = [_group(aliases, i) for i in range(len(aliases))]
    return any(groups.count(groups[i]) > 1 for i in mutated)


def flatten_fun(f, in_tree, store, where="function output", aliases=None, writeback=False):
    """f(*pytree args) -> out  ==>  flat(*raw leaves) -> raw leaves; out tree into store.

    With `writeback`, the final values of the argument handles the function rebound (x[i] = v,
    x += y) follow the outputs, and their leaf indices go into `store.mutated`: the transform then
    rebinds the caller's handles (`write_back`), so writes into arguments mean what they mean eagerly.
    `aliases` (from alias_pattern) gives leaves that are one handle for the caller one handle here too.
    """
    def flat(*raw):
        if aliases is None:
            boxes = [box(v) for v in raw]
        else:   # the caller's handle twice: one box; a view of another leaf: that view of its box
            boxes = [box(v) if j == i else None for i, (v, j) in enumerate(zip(raw, aliases))]
            for i, j in enumerate(aliases):
                if type(j) is tuple:
                    boxes[i] = boxing.views.derive(boxes[j[0]], j[1])
            for i, j in enumerate(aliases):
                if boxes[i] is None:
                    boxes[i] = boxes[j]
        args = tree_unflatten(in_tree, boxes)
        reg = returned.enter()
        try:
            out = f(*args)
        finally:
            returned.leave(reg)
        leaves, out_tree = tree_flatten(out)
        store.val = out_tree
        store.numbers = numbers = reg.numbers(leaves)   # (a float() result returned: its traced value)
        outs = [to_raw(x, where) for x in leaves] if not numbers else _with_numbers(leaves, numbers, where)
        shadow = getattr(trace_state.trace, "shadow", None)
        if shadow is not None:   # a guarded jit's: the numbers it returns need no guard (jit_guards)
            shadow.numbers = numbers
        if writeback:
            store.mutated = tuple(i for i, (b, r) in enumerate(zip(boxes, raw))
                                  if (aliases is None or aliases[i] == i) and type(b) is boxing.box_type
                                  and b._v is not r)
            outs += [boxes[i]._v for i in store.mutated]
        return outs
    return flat


def _with_numbers(leaves, numbers, where):
    got = {n: v for n, _, v in numbers}
    return [got[n] if n in got else to_raw(x, where) for n, x in enumerate(leaves)]


def run_flat(run, f, tree, store, aliases, where="function output", differentiated=None):
    """run(flat) for flat = flatten_fun(f, ..., writeback=True): first with a box per leaf, so that an Array
    handle the caller passed twice is two independent inputs (its tangents, batch axes and jit parameters
    stay apart, as JAX's are); then, only where the function wrote into a handle passed more than once,
    again with those leaves sharing one box, as eager code shares the handle (the write must show
    through the other). aliases: alias_pattern of the argument leaves (or None: no handle twice).
    With `differentiated` (AD: (the transform's name, how many leading leaves are differentiated, a name
    per leaf)), a differentiated leaf that is a view of another leaf shared inside raises ValueError: its
    data is the other's there, so its derivative would be lost.
    Returns run's result; store holds the run that counts."""
    out = run(flatten_fun(f, tree, store, where, writeback=True))
    if shares_data(store.mutated, aliases):
        who, n, nm = differentiated or ("", 0, ())
        for i in range(n):
            if type(aliases[i]) is tuple:
                j = aliases[i][0]
                raise ValueError(
                    f"{who}: the function writes into {nm[i]} and {nm[j]}, which share data ({nm[i]} "
                    f"is a view of {nm[j]}); inside the transform the view is read from {nm[j]}, so a derivative "
                    f"with respect to {nm[i]} would be lost. Differentiate with respect to {nm[j]} instead")
        out = run(flatten_fun(f, tree, store, where, aliases=aliases, writeback=True))
    return out


def split_mutated(outs, store):
    """(the function's own outputs, the final values of the arguments it wrote into)."""
    n = len(outs) - len(store.mutated)
    return outs[:n], outs[n:]


def write_back(leaves, mutated, finals, transform, derived=True):
    """Rebind the caller's argument handles the transformed function wrote into (as eager code does).
    Raises ValueError, before any rebinding, where a written leaf overlaps another leaf's data in a way
    the trace did not share (views of one array; with `derived`, views of another leaf were shared)."""
    if mutated and boxing.views is not None:
        boxing.views.check_unshared(leaves, mutated, transform, derived)
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
