"""Eager x[key] and x[key] = value of a host-held value: NumPy's indexing (the backend's `eager_element` /
`eager_getitem` / `eager_setitem` / `eager_family_setitem` hooks).

Why: library code indexes eagerly all the time (`x[i]` in loops, `x[:, 0]`, `x[..., None]`, `a[i, i] = d[i]`,
`x[idx]`) on ever-new shapes, where the namespace's path (a plan per (shape, key), a gather or scatter) costs
~4-70 us a call and ~35 us a new shape. For the keys `_numpy_key` takes NumPy selects the same elements by the
same rules: no plan, no primitive, the same bits (one element: one C call, xla/_fpmode.c `element`, ~0.2 us).
Other keys (NumPy integers, a zero step), values not host-held (a device buffer, donated, over several devices)
and what NumPy refuses decline (None): the namespace's path runs and raises its errors. A read the namespace
makes a view is NumPy's view of x's memory, any other a copy; a write goes into memory only its array (or its
view family) holds (host.sole_holder), else into a copy.
"""
from __future__ import annotations

import numpy as np

from . import host
from .host import HostValue


def _numpy_key(shape, key, read=False):
    """`key` as NumPy's index on x of `shape`, or None where this module declines it: a basic key with a trailing
    Ellipsis where it has none (so that NumPy gives a 0-d array, never a scalar); a boolean mask over x's leading
    dims, as its array; with `read`, an integer index array along one axis (full slices before it, every index
    in range: NumPy reads a uint64 index past int64's as a negative one), as NumPy's integer index (not for
    writes: NumPy's at repeated indices are not the scatter's). What else is wrong for `shape` -- an int out of
    range, too many indices, two Ellipses, a mask's shape -- NumPy refuses with an IndexError when it indexes,
    which the callers take as declining (the namespace's path then raises its own error)."""
    key = key if type(key) is tuple else (key,)
    hv = key[-1] if key else None
    if type(hv) is HostValue:   # (the namespace's mask or index Array, as its raw value)
        m, ax = hv.np, len(key) - 1
        if not _live(hv) or not m.ndim or ax >= len(shape) or ax and any(e != _FULL for e in key[:-1]):
            return None   # (only full slices before it: an int, None, an Ellipsis or a NumPy integer differs)
        if m.dtype == np.bool_:
            return m if not ax else None
        n = shape[ax]
        ok = read and m.ndim == 1 and m.dtype.kind in "iu" and not (m.size and (m.min() < -n or m.max() >= n))
        return key[:-1] + (m,) if ok else None
    ellipsis = False
    for e in key:   # (one pass, the slice test inline: every eager x[...] asks)
        te = type(e)
        if te is slice:
            a, b, c = e.start, e.stop, e.step
            if (a is not None and type(a) is not int or b is not None and type(b) is not int
                    or c is not None and (type(c) is not int or c == 0)):
                return None
        elif e is Ellipsis:
            ellipsis = True
        elif not (te is int or e is None):
            return None
    return key if ellipsis else key + (Ellipsis,)


_FULL = slice(None)


def _live(v):
    """Whether raw value v is host-held here and not donated."""
    return v.__class__ is HostValue and (v._buf is None or not v._buf.is_deleted())   # (HostValue.is_deleted inlined)


def eager_getitem(v, key, view=False):
    """x[key] for x's raw value `v` as a new host-held value, or None (declined: see the module docstring).
    view: NumPy's view of x's memory where it has one (the namespace's view: its writes go to that memory)."""
    a = v.aval
    k = _numpy_key(a[0], key, read=True) if _live(v) else None
    if k is None:
        return None
    x = v.np
    try:
        out = x[k]
    except IndexError:   # (out of range for x's shape: the namespace's path raises its error)
        return None
    if not view and type(k) is not np.ndarray and type(k[-1]) is not np.ndarray:   # (a mask's, indices': copies)
        out = out.copy()   # (no array that is not the namespace's view holds x's memory)
    return HostValue(out, host.shared_aval(out.shape, a[1], a[2]))


eager_element = _element = host._fpmode.element   # x[i, j] of a host-held value, one element (C): read or write


def eager_setitem(v, key, value, copy=False):
    """`x[key] = value` (value: raw, of x's dtype) into the memory of x's raw value `v` where its only holder gives
    it up, else (copy: another array holds `v`) into a copy (the same bits): the new value, or None (declined)."""
    x = _assign(v, key, value, copy or not host.sole_holder((v,), False)) if _live(v) and _live(value) else None
    return None if x is None else HostValue(x, v.aval)


def eager_family_setitem(vals, layouts, i, key, value):
    """`x[key] = value` for x the i-th array of a view family whose host values `vals` (the root's first), each
    given up by its array, share one memory, which takes the write. Where anything else refers to it (a value,
    an export, a device buffer), it is copied first, each array's value a view of the copy where layouts()
    ((strides, offset) in elements of the C-ordered root) places it. The family's values, or None (declined)."""
    if host._fpmode.family_element(vals, i, key, value):   # (one element into the family's memory: one C call)
        return vals
    if not _live(value):
        return None
    if not host.sole_holder(vals, True):
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
    if not copy and _element(v, key, value):   # (x[i, j] = one element of x's dtype: one C call)
        return v.np
    a = v.aval
    k = _numpy_key(a[0], key)
    if k is None or value.aval[1] != a[1]:
        return None
    vs, x = value.aval[0], v.np
    try:   # (an IndexError -- out of range for x's shape -- is raised before anything is written: declined)
        if vs:   # (a 0-d value fits any selection)
            ts = (int(np.count_nonzero(k)),) + a[0][k.ndim:] if type(k) is np.ndarray else x[k].shape
            if vs != ts and (len(vs) > len(ts) or any(p != q and p != 1 for p, q in zip(vs[::-1], ts[::-1]))):
                return None
        x = x.copy() if copy else x
        x[k] = value.np   # (NumPy reads an overlapping value as it was before the write; a mask writes through x)
    except IndexError:
        return None
    return x
