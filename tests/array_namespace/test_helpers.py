"""Scalar operands of the namespace's binary functions (array_namespace/_helpers.py `binary`).

Oracles: NumPy for values, array_api_strict's rules (the standard, 2024.12+) for which
scalar/array combinations are allowed and what dtype they give.
"""
import numpy as np
import pytest

import array_namespace as xp
from finite_diff import central_diff
from transforms import grad, jit, vmap

F32 = np.array([1.5, -2.0, 0.0, 3.25], np.float32)
F64 = np.array([1.5, -2.0, 0.0, 3.25], np.float64)

# ----------------------------------------------------------------- complex scalar + real float array
# (function, NumPy reference); the standard defines these for complex operands
COMPLEX_OK = [
    ("add", np.add), ("subtract", np.subtract), ("multiply", np.multiply), ("divide", np.divide),
    ("pow", np.power), ("equal", np.equal), ("not_equal", np.not_equal),
]
# real-only functions: a complex scalar makes the operands complex, which they refuse
COMPLEX_REFUSED = ["maximum", "minimum", "atan2", "less", "less_equal", "greater", "greater_equal",
                   "remainder", "floor_divide", "copysign", "hypot", "logaddexp", "nextafter"]


@pytest.mark.parametrize("npdt,want", [(np.float32, xp.complex64), (np.float64, xp.complex128)])
@pytest.mark.parametrize("fname,ref", COMPLEX_OK)
@pytest.mark.parametrize("scalar", [1j, 2.5 - 0.5j])
def test_complex_scalar_with_real_float_array(fname, ref, npdt, want, scalar):
    a = F32 if npdt == np.float32 else F64
    a = a + 1 if fname in ("divide", "pow") else a   # no 0 ** complex / 0-division NaN noise
    x = xp.asarray(a)
    cdt = np.complex64 if npdt == np.float32 else np.complex128
    for got, expect in ((getattr(xp, fname)(x, scalar), ref(a.astype(cdt), cdt(scalar))),
                        (getattr(xp, fname)(scalar, x), ref(cdt(scalar), a.astype(cdt)))):
        assert got.dtype == (xp.bool if fname in ("equal", "not_equal") else want)
        np.testing.assert_allclose(np.asarray(got), expect, rtol=2e-6 if npdt == np.float32 else 1e-14)


@pytest.mark.parametrize("npdt,want", [(np.float32, xp.complex64), (np.float64, xp.complex128)])
def test_complex_scalar_operators(npdt, want):
    a = F32 if npdt == np.float32 else F64
    x = xp.asarray(a)
    cdt = np.complex64 if npdt == np.float32 else np.complex128
    for got, expect in ((x + 1j, a + cdt(1j)), (1j + x, cdt(1j) + a), (x * 2j, a * cdt(2j)), (2j * x, cdt(2j) * a),
                        (x - (1 - 1j), a - cdt(1 - 1j)), ((1 - 1j) - x, cdt(1 - 1j) - a),
                        ((x + 1) / 1j, (a + 1) / cdt(1j)), (x ** (0.5 + 0j), a.astype(cdt) ** cdt(0.5))):
        assert got.dtype == want
        np.testing.assert_allclose(np.asarray(got), expect, rtol=2e-6 if npdt == np.float32 else 1e-14)
    assert (x == 1.5 + 0j).dtype == xp.bool
    np.testing.assert_array_equal(np.asarray(x == 1.5 + 0j), a == 1.5)


def test_complex_scalar_in_where():
    a = F32
    x = xp.asarray(a)
    got = xp.where(x > 0, x, 1j)
    assert got.dtype == xp.complex64
    np.testing.assert_array_equal(np.asarray(got), np.where(a > 0, a, np.complex64(1j)))
    got = xp.where(x > 0, 2j, x)
    assert got.dtype == xp.complex64
    np.testing.assert_array_equal(np.asarray(got), np.where(a > 0, np.complex64(2j), a))


@pytest.mark.parametrize("fname", COMPLEX_REFUSED)
def test_complex_scalar_refused_by_real_only_functions(fname):
    with pytest.raises(TypeError, match=fname):
        getattr(xp, fname)(xp.asarray(F32), 1j)


@pytest.mark.parametrize("dtype", [xp.int8, xp.int64, xp.uint32, xp.bool])
def test_complex_scalar_with_integer_or_bool_array_is_an_error(dtype):
    # as array_api_strict: "Python complex scalars can only be promoted with floating-point arrays"
    x = xp.ones(3, dtype=dtype)
    for f in (lambda: x + 1j, lambda: 1j * x, lambda: xp.multiply(x, 2j), lambda: xp.where(x == x, x, 1j)):
        with pytest.raises(TypeError, match="complex"):
            f()


def test_complex_scalar_keeps_complex_array_dtype():
    x = xp.ones(2, dtype=xp.complex64)
    assert (x + 1j).dtype == xp.complex64 and (x * 1).dtype == xp.complex64 and (x * 2.0).dtype == xp.complex64


def test_in_place_complex_scalar_on_real_array_raises():
    x = xp.asarray(F64)
    with pytest.raises(TypeError, match="dtype"):
        x += 1j
    np.testing.assert_array_equal(np.asarray(x), F64)   # unchanged


def test_weak_complex_array_with_real_float_array():
    # a weakly typed complex 0-d array (how the engine carries a Python complex) behaves as the scalar
    from array_namespace._helpers import weak_scalar, wrap
    weak = wrap(weak_scalar(1 + 2j, xp.complex128))
    assert weak._v.aval.weak_type
    x = xp.asarray(F32)
    for got in (x * weak, weak * x, xp.add(x, weak)):
        assert got.dtype == xp.complex64
    np.testing.assert_allclose(np.asarray(x * weak), F32 * np.complex64(1 + 2j), rtol=2e-6)
    with pytest.raises(TypeError, match="complex"):
        xp.ones(2, dtype=xp.int32) + weak
    assert (xp.asarray(F64) * weak).dtype == xp.complex128
    assert (x + xp.asarray(1j)).dtype == xp.complex128   # a strong complex128 array promotes as the table says


def test_complex_scalar_under_jit_vmap_grad():
    x = xp.asarray(F32)
    for f in (lambda v: v + 1j, lambda v: (2 - 1j) * v, lambda v: xp.multiply(v, 3j), lambda v: xp.where(v > 0, v, 1j)):
        eager = f(x)
        jitted = jit(f)(x)
        assert jitted.dtype == eager.dtype == xp.complex64
        np.testing.assert_array_equal(np.asarray(jitted), np.asarray(eager))
        vm = vmap(f)(x)
        loop = np.stack([np.asarray(f(x[i])) for i in range(x.shape[0])])
        np.testing.assert_array_equal(np.asarray(vm), loop)

    def h(v):
        z = v * (1 + 2j) + 0.5j
        return xp.sum(xp.real(z * z) + xp.imag(v * (3 + 5j)))

    a = F64
    g = grad(h)(xp.asarray(a))
    fd = central_diff(lambda v: float(h(xp.asarray(v))), a)
    np.testing.assert_allclose(np.asarray(g), fd, rtol=1e-6, atol=1e-6)
