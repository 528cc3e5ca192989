"""Shared plumbing for namespace functions: boxing raw values, operand promotion, validation."""
from __future__ import annotations

import math
import numbers
import operator
import struct

import numpy as np

from transforms.core import EVAL, trace_state, tracing, bind, get_aval
from transforms.primitives.elementwise import broadcast_shapes, convert_element_type_p

from . import _dtypes as D

_DType = D.DType

# The staging policy of eager composites (_staged.compiled; mean/var/std in _statistical): their first
# UNSTAGED_CALLS calls at a signature run unstaged (primitives bound one by one, or a direct form on host
# kernels: the kernels the staged program runs, in its order, so the same bits), and only later calls are
# staged. Staging and building a host program cost ~100-500 us, several times a run on small operands,
# and library code on ever-new shapes calls each a few times.
UNSTAGED_CALLS = 8

_SCALARS = (bool, int, float, complex)
_SCALAR_SET = frozenset(_SCALARS)
Array = None   # set by _array


PLAIN_INTS = frozenset((int, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
                        np.intp))


def plain(arg):
    """Whether `arg` (a static argument) is an int or a tuple of ints a plan may be kept under (NumPy integers hash
    as the int they are and mean it)."""
    t = type(arg)
    if t in PLAIN_INTS:
        return True
    if t is tuple:
        for d in arg:
            if type(d) not in PLAIN_INTS:
                return False
        return True
    return False


def wrap(v):
    a = object.__new__(Array)
    a._v = v
    a._trace = trace_state.trace if tracing[0] else EVAL   # (no thread traces: eager, without the thread-local read)
    a._base = a._views = None   # (set slots: the view checks on every write and call read them in ~40 ns; an
    return a                    # unset slot's getattr(a, "_base", None) raises inside, ~170 ns each)


_WEAK: dict = {}   # eagerly: (type, value, dtype) -> the weakly typed 0-d raw value (immutable, reused)


def big_int_as_float(value, dtype, fname):
    """A Python int past int64 for a floating dtype: the float it is (the standard's scalar rule; a value past
    float32's range is inf there, as NumPy gives), or OverflowError naming fname past float64's range."""
    if type(value) is int and dtype.kind in "fc" and not -_I64 <= value < _I64:
        try:
            return float(value)
        except OverflowError:
            raise OverflowError(f"{fname}: a Python int of {value.bit_length()} bits is beyond the range of "
                                f"{dtype.name} (at most about 1.8e308)") from None
    return value


_I64 = 2 ** 63


def weak_scalar(value, dtype, fname="asarray"):
    """`value` (a Python scalar) as a weakly typed 0-d raw value of `dtype`. Eagerly the converted value
    is reused (x + 1 in a loop converts 1 once), keyed so that -0.0 and 0.0 (and signed complex zeros)
    stay apart, never for NaN; a reused value that was donated to a jitted function is made anew. A Python
    int past int64 next to a float array is first the float it is (`big_int_as_float`), eagerly and under jit alike."""
    if type(dtype) is _DType:
        dtype = dtype._np   # (the engine's params hold NumPy dtypes)
    if not tracing[0] or trace_state.trace is EVAL:
        t = type(value)
        if t in _SCALAR_SET:
            if value != value:   # NaN: keyed by its bits (NaN != NaN would miss every time)
                key = (t, struct.pack("<d", value) if t is float else struct.pack("<dd", value.real, value.imag),
                       dtype)
            else:
                key = (t, repr(value) if t is complex or (t is float and not value) else value, dtype)
            v = _WEAK.get(key)
            if v is None or v.is_deleted():
                v = bind(convert_element_type_p, big_int_as_float(value, dtype, fname), new_dtype=dtype, weak_type=True)
                if len(_WEAK) < 1024:
                    _WEAK[key] = v
            return v
    return bind(convert_element_type_p, big_int_as_float(value, dtype, fname), new_dtype=dtype, weak_type=True)


def cast(v, dtype):
    if type(dtype) is _DType:
        dtype = dtype._np   # (the engine's params hold NumPy dtypes; np == np compares in C)
    a = get_aval(v)
    if a.dtype == dtype and not a.weak_type:
        return v
    return bind(convert_element_type_p, v, new_dtype=dtype, weak_type=False)


