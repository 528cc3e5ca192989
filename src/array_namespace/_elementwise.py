"""Elementwise functions of the standard (https://data-apis.org/array-api/latest/API_specification/elementwise_functions.html).

Each function validates its dtype category, promotes operands, and binds one primitive
(or a short composition of them). Python scalars are accepted where the standard allows.
"""
from __future__ import annotations

import builtins
import sys

import numpy as np

from transforms.backend import backend
from transforms.core import EVAL, bind, trace_state, tracing
from transforms.primitives import elementwise as P

from . import _complex_special as CS
from . import _dtypes as D
from . import _views as VW
from ._array import Array, _module
from ._helpers import as_array, binary, cast, check_broadcast, check_kind, py_number, weak_scalar, wrap

_BOOL, _INT, _NUM, _REALNUM = frozenset([D.bool_]), frozenset(D.INTEGER), frozenset(D.NUMERIC), frozenset(D.REAL_NUMERIC)
_FLOAT, _REALFLOAT, _ALL = frozenset(D.FLOATING), frozenset(D.REAL_FLOAT), frozenset(D.ALL)
_INT_OR_BOOL = _INT | _BOOL
_WHAT = {_BOOL: "a boolean", _INT: "an integer", _NUM: "a numeric", _REALNUM: "a real-valued numeric",
         _FLOAT: "a floating-point", _REALFLOAT: "a real floating-point", _ALL: "an array",
         _INT_OR_BOOL: "an integer or boolean"}


def _check(fname, dtype, allowed, arg="x"):
    if dtype not in allowed:
        check_kind(fname, dtype, allowed, _WHAT[allowed], arg)


def _unary(fname, prim, allowed, complex_special=False):
    allowed_np = frozenset(d.dtype for d in allowed)   # (NumPy dtypes hash in C; DType's __hash__ is Python)

    def f(x, /):
        if type(x) is not Array:
            x = as_array(x, fname)
        v = x._v
        dt = v.aval.dtype
        if dt not in allowed_np:
            _check(fname, x.dtype, allowed)
        if complex_special and dt.kind == "c":   # the standard's special values (C99 Annex G)
            return wrap(CS.apply(fname, prim, v))
        return wrap(bind(prim, v))
    f.__name__ = f.__qualname__ = fname   # (Python names a function by its qualname in a bad-call TypeError)
    f.__doc__ = f"Elementwise {fname} (Array API standard)."
    return f


def _binary(fname, prim, allowed):
    allowed_np = frozenset(d.dtype for d in allowed)   # (NumPy dtypes compare in C; the check below words the error)

    def f(x1, x2, /):
        a, b, dt = binary(fname, x1, x2)
        if dt not in allowed_np:
            _check(fname, dt, allowed, "x1 and x2")
        try:
            return wrap(bind(prim, a, b))
        except ValueError as e:
            raise ValueError(f"{fname}: {e}") from None
    f.__name__ = f.__qualname__ = fname   # (Python names a function by its qualname in a bad-call TypeError)
    f.__doc__ = f"Elementwise {fname} (Array API standard)."
    f.in_place = _in_place(fname, prim, allowed_np)
    return f


# x op= y writes into x's memory from this many bytes of x: a smaller new array (malloc's heap, below glibc's 128 KiB
# mmap threshold: no fresh pages to fault in) costs less than the checks that x's memory may take it (50x20 float64:
# 2.4 us by a new array against 4.5 us in place; even at ~10k float64 elements, both ~6.5 us)
IN_PLACE_MIN_BYTES = 1 << 16


def _in_place(fname, prim, allowed_np):
    def in_place(x, other):
        """Eagerly, x op= other written into x's memory where x alone holds its value and keeps its dtype and shape
        (NumPy's cost, not a new array per update), by the out-of-place op's kernel (its bits); whether done. Not
        below IN_PLACE_MIN_BYTES (the caller then rebinds x to x op other: the same bits)."""
        a = x._v.aval
        if tracing[0] and trace_state.trace is not EVAL or a.size * a.dtype.itemsize < IN_PLACE_MIN_BYTES or \
                sys.getrefcount(x._v) > 2 or VW.has_views(x):
            return False
        v, w, dt = binary(fname, x, other)   # (the op's own first step: its errors, its promotion)
        out = backend.eager_in_place(prim, (v, w), {}) if v is x._v and dt in allowed_np else None
        if out is not None:
            x._v, x._trace = out, EVAL
        return out is not None
    return in_place


