"""transforms/core.py: avals, primitives, bind and the trace stack, size checks, and the errors a
traced value raises when Python or NumPy asks for its value. Values are checked against NumPy."""
import numpy as np
import pytest

import array_namespace as xp
from transforms import core, jit, make_jaxpr, vmap
from transforms.core import (EVAL, ConcretizationTypeError, Primitive, ShapedArray, Trace,
                             TracerArrayConversionError, UnexpectedTracerError, bind, check_size,
                             current_trace, get_aval, set_trace, unbox)
from transforms.primitives import elementwise as E


# ----------------------------------------------------------------------------- avals

def test_shaped_array_fields_hash_and_text():
    a = ShapedArray((2, 3), "float32")
    assert (a.shape, a.dtype, a.weak_type, a.ndim, a.size) == ((2, 3), np.dtype(np.float32), False, 2, 6)
    assert a == ShapedArray([2, 3], np.float32) and hash(a) == hash(ShapedArray((2, 3), "float32"))
    assert a != ShapedArray((2, 3), "float32", weak_type=True)
    assert a.str_short() == "f32[2,3]" and repr(a) == "ShapedArray(f32[2,3])"
    w = ShapedArray((), "int64", True)
    assert repr(w) == "ShapedArray(i64[], weak)" and w.strip_weak() == ShapedArray((), "int64")
    assert a.strip_weak() is a
    assert a.update(shape=(4,)) == ShapedArray((4,), "float32")
    assert a.update(dtype="complex128").str_short() == "c128[2,3]"
    assert ShapedArray((0, 5), bool).size == 0
    assert core.short_dtype_name(np.dtype("uint16")) == "u16"
    assert core.is_float(np.dtype("complex64")) and not core.is_float(np.dtype("int8"))


@pytest.mark.parametrize("value, want", [
    (True, ShapedArray((), bool, True)), (3, ShapedArray((), np.int64, True)),
    (2.5, ShapedArray((), np.float64, True)), (1j, ShapedArray((), np.complex128, True)),
    (np.float32(1), ShapedArray((), np.float32)), (np.zeros((2, 1), np.int8), ShapedArray((2, 1), np.int8)),
])
def test_get_aval_of_host_values(value, want):
    assert get_aval(value) == want


def test_get_aval_of_device_values_and_errors():
    x = xp.asarray(np.arange(6.0).reshape(2, 3))
    assert get_aval(x._v) == ShapedArray((2, 3), np.float64)
    with pytest.raises(TypeError, match="str is not an array value"):
        get_aval("abc")
    assert unbox(x) is x._v and unbox(5) == 5


# -------------------------------------------------------------------- bind and traces

class _Recorder(Trace):
    """A trace that records what reaches it and answers with its parent's result."""
    __slots__ = ("seen",)

    def __init__(self, parent):
        self.parent, self.seen = parent, []

    def process(self, prim, args, params):
        self.seen.append((prim.name, len(args), params))
        return self.parent.process(prim, args, params)


def test_bind_goes_to_the_current_trace_and_the_context_restores_it():
    x = xp.asarray(np.array([0.1, 0.2]))._v
    assert current_trace() is EVAL
    rec = _Recorder(EVAL)
    with set_trace(rec):
        assert current_trace() is rec
        y = bind(E.sin_p, x)
        z = E.mul_p.bind(y, 2.0)
    assert current_trace() is EVAL
    assert rec.seen == [("sin", 1, {}), ("mul", 2, {})]
    np.testing.assert_allclose(np.asarray(xp.asarray(z)), 2 * np.sin([0.1, 0.2]), rtol=1e-15)


def test_set_trace_restores_after_an_exception():
    rec = _Recorder(EVAL)
    with pytest.raises(ZeroDivisionError):
        with set_trace(rec):
            1 / 0
    assert current_trace() is EVAL


def test_tracing_counts_the_threads_with_a_trace():
    """core.tracing counts the threads whose current trace is not EVAL (bind and the namespace's wrap skip the
    thread-local read while it is 0): nested traces and an exception leave it as it was; while one thread traces,
    another binds eagerly and its arrays are eager (a binding there would reach the recorder)."""
    import threading
    base = core.tracing[0]
    rec = _Recorder(EVAL)
    with set_trace(rec):
        assert core.tracing[0] == base + 1
        with set_trace(EVAL):
            assert core.tracing[0] == base and current_trace() is EVAL
            with set_trace(rec):
                assert core.tracing[0] == base + 1
        assert core.tracing[0] == base + 1
        seen = []

        def other():
            a = xp.asarray(np.array([0.5, 2.0]))
            seen.append((current_trace() is EVAL, a._trace is EVAL, np.asarray(xp.sin(a)).tolist()))
        t = threading.Thread(target=other)
        t.start()
        t.join()
        assert seen == [(True, True, np.sin([0.5, 2.0]).tolist())] and rec.seen == []
        y = bind(E.sin_p, xp.asarray(np.array([0.1]))._v)   # this thread still traces
        assert rec.seen == [("sin", 1, {})] and np.asarray(xp.asarray(y)).tolist() == np.sin([0.1]).tolist()
    assert core.tracing[0] == base
    with pytest.raises(ZeroDivisionError):
        with set_trace(rec):
            1 / 0
    assert core.tracing[0] == base and current_trace() is EVAL


