"""xla/pmap_runtime.py on 4 CPU devices (run by test_pmap_runtime.py with ARRAY_NAMESPACE_CPU_DEVICES=4)."""
import numpy as np
import pytest

import array_namespace as xp
import transforms
from transforms import jit, make_jaxpr, pmap, psum
from xla import _jaxlib, pmap_runtime

N = 4


def test_one_program_per_body_and_devices():
    f = pmap(lambda a: a * 2.0 + psum(a, "i"), "i")
    x = xp.asarray(np.arange(12.0).reshape(N, 3))
    before = pmap_runtime.compile_count[0]
    outs = [np.asarray(f(x)) for _ in range(3)]
    assert pmap_runtime.compile_count[0] == before + 1
    for o in outs:
        np.testing.assert_allclose(o, 2 * np.arange(12.0).reshape(N, 3) + np.arange(12.0).reshape(N, 3).sum(0))
    g = pmap(lambda a: a * 2.0 + psum(a, "i"), "i", devices=transforms.devices()[::-1])
    np.testing.assert_allclose(np.asarray(g(x)), outs[0])   # other devices: another program, same values
    assert pmap_runtime.compile_count[0] == before + 2
    assert [d.id for d in g(x)._v._sharding.devices] == [3, 2, 1, 0]


def test_shards_lie_on_their_devices_with_their_blocks():
    x = np.arange(8.0).reshape(N, 2)
    out = pmap(lambda a: a + 1.0)(xp.asarray(x))._v
    shards = _jaxlib.shards(out)
    assert [_jaxlib.device_of(s).id for s in shards] == [0, 1, 2, 3]
    for k, s in enumerate(shards):
        np.testing.assert_array_equal(np.asarray(s), x[k:k + 1] + 1)   # each buffer is exactly its block


@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "int32", "uint8", "bool", "complex64"])
def test_gather_every_dtype(dtype):
    x = (np.arange(N * 3).reshape(N, 3) * 7 % 5).astype(dtype)
    out = pmap(lambda v: v)(xp.asarray(x))
    got = np.asarray(out)
    assert got.dtype == np.dtype(dtype) and got.shape == (N, 3)
    np.testing.assert_array_equal(got, x)


def test_replicated_results_are_single_device_values():
    out = pmap(lambda a: psum(a, "i"), "i", out_axes=None)(xp.asarray(np.ones((N, 2))))
    assert out.shape == (2,)
    np.testing.assert_array_equal(np.asarray(out), [4.0, 4.0])
    np.testing.assert_array_equal(np.asarray(jit(lambda v: v * 2)(out)), [8.0, 8.0])   # any consumer takes it


def test_no_jax_import():
    import sys
    np.asarray(pmap(lambda a: a)(xp.asarray(np.ones((N, 2)))))
    assert "jax" not in sys.modules   # reading shards must not import the jax package


def test_sharding_and_addressable_shards():
    from transforms.devices import Sharding
    x = np.arange(8.0).reshape(N, 2)
    out = pmap(lambda a: a * 10.0)(xp.asarray(x))
    devs = tuple(transforms.devices())
    assert out.sharding == Sharding(devs, True)
    shards = out.addressable_shards
    assert [s.device for s in shards] == list(devs) and [s.index for s in shards] == [0, 1, 2, 3]
    for k, s in enumerate(shards):
        assert type(s.data) is xp.Array and s.data.shape == (1, 2)
        np.testing.assert_array_equal(np.asarray(s.data), 10 * x[k:k + 1])
        np.testing.assert_array_equal(np.asarray(s.data + 1.0), 10 * x[k:k + 1] + 1)   # an ordinary array
    plain = xp.asarray(x)
    assert plain.sharding == Sharding(devs[:1], False) and len(plain.addressable_shards) == 1
    assert "split along axis 0" in repr(out.sharding)