# ------------------------------------------------------------------ direct primitives
acos = _unary("acos", P.acos_p, _FLOAT, complex_special=True)
acosh = _unary("acosh", P.acosh_p, _FLOAT, complex_special=True)
asin = _unary("asin", P.asin_p, _FLOAT, complex_special=True)
asinh = _unary("asinh", P.asinh_p, _FLOAT, complex_special=True)
atan = _unary("atan", P.atan_p, _FLOAT, complex_special=True)
atanh = _unary("atanh", P.atanh_p, _FLOAT, complex_special=True)
cos = _unary("cos", P.cos_p, _FLOAT, complex_special=True)
cosh = _unary("cosh", P.cosh_p, _FLOAT, complex_special=True)
exp = _unary("exp", P.exp_p, _FLOAT, complex_special=True)
expm1 = _unary("expm1", P.expm1_p, _FLOAT, complex_special=True)
log = _unary("log", P.log_p, _FLOAT, complex_special=True)
log1p = _unary("log1p", P.log1p_p, _FLOAT, complex_special=True)
sin = _unary("sin", P.sin_p, _FLOAT, complex_special=True)
sinh = _unary("sinh", P.sinh_p, _FLOAT, complex_special=True)
sqrt = _unary("sqrt", P.sqrt_p, _FLOAT, complex_special=True)
tan = _unary("tan", P.tan_p, _FLOAT, complex_special=True)
tanh = _unary("tanh", P.tanh_p, _FLOAT, complex_special=True)
negative = _unary("negative", P.neg_p, _NUM)
_abs_signed = _unary("abs", P.abs_p, _NUM)


def abs(x, /):
    x = as_array(x, "abs")
    if x.dtype in D.UNSIGNED or x.dtype == D.bool_:
        _check("abs", x.dtype, _NUM)
        return x   # already non-negative
    return _abs_signed(x)
logical_not = _unary("logical_not", P.not_p, _BOOL)
bitwise_invert = _unary("bitwise_invert", P.not_p, _INT_OR_BOOL)
_COMPLEX = frozenset(D.COMPLEX)
_WHAT[_COMPLEX] = "a complex floating-point"
_real_complex = _unary("real", P.real_p, _COMPLEX)
imag = _unary("imag", P.imag_p, _COMPLEX)   # the standard (and array_api_strict): complex input only


def real(x, /):
    """Real part of each element; a real-valued array is returned as it is (the standard since 2024.12).

    Parameters: x (Array or Python scalar): an array of numeric dtype.
    Returns: Array: real(x); float32 for complex64, float64 for complex128, else x itself.
    Raises: TypeError: if x is not an Array or Python scalar, or its dtype is not numeric.

    >>> xp.real(xp.asarray([1 + 2j]))
    Array([1.])
    """
    x = as_array(x, "real")
    if x.dtype in D.COMPLEX:
        return _real_complex(x)
    _check("real", x.dtype, _NUM)
    return x

add = _binary("add", P.add_p, _NUM)
subtract = _binary("subtract", P.sub_p, _NUM)
multiply = _binary("multiply", P.mul_p, _NUM)
_pow = _binary("pow", P.pow_p, _NUM)


def pow(x1, x2, /):
    """x1 raised to the power x2, elementwise.

    A complex base to a small integral Python exponent (``z ** 2``) is repeated multiplication, as
    NumPy does: XLA's complex pow is exp(y log x), which gives (0+yj) ** 2 an imaginary part of
    ~1e-13 instead of 0 (scipy.signal's lp2bs_zpk/zpk2tf then leave 5e-11 where 0 belongs). Integers wrap
    as NumPy's do, for every exponent; a negative integer exponent (unspecified by the standard; NumPy
    raises) gives 1 for a base of 1, +-1 for -1 and 0 for any other base.

    Parameters: x1, x2 (Array or Python scalar): arrays of numeric dtype; their shapes broadcast together.
    Returns: Array: x1 ** x2, of the promoted dtype; the broadcast shape.
    Raises: TypeError: if an operand is not an Array or Python scalar, the dtypes do not promote, or the
        promoted dtype is not numeric. ValueError: if the shapes do not broadcast.

    >>> xp.pow(xp.asarray([1.0, 2.0, 3.0]), 2)
    Array([1., 4., 9.])
    """
    n = x2
    if (isinstance(x1, Array) and x1.dtype in D.COMPLEX and type(n) in (int, float)
            and float(n).is_integer() and 0 < builtins.abs(n) < 100):   # (builtins: abs here is xp.abs)
        return _complex_int_pow(x1._v, int(n), x1.dtype)
    return _pow(x1, x2)


