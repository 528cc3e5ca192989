"""Host kernels of the LAPACK family (xla/lower_lapack.py): eager on the host == the lowering run by XLA.

Oracle: the primitive's own lowering run by XLA (jaxlib's LAPACK custom calls; a test's cases in one
program, test_host_kernels.xla_many), per primitive,
per dtype (float32/64, complex64/128), on batched, square, tall and wide, singular, indefinite and
empty inputs. Eigen- and singular vectors are compared as LAPACK returns them (both sides run the
same drivers), but their sign/phase is the build's own: float32 eigenvectors from NumPy's LAPACK and
from jaxlib's differ in sign now and then (float64 ones agree), so vectors are compared after aligning
each one's phase to XLA's, and u and vh of an svd must take opposite phases (u diag(s) vh is the same).
"""
import numpy as np
import pytest

import array_namespace as xp
from transforms import jit
from transforms.core import ShapedArray, impl_rules
from transforms.primitives import lapack as LP
from xla import host, runtime
from xla.host import HostValue, host_kernels

from test_host_kernels import xla_many

pytestmark = pytest.mark.skipif(host.MODE == "xla", reason="host kernels switched off (ARRAY_NAMESPACE_EAGER=xla)")

DTYPES = [np.dtype(d) for d in ("float32", "float64", "complex64", "complex128")]


def _rand(rng, shape, dt):
    a = rng.standard_normal(shape)
    if dt.kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dt)


def _spd(rng, batch, n, dt):
    a = _rand(rng, batch + (n, n), dt)
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)).astype(dt)


def _xla(prim, args, params):
    out = runtime._make_impl(prim)(*[runtime.device_buffer(a) for a in args], **params)
    return [np.asarray(o) for o in out] if prim.multiple_results else [np.asarray(out)]


def _host(prim, args, params):
    """The host kernel's outputs through the eager impl (HostValues), or None where it declines."""
    if host.quiet(host_kernels[prim], *list(args), **params) is NotImplemented:
        return None
    vals = [HostValue(a, ShapedArray(a.shape, a.dtype)) for a in args]
    out = impl_rules[prim](*vals, **params)
    outs = out if prim.multiple_results else [out]
    assert all(type(o) is HostValue for o in outs), prim
    return [o.np for o in outs]


def _close(got, want, scale, n, what):
    assert got.dtype == want.dtype and got.shape == want.shape, (what, got.dtype, want.dtype, got.shape, want.shape)
    if got.dtype.kind in "iu":
        assert np.array_equal(got, want), (what, got, want)
        return
    assert np.array_equal(np.isnan(got), np.isnan(want)), (what, "NaN placement differs")
    eps = float(np.finfo(got.dtype).eps)
    fin = ~np.isnan(want)
    err = np.abs(got[fin] - want[fin]).max(initial=0.0)
    tol = 20 * eps * n * max(scale, np.abs(want[fin]).max(initial=0.0), 1.0)   # backward-stable: ~ n eps |A|
    assert err <= tol, (what, err, tol)


def _align(g, w, axis):
    """g with each vector along `axis` (-2: columns, -1: rows) turned by the unit phase that best maps it
    onto w's; also returns the phases."""
    c = np.sum(np.conj(g) * w, axis=axis, keepdims=True)
    ph = np.where(np.abs(c) > 0, c / np.where(np.abs(c) > 0, np.abs(c), 1), 1).astype(g.dtype)
    return g * ph, ph


# per primitive: {output index: vector axis} for the outputs that are eigen/singular vectors
VECTORS = {LP.eigh_p: {1: -2}, LP.eig_p: {1: -2}, LP.svd_p: {1: -2, 2: -1}}


def check_all(cases):
    """check(*case) for each (prim, args, params), XLA's answers from one program (compiling is what costs)."""
    for case, want in zip(cases, xla_many(cases)):
        assert want is not None, case
        check(*case, want=want)


