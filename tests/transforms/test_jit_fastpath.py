"""jit's repeat-call fast path (xla/jit_dispatch.py: Array arguments flattened for C++, host-held
values as their cached device buffers) must miss on every
change that changes the program: dtype, shape, weak type (Python scalar vs array), static argument,
pytree structure, keyword names. Each case: the result equals NumPy and the eager call, and the trace
count is exactly the number of distinct signatures seen."""
import numpy as np
import pytest

import array_namespace as xp
from transforms import jit
from transforms.jit import Jitted

X = np.linspace(-1.5, 2.5, 7)


def f(a):
    return a * 2 + 1


def check(out, want, eager=None, rtol=1e-15):
    np.testing.assert_allclose(np.asarray(out), want, rtol=rtol)
    if eager is not None:
        np.testing.assert_array_equal(np.asarray(out), np.asarray(eager))


def test_host_held_and_buffer_held_arguments_hit_and_match(monkeypatch):
    misses = []
    real = Jitted.call_eager
    monkeypatch.setattr(Jitted, "call_eager", lambda self, a, k: misses.append(1) or real(self, a, k))
    g = jit(f)
    host = xp.asarray(X)                 # an eager value held on the host
    buf = g(host)                        # a jit result: held in a device buffer
    for _ in range(3):
        check(g(host), X * 2 + 1, f(host))
        check(g(buf), (X * 2 + 1) * 2 + 1, f(buf))
        fresh = xp.sin(host)             # a new host-held value each call (no buffer yet)
        check(g(fresh), np.sin(X) * 2 + 1, f(fresh), rtol=1e-14)
    assert g.trace_count == 1 and len(misses) == 1   # every repeat call ran in C++ (host-held or not)


def test_dtype_shape_and_weak_type_miss():
    g = jit(f)
    check(g(xp.asarray(X)), X * 2 + 1)
    out = g(xp.asarray(X.astype(np.float32)))
    assert out.dtype == xp.float32       # float32 stays float32
    check(out, X.astype(np.float32) * 2 + 1, rtol=1e-6)
    check(g(xp.asarray(X[:3])), X[:3] * 2 + 1)
    assert g.trace_count == 3
    out = g(xp.asarray(np.arange(4)))
    assert out.dtype == xp.int64
    np.testing.assert_array_equal(np.asarray(out), np.arange(4) * 2 + 1)
    w = g(2.5)                           # a weak-typed Python scalar, then a 0-d float64 array
    s = g(xp.asarray(2.5))
    assert np.asarray(w) == 6.0 and np.asarray(s) == 6.0 and s.dtype == xp.float64
    assert g.trace_count == 6
    for _ in range(2):
        g(xp.asarray(X)), g(xp.asarray(X[:3])), g(2.5), g(xp.asarray(2.5))
    assert g.trace_count == 6


def test_static_arguments_and_keywords_miss_per_value():
    h = jit(lambda a, n, *, scale: a * n * scale, static_argnums=1)
    assert isinstance(h, Jitted)
    a = xp.asarray(X)
    for _ in range(3):
        check(h(a, 2, scale=1.5), X * 3.0)
        check(h(a, 3, scale=1.5), X * 4.5)
    assert h.trace_count == 2
    check(h(a, 3, scale=xp.asarray(X)), X * 3 * X)        # keyword's type/shape changed
    assert h.trace_count == 3
    with pytest.raises(TypeError, match="not hashable"):
        h(a, [2], scale=1.5)


def test_pytree_structure_miss_and_outputs_rebuilt():
    g = jit(lambda t: {"s": t[0] + t[1], "p": (t[0] * t[1],)})
    a, b = xp.asarray(X), xp.asarray(X[::-1].copy())
    for _ in range(3):
        out = g((a, b))
        assert set(out) == {"s", "p"} and isinstance(out["p"], tuple)
        check(out["s"], X + X[::-1])
        check(out["p"][0], X * X[::-1])
    assert g.trace_count == 1
    out = g([a, b])                      # a list, not a tuple: a new structure
    check(out["s"], X + X[::-1])
    out = g((a, b, a))                   # one more leaf (ignored by the function, still a new signature)
    check(out["p"][0], X * X[::-1])
    assert g.trace_count == 3
    d = jit(lambda m: m["x"] - m["y"])
    check(d({"x": a, "y": b}), X - X[::-1])
    check(d({"x": b, "y": a}), X[::-1] - X)
    check(d({"x": a, "y": b, "z": a}), X - X[::-1])       # a new key
    assert d.trace_count == 2


def test_donated_value_then_passed_to_a_fast_path_jit_names_the_donation():
    g = jit(f)
    x = xp.asarray(X)
    check(g(x), X * 2 + 1)
    check(g(x), X * 2 + 1)
    jit(lambda v: v + 1, donate_argnums=0)(x)
    with pytest.raises(RuntimeError, match="donated"):
        g(x)


def test_pmap_repeat_calls_on_one_device_follow_their_inputs():
    """pmap's repeat calls run in C++ too (xla/jit_dispatch.pmap_public; the cases on several devices are in
    tests/xla/pmap_runtime_cases.py): each change of value, shape, dtype or pytree gives its own right result."""
    from transforms import pmap, psum
    g = pmap(lambda a, t: {"s": a * 2 + 1, "t": t[0] - t[1]})
    cur = xp.asarray(X[None])
    want = X[None]
    for _ in range(4):   # a result fed back in: laid out as the program takes it (the native path)
        out = g(cur, (cur, cur))
        want = want * 2 + 1
        check(out["s"], want)
        check(out["t"], np.zeros_like(want))
        cur = out["s"]
    i32 = g(xp.asarray(np.arange(6, dtype=np.int32)[None]), (cur, cur))
    assert i32["s"].dtype == xp.int32
    check(i32["s"], np.arange(6)[None] * 2 + 1)
    short = g(xp.asarray(X[None, :3]), (xp.asarray(X[None, :3]), xp.zeros((1, 3))))
    check(short["s"], X[None, :3] * 2 + 1)
    check(short["t"], X[None, :3])
    check(g(cur, (cur, cur))["s"], want * 2 + 1)
    total = pmap(lambda a: psum(a, "i") * 2.0, "i")   # one replica's collective waits for none: native too
    for k in range(3):
        check(total(out["s"] * float(k)), want * k * 2.0)
    from transforms import device_count
    n = device_count() + 1
    with pytest.raises(ValueError, match=f"more than the {n - 1} local devices"):
        g(xp.ones((n, 3)), (xp.ones((n, 3)), xp.ones((n, 3))))
