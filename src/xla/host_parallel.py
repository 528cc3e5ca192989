"""Large elementwise host kernels split over the machine's cores.

Why: an eager elementwise op on a large array is one NumPy ufunc call, and NumPy runs it on one core, while
XLA's executables (what JAX runs eagerly) use every core: library code doing ~15 ops on 10^5-element arrays
(scipy's moments) ran ~1.2x JAX's time on 2 cores, all of it in those calls.

`split(fn, in_avals)` gives, for a signature large enough to pay, a kernel computing `fn` over the cores:

- Exact ufuncs (EXACT: the correctly rounded IEEE operations, comparisons, integer and bitwise ones, whose
  every correct loop gives the same bits) run by the C extension `_parallel_loops`: the inner loop of the
  ufunc's own loop table for the signature, called over chunks of the output by the calling
  thread (GIL released) and C workers that spin a while after each task, so the next op finds them awake
  (a hand-off costs ~1 us, not a ~50-100 us futex wake-up); from MIN_ELEMENTS_NATIVE elements (32768 f64
  adds: 10.8 -> 6.6 us; 2020x70 `x - mean`: 107 -> 21 us). A transcendental ufunc's table loop may not be
  the one NumPy calls (NumPy 2 dispatches SIMD versions of exp, tan, ... elsewhere: other last bits), so
  those are never run this way. The workers yield to other runnable threads after 50 us of spinning, sleep at
  once on park() (before every XLA executable, LAPACK call and large matmul: those pools need the cores) and
  stay out for 50 ms after one of their chunks came late (another thread held the core).
- Otherwise (no extension built, or not an exact ufunc): the output is cut along its first axis into one
  block per thread, each computed by the same ufunc call on its slices from a thread pool; from
  MIN_ELEMENTS (MIN_ELEMENTS_COSTLY for transcendental ufuncs), where the pool's hand-off pays.

Either way each value is the single call's, bit for bit. `split_reduce` (sums, products, max, min over
trailing axes, row by row as NumPy's reduce runs them) and `split_copy` (a transpose laid out) use the same
C workers. The calling thread always computes part of the work itself and all of it when the
workers are busy (another thread's op), so a call from any thread, or several at once, makes progress.
Workers run with NumPy's floating-point warnings silenced and in the kernels' floating-point mode (subnormals
flushed, host.py), as every host kernel does: a pool thread sets it around each block (host.err_set), a C
worker takes the calling thread's with each task. Pools are made on
first use and anew in a forked child (a child inherits no threads). ARRAY_NAMESPACE_HOST_THREADS=N sets the
thread count (1: off); the default is the number of cores this process may run on, at most MAX_THREADS.
"""
from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from . import host

try:
    from . import _parallel_loops as _native
except ImportError:   # (the optional extension was not built: the thread pool path only)
    _native = None

# Output sizes from which the split pays (2-core CPU: a hand-off to a worker and back ~70-100 us): from ~2^19
# elements for an ufunc costing ~1 ns an element (add, divide, compare, sqrt), from 2^16 for a transcendental
# one (~6-15 ns an element: sin(x) 2^16 elements 471 -> 307 us; x + y 2^19 450 -> 330 us).
MIN_ELEMENTS = 1 << 19
MIN_ELEMENTS_COSTLY = 1 << 16
_COSTLY = frozenset((np.sin, np.cos, np.tan, np.arcsin, np.arccos, np.arctan, np.sinh, np.cosh, np.tanh,
                     np.arcsinh, np.arccosh, np.arctanh, np.exp, np.exp2, np.expm1, np.log, np.log1p, np.log2,
                     np.log10, np.cbrt, np.arctan2, np.fmod, np.power, np.hypot))
MAX_THREADS = 8
MIN_ELEMENTS_NATIVE = 1 << 15
SPIN_US = 2000.0   # default: how long a C worker spins for the next task before it sleeps (see _spin_us)
# ufuncs every correct loop of which gives the same bits (on complex operands only those acting per part)
EXACT = frozenset((np.add, np.subtract, np.multiply, np.true_divide, np.negative, np.positive, np.absolute,
                   np.sqrt, np.square, np.floor, np.ceil, np.rint, np.trunc, np.fmod, np.equal, np.not_equal,
                   np.less, np.less_equal, np.greater, np.greater_equal, np.bitwise_and, np.bitwise_or,
                   np.bitwise_xor, np.invert, np.logical_and, np.logical_or, np.logical_xor, np.logical_not,
                   np.isfinite, np.isnan, np.isinf, np.signbit, np.conjugate))
