"""fork-safety (xla/fork.py): a forked child gets its own runtime and keeps the parent's values; the parent
goes on working. Each scenario runs in a fresh interpreter (subprocess, killed past its timeout), and every
forked child inside it is waited for with a deadline and killed past it: a hang fails, never blocks.
Values are checked against NumPy. (These are the issue's fork tests; pytest wants one test_fork.py, here.)"""
import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Run in the child: fn() returns a picklable result; normal_exit: the interpreter's own exit (atexit, GC of
# the parent's runtime objects), which must not hang either.
HARNESS = '''
import os, pickle, signal, sys, tempfile, time, traceback
import numpy as np
import array_namespace as xp, transforms as T

def in_child(fn, timeout=90, normal_exit=True):
    fd, path = tempfile.mkstemp()   # (a file, not a pipe: a large result must not block the child's exit)
    os.close(fd)
    pid = os.fork()
    if pid == 0:
        try:
            out, code = ("ok", fn()), 0
        except BaseException as e:
            out, code = ("err", traceback.format_exc()), 1
        with open(path, "wb") as f:
            pickle.dump(out, f)
        if normal_exit:
            sys.exit(code)
        os._exit(code)
    deadline = time.monotonic() + timeout
    while not os.waitpid(pid, os.WNOHANG)[0]:
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            raise AssertionError(f"forked child hung (killed after {timeout} s)")
        time.sleep(0.02)
    with open(path, "rb") as f:
        data = f.read()
    os.unlink(path)
    kind, val = pickle.loads(data) if data else ("err", "the child died without a result")
    assert kind == "ok", val
    return val

close = lambda a, b: np.testing.assert_allclose(np.asarray(a), b, rtol=1e-13, atol=1e-15)
'''


def run(body, env=None, timeout=240):
    src = HARNESS + textwrap.dedent(body) + '\nprint("DONE")\n'
    e = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src"), **(env or {}))
    try:
        p = subprocess.run([sys.executable, "-c", src], capture_output=True, text=True, timeout=timeout, env=e,
                           start_new_session=True)
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(f"scenario hung (killed after {timeout} s): {exc.stderr}") from None
    assert p.returncode == 0 and p.stdout.rstrip().endswith("DONE"), p.stdout + p.stderr
    return p.stdout


def test_jit_in_a_child_after_eager_work():
    # the case: the parent did only eager work (which made its client); jit in the child used to hang
    run('''
    big = np.arange(1 << 20, dtype=float)
    assert float(xp.sum(xp.asarray(big) * 2.0)) == float(np.sum(big * 2.0))
    child = lambda: float(T.jit(lambda v: xp.sum(v * v))(xp.arange(5.0)))
    assert in_child(child) == 30.0
    assert in_child(child, normal_exit=False) == 30.0
    assert float(T.jit(lambda v: xp.sum(v * v))(xp.arange(4.0))) == 14.0   # the parent still works
    ''')


@pytest.mark.parametrize("cache", ["0", "1"])
def test_jit_again_in_a_child_after_jit_work(cache, tmp_path):
    # the parent compiled (with the disk cache off: the child's compiles are real compiles, not loads); the
    # child calls the same jitted function at the same and at new shapes, reuses its output (device-held),
    # differentiates through it; the parent's output stays readable in the child
    run('''
    f = T.jit(lambda v: xp.sin(v) * 2.0 + v)
    ref = lambda a: np.sin(a) * 2.0 + a
    n5, n7 = np.linspace(0.0, 1.0, 5), np.linspace(0.0, 1.0, 7)
    x5 = xp.asarray(n5)
    y = f(x5)   # (maybe still computing at the fork: the fork waits for it)
    g = T.grad(lambda v: xp.sum(f(v) ** 2))
    def child():
        return [np.asarray(v) for v in (f(x5), f(xp.asarray(n7)), y, y + 1.0, f(y), g(x5), xp.sum(y))]
    for normal_exit in (True, False):
        same, new, old, plus, again, grad, total = in_child(child, normal_exit=normal_exit)
        close(same, ref(n5)); close(new, ref(n7)); close(old, ref(n5)); close(plus, ref(n5) + 1.0)
        close(again, ref(ref(n5))); close(grad, 2 * ref(n5) * (2 * np.cos(n5) + 1)); close(total, ref(n5).sum())
    close(f(xp.linspace(0.0, 1.0, 9)), ref(np.linspace(0.0, 1.0, 9)))   # the parent still works
    close(y, ref(n5))
    ''', env={"ARRAY_NAMESPACE_CACHE": cache, "ARRAY_NAMESPACE_CACHE_DIR": str(tmp_path)})


