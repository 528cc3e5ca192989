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


# ------------------------------------------------------ NumPy scalars where Python numbers are expected
A2 = np.arange(12.0).reshape(3, 4)
V = np.array([3.0, -1.0, 2.5, 0.5, -4.0])
I64, I32, F = np.int64, np.int32, np.float64

# (label, call with NumPy scalars, the same call with Python scalars, NumPy's answer)
NP_SCALAR_CASES = [
    ("zeros shape", lambda: xp.zeros(I64(3)), lambda: xp.zeros(3), np.zeros(3)),
    ("ones shape tuple", lambda: xp.ones((I64(2), I32(3))), lambda: xp.ones((2, 3)), np.ones((2, 3))),
    ("full fill", lambda: xp.full((2,), F(2.5)), lambda: xp.full((2,), 2.5), np.full(2, 2.5)),
    ("full int fill", lambda: xp.full(I64(2), I64(7)), lambda: xp.full(2, 7), np.full(2, 7)),
    ("full bool fill", lambda: xp.full(2, np.bool_(True)), lambda: xp.full(2, True), np.full(2, True)),
    ("full complex fill", lambda: xp.full(2, np.complex128(1 + 2j)), lambda: xp.full(2, 1 + 2j),
     np.full(2, 1 + 2j)),
    ("eye n k", lambda: xp.eye(I64(3), I64(4), k=I64(1)), lambda: xp.eye(3, 4, k=1), np.eye(3, 4, k=1)),
    ("tril k", lambda: xp.tril(xp.asarray(A2), k=I64(-1)), lambda: xp.tril(xp.asarray(A2), k=-1),
     np.tril(A2, k=-1)),
    ("triu k", lambda: xp.triu(xp.asarray(A2), k=I32(1)), lambda: xp.triu(xp.asarray(A2), k=1), np.triu(A2, k=1)),
    ("arange", lambda: xp.arange(I64(1), I64(7), I64(2)), lambda: xp.arange(1, 7, 2), np.arange(1, 7, 2)),
    ("arange float", lambda: xp.arange(F(0.5), I64(3)), lambda: xp.arange(0.5, 3), np.arange(0.5, 3)),
    ("linspace", lambda: xp.linspace(F(0), np.float32(1), I64(5)), lambda: xp.linspace(0.0, 1.0, 5),
     np.linspace(0, 1, 5)),
    ("reshape", lambda: xp.reshape(xp.asarray(A2), (I64(4), I64(-1))), lambda: xp.reshape(xp.asarray(A2), (4, -1)),
     A2.reshape(4, -1)),
    ("broadcast_to", lambda: xp.broadcast_to(xp.asarray(V), (I64(2), I64(5))),
     lambda: xp.broadcast_to(xp.asarray(V), (2, 5)), np.broadcast_to(V, (2, 5))),
    ("expand_dims", lambda: xp.expand_dims(xp.asarray(V), axis=I64(1)), lambda: xp.expand_dims(xp.asarray(V), axis=1),
     np.expand_dims(V, 1)),
    ("permute_dims", lambda: xp.permute_dims(xp.asarray(A2), (I64(1), I64(0))),
     lambda: xp.permute_dims(xp.asarray(A2), (1, 0)), A2.T),
    ("moveaxis", lambda: xp.moveaxis(xp.asarray(A2), I64(0), I64(-1)), lambda: xp.moveaxis(xp.asarray(A2), 0, -1),
     np.moveaxis(A2, 0, -1)),
    ("roll", lambda: xp.roll(xp.asarray(V), I64(2)), lambda: xp.roll(xp.asarray(V), 2), np.roll(V, 2)),
    ("roll axis", lambda: xp.roll(xp.asarray(A2), I64(-1), axis=I64(1)),
     lambda: xp.roll(xp.asarray(A2), -1, axis=1), np.roll(A2, -1, axis=1)),
    ("tile", lambda: xp.tile(xp.asarray(V), (I64(2), I32(1))), lambda: xp.tile(xp.asarray(V), (2, 1)),
     np.tile(V, (2, 1))),
    ("repeat", lambda: xp.repeat(xp.asarray(V), I64(2)), lambda: xp.repeat(xp.asarray(V), 2), np.repeat(V, 2)),
    ("flip", lambda: xp.flip(xp.asarray(A2), axis=I64(1)), lambda: xp.flip(xp.asarray(A2), axis=1),
     np.flip(A2, 1)),
    ("squeeze", lambda: xp.squeeze(xp.ones((1, 3)), axis=I64(0)), lambda: xp.squeeze(xp.ones((1, 3)), axis=0),
     np.ones(3)),
    ("concat", lambda: xp.concat([xp.asarray(A2), xp.asarray(A2)], axis=I64(1)),
     lambda: xp.concat([xp.asarray(A2), xp.asarray(A2)], axis=1), np.concatenate([A2, A2], 1)),
    ("stack", lambda: xp.stack([xp.asarray(V), xp.asarray(V)], axis=I64(1)),
     lambda: xp.stack([xp.asarray(V), xp.asarray(V)], axis=1), np.stack([V, V], 1)),
    ("sum axis", lambda: xp.sum(xp.asarray(A2), axis=I64(0)), lambda: xp.sum(xp.asarray(A2), axis=0), A2.sum(0)),
    ("mean axes", lambda: xp.mean(xp.asarray(A2), axis=(I64(0), I64(1))), lambda: xp.mean(xp.asarray(A2), axis=(0, 1)),
     A2.mean()),
    ("max axis", lambda: xp.max(xp.asarray(A2), axis=I32(-1)), lambda: xp.max(xp.asarray(A2), axis=-1), A2.max(-1)),
    ("var correction", lambda: xp.var(xp.asarray(V), correction=I64(1)), lambda: xp.var(xp.asarray(V), correction=1),
     np.var(V, ddof=1)),
    ("std correction", lambda: xp.std(xp.asarray(V), correction=F(1.5)),
     lambda: xp.std(xp.asarray(V), correction=1.5), np.std(V, ddof=1.5)),
    ("argmax axis", lambda: xp.argmax(xp.asarray(A2), axis=I64(1)), lambda: xp.argmax(xp.asarray(A2), axis=1),
     A2.argmax(1)),
    ("sort axis", lambda: xp.sort(xp.asarray(A2), axis=I64(0)), lambda: xp.sort(xp.asarray(A2), axis=0),
     np.sort(A2, 0)),
    ("argsort axis", lambda: xp.argsort(xp.asarray(V), axis=I64(0)), lambda: xp.argsort(xp.asarray(V), axis=0),
     np.argsort(V, kind="stable")),
    ("cumulative_sum", lambda: xp.cumulative_sum(xp.asarray(A2), axis=I64(1)),
     lambda: xp.cumulative_sum(xp.asarray(A2), axis=1), np.cumsum(A2, 1)),
    ("diff n", lambda: xp.diff(xp.asarray(V), n=I64(2)), lambda: xp.diff(xp.asarray(V), n=2), np.diff(V, n=2)),
    ("clip", lambda: xp.clip(xp.asarray(V), F(-1.0), F(2.0)), lambda: xp.clip(xp.asarray(V), -1.0, 2.0),
     np.clip(V, -1, 2)),
    ("clip int", lambda: xp.clip(xp.asarray([1, 5, 9]), I64(2), I64(6)), lambda: xp.clip(xp.asarray([1, 5, 9]), 2, 6),
     np.clip([1, 5, 9], 2, 6)),
    ("add", lambda: xp.add(xp.asarray(V), F(1.5)), lambda: xp.add(xp.asarray(V), 1.5), V + 1.5),
    ("multiply left", lambda: xp.multiply(I64(3), xp.asarray(V)), lambda: xp.multiply(3, xp.asarray(V)), 3 * V),
    ("where", lambda: xp.where(xp.asarray(V) > 0, xp.asarray(V), F(0.0)),
     lambda: xp.where(xp.asarray(V) > 0, xp.asarray(V), 0.0), np.where(V > 0, V, 0.0)),
    ("where both", lambda: xp.where(xp.asarray(V) > 0, F(1.0), F(-1.0)),
     lambda: xp.where(xp.asarray(V) > 0, 1.0, -1.0), np.where(V > 0, 1.0, -1.0)),
    ("sin of a NumPy scalar", lambda: xp.sin(F(0.5)), lambda: xp.sin(0.5), np.sin(0.5)),
    ("vector_norm ord", lambda: xp.linalg.vector_norm(xp.asarray(V), ord=I64(3)),
     lambda: xp.linalg.vector_norm(xp.asarray(V), ord=3), np.linalg.norm(V, 3)),
    ("vector_norm float ord", lambda: xp.linalg.vector_norm(xp.asarray(V), ord=F(np.inf), axis=I64(0)),
     lambda: xp.linalg.vector_norm(xp.asarray(V), ord=np.inf, axis=0), np.linalg.norm(V, np.inf)),
    ("matrix_norm ord", lambda: xp.linalg.matrix_norm(xp.asarray(A2), ord=I64(1)),
     lambda: xp.linalg.matrix_norm(xp.asarray(A2), ord=1), np.linalg.norm(A2, 1)),
    ("matrix_power n", lambda: xp.linalg.matrix_power(xp.asarray(A2[:3, :3]), I64(3)),
     lambda: xp.linalg.matrix_power(xp.asarray(A2[:3, :3]), 3), np.linalg.matrix_power(A2[:3, :3], 3)),
    ("diagonal offset", lambda: xp.linalg.diagonal(xp.asarray(A2), offset=I64(1)),
     lambda: xp.linalg.diagonal(xp.asarray(A2), offset=1), np.diagonal(A2, 1)),
    ("matrix_rank rtol", lambda: xp.linalg.matrix_rank(xp.asarray(A2), rtol=F(1e-8)),
     lambda: xp.linalg.matrix_rank(xp.asarray(A2), rtol=1e-8), np.linalg.matrix_rank(A2, rtol=1e-8)),
    ("cross axis", lambda: xp.linalg.cross(xp.asarray(A2[:, :3]), xp.asarray(A2[::-1, :3]), axis=I64(-1)),
     lambda: xp.linalg.cross(xp.asarray(A2[:, :3]), xp.asarray(A2[::-1, :3]), axis=-1),
     np.cross(A2[:, :3], A2[::-1, :3])),
]


