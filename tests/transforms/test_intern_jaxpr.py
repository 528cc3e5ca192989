"""control_flow_util.intern_jaxpr's structural key: one object for structurally equal jaxprs, never one for
two that differ in anything that changes what they compute (a literal's sign of zero, a weak type, a param's
type, an operand's order); a jaxpr with a function in its params is not interned."""
import numpy as np

import array_namespace as xp
from transforms.control_flow_util import intern_jaxpr
from transforms.core import ShapedArray, bind, get_aval
from transforms.jaxpr_transforms import stage
from transforms.primitives import elementwise as E

F64 = [ShapedArray((2,), np.dtype(np.float64))]


def _st(f, avals=F64):
    return stage(lambda *a: [f(*a)], avals)


def test_equal_structures_share_one_object_and_run_the_same():
    mk = lambda: _st(lambda x: bind(E.add_p, bind(E.mul_p, x, 2.0), bind(E.sin_p, x)))
    a, b = intern_jaxpr(mk()), intern_jaxpr(mk())
    assert a is b


def test_differences_that_change_the_result_are_kept_apart():
    pairs = [
        (lambda x: bind(E.mul_p, x, 0.0), lambda x: bind(E.mul_p, x, -0.0)),          # sign of a zero literal
        (lambda x: bind(E.sub_p, x, bind(E.sin_p, x)), lambda x: bind(E.sub_p, bind(E.sin_p, x), x)),   # order
        (lambda x: bind(E.mul_p, x, 2.0), lambda x: bind(E.mul_p, x, 3.0)),
        (lambda x: E.convert_element_type(x, np.dtype(np.float32), weak_type=False),
         lambda x: E.convert_element_type(x, np.dtype(np.float32), weak_type=True)),   # a weak type
        (lambda x: bind(E.convert_element_type_p, x, new_dtype=np.dtype(np.float32), weak_type=False),
         lambda x: bind(E.convert_element_type_p, x, new_dtype=np.dtype(np.float32), weak_type=0)),   # a param's type
    ]
    for f, g in pairs:
        assert intern_jaxpr(_st(f)) is not intern_jaxpr(_st(g))
        assert intern_jaxpr(_st(f)) is intern_jaxpr(_st(f))
    weak = [ShapedArray((2,), np.dtype(np.float64), True)]
    h = lambda x: bind(E.mul_p, x, x)
    assert intern_jaxpr(_st(h)) is not intern_jaxpr(_st(h, weak))


def test_nested_jaxprs_are_keyed_by_structure_and_functions_are_not_interned():
    from transforms import while_loop
    seen = []

    def run(k):
        def f(a):
            return while_loop(lambda c: xp.sum(c) < 10.0, lambda c: c * k + 1.0, a)
        j = stage(lambda x: [f(xp.asarray(x))._v], [get_aval(xp.zeros(3)._v)])
        seen.append(j.jaxpr.eqns[-1].params["body_jaxpr"])
        return np.asarray(f(xp.asarray(np.ones(3))))
    np.testing.assert_array_equal(run(2.0), [7.0, 7.0, 7.0])
    np.testing.assert_array_equal(run(3.0), [4.0, 4.0, 4.0])     # (a cache sharing k=2's body would give 7)
    run(2.0)
    assert seen[0] is seen[2] and seen[0] is not seen[1]
    from transforms.jaxpr import ClosedJaxpr, Eqn, Jaxpr, Var
    j = _st(lambda x: x).jaxpr
    out = Var(j.invars[0].aval)
    odd = ClosedJaxpr(Jaxpr([], j.invars, [Eqn(E.neg_p, [j.invars[0]], [out], {"f": lambda: 0})], [out]), [])
    assert intern_jaxpr(odd) is odd
