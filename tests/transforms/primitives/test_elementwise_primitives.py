"""Elementwise primitives bound directly (no namespace function in between) against NumPy/scipy:
values in float32 and float64 over a grid with special values, eager, under jit and under vmap; the
jvp rule against central differences of the oracle, and jvp-of-jvp against its second differences.

For primitives the namespace reaches only indirectly (xp.special wrappers, derivative rules), so each
one's own rules are checked where a wrong sign or factor cannot hide behind another function.
test_rule_coverage.py's reach test counts DIRECT as oracle-tested."""
import numpy as np
import pytest
import scipy.special as sc

import array_namespace as xp
from transforms import jit, jvp, vmap
from transforms.core import bind
from transforms.primitives import elementwise as E

# No subnormal results: XLA on CPU flushes them to zero (tests/xla/test_host_kernels.py).
SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 1e-30, -1e-30, 1e-8, 30.0, -30.0, 1e30, -1e30, np.inf, -np.inf,
           np.nan]
POS_SPECIAL = [0.0, 1e-30, 1e-8, 0.25, 1.0, 7.5, 1e30, np.inf, -1.0, np.nan]


def _smooth(rng, n):
    return rng.uniform(-3.0, 3.0, n)


def _positive(rng, n):
    return rng.uniform(0.2, 4.0, n)


# primitive name -> (primitive, NumPy/scipy oracle, special values, sampler where it is smooth)
DIRECT = {
    "erf": (E.erf_p, sc.erf, SPECIAL, _smooth),
    "cbrt": (E.cbrt_p, np.cbrt, SPECIAL, lambda rng, n: np.where(rng.random(n) < 0.5, -1, 1) * _positive(rng, n)),
    "exp2": (E.exp2_p, np.exp2, SPECIAL + [1023.5, 1024.0, -1022.0, -1080.0], _smooth),
    "logistic": (E.logistic_p, sc.expit, SPECIAL + [-745.0, 40.0], _smooth),
    "rsqrt": (E.rsqrt_p, lambda x: 1.0 / np.sqrt(x), POS_SPECIAL, _positive),
}
TOL = {np.float32: dict(rtol=3e-6, atol=0.0), np.float64: dict(rtol=2e-14, atol=0.0)}


def _bind(prim):
    return lambda x: bind(prim, x._v)


def _values(name, dtype):
    prim, oracle, special, sample = DIRECT[name]
    x = np.concatenate([np.asarray(special), sample(np.random.default_rng(0), 40)]).astype(dtype)
    with np.errstate(all="ignore"):
        want = np.asarray(oracle(x.astype(np.float64))).astype(dtype)
    return prim, x, want


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", list(DIRECT))
def test_values_eager_jit_vmap(name, dtype):
    prim, x, want = _values(name, dtype)
    ax = xp.asarray(x)
    eager = np.asarray(bind(prim, ax._v))
    assert eager.dtype == dtype, f"{name}: {dtype.__name__} in, {eager.dtype} out"
    np.testing.assert_allclose(eager, want, equal_nan=True, err_msg=f"{name} eager", **TOL[dtype])
    np.testing.assert_allclose(np.asarray(jit(_bind(prim))(ax)), want, equal_nan=True, err_msg=f"{name} jit",
                               **TOL[dtype])
    mapped = vmap(_bind(prim))(xp.reshape(ax, (-1, 2)))
    np.testing.assert_allclose(np.asarray(mapped), want.reshape(-1, 2), equal_nan=True,
                               err_msg=f"{name} vmap", **TOL[dtype])


@pytest.mark.parametrize("name", list(DIRECT))
def test_jvp_first_and_second_order_vs_finite_differences(name):
    prim, oracle, _, sample = DIRECT[name]
    rng = np.random.default_rng(1)
    x, t = sample(rng, 8), rng.standard_normal(8)
    f = _bind(prim)
    out, tan = jvp(f, (xp.asarray(x),), (xp.asarray(t),))
    np.testing.assert_allclose(np.asarray(out), oracle(x), rtol=1e-13)
    h = 1e-6
    np.testing.assert_allclose(np.asarray(tan), t * (oracle(x + h) - oracle(x - h)) / (2 * h), rtol=1e-6, atol=1e-9,
                               err_msg=f"{name}: jvp")
    # jvp of (x -> jvp(f)(x; 1)) is f''(x) t: against the second central difference of the oracle
    df = lambda v: jvp(f, (v,), (xp.ones_like(v),))[1]
    _, second = jvp(df, (xp.asarray(x),), (xp.asarray(t),))
    h = 1e-4
    want = t * (oracle(x + h) - 2 * oracle(x) + oracle(x - h)) / h ** 2
    np.testing.assert_allclose(np.asarray(second), want, rtol=1e-5, atol=1e-7, err_msg=f"{name}: second order")
