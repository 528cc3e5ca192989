"""Creation functions where NumPy/array_api_strict accept more than the bare signature:
linspace with an integer or bool dtype, arange/linspace with 0-d array bounds.

Oracle: NumPy (array_api_strict's linspace and arange are np.linspace / np.arange).
"""
import numpy as np
import pytest

import array_namespace as xp
from transforms import jit
from transforms.core import ConcretizationTypeError

LINSPACE_CASES = [(-3, 10, 7, True), (-3.5, 10, 7, False), (0, 1, 3, True), (5, -5, 11, True), (0, 100, 0, True),
                  (7, 7, 4, True), (0, 1, 1, True), (2.5, 9.75, 5, True), (-10, -1, 4, False), (0, 255, 256, True)]


# int8 only where every point fits (NumPy's cast of out-of-range values is not a defined result)
INT_CASES = [(c, dt) for dt in (xp.int8, xp.int16, xp.int32, xp.int64) for c in LINSPACE_CASES
             if dt != xp.int8 or max(abs(c[0]), abs(c[1])) <= 127]


@pytest.mark.parametrize("case,dtype", INT_CASES, ids=lambda v: v.name if hasattr(v, "name") else str(v))
def test_linspace_integer_dtype_matches_numpy(case, dtype):
    start, stop, num, endpoint = case
    got = xp.linspace(start, stop, num, dtype=dtype, endpoint=endpoint)
    ref = np.linspace(start, stop, num, dtype=dtype.dtype, endpoint=endpoint)   # floors (NumPy >= 2)
    assert got.dtype == dtype and got.shape == ref.shape
    np.testing.assert_array_equal(np.asarray(got), ref)
    np.testing.assert_array_equal(np.asarray(jit(lambda: xp.linspace(start, stop, num, dtype=dtype,
                                                                    endpoint=endpoint))()), ref)


@pytest.mark.parametrize("dtype", [xp.uint8, xp.uint32, xp.uint64], ids=lambda d: d.name)
def test_linspace_unsigned_dtype_matches_numpy(dtype):
    for start, stop, num in ((0, 10, 4), (3, 200, 9), (1.5, 2.5, 3)):
        got = xp.linspace(start, stop, num, dtype=dtype)
        np.testing.assert_array_equal(np.asarray(got), np.linspace(start, stop, num, dtype=dtype.dtype))
        assert got.dtype == dtype


def test_linspace_bool_dtype_matches_numpy():
    for start, stop, num in ((0, 1, 3), (0, 0, 2), (-1, 1, 5)):
        got = xp.linspace(start, stop, num, dtype=xp.bool)
        assert got.dtype == xp.bool
        np.testing.assert_array_equal(np.asarray(got), np.linspace(start, stop, num, dtype=bool))


def test_linspace_complex_bounds_with_a_real_dtype_is_an_error():
    for dt in (xp.int64, xp.float64):
        with pytest.raises(TypeError, match="linspace"):
            xp.linspace(0, 1j, 3, dtype=dt)


def test_arange_of_0d_arrays():
    for args, ref in (((xp.asarray(5),), np.arange(5)), ((xp.asarray(2.5),), np.arange(2.5)),
                      ((1, xp.asarray(7), xp.asarray(2)), np.arange(1, 7, 2)),
                      ((xp.asarray(0.5), 3.0, xp.asarray(0.25)), np.arange(0.5, 3.0, 0.25)),
                      ((xp.asarray(np.int32(4)),), np.arange(4))):
        got = xp.arange(*args)
        assert got.dtype == (xp.int64 if ref.dtype.kind == "i" else xp.float64)
        np.testing.assert_array_equal(np.asarray(got), ref)
    n = xp.asarray(6)
    np.testing.assert_array_equal(np.asarray(xp.arange(n, dtype=xp.float32)), np.arange(6, dtype=np.float32))


def test_linspace_of_0d_arrays():
    got = xp.linspace(xp.asarray(0.0), xp.asarray(1.0), xp.asarray(5))
    np.testing.assert_allclose(np.asarray(got), np.linspace(0.0, 1.0, 5), rtol=0, atol=0)


def test_arange_rejects_non_scalar_arrays_and_traced_bounds():
    with pytest.raises(TypeError, match="arange: stop"):
        xp.arange(xp.asarray([5]))
    with pytest.raises(TypeError, match="arange: stop"):
        xp.arange(xp.asarray(True))
    with pytest.raises(ConcretizationTypeError):   # the length would depend on a traced value
        jit(lambda n: xp.arange(n), guards=False)(xp.asarray(5))


