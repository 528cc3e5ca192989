"""Special values of the elementwise functions (the standard's lists; C99 Annex G for complex).

A compact table of representative cases per function, checked exactly: signed zeros by their
sign bit, NaN as NaN, and values the standard leaves a sign unspecified for as "±0"/"±inf".
Each case runs eagerly and under jit, in float64/complex128 and float32/complex64.
"""
import numpy as np
import pytest

import array_namespace as xp
from transforms import jit, vmap

inf, nan, pi = np.inf, np.nan, np.pi
Z0, ZINF = "±0", "±inf"     # sign unspecified by the standard
n0 = -0.0

# (function, input, expected). A complex input is (re, im) and its expected value (re, im).
REAL = [
    ("exp", -inf, 0.0), ("exp", nan, nan), ("exp", n0, 1.0),
    ("expm1", n0, n0), ("expm1", -inf, -1.0),
    ("log", n0, -inf), ("log", -1.0, nan), ("log", inf, inf),
    ("log1p", -1.0, -inf), ("log2", inf, inf), ("log10", 0.0, -inf),
    ("sqrt", n0, n0), ("sqrt", -1.0, nan),
    ("sin", n0, n0), ("cos", inf, nan), ("tan", n0, n0),
    ("asin", n0, n0), ("acos", 1.0, 0.0), ("atan", -inf, -pi / 2),
    ("sinh", n0, n0), ("cosh", -inf, inf), ("tanh", -inf, -1.0),
    ("asinh", n0, n0), ("acosh", 1.0, 0.0), ("atanh", 1.0, inf), ("atanh", -1.0, -inf), ("atanh", n0, n0),
    ("sign", n0, 0.0), ("sign", 0.0, 0.0), ("sign", -2.0, -1.0), ("sign", nan, nan),
]

