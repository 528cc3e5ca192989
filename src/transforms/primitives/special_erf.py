"""Special-function primitives: the error-function, normal-distribution, Bessel,
exponential-integral and elliptic families of scipy.special.

Each is one elementwise primitive over real floating operands of one dtype, so a jaxpr shows
`ndtr x` rather than the dozens of operations of its approximation, eager execution is one
executable per function, and derivatives come from the classical identities (erf' is a
Gaussian, I0' = I1, K0' = -K1, E_n' = -E_{n-1}, ...) rather than from differentiating a
polynomial fit. The approximations themselves are compositions of the elementwise
primitives, staged at lowering time (xla/lower_special_erf.py).

`erf` itself is `elementwise.erf_p` (XLA has the op); everything else is here.
"""
from __future__ import annotations

import numpy as np

from ..core import Primitive, ShapedArray, abstract_eval_rules, bind
from ..rules import Zero, batch_rules, jvp_rules
from . import elementwise as E
from .elementwise import _c, add, div, elementwise_batch, mul, mul0, neg, sub
from .raw_ops import eq, exp, log, where

_SQRT_PI = float(np.sqrt(np.pi))
_SQRT_2PI = float(np.sqrt(2 * np.pi))


def _float_abstract(*avals, **params):
    dt = avals[0].dtype
    for a in avals:
        if a.dtype != dt or dt.kind != "f":
            raise TypeError("special functions take real floating operands of one dtype, got "
                            + ", ".join(a.dtype.name for a in avals))
    shape = E.broadcast_shapes(*[a.shape for a in avals]) if len(avals) > 1 else avals[0].shape
    return ShapedArray(shape, dt, all(a.weak_type for a in avals))


def _special(name, nargs=1):
    p = Primitive(name)
    abstract_eval_rules[p] = _float_abstract
    batch_rules[p] = elementwise_batch(p) if nargs > 1 else (
        lambda axis_size, vals, dims, _p=p, **params: (bind(_p, *vals, **params), dims[0]))
    return p


def _defjvp_unary(prim, deriv):
    """jvp from d(ans)/dx = deriv(ans, x)."""
    def rule(primals, tangents):
        (x,), (t,) = primals, tangents
        ans = bind(prim, x)
        if t is Zero:
            return ans, Zero
        return ans, mul0(t, deriv(ans, x))   # (mul0: a zero tangent stays zero, elementwise.py)
    jvp_rules[prim] = rule


def _defjvp_order_arg(prim, deriv):
    """jvp of f(n, x) with integer order n: the order carries no derivative (it is
    truncated to an integer, as scipy does), so only x's tangent contributes."""
    def rule(primals, tangents):
        n, x = primals
        ans = bind(prim, n, x)
        t = tangents[1]
        if t is Zero:
            return ans, Zero
        return ans, mul0(t, deriv(ans, n, x))
    jvp_rules[prim] = rule


def sq(x): return mul(x, x)


def _nonzero(x):
    """x with 0 replaced by 1 (the caller selects the limit there)."""
    return where(eq(x, 0), _c(x, 1), x)


def _safe_recip(x):
    """1/x with x == 0 replaced by 1 (the caller selects the limit there)."""
    return div(_c(x, 1), where(eq(x, 0), _c(x, 1), x))


# -------------------------------------------------------------------- error functions
erf_p = E.erf_p
erfc_p = _special("erfc")
_defjvp_unary(erfc_p, lambda ans, x: mul(_c(x, -2 / _SQRT_PI), exp(neg(sq(x)))))
erfinv_p = _special("erfinv")
_defjvp_unary(erfinv_p, lambda ans, x: mul(_c(x, _SQRT_PI / 2), exp(sq(ans))))
erfcx_p = _special("erfcx")       # exp(x^2) erfc(x)
_defjvp_unary(erfcx_p, lambda ans, x: sub(mul(_c(x, 2), mul(x, ans)), _c(x, 2 / _SQRT_PI)))

