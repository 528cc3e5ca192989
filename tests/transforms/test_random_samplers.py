"""transforms.random_samplers: the raw index helpers and the distributions, against oracles.

The raw helpers (stable argsort, descending keys, take, searchsorted) are compared with NumPy
on grids with ties, NaNs and empty operands; the distributions are compared with scipy.stats
(Kolmogorov-Smirnov and chi-square tests at fixed keys, so the outcome is deterministic) and
with exact enumerations (every permutation of 3 items equally likely, Gumbel top-k's first pick
follows p). Derivatives through the index samplers move cotangents as NumPy indexing says.
"""
import itertools

import numpy as np
import pytest
from scipy import stats

import array_namespace as xp
from transforms import grad, jit, random, vmap
from transforms import random_samplers as RS
from transforms.api_util import box

N = 50_000


def raw(a, dtype=None):
    return xp.asarray(np.asarray(a, dtype))._v


def npv(v):
    return np.asarray(box(v))


# ------------------------------------------------------------------------ raw helpers

@pytest.mark.parametrize("vals", [[3.0, 1.0, 2.0, 1.0, 3.0, 0.0], [np.nan, 1.0, -np.inf, np.nan, 0.0, -0.0],
                                  [5], list(range(7, -1, -1))])
def test_argsort_is_numpys_stable_argsort(vals):
    v = np.asarray(vals, np.float64 if isinstance(vals[0], float) else np.int64)
    np.testing.assert_array_equal(npv(RS.argsort(raw(v))), np.argsort(v, kind="stable"))


@pytest.mark.parametrize("v", [np.array([2.0, -1.0, 2.0, np.nan, 7.0]), np.array([3, -2, 3, 0, 9], np.int32),
                               np.array([7, 0, 255, 7], np.uint8)])
def test_descending_key_orders_descending_stably_nans_last(v):
    got = npv(RS.argsort(RS.descending(raw(v))))
    # oracle: stable ascending sort of (isnan, -value) pairs, i.e. descending by value, NaNs last
    order = sorted(range(len(v)), key=lambda i: (bool(np.isnan(v[i])) if v.dtype.kind == "f" else False,
                                                  -float(v[i]) if not (v.dtype.kind == "f" and np.isnan(v[i])) else 0))
    np.testing.assert_array_equal(got, order)


@pytest.mark.parametrize("shape,axis", [((5,), 0), ((3, 4), 0), ((3, 4), 1), ((2, 3, 4), 1), ((2, 0, 3), 2)])
def test_take_matches_numpy(shape, axis):
    x = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape) * 1.5
    n = shape[axis]
    for idx in (np.arange(n)[::-1], np.array([0] * 3) if n else np.zeros(0, np.int64), np.zeros(0, np.int64)):
        if len(idx) and n == 0:
            continue
        got = npv(RS.take(raw(x), raw(idx, np.int64), axis))
        np.testing.assert_array_equal(got, np.take(x, idx, axis=axis))


@pytest.mark.parametrize("a,v", [([0.1, 0.3, 0.3, 0.6, 1.0], [0.0, 0.1, 0.3, 0.5, 1.0, 1.5, 0.3]),
                                 ([1.0], [0.5, 1.0, 2.0]), ([0.0, 0.0, 0.0], [0.0, -1.0, 1.0]),
                                 ([-np.inf, -0.0, 2.0, np.inf, np.nan, np.nan], [np.nan, 0.0, -np.inf, np.inf, 3.0]),
                                 ([-3.5, -1.0, -0.0, 0.0, 1e-300, 5.0], [-2.0, -1.0, -0.0, 0.0, -1e300, -4.0, 1e-301]),
                                 (np.float32([-3.5, -1.0, 0.0, -0.0, 2.0]), np.float32([-1.0, -0.0, -5.0, 2.0, np.nan]))])
def test_searchsorted_right_matches_numpy(a, v):
    a, v = np.asarray(a), np.asarray(v)
    np.testing.assert_array_equal(npv(RS.searchsorted_right(raw(a), raw(v))), np.searchsorted(a, v, side="right"))


@pytest.mark.parametrize("n", [1, 2, 7, 8, 40, 1000])
def test_searchsorted_right_random_grid(n):
    rng = np.random.default_rng(3)
    a = np.sort(rng.integers(0, 20, n)).astype(np.float32)
    v = rng.integers(-2, 22, 60).astype(np.float32)
    np.testing.assert_array_equal(npv(RS.searchsorted_right(raw(a), raw(v))), np.searchsorted(a, v, side="right"))


