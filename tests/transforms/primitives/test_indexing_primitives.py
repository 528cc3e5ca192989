"""The indexing primitives of src/transforms/primitives/indexing.py bound directly against NumPy
oracles written from their documented semantics: dynamic_slice / dynamic_update_slice with start
indices clamped so the window fits (negative and out-of-range starts), gather with windows, collapsed
dims and batching dims (indices clamped the same way), scatter in every mode ("set", "add", "mul",
"min", "max") with duplicate indices accumulating. Their rules: the transposes (dynamic_slice <->
dynamic_update_slice, gather <-> scatter-add) by the dot-product identity, jvps against finite
differences (scatter-mul, scatter-min/max's tie averaging), and every batching case (operand only,
indices only, both; batched and unbatched starts) against a Python loop."""
import numpy as np
import pytest

import array_namespace as xp
from prim_checks import check_jvp, check_transpose, check_vmap, raw
from transforms import jit, jvp, linear_transpose
from transforms.core import bind
from transforms.primitives import indexing as I
from transforms.primitives.indexing import GatherDims, ScatterDims

# --------------------------------------------------------------------------- NumPy oracles


def _starts(x_shape, sizes, idx, b, index_map, batching):
    start = [0] * len(x_shape)
    for k, od in enumerate(index_map):
        start[od] = int(idx[b + (k,)])
    for od, idim in batching:
        start[od] = b[idim]
    return [min(max(s, 0), n - k) for s, n, k in zip(start, x_shape, sizes)]


def np_gather(x, idx, dn, sizes):
    dn = GatherDims(*dn)
    batch_shape = idx.shape[:-1]
    win = [d for d in range(x.ndim) if d not in dn.collapsed_slice_dims and d not in dn.operand_batching_dims]
    rank = len(batch_shape) + len(win)
    bpos = [d for d in range(rank) if d not in dn.offset_dims]
    shape = [0] * rank
    for p, d in zip(dn.offset_dims, win):
        shape[p] = sizes[d]
    for p, s in zip(bpos, batch_shape):
        shape[p] = s
    out = np.zeros(shape, x.dtype)
    for b in np.ndindex(*batch_shape):
        st = _starts(x.shape, sizes, idx, b, dn.start_index_map,
                     zip(dn.operand_batching_dims, dn.start_indices_batching_dims))
        window = x[tuple(slice(s, s + k) for s, k in zip(st, sizes))].reshape([sizes[d] for d in win])
        for w in np.ndindex(*window.shape):
            o = [0] * rank
            for p, i in zip(bpos, b):
                o[p] = i
            for p, i in zip(dn.offset_dims, w):
                o[p] = i
            out[tuple(o)] = window[w]
    return out


COMBINE = {"set": lambda a, b: b, "add": np.add, "mul": np.multiply, "min": np.minimum, "max": np.maximum}


def np_scatter(x, idx, u, dn, mode):
    dn = ScatterDims(*dn)
    win = [d for d in range(x.ndim) if d not in dn.inserted_window_dims and d not in dn.input_batching_dims]
    sizes = [1] * x.ndim
    for d, ud in zip(win, dn.update_window_dims):
        sizes[d] = u.shape[ud]
    bpos = [d for d in range(u.ndim) if d not in dn.update_window_dims]
    out = x.copy()
    for b in np.ndindex(*idx.shape[:-1]):
        st = _starts(x.shape, sizes, idx, b, dn.scatter_dims_to_operand_dims,
                     zip(dn.input_batching_dims, dn.scatter_indices_batching_dims))
        for w in np.ndindex(*[sizes[d] for d in win]):
            upos = [0] * u.ndim
            for p, i in zip(bpos, b):
                upos[p] = i
            for p, i in zip(dn.update_window_dims, w):
                upos[p] = i
            xpos = list(st)
            for d, i in zip(win, w):
                xpos[d] += i
            out[tuple(xpos)] = COMBINE[mode](out[tuple(xpos)], u[tuple(upos)])
    return out


def np_dynamic_slice(x, starts, sizes):
    st = [min(max(int(s), 0), n - k) for s, n, k in zip(starts, x.shape, sizes)]
    return x[tuple(slice(s, s + k) for s, k in zip(st, sizes))]


