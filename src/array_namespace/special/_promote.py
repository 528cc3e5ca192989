"""scipy's ufunc promotion for xp.special, in one place: the arguments as raw values of one real
floating dtype -- integers and bools become float64, float32 stays float32 (no silent upcast), Python
and NumPy scalars are weak -- and complex or non-numeric input is a TypeError naming the argument."""
from __future__ import annotations

import numbers

import numpy as np

from .. import _dtypes as D
from .. import _helpers as H
from .._helpers import cast, weak_scalar


def raw_floats(fname, names, args):
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
