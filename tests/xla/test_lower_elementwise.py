"""xla/lower_elementwise.py: every elementwise primitive it lowers, bound directly and run under jit,
against NumPy/scipy on float32 and float64 grids of special values (signed zeros, +-inf, NaN, huge),
integer and bool operands, and complex parts. The last test checks the cases reach every primitive
the module lowers."""
import functools

import numpy as np
import pytest
import scipy.special as sc

import array_namespace as xp

from lower_harness import Case, check, grid, jit_all, lowered_by, raw
from transforms import jit
from transforms.primitives import elementwise as E
from transforms.primitives import special_erf as SE
from transforms.primitives import special_gamma as SG

TOL = {np.float32: (2e-6, 1e-37), np.float64: (1e-13, 1e-300)}
# below: (primitive, oracle, grid values or None for the default special-value grid, extra rtol factor)
UNARY = [
    (E.neg_p, np.negative), (E.sin_p, np.sin), (E.cos_p, np.cos), (E.tan_p, np.tan), (E.asin_p, np.arcsin),
    (E.acos_p, np.arccos), (E.atan_p, np.arctan), (E.sinh_p, np.sinh), (E.cosh_p, np.cosh), (E.tanh_p, np.tanh),
    (E.asinh_p, np.arcsinh), (E.acosh_p, np.arccosh), (E.atanh_p, np.arctanh), (E.exp_p, np.exp),
    (E.exp2_p, np.exp2), (E.expm1_p, np.expm1), (E.log_p, np.log), (E.log1p_p, np.log1p), (E.sqrt_p, np.sqrt),
    (E.rsqrt_p, lambda x: 1 / np.sqrt(x)), (E.cbrt_p, np.cbrt), (E.logistic_p, sc.expit), (E.erf_p, sc.erf),
    (SE.erfc_p, sc.erfc), (E.sign_p, np.sign), (E.floor_p, np.floor), (E.ceil_p, np.ceil),
    (E.round_p, np.round), (E.abs_p, np.abs), (E.is_finite_p, np.isfinite),
    (SG.lgamma_p, sc.gammaln), (SG.digamma_p, sc.psi),
]
SMOOTH = [-3.5, -1.0, -0.5, -0.0, 0.0, 1e-300, 0.25, 0.5, 1.0, 2.0, 7.5, 30.0]   # away from 1e10's range reduction


def _unary_cases():
    out = []
    for prim, f in UNARY:
        for dt in (np.float32, np.float64):
            rtol, atol = TOL[dt]
            vals = grid(dt, SMOOTH) if prim in (E.sin_p, E.cos_p, E.tan_p) else grid(dt)
            if prim in (SG.lgamma_p, SG.digamma_p):   # poles at 0 and the negative integers checked separately
                vals = grid(dt, [-3.5, -0.5, 1e-30, 0.25, 0.5, 1.0, 2.0, 7.5, 1e10, np.inf, np.nan])
                rtol, atol = rtol * 100, (1e-6 if dt == np.float32 else 1e-15)   # zeros at 1, 2 and 1.4616
            out.append(Case(f"{prim}-{dt.__name__}", raw(prim), _quiet(f), [vals], rtol * 4, atol))
    return out


def _quiet(f):
    def g(*a):
        with np.errstate(all="ignore"):
            return f(*a)
    return g


def _pairs(dt, vals=(-np.inf, -2.0, -0.5, -0.0, 0.0, 0.5, 1.0, 3.0, np.inf, np.nan)):
    a, b = np.meshgrid(np.array(vals, dt), np.array(vals, dt))
    return [a.ravel(), b.ravel()]


def _mul0(a, b):   # the definition: a product, but 0 where either factor is 0 (even times inf or NaN)
    return np.where((a == 0) | (b == 0), 0, a * b).astype(a.dtype)


