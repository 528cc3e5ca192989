"""staged_call's eager hit path (the last signature per body), its choice per signature between op by op
and the compiled executable (timed compiled calls against the fastest op-by-op one), by_op="always", and
xla.host_program.run_eager (the backend's run_by_op).

Oracles: NumPy for values; eval_inline / the unstaged binds for bit-for-bit equality where the same kernels
run; jit for eager == compiled; the runtime's compile counter for "compiles nothing" / "compiles once". The
choice is tested through the measured values it compares (set by the test), never through timings.
"""
import threading

import numpy as np
import pytest

import array_namespace as xp
from transforms import jaxpr_transforms as JT
from transforms.backend import backend
from transforms.core import bind, get_aval
from transforms.primitives import elementwise as E
from transforms.primitives import reductions as R
from xla import host, host_control_flow, host_program, runtime

pytestmark = pytest.mark.skipif(host.MODE == "xla", reason="host kernels switched off (ARRAY_NAMESPACE_EAGER=xla)")


def _body(a, *, k):
    return [bind(E.mul_p, bind(E.sin_p, a), np.asarray(k, get_aval(a).dtype))]


def _sum_body(a, b):
    return [bind(R.reduce_sum_p, bind(E.add_p, a, b), axes=(0,))]


def _entry(body, raws, **static):
    return JT._staged_jaxpr(body, tuple(get_aval(r) for r in raws), tuple(sorted(static.items())))


# ------------------------------------------------------------------ the hit path
def test_last_signature_hit_equals_the_keyed_path(fresh_op_budgets):
    """A repeated call (same static values, same operand avals: the same or another array) takes the last
    entry; a change of static value, shape, dtype or operand count never does (its own entry, its own value)."""
    x = np.linspace(0.1, 2.0, 12).reshape(3, 4)
    r1, r2 = xp.asarray(x)._v, xp.asarray(x + 1)._v
    (a,) = JT.staged_call(_body, [r1], "b", by_op=True, k=2.0)
    ent = JT._LAST[_body][3]
    assert ent is _entry(_body, [r1], k=2.0)
    (b,) = JT.staged_call(_body, [r2], "b", by_op=True, k=2.0)          # (another array, an equal aval)
    assert JT._LAST[_body][3] is ent
    np.testing.assert_array_equal(np.asarray(a), np.sin(x) * 2.0)
    np.testing.assert_array_equal(np.asarray(b), np.sin(x + 1) * 2.0)
    (c,) = JT.staged_call(_body, [r1], "b", by_op=True, k=3.0)          # another static value
    np.testing.assert_array_equal(np.asarray(c), np.sin(x) * 3.0)
    assert JT._LAST[_body][3] is _entry(_body, [r1], k=3.0) is not ent
    r3 = xp.asarray(x[:2])._v                                            # another shape
    (d,) = JT.staged_call(_body, [r3], "b", by_op=True, k=3.0)
    np.testing.assert_array_equal(np.asarray(d), np.sin(x[:2]) * 3.0)
    r4 = xp.asarray(x.astype(np.float32))._v                             # another dtype
    (e,) = JT.staged_call(_body, [r4], "b", by_op=True, k=3.0)
    assert get_aval(e).dtype == np.float32
    np.testing.assert_array_equal(np.asarray(e), np.sin(x.astype(np.float32)) * np.float32(3.0))
    # a Python scalar operand: the keyed path (no aval attribute), same values as an array operand
    (f,) = JT.staged_call(_sum_body, [r1, 1.5], "s", by_op=True)
    (g,) = JT.staged_call(_sum_body, [r1, xp.asarray(1.5)._v], "s", by_op=True)
    np.testing.assert_allclose(np.asarray(f), (x + 1.5).sum(0), rtol=1e-15)
    np.testing.assert_allclose(np.asarray(g), (x + 1.5).sum(0), rtol=1e-15)


def test_cache_clear_forgets_the_last_entry(fresh_op_budgets):
    r = xp.asarray(np.ones(3))._v
    JT.staged_call(_body, [r], "b", by_op=True, k=2.0)
    assert _body in JT._LAST
    JT._staged_jaxpr.cache_clear()
    assert _body not in JT._LAST


# ------------------------------------------------------------------ choosing the faster way
def _spend(ent):
    ent.by_op = 0.0        # (as if its op-by-op budget were spent)


