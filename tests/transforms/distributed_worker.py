"""One process of a multi-process run, started by test_distributed.py (never collected by pytest itself).

usage: python distributed_worker.py SCENARIO PROCESS_ID NUM_PROCESSES PORT
Each process has ARRAY_NAMESPACE_CPU_DEVICES local CPU devices (2 in the tests). Every process builds the
same global input deterministically, feeds its own slice of the mapped axis to pmap, and checks what it
gets back (its members' results) against NumPy on the global input. Prints 'WORKER OK' at the end.
"""
import importlib.util
import os
import sys
import time

import numpy as np

SCENARIO, PID, NPROC, PORT = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
HB = int(os.environ.get("WORKER_HEARTBEAT", "10"))   # seconds; short (3) where a test kills a peer

from transforms import distributed  # noqa: E402  (the engine alone: no client yet)

if SCENARIO == "env":   # every argument from the environment
    os.environ.update(ARRAY_NAMESPACE_COORDINATOR_ADDRESS=f"127.0.0.1:{PORT}", ARRAY_NAMESPACE_NUM_PROCESSES=str(NPROC),
                      ARRAY_NAMESPACE_PROCESS_ID=str(PID), ARRAY_NAMESPACE_LOCAL_DEVICE_IDS="0,1")
    import array_namespace as xp  # noqa: E402
    distributed.initialize(initialization_timeout=60, heartbeat_timeout=HB, shutdown_timeout=30)
elif SCENARIO == "after_client":
    import array_namespace as xp  # noqa: E402
    xp.asarray([1.0]) + 1.0
    import transforms
    transforms.devices()
    try:
        distributed.initialize(f"127.0.0.1:{PORT}", NPROC, PID, initialization_timeout=10)
    except RuntimeError as e:
        assert "client already exists" in str(e) and "before any other use" in str(e), e
        print("WORKER OK", flush=True)
        sys.exit(0)
    raise AssertionError("initialize after the client exists did not raise")
elif SCENARIO == "wrong_address":   # process 1 of 2, pointed at a port where no coordinator serves
    import array_namespace as xp  # noqa: E402
    t = time.monotonic()
    try:
        distributed.initialize(f"127.0.0.1:{PORT}", 2, 1, initialization_timeout=3, heartbeat_timeout=HB)
    except RuntimeError as e:
        assert f"process 1 could not reach the coordinator at 127.0.0.1:{PORT} within initialization_timeout=3 s" \
            in str(e) and "expected process 0 to serve it there" in str(e), e
        assert not distributed.is_initialized()
        print(f"process {PID}: refused after {time.monotonic() - t:.1f} s: {e}", flush=True)
        print("WORKER OK", flush=True)
        sys.exit(0)
    raise AssertionError("initialize with no coordinator at the address did not raise")
elif SCENARIO == "mismatch":   # process 0 has 2 devices, process 1 has 1: refused at first use, in both
    import array_namespace as xp  # noqa: E402
    import transforms  # noqa: E402
    mine, theirs = (2, 1) if PID == 0 else (1, 2)
    distributed.initialize(f"127.0.0.1:{PORT}", NPROC, PID, list(range(mine)), initialization_timeout=60,
                           heartbeat_timeout=HB, shutdown_timeout=30)
    for use in (transforms.devices, lambda: xp.asarray([1.0]) + 1.0, transforms.local_device_count):
        try:
            use()
        except ValueError as e:
            want = (f"this process ({PID}) has {mine} local device(s) but process {1 - PID} has {theirs}; expected "
                    "the same number in every process")
            assert want in str(e), e
        else:
            raise AssertionError("a client with unequal device counts between processes was made")
    print(f"process {PID}: unequal device counts refused ok", flush=True)
    distributed.barrier("end", timeout=60)
    assert distributed.shutdown() is True
    print("WORKER OK", flush=True)
    sys.exit(0)
else:
    import array_namespace as xp  # noqa: E402
    distributed.initialize(f"127.0.0.1:{PORT}", NPROC, PID, initialization_timeout=60, heartbeat_timeout=HB,
                           shutdown_timeout=30)

import transforms  # noqa: E402
from transforms import (all_gather, all_to_all, axis_index, jit, pmap, pmax, ppermute, psum,  # noqa: E402
                        psum_scatter)

assert distributed.is_initialized()
L = transforms.local_device_count()
G = transforms.device_count()
assert transforms.process_index() == PID and transforms.process_count() == NPROC, (transforms.process_index(),)
assert G == L * NPROC, (G, L)
assert all(d.process_index == PID for d in transforms.local_devices())
MINE = slice(PID * L, (PID + 1) * L)   # this process's members of the global axis


