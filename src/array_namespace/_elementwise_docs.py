"""The docstrings of the elementwise functions, as a table that _elementwise.py applies at its end.

Why a table: seventy docstrings written out in _elementwise.py would take it past the 600-line budget
(tools/size_budget.py), and most of each one follows from the function's dtype category. An entry
gives what the function computes, its category (which decides the TypeError), what it returns and
one example; `_unary`/`_binary` write the Parameters/Returns/Raises lines in the house format
(tests/test_docstrings.py runs the examples). `pow` and `real` keep their docstrings in place.
"""

_KINDS = {   # category -> the dtypes its operands may have (None: any)
    "float": "floating-point (real or complex)", "realfloat": "real floating-point",
    "complex": "complex floating-point", "num": "numeric", "realnum": "real-valued numeric",
    "int": "integer", "intbool": "integer or boolean", "bool": "boolean", "any": None,
}


def _unary(summary, kind, returns, call, out):
    what = _KINDS[kind]
    return (f"{summary}\n\n"
            f"Parameters: x (Array or Python scalar): an array of {what} dtype.\n"
            f"Returns: Array: {returns}.\n"
            f"Raises: TypeError: if x is not an Array or Python scalar, or its dtype is not {what}.\n\n"
            f">>> {call}\n{out}\n")


def _binary(summary, kind, returns, call, out):
    what = _KINDS[kind]
    dtype = "or the dtypes do not promote" if what is None else \
        f"the dtypes do not promote, or the promoted dtype is not {what}"
    return (f"{summary}\n\n"
            f"Parameters: x1, x2 (Array or Python scalar): arrays of {what or 'any'} dtype; their shapes "
            f"broadcast together.\n"
            f"Returns: Array: {returns}; the broadcast shape.\n"
            f"Raises: TypeError: if an operand is not an Array or Python scalar, {dtype}. "
            f"ValueError: if the shapes do not broadcast.\n\n"
            f">>> {call}\n{out}\n")


_SAME = "of x's dtype (complex in, complex out)"
_BOOLS = "a bool Array"
_PROMOTED = "of the promoted dtype"

