"""Validated plans of repeated eager calls: the keys they are kept under and the made-value plans of creation.

A namespace function called again with the same operand types and static arguments need not validate them again
(library code calls reshape, moveaxis, full, asarray(True) ... with the same arguments every time): the result of
the validation (the params of the one primitive to bind, or the values to make) is kept in a bounded table, keyed
so that arguments equal as dict keys but refused by the function never meet a kept plan (True == 1 == 1.0, while a
bool or a float is no shape entry), and a call that raises keeps nothing. Used by _manipulation and _creation; the
reductions' tables (sum, mean, ...) live in _statistical, whose `_remember` bounds every table.
"""
from __future__ import annotations

import struct

import numpy as np

from transforms.backend import backend

from ._array import Device
from ._helpers import wrap
from ._statistical import _remember as remember

SCALAR_TYPES = frozenset((bool, int, float, complex))


def scalar_key(value):
    """A Python scalar as a dict key that keeps apart what == does not: -0.0 and 0.0 (and the signed complex
    zeros), NaNs by their bits; its type goes into the key beside it (True == 1 == 1.0)."""
    if value != value:
        return struct.pack("<d", value) if type(value) is float else struct.pack("<dd", value.real, value.imag)
    t = type(value)
    return repr(value) if t is complex or (t is float and not value) else value


def is_default_device(device):
    """Whether `device` is None or a Device wrapping the default device, known cheaply (False: compare in full)."""
    return device is None or (type(device) is Device and device._d is backend.default_device())


# Small eager creations of Python scalars (asarray(True), full((), nan), zeros(3), ...) keep the values made (a
# private read-only NumPy copy) and their aval, keyed by (what, shape, the scalar's type, the scalar, dtype). A
# repeated call checks nothing it checked before and puts a fresh copy on the device: each call's array owns its
# buffer, as before (donating one to a jitted function, or writing into it, touches no other).
MADE: dict = {}
MADE_MAX_ELEMENTS = 256


def made(key):
    """A fresh array of the values kept under `key`, or None."""
    plan = MADE.get(key)
    if plan is not None:
        return wrap(backend.device_put(plan[0], plan[1]))
    return None


def keep_made(key, out):
    """Keep the values of `out` (a concrete array just made and checked) under `key`; returns out."""
    v = out._v
    values = np.array(backend.to_numpy(v))
    values.flags.writeable = False
    remember(MADE, key, (values, v.aval))
    return out
