"""Distributions on raw values: the staged bodies behind `transforms.random`'s samplers.

Each `_*_body(key, *raw, **static)` takes a raw (2,) uint32 key and raw operands, and returns
raw values; `transforms.random` checks the user's arguments, runs one body as one staged call
(`jaxpr_transforms.staged_call`) and boxes the result. The bodies are built only from primitives
(elementwise, shape, sort, cumsum, gather, argmax), so a sampler traces, jits, vmaps and
differentiates (with respect to its float operands) like any primitive composition.

How each distribution is made (why these constructions: see `transforms.random`'s docstring):
uniform rescales [0, 1) and clamps below maxval; normal is the normal quantile of uniform's grid
midpoints (a piecewise polynomial, _NORMAL_Q); gumbel is
-log(-log(u)); bernoulli is u < p; randint reduces a 64-bit word modulo the span; permutation
is a stable sort of 64-bit random keys; choice is randint, an inverse-CDF search, a permutation
prefix or Gumbel top-k; categorical is Gumbel-max.
"""
from __future__ import annotations


import numpy as np

from .control_flow_while import while_raw
from .primitives import bits as B
from .primitives import elementwise as E
from .primitives import indexing as I
from .primitives.raw_ops import log_pos
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


def _order_key(x):
    """Raw float x as the signed integers of its width whose order is NumPy's sort order (-0.0 = 0.0, NaNs equal
    and after +inf): -0.0 and every NaN made one value, then the bits of negatives flipped below the positives."""
    it = np.dtype(f"int{8 * S.dtype_of(x).itemsize}")
    x = E.select_n(E.bind(E.eq_p, x, c(x, 0.0)), x, c(x, 0.0))
    x = E.select_n(E.bind(E.ne_p, x, x), x, c(x, np.nan))
    b = B.bitcast_convert_type(x, it)
    return E.select_n(E.bind(E.lt_p, b, c(b, 0)), b, E.bind(E.xor_p, b, c(b, np.iinfo(it).max)))


def searchsorted_right(a, v):
    """For sorted 1-D `a` (n > 0) and 1-D `v` (m > 0): the number of entries of `a` <= each v[j]
    (NumPy's side='right'; floats in NumPy's order, NaNs last), by a binary search per entry of v:
    n.bit_length() rounds of one gather of m entries of `a`, O(m log n) work where a sort of a ++ v
    would be O((n + m) log(n + m)). The rounds are a `while` loop, not unrolled: unrolled, XLA fused v's
    producer (choice's threefry uniforms) into every round's gather and computed it n.bit_length() times.
    Floats compare as _order_key integers, v's made once before the loop: v then has that one consumer (a NaN
    mask of v beside v itself was a second fusion computing v's producer again)."""
    n, m = S.shape_of(a)[0], S.shape_of(v)[0]
    key = _order_key if S.dtype_of(v).kind == "f" else (lambda x: x)

    def cond(i, lo, hi, kv):
        return E.bind(E.lt_p, i, c(i, n.bit_length()))

    def body(i, lo, hi, kv):
        mid = E.bind(E.shift_right_logical_p, E.add(lo, hi), c(lo, 1))
        le = E.bind(E.le_p, key(take(a, E.bind(E.min_p, mid, c(mid, n - 1)), 0)), kv)
        open_ = E.bind(E.lt_p, lo, hi)
        go = E.bind(E.and_p, open_, le)
        return (E.add(i, c(i, 1)), E.select_n(go, lo, E.add(mid, c(mid, 1))),
                E.select_n(E.bind(E.and_p, open_, E.bind(E.not_p, le)), hi, mid), kv)
    # the answer lies in [lo, hi]
    return while_raw(cond, body, [const(0, INDEX), S.full((m,), 0, INDEX), S.full((m,), n, INDEX), key(v)])[1]


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


