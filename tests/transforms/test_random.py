"""transforms.random: Threefry-2x32 keys and distributions.

Known answers against the published Threefry-2x32 (20 rounds) vectors and a NumPy oracle;
same numbers eagerly, under jit and under vmap; order independence; statistical checks
with fixed seeds; clear TypeErrors for non-keys; the bitcast_convert_type primitive.
"""
import math

import numpy as np
import pytest
from scipy import stats

import array_namespace as xp
from transforms import grad, jit, jvp, make_jaxpr, random, vmap
from transforms.primitives import bits as B

# ------------------------------------------------------------------------ NumPy oracle

_ROT = (13, 15, 26, 6, 17, 29, 16, 24)


def np_threefry(k0, k1, c0, c1):
    """Threefry-2x32, 20 rounds, in NumPy (uint32 wraps), written from the Random123 spec."""
    u = np.uint32
    with np.errstate(over="ignore"):
        k0, k1 = u(k0), u(k1)
        ks = [k0, k1, u(k0 ^ k1 ^ u(0x1BD11BDA))]
        x0 = np.asarray(c0, u) + ks[0]
        x1 = np.asarray(c1, u) + ks[1]
        for r in range(20):
            x0 = x0 + x1
            s = _ROT[r % 8]
            x1 = ((x1 << u(s)) | (x1 >> u(32 - s))) ^ x0
            if r % 4 == 3:
                i = r // 4 + 1
                x0 = x0 + ks[i % 3]
                x1 = x1 + ks[(i + 1) % 3] + u(i)
    return x0, x1


# (key0, key1, ctr0, ctr1) -> (out0, out1): Random123 kat_vectors, threefry2x32_20
KAT = [((0x00000000, 0x00000000), (0x00000000, 0x00000000), (0x6b200159, 0x99ba4efe)),
       ((0xffffffff, 0xffffffff), (0xffffffff, 0xffffffff), (0x1cb996fc, 0xbb002be7)),
       ((0x13198a2e, 0x03707344), (0x243f6a88, 0x85a308d3), (0xc4923a9c, 0x483df7a0))]


def key_of(k0, k1):
    return xp.asarray(np.array([k0, k1], np.uint32))


def npa(x):
    return np.asarray(x)


@pytest.mark.parametrize("k,c,want", KAT)
def test_threefry_known_answers(k, c, want):
    assert [int(v) for v in np_threefry(*k, *c)] == list(want)       # the oracle itself
    out = random.threefry2x32(key_of(*k), xp.asarray(np.array(c, np.uint32).reshape(2, 1)))
    assert npa(out).ravel().tolist() == list(want)
    jout = jit(random.threefry2x32)(key_of(*k), xp.asarray(np.array(c, np.uint32).reshape(2, 1)))
    assert npa(jout).ravel().tolist() == list(want)


def test_threefry_matches_oracle_on_random_inputs():
    rng = np.random.default_rng(1)
    c = rng.integers(0, 2 ** 32, size=(2, 3, 5), dtype=np.uint32)
    for k0, k1 in rng.integers(0, 2 ** 32, size=(3, 2), dtype=np.uint32):
        out = npa(random.threefry2x32(key_of(k0, k1), xp.asarray(c)))
        want = np_threefry(k0, k1, c[0], c[1])
        np.testing.assert_array_equal(out[0], want[0])
        np.testing.assert_array_equal(out[1], want[1])


def test_streams_follow_the_documented_construction():
    k0, k1 = 0x12345678, 0x9abcdef0
    k = key_of(k0, k1)
    x0, x1 = np_threefry(k0, k1, np.zeros(4, np.uint32), np.arange(4, dtype=np.uint32))
    np.testing.assert_array_equal(npa(random.bits(k, (7,))), np.stack([x0, x1], -1).ravel()[:7])
    want64 = (x0.astype(np.uint64) << np.uint64(32)) | x1.astype(np.uint64)
    np.testing.assert_array_equal(npa(random.bits(k, (2, 2), xp.uint64)), want64.reshape(2, 2))
    s0, s1 = np_threefry(k0, k1, np.ones(3, np.uint32), np.arange(3, dtype=np.uint32))
    np.testing.assert_array_equal(npa(random.split(k, 3)), np.stack([s0, s1], -1))
    d = 5 + (7 << 32)
    a0, a1 = np_threefry(k0, k1, 2, 5)
    f0, f1 = np_threefry(a0, a1, 3, 7)
    np.testing.assert_array_equal(npa(random.fold_in(k, d)), [f0, f1])


