"""Lowering of the special-function primitives of transforms/primitives/special_erf.py.

erf, erfc and erfinv are single CHLO ops (XLA expands them with its own approximations).
Everything else is an approximation written once as a composition of elementwise
primitives (`_impl_*`, raw values in, raw value out) and staged into the module at
lowering time (`_composite`), so it runs unchanged on every backend and dtype; eagerly on the
CPU that same staged body runs op by op on host kernels (xla/host_special.py), and erf, erfc
and erfinv have scipy.special's ufuncs as their kernels there.

The methods are the classical ones: Chebyshev expansions (Clenshaw) and rational
approximations on fixed intervals joined by `where`, Hankel asymptotic forms for the
oscillatory Bessel functions, power series and continued fractions (evaluated backward
with a fixed number of terms) for the exponential integrals, erfcx and E_n. The
coefficient tables (_special_erf_tables.py) are S. L. Moshier's public-domain Cephes tables
(the ones scipy's own implementations are built on), so values agree with scipy to rounding.
Loops (series, continued fractions, the Y_n recurrence) are staged as loops, not unrolled,
which keeps the compiled programs small.
"""
from __future__ import annotations

import functools

import numpy as np

from transforms.core import EVAL, abstract_eval, bind
from transforms.primitives import elementwise as E
from transforms.primitives import special_erf as S
from transforms.primitives.elementwise import _c, add, div, mul, neg, sub
from transforms.primitives.raw_ops import (abs_ as absv, and_, cos, eq, exp, floor, gt, le, log, log1p, log_pos, lt,
                                           or_, sin, sqrt, where)
from transforms.primitives.structural import broadcast_to_shape
from transforms.staging import trace_to_jaxpr

from ._jaxlib import chlo
from ._special_erf_tables import (
    _I0_A, _I0_B, _I1_A, _I1_B, _K0_A, _K0_B,
    _K1_A, _K1_B, _J0_PP, _J0_PQ, _J0_QP, _J0_QQ,
    _J0_YP, _J0_YQ, _J0_RP, _J0_RQ, _J1_RP, _J1_RQ,
    _J1_PP, _J1_PQ, _J1_QP, _J1_QQ, _J1_YP, _J1_YQ,
    _NDTRI_P0, _NDTRI_Q0, _NDTRI_P1, _NDTRI_Q1, _NDTRI_P2, _NDTRI_Q2,
    _ELLPK_P, _ELLPK_Q, _ELLPE_P, _ELLPE_Q, _SPENCE_A, _SPENCE_B,
)
from . import host_special as HS
from .host import host_kernels
from .lower_elementwise import _nary
from .lowering import jaxpr_subcomp, lowering_rules


# ------------------------------------------------------------------------------ helpers
@functools.lru_cache(maxsize=64)
def _staged(impl, avals_in, aval_out):
    """`impl` (a composition of primitives on raw values) staged at `avals_in`, its output broadcast to
    `aval_out`: the one body both the lowering inlines and the host path evaluates."""
    def fun(*a):
        out = impl(*a)
        if tuple(out.aval.shape) != tuple(aval_out.shape):
            out = broadcast_to_shape(out, tuple(aval_out.shape))
        return [out]
    return trace_to_jaxpr(fun, list(avals_in), parent=EVAL)


def _stage(impl, avals_in, aval_out, args):
    """Emit `impl` staged at `avals_in`."""
    closed = _staged(impl, tuple(avals_in), aval_out)
    return jaxpr_subcomp(closed.jaxpr, closed.consts, list(args))[0]


def _nan_in_nan_out(impl):
    def f(*args):
        out = impl(*args)
        for a in args:
            out = where(isnan(a), _c(out, np.nan), out)
        return out
    return f