def check(prim, args, params, declines=False, want=None):
    got, want = _host(prim, args, params), want or _xla(prim, args, params)
    if declines:
        assert got is None, (prim.name, params, "was expected to decline")
        return
    assert got is not None, (prim.name, params, "declined")
    scale = float(max(np.abs(a).max(initial=0.0) for a in args))
    phases = {}
    for i, axis in VECTORS.get(prim, {}).items():
        if i < len(got):
            got[i], phases[i] = _align(got[i], want[i], axis)
    if 1 in phases and 2 in phases:    # svd: u's column j and vh's row j turned oppositely
        k = min(args[0].shape[-2:])
        pu, pv = phases[1][..., 0, :k], phases[2][..., :k, 0]
        assert np.allclose(pu * pv, 1, atol=1e-3), ("svd: u and vh phases disagree", pu, pv)
    for i, (g, w) in enumerate(zip(got, want)):
        _close(g, w, scale, max(args[0].shape[-2:] + (4,)), f"{prim.name} {params} out {i}")
    assert len(got) == len(want)


@pytest.mark.parametrize("dt", DTYPES, ids=str)
def test_cholesky(dt):
    rng = np.random.default_rng(0)
    check(LP.cholesky_p, [_spd(rng, (), 5, dt)], {})
    check(LP.cholesky_p, [_spd(rng, (2, 3), 4, dt)], {})
    # not positive definite in one matrix of the batch: that one NaN, the others factorised
    a = _spd(rng, (3,), 4, dt)
    a[1] = -a[1]
    got = _host(LP.cholesky_p, [a], {})[0]
    assert np.isnan(got[1]).all() and not np.isnan(got[[0, 2]]).any()
    check(LP.cholesky_p, [a], {})
    # only the lower triangle is read
    b = _spd(rng, (), 4, dt)
    b[np.triu_indices(4, 1)] = 7
    check(LP.cholesky_p, [b], {})
    check(LP.cholesky_p, [np.zeros((2, 0, 0), dt)], {})


@pytest.mark.parametrize("dt", DTYPES, ids=str)
@pytest.mark.parametrize("lower", [True, False])
def test_eigh(dt, lower):
    rng = np.random.default_rng(1)
    a = _rand(rng, (2, 6, 6), dt)
    check_all([(LP.eigh_p, [(a + np.conj(np.swapaxes(a, -1, -2))).astype(dt)], dict(lower=lower)),
               (LP.eigh_p, [a], dict(lower=lower)),            # not Hermitian: only the named triangle is read
               (LP.eigh_p, [np.zeros((0, 3, 3), dt)], dict(lower=lower))])


@pytest.mark.parametrize("dt", DTYPES, ids=str)
def test_svd(dt):
    rng = np.random.default_rng(2)
    cases = [(LP.svd_p, [_rand(rng, shape, dt)], dict(full_matrices=full_matrices, compute_uv=compute_uv))
             for shape in [(2, 7, 4), (3, 4, 7)]
             for full_matrices, compute_uv in [(True, True), (False, True), (False, False), (True, False)]]
    cases += [(LP.svd_p, [_rand(rng, shape, dt)], dict(full_matrices=True, compute_uv=True))
              for shape in [(5, 5), (3, 0), (0, 4, 4)]]
    check_all(cases + [(LP.svd_p, [_rand(rng, (0, 3), dt)], dict(full_matrices=False, compute_uv=True))])


def test_svd_rank_deficient():
    a = np.outer(np.arange(1.0, 6.0), np.arange(1.0, 5.0))
    check(LP.svd_p, [a], dict(full_matrices=True, compute_uv=True))


@pytest.mark.parametrize("dt", DTYPES, ids=str)
def test_qr(dt):
    rng = np.random.default_rng(3)
    cases = [(LP.qr_p, [_rand(rng, shape, dt)], dict(full_matrices=full_matrices))
             for shape in [(2, 7, 4), (3, 4, 7)] for full_matrices in (True, False)]
    check_all(cases + [(LP.qr_p, [_rand(rng, shape, dt)], dict(full_matrices=True))
                       for shape in [(5, 5), (4, 0), (0, 3)]])


