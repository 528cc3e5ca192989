"""jit guards (transforms/jit_guards.py): value-dependent Python under jit, specialised to each call's values.

Oracles: NumPy for values, the same function run eagerly, finite differences for gradients. Each case calls
one jitted function on inputs that take different paths, so a stale variant would give a wrong value.
"""
import warnings

import numpy as np
import pytest

import array_namespace as xp
from finite_diff import central_diff
from transforms import ConcretizationTypeError, grad, jit, make_jaxpr, vmap
from transforms.core import TracerArrayConversionError
from transforms.jit_returned import ON


def _count(f):
    return f._jitted.trace_count if hasattr(f, "_jitted") else f.trace_count


def _branchy(x):
    if xp.sum(x) > 0:
        return x * 2.0
    return -x + 1.0


def _branchy_np(x):
    return x * 2.0 if np.sum(x) > 0 else -x + 1.0


POS, NEG = np.array([1.0, 2.0, -0.5]), np.array([-1.0, -3.0, 0.5])


def test_a_branch_on_a_value_takes_each_way_and_keeps_both_variants():
    f = jit(_branchy)
    for x in (POS, NEG, POS, NEG, POS * 3, NEG * 3):
        got = f(xp.asarray(x))
        assert isinstance(got, xp.Array)
        np.testing.assert_array_equal(np.asarray(got), _branchy_np(x))
        np.testing.assert_array_equal(np.asarray(got), np.asarray(_branchy(xp.asarray(x))))
    assert _count(f) == 2   # one trace per branch; repeat calls run the cached variants


def test_a_while_loop_on_a_value():
    def double_until(x):
        while xp.max(x) < 10.0:
            x = x * 2.0
        return x

    def ref(x):
        while np.max(x) < 10.0:
            x = x * 2.0
        return x
    f = jit(double_until)
    for x in (np.array([1.0, 2.0]), np.array([3.0, 0.5]), np.array([1.0, 2.0]), np.array([20.0, 1.0])):
        np.testing.assert_array_equal(np.asarray(f(xp.asarray(x))), ref(x))


def test_int_as_a_size_is_a_guard_on_the_shape():
    f = jit(lambda n, x: xp.zeros(int(xp.max(n))) + xp.sum(x))
    for n, x in (([1, 3], [1.0]), ([2, 5], [2.0]), ([3, 1], [4.0]), ([0, 0], [1.0])):
        got = np.asarray(f(xp.asarray(n), xp.asarray(x)))
        np.testing.assert_array_equal(got, np.zeros(max(n)) + sum(x))


def test_index_and_python_arithmetic_on_the_value():
    f = jit(lambda x, i: x[int(i)] * float(xp.sum(x)))
    for x, i in ((POS, 0), (NEG, 2), (POS, 1)):
        got = f(xp.asarray(x), xp.asarray(i))
        np.testing.assert_allclose(np.asarray(got), x[i] * np.sum(x), rtol=1e-15)


def test_a_float_output_is_this_calls_value():
    f = jit(lambda x: float(xp.sum(x * x)))
    for x in (POS, NEG, np.array([5.0, 0.0, 1.0]), POS):
        got = f(xp.asarray(x))
        assert type(got) is float   # a Python float, as eagerly: the program's output, not a guard
        assert got == pytest.approx(np.sum(x * x), rel=1e-15)
    assert _count(f) == (1 if ON else 3)   # returned untouched: no guard (jit_returned.py; CPython 3.11)


def test_and_or_not_assert_on_values():
    def f(x):
        assert xp.all(xp.isfinite(x)), "finite input"
        if xp.any(x > 1.0) and not xp.all(x > 0.0):
            return x - 1.0
        return x

    def ref(x):
        return x - 1.0 if (np.any(x > 1.0) and not np.all(x > 0.0)) else x
    g = jit(f)
    for x in (POS, NEG, np.array([2.0, 3.0, 4.0])):
        np.testing.assert_array_equal(np.asarray(g(xp.asarray(x))), ref(x))
    with pytest.raises(AssertionError, match="finite input"):   # eager's exception, on the other path
        g(xp.asarray(np.array([1.0, np.nan, 0.0])))
    np.testing.assert_array_equal(np.asarray(g(xp.asarray(POS))), ref(POS))


