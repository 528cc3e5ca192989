"""array_namespace/_statistical.py: sum, prod, mean, var, std, all, any against NumPy eagerly, under jit
and under vmap: axes (None, int, tuple, negative), keepdims, dtype=, correction, integer/bool inputs,
empty arrays and NaN/inf; and the argument errors."""
import numpy as np
import pytest

import array_namespace as xp
from ns_check import agree

R = np.random.default_rng(0)
X = R.standard_normal((3, 4))
SP = np.array([[1.0, np.nan, 2.0], [np.inf, -1.0, 0.5]])
I = np.array([[1, -2, 3], [4, 5, -6]], np.int32)
B = np.array([[True, False, True], [True, True, True]])
ZC = np.array([[1j, 2j, complex(0, np.nan)], [0j, 1j, -0.0 + 0j], [0j, 0j, complex(np.nan, 0)]])


@pytest.mark.parametrize("fn, np_fn, args, rtol", [
    (xp.sum, np.sum, (X,), 1e-13),
    (lambda a: xp.sum(a, axis=(0, 1), keepdims=True), lambda a: np.sum(a, (0, 1), keepdims=True), (X,), 1e-13),
    (lambda a: xp.sum(a, axis=-1), lambda a: np.sum(a, -1), (SP,), 1e-13),
    (lambda a: xp.sum(a, axis=0), lambda a: np.sum(a, 0), (I,), 0),   # int32 -> the default int64, as NumPy
    (lambda a: xp.sum(a, dtype=xp.float32), lambda a: np.sum(a, dtype=np.float32), (I,), 1e-6),
    (lambda a: xp.prod(a, axis=1), lambda a: np.prod(a, 1), (I,), 0),
    (lambda a: xp.prod(a, axis=0), lambda a: np.prod(a, 0), (X.astype(np.float32),), 1e-6),
    (lambda a: xp.mean(a, axis=1), lambda a: np.mean(a, 1), (X,), 1e-13),
    (lambda a: xp.mean(a, axis=0, keepdims=True), lambda a: np.mean(a, 0, keepdims=True), (SP,), 1e-13),
    (lambda a: xp.var(a, axis=1, correction=1), lambda a: np.var(a, 1, ddof=1), (X,), 1e-13),
    (lambda a: xp.std(a, axis=0), lambda a: np.std(a, 0), (X.astype(np.float32),), 1e-5),
    (lambda a: xp.all(a, axis=1), lambda a: np.all(a, 1), (B,), 0),
    (lambda a: xp.any(a, axis=0, keepdims=True), lambda a: np.any(a, 0, keepdims=True), (~B,), 0),
    (xp.all, np.all, (SP,), 0),
    (xp.any, np.any, (np.zeros((2, 0)),), 0),
    # complex truth: either part non-zero (NaN counts), not the real part alone (issue 24)
    (lambda a: xp.all(a, axis=1), lambda a: np.all(a, 1), (ZC,), 0),
    (lambda a: xp.any(a, axis=1), lambda a: np.any(a, 1), (ZC,), 0),
    (xp.all, np.all, (np.array([1j, 2j]),), 0),
    (xp.any, np.any, (np.array([0j, 1j], np.complex64),), 0),
])
def test_against_numpy(fn, np_fn, args, rtol):
    agree(fn, np_fn, *args, rtol=rtol, atol=1e-14)


def test_empty_reductions():
    z = xp.zeros((0, 3))
    np.testing.assert_array_equal(np.asarray(xp.sum(z, axis=0)), np.zeros(3))
    np.testing.assert_array_equal(np.asarray(xp.prod(z, axis=0)), np.ones(3))
    np.testing.assert_array_equal(np.asarray(xp.mean(z, axis=0)), np.full(3, np.nan))   # NumPy's 0/0


def test_complex_mean_and_sum():
    z = X + 1j * X[::-1]
    agree(lambda a: xp.mean(a, axis=0), lambda a: np.mean(a, 0), z, rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("call, exc", [
    (lambda: xp.sum(xp.asarray(X), axis=2), IndexError),
    (lambda: xp.sum(xp.asarray(X), axis=(0, 0)), ValueError),
    (lambda: xp.mean(xp.asarray(I)), TypeError),
    (lambda: xp.sum(X), TypeError),
])
def test_errors(call, exc):
    with pytest.raises(exc):
        call()


def test_sum_with_dtype_repeated_alternating_equals_numpy():
    """sum keeps a validated plan per (operand, axis, dtype): repeated calls alternating dtype= (None, float32,
    float64, int64) and axes each give NumPy's dtype and values, and a refused dtype stays refused after a plan."""
    a = (np.arange(12).reshape(3, 4) - 5).astype(np.int32)
    x = xp.asarray(a)
    for _ in range(3):
        for dt, ndt in ((None, np.int64), (xp.float32, np.float32), (xp.float64, np.float64), (xp.int64, np.int64)):
            for axis in (None, 0, 1):
                got = np.asarray(xp.sum(x, axis=axis, dtype=dt))
                want = np.sum(a, axis=axis, dtype=ndt)
                assert got.dtype == want.dtype and got.shape == want.shape
                np.testing.assert_array_equal(got, want)
    z = xp.asarray([1 + 2j, 3 - 1j])
    assert np.asarray(xp.sum(z, dtype=xp.complex128)) == 4 + 1j
    for _ in range(2):
        with pytest.raises(TypeError, match="cannot accumulate complex"):
            xp.sum(z, dtype=xp.float64)
