"""The special-function primitives of src/transforms/primitives/special_erf.py (error function,
normal distribution, Bessel, exponential-integral, elliptic and dilogarithm families) bound directly:
each jvp rule -- a classical identity binding the family's other primitives -- against central
differences of scipy.special, first and second order (jvp of jvp exercises the derivative's own
primitives), including the points where the rule selects a limit (I1(x)/x and J1(x)/x at 0, K'(m)
and E'(m) at m = 0, spence' at 1); yn/expn carry no derivative in their integer order; the batch
rules (the order batched or not) against a Python loop; values against scipy; the dtype errors.
Values over wide grids and special points are tests/xla/test_lower_special_erf.py's."""
import numpy as np
import pytest
import scipy.special as sc

import array_namespace as xp
from prim_checks import check_vmap, raw
from transforms import jit, jvp
from transforms.core import bind
from transforms.primitives import special_erf as SE

U = lambda lo, hi: (lambda rng, n: rng.uniform(lo, hi, n))          # noqa: E731
# primitive -> (scipy oracle, sampler of a region where it is smooth)
UNARY = {
    "erfc": (sc.erfc, U(-3, 3)), "erfinv": (sc.erfinv, U(-0.9, 0.9)), "erfcx": (sc.erfcx, U(-2, 5)),
    "ndtr": (sc.ndtr, U(-5, 5)), "ndtri": (sc.ndtri, U(0.05, 0.95)), "log_ndtr": (sc.log_ndtr, U(-30, 5)),
    "i0": (sc.i0, U(-5, 5)), "i0e": (sc.i0e, U(-5, 5)), "i1": (sc.i1, U(-5, 5)), "i1e": (sc.i1e, U(-5, 5)),
    "k0": (sc.k0, U(0.2, 5)), "k0e": (sc.k0e, U(0.2, 5)), "k1": (sc.k1, U(0.2, 5)), "k1e": (sc.k1e, U(0.2, 5)),
    "j0": (sc.j0, U(-10, 10)), "j1": (sc.j1, U(-10, 10)), "y0": (sc.y0, U(0.5, 10)), "y1": (sc.y1, U(0.5, 10)),
    "exp1": (sc.exp1, U(0.2, 5)), "expi": (sc.expi, lambda rng, n: rng.choice([-1, 1], n) * rng.uniform(0.2, 3, n)),
    "ellipk": (sc.ellipk, U(-2, 0.9)), "ellipkm1": (sc.ellipkm1, U(0.1, 1.0)), "ellipe": (sc.ellipe, U(-2, 0.9)),
    "spence": (sc.spence, U(0.1, 3)),
}
# points where the derivative rule selects a limit (central differences are fine there: smooth)
LIMITS = {"i1": [0.0], "i1e": [0.0], "j1": [0.0], "ellipk": [0.0], "ellipe": [0.0], "ellipkm1": [1.0],
          "spence": [1.0]}


def _prim(name):
    return getattr(SE, name + "_p")


def test_the_table_covers_the_module():
    assert {p.name for p in SE.SPECIAL_UNARY} == set(UNARY)
    assert {p.name for p in SE.SPECIAL_BINARY} == {"yn", "expn"}


def _fd(oracle, x, h):
    return (oracle(x + h) - oracle(x - h)) / (2 * h)


@pytest.mark.parametrize("name", list(UNARY))
def test_jvp_first_and_second_order_vs_scipy_differences(name):
    oracle, sample = UNARY[name]
    prim = _prim(name)
    x = np.concatenate([sample(np.random.default_rng(0), 10), LIMITS.get(name, [])])
    t = np.random.default_rng(1).standard_normal(x.shape)
    f = lambda a: bind(prim, a._v)
    out, tan = jvp(f, (xp.asarray(x),), (xp.asarray(t),))
    np.testing.assert_allclose(np.asarray(out), oracle(x), rtol=1e-9, atol=1e-300, err_msg=f"{name} values")
    np.testing.assert_allclose(np.asarray(tan), t * _fd(oracle, x, 1e-6), rtol=2e-6, atol=1e-9,
                               err_msg=f"{name}: jvp")
    x, t = x[:10], t[:10]        # the limit points' second order: its own test below
    np.testing.assert_allclose(_second(name, x, t), t * _second_fd(oracle, x), rtol=1e-4, atol=1e-6,
                               err_msg=f"{name}: second order")


