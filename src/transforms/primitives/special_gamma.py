"""Primitives of the gamma family of xp.special: lgamma, digamma, polygamma, Hurwitz zeta, the
regularized incomplete gamma functions P and Q with their x-derivative (the density) and
a-derivative of P, and their inverses in x.

lgamma/digamma lower to XLA's CHLO ops. zeta and polygamma lower to compositions (`*_impl`
below, staged into the lowering by xla/lower_special_gamma.py) around CHLO's zeta, which is
right only for q > 0: scipy also sums integer-order zeta at negative non-integer q. The
incomplete gamma has no XLA op at all: its lowerings are while loops (series, continued
fraction, Halley's method for the inverses) and Temme's expansion for large a. Keeping these as
primitives makes a jaxpr see one equation with exact jvp rules (tangents linear in t), so reverse
mode never has to differentiate a loop. Operands share one floating dtype; the namespace promotes
(array_namespace/special/_gamma.py) and fixes up scipy's special values.
"""
from __future__ import annotations

import numpy as np

from ..core import bind, get_aval
from ..rules import jvp_gaps
from . import elementwise as E
from . import reductions as R
from . import structural as S
from .elementwise import _binop, _c, _unop, add, defjvp, div, div0, mul, mul0, neg, sub
from .raw_ops import abs_, and_, eq, exp, floor, ge, gt, le, log, lt, ne, not_, or_, where


def lgamma(x): return bind(lgamma_p, x)
def digamma(x): return bind(digamma_p, x)
def polygamma(n, x): return bind(polygamma_p, n, x)
def zeta(x, q): return bind(zeta_p, x, q)


# ------------------------------------------------------------ raw-value helpers for *_impl
def is_int(x): return eq(floor(x), x)
def nan_like(x): return _c(x, float("nan"))
def inf_like(x): return _c(x, float("inf"))


def any_(b):
    """A bool scalar: whether any element of b is true."""
    return bind(R.reduce_or_p, b, axes=tuple(range(len(get_aval(b).shape)))) if get_aval(b).shape else b


def while_raw(cond, body, init):
    """while_loop on raw values: cond(*carry) -> bool scalar, body(*carry) -> carry (same avals)."""
    from ..control_flow_while import while_raw as loop   # (function-local: the loop module imports primitives)
    return loop(cond, body, init)


def _no_tangent(fname, arg, why):
    def rule(t, ans, *primals):
        raise NotImplementedError(f"{fname}: the derivative with respect to {arg} is not implemented ({why})")
    return rule


# ---------------------------------------------------------------- lgamma: log|Gamma(x)|
lgamma_p = _unop("lgamma", lambda t, ans, x: mul0(t, digamma(x)))

# ------------------------------------------------------------------- digamma = psi(x)
digamma_p = _unop("digamma", lambda t, ans, x: mul0(t, zeta(_c(x, 2), x)))   # trigamma = zeta(2, x)

# ------------------------------------------- CHLO's Hurwitz zeta (right for q > 0 only)
zeta_chlo_p = _binop("zeta_chlo")
jvp_gaps[zeta_chlo_p] = ("internal to the lowering of zeta (zeta_impl); zeta_p carries the derivative "
                         "and is what jaxprs contain")

# ------------------------------------------------------------- Hurwitz zeta(x, q) as scipy
ZETA_LOOP = 64   # negative non-integer q down to -ZETA_LOOP: the terms summed one by one, as scipy


def zeta_impl(x, q):
    """scipy's zeta(x, q): inf at x == 1 and at q a non-positive integer, NaN for x < 1 and for
    negative q with non-integer x. For negative non-integer q and integer x: above -ZETA_LOOP the
    terms (q + k)^-x are summed until q + m >= 1 (exact where they mirror: x odd, q + 1/2 an
    integer), then CHLO's zeta (Euler-Maclaurin) for the rest; below it, in closed form (no loop
    growing with |q|), as the terms with q + k < 0 are (-1)^x (c + j)^-x, c = ceil(q) - q:
    zeta(x, q) = (-1)^x (zeta(x, c) - zeta(x, 1 - q)) + zeta(x, q - floor(q))."""
    xi = is_int(x)
    shift = and_(and_(lt(q, _c(q, 0)), xi), not_(is_int(q)))
    near = and_(shift, ge(q, _c(q, -ZETA_LOOP)))
    far = and_(shift, lt(q, _c(q, -ZETA_LOOP)))
    m = where(near, floor(sub(_c(q, 1), q)), _c(q, 0))     # smallest m with q + m >= 1
    odd = ne(sub(x, mul(_c(x, 2), floor(mul(x, _c(x, 0.5))))), _c(x, 0))

    def cond(k, s, kmax):
        return lt(k, kmax)

    def body(k, s, kmax):
        b = add(q, k)
        term = exp(mul(neg(x), log(abs_(b))))
        term = where(and_(lt(b, _c(b, 0)), odd), neg(term), term)
        return add(k, _c(k, 1)), add(s, where(lt(k, m), term, _c(term, 0))), kmax

    kmax = bind(R.reduce_max_p, m, axes=tuple(range(len(get_aval(m).shape)))) if get_aval(m).shape else m
    _, s, _ = while_raw(cond, body, [S.zeros_like(kmax), S.zeros_like(m), kmax])   # <= ZETA_LOOP + 1 trips
    near_v = add(s, bind(zeta_chlo_p, x, add(q, m)))
    c = where(far, sub(bind(E.ceil_p, q), q), _c(q, 0.5))
    neg_terms = sub(bind(zeta_chlo_p, x, c), bind(zeta_chlo_p, x, where(far, sub(_c(q, 1), q), _c(q, 2))))
    far_v = add(where(odd, neg(neg_terms), neg_terms), bind(zeta_chlo_p, x, where(far, sub(q, floor(q)), _c(q, 0.5))))
    out = where(far, far_v, near_v)
    out = where(and_(lt(q, _c(q, 0)), not_(xi)), nan_like(out), out)
    out = where(and_(le(q, _c(q, 0)), is_int(q)), inf_like(out), out)
    out = where(lt(x, _c(x, 1)), nan_like(out), out)
    return where(eq(x, _c(x, 1)), inf_like(out), out)


