"""hyp1f1 and lpmv of xp.special against scipy.special: values (float32 and float64, scipy's edge
values: b a pole, non-integer m, |x| > 1, x = -1, infinities, NaN), jit and vmap, derivatives in
every real argument (forward and reverse, second order in x) against finite differences of scipy,
and scipy.special dispatching to them under jit.

float32 arguments are computed in float64 and rounded (as scipy's float32 loops do), so float32
values are asserted at float32 accuracy on the same grids as float64.

Deliberate differences from scipy, each asserted below: hyp1f1 gives nan (not a cancelled sum)
where neither its alternating series nor the recurrence in a keeps ~9 digits (large |a| and |x|
together); its overflow has the function's sign; lpmv with m = 0, non-integer v and x >= 3 gives nan
where scipy sums a divergent series. Where scipy itself is off (lpmv near x = -1 at large degree,
a finite difference of scipy's lpmv at integer degree and x < 0) mpmath's value is asserted.
"""
import os
import sys

os.environ["SCIPY_ARRAY_API"] = "1"

import mpmath  # noqa: E402  (a dependency of sympy)
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import scipy.special as sc  # noqa: E402

import array_namespace as xp  # noqa: E402
from transforms import grad, jit, jvp, vmap  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from harness import N_JIT, check_grad, check_transforms, check_values  # noqa: E402

RNG = np.random.default_rng(20240901)
inf, nan = np.inf, np.nan

# ------------------------------------------------------------------------------ hyp1f1
H_EDGE = [(1, 0, 1), (1, -1, 1), (-1, -1, 1), (-2, -1, 1), (-1, -2, 1), (0, -1, 1), (1, -1, 0), (0, 0, 0),
          (1, 1, 0), (0, 1, 5), (nan, 1, 1), (1, nan, 0), (1, 1, nan), (inf, 1, 1), (-inf, 1, 1), (1, inf, 1),
          (1, -inf, 1), (1, 1, inf), (1, 1, -inf), (0.5, 1.5, -inf), (-1, 1.5, inf), (-1, 1.5, -inf), (0, 1, inf),
          (-3, -5, 2), (-5, -3, 2), (-2, -2, 2), (-3, -2, 2), (0, -2, 2), (-2, -3, 0), (-2.5, -3, 2),
          (1e-20, 1, 1), (1, 2, -1000), (0.5, 1, -800), (3, 1, -800), (1, 2, -1e10), (1, 1, 700), (1, 1, 710),
          (1, 2, -710), (0.5, 3, 1e3), (50, 60, -1000), (-10.5, 1, 30), (1, -1.5, 2), (2, 2, -3.5), (-4, 3, -2.5)]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_hyp1f1_edges(dtype):
    a, b, x = np.array(H_EDGE, dtype=np.float64).T
    check_values("hyp1f1", [a, b, x], dtype=dtype, rtol=1e-12 if dtype == np.float64 else 1e-5)


def _h_grid(n=80):
    a = np.concatenate([RNG.uniform(-10, 10, n), RNG.integers(-6, 1, 8).astype(float), [0.5, 2.5, 7.0]])
    b = np.concatenate([RNG.uniform(0.1, 10, n), RNG.uniform(0.5, 5, 8), [1.5, 2.5, 0.3]])
    x = np.concatenate([RNG.uniform(-30, 30, n), RNG.uniform(-20, 20, 8), [-60.0, 75.0, -200.0]])
    return a, b, x


def test_hyp1f1_grid():
    a, b, x = _h_grid()
    # the alternating part of the series (a < 0, x > 0 or a > b, x < 0) costs up to ~1e-11 here
    check_values("hyp1f1", [a, b, x], rtol=5e-11, atol=1e-300)
    check_values("hyp1f1", [a, b, x], dtype=np.float32, rtol=2e-6, atol=1e-37)