# ------------------------------------------------------------ normal distribution
ndtr_p = _special("ndtr")
_defjvp_unary(ndtr_p, lambda ans, x: mul(_c(x, 1 / _SQRT_2PI), exp(mul(_c(x, -0.5), sq(x)))))
ndtri_p = _special("ndtri")
_defjvp_unary(ndtri_p, lambda ans, x: mul(_c(x, _SQRT_2PI), exp(mul(_c(x, 0.5), sq(ans)))))
log_ndtr_p = _special("log_ndtr")


def _log_ndtr_deriv(ans, x):
    # d/dx log Phi(x) = phi(x) / Phi(x): sqrt(2/pi) / erfcx(-x/sqrt 2) for x < 0 (no cancellation of
    # x^2/2 against log Phi in the far tail), exp(-x^2/2 - log Phi(x)) / sqrt(2 pi) for x >= 0
    neg_side = div(_c(x, np.sqrt(2 / np.pi)), bind(erfcx_p, mul(x, _c(x, -np.sqrt(0.5)))))
    pos_side = exp(sub(mul(_c(x, -0.5), sq(x)), add(ans, _c(x, 0.5 * np.log(2 * np.pi)))))
    return where(bind(E.lt_p, x, _c(x, 0)), neg_side, pos_side)


_defjvp_unary(log_ndtr_p, _log_ndtr_deriv)

# ------------------------------------------------------ modified Bessel functions I
i0_p, i0e_p, i1_p, i1e_p = _special("i0"), _special("i0e"), _special("i1"), _special("i1e")


def _sign(x): return bind(E.sign_p, x)


def _i1_over_x(i1x, x):
    """I1(x)/x (or I1e(x)/x), which tends to 1/2 at x = 0."""
    return where(eq(x, 0), _c(x, 0.5), mul(i1x, _safe_recip(x)))


_defjvp_unary(i0_p, lambda ans, x: bind(i1_p, x))
_defjvp_unary(i1_p, lambda ans, x: sub(bind(i0_p, x), _i1_over_x(ans, x)))
_defjvp_unary(i0e_p, lambda ans, x: sub(bind(i1e_p, x), mul(_sign(x), ans)))
_defjvp_unary(i1e_p, lambda ans, x: sub(sub(bind(i0e_p, x), _i1_over_x(ans, x)), mul(_sign(x), ans)))

# ------------------------------------------------------ modified Bessel functions K
k0_p, k0e_p, k1_p, k1e_p = _special("k0"), _special("k0e"), _special("k1"), _special("k1e")
_defjvp_unary(k0_p, lambda ans, x: neg(bind(k1_p, x)))
_defjvp_unary(k1_p, lambda ans, x: neg(add(bind(k0_p, x), div(ans, x))))
_defjvp_unary(k0e_p, lambda ans, x: sub(ans, bind(k1e_p, x)))
_defjvp_unary(k1e_p, lambda ans, x: sub(sub(ans, bind(k0e_p, x)), div(ans, x)))

# ---------------------------------------------------------------- Bessel functions J, Y
j0_p, j1_p, y0_p, y1_p = _special("j0"), _special("j1"), _special("y0"), _special("y1")
_defjvp_unary(j0_p, lambda ans, x: neg(bind(j1_p, x)))
_defjvp_unary(j1_p, lambda ans, x: sub(bind(j0_p, x), _i1_over_x(ans, x)))
_defjvp_unary(y0_p, lambda ans, x: neg(bind(y1_p, x)))
_defjvp_unary(y1_p, lambda ans, x: sub(bind(y0_p, x), div(ans, x)))
yn_p = _special("yn", 2)          # yn(n, x), n an integer-valued float of x's dtype
# Y_n' = Y_{n-1} - (n/x) Y_n  (Y_{-1} = -Y_1 is what yn gives for n = -1)
_defjvp_order_arg(yn_p, lambda ans, n, x: sub(bind(yn_p, sub(n, _c(n, 1)), x), mul(div(n, x), ans)))