@pytest.mark.parametrize("dt", DTYPES, ids=str)
def test_eig(dt):
    rng = np.random.default_rng(4)
    check_all([(LP.eig_p, [_rand(rng, (3, 5, 5), dt)], {}),
               (LP.eig_p, [np.array([[0.0, -1.0], [1.0, 0.0]], dt)], {}),   # complex pair from a real matrix
               (LP.eig_p, [np.diag(np.arange(1.0, 5.0)).astype(dt)], {})])


@pytest.mark.parametrize("dt", DTYPES, ids=str)
def test_lu(dt):
    rng = np.random.default_rng(5)
    check_all([(LP.lu_p, [_rand(rng, shape, dt)], {})
               for shape in [(2, 7, 4), (3, 4, 7), (1, 70, 70), (70, 40), (3, 0)]])


def test_lu_singular_and_ties():
    a = np.eye(40)
    a[:, 5] = 0          # an exactly zero column
    b = np.eye(70)[::-1].copy()
    b[:, 40] = 0
    b[3, :] = 1.0        # |pivot| ties in every column
    check_all([(LP.lu_p, [m], {}) for m in (
        np.zeros((4, 4)), np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 1.0, 1.0]]),
        np.array([[1.0, 2.0], [-1.0, 5.0], [1.0, 0.0]]),     # |pivot| ties: the first row
        np.array([[1.0, 2.0], [1.0 - 1.0j, 1.0], [1.0 + 1.0j, 0.0]], np.complex128),   # |re|+|im|
        a[::-1].copy(), np.stack([a[::-1], a]), b)])


def test_lu_without_scipy_declines_to_xla(monkeypatch):
    """Where scipy's LAPACK is missing (jaxlib requires scipy, so only a broken install), the kernels decline and
    eager lu and triangular_solve run XLA's (LAPACK's getrf and trsm as under jit): one algorithm everywhere, no
    second implementation."""
    from xla import lower_lapack
    assert lower_lapack._scipy_routine(np.dtype(np.float64), "getrf") is not None   # (scipy is here)
    monkeypatch.setattr(lower_lapack, "_scipy_routine", lambda dtype, name: None)
    check(LP.lu_p, [np.eye(3) + 1.0], {}, declines=True)
    check(LP.triangular_solve_p, [np.eye(3) + np.tril(np.ones((3, 3))), np.ones((3, 2))], TS[0], declines=True)
    a = np.array([[1.0, 2.0, 0.5], [3.0, -1.0, 2.0], [0.0, 4.0, 1.0]])
    lu, piv, perm = (np.asarray(o) for o in LP.lu_p.bind(xp.asarray(a)._v))
    l, u = np.tril(lu, -1) + np.eye(3), np.triu(lu)
    np.testing.assert_allclose(a[perm], l @ u, rtol=1e-14)


@pytest.mark.parametrize("dt", DTYPES, ids=str)
def test_lu_kernel_is_the_lowerings_bit_for_bit(dt):
    """Eager lu calls the getrf that jit's LAPACK kernel calls (scipy's), so the factors and pivots of eager and
    jitted lu (det, slogdet) agree bit for bit: a batch, tall, wide, larger, singular."""
    rng = np.random.default_rng(8)
    sing = _rand(rng, (5, 5), dt)
    sing[:, 2] = sing[:, 0]
    cases = [(LP.lu_p, [m], {}) for m in (_rand(rng, (3, 6, 6), dt), _rand(rng, (9, 4), dt), _rand(rng, (4, 9), dt),
                                          _rand(rng, (70, 70), dt), sing)]
    for case, want in zip(cases, xla_many(cases)):
        got = _host(*case)
        assert got is not None and len(got) == len(want) == 3
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and np.array_equal(g, w), (dt, case[1][0].shape)


def test_lu_declines_non_finite():
    check(LP.lu_p, [np.array([[1.0, np.nan], [2.0, 3.0]])], {}, declines=True)