def test_hyp1f1_large_argument_asymptotics():
    a = np.array([0.5, 1.0, 2.5, -0.5, 3.0, 0.25, 1.5, 4.0])
    b = np.array([1.5, 2.0, 1.0, 0.5, 7.0, 2.0, 1.5, 2.0])
    x = np.array([-60.0, -1e4, 80.0, -500.0, 300.0, 52.0, -1e6, -75.0])
    check_values("hyp1f1", [a, b, x], rtol=1e-12)


def test_hyp1f1_large_parameter_recurrence():
    # a < 0 after Kummer's transformation with b/2 - a past |x|/4: the series alternates and cancels,
    # the recurrence in a (stable there) is used; M(100, 1, -5): terms ~1e10 times the value
    a = np.concatenate([RNG.uniform(-300, 300, 120), [100.0, 60.0, -80.0, -99.0]])
    b = np.concatenate([RNG.uniform(0.1, 40, 120), [1.0, 2.5, 3.0, 1.0]])
    x = np.concatenate([RNG.uniform(-12, 12, 120), [-5.0, -8.0, 9.0, 5.0]])
    check_values("hyp1f1", [a, b, x], rtol=1e-9, atol=1e-300)
    # mpmath (40 digits) for the named ones
    got = np.asarray(xp.special.hyp1f1(xp.asarray([100.0, 20.0]), 1.0, xp.asarray([-5.0, -40.0])))
    np.testing.assert_allclose(got[0], 0.0095196677756733839059, rtol=1e-12)
    np.testing.assert_allclose(got[1], 2.4017971108931918890e-10, rtol=1e-7)    # series, ~8 digits survive


def test_hyp1f1_cancelled_series_is_nan_and_overflow_has_the_sign():
    # |a| and |x| both large (a = 180, x = -84): the series cancels ~1e30-fold and the recurrence
    # from a's fractional part passes where it is unstable: nan, never a cancelled sum
    a, b, x = [180.1854785303741, -95.96102090511071], [26.626408649671525, 5.829828447497976], [-83.7, 97.2]
    assert np.isnan(np.asarray(xp.special.hyp1f1(xp.asarray(a), xp.asarray(b), xp.asarray(x)))).all()
    assert np.isfinite(sc.hyp1f1(a, b, x)).all()
    # M(-1/2, 2, 1e5) ~ Gamma(2)/Gamma(-1/2) e^x x^(-5/2) < 0: -inf (scipy: +inf)
    assert float(xp.special.hyp1f1(-0.5, 2.0, 1e5)) == -inf
    # float32 (computed in float64): M(-10.5, 1, 30), whose float32 series would keep ~3 digits
    got = xp.special.hyp1f1(xp.asarray(-10.5, dtype=xp.float32), 1.0, 30.0)
    assert got.dtype == xp.float32
    np.testing.assert_allclose(float(got), sc.hyp1f1(-10.5, 1.0, 30.0), rtol=1e-6)


def test_hyp1f1_dtypes_and_errors():
    f32 = xp.asarray([0.5], dtype=xp.float32)
    assert xp.special.hyp1f1(f32, f32, f32).dtype == xp.float32
    assert xp.special.hyp1f1(f32, 2.0, 0.5).dtype == xp.float32
    assert xp.special.hyp1f1(xp.asarray([1]), 2, 3).dtype == xp.float64
    assert xp.special.hyp1f1(1, 2, 3).dtype == xp.float64
    out = xp.special.hyp1f1(xp.asarray([[1.0], [2.0]]), xp.asarray([3.0, 4.0, 5.0]), 0.25)
    assert out.shape == (2, 3)
    np.testing.assert_allclose(np.asarray(out), sc.hyp1f1([[1.0], [2.0]], [3.0, 4.0, 5.0], 0.25), rtol=1e-14)
    with pytest.raises(TypeError, match="hyp1f1: a must be a real"):
        xp.special.hyp1f1(xp.asarray([1j]), 1.0, 0.5)
    with pytest.raises(TypeError, match="hyp1f1: x must be an array"):
        xp.special.hyp1f1(1.0, 1.0, "0.5")


