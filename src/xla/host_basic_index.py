"""Eager x[key] and x[key] = value of a host-held value with a basic key: NumPy's basic indexing (the
backend's `eager_getitem` / `eager_setitem` hooks).

Why: library code indexes eagerly all the time (`x[i]` in Python loops, `x[:, 0]`, `x[..., None]`), on ever-new
shapes. The namespace's path expands the key into a plan per (shape, key), binds a gather of one window (its
starts an operand) and a reshape: ~4 us a call, ~35 us on a new shape (the plan, two primitive misses). For a
key of Python ints, slices of Python ints, None and one Ellipsis, NumPy's basic indexing selects the same
elements by the same rules (negative ints wrap, slices clamp as Python's, None inserts an axis), so the value
is those elements: no plan and no primitive, the same cost on any shape, the same bits as the gather. Anything
else -- an int out of range, more indices than dimensions, a zero step, two Ellipses, booleans, NumPy integers,
arrays, a value not host-held (a device buffer, donated, over several devices) -- returns None and the namespace's
path runs (and raises its errors). A part of x (x[1:]; all of x could become x) holding at least half of x's
memory is a view, as NumPy's (a 1 MB copy: ~1 ms), but for negative strides (DLPack consumers such as torch abort
on them); any other is a copy, never keeping a far larger x alive.

A write `x[key] = value` whose array nothing else refers to (host.sole_holder) is NumPy's assignment into x's
memory, as runtime.eager_in_place's scatter, without a plan per (shape, key): ~2 us a write (`x[i, i] = v`).

An integer index array along one axis (x[idx], x[:, idx]: xp.take), read only, and a boolean mask over exactly
x's leading dims (the namespace passes a mask Array's raw value) is NumPy's indexing too: the same elements in
the same (row-major) order, read as a copy or assigned in place. The namespace's path (a nonzero, a gather or
scatter, a plan) costs ~50-70 us on scikit-learn's StandardScaler's 29-element x[mask]; NumPy's ~1 us.
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
    if t is int:
        return (key, Ellipsis) if nd and -shape[0] <= key < shape[0] else None
    if t is slice:
        return (key,) if nd and _slice_ok(key) else None
    if t is not tuple:
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
    ax = len(key) - 1
    for e in key[:-1]:
        if type(e) is not slice or e != _FULL:
            return None
    hv = key[-1]
    if ax >= len(shape) or not _live(hv):
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


def eager_getitem(v, key):
    """x[key] for x's raw value `v` as a new host-held value, or None (declined: see the module docstring)."""
    if not _live(v):
        return None
    a = v.aval
    k = _numpy_key(a[0], key)
    if k is None:
        k = _take_key(a[0], key)
        if k is None:
            return None
    x = v.np
    out = x[k]
    if type(k) is not np.ndarray and type(k[-1]) is not np.ndarray:   # (a mask's or indices' selection is a copy)
        own = x if x.base is None else x.base   # (the memory x lives in)
        if out.size == x.size or min(out.strides, default=0) < 0 or 2 * out.nbytes < getattr(own, "nbytes", x.nbytes):
            out = out.copy()   # (a view is never written: see host.sole_holder)
    return HostValue(out, host.shared_aval(out.shape, a[1], a[2]))


def eager_setitem(v, key, value):
    """`x[key] = value` written into the memory of x's raw value `v`, which its only holder gives up: the
    value (same aval, same memory) or None (declined: the namespace's path runs). `value` is a raw value of
    x's dtype (the namespace has checked and cast it); its shape must broadcast to the selection without
    new leading axes, as the namespace requires (NumPy would allow them)."""
    if not _live(v) or not _live(value) or not host.sole_holder(v):
        return None
    a = v.aval
    k = _numpy_key(a[0], key)
    if k is None or value.aval[1] != a[1]:
        return None
    mask = type(k) is np.ndarray
    if mask:   # (NumPy's selection by a mask is a copy: the assignment below writes through x itself)
        ts = (int(np.count_nonzero(k)),) + tuple(a[0][k.ndim:])
    else:
        sel = v.np[k]   # (a view of x's memory)
        ts = sel.shape
    vs = value.aval[0]
    if vs != ts and vs:
        if len(vs) > len(ts):
            return None
        for p, q in zip(vs[::-1], ts[::-1]):
            if p != q and p != 1:
                return None
    if mask:
        v.np[k] = value.np
    else:
        sel[...] = value.np   # (NumPy reads an overlapping value as it was before the write)
    return HostValue(v.np, a)
