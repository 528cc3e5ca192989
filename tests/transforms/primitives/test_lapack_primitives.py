"""The LAPACK family of src/transforms/primitives/lapack.py bound directly against NumPy/scipy:
triangular_solve under every flag (side, lower, transpose, conjugate, unit diagonal), cholesky
(reading only the lower triangle), eigh (either triangle), svd, qr, lu (pivots and permutation as
scipy's), eig. Their rules: jvps against central differences of the NumPy/scipy decomposition,
triangular_solve's and solve's transposes in b by the dot-product identity, the batch rules against a Python loop
(the batch axis anywhere, operands batched or not), and the non-finite guard of the iterative
kernels (svd/eigh/eig): a matrix holding inf/NaN gives NaN results promptly, without disturbing the
other matrices of its batch, eagerly and under vmap."""
import numpy as np
import pytest
import scipy.linalg as sl

import array_namespace as xp
from prim_checks import check_jvp, check_transpose, check_vmap, raw
from transforms import jit, vmap
from transforms.core import bind
from transforms.primitives import lapack as LA

RNG = np.random.default_rng(0)
A = RNG.standard_normal((4, 4))
SPD = A @ A.T + 4 * np.eye(4)
SYM = A + A.T
TRI = np.tril(RNG.standard_normal((4, 4))) + 3 * np.eye(4)
B = RNG.standard_normal((4, 3))
SYM_T = RNG.standard_normal((4, 4))
SYM_T = SYM_T + SYM_T.T          # a symmetric tangent
TALL = RNG.standard_normal((5, 3))
WIDE = RNG.standard_normal((3, 5))


def _op(a, transpose_a, conjugate_a):
    a = np.conj(a) if conjugate_a else a
    return a.T if transpose_a else a


