"""The XLA side of `transforms.profiler`: jaxlib's heap profile, live buffers, allocator statistics
and profiler sessions, plus an accounting of the host-held eager values jaxlib cannot see. (Named
apart from transforms/profiler.py: tests mirror src by file name, and pytest needs distinct names.)

Why a separate accounting: on the CPU, eager results are `HostValue`s (xla/host.py), NumPy arrays that
PJRT never allocated, so jaxlib's heap profile and live-array list omit them. We find them with the
garbage collector (HostValue is a GC-tracked object) at profile time only -- nothing is added to the
eager hot path -- and add them to the profile as samples of kind `host_value`. A host value whose
memory a device buffer aliases (the zero-copy `HostValue.buffer`) is left out of the memory profile and
the byte counts: jaxlib's `buffer` sample for that buffer already counts those bytes.

Python stacks: jaxlib records the creating traceback of a device buffer only while its traceback
collection is on, which `xla/_jaxlib.py` turns off for dispatch speed; `set_allocation_stacks` turns
it on (and, for host values, starts `tracemalloc`, whose object tracebacks give the stack that made
each HostValue). tracemalloc frames carry only file and line; the function name is read from the
source file with `ast` (the innermost `def` enclosing the line).

The only jaxlib import besides `_jaxlib` is its profiler extension (`jaxlib._profiler`), which runs
XLA's profiler session (an XSpace `.xplane.pb` for TensorBoard/XProf plus a Chrome-trace JSON that
Perfetto reads) without the `jax` package.
"""
from __future__ import annotations

import ast
import gc
import gzip
import json
import linecache
import os
import threading
import tracemalloc
import weakref

import numpy as np
from jaxlib import _profiler  # noqa: E402  (pinned with the rest of jaxlib in _jaxlib.py)

from . import _jaxlib, host
from .host import HostValue

_xla = _jaxlib.xc._xla
_lock = threading.Lock()
_TRACEMALLOC_FRAMES = 64
_we_started_tracemalloc = False


# ------------------------------------------------------------------ allocation stacks

def set_allocation_stacks(device: bool, host_values: bool):
    """Turn creation-stack recording on/off; returns the previous (device, host_values) setting."""
    global _we_started_tracemalloc
    with _lock:
        prev = (bool(_xla.tracebacks_enabled()), tracemalloc.is_tracing())
        _xla.set_tracebacks_enabled(bool(device))
        if host_values and not tracemalloc.is_tracing():
            tracemalloc.start(_TRACEMALLOC_FRAMES)
            _we_started_tracemalloc = True
        elif not host_values and _we_started_tracemalloc and tracemalloc.is_tracing():
            _keep_host_stacks()  # stopping tracemalloc forgets its traces; live values keep their stacks
            tracemalloc.stop()   # only a tracemalloc we started: a user's own tracing is left alone
            _we_started_tracemalloc = False
    return prev


_kept_stacks = weakref.WeakKeyDictionary()   # HostValue -> frames, saved when we stop tracemalloc


def _keep_host_stacks():
    for hv in _host_values():
        tb = tracemalloc.get_object_traceback(hv)
        if tb is not None:
            _kept_stacks[hv] = [(f.filename, f.lineno) for f in reversed(tb)]


def _host_stack(hv):
    """(filename, line) frames, innermost first, of the code that made `hv`; [] when not recorded."""
    tb = tracemalloc.get_object_traceback(hv) if tracemalloc.is_tracing() else None
    if tb is not None:
        return [(f.filename, f.lineno) for f in reversed(tb)]
    return _kept_stacks.get(hv, [])


# ------------------------------------------------------------------ host-held values

def _host_values():
    """Every HostValue alive now (not donated/deleted)."""
    return [o for o in gc.get_objects() if type(o) is HostValue and not o.is_deleted()]


def _root(arr):
    """The ndarray that owns the memory `arr` views (views share their base's allocation)."""
    while isinstance(arr.base, np.ndarray):
        arr = arr.base
    return arr