def _composite(prim, impl, compiled=None):
    """Lower `prim` by staging `impl` (or `compiled`, a variant for XLA's code) at the equation's avals (NaN in,
    NaN out); eagerly on the CPU its host kernel evaluates `impl` staged op by op (xla/host_special.py:
    composite_kernel)."""
    impl = _nan_in_nan_out(impl)
    lowered = impl if compiled is None else _nan_in_nan_out(compiled)
    lowering_rules[prim] = lambda c, *args: _stage(lowered, c.avals_in, c.avals_out[0], args)
    host_kernels[prim] = HS.composite_kernel(
        lambda avals: _staged(impl, avals, abstract_eval(prim, list(avals), {})))


def _is32(x): return x.aval.dtype == np.float32
def sq(x): return mul(x, x)
def isnan(x): return bind(E.ne_p, x, x)
def rcp(x): return div(_c(x, 1), x)


def _strong(x, like):
    """x as a strong array of like's dtype and shape (a loop carry must keep its type)."""
    v = E.convert_element_type(x, like.aval.dtype, weak_type=False)
    shape = tuple(like.aval.shape)
    return v if tuple(v.aval.shape) == shape else broadcast_to_shape(v, shape)


def _fori(n, body, init):
    """carry = body(k, *carry) for k = 0 .. n-1 (k a float scalar of the carry's dtype), as one
    loop: long series and continued fractions stay small programs that compile quickly."""
    from transforms.control_flow import fori_loop
    dt = init[0].aval.dtype

    def step(i, c):
        k = E.convert_element_type(i._v, dt, weak_type=False)
        return list(body(k, *[v._v for v in c]))
    return [o._v for o in fori_loop(0, n, step, list(init))]


def polevl(x, coefs):
    """sum c_i x^(n-i), highest degree first (Horner)."""
    r = _c(x, coefs[0])
    for co in coefs[1:]:
        r = add(mul(r, x), _c(x, co))
    return r


def p1evl(x, coefs):
    """Like polevl with an implicit leading coefficient 1."""
    return polevl(x, (1.0,) + tuple(coefs))


def chbevl(x, coefs):
    """Chebyshev series sum' c_i T_i(x/2), Clenshaw's recurrence, highest order first."""
    b0, b1, b2 = _c(x, coefs[0]), _c(x, 0.0), _c(x, 0.0)
    for co in coefs[1:]:
        b2, b1 = b1, b0
        b0 = add(sub(mul(x, b1), b2), _c(x, co))
    return mul(_c(x, 0.5), sub(b0, b2))


def exp_sq(x, sign):
    """exp(sign * x^2) with x^2 split exactly into hi + lo (Dekker), so the large exponent
    carries no rounding error: relative error a few ulp instead of x^2 ulp."""
    split = 4097.0 if _is32(x) else 134217729.0
    t = mul(x, _c(x, split))
    xh = sub(t, sub(t, x))
    xl = sub(x, xh)
    hi = mul(x, x)
    lo = add(add(sub(mul(xh, xh), hi), mul(_c(x, 2), mul(xh, xl))), mul(xl, xl))
    s = _c(x, float(sign))
    # where x^2 overflows lo is nan or infinite (with fused multiply-adds); the limit needs only hi. Where
    # x^2 > 1e4, exp(-x^2) is 0 and exp(x^2) inf in every float type, while lo (up to ulp(x^2) / 2) could
    # overflow exp(+-lo) into 0 * inf = nan: keep lo out there too
    lo = where(and_(bind(E.is_finite_p, lo), lt(hi, 1e4)), lo, _c(x, 0))
    return mul(exp(mul(s, hi)), exp(mul(s, lo)))


_J0_DR1, _J0_DR2 = 5.78318596294678452118, 3.04712623436620863991e1
_J1_Z1, _J1_Z2 = 1.46819706421238932572e1, 4.92184563216946036703e1
_SQRT_PI = float(np.sqrt(np.pi))
_INV_SQRT2 = float(np.sqrt(0.5))
_EULER = 0.57721566490153286061

# ------------------------------------------------------------------ error functions
lowering_rules[S.erfc_p] = _nary(chlo.ErfcOp)
host_kernels[E.erf_p] = HS.erf_kernel     # (erf_p's lowering is elementwise's: XLA has the op)
host_kernels[S.erfc_p] = HS.erfc_kernel