# ------------------------------------------------------------------ continuous samplers

def ks_ok(sample, cdf):
    return stats.kstest(sample, cdf).pvalue > 1e-3


@pytest.mark.parametrize("dtype", [xp.float64, xp.float32])
def test_uniform_with_bounds_is_uniform(dtype):
    u = np.asarray(jit(lambda k: random.uniform(k, (N,), dtype, minval=-2.0, maxval=5.0))(random.key(21)))
    assert u.dtype == np.dtype(dtype) and u.min() >= -2.0 and u.max() < 5.0
    assert ks_ok(u.astype(np.float64), stats.uniform(loc=-2.0, scale=7.0).cdf)


@pytest.mark.parametrize("dtype", [xp.float64, xp.float32])
def test_normal_is_normal(dtype):
    z = np.asarray(jit(lambda k: random.normal(k, (N,), dtype))(random.key(22))).astype(np.float64)
    assert ks_ok(z, stats.norm.cdf)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_normal_quantile_matches_scipy_ndtri(dtype):
    """normal's transform on the midpoints of uniform's grid, the grid's ends included: within a few ulp of
    scipy's ndtri (itself within ~2 ulp), exactly antisymmetric about 1/2."""
    from scipy import special
    nm = np.finfo(dtype).nmant
    j = np.concatenate([np.arange(500), 2 ** nm - 1 - np.arange(500),
                        np.random.default_rng(5).integers(0, 2 ** nm, 20000)]).astype(np.float64)
    u = ((2 * j + 1) * 2.0 ** -(nm + 1)).astype(dtype)
    assert np.array_equal(u.astype(np.float64), (2 * j + 1) * 2.0 ** -(nm + 1))     # exact in the dtype
    z = npv(jit(lambda v: box(RS.normal_quantile(v._v)))(xp.asarray(u))._v)
    assert z.dtype == dtype
    np.testing.assert_allclose(z, special.ndtri(u.astype(np.float64)), rtol=6 * np.finfo(dtype).eps, atol=0)
    mirror = npv(jit(lambda v: box(RS.normal_quantile(v._v)))(xp.asarray((1 - u.astype(np.float64)).astype(dtype)))._v)
    np.testing.assert_array_equal(mirror, -z)


def test_log_pos_within_one_ulp_of_log():
    """The samplers' float64 log (raw_ops.log_pos, a vectorisable polynomial) against an 80-bit log over the
    positive normal range, densely near 1 and the sqrt(2) seams of its reduction; eager == jit; float32 is log."""
    from transforms.primitives.raw_ops import log_pos
    rng = np.random.default_rng(7)
    fi = np.finfo(np.float64)
    r2 = np.array([np.sqrt(2.0), np.sqrt(0.5)])
    seams = np.concatenate([r2, np.nextafter(r2, 0), np.nextafter(r2, 2)])
    x = np.concatenate([np.exp(rng.uniform(np.log(fi.tiny), np.log(fi.max), 20000)), rng.uniform(0.5, 2.0, 20000),
                        1 + np.arange(-300, 300) * fi.eps, seams, seams * 2.0 ** 700, seams * 2.0 ** -1000,
                        [fi.tiny, 1.0, 2.0, 0.5, fi.max, 1e-300, 3.0]])
    ref = np.log(x.astype(np.longdouble))
    got = npv(jit(lambda v: box(log_pos(v._v)))(xp.asarray(x))._v)
    assert (got[x == 1.0] == 0.0).all()
    ulp = np.abs(got - ref) / np.spacing(np.abs(ref).astype(np.float64))
    assert ulp[x != 1.0].max() < 1.0
    np.testing.assert_array_equal(npv(log_pos(raw(x[:500]))), got[:500])
    x32 = np.asarray([1e-30, 0.3, 1.0, 7.0], np.float32)
    np.testing.assert_allclose(npv(log_pos(raw(x32))), np.log(x32), rtol=2e-7)


@pytest.mark.parametrize("dtype", [xp.float64, xp.float32])
def test_gumbel_is_gumbel(dtype):
    g = np.asarray(jit(lambda k: random.gumbel(k, (N,), dtype))(random.key(23))).astype(np.float64)
    assert np.isfinite(g).all()
    assert ks_ok(g, stats.gumbel_r.cdf)


def test_bernoulli_binomial_count():
    b = np.asarray(jit(lambda k: random.bernoulli(k, 0.27, (N,)))(random.key(24)))
    assert stats.binomtest(int(b.sum()), N, 0.27).pvalue > 1e-3


# -------------------------------------------------------------------- discrete samplers

