"""returned.py: a float() returned untouched under vmap / grad / jvp / vjp is the transform's output.

Oracles: a Python loop of the eager function for vmap, central finite differences for grad and jvp (the
functions are polynomials, so the differences are exact to rounding); a float used otherwise keeps what it
did before (vmap: the shared value or BatchDisagreementError; AD: ConcretizationTypeError). Off CPython 3.11
nothing is proven returned, so every float() keeps that older behaviour (the tests say which they expect).
"""
import functools

import numpy as np
import pytest

import array_namespace as xp
from transforms import (BatchDisagreementError, ConcretizationTypeError, grad, jit, jvp, make_jaxpr,
                        value_and_grad, vjp, vmap)
from transforms.jit_returned import ON

pytestmark = pytest.mark.skipif(not ON, reason="the bytecode proof reads CPython 3.11's bytecode only")

X = np.array([[1.0, 2.0, -0.5], [-1.0, 3.0, 0.25], [0.5, -2.0, 4.0], [2.0, 2.0, 2.0]])
V = np.array([0.7, -1.3, 2.1])


def score(x):
    return float(xp.sum(x * x * x) - 2.0 * xp.sum(x))   # (a metric: `return float(...)`)


def score_np(x):
    return float(np.sum(x * x * x) - 2.0 * np.sum(x))


def dscore_np(x):
    return 3.0 * x * x - 2.0


def fd(f, x, h=1e-6):
    return np.array([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(x.size)])


def test_vmap_of_a_returned_float_is_each_elements_value():
    got = vmap(score)(xp.asarray(X))
    assert isinstance(got, xp.Array) and got.shape == (4,)
    np.testing.assert_allclose(np.asarray(got), [score_np(r) for r in X], rtol=1e-15)


def test_vmap_of_an_integer_returned_as_a_float():
    k = np.array([[1, 2, 3], [4, 5, -6]])
    got = vmap(lambda r: float(xp.sum(r)))(xp.asarray(k))
    assert got.dtype == xp.float64
    np.testing.assert_array_equal(np.asarray(got), [float(np.sum(r)) for r in k])


def test_vmap_of_a_returned_float_in_a_pytree():
    got = vmap(lambda r: {"s": float(xp.sum(r)), "r": r * 2.0, "m": [float(xp.max(r))]})(xp.asarray(X))
    np.testing.assert_array_equal(np.asarray(got["s"]), X.sum(1))
    np.testing.assert_array_equal(np.asarray(got["m"][0]), X.max(1))
    np.testing.assert_array_equal(np.asarray(got["r"]), X * 2.0)


def test_grad_jvp_vjp_of_a_returned_float_match_finite_differences():
    want = fd(score_np, V)
    np.testing.assert_allclose(dscore_np(V), want, rtol=1e-7)   # (the oracle itself)
    np.testing.assert_allclose(np.asarray(grad(score)(xp.asarray(V))), want, rtol=1e-7)
    val, g = value_and_grad(score)(xp.asarray(V))
    assert float(val) == score_np(V)
    np.testing.assert_allclose(np.asarray(g), want, rtol=1e-7)
    t = np.array([0.3, -1.0, 2.0])
    p, tan = jvp(score, (xp.asarray(V),), (xp.asarray(t),))
    assert float(p) == score_np(V)
    np.testing.assert_allclose(float(tan), (score_np(V + 1e-6 * t) - score_np(V - 1e-6 * t)) / 2e-6, rtol=1e-7)
    out, f_vjp = vjp(score, xp.asarray(V))
    np.testing.assert_allclose(np.asarray(f_vjp(xp.asarray(2.0))[0]), 2.0 * want, rtol=1e-7)


def _scaled(x, *, k):
    return float(k * xp.sum(x * x * x) - 2.0 * xp.sum(x))


def via_partial(x):
    metric = functools.partial(_scaled, k=1.0)   # (scikit-learn's average_precision_score -> _average_binary_score)
    return metric(x)


def test_a_float_returned_through_a_partial_is_the_transforms_output():
    np.testing.assert_allclose(np.asarray(vmap(via_partial)(xp.asarray(X))), [score_np(r) for r in X], rtol=1e-15)
    np.testing.assert_allclose(np.asarray(grad(via_partial)(xp.asarray(V))), fd(score_np, V), rtol=1e-7)


def test_grad_with_aux_keeps_the_pair_check_and_the_old_error():
    # (has_aux: grad's wrapper takes the pair apart, so a float inside it is not returned untouched: as before)
    with pytest.raises(ConcretizationTypeError):
        grad(lambda v: (score(v), v * 2.0), has_aux=True)(xp.asarray(V))
    with pytest.raises(TypeError, match="pair"):
        jvp(lambda v: score(v), (xp.asarray(V),), (xp.asarray(V),), has_aux=True)
    with pytest.raises(TypeError, match="pair"):
        vjp(lambda v: score(v), xp.asarray(V), has_aux=True)


def test_nested_with_jit():
    loop = [score_np(r) for r in X]
    for f in (jit(vmap(score)), vmap(jit(score))):
        np.testing.assert_allclose(np.asarray(f(xp.asarray(X))), loop, rtol=1e-15)
    for f in (grad(jit(score)), jit(grad(score)), vmap(grad(score))):
        x = X if f.__name__.startswith("vmap") else V
        want = np.array([fd(score_np, r) for r in X]) if x is X else fd(score_np, V)
        np.testing.assert_allclose(np.asarray(f(xp.asarray(x))), want, rtol=1e-7)
    np.testing.assert_allclose(np.asarray(vmap(grad(jit(score)))(xp.asarray(X))),
                               [fd(score_np, r) for r in X], rtol=1e-7)


