"""After os.fork(): the child gets a working runtime of its own, and the parent's values stay usable there.

Why: a forked child inherits the parent's memory but only the thread that forked. jaxlib's PJRT client
compiles and executes on thread pools whose threads do not exist in the child, so the child's first compile
waited forever (and so did its exit: destroying the client waits on those threads). A `multiprocessing`
pool forks by default on Linux (Python 3.11), so this is the common way to meet it.

Before the fork, in the parent: every computation in flight finishes (one still running would never finish in
the child, where the thread computing it does not exist). In the child (os.register_at_fork), where the parent
had made its client:
- the parent's client is forsaken (_jaxlib.forsake_client: kept alive, never used or destroyed) and a new one
  is made on first use; every executable made by the old one is dropped (the eager, jit, C++ dispatcher,
  pmap and SPMD caches) and compiled again on need; staged bodies forget theirs;
- values are kept: a host-held value (HostValue) keeps its NumPy memory and drops its device buffer; a
  device-held array on the default device (a jit or random output) becomes a host value viewing its memory,
  one on another device or over several is copied through the host onto the devices of the same ids of the
  new client (_revive); device arrays among a jaxpr's constants likewise;
- an executable the user holds (`jit(f).lower(x).compile()`) raises a clear RuntimeError when called:
  compile it again in the child;
- where the parent compiled, the child compiles in a helper process and loads the result (_Compiler: XLA's
  compiler keeps a process-wide thread the fork does not copy); such executables are not written to the disk
  cache (jaxlib re-serializes a loaded executable incompletely). Programs with host callbacks cannot be
  compiled so: they raise a RuntimeError naming spawn/forkserver;
- locks another thread may have held at the fork are made anew;
- nothing of the parent's runtime is destroyed here: every executable and buffer the child lets go of is kept
  (_kept), past the interpreter's exit too. Destroying an executable takes LLVM's process-wide JIT-registration
  mutex, which a thread of the parent may hold at the fork (freeing one of its own, or registering one its
  compile just made): the child waited on it forever (measured: 2 hung in ~1,000 forks while another thread
  ran jit work, under load; and 1 in ~3,200 at sys.exit, whose teardown of module globals freed _kept);
  for the same mutex, the C exit handlers of the parent's runtime are skipped in the child
  (_skip_the_parents_exit_handlers).
Cost: the child walks the heap once (gc.get_objects, ~0.3 us an object: ~16 ms for a 50,000-object process).
A process of a distributed run (xla.distributed) has no working child: the copy cannot rejoin the run, so
there the child's first use of the runtime raises a RuntimeError saying so (use spawn or forkserver).
The host thread pool (host_parallel.py) and the compile cache's writer (compile_cache.py) renew themselves.
"""
from __future__ import annotations

import ctypes
import gc
import os
import pickle
import struct
import subprocess
import sys
import threading

import numpy as np

from transforms.caches import cache_size, clear_all as clear_caches
from transforms.core import boxing
from transforms.jaxpr import ClosedJaxpr
from transforms.jaxpr_transforms import _Staged

from . import _jaxlib, distributed, pmap_runtime, runtime, spmd
from .host import HostValue

REFUSAL = ("this process was forked from a process of a distributed run (distributed.initialize): a forked "
           "copy cannot rejoin that run, so it has no runtime. Start worker processes with multiprocessing's "
           "'spawn' or 'forkserver' method (multiprocessing.get_context('spawn')), or fork before initialize")
STALE = ("this compiled executable was made before os.fork(), by the parent process's runtime, and does not "
         "survive a fork; compile it again in this process (jit(f).lower(...).compile())")


class _NativeWork:
    """Counts the native calls in flight that may start or end the runtime's threads (compiles, loads, client
    creation: _jaxlib.native_work); a fork waits until none is. Why: tsl takes one process-wide mutex (its
    thread-name registry) as each of its threads starts and ends; held at the fork by a thread the fork
    does not copy, the child's first new thread (its client's) would wait on it forever."""

    def __init__(self):
        self.cv = threading.Condition(threading.Lock())
        self.running, self.forking = 0, False

    def __enter__(self):
        with self.cv:
            while self.forking:
                self.cv.wait()
            self.running += 1

    def __exit__(self, *exc):
        with self.cv:
            self.running -= 1
            self.cv.notify_all()

    def hold(self):   # before the fork: no call in flight, none starting
        with self.cv:
            self.forking = True
            while self.running:
                self.cv.wait()

    def release(self):   # after it, in the parent
        with self.cv:
            self.forking = False
            self.cv.notify_all()


class _Stale:
    """Stands in for an executable of the parent's runtime held by the user (running it would hang)."""

    def execute_sharded(self, *args, **kwargs):
        raise RuntimeError(STALE)

    cost_analysis = execute_sharded