def _second(name, x, t):
    """jvp of (x -> jvp(f)(x; 1)) along t: f''(x) t."""
    f = lambda a: bind(_prim(name), a._v)
    df = lambda a: jvp(f, (a,), (xp.ones_like(a),))[1]
    return np.asarray(jvp(df, (xp.asarray(x),), (xp.asarray(t),))[1])


def _second_fd(oracle, x, h=1e-4):
    return (oracle(x + h) - 2 * oracle(x) + oracle(x - h)) / h ** 2


@pytest.mark.parametrize("name", list(LIMITS))
def test_derivative_at_the_selected_limit_is_finite_and_exact(name):
    exact = {"i1": 0.5, "i1e": 0.5, "j1": 0.5, "ellipk": np.pi / 8, "ellipe": -np.pi / 8, "ellipkm1": -np.pi / 8,
             "spence": -1.0}[name]
    x = np.array(LIMITS[name])
    _, tan = jvp(lambda a: bind(_prim(name), a._v), (xp.asarray(x),), (xp.asarray(np.ones_like(x)),))
    np.testing.assert_allclose(np.asarray(tan), exact, rtol=1e-12)


@pytest.mark.parametrize("name", list(LIMITS))
def test_second_derivative_at_the_selected_limit(name):
    # the derivative rule selects a constant at the limit point; the second derivative must still be
    # the function's (K''(0) = 9 pi / 64, E''(0) = -3 pi / 64, spence''(1) = 1/2), not the constant's zero
    x = np.array(LIMITS[name])
    np.testing.assert_allclose(_second(name, x, np.ones_like(x)), _second_fd(UNARY[name][0], x), rtol=1e-4,
                               atol=1e-6, err_msg=f"{name}: second derivative at {x}")


BINARY = {"yn": (sc.yn, [0.0, 1.0, 2.0, 3.0], U(0.5, 10)), "expn": (sc.expn, [0.0, 1.0, 2.0, 5.0], U(0.2, 5))}


@pytest.mark.parametrize("name", list(BINARY))
def test_order_argument_jvp_and_batching(name):
    oracle, orders, sample = BINARY[name]
    prim = _prim(name)
    x = sample(np.random.default_rng(2), 4)
    n = np.repeat(orders, 1)[:, None] * np.ones((1, 4))
    xs = np.broadcast_to(x, n.shape).copy()
    f = lambda a, b: bind(prim, a._v, b._v)
    t = np.random.default_rng(3).standard_normal(xs.shape)
    out, tan = jvp(f, (xp.asarray(n), xp.asarray(xs)), (xp.asarray(np.ones_like(n)), xp.asarray(t)))
    np.testing.assert_allclose(np.asarray(out), oracle(n.astype(int), xs), rtol=1e-9)
    # the order's tangent (all ones) contributes nothing: only x's
    np.testing.assert_allclose(np.asarray(tan), t * _fd(lambda v: oracle(n.astype(int), v), xs, 1e-6),
                               rtol=2e-6, atol=1e-9)
    tol = dict(rtol=1e-14, atol=0)
    check_vmap(f, [n, xs], [0, 0], **tol)
    check_vmap(f, [n[:, 0], x], [0, None], **tol)        # the order batched, x shared
    check_vmap(f, [np.float64(2.0), xs], [None, 1], **tol)
    check_vmap(f, [n[:, :1], xs], [0, 0], **tol)          # broadcasting inside the lanes: (1,) with (4,)


@pytest.mark.parametrize("name", ["erfc", "ndtri", "k1e", "ellipe"])
def test_unary_batching_float32_and_jit(name):
    oracle, sample = UNARY[name]
    x = sample(np.random.default_rng(4), 12).reshape(3, 4).astype(np.float32)
    f = lambda a: bind(_prim(name), a._v)
    got = check_vmap(f, [x], [1], out_axes=1)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, oracle(x.astype(np.float64)), rtol=5e-6, atol=1e-30)
    # eager runs the host kernels (float64 inside, rounded once), jit XLA's float32 expansion: a few ulps apart
    np.testing.assert_allclose(np.asarray(jit(f)(xp.asarray(x))), got, rtol=8 * np.finfo(np.float32).eps, atol=1e-37)


def test_operands_must_be_real_floats_of_one_dtype():
    with pytest.raises(TypeError, match="real floating operands of one dtype, got int32"):
        bind(SE.erfc_p, raw(np.arange(3, dtype=np.int32)))
    with pytest.raises(TypeError, match="got float32, float64"):
        bind(SE.yn_p, raw(np.ones(3, np.float32)), raw(np.ones(3)))
    with pytest.raises(TypeError, match="got complex128"):
        bind(SE.j0_p, raw(np.ones(3, complex)))