zeta_p = _binop("zeta")
defjvp(zeta_p, _no_tangent("zeta", "x", "no closed form; only d/dq is provided"),
       lambda t, ans, x, q: mul0(t, neg(mul(x, zeta(add(x, _c(x, 1)), q)))))


# ------------------------------------------------------- polygamma(n, x), n integer-valued
def psi_impl(x):
    """digamma with scipy's values at the signed zeros (-inf at +0, +inf at -0) and at +inf."""
    d = digamma(x)
    d = where(eq(x, inf_like(x)), inf_like(d), d)
    return where(eq(x, _c(x, 0)), neg(div(_c(x, 1), x)), d)


def polygamma_impl(n, x):
    """scipy's polygamma: psi(x) for n == 0, else (-1)^(n+1) n! zeta(n+1, x); NaN unless n is a
    non-negative integer."""
    np1 = add(n, _c(n, 1))
    odd = ne(sub(n, mul(_c(n, 2), floor(mul(n, _c(n, 0.5))))), _c(n, 0))
    sign = where(odd, _c(n, 1), _c(n, -1))
    zn = zeta(np1, x)
    val = mul(sign, where(eq(zn, _c(zn, 0)), zn, mul(exp(lgamma(np1)), zn)))
    val = where(eq(x, inf_like(x)), _c(val, 0), val)
    val = where(eq(n, _c(n, 0)), psi_impl(x), val)
    return where(or_(lt(n, _c(n, 0)), not_(is_int(n))), nan_like(val), val)


polygamma_p = _binop("polygamma")
defjvp(polygamma_p, _no_tangent("polygamma", "n", "n is an integer order"),
       lambda t, ans, n, x: mul0(t, polygamma(add(n, _c(n, 1)), x)))

# ------------------------------------- regularized incomplete gamma P(a, x), Q(a, x) = 1 - P
# No XLA op exists: the lowering runs the classic iterations as while loops (a power series for
# P, Legendre's continued fraction for Q at x > a, a series for Q at small x), choosing between
# them as scipy's cephes does; each loop freezes an element once it has converged and runs
# until every element has. d/da has no closed form: igamma_grad_a carries the a-derivative of
# the same iterations (forward-mode dual numbers through the recurrences).
IGAMMA_MAXIT = 5000        # enough for a up to IGAMMA_ASY_A near x ~ a (terms needed grow like sqrt(a))
_EULER = 0.5772156649015329
# (-1)^k zeta(k) / k, k = 2..26: lgamma(1 + a) = -euler a + sum_k c_k a^k for |a| < 1
_LG1P = [0.8224670334241132, -0.40068563438653143, 0.27058080842778454, -0.20738555102867398,
         0.1695571769974082, -0.1440498967688461, 0.12550966952474304, -0.11133426586956469,
         0.1000994575127818, -0.09095401714582904, 0.083353840546109, -0.0769325164113522,
         0.07143294629536133, -0.06666870588242046, 0.06250095514121304, -0.058823978658684585,
         0.055555767627403614, -0.05263167937961666, 0.05000004769810169, -0.047619070330142226,
         0.04545455629320467, -0.04347826605304026, 0.04166666915034121, -0.04000000119214014,
         0.03846153903467518]


def _eps(x): return float(np.finfo(get_aval(x).dtype).eps)
def log1p(x): return bind(E.log1p_p, x)
def expm1(x): return bind(E.expm1_p, x)
def ge(x, y): return bind(E.ge_p, x, y)
def isnan(x): return ne(x, x)