def test_op_by_op_measured_faster_goes_back_to_op_by_op_and_compiles_once(fresh_op_budgets):
    x = np.linspace(-2.0, 2.0, 10)
    r = xp.asarray(x)._v
    (first,) = JT.staged_call(_body, [r], "b", by_op=True, k=2.0)
    ent = JT._LAST[_body][3]
    assert ent.budget > 0 and ent.t_op < float("inf") and ent.exe is None
    before = runtime.compile_calls[0]
    _spend(ent)
    for i in range(JT.PROBES):
        ent.t_op = 0.0 if i == JT.PROBES - 1 else ent.t_op   # op by op measured as instant
        (got,) = JT.staged_call(_body, [r], "b", by_op=True, k=2.0)
        np.testing.assert_allclose(np.asarray(got), np.asarray(first), rtol=1e-15)
    assert runtime.compile_calls[0] == before + 1 and ent.exe
    assert ent.by_op == ent.budget > 0 and ent.probes == 0             # back to op by op, measured afresh
    (again,) = JT.staged_call(_body, [r], "b", by_op=True, k=2.0)
    assert type(again) is host.HostValue and ent.by_op < ent.budget   # (ran op by op: spent some budget)
    np.testing.assert_array_equal(np.asarray(again), np.asarray(first))
    _spend(ent)                                                          # spent again: the executable is kept
    for _ in range(JT.PROBES):
        ent.t_op = float("inf")                                          # now op by op measured slower
        JT.staged_call(_body, [r], "b", by_op=True, k=2.0)
    assert ent.by_op <= 0 and ent.probes == JT.PROBES and runtime.compile_calls[0] == before + 1
    (last,) = JT.staged_call(_body, [r], "b", by_op=True, k=2.0)      # compiled from here on, not timed
    assert ent.probes == JT.PROBES and runtime.compile_calls[0] == before + 1
    np.testing.assert_allclose(np.asarray(last), np.sin(x) * 2.0, rtol=1e-15)


def test_the_choice_compares_what_the_clock_says(fresh_op_budgets, monkeypatch):
    """The timed quantities are the clock's differences around each call: a clock saying op by op took 1 s
    and each compiled call 2 s keeps op by op; one saying the reverse keeps the executable."""
    r = xp.asarray(np.linspace(0.0, 1.0, 6))._v
    for op_s, exe_s, back in ((1.0, 2.0, True), (2.0, 1.0, False)):
        JT._staged_jaxpr.cache_clear()
        now = [0.0]

        def clock(step):
            def perf():
                now[0] += step        # (read before and after each call)
                return now[0]
            return perf
        monkeypatch.setattr(JT, "_perf", clock(op_s))
        JT.staged_call(_body, [r], "b", by_op=True, k=2.0)
        ent = JT._LAST[_body][3]
        assert ent.t_op == pytest.approx(op_s)
        _spend(ent)
        monkeypatch.setattr(JT, "_perf", clock(exe_s))
        for _ in range(JT.PROBES):
            JT.staged_call(_body, [r], "b", by_op=True, k=2.0)
        assert (ent.by_op > 0) is back


def test_compiled_at_once_is_never_timed(fresh_op_budgets, monkeypatch):
    """A signature compiled at once (no op-by-op budget: here the backend allows none) is not probed."""
    monkeypatch.setattr(backend, "eager_by_op", lambda closed, in_avals=None: 0.0)
    r = xp.asarray(np.linspace(0.0, 1.0, 5))._v
    for _ in range(JT.PROBES + 2):
        JT.staged_call(_body, [r], "b", by_op=True, k=2.0)
    ent = JT._LAST[_body][3]
    assert ent.budget == 0.0 and ent.probes == 0 and ent.exe


def test_threads_get_right_values_while_the_choice_flips(fresh_op_budgets):
    x = np.linspace(-3.0, 3.0, 20).reshape(4, 5)
    r = xp.asarray(x)._v
    JT.staged_call(_body, [r], "b", by_op=True, k=2.0)
    ent = JT._LAST[_body][3]
    want = np.sin(x) * 2.0
    bad = []

    def work(seed):
        rng = np.random.default_rng(seed)
        for _ in range(60):
            if rng.random() < 0.2:
                _spend(ent)
                ent.t_op = 0.0 if rng.random() < 0.5 else float("inf")
            (got,) = JT.staged_call(_body, [r], "b", by_op=True, k=2.0)
            if not np.allclose(np.asarray(got), want, rtol=1e-15, atol=0):
                bad.append(np.asarray(got))
    ts = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not bad


# ------------------------------------------------------------------ by_op="always"
def test_always_never_compiles_and_equals_the_unstaged_binds(fresh_op_budgets, monkeypatch):
    x = np.random.default_rng(0).standard_normal((6, 7))
    r = xp.asarray(x)._v
    before = runtime.compile_calls[0]
    for _ in range(3):
        (got,) = JT.staged_call(_body, [r], "a", by_op="always", k=2.5)
    ent = JT._LAST[_body][3]
    assert ent.by_op == float("inf") and ent.exe is None and runtime.compile_calls[0] == before
    (ref,) = _body(r, k=2.5)                                            # (eager binds, one by one)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(ref))
    # a backend with no op-by-op run for it: its equations are bound one by one (no staged executable)
    JT._staged_jaxpr.cache_clear()
    monkeypatch.setattr(backend, "eager_by_op", lambda closed, in_avals=None: 0.0)
    (got2,) = JT.staged_call(_body, [r], "a", by_op="always", k=2.5)
    ent2 = JT._LAST[_body][3]
    assert ent2.by_op == -float("inf") and ent2.exe is None and runtime.compile_calls[0] == before
    np.testing.assert_array_equal(np.asarray(got2), np.asarray(ref))


