"""Indexing: reads and .at[] updates vs NumPy; traced scalar indices; the gather/scatter/dynamic_slice
primitives' jvp/transpose (finite differences) and batching rules (vmap vs a Python loop)."""
import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import array_namespace as xp
from array_namespace._datadep import DataDependentShapeError
from transforms import ConcretizationTypeError, grad, jit, make_jaxpr, vmap
from finite_diff import fd_grad

A = np.arange(60.0).reshape(3, 4, 5)
X = xp.asarray(A)
ia = np.array


def to_xp_key(k):
    k = k if isinstance(k, tuple) else (k,)
    return tuple(xp.asarray(e) if isinstance(e, np.ndarray) else e for e in k)


KEYS = [
    (1,), (slice(None), -2), (Ellipsis, 3), (None, 1, None), (slice(None, None, -1), slice(1, 4, 2)),
    (ia([0, 2]),), (ia([[0], [2]]), ia([1, 3])), (ia([0, 2]), slice(1, 3), ia([4, -5])),
    (slice(None), ia([[0, 3], [1, 2]])), (Ellipsis, ia([1, -1])), (None, ia([2, 1]), None, 0),
    (1, slice(None), ia([0, 2])), (ia(2), slice(None), ia([1, 2])), (ia(-1),),
    (ia([True, False, True]),), (A[..., 0] > 20,), (A > 30,), (1, A[0, :, 0] > 5), (True,), (False, 1),
    (Ellipsis, True, 2), (ia([], dtype=np.int64),),
]


@pytest.mark.parametrize("key", KEYS, ids=[str(i) for i in range(len(KEYS))])
def test_getitem_matches_numpy(key):
    got = np.asarray(X[to_xp_key(key)])
    want = A[key]
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


UPDATE_KEYS = [(1,), (slice(None), slice(None, None, -2)), (ia([0, 2]), slice(1, 3), ia([4, -5])),
               (slice(None), ia([[0, 3], [1, 2]])), (1, slice(None), ia([0, 2])), (A > 30,), (ia([2, 0, 2]),),
               (None, ia([1]), 2), (True, 0)]


@pytest.mark.parametrize("key", UPDATE_KEYS, ids=[str(i) for i in range(len(UPDATE_KEYS))])
def test_updates_match_numpy(key):
    shape = A[key].shape
    v = np.arange(1.0, 1.0 + np.prod(shape)).reshape(shape) + 100
    kx, vx = to_xp_key(key), xp.asarray(v)
    dup = any(isinstance(k, np.ndarray) and k.dtype != bool and len(np.unique(k)) < k.size for k in key)
    if not dup:
        b = A.copy()
        b[key] = v
        np.testing.assert_array_equal(np.asarray(X.at[kx].set(vx)), b)
        y = xp.asarray(A, copy=True)
        y[kx] = vx
        np.testing.assert_array_equal(np.asarray(y), b)
        if key is UPDATE_KEYS[2]:
            b = A.copy()
            b[key] = A[key] / v
            np.testing.assert_allclose(np.asarray(X.at[kx].divide(vx)), b)
    modes = [("add", np.add), ("subtract", np.subtract), ("multiply", np.multiply), ("min", np.minimum),
             ("max", np.maximum)]
    for mode, ufunc in (modes if any(key is UPDATE_KEYS[j] for j in (1, 6)) else modes[:1]):
        b = A.copy()
        ufunc.at(b, key, v if mode != "min" else v - 130)
        got = getattr(X.at[kx], mode)(xp.asarray(v if mode != "min" else v - 130))
        np.testing.assert_allclose(np.asarray(got), b, err_msg=mode)
    # a broadcast scalar value
    b = A.copy()
    b[key] = -1.0
    np.testing.assert_array_equal(np.asarray(X.at[kx].set(-1.0)), b)


@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.data())
def test_integer_array_indexing_hypothesis(shape, data):
    a = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    key = []
    length = data.draw(st.integers(1, 3))
    for n in shape:
        kind = data.draw(st.sampled_from(["int", "slice", "arr"]))
        if kind == "int":
            key.append(data.draw(st.integers(-n, n - 1)))
        elif kind == "slice":
            key.append(slice(data.draw(st.integers(0, n)), None, data.draw(st.sampled_from([1, 2, -1]))))
        else:
            key.append(ia(data.draw(st.lists(st.integers(-n, n - 1), min_size=length, max_size=length))))
    key = tuple(key)
    np.testing.assert_array_equal(np.asarray(xp.asarray(a)[to_xp_key(key)]), a[key])


