"""transforms/staging.py: what StagingTrace records (equations, folded literals, captured constants),
partial evaluation's split into known and unknown work, dce, constvar conversion, and the errors of
escaped tracers. Every staged program is also run and compared with NumPy."""
import numpy as np
import pytest

import array_namespace as xp
from transforms import make_jaxpr
from transforms.core import EVAL, ShapedArray, UnexpectedTracerError, current_trace, set_trace
from transforms.jaxpr import Literal, eval_jaxpr, typecheck
from transforms.primitives import elementwise as E
from transforms.staging import StagingTrace, convert_constvars, dce_jaxpr, trace_to_jaxpr

F64_3 = ShapedArray((3,), np.float64)


def _np(v):
    return np.asarray(xp.asarray(v))


def _run(closed, *args):
    return [_np(o) for o in eval_jaxpr(closed.jaxpr, closed.consts, *[xp.asarray(a)._v for a in args])]


def test_trace_to_jaxpr_records_equations_and_runs_like_numpy():
    closed = trace_to_jaxpr(lambda x, y: [E.add(E.mul(x, y), E.neg(y))], [F64_3, F64_3])
    assert [e.prim.name for e in closed.jaxpr.eqns] == ["mul", "neg", "add"]
    assert closed.in_avals == [F64_3, F64_3] and closed.out_avals == [F64_3] and typecheck(closed.jaxpr)
    x, y = np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0, 4.0])
    np.testing.assert_allclose(_run(closed, x, y)[0], x * y - y, rtol=1e-15)


def test_scalar_literal_arithmetic_folds_at_trace_time():
    closed = trace_to_jaxpr(lambda x: [E.mul(x, E.add(np.float64(1.5), np.float64(0.5)))], [F64_3])
    (eqn,) = closed.jaxpr.eqns
    assert eqn.prim is E.mul_p and type(eqn.invars[1]) is Literal and eqn.invars[1].val == 2.0
    closed = trace_to_jaxpr(lambda x: [E.mul(x, E.log_p.bind(np.float64(2.0)))], [F64_3])
    assert str(closed).splitlines()[1] == "    b:f64[3] = mul a 0.6931471805599453"


def test_non_scalar_constants_are_staged_not_folded():
    text = str(make_jaxpr(lambda x: x + xp.ones(3))(xp.ones(3)))
    assert "broadcast_in_dim" in text   # ones(3) is an equation under stage_all


def test_captured_device_values_become_constvars_once():
    c = xp.asarray(np.array([1.0, 2.0, 3.0]))._v
    closed = trace_to_jaxpr(lambda x: [E.add(E.mul(x, c), c)], [F64_3])
    assert len(closed.jaxpr.constvars) == 1 and closed.consts == [c]
    np.testing.assert_allclose(_run(closed, np.full(3, 2.0))[0], [3.0, 6.0, 9.0])
    # a NumPy array captured as a constant loses weak typing and keeps its dtype
    closed = trace_to_jaxpr(lambda x: [E.add(x, np.arange(3.0))], [F64_3])
    assert closed.jaxpr.constvars[0].aval == F64_3


def test_outputs_that_are_inputs_or_constants():
    closed = trace_to_jaxpr(lambda x: [x, np.float64(2.0)], [F64_3])
    assert closed.jaxpr.eqns == [] and closed.jaxpr.outvars[0] is closed.jaxpr.invars[0]
    assert type(closed.jaxpr.outvars[1]) is Literal


def test_partial_evaluation_runs_known_work_and_stages_unknowns():
    known = xp.asarray(np.array([0.1, 0.2, 0.3]))._v
    trace = StagingTrace(current_trace(), stage_all=False)
    assert trace.keeps_values_concrete and trace.kind_name() == "linearize"
    u = trace.new_arg(F64_3)
    with set_trace(trace):
        k = E.mul(bind_sin(known), np.float64(2.0))   # known: runs now, in the parent
        out = E.add(u, k)                              # touches the unknown: staged
    closed = trace.to_jaxpr([out])
    np.testing.assert_allclose(_np(k), 2 * np.sin([0.1, 0.2, 0.3]), rtol=1e-15)
    assert len(closed.consts) == 1     # the known value enters as a residual
    np.testing.assert_allclose(_run(closed, np.ones(3))[0], 1 + 2 * np.sin([0.1, 0.2, 0.3]), rtol=1e-15)


