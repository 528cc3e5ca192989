"""jit's native fast path (src/xla/jit_dispatch.py): jaxlib's C++ dispatcher runs a repeat call with no
Python frame, and calls back into the engine's `Jitted` only on a signature it has not seen. Each test
counts those cache misses (Jitted.call_eager, what the miss callback runs) and checks the values
against NumPy: repeat calls stay in C++ (over shapes, dtypes, Python scalars, captured constants,
pytree outputs and keyword arguments), static arguments key the cache (a non-hashable one is the
engine's TypeError naming the argument), a jit nested in a jit or called under grad/vmap takes the
Python path, writes into arguments and donation never leave Python (every call a miss, so every
write-back and donation is recorded), a guarded function's repeat call runs its variant's program in C++
and checks its guards on every call (a call no cached variant accepts goes to the engine), and a pytree
node registered after the dispatcher came up is flattened by C++ too. tests/transforms/test_jit.py has jit's engine-side behaviour and cache bounds."""
import numpy as np
import pytest

import array_namespace as xp
from transforms import grad, jit, register_pytree_node, vmap
from transforms.jit import Jitted
from xla import jit_dispatch


@pytest.fixture
def misses(monkeypatch):
    """Per-function counts of cache-miss calls into the engine (the C++ dispatcher's callback)."""
    counts = {}
    real = Jitted.call_eager

    def counting(self, args, kwargs, failed=None):
        counts[self.__name__] = counts.get(self.__name__, 0) + 1
        return real(self, args, kwargs, failed)
    monkeypatch.setattr(Jitted, "call_eager", counting)
    return counts


X = np.linspace(-2.0, 3.0, 6)


def poly(x):
    return x * x * 3.0 - x + 1.0


def test_repeat_calls_stay_in_cpp_and_match_numpy(misses):
    f = jit(poly)
    assert not isinstance(f, Jitted) and f._jitted.fun is poly        # the C++ dispatcher itself
    assert f.__name__ == "poly" and f.__wrapped__ is poly
    for _ in range(5):
        np.testing.assert_allclose(np.asarray(f(xp.asarray(X))), poly(X), rtol=1e-15)
    assert misses == {"poly": 1} and f._jitted.trace_count == 1
    np.testing.assert_allclose(np.asarray(f(xp.asarray(X[:4]))), poly(X[:4]), rtol=1e-15)     # new shape
    x32 = xp.asarray(X.astype(np.float32))                                                     # new dtype
    out = f(x32)
    assert out.dtype == xp.float32
    np.testing.assert_allclose(np.asarray(out), poly(X.astype(np.float32)), rtol=1e-6)
    for _ in range(3):
        f(xp.asarray(X)), f(xp.asarray(X[:4])), f(x32)
    assert misses == {"poly": 3}
    np.testing.assert_allclose(np.asarray(f(xp.asarray(X))), np.asarray(poly(xp.asarray(X))), rtol=0)  # == eager


def test_python_scalars_keywords_constants_and_pytree_outputs(misses):
    C = xp.asarray(np.array([1.0, -1.0, 2.0, 0.5, 4.0, -3.0]))

    def step(x, s, *, shift):
        return {"y": x * s + shift + C, "n": (xp.sum(x), x[:2])}
    f = jit(step)
    for s, shift in ((2.0, 1.0), (3.0, -1.5), (-0.5, 0.0), (2.0, 1.0)):   # scalars change: results must follow
        out = f(xp.asarray(X), s, shift=shift)
        np.testing.assert_allclose(np.asarray(out["y"]), X * s + shift + np.asarray(C), rtol=1e-15)
        np.testing.assert_allclose(float(out["n"][0]), X.sum(), rtol=1e-15)
        np.testing.assert_array_equal(np.asarray(out["n"][1]), X[:2])
    assert misses == {"step": 1}
    out = f(xp.asarray(X), 2, shift=1.0)              # a Python int: another signature, the right answer
    np.testing.assert_allclose(np.asarray(out["y"]), X * 2 + 1.0 + np.asarray(C), rtol=1e-15)