DOCS = {
    # ---------------------------------------------------------------- unary, floating-point
    "acos": _unary("Inverse cosine of each element, in radians.", "float", f"arccos(x), {_SAME}; NaN outside "
                   "[-1, 1] for real x", "xp.acos(xp.asarray([1.0, 0.0]))", "Array([0.        , 1.57079633])"),
    "acosh": _unary("Inverse hyperbolic cosine of each element.", "float", f"arccosh(x), {_SAME}; NaN below 1 "
                    "for real x", "xp.acosh(xp.asarray([1.0, 2.0]))", "Array([0.        , 1.3169579])"),
    "asin": _unary("Inverse sine of each element, in radians.", "float", f"arcsin(x), {_SAME}; NaN outside "
                   "[-1, 1] for real x", "xp.asin(xp.asarray([0.0, 1.0]))", "Array([0.        , 1.57079633])"),
    "asinh": _unary("Inverse hyperbolic sine of each element.", "float", f"arcsinh(x), {_SAME}",
                    "xp.asinh(xp.asarray([0.0, 1.0]))", "Array([0.        , 0.88137359])"),
    "atan": _unary("Inverse tangent of each element, in radians.", "float", f"arctan(x), {_SAME}",
                   "xp.atan(xp.asarray([0.0, 1.0]))", "Array([0.        , 0.78539816])"),
    "atanh": _unary("Inverse hyperbolic tangent of each element.", "float", f"arctanh(x), {_SAME}; NaN outside "
                    "[-1, 1] for real x", "xp.atanh(xp.asarray([0.0, 0.5]))", "Array([0.        , 0.54930614])"),
    "cos": _unary("Cosine of each element (radians).", "float", f"cos(x), {_SAME}",
                  "xp.cos(xp.asarray([0.0, 1.0]))", "Array([1.        , 0.54030231])"),
    "cosh": _unary("Hyperbolic cosine of each element.", "float", f"cosh(x), {_SAME}",
                   "xp.cosh(xp.asarray([0.0, 1.0]))", "Array([1.        , 1.54308063])"),
    "exp": _unary("e raised to each element.", "float", f"exp(x), {_SAME}",
                  "xp.exp(xp.asarray([0.0, 1.0]))", "Array([1.        , 2.71828183])"),
    "expm1": _unary("exp(x) - 1 of each element, accurate for x near 0.", "float", f"exp(x) - 1, {_SAME}",
                    "xp.expm1(xp.asarray([0.0, 1e-10]))", "Array([0.e+00, 1.e-10])"),
    "log": _unary("Natural logarithm of each element.", "float", f"log(x), {_SAME}; NaN for negative real x, "
                  "-inf at 0", "xp.log(xp.asarray([1.0, xp.e]))", "Array([0., 1.])"),
    "log1p": _unary("log(1 + x) of each element, accurate for x near 0.", "float", f"log(1 + x), {_SAME}",
                    "xp.log1p(xp.asarray([0.0, 1.0]))", "Array([0.        , 0.69314718])"),
    "log2": _unary("Base-2 logarithm of each element (exact at powers of 2).", "float", f"log2(x), {_SAME}",
                   "xp.log2(xp.asarray([1.0, 8.0]))", "Array([0., 3.])"),
    "log10": _unary("Base-10 logarithm of each element (exact at powers of 10).", "float", f"log10(x), {_SAME}",
                    "xp.log10(xp.asarray([1.0, 0.001]))", "Array([ 0., -3.])"),
    "sin": _unary("Sine of each element (radians).", "float", f"sin(x), {_SAME}",
                  "xp.sin(xp.asarray([0.0, 1.0]))", "Array([0.        , 0.84147098])"),
    "sinh": _unary("Hyperbolic sine of each element.", "float", f"sinh(x), {_SAME}",
                   "xp.sinh(xp.asarray([0.0, 1.0]))", "Array([0.        , 1.17520119])"),
    "sqrt": _unary("Square root of each element.", "float", f"sqrt(x), {_SAME}; NaN for negative real x",
                   "xp.sqrt(xp.asarray([4.0, 2.0]))", "Array([2.        , 1.41421356])"),
    "tan": _unary("Tangent of each element (radians).", "float", f"tan(x), {_SAME}",
                  "xp.tan(xp.asarray([0.0, 1.0]))", "Array([0.        , 1.55740772])"),
    "tanh": _unary("Hyperbolic tangent of each element.", "float", f"tanh(x), {_SAME}",
                   "xp.tanh(xp.asarray([0.0, 1.0]))", "Array([0.        , 0.76159416])"),
    "reciprocal": _unary("1 / x for each element.", "float", f"1 / x, {_SAME}",
                         "xp.reciprocal(xp.asarray([1.0, 4.0]))", "Array([1.  , 0.25])"),
    "signbit": _unary("Whether the sign bit of each element is set (true for -0.0 and negative NaN too).",
                      "realfloat", _BOOLS, "xp.signbit(xp.asarray([-0.0, 0.0, -1.0]))",
                      "Array([ True, False,  True])"),
    # ---------------------------------------------------------------- unary, numeric
    "abs": _unary("Absolute value of each element.", "num", "|x|, of x's dtype; for complex x the real "
                  "magnitude (float32 for complex64, float64 for complex128)",
                  "xp.abs(xp.asarray([-1.5, 2.0]))", "Array([1.5, 2. ])"),
    "negative": _unary("The negation -x of each element.", "num", "-x, of x's dtype",
                       "xp.negative(xp.asarray([1, -2]))", "Array([-1,  2])"),
    "positive": _unary("+x: each element unchanged.", "num", "x itself (same dtype and values)",
                       "xp.positive(xp.asarray([1, -2]))", "Array([ 1, -2])"),
    "square": _unary("x * x for each element.", "num", "x squared, of x's dtype",
                     "xp.square(xp.asarray([2, -3]))", "Array([4, 9])"),
    "sign": _unary("Sign of each element: -1, 0 or 1 (x / |x| for complex x, 0 at 0).", "num",
                   "the sign, of x's dtype; NaN for NaN", "xp.sign(xp.asarray([-2.0, 0.0, 3.0]))",
                   "Array([-1.,  0.,  1.])"),
    "conj": _unary("Complex conjugate of each element (a real array is returned as it is).", "num",
                   "conj(x), of x's dtype", "xp.conj(xp.asarray([1 + 2j]))", "Array([1.-2.j], dtype=complex128)"),
    "imag": _unary("Imaginary part of each element.", "complex", "imag(x), float32 for complex64 and float64 "
                   "for complex128", "xp.imag(xp.asarray([1 + 2j]))", "Array([2.])"),
    "round": _unary("Round each element to the nearest integer, halves to even (real and imaginary parts "
                    "separately for complex x; an integer array is returned as it is).", "num",
                    "of x's dtype", "xp.round(xp.asarray([0.5, 1.5, -2.7]))", "Array([ 0.,  2., -3.])"),
    "ceil": _unary("The smallest integer not below each element (an integer array is returned as it is).",
                   "realnum", "of x's dtype", "xp.ceil(xp.asarray([-1.5, 0.2]))", "Array([-1.,  1.])"),
    "floor": _unary("The largest integer not above each element (an integer array is returned as it is).",
                    "realnum", "of x's dtype", "xp.floor(xp.asarray([-1.5, 0.2]))", "Array([-2.,  0.])"),
    "trunc": _unary("Each element rounded toward zero (an integer array is returned as it is).", "realnum",
                    "of x's dtype", "xp.trunc(xp.asarray([-1.5, 1.7]))", "Array([-1.,  1.])"),
    "isnan": _unary("Whether each element is NaN (either part, for complex x).", "num", _BOOLS,
                    "xp.isnan(xp.asarray([1.0, xp.nan, xp.inf]))", "Array([False,  True, False])"),
    "isinf": _unary("Whether each element is +inf or -inf (either part, for complex x).", "num", _BOOLS,
                    "xp.isinf(xp.asarray([1.0, xp.nan, -xp.inf]))", "Array([False, False,  True])"),
    "isfinite": _unary("Whether each element is finite (both parts, for complex x).", "num", _BOOLS,
                       "xp.isfinite(xp.asarray([1.0, xp.nan, xp.inf]))", "Array([ True, False, False])"),
    # ---------------------------------------------------------------- unary, boolean / integer
    "logical_not": _unary("Logical NOT of each element.", "bool", _BOOLS,
                          "xp.logical_not(xp.asarray([True, False]))", "Array([False,  True])"),
    "bitwise_invert": _unary("Bitwise NOT (~x) of each element; logical NOT for booleans.", "intbool",
                             "of x's dtype", "xp.bitwise_invert(xp.asarray([0, 5]))", "Array([-1, -6])"),
    # ---------------------------------------------------------------- binary, arithmetic
    "add": _binary("The sum x1 + x2, elementwise.", "num", f"x1 + x2, {_PROMOTED}",
                   "xp.add(xp.asarray([1, 2]), 10)", "Array([11, 12])"),
    "subtract": _binary("The difference x1 - x2, elementwise.", "num", f"x1 - x2, {_PROMOTED}",
                        "xp.subtract(xp.asarray([1.0, 2.0]), 0.5)", "Array([0.5, 1.5])"),
    "multiply": _binary("The product x1 * x2, elementwise.", "num", f"x1 * x2, {_PROMOTED}",
                        "xp.multiply(xp.asarray([1, 2]), xp.asarray([3, 4]))", "Array([3, 8])"),
    "divide": _binary("True division x1 / x2, elementwise (integer operands divide as float64).", "num",
                      "x1 / x2, of the promoted floating dtype", "xp.divide(xp.asarray([1, 2]), 2)",
                      "Array([0.5, 1. ])"),
    "floor_divide": _binary("Floor division x1 // x2, elementwise (rounds toward -inf).", "realnum",
                            f"the floor of the exact quotient (NumPy's and Python's: 1.0 // 0.1 is 9.0), {_PROMOTED}",
                            "xp.floor_divide(xp.asarray([7, -7]), 2)",
                            "Array([ 3, -4])"),
    "remainder": _binary("x1 modulo x2, elementwise, with the sign of x2 (Python's %).", "realnum",
                         f"x1 - floor(x1 / x2) * x2, {_PROMOTED}", "xp.remainder(xp.asarray([7, -7]), 3)",
                         "Array([1, 2])"),
    "maximum": _binary("The larger of x1 and x2, elementwise (NaN if either is NaN).", "realnum",
                       f"max(x1, x2), {_PROMOTED}", "xp.maximum(xp.asarray([1.0, xp.nan]), 0.0)",
                       "Array([ 1., nan])"),
    "minimum": _binary("The smaller of x1 and x2, elementwise (NaN if either is NaN).", "realnum",
                       f"min(x1, x2), {_PROMOTED}", "xp.minimum(xp.asarray([1, 5]), 3)", "Array([1, 3])"),
    "atan2": _binary("The angle of the point (x2, x1), in radians, elementwise.", "realfloat",
                     f"atan(x1 / x2) in the quadrant of (x2, x1), {_PROMOTED}",
                     "xp.atan2(xp.asarray([1.0, 1.0]), xp.asarray([1.0, -1.0]))", "Array([0.78539816, 2.35619449])"),
    "nextafter": _binary("The next representable number after x1 toward x2, elementwise.", "realfloat",
                         _PROMOTED, "xp.nextafter(xp.asarray([0.0], dtype=xp.float32), 1.0)",
                         "Array([1.e-45], dtype=float32)"),
    "copysign": _binary("|x1| with the sign of x2, elementwise (the sign bit: -0.0 counts as negative).",
                        "realfloat", _PROMOTED, "xp.copysign(xp.asarray([1.0, 2.0]), xp.asarray([-1.0, 0.0]))",
                        "Array([-1.,  2.])"),
    "hypot": _binary("sqrt(x1**2 + x2**2), elementwise, without overflow in between.", "realfloat",
                     _PROMOTED, "xp.hypot(xp.asarray([3.0, 1e200]), 4.0)", "Array([5.e+000, 1.e+200])"),
    "logaddexp": _binary("log(exp(x1) + exp(x2)), elementwise, without overflow in between.", "realfloat",
                         _PROMOTED, "xp.logaddexp(xp.asarray([0.0, 1000.0]), 0.0)",
                         "Array([6.93147181e-01, 1.00000000e+03])"),
    # ---------------------------------------------------------------- binary, comparisons
    "equal": _binary("x1 == x2, elementwise.", "any", _BOOLS, "xp.equal(xp.asarray([1, 2, 3]), 2)",
                     "Array([False,  True, False])"),
    "not_equal": _binary("x1 != x2, elementwise.", "any", _BOOLS, "xp.not_equal(xp.asarray([1, 2, 3]), 2)",
                         "Array([ True, False,  True])"),
    "less": _binary("x1 < x2, elementwise.", "realnum", _BOOLS, "xp.less(xp.asarray([1, 2, 3]), 2)",
                    "Array([ True, False, False])"),
    "less_equal": _binary("x1 <= x2, elementwise.", "realnum", _BOOLS, "xp.less_equal(xp.asarray([1, 2, 3]), 2)",
                          "Array([ True,  True, False])"),
    "greater": _binary("x1 > x2, elementwise.", "realnum", _BOOLS, "xp.greater(xp.asarray([1, 2, 3]), 2)",
                       "Array([False, False,  True])"),
    "greater_equal": _binary("x1 >= x2, elementwise.", "realnum", _BOOLS,
                             "xp.greater_equal(xp.asarray([1, 2, 3]), 2)", "Array([False,  True,  True])"),
    # ---------------------------------------------------------------- binary, logical / bitwise
    "logical_and": _binary("Logical AND, elementwise.", "bool", _BOOLS,
                           "xp.logical_and(xp.asarray([True, True]), xp.asarray([True, False]))",
                           "Array([ True, False])"),
    "logical_or": _binary("Logical OR, elementwise.", "bool", _BOOLS,
                          "xp.logical_or(xp.asarray([False, False]), xp.asarray([True, False]))",
                          "Array([ True, False])"),
    "logical_xor": _binary("Logical XOR, elementwise.", "bool", _BOOLS,
                           "xp.logical_xor(xp.asarray([True, True]), xp.asarray([True, False]))",
                           "Array([False,  True])"),
    "bitwise_and": _binary("Bitwise AND (x1 & x2), elementwise.", "intbool", _PROMOTED,
                           "xp.bitwise_and(xp.asarray([12]), 10)", "Array([8])"),
    "bitwise_or": _binary("Bitwise OR (x1 | x2), elementwise.", "intbool", _PROMOTED,
                          "xp.bitwise_or(xp.asarray([12]), 10)", "Array([14])"),
    "bitwise_xor": _binary("Bitwise XOR (x1 ^ x2), elementwise.", "intbool", _PROMOTED,
                           "xp.bitwise_xor(xp.asarray([12]), 10)", "Array([6])"),
    "bitwise_left_shift": _binary("x1 shifted left by x2 bits (x1 << x2), elementwise.", "int", _PROMOTED,
                                  "xp.bitwise_left_shift(xp.asarray([1, 3]), 2)", "Array([ 4, 12])"),
    "bitwise_right_shift": _binary("x1 shifted right by x2 bits (x1 >> x2; arithmetic for signed dtypes), "
                                   "elementwise.", "int", _PROMOTED,
                                   "xp.bitwise_right_shift(xp.asarray([-8, 8]), 1)", "Array([-4,  4])"),
}

DOCS["clip"] = """Each element of x limited to the interval [min, max].

Parameters: x (Array or Python scalar): a real-valued numeric array. min, max (Python scalar, Array or None):
    the bounds (None: no bound on that side); an Array bound broadcasts to x's shape and is cast to x's dtype.
Returns: Array: of x's dtype and shape; NaN stays NaN.
Raises: TypeError: if x is not real-valued numeric, a float bound is given for an integer x, or a bound's dtype
    is of another kind than x's. ValueError: if an Array bound does not broadcast to x's shape.

>>> xp.clip(xp.asarray([1.0, 5.0, 9.0]), 2.0, 6.0)
Array([2., 5., 6.])
"""