# The compiler process of a child whose parent compiled (below): a fresh interpreter importing only jaxlib,
# compiling each module it is sent and sending back the serialized executable (length-prefixed pickles).
_HELPER = r"""
import os, pickle, struct, sys
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
from jaxlib import xla_client as xc
src, dst, clients = sys.stdin.buffer, sys.stdout.buffer, {}
while True:
    head = src.read(8)
    if len(head) < 8:
        break
    text, opts, ids, count = pickle.loads(src.read(struct.unpack("<Q", head)[0]))
    try:
        c = clients.get(count) or clients.setdefault(count, xc.make_cpu_client(num_devices=count))
        by_id = {d.id: d for d in c.devices()}
        exe = c.compile_and_load(text, xc.DeviceList(tuple(by_id[i] for i in ids)),
                                 xc.CompileOptions.ParseFromString(opts))
        reply = ("ok", c.serialize_executable(exe))
    except Exception as e:
        reply = ("error", f"{type(e).__name__}: {e}")
    data = pickle.dumps(reply)
    dst.write(struct.pack("<Q", len(data)) + data)
    dst.flush()
"""


class _Compiler:
    """Compiles in another process, for a child whose parent compiled: XLA's compiler keeps a process-wide
    'slow operation' alarm thread, waiting on a condition variable that every compile signals; in a forked
    child that thread does not exist and the first compile aborts ("Mutex::Fer with pending CondVar
    queueing") or hangs. Loading a serialized executable does not touch it, so the child sends each module
    to a helper process (started on first need, ~0.5 s; one per child) and loads what comes back."""

    def __init__(self):
        self.proc = None
        self.lock = threading.Lock()

    def __call__(self, module, devices, opts, callbacks=None):
        if callbacks:
            raise RuntimeError("a program with host callbacks (pure_callback, io_callback, debug_print) cannot be "
                               "compiled in a process forked after its parent compiled (XLA's compiler does not "
                               "survive a fork, so this process compiles in another, where the callbacks' Python "
                               "functions do not exist); start workers with multiprocessing's 'spawn' or "
                               "'forkserver' method")
        text = _jaxlib.module_text(module)
        msg = pickle.dumps((text, opts.SerializeAsString(), [d.id for d in devices], len(_jaxlib.client().devices())))
        with self.lock:
            if self.proc is None or self.proc.poll() is not None:
                self.proc = subprocess.Popen([sys.executable, "-c", _HELPER], stdin=subprocess.PIPE,
                                             stdout=subprocess.PIPE)
            try:
                self.proc.stdin.write(struct.pack("<Q", len(msg)) + msg)
                self.proc.stdin.flush()
                head = self.proc.stdout.read(8)
                kind, value = pickle.loads(self.proc.stdout.read(struct.unpack("<Q", head)[0]))
            except (OSError, struct.error, EOFError, pickle.UnpicklingError) as e:
                self.proc = None
                raise RuntimeError(f"the compiler process of this forked child failed ({e}); start workers with "
                                   "multiprocessing's 'spawn' or 'forkserver' method") from None
        if kind != "ok":
            raise _jaxlib.XlaRuntimeError(value)
        c = _jaxlib.client()
        with _jaxlib.native_work:
            return c.deserialize_executable(value, _jaxlib.xc.DeviceList(tuple(devices)), opts)

    def forget(self):
        """In a child of this process: the helper and its pipes are the parent's; left alone (kept, never closed
        or waited for here)."""
        if self.proc is not None:
            _parents_helpers.append(self.proc)
            self.proc = None


_parents_helpers = []


def _fresh_locks():
    """Locks a thread of the parent may have held at the fork, made anew (that thread is gone)."""
    from . import compile_cache, lower_callbacks
    compile_cache._stats_lock, compile_cache._host_lock = threading.Lock(), threading.Lock()
    lower_callbacks._lock = threading.Lock()
    prof = sys.modules.get(__package__ + ".profiling")
    if prof is not None:
        prof._lock = threading.Lock()


def _revive(arr):
    """A device array of the parent's client as an array of this client: its value copied through the host onto
    the devices of the same ids, laid out the same way."""
    j = _jaxlib
    value = j.to_numpy(arr)
    s = arr._sharding
    if not isinstance(s, j.ManyDevices):
        return j.device_put(np.array(value, order="C"), arr.aval, j.current_device(j.device_of(arr)))
    devs = [j.current_device(d) for d in s.devices]
    if getattr(s, "tiled", False):
        new = j.mesh_sharding(devs, s.text, getattr(s, "named", None))
        new.named = getattr(s, "named", None)
        return j.put_tiles(value, arr.aval, new)
    return j.put_on_devices(value, arr.aval, j.many_devices(devs, value.ndim, s.stacked), devs)


def _revived(raw, old_default):
    """A device array of the parent's client as a value of this process: where eager values are host-held and it
    lies whole on the default device, a host value viewing its memory (no copy: a pool of forked workers does
    not each copy the parent's arrays; the view keeps the old buffer alive, and is read-only, so never written
    in place); else copied onto this client's devices of the same ids."""
    if (not _jaxlib.on_many_devices(raw) and _jaxlib.device_of(raw) is old_default and runtime._kernels_on()):
        return HostValue(_jaxlib.to_numpy(raw), raw.aval)
    return _revive(raw)