# ------------------------------------------------------------------------------- jit of pmap
def test_jit_of_pmap_runs_the_pmap_program():
    f = pmap(lambda a: a * 2.0 + psum(a, "i"), "i")
    x = np.arange(12.0).reshape(N, 3)
    want = 2 * x + x.sum(0)
    jf = jit(f)
    before = pmap_runtime.compile_count[0]
    out = jf(xp.asarray(x))
    assert pmap_runtime.compile_count[0] == before + 1   # the pmap's replica program, not a one-device one
    assert len(out._v._sharding.devices) == N            # its result lies over the 4 devices
    np.testing.assert_allclose(np.asarray(out), want)
    for _ in range(2):                                    # repeat calls: no new program, same values
        np.testing.assert_allclose(np.asarray(jf(xp.asarray(x))), want)
    assert pmap_runtime.compile_count[0] == before + 1
    # two pmaps at the top level, the second taking the first's result on the devices
    g = jit(lambda v: f(f(v)))
    np.testing.assert_allclose(np.asarray(g(xp.asarray(x))), 2 * want + want.sum(0))
    assert pmap_runtime.pmaps_only(make_jaxpr(lambda v: f(f(v)))(xp.asarray(x)).jaxpr)
    # a mixed program keeps the single-device lowering (the body vmapped): same values, one device
    h = jit(lambda v: f(v) * 3.0)
    assert not pmap_runtime.pmaps_only(make_jaxpr(lambda v: f(v) * 3.0)(xp.asarray(x)).jaxpr)
    out = h(xp.asarray(x))
    np.testing.assert_allclose(np.asarray(out), 3 * want)
    assert not _jaxlib.on_many_devices(out._v)
    # under grad the jit is bound as jit_p and run eagerly: still the pmap's program for the pmaps-only part
    gr = transforms.grad(lambda v: xp.sum(jf(v) ** 2))(xp.asarray(x))
    np.testing.assert_allclose(np.asarray(gr), 2 * (2 * want) + 2 * want.sum(0), rtol=1e-12)


def test_jit_of_pmap_with_jit_donation():
    f = pmap(lambda a: a + 1.0)
    x = f(xp.asarray(np.zeros((N, 3))))            # on the devices already
    out = jit(f, donate_argnums=0)(x)
    np.testing.assert_array_equal(np.asarray(out), np.full((N, 3), 2.0))
    assert x._v.is_deleted()                       # consumed by the pmap's program


# ------------------------------------------------------------------------------- donation
def test_pmap_donation():
    f = pmap(lambda a, b: a * 2.0 + b, donate_argnums=0)
    base = pmap(lambda a: a)(xp.asarray(np.arange(8.0).reshape(N, 2)))   # a value already on the devices
    b = xp.asarray(np.ones((N, 2)))
    out = f(base, b)
    np.testing.assert_array_equal(np.asarray(out), 2 * np.arange(8.0).reshape(N, 2) + 1)
    assert base._v.is_deleted() and not out._v.is_deleted()
    with pytest.raises(Exception, match="deleted or donated"):
        np.asarray(f(base, b))
    # host data: the program gets fresh copies, the caller's array stays usable
    h = xp.asarray(np.arange(8.0).reshape(N, 2))
    np.testing.assert_array_equal(np.asarray(f(h, b)), 2 * np.arange(8.0).reshape(N, 2) + 1)
    np.testing.assert_array_equal(np.asarray(h), np.arange(8.0).reshape(N, 2))
    # the program marks the donated parameter (and only it)
    before = pmap_runtime.compile_count[0]
    g = pmap(lambda a, b: a - b, donate_argnums=(1,))
    np.testing.assert_array_equal(np.asarray(g(b, b)), np.zeros((N, 2)))
    assert pmap_runtime.compile_count[0] == before + 1
    progs = [p for k, p in pmap_runtime._programs.items() if k[-1] == (False, True)]
    assert progs, "no program compiled with the second operand donated"
    with pytest.raises(ValueError, match="both static and donated"):
        pmap(lambda a, n: a * n, static_broadcasted_argnums=1, donate_argnums=1)(xp.ones((N, 2)), 3)


# ------------------------------------------------------- repeat calls: the C++ fast path (jit_dispatch.pmap_public)
@pytest.fixture
def runs(monkeypatch):
    """How many pmap calls ran in Python (the backend's pmap_call); a call the C++ dispatcher repeats adds none."""
    from transforms.backend import backend
    count, real = [0], backend.pmap_call
    monkeypatch.setattr(backend, "pmap_call", lambda args, params: count.__setitem__(0, count[0] + 1) or
                        real(args, params))
    return count


def _on_devices(x):
    return pmap(lambda v: v)(xp.asarray(x))


