"""Host kernels: eager primitives on the CPU run as NumPy code on host-held values.

Why: a drop-in backend runs eagerly, through library code, on ever-changing shapes. A
single-primitive XLA executable costs a compile (~15-30 ms) per new (primitive, params,
shapes) and ~4 us of execute per call; NumPy costs neither. So on the CPU device an eager
primitive with a host kernel runs that kernel, and its result is a `HostValue`: a read-only
NumPy array plus its aval. A HostValue becomes a device buffer only where XLA needs one (a
jit call, a primitive without a host kernel, DLPack); that buffer aliases the NumPy memory
when it is 64-byte aligned (PJRT's zero-copy rule) and is cached on the value.

A kernel has the *lowering's* semantics, not NumPy's defaults (integer wraparound, XLA's shift and division-by-zero
results, NaN-propagating max/min, the dtype the abstract eval says); tests/xla/test_host_kernels.py proves host ==
XLA per primitive and dtype. Inputs it does not cover it declines (NotImplemented): the XLA executable runs instead.

Table: `host_kernels[prim]`, registered beside each lowering in xla/lower_<family>.py: a function
`fn(*numpy_arrays, **params) -> ndarray | list | NotImplemented`, or a `Kernel` -- the same, with the
faster forms (a bare ufunc, a form specialised to a signature, an in-place form) that derive from it.
Kernels run with NumPy's floating-point warnings silenced (XLA raises none) and must not mutate their inputs.

Subnormals: XLA's CPU runtime runs every executable with the control register's flush bits set (x86-64 MXCSR
FTZ+DAZ, aarch64 FPCR FZ; tsl::port::ScopedFlushDenormal, no option turns it off), and JAX documents this as
intended. Host kernels run in the same mode, so eager and jitted work agree: on the CPU a floating-point
operation reads a subnormal operand as a zero of the same sign and writes a subnormal result as a zero of the
same sign (DAZ+FTZ), eagerly and under jit; operations that only move or reinterpret bits (copies, indexing,
reshape, bitcast, asarray, conversion to NumPy or DLPack) keep subnormals. `quiet`, which runs
every kernel, sets this thread's mode and puts it back (NumPy code outside a kernel keeps IEEE arithmetic); the
C workers of host_parallel copy the calling thread's mode. The switch is the C extension `_fpmode`, built with the
package (required: without it eager and jitted results would differ on subnormals). `quiet` also sets _fpmode's NumPy
memory handler, which keeps freed blocks for the next kernel (medium results stop page-faulting in afresh).
"""
from __future__ import annotations

import ctypes
import functools
import math
import os

import numpy as np

from transforms.core import ShapedArray

from . import _fpmode, _jaxlib

host_kernels: dict = {}   # prim -> kernel: a function or a Kernel (filled at import by the lower_* modules)


class Kernel:
    """A primitive's host entry, from which every fast form derives. Called, it is the general kernel.

    - `ufunc`, `kinds`: for operands of these dtype kinds the kernel is exactly this NumPy ufunc (float
      arithmetic, comparisons); `rest(*arrays, **params)` covers the other kinds (None: NotImplemented).
    - `special(in_avals, params) -> fn(*arrays) | None`: the kernel specialised to a signature (a reduction
      with its axes and dtype bound, np.matmul for a 2-D dot), from its dtypes, ranks and params only --
      never its shapes, so one form serves every shape (the runtime caches it so; host programs run at any
      shape, transforms.jaxpr_transforms._ShapeFree).
    - `wrap(fn) -> fn`: applied to the ufunc in every form (the subnormal rule's fixes,
      xla/lower_elementwise_subnormal.py).
    - `in_place`: True where `rest(*arrays, in_place=True, **params)` writes the result into the first operand
      (same dtype and shape): runtime.eager_in_place, where its only holder gives it up (x[k] = v; x op= y: the ufunc).
    Each form gives exactly what the general kernel gives (tests/xla/test_host_specialized.py)."""
    __slots__ = ("ufunc", "kinds", "rest", "special", "wrap", "in_place")

    def __init__(self, ufunc=None, kinds="", rest=None, special=None, wrap=None, in_place=False):
        self.ufunc, self.kinds, self.rest, self.special, self.wrap, self.in_place = \
            ufunc, kinds, rest, special, wrap, in_place

    def __call__(self, *xs, **params):
        if xs[0].dtype.kind in self.kinds:
            return (self.ufunc if self.wrap is None else self.wrap(self.ufunc))(*xs)
        return NotImplemented if self.rest is None else self.rest(*xs, **params)

    def form(self, in_avals, params, split=None):
        """The fast form for a signature, or None (the general kernel then runs). split: xla/host_parallel.py's, to
        run the ufunc over the cores where `in_avals`' shapes pay for it (at any shape, the same values)."""
        if in_avals[0].dtype.kind in self.kinds:
            fn = self.ufunc if split is None else split(self.ufunc, in_avals) or self.ufunc
            return fn if self.wrap is None else self.wrap(fn)
        return None if self.special is None else self.special(in_avals, params)


