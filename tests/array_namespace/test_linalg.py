"""xp.linalg against NumPy (values, dtypes, shapes, batches), plus jit-vs-eager, vmap-vs-loop
and gradients (reverse and forward mode) against central finite differences.

Matrices are tiny and shapes are shared between tests, so the eager single-op executables
compile once per process.
"""
import math

import numpy as np
import pytest

import array_namespace as xp
from transforms import grad, hessian, jit, jvp, vmap
from finite_diff import central_diff as _fd

LA = xp.linalg
RNG = np.random.default_rng(1234)
GEN = RNG.standard_normal((2, 3, 3))                       # general (invertible) batch
_B = RNG.standard_normal((2, 3, 3))
SPD = _B @ np.swapaxes(_B, -1, -2) + 3 * np.eye(3)          # symmetric positive definite batch
TALL = RNG.standard_normal((2, 4, 3))
WIDE = RNG.standard_normal((2, 3, 4))
CGEN = GEN + 1j * RNG.standard_normal((2, 3, 3))
CHPD = CGEN @ np.conj(np.swapaxes(CGEN, -1, -2)) + 3 * np.eye(3)
RHS = RNG.standard_normal((2, 3, 2))
VEC = RNG.standard_normal(3)


def tol_for(dtype):
    return 2e-4 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-9


def close(got, want, dtype=np.float64, tol=None):
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    t = tol_for(dtype) if tol is None else tol
    np.testing.assert_allclose(got, want, rtol=t, atol=t)


def mH(a):
    return np.conj(np.swapaxes(a, -1, -2))


# ------------------------------------------------------------------ eager vs NumPy

REAL_DTYPES = ["float32", "float64"]


@pytest.mark.parametrize("dtype", REAL_DTYPES + ["complex128"])
def test_cholesky(dtype):
    a = (SPD if dtype != "complex128" else CHPD).astype(dtype)
    lo = LA.cholesky(xp.asarray(a))
    assert lo.dtype == np.dtype(dtype) and lo.shape == a.shape
    close(lo, np.linalg.cholesky(a), dtype)
    up = LA.cholesky(xp.asarray(a), upper=True)
    close(up, mH(np.linalg.cholesky(a)), dtype)


def test_cholesky_not_positive_definite_gives_nan():
    out = np.asarray(LA.cholesky(xp.asarray(-np.eye(3))))
    assert np.isnan(out).all()


def test_solve_and_inv_of_batches_as_numpy_and_empty_shapes():
    a = GEN + 3 * np.eye(3)
    close(LA.solve(xp.asarray(a), xp.asarray(RHS)), np.linalg.solve(a, RHS))
    close(LA.inv(xp.asarray(a)), np.linalg.inv(a))
    assert LA.solve(xp.zeros((2, 0, 0)), xp.zeros((2, 0, 3))).shape == (2, 0, 3)
    assert LA.solve(xp.asarray(a), xp.zeros((2, 3, 0))).shape == (2, 3, 0)
    assert LA.cholesky(xp.zeros((2, 0, 0))).shape == (2, 0, 0)


@pytest.mark.parametrize("dtype", REAL_DTYPES + ["complex128"])
def test_det_slogdet_inv(dtype):
    a = (GEN if dtype != "complex128" else CGEN).astype(dtype)
    x = xp.asarray(a)
    d = LA.det(x)
    assert d.dtype == np.dtype(dtype) and d.shape == (2,)
    close(d, np.linalg.det(a), dtype)
    sign, logabs = LA.slogdet(x)
    s2, l2 = np.linalg.slogdet(a)
    assert sign.dtype == np.dtype(dtype) and logabs.dtype == np.dtype(dtype).type(0).real.dtype
    close(sign, s2, dtype)
    close(logabs, l2, dtype)
    close(LA.inv(x), np.linalg.inv(a), dtype, tol=1e-3 if dtype == "float32" else None)


def test_singular_det_and_slogdet():
    a = np.array([[1.0, 2.0], [2.0, 4.0]])
    assert float(LA.det(xp.asarray(a))) == 0.0
    sign, logabs = LA.slogdet(xp.asarray(a))
    assert float(sign) == 0.0 and float(logabs) == -math.inf


