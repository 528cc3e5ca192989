"""The eager miss path (a signature -- input avals and params -- never seen before) gives the right aval and kernel.

A new shape's first call computes its output aval with the primitive's shape rule (uncached: the runtime's
per-signature cache is the memo), specialises the kernel, and stores both. The shape rules of elementwise ops
return an operand's own aval where it is exactly the result's (sin(x), x * 2, x + y): no new aval per call. Here,
on sequences of signatures that differ in only one thing (dtype, shape, weak type, params, a broadcast, a 0-d
or Python-scalar operand, an empty axis), each call -- first or repeated -- has the aval the rule defines
(dtype, shape, weak type) and the values of NumPy and of the compiled (jit) program.
"""
import numpy as np
import pytest

import array_namespace as xp
from array_namespace._helpers import wrap
from transforms import jit
from transforms.core import ShapedArray, bind, eval_rule, abstract_eval
from transforms.primitives import elementwise as E
from transforms.primitives import reductions as R
from xla import host
from xla.host import HostValue

pytestmark = pytest.mark.skipif(host.MODE == "xla", reason="host kernels switched off (ARRAY_NAMESPACE_EAGER=xla)")

_rng = np.random.default_rng(7)


def _hv(a, weak=False):
    a = np.asarray(a)
    return HostValue(a, ShapedArray(a.shape, a.dtype, weak))


def _data(shape, dt):
    dt = np.dtype(dt)
    if dt == np.bool_:
        return _rng.random(shape) < 0.5
    if dt.kind in "iu":
        return _rng.integers(0, 9, shape).astype(dt)
    if dt.kind == "c":
        return (_rng.standard_normal(shape) + 1j * _rng.standard_normal(shape)).astype(dt)
    return _rng.standard_normal(shape).astype(dt)


