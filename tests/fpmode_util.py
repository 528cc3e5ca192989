"""The tests' oracle for the subnormal rule (README, "Eager work on the CPU"): NumPy's own arithmetic run in the host
kernels' floating-point mode."""
import contextlib

from xla import host


@contextlib.contextmanager
def subnormals_flushed():
    """NumPy code in the block runs in the host kernels' floating-point mode (subnormal operands read as zero,
    subnormal results written as zero: XLA's on the CPU), this thread's mode put back after; where host kernels
    do not flush (host.FLUSHES false), a no-op."""
    old = host._fpmode.set(host._fpmode.FLUSH) if host.FLUSHES else None
    try:
        yield
    finally:
        if old is not None:
            host._fpmode.set(old)
