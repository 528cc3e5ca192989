"""The namespace's fast paths for repeated calls give what the validated path gives, and refuse what it refuses.

sum and mean keep a validated plan per (operand aval, axis) when axis is None or a Python int; matmul takes
2-D @ 2-D of one numeric dtype straight to one dot_general. Checked here: results against NumPy (dtypes kept:
float32 stays float32, integer sums accumulate in int64/uint64), the same call repeated (the plan taken) and
under jit, errors still raised once a plan exists for a look-alike argument (axis=True after axis=1), and a
mean of a mid-sized input compiles nothing however often it runs.
"""
import numpy as np
import pytest

import array_namespace as xp
from transforms import jit
from xla import host, runtime

R = np.random.default_rng(7)


def _np(a):
    return np.asarray(a)


@pytest.mark.parametrize("dt", ["float32", "float64", "int8", "int32", "uint8", "uint64", "bool", "complex64"])
def test_sum_repeated_and_jitted_equals_numpy(dt):
    a = (R.standard_normal((4, 5)) * 50).astype(dt) if dt != "bool" else R.random((4, 5)) < 0.5
    if dt == "complex64":
        a = a + 1j * a[::-1]
    want_dt = {"int8": np.int64, "int32": np.int64, "bool": np.int64, "uint8": np.uint64}.get(dt, a.dtype)
    x = xp.asarray(a)
    for axis in (None, 0, 1, -1):
        for keepdims in (False, True):
            want = np.sum(a, axis=axis, dtype=want_dt, keepdims=keepdims)
            for _ in range(3):   # (the first call validates and keeps the plan, the others take it)
                got = _np(xp.sum(x, axis=axis, keepdims=keepdims))
                assert got.dtype == want.dtype and got.shape == want.shape
                np.testing.assert_allclose(got, want, rtol=1e-6 if dt in ("float32", "complex64") else 1e-12)
            jitted = _np(jit(lambda v, axis=axis, keepdims=keepdims: xp.sum(v, axis=axis, keepdims=keepdims))(x))
            assert jitted.dtype == want.dtype
            if dt in ("float32", "complex64"):   # (jit sums these in float64/complex128, rounded once: issue 23)
                want = np.sum(a.astype(np.complex128 if dt == "complex64" else np.float64), axis=axis,
                              keepdims=keepdims)
            np.testing.assert_allclose(jitted, want, rtol=1e-6 if dt in ("float32", "complex64") else 1e-12)


def test_sum_wraps_and_keeps_special_values():
    a = np.array([127, 1], np.int8)
    assert _np(xp.sum(xp.asarray(a))) == 128   # (int8 accumulates in int64)
    assert _np(xp.sum(xp.asarray(a), dtype=xp.int8)) == -128   # (wraps, as XLA)
    f = np.array([1.0, np.nan, -np.inf], np.float32)
    for _ in range(2):
        out = xp.sum(xp.asarray(f))
        assert out.dtype == xp.float32 and np.isnan(_np(out))
    assert _np(xp.sum(xp.asarray(np.zeros((0, 3))), axis=0)).tolist() == [0.0, 0.0, 0.0]


def test_plans_do_not_let_lookalike_arguments_through():
    x = xp.asarray(np.ones((2, 3)))
    for _ in range(2):
        xp.sum(x, axis=1)
        xp.mean(x, axis=1)
    for bad in (True, 1.0, "1"):
        with pytest.raises(TypeError):
            xp.sum(x, axis=bad)
        with pytest.raises(TypeError):
            xp.mean(x, axis=bad)
    with pytest.raises(IndexError):
        xp.sum(x, axis=2)
    xi = xp.asarray(np.ones((2, 3), np.int32))
    xp.sum(xi)
    with pytest.raises(TypeError):
        xp.mean(xi)   # (an integer mean is refused: the plan for float64 of that shape does not apply)
    with pytest.raises(TypeError):
        xp.sum("not an array")


def test_weakly_typed_operands_become_strong():
    for _ in range(2):
        s = xp.sum(2.5)   # a Python scalar: a weakly typed 0-d array, whose sum is strongly typed
        assert s.dtype == xp.float64
        assert (s + xp.asarray(1.0, dtype=xp.float32)).dtype == xp.float64
        m = xp.mean(2.5)
        assert m.dtype == xp.float64 and _np(m) == 2.5