# ------------------------------------------------------------------ run_eager
def _loop_body(a):
    from transforms.control_flow import while_raw
    out = while_raw(lambda v, k: bind(E.lt_p, k, np.int32(6)),
                    lambda v, k: (bind(E.mul_p, bind(E.cos_p, v), a), bind(E.add_p, k, np.int32(1))),
                    [a, np.int32(0)])
    return [out[0]]


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_run_eager_equals_run_by_op_and_gives_up_past_its_time(dt):
    x = np.linspace(-1.0, 1.5, 7).astype(dt)
    r = xp.asarray(x)._v
    for body, static in ((_body, {"k": 2.0}), (_loop_body, {})):
        ent = _entry(body, [r], **static)
        before = runtime.compile_calls[0]
        (got,) = host_program.run_eager(ent.closed, ent.consts, [r], 10.0)
        (ref,) = host_control_flow.run_by_op(ent.closed, ent.consts, [r], 10.0)
        assert runtime.compile_calls[0] == before
        assert type(got) is host.HostValue and get_aval(got) == get_aval(ref) and get_aval(got).dtype == dt
        np.testing.assert_array_equal(np.asarray(got), np.asarray(ref))
        (inf,) = host_program.run_eager(ent.closed, ent.consts, [r], float("inf"))
        np.testing.assert_array_equal(np.asarray(inf), np.asarray(ref))
    assert host_program.run_eager(ent.closed, ent.consts, [r], -1.0) is None     # (the loop's deadline passed)


# ------------------------------------------------------------------ runners kept by callers
def test_staged_runner_equals_staged_call_and_is_forgotten_with_the_cache(fresh_op_budgets, planned_moments):
    x = np.linspace(-1.0, 1.0, 9)
    r = xp.asarray(x)._v
    run = JT.staged_runner(_body, [r], "b", by_op=True, k=2.0)
    (got,) = run([xp.asarray(x + 0.5)._v])
    (ref,) = JT.staged_call(_body, [xp.asarray(x + 0.5)._v], "b", by_op=True, k=2.0)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(ref))
    # xp.std/var/mean keep runners in their plans: cleared with the staged bodies
    from array_namespace import _statistical as ST
    a = xp.asarray(np.arange(12.0).reshape(3, 4))
    for _ in range(ST.UNSTAGED_CALLS + 2):   # (the first calls at a signature bind; then staged)
        xp.std(a, axis=0), xp.var(a, correction=1), xp.mean(a, axis=1)
    assert any(type(p) is list and p[-1] is not None for p in ST._PLANS.values())
    assert any(p[-1] is not None for p in ST._MOMENT_PLANS.values())
    JT._staged_jaxpr.cache_clear()
    assert not ST._PLANS and not ST._MOMENT_PLANS
    np.testing.assert_allclose(np.asarray(xp.std(a, axis=0)), np.std(np.arange(12.0).reshape(3, 4), axis=0),
                               rtol=1e-15)


def test_std_var_through_kept_runners_equal_numpy_and_jit_on_both_ways(fresh_op_budgets, planned_moments):
    """xp.std/var's planned path, op by op and then compiled (its entry's budget spent), equals NumPy and jit."""
    from array_namespace import _statistical as ST
    from transforms import jit
    x_np = np.random.default_rng(5).standard_normal((20, 5))
    x = xp.asarray(x_np)
    before = runtime.compile_calls[0]
    for f, ref in ((lambda a: xp.std(a, axis=0), np.std(x_np, axis=0)),
                   (lambda a: xp.var(a, correction=1), np.var(x_np, ddof=1)),
                   (lambda a: xp.std(a, axis=1, keepdims=True), np.std(x_np, axis=1, keepdims=True))):
        first = f(x)
        for _ in range(ST.UNSTAGED_CALLS + 1):                       # (binds, then staged op by op)
            np.testing.assert_array_equal(np.asarray(f(x)), np.asarray(first))
        assert runtime.compile_calls[0] == before                    # (op by op so far)
        for p in ST._PLANS.values():
            if type(p) is list and p[-1] is not None:
                p[-1].entry.by_op = 0.0                              # (budgets spent: compiled, probed)
        for _ in range(JT.PROBES + 2):
            again = f(x)
        assert runtime.compile_calls[0] == before + 1                # (compiled once, whichever way is kept)
        for got in (first, again, jit(f)(x)):
            assert got.shape == ref.shape
            np.testing.assert_allclose(np.asarray(got), ref, rtol=1e-13, atol=0)
        before = runtime.compile_calls[0]
