"""jit: caching, static and donated arguments, lowering, nesting, errors."""
import numpy as np
import pytest

import array_namespace as xp
from transforms import grad, jit, vmap


def test_trace_once_per_signature_and_print_runs_once():
    calls = []

    @jit
    def f(x):
        calls.append(1)
        return x * 2 + 1
    a = xp.arange(4.0)
    for _ in range(3):
        np.testing.assert_allclose(np.asarray(f(a)), np.arange(4.0) * 2 + 1)
    assert len(calls) == 1 and f.trace_count == 1
    f(xp.arange(5.0))
    f(xp.arange(4, dtype=xp.float32))
    assert f.trace_count == 3
    f(a)
    assert f.trace_count == 3


def test_static_argnums_and_argnames():
    def f(x, n, *, mode="add"):
        return x + n if mode == "add" else x * n
    g = jit(f, static_argnums=(1,), static_argnames=("mode",))
    a = xp.ones(3)
    np.testing.assert_allclose(np.asarray(g(a, 2)), 3.0)
    np.testing.assert_allclose(np.asarray(g(a, 3, mode="mul")), 3.0)
    assert g.trace_count == 2
    g(a, 2)
    assert g.trace_count == 2


def test_unhashable_static_argument_is_a_type_error():
    g = jit(lambda x, shape: xp.reshape(x, shape), static_argnums=1)
    with pytest.raises(TypeError, match="not hashable"):
        g(xp.ones(4), [2, 2])
    assert g(xp.ones(4), (2, 2)).shape == (2, 2)


def test_jit_of_non_callable():
    with pytest.raises(TypeError, match="callable"):
        jit(3)


def test_donation_deletes_the_input_buffer():
    f = jit(lambda x: x + 1.0, donate_argnums=0)
    a = xp.ones(16)
    out = f(a)
    np.testing.assert_allclose(np.asarray(out), 2.0)
    assert a._v.is_deleted()


def test_lower_as_text_is_stablehlo():
    text = jit(lambda x: xp.sin(x) + 1.0).lower(xp.ones(3)).as_text()
    assert "func.func public @main" in text and "stablehlo.sine" in text and "tensor<3xf64>" in text


def test_nested_jit_and_pytrees():
    @jit
    def inner(p):
        return {"s": p[0] + p[1], "d": p[0] - p[1]}

    @jit
    def outer(x):
        r = inner((x, x * 2))
        return r["s"] * r["d"]
    x = xp.arange(3.0)
    np.testing.assert_allclose(np.asarray(outer(x)), (np.arange(3.0) * 3) * (-np.arange(3.0)))


def test_jit_composes_with_grad_and_vmap():
    def loss(w, x):
        return xp.sum(xp.tanh(x @ w) ** 2)
    w = xp.asarray(np.random.default_rng(0).standard_normal((3, 2)))
    xs = xp.asarray(np.random.default_rng(1).standard_normal((5, 4, 3)))
    per_ex = jit(vmap(grad(loss), in_axes=(None, 0)))(w, xs)
    loop = np.stack([np.asarray(grad(loss)(w, xs[i])) for i in range(5)])
    np.testing.assert_allclose(np.asarray(per_ex), loop, rtol=1e-10)
    np.testing.assert_allclose(np.asarray(grad(jit(loss))(w, xs[0])), loop[0], rtol=1e-10)


def test_results_block_until_ready():
    f = jit(lambda x: x @ x)
    a = xp.ones((200, 200))
    out = f(a)
    assert out.block_until_ready() is out
    assert out.is_ready()
    np.testing.assert_allclose(np.asarray(out), 200.0)