def check(name, got, want):
    got = np.asarray(got)
    if got.shape != want.shape or not np.allclose(got, want, rtol=1e-6, atol=0):
        raise AssertionError(f"process {PID}: {name}: got {got.shape} {got.ravel()[:6]}..., want {want.shape} "
                             f"{want.ravel()[:6]}...")
    print(f"process {PID}: {name} ok", flush=True)


def collectives():
    x = np.arange(G * 3 * 4, dtype=np.float32).reshape(G, 3, 4)   # integer-valued: sums are exact
    local = xp.asarray(x[MINE])
    check("psum", pmap(lambda a: psum(a, "i"), "i")(local), np.broadcast_to(x.sum(0), (L, 3, 4)))
    check("pmax", pmap(lambda a: pmax(-a, "i"), "i")(local), np.broadcast_to((-x).max(0), (L, 3, 4)))
    z = np.arange(G * G * 2, dtype=np.float32).reshape(G, G, 2)   # member k sends block j to member j
    check("all_to_all", pmap(lambda a: all_to_all(a, "i", 0, 0), "i")(xp.asarray(z[MINE])),
          np.swapaxes(z, 0, 1)[MINE])
    check("all_gather", pmap(lambda a: all_gather(a, "i"), "i")(local), np.broadcast_to(x, (L,) + x.shape))
    perm = [(k, (k + 1) % G) for k in range(G)]
    check("ppermute", pmap(lambda a: ppermute(a, "i", perm), "i")(local), np.roll(x, 1, 0)[MINE])
    y = np.arange(G * G * 2, dtype=np.float32).reshape(G, G, 2)
    check("psum_scatter", pmap(lambda a: psum_scatter(a, "i"), "i")(xp.asarray(y[MINE])), y.sum(0)[MINE])
    check("axis_index", pmap(lambda a: a * xp.astype(axis_index("i"), a.dtype), "i")(local),
          (x * np.arange(G)[:, None, None])[MINE])
    # replicated operand and result (in_axes=None / out_axes=None)
    check("replicated", pmap(lambda a, b: psum(a, "i") + b, "i", in_axes=(0, None), out_axes=None)(
        local, xp.asarray(np.ones((3, 4), np.float32))), x.sum(0) + 1)
    # jit of pmap runs the pmap's program over every process's devices
    check("jit(pmap)", jit(pmap(lambda a: psum(a, "i") * 2.0, "i"))(local), np.broadcast_to(2 * x.sum(0), (L, 3, 4)))
    # a pmap result fed to the next pmap stays on the devices
    f = pmap(lambda a: ppermute(a, "i", perm), "i")
    check("ppermute twice", f(f(local)), np.roll(x, 2, 0)[MINE])
    # grad around a pmap across processes: each process seeds its own members' cotangents, the transposed
    # psum adds every member's, so each gets its slice of the gradient of the total loss over all processes
    g = transforms.grad(lambda v: xp.sum(pmap(lambda a: a * psum(a, "i"), "i")(v) ** 2))(local)
    S = x.sum(0)
    check("grad", np.asarray(g), (2 * x * S ** 2 + 2 * S * (x ** 2).sum(0))[MINE])
    # 100 programs dispatched before any is read: one runs at a time across processes (in flight together,
    # they took XLA's pool threads in another order in each process and waited on each other for good)
    f = pmap(lambda a: psum(a, "i"), "i")
    outs = [f(local + float(k)) for k in range(100)]
    check("100 in flight", np.stack([np.asarray(o) for o in outs]),
          np.stack([np.broadcast_to(x.sum(0) + G * k, (L, 3, 4)) for k in range(100)]))
    # repeat calls of a program whose replicas communicate: Python's pmap path once per way the arguments lie
    # (pmap_runtime.repeat after that, waiting for the last program as pmap_call does), new values each call
    from transforms.backend import backend
    runs, real = [0], backend.pmap_call
    backend.pmap_call = lambda args, params: runs.__setitem__(0, runs[0] + 1) or real(args, params)
    try:
        h = pmap(lambda a, b: ppermute(a, "i", perm) + b, "i")
        cur, want = local, x
        for _ in range(5):   # first on one device (put per call), then h's own result (on the devices)
            cur, want = h(cur, local), np.roll(want, 1, 0) + x
        check("repeats", cur, want[MINE])
        assert runs[0] == 2, runs
    finally:
        backend.pmap_call = real
    # explicit devices= over every process (reversed): member k on devices[k]
    rev = transforms.devices()[::-1]
    got = pmap(lambda a: a + xp.astype(axis_index("i"), a.dtype), "i", devices=rev)(xp.asarray(x[MINE][::-1]))
    order = [d.id for d in rev if d.process_index == PID]
    members = [k for k, d in enumerate(rev) if d.process_index == PID]
    want = np.stack([x[G - 1 - k] + k for k in members])
    check(f"devices=reversed {order}", got, want)