def test_static_out_of_bounds_raise_index_error():
    with pytest.raises(IndexError):
        X[3]
    with pytest.raises(IndexError):
        X[0, -5]
    with pytest.raises(IndexError):
        X[xp.asarray([0, 3])]
    with pytest.raises(IndexError):
        X[xp.asarray(-4)]
    with pytest.raises(IndexError):
        X[0, 0, 0, 0]
    with pytest.raises(IndexError):
        X[..., ...]
    with pytest.raises(IndexError):
        X[xp.asarray([True, False])]      # mask shape mismatch
    with pytest.raises(IndexError):
        X[xp.asarray([0.5])]
    with pytest.raises(IndexError):
        X.at[xp.asarray([5])].set(1.0)
    with pytest.raises(ValueError):
        X.at[0].set(xp.ones((2, 5)))


def test_traced_scalar_index_reads_and_updates_under_jit():
    f = jit(lambda x, i: x[i, 1:3])
    for i in (0, 2, -1, -3):
        np.testing.assert_array_equal(np.asarray(f(X, xp.asarray(i))), A[i, 1:3])
    # out of range: a jit called with concrete arrays raises eager's IndexError (whether the index is inside is
    # guarded: an in-range call after it runs the compiled variant again); strict jit cannot know, and clamps
    # (documented): i + n for negatives, then into [0, n - 1]
    for i in (7, -9):
        with pytest.raises(IndexError, match=f"index {i} is out of bounds for axis 0 with size 3"):
            f(X, xp.asarray(i))
    traced = f.trace_count
    np.testing.assert_array_equal(np.asarray(f(X, xp.asarray(1))), A[1, 1:3])
    assert f.trace_count == traced
    strict = jit(lambda x, i: x[i, 1:3], guards=False)
    np.testing.assert_array_equal(np.asarray(strict(X, xp.asarray(7))), A[2, 1:3])
    np.testing.assert_array_equal(np.asarray(strict(X, xp.asarray(-9))), A[0, 1:3])
    g = jit(lambda x, i, j: x[i, :, j])
    np.testing.assert_array_equal(np.asarray(g(X, xp.asarray(1), xp.asarray(-2))), A[1, :, -2])
    h = jit(lambda x, i: x.at[i, 1:3].add(1.0))
    b = A.copy()
    b[2, 1:3] += 1
    np.testing.assert_array_equal(np.asarray(h(X, xp.asarray(2))), b)
    k = jit(lambda x, i: x.at[i, ::-2].set(0.0))
    b = A.copy()
    b[-1, ::-2] = 0
    np.testing.assert_array_equal(np.asarray(k(X, xp.asarray(-1))), b)
    m = jit(lambda x, i: x.at[xp.asarray([0, 2]), i].multiply(2.0))
    b = A.copy()
    b[[0, 2], 1] *= 2
    np.testing.assert_array_equal(np.asarray(m(X, xp.asarray(1))), b)


@pytest.mark.parametrize("dt", ["uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64"])
def test_traced_indices_of_every_integer_dtype_are_checked_as_eagerly(dt):
    """The bounds check of a traced index works in int64: -n and n fit no unsigned dtype (an OverflowError
    for every uint index under jit) and n > 127 no int8 (x[int8 index] of a 300-element x raised there)."""
    x, big = xp.arange(5.0), xp.arange(300.0)
    hi = min(np.iinfo(dt).max, 299)
    for a, vals in ((x, [0, 1, 4]), (big, [0, hi, 2]), (x, [0, 5]), (x, [np.iinfo(dt).max])):
        i = xp.asarray(np.array(vals, dtype=dt))
        for way, f in (("eager", lambda v, j: v[j]), ("jit", jit(lambda v, j: v[j])),
                       ("take", jit(lambda v, j: xp.take(v, j))), ("vmap", lambda v, j: vmap(lambda k: v[k])(j))):
            try:   # (by the indices' values: NumPy casts a uint64 index to intp, so its 2**64 - 1 reads x[-1])
                want = np.asarray(a)[[v if v < 2**63 else a.shape[0] for v in vals]]
            except IndexError:
                with pytest.raises(IndexError, match="out of bounds"):
                    f(a, i)
                continue
            np.testing.assert_array_equal(np.asarray(f(a, i)), want, err_msg=f"{dt} {way} {vals}")