@pytest.mark.parametrize("label,with_np,with_py,ref", NP_SCALAR_CASES, ids=[c[0] for c in NP_SCALAR_CASES])
def test_numpy_scalars_are_accepted_as_python_numbers(label, with_np, with_py, ref):
    got, same = with_np(), with_py()
    assert got.dtype == same.dtype and got.shape == same.shape
    np.testing.assert_array_equal(np.asarray(got), np.asarray(same))
    np.testing.assert_allclose(np.asarray(got), ref, rtol=1e-12, atol=1e-12)


def test_numpy_scalar_operands_are_weak():
    f32 = xp.ones(3, dtype=xp.float32)
    assert xp.add(f32, np.float64(2.0)).dtype == xp.float32          # weak, as the Python float 2.0
    assert xp.multiply(np.float64(2.0), f32).dtype == xp.float32
    assert xp.where(f32 > 0, f32, np.float64(0)).dtype == xp.float32
    assert xp.add(xp.ones(3, dtype=xp.int8), np.int64(3)).dtype == xp.int8
    assert xp.add(f32, np.complex128(1j)).dtype == xp.complex64
    assert xp.logical_and(xp.asarray([True, False]), np.bool_(True)).dtype == xp.bool
    # ... and never loosen strict promotion
    with pytest.raises(TypeError):
        xp.add(xp.ones(3, dtype=xp.int32), np.float64(1.5))
    with pytest.raises(TypeError):
        xp.add(xp.ones(3), np.bool_(True))
    with pytest.raises(OverflowError):
        xp.add(xp.ones(3, dtype=xp.int8), np.int64(300))
    with pytest.raises(TypeError):
        xp.add(xp.ones(3), "1.0")


