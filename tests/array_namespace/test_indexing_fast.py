"""Eager basic indexing (Python ints, slices, None, Ellipsis) runs from a plan cached per (shape, key)
(_indexing_key.basic_plan). Oracles: NumPy for values (bit for bit: -0.0, NaN, inf, every dtype), jit of
the same function for eager == compiled, NumPy's and jit's exception types for bad keys (a failing key
is never cached), and the runtime's compile counter for "new shapes compile nothing"."""
import numpy as np
import pytest

import array_namespace as xp
from array_namespace import _indexing_key as K
from transforms import jit
from xla import host, runtime

SPECIAL = np.array([np.nan, -0.0, np.inf, -np.inf, 1.5, -2.25, 0.0, 3e300, -1e-300, 7.0])


def _base(dtype, shape=(3, 4, 5)):
    n = int(np.prod(shape))
    if dtype == np.bool_:
        return (np.arange(n) % 3 == 0).reshape(shape)
    if np.dtype(dtype).kind in "iu":
        return (np.arange(n) * 7 - 20).astype(dtype).reshape(shape)
    with np.errstate(all="ignore"):   # (3e300 overflows float32 to inf: one more special value)
        a = np.resize(SPECIAL, n).astype(dtype)
        if np.dtype(dtype).kind == "c":
            a.imag = np.resize(SPECIAL[::-1], n)
    return a.reshape(shape)


def _same(got, want, signed_zeros=True):
    got = np.asarray(got)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    if signed_zeros and want.dtype.kind in "fc":   # -0.0 stays -0.0 (a NaN's sign means nothing)
        for g, w in [(got.real, want.real), (got.imag, want.imag)]:
            num = ~np.isnan(w)
            np.testing.assert_array_equal(np.signbit(g[num]), np.signbit(w[num]))


DTYPES = [np.float64, np.float32, np.int32, np.int64, np.uint8, np.bool_, np.complex128]

READ_KEYS = [1, -1, (0, 2), (2, -1, 4), slice(1, 3), (slice(None), 2), (Ellipsis, -1), (None, 1),
             (1, None, slice(0, 5, 1)), slice(2, 2), (slice(3, 1),), slice(-100, 100), (), Ellipsis,
             (slice(2, 1, -1), 0), (slice(None, None, -1),), (slice(0, 4, 2), 1), (Ellipsis, None),
             (0, slice(1, None), slice(None, -1)), (slice(0, 1), slice(3, 4), slice(4, 5))]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_basic_reads_match_numpy_and_jit(dtype):
    a = _base(dtype)
    x = xp.asarray(a)
    for key in READ_KEYS:
        want = a[key]
        _same(x[key], want)
        _same(x[key], want)   # second call: from the cached plan
        _same(jit(lambda v, key=key: v[key])(x), want)


def test_the_same_key_on_other_shapes():
    for shape in [(5,), (6,), (2, 3), (4, 1, 2), (3, 4, 5)]:
        a = np.arange(float(np.prod(shape))).reshape(shape)
        x = xp.asarray(a)
        for key in [1, -1, slice(1, 3), (Ellipsis, 0), (1, None)]:
            _same(x[key], a[key])


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_an_element_of_a_vector_is_a_copy_with_its_dtype(dtype):
    """x[i] of a 1-D array (Array.__getitem__'s direct read): NumPy's element, 0-d, of x's dtype, at every i
    and -i, and a copy -- writes into x after the read, and into the element, leave the other as it was."""
    a = _base(dtype).reshape(-1)[:7]
    x = xp.asarray(a, copy=True)
    elems = [x[i] for i in range(-7, 7)]
    for i, e in zip(range(-7, 7), elems):
        _same(e, a[i][()])
    x[2] = x[5]
    _same(elems[9], a[2][()])   # (read before the write: unchanged)
    e = x[3]
    e[...] = x[6]
    _same(x, np.concatenate([a[:2], a[5:6], a[3:]]))

