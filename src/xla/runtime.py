"""Execution: compile jaxprs once, run executables, and run eager primitives.

Eager mode on the CPU runs a primitive's host kernel (xla/host.py) where it has one: no
compile, results held on the host as `HostValue`s. Otherwise (and on accelerators) it runs
a single-equation executable cached by (primitive, params, input avals): one dict lookup
and one execute; results are device arrays, returned before the computation finishes on an
accelerator, with it finished on the CPU (whose client runs programs on the calling thread:
xla/_jaxlib.py). That cache is least-recently-used, capped by transforms.caches ('eager',
default 4096 executables).
"""
from __future__ import annotations

import functools
import math
from operator import attrgetter

import numpy as np

from transforms.caches import LRUCache
from transforms.core import (ShapedArray, Tracer, UnexpectedTracerError, abstract_eval, abstract_eval_rules, boxing,
                             eval_rule, get_aval, impl_rules)
from transforms.jaxpr import ClosedJaxpr, Eqn, Jaxpr, Var
from transforms.jaxpr_transforms import jit_p
from transforms.primitives import elementwise as E

from . import _jaxlib, compile_cache, host, host_parallel
from .host import HostValue, Kernel, host_kernels
from .lower_callbacks import callback_failure
from .lowering import lower_jaxpr, lowering_rules

boxing.buffer_type = _jaxlib.ArrayImpl
_ArrayImpl = _jaxlib.ArrayImpl
_default_device = None


def default_device():
    global _default_device
    if _default_device is None:
        _default_device = _jaxlib.client().local_devices()[0]   # (made once, under a lock; this process's)
    return _default_device


def devices():
    return _jaxlib.client().devices()


class Compiled:
    """A loaded executable plus the result handlers that turn its outputs into arrays."""
    __slots__ = ("exe", "handlers", "out_avals", "text")

    def __init__(self, exe, handlers, out_avals):
        self.exe, self.handlers, self.out_avals = exe, handlers, out_avals

    def __call__(self, bufs):
        try:
            return self.exe.execute_sharded(bufs).consume_with_handlers(self.handlers)
        except TypeError:
            _raise_if_tracer(bufs)
            raise
        except _jaxlib.XlaRuntimeError as e:
            failure = callback_failure(e)   # (a host callback raised: that exception, as eagerly)
            if failure is not None:
                raise failure from None
            # a pmap result (an array over several devices) given to a one-device program: gather it
            if not any(_jaxlib.on_many_devices(b) for b in bufs):
                raise
            bufs = [device_buffer(_jaxlib.gather(b)) if _jaxlib.on_many_devices(b) else b for b in bufs]
            return self.exe.execute_sharded(bufs).consume_with_handlers(self.handlers)

    def cost_analysis(self):
        return self.exe.cost_analysis()

    def as_text(self):
        """The optimized HLO XLA compiled (what runs)."""
        return self.exe.get_hlo_text()


def _raise_if_tracer(args):
    for a in args:
        if isinstance(a, Tracer):
            raise UnexpectedTracerError(
                f"a traced value ({a.aval.str_short()}) reached eager execution: it escaped from the "
                f"transform that created it ({a._trace.kind_name()}), e.g. through a global or a side "
                "effect. Return it from the transformed function instead.")


compile_calls = [0]   # how many times compile_jaxpr ran (tests prove eager host work compiles nothing)


def compile_jaxpr(closed: ClosedJaxpr, donate=(), name="main", device=None) -> Compiled:
    compile_calls[0] += 1
    device = device or default_device()
    module = lower_jaxpr(closed, name, donate)
    exe = compile_cache.compile(module, device)   # persistent on-disk cache, else _jaxlib.compile
    avals = [a.aval for a in closed.jaxpr.outvars]
    return Compiled(exe, [_jaxlib.result_handler(a, device) for a in avals], avals)


def device_put(x, aval=None, device=None, fresh=False):
    """A host array as an eager value: a copy held on the host where host kernels run (the CPU),
    else a device buffer. (`device_buffer` always gives a device buffer.) fresh: x is an array its caller
    just made and gives up (np.full's, np.eye's result): held as it is, not copied, where it owns C-ordered
    writable memory of aval's dtype (the value then owns it, as a kernel's result does)."""
    if device is None and _kernels_on():
        x = np.asarray(x)
        aval = aval or host.shared_aval(x.shape, x.dtype)   # (one aval object per signature: the eager memo's key)
        own = fresh and x.dtype == aval.dtype and x.flags.owndata and x.flags.c_contiguous and x.flags.writeable
        return HostValue(x if own else host.copy_aligned(x, aval.dtype), aval)
    return device_buffer(x, aval, device)


