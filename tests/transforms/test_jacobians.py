"""transforms.jacobians: jacfwd, jacrev and hessian.

Oracles: central finite differences of NumPy functions (never a derivative rule of ours),
NumPy closed forms (d(Ax)/dx = A, hessian of x^T A x = A + A^T, of log-sum-exp =
diag(p) - p p^T), a Python loop for vmap, and NumPy as well as eager for jit.
"""
import numpy as np
import pytest

import array_namespace as xp
from finite_diff import second_diff_hvp
from transforms import hessian, jacfwd, jacrev, jit, vmap

RNG = np.random.default_rng(0)
A = RNG.standard_normal((3, 4))
S = RNG.standard_normal((4, 4))


def fd_jacobian(f, x, eps=1e-6):
    """J[out..., in...] of a NumPy function by central differences."""
    x = np.asarray(x, np.float64)
    y = np.asarray(f(x))
    J = np.zeros(y.shape + x.shape)
    for idx in np.ndindex(x.shape):
        p, m = x.copy(), x.copy()
        p[idx] += eps
        m[idx] -= eps
        J[(...,) + idx] = (np.asarray(f(p)) - np.asarray(f(m))) / (2 * eps)
    return J


# vector -> vector functions: (namespace version, NumPy version)
FUNS = {
    "tanh_affine": (lambda x: xp.tanh(xp.asarray(A) @ x), lambda x: np.tanh(A @ x)),
    "sin_times_reverse": (lambda x: xp.sin(x) * xp.flip(x), lambda x: np.sin(x) * x[::-1]),
    "cumprod": (lambda x: xp.cumulative_prod(x), lambda x: np.cumprod(x)),
    "softmax": (lambda x: xp.exp(x) / xp.sum(xp.exp(x)), lambda x: np.exp(x) / np.exp(x).sum()),
}
X = np.array([0.3, -0.7, 1.1, 0.45])


@pytest.mark.parametrize("jac", [jacfwd, jacrev], ids=["jacfwd", "jacrev"])
@pytest.mark.parametrize("name", list(FUNS))
def test_jacobian_matches_finite_differences(jac, name):
    f, fnp = FUNS[name]
    got = np.asarray(jac(f)(xp.asarray(X)))
    want = fd_jacobian(fnp, X)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("jac", [jacfwd, jacrev], ids=["jacfwd", "jacrev"])
def test_linear_map_jacobian_is_the_matrix(jac):
    got = np.asarray(jac(lambda x: xp.asarray(A) @ x)(xp.asarray(X)))
    np.testing.assert_allclose(got, A, rtol=1e-15, atol=1e-15)


@pytest.mark.parametrize("jac", [jacfwd, jacrev], ids=["jacfwd", "jacrev"])
def test_matrix_in_matrix_out_shapes_and_values(jac):
    B = RNG.standard_normal((4, 2))
    X2 = RNG.standard_normal((3, 4))
    got = np.asarray(jac(lambda m: m @ xp.asarray(B))(xp.asarray(X2)))
    # d(XB)[i, j] / dX[k, l] = delta_ik B[l, j]
    want = np.einsum("ik,lj->ijkl", np.eye(3), B)
    assert got.shape == (3, 2, 3, 4)
    np.testing.assert_allclose(got, want, rtol=1e-15, atol=1e-15)
    np.testing.assert_allclose(got, fd_jacobian(lambda m: m @ B, X2), rtol=1e-7, atol=1e-9)


def test_scalar_in_scalar_out():
    for jac in (jacfwd, jacrev):
        j = jac(lambda x: xp.sin(x) * x)(xp.asarray(0.8))
        assert j.shape == ()
        assert float(j) == pytest.approx(np.cos(0.8) * 0.8 + np.sin(0.8), rel=1e-14)


def test_python_scalar_and_list_inputs_become_strong_arrays():
    j = jacfwd(lambda x: x * x)(3.0)
    assert j.dtype == xp.float64 and float(j) == 6.0
    # a Python float input is strongly typed (as asarray makes it): float32 constants do not win
    j32 = jacfwd(lambda x: x * xp.asarray(2.0, dtype=xp.float32))(3.0)
    assert j32.dtype == xp.float64
    jl = jacfwd(lambda x: x ** 2)([1.0, 2.0])
    np.testing.assert_allclose(np.asarray(jl), np.diag([2.0, 4.0]))


@pytest.mark.parametrize("jac", [jacfwd, jacrev], ids=["jacfwd", "jacrev"])
def test_float32_stays_float32(jac):
    x = xp.asarray(X, dtype=xp.float32)
    j = jac(lambda v: xp.sin(v) * 2.0)(x)
    assert j.dtype == xp.float32
    np.testing.assert_allclose(np.asarray(j), np.diag(2 * np.cos(X.astype(np.float32))), rtol=1e-6)


