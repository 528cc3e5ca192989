"""xla/lower_lapack.py: cholesky, eigh, svd, qr, lu, eig and triangular_solve, reached through xp.linalg
and run under jit, against NumPy. Decompositions that are unique only up to signs/phases are compared
through what is unique: reconstructions, orthogonality, sorted values, det and trace."""
import numpy as np
import pytest

import array_namespace as xp
from lower_harness import Case, check, lowered_by, prims_of
from transforms import jvp, make_jaxpr

R = np.random.default_rng(0)
A = R.standard_normal((4, 4))
SPD = A @ A.T + 4 * np.eye(4)
B = R.standard_normal((4, 2))
RECT = R.standard_normal((5, 3))
C = A + 1j * R.standard_normal((4, 4))
HPD = C @ C.conj().T + 4 * np.eye(4)


def _i(n, dt=np.float64):
    return np.eye(n, dtype=dt)


CASES = [
    Case("cholesky", xp.linalg.cholesky, np.linalg.cholesky, [SPD], 1e-12, 1e-13),
    Case("cholesky-f32", xp.linalg.cholesky, np.linalg.cholesky, [SPD.astype(np.float32)], 2e-5, 2e-5),
    Case("cholesky-c128", xp.linalg.cholesky, np.linalg.cholesky, [HPD], 1e-12, 1e-13),
    Case("eigh", lambda a: (xp.linalg.eigh(a)[0], xp.linalg.eigh(a)[1] @ xp.matrix_transpose(xp.linalg.eigh(a)[1])),
         lambda a: (np.linalg.eigvalsh(a), _i(4)), [SPD], 1e-12, 1e-13),
    Case("eigh-c128", xp.linalg.eigvalsh, np.linalg.eigvalsh, [HPD], 1e-12, 1e-13),
    Case("svd", lambda a: (xp.linalg.svdvals(a), _svd_rebuild(a)), lambda a: (np.linalg.svd(a)[1], a), [RECT],
         1e-12, 1e-13),
    Case("qr", lambda a: _qr(a), lambda a: (a, _i(3), np.tril(np.ones((3, 3)), -1) * 0), [RECT], 1e-12, 1e-13),
    Case("lu-det", xp.linalg.det, np.linalg.det, [A], 1e-12),
    Case("lu-solve", xp.linalg.solve, np.linalg.solve, [A, B], 1e-11, 1e-13),
    Case("lu-inv-f32", xp.linalg.inv, np.linalg.inv, [SPD.astype(np.float32)], 2e-5, 1e-6),
    Case("solve-triangular-matrix", lambda a, b: xp.linalg.solve(xp.linalg.cholesky(a), b),
         lambda a, b: np.linalg.solve(np.linalg.cholesky(a), b), [SPD, B], 1e-12, 1e-13),
    # triangular_solve itself (solve and inv bind solve_p): lu's jvp, d det(A)[A] = det(A) tr(A^-1 A) = 4 det(A)
    Case("triangular-det-jvp", lambda a: jvp(xp.linalg.det, (a,), (a,))[1], lambda a: 4 * np.linalg.det(a), [A],
         1e-11, 1e-12),
    Case("eig", lambda a: _eig_invariants(a), lambda a: (np.complex128(np.linalg.det(a)), np.complex128(np.trace(a))),
         [A], 1e-11, 1e-12),
]


def _svd_rebuild(a):
    u, s, vt = xp.linalg.svd(a, full_matrices=False)
    return (u * s) @ vt


def _qr(a):
    q, r = xp.linalg.qr(a)
    return q @ r, xp.matrix_transpose(q) @ q, xp.tril(r, k=-1)


def _eig_invariants(a):
    w = xp.linalg.eigvals(a)
    return xp.prod(w), xp.sum(w)


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_jit_matches_numpy(case):
    check(case)


def test_singular_and_not_positive_definite_inputs():
    """NumPy raises; XLA's kernels give inf/NaN instead of an error: the namespace keeps that (no host sync)."""
    got = np.asarray(xp.linalg.cholesky(xp.asarray(-np.eye(2))))
    assert np.isnan(got).all()
    d = float(xp.linalg.det(xp.asarray(np.ones((3, 3)))))
    assert d == 0.0


def test_every_lowered_primitive_is_reached():
    reached = set().union(*(prims_of(make_jaxpr(c.fn)(*[xp.asarray(a) for a in c.args])) for c in CASES))
    assert lowered_by("xla.lower_lapack") - reached == set()


@pytest.mark.parametrize("dtype", [np.float64, np.complex128, np.float32, np.complex64])
def test_eig_of_a_matrix_outside_lapacks_safe_range_is_scaled_back(dtype):
    """jaxlib's geev scales a matrix whose largest entry lies outside [sqrt(tiny)/eps, its inverse] into that range
    and returned that matrix's eigenvalues (jit(eigvals) of A * 1e150 gave 1.9e138): the lowering scales by a power
    of two first and divides it out of the eigenvalues (issue 24). NumPy's geev is the oracle; a batch mixes
    scales, so each matrix gets its own factor."""
    from transforms import jit, vmap
    big = 150 if np.finfo(dtype).bits == 64 else 18
    scales = [1.0, 10.0 ** big, 10.0 ** -big, 10.0 ** (2 * big), 10.0 ** -(2 * big)]
    m = np.stack([A * s for s in scales]).astype(dtype)
    if dtype in (np.complex64, np.complex128):
        m = m + 1j * np.stack([A.T * s for s in scales]).astype(dtype)
    rtol = 1e-10 if np.finfo(dtype).bits == 64 else 2e-4
    want = np.linalg.eigvals(m)
    x = xp.asarray(m)
    for way, got in (("jit", jit(xp.linalg.eigvals)(x)), ("vmap", jit(vmap(xp.linalg.eigvals))(x)),
                     ("eager", xp.linalg.eigvals(x))):
        for i, s in enumerate(scales):
            np.testing.assert_allclose(np.sort_complex(np.asarray(got[i])), np.sort_complex(want[i]),
                                       rtol=rtol, atol=0, err_msg=f"{way} scale {s}")
    w, v = jit(xp.linalg.eig)(xp.asarray(m))
    w, v = np.asarray(w), np.asarray(v)   # eigenpairs: m v = v diag(w)
    for i, s in enumerate(scales):
        np.testing.assert_allclose(m[i] @ v[i] / s, v[i] * w[i][None, :] / s, atol=50 * rtol, err_msg=f"eig {s}")


def test_batched_kernels_carry_their_batch_partitioning_rule():
    """A LAPACK call over a batch says so to XLA's SPMD partitioner (num_batch_dims, and a Shardy rule sharing
    the batch factors among every operand and result); an unbatched one carries neither. (Its effect, the
    batch split over devices, is checked in transforms/sharded_sklearn_cases.py.)"""
    from transforms import jit
    batched = jit(lambda a: xp.linalg.qr(a)[1]).lower(xp.asarray(np.ones((3, 5, 2)))).as_text()
    assert 'num_batch_dims = "1"' in batched
    assert "#sdy.op_sharding_rule<([i, j, k])->([i, l, m], [i, n]) {i=3, j=5, k=2, l=5, m=2, n=2}, custom>" in batched
    assert "#sdy.op_sharding_rule<([i, j, k], [i, l])->([i, m, n])" in batched   # orgqr: matrix and tau
    single = jit(lambda a: xp.linalg.qr(a)[1]).lower(xp.asarray(np.ones((5, 2)))).as_text()
    assert "num_batch_dims" not in single and "sharding_rule" not in single
