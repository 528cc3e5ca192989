"""transforms/jaxpr.py: a hand-built jaxpr prints in JAX's text format, evaluates to NumPy's values
eagerly and under vmap/jit (eval_jaxpr binds at the current trace), and typecheck rejects each kind
of malformed jaxpr with a JaxprTypeError."""
import numpy as np
import pytest

import array_namespace as xp
from transforms import jit, make_jaxpr, vmap
from transforms.core import ShapedArray
from transforms.jaxpr import (ClosedJaxpr, Eqn, Jaxpr, JaxprTypeError, Literal, Var, _letters, eval_jaxpr,
                              jaxpr_as_fun, new_literal, pp_jaxpr, typecheck)
from transforms.primitives import elementwise as E
from transforms.primitives import reductions as R

F64_3 = ShapedArray((3,), np.float64)
F64 = ShapedArray((), np.float64)


def _example():
    """{ lambda a; b c. let d = sin b; e = mul d 2.0; f = add e c; g = add f a; h = reduce_sum g in (h, g) }"""
    a, b, c = Var(F64_3), Var(F64_3), Var(F64_3)
    d, e, f, g, h = Var(F64_3), Var(F64_3), Var(F64_3), Var(F64_3), Var(F64)
    two = new_literal(2.0, F64.update(weak_type=True))
    eqns = [Eqn(E.sin_p, [b], [d], {}), Eqn(E.mul_p, [d, two], [e], {}), Eqn(E.add_p, [e, c], [f], {}),
            Eqn(E.add_p, [f, a], [g], {}), Eqn(R.reduce_sum_p, [g], [h], {"axes": (0,)})]
    return Jaxpr([a], [b, c], eqns, [h, g])


TEXT = """{ lambda a:f64[3]; b:f64[3] c:f64[3]. let
    d:f64[3] = sin b
    e:f64[3] = mul d 2.0
    f:f64[3] = add e c
    g:f64[3] = add f a
    h:f64[] = reduce_sum[axes=(0,)] g
  in (h, g) }"""


def _oracle(k, x, y):
    g = np.sin(x) * 2.0 + y + k
    return g.sum(), g


def test_printer_text():
    j = _example()
    assert pp_jaxpr(j) == TEXT == str(j) == str(ClosedJaxpr(j, [np.zeros(3)]))
    assert [_letters(i) for i in (0, 25, 26, 27, 51, 52)] == ["a", "z", "ba", "bb", "bz", "ca"]


def test_printer_bool_literals_dtypes_and_sub_jaxprs():
    closed = make_jaxpr(lambda x: xp.astype(xp.where(x > 0, x, 0.0), xp.float32))(xp.ones(2))
    text = str(closed)
    assert "convert_element_type[new_dtype=float32 weak_type=False]" in text
    assert text.splitlines()[0] == "{ lambda ; a:f64[2]. let"
    lit = Literal(np.bool_(True), ShapedArray((), bool))
    j = Jaxpr([], [], [], [lit])
    assert pp_jaxpr(j) == "{ lambda ; . let\n  in (True,) }"
    inner = make_jaxpr(jit(lambda x: xp.sin(x)))(xp.ones(2))
    assert "      jaxpr={ lambda ; " in str(inner)    # a sub-jaxpr printed indented in the params


def test_eval_jaxpr_matches_numpy_eagerly():
    rng = np.random.default_rng(0)
    k, x, y = (rng.standard_normal(3) for _ in range(3))
    s, g = eval_jaxpr(_example(), [xp.asarray(k)._v], xp.asarray(x)._v, xp.asarray(y)._v)
    ws, wg = _oracle(k, x, y)
    np.testing.assert_allclose(np.asarray(xp.asarray(s)), ws, rtol=1e-14)
    np.testing.assert_allclose(np.asarray(xp.asarray(g)), wg, rtol=1e-14)
    fun = jaxpr_as_fun(ClosedJaxpr(_example(), [xp.asarray(k)._v]))
    np.testing.assert_allclose(np.asarray(xp.asarray(fun(xp.asarray(x)._v, xp.asarray(y)._v)[0])), ws, rtol=1e-14)