def _common(*xs):
    """Strong-typed operands broadcast to one shape (loop carries need fixed avals)."""
    shape = E.broadcast_shapes(*[get_aval(x).shape for x in xs])
    return [S.broadcast_to_shape(E.convert_element_type(x, get_aval(x).dtype, False), shape) for x in xs]


def _loop(step, carry, maxit, done0=None):
    """Run step(*carry) -> (carry, done) elementwise until every element is done (or maxit);
    an element's carry stops changing once it is done (or if done0 says so from the start)."""
    if done0 is None:
        done0 = lt(carry[0], carry[0])             # all False, of the carry's shape
    n0 = bind(R.reduce_max_p, S.zeros_like(carry[0]), axes=tuple(range(len(get_aval(carry[0]).shape)))) \
        if get_aval(carry[0]).shape else S.zeros_like(carry[0])

    def cond(n, done, *c):
        return and_(lt(n, _c(n, maxit)), any_(not_(done)))

    def body(n, done, *c):
        new, fin = step(*c)
        new = [where(done, o, v) for o, v in zip(c, new)]
        return [add(n, _c(n, 1)), or_(done, fin)] + new
    return while_raw(cond, body, [n0, done0] + list(carry))[2:]


def lgam1p(a):
    """lgamma(1 + a), without the rounding of 1 + a for small |a| (Taylor series below 0.2)."""
    small = lt(abs_(a), _c(a, 0.2))
    s = where(small, a, _c(a, 0))
    acc = _c(s, _LG1P[-1])
    for ck in reversed(_LG1P[:-1]):
        acc = add(mul(acc, s), _c(s, ck))
    ser = mul(s, add(mul(acc, s), _c(s, -_EULER)))
    return where(small, ser, lgamma(add(a, _c(a, 1))))


def _stirling_corr(a):
    """lgamma(a) - ((a - 1/2) log a - a + log(2 pi)/2) for a >= 20 (error below 1e-17)."""
    r = div(_c(a, 1), a)
    r2 = mul(r, r)
    acc = _c(a, 1 / 1188)
    for ck in (-1 / 1680, 1 / 1260, -1 / 360, 1 / 12):
        acc = add(mul(acc, r2), _c(a, ck))
    return mul(acc, r)


def _atanh_parts(a, x):
    """u = (x - a)/(x + a), whether |u| < 0.2, u there (0 elsewhere) and S = 1/3 + u^2/5 + u^4/7 + ...
    (so that 2 atanh(u) = 2u + 2u^3 S, log(x/a) = 2 atanh(u))."""
    u = div(sub(x, a), add(x, a))
    small = lt(abs_(u), _c(u, 0.2))
    us = where(small, u, _c(u, 0))
    u2 = mul(us, us)
    acc = _c(u, 1 / 25)
    for k in range(23, 1, -2):
        acc = add(mul(acc, u2), _c(u, 1 / k))
    return u, small, us, acc


def _a_log1pmx(a, x):
    """a (log(x/a) - (x - a)/a) = a log(x/a) - x + a without cancellation near x = a: with
    u = (x - a)/(x + a), log(x/a) = 2 atanh(u), so it is -(x - a) u + 2 a (u^3/3 + u^5/5 + ...)."""
    d = sub(x, a)
    u, small, us, acc = _atanh_parts(a, x)
    ser = add(mul(neg(d), us), mul(mul(_c(a, 2), a), mul(mul(us, mul(us, us)), acc)))
    return where(small, ser, sub(mul(a, log(div(x, a))), d))


def _log_xa_ex_g1(a, x):
    """log(x^a e^-x / Gamma(a + 1)); for a >= 20 written around x = a, as
    a log(x/a) - x + a - log(2 pi a) / 2 - corr(a), so the large terms cancel exactly."""
    big = ge(a, _c(a, 20))
    ab = where(big, a, _c(a, 20))
    asy = sub(sub(_a_log1pmx(ab, x), mul(_c(a, 0.5), log(mul(_c(a, 2 * np.pi), ab)))), _stirling_corr(ab))
    direct = sub(sub(mul(a, log(x)), x), lgam1p(where(big, _c(a, 1), a)))
    return where(big, asy, direct)