def device_buffer(x, aval=None, device=None):
    if type(x) is HostValue:
        return x.buffer(device or default_device())
    x = np.asarray(x)
    aval = aval or get_aval(x)
    if x.dtype != aval.dtype:
        x = x.astype(aval.dtype)
    if not x.flags.c_contiguous:
        x = x.copy(order="C")   # (np.ascontiguousarray would turn 0-d into 1-d)
    return _jaxlib.device_put(x, aval, device or default_device())


def to_numpy(buf):
    if type(buf) is HostValue:
        return buf.readonly()
    return _jaxlib.to_numpy(buf)


def as_buffer(v):
    """A raw eager value as XLA takes it: host values become (cached, aliasing) device buffers."""
    return v.buffer(default_device()) if type(v) is HostValue else v


boxing.as_buffer = as_buffer


# ------------------------------------------------------------------------ eager impls
_exe_cache = LRUCache(kind="eager")   # (prim, params, *avals) -> Compiled; least recently used evicted
_exe_touch = _exe_cache.move_to_end   # a hit: a dict read plus this (both C calls: the hot path stays flat)


def single_jaxpr(prim, avals, params):
    """The closed jaxpr of one equation: `prim` with `params` on operands of `avals`."""
    invars = [Var(a) for a in avals]
    out = abstract_eval(prim, avals, params)
    outs = out if prim.multiple_results else [out]
    outvars = [Var(a) for a in outs]
    return ClosedJaxpr(Jaxpr([], invars, [Eqn(prim, invars, outvars, params)], outvars), [])


def _compile_single(prim, avals, params):
    return compile_jaxpr(single_jaxpr(prim, avals, params), name=prim.name)


def _to_buffer(x):
    if type(x) is _jaxlib.ArrayImpl:
        return x
    if type(x) is HostValue:
        return x.buffer(default_device())
    if isinstance(x, Tracer):
        _raise_if_tracer([x])
    return device_buffer(x, get_aval(x))


def _make_impl(prim):
    multi = prim.multiple_results

    def impl(*args, **params):
        try:
            key = (prim, tuple(params.items()), *map(_get_aval, args))
            ent = _exe_cache[key]
            _exe_touch(key)   # (KeyError here: evicted by another thread meanwhile; the miss path re-adds it)
        except (KeyError, AttributeError):
            args = [_to_buffer(a) for a in args]
            avals = [a.aval for a in args]
            key = (prim, tuple(params.items()), *avals)
            ent = _exe_cache.get(key)
            if ent is None:
                ent = _exe_cache.put(key, _compile_single(prim, avals, params))
        try:
            outs = ent(args)
        except TypeError:   # a host-held value (HostValue) on the cached path: hand XLA its buffer
            if not any(type(a) is HostValue for a in args):
                raise
            outs = ent([_to_buffer(a) for a in args])
        return outs if multi else outs[0]
    return impl


# ------------------------------------------------------------------ host kernels (CPU)
_platform_cpu = None


def _kernels_on():
    """Whether eager primitives run host kernels, and eager values are held on the host (HostValue): the CPU
    default device, not switched off."""
    global _platform_cpu
    if _platform_cpu is None:
        _platform_cpu = default_device().platform == "cpu"
    return _platform_cpu and host.MODE != "xla"


def _np_of(x):
    t = type(x)
    if t is HostValue:
        if x._buf is not None:
            x.check_alive()
        return x.np
    if t is _ArrayImpl:
        return _jaxlib.to_numpy(x)
    if isinstance(x, Tracer):
        _raise_if_tracer([x])
    return np.asarray(x)


_get_aval = attrgetter("aval")
_MEMO_MAX = 1024
_aval_cache: dict = {}   # (prim, params, *avals) -> out aval(s); cleared when it grows past the bound
_AVAL_CACHE_MAX = 8192


