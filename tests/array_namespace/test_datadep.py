"""array_namespace/_datadep.py: host values of raw values (concrete eagerly and under grad, None under
jit/vmap), DataDependentShapeError's message (function, aval, trace, hint) and the mask hints."""
import numpy as np
import pytest

import array_namespace as xp
from array_namespace import _datadep as D
from transforms import ConcretizationTypeError, grad, jit, vmap


def test_host_value_of_concrete_values():
    x = xp.asarray(np.array([1.5, -2.0]))
    np.testing.assert_array_equal(D.host_value(x._v), [1.5, -2.0])
    assert D.host_value(3.0) == 3.0
    np.testing.assert_array_equal(D.require_host(x._v, "f"), [1.5, -2.0])


def test_host_value_under_transforms():
    seen = {}

    def f(name):
        def g(x):
            seen[name] = D.host_value(x._v)
            return xp.sum(x * x)
        return g
    x = xp.asarray(np.array([1.0, 2.0]))
    grad(f("grad"))(x)
    jit(f("jit"))(x)
    vmap(f("vmap"))(x)
    np.testing.assert_array_equal(seen["grad"], [1.0, 2.0])    # grad's primals are concrete
    assert seen["jit"] is None and seen["vmap"] is None


def test_data_dependent_shape_error_message():
    def f(x):
        return D.require_host(x._v, "myfun", "Do it eagerly.")
    with pytest.raises(D.DataDependentShapeError) as info:
        jit(f, guards=False)(xp.ones(3))
    msg = str(info.value)
    assert msg.startswith("myfun: the shape of the result depends on the values of the input")
    assert "(f64[3] traced by jit/make_jaxpr)" in msg and msg.endswith("Do it eagerly.")
    assert isinstance(info.value, ConcretizationTypeError) and info.value.fname == "myfun"


def test_mask_hints_and_real_uses():
    assert D.mask_hint("__getitem__") is D.MASK_READ_HINT and D.mask_hint("__setitem__") is D.MASK_UPDATE_HINT
    x = xp.asarray(np.array([1.0, -1.0, 2.0]))
    np.testing.assert_array_equal(np.asarray(x[x > 0]), [1.0, 2.0])          # eagerly: NumPy's answer
    with pytest.raises(D.DataDependentShapeError, match="Reading x\\[mask\\] needs the count of True entries"):
        jit(lambda v: v[v > 0], guards=False)(x)
    with pytest.raises(D.DataDependentShapeError, match="unique_values"):
        jit(xp.unique_values, guards=False)(x)
