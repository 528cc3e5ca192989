"""xla/host_control_flow.py: eager while / cond / scan run in Python on host kernels (no compile per shape).

Oracles: a NumPy / Python loop for values; jit of the same function (one compiled executable) for
eager == compiled; the runtime's compile counter for "no compile" / "compiled once"; the bytes of repeated
calls (a loop's way is host_eager's static rule, so they never change); finite differences and analytic
derivatives for jvp/grad, a Python loop for vmap.
"""
import math

import numpy as np
import pytest

import array_namespace as xp
from finite_diff import central_diff
from transforms import cond, fori_loop, grad, jit, jvp, make_jaxpr, scan, switch, vmap, while_loop
from transforms import jaxpr_transforms as JT
from transforms.control_flow import while_raw
from transforms.core import get_aval
from transforms.primitives import elementwise as E
from xla import host, host_eager, host_program, runtime

pytestmark = pytest.mark.skipif(host.MODE == "xla", reason="host kernels switched off (ARRAY_NAMESPACE_EAGER=xla)")


@pytest.fixture(autouse=True)
def fresh_signatures(fresh_staged):
    """Each test starts with staged bodies made afresh (so compile counts do not depend on test order)."""


def _eager_no_compile(f, *args):
    before = runtime.compile_calls[0]
    out = f(*args)
    assert runtime.compile_calls[0] == before, "an eager control-flow call compiled"
    return out


def _leaves(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _same(eager, compiled, rtol=0.0):
    """Equal values, dtypes and weak types, leaf by leaf."""
    e, c = _leaves(eager), _leaves(compiled)
    assert len(e) == len(c)
    for a, b in zip(e, c):
        assert get_aval(a._v) == get_aval(b._v), (get_aval(a._v), get_aval(b._v))
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=0)


# ------------------------------------------------------------------------------------ while

