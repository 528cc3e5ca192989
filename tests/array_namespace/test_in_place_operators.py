"""`x op= y` eagerly writes into x's memory where x alone holds its value and takes IN_PLACE_MIN_BYTES or more, with
the bits of `x op y` (a smaller x is rebound to the new array `x op y`: its checks cost more than the allocation).

NumPy's `+=` costs what it writes; a new array per update also faults in fresh pages for a large one (sklearn's
euclidean_distances adds twice in place to an n x n matrix). The write must never be seen by another holder of
x's value (a jitted function's constant, an export, another handle), and a view family keeps NumPy's semantics.
"""
import numpy as np
import pytest

import array_namespace as xp
from array_namespace._elementwise import IN_PLACE_MIN_BYTES
from xla import host_parallel
from transforms import jit, vmap

_OPS = {"+": (lambda a, b: a + b, "__iadd__"), "-": (lambda a, b: a - b, "__isub__"),
        "*": (lambda a, b: a * b, "__imul__"), "/": (lambda a, b: a / b, "__itruediv__"),
        "&": (lambda a, b: a & b, "__iand__"), "|": (lambda a, b: a | b, "__ior__"),
        "^": (lambda a, b: a ^ b, "__ixor__")}
_CASES = [(op, dt) for op in "+-*/" for dt in ("float64", "float32", "complex128")] + \
         [(op, dt) for op in "+-*" for dt in ("int32", "uint8")] + [(op, "bool") for op in "&|^"] + \
         [(op, "int64") for op in "&|^"]


def _addr(a):
    return a._v.np.__array_interface__["data"][0] if hasattr(a._v, "np") else None


def _data(rng, shape, dt):
    if dt == "bool":
        return rng.random(shape) < 0.5
    if dt in ("int32", "uint8", "int64"):
        return rng.integers(1, 9, shape).astype(dt)
    v = rng.standard_normal(shape) + (1j * rng.standard_normal(shape) if dt == "complex128" else 0)
    return v.astype(dt)


@pytest.mark.parametrize("other", ["same shape", "row", "column", "0-d", "scalar"])
@pytest.mark.parametrize("op,dt", _CASES)
def test_in_place_operator_writes_x_memory_with_the_bits_of_the_operator(op, dt, other):
    rng = np.random.default_rng(len(op + dt + other))
    m, n = 256, 257   # (at least IN_PLACE_MIN_BYTES for every dtype, uint8 and bool included)
    a = _data(rng, (m, n), dt)
    b = {"same shape": _data(rng, (m, n), dt), "row": _data(rng, (n,), dt), "column": _data(rng, (m, 1), dt),
         "0-d": _data(rng, (), dt)}.get(other)
    fn, name = _OPS[op]
    y = (True if dt == "bool" else 3) if other == "scalar" else xp.asarray(b)
    want = np.asarray(fn(xp.asarray(a), y))            # the out-of-place operator's value
    with np.errstate(all="ignore"):
        expect = fn(a, b if other != "scalar" else y)  # NumPy's
    x = (xp.asarray(a) | False) if dt == "bool" else xp.asarray(a) + 0   # (a fresh result: x alone holds it)
    before = _addr(x)
    handle = x
    x = getattr(x, name)(y)
    assert x is handle
    got = np.asarray(x)
    assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
    np.testing.assert_allclose(got, expect, rtol=2e-7 if dt in ("float32", "complex64") else 1e-15)
    if before is not None and not (op == "/" and dt == "complex128"):
        # (host-held values, the default on the CPU; complex division is XLA's formula, not a NumPy ufunc)
        assert _addr(x) == before, "x op= y copied x although nothing else holds it"


def test_a_large_in_place_update_split_over_the_cores_has_the_bits_of_the_operator():
    n = host_parallel.MIN_ELEMENTS // 64 + 3            # (rows x 64 columns: past the split's bound)
    rng = np.random.default_rng(1)
    a, col = rng.standard_normal((n, 64)), rng.standard_normal((n, 1))
    want = np.asarray(xp.asarray(a) * xp.asarray(col))
    x = xp.asarray(a) * 1.0
    before = _addr(x)
    x *= xp.asarray(col)
    assert np.asarray(x).tobytes() == want.tobytes() == (a * col).tobytes()
    if before is not None:
        assert _addr(x) == before


