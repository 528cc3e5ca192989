"""transforms/batching.py at the engine level: BatchTrace dispatch (own tracers vs passthrough),
BatchTracer avals, move_to, vmap_flat's batch dims, a primitive without a batching rule, and the
in_axes/out_axes normalisation errors. Values against a Python loop over NumPy.
(The user-facing vmap compositions are in test_vmap.py.)"""
import numpy as np
import pytest

import array_namespace as xp
from transforms import vmap
from transforms.batching import BatchTrace, BatchTracer, move_to, vmap_flat
from transforms.core import EVAL, Primitive, ShapedArray, abstract_eval_rules, set_trace
from transforms.primitives import elementwise as E
from transforms.primitives import reductions as R


def _raw(a):
    return xp.asarray(np.asarray(a))._v


def _np(v):
    return np.asarray(xp.asarray(v))


def test_batch_tracer_aval_drops_the_batch_axis():
    trace = BatchTrace(EVAL, 4)
    t = BatchTracer(trace, _raw(np.zeros((2, 4, 3), np.float32)), 1)
    assert t.aval == ShapedArray((2, 3), np.float32)
    with pytest.raises(TypeError, match="vmap"):
        t.concrete("bool()")
    with pytest.raises(TypeError, match="batch axis"):
        t.host_value("np.asarray")


def test_unbatched_work_passes_to_the_parent_untouched():
    trace = BatchTrace(EVAL, 3)
    with set_trace(trace):
        out = E.mul(_raw([1.0, 2.0]), np.float64(3.0))
    assert not isinstance(out, BatchTracer)
    np.testing.assert_array_equal(_np(out), [3.0, 6.0])


@pytest.mark.parametrize("dims", [(0, 0), (1, 0), (0, None), (None, 1)])
def test_vmap_flat_matches_a_loop(dims):
    rng = np.random.default_rng(0)
    n = 4
    shapes = [(3,) if d is None else ((n, 3) if d == 0 else (3, n)) for d in dims]
    x, y = (rng.standard_normal(s) for s in shapes)

    def f(a, b):
        return [E.mul(E.sin_p.bind(a), b), R.reduce_sum(b, (0,))]
    outs, odims = vmap_flat(f, [_raw(x), _raw(y)], list(dims), n)
    take = lambda v, d, i: v if d is None else np.take(v, i, axis=d)
    for i in range(n):
        xi, yi = take(x, dims[0], i), take(y, dims[1], i)
        np.testing.assert_allclose(np.take(_np(outs[0]), i, axis=odims[0]), np.sin(xi) * yi, rtol=1e-14)
        got1 = _np(outs[1]) if odims[1] is None else np.take(_np(outs[1]), i, axis=odims[1])
        np.testing.assert_allclose(got1, yi.sum(), rtol=1e-14)
    assert odims[1] is None if dims[1] is None else odims[1] is not None


def test_move_to_places_or_broadcasts_the_batch_axis():
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(_np(move_to(_raw(x), 0, 1, 2)), x.T)
    np.testing.assert_array_equal(_np(move_to(_raw(x), None, 1, 4)), np.broadcast_to(x[:, None], (2, 4, 3)))


def test_primitive_without_a_batching_rule_names_itself():
    p = Primitive("no_batch_rule_here")
    abstract_eval_rules[p] = lambda x: x
    try:
        with pytest.raises(NotImplementedError, match="cannot vmap 'no_batch_rule_here': no batching rule"):
            vmap(lambda x: xp.asarray(p.bind(x._v)))(xp.ones((2, 3)))
    finally:
        del abstract_eval_rules[p]


def test_declared_gap_reason_is_in_the_error():
    from transforms.primitives import structural as S
    trace = BatchTrace(EVAL, 2)
    with pytest.raises(NotImplementedError, match="takes no operands"):
        trace.process(S.iota_p, [BatchTracer(trace, _raw(np.zeros((2, 3))), 0)], {})


@pytest.mark.parametrize("in_axes, out_axes", [(1, 0), (-1, -1), (0, 1), ((0, None), -2)])
def test_axes_normalisation_matches_a_loop(in_axes, out_axes):
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal((4, 4)), rng.standard_normal(4)
    two = isinstance(in_axes, tuple)
    f = (lambda a, b: xp.sin(a) * b) if two else (lambda a: xp.sin(a) * 2.0)
    args = (xp.asarray(x), xp.asarray(y)) if two else (xp.asarray(x),)
    got = np.asarray(vmap(f, in_axes=in_axes, out_axes=out_axes)(*args))
    ax = in_axes[0] if two else in_axes
    rows = [np.sin(np.take(x, i, axis=ax)) * (y if two else 2.0) for i in range(4)]
    np.testing.assert_allclose(got, np.stack(rows, axis=out_axes), rtol=1e-14)


@pytest.mark.parametrize("kw, args, match, exc", [
    ({"in_axes": 2}, (np.ones((2, 3)),), "in_axes=2 is out of range for an argument with 2 dimensions", ValueError),
    ({"in_axes": "0"}, (np.ones(3),), "in_axes entries must be int or None", TypeError),
    ({"in_axes": None}, (np.ones(3),), "needs at least one mapped argument", ValueError),
    ({"axis_size": 5}, (np.ones(3),), "axis_size=5 but the mapped arguments have size 3", ValueError),
    ({"out_axes": None}, (np.ones(3),), "out_axes=None but the output varies", ValueError),
    ({"out_axes": 3}, (np.ones((3, 2)),), "out_axes=3 is out of range", ValueError),
])
def test_axis_errors(kw, args, match, exc):
    with pytest.raises(exc, match=match):
        vmap(lambda x: x * 2.0, **kw)(*[xp.asarray(a) for a in args])


def test_not_callable():
    with pytest.raises(TypeError, match="vmap expects a callable, got int"):
        vmap(3)


def test_out_axes_none_for_an_unbatched_output():
    out = vmap(lambda x: (x * 2.0, xp.ones(2)), out_axes=(0, None))(xp.asarray(np.arange(3.0)))
    np.testing.assert_array_equal(np.asarray(out[0]), [0.0, 2.0, 4.0])
    np.testing.assert_array_equal(np.asarray(out[1]), [1.0, 1.0])


def test_escaped_batch_tracer_is_rejected():
    leak = []
    vmap(lambda x: leak.append(x) or x)(xp.ones(3))
    with pytest.raises(Exception, match="vmap tracer was used after its vmap finished"):
        vmap(lambda y: y + leak[0])(xp.ones(3))