def _aliased(hv) -> bool:
    """Whether a device buffer of `hv` aliases its NumPy memory (jaxlib already counts those bytes)."""
    b = hv._buf
    if b is None or b.is_deleted() or hv.np.size == 0:
        return False
    # The buffer's address through the buffer protocol (a zero-copy view on the CPU). Not
    # `unsafe_buffer_pointer()`: in jaxlib 0.10.2 it imports the `jax` package, which changes how
    # this backend's jit dispatch sets itself up (xla/_jaxlib.py `jax_owns_states`).
    view = np.asarray(b)
    if view.dtype != object:
        return view.ctypes.data == hv.np.ctypes.data
    # bf16/fp8 are not exported through the buffer protocol: apply HostValue.buffer's own rule
    # (it aliases exactly the C-contiguous, 64-byte-aligned arrays of the aval's dtype)
    a = hv.np
    return a.flags.c_contiguous and a.dtype == hv.aval.dtype and a.ctypes.data % host._ALIGN == 0


def _host_allocations():
    """[(host_value, nbytes)] with each distinct NumPy allocation counted once, aliased ones left out."""
    seen, out = set(), []
    for hv in _host_values():
        if _aliased(hv):
            continue
        root = _root(hv.np)
        if id(root) in seen:
            continue
        seen.add(id(root))
        out.append((hv, int(root.nbytes)))
    return out


# ------------------------------------------------------------------ memory profile

_func_cache: dict = {}


def _function_at(filename: str, lineno: int) -> str:
    """The innermost function defined around `filename:lineno` (tracemalloc frames have no name)."""
    spans = _func_cache.get(filename)
    if spans is None:
        spans = []
        try:
            tree = ast.parse("".join(linecache.getlines(filename)))
            for node in ast.walk(tree):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    spans.append((node.lineno, node.end_lineno, node.name))
        except (SyntaxError, ValueError):
            pass
        _func_cache[filename] = spans
    best = None
    for lo, hi, name in spans:
        if lo <= lineno <= hi and (best is None or lo >= best[0]):
            best = (lo, name)
    return best[1] if best else "<module>"


class _ProfileBuilder:
    """Appends samples to a pprof profile held in its JSON form (jaxlib converts both ways)."""

    def __init__(self, prof):
        self.p = prof
        self.strings = prof.setdefault("stringTable", [""])
        self.index = {s: i for i, s in enumerate(self.strings)}
        self.functions = {}
        self.locations = {}
        prof.setdefault("function", [])
        prof.setdefault("location", [])
        prof.setdefault("sample", [])

    def s(self, text):
        i = self.index.get(text)
        if i is None:
            i = self.index[text] = len(self.strings)
            self.strings.append(text)
        return str(i)

    def _new_id(self, table):
        return str(1 + max((int(e["id"]) for e in self.p[table]), default=0))

    def location(self, filename, lineno):
        key = (filename, lineno)
        loc = self.locations.get(key)
        if loc is None:
            name = _function_at(filename, lineno)
            fkey = (filename, name)
            fid = self.functions.get(fkey)
            if fid is None:
                fid = self.functions[fkey] = self._new_id("function")
                self.p["function"].append({"id": fid, "name": self.s(name), "systemName": self.s(name),
                                           "filename": self.s(filename)})
            loc = self.locations[key] = self._new_id("location")
            self.p["location"].append({"id": loc, "line": [{"functionId": fid, "line": str(lineno)}]})
        return loc

    def sample(self, nbytes, frames, labels):
        """frames: (filename, lineno) pairs, innermost first."""
        self.p["sample"].append({
            "locationId": [self.location(f, n) for f, n in frames],
            "value": ["1", str(nbytes)],
            "label": [{"key": self.s(k), "str": self.s(v)} for k, v in labels]})


def memory_profile() -> bytes:
    """jaxlib's heap profile of live device buffers and executables, plus host-held eager values;
    a gzip-compressed pprof `Profile` protobuf (what `pprof` reads)."""
    from .runtime import default_device
    prof = json.loads(_xla.pprof_profile_to_json(_jaxlib.client().heap_profile()))
    b = _ProfileBuilder(prof)
    if not prof.get("sampleType"):
        prof["sampleType"] = [{"type": b.s("allocations"), "unit": b.s("count")},
                              {"type": b.s("space"), "unit": b.s("bytes")}]
    d = default_device()
    where = f"{d.platform}:{d.id}"
    for hv, nbytes in _host_allocations():
        b.sample(nbytes, _host_stack(hv), [("kind", "host_value"), ("device", where), ("value", hv.aval.str_short())])
    return gzip.compress(_xla.json_to_pprof_profile(json.dumps(prof)))