def np_dus(x, u, starts):
    st = [min(max(int(s), 0), n - k) for s, n, k in zip(starts, x.shape, u.shape)]
    out = x.copy()
    out[tuple(slice(s, s + k) for s, k in zip(st, u.shape))] = u
    return out


X = np.arange(30, dtype=np.float64).reshape(5, 6) * 0.5 - 4.0
STARTS = [(0, 0), (2, 3), (-3, 1), (4, 9), (-100, 100)]          # negative and past the end: clamped
I32 = lambda v: np.asarray(v, np.int32)                          # noqa: E731


# ------------------------------------------------------------------------ dynamic slices
@pytest.mark.parametrize("starts", STARTS)
def test_dynamic_slice_and_update_clamp_the_start(starts):
    got = np.asarray(bind(I.dynamic_slice_p, raw(X), *(raw(I32(s)) for s in starts), slice_sizes=(2, 4)))
    np.testing.assert_array_equal(got, np_dynamic_slice(X, starts, (2, 4)))
    u = -np.ones((3, 2))
    got = np.asarray(bind(I.dynamic_update_slice_p, raw(X), raw(u), *(raw(I32(s)) for s in starts)))
    np.testing.assert_array_equal(got, np_dus(X, u, starts))
    f = jit(lambda a, i, j: bind(I.dynamic_slice_p, a._v, i._v, j._v, slice_sizes=(2, 4)))
    np.testing.assert_array_equal(np.asarray(f(xp.asarray(X), xp.asarray(I32(starts[0])), xp.asarray(I32(starts[1])))),
                                  np_dynamic_slice(X, starts, (2, 4)))


@pytest.mark.parametrize("starts", STARTS)
def test_dynamic_slice_and_update_transposes(starts):
    s = [raw(I32(v)) for v in starts]
    ft = check_transpose(lambda a: bind(I.dynamic_slice_p, a._v, *s, slice_sizes=(2, 4)), X)
    assert np.count_nonzero(ft) <= 8             # the cotangent lands in the clamped window only
    # dynamic_update_slice is linear in (operand, update) jointly
    rng = np.random.default_rng(1)
    x, u = rng.standard_normal((5, 6)), rng.standard_normal((3, 2))
    f = lambda a, b: bind(I.dynamic_update_slice_p, a._v, b._v, *s)
    y = np_dus(x, u, starts)
    c = rng.standard_normal(y.shape)
    cx, cu = linear_transpose(f, xp.asarray(x), xp.asarray(u))(xp.asarray(c))
    np.testing.assert_allclose(np.sum(y * c), np.sum(x * np.asarray(cx)) + np.sum(u * np.asarray(cu)), rtol=1e-12)
    np.testing.assert_array_equal(np.asarray(cu), np_dynamic_slice(c, starts, (3, 2)))


def test_dynamic_slice_and_update_jvp():
    s = [raw(I32(2)), raw(I32(-1))]
    check_jvp(lambda a: bind(I.dynamic_slice_p, a._v, *s, slice_sizes=(3, 2)),
              lambda a: np_dynamic_slice(a, (2, -1), (3, 2)), [X])
    u = np.ones((2, 2))
    check_jvp(lambda a, b: bind(I.dynamic_update_slice_p, a._v, b._v, *s), lambda a, b: np_dus(a, b, (2, -1)), [X, u])
    check_jvp(lambda a, b: bind(I.dynamic_update_slice_p, a._v, b._v, *s), lambda a, b: np_dus(a, b, (2, -1)),
              [X, u], diff=[1])


def test_dynamic_slice_batching_starts_batched_or_not():
    xs = np.stack([X + 10 * i for i in range(4)])
    i0, i1 = I32([0, 3, -2, 4]), I32([5, 1, 2, -7])
    f = lambda a, i, j: bind(I.dynamic_slice_p, a._v, i._v, j._v, slice_sizes=(2, 3))
    check_vmap(f, [xs, I32(1), I32(2)], [0, None, None])       # static starts: one slice of the batch
    check_vmap(f, [xs, i0, i1], [0, 0, 0])                     # both batched: a gather
    check_vmap(f, [X, i0, I32(2)], [None, 0, None])            # only one start batched
    check_vmap(f, [np.moveaxis(xs, 0, 2), i0, i1], [2, 0, 0])
    g = lambda a, u, i, j: bind(I.dynamic_update_slice_p, a._v, u._v, i._v, j._v)
    us = -np.arange(24.0).reshape(4, 3, 2)
    check_vmap(g, [xs, us, I32(1), I32(5)], [0, 0, None, None])
    check_vmap(g, [xs, us, i0, i1], [0, 0, 0, 0])              # batched starts: a scatter
    check_vmap(g, [X, us[0], i0, I32(0)], [None, None, 0, None])
    check_vmap(g, [xs, us[0], i0, i1], [0, None, 0, 0])


