"""xla/host_eager.py: which staged calls run eagerly op by op on host kernels, and what that gives.

Oracles: NumPy for values; jit of the same function for eager == compiled; the runtime's compile
counter for "no compile"; the staged entry's way, decided once from static facts.
"""
import numpy as np
import pytest

import array_namespace as xp
from transforms import jit, make_jaxpr
from transforms import jaxpr_transforms as JT
from transforms.core import get_aval
from transforms.primitives import elementwise as E
from xla import host, host_eager, runtime

pytestmark = pytest.mark.skipif(host.MODE == "xla", reason="host kernels switched off (ARRAY_NAMESPACE_EAGER=xla)")


def _closed(f, *args):
    return make_jaxpr(f)(*args)


def test_the_way_of_host_bodies_and_of_others(monkeypatch):
    x = xp.asarray(np.arange(6.0).reshape(2, 3))
    assert host_eager.eager_way(_closed(lambda a: xp.sum(xp.sin(a) * a), x)) == "host"
    # a primitive without a host kernel (here: tan's withdrawn) -> its equations bound one by one
    monkeypatch.delitem(host.host_kernels, E.tan_p)
    assert host_eager.eager_way(_closed(lambda a: xp.tan(a), x)) == "bind"
    # an elementwise kernel that declines the dtype (complex sin_p: xp.sin computes it from real parts) ->
    # bound one by one; complex log runs on host
    z = xp.asarray(np.array([1 + 2j, 3 - 1j]))
    assert host_eager.eager_way(_closed(lambda a: E.sin_p.bind(a._v), z)) == "bind"
    assert host_eager.eager_way(_closed(lambda a: xp.sin(a) * 2, z)) == "host"
    assert host_eager.eager_way(_closed(lambda a: xp.log(a) * 2, z)) == "host"
    assert host_eager.eager_way(_closed(lambda a: a * a + 1, z)) == "host"
    # too large: XLA's fusion wins, light body or heavy -> compiled
    big = xp.zeros((host_eager.BY_OP_MAX_ELEMENTS + 1,))
    assert host_eager.eager_way(_closed(lambda a: xp.fft.fft(a), big)) == "compile"
    assert host_eager.eager_way(_closed(lambda a: a * 2, big)) == "compile"
    mid = xp.zeros((host_eager.BY_OP_MAX_ELEMENTS // 2,))     # medium: op by op, light or heavy
    assert host_eager.eager_way(_closed(lambda a: xp.fft.fft(a), mid)) == "host"
    assert host_eager.eager_way(_closed(lambda a: a * 2, mid)) == "host"
    mat = xp.zeros((4, host_eager.BY_OP_MAX_ELEMENTS // 8))
    assert host_eager.eager_way(_closed(lambda a: xp.linalg.svdvals(a), mat)) == "host"
    # nested jit is looked into
    inner = jit(lambda a: xp.cos(a) + 1)
    assert host_eager.eager_way(_closed(lambda a: inner(a) * 3, x)) == "host"
    inner_tan = jit(lambda a: xp.tan(a))
    assert host_eager.eager_way(_closed(lambda a: inner_tan(a) * 3, x)) == "bind"
    # control flow counts as host where its bodies do (xla/host_control_flow.py runs it)
    from transforms import while_loop
    loop = lambda a, f: while_loop(lambda c: xp.sum(c) < 100.0, lambda c: f(c) * 2.0 + 1.0, a)
    assert host_eager.eager_way(_closed(lambda a: loop(a, xp.cos), x)) == "host"
    assert host_eager.eager_way(_closed(lambda a: loop(a, xp.tan), x)) == "bind"
    # stop_gradient is the value itself eagerly
    from transforms import stop_gradient
    assert host_eager.eager_way(_closed(lambda a: stop_gradient(a) * a, x)) == "host"


def test_linalg_and_fft_on_new_shapes_compile_nothing_and_match_numpy_and_jit(fresh_staged):
    rng = np.random.default_rng(0)
    before = runtime.compile_calls[0]
    got = []
    for n in (4, 7):
        a = rng.standard_normal((n, n)) + n * np.eye(n)
        b = rng.standard_normal((n, 2))
        xa, xb = xp.asarray(a), xp.asarray(b)
        got.append((a, b, xp.linalg.solve(xa, xb), xp.linalg.det(xa), xp.linalg.vector_norm(xa, axis=0),
                    xp.fft.rfft(xa, axis=0), xp.fft.ifft(xp.fft.fft(xa)), xp.linalg.eigvalsh(xa + xa.mT)))
    assert runtime.compile_calls[0] == before
    for a, b, solve, det, norm, rfft, back, w in got:
        np.testing.assert_allclose(np.asarray(solve), np.linalg.solve(a, b), rtol=1e-12)
        np.testing.assert_allclose(np.asarray(det), np.linalg.det(a), rtol=1e-12)
        np.testing.assert_allclose(np.asarray(norm), np.linalg.norm(a, axis=0), rtol=1e-14)
        np.testing.assert_allclose(np.asarray(rfft), np.fft.rfft(a, axis=0), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(np.asarray(back).real, a, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(np.asarray(w), np.linalg.eigvalsh(a + a.T), rtol=1e-12, atol=1e-12)
    # eager (op by op) == jit (one executable), to rounding
    a, b = got[-1][0], got[-1][1]
    for f in (lambda u, v: xp.linalg.solve(u, v), lambda u, v: xp.linalg.pinv(u) @ v,
              lambda u, v: xp.fft.irfft(xp.fft.rfft(u, axis=0), n=u.shape[0], axis=0) + xp.linalg.slogdet(u)[1]):
        e, j = f(xp.asarray(a), xp.asarray(b)), jit(f)(xp.asarray(a), xp.asarray(b))
        np.testing.assert_allclose(np.asarray(e), np.asarray(j), rtol=1e-11, atol=1e-12)


def test_float32_stays_float32():
    a = np.random.default_rng(1).standard_normal((5, 5)).astype(np.float32) + 5 * np.eye(5, dtype=np.float32)
    for f in (xp.linalg.inv, xp.linalg.det, xp.linalg.svdvals, lambda u: xp.real(xp.fft.fft(u))):
        assert f(xp.asarray(a)).dtype == xp.float32


def _raw_body(a):
    return [JT.bind(E.sin_p, a)]


def test_a_hot_signature_keeps_its_way_and_its_bits():
    """However often a signature is called, it runs its host program: no compile, the same bits."""
    raw = xp.asarray(np.linspace(0.5, 2.0, 12).reshape(3, 4))._v
    before = runtime.compile_calls[0]
    seen = {np.asarray(JT.staged_call(_raw_body, [raw], "hot", by_op=True)[0]).tobytes() for _ in range(300)}
    ent = JT._staged_jaxpr(_raw_body, (get_aval(raw),), ())      # (the cached entry of that call)
    assert ent.ways[True] == "host" and runtime.compile_calls[0] == before and len(seen) == 1
    np.testing.assert_array_equal(np.frombuffer(seen.pop()).reshape(3, 4),
                                  np.sin(np.linspace(0.5, 2.0, 12).reshape(3, 4)))


def _raw_body2(a):
    return [JT.bind(E.cos_p, a)]


def test_staged_calls_compile_unless_they_opt_in():
    """Only by_op=True bodies run op by op (random samplers and the complex special cases keep
    eager == vmap/jit bit for bit by compiling)."""
    raw = xp.asarray(np.linspace(0.5, 2.0, 10))._v
    before = runtime.compile_calls[0]
    JT.staged_call(_raw_body2, [raw], "cold")
    ent = JT._staged_jaxpr(_raw_body2, (get_aval(raw),), ())
    assert ent.ways[False] == "compile" and runtime.compile_calls[0] == before + 1


def test_a_body_holding_a_loop_compiles_above_the_loop_threshold():
    from transforms import scan, while_loop
    loop = lambda a: while_loop(lambda c: xp.sum(c) < 100.0, lambda c: xp.cos(c) * 2.0 + 1.0, a)  # noqa: E731
    small = xp.zeros((host_eager.LOOP_MAX_ELEMENTS,))
    big = xp.zeros((host_eager.LOOP_MAX_ELEMENTS + 1,))
    assert host_eager.eager_way(_closed(loop, small)) == "host"
    assert host_eager.eager_way(_closed(loop, big)) == "compile"
    assert host_eager.eager_way(_closed(lambda a: xp.cos(a) * 2.0, big)) == "host"   # (no loop: the larger limit)
    inner = lambda a: scan(lambda c, r: (c + r, c), 0.0, a)[0]  # noqa: E731
    assert host_eager.eager_way(_closed(lambda a: inner(a) + 1.0, big)) == "compile"   # (a loop nested anywhere)


def test_an_eager_loop_above_the_loop_threshold_compiles_once_and_keeps_its_bits(fresh_staged, monkeypatch):
    from transforms import while_loop
    monkeypatch.setattr(host_eager, "LOOP_MAX_ELEMENTS", 8)
    f = lambda v: while_loop(lambda c: c[1] < 5, lambda c: (xp.sin(c[0]) * 1.5, c[1] + 1), (v, 0))[0]  # noqa: E731
    x = np.linspace(-1.0, 1.0, 12)
    before = runtime.compile_calls[0]
    seen = {np.asarray(f(xp.asarray(x))).tobytes() for _ in range(10)}
    assert runtime.compile_calls[0] == before + 1 and len(seen) == 1
    want = x.copy()
    for _ in range(5):
        want = np.sin(want) * 1.5
    np.testing.assert_allclose(np.frombuffer(seen.pop()), want, rtol=1e-14)
    y = xp.asarray(x[:6])                      # (at or under the threshold: the host loop, no compile)
    before = runtime.compile_calls[0]
    np.testing.assert_allclose(np.asarray(f(y)), want[:6], rtol=1e-14)
    assert runtime.compile_calls[0] == before
