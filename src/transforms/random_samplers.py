"""Distributions on raw values: the staged bodies behind `transforms.random`'s samplers.

Each `_*_body(key, *raw, **static)` takes a raw (2,) uint32 key and raw operands, and returns
raw values; `transforms.random` checks the user's arguments, runs one body as one staged call
(`jaxpr_transforms.staged_call`) and boxes the result. The bodies are built only from primitives
(elementwise, shape, sort, cumsum, gather, argmax), so a sampler traces, jits, vmaps and
differentiates (with respect to its float operands) like any primitive composition.

How each distribution is made (why these constructions: see `transforms.random`'s docstring):
uniform rescales [0, 1) and clamps below maxval; normal is Box-Muller on pairs; gumbel is
-log(-log(u)); bernoulli is u < p; randint reduces a 64-bit word modulo the span; permutation
is a stable sort of 64-bit random keys; choice is randint, an inverse-CDF search, a permutation
prefix or Gumbel top-k; categorical is Gumbel-max.
"""
from __future__ import annotations

import math

import numpy as np

from .primitives import elementwise as E
from .primitives import indexing as I
from .primitives import reductions as R
from .primitives import sorting as T
from .primitives import structural as S
from .random_bits import I64, U64, bits64, c, const, size, to_u64, uniform01

INDEX = I64                                  # the dtype of every index result


# ---------------------------------------------------------------- raw helpers (indices)

def argsort(v):
    """Stable ascending argsort of a raw 1-D value (NaNs last), as int64 indices."""
    n = S.shape_of(v)[0]
    iota = S.iota(INDEX, (n,), 0)
    if n <= 1:
        return iota
    return T.sort([v, iota], 0, num_keys=1)[1]


def descending(v):
    """A key whose ascending order is v's descending order (floats: -v, NaNs stay last)."""
    return E.neg(v) if S.dtype_of(v).kind == "f" else E.bind(E.not_p, v)


def take(x, idx, axis):
    """x's entries at the 1-D in-range integer indices `idx` along `axis` (x[(:,)*axis + (idx,)])."""
    xs = tuple(S.shape_of(x))
    nd = len(xs)
    m = S.shape_of(idx)[0]
    if m == 0 or 0 in xs:
        return S.full(xs[:axis] + (m,) + xs[axis + 1:], 0, S.dtype_of(x))
    offset = tuple(range(axis)) + tuple(range(axis + 1, nd))
    dn = I.GatherDims(offset, (axis,), (axis,))
    sizes = xs[:axis] + (1,) + xs[axis + 1:]
    return I.gather(x, S.reshape(idx, (m, 1)), dn, sizes)


def searchsorted_right(a, v):
    """For sorted 1-D `a` (n > 0) and 1-D `v` (m > 0): the number of entries of `a` <= each v[j]
    (NumPy's side='right'; floats in NumPy's order, NaNs last), by a binary search per entry of v:
    n.bit_length() rounds of one gather of m entries of `a`, O(m log n) work where a sort of a ++ v
    would be O((n + m) log(n + m))."""
    n, m = S.shape_of(a)[0], S.shape_of(v)[0]
    lo, hi = S.full((m,), 0, INDEX), S.full((m,), n, INDEX)      # the answer lies in [lo, hi]
    v_nan = E.bind(E.ne_p, v, v) if S.dtype_of(v).kind == "f" else None
    for _ in range(n.bit_length()):
        mid = E.bind(E.shift_right_logical_p, E.add(lo, hi), c(lo, 1))
        am = take(a, E.bind(E.min_p, mid, c(mid, n - 1)), 0)
        le = E.bind(E.le_p, am, v) if v_nan is None else E.bind(E.or_p, E.bind(E.le_p, am, v), v_nan)
        open_ = E.bind(E.lt_p, lo, hi)
        go = E.bind(E.and_p, open_, le)
        lo, hi = (E.select_n(go, lo, E.add(mid, c(mid, 1))),
                  E.select_n(E.bind(E.and_p, open_, E.bind(E.not_p, le)), hi, mid))
    return lo


def last(x):
    """The last entry of a raw 1-D value, as a 0-d value."""
    n = S.shape_of(x)[0]
    return S.reshape(S.slice_(x, (n - 1,), (n,)), ())


# ------------------------------------------------------------------------- distributions

def _uniform_body(k, lo, hi, *, shape, dtype):
    lo, hi = S.broadcast_to_shape(lo, shape), S.broadcast_to_shape(hi, shape)
    u = uniform01(k, shape, dtype)
    out = E.add(E.mul(u, E.sub(hi, lo)), lo)
    # rounding of lo + u * (hi - lo) can reach hi; keep the interval half-open
    return E.bind(E.min_p, E.bind(E.max_p, out, lo), E.bind(E.nextafter_p, hi, lo))


