"""Elementary functions of xp.special (scipy.special names, signatures and edge values).

scipy.special, run with SCIPY_ARRAY_API=1 on this namespace, finds these through
`xp.special.<name>`; they must give scipy's values (exact zeros of the degree functions, the
x = 0 conventions of xlogy/entr/rel_entr, logit's infinities, ...) and run under jit, vmap and
grad. Three primitives (cbrt, exp2, logistic) are bound directly; everything else is a
composition of namespace functions. Where a composition's derivative would be wrong or NaN at a
boundary, either the inputs of the branch not taken are made safe (double where), a Taylor
branch near the removable singularity gives every derivative (sinc, exprel, Box-Cox at
lambda = 0), or the derivative is written out with custom_jvp (xlogy, xlog1py, entr, rel_entr,
kl_div: their one-sided limits, e.g. d/dx xlogy(x, 0) = -inf, are what finite differences of
scipy give; a zero tangent times such an infinite slope stays 0, see `_lin`; the second
derivative at exactly those points is not provided and reads 0). Validation and promotion happen once, here: real inputs only, integer/bool ->
float64, float32 stays float32, all arguments to one dtype (Python scalars weak).
"""
from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np

from transforms import custom_jvp, stop_gradient
from transforms.core import EVAL, trace_state, bind
from transforms.primitives import elementwise as P

from .._helpers import normalize_axes, weak_scalar, wrap
from ._promote import in_float64, raw_floats
from .. import _creation, _elementwise, _manipulation, _searching, _statistical

# The namespace functions used here, as `xp.<name>`, taken from their modules: the package itself
# (array_namespace/__init__.py) imports this module, so importing it here would be an import cycle.
xp = SimpleNamespace(
    inf=math.inf, nan=math.nan, full=_creation.full, where=_searching.where, sum=_statistical.sum,
    max=_statistical.max, broadcast_arrays=_manipulation.broadcast_arrays, reshape=_manipulation.reshape,
    squeeze=_manipulation.squeeze,
    **{n: getattr(_elementwise, n) for n in ("abs", "cos", "exp", "expm1", "isfinite", "isinf", "isnan", "log",
                                             "log1p", "pow", "remainder", "round", "sign", "sin", "sqrt", "tan")})

__all__ = ["cbrt", "exp2", "exp10", "cosm1", "sindg", "cosdg", "tandg", "cotdg", "radian",
           "expit", "logit", "log_expit", "sinc", "huber", "pseudo_huber", "boxcox", "boxcox1p",
           "inv_boxcox", "inv_boxcox1p", "xlogy", "xlog1py", "entr", "rel_entr", "kl_div", "exprel",
           "softmax", "log_softmax", "logsumexp"]

_where = xp.where


# ------------------------------------------------------------------ validation / promotion
def _floats(fname, names, *args):
    """The arguments as Arrays of one real floating dtype (scipy's ufunc promotion)."""
    return [wrap(v) for v in raw_floats(fname, names, args)[0]]


def _unary_prim(fname, prim):
    def f(x, /):
        (x,) = _floats(fname, ("x",), x)
        return wrap(bind(prim, x._v))
    f.__name__ = fname
    f.__doc__ = f"scipy.special.{fname}, elementwise (one primitive)."
    return f


def _with_jvp(rule):
    """Decorator: the function's derivative is `rule(primals, tangents) -> (out, t_out)`.

    Eager calls (no transform active) run the primal directly: nothing can differentiate
    them, and custom_jvp would stage a jaxpr on every call."""
    def deco(primal):
        cj = custom_jvp(primal)
        cj.defjvp(rule)

        def f(*args):
            return primal(*args) if trace_state.trace is EVAL else cj(*args)
        return f
    return deco


def _lin(t, d):
    """t * d for a tangent t, also where d is +-inf: there (t * +-max) * max, which is +-inf for
    t != 0 and 0 for t = 0 (a plain product gives NaN for a zero tangent, which would poison the
    other argument's forward-mode derivative). Linear in t, so reverse mode transposes it."""
    big = float(np.finfo(d.dtype).max)
    inf = xp.isinf(d)
    return (t * _where(inf, xp.sign(d) * big, d)) * _where(inf, big, 1.0)