def test_key_from_seed():
    np.testing.assert_array_equal(npa(random.key(0)), [0, 0])
    np.testing.assert_array_equal(npa(random.key(42)), [0, 42])
    np.testing.assert_array_equal(npa(random.key(2 ** 40 + 3)), [2 ** 8, 3])
    np.testing.assert_array_equal(npa(random.key(-1)), [2 ** 32 - 1, 2 ** 32 - 1])
    for seed, dt in ((7, xp.int64), (-3, xp.int32), (9, xp.uint8), (2 ** 63 + 5, xp.uint64)):
        np.testing.assert_array_equal(npa(random.key(xp.asarray(seed, dtype=dt))), npa(random.key(seed)))
    ks = vmap(random.key)(xp.arange(4))
    np.testing.assert_array_equal(npa(ks), np.stack([npa(random.key(i)) for i in range(4)]))
    traced = jit(lambda s: random.uniform(random.key(s), (3,)))(xp.asarray(5))
    same(traced, random.uniform(random.key(5), (3,)))
    k = random.key(3)
    assert k.dtype == xp.uint32 and k.shape == (2,) and random.is_key(k)


# -------------------------------------------------------------- determinism / transforms

K = random.key(1234)

SAMPLERS = {
    "bits": lambda k: random.bits(k, (3, 2)),
    "bits64": lambda k: random.bits(k, (5,), xp.uint64),
    "uniform": lambda k: random.uniform(k, (4,), minval=-2.0, maxval=3.0),
    "uniform32": lambda k: random.uniform(k, (3,), xp.float32),
    "normal": lambda k: random.normal(k, (5,)),
    "gumbel": lambda k: random.gumbel(k, (3,)),
    "bernoulli": lambda k: random.bernoulli(k, 0.3, (6,)),
    "randint": lambda k: random.randint(k, (6,), -5, 9),
    "permutation": lambda k: random.permutation(k, 7),
    "permute_array": lambda k: random.permutation(k, xp.reshape(xp.arange(12.0), (4, 3)), axis=1),
    "choice": lambda k: random.choice(k, 5, (3,)),
    "choice_norep": lambda k: random.choice(k, xp.arange(10.0), (4,), replace=False),
    "choice_p": lambda k: random.choice(k, 4, (5,), p=xp.asarray([0.1, 0.2, 0.3, 0.4])),
    "categorical": lambda k: random.categorical(k, xp.asarray([[0.0, 1.0, 2.0], [2.0, 0.5, -1.0]])),
    "split": lambda k: random.split(k, 3),
    "fold_in": lambda k: random.fold_in(k, 17),
}


def same(got, want):
    """Integers/bools/bits bit for bit; floats to a few ulp (a compiled executable may fuse
    a*b + c into one fused multiply-add, or use another libm kernel, rounding differently)."""
    got, want = npa(got), npa(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    if got.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=4 * np.finfo(got.dtype).eps, atol=4 * np.finfo(got.dtype).eps)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", list(SAMPLERS))
def test_same_key_same_numbers_eager_jit_vmap(name):
    f = SAMPLERS[name]
    eager = npa(f(K))
    np.testing.assert_array_equal(npa(f(K)), eager)        # eager twice: bit for bit
    same(jit(f)(K), eager)
    keys = random.split(K, 3)
    loop = np.stack([npa(f(keys[i])) for i in range(3)])
    np.testing.assert_array_equal(npa(vmap(f)(keys)), loop)


@pytest.mark.parametrize("name", ["uniform", "randint", "permutation", "choice_p", "split"])
def test_jit_of_vmap_matches_loop(name):
    f = SAMPLERS[name]
    keys = random.split(K, 3)
    loop = np.stack([npa(f(keys[i])) for i in range(3)])
    g = jit(vmap(f))
    same(g(keys), loop)
    np.testing.assert_array_equal(npa(g(keys)), npa(g(keys)))