@pytest.mark.parametrize("dt", ["float32", "float64", "complex128"])
def test_mean_repeated_and_jitted_equals_numpy(dt):
    a = R.standard_normal((6, 7)).astype(dt)
    a[2, 3] = np.nan
    x = xp.asarray(a)
    for axis in (None, 0, 1, -2):
        for keepdims in (False, True):
            want = np.mean(a, axis=axis, keepdims=keepdims)
            for _ in range(3):
                got = _np(xp.mean(x, axis=axis, keepdims=keepdims))
                assert got.dtype == a.dtype and got.shape == want.shape
                np.testing.assert_allclose(got, want, rtol=1e-6 if dt == "float32" else 1e-12)
            jitted = _np(jit(lambda v, axis=axis, keepdims=keepdims: xp.mean(v, axis=axis, keepdims=keepdims))(x))
            if dt == "float32":   # (jit sums these in float64, rounded once: issue 23)
                want = np.mean(a.astype(np.float64), axis=axis, keepdims=keepdims)
            np.testing.assert_allclose(jitted, want, rtol=1e-6 if dt == "float32" else 1e-12)
    empty = xp.asarray(np.zeros((0, 3), dt))
    for _ in range(2):
        assert np.isnan(_np(xp.mean(empty, axis=0))).all()


@pytest.mark.skipif(host.MODE == "xla", reason="host kernels switched off (ARRAY_NAMESPACE_EAGER=xla)")
def test_a_mid_sized_mean_compiles_nothing_however_often():
    from xla import host_eager
    a = R.standard_normal((300, 200))
    x = xp.asarray(a)
    before = runtime.compile_calls[0]
    for _ in range(5):
        out = xp.mean(x, axis=0, keepdims=True)
    assert runtime.compile_calls[0] == before
    np.testing.assert_allclose(_np(out), a.mean(axis=0, keepdims=True), rtol=1e-12)
    assert host_eager.BY_OP_MAX_ELEMENTS > a.size


@pytest.mark.parametrize("d1, d2", [("float32", "float32"), ("float64", "float64"), ("int32", "int32"),
                                    ("int8", "int8"), ("float32", "float64"), ("complex64", "complex64")])
def test_matmul_2d_equals_numpy(d1, d2):
    a, b = (R.standard_normal((3, 4)) * 5).astype(d1), (R.standard_normal((4, 2)) * 5).astype(d2)
    x, y = xp.asarray(a), xp.asarray(b)
    want_dt = np.result_type(a, b)
    want = np.matmul(a.astype(want_dt), b.astype(want_dt))
    for _ in range(2):
        got = _np(xp.matmul(x, y))
        assert got.dtype == want_dt and got.shape == (3, 2)
        np.testing.assert_allclose(got, want, rtol=1e-5 if want_dt in (np.float32, np.complex64) else 1e-12)
        got = _np(x @ y)
        np.testing.assert_allclose(got, want, rtol=1e-5 if want_dt in (np.float32, np.complex64) else 1e-12)
    np.testing.assert_allclose(_np(jit(xp.matmul)(x, y)), want, rtol=1e-5 if want_dt in (np.float32,
                                                                                           np.complex64) else 1e-12)


@pytest.mark.parametrize("dt", ["float64", "float32", "int32", "complex128"])
def test_matmul_matrix_vector_equals_numpy_and_binds_what_the_general_path_binds(dt):
    from transforms import make_jaxpr
    for m, k, n in ((3, 4, 2), (1, 1, 1), (0, 3, 2), (2, 0, 3)):
        a, v, b = ((R.standard_normal(s) * 5).astype(dt) for s in ((m, k), (k,), (k, n)))
        x, w, y = xp.asarray(a), xp.asarray(v), xp.asarray(b)
        tol = 1e-5 if dt == "float32" else 1e-12
        for _ in range(2):
            for got, want in ((x @ w, a @ v), (xp.matmul(w, y), v @ b)):
                assert _np(got).dtype == want.dtype and got.shape == want.shape
                np.testing.assert_allclose(_np(got), want, rtol=tol)
        np.testing.assert_allclose(_np(jit(xp.matmul)(x, w)), a @ v, rtol=tol)
        # the 1-D operand a one-column (one-row) matrix, one dot_general, the result reshaped: nothing else
        for p, q in ((x, w), (w, y)):
            eqns = make_jaxpr(xp.matmul)(p, q).jaxpr.eqns
            assert [e.prim.name for e in eqns] == ["reshape", "dot_general", "reshape"]
    with pytest.raises(ValueError):
        xp.asarray(np.ones((2, 3))) @ xp.asarray(np.ones(2))   # 3 != 2
    with pytest.raises(ValueError):
        xp.asarray(np.ones(2)) @ xp.asarray(np.ones((3, 2)))
    assert (xp.asarray(np.ones((2, 3), np.float32)) @ xp.asarray(np.ones(3))).dtype == xp.float64   # (promoted)


