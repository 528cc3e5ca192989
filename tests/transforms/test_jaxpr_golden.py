"""Golden jaxpr texts for the seed programs (JAX's text format), and IR invariants."""
import numpy as np
import pytest

import array_namespace as xp
from transforms import ConcretizationTypeError, eval_jaxpr, jit, make_jaxpr, typecheck

F32_8 = xp.zeros(8, dtype=xp.float32)

FUNC1 = """{ lambda ; a:f32[8] b:f32[8]. let
    c:f32[8] = sin b
    d:f32[8] = mul c 3.0
    e:f32[8] = add a d
    f:f32[] = reduce_sum[axes=(0,)] e
  in (f,) }"""


def func1(first, second):
    temp = first + xp.sin(second) * 3.0
    return xp.sum(temp)


def func3(first, second):
    def inner(x):
        if second.shape[0] > 4:   # Python control flow on shapes resolves at trace time
            return xp.sin(x) * 3.0
        return x
    return xp.sum(first + inner(second))


def test_func1_golden():
    assert str(make_jaxpr(func1)(F32_8, F32_8)) == FUNC1


def test_shape_control_flow_resolves_at_trace_time():
    assert str(make_jaxpr(func3)(F32_8, F32_8)) == FUNC1
    short = xp.zeros(3, dtype=xp.float32)
    assert "sin" not in str(make_jaxpr(func3)(short, short))


def test_log2_constant_is_folded_into_a_literal():
    def log2(x):
        return xp.log(x) / xp.log(2.0)
    text = str(make_jaxpr(log2)(xp.asarray(3.0, dtype=xp.float32)))
    assert text == """{ lambda ; a:f32[]. let
    b:f32[] = log a
    c:f32[] = div b 0.6931472
  in (c,) }"""


def test_creation_inside_jit_is_staged():
    text = str(make_jaxpr(lambda x: x + xp.ones(3))(xp.zeros(3)))
    assert "broadcast_in_dim[shape=(3,) broadcast_dimensions=()] 1.0" in text


def test_jitted_inner_function_is_one_call_equation():
    @jit
    def inner(x):
        return xp.sin(x) * 2.0

    def outer(x):
        return inner(x) + 1.0
    text = str(make_jaxpr(outer)(F32_8))
    assert text == """{ lambda ; a:f32[8]. let
    b:f32[8] = jit[
      name=inner
      jaxpr={ lambda ; c:f32[8]. let
          d:f32[8] = sin c
          e:f32[8] = mul d 2.0
        in (e,) }
    ] a
    f:f32[8] = add b 1.0
  in (f,) }"""


def test_captured_array_becomes_constvar():
    c = xp.asarray([1.0, 2.0])
    closed = make_jaxpr(lambda x: x * c)(xp.zeros(2))
    assert str(closed).startswith("{ lambda a:f64[2]; b:f64[2]. let")
    assert len(closed.consts) == 1


def test_typecheck_and_eval_jaxpr_agree_with_eager():
    closed = make_jaxpr(func1)(F32_8, F32_8)
    assert typecheck(closed.jaxpr)
    a = xp.asarray(np.arange(8, dtype=np.float32))
    (out,) = eval_jaxpr(closed.jaxpr, closed.consts, a._v, a._v)
    np.testing.assert_allclose(np.asarray(out), np.asarray(func1(a, a)), rtol=1e-6)


def test_branching_on_traced_value_is_a_clear_type_error():
    @jit(guards=False)   # strict (JAX's behaviour; the default guards it: test_jit_guards.py)
    def f(x, y):
        if x > 0:
            return y
        return -y
    with pytest.raises(TypeError) as info:
        f(xp.asarray(1.0), xp.asarray(2.0))
    assert isinstance(info.value, ConcretizationTypeError)
    msg = str(info.value)
    assert "abstract" in msg and "'x'" in msg and "'y'" not in msg
    assert "where" in msg and "static_argnums" in msg


def test_concretization_error_is_cheap_until_printed():
    err = None
    try:
        jit(lambda x: bool(x), guards=False)(xp.asarray(1.0))
    except ConcretizationTypeError as e:
        err = e
    assert err is not None and err.args == ()   # the text is built only by __str__