# ------------------------------------------------------------------ live values and statistics

def live_values(include_host: bool = True) -> list:
    """Raw eager values alive now: device buffers (jaxlib's live arrays) and, with `include_host`,
    HostValues -- a device buffer made for a live HostValue then appears as that HostValue."""
    bufs = _jaxlib.client().live_arrays()
    if not include_host:
        return list(bufs)
    hvs = _host_values()
    backing = {id(hv._buf) for hv in hvs if hv._buf is not None}
    return [a for a in bufs if id(a) not in backing] + hvs


def _device_of(buf):
    return _jaxlib.device_of(buf)


def memory_stats(device=None) -> dict:
    """The allocator's statistics where the device has them (None on the CPU), plus counts we measure:
    `live_buffers`/`live_buffer_bytes` (jaxlib's live device arrays on `device`, their on-device
    sizes) and, for the device whose eager values live on the host, `host_values`/`host_value_bytes`
    (distinct NumPy allocations, not counting memory a device buffer aliases)."""
    from .runtime import default_device
    d = default_device() if device is None else getattr(device, "runtime_device", device)   # (an array's .device)
    if d not in _jaxlib.client().devices():
        raise TypeError(f"device_memory_stats: device must be one of the backend's devices "
                        f"(transforms.backend.backend.devices()) or None, got {device!r}")
    stats = dict(d.memory_stats() or {})
    bufs = [a for a in _jaxlib.client().live_arrays() if not a.is_deleted() and _device_of(a) == d]
    stats["live_buffers"] = len(bufs)
    stats["live_buffer_bytes"] = sum(int(a.on_device_size_in_bytes()) for a in bufs)
    if d == default_device() and d.platform == "cpu" and host.MODE != "xla":
        allocs = _host_allocations()
        stats["host_values"] = len(allocs)
        stats["host_value_bytes"] = sum(n for _, n in allocs)
    return stats


# ------------------------------------------------------------------ profiler sessions (traces)

_session = None
_session_dir = None
_session_opts = None


def start_trace(log_dir, python_tracer: bool = True, host_tracer_level: int = 2, perfetto: bool = False):
    global _session, _session_dir, _session_opts
    log_dir = os.fspath(log_dir)
    with _lock:
        if _session is not None:
            raise RuntimeError(f"start_trace: a trace into {_session_dir!r} is already running; "
                               "call stop_trace() first")
        opts = _profiler.ProfileOptions()
        opts.python_tracer_level = 1 if python_tracer else 0
        opts.host_tracer_level = int(host_tracer_level)
        _session = _profiler.ProfilerSession(opts)
        _session_dir, _session_opts = log_dir, {"perfetto": perfetto}


def stop_trace() -> list:
    """Stop the running trace, write it under `<log_dir>/plugins/profile/<run>/`, return the files."""
    global _session, _session_dir, _session_opts
    with _lock:
        if _session is None:
            raise RuntimeError("stop_trace: no trace is running (call start_trace(log_dir) first)")
        session, log_dir, opts = _session, _session_dir, _session_opts
        _session = _session_dir = _session_opts = None
        root = os.path.join(log_dir, "plugins", "profile")
        before = _files(root)
        session.stop_and_export(log_dir)
    after = _files(root)
    files = [p for p, m in after.items() if before.get(p) != m]   # written (or rewritten) by this export
    if opts["perfetto"]:
        files += [_perfetto_copy(p) for p in files if p.endswith(".trace.json.gz")]
    return sorted(files)


def _files(root):
    out = {}
    for dirpath, _, names in os.walk(root):
        for n in names:
            p = os.path.join(dirpath, n)
            out[p] = os.stat(p).st_mtime_ns
    return out


def _perfetto_copy(path):
    """The Chrome-trace JSON without its top-level `metadata` object, which Perfetto's UI refuses."""
    with gzip.open(path, "rb") as f:
        trace = json.load(f)
    trace.pop("metadata", None)
    out = path[: -len(".trace.json.gz")] + ".perfetto_trace.json.gz"
    with gzip.open(out, "wb") as f:
        f.write(json.dumps(trace).encode())
    return out


def trace_annotation(name: str, **metadata):
    """A context manager marking a named span in a running trace (XLA's TraceMe); free when none runs."""
    return _profiler.TraceMe(name, **metadata)
