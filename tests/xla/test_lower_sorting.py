"""xla/lower_sorting.py: sort (values, with indices, descending, stable ties, NaN last) and the four
cumulative scans, reached through the namespace or bound directly, under jit, against NumPy."""
import numpy as np
import pytest

import array_namespace as xp
from lower_harness import Case, check, lowered_by, prims_of, raw
from transforms import jit, make_jaxpr
from transforms.primitives import sorting as SO

R = np.random.default_rng(0)
X = R.standard_normal((3, 6))
NAN = np.array([3.0, np.nan, -np.inf, 1.0, -0.0, np.inf, 1.0, np.nan])
TIES = np.array([2, 1, 2, 0, 1, 2, 0], np.int32)

CASES = [
    Case("sort", lambda x: xp.sort(x, axis=1), lambda x: np.sort(x, 1), [X]),
    Case("sort-nan-last", xp.sort, np.sort, [NAN]),
    Case("sort-f32-desc", lambda x: xp.sort(x, descending=True), lambda x: -np.sort(-x), [X.astype(np.float32)]),
    Case("argsort-stable", xp.argsort, lambda x: np.argsort(x, kind="stable"), [TIES]),
    Case("argsort-desc-stable", lambda x: xp.argsort(x, descending=True),
         lambda x: (len(x) - 1 - np.argsort(x[::-1], kind="stable")[::-1]), [TIES]),
    Case("cumsum", lambda x: xp.cumulative_sum(x, axis=1), lambda x: np.cumsum(x, 1), [X], 1e-13, 1e-15),
    Case("cumprod-int", lambda x: xp.cumulative_prod(x), np.cumprod, [TIES + 1]),
    Case("cummax", raw(SO.cummax_p, axis=0, reverse=False), lambda x: np.maximum.accumulate(x, 0), [NAN]),
    Case("cummin-reverse", raw(SO.cummin_p, axis=1, reverse=True),
         lambda x: np.flip(np.minimum.accumulate(np.flip(x, 1), 1), 1), [X]),
]


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_jit_matches_numpy(case):
    check(case)


def test_every_lowered_primitive_is_reached():
    reached = set().union(*(prims_of(make_jaxpr(c.fn)(*[xp.asarray(a) for a in c.args])) for c in CASES))
    assert lowered_by("xla.lower_sorting") - reached == set()


# ------------------------------------------- float32 cumulative sums: scanned in float64 (issue 23)
# Oracle: the exact prefix sums, in Python integers (every float32 is an integer times 2^-160 here), rounded once
# to float64. Each jit prefix sum must be no farther from it than NumPy's (sequential) one, or than half an ulp.

def _exact_cumsum(x):
    scaled = [int(v * 2.0 ** 160) for v in x.astype(np.float64).tolist()]   # exact: |x| >= 2^-149 or 0
    out, acc = np.empty(len(scaled)), 0
    for i, v in enumerate(scaled):
        acc += v
        out[i] = acc / 2 ** 160   # (int / int: correctly rounded)
    return out


def _cum_data(kind, n, seed=0):
    r = np.random.default_rng(seed)
    if kind == "near1":
        return (1 + 1e-7 * r.standard_normal(n)).astype(np.float32)
    if kind == "uniform":
        return r.random(n, dtype=np.float32)
    return (r.standard_normal(n) * 10.0 ** r.integers(-4, 5, n)).astype(np.float32)


def _no_worse(ours, theirs, exact):
    half_ulp = np.spacing(np.abs(exact).astype(np.float32)).astype(np.float64) / 2
    bad = np.abs(ours.astype(np.float64) - exact) > np.maximum(np.abs(theirs - exact), half_ulp) * (1 + 1e-9)
    assert ours.dtype == np.float32 and not bad.any(), (np.flatnonzero(bad)[:5], ours[bad][:5], exact[bad][:5])


@pytest.mark.parametrize("n", [2**16, 2**20])
@pytest.mark.parametrize("kind", ["near1", "uniform", "mixed"])
def test_float32_cumulative_sum_is_at_least_as_accurate_as_numpy(kind, n):
    x = _cum_data(kind, n)
    ours = np.asarray(jit(xp.cumulative_sum)(xp.asarray(x)))
    _no_worse(ours, np.cumsum(x).astype(np.float64), _exact_cumsum(x))


@pytest.mark.parametrize("axis", [0, 1])
def test_float32_cumulative_sum_over_an_axis_is_at_least_as_accurate_as_numpy(axis):
    x = _cum_data("uniform", 2**18, seed=1).reshape(512, 512)
    exact = np.moveaxis(np.array([_exact_cumsum(v) for v in np.moveaxis(x, axis, -1)]), -1, axis)
    ours = np.asarray(jit(lambda a: xp.cumulative_sum(a, axis=axis))(xp.asarray(x)))
    _no_worse(ours, np.cumsum(x, axis).astype(np.float64), exact)


