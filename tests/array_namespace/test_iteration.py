"""Iterating an eager 1-D array (Array.__iter__, _array._elements) gives what x[i] gives: 0-d arrays of the same
dtype and weak type, equal to NumPy's elements, each its own value; a write into x while iterating is seen by the
elements read after it (as x[i] would see it); traced arrays (jit, grad, vmap) iterate with x[i] as before."""
import numpy as np
import pytest

import array_namespace as xp
from transforms import grad, jit, vmap

R = np.random.default_rng(5)


def _data(dt, n=7):
    a = R.standard_normal(n) * 10
    if dt == "bool":
        return a > 0
    if dt.startswith("complex"):
        return (a + 1j * a[::-1]).astype(dt)
    return a.astype(dt)


@pytest.mark.parametrize("dt", ["float32", "float64", "int8", "int32", "uint16", "uint64", "bool", "complex64",
                                "complex128"])
def test_iteration_equals_indexing_and_numpy(dt):
    x_np = _data(dt)
    x = xp.asarray(x_np)
    got = list(x)
    assert len(got) == len(x_np)
    for i, (g, w) in enumerate(zip(got, x_np)):
        ref = x[i]
        assert type(g) is xp.Array and g.shape == () and g.dtype == x.dtype
        assert g._v.aval == ref._v.aval   # (dtype, shape and weak type as x[i]'s)
        np.testing.assert_array_equal(np.asarray(g), w)
        assert np.asarray(g).dtype == x_np.dtype


def test_iteration_of_weak_and_special_values():
    x = xp.asarray([0.0, -0.0, np.nan, np.inf, -np.inf, 5e-324])
    got = [np.asarray(e) for e in x]
    want = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 5e-324])
    np.testing.assert_array_equal(np.array(got), want)
    assert np.signbit(got[1]) and not np.signbit(got[0])
    w = xp.arange(3.0) * 1.5 + 2   # (a computed array)
    assert [float(e) for e in w] == [2.0, 3.5, 5.0]
    one = xp.asarray([4.0])
    assert [float(e) for e in one] == [4.0]
    assert list(xp.asarray(np.zeros(0))) == []


def test_elements_are_their_own_values():
    x = xp.asarray(np.arange(5.0))
    els = list(x)
    els[2][...] = 9.0   # a write into an element touches neither x nor the other elements
    assert np.asarray(x).tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert [float(e) for e in els] == [0.0, 1.0, 9.0, 3.0, 4.0]
    y = x + 1.0
    e0 = next(iter(y))
    assert float(e0) == 1.0 and np.asarray(y).tolist() == [1.0, 2.0, 3.0, 4.0, 5.0]


def test_a_write_while_iterating_is_seen_by_the_rest():
    x = xp.asarray(np.arange(6.0))
    it = iter(x)
    assert [float(next(it)) for _ in range(2)] == [0.0, 1.0]
    x[4] = 40.0            # (x is rebound: the elements after this are read as x[i])
    x[1] = 10.0            # (already read: not seen)
    assert [float(e) for e in it] == [2.0, 3.0, 40.0, 5.0]
    want = np.arange(6.0)
    want[4], want[1] = 40.0, 10.0
    assert [float(e) for e in x] == want.tolist()


def test_iteration_of_rows_is_unchanged():
    x_np = R.standard_normal((3, 4))
    x = xp.asarray(x_np)
    rows = list(x)
    for r, w in zip(rows, x_np):
        assert r.shape == (4,)
        np.testing.assert_array_equal(np.asarray(r), w)
    assert [list(map(float, r)) for r in x] == x_np.tolist()
    with pytest.raises(TypeError, match="iteration over a 0-d array"):
        iter(xp.asarray(1.0))


def test_iteration_under_jit_grad_and_vmap():
    x_np = R.standard_normal(5)

    def f(v):
        return xp.stack([e * 2.0 + 1.0 for e in v])

    def g(v):
        return sum((e * e for e in v), xp.asarray(0.0))

    want = x_np * 2.0 + 1.0
    np.testing.assert_allclose(np.asarray(f(xp.asarray(x_np))), want, rtol=1e-15)
    np.testing.assert_allclose(np.asarray(jit(f)(xp.asarray(x_np))), want, rtol=1e-15)
    np.testing.assert_allclose(np.asarray(grad(g)(xp.asarray(x_np))), 2.0 * x_np, rtol=1e-14)
    b_np = R.standard_normal((3, 5))
    np.testing.assert_allclose(np.asarray(vmap(g)(xp.asarray(b_np))), (b_np ** 2).sum(1), rtol=1e-14)
    np.testing.assert_allclose(np.asarray(vmap(f)(xp.asarray(b_np))), b_np * 2.0 + 1.0, rtol=1e-15)


def test_stack_of_a_python_loop_over_an_array_equals_numpy():
    v_np = np.arange(1000, dtype=np.float32)
    got = xp.stack([e * 2.0 + 1.0 for e in xp.asarray(v_np)])
    assert got.dtype == xp.float32
    np.testing.assert_array_equal(np.asarray(got), v_np * np.float32(2.0) + np.float32(1.0))
