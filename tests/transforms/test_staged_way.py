"""staged_call's eager hit path (the last signature per body), its way per signature (host program,
bound equations or compiled executable: decided once from static facts, never a clock or a call count),
by_op="always", and xla.host_program.run_eager (the backend's run_by_op).

Oracles: NumPy for values; the unstaged binds for bit-for-bit equality where the same kernels run; jit for
eager == compiled; the runtime's compile counter for "compiles nothing" / "compiles once"; and the bytes
of every repeated call, which must never change.
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
from xla import host, host_eager, host_program, runtime

pytestmark = pytest.mark.skipif(host.MODE == "xla", reason="host kernels switched off (ARRAY_NAMESPACE_EAGER=xla)")


def _body(a, *, k):
    return [bind(E.mul_p, bind(E.sin_p, a), np.asarray(k, get_aval(a).dtype))]


def _sum_body(a, b):
    return [bind(R.reduce_sum_p, bind(E.add_p, a, b), axes=(0,))]


def _entry(body, raws, **static):
    return JT._staged_jaxpr(body, tuple(get_aval(r) for r in raws), tuple(sorted(static.items())))


# ------------------------------------------------------------------ the hit path
def test_last_signature_hit_equals_the_keyed_path(fresh_staged):
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


def test_cache_clear_forgets_the_last_entry(fresh_staged):
    r = xp.asarray(np.ones(3))._v
    JT.staged_call(_body, [r], "b", by_op=True, k=2.0)
    assert _body in JT._LAST
    JT._staged_jaxpr.cache_clear()
    assert _body not in JT._LAST


# ------------------------------------------------------------------ the way, decided once
def _bytes(v):
    return np.asarray(v).tobytes()


def test_small_all_host_bodies_run_their_host_program_every_call_and_never_compile(fresh_staged):
    x = np.random.default_rng(0).standard_normal((30, 7)).astype(np.float32)
    r = xp.asarray(x)._v
    before = runtime.compile_calls[0]
    seen = {_bytes(JT.staged_call(_body, [r], "b", by_op=True, k=2.0)[0]) for _ in range(200)}
    ent = JT._LAST[_body][3]
    assert ent.ways[True] == "host" and ent.exe is None and runtime.compile_calls[0] == before
    assert len(seen) == 1
    (ref,) = _body(r, k=2.0)                                            # (the unstaged binds: the same kernels)
    assert seen == {_bytes(ref)}


def test_large_bodies_compile_once_and_keep_their_executable(fresh_staged, monkeypatch):
    monkeypatch.setattr(host_eager, "BY_OP_MAX_ELEMENTS", 16)           # (the policy's one threshold, forced low)
    x = np.random.default_rng(1).standard_normal((5, 4))
    r = xp.asarray(x)._v
    before = runtime.compile_calls[0]
    seen = {_bytes(JT.staged_call(_body, [r], "b", by_op=True, k=2.0)[0]) for _ in range(100)}
    ent = JT._LAST[_body][3]
    assert ent.ways[True] == "compile" and ent.exe and runtime.compile_calls[0] == before + 1
    assert len(seen) == 1
    np.testing.assert_allclose(np.frombuffer(seen.pop()).reshape(5, 4), np.sin(x) * 2.0, rtol=1e-15, atol=0)
    small = xp.asarray(x[:2, :3])._v                                    # (under the threshold: its host program)
    JT.staged_call(_body, [small], "b", by_op=True, k=2.0)
    assert JT._LAST[_body][3].ways[True] == "host" and runtime.compile_calls[0] == before + 1


def test_a_body_some_kernel_does_not_cover_binds_its_equations_as_the_unstaged_body(fresh_staged):
    """complex cos has no host kernel for complex operands: the staged call binds its equations one by one
    (each on its kernel or single-op executable), exactly what the plain body gives, every call."""
    z = (np.linspace(-1, 1, 6) + 1j * np.linspace(0.5, -0.5, 6)).astype(np.complex128)
    r = xp.asarray(z)._v

    def ref():
        return bind(E.mul_p, bind(E.cos_p, r), np.asarray(2.0, np.complex128))
    seen = {_bytes(JT.staged_call(_cos_body, [r], "c", by_op=True)[0]) for _ in range(20)}
    assert JT._LAST[_cos_body][3].ways[True] == "bind"
    assert seen == {_bytes(ref())}
    np.testing.assert_allclose(np.frombuffer(seen.pop(), np.complex128), np.cos(z) * 2.0, rtol=1e-14)


def _cos_body(a):
    return [bind(E.mul_p, bind(E.cos_p, a), np.asarray(2.0, get_aval(a).dtype))]


def test_by_op_false_compiles_at_once(fresh_staged):
    r = xp.asarray(np.linspace(0.0, 1.0, 5))._v
    before = runtime.compile_calls[0]
    for _ in range(3):
        JT.staged_call(_body, [r], "b", k=2.0)
    assert JT._LAST[_body][3].ways[False] == "compile" and runtime.compile_calls[0] == before + 1


def test_threads_get_the_same_bits(fresh_staged):
    x = np.linspace(-3.0, 3.0, 20).reshape(4, 5)
    r = xp.asarray(x)._v
    (want,) = JT.staged_call(_body, [r], "b", by_op=True, k=2.0)
    bad = []

    def work(seed):
        for _ in range(60):
            (got,) = JT.staged_call(_body, [r], "b", by_op=True, k=2.0)
            if _bytes(got) != _bytes(want):
                bad.append(np.asarray(got))
    ts = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not bad


# ------------------------------------------------------------------ by_op="always"
def test_always_never_compiles_and_equals_the_unstaged_binds(fresh_staged, monkeypatch):
    x = np.random.default_rng(0).standard_normal((6, 7))
    r = xp.asarray(x)._v
    before = runtime.compile_calls[0]
    for _ in range(3):
        (got,) = JT.staged_call(_body, [r], "a", by_op="always", k=2.5)
    ent = JT._LAST[_body][3]
    assert ent.ways["always"] == "host" and ent.exe is None and runtime.compile_calls[0] == before
    (ref,) = _body(r, k=2.5)                                            # (eager binds, one by one)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(ref))
    # above the threshold: its equations are bound one by one (no staged executable)
    JT._staged_jaxpr.cache_clear()
    monkeypatch.setattr(host_eager, "BY_OP_MAX_ELEMENTS", 8)
    (got2,) = JT.staged_call(_body, [r], "a", by_op="always", k=2.5)
    ent2 = JT._LAST[_body][3]
    assert ent2.ways["always"] == "bind" and ent2.exe is None and runtime.compile_calls[0] == before
    np.testing.assert_array_equal(np.asarray(got2), np.asarray(ref))


# ------------------------------------------------------------------ run_eager
def _loop_body(a):
    from transforms.control_flow import while_raw
    out = while_raw(lambda v, k: bind(E.lt_p, k, np.int32(6)),
                    lambda v, k: (bind(E.mul_p, bind(E.cos_p, v), a), bind(E.add_p, k, np.int32(1))),
                    [a, np.int32(0)])
    return [out[0]]


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_run_eager_equals_the_unstaged_binds(dt):
    x = np.linspace(-1.0, 1.5, 7).astype(dt)
    r = xp.asarray(x)._v
    for body, static in ((_body, {"k": 2.0}), (_loop_body, {})):
        ent = _entry(body, [r], **static)
        before = runtime.compile_calls[0]
        (got,) = host_program.run_eager(ent.closed, ent.consts, [r])
        (ref,) = JT.eval_inline(ent.closed.jaxpr, ent.consts, [r])
        assert runtime.compile_calls[0] == before
        assert type(got) is host.HostValue and get_aval(got) == get_aval(ref) and get_aval(got).dtype == dt
        np.testing.assert_array_equal(np.asarray(got), np.asarray(ref))


# ------------------------------------------------------------------ runners kept by callers
def test_staged_runner_equals_staged_call_and_is_forgotten_with_the_cache(fresh_staged):
    x = np.linspace(-1.0, 1.0, 9)
    r = xp.asarray(x)._v
    run = JT.staged_runner(_body, [r], "b", by_op=True, k=2.0)
    (got,) = run([xp.asarray(x + 0.5)._v])
    (ref,) = JT.staged_call(_body, [xp.asarray(x + 0.5)._v], "b", by_op=True, k=2.0)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(ref))
