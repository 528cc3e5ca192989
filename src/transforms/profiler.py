"""Profiling: what memory is live and who made it, and traces of what ran.

    from transforms import profiler
    profiler.enable_allocation_stacks()          # record creation stacks from now on (costs time)
    ...
    profiler.save_device_memory_profile("memory.prof")   # then: pprof -top memory.prof
    with profiler.trace("/tmp/trace"):            # XLA profiler: TensorBoard/XProf + Perfetto files
        ...

The engine only asks; the backend measures (transforms/backend.py `profiler()` hook; the XLA
backend's side is xla/profiling.py). What is and is not measured, honestly:

* The memory profile is jaxlib's heap profile -- every live device buffer (`kind=buffer`) and
  loaded executable (`kind=executable`), with its device and size -- plus, as the backend's own
  accounting, eager values held on the host (the CPU's NumPy-backed eager results, which no device
  allocator sees) as `kind=host_value` samples: each distinct NumPy allocation once, leaving out
  memory a device buffer aliases (that buffer's sample already counts it).
* Python stacks appear only for values created while `enable_allocation_stacks()` is on; it is off
  by default because recording costs time on every dispatch (and, for host values, runs Python's
  `tracemalloc`). Values created earlier appear with their size and no stack.
* Sizes are bytes as allocated (a device buffer's on-device size; a host value's NumPy `nbytes`).
  Temporary memory inside a running executable is not a live buffer and does not appear.
"""
from __future__ import annotations

import contextlib

from .backend import backend
from .core import boxing

__all__ = ["device_memory_profile", "save_device_memory_profile", "live_arrays", "device_memory_stats",
           "enable_allocation_stacks", "allocation_stacks", "start_trace", "stop_trace", "trace",
           "TraceAnnotation"]


def _backend():
    return backend.profiler()   # NoBackendError until a backend registers


# ------------------------------------------------------------------ memory

def enable_allocation_stacks(enabled: bool = True, *, host: bool = True):
    """Record the Python stack that creates each device buffer (and, with `host`, each host-held
    eager value) from now on, or stop recording. Returns the previous `(device, host)` setting."""
    return _backend().set_allocation_stacks(bool(enabled), bool(enabled and host))


@contextlib.contextmanager
def allocation_stacks(*, host: bool = True):
    """`enable_allocation_stacks()` inside the block, restoring the previous setting after it."""
    prev = enable_allocation_stacks(True, host=host)
    try:
        yield
    finally:
        _backend().set_allocation_stacks(*prev)


def device_memory_profile() -> bytes:
    """A gzip-compressed pprof `Profile` protobuf of live memory (see the module docstring for what
    is in it). Sample values: [allocations (count), space (bytes)]; labels `kind`, `device`."""
    return _backend().memory_profile()


def save_device_memory_profile(filename) -> None:
    """Write `device_memory_profile()` to `filename`; read it with `pprof` (`go tool pprof`)."""
    data = device_memory_profile()
    with open(filename, "wb") as f:
        f.write(data)


def live_arrays(*, include_host: bool = True) -> list:
    """Every eager array alive now, as arrays of the registered array type (fresh handles on the same
    values). Device buffers come from the runtime's live list (including buffers the runtime itself
    caches, e.g. interned scalar constants); with `include_host`, host-held eager values too."""
    return [boxing.box(v) for v in _backend().live_values(include_host)]


def device_memory_stats(device=None) -> dict:
    """Memory statistics of `device` (a device of `transforms.backend.backend.devices()`; default: the
    default device). The allocator's own keys (`bytes_in_use`, `peak_bytes_in_use`, ...) appear where
    the device reports them (not on the CPU); always `live_buffers` and `live_buffer_bytes`, measured
    from the live device buffers; on the CPU also `host_values` and `host_value_bytes`."""
    return _backend().memory_stats(device)


# ------------------------------------------------------------------ traces

def start_trace(log_dir, *, python_tracer: bool = True, host_tracer_level: int = 2,
                perfetto: bool = False) -> None:
    """Start XLA's profiler; `stop_trace()` writes `<log_dir>/plugins/profile/<run>/<host>.xplane.pb`
    (TensorBoard / XProf) and `<host>.trace.json.gz` (Chrome trace format; Perfetto opens it, or the
    `perfetto=True` copy without the metadata Perfetto's UI rejects). One trace at a time."""
    _backend().start_trace(log_dir, python_tracer, host_tracer_level, perfetto)


def stop_trace() -> list:
    """Stop the running trace and write it; returns the paths of the files written."""
    return _backend().stop_trace()


@contextlib.contextmanager
def trace(log_dir, **options):
    """`start_trace(log_dir)` around a block; yields a list that holds the written paths afterwards."""
    start_trace(log_dir, **options)
    written = []
    try:
        yield written
    finally:
        written.extend(stop_trace())


def TraceAnnotation(name: str, **metadata):
    """A context manager naming a span of host time in a running trace (cheap when none runs)."""
    return _backend().trace_annotation(name, **metadata)
