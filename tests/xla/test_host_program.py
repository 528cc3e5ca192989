"""xla/host_program.py: a jaxpr compiled once into steps over slots, run on NumPy arrays.

Oracles: jit of the same function (one compiled XLA executable) for values, on special values
(NaN, +-inf, -0.0, huge, tiny) per float dtype and on integer edge cases (wraparound, division by
zero: those run through the registered kernels, not a bare ufunc); the registered kernel table for
which steps call what.
"""
import numpy as np
import pytest

import array_namespace as xp
from transforms import jit, make_jaxpr, scan, stop_gradient, switch, while_loop
from transforms.jaxpr import eval_jaxpr
from transforms.primitives import elementwise as E
from xla import host, host_program

pytestmark = pytest.mark.skipif(host.MODE == "xla", reason="host kernels switched off (ARRAY_NAMESPACE_EAGER=xla)")

_SPECIAL = [0.0, -0.0, 1.0, -2.5, np.inf, -np.inf, np.nan, 1e300, -1e-300, 3.0]   # (no subnormals: XLA flushes them)


def _run(f, *args):
    closed = make_jaxpr(f)(*args)
    vals = [np.asarray(a) for a in args]
    outs = host_program.run(closed, vals)
    return closed, outs


def _check(f, *args):
    """Bit for bit what binding each equation eagerly gives (the registered kernels), and jit's values to a
    few ulps (XLA turns a division by a constant into a product)."""
    closed, outs = _run(f, *args)
    by_bind = eval_jaxpr(closed.jaxpr, closed.consts, *[a._v for a in args])
    ref = jit(f)(*args)
    ref = list(ref) if isinstance(ref, (tuple, list)) else [ref]
    assert len(outs) == len(ref) == len(by_bind)
    for o, b, r, a in zip(outs, by_bind, ref, closed.out_avals):
        assert type(o) is np.ndarray and o.dtype == a.dtype and o.shape == a.shape, (type(o), o.dtype, a)
        np.testing.assert_array_equal(o, np.asarray(b))
        if o.dtype.kind == "f":   # signs of zeros too (a NaN's sign means nothing)
            np.testing.assert_array_equal(np.signbit(o) & ~np.isnan(o), np.signbit(np.asarray(b)) & ~np.isnan(o))
            np.testing.assert_allclose(o, np.asarray(r), rtol=4 * np.finfo(o.dtype).eps,
                                       atol=0)
        else:
            np.testing.assert_array_equal(o, np.asarray(r))
    return outs


def _float_body(x, y):
    s = x * y + (x - y) / (y + 0.5)
    c = (x < y) | ((x == y) & ~(x != x))
    t = xp.where(c, xp.abs(s), -s)
    u = xp.where(x >= 1.0, xp.sqrt(xp.abs(x)) * xp.log1p(xp.abs(y)), t / 3.0)
    return t, u, c, xp.exp(-xp.abs(u)) > 0.5


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(), (10,), (2, 0)])
def test_float_ops_equal_jit_on_special_values_and_every_result_is_an_ndarray(dtype, shape):
    dt = getattr(xp, dtype)
    with np.errstate(over="ignore"):     # (1e300 is inf in float32)
        special = np.array(_SPECIAL, dtype)
    n = int(np.prod(shape))
    if shape == ():
        pairs = [(a, b) for a in special[:6] for b in special[4:]]
    else:
        pairs = [(special[:n].reshape(shape), special[::-1][:n].reshape(shape))]
    for a, b in pairs:
        _check(_float_body, xp.asarray(np.asarray(a), dtype=dt), xp.asarray(np.asarray(b), dtype=dt))


