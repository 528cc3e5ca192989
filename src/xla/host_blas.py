"""LAPACK kernels on matrices up to host_parallel.MIN_ELEMENTS elements run their BLAS on one thread, eager and jit.

Why: NumPy's and scipy's OpenBLAS divide each BLAS call inside a factorization over their threads, so (1) the
result's bits depend on the core count (svd of 2028x78, qr of 300x300 differ between one thread and two), and (2)
on matrices this size the hand-offs cost more than they save (2 cores: svd and qr of 2028x78 12-13 ms on two
threads, 5-6.5 ms on one; PCA, Ridge and LDA fits on 2028x78 about halve, eager and jitted). One thread makes the
bits a function of the call alone, as issue 23 asks of eager results, and jit gets the same speed. Larger matrices
keep OpenBLAS's threads (from the size where splitting work over threads pays, host_parallel's bound); their bits
depend on the core count, as `@`'s do.

How: OpenBLAS's thread count is one setting per library and process (its `_local` setter is global too), so the
first of overlapping kernel calls, in any thread, sets each OpenBLAS library the kernels call to one thread and
the last puts back what it found (the count lives in C, xla/_blas_threads.c, as jitted kernels run on XLA's threads
without the GIL). BLAS run meanwhile by other threads (user code) runs on one thread too. Eager kernels are wrapped
by `one_thread`; a jitted LAPACK custom call whose operands are that small calls jaxlib's handler through a C
trampoline registered under `jit_target`'s name. The libraries are found once, at the first kernel: the OpenBLAS
that NumPy's linalg links and the one scipy's LAPACK links (a second library: jaxlib's kernels call it); with another
BLAS (MKL, Accelerate), nothing is set. A fork waits for a count change in progress; a child forked while a kernel
held the count makes no OpenBLAS call at the fork (a lock of OpenBLAS's may be held there) and gets its counts back
when its own first kernel ends.
"""
from __future__ import annotations

import ctypes
import importlib
import os
import threading

from . import _blas_threads
from .host_parallel import MIN_ELEMENTS

_NAMES = (("scipy_openblas_set_num_threads64_", "scipy_openblas_get_num_threads64_"),
          ("scipy_openblas_set_num_threads", "scipy_openblas_get_num_threads"),
          ("openblas_set_num_threads", "openblas_get_num_threads"))
_libs = None   # [(set, get)] per OpenBLAS library loaded: found at first use
_find_lock = threading.Lock()


def _openblas():
    """(set, get) of the OpenBLAS each module the kernels call links (NumPy's linalg; scipy's LAPACK, which jaxlib's
    kernels call): dlsym on a module's handle searches the libraries it loaded (POSIX), ~20 us where reading
    /proc/self/maps cost ~1.5 ms on a process's first LAPACK call."""
    found, seen = [], set()
    for name in ("numpy.linalg._umath_linalg", "scipy.linalg.cython_lapack"):
        try:
            lib = ctypes.CDLL(importlib.import_module(name).__file__)
        except (ImportError, OSError, AttributeError, TypeError):
            continue
        for set_name, get_name in _NAMES:
            if hasattr(lib, set_name) and hasattr(lib, get_name):
                at = ctypes.cast(getattr(lib, set_name), ctypes.c_void_p).value
                if at not in seen:   # (one library linked by both)
                    seen.add(at)
                    found.append((getattr(lib, set_name), getattr(lib, get_name)))
                break
    return found


def libraries():
    """[(set, get)] of each OpenBLAS library loaded, found (and handed to the C counter) at the first call."""
    global _libs
    if _libs is None:
        with _find_lock:
            if _libs is None:
                found = _openblas()
                _blas_threads.libraries([tuple(ctypes.cast(f, ctypes.c_void_p).value for f in pair) for pair in found])
                _libs = found
    return _libs


def small(n_elements):
    """Whether a kernel whose operands total n_elements elements runs its BLAS on one thread."""
    return n_elements <= MIN_ELEMENTS


def one_thread(kernel):
    """kernel (of numpy arrays), its BLAS on one thread where its operands are small."""
    def run(*xs, **params):
        n = 0
        for x in xs:
            n += x.size
        if not small(n):
            return kernel(*xs, **params)
        if _libs is None:
            libraries()
        _blas_threads.hold()
        try:
            return kernel(*xs, **params)
        finally:
            _blas_threads.release()
    return run


def jit_target(name):
    """The name a jitted custom call on small operands uses for jaxlib's LAPACK target `name`."""
    return name + "_one_thread"


def one_thread_handler(capsule):
    """jaxlib's FFI handler capsule, wrapped to run inside a hold (register it under jit_target's name)."""
    libraries()
    return _blas_threads.one_thread(capsule)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_blas_threads.after_fork)