def _out_avals(prim, args, params):
    try:
        key = (prim, tuple(params.items()), *map(_get_aval, args))
    except AttributeError:
        if any(isinstance(a, Tracer) for a in args):
            _raise_if_tracer(args)
        key = (prim, tuple(params.items()), *[get_aval(a) for a in args])
    try:
        out = _aval_cache.get(key)
    except TypeError:   # an unhashable parameter: not cached
        return abstract_eval(prim, list(key[2:]), params)
    if out is None:
        out = abstract_eval(prim, list(key[2:]), params)
        if len(_aval_cache) >= _AVAL_CACHE_MAX:
            _aval_cache.clear()   # (dict ops are atomic under the GIL: safe from several threads)
        _aval_cache[key] = out
    return out


def _box_host(out, aval, prim):
    """A kernel's result as an eager value of exactly `aval` (a HostValue)."""
    if type(out) is not np.ndarray:
        out = np.asarray(out)
    if out.dtype != aval[1]:
        out = out.astype(aval[1])
    if out.shape != aval[0]:
        raise AssertionError(f"host kernel of {prim.name} gave shape {out.shape}, expected {aval.str_short()}")
    return HostValue(out, aval)


def eager_in_place(prim, args, params):
    """`prim` run eagerly with its result written into the memory of args[0], which the caller gives up (x[k] = v,
    x += y: NumPy's cost, not a copy of x per write): by the kernel's ufunc where that is its form (the same bits),
    else by an `in_place` kernel; None where not done safely (not host-held, the memory shared: host.sole_holder)."""
    kernel, x = host_kernels.get(prim), args[0]
    if type(x) is not HostValue or not _kernels_on() or _out_avals(prim, args, params) != x.aval:
        return None
    ufunc = type(kernel) is Kernel and kernel.wrap is None and x.aval.dtype.kind in kernel.kinds
    if not (ufunc or getattr(kernel, "in_place", False)) or not host.sole_holder((x,), False):
        return None
    xs = list(map(_np_of, args))
    if not ufunc:
        out = host.quiet(kernel.rest, *xs, in_place=True, **params)
        return None if out is NotImplemented else HostValue(out, x.aval)
    split = host_parallel.split if math.prod(x.aval.shape) >= host_parallel.MIN_ELEMENTS else None
    host.quiet(kernel.form([a.aval for a in args], params, split), *xs, out=xs[0])   # (the out-of-place form)
    return x   # (its memory holds the result now)


def _make_host_impl(prim, kernel, xla_impl):
    """The eager impl of a primitive with a host kernel. Per signature (input avals, params) it caches the output
    aval(s) and the kernel's form for it (host.form: e.g. a float sum is the bare ufunc reduction, an add the bare
    ufunc), so a call is a lookup, the kernel, and the result's box. A form depends on the operands' dtypes and
    ranks and the params only: a new shape of a known rank takes the one made before (split over the cores where
    that shape pays: host_parallel). The common call (host-held operands, a signature seen before, one result) is
    one C call, xla._fpmode.HostImpl, which runs `impl` below for every other case."""
    multi = prim.multiple_results
    cache = {}            # (*input avals, *params items) -> (output aval(s), the form for that signature)
    forms = {}            # (*(dtype, rank) of each input, *params items) -> the form, at every shape

    def lookup(*args, **params):
        if not _kernels_on():
            return None
        n = len(args)
        try:
            key = (*map(_get_aval, args), *params.items())
            ent = cache.get(key)
        except (AttributeError, TypeError):   # a Python scalar operand, an unhashable parameter: not cached
            return _out_avals(prim, args, params), functools.partial(kernel, **params), None
        if ent is None:
            # a new signature: its output aval(s) from the shape rule (uncached: this cache is the memo) and its
            # form, stored under `key`
            in_avals = key[:n]
            out = eval_rule(prim, in_avals, params)   # (first: it checks the signature the form assumes)
            fkey = (*[(a[1], len(a[0])) for a in in_avals], *key[n:])
            fn = forms.get(fkey)
            if fn is None:
                fn = host.form(kernel, in_avals, params)
                if len(forms) >= _MEMO_MAX:
                    forms.clear()
                forms[fkey] = fn
            if not multi and math.prod(out[0]) >= host_parallel.MIN_ELEMENTS:   # (below it no shape pays a split)
                fn = host.form(kernel, in_avals, params, host_parallel.split)
            ent = (out, fn)
            if len(cache) >= _AVAL_CACHE_MAX:
                cache.clear()   # (dict ops are atomic under the GIL: safe from several threads)
            cache[key] = ent
        return ent

    def impl(*args, **params):
        ent = lookup(*args, **params)
        if ent is None:
            return xla_impl(*args, **params)
        avals, fn = ent[:2]
        out = host.quiet(fn, *[_np_of(a) for a in args])
        if out is NotImplemented:
            return xla_impl(*args, **params)
        if multi:
            return [_box_host(o, a, prim) for o, a in zip(out, avals)]
        return _box_host(out, avals, prim)
    if multi or host.HostImpl is None:
        return impl
    return host.HostImpl(impl, lookup, xla_impl, lambda out, aval: _box_host(out, aval, prim))


