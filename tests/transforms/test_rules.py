"""transforms/rules.py: the shared markers (Zero, UndefPrimal) and the generic rule factories
zero_jvp and deflinear, exercised on fresh primitives and checked against finite differences
and against the transpose identity <ct, J t> == <J^T ct, t>."""
import numpy as np
import pytest

import array_namespace as xp
from finite_diff import central_diff
from transforms import grad, jvp, linear_transpose, vjp
from transforms import rules
from transforms.core import Primitive, ShapedArray, abstract_eval_rules, impl_rules
from transforms.primitives import elementwise as E


@pytest.fixture
def fresh():
    """Make throwaway primitives and remove every rule they registered afterwards."""
    made = []

    def make(name, impl, linear=False, zero=False):
        p = Primitive(name)
        abstract_eval_rules[p] = lambda x: x
        impl_rules[p] = impl
        rules.batch_rules[p] = lambda n, vals, dims, _p=p: (_p.bind(vals[0]), dims[0])
        if linear:
            rules.deflinear(p)
            rules.transpose_rules[p] = lambda ct, x, _p=p: [_p.bind(ct)]
        if zero:
            rules.zero_jvp(p)
        made.append(p)
        return p
    yield make
    for p in made:
        for table in (abstract_eval_rules, impl_rules, rules.batch_rules, rules.jvp_rules, rules.transpose_rules):
            table.pop(p, None)


def test_markers():
    assert repr(rules.Zero) == "Zero"
    u = rules.UndefPrimal(ShapedArray((2,), np.float32))
    assert rules.is_undefined(u) and not rules.is_undefined(rules.Zero) and u.aval.shape == (2,)


def test_zero_jvp_gives_a_zero_tangent_and_gradient(fresh):
    p = fresh("my_floor", lambda x: E.floor_p.bind(x), zero=True)
    f = lambda x: xp.asarray(p.bind(x._v))
    x = xp.asarray(np.array([0.3, 1.7, -2.5]))
    out, t = jvp(f, (x,), (xp.ones(3),))
    np.testing.assert_array_equal(np.asarray(out), np.floor([0.3, 1.7, -2.5]))
    np.testing.assert_array_equal(np.asarray(t), np.zeros(3))
    np.testing.assert_array_equal(np.asarray(grad(lambda x: xp.sum(f(x) * x))(x)), np.floor([0.3, 1.7, -2.5]))


def test_deflinear_jvp_matches_finite_differences_and_transposes(fresh):
    p = fresh("times_three", lambda x: E.mul(x, E.full_like_scalar(x, 3.0)), linear=True)
    f = lambda x: xp.asarray(p.bind(x._v)) * xp.sin(x)
    x0 = np.array([0.2, -1.0, 2.0])
    g = grad(lambda x: xp.sum(f(x)))(xp.asarray(x0))
    want = central_diff(lambda v: float(np.sum(3 * v * np.sin(v))), x0)
    np.testing.assert_allclose(np.asarray(g), want, rtol=1e-7)
    # transpose identity on the linear primitive alone
    rng = np.random.default_rng(0)
    t, ct = rng.standard_normal(3), rng.standard_normal(3)
    lin = lambda x: xp.asarray(p.bind(x._v))
    (tr,) = linear_transpose(lin, xp.asarray(t))(xp.asarray(ct))
    assert np.isclose(np.dot(ct, np.asarray(lin(xp.asarray(t)))), np.dot(np.asarray(tr), t), rtol=1e-13)


def test_deflinear_keeps_symbolic_zeros(fresh):
    p = fresh("double", lambda x: E.add(x, x), linear=True)
    seen = []
    rule = rules.jvp_rules[p]
    x = xp.asarray(np.array([1.0, 2.0]))._v
    ans, t = rule((x,), (rules.Zero,))
    seen.append(t)
    assert seen == [rules.Zero]
    np.testing.assert_array_equal(np.asarray(xp.asarray(ans)), [2.0, 4.0])
    _, pull = vjp(lambda a: xp.asarray(p.bind(a._v)), xp.asarray(np.array([1.0, 2.0])))
    np.testing.assert_array_equal(np.asarray(pull(xp.asarray(np.array([1.0, -1.0])))[0]), [2.0, -2.0])


def test_every_gap_has_a_reason():
    for table in (rules.jvp_gaps, rules.transpose_gaps, rules.batch_gaps):
        for prim, why in table.items():
            assert isinstance(why, str) and len(why) > 10, (prim, why)
