"""Elementwise functions' dtype rules where the standard changed: real/imag of non-complex input.

Oracles: the standard (2024.12+: real accepts every numeric dtype and returns a real-valued
array as it is; imag stays complex-only), array_api_strict's behaviour, and NumPy's values.
"""
import numpy as np
import pytest

import array_namespace as xp
from finite_diff import central_diff
from transforms import grad, jit, vmap

REAL_DTYPES = [xp.int8, xp.int16, xp.int32, xp.int64, xp.uint8, xp.uint16, xp.uint32, xp.uint64,
               xp.float32, xp.float64]


@pytest.mark.parametrize("dtype", REAL_DTYPES, ids=lambda d: d.name)
def test_real_of_real_valued_input_is_the_input(dtype):
    a = np.array([0, 1, 7, 100], dtype=dtype.dtype)
    if dtype.kind == "f":
        a = np.array([-1.5, 0.0, np.inf, np.nan], dtype=dtype.dtype)
    x = xp.asarray(a)
    for out in (xp.real(x), jit(xp.real)(x), vmap(xp.real)(x)):
        assert out.dtype == dtype   # NumPy and array_api_strict keep the dtype
        np.testing.assert_array_equal(np.asarray(out), np.real(a))


@pytest.mark.parametrize("dtype", REAL_DTYPES + [xp.bool], ids=lambda d: d.name)
def test_imag_of_non_complex_input_is_a_type_error(dtype):
    # array_api_strict: "Only complex floating-point dtypes are allowed in imag" -- never an XLA error
    x = xp.ones(3, dtype=dtype)
    with pytest.raises(TypeError, match="imag"):
        xp.imag(x)
    with pytest.raises(TypeError, match="imag"):
        jit(xp.imag)(x)


def test_real_of_bool_is_a_type_error():
    with pytest.raises(TypeError, match="real"):
        xp.real(xp.asarray([True, False]))


@pytest.mark.parametrize("cdt,rdt", [(xp.complex64, xp.float32), (xp.complex128, xp.float64)])
def test_real_and_imag_of_complex_input(cdt, rdt):
    a = np.array([1 + 2j, -0.5 - 3j, np.inf + 1j, 0j], dtype=cdt.dtype)
    x = xp.asarray(a)
    for f, ref in ((xp.real, np.real), (xp.imag, np.imag)):
        out = f(x)
        assert out.dtype == rdt
        np.testing.assert_array_equal(np.asarray(out), ref(a))
        np.testing.assert_array_equal(np.asarray(jit(f)(x)), ref(a))


def test_real_of_real_input_differentiates_as_identity():
    a = np.array([0.3, -1.2, 2.0])
    f = lambda v: xp.sum(xp.real(v) ** 3)   # noqa: E731
    np.testing.assert_allclose(np.asarray(grad(f)(xp.asarray(a))),
                               central_diff(lambda v: float(f(xp.asarray(v))), a), rtol=1e-6)


@pytest.mark.parametrize("base", [2, 10])
def test_log2_log10_are_exact_at_powers_of_their_base(base):
    """log(x)/log(base) gives log10(0.1) = -0.9999999999999998; NumPy's (and now ours) is -1 -- scipy.signal
    rounds on it. Eager and jit; the derivative stays 1/(x log(base))."""
    import numpy as np
    from transforms import grad, jit
    f, nf = (xp.log2, np.log2) if base == 2 else (xp.log10, np.log10)
    fi = np.finfo(np.float64)
    ks = range(fi.minexp, fi.maxexp) if base == 2 else range(-307, 309)
    x = np.array([np.ldexp(1.0, k) if base == 2 else float(f"1e{k}") for k in ks])
    np.testing.assert_array_equal(np.asarray(f(xp.asarray(x))), nf(x))
    np.testing.assert_array_equal(np.asarray(jit(f)(xp.asarray(x))), nf(x))
    specials = np.array([0.0, -0.0, -1.0, np.inf, -np.inf, np.nan, 2.5, 3.0])
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(np.asarray(f(xp.asarray(specials))), nf(specials), rtol=1e-15)
    g = grad(lambda v: xp.sum(f(v)))(xp.asarray([float(base) ** 2, 3.0]))
    np.testing.assert_allclose(np.asarray(g), 1 / (np.array([base ** 2, 3.0]) * np.log(base)), rtol=1e-14)