_kept = []   # in a forked child: the parent's executables and buffers it let go of, never destroyed here


def _revive_objects(old_default):
    """One walk over the heap: every value and executable bound to the parent's client, made this process's
    (what each drops is kept: _kept)."""
    box, buf = boxing.box_type, _jaxlib.ArrayImpl
    stale, keep = _jaxlib.is_forsaken, _kept.append

    def fix(raw):
        return _revived(raw, old_default) if type(raw) is buf and stale(raw) else raw

    for o in gc.get_objects():
        t = type(o)
        try:
            if t is box:
                v = getattr(o, "_v", None)
                if type(v) is buf and stale(v):
                    keep(v)
                    o._v = _revived(v, old_default)
            elif t is HostValue:
                b = o._buf
                if b is not None and not b.is_deleted():   # (a donated value keeps its deleted buffer: it says so)
                    keep(b)
                    o._buf = None
            elif t is runtime.Compiled:
                keep(o.exe)
                o.exe = _Stale()
            elif t is _Staged:
                keep((o.exe, o.const_bufs, list(o.consts)))
                o.exe = o.const_bufs = None
                o.consts[:] = [fix(c) for c in o.consts]
            elif t is ClosedJaxpr:
                if any(type(c) is buf for c in o.consts):
                    keep(list(o.consts))
                    o.consts[:] = [fix(c) for c in o.consts]
        except (RuntimeError, ValueError, MemoryError):   # (one value that cannot be copied must not stop the
            pass            # others; using it raises XLA's error that its buffer is not on this client's device)


def _skip_the_parents_exit_handlers():
    """In a child whose parent compiled: its C-level exit ends at once (_exit, same status) once Python has
    finalized, instead of running the exit handlers registered before the fork, the C++ destructors of the
    parent's runtime. One of them, LLVM's GDB JIT-registration listener's, takes the mutex a compile of the
    parent may hold at the fork: XLA's codegen thread registers an object with it after the compile is
    already done (LLVM's onObjEmit completes the lookup first), so waiting for compiles does not exclude it,
    and the child hung in exit() (gdb: __run_exit_handlers -> ~GDBJITRegistrationListener). Python's own
    exit (atexit, flushing sys.stdout, teardown) runs as before; C stdio buffers are not flushed (as os._exit,
    which multiprocessing's workers end with). glibc only (on_exit)."""
    libc = ctypes.CDLL(None)
    on_exit = getattr(libc, "on_exit", None)
    if on_exit is not None:
        on_exit.argtypes = (ctypes.c_void_p, ctypes.c_void_p)
        on_exit(ctypes.cast(libc["_exit"], ctypes.c_void_p), None)   # called as _exit(status, arg)


def before_fork():
    """In the parent, just before a fork: let every computation in flight finish, so the child inherits
    finished values (one still being computed would never finish there: the thread computing it is not
    copied) and the runtime's threads idle."""
    _jaxlib.native_work.hold()
    c = _jaxlib._client
    if c is None:
        return
    for a in c.live_arrays():
        try:
            a.block_until_ready()
        except Exception:   # noqa: BLE001  (deleted, donated, failed: nothing left in flight)
            pass


def after_fork_in_parent():
    _jaxlib.native_work.release()


def after_fork_in_child():
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(_kept))   # (the interpreter's teardown clears module globals)
    _jaxlib.native_work = _NativeWork()
    _fresh_locks()
    _kept.append(dict(pmap_runtime._programs))
    pmap_runtime.after_fork()
    joined = distributed.joined()
    if joined:
        distributed.forsake()
    elif not _jaxlib.client_exists():
        return   # nothing was made from a client: the child makes its own on first use, as the parent did
    old_default = runtime._default_device
    _jaxlib.forsake_client(REFUSAL if joined else None)
    # dispatchers made here get a cache of their own: the shared one's mutex may be held by a thread of the parent
    # at the fork (making a dispatcher looks it up), and one made here then waited for it forever
    _jaxlib.set_dispatch_cache_size(cache_size("jit_dispatch"))
    if _jaxlib.compiled_here or _jaxlib.compile_elsewhere is not None:
        _skip_the_parents_exit_handlers()
        if _jaxlib.compile_elsewhere is not None:
            _jaxlib.compile_elsewhere.forget()
        _jaxlib.compile_elsewhere = _Compiler()
    runtime._default_device = None
    for cache in (runtime._exe_cache, runtime._scalar_cache, spmd._programs):
        _kept.append(dict(cache))
        cache.clear()
    clear_caches(keep=_kept.append)
    _revive_objects(old_default)   # (in a distributed run's child: values cannot move; the rest still holds)


_jaxlib.native_work = _NativeWork()
os.register_at_fork(before=before_fork, after_in_parent=after_fork_in_parent, after_in_child=after_fork_in_child)