# --------------------------------------------------------------- exponential integrals
exp1_p, expi_p = _special("exp1"), _special("expi")
_defjvp_unary(exp1_p, lambda ans, x: neg(div(exp(neg(x)), x)))
_defjvp_unary(expi_p, lambda ans, x: div(exp(x), x))
expn_p = _special("expn", 2)      # expn(n, x), n an integer-valued float of x's dtype


def _expn_deriv(ans, n, x):
    # E_n' = -E_{n-1} for n >= 1; E_0 = e^-x/x so E_0' = -e^-x (1 + x)/x^2
    e0 = div(exp(neg(x)), x)
    d0 = neg(mul(e0, div(add(x, _c(x, 1)), x)))
    dn = neg(bind(expn_p, sub(n, _c(n, 1)), x))
    return where(bind(E.lt_p, n, _c(n, 1)), d0, dn)


_defjvp_order_arg(expn_p, _expn_deriv)

# ------------------------------------------------------------ complete elliptic integrals
ellipk_p, ellipkm1_p, ellipe_p = _special("ellipk"), _special("ellipkm1"), _special("ellipe")


def _ellipk_deriv(k, e, m):
    # K'(m) = (E - (1 - m) K) / (2 m (1 - m)), which tends to pi/8 at m = 0. There the limit branch is
    # K's Taylor line pi/8 + 9 pi/64 m, so the derivative of this rule (K'') is right at m = 0 too.
    one_m = sub(_c(m, 1), m)
    d = div(sub(e, mul(one_m, k)), mul(_c(m, 2), mul(where(eq(m, 0), _c(m, 1), m), one_m)))
    return where(eq(m, 0), add(_c(m, np.pi / 8), mul(_c(m, 9 * np.pi / 64), m)), d)


_defjvp_unary(ellipk_p, lambda ans, m: _ellipk_deriv(ans, bind(ellipe_p, m), m))


def _ellipkm1_deriv(ans, p):
    m = sub(_c(p, 1), p)
    return neg(_ellipk_deriv(ans, bind(ellipe_p, m), m))


_defjvp_unary(ellipkm1_p, _ellipkm1_deriv)
# E'(m) = (E - K) / (2 m), which tends to -pi/8 at m = 0 (branch: the Taylor line, so E''(0) = -3 pi/64)
_defjvp_unary(ellipe_p, lambda ans, m: where(eq(m, 0), sub(_c(m, -np.pi / 8), mul(_c(m, 3 * np.pi / 64), m)),
                                              div(sub(ans, bind(ellipk_p, m)), mul(_c(m, 2), _nonzero(m)))))

# ------------------------------------------------------------------------- dilogarithm
spence_p = _special("spence")     # scipy's convention: spence(x) = int_1^x log(t)/(1-t) dt
# spence'(x) = log(x) / (1 - x), -1 at x = 1 (branch: the Taylor line -1 + (x - 1)/2, so spence''(1) = 1/2)
_defjvp_unary(spence_p, lambda ans, x: where(eq(x, 1), add(_c(x, -1.5), mul(_c(x, 0.5), x)),
                                             div(log(x), sub(_c(x, 1), where(eq(x, 1), _c(x, 0), x)))))

SPECIAL_UNARY = [erfc_p, erfinv_p, erfcx_p, ndtr_p, ndtri_p, log_ndtr_p, i0_p, i0e_p, i1_p, i1e_p,
                 k0_p, k0e_p, k1_p, k1e_p, j0_p, j1_p, y0_p, y1_p, exp1_p, expi_p,
                 ellipk_p, ellipkm1_p, ellipe_p, spence_p]
SPECIAL_BINARY = [yn_p, expn_p]
