"""Lowering of sort (stablehlo.sort with a NaN-last total-order comparator) and of the
cumulative scans: blockwise (a reduce_window per level) for floating and complex sums and products
(float16/bfloat16/float32/complex64 in float64/complex128) and for every integer and bool scan; a
Hillis-Steele scan (log2(n) rounds of shift-by-padding + combine) for floating max and min."""
from __future__ import annotations

import numpy as np

from transforms.primitives import sorting as T

from ._jaxlib import hlo, ir
from .host import host_kernels
from .lower_elementwise import _cmp, _flushed
from .lower_structural import WIDE_ACCUMULATOR
from .lowering import constant, fill_region, lowering_rules, tensor_type, ttype


def _lt_eq(a, b, dtype):
    """(a < b, a == b) in the total order: numbers ascending, then all NaNs (equal to each other)."""
    if np.dtype(dtype).kind == "f":
        a_nan, b_nan = _cmp(a, a, "NE", dtype), _cmp(b, b, "NE", dtype)
        lt = hlo.OrOp(_cmp(a, b, "LT", dtype), hlo.AndOp(b_nan, hlo.NotOp(a_nan).result).result).result
        eq = hlo.OrOp(_cmp(a, b, "EQ", dtype), hlo.AndOp(a_nan, b_nan).result).result
        return lt, eq
    if np.dtype(dtype) == np.bool_:
        return hlo.AndOp(hlo.NotOp(a).result, b).result, hlo.NotOp(hlo.XorOp(a, b).result).result
    return _cmp(a, b, "LT", dtype), _cmp(a, b, "EQ", dtype)


def _sort(c, *xs, dimension, is_stable, num_keys):
    avals = c.avals_in
    op = hlo.SortOp([ttype(a) for a in c.avals_out], list(xs), dimension=dimension, is_stable=is_stable)
    types = []
    for a in avals:
        types += [tensor_type((), a.dtype)] * 2

    def comparator(*args):
        result = None
        for k in reversed(range(num_keys)):   # lexicographic: key0 < or (key0 == and (key1 < or ...))
            lt, eq = _lt_eq(args[2 * k], args[2 * k + 1], avals[k].dtype)
            result = lt if result is None else hlo.OrOp(lt, hlo.AndOp(eq, result).result).result
        return [result]
    fill_region(op.comparator, types, comparator)
    return list(op.results)


lowering_rules[T.sort_p] = _sort


def _shift_combine(x, init, axis, k, reverse, combine):
    """One Hillis-Steele round: x combined with itself shifted k places along axis (init shifted in)."""
    nd = len(ir.RankedTensorType(x.type).shape)
    lo, hi = [0] * nd, [0] * nd
    lo[axis], hi[axis] = (-k, k) if reverse else (k, -k)
    return combine(hlo.PadOp(x, init, lo, hi, [0] * nd).result, x).result


def _hillis_steele(x, n, axis, reverse, init, combine):
    k = 1
    while k < n:
        x = _shift_combine(x, init, axis, k, reverse, combine)
        k *= 2
    return x


SCAN_BLOCK = 16


def _window_scan(x, shape, dtype, axis, reverse, init, combine):
    """Inclusive scan along a short axis as one reduce_window: window the axis's length, padded before (after,
    reversed) with the identity, so element i combines elements 0..i (i..n-1) in order."""
    n, nd = shape[axis], len(shape)
    window, pad = [1] * nd, np.zeros((nd, 2), np.int64)
    window[axis], pad[axis, 1 if reverse else 0] = n, n - 1
    r = hlo.ReduceWindowOp([tensor_type(shape, dtype)], [x], [init], window,
                           padding=ir.DenseIntElementsAttr.get(pad))
    scalar = tensor_type((), dtype)
    fill_region(r.body, [scalar, scalar], lambda p, q: [combine(p, q).result])
    return r.result


