"""Eager xp.mean / var / std of a small host-held operand: their host kernels called directly, the call
specialised once per signature (the backend's `eager_moment` hook).

Why: on small arrays these are the commonest composites of library code (scipy.stats, scikit-learn's
scalers and metrics), and there their cost is all overhead: two binds for a mean, or a staged host program
of seven steps, or one compiled executable (~4 us of execute alone), around 1-3 us of NumPy work. The
namespace's body (array_namespace/_statistical.py `_moment_raw`: a sum, a division by the count; for
var/std the deviations squared, summed and divided by count - correction; std's square root) is here
one closure per signature that calls the kernels its binds run -- reduce_sum's `np.add.reduce(x, axes,
dtype)` (xla/lower_structural.py) and the float ufuncs of subtract, multiply, divide and sqrt
(xla/lower_elementwise.py) -- on the same values in the same order: the same bits as the binds, the
staged op-by-op program and each other (tests/xla/test_host_moments.py), never a compile.

A small 2-d operand over one axis, or any over all axes, runs those steps as one call of the C extension
_small_moments (the kernels' NumPy loops in NumPy's order: the same bits, probed once per dtype and axis);
declined there (another layout), the NumPy calls run.

Only the common case is taken: float32/float64, strongly typed, non-empty, not 0-d, host-held (a value in a
device buffer, or donated to a jitted function, declines) and, for var/std, at most
VAR_MAX_ELEMENTS elements: above that the staged call's timed choice between op by op and one
compiled fused pass decides (XLA's pass wins from ~10^5 elements on). Anything declined takes the
namespace's planned paths as before.
"""
from __future__ import annotations

import math

import numpy as np

from . import host, host_eager, host_parallel, runtime
from .host import HostValue

try:
    from . import _small_moments as _small
except ImportError:   # (the optional extension was not built: the NumPy calls one by one)
    _small = None

_REAL = frozenset((np.dtype(np.float32), np.dtype(np.float64)))
# var/std: the largest operand run directly (measured, 2-core CPU: a 64x64 std is ~10 us of NumPy
# against ~40 us compiled; the staged choice still runs op by op above this, where overhead is noise)
VAR_MAX_ELEMENTS = 1 << 12

_reduce, _div, _sub, _mul, _sqrt = np.add.reduce, np.true_divide, np.subtract, np.multiply, np.sqrt
_asarray, _HV, _prod = np.asarray, HostValue, math.prod
_err_set, _err_reset, _QUIET = host.err_set, host.err_reset, host.QUIET


def _on():
    return host.MODE == "host" and runtime._kernels_on()


def make(aval, fname, axes, correction):
    """fn(v, keepdims) -> the eager result (None: declined, e.g. v not host-held), specialised to operands of
    `aval`, reduced over `axes` (sorted, unique, validated); None where this signature is not taken."""
    shape, dt, weak = aval
    if weak or dt not in _REAL or not shape or not _on():
        return None
    size = _prod(shape)
    # (mean: as far as eager work runs op by op, host_eager.BY_OP_MAX_ELEMENTS (4M): the namespace compiles above)
    if size == 0 or size > (host_eager.BY_OP_MAX_ELEMENTS if fname == "mean" else VAR_MAX_ELEMENTS):
        return None
    n = shape[axes[0]] if len(axes) == 1 else _prod([shape[a] for a in axes])
    count = dt.type(n)   # (the namespace's weak count, converted to x's dtype: the same rounding)
    out_aval = host.shared_aval(tuple([d for i, d in enumerate(shape) if i not in axes]), dt)
    kept = tuple([1 if i in axes else d for i, d in enumerate(shape)])
    kept_aval = host.shared_aval(kept, dt)
    full = not out_aval[0]   # (every axis reduced: NumPy gives scalars, boxed as 0-d arrays)
    var_like = fname != "mean"
    if var_like:
        denom = n - correction
        dcount = dt.type(denom if denom > 0 else float("nan"))
        leading = axes == tuple(range(len(axes)))   # (else the mean keeps its axes to broadcast, as the body)
        root = fname == "std"

    total = host_parallel.split_reduce(np.add, aval, axes)   # (large: over the cores, reduce_sum's kernel)
    if total is None:
        total = lambda x: _reduce(x, axes, dt)   # noqa: E731
    plan = _fused_plan(shape, dt, axes, fname, count, dcount if var_like else None)
    run_plan, empty, out_shape = _run_fused, np.empty, out_aval[0]

    def moment(v, keepdims):
        if v.__class__ is not _HV or v.is_deleted():
            return None
        x = v.np
        s = None
        if plan is not None:   # (small 2-d: the same steps in one C call)
            s = empty(out_shape, dt)
            if not run_plan(plan, x, s):
                s = None   # (x not C-contiguous: the NumPy calls)
        if s is None:
            tok = _err_set(_QUIET)
            try:
                s = _div(total(x), count)   # (the mean)
                if var_like:
                    d = _sub(x, s if leading else s.reshape(kept))
                    _mul(d, d, out=d)
                    s = _div(_reduce(d, axes, dt), dcount)
                    if root:
                        s = _sqrt(s)
            finally:
                _err_reset(tok)
        if keepdims:
            return _HV(s.reshape(kept), kept_aval)
        return _HV(_asarray(s) if full else s, out_aval)
    return moment