def test_matmul_2d_refusals():
    x = xp.asarray(np.ones((2, 3)))
    with pytest.raises(ValueError):
        xp.matmul(x, x)   # 3 != 2
    b = xp.asarray(np.ones((3, 2), bool))
    with pytest.raises(TypeError):
        xp.matmul(b, xp.matrix_transpose(b))
    with pytest.raises(TypeError):   # (no promotion between kinds)
        xp.matmul(xp.asarray(np.ones((2, 2), np.int32)), xp.asarray(np.ones((2, 2), np.float32)))
    w = xp.matmul(x, xp.asarray(np.ones((3, 0))))
    assert w.shape == (2, 0)
    nan = xp.asarray(np.array([[np.nan, 1.0]]))
    assert np.isnan(_np(xp.matmul(nan, xp.asarray(np.ones((2, 1)))))).all()


@pytest.mark.parametrize("fname", ["max", "min"])
@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_max_min_propagate_nan_eagerly_jitted_and_vmapped(fname, dt):
    """max/min bind the bare reduction: XLA's and the host kernels' reductions propagate NaN themselves."""
    from transforms import vmap
    f = getattr(xp, fname)
    rng = np.random.default_rng(11)
    for shape, axis in (((7,), None), ((5, 33), 0), ((5, 33), 1), ((4, 3, 40), (0, 2)), ((1000,), 0)):
        a = rng.standard_normal(shape).astype(dt)
        flat = a.reshape(-1)
        flat[rng.integers(0, flat.size, 3)] = np.nan
        flat[rng.integers(0, flat.size)] = np.inf if fname == "max" else -np.inf
        want = getattr(np, fname)(a, axis=axis)
        for got in (f(xp.asarray(a), axis=axis), jit(lambda v: f(v, axis=axis))(xp.asarray(a))):
            got = _np(got)
            assert got.dtype == a.dtype
            np.testing.assert_array_equal(got, want)   # (NaN where NumPy has NaN)
    a = rng.standard_normal((6, 9)).astype(dt)
    a[2, 4] = np.nan
    got = _np(vmap(lambda r: f(r))(xp.asarray(a)))
    np.testing.assert_array_equal(got, getattr(np, fname)(a, axis=1))
    assert np.isnan(_np(f(xp.asarray(np.array([np.nan, np.nan], dt)))))


def test_max_gradient_away_from_nan():
    from transforms import grad
    a = np.array([1.0, 3.0, 3.0, -2.0])
    g = _np(grad(lambda v: xp.max(v))(xp.asarray(a)))
    np.testing.assert_allclose(g, [0.0, 0.5, 0.5, 0.0])   # (ties share the tangent)
    g = _np(grad(lambda v: xp.min(v * 2.0))(xp.asarray(a)))
    np.testing.assert_allclose(g, [0.0, 0.0, 0.0, 2.0])