def test_float32_cumulative_prod_and_reverse_scans_are_float64_accurate():
    x = (1 + 1e-3 * np.random.default_rng(3).standard_normal((3, 1000))).astype(np.float32)
    x64 = x.astype(np.float64)
    want = np.cumprod(x64, 1)   # (float64 error ~1e-13, far below float32's half ulp)
    ours = np.asarray(jit(lambda a: xp.cumulative_prod(a, axis=1))(xp.asarray(x)))
    assert ours.dtype == np.float32 and np.all(np.abs(ours - want) <= np.spacing(want.astype(np.float32)) * 0.5 + 1e-12)
    for p, ref in [(SO.cumsum_p, np.cumsum), (SO.cumprod_p, np.cumprod)]:
        rev = np.asarray(jit(raw(p, axis=1, reverse=True))(xp.asarray(x)))
        want = np.flip(ref(np.flip(x64, 1), 1), 1)
        assert rev.dtype == np.float32 and np.all(np.abs(rev - want) <= np.spacing(want.astype(np.float32)) * 0.5 + 1e-9)


def test_only_narrow_float_scans_widen():
    def text(p, x):
        return jit(raw(p, axis=0, reverse=False)).lower(xp.asarray(x)).as_text()
    for p in (SO.cumsum_p, SO.cumprod_p):
        assert "xf64>" in text(p, np.ones(40, np.float32)) and "complex<f64>" in text(p, np.ones(40, np.complex64))
        for x in (np.ones(40), np.ones(40, np.int32), np.ones(40, bool)):
            assert "stablehlo.convert" not in text(p, x)
    assert "stablehlo.convert" not in text(SO.cummax_p, np.ones(40, np.float32))


# ------------------------------------ float64/complex128 cumulative sums: the blocked scan in their own dtype
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
@pytest.mark.parametrize("n", [1, 2, 3, 40, 100])
def test_cumulative_sum_keeps_negative_zeros_as_numpy_under_jit(dtype, n):
    """NumPy's cumsum runs from the first element: of -0.0s it is -0.0s. The scan padded with +0.0 made them +0.0
    under jit (+0.0 + -0.0); padded with -0.0 (x + -0.0 is x for every x) each output is the running sum."""
    for a in (np.full(n, -0.0, dtype), np.array(([1.0, -1.0, -0.0] * n)[:n], dtype)):
        want = np.cumsum(a)
        for way, got in (("eager", xp.cumulative_sum(xp.asarray(a))),
                         ("jit", jit(lambda t: xp.cumulative_sum(t))(xp.asarray(a))),
                         ("jit reversed", jit(lambda t: xp.flip(xp.cumulative_sum(xp.flip(t))))(xp.asarray(a[::-1])))):
            got = np.asarray(got)[::-1] if way == "jit reversed" else np.asarray(got)
            assert np.array_equal(got, want) and np.array_equal(np.signbit(got.real), np.signbit(want.real)), (
                way, got, want)


@pytest.mark.parametrize("n", [33, 1000, 2**16 + 5])
@pytest.mark.parametrize("reverse", [False, True])
def test_float64_cumulative_sum_blocked_scan_is_accurate(n, reverse):
    from fractions import Fraction
    r = np.random.default_rng(n)
    x = r.standard_normal(n) * 10.0 ** r.integers(-3, 4, n)
    ours = np.asarray(jit(raw(SO.cumsum_p, axis=0, reverse=reverse))(xp.asarray(x)))
    xs = x[::-1] if reverse else x
    acc, exact, mag = Fraction(0), np.empty(n), np.cumsum(np.abs(xs))
    for i, v in enumerate(xs.tolist()):
        acc += Fraction(v)
        exact[i] = float(acc)
    if reverse:
        exact, mag = exact[::-1], mag[::-1]
    levels = int(np.ceil(np.log(n) / np.log(16)))   # a block of 16 in order, then the block totals, recursively
    assert np.all(np.abs(ours - exact) <= 16 * (levels + 1) * np.finfo(np.float64).eps * mag)
    assert np.abs(ours - exact).max() > 0 or n < 100      # (the data do round: the bound is what is tested)
    z = x + 1j * x[::-1]
    oz = np.asarray(jit(raw(SO.cumsum_p, axis=0, reverse=reverse))(xp.asarray(z)))
    want = np.flip(np.cumsum(np.flip(z))) if reverse else np.cumsum(z)
    np.testing.assert_allclose(oz, want, rtol=1e-9, atol=1e-9 * np.abs(z).sum())


# ------------------------------------------- the eager sort: NumPy's fast sort, bit for bit a stable sort
# Oracle: NumPy's stable sort run in the kernels' floating-point mode (host.quiet: DAZ reads a subnormal as a zero,
# so it ties with the zeros) -- the order the lowering's comparator gives under jit, which must agree too.