def _complex_int_pow(v, n, dt):
    """z ** 2 is z * z, bit for bit NumPy's; other n square-and-multiply over the bits of |n| (within a
    few ulps of NumPy's pow); a negative n is 1 / z ** |n|. Made of mul/div, so every transform applies."""
    m = builtins.abs(n)
    if m <= 3:
        r = v if m == 1 else bind(P.mul_p, v, v)
        if m == 3:
            r = bind(P.mul_p, v, r)
    else:
        r, p = None, v
        while True:
            if m & 1:
                r = p if r is None else bind(P.mul_p, r, p)
            m >>= 1
            if not m:
                break
            p = bind(P.mul_p, p, p)
    if n < 0:   # 0 ** -n is NaN (NumPy, and XLA's pow), not 1 / 0's complex infinity
        r = P.select_n(bind(P.eq_p, v, _c(0, dt)), bind(P.div_p, _c(1, dt), r), _c(complex("nan+nanj"), dt))
    return wrap(r)


maximum = _binary("maximum", P.max_p, _REALNUM)
minimum = _binary("minimum", P.min_p, _REALNUM)
atan2 = _binary("atan2", P.atan2_p, _REALFLOAT)
nextafter = _binary("nextafter", P.nextafter_p, _REALFLOAT)
equal = _binary("equal", P.eq_p, _ALL)
not_equal = _binary("not_equal", P.ne_p, _ALL)
less = _binary("less", P.lt_p, _REALNUM)
less_equal = _binary("less_equal", P.le_p, _REALNUM)
greater = _binary("greater", P.gt_p, _REALNUM)
greater_equal = _binary("greater_equal", P.ge_p, _REALNUM)
logical_and = _binary("logical_and", P.and_p, _BOOL)
logical_or = _binary("logical_or", P.or_p, _BOOL)
logical_xor = _binary("logical_xor", P.xor_p, _BOOL)
bitwise_and = _binary("bitwise_and", P.and_p, _INT_OR_BOOL)
bitwise_or = _binary("bitwise_or", P.or_p, _INT_OR_BOOL)
bitwise_xor = _binary("bitwise_xor", P.xor_p, _INT_OR_BOOL)
bitwise_left_shift = _binary("bitwise_left_shift", P.shift_left_p, _INT)


def bitwise_right_shift(x1, x2, /):
    a, b, dt = binary("bitwise_right_shift", x1, x2)
    _check("bitwise_right_shift", dt, _INT, "x1 and x2")
    prim = P.shift_right_arithmetic_p if dt in D.SIGNED else P.shift_right_logical_p
    return wrap(bind(prim, a, b))


# ----------------------------------------------------------------------- compositions
def _c(v, like):
    return weak_scalar(v, like.aval.dtype if hasattr(like, "aval") else like)


def positive(x, /):
    x = as_array(x, "positive")
    _check("positive", x.dtype, _NUM)
    return x


def square(x, /):
    x = as_array(x, "square")
    _check("square", x.dtype, _NUM)
    return wrap(bind(P.mul_p, x._v, x._v))


def reciprocal(x, /):
    x = as_array(x, "reciprocal")
    _check("reciprocal", x.dtype, _FLOAT)
    return wrap(bind(P.div_p, _c(1, x._v), x._v))


def divide(x1, x2, /):
    a, b, dt = binary("divide", x1, x2)
    if dt not in _FLOAT:
        _check("divide", dt, _NUM, "x1 and x2")
        a, b = cast(a, D.DEFAULT_FLOAT), cast(b, D.DEFAULT_FLOAT)   # true division of integers
    try:
        return wrap(bind(P.div_p, a, b))
    except ValueError as e:
        raise ValueError(f"divide: {e}") from None


divide.in_place = _in_place("divide", P.div_p, frozenset(d.dtype for d in D.FLOATING))


def _floor_div_raw(a, b, dt):
    if dt in D.REAL_FLOAT:
        return _float_floor_div(a, b, dt)
    q = bind(P.div_p, a, b)   # truncates toward zero
    if dt in D.UNSIGNED:
        return q
    r = bind(P.sub_p, a, bind(P.mul_p, q, b))
    zero = _c(0, dt)
    adjust = bind(P.and_p, bind(P.ne_p, r, zero), bind(P.ne_p, bind(P.lt_p, r, zero), bind(P.lt_p, b, zero)))
    return P.select_n(adjust, q, bind(P.sub_p, q, _c(1, dt)))