_scalar_cache: dict = {}   # (type, value, dtype, weak_type) -> the converted scalar (an immutable eager value)
_PY_SCALARS = frozenset((bool, int, float, complex))
_NP_SCALARS = frozenset(np.dtype(c).type for c in "?bhilqBHILQefdgFDG")
_FLOAT = frozenset((float, np.float16, np.float32, np.float64, np.longdouble))
_COMPLEX = frozenset((complex, np.complex64, np.complex128, np.clongdouble))


def _convert_impl(x, *, new_dtype, weak_type):
    """Host values (Python/NumPy scalars and arrays) convert on the host: no XLA launch."""
    t = type(x)
    if t in _PY_SCALARS or t in _NP_SCALARS:   # (NumPy scalars: the literals staging folds, ~200 per special fn)
        # -0.0 == 0.0 (and complex zeros of either sign) hash alike: their key spells the sign out; a NaN (never
        # equal to itself) is keyed by its bits
        if x != x:
            key = (t, np.asarray(x).tobytes(), new_dtype, weak_type)
        else:
            key = (t, repr(x) if t in _COMPLEX or (t in _FLOAT and not x) else x, new_dtype, weak_type)
        buf = _scalar_cache.get(key)
        if buf is None or buf.is_deleted():   # (deleted: the value was donated to a jitted function)
            buf = device_put(_host_convert(x, new_dtype), ShapedArray((), new_dtype, weak_type))
            if len(_scalar_cache) < 4096:
                _scalar_cache[key] = buf
        return buf
    if t is HostValue or t is _ArrayImpl or isinstance(x, Tracer):
        a = x.aval
        if a.dtype == new_dtype and a.weak_type == weak_type:
            return x
        if t is HostValue and a.dtype == new_dtype:
            return HostValue(x.np, ShapedArray(a.shape, new_dtype, weak_type))
        return _generic_convert(x, new_dtype=new_dtype, weak_type=weak_type)
    arr = _host_convert(x, new_dtype)
    return device_put(arr, ShapedArray(arr.shape, new_dtype, weak_type))


def _host_convert(x, dtype):
    arr = np.asarray(x)
    if dtype.kind in "iu" and arr.dtype.kind in "iub" and not np.can_cast(arr, dtype):
        info = np.iinfo(dtype)
        if np.any(arr < info.min) or np.any(arr > info.max):
            raise OverflowError(f"Python integer {x} is out of bounds for {dtype.name}")
    return host.quiet(arr.astype, dtype)   # (np.errstate costs ~4 us per entry)


def _impl_for(prim):
    xla_impl = _make_impl(prim)
    kernel = host_kernels.get(prim)
    if kernel is None or host.MODE == "xla":
        return xla_impl
    return _make_host_impl(prim, kernel, xla_impl)


def late_impl(prim):
    """The eager impl of a primitive first run after register_impls() (e.g. defined later): made now if it
    has a lowering rule; otherwise a clear error naming what is missing (never a bare KeyError)."""
    if prim not in lowering_rules:
        raise NotImplementedError(
            f"{prim.name}: no eager implementation: the XLA backend has no lowering rule for it (register "
            f"one as `lowering_rules[{prim.name}_p]` in xla/lower_<family>.py)")
    return _impl_for(prim)


def register_impls():
    global _generic_convert
    for prim in list(abstract_eval_rules):
        if prim in lowering_rules and prim not in impl_rules:
            impl_rules[prim] = _impl_for(prim)
    _generic_convert = _impl_for(E.convert_element_type_p)


_generic_convert = _make_impl(E.convert_element_type_p)
impl_rules[E.convert_element_type_p] = _convert_impl
impl_rules[jit_p] = _make_impl(jit_p)
