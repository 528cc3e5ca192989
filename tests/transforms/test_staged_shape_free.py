"""staged_call(shape_free=True): a pointwise by_op body staged once per dtypes runs eagerly at every shape.

Oracles: the exact-shape path (the body staged at the operands' own shape and run op by op: the shape-free
path switched off) bit for bit; NumPy; jit of the same function (one compiled executable) to rounding;
the staging cache's miss count for "staged once"; the runtime's compile counter for "no compile"; bodies
with a shape-dependent equation for "not taken shape-free" (each would give a wrong shape or wrong values
if it were).
"""
import numpy as np
import pytest

import array_namespace as xp
from transforms import jit
from transforms import jaxpr_transforms as JT
from transforms.core import bind, get_aval
from transforms.jaxpr_transforms import staged_call
from transforms.primitives import elementwise as E
from transforms.primitives import reductions as R
from transforms.primitives import structural as S
from xla import host, host_eager, runtime

pytestmark = pytest.mark.skipif(host.MODE == "xla", reason="host kernels switched off (ARRAY_NAMESPACE_EAGER=xla)")

SHAPES = [(5,), (1,), (0,), (2, 3), (0, 4), (3, 1, 2), (17,)]
SPECIALS = [0.0, -0.0, 1.0, -2.5, 1e-300, 700.0, 720.0, np.inf, -np.inf, np.nan]