def _polish_erfinv(y, x0):
    """One Newton step from XLA's erfinv x0, which matters in the tails (|y| -> 1): on
    erfc(x) = 1 - |y| (exact for |y| >= 1/2), otherwise on erf(x) = y."""
    a, ax = absv(y), absv(x0)
    resid = where(lt(a, 0.5), sub(bind(E.erf_p, x0), y),
                  mul(bind(E.sign_p, y), sub(sub(_c(y, 1), a), bind(S.erfc_p, ax))))
    step = div(resid, mul(_c(y, 2 / _SQRT_PI), exp_sq(x0, -1)))
    return where(lt(a, 1.0), sub(x0, step), x0)


def _erfinv(c, y):
    x0 = chlo.ErfInvOp(y).result
    return _stage(_polish_erfinv, [c.avals_in[0]] * 2, c.avals_out[0], [y, x0])


lowering_rules[S.erfinv_p] = _erfinv
host_kernels[S.erfinv_p] = HS.erfinv_kernel


def _erfcx_pos(x):
    """erfcx for x >= 0: exp(x^2) erfc(x) below 3, Laplace's continued fraction
    erfc(x) = exp(-x^2)/sqrt(pi) / (x + (1/2)/(x + 1/(x + (3/2)/(x + ...)))) above."""
    small = mul(exp_sq(x, 1), bind(S.erfc_p, x))
    xc = _strong(where(lt(x, 3.0), _c(x, 3.0), x), x)
    t, = _fori(30, lambda k, t: [add(xc, div(mul(sub(_c(k, 30), k), _c(k, 0.5)), t))], [xc])
    big = div(_c(x, 1 / _SQRT_PI), t)
    return where(lt(x, 3.0), small, big)


def _impl_erfcx(x):
    # erfcx(-x) = 2 exp(x^2) - erfcx(x): exp(x^2) erfc(-|x|) directly (erfc is in [1, 2] there)
    neg_side = mul(exp_sq(x, 1), bind(S.erfc_p, x))
    return where(lt(x, 0.0), neg_side, _erfcx_pos(absv(x)))


_composite(S.erfcx_p, _impl_erfcx)


# ------------------------------------------------------------- normal distribution
def _impl_ndtr(x):
    z = mul(x, _c(x, _INV_SQRT2))
    central = add(_c(x, 0.5), mul(_c(x, 0.5), bind(E.erf_p, z)))
    upper = sub(_c(x, 1), mul(_c(x, 0.5), bind(S.erfc_p, z)))
    # lower tail: Phi(x) = exp(-x^2/2) erfcx(-x/sqrt 2) / 2, with exp(-x^2/2) exact to a few ulp
    lower = mul(mul(_c(x, 0.5), exp_sq(mul(x, _c(x, _INV_SQRT2)), -1)), bind(S.erfcx_p, neg(z)))
    return where(lt(x, -1.0), lower, where(gt(x, 1.0), upper, central))


_composite(S.ndtr_p, _impl_ndtr)


def _impl_log_ndtr(x):
    z = mul(x, _c(x, _INV_SQRT2))
    # x < 0: log Phi(x) = log(erfcx(-x/sqrt 2)/2) - x^2/2 (no underflow however negative x is; (x/2) x, as x^2
    # overflows from x = -1.3e154 where x^2/2 does not)
    lower = sub(log(mul(_c(x, 0.5), bind(S.erfcx_p, neg(z)))), mul(mul(_c(x, 0.5), x), x))
    upper = log1p(mul(_c(x, -0.5), bind(S.erfc_p, z)))
    return where(lt(x, 0.0), lower, upper)


_composite(S.log_ndtr_p, _impl_log_ndtr)