def _div0(a, b):   # a quotient, but 0 where the numerator is 0 (even over 0 or NaN)
    return np.where(a == 0, 0, a / b).astype(a.dtype)


BINARY = [(E.add_p, np.add), (E.sub_p, np.subtract), (E.mul_p, np.multiply), (E.div_p, np.divide),
          (E.rem_p, np.fmod), (E.pow_p, np.power), (E.max_p, np.maximum), (E.min_p, np.minimum),
          (E.atan2_p, np.arctan2), (E.nextafter_p, np.nextafter), (E.mul0_p, _mul0), (E.div0_p, _div0),
          (E.eq_p, np.equal), (E.ne_p, np.not_equal), (E.lt_p, np.less), (E.le_p, np.less_equal),
          (E.gt_p, np.greater), (E.ge_p, np.greater_equal)]


def _binary_cases():
    return [Case(f"{p}-{dt.__name__}", raw(p), _quiet(f), _pairs(dt), TOL[dt][0] * 4, TOL[dt][1])
            for p, f in BINARY for dt in (np.float32, np.float64)]


I32 = np.array([-7, -3, -1, 0, 1, 2, 5, 2**31 - 1, -2**31], np.int32)
I32b = np.array([2, -2, 3, 1, 7, -1, 5, 3, 7], np.int32)
U32 = np.array([0, 1, 5, 2**31, 2**32 - 1, 7, 12, 3, 9], np.uint32)
SH = np.array([0, 1, 3, 5, 31, 2, 4, 6, 1], np.int32)
B = [np.array([True, True, False, False]), np.array([True, False, True, False])]


