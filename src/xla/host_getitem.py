"""Eager x[key] of a host-held value with a basic key: NumPy's basic indexing, copied (the backend's
`eager_getitem` hook).

Why: library code indexes eagerly all the time (`x[i]` in Python loops, `x[:, 0]`, `x[..., None]`), on
ever-new shapes. The namespace's path expands the key into a plan per (shape, key), binds a gather of
one window (its starts an operand) and a reshape: ~4 us a call, ~35 us on a new shape (the plan, two
primitive misses). For a key of Python ints, slices of Python ints, None and one Ellipsis, NumPy's
basic indexing selects the same elements by the same rules (negative ints wrap, slices clamp as
Python's, None inserts an axis), so the value is those elements copied: no plan and no primitive, the
same cost on a new shape as on a seen one, the same bits as the gather. Anything else -- an int out of
range, more indices than dimensions, a zero step, two Ellipses, booleans, NumPy integers, arrays, a
value not host-held (a device buffer, donated, over several devices) -- returns None and the
namespace's path runs (and raises its errors). The copy keeps the namespace's memory behaviour: a
result never holds its parent's memory alive.
"""
from __future__ import annotations

import numpy as np

from transforms.core import ShapedArray

from . import host
from .host import HostValue

_avals: dict = {}   # (shape, dtype, weak) -> the shared aval (the runtime recognises avals by identity)
_AVALS_MAX = 4096


def _aval(shape, dtype, weak):
    key = (shape, dtype, weak)
    a = _avals.get(key)
    if a is None:
        if len(_avals) >= _AVALS_MAX:
            _avals.clear()
        a = _avals[key] = ShapedArray(shape, dtype, weak)
    return a


def _slice_ok(k):
    a, b, c = k.start, k.stop, k.step
    return ((a is None or type(a) is int) and (b is None or type(b) is int)
            and (c is None or (type(c) is int and c != 0)))


def eager_getitem(v, key):
    """x[key] for x's raw value `v` as a new host-held value, or None (declined: see the module docstring)."""
    if v.__class__ is not HostValue or host.MODE != "host":
        return None
    b = v._buf
    if b is not None and b.is_deleted():
        return None
    a = v.aval
    shape = a[0]
    nd = len(shape)
    t = type(key)
    if t is int:
        if not nd or not -shape[0] <= key < shape[0]:
            return None
        k = (key, Ellipsis)
    elif t is slice:
        if not nd or not _slice_ok(key):
            return None
        k = (key,)
    elif t is tuple:
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
        k = key if ell >= 0 else key + (Ellipsis,)   # (an Ellipsis: NumPy gives a 0-d array, never a scalar)
    else:
        return None
    out = v.np[k].copy()
    return HostValue(out, _aval(out.shape, a[1], a[2]))
