"""xla/host_basic_index.py: eager x[key] of a host-held value with a basic key is NumPy's basic indexing (a view of x's
memory where the namespace makes the result a view of x, else a copy). It must
be taken on the common keys (not silently declined), give the namespace's own path (the gather of a planned
window) bit for bit with the same aval, equal NumPy, compile nothing on new shapes, leave views' write-through and
every error as they were, and decline off its path."""
import numpy as np
import pytest

import array_namespace as xp
from transforms import grad, jit, vmap
from transforms.backend import backend
from xla import host, runtime

pytestmark = pytest.mark.skipif(host.MODE != "host" or not runtime._kernels_on(),
                                reason="host-held eager values switched off: no direct getitem")


@pytest.fixture
def taken(spy):
    return spy(backend, "eager_getitem")


@pytest.fixture
def one(spy):
    return spy(backend, "eager_element")


def _planned(x, key, monkeypatch):
    """x[key] through the namespace's own path (the direct form switched off)."""
    with monkeypatch.context() as m:
        m.setattr(backend, "eager_getitem", lambda v, k, view=False: None)
        m.setattr(backend, "eager_element", lambda v, k: None)
        return x[key]


KEYS = [0, -1, 2, slice(None), slice(1, 3), slice(None, None, -1), slice(-2, None), slice(5, 1, -2),
        slice(10, 20), slice(-100, 100), (1, 2), (-1, -3), (slice(None), 0), (0, slice(1, None, 2)),
        (Ellipsis, 1), (1, Ellipsis), (None, 0), (slice(None), None), (Ellipsis, None), (0, Ellipsis, None),
        (None,), (Ellipsis,), (2, 3, 1), (slice(None), slice(None), -1), (None, Ellipsis, 0, None), ()]


@pytest.mark.parametrize("dt", [np.float64, np.float32, np.int64, np.int8, np.bool_, np.complex128])
@pytest.mark.parametrize("key", KEYS, ids=repr)
def test_equals_the_planned_gather_and_numpy(taken, one, monkeypatch, dt, key):
    shape = (4, 5, 3)
    x_np = (np.arange(60).reshape(shape) * 3 - 50).astype(dt)
    x = xp.asarray(x_np)
    want = x_np[key]   # (every key in KEYS is valid for this shape)
    before = runtime.compile_calls[0]
    got = x[key]
    ref = _planned(x, key, monkeypatch)
    assert runtime.compile_calls[0] == before
    assert got._v.aval == ref._v.aval and got.shape == np.shape(want) and got.dtype == x.dtype
    np.testing.assert_array_equal(np.asarray(got), np.asarray(ref))
    np.testing.assert_array_equal(np.asarray(got), want)
    single = type(key) is tuple and len(key) == x.ndim and all(type(k) is int for k in key)
    if single:   # (one element: eager_element's (C), or eager_getitem's at the process's first of this dtype)
        assert one[0] or taken and taken[0]
    elif key != ():
        assert taken and taken[0] and one == [False]
    if type(got._v) is host.HostValue and got._v is not x._v:
        # a view of x's memory where NumPy's result is a view (all but one element picked by ints), else a copy
        assert np.shares_memory(got._v.np, x._v.np) == (not single and got.size > 0)


def test_special_values_and_weak_scalars_keep_their_bits(taken, monkeypatch):
    a = np.array([np.nan, -0.0, np.inf, -np.inf, 1e-310, 0.0])
    x = xp.asarray(a)
    for key in range(6):
        got, ref = np.asarray(x[key]), np.asarray(_planned(x, key, monkeypatch))
        assert got.tobytes() == ref.tobytes() == a[key].tobytes()
    w = xp.asarray([1.0, 2.0]) * 0.0 + xp.asarray(1.0)   # (a strong result; weak-typed arrays come from scalars)
    assert w[0]._v.aval.weak_type == _planned(w, 0, monkeypatch)._v.aval.weak_type
    assert all(taken)


