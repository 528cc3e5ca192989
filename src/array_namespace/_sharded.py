"""Arrays over several devices, as the namespace's Array attributes see them: x.device, x.devices(),
x.to_device(...), and the per-shard read behind x[i] on an array split along axis 0.

`x.device` must give an object that `x.to_device` and `asarray(..., device=)` accept (the standard's
contract). An array lying whole on one device answers with that Device. An array over several devices
(a pmap's result, an array laid out over a mesh) has no one device: it answers with its sharding
(transforms.devices.Sharding or transforms.NamedSharding), as JAX's `Array.device` does; `to_device`
and `asarray(device=)` accept it (the array itself when it already lies so), and `x.devices()` gives
the set of Devices holding a part.

x[i] with an integer i (first in the key) on an eager array split along axis 0 reads row i from the
one shard holding it and copies that row alone to the default device, where the namespace computes;
without this, the read would gather every device's block first.
"""
from __future__ import annotations

import functools

import numpy as np

from transforms.backend import backend
from transforms.core import Tracer
from transforms.devices import Sharding, sharding_of
from transforms.sharding import NamedSharding

from ._array import Device, default_device


def _device_list(got):
    if isinstance(got, NamedSharding):
        return list(got.mesh.devices.flat)
    return list(got[0])


def device_of(x):
    """x.device: the Device x lies on, or its sharding when it lies over several devices."""
    v = x._v
    if isinstance(v, Tracer):
        return default_device()
    got = backend.sharding_of(v)
    if type(got) is tuple and len(got[0]) == 1:
        return Device(got[0][0])
    return sharding_of(v)


def devices_of(x):
    """x.devices(): the set of Devices holding x's value or a part of it."""
    v = x._v
    if isinstance(v, Tracer):
        return {default_device()}
    return {Device(d) for d in _device_list(backend.sharding_of(v))}


def to_device(x, device, fname="to_device"):
    """x on `device`: a Device (the whole value on it; an array over several devices is gathered), or a
    sharding (a NamedSharding lays x out over its mesh; a pmap-style Sharding splits or replicates x over its
    devices); x itself where it already lies there."""
    from transforms import device_put
    if isinstance(device, Device):
        if device_of(x) == device:
            return x
        if device._d not in backend.local_devices():
            raise ValueError(f"{fname}: device {device!r} is not one of this process's devices")
        return device_put(x, device._d)
    if isinstance(device, (Sharding, NamedSharding)):
        if not isinstance(x._v, Tracer) and sharding_of(x._v) == device:
            return x
        if isinstance(device, NamedSharding):
            return device_put(x, device)
        if not device.stacked:
            raise ValueError(f"{fname}: placing an array whole on each of several devices is not supported "
                             f"({len(device.devices)} devices); use transforms.device_put with a NamedSharding "
                             "whose spec splits nothing")
        return _split_over(device.devices)(x)
    raise ValueError(f"{fname}: unknown device {device!r}; expected a Device (x.device, "
                     "xp.__array_namespace_info__().devices()) or a sharding (x.device of an array over several "
                     "devices)")


@functools.lru_cache(maxsize=32)
def _split_over(devices):
    from transforms import pmap
    return pmap(lambda a: a, devices=list(devices))


def shard_row(x, key):
    """x[key] (key an int, or a tuple starting with one) read from the shard holding row key[0], for an eager
    array split along axis 0 over several devices; None where x is not such an array (or the run has several
    processes, or the index is out of range): the ordinary path then answers."""
    v = x._v
    got = backend.sharding_of(v)
    if type(got) is tuple and (len(got[0]) == 1 or not got[1]) or isinstance(v, Tracer) or not x.ndim:
        return None   # whole on one device (or replicated: reading it back reads one copy already)
    if backend.process_count() > 1:
        return None   # shards in other processes: the ordinary path reads local copies or refuses clearly
    n = x.shape[0]
    i = key if type(key) is int else key[0]
    if not -n <= i < n:
        return None
    i %= n
    for _dev, index, raw in backend.shards_of(v):
        if index is None:
            lo, hi = 0, n
        elif type(index) is int:
            rows = n // len(_device_list(got))
            lo, hi = index * rows, (index + 1) * rows
        elif all(s.start == 0 and s.stop == d for s, d in zip(index[1:], x.shape[1:])):
            lo, hi = index[0].start, index[0].stop
        else:
            continue   # a tile split along other axes too: it holds part of the row only
        if lo <= i < hi:
            from ._helpers import wrap
            row = np.asarray(backend.to_numpy(raw))[i - lo]
            out = wrap(backend.device_put(np.ascontiguousarray(row) if row.ndim else row, None))
            return out if type(key) is int or len(key) == 1 else out[key[1:]]
    return None
