"""The error-function, normal-distribution, Bessel, exponential-integral and elliptic families
of xp.special against scipy.special: values (float32 and float64 over wide ranges, edges,
infinities, NaN, negative arguments), jit vs eager and scipy, vmap vs a loop, gradients (forward,
reverse, second order) against finite differences of scipy, and scipy.special / scipy.stats
dispatching to our functions under SCIPY_ARRAY_API=1, jitted and differentiated.

Tolerances: float64 to the harness' 1e-11 relative, float32 to 2e-5 relative. The oscillating
Bessel functions J/Y are compared with an absolute floor near their zeros (the relative error of
any approximation is unbounded there). Results below the smallest normal number are compared
with an absolute floor too: XLA on CPU flushes subnormals to zero.
"""
import os
import sys

os.environ["SCIPY_ARRAY_API"] = "1"

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import scipy.special as sc  # noqa: E402

import array_namespace as xp  # noqa: E402
from transforms import grad, jit, make_jaxpr, vmap  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from harness import check_grad, check_transforms, check_values  # noqa: E402

EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, np.inf, -np.inf, np.nan, 1e-30, -1e-30, 1e-8, 1e30, -1e30, 2.0, 5.0,
         8.0, 10.0]
TINY = {np.float64: 4 * np.finfo(np.float64).tiny, np.float32: 4 * np.finfo(np.float32).tiny}


def _grid(lo, hi, n=401, logs=True):
    g = [np.linspace(lo, hi, n)]
    if logs:
        if hi > 0:
            g.append(np.logspace(-20, np.log10(hi), 60))
        if lo < 0:
            g.append(-np.logspace(-20, np.log10(-lo), 60))
    return np.concatenate(g)


