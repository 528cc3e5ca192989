"""The Array handle: attributes, operators, conversions, indexing, .at[], mutation, errors."""
import numpy as np
import pytest

import array_namespace as xp
from transforms import ConcretizationTypeError, grad, jit, vmap


def test_attributes_and_repr():
    a = xp.asarray([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=xp.float32)
    assert a.shape == (2, 3) and a.ndim == 2 and a.size == 6 and a.dtype == xp.float32
    assert a.T.shape == (3, 2) and a.mT.shape == (3, 2)
    assert a.__array_namespace__() is xp
    assert a.device == xp.__array_namespace_info__().default_device()
    assert repr(a) == "Array([[1., 2., 3.],\n       [4., 5., 6.]], dtype=float32)"
    assert repr(xp.asarray([1, 2])) == "Array([1, 2])"


def test_traced_values_expose_the_same_interface():
    seen = {}

    def f(x):
        seen.update(shape=x.shape, dtype=x.dtype, device=x.device, ndim=x.ndim, size=x.size,
                    ns=x.__array_namespace__(), mT=x.mT.shape, r=repr(x))
        return x
    a = xp.ones((2, 3))
    jit(f)(a)
    assert seen["shape"] == (2, 3) and seen["device"] == a.device and seen["ns"] is xp
    assert seen["mT"] == (3, 2) and "traced f64[2,3]" in seen["r"]


def test_operators_match_numpy():
    a_np = np.array([[1.5, -2.0], [3.0, 4.0]])
    b_np = np.array([[0.5, 2.0], [-1.0, 3.0]])
    a, b = xp.asarray(a_np), xp.asarray(b_np)
    cases = [(a + b, a_np + b_np), (a - 1, a_np - 1), (2 - a, 2 - a_np), (a * b, a_np * b_np),
             (a / b, a_np / b_np), (1 / a, 1 / a_np), (a ** 2, a_np ** 2), (2.0 ** a, 2.0 ** a_np),
             (a @ b, a_np @ b_np), (-a, -a_np), (+a, a_np), (abs(a), abs(a_np)), (a // b, a_np // b_np),
             (a % b, a_np % b_np), (a < b, a_np < b_np), (a >= 1.5, a_np >= 1.5), (a == b, a_np == b_np),
             (a != 3.0, a_np != 3.0)]
    for got, want in cases:
        np.testing.assert_allclose(np.asarray(got), want)
    i, j = xp.asarray([6, -7, 5]), xp.asarray([4, 2, -3])
    i_np, j_np = np.asarray(i), np.asarray(j)
    for got, want in [(i & j, i_np & j_np), (i | j, i_np | j_np), (i ^ j, i_np ^ j_np), (~i, ~i_np),
                      (i << 1, i_np << 1), (i >> 1, i_np >> 1), (i // j, i_np // j_np), (i % j, i_np % j_np)]:
        np.testing.assert_array_equal(np.asarray(got), want)


def test_in_place_operators_rebind_the_handle():
    a = xp.asarray([1.0, 2.0])
    alias = a
    a += 1
    a *= 2
    assert alias is a
    np.testing.assert_allclose(np.asarray(a), [4.0, 6.0])
    i = xp.asarray([1, 2])
    with pytest.raises(TypeError, match="dtype"):
        i /= 2


def test_conversions():
    assert float(xp.asarray(2.5)) == 2.5 and int(xp.asarray(3)) == 3 and bool(xp.asarray(True))
    assert complex(xp.asarray(1 + 2j)) == 1 + 2j and [0, 1, 2][xp.asarray(1)] == 1
    with pytest.raises(TypeError):
        bool(xp.ones(3))
    np.testing.assert_allclose(np.asarray(xp.arange(3.0)), [0, 1, 2])
    assert np.from_dlpack(xp.arange(3.0)).tolist() == [0.0, 1.0, 2.0]


def test_basic_indexing_matches_numpy():
    a_np = np.arange(60.0).reshape(3, 4, 5)
    a = xp.asarray(a_np)
    for key in [0, -1, (1, 2), (slice(None), 1), (Ellipsis, 2), (None, 0), (slice(None, None, -1),),
                (slice(3, 0, -2), Ellipsis, None), (1, slice(None), slice(4, None, -3)), (), Ellipsis,
                (slice(10, 20),), (0, None, 1, None, -2)]:
        np.testing.assert_array_equal(np.asarray(a[key]), a_np[key])
        np.testing.assert_array_equal(np.asarray(jit(lambda v, k=key: v[k])(a)), a_np[key])


def test_at_updates_match_numpy():
    a_np = np.arange(12.0).reshape(3, 4)
    a = xp.asarray(a_np)
    for idx in [(slice(None, None, -2), slice(1, 3)), (1, slice(0, 2)), (slice(None), 3)]:
        for op, np_op in [("set", lambda y, v: v), ("add", np.add), ("subtract", np.subtract),
                          ("multiply", np.multiply), ("divide", np.divide), ("power", np.power),
                          ("min", np.minimum), ("max", np.maximum)]:
            want = a_np.copy()
            want[idx] = np_op(want[idx], 5.0)
            np.testing.assert_allclose(np.asarray(getattr(a.at[idx], op)(5.0)), want)
            np.testing.assert_allclose(np.asarray(jit(lambda v, o=op, i=idx: getattr(v.at[i], o)(5.0))(a)), want)
    np.testing.assert_array_equal(np.asarray(a.at[1].get()), a_np[1])
    np.testing.assert_array_equal(np.asarray(a), a_np)   # the original is unchanged


def test_setitem_rebinds_eagerly_and_under_transforms():
    def f(x):
        y = xp.zeros((2, 3))
        y[0] = x
        y[1, ::2] = -x[0]
        return y
    x = xp.asarray([1.0, 2.0, 3.0])
    want = np.array([[1.0, 2.0, 3.0], [-1.0, 0.0, -1.0]])
    np.testing.assert_allclose(np.asarray(f(x)), want)
    np.testing.assert_allclose(np.asarray(jit(f)(x)), want)
    np.testing.assert_allclose(np.asarray(vmap(f)(xp.stack([x, x]))), np.stack([want, want]))
    # sum(f(x)) = x0 + x1 + x2 - 2 * x0
    np.testing.assert_allclose(np.asarray(grad(lambda x: xp.sum(f(x)))(x)), [-1.0, 1.0, 1.0])


def test_mutating_a_captured_array_inside_a_trace_raises():
    captured = xp.zeros(3)

    def f(x):
        captured[0] = x
        return x
    with pytest.raises(ValueError, match="outside the function"):
        jit(f)(xp.asarray(1.0))
    with pytest.raises(ValueError, match="outside the function"):
        grad(lambda x: xp.sum(f(x)))(xp.asarray(1.0))
    np.testing.assert_array_equal(np.asarray(captured), [0.0, 0.0, 0.0])


def test_error_types_and_messages():
    with pytest.raises(ValueError, match=r"\(3,\).*\(4,\)"):
        xp.ones(3) + xp.ones(4)
    with pytest.raises(TypeError, match="int64.*float64|float64.*int64"):
        xp.arange(3) + xp.ones(3)
    with pytest.raises(TypeError, match="bool"):
        xp.ones(3, dtype=xp.bool) + xp.ones(3)
    with pytest.raises(TypeError, match="object"):
        xp.asarray(object())
    with pytest.raises(TypeError, match="floating"):
        xp.sin(xp.arange(3))
    with pytest.raises(IndexError, match="out of bounds"):
        xp.ones(3)[3]
    with pytest.raises(IndexError, match="too many"):
        xp.ones(3)[0, 0]
    with pytest.raises(IndexError):
        xp.sum(xp.ones((2, 2)), axis=2)
    with pytest.raises(ValueError, match="reshape"):
        xp.reshape(xp.ones(6), (4, 2))
    with pytest.raises(ConcretizationTypeError):
        jit(lambda x: int(x), guards=False)(xp.asarray(1))


def test_dlpack_both_ways():
    a = xp.arange(5.0)
    np.testing.assert_array_equal(np.from_dlpack(a), np.arange(5.0))        # consumer picks the version
    view = np.from_dlpack(a)
    assert not view.flags.writeable                                           # zero-copy, read-only
    for kw in ({"copy": True}, {"copy": False}, {"max_version": (1, 0), "copy": False},
               {"max_version": (1, 0), "copy": True}):
        class Producer:   # hands NumPy the capsule a.__dlpack__(**kw) makes: its contents must be a's values
            def __dlpack__(self, **consumer_kw):
                return a.__dlpack__(**kw)

            def __dlpack_device__(self):
                return a.__dlpack_device__()
        np.testing.assert_array_equal(np.from_dlpack(Producer()), np.arange(5.0), err_msg=str(kw))
    with pytest.raises(BufferError):
        a.__dlpack__(dl_device=(2, 0))
    assert a.__dlpack_device__() == (1, 0)
    b = xp.from_dlpack(np.arange(3, dtype=np.int32))
    assert b.dtype == xp.int32 and np.asarray(b).tolist() == [0, 1, 2]


def test_dlpack_of_a_flipped_view_has_no_negative_strides():
    """xp.flip's value (and a flipped basic read) is a view with negative strides; torch aborts the process on
    such a capsule, so a versioned export hands over a contiguous copy, or raises BufferError for copy=False."""
    a = np.arange(24.0).reshape(6, 4)
    x = xp.asarray(a)
    for y, want in ((xp.flip(x, axis=0), a[::-1]), (xp.flip(x, axis=1), a[:, ::-1]), (x[-2::-1], a[-2::-1])):
        for kw in ({"max_version": (1, 0)}, {"max_version": (1, 0), "copy": True}, {}):
            class Producer:   # hands NumPy the capsule y.__dlpack__(**kw) makes, as NumPy reads it
                def __dlpack__(self, **consumer_kw):
                    return y.__dlpack__(**kw)

                def __dlpack_device__(self):
                    return y.__dlpack_device__()
            got = np.from_dlpack(Producer())
            assert min(got.strides) >= 0, (kw, got.strides)
            np.testing.assert_array_equal(got, want)
    with pytest.raises(BufferError, match="negative strides"):
        xp.flip(x, axis=0).__dlpack__(max_version=(1, 0), copy=False)
    view = np.from_dlpack(x[1:])   # (positive strides: still zero-copy and read-only)
    np.testing.assert_array_equal(view, a[1:])
    assert not view.flags.writeable and np.shares_memory(view, x._v.np)


# ------------------------------------------------------------ x[k] = v writes into x's own memory when it may

def _addr(a):
    return a._v.np.__array_interface__["data"][0] if hasattr(a._v, "np") else None


def test_setitem_loop_on_a_sole_holder_writes_in_place_and_equals_numpy_and_jit():
    """sklearn's _fill_diagonal writes x[i, i] = v element by element: on an array nothing else refers to,
    each write goes into x's memory (NumPy's cost) instead of copying x; the values are NumPy's and jit's."""
    from transforms import jit
    a = np.arange(36.0).reshape(6, 6)

    def fill(x):
        for i in range(6):
            x[i, i] = -1.0 * i
        x[0, 1:4] = 7.0
        return x

    x = xp.asarray(a) * 1.0          # (a kernel's fresh result)
    before = _addr(x)
    fill(x)
    want = fill(a.copy())
    np.testing.assert_array_equal(np.asarray(x), want)
    np.testing.assert_array_equal(np.asarray(jit(lambda t: fill(t * 1.0))(xp.asarray(a))), want)
    if before is not None:          # (host-held values: ARRAY_NAMESPACE_EAGER=host, the default)
        assert _addr(x) == before, "a write into a sole holder's array copied it"


@pytest.mark.parametrize("key", [(0, slice(None)), 1, "mask"])
def test_setitem_on_a_broadcast_to_result_writes_a_copy(key):
    """xp.broadcast_to's eager result may be a read-only NumPy view (one element seen at several places):
    a write must not go through it (it raised 'assignment destination is read-only' in scipy's
    RigidTransform.apply); x takes NumPy's values of a copy. (The source is a temporary: x is its only
    holder, so the write would otherwise go into x's memory.)"""
    x = xp.broadcast_to(xp.asarray([1.0, 2.0, 3.0]), (2, 3))
    want = np.broadcast_to(np.asarray([1.0, 2.0, 3.0]), (2, 3)).copy()
    if key == "mask":
        m = np.asarray([True, False])
        x[xp.asarray(m)] = xp.asarray([[4.0, 5.0, 6.0]])
        want[m] = [[4.0, 5.0, 6.0]]
    else:
        x[key] = xp.asarray([4.0, 5.0, 6.0])
        want[key] = [4.0, 5.0, 6.0]
    np.testing.assert_array_equal(np.asarray(x), want)


@pytest.mark.parametrize("holder", ["slice", "row", "same value", "reshape", "jit const", "dlpack", "numpy"])
def test_setitem_never_changes_what_another_holder_sees(holder):
    """Anything else referring to x's value or memory -- a jitted function's constant, an export -- keeps the
    value it had: the write copies x instead. A view of x (a slice, a reshape) sees the write, as NumPy's does."""
    from transforms import jit
    a = np.arange(20.0).reshape(4, 5)
    x = xp.asarray(a) + 0.0
    expect = a.copy()
    expect[1, 2], expect[2, 0:3] = 100.0, -5.0
    if holder == "slice":
        other, want = x[1:3], expect[1:3]
    elif holder == "row":
        other, want = x[1], expect[1]
    elif holder == "same value":
        other, want = xp.reshape(x, (4, 5)), expect
    elif holder == "reshape":
        other, want = xp.reshape(x, (20,)), expect.reshape(20)
    elif holder == "jit const":
        f = jit(lambda t: t + x)
        f(xp.zeros((4, 5)))
        other, want = None, a + 0.0
    elif holder == "dlpack":
        other, want = np.from_dlpack(x), a.copy()
    else:
        other, want = np.asarray(x), a.copy()
    x[1, 2] = 100.0
    x[2, 0:3] = -5.0
    np.testing.assert_array_equal(np.asarray(x), expect)
    if holder == "jit const":
        np.testing.assert_array_equal(np.asarray(f(xp.zeros((4, 5)))), want)
    else:
        np.testing.assert_array_equal(np.asarray(other), want)


def test_setitem_through_a_slice_still_writes_the_parent_and_not_other_slices():
    a = np.zeros((4, 4))
    x = xp.asarray(a) + 0.0
    s, t = x[1], x[2]
    s[1] = 3.0                       # (a slice writes through to x)
    x[2, 2] = 5.0
    a[1, 1], a[2, 2] = 3.0, 5.0
    np.testing.assert_array_equal(np.asarray(x), a)
    np.testing.assert_array_equal(np.asarray(t), a[2])    # t, taken before x[2, 2] = 5, sees it (NumPy's view)
    np.testing.assert_array_equal(np.asarray(s), a[1])
