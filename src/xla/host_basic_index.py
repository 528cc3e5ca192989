"""Eager x[key] and x[key] = value of a host-held value with a basic key: NumPy's basic indexing (the
backend's `eager_getitem` / `eager_setitem` / `eager_family_setitem` hooks).

Why: library code indexes eagerly all the time (`x[i]` in loops, `x[:, 0]`, `x[..., None]`, `a[i, i] = d[i]`) on
ever-new shapes, where the namespace's path (a plan per (shape, key), a gather or scatter) costs ~4 us a call and
~35 us a new shape. For a key of Python ints, slices of Python ints, None and one Ellipsis NumPy selects the same
elements by the same rules, so the value is NumPy's: no plan, no primitive, the same bits. Anything else (an int
out of range, a zero step, two Ellipses, NumPy integers, a value not host-held: a device buffer, donated, over
several devices) returns None and the namespace's path runs (and raises its errors). A read the namespace makes
a view is NumPy's view of x's memory; any other read is a copy. A write goes into memory only its array (or its
view family) holds (host.sole_holder), else into a copy. An integer index array along one axis (x[idx], x[:, idx]:
xp.take), read only, and a boolean mask over exactly x's leading dims are NumPy's indexing too: ~1 us, not ~50-70.
"""
from __future__ import annotations

import numpy as np

from . import host
from .host import HostValue


def _slice_ok(k):
    a, b, c = k.start, k.stop, k.step
    return ((a is None or type(a) is int) and (b is None or type(b) is int)
            and (c is None or (type(c) is int and c != 0)))


def _numpy_key(shape, key):
    """`key` as NumPy's basic index on an array of `shape` (a trailing Ellipsis where it has none, so that NumPy
    gives a 0-d array, never a scalar), or None where this module declines it (see the module docstring)."""
    nd = len(shape)
    t = type(key)
    if t is HostValue:   # a boolean mask's value (namespace: a mask Array) over exactly x's leading dims
        m = key.np
        return m if _live(key) and m.dtype == np.bool_ and 0 < m.ndim <= nd and m.shape == shape[:m.ndim] else None
    if t is int:   # (x[i], the commonest read in a loop)
        return (key, Ellipsis) if nd and -shape[0] <= key < shape[0] else None
    if t is slice or key is Ellipsis:
        key = (key,)
    elif t is not tuple:
        return None
    if len(key) <= nd:   # ints and slices only (x[i, j], x[k, :, :]): one pass, entry i on dimension i
        for e, n in zip(key, shape):
            te = type(e)
            if te is not int and te is not slice:
                break   # (a None, an Ellipsis: the general walk)
            if not (-n <= e < n if te is int else e == _FULL or _slice_ok(e)):
                return None
        else:
            return key + (Ellipsis,)
    ell, used, after = -1, 0, 0
    for i, e in enumerate(key):
        te = type(e)
        if te is int or (te is slice and _slice_ok(e)):
            used += 1
            if ell >= 0:
                after += 1
        elif e is Ellipsis:
            if ell >= 0:
                return None
            ell = i
        elif e is not None:
            return None
    if used > nd:
        return None
    d = 0
    for i, e in enumerate(key):
        if i == ell:
            d = nd - after
        elif type(e) is int:
            n = shape[d]
            if not -n <= e < n:
                return None
            d += 1
        elif e is not None:
            d += 1
    return key if ell >= 0 else key + (Ellipsis,)


def _take_key(shape, key):
    """An integer index array along one axis -- x[idx], x[:, idx], ... (only full slices before it, nothing
    after) -- as NumPy's integer indexing, where it is 1-D and every index is in range; else None (the
    namespace's path runs and raises). Reads only: NumPy's writes at repeated indices are not the scatter's."""
    if type(key) is HostValue:
        key = (key,)
    elif type(key) is not tuple or not key or type(key[-1]) is not HostValue:
        return None
    ax, hv = len(key) - 1, key[-1]
    if ax >= len(shape) or not _live(hv) or any(type(e) is not slice or e != _FULL for e in key[:-1]):
        return None
    idx = hv.np
    if idx.ndim != 1 or idx.dtype.kind not in "iu":
        return None
    n = shape[ax]
    if idx.size and (idx.min() < -n or idx.max() >= n):
        return None
    return key[:-1] + (idx,)


_FULL = slice(None)


def _live(v):
    """Whether raw value v is host-held here and not donated."""
    return v.__class__ is HostValue and (v._buf is None or not v._buf.is_deleted())   # (HostValue.is_deleted inlined)


def eager_getitem(v, key, view=False):
    """x[key] for x's raw value `v` as a new host-held value, or None (declined: see the module docstring).
    view: NumPy's view of x's memory where it has one (the namespace's view: its writes go to that memory)."""
    if not _live(v):
        return None
    a = v.aval
    k = _numpy_key(a[0], key)
    if k is None and (k := _take_key(a[0], key)) is None:
        return None
    x = v.np
    out = x[k]
    if not view and type(k) is not np.ndarray and type(k[-1]) is not np.ndarray:   # (a mask's, indices': copies)
        out = out.copy()   # (no array that is not the namespace's view holds x's memory)
    return HostValue(out, host.shared_aval(out.shape, a[1], a[2]))


def eager_setitem(v, key, value, copy=False):
    """`x[key] = value` (value: raw, of x's dtype) into the memory of x's raw value `v` where its only holder gives
    it up, else (copy: another array holds `v`) into a copy (the same bits): the new value, or None (declined)."""
    x = _assign(v, key, value, copy or not host.sole_holder((v,))) if _live(v) and _live(value) else None
    return None if x is None else HostValue(x, v.aval)


def eager_family_setitem(vals, layouts, i, key, value):
    """`x[key] = value` for x the i-th array of a view family whose host values `vals` (the root's first), each
    given up by its array, share one memory, which takes the write. Where anything else refers to it (a value,
    an export, a device buffer), it is copied first, each array's value a view of the copy where layouts()
    ((strides, offset) in elements of the C-ordered root) places it. The family's values, or None (declined)."""
    if not _live(value):
        return None
    if not host.sole_holder(vals, family=True):
        if not all(_live(hv) for hv in vals):
            return None
        root = np.array(vals[0].np, order="C")
        n = root.itemsize
        vals = [HostValue(np.ndarray(hv.aval.shape, root.dtype, root, min(off * n, root.nbytes),   # (min: empty views)
                                     tuple(s * n for s in st)), hv.aval)
                for hv, (st, off) in zip(vals, layouts())]
    return vals if _assign(vals[i], key, value) is not None else None


def _assign(v, key, value, copy=False):
    """Write `value` at `key` into host value `v`'s memory (copy: into a copy): the array written, or None where
    value's shape does not broadcast to the selection without new leading axes (the namespace's rule)."""
    a = v.aval
    k = _numpy_key(a[0], key)
    if k is None or value.aval[1] != a[1]:
        return None
    vs = value.aval[0]
    if vs:   # (a 0-d value fits any selection)
        ts = (int(np.count_nonzero(k)),) + a[0][k.ndim:] if type(k) is np.ndarray else v.np[k].shape
        if vs != ts and (len(vs) > len(ts) or any(p != q and p != 1 for p, q in zip(vs[::-1], ts[::-1]))):
            return None
    x = v.np.copy() if copy else v.np
    x[k] = value.np   # (NumPy reads an overlapping value as it was before the write; a mask writes through x)
    return x