def _trunc_div(a, b):
    return (np.sign(a) * np.sign(b) * (np.abs(a.astype(np.int64)) // np.abs(b.astype(np.int64)))).astype(a.dtype)


INTEGER = [
    Case("div-int32", raw(E.div_p), _trunc_div, [I32[:7], I32b[:7]]),
    Case("rem-int32", raw(E.rem_p), np.fmod, [I32[:7], I32b[:7]]),
    Case("add-int32-wraps", raw(E.add_p), np.add, [I32, I32]),
    Case("max-uint32", raw(E.max_p), np.maximum, [U32, U32[::-1].copy()]),
    Case("and-bool", raw(E.and_p), np.logical_and, B), Case("or-bool", raw(E.or_p), np.logical_or, B),
    Case("xor-bool", raw(E.xor_p), np.logical_xor, B), Case("not-bool", raw(E.not_p), np.logical_not, B[:1]),
    Case("and-int32", raw(E.and_p), np.bitwise_and, [I32, I32b]), Case("or-int32", raw(E.or_p), np.bitwise_or, [I32, I32b]),
    Case("xor-uint32", raw(E.xor_p), np.bitwise_xor, [U32, U32[::-1].copy()]),
    Case("not-int32", raw(E.not_p), np.invert, [I32]),
    Case("shift_left-int32", raw(E.shift_left_p), np.left_shift, [I32b, SH]),
    Case("shift_right_arithmetic-int32", raw(E.shift_right_arithmetic_p), np.right_shift, [I32, SH]),
    Case("shift_right_logical-uint32", raw(E.shift_right_logical_p), np.right_shift, [U32, SH.astype(np.uint32)]),
    Case("abs-int32", raw(E.abs_p), np.abs, [I32]), Case("sign-int32", raw(E.sign_p), np.sign, [I32]),
    Case("lt-uint32", raw(E.lt_p), np.less, [U32, U32[::-1].copy()]),
]

Z = np.array([1 + 2j, -3.5 - 0.5j, 0j, complex(np.inf, 1), complex(np.nan, 2)], np.complex128)
def _complex(re, im, dt):
    out = np.empty(re.shape, dt)   # (parts set as they are: re + 1j * im would turn (x, inf) into (nan, inf))
    out.real, out.imag = re, im
    return out


COMPLEX = [
    Case("real-c128", raw(E.real_p), np.real, [Z]), Case("imag-c128", raw(E.imag_p), np.imag, [Z]),
    Case("conj-c64", raw(E.conj_p), np.conj, [Z.astype(np.complex64)]),
    Case("abs-c128", raw(E.abs_p), np.abs, [Z[:3]]),
    Case("mul-c128", raw(E.mul_p), np.multiply, [Z[:3], Z[:3][::-1].copy()]),
    Case("exp-c128", raw(E.exp_p), np.exp, [Z[:3]]),
    Case("complex-f64", raw(E.complex_p), lambda re, im: _complex(re, im, np.complex128),
         [np.array([1.5, -0.0, np.inf, np.nan, 2.0]), np.array([-2.0, 0.0, np.inf, np.inf, -0.0])]),
    Case("complex-f32", raw(E.complex_p), lambda re, im: _complex(re, im, np.complex64),
         [np.array([1.5, -3.0], np.float32), np.array([0.25, -0.0], np.float32)]),
]

CONVERT = [
    Case(f"convert-{a}-{b}", raw(E.convert_element_type_p, new_dtype=np.dtype(b), weak_type=False),
         lambda x, b=b: x.astype(b), [v.astype(a)])
    for a, b, v in [("float64", "float32", grid(np.float64)), ("float32", "float64", grid(np.float32)),
                    ("float64", "int32", np.array([-3.7, -0.5, 0.0, 2.9, 1e5])), ("int32", "float64", I32),
                    ("bool", "float32", B[0]), ("float32", "bool", grid(np.float32)),
                    ("int64", "int8", np.array([1, 127, 128, -129, 300])), ("float64", "complex128", grid(np.float64))]
]

OTHER = [
    Case("select_n-2", raw(E.select_n_p), lambda p, a, b: np.where(p, b, a),
         [B[0], np.array([1.0, 2.0, 3.0, 4.0]), np.array([-1.0, -2.0, -3.0, -4.0])]),
    Case("select_n-3-int-pred", raw(E.select_n_p), lambda p, a, b, c: np.choose(p, [a, b, c]),
         [np.array([0, 2, 1, 2], np.int32)] + [np.arange(4.0) + k for k in (0, 10, 20)]),
    Case("zeta_chlo", raw(SG.zeta_chlo_p), sc.zeta, [np.array([2.0, 3.5, 1.5, 10.0]), np.array([1.0, 0.5, 2.0, 3.0])],
         1e-12),
]

CASES = _unary_cases() + _binary_cases() + INTEGER + COMPLEX + CONVERT + OTHER


@functools.cache
def _jitted():
    return jit_all(CASES)   # (every case's jit outputs from one program: one compile, not one per case)


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_jit_matches_numpy(case):
    check(case, jitted=_jitted()[case.name])


def test_gamma_poles():
    """lgamma is +inf and digamma is NaN or +-inf at 0 and the negative integers (scipy: psi(0) = -inf,
    psi(-n) = NaN)."""
    x = np.array([-3.0, -1.0, -0.0, 0.0])
    check(Case("lgamma-poles", raw(SG.lgamma_p), sc.gammaln, [x]))
    got = np.asarray(jit(raw(SG.digamma_p))(xp.asarray(x)))
    assert np.all(np.isnan(got) | np.isinf(got)), got


def test_every_lowered_primitive_is_reached():
    reached = {c.fn.__name__ for c in CASES}
    assert lowered_by("xla.lower_elementwise") - reached == set()


# XLA's algebraic simplifier rewrites a float a / constant or a / broadcast(b) into a * (1 / b), a / sqrt(b) into
# a * rsqrt(b), (a / b) / c into a / (b * c), ...; the lowering hides the operands behind an optimization barrier
# (lower_elementwise.py, _divide), so jit divides as NumPy does, bit for bit (as the eager kernel: np.true_divide).
_EDGES = [1.0, -1.0, 3.0, 0.1, 1e300, -1e-300, 7.0, 1e10, np.pi, 0.0, -0.0, np.inf, -np.inf, np.nan]


def _bits_equal(got, want):
    got = np.asarray(got)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got.view(f"u{want.itemsize}"), want.view(f"u{want.itemsize}"))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("divisor", ["scalar", "row", "column", "constant", "div0"])
def test_jit_division_by_a_broadcast_divisor_is_correctly_rounded(dtype, divisor):
    rng = np.random.default_rng(0)
    tiny, big = float(np.finfo(dtype).tiny), float(np.finfo(dtype).max)
    edges = np.array([v for v in _EDGES if not np.isfinite(v) or v == 0 or tiny <= abs(v) <= big], dtype)
    x = np.concatenate([rng.random(34 * 5 - edges.size).astype(dtype) * 10, edges]).reshape(5, 34)
    b = {"scalar": np.asarray(3.0, dtype), "row": (rng.random(34) + 0.5).astype(dtype),
         "column": np.concatenate([(rng.random(3) + 0.5), [1 / 3.0, 1e-30]]).astype(dtype).reshape(5, 1)}
    with np.errstate(all="ignore"):
        if divisor == "constant":
            want, f, args = x / np.dtype(dtype).type(3.0), (lambda a: a / 3.0), (x,)
        elif divisor == "div0":   # (the quotient of grad's rules: 0 where the numerator is 0)
            want = np.where(x == 0, np.zeros_like(x), x / b["row"])
            f, args = raw(E.div0_p), (x, b["row"])
        else:
            want, f, args = x / b[divisor], (lambda u, v: u / v), (x, b[divisor])
        got = jit(f)(*map(xp.asarray, args))
    _bits_equal(got, want)
    with np.errstate(all="ignore"):
        _bits_equal(f(*map(xp.asarray, args)), want)   # (eagerly the same bits)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_jit_keeps_chained_divisions_as_written(dtype):
    """(a / 3) / 7 is not a / 21, a / (a / 3) is not (a * 3) / a, a / sqrt(b) is not a * rsqrt(b)."""
    x = (np.random.default_rng(1).random((5, 34)) + 0.01).astype(dtype)
    with np.errstate(all="ignore"):
        for f, g in ((lambda a: (a / 3.0) / 7.0, None), (lambda a: a / (a / 3.0), None),
                     (lambda a: (a / (a + 1.0)) / (a / 3.0), None),
                     (lambda a: a / xp.sqrt(a + 1.0), lambda a: a / np.sqrt(a + np.dtype(dtype).type(1.0)))):
            _bits_equal(jit(f)(xp.asarray(x)), (g or f)(x))


def test_jit_integer_division_by_a_power_of_two_still_floors():
    x = np.arange(-40, 40, dtype=np.int64)
    for d in (4, 3, -8):
        np.testing.assert_array_equal(np.asarray(jit(lambda a: a // d)(xp.asarray(x))), x // d)


def test_jit_jackknife_of_constant_data_is_degenerate_as_eagerly():
    """scipy.stats.bootstrap's BCa acceleration on constant data: the jackknife means all equal the mean, so
    0 / 0 = NaN (eagerly and in NumPy); with sums divided as sum * (1 / (n - 1)) jit made it -0.0286."""
    def acceleration(a):
        n = a.shape[0]
        theta = xp.sum(xp.where(xp.asarray(~np.eye(n, dtype=bool)), a[None, :], 0.0), axis=1) / (n - 1)
        d = xp.mean(theta) - theta
        return xp.sum(d ** 3) / (6.0 * xp.sum(d ** 2) ** 1.5)
    x = xp.asarray(np.full(34, 1e4))
    with np.errstate(invalid="ignore"):
        assert np.isnan(float(acceleration(x))) and np.isnan(float(jit(acceleration)(x)))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_jit_mean_of_a_constant_array_is_the_constant(dtype):
    """mean is sum / n (array_namespace/_statistical.py), not sum * (1 / n): 49 x 3.0 / 49 is 3.0, 147 * (1 / 49)
    is not."""
    for c in (3.0, 7.0, 1e4):
        x = np.full((49, 98), c, dtype)
        for axis in (0, 1, None):
            got = np.asarray(jit(lambda a: xp.mean(a, axis=axis))(xp.asarray(x)))
            np.testing.assert_array_equal(got, np.full(np.mean(x, axis=axis).shape, c, dtype))
            np.testing.assert_array_equal(got, np.mean(x, axis=axis))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_jit_keeps_the_order_of_constant_arithmetic(dtype):
    """(a + 1) - 1 is not a, (a * 3) * 7 is not a * 21, -0.0 + 0.0 is +0.0 (lower_elementwise.py, _as_written);
    a constant expression is still folded (gamma's a - 1/3 and 1 / sqrt(9 (a - 1/3)) for a number a)."""
    x = np.random.default_rng(1).random((5, 34)).astype(dtype)
    x[0, :3] = [-0.0, 0.0, 1e-30]
    one, three, seven = (np.dtype(dtype).type(v) for v in (1.0, 3.0, 7.0))
    for f, g in ((lambda a: (a + 1.0) - 1.0, lambda a: (a + one) - one),
                 (lambda a: (a * 3.0) * 7.0, lambda a: (a * three) * seven),
                 (lambda a: (1.0 - a) + 1.0, lambda a: (one - a) + one),
                 (lambda a: (a * 3.0) * a[1, 1], lambda a: (a * three) * a[1, 1]),
                 (lambda a: a + 0.0, lambda a: a + np.dtype(dtype).type(0.0))):
        _bits_equal(jit(f)(xp.asarray(x)), g(x))
    text = jit(lambda a: a * (xp.asarray(2.5, dtype=a.dtype) - 1 / 3)).lower(xp.asarray(x)).as_text()
    assert text.count("optimization_barrier") == 1   # (the product, not the constant's own subtraction)


def test_jit_adds_zero_and_multiplies_by_complex_one_as_ieee_where_the_operand_is_computed_in_the_fusion():
    """Past the barrier XLA's fusion emitter folded x + 0.0 into x and complex x * (1+0j) into x where x is computed
    in the same fusion (a reshape, a product): -0.0 + 0.0 gave -0.0 and (inf+0j) * (1+0j) inf+0j under jit, where
    eagerly (NumPy's) they are 0.0 and inf+nanj. The constant now goes on the left (found by fuzzing eager
    against jit)."""
    x = np.array([[-0.0, 0.0, -1.5, np.inf]])
    z = np.array([complex(np.inf, 0.0), -1j, complex(-0.0, -0.0), complex(0.0, np.inf)])
    cases = [(x, lambda a: xp.reshape(a, (-1,)) + 0.0, lambda a: a.reshape(-1) + 0.0),
             (x, lambda a: a * 2.0 + 0.0, lambda a: a * 2.0 + 0.0),
             (z, lambda a: xp.flip(a) * (1 + 0j), lambda a: np.flip(a) * (1 + 0j)),
             (z, lambda a: xp.multiply(a * 2.0, 1), lambda a: (a * 2.0) * (1 + 0j))]
    for a, ours, numpy in cases:
        with np.errstate(invalid="ignore"):
            want = numpy(a)
        for got in (ours(xp.asarray(a)), jit(ours)(xp.asarray(a))):   # (eagerly: NumPy's)
            got = np.asarray(got)
            assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), (got, want)


def test_jit_product_with_a_converted_bool_keeps_nan_and_signed_zero():
    """XLA's simplifier makes float(m) * x a select(m, x, 0), which gives 0 for NaN * 0 and -x * 0."""
    m = np.array([[False, True, False, False], [True, True, False, True]])
    x = np.array([np.nan, 2.0, -3.0, np.inf])
    with np.errstate(invalid="ignore"):
        want = m.astype(np.float64) * x
        for f in (lambda b, v: xp.astype(b, xp.float64) * v, lambda b, v: v * xp.astype(b, xp.float64)):
            _bits_equal(jit(f)(xp.asarray(m), xp.asarray(x)), want)
            _bits_equal(jit(f)(xp.asarray(m[0]), xp.asarray(x)), want[0])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_jit_square_and_cube_by_a_literal_are_multiplications(dtype):
    """x ** 2 and x ** 3 with a literal exponent lower to x * x (* x), as the host kernel computes them: no pow and
    no explicit flush of x (the multiply reads a subnormal as zero itself); the same bits eagerly, under jit and
    as NumPy's products in the flush rule (subnormal operands and results zero). Another exponent keeps pow."""
    fi = np.finfo(dtype)
    tiny = float(fi.tiny)
    x = np.concatenate([np.random.default_rng(2).standard_normal(40) * 3,
                        [tiny, -tiny, tiny / 4, -tiny / 3, float(fi.smallest_subnormal), np.sqrt(tiny) * 0.9,
                         np.cbrt(tiny) * 1.1, float(fi.max) ** 0.5 * 1.5, float(fi.max) ** (1 / 3) * 1.5,
                         -float(fi.max) ** (1 / 3) * 1.5, 0.0, -0.0, np.inf, -np.inf, np.nan]]).astype(dtype)

    def flush(a):
        return np.where(np.abs(a) < tiny, a * 0, a)
    with np.errstate(all="ignore"):
        f = flush(x)
        want = {2: flush(f * f), 3: flush(flush(f * f) * f)}
        for e in (2, 3, 2.0, 3.0):
            _bits_equal(jit(lambda a: a ** e)(xp.asarray(x)), want[int(e)])
            _bits_equal(xp.asarray(x) ** e, want[int(e)])
            text = jit(lambda a: a ** e).lower(xp.asarray(x)).as_text()
            assert "stablehlo.power" not in text and "stablehlo.select" not in text, text
        assert "stablehlo.power" in jit(lambda a: a ** 2.5).lower(xp.asarray(x)).as_text()


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
def test_isfinite_lowered_as_a_compare_equals_numpy_on_every_special_value(dtype):
    """is_finite lowers to |x| < inf (XLA's CPU emitter runs IsFinite element by element, the compare vectorized):
    NaN of either sign, both infinities, the extremes, zeros of both signs and subnormals give NumPy's booleans."""
    dt = np.dtype(dtype)
    fi = np.finfo(dt)
    real = [0.0, -0.0, 1.0, -1.5, np.inf, -np.inf, np.nan, -np.nan, fi.max, -fi.max, fi.tiny, fi.smallest_subnormal,
            -fi.smallest_subnormal]
    vals = np.array(real, dt)
    if dt.kind == "c":
        vals = np.array([complex(r, i) for r in real for i in real[::3]], dt)
    x = xp.asarray(vals)
    f = jit(xp.isfinite)
    np.testing.assert_array_equal(np.asarray(f(x)), np.isfinite(vals))
    np.testing.assert_array_equal(np.asarray(f(xp.reshape(x, (1, -1)))), np.isfinite(vals)[None])
    assert "is_finite" not in f.lower(x).as_text()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_jit_log1p_is_within_a_few_ulps_of_numpy(dtype):
    """XLA's own float64 log1p is off by up to 128 ulps near x = -0.41 (its log by 1): lowered as Goldberg's
    log(1 + x) * x / ((1 + x) - 1), jit's log1p stays within 3 ulps of the host kernel's (NumPy's), and keeps
    the edge values: -0.0, -1 -> -inf, inf, NaN below -1, tiny x itself, a subnormal x flushed."""
    x = np.random.default_rng(0).uniform(-0.9, 2.0, 100_000).astype(dtype)
    x = np.concatenate([x, np.geomspace(1e-30, 1e3, 1000).astype(dtype),
                        -np.geomspace(1e-30, 0.999, 1000).astype(dtype)])
    got, want = np.asarray(jit(xp.log1p)(xp.asarray(x))), np.log1p(x)
    assert (np.abs(got - want) / np.spacing(np.abs(want))).max() <= 3
    tiny = np.finfo(dtype).tiny
    edge = np.array([0.0, -0.0, -1.0, np.inf, -1.5, np.nan, 1e-20, -1e-20, tiny / 4, -tiny / 4], dtype)
    got = np.asarray(jit(xp.log1p)(xp.asarray(edge)))
    with np.errstate(all="ignore"):
        want = np.array([0.0, -0.0, -np.inf, np.inf, np.nan, np.nan, 1e-20, -1e-20, 0.0, -0.0], dtype)
    np.testing.assert_array_equal(got, want)
    assert np.array_equal(np.signbit(got[[0, 1, 8, 9]]), [False, True, False, True])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", ["sinh", "cosh"])
def test_jit_sinh_and_cosh_of_large_arguments_are_within_a_few_ulps_of_numpy(name, dtype):
    """XLA's sinh and cosh take exp(|x| + log(1/2)), whose rounded argument is off by an ulp of |x|: 495 ulps
    from NumPy at |x| ~ 600 in float64 (24 in float32). Lowered as (e/2) e +- (1/2) / (e e), e = exp(|x|/2),
    they stay within 6 ulps everywhere, up to the overflow and with its infinities where NumPy has them."""
    top = 710.4 if dtype == np.float64 else 89.4
    x = np.random.default_rng(1).uniform(-top, top, 100_000).astype(dtype)
    x = np.concatenate([x, np.linspace(-3, 3, 10_001, dtype=dtype),
                        np.array([top, -top, 1.2 * top, np.inf, -np.inf, 0.0, -0.0], dtype)])
    got, want = np.asarray(jit(getattr(xp, name))(xp.asarray(x))), getattr(np, name)(x)
    fin = np.isfinite(want)
    assert np.array_equal(got[~fin], want[~fin]) and np.array_equal(np.signbit(got), np.signbit(want))
    assert (np.abs(got[fin] - want[fin]) / np.spacing(np.abs(want[fin]))).max() <= 6


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_jit_atanh_is_within_a_few_ulps_of_numpy(dtype):
    """XLA's atanh is its log1p's, 128 ulps off near x = 0.41 in float64: lowered on the log1p above, of |x| (no
    1 + t cancelling near -1), it stays within 3 ulps (float32: of the float64 value, 3.0 measured -- NumPy's own
    float32 arctanh is glibc's atanhf on a CPU without AVX-512, 1.5 ulps off), with the edge values and zero signs
    of NumPy's."""
    x = np.random.default_rng(2).uniform(-1, 1, 100_000).astype(dtype)
    edge = np.array([0.0, -0.0, 1.0, -1.0, 1e-20, -1e-20], dtype)
    got, want = np.asarray(jit(xp.atanh)(xp.asarray(np.concatenate([x, edge])))), np.arctanh(np.concatenate([x, edge]))
    exact = np.arctanh(np.concatenate([x, edge]).astype(np.float64)) if dtype == np.float32 else want
    fin = np.isfinite(want) & (want != 0)
    assert (np.abs(got[fin] - exact[fin]) / np.spacing(np.abs(want[fin]))).max() <= (3.5 if dtype == np.float32 else 3)
    assert np.array_equal(got[~fin], want[~fin]) and np.array_equal(np.signbit(got), np.signbit(want))
    assert np.isnan(np.asarray(jit(xp.atanh)(xp.asarray(np.array([1.5, -2.0, np.inf, np.nan], dtype))))).all()