def bind_sin(x):
    return E.sin_p.bind(x)


def test_dce_drops_dead_equations_and_keeps_semantics():
    full = trace_to_jaxpr(lambda x: (bind_sin(x), E.neg(x), [E.add(x, x)])[-1], [F64_3])
    assert [e.prim.name for e in full.jaxpr.eqns] == ["sin", "neg", "add"]
    pruned = dce_jaxpr(full.jaxpr)
    assert [e.prim.name for e in pruned.eqns] == ["add"] and typecheck(pruned)
    np.testing.assert_allclose(_np(eval_jaxpr(pruned, [], xp.asarray(np.arange(3.0))._v)[0]), [0.0, 2.0, 4.0])


def test_convert_constvars_makes_them_leading_invars():
    c = xp.asarray(np.array([1.0, -1.0, 2.0]))._v
    closed = trace_to_jaxpr(lambda x: [E.mul(x, c)], [F64_3])
    j, consts = convert_constvars(closed)
    assert j.constvars == [] and len(j.invars) == 2 and consts == [c] and typecheck(j)
    np.testing.assert_allclose(_np(eval_jaxpr(j, [], c, xp.asarray(np.full(3, 3.0))._v)[0]), [3.0, -3.0, 6.0])


def test_escaped_tracer_and_origin_description():
    trace = StagingTrace(EVAL)
    a, b = trace.new_arg(F64_3, "alpha"), trace.new_arg(F64_3, "beta")
    with set_trace(trace):
        y = E.mul(a, np.float64(2.0))
    assert trace.describe_origin(y) == "argument 'alpha'"
    closed = trace.to_jaxpr([y, b])
    assert len(closed.jaxpr.invars) == 2
    other = StagingTrace(EVAL)
    with pytest.raises(UnexpectedTracerError, match=r"f64\[3\].*jit/make_jaxpr.*escaped"):
        with set_trace(other):
            E.add(y, y)


def test_concrete_literal_tracers_give_their_value():
    trace = StagingTrace(EVAL)
    t = trace.to_tracer(np.float64(4.0))
    assert t.concrete("why") == 4.0 and t.host_value("why") == 4.0
    with pytest.raises(TypeError, match="needs a concrete value"):
        trace.new_arg(F64_3).concrete("why")


def test_a_python_int_past_int64_next_to_uint64_under_jit_as_eagerly():
    """A Python int in uint64's upper half (2**63 <= n < 2**64) with a uint64 array: its staged literal was made as
    int64 first and overflowed, so every jitted `x + 2**63` raised OverflowError while eager gave NumPy's values.
    Now the literal has the dtype it converts to: jit, vmap and eager agree with NumPy; past uint64 all raise."""
    from transforms import jit, vmap
    x = np.array([0, 1, 2, 3, 2 ** 64 - 1], np.uint64)
    for n in (2 ** 63, 2 ** 63 + 5, 2 ** 64 - 1):
        u = np.uint64(n)
        for op, ref in ((lambda a: a + n, x + u), (lambda a: a * n, x * u), (lambda a: a - n, x - u),
                        (lambda a: a ** n, x ** u), (lambda a: a < n, x < u), (lambda a: xp.maximum(a, n),
                                                                                np.maximum(x, u))):
            want = np.asarray(op(xp.asarray(x)))
            np.testing.assert_array_equal(want, ref)
            for f in (jit(op), vmap(op)):
                got = np.asarray(f(xp.asarray(x)))
                assert got.dtype == want.dtype
                np.testing.assert_array_equal(got, want)
    for f in (lambda a: a + 2 ** 64, jit(lambda a: a + 2 ** 64)):
        with pytest.raises(OverflowError):
            f(xp.asarray(x))