# Small 2-d moments over one axis run the steps above as one call of xla/_small_moments.c: NumPy's loops in NumPy's
# order (the same bits), ~0.5 us against ~3.4 us of seven NumPy calls for a 20x5 std. Whether this NumPy takes its
# reduction in the order that extension follows is probed once per dtype and axis (_FUSED_OK).
FUSED_MAX_ELEMENTS = VAR_MAX_ELEMENTS
_FUSED_OK: dict = {}
_run_fused = None if _small is None else _small.run


def _fused_plan(shape, dt, axes, fname, count, dcount):
    """The extension's plan for this signature, or None (not 2-d over one axis, a row or column of one, too
    large, an extension not built, or this NumPy's order not the extension's)."""
    size = _prod(shape)
    if _small is None or size > FUSED_MAX_ELEMENTS or size < 2:
        return None
    if len(axes) == len(shape):
        axis = 2   # (every axis: the array as one row)
    elif len(shape) == 2 and min(shape) >= 2:
        axis = axes[0]
    else:
        return None
    ok = _FUSED_OK.get((dt, axis))
    if ok is None:
        ok = _FUSED_OK[(dt, axis)] = _probe(dt, axis)
    return _make_plan(dt, axis, fname, count, dcount) if ok else None


def _make_plan(dt, axis, fname, count, dcount):
    loops = [host_parallel.native_loop(fn, [dt] * n, dt) for fn, n in
             ((np.add, 2), (np.subtract, 2), (np.multiply, 2), (np.true_divide, 2), (np.sqrt, 1))]
    start = host_parallel.sum_start(dt)
    if any(lp is None for lp in loops) or start is False:
        return None
    add, sub, mul, div, sqrt = loops
    var = dcount is not None
    return _small.plan(add, sub if var else None, mul if var else None, div, sqrt if fname == "std" else None,
                       memoryview(np.empty(0, dt)).format, dt.itemsize, axis, np.array(count, dt).tobytes(),
                       np.array(dcount, dt).tobytes() if var else None, start)


def _probe(dt, axis):
    """Whether the extension gives NumPy's bits for dt over `axis` (2: all axes): mean, var and std of a probe with
    a column and a row of -0.0 and values over six decades."""
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((37, 23)) * 10.0 ** rng.integers(-3, 3, (37, 23))).astype(dt)
    x[:, 3] = -0.0
    x[5] = -0.0
    x = np.ascontiguousarray(x.T) if axis == 1 else x
    axes = (0, 1) if axis == 2 else (axis,)
    n = x.size if axis == 2 else x.shape[axis]
    for fname, dcount in (("mean", None), ("var", dt.type(n)), ("std", dt.type(n - 1))):
        plan = _make_plan(dt, axis, fname, dt.type(n), dcount)
        got = np.empty(() if axis == 2 else x.shape[1 - axis], dt)
        if plan is None or not _small.run(plan, x, got):
            return False
        with np.errstate(all="ignore"):
            want = np.true_divide(np.add.reduce(x, axes, dt), dt.type(n))
            if dcount is not None:
                d = np.subtract(x, want if axis != 1 else want.reshape(-1, 1))
                np.multiply(d, d, out=d)
                want = np.true_divide(np.add.reduce(d, axes, dt), dcount)
                want = np.sqrt(want) if fname == "std" else want
        if got.tobytes() != want.tobytes():
            return False
    return True