@pytest.mark.parametrize("dtype", ["complex128", "complex64"])
def test_complex_det_past_the_range_is_numpys_infinity_in_the_determinant_s_direction(dtype):
    """The product of the LU diagonal overflowed to NaN (complex multiplication's inf - inf); NumPy's det (its sign
    times exp(log|det|)) is an infinity in the determinant's direction: so is ours, eagerly, under jit and vmap.
    Non-finite entries stay NaN, zero stays zero, ordinary values are unchanged."""
    big = 1e200 if dtype == "complex128" else 1e25
    mats = np.stack([np.diag([big * (1 + 1j), big, 1e10j]),                      # (-inf+infj)
                     np.diag([big * (1 + 1j), big, 1e10]),                       # (inf+infj)
                     np.array([[0, big * (1 + 1j), 0], [big, 0, 0], [0, 0, 1e10j]]),   # one swap: (inf-infj)
                     np.diag([big * 1j, big, 1e10]),      # (nan+infj): 0 * inf, NumPy's complex128 (complex64: 0+infj)
                     np.diag([np.nan, 1, 1]), np.diag([0, big, big]),
                     CGEN[0]]).astype(dtype)
    with np.errstate(all="ignore"):
        want = np.linalg.det(mats)
    want[3] = complex(np.nan, np.inf)
    for way, got in (("eager", LA.det(xp.asarray(mats))), ("jit", jit(LA.det)(xp.asarray(mats))),
                     ("vmap", vmap(LA.det)(xp.asarray(mats)))):
        got = np.asarray(got)
        assert got.dtype == np.dtype(dtype), way
        np.testing.assert_array_equal(got[:6], want[:6], err_msg=way)
        close(got[6], want[6], dtype)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_real_det_whose_partial_products_leave_the_range_is_numpys(dtype):
    """det(diag(1e300, 1e300, 1e-300)) was inf (the LU diagonal's running product overflowed), and
    det(diag(1e-300, 1e-300, 1e300)) 0: NumPy's (sign * exp(log|det|)) 1e300 and 1e-300, eagerly, under jit and vmap;
    a determinant truly past the range is NumPy's signed infinity."""
    e = 300 if dtype == "float64" else 30
    mats = np.stack([np.diag([10.0 ** e, 10.0 ** e, 10.0 ** -e]), np.diag([10.0 ** -e, 10.0 ** -e, 10.0 ** e]),
                     np.diag([10.0 ** e, -(10.0 ** e), 10.0 ** -e]), np.diag([10.0 ** e, 10.0 ** e, -1.0])]).astype(dtype)
    with np.errstate(all="ignore"):
        want = np.linalg.det(mats)
    for way, got in (("eager", LA.det(xp.asarray(mats))), ("jit", jit(LA.det)(xp.asarray(mats))),
                     ("vmap", vmap(LA.det)(xp.asarray(mats)))):
        got = np.asarray(got)
        np.testing.assert_allclose(got[:3], want[:3], rtol=1e-12 if dtype == "float64" else 1e-5, err_msg=way)
        assert got[3] == want[3] == -np.inf, way


@pytest.mark.parametrize("dtype", REAL_DTYPES)
def test_solve(dtype):
    a, b = GEN.astype(dtype), RHS.astype(dtype)
    tol = 1e-3 if dtype == "float32" else None
    close(LA.solve(xp.asarray(a), xp.asarray(b)), np.linalg.solve(a, b), dtype, tol=tol)


def test_solve_vector_and_broadcasting():
    a = xp.asarray(GEN)
    got = LA.solve(a, xp.asarray(VEC))                      # (M,) is one vector for every matrix
    assert got.shape == (2, 3)
    close(got, np.linalg.solve(GEN, VEC[:, None])[..., 0])
    got = LA.solve(xp.asarray(GEN[0]), xp.asarray(RHS))     # unbatched matrix, batched rhs
    close(got, np.linalg.solve(GEN[0], RHS))


