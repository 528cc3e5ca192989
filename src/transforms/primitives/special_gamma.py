"""Primitives of the gamma family of xp.special: lgamma, digamma, polygamma, zeta and the
regularized incomplete gamma functions (with the derivative of P(a, x) in a).

lgamma/digamma/polygamma/zeta lower to XLA's CHLO ops. The incomplete gamma has no XLA op:
`igamma`, `igammac` and `igamma_grad_a` are primitives whose lowering inlines a composition of
existing primitives (xla/lower_special_gamma.py), so a jaxpr sees one equation with exact jvp
rules (tangents linear in t), and reverse mode never has to differentiate a loop.
Operands share one floating dtype; the namespace (array_namespace/special/_gamma.py) promotes.
"""
from __future__ import annotations

from ..core import Primitive, bind
from .elementwise import _binop, _c, _unop, add, defjvp, mul, neg, sub


def lgamma(x): return bind(lgamma_p, x)
def digamma(x): return bind(digamma_p, x)
def polygamma(n, x): return bind(polygamma_p, n, x)
def zeta(x, q): return bind(zeta_p, x, q)


# ---------------------------------------------------------------- lgamma: log|Gamma(x)|
lgamma_p = _unop("lgamma", lambda t, ans, x: mul(t, digamma(x)))

# ------------------------------------------------------------------- digamma = psi(x)
digamma_p = _unop("digamma", lambda t, ans, x: mul(t, polygamma(_c(x, 1), x)))


# ------------------------------------------------------- polygamma(n, x), n integer-valued
def _no_tangent(fname, arg, why):
    def rule(t, ans, *primals):
        raise NotImplementedError(f"{fname}: the derivative with respect to {arg} is not implemented ({why})")
    return rule


polygamma_p = _binop("polygamma")
defjvp(polygamma_p, _no_tangent("polygamma", "n", "n is an integer order"),
       lambda t, ans, n, x: mul(t, polygamma(add(n, _c(n, 1)), x)))

# ------------------------------------------------------------- Hurwitz zeta(x, q), x > 1
zeta_p = _binop("zeta")
defjvp(zeta_p, _no_tangent("zeta", "x", "no closed form; only d/dq is provided"),
       lambda t, ans, x, q: mul(t, neg(mul(x, zeta(add(x, _c(x, 1)), q)))))


SPECIAL_GAMMA_UNARY = [lgamma_p, digamma_p]
SPECIAL_GAMMA_BINARY = [polygamma_p, zeta_p]
__all__ = ["lgamma", "digamma", "polygamma", "zeta"]