def test_new_shapes_compile_nothing_and_cost_no_plan(taken, one):
    from array_namespace import _indexing_key as K
    before_plans = len(K._PLANS) + len(K._DERIVED)
    before = runtime.compile_calls[0]
    for n in range(3, 40):
        a = np.arange(n * 2.0).reshape(n, 2)
        x = xp.asarray(a)
        assert float(x[n - 1, 1]) == a[n - 1, 1]
        np.testing.assert_array_equal(np.asarray(x[1:, 0]), a[1:, 0])
    assert runtime.compile_calls[0] == before
    assert len(K._PLANS) + len(K._DERIVED) == before_plans
    # (the element read is eager_element's (C) at every new shape: its 0-d aval is the same; the slice, eager_getitem's)
    assert one == [True, False] * 37 and taken == [True] * 37


def test_a_view_read_shares_memory_and_no_write_reaches_another_holder(taken, one):
    a = np.arange(4000.0).reshape(100, 40)
    x = xp.asarray(a)
    # a view in the namespace (every basic read but one element) is NumPy's view of x's memory: no copy
    for key in (slice(1, None), slice(None, -1), (slice(None), slice(1, None)), slice(45, None), 0, slice(0, 10),
                (slice(None), 3), (5, slice(None)), slice(None, None, 3), slice(None), slice(None, None, -1)):
        y = x[key]
        assert np.shares_memory(y._v.np, x._v.np), key
        np.testing.assert_array_equal(np.asarray(y), a[key])
    y = x[3, 4]                 # (one element: a copy, as NumPy's scalar; eager_element's, in C)
    assert not np.shares_memory(y._v.np, x._v.np) and float(y) == a[3, 4]
    assert len(taken) == 11 and all(taken) and one[-1] is True
    y = x[1:]                   # (writes go both ways, as NumPy's)
    x[50, 0] = -1.0
    y[0, 0] = -2.0
    assert float(y[49, 0]) == -1.0 and float(x[1, 0]) == -2.0
    held = x[2:]._v             # (a raw value sharing x's memory that no namespace view tracks: no write may reach it)
    x[3, 1] = -3.0
    y[2, 2] = -4.0
    want = a[2:].copy()
    want[48, 0] = -1.0           # (x[50, 0], written before)
    np.testing.assert_array_equal(held.np, want)
    assert float(x[3, 1]) == -3.0 and float(x[3, 2]) == -4.0 and float(y[2, 1]) == -3.0
    c = xp.asarray(np.zeros((1, 30, 30)))
    d = c[0]                    # (all of c: scikit-learn's _add_to_diagonal on one component's covariance)
    at = c._v.np.__array_interface__["data"][0]
    for i in range(30):
        d[i, i] = 1.0
        assert np.shares_memory(d._v.np, c._v.np) and c._v.np.__array_interface__["data"][0] == at
    np.testing.assert_array_equal(np.asarray(c)[0], np.eye(30))


@pytest.mark.parametrize("key, exc", [(4, IndexError), (-5, IndexError), ((0, 0, 0, 0), IndexError),
                                      ((1, 7), IndexError), (slice(0, 3, 0), ValueError),
                                      ((Ellipsis, 0, Ellipsis), IndexError)], ids=repr)
def test_bad_keys_decline_and_raise_the_namespaces_errors(taken, monkeypatch, key, exc):
    x = xp.asarray(np.ones((4, 5, 3)))
    with pytest.raises(exc) as direct:
        x[key]
    with pytest.raises(exc) as planned:
        _planned(x, key, monkeypatch)
    assert str(direct.value) == str(planned.value)
    assert taken == [False]


def test_other_keys_and_values_decline(taken):
    x = xp.asarray(np.arange(12.0).reshape(3, 4))
    np.testing.assert_array_equal(np.asarray(x[np.int64(1)]), np.arange(4.0, 8.0))       # NumPy integer
    np.testing.assert_array_equal(np.asarray(x[xp.asarray([0, 2])]), np.arange(12.0).reshape(3, 4)[[0, 2]])
    np.testing.assert_array_equal(np.asarray(x[x > 5]), np.arange(6.0, 12.0))              # boolean mask (taken)
    np.testing.assert_array_equal(np.asarray(x[True]), np.arange(12.0).reshape(1, 3, 4))   # 0-d boolean
    # (in-range 1-D indices and a mask over leading dims are NumPy's integer / boolean indexing: taken)
    assert taken == [False, True, True, False]
    y = jit(lambda t: t + 1.0)(x)   # (a device buffer: the namespace's path)
    np.testing.assert_array_equal(np.asarray(y[1]), np.arange(5.0, 9.0))
    assert taken[-1] is False
    z = xp.asarray(np.arange(4.0))
    jit(lambda t: t * 2.0, donate_argnums=0)(z)
    with pytest.raises(RuntimeError, match="donated"):
        z[1]