def test_variant_cap_warns_and_returns_the_eager_result():
    f = jit(lambda x: x * float(xp.sum(x)), max_variants=2)
    xs = [np.array([1.0, 2.0]) * k for k in (1, 2, 3, 4)]
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        outs = [np.asarray(f(xp.asarray(x))) for x in xs]
    for x, got in zip(xs, outs):
        np.testing.assert_allclose(got, x * np.sum(x), rtol=1e-15)
    msgs = [str(m.message) for m in w if issubclass(m.category, RuntimeWarning)]
    assert len(msgs) == 2 and all("runs eagerly" in m and "max_variants" in m for m in msgs), msgs
    assert _count(f) == 2


def test_strict_mode_raises_as_jax_does(monkeypatch):
    with pytest.raises(ConcretizationTypeError, match="argument 'x'"):
        jit(_branchy, guards=False)(xp.asarray(POS))
    monkeypatch.setenv("ARRAY_NAMESPACE_JIT_GUARDS", "0")
    with pytest.raises(ConcretizationTypeError):
        jit(_branchy)(xp.asarray(POS))


def test_abstract_tracing_keeps_the_error():
    with pytest.raises(ConcretizationTypeError):
        make_jaxpr(_branchy)(xp.asarray(POS))
    f = jit(_branchy)
    f(xp.asarray(POS))   # a guarded variant is cached; lower/trace still trace abstractly
    with pytest.raises(ConcretizationTypeError):
        f.lower(xp.asarray(POS))
    with pytest.raises(ConcretizationTypeError):
        vmap(jit(_branchy))(xp.asarray(np.stack([POS, NEG])))


def _smooth(x):
    if xp.sum(x) > 0:
        return xp.sum(xp.sin(x) * x)
    return xp.sum(xp.exp(x))


def _smooth_np(x):
    return np.sum(np.sin(x) * x) if np.sum(x) > 0 else np.sum(np.exp(x))


@pytest.mark.parametrize("how", ["grad(jit)", "jit(grad)"])
def test_gradients_through_a_value_branch(how):
    g = grad(jit(_smooth)) if how == "grad(jit)" else jit(grad(_smooth))
    for x in (POS, NEG, POS):
        got = np.asarray(g(xp.asarray(x)))
        np.testing.assert_allclose(got, central_diff(_smooth_np, x), rtol=1e-6, atol=1e-8)


def test_jit_inside_jit_with_a_value_branch():
    inner = jit(_branchy)
    outer = jit(lambda x: inner(x) * 3.0)
    for x in (POS, NEG, POS):
        np.testing.assert_array_equal(np.asarray(outer(xp.asarray(x))), _branchy_np(x) * 3.0)


def test_writes_into_an_argument_on_a_branch_reach_the_caller():
    def f(x):
        if x[0] > 0:
            x[1] = 7.0
        return xp.sum(x)
    g = jit(f)
    for v in (POS, NEG, POS):
        a = xp.asarray(v.copy())
        want = v.copy()
        if want[0] > 0:
            want[1] = 7.0
        np.testing.assert_allclose(np.asarray(g(a)), want.sum())
        np.testing.assert_array_equal(np.asarray(a), want)


def test_static_arguments_and_keywords_with_guards():
    f = jit(lambda x, k, scale=1.0: (x * k if xp.sum(x) > 0 else x / k) * scale, static_argnums=1)
    for x, k in ((POS, 2), (NEG, 2), (NEG, 4)):
        want = (x * k if np.sum(x) > 0 else x / k) * 0.5
        np.testing.assert_allclose(np.asarray(f(xp.asarray(x), k, scale=xp.asarray(0.5))), want)


def test_mask_read_under_jit_is_guarded_on_the_mask():
    f = jit(lambda x: xp.sum(x[x > 0]))
    for x in (POS, NEG, np.array([3.0, 4.0, 5.0]), POS):
        np.testing.assert_allclose(np.asarray(f(xp.asarray(x))), np.sum(x[x > 0]))


@pytest.mark.parametrize("const", [np.ones(3), np.arange(4.0).reshape(2, 2), np.float32(2.5), 3, 2.0])
def test_numpy_and_python_constant_outputs_come_back_as_arrays(const):
    out = jit(lambda x: (x, const))(xp.ones(3))
    assert isinstance(out[1], xp.Array)
    np.testing.assert_array_equal(np.asarray(out[1]), np.asarray(const))