def chi2_ok(counts, probs):
    counts = np.asarray(counts, np.float64)
    return stats.chisquare(counts, counts.sum() * np.asarray(probs)).pvalue > 1e-3


def test_randint_uniform_over_span():
    r = np.asarray(jit(lambda k: random.randint(k, (N,), -4, 9))(random.key(25)))
    assert chi2_ok(np.bincount(r + 4, minlength=13), np.full(13, 1 / 13))


def test_every_permutation_of_three_equally_likely():
    perms = np.asarray(jit(vmap(lambda k: random.permutation(k, 3)))(random.split(random.key(26), 6000)))
    index = {p: i for i, p in enumerate(itertools.permutations(range(3)))}
    counts = np.bincount([index[tuple(p)] for p in perms.tolist()], minlength=6)
    assert chi2_ok(counts, np.full(6, 1 / 6))


def test_choice_with_p_frequencies():
    p = np.array([0.05, 0.5, 0.0, 0.3, 0.15])
    s = np.asarray(jit(lambda k: random.choice(k, 5, (N,), p=xp.asarray(p)))(random.key(27)))
    counts = np.bincount(s, minlength=5)
    assert counts[2] == 0
    assert chi2_ok(counts[p > 0], p[p > 0])


def test_choice_without_replacement_first_pick_follows_p():
    p = np.array([0.1, 0.6, 0.3])
    first = np.asarray(jit(vmap(lambda k: random.choice(k, 3, (2,), replace=False, p=xp.asarray(p))))(
        random.split(random.key(28), 6000)))
    assert np.all(first[:, 0] != first[:, 1])
    assert chi2_ok(np.bincount(first[:, 0], minlength=3), p)
    # the second pick, given the first: p renormalised over the rest
    pair = np.bincount(first[:, 0] * 3 + first[:, 1], minlength=9)
    want = np.array([p[i] * p[j] / (1 - p[i]) if i != j else 0 for i in range(3) for j in range(3)])
    assert chi2_ok(pair[want > 0], want[want > 0])


def test_categorical_matches_softmax_along_axis_0():
    logits = np.array([[0.5, -1.0], [2.0, 0.0], [-0.5, 1.0]])        # categories along axis 0
    c = np.asarray(jit(lambda k: random.categorical(k, xp.asarray(logits), axis=0, shape=(N // 2, 2)))(
        random.key(29)))
    for j in range(2):
        p = np.exp(logits[:, j]) / np.exp(logits[:, j]).sum()
        assert chi2_ok(np.bincount(c[:, j], minlength=3), p)


def test_categorical_empty_batch_and_no_categories():
    assert random.categorical(random.key(0), xp.zeros((0, 3))).shape == (0,)
    assert random.categorical(random.key(0), xp.zeros((3,)), shape=(0,)).shape == (0,)
    with pytest.raises(ValueError, match="no categories"):
        random.categorical(random.key(0), xp.zeros((2, 0)))


def test_axis_errors():
    with pytest.raises(IndexError, match="permutation: axis 2 is out of bounds"):
        random.permutation(random.key(0), xp.zeros((2, 2)), axis=2)
    with pytest.raises(TypeError, match="choice: axis must be an int"):
        random.choice(random.key(0), xp.zeros((2, 2)), (1,), axis=0.5)
    np.testing.assert_array_equal(np.asarray(random.permutation(random.key(1), xp.reshape(xp.arange(6.0), (2, 3)),
                                                                axis=-1)),
                                  np.asarray(random.permutation(random.key(1), xp.reshape(xp.arange(6.0), (2, 3)),
                                                                axis=1)))


# ------------------------------------------------------------------------- derivatives

def test_grad_through_permutation_and_choice_moves_cotangents():
    k = random.key(30)
    x = np.arange(1.0, 7.0)
    w = np.arange(10.0, 16.0) ** 2
    perm = np.asarray(random.permutation(k, 6))
    g = np.asarray(grad(lambda v: xp.sum(random.permutation(k, v) * xp.asarray(w)))(xp.asarray(x)))
    want = np.zeros(6)
    want[perm] = w                                   # d/dx sum(x[perm] * w) = scatter of w at perm
    np.testing.assert_array_equal(g, want)
    idx = np.asarray(random.choice(k, 6, (4,)))
    gc = np.asarray(grad(lambda v: xp.sum(random.choice(k, v, (4,)) ** 2))(xp.asarray(x)))
    wc = np.zeros(6)
    np.add.at(wc, idx, 2 * x[idx])
    np.testing.assert_allclose(gc, wc, rtol=1e-15)
