"""Primitives of the gamma family of xp.special: lgamma, digamma, polygamma, Hurwitz zeta and the
regularized incomplete gamma functions (with the derivative of P(a, x) in a).

lgamma/digamma lower to XLA's CHLO ops. zeta and polygamma lower to compositions (`*_impl`
below, staged into the lowering by xla/lower_special_gamma.py) around CHLO's zeta, which is
right only for q > 0: scipy also sums integer-order zeta at negative non-integer q. The
incomplete gamma has no XLA op at all. Keeping these as primitives makes a jaxpr see one
equation with exact jvp rules (tangents linear in t), so reverse mode never has to
differentiate a loop. Operands share one floating dtype; the namespace promotes
(array_namespace/special/_gamma.py) and fixes up scipy's special values.
"""
from __future__ import annotations

from ..core import Primitive, bind, get_aval
from ..rules import jvp_gaps
from . import elementwise as E
from . import reductions as R
from . import structural as S
from .elementwise import _binop, _c, _unop, add, defjvp, div, mul, neg, select_n, sub


def lgamma(x): return bind(lgamma_p, x)
def digamma(x): return bind(digamma_p, x)
def polygamma(n, x): return bind(polygamma_p, n, x)
def zeta(x, q): return bind(zeta_p, x, q)


# ------------------------------------------------------------ raw-value helpers for *_impl
def where(c, t, f): return select_n(c, f, t)
def lt(x, y): return bind(E.lt_p, x, y)
def le(x, y): return bind(E.le_p, x, y)
def gt(x, y): return bind(E.gt_p, x, y)
def eq(x, y): return bind(E.eq_p, x, y)
def ne(x, y): return bind(E.ne_p, x, y)
def and_(x, y): return bind(E.and_p, x, y)
def or_(x, y): return bind(E.or_p, x, y)
def not_(x): return bind(E.not_p, x)
def floor(x): return bind(E.floor_p, x)
def log(x): return bind(E.log_p, x)
def exp(x): return bind(E.exp_p, x)
def abs_(x): return bind(E.abs_p, x)
def is_int(x): return eq(floor(x), x)
def nan_like(x): return _c(x, float("nan"))
def inf_like(x): return _c(x, float("inf"))


def any_(b):
    """A bool scalar: whether any element of b is true."""
    return bind(R.reduce_or_p, b, axes=tuple(range(len(get_aval(b).shape)))) if get_aval(b).shape else b


def while_raw(cond, body, init):
    """while_loop on raw values: cond(*carry) -> bool scalar, body(*carry) -> carry (same avals)."""
    from ..control_flow import _intern, _no_consts, while_p
    from ..jit import stage
    avals = [get_aval(v) for v in init]
    cj, cc = _no_consts(stage(lambda *c: [cond(*c)], avals))
    bj, bc = _no_consts(stage(lambda *c: list(body(*c)), avals))
    return bind(while_p, *cc, *bc, *init, cond_jaxpr=_intern(cj), body_jaxpr=_intern(bj),
                cond_nconsts=len(cc), body_nconsts=len(bc))


def _no_tangent(fname, arg, why):
    def rule(t, ans, *primals):
        raise NotImplementedError(f"{fname}: the derivative with respect to {arg} is not implemented ({why})")
    return rule


# ---------------------------------------------------------------- lgamma: log|Gamma(x)|
lgamma_p = _unop("lgamma", lambda t, ans, x: mul(t, digamma(x)))

# ------------------------------------------------------------------- digamma = psi(x)
digamma_p = _unop("digamma", lambda t, ans, x: mul(t, zeta(_c(x, 2), x)))   # trigamma = zeta(2, x)

# ------------------------------------------- CHLO's Hurwitz zeta (right for q > 0 only)
zeta_chlo_p = _binop("zeta_chlo")
jvp_gaps[zeta_chlo_p] = ("internal to the lowering of zeta (zeta_impl); zeta_p carries the derivative "
                         "and is what jaxprs contain")

# ------------------------------------------------------------- Hurwitz zeta(x, q) as scipy
ZETA_MAX_SHIFT = 1 << 20   # negative q below -ZETA_MAX_SHIFT: NaN instead of a million-term sum


def zeta_impl(x, q):
    """scipy's zeta(x, q): inf at x == 1 and at q a non-positive integer, NaN for x < 1 and for
    negative q with non-integer x; for negative non-integer q and integer x, sum the first terms
    explicitly until q + m >= 1, then CHLO's zeta (Euler-Maclaurin) for the rest."""
    xi = is_int(x)
    shift = and_(and_(lt(q, _c(q, 0)), xi), not_(is_int(q)))
    m = where(shift, floor(sub(_c(q, 1), q)), _c(q, 0))     # smallest m with q + m >= 1
    m = where(gt(m, _c(m, ZETA_MAX_SHIFT)), _c(m, 0), m)
    odd = ne(sub(x, mul(_c(x, 2), floor(mul(x, _c(x, 0.5))))), _c(x, 0))
    s0 = S.zeros_like(m)

    def cond(k, s, kmax):
        return lt(k, kmax)

    def body(k, s, kmax):
        b = add(q, k)
        term = exp(mul(neg(x), log(abs_(b))))
        term = where(and_(lt(b, _c(b, 0)), odd), neg(term), term)
        return add(k, _c(k, 1)), add(s, where(lt(k, m), term, _c(term, 0))), kmax

    kmax = bind(R.reduce_max_p, m, axes=tuple(range(len(get_aval(m).shape)))) if get_aval(m).shape else m
    _, s, _ = while_raw(cond, body, [S.zeros_like(kmax), s0, kmax])
    out = add(s, bind(zeta_chlo_p, x, add(q, m)))
    bad_q = and_(lt(q, _c(q, 0)), or_(not_(xi), lt(q, _c(q, -ZETA_MAX_SHIFT))))
    out = where(bad_q, nan_like(out), out)
    out = where(and_(le(q, _c(q, 0)), is_int(q)), inf_like(out), out)
    out = where(lt(x, _c(x, 1)), nan_like(out), out)
    return where(eq(x, _c(x, 1)), inf_like(out), out)


zeta_p = _binop("zeta")
defjvp(zeta_p, _no_tangent("zeta", "x", "no closed form; only d/dq is provided"),
       lambda t, ans, x, q: mul(t, neg(mul(x, zeta(add(x, _c(x, 1)), q)))))


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
       lambda t, ans, n, x: mul(t, polygamma(add(n, _c(n, 1)), x)))

COMPOSITES = {zeta_p: zeta_impl, polygamma_p: polygamma_impl}


SPECIAL_GAMMA_UNARY = [lgamma_p, digamma_p]
SPECIAL_GAMMA_BINARY = [polygamma_p, zeta_p, zeta_chlo_p]
__all__ = ["lgamma", "digamma", "polygamma", "zeta"]
