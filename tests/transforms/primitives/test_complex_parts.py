"""The `complex` primitive (complex from real parts, transforms/primitives/elementwise.py): exact values on
both paths (eager host kernel, XLA's ComplexOp) against NumPy, its derivatives against finite differences
(first and second order), vmap against a Python loop, jit == eager.

Oracles: NumPy assembling re + im*1j part by part (so inf, NaN and signed zeros stay as they are, which
re + 1j*im would not: 1j*inf has a NaN real part); central differences of NumPy functions of the parts.
"""
import numpy as np
import pytest

import array_namespace as xp
from array_namespace._helpers import wrap
from transforms import grad, jit, jvp, vjp, vmap
from transforms.core import bind
from transforms.primitives import elementwise as E
from xla import host, runtime

from finite_diff import central_diff_args, second_diff_hvp

DIRECT = {"complex": E.complex_p}   # bound directly against its NumPy oracle here (test_vocabulary reads it)

SPECIAL = np.array([0.0, -0.0, 1.5, -2.25, np.inf, -np.inf, np.nan, 1e-310, -1e30, 3.0])


def cplx(re, im):
    return wrap(bind(E.complex_p, re._v, im._v))


def _want(re, im, dt):
    out = np.empty(np.broadcast_shapes(re.shape, im.shape), dt)
    out.real, out.imag = re, im
    return out


def _same_bits(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype, got.shape, want.shape)
    for g, w in ((got.real, want.real), (got.imag, want.imag)):
        assert ((g == w) & (np.signbit(g) == np.signbit(w)) | (np.isnan(g) & np.isnan(w))).all(), (got, want)


@pytest.mark.parametrize("ft,ct", [(np.float32, np.complex64), (np.float64, np.complex128)])
def test_values_are_the_parts_exactly_eager_and_jit(ft, ct):
    re = SPECIAL.astype(ft)[:, None]
    im = SPECIAL.astype(ft)[None, :]
    want = _want(np.broadcast_to(re, (10, 10)), np.broadcast_to(im, (10, 10)), ct)
    a, b = xp.asarray(re), xp.asarray(im)
    _same_bits(np.asarray(cplx(a, b)), want)          # broadcasting (10, 1) with (1, 10)
    _same_bits(np.asarray(jit(cplx)(a, b)), want)
    s = xp.asarray(np.array(-0.0, ft))                 # a 0-d operand
    _same_bits(np.asarray(cplx(xp.asarray(SPECIAL.astype(ft)), s)), _want(SPECIAL.astype(ft), np.array(-0.0, ft), ct))


def test_eager_on_new_shapes_compiles_nothing(fresh_staged):
    if host.MODE == "xla":
        pytest.skip("host kernels switched off (ARRAY_NAMESPACE_EAGER=xla)")
    for n in (3, 5, 9):
        a, b = xp.asarray(np.linspace(-1, 1, n)), xp.asarray(np.linspace(2, 3, n))
        before = runtime.compile_calls[0]
        out = cplx(a, b)
        assert runtime.compile_calls[0] == before
        np.testing.assert_array_equal(np.asarray(out), np.linspace(-1, 1, n) + 1j * np.linspace(2, 3, n))


def test_rejects_other_dtypes():
    with pytest.raises(TypeError, match="complex"):
        cplx(xp.asarray([1, 2]), xp.asarray([3, 4]))
    with pytest.raises(TypeError, match="complex"):
        cplx(xp.asarray([1.0], dtype=xp.float32), xp.asarray([3.0]))


_A = np.array([0.3 - 1.2j, 2.0 + 0.5j, -0.7 + 0.1j])


def _f(re, im):   # a real scalar of a holomorphic and a non-holomorphic use of the parts
    z = cplx(re, im)
    return xp.sum(xp.real(z * z * xp.asarray(_A)) + xp.abs(z) ** 2 * xp.imag(z))


def _f_np(re, im):
    z = re + 1j * im
    return float(np.sum(np.real(z * z * _A) + np.abs(z) ** 2 * z.imag))


def test_grad_and_vjp_match_finite_differences():
    rng = np.random.default_rng(0)
    re, im = rng.normal(size=3), rng.normal(size=3)
    want = central_diff_args(_f_np, [re, im])
    got = grad(_f, argnums=(0, 1))(xp.asarray(re), xp.asarray(im))
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-6, atol=1e-7)
    # vjp of the complex output itself: the cotangent c gives re Re(c) and im -Im(c) (pairing Re(c * z))
    out, pull = vjp(cplx, xp.asarray(re), xp.asarray(im))
    c = rng.normal(size=3) + 1j * rng.normal(size=3)
    gre, gim = pull(xp.asarray(c))
    np.testing.assert_allclose(np.asarray(gre), c.real, rtol=0, atol=0)
    np.testing.assert_allclose(np.asarray(gim), -c.imag, rtol=0, atol=0)


def test_jvp_is_the_complex_of_the_tangents_with_broadcasting():
    re, im = xp.asarray(np.array([1.0, -2.0, 0.5])), xp.asarray(np.array(4.0))
    tre, tim = xp.asarray(np.array([0.1, 0.2, 0.3])), xp.asarray(np.array(-1.5))
    out, tan = jvp(cplx, (re, im), (tre, tim))
    np.testing.assert_array_equal(np.asarray(out), np.array([1.0, -2.0, 0.5]) + 4j)
    np.testing.assert_array_equal(np.asarray(tan), np.array([0.1, 0.2, 0.3]) - 1.5j)
    # a tangent on the 0-d part only still has the output's shape
    _, tan = jvp(lambda b: cplx(re, b), (im,), (tim,))
    np.testing.assert_array_equal(np.asarray(tan), np.full(3, -1.5j))


def test_second_order_matches_second_differences():
    rng = np.random.default_rng(1)
    re, im = rng.normal(size=3), rng.normal(size=3)
    tre, tim = rng.normal(size=3), rng.normal(size=3)
    g = lambda a, b: grad(_f, argnums=(0, 1))(a, b)
    _, hv = jvp(g, (xp.asarray(re), xp.asarray(im)), (xp.asarray(tre), xp.asarray(tim)))
    want = second_diff_hvp(_f_np, [re, im], [tre, tim])
    for h, w in zip(hv, want):
        np.testing.assert_allclose(np.asarray(h), w, rtol=1e-5, atol=1e-6)


def test_vmap_matches_a_loop_and_jit_matches_eager():
    rng = np.random.default_rng(2)
    re, im = rng.normal(size=(4, 3)), rng.normal(size=(3, 4))
    got = np.asarray(vmap(cplx, in_axes=(0, 1))(xp.asarray(re), xp.asarray(im)))
    want = np.stack([np.asarray(cplx(xp.asarray(re[i]), xp.asarray(im[:, i]))) for i in range(4)])
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.asarray(vmap(cplx, in_axes=(0, None))(xp.asarray(re), xp.asarray(im[:, 0]))),
                                  re + 1j * im[:, 0])
    a, b = xp.asarray(re), xp.asarray(im.T)
    np.testing.assert_array_equal(np.asarray(jit(_f)(a, b)), np.asarray(_f(a, b)))
