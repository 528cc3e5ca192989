"""Host kernels of the special functions (xla/host.py's table): lgamma, digamma, erf, erfc and erfinv as
scipy.special's ufuncs, CHLO's Hurwitz zeta as NumPy code, and the host path of the composite special primitives.

Why: eager callers (scipy.special on this backend) come with ever-changing shapes, and each of these
primitives otherwise compiles one XLA executable per shape (20-400 ms). A kernel here costs microseconds.

lgamma, digamma, erf, erfc, erfinv: scipy.special's gammaln, psi, erf, erfc and erfinv (scipy is installed with
jaxlib, which requires it), in float64, rounded to the operand's dtype: accurate to a few ulps, so host and XLA agree
to XLA's own error (its float32 expansions and its float64 Lanczos lgamma: up to ~40 ulps of 1 near the zeros of
lgamma and digamma). Special values are XLA's (tests/xla/test_host_special.py compares with the lowering and with
scipy and mpmath): lgamma is +inf at the poles and at +-inf; digamma is NaN at the poles (0 included: scipy's psi
gives -+inf at +-0) and at -inf; erfinv(+-1) = +-inf. Where scipy is missing the kernels decline (the XLA
executable runs). zeta is the Euler-Maclaurin sum: scipy's zeta(x, q) takes other values than XLA's at q <= 0,
infinite arguments and huge x.

Composites (the `_impl_*` compositions the lowerings stage: zeta, polygamma, the incomplete gamma
family, ndtr, the Bessel functions, ...): `composite_kernel` evaluates the very jaxpr the lowering
inlines, equation by equation on host values (each equation then runs its own host kernel), so the
lowering and the host path agree by construction. It does so where host_eager's static rule says
"host" (all host kernels, operands not large); otherwise it declines (NotImplemented) and the
primitive's compiled impl runs.
"""
from __future__ import annotations

import numpy as np

from .host import scipy_function

_FLOATS = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))


def _f64(x):
    if x.dtype not in _FLOATS:
        return None
    return x.astype(np.float64) if x.dtype != np.float64 else x


def _back(r, dt):
    return r.astype(dt) if r.dtype != dt else r


def _scipy_kernel(name, fix=None):
    """The host kernel of scipy.special's unary ufunc `name`: float64, then `fix(v, r)` (XLA's values where scipy's
    differ), rounded back to the operand's dtype."""
    def kernel(x):
        fn, v = scipy_function("special", name), _f64(x)
        if fn is None or v is None:
            return NotImplemented
        r = np.asarray(fn(v))
        return _back(r if fix is None else fix(v, r), x.dtype)
    kernel.__name__ = name
    return kernel


def exp_neg_sq(a):
    """exp(-a^2) with a^2 = hi + lo exactly (Dekker's split): a few ulps, not a^2 ulps, for large a. (erfc above 1/2
    is exp(-a^2) erfcx(a): scipy's erfc there is ~250 ulps off in the tail, from exp(-a^2) rounded.)"""
    t = a * 134217729.0
    ah = t - (t - a)
    al = a - ah
    hi = a * a
    lo = ((ah * ah - hi) + 2.0 * ah * al) + al * al
    return np.exp(-hi) * np.exp(-lo)


def _lgamma_fix(v, r):
    return np.where(v == -np.inf, np.inf, r)   # (scipy: -inf)


def _digamma_fix(v, r):
    """NaN at +-0 (scipy: -+inf); below 0, reflected onto psi(1 - v) (scipy's own is ~1e4 ulps off near the poles):
    psi(v) = psi(1 - v) - pi / tan(pi v), v - round(v) exact."""
    neg = (v < 0) & np.isfinite(v)
    if np.count_nonzero(neg):
        refl = scipy_function("special", "psi")(np.where(neg, 1.0 - v, 1.0)) - np.pi / np.tan(np.pi * (v - np.round(v)))
        r = np.where(neg, refl, r)
    return np.where((v == 0) | (neg & (np.floor(v) == v)), np.nan, r)


erf_kernel = _scipy_kernel("erf")
erfc_kernel = _scipy_kernel("erfc", lambda v, r: np.where(   # (0 from 27.3: erfc is below the subnormals there)
    v > 0.5, np.where(v < 27.3, exp_neg_sq(v) * scipy_function("special", "erfcx")(v), 0.0), r))
erfinv_kernel = _scipy_kernel("erfinv", lambda v, r: np.copysign(r, v))   # (scipy: erfinv(-0.0) = +0.0)
lgamma_kernel = _scipy_kernel("gammaln", _lgamma_fix)
digamma_kernel = _scipy_kernel("psi", _digamma_fix)


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