def py_number(x):
    """x as the Python scalar it is (bool, int, float or complex), or None if it is not a number.

    NumPy scalars (np.float64, np.int64, np.bool_, ...) and other `numbers` (an IntEnum, a
    Fraction) count as the Python number they are; Arrays and NumPy arrays do not."""
    t = type(x)
    if t in _SCALARS:
        return x
    if isinstance(x, np.generic):
        if isinstance(x, np.bool_):
            return bool(x)
        if isinstance(x, np.integer):
            return int(x)
        if isinstance(x, np.floating):
            return float(x)
        if isinstance(x, np.complexfloating):
            return complex(x)
        return None
    if isinstance(x, numbers.Number) and t is not Array:
        if isinstance(x, bool):
            return bool(x)
        if isinstance(x, numbers.Integral):
            return int(x)
        if isinstance(x, numbers.Real):
            return float(x)
        if isinstance(x, numbers.Complex):
            return complex(x)
    return None


def as_int(x, fname, arg):
    """An integer argument (a shape entry, an axis, a count): anything `operator.index` takes
    (int, np.int64, a 0-d integer array), never a bool or a float; TypeError otherwise."""
    if type(x) is int:
        return x
    if isinstance(x, (bool, np.bool_)) or not hasattr(type(x), "__index__"):
        raise TypeError(f"{fname}: {arg} must be an int, got {type(x).__name__} {x!r}")
    return operator.index(x)


def is_int_like(x):
    """True for a single integer (int, np.int64, 0-d integer array), False for a sequence."""
    return hasattr(type(x), "__index__") and getattr(x, "ndim", 0) == 0


def as_array(x, fname, arg="x"):
    """An Array argument; Python scalars (NumPy scalars too) are accepted as weakly typed 0-d arrays."""
    if type(x) is Array:
        return x
    v = x if type(x) in _SCALARS else py_number(x)
    if v is None:
        raise TypeError(f"{fname}: {arg} must be an array, got {type(x).__name__}")
    return wrap(weak_scalar(v, D.default_dtype_of_scalar(v), fname))


# Eagerly: (scalar type, scalar, array dtype) -> (result dtype, the weak 0-d raw value), for an array op a
# scalar (x + 1, 2.0 * x, x[i, i] = 0): the promotion and the conversion in one lookup. Not NaN (it never meets
# itself) nor complex; of the float zeros only 0.0 is kept, and a lookup of -0.0 (== 0.0, hashed alike) refuses
# the hit; a kept value donated to a jitted function is made anew.
_OPERANDS: dict = {}


def scalar_operand(fname, value, dtype):
    """(the result dtype, the weak 0-d raw value) of Python scalar `value` next to an array of `dtype`, which a
    real floating array next to a complex scalar is then cast to (binary's slow path; kept in _OPERANDS)."""
    dt = D.scalar_dtype_for(value, dtype, fname)
    out = (dt, weak_scalar(value, dt, fname))
    if (not tracing[0] or trace_state.trace is EVAL) and type(value) is not complex and value == value and (
            value or type(value) is not float or math.copysign(1.0, value) > 0):
        if len(_OPERANDS) >= 1024:
            _OPERANDS.clear()   # (dict ops are atomic under the GIL)
        _OPERANDS[(type(value), value, dtype)] = out
    return out


_REPR = {D.bool_: True, "int": 1, "float": 1.0, "complex": 1j}


def _weak_repr(dt):
    return True if dt == D.bool_ else 1 if dt in D.INTEGER else 1.0 if dt in D.REAL_FLOAT else 1j