def _poly(z, coefs):
    """sum(coefs[k] * z**k) by Horner."""
    out = coefs[-1]
    for c in coefs[-2::-1]:
        out = out * z + c
    return out


# Taylor coefficients near the removable singularities (truncation error < 1e-17 below
# the thresholds used; the branch gives every derivative at the singular point itself)
_EXPREL = [1.0 / math.factorial(k + 1) for k in range(8)]          # (e^z - 1) / z, |z| < 1e-2
_LOG1PDIV = [(-1.0) ** k / (k + 1) for k in range(8)]              # log1p(u) / u, |u| < 1e-2
_SINC = [(-1.0) ** k / math.factorial(2 * k + 1) for k in range(5)]  # sin(y)/y in y^2, |y| < 0.1
_SMALL = 1e-2


def _exprel_raw(z):
    """(e^z - 1) / z on Arrays, smooth through z = 0 (no inf handling); where e^z would overflow but e^z / z
    need not (float32: 88.7 < z < 93.2, float64: 709.8 < z < 716.4), e^(z/2) (e^(z/2) / z) (z/2 is exact)."""
    small = xp.abs(z) < _SMALL
    zs = _where(small, z, 0.0)
    zb = _where(small, 1.0, z)
    far = z > float(np.log(np.finfo(np.dtype(z.dtype.name)).max)) - 1
    half = xp.exp(_where(far, z, 1.0) * 0.5)
    return _where(small, _poly(zs, _EXPREL), _where(far, half * (half / zb), xp.expm1(zb) / zb))


# --------------------------------------------------------------------------- exponentials
cbrt = _unary_prim("cbrt", P.cbrt_p)
exp2 = _unary_prim("exp2", P.exp2_p)
expit = _unary_prim("expit", P.logistic_p)


def exp10(x, /):
    """10**x."""
    (x,) = _floats("exp10", ("x",), x)
    return xp.pow(10.0, x)


def exprel(x, /):
    """(exp(x) - 1) / x, 1 at x = 0 (with derivatives 1/2, 1/3, ... there)."""
    (x,) = _floats("exprel", ("x",), x)
    return _where(x == xp.inf, xp.inf, _exprel_raw(x))


def cosm1(x, /):
    """cos(x) - 1 without cancellation for small x: -2 sin(x/2)^2."""
    (x,) = _floats("cosm1", ("x",), x)
    s = xp.sin(x * 0.5)
    return -2.0 * s * s


def logit(x, /):
    """log(x / (1 - x)); log1p form near 1/2, -inf at 0, inf at 1, NaN outside [0, 1]."""
    (x,) = _floats("logit", ("x",), x)
    mid = (x >= 0.3) & (x <= 0.65)
    xm = _where(mid, x, 0.5)
    xo = _where(mid, 0.25, x)
    return _where(mid, xp.log1p((2.0 * xm - 1.0) / (1.0 - xm)), xp.log(xo / (1.0 - xo)))


def log_expit(x, /):
    """log(expit(x)) without overflow: x - log1p(e^x) for x < 0, -log1p(e^-x) otherwise."""
    (x,) = _floats("log_expit", ("x",), x)
    neg = x < 0
    xn = _where(neg, x, 0.0)
    xpos = _where(neg, 0.0, x)
    return _where(neg, xn - xp.log1p(xp.exp(xn)), -xp.log1p(xp.exp(-xpos)))


def sinc(x, /):
    """numpy.sinc (what scipy.special.sinc is): sin(pi x) / (pi x), 1 at 0."""
    (x,) = _floats("sinc", ("x",), x)
    y = x * math.pi
    small = xp.abs(y) < 0.1
    ys = _where(small, y, 0.0)
    yb = _where(small, 1.0, y)
    return _where(small, _poly(ys * ys, _SINC), xp.sin(yb) / yb)


# ------------------------------------------------------------------------ degree functions
_LOSSTH = 1.0e14     # scipy returns 0 beyond this |x| (and for +-inf)


def _deg_reduce(x):
    """(r in radians with |r| <= pi/4, quadrant q in {0,1,2,3}) with x = 90 q + r (mod 360), exactly."""
    m = wrap(bind(P.rem_p, x._v, weak_scalar(360.0, x.dtype)))   # fmod: exact, sign of x
    n = xp.round(m / 90.0)
    r = m - n * 90.0                                               # exact (Sterbenz)
    q = xp.remainder(n, 4.0)
    return r, r * (math.pi / 180.0), q


