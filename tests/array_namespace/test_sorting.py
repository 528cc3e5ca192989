"""sort/argsort/searchsorted, cumulative sums/products, diff, nonzero/count_nonzero: vs NumPy, jit vs
eager, vmap vs loop, gradients of the sort and scan primitives vs finite differences."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import array_namespace as xp
from array_namespace._datadep import DataDependentShapeError
from array_namespace._helpers import wrap
from transforms import grad, jit, vmap
from transforms.primitives import sorting as T
from finite_diff import fd_grad

RNG = np.random.default_rng(0)
F = np.array([[3.0, np.nan, 1.0, 2.0, -0.0, 0.0, 1.0], [1, 1, 0, 0, np.nan, -1, 5]])
I32 = RNG.integers(-3, 3, (3, 6)).astype(np.int32)
U8 = RNG.integers(0, 4, (2, 5)).astype(np.uint8)
BOOL = RNG.random((2, 5)) > 0.5


def _desc_stable_argsort(a, axis):
    """NumPy reference for a stable descending argsort with NaNs last."""
    a = np.moveaxis(a, axis, -1)
    if a.dtype.kind == "f":
        key = -a
    elif a.dtype == bool:
        key = ~a
    else:
        key = -a.astype(np.int64)
    return np.moveaxis(np.argsort(key, axis=-1, kind="stable"), -1, axis)


@pytest.mark.parametrize("arr", [F, I32, U8, BOOL], ids=["f64-nan", "i32", "u8", "bool"])
@pytest.mark.parametrize("axis", [-1, 0])
def test_sort_argsort_match_numpy(arr, axis):
    x = xp.asarray(arr)
    np.testing.assert_array_equal(np.asarray(xp.sort(x, axis=axis)), np.sort(arr, axis=axis))
    np.testing.assert_array_equal(np.asarray(xp.argsort(x, axis=axis)), np.argsort(arr, axis=axis, kind="stable"))
    want_idx = _desc_stable_argsort(arr, axis)
    np.testing.assert_array_equal(np.asarray(xp.argsort(x, axis=axis, descending=True)), want_idx)
    np.testing.assert_array_equal(np.asarray(xp.sort(x, axis=axis, descending=True)),
                                  np.take_along_axis(arr, want_idx, axis=axis))
    assert xp.argsort(x).dtype == xp.int64 and xp.sort(x).dtype == x.dtype


@given(st.lists(st.integers(0, 4), min_size=1, max_size=3), st.data())
def test_sort_hypothesis(shape, data):
    a = RNG.integers(-2, 3, shape).astype(np.float32)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    x = xp.asarray(a)
    np.testing.assert_array_equal(np.asarray(xp.sort(x, axis=axis)), np.sort(a, axis=axis))
    np.testing.assert_array_equal(np.asarray(xp.argsort(x, axis=axis)), np.argsort(a, axis=axis, kind="stable"))


def test_sort_errors_and_0d():
    with pytest.raises(TypeError):
        xp.sort(xp.asarray([1j, 2j]))
    with pytest.raises(IndexError):
        xp.sort(xp.asarray([1.0]), axis=1)
    assert float(xp.sort(xp.asarray(3.0))) == 3.0
    assert int(xp.argsort(xp.asarray(3.0))) == 0


def test_sort_jit_vmap():
    a = RNG.standard_normal((3, 4, 5))
    x = xp.asarray(a)
    f = jit(lambda x: (xp.sort(x, axis=1), xp.argsort(x, axis=0, descending=True)))
    s, i = f(x)
    np.testing.assert_array_equal(np.asarray(s), np.sort(a, axis=1))
    np.testing.assert_array_equal(np.asarray(i), _desc_stable_argsort(a, 0))
    got = vmap(lambda r: xp.argsort(r, axis=0))(x)
    np.testing.assert_array_equal(np.asarray(got), np.stack([np.argsort(r, axis=0, kind="stable") for r in a]))


# --------------------------------------------------------------------------- searchsorted
S1 = np.array([1.0, 2.0, 2.0, 3.0, np.nan])
Q = np.array([[0.0, 2.0, 2.5], [3.0, 9.0, np.nan]])


@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_matches_numpy(side):
    got = xp.searchsorted(xp.asarray(S1), xp.asarray(Q), side=side)
    np.testing.assert_array_equal(np.asarray(got), np.searchsorted(S1, Q, side=side))
    assert got.dtype == xp.int64 and got.shape == Q.shape
    assert int(xp.searchsorted(xp.asarray(S1), 2.0, side=side)) == np.searchsorted(S1, 2.0, side=side)
    perm = np.array([3, 0, 4, 2, 1])
    unsorted = S1[np.argsort(perm)]
    sorter = np.argsort(unsorted, kind="stable")
    got = xp.searchsorted(xp.asarray(unsorted), xp.asarray(Q), side=side, sorter=xp.asarray(sorter))
    np.testing.assert_array_equal(np.asarray(got), np.searchsorted(unsorted, Q, side=side, sorter=sorter))
    ints = np.array([0, 0, 1, 5, 5, 5, 9])
    q = np.arange(-1, 11)
    np.testing.assert_array_equal(np.asarray(xp.searchsorted(xp.asarray(ints), xp.asarray(q), side=side)),
                                  np.searchsorted(ints, q, side=side))


def test_searchsorted_traced_and_errors():
    s = np.sort(RNG.standard_normal(7))
    q = RNG.standard_normal((4, 3))
    f = jit(lambda a, b: xp.searchsorted(a, b, side="right"))
    np.testing.assert_array_equal(np.asarray(f(xp.asarray(s), xp.asarray(q))), np.searchsorted(s, q, side="right"))
    got = vmap(lambda v: xp.searchsorted(xp.asarray(s), v))(xp.asarray(q))
    np.testing.assert_array_equal(np.asarray(got), np.stack([np.searchsorted(s, r) for r in q]))
    assert np.asarray(xp.searchsorted(xp.asarray(s[:0]), xp.asarray(q))).sum() == 0
    with pytest.raises(ValueError):
        xp.searchsorted(xp.asarray(s), xp.asarray(q), side="middle")
    with pytest.raises(ValueError):
        xp.searchsorted(xp.asarray(q), xp.asarray(s))


# ------------------------------------------------------------------------ cumulative
@pytest.mark.parametrize("include_initial", [False, True])
def test_cumulative_sum_prod_match_numpy(include_initial):
    a = RNG.integers(-3, 4, (3, 4))
    x = xp.asarray(a)

    def ref(f, arr, axis, identity):
        out = f(arr, axis=axis)
        if include_initial:
            shape = list(arr.shape)
            shape[axis] = 1
            out = np.concatenate([np.full(shape, identity, out.dtype), out], axis=axis)
        return out
    for axis in (0, 1, -1):
        np.testing.assert_array_equal(np.asarray(xp.cumulative_sum(x, axis=axis, include_initial=include_initial)),
                                      ref(np.cumsum, a, axis, 0))
        np.testing.assert_array_equal(np.asarray(xp.cumulative_prod(x, axis=axis, include_initial=include_initial)),
                                      ref(np.cumprod, a, axis, 1))
    b = xp.asarray(np.array([True, False, True, True]))
    got = xp.cumulative_sum(b, include_initial=include_initial)
    assert got.dtype == xp.int64
    np.testing.assert_array_equal(np.asarray(got), ref(np.cumsum, np.array([1, 0, 1, 1]), 0, 0))
    f32 = xp.cumulative_sum(xp.asarray(np.ones(5, np.float32)), dtype=xp.float64, include_initial=include_initial)
    assert f32.dtype == xp.float64


def test_cumulative_errors_and_empty():
    with pytest.raises(ValueError):
        xp.cumulative_sum(xp.ones((2, 2)))
    with pytest.raises(IndexError):
        xp.cumulative_sum(xp.ones((2, 2)), axis=2)
    assert xp.cumulative_sum(xp.ones((0,)), include_initial=True).shape == (1,)
    assert xp.cumulative_prod(xp.ones((2, 0)), axis=1).shape == (2, 0)


def test_cumulative_jit_vmap():
    a = RNG.standard_normal((3, 9))
    x = xp.asarray(a)
    np.testing.assert_allclose(np.asarray(jit(lambda x: xp.cumulative_sum(x, axis=1))(x)), np.cumsum(a, 1))
    np.testing.assert_allclose(np.asarray(vmap(lambda r: xp.cumulative_prod(r))(x)), np.cumprod(a, 1))
    got = vmap(lambda r: wrap(T.cummax(r._v, 0)), in_axes=1)(x)
    np.testing.assert_allclose(np.asarray(got), np.maximum.accumulate(a, 0).T)
    got = wrap(T.cummin(x._v, 1, reverse=True))
    np.testing.assert_allclose(np.asarray(got), np.minimum.accumulate(a[:, ::-1], 1)[:, ::-1])
    got = wrap(T.cumsum(x._v, 1, reverse=True))
    np.testing.assert_allclose(np.asarray(got), np.cumsum(a[:, ::-1], 1)[:, ::-1])


# ------------------------------------------------------------------------- gradients
W = xp.asarray(RNG.standard_normal((3, 4)))
GRAD_FNS = {
    "sort": lambda x: xp.sum(xp.sin(xp.sort(x, axis=0)) * W),
    "sort_desc": lambda x: xp.sum(xp.sin(xp.sort(x, axis=1, descending=True)) * W),
    "cumsum": lambda x: xp.sum(xp.sin(xp.cumulative_sum(x, axis=1, include_initial=True))),
    "cumprod": lambda x: xp.sum(xp.sin(xp.cumulative_prod(x, axis=0)) * W),
    "cumprod_zero": lambda x: xp.sum(xp.cumulative_prod(x * xp.asarray([1.0, 0.0, 1.0, 1.0]), axis=1) * W),
    "cummax": lambda x: xp.sum(xp.sin(wrap(T.cummax(x._v, 1))) * W),
    "cummin_rev": lambda x: xp.sum(xp.sin(wrap(T.cummin(x._v, 0, reverse=True))) * W),
    "diff": lambda x: xp.sum(xp.sin(xp.diff(x, axis=1, n=2, append=x[:, :1]))),
}


@pytest.mark.parametrize("name", list(GRAD_FNS))
def test_grad_vs_finite_differences(name):
    f = GRAD_FNS[name]
    a = RNG.standard_normal((3, 4))
    want = fd_grad(f, a)
    np.testing.assert_allclose(np.asarray(grad(f)(xp.asarray(a))), want, atol=1e-6)


def test_second_order_cumprod():
    from transforms import hessian
    f = lambda x: xp.sum(xp.cumulative_prod(x))  # noqa: E731
    a = np.array([1.5, -2.0, 0.5])
    h = np.asarray(jit(hessian(f))(xp.asarray(a)))
    # d2/dxi dxj of sum_k prod_{l<=k} x_l
    want = np.zeros((3, 3))
    for i in range(3):
        for j in range(3):
            if i != j:
                want[i, j] = sum(np.prod([a[m] for m in range(k + 1) if m not in (i, j)])
                                 for k in range(max(i, j), 3))
    np.testing.assert_allclose(h, want)


# ------------------------------------------------------------------- diff / nonzero
def test_diff_matches_numpy():
    a = RNG.integers(-5, 5, (3, 5))
    x = xp.asarray(a)
    for n in (0, 1, 2, 6):
        np.testing.assert_array_equal(np.asarray(xp.diff(x, n=n)), np.diff(a, n=n))
    np.testing.assert_array_equal(np.asarray(xp.diff(x, axis=0, prepend=x[:1], append=xp.zeros((2, 5),
                                                                                                 dtype=xp.int64))),
                                  np.diff(a, axis=0, prepend=a[:1], append=np.zeros((2, 5), int)))
    np.testing.assert_array_equal(np.asarray(xp.diff(x, append=7)), np.diff(a, append=7))
    b = np.array([True, True, False, True])
    np.testing.assert_array_equal(np.asarray(xp.diff(xp.asarray(b))), np.diff(b))
    with pytest.raises(ValueError):
        xp.diff(x, n=-1)
    with pytest.raises(ValueError):
        xp.diff(x, prepend=xp.zeros((2, 2), dtype=xp.int64))


def test_nonzero_and_count_nonzero():
    a = np.array([[0, 1.5, 0], [2, 0, -1]])
    x = xp.asarray(a)
    for g, w in zip(xp.nonzero(x), np.nonzero(a)):
        np.testing.assert_array_equal(np.asarray(g), w)
        assert g.dtype == xp.int64
    np.testing.assert_array_equal(np.asarray(xp.nonzero(xp.asarray([0j, 1j]))[0]), [1])
    with pytest.raises(ValueError):
        xp.nonzero(xp.asarray(1.0))
    with pytest.raises(DataDependentShapeError, match="nonzero"):
        jit(xp.nonzero, guards=False)(x)
    assert int(xp.count_nonzero(x)) == 3
    np.testing.assert_array_equal(np.asarray(xp.count_nonzero(x, axis=0, keepdims=True)), [[1, 1, 1]])
    np.testing.assert_array_equal(np.asarray(jit(lambda x: xp.count_nonzero(x, axis=1))(x)), [1, 2])
    assert int(xp.count_nonzero(xp.asarray([True, False, True]))) == 2