def test_solve_permutes_rows_by_gather():
    """solve is one primitive (eagerly LAPACK's gesv); its lowering permutes the pivoting rows by a gather of b's
    rows, not a product with the permutation matrix (O(m^2 k) multiply-adds: 1.5x the LU's own for a square right
    side): the same values as NumPy's eagerly, under jit and vmap, and derivatives equal to finite differences."""
    from transforms import make_jaxpr
    from transforms.core import ShapedArray
    from transforms.jaxpr_transforms import stage
    from transforms.primitives import lapack as LP
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((3, 6, 6)), rng.standard_normal((3, 6, 4))
    assert [e.prim.name for e in make_jaxpr(LA.solve)(xp.asarray(a), xp.asarray(b)).jaxpr.eqns] == ["solve"]
    lowered = stage(lambda x, y: [LP.lu_solve(x, y)], [ShapedArray(a.shape, a.dtype), ShapedArray(b.shape, b.dtype)])
    prims = [e.prim.name for e in lowered.jaxpr.eqns]
    assert "gather" in prims and "dot_general" not in prims, prims
    want = np.linalg.solve(a, b)
    for got in (LA.solve(xp.asarray(a), xp.asarray(b)), jit(LA.solve)(xp.asarray(a), xp.asarray(b)),
                vmap(LA.solve)(xp.asarray(a), xp.asarray(b)), LA.solve(xp.asarray(a[0]), xp.asarray(b[0]))[None]):
        np.testing.assert_allclose(np.asarray(got), want[:len(got)], rtol=1e-10, atol=1e-12)
    w = rng.standard_normal((6, 4))
    f = lambda m: xp.sum(LA.solve(m, xp.asarray(b[0])) * xp.asarray(w))  # noqa: E731
    g = np.asarray(grad(f)(xp.asarray(a[0])))
    np.testing.assert_allclose(g, _fd(lambda m: float(f(xp.asarray(m))), a[0]), rtol=1e-6, atol=1e-8)
    from transforms import hessian   # (second order: the gather's transpose, a scatter-add, differentiated again)
    f2 = lambda v: f(xp.reshape(v, (6, 6)))  # noqa: E731
    h = np.asarray(hessian(f2)(xp.asarray(a[0].reshape(-1))))
    g2, v0, eps = (lambda v: np.asarray(grad(f2)(xp.asarray(v)))), a[0].reshape(-1), 1e-6
    h_fd = np.stack([(g2(v0 + eps * e) - g2(v0 - eps * e)) / (2 * eps) for e in np.eye(36)], 1)
    np.testing.assert_allclose(h, h_fd, rtol=1e-5, atol=1e-7)
    for a_shape, b_shape in (((0, 0), (0, 3)), ((0, 1, 1), (0, 1, 1)), ((2, 3, 3), (2, 3, 0))):   # empty systems
        empty = LA.solve(xp.asarray(np.zeros(a_shape)), xp.asarray(np.zeros(b_shape)))
        assert empty.shape == b_shape


@pytest.mark.parametrize("dtype", REAL_DTYPES + ["complex128"])
def test_eigh(dtype):
    a = (SPD if dtype != "complex128" else CHPD).astype(dtype)
    w, v = LA.eigh(xp.asarray(a))
    rdt = np.dtype(dtype).type(0).real.dtype
    assert w.dtype == rdt and v.dtype == np.dtype(dtype)
    close(w, np.linalg.eigvalsh(a), dtype, tol=1e-3 if dtype == "float32" else None)
    w, v = np.asarray(w), np.asarray(v)
    close((v * w[..., None, :]) @ mH(v), a, dtype, tol=1e-3 if dtype == "float32" else None)
    close(LA.eigvalsh(xp.asarray(a)), w, dtype)


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_eig(dtype):
    a = (GEN if dtype == "float64" else CGEN).astype(dtype)
    w, v = LA.eig(xp.asarray(a))
    assert w.dtype == np.complex128 and v.dtype == np.complex128
    w, v = np.asarray(w), np.asarray(v)
    close(a @ v, v * w[..., None, :])
    ref = np.linalg.eigvals(a)
    got = np.asarray(LA.eigvals(xp.asarray(a)))
    assert np.abs(got[..., :, None] - ref[..., None, :]).min(-1).max() < 1e-9