def _blocked_scan(x, shape, dtype, axis, reverse, init, combine):
    """Inclusive scan along axis in blocks of SCAN_BLOCK: a reduce_window scan inside each block, the blocks'
    totals scanned the same way (recursively) and shifted one block, then combined into every element of the
    next blocks. Each output combines at most SCAN_BLOCK terms per level and log_SCAN_BLOCK(n) levels, so its
    rounding error grows like log(n); in float64 it stays far below float32's half ulp."""
    n, B, nd = shape[axis], SCAN_BLOCK, len(shape)
    if n <= 2 * B:
        return _window_scan(x, shape, dtype, axis, reverse, init, combine)
    m = -(-n // B)
    if m * B != n:   # pad with the identity (at the end; at the start for a reverse scan)
        lo, hi = [0] * nd, [0] * nd
        (lo if reverse else hi)[axis] = m * B - n
        x = hlo.PadOp(x, init, lo, hi, [0] * nd).result
    blocks = shape[:axis] + [m, B] + shape[axis + 1:]
    y = hlo.ReshapeOp(tensor_type(blocks, dtype), x).result
    y = _window_scan(y, blocks, dtype, axis + 1, reverse, init, combine)
    start, limit = [0] * (nd + 1), list(blocks)
    start[axis + 1] = 0 if reverse else B - 1
    limit[axis + 1] = start[axis + 1] + 1
    totals_shape = shape[:axis] + [m] + shape[axis + 1:]
    totals = hlo.ReshapeOp(tensor_type(totals_shape, dtype),
                           hlo.SliceOp(y, start, limit, [1] * (nd + 1)).result).result
    totals = _blocked_scan(totals, totals_shape, dtype, axis, reverse, init, combine)
    lo, hi = [0] * nd, [0] * nd   # exclusive: each block gets the blocks before it (after it, reversed)
    lo[axis], hi[axis] = (-1, 1) if reverse else (1, -1)
    before = hlo.PadOp(totals, init, lo, hi, [0] * nd).result
    dims = [d for d in range(nd + 1) if d != axis + 1]
    y = combine(hlo.BroadcastInDimOp(tensor_type(blocks, dtype), before, broadcast_dimensions=dims).result, y).result
    y = hlo.ReshapeOp(tensor_type(shape[:axis] + [m * B] + shape[axis + 1:], dtype), y).result
    if m * B != n:
        start, limit = [0] * nd, list(shape)
        start[axis] = m * B - n if reverse else 0
        limit[axis] = start[axis] + n
        y = hlo.SliceOp(y, start, limit, [1] * nd).result
    return y


# Sums and products of the narrow floating dtypes scan in float64 (complex64 in complex128: WIDE_ACCUMULATOR)
# and round once at the end: the float32 Hillis-Steele scan was off by ~1.5e-7 of the largest prefix sum at
# 2^20 elements (each output a tree of float32 roundings) and took ~100 ms there (XLA fuses its log2(n) shifted
# copies badly); the blocked float64 scan is correctly rounded in practice and ~4x faster.


def _scan_identity(kind, dt):
    """The scan's padding: for a floating sum -0.0, x + -0.0 being x for every x (+0.0 + x turns -0.0 into +0.0),
    so each output is the running sum from the first element, NumPy's cumsum (cumulative_sum([-0.0, -0.0]) was
    [0.0, 0.0] under jit); else the identity."""
    if kind == "sum" and dt.kind in "fc":
        return constant(np.array(complex(-0.0, -0.0) if dt.kind == "c" else -0.0, dt), dt)
    return constant(T.identity_of(kind, dt), dt)


def _cum(kind, op, bool_op):
    widen = kind in ("sum", "prod")

    def rule(c, x, *, axis, reverse):
        a = c.avals_in[0]
        # float64/complex128 sums and products: the blocked scan in their own dtype (Hillis-Steele was ~8x slower:
        # cumulative_sum of 1e5 float64 26 ms, blocked 3 ms)
        acc = WIDE_ACCUMULATOR.get(a.dtype.name, a.dtype if a.dtype.kind in "fc" else None) if widen else None
        if a.dtype.kind in "biu":   # (integers and bools: every grouping gives the same bits; Hillis-Steele's
            acc = a.dtype           # log2(n) shifted copies were 3.5x slower: int64 cumsum of 1e5 3.2 -> 0.9 ms)
        combine = bool_op if a.dtype == np.bool_ else op
        if widen and a.dtype.kind in "fc" and a.shape[axis] == 1:
            return _flushed(x, a)   # (x + -0.0, x * 1: x with a subnormal a zero of its sign, as the host kernel)
        if acc is None or a.shape[axis] <= 1:
            return _hillis_steele(x, a.shape[axis], axis, reverse, _scan_identity(kind, np.dtype(a.dtype)), combine)
        dt = np.dtype(acc)
        if dt == a.dtype:
            return _blocked_scan(x, list(a.shape), dt, axis, reverse, _scan_identity(kind, dt), combine)
        x = hlo.ConvertOp(tensor_type(a.shape, dt), x).result
        y = _blocked_scan(x, list(a.shape), dt, axis, reverse, _scan_identity(kind, dt), combine)
        return hlo.ConvertOp(ttype(a), y).result
    return rule


lowering_rules[T.cumsum_p] = _cum("sum", hlo.AddOp, hlo.OrOp)
lowering_rules[T.cumprod_p] = _cum("prod", hlo.MulOp, hlo.AndOp)
lowering_rules[T.cummax_p] = _cum("max", hlo.MaxOp, hlo.OrOp)
lowering_rules[T.cummin_p] = _cum("min", hlo.MinOp, hlo.AndOp)


# ------------------------------------------------------------------ host kernels (eager on the CPU)
# NumPy sorts NaN last (after +inf) and its stable sorts keep -0.0/0.0 in input order: the
# lowering's total order. Complex keys are left to XLA.

# Up to this many elements NumPy's stable sort (a timsort) is as quick as its fast sort (a SIMD quicksort) plus the
# fix-ups below. Sorted values: the fix-ups are a few passes over the operand (~3.5 us at a few hundred elements), while
# timsort costs up to ~10x the fast sort on rows from ~8 long (300x300 by rows: 2.4 ms stable, 0.26 ms fast with the
# fix-ups), so an operand of more elements takes the fast sort where its rows are longer than 4 (rows of 4 or fewer
# sort as fast stably: 20000x4, 516 us against 569 us with the fix-ups; rows of 5-12 in operands of a few thousand
# elements lose ~3-7 us, 3000x8 gains 175 -> 64 us). argsort: its fix-up (a second sort, of int64 keys) costs ~15-25 us
# more a call, so only rows longer than this take it.
STABLE_SORT_MAX = 1024


def _h_sort(*xs, dimension, is_stable, num_keys):
    if any(k.dtype.kind == "c" for k in xs[:num_keys]):
        return NotImplemented
    x = xs[0]
    if len(xs) == 1 and x.dtype.kind in "biuf":
        # NumPy's fastest sort, then bit for bit a stable one (NumPy's stable sort, a timsort, is ~10x slower on 1M
        # floats): values comparing equal have equal bits but for the zeros (in the kernels' DAZ mode with the
        # subnormals) and the NaNs, whose two blocks then take their elements in input order
        fix = x.dtype.kind == "f" and x.size > STABLE_SORT_MAX and x.shape[dimension] > 4
        out = np.sort(x, axis=dimension, kind=None if fix or x.dtype.kind != "f" else "stable")
        if fix:
            xm, om = x.swapaxes(dimension, -1), out.swapaxes(dimension, -1)   # (rows in the same order)
            for same in (lambda v: v == 0, np.isnan):
                m = same(om)
                if np.count_nonzero(m):   # (ndarray.any's Python wrapper: ~1.5 us)
                    om[m] = xm[same(xm)]
        return [out]
    if num_keys == 1 and x.dtype.kind in "biuf" and STABLE_SORT_MAX < x.shape[dimension] < 2 ** 31:   # (n * n fits)
        # a stable order (~2x faster than NumPy's stable argsort on 1M values): NumPy's fast argsort, then within
        # each run of tied keys (equal values; in DAZ mode the zeros with the subnormals; the NaNs) the indices in
        # order, by one fast sort of the distinct int64s run * n + index
        n, perm = x.shape[dimension], np.argsort(x, axis=dimension).swapaxes(dimension, -1)
        v = np.take_along_axis(x.swapaxes(dimension, -1), perm, -1)
        tie = v[..., 1:] == v[..., :-1]
        if x.dtype.kind == "f":
            tie |= np.isnan(v[..., 1:]) & np.isnan(v[..., :-1])
        run = np.zeros(v.shape, np.int64)
        np.cumsum(~tie, axis=-1, out=run[..., 1:])
        perm = (np.sort(run * n + perm, axis=-1) % n).swapaxes(dimension, -1)
    else:
        ks = [k.swapaxes(dimension, -1) for k in reversed(xs[:num_keys])]   # (lexsort: stable, one key included)
        perm = np.lexsort(ks, axis=-1).swapaxes(dimension, -1)
    if perm.ndim == 1:
        return [x[perm] for x in xs]   # (take_along_axis's index building costs ~3 us an operand)
    return [np.take_along_axis(x, perm, axis=dimension) for x in xs]


# cumsum/cumprod/cummax/cummin: the ufunc's accumulate in the operand's dtype (np.cumsum's own call). A floating
# sum or product then combines its first output with the scan's padding `pad` (-0.0, 1), as the lowering's scan
# does: accumulate copies the first element without arithmetic, so a subnormal stayed there
# (cumulative_sum([1e-310, 1.0]) was [1e-310, 1.0] eagerly, [0.0, 1.0] under jit; README: subnormals). A complex
# one part by part: (1+0j) * (inf+0j) would be inf+nanj, where the first output is NumPy's inf+0j.
def _h_cum(ufunc, bool_ufunc, pad=None):
    def kernel(x, *, axis, reverse):
        if x.dtype.kind == "c" and ufunc in (np.maximum, np.minimum):
            return NotImplemented
        f = (bool_ufunc if x.dtype == np.bool_ else ufunc).accumulate
        out = np.flip(f(np.flip(x, axis), axis, x.dtype), axis) if reverse else f(x, axis, x.dtype)
        if pad is not None and x.dtype.kind in "fc":
            at = (slice(None),) * axis + (slice(-1, None) if reverse else slice(0, 1),)   # (np.moveaxis: ~3 us)
            for v in (out.real, out.imag) if x.dtype.kind == "c" else (out,):
                first = v[at]
                ufunc(first, pad, out=first)
        return out
    return kernel


host_kernels[T.sort_p] = _h_sort
host_kernels[T.cumsum_p] = _h_cum(np.add, np.logical_or, -0.0)
host_kernels[T.cumprod_p] = _h_cum(np.multiply, np.logical_and, 1.0)
host_kernels[T.cummax_p] = _h_cum(np.maximum, np.logical_or)
host_kernels[T.cummin_p] = _h_cum(np.minimum, np.logical_and)
