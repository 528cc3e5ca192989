"""The kept plans (_plans.py) of the shape and creation functions give what the validated path gives, and refuse
what it refuses.

reshape, permute_dims, moveaxis, squeeze, expand_dims and broadcast_to keep a validated plan per (operand shape,
static arguments of plain ints); asarray of a Python scalar and full/zeros/ones of a small shape keep theirs per
(shape, scalar, dtype) and put a fresh copy on the device per call; finfo/iinfo keep one result per dtype; x.device
answers without a lookup per call. Checked here against NumPy and against jit: dtypes, shapes, values, -0.0 and
NaN kept apart, views vs copies, each call's array its own (writes and donation touch no other), and the errors
(types and messages) unchanged once a plan exists for a look-alike argument (True after 1, 1.0 after 1), eagerly
and under jit, with signatures alternating. Also here: unique_* of a plain eager array read their values on the host
(bit for bit what the gradient-carrying gather gives).
"""
import numpy as np
import pytest

import array_namespace as xp
from array_namespace import _creation as C
from array_namespace import _plans as PL
from array_namespace import _data_types as DT
from array_namespace import _manipulation as M
from array_namespace import _ranges as RG
from transforms import jit

R = np.random.default_rng(11)
DTYPES = ["float32", "float64", "int32", "uint8", "bool", "complex64"]


def _data(shape, dt):
    a = R.standard_normal(shape) * 10
    if dt == "bool":
        return a > 0
    if dt == "complex64":
        return (a + 1j * a[::-1] if a.ndim else a + 1j).astype(dt)
    return a.astype(dt)


def _same(got, want):
    got = np.asarray(got)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


# (name, our call, NumPy's call, shape of the operand); each call is repeated (the plan kept, then taken)
SHAPE_CASES = [
    ("reshape -1", lambda m, x: m.reshape(x, (-1,)), (4, 3)),
    ("reshape 2-D", lambda m, x: m.reshape(x, (3, 4)), (4, 3)),
    ("reshape int", lambda m, x: m.reshape(x, 12), (4, 3)),
    ("reshape same", lambda m, x: m.reshape(x, (4, 3)), (4, 3)),
    ("reshape 0-d", lambda m, x: m.reshape(x, ()), ()),
    ("reshape 0-d to 1", lambda m, x: m.reshape(x, (1, 1)), ()),
    ("reshape empty", lambda m, x: m.reshape(x, (5, 0)), (0, 5)),
    ("reshape np ints", lambda m, x: m.reshape(x, (np.int64(2), np.int32(6))), (4, 3)),
    ("permute_dims", lambda m, x: m.permute_dims(x, (2, 0, 1)) if m is xp else np.transpose(x, (2, 0, 1)),
     (2, 3, 4)),
    ("permute_dims neg", lambda m, x: m.permute_dims(x, (-1, 0, 1)) if m is xp else np.transpose(x, (2, 0, 1)),
     (2, 3, 4)),
    ("permute_dims id", lambda m, x: m.permute_dims(x, (0, 1)) if m is xp else np.transpose(x, (0, 1)), (2, 3)),
    ("moveaxis", lambda m, x: m.moveaxis(x, 0, -1), (2, 3, 4)),
    ("moveaxis tuples", lambda m, x: m.moveaxis(x, (0,), (-1,)), (5, 3)),
    ("moveaxis two", lambda m, x: m.moveaxis(x, (0, 2), (2, 0)), (2, 3, 4)),
    ("moveaxis none", lambda m, x: m.moveaxis(x, 1, 1), (2, 3)),
    ("moveaxis empty", lambda m, x: m.moveaxis(x, 0, 1), (0, 3)),
    ("squeeze", lambda m, x: m.squeeze(x, axis=-1), (3, 1)),
    ("squeeze tuple", lambda m, x: m.squeeze(x, axis=(0, 2)), (1, 3, 1)),
    ("squeeze to 0-d", lambda m, x: m.squeeze(x, axis=0), (1,)),
    ("squeeze empty", lambda m, x: m.squeeze(x, axis=1), (0, 1)),
    ("expand_dims", lambda m, x: m.expand_dims(x, axis=-1), (3, 2)),
    ("expand_dims 0-d", lambda m, x: m.expand_dims(x, axis=0), ()),
    ("expand_dims tuple", lambda m, x: m.expand_dims(x, axis=(0, 3)) if m is xp else
     np.expand_dims(x, axis=(0, 3)), (3, 2)),
    ("broadcast_to", lambda m, x: m.broadcast_to(x, (4, 2, 3)), (2, 1)),
    ("broadcast_to same np ints", lambda m, x: m.broadcast_to(x, (np.int64(2), np.int64(3))), (2, 3)),
    ("broadcast_to 0-d", lambda m, x: m.broadcast_to(x, (3,)), ()),
    ("broadcast_to empty", lambda m, x: m.broadcast_to(x, (0, 3)), (3,)),
]


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("name, call, shape", SHAPE_CASES, ids=[c[0] for c in SHAPE_CASES])
def test_shape_functions_repeated_and_jitted_equal_numpy(name, call, shape, dt):
    a = _data(shape, dt)
    want = call(np, a)
    x = xp.asarray(a)
    for _ in range(3):   # (the first call validates and keeps the plan, the others take it)
        _same(call(xp, x), want)
    _same(jit(lambda v: call(xp, v))(x), want)
    _same(jit(lambda v: call(xp, v))(x), want)