def binary(fname, x1, x2, broadcast=True):
    """Raw operands of a binary function, converted to their common dtype, and that dtype; with
    `broadcast`, a ValueError naming x1 and x2 unless their shapes broadcast together."""
    t1, t2 = type(x1), type(x2)
    if t1 is Array:
        v1 = x1._v
        a1 = v1.aval
        if t2 is Array:
            v2 = x2._v
            a2 = v2.aval
            if a2 is a1:   # (one aval object per signature: the same shape and dtype)
                return v1, v2, a1.dtype
            d1, d2 = a1.dtype, a2.dtype
            s1, s2 = a1.shape, a2.shape
            if broadcast and s1 != s2 and s1 and s2:   # (a 0-d operand broadcasts with anything)
                check_broadcast(fname, s1, s2)
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
            hit = _OPERANDS.get((t2, x2, a1.dtype))
            if hit is None or tracing[0] and trace_state.trace is not EVAL or hit[1].is_deleted() or (
                    not x2 and t2 is float and math.copysign(1.0, x2) < 0):
                hit = scalar_operand(fname, x2, a1.dtype)
                if t2 is complex and a1.dtype.kind == "f":   # real floating array + complex scalar
                    v1 = cast(v1, hit[0])
            return v1, hit[1], hit[0]
        p2 = py_number(x2)   # a NumPy scalar is the Python number it is (weak)
        if p2 is not None:
            return binary(fname, x1, p2)
        raise TypeError(f"{fname}: x2 must be an array or a Python scalar, got {t2.__name__}")
    if t2 is Array:
        if t1 in _SCALARS:
            v2 = x2._v
            d2 = v2.aval.dtype
            hit = _OPERANDS.get((t1, x1, d2))
            if hit is None or tracing[0] and trace_state.trace is not EVAL or hit[1].is_deleted() or (
                    not x1 and t1 is float and math.copysign(1.0, x1) < 0):
                hit = scalar_operand(fname, x1, d2)
                if t1 is complex and d2.kind == "f":
                    v2 = cast(v2, hit[0])
            return hit[1], v2, hit[0]
        p1 = py_number(x1)
        if p1 is not None:
            return binary(fname, p1, x2)
        raise TypeError(f"{fname}: x1 must be an array or a Python scalar, got {t1.__name__}")
    p1, p2 = py_number(x1), py_number(x2)
    if p1 is not None and p2 is not None:
        a, b = as_array(p1, fname, "x1"), as_array(p2, fname, "x2")
        return binary(fname, a, b)
    raise TypeError(f"{fname}: expected arrays or Python scalars, got {t1.__name__} and {t2.__name__}")


def host_key(key):
    """The key as the backend's eager hooks take it: an Array (a mask, indices) as its raw value, also as a
    tuple's last entry (x[:, idx])."""
    if type(key) is Array:
        return key._v
    if type(key) is tuple and key and type(key[-1]) is Array:
        return key[:-1] + (key[-1]._v,)
    return key


def check_kind(fname, dtype, allowed, what, arg="x"):
    if dtype not in allowed:
        raise TypeError(f"{fname} requires {what} input for {arg}, got {dtype.name}")


class AxisError(IndexError, ValueError):
    """An axis out of range: an IndexError and a ValueError at once, as NumPy's (and array-api-strict's)."""


def axis_error(fname, axis, ndim, arg="axis"):
    prefix = "" if arg == "axis" else f"{arg}: "
    return AxisError(f"{fname}: {prefix}axis {axis} is out of bounds for array of dimension {ndim}")   # NumPy's words


def normalize_axis(axis, ndim, fname, arg="axis"):
    if type(axis) is not int:
        axis = as_int(axis, fname, arg)
    if not -ndim <= axis < max(ndim, 1) or (ndim == 0 and axis not in (0, -1)):
        raise axis_error(fname, axis, ndim, arg)
    return axis % ndim if ndim else 0


def normalize_axes(axis, ndim, fname, arg="axis"):
    """None -> all axes; int or tuple -> sorted unique non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    if type(axis) is int or is_int_like(axis):
        axes = (axis,)
    elif isinstance(axis, (tuple, list)):
        axes = axis
    else:
        axes = (as_int(axis, fname, arg),)   # refuses a float, a string, ...
    out = []
    for a in axes:
        if type(a) is not int:
            a = as_int(a, fname, f"{arg} entry")
        if not -ndim <= a < ndim:
            raise axis_error(fname, a, ndim, arg)
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"{fname}: repeated axis in {arg}={axis}")
    return tuple(sorted(out))


_BROADCAST_OK: set = set()   # (shape, shape) pairs (tuples) seen to broadcast: a pair is checked once (~2 us)


def check_broadcast(fname, s1, s2, args=("x1", "x2")):
    """ValueError naming both arguments unless shapes s1 and s2 broadcast together."""
    ok = type(s1) is tuple and type(s2) is tuple
    if ok and (s1, s2) in _BROADCAST_OK:
        return
    try:
        broadcast_shapes(s1, s2)
    except ValueError:
        raise ValueError(f"{fname}: {args[0]} of shape {tuple(s1)} and {args[1]} of shape {tuple(s2)} cannot be "
                         f"broadcast together") from None
    if ok:
        if len(_BROADCAST_OK) >= 4096:
            _BROADCAST_OK.clear()   # (set ops are atomic under the GIL)
        _BROADCAST_OK.add((s1, s2))
