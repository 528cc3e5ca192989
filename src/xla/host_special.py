"""Host kernels of the special functions (xla/host.py's table): lgamma, digamma, erf, erfc, erfinv and CHLO's
Hurwitz zeta as NumPy code, and the host path of the composite special primitives.

Why: eager callers (scipy.special on this backend) come with ever-changing shapes, and each of these
primitives otherwise compiles one XLA executable per shape (20-400 ms). A kernel here costs microseconds.

Methods (classical, public): Lanczos' approximation (g = 7, nine terms) with the reflection formula for
lgamma; the upward recurrence to x >= 10 then the asymptotic (Bernoulli) series for digamma, reflected
for x < 0; erf's Taylor series below 1/2, and above it erfc = exp(-x^2) erfcx(x) with erfcx a polynomial
fit per interval (Chebyshev interpolation, tables derived with mpmath: host_special_tables.py) and
exp(-x^2) from x^2 split exactly in two; erfinv from Winitzki's closed-form guess polished by three
Halley steps on erf (on erfc in the tails, where 1 - |y| is exact); the Euler-Maclaurin sum for zeta.
Every kernel computes in float64 and rounds to the operand's dtype: XLA's float32 expansions are within a few
ulps of that, so host and jit agree to that (near the zeros of lgamma and digamma: a few ulps of 1, not of the
result). Special values are XLA's
(tests/xla/test_host_special.py compares with the lowering and with scipy): lgamma is +inf at the
poles and at +-inf; digamma is NaN at the poles (0 included) and at -inf; erfinv(+-1) = +-inf.

Composites (the `_impl_*` compositions the lowerings stage: zeta, polygamma, the incomplete gamma
family, ndtr, the Bessel functions, ...): `composite_kernel` evaluates the very jaxpr the lowering
inlines, equation by equation on host values (each equation then runs its own host kernel), so the
lowering and the host path agree by construction. It does so where host_eager's static rule says
"host" (all host kernels, operands not large); otherwise it declines (NotImplemented) and the
primitive's compiled impl runs.
"""
from __future__ import annotations

import math

import numpy as np

from .host_special_tables import _ERF_TAYLOR, _ERFCX

_FLOATS = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))


def _f64(x):
    if x.dtype not in _FLOATS:
        return None
    return x.astype(np.float64) if x.dtype != np.float64 else x


def _back(r, dt):
    return r.astype(dt) if r.dtype != dt else r


def _horner(x, coefs):
    if x.ndim == 0:
        r = np.float64(coefs[0])
        for c in coefs[1:]:
            r = r * x + c
        return r
    r = np.full(x.shape, coefs[0])
    for c in coefs[1:]:
        r *= x
        r += c
    return r


def _unary(fn):
    def kernel(x):
        v = _f64(x)
        if v is None:
            return NotImplemented
        return _back(np.asarray(fn(v), np.float64), x.dtype)
    kernel.__name__ = fn.__name__
    return kernel


# ------------------------------------------------------------------------------ erf, erfc
_LO = np.array([iv[0] for iv in _ERFCX[1:]])                     # interval boundaries above the first
_DEG = max(len(iv[5]) for iv in _ERFCX)
_COEF = np.array([(0.0,) * (_DEG - len(iv[5])) + tuple(iv[5]) for iv in _ERFCX]).T.copy()   # (degree, interval)
_CEN = np.array([iv[3] for iv in _ERFCX])
_HALF = np.array([iv[4] for iv in _ERFCX])
_IS_U = np.array([iv[2] == "u" for iv in _ERFCX])
_ERFC_ZERO = 27.3          # erfc(x) < the smallest subnormal double above this


def exp_neg_sq(a):
    """exp(-a^2) with a^2 = hi + lo exactly (Dekker's split): a few ulps, not a^2 ulps, for large a."""
    t = a * 134217729.0
    ah = t - (t - a)
    al = a - ah
    hi = a * a
    lo = ((ah * ah - hi) + 2.0 * ah * al) + al * al
    return np.exp(-hi) * np.exp(-lo)


_GATHER_MAX = 2048      # above: each interval's polynomial on its own elements (no per-step gathers)


def _erfcx_fit(a):
    """erfcx(a) for a in [1/2, 32] from the interval fits."""
    k = np.searchsorted(_LO, a, side="right")
    if a.size <= _GATHER_MAX:
        u = _IS_U[k]
        s = (np.where(u, 1.0 / a, a) - _CEN[k]) / _HALF[k]
        r = _COEF[0][k]
        for row in _COEF[1:]:
            r = r * s + row[k]
        return np.where(u, r / a, r)
    out = np.empty(a.shape)
    for i, (_, _, var, cen, half, coefs) in enumerate(_ERFCX):
        m = k == i
        if not m.any():
            continue
        v = a[m]
        s = ((1.0 / v if var == "u" else v) - cen) / half
        r = _horner(s, coefs)
        out[m] = r / v if var == "u" else r
    return out


