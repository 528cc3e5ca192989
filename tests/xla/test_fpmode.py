"""xla/_fpmode.c: host kernels run in XLA's CPU floating-point mode (subnormals flushed: x86-64 MXCSR FTZ+DAZ,
aarch64 FPCR FZ), set around every kernel run by host.quiet and put back after, so NumPy code
outside a kernel keeps IEEE arithmetic; the thread pool that runs kernels (host_parallel's) runs them in the same
mode. The extension is built with the package (pyproject.toml: required).
The values each elementwise function gives in the mode: tests/array_namespace/test_elementwise_subnormals.py."""
import platform
import threading

import numpy as np
import pytest

import array_namespace as xp
from transforms import jit
from transforms.core import ShapedArray
from xla import host, host_parallel
from fpmode_util import subnormals_flushed

_fpmode = host._fpmode
pytestmark = pytest.mark.skipif(not host.FLUSHES, reason="this machine's mode cannot be set")
S64 = np.finfo(np.float64).smallest_subnormal


def ieee():
    """Whether this thread computes with subnormals (IEEE): 1e-300 * 1e-10 is the subnormal 1e-310."""
    return np.float64(1e-300) * np.float64(1e-10) != 0


def test_the_machines_bits():
    assert _fpmode.supported
    if platform.machine() in ("x86_64", "AMD64"):
        assert _fpmode.FLUSH == 0x8040   # MXCSR FTZ | DAZ
    elif platform.machine() in ("aarch64", "arm64"):
        assert _fpmode.FLUSH == 1 << 24   # FPCR FZ


def test_set_and_get_change_the_threads_arithmetic():
    assert _fpmode.get() == 0 and ieee()
    old = _fpmode.set(_fpmode.FLUSH)
    try:
        assert old == 0 and _fpmode.get() == _fpmode.FLUSH
        assert not ieee()
        with np.errstate(divide="ignore"):
            assert np.log(np.float64(3e-310)) == -np.inf   # (DAZ: the operand is read as zero)
        assert np.array(S64).view(np.int64) == 1   # (a move keeps it)
    finally:
        _fpmode.set(old)
    assert _fpmode.get() == 0 and ieee()
    with pytest.raises(ValueError):
        _fpmode.set(1)


def test_quiet_silences_and_flushes_and_puts_both_back():
    seen = []

    def kernel(x, nested=True):
        seen.append(_fpmode.get())
        assert np.log(x) == -np.inf   # (no FloatingPointError: silenced)
        if nested:   # (a kernel inside a host program): the outer mode stays
            host.quiet(kernel, x, nested=False)
            seen.append(_fpmode.get())
        return "out"

    with np.errstate(divide="raise"):
        assert host.quiet(kernel, np.float64(0.0)) == "out"
        assert seen == [_fpmode.FLUSH] * 3
        assert _fpmode.get() == 0
        with pytest.raises(FloatingPointError):
            np.log(np.float64(0.0))
        with pytest.raises(ZeroDivisionError):   # a kernel that raises: both put back, its error kept
            host.quiet(lambda: 1 / 0)
        assert _fpmode.get() == 0
        with pytest.raises(FloatingPointError):
            np.log(np.float64(0.0))


def test_a_mode_the_caller_set_is_kept():
    """A thread already flushing (a -ffast-math library, or subnormals_flushed) keeps flushing after a kernel."""
    with subnormals_flushed():
        host.quiet(np.log, np.float64(2.0))
        assert _fpmode.get() == _fpmode.FLUSH
    assert _fpmode.get() == 0


def test_numpy_outside_a_kernel_keeps_ieee_arithmetic():
    x = xp.asarray([3e-310, 1.0])
    assert float(xp.log(x)[0]) == -np.inf   # the kernel: flushed
    assert ieee() and np.log(np.float64(3e-310)) == pytest.approx(-712.7027665394861)
    assert float(jit(xp.log)(x)[0]) == -np.inf   # XLA: flushed too, and the thread's mode put back
    assert ieee()


def test_a_kernel_that_raises_puts_the_mode_back():
    def boom():
        assert _fpmode.get() == _fpmode.FLUSH
        raise KeyError("boom")
    with pytest.raises(KeyError):
        host.quiet(boom)
    assert _fpmode.get() == 0 and ieee()


def test_other_threads_are_left_alone():
    seen = []
    stop = threading.Event()
    go = threading.Event()

    def other():
        go.set()
        while not stop.is_set():
            seen.append(ieee())

    t = threading.Thread(target=other)
    t.start()
    go.wait()
    try:
        for _ in range(200):
            xp.log(xp.asarray([3e-310]))
    finally:
        stop.set()
        t.join()
    assert seen and all(seen)


def _aval(x):
    return ShapedArray(x.shape, x.dtype)


@pytest.mark.skipif(host_parallel.THREADS < 2, reason="one thread: no worker")
def test_the_python_pool_runs_kernels_in_the_mode():
    x = np.full(1 << 20, 3e-310)
    kernel = host_parallel.split(np.log, [_aval(x)])   # (past the split's bound: row blocks on the pool)
    assert kernel is not None
    r = host.quiet(kernel, x)
    assert np.all(r == -np.inf)
    assert host_parallel._workers().submit(ieee).result()   # (and the pool thread's mode is put back)