def _p_series(a, x, deriv):
    """P = x^a e^-x / Gamma(a+1) * sum_n x^n / ((a+1)...(a+n)); with deriv also dP/da."""
    eps = _eps(x)

    def step(n, t, s, dt, ds):
        n = add(n, _c(n, 1))
        r = div(x, add(a, n))
        t2 = mul(t, r)
        fin = le(abs_(t2), mul(_c(s, eps), abs_(s)))
        if deriv:
            dt2 = sub(mul(dt, r), div(t2, add(a, n)))
            fin = and_(fin, le(abs_(dt2), mul(_c(s, eps), add(abs_(ds), abs_(s)))))
            return [n, t2, add(s, t2), dt2, add(ds, dt2)], fin
        return [n, t2, add(s, t2), dt, ds], fin
    one, zero = add(S.zeros_like(x), _c(x, 1)), S.zeros_like(x)
    _, _, s, _, ds = _loop(step, [zero, one, one, zero, zero], IGAMMA_MAXIT)
    lp = _log_xa_ex_g1(a, x)
    p = mul(exp(lp), s)
    if not deriv:
        return p
    dlp = sub(log(x), digamma(add(a, _c(a, 1))))
    return mul(exp(lp), add(mul(dlp, s), ds))


def _q_cf(a, x, deriv):
    """Q = x^a e^-x / Gamma(a) * 1/(x+1-a - 1(1-a)/(x+3-a - 2(2-a)/(x+5-a - ...))) for x > a, by the
    three-term recurrences of the convergents A/B (rescaled when large or small); with deriv dQ/da. The
    fraction is taken in its equivalent form with every b_n divided by x and a_n by x^2 (the same
    value), so that at huge x the convergents do not overflow before a rescaling."""
    eps = _eps(x)
    big = 1.0 / eps
    ix = div(_c(x, 1), x)
    ix2 = mul(ix, ix)

    def step(n, am2, am1, bm2, bm1, dam2, dam1, dbm2, dbm1, f, df):
        an = mul(mul(neg(n), sub(n, a)), ix2)            # a_{n+1} = -n (n - a), over x^2
        bn = mul(sub(add(x, add(mul(_c(n, 2), n), _c(n, 1))), a), ix)   # (x + 2n + 1 - a) / x
        dan, dbn = mul(n, ix2), neg(ix)
        A = add(mul(bn, am1), mul(an, am2))
        B = add(mul(bn, bm1), mul(an, bm2))
        dA = add(add(mul(dbn, am1), mul(bn, dam1)), add(mul(dan, am2), mul(an, dam2)))
        dB = add(add(mul(dbn, bm1), mul(bn, dbm1)), add(mul(dan, bm2), mul(an, dbm2)))
        f2 = div(A, B)
        df2 = div(sub(mul(dA, B), mul(A, dB)), mul(B, B))
        fin = le(abs_(sub(f2, f)), mul(_c(f, eps), abs_(f2)))
        if deriv:
            fin = and_(fin, le(abs_(sub(df2, df)), mul(_c(f, eps), add(abs_(df2), abs_(f2)))))
        sc = where(gt(abs_(B), _c(B, big)), _c(B, eps), where(lt(abs_(B), _c(B, eps)), _c(B, big), _c(B, 1)))
        return ([add(n, _c(n, 1)), mul(am1, sc), mul(A, sc), mul(bm1, sc), mul(B, sc),
                 mul(dam1, sc), mul(dA, sc), mul(dbm1, sc), mul(dB, sc), f2, df2], fin)
    one, zero = add(S.zeros_like(x), _c(x, 1)), S.zeros_like(x)
    b1 = sub(add(x, _c(x, 1)), a)
    # A_0 = 0, B_0 = 1 and A_1 = 1/x, B_1 = b1/x (dB_1/da = -1/x); iteration n builds A_{n+1}, B_{n+1}
    init = [one, zero, mul(one, ix), one, mul(b1, ix), zero, zero, zero, neg(mul(one, ix)), div(one, b1),
            div(one, mul(b1, b1))]
    out = _loop(step, init, IGAMMA_MAXIT)
    f, df = out[-2], out[-1]
    lq = add(_log_xa_ex_g1(a, x), log(a))      # log(x^a e^-x / Gamma(a))
    q = mul(exp(lq), f)
    if not deriv:
        return q
    dlq = sub(log(x), digamma(a))
    return mul(exp(lq), add(mul(dlq, f), df))


def _q_series(a, x):
    """Q at small x: -expm1(a log x - lgamma(1+a)) - a x^a / Gamma(a+1) * sum_{n>=1} (-x)^n / (n! (a+n))."""
    eps = _eps(x)

    def step(n, fac, s):
        n = add(n, _c(n, 1))
        fac = div(mul(fac, neg(x)), n)
        term = div(fac, add(a, n))
        return [n, fac, add(s, term)], le(abs_(term), mul(_c(s, eps), abs_(s)))
    one, zero = add(S.zeros_like(x), _c(x, 1)), S.zeros_like(x)
    _, _, s = _loop(step, [zero, one, zero], IGAMMA_MAXIT)
    lg = sub(mul(a, log(x)), lgam1p(a))
    return sub(neg(expm1(lg)), mul(mul(exp(lg), a), s))