@pytest.mark.parametrize("bad", [np.float64(1.0), 1.0, np.bool_(True), True, "1"])
def test_integer_arguments_still_refuse_non_integers(bad):
    x = xp.asarray(A2)
    calls = [lambda: xp.sum(x, axis=bad), lambda: xp.zeros((bad, 2)), lambda: xp.reshape(x, (bad, 12)),
             lambda: xp.roll(x, bad, axis=0), lambda: xp.diff(x, n=bad), lambda: xp.sort(x, axis=bad),
             lambda: xp.eye(3, k=bad), lambda: xp.linalg.matrix_power(xp.asarray(A2[:3, :3]), bad),
             lambda: xp.linspace(0.0, 1.0, bad), lambda: xp.expand_dims(x, axis=bad)]
    for call in calls:
        with pytest.raises(TypeError):
            call()


def test_numpy_scalar_arguments_under_jit():
    x = xp.asarray(A2)
    f = jit(lambda v: xp.sum(xp.roll(v, np.int64(1), axis=np.int64(1)), axis=np.int64(0)) * np.float64(2))
    np.testing.assert_allclose(np.asarray(f(x)), np.roll(A2, 1, axis=1).sum(0) * 2)
    g = jit(lambda v: xp.reshape(v, (np.int64(2), np.int64(6))) + xp.full((np.int64(2), 6), np.float64(1)))
    np.testing.assert_allclose(np.asarray(g(x)), A2.reshape(2, 6) + 1)


