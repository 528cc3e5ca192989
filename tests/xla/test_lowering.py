"""xla/lowering.py: the StableHLO text of small jaxprs (public @main, tensor types per dtype, constants,
donation attributes, the module's name), a primitive without a lowering rule, and the compiled module
run against NumPy."""
import numpy as np
import pytest

import array_namespace as xp
from array_namespace._helpers import wrap
from transforms import jit, make_jaxpr
from transforms.backend import backend
from transforms.core import Primitive, ShapedArray, abstract_eval_rules
from transforms.jaxpr import ClosedJaxpr, Eqn, Jaxpr, Var
from xla import lowering as L
from xla._jaxlib import module_text


def _text(fn, *args, **kw):
    # (engine values of the arguments' own dtypes: float16 too, which the namespace's asarray makes float64)
    return module_text(L.lower_jaxpr(make_jaxpr(fn)(*[wrap(backend.device_put(np.asarray(a), None)) for a in args]),
                                     **kw))


def test_stablehlo_text_of_a_small_jaxpr():
    text = _text(lambda x, y: xp.sin(x) * 3.0 + y, np.ones(3, np.float32), np.ones(3, np.float32), name="my fn!")
    assert "module @jit_my_fn_" in text
    assert "func.func public @main(%arg0: tensor<3xf32>, %arg1: tensor<3xf32>) -> tensor<3xf32>" in text
    assert "stablehlo.sine %arg0 : tensor<3xf32>" in text
    assert "stablehlo.constant dense<3.000000e+00> : tensor<f32>" in text
    assert "stablehlo.broadcast_in_dim" in text and "stablehlo.multiply" in text and "stablehlo.add" in text


@pytest.mark.parametrize("dtype, hlo", [("bool", "i1"), ("int8", "i8"), ("uint16", "ui16"), ("int64", "i64"),
                                        ("float16", "f16"), ("float64", "f64"), ("complex64", "complex<f32>"),
                                        ("complex128", "complex<f64>")])
def test_tensor_types_per_dtype(dtype, hlo):
    text = _text(lambda x: xp.reshape(x, (3, 2)), np.zeros((2, 3), dtype))
    assert f"@main(%arg0: tensor<2x3x{hlo}>) -> tensor<3x2x{hlo}>" in text


def test_captured_constants_become_dense_constants():
    c = xp.asarray(np.array([1.0, 2.0, -3.0]))
    text = _text(lambda x: x + c, np.zeros(3))
    assert "dense<[1.000000e+00, 2.000000e+00, -3.000000e+00]> : tensor<3xf64>" in text
    zc = xp.asarray(np.array([1 + 2j]))
    assert "dense<(1.000000e+00,2.000000e+00)> : tensor<1xcomplex<f64>>" in _text(lambda x: x * zc, np.ones(1, complex))


def test_donated_arguments_are_marked():
    closed = make_jaxpr(lambda x, y: x + y)(xp.ones(2), xp.ones(2))
    text = module_text(L.lower_jaxpr(closed, donate=(False, True)))
    assert "%arg0: tensor<2xf64>, %arg1: tensor<2xf64> {jax.buffer_donor = true}" in text
    assert "buffer_donor" not in module_text(L.lower_jaxpr(closed))


def test_primitive_without_a_rule_is_named():
    p = Primitive("never_lowered")
    abstract_eval_rules[p] = lambda x: x
    try:
        a = ShapedArray((2,), np.float64)
        x, y = Var(a), Var(a)
        closed = ClosedJaxpr(Jaxpr([], [x], [Eqn(p, [x], [y], {})], [y]), [])
        with pytest.raises(NotImplementedError, match="no XLA lowering for primitive 'never_lowered'"):
            L.lower_jaxpr(closed)
    finally:
        del abstract_eval_rules[p]


def test_elem_type_constant_and_broadcast_helpers_run_through_jit():
    x = np.random.default_rng(0).standard_normal((2, 3))
    got = jit(lambda a, b: a * b + 1.0)(xp.asarray(x), xp.asarray(x[0]))
    np.testing.assert_allclose(np.asarray(got), x * x[0] + 1.0, rtol=1e-15)
    with L.context(), L.ir.Location.unknown():
        assert str(L.elem_type("uint32")) == "ui32" and str(L.tensor_type((2, 0), "float32")) == "tensor<2x0xf32>"
