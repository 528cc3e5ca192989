"""The error-function, normal-distribution, Bessel, exponential-integral and elliptic families
of xp.special (scipy.special names and positional signatures).

scipy.special, run with SCIPY_ARRAY_API=1 on this namespace, finds these through
`xp.special.<name>`, so each gives scipy's values (edges, infinities and NaN included) and
runs under jit, vmap and grad. Validation and promotion happen here, once: real inputs only;
integer/bool -> float64 and float32 stays float32, as scipy's ufunc loops do; Python scalars
are weak. Orders of yn/expn are truncated toward zero, as scipy does with a float order.
The primitives are in transforms/primitives/special_erf.py.
"""
from __future__ import annotations

import numbers

import numpy as np

from transforms.core import bind
from transforms.primitives import elementwise as E
from transforms.primitives import special_erf as P

from .. import _dtypes as D
from .. import _helpers as H
from .._helpers import cast, weak_scalar, wrap
from ._promote import check_args

__all__ = ["erf", "erfc", "erfcx", "erfinv", "ndtr", "ndtri", "log_ndtr",
           "i0", "i0e", "i1", "i1e", "j0", "j1", "y0", "y1", "yn",
           "k0", "k0e", "k1", "k1e", "exp1", "expi", "expn", "ellipk", "ellipkm1", "ellipe", "spence"]


def _operands(fname, names, args):
    """Raw operands of one real floating dtype, and that dtype."""
    check_args(fname, names, args)
    kinds = []
    for name, x in zip(names, args):
        if type(x) is H.Array:
            dt = x.dtype
            if dt not in D.REAL_FLOAT and dt not in D.INTEGER and dt != D.bool_:
                raise TypeError(f"{fname}: {name} must be a real (integer, boolean or real floating-point) "
                                f"array, got {dt.name}")
            weak = x._v.aval.weak_type and dt in D.REAL_FLOAT
            kinds.append((dt if dt in D.REAL_FLOAT else D.float64, weak))
        elif isinstance(x, (numbers.Real, np.bool_)) and not isinstance(x, np.ndarray):
            kinds.append((None, True))
        else:
            raise TypeError(f"{fname}: {name} must be an array or a real Python scalar, got {type(x).__name__}")
    strong = [k for k, w in kinds if k is not None and not w]
    weak = [k for k, w in kinds if k is not None and w]
    pool = strong or weak
    dt = D.float32 if pool and all(k == D.float32 for k in pool) else D.float64
    out = []
    for x in args:
        if type(x) is H.Array:
            out.append(x._v if x.dtype == dt else cast(x._v, dt))
        else:
            out.append(weak_scalar(float(x), dt))
    return out, dt


def _unary(fname, prim):
    def f(x, /):
        (v,), _ = _operands(fname, ("x",), (x,))
        return wrap(bind(prim, v))
    f.__name__ = f.__qualname__ = fname
    f.__doc__ = f"scipy.special.{fname}(x), elementwise; differentiable."
    return f


def _trunc(v):
    return E.select_n(bind(E.lt_p, v, E.full_like_scalar(v, 0)), bind(E.floor_p, v), bind(E.ceil_p, v))


def _order_fn(fname, prim):
    def f(n, x, /):
        (nv, xv), _ = _operands(fname, ("n", "x"), (n, x))
        integral = isinstance(n, (int, np.integer)) or (type(n) is H.Array and n.dtype not in D.REAL_FLOAT)
        return wrap(bind(prim, nv if integral else _trunc(nv), xv))
    f.__name__ = f.__qualname__ = fname
    f.__doc__ = f"scipy.special.{fname}(n, x), elementwise; integer order n (truncated), differentiable in x."
    return f


erf = _unary("erf", P.erf_p)
erfc = _unary("erfc", P.erfc_p)
erfcx = _unary("erfcx", P.erfcx_p)
erfinv = _unary("erfinv", P.erfinv_p)
ndtr = _unary("ndtr", P.ndtr_p)
ndtri = _unary("ndtri", P.ndtri_p)
log_ndtr = _unary("log_ndtr", P.log_ndtr_p)
i0 = _unary("i0", P.i0_p)
i0e = _unary("i0e", P.i0e_p)
i1 = _unary("i1", P.i1_p)
i1e = _unary("i1e", P.i1e_p)
j0 = _unary("j0", P.j0_p)
j1 = _unary("j1", P.j1_p)
y0 = _unary("y0", P.y0_p)
y1 = _unary("y1", P.y1_p)
yn = _order_fn("yn", P.yn_p)
k0 = _unary("k0", P.k0_p)
k0e = _unary("k0e", P.k0e_p)
k1 = _unary("k1", P.k1_p)
k1e = _unary("k1e", P.k1e_p)
exp1 = _unary("exp1", P.exp1_p)
expi = _unary("expi", P.expi_p)
expn = _order_fn("expn", P.expn_p)
ellipk = _unary("ellipk", P.ellipk_p)
ellipkm1 = _unary("ellipkm1", P.ellipkm1_p)
ellipe = _unary("ellipe", P.ellipe_p)
spence = _unary("spence", P.spence_p)