# Temme's uniform asymptotic expansion (DLMF 8.12): Q = erfc(z)/2 + R, P = erfc(-z)/2 - R with
# z = eta sqrt(a/2), eta^2/2 = lam - 1 - log(lam), lam = x/a, eta of the sign of lam - 1, and
# R = exp(-a eta^2/2) / sqrt(2 pi a) * (c0(eta) + c1(eta)/a + O(a^-2)). Used for a > IGAMMA_ASY_A,
# where the loops would need more than IGAMMA_MAXIT terms and the dropped term is below 1e-15.
IGAMMA_ASY_A = 1e5
# Taylor coefficients of c0, c1 at eta = 0 (exact rationals from series reversion, rounded)
_C0 = [-1 / 3, 1 / 12, -2 / 135, 1 / 864, 1 / 2835, -139 / 777600, 1 / 25515, -571 / 261273600,
       -1.85406221071516e-06, 8.296711340953087e-07, -1.7665952736826078e-07, 6.707853543401498e-09,
       1.0261809784240309e-08, -4.382036018453353e-09, 9.14769958223679e-10, -2.5514193994946248e-11,
       -5.830772132550426e-11, 2.4361948020667415e-11]
_C1 = [-1 / 540, -1 / 288, 1 / 378, -0.0009902263374485596, 0.00020576131687242798, -4.018775720164609e-07,
       -1.8098550334489977e-05, 7.64916091608111e-06, -1.6120900894563446e-06, 4.647127802807434e-09,
       1.378633446915721e-07, -5.752545603517705e-08, 1.1951628599778148e-08, -1.7543241719747647e-11,
       -1.0091543710600413e-09, 4.162792991842583e-10]


def _horner(coefs, t):
    acc = _c(t, coefs[-1])
    for ck in reversed(coefs[:-1]):
        acc = add(mul(acc, t), _c(t, ck))
    return acc


def _temme_pq(a, x):
    """(P, Q) for large a by Temme's expansion; differentiable in a (no sign/floor inside)."""
    from .special_erf import erfc_p
    L = _a_log1pmx(a, x)                                      # -a eta^2 / 2
    # z = sign(x - a) sqrt(-L); near x = a as u sqrt(x + a - 2 a u S), smooth in a through x = a
    u, small_u, us, acc = _atanh_parts(a, x)
    zs = mul(us, bind(E.sqrt_p, sub(add(x, a), mul(mul(_c(a, 2), a), mul(us, acc)))))
    r = bind(E.sqrt_p, where(small_u, _c(L, 1), neg(L)))
    z = where(small_u, zs, where(lt(x, a), neg(r), r))
    eta = mul(z, bind(E.sqrt_p, div(_c(a, 2), a)))
    small = lt(abs_(eta), _c(eta, 0.5))
    es = where(small, eta, _c(eta, 0))
    el = where(small, _c(eta, 1), eta)
    u = where(small, _c(eta, 1), div(sub(x, a), a))           # lam - 1
    c0 = where(small, _horner(_C0, es), sub(div(_c(u, 1), u), div(_c(el, 1), el)))
    iu, ie = div(_c(u, 1), u), div(_c(el, 1), el)
    c1d = sub(sub(sub(mul(ie, mul(ie, ie)), mul(iu, mul(iu, iu))), mul(iu, iu)), mul(iu, _c(iu, 1 / 12)))
    c1 = where(small, _horner(_C1, es), c1d)
    R = mul(div(exp(L), bind(E.sqrt_p, mul(_c(a, 2 * np.pi), a))), add(c0, div(c1, a)))
    half = _c(z, 0.5)
    return sub(mul(half, bind(erfc_p, neg(z))), R), add(mul(half, bind(erfc_p, z)), R)


def _temme_dp_da(a, x):
    """dP/da of Temme's expansion, by forward-mode differentiation of _temme_pq."""
    from ..ad import jvp_flat
    _, (dp,) = jvp_flat(lambda aa: [_temme_pq(aa, x)[0]], [a], [add(S.zeros_like(a), _c(a, 1))])
    return dp


def _igamma_regions(a, x):
    """Where (as cephes decides) Q comes from the continued fraction, from the small-x series,
    or as 1 - P from the power series."""
    cf = and_(gt(x, _c(x, 1.1)), ge(x, a))
    small_x = and_(le(x, _c(x, 1.1)),
                   where(le(x, _c(x, 0.5)), ge(div(_c(x, -0.4), log(x)), a), ge(mul(x, _c(x, 1.1)), a)))
    return cf, small_x