def test_traced_integer_arrays_under_jit():
    f = jit(lambda x, i, j: (x[i, :, j], x.at[i, 0, j].add(1.0)))
    i, j = ia([[0, -1], [2, 1]]), ia([4, -5])
    r, u = f(X, xp.asarray(i), xp.asarray(j))
    np.testing.assert_array_equal(np.asarray(r), A[i, :, j])
    b = A.copy()
    np.add.at(b, (i, 0, j), 1.0)
    np.testing.assert_array_equal(np.asarray(u), b)
    with pytest.raises(IndexError, match="index 9 is out of bounds for axis 0 with size 3"):   # as eagerly
        f(X, xp.asarray(ia([[9, -9]])), xp.asarray(ia([7, -7])))
    strict = jit(lambda x, i, j: x[i, :, j], guards=False)   # (nothing known: clamped, never an error)
    r = strict(X, xp.asarray(ia([[9, -9]])), xp.asarray(ia([7, -7])))
    np.testing.assert_array_equal(np.asarray(r), A[[[2, 0]], :, [4, 0]])


def test_setitem_inside_jit():
    def f(x, i):
        y = x * 1.0
        y[i] = 0.0
        y[xp.asarray([0, 1]), 0] = -1.0
        return y
    b = A.copy()
    b[1] = 0
    b[[0, 1], 0] = -1
    np.testing.assert_array_equal(np.asarray(jit(f)(X, xp.asarray(1))), b)


def test_static_unit_step_writes_under_a_trace_touch_only_their_window():
    """x[1, 2] = v under jit is one dynamic_update_slice of its window, not a select over the whole array
    (a loop of such writes made XLA's compile time explode: scikit-learn's GaussianMixture, issue 25)."""
    def f(x, v):
        y = x * 1.0
        y[1, 2] = v[0]
        y[0, 1:3, ::-1] = v[1:]
        y[2, ::2, 0] = v[0]   # (a strided window: its own lowering)
        return y
    v = np.arange(6.0)
    jaxpr = make_jaxpr(f)(X, xp.asarray(v))
    prims = [e.prim.name for e in jaxpr.jaxpr.eqns]
    assert prims.count("dynamic_update_slice") == 2 and prims.count("select_n") == 1
    b = A * 1.0
    b[1, 2] = v[0]
    b[0, 1:3, ::-1] = v[1:]
    b[2, ::2, 0] = v[0]
    np.testing.assert_array_equal(np.asarray(jit(f)(X, xp.asarray(v))), b)
    kept = np.ones(A.shape)
    kept[1, 2] = kept[0, 1:3, ::-1] = kept[2, ::2, 0] = 0.0
    g = grad(lambda x: xp.sum(f(x, xp.asarray(v)) ** 2))(X)   # (dynamic_update_slice's transpose)
    np.testing.assert_array_equal(np.asarray(g), 2 * A * kept)


def test_boolean_mask_is_eager_only():
    with pytest.raises(DataDependentShapeError, match="__getitem__"):
        jit(lambda x: x[x > 3.0], guards=False)(X)
    with pytest.raises(ConcretizationTypeError):
        vmap(lambda x: x[x > 3.0])(X)
    # under grad the mask is concrete: fine
    g = grad(lambda x: xp.sum(x[x > 30.0] ** 2))(X)
    np.testing.assert_allclose(np.asarray(g), np.where(A > 30, 2 * A, 0))


