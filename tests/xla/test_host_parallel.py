"""xla/host_parallel.py's thread pool: a large elementwise host kernel split over threads gives the single ufunc
call's values bit for bit (every broadcast form, dtypes, special values), silences NumPy's warnings in its workers
as every kernel does, is taken by eager ops on large operands and declined off its path, is safe from several
threads at once, and works in a forked child."""
import os
import time
import warnings

import numpy as np
import pytest

import array_namespace as xp
from transforms import jit
from transforms.core import ShapedArray
from xla import host, host_parallel, runtime
from thread_util import run_threads


@pytest.fixture
def two_threads(monkeypatch):
    monkeypatch.setattr(host_parallel, "THREADS", 2)   # (splits on a one-core machine too)


def _aval(x):
    return ShapedArray(x.shape, x.dtype)


def _operands(rng, dt, shapes):
    out = []
    for s in shapes:
        x = rng.standard_normal(s) * 100
        if np.dtype(dt).kind == "f":
            flat = x.reshape(-1)
            if flat.size > 10:
                flat[[1, 3, 5, 7]] = [np.nan, np.inf, -np.inf, -0.0]
        out.append(x.astype(dt))
    return out


BINARY_SHAPES = [[(1024, 600), (1024, 600)], [(1024, 600), (600,)], [(1024, 600), (1, 600)],
                 [(1024, 600), (1024, 1)], [(1024, 600), ()], [(), (1024, 600)], [(1024, 1), (1, 600)],
                 [(9, 300, 250), (300, 250)]]


@pytest.mark.parametrize("fn", [np.add, np.subtract, np.multiply, np.true_divide, np.arctan2, np.less, np.fmod])
@pytest.mark.parametrize("shapes", BINARY_SHAPES)
def test_split_equals_the_single_call_bit_for_bit(two_threads, fn, shapes, monkeypatch):
    rng = np.random.default_rng(len(shapes[0]) * 7 + len(shapes[1]))
    blocks = []
    real = host_parallel._quiet_call
    monkeypatch.setattr(host_parallel, "_quiet_call", lambda *a: (blocks.append(1), real(*a)))
    for dt in (np.float64, np.float32):
        xs = _operands(rng, dt, shapes)
        kernel = host_parallel.split(fn, [_aval(x) for x in xs])
        assert kernel is not None
        del blocks[:]
        with warnings.catch_warnings():
            warnings.simplefilter("error")   # (no warning escapes a worker)
            got, want = host.quiet(lambda: (kernel(*xs), fn(*xs)))
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
        assert np.array_equal(np.signbit(got), np.signbit(want)) if got.dtype.kind == "f" else True
        assert len(blocks) == 1   # (two threads: the caller's block and one worker's)


def test_a_split_kernel_takes_operands_of_any_shape(two_threads):
    """A host program built at one shape runs at others (transforms.jaxpr_transforms._ShapeFree): the kernel made
    for one signature gives the single call's values at smaller, larger and other-row shapes."""
    big = _operands(np.random.default_rng(7), np.float64, [(1024, 600)])[0]
    kernel = host_parallel.split(np.sin, [_aval(big)])
    assert kernel is not None
    for shape in ((1024, 600), (7,), (3, 5), (), (2049, 301), (1, 1 << 17), (0, 4)):
        x = _operands(np.random.default_rng(8), np.float64, [shape])[0]
        got, want = host.quiet(lambda: (kernel(x), np.sin(x)))
        assert np.asarray(got).shape == want.shape
        np.testing.assert_array_equal(got, want)


@pytest.mark.skipif(host.MODE == "xla", reason="host kernels switched off (ARRAY_NAMESPACE_EAGER=xla)")
def test_a_shape_free_composite_first_run_large_then_small(two_threads):
    """xp.exp of a complex array runs one shape-free staged body (array_namespace/_complex_special.py): its host
    program, built at the first (large: split) shape, then runs at a small one."""
    rng = np.random.default_rng(10)
    for n in (300_000, 7, 300_001):
        z = rng.standard_normal(n) + 1j * rng.standard_normal(n)
        np.testing.assert_allclose(np.asarray(xp.exp(xp.asarray(z))), np.exp(z), rtol=1e-13)


@pytest.mark.parametrize("fn", [np.sin, np.exp, np.log, np.sqrt, np.negative, np.floor, np.isfinite])
def test_split_unary_equals_the_single_call(two_threads, fn):
    x = _operands(np.random.default_rng(1), np.float64, [(2048, 300)])[0]
    kernel = host_parallel.split(fn, [_aval(x)])
    assert kernel is not None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got, want = host.quiet(lambda: (kernel(x), fn(x)))
    np.testing.assert_array_equal(got, want)


def test_integer_and_boolean_operands(two_threads):
    rng = np.random.default_rng(2)
    a = rng.integers(-2**62, 2**62, (1024, 600))
    b = rng.integers(-2**62, 2**62, (600,))
    for fn in (np.add, np.multiply, np.bitwise_xor, np.equal):
        got = host_parallel.split(fn, [_aval(a), _aval(b)])(a, b)
        np.testing.assert_array_equal(got, fn(a, b))   # (integer wraparound alike)
    p = rng.random((1024, 600)) < 0.5
    np.testing.assert_array_equal(host_parallel.split(np.logical_and, [_aval(p), _aval(p.T.T)])(p, ~p), p & ~p)