def test_repeat_calls_on_the_devices_run_natively_with_their_new_values(runs):
    f = pmap(lambda a, b: a * 2.0 - b)
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal((N, 3)) for _ in range(4)]
    ys = [_on_devices(x) for x in xs]
    start = runs[0]
    for k in range(4):   # new values each call, one signature: Python once, C++ after
        got = f(ys[k], ys[(k + 1) % 4])
        np.testing.assert_array_equal(np.asarray(got), xs[k] * 2.0 - xs[(k + 1) % 4])
        assert got._v._sharding is ys[0]._v._sharding   # where the Python path lays it: on the devices
    assert runs[0] == start + 1
    chain = ys[0]
    for _ in range(3):   # a result fed back in (pending outputs, no wait)
        chain = f(chain, ys[1])
    np.testing.assert_allclose(np.asarray(chain), ((xs[0] * 2 - xs[1]) * 2 - xs[1]) * 2 - xs[1], rtol=1e-14)
    assert runs[0] == start + 1


@pytest.mark.parametrize("kind", ["numpy", "float32 numpy", "host Array", "Array on one device", "mixed"])
def test_repeat_calls_on_arguments_not_on_the_devices_yet_put_them_and_run_natively(runs, kind):
    """A NumPy array or a value on one device, new values each call: put on the devices per call (split along axis
    0; copied for in_axes None) by the dispatcher's repeat -- Python's pmap path runs for the first call only."""
    put = {"numpy": lambda x: x, "float32 numpy": lambda x: x.astype(np.float32), "host Array": xp.asarray,
           "Array on one device": lambda x: jit(lambda v: v + 0.0)(xp.asarray(x)),
           "mixed": lambda x: x}[kind]
    f = pmap(lambda a, b, c: a * 2.0 - b + c, in_axes=(0, 0, None))
    g = pmap(lambda a, b, c: psum(a, "i") - b * c, "i", in_axes=(0, 0, None))   # replicas that communicate
    rng = np.random.default_rng(1)
    for fn, want in ((f, lambda a, b, c: a * 2.0 - b + c), (g, lambda a, b, c: a.sum(0) - b * c)):
        calls = [[put(rng.standard_normal((N, 3))), put(rng.standard_normal((N, 3))), put(rng.standard_normal(3))]
                 for _ in range(4)]
        if kind == "mixed":   # one already on the devices, one on the host, a replicated one on one device
            calls = [[_on_devices(a), b, jit(lambda v: v + 0.0)(xp.asarray(c))] for a, b, c in calls]
        start = runs[0]
        for xs in calls:
            got = fn(*xs)
            host = [np.asarray(x) for x in xs]
            expect = np.broadcast_to(want(*host), (N, 3))
            np.testing.assert_allclose(np.asarray(got), expect, rtol=1e-6 if host[0].dtype == np.float32 else 1e-15)
            assert np.asarray(got).dtype == host[0].dtype and [d.id for d in got._v._sharding.devices] == list(range(N))
        assert runs[0] == start + 1, kind
    # the host array written after a call: the next call sees the new values (each call copies them)
    a = np.ones((N, 3))
    h = pmap(lambda v: v * 1.0)
    h(a), h(a)
    a[:] = 7.0
    np.testing.assert_array_equal(np.asarray(h(a)), np.full((N, 3), 7.0))
    # the other byte order on that signature (the dispatcher does not tell them apart): the same values
    np.testing.assert_array_equal(np.asarray(h(a.astype(a.dtype.newbyteorder()))), np.full((N, 3), 7.0))
    # an axis moved (in_axes=1) or a wrong size: Python's path, right or its error
    m = pmap(lambda v: v * 10.0, in_axes=1)
    sq = rng.standard_normal((N, N))
    for _ in range(2):
        np.testing.assert_array_equal(np.asarray(m(sq)), (sq * 10.0).T)
    with pytest.raises(ValueError, match="more than the"):
        h(np.ones((N + 1, 3)))
    # a value on one device deleted: a clear error on the Python path and on a native signature alike
    one = [jit(lambda v: v + 0.0)(xp.asarray(np.ones((N, 3)))) for _ in range(3)]
    gone = pmap(lambda v: v * 2.0)
    one[0]._v.delete()
    with pytest.raises(RuntimeError, match="deleted or donated"):
        gone(one[0])
    np.testing.assert_array_equal(np.asarray(gone(one[1])), np.full((N, 3), 2.0))
    one[2]._v.delete()
    with pytest.raises(RuntimeError, match="deleted or donated"):
        gone(one[2])