def test_eval_jaxpr_under_vmap_and_jit_matches_a_loop():
    rng = np.random.default_rng(1)
    k = rng.standard_normal(3)
    xs, ys = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    closed = ClosedJaxpr(_example(), [xp.asarray(k)._v])

    def f(x, y):
        s, g = jaxpr_as_fun(closed)(x._v, y._v)
        return xp.asarray(s), xp.asarray(g)
    for fn in (vmap(f), jit(vmap(f))):
        s, g = fn(xp.asarray(xs), xp.asarray(ys))
        want = [_oracle(k, a, b) for a, b in zip(xs, ys)]
        np.testing.assert_allclose(np.asarray(s), [w[0] for w in want], rtol=1e-13)
        np.testing.assert_allclose(np.asarray(g), np.stack([w[1] for w in want]), rtol=1e-13)


def test_typecheck_accepts_a_wellformed_jaxpr_and_staged_ones():
    assert typecheck(_example())
    assert typecheck(make_jaxpr(lambda x: xp.cumulative_sum(x) @ x)(xp.ones(3)).jaxpr)


def _broken(kind):
    j = _example()
    eqns = list(j.eqns)
    if kind == "unbound":
        eqns[1] = Eqn(E.mul_p, [Var(F64_3), eqns[1].invars[1]], eqns[1].outvars, {})
    elif kind == "rebound":
        eqns[2] = Eqn(E.add_p, eqns[2].invars, eqns[0].outvars, {})
    elif kind == "type":
        eqns[4] = Eqn(R.reduce_sum_p, eqns[4].invars, [Var(F64_3)], {"axes": (0,)})
    elif kind == "count":
        eqns[0] = Eqn(E.sin_p, eqns[0].invars, eqns[0].outvars + [Var(F64_3)], {})
    elif kind == "literal":
        eqns[1] = Eqn(E.mul_p, [eqns[1].invars[0], Literal(np.float64(2.0), F64_3)], eqns[1].outvars, {})
    elif kind == "outvar":
        return Jaxpr(j.constvars, j.invars, eqns, [Var(F64)])
    elif kind == "rule":   # the abstract-eval rule itself rejects the operands
        w = Var(ShapedArray((4,), np.float64))
        eqns[2] = Eqn(E.add_p, [eqns[1].outvars[0], w], eqns[2].outvars, {})
        return Jaxpr(j.constvars, j.invars + [w], eqns, j.outvars)
    return Jaxpr(j.constvars, j.invars, eqns, j.outvars)


@pytest.mark.parametrize("kind, match", [
    ("unbound", "unbound variable of type f64\\[3\\]"), ("rebound", "variable rebound: f64\\[3\\]"),
    ("type", "reduce_sum: output typed f64\\[3\\] but rule gives f64\\[\\]"),
    ("count", "sin: expected 1 outputs, got 2"), ("literal", "literal shape does not match its type"),
    ("outvar", "unbound variable"),
])
def test_typecheck_errors(kind, match):
    with pytest.raises(JaxprTypeError, match=match):
        typecheck(_broken(kind))


def test_typecheck_surfaces_the_rule_error():
    with pytest.raises(ValueError, match=r"shapes \(3,\) and \(4,\) cannot be broadcast"):
        typecheck(_broken("rule"))


def test_typecheck_descends_into_sub_jaxprs():
    closed = make_jaxpr(jit(lambda x: xp.sin(x) * 2.0))(xp.ones(3))
    (eqn,) = closed.jaxpr.eqns
    sub = next(p for p in eqn.params.values() if isinstance(p, ClosedJaxpr))
    sub.jaxpr.eqns[0].outvars[0] = Var(ShapedArray((2,), np.float64))   # corrupt the inner jaxpr
    with pytest.raises(JaxprTypeError, match="sin: output typed f64\\[2\\]"):
        typecheck(closed.jaxpr)


def test_literals_and_avals():
    lit = new_literal(3, ShapedArray((), np.float32))
    assert type(lit.val) is np.float32 and lit.val == 3.0
    j = _example()
    assert j.in_avals == [F64_3, F64_3] and j.out_avals == [F64, F64_3]
    c = ClosedJaxpr(j, (np.zeros(3),))
    assert c.in_avals == j.in_avals and isinstance(c.consts, list)