def _igamma_edges(a, x, p_or_q, is_p):
    """scipy's special values: NaN for a < 0, x < 0 or NaN; at a = 0 P = 1 for x > 0 (NaN at x = 0);
    P(a, 0) = 0; P(inf, x) = 0 (NaN at x = inf); P(a, inf) = 1."""
    one, zero = _c(p_or_q, 1), _c(p_or_q, 0)
    v1, v0 = (one, zero) if is_p else (zero, one)
    out = where(eq(x, inf_like(x)), v1, p_or_q)
    out = where(eq(a, inf_like(a)), where(eq(x, inf_like(x)), nan_like(out), v0), out)
    out = where(eq(x, _c(x, 0)), where(eq(a, _c(a, 0)), nan_like(out), v0), out)
    out = where(and_(eq(a, _c(a, 0)), gt(x, _c(x, 0))), v1, out)
    bad = or_(or_(lt(a, _c(a, 0)), lt(x, _c(x, 0))), or_(isnan(a), isnan(x)))
    return where(bad, nan_like(out), out)


def _safe(a, x):
    """Operands for the loops: (1, 1) wherever an edge value decides (no NaN/inf enters a loop)."""
    ok = and_(and_(gt(a, _c(a, 0)), gt(x, _c(x, 0))), and_(lt(a, inf_like(a)), lt(x, inf_like(x))))
    return where(ok, a, _c(a, 1)), where(ok, x, _c(x, 1))


def _igamma_pq(a, x):
    """(P, Q) for positive finite operands, each from its accurate branch."""
    asy = gt(a, _c(a, IGAMMA_ASY_A))
    ta, tx = where(asy, a, _c(a, 2 * IGAMMA_ASY_A)), where(asy, x, _c(x, 2 * IGAMMA_ASY_A))
    pt, qt = _temme_pq(ta, tx)
    a, x = where(asy, _c(a, 1), a), where(asy, _c(x, 1), x)
    p, q = _igamma_pq_loops(a, x)
    return where(asy, pt, p), where(asy, qt, q)


def _igamma_pq_loops(a, x):
    cf_r, small_r = _igamma_regions(a, x)
    one = _c(x, 1)
    ps = _p_series(a, where(and_(cf_r, gt(x, a)), one, x), False)    # (P or 1 - P needs it elsewhere)
    qc = _q_cf(where(cf_r, a, one), where(cf_r, x, _c(x, 2)), False)
    qs = _q_series(a, where(small_r, x, _c(x, 0.5)))
    q = where(cf_r, qc, where(small_r, qs, sub(one, ps)))
    p = where(and_(gt(x, _c(x, 1)), gt(x, a)), sub(one, q), ps)
    return p, q


def igamma_impl(a, x):
    a, x = _common(a, x)
    sa, sx = _safe(a, x)
    return _igamma_edges(a, x, _igamma_pq(sa, sx)[0], True)


def igammac_impl(a, x):
    a, x = _common(a, x)
    sa, sx = _safe(a, x)
    return _igamma_edges(a, x, _igamma_pq(sa, sx)[1], False)


def igamma_dens_impl(a, x):
    """dP/dx = x^(a-1) e^-x / Gamma(a): +inf at x = 0 for a < 1 (1 at a = 1, 0 above), 0 at x = inf."""
    a, x = _common(a, x)
    sa, sx = _safe(a, x)
    d = exp(sub(add(_log_xa_ex_g1(sa, sx), log(sa)), log(sx)))
    d = where(eq(x, _c(x, 0)), where(lt(a, _c(a, 1)), inf_like(d), where(eq(a, _c(a, 1)), _c(d, 1), _c(d, 0))), d)
    d = where(or_(eq(x, inf_like(x)), eq(a, inf_like(a))), _c(d, 0), d)
    bad = or_(or_(le(a, _c(a, 0)), lt(x, _c(x, 0))), or_(isnan(a), isnan(x)))
    return where(bad, nan_like(d), d)


def igamma_grad_a_impl(a, x):
    """dP/da: the series' derivative where P comes from the series, -dQ/da of the continued fraction
    elsewhere (no 1 - Q cancellation in either); 0 at x = 0, x = inf and a = inf, NaN where P is."""
    a, x = _common(a, x)
    sa, sx = _safe(a, x)
    asy = gt(sa, _c(sa, IGAMMA_ASY_A))
    dt = _temme_dp_da(where(asy, sa, _c(a, 2 * IGAMMA_ASY_A)), where(asy, sx, _c(x, 2 * IGAMMA_ASY_A)))
    sa, sx = where(asy, _c(a, 1), sa), where(asy, _c(x, 1), sx)
    cf_r = and_(gt(sx, _c(sx, 1.1)), ge(sx, sa))
    one = _c(x, 1)
    ds = _p_series(sa, where(cf_r, one, sx), True)
    dq = _q_cf(where(cf_r, sa, one), where(cf_r, sx, _c(x, 2)), True)
    g = where(asy, dt, where(cf_r, neg(dq), ds))
    g = where(or_(or_(eq(x, _c(x, 0)), eq(x, inf_like(x))), eq(a, inf_like(a))), _c(g, 0), g)
    bad = or_(or_(le(a, _c(a, 0)), lt(x, _c(x, 0))), or_(isnan(a), isnan(x)))
    return where(bad, nan_like(g), g)