def test_alternating_signatures_each_get_their_own_plan():
    a, b, c = _data((4, 3), "float64"), _data((2, 6), "float32"), _data((3, 1), "int32")
    xa, xb, xc = xp.asarray(a), xp.asarray(b), xp.asarray(c)
    for _ in range(3):
        _same(xp.reshape(xa, (-1,)), a.reshape(-1))
        _same(xp.reshape(xb, (-1,)), b.reshape(-1))
        _same(xp.reshape(xa, (2, -1)), a.reshape(2, -1))
        _same(xp.reshape(xb, (2, -1)), b.reshape(2, -1))
        _same(xp.moveaxis(xa, 0, -1), np.moveaxis(a, 0, -1))
        _same(xp.moveaxis(xa[None], 0, -1), np.moveaxis(a[None], 0, -1))   # (3-D: another plan)
        _same(xp.squeeze(xc, axis=1), c[:, 0])
        _same(xp.squeeze(xc, axis=-1), c[:, 0])
        _same(xp.broadcast_to(xc, (3, 4)), np.broadcast_to(c, (3, 4)))
        _same(xp.broadcast_to(xc, (2, 3, 1)), np.broadcast_to(c, (2, 3, 1)))
        _same(xp.expand_dims(xb, axis=1), b[:, None])
        _same(xp.expand_dims(xb, axis=-1), b[..., None])


def test_shape_functions_of_weak_scalars_and_python_scalars():
    for _ in range(3):
        r = xp.reshape(2.5, (1,))   # a Python scalar: taken as a 0-d array (no plan: not an Array)
        assert r.dtype == xp.float64 and np.asarray(r).tolist() == [2.5]
        w = xp.asarray(1.0, dtype=xp.float32) + 2.0
        _same(xp.reshape(w, (1, 1)), np.full((1, 1), 3.0, np.float32))
        _same(xp.broadcast_to(w, (2,)), np.full((2,), 3.0, np.float32))


BROADCAST_ARRAYS_CASES = [
    [(), (23,), (23,)],
    [(3, 1), (4,), ()],
    [(2, 3), (2, 3)],
    [(0, 3), (1, 3), (3,)],
    [(5,)],
    [],
]


