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


@pytest.mark.parametrize("dtype", [np.float64, np.complex128, np.float32])
def test_triangular_solve_under_jit_is_lapacks_trsm_for_every_flag(dtype):
    """Under jit triangular_solve is LAPACK's trsm (jaxlib's kernel, on one OpenBLAS thread, as the eager kernel
    and scipy solve): every flag (side, triangle, transpose, conjugate, unit diagonal) on a batch equals a solve
    with the explicit triangle; the lowered program names the kernel (XLA's expander, which inverts blocks of the
    triangle and was 2x slower on a 50x50 triangle with 2000 right sides, ran before); an empty operand keeps
    XLA's own op (LAPACK refuses a leading dimension of 0)."""
    from array_namespace._helpers import wrap
    from transforms import jit
    from transforms.core import bind
    from transforms.primitives import lapack as LP
    rng = np.random.default_rng(11)
    tol = 2e-4 if dtype == np.float32 else 1e-11
    for ls in (True, False):
        for lo in (True, False):
            for tr, cj in ((False, False), (True, False), (True, True), (False, True)):
                for ud in (False, True):
                    p = dict(left_side=ls, lower=lo, transpose_a=tr, conjugate_a=cj, unit_diagonal=ud)
                    a = rng.standard_normal((2, 4, 4)) + 4 * np.eye(4)
                    b = rng.standard_normal((2, 4, 3) if ls else (2, 3, 4))
                    if dtype == np.complex128:
                        a, b = a + 1j * rng.standard_normal(a.shape), b - 1j * rng.standard_normal(b.shape)
                    a, b = a.astype(dtype), b.astype(dtype)
                    t = np.tril(a) if lo else np.triu(a)
                    if ud:
                        t[..., np.arange(4), np.arange(4)] = 1
                    t = np.conj(t) if cj else t
                    t = np.swapaxes(t, -1, -2) if tr else t
                    want = np.linalg.solve(t, b) if ls else np.swapaxes(
                        np.linalg.solve(np.swapaxes(t, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)
                    f = jit(lambda x, y, p=p: wrap(bind(LP.triangular_solve_p, x._v, y._v, **p)))
                    got = np.asarray(f(xp.asarray(a), xp.asarray(b)))
                    np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=str(p))
    f = jit(lambda x, y: wrap(bind(LP.triangular_solve_p, x._v, y._v, left_side=True, lower=True,
                                   transpose_a=False, conjugate_a=False, unit_diagonal=False)))
    eye = xp.asarray(np.eye(3, dtype=dtype))
    assert "trsm_ffi" in f.lower(eye, xp.asarray(np.ones((3, 2), dtype))).as_text()
    assert f(eye, xp.asarray(np.ones((3, 0), dtype))).shape == (3, 0)
    assert "trsm_ffi" not in f.lower(eye, xp.asarray(np.ones((3, 0), dtype))).as_text()


@pytest.mark.parametrize("shape", [(1, 1), (2, 2), (5, 5), (66, 66), (7, 3), (3, 7), (4, 6, 6), (2, 3, 5, 4)])
def test_lu_permutation_under_jit_is_its_pivots_swaps_without_a_loop(shape):
    """jit(lu)'s permutation is LAPACK's row swaps i <-> piv[i], in order, applied to the identity (a Python loop,
    per matrix of a batch), and P A = L U; it is composed from the pivots in log2(k) gathers, not a while loop over
    the swaps (~12 XLA thunks each: ~300 us of a jitted 66x66 solve)."""
    from array_namespace._helpers import wrap
    from transforms import jit
    from transforms.core import bind
    from transforms.primitives import lapack as LP
    a = np.random.default_rng(sum(shape)).standard_normal(shape)
    f = jit(lambda x: [wrap(v) for v in bind(LP.lu_p, x._v)])
    lu_, piv, perm = (np.asarray(v) for v in f(xp.asarray(a)))
    m, n = shape[-2:]
    k = min(m, n)
    for i in np.ndindex(shape[:-2]):
        want = np.arange(m)
        for r, p in enumerate(piv[i]):
            want[r], want[p] = want[p], want[r]
        np.testing.assert_array_equal(perm[i], want)
        lower = np.tril(lu_[i][:, :k], -1) + np.eye(m, k)
        np.testing.assert_allclose(a[i][perm[i]], lower @ np.triu(lu_[i][:k]), rtol=1e-12, atol=1e-12)
    assert "stablehlo.while" not in f.lower(xp.asarray(a)).as_text()
