"""transforms.random_mvn: multivariate_normal against scipy.stats, its derivatives against finite differences,
jit / vmap against eager and a Python loop, and its argument contract.

The distribution is checked through one-dimensional statistics with known laws, by test_random_dists's
16-key KS pattern (`draws`, `ks_ok`): the squared Mahalanobis distance (x - mean)^T cov^-1 (x - mean) is
chi-square(n), and a fixed projection w . x is normal(w . mean, w^T cov w); together they pin the mean and
the whole covariance.
"""
import numpy as np
import pytest
from scipy import stats

import array_namespace as xp
from finite_diff import central_diff
from test_random_dists import K, KEYS, N, draws, ks_ok, npa, out_shape, seed_of
from transforms import grad, jit, random, vmap

MEAN = np.array([1.0, -2.0, 0.5])
COV = np.array([[2.0, 0.6, -0.4], [0.6, 1.0, 0.3], [-0.4, 0.3, 0.5]])
W = np.array([0.3, -1.2, 0.7])
METHODS = ("cholesky", "eigh", "svd")


def projection_ok(zz, mean, cov):
    ks_ok(zz @ W, stats.norm(W @ mean, np.sqrt(W @ cov @ W)).cdf)


@pytest.mark.parametrize("method", METHODS)
def test_distribution_ks(method):
    zz = draws(lambda k, m, c: random.multivariate_normal(k, m, c, (N,), method=method), MEAN, COV,
               seed=seed_of("mvn", method))
    assert zz.shape == (KEYS, N, 3)
    d = zz - MEAN
    ks_ok(np.einsum("...i,ij,...j->...", d, np.linalg.inv(COV), d), stats.chi2(3).cdf)
    projection_ok(zz, MEAN, COV)


@pytest.mark.parametrize("method", ["eigh", "svd"])
def test_singular_covariance(method):
    a = np.array([[1.0, 0.0], [0.5, 1.0], [-1.0, 2.0]])
    cov = a @ a.T                                   # rank 2: samples lie in mean + span(a)
    null = np.cross(a[:, 0], a[:, 1])
    zz = draws(lambda k, m, c: random.multivariate_normal(k, m, c, (N,), method=method), MEAN, cov,
               seed=seed_of("mvn singular", method))
    assert np.abs((zz - MEAN) @ null).max() < 1e-7 * np.abs(zz).max()
    projection_ok(zz, MEAN, cov)