def test_hyp1f1_transforms():
    a = np.array([0.5, -2.5, 3.0, 1.0, -3.0, 2.0, 0.3, 2.5, -1.5])
    b = np.array([1.5, 2.0, 1.0, 4.0, 2.0, 0.7, 2.0, 3.5, 2.5])
    x = np.array([2.0, 5.0, -4.0, -70.0, 1.5, 60.0, 0.0, 1.2, -3.0])
    check_transforms("hyp1f1", [a, b, x], rtol=1e-12)


def test_hyp1f1_grads():
    # the last two by the recurrence in a (M(100, 1, -5); M(-50.3, 2, 10))
    a = np.array([0.5, -2.5, 3.0, 1.0, 2.0, 0.3, 1.5, 100.0, -50.3])
    b = np.array([1.5, 2.0, 1.0, 4.0, 0.7, 2.0, 2.5, 1.0, 2.0])
    x = np.array([2.0, 5.0, -4.0, -3.0, 6.0, 0.5, -60.0, -5.0, 10.0])
    check_grad("hyp1f1", [a, b, x], argnums=(2,), rtol=1e-6)                      # second order too
    check_grad("hyp1f1", [a, b, x], argnums=(0, 1), rtol=1e-6, second=False)


def test_hyp1f1_parameter_derivatives_of_terminating_series():
    # a = 0 and a = -2 (polynomials): dM/da sums the non-terminating derivative series
    a, b, x = np.array([0.0, -2.0, -1.0]), np.array([1.5, 2.5, 3.0]), np.array([2.0, -3.0, 4.0])
    check_grad("hyp1f1", [a, b, x], argnums=(0, 1, 2), rtol=1e-6, second=False)


# -------------------------------------------------------------------------------- lpmv
L_EDGE = [(0, 0.5, -1), (1, 0.5, -1), (2, 0.5, -1), (-1, 2.7, -1), (0, 2, -1), (1, 2, -1), (0, 0.5, 1),
          (1, 0.5, 1), (2, 2.5, 1), (0, 2.5, 1.1), (0, 2, -1.1), (0, 2, 1.5), (0, 2, -3), (1, 2.5, 1.1),
          (2, 2, 1.5), (0, 2.5, -1.1), (-1, 2.5, 1.1), (0, -0.5, 1.5), (0.5, 2, 0.3), (-1, 2, 0.3),
          (-2, 2.5, 0.3), (-3, 2, 0.3), (3, 2, 0.3), (2, -3.5, 0.3), (1, -0.5, 0.3), (0, nan, 0.3), (nan, 1, 0.3),
          (0, 1, nan), (0, inf, 0.3), (0, -inf, 0.3), (inf, 1, 0.3), (1, 0.5, 0), (0, 1e-9, 0.5), (-1, -0.5, 0.5),
          (2, 10, 0.5), (0, 0, 0.3), (4, 4, -0.6)]


def _lpmv_oracle(m, v, x):
    """scipy's lpmv, but mpmath's where scipy gives NaN at an integer order inside (-1, 1): e.g. a negative order
    below an integer degree (P_3^-6(x), a polynomial times ((1-x)/(1+x))^3), and P_178.55^-3(0.027)."""
    m, v, x = np.broadcast_arrays(*[np.asarray(t, np.float64) for t in (m, v, x)])
    want = sc.lpmv(m, v, x)
    for i in np.flatnonzero(np.isnan(want) & (np.floor(m) == m) & (np.abs(x) < 1) & np.isfinite(v) & np.isfinite(m)):
        want[i] = float(mpmath.legenp(v[i], m[i], x[i], type=2))
    return want


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_lpmv_edges(dtype):
    m, v, x = np.array(L_EDGE, dtype=np.float64).T
    check_values("lpmv", [m, v, x], dtype=dtype, rtol=1e-12 if dtype == np.float64 else 2e-5, oracle=_lpmv_oracle)


