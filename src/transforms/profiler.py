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
    eager value) from now on, or stop recording.

    Parameters: enabled (bool): record (True, default) or stop (False). host (bool, keyword): also for
        host-held eager values (through tracemalloc).
    Returns: tuple: the previous (device, host) setting.
    Raises: NoBackendError: if no backend is registered (import array_namespace first).

    >>> prev = profiler.enable_allocation_stacks(True)
    >>> profiler.enable_allocation_stacks(False)
    (True, True)
    """
    return _backend().set_allocation_stacks(bool(enabled), bool(enabled and host))


@contextlib.contextmanager
def allocation_stacks(*, host: bool = True):
    """`enable_allocation_stacks()` inside a `with` block, restoring the previous setting after it.

    Parameters: host (bool, keyword): also record host-held eager values' stacks (default True).
    Returns: a context manager.
    Raises: NoBackendError: if no backend is registered.

    >>> with profiler.allocation_stacks():
    ...     x = xp.ones(3)
    >>> profiler.enable_allocation_stacks(False)
    (False, False)
    """
    prev = enable_allocation_stacks(True, host=host)
    try:
        yield
    finally:
        _backend().set_allocation_stacks(*prev)


def device_memory_profile() -> bytes:
    """A gzip-compressed pprof `Profile` protobuf of live memory (see the module docstring for what
    is in it). Sample values: [allocations (count), space (bytes)]; labels `kind`, `device`.

    Parameters: none.
    Returns: bytes: the gzip-compressed profile.
    Raises: NoBackendError: if no backend is registered.

    >>> import gzip; len(gzip.decompress(profiler.device_memory_profile())) > 0
    True
    """
    return _backend().memory_profile()


def save_device_memory_profile(filename) -> None:
    """Write `device_memory_profile()` to `filename`; read it with `pprof` (`go tool pprof`).

    Parameters: filename (str or path): where to write.
    Returns: None.
    Raises: OSError: if the file cannot be written; NoBackendError: if no backend is registered.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "memory.prof")
    >>> profiler.save_device_memory_profile(path)
    >>> os.path.getsize(path) > 0
    True
    """
    data = device_memory_profile()
    with open(filename, "wb") as f:
        f.write(data)


def live_arrays(*, include_host: bool = True) -> list:
    """Every eager array alive now, as arrays of the registered array type (fresh handles on the same
    values). Device buffers come from the runtime's live list (including buffers the runtime itself
    caches, e.g. interned scalar constants); with `include_host`, host-held eager values too.

    Parameters: include_host (bool, keyword): include host-held eager values (default True).
    Returns: list: one Array per live value.
    Raises: NoBackendError: if no backend is registered.

    >>> x = xp.full((7, 3), 2.0)
    >>> any(a.shape == (7, 3) for a in profiler.live_arrays())
    True
    """
    return [boxing.box(v) for v in _backend().live_values(include_host)]


def device_memory_stats(device=None) -> dict:
    """Memory statistics of `device`.

    The allocator's own keys (`bytes_in_use`, `peak_bytes_in_use`, ...) appear where the device reports
    them (not on the CPU); always `live_buffers` and `live_buffer_bytes`, measured from the live device
    buffers; on the CPU also `host_values` and `host_value_bytes`.

    Parameters: device: a device of `transforms.devices()` (default: the default device).
    Returns: dict: statistic name -> int.
    Raises: TypeError: if device is not a backend device.

    >>> stats = profiler.device_memory_stats()
    >>> {"live_buffers", "live_buffer_bytes"} <= set(stats)
    True
    """
    return _backend().memory_stats(device)


# ------------------------------------------------------------------ traces

def start_trace(log_dir, *, python_tracer: bool = True, host_tracer_level: int = 2,
                perfetto: bool = False) -> None:
    """Start XLA's profiler; `stop_trace()` writes `<log_dir>/plugins/profile/<run>/<host>.xplane.pb`
    (TensorBoard / XProf) and `<host>.trace.json.gz` (Chrome trace format; Perfetto opens it, or the
    `perfetto=True` copy without the metadata Perfetto's UI rejects). One trace at a time.

    Parameters: log_dir (str): the output directory. python_tracer (bool): trace Python calls.
        host_tracer_level (int): detail of host events (0-3). perfetto (bool): also write a Perfetto copy.
    Returns: None.
    Raises: RuntimeError: if a trace is already running.

    >>> import tempfile
    >>> profiler.start_trace(tempfile.mkdtemp())
    >>> sorted(p.endswith(".xplane.pb") for p in profiler.stop_trace())   # and a .trace.json.gz
    [False, True]
    """
    _backend().start_trace(log_dir, python_tracer, host_tracer_level, perfetto)


def stop_trace() -> list:
    """Stop the running trace and write it.

    Parameters: none.
    Returns: list of str: the paths of the files written.
    Raises: RuntimeError: if no trace is running.

    >>> import tempfile
    >>> profiler.start_trace(tempfile.mkdtemp())
    >>> [p.endswith((".xplane.pb", ".trace.json.gz")) for p in profiler.stop_trace()]
    [True, True]
    """
    return _backend().stop_trace()


@contextlib.contextmanager
def trace(log_dir, **options):
    """`start_trace(log_dir)` around a `with` block; yields a list that holds the written paths afterwards.

    Parameters: log_dir (str): the output directory. options: start_trace's keyword options.
    Returns: a context manager yielding a list of str.
    Raises: RuntimeError: if a trace is already running.

    >>> import tempfile
    >>> with profiler.trace(tempfile.mkdtemp()) as written:
    ...     _ = xp.sum(xp.ones(3))
    >>> len(written)
    2
    """
    start_trace(log_dir, **options)
    written = []
    try:
        yield written
    finally:
        written.extend(stop_trace())


def TraceAnnotation(name: str, **metadata):
    """A context manager naming a span of host time in a running trace (cheap when none runs).

    Parameters: name (str): the span's name. metadata: key=value pairs recorded with it.
    Returns: a context manager.
    Raises: NoBackendError: if no backend is registered.

    >>> with profiler.TraceAnnotation("step", n=1):
    ...     _ = xp.sum(xp.ones(3))
    """
    return _backend().trace_annotation(name, **metadata)
