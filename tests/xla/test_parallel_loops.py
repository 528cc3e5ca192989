"""xla/_parallel_loops.c through xla/host_parallel.py: NumPy's own inner loops run over the cores give the single
ufunc call's values bit for bit -- every EXACT ufunc and numeric signature, special values, every broadcast form,
strided and reversed operands; row reductions equal the ufunc's reduce (zero signs, NaN); layout copies equal
NumPy's; operands a loop cannot take (unaligned, byte-swapped) are declined to the plain call; eager ops on
large operands take the path; several threads at once, a forked child and an idle pool (no spinning) all work."""
import os
import subprocess
import sys
import time
import warnings

import numpy as np
import pytest

import array_namespace as xp
from transforms.core import ShapedArray
from xla import host, host_parallel
from thread_util import run_threads

# (the default install builds the extension: test_dispatch_nodes.py asserts it; one thread: no split at all)
pytestmark = pytest.mark.skipif(host_parallel._native is None or host_parallel.THREADS < 2,
                                reason="the C extension is not built, or one thread: no C path to test")
NUMERIC = "?bBhHiIlLqQefdFD"


def _aval(x):
    return ShapedArray(np.shape(x), np.asarray(x).dtype)


def _values(rng, ch, shape):
    dt = np.dtype(ch)
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, shape, dtype=dt, endpoint=True)
    x = (rng.standard_normal(shape) * 100).astype(dt)
    if dt.kind == "c":
        x = x + 1j * (rng.standard_normal(shape) * 100).astype(dt)
    flat = x.reshape(-1)
    if flat.size > 8:
        flat[:8] = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, -1.0, 1e-310 if ch == "d" else 0.5]
    return x