def form(kernel, in_avals, params, split=None):
    """fn(*arrays) giving exactly kernel(*arrays, **params) for operands of `in_avals`: the entry's fast form
    (`Kernel.form`) where it has one, else the kernel with its params bound."""
    if type(kernel) is Kernel:
        fn = kernel.form(in_avals, params, split)
        if fn is not None:
            return fn
        kernel = kernel.rest or declines   # (no form: the operands' kinds are not the ufunc's)
    return functools.partial(kernel, **params) if params else kernel


@functools.cache
def scipy_function(module, name):
    """scipy.<module>.<name> (scipy comes with jaxlib, which requires it; imported at the first kernel that asks), or
    None where it is missing: the kernel calling it then declines (NotImplemented: XLA's executable runs)."""
    try:
        import importlib
        return getattr(importlib.import_module("scipy." + module), name, None)
    except ImportError:
        return None


def declines(*xs, **params):
    """The kernel of an equation no kernel covers: the equation binds (its single-op executable runs)."""
    return NotImplemented

# ARRAY_NAMESPACE_EAGER: "host" (default: host kernels, NumPy-held results) or "xla" (no host kernels: every
# eager primitive a compiled executable)
MODE = os.environ.get("ARRAY_NAMESPACE_EAGER", "host").strip().lower() or "host"
if MODE not in ("host", "xla"):
    raise ValueError(f"ARRAY_NAMESPACE_EAGER must be host or xla, got {MODE!r}")

_ALIGN = 64   # PJRT CPU aliases host memory aligned to this (cpu_function_runtime::MinAlign)
_ZERO_COPY = _jaxlib.xc.HostBufferSemantics.ZERO_COPY
_MOVE_MIN = 1 << 20   # bytes: an unaligned value this large moves to aligned memory when XLA first needs it


class HostValue:
    """An eager value held on the host: `np` (a read-only-by-contract ndarray) and `aval`."""
    __slots__ = ("np", "aval", "_buf", "donor", "__weakref__")

    def __init__(self, arr, aval):
        self.np = arr
        self.aval = aval
        self._buf = None
        self.donor = None   # the name of the jitted function this value was donated to, once it was

    # the parts of a device array's interface the rest of the code base reads
    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: len(self.aval.shape))

    def block_until_ready(self):
        return self

    def is_ready(self):
        return True

    def is_deleted(self):
        b = self._buf
        return b is not None and b.is_deleted()

    def readonly(self):
        """A read-only NumPy view (what leaves the runtime: nobody may write into the value)."""
        self.check_alive()
        out = self.np.view()
        out.flags.writeable = False
        return out

    def __array__(self, dtype=None, copy=None):
        out = self.readonly()
        if dtype is not None and np.dtype(dtype) != out.dtype:
            return out.astype(dtype)
        return np.array(out) if copy else out

    def check_alive(self):
        b = self._buf
        if b is not None and b.is_deleted():
            to = f"the jitted function '{self.donor}' (donate_argnums)" if self.donor else "a jitted function"
            raise RuntimeError(f"this array was donated to {to} (or deleted) and cannot be used; pass a copy "
                               "(xp.asarray(x, copy=True)) if you need it afterwards")

    def buffer(self, device):
        """The device buffer of this value (made once, zero-copy where the memory is aligned)."""
        b = self._buf
        if b is not None:
            self.check_alive()   # (raises where it was donated)
            return b
        arr = self.np
        if arr.nbytes >= _MOVE_MIN and (arr.ctypes.data % _ALIGN or not arr.flags.c_contiguous):
            # a large value NumPy placed unaligned (a kernel's result): moved once into aligned memory that
            # the buffer then aliases, rather than a second copy living beside it for the value's lifetime
            arr = self.np = copy_aligned(arr, self.aval.dtype)
        if not arr.flags.c_contiguous:
            arr = np.ascontiguousarray(arr) if arr.ndim else arr.copy()
        if arr.dtype != self.aval.dtype:   # (a kernel is held to its aval's dtype; belt and braces)
            arr = arr.astype(self.aval.dtype)
        if arr.ctypes.data % _ALIGN == 0 or arr.size == 0:
            # PJRT keeps `arr` alive while the buffer lives; writes never happen (values are immutable,
            # and a donated aliasing buffer is refused by jit before it runs)
            b = _jaxlib.xc.batched_device_put(self.aval, _jaxlib.sharding_for(device), [arr], [device], True,
                                              False, _ZERO_COPY, True)
        else:
            b = _jaxlib.device_put(arr, self.aval, device)
        self._buf = b
        return b

    def __repr__(self):
        return f"HostValue({self.aval.str_short()})"