TS = [dict(left_side=ls, lower=lo, transpose_a=tr, conjugate_a=cj, unit_diagonal=ud)
      for ls in (True, False) for lo in (True, False) for tr, cj in ((False, False), (True, False), (True, True),
                                                                      (False, True)) for ud in (False, True)]


@pytest.mark.parametrize("dt", DTYPES, ids=str)
def test_triangular_solve(dt):
    rng = np.random.default_rng(6)
    a = _rand(rng, (2, 5, 5), dt) + (4 * np.eye(5)).astype(dt)
    cases = []
    for p in TS:
        if dt.kind != "c" and p["conjugate_a"] or dt in (np.float32, np.complex64) and (p["unit_diagonal"] or not p["lower"]):
            continue   # (conjugation is the identity on reals; single precision: the main flags only)
        b = _rand(rng, (2, 5, 3) if p["left_side"] else (2, 3, 5), dt)
        cases.append((LP.triangular_solve_p, [a, b], p))
    check_all(cases)


def test_triangular_solve_is_blas_trsm_for_every_flag_batch_and_empty_shape():
    """The kernel is BLAS trsm on each matrix: it equals a solve with the explicit triangle (conjugated,
    transposed, unit diagonal as the flags say) for every flag, dtype, batch shape and empty operand."""
    from xla.lower_lapack import _h_triangular_solve
    rng = np.random.default_rng(7)
    for dt in DTYPES:
        for batch, (m, n) in [((), (4, 3)), ((3,), (1, 1)), ((2, 2), (5, 0)), ((0,), (2, 2)), ((), (0, 2))]:
            for p in TS:
                k = m if p["left_side"] else n
                a = (_rand(rng, batch + (k, k), dt) + (3 * np.eye(k)).astype(dt))
                a[..., np.arange(k), np.arange(k)] *= 0 if p["unit_diagonal"] else 1   # (read as ones: never zero)
                b = _rand(rng, batch + (m, n), dt)
                t = np.tril(a) if p["lower"] else np.triu(a)
                if p["unit_diagonal"]:
                    t[..., np.arange(k), np.arange(k)] = 1
                t = np.conj(t) if p["conjugate_a"] else t
                t = np.swapaxes(t, -1, -2) if p["transpose_a"] else t
                tt, bt = np.swapaxes(t, -1, -2), np.swapaxes(b, -1, -2)
                want = b if not k else np.linalg.solve(t, b) if p["left_side"] else np.swapaxes(
                    np.linalg.solve(tt, bt), -1, -2)
                got = _h_triangular_solve(a, b, **p)
                tol = 1e-4 if dt in (np.float32, np.complex64) else 1e-11
                assert got.dtype == b.dtype and got.shape == b.shape, (dt, batch, p)
                np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=f"{dt} {batch} {p}")


def test_triangular_solve_declines_singular_and_non_finite():
    a = np.tril(np.ones((3, 3)))
    a[1, 1] = 0
    p = TS[0]
    check(LP.triangular_solve_p, [a, np.ones((3, 2))], p, declines=True)
    check(LP.triangular_solve_p, [np.eye(3), np.array([[np.inf], [1.0], [2.0]])], p, declines=True)
    # a zero where the solve does not read (unit diagonal, other triangle) is fine
    check(LP.triangular_solve_p, [a, np.ones((3, 2))], dict(p, unit_diagonal=True))


@pytest.mark.parametrize("dt", DTYPES, ids=str)
def test_solve(dt):
    """gesv on the host == the lowering's LU solve run by XLA: one matrix, a batch with a one-column right
    side, a matrix that needs pivoting, and empty ones."""
    rng = np.random.default_rng(8)
    pivoting = np.array([[1e-3, 1, 2], [1, 1, 0], [2, 0, 1]], dt)
    check_all([(LP.solve_p, [_rand(rng, (4, 4), dt) + (2 * np.eye(4)).astype(dt), _rand(rng, (4, 3), dt)], {}),
               (LP.solve_p, [_rand(rng, (2, 3, 5, 5), dt), _rand(rng, (2, 3, 5, 1), dt)], {}),
               (LP.solve_p, [pivoting, _rand(rng, (3, 2), dt)], {}),
               (LP.solve_p, [np.zeros((0, 0), dt), np.zeros((0, 3), dt)], {}),
               (LP.solve_p, [_rand(rng, (3, 3), dt), np.zeros((3, 0), dt)], {})])