def test_unit_uniform_is_bit_exact_under_jit():
    f = lambda k: random.uniform(k, (64,))  # noqa: E731   (no affine rescaling to fuse)
    np.testing.assert_array_equal(npa(jit(f)(K)), npa(f(K)))


def test_vmap_with_batched_bounds_and_unbatched_key():
    lo = xp.asarray([0.0, 10.0, 100.0])
    out = vmap(lambda m: random.uniform(K, (2,), minval=m, maxval=m + 1.0))(lo)
    loop = np.stack([npa(random.uniform(K, (2,), minval=float(m), maxval=float(m) + 1.0)) for m in (0, 10, 100)])
    np.testing.assert_allclose(npa(out), loop, rtol=1e-15)
    ds = vmap(lambda d: random.fold_in(K, d))(xp.arange(3))
    np.testing.assert_array_equal(npa(ds), np.stack([npa(random.fold_in(K, i)) for i in range(3)]))


def test_evaluation_order_independence():
    k1, k2 = random.split(random.key(0))

    def bar():
        return random.uniform(k1, (3,))

    def car():
        return random.normal(k2, (3,))
    a = bar() + 2 * car()
    b = 2 * car() + bar()
    np.testing.assert_array_equal(npa(a), npa(b))
    same(jit(lambda: bar() + 2 * car())(), a)
    same(jit(lambda: 2 * car() + bar())(), a)


def test_split_unpacks_and_keys_differ():
    k1, k2 = random.split(K)
    ks = npa(random.split(K, 1000))
    assert len({tuple(r) for r in ks.tolist()}) == 1000
    assert not np.array_equal(npa(k1), npa(k2)) and not np.array_equal(npa(k1), npa(K))
    folded = {tuple(npa(random.fold_in(K, i)).tolist()) for i in range(50)}
    assert len(folded) == 50
    # a prefix of a split is not a prefix of another split
    assert not np.array_equal(npa(random.split(K, 2))[0], npa(random.split(k1, 2))[0])


def test_streams_look_independent():
    n = 100_000
    ks = random.split(random.key(7), 3)
    f = jit(lambda k: random.uniform(k, (n,)))
    u = [npa(f(ks[i])) for i in range(3)]
    u.append(npa(f(random.fold_in(ks[0], 1))))
    c = np.corrcoef(np.stack(u))
    assert np.all(np.abs(c[np.triu_indices(4, 1)]) < 0.015)
    # lag-1 autocorrelation within a stream
    assert abs(np.corrcoef(u[0][:-1], u[0][1:])[0, 1]) < 0.015
    # every bit of the raw words is fair
    w = npa(jit(lambda k: random.bits(k, (n,)))(ks[1]))
    freq = ((w[:, None] >> np.arange(32, dtype=np.uint32)) & 1).mean(0)
    assert np.all(np.abs(freq - 0.5) < 0.01)


# --------------------------------------------------------------------------- statistics

N = 100_000


@pytest.mark.parametrize("dtype", [xp.float64, xp.float32])
def test_uniform_moments_and_range(dtype):
    u = npa(jit(lambda k: random.uniform(k, (N,), dtype))(random.key(0)))
    assert u.dtype == np.dtype(dtype) and u.min() >= 0.0 and u.max() < 1.0
    assert abs(u.mean() - 0.5) < 0.005 and abs(u.var() - 1 / 12) < 0.002
    hist = np.histogram(u, bins=20, range=(0, 1))[0]
    chi2 = ((hist - N / 20) ** 2 / (N / 20)).sum()
    assert chi2 < 45          # 19 dof: p ~ 1e-3
    v = npa(random.uniform(random.key(1), (1000,), dtype, minval=-3.0, maxval=-2.5))
    assert v.min() >= -3.0 and v.max() < -2.5
    w = npa(random.uniform(random.key(2), (2, 3), minval=xp.asarray([0.0, 1.0, 2.0]), maxval=3.0))
    assert np.all(w >= [0, 1, 2]) and np.all(w < 3)