# The standard normal quantile of u in (0, 1) is z = q(w) x with x = 2u - 1 and w = -log(1 - x**2) =
# -log(4u(1 - u)), where q(w) = sqrt(2) erfinv(x) / x is smooth and positive. q is one polynomial per piece of w
# (the pieces of Giles, "Approximating the erfinv function", GPU Computing Gems, 2011): (variable "w" or
# "s" = sqrt(w), the piece's upper end in w, the centre t is measured from, coefficients highest degree first).
# They are Chebyshev interpolants of q on each piece computed in 40-digit arithmetic (mpmath) and rounded to the
# dtype; evaluated by Horner in that dtype they are within 2 ulp of q (tests/transforms/test_random_samplers.py
# checks the quantile against scipy's ndtri). The pieces reach w = 36 (float64) and w = 16 (float32), past the w
# of the uniform grid's end points (35.4 and 15.3).
_NORMAL_Q = {
    np.dtype(np.float64): (
        ("w", 6.25, 3.125, (
            4.583048198098026e-21, -1.5747038487797289e-21, -4.949188055590375e-19, 1.626377065902945e-18,
            2.2025414916964945e-17, -1.8408716141787847e-16, -5.69675689717853e-17, 9.328729249848027e-15,
            -5.6586046712459645e-14, -1.148115059715793e-13, 3.720065404608353e-12, -1.8352087508984784e-11,
            -7.65695838611443e-11, 1.4866469703719082e-09, -5.816180709117321e-09, -4.111172885960201e-08,
            5.988894869140176e-07, -1.931065040514895e-06, -1.9632852864329775e-05, 0.0002640820495474566,
            -0.001047511569485382, -0.008532899177268757, 0.3396349587011389, 2.338620710026593)),
        ("s", 16.0, 3.25, (
            -5.417908649728695e-10, 1.282967553472886e-07, -3.7987156169677647e-07, 2.5914049149097858e-08,
            2.1154178620497004e-06, -5.676577434959346e-06, 4.139929483756993e-06, 1.7642799936726544e-05,
            -6.691991993623399e-05, 9.656934757201043e-05, 3.398547982401634e-05, -0.0005020988739988229,
            0.0013481547306223936, -0.0023875821885560207, 0.0035234312043213086, -0.005305009946686139,
            0.007595620203989041, 1.421650865810257, 4.36127285516533)),
        ("s", 36.0, 5.0, (
            5.823867873681237e-11, -3.137354036794782e-11, -6.085770096699391e-10, 2.104376414571971e-09,
            -4.9272666542060635e-09, 1.081521338176457e-08, -2.1556996554157728e-08, 4.118348937605052e-08,
            -9.554790711616536e-08, 3.2387945325346316e-07, -1.404352908467686e-06, 6.4008146111948594e-06,
            -2.783422748688941e-05, 0.00010747355201258312, -0.00030409851174872775, -0.00019617874138085043,
            1.428780619483282, 6.858803409112111))),
    np.dtype(np.float32): (
        ("w", 5.0, 2.5, (
            3.196968023644331e-08, 4.839788516619592e-07, -4.885795988229802e-06, -6.19474576524226e-06,
            0.0003087411751039326, -0.0017730827676132321, -0.005907659884542227, 0.34880271553993225,
            2.1233134269714355)),
        ("s", 16.0, 3.0625, (
            -0.0003498447185847908, 5.854584742337465e-05, 0.002022376051172614, -0.004539347719401121,
            0.006576020270586014, -0.008921665139496326, 0.01150850486010313, 1.4181290864944458,
            4.095020294189453))),
}


def normal_quantile(u):
    """The standard normal quantile Phi^-1(u) of raw float u in (0, 1) (float32 or float64), by _NORMAL_Q:
    all elementwise, so it vectorises (XLA's CPU sin and cos, which Box-Muller needs, do not)."""
    one = c(u, 1.0)
    x = E.sub(E.add(u, u), one)
    w = E.neg(log_pos(E.mul(E.mul(u, E.sub(one, u)), c(u, 4.0))))
    s = E.bind(E.sqrt_p, w)
    q = None
    for var, upper, centre, coefs in reversed(_NORMAL_Q[S.dtype_of(u)]):     # the last piece first
        t = E.sub(w if var == "w" else s, c(u, centre))
        p = c(u, coefs[0])
        for co in coefs[1:]:
            p = E.add(E.mul(p, t), c(u, co))
        q = p if q is None else E.select_n(E.bind(E.lt_p, w, c(w, upper)), q, p)
    return E.mul(q, x)


def _normal_body(k, *, shape, dtype):
    # the quantile of the midpoints (2j + 1) 2**-(p+1) of uniform's grid (p = 23 or 52): in (0, 1), symmetric
    # about 1/2 (so the samples are exactly symmetric), exact in the dtype
    u = uniform01(k, shape, dtype)
    return normal_quantile(E.add(u, c(u, 2.0 ** -(np.finfo(dtype).nmant + 1))))


def _gumbel_body(k, *, shape, dtype):
    tiny = float(np.finfo(dtype).tiny)
    u = uniform01(k, shape, dtype)
    u = E.bind(E.max_p, u, c(u, tiny))                  # u in (0, 1): -log(u) > 0
    return E.neg(log_pos(E.neg(log_pos(u))))


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
    return _first_max(g)


def _first_max(g):
    """argmax over the last axis (first maximum, first NaN) as max, then the least index holding it: two plain
    reductions that XLA vectorises, where argmax's (value, index) reducer runs element by element on CPU with
    g's generator fused into it."""
    ax = len(S.shape_of(g)) - 1
    m = S.broadcast_in_dim(E.bind(R.reduce_max_p, g, axes=(ax,)), S.shape_of(g), tuple(range(ax)))
    nan_g, nan_m = E.bind(E.ne_p, g, g), E.bind(E.ne_p, m, m)
    hit = E.bind(E.or_p, E.bind(E.eq_p, g, m), E.bind(E.and_p, nan_g, nan_m))
    n = S.shape_of(g)[ax]
    idx = S.iota(INDEX, S.shape_of(g), ax)
    return E.bind(R.reduce_min_p, E.select_n(hit, S.full(S.shape_of(g), n, INDEX), idx), axes=(ax,))