def test_large_multithreaded_eager_work_across_a_fork():
    # the host thread pool (xla/host_parallel.py) ran in the parent; the child runs large eager work on its own
    run('''
    from xla import host_parallel
    assert host_parallel.THREADS >= 2
    big = np.linspace(-3.0, 3.0, 1 << 21)
    assert np.array_equal(np.asarray(xp.sin(xp.asarray(big))), np.sin(big))
    T.jit(lambda v: v + 1.0)(xp.asarray(big))
    def child():
        a = np.asarray(xp.sin(xp.asarray(big)) + xp.asarray(big))
        return a, float(T.jit(lambda v: xp.sum(xp.exp(v)))(xp.asarray(big)))
    a, s = in_child(child)
    assert np.array_equal(a, np.sin(big) + big)
    np.testing.assert_allclose(s, np.exp(big).sum(), rtol=1e-12)
    assert np.array_equal(np.asarray(xp.sin(xp.asarray(big))), np.sin(big))
    ''', env={"ARRAY_NAMESPACE_HOST_THREADS": "4"})


def test_a_fork_pool_maps_eager_jit_and_grad():
    run('''
    import multiprocessing as mp
    f = T.jit(lambda v, s: xp.sum(xp.sin(v) * s))
    df = T.grad(lambda v: xp.sum(xp.sin(v) ** 2))
    f(xp.linspace(0.0, 1.0, 8), 2.0); df(xp.linspace(0.0, 1.0, 8))
    def work(n):
        v = xp.linspace(0.0, 1.0, n + 3)
        return float(f(v, float(n))), np.asarray(df(v)), np.asarray(xp.cumulative_sum(v * v))
    def check(results):
        for n, (a, b, c) in enumerate(results):
            v = np.linspace(0.0, 1.0, n + 3)
            close(a, np.sum(np.sin(v) * n)); close(b, 2 * np.sin(v) * np.cos(v)); close(c, np.cumsum(v * v))
    pool = mp.get_context("fork").Pool(2)
    try:
        check(pool.map_async(work, range(6)).get(timeout=120))
    finally:
        pool.terminate()
        pool.join()
    check([work(n) for n in range(6)])   # the parent still works
    ''', env={"ARRAY_NAMESPACE_CACHE": "0"})


def test_a_child_of_a_child():
    run('''
    f = T.jit(lambda v: xp.sum(xp.cos(v)))
    x = xp.linspace(0.0, 1.0, 5)
    f(x)
    def child():
        y = f(xp.linspace(0.0, 1.0, 6))
        grand = in_child(lambda: (float(f(x)), float(y), float(f(xp.linspace(0.0, 1.0, 7)))), normal_exit=False)
        return grand, float(f(x))
    (a, b, c), d = in_child(child)
    cs = lambda n: np.cos(np.linspace(0.0, 1.0, n)).sum()
    close(a, cs(5)); close(b, cs(6)); close(c, cs(7)); close(d, cs(5))
    ''', env={"ARRAY_NAMESPACE_CACHE": "0"})