def shard_maps():
    """shard_map over a mesh of every process's devices: each process passes the global value and puts the
    tiles of its own devices; a replicated result reads back anywhere, a split one only through its shards."""
    from transforms import Mesh, P, shard_map
    mesh = Mesh(transforms.devices(), ("x",))
    x = np.arange(G * 3, dtype=np.float32).reshape(G, 3)
    check("shard_map psum", shard_map(lambda a: psum(a, "x"), mesh, P("x"), P())(xp.asarray(x)), x.sum(0)[None])
    check("shard_map all_gather", shard_map(lambda a: all_gather(a, "x", tiled=True), mesh, P("x"), P())(
        xp.asarray(x)), x)
    split = shard_map(lambda a: a * 2.0, mesh, P("x"), P("x"))(xp.asarray(x))
    try:
        np.asarray(split)
    except RuntimeError as e:
        assert "shards held by other processes" in str(e), e
    else:
        raise AssertionError("read back a value split over other processes' devices")
    # its own shards read back in any process: this process's devices' rows, in device order
    shards = split.addressable_shards
    mine = [d for d in transforms.devices() if d.process_index == PID]
    assert [s.device for s in shards] == mine, (shards, mine)
    for s in shards:
        np.testing.assert_array_equal(np.asarray(s.data), 2.0 * x[s.index])
    print(f"process {PID}: shard_map split readback refused ok, {len(shards)} own shards ok", flush=True)


def bad_input():
    from transforms.core import get_aval
    from xla import _jaxlib, runtime
    other = [d for d in transforms.devices() if d.process_index != PID]
    # a value laid over every process's devices (as a global array would be) holds shards this process
    # cannot read: a clear error from every way of reading it, not a crash or a partial value
    sh = _jaxlib.many_devices(transforms.devices(), 2, True)
    block = np.zeros((1, 2), np.float32)
    parts = [_jaxlib.device_put(block + k, get_aval(block), d) for k, d in enumerate(transforms.local_devices())]
    glob = _jaxlib.ArrayImpl(get_aval(np.zeros((G, 2), np.float32)), sh, parts, committed=True, _skip_checks=True)
    refused_clearly(glob, other)
    # a replicated value over every process's devices reads back from a local copy
    one = np.array([1.5, -2.0], np.float32)
    reps = [_jaxlib.device_put(one, get_aval(one), d) for d in transforms.local_devices()]
    rep = _jaxlib.ArrayImpl(get_aval(one), _jaxlib.many_devices(transforms.devices(), 1, False), reps, committed=True,
                            _skip_checks=True)
    np.testing.assert_array_equal(_jaxlib.gather(rep), one)
    try:
        xp.asarray(np.ones(3), device=other[0])
    except ValueError as e:
        assert "unknown device" in str(e), e
    else:
        raise AssertionError("an array put on a device of another process")
    try:
        runtime.device_buffer(np.ones(3), device=other[0])
    except Exception as e:  # noqa: BLE001
        print(f"process {PID}: device of another process refused: {type(e).__name__}: {str(e)[:300]}", flush=True)
    else:
        raise AssertionError("a buffer put on a device of another process")
    try:
        pmap(lambda a: a, devices=other[:L])(xp.ones((L, 2)))
    except ValueError as e:
        assert "devices of this process" in str(e), e
    else:
        raise AssertionError("pmap over only other processes' devices ran")
    try:
        distributed.initialize(f"127.0.0.1:{PORT}", NPROC, PID)
    except RuntimeError as e:
        assert "already joined" in str(e), e
    else:
        raise AssertionError("initialize twice did not raise")
    if SCENARIO == "collectives" and importlib.util.find_spec("jax") is not None:
        import jax  # noqa: F401  (it gives jaxlib's ArrayImpl its own __array__: ours must not go through it)
        refused_clearly(glob, other)
        local = pmap(lambda a: a * 2.0)(xp.asarray(np.arange(L * 3.0).reshape(L, 3)))
        np.testing.assert_array_equal(np.asarray(local), 2.0 * np.arange(L * 3.0).reshape(L, 3))
    print(f"process {PID}: bad input ok", flush=True)


def refused_clearly(glob, other):
    """Every way of reading a value with shards of another process raises our clear error."""
    from xla import _jaxlib
    for read in (_jaxlib.gather, _jaxlib.to_numpy, lambda a: np.asarray(xp.asarray(a))):
        try:
            read(glob)
        except RuntimeError as e:
            assert "shards held by other processes" in str(e) and f"belongs to process {other[0].process_index}" \
                in str(e), e
        else:
            raise AssertionError("no error reading shards of another process")


