"""Devices: which devices the registered backend has, and this process's place among processes.

The engine asks the backend (transforms/backend.py hooks); the XLA backend answers from its PJRT
client. The number of CPU devices is fixed when the client is made: choose it with
`set_cpu_device_count(n)` before first use, the ARRAY_NAMESPACE_CPU_DEVICES environment variable, or
XLA's `--xla_force_host_platform_device_count=N` in XLA_FLAGS.
"""
from __future__ import annotations

from .backend import backend


def devices():
    """Every device of the backend (all processes' devices in a multi-process run), in id order."""
    return list(backend.devices())


def local_devices():
    """The devices this process can address."""
    return list(backend.local_devices())


def device_count():
    """How many devices there are in all."""
    return len(backend.devices())


def local_device_count():
    return len(backend.local_devices())


def process_index():
    """This process's index among the processes of a run (0 in a single-process run)."""
    return backend.process_index()


def process_count():
    """How many processes take part in the run (1 unless a distributed runtime joined several)."""
    return backend.process_count()


def set_cpu_device_count(n):
    """Use n CPU devices in this process. Only before the backend's client exists (the first array or
    device query makes it); afterwards a RuntimeError, unless n is the count it already has."""
    backend.set_cpu_device_count(n)


__all__ = ["devices", "local_devices", "device_count", "local_device_count", "process_index", "process_count",
           "set_cpu_device_count"]