def test_arrays_on_other_devices_and_held_executables():
    # an array on device 1 keeps its device and value; a pmap result (over two devices) and an array laid out
    # over a mesh stay readable and usable (a pmap compiled in the child runs on them); an executable the user
    # holds from before the fork says clearly that it must be compiled again
    run('''
    devs = T.devices()
    assert len(devs) == 2
    a = T.device_put(xp.asarray([1.0, 2.0, 3.0]), devs[1])
    assert a.device == devs[1]
    p = T.pmap(lambda v: v * 2.0)(xp.reshape(xp.arange(4.0), (2, 2)))
    held = T.jit(lambda v: v - 1.0).lower(xp.arange(3.0)).compile()
    from transforms.sharding import NamedSharding, P, make_mesh
    m = T.device_put(xp.reshape(xp.arange(8.0), (4, 2)), NamedSharding(make_mesh((2,), ("i",)), P("i")))
    def child():
        try:
            held([xp.arange(3.0)._v])
            stale = "no error"
        except RuntimeError as e:
            stale = str(e)
        on1 = a.device == T.devices()[1]   # (the child's own devices)
        again = T.pmap(lambda v: v - 1.0)(p)   # a program over both devices, compiled in the child
        assert m.sharding.spec == P("i") and np.array_equal(np.asarray(m + 1.0), np.arange(8.0).reshape(4, 2) + 1)
        return on1, np.asarray(a), np.asarray(a * 3.0), np.asarray(p), np.asarray(again), stale
    on1, av, a3, pv, p1, stale = in_child(child)
    assert on1
    close(av, [1.0, 2.0, 3.0]); close(a3, [3.0, 6.0, 9.0])
    close(pv, np.arange(4.0).reshape(2, 2) * 2); close(p1, np.arange(4.0).reshape(2, 2) * 2 - 1)
    assert "fork" in stale and "compile it again" in stale, stale
    close(a, [1.0, 2.0, 3.0])
    ''', env={"ARRAY_NAMESPACE_CPU_DEVICES": "2", "ARRAY_NAMESPACE_CACHE": "0"})


def test_pmaps_repeated_before_a_fork_run_again_in_the_child():
    # repeat calls the parent's dispatchers remembered (the C++ one's fast path; a psum's program for
    # pmap_runtime.repeat) hold the parent's executables: the child compiles its own and gets right values
    run('''
    plain = T.pmap(lambda v: v * 2.0)
    total = T.pmap(lambda v: T.psum(v, "i"), "i")
    x = T.pmap(lambda v: v)(xp.reshape(xp.arange(4.0), (2, 2)))
    for _ in range(3):
        plain(x), total(x)
    def child():
        y = T.pmap(lambda v: v + 1.0)(x)
        return [np.asarray(f(v)) for f in (plain, total) for v in (x, y, x)]
    got = in_child(child)
    want = [np.arange(4.0).reshape(2, 2) + k for k in (0, 1, 0)]
    for g, w in zip(got, [w * 2.0 for w in want] + [np.broadcast_to(w.sum(0), (2, 2)) for w in want]):
        close(g, w)
    close(total(x), np.broadcast_to(np.arange(4.0).reshape(2, 2).sum(0), (2, 2)))
    ''', env={"ARRAY_NAMESPACE_CPU_DEVICES": "2", "ARRAY_NAMESPACE_CACHE": "0"})


def test_a_fork_before_any_use_and_a_child_that_uses_nothing():
    run('''
    assert in_child(lambda: float(T.jit(lambda v: v + 1.0)(xp.asarray(1.0)))) == 2.0   # no client in the parent
    x = T.jit(lambda v: v + 1.0)(xp.asarray(1.0))
    assert in_child(lambda: 7) == 7   # a child that exits without touching the runtime
    assert float(x) == 2.0
    ''')


def test_a_fork_while_another_thread_runs_eager_and_jit_work():
    # locks (the namespace's mutation lock, the runtime's) and compiles of the busy thread at the fork must
    # not reach the child: each child computes, the parent's thread goes on. (Both paths run once first: a
    # fork while another thread is inside a module's first import leaves the child waiting on that module's
    # import lock -- CPython's hazard, not the runtime's.)
    run('''
    import threading
    stop = []
    def busy(once=False):
        i = 0
        while not stop:
            x = xp.arange(float(10 + i % 4))
            x[0] = 5.0
            T.jit(lambda v: xp.sum(xp.sin(v)))(x)
            float(xp.sum(x * 2.0))
            i += 1
            if once:
                return
    def child():
        x = xp.arange(7.0)
        x[1] = 3.0
        return float(T.jit(lambda v: xp.sum(v * v))(x)) + float(xp.sum(xp.arange(1000.0)))
    busy(once=True)
    assert child() == 99.0 + 499500.0
    th = threading.Thread(target=busy)
    th.start()
    try:
        for i in range(4):
            time.sleep(0.05)
            assert in_child(child, normal_exit=bool(i % 2)) == 99.0 + 499500.0
    finally:
        stop.append(1)
        th.join()
    ''', env={"ARRAY_NAMESPACE_CACHE": "0"})


