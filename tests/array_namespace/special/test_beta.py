"""The beta family of xp.special against scipy.special: values (float32 and float64, edges:
x = 0 and 1, outside [0, 1], a or b <= 0, infinities, NaN; small and large parameters), jit and
vmap, gradients (forward and reverse, second order where the function is smooth) against finite
differences of scipy, and scipy.special itself dispatching to our functions under SCIPY_ARRAY_API=1.

Tolerances: for large parameters the prefactor x^a (1-x)^b / B(a, b) is an exponential of terms
of size ~a, b, so its relative error is ~eps * max(a, b) (scipy's Boost code has the same
conditioning); where a tolerance is widened for that, the comment says so.
"""
import os
import sys

os.environ["SCIPY_ARRAY_API"] = "1"

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import scipy.special as sc  # noqa: E402

import array_namespace as xp  # noqa: E402
from transforms import grad, jit, vmap  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from harness import N_JIT, check_grad, check_transforms, check_values, tiled  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:non-integer arg n is deprecated:DeprecationWarning")
RNG = np.random.default_rng(20240611)
inf, nan = np.inf, np.nan


# ------------------------------------------------------------------------------ betaln
BL_EDGE = [(0.5, 0.5), (1, 1), (2, 3), (-1.5, 2), (-0.5, -0.5), (0, 1), (-1, 3), (-2, 1), (-3, 2), (-2, 2),
           (3, -1), (-2, -1), (inf, 1), (1, inf), (inf, inf), (inf, -0.5), (-inf, 1), (nan, 1), (1, nan),
           (1e-30, 1), (1e7, 2), (1e10, 1e10)]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_betaln_edges(dtype):
    a, b = np.array(BL_EDGE, dtype=np.float64).T
    # scipy's lbeta loses ~1e-12 relative for args > 171 (log-gamma differences); ours uses Stirling
    check_values("betaln", [a, b], dtype=dtype, rtol=2e-12 if dtype == np.float64 else 2e-6)


def test_betaln_large_arguments_against_mpmath():
    # scipy's log-gamma differences lose ~1e-11 here; reference values by mpmath at 40 digits
    got = xp.special.betaln(xp.asarray([3e5, 12.5, 1e-3]), xp.asarray([1e-3, 1e6, 1e8]))
    np.testing.assert_allclose(np.asarray(got), [6.894567349295216, -153.9596063373295, 6.888758204644896],
                               rtol=2e-15)


def test_betaln_of_a_negative_and_a_large_argument_against_mpmath():
    """log|B(a, b)| with a < 0 (not a pole) and b, a + b >= 10 takes the Stirling form of lgamma(b) -
    lgamma(a + b): the log-gamma sum lost 1.5e-7 of betaln(-2.5, 1e10) and 2.3e-8 of betaln(-0.5, 1e8) to the
    cancellation of the huge log-gammas (found by fuzzing against scipy). mpmath at 40 digits."""
    import mpmath
    mpmath.mp.dps = 40
    a = np.array([-2.5, -0.5, -2.5, 30.0, -2.5, -7.5, -15.5, -0.001])
    b = np.array([1e10, 1e8, 1e5, -2.5, 12.4, 17.4, 26.0, 10.0])
    want = [float(mpmath.log(abs(mpmath.beta(mpmath.mpf(p), mpmath.mpf(q))))) for p, q in zip(a, b)]
    for f in (xp.special.betaln, jit(xp.special.betaln)):
        np.testing.assert_allclose(np.asarray(f(xp.asarray(a), xp.asarray(b))), want, rtol=4e-15)


def test_betaln_grid():
    a = np.concatenate([RNG.uniform(0.01, 10, 30), RNG.uniform(10, 500, 20), RNG.uniform(-20, 0, 10)])
    b = np.concatenate([RNG.uniform(0.01, 30, 30), RNG.uniform(0.1, 2000, 20), RNG.uniform(0.1, 5, 10)])
    check_values("betaln", [a, b], rtol=2e-12, atol=1e-13)   # atol: B(a, b) near 1 (betaln ~ 0)
    check_values("betaln", [a[:50], b[:50]], dtype=np.float32, rtol=1e-5, atol=1e-5)