def test_declines_off_its_path(two_threads, monkeypatch):
    big = ShapedArray((1024, 600), np.float64)
    assert host_parallel.split(np.add, [ShapedArray((100, 100), np.float64)] * 2) is None   # small
    assert host_parallel.split(np.sin, [ShapedArray((300, 300), np.float64)]) is None        # (one bound for all)
    assert host_parallel.split(np.add, [ShapedArray((1, 1 << 20), np.float64)] * 2) is None  # one row
    assert host_parallel.split(np.add, [ShapedArray((), np.float64)] * 2) is None
    assert host_parallel.split(np.divmod, [big, big]) is None                                # two outputs
    assert host_parallel.split(lambda a, b: a + b, [big, big]) is None                       # not a ufunc
    monkeypatch.setattr(host_parallel, "THREADS", 1)
    assert host_parallel.split(np.add, [big, big]) is None


@pytest.mark.skipif(host.MODE == "xla", reason="host kernels switched off (ARRAY_NAMESPACE_EAGER=xla)")
def test_eager_ops_on_large_operands_take_it_and_equal_numpy(two_threads, spy):
    calls = spy(host_parallel, "split")
    rng = np.random.default_rng(3)
    a, m = rng.standard_normal((1031, 517)), rng.standard_normal((1031, 1))   # (a new signature: specialised)
    x, y = xp.asarray(a), xp.asarray(m)
    before = runtime.compile_calls[0]
    got = (x - y) / xp.sin(x)
    with np.errstate(all="ignore"):
        want = (a - m) / np.sin(a)
    np.testing.assert_array_equal(np.asarray(got), want)
    assert runtime.compile_calls[0] == before and calls and all(calls)


@pytest.mark.skipif(host.MODE == "xla", reason="host kernels switched off (ARRAY_NAMESPACE_EAGER=xla)")
@pytest.mark.parametrize("fn", ["maximum", "minimum"])
def test_large_max_and_min_split_and_keep_xlas_zero_signs(two_threads, spy, fn):
    # max/min are the ufunc over the cores, then their zeros' signs made XLA's (max(-0.0, +0.0) = +0.0, min = -0.0;
    # NumPy's SIMD loops pick either): relu by a 0-d zero, and two arrays of zeros of both signs, as jit gives
    calls = spy(host_parallel, "split")
    rng = np.random.default_rng(5)
    a = rng.standard_normal((1030, 521))
    a[::7] = -0.0
    a[1::7] = 0.0
    a[2, :5] = np.nan
    b = np.where(rng.random(a.shape) < 0.5, -0.0, 0.0)
    f = getattr(xp, fn)
    for y in (xp.asarray(0.0), xp.asarray(-0.0), xp.asarray(b)):
        x = xp.asarray(a)
        got, want = np.asarray(f(x, y)), np.asarray(jit(f)(x, y))
        assert got.tobytes() == want.tobytes(), (fn, np.asarray(y).ravel()[:3])
    assert calls and all(calls)


def test_several_threads_at_once(two_threads):
    rng = np.random.default_rng(4)
    xs = [rng.standard_normal((1024, 600)) for _ in range(4)]
    kernel = host_parallel.split(np.multiply, [_aval(xs[0])] * 2)
    results = [None] * 4

    def work(i):
        for _ in range(5):
            results[i] = kernel(xs[i], xs[i])
    run_threads(work)
    for x, r in zip(xs, results):
        np.testing.assert_array_equal(r, x * x)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_a_forked_child_makes_its_own_workers(two_threads):
    x = np.arange(1024 * 600, dtype=np.float64).reshape(1024, 600)
    kernel = host_parallel.split(np.add, [_aval(x)] * 2)
    kernel(x, x)   # (the parent's pool exists before the fork)
    pid = os.fork()
    if pid == 0:   # the child: a hang here would be caught by the parent's wait below
        ok = False
        try:
            ok = np.array_equal(kernel(x, x), x + x)
        finally:
            os._exit(0 if ok else 3)
    deadline = 60
    t0 = time.monotonic()
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() - t0 > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            pytest.fail("the forked child hung on the split kernel")
        time.sleep(0.05)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


@pytest.mark.parametrize("raw, want", [("3", 3), ("1", 1), ("", None)])
def test_thread_count_setting(raw, want):
    n = host_parallel._thread_count({"ARRAY_NAMESPACE_HOST_THREADS": raw})
    assert n == want if want is not None else 1 <= n <= host_parallel.MAX_THREADS


@pytest.mark.parametrize("raw", ["0", "-2", "two"])
def test_a_bad_thread_count_is_refused(raw):
    with pytest.raises(ValueError, match="ARRAY_NAMESPACE_HOST_THREADS"):
        host_parallel._thread_count({"ARRAY_NAMESPACE_HOST_THREADS": raw})