def test_dynamic_slice_errors():
    with pytest.raises(TypeError, match="needs 2 start indices"):
        bind(I.dynamic_slice_p, raw(X), raw(I32(0)), slice_sizes=(1, 1))
    with pytest.raises(TypeError, match="integer dtype, got float64"):
        bind(I.dynamic_slice_p, raw(X), raw(I32(0)), raw(np.float64(0)), slice_sizes=(1, 1))
    with pytest.raises(IndexError, match="size 7 out of range for axis 1 of size 6"):
        bind(I.dynamic_slice_p, raw(X), raw(I32(0)), raw(I32(0)), slice_sizes=(1, 7))
    with pytest.raises(TypeError, match="update dtype float32 != operand dtype float64"):
        bind(I.dynamic_update_slice_p, raw(X), raw(np.ones((1, 1), np.float32)), raw(I32(0)), raw(I32(0)))


# --------------------------------------------------------------------------------- gather
TAKE_ROWS = (GatherDims((1,), (0,), (0,)), (1, 6))                       # x[idx]
WINDOWS = (GatherDims((1, 2), (), (0, 1)), (2, 3))                       # 2x3 windows at 2-d starts
COLUMNS = (GatherDims((0,), (1,), (1,)), (5, 1))                         # x[:, idx], window first
GATHERS = {
    "take_rows": (TAKE_ROWS, I32([[0], [4], [2], [2], [-3], [9]])),        # duplicates, clamped
    "windows": (WINDOWS, I32([[0, 0], [3, 3], [4, 5], [-1, 2]])),
    "columns": (COLUMNS, I32([[5], [0], [1]])),
}


@pytest.mark.parametrize("name", list(GATHERS))
def test_gather_values_transpose_jvp(name):
    (dn, sizes), idx = GATHERS[name]
    f = lambda a: bind(I.gather_p, a._v, raw(idx), dimension_numbers=dn, slice_sizes=sizes)
    want = np_gather(X, idx, dn, sizes)
    np.testing.assert_array_equal(np.asarray(f(xp.asarray(X))), want)
    np.testing.assert_array_equal(np.asarray(jit(f)(xp.asarray(X))), want)
    ft = check_transpose(f, X)
    # the transpose is a scatter-add: duplicated indices receive the sum of their cotangents
    c = np.ones(want.shape)
    ones = np.asarray(linear_transpose(f, xp.asarray(X))(xp.asarray(c))[0])
    np.testing.assert_array_equal(ones, np_scatter(np.zeros_like(X), idx, c, I._scatter_dims_of(dn), "add"))
    assert ft.shape == X.shape
    check_jvp(f, lambda a: np_gather(a, idx, dn, sizes), [X])


def test_take_along_axis_batching_dims():
    x = np.arange(24.0).reshape(2, 3, 4)
    idx = np.random.default_rng(0).integers(0, 4, (2, 3, 5)).astype(np.int32)
    got = np.asarray(I.take_along_axis(raw(x), raw(idx), 2))
    np.testing.assert_array_equal(got, np.take_along_axis(x, idx, 2))
    idx0 = np.random.default_rng(1).integers(0, 2, (3, 3, 4)).astype(np.int32)
    np.testing.assert_array_equal(np.asarray(I.take_along_axis(raw(x), raw(idx0), 0)), np.take_along_axis(x, idx0, 0))