def test_views_write_through_and_transforms_trace_as_before(taken):
    x = xp.asarray(np.arange(6.0))
    y = x[1:4]
    y[0] = 50.0   # (writes through a basic slice reach the parent, as in NumPy)
    np.testing.assert_array_equal(np.asarray(x), [0.0, 50.0, 2.0, 3.0, 4.0, 5.0])
    np.testing.assert_array_equal(np.asarray(y), [50.0, 2.0, 3.0])
    a = np.array([1.0, 2.0, 3.0])
    n = len(taken)
    g = grad(lambda t: t[1] ** 2 + xp.sum(t[::2]))(xp.asarray(a))
    np.testing.assert_allclose(np.asarray(g), [1.0, 4.0, 1.0])
    np.testing.assert_allclose(np.asarray(vmap(lambda r: r[-1])(xp.asarray(np.eye(3)))), [0.0, 0.0, 1.0])
    np.testing.assert_allclose(np.asarray(jit(lambda t: t[0, 1:])(xp.asarray(np.eye(3)))), [0.0, 0.0])
    assert len(taken) == n   # (under grad / vmap / jit the key is traced, never read directly)


# --------------------------------------------------------------------------- one element (C: xla/_fpmode.c)
@pytest.mark.parametrize("dt", [np.float64, np.float32, np.int64, np.uint8, np.bool_, np.complex64])
def test_one_element_reads_are_one_c_call_and_equal_numpy_and_the_gather(one, monkeypatch, dt):
    x_np = (np.arange(60).reshape(4, 5, 3) * 7 - 90).astype(dt)
    x = xp.asarray(x_np)
    x[0, 0, 0]   # (the first read of a new dtype is eager_getitem's, which makes its 0-d aval for the C path)
    n = len(one)
    keys = [(1, 2, 0), (-1, -5, -3), (3, 4, 2), (0, -1, 1), (-4, 0, 0)]
    for key in keys:
        got, ref = x[key], _planned(x, key, monkeypatch)
        assert got._v.aval == ref._v.aval and got.shape == () and got.dtype == x.dtype
        assert np.asarray(got).tobytes() == np.asarray(ref).tobytes() == x_np[key].tobytes()
        assert not np.shares_memory(got._v.np, x._v.np)   # (a copy: a later write to x leaves it)
    assert one[n:] == [True] * len(keys)   # (every read after the first: the C call; _planned's are not logged)
    y = xp.asarray(np.arange(5.0))
    y[1]
    assert y[-2] == 3.0 and y[4] == 4.0 and one[-2:] == [True, True]
    v = x[1, 2, 0]
    x[1, 2, 0] = x[0, 0, 0]
    assert np.asarray(v) == x_np[1, 2, 0]   # (the read was a copy)


def test_one_element_reads_keep_every_bit_and_decline_off_their_path(one):
    a = np.array([np.nan, -0.0, np.inf, -np.inf, 1e-310, 5e-324, 0.0])
    x = xp.asarray(a)
    x[0]
    assert [np.asarray(x[i]).tobytes() for i in range(7)] == [a[i].tobytes() for i in range(7)]   # (subnormals kept)
    w = xp.asarray(2.0) * xp.ones(3, dtype=xp.float64)
    assert w[1]._v.aval == xp.asarray(2.0)._v.aval   # (the 0-d aval of its dtype, strong)
    log = len(one)
    for key in [np.int64(1), (True,), (1, 0), slice(0, 1), 2**70, 7, -8, 1.0]:
        try:   # (each key: the namespace's answer is NumPy's -- its value, bit for bit, or a refusal)
            want = a[key]
        except IndexError:
            with pytest.raises((IndexError, TypeError)):
                x[key]
            continue
        got = np.asarray(x[key])
        assert got.shape == np.shape(want) and got.tobytes() == np.asarray(want).tobytes(), key
    assert len(one) - log == 8 and not any(one[log:])   # (NumPy integer, bool, too few/many ints, out of range, float)
    with pytest.raises(IndexError):
        x[7]
    y = jit(lambda t: t + 1.0)(x)   # (a device buffer: the namespace's path)
    assert np.asarray(y[2]) == np.inf
    z = xp.asarray(np.arange(4.0))
    z[0]
    jit(lambda t: t * 2.0, donate_argnums=0)(z)
    with pytest.raises(RuntimeError, match="donated"):
        z[1]