_NP_OP = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
          "power": np.power, "min": np.minimum, "max": np.maximum}

UPDATE_KEYS = [1, -1, (0, 2), (2, -1, 4), slice(1, 3), (slice(None), 2), (Ellipsis, -1), (None, 1),
               (slice(0, 1), slice(3, 4), slice(4, 5)), (), Ellipsis, (slice(2, 1, -1), 0),
               (slice(None, None, -1), 1), (slice(0, 4, 2),), slice(2, 2)]


def _values(a, key):
    """Values for x[key] op= v: a Python scalar, a 0-d array, one of the window's shape, and a row that
    broadcasts against it."""
    shape = a[key].shape
    n = int(np.prod(shape))
    full = _base(a.dtype, (n + 1,))[::-1][:n].reshape(shape)
    one = _base(a.dtype, (3,))[1]
    out = [one.item(), np.asarray(one), full]
    if len(shape) >= 1:
        out.append(_base(a.dtype, (shape[-1] + 2,))[2:])
    return out


MODES = ["set", "add", "subtract", "multiply", "divide", "power", "min", "max"]
UPDATE_DTYPES = [np.float64, np.float32, np.int32, np.bool_, np.complex128]


def _cases(mode, dtype):
    """(x, [(key, value as given, value as NumPy)]) for mode on dtype; arithmetic on finite values only
    (the special values of the arithmetic itself are the op table's business, not indexing's)."""
    if (mode == "divide" and dtype in (np.int32, np.bool_)) or (mode in ("min", "max") and dtype == np.complex128) \
            or (mode in ("subtract", "divide", "power") and dtype == np.bool_):
        return None, []   # refused with a TypeError (test_update_errors_are_the_same_eager_and_under_jit)
    a = _base(dtype)
    if mode not in ("set", "min", "max") and np.dtype(dtype).kind in "fc":
        a = np.where(np.isfinite(a), a, 0.5)
    if mode == "power":
        a = (np.abs(a) % 4).astype(dtype)
    out = []
    for key in UPDATE_KEYS:
        for v in _values(a, key):
            if mode not in ("set", "min", "max") and np.dtype(dtype).kind in "fc":
                v = np.where(np.isfinite(v), v, 2.0).astype(dtype) if isinstance(v, np.ndarray) else \
                    (v if np.isfinite(v) else 2.0)
            if mode == "power":
                v = (np.abs(v) % 3).astype(dtype) if isinstance(v, np.ndarray) else abs(v) % 3
            out.append((key, xp.asarray(v) if isinstance(v, np.ndarray) else v, v))
    return a, out


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", UPDATE_DTYPES, ids=lambda d: np.dtype(d).name)
def test_basic_updates_match_numpy(mode, dtype):
    a, cases = _cases(mode, dtype)
    if a is None:
        return
    x = xp.asarray(a)
    for key, vx, v in cases:
        want = a.copy()
        if mode == "set":
            want[key] = v
        else:
            with np.errstate(all="ignore"):
                want[key] = _NP_OP[mode](a[key], v).astype(dtype)
        got = getattr(x.at[key], mode)(vx)
        if mode in ("set", "min", "max") or dtype in (np.int32, np.bool_):
            _same(got, want, signed_zeros=mode == "set")   # (NumPy's min(0.0, -0.0): either zero)
        else:   # arithmetic: NumPy's ufuncs and XLA's may differ in the last bit (power, complex)
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6 if dtype == np.float32 else 1e-13)
            assert np.asarray(got).dtype == want.dtype


JIT_GRID = [("set", np.float64), ("set", np.int32), ("set", np.bool_), ("set", np.complex128), ("add", np.float32),
            ("subtract", np.int32), ("multiply", np.bool_), ("divide", np.float64), ("power", np.float64),
            ("min", np.float64), ("max", np.int32)]