def test_betaln_transforms_and_grads():
    a, b = np.array([0.3, 2.0, 7.5, 15.0, 40.0, 3.0]), np.array([1.7, 0.4, 12.0, 30.0, 2.5, 120.0])
    check_transforms("betaln", [a, b])
    check_grad("betaln", [a, b], argnums=(0, 1), rtol=1e-6)   # second order too (trigamma)


# -------------------------------------------------------------------- betainc, betaincc
INC_EDGE = [(0, 1, .5), (1, 0, .5), (0, 0, .5), (0, 0, 0), (-1, 1, .5), (1, -1, .5), (1, 1, -.1), (1, 1, 1.1),
            (2, 3, 0), (2, 3, 1), (0, 1, 0), (1, 0, 1), (inf, 1, .5), (1, inf, .5), (inf, inf, .5),
            (inf, 1, 1), (inf, 1, 0), (1, inf, 0), (1, inf, 1), (0, inf, .5), (inf, 0, .5), (nan, 1, .5),
            (1, nan, .5), (2, 3, nan), (1, 1, .3), (1, 2, .3), (2, 1, .3), (1e-20, 1, .5), (1, 1e-20, .5)]


def _inc_grid():
    a = np.concatenate([RNG.uniform(0.05, 5, 40), RNG.uniform(5, 200, 20), [0.5, 1e3, 2.5, 1e4]])
    b = np.concatenate([RNG.uniform(0.05, 5, 40), RNG.uniform(0.1, 300, 20), [1e4, 1e3, 1e7, 0.5]])
    x = np.concatenate([RNG.uniform(0, 1, 60), [1e-4, 0.51, 1e-7, 0.9999]])
    return a, b, x