@pytest.mark.parametrize("change", ["shape", "dtype", "int", "host", "devices", "members"])
def test_every_change_of_signature_misses_and_stays_right(runs, change):
    f = pmap(lambda a: a * 3 + 1)
    x = np.arange(N * 3, dtype=np.float64).reshape(N, 3)
    for _ in range(2):
        np.testing.assert_array_equal(np.asarray(f(_on_devices(x))), x * 3 + 1)
    start = runs[0]
    if change == "shape":
        new = np.arange(N * 5, dtype=np.float64).reshape(N, 5)
        arg = _on_devices(new)
    elif change == "dtype":
        new = x.astype(np.float32)
        arg = _on_devices(new)
    elif change == "int":
        new = x.astype(np.int32)
        arg = _on_devices(new)
    elif change == "host":   # host data: split over the devices per call
        new = x + 0.5
        arg = xp.asarray(new)
    elif change == "devices":   # the same avals laid out on other devices: gathered and split again
        new = x - 2.0
        arg = pmap(lambda v: v, devices=transforms.devices()[::-1])(xp.asarray(new))
    else:   # fewer members: another program, on the first N - 1 devices
        new = x[:-1] * 2
        arg = _on_devices(new)
    for _ in range(2):
        got = f(arg)
        assert got.dtype == xp.asarray(new * 3 + 1).dtype if change != "int" else got.dtype == xp.int32
        np.testing.assert_array_equal(np.asarray(got), new * 3 + 1)
        assert [d.id for d in got._v._sharding.devices] == list(range(len(new)))
    assert runs[0] >= start + 1
    np.testing.assert_array_equal(np.asarray(f(_on_devices(x))), x * 3 + 1)   # and back: still right


def test_a_deleted_operand_raises_on_a_native_signature():
    f = pmap(lambda a: a + 1.0)
    x = _on_devices(np.zeros((N, 2)))
    f(x), f(x)
    y = _on_devices(np.ones((N, 2)))
    y._v.delete()
    with pytest.raises(RuntimeError, match="deleted"):
        np.asarray(f(y))
    np.testing.assert_array_equal(np.asarray(f(x)), np.ones((N, 2)))


def test_what_stays_on_python_stays_right(runs):
    x = np.arange(N * 2.0).reshape(N, 2)
    y = _on_devices(x)
    c = xp.asarray(np.array([10.0, 20.0]))
    moved = pmap(lambda a: a * 2.0, out_axes=1)   # a result moved
    start = runs[0]
    for _ in range(3):
        np.testing.assert_array_equal(np.asarray(moved(y)), (x * 2.0).T)
    assert runs[0] == start + 3
    # constants (a captured array): put on the devices once, with the repeat's description; new values each call
    with_c = pmap(lambda a: a + c)
    with_c_psum = pmap(lambda a: psum(a, "i") * c, "i")
    ys = [_on_devices(x * k) for k in range(3)]
    start = runs[0]
    for k in range(3):
        np.testing.assert_array_equal(np.asarray(with_c(ys[k])), x * k + [10.0, 20.0])
        np.testing.assert_array_equal(np.asarray(with_c_psum(ys[k])), np.broadcast_to(x.sum(0) * k * [10.0, 20.0],
                                                                                       (N, 2)))
    assert runs[0] == start + 2
    # replicas that communicate: repeated off the C++ dispatcher (it waits first), new values each call
    g = pmap(lambda a, b: psum(a, "i") - b, "i")
    ins = [_on_devices(x * k) for k in range(4)]
    start = runs[0]
    for k in range(4):
        got = g(ins[k], y)
        np.testing.assert_array_equal(np.asarray(got), np.broadcast_to(x.sum(0) * k, (N, 2)) - x)
    assert runs[0] == start + 1
    z = _on_devices(x)
    z._v.delete()
    with pytest.raises(RuntimeError, match="deleted"):
        g(z, y)
    np.testing.assert_array_equal(np.asarray(g(xp.asarray(x), y)), np.broadcast_to(x.sum(0), (N, 2)) - x)  # host
    f32 = _on_devices(x.astype(np.float32))   # another dtype for b
    np.testing.assert_array_equal(np.asarray(g(y, f32)), np.broadcast_to(x.sum(0), (N, 2)) - x)
    # under transforms after native calls: traced, right
    h = pmap(lambda a: a * a)
    h(y), h(y)
    np.testing.assert_array_equal(np.asarray(jit(lambda v: h(v) + 1.0)(y)), x * x + 1)
    np.testing.assert_allclose(np.asarray(transforms.grad(lambda v: xp.sum(h(v)))(y)), 2 * x)
    np.testing.assert_array_equal(np.asarray(transforms.vmap(h, in_axes=1, out_axes=1)(y)), x * x)
    np.testing.assert_array_equal(np.asarray(jit(g)(y, y)), np.broadcast_to(x.sum(0), (N, 2)) - x)