@pytest.mark.parametrize("name", list(GATHERS))
def test_gather_batching_operand_indices_both(name):
    (dn, sizes), idx = GATHERS[name]
    f = lambda a, i: bind(I.gather_p, a._v, i._v, dimension_numbers=dn, slice_sizes=sizes)
    xs = np.stack([X * (i + 1) for i in range(3)], axis=1)
    rng = np.random.default_rng(2)
    idxs = np.stack([np.roll(idx, i, axis=0) + I32(rng.integers(-1, 2, idx.shape)) for i in range(3)])
    check_vmap(f, [xs, idx], [1, None])           # operand only: a leading window dim
    check_vmap(f, [X, idxs], [None, 0])           # indices only: a leading batch dim
    check_vmap(f, [xs, idxs], [1, 0])             # both: paired batching dims
    check_vmap(f, [xs, np.moveaxis(idxs, 0, 1)], [1, 1], out_axes=1)


def test_gather_errors():
    dn, sizes = TAKE_ROWS
    with pytest.raises(TypeError, match="gather indices must have an integer dtype"):
        bind(I.gather_p, raw(X), raw(np.zeros((2, 1))), dimension_numbers=dn, slice_sizes=sizes)
    with pytest.raises(TypeError, match="must end in the index vector of length 1"):
        bind(I.gather_p, raw(X), raw(I32(np.zeros((2, 2)))), dimension_numbers=dn, slice_sizes=sizes)
    with pytest.raises(TypeError, match="collapsed dim 0 must have slice size 1"):
        bind(I.gather_p, raw(X), raw(I32(np.zeros((2, 1)))), dimension_numbers=dn, slice_sizes=(2, 6))


# -------------------------------------------------------------------------------- scatter
ROWS = ScatterDims((1,), (0,), (0,))        # x[idx] op= u, u rows of 6
POINTS = ScatterDims((), (0, 1), (0, 1))    # x[i, j] op= u, one element each
DUP_ROWS = I32([[1], [3], [1], [-2], [7]])  # duplicates; -2 -> 0, 7 -> 4 (clamped)
DUP_POINTS = I32([[0, 0], [2, 5], [0, 0], [2, 5], [4, 1], [9, -9]])


def _upd(shape, seed=0):
    return np.round(np.random.default_rng(seed).uniform(-5, 5, shape), 1)


@pytest.mark.parametrize("mode", ["add", "mul", "min", "max"])
@pytest.mark.parametrize("dtype", ["float64", "float32", "int32"])
def test_scatter_modes_with_duplicates(mode, dtype):
    x = X.astype(dtype)
    for dn, idx in ((ROWS, DUP_ROWS), (POINTS, DUP_POINTS)):
        u = _upd((len(idx), 6) if dn is ROWS else (len(idx),)).astype(dtype)
        got = np.asarray(bind(I.scatter_p, raw(x), raw(idx), raw(u), dimension_numbers=dn, mode=mode))
        assert got.dtype == dtype
        np.testing.assert_allclose(got, np_scatter(x, idx, u, dn, mode), rtol=1e-6, err_msg=f"{mode} {dn}")


def test_scatter_set_unique_indices_and_one_of_the_duplicates_wins():
    u = _upd((3, 6))
    idx = I32([[4], [0], [2]])
    got = np.asarray(bind(I.scatter_p, raw(X), raw(idx), raw(u), dimension_numbers=ROWS, mode="set"))
    np.testing.assert_array_equal(got, np_scatter(X, idx, u, ROWS, "set"))
    idx = I32([[1], [1]])
    got = np.asarray(bind(I.scatter_p, raw(X), raw(idx), raw(u[:2]), dimension_numbers=ROWS, mode="set"))
    assert any(np.array_equal(got[1], r) for r in u[:2])
    np.testing.assert_array_equal(np.delete(got, 1, 0), np.delete(X, 1, 0))


@pytest.mark.parametrize("mode", ["set", "add"])
def test_scatter_set_add_transpose_jointly(mode):
    idx = I32([[4], [0], [2]]) if mode == "set" else DUP_ROWS
    rng = np.random.default_rng(5)
    x, u = rng.standard_normal(X.shape), rng.standard_normal((len(idx), 6))
    f = lambda a, b: bind(I.scatter_p, a._v, raw(idx), b._v, dimension_numbers=ROWS, mode=mode)
    y = np_scatter(x, idx, u, ROWS, mode)
    c = rng.standard_normal(y.shape)
    cx, cu = linear_transpose(f, xp.asarray(x), xp.asarray(u))(xp.asarray(c))
    np.testing.assert_allclose(np.sum(y * c), np.sum(x * np.asarray(cx)) + np.sum(u * np.asarray(cu)), rtol=1e-12)