def test_eval_trace_runs_the_impl_rule():
    x = xp.asarray(np.array([1.0, 4.0, 9.0], np.float32))._v
    out = EVAL.process(E.sqrt_p, (x,), {})
    got = np.asarray(xp.asarray(out))
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, np.sqrt(np.array([1.0, 4.0, 9.0], np.float32)))


def test_primitive_repr_and_multiple_results():
    p = Primitive("my_prim", multiple_results=True)
    assert repr(p) == "my_prim" and p.multiple_results


def test_values_are_concrete_eagerly_not_under_jit_or_vmap():
    seen = []

    def f(x):
        seen.append(core.values_are_concrete())
        return x * 2.0
    f(xp.ones(2))
    jit(f)(xp.ones(2))
    vmap(f)(xp.ones(2))
    assert seen == [True, False, False]


# --------------------------------------------------------------------------- sizes

def test_check_size_overflow_and_memory():
    check_size(ShapedArray((3, 4), np.float64), "ok")   # no error
    with pytest.raises(ValueError, match=r"myop: the shape .* more than an array can index"):
        check_size(ShapedArray((2 ** 32, 2 ** 32), np.float32), "myop")
    old = core._memory_limit[0]
    try:
        core.set_memory_limit(100)
        check_size(ShapedArray((12,), np.float64), "fits")          # 96 bytes
        with pytest.raises(MemoryError, match=r"big: .* needs 104 bytes, more than the device can hold \(100"):
            check_size(ShapedArray((13,), np.float64), "big")
    finally:
        core.set_memory_limit(old)


def test_abstract_eval_checks_the_size_of_outputs():
    from transforms.primitives import structural as S
    old = core._memory_limit[0]
    try:
        core.set_memory_limit(800)
        with pytest.raises(MemoryError, match="broadcast_in_dim"):
            core.abstract_eval(S.broadcast_in_dim_p, [ShapedArray((), np.float64)],
                               {"shape": (101,), "broadcast_dimensions": ()})
    finally:
        core.set_memory_limit(old)


# -------------------------------------------------------------------------- errors

def test_concretization_error_names_the_argument_and_the_caller_line():
    def f(x, y):
        if x > 0:          # a Python decision on a traced value
            return y
        return -y
    with pytest.raises(ConcretizationTypeError) as info:
        jit(f, guards=False)(xp.asarray(1.0), xp.asarray(2.0))   # (strict: JAX's behaviour)
    msg = str(info.value)
    assert msg.startswith("bool() (e.g. an `if`") and "bool[] traced by jit/make_jaxpr" in msg
    assert "argument 'x'" in msg and "'y'" not in msg
    assert "test_core.py" in msg and "if x > 0" in msg
    assert isinstance(info.value, TypeError)


def test_host_conversion_under_vmap_names_the_lost_batch_axis():
    # (with values, vmap runs such a function element by element: transforms/vmap_loop.py)
    with pytest.raises(TracerArrayConversionError, match="batch axis"):
        make_jaxpr(vmap(lambda x: np.asarray(x)))(xp.ones((3, 2)))


def test_escaped_tracer_is_an_unexpected_tracer_error():
    leak = []

    def f(x):
        leak.append(x)
        return x + 1.0
    make_jaxpr(f)(xp.ones(2))
    with pytest.raises(UnexpectedTracerError, match="escaped"):
        jit(lambda y: y + leak[0])(xp.ones(2))


def test_is_tracer():
    seen = []
    jit(lambda x: seen.append(core.is_tracer(x._v)) or x)(xp.ones(1))
    assert seen == [True] and not core.is_tracer(xp.ones(1)._v)


# ------------------------------------------------------------------ bind's eager case in C (transforms/_bind.c)
def test_bind_is_the_c_one_and_gives_what_the_python_bind_gives():
    from transforms.primitives import reductions as R
    try:
        from transforms import _bind
    except ImportError:
        pytest.skip("the optional C extension transforms._bind was not built")
    assert core.bind is _bind.bind
    calls = []

    def spy(*args, **params):
        calls.append((args, params))
        return "out"
    prim = core.Primitive("c_bind_probe")
    core.impl_rules[prim] = spy
    try:
        assert core.bind(prim, 1, 2.5, axes=(0,), k="v") == "out"   # eagerly: the impl, arguments as given
        assert calls == [((1, 2.5), {"axes": (0,), "k": "v"})]
        assert core.bind(prim) == "out" and calls[-1] == ((), {})
    finally:
        del core.impl_rules[prim]
    x = np.arange(6.0).reshape(2, 3)
    v = xp.asarray(x)._v
    np.testing.assert_array_equal(np.asarray(core.bind(R.reduce_sum_p, v, axes=(1,))), x.sum(axis=1))
    # under a trace: the Python bind (the trace's rule), the same values as jit's
    np.testing.assert_allclose(np.asarray(jit(lambda t: xp.exp(t) + 1.0)(xp.asarray(x))), np.exp(x) + 1.0, rtol=1e-15)
    with pytest.raises(TypeError):
        core.bind()   # (no primitive: the Python bind's own error)
    orphan = core.Primitive("c_bind_orphan")   # no impl, no lowering: the Python bind's clear error
    with pytest.raises(NotImplementedError, match="c_bind_orphan"):
        core.bind(orphan, v)
    assert E.exp_p in core.impl_rules
