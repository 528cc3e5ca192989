"""xla/_fpmode.c's memory handler: host kernels allocate through a NumPy memory handler, set around each kernel run
(as its floating-point mode is), that keeps freed blocks of 64 KiB to 64 MiB (at most 32 blocks, 64 MiB in all)
and hands them out again, so that a chain of eager ops on medium arrays stops page-faulting fresh memory. Only the
arrays kernels make use it: NumPy code outside a kernel keeps NumPy's handler. Oracles: NumPy's own report of an
array's handler, the process's page-fault count (getrusage), NumPy's values for the results."""
import resource
import sys

import numpy as np
import pytest

import array_namespace as xp
from thread_util import run_threads
from xla import host

_fpmode = host._fpmode
pytestmark = pytest.mark.skipif(not hasattr(_fpmode, "kept") or not sys.platform.startswith("linux"),
                                reason="the handler is set on glibc builds of xla._fpmode only")
_handler_name = np._core.multiarray.get_handler_name
KERNELS = "array_namespace_kernels"


def test_kernel_results_use_the_handler_and_numpy_code_keeps_numpys():
    x = xp.asarray(np.linspace(0.0, 1.0, 200_000))
    y = xp.exp(x) * 2.0
    assert _handler_name(y._v.np) == KERNELS   # (the result's host value: a kernel's array)
    assert _handler_name() == "default_allocator"   # (put back after the kernel)
    assert _handler_name(np.ones(200_000)) == "default_allocator"
    np.testing.assert_array_equal(np.asarray(y), np.exp(np.linspace(0.0, 1.0, 200_000)) * 2.0)


def test_an_eager_op_sets_the_handler_only_where_a_block_it_keeps_may_be_made_or_freed():
    """A block of 64 KiB or more is what the handler keeps: an op whose operands and result are all smaller runs
    with NumPy's handler (its two context-variable switches, ~0.35 us, a third of a small op, saved); an op with
    small operands and a large result (an outer sum) sets it, so that its result's block is kept when freed."""
    small = xp.exp(xp.ones(1000))   # (8 KB in, 8 KB out)
    assert _handler_name(small._v.np) == "default_allocator"
    col, row = xp.ones((3000, 1)), xp.ones((1, 3000))   # (24 KB operands, a 72 MB result)
    outer = col + row
    assert _handler_name(outer._v.np) == KERNELS
    x = xp.asarray(np.linspace(0.0, 1.0, 200_000))   # (1.6 MB in, 1.6 MB out)
    assert _handler_name(xp.sin(x)._v.np) == KERNELS
    np.testing.assert_array_equal(np.asarray(small), np.exp(np.ones(1000)))
    np.testing.assert_array_equal(np.asarray(outer), np.full((3000, 3000), 2.0))


def test_a_kernel_that_raises_puts_numpys_handler_back():
    def kernel():
        assert _handler_name() == KERNELS
        raise ZeroDivisionError("inside")
    with pytest.raises(ZeroDivisionError, match="inside"):
        host.quiet(kernel)
    assert _handler_name() == "default_allocator"


def test_a_chain_of_medium_eager_ops_stops_page_faulting():
    """Each step's ~1.1 MB result reuses a freed block: without the handler glibc hands such blocks back to the
    OS and every call faults ~1,000 pages in again (scipy's skew on 2020x70: ~3.9 ms -> ~1.5 ms with it)."""
    x = xp.asarray(np.random.default_rng(0).standard_normal((2020, 70)))

    def step():
        m = xp.mean(x, axis=0, keepdims=True)
        d = x - m
        return xp.sum(d * d * d, axis=0) / xp.sum(d * d, axis=0)
    want = np.asarray(step())
    for _ in range(5):
        step()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(40):
        got = step()
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
    assert faults < 200, f"{faults} page faults in 40 calls"   # (without the handler: ~40,000 here)
    np.testing.assert_array_equal(np.asarray(got), want)


def test_what_it_keeps_is_bounded():
    for n in range(20_000, 9_000_000, 120_000):   # (freed blocks of 160 KB to 72 MB, each size once)
        r = xp.exp(xp.ones(n))
        del r
    blocks, nbytes = _fpmode.kept()
    assert 0 < blocks <= 32 and 0 < nbytes <= 64 << 20
    big = xp.exp(xp.ones(9_000_000))   # (72 MB: above the cap, never kept)
    del big
    assert _fpmode.kept()[1] <= 64 << 20


def test_threads_share_it_safely():
    rng = np.random.default_rng(1)
    data = [rng.standard_normal(n) for n in (20_000, 70_000, 150_000, 400_000)]

    def work(i):
        for k in range(60):
            a = data[(i + k) % len(data)]
            got = np.asarray(xp.sin(xp.asarray(a)) + 1.0)
            np.testing.assert_array_equal(got, np.asarray(xp.sin(xp.asarray(a))) + 1.0)
    run_threads(work, n=4)