_SPECIAL = np.array([0.0, -0.0, 5e-324, -5e-324, 1e-310, -2.2e-308, np.nan, -np.nan, np.inf, -np.inf, 1.5, -1.5])


def _payload_nans(dt, k, rng):
    u = np.dtype(dt.str.replace("f", "u"))
    bits = np.full(k, np.asarray(np.nan, dt).view(u)) | rng.integers(1, 7, k).astype(u)
    bits[::2] |= np.asarray(-0.0, dt).view(u)   # (every other NaN negative)
    return bits.view(dt)


@pytest.mark.parametrize("stable_max", [0, None])   # (0: each float row longer than 4 takes the fast sort, fix-ups)
@pytest.mark.parametrize("dt", [np.float64, np.float32, np.float16, np.int64, np.int8, np.uint16, np.bool_])
# ((400, 5), 1): more elements than STABLE_SORT_MAX in rows of 5, the fast sort and its fix-up by default
@pytest.mark.parametrize("shape,axis", [((1500,), 0), ((7, 40), 1), ((1100, 3), 0), ((400, 5), 1), ((2, 1100, 3), 1),
                                        ((2, 0), 1)])
def test_eager_sort_and_argsort_are_stable_bit_for_bit(dt, shape, axis, stable_max, monkeypatch):
    from xla import host, lower_sorting
    if stable_max is not None:
        monkeypatch.setattr(lower_sorting, "STABLE_SORT_MAX", stable_max)
    rng = np.random.default_rng(hash((np.dtype(dt).str, shape)) % 2 ** 32)
    dt = np.dtype(dt)
    n = int(np.prod(shape))
    if dt.kind == "f":
        pool = np.concatenate([_SPECIAL.astype(dt), _payload_nans(dt, 6, rng), rng.integers(-3, 4, 8).astype(dt)])
        x = rng.choice(pool, n).reshape(shape)   # (many ties: signed zeros, subnormals, NaNs of every kind)
    elif dt.kind == "b":
        x = rng.integers(0, 2, shape).astype(dt)
    else:
        x = rng.integers(0, 5, shape).astype(dt)
    (got,) = host.quiet(lower_sorting._h_sort, x, dimension=axis, is_stable=True, num_keys=1)
    want = host.quiet(np.sort, x, axis=axis, kind="stable")
    assert got.dtype == dt and got.shape == x.shape and got.tobytes() == want.tobytes()
    iota = np.broadcast_to(np.arange(x.shape[axis]).reshape([-1 if d == axis else 1 for d in range(x.ndim)]), x.shape)
    keys, perm = host.quiet(lower_sorting._h_sort, x, iota, dimension=axis, is_stable=True, num_keys=1)
    assert np.array_equal(perm, host.quiet(np.argsort, x, axis=axis, kind="stable"))
    assert keys.tobytes() == want.tobytes()
    if dt != np.float16:   # (the namespace's dtypes) eager and jit: the same bits
        a = xp.asarray(x)
        assert np.asarray(xp.sort(a, axis=axis)).tobytes() == want.tobytes()
        assert np.asarray(jit(lambda v: xp.sort(v, axis=axis))(a)).tobytes() == want.tobytes()


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8, np.int8, np.uint64, bool])
@pytest.mark.parametrize("p", [SO.cumsum_p, SO.cumprod_p, SO.cummax_p, SO.cummin_p])
def test_integer_and_bool_scans_are_the_blocked_scan_and_exact(dtype, p):
    """Integer and bool scans (wrapping sums and products, max, min, or, and) give the same bits in any grouping,
    so they take the blocked scan (one reduce_window per level) instead of Hillis-Steele's log2(n) shifted copies
    (int64 cumsum of 1e5 elements 3.2 -> 0.9 ms): equal to NumPy's sequential scan, wrapping included, forward
    and reversed, along either axis."""
    rng = np.random.default_rng(7)
    if dtype is bool:
        x = rng.integers(0, 2, (37, 300)).astype(bool)
    else:
        info = np.iinfo(dtype)
        x = rng.integers(info.min, info.max, (37, 300), dtype=dtype, endpoint=True)
    ref = {SO.cumsum_p: np.add, SO.cumprod_p: np.multiply, SO.cummax_p: np.maximum, SO.cummin_p: np.minimum}[p]
    if dtype is bool:
        ref = {np.add: np.logical_or, np.multiply: np.logical_and, np.maximum: np.logical_or,
               np.minimum: np.logical_and}[ref]
    for axis in (0, 1):
        for reverse in (False, True):
            f = jit(raw(p, axis=axis, reverse=reverse))
            want = np.flip(ref.accumulate(np.flip(x, axis), axis), axis) if reverse else ref.accumulate(x, axis)
            np.testing.assert_array_equal(np.asarray(f(xp.asarray(x))), want.astype(x.dtype))
    assert "reduce_window" in jit(raw(p, axis=1, reverse=False)).lower(xp.asarray(x)).as_text()