def _float_floor_div(a, b, dt):
    """The floor of the exact quotient, NumPy's and Python's value. floor(a / b) is one too high where the rounded
    quotient reaches an integer the exact one does not (1.0 // 0.1 is 9.0; floor(1.0 / 0.1) is 10.0), so this
    divides a - fmod(a, b), a multiple of b up to rounding, and rounds that to the nearest integer (ties down); a
    zero takes the quotient's sign. Where fmod is NaN (an infinite a, a zero divisor, NaN) or b is infinite it is
    floor(a / b): the standard's special cases."""
    q = bind(P.div_p, a, b)
    m = bind(P.rem_p, a, b)   # exact; the sign of a
    zero, one = _c(0, dt), _c(1, dt)
    d = bind(P.div_p, bind(P.sub_p, a, m), b)
    signs_differ = bind(P.and_p, bind(P.ne_p, m, zero), bind(P.ne_p, bind(P.lt_p, m, zero), bind(P.lt_p, b, zero)))
    d = P.select_n(signs_differ, d, bind(P.sub_p, d, one))
    f = bind(P.floor_p, d)
    f = P.select_n(bind(P.gt_p, bind(P.sub_p, d, f), _c(0.5, dt)), f, bind(P.add_p, f, one))
    f = P.select_n(bind(P.eq_p, d, zero), f, bind(P.mul_p, q, zero))
    finite = bind(P.and_p, bind(P.is_finite_p, m), bind(P.is_finite_p, b))
    return P.select_n(finite, bind(P.floor_p, q), f)


def floor_divide(x1, x2, /):
    a, b, dt = binary("floor_divide", x1, x2)
    _check("floor_divide", dt, _REALNUM, "x1 and x2")
    return wrap(_floor_div_raw(a, b, dt))


def remainder(x1, x2, /):
    a, b, dt = binary("remainder", x1, x2)
    _check("remainder", dt, _REALNUM, "x1 and x2")
    r = bind(P.rem_p, a, b)   # sign of the dividend; the standard wants the sign of the divisor
    zero = _c(0, dt)
    if dt in D.UNSIGNED:
        return wrap(r)
    fix = bind(P.and_p, bind(P.ne_p, r, zero), bind(P.ne_p, bind(P.lt_p, r, zero), bind(P.lt_p, b, zero)))
    r = P.select_n(fix, r, bind(P.add_p, r, b))
    if dt in D.REAL_FLOAT:   # a zero remainder takes the divisor's sign
        is_zero = bind(P.eq_p, r, zero)
        r = P.select_n(is_zero, r, P.select_n(_signbit_raw(b), zero, bind(P.neg_p, zero)))
    return wrap(r)


def _rounding(fname, prim):
    def f(x, /):
        x = as_array(x, fname)
        _check(fname, x.dtype, _REALNUM if fname != "round" else _NUM)
        if x.dtype in D.INTEGER:
            return x
        if x.dtype in D.COMPLEX:
            # each part rounded; complex(re, im), not re + im * 1j (that lost -0.0 and made inf * 1j NaN + inf j)
            return wrap(bind(P.complex_p, bind(prim, bind(P.real_p, x._v)), bind(prim, bind(P.imag_p, x._v))))
        return wrap(bind(prim, x._v))
    f.__name__ = f.__qualname__ = fname   # (Python names a function by its qualname in a bad-call TypeError)
    return f


ceil = _rounding("ceil", P.ceil_p)
floor = _rounding("floor", P.floor_p)
round = _rounding("round", P.round_p)


def trunc(x, /):
    x = as_array(x, "trunc")
    _check("trunc", x.dtype, _REALNUM)
    if x.dtype in D.INTEGER:
        return x
    v = x._v
    return wrap(P.select_n(bind(P.lt_p, v, _c(0, v)), bind(P.floor_p, v), bind(P.ceil_p, v)))


