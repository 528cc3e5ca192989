"""jit_returned.py: which float() results are returned untouched, and what jit does with them.

The bytecode reading is checked on one call pattern per case (a stand-in `__float__` asks it, with a stand-in
for jit's flat function as the stop frame; off CPython 3.11 nothing is read: every answer is no); the jit cases check each call's value against NumPy, its Python
type against eager's, and the traces: one where the number is only returned, a variant per value where it is
used too (a stale constant would be a wrong value).
"""
import contextlib
import functools
import sys
import types

import numpy as np
import pytest

import array_namespace as xp
from transforms import ConcretizationTypeError, jit, make_jaxpr, vmap
from transforms.jit_returned import ON, returned_directly


class _Probe:
    """float(_Probe()) records whether its caller's result is returned untouched up to `_stop`."""
    seen = []

    def __float__(self):
        _Probe.seen.append(returned_directly(sys._getframe(1), (_stop.__code__,)))
        return 1.5


def _stop(f, x):
    out = f(x)
    return out


def _with(fn):
    def inner(*a, **k):
        with contextlib.nullcontext():
            return fn(*a, **k)
    return inner


def _tuple(x): return float(x), x
def _dict_value(x): return {"a": float(x), "b": 2}
def _list_of_two(x): return [float(x), float(x)]
def _plain(x): return float(x)


def _in_with(x):
    with contextlib.nullcontext():
        return float(x)


def _in_finally(x):
    try:
        return float(x)
    finally:
        _Probe.seen.append("finally")


def _stored(x):
    s = float(x)
    return s


def _added(x): return float(x) + 1
def _dict_key(x): return {float(x): 1}
def _max(x): return max(float(x), 0.0)
def _compared(x): return float(x) > 0
def _through_c(x): return sum(map(float, [x]))


float_ = float


def _renamed(x): return float_(x)   # (a global bound to the builtin: still float)


def _kw(x, k=0): return float(x)


_mod = types.ModuleType("_mod")   # (a module's functions: `metrics.r2_score(y, p)`)
_mod.plain, _mod.kw = _plain, _kw


class _Namespace:   # (another object's attribute: looking it up may run code, so not followed)
    plain = staticmethod(_plain)


_ns = _Namespace()


def _via_module(x): return _mod.plain(x)
def _via_module_kw(x): return _mod.kw(x, k=1)
def _via_object(x): return _ns.plain(x)


sys.modules["_returned_probe_mod"] = _mod
import _returned_probe_mod  # noqa: E402 (a name an import binds: CPython loads its function by LOAD_ATTR)


def _via_imported(x): return _returned_probe_mod.kw(x, k=1)


_partial_kw, _partial_stored = functools.partial(_kw, k=1), functools.partial(_stored)


class _Partial(functools.partial):   # (a subclass may run code of its own around the call: not followed)
    pass


_partial_sub = _Partial(_kw, k=1)


def _via_partial(x): return _partial_kw(x)                   # (scikit-learn's _average_binary_score)
def _via_local_partial(x):
    f = functools.partial(_plain)
    return f(x)
def _via_partial_of_stored(x): return _partial_stored(x)     # (the function below it does not return it)
def _via_partial_subclass(x): return _partial_sub(x)
def _via_partial_of_float(x): return functools.partial(float)(x)   # (not the builtin itself: not followed)


@pytest.mark.parametrize("fn, want", [
    (_via_module, [True]), (_via_module_kw, [True]), (_via_imported, [True]), (_via_object, [False]),
    (_plain, [True]), (_tuple, [True]), (_dict_value, [True]), (_list_of_two, [True, True]),
    (_in_with, [True]), (_with(_plain), [True]), (_in_finally, [True, "finally"]), (_renamed, [True]),
    (_stored, [False]), (_added, [False]), (_dict_key, [False]), (_max, [False]), (_compared, [False]),
    (_through_c, [False]), (_via_partial, [True]), (_via_local_partial, [True]), (_via_partial_of_stored, [False]),
    (_via_partial_subclass, [False]), (_via_partial_of_float, [False]),
])
def test_returned_untouched_or_not(fn, want):
    _Probe.seen = []
    _stop(fn, _Probe())
    assert _Probe.seen == (want if ON else [w if w == "finally" else False for w in want])


def test_after_the_interpreter_specialised_the_call():
    # (CPython 3.11 specialises a hot float(x) into a PRECALL that makes the call itself)
    _Probe.seen = []
    for _ in range(200):
        _stop(_plain, _Probe())
        _stop(_added, _Probe())
    assert _Probe.seen == [ON, False] * 200


def test_not_below_the_stop_frame():
    _Probe.seen = []
    _plain(_Probe())   # (no jit frame above: nothing receives the number as an output)
    assert _Probe.seen == [False]