def _normal_body(k, *, shape, dtype):
    n = size(shape)
    if n == 0:
        return S.full(shape, 0, dtype)
    m = (n + 1) // 2
    u = uniform01(k, (2, m), dtype)
    u1 = S.reshape(S.slice_(u, (0, 0), (1, m)), (m,))
    u2 = S.reshape(S.slice_(u, (1, 0), (2, m)), (m,))
    r = E.bind(E.sqrt_p, E.mul(c(u1, -2.0), E.bind(E.log1p_p, E.neg(u1))))   # sqrt(-2 log(1 - u1)), 1-u1 in (0, 1]
    theta = E.mul(u2, c(u2, 2 * math.pi))
    z = S.concatenate([E.mul(r, E.bind(E.cos_p, theta)), E.mul(r, E.bind(E.sin_p, theta))], 0)
    if 2 * m != n:
        z = S.slice_(z, (0,), (n,))
    return S.reshape(z, shape)


def _gumbel_body(k, *, shape, dtype):
    tiny = float(np.finfo(dtype).tiny)
    u = uniform01(k, shape, dtype)
    u = E.bind(E.max_p, u, c(u, tiny))                  # u in (0, 1): -log(u) > 0
    return E.neg(E.bind(E.log_p, E.neg(E.bind(E.log_p, u))))


def _bernoulli_body(k, p, *, shape):
    return E.bind(E.lt_p, uniform01(k, shape, S.dtype_of(p)), S.broadcast_to_shape(p, shape))


def _randint_const_body(k, lo64, span, *, shape, dtype, full_range):
    r = bits64(k, size(shape))
    if not full_range:
        r = E.bind(E.rem_p, r, span)
    return S.reshape(E.convert_element_type(E.add(r, lo64), dtype), shape)


def _randint_body(k, lo, hi, *, shape, dtype):
    lo, hi = S.broadcast_to_shape(lo, shape), S.broadcast_to_shape(hi, shape)
    lo64, hi64 = to_u64(lo), to_u64(hi)
    ok = E.bind(E.gt_p, hi, lo)
    span = E.select_n(ok, c(lo64, 1), E.sub(hi64, lo64))
    r = E.bind(E.rem_p, S.reshape(bits64(k, size(shape)), shape), span)
    return E.select_n(ok, lo, E.convert_element_type(E.add(lo64, r), dtype))


# ------------------------------------------------------- permutation, choice, categorical

def _perm(k, n):
    """A random permutation of range(n): the stable argsort of n random 64-bit sort keys."""
    if n <= 1:
        return S.iota(INDEX, (n,), 0)
    return argsort(bits64(k, n))


def _permutation_body(k, *arr, n, axis):
    perm = _perm(k, n)
    return take(arr[0], perm, axis) if arr else perm


def _choice_idx(k, p, n, shape, replace):
    """The sampled indices (int64, of `shape`) of a choice from n entries."""
    m = size(shape)
    if replace and p is None:
        return _randint_const_body(k, const(0, U64), const(n, U64), shape=shape, dtype=INDEX, full_range=False)
    if replace:
        if m == 0:
            return S.full(shape, 0, INDEX)
        dt = S.dtype_of(p)
        cdf = T.cumsum(p, 0)
        u = _uniform_body(k, const(0.0, dt), last(cdf), shape=(m,), dtype=dt)
        idx = searchsorted_right(cdf, u)
        idx = E.bind(E.min_p, E.bind(E.max_p, idx, c(idx, 0)), c(idx, n - 1))
        return S.reshape(idx, shape)
    if p is None:
        return S.reshape(S.slice_(_perm(k, n), (0,), (m,)), shape)
    g = E.add(_gumbel_body(k, shape=(n,), dtype=S.dtype_of(p)), E.bind(E.log_p, p))
    return S.reshape(S.slice_(argsort(descending(g)), (0,), (m,)), shape)


def _choice_body(k, *ops, n, shape, replace, axis, has_arr, has_p):
    arr = ops[0] if has_arr else None
    p = ops[-1] if has_p else None
    idx = _choice_idx(k, p, n, shape, replace)
    if arr is None:
        return idx
    xs = tuple(S.shape_of(arr))
    out = take(arr, S.reshape(idx, (size(shape),)), axis)
    return S.reshape(out, xs[:axis] + tuple(shape) + xs[axis + 1:])


def _categorical_body(k, logits, *, axis, shape):
    lg = S.moveaxis(logits, axis, len(S.shape_of(logits)) - 1)
    n = S.shape_of(lg)[-1]
    full = tuple(shape) + (n,)
    g = E.add(_gumbel_body(k, shape=full, dtype=S.dtype_of(logits)), S.broadcast_to_shape(lg, full))
    return E.bind(R.argmax_p, g, axes=(len(full) - 1,), index_dtype=INDEX)