def _same(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    if want.dtype.kind in "fc":
        np.testing.assert_array_equal(got, want)   # (NaN where NaN)
        parts = [(got, want)] if want.dtype.kind == "f" else [(got.real, want.real), (got.imag, want.imag)]
        for g, w in parts:   # (zero signs; a NaN's sign bit is no value, and XLA does not fix it either)
            assert np.array_equal(np.signbit(g) & ~np.isnan(g), np.signbit(w) & ~np.isnan(w))
    else:
        assert np.array_equal(got, want)


def _quiet(fn, *xs):
    tok = host.err_set(host.QUIET)
    try:
        return fn(*xs)
    finally:
        host.err_reset(tok)


def _signatures():
    for fn in sorted(host_parallel.EXACT, key=lambda f: f.__name__):
        for sig in fn.types:
            ins, out = sig.split("->")
            if len(out) == 1 and set(ins + out) <= set(NUMERIC) and len(set(ins)) == 1 and np.dtype(ins[0]).char == ins[0]:
                yield pytest.param(fn, sig, id=f"{fn.__name__}-{sig}")


@pytest.mark.parametrize("fn, sig", list(_signatures()))
def test_every_exact_signature_equals_the_single_call(fn, sig):
    rng = np.random.default_rng(sum(map(ord, fn.__name__ + sig)))
    ins = sig.split("->")[0]
    xs = [_values(rng, c, (257, 131)) for c in ins]
    want = _quiet(fn, *xs)
    kernel = host_parallel.split(fn, [_aval(x) for x in xs])
    if any(np.dtype(c).kind == "c" for c in ins) and fn not in host_parallel.EXACT_COMPLEX:
        assert kernel is None or not kernel.native   # (complex products, moduli, roots: not exact per part)
        return
    assert kernel is not None and kernel.native
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # (nothing escapes: host kernels run quiet)
        got = _quiet(kernel, *xs)
    _same(got, want)


SHAPES = [[(1024, 600), (1024, 600)], [(1024, 600), (600,)], [(1024, 600), (1, 600)], [(1024, 600), (1024, 1)],
          [(1024, 600), ()], [(), (1024, 600)], [(1024, 1), (1, 600)], [(9, 300, 250), (300, 250)],
          [(1, 1 << 16), (1, 1 << 16)], [(70, 2020), (70, 1)], [(3, 5, 7, 11, 13), (5, 1, 11, 1)]]


@pytest.mark.parametrize("shapes", SHAPES, ids=str)
@pytest.mark.parametrize("fn", [np.subtract, np.true_divide, np.multiply, np.less_equal, np.fmod])
def test_broadcast_forms(fn, shapes):
    rng = np.random.default_rng(len(shapes[0]))
    for ch in "df":
        xs = [_values(rng, ch, s) for s in shapes]
        kernel = host_parallel.split(fn, [_aval(x) for x in xs])
        if np.broadcast_shapes(*shapes) and np.prod(np.broadcast_shapes(*shapes)) < host_parallel.MIN_ELEMENTS_NATIVE:
            assert kernel is None
            continue
        assert kernel.native
        _same(_quiet(kernel, *xs), _quiet(fn, *xs))


def test_strided_and_reversed_operands():
    rng = np.random.default_rng(5)
    base = rng.standard_normal((800, 1200))
    a = base[::-1, ::2]            # negative and doubled strides
    b = base.T[:600, :800].T       # a transposed view
    c = np.asfortranarray(rng.standard_normal((800, 600)))
    for x, y in ((a, b), (b, c), (c, a), (a[::-2], a[1::2])):
        kernel = host_parallel.split(np.subtract, [_aval(x), _aval(y)])
        _same(kernel(x, y), np.subtract(x, y))


def test_declined_operands_take_the_plain_call():
    rng = np.random.default_rng(6)
    x = rng.standard_normal(1 << 16)
    raw = np.zeros(x.nbytes + 1, np.uint8)
    raw[1:] = x.view(np.uint8)
    unaligned = np.frombuffer(raw.data, np.float64, count=x.size, offset=1)   # (NumPy buffers these)
    assert not unaligned.flags.aligned and np.array_equal(unaligned, x)
    swapped = x.astype(">f8")
    kernel = host_parallel.split(np.add, [_aval(x), _aval(x)])
    before = host_parallel._native.stats()[:2]
    for y in (unaligned, swapped):
        _same(kernel(x, y), np.add(x, y))
    assert host_parallel._native.stats()[:2] == before   # (neither ran in C)
    loop = host_parallel.native_loop(np.add, [np.dtype("d")] * 2, np.dtype("d"))
    out = np.full(x.shape, 7.0)
    assert host_parallel._native.run(loop, out, x, unaligned) is False and (out == 7.0).all()   # (nothing written)
    with pytest.raises(ValueError, match="broadcast"):
        host_parallel._native.run(loop, out, x, x[:5])
    with pytest.raises(TypeError, match="operands"):
        host_parallel._native.run(loop, out, x)


@pytest.mark.parametrize("fn", [np.add, np.multiply, np.maximum, np.minimum])
@pytest.mark.parametrize("ch", "dfl")
def test_row_reductions_equal_the_ufuncs_reduce(fn, ch):
    rng = np.random.default_rng(7)
    dt = np.dtype(ch)
    for shape, axes in (((70, 2020), (1,)), ((9, 40, 300), (2,)), ((9, 40, 300), (1, 2)), ((4096, 9), (1,)),
                        ((33, 1000), (1,)), ((2, 1 << 15), (1,))):
        x = _values(rng, ch, shape) if ch == "l" else (rng.standard_normal(shape) * 10).astype(dt)
        if ch != "l":
            flat = x.reshape(-1)
            flat[[3, 5, 11]] = -0.0
            x[..., 1, :][..., :2] = 0.0 if x.ndim == 3 else 0.0
            x[0, ...] = -0.0   # (a row of negative zeros: -0.0 under add and max alike)
            x[1].reshape(-1)[7] = np.nan
            x[-1].reshape(-1)[-1] = np.inf
        kernel = host_parallel.split_reduce(fn, _aval(x), axes)
        assert kernel is not None
        _same(_quiet(kernel, x), _quiet(fn.reduce, x, axes, dt))
        f = np.asfortranarray(x)   # (not C-contiguous: NumPy's reduce, whose bits depend on the layout)
        _same(_quiet(kernel, f), _quiet(fn.reduce, f, axes, dt))


def test_reductions_off_the_path_are_declined():
    big = ShapedArray((1024, 600), np.float64)
    assert host_parallel.split_reduce(np.add, big, (0,)) is None            # (a leading axis)
    assert host_parallel.split_reduce(np.add, big, (0, 1)) is None          # (all axes: one row)
    assert host_parallel.split_reduce(np.add, ShapedArray((10, 10), np.float64), (1,)) is None   # (small)
    assert host_parallel.split_reduce(np.subtract, big, (1,)) is None
    assert host_parallel.split_reduce(np.add, ShapedArray((1024, 600), np.complex128), (1,)) is None


@pytest.mark.parametrize("ch", "?bhifdDe")
def test_layout_copies_equal_numpy(ch):
    rng = np.random.default_rng(8)
    for shape, perm in (((2020, 70), (1, 0)), ((70, 2020), (1, 0)), ((30, 40, 50), (2, 0, 1)),
                        ((30, 40, 50), (1, 2, 0))):
        x = _values(rng, ch, shape)
        v = np.transpose(x, perm)
        kernel = host_parallel.split_copy(v.shape, v.dtype)
        got = kernel(v)
        assert got.flags.c_contiguous
        _same(got, np.ascontiguousarray(v))
        _same(kernel(v[::-1]), np.ascontiguousarray(v[::-1]))


@pytest.mark.skipif(host.MODE != "host", reason="host kernels run only for host-held values (the default mode)")
def test_eager_library_shaped_work_takes_it_and_equals_numpy():
    """scipy's moments on a 2020x71 sample: the axis moved last, demeaned, powered, reduced."""
    rng = np.random.default_rng(9)
    a = rng.standard_normal((2020, 71))
    before = host_parallel._native.stats()
    x = xp.permute_dims(xp.asarray(a), (1, 0))
    m = xp.mean(x, axis=1, keepdims=True)
    d = x - m
    got = (xp.mean(d ** 2, axis=1), xp.max(xp.abs(d), axis=1), xp.sum(d * d * d, axis=1))
    runs = [s - b for s, b in zip(host_parallel._native.stats()[:2], before[:2])]
    t = np.ascontiguousarray(a.T)
    want_m = np.add.reduce(t, 1) / 2020
    want_d = t - want_m[:, None]
    want = (np.add.reduce(want_d * want_d, 1) / 2020, np.abs(want_d).max(1), np.add.reduce(want_d * want_d * want_d, 1))
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), w)
    assert sum(runs) >= 9   # (transpose, mean, subtract, square, mean, abs, max, two multiplies, sum)


