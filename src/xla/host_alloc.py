"""Large host temporaries without a page fault per page: glibc malloc's thresholds, set once at import.

Why: host kernels (xla/host.py) allocate one NumPy array per eager primitive. Under glibc's default
(dynamic) thresholds, a chain of ops on medium arrays (~1-60 MiB: an 800x800 float64 is 5 MiB)
frees a few such temporaries at the top of the heap, glibc hands that memory back to the system
(trim threshold: twice the largest array freed, at most 64 MiB), and the next array page-faults
all of it in again: `(x - m) * (x - m)` summed over rows of 800x800 costs 2-3.7 ms instead of
0.5 ms, nearly all of it in the kernel zeroing fresh pages. Fixed thresholds keep those pages:

- arrays up to MMAP_THRESHOLD (64 MiB: a 4000x4000 float32) come from the heap, larger ones
  are mapped and unmapped on their own (returned to the system as soon as they are freed);
- up to TRIM_THRESHOLD (256 MiB) of free memory at the top of the heap stays resident for reuse.

So the process may keep up to ~256 MiB more resident after large temporaries die (what a caching
allocator keeps, bounded), and peak memory is unchanged. Applied only to glibc, only where host
kernels run, never over the user's own settings (MALLOC_*_ environment variables, GLIBC_TUNABLES),
and switched off by ARRAY_NAMESPACE_MALLOC_TUNING=0. (Setting either threshold turns glibc's dynamic
adjustment off for both, so both are always set together.)
"""
from __future__ import annotations

import ctypes
import os
import sys

MMAP_THRESHOLD = 64 << 20
TRIM_THRESHOLD = 256 << 20
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3   # glibc's mallopt parameter numbers (malloc.h)
_USER_SETTINGS = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_", "GLIBC_TUNABLES")

applied = None   # (mmap threshold, trim threshold) once set; None where left alone (and why: `reason`)
reason = "not tried"


def tune(environ=os.environ):
    """Set glibc's thresholds once (see the module docstring); returns whether they were set."""
    global applied, reason
    if applied is not None:
        return True
    if environ.get("ARRAY_NAMESPACE_MALLOC_TUNING", "1").strip().lower() in ("0", "off", "no", "false"):
        reason = "switched off by ARRAY_NAMESPACE_MALLOC_TUNING"
        return False
    if not sys.platform.startswith("linux"):
        reason = "not Linux"
        return False
    user = [k for k in _USER_SETTINGS if k in environ]
    if user:
        reason = f"the user's own malloc settings ({', '.join(user)})"
        return False
    try:
        libc = ctypes.CDLL(None)
        libc.gnu_get_libc_version   # (AttributeError: not glibc, e.g. musl)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        reason = "not glibc"
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    if mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) != 1 or mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD) != 1:
        reason = "mallopt refused"
        return False
    applied, reason = (MMAP_THRESHOLD, TRIM_THRESHOLD), "set"
    return True
