"""transforms.random_dists: exponential ... poisson against scipy.stats, and their argument contract.

Distribution tests draw KEYS independent keys of N samples in one jitted vmap (parameters passed as
array arguments, so one compile serves several parameter values) and require, as test_random.py's
normal test does: each key's KS p-value above 1% / KEYS, the KEYS p-values uniform at 1%, and the pooled
sample at 1%. Discrete samplers use a chi-square test on binned counts.
"""
import zlib

import numpy as np
import pytest
from scipy import stats

import array_namespace as xp
from transforms import jit, make_jaxpr, random, vmap

KEYS, N = 16, 10_000
K = random.key(7)


def npa(x):
    return np.asarray(x)


def seed_of(*what):
    """A fixed seed per test case (crc32 of its description), so that the monotone maps of one uniform stream
    (exponential, laplace, logistic, cauchy) are not all tested on the same numbers."""
    return zlib.crc32(repr(what).encode())


def draws(f, *params, seed, keys=KEYS):
    """(keys, N) samples: jit(vmap(f over keys, params shared))(split(key(seed), keys), *params); checks that
    its first row is f's eager result on the first key (jit and vmap change no number, up to the few ulp a
    differently fused executable may give -- see transforms.random; integers exactly)."""
    ks = random.split(random.key(seed), keys)
    ps = [xp.asarray(p) for p in params]
    zz = npa(jit(vmap(f, in_axes=(0,) + (None,) * len(params)))(ks, *ps))
    eager = npa(f(ks[0], *ps))
    if zz.dtype.kind == "f":
        np.testing.assert_allclose(zz[0], eager, rtol=1e-13 if zz.dtype == np.float64 else 1e-6)
    else:
        np.testing.assert_array_equal(zz[0], eager)
    return zz.astype(np.float64)


def ks_ok(zz, cdf):
    ps = [stats.kstest(row, cdf).pvalue for row in zz]
    assert min(ps) > 0.01 / len(ps), ps
    assert stats.kstest(ps, "uniform").pvalue > 0.01, ps
    assert stats.kstest(zz.ravel(), cdf).pvalue > 0.01


# ------------------------------------------------------------------------- distributions

@pytest.mark.parametrize("name,dist", [("exponential", stats.expon), ("laplace", stats.laplace),
                                       ("logistic", stats.logistic), ("cauchy", stats.cauchy)])
def test_standard_samplers_ks(name, dist):
    ks_ok(draws(lambda k: getattr(random, name)(k, (N,)), seed=seed_of(name)), dist.cdf)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_standard_samplers_are_their_inverse_cdf_of_uniform(dtype):
    """exponential, laplace and logistic map the uniform stream's grid midpoint u (uniform's sample plus half a
    step) through their inverse CDF within 2 ulp of max(|x|, 1), against an 80-bit reference: the vectorised
    log of 1 - u (exact on the grid) they use is as accurate as log1p(-u). Eager and jit alike."""
    k, n = random.key(seed_of("inverse cdf", dtype)), 20000
    u = npa(random.uniform(k, (n,), dtype)).astype(np.longdouble) + np.longdouble(2.0) ** -(np.finfo(dtype).nmant + 1)
    x = 2 * u - 1
    refs = {"exponential": -np.log1p(-u), "laplace": -np.sign(x) * np.log1p(-np.abs(x)),
            "logistic": np.log(u / (1 - u))}
    jitted = jit(lambda k: {name: getattr(random, name)(k, (n,), dtype) for name in refs})(k)   # (one compile)
    for name, ref in refs.items():
        for got in (npa(getattr(random, name)(k, (n,), dtype)), npa(jitted[name])):
            assert got.dtype == dtype
            tol = 2 * np.spacing(np.maximum(np.abs(ref), 1).astype(dtype)).astype(np.longdouble)
            assert (np.abs(got - ref) <= tol).all(), (name, dtype, float(np.max(np.abs(got - ref) / tol)))


def test_float32_samplers_ks():
    ks_ok(draws(lambda k: random.exponential(k, (N,), xp.float32), seed=seed_of("exp32")), stats.expon.cdf)
    ks_ok(draws(lambda k, a: random.gamma(k, a, (N,), xp.float32), np.float32(0.7), seed=seed_of("gamma32")),
          stats.gamma(0.7).cdf)