def _values(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    re = rng.standard_normal(n) * 3
    im = rng.standard_normal(n) * 3
    sp = np.array(SPECIALS)
    k = min(n, 8)
    re[:k], im[:k] = sp[rng.integers(0, len(sp), k)], sp[rng.integers(0, len(sp), k)]
    if np.dtype(dtype).kind == "c":
        z = np.empty(n, dtype)
        z.real, z.imag = re, im              # (not re + 1j * im: 1j * inf has a NaN real part)
        return z.reshape(shape)
    return re.astype(dtype).reshape(shape)


def _bits(a):
    a = np.ascontiguousarray(np.asarray(a))
    return a.shape, a.dtype, a.view(np.uint8).tobytes()


def _exact(monkeypatch, f, *args):
    """f(*args) eagerly through the exact-shape path (staged at the operands' own shape)."""
    with monkeypatch.context() as m:
        m.setattr(JT, "_eager_shape_free", lambda *a: None)
        return f(*args)


FUNCS = [xp.exp, xp.sin, xp.expm1, xp.log, xp.sqrt, xp.tanh, xp.log1p, xp.acos]


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_functions_on_new_shapes_equal_the_exact_path_bit_for_bit_staged_once(fresh_staged, monkeypatch,
                                                                                      dtype):
    for f in FUNCS:
        xs = [_values(s, dtype, i) for i, s in enumerate(SHAPES)]
        f(xp.asarray(xs[0]))                                   # the template: staged at (5,)
        misses, compiles = JT._staged_jaxpr.cache_info().misses, runtime.compile_calls[0]
        got = [f(xp.asarray(x)) for x in xs]
        assert JT._staged_jaxpr.cache_info().misses == misses, f"{f.__name__} staged again at a new shape"
        assert runtime.compile_calls[0] == compiles, f"{f.__name__} compiled on a new shape"
        assert [g.shape for g in got] == [x.shape for x in xs] and all(g.dtype == xp.asarray(x).dtype
                                                                        for g, x in zip(got, xs))
        for x, g in zip(xs, got):
            assert _bits(g) == _bits(_exact(monkeypatch, f, xp.asarray(x))), (f.__name__, x.shape)


def test_zero_d_operand_runs_the_exact_path_and_agrees(fresh_staged, monkeypatch):
    for dtype in (np.complex64, np.complex128):
        for v in (1.5 - 2j, complex(np.inf, 1.0), complex(-0.0, np.nan)):
            z = xp.asarray(np.asarray(v, dtype))
            for f in (xp.exp, xp.sin, xp.expm1):
                g = f(z)
                assert g.shape == () and _bits(g) == _bits(_exact(monkeypatch, f, z))


def test_shape_free_equals_jit_to_rounding(fresh_staged):
    for dtype, tol in ((np.complex64, 2e-6), (np.complex128, 1e-14)):
        xs = [_values(shape, dtype, 3) for shape in ((6,), (2, 4))]
        xs = [np.where(np.isfinite(x), x, 0.5 + 0.25j).astype(dtype) for x in xs]   # (jit: finite, compared normwise)
        for f in (xp.exp, xp.sin, xp.expm1):
            # the jit oracle on both operands at once (elementwise: one compile, not one per shape)
            compiled = np.asarray(jit(f)(xp.asarray(np.concatenate([x.ravel() for x in xs]))))
            for x, want in zip(xs, np.split(compiled, [xs[0].size])):
                eager = np.asarray(f(xp.asarray(x)))
                assert eager.dtype == want.dtype == dtype
                np.testing.assert_allclose(eager, want.reshape(x.shape), rtol=tol, atol=0)


# ------------------------------------------------------------- bodies written here
def _two(a, b):
    """a * b + exp(b) (b 0-d or a's shape) and b * b + 1 (0-d where b is)."""
    return [bind(E.add_p, bind(E.mul_p, a, b), bind(E.exp_p, b)),
            bind(E.add_p, bind(E.mul_p, b, b), E.convert_element_type(1.0, get_aval(b).dtype, weak_type=True))]


def _two_call(a, b, shape_free=True):
    return staged_call(_two, [a._v, b._v], "two", by_op=True, shape_free=shape_free)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_zero_d_operands_broadcast_as_the_exact_path(fresh_staged, dtype):
    rng = np.random.default_rng(1)
    b = np.asarray(rng.standard_normal(), dtype)
    bx = xp.asarray(b)
    _two_call(xp.asarray(np.ones(4, dtype)), bx)               # the template at (4,)
    misses, compiles = JT._staged_jaxpr.cache_info().misses, runtime.compile_calls[0]
    shapes = ((3,), (0,), (2, 5), (1, 1, 1))
    xs = [_values(shape, dtype, 2) for shape in shapes]
    outs = [_two_call(xp.asarray(a), bx) for a in xs]
    assert JT._staged_jaxpr.cache_info().misses == misses and runtime.compile_calls[0] == compiles
    for shape, a, out in zip(shapes, xs, outs):
        p, q = (np.asarray(runtime._np_of(o)) for o in out)
        assert p.shape == shape and q.shape == () and p.dtype == q.dtype == dtype
        with np.errstate(all="ignore"):
            np.testing.assert_allclose(p, a * b + np.exp(b), rtol=1e-5 if dtype in (np.float32, np.complex64) else 1e-14)
        exact = _two_call(xp.asarray(a), bx, shape_free=False)
        assert [_bits(runtime._np_of(o)) for o in out] == [_bits(runtime._np_of(o)) for o in exact]
    # operands of two different non-0-d shapes: not shape-free (the exact path's error, as before)
    with pytest.raises(Exception):
        _two_call(xp.asarray(np.ones(3, dtype)), xp.asarray(np.ones(2, dtype)))


def _sum_all(a):
    return [bind(R.reduce_sum_p, a, axes=tuple(range(get_aval(a).ndim)))]


def _plus_iota(a):
    n = get_aval(a).shape
    return [bind(E.add_p, a, S.broadcast_in_dim(E.convert_element_type(2.0, get_aval(a).dtype, weak_type=False),
                                                 n, ()))]


def _plus_const(a):
    return [bind(E.add_p, a, np.arange(np.prod(get_aval(a).shape), dtype=get_aval(a).dtype).reshape(get_aval(a).shape))]


@pytest.mark.parametrize("body, oracle", [
    (_sum_all, lambda x: np.sum(x)),
    (_plus_iota, lambda x: x + 2.0),
    (_plus_const, lambda x: x + np.arange(x.size, dtype=x.dtype).reshape(x.shape)),
])
def test_a_shape_dependent_body_is_not_taken_shape_free(fresh_staged, body, oracle):
    """Each body embeds its shape (a reduction's axes, a broadcast's shape, a constant of the operands'
    shape): run shape-free at another shape it would give a wrong shape or wrong values."""
    for shape in ((4,), (2, 3), (3,), (5,)):
        x = np.arange(np.prod(shape), dtype=np.float64).reshape(shape) + 0.5
        (out,) = staged_call(body, [xp.asarray(x)._v], body.__name__, by_op=True, shape_free=True)
        got = np.asarray(runtime._np_of(out))
        np.testing.assert_array_equal(got, oracle(x))
    assert [e for k, e in JT._FREE.items() if k[0] is body] == [False]


def test_a_hot_signature_stays_on_its_template_with_the_same_bits(fresh_staged):
    x = _values((6,), np.complex128, 4)
    x = np.where(np.isfinite(x), x, 0.5 - 0.5j)
    xp.exp(xp.asarray(np.ones(3, np.complex128)))             # the template at (3,)
    before = runtime.compile_calls[0]
    misses = JT._staged_jaxpr.cache_info().misses
    seen = {np.asarray(xp.exp(xp.asarray(x))).tobytes() for _ in range(200)}   # (6,): however hot
    assert runtime.compile_calls[0] == before and JT._staged_jaxpr.cache_info().misses == misses
    assert len(seen) == 1
    np.testing.assert_allclose(np.frombuffer(seen.pop(), np.complex128), np.exp(x), rtol=1e-14)


def test_large_operands_compile_at_once(fresh_staged, monkeypatch):
    monkeypatch.setattr(host_eager, "BY_OP_MAX_ELEMENTS", 8)
    xp.exp(xp.asarray(np.ones(3, np.complex128)))             # the template at (3,): op by op
    before = runtime.compile_calls[0]
    x = np.linspace(-1, 1, 12) + 0.5j
    got = np.asarray(xp.exp(xp.asarray(x)))                   # 12 > 8 elements: compiled at once
    assert runtime.compile_calls[0] == before + 1
    np.testing.assert_allclose(got, np.exp(x), rtol=1e-14)


def test_under_transforms_the_exact_jaxpr_is_staged(fresh_staged):
    from transforms import grad, make_jaxpr, vmap
    x = np.array([0.3 + 0.2j, -1.0 + 2.0j, 0.5 - 0.1j])
    jx = make_jaxpr(lambda a: xp.exp(a))(xp.asarray(x))
    assert "c128[3]" in str(jx)
    v = np.asarray(vmap(xp.exp)(xp.asarray(x.reshape(3, 1))))
    np.testing.assert_allclose(v, np.exp(x.reshape(3, 1)), rtol=1e-14)
    g = grad(lambda t: xp.real(xp.exp(t * (1 + 1j))))(xp.asarray(0.3))
    np.testing.assert_allclose(float(g), np.real((1 + 1j) * np.exp(0.3 * (1 + 1j))), rtol=1e-13)


def _exp_plus(a):
    return [bind(E.add_p, bind(E.exp_p, a), E.convert_element_type(1.0, get_aval(a).dtype, weak_type=True))]


def test_a_kernel_declining_a_value_binds_it_at_the_operands_own_shape(fresh_staged, monkeypatch):
    """The declined equation runs through its eager impl on a value of the call's shape, not the template's."""
    kernel = host.host_kernels[E.exp_p]
    declined = []

    def picky(x, **params):
        if np.any(np.asarray(x) == 42.0):
            declined.append(np.shape(x))
            return NotImplemented
        return kernel(x, **params)
    monkeypatch.setitem(host.host_kernels, E.exp_p, picky)
    staged_call(_exp_plus, [xp.asarray(np.zeros(3))._v], "exp_plus", by_op=True, shape_free=True)   # template (3,)
    misses = JT._staged_jaxpr.cache_info().misses
    x = np.array([[0.5, 42.0], [-1.0, 2.0]])
    (out,) = staged_call(_exp_plus, [xp.asarray(x)._v], "exp_plus", by_op=True, shape_free=True)
    assert JT._staged_jaxpr.cache_info().misses == misses and (2, 2) in declined
    got = np.asarray(runtime._np_of(out))
    assert got.shape == (2, 2)
    np.testing.assert_allclose(got, np.exp(x) + 1, rtol=1e-15)