EXACT_COMPLEX = frozenset((np.add, np.subtract, np.negative, np.positive, np.conjugate, np.equal, np.not_equal,
                           np.isfinite, np.isnan, np.isinf))


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


def _spin_us(environ=os.environ):
    """ARRAY_NAMESPACE_HOST_SPIN_US: how long (microseconds) an idle C worker waits awake for the next op
    before it sleeps. Library code leaves ~50-500 us of Python between its large ops; a worker asleep
    then costs each op a wake-up (~+20 us, and no second core), so the default covers such gaps, as
    XLA's and OpenMP's pools spin (KMP_BLOCKTIME: 200 ms). 0: sleep at once (no CPU spent idle)."""
    raw = environ.get("ARRAY_NAMESPACE_HOST_SPIN_US", "").strip()
    if not raw:
        return SPIN_US
    try:
        v = float(raw)
    except ValueError:
        v = -1.0
    if not 0 <= v <= 1e6:
        raise ValueError(f"ARRAY_NAMESPACE_HOST_SPIN_US must be a number of microseconds in [0, 1e6], got {raw!r}")
    return v


THREADS = _thread_count()
_pool = None
_pool_lock = threading.Lock()


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


def _quiet_call(fn, ins, out):
    tok = host.err_set(host.QUIET)
    try:
        fn(*ins, out=out)
    finally:
        host.err_reset(tok)


def _natural_dtype(fn, dtypes):
    try:
        return host.run_quiet(fn, [np.zeros((), d) for d in dtypes], {}).dtype
    except (TypeError, ValueError):
        return None


def native_loop(fn, dtypes, out_dtype, allowed=EXACT):
    """The C loop of ufunc `fn` (one of `allowed`) for exactly these operand dtypes, all one dtype: the entry of its
    loop table for them (for `allowed` ufuncs, the same bits as NumPy's own call), or None."""
    if _native is None or fn not in allowed or (any(d.kind == "c" for d in dtypes) and fn not in EXACT_COMPLEX):
        return None
    if any(d.kind not in "biufc" or not d.isnative for d in (*dtypes, out_dtype)):
        return None
    if any(d != dtypes[0] for d in dtypes):   # (mixed operands: NumPy may take another loop than the table's)
        return None
    try:
        index = fn.types.index("".join(d.char for d in dtypes) + "->" + out_dtype.char)
    except ValueError:
        return None
    _configure()
    return _native.make(fn, index, tuple(memoryview(np.empty(0, d)).format for d in (*dtypes, out_dtype)))


_configured = False


def _configure():
    global _configured
    if not _configured:
        with _pool_lock:
            if not _configured:
                _native.configure(np.ufunc, THREADS, _spin_us())   # (its workers start on the first parallel run)
                _configured = True


def split(fn, in_avals):
    """A kernel computing ufunc `fn` on operands of `in_avals` over threads, or None (too small, one thread,
    not a single-output ufunc)."""
    if THREADS < 2 or not isinstance(fn, np.ufunc) or fn.nout != 1:
        return None
    shape = in_avals[0].shape
    if any(a.shape != shape for a in in_avals):   # (broadcasting: a cheap bound first, on every new signature)
        bound = 1
        for a in in_avals:
            for d in a.shape:
                bound *= d
        if bound < min(MIN_ELEMENTS_NATIVE, MIN_ELEMENTS_COSTLY):
            return None
        shape = np.broadcast_shapes(*[a.shape for a in in_avals])
    if not shape:
        return None
    size = 1
    for d in shape:
        size *= d
    if size < min(MIN_ELEMENTS_NATIVE, MIN_ELEMENTS_COSTLY):
        return None
    dt = _natural_dtype(fn, [a.dtype for a in in_avals])
    if dt is None:
        return None
    loop = native_loop(fn, [np.dtype(a.dtype) for a in in_avals], dt) if size >= MIN_ELEMENTS_NATIVE else None
    if loop is not None:
        return _native_kernel(fn, loop, shape, dt)
    rows = shape[0]
    if size < (MIN_ELEMENTS_COSTLY if fn in _COSTLY else MIN_ELEMENTS) or rows < THREADS:
        return None
    return _pool_kernel(fn, in_avals, shape, dt)


def _no_workers():
    pass


# park(): spinning C workers go to sleep now, as an XLA executable's thread pool is about to need the cores (a
# worker spinning beside a 1.5 ms jitted call slowed it ~35% on 2 cores): run before every executable. (A few ns in
# C.)
park = _no_workers if _native is None else _native.park


def park_capsule():
    """park() as a C function pointer (for the jit callbacks in xla/_dispatch_nodes.c), or None."""
    return None if _native is None else _native.park_capsule