def _erfc_big(a):
    """erfc(a) for a >= 1/2 (any other a gives a finite value to be discarded; NaN stays NaN)."""
    a = np.minimum(np.maximum(a, 0.5), 32.0)
    return np.where(a > _ERFC_ZERO, 0.0, exp_neg_sq(a) * _erfcx_fit(a))


def _erf_small(x):
    return x * _horner(x * x, _ERF_TAYLOR)


def erf64(x):
    a = np.abs(x)
    small = a < 0.5
    if small.all():
        return _erf_small(x)
    big = np.copysign(1.0 - _erfc_big(a), x)
    return np.where(small, _erf_small(x), big) if small.any() else big


def erfc64(x):
    a = np.abs(x)
    small = a < 0.5
    if small.all():
        return 1.0 - _erf_small(x)
    e = _erfc_big(a)
    big = np.where(x < 0, 2.0 - e, e)
    return np.where(small, 1.0 - _erf_small(x), big) if small.any() else big


# ----------------------------------------------------------------------------------- erfinv
_W_A = 0.147
_W_B = 2.0 / (math.pi * _W_A)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def erfinv64(y):
    a = np.abs(y)
    ok = a < 1.0
    a = np.where(ok, a, 0.0)
    lower = a < 0.5
    om = 1.0 - a                                     # exact for a >= 1/2
    ln = np.where(lower, np.log1p(-a * a), np.log(om * (1.0 + a)))
    b = _W_B + 0.5 * ln
    d = np.sqrt(b * b - ln / _W_A)
    x = np.sqrt(np.where(b > 0, (-ln / _W_A) / (d + b), d - b))    # Winitzki's guess, no cancellation
    upper = ~lower
    any_upper = upper.any()
    for _ in range(3):                               # Halley on erf(x) = a: cubic convergence from ~2e-3
        small = _erf_small(x)                        # (x < 0.48 wherever a < 1/2)
        f = small - a
        if any_upper:                                # erfc(x) - (1 - a), 1 - a exact: the tails keep their digits
            f = np.where(upper, om - np.where(x < 0.5, 1.0 - small, _erfc_big(x)), f)
        r = f / (_TWO_OVER_SQRT_PI * exp_neg_sq(x))
        x = x - r / (1.0 + x * r)
        if not (np.abs(r) > 1e-17 * x).any():       # converged (NaN-free: a was clamped to [0, 1))
            break
    out = np.where(ok, x, np.where(np.abs(y) == 1.0, np.inf, np.nan))
    return np.copysign(out, y)


# ------------------------------------------------------------------------------ lgamma, digamma
_LANCZOS_G = 7.0
_LANCZOS = (0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
            -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6,
            1.5056327351493116e-7)
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)
_LOG_PI = math.log(math.pi)


def _lgamma_lanczos(x):
    """log Gamma(x) for x >= 1/2: the series summed term by term, in one order at every size (an element's bits
    never depend on the array it is in; a stacked sum of the terms cost 8x the memory and more time from ~300
    elements)."""
    z = x - 1.0
    s = np.full(x.shape, _LANCZOS[0])
    for k in range(1, 9):
        s = s + _LANCZOS[k] / (z + k)
    t = z + (_LANCZOS_G + 0.5)
    return _HALF_LOG_2PI + (z + 0.5) * np.log(t) - t + np.log(s)


def _sinpi_abs(x):
    """|sin(pi x)| with x reduced exactly first (no rounding of pi x for large x)."""
    r = x - 2.0 * np.round(0.5 * x)                 # in [-1, 1], exact
    r = np.abs(r)
    r = np.where(r > 0.5, 1.0 - r, r)
    return np.sin(math.pi * r)


def lgamma64(x):
    if x.size and ((x >= 0.5) & (x < np.inf)).all():    # the usual case: no reflection, pole or infinity
        return _lgamma_lanczos(x)
    refl = x < 0.5
    pole = (x <= 0) & (np.floor(x) == x)
    y = np.where(refl, 1.0 - x, x)
    out = _lgamma_lanczos(np.where(np.isfinite(y), y, 1.0))
    if refl.any():
        out = np.where(refl, _LOG_PI - np.log(_sinpi_abs(np.where(pole, 0.5, x))) - out, out)
    out = np.where(np.isinf(x) | pole, np.inf, out)
    return np.where(np.isnan(x), np.nan, out)


# psi(x) ~ log x - 1/(2x) - sum_k B_2k / (2k x^2k): B_2k / 2k for k = 8 .. 1 (Horner in 1/x^2)
_PSI_ASY = (-3617.0 / 8160.0, 1.0 / 12.0, -691.0 / 32760.0, 1.0 / 132.0, -1.0 / 240.0, 1.0 / 252.0,
            -1.0 / 120.0, 1.0 / 12.0)