def _lost(x, out):
    return _where(xp.abs(x) > _LOSSTH, 0.0, out)


def sindg(x, /):
    """sin of x degrees; exact 0 and +-1 at multiples of 90."""
    (x,) = _floats("sindg", ("x",), x)
    _, rr, q = _deg_reduce(x)
    s, c = xp.sin(rr), xp.cos(rr)
    return _lost(x, _where(q == 0, s, _where(q == 1, c, _where(q == 2, -s, -c))))


def cosdg(x, /):
    """cos of x degrees; exact 0 and +-1 at multiples of 90."""
    (x,) = _floats("cosdg", ("x",), x)
    _, rr, q = _deg_reduce(x)
    s, c = xp.sin(rr), xp.cos(rr)
    return _lost(x, _where(q == 0, c, _where(q == 1, -s, _where(q == 2, -c, s))))


def _tan_reduced(fname, x, cot):
    (x,) = _floats(fname, ("x",), x)
    r, rr, q = _deg_reduce(x)
    t = xp.tan(rr)
    # exactly +-1 at odd multiples of 45 degrees, keeping tan's derivatives
    t = t + stop_gradient(_where(xp.abs(r) == 45.0, xp.sign(r) - t, 0.0))
    odd = (q == 1) | (q == 3)
    recip = odd if not cot else ~odd           # where the answer is -+1/t
    pole = recip & (r == 0)
    ts = _where(recip & ~pole, t, 1.0)          # safe where the reciprocal is not taken
    out = (-1.0 / ts) if not cot else (1.0 / ts)
    out = _where(recip, out, t if not cot else -t)
    return _lost(x, _where(pole, xp.inf, out))


def tandg(x, /):
    """tan of x degrees; exact 0, +-1, and +inf at the poles, as scipy."""
    return _tan_reduced("tandg", x, cot=False)


def cotdg(x, /):
    """cot of x degrees; exact 0, +-1, and +inf at the poles, as scipy."""
    return _tan_reduced("cotdg", x, cot=True)


def radian(d, m, s, /):
    """Degrees, arcminutes, arcseconds to radians."""
    d, m, s = _floats("radian", ("d", "m", "s"), d, m, s)
    return ((d * 60.0 + m) * 60.0 + s) * (math.pi / 648000.0)


# ---------------------------------------------------------------------------- loss functions
def huber(delta, r, /):
    """r^2/2 for |r| <= delta, delta (|r| - delta/2) beyond; inf for delta < 0."""
    delta, r = _floats("huber", ("delta", "r"), delta, r)
    a = xp.abs(r)
    out = _where(a <= delta, 0.5 * r * r, delta * (a - 0.5 * delta))
    return _where(delta < 0, xp.inf, out)


def pseudo_huber(delta, r, /):
    """delta^2 (sqrt(1 + (r/delta)^2) - 1), written delta r q with q = v / (1 + sqrt(1 + v^2)),
    v = r / delta (no cancellation at small r, no overflow at large v); 0 at delta = 0, inf for
    delta < 0."""
    delta, r = _floats("pseudo_huber", ("delta", "r"), delta, r)
    dzero = delta == 0
    v = r / _where(dzero, 1.0, delta)
    small = xp.abs(v) <= 1.0
    vs = _where(small, v, 0.0)
    vb = _where(small, 1.0, v)
    ivb = 1.0 / vb
    q = _where(small, vs / (1.0 + xp.sqrt(1.0 + vs * vs)), xp.sign(vb) / (xp.abs(ivb) + xp.sqrt(ivb * ivb + 1.0)))
    out = _where(dzero | ((r == 0) & ~xp.isfinite(delta)), 0.0, delta * r * q)   # scipy: 0 at r = 0
    return _where(delta < 0, xp.inf, out)