def test_solve_declines_singular_and_non_finite():
    """Where the host kernel declines, the eager call is the lowering's (XLA's inf/NaN pattern), as jit's."""
    check(LP.solve_p, [np.ones((3, 3)), np.ones((3, 2))], {}, declines=True)
    check(LP.solve_p, [np.eye(3), np.array([[np.nan], [1.0], [2.0]])], {}, declines=True)
    check(LP.solve_p, [np.array([[1.0, np.inf], [0.0, 1.0]]), np.ones((2, 1))], {}, declines=True)
    a, b = xp.asarray(np.ones((3, 3))), xp.asarray(np.ones((3, 2)))
    want = np.asarray(jit(xp.linalg.solve)(a, b))
    np.testing.assert_array_equal(np.isnan(np.asarray(xp.linalg.solve(a, b))), np.isnan(want))


LAPACK_PRIMS = {v for v in vars(LP).values() if type(v) is type(LP.lu_p)}
TESTED = {LP.cholesky_p: test_cholesky, LP.eigh_p: test_eigh, LP.svd_p: test_svd, LP.qr_p: test_qr,
          LP.eig_p: test_eig, LP.lu_p: test_lu, LP.triangular_solve_p: test_triangular_solve,
          LP.solve_p: test_solve}


def test_every_lapack_primitive_has_a_host_kernel_tested_here():
    assert LAPACK_PRIMS <= set(host_kernels), sorted(p.name for p in LAPACK_PRIMS - set(host_kernels))
    assert set(TESTED) == LAPACK_PRIMS, sorted(p.name for p in LAPACK_PRIMS ^ set(TESTED))


def test_eager_linalg_on_new_shapes_compiles_nothing(fresh_staged):
    rng = np.random.default_rng(7)
    before = runtime.compile_calls[0]
    for n in (3, 6, 11):
        a = xp.asarray(_spd(rng, (), n, np.dtype(np.float64)))
        b = xp.asarray(rng.standard_normal((n, 2)))
        outs = [xp.linalg.cholesky(a), xp.linalg.eigh(a).eigenvectors, xp.linalg.svd(a).U, xp.linalg.qr(a).Q,
                xp.linalg.solve(a, b), xp.linalg.inv(a), xp.linalg.det(a), xp.linalg.slogdet(a).logabsdet,
                xp.linalg.pinv(a), xp.linalg.matrix_rank(a), xp.linalg.eigvals(a), xp.linalg.vector_norm(a)]
        for o, want in zip(outs[4:6], (np.linalg.solve(np.asarray(a), np.asarray(b)), np.linalg.inv(np.asarray(a)))):
            np.testing.assert_allclose(np.asarray(o), want, rtol=1e-10, atol=1e-12)
    assert runtime.compile_calls[0] == before


def test_singular_values_alone_take_lapack_s_values_only_path():
    """compute_uv=False (svdvals, matrix_rank, the 2- and nuclear norms) runs gesdd without u and v (jobz 'N'),
    eagerly and under jit, as numpy.linalg.svd(compute_uv=False) does: about half the time of the path computing
    u and v, whose values it returned before (2028x78 float64: 9.5 -> 4.8 ms)."""
    rng = np.random.default_rng(4)
    for shape in [(40, 7), (7, 40), (3, 30, 6), (64, 64)]:
        a = rng.standard_normal(shape)
        want = np.linalg.svd(a, compute_uv=False)
        np.testing.assert_array_equal(np.asarray(xp.linalg.svdvals(xp.asarray(a))), want)
        np.testing.assert_allclose(np.asarray(jit(xp.linalg.svdvals)(xp.asarray(a))), want, rtol=1e-13)
