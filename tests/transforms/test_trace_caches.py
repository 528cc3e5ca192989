"""The memo tables that make staging cheap per equation (core.abstract_eval's cache of elementwise
avals, staging's memoized scalar-conversion folds and Python-scalar literals): a hit gives exactly the
jaxpr a miss gives, weak types, dtypes, Python types and signs of zero stay apart, failures are never
cached (the error comes anew), and every table is bounded."""
import math

import numpy as np
import pytest

import array_namespace as xp
from transforms import core, make_jaxpr, staging
from transforms.core import ShapedArray
from transforms.jaxpr import Literal
from transforms.primitives import elementwise as E
from transforms.staging import trace_to_jaxpr

F32_3 = ShapedArray((3,), np.float32)


def _clear():
    core._abstract_cache.clear()
    staging._fold_cache.clear()
    staging._py_literals.clear()
    staging._py_folds.clear()


def _literals(closed):
    return [a for e in closed.jaxpr.eqns for a in e.invars if type(a) is Literal]


def _fingerprint(closed):
    j = closed.jaxpr
    return (str(j), [v.aval for v in j.invars], [v.aval for e in j.eqns for v in e.outvars],
            [(type(a.val), a.val.tobytes(), a.aval) for a in _literals(closed)])


def _fn(x, y):
    z = x * 2.0 + y / 3 - xp.astype(x > 0.5, x.dtype) * 1.5
    w = xp.where(z < 1, -0.0, 0.0) + xp.exp(-x) * 1e-300
    return xp.sum(w * z ** 2) + xp.sum(xp.astype((x != x) & True, x.dtype))


@pytest.mark.parametrize("dtype", [xp.float32, xp.float64, xp.complex64])
def test_hit_and_miss_give_the_same_jaxpr(dtype):
    x, y = xp.ones(4, dtype=dtype), xp.ones((3, 4), dtype=dtype)
    fn = (lambda a, b: a * 2.0 + b / 3 - 1j) if dtype == xp.complex64 else _fn
    _clear()
    cold = make_jaxpr(fn)(x, y)
    warm = make_jaxpr(fn)(x, y)
    assert core._abstract_cache and staging._py_folds
    assert _fingerprint(cold) == _fingerprint(warm)
    _clear()
    assert _fingerprint(make_jaxpr(fn)(x, y)) == _fingerprint(cold)


def test_weak_types_and_dtypes_stay_apart():
    f64, f32 = ShapedArray((3,), np.float64), ShapedArray((3,), np.float32)
    weak = ShapedArray((3,), np.float64, weak_type=True)
    _clear()
    assert core.abstract_eval(E.add_p, [weak, weak], {}) == weak
    assert core.abstract_eval(E.add_p, [f64, f64], {}) == f64 and not core.abstract_eval(E.add_p, [f64, f64], {})[2]
    assert core.abstract_eval(E.add_p, [weak, weak], {})[2]
    assert core.abstract_eval(E.lt_p, [f32, f32], {}) == ShapedArray((3,), np.bool_)
    assert core.abstract_eval(E.add_p, [f32, f32], {}) == f32
    cv = lambda dt, w: core.abstract_eval(E.convert_element_type_p, [f64], {"new_dtype": np.dtype(dt), "weak_type": w})
    assert cv(np.float32, True) == ShapedArray((3,), np.float32, True)
    assert cv(np.float32, False) == ShapedArray((3,), np.float32, False) and not cv(np.float32, False)[2]
    assert cv(np.int32, False) == ShapedArray((3,), np.int32)
    # a weak operand and a strong one of the same dtype under jit, then the other way round
    x = xp.ones(3, dtype=xp.float32)
    assert make_jaxpr(lambda a: a + 1.0)(x).out_avals == [ShapedArray((3,), np.float32)]
    assert make_jaxpr(lambda a: xp.asarray(1.0) + 1.0)(x).out_avals == [ShapedArray((), np.float64)]


def test_python_scalar_literals_keep_their_type_and_sign():
    _clear()
    for _ in range(2):   # miss, then hit
        lits = {repr(v): staging._py_literal(v) for v in (True, 1, 1.0, 0.0, -0.0, 1j, complex(0.0, -0.0), math.inf)}
        assert lits["True"].aval == ShapedArray((), np.bool_, True) and lits["True"].val.dtype == np.bool_
        assert lits["1"].aval == ShapedArray((), np.int64, True) and lits["1"].val.dtype == np.int64
        assert lits["1.0"].aval == ShapedArray((), np.float64, True)
        assert not np.signbit(lits["0.0"].val) and np.signbit(lits["-0.0"].val)
        assert lits["1j"].aval.dtype == np.complex128
        assert np.signbit(lits["-0j"].val.imag) if "-0j" in lits else np.signbit(lits[repr(complex(0.0, -0.0))].val.imag)
        assert lits["inf"].val == np.inf
    nan = staging._py_literal(math.nan)
    assert np.isnan(nan.val) and len([k for k in staging._py_literals if k[0] is float and k[1] != k[1]]) == 0