@pytest.mark.parametrize("lo,hi", [(-1.0, 2.0), (5.0, 7.0), (-np.inf, -8.0), (0.5, np.inf), (-0.1, 0.1)])
def test_truncated_normal_ks(lo, hi):
    zz = draws(lambda k, a, b: random.truncated_normal(k, a, b, (N,)), lo, hi, seed=seed_of(lo, hi))
    assert ((zz > lo) & (zz < hi)).all()
    ks_ok(zz, stats.truncnorm(lo, hi).cdf)


def test_truncated_normal_far_tail():
    x = npa(random.truncated_normal(K, 30.0, 31.0, (N,)))     # (the eager program draws() compiled above)
    assert ((x > 30.0) & (x < 31.0)).all()
    assert abs(x.mean() - stats.truncnorm(30.0, 31.0).mean()) < 0.003


@pytest.mark.parametrize("a", [0.2, 1.0, 4.5, 300.0])
def test_gamma_ks(a):
    ks_ok(draws(lambda k, a: random.gamma(k, a, (N,)), a, seed=seed_of(a)), stats.gamma(a).cdf)


@pytest.mark.parametrize("a,b", [(0.5, 0.5), (2.0, 5.0), (0.05, 3.0)])
def test_beta_ks(a, b):
    zz = draws(lambda k, a, b: random.beta(k, a, b, (N,)), a, b, seed=seed_of(a, b))
    assert ((zz >= 0) & (zz <= 1)).all()
    ks_ok(zz, stats.beta(a, b).cdf)


def test_dirichlet_marginals_ks():
    alpha = np.array([0.5, 2.0, 3.5])
    x = npa(jit(vmap(lambda k, al: random.dirichlet(k, al, (N,)), in_axes=(0, None)))(
        random.split(random.key(3), KEYS), xp.asarray(alpha)))
    np.testing.assert_allclose(x.sum(-1), 1.0, rtol=1e-12)
    for i in range(3):      # component i of Dirichlet(alpha) is Beta(alpha_i, sum(alpha) - alpha_i)
        ks_ok(x[..., i], stats.beta(alpha[i], alpha.sum() - alpha[i]).cdf)


@pytest.mark.parametrize("df", [0.7, 3.0, 30.0])
def test_chisquare_and_t_ks(df):
    ks_ok(draws(lambda k, d: random.chisquare(k, d, (N,)), df, seed=seed_of("chi2", df)), stats.chi2(df).cdf)
    ks_ok(draws(lambda k, d: random.t(k, d, (N,)), df, seed=seed_of("t", df)), stats.t(df).cdf)


@pytest.mark.parametrize("lam", [0.3, 3.0, 9.9, 10.0, 40.0, 1e4])
def test_poisson_chi_square(lam):
    x = draws(lambda k, m: random.poisson(k, m, (N,)), lam, seed=seed_of(lam)).ravel()
    assert x.dtype == np.float64 and (x == np.round(x)).all() and x.min() >= 0
    dist = stats.poisson(lam)
    lo, hi = int(dist.ppf(1e-4)), int(dist.ppf(1 - 1e-4))
    edges = np.arange(lo, hi + 2) - 0.5
    edges[0], edges[-1] = -np.inf, np.inf
    obs = np.histogram(x, edges)[0]
    exp = np.diff(np.r_[0.0, dist.cdf(np.arange(lo, hi)), 1.0]) * x.size      # P(bin): <= lo, lo + 1, ..., >= hi
    keep = exp >= 5
    o = np.r_[obs[keep], obs[~keep].sum()]
    e = np.r_[exp[keep], exp[~keep].sum()]
    o, e = (o, e) if e[-1] > 0 else (o[:-1], e[:-1])
    assert stats.chisquare(o, e).pvalue > 0.01


def test_poisson_broadcast_rates():
    """Rates of shape (3, 1) broadcast along N: PTRS reads each queued entry's rate at its flat index (and
    Knuth takes the rows below 10), so a wrong index mapping would move a row's moments to another row's."""
    lam = np.array([[12.0], [3.0], [1000.0]])
    x = npa(random.poisson(K, xp.asarray(lam), (3, N)))
    np.testing.assert_array_equal(npa(jit(lambda k, m: random.poisson(k, m, (3, N)))(K, xp.asarray(lam))), x)
    m, v, lam = x.mean(1), x.var(1), lam[:, 0]
    assert (np.abs(m - lam) < 5 * np.sqrt(lam / N)).all(), m
    assert (np.abs(v - lam) < 5 * lam * np.sqrt(2 / N)).all(), v


