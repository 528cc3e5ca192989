"""Raw-value one-liners that composite implementations (special functions, their lowerings) are
written with: one vocabulary instead of a private copy per module. Comparisons take a Python or
NumPy number on the right and make it a constant of x's dtype."""
from __future__ import annotations

import numpy as np

from ..core import bind
from . import elementwise as E
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