def test_one_element_writes_go_into_memory_through_view_families_and_spare_other_holders(monkeypatch):
    from xla import host
    direct, real = [], host._fpmode.family_element   # (a view family's one-element write: one C call)
    monkeypatch.setattr(host._fpmode, "family_element", lambda *a: direct.append(real(*a)) or direct[-1])
    c = xp.asarray(np.arange(27.0).reshape(3, 3, 3))
    addr = c._v.np.ctypes.data
    a = c[1]   # (a view: its writes reach c)
    d = xp.linalg.diagonal(a) + 100.0
    for i in range(3):
        a[i, i] = d[i]
    want = np.arange(27.0).reshape(3, 3, 3)
    want[1][np.diag_indices(3)] += 100.0
    np.testing.assert_array_equal(np.asarray(c), want)
    np.testing.assert_array_equal(np.asarray(a), want[1])
    assert c._v.np.ctypes.data == addr and direct == [True] * 3   # (no copy per write: three C writes)
    held = np.asarray(c)   # (an export: a write must not reach it)
    c[0, 0, 0] = xp.asarray(-1.0)
    assert held[0, 0, 0] == 0.0 and np.asarray(c)[0, 0, 0] == -1.0
    b = xp.asarray(np.zeros((2, 2), np.bool_))
    b[1, 0] = True
    i = xp.asarray(np.zeros(3, np.int8))
    i[-1] = xp.asarray(5, dtype=xp.int8)
    i[0] = 300 - 256 + 20   # (a Python int of the array's kind)
    z = xp.asarray(np.zeros(2, np.complex128))
    z[1] = xp.asarray(1e-310 - 2j)   # (a subnormal real part moves as it is)
    s = xp.asarray(np.zeros(2, np.float32))
    s[0] = xp.asarray(np.float32(1.5e-40))
    assert np.asarray(b).tolist() == [[False, False], [True, False]] and np.asarray(i).tolist() == [64, 0, 5]
    assert np.asarray(z)[1] == 1e-310 - 2j and np.asarray(s)[0] == np.float32(1.5e-40)


# --------------------------------------------------------------------------- x[key] = value, in place
@pytest.fixture
def written(spy):
    return spy(backend, "eager_setitem")


def _set_planned(x_np, key, value, monkeypatch):
    """x[key] = value through the namespace's own path (the direct write switched off)."""
    x = xp.asarray(x_np)
    with monkeypatch.context() as m:
        m.setattr(backend, "eager_setitem", lambda v, k, val, copy=False: None)
        x[key] = value
    return np.asarray(x)


SET_CASES = [((4, 5), (1, 2), 7.5), ((4, 5), (-1, -1), -0.0), ((4, 5), 0, 3.0), ((4, 5), slice(1, 3), 2.0),
             ((4, 5), (slice(None), 0), "col"), ((4, 5), (Ellipsis, 1), "col"), ((4, 5), slice(None, None, -2), "row"),
             ((4, 5), (slice(1, None, 2), slice(None, None, 3)), 1.0), ((4, 5), 2, "row"), ((4, 5), (), 4.0),
             ((3, 4, 5), (1, Ellipsis, 2), 9.0), ((3, 4, 5), (None, 0), "row")]