# -------------------------------------------------------------------------------- Box-Cox
def _boxcox_of_log(L, lmbda):
    """(e^(lmbda L) - 1) / lmbda, L at lmbda = 0, smooth in lmbda through 0."""
    z = lmbda * L
    small = (xp.abs(z) < _SMALL) | (lmbda == 0)
    zs = _where(small & xp.isfinite(z), z, 0.0)
    zb = _where(small, 1.0, z)
    lb = _where(small, 1.0, lmbda)
    # where e^z overflows but e^z / lmbda need not (boxcox(2.9e19, 15.9) = 9.8e307): e^(z - log|lmbda|), the -1
    # below its last digit from half the exponent range on
    big = zb > 0.5 * math.log(float(np.finfo(np.dtype(L.dtype.name)).max))
    far = xp.exp(_where(big, zb, 0.0) - xp.log(xp.abs(lb)))
    return _where(small, L * _poly(zs, _EXPREL), _where(big, xp.sign(lb) * far, xp.expm1(zb) / lb))


def _inv_boxcox_log(y, lmbda):
    """log1p(lmbda y) / lmbda, y at lmbda = 0, smooth in lmbda through 0."""
    u = lmbda * y
    small = (xp.abs(u) < _SMALL) | (lmbda == 0)
    us = _where(small & xp.isfinite(u), u, 0.0)
    ub = _where(small, 1.0, u)
    lb = _where(small, 1.0, lmbda)
    return _where(small, y * _poly(us, _LOG1PDIV), xp.log1p(ub) / lb)


def boxcox(x, lmbda, /):
    """(x^lmbda - 1) / lmbda, log(x) at lmbda = 0."""
    x, lmbda = _floats("boxcox", ("x", "lmbda"), x, lmbda)
    return _boxcox_of_log(xp.log(x), lmbda)


def boxcox1p(x, lmbda, /):
    """((1 + x)^lmbda - 1) / lmbda, log1p(x) at lmbda = 0."""
    x, lmbda = _floats("boxcox1p", ("x", "lmbda"), x, lmbda)
    return _boxcox_of_log(xp.log1p(x), lmbda)


def inv_boxcox(y, lmbda, /):
    """The inverse of boxcox: (1 + lmbda y)^(1/lmbda), exp(y) at lmbda = 0."""
    y, lmbda = _floats("inv_boxcox", ("y", "lmbda"), y, lmbda)
    return xp.exp(_inv_boxcox_log(y, lmbda))


def inv_boxcox1p(y, lmbda, /):
    """The inverse of boxcox1p: (1 + lmbda y)^(1/lmbda) - 1, expm1(y) at lmbda = 0."""
    y, lmbda = _floats("inv_boxcox1p", ("y", "lmbda"), y, lmbda)
    return xp.expm1(_inv_boxcox_log(y, lmbda))


# ------------------------------------------------------------- x log y and the entropies
def _xlogy_value(x, ly, y_is_nan):
    return _where((x == 0) & ~y_is_nan, 0.0, x * ly)


def _xlogy_primal(x, y):
    return _xlogy_value(x, xp.log(y), xp.isnan(y))


def _xlogy_rule(primals, tangents):
    x, y = primals
    tx, ty = tangents
    x0 = x == 0
    dy = _where(x0, 0.0, x / _where(x0, 1.0, y))
    return _xlogy_primal(x, y), _lin(tx, xp.log(y)) + ty * dy


def _xlog1py_primal(x, y):
    return _xlogy_value(x, xp.log1p(y), xp.isnan(y))


def _xlog1py_rule(primals, tangents):
    x, y = primals
    tx, ty = tangents
    x0 = x == 0
    dy = _where(x0, 0.0, x / (1.0 + _where(x0, 0.0, y)))
    return _xlog1py_primal(x, y), _lin(tx, xp.log1p(y)) + ty * dy


_xlogy = _with_jvp(_xlogy_rule)(_xlogy_primal)
_xlog1py = _with_jvp(_xlog1py_rule)(_xlog1py_primal)


def xlogy(x, y, /):
    """x * log(y), 0 where x = 0 (unless y is NaN); d/dx = log(y) there too."""
    x, y = _floats("xlogy", ("x", "y"), x, y)
    return _xlogy(*xp.broadcast_arrays(x, y))


def xlog1py(x, y, /):
    """x * log1p(y), 0 where x = 0 (unless y is NaN); d/dx = log1p(y) there too."""
    x, y = _floats("xlog1py", ("x", "y"), x, y)
    return _xlog1py(*xp.broadcast_arrays(x, y))