def test_vmap_indexing_vs_loop():
    rng = np.random.default_rng(0)
    idx = rng.integers(-3, 3, (4, 2))
    got = vmap(lambda i: X[i, 1])(xp.asarray(idx))
    np.testing.assert_array_equal(np.asarray(got), np.stack([A[i, 1] for i in idx]))
    got = vmap(lambda i: X[0, i[0], i[1]])(xp.asarray(idx))
    np.testing.assert_array_equal(np.asarray(got), np.stack([A[0, i[0], i[1]] for i in idx]))
    xs = rng.standard_normal((4, 3, 5))
    got = vmap(lambda x, i: x[i].at[i[0] % 2].add(1.0))(xp.asarray(xs), xp.asarray(idx))
    want = []
    for x, i in zip(xs, idx):
        r = x[i].copy()
        r[i[0] % 2] += 1
        want.append(r)
    np.testing.assert_allclose(np.asarray(got), np.stack(want))


# ------------------------------------------------------------------- primitive rules
RNG = np.random.default_rng(1)
P0 = RNG.standard_normal((4, 5))
IDX = xp.asarray([[0, 3], [2, 2], [-1, 0]])
_DS = jit(lambda x, i: x[i, 1:3])
_DUS = jit(lambda x, i: x.at[i, 1:3].set(x[0, :2] ** 2))
GRAD_FNS = {
    "gather": lambda x: xp.sum(xp.sin(x[IDX, 1:4])),
    "gather_cols": lambda x: xp.sum(xp.sin(x[:, xp.asarray([4, 0, 4])]) * xp.arange(3.0)),
    "scatter_add": lambda x: xp.sum(xp.sin(xp.zeros((4, 5)).at[IDX[:2]].add(x[:2, :]))),
    "scatter_set": lambda x: xp.sum(xp.sin(x.at[xp.asarray([1, 3])].set(x[0] * 2))),
    "scatter_mul": lambda x: xp.sum(xp.sin(x.at[xp.asarray([1, 3])].multiply(x[0] * 2))),
    "scatter_max": lambda x: xp.sum(xp.sin(x.at[xp.asarray([1, 3, 1])].max(x[:3] * 2))),
    "scatter_min": lambda x: xp.sum(xp.sin(x.at[xp.asarray([0, 2]), 1:].min(x[1:3, :4]))),
    "dynamic_slice": lambda x: xp.sum(xp.sin(_DS(x, xp.asarray(2)))),
    "dynamic_update_slice": lambda x: xp.sum(xp.sin(_DUS(x, xp.asarray(2)))),
    "take_along_axis": lambda x: xp.sum(xp.sin(xp.take_along_axis(x, xp.asarray([[1], [0], [3], [3]]), axis=1))),
}


@pytest.mark.parametrize("name", list(GRAD_FNS))
def test_grad_vs_finite_differences(name):
    f = GRAD_FNS[name]
    want = fd_grad(f, P0)
    np.testing.assert_allclose(np.asarray(grad(f)(xp.asarray(P0))), want, atol=1e-6)
    if name in ("gather", "scatter_add", "scatter_max"):
        np.testing.assert_allclose(np.asarray(jit(grad(f))(xp.asarray(P0))), want, atol=1e-6)


B = 3
XB = RNG.standard_normal((B, 4, 5))
IB = RNG.integers(-4, 4, (B, 2, 3))
UB = RNG.standard_normal((B, 2, 3, 5))
SB = RNG.integers(-6, 6, (B,))
VMAP_CASES = {
    "gather": (lambda x, i: x[i], [XB, IB]),
    "gather_window": (lambda x, i: x[:, i[0]], [XB, IB]),
    "scatter_add": (lambda x, i, u: x.at[i].add(u), [XB, IB, UB]),
    "scatter_set": (lambda x, i, u: x.at[i].set(u), [XB, np.tile(ia([[0, 1, 2], [3, -1, -2]]), (B, 1, 1)), UB]),
    "scatter_max": (lambda x, i, u: x.at[i[0], 1:].max(u[0, :, 1:]), [XB, IB, UB]),
    "dynamic_slice": (lambda x, i: x[i, 2:4], [XB, SB]),
    "dynamic_update_slice": (lambda x, i, u: x.at[i, 1:3].set(u[0, 0, :2]), [XB, SB, UB]),
    "strided_dynamic_update": (lambda x, i, u: x.at[i, ::2].multiply(u[0, 0, :3]), [XB, SB, UB]),
    "take_along_axis": (lambda x, i: xp.take_along_axis(x, i[:, :1] % 4, axis=0), [XB, IB]),
}