@pytest.mark.parametrize("shared", [False, True], ids=["own", "shared"])
@pytest.mark.parametrize("dt", [np.float64, np.float32, np.int32, np.complex128])
@pytest.mark.parametrize("shape, key, value", SET_CASES, ids=repr)
def test_setitem_equals_the_planned_scatter_and_numpy(written, monkeypatch, dt, shape, key, value, shared):
    x_np = (np.arange(np.prod(shape)).reshape(shape) * 3 - 20).astype(dt)
    if value == "col":
        value = xp.asarray(np.arange(shape[0], dtype=dt) + 100)
    elif value == "row":
        value = xp.asarray(np.arange(shape[-1], dtype=dt) - 100)
    elif np.dtype(dt).kind == "i":
        value = int(value)
    want = x_np.copy()
    want[key] = np.asarray(value)
    ref = _set_planned(x_np, key, value, monkeypatch)
    x = xp.asarray(x_np)
    other = xp.asarray(x, copy=True) if shared else None   # (x and other hold one value: it goes into a copy)
    before = runtime.compile_calls[0]
    x[key] = value
    got = np.asarray(x)
    assert runtime.compile_calls[0] == before
    assert got.dtype == ref.dtype == want.dtype
    assert got.tobytes() == ref.tobytes() == want.tobytes()   # (bit for bit, the sign of -0.0 included)
    assert written == [True]
    assert not shared or (other._v is not x._v and np.asarray(other).tobytes() == x_np.tobytes())


def test_a_diagonal_filled_element_by_element_writes_in_place(written):
    a = np.random.default_rng(5).standard_normal((40, 40))
    x = xp.asarray(a)
    addr = x._v.np.ctypes.data   # (its address: a reference to the array would make it shared)
    zero = xp.asarray(0.0)
    for i in range(40):
        x[i, i] = zero
    want = a.copy()
    np.fill_diagonal(want, 0.0)
    np.testing.assert_array_equal(np.asarray(x), want)
    assert x._v.np.ctypes.data == addr and len(written) == 40 and all(written)   # (no copy of x per write)


def test_shared_memory_is_copied_before_a_write_and_bad_values_take_the_namespaces_path(written, monkeypatch):
    a = np.arange(6.0)
    x = xp.asarray(a)
    held = x._v            # (another holder of x's value: a write must not reach it)
    x[0] = 50.0
    assert written[-1] is True and x._v is not held and np.asarray(held.np)[0] == 0.0 and np.asarray(x)[0] == 50.0
    del held
    e = xp.asarray(a)
    exported = np.asarray(e, copy=False)   # (a NumPy view of e's memory: a write must not reach it either)
    e[1] = 60.0
    assert written[-1] is True and exported[1] == 1.0 and np.asarray(e)[1] == 60.0
    y = xp.asarray(a)
    view = y[1:4]          # (a basic slice of y: writes through it reach y, writes into y reach it as NumPy)
    view[0] = -1.0
    np.testing.assert_array_equal(np.asarray(y), [0.0, -1.0, 2.0, 3.0, 4.0, 5.0])
    z = xp.asarray(np.ones((2, 3)))
    with pytest.raises(ValueError):
        z[0] = xp.asarray(np.ones((1, 3)))    # (a new leading axis: NumPy allows it, the namespace does not)
    with pytest.raises(IndexError):
        z[5] = 1.0
    with pytest.raises(TypeError):
        xp.asarray([1, 2, 3])[0] = 1.5          # (a float into an int array: the namespace's dtype rule)
    w = xp.asarray(np.ones(3))
    jit(lambda t: t * 2.0, donate_argnums=0)(w)
    with pytest.raises(RuntimeError, match="donated"):
        w[0] = 1.0


def test_writes_under_transforms_trace_as_before(written):
    def f(t):
        t = t * 1.0
        t[1] = t[0] * 3.0
        return xp.sum(t ** 2)
    a = np.array([1.0, 2.0, 3.0])
    g = np.asarray(grad(f)(xp.asarray(a)))
    np.testing.assert_allclose(g, [2.0 + 18.0, 0.0, 6.0])
    np.testing.assert_allclose(float(jit(f)(xp.asarray(a))), 1.0 + 9.0 + 9.0)
    assert written == []


MASKS = [(lambda a: a > 5), (lambda a: a[:, 0] > 3), (lambda a: np.zeros(a.shape, bool)),
         (lambda a: np.ones(a.shape[:1], bool)), (lambda a: (a % 3 == 0)[..., 1])]


