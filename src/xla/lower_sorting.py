"""Lowering of sort (stablehlo.sort with a NaN-last total-order comparator) and of the
cumulative scans (a Hillis-Steele scan: log2(n) rounds of shift-by-padding + combine)."""
from __future__ import annotations

import numpy as np

from transforms.primitives import sorting as T

from ._jaxlib import hlo
from .host import host_kernels
from .lowering import constant, fill_region, lowering_rules, tensor_type, ttype


def _cmp(x, y, direction, dtype):
    kind = np.dtype(dtype).kind
    ctype = "FLOAT" if kind in "fc" else "SIGNED" if kind == "i" else "UNSIGNED"
    return hlo.CompareOp(x, y, hlo.ComparisonDirectionAttr.get(direction),
                         compare_type=hlo.ComparisonTypeAttr.get(ctype)).result


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


def _cum(kind, op, bool_op):
    def rule(c, x, *, axis, reverse):
        a = c.avals_in[0]
        n = a.shape[axis]
        init = constant(T.identity_of(kind, a.dtype), a.dtype)
        combine = bool_op if a.dtype == np.bool_ else op
        k = 1
        while k < n:
            lo, hi = [0] * a.ndim, [0] * a.ndim
            lo[axis], hi[axis] = (-k, k) if reverse else (k, -k)
            shifted = hlo.PadOp(x, init, lo, hi, [0] * a.ndim).result
            x = combine(shifted, x).result
            k *= 2
        return x
    return rule


lowering_rules[T.cumsum_p] = _cum("sum", hlo.AddOp, hlo.OrOp)
lowering_rules[T.cumprod_p] = _cum("prod", hlo.MulOp, hlo.AndOp)
lowering_rules[T.cummax_p] = _cum("max", hlo.MaxOp, hlo.OrOp)
lowering_rules[T.cummin_p] = _cum("min", hlo.MinOp, hlo.AndOp)


# ------------------------------------------------------------------ host kernels (eager on the CPU)
# NumPy sorts NaN last (after +inf) and its stable sorts keep -0.0/0.0 in input order: the
# lowering's total order. Complex keys are left to XLA.

def _h_sort(*xs, dimension, is_stable, num_keys):
    keys = xs[:num_keys]
    if any(k.dtype.kind == "c" for k in keys):
        return NotImplemented
    if len(xs) == 1:
        return [np.sort(xs[0], axis=dimension, kind="stable")]
    if num_keys == 1:
        perm = np.argsort(keys[0], axis=dimension, kind="stable")
    else:
        ks = [np.moveaxis(k, dimension, -1) for k in reversed(keys)]
        perm = np.moveaxis(np.lexsort(ks, axis=-1), -1, dimension)
    return [np.take_along_axis(x, perm, axis=dimension) for x in xs]


def _h_cum(kind, fn, bool_fn):
    def kernel(x, *, axis, reverse):
        if x.dtype.kind == "c" and kind in ("max", "min"):
            return NotImplemented
        if x.shape[axis] == 0:
            return x
        f = bool_fn if x.dtype == np.bool_ else fn
        if reverse:
            return np.flip(f(np.flip(x, axis), axis), axis)
        return f(x, axis)
    return kernel


host_kernels[T.sort_p] = _h_sort
host_kernels[T.cumsum_p] = _h_cum("sum", lambda x, a: np.cumsum(x, axis=a, dtype=x.dtype),
                                  lambda x, a: np.logical_or.accumulate(x, axis=a))
host_kernels[T.cumprod_p] = _h_cum("prod", lambda x, a: np.cumprod(x, axis=a, dtype=x.dtype),
                                   lambda x, a: np.logical_and.accumulate(x, axis=a))
host_kernels[T.cummax_p] = _h_cum("max", lambda x, a: np.maximum.accumulate(x, axis=a),
                                  lambda x, a: np.logical_or.accumulate(x, axis=a))
host_kernels[T.cummin_p] = _h_cum("min", lambda x, a: np.minimum.accumulate(x, axis=a),
                                  lambda x, a: np.logical_and.accumulate(x, axis=a))