def big_psum_scatter():
    per = 1 << 20   # each member's output chunk: 1 Mi float32 = 4 MiB; its input 4 MiB per member of the axis
    rng = np.random.default_rng(7)
    x = rng.integers(-8, 8, size=(G, G * per)).astype(np.float32)   # small integers: exact sums in any order
    t = time.perf_counter()
    got = pmap(lambda a: psum_scatter(a, "i", scatter_dimension=0, tiled=True), "i")(xp.asarray(x[MINE]))
    got = np.asarray(got)
    want = x.sum(0).reshape(G, per)[MINE]
    check(f"psum_scatter {per * 4 >> 20} MiB per shard ({time.perf_counter() - t:.2f} s)", got, want)


def bandwidth():
    f = pmap(lambda a: psum(a, "i"), "i")
    for kib in (4, 64, 1024, 16384):
        n = kib * 256
        x = xp.asarray(np.ones((L, n), np.float32))
        np.asarray(f(x))   # compile and warm
        reps = 10 if kib <= 1024 else 3
        distributed.barrier("bw")
        t = time.perf_counter()
        for _ in range(reps):
            out = f(x)
        np.asarray(out)
        dt = (time.perf_counter() - t) / reps
        if PID == 0:
            print(f"BANDWIDTH {kib} KiB/device psum over {G} devices in {NPROC} processes: {dt * 1e3:.3f} ms, "
                  f"{kib / 1024 / dt:.1f} MiB/s per device", flush=True)


def die(early):
    """The last process dies (after one collective together, or before any); the others must fail, not hang."""
    f = pmap(lambda a: psum(a, "i"), "i")
    x = xp.asarray(np.ones((L, 4), np.float32))
    if not early:
        np.asarray(f(x))
    if PID == NPROC - 1:
        print(f"process {PID}: dying", flush=True)
        os._exit(7)
    t = time.perf_counter()
    try:
        for _ in range(1000):
            np.asarray(f(x))
            time.sleep(0.01)
    except RuntimeError as e:
        print(f"process {PID}: FAILED CLEARLY after {time.perf_counter() - t:.1f} s: {e}", flush=True)
        sys.exit(3)
    print(f"process {PID}: no failure although a peer died", flush=True)
    sys.exit(1)


def sharded_sklearn():
    """PCA.fit_transform and Ridge fit + predict under jit(in_shardings=rows) on a mesh of every process's
    devices (sharded_sklearn_cases.py's helpers): each process passes the global data, puts its own devices'
    rows, checks its own rows of the results (and the replicated coefficients) against NumPy-backed sklearn,
    and finds all-reduces and no gather of the whole dataset in the partitioned program."""
    import sharded_sklearn_cases as C
    mesh = transforms.make_mesh((G,), ("d",), transforms.devices())
    rows, vec = C.shardings(mesh)
    X, y = C.data(0)
    Xs, ys = transforms.device_put(xp.asarray(X), rows), transforms.device_put(xp.asarray(y), vec)
    f = jit(C.pca, in_shardings=rows)
    got = f(Xs)
    want = C.numpy_pca(X)
    for sh in got.addressable_shards:
        np.testing.assert_allclose(np.asarray(sh.data), want[sh.index], rtol=1e-10, atol=1e-10)
    print(f"process {PID}: sharded PCA ok ({len(got.addressable_shards)} own shards) "
          f"{C.check_partitioned(f.compiled(Xs), 'PCA')}", flush=True)
    g = jit(C.ridge, in_shardings=(rows, vec))
    coef, intercept, pred = g(Xs, ys)
    wc, wi, wp = C.numpy_ridge(X, y)
    np.testing.assert_allclose(np.asarray(coef), wc, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(float(intercept), wi, rtol=1e-10, atol=1e-10)
    for sh in pred.addressable_shards:
        np.testing.assert_allclose(np.asarray(sh.data), wp[sh.index], rtol=1e-10, atol=1e-10)
    print(f"process {PID}: sharded Ridge ok {C.check_partitioned(g.compiled(Xs, ys), 'Ridge')}", flush=True)


if SCENARIO in ("collectives", "env"):
    collectives()
    shard_maps()
    bad_input()
elif SCENARIO == "sklearn":
    sharded_sklearn()
elif SCENARIO == "big":
    big_psum_scatter()
elif SCENARIO == "bandwidth":
    bandwidth()
elif SCENARIO in ("die", "die_early"):
    die(SCENARIO == "die_early")
distributed.barrier("end", timeout=60)
assert distributed.shutdown() is True and not distributed.is_initialized()
print("WORKER OK", flush=True)