def _entr_primal(x):
    pos = x > 0
    return _where(pos, -x * xp.log(_where(pos, x, 1.0)), _where(x == 0, 0.0, _where(xp.isnan(x), x, -xp.inf)))


def _entr_rule(primals, tangents):
    (x,), (t,) = primals, tangents
    neg = x < 0
    d = _where(neg, 0.0, -(xp.log(_where(neg, 1.0, x)) + 1.0))     # +inf at 0: the one-sided limit
    return _entr_primal(x), _lin(t, d)


_entr = _with_jvp(_entr_rule)(_entr_primal)


def entr(x, /):
    """-x log(x) for x > 0, 0 at 0, -inf for x < 0; derivative -log(x) - 1 (+inf at 0)."""
    (x,) = _floats("entr", ("x",), x)
    return _entr(x)


def _rel_parts(x, y):
    """(x, y > 0; x = 0 <= y; safe x; safe y; log(x / y) also where x / y over- or underflows). Where x / y is
    near 1 the log is log1p((x - y) / y), x - y exact: log of the rounded ratio kept only eps / |x / y - 1| of its
    digits (rel_entr(0.5, 0.5000001) was 1.6e-9 off)."""
    dom = (x > 0) & (y > 0)
    at0 = (x == 0) & (y >= 0)
    xs, ys = _where(dom, x, 1.0), _where(dom, y, 1.0)
    ratio = xs / ys
    ok = xp.isfinite(ratio) & (ratio > 0)
    near = (ratio > 0.5) & (ratio < 2.0)
    lr = _where(ok, xp.log(_where(ok, ratio, 1.0)), xp.log(xs) - xp.log(ys))
    lr = _where(near, xp.log1p((xs - ys) / ys), lr)
    return dom, at0, xs, ys, lr


def _log_ratio_at0(x, y, at0):
    """log(x / y) on x = 0 <= y: -inf, with d/dx = 1/x = inf (the one-sided limits)."""
    return xp.log(_where(at0, x, 1.0)) - xp.log(_where(at0, y, 1.0))


def _rel_entr_primal(x, y):
    dom, at0, xs, ys, lr = _rel_parts(x, y)
    out = _where(dom, xs * lr, _where(at0, 0.0, xp.inf))
    return _where(xp.isnan(x) | xp.isnan(y), xp.nan, out)