def _collatz(n, steps):
    return while_loop(lambda c: c[0] != 1, lambda c: (xp.where(c[0] % 2 == 0, c[0] // 2, 3 * c[0] + 1),
                                                      c[1] + 1), (n, steps))


def _collatz_oracle(n):
    k = 0
    while n != 1:
        n, k = (n // 2 if n % 2 == 0 else 3 * n + 1), k + 1
    return k


@pytest.mark.parametrize("n", [1, 6, 27, 97])
def test_while_data_dependent_trip_count_equals_python_loop_and_jit(n):
    args = (xp.asarray(n, dtype=xp.int32), xp.asarray(0, dtype=xp.int32))
    e = _eager_no_compile(_collatz, *args)
    assert int(e[1]) == _collatz_oracle(n) and int(e[0]) == 1
    _same(e, jit(_collatz)(*args))


def _mixed(x, k, flag):
    """Carries of three dtypes: float32 vector, int32 counter, bool toggling each step."""
    def body(c):
        v, i, f = c
        return xp.where(f, v * 1.5, v - 0.25), i + 1, xp.logical_not(f)
    return while_loop(lambda c: xp.logical_and(xp.sum(c[0]) < 40.0, c[1] < 50), body, (x, k, flag))


def _mixed_oracle(x, k, flag):
    x = x.copy()
    while np.sum(x, dtype=np.float32) < 40.0 and k < 50:
        x = (x * np.float32(1.5) if flag else x - np.float32(0.25)).astype(np.float32)
        k, flag = k + 1, not flag
    return x, k, flag


@pytest.mark.parametrize("shape", [(3,), (2, 4), (0,)])
def test_while_mixed_dtype_carries_equal_oracle_and_jit(shape):
    rng = np.random.default_rng(sum(shape) + 1)
    x0 = rng.uniform(0.5, 2.0, shape).astype(np.float32)
    args = (xp.asarray(x0), xp.asarray(0, dtype=xp.int32), xp.asarray(True))
    e = _eager_no_compile(_mixed, *args)
    assert e[0].dtype == xp.float32 and e[1].dtype == xp.int32 and e[2].dtype == xp.bool
    want = _mixed_oracle(x0, 0, True)
    np.testing.assert_allclose(np.asarray(e[0]), want[0], rtol=1e-6)
    assert int(e[1]) == want[1] and bool(e[2]) == want[2]
    _same(e, jit(_mixed)(*args), rtol=1e-6)


def test_while_zero_iterations_and_nan_carry_return_the_init():
    f = lambda x: while_loop(lambda c: c[0] < 10.0, lambda c: (c[0] + 1.0, c[1] * 2), (x, xp.asarray(3)))
    for v in (10.0, 11.5, math.nan, math.inf):
        x = xp.asarray(np.float64(v))
        e = _eager_no_compile(f, x)
        np.testing.assert_array_equal(np.asarray(e[0]), np.float64(v))
        assert int(e[1]) == 3
        _same(e, jit(f)(x))
    # -0.0 goes through the body, its sign is an XLA-compatible detail: compare with jit
    e = _eager_no_compile(f, xp.asarray(-0.0))
    assert float(e[0]) == 10.0 and int(e[1]) == 3 * 2 ** 10
    _same(e, jit(f)(xp.asarray(-0.0)))


def test_while_weak_typed_python_scalar_carry_keeps_its_type():
    f = lambda: while_loop(lambda c: c < 7, lambda c: c + 2, 1)
    e = _eager_no_compile(f)
    assert int(e) == 7
    _same(e, jit(f)())


def test_fori_loop_with_traced_bounds_is_an_eager_while():
    f = lambda lo, hi, x: fori_loop(lo, hi, lambda i, c: c * 0.5 + xp.astype(i, xp.float64), x)
    lo, hi, x = xp.asarray(2), xp.asarray(9), xp.asarray(np.linspace(-1, 1, 4))
    e = _eager_no_compile(f, lo, hi, x)
    want = np.linspace(-1, 1, 4)
    for i in range(2, 9):
        want = want * 0.5 + i
    np.testing.assert_allclose(np.asarray(e), want, rtol=1e-15)
    _same(e, jit(f)(lo, hi, x), rtol=1e-15)


# ------------------------------------------------------------------------------------- cond

def _three(i, x, y):
    return switch(i, [lambda a, b: (a + b, a * 2, xp.sum(b) > 0),
                      lambda a, b: (a - b, a / 2, xp.any(xp.isnan(b))),
                      lambda a, b: (a * b, -a, xp.all(b < 0))], x, y)


@pytest.mark.parametrize("i", [-3, 0, 1, 2, 7])
def test_switch_index_clamped_several_outputs_equal_numpy_and_jit(i):
    x = np.array([1.0, -2.0, np.nan, np.inf], np.float32)
    y = np.array([0.5, -0.0, 3.0, -1.0], np.float32)
    args = (xp.asarray(i, dtype=xp.int32), xp.asarray(x), xp.asarray(y))
    e = _eager_no_compile(_three, *args)
    k = min(max(i, 0), 2)
    want = [(x + y, x * 2, np.sum(y) > 0), (x - y, x / 2, np.any(np.isnan(y))), (x * y, -x, np.all(y < 0))][k]
    for got, w in zip(e, want):
        np.testing.assert_array_equal(np.asarray(got), w)
    assert e[0].dtype == xp.float32
    _same(e, jit(_three)(*args))


@pytest.mark.parametrize("pred", [True, False])
def test_cond_bool_predicate_and_numeric_predicate(pred):
    f = lambda p, a: cond(p, lambda v: (v * 3, xp.astype(v, xp.int32)), lambda v: (v - 1, xp.ones(v.shape, dtype=xp.int32)), a)
    a = xp.asarray(np.array([[1.5, -2.5], [0.0, 7.25]]))
    for p in (xp.asarray(pred), xp.asarray(2.0 if pred else 0.0)):
        e = _eager_no_compile(f, p, a)
        want = (np.asarray(a) * 3, np.asarray(a).astype(np.int32)) if pred else (np.asarray(a) - 1, np.ones((2, 2), np.int32))
        np.testing.assert_array_equal(np.asarray(e[0]), want[0])
        np.testing.assert_array_equal(np.asarray(e[1]), want[1])
        _same(e, jit(f)(p, a))


# ------------------------------------------------------------------------------------- scan

def _cumstats(c0, xs, w):
    """Carry (running sum, running count), consts (w captured), stacked ys of two shapes."""
    def body(c, x):
        s, n = c
        s = s + x * w
        return (s, n + 1), (s, xp.stack([xp.max(x), xp.min(x)]))
    return scan(body, (c0, xp.asarray(0, dtype=xp.int32)), xs)


def _cumstats_rev(c0, xs, w):
    def body(c, x):
        s, n = c
        s = s + x * w
        return (s, n + 1), (s, xp.stack([xp.max(x), xp.min(x)]))
    return scan(body, (c0, xp.asarray(0, dtype=xp.int32)), xs, reverse=True)


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_scan_carries_xs_stacked_ys_equal_python_loop_and_jit(reverse, dtype):
    rng = np.random.default_rng(3)
    xs = rng.standard_normal((6, 3)).astype(dtype)
    xs[2, 1] = np.nan
    w = np.array([1.0, -2.0, 0.5], dtype)
    c0 = np.zeros(3, dtype)
    f = _cumstats_rev if reverse else _cumstats
    args = (xp.asarray(c0), xp.asarray(xs), xp.asarray(w))
    (s, n), (ss, mm) = _eager_no_compile(f, *args)
    acc, want_s, want_m = c0.copy(), np.zeros_like(xs), np.zeros((6, 2), dtype)
    for i in (range(5, -1, -1) if reverse else range(6)):
        acc = (acc + xs[i] * w).astype(dtype)
        want_s[i] = acc
        want_m[i] = [np.max(xs[i]), np.min(xs[i])]
    np.testing.assert_allclose(np.asarray(s), acc, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(ss), want_s, rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(mm), want_m)
    assert int(n) == 6 and s.dtype == getattr(xp, dtype) and ss.shape == (6, 3) and mm.shape == (6, 2)
    _same(((s, n), (ss, mm))[0] + ((ss, mm)), jit(f)(*args)[0] + jit(f)(*args)[1])


def test_scan_length_zero_returns_init_and_empty_stacks():
    f = lambda c, xs: scan(lambda c, x: (c + x[0], (x * 2, c)), c, xs)
    args = (xp.asarray(np.float32(4.0)), xp.asarray(np.zeros((0, 2), np.float32)))
    c, (y1, y2) = _eager_no_compile(f, *args)
    assert float(c) == 4.0 and y1.shape == (0, 2) and y2.shape == (0,) and y1.dtype == xp.float32
    jc, (j1, j2) = jit(f)(*args)
    _same((c, y1, y2), (jc, j1, j2))
    g = lambda c: scan(lambda c, _: (c * 2, c), c, None, length=0)
    c, ys = _eager_no_compile(g, xp.asarray(5))
    assert int(c) == 5 and ys.shape == (0,)


def test_static_fori_loop_and_map_are_eager_scans():
    f = lambda x: fori_loop(0, 5, lambda i, c: c + i * c, x)
    x = xp.asarray(np.array([1.0, -0.5]))
    np.testing.assert_allclose(np.asarray(_eager_no_compile(f, x)), np.array([1.0, -0.5]) * 120, rtol=1e-15)
    from transforms import map as tmap
    m = lambda v: tmap(lambda r: xp.sum(r * r), v)
    v = xp.asarray(np.arange(12.0).reshape(4, 3))
    np.testing.assert_allclose(np.asarray(_eager_no_compile(m, v)), np.sum(np.arange(12.0).reshape(4, 3) ** 2, 1))


# ----------------------------------------------------------------------------------- nested

def _nested(xs, tol):
    """A scan whose body runs a while (halving until below tol) holding a cond."""
    def body(c, x):
        def step(s):
            v, k = s
            v = cond(v > 100.0, lambda u: u / 4.0, lambda u: u / 2.0, v)
            return v, k + 1
        v, k = while_loop(lambda s: s[0] > tol, step, (xp.abs(x), xp.asarray(0, dtype=xp.int32)))
        return c + k, (v, k)
    return scan(body, xp.asarray(0, dtype=xp.int32), xs)


def _nested_oracle(xs, tol):
    total, vs, ks = 0, [], []
    for x in xs:
        v, k = abs(x), 0
        while v > tol:
            v, k = (v / 4.0 if v > 100.0 else v / 2.0), k + 1
        total += k
        vs.append(v)
        ks.append(k)
    return total, np.array(vs), np.array(ks)


def test_nested_loops_and_cond_equal_python_and_jit():
    xs = np.array([0.0, 3.0, -1000.0, 0.7, 12345.0])
    args = (xp.asarray(xs), xp.asarray(0.5))
    total, (vs, ks) = _eager_no_compile(_nested, *args)
    wt, wv, wk = _nested_oracle(xs, 0.5)
    assert int(total) == wt
    np.testing.assert_array_equal(np.asarray(vs), wv)
    np.testing.assert_array_equal(np.asarray(ks), wk)
    jt, (jv, jk) = jit(_nested)(*args)
    _same((total, vs, ks), (jt, jv, jk))


# ----------------------------------------------------------------------- no compile, new shapes

def test_eager_loops_on_new_shapes_compile_nothing():
    rng = np.random.default_rng(7)
    before = runtime.compile_calls[0]
    results = []
    for n in (3, 5, 8, 13):
        a = rng.uniform(1.0, 3.0, n)
        x = xp.asarray(a)
        w = while_loop(lambda c: xp.max(c) > 1e-3, lambda c: c * 0.25, x)
        s = scan(lambda c, r: (c * r, c), xp.asarray(1.0), x)
        results.append((a, w, s))
    assert runtime.compile_calls[0] == before
    for a, w, (c, ys) in results:
        want = a.copy()
        while want.max() > 1e-3:
            want = want * 0.25
        np.testing.assert_array_equal(np.asarray(w), want)
        np.testing.assert_allclose(np.asarray(c), np.prod(a), rtol=1e-14)
        np.testing.assert_allclose(np.asarray(ys), np.concatenate([[1.0], np.cumprod(a)[:-1]]), rtol=1e-14)


# --------------------------------------------------------------------------- the way, decided once

def test_a_hot_loop_stays_on_the_host_every_call_with_the_same_bits():
    """However often a signature is called, it keeps its way: no compile, the same bits every call."""
    f = lambda x: while_loop(lambda c: c[1] < 40, lambda c: (xp.sin(c[0]) * 1.01 + 0.5, c[1] + 1),
                             (x, xp.asarray(0)))
    x = xp.asarray(np.linspace(0.0, 1.0, 9).reshape(3, 3).astype(np.float32))
    before = runtime.compile_calls[0]
    seen = {np.asarray(f(x)[0]).tobytes() for _ in range(60)}
    assert runtime.compile_calls[0] == before and len(seen) == 1
    want = np.linspace(0.0, 1.0, 9).reshape(3, 3).astype(np.float32)
    for _ in range(40):
        want = np.sin(want) * np.float32(1.01) + np.float32(0.5)
    np.testing.assert_allclose(np.frombuffer(seen.pop(), np.float32).reshape(3, 3), want, rtol=1e-6)


def test_above_the_threshold_loops_compile_once_with_the_same_bits(monkeypatch):
    monkeypatch.setattr(host_eager, "BY_OP_MAX_ELEMENTS", 4)     # (the policy's one threshold, forced low)
    f = lambda i, x: switch(i, [lambda v: v + 1.0, lambda v: v * 3.0], x)
    g = lambda x: scan(lambda c, r: (c + r, c * r), xp.zeros(3), x)
    x = xp.asarray(np.arange(6.0).reshape(2, 3))
    before = runtime.compile_calls[0]
    first = f(xp.asarray(1, dtype=xp.int32), x)
    again = f(xp.asarray(0, dtype=xp.int32), x)
    assert runtime.compile_calls[0] == before + 1
    np.testing.assert_array_equal(np.asarray(first), np.arange(6.0).reshape(2, 3) * 3)
    np.testing.assert_array_equal(np.asarray(again), np.arange(6.0).reshape(2, 3) + 1)
    outs = {tuple(np.asarray(o).tobytes() for o in g(x)) for _ in range(5)}
    assert runtime.compile_calls[0] == before + 2 and len(outs) == 1
    c, ys = g(x)
    np.testing.assert_array_equal(np.asarray(c), [3.0, 5.0, 7.0])
    np.testing.assert_array_equal(np.asarray(ys), [[0.0, 0.0, 0.0], [0.0, 4.0, 10.0]])
    # under the threshold the same functions run on the host, with the same values
    small = xp.asarray(np.arange(2.0))
    np.testing.assert_array_equal(np.asarray(_eager_no_compile(f, xp.asarray(1, dtype=xp.int32), small)), [0.0, 3.0])


def test_nested_loops_run_on_the_host_as_one_way():
    f = lambda xs: scan(lambda c, x: (c + while_loop(lambda v: v < 50.0, lambda v: v * 3.0 + 1.0, x), c), 0.0, xs)
    xs = np.array([0.0, 1.0, 7.0, 100.0])
    c, ys = _eager_no_compile(f, xp.asarray(xs))
    ends = []
    for v in xs:
        while v < 50.0:
            v = v * 3.0 + 1.0
        ends.append(v)
    assert float(c) == sum(ends)
    np.testing.assert_array_equal(np.asarray(ys), np.concatenate([[0.0], np.cumsum(ends)[:-1]]))


# ------------------------------------------------------------------------------ fallbacks

def test_body_with_a_primitive_without_host_kernel_compiles_and_is_right(monkeypatch):
    """A body holding a primitive with no host kernel (here: sin's kernel withdrawn) runs as the compiled
    loop, exactly as before."""
    monkeypatch.delitem(host.host_kernels, E.sin_p)
    monkeypatch.setattr(host_eager, "_covers", {})
    f = lambda x: while_loop(lambda c: c[1] < 4, lambda c: (xp.sin(c[0]), c[1] + 1), (x, xp.asarray(0)))
    x = xp.asarray(np.array([0.3, 2.0, -1.0, 0.0]))
    before = runtime.compile_calls[0]
    v, k = f(x)
    assert runtime.compile_calls[0] == before + 1
    np.testing.assert_allclose(np.asarray(v), np.sin(np.sin(np.sin(np.sin(np.asarray(x))))), rtol=1e-15)
    assert int(k) == 4


def test_a_kernel_declining_a_value_inside_a_loop_runs_that_equation_singly(monkeypatch):
    """A kernel may decline particular values (NotImplemented): that one equation runs through its
    eager impl, the loop goes on on the host, and the values are right."""
    calls = []
    kernel = host.host_kernels[E.cos_p]

    def declining(x, **params):
        calls.append(x.shape)
        return NotImplemented if np.any(x > 1.0) else kernel(x, **params)
    monkeypatch.setitem(host.host_kernels, E.cos_p, declining)
    monkeypatch.setattr(host_program, "_programs", {})
    f = lambda x: scan(lambda c, r: (c + xp.cos(r * 1.25), c), xp.zeros(2), x)
    x = np.array([[0.1, 0.2], [3.0, 0.5], [0.3, -2.0]])
    c, ys = _eager_no_compile(f, xp.asarray(x))
    assert len(calls) >= 3
    np.testing.assert_allclose(np.asarray(c), np.sum(np.cos(x * 1.25), axis=0), rtol=1e-15)
    np.testing.assert_allclose(np.asarray(ys), np.concatenate([[[0, 0]], np.cumsum(np.cos(x * 1.25), 0)[:-1]]),
                               rtol=1e-15)


def test_kernels_switched_off_runs_the_compiled_loop(monkeypatch):
    monkeypatch.setattr(host, "MODE", "xla")
    f = lambda x: scan(lambda c, r: (c + r, c), xp.asarray(0.0), x)
    x = np.array([1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0])
    before = runtime.compile_calls[0]
    c, ys = f(xp.asarray(x))
    assert runtime.compile_calls[0] == before + 1
    assert float(c) == 127.0
    np.testing.assert_array_equal(np.asarray(ys), np.concatenate([[0.0], np.cumsum(x)[:-1]]))


def test_large_operands_compile():
    big = xp.zeros((host_eager.BY_OP_MAX_ELEMENTS + 1,))
    closed = make_jaxpr(lambda a: while_loop(lambda c: c[1] < 2, lambda c: (c[0] + 1.0, c[1] + 1), (a, 0)))(big)
    assert host_eager.eager_way(closed) == "compile"


# ------------------------------------------------------------- staged composites holding loops

def test_staged_composites_with_all_host_loops_run_by_op(monkeypatch):
    x = xp.asarray(np.linspace(0.5, 2.0, 6))
    loop = lambda a: while_loop(lambda c: c[1] < 5, lambda c: (xp.cos(c[0]) * a, c[1] + 1), (a, 0))[0]
    assert host_eager.eager_way(make_jaxpr(lambda a: loop(a) + 1)(x)) == "host"
    sc = lambda a: scan(lambda c, r: (c + xp.linalg.det(r), c), 0.0, a)[0]
    m = xp.asarray(np.eye(3)[None] * np.array([1.0, 2.0])[:, None, None])
    assert host_eager.eager_way(make_jaxpr(sc)(m)) == "host"
    cd = lambda a: cond(a[0] > 0, lambda v: v * 2, lambda v: v, a)
    assert host_eager.eager_way(make_jaxpr(cd)(x)) == "host"
    monkeypatch.delitem(host.host_kernels, E.cos_p)   # a body primitive without a host kernel
    assert host_eager.eager_way(make_jaxpr(lambda a: loop(a) + 1)(x)) == "bind"


def test_scan_outputs_that_are_carries_keep_each_step_value():
    """A scan body giving its incoming carry as an output (ys = the carry before the step: an exclusive cumprod)
    run on the host, eagerly and inside a staged composite, equals NumPy and jit (the host program once read the
    output after the carry had moved on: the next step's value)."""
    from array_namespace._helpers import wrap
    a = np.array([2.0, 3.0, 5.0, 0.5])
    want = np.concatenate([[1.0], np.cumprod(a)[:-1]])
    f = lambda v: scan(lambda c, r: (c * r, c), xp.asarray(1.0), v)[1]
    x = xp.asarray(a)
    np.testing.assert_array_equal(np.asarray(f(x)), want)
    np.testing.assert_array_equal(np.asarray(jit(f)(x)), want)
    body = lambda v: [f(wrap(v))._v]
    assert host_eager.eager_way(JT._staged_jaxpr(body, (x._v.aval,), ()).closed) == "host"
    np.testing.assert_array_equal(np.asarray(JT.staged_call(body, [x._v], "exclusive_cumprod", by_op=True)[0]), want)


def _raw_loop_body(a):
    out = while_raw(lambda v, k: JT.bind(E.lt_p, k, np.int32(6)),
                    lambda v, k: (JT.bind(E.mul_p, JT.bind(E.cos_p, v), a), JT.bind(E.add_p, k, np.int32(1))),
                    [a, np.int32(0)])
    return [out[0]]


def test_staged_call_with_a_loop_compiles_nothing_and_equals_jit():
    a = np.linspace(-1.0, 1.5, 7)
    raw = xp.asarray(a)._v
    before = runtime.compile_calls[0]
    (got,) = JT.staged_call(_raw_loop_body, [raw], "loop", by_op=True)
    assert runtime.compile_calls[0] == before
    want = a.copy()
    for _ in range(6):
        want = np.cos(want) * a
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-14)
    ent = JT._staged_jaxpr(_raw_loop_body, (get_aval(raw),), ())   # (the cached entry of that call)
    assert ent.ways[True] == "host"
    j = jit(lambda v: xp.asarray(JT.staged_call(_raw_loop_body, [v._v], "loop", by_op=True)[0]))(xp.asarray(a))
    np.testing.assert_allclose(np.asarray(got), np.asarray(j), rtol=1e-14)


# -------------------------------------------------------------- transforms of loops unchanged

def test_jvp_grad_vmap_of_loops():
    x = xp.asarray(np.array([0.3, -1.2, 2.0]))
    # jvp through a while: d/dx of x*1.5^k with k data-dependent
    f = lambda v: while_loop(lambda c: xp.max(xp.abs(c)) < 10.0, lambda c: c * 1.5, v)
    p, t = jvp(f, (x,), (xp.ones_like(x),))
    k = 0
    while np.max(np.abs(np.array([0.3, -1.2, 2.0]) * 1.5 ** k)) < 10.0:
        k += 1
    np.testing.assert_allclose(np.asarray(t), np.full(3, 1.5 ** k), rtol=1e-14)
    jp, jt = jit(lambda v, u: jvp(f, (v,), (u,)))(x, xp.ones_like(x))
    _same((p, t), (jp, jt), rtol=1e-15)
    # grad through a scan (reverse mode), checked by finite differences
    g = lambda v: xp.sum(scan(lambda c, r: (xp.sin(c) * r + c, c * r), xp.asarray(0.5), v)[1])
    fd = central_diff(lambda v: float(g(xp.asarray(v))), np.asarray(x))   # (eager loops, host path)
    np.testing.assert_allclose(np.asarray(grad(g)(x)), fd, rtol=1e-7, atol=1e-8)
    np.testing.assert_allclose(np.asarray(grad(g)(x)), np.asarray(jit(grad(g))(x)), rtol=1e-13)
    # vmap of a while with a batched predicate == a Python loop of eager calls
    h = lambda v: while_loop(lambda c: c[0] < 5.0, lambda c: (c[0] * 2.0 + 0.1, c[1] + 1), (v, 0))
    xs = xp.asarray(np.array([0.1, 1.0, 4.9, 7.0]))
    bv, bk = vmap(h)(xs)
    for i in range(4):
        v, kk = h(xs[i])
        assert float(bv[i]) == float(v) and int(bk[i]) == int(kk)
    # vmap of a cond with a batched predicate
    c2 = lambda v: cond(v > 1.0, lambda u: u * 10.0, lambda u: -u, v)
    np.testing.assert_array_equal(np.asarray(vmap(c2)(xs)), [-0.1, -1.0, 49.0, 70.0])
