"""Shared plumbing for namespace functions: boxing raw values, operand promotion, validation."""
from __future__ import annotations

from transforms.core import _state, bind, get_aval
from transforms.primitives.elementwise import convert_element_type_p

from . import _dtypes as D

_SCALARS = (bool, int, float, complex)
Array = None   # set by _array


def wrap(v):
    a = object.__new__(Array)
    a._v = v
    a._trace = _state.trace
    return a


def weak_scalar(value, dtype):
    return bind(convert_element_type_p, value, new_dtype=dtype, weak_type=True)


def cast(v, dtype):
    a = get_aval(v)
    if a.dtype == dtype and not a.weak_type:
        return v
    return bind(convert_element_type_p, v, new_dtype=dtype, weak_type=False)


def as_array(x, fname, arg="x"):
    """An Array argument; Python scalars are accepted as weakly typed 0-d arrays."""
    if type(x) is Array:
        return x
    if type(x) in _SCALARS:
        return wrap(weak_scalar(x, D.default_dtype_of_scalar(x)))
    raise TypeError(f"{fname}: {arg} must be an array, got {type(x).__name__}")


_REPR = {D.bool_: True, "int": 1, "float": 1.0, "complex": 1j}


def _weak_repr(dt):
    return True if dt == D.bool_ else 1 if dt in D.INTEGER else 1.0 if dt in D.REAL_FLOAT else 1j


def binary(fname, x1, x2):
    """Raw operands of a binary function, converted to their common dtype, and that dtype."""
    t1, t2 = type(x1), type(x2)
    if t1 is Array:
        v1 = x1._v
        a1 = v1.aval
        if t2 is Array:
            v2 = x2._v
            a2 = v2.aval
            d1, d2 = a1.dtype, a2.dtype
            if d1 == d2:
                return v1, v2, d1
            if a1.weak_type != a2.weak_type:
                # a weakly typed array behaves like a Python scalar of its kind
                if a1.weak_type:
                    dt = D.scalar_dtype_for(_weak_repr(d1), d2, fname)
                else:
                    dt = D.scalar_dtype_for(_weak_repr(d2), d1, fname)
            else:
                dt = D.promote(d1, d2, fname)
            return cast(v1, dt), cast(v2, dt), dt
        if t2 in _SCALARS:
            dt = D.scalar_dtype_for(x2, a1.dtype, fname)
            if t2 is complex and a1.dtype.kind == "f":   # real floating array + complex scalar
                v1 = cast(v1, dt)
            return v1, weak_scalar(x2, dt), dt
        raise TypeError(f"{fname}: x2 must be an array or a Python scalar, got {t2.__name__}")
    if t2 is Array:
        if t1 in _SCALARS:
            v2 = x2._v
            d2 = v2.aval.dtype
            dt = D.scalar_dtype_for(x1, d2, fname)
            if t1 is complex and d2.kind == "f":
                v2 = cast(v2, dt)
            return weak_scalar(x1, dt), v2, dt
        raise TypeError(f"{fname}: x1 must be an array or a Python scalar, got {t1.__name__}")
    if t1 in _SCALARS and t2 in _SCALARS:
        a, b = as_array(x1, fname, "x1"), as_array(x2, fname, "x2")
        return binary(fname, a, b)
    raise TypeError(f"{fname}: expected arrays or Python scalars, got {t1.__name__} and {t2.__name__}")


def check_kind(fname, dtype, allowed, what):
    if dtype not in allowed:
        raise TypeError(f"{fname} requires {what} input, got {dtype.name}")


def normalize_axis(axis, ndim, fname):
    if not isinstance(axis, int) or isinstance(axis, bool):
        raise TypeError(f"{fname}: axis must be an int, got {type(axis).__name__}")
    if not -ndim <= axis < max(ndim, 1) or (ndim == 0 and axis not in (0, -1)):
        raise IndexError(f"{fname}: axis {axis} is out of bounds for an array of {ndim} dimensions")
    return axis % ndim if ndim else 0


def normalize_axes(axis, ndim, fname):
    """None -> all axes; int or tuple -> sorted unique non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    out = []
    for a in axes:
        if not isinstance(a, int) or isinstance(a, bool):
            raise TypeError(f"{fname}: axis entries must be ints, got {a!r}")
        if not -ndim <= a < ndim:
            raise IndexError(f"{fname}: axis {a} is out of bounds for an array of {ndim} dimensions")
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"{fname}: repeated axis in {axis}")
    return tuple(sorted(out))