COMPLEX = [
    ("exp", (0.0, 0.0), (1.0, 0.0)), ("exp", (n0, n0), (1.0, n0)),
    ("exp", (inf, 0.0), (inf, 0.0)), ("exp", (inf, n0), (inf, n0)),
    ("exp", (-inf, 2.0), (n0, 0.0)), ("exp", (-inf, -2.0), (n0, n0)), ("exp", (inf, 2.0), (-inf, inf)),
    ("exp", (-inf, inf), (Z0, Z0)), ("exp", (inf, inf), (ZINF, nan)), ("exp", (-inf, nan), (Z0, Z0)),
    ("exp", (inf, nan), (ZINF, nan)), ("exp", (nan, 0.0), (nan, 0.0)), ("exp", (nan, n0), (nan, n0)),
    ("exp", (nan, 1.0), (nan, nan)), ("exp", (1.0, nan), (nan, nan)), ("exp", (1.0, inf), (nan, nan)),
    ("expm1", (0.0, 0.0), (0.0, 0.0)), ("expm1", (-inf, inf), (-1.0, Z0)), ("expm1", (-inf, 2.0), (-1.0, 0.0)),
    ("expm1", (-inf, -2.0), (-1.0, n0)), ("expm1", (inf, nan), (ZINF, nan)), ("expm1", (-inf, nan), (-1.0, Z0)),
    ("log", (n0, 0.0), (-inf, pi)), ("log", (0.0, 0.0), (-inf, 0.0)), ("log", (0.0, n0), (-inf, n0)),
    ("log", (n0, n0), (-inf, -pi)), ("log", (-inf, 1.0), (inf, pi)), ("log", (-inf, -1.0), (inf, -pi)),
    ("log", (-inf, 0.0), (inf, pi)), ("log", (inf, inf), (inf, pi / 4)), ("log", (-inf, -inf), (inf, -3 * pi / 4)),
    ("log", (1.0, inf), (inf, pi / 2)), ("log", (inf, nan), (inf, nan)), ("log", (-inf, nan), (inf, nan)),
    ("log", (nan, inf), (inf, nan)), ("log", (nan, 1.0), (nan, nan)), ("log", (1.0, nan), (nan, nan)),
    ("log1p", (-1.0, 0.0), (-inf, 0.0)), ("log1p", (-inf, nan), (inf, nan)), ("log1p", (1.0, inf), (inf, pi / 2)),
    ("log1p", (nan, -inf), (inf, nan)),
    ("log2", (inf, 0.0), (inf, 0.0)), ("log2", (0.0, 0.0), (-inf, 0.0)),
    ("log2", (-inf, inf), (inf, 3 * pi / 4 / np.log(2))), ("log2", (inf, nan), (inf, nan)),
    ("log10", (nan, inf), (inf, nan)), ("log10", (n0, 0.0), (-inf, pi / np.log(10))),
    ("sqrt", (0.0, 0.0), (0.0, 0.0)), ("sqrt", (n0, n0), (0.0, n0)), ("sqrt", (-inf, nan), (nan, ZINF)),
    ("sqrt", (inf, nan), (inf, nan)), ("sqrt", (nan, inf), (inf, inf)), ("sqrt", (1.0, -inf), (inf, -inf)),
    ("sqrt", (-inf, 1.0), (0.0, inf)), ("sqrt", (-inf, -1.0), (0.0, -inf)), ("sqrt", (inf, 1.0), (inf, 0.0)),
    ("sqrt", (nan, 1.0), (nan, nan)), ("sqrt", (1.0, nan), (nan, nan)),
    ("acos", (0.0, nan), (pi / 2, nan)), ("acos", (n0, 0.0), (pi / 2, n0)), ("acos", (0.0, n0), (pi / 2, 0.0)),
    ("acos", (1.0, inf), (pi / 2, -inf)), ("acos", (-inf, 1.0), (pi, -inf)), ("acos", (inf, 1.0), (0.0, -inf)),
    ("acos", (inf, inf), (pi / 4, -inf)), ("acos", (-inf, -inf), (3 * pi / 4, inf)),
    ("acos", (nan, inf), (nan, -inf)), ("acos", (inf, nan), (nan, ZINF)), ("acos", (1.0, nan), (nan, nan)),
    ("acosh", (0.0, 0.0), (0.0, pi / 2)), ("acosh", (0.0, nan), (nan, "±pi/2")), ("acosh", (-inf, 1.0), (inf, pi)),
    ("acosh", (-inf, -1.0), (inf, -pi)), ("acosh", (inf, nan), (inf, nan)), ("acosh", (nan, inf), (inf, nan)),
    ("acosh", (-inf, inf), (inf, 3 * pi / 4)),
    ("asinh", (0.0, 0.0), (0.0, 0.0)), ("asinh", (n0, n0), (n0, n0)), ("asinh", (1.0, inf), (inf, pi / 2)),
    ("asinh", (-1.0, inf), (-inf, pi / 2)), ("asinh", (inf, inf), (inf, pi / 4)), ("asinh", (nan, 0.0), (nan, 0.0)),
    ("asinh", (nan, n0), (nan, n0)), ("asinh", (nan, inf), (ZINF, nan)), ("asinh", (1.0, nan), (nan, nan)),
    ("asin", (0.0, 0.0), (0.0, 0.0)), ("asin", (n0, n0), (n0, n0)), ("asin", (1.0, inf), (0.0, inf)),
    ("asin", (inf, inf), (pi / 4, inf)), ("asin", (-inf, -inf), (-pi / 4, -inf)),
    ("atanh", (0.0, nan), (0.0, nan)), ("atanh", (n0, nan), (n0, nan)), ("atanh", (1.0, 0.0), (inf, 0.0)),
    ("atanh", (-1.0, n0), (-inf, n0)), ("atanh", (inf, nan), (0.0, nan)), ("atanh", (-inf, nan), (n0, nan)),
    ("atanh", (nan, 1.0), (nan, nan)), ("atanh", (nan, inf), (Z0, pi / 2)), ("atanh", (2.0, inf), (0.0, pi / 2)),
    ("atanh", (-2.0, -inf), (n0, -pi / 2)), ("atanh", (inf, 1.0), (0.0, pi / 2)), ("atanh", (1.0, nan), (nan, nan)),
    ("atan", (0.0, inf), (pi / 2, 0.0)), ("atan", (inf, 1.0), (pi / 2, 0.0)), ("atan", (nan, inf), (nan, 0.0)),
    ("atan", (0.0, 0.0), (0.0, 0.0)), ("atan", (1.0, nan), (nan, nan)),
    ("cosh", (0.0, 0.0), (1.0, 0.0)), ("cosh", (0.0, inf), (nan, Z0)), ("cosh", (0.0, nan), (nan, Z0)),
    ("cosh", (inf, inf), (ZINF, nan)), ("cosh", (inf, nan), (inf, nan)), ("cosh", (-inf, nan), (inf, nan)),
    ("cosh", (inf, 2.0), (-inf, inf)), ("cosh", (-inf, 2.0), (-inf, -inf)), ("cosh", (nan, 0.0), (nan, Z0)),
    ("cosh", (1.0, inf), (nan, nan)), ("cosh", (inf, 0.0), (inf, 0.0)),
    ("sinh", (0.0, inf), (Z0, nan)), ("sinh", (0.0, nan), (Z0, nan)), ("sinh", (inf, inf), (ZINF, nan)),
    ("sinh", (inf, nan), (ZINF, nan)), ("sinh", (inf, 2.0), (-inf, inf)), ("sinh", (-inf, 2.0), (inf, inf)),
    ("sinh", (nan, 0.0), (nan, 0.0)), ("sinh", (nan, n0), (nan, n0)), ("sinh", (n0, n0), (n0, n0)),
    ("sinh", (inf, n0), (inf, n0)),
    ("tanh", (0.0, inf), (0.0, nan)), ("tanh", (n0, inf), (n0, nan)), ("tanh", (0.0, nan), (0.0, nan)),
    ("tanh", (inf, 1.0), (1.0, 0.0)), ("tanh", (-inf, -1.0), (-1.0, n0)), ("tanh", (inf, nan), (1.0, Z0)),
    ("tanh", (nan, 0.0), (nan, 0.0)), ("tanh", (nan, 1.0), (nan, nan)), ("tanh", (1.0, inf), (nan, nan)),
    ("cos", (0.0, 0.0), (1.0, n0)), ("cos", (inf, 0.0), (nan, Z0)), ("cos", (nan, inf), (inf, nan)),
    ("cos", (1.0, nan), (nan, nan)),
    ("sin", (0.0, 0.0), (0.0, 0.0)), ("sin", (n0, n0), (n0, n0)), ("sin", (inf, 0.0), (nan, Z0)),
    ("sin", (nan, 0.0), (nan, Z0)), ("sin", (0.0, inf), (0.0, inf)),
    ("tan", (0.0, inf), (0.0, 1.0)), ("tan", (nan, 0.0), (nan, 0.0)), ("tan", (0.0, 0.0), (0.0, 0.0)),
    ("tan", (-1.0, -inf), (n0, -1.0)),
    ("sign", (0.0, 0.0), (0.0, 0.0)), ("sign", (n0, n0), (0.0, 0.0)), ("sign", (nan, 1.0), (nan, nan)),
    ("sign", (3.0, -4.0), (0.6, -0.8)),
]