def test_poisson_dtype_and_zero_rate():
    x = random.poisson(K, xp.asarray([0.0, 2.0]), (4, 2), xp.int32)    # ((3, 2) compiles several times longer)
    assert x.dtype == xp.int32 and x.shape == (4, 2) and (npa(x)[:, 0] == 0).all()


def test_rademacher_frequency():
    x = npa(random.rademacher(K, (N,)))
    assert x.dtype == np.int64 and set(np.unique(x)) == {-1, 1}
    assert stats.binomtest(int((x == 1).sum()), N).pvalue > 0.01
    assert random.rademacher(K, (3,), xp.float32).dtype == xp.float32


# --------------------------------------------------------------- shapes, broadcasting, keys

SAMPLERS = {   # name -> f(key, shape, dtype) with scalar parameters
    "exponential": lambda k, s, d: random.exponential(k, s, d),
    "laplace": lambda k, s, d: random.laplace(k, s, d),
    "logistic": lambda k, s, d: random.logistic(k, s, d),
    "cauchy": lambda k, s, d: random.cauchy(k, s, d),
    "truncated_normal": lambda k, s, d: random.truncated_normal(k, -1.0, 0.5, s, d),
    "gamma": lambda k, s, d: random.gamma(k, 0.8, s, d),
    "beta": lambda k, s, d: random.beta(k, 0.8, 2.0, s, d),
    "chisquare": lambda k, s, d: random.chisquare(k, 2.5, s, d),
    "t": lambda k, s, d: random.t(k, 2.5, s, d),
}


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_shape_dtype_determinism(name):
    f = SAMPLERS[name]
    (aval,) = make_jaxpr(lambda k: f(k, (2, 3), xp.float32))(K).out_avals   # (traced only: no compile)
    assert tuple(aval.shape) == (2, 3) and aval.dtype == np.float32
    # (N samples: draws() compiled the eager program of that shape for the tests above; this one reuses it)
    a, b = npa(f(K, (N,), xp.float64)), npa(f(K, (N,), xp.float64))
    assert a.dtype == np.float64 and np.isfinite(a).all()
    np.testing.assert_array_equal(a, b)                                   # same key, same numbers
    assert not np.array_equal(a, npa(f(random.fold_in(K, 1), (N,), xp.float64)))
    # (jit and vmap against eager: in draws(), on every distribution test)


def test_empty_and_scalar_shapes():
    assert random.gamma(K, 2.0, ()).shape == () and random.gamma(K, 2.0, (0, 2)).shape == (0, 2)
    assert random.exponential(K, ()).shape == () and random.poisson(K, 1.0, (0,)).shape == (0,)


def test_rademacher_exact_under_jit_and_vmap():
    f = lambda k: random.rademacher(k, (4, 3))  # noqa: E731
    x = npa(f(K))
    np.testing.assert_array_equal(npa(jit(f)(K)), x)
    ks = random.split(K, 3)
    np.testing.assert_array_equal(npa(vmap(f)(ks)), np.stack([npa(f(k)) for k in ks]))


def out_shape(f, *args):
    """f's result shape, by tracing only (no compile)."""
    (aval,) = make_jaxpr(f)(*args).out_avals
    return tuple(aval.shape)