def _check(out, want, aval, what):
    """`out` (an eager value) has exactly `aval` and the values `want` (NaN == NaN)."""
    assert out.aval == aval, (what, out.aval, aval)
    got = np.asarray(out.np if type(out) is HostValue else out)
    assert got.dtype == aval.dtype and got.shape == aval.shape, (what, got.dtype, got.shape)
    if got.dtype.kind in "fc":
        np.testing.assert_allclose(got, want, rtol=1e-5 if got.dtype.itemsize <= 8 else 1e-12, err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


def _jit_of(prim, **params):
    """The primitive compiled (jit), on Arrays."""
    return jit(lambda *xs: wrap(bind(prim, *[x._v for x in xs], **params)))


# one operand's shape and dtype changing, call after call, for each primitive kind (a fresh signature each time,
# then again: the cached entry)
_SHAPES = [(3,), (4,), (3,), (2, 3), (3, 2), (1, 3), (), (0,), (2, 0, 3), (3,)]


@pytest.mark.parametrize("dt", ["float32", "float64", "int32", "complex64"])
def test_unary_across_new_shapes_and_dtypes(dt):
    for shape in _SHAPES:
        x = _data(shape, dt)
        for prim, ref, out_dt in ((E.neg_p, np.negative, dt), (E.abs_p, np.abs, np.abs(x).dtype),
                                  (E.is_finite_p, np.isfinite, np.bool_)):
            if prim is E.is_finite_p and np.dtype(dt).kind != "f":   # (the namespace takes complex apart first)
                continue
            want = ref(x)
            aval = ShapedArray(shape, out_dt)
            _check(bind(prim, _hv(x)), want, aval, (prim, shape, dt))
            _check(bind(prim, _hv(x)), want, aval, (prim, shape, dt, "again"))
            np.testing.assert_allclose(np.asarray(_jit_of(prim)(xp.asarray(x))), want)


def test_unary_keeps_the_weak_type_and_only_where_the_dtype_is_kept():
    for shape in [(), (3,), (2, 2)]:
        x = _data(shape, "float64")
        w = _hv(x, weak=True)
        _check(bind(E.sin_p, w), np.sin(x), ShapedArray(shape, np.float64, True), ("sin weak", shape))
        _check(bind(E.sin_p, _hv(x)), np.sin(x), ShapedArray(shape, np.float64), ("sin strong", shape))
        z = (x + 1j * x).astype(np.complex128)
        _check(bind(E.abs_p, _hv(z, weak=True)), np.abs(z), ShapedArray(shape, np.float64), ("abs weak", shape))
        # the rule hands back the operand's own aval where it is the result's (same shape, dtype and weak type)
        a = ShapedArray(shape, np.float64, True)
        assert eval_rule(E.sin_p, (a,), {}) is a
        assert abstract_eval(E.is_finite_p, [a], {}) == ShapedArray(shape, np.bool_)


@pytest.mark.parametrize("dt", ["float32", "float64", "int64", "bool"])
def test_binary_broadcasts_and_weak_scalars_across_new_signatures(dt):
    prim, ref = (E.or_p, np.logical_or) if dt == "bool" else (E.add_p, np.add)
    pairs = [((3,), (3,)), ((3,), ()), ((), (3,)), ((2, 1), (1, 4)), ((1, 4), (2, 1)), ((4,), (2, 4)),
             ((2, 4), (4,)), ((0, 3), (1, 3)), ((), ()), ((3,), (3,))]
    f = _jit_of(prim)
    for s1, s2 in pairs:
        x, y = _data(s1, dt), _data(s2, dt)
        want = ref(x, y).astype(dt)
        shape = np.broadcast_shapes(s1, s2)
        for w1, w2 in ((False, False), (True, False), (False, True), (True, True)):
            out = bind(prim, _hv(x, w1), _hv(y, w2))
            _check(out, want, ShapedArray(shape, dt, w1 and w2), (s1, s2, w1, w2))
        np.testing.assert_array_equal(np.asarray(f(xp.asarray(x), xp.asarray(y))), want)


def test_a_binary_result_shares_the_operand_aval_that_equals_it():
    strong, weak0 = ShapedArray((3,), np.float32), ShapedArray((), np.float32, True)
    weak3 = ShapedArray((3,), np.float32, True)
    assert eval_rule(E.mul_p, (strong, weak0), {}) is strong
    assert eval_rule(E.mul_p, (weak0, strong), {}) is strong
    assert eval_rule(E.mul_p, (weak3, strong), {}) is strong   # (weak and strong: strong)
    assert eval_rule(E.mul_p, (weak3, weak0), {}) is weak3
    out = eval_rule(E.mul_p, (ShapedArray((2, 1), np.float32), ShapedArray((1, 3), np.float32)), {})
    assert out == ShapedArray((2, 3), np.float32)
    assert eval_rule(E.lt_p, (strong, strong), {}) == ShapedArray((3,), np.bool_)
    with pytest.raises(TypeError, match="share a dtype"):
        eval_rule(E.mul_p, (strong, ShapedArray((3,), np.float64)), {})
    with pytest.raises(ValueError, match="cannot be broadcast"):
        eval_rule(E.mul_p, (strong, ShapedArray((4,), np.float32)), {})


def test_namespace_scalar_operands_on_new_shapes_equal_numpy_and_jit():
    f = jit(lambda a: xp.sin(a) * 2 + 1)
    for n in (5, 6, 7, 5):
        for dt in (xp.float32, xp.float64):
            x = _data((n, 2), "float32" if dt == xp.float32 else "float64")
            a = xp.asarray(x)
            out = xp.sin(a) * 2 + 1
            assert out.dtype == dt and out.shape == (n, 2)
            np.testing.assert_allclose(np.asarray(out), np.sin(x) * 2 + 1, rtol=1e-6)
            np.testing.assert_allclose(np.asarray(out), np.asarray(f(a)), rtol=1e-6)
            i = xp.asarray(np.arange(n, dtype=np.int32))
            assert (i * 3).dtype == xp.int32
            np.testing.assert_array_equal(np.asarray(i * 3), np.arange(n, dtype=np.int32) * 3)


def test_a_python_scalar_operand_reaching_bind_uses_the_general_kernel():
    x = _data((3,), "float64")
    for s in (2.0, 3.0, 2.0):
        out = bind(E.mul_p, _hv(x), s)
        _check(out, x * s, ShapedArray((3,), np.float64), ("py scalar", s))
        out = bind(E.mul_p, s, _hv(x))
        _check(out, x * s, ShapedArray((3,), np.float64), ("py scalar left", s))


@pytest.mark.parametrize("dt", ["float32", "float64", "int32", "bool", "complex128"])
def test_reductions_across_new_shapes_and_axes(dt):
    cases = [((3, 4), (0, 1)), ((3, 4), (0,)), ((3, 4), (1,)), ((3, 4), ()), ((4, 3), (0, 1)), ((2, 3, 4), (0, 2)),
             ((2, 3, 4), (2, 1, 0)), ((0, 3), (0,)), ((0, 3), (1,)), ((3, 0), (0, 1)), ((3, 4), (0, 1))]
    prims = [(R.reduce_sum_p, np.sum), (R.reduce_max_p, np.max)]
    if dt == "bool":
        prims = [(R.reduce_or_p, np.any)]
    for shape, axes in cases:
        x = _data(shape, dt)
        for prim, ref in prims:
            if ref is np.max and (x.size == 0 or np.dtype(dt).kind == "c"):
                continue
            want = np.asarray(ref(x, axis=axes)).astype(dt)
            out_shape = tuple(d for i, d in enumerate(shape) if i not in axes)
            for weak in (False, True):
                out = bind(prim, _hv(x, weak), axes=axes)
                _check(out, want, ShapedArray(out_shape, dt, weak), (prim, shape, axes, weak))
            np.testing.assert_allclose(np.asarray(_jit_of(prim, axes=axes)(xp.asarray(x))), want, rtol=1e-5)


def test_reduction_rule_refuses_bad_axes_and_counts_a_repeated_axis_once():
    a = ShapedArray((2, 3), np.float32)
    with pytest.raises(ValueError, match="out of range"):
        eval_rule(R.reduce_sum_p, (a,), {"axes": (2,)})
    assert eval_rule(R.reduce_sum_p, (a,), {"axes": (0, 1)}) == ShapedArray((), np.float32)
    # a repeated axis is not "all axes": the rule keeps the axis it was not given
    assert eval_rule(R.reduce_sum_p, (a,), {"axes": (0, 0)}) == ShapedArray((3,), np.float32)


def test_namespace_sum_on_new_shapes_equals_numpy_and_jit():
    f = jit(lambda a: xp.sum(a))
    g = jit(lambda a: xp.sum(a, axis=1))
    for shape in [(3, 5), (5, 3), (3, 5), (1, 7), (7, 1), (2, 0)]:
        for dt in ("float32", "int32", "bool"):
            x = _data(shape, dt)
            a = xp.asarray(x)
            want = np.sum(x, dtype=np.float32 if dt == "float32" else np.int64)
            assert xp.sum(a).dtype == (xp.float32 if dt == "float32" else xp.int64)
            np.testing.assert_allclose(np.asarray(xp.sum(a)), want, rtol=1e-5)
            np.testing.assert_allclose(np.asarray(f(a)), want, rtol=1e-5)
            np.testing.assert_allclose(np.asarray(xp.sum(a, axis=1)), np.asarray(g(a)), rtol=1e-5)


def test_reduction_rule_per_rank_and_axes_and_dtype():
    """The kept axes are remembered per (rank, axes): other shapes of that rank get their own sizes, another rank
    or axes its own check; a full reduction's 0-d aval is shared per (dtype, weak type)."""
    for shape in [(2, 3), (5, 7), (0, 4)]:
        for axes, want in [((0,), shape[1:]), ((1,), shape[:1]), ((0, 1), ()), ((1, 0), ()), ((), shape)]:
            for dt, weak in [(np.float32, False), (np.float32, True), (np.int64, False)]:
                out = eval_rule(R.reduce_sum_p, (ShapedArray(shape, dt, weak),), {"axes": axes})
                assert out == ShapedArray(want, dt, weak), (shape, axes, dt, weak, out)
    with pytest.raises(ValueError, match="out of range"):
        eval_rule(R.reduce_sum_p, (ShapedArray((2,), np.float32),), {"axes": (1,)})
    assert eval_rule(R.reduce_sum_p, (ShapedArray((2, 3), np.float32),), {"axes": [1]}) == ShapedArray((2,), np.float32)
    a = eval_rule(R.reduce_sum_p, (ShapedArray((2, 3), np.float32),), {"axes": (0, 1)})
    assert a is eval_rule(R.reduce_sum_p, (ShapedArray((4,), np.float32),), {"axes": (0,)})
    assert eval_rule(R.argmax_p, (ShapedArray((4, 2), np.float32),), {"axes": (0,), "index_dtype": np.dtype(np.int32)}) \
        == ShapedArray((2,), np.int32)


def test_a_refused_signature_raises_the_rules_error_every_time_and_caches_nothing():
    from transforms.primitives import structural as S
    x = _hv(np.ones((2, 3)))
    for _ in range(2):   # (the rule runs before the kernel is specialised: no IndexError from a bad axis)
        with pytest.raises(ValueError, match="out of range"):
            bind(R.reduce_sum_p, x, axes=(2,))
        with pytest.raises(ValueError, match="cannot reshape"):
            bind(S.reshape_p, x, new_sizes=(4, 2))
        with pytest.raises(ValueError, match="cannot reshape"):
            bind(S.reshape_p, x, new_sizes=(-2, -3))
        with pytest.raises(ValueError, match="cannot broadcast"):
            bind(S.broadcast_in_dim_p, x, shape=(2, 4), broadcast_dimensions=(0, 1))
        with pytest.raises(ValueError, match="not a permutation"):
            bind(S.transpose_p, x, permutation=(0, 0))
    _check(bind(R.reduce_sum_p, x, axes=(1,)), np.full(2, 3.0), ShapedArray((2,), np.float64), "after")
    _check(bind(S.reshape_p, x, new_sizes=(3, 2)), np.ones((3, 2)), ShapedArray((3, 2), np.float64), "reshape")
    _check(bind(S.reshape_p, _hv(np.ones((0, 3))), new_sizes=(3, 0)), np.ones((3, 0)),
           ShapedArray((3, 0), np.float64), "reshape empty")
    _check(bind(S.broadcast_in_dim_p, _hv(np.ones((1, 3))), shape=(2, 4, 3), broadcast_dimensions=(1, 2)),
           np.ones((2, 4, 3)), ShapedArray((2, 4, 3), np.float64), "broadcast")
    _check(bind(S.transpose_p, _hv(np.arange(6.0).reshape(2, 3)), permutation=(1, 0)),
           np.arange(6.0).reshape(2, 3).T, ShapedArray((3, 2), np.float64), "transpose")


def test_broadcast_shapes_and_select_n_across_new_signatures():
    from transforms.primitives.elementwise import broadcast_shapes
    for shapes in [((3,), (3,), (3,)), ((), (3,), ()), ((), (), ()), ((2, 3), (), (2, 3)), ((2, 1), (3,), ()),
                   ((4,), (2, 1), (1, 4)), ((0, 3), (), (1, 3)), ((5,),), ((),)]:
        assert broadcast_shapes(*shapes) == np.broadcast_shapes(*shapes), shapes
    with pytest.raises(ValueError, match="cannot be broadcast"):
        broadcast_shapes((3,), (), (4,))
    f = jit(lambda c, a, b: xp.where(c, a, b))
    for shape, cshape, bshape in [((4, 3), (4, 3), ()), ((4, 3), (), (4, 3)), ((5,), (5,), (5,)), ((2, 1), (1, 3), ()),
                                  ((4, 3), (4, 3), ())]:
        for dt in ("float32", "int64"):
            a, b = _data(shape, dt), _data(bshape, dt)
            c = _rng.random(cshape) < 0.5
            want = np.where(c, a, b)
            out = xp.where(xp.asarray(c), xp.asarray(a), xp.asarray(b))
            assert out.dtype == xp.asarray(a).dtype and out.shape == want.shape
            np.testing.assert_array_equal(np.asarray(out), want)
            np.testing.assert_array_equal(np.asarray(f(xp.asarray(c), xp.asarray(a), xp.asarray(b))), want)
            o = bind(E.select_n_p, _hv(c), _hv(b, True), _hv(a))   # (cases: weak and strong; select_n picks b at False)
            _check(o, np.where(c, a, b), ShapedArray(want.shape, dt), ("select_n", shape, cshape, bshape))
    strong = ShapedArray((3,), np.float32)
    assert eval_rule(E.select_n_p, (ShapedArray((3,), np.bool_), strong, strong), {}) is strong
