"""linalg.eig / eigvals of real matrices: non-real eigenvalues (and their eigenvectors) come in
*exactly* conjugate pairs, as NumPy's (real LAPACK geev) do, so polynomials built from them
(np.poly, scipy.signal.zpk2tf) have real coefficients. Values are checked against NumPy.
"""
import numpy as np
import pytest

import array_namespace as xp
from transforms import jit, vmap

LA = xp.linalg
SIZES = (2, 3, 5, 8, 13)


def _mats(n, dtype, count=4, seed=0):
    rng = np.random.default_rng(seed + 97 * n)
    return rng.standard_normal((count, n, n)).astype(dtype)


def _assert_exact_pairs(w, v=None):
    """Every non-real eigenvalue's conjugate is also an eigenvalue, bit for bit (and its
    eigenvector is the conjugate eigenvector)."""
    w = np.asarray(w)
    upper = np.flatnonzero(w.imag > 0)
    lower = np.flatnonzero(w.imag < 0)
    assert len(upper) == len(lower)
    for j in upper:
        match = np.flatnonzero(w == np.conj(w[j]))
        assert match.size, f"no exact conjugate for {w[j]!r} in {w!r}"
        if v is not None:
            v = np.asarray(v)
            assert any(np.array_equal(v[:, k], np.conj(v[:, j])) for k in match)


def _close_to_numpy(w, a, dtype):
    tol = 2e-3 if dtype == np.float32 else 1e-9
    got = np.sort_complex(np.asarray(w).astype(np.complex128))
    want = np.sort_complex(np.linalg.eigvals(a.astype(np.float64)))
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(want).max())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", SIZES)
def test_eigvals_of_real_matrices_pair_exactly(n, dtype):
    cdt = xp.complex64 if dtype == np.float32 else xp.complex128
    mats = _mats(n, dtype)
    saw_complex = False
    for a in mats:
        w = LA.eigvals(xp.asarray(a))
        assert w.dtype == cdt and w.shape == (n,)
        _assert_exact_pairs(w)
        _close_to_numpy(w, a, dtype)
        saw_complex |= bool(np.any(np.asarray(w).imag != 0))
    assert saw_complex   # the property was exercised


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", (3, 6))
def test_eig_of_real_matrices_pairs_values_and_vectors(n, dtype):
    tol = 1e-4 if dtype == np.float32 else 1e-12
    for a in _mats(n, dtype, seed=5):
        w, v = LA.eig(xp.asarray(a))
        _assert_exact_pairs(w, v)
        w, v = np.asarray(w), np.asarray(v)
        np.testing.assert_allclose(a @ v, v * w, atol=tol * 10 * n)
        np.testing.assert_allclose(np.linalg.norm(v, axis=0), 1, rtol=tol * 10)


def test_eigvals_batched_jit_vmap_pair_exactly():
    mats = _mats(7, np.float64, count=5, seed=11)
    x = xp.asarray(mats)
    for w in (LA.eigvals(x), jit(LA.eigvals)(x), vmap(LA.eigvals)(x)):
        w = np.asarray(w)
        assert w.shape == (5, 7)
        for wi, a in zip(w, mats):
            _assert_exact_pairs(wi)
            _close_to_numpy(wi, a, np.float64)
    np.testing.assert_array_equal(np.asarray(jit(LA.eigvals)(x)), np.asarray(LA.eigvals(x)))


def test_polynomials_from_eigenvalues_are_real():
    for a in _mats(6, np.float64, count=6, seed=3):
        w = np.asarray(LA.eigvals(xp.asarray(a)))
        p = np.poly(w)   # NumPy returns a real polynomial only for exactly conjugate roots
        assert p.dtype == np.float64
        np.testing.assert_allclose(p, np.poly(a), rtol=1e-8, atol=1e-8)


def test_scipy_zpk2tf_of_eigenvalues_has_real_coefficients():
    from scipy import signal
    rng = np.random.default_rng(8)
    for _ in range(4):
        a_p, a_z = rng.standard_normal((6, 6)), rng.standard_normal((5, 5))
        p, z = LA.eigvals(xp.asarray(a_p)), LA.eigvals(xp.asarray(a_z))
        b, a = signal.zpk2tf(z, p, 2.0)
        assert b.dtype == xp.float64 and a.dtype == xp.float64
        b_ref, a_ref = signal.zpk2tf(np.linalg.eigvals(a_z), np.linalg.eigvals(a_p), 2.0)
        np.testing.assert_allclose(np.asarray(b), b_ref, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(np.asarray(a), a_ref, rtol=1e-9, atol=1e-9)


def test_eig_of_complex_matrices_still_matches_numpy():
    rng = np.random.default_rng(4)
    a = rng.standard_normal((5, 5)) + 1j * rng.standard_normal((5, 5))
    w, v = LA.eig(xp.asarray(a))
    w, v = np.asarray(w), np.asarray(v)
    assert w.dtype == np.complex128
    np.testing.assert_allclose(np.sort_complex(w), np.sort_complex(np.linalg.eigvals(a)), rtol=1e-10)
    np.testing.assert_allclose(a @ v, v * w, atol=1e-12)