def igamma(a, x): return bind(igamma_p, a, x)
def igammac(a, x): return bind(igammac_p, a, x)
def igamma_dens(a, x): return bind(igamma_dens_p, a, x)
def igamma_grad_a(a, x): return bind(igamma_grad_a_p, a, x)


igamma_p = _binop("igamma")
defjvp(igamma_p, lambda t, ans, a, x: mul0(t, igamma_grad_a(a, x)),
       lambda t, ans, a, x: mul0(t, igamma_dens(a, x)))
igammac_p = _binop("igammac")
defjvp(igammac_p, lambda t, ans, a, x: neg(mul0(t, igamma_grad_a(a, x))),
       lambda t, ans, a, x: neg(mul0(t, igamma_dens(a, x))))
igamma_dens_p = _binop("igamma_dens")
defjvp(igamma_dens_p,
       lambda t, ans, a, x: mul0(t, mul(ans, sub(log(x), digamma(a)))),
       lambda t, ans, a, x: mul0(t, mul(ans, sub(div(sub(a, _c(a, 1)), x), _c(x, 1)))))
igamma_grad_a_p = _binop("igamma_grad_a")
defjvp(igamma_grad_a_p,
       _no_tangent("igamma_grad_a", "a", "the second derivative of the incomplete gamma function in a "
                   "is not implemented"),
       lambda t, ans, a, x: mul0(t, mul(igamma_dens(a, x), sub(log(x), digamma(a)))))


# ------------------------------------------------ inverses in x: P(a, x) = p, Q(a, x) = q
IGAMMAINV_MAXIT = 100


def _inv_start(a, p, q):
    """A first guess for x with P(a, x) = p: for a <= 1 the small-x power law joined to the
    exponential tail; for a > 1 Wilson-Hilferty's cube-root normal approximation; in the far
    tails (where the normal quantile overflows) x^a / Gamma(a+1) = p or x^(a-1) e^-x / Gamma(a) = q."""
    from .special_erf import erfinv_p
    one = _c(a, 1)
    t = sub(one, mul(a, add(_c(a, 0.253), mul(a, _c(a, 0.12)))))
    small_a = where(lt(p, t), exp(div(log(div(p, t)), a)), sub(one, log(div(q, sub(one, t)))))
    lower = lt(p, _c(p, 0.5))
    z = mul(_c(a, np.sqrt(2.0)), bind(erfinv_p, where(lower, sub(mul(_c(p, 2), p), one), sub(one, mul(_c(q, 2), q)))))
    # far tails: the normal quantile's asymptotic form, z^2 ~ w - log(w) - log(2 pi), w = -2 log(tail)
    tl = where(lower, p, q)
    w = mul(_c(a, -2), log(where(lt(tl, _c(tl, 1e-10)), tl, _c(tl, 1e-10))))
    zt = bind(E.sqrt_p, sub(sub(w, log(w)), _c(w, np.log(2 * np.pi))))
    z = where(lt(tl, _c(tl, 1e-10)), where(lower, neg(zt), zt), z)
    ninth = div(one, mul(_c(a, 9), a))
    base = add(sub(one, ninth), mul(z, bind(E.sqrt_p, ninth)))
    wh = mul(a, mul(base, mul(base, base)))
    left = exp(div(add(log(p), lgam1p(a)), a))
    xr = sub(neg(log(q)), lgamma(a))
    right = add(xr, mul(sub(a, one), log(where(gt(xr, one), xr, one))))
    tail = where(lower, left, right)
    use_tail = or_(not_(bind(E.is_finite_p, wh)), le(base, _c(base, 0)))
    x0 = where(le(a, one), small_a, where(use_tail, tail, wh))
    ok = and_(gt(x0, _c(x0, 0)), bind(E.is_finite_p, x0))
    return where(ok, x0, one)


