"""Large elementwise host kernels split over the machine's cores, on one small thread pool.

Why: an eager elementwise op on a large array is one NumPy ufunc call, and NumPy runs it on one core, while
XLA's executables use every core. `split(fn, in_avals)` gives, for a signature large enough to pay, a kernel
computing ufunc `fn`: the output is cut along its first axis into one block per thread, each block computed
by the same ufunc call on its slices (so each value is the single call's, bit for bit), the calling thread
taking the first block and the pool's threads the others. A hand-off to a sleeping pool thread costs
~100-150 us on a small CPU, so the split pays from MIN_ELEMENTS elements; composites on operands past
xla/host_eager.py's threshold run compiled instead, on XLA's own pool. The pool's threads sleep between
tasks (nothing spins, so nothing has to be sent to sleep before other thread pools -- XLA's, OpenBLAS's --
run) and run kernels as every host kernel does: NumPy's warnings silenced and subnormals flushed
(host.quiet runs each block). The pool is made on first use and anew in a forked child (a child inherits no
threads). ARRAY_NAMESPACE_HOST_THREADS=N sets the thread count (1: off); the default is the number of cores
this process may run on, at most MAX_THREADS.
"""
from __future__ import annotations

import functools
import math
import mmap
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from . import host

# Output size from which the split pays, for every ufunc (2-vCPU VM, float64, single call / split, us: add at 2^19
# elements 546 / 503, exp 463 / 478; at 168,739: exp 135 / 246, log 186 / 260, sin 1274 / 812 -- NumPy's SIMD exp
# and log cost what add does, so a cheaper bound for "transcendental" ufuncs made them slower; sin, cos and the
# other unvectorized ones lose a ~1.5x split between 2^16 and 2^19 elements).
MIN_ELEMENTS = 1 << 19
MAX_THREADS = 8


def _thread_count(environ=os.environ):
    raw = environ.get("ARRAY_NAMESPACE_HOST_THREADS", "").strip()
    if raw:
        try:
            n = int(raw)
        except ValueError:
            raise ValueError(f"ARRAY_NAMESPACE_HOST_THREADS must be a positive integer, got {raw!r}") from None
        if n < 1:
            raise ValueError(f"ARRAY_NAMESPACE_HOST_THREADS must be a positive integer, got {raw!r}")
        return n
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):   # pragma: no cover - platforms without affinity
        cores = os.cpu_count() or 1
    return max(1, min(cores, MAX_THREADS))


THREADS = _thread_count()
_pool, _pool_lock = None, threading.Lock()


def _workers():
    global _pool
    pool = _pool
    if pool is None:
        with _pool_lock:
            if _pool is None:
                _pool = ThreadPoolExecutor(THREADS - 1, thread_name_prefix="array_namespace_host",
                                           initializer=host.thread_start)
            pool = _pool
    return pool


def _after_fork():
    global _pool, _pool_lock
    _pool, _pool_lock = None, threading.Lock()   # (the parent's threads do not exist here)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


@functools.lru_cache(maxsize=1024)
def _natural_dtype(fn, dtypes):
    """fn's result dtype for operands of `dtypes`, or None where it takes none."""
    try:
        return host.quiet(fn, *[np.zeros((), d) for d in dtypes]).dtype
    except (TypeError, ValueError):
        return None


def _quiet_call(fn, ins, out):
    host.quiet(fn, *ins, out=out)


def split(fn, in_avals):
    """A kernel computing ufunc `fn` over threads, for a signature of `in_avals` large enough to pay, or None (too
    small, one thread, not a single-output ufunc, fewer rows than threads). The kernel takes operands of any shape
    (a host program built at one shape runs at others: transforms.jaxpr_transforms._ShapeFree), running `fn`
    itself on those too small to pay."""
    if THREADS < 2 or not isinstance(fn, np.ufunc) or fn.nout != 1:
        return None
    shape = in_avals[0].shape
    if any(a.shape != shape for a in in_avals):   # (broadcasting: a cheap bound first, on every new signature)
        bound = 1
        for a in in_avals:
            for d in a.shape:
                bound *= d
        if bound < MIN_ELEMENTS:
            return None
        shape = np.broadcast_shapes(*[a.shape for a in in_avals])
    if not shape or shape[0] < THREADS or math.prod(shape) < MIN_ELEMENTS:
        return None
    if _natural_dtype(fn, tuple(a.dtype for a in in_avals)) is None:
        return None
    return _pool_kernel(fn)


def _pool_kernel(fn):
    def kernel(*xs, out=None):
        shape = np.broadcast_shapes(*[x.shape for x in xs])
        if not shape or shape[0] < THREADS or math.prod(shape) < MIN_ELEMENTS:
            return fn(*xs, out=out)
        rows, nd, step = shape[0], len(shape), -(-shape[0] // THREADS)
        cut = [x.ndim == nd and x.shape[0] == rows for x in xs]   # (operands spanning axis 0)
        bounds = [(i, min(i + step, rows)) for i in range(0, rows, step)]
        if out is None:   # (given: an operand's memory, written in place -- runtime.eager_in_place)
            out = np.empty(shape, _natural_dtype(fn, tuple(x.dtype for x in xs)))
            # the output's fresh pages faulted in here, by one thread: page faults several threads take at once
            # cost ~3x the same faults taken by one (2-vCPU VM: stats.zscore over 20000x50 35 ms split, 11.6 ms
            # unsplit, 11.5 ms split after this; glibc hands back freed multi-MB blocks, so a chain of ops faults
            # every call)
            out.reshape(-1).view(np.uint8)[::mmap.PAGESIZE] = 0
        pool = _workers()
        futures = [pool.submit(_quiet_call, fn, [x[lo:hi] if c else x for x, c in zip(xs, cut)], out[lo:hi])
                   for lo, hi in bounds[1:]]
        lo, hi = bounds[0]
        try:
            fn(*[x[lo:hi] if c else x for x, c in zip(xs, cut)], out=out[lo:hi])   # (the caller's errstate: quiet)
        finally:
            for f in futures:
                f.result()
        return out
    return kernel