def test_uniform_float64_uses_52_bits():
    u = npa(random.uniform(random.key(3), (1000,)))
    assert len(np.unique(u)) == 1000
    scaled = u * 2.0 ** 52
    np.testing.assert_array_equal(scaled, np.round(scaled))
    assert np.mean(scaled % 2 ** 29 != 0) > 0.99      # low bits are populated (not a 32-bit float)


@pytest.mark.parametrize("dtype", [xp.float64, xp.float32])
def test_normal_moments_and_cdf(dtype):
    z = npa(jit(lambda k: random.normal(k, (N,), dtype))(random.key(0))).astype(np.float64)
    assert npa(random.normal(random.key(0), (3,), dtype)).dtype == np.dtype(dtype)
    assert abs(z.mean()) < 0.015 and abs(z.var() - 1) < 0.02
    assert abs(np.mean(z ** 3)) < 0.05 and abs(np.mean(z ** 4) - 3) < 0.1
    assert np.isfinite(z).all()
    # Kolmogorov-Smirnov on 16 independent keys of N samples: normal is a monotone map of uniform's numbers, so
    # one fixed key's statistic is a single draw (key 0's float32 sample sits at p = 0.002 of uniform's own KS).
    # Each key's p-value must clear 1% / 16 (Bonferroni), the 16 p-values must look uniform, and the pooled
    # 1.6M samples must pass at 1% -- together a stronger test than one key at 1%.
    zz = npa(jit(vmap(lambda k: random.normal(k, (N,), dtype)))(random.split(random.key(0), 16))).astype(np.float64)
    ps = [stats.kstest(row, "norm").pvalue for row in zz]
    assert min(ps) > 0.01 / 16, ps
    assert stats.kstest(ps, "uniform").pvalue > 0.01, ps
    assert stats.kstest(zz.ravel(), "norm").pvalue > 0.01


def test_normal_odd_sizes_and_shapes():
    assert random.normal(K, (3, 5)).shape == (3, 5)
    assert random.normal(K, ()).shape == ()
    assert random.normal(K, (0, 2)).shape == (0, 2)
    np.testing.assert_array_equal(npa(random.normal(K, (7,)))[:3], npa(random.normal(K, (7,)))[:3])


def test_gumbel_moments():
    g = npa(jit(lambda k: random.gumbel(k, (N,)))(random.key(5)))
    assert abs(g.mean() - 0.5772156649) < 0.02 and abs(g.var() - math.pi ** 2 / 6) < 0.05


def test_bernoulli_frequency():
    b = npa(jit(lambda k: random.bernoulli(k, 0.3, (N,)))(random.key(4)))
    assert b.dtype == np.bool_ and abs(b.mean() - 0.3) < 0.005
    p = xp.asarray([0.0, 0.5, 1.0])
    bp = npa(random.bernoulli(random.key(5), p, (2000, 3)))
    assert bp[:, 0].sum() == 0 and bp[:, 2].all() and abs(bp[:, 1].mean() - 0.5) < 0.05
    assert random.bernoulli(K, p).shape == (3,)


@pytest.mark.parametrize("dtype,lo,hi", [(xp.int64, -3, 7), (xp.int32, 100, 110), (xp.uint8, 0, 256),
                                         (xp.int8, -128, 128)])
def test_randint_chi_square(dtype, lo, hi):
    r = npa(jit(lambda k: random.randint(k, (N,), lo, hi, dtype))(random.key(6)))
    assert r.dtype == np.dtype(dtype) and r.min() >= lo and r.max() <= hi - 1
    counts = np.bincount(r.astype(np.int64) - lo, minlength=hi - lo)
    e = N / (hi - lo)
    chi2 = ((counts - e) ** 2 / e).sum()
    dof = hi - lo - 1
    assert chi2 < dof + 5 * math.sqrt(2 * dof)