@pytest.mark.parametrize("jac", [jacfwd, jacrev], ids=["jacfwd", "jacrev"])
def test_argnums_tuple(jac):
    x, y = X, X[::-1] + 1.0
    jx, jy = jac(lambda a, b: a * xp.sin(b), argnums=(0, 1))(xp.asarray(x), xp.asarray(y))
    np.testing.assert_allclose(np.asarray(jx), np.diag(np.sin(y)), rtol=1e-14)
    np.testing.assert_allclose(np.asarray(jy), np.diag(x * np.cos(y)), rtol=1e-14)
    only_y = jac(lambda a, b: a * xp.sin(b), argnums=1)(xp.asarray(x), xp.asarray(y))
    np.testing.assert_allclose(np.asarray(only_y), np.asarray(jy))


def test_jacfwd_of_pytree_output():
    out = jacfwd(lambda x: {"s": xp.sum(x ** 2), "v": 3.0 * x})(xp.asarray(X))
    np.testing.assert_allclose(np.asarray(out["s"]), 2 * X)
    np.testing.assert_allclose(np.asarray(out["v"]), 3 * np.eye(4))


def test_jacrev_of_several_outputs_is_a_type_error():
    with pytest.raises(TypeError, match="single array output"):
        jacrev(lambda x: (x, 2 * x))(xp.asarray(X))


# ------------------------------------------------------------------------------- hessian

def test_hessian_of_quadratic_form_is_a_plus_a_transpose():
    h = np.asarray(hessian(lambda x: x @ (xp.asarray(S) @ x))(xp.asarray(X)))
    np.testing.assert_allclose(h, S + S.T, rtol=1e-14, atol=1e-14)


def test_hessian_of_logsumexp_closed_form():
    h = np.asarray(hessian(lambda x: xp.log(xp.sum(xp.exp(x))))(xp.asarray(X)))
    p = np.exp(X) / np.exp(X).sum()
    np.testing.assert_allclose(h, np.diag(p) - np.outer(p, p), rtol=1e-12, atol=1e-14)


def test_hessian_matches_second_differences():
    def fnp(v):
        return np.sum(np.sin(v) * np.roll(v, 1)) + np.prod(v[:2]) ** 2
    h = np.asarray(hessian(lambda v: xp.sum(xp.sin(v) * xp.roll(v, 1)) + xp.prod(v[:2]) ** 2)(xp.asarray(X)))
    cols = [second_diff_hvp(fnp, [X], [e])[0] for e in np.eye(4)]
    np.testing.assert_allclose(h, np.stack(cols, 1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(h, h.T, rtol=1e-13, atol=1e-13)


def test_hessian_of_matrix_argument():
    M = RNG.standard_normal((2, 3))
    h = np.asarray(hessian(lambda m: xp.sum(m ** 3))(xp.asarray(M)))
    assert h.shape == (2, 3, 2, 3)
    np.testing.assert_allclose(h.reshape(6, 6), np.diag(6 * M.ravel()), rtol=1e-14)


# ------------------------------------------------------------------- vmap / jit composition

@pytest.mark.parametrize("make", [lambda f: jacfwd(f), lambda f: jacrev(f), lambda f: hessian(lambda x: xp.sum(f(x)))],
                         ids=["jacfwd", "jacrev", "hessian"])
def test_vmap_matches_loop(make):
    f = FUNS["sin_times_reverse"][0]
    g = make(f)
    batch = RNG.standard_normal((3, 4))
    loop = np.stack([np.asarray(g(xp.asarray(b))) for b in batch])
    np.testing.assert_allclose(np.asarray(vmap(g)(xp.asarray(batch))), loop, rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("jac", [jacfwd, jacrev], ids=["jacfwd", "jacrev"])
def test_jit_matches_numpy_and_eager(jac):
    f, fnp = FUNS["tanh_affine"]
    eager = np.asarray(jac(f)(xp.asarray(X)))
    jitted = np.asarray(jit(jac(f))(xp.asarray(X)))
    want = (1 - np.tanh(A @ X) ** 2)[:, None] * A
    np.testing.assert_allclose(jitted, want, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(jitted, eager, rtol=1e-13, atol=1e-15)
    inner = np.asarray(jac(jit(f))(xp.asarray(X)))
    np.testing.assert_allclose(inner, want, rtol=1e-12, atol=1e-14)


def test_jit_of_vmap_of_hessian_matches_numpy():
    batch = RNG.standard_normal((2, 4))
    h = np.asarray(jit(vmap(hessian(lambda x: x @ (xp.asarray(S) @ x) + xp.sum(x ** 3))))(xp.asarray(batch)))
    want = np.stack([S + S.T + np.diag(6 * b) for b in batch])
    np.testing.assert_allclose(h, want, rtol=1e-13, atol=1e-13)