def sign(x, /):
    x = as_array(x, "sign")
    _check("sign", x.dtype, _NUM)
    if x.dtype in D.UNSIGNED:
        return wrap(P.convert_element_type(bind(P.ne_p, x._v, _c(0, x._v)), x.dtype))
    if x.dtype in D.COMPLEX:   # x / |x|, and exactly 0 + 0j at zero
        v = x._v
        mag = P.convert_element_type(bind(P.abs_p, v), x.dtype)
        is_zero = bind(P.eq_p, mag, _c(0, v))
        return wrap(P.select_n(is_zero, bind(P.div_p, v, P.select_n(is_zero, mag, _c(1, v))), _c(0, v)))
    if x.dtype in D.REAL_FLOAT:   # sign(-0) is +0, the standard's "0" (XLA keeps -0): -0.0 + 0.0 is +0.0
        v = x._v
        return wrap(bind(P.add_p, bind(P.sign_p, v), _c(0.0, v)))
    return wrap(bind(P.sign_p, x._v))


def conj(x, /):
    x = as_array(x, "conj")
    _check("conj", x.dtype, _NUM)
    return wrap(bind(P.conj_p, x._v)) if x.dtype in D.COMPLEX else x


def isnan(x, /):
    x = as_array(x, "isnan")
    _check("isnan", x.dtype, _NUM)
    v = x._v
    if x.dtype in D.COMPLEX:
        return wrap(bind(P.or_p, bind(P.ne_p, bind(P.real_p, v), bind(P.real_p, v)),
                         bind(P.ne_p, bind(P.imag_p, v), bind(P.imag_p, v))))
    return wrap(bind(P.ne_p, v, v))


def isinf(x, /):
    x = as_array(x, "isinf")
    _check("isinf", x.dtype, _NUM)
    v = x._v
    if x.dtype in D.INTEGER:
        return wrap(bind(P.ne_p, v, v))
    if x.dtype in D.COMPLEX:
        re, im = bind(P.abs_p, bind(P.real_p, v)), bind(P.abs_p, bind(P.imag_p, v))
        inf = _c(np.inf, re)
        return wrap(bind(P.or_p, bind(P.eq_p, re, inf), bind(P.eq_p, im, inf)))
    return wrap(bind(P.eq_p, bind(P.abs_p, v), _c(np.inf, v)))


def isfinite(x, /):
    x = as_array(x, "isfinite")
    _check("isfinite", x.dtype, _NUM)
    v = x._v
    if x.dtype in D.INTEGER:
        return wrap(bind(P.eq_p, v, v))
    if x.dtype in D.COMPLEX:
        return wrap(bind(P.and_p, bind(P.is_finite_p, bind(P.real_p, v)), bind(P.is_finite_p, bind(P.imag_p, v))))
    return wrap(bind(P.is_finite_p, v))


def _log_base(fname, base):
    def f(x, /):
        x = as_array(x, fname)
        _check(fname, x.dtype, _FLOAT)
        v = x._v
        if x.dtype in D.COMPLEX:
            return wrap(CS.apply(fname, P.log_p, v, divisor=float(np.log(base))))
        r = bind(P.div_p, bind(P.log_p, v), _c(np.log(base), v))
        return _exact_at_powers(wrap(r), x, base)
    f.__name__ = f.__qualname__ = fname   # (Python names a function by its qualname in a bad-call TypeError)
    return f


_POWERS = {}   # (base, dtype) -> (Array of the correctly rounded base**k, smallest k): made once


def _power_table(base, dt):
    key = (base, dt)
    if key not in _POWERS:
        fi = np.finfo(dt)   # normal numbers only: a subnormal "power" is not the power (NumPy agrees)
        if base == 2.0:
            lo, hi = int(fi.minexp), int(fi.maxexp) - 1
        else:
            lo, hi = int(np.ceil(np.log10(float(fi.smallest_normal)))), int(np.floor(np.log10(float(fi.max))))
        ks = range(lo, hi + 1)
        vals = [np.ldexp(dt.type(1), k) if base == 2.0 else dt.type(f"1e{k}") for k in ks]
        from ._creation import asarray
        _POWERS[key] = (asarray(np.array(vals, dt)), lo)
    return _POWERS[key]


def _exact_at_powers(r, x, base):
    """log2/log10 computed as log(x)/log(base) misses exact integers at the powers of the base
    (log10(0.1) = -0.9999999999999998; scipy.signal rounds on it). Where x is the correctly rounded
    base**k, the answer is k, as NumPy's; the derivative stays that of log(x)/log(base)."""
    from transforms.custom_derivatives import stop_gradient_p
    take, reshape, where = _module("_indexing").take, _module("_manipulation").reshape, _module("_searching").where
    table, lo = _power_table(base, x.dtype)
    k = round(r)
    idx = clip(_as_int64(k) - lo, 0, table.shape[0] - 1)
    hit = logical_and(equal(reshape(take(table, reshape(idx, (-1,))), x.shape), x), isfinite(r))
    fix = where(hit, k - r, 0.0)
    return r + wrap(bind(stop_gradient_p, fix._v))