def test_a_jit_traced_under_vmap_first_still_returns_python_floats():
    f = jit(score)
    np.testing.assert_allclose(np.asarray(vmap(f)(xp.asarray(X))), [score_np(r) for r in X], rtol=1e-15)
    for r in X:   # (the signature's entry traced under vmap outputs the number: converted back here)
        got = f(xp.asarray(r))
        assert type(got) is float and got == pytest.approx(score_np(r), rel=1e-15)


def test_a_float_of_an_outer_tracer_returned_from_an_inner_vmap():
    ys = xp.asarray(X)
    f = lambda v: xp.sum(vmap(lambda y: float(xp.sum(v * v)))(ys))   # noqa: E731 (the float is v's, not y's)
    np.testing.assert_allclose(np.asarray(grad(f)(xp.asarray(V))), 4 * 2.0 * V, rtol=1e-15)


def branched(x):
    s = xp.sum(x)
    if float(s) > 0.0:   # (this float is used)
        return float(s)
    return float(s)


def stored(x):
    v = float(xp.sum(x))
    return v


@pytest.mark.parametrize("fn", [branched, stored])
def test_a_float_used_otherwise_keeps_todays_behaviour(fn):
    with pytest.raises(BatchDisagreementError):   # (elements with different values: no one Python value)
        vmap(fn)(xp.asarray(X))
    same = np.stack([X[0], X[0]])
    np.testing.assert_array_equal(np.asarray(vmap(fn)(xp.asarray(same))), [X[0].sum()] * 2)
    with pytest.raises(ConcretizationTypeError):   # (a value carrying a tangent)
        grad(fn)(xp.asarray(V))
    with pytest.raises(ConcretizationTypeError):
        jvp(fn, (xp.asarray(V),), (xp.asarray(V),))


def test_the_placeholder_is_never_seen_where_the_float_is_computed_on():
    # float() + 1 is not returned untouched: the shared value (or the error), never the placeholder
    f = lambda x: float(xp.sum(x)) + 1.0   # noqa: E731
    np.testing.assert_array_equal(np.asarray(vmap(f)(xp.asarray(np.stack([X[0], X[0]])))), [X[0].sum() + 1] * 2)
    with pytest.raises(BatchDisagreementError):
        vmap(f)(xp.asarray(X))


def test_make_jaxpr_and_strict_jit_still_raise():
    with pytest.raises(ConcretizationTypeError):
        make_jaxpr(score)(xp.asarray(V))
    with pytest.raises(ConcretizationTypeError):
        jit(score, guards=False)(xp.asarray(V))
    closed = make_jaxpr(vmap(score))(xp.asarray(X))   # (under vmap the number is an output of the program)
    assert [tuple(a.shape) for a in closed.out_avals] == [(4,)]


def checked_score(x):
    if not xp.all(xp.isfinite(x)):   # (value-dependent Python: a jit under vmap/grad runs this inline)
        raise ValueError("not finite")
    return float(xp.sum(x * x * x) - 2.0 * xp.sum(x))


def test_a_jit_run_inline_under_vmap_and_grad_returns_the_traced_value():
    f = jit(checked_score)
    np.testing.assert_allclose(np.asarray(vmap(f)(xp.asarray(X))), [score_np(r) for r in X], rtol=1e-15)
    np.testing.assert_allclose(np.asarray(grad(f)(xp.asarray(V))), fd(score_np, V), rtol=1e-7)
    got = f(xp.asarray(V))
    assert type(got) is float and got == pytest.approx(score_np(V), rel=1e-15)


def test_a_guarded_jits_float_through_an_inner_jit_is_still_guarded_where_used():
    calls = []

    def outer(x):
        calls.append(1)
        s = jit(checked_score)(x)   # (inline: the float comes back as a float, proven only up to the inner jit)
        return s, (x * 2.0 if s > 0.0 else x * 3.0)   # (returned too: an output that is also a guard)

    f = jit(outer)
    for v in (V, -V, V * 0.5, -V):
        s, y = f(xp.asarray(v))
        assert type(s) is float and s == pytest.approx(score_np(v), rel=1e-15)
        np.testing.assert_array_equal(np.asarray(y), v * 2.0 if score_np(v) > 0.0 else v * 3.0)
    assert len(calls) >= 2   # (a variant per value of the score it branched on: never a stale decision)

    g = jit(lambda x: jit(checked_score)(x))   # (returned on by the outer function: still each call's float)
    for v in (V, -V):
        got = g(xp.asarray(v))
        assert type(got) is float and got == pytest.approx(score_np(v), rel=1e-15)


def test_a_strict_jit_traced_under_vmap_first_still_raises_at_the_top():
    f = jit(score, guards=False)
    np.testing.assert_allclose(np.asarray(vmap(f)(xp.asarray(X))), [score_np(r) for r in X], rtol=1e-15)
    with pytest.raises(ConcretizationTypeError):   # (its trace under vmap, which returned a float, is not reused)
        f(xp.asarray(V))