def test_a_cpu_program_runs_on_the_calling_thread():
    """The CPU client runs a program where it is called (xla/_jaxlib.py: asynchronous=False): its results are
    ready when the call returns. The asynchronous client hands a program this large (~0.4 GFLOP, several ms) to
    a worker thread and returns at once, the results not ready yet -- two thread wake-ups per call, which cost
    more than a small jitted library call computes."""
    f = jit(lambda a: a @ a @ a @ a)
    a = xp.ones((400, 400)) / 400.0
    f(a).block_until_ready()
    outs = [f(a) for _ in range(3)]
    assert [o._v.is_ready() for o in outs] == [True] * 3
    np.testing.assert_allclose(np.asarray(outs[-1]), 1.0 / 400.0)


def test_python_scalars_and_kwargs():
    f = jit(lambda x, y=1.0: x * y)
    np.testing.assert_allclose(np.asarray(f(xp.ones(2), y=3.0)), 3.0)
    np.testing.assert_allclose(np.asarray(f(2.0, y=3.0)), 6.0)


def test_new_wrapper_never_reuses_a_freed_wrappers_executable():
    """The C++ cache key is a token owned by the wrapper: Python reuses id()s of freed objects."""
    import gc
    f = lambda a, b: a - b  # noqa: E731
    X = xp.asarray([10.0])
    for i in range(40):
        g = jit(f, static_argnums=i % 2)
        r = float((g(2.0, X) if i % 2 == 0 else g(X, 2.0))[0])
        assert r == (-8.0 if i % 2 == 0 else 8.0), (i, r)
        del g
        gc.collect(1)   # (the young generations hold the wrapper; a full collection of a big suite's heap is slow)


def test_non_donating_wrapper_keeps_its_input_after_a_donating_one_died():
    import gc
    f = lambda a: a * 2.0  # noqa: E731
    for i in range(20):
        X = xp.asarray([float(i)])
        g = jit(f, donate_argnums=0) if i % 2 == 0 else jit(f)
        out = g(X)
        assert float(out[0]) == 2.0 * i
        if i % 2:
            assert float(X[0]) == i   # not donated: still readable
        del g
        gc.collect(1)   # (the young generations hold the wrapper; a full collection of a big suite's heap is slow)


def test_nested_jit_builds_and_inspects_in_linear_work(monkeypatch):
    """jit(jit(...)) 30 deep: building it and inspect.signature of it stay linear in the depth
    (they were exponential: every level probed __signature__ of all the levels below)."""
    import inspect
    calls = {"n": 0}
    real = inspect.Signature.from_callable.__func__

    def counting(cls, obj, **kw):
        calls["n"] += 1
        if calls["n"] > 200:   # fail fast instead of running 2**30 probes
            raise AssertionError("inspect.signature called more than 200 times for a 30-deep jit chain")
        return real(cls, obj, **kw)
    monkeypatch.setattr(inspect.Signature, "from_callable", classmethod(counting))
    f = lambda x, y=2.0: x + y  # noqa: E731
    for _ in range(30):
        f = jit(f)
    assert str(inspect.signature(f)) == "(x, y=2.0)"
    assert calls["n"] < 200, calls["n"]
    np.testing.assert_allclose(np.asarray(f(xp.ones(2))), [3.0, 3.0])


def test_using_a_donated_array_names_the_donating_call():
    def step(x):
        return x * 2.0
    f = jit(step, donate_argnums=0)
    for k in range(3):   # every call, not only the first (donating calls stay off the C++ fast path)
        x = xp.ones(1000) + float(k)
        np.testing.assert_allclose(np.asarray(f(x)), 2.0 * (1.0 + k))
        with pytest.raises(RuntimeError, match="donated to the jitted function 'step'"):
            x + 1.0
        with pytest.raises(RuntimeError, match="'step'"):
            np.asarray(x)


@pytest.fixture
def small_jit_caches():
    from transforms import caches
    saved = caches.cache_sizes()
    caches.set_cache_size("jit", 3)
    caches.set_cache_size("jit_dispatch", 3)
    yield
    for kind in ("jit", "jit_dispatch"):
        caches.set_cache_size(kind, saved[kind])