def test_folded_conversions_keep_the_sign_of_zero_and_the_target_dtype():
    x32 = xp.ones(3, dtype=xp.float32)
    for _ in range(2):
        for z, neg in ((0.0, False), (-0.0, True)):
            (lit,) = _literals(make_jaxpr(lambda a: a * z)(x32))
            assert lit.aval == ShapedArray((), np.float32, True) and lit.val.dtype == np.float32
            assert bool(np.signbit(lit.val)) is neg
        (lit,) = _literals(make_jaxpr(lambda a: a * 3)(xp.ones(3, dtype=xp.int16)))
        assert lit.aval == ShapedArray((), np.int16, True) and lit.val.dtype == np.int16 and lit.val == 3
        # NumPy scalars' literals, converted by the engine itself (folded by their bit pattern)
        for z, neg in ((np.float64(0.0), False), (np.float64(-0.0), True)):
            closed = trace_to_jaxpr(lambda a: [E.mul(a, E.convert_element_type(z, np.float32))], [F32_3])
            (lit,) = _literals(closed)
            assert lit.aval == ShapedArray((), np.float32) and lit.val.dtype == np.float32
            assert bool(np.signbit(lit.val)) is neg
        closed = trace_to_jaxpr(lambda a: [E.mul(a, E.convert_element_type(np.float64(2.5), np.float32, True))], [F32_3])
        assert [(lit.val, lit.aval) for lit in _literals(closed)] == [(2.5, ShapedArray((), np.float32, True))]


def test_nan_and_signed_zero_conversions_are_memoized_apart():
    # NaN equals nothing, so it is keyed by its bits: a NaN constant in a body is folded once, not per trace
    x32 = xp.ones(3, dtype=xp.float32)
    _clear()
    for _ in range(2):
        (lit,) = _literals(make_jaxpr(lambda a: a * float("nan"))(x32))
        assert np.isnan(lit.val) and lit.aval == ShapedArray((), np.float32, True)
        (lit,) = _literals(make_jaxpr(lambda a: a + complex(0.0, -0.0))(xp.ones(3, dtype=xp.complex64)))
        assert lit.val.dtype == np.complex64 and np.signbit(lit.val.imag)
        (lit,) = _literals(make_jaxpr(lambda a: a + complex(0.0, 0.0))(xp.ones(3, dtype=xp.complex64)))
        assert not np.signbit(lit.val.imag)
    assert any(k[1] is float and k[2] == staging._scalar_key(math.nan, float) for k in staging._py_folds)


def test_failures_are_not_cached():
    f64, f32 = ShapedArray((3,), np.float64), ShapedArray((3,), np.float32)
    for _ in range(2):
        with pytest.raises(TypeError, match="elementwise operands must share a dtype"):
            core.abstract_eval(E.add_p, [f64, f32], {})
        with pytest.raises(ValueError, match="cannot be broadcast together"):
            core.abstract_eval(E.add_p, [f64, ShapedArray((4,), np.float64)], {})
        with pytest.raises(OverflowError):
            staging._py_literal(2 ** 70)
    # (the failing signatures only: another test may have cached a good add of float32s)
    assert (E.add_p, f64, f32) not in core._abstract_cache
    assert (E.add_p, f64, ShapedArray((4,), np.float64)) not in core._abstract_cache
    with pytest.raises(OverflowError, match="add: Python int"):   # (an int array: 2**70 fits no int64)
        make_jaxpr(lambda a: a + 2 ** 70)(xp.ones(2, dtype=xp.int64))
    make_jaxpr(lambda a: a + 2 ** 70)(xp.ones(2))   # (a float array: the float 2**70, issue 24)


def test_a_new_memory_limit_clears_the_cached_avals():
    big = ShapedArray((13,), np.float64)
    assert core.abstract_eval(E.add_p, [big, big], {}) == big   # cached under the machine's limit
    old = core._memory_limit[0]
    try:
        core.set_memory_limit(100)
        with pytest.raises(MemoryError, match=r"add: .* needs 104 bytes"):
            core.abstract_eval(E.add_p, [big, big], {})
    finally:
        core.set_memory_limit(old)
    assert core.abstract_eval(E.add_p, [big, big], {}) == big


def test_the_tables_are_bounded(monkeypatch):
    monkeypatch.setattr(core, "_ABSTRACT_CACHE_MAX", 8)
    monkeypatch.setattr(staging, "_FOLD_CACHE_MAX", 8)
    _clear()
    for n in range(30):
        a = ShapedArray((n,), np.float64)
        assert core.abstract_eval(E.mul_p, [a, a], {}) == a
        staging._py_literal(float(n) + 0.5)
        closed = make_jaxpr(lambda x: x * np.float32(n + 0.25))(xp.ones(2, dtype=xp.float32))
        assert [float(lit.val) for lit in _literals(closed)] == [n + 0.25]
        closed = make_jaxpr(lambda x: x * (n + 0.75))(xp.ones(2, dtype=xp.float32))
        assert [float(lit.val) for lit in _literals(closed)] == [n + 0.75]
        assert len(core._abstract_cache) <= 8 and len(staging._py_literals) <= 8 and len(staging._fold_cache) <= 8
        assert len(staging._py_folds) <= 8
    _clear()