def test_randint_array_bounds_and_edge_cases():
    lo, hi = xp.asarray([0, -10, 5]), xp.asarray([2, -5, 5])
    r = npa(random.randint(random.key(8), (500, 3), lo, hi))
    assert set(np.unique(r[:, 0])) == {0, 1}
    assert r[:, 1].min() >= -10 and r[:, 1].max() <= -6 and len(np.unique(r[:, 1])) == 5
    assert np.all(r[:, 2] == 5)                                # empty range -> minval
    np.testing.assert_array_equal(npa(random.randint(K, (4,), 3, 3)), [3, 3, 3, 3])
    assert npa(random.randint(K, (4,), 10)).max() < 10        # randint(key, shape, maxval)
    big = npa(random.randint(K, (1000,), -2 ** 63, 2 ** 63))   # the full int64 range
    assert big.min() < -2 ** 61 and big.max() > 2 ** 61
    u = npa(random.randint(K, (1000,), 0, 2 ** 64, xp.uint64))
    assert u.max() > 2 ** 63


def test_permutation_is_a_permutation():
    p = npa(jit(lambda k: random.permutation(k, 1000))(random.key(9)))
    np.testing.assert_array_equal(np.sort(p), np.arange(1000))
    assert not np.array_equal(p, np.arange(1000))
    x = xp.reshape(xp.arange(20.0), (4, 5))
    px = npa(random.permutation(random.key(9), x))
    np.testing.assert_array_equal(np.sort(px[:, 0]), [0, 5, 10, 15])
    np.testing.assert_array_equal(px[:, 1:] - px[:, :1], np.tile(np.arange(1, 5.0), (4, 1)))
    # position distribution: element 0 lands everywhere uniformly
    ks = random.split(random.key(10), 4000)
    perms = npa(jit(vmap(lambda k: random.permutation(k, 5)))(ks))
    pos = np.argmax(perms == 0, axis=1)
    counts = np.bincount(pos, minlength=5)
    assert ((counts - 800) ** 2 / 800).sum() < 20
    assert npa(random.permutation(K, 0)).shape == (0,) and npa(random.permutation(K, 1)).tolist() == [0]