@pytest.mark.parametrize("i", range(len(BROADCAST_ARRAYS_CASES)))
def test_broadcast_arrays_repeated_and_jitted_equal_numpy(i):
    shapes = BROADCAST_ARRAYS_CASES[i]
    data = [_data(s, dt) for s, dt in zip(shapes, ["bool", "float64", "float32", "int32"])]
    want = np.broadcast_arrays(*data)
    arrs = [xp.asarray(d) for d in data]
    for _ in range(3):
        got = xp.broadcast_arrays(*arrs)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, np.asarray(w))
    got = jit(lambda *v: xp.broadcast_arrays(*v))(*arrs)
    for g, w in zip(got, want):
        _same(g, np.asarray(w))
    mixed = xp.broadcast_arrays(*arrs, 2.5) if arrs else ()   # (a Python scalar among them: the checked path)
    for g, w in zip(mixed, want):
        _same(g, np.asarray(w))


def test_broadcast_arrays_refusals_unchanged():
    x, y = xp.asarray(np.ones((2, 3))), xp.asarray(np.ones((3,)))
    _clear_plans()
    before = [_error(lambda: xp.broadcast_arrays(x, xp.asarray(np.ones(4)))),
              _error(lambda: xp.broadcast_arrays(x, "a")),
              _error(lambda: jit(lambda a, b: xp.broadcast_arrays(a, b))(x, xp.asarray(np.ones(4))))]
    assert all(b is not None for b in before)
    for _ in range(2):
        xp.broadcast_arrays(x, y)
        xp.broadcast_arrays(x, xp.asarray(np.ones(3)))
        assert [_error(lambda: xp.broadcast_arrays(x, xp.asarray(np.ones(4)))),
                _error(lambda: xp.broadcast_arrays(x, "a")),
                _error(lambda: jit(lambda a, b: xp.broadcast_arrays(a, b))(x, xp.asarray(np.ones(4))))] == before


def _view_body(a):
    ours = not isinstance(a, np.ndarray)
    r = xp.reshape(a, (-1,)) if ours else a.reshape(-1)
    r[1] = -7
    t = xp.moveaxis(a, 0, -1) if ours else np.moveaxis(a, 0, -1)
    t[0, 1] += 10
    i = xp.moveaxis(a, 1, 1) if ours else np.moveaxis(a, 1, 1)   # (the identity: still a view)
    i[2, 2] = 5
    u = xp.permute_dims(a, (1, 0)) if ours else a.T
    u[2] *= -1
    e = xp.expand_dims(a, axis=0) if ours else a[None]
    e[0, 1, 1] = 55
    s = xp.squeeze(e, axis=0) if ours else e[0]
    s[2, 3] = 77
    c = xp.reshape(a.T, (-1,)) if ours else a.T.reshape(-1)   # a view's reshape is a copy (NumPy: strided)
    c[0] = 1000
    k = xp.reshape(a, (12,), copy=True) if ours else a.reshape(12).copy()
    k[0] = -1000


def test_views_and_copies_as_before_with_plans_kept():
    base = np.arange(12.0).reshape(3, 4)
    for _ in range(3):   # (the second and third rounds take the kept plans)
        n = base.copy()
        _view_body(n)
        x = xp.asarray(base)
        _view_body(x)
        np.testing.assert_array_equal(np.asarray(x), n)


def _error(f):
    try:
        f()
    except Exception as e:   # noqa: BLE001  (the type and message are what is compared)
        return type(e), str(e)
    return None