def test_trace_cache_evicts_the_least_recently_used_signature(small_jit_caches):
    # donating calls dispatch in Python every time, so each call reads the engine's own LRU
    f = jit(lambda x: xp.sin(x) * 2.0 + 1.0, donate_argnums=0)
    run = lambda n: np.asarray(f(xp.arange(float(n))))  # noqa: E731
    for n in (1, 2, 3):
        np.testing.assert_allclose(run(n), np.sin(np.arange(float(n))) * 2 + 1, rtol=1e-14)
    assert f.trace_count == 3
    run(1)                      # a hit: 1 becomes the most recent, 2 the least
    assert f.trace_count == 3
    np.testing.assert_allclose(run(4), np.sin(np.arange(4.0)) * 2 + 1, rtol=1e-14)
    cache = f._jitted._cache
    assert f.trace_count == 4 and len(cache) == 3 and cache.evictions == 1
    run(1), run(3)
    assert f.trace_count == 4   # still cached
    np.testing.assert_allclose(run(2), np.sin(np.arange(2.0)) * 2 + 1, rtol=1e-14)
    assert f.trace_count == 5   # evicted, traced again: same answer


def test_native_dispatcher_cache_is_bounded_and_evicted_signatures_rerun(small_jit_caches):
    from xla import _jaxlib
    f = jit(lambda x: x * 3.0 - 1.0)
    for n in range(1, 9):
        np.testing.assert_allclose(np.asarray(f(xp.arange(float(n)))), np.arange(float(n)) * 3 - 1)
    assert _jaxlib._pjit_cache.capacity() == 3 and _jaxlib._pjit_cache.size() <= 3
    assert f._cache_size() <= 3 and len(f._jitted._cache) == 3
    np.testing.assert_allclose(np.asarray(f(xp.arange(1.0))), [-1.0])   # evicted from both: traced again
    assert f.trace_count == 9


def test_one_array_donated_twice_or_donated_and_read_is_a_clear_value_error():
    """f(x, x) with x donated failed inside XLA ('Attempt to use a buffer that was previously donated', plus a
    C++ log line, issue 24); it is refused before the call, every call, and x stays readable."""
    both, first = jit(lambda a, b: a + b, donate_argnums=(0, 1)), jit(lambda a, b: a + b, donate_argnums=0)
    nested = jit(lambda t: t[0] * t[1], donate_argnums=0)
    for _ in range(2):
        for f, args in ((both, "xx"), (first, "xx"), (nested, "t")):
            x = xp.asarray([1.0, 2.0])
            with pytest.raises(ValueError, match=r"jit\(<lambda>\).*donated"):
                f((x, x)) if args == "t" else f(x, x)
            np.testing.assert_array_equal(np.asarray(x), [1.0, 2.0])
        np.testing.assert_array_equal(np.asarray(both(xp.ones(2), xp.ones(2))), [2.0, 2.0])   # distinct: fine


def test_argnums_outside_the_signature_are_refused_at_jit_time():
    """As JAX: static_argnums/donate_argnums naming a position the function does not have is a ValueError at
    jit(...), not silently ignored (issue 24); a non-int is a TypeError; *args accepts any position."""
    def f(v):
        return v
    with pytest.raises(ValueError, match=r"jit\(f\): static_argnums=\(3,\).*1 positional argument"):
        jit(f, static_argnums=3)
    with pytest.raises(ValueError, match=r"donate_argnums=\(0, 1\)"):
        jit(f, donate_argnums=(0, 1))
    with pytest.raises(ValueError, match="static_argnums"):
        jit(f, static_argnums=-2)
    with pytest.raises(TypeError, match="static_argnums must be ints"):
        jit(f, static_argnums=(1.5,))
    assert int(jit(f, static_argnums=-1)(3)) == 3 and int(jit(f, static_argnums=np.int64(0))(4)) == 4
    assert float(jit(lambda *a: a[0] + a[3], static_argnums=3)(xp.asarray(1.0), 0, 0, 2.0)) == 3.0