def test_choice():
    a = xp.arange(10.0) * 3
    c = npa(random.choice(random.key(11), a, (2, 4), replace=False))
    assert c.shape == (2, 4) and len(np.unique(c)) == 8 and np.all(c % 3 == 0)
    with pytest.raises(ValueError, match="without replacement"):
        random.choice(K, 3, (4,), replace=False)
    p = np.array([0.1, 0.0, 0.6, 0.3])
    s = npa(jit(lambda k: random.choice(k, 4, (N // 2,), p=xp.asarray(p)))(random.key(12)))
    np.testing.assert_allclose(np.bincount(s, minlength=4) / (N // 2), p, atol=0.01)
    s2 = npa(random.choice(random.key(13), 4, (3,), replace=False, p=xp.asarray(p)))
    assert len(np.unique(s2)) == 3 and 1 not in s2
    m = xp.reshape(xp.arange(12.0), (3, 4))
    cm = npa(random.choice(K, m, (2,), axis=1))
    assert cm.shape == (3, 2) and np.all(cm[1] - cm[0] == 4)
    u = npa(jit(lambda k: random.choice(k, 5, (N // 2,)))(random.key(14)))
    assert ((np.bincount(u, minlength=5) - N / 10) ** 2 / (N / 10)).sum() < 20


def test_categorical_matches_softmax():
    logits = np.array([1.0, -0.5, 2.0, 0.0])
    probs = np.exp(logits) / np.exp(logits).sum()
    s = npa(jit(lambda k: random.categorical(k, xp.asarray(logits), shape=(N,)))(random.key(15)))
    np.testing.assert_allclose(np.bincount(s, minlength=4) / N, probs, atol=0.006)
    lg = xp.asarray(np.array([[0.0, 5.0], [5.0, 0.0], [0.0, 0.0]]).T)        # axis 0 holds the categories
    c = npa(random.categorical(random.key(16), lg, axis=0, shape=(2000, 3)))
    assert c.shape == (2000, 3)
    assert c[:, 0].mean() > 0.98 and c[:, 1].mean() < 0.02 and abs(c[:, 2].mean() - 0.5) < 0.05
    assert random.categorical(K, xp.zeros((2, 3))).shape == (2,)
    with pytest.raises(ValueError, match="batch shape"):
        random.categorical(K, xp.zeros((2, 3)), shape=(4,))


def test_grad_through_uniform_bounds():
    k = random.key(17)
    u = npa(random.uniform(k, (8,)))
    g = grad(lambda hi: xp.sum(random.uniform(k, (8,), minval=0.0, maxval=hi)))(2.0)
    np.testing.assert_allclose(float(g), u.sum(), rtol=1e-12)


def test_jaxpr_is_made_of_primitives():
    text = str(make_jaxpr(lambda k: random.uniform(k, (4,)))(K))
    assert "bitcast_convert_type" in text and "xor" in text and "shift_left" in text


# ------------------------------------------------------------------------------ errors

@pytest.mark.parametrize("fn", [lambda a: random.uniform(a, (2,)), lambda a: random.normal(a),
                                lambda a: random.split(a), lambda a: random.fold_in(a, 1),
                                lambda a: random.bits(a), lambda a: random.randint(a, (), 0, 3),
                                lambda a: random.permutation(a, 3), lambda a: random.categorical(a, xp.zeros(2))])
@pytest.mark.parametrize("bad", [xp.asarray([1.0, 2.0]), xp.asarray([1, 2]), 3, xp.zeros((3,), dtype=xp.uint32)])
def test_non_key_is_a_type_error(fn, bad):
    with pytest.raises(TypeError, match="expected a PRNG key"):
        fn(bad)


def test_key_misuse_messages():
    with pytest.raises(TypeError, match=r"uniform: expected a PRNG key .*float64 array of shape \(2,\)"):
        random.uniform(xp.asarray([0.5, 0.5]))
    with pytest.raises(TypeError, match="batch of keys"):
        random.normal(random.split(K, 4), (2,))
    with pytest.raises(TypeError):
        K + 1.0                                   # a key is uint32 data; float arithmetic is refused
    with pytest.raises(TypeError, match="fold_in: data must be an integer"):
        random.fold_in(K, 1.5)
    with pytest.raises(TypeError, match="key: seed must be an integer"):
        random.key(1.0)
    with pytest.raises(TypeError, match="bits: dtype"):
        random.bits(K, (2,), xp.float32)
    with pytest.raises(TypeError, match="uniform: dtype"):
        random.uniform(K, (2,), xp.int32)
    with pytest.raises(ValueError, match="does not broadcast"):
        random.uniform(K, (2,), minval=xp.zeros(3))


# -------------------------------------------------------------- bitcast_convert_type

@pytest.mark.parametrize("src,dst", [(np.uint32, np.float32), (np.float64, np.uint64), (np.int32, np.uint32),
                                     (np.float64, np.int64)])
def test_bitcast_convert_type(src, dst):
    x = np.array([1.5, -2.0, 0.0, 3.25]).astype(src) if np.dtype(src).kind == "f" else \
        np.array([0x3F800000, 0xBF800000, 7, 0]).astype(src)
    want = x.view(dst)
    f = lambda a: _bc(a, dst)  # noqa: E731
    np.testing.assert_array_equal(npa(f(xp.asarray(x))), want)
    np.testing.assert_array_equal(npa(jit(lambda a: f(a))(xp.asarray(x))), want)
    xb = np.stack([x, x[::-1]])
    np.testing.assert_array_equal(npa(vmap(lambda a: f(a), in_axes=1)(xp.asarray(xb.T))), xb.view(dst))


def _bc(a, dst):
    from array_namespace._helpers import wrap
    return wrap(B.bitcast_convert_type(a._v, dst))


def test_bitcast_jvp_is_zero_and_width_checked():
    y, t = jvp(lambda a: _bc(a, np.int64), (xp.asarray([1.0, 2.0]),), (xp.asarray([1.0, 1.0]),))
    np.testing.assert_array_equal(npa(y), np.array([1.0, 2.0]).view(np.int64))
    assert not np.any(npa(t))
    with pytest.raises(TypeError, match="same width"):
        _bc(xp.asarray([1.0]), np.uint32)