def test_parameter_broadcasting():
    a = xp.asarray([0.5, 2.0, 10.0])
    g = random.gamma(K, a, (4000, 3))
    assert g.shape == (4000, 3)
    np.testing.assert_allclose(npa(g).mean(0), [0.5, 2.0, 10.0], rtol=0.1)
    assert out_shape(lambda k: random.gamma(k, a), K) == (3,)                       # shape None: a's shape
    assert out_shape(lambda k: random.beta(k, xp.asarray([[1.0], [2.0]]), a), K) == (2, 3)   # a, b broadcast
    assert out_shape(lambda k: random.truncated_normal(k, xp.asarray([-1.0, 0.0]), 1.0, (5, 2)), K) == (5, 2)
    assert out_shape(lambda k: random.poisson(k, a), K) == (3,)
    assert out_shape(lambda k: random.t(k, a, (2, 3)), K) == (2, 3)
    assert out_shape(lambda k: random.dirichlet(k, xp.asarray([[1.0, 1.0], [5.0, 0.5]]), (4, 2)), K) == (4, 2, 2)
    assert out_shape(lambda k: random.dirichlet(k, xp.asarray([1.0, 2.0, 3.0])), K) == (3,)
    with pytest.raises(ValueError, match="gamma: a of shape"):
        random.gamma(K, a, (4, 2))
    with pytest.raises(ValueError, match="beta: the parameters' shapes"):
        random.beta(K, xp.asarray([1.0, 2.0]), a)
    with pytest.raises(ValueError, match="dirichlet: alpha of shape"):
        random.dirichlet(K, xp.asarray([[1.0, 1.0], [5.0, 0.5]]), (3,))


def test_invalid_array_parameters_give_nan_or_minus_one():
    # (8 entries: XLA's CPU compile of these rejection loops takes several times longer at 4 or 5 elements)
    g = npa(random.gamma(K, xp.asarray([-1.0, 0.0, -0.0, np.nan, -np.inf, 2.0, 0.3, np.inf])))
    assert np.isnan(g[:5]).all() and np.isfinite(g[5:7]).all() and (g[5:7] > 0).all() and g[7] == np.inf
    assert np.isnan(npa(random.truncated_normal(K, xp.asarray([1.0, 0.0]), xp.asarray([1.0, 1.0])))[0])
    lam = xp.asarray([-1.0, np.nan, np.inf, -np.inf, -1e-300, 0.0, -0.0, 0.0])
    np.testing.assert_array_equal(npa(random.poisson(K, lam)), [-1, -1, -1, -1, -1, 0, 0, 0])


@pytest.mark.parametrize("call,exc,msg", [
    (lambda: random.exponential(xp.asarray([1, 2]), (3,)), TypeError, "exponential: expected a PRNG key"),
    (lambda: random.gamma(random.split(K, 2), 1.0), TypeError, "batch of keys"),
    (lambda: random.laplace(K, (-1,)), TypeError, "laplace: shape entries"),
    (lambda: random.cauchy(K, (2,), xp.int32), TypeError, "cauchy: dtype must be float32 or float64"),
    (lambda: random.gamma(K, 1.0, (2,), xp.int64), TypeError, "gamma: dtype"),
    (lambda: random.poisson(K, 1.0, (2,), xp.float64), TypeError, "poisson: dtype must be an integer"),
    (lambda: random.rademacher(K, (2,), xp.bool), TypeError, "rademacher: dtype"),
    (lambda: random.gamma(K, -1.0), ValueError, "gamma: a must be > 0"),
    (lambda: random.beta(K, 1.0, 0.0), ValueError, "beta: b must be > 0"),
    (lambda: random.t(K, 0), ValueError, "t: df must be > 0"),
    (lambda: random.chisquare(K, -2.0), ValueError, "chisquare: df must be > 0"),
    (lambda: random.poisson(K, -0.5), ValueError, "poisson: lam must be finite and >= 0"),
    (lambda: random.poisson(K, float("inf")), ValueError, "poisson: lam must be finite"),
    (lambda: random.truncated_normal(K, 1.0, 1.0), ValueError, "truncated_normal: lower must be below upper"),
    (lambda: random.gamma(K, True), TypeError, "gamma: a must be a number, got bool"),
    (lambda: random.gamma(K, "1"), TypeError, "gamma: a must be a number or an array"),
    (lambda: random.dirichlet(K, 1.0), TypeError, "dirichlet: alpha must be a real array"),
    (lambda: random.dirichlet(K, xp.asarray(1.0)), TypeError, "dirichlet: alpha must be a real array"),
])
def test_bad_arguments(call, exc, msg):
    with pytest.raises(exc, match=msg):
        call()


def test_bad_arguments_raise_the_same_under_jit():
    with pytest.raises(TypeError, match="gamma: dtype"):
        jit(lambda k: random.gamma(k, 1.0, (2,), xp.int32))(K)
    with pytest.raises(ValueError, match="gamma: a of shape"):
        jit(lambda k, a: random.gamma(k, a, (4, 2)))(K, xp.asarray([1.0, 2.0, 3.0]))