def test_a_child_traces_though_another_thread_held_the_tracing_count_lock_at_the_fork():
    # a thread entering or leaving a trace holds transforms.core's counting lock for an instant. Under the GIL a
    # fork cannot land in that instant today (the block has no point where the interpreter switches threads); on
    # a free-threaded build it can, and the child's copy stayed locked: its first trace (any jit, grad or vmap)
    # hung. Here another thread holds the lock across the fork, so the child meets it every time; the child's
    # count of tracing threads is its own (0).
    run('''
    import threading
    from transforms import core
    held, done = threading.Event(), threading.Event()
    def holder():
        with core._tracing_lock:
            held.set()
            done.wait()
    th = threading.Thread(target=holder)
    th.start()
    held.wait()
    def child():
        assert core.tracing[0] == 0
        return float(T.jit(lambda v: xp.sum(v * 3.0))(xp.arange(4.0))), float(T.grad(lambda v: v * v)(xp.asarray(2.0)))
    try:
        assert in_child(child, timeout=40) == (18.0, 4.0)
    finally:
        done.set()
        th.join()
    assert float(T.jit(lambda v: xp.sum(v * 5.0))(xp.arange(4.0))) == 30.0   # the parent goes on
    ''')


def test_a_fork_while_another_thread_runs_small_factorizations():
    # eager and jitted LAPACK kernels on small matrices set OpenBLAS to one thread and back around each call
    # (xla/host_blas.py). A child forked meanwhile hung: it put the counts back at once, inside OpenBLAS, whose
    # allocator lock another parent thread held at the fork. Now a child makes no OpenBLAS call at the fork (one
    # forked during a hold gets its counts back when its own first kernel ends), and a fork waits for a count
    # change in progress (one re-started OpenBLAS's threads after OpenBLAS's own fork handler had stopped them).
    run('''
    import threading
    from xla import _blas_threads, host_blas
    a = xp.asarray(np.random.default_rng(0).standard_normal((300, 60)))
    want = np.linalg.svd(np.asarray(a), compute_uv=False)
    svd = T.jit(lambda a: xp.linalg.svd(a, full_matrices=False)[1])
    close(svd(a), want)
    close(xp.linalg.svd(a)[1], want)
    before = [g() for _, g in host_blas.libraries()]
    counts = lambda: [g() for _, g in host_blas.libraries()]
    _blas_threads.hold()   # (a kernel of this process runs at the fork: the child holds nothing, counts one)
    def child_held():
        assert _blas_threads.held() == 0
        at_fork = counts()
        close(xp.linalg.svd(a)[1], want)
        return at_fork, counts()
    try:
        assert in_child(child_held, timeout=40) == ([1] * len(before), before)
    finally:
        _blas_threads.release()
    assert counts() == before
    stop = []
    def busy():
        while not stop:
            svd(a).block_until_ready()
            xp.linalg.svd(a)[1].block_until_ready()
    def child():   # (no BLAS here: a child's own kernels can still meet an OpenBLAS lock held at the fork)
        assert _blas_threads.held() == 0
        return float(xp.sum(xp.arange(10.0)))
    th = threading.Thread(target=busy)
    th.start()
    try:
        for i in range(12):
            time.sleep(0.03)
            assert in_child(child, timeout=40, normal_exit=bool(i % 2)) == 45.0
    finally:
        stop.append(1)
        th.join()
    assert counts() == before and _blas_threads.held() == 0
    ''')


def test_a_child_destroys_none_of_the_parents_executables():
    # destroying one takes LLVM's process-wide JIT-registration mutex, which another thread of the parent may
    # hold at the fork (freeing an executable of its own): the child then waited forever (1 fork in ~50 while a
    # thread ran jit work). Every executable the child's reset lets go of is kept (xla/fork.py, _kept).
    run('''
    import gc
    from xla import fork, runtime
    for n in range(3):
        T.jit(lambda v: xp.sum(v * v) + n)(xp.arange(5.0 + n))
    float(xp.sum(xp.sin(xp.arange(9.0))))
    ids = {id(o.exe) for o in gc.get_objects() if type(o) is runtime.Compiled}
    assert len(ids) >= 3
    def child():
        kept, todo = set(), list(fork._kept)
        while todo:
            x = todo.pop()
            kept.add(id(x))
            if isinstance(x, (list, tuple)):
                todo.extend(x)
            elif isinstance(x, dict):
                todo.extend(x.values())
            elif type(x) is runtime.Compiled:
                todo.append(x.exe)
        return len(ids - kept), float(T.jit(lambda v: xp.sum(v * v))(xp.arange(4.0)))
    assert in_child(child) == (0, 14.0)
    ''')


