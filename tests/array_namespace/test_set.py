"""unique_* (eager, host-computed positions; gradients through the values) and isin (traceable)."""
import numpy as np
import pytest

import array_namespace as xp
from array_namespace._datadep import DataDependentShapeError
from transforms import ConcretizationTypeError, grad, jit, vmap

A = np.array([[3.0, np.nan, 1.0, 2.0, -0.0], [0.0, 1.0, np.nan, 3.0, 3.0]])


def test_unique_all_matches_numpy():
    x = xp.asarray(A)
    r = xp.unique_all(x)
    vals, first, inv, counts = np.unique(A, return_index=True, return_inverse=True, return_counts=True,
                                         equal_nan=False)
    np.testing.assert_array_equal(np.asarray(r.values), vals)       # NaNs distinct, -0 == +0
    np.testing.assert_array_equal(np.asarray(r.indices), first)
    np.testing.assert_array_equal(np.asarray(r.inverse_indices), inv.reshape(A.shape))
    np.testing.assert_array_equal(np.asarray(r.counts), counts)
    assert r.inverse_indices.shape == A.shape and r.counts.dtype == xp.int64 and r.values.dtype == x.dtype
    assert int(xp.sum(r.counts)) == A.size
    assert r._fields == ("values", "indices", "inverse_indices", "counts")


def test_unique_variants():
    a = np.array([[2, 1, 2], [5, 1, 1]], np.int32)
    x = xp.asarray(a)
    np.testing.assert_array_equal(np.asarray(xp.unique_values(x)), [1, 2, 5])
    assert xp.unique_values(x).dtype == xp.int32
    v, c = xp.unique_counts(x)
    np.testing.assert_array_equal(np.asarray(c), [3, 2, 1])
    v, inv = xp.unique_inverse(x)
    np.testing.assert_array_equal(np.asarray(v)[np.asarray(inv)], a)
    assert xp.unique_values(xp.asarray(np.zeros((0, 3)))).shape == (0,)
    assert xp.unique_values(xp.asarray(7.0)).shape == (1,)
    np.testing.assert_array_equal(np.asarray(xp.unique_values(xp.asarray([True, False, True]))), [False, True])


@pytest.mark.parametrize("dt", ["int8", "uint8", "int16", "uint32", "int64", "uint64", "bool", "float32", "float64"])
def test_unique_functions_match_numpy_on_every_dtype(dt):
    # integers and booleans (and, in unique_values and unique_counts, real floats) read their values from np.unique
    # without first indices
    a = np.random.default_rng(5).integers(0, 7, (40, 30)).astype(dt)
    x = xp.asarray(a)
    vals, first, inv, counts = np.unique(a, return_index=True, return_inverse=True, return_counts=True)
    for got, want in [(xp.unique_values(x), vals), (xp.unique_counts(x).counts, counts),
                      (xp.unique_inverse(x).inverse_indices, inv.reshape(a.shape)), (xp.unique_all(x).indices, first)]:
        assert np.asarray(got).tobytes() == np.asarray(want, got.dtype).tobytes() and got.shape == want.shape
    assert xp.unique_values(x).dtype == x.dtype and xp.unique_counts(x).values.dtype == x.dtype


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_unique_float_values_keep_the_bits_of_first_occurrences(dt):
    """unique_values and unique_counts of real floats sort without first indices (a fast sort): of the values that
    compare equal with other bits, the zero is still the first zero's (+0.0 or -0.0, or a subnormal's bits: compared
    as a zero) and the NaNs, each its own value, are x's in x's order (their payloads and signs), as unique_all's
    values (picked by first index), eagerly and under jit."""
    u = np.dtype(dt.__name__.replace("float", "uint"))
    nan = np.asarray(np.nan, dt).view(u)
    nans = np.array([nan | 5, nan | 3 | np.asarray(-0.0, dt).view(u), nan, nan | 1], u).view(dt)
    rng = np.random.default_rng(7)
    for first_zero in (-0.0, 0.0, float(np.finfo(dt).smallest_subnormal)):
        pool = np.concatenate([nans, np.array([1.5, -2.0, 0.0, -0.0, 3.0], dt)])
        v = np.concatenate([np.array([2.5, first_zero], dt), rng.choice(pool, 3000)]).astype(dt)
        x = xp.asarray(v)
        want = np.asarray(xp.unique_all(x).values)
        assert want[0] == -2.0 and want[1].tobytes() == v[1].tobytes()   # (the oracle: v[first index])
        for how, g in (("eager", lambda f: f), ("jit", jit)):
            assert np.asarray(g(xp.unique_values)(x)).tobytes() == want.tobytes(), (how, first_zero)
            got = g(xp.unique_counts)(x)
            assert np.asarray(got.values).tobytes() == want.tobytes(), (how, first_zero)
            np.testing.assert_array_equal(np.asarray(got.counts), np.asarray(xp.unique_all(x).counts))


def test_unique_under_transforms():
    x = xp.asarray(A)
    with pytest.raises(DataDependentShapeError, match="unique_values"):
        jit(xp.unique_values, guards=False)(x)
    with pytest.raises(ConcretizationTypeError):
        vmap(lambda r: xp.unique_counts(r).counts)(x)
    # under grad the values are gathered from x, so they carry gradients
    b = np.array([2.0, 1.0, 2.0, 3.0])
    g = grad(lambda x: xp.sum(xp.unique_values(x) ** 2))(xp.asarray(b))
    np.testing.assert_allclose(np.asarray(g), [4.0, 2.0, 0.0, 6.0])   # first occurrences only


@pytest.mark.parametrize("n2", [3, 200], ids=["compare", "sorted"])
def test_isin_matches_numpy(n2):
    rng = np.random.default_rng(0)
    a = rng.integers(0, 50, (4, 30)).astype(np.float64)
    a[0, 0] = np.nan
    b = rng.integers(0, 50, n2).astype(np.float64)
    b[0] = np.nan
    for invert in (False, True):
        got = xp.isin(xp.asarray(a), xp.asarray(b), invert=invert)
        np.testing.assert_array_equal(np.asarray(got), np.isin(a, b, invert=invert))
    got = jit(lambda u, v: xp.isin(u, v))(xp.asarray(a), xp.asarray(b))
    np.testing.assert_array_equal(np.asarray(got), np.isin(a, b))


def test_isin_scalars_complex_vmap():
    x = xp.asarray([1, 2, 3])
    assert bool(xp.isin(2, x)) and not bool(xp.isin(7, x))
    np.testing.assert_array_equal(np.asarray(xp.isin(x, 3)), [False, False, True])
    np.testing.assert_array_equal(np.asarray(xp.isin(xp.asarray([1j, 2 + 0j]), xp.asarray([2 + 0j]))), [False, True])
    np.testing.assert_array_equal(np.asarray(xp.isin(x, xp.asarray(np.zeros(0, np.int64)))), [False] * 3)
    rows = np.array([[1, 2, 9], [3, 3, 0]])
    got = vmap(lambda r: xp.isin(x, r))(xp.asarray(rows))
    np.testing.assert_array_equal(np.asarray(got), np.stack([np.isin([1, 2, 3], r) for r in rows]))
    with pytest.raises(TypeError):
        xp.isin(1, 2)