@pytest.mark.parametrize("mode,dtype", JIT_GRID, ids=[f"{m}-{np.dtype(d).name}" for m, d in JIT_GRID])
def test_basic_updates_eager_equal_jit(mode, dtype):
    a, cases = _cases(mode, dtype)
    cases = [c for c in cases if not isinstance(c[2], np.ndarray) or c[2].ndim == 0 or c[1].shape == a[c[0]].shape]
    x = xp.asarray(a)
    vals = [vx for _, vx, _ in cases]
    eager = [getattr(x.at[key], mode)(vx) for key, vx, _ in cases]
    staged = jit(lambda x, vals: [getattr(x.at[key], mode)(v) for (key, _, _), v in zip(cases, vals)])(x, vals)
    for e, s in zip(eager, staged):
        _same(np.asarray(s), np.asarray(e))


def test_setitem_eager_matches_numpy_and_jit():
    a = _base(np.float64)

    def f(x, v):
        x = xp.asarray(x, copy=True)
        x[1, 2] = v[0]
        x[0] = 5.0
        x[..., 4] = -1.0
        x[2, 1:3, None] = v[3:8]
        return x

    want = a.copy()
    v = np.arange(10.0) - 3.5
    want[1, 2] = v[0]
    want[0] = 5.0
    want[..., 4] = -1.0
    want[2, 1:3, None] = v[3:8]
    _same(f(xp.asarray(a), xp.asarray(v)), want)
    _same(jit(f)(xp.asarray(a), xp.asarray(v)), want)


def test_writes_into_a_slice_reach_the_array_as_numpy_views_do():
    """scikit-learn's GaussianMixture: c = cov[k]; c[i, i] = d[i] for each i (a write through a view)."""
    rng = np.random.default_rng(0)
    a, d = rng.standard_normal((3, 6, 6)), rng.standard_normal(6)
    x, dx = xp.asarray(a, copy=True), xp.asarray(d)
    want = a.copy()
    for k in range(3):
        c, cx = want[k, :, :], x[k, :, :]
        dd = np.diagonal(c) + d
        ddx = xp.linalg.diagonal(cx) + dx
        for i in range(6):
            c[i, i] = dd[i]
            cx[i, i] = ddx[i]
    _same(x, want)


BAD_READS = [((5,), 5, IndexError), ((5,), -6, IndexError), ((2, 3), (0, 3), IndexError),
             ((2, 3), (0, 0, 0), IndexError), ((5,), slice(0, 3, 0), ValueError), ((5,), 1.5, IndexError),
             ((5,), "a", IndexError), ((5,), (Ellipsis, Ellipsis), IndexError), ((5,), slice(1.0, 2), TypeError),
             ((5,), slice(0, "b"), TypeError)]


@pytest.mark.parametrize("shape,key,exc", BAD_READS, ids=[str(i) for i in range(len(BAD_READS))])
def test_read_errors_are_numpys_eager_and_under_jit(shape, key, exc):
    a = np.zeros(shape)
    with pytest.raises(exc):
        a[key]
    x = xp.asarray(a)
    for _ in range(2):   # a failing key is not cached: the second call raises again
        with pytest.raises(exc):
            x[key]
    with pytest.raises(exc):
        jit(lambda v: v[key])(x)
    with pytest.raises(exc):
        x.at[key].set(1.0)
    with pytest.raises(exc):
        jit(lambda v: v.at[key].set(1.0))(x)


def test_a_key_valid_for_one_shape_is_checked_again_on_another():
    _same(xp.asarray(np.arange(6.0))[4], np.float64(4.0))
    for _ in range(2):
        with pytest.raises(IndexError):
            xp.asarray(np.arange(3.0))[4]
        with pytest.raises(IndexError):
            xp.asarray(np.arange(3.0)).at[4].set(0.0)