@pytest.mark.parametrize("shape_name", ["square", "tall", "wide"])
@pytest.mark.parametrize("full", [False, True])
def test_svd(shape_name, full):
    a = {"square": GEN, "tall": TALL, "wide": WIDE}[shape_name]
    u, s, vh = (np.asarray(t) for t in LA.svd(xp.asarray(a), full_matrices=full))
    ru, rs, rvh = np.linalg.svd(a, full_matrices=full)
    assert u.shape == ru.shape and s.shape == rs.shape and vh.shape == rvh.shape
    close(s, rs)
    k = s.shape[-1]
    close((u[..., :k] * s[..., None, :]) @ vh[..., :k, :], a)
    close(mH(u) @ u, np.broadcast_to(np.eye(u.shape[-1]), u.shape[:-2] + (u.shape[-1],) * 2))
    close(LA.svdvals(xp.asarray(a)), rs)


@pytest.mark.parametrize("shape_name", ["square", "tall", "wide"])
@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_qr(shape_name, mode):
    a = {"square": GEN, "tall": TALL, "wide": WIDE}[shape_name]
    q, r = (np.asarray(t) for t in LA.qr(xp.asarray(a), mode=mode))
    rq, rr = np.linalg.qr(a, mode=mode)
    assert q.shape == rq.shape and r.shape == rr.shape
    close(q @ r, a)
    close(np.tril(r, -1), np.zeros_like(r))
    close(mH(q) @ q, np.broadcast_to(np.eye(q.shape[-1]), q.shape[:-2] + (q.shape[-1],) * 2))
    # unique up to the signs of R's diagonal
    k = min(a.shape[-2:])
    sgn = np.sign(np.diagonal(r, axis1=-2, axis2=-1) * np.diagonal(rr, axis1=-2, axis2=-1))
    close(r[..., :k, :] * sgn[..., :, None], rr[..., :k, :])


def test_qr_complex():
    q, r = (np.asarray(t) for t in LA.qr(xp.asarray(CGEN)))
    assert q.dtype == np.complex128
    close(q @ r, CGEN)
    close(mH(q) @ q, np.broadcast_to(np.eye(3), (2, 3, 3)))