def _impl_ndtri(p, log=log):
    e2 = 0.13533528323661269189            # exp(-2)
    upper = gt(p, 1 - e2)
    y = where(upper, sub(_c(p, 1), p), p)
    # central region: rational in (y - 1/2)^2
    yc = sub(p, _c(p, 0.5))
    y2 = sq(yc)
    xc = add(yc, mul(yc, div(mul(y2, polevl(y2, _NDTRI_P0)), p1evl(y2, _NDTRI_Q0))))
    xc = mul(xc, _c(p, np.sqrt(2 * np.pi)))
    # tails: x = sqrt(-2 log y), correction rational in 1/x
    ys = where(gt(y, 0.0), y, _c(p, 0.5))
    t = sqrt(mul(_c(p, -2), log(ys)))
    x0 = sub(t, div(log(t), t))
    z = rcp(t)
    x1a = div(mul(z, polevl(z, _NDTRI_P1)), p1evl(z, _NDTRI_Q1))
    x1b = div(mul(z, polevl(z, _NDTRI_P2)), p1evl(z, _NDTRI_Q2))
    xt = sub(x0, where(lt(t, 8.0), x1a, x1b))
    xt = where(upper, xt, neg(xt))
    x = where(gt(y, e2), xc, xt)
    x = where(eq(p, 0.0), _c(p, -np.inf), where(eq(p, 1.0), _c(p, np.inf), x))
    return where(or_(or_(lt(p, 0.0), gt(p, 1.0)), isnan(p)), _c(p, np.nan), x)


# compiled, its two logs (of positive normal numbers: ys, and t > 1/2) are raw_ops.log_pos, which XLA's CPU code
# vectorises where its float64 log is a libm call per element (truncated_normal's 1000x1200 draw: 33 -> 20 ms of
# CPU); eagerly NumPy's log, one vectorised kernel where log_pos would be ~25 (same values within an ulp of log)
_composite(S.ndtri_p, _impl_ndtri, compiled=functools.partial(_impl_ndtri, log=log_pos))


# ------------------------------------------------------------ modified Bessel I0, I1
def _i0e_abs(a):
    small = chbevl(sub(mul(a, _c(a, 0.5)), _c(a, 2)), _I0_A)
    big = div(chbevl(sub(div(_c(a, 32), a), _c(a, 2)), _I0_B), sqrt(a))
    return where(le(a, 8.0), small, big)


def _i1e_abs(a):
    small = mul(chbevl(sub(mul(a, _c(a, 0.5)), _c(a, 2)), _I1_A), a)
    big = div(chbevl(sub(div(_c(a, 32), a), _c(a, 2)), _I1_B), sqrt(a))
    return where(le(a, 8.0), small, big)


def _scale_exp(v, a):
    """v * exp(a), in two halves so it stays finite wherever the product is."""
    h = exp(mul(a, _c(a, 0.5)))
    return mul(mul(v, h), h)


def _signed(v, x):
    """v carrying x's sign (an odd function of x; -0.0 stays -0.0)."""
    return mul(v, bind(E.sign_p, x))


_composite(S.i0e_p, lambda x: _i0e_abs(absv(x)))
_composite(S.i0_p, lambda x: _scale_exp(_i0e_abs(absv(x)), absv(x)))
_composite(S.i1e_p, lambda x: _signed(_i1e_abs(absv(x)), x))
_composite(S.i1_p, lambda x: _signed(_scale_exp(_i1e_abs(absv(x)), absv(x)), x))


# ------------------------------------------------------------ modified Bessel K0, K1
def _k_small(x, order):
    """x <= 2: K0 = A(x^2 - 2) - log(x/2) I0(x);  K1 = log(x/2) I1(x) + A(x^2 - 2)/x."""
    y = sub(sq(x), _c(x, 2))
    lg = log(mul(x, _c(x, 0.5)))
    if order == 0:
        return sub(chbevl(y, _K0_A), mul(lg, bind(S.i0_p, x)))
    return add(mul(lg, bind(S.i1_p, x)), div(chbevl(y, _K1_A), x))


def _ke_big(x, order):
    """x > 2: exp(x) sqrt(x) K(x) as a Chebyshev series in 8/x - 2."""
    return div(chbevl(sub(div(_c(x, 8), x), _c(x, 2)), _K0_B if order == 0 else _K1_B), sqrt(x))