def test_asarray_copy_false_of_host_data_raises_and_copies_never_alias():
    """The standard: copy=False must never copy, and raise ValueError where a copy is needed. An Array cannot
    share a NumPy buffer (the NumPy owner could write to it behind the Array's back), so NumPy arrays and
    scalars raise, naming asarray and the way out (issue 24: it silently copied); copy=None/True copy, and
    a later write to the NumPy array does not reach the Array."""
    for obj in (np.ones(3), np.float64(2.0), np.arange(4, dtype=np.int32).reshape(2, 2)):
        with pytest.raises(ValueError, match="asarray: copy=False.*copy=None or copy=True"):
            xp.asarray(obj, copy=False)
    n = np.arange(3.0)
    a, b = xp.asarray(n), xp.asarray(n, copy=True)
    n[0] = 99.0
    assert np.asarray(a).tolist() == [0.0, 1.0, 2.0] and np.asarray(b).tolist() == [0.0, 1.0, 2.0]
    x = xp.ones(2)
    assert xp.asarray(x, copy=False) is x


def test_creations_hold_the_memory_they_made_and_share_it_with_nothing():
    """A creation's host array (np.full's, np.eye's, arange's, a list's, a dtype conversion's) becomes the value
    as it is, not copied again (device_put fresh=True): each result owns its memory, an element write goes into
    it, no other result or host array sees the write, and the user's NumPy array never becomes the value."""
    n = np.arange(300)
    made = [lambda: xp.full((40, 40), 1.5), lambda: xp.zeros((3, 36, 36)), lambda: xp.empty((500,)),
            lambda: xp.eye(36), lambda: xp.arange(500.0), lambda: xp.asarray([[1.0, 2.0]] * 200),
            lambda: xp.asarray(n, dtype=xp.float64)]
    for make in made:
        a, b = make(), make()
        want = np.asarray(b).copy()
        at = a._v.np.ctypes.data
        assert a._v.np.flags.owndata   # the array made, not a copy (a copy of >= 4 KB was a view of aligned memory)
        a[(0,) * a.ndim] = -7.0
        assert a._v.np.ctypes.data == at and float(a[(0,) * a.ndim]) == -7.0   # written in place
        np.testing.assert_array_equal(np.asarray(b), want)                  # no other result shares it
    assert n[0] == 0 and not np.shares_memory(xp.asarray(n, dtype=xp.float64)._v.np, n)


@pytest.mark.parametrize("data, want", [(np.array([1.5, -np.inf, 6e-8], np.float16), "float64"),
                                        (np.float16(2.5), "float64"), (np.array([[1.0]], np.longdouble), "float64"),
                                        (np.array([1 + 2j], np.clongdouble), "complex128")])
def test_asarray_of_a_float_dtype_the_standard_lacks_is_the_default_float(data, want):
    """NumPy float16 / longdouble data become the default float (complex: complex128), values converted as
    NumPy's astype: before, the Array kept the foreign dtype and its .dtype raised KeyError."""
    x = xp.asarray(data)
    assert x.dtype == getattr(xp, want) and x.shape == np.shape(data)
    np.testing.assert_array_equal(np.asarray(x), np.asarray(data).astype(want))
    np.testing.assert_array_equal(np.asarray(jit(lambda v: v * 2)(x)), np.asarray(data).astype(want) * 2)


def test_from_dlpack_of_a_dtype_the_namespace_lacks_is_a_type_error_naming_it():
    """from_dlpack keeps x's dtype, so float16 is a TypeError naming it (asarray converts it instead); a dtype
    NumPy's DLPack import lacks (bfloat16, here a jaxlib buffer's capsule, as torch's would be) is a TypeError
    from both, not NumPy's RuntimeError."""
    import ml_dtypes
    from transforms.core import ShapedArray
    from xla import _jaxlib, runtime
    with pytest.raises(TypeError, match=r"from_dlpack: x has dtype float16"):
        xp.from_dlpack(np.ones(3, np.float16))
    a = np.ones(3, ml_dtypes.bfloat16)
    buf = _jaxlib.device_put(a, ShapedArray((3,), a.dtype), runtime.default_device())

    class Producer:
        def __dlpack__(self, **kw):
            return _jaxlib.to_dlpack(buf)

        def __dlpack_device__(self):
            return (1, 0)
    for fn in (xp.asarray, xp.from_dlpack):
        with pytest.raises(TypeError, match=rf"{fn.__name__}: cannot import x \(a Producer\) through DLPack"):
            fn(Producer())
    assert xp.from_dlpack(np.ones(2, np.float32)).dtype == xp.float32
    assert xp.asarray(np.ones(2, np.float16)).dtype == xp.float64