# Reductions run as NumPy's reduce runs them on a C-contiguous row: its loop called once on the row, the
# accumulator starting at the row's first element -- but a float sum's at +0.0 in NumPy 2 (its sum of -0.0s is
# +0.0) and at the first element in NumPy 1 (-0.0), a difference of last bits in general (pairwise summation
# groups the row differently), so which one this NumPy does is found out once per dtype (_sum_start).
_REDUCE_OK = frozenset((np.add, np.multiply, np.maximum, np.minimum))
_sum_starts = {}


def sum_start(dt):
    """The accumulator start (bytes) of NumPy's float row sums, None for the row's first element, or False where
    neither gives NumPy's bits on a probe (then sums are left to NumPy)."""
    got = _sum_starts.get(dt)
    if got is None:
        got = False
        probe = np.random.default_rng(0).standard_normal((3, 1001)).astype(dt)
        probe[1] = -0.0
        probe[2, ::3] = -0.0
        want = np.add.reduce(probe, 1, dt)
        loop = native_loop(np.add, [dt, dt], dt, _REDUCE_OK)
        for start in (np.array(0.0, dt).tobytes(), None):
            out = np.empty(3, dt)
            if loop is not None and _native.reduce(loop, out, probe, start) and out.tobytes() == want.tobytes():
                got = start
                break
        _sum_starts[dt] = got
    return got


def split_reduce(fn, aval, axes):
    """A kernel x -> fn.reduce(x, axes) (the same bits) over the cores for C-contiguous operands of `aval`
    reduced over trailing `axes` (sorted), or None (too small, one row, other axes, no extension)."""
    if THREADS < 2 or _native is None or fn not in _REDUCE_OK:
        return None
    shape, dt = aval.shape, np.dtype(aval.dtype)
    nd, k = len(shape), len(axes)
    if dt.kind not in "iuf" or not 0 < k < nd or tuple(axes) != tuple(range(nd - k, nd)):
        return None
    n = 1
    for d in shape[nd - k:]:
        n *= d
    rows = 1
    for d in shape[:nd - k]:
        rows *= d
    if n == 0 or rows < 2 or n * rows < MIN_ELEMENTS_NATIVE:
        return None
    loop = native_loop(fn, [dt, dt], dt, _REDUCE_OK)
    if loop is None:
        return None
    initial = None
    if fn is np.add and dt.kind == "f":
        initial = sum_start(dt)
        if initial is False:
            return None
    reduce, empty, out_shape, plain = _native.reduce, np.empty, shape[:nd - k], fn.reduce

    def kernel(x):
        if x.flags.c_contiguous:
            out = empty(out_shape, dt)
            if reduce(loop, out.reshape(rows), x.reshape(rows, n), initial):
                return out
        return plain(x, axes, dt)
    return kernel


_copiers = {}   # dtype -> its copy loop


def split_copy(shape, dtype):
    """A kernel v -> a C-contiguous copy of `v` (any strides: a transposed view) over the cores, for views of
    `shape` and `dtype`; or None (too small, one thread, no extension)."""
    dt = np.dtype(dtype)
    if THREADS < 2 or _native is None or dt.kind not in "biufc" or not dt.isnative:
        return None
    size = 1
    for d in shape:
        size *= d
    if size < MIN_ELEMENTS_NATIVE:
        return None
    loop = _copiers.get(dt)
    if loop is None:
        _configure()
        loop = _copiers[dt] = _native.copier(memoryview(np.empty(0, dt)).format, dt.itemsize)
    run, empty = _native.run, np.empty

    def kernel(v):
        out = empty(shape, dt)
        if run(loop, out, v):
            return out
        return np.ascontiguousarray(v)
    return kernel


def _native_kernel(fn, loop, shape, dt):
    run, empty = _native.run, np.empty

    def kernel(*xs):
        out = empty(shape, dt)
        if run(loop, out, *xs):
            return out
        return fn(*xs)   # (an operand the loop does not take as it is: unaligned, another byte order)
    kernel.native = True
    return kernel


def _pool_kernel(fn, in_avals, shape, dt):
    rows, nd = shape[0], len(shape)
    cut = tuple(len(a.shape) == nd and a.shape[0] == rows for a in in_avals)   # (operands spanning axis 0)
    k = THREADS
    step = -(-rows // k)
    bounds = [(i, min(i + step, rows)) for i in range(0, rows, step)]

    def kernel(*xs):
        out = np.empty(shape, dt)
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
    kernel.blocks = len(bounds)
    kernel.native = False
    return kernel