@pytest.mark.parametrize("name", ["betainc", "betaincc"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_betainc_edges(name, dtype):
    a, b, x = np.array(INC_EDGE, dtype=np.float64).T
    check_values(name, [a, b, x], dtype=dtype)


@pytest.mark.parametrize("name", ["betainc", "betaincc"])
def test_betainc_grid(name):
    a, b, x = _inc_grid()
    check_values(name, [a, b, x], rtol=1e-12, atol=1e-300)
    # large a, b: relative error ~ eps * max(a, b) through the prefactor (see the module docstring)
    big = np.array([1e3, 3e3, 1e4, 2e4]), np.array([1.2e3, 1e4, 1e4, 1e3]), np.array([0.45, 0.24, 0.5, 0.95])
    check_values(name, list(big), rtol=2e-11)
    m = a < 60   # float32: the prefactor's relative error ~ eps32 * (a |log x| + b |log(1-x)|)
    check_values(name, [a[m], b[m], x[m]], dtype=np.float32, rtol=2e-4, atol=1e-30)


def test_betainc_dtypes_and_promotion():
    f32 = xp.asarray([0.5], dtype=xp.float32)
    assert xp.special.betainc(f32, f32, f32).dtype == xp.float32
    assert xp.special.betainc(f32, 2.0, 0.5).dtype == xp.float32
    assert xp.special.betainc(xp.asarray([2]), f32, f32).dtype == xp.float64
    assert xp.special.betainc(2, 3, 0.5).dtype == xp.float64
    assert xp.special.betainc(f32, xp.asarray([2.0]), f32).dtype == xp.float64
    out = xp.special.betainc(xp.asarray([[1.0], [2.0]]), xp.asarray([3.0, 4.0, 5.0]), 0.25)
    assert out.shape == (2, 3)
    np.testing.assert_allclose(np.asarray(out), sc.betainc([[1.0], [2.0]], [3.0, 4.0, 5.0], 0.25), rtol=1e-14)
    with pytest.raises(TypeError, match="betainc: a must be a real"):
        xp.special.betainc(xp.asarray([1j]), 1.0, 0.5)
    with pytest.raises(TypeError, match="betaincc: x must be an array"):
        xp.special.betaincc(1.0, 1.0, "0.5")


@pytest.mark.parametrize("name", ["betainc", "betaincc"])
def test_betainc_transforms(name):
    a = np.array([0.5, 2.0, 10.0, 30.0, 1.0, 0.0, 4.0, 1.5])
    b = np.array([3.0, 2.0, 0.3, 40.0, 1.0, 1.0, 6.0, 0.5])
    x = np.array([0.2, 0.7, 0.99, 0.41, 0.5, 0.3, 0.35, 0.9])
    check_transforms(name, [a, b, x], rtol=1e-12)


@pytest.mark.slow   # second order through the loop, both modes
@pytest.mark.parametrize("name", ["betainc", "betaincc"])
def test_betainc_grads(name):
    a = np.array([0.5, 2.0, 10.0, 30.0, 1.0, 3.0, 1.5])
    b = np.array([3.0, 2.0, 0.8, 40.0, 1.0, 100.0, 7.0])
    x = np.array([0.2, 0.7, 0.95, 0.41, 0.5, 0.01, 0.6])
    check_grad(name, [a, b, x], argnums=(2,), rtol=1e-6)                 # with second order wrt x
    check_grad(name, [a, b, x], argnums=(0, 1), rtol=1e-5, second=True)  # forward-over-reverse through the loop


def test_betainc_grad_at_ends_of_x():
    # dI/dx at x = 0 is b for a = 1, 0 for a > 1; at x = 1 it is a for b = 1
    g = grad(lambda x: xp.sum(xp.special.betainc(xp.asarray([1.0, 2.0, 3.0]), xp.asarray([4.0, 1.0, 1.0]), x)))
    np.testing.assert_allclose(np.asarray(g(xp.asarray([0.0, 0.0, 1.0]))), [4.0, 0.0, 3.0], rtol=1e-14)


def test_betainc_reverse_mode_of_jit_and_vmap_of_grad():
    a, b, x = xp.asarray([0.5, 4.0, 20.0]), xp.asarray([2.0, 3.0, 15.0]), xp.asarray([0.3, 0.8, 0.6])
    f = lambda a, b, x: xp.sum(xp.special.betainc(a, b, x))  # noqa: E731
    g = jit(grad(f, argnums=(0, 1, 2)))(a, b, x)
    gv = vmap(grad(lambda a, b, x: xp.special.betainc(a, b, x), argnums=(0, 1, 2)))(a, b, x)
    for i, (u, v) in enumerate(zip(g, gv)):
        eps = 1e-6
        args = [np.asarray(t) for t in (a, b, x)]
        p, m = list(args), list(args)
        p[i], m[i] = args[i] + eps, args[i] - eps
        want = (sc.betainc(*p) - sc.betainc(*m)) / (2 * eps)
        np.testing.assert_allclose(np.asarray(u), want, rtol=1e-6)
        np.testing.assert_allclose(np.asarray(v), want, rtol=1e-6)


# ------------------------------------------------------------- distribution functions
ST_EDGE = [(inf, 1.0), (inf, -3.0), (0, 1.0), (-1, 1.0), (1, inf), (1, -inf), (nan, 1), (1, nan), (0.5, 0.0),
           (3, -0.0), (5, -1e30), (5, 1e30), (2.5, 1e-9), (2.5, -1e-9), (1e6, 2.0), (1e10, -1.5), (1, -1e-300)]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_stdtr_edges(dtype):
    df, t = np.array(ST_EDGE if dtype == np.float64 else ST_EDGE[:-1]).T
    # the complement side 0.5 + 0.5 (1 - I) near 0.5 for huge df: scipy's Boost series and our
    # continued fraction differ by ~1e-11 relative at df = 1e10
    check_values("stdtr", [df, t], dtype=dtype, rtol=2e-11 if dtype == np.float64 else 2e-5)


@pytest.mark.slow   # compiles nested while_loops for several shapes and transforms
def test_stdtr_grid_transforms_grads():
    df = np.concatenate([RNG.uniform(0.1, 5, 20), RNG.uniform(5, 300, 10)])
    t = np.concatenate([RNG.normal(0, 3, 20), RNG.uniform(-50, 50, 10)])
    check_values("stdtr", [df, t], rtol=1e-12, atol=1e-300)
    check_values("stdtr", [df, t], dtype=np.float32, rtol=1e-4, atol=1e-30)
    check_transforms("stdtr", [df[:6], t[:6]], rtol=1e-12)
    d, s = np.array([0.7, 3.0, 10.0, 40.0]), np.array([-2.0, 0.3, 1.5, -0.8])
    check_grad("stdtr", [d, s], argnums=(1,), rtol=1e-6)
    check_grad("stdtr", [d, s], argnums=(0,), rtol=1e-5, second=False)


@pytest.mark.slow   # values, transforms and grads of the continued fraction for several shapes
@pytest.mark.parametrize("name", ["fdtr", "fdtrc"])
def test_fdtr(name):
    edge = [(1, 1, -1), (1, 1, 0), (1, 1, inf), (0, 1, 1), (1, 0, 1), (inf, 1, 1), (1, inf, 1), (-1, 2, 1),
            (nan, 1, 1), (1, nan, 1), (1, 1, nan), (2, 3, 1e-20), (2, 3, 1e20)]
    check_values(name, list(np.array(edge, dtype=float).T))
    check_values(name, list(np.array(edge, dtype=float).T), dtype=np.float32)
    dfn, dfd = RNG.uniform(0.2, 60, 30), RNG.uniform(0.2, 60, 30)
    x = RNG.exponential(2.0, 30)
    check_values(name, [dfn, dfd, x], rtol=1e-12, atol=1e-300)
    check_values(name, [dfn, dfd, x], dtype=np.float32, rtol=2e-4, atol=1e-30)
    check_transforms(name, [dfn[:5], dfd[:5], x[:5]], rtol=1e-12)
    a, b, v = np.array([1.0, 4.0, 12.0]), np.array([2.5, 8.0, 30.0]), np.array([0.5, 1.3, 2.2])
    check_grad(name, [a, b, v], argnums=(2,), rtol=1e-6)
    check_grad(name, [a, b, v], argnums=(0, 1), rtol=1e-5, second=False)


BIN_EDGE = [(2.5, 5, .3), (-1, 5, .3), (-0.5, 5, .3), (5, 5, .3), (6, 5, .3), (0, 5, .3), (2, 5, 0), (2, 5, 1),
            (2, 5.5, .3), (2, 5.9, .3), (2, -1, .3), (2, 5, 1.2), (2, 5, -0.1), (inf, 5, .3), (nan, 5, .3),
            (2, nan, .3), (2, 5, nan), (3, 40, 0.02), (30, 1000, 0.05), (0, 1, 0.5), (4.9, 5, 0.5),
            # k < 0 with n < 0 or beyond a C int (which scipy's cast makes INT_MIN): bdtrc is 1 where n >= floor(k)
            (-1, -1, .3), (-0.5, -1.5, .3), (-3, -2.5, .3), (-0.5, -2.5, .3), (-inf, 5, .3), (-inf, -5, .3),
            (-1e10, -5, .3), (-3e9, -2147483649.0, .3), (-1, 1e10, .3), (-1, -inf, .3), (-1, inf, .3)]


@pytest.mark.parametrize("name", ["bdtr", "bdtrc", "nbdtr", "nbdtrc"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_binomial_edges(name, dtype):
    k, n, p = np.array(BIN_EDGE, dtype=float).T
    check_values(name, [k, n, p], dtype=dtype, rtol=1e-12 if dtype == np.float64 else 5e-5, atol=1e-300)


@pytest.mark.parametrize("name", ["bdtr", "bdtrc", "nbdtr", "nbdtrc"])
def test_binomial_grid_and_grads(name):
    n = np.floor(RNG.uniform(1, 200, 30))
    k = np.floor(RNG.uniform(0, 1, 30) * n)
    p = RNG.uniform(0, 1, 30)
    check_values(name, [k, n, p], rtol=1e-11, atol=1e-300)
    check_transforms(name, [k[:5], n[:5], p[:5]], rtol=1e-11)
    kk, nn, pp = np.array([1.0, 3.0, 10.0]), np.array([4.0, 12.0, 40.0]), np.array([0.3, 0.45, 0.2])
    check_grad(name, [kk, nn, pp], argnums=(2,), rtol=1e-6)


def test_binomial_integer_inputs_give_float64():
    out = xp.special.bdtr(xp.asarray([1, 2]), xp.asarray([5, 5]), xp.asarray([0.5, 0.5], dtype=xp.float32))
    assert out.dtype == xp.float64
    np.testing.assert_allclose(np.asarray(out), sc.bdtr([1, 2], [5, 5], 0.5), rtol=1e-14)


# -------------------------------------------------------------- scipy dispatches to us
def test_scipy_special_dispatches_to_our_functions_under_jit():
    import scipy.special._support_alternative_backends as sab
    assert sab.SCIPY_ARRAY_API
    for name in ["betainc", "betaincc", "betaincinv", "stdtr", "stdtrit", "fdtr", "fdtrc", "fdtri", "bdtr",
                 "bdtrc", "bdtri", "nbdtr", "nbdtrc", "nbdtri", "betaln"]:
        assert sab._get_native_func(xp, None, name) is getattr(xp.special, name), name
    df, t = xp.asarray([1.5, 4.0, 30.0]), xp.asarray([-2.0, 0.5, 1.7])
    got = jit(lambda d, s: sc.stdtr(d, s))(df, t)     # traced: only our implementation can run here
    assert type(got) is type(df)
    np.testing.assert_allclose(np.asarray(got), sc.stdtr(np.asarray(df), np.asarray(t)), rtol=1e-12)
    a, b, x = xp.asarray([0.5, 2.0]), xp.asarray([3.0, 4.0]), xp.asarray([0.3, 0.6])
    got = jit(lambda a, b, x: sc.betainc(a, b, x))(a, b, x)
    np.testing.assert_allclose(np.asarray(got), sc.betainc([0.5, 2.0], [3.0, 4.0], [0.3, 0.6]), rtol=1e-13)
    g = grad(lambda x: xp.sum(sc.betainc(a, b, x)))(x)
    want = np.exp(np.array([-0.5, 1.0]) * np.log([0.3, 0.6]) + np.array([2.0, 3.0]) * np.log1p(-np.array([0.3, 0.6]))
                  - sc.betaln([0.5, 2.0], [3.0, 4.0]))
    np.testing.assert_allclose(np.asarray(g), want, rtol=1e-12)


# ------------------------------------------------------- integer k, n beyond a C int (scipy's casts)
# scipy hands integer-dtype k, n to C code as ints: the long -> int cast keeps the low 32 bits, so
# 2**32 + 3 acts as 3, 2**31 as -2**31 (NaN), and k = 2**31 - 1 overflows k + 1 (NaN); float k, n
# beyond a C int are NaN.
_BIG = [2 ** 32 + 3, 2 ** 32 + 7, 2 ** 31, 2 ** 31 - 1, -2 ** 31 - 1, 2 ** 33 - 5, 3793176093734417710,
        516267117350925118, 7, 1, 0, -3]


@pytest.mark.parametrize("name", ["bdtr", "bdtrc", "bdtri", "nbdtr", "nbdtrc", "nbdtri"])
def test_binomial_integer_arguments_wrap_like_scipys_c_int(name):
    nb = name.startswith("nb")
    big = np.array(_BIG, dtype=np.int64)
    kk, nn = np.meshgrid(big, big, indexing="ij")
    kk, nn = kk.ravel(), nn.ravel()
    if name == "nbdtri":   # both wrapped k, n ~ 1e9: scipy's nbdtri loses ~6 digits there (mpmath)
        keep = ~((kk.astype(np.int32) > 10 ** 6) & (nn.astype(np.int32) > 10 ** 6))
        kk, nn = kk[keep][:140], nn[keep][:140]
    if nb:
        k = kk
    else:
        k = np.array([0.5, 2.0, 3.7, 6.0] * (kk.size // 4))
    p = np.linspace(0.05, 0.95, kk.size)
    want = getattr(sc, name)(k, nn, p)
    f = getattr(xp.special, name)
    args = [xp.asarray(k), xp.asarray(nn), xp.asarray(p)]
    # the inverses at n ~ 1e9 are ill-conditioned (scipy's own digits differ there)
    rtol, atol = (1e-6, 1e-15) if name.endswith("i") else (1e-9, 1e-300)
    for got in (f(*args), jit(f)(*args)):
        assert got.dtype == xp.float64
        np.testing.assert_allclose(np.asarray(got), want, rtol=rtol, atol=atol)
    # Python ints wrap the same way; float k, n beyond a C int are NaN
    assert np.isnan(float(f(2 ** 31, 5, 0.5))) and np.isnan(float(f(3.0, 2.0 ** 32 + 3, 0.5)))
    np.testing.assert_allclose(float(f(2 if nb else 2.0, 2 ** 32 + 5, 0.3)),
                               getattr(sc, name)(2 if nb else 2.0, np.int64(2 ** 32 + 5), 0.3), rtol=1e-12)


def test_betaln_poles_beyond_a_c_int_are_inf_like_scipy():
    # scipy's finite value at a pole a (B(a, n) with a + n < 1) needs a and 1 - a to fit a C int;
    # beyond that, e.g. the integer-valued 1e18s hypothesis draws, it is +inf
    a = np.array([-3e9, -2.0 ** 31, 1 - 2.0 ** 31, 2 - 2.0 ** 31, -3.0, 2.0, 3.0, -3.38e18, 3.96e18])
    b = np.array([2.0, 2.0, 2.0, 1.0, 2.0, -3e9, 2 - 2.0 ** 31, 5.16e17, -7.89e18])
    want = sc.betaln(a, b)
    for got in (xp.special.betaln(xp.asarray(a), xp.asarray(b)), jit(xp.special.betaln)(xp.asarray(a), xp.asarray(b))):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-13)


# ------------------------------------------- parameters near 1e9 (scipy's large-int hypothesis draws)
# (a, b, x, I_x(a, b)): references by the continued fraction in mpmath at 40 digits. The fraction
# needs ~sqrt(ab/(a+b))/4 terms near the mean (was cut at 1000: I was 1e-3 off at a ~ 1e9), and
# x^a (1-x)^b / B(a, b) taken as exp(a log x + b log(1-x) - log B) lost eps * a (2e-7 at 1e9).
BETAINC_BIG = [(988459838.0, 1703621935.0, 0.36717373791474245, 0.5301100251013634),
               (988459838.0, 1703621935.0, 0.3671729280103694, 0.49536034464762746),
               (536837432.0, 1703621935.0, 0.2396111110436745, 0.5301100251017958),
               (1e8, 2e8, 0.33334, 0.5967569820220765), (2e10, 2e10, 0.5000001, 0.5159534368443386),
               (1111111.0, 1e7, 0.1, 0.5001462788422749), (1e6, 2e6, 0.3334, 0.5968015448901117),
               (20000.0, 20000.0, 0.505, 0.9772518927742274)]


def test_betainc_huge_parameters_against_mpmath():
    a, b, x, want = (np.array(v) for v in zip(*BETAINC_BIG))
    args = [xp.asarray(a), xp.asarray(b), xp.asarray(x)]
    big = [xp.asarray(v) for v in tiled([a, b, x])]      # (jit: check_transforms' programs, see harness.N_JIT)
    for f, g, at, w in ((xp.special.betainc, xp.special.betaincc, args, want),
                        (jit(xp.special.betainc), jit(xp.special.betaincc), big, np.resize(want, N_JIT))):
        # ~1e-11: the fraction's steps cancel ~1e3-fold near the mean for m = ab/(a+b) ~ 1e9
        np.testing.assert_allclose(np.asarray(f(*at)), w, rtol=5e-11)
        np.testing.assert_allclose(np.asarray(g(*at)), 1 - w, rtol=5e-11)
    # scipy (Boost) agrees with the references to ~1e-11 (1.3e-11 at a = b = 2e10)
    np.testing.assert_allclose(sc.betainc(a, b, x), want, rtol=5e-11)


def _betainc_and_mirrored_betaincc_against_mpmath(cases, rtol):
    """betainc(a, b, x) and betaincc(b, a, 1 - x) (the same value) against mpmath at 40 digits, eagerly and under
    jit; the complement's reference is at 1 - (1 - x) exactly (1 - x rounds)."""
    import mpmath
    mpmath.mp.dps = 40
    a, b, x = (np.array(v) for v in zip(*cases))
    xc = 1 - x
    want = np.array([float(mpmath.betainc(p, q, 0, t, regularized=True)) for p, q, t in zip(a, b, x)])
    want_c = np.array([float(mpmath.betainc(p, q, 0, 1 - mpmath.mpf(t), regularized=True))
                       for p, q, t in zip(a, b, xc)])
    for f, g, n in ((xp.special.betainc, xp.special.betaincc, len(a)),
                    (jit(xp.special.betainc), jit(xp.special.betaincc), N_JIT)):
        got = np.asarray(f(*[xp.asarray(np.resize(v, n)) for v in (a, b, x)]))[:len(a)]
        np.testing.assert_allclose(got, want, rtol=rtol)
        got = np.asarray(g(*[xp.asarray(np.resize(v, n)) for v in (b, a, xc)]))[:len(a)]
        np.testing.assert_allclose(got, want_c, rtol=rtol)


def test_betainc_far_below_the_mean_against_mpmath():
    """For a, b >= 10 the front x^a (1-x)^b / (a B) is taken as a log1p of n x / a - 1, which near -1 (x far
    below its mean a / n) kept only eps / (n x / a) of its digits: betainc(10, 10, 1e-11) was off by 8e-7. The
    lower tail, and the same values as the upper tail of the swapped parameters at 1 - x."""
    _betainc_and_mirrored_betaincc_against_mpmath(
        [(a, b, x) for a, b in ((10.0, 10.0), (20.0, 20.0), (10.0, 1e3), (50.0, 10.0))
         for x in (1e-3, 1e-5, 1e-8, 1e-11, 1e-30)], rtol=1e-12)


def test_betainc_with_a_tiny_parameter_on_the_complement_side_against_mpmath():
    """I_x(a, b) with b tiny is 1 - I_{1-x}(b, a) ~ b: taken as 1 - I it kept only eps / b of its digits
    (betainc(2, 1e-10, 0.9) was off by 1e-6, at b = 1e-300 it was negative); it is now the small-parameter
    series of the complement. The same for betaincc with a tiny a."""
    _betainc_and_mirrored_betaincc_against_mpmath(
        [(a, b, x) for b in (1e-200, 1e-20, 1e-10, 1e-6, 1e-4, 3e-3, 9e-3) for a in (1e-3, 0.5, 1.0, 2.0, 10.0, 1e3)
         for x in (1e-5, 0.3, 0.9, 0.999)] + [(1e3, 1e-8, 0.9975), (100.0, 1e-4, 0.975)], rtol=3e-13)


def test_betainc_out_of_terms_is_nan_not_truncated(monkeypatch):
    # a fraction cut off before it converged is nan (it was returned as it stood: 1e-3 off at a ~ 1e9).
    # With the cap lowered to 50 terms, I_0.5(1e6, 1e6) (needing ~300) is nan, eager and jit; the
    # tails and small parameters (a few terms) still agree with scipy; betaincinv passes the nan on
    from array_namespace import _staged
    from array_namespace.special import _beta
    monkeypatch.setattr(_beta, "_CF_CAP", 50)
    monkeypatch.setattr(_staged, "_BUCKETED", {})   # stage afresh with the lowered cap
    a, b, x = np.array([1e6, 1e6, 2.0, 0.5]), np.array([1e6, 1e6, 3.0, 0.7]), np.array([0.5, 0.49, 0.4, 0.3])
    for f in (xp.special.betainc, jit(xp.special.betainc)):
        got = np.asarray(f(xp.asarray(a), xp.asarray(b), xp.asarray(x)))
        assert np.isnan(got[0])
        np.testing.assert_allclose(got[1:], sc.betainc(a[1:], b[1:], x[1:]), rtol=1e-11, atol=1e-300)
    assert np.isnan(float(xp.special.betaincinv(1e6, 1e6, 0.4)))
    monkeypatch.undo()   # (the stagings made with the default cap come back with the cache)
    np.testing.assert_allclose(float(xp.special.betaincinv(1e6, 1e6, 0.4)), sc.betaincinv(1e6, 1e6, 0.4), rtol=1e-13)