def test_max_min_any_all_plans_keep_validating():
    x = xp.asarray(np.array([[1.0, 5.0, -2.0], [0.5, 0.0, 3.0]]))
    b = xp.asarray(np.array([[True, False, True], [False, False, True]]))
    for _ in range(3):
        for axis in (None, 0, 1, -1):
            for keepdims in (False, True):
                a = np.asarray(x)
                np.testing.assert_array_equal(_np(xp.max(x, axis=axis, keepdims=keepdims)),
                                              a.max(axis=axis, keepdims=keepdims))
                np.testing.assert_array_equal(_np(xp.min(x, axis=axis, keepdims=keepdims)),
                                              a.min(axis=axis, keepdims=keepdims))
                for f, g in ((xp.any, np.any), (xp.all, np.all)):
                    for arr in (b, x):
                        got = _np(f(arr, axis=axis, keepdims=keepdims))
                        assert got.dtype == np.bool_
                        np.testing.assert_array_equal(got, g(np.asarray(arr), axis=axis, keepdims=keepdims))
        for f in (xp.max, xp.min, xp.any, xp.all):
            with pytest.raises(TypeError):
                f(x, axis=True)
            with pytest.raises(IndexError):
                f(x, axis=2)
        e = xp.asarray(np.zeros((0, 3)))
        for f in (xp.max, xp.min):
            with pytest.raises(ValueError):
                f(e, axis=0)
            assert f(e, axis=1).shape == (0,)
        with pytest.raises(TypeError):
            xp.max(xp.asarray(np.array([1j])))
        assert _np(xp.any(e)) == np.False_ and _np(xp.all(e)) == np.True_
        z = xp.asarray(np.float64(0.0))
        assert _np(xp.any(z)) == np.False_ and _np(xp.all(xp.asarray(np.float64(2.0)))) == np.True_
        assert xp.any(z).dtype == xp.bool and xp.any(z).shape == ()


@pytest.mark.parametrize("fname", ["var", "std"])
def test_var_std_plans_keep_validating(fname):
    f, g = getattr(xp, fname), getattr(np, fname)
    a = R.standard_normal((5, 4))
    x = xp.asarray(a)
    for _ in range(3):
        for axis in (None, 0, 1):
            for correction in (0, 1, 0.5, 1.0, 5):
                n = a.size if axis is None else a.shape[axis]
                got = _np(f(x, axis=axis, correction=correction))
                if n - correction > 0:
                    np.testing.assert_allclose(got, g(a, axis=axis, ddof=correction), rtol=1e-12)
                else:   # (documented: NaN where N - correction <= 0)
                    assert np.isnan(got).all()
        assert np.isnan(_np(f(x, correction=float("nan"))))
        for bad in (True, 1j, "1", None):
            with pytest.raises(TypeError):
                f(x, correction=bad)
        with pytest.raises(TypeError):
            f(x, axis=True)
        with pytest.raises(TypeError):
            f(xp.asarray(np.ones((2, 2), np.int32)))
        with pytest.raises(TypeError):
            f(xp.asarray(np.ones((2, 2), np.complex128)))
        f32 = f(xp.asarray(a.astype(np.float32)), axis=0, correction=np.float64(1.0))
        assert f32.dtype == xp.float32
        np.testing.assert_allclose(_np(f32), g(a.astype(np.float32), axis=0, ddof=1), rtol=2e-6)


def test_matmul_remembered_operand_types_do_not_let_others_through():
    x, y = xp.asarray(np.ones((2, 3))), xp.asarray(np.ones((3, 4)))
    x32 = xp.asarray(np.ones((2, 3), np.float32))
    for _ in range(3):
        assert xp.matmul(x, y).shape == (2, 4)
        with pytest.raises(ValueError):
            xp.matmul(y, x)   # (3, 4) @ (2, 3)
        with pytest.raises(ValueError):
            xp.matmul(x, x)
        assert xp.matmul(x32, xp.asarray(np.ones((3, 1), np.float32))).dtype == xp.float32
        assert xp.matmul(x32, y).dtype == xp.float64   # (promoted: float32 with float64)
        np.testing.assert_array_equal(_np(xp.matmul(x, y)), np.full((2, 4), 3.0))


def test_result_type_gives_namespace_dtypes_after_the_engine_asked_with_numpy_dtypes():
    # the (scalar type, dtype) memo once returned the NumPy dtype an engine caller had stored for result_type
    from array_namespace import _dtypes as D
    D._SCALAR_OK.clear()
    for dt in (xp.float32, xp.float64, xp.complex64, xp.int16):
        npdt = np.dtype(dt.name)
        for s in (True, 1, 2.0, 1j):
            try:
                D.scalar_dtype_for(s, npdt, "t")
            except TypeError:
                continue
        for s in (1, 2.0):
            try:
                got = xp.result_type(xp.asarray([1], dtype=dt), s)
            except TypeError:
                continue
            assert got == dt and type(got) is type(dt), (dt, s, got)