def _matches(got, want, rtol):
    if isinstance(want, str):
        mag = {"±0": 0.0, "±inf": inf, "±pi/2": pi / 2}[want]
        return abs(got) == mag if mag in (0.0, inf) else np.isclose(abs(got), mag, rtol=rtol)
    if np.isnan(want):
        return np.isnan(got)
    if want == 0 or np.isinf(want):
        return got == want and np.signbit(got) == np.signbit(want)
    return np.isclose(got, want, rtol=rtol, atol=0)


def _check(case, got, want, rtol):
    parts = [(got.real, want[0]), (got.imag, want[1])] if isinstance(want, tuple) else [(got, want)]
    assert all(_matches(g, w, rtol) for g, w in parts), f"{case}: got {got!r}, expected {want!r}"


@pytest.mark.parametrize("prec", ["64", "32"])
@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_real_special_cases(mode, prec):
    dt, rtol = (np.float64, 1e-12) if prec == "64" else (np.float32, 1e-6)
    for name, x, want in REAL:
        f = getattr(xp, name)
        f = jit(f) if mode == "jit" else f
        _check((name, x), np.asarray(f(xp.asarray(np.array(x, dt))))[()], want, rtol)


@pytest.mark.parametrize("prec", ["128", "64"])
@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_complex_special_cases(mode, prec):
    dt, rtol = (np.complex128, 1e-12) if prec == "128" else (np.complex64, 1e-6)
    by_name = {}
    for name, z, want in COMPLEX:
        by_name.setdefault(name, []).append((complex(*z), want))
    for name, cases in by_name.items():   # one array per function: every case is elementwise
        f = getattr(xp, name)
        f = jit(f) if mode == "jit" else f
        zs = np.array([z for z, _ in cases], dt)
        got = np.asarray(f(xp.asarray(zs)))
        assert got.dtype == dt
        for z, g, (_, want) in zip(zs, got, cases):
            _check((name, z), g, want, rtol)