# (a valid call that keeps a plan, a look-alike call that must raise as it did before any plan existed)
LOOKALIKES = [
    (lambda x: xp.reshape(x, (1, 6)), lambda x: xp.reshape(x, (True, 6))),
    (lambda x: xp.reshape(x, (1, 6)), lambda x: xp.reshape(x, (1.0, 6))),
    (lambda x: xp.reshape(x, 6), lambda x: xp.reshape(x, 6.0)),
    (lambda x: xp.reshape(x, (2, 3)), lambda x: xp.reshape(x, (4, 3))),
    (lambda x: xp.reshape(x, (-1,)), lambda x: xp.reshape(x, (-1, -1))),
    (lambda x: xp.reshape(x, (-1,)), lambda x: xp.reshape(x, (-2,))),
    (lambda x: xp.permute_dims(x, (1, 0)), lambda x: xp.permute_dims(x, (True, 0))),
    (lambda x: xp.permute_dims(x, (1, 0)), lambda x: xp.permute_dims(x, (1, 1))),
    (lambda x: xp.permute_dims(x, (1, 0)), lambda x: xp.permute_dims(x, (2, 0))),
    (lambda x: xp.moveaxis(x, 0, 1), lambda x: xp.moveaxis(x, 0, True)),
    (lambda x: xp.moveaxis(x, 1, 0), lambda x: xp.moveaxis(x, 1.0, 0)),
    (lambda x: xp.moveaxis(x, 0, 1), lambda x: xp.moveaxis(x, 0, 2)),
    (lambda x: xp.moveaxis(x, (0, 1), (1, 0)), lambda x: xp.moveaxis(x, (0, 1), (1,))),
    (lambda x: xp.moveaxis(x, (0, 1), (1, 0)), lambda x: xp.moveaxis(x, (0, 0), (1, 0))),
    (lambda x: xp.squeeze(xp.reshape(x, (1, 6)), axis=0), lambda x: xp.squeeze(xp.reshape(x, (1, 6)), axis=False)),
    (lambda x: xp.squeeze(xp.reshape(x, (1, 6)), axis=0), lambda x: xp.squeeze(x, axis=0)),
    (lambda x: xp.squeeze(xp.reshape(x, (1, 6)), axis=0), lambda x: xp.squeeze(x, axis=5)),
    (lambda x: xp.expand_dims(x, axis=1), lambda x: xp.expand_dims(x, axis=True)),
    (lambda x: xp.expand_dims(x, axis=1), lambda x: xp.expand_dims(x, axis=3)),
    (lambda x: xp.expand_dims(x, axis=(0, 1)), lambda x: xp.expand_dims(x, axis=(0, 0))),
    (lambda x: xp.broadcast_to(x, (1, 2, 3)), lambda x: xp.broadcast_to(x, (True, 2, 3))),
    (lambda x: xp.broadcast_to(x, (2, 3)), lambda x: xp.broadcast_to(x, (2.0, 3))),
    (lambda x: xp.broadcast_to(x, (2, 3)), lambda x: xp.broadcast_to(x, (3, 3))),
    (lambda x: xp.broadcast_to(x, (2, 3)), lambda x: xp.broadcast_to(x, (-2, 3))),
    (lambda x: xp.broadcast_to(x, (2, 3)), lambda x: xp.broadcast_to(x, (2,))),
]


def _clear_plans():
    for t in (M._RESHAPE_PLANS, M._TRANSPOSE_PLANS, M._SQUEEZE_PLANS, M._BROADCAST_PLANS, M._BROADCAST_ARRAYS_PLANS,
              PL.MADE, C._FULL_CHECKED, RG._CHECKED):
        t.clear()


@pytest.mark.parametrize("i", range(len(LOOKALIKES)))
def test_lookalike_arguments_raise_as_before_eagerly_and_under_jit(i):
    good, bad = LOOKALIKES[i]
    x = xp.asarray(np.arange(6.0).reshape(2, 3))
    _clear_plans()
    before = _error(lambda: bad(x))
    before_jit = _error(lambda: jit(bad)(x))
    assert before is not None and issubclass(before[0], (TypeError, ValueError, IndexError))
    for _ in range(2):
        good(x)
        jit(good)(x)
        assert _error(lambda: bad(x)) == before
        assert _error(lambda: jit(bad)(x)) == before_jit
    assert _error(lambda: bad(x)) == before   # (the failing call kept nothing: still refused)


# ------------------------------------------------------------------------------------------------ creation

SCALARS = [True, False, 0, 1, -3, 2.5, 0.0, -0.0, float("nan"), float("inf"), -float("inf"), 1j, complex(-0.0, 0.0),
           complex(float("nan"), 1.0)]