def test_integer_ops_keep_xla_semantics():
    """Integer arithmetic runs through the registered kernels: wraparound, x / 0 = -1, x % 0 = x."""
    x = xp.asarray(np.array([2**31 - 1, -2**31, 7, -7, 5], np.int32))
    y = xp.asarray(np.array([1, -1, 0, 2, 0], np.int32))
    outs = _check(lambda a, b: (a + b, a * b, a // xp.where(b == 0, 0, b), a - b, a == b), x, y)
    assert outs[0][0] == -2**31


def test_a_kernel_replaced_after_import_is_the_one_that_runs(monkeypatch):
    """A direct ufunc step is used only while the registered kernel is the table's own."""
    calls = []
    kernel = host.host_kernels[E.add_p]

    def counting(x, y):
        calls.append(1)
        return kernel(x, y)
    monkeypatch.setitem(host.host_kernels, E.add_p, counting)
    monkeypatch.setattr(host_program, "_programs", {})
    x = xp.asarray(np.arange(3.0))
    _check(lambda a: a + a, x)
    assert calls


def test_a_declined_value_binds_that_equation(monkeypatch):
    kernel = host.host_kernels[E.cos_p]
    monkeypatch.setitem(host.host_kernels, E.cos_p, lambda x: NotImplemented if np.any(x > 1) else kernel(x))
    monkeypatch.setattr(host_program, "_programs", {})
    _check(lambda a: xp.cos(a) * 2.0, xp.asarray(np.array([0.5, 2.0])))


def _nested(x):
    def outer_body(c):
        i, v = c
        j, w = while_loop(lambda d: d[0] < i, lambda d: (d[0] + 1, d[1] * 1.5 + 1.0), (xp.asarray(0), v))
        return i + 1, w - xp.astype(j, w.dtype)
    return while_loop(lambda c: c[0] < 5, outer_body, (xp.asarray(0), x))


def test_nested_loops_run_in_place_and_equal_jit():
    closed, _ = _run(_nested, xp.asarray(np.array([1.0, -2.0, np.nan])))
    pr = host_program.program(closed)
    assert len(pr.steps) == 1      # the outer while is one step; its body holds the inner loop in place
    _check(_nested, xp.asarray(np.array([1.0, -2.0, np.nan])))


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_with_a_switch_in_its_body_equals_jit(reverse):
    def f(xs, k):
        def body(c, x):
            y = switch(k, [lambda v: v * 2.0, lambda v: v - c, lambda v: xp.sin(v)], x)
            return c + y, y * c
        return scan(body, xp.asarray(0.5), xs, reverse=reverse)
    xs = xp.asarray(np.array([1.0, -3.0, np.inf, 0.25, -0.0]))
    for k in (-1, 1, 7):      # clamped to the first / last branch
        _check(f, xs, xp.asarray(k, dtype=xp.int32))


def _in_place_steps(closed):
    return sum(s.__qualname__.startswith("_step_in_place") for s in host_program.Program(closed).steps)


def test_a_last_read_intermediate_is_overwritten_in_place_with_the_same_bits():
    # std's squared deviations: d * d written into d's memory (d is read there last), as NumPy's std does
    rng = np.random.default_rng(0)
    a = rng.standard_normal((300, 40))
    x = xp.asarray(a)

    def f(x):
        d = x - xp.mean(x, axis=0)
        return xp.sqrt(xp.sum(d * d, axis=0) / 300.0)
    closed, (out,) = _run(f, x)
    assert _in_place_steps(closed) >= 1
    assert out.tobytes() == np.std(a, axis=0).tobytes()
    # a one-operand step too: exp(d) into d's memory, the same bits as NumPy's out-of-place exp
    closed, (out,) = _run(lambda x: xp.exp(x - 1.0), x)
    assert _in_place_steps(closed) == 1
    assert out.tobytes() == np.exp(a - 1.0).tobytes()
    assert np.asarray(x).tobytes() == a.tobytes()   # (an input is never written)


def test_an_intermediate_still_read_later_through_an_alias_or_a_view_is_not_overwritten():
    a = np.linspace(-3.0, 3.0, 120).reshape(12, 10)
    x = xp.asarray(a)

    def aliased(x):   # stop_gradient's result shares d's slot: read after d * d
        d = x - 1.0
        w = stop_gradient(d)
        return d * d + w

    def viewed(x):   # the reshape is a NumPy view of d's memory, returned after d * d
        d = x - 1.0
        v = xp.reshape(d, (-1,))
        return d * d, v

    def twice(x):   # d read again after the first product
        d = x - 1.0
        return (d * d) * d

    def aliased_unary(x):   # the same for a one-operand step (its own step form)
        d = x - 1.0
        w = stop_gradient(d)
        return xp.exp(d) + w

    def viewed_unary(x):
        d = x - 1.0
        v = xp.reshape(d, (-1,))
        return xp.exp(d), v
    d = a - 1.0
    wants = {aliased: [d * d + d], viewed: [d * d, d.reshape(-1)], twice: [(d * d) * d],
             aliased_unary: [np.exp(d) + d], viewed_unary: [np.exp(d), d.reshape(-1)]}
    for f, want in wants.items():
        closed, outs = _run(f, x)
        for o, w in zip(outs, want):
            assert o.tobytes() == np.asarray(w).tobytes(), f.__name__
    assert np.asarray(x).tobytes() == a.tobytes()