POS, NEG = np.array([1.0, 2.0, -0.5]), np.array([-1.0, -3.0, 0.5])
DATA = [np.array([1.0, 2.0, -0.5]) * k for k in (1.0, 2.0, -3.0, 0.25, 7.0)]


def _one_trace(n_values):
    """Traces expected for a float only returned: one (off CPython 3.11 it is a guard: one per value)."""
    return 1 if ON else n_values


def _counted(fn):
    calls = []

    def f(*a):
        calls.append(1)
        return fn(*a)
    return jit(f), calls


def test_a_returned_float_is_one_trace_and_each_calls_own():
    f, calls = _counted(lambda x: float(xp.sum(x * x)))
    for x in DATA:
        got = f(xp.asarray(x))
        assert type(got) is float and got == pytest.approx(np.sum(x * x), rel=1e-15)
    assert len(calls) == _one_trace(len(DATA))


def test_a_returned_float_in_a_pytree_with_arrays():
    f, calls = _counted(lambda x: (float(xp.sum(x)), {"x": x * 2.0, "s": float(xp.max(x))}))
    for k in (1.0, -2.0, 3.5):
        x = POS * k
        v, d = f(xp.asarray(x))
        assert type(v) is float and v == np.sum(x)
        assert type(d["s"]) is float and d["s"] == np.max(x)
        assert isinstance(d["x"], xp.Array)
        np.testing.assert_array_equal(np.asarray(d["x"]), x * 2.0)
    assert len(calls) == _one_trace(3)


def test_a_returned_complex_stays_guarded():
    # complex() builds a new object from what __complex__ returns: not followed, so a guard per value
    f, calls = _counted(lambda z: complex(xp.sum(z)))
    for k in (1.0, -2.0, 1.0):
        z = np.array([1 + 2j, 3 - 1j]) * k
        assert complex(f(xp.asarray(z))) == np.sum(z)
    assert len(calls) == 2


def test_a_returned_float_also_branched_on_is_guarded():
    def fn(x):
        s = xp.sum(x)
        if float(s) > 1.0:   # (this conversion is used: a guard on s)
            return float(s), x + 1.0
        return float(s), x - 1.0

    f, calls = _counted(fn)
    for x in (POS, NEG, POS * 2.0, POS):
        v, y = f(xp.asarray(x))
        assert type(v) is float and v == np.sum(x)
        np.testing.assert_array_equal(np.asarray(y), x + 1.0 if np.sum(x) > 1.0 else x - 1.0)
    assert len(calls) == 3   # one per value of s (POS again: its variant)


def test_a_stored_float_is_guarded_and_still_a_python_number():
    def fn(x):
        v = float(xp.sum(x))
        return v, x * v

    f, calls = _counted(fn)
    for x in (POS, NEG, POS):
        v, y = f(xp.asarray(x))
        assert type(v) is float and v == np.sum(x)
        np.testing.assert_array_equal(np.asarray(y), x * np.sum(x))
    assert len(calls) == 2


def test_past_the_variant_cap_the_eager_result_keeps_the_python_type():
    def fn(x):
        v = float(xp.sum(x))
        return v
    f = jit(fn, max_variants=1)
    assert type(f(xp.asarray(POS))) is float
    with pytest.warns(RuntimeWarning, match="traces for one signature"):
        got = f(xp.asarray(NEG))
    assert type(got) is float and got == np.sum(NEG)


def test_abstract_tracing_and_strict_jit_keep_the_error():
    fn = lambda x: float(xp.sum(x))   # noqa: E731
    with pytest.raises(ConcretizationTypeError):
        make_jaxpr(fn)(xp.asarray(POS))
    with pytest.raises(ConcretizationTypeError):
        jit(fn, guards=False)(xp.asarray(POS))
    f = jit(fn)
    f(xp.asarray(POS))   # (a cached variant with a number output: not reused under vmap, which traces its own)
    got = vmap(f)(xp.asarray(np.stack([POS, NEG])))   # (under vmap the returned float is each element's: returned.py)
    np.testing.assert_array_equal(np.asarray(got), [np.sum(POS), np.sum(NEG)])
    assert type(f(xp.asarray(NEG))) is float and f(xp.asarray(NEG)) == np.sum(NEG)


def test_vmap_inside_a_jit_returning_a_float():
    f, calls = _counted(lambda x: float(xp.sum(vmap(lambda r: xp.sum(r * r))(x))))
    for k in (1.0, 2.0, -1.5):
        x = np.stack([POS, NEG]) * k
        got = f(xp.asarray(x))
        assert type(got) is float and got == pytest.approx(np.sum(x * x), rel=1e-15)
    assert len(calls) == _one_trace(3)