@pytest.mark.parametrize("ord", ["fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf])
def test_matrix_norm(ord):
    got = LA.matrix_norm(xp.asarray(TALL), ord=ord)
    close(got, np.linalg.matrix_norm(TALL, ord=ord))
    got = LA.matrix_norm(xp.asarray(TALL), ord=ord, keepdims=True)
    assert got.shape == (2, 1, 1)


@pytest.mark.parametrize("ord", [2, 1, 0, 3, 0.5, math.inf, -math.inf])
@pytest.mark.parametrize("axis", [None, -1, (0, 2)])
def test_vector_norm(ord, axis):
    got = LA.vector_norm(xp.asarray(TALL), ord=ord, axis=axis)
    want = np.linalg.vector_norm(TALL, ord=ord, axis=axis)
    close(got, want)
    assert got.dtype == np.float64


def test_vector_norm_complex_keepdims():
    got = LA.vector_norm(xp.asarray(CGEN), axis=(-2, -1), keepdims=True)
    assert got.dtype == np.float64 and got.shape == (2, 1, 1)
    close(got, np.linalg.vector_norm(CGEN, axis=(-2, -1), keepdims=True))


def test_matrix_power():
    x = xp.asarray(GEN)
    for n in (0, 3, -2):
        close(LA.matrix_power(x, n), np.linalg.matrix_power(GEN, n), tol=1e-8)
    ints = xp.asarray(np.array([[1, 2], [3, 4]]))
    got = LA.matrix_power(ints, 3)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(np.asarray(got), np.linalg.matrix_power(np.array([[1, 2], [3, 4]]), 3))


def test_matrix_rank_and_pinv():
    a = TALL.copy()
    a[0, :, 2] = a[0, :, 0] + a[0, :, 1]                   # first matrix has rank 2
    r = LA.matrix_rank(xp.asarray(a))
    assert r.dtype == np.int64
    np.testing.assert_array_equal(np.asarray(r), [2, 3])
    np.testing.assert_array_equal(np.asarray(LA.matrix_rank(xp.asarray(a), rtol=xp.asarray([1e-12, 0.99]))), [2, 1])
    close(LA.pinv(xp.asarray(a)), np.linalg.pinv(a), tol=1e-8)
    close(LA.pinv(xp.asarray(WIDE), rtol=1e-3), np.linalg.pinv(WIDE, rtol=1e-3), tol=1e-8)


@pytest.mark.parametrize("offset", [-3, -1, 0, 1, 2, 4])
def test_diagonal_and_trace(offset):
    close(LA.diagonal(xp.asarray(TALL), offset=offset), np.diagonal(TALL, offset, -2, -1))
    close(LA.trace(xp.asarray(TALL), offset=offset), np.trace(TALL, offset, axis1=-2, axis2=-1))


def test_trace_dtypes():
    i = xp.asarray(np.arange(9, dtype=np.int32).reshape(3, 3))
    assert LA.trace(i).dtype == np.int64 and int(LA.trace(i)) == 12
    assert LA.trace(i, dtype=xp.int32).dtype == np.int32


def test_cross_outer():
    a, b = RNG.standard_normal((4, 3)), RNG.standard_normal(3)
    close(LA.cross(xp.asarray(a), xp.asarray(b)), np.cross(a, b))
    close(LA.cross(xp.asarray(a.T), xp.asarray(a.T), axis=-2), np.cross(a.T, a.T, axis=0))
    close(LA.outer(xp.asarray(VEC), xp.asarray(b)), np.outer(VEC, b))


def test_reused_main_namespace_functions():
    assert LA.matmul is xp.matmul and LA.matrix_transpose is xp.matrix_transpose
    assert LA.tensordot is xp.tensordot and LA.vecdot is xp.vecdot
    assert set(LA.__all__) >= {"cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "matmul",
                               "matrix_norm", "matrix_power", "matrix_rank", "matrix_transpose", "outer",
                               "pinv", "qr", "slogdet", "solve", "svd", "svdvals", "tensordot", "trace",
                               "vecdot", "vector_norm"}


# -------------------------------------------------------------------------- errors

@pytest.mark.parametrize("fname", ["cholesky", "det", "inv", "eigh", "eigvalsh", "slogdet", "svd", "svdvals",
                                   "qr", "pinv", "matrix_rank", "eig", "eigvals", "matrix_norm"])
def test_integer_input_is_a_type_error(fname):
    with pytest.raises(TypeError, match=f"{fname}.*int64"):
        getattr(LA, fname)(xp.asarray(np.eye(3, dtype=np.int64)))


@pytest.mark.parametrize("fname", ["cholesky", "det", "inv", "eigh", "slogdet", "eig"])
def test_non_square_is_a_value_error(fname):
    with pytest.raises(ValueError, match=fname):
        getattr(LA, fname)(xp.asarray(TALL))


def test_argument_errors():
    with pytest.raises(ValueError, match="mode"):
        LA.qr(xp.asarray(GEN), mode="r")
    with pytest.raises(ValueError, match="ord"):
        LA.matrix_norm(xp.asarray(GEN), ord=3)
    with pytest.raises(ValueError, match="cross"):
        LA.cross(xp.asarray(GEN), xp.asarray(GEN[..., :2]))
    with pytest.raises(ValueError, match="solve"):
        LA.solve(xp.asarray(GEN), xp.asarray(np.ones(4)))
    with pytest.raises(ValueError, match="at least 2"):
        LA.det(xp.asarray(VEC))
    with pytest.raises(TypeError, match="solve"):
        LA.solve(xp.asarray(np.eye(2, dtype=np.int64)), xp.asarray(np.ones(2, dtype=np.int64)))
    with pytest.raises(TypeError, match="matrix_power"):
        LA.matrix_power(xp.asarray(GEN), 1.5)


# ------------------------------------------------------------- transforms: jit, vmap

def _many(a, spd, b):
    return (LA.det(a), LA.inv(a), LA.slogdet(a).logabsdet, LA.solve(a, b), LA.cholesky(spd),
            LA.eigvalsh(spd), LA.svdvals(a), LA.qr(a).R, LA.pinv(a), LA.matrix_norm(a, ord=2))


def test_jit_matches_eager():
    args = (xp.asarray(GEN), xp.asarray(SPD), xp.asarray(RHS))
    for got, want in zip(jit(_many)(*args), _many(*args)):
        close(got, want, tol=1e-10)


def test_vmap_matches_loop():
    got = jit(vmap(_many))(xp.asarray(GEN), xp.asarray(SPD), xp.asarray(RHS))
    single = jit(_many)
    for i in range(2):
        want = single(xp.asarray(GEN[i]), xp.asarray(SPD[i]), xp.asarray(RHS[i]))
        for g, w in zip(got, want):
            close(np.asarray(g)[i], w, tol=1e-10)


def test_vmap_other_axis_and_unbatched_operand():
    f = lambda a, b: LA.solve(a, b)                         # noqa: E731
    got = vmap(f, in_axes=(2, None))(xp.asarray(np.moveaxis(GEN, 0, 2).copy()), xp.asarray(RHS[0]))
    close(got, np.linalg.solve(GEN, RHS[0]))


# ------------------------------------------------------------------------- gradients



W3 = RNG.standard_normal((3, 3))
_sym = lambda a: (a + a.T) / 2                               # noqa: E731

# name: (our scalar function of a 3x3 Array, the NumPy oracle, the input)
GRAD_CASES = {
    "cholesky": (lambda x: xp.sum(LA.cholesky(x) * xp.asarray(W3)),
                 lambda a: np.sum(np.linalg.cholesky(_sym(a)) * W3), SPD[0]),
    "eigvalsh": (lambda x: xp.sum(LA.eigvalsh(x) * xp.asarray(W3[0])),
                 lambda a: np.sum(np.linalg.eigvalsh(_sym(a)) * W3[0]), SPD[0]),
    "inv": (lambda x: xp.sum(LA.inv(x) * xp.asarray(W3)), lambda a: np.sum(np.linalg.inv(a) * W3), GEN[0]),
    "solve": (lambda x: xp.sum(LA.solve(x, xp.asarray(RHS[0])) * xp.asarray(W3[:, :2])),
              lambda a: np.sum(np.linalg.solve(a, RHS[0]) * W3[:, :2]), GEN[0]),
    "det": (LA.det, np.linalg.det, GEN[0]),
    "slogdet": (lambda x: LA.slogdet(x).logabsdet, lambda a: np.linalg.slogdet(a)[1], GEN[0]),
    "qr": (lambda x: xp.sum(LA.qr(x).Q * xp.asarray(W3)) + xp.sum(LA.qr(x).R * xp.asarray(W3.T)),
           lambda a: np.sum(np.linalg.qr(a)[0] * W3) + np.sum(np.linalg.qr(a)[1] * W3.T), GEN[0]),
    "svdvals": (lambda x: xp.sum(LA.svdvals(x) * xp.asarray(W3[0])),
                lambda a: np.sum(np.linalg.svd(a, compute_uv=False) * W3[0]), GEN[0]),
    "pinv": (lambda x: xp.sum(LA.pinv(x) * xp.asarray(W3)), lambda a: np.sum(np.linalg.pinv(a) * W3), GEN[0]),
}


@pytest.mark.parametrize("name", list(GRAD_CASES))
def test_grad_matches_finite_differences(name):
    f, f_np, a = GRAD_CASES[name]
    # reverse and forward mode (along a random direction) in one compiled computation
    both = jit(lambda x, t: (grad(f)(x), jvp(f, (x,), (t,))[1]))
    t = RNG.standard_normal(a.shape)
    g, tout = both(xp.asarray(a), xp.asarray(t))
    want = _fd(f_np, a)
    np.testing.assert_allclose(np.asarray(g), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(float(tout), np.sum(want * t), rtol=1e-5, atol=1e-6)


# singular matrices whose LU has one zero pivot: last ([[1, 2], [2, 4]]), first (a zero first column), 1x1
SINGULAR = [np.array([[1.0, 2.0], [2.0, 4.0]]), np.array([[0.0, 1.0], [0.0, 1.0]]),
            np.array([[0.0, 1.0, 2.0], [0.0, 3.0, 4.0], [0.0, 5.0, 7.0]]), np.array([[0.0]]),
            np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])]


@pytest.mark.parametrize("i", range(len(SINGULAR)))
def test_det_gradient_at_a_singular_matrix_is_its_adjugate(i):
    """grad(det) at a singular matrix was NaN everywhere (the LU's derivative: det * inv = 0 * inf); det is a
    polynomial, so its gradient there is the cofactor matrix, which central differences give: eagerly, under
    jit, vmap (beside a nonsingular matrix) and in forward mode."""
    a = SINGULAR[i]
    want = _fd(np.linalg.det, a)
    for way, g in (("eager", grad(LA.det)(xp.asarray(a))), ("jit", jit(grad(LA.det))(xp.asarray(a))),
                   ("vmap", vmap(grad(LA.det))(xp.asarray(np.stack([a, a + np.eye(len(a))])))[0])):
        np.testing.assert_allclose(np.asarray(g), want, rtol=1e-7, atol=1e-7, err_msg=way)
    t = RNG.standard_normal(a.shape)
    tout = jvp(LA.det, (xp.asarray(a),), (xp.asarray(t),))[1]
    np.testing.assert_allclose(float(tout), np.sum(want * t), rtol=1e-7, atol=1e-7)


def test_det_gradient_at_a_singular_complex_matrix_and_second_derivatives():
    """Complex: forward mode at a singular matrix against differences along a complex direction. Second derivatives
    of det at an invertible matrix against differences of its gradient (the cofactor matrix, det * inv^T)."""
    a = np.array([[1 + 1j, 2.0], [2 + 2j, 4.0]])
    t = CGEN[0][:2, :2]
    eps = 1e-6
    fd = (np.linalg.det(a + eps * t) - np.linalg.det(a - eps * t)) / (2 * eps)
    np.testing.assert_allclose(complex(jvp(LA.det, (xp.asarray(a),), (xp.asarray(t),))[1]), fd, rtol=1e-7)
    a = GEN[0]
    cof = lambda m: np.linalg.det(m) * np.linalg.inv(m).T           # noqa: E731
    want = np.stack([_fd(lambda m: cof(m)[idx], a) for idx in np.ndindex(3, 3)]).reshape(3, 3, 3, 3)
    np.testing.assert_allclose(np.asarray(jit(hessian(LA.det))(xp.asarray(a))), want, rtol=1e-6, atol=1e-7)


def test_det_gradient_with_two_zero_pivots_is_nan_not_a_guess():
    """Two zero pivots: the adjugate is 0 (rank n - 2 or less: zeros, ones) or not ([[0, 1], [0, 0]], rank n - 1),
    which the LU does not tell; NaN rather than a guess (JAX gives 0 for all of them)."""
    for a in (np.zeros((3, 3)), np.ones((3, 3)), np.array([[0.0, 1.0], [0.0, 0.0]])):
        assert np.isnan(np.asarray(grad(LA.det)(xp.asarray(a)))).all()


def test_svd_vectors_jvp_complex():
    """Gauge-invariant projector U[:, :1] U[:, :1]^H, complex input, forward mode vs differences."""
    a, t = CGEN[0], CGEN[1]

    def f(x):
        u = LA.svd(x, full_matrices=False).U[:, :1]
        return u @ xp.conj(xp.matrix_transpose(u))
    tout = jit(lambda x, t: jvp(f, (x,), (t,))[1])(xp.asarray(a), xp.asarray(t))
    eps = 1e-6
    fd = (np.asarray(f(xp.asarray(a + eps * t))) - np.asarray(f(xp.asarray(a - eps * t)))) / (2 * eps)
    np.testing.assert_allclose(np.asarray(tout), fd, rtol=1e-5, atol=1e-6)


def test_eig_has_no_derivative():
    with pytest.raises(NotImplementedError, match="eig"):
        grad(lambda x: xp.sum(xp.real(LA.eigvals(x))))(xp.asarray(GEN[0]))


def test_tensordot_accepts_numpy_integer_axes():
    import numpy as np
    a, b = np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4)
    want = np.tensordot(a, b, axes=1)
    np.testing.assert_allclose(np.asarray(xp.tensordot(xp.asarray(a), xp.asarray(b), axes=np.int64(1))), want)
    np.testing.assert_allclose(np.asarray(xp.tensordot(xp.asarray(a), xp.asarray(b),
                                                       axes=([np.int64(1)], [np.int32(0)]))), want)
    with pytest.raises(TypeError):
        xp.tensordot(xp.asarray(a), xp.asarray(b), axes=1.0)