def _rel_entr_rule(primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    dom, at0, xs, ys, lr = _rel_parts(x, y)
    dx = _where(dom, lr, _where(at0, _log_ratio_at0(x, y, at0), 0.0)) + 1.0
    dy = _where(dom, -xs / ys, 0.0)
    return _rel_entr_primal(x, y), _lin(tx, dx) + ty * dy


def _kl_div_primal(x, y):
    dom, at0, xs, ys, lr = _rel_parts(x, y)
    out = _where(dom, xs * lr - (xs - ys), _where(at0, y, xp.inf))   # (x - y exact where x, y are near)
    return _where(xp.isnan(x) | xp.isnan(y), xp.nan, out)


def _kl_div_rule(primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    dom, at0, xs, ys, lr = _rel_parts(x, y)
    dx = _where(dom, lr, _where(at0, _log_ratio_at0(x, y, at0), 0.0))
    dy = _where(dom, 1.0 - xs / ys, _where(at0, 1.0, 0.0))
    return _kl_div_primal(x, y), _lin(tx, dx) + ty * dy


_rel_entr = _with_jvp(_rel_entr_rule)(_rel_entr_primal)
_kl_div = _with_jvp(_kl_div_rule)(_kl_div_primal)


def rel_entr(x, y, /):
    """x log(x / y) for x, y > 0; 0 for x = 0, y >= 0; inf otherwise."""
    x, y = _floats("rel_entr", ("x", "y"), x, y)
    return _rel_entr(*xp.broadcast_arrays(x, y))


def kl_div(x, y, /):
    """x log(x / y) - x + y for x, y > 0; y for x = 0, y >= 0; inf otherwise. Near x = y the terms cancel to
    (x - y)^2 / 2y: it is x log(x / y) - (x - y), x - y exact, which keeps ~eps y / |x - y| of the value's digits
    (x log(x / y) - x + y: eps y^2 / (x - y)^2, scipy's, 2e-4 off at kl_div(54.08339, 54.083332)); float32 in
    float64, as scipy's float32 loop (float32 kl_div(621.2855, 621.4791) was 0, not 3e-5)."""
    x, y = _floats("kl_div", ("x", "y"), x, y)
    return in_float64(_kl_div, xp.broadcast_arrays(x, y))


# ------------------------------------------------------------------ softmax and logsumexp
def _axes(fname, a, axis):
    return normalize_axes(axis, a.ndim, fname)


def softmax(x, axis=None):
    """exp(x) / sum(exp(x)) along axis (all axes by default), shifted by the max."""
    (x,) = _floats("softmax", ("x",), x)
    axes = _axes("softmax", x, axis)
    if x.size == 0:
        return x
    m = stop_gradient(xp.max(x, axis=axes, keepdims=True))
    e = xp.exp(x - m)
    return e / xp.sum(e, axis=axes, keepdims=True)


def log_softmax(x, axis=None):
    """x - logsumexp(x) along axis, shifted by the max (taken as 0 where it is not finite)."""
    (x,) = _floats("log_softmax", ("x",), x)
    axes = _axes("log_softmax", x, axis)
    if x.size == 0:
        return x
    m = stop_gradient(xp.max(x, axis=axes, keepdims=True))
    tmp = x - _where(xp.isfinite(m), m, 0.0)
    return tmp - xp.log(xp.sum(xp.exp(tmp), axis=axes, keepdims=True))


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    """log(|sum(b * exp(a))|) along axis, as scipy.special.logsumexp (real inputs).

    The largest terms are split off (their weights c sum exactly) so that the rest enters
    through log1p; elements with b = 0 are ignored (even when a is inf or NaN), yet keep
    d/db = exp(a) / sum. Without return_sign a negative sum gives NaN."""
    if b is None:
        (a,) = _floats("logsumexp", ("a",), a)
    else:
        a, b = xp.broadcast_arrays(*_floats("logsumexp", ("a", "b"), a, b))
    if a.ndim == 0:
        a = xp.reshape(a, (1,))
        b = None if b is None else xp.reshape(b, (1,))
    axes = _axes("logsumexp", a, axis)
    if a.size == 0:
        shape = tuple(1 if i in axes else n for i, n in enumerate(a.shape))
        out = xp.full(shape, -xp.inf, dtype=a.dtype)
        sgn = xp.sign(out)                       # scipy: -inf with sign -1
        nan_if_negative = False
    else:
        out, sgn = _logsumexp(a, b, axes)
        nan_if_negative = not return_sign
    if not keepdims:
        out = xp.squeeze(out, axis=axes)
        sgn = xp.squeeze(sgn, axis=axes)
    if return_sign:
        return out, sgn
    return _where(sgn < 0, xp.nan, out) if nan_if_negative else out


def _logsumexp(a, b, axes):
    am = a if b is None else _where(b != 0, a, -xp.inf)
    m_raw = stop_gradient(xp.max(am, axis=axes, keepdims=True))
    finite = xp.isfinite(m_raw)
    m = _where(finite, m_raw, 0.0)
    if b is None:
        e = xp.exp(a - m)
        w = e
    else:
        # b = 0 terms contribute 0 but keep their derivative in b (unless exp would overflow)
        bound = float(np.log(np.finfo(a.dtype).max)) - 1.0
        keep = (b != 0) | (a - m < bound)
        e = xp.exp(_where(keep, a, -xp.inf) - m)
        w = b * e
    top = (am == m_raw) & finite
    c = xp.sum(_where(top, w, 0.0), axis=axes, keepdims=True)
    rest = xp.sum(_where(top, 0.0, w), axis=axes, keepdims=True)
    split = c != 0
    r = rest / _where(split, c, 1.0)
    sgn1 = xp.sign(r + 1.0) * xp.sign(c)
    r2 = _where(r < -1.0, -r - 2.0, r)
    out1 = xp.log1p(r2) + xp.log(xp.abs(_where(split, c, 1.0))) + m
    total = c + rest
    out2 = xp.log(xp.abs(total)) + m
    return _where(split, out1, out2), _where(split, sgn1, xp.sign(total))