def test_several_threads_at_once():
    rng = np.random.default_rng(10)
    xs = [rng.standard_normal((300, 700)) for _ in range(4)]
    kernel = host_parallel.split(np.multiply, [_aval(xs[0])] * 2)
    total = host_parallel.split_reduce(np.add, _aval(xs[0]), (1,))
    results = [None] * 4

    def work(i):
        for _ in range(50):
            results[i] = (kernel(xs[i], xs[i]), total(xs[i]))
    run_threads(work)
    for x, (p, s) in zip(xs, results):
        _same(p, x * x)
        _same(s, np.add.reduce(x, 1))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_a_forked_child_starts_its_own_workers():
    x = np.arange(1 << 20, dtype=np.float64).reshape(1024, 1024)
    kernel = host_parallel.split(np.add, [_aval(x)] * 2)
    kernel(x, x)   # (the parent's workers run before the fork)
    pid = os.fork()
    if pid == 0:   # the child: a hang here is caught by the parent's wait below
        ok = False
        try:
            ok = all(np.array_equal(kernel(x, x), x + x) for _ in range(20))
        finally:
            os._exit(0 if ok else 3)
    t0 = time.monotonic()
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() - t0 > 60:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            pytest.fail("the forked child hung on the C path")
        time.sleep(0.05)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def test_workers_that_never_spin_still_share_large_ops_and_exit():
    """ARRAY_NAMESPACE_HOST_SPIN_US=0: workers sleep at once; an op of WAKE_PAYS (2^19) elements or more wakes
    and shares with them, a smaller one finding them asleep runs on the caller alone; the process exits with
    workers asleep."""
    code = (
        "import time, numpy as np\n"
        "from transforms.core import ShapedArray\n"
        "from xla import host_parallel as hp\n"
        "big, small = np.ones((1024, 1024)), np.ones((256, 256))\n"
        "kb = hp.split(np.add, [ShapedArray(big.shape, big.dtype)] * 2)\n"
        "ks = hp.split(np.add, [ShapedArray(small.shape, small.dtype)] * 2)\n"
        "for _ in range(5):\n"
        "    assert (kb(big, big) == 2).all()\n"
        "    t0 = time.monotonic()\n"
        "    while hp._native.stats()[2] < hp.THREADS - 1:   # (asleep soon after: they never spin)\n"
        "        assert time.monotonic() - t0 < 20\n"
        "        time.sleep(0.001)\n"
        "    par, alone, _ = hp._native.stats()\n"
        "    assert (ks(small, small) == 2).all()\n"
        "    assert hp._native.stats()[:2] == (par, alone + 1)   # (alone: no wake-up for it)\n"
        "assert par >= 1   # (a large op shared; a stall may have sent some alone)\n")
    _child_ok(code, spin_us="0")