def test_a_child_exits_though_llvms_jit_registration_lock_was_held_at_the_fork():
    # a thread of the parent registering or freeing a compiled object holds LLVM's GDB JIT-registration mutex;
    # forked then, the child's copy of it stays locked. The child's sys.exit hung on it: the interpreter's
    # teardown freed fork._kept, destroying the parent's executables (gdb: list_dealloc -> ~PyLoadedExecutable
    # -> ~ExecutionEngine -> notifyFreeingObject; 1 fork in ~3,200 of the busy-thread scenario), then exit()
    # ran the listener's C++ destructor (-> ~GDBJITRegistrationListener). Here the parent holds the mutex itself
    # across the fork, so the child meets it every time. (The mutex is found by its symbol in jaxlib's library:
    # skipped where that is stripped.)
    import importlib.util
    lib = os.path.join(os.path.dirname(importlib.util.find_spec("jaxlib").origin), "libjax_common.so")
    try:
        nm = subprocess.run(["nm", lib], capture_output=True, text=True, timeout=120).stdout
    except (OSError, subprocess.TimeoutExpired):
        nm = ""
    sym = "_ZZN12_GLOBAL__N_126GDBJITRegistrationListener8instanceEvE8Instance"
    found = [int(line.split()[0], 16) for line in nm.splitlines() if line.endswith(" " + sym)]
    if not found:
        pytest.skip("LLVM's GDB JIT-registration listener is not among jaxlib's symbols (nm missing or stripped)")
    run(f'''
    import ctypes
    for n in range(3):   # executables compiled here (registered with LLVM's GDB listener), one per program
        assert float(T.jit(lambda v: xp.sum(v * v) + n)(xp.arange(4.0))) == 14.0 + n
    lib = os.path.realpath({lib!r})
    base = next(int(f[0].split("-")[0], 16) for f in (line.split() for line in open("/proc/self/maps"))
                if len(f) >= 6 and int(f[2], 16) == 0 and os.path.realpath(f[5]) == lib)
    mutex = ctypes.c_void_p(base + {found[0]} + 8)   # (the listener's vtable, then its sys::Mutex)
    libc = ctypes.CDLL(None)
    held = []
    def release():
        if held:
            assert libc.pthread_mutex_unlock(mutex) == 0
            held.clear()
    os.register_at_fork(after_in_parent=release)
    assert libc.pthread_mutex_lock(mutex) == 0   # as a thread registering or freeing an object does
    held.append(1)
    child = lambda: float(T.jit(lambda v: xp.sum(v * 3.0))(xp.arange(4.0)))
    assert in_child(child, timeout=40) == 18.0   # a normal exit: the interpreter's teardown
    assert not held
    assert float(T.jit(lambda v: xp.sum(v * 5.0))(xp.arange(4.0))) == 30.0   # the parent goes on
    ''', env={"ARRAY_NAMESPACE_CACHE": "0"})


def test_a_child_of_a_distributed_process_refuses_clearly():
    # a one-process distributed run: the child cannot rejoin it, so its runtime raises at once, naming
    # spawn/forkserver (never a hang); host-held eager work still runs there; the parent goes on
    run('''
    import socket
    s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
    T.distributed.initialize(f"127.0.0.1:{port}", 1, 0, heartbeat_timeout=5)
    assert float(T.jit(lambda v: xp.sum(v))(xp.arange(3.0))) == 3.0
    def child():
        out = [float(xp.sum(xp.arange(4.0)))]
        try:
            T.jit(lambda v: xp.sum(v * 2))(xp.arange(3.0))
        except RuntimeError as e:
            out.append(str(e))
        return out
    for normal_exit in (False, True):
        total, err = in_child(child, normal_exit=normal_exit)
        assert total == 6.0 and "distributed run" in err and "'spawn'" in err, err
    assert float(T.jit(lambda v: xp.sum(v * 3))(xp.arange(3.0))) == 9.0
    T.distributed.shutdown()
    ''')