def test_eager_is_unchanged():
    assert type(float(xp.sum(xp.asarray(POS)))) is float
    assert float(xp.sum(xp.asarray(POS))) == np.sum(POS)


class _IntProbe:
    """int(_IntProbe()) and _IntProbe().item() record whether the caller's result is returned untouched."""
    seen = []

    def __int__(self):
        _IntProbe.seen.append(returned_directly(sys._getframe(1), (_stop.__code__,), int))
        return 1234

    def item(self):
        _IntProbe.seen.append(returned_directly(sys._getframe(1), (_stop.__code__,), "item"))
        return 1234


def _same(x): return x
def _int(x): return int(x)
def _int_added(x): return int(x) + 1
def _item(x): return x.item()
def _item_of_call(x): return _same(x).item()
def _item_stored(x):
    v = x.item()
    return v


def _item_added(x): return x.item() + 0


@pytest.mark.parametrize("fn, want", [
    (_int, True), (_int_added, False), (_item, True), (_item_of_call, True), (_item_stored, False),
    (_item_added, False),
])
def test_int_and_item_returned_untouched_or_not(fn, want):
    _IntProbe.seen = []
    _stop(fn, _IntProbe())
    assert _IntProbe.seen == [want and ON]


def test_int_of_a_float_returned_is_pythons_int_of_each_calls_value():
    """int() of a floating value the function returns is Python's int of this call's value, as eagerly: any size
    (it was an OverflowError past int64, the number turned into an int64 output), one trace for every value, and
    eager's ValueError / OverflowError for NaN and infinities; used otherwise it stays a guard."""
    f, calls = _counted(lambda x: int(xp.sum(x)))
    for v in ([1e20], [2.7], [-2.7], [3.0], [1e300]):
        got = f(xp.asarray(v))
        assert type(got) is int and got == int(np.sum(v)) == int(xp.sum(xp.asarray(v)))
    assert len(calls) == 1
    for v, err in (([np.nan], ValueError), ([np.inf], OverflowError)):
        with pytest.raises(err):
            int(xp.sum(xp.asarray(v)))
        with pytest.raises(err):
            f(xp.asarray(v))
    g, calls = _counted(lambda x: xp.ones(int(x)))   # (a size: a guard, a variant per value)
    assert [g(xp.asarray(v)).shape for v in (2.5, 2.9, 3.1)] == [(2,), (2,), (3,)] and len(calls) == 3


def test_a_builtin_other_than_the_one_asked_is_not_followed():
    seen = []   # (float(x) is not the call an int() asks about)

    class P:
        def __float__(self):
            seen.append(returned_directly(sys._getframe(1), (_stop.__code__,), int))
            return 1.0
    _stop(_plain, P())
    assert seen == [False]


def test_returned_int_and_item_are_one_trace_and_each_calls_own():
    f, calls = _counted(lambda x: (int(xp.sum(x > 0.0)), xp.sum(x).item(), xp.any(x > 5.0).item()))
    for x in DATA:
        n, s, b = f(xp.asarray(x))
        assert type(n) is int and n == np.sum(x > 0.0)
        assert type(s) is float and s == pytest.approx(np.sum(x), rel=1e-15)
        assert type(b) is bool and b == bool(np.any(x > 5.0))
    assert len(calls) == _one_trace(len(DATA))


def test_item_of_a_one_element_array_and_of_an_integer():
    f = jit(lambda x: (xp.reshape(xp.max(x), (1, 1)).item(), xp.argmax(x).item()))
    for x in DATA:
        m, i = f(xp.asarray(x))
        assert type(m) is float and m == np.max(x)
        assert type(i) is int and i == np.argmax(x)


def test_one_small_int_object_for_two_values_is_guarded():
    # int() of 2 is CPython's one cached 2: the returned count and the count used below are one object (the
    # output leaf maps to the used one, whose guard pins it; the returned one, not an output, stays guarded)
    def fn(x):
        return int(xp.sum(x > 1.0)), x * int(xp.sum(x > 0.0))
    f = jit(fn)
    for x in (np.array([2.0, 3.0, -1.0]), np.array([0.5, 3.0, -1.0]), np.array([2.0, 3.0, -1.0])):
        got, y = f(xp.asarray(x))
        assert got == np.sum(x > 1.0)
        np.testing.assert_array_equal(np.asarray(y), x * np.sum(x > 0.0))
    g = jit(lambda x: (int(xp.sum(x > 0.0)), 3))   # the count and a literal: one object when the count is 3
    for x in (np.array([1.0, 2.0, 3.0]), np.array([1.0, -2.0, 3.0]), np.array([1.0, 2.0, 3.0])):
        got, three = g(xp.asarray(x))
        assert got == np.sum(x > 0.0) and three == 3