def test_static_arguments_key_the_cache_and_non_hashable_is_a_type_error(misses):
    def tile(x, reps, *, axis):
        return xp.concat([x] * reps, axis=axis) * 2.0
    g = jit(tile, static_argnums=1, static_argnames="axis")
    assert isinstance(g, Jitted)                      # a Python wrapper around the dispatcher
    for _ in range(3):
        np.testing.assert_array_equal(np.asarray(g(xp.asarray(X), 2, axis=0)), np.concatenate([X, X]) * 2)
        np.testing.assert_array_equal(np.asarray(g(xp.asarray(X), 3, axis=0)), np.concatenate([X] * 3) * 2)
    assert misses == {"tile": 2} and g.trace_count == 2
    with pytest.raises(TypeError) as e:
        g(xp.asarray(X), [2], axis=0)
    assert "jit(tile): static argument 1 of type list is not hashable" in str(e.value)
    with pytest.raises(TypeError) as e:
        g(xp.asarray(X), 2, axis=[0])
    assert "jit(tile): static argument 'axis' of type list is not hashable" in str(e.value)
    np.testing.assert_array_equal(np.asarray(g(xp.asarray(X), 2, axis=0)), np.concatenate([X, X]) * 2)
    assert misses == {"tile": 2}


def test_negative_static_argnums_dispatch_in_python():
    g = jit(lambda x, n: x * n, static_argnums=-1)
    for n in (2, 3, 2):
        np.testing.assert_allclose(np.asarray(g(xp.asarray(X), n)), X * n)
    assert jit_dispatch._dispatcher(g) is None and g._fast is False and g.trace_count == 2


def test_nested_jit_and_jit_under_grad_and_vmap_take_the_python_path(misses):
    inner = jit(poly)
    outer = jit(lambda x: inner(x) * 2.0 + inner(x[::-1]))
    for _ in range(3):
        np.testing.assert_allclose(np.asarray(outer(xp.asarray(X))), poly(X) * 2 + poly(X[::-1]), rtol=1e-14)
    assert misses == {"<lambda>": 1}                  # the inner one was traced into the outer, never run
    xs = np.stack([X, X + 1, X * 2])
    for _ in range(2):
        np.testing.assert_allclose(np.asarray(vmap(inner)(xp.asarray(xs))), poly(xs), rtol=1e-14)
        g = grad(lambda v: xp.sum(inner(v)))(xp.asarray(X))
        np.testing.assert_allclose(np.asarray(g), 6 * X - 1, rtol=1e-14)
    assert "poly" not in misses                       # under a trace: the engine's path, not an eager miss
    np.testing.assert_allclose(np.asarray(inner(xp.asarray(X))), poly(X), rtol=1e-15)
    inner(xp.asarray(X))
    assert misses["poly"] == 1


def test_writes_into_arguments_stay_on_the_python_path(misses):
    def bump(x):
        x[0] = x[0] + 10.0
        return x * 2.0
    f = jit(bump)
    x, want = xp.asarray(X), X.copy()
    for k in range(1, 4):
        out = f(x)
        want[0] += 10.0
        np.testing.assert_allclose(np.asarray(out), want * 2, rtol=1e-15)
        np.testing.assert_allclose(np.asarray(x), want, rtol=1e-15)   # the write reached the caller each time
        assert misses == {"bump": k}


def test_donating_calls_stay_on_the_python_path(misses):
    def twice(x):
        return x * 2.0
    f = jit(twice, donate_argnums=0)
    for k in range(1, 4):
        a = xp.asarray(X + k)
        np.testing.assert_allclose(np.asarray(f(a)), (X + k) * 2, rtol=1e-15)
        assert a._v.is_deleted()
        assert misses == {"twice": k}


def test_guarded_repeat_calls_run_in_cpp_and_every_call_checks_its_guards(misses):
    def sign(x):   # a bool guard (the branch) and a size guard (the mask read)
        if xp.sum(x) > 0:
            return x * 2.0 + xp.sum(x[x > 1.0])
        return -x

    def ref(x):
        return x * 2.0 + np.sum(x[x > 1.0]) if np.sum(x) > 0 else -x
    f = jit(sign)
    pos, pos2, neg = X + 1.5, X + 3.0, X - 5.0   # pos2: the branch of pos, another mask size
    np.testing.assert_array_equal(np.asarray(f(xp.asarray(pos))), ref(pos))
    assert misses == {"sign": 1}   # the first call traces, runs, and hands the variant to C++
    for _ in range(3):
        np.testing.assert_array_equal(np.asarray(f(xp.asarray(pos))), ref(pos))
    assert misses == {"sign": 1}   # repeat calls: the program and its guard check, no engine call
    for k, x in enumerate((neg, pos2), 1):   # C++ runs pos's variant; its guards fail: the engine runs (here
        np.testing.assert_array_equal(np.asarray(f(xp.asarray(x))), ref(x))   # traces) the variant that holds
        assert misses == {"sign": 1 + k}
    for x in (neg, pos2, pos, neg, neg, pos2, pos):   # a failed vector seen before: the variant that held for it
        np.testing.assert_array_equal(np.asarray(f(xp.asarray(x))), ref(x))   # runs next, from its own
    assert misses == {"sign": 3} and f._jitted.trace_count == 3               # dispatcher: no engine call
    for x in (pos2 + 1.0, neg - 1.0, X * 0.0 + 2.0):   # the same failed vectors, other values: still right
        np.testing.assert_array_equal(np.asarray(f(xp.asarray(x))), ref(x))
        np.testing.assert_array_equal(np.asarray(f(xp.asarray(x))), np.asarray(sign(xp.asarray(x))))