def test_a_debug_print_before_a_guard_runs_once_per_call(capsys):
    from transforms import debug_print

    def f(x):
        debug_print("x0={}", x[0])
        if xp.sum(x) > 0:
            return x + 1.0
        return x - 1.0
    g = jit(f)
    for x in (POS, NEG):
        np.testing.assert_array_equal(np.asarray(g(xp.asarray(x))), x + 1.0 if x.sum() > 0 else x - 1.0)
    assert capsys.readouterr().out.count("x0=") == 2   # as eagerly: once per call, none while tracing


def test_a_value_from_an_effect_is_not_guarded():
    from transforms import io_callback
    calls = []

    def f(x):
        y = io_callback(lambda v: calls.append(1) or np.asarray(v) * 2.0, x, x)
        if xp.sum(y) > 0:   # guarding it would run the callback once more than eagerly
            return y
        return -y
    with pytest.raises(ConcretizationTypeError, match="callback with effects"):
        jit(f)(xp.asarray(POS))
    assert calls == []


def test_calls_that_raise_do_not_use_up_the_variant_cap():
    def f(x):
        if xp.any(xp.isnan(x)):
            raise ValueError("Input contains NaN")
        return x * 2.0 if xp.sum(x) > 0 else x
    g = jit(f, max_variants=2)
    bad = xp.asarray(np.array([1.0, np.nan]))
    g(xp.asarray(POS))   # the first variant; each NaN call then breaks its guard, retraces and raises
    for _ in range(4):
        with pytest.raises(ValueError, match="Input contains NaN"):
            g(bad)
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # no cap warning: two variants, both traced
        for x in (POS, NEG, POS):
            np.testing.assert_array_equal(np.asarray(g(xp.asarray(x))), x * 2.0 if x.sum() > 0 else x)


# ---- host conversions (np.asarray / DLPack / memoryview / NumPy ufuncs): that path runs eagerly inside jit

def _host_sort(x):
    return xp.asarray(np.sort(np.asarray(x))) * 2.0


@pytest.mark.parametrize("convert", [np.asarray, np.from_dlpack, lambda x: np.exp(x) * 0.0 + np.asarray(x),
                                     lambda x: np.asarray(x.__buffer__(0))],   # (memoryview(x) on Python 3.12+)
                         ids=["asarray", "dlpack", "ufunc", "buffer"])
def test_a_host_conversion_runs_eagerly_with_each_calls_values(convert):
    runs = []

    def f(x):
        runs.append(1)
        return xp.asarray(np.sort(convert(x + 1.0))) * 2.0
    g = jit(f)
    for x in (POS, NEG, np.array([9.0, -7.0, 3.0])):
        got = g(xp.asarray(x))
        assert isinstance(got, xp.Array)
        np.testing.assert_allclose(np.asarray(got), np.sort(x + 1.0) * 2.0, rtol=1e-15)
    assert _count(g) == 1 and len(runs) == 4   # one trace (stopped at the conversion), then eager per call


def test_a_host_conversion_on_one_branch_keeps_the_other_compiled():
    runs = []

    def f(x):
        runs.append(1)
        if xp.sum(x) > 0:
            return x * 2.0
        return _host_sort(x)
    g = jit(f)
    for x in (POS, NEG, POS * 2, NEG * 3, np.array([-5.0, 1.0, 0.0])):
        want = x * 2.0 if x.sum() > 0 else np.sort(x) * 2.0
        np.testing.assert_array_equal(np.asarray(g(xp.asarray(x))), want)
    # Python runs: POS's trace (compiled); NEG's trace (stopped at the conversion) and its eager run; none for
    # POS*2 (the program); one eager run each for NEG*3 and [-5, 1, 0] (the program's guard fails; a trace
    # of this signature has converted, so no retrace)
    assert _count(g) == 2 and len(runs) == 2 + 3
    runs.clear()
    g = jit(f)   # the conversion first: then every call of the signature runs eagerly (the simple rule)
    for x in (NEG, POS, NEG * 3):
        want = x * 2.0 if x.sum() > 0 else np.sort(x) * 2.0
        np.testing.assert_array_equal(np.asarray(g(xp.asarray(x))), want)
    assert _count(g) == 1 and len(runs) == 1 + 3
    with pytest.raises(ConcretizationTypeError):
        g.lower(xp.asarray(NEG))   # abstract tracing keeps the error