# (name, float64 grid, float32 grid, absolute floor f64, absolute floor f32)
UNARY = {
    "erf": (_grid(-30, 30), _grid(-10, 10), 0, 0),
    "erfc": (_grid(-30, 26), _grid(-10, 9), 0, 0),
    "erfcx": (_grid(-26, 1e6), _grid(-9, 1e5), 0, 0),
    "erfinv": (np.concatenate([np.linspace(-1.2, 1.2, 481), 1 - np.logspace(-15, -1, 40),
                               -1 + np.logspace(-15, -1, 40)]),
               np.concatenate([np.linspace(-1.2, 1.2, 481), 1 - np.logspace(-7, -1, 20)]), 0, 0),
    "ndtr": (_grid(-37, 40), _grid(-13, 10), 0, 0),
    # (and where x^2 overflows but x^2 / 2 does not: -1.9e154 < x < -1.3e154, float32 -2.6e19 < x < -1.8e19)
    "log_ndtr": (np.concatenate([_grid(-1e5, 37), np.linspace(-40, 10, 201), -np.linspace(1.2e154, 2e154, 9)]),
                 np.concatenate([_grid(-1e4, 12), -np.linspace(1.7e19, 2.7e19, 11)]), 0, 0),
    "ndtri": (np.concatenate([np.logspace(-300, 0, 300), 1 - np.logspace(-16, 0, 100), np.linspace(0, 1, 201),
                              [-0.5, 1.5]]),
              np.concatenate([np.logspace(-37, 0, 100), 1 - np.logspace(-7, 0, 40), np.linspace(0, 1, 201)]), 0, 0),
    "i0": (_grid(-700, 700), _grid(-85, 85), 0, 0),
    "i0e": (_grid(-1e4, 1e4), _grid(-1e4, 1e4), 0, 0),
    "i1": (_grid(-700, 700), _grid(-85, 85), 0, 0),
    "i1e": (_grid(-1e4, 1e4), _grid(-1e4, 1e4), 0, 0),
    "k0": (_grid(-5, 700), _grid(-5, 85), 0, 0),
    "k0e": (_grid(-5, 1e4), _grid(-5, 1e4), 0, 0),
    "k1": (_grid(-5, 700), _grid(-5, 85), 0, 0),
    "k1e": (_grid(-5, 1e4), _grid(-5, 1e4), 0, 0),
    "j0": (_grid(-200, 200), _grid(-60, 60), 3e-15, 5e-7),
    "j1": (_grid(-200, 200), _grid(-60, 60), 3e-15, 5e-7),
    "y0": (_grid(-5, 200), _grid(-5, 60), 3e-15, 5e-7),
    "y1": (_grid(-5, 200), _grid(-5, 60), 3e-15, 5e-7),
    "exp1": (_grid(-5, 700), _grid(-5, 85), 0, 0),
    "expi": (_grid(-700, 700), _grid(-85, 85), 0, 0),
    "ellipk": (np.concatenate([_grid(-1e6, 1), 1 - np.logspace(-16, 0, 60)]),
               np.concatenate([_grid(-1e6, 1), 1 - np.logspace(-7, 0, 30)]), 0, 0),
    "ellipkm1": (np.concatenate([_grid(-1, 1e6), np.logspace(-300, 0, 100)]),
                 np.concatenate([_grid(-1, 1e6), np.logspace(-37, 0, 40)]), 0, 0),
    "ellipe": (np.concatenate([_grid(-1e6, 1), 1 - np.logspace(-16, 0, 60)]),
               np.concatenate([_grid(-1e6, 1), 1 - np.logspace(-7, 0, 30)]), 0, 0),
    "spence": (_grid(-2, 1e6), _grid(-2, 1e6), 0, 0),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_values_float64(name):
    g64, _, floor64, _ = UNARY[name]
    check_values(name, [np.concatenate([g64, EDGES])], dtype=np.float64, atol=max(floor64, TINY[np.float64]))


@pytest.mark.parametrize("name", sorted(UNARY))
def test_values_float32(name):
    _, g32, _, floor32 = UNARY[name]
    edges = [e for e in EDGES if not (0 < abs(e) < 1e-30)]
    check_values(name, [np.concatenate([g32, edges])], dtype=np.float32, atol=max(floor32, TINY[np.float32]))


def test_ndtri_compiled_and_eager_within_4_ulp_of_mpmath_over_the_whole_range():
    """The compiled ndtri takes its tail logs by raw_ops.log_pos (eagerly: NumPy's log): both against the exact
    quantile (mpmath, 40 digits: Newton on ncdf from scipy's value) from the least normal p to 1 - 2**-53."""
    import mpmath
    mpmath.mp.dps = 40
    fi = np.finfo(np.float64)
    p = np.concatenate([np.geomspace(fi.tiny, 0.1, 120), 1 - np.logspace(-16, -0.4, 60), np.linspace(0.02, 0.98, 40),
                        fi.tiny * np.array([1.0, 1.5, 10.0]), 1 - fi.epsneg * np.arange(1, 5)])

    def exact(v):
        x, v = mpmath.mpf(sc.ndtri(v)), mpmath.mpf(v)
        for _ in range(3):
            x -= (mpmath.ncdf(x) - v) / mpmath.npdf(x)
        return float(x)
    want = np.array([exact(v) for v in p])
    for got in (np.asarray(jit(xp.special.ndtri)(xp.asarray(p))), np.asarray(xp.special.ndtri(xp.asarray(p)))):
        ulp = np.abs(got - want) / np.spacing(np.abs(want))
        assert ulp.max() <= 4, (p[ulp.argmax()], ulp.max())


N_ORDERS = np.array([0, 1, 2, 3, 5, 10, 30, 50])[:, None]
X_ORDERS = np.concatenate([np.linspace(0, 60, 121), np.logspace(-10, 0, 20), [np.inf, -np.inf, np.nan, -1.0]])[None, :]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_yn_values(dtype):
    n = np.concatenate([N_ORDERS, -N_ORDERS[1:6]])
    floor = 1e-15 if dtype == np.float64 else 5e-7
    # float32: scipy evaluates in double; our float32 recurrence loses ~n ulp
    check_values("yn", [n.astype(dtype), X_ORDERS], dtype=dtype, atol=floor,
                 rtol=1e-10 if dtype == np.float64 else 2e-4)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_expn_values(dtype):
    check_values("expn", [N_ORDERS.astype(dtype), X_ORDERS], dtype=dtype, atol=TINY[dtype])
    check_values("expn", [np.array([-1.0, 2.0, 0.0, 1.0]), np.array([1.0, -1.0, 0.0, 0.0])], dtype=dtype)


def test_expn_large_order_against_mpmath():
    # scipy switches to a uniform asymptotic expansion above n = 50 that is good to ~1e-7 only;
    # mpmath (arbitrary precision) is the oracle here
    import mpmath   # a test extra
    n = np.array([100.0, 100.0, 300.0, 1000.0, 64.0])
    x = np.array([50.0, 0.5, 2.0, 700.0, 1.3])
    want = np.array([float(mpmath.expint(int(a), b)) for a, b in zip(n, x)])
    got = np.asarray(xp.special.expn(xp.asarray(n), xp.asarray(x)))
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_integer_orders_and_truncation():
    xn = np.array([0.7, 1.5, 4.0, 9.0])       # the shapes of test_jit_vmap_orders: no new compiles
    x = xp.asarray(xn)
    np.testing.assert_allclose(np.asarray(xp.special.yn(xp.asarray([1, 2, 3, -3]), x)),
                               sc.yn([1, 2, 3, -3], xn), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(xp.special.expn(xp.asarray([2.7, 0.2, 3.9, 1.0]), x)),
                               sc.expn([2, 0, 3, 1], xn), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(xp.special.yn(xp.asarray([-2.5, 2.5, -0.5, 1.9]), x)),
                               sc.yn([-2, 2, 0, 1], xn), rtol=1e-12)


def _out_dtype(f, *args):
    """The result dtype, from the staged program (no compile)."""
    return make_jaxpr(f)(*args).out_avals[0].dtype


def test_dtypes():
    f32 = xp.asarray([1.0], dtype=xp.float32)
    assert _out_dtype(xp.special.erf, xp.asarray([1, 2])) == np.float64
    assert _out_dtype(xp.special.i0, xp.asarray([True])) == np.float64
    assert _out_dtype(xp.special.ndtr, f32) == np.float32
    assert _out_dtype(lambda v: xp.special.yn(2, v), f32) == np.float32
    assert _out_dtype(lambda v: xp.special.yn(xp.asarray([2]), v), f32) == np.float64   # scipy's 'ld->d'
    assert _out_dtype(xp.special.expn, f32, f32) == np.float32
    assert _out_dtype(lambda v: xp.special.erfc(0.5) + v, xp.asarray(1.0)) == np.float64
    assert xp.special.erfc(xp.asarray([0.5, 1.0, 2.0, 3.0], dtype=xp.float32)).dtype == xp.float32


def test_errors():
    with pytest.raises(TypeError, match="erf: x"):
        xp.special.erf(xp.asarray([1 + 1j]))
    with pytest.raises(TypeError, match="yn: n"):
        xp.special.yn("2", xp.asarray([1.0]))
    with pytest.raises(TypeError, match="ndtri"):
        xp.special.ndtri([0.5])


# ------------------------------------------------------------------- transforms
TRANSFORM_ARGS = {
    "erf": [-3.0, -0.2, 0.7, 2.5], "erfc": [-3.0, -0.2, 0.7, 5.5], "erfcx": [-3.0, 0.2, 2.5, 30.0],
    "erfinv": [-0.99, -0.3, 0.5, 0.999], "ndtr": [-20.0, -1.5, 0.3, 4.0], "log_ndtr": [-50.0, -3.0, 0.5, 6.0],
    "ndtri": [1e-20, 0.1, 0.6, 0.999], "i0": [-12.0, -1.0, 3.0, 20.0], "i0e": [-12.0, -1.0, 3.0, 20.0],
    "i1": [-12.0, -1.0, 3.0, 20.0], "i1e": [-12.0, -1.0, 3.0, 20.0], "k0": [0.1, 1.5, 3.0, 20.0],
    "k0e": [0.1, 1.5, 3.0, 20.0], "k1": [0.1, 1.5, 3.0, 20.0], "k1e": [0.1, 1.5, 3.0, 20.0],
    "j0": [-7.0, 0.5, 3.0, 12.0], "j1": [-7.0, 0.5, 3.0, 12.0], "y0": [0.3, 2.0, 6.0, 12.0],
    "y1": [0.3, 2.0, 6.0, 12.0], "exp1": [0.1, 1.0, 2.5, 30.0], "expi": [-5.0, 0.5, 3.0, 50.0],
    "ellipk": [-3.0, 0.1, 0.6, 0.99], "ellipkm1": [0.01, 0.4, 0.9, 4.0], "spence": [0.1, 0.7, 1.6, 5.0],
    "ellipe": [-3.0, 0.1, 0.6, 0.99],
}


@pytest.mark.parametrize("name", sorted(TRANSFORM_ARGS))
def test_jit_vmap(name):
    check_transforms(name, [np.array(TRANSFORM_ARGS[name])], rtol=1e-11)


@pytest.mark.parametrize("name", ["yn", "expn"])
def test_jit_vmap_orders(name):
    check_transforms(name, [np.array([0.0, 1.0, 2.0, 7.0]), np.array([0.7, 1.5, 4.0, 9.0])], rtol=1e-11)


GRAD_ARGS = {
    "erf": [-2.0, -0.2, 0.7, 1.5], "erfc": [-2.0, -0.2, 0.7, 3.0], "erfcx": [-2.0, 0.2, 2.5, 8.0],
    "erfinv": [-0.9, -0.3, 0.5, 0.95], "ndtr": [-6.0, -1.5, 0.3, 2.0], "log_ndtr": [-30.0, -3.0, 0.5, 3.0],
    "ndtri": [0.01, 0.1, 0.6, 0.97], "i0": [-4.0, -1.0, 0.0, 3.0], "i0e": [-4.0, -1.0, 0.5, 12.0],
    "i1": [-4.0, -1.0, 0.0, 3.0], "i1e": [-4.0, -1.0, 0.5, 12.0], "k0": [0.3, 1.5, 3.0, 6.0],
    "k0e": [0.3, 1.5, 3.0, 6.0], "k1": [0.3, 1.5, 3.0, 6.0], "k1e": [0.3, 1.5, 3.0, 6.0],
    "j0": [-7.0, 0.0, 3.0, 12.0], "j1": [-7.0, 0.0, 3.0, 12.0], "y0": [0.3, 2.0, 6.0, 12.0],
    "y1": [0.5, 2.0, 6.0, 12.0], "exp1": [0.1, 1.0, 2.5, 8.0], "expi": [-5.0, 0.5, 3.0, 12.0],
    "ellipk": [-3.0, 0.1, 0.6, 0.9], "ellipkm1": [0.05, 0.4, 0.9, 4.0], "spence": [0.1, 0.7, 1.6, 5.0],
    "ellipe": [-3.0, 0.1, 0.6, 0.9],
}


@pytest.mark.parametrize("name", sorted(GRAD_ARGS))
def test_grad(name):
    check_grad(name, [np.array(GRAD_ARGS[name])])


@pytest.mark.parametrize("name", ["yn", "expn"])
def test_grad_orders(name):
    check_grad(name, [np.array([0.0, 1.0, 2.0, 5.0]), np.array([0.7, 1.5, 4.0, 9.0])], argnums=(1,))


def test_grad_at_limits():
    # the removable singularities of the derivative formulas give their limits
    g = grad(lambda m: xp.sum(xp.special.ellipk(m)))(xp.asarray([0.0]))
    np.testing.assert_allclose(np.asarray(g), [np.pi / 8], rtol=1e-12)
    g = grad(lambda m: xp.sum(xp.special.ellipe(m)))(xp.asarray([0.0]))
    np.testing.assert_allclose(np.asarray(g), [-np.pi / 8], rtol=1e-12)
    g = grad(lambda x: xp.sum(xp.special.spence(x)))(xp.asarray([1.0]))
    np.testing.assert_allclose(np.asarray(g), [-1.0], rtol=1e-12)
    g = grad(lambda x: xp.sum(xp.special.i1(x)))(xp.asarray([0.0]))
    np.testing.assert_allclose(np.asarray(g), [0.5], rtol=1e-12)


def test_log_ndtr_tail_gradient():
    # d/dx log Phi(x) ~ -x for very negative x, where Phi itself underflows
    x = np.array([-40.0, -100.0, -1e4])
    g = grad(lambda v: xp.sum(xp.special.log_ndtr(v)))(xp.asarray(x))
    want = np.sqrt(2 / np.pi) / sc.erfcx(-x / np.sqrt(2))       # phi/Phi without cancellation
    np.testing.assert_allclose(np.asarray(g), want, rtol=1e-13)


def test_primitives_are_single_equations():
    txt = str(make_jaxpr(lambda x: xp.special.ndtri(xp.special.ndtr(x)))(xp.asarray([0.5])))
    assert "ndtr " in txt and "ndtri " in txt and txt.count("=") <= 4, txt


# ------------------------------------------------------------- through scipy itself
def test_scipy_dispatches_here_jitted():
    x = xp.asarray([-3.0, 0.0, 1.5])
    out = sc.ndtr(x)
    assert type(out) is type(x)
    np.testing.assert_allclose(np.asarray(out), sc.ndtr(np.array([-3.0, 0.0, 1.5])), rtol=1e-14)
    out = jit(lambda v: sc.ndtri(sc.ndtr(v)) + sc.i0e(v) + sc.erfcx(v))(x)
    assert type(out) is type(x)
    xn = np.array([-3.0, 0.0, 1.5])
    np.testing.assert_allclose(np.asarray(out), xn + sc.i0e(xn) + sc.erfcx(xn), rtol=1e-12)
    out = vmap(lambda v: sc.yn(2, v))(xp.asarray([1.0, 2.0]))
    np.testing.assert_allclose(np.asarray(out), sc.yn(2, np.array([1.0, 2.0])), rtol=1e-13)


def test_scipy_grad_through_ndtr_and_a_norm_cdf():
    xn = np.array([-2.0, 0.1, 1.7])
    g = grad(lambda v: xp.sum(sc.ndtr(v)))(xp.asarray(xn))
    np.testing.assert_allclose(np.asarray(g), np.exp(-xn ** 2 / 2) / np.sqrt(2 * np.pi), rtol=1e-13)
    g = jit(grad(lambda v: xp.sum(sc.log_ndtr(v))))(xp.asarray(xn))
    np.testing.assert_allclose(np.asarray(g), np.exp(-xn ** 2 / 2) / np.sqrt(2 * np.pi) / sc.ndtr(xn), rtol=1e-12)

    # a normal cdf written as scipy.stats.norm.cdf computes it (scipy.stats' distribution
    # classes convert to NumPy themselves, so they never reach xp.special)
    def norm_cdf(v, loc, scale):
        return sc.ndtr((v - loc) / scale)
    from scipy import stats
    cdf = jit(norm_cdf)(xp.asarray(xn), 0.5, 2.0)
    assert type(cdf) is xp.Array if hasattr(xp, "Array") else True
    np.testing.assert_allclose(np.asarray(cdf), stats.norm.cdf(xn, loc=0.5, scale=2.0), rtol=1e-13)
    g = jit(grad(lambda v: xp.sum(norm_cdf(v, 0.5, 2.0))))(xp.asarray(xn))
    np.testing.assert_allclose(np.asarray(g), stats.norm.pdf(xn, loc=0.5, scale=2.0), rtol=1e-12)
    h = grad(lambda v: xp.sum(grad(lambda u: xp.sum(sc.ndtri(u)))(v)))(xp.asarray([0.2, 0.7]))
    q = sc.ndtri(np.array([0.2, 0.7]))
    np.testing.assert_allclose(np.asarray(h), 2 * np.pi * q * np.exp(q ** 2), rtol=1e-10)   # (1/phi(q))' = q/phi^2