def test_a_routed_variant_whose_own_guards_fail_hands_the_call_on(misses):
    def steps(x):
        if xp.sum(x) > 0:
            return x * 2.0
        if xp.max(x) > -1.0:   # the second guard, only on the negative branch
            return x - 1.0
        return x + 1.0

    def ref(x):
        return x * 2.0 if np.sum(x) > 0 else x - 1.0 if np.max(x) > -1.0 else x + 1.0
    f = jit(steps)
    pos, neg_hi, neg_lo = X + 2.0, X - 2.9, X - 4.0   # (X spans -2..3: max of neg_hi is 0.1, of neg_lo -1)
    for x in (pos, neg_hi, neg_lo, neg_hi, neg_lo, pos, neg_lo, neg_hi):
        # neg_*: pos's program fails with one vector, routed to neg_hi's variant; for neg_lo that fails too
        np.testing.assert_array_equal(np.asarray(f(xp.asarray(x))), ref(x))
    assert f._jitted.trace_count == 3 and misses["steps"] == 5   # 3 traces, then neg_lo twice via the engine


def test_guarded_calls_with_static_arguments_check_their_guards_too(misses):
    def scaled(x, k):   # a jit with a static argument: the Python wrapper catches a failed check itself
        if xp.sum(x) > 0:
            return x * k
        return -x - k
    g = jit(scaled, static_argnums=1)
    for x in (X + 1.5, X + 1.5, X - 5.0, X + 1.5, X - 5.0, X + 2.0, X - 6.0):
        np.testing.assert_array_equal(np.asarray(g(xp.asarray(x), 3.0)), x * 3.0 if np.sum(x) > 0 else -x - 3.0)
    assert misses == {"scaled": 2} and g.trace_count == 2   # the first call, the first of the other branch


def test_returned_python_numbers_repeat_in_cpp_as_each_calls_value(misses):
    def score(y, p):   # a float() returned untouched: no guard, the program's output converted per call
        return float(xp.sum((y - p) ** 2)), y * 2.0

    def gated(y):      # and behind a guard
        if xp.max(y) > 0:
            return float(xp.sum(y))
        return float(xp.min(y))
    f, g = jit(score), jit(gated)
    for k in range(5):
        y, p = X + k, X * 1.5 - k
        s, d = f(xp.asarray(y), xp.asarray(p))
        assert type(s) is float and np.isclose(s, np.sum((y - p) ** 2), rtol=1e-13, atol=0)
        np.testing.assert_array_equal(np.asarray(d), y * 2.0)
        t = g(xp.asarray(y))
        assert type(t) is float and np.isclose(t, np.sum(y), rtol=1e-13, atol=0)
    t = g(xp.asarray(X - 10.0))
    assert type(t) is float and t == -12.0
    assert misses == {"score": 1, "gated": 2}   # gated: its trace (handing it to C++), then -10


class Pair:
    def __init__(self, a, b):
        self.a, self.b = a, b


def test_pytree_node_registered_after_the_dispatcher_came_up(misses):
    jit(poly)(xp.asarray(X))                          # the C++ registry exists before Pair is registered
    assert jit_dispatch._cpp_ready
    register_pytree_node(Pair, lambda p: ((p.a, p.b), None), lambda aux, kids: Pair(*kids))
    f = jit(lambda p: Pair(p.a + p.b, p.a * p.b))
    for k in range(3):
        out = f(Pair(xp.asarray(X), xp.asarray(X + k)))
        assert isinstance(out, Pair)
        np.testing.assert_allclose(np.asarray(out.a), X + X + k, rtol=1e-15)
        np.testing.assert_allclose(np.asarray(out.b), X * (X + k), rtol=1e-15)
    assert misses["<lambda>"] == 1                    # C++ flattened Pair on the repeat calls


def test_lower_trace_and_trace_count_on_the_dispatcher():
    f = jit(poly)
    assert "stablehlo.multiply" in f.lower(xp.asarray(X)).as_text()
    assert f.trace(xp.asarray(X)).out_avals[0].shape == (6,)
    f(xp.asarray(X)), f(xp.asarray(X))
    assert f.trace_count == 1