_CPOW_BASES = np.array([0.3771906632801799 + 1.072141231976868j, 1.084785164728454 + 1.1853661805460247j,
                        -1.607008119483333 - 3.865084391248663j, 2.5 - 0.125j, -0.0 + 26.45033635316129j,
                        -3.0 + 0.0j, 0.0 - 5.0j])


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 7, 16, 99, -1, -2, -3, -5, -99, 2.0, 3.0])
def test_complex_base_to_integral_python_exponent_is_repeated_multiplication(n):
    """scipy.signal's lp2bs_zpk squares purely imaginary zeros (z ** 2): NumPy gives a real result, XLA's
    exp(2 log z) left 2.2e-13 in the imaginary part and zpk2tf then 4.7e-11 where scipy's b is 0.
    Oracle: NumPy (z * z exactly for n = 2, else within a few ulps); zero parts stay exactly zero."""
    x = xp.asarray(_CPOW_BASES)
    want = _CPOW_BASES ** n
    for got in (x ** n, xp.pow(x, n), jit(lambda v: v ** n)(x)):
        got = np.asarray(got)
        assert got.dtype == np.complex128
        if n == 2:
            np.testing.assert_array_equal(got, _CPOW_BASES * _CPOW_BASES)
        np.testing.assert_allclose(got, want, rtol=4e-16 * max(abs(n), 2), atol=0)
        imag_bases, real_base = got[[4, 6]], got[5]   # an integer power of these has one part exactly 0
        assert real_base.imag == 0
        assert np.all((imag_bases.imag if int(n) % 2 == 0 else imag_bases.real) == 0), (n, imag_bases)


def test_complex_zero_to_a_negative_integer_is_nan_as_in_numpy():
    z = np.array([0j, complex(-0.0, 0.0), 2j])
    with np.errstate(all="ignore"):
        want = z ** -3
    for got in (xp.asarray(z) ** -3, jit(lambda v: v ** -3)(xp.asarray(z))):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-15)   # NaN == NaN here


def test_complex_integral_power_keeps_float32_and_its_derivative():
    z = np.array([0.5 + 1.0j, -2.0 + 0.25j], dtype=np.complex64)
    got = xp.asarray(z) ** 3
    assert got.dtype == xp.complex64
    np.testing.assert_allclose(np.asarray(got), z ** 3, rtol=1e-6)
    f = lambda v: xp.sum(xp.real((v * (1 + 2j)) ** 3))   # noqa: E731
    a = np.array([0.3, -1.2, 2.0])
    np.testing.assert_allclose(np.asarray(grad(f)(xp.asarray(a))),
                               central_diff(lambda v: float(f(xp.asarray(v))), a), rtol=1e-6)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_zero_scalar_operands_keep_their_sign_when_reused(dtype):
    """Eagerly a converted scalar operand is reused (0.0 included); -0.0 == 0.0, so each zero must still give its own
    sign, in any order and repeated, as operand and as written value: NumPy's bits every time."""
    x = np.array([1.5, -2.0, 0.0, -0.0], dtype)
    a = xp.asarray(x)
    for z in (0.0, -0.0, 0.0, -0.0, -0.0, 0.0):
        for got, want in ((a * z, x * z), (z * a, z * x), (a + z, x + z), (z - a, z - x)):
            np.testing.assert_array_equal(np.signbit(np.asarray(got)), np.signbit(want))
            np.testing.assert_array_equal(np.asarray(got), want)
        b = xp.asarray(np.ones(2, dtype))
        b[0] = z
        b[1] = -z
        assert np.signbit(np.asarray(b)).tolist() == [bool(np.signbit(z)), not np.signbit(z)]
    for _ in range(2):   # (integer and boolean zeros have no sign: kept like any other value)
        np.testing.assert_array_equal(np.asarray(xp.asarray(np.arange(3)) * 0), np.zeros(3, np.int64))
        np.testing.assert_array_equal(np.asarray(xp.asarray(np.array([True, False])) | False), [True, False])


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_round_rounds_each_part_as_numpy(dtype):
    """round of a complex value is complex(round(re), round(im)) bit for bit, zero signs, infinities and NaNs
    included, eagerly, under jit and vmap: built as re + im * 1j it lost -0.0 (round(0.5 - 0.5j) was 0 + 0j) and
    made an infinite part's partner NaN (round(-0.0 + inf j) was NaN + inf j)."""
    parts = np.array([0.0, -0.0, 0.5, -0.5, -0.4, 1.5, 2.5, -2.5, np.inf, -np.inf, np.nan, 3.7e9])
    z = np.empty((parts.size, parts.size), dtype)
    z.real, z.imag = parts[:, None], parts[None, :]
    want = np.round(z)
    for f in (xp.round, jit(xp.round), vmap(xp.round)):
        got = np.asarray(f(xp.asarray(z)))
        for g, w in ((got.real, want.real), (got.imag, want.imag)):
            np.testing.assert_array_equal(g, w)
            np.testing.assert_array_equal(np.signbit(g), np.signbit(w))