def test_host_conversion_errors_stay_where_no_values_are_known():
    for call in (lambda: make_jaxpr(_host_sort)(xp.asarray(POS)),
                 lambda: jit(_host_sort, guards=False)(xp.asarray(POS)),
                 lambda: jit(_host_sort).lower(xp.asarray(POS)),
                 lambda: make_jaxpr(vmap(jit(_host_sort)))(xp.asarray(np.stack([POS, NEG]))),
                 lambda: grad(lambda x: xp.sum(jit(_host_sort)(x)))(xp.asarray(POS))):
        with pytest.raises(TracerArrayConversionError, match="converting an array to NumPy"):
            call()
    got = vmap(jit(_host_sort))(xp.asarray(np.stack([POS, NEG])))   # (values: element by element, vmap_loop.py)
    np.testing.assert_array_equal(np.asarray(got), [np.sort(POS) * 2.0, np.sort(NEG) * 2.0])
    g = jit(_host_sort)
    g(xp.asarray(POS))   # an eager variant is cached: lower still traces abstractly
    with pytest.raises(TracerArrayConversionError):
        g.lower(xp.asarray(POS))


def test_a_conversion_error_the_function_catches_still_means_eager():
    def f(x):
        try:
            v = xp.asarray(np.asarray(x)[::-1].copy())   # eagerly this path is taken
        except TypeError:
            v = x   # (a fallback a library might have: under a trace it would be a different answer)
        return v * 3.0
    g = jit(f)
    for x in (POS, NEG):
        np.testing.assert_array_equal(np.asarray(g(xp.asarray(x))), x[::-1] * 3.0)


def test_eager_variant_raises_eagers_error_and_writes_reach_the_caller():
    def f(x):
        if xp.any(xp.isnan(x)):
            raise ValueError("Input contains NaN")
        x[0] = float(np.sum(np.asarray(x)))
        return x * 1.0
    g = jit(f)
    for v in (POS, NEG, POS * 2):
        a = xp.asarray(v.copy())
        want = v.copy()
        want[0] = v.sum()
        np.testing.assert_allclose(np.asarray(g(a)), want, rtol=1e-15)
        np.testing.assert_allclose(np.asarray(a), want, rtol=1e-15)
    with pytest.raises(ValueError, match="Input contains NaN"):
        g(xp.asarray(np.array([1.0, np.nan, 0.0])))
    assert _count(g) == 1   # the first trace met the conversion: the signature runs eagerly, untraced


def test_a_debug_print_before_a_host_conversion_runs_once_per_call(capsys):
    from transforms import debug_print

    def f(x):
        debug_print("x0={}", x[0])
        if xp.sum(x) < 0:   # the compiled variant's guard program runs first (no print), then eager
            return _host_sort(x)
        return x
    g = jit(f)
    for x in (POS, NEG, NEG * 2, POS):
        want = np.sort(x) * 2.0 if x.sum() < 0 else x
        np.testing.assert_array_equal(np.asarray(g(xp.asarray(x))), want)
    assert capsys.readouterr().out.count("x0=") == 4   # as eagerly: once per call


def test_a_host_conversion_inside_an_inner_jit_makes_the_outer_call_eager():
    inner = jit(_host_sort)
    outer = jit(lambda x: inner(x) + 1.0)
    for x in (POS, NEG):
        np.testing.assert_array_equal(np.asarray(outer(xp.asarray(x))), np.sort(x) * 2.0 + 1.0)


def test_the_eager_run_sees_arrays_statics_and_keywords_as_the_trace_does():
    seen = []

    def f(x, k, scale=1.0):
        seen.append((type(x), type(scale)))
        return xp.asarray(np.cumsum(np.asarray(x))) * k * scale
    g = jit(f, static_argnums=1)
    for x, k in ((POS, 2), (NEG, 3)):   # NumPy and Python-scalar arguments: Arrays inside, as traced
        got = g(x, k, scale=0.5)
        assert isinstance(got, xp.Array)
        np.testing.assert_allclose(np.asarray(got), np.cumsum(x) * k * 0.5, rtol=1e-15)
    assert set(seen) == {(xp.Array, xp.Array)}