@pytest.mark.parametrize("dt", ["float64", "uint8"])
def test_a_small_x_is_rebound_with_the_bits_of_the_operator_and_a_large_one_written_in_place(dt):
    """Below IN_PLACE_MIN_BYTES x takes the new array x op y (the same bits); from it, x's own memory."""
    rng = np.random.default_rng(3)
    k = IN_PLACE_MIN_BYTES // np.dtype(dt).itemsize
    for n, in_place in ((k - 1, False), (k, True), (7, False)):
        a, b = _data(rng, (n,), dt), _data(rng, (n,), dt)
        x = xp.asarray(a) + 0
        before = _addr(x)
        x += xp.asarray(b)
        assert np.asarray(x).tobytes() == (a + b).tobytes()
        if before is not None:
            assert (_addr(x) == before) == in_place, n


@pytest.mark.parametrize("holder", ["copy=False", "reshape", "jit const", "dlpack", "numpy", "vmap identity"])
def test_another_holder_keeps_its_value(holder):
    """x op= y never changes what something else holding x's value or memory sees (x large enough to be written
    in place were it alone)."""
    a = np.arange(96 * 100.0).reshape(96, 100)
    x = xp.asarray(a) + 0.0
    if holder == "copy=False":   # (the same handle, as NumPy's asarray gives: it sees the update)
        other, want = xp.asarray(x, copy=False), a + 1.0
    elif holder == "reshape":
        other, want = xp.reshape(x, (-1,)), a.reshape(-1)
    elif holder == "vmap identity":   # (another handle of x's very value)
        other, want = vmap(lambda t: t)(x), a
    elif holder == "jit const":
        f = jit(lambda t: t + x)
        f(xp.zeros(a.shape))
        other, want = None, a
    elif holder == "dlpack":
        other, want = np.from_dlpack(x), a.copy()
    else:
        other, want = np.asarray(x), a.copy()
    x += 1.0
    np.testing.assert_array_equal(np.asarray(x), a + 1.0)
    if holder == "jit const":
        np.testing.assert_array_equal(np.asarray(f(xp.zeros(a.shape))), want)
    elif holder == "reshape":   # (a reshape of x is NumPy's view: it sees the write, as NumPy's does)
        np.testing.assert_array_equal(np.asarray(other), (a + 1.0).reshape(-1))
    else:
        np.testing.assert_array_equal(np.asarray(other), want)


def test_views_see_the_update_as_numpy_views_do():
    a = np.arange(12.0).reshape(3, 4)
    x = xp.asarray(a) + 0.0
    row = x[1]
    x += 10.0
    row += 1.0
    a = a + 10.0
    a[1] += 1.0
    np.testing.assert_array_equal(np.asarray(x), a)
    np.testing.assert_array_equal(np.asarray(row), a[1])


def test_dtype_and_shape_errors_and_transforms_are_unchanged():
    i = xp.asarray([1, 2]) + 0
    with pytest.raises(TypeError, match="dtype"):
        i /= 2
    f = xp.asarray([1.0, 2.0], dtype=xp.float32) + 0.0
    with pytest.raises(TypeError, match="dtype"):
        f += xp.asarray([1.0, 2.0])
    v = xp.asarray([1.0, 2.0, 3.0]) + 0.0
    with pytest.raises(ValueError, match="shape"):
        v += xp.ones((2, 3))
    c = xp.asarray([1.0, 2.0]) + 0.0

    def g(t):
        c.__iadd__(t)   # (a closed-over array mutated inside jit)
        return c
    with pytest.raises(ValueError, match="created outside"):
        jit(g)(xp.ones(2))
    np.testing.assert_array_equal(np.asarray(c), [1.0, 2.0])

    def h(t):
        u = t * 2.0
        u += 1.0
        u *= t
        return u
    t = xp.asarray([1.0, -2.0, 3.5])
    np.testing.assert_array_equal(np.asarray(jit(h)(t)), np.asarray(h(t)))
    np.testing.assert_array_equal(np.asarray(h(t)), (np.asarray(t) * 2.0 + 1.0) * np.asarray(t))