def _digamma_pos(y):
    """psi(y) for y > 0: recurrence psi(y) = psi(y + 1) - 1/y up to y >= 10, then the asymptotic series."""
    acc = np.zeros(y.shape)
    for _ in range(10):
        low = y < 10.0
        if not low.any():
            break
        acc = acc - np.where(low, 1.0 / y, 0.0)
        y = np.where(low, y + 1.0, y)
    w = 1.0 / (y * y)
    return acc + np.log(y) - 0.5 / y - w * _horner(w, _PSI_ASY)


def digamma64(x):
    pole = ((x <= 0) & (np.floor(x) == x)) | (x == -np.inf)
    refl = (x < 0) & ~pole
    y = np.where(refl, 1.0 - x, x)
    y = np.where((y > 0) & np.isfinite(y), y, 1.0)
    out = _digamma_pos(y)
    if refl.any():
        r = x - np.round(x)                          # psi(x) = psi(1 - x) - pi / tan(pi x)
        out = np.where(refl, out - math.pi / np.tan(math.pi * np.where(refl, r, 0.25)), out)
    out = np.where(x == np.inf, np.inf, out)
    return np.where(pole | np.isnan(x), np.nan, out)


# ---------------------------------------------------------------------------------------- zeta
_ZETA_N = 9
# B_2j / (2j)!, j = 1 .. 12: the Euler-Maclaurin correction terms
_EM = tuple(float(v) for v in (1 / 12, -1 / 720, 1 / 30240, -1 / 1209600, 1 / 47900160, -691 / 1307674368000,
                               1 / 74724249600, -3617 / 10670622842880000, 43867 / 5109094217170944000,
                               -174611 / 802857662698291200000, 77683 / 14101100039391805440000,
                               -236364091 / 1382428189533260595200000000))


def zeta64(x, q):
    """Hurwitz zeta(x, q) = sum_k (q + k)^-x for x > 1, q > 0, with XLA's values elsewhere: inf at x == 1;
    at q a non-positive integer (-inf too) inf for even integer x, else NaN; NaN for x < 1, x or q
    infinite, q negative. (XLA sums integer x at negative non-integer q: `zeta_kernel` declines those.)"""
    x, q = np.broadcast_arrays(x, q)
    good = (x > 1) & (q > 0) & np.isfinite(x) & np.isfinite(q)
    xs, qs = np.where(good, x, 2.0), np.where(good, q, 1.0)
    s = np.zeros(xs.shape)
    for k in range(_ZETA_N):
        s = s + (qs + k) ** -xs
    a = qs + _ZETA_N
    p = a ** -xs
    s = s + a * p / (xs - 1.0) + 0.5 * p
    live = p > 0                                     # (else every correction term is 0: keep 0 * inf out)
    t = np.where(live, xs * p / a, 0.0)              # x (x+1) ... (x+2j-2) a^(-x-2j+1), j = 1
    for j, c in enumerate(_EM):
        s = s + c * t
        m = xs + 2 * j + 1
        t = t * np.where(live, m * (m + 1.0), 0.0) / (a * a)
    out = np.where(good, s, np.nan)
    even = np.isfinite(x) & (np.floor(0.5 * x) * 2.0 == x)
    out = np.where((q <= 0) & (np.floor(q) == q), np.where(even, np.inf, np.nan), out)
    return np.where(x == 1, np.inf, out)


def zeta_kernel(x, q):
    vx, vq = _f64(x), _f64(q)
    if vx is None or vq is None:
        return NotImplemented
    if ((vq < 0) & (np.floor(vq) != vq) & (vx > 1) & (np.floor(vx) == vx) & np.isfinite(vx)).any():
        return NotImplemented
    return _back(np.asarray(zeta64(vx, vq), np.float64), x.dtype)


erf_kernel = _unary(erf64)
erfc_kernel = _unary(erfc64)
erfinv_kernel = _unary(erfinv64)
lgamma_kernel = _unary(lgamma64)
digamma_kernel = _unary(digamma64)


# ------------------------------------------------------------------------------ composites


def composite_kernel(closed_at):
    """A host kernel evaluating `closed_at(in_avals)` (the closed jaxpr the lowering inlines; the lowering
    module caches a bounded number of them -- a staged incomplete-gamma body is ~0.5 MB) op by op on NumPy
    arrays, its host program, where host_eager's static rule says "host"; NotImplemented elsewhere (the
    caller then compiles)."""
    from transforms.core import ShapedArray

    from . import host_eager, host_program

    def kernel(*arrays):
        closed = closed_at(tuple(ShapedArray(a.shape, a.dtype) for a in arrays))
        if host_eager.eager_way(closed) != "host":
            return NotImplemented
        outs = host_program.program(closed).run(list(arrays))
        return outs[0] if len(outs) == 1 else outs
    return kernel
