"""Raw-value one-liners that composite implementations (special functions, their lowerings) are
written with: one vocabulary instead of a private copy per module. Comparisons take a Python or
NumPy number on the right and make it a constant of x's dtype."""
from __future__ import annotations

import numpy as np

from ..core import bind
from . import elementwise as E
from . import structural as S
from .bits import bitcast_convert_type
from .elementwise import _c, select_n


def _rhs(x, v):
    return _c(x, v) if isinstance(v, (bool, int, float, np.generic)) else v


def where(c, t, f): return select_n(c, f, t)
def lt(x, v): return bind(E.lt_p, x, _rhs(x, v))
def le(x, v): return bind(E.le_p, x, _rhs(x, v))
def gt(x, v): return bind(E.gt_p, x, _rhs(x, v))
def ge(x, v): return bind(E.ge_p, x, _rhs(x, v))
def eq(x, v): return bind(E.eq_p, x, _rhs(x, v))
def ne(x, v): return bind(E.ne_p, x, _rhs(x, v))
def and_(x, y): return bind(E.and_p, x, y)
def or_(x, y): return bind(E.or_p, x, y)
def not_(x): return bind(E.not_p, x)
def floor(x): return bind(E.floor_p, x)
def log(x): return bind(E.log_p, x)
def log1p(x): return bind(E.log1p_p, x)
def exp(x): return bind(E.exp_p, x)
def sqrt(x): return bind(E.sqrt_p, x)
def sin(x): return bind(E.sin_p, x)
def cos(x): return bind(E.cos_p, x)
def abs_(x): return bind(E.abs_p, x)


# fdlibm's e_log.c (Sun Microsystems, freely redistributable): ln 2 in two parts, and R(z) ~ (log((1+s)/(1-s)) - 2s)/s
_LN2_HI, _LN2_LO = 6.93147180369123816490e-01, 1.90821492927058770002e-10
_LG = (6.666666666666735130e-01, 3.999999999940941908e-01, 2.857142874366239149e-01, 2.222219843214978396e-01,
       1.818357216161805012e-01, 1.531383769920937332e-01, 1.479819860511658591e-01)
_SQRT_HALF_BITS = 0x3FE6A09E667F3BCD                   # the bits of sqrt(2)/2


def log_pos(x):
    """log x for positive normal finite x (other inputs: an unspecified value; callers guarantee the domain).
    Why: XLA's CPU code calls libm once per element for a float64 log (its float32 log is an inline polynomial),
    which keeps a fused loop from vectorising: 1.2M logs take ~15 ms per core, this ~3 ms. float64 is fdlibm's
    method, branch-free: x = 2**k m with m in [sqrt(2)/2, sqrt(2)) read from x's bits, f = m - 1, s = f / (2 + f),
    log x = k ln2 + f - f**2/2 + s (f**2/2 + R(s**2)), R of degree 7; within 1 ulp of the true log. Other
    dtypes: the log primitive."""
    if S.dtype_of(x) != np.float64:
        return log(x)
    bits = bitcast_convert_type(x, np.uint64)
    b = bind(E.add_p, bits, _c(bits, 0x3FF0000000000000 - _SQRT_HALF_BITS))    # m's exponent moves into k
    k = E.sub(E.convert_element_type(bind(E.shift_right_logical_p, b, _c(b, 52)), np.float64), _c(x, 1023.0))
    m = bitcast_convert_type(bind(E.add_p, bind(E.and_p, b, _c(b, 0x000FFFFFFFFFFFFF)), _c(b, _SQRT_HALF_BITS)),
                             np.float64)
    f = E.sub(m, _c(x, 1.0))
    # s = f * (1 / (2 + f)), not f / (2 + f): XLA fuses a divide into its consumer only when it has one, and would
    # otherwise recompute everything cheap before it (a sampler's Threefry) in each fusion (one more rounding in s
    # moves the result by < 0.05 ulp: s only enters the terms below f**2 / 4 of it)
    s = E.mul(f, E.div(_c(x, 1.0), E.add(f, _c(x, 2.0))))
    z = E.mul(s, s)
    w = E.mul(z, z)
    lg = [_c(x, v) for v in _LG]
    t1 = E.mul(w, E.add(lg[1], E.mul(w, E.add(lg[3], E.mul(w, lg[5])))))
    t2 = E.mul(z, E.add(lg[0], E.mul(w, E.add(lg[2], E.mul(w, E.add(lg[4], E.mul(w, lg[6])))))))
    hfsq = E.mul(E.mul(f, f), _c(x, 0.5))
    inner = E.add(E.mul(s, E.add(hfsq, E.add(t2, t1))), E.mul(k, _c(x, _LN2_LO)))
    return E.sub(E.mul(k, _c(x, _LN2_HI)), E.sub(E.sub(hfsq, inner), f))