def _k(order, scaled):
    def impl(x):
        xs = where(gt(x, 2.0), _c(x, 1), x)
        xb = where(gt(x, 2.0), x, _c(x, 4))
        small = _k_small(xs, order)
        big = _ke_big(xb, order)
        out = where(le(x, 2.0), mul(small, exp(x)) if scaled else small, big if scaled else mul(big, exp(neg(x))))
        out = where(eq(x, 0.0), _c(x, np.inf), out)
        return where(lt(x, 0.0), _c(x, np.nan), out)
    return impl


_composite(S.k0_p, _k(0, False))
_composite(S.k0e_p, _k(0, True))
_composite(S.k1_p, _k(1, False))
_composite(S.k1e_p, _k(1, True))


# ---------------------------------------------------------------- Bessel J0, J1, Y0, Y1
def _hankel(x, order):
    """x > 5: the modulus/phase pair (p, q) of the Hankel asymptotic form as rationals in 25/x^2."""
    w = div(_c(x, 5), x)
    z = sq(w)
    if order == 0:
        p = div(polevl(z, _J0_PP), polevl(z, _J0_PQ))
        q = div(polevl(z, _J0_QP), p1evl(z, _J0_QQ))
    else:
        p = div(polevl(z, _J1_PP), polevl(z, _J1_PQ))
        q = div(polevl(z, _J1_QP), p1evl(z, _J1_QQ))
    return p, mul(w, q), div(_c(x, 1 / _SQRT_PI), sqrt(x))


def _j0_small(x):
    z = sq(x)
    p = mul(sub(z, _c(x, _J0_DR1)), sub(z, _c(x, _J0_DR2)))
    return div(mul(p, polevl(z, _J0_RP)), p1evl(z, _J0_RQ))


def _j1_small(x):
    z = sq(x)
    w = div(polevl(z, _J1_RP), p1evl(z, _J1_RQ))
    return mul(mul(w, x), mul(sub(z, _c(x, _J1_Z1)), sub(z, _c(x, _J1_Z2))))


def _split(x, t=5.0):
    """Inputs for the small (<= t) and large (> t) branches, each kept inside its own domain."""
    return where(le(x, t), x, _c(x, 1)), where(gt(x, t), x, _c(x, 2 * t))


def _impl_j0(x):
    a = absv(x)
    xs, xb = _split(a)
    p, wq, s = _hankel(xb, 0)
    # cos(x - pi/4), sin(x - pi/4) expanded, so no rounding of x - pi/4 for large x
    big = mul(add(mul(add(p, wq), cos(xb)), mul(sub(p, wq), sin(xb))), s)
    return where(le(a, 5.0), _j0_small(xs), big)


def _impl_y0(x):
    xs, xb = _split(x)
    p, wq, s = _hankel(xb, 0)
    big = mul(add(mul(sub(wq, p), cos(xb)), mul(add(p, wq), sin(xb))), s)
    z = sq(xs)
    small = add(div(polevl(z, _J0_YP), p1evl(z, _J0_YQ)), mul(_c(x, 2 / np.pi), mul(log(xs), _j0_small(xs))))
    out = where(le(x, 5.0), small, big)
    out = where(eq(x, 0.0), _c(x, -np.inf), out)
    return where(lt(x, 0.0), _c(x, np.nan), out)


def _impl_j1(x):
    a = absv(x)
    xs, xb = _split(a)
    p, wq, s = _hankel(xb, 1)
    big = mul(add(mul(sub(wq, p), cos(xb)), mul(add(p, wq), sin(xb))), s)
    return _signed(where(le(a, 5.0), _j1_small(xs), big), x)


