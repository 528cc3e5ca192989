"""array_namespace/_searching.py: where, nonzero, count_nonzero, searchsorted (and argmax/argmin through
the namespace) against NumPy eagerly and under jit/vmap; nonzero's data-dependent shape eagerly only."""
import numpy as np
import pytest

import array_namespace as xp
from array_namespace._datadep import DataDependentShapeError
from ns_check import agree
from transforms import jit

X = np.array([[0.0, 1.5, -2.0, np.nan], [3.0, 0.0, -0.0, np.inf]])
S = np.array([-1.0, 0.0, 0.0, 2.5, 7.0])


@pytest.mark.parametrize("fn, np_fn, args, batch", [
    (lambda c, a: xp.where(c > 0, c, a), lambda c, a: np.where(c > 0, c, a), (X, -X), True),
    (xp.count_nonzero, lambda a: np.int64(np.count_nonzero(a)), (X,), True),
    (lambda a: xp.count_nonzero(a, axis=1, keepdims=True), lambda a: np.count_nonzero(a, axis=1, keepdims=True),
     (X,), True),
    (xp.searchsorted, np.searchsorted, (S, np.array([-5.0, 0.0, 1.0, 7.0, 9.0])), False),   # flipping unsorts
    (lambda a, v: xp.searchsorted(a, v, side="right"), lambda a, v: np.searchsorted(a, v, side="right"),
     (S, np.array([0.0, 2.5, 7.0])), False),
    (lambda a: xp.argmax(a, axis=0), lambda a: np.argmax(a, 0), (np.abs(X[:, :3]),), True),
])
def test_against_numpy(fn, np_fn, args, batch):
    agree(fn, np_fn, *args, batch=batch)


def test_searchsorted_under_vmap_matches_a_loop():
    a = np.stack([S, S * 2 + 1])
    v = np.array([[0.0, 2.5, 9.0], [1.0, 1.0, 20.0]])
    from transforms import vmap
    got = vmap(xp.searchsorted)(xp.asarray(a), xp.asarray(v))
    np.testing.assert_array_equal(np.asarray(got), [np.searchsorted(a[i], v[i]) for i in range(2)])


def test_searchsorted_with_sorter():
    a, v = np.array([3.0, 1.0, 2.0]), np.array([0.5, 2.0, 3.5])
    order = np.argsort(a)
    got = xp.searchsorted(xp.asarray(a), xp.asarray(v), sorter=xp.asarray(order))
    np.testing.assert_array_equal(np.asarray(got), np.searchsorted(a, v, sorter=order))


def test_nonzero_eagerly_and_its_error_under_jit():
    got = xp.nonzero(xp.asarray(X))
    for g, w in zip(got, np.nonzero(X)):
        np.testing.assert_array_equal(np.asarray(g), w)
    with pytest.raises(DataDependentShapeError, match="nonzero: the shape of the result depends on the values"):
        jit(xp.nonzero, guards=False)(xp.asarray(X))


def test_where_promotes_and_rejects_non_bool_conditions():
    out = xp.where(xp.asarray([True, False]), xp.asarray([1, 2], dtype=xp.int32), 7)
    assert out.dtype == xp.int32 and np.asarray(out).tolist() == [1, 7]
    out = xp.where(xp.asarray([True, False]), xp.asarray([1.0, 2.0], dtype=xp.float32), xp.asarray([3.0, 4.0]))
    assert out.dtype == xp.float64 and np.asarray(out).tolist() == [1.0, 4.0]
    with pytest.raises(TypeError, match="where: a Python float cannot be combined with an array of dtype int32"):
        xp.where(xp.asarray([True]), xp.asarray([1], dtype=xp.int32), 0.5)
    with pytest.raises(TypeError, match="where"):
        xp.where(xp.asarray([1.0, 0.0]), 1.0, 2.0)


@pytest.mark.parametrize("fn, np_fn", [(xp.argmax, np.argmax), (xp.argmin, np.argmin)])
@pytest.mark.parametrize("shape, axis", [((0, 4), -1), ((3, 0, 2), 2), ((0, 4), 0), ((0,), None), ((2, 0), None)])
def test_argmax_argmin_of_empty_arrays_as_numpy(fn, np_fn, shape, axis):
    """An empty x whose reduced axis is not empty has an empty result, as NumPy's (scipy's Rotation of no
    rotations takes argmax over the last axis of a (0, 4) array); an empty reduced axis raises ValueError,
    eagerly and under jit."""
    a = np.zeros(shape)
    f = lambda t: fn(t, axis=axis, keepdims=True)   # noqa: E731
    if a.size == 0 and (axis is None or a.shape[axis] == 0):
        for g in (f, jit(f)):
            with pytest.raises(ValueError, match=fn.__name__):
                g(xp.asarray(a))
        return
    want = np_fn(a, axis=axis, keepdims=True)
    for g in (f, jit(f)):
        got = g(xp.asarray(a))
        assert got.shape == want.shape and got.dtype == xp.int64


@pytest.mark.parametrize("n", [1, 2, 3, 7, 8, 9, 64, 1000])
def test_searchsorted_is_a_binary_search_equal_to_numpys(n):
    """searchsorted is a binary search over x1 for all of x2 at once (one gather and compare per power of two below
    n; two sorts of all n + m values before, 20-70x slower under jit): eagerly and under jit it equals NumPy's on
    sorted float x1 with ties, -0.0 beside 0.0 and trailing NaNs, values below, between, on and above them (NaN
    and +-inf included), both sides, 2-D x2, integer and bool x1; the compiled program has no sort."""
    rng = np.random.default_rng(n)
    a = np.sort(rng.integers(-3, 4, n).astype(np.float64))
    a[a == 0] = np.where(rng.random((a == 0).sum()) < 0.5, -0.0, 0.0)
    if n > 2:
        a[-(n // 3):] = np.nan
    v = np.concatenate([a, [-np.inf, np.inf, np.nan, -0.0, 0.0, -9.0, 9.0, 0.5]])
    v = np.concatenate([v, rng.permutation(v)]).reshape(2, -1)
    for side in ("left", "right"):
        want = np.searchsorted(a, v, side=side)
        f = lambda x, y, side=side: xp.searchsorted(x, y, side=side)
        for how, g in (("eager", f), ("jit", jit(f))):
            got = np.asarray(g(xp.asarray(a), xp.asarray(v)))
            np.testing.assert_array_equal(got, want, err_msg=f"{how} {side}")
    ints = np.sort(rng.integers(-5, 5, n))
    np.testing.assert_array_equal(np.asarray(jit(xp.searchsorted)(xp.asarray(ints), xp.asarray(np.arange(-6, 7)))),
                                  np.searchsorted(ints, np.arange(-6, 7)))
    bools = np.sort(rng.random(n) < 0.5)
    np.testing.assert_array_equal(np.asarray(xp.searchsorted(xp.asarray(bools), xp.asarray([False, True]),
                                                             side="right")),
                                  np.searchsorted(bools, [False, True], side="right"))
    assert " sort(" not in jit(xp.searchsorted).compiled(xp.asarray(a), xp.asarray(v)).as_text()