@pytest.mark.parametrize("name", list(VMAP_CASES))
def test_vmap_rules_vs_loop(name):
    f, args = VMAP_CASES[name]
    for axes in itertools.product([0, None], repeat=len(args)):
        if all(a is None for a in axes):
            continue
        ins = [xp.asarray(a if ax == 0 else a[0]) for a, ax in zip(args, axes)]
        want = np.stack([np.asarray(f(*[xp.asarray(a[b] if ax == 0 else a[0]) for a, ax in zip(args, axes)]))
                         for b in range(B)])
        np.testing.assert_allclose(np.asarray(vmap(f, in_axes=axes)(*ins)), want, err_msg=str(axes))
    np.testing.assert_allclose(np.asarray(jit(vmap(f))(*[xp.asarray(a) for a in args])),
                               np.stack([np.asarray(f(*[xp.asarray(a[b]) for a in args])) for b in range(B)]))


def test_take_and_take_along_axis():
    np.testing.assert_array_equal(np.asarray(xp.take(X, xp.asarray([2, 0, -1]), axis=2)),
                                  np.take(A, [2, 0, -1], axis=2))
    np.testing.assert_array_equal(np.asarray(xp.take(xp.arange(5), xp.asarray([4, 1]))), [4, 1])
    with pytest.raises(ValueError):
        xp.take(X, xp.asarray([0]))
    with pytest.raises(TypeError):
        xp.take(X, xp.asarray([0.0]), axis=0)
    idx = np.argsort(A * np.array([1, -1, 1, -1, 1]), axis=1)
    np.testing.assert_array_equal(np.asarray(xp.take_along_axis(X, xp.asarray(idx), axis=1)),
                                  np.take_along_axis(A, idx, axis=1))
    idx = np.array([[[0, -1]]])
    np.testing.assert_array_equal(np.asarray(xp.take_along_axis(X, xp.asarray(idx), axis=-1)),
                                  np.take_along_axis(A, idx % 5, axis=-1))
    with pytest.raises(IndexError):
        xp.take_along_axis(X, xp.asarray([[[5]]]), axis=-1)
    got = jit(lambda x, i: xp.take_along_axis(x, i, axis=0))(X, xp.asarray([[[2, 0, 1, 1, 0]]]))
    np.testing.assert_array_equal(np.asarray(got), np.take_along_axis(A, np.array([[[2, 0, 1, 1, 0]]]), axis=0))


def test_take_and_take_along_axis_out_of_range_raise_where_known_and_clamp_where_abstract():
    """An index out of range raises IndexError eagerly, under vmap and under a jit called with concrete arrays
    (the check is guarded there: a silent clamped read was a wrong value); only abstractly traced (strict jit) is
    it counted from the end when negative, then clamped into range -- the rule the docstrings state (issue 24)."""
    idx = np.array([[[7, -9, -1, 2, 0]]])
    flat = idx.ravel()
    tal = lambda x, i: xp.take_along_axis(x, i, axis=0)   # noqa: E731
    tk = lambda x, i: xp.take(x, i, axis=0)               # noqa: E731
    for way, f in (("eager", lambda g: g), ("jit", jit), ("vmap", lambda g: lambda x, i: vmap(g, in_axes=(None, 0))(
            x, xp.stack([i, i])))):
        with pytest.raises(IndexError, match="take_along_axis"):
            f(tal)(X, xp.asarray(idx))
        with pytest.raises(IndexError, match="index 7 is out of bounds"):
            f(tk)(X, xp.asarray(flat))
    clamped = np.clip(np.where(idx < 0, idx + 3, idx), 0, 2)
    got = jit(tal, guards=False)(X, xp.asarray(idx))
    np.testing.assert_array_equal(np.asarray(got), np.take_along_axis(A, clamped, axis=0))
    got = jit(tk, guards=False)(X, xp.asarray(flat))
    np.testing.assert_array_equal(np.asarray(got), np.take(A, clamped.ravel(), axis=0))
    ok = np.array([[[2, -1, 0, 1, -3]]])
    np.testing.assert_array_equal(np.asarray(jit(tal)(X, xp.asarray(ok))), np.take_along_axis(A, ok, axis=0))
    assert "clamped" in xp.take.__doc__ and "clamped" in xp.take_along_axis.__doc__