def _impl_y1(x):
    xs, xb = _split(x)
    p, wq, s = _hankel(xb, 1)
    big = mul(sub(mul(sub(wq, p), sin(xb)), mul(add(p, wq), cos(xb))), s)
    z = sq(xs)
    small = add(mul(xs, div(polevl(z, _J1_YP), p1evl(z, _J1_YQ))),
                mul(_c(x, 2 / np.pi), sub(mul(_j1_small(xs), log(xs)), rcp(xs))))
    out = where(le(x, 5.0), small, big)
    out = where(eq(x, 0.0), _c(x, -np.inf), out)
    return where(lt(x, 0.0), _c(x, np.nan), out)


_composite(S.j0_p, _impl_j0)
_composite(S.j1_p, _impl_j1)
_composite(S.y0_p, _impl_y0)
_composite(S.y1_p, _impl_y1)


# ---------------------------------------------------------------- exponential integrals
def _e1_series(x, terms):
    """E1(x) = -gamma - log x - sum_k (-x)^k / (k k!)   (x small)."""
    x = _strong(x, x)

    def body(k, s, term):
        k1 = add(k, _c(k, 1))
        term = mul(term, div(neg(x), k1))
        return [sub(s, div(term, k1)), term]
    s, _ = _fori(terms, body, [_strong(_c(x, 0.0), x), _strong(_c(x, 1.0), x)])
    return add(sub(_c(x, -_EULER), log(x)), s)


def _en_cf(n, x, terms):
    """E_n(x) = e^-x / (x + n - 1 n/(x + n + 2 - 2(n+1)/(x + n + 4 - ...))), backward, x > 1."""
    x, n = _strong(x, x), _strong(n, x)
    xn = add(x, n)

    def body(i, t):
        k = sub(_c(i, terms), i)                       # terms, terms-1, ..., 1
        return [sub(add(xn, mul(_c(k, 2), sub(k, _c(k, 1)))), div(mul(k, add(n, sub(k, _c(k, 1)))), t))]
    t, = _fori(terms, body, [add(xn, _c(x, 2 * terms))])
    return div(exp(neg(x)), t)


def _impl_exp1(x):
    f32 = _is32(x)
    xs = where(le(x, 1.5), x, _c(x, 1))
    xb = where(gt(x, 1.5), x, _c(x, 2))
    out = where(le(x, 1.5), _e1_series(xs, 14 if f32 else 24), _en_cf(_c(x, 1), xb, 40 if f32 else 80))
    return where(lt(x, 0.0), _c(x, np.nan), out)


def _impl_expi(x):
    f32 = _is32(x)
    big_at, n_ser, n_asy = (20.0, 60, 15) if f32 else (40.0, 100, 20)
    xs = _strong(where(le(x, big_at), x, _c(x, 1)), x)
    zero, one = _strong(_c(x, 0.0), x), _strong(_c(x, 1.0), x)

    def ser_body(k, s, term):                  # Ei(x) = gamma + log x + sum x^k / (k k!)
        k1 = add(k, _c(k, 1))
        term = mul(term, div(xs, k1))
        return [add(s, div(term, k1)), term]
    s, _ = _fori(n_ser, ser_body, [zero, one])
    ser = add(add(_c(x, _EULER), log(xs)), s)
    xb = _strong(where(gt(x, big_at), x, _c(x, 2 * big_at)), x)

    def asy_body(k, a, term):                  # Ei(x) ~ e^x/x sum k!/x^k
        term = mul(term, div(add(k, _c(k, 1)), xb))
        return [add(a, term), term]
    a, _ = _fori(n_asy, asy_body, [one, one])
    asy = _scale_exp(div(a, xb), xb)
    pos = where(le(x, big_at), ser, where(eq(x, np.inf), _c(x, np.inf), asy))
    negv = neg(bind(S.exp1_p, neg(where(lt(x, 0.0), x, _c(x, -1)))))
    return where(lt(x, 0.0), negv, where(eq(x, 0.0), _c(x, -np.inf), pos))


def _broadcast_pair(a, b):
    shape = E.broadcast_shapes(tuple(a.aval.shape), tuple(b.aval.shape))
    fix = lambda v: v if tuple(v.aval.shape) == shape else broadcast_to_shape(v, shape)  # noqa: E731
    return fix(a), fix(b)