def test_update_errors_are_the_same_eager_and_under_jit():
    xi, xf, xb = xp.asarray(np.arange(6, dtype=np.int32)), xp.asarray(np.zeros((2, 3))), xp.asarray([True, False])
    cases = [(xi, 1, "set", 1.5, TypeError), (xi, 1, "divide", 2, TypeError),
             (xf, 0, "set", xp.asarray([1.0, 2.0]), ValueError), (xf, (0, 1), "set", xp.asarray([1.0, 2.0]), ValueError),
             (xf, slice(0, 1), "set", xp.ones((2, 3)), ValueError), (xb, 0, "subtract", True, TypeError),
             (xp.asarray(np.zeros(2, np.complex128)), 0, "min", 1.0, TypeError)]
    for x, key, mode, v, exc in cases:
        for _ in range(2):
            with pytest.raises(exc):
                getattr(x.at[key], mode)(v)
        with pytest.raises(exc):
            jit(lambda x, key=key, mode=mode, v=v: getattr(x.at[key], mode)(v))(x)
        if mode == "set":
            y = xp.asarray(x, copy=True)
            with pytest.raises(exc):
                y[key] = v
            _same(y, np.asarray(x))   # a refused write leaves the array as it was


def test_only_python_ints_and_slices_of_them_take_the_plan():
    assert K.basic_key((1, slice(None, 3), None, Ellipsis)) == (1, (None, 3, None), None, Ellipsis)
    assert K.basic_key(2) == (2,)
    for key in [True, (1, False), np.int64(1), (slice(np.int64(1), 2),), [1, 2], (1, xp.asarray(1)), 1.0]:
        assert K.basic_key(key) is None
    x = xp.asarray(np.arange(4.0))
    # bools are not ints here: x[True] adds an axis, x[1] reads an element
    _same(x[True], np.arange(4.0)[True])
    _same(x[1], np.float64(1.0))
    _same(x[np.int64(1)], np.float64(1.0))


@pytest.mark.skipif(host.MODE == "xla", reason="host kernels switched off (ARRAY_NAMESPACE_EAGER=xla)")
def test_eager_basic_indexing_on_new_shapes_compiles_nothing():
    before = runtime.compile_calls[0]
    for n in range(7, 12):
        a = np.arange(float(n * 3)).reshape(n, 3)
        x = xp.asarray(a)
        _same(x[n - 2], a[n - 2])
        _same(x[1:n - 1, 1], a[1:n - 1, 1])
        y = x.at[2, 1].set(-1.0)
        x[0, :] = 9.0
        a2 = a.copy()
        a2[0, :] = 9.0
        _same(x, a2)
        assert float(y[2, 1]) == -1.0
    assert runtime.compile_calls[0] == before


@pytest.mark.parametrize("key", [Ellipsis, (), slice(None), slice(None, None, -1), (slice(0, 3), Ellipsis)])
def test_a_python_scalar_written_over_the_whole_array_keeps_its_dtype_strong(key):
    """x[...] = 1 replaces every element with a weakly typed scalar; x must stay a strong int8 (int8 + uint8
    is int16, as in NumPy -- a weak int8 would give uint8)."""
    u = xp.zeros(3, dtype=xp.uint8)

    def f(x):
        x = xp.asarray(x, copy=True)
        x[key] = 1
        return x, x.at[key].set(2), x.at[key].add(1)

    want = np.zeros(3, np.int8) + np.zeros(3, np.uint8)
    for outs in (f(xp.zeros(3, dtype=xp.int8)), jit(f)(xp.zeros(3, dtype=xp.int8))):
        for o in outs:
            assert o.dtype == xp.int8
            assert (o + u).dtype == xp.int16 == want.dtype


