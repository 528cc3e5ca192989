"""Arrays across processes: pickle (checkpoints, multiprocessing's arguments and results), copy.copy and
copy.deepcopy -- installed on Array from here.

A pickled Array is its value (a NumPy array: dtype, shape, data), its weak type, and its device when that is
not the default one (by id: unpickled onto the device of that id, a ValueError where the process has none).
An array over several devices (a pmap result, an array laid out over a mesh) is gathered: it unpickles whole
on the default device. A view pickles its own value (as NumPy's views do). A traced value has no data: pickling
one raises TypeError. copy.copy and copy.deepcopy give an independent array (NumPy's semantics: no view of the
original, writes to one never reach the other) on the same device; under a transform, the same traced value.
"""
from __future__ import annotations

import numpy as np

from transforms.backend import backend
from transforms.core import ShapedArray, Tracer

from ._array import Array
from ._helpers import wrap


def _device_id(v):
    """The id of the one device holding eager raw value v when it is not the default device, else None (the
    default device, or several devices: gathered)."""
    got = backend.sharding_of(v)
    if type(got) is tuple and len(got[0]) == 1 and got[0][0] != backend.default_device():
        return got[0][0].id
    return None


def _host_value(x, what):
    v = x._v
    if isinstance(v, Tracer):
        raise TypeError(f"{what}: cannot pickle a traced Array ({v.aval.str_short()}): inside jit, grad, vmap or "
                        "another transform it has no value yet; return it from the transformed function and pickle "
                        "the result")
    return v, np.array(backend.to_numpy(v), copy=True)


def _rebuild(value, weak_type, device_id):
    """An Array of `value` (a NumPy array) on the device of id `device_id` (None: the default device)."""
    value = np.asarray(value)
    aval = ShapedArray(value.shape, value.dtype, weak_type)
    if device_id is None:
        return wrap(backend.device_put(value, aval))
    for d in backend.devices():
        if d.id == device_id:
            return wrap(backend.device_put(value, aval, d))
    raise ValueError(f"pickle.load: the array was saved on device {device_id}, which this process does not have "
                     f"(it has {len(backend.devices())} device(s)); set ARRAY_NAMESPACE_CPU_DEVICES before starting "
                     "Python, or move it to the default device before pickling (transforms.device_put(x))")


def _reduce(self):
    v, value = _host_value(self, "pickle")
    return _rebuild, (value, bool(v.aval.weak_type), _device_id(v))


def _copy(self):
    v = self._v
    if not isinstance(v, Tracer):
        got = backend.sharding_of(v)
        if type(got) is tuple and len(got[0]) == 1:   # whole on one device: a copy of its data there
            v, value = _host_value(self, "copy")
            return _rebuild(value, bool(v.aval.weak_type), _device_id(v))
    return wrap(v)   # (a traced value, or device buffers over several devices: immutable, shared)


def _deepcopy(self, memo):
    out = _copy(self)
    memo[id(self)] = out
    return out


Array.__reduce__ = _reduce
Array.__copy__ = _copy
Array.__deepcopy__ = _deepcopy