def _as_int64(x):
    return wrap(cast(x._v, D.int64))


log2 = _log_base("log2", 2.0)
log10 = _log_base("log10", 10.0)


_signbit_raw = CS.signbit_raw   # the sign bit itself (-0.0 and -NaN count as negative)


def signbit(x, /):
    x = as_array(x, "signbit")
    _check("signbit", x.dtype, _REALFLOAT)
    return wrap(_signbit_raw(x._v))


def copysign(x1, x2, /):
    a, b, dt = binary("copysign", x1, x2)
    _check("copysign", dt, _REALFLOAT, "x1 and x2")
    mag = bind(P.abs_p, a)
    return wrap(P.select_n(_signbit_raw(b), mag, bind(P.neg_p, mag)))


def hypot(x1, x2, /):
    a, b, dt = binary("hypot", x1, x2)
    _check("hypot", dt, _REALFLOAT, "x1 and x2")
    ax, ay = bind(P.abs_p, a), bind(P.abs_p, b)
    hi, lo = bind(P.max_p, ax, ay), bind(P.min_p, ax, ay)
    safe_hi = P.select_n(bind(P.eq_p, hi, _c(0, hi)), hi, _c(1, hi))
    r = bind(P.div_p, lo, safe_hi)
    out = bind(P.mul_p, hi, bind(P.sqrt_p, bind(P.add_p, _c(1, r), bind(P.mul_p, r, r))))
    inf = _c(np.inf, hi)
    either_inf = bind(P.or_p, bind(P.eq_p, ax, inf), bind(P.eq_p, ay, inf))
    return wrap(P.select_n(either_inf, out, inf))


def logaddexp(x1, x2, /):
    a, b, dt = binary("logaddexp", x1, x2)
    _check("logaddexp", dt, _REALFLOAT, "x1 and x2")
    hi = bind(P.max_p, a, b)
    d = bind(P.neg_p, bind(P.abs_p, bind(P.sub_p, a, b)))
    out = bind(P.add_p, hi, bind(P.log1p_p, bind(P.exp_p, d)))
    same_inf = bind(P.and_p, bind(P.eq_p, a, b), bind(P.eq_p, bind(P.abs_p, a), _c(np.inf, a)))
    return wrap(P.select_n(same_inf, out, a))


def clip(x, /, min=None, max=None):
    x = as_array(x, "clip")
    _check("clip", x.dtype, _REALNUM)
    v = x._v
    for bound, prim, name in ((min, P.max_p, "min"), (max, P.min_p, "max")):
        if bound is None:
            continue
        if type(bound) not in (int, float) and type(bound) is not Array:
            p = py_number(bound)   # a NumPy scalar bound is the Python number it is
            bound = p if type(p) in (int, float) else bound
        if type(bound) in (int, float):
            if x.dtype in D.INTEGER and type(bound) is float:
                raise TypeError(f"clip: {name}={bound!r} is a float but x has dtype {x.dtype.name}")
            if x.dtype in D.INTEGER:
                info = np.iinfo(x.dtype)
                if not info.min <= bound <= info.max:
                    if (name == "min") == (bound < info.min):
                        continue   # a bound outside the dtype's range changes nothing
                    bound = int(np.clip(bound, info.min, info.max))
            bv = weak_scalar(bound, x.dtype, "clip")
        else:
            bound = as_array(bound, "clip", name)
            if bound.shape != x.shape:
                check_broadcast("clip", x.shape, bound.shape, ("x", name))
            if bound.dtype != x.dtype:
                D.promote(x.dtype, bound.dtype, "clip")
                if bound.dtype.kind != x.dtype.kind:
                    raise TypeError(f"clip: {name} has dtype {bound.dtype.name}, x has {x.dtype.name}")
            bv = cast(bound._v, x.dtype)
        v = bind(prim, v, bv)
    if x.dtype in D.REAL_FLOAT:
        v = P.select_n(bind(P.ne_p, x._v, x._v), v, x._v)   # NaN stays NaN
    return wrap(v)


# The docstrings (Parameters/Returns/Raises and an example) live in a table: written out here they would
# take this file past the line budget. `pow` and `real` keep theirs above.
from ._elementwise_docs import DOCS as _DOCS  # noqa: E402
for _name, _doc in _DOCS.items():
    globals()[_name].__doc__ = _doc