def _inv_solve(a, p, q):
    """Halley's method on log P - log p (on log Q - log q where q < p, so tiny upper tails keep their
    digits; in logs, the exponential tails converge in a few steps), kept inside a bracket [lo, hi]
    that shrinks around the root; a step leaving it is replaced by bisection (or by x * 4, x / 8
    while the bracket is still open)."""
    eps = _eps(a)
    use_q = lt(q, p)
    zero, inf = S.zeros_like(a), add(S.zeros_like(a), inf_like(a))

    def step(x, lo, hi):
        P, Q = _igamma_pq(a, x)
        F, tgt = where(use_q, Q, P), where(use_q, q, p)
        ft = div(F, tgt)                  # (not F - tgt: below 1e-300 that difference is subnormal, flushed)
        f = where(lt(abs_(sub(ft, _c(ft, 1))), _c(ft, 0.5)), log(ft), sub(log(F), log(tgt)))   # log(F / tgt)
        below = where(use_q, gt(Q, q), lt(P, p))
        lo, hi = where(below, x, lo), where(below, hi, x)
        # (log F)' = F'/F = +-dens/F, formed in logs: XLA may rewrite f / (d / F) as f F / d, whose
        # product of two tiny numbers would flush to zero in the far tails
        ratio = exp(sub(sub(add(_log_xa_ex_g1(a, x), log(a)), log(x)), log(F)))
        r = where(use_q, neg(ratio), ratio)
        dx = div(f, r)
        corr = mul(mul(_c(x, 0.5), dx), sub(sub(div(sub(a, _c(a, 1)), x), _c(x, 1)), r))
        xn = where(lt(abs_(corr), _c(x, 0.5)), sub(x, div(dx, sub(_c(x, 1), corr))), sub(x, dx))
        inside = or_(and_(gt(xn, lo), lt(xn, hi)), eq(xn, x))
        fb = where(eq(hi, inf_like(hi)), mul(x, _c(x, 4)),
                   where(eq(lo, _c(lo, 0)), mul(x, _c(x, 0.125)), mul(add(lo, hi), _c(x, 0.5))))
        xn = where(inside, xn, fb)
        fin = or_(le(abs_(sub(xn, x)), mul(_c(x, 16 * eps), xn)), le(abs_(f), _c(f, 4 * eps)))
        return [xn, lo, hi], fin
    # a root below the smallest normal number (P ~ x^a / Gamma(a+1) there) is returned as 0, also where the
    # iteration runs on Q (a tiny a puts P = 1/2 at x = 2**(-1/a): it halved x to 8**-100 = 4.9e-91 and stopped)
    log_tiny = float(np.log(np.finfo(get_aval(a).dtype).tiny))
    under = lt(div(add(log(p), lgam1p(a)), a), _c(a, log_tiny))
    x, _, _ = _loop(step, [_inv_start(a, p, q), zero, inf], IGAMMAINV_MAXIT, done0=under)
    return where(under, _c(x, 0), x)


def _inv_impl(a, y, upper):
    a, y = _common(a, y)
    one = _c(y, 1)
    bad = or_(or_(lt(a, _c(a, 0)), or_(isnan(a), isnan(y))), or_(lt(y, _c(y, 0)), gt(y, one)))
    solve = and_(and_(gt(y, _c(y, 0)), lt(y, one)), and_(gt(a, _c(a, 0)), lt(a, inf_like(a))))
    sa, sy = where(solve, a, one), where(solve, y, _c(y, 0.5))
    p, q = (sub(one, sy), sy) if upper else (sy, sub(one, sy))
    x = _inv_solve(sa, p, q)
    lo_end, hi_end = (inf_like(x), _c(x, 0)) if upper else (_c(x, 0), inf_like(x))
    x = where(solve, x, nan_like(x))
    x = where(eq(y, _c(y, 0)), lo_end, where(eq(y, one), hi_end, x))
    return where(bad, nan_like(x), x)


def igammainv_impl(a, y): return _inv_impl(a, y, False)
def igammacinv_impl(a, y): return _inv_impl(a, y, True)
def igammainv(a, y): return bind(igammainv_p, a, y)
def igammacinv(a, y): return bind(igammacinv_p, a, y)


def _inv_da(t, ans, a, y):
    """implicit function theorem: P(a, x(a)) = const gives dx/da = -(dP/da) / (dP/dx); the same for Q."""
    return neg(div0(mul0(t, igamma_grad_a(a, ans)), igamma_dens(a, ans)))


igammainv_p = _binop("igammainv")
defjvp(igammainv_p, _inv_da, lambda t, ans, a, y: div0(t, igamma_dens(a, ans)))
igammacinv_p = _binop("igammacinv")
defjvp(igammacinv_p, _inv_da, lambda t, ans, a, y: neg(div0(t, igamma_dens(a, ans))))

IGAMMA_COMPOSITES = {igamma_p: igamma_impl, igammac_p: igammac_impl, igamma_dens_p: igamma_dens_impl,
                     igamma_grad_a_p: igamma_grad_a_impl, igammainv_p: igammainv_impl,
                     igammacinv_p: igammacinv_impl}
IGAMMA_PRIMS = list(IGAMMA_COMPOSITES)


COMPOSITES = {zeta_p: zeta_impl, polygamma_p: polygamma_impl, **IGAMMA_COMPOSITES}


SPECIAL_GAMMA_UNARY = [lgamma_p, digamma_p]
SPECIAL_GAMMA_BINARY = [polygamma_p, zeta_p, zeta_chlo_p] + IGAMMA_PRIMS
__all__ = ["lgamma", "digamma", "polygamma", "zeta", "igamma", "igammac", "igamma_dens", "igamma_grad_a",
           "igammainv", "igammacinv"]