def test_other_keys_on_a_shape_compile_nothing_more():
    """The window's starts are an operand: with or without host kernels (ARRAY_NAMESPACE_EAGER=xla), a new
    key of the same window shape on the same array shape reuses what the first one ran."""
    a = np.arange(24.0).reshape(4, 6)
    x = xp.asarray(a)
    _same(x[0, 1:4], a[0, 1:4])
    _same(x.at[0, 1:4].set(-1.0), np.where((np.arange(4)[:, None] == 0) & (np.arange(6) >= 1) & (np.arange(6) < 4), -1.0, a))
    before = runtime.compile_calls[0]
    for i in range(4):
        for j in range(3):
            _same(x[i, j:j + 3], a[i, j:j + 3])
            b = a.copy()
            b[i, j:j + 3] = -1.0
            _same(x.at[i, j:j + 3].set(-1.0), b)
    assert runtime.compile_calls[0] == before


ADV_KEYS = [(np.array([0, 2]), slice(1, 3), np.array([4, -5])), (slice(None), np.array([[0, 3], [1, 2]])),
            (1, slice(None), np.array([0, 2])), (np.array([2, 0, 2]),), (None, np.array([1]), 2),
            (slice(None, None, -2), np.array([1, 3])), (np.array([[1], [2]]), slice(0, 5, 2)),
            (np.array([-1, 0]), np.array([[0], [3]]), np.array([4, 1])), (Ellipsis, np.array([0, 4, 0]))]


@pytest.mark.parametrize("mode", ["set", "add", "multiply", "min"])
def test_integer_array_keys_eager_equal_numpy_and_jit(mode):
    """Eager integer-array keys stack their (concrete) indices on the host; jit builds them as ops."""
    a = _base(np.float64)
    x = xp.asarray(a)
    keys = [k for k in ADV_KEYS if mode != "set" or not any(  # (set with duplicates: either may win)
        isinstance(e, np.ndarray) and len(np.unique(e)) < e.size for e in k)]
    vals = [np.arange(1.0, 1.0 + a[k].size).reshape(a[k].shape) for k in keys]
    xkeys = [tuple(xp.asarray(e) if isinstance(e, np.ndarray) else e for e in k) for k in keys]
    eager = [getattr(x.at[k], mode)(xp.asarray(v)) for k, v in zip(xkeys, vals)]
    reads = [x[k] for k in xkeys]
    staged = jit(lambda x, vs: [getattr(x.at[k], mode)(v) for k, v in zip(xkeys, vs)])(x, [xp.asarray(v) for v in vals])
    staged_reads = jit(lambda x: [x[k] for k in xkeys])(x)
    op = {"add": np.add, "multiply": np.multiply, "min": np.minimum}.get(mode)
    for k, v, e, s, r, sr in zip(keys, vals, eager, staged, reads, staged_reads):
        want = a.copy()
        if op is None:
            want[k] = v
        else:
            op.at(want, k, v)
        _same(e, want, signed_zeros=mode == "set")
        _same(np.asarray(s), np.asarray(e))
        _same(r, a[k])
        _same(np.asarray(sr), a[k])


@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.bool_], ids=lambda d: np.dtype(d).name)
def test_keys_with_new_ints_each_call_read_and_write_as_numpy(dtype):
    # x[i] in a Python loop: each i is new; the plan comes from the key's form (ints as placeholders)
    a = _base(dtype)
    x = xp.asarray(a)
    forms = [lambda i, j: i, lambda i, j: (i, j), lambda i, j: (i, slice(1, 3), j),
             lambda i, j: (Ellipsis, j), lambda i, j: (None, i, Ellipsis, j), lambda i, j: (slice(None, None, -1), j)]
    for form in forms:
        for i in range(-3, 3):
            for j in (-4, -1, 0, 3):
                key = form(i, j)
                _same(x[key], a[key])
                y, b = xp.asarray(a, copy=True), a.copy()
                y[key] = a[(0,) * a.ndim]
                b[key] = a[(0,) * a.ndim]
                _same(y, b)
    for key in [3, -4, (0, 4), (0, -5), (Ellipsis, 5), (0, 0, -6)]:   # out of bounds after the form is known
        with pytest.raises(IndexError, match="out of bounds"):
            x[key]
        with pytest.raises(IndexError, match="out of bounds"):
            x.at[key].set(a[(0,) * a.ndim])