def _bits_equal(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    if want.dtype.kind in "fc":
        for part in ((lambda z: z.real), (lambda z: z.imag)) if want.dtype.kind == "c" else ((lambda z: z),):
            g, w = part(got), part(want)
            np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
            ok = ~np.isnan(w)
            np.testing.assert_array_equal(g[ok], w[ok])
            np.testing.assert_array_equal(np.signbit(g[ok]), np.signbit(w[ok]))   # -0.0 kept apart from 0.0
    else:
        np.testing.assert_array_equal(got, want)


def test_asarray_of_python_scalars_repeated_keeps_kinds_signs_and_nans():
    default = {bool: np.bool_, int: np.int64, float: np.float64, complex: np.complex128}
    for _ in range(3):
        for s in SCALARS:   # (alternating: True, False, 0, 1 and 0.0, -0.0 hash alike as keys)
            _bits_equal(xp.asarray(s), np.asarray(s, dtype=default[type(s)]))
            _bits_equal(xp.asarray(s, device=xp.asarray(1.0).device), np.asarray(s, dtype=default[type(s)]))
        _bits_equal(xp.asarray(True, dtype=xp.float32), np.float32(1.0))
        _bits_equal(xp.asarray(-0.0, dtype=xp.float32), np.float32(-0.0))
        _bits_equal(xp.asarray(3, dtype=xp.uint8), np.uint8(3))
        _bits_equal(xp.asarray(2.5, dtype=xp.complex64), np.complex64(2.5))


def test_asarray_scalar_refusals_unchanged_after_lookalikes():
    _clear_plans()
    bad = [lambda: xp.asarray(1.5, dtype=xp.int32), lambda: xp.asarray(1j, dtype=xp.float64),
           lambda: xp.asarray(300, dtype=xp.int8), lambda: xp.asarray(-1, dtype=xp.uint8),
           lambda: xp.asarray(2.0, dtype="float64"), lambda: xp.asarray(1.0, device="gpu:7")]
    before = [_error(f) for f in bad]
    assert all(b is not None for b in before)
    for _ in range(2):
        xp.asarray(1.0, dtype=xp.float64)
        xp.asarray(1, dtype=xp.int32)
        xp.asarray(1, dtype=xp.int8)
        xp.asarray(1.0)
        assert [_error(f) for f in bad] == before


FULL_CASES = [
    (lambda m: m.full((), float("nan"), dtype=m.float64), None),
    (lambda m: m.full((2, 3), -0.0), None),
    (lambda m: m.full((2, 3), 0.0), None),
    (lambda m: m.full(4, 7), None),
    (lambda m: m.full((2,), True), None),
    (lambda m: m.full((2,), 1), None),
    (lambda m: m.full((2,), 2.0, dtype=m.int32), None),
    (lambda m: m.full((0, 3), 1.5, dtype=m.float32), None),
    (lambda m: m.full((2,), 1j, dtype=m.complex64), None),
    (lambda m: m.zeros((3, 4)), None),
    (lambda m: m.zeros(3, dtype=m.int8), None),
    (lambda m: m.ones((23,), dtype=m.float64), None),
    (lambda m: m.ones((2, 2), dtype=m.bool), None),
    (lambda m: m.empty((2,)), "empty"),
    (lambda m: m.zeros_like(m.asarray(np.ones((2, 2), np.float32))), None),
    (lambda m: m.ones_like(m.asarray(np.ones((2, 2), np.int32)), dtype=m.float64), None),
    (lambda m: m.full((np.int64(2), np.int32(2)), 3.0), None),
    (lambda m: m.full((50, 20), -0.0), None),            # (larger than the values kept: the checks are kept)
    (lambda m: m.zeros_like(m.asarray(np.ones((40, 30), np.int32))), None),
    (lambda m: m.ones((3, 300), dtype=m.bool), None),
    (lambda m: m.full((30, 30), 0.1, dtype=m.float32), None),             # (a fill rounded to the dtype, as np.full)
    (lambda m: m.full((17, 17), 0.1 - 3e38j, dtype=m.complex64), None),
    (lambda m: m.full((300,), -2 ** 63, dtype=m.int64), None),
    (lambda m: m.eye(36), None),                                        # (eyes larger than the values kept too)
    (lambda m: m.eye(20, 30, k=-3, dtype=m.int32), None),
    (lambda m: m.eye(17, k=40, dtype=m.complex64), None),
    (lambda m: m.eye(3, 5, k=1, dtype=m.bool), None),
]


@pytest.mark.parametrize("i", range(len(FULL_CASES)))
def test_full_zeros_ones_repeated_and_jitted_equal_numpy(i):
    call, kind = FULL_CASES[i]
    want = call(np)
    for _ in range(3):
        got = call(xp)
        if kind == "empty":   # (values not to be relied on; shape and dtype are)
            assert np.asarray(got).shape == want.shape and np.asarray(got).dtype == np.float64
        else:
            _bits_equal(got, want)
    if kind != "empty":
        _bits_equal(jit(lambda: call(xp))(), want)


def test_each_creation_owns_its_value():
    """Repeated calls give arrays that share nothing: a write into one, or donating one to a jitted function,
    leaves the others (and the next call's result) as they were."""
    a, b = xp.zeros(3), xp.zeros(3)
    a[0] = 5.0
    a += 1.0
    assert np.asarray(b).tolist() == [0.0, 0.0, 0.0]
    assert np.asarray(xp.zeros(3)).tolist() == [0.0, 0.0, 0.0]
    assert np.asarray(a).tolist() == [6.0, 1.0, 1.0]
    s, t = xp.asarray(2.0), xp.asarray(2.0)
    s[...] = 9.0
    assert float(t) == 2.0 and float(xp.asarray(2.0)) == 2.0
    big, big2 = xp.zeros((30, 30)), xp.zeros((30, 30))   # (larger than the values kept)
    big[1, 2] = 3.0
    assert not np.asarray(big2).any() and not np.asarray(xp.zeros((30, 30))).any()
    e, e2 = xp.eye(36), xp.eye(36)
    e[0, 0] = 5.0
    assert float(e2[0, 0]) == 1.0 and float(xp.eye(36)[0, 0]) == 1.0
    keep = xp.ones(16)
    gone = xp.ones(16)
    f = jit(lambda v: v + 1.0, donate_argnums=0)
    np.testing.assert_array_equal(np.asarray(f(gone)), 2.0)
    assert gone._v.is_deleted()
    np.testing.assert_array_equal(np.asarray(keep), 1.0)   # (not donated with it)
    np.testing.assert_array_equal(np.asarray(xp.ones(16)), 1.0)


def test_full_refusals_unchanged_after_lookalikes():
    _clear_plans()
    bad = [lambda: xp.full((2,), 1.5, dtype=xp.int32), lambda: xp.full((2,), 1j, dtype=xp.float64),
           lambda: xp.full((True, 2), 1.0), lambda: xp.full((2.0,), 1.0), lambda: xp.full((-1,), 1.0),
           lambda: xp.zeros((1.0, 2)), lambda: xp.ones(True), lambda: xp.full((2,), 1.0, device="gpu:7"),
           lambda: xp.full((2,), "a"), lambda: xp.full((600,), 1.5, dtype=xp.int32),
           lambda: xp.full((20, 30), 1j, dtype=xp.float64), lambda: xp.eye(36, 36.0), lambda: xp.eye(36, k=1.0),
           lambda: xp.eye(-36), lambda: xp.eye(36, dtype="float64"), lambda: xp.eye(36, device="gpu:7")]
    before = [_error(f) for f in bad]
    assert all(b is not None for b in before)
    for _ in range(2):
        xp.full((2,), 2.0, dtype=xp.int32)
        xp.full((1, 2), 1.0)
        xp.full((2,), 1.0)
        xp.zeros((1, 2))
        xp.ones(1)
        xp.full((600,), 2.0, dtype=xp.int32)
        xp.full((20, 30), 1.0, dtype=xp.float64)
        xp.eye(36, 36)
        xp.eye(36, k=1)
        xp.eye(36, dtype=xp.float64)
        assert [_error(f) for f in bad] == before


# ------------------------------------------------------------------------------------------ finfo, iinfo, device

@pytest.mark.parametrize("dt", ["float32", "float64", "complex64", "complex128"])
def test_finfo_per_dtype_equals_numpy(dt):
    for _ in range(2):
        fi, want = xp.finfo(getattr(xp, dt)), np.finfo(dt)
        assert (fi.bits, fi.eps, fi.max, fi.min, fi.smallest_normal) == (
            want.bits, float(want.eps), float(want.max), float(want.min), float(want.smallest_normal))
        assert fi.dtype == {"complex64": xp.float32, "complex128": xp.float64}.get(dt, getattr(xp, dt))
        assert xp.finfo(xp.asarray(np.zeros(2, dt))) == fi
        assert xp.finfo(np.dtype(dt)) == fi


@pytest.mark.parametrize("dt", ["int8", "int32", "int64", "uint8", "uint64"])
def test_iinfo_per_dtype_equals_numpy(dt):
    for _ in range(2):
        ii, want = xp.iinfo(getattr(xp, dt)), np.iinfo(dt)
        assert (ii.bits, ii.max, ii.min, ii.dtype) == (want.bits, want.max, want.min, getattr(xp, dt))
        assert xp.iinfo(xp.asarray(np.zeros(2, dt))) == ii


def test_finfo_iinfo_refusals_unchanged():
    for _ in range(2):
        xp.finfo(xp.float64)
        xp.iinfo(xp.int64)
        with pytest.raises(TypeError, match="finfo: type int64 is not a floating-point dtype"):
            xp.finfo(xp.int64)
        with pytest.raises(TypeError, match="iinfo: type float64 is not an integer dtype"):
            xp.iinfo(xp.float64)
        with pytest.raises(TypeError, match="not a dtype of this namespace"):
            xp.finfo("float64")
        with pytest.raises(TypeError, match="iinfo: type bool is not an integer dtype"):
            xp.iinfo(xp.bool)


def test_device_property_eager_and_traced():
    x = xp.asarray(np.ones(3))
    dev = xp.__array_namespace_info__().default_device()
    for _ in range(2):
        assert x.device == dev and hash(x.device) == hash(dev)
        assert xp.asarray(x, device=x.device) is x
        assert xp.zeros(2, device=x.device).device == dev
        assert x.to_device(x.device) is x
    seen = []
    jit(lambda v: seen.append(v.device) or v)(x)
    assert seen == [dev]


# ------------------------------------------------------------------------------------------------------ unique

UNIQUE_INPUTS = [
    np.array([3, 1, 3, 2, 1], np.int64),
    np.array([[2, 1, 2], [5, 1, 1]], np.int32),
    np.array([0.0, -0.0, 1.5, np.nan, -0.0, np.nan, 1.5, -np.inf], np.float64),
    np.array([-0.0, 0.0, 2.0], np.float32),
    np.array([1 + 1j, 1 - 1j, 1 + 1j, complex(np.nan, 0)], np.complex64),
    np.array([True, False, True]),
    np.zeros((0, 3), np.float64),
    np.array(4.0),
]


def _gathered_values(a):
    """What the gradient-carrying path gives: x's values at their first indices (under jvp, a traced x)."""
    from transforms import jvp
    x = xp.asarray(a)
    if a.dtype.kind != "f":
        return None
    return jvp(lambda v: xp.unique_values(v), (x,), (xp.ones_like(x),))[0]


@pytest.mark.parametrize("i", range(len(UNIQUE_INPUTS)))
def test_unique_functions_equal_numpy_bit_for_bit(i):
    a = UNIQUE_INPUTS[i]
    vals, first, inv, counts = np.unique(a.reshape(-1), return_index=True, return_inverse=True, return_counts=True,
                                         equal_nan=False)
    want_vals = a.reshape(-1)[first]   # (the first occurrence's bits: -0.0 where it came first)
    x = xp.asarray(a)
    for _ in range(2):
        r = xp.unique_all(x)
        _bits_equal(r.values, want_vals)
        _same(r.indices, first.astype(np.int64))
        _same(r.inverse_indices, inv.astype(np.int64).reshape(a.shape))
        _same(r.counts, counts.astype(np.int64))
        _bits_equal(xp.unique_values(x), want_vals)
        v, c = xp.unique_counts(x)
        _bits_equal(v, want_vals)
        _same(c, counts.astype(np.int64))
        v, k = xp.unique_inverse(x)
        _bits_equal(v, want_vals)
        _same(k, inv.astype(np.int64).reshape(a.shape))
        np.testing.assert_array_equal(np.asarray(v)[np.asarray(k)], a)   # (NaNs compare equal here)
    traced = _gathered_values(a)
    if traced is not None:
        _bits_equal(traced, want_vals)


def test_unique_of_a_weak_scalar_and_under_grad():
    for _ in range(2):
        u = xp.unique_values(2.5)
        assert u.dtype == xp.float64 and np.asarray(u).tolist() == [2.5]
    from transforms import grad
    a = np.array([3.0, 1.0, 3.0, 2.0])
    g = grad(lambda v: xp.sum(xp.unique_values(v) ** 2))(xp.asarray(a))
    np.testing.assert_array_equal(np.asarray(g), [6.0, 2.0, 0.0, 4.0])   # (the first occurrences carry it)


# ------------------------------------------------------------------------------------------------------ isdtype

KINDS = ["bool", "signed integer", "unsigned integer", "integral", "real floating", "complex floating", "numeric"]
NP_KIND = {"bool": "b", "signed integer": "i", "unsigned integer": "u", "integral": "iu", "real floating": "f",
           "complex floating": "c", "numeric": "iufc"}


def test_isdtype_kept_answers_equal_the_categories():
    names = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64",
             "complex64", "complex128"]
    for _ in range(2):   # (the second round answers from the table)
        for n in names:
            dt, kind = getattr(xp, n), np.dtype(n if n != "bool" else "bool").kind
            for k in KINDS:
                assert xp.isdtype(dt, k) is (kind in NP_KIND[k])
            assert xp.isdtype(dt, ("real floating", "complex floating")) is (kind in "fc")
            assert xp.isdtype(dt, ()) is False
            assert xp.isdtype(dt, xp.float64) is (n == "float64")
            assert xp.isdtype(dt, (xp.int8, "bool")) is (n in ("int8", "bool"))
            assert xp.isdtype(np.dtype(n), "numeric") is (kind in "iufc")


def test_isdtype_refusals_unchanged_after_answers():
    bad = [lambda: xp.isdtype(xp.float64, "floating"), lambda: xp.isdtype(xp.float64, ["real floating"]),
           lambda: xp.isdtype(xp.float64, ("bogus",)), lambda: xp.isdtype(xp.float64, True),
           lambda: xp.isdtype(xp.float64, (["real floating"],)), lambda: xp.isdtype("float64", "numeric"),
           lambda: xp.isdtype(xp.float64, 1)]
    DT._ISDTYPE.clear()
    before = [_error(f) for f in bad]
    assert all(b is not None and b[0] in (TypeError, ValueError) for b in before)
    for _ in range(2):
        xp.isdtype(xp.float64, "real floating")
        xp.isdtype(xp.float64, ("real floating",))
        xp.isdtype(xp.float64, xp.float64)
        assert [_error(f) for f in bad] == before
    # (a kind after a match is not looked at, as before: the answer is kept, not an error)
    assert xp.isdtype(xp.float64, ("real floating", "bogus")) is True
    assert xp.isdtype(xp.float64, ("real floating", "bogus")) is True