@pytest.mark.parametrize("mode", ["set", "add", "mul", "min", "max"])
def test_scatter_jvp_vs_finite_differences(mode):
    # distinct values and (for set/mul) unique indices: where every mode is differentiable
    idx = I32([[4], [0], [2]]) if mode in ("set", "mul") else DUP_ROWS
    x = X + np.linspace(0, 0.3, X.size).reshape(X.shape)
    u = _upd((len(idx), 6), seed=3) + np.linspace(0, 0.01, len(idx) * 6).reshape(len(idx), 6)
    f = lambda a, b: bind(I.scatter_p, a._v, raw(idx), b._v, dimension_numbers=ROWS, mode=mode)
    check_jvp(f, lambda a, b: np_scatter(a, idx, b, ROWS, mode), [x, u], rtol=1e-6, atol=1e-7)
    check_jvp(f, lambda a, b: np_scatter(a, idx, b, ROWS, mode), [x, u], diff=[1], rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("mode", ["min", "max"])
def test_scatter_min_max_jvp_averages_tied_winners(mode):
    x = np.array([1.0, 2.0, 3.0])
    idx = I32([[0], [0], [2]])
    u = np.array([1.0, 1.0, 3.0])            # slot 0: x and two updates tie; slot 2: x and one update tie
    tx, tu = np.array([3.0, 5.0, 1.0]), np.array([6.0, 9.0, 4.0])
    f = lambda a, b: bind(I.scatter_p, a._v, raw(idx), b._v, dimension_numbers=ScatterDims((), (0,), (0,)), mode=mode)
    _, tan = jvp(f, (xp.asarray(x), xp.asarray(u)), (xp.asarray(tx), xp.asarray(tu)))
    np.testing.assert_allclose(np.asarray(tan), [(3 + 6 + 9) / 3, 5.0, (1 + 4) / 2], rtol=1e-15)


@pytest.mark.parametrize("mode", ["set", "add", "max"])
def test_scatter_batching(mode):
    idx = I32([[4], [0], [2]])
    f = lambda a, i, b: bind(I.scatter_p, a._v, i._v, b._v, dimension_numbers=ROWS, mode=mode)
    xs, us = np.stack([X + i for i in range(3)], axis=2), np.stack([_upd((3, 6), seed=i) for i in range(3)])
    idxs = np.stack([idx, np.roll(idx, 1), I32([[1], [3], [-4]])])
    check_vmap(f, [xs, idx, us], [2, None, 0])        # operand and updates: a leading window dim
    check_vmap(f, [xs, idxs, us], [2, 0, 0])          # indices too: batching dims
    check_vmap(f, [X, idxs, us[0]], [None, 0, None])  # only the indices
    check_vmap(f, [X, idx, us], [None, None, 0])      # only the updates


def test_scatter_errors():
    u = np.ones((2, 6))
    with pytest.raises(ValueError, match="scatter mode must be one of"):
        bind(I.scatter_p, raw(X), raw(I32([[0], [1]])), raw(u), dimension_numbers=ROWS, mode="sub")
    with pytest.raises(TypeError, match="updates dtype float32 != operand dtype float64"):
        bind(I.scatter_p, raw(X), raw(I32([[0], [1]])), raw(u.astype(np.float32)), dimension_numbers=ROWS, mode="add")
    with pytest.raises(TypeError, match=r"updates shape \(2, 6, 1\) does not match the indexed shape \(2, 6\)"):
        bind(I.scatter_p, raw(X), raw(I32([[0], [1]])), raw(np.ones((2, 6, 1))), dimension_numbers=ROWS, mode="add")
    with pytest.raises(NotImplementedError, match="'mul' is not linear"):
        linear_transpose(lambda a: bind(I.scatter_p, a._v, raw(I32([[0], [1]])), raw(u), dimension_numbers=ROWS,
                                        mode="mul"), xp.asarray(X))(xp.asarray(X))