def _impl_expn(n, x):
    f32 = _is32(x)
    n, x = _broadcast_pair(n, x)     # broadcast both to one shape
    xb = where(gt(x, 1.0), x, _c(x, 2))
    cf = _en_cf(n, xb, 30 if f32 else 80)
    # x <= 1: E_n(x) = (-x)^(n-1)/(n-1)! (psi(n) - log x) - sum_{k != n-1} (-x)^k / ((k - n + 1) k!)
    xs = _strong(where(le(x, 1.0), x, _c(x, 0.5)), x)
    lx = log(xs)
    ns = _strong(n, x)

    def body(k, s, term, harm):               # term = (-x)^k / k!, harm = H_k
        k1 = add(k, _c(k, 1))
        is_k = eq(ns, k1)
        regular = neg(div(term, where(is_k, _c(x, 1), sub(k1, ns))))
        special = mul(term, sub(add(_c(x, -_EULER), harm), lx))
        s = add(s, where(is_k, special, regular))
        return [s, mul(term, div(neg(xs), k1)), add(harm, div(_c(k, 1), k1))]
    zero = _strong(_c(x, 0.0), x)
    s, _, _ = _fori(14 if f32 else 26, body, [zero, _strong(_c(x, 1.0), x), zero])
    out = where(gt(x, 1.0), cf, s)
    out = where(eq(n, 0.0), div(exp(neg(x)), x), out)
    out = where(eq(x, np.inf), _c(x, 0), out)
    at0 = where(le(n, 1.0), _c(x, np.inf), rcp(sub(n, _c(n, 1))))
    out = where(eq(x, 0.0), at0, out)
    return where(or_(lt(n, 0.0), lt(x, 0.0)), _c(x, np.nan), out)


_composite(S.exp1_p, _impl_exp1)
_composite(S.expi_p, _impl_expi)
_composite(S.expn_p, _impl_expn)


# ------------------------------------------------------------ complete elliptic integrals
def _ellpk(p):
    """K as a function of the complementary parameter p = 1 - m (Cephes' ellpk)."""
    big = gt(p, 1.0)
    q = where(big, rcp(p), p)
    k = sub(polevl(q, _ELLPK_P), mul(log(q), polevl(q, _ELLPK_Q)))
    k = where(big, div(k, sqrt(p)), k)
    k = where(eq(p, np.inf), _c(p, 0), k)
    return where(lt(p, 0.0), _c(p, np.nan), k)


def _impl_ellipe(m):
    x = sub(_c(m, 1), m)
    big = gt(x, 1.0)
    q = where(big, rcp(x), x)
    e = sub(polevl(q, _ELLPE_P), mul(log(q), mul(q, polevl(q, _ELLPE_Q))))
    e = where(eq(q, 0.0), _c(m, 1), e)
    e = where(big, mul(e, sqrt(x)), e)
    return where(lt(x, 0.0), _c(m, np.nan), e)


_composite(S.ellipkm1_p, _ellpk)
_composite(S.ellipk_p, lambda m: _ellpk(sub(_c(m, 1), m)))
_composite(S.ellipe_p, _impl_ellipe)


# ------------------------------------------------------------------------- dilogarithm
def _impl_spence(x):
    inv = gt(x, 2.0)
    xr = where(inv, rcp(x), x)
    hi, lo = gt(xr, 1.5), lt(xr, 0.5)
    w = where(hi, sub(rcp(xr), _c(x, 1)), where(lo, neg(xr), sub(xr, _c(x, 1))))
    y = div(neg(mul(w, polevl(w, _SPENCE_A))), polevl(w, _SPENCE_B))
    xl = where(lo, xr, _c(x, 0.25))
    y = where(lo, sub(sub(_c(x, np.pi ** 2 / 6), mul(log(xl), log1p(neg(xl)))), y), y)
    z = log(where(or_(inv, hi), xr, _c(x, 1)))
    y = where(or_(inv, hi), sub(mul(_c(x, -0.5), sq(z)), y), y)
    y = where(eq(x, 0.0), _c(x, np.pi ** 2 / 6), y)
    return where(lt(x, 0.0), _c(x, np.nan), y)


