"""repeat with per-element counts: one gather from host-computed source indices.

Oracles: np.repeat for values, a Python loop for vmap, finite differences (and the segment sum
it must equal) for the gradient with respect to x; the traced-counts error under jit.
"""
import numpy as np
import pytest

import array_namespace as xp
from array_namespace._datadep import DataDependentShapeError
from finite_diff import central_diff
from transforms import BatchDisagreementError, grad, jit, make_jaxpr, vmap

RNG = np.random.default_rng(7)
A = RNG.standard_normal((3, 4))


def check(got, want):
    got = np.asarray(got)
    assert got.shape == np.shape(want) and got.dtype == np.asarray(want).dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_repeat_counts_match_numpy(axis):
    n = A.size if axis is None else A.shape[axis]
    for reps in (RNG.integers(0, 4, n), np.zeros(n, np.int64), np.ones(n, np.int64), np.arange(n)):
        for dtype in (np.int32, np.int64, np.uint8):
            r = reps.astype(dtype)
            check(xp.repeat(xp.asarray(A), xp.asarray(r), axis=axis), np.repeat(A, r, axis=axis))
        check(xp.repeat(xp.asarray(A), reps, axis=axis), np.repeat(A, reps, axis=axis))   # a NumPy array


def test_repeat_other_dtypes_and_single_counts():
    for a in (np.array([True, False, True]), np.array([1 + 2j, 3j, -1.0]), np.array([5, -7, 9], np.int16)):
        r = np.array([2, 0, 3])
        check(xp.repeat(xp.asarray(a), xp.asarray(r)), np.repeat(a, r))
    x = xp.asarray(A)
    for reps in (3, np.int64(2), xp.asarray([2]), xp.asarray(0), 0):
        want = np.repeat(A, int(np.asarray(reps).reshape(-1)[0]), axis=1)
        check(xp.repeat(x, reps, axis=1), want)
    check(xp.repeat(xp.ones((0, 3)), xp.asarray([1, 2, 0]), axis=1), np.ones((0, 3)))
    check(xp.repeat(xp.ones((2, 0)), xp.asarray([1, 2]), axis=0), np.ones((3, 0)))


def test_repeat_errors():
    x = xp.asarray(A)
    with pytest.raises(ValueError, match="repeat: repeats has 3 entries"):
        xp.repeat(x, xp.asarray([1, 2, 3]), axis=1)
    with pytest.raises(ValueError, match="non-negative"):
        xp.repeat(x, xp.asarray([1, -1, 2, 0]), axis=1)
    with pytest.raises(ValueError, match="non-negative"):
        xp.repeat(x, -1)
    with pytest.raises(ValueError, match="1-D"):
        xp.repeat(x, xp.asarray([[1, 2], [1, 2]]), axis=1)
    for bad in (2.0, xp.asarray([1.0, 2.0, 0.0, 1.0]), xp.asarray([True, False, True, True]), "2", None):
        with pytest.raises(TypeError, match="repeat: repeats"):
            xp.repeat(x, bad, axis=1)


def test_repeat_is_one_gather():
    r = xp.asarray(RNG.integers(0, 4, 200))
    jaxpr = make_jaxpr(lambda v: xp.repeat(v, r))(xp.ones(200))
    prims = [e.prim.name for e in jaxpr.jaxpr.eqns]
    assert prims.count("gather") == 1 and "concatenate" not in prims and len(prims) <= 3, prims


def test_repeat_large_counts_array():
    # scipy.stats.kruskal repeats 50,000 ranks; this used to be a Python loop and a 50,000-way concat
    n = 50_000
    a, r = RNG.standard_normal(n), RNG.integers(0, 4, n)
    check(xp.repeat(xp.asarray(a), xp.asarray(r)), np.repeat(a, r))


def test_repeat_under_jit_and_vmap():
    r = np.array([2, 0, 3, 1])
    rr = xp.asarray(r)
    x = xp.asarray(A)
    f = lambda v: xp.repeat(v, rr, axis=1)   # noqa: E731  concrete counts closed over
    check(jit(f)(x), np.repeat(A, r, axis=1))
    check(vmap(lambda row: xp.repeat(row, rr))(x), np.stack([np.repeat(row, r) for row in A]))
    with pytest.raises(DataDependentShapeError, match="repeat"):
        jit(lambda v, c: xp.repeat(v, c, axis=1), guards=False)(x, rr)
    g = vmap(lambda c: xp.repeat(xp.asarray([1.0, 2.0]), c))
    check(g(xp.asarray([[1, 2], [1, 2]])), np.stack([np.repeat([1.0, 2.0], [1, 2])] * 2))   # counts agree
    c = np.array([[1, 2], [2, 1]])   # counts differ, their sums agree: only the output length must
    check(g(xp.asarray(c)), np.stack([np.repeat([1.0, 2.0], row) for row in c]))
    with pytest.raises(BatchDisagreementError, match=r"repeat.*disagreeing batch indices: \[1\]"):
        g(xp.asarray([[1, 2], [2, 2]]))
    check(jit(lambda v: xp.repeat(v, 3, axis=0))(x), np.repeat(A, 3, axis=0))   # int counts trace as before


@pytest.mark.parametrize("axis", [0, 1])
def test_repeat_gradient_is_the_segment_sum(axis):
    r = np.array([2, 0, 3]) if axis == 0 else np.array([1, 3, 0, 2])
    rr = xp.asarray(r)
    out_shape = np.repeat(A, r, axis=axis).shape
    w = RNG.standard_normal(out_shape)

    def f(v):
        return xp.sum(xp.repeat(v, rr, axis=axis) * xp.asarray(w))

    g = np.asarray(grad(f)(xp.asarray(A)))
    np.testing.assert_allclose(g, central_diff(lambda v: float(f(xp.asarray(v))), A), rtol=1e-6, atol=1e-8)
    # d/dx_i = sum of the upstream weights over x_i's copies
    seg = np.zeros_like(A)
    src = np.repeat(np.arange(A.shape[axis]), r)
    for k, i in enumerate(src):
        if axis == 0:
            seg[i] += w[k]
        else:
            seg[:, i] += w[:, k]
    np.testing.assert_allclose(g, seg, rtol=1e-12, atol=1e-12)

    def h(v):   # nonlinear use, second pass through the gradient
        return xp.sum(xp.sin(xp.repeat(v * v, rr, axis=axis)))

    np.testing.assert_allclose(np.asarray(grad(h)(xp.asarray(A))),
                               central_diff(lambda v: float(h(xp.asarray(v))), A), rtol=1e-6, atol=1e-8)