def test_park_and_jit_calls_send_spinning_workers_to_sleep():
    """Workers spinning (here for up to 1 s) beside an XLA executable would take its pool's cores: park(), and
    every jit call through the C callbacks, sends them to sleep at once."""
    code = (
        "import time, numpy as np\n"
        "import array_namespace as xp\n"
        "from transforms import jit\n"
        "from xla import host_parallel as hp\n"
        "from transforms.core import ShapedArray\n"
        "big = np.ones((1024, 1024))   # (2^20 elements: shared, waking the workers, in every eager mode)\n"
        "kb = hp.split(np.add, [ShapedArray(big.shape, big.dtype)] * 2)\n"
        "x = xp.asarray(big)\n"
        "f = jit(lambda v: v * 2.0)\n"
        "f(x)\n"
        "def asleep_after(action):\n"
        "    before = hp._native.stats()[0]\n"
        "    while hp._native.stats()[0] == before:   # a shared op: the workers spin after it\n"
        "        kb(big, big)\n"
        "    action()\n"
        "    t0 = time.monotonic()\n"
        "    while hp._native.stats()[2] < hp.THREADS - 1:\n"
        "        assert time.monotonic() - t0 < 0.5, 'still spinning'   # (else they spin 1 s)\n"
        "        time.sleep(0.001)\n"
        "asleep_after(hp.park)\n"
        "asleep_after(lambda: f(x).block_until_ready())\n")
    _child_ok(code, spin_us="1000000")


@pytest.mark.skipif(host.MODE != "host", reason="host kernels run only for host-held values (the default mode)")
def test_lapack_and_large_matmuls_park_the_workers_first(monkeypatch):
    """OpenBLAS's threads need the cores too: every LAPACK kernel and a matmul from 2^18 multiply-adds park the
    spinning workers first; a small matmul does not pay for it."""
    from xla import lower_lapack, lower_structural
    parks = []
    for mod in (lower_lapack, lower_structural):
        monkeypatch.setattr(mod, "park", lambda: parks.append(1))
    rng = np.random.default_rng(11)
    a, b = rng.standard_normal((97, 61)), rng.standard_normal((61, 89))
    for run, want, parked in ((lambda: xp.linalg.svd(xp.asarray(a), full_matrices=False)[1],
                               np.linalg.svd(a, compute_uv=False), True),
                              (lambda: xp.asarray(a) @ xp.asarray(b), a @ b, True),
                              (lambda: xp.asarray(a[:4, :4]) @ xp.asarray(b[:4, :4]), a[:4, :4] @ b[:4, :4], False)):
        parks.clear()
        np.testing.assert_allclose(np.asarray(run()), want, rtol=1e-12, atol=1e-12)
        assert bool(parks) == parked


def _child_ok(code, spin_us):
    """`code` run to its end in a fresh process with two host threads spinning `spin_us`."""
    env = dict(os.environ, ARRAY_NAMESPACE_HOST_SPIN_US=spin_us, ARRAY_NAMESPACE_HOST_THREADS="2")
    r = subprocess.run([sys.executable, "-c", code + "print('ok')\n"], env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


@pytest.mark.parametrize("raw, want", [("0", 0.0), ("250", 250.0), ("1.5", 1.5), ("", host_parallel.SPIN_US)])
def test_spin_setting(raw, want):
    assert host_parallel._spin_us({"ARRAY_NAMESPACE_HOST_SPIN_US": raw}) == want


@pytest.mark.parametrize("raw", ["-1", "fast", "1e9", "nan", "inf"])
def test_a_bad_spin_setting_is_refused(raw):
    with pytest.raises(ValueError, match="ARRAY_NAMESPACE_HOST_SPIN_US"):
        host_parallel._spin_us({"ARRAY_NAMESPACE_HOST_SPIN_US": raw})