def test_errors_stay_after_native_calls():
    f = pmap(lambda a: a + 1.0)
    y = _on_devices(np.zeros((N, 2)))
    f(y), f(y)
    with pytest.raises(ValueError, match=f"size {N + 1}, more than the {N} local devices"):
        f(xp.ones((N + 1, 2)))
    with pytest.raises(TypeError, match="expected an array"):
        f("text")
    np.testing.assert_array_equal(np.asarray(f(y)), np.ones((N, 2)))


def test_collective_programs_issued_back_to_back_without_waiting():
    """Each starts once the last has finished (pmap_runtime._execute): replicas of several programs blocked in
    their collectives at once could hold every pool thread (XLA aborts the process after 40 s)."""
    f = pmap(lambda a: psum(a, "i"), "i")
    g = pmap(lambda a: a * 0.5)   # no collective: not held back, its results pending when f takes them
    x = _on_devices(np.ones((N, 8)))
    outs = [f(x) for _ in range(200)]
    chain = x
    for _ in range(50):
        chain = g(f(chain))
    for o in outs[::40]:
        np.testing.assert_array_equal(np.asarray(o), np.full((N, 8), float(N)))
    np.testing.assert_array_equal(np.asarray(chain), np.full((N, 8), (N * 0.5) ** 50))


def test_communicating_repeats_run_in_c_with_their_new_values(monkeypatch):
    """A psum's program waits before it runs (pmap_runtime._execute), so jaxlib's C++ dispatcher cannot repeat it;
    its plain repeats (arguments on the devices, one process) run in the C extension instead
    (xla/_dispatch_nodes.c `repeat`): no Python launch, right values, the same waiting. Threads calling it at
    once each get their own result (the programs one at a time, never a rendezvous deadlock)."""
    import importlib.util
    import threading
    import time
    launches, real = [0], pmap_runtime._execute
    monkeypatch.setattr(pmap_runtime, "_execute", lambda prog, bufs: launches.__setitem__(0, launches[0] + 1) or
                        real(prog, bufs))
    native = importlib.util.find_spec("xla._dispatch_nodes") is not None
    g = pmap(lambda a, b: {"s": psum(a, "i") - b, "m": a * b}, "i")
    rng = np.random.default_rng(5)
    xs = [rng.standard_normal((N, 3)) for _ in range(6)]
    ys = [_on_devices(x) for x in xs]
    g(ys[0], ys[1])
    start = launches[0]
    for k in range(5):
        got = g(ys[k], b=ys[k + 1])
        np.testing.assert_allclose(np.asarray(got["s"]), xs[k].sum(0) - xs[k + 1], rtol=1e-14, atol=1e-14)
        np.testing.assert_array_equal(np.asarray(got["m"]), xs[k] * xs[k + 1])
        assert got["s"]._v._sharding is ys[0]._v._sharding
    assert launches[0] == start + (0 if native else 5) + 1   # (b by keyword: a new signature, its first call)
    chain = ys[0]
    for _ in range(20):   # each call on the last one's pending result: it waits for it, then runs
        chain = g(chain, ys[1])["s"]
    want = xs[0]
    for _ in range(20):
        want = want.sum(0) - xs[1]
    np.testing.assert_allclose(np.asarray(chain), want, rtol=1e-12)
    out = {}

    def worker(t):
        mine = [_on_devices(x * (t + 1)) for x in xs[:2]]
        out[t] = [np.asarray(g(mine[0], mine[1])["s"]) for _ in range(30)]
    stop = []

    def clearer():   # the table cleared under the calls (as when it fills): each call still right, no crash
        while not stop:
            pmap_runtime._repeats.clear()
            time.sleep(0.001)
    threads = [threading.Thread(target=worker, args=(t,)) for t in range(4)]
    side = threading.Thread(target=clearer)
    side.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    stop.append(True)
    side.join(10)
    assert not any(t.is_alive() for t in threads + [side])
    for t in range(4):
        for got in out[t]:
            np.testing.assert_allclose(got, (t + 1) * (xs[0].sum(0) - xs[1]), rtol=1e-14, atol=1e-14)
    y = _on_devices(xs[2])   # a deleted operand on the C path: the whole path's clear error
    y._v.delete()
    with pytest.raises(RuntimeError, match="deleted"):
        g(y, ys[1])
    np.testing.assert_allclose(np.asarray(g(xp.asarray(xs[2]), ys[1])["s"]), xs[2].sum(0) - xs[1], rtol=1e-14)