def test_float32_and_batched_parameters():
    means = np.stack([MEAN, -MEAN])
    covs = np.stack([COV, np.diag([0.5, 2.0, 1.0])])
    zz = draws(lambda k, m, c: random.multivariate_normal(k, m, c, (N // 2, 2), xp.float32), means, covs,
               seed=seed_of("mvn batched"))
    assert zz.shape == (KEYS, N // 2, 2, 3)
    for b in range(2):
        projection_ok(zz[:, :, b], means[b], covs[b])
    assert random.multivariate_normal(K, xp.asarray(MEAN), xp.asarray(COV), dtype=xp.float32).dtype == xp.float32


def test_not_factorable_gives_nan():
    bad = xp.asarray(np.diag([1.0, -1.0, 1.0]))
    m = xp.asarray(MEAN)
    assert np.isnan(npa(random.multivariate_normal(K, m, bad, (4,)))).all()                      # not PD
    assert np.isnan(npa(random.multivariate_normal(K, m, bad, (4,), method="eigh"))).any()       # sqrt(-1)


def test_jit_and_vmap_agree_with_eager_and_a_loop():
    f = lambda k, m, c: random.multivariate_normal(k, m, c, (5,), method="eigh")  # noqa: E731
    m, c = xp.asarray(MEAN), xp.asarray(COV)
    x = npa(f(K, m, c))
    np.testing.assert_allclose(npa(jit(f)(K, m, c)), x, rtol=1e-13, atol=1e-14)
    ms = np.stack([MEAN, MEAN + 1, MEAN * 2])
    cs = np.stack([COV, COV * 2, COV + np.eye(3)])
    ks = random.split(K, 3)
    loop = np.stack([npa(f(ks[i], xp.asarray(ms[i]), xp.asarray(cs[i]))) for i in range(3)])
    np.testing.assert_allclose(npa(vmap(f)(ks, xp.asarray(ms), xp.asarray(cs))), loop, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(npa(jit(vmap(f, in_axes=(None, 0, 0)))(K, xp.asarray(ms), xp.asarray(cs))),
                               np.stack([npa(f(K, xp.asarray(ms[i]), xp.asarray(cs[i]))) for i in range(3)]),
                               rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("method", METHODS)
def test_gradients_match_finite_differences(method):
    w = xp.asarray(np.linspace(-1.0, 1.0, 12).reshape(4, 3))

    def loss(m, c):
        return xp.sum(w * random.multivariate_normal(K, m, c, (4,), method=method) ** 2)
    m, c = xp.asarray(MEAN), xp.asarray(COV)
    gm, gc = grad(loss, argnums=(0, 1))(m, c)
    jl = jit(loss)
    np.testing.assert_allclose(npa(gm), central_diff(lambda v: float(jl(xp.asarray(v), c)), MEAN), rtol=1e-6)
    np.testing.assert_allclose(npa(gc), central_diff(lambda v: float(jl(m, xp.asarray(v))), COV),
                               rtol=1e-5, atol=1e-7)


def test_shapes_and_broadcasting():
    m, c = xp.asarray(MEAN), xp.asarray(COV)
    mvn = random.multivariate_normal
    assert out_shape(lambda k: mvn(k, m, c), K) == (3,)
    assert out_shape(lambda k: mvn(k, xp.asarray(np.zeros((2, 1, 3))), xp.stack([c] * 4)), K) == (2, 4, 3)
    assert out_shape(lambda k: mvn(k, m, xp.stack([c] * 4), (6, 4)), K) == (6, 4, 3)
    assert out_shape(lambda k: mvn(k, m, c, (0,)), K) == (0, 3)
    x = npa(mvn(K, xp.asarray(MEAN.astype(np.int64) * 0 + [1, 2, 3]), xp.asarray(np.eye(3, dtype=np.int64)), (2,)))
    assert x.dtype == np.float64 and x.shape == (2, 3)


@pytest.mark.parametrize("call,exc,msg", [
    (lambda m, c: random.multivariate_normal(xp.asarray([1, 2]), m, c), TypeError,
     "multivariate_normal: expected a PRNG key"),
    (lambda m, c: random.multivariate_normal(K, m, c, method="qr"), ValueError,
     "multivariate_normal: method must be one of"),
    (lambda m, c: random.multivariate_normal(K, m, c, dtype=xp.int32), TypeError,
     "multivariate_normal: dtype must be float32 or float64"),
    (lambda m, c: random.multivariate_normal(K, [1.0, 2.0, 3.0], c), TypeError,
     "multivariate_normal: mean must be a real"),
    (lambda m, c: random.multivariate_normal(K, m, xp.astype(c, xp.bool)), TypeError,
     "multivariate_normal: cov must be a real"),
    (lambda m, c: random.multivariate_normal(K, xp.asarray(1.0), c), ValueError,
     "multivariate_normal: mean must have at least 1 dimension"),
    (lambda m, c: random.multivariate_normal(K, m, m), ValueError,
     "multivariate_normal: cov must have at least 2 dimensions"),
    (lambda m, c: random.multivariate_normal(K, m, c[:2]), ValueError,
     r"multivariate_normal: cov must have shape \(\.\.\., 3, 3\)"),
    (lambda m, c: random.multivariate_normal(K, xp.stack([m, m]), xp.stack([c] * 3)), ValueError,
     "multivariate_normal: the batch shapes"),
    (lambda m, c: random.multivariate_normal(K, xp.stack([m, m]), c, (3,)), ValueError,
     r"do not broadcast to shape \(3,\)"),
    (lambda m, c: random.multivariate_normal(K, m, c, (-1,)), TypeError, "multivariate_normal: shape entries"),
])
def test_bad_arguments(call, exc, msg):
    m, c = xp.asarray(MEAN), xp.asarray(COV)
    with pytest.raises(exc, match=msg):
        call(m, c)
    with pytest.raises(exc, match=msg):
        jit(call)(m, c)