@pytest.mark.parametrize("fname", ["svd", "svdvals", "eigh", "eigvalsh", "eig", "eigvals", "pinv", "matrix_rank"])
@pytest.mark.parametrize("mode", ["eager", "jit", "vmap"])
def test_non_finite_matrices_give_nan_promptly_and_leave_the_rest_exact(fname, mode):
    """LAPACK's iterative kernels can loop forever on inf/NaN (vmap(svd) on a batch with inf hung):
    such a matrix gives NaN results, the finite ones in the same batch are NumPy's."""
    import numpy as np
    from transforms import jit, vmap
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4, 4))
    a = a + np.swapaxes(a, -1, -2)          # symmetric, so eigh's answer is NumPy's too
    a[1, 0, 0] = np.inf
    a[2, 1, 2] = a[2, 2, 1] = np.nan
    f = getattr(xp.linalg, fname)
    run = {"eager": f, "jit": jit(f), "vmap": vmap(f)}[mode]
    out = run(xp.asarray(a))
    outs = out if isinstance(out, tuple) else (out,)
    if fname == "matrix_rank":
        assert int(outs[0][0]) == np.linalg.matrix_rank(a[0])
        return
    for o in outs:
        o = np.asarray(o)
        assert np.all(np.isnan(o[1])) and np.all(np.isnan(o[2])), fname
        assert np.all(np.isfinite(o[0]))
    if fname in ("svdvals", "eigvalsh"):
        want = (np.linalg.svd(a[0], compute_uv=False) if fname == "svdvals" else np.linalg.eigvalsh(a[0]))
        np.testing.assert_allclose(np.asarray(outs[0])[0], want, rtol=1e-10, atol=1e-12)
    if fname == "pinv":
        np.testing.assert_allclose(np.asarray(outs[0])[0], np.linalg.pinv(a[0]), rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("fname", ["cholesky", "eigvalsh", "eigh"])
def test_hermitian_functions_of_a_matrix_near_the_largest_float_stay_finite(fname):
    """cholesky and eigh symmetrise x first; (x + x^H) / 2 overflowed for entries past half the largest float
    (inf/NaN where NumPy's values are finite). Halved first it does not (issue 24). NumPy is the oracle,
    eagerly, under jit and under vmap; float32 as well."""
    base = np.array([[4.0, 1.0], [1.0, 3.0]])
    for dt in (np.float64, np.float32):
        m = np.stack([base * (np.finfo(dt).max / 5), base * (np.finfo(dt).max / 16), base]).astype(dt)
        f = getattr(LA, fname)
        npf = {"cholesky": np.linalg.cholesky, "eigvalsh": np.linalg.eigvalsh, "eigh": np.linalg.eigvalsh}[fname]
        g = (lambda a: f(a)[0]) if fname == "eigh" else f
        want = npf(m)
        assert np.isfinite(want).all()
        x = xp.asarray(m)
        rtol = 1e-12 if dt == np.float64 else 1e-5
        for way, got in (("eager", g(x)), ("jit", jit(g)(x)), ("vmap", vmap(g)(x))):
            np.testing.assert_allclose(np.asarray(got), want, rtol=rtol, atol=0, err_msg=f"{way} {dt.__name__}")


@pytest.mark.parametrize("shape", [(0, 0), (2, 0), (0, 3), (3, 0, 0), (2, 3)])
@pytest.mark.parametrize("ord", ["fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf])
def test_matrix_norm_of_empty_matrices_as_numpy(shape, ord):
    """The largest of no column sums, row sums or singular values is 0, as NumPy's (ord = 1 and inf were -inf:
    a reduce_max of nothing); the smallest is a ValueError, as NumPy's (ord = -1 and -inf were inf), eagerly and
    under jit."""
    a = np.zeros(shape)
    f = jit(xp.linalg.matrix_norm, static_argnames=("ord", "keepdims"))
    try:
        want = np.linalg.norm(a, ord, axis=(-2, -1))
    except ValueError:
        for g in (xp.linalg.matrix_norm, f):
            with pytest.raises(ValueError, match="matrix_norm: ord=.* minimum of an empty set"):
                g(xp.asarray(a), ord=ord)
        return
    for g in (xp.linalg.matrix_norm, f):
        np.testing.assert_array_equal(np.asarray(g(xp.asarray(a), ord=ord)), want)