def test_axis_errors_use_numpys_words():
    """scipy's tests match NumPy's AxisError text ('axis 10 is out of bounds for array of dimension 1')."""
    import array_namespace as xp
    for f in (lambda: xp.sum(xp.ones(3), axis=10), lambda: xp.moveaxis(xp.ones(3), 10, 0),
              lambda: xp.flip(xp.ones(3), axis=(10,))):
        with pytest.raises(IndexError, match="axis 10 is out of bounds for array of dimension 1"):
            f()


def test_broadcast_check_refuses_after_a_pair_that_broadcast():
    """check_broadcast remembers pairs that broadcast: a pair that does not still raises ValueError naming both
    arguments, before and after the good pair, and the good pair still gives NumPy's values."""
    a, row, bad = np.arange(12.0).reshape(3, 4), np.arange(4.0), np.arange(3.0)
    x, r, b = xp.asarray(a), xp.asarray(row), xp.asarray(bad)
    for _ in range(3):
        np.testing.assert_array_equal(np.asarray(x - r), a - row)
        with pytest.raises(ValueError, match="subtract: x1 of shape \\(3, 4\\) and x2 of shape \\(3,\\)"):
            x - b


def test_int_scalar_bounds_checked_on_every_call():
    """An int scalar next to an int array is checked against the dtype's bounds on every call (from a table),
    after in-range calls too."""
    x = xp.asarray(np.array([1, 2], dtype=np.int8))
    for _ in range(3):
        np.testing.assert_array_equal(np.asarray(x + 127), np.array([1, 2], np.int8) + np.int8(127))
        with pytest.raises(OverflowError, match="128 is out of bounds for int8"):
            x + 128
        with pytest.raises(OverflowError, match="-129 is out of bounds for int8"):
            x + (-129)
    u = xp.asarray(np.array([1], dtype=np.uint64))
    np.testing.assert_array_equal(np.asarray(u + (2**64 - 2)), np.array([2**64 - 1], np.uint64))
    with pytest.raises(OverflowError):
        u + 2**64
