"""scipy's ufunc promotion for xp.special, in one place: the arguments as raw values of one real
floating dtype -- integers and bools become float64, float32 stays float32 (no silent upcast), Python
and NumPy scalars are weak -- and complex or non-numeric input is a TypeError naming the argument."""
from __future__ import annotations

import numbers

import numpy as np

from .. import _dtypes as D
from .. import _helpers as H
from .._helpers import cast, weak_scalar


_INT64 = (-2 ** 63, 2 ** 63)


def check_args(fname, names, args):
    """OverflowError for a Python int outside int64 (scipy's NumPy conversion refuses those too;
    never wrapped or rounded silently) and ValueError for shapes that do not broadcast, naming
    `fname` and the arguments -- static facts, so the same eagerly and under jit."""
    for name, x in zip(names, args):
        if isinstance(x, int) and not isinstance(x, bool) and not _INT64[0] <= x < _INT64[1]:
            shown = x if x.bit_length() <= 128 else f"an int of {x.bit_length()} bits"
            raise OverflowError(f"{fname}: {name} = {shown} is outside the int64 range [-2**63, 2**63); "
                                f"pass a float (or an array) for values this large")
    shaped = [(name, tuple(x.shape)) for name, x in zip(names, args) if type(x) is H.Array]
    try:
        np.broadcast_shapes(*[s for _, s in shaped])
    except ValueError:
        desc = ", ".join(f"{name} {s}" for name, s in shaped)
        raise ValueError(f"{fname}: the shapes of the arguments do not broadcast together: {desc}") from None


def raw_floats(fname, names, args):
    """Raw operands of one floating dtype (scipy's ufunc promotion), and that dtype."""
    check_args(fname, names, args)
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


def in_float64(fn, args):
    """fn on float64 copies of float32 Array arguments, its result rounded back to float32 -- what scipy's float32
    loops do (they call the float64 kernel): series, recurrences and differences of log-gammas then keep float64's
    margin against cancellation (float32 poch(-776, 0.045) lost 1e6 ulps so), and float32 in -> float32 out."""
    import array_namespace as xp
    if args[0].dtype == xp.float64:
        return fn(*args)
    return xp.astype(fn(*[xp.astype(v, xp.float64) for v in args]), args[0].dtype)