def test_lpmv_against_mpmath():
    # scipy's series stops early at x = 2.9 (4e-7 off); degree 30.5 at x = -0.9 costs ~1e-11 here
    got = xp.special.lpmv(xp.asarray([0.0, 3.0]), xp.asarray([2.5, 30.5]), xp.asarray([2.9, -0.9]))
    np.testing.assert_allclose(np.asarray(got), [25.96895729012525, 3935.714746475060], rtol=2e-11)


def test_lpmv_grid():
    n = 120
    m = RNG.integers(-3, 5, n).astype(float)
    v = np.concatenate([RNG.uniform(-6, 8, n // 2), RNG.integers(-5, 8, n // 2).astype(float)])
    x = np.concatenate([RNG.uniform(-1, 1, n - 4), [-0.999, 0.999, -1e-3, 1e-3]])
    check_values("lpmv", [m, v, x], rtol=2e-11, atol=1e-14, oracle=_lpmv_oracle)   # atol: values crossing zero
    check_values("lpmv", [m, v, x], dtype=np.float32, rtol=2e-4, atol=2e-5, oracle=_lpmv_oracle)


def test_lpmv_negative_order_below_an_integer_degree():
    """P_v^-m for an integer v < m: P_v^m is 0 and Gamma(v - m + 1) has a pole, so the order relation is 0/0 (NaN
    here before, and in scipy); the terminating series gives it, inf at x = -1. Against mpmath over random orders
    to -40, degrees below them (and P_v = P_-v-1), x across (-1, 1) and near its ends; the x-derivative against
    mpmath, the v-derivative NaN (its series is summed without the tail that needs: not a truncated sum); and
    eagerly == jit == vmap to rounding."""
    rng = np.random.default_rng(57)
    n = 160
    m = -rng.integers(1, 41, n).astype(float)
    v = np.floor(rng.uniform(0, 1, n) * -m)
    v = np.where(rng.uniform(size=n) < 0.3, -v - 1, v)
    x = np.concatenate([rng.uniform(-1, 1, n - 6), [-0.999999, 0.999999, -1e-12, 1e-12, -0.5, 0.0]])
    want = np.array([float(mpmath.legenp(v[i], m[i], x[i], type=2)) for i in range(n)])
    got = np.asarray(xp.special.lpmv(xp.asarray(m), xp.asarray(v), xp.asarray(x)))
    np.testing.assert_allclose(got, want, rtol=1e-8, atol=0)
    assert float(xp.special.lpmv(-6.0, 3.0, -1.0)) == np.inf and float(xp.special.lpmv(-6.0, 3.0, 1.0)) == 0.0
    args = [xp.asarray(t[:12]) for t in (m, v, x)]
    np.testing.assert_allclose(np.asarray(jit(xp.special.lpmv)(*args)), got[:12], rtol=1e-12)   # (XLA fuses)
    np.testing.assert_allclose(np.asarray(vmap(xp.special.lpmv)(*args)), got[:12], rtol=1e-12)
    for mm, vv, xx in [(-6.0, 3.0, 0.3875), (-1.0, 0.0, -0.5), (-10.0, -2.0, 1e-3), (-3.0, 2.0, -0.9)]:
        dx = grad(lambda t: xp.special.lpmv(mm, vv, t))(xp.asarray(xx))
        np.testing.assert_allclose(float(dx), float(mpmath.diff(lambda t: mpmath.legenp(vv, mm, t, type=2), xx)),
                                   rtol=1e-9)
        _, dv = jvp(lambda t: xp.special.lpmv(mm, t, xx), (xp.asarray(vv),), (xp.asarray(1.0),))
        assert np.isnan(float(dv))


def test_lpmv_divergent_series_is_nan():
    # m = 0, non-integer v, x >= 3: scipy sums its hypergeometric series where it diverges
    assert np.isnan(float(xp.special.lpmv(0, 2.5, 3.5)))
    assert np.isfinite(sc.lpmv(0, 2.5, 3.5))


def test_lpmv_large_degree():
    # the recurrence in the degree: P_30.5^3(0.2) (whose Gauss series cancels ~1e9-fold) by mpmath,
    # then a grid of degrees to 200 against scipy
    np.testing.assert_allclose(float(xp.special.lpmv(3, 30.5, 0.2)), -3248.3227510455591106, rtol=1e-12)
    n = 90
    m = RNG.integers(-6, 7, n).astype(float)
    v = np.concatenate([RNG.uniform(-100, 200, n // 2), np.round(RNG.uniform(-100, 200, n // 2))])
    x = RNG.uniform(-0.95, 1, n)

    check_values("lpmv", [m, v, x], rtol=1e-9, atol=1e-300, oracle=_lpmv_oracle)
    # near x = -1 at non-integer degree scipy loses digits (here 1e-4, all, 3e-9): mpmath, 30 digits
    m, v = np.array([4.0, 7.0, 6.0, 0.0]), np.array([106.01613067108845, 128.81323536897813, 75.20358066256892, 50.5])
    x = np.array([-0.999886771104355, -0.999814127175359, -0.9814340821257487, -0.999])
    want = [-36001039.533685088312, -21396073522136057.514, -11027142287.837236843, 0.51906479966889150804]
    np.testing.assert_allclose(np.asarray(xp.special.lpmv(xp.asarray(m), xp.asarray(v), xp.asarray(x))), want,
                               rtol=2e-10)   # (the log expansion's ~e^(v t) eps: 2e-10 at P_75.2^6(-0.9814))


def test_lpmv_dtypes():
    assert xp.special.lpmv(1, 2, xp.asarray([0.3], dtype=xp.float32)).dtype == xp.float32
    assert xp.special.lpmv(xp.asarray([1]), xp.asarray([2]), xp.asarray([0])).dtype == xp.float64
    with pytest.raises(TypeError, match="lpmv: x must be real"):
        xp.special.lpmv(1, 2, 0.3j)


def test_lpmv_transforms_and_grads():
    m = np.array([0.0, 1.0, 2.0, -1.0, 3.0, 0.0, 1.0])
    v = np.array([0.5, 2.0, 3.7, 2.5, 4.0, -2.5, 1.3])
    x = np.array([0.3, -0.4, 0.8, -0.6, 0.1, 0.9, -0.2])
    check_transforms("lpmv", [m, v, x], rtol=1e-12)
    check_grad("lpmv", [m, v, x], argnums=(2,), rtol=1e-6)                        # second order too
    # d/dv at the non-integer degrees, and at integer degree with x >= 0 (from the series too)
    nonint = v != np.floor(v)
    mv, vv, xv = (np.concatenate([t[nonint], e]) for t, e in ((m, [0.0, 2.0]), (v, [2.0, 3.0]), (x, [0.3, 0.6])))
    check_grad("lpmv", [mv, vv, xv], argnums=(1,), rtol=1e-6, second=False)


def test_lpmv_v_derivative_at_integer_degree_and_value_at_one():
    # integer degree, x < 0: the value is a reflection; the v-derivative comes from the series at x
    check_grad("lpmv", [np.array([0.0]), np.array([3.0]), np.array([-0.3])], argnums=(1,), rtol=1e-6, second=False)
    # d/dv P_v^1(-0.5) at v = 2: scipy's lpmv at v = 2 +- 1e-6 is ~3e-11 off, so its finite difference is
    # 2e-5 off (1.2302108); mpmath at 40 digits: 1.2302397124661197
    _, t = jvp(lambda v: xp.special.lpmv(1.0, v, xp.asarray([-0.5])), (xp.asarray([2.0]),), (xp.ones(1),))
    np.testing.assert_allclose(np.asarray(t), [1.2302397124661197480], rtol=1e-10)
    # P_v'(1) = v (v + 1) / 2
    _, t = jvp(lambda x: xp.special.lpmv(0.0, xp.asarray([2.5, 3.0]), x), (xp.asarray([1.0, 1.0]),),
               (xp.ones(2),))
    np.testing.assert_allclose(np.asarray(t), [4.375, 6.0], rtol=1e-14)


# ------------------------------------------------------------------ scipy dispatches to us
def test_scipy_special_dispatches_to_our_functions_under_jit():
    import scipy.special._support_alternative_backends as sab
    for name in ["hyp1f1", "lpmv"]:
        assert sab._get_native_func(xp, None, name) is getattr(xp.special, name), name
    a, b, x = xp.asarray([0.5, 2.0, -1.5]), xp.asarray([3.0, 4.0, 2.0]), xp.asarray([0.3, -6.0, 4.0])
    got = jit(lambda a, b, x: sc.hyp1f1(a, b, x))(a, b, x)
    assert type(got) is type(a)
    np.testing.assert_allclose(np.asarray(got), sc.hyp1f1(*[np.asarray(t) for t in (a, b, x)]), rtol=1e-12)
    m, v, y = xp.asarray([0.0, 1.0, 2.0]), xp.asarray([0.5, 2.0, 3.5]), xp.asarray([0.3, -0.6, -0.2])
    got = vmap(lambda m, v, y: sc.lpmv(m, v, y))(m, v, y)
    np.testing.assert_allclose(np.asarray(got), sc.lpmv(*[np.asarray(t) for t in (m, v, y)]), rtol=1e-12)


def test_hyp1f1_exact_zeros_of_terminating_series():
    # M(b + 1, b, -b) = e^-b (1 - b/b) = 0 (Kummer: e^x M(-1, b, -x)), M(-1, b, b) = 0, M(3/2, 1/2, -1/2)
    # = e^-1/2 M(-1, 1/2, 1/2) = 0: the terminating sums are exact (every step error-free), so 0 is the
    # answer, not a cancellation (was nan). Integer dtypes as in scipy's hypothesis test, eager and jit.
    a = np.array([9, 3, 5, 2, 7, -1, -1, 1.5, -2])
    b = np.array([8, 2, 4, 1, 6, 8, 3, 0.5, 4])
    x = np.array([-8, -2, -4, -1, -6, 8, 3, -0.5, 4])
    want = [float(mpmath.hyp1f1(mpmath.mpf(u), mpmath.mpf(v), mpmath.mpf(w), zeroprec=200)) for u, v, w in zip(a, b, x)]
    assert want[:8] == [0.0] * 8 and want[8] != 0
    np.testing.assert_allclose(sc.hyp1f1(a, b, x), want, rtol=1e-15, atol=0)
    for f, n in ((xp.special.hyp1f1, len(a)), (jit(xp.special.hyp1f1), N_JIT)):   # (jit: check_transforms' program)
        got = f(*[xp.asarray(np.resize(v, n)) for v in (a, b, x)])
        np.testing.assert_allclose(np.asarray(got), np.resize(want, n), rtol=1e-15, atol=0)
        ai, bi, xi = (xp.asarray(v[:5].astype(np.int64)) for v in (a, b, x))
        got = f(ai, bi, xi)
        assert got.dtype == xp.float64
        np.testing.assert_array_equal(np.asarray(got), 0.0)
    # a rounded terminating sum that cancels stays nan: M(-1, -3, x) = 1 + x/3 at x = -3(1 + 2^-52)
    # (x/3 is not exact; the true -1.48e-16 has no correct digit guaranteed)
    assert np.isnan(float(xp.special.hyp1f1(-1.0, -3.0, -3.0000000000000004)))