def test_special_cases_under_vmap_and_symmetries():
    """vmap agrees with eager, and the conj / odd / even symmetries hold off the listed points too."""
    pts = np.array([complex(a, b) for a in (-inf, -2.0, -0.0, 0.0, 0.5, 3.0, inf, nan)
                    for b in (-inf, -1.5, -0.0, 0.0, 2.0, inf, nan)])
    z = xp.asarray(pts)
    for name in ("exp", "log", "sqrt", "acos", "asinh", "atanh", "cosh", "sinh", "tanh", "sin", "log10"):
        f = getattr(xp, name)
        eager, batched = np.asarray(f(z)), np.asarray(vmap(f)(z))
        # eager runs op by op on host kernels (NumPy), vmap compiles: equal to a few ulps, and
        # exactly (signs of zeros included) wherever a part is zero, infinite or NaN
        np.testing.assert_allclose(eager, batched, rtol=1e-13, atol=0)
        for e, b in ((eager.real, batched.real), (eager.imag, batched.imag)):
            exact = ~np.isfinite(b) | (b == 0)
            assert (np.isnan(e) == np.isnan(b)).all(), name
            assert ((e == b) & (np.signbit(e) == np.signbit(b)) | np.isnan(b))[exact].all(), name
        conj = np.asarray(f(xp.asarray(np.conj(pts))))
        for w, c in zip(eager, conj):   # f(conj(z)) == conj(f(z)), NaNs aside
            if not np.isnan(w.imag):
                assert c.imag == -w.imag and np.signbit(c.imag) != np.signbit(w.imag), (name, w, c)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_atan_and_atanh_at_their_poles_and_on_the_real_axis_as_numpy(dtype):
    """XLA's atanh squares the imaginary part at 1 + bj, so it was infinite for 0 < b < ~1e-154 (float32: 1e-19),
    where NumPy gives (log 2 - log b) / 2 (atanh(1 + 1e-300j) = 345.73 + 0.785j); atan likewise at b + 1j. And
    atan(x + 0j) had the imaginary part -0.0 (NumPy, C99 and the standard's -1j atanh(1j z): +0.0). Eager, jit and
    vmap against NumPy at 2 ulps-ish, zero signs included."""
    parts = [0.0, -0.0, 0.5, -0.5, 3.0, -3.0, 1.0, -1.0, 1e30, 1e-9, 1e-18, 1e-30, 1e-150, 1e-200, 1e-300]
    z = np.array([complex(a, b) for a in parts for b in parts], dtype)
    with np.errstate(divide="ignore"):
        wants = (("atanh", np.arctanh(z)), ("atan", np.arctan(z)))
    for name, want in wants:
        for f in (getattr(xp, name), jit(getattr(xp, name)), vmap(getattr(xp, name))):
            got = np.asarray(f(xp.asarray(z)))
            for g, w in ((got.real, want.real), (got.imag, want.imag)):
                np.testing.assert_allclose(g, w, rtol=4 * np.finfo(g.dtype).eps, atol=0, err_msg=name)
                np.testing.assert_array_equal(np.signbit(g), np.signbit(w), err_msg=name)