@pytest.mark.parametrize("i", range(len(MASKS)))
def test_mask_reads_and_writes_equal_numpy_and_the_namespaces_path(taken, written, monkeypatch, i):
    a = np.arange(12.0).reshape(3, 4) - 4.5
    m = MASKS[i](a)
    x, mx = xp.asarray(a), xp.asarray(m)
    got = x[mx]
    assert taken[-1] is True
    ref = _planned(x, mx, monkeypatch)
    assert np.asarray(got).tobytes() == np.asarray(ref).tobytes() == a[m].tobytes() and got.shape == a[m].shape
    for value in (-0.0, xp.asarray(a[m] * 2.0), xp.asarray(np.float64(7.0))):
        want = a.copy()
        want[m] = np.asarray(value)
        ref = _set_planned(a, mx, value, monkeypatch)
        x = xp.asarray(a)
        addr = x._v.np.ctypes.data
        x[mx] = value
        assert written[-1] is True and x._v.np.ctypes.data == addr   # (into x's own memory)
        assert np.asarray(x).tobytes() == ref.tobytes() == want.tobytes()


def test_mask_writes_spare_other_holders_and_bad_masks_raise_as_before(taken, written):
    a = np.arange(6.0)
    x = xp.asarray(a)
    held = x._v            # (another holder of x's value: the write goes into a copy, never into it)
    x[x > 2] = 0.0
    assert written[-1] is True and np.asarray(held.np).tolist() == a.tolist()
    assert np.asarray(x).tolist() == [0.0, 1.0, 2.0, 0.0, 0.0, 0.0]
    y = xp.asarray(a)
    exported = np.asarray(y, copy=False)
    y[y > 2] = xp.asarray(np.ones(3))
    assert written[-1] is True and exported.tolist() == a.tolist() and np.asarray(y)[3:].tolist() == [1.0] * 3
    with pytest.raises(IndexError):
        xp.asarray(a)[xp.asarray([True, False])]          # (a mask of another shape: the namespace's error)
    assert taken[-1] is False
    z = xp.asarray(a)
    with pytest.raises(IndexError):
        z[xp.asarray([True, False])] = 1.0
    with pytest.raises(ValueError):
        z[z > 2] = xp.asarray(np.ones(2))                 # (3 selected, 2 given)
    assert np.asarray(z).tolist() == a.tolist()
    f = jit(lambda t: t[t > 2], guards=False)
    with pytest.raises(Exception, match="data-dependent|DataDependent|shape"):
        f(xp.asarray(a))
    assert np.asarray(jit(lambda t: t[t > 2])(xp.asarray(a))).tolist() == a[a > 2].tolist()   # (guarded: specialised)


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_take_and_integer_indices_equal_numpy_and_the_namespaces_path(taken, monkeypatch, axis):
    a = np.arange(60.0).reshape(3, 4, 5) - 7.25
    n = a.shape[axis]
    for idx in ([0], [n - 1, 0, 1, 1], [-1, -n, 2 % n], np.arange(n)[::-1], []):
        i = xp.asarray(np.asarray(idx, dtype=np.int64))
        got = xp.take(xp.asarray(a), i, axis=axis)
        assert taken[-1] is True
        with monkeypatch.context() as m:
            m.setattr(backend, "eager_getitem", lambda v, k, view=False: None)
            ref = xp.take(xp.asarray(a), i, axis=axis)
        want = np.take(a, np.asarray(idx, dtype=np.int64), axis=axis)
        assert np.asarray(got).tobytes() == np.asarray(ref).tobytes() == want.tobytes() and got.shape == want.shape
    x = xp.asarray(a)
    with pytest.raises(IndexError):
        xp.take(x, xp.asarray([0, n]), axis=axis)       # (out of range: declined, the namespace's error)
    assert taken[-1] is False
    np.testing.assert_array_equal(np.asarray(x[xp.asarray([2, 0])]), a[[2, 0]])
    np.testing.assert_array_equal(np.asarray(x[:, xp.asarray([[1, 0]])]), a[:, [[1, 0]]])   # (2-D indices: declined)
    assert taken[-1] is False
    y = xp.asarray(np.arange(4.0))
    y[xp.asarray([1, 1])] = xp.asarray([5.0, 6.0])   # (writes at indices never take the read's path)
    assert np.asarray(y)[0] == 0.0 and np.asarray(y)[1] in (5.0, 6.0)
    g = grad(lambda t: xp.sum(xp.take(t, xp.asarray([0, 0, 2])) ** 2))(xp.asarray(np.arange(3.0)))
    np.testing.assert_allclose(np.asarray(g), [0.0, 0.0, 4.0])
