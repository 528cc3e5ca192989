"""Complex sin, cos, sinh, cosh, expm1 and log1p, computed from real primitives (_complex_special's
formulas), against mpmath at 200 bits: eagerly and under jit, each part to a few ulps of the result's
magnitude where the function is well conditioned, small arguments and near-real ones included (where
XLA's own complex formulas lost up to ten digits), no spurious overflow (sinh(711 + 1e-300j) is finite);
and their gradients against finite differences.
"""
import mpmath
import numpy as np
import pytest

import array_namespace as xp
from transforms import grad, jit

from finite_diff import central_diff

NAMES = ["sin", "cos", "sinh", "cosh", "expm1", "log1p"]
_MP = {"sin": mpmath.sin, "cos": mpmath.cos, "sinh": mpmath.sinh, "cosh": mpmath.cosh,
       "expm1": mpmath.expm1, "log1p": lambda w: mpmath.log(1 + w)}


def reference(name, z):
    with mpmath.workprec(200):
        return np.array([complex(_MP[name](mpmath.mpc(float(v.real), float(v.imag)))) for v in z])


def points():
    rng = np.random.default_rng(7)
    z = [rng.normal(size=120) * 3 + 1j * rng.normal(size=120) * 3,
         10.0 ** rng.uniform(-20, 0, 60) * np.exp(1j * rng.uniform(-3.1, 3.1, 60)),   # small |z|
         rng.uniform(-6, 6, 30) + 1j * 10.0 ** rng.uniform(-12, -3, 30),               # near the real axis
         [1.73 + 0.0081j, 1e-4 + 1e-4j, 3 + 1e-4j, 1e-20 + 1e-20j, -1e-20 + 2e-20j, 0.5j, -0.5, 2.5 - 0.0j,
          complex(-0.0, 1.5), 20 + 3j, -30 - 2j, 700.5 + 0.3j, 711 + 1e-300j, 1e-300 + 711j]]
    return np.concatenate([np.asarray(v, np.complex128) for v in z])


@pytest.mark.parametrize("name", NAMES)
def test_complex128_matches_mpmath_eagerly_and_under_jit(name):
    z0 = points()
    want0 = reference(name, z0)
    f = getattr(xp, name)
    for got in (np.asarray(f(xp.asarray(z0))), np.asarray(jit(f)(xp.asarray(z0)))):
        z, want = z0, want0
        assert got.dtype == np.complex128
        for g, w in ((got.real, want.real), (got.imag, want.imag)):   # overflow only where the value does
            assert (np.isinf(g) == np.isinf(w)).all() and (g[np.isinf(w)] == w[np.isinf(w)]).all(), name
        fin = np.isfinite(want)
        assert fin.sum() > 200
        got, want, z = got[fin], want[fin], z[fin]
        # each part to a few ulps of |f(z)| (a part's relative error is the conditioning's business:
        # near a zero of a part it is as large as |f(z)| / |part|); under jit XLA's real cosh/sinh are
        # up to ~8 ulps off (cosh(30)), which the products inherit
        err = np.maximum(np.abs(got.real - want.real), np.abs(got.imag - want.imag)) / np.abs(want)
        assert err.max() < 5e-15, (name, z[np.argmax(err)], got[np.argmax(err)], want[np.argmax(err)])
        # and each part relatively where it is not much smaller than the whole
        for g, w in ((got.real, want.real), (got.imag, want.imag)):
            big = np.abs(w) > 1e-3 * np.abs(want)
            rel = np.abs(g - w)[big] / np.abs(w)[big]
            assert rel.max() < 1e-12, (name, z[big][np.argmax(rel)], g[big][np.argmax(rel)], w[big][np.argmax(rel)])


@pytest.mark.parametrize("name", NAMES)
def test_complex64_matches_mpmath(name):
    z = points()
    z = z[np.abs(z) < 80].astype(np.complex64)     # (float32 range)
    want = reference(name, z)
    f = getattr(xp, name)
    tiny = np.finfo(np.float32).tiny
    for got in (np.asarray(f(xp.asarray(z))), np.asarray(jit(f)(xp.asarray(z)))):
        assert got.dtype == np.complex64
        fin = np.isfinite(want) & (np.abs(want) < 1e38)
        err = np.maximum(np.abs(got.real - want.real), np.abs(got.imag - want.imag))[fin] / np.abs(want[fin])
        assert (err < 1e-6 + 4 * tiny / np.abs(want[fin])).all(), (name, z[fin][np.argmax(err)])


@pytest.mark.parametrize("name", NAMES)
def test_gradient_of_squared_magnitude_matches_finite_differences(name):
    """grad of sum |f(z)|^2 and of sum real(f(z)) with respect to the real and imaginary parts."""
    f = getattr(xp, name)
    rng = np.random.default_rng(11)
    re, im = rng.normal(size=4), rng.normal(size=4) * 0.7
    re[0], im[0] = 1e-3, 2e-3            # near 0, where expm1/log1p switch formulas
    for h in (lambda w: xp.sum(xp.abs(w) ** 2), lambda w: xp.sum(xp.real(w) + 0.5 * xp.imag(w))):
        F = lambda a, b: h(f(a + 1j * b))
        g = grad(F, argnums=(0, 1))(xp.asarray(re), xp.asarray(im))
        fd = [central_diff(lambda v: float(F(xp.asarray(v), xp.asarray(im))), re),
              central_diff(lambda v: float(F(xp.asarray(re), xp.asarray(v))), im)]
        for got, want in zip(g, fd):
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, atol=1e-7, err_msg=name)
