"""The gamma family of xp.special (scipy.special names, positional arguments in scipy's order).

scipy.special, run with SCIPY_ARRAY_API=1 on this namespace, finds these through
`xp.special.<name>`, so they must give scipy's values (poles, infinities, NaN, negative and huge
arguments) and run under jit, vmap and grad. Arguments are validated and promoted here, once:
real inputs only, integer/bool -> float64, float32 stays float32, all arguments to one dtype
(Python scalars weak). The primitives are in transforms/primitives/special_gamma.py; the
special values XLA's CHLO expansions get differently from scipy are fixed up here with where.
"""
from __future__ import annotations

import numbers

import numpy as np

from transforms.core import bind
from transforms.custom_derivatives import stop_gradient_p
from transforms.primitives import special_gamma as G

from .. import _dtypes as D
from .._helpers import cast, weak_scalar, wrap
from .. import _helpers as H

__all__ = ["gammaln", "loggamma", "gamma", "gammasgn", "rgamma", "psi", "digamma"]


# ------------------------------------------------------------------ validation / promotion
def _raw_floats(fname, names, args):
    """Raw operands of one floating dtype (scipy's ufunc promotion), and that dtype."""
    kinds = []
    for name, x in zip(names, args):
        if type(x) is H.Array:
            dt, weak = x.dtype, x._v.aval.weak_type
            if dt in D.COMPLEX:
                raise TypeError(f"{fname}: {name} must be a real (integer, boolean or real floating-point) "
                                f"array, got {dt.name}; complex input is not supported")
            fdt = dt if dt in D.REAL_FLOAT else D.float64
            kinds.append((fdt, weak and dt in D.REAL_FLOAT))
        elif isinstance(x, (numbers.Real, np.bool_)) and not isinstance(x, np.ndarray):
            kinds.append((None, True))
        elif isinstance(x, (numbers.Complex,)):
            raise TypeError(f"{fname}: {name} must be real, got a complex scalar; complex input is not supported")
        else:
            raise TypeError(f"{fname}: {name} must be an array or a real Python scalar, got {type(x).__name__}")
    strong = [k for k, w in kinds if k is not None and not w]
    if strong:
        dt = strong[0]
        for d in strong[1:]:
            dt = D.promote(dt, d, fname)
    else:
        weak = [k for k, w in kinds if k is not None]
        dt = D.float32 if weak and all(k == D.float32 for k in weak) else D.float64
    out = []
    for x in args:
        if type(x) is H.Array:
            out.append(cast(x._v, dt) if x.dtype != dt or not x._v.aval.weak_type else x._v)
        else:
            out.append(weak_scalar(float(x), dt))
    return out, dt


def _floats(fname, names, *args):
    """Like _raw_floats but as Arrays (for compositions written with the namespace's operators)."""
    raw, dt = _raw_floats(fname, names, args)
    return [wrap(v) for v in raw] + [dt]


def _xp():
    import array_namespace as xp
    return xp


# --------------------------------------------------------------------- log-gamma and sign
def _lgamma(x):
    """log|Gamma(x)|, exactly 0 at 1 and 2 (XLA's float32 expansion is a few ulp off there)."""
    xp = _xp()
    lg = wrap(G.lgamma(x._v))
    exact0 = lg - wrap(bind(stop_gradient_p, lg._v))      # 0, with lgamma's derivative
    return xp.where((x == 1) | (x == 2), exact0, lg)


def gammaln(x, /):
    """log|Gamma(x)| (scipy.special.gammaln)."""
    x, _ = _floats("gammaln", ("x",), x)
    xp = _xp()
    return xp.where(x == -xp.inf, -xp.inf, _lgamma(x))


def loggamma(x, /):
    """Principal branch of log Gamma(x) for real x: NaN for x < 0 (scipy.special.loggamma)."""
    x, _ = _floats("loggamma", ("x",), x)
    xp = _xp()
    return xp.where(x < 0, xp.nan, _lgamma(x))


def _is_pole(x):
    """x is 0? no: a non-positive integer other than zero, or -inf (Gamma undefined there)."""
    xp = _xp()
    return (x < 0) & (xp.floor(x) == x)


def _sign(x):
    """Sign of Gamma(x) away from its poles: +1 for x > 0, (-1)^ceil(-x) for x < 0, sign of zero at 0."""
    xp = _xp()
    one = xp.ones_like(x)
    odd = xp.remainder(xp.floor(x), 2.0) == 1
    neg = xp.where(odd, -one, one)
    zero = xp.where(xp.signbit(x), -one, one)
    return xp.where(x > 0, one, xp.where(x == 0, zero, neg))


def gammasgn(x, /):
    """Sign of Gamma(x): NaN at the poles (negative integers, -inf) and for NaN (scipy.special.gammasgn)."""
    x, _ = _floats("gammasgn", ("x",), x)
    xp = _xp()
    return xp.where(_is_pole(x) | xp.isnan(x), xp.nan, _sign(x))


def gamma(x, /):
    """Gamma(x) = sign * exp(lgamma): +-inf at +-0, NaN at negative integers and -inf (scipy.special.gamma)."""
    x, _ = _floats("gamma", ("x",), x)
    xp = _xp()
    val = _sign(x) * xp.exp(_lgamma(x))
    val = xp.where(x == 0, 1.0 / x, val)
    return xp.where(_is_pole(x), xp.nan, val)


def rgamma(x, /):
    """1 / Gamma(x): zero (signed at -0) at the poles (scipy.special.rgamma)."""
    x, _ = _floats("rgamma", ("x",), x)
    xp = _xp()
    val = _sign(x) * xp.exp(-_lgamma(x))
    return xp.where(_is_pole(x), 0.0, val)


# ------------------------------------------------------------------------------- digamma
def psi(x, /):
    """The digamma function: -inf at +0, +inf at -0, NaN at negative integers (scipy.special.psi)."""
    x, _ = _floats("psi", ("x",), x)
    xp = _xp()
    val = wrap(G.digamma(x._v))
    return xp.where(x == 0, -1.0 / x, xp.where(x == xp.inf, xp.inf, val))


def digamma(x, /):
    """Alias of psi (scipy.special.digamma)."""
    x, _ = _floats("digamma", ("x",), x)
    return psi(x)