def np_tsolve(a, b, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    t = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        t = t - np.diag(np.diag(t)) + np.eye(len(t))
    op = _op(t, transpose_a, conjugate_a)
    return np.linalg.solve(op, b) if left_side else np.linalg.solve(op.T, b.T).T


FLAGS = [dict(left_side=l, lower=lo, transpose_a=t, conjugate_a=c, unit_diagonal=u)
         for l in (True, False) for lo in (True, False) for t in (False, True) for c in (False, True)
         for u in (False, True)]


def _tsolve(flags):
    return lambda a, b: bind(LA.triangular_solve_p, a._v, b._v, **flags)


@pytest.mark.parametrize("flags", FLAGS, ids=lambda f: "".join(str(int(v)) for v in f.values()))
def test_triangular_solve_flags_complex(flags):
    a = TRI + 1j * np.tril(RNG.standard_normal((4, 4)))
    a = a + np.triu(RNG.standard_normal((4, 4)), 1) * 7      # garbage in the other triangle is never read
    a = a if flags["lower"] else a.T
    b = (B + 1j * B[::-1]) if flags["left_side"] else (B.T + 1j)
    got = np.asarray(_tsolve(flags)(xp.asarray(a), xp.asarray(b)))
    np.testing.assert_allclose(got, np_tsolve(a, b, **flags), rtol=1e-11, atol=1e-12)


@pytest.mark.parametrize("flags", FLAGS[::3], ids=lambda f: "".join(str(int(v)) for v in f.values()))
def test_triangular_solve_jvp_transpose_batching(flags):
    a = TRI if flags["lower"] else TRI.T
    b = B if flags["left_side"] else B.T
    f = _tsolve(flags)
    check_jvp(f, lambda x, y: np_tsolve(x, y, **flags), [a, b], rtol=1e-6, atol=1e-8)
    check_transpose(lambda y: f(xp.asarray(a), y), b)
    a_s, b_s = np.stack([a + i * np.eye(4) for i in range(3)], 2), np.stack([b * (i + 1) for i in range(3)])
    tol = dict(rtol=1e-12, atol=1e-12)
    check_vmap(f, [a_s, b_s], [2, 0], **tol)
    check_vmap(f, [a, b_s], [None, 0], **tol)
    check_vmap(f, [a_s, b], [2, None], **tol)
    b_last = np.stack([b * (i + 1) - i for i in range(3)], 2)
    check_vmap(f, [a, b_last], [None, 2], **tol)
    # one triangle for the batch: folded into b's columns (rows on the right side), the triangle never broadcast
    from transforms import make_jaxpr
    jx = make_jaxpr(vmap(lambda v: f(xp.asarray(a), v), in_axes=2))(xp.asarray(b_last)).jaxpr
    (eqn,) = [e for e in jx.eqns if e.prim is LA.triangular_solve_p]
    assert eqn.invars[0].aval.shape == (4, 4) and eqn.invars[1].aval.shape == ((4, 9) if flags["left_side"] else (9, 4))


def test_cholesky_reads_the_lower_triangle_jvp_batching():
    garbage = SPD + np.triu(np.full((4, 4), 100.0), 1)
    got = np.asarray(bind(LA.cholesky_p, raw(garbage)))
    np.testing.assert_allclose(got, np.linalg.cholesky(SPD), rtol=1e-12, atol=1e-14)
    # the rule takes a symmetric tangent (the matrix stays symmetric positive definite)
    check_jvp(lambda a: bind(LA.cholesky_p, a._v), np.linalg.cholesky, [SPD], rtol=1e-6, atol=1e-8,
              tangents=[SYM_T])
    stack = np.stack([SPD + i * np.eye(4) for i in range(3)], 1)
    check_vmap(lambda a: bind(LA.cholesky_p, a._v), [stack], [1], rtol=1e-12, atol=1e-13)
    c = SPD + 1j * (np.tril(A, -1) - np.tril(A, -1).T)                                  # Hermitian PD
    np.testing.assert_allclose(np.asarray(bind(LA.cholesky_p, raw(c))), np.linalg.cholesky(c), rtol=1e-12,
                               atol=1e-13)


@pytest.mark.parametrize("lower", [True, False])
def test_eigh_either_triangle_values_and_jvp(lower):
    tri = np.tril(SYM) if lower else np.triu(SYM)
    w, v = bind(LA.eigh_p, raw(tri + (np.triu(A, 1) * 50 if lower else np.tril(A, -1) * 50)), lower=lower)
    w, v = np.asarray(w), np.asarray(v)
    np.testing.assert_allclose(w, np.linalg.eigvalsh(SYM), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(v @ np.diag(w) @ v.T, SYM, atol=1e-12)
    np.testing.assert_allclose(v.T @ v, np.eye(4), atol=1e-13)
    # the rule takes a symmetric tangent (the matrix stays symmetric); eigenvectors up to NumPy's signs
    check_jvp(lambda a: bind(LA.eigh_p, a._v, lower=lower)[0], np.linalg.eigvalsh, [SYM], rtol=1e-6, atol=1e-8,
              tangents=[SYM_T])
    signs = np.sign(np.sum(v * np.linalg.eigh(SYM)[1], axis=0))
    check_jvp(lambda a: bind(LA.eigh_p, a._v, lower=lower)[1], lambda m: np.linalg.eigh(m)[1] * signs, [SYM],
              rtol=1e-5, atol=1e-7, tangents=[SYM_T])


def test_svd_values_jvp_and_shapes():
    for m in (A, TALL, WIDE):
        s, u, vh = (np.asarray(o) for o in bind(LA.svd_p, raw(m), full_matrices=False, compute_uv=True))
        np.testing.assert_allclose(s, np.linalg.svd(m, compute_uv=False), rtol=1e-12)
        np.testing.assert_allclose(u @ np.diag(s) @ vh, m, atol=1e-12)
        (s_only,) = bind(LA.svd_p, raw(m), full_matrices=False, compute_uv=False)
        np.testing.assert_allclose(np.asarray(s_only), s, rtol=1e-13)
        check_jvp(lambda a: bind(LA.svd_p, a._v, full_matrices=False, compute_uv=False)[0],
                  lambda a: np.linalg.svd(a, compute_uv=False), [m], rtol=1e-6, atol=1e-8)
    _, u, vh = bind(LA.svd_p, raw(TALL), full_matrices=True, compute_uv=True)
    assert np.asarray(u).shape == (5, 5) and np.asarray(vh).shape == (3, 3)


@pytest.mark.parametrize("m", [A, TALL, WIDE], ids=["square", "tall", "wide"])
def test_qr_matches_numpy_and_jvp(m):
    q, r = (np.asarray(o) for o in bind(LA.qr_p, raw(m), full_matrices=False))
    nq, nr = np.linalg.qr(m)
    np.testing.assert_allclose(np.abs(np.diag(r)), np.abs(np.diag(nr)), rtol=1e-12)
    np.testing.assert_allclose(q @ r, m, atol=1e-12)
    np.testing.assert_allclose(r, np.triu(r), atol=0)
    signs = np.sign(np.diag(r)) * np.sign(np.diag(nr))          # same factorisation up to column signs
    np.testing.assert_allclose(q * signs, nq, atol=1e-12)
    fix = lambda a: np.linalg.qr(a)[1] * signs[:, None]       # noqa: E731  (the signs stay put near m)
    check_jvp(lambda a: bind(LA.qr_p, a._v, full_matrices=False)[1], fix, [m], rtol=1e-6, atol=1e-8)
    fixq = lambda a: np.linalg.qr(a)[0] * signs               # noqa: E731
    check_jvp(lambda a: bind(LA.qr_p, a._v, full_matrices=False)[0], fixq, [m], rtol=1e-6, atol=1e-8)


def test_lu_matches_scipy_and_jvp():
    for m in (A, TALL, WIDE):
        lu_, piv, perm = (np.asarray(o) for o in bind(LA.lu_p, raw(m)))
        assert piv.dtype == perm.dtype == np.int32
        slu, spiv = sl.lu_factor(m) if m.shape[0] == m.shape[1] else (None, None)
        if slu is not None:
            np.testing.assert_allclose(lu_, slu, rtol=1e-12, atol=1e-14)
            np.testing.assert_array_equal(piv, spiv)
        k = min(m.shape)
        low = np.tril(lu_, -1)[:, :k] + np.eye(m.shape[0], k)
        np.testing.assert_allclose(m[perm], low @ np.triu(lu_)[:k], atol=1e-12)
    check_jvp(lambda a: bind(LA.lu_p, a._v)[0], lambda a: sl.lu_factor(a)[0], [A], rtol=1e-6, atol=1e-8)


def test_eig_values_and_vectors():
    w, v = (np.asarray(o) for o in bind(LA.eig_p, raw(A)))
    assert w.dtype == v.dtype == np.complex128
    np.testing.assert_allclose(np.sort_complex(w), np.sort_complex(np.linalg.eigvals(A)), rtol=1e-12)
    np.testing.assert_allclose(A @ v, v * w, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(v, axis=0), 1.0, rtol=1e-13)


def test_solve_jvp_transpose_and_batching():
    """solve_p (A X = B, NumPy's solve as the oracle): its jvp in A and B against central differences, its
    transpose in B, and its batch rule against a Python loop with the batch axis anywhere and either operand
    unbatched. With A unbatched the batch becomes more columns of B: one factorisation, A never broadcast."""
    from transforms import make_jaxpr
    f = lambda a, b: bind(LA.solve_p, a._v, b._v)  # noqa: E731
    check_jvp(f, np.linalg.solve, [A + 4 * np.eye(4), B], rtol=1e-6, atol=1e-8)
    check_transpose(lambda y: f(xp.asarray(A + 4 * np.eye(4)), y), B)
    a_s = np.stack([A + (i + 4) * np.eye(4) for i in range(3)], 2)   # (4, 4, 3): the batch axis last
    tol = dict(rtol=1e-12, atol=1e-12)
    check_vmap(f, [a_s, np.stack([B * (i + 1) for i in range(3)])], [2, 0], **tol)
    check_vmap(f, [a_s, B], [2, None], **tol)
    for axis in range(3):
        b_s = np.stack([B * (i + 1) - i for i in range(5)], axis)
        check_vmap(f, [A + 4 * np.eye(4), b_s], [None, axis], **tol)
        jx = make_jaxpr(vmap(lambda b: f(xp.asarray(A + 4 * np.eye(4)), b), in_axes=axis))(xp.asarray(b_s)).jaxpr
        (eqn,) = [e for e in jx.eqns if e.prim is LA.solve_p]
        assert eqn.invars[0].aval.shape == (4, 4) and eqn.invars[1].aval.shape == (4, 15), eqn
    a2 = np.stack([A + 4 * np.eye(4), A.T + 5 * np.eye(4)])   # a stack of two, itself not mapped
    for axis in range(4):
        check_vmap(f, [a2, np.stack([np.stack([B, -2 * B]) * (i + 1) for i in range(3)], axis)], [None, axis], **tol)



# ------------------------------------------------------------------ batching and non-finite inputs
DECOMPOSE = {   # name -> (primitive, params, the output compared across the batch)
    "cholesky": (LA.cholesky_p, {}, None),
    "eigh": (LA.eigh_p, {"lower": True}, 0),
    "svd": (LA.svd_p, {"full_matrices": False, "compute_uv": True}, 0),
    "qr": (LA.qr_p, {"full_matrices": False}, 1),
    "lu": (LA.lu_p, {}, 0),
    "eig": (LA.eig_p, {}, 0),
}


@pytest.mark.parametrize("name", list(DECOMPOSE))
def test_batch_rules_vs_loop(name):
    prim, params, k = DECOMPOSE[name]
    stack = np.stack([SPD + i * np.eye(4) + 0.1 * i * A for i in range(3)], axis=1)
    stack = stack + np.transpose(stack, (2, 1, 0)) if name in ("cholesky", "eigh") else stack
    f = (lambda a: bind(prim, a._v, **params)) if k is None else (lambda a: bind(prim, a._v, **params)[k])
    check_vmap(f, [stack], [1], rtol=1e-11, atol=1e-11)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("name", ["eigh", "svd", "eig"])
def test_non_finite_matrices_give_nan_without_touching_the_batch(name, dtype):
    """The primitives' own contract (LA.finite_guard): their host kernels skip such a matrix, their lowerings zero
    it and put NaN in its outputs. Complex: a non-finite imaginary part alone counts."""
    guarded = {"eigh": LA.eigh, "svd": LA.svd, "eig": LA.eig}[name]
    good = (SYM + np.eye(4) + (1j * (A - A.T) * 0.1 if dtype is np.complex128 else 0)).astype(dtype)
    stack = np.stack([good, good.copy(), good * 2, good.copy()])
    stack[1, 2, 3] = stack[1, 3, 2] = np.nan
    stack[3, 0, 0] = complex(0, np.inf) if dtype is np.complex128 else np.inf
    outs_batch = [np.asarray(o) for o in guarded(raw(stack))]
    outs_vmap = [np.asarray(o) for o in vmap(lambda a: guarded(a._v))(xp.asarray(stack))]
    outs_jit = [np.asarray(o) for o in jit(lambda a: guarded(a._v))(xp.asarray(stack))]
    for outs in (outs_batch, outs_vmap, outs_jit):
        for o in outs:
            assert np.all(np.isnan(o[1])) and np.all(np.isnan(o[3]))
            assert np.all(np.isfinite(o[[0, 2]]))
        w = outs[0]
        want = {"eigh": np.linalg.eigvalsh, "svd": lambda m: np.linalg.svd(m, compute_uv=False),
                "eig": lambda m: np.sort_complex(np.linalg.eigvals(m))}[name]
        got = np.sort_complex(w[[0, 2]]) if name == "eig" else w[[0, 2]]
        np.testing.assert_allclose(got, [want(good), want(2 * good)], rtol=1e-11, atol=1e-12)


@pytest.mark.parametrize("call, exc, text", [
    (lambda: bind(LA.cholesky_p, raw(np.eye(3, dtype=np.int32))), TypeError,
     "cholesky requires a float32, float64, complex64 or complex128 operand, got int32"),
    (lambda: bind(LA.cholesky_p, raw(np.ones(3))), ValueError, "at least 2 dimensions, got shape (3,)"),
    (lambda: bind(LA.eigh_p, raw(np.ones((2, 3))), lower=True), ValueError, "square matrices (..., M, M)"),
    (lambda: bind(LA.triangular_solve_p, raw(TRI), raw(np.ones((3, 2))), **FLAGS[0]), ValueError,
     "does not fit b (3, 2)"),
    (lambda: bind(LA.triangular_solve_p, raw(TRI), raw(B.astype(np.float32)), **FLAGS[0]), TypeError,
     "must share a dtype"),
])
def test_errors(call, exc, text):
    with pytest.raises(exc) as e:
        call()
    assert text in str(e.value)