_composite(S.spence_p, _impl_spence)


# ------------------------------------------------------------------- Bessel Y_n, integer n
YN_REC_MAX = 1 << 16    # the recurrence's trip bound (~1.5 ms compiled, ~1.5 s op by op at the bound)


def _yn_overflows(an, x):
    """Where |Y_n(x)| is certainly beyond the dtype's range, for 0 < x < n: Debye's form
    log|Y_n(n sech a)| ~ n (a - tanh a) - log(pi n tanh a / 2) / 2 (DLMF 10.19.3) passes
    log(max) by 2, far more than its relative error (~(coth a)^3 / n << 1 once that large)."""
    r = div(x, an)
    ta = sqrt(mul(sub(_c(r, 1), r), add(_c(r, 1), r)))          # tanh a = sqrt(1 - (x/n)^2)
    a = log(div(add(_c(r, 1), ta), r))                            # a = acosh(n/x)
    lg = sub(mul(an, sub(a, ta)), mul(_c(an, 0.5), log(mul(_c(an, np.pi / 2), ta))))
    logmax = float(np.log(np.finfo(x.aval.dtype).max))
    return and_(lt(x, an), gt(lg, _c(lg, logmax + 2.0)))


def _impl_yn(n, x):
    """Forward recurrence Y_{k+1} = (2k/x) Y_k - Y_{k-1} from Y0, Y1 (stable for Y), run to the
    largest |n| present up to YN_REC_MAX; each element stops at its own |n| or once it has
    overflowed, and the loop once every element has (so its trips never grow with n beyond the
    bound). Beyond the bound: -inf where Debye's form shows Y_n(x) overflows (x well below n, as
    every x below ~n for huge n), NaN where it is finite (no large-order asymptotic form here:
    scipy's own yn casts such orders to a C int), and -inf for n = +-inf at finite x >= 0."""
    from transforms.control_flow import while_loop
    from transforms.primitives.reductions import reduce_max_p, reduce_or_p
    n, x = _broadcast_pair(n, x)
    an = absv(n)
    axes = tuple(range(len(an.aval.shape)))
    y0, y1 = bind(S.y0_p, x), bind(S.y1_p, x)
    rec = le(an, _c(an, YN_REC_MAX))
    nmax = bind(reduce_max_p, where(rec, an, _c(an, 0)), axes=axes)

    def live(k, yk):
        return and_(and_(lt(k, an), rec), bind(E.is_finite_p, yk))

    def body(c):
        k, ym1, yk = c[0]._v, c[1]._v, c[2]._v
        nxt = sub(mul(div(mul(_c(k, 2), k), x), yk), ym1)
        go = live(k, yk)
        return [add(k, _c(k, 1)), where(go, yk, ym1), where(go, nxt, yk)]

    def cond(c):
        return and_(lt(c[0]._v, nmax), bind(reduce_or_p, live(c[0]._v, c[2]._v), axes=axes))

    k0 = add(mul(nmax, _c(nmax, 0)), _c(nmax, 1))
    out = while_loop(cond, body, [k0, y0, y1])
    yk = out[2]._v
    val = where(eq(an, 0.0), y0, yk)
    big = where(_yn_overflows(an, where(gt(x, 0.0), x, _c(x, 1))), _c(x, -np.inf), _c(x, np.nan))
    val = where(rec, val, where(eq(an, np.inf), _c(x, -np.inf), big))
    odd = eq(sub(an, mul(_c(an, 2), floor(mul(an, _c(an, 0.5))))), 1.0)
    val = where(and_(lt(n, 0.0), odd), neg(val), val)
    val = where(eq(x, 0.0), where(and_(lt(n, 0.0), odd), _c(x, np.inf), _c(x, -np.inf)), val)
    return where(or_(lt(x, 0.0), eq(x, np.inf)), where(rec, val, _c(x, np.nan)), val)


_composite(S.yn_p, _impl_yn)