def test_complex_power_of_a_python_int_beyond_int64_as_numpy():
    """z ** n for a complex z and a Python int n past int64 is NumPy's (n read as a float): the small-integer
    test took xp.abs of n (the module's abs shadows the builtin), which made n an int64 array and raised
    OverflowError."""
    z = np.array([1 + 2j, -0.5 + 0.25j, 1 + 0j], np.complex128)
    with np.errstate(all="ignore"):
        for n in (2 ** 63, 2 ** 64, -2 ** 70):
            want = z ** float(n)
            for f in (lambda a: a ** n, jit(lambda a: a ** n), lambda a: xp.pow(a, n)):
                got = np.asarray(f(xp.asarray(z)))
                np.testing.assert_array_equal(np.isfinite(got), np.isfinite(want))
                np.testing.assert_allclose(got[np.isfinite(want)], want[np.isfinite(want)], rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_floor_divide_is_the_floor_of_the_exact_quotient_as_numpy(dtype):
    # floor(a / b) was one too high where a / b rounds up to an integer: 1.0 // 0.1 was 10.0 (NumPy, Python,
    # JAX, torch: 9.0), and half of x // 0.01 for x with two decimals was off
    rng = np.random.default_rng(11)
    fi = np.finfo(dtype)
    a = np.concatenate([rng.standard_normal(3000) * 10.0 ** rng.integers(-5, 5, 3000),
                        np.round(rng.uniform(-10, 10, 3000), 2), rng.integers(-50, 50, 3000) * 0.1])
    b = np.concatenate([rng.standard_normal(3000) * 10.0 ** rng.integers(-5, 5, 3000), np.full(3000, 0.01),
                        rng.choice([0.1, -0.1, 0.3, 0.7, -1.1], 3000)])
    edge = np.array([0.0, -0.0, 1, -1, 0.5, -1.5, 3, fi.max, -fi.max, fi.tiny, -fi.tiny, fi.eps, 1e10, -1e10,
                     2.0 ** (fi.nmant + 1), 0.1, -0.1])
    a = np.concatenate([a, np.repeat(edge, edge.size)]).astype(dtype)
    b = np.concatenate([b, np.tile(edge, edge.size)]).astype(dtype)
    a, b = a[b != 0], b[b != 0]   # (a zero divisor: the standard's special cases, test_special_cases.py)
    with np.errstate(over="ignore", invalid="ignore"):   # (NumPy warns at fi.max // fi.tiny)
        want = np.floor_divide(a, b)
    assert float(xp.floor_divide(xp.asarray(dtype(1.0)), dtype(0.1))) == np.floor_divide(dtype(1.0), dtype(0.1))
    for f in (xp.floor_divide, jit(xp.floor_divide), vmap(xp.floor_divide), lambda x, y: x // y):
        got = np.asarray(f(xp.asarray(a), xp.asarray(b)))
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
        np.testing.assert_array_equal(np.asarray(xp.remainder(xp.asarray(a), xp.asarray(b))), np.remainder(a, b))
