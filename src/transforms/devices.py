"""Devices: which devices the registered backend has, and this process's place among processes.

The engine asks the backend (transforms/backend.py hooks); the XLA backend answers from its PJRT
client. The number of CPU devices is fixed when the client is made: choose it with
`set_cpu_device_count(n)` before first use, the ARRAY_NAMESPACE_CPU_DEVICES environment variable, or
XLA's `--xla_force_host_platform_device_count=N` in XLA_FLAGS.
"""
from __future__ import annotations

from .backend import backend


def devices():
    """Every device of the backend (all processes' devices in a multi-process run), in id order.

    Parameters: none.
    Returns: list: the Device objects (each with an `id`), e.g. [CpuDevice(id=0), ...].
    Raises: NoBackendError: if no backend is registered (import array_namespace first).

    >>> ds = devices()
    >>> len(ds) == device_count() and ds[0].id == 0
    True
    """
    return list(backend.devices())


def local_devices():
    """The devices this process can address (all of them unless a distributed run joined several processes).

    Parameters: none.
    Returns: list: this process's Device objects, in id order.
    Raises: NoBackendError: if no backend is registered (import array_namespace first).

    >>> all(d in devices() for d in local_devices())
    True
    """
    return list(backend.local_devices())


def device_count():
    """How many devices there are in all (every process's, in a distributed run).

    Parameters: none.
    Returns: int: len(devices()); on the CPU fixed when the client is made (set_cpu_device_count).
    Raises: NoBackendError: if no backend is registered (import array_namespace first).

    >>> device_count() >= 1
    True
    """
    return len(backend.devices())


def local_device_count():
    """How many devices this process can address.

    Parameters: none.
    Returns: int: len(local_devices()); the most members a pmap over this process's devices can have.
    Raises: NoBackendError: if no backend is registered (import array_namespace first).

    >>> 1 <= local_device_count() <= device_count()
    True
    """
    return len(backend.local_devices())


def process_index():
    """This process's index among the processes of a run (0 in a single-process run).

    Parameters: none.
    Returns: int: the process_id it joined with (transforms.distributed.initialize), else 0.
    Raises: NoBackendError: if no backend is registered (import array_namespace first).

    >>> process_index()
    0
    """
    return backend.process_index()


def process_count():
    """How many processes take part in the run (1 unless a distributed runtime joined several).

    Parameters: none.
    Returns: int: num_processes of the run joined (transforms.distributed.initialize), else 1.
    Raises: NoBackendError: if no backend is registered (import array_namespace first).

    >>> process_count()
    1
    """
    return backend.process_count()


def set_cpu_device_count(n):
    """Use n CPU devices in this process. Only before the backend's client exists (the first array or
    device query makes it); afterwards a RuntimeError, unless n is the count it already has.

    Parameters: n (int): how many CPU devices, at least 1.
    Returns: None.
    Raises: ValueError: if n is not a positive integer. RuntimeError: if the client already exists with
        another count. NoBackendError: if no backend is registered.

    Here the client already exists (device_count() made it), so only its own count is accepted:

    >>> set_cpu_device_count(device_count())
    >>> set_cpu_device_count(device_count() + 1)
    Traceback (most recent call last):
    RuntimeError: set_cpu_device_count(...): the CPU client already exists with ... device(s); ...
    """
    backend.set_cpu_device_count(n)


class Sharding:
    """Where an array's value lies: on `devices`, split along axis 0 into one block per device in that order
    (`stacked`, a pmap's mapped result), or whole on each (one device for an ordinary array)."""
    __slots__ = ("devices", "stacked")

    def __init__(self, devices, stacked):
        self.devices, self.stacked = tuple(devices), bool(stacked)

    def __eq__(self, other):
        return isinstance(other, Sharding) and (self.devices, self.stacked) == (other.devices, other.stacked)

    def __hash__(self):
        return hash((self.devices, self.stacked))

    def __repr__(self):
        kind = "split along axis 0 over" if self.stacked else ("on" if len(self.devices) == 1 else "replicated on")
        return f"Sharding({kind} {', '.join(str(d) for d in self.devices)})"


class Shard:
    """One device's part of an array: `data` (an array on `device` alone) and `index`, the block's position
    along axis 0 (None: the whole value)."""
    __slots__ = ("device", "index", "data")

    def __init__(self, device, index, data):
        self.device, self.index, self.data = device, index, data

    def __repr__(self):
        return f"Shard(device={self.device}, index={self.index}, data={self.data!r})"


def sharding_of(raw):
    """The Sharding of an eager raw value."""
    got = backend.sharding_of(raw)
    if not isinstance(got, tuple):   # laid out over a mesh: its NamedSharding (transforms/sharding.py)
        return got
    devs, stacked = got
    return Sharding(devs, stacked)


def shards_of(raw, box=lambda v: v):
    """The Shards of an eager raw value (each block boxed with `box`), in device order; no copies."""
    return [Shard(d, i, box(v)) for d, i, v in backend.shards_of(raw)]


__all__ = ["devices", "local_devices", "device_count", "local_device_count", "process_index", "process_count",
           "set_cpu_device_count", "Sharding", "Shard"]