_AVALS = _fpmode.AVALS   # (shape, dtype, weak) -> one aval (the eager memo knows avals by identity; _fpmode reads it)


def shared_aval(shape, dtype, weak=False):
    """The aval of (shape, dtype, weak) for a result made outside the bind path (direct forms), one object per
    signature; bounded (cleared when full)."""
    key = (shape, dtype, weak)
    a = _AVALS.get(key)
    if a is None:
        if len(_AVALS) >= 4096:
            _AVALS.clear()   # (dict ops are atomic under the GIL)
        a = _AVALS[key] = ShapedArray(shape, dtype, weak)
    return a


sole_holder = _fpmode.sole_holder   # (vals, family) -> whether host values' memory may take a write (_fpmode.c)


def aligned_empty(shape, dtype):
    """An uninitialised C-contiguous array whose data is 64-byte aligned (so XLA can alias it)."""
    dt = np.dtype(dtype)
    n = math.prod(shape) * dt.itemsize   # (math.prod: ~0.1 us; np.prod of a tuple ~3.5 us)
    raw = np.empty(n + _ALIGN, np.uint8)
    off = (-ctypes.addressof(ctypes.c_byte.from_buffer(raw))) % _ALIGN   # (raw.ctypes.data: ~1.5 us, this ~0.4)
    return raw[off:off + n].view(dt).reshape(shape)


def copy_aligned(x, dtype):
    """A C-contiguous copy of host array `x` in `dtype` (64-byte aligned when large: XLA aliases it)."""
    dt = np.dtype(dtype)
    if x.size * dt.itemsize < 4096:
        return np.array(x, dtype=dt, order="C", copy=True)
    out = aligned_empty(x.shape, dt)
    if x.dtype == dt:
        np.copyto(out, x)   # (no cast: nothing to warn about)
    else:
        quiet(np.copyto, out, x, casting="unsafe")
    return out


# ------------------------------------------------------------------ floating-point mode and warnings
# quiet(fn, *args, **params) runs every kernel: NumPy's warnings silenced, subnormals flushed (_fpmode), both put
# back after. np.errstate costs ~4 us per entry; setting NumPy's error-state context variable and the control bits
# in one C call costs ~0.2 us.
try:
    from numpy._core._ufunc_config import _extobj_contextvar as _errvar, _make_extobj
except ImportError:   # pragma: no cover - a NumPy that keeps its error state elsewhere (private names)
    _errvar = None
# whether host kernels flush subnormals (False where this machine's mode cannot be set: XLA's CPU runtime does not
# flush there either)
FLUSHES = _fpmode.supported
_fpmode.configure(_errvar, None if _errvar is None else _make_extobj(all="ignore"), HostValue, np.ndarray)
# runtime._make_host_impl's C call, and quiet as one C call, where NumPy's error state is that context variable
HostImpl = None if _errvar is None else _fpmode.HostImpl
if HostImpl is not None:
    quiet = _fpmode.quiet
else:   # (np.errstate around the C call)
    def quiet(fn, *args, **params):
        with np.errstate(all="ignore"):
            return _fpmode.quiet(fn, *args, **params)


def thread_start():
    """A thread a kernel starts (a pool's worker) begins in IEEE mode, as a thread the user starts would: a new
    thread inherits its creator's control register, here the kernel's (it takes the kernels' mode per run)."""
    if FLUSHES:
        _fpmode.set(0)
