"""Eager LAPACK kernels on matrices up to host_parallel.MIN_ELEMENTS elements run their BLAS on one thread.

Why: NumPy's and scipy's OpenBLAS divide each BLAS call inside a factorization over their threads, so (1) the
result's bits depend on the core count (svd of 2028x78, qr of 300x300 differ between one thread and two), and (2)
on matrices this size the hand-offs cost more than they save (2 cores: svd and qr of 2028x78 12-13 ms on two
threads, 5-6.5 ms on one; PCA, Ridge and LDA fits on 2028x78 about halve). One thread makes the bits a function
of the call alone, as issue 23 asks of eager results. Larger matrices keep OpenBLAS's threads (from the size where
splitting work over threads pays, host_parallel's bound); their bits depend on the core count, as `@`'s do.

How: OpenBLAS's thread count is one setting per library and process (its `_local` setter is global too), so the
first of overlapping kernel calls, in any thread, sets each OpenBLAS library the process has loaded to one thread and
the last puts back what it found. BLAS run meanwhile by other threads (user code) runs on one thread too. The
libraries are found once, in /proc/self/maps, after scipy.linalg is imported (scipy's OpenBLAS is a second
library); elsewhere, or with another BLAS (MKL, Accelerate), nothing is set.
"""
from __future__ import annotations

import ctypes
import os
import threading

from .host import scipy_function
from .host_parallel import MIN_ELEMENTS

_NAMES = (("scipy_openblas_set_num_threads64_", "scipy_openblas_get_num_threads64_"),
          ("scipy_openblas_set_num_threads", "scipy_openblas_get_num_threads"),
          ("openblas_set_num_threads", "openblas_get_num_threads"))
_libs = None   # [(set, get)] per OpenBLAS library loaded: found at first use
_held, _saved, _lock = 0, [], threading.Lock()


def _openblas():
    scipy_function("linalg.lapack", "dgetrf")   # (scipy's OpenBLAS loaded, where scipy is installed)
    found, paths = [], set()
    try:
        with open("/proc/self/maps") as f:   # (address, permissions, offset, device, inode, path)
            paths = {p[5].strip() for p in (line.split(None, 5) for line in f) if len(p) == 6 and "openblas" in p[5]}
    except OSError:
        pass
    for path in sorted(paths):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for set_name, get_name in _NAMES:
            if hasattr(lib, set_name) and hasattr(lib, get_name):
                found.append((getattr(lib, set_name), getattr(lib, get_name)))
                break
    return found


def one_thread(kernel):
    """kernel (of numpy arrays), its BLAS on one thread where its operands total at most MIN_ELEMENTS elements."""
    def run(*xs, **params):
        global _libs, _held
        n = 0
        for x in xs:
            n += x.size
        if n > MIN_ELEMENTS:
            return kernel(*xs, **params)
        with _lock:
            if _libs is None:
                _libs = _openblas()
            if not _held:
                _saved[:] = [get() for _, get in _libs]
                for set_, _ in _libs:
                    set_(1)
            _held += 1
        try:
            return kernel(*xs, **params)
        finally:
            with _lock:
                _held -= 1
                if not _held:
                    for (set_, _), k in zip(_libs, _saved):
                        set_(k)
    return run


def _after_fork():
    global _held, _lock
    if _held:   # (a kernel of another parent thread was running: the child's libraries get their count back)
        for (set_, _), k in zip(_libs, _saved):
            set_(k)
    _held, _lock = 0, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)
