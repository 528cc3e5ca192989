"""The engine's heart: abstract values, primitives, bind, and context-based trace dispatch.

A *primitive* is a named operation with rules kept in tables (abstract eval here; jvp,
transpose, batching in their transform modules; lowering in `xla`). `bind` hands the
primitive to the *current trace*, which lives in a thread-local. A trace owns tracers
tagged with itself; whatever it does not own it treats as a constant. When a trace runs a
rule it makes its parent current, so rules bind "one level down" (the autodidax2 / JAX
2024 design). The bottom trace is `EvalTrace`, which runs primitives for real through the
impl rules that `xla` registers.
"""
from __future__ import annotations

import linecache
import os
import sys
import threading
from operator import itemgetter

import numpy as np

from .backend import backend

# ----------------------------------------------------------------------------- dtypes

_SHORT = {
    "bool": "bool", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
    "float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64",
    "complex64": "c64", "complex128": "c128",
}


_SHORT_BY_DTYPE: dict = {}   # dtype -> its short name (dtype.name is a slow Python property; printing asks often)


def short_dtype_name(dtype) -> str:
    try:
        return _SHORT_BY_DTYPE[dtype]
    except (KeyError, TypeError):
        name = _SHORT.get(dtype.name, dtype.name)
        if len(_SHORT_BY_DTYPE) < 256:
            try:
                _SHORT_BY_DTYPE[dtype] = name
            except TypeError:   # (an unhashable stand-in for a dtype)
                pass
        return name


def is_float(dtype) -> bool:
    return dtype.kind in "fc"


# ----------------------------------------------------------------------- abstract values

class ShapedArray(tuple):
    """Shape, dtype and weak-typedness of a value: all a trace knows about it.

    A tuple underneath, so hashing and equality (the eager and jit cache keys) run in C.
    jaxlib reads exactly `shape`, `dtype` and `weak_type`, so the same object is the aval
    we attach to device arrays.
    """
    __slots__ = ()

    def __new__(cls, shape, dtype, weak_type=False):
        return tuple.__new__(cls, (tuple(shape), np.dtype(dtype), bool(weak_type)))

    def __getnewargs__(self):   # (pickle and copy: __new__ takes the three fields, not one tuple)
        return tuple(self)

    shape = property(itemgetter(0))
    dtype = property(itemgetter(1))
    weak_type = property(itemgetter(2))

    @property
    def ndim(self):
        return len(self[0])

    @property
    def size(self):
        n = 1
        for d in self[0]:
            n *= d
        return n

    def strip_weak(self):
        return ShapedArray(self[0], self[1]) if self[2] else self

    def update(self, shape=None, dtype=None, weak_type=None):
        return ShapedArray(self[0] if shape is None else shape,
                           self[1] if dtype is None else dtype,
                           self[2] if weak_type is None else weak_type)

    def str_short(self):
        return f"{short_dtype_name(self[1])}[{','.join(map(str, self[0]))}]"

    def __repr__(self):
        return f"ShapedArray({self.str_short()}{', weak' if self[2] else ''})"


_PY_SCALAR_DTYPES = {bool: np.dtype(bool), int: np.dtype(np.int64), float: np.dtype(np.float64),
                     complex: np.dtype(np.complex128)}


def get_aval(x) -> ShapedArray:
    """The aval of any raw value: a buffer or tracer (has .aval), a Python or NumPy scalar/array."""
    aval = getattr(x, "aval", None)
    if aval is not None:
        return aval
    t = type(x)
    if t in _PY_SCALAR_DTYPES:
        return ShapedArray((), _PY_SCALAR_DTYPES[t], weak_type=True)
    if isinstance(x, (np.ndarray, np.generic)):
        return ShapedArray(np.shape(x), x.dtype)
    raise TypeError(f"value of type {t.__name__} is not an array value")


# ---------------------------------------------------------------------------- primitives

class Primitive:
    """A named operation. Its behaviour lives in rule tables keyed by the primitive."""
    __slots__ = ("name", "multiple_results")

    def __init__(self, name, multiple_results=False):
        self.name = name
        self.multiple_results = multiple_results

    def bind(self, *args, **params):
        return bind(self, *args, **params)

    def __repr__(self):
        return self.name


abstract_eval_rules: dict = {}   # prim -> fn(*avals, **params) -> aval | list[aval]
impl_rules: dict = {}            # prim -> fn(*values, **params) -> value | list  (registered by xla)
not_foldable: set = set()        # prims never constant-folded at trace time (effects, randomness)
fold_cacheable: set = set()      # prims whose trace-time folds are exact and deterministic: memoized by staging


# Prims whose abstract eval is a pure function of (avals, params compared by ==) with one result: their
# results are memoized (a special function's trace asks the same few questions hundreds of times).
# Failures are never cached, so an error is raised anew each time.
cacheable_abstract: set = set()
_abstract_cache: dict = {}
_ABSTRACT_CACHE_MAX = 4096


def abstract_eval(prim, avals, params):
    """The output aval(s) of `prim`, checked for size before anything reaches XLA (whose answer to an
    impossible size is to abort the process)."""
    if prim in cacheable_abstract:
        try:
            key = (prim, tuple(params.items()), *avals) if params else (prim, *avals)
            return _abstract_cache[key]
        except KeyError:
            pass
        except TypeError:   # an unhashable parameter
            key = None
        out = abstract_eval_rules[prim](*avals, **params)
        check_size(out, prim.name)
        if key is not None:
            if len(_abstract_cache) >= _ABSTRACT_CACHE_MAX:
                _abstract_cache.clear()
            _abstract_cache[key] = out
        return out
    return eval_rule(prim, avals, params)


def eval_rule(prim, avals, params):
    """abstract_eval without the memo, for callers that keep their own cache per signature (the eager
    runtime's miss path: a second, global memo would cost a key and a store per new shape for nothing).
    A result that is one of the operands' avals (x + 1, sin(x)) describes a value that exists: not re-checked."""
    out = abstract_eval_rules[prim](*avals, **params)
    if prim.multiple_results:
        for a in out:
            check_size(a, prim.name)
        return out
    if out[0]:   # (a 0-d result, one element, always fits)
        for a in avals:
            if a is out:
                return out
        check_size(out, prim.name)
    return out


_INT64_MAX = 2 ** 63 - 1


def _host_memory_bytes():
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


# What one array may occupy on the device: the machine's memory for the CPU; a backend with better
# knowledge (a GPU's memory stats) replaces it through set_memory_limit.
_memory_limit = [_host_memory_bytes()]


def set_memory_limit(nbytes):
    _memory_limit[0] = nbytes
    _abstract_cache.clear()   # its entries passed the size check under the old limit


def check_size(aval, what):
    """ValueError for a shape whose element count overflows int64; MemoryError for an array larger than
    the device can hold -- typed errors instead of an abort inside XLA."""
    n = 1
    for d in aval.shape:
        n *= d
    if n > _INT64_MAX:
        raise ValueError(f"{what}: the shape {tuple(aval.shape)} has {n} elements, more than an array can "
                         f"index (2**63 - 1)")
    nbytes = n * aval.dtype.itemsize
    limit = _memory_limit[0]
    if limit is not None and nbytes > limit:
        raise MemoryError(f"{what}: an array of shape {tuple(aval.shape)} and dtype {aval.dtype.name} needs "
                          f"{nbytes:,} bytes, more than the device can hold ({limit:,} bytes)")


def bind(prim, *args, **params):
    if not tracing[0] or (trace := _state.trace) is EVAL:   # (eager: EvalTrace.process inlined)
        try:
            impl = impl_rules[prim]
        except KeyError:
            impl = _impl_missing(prim)
        return impl(*args, **params)
    return trace.process(prim, args, params)


# ------------------------------------------------------------------------ the trace stack

class Trace:
    """Interprets primitives. `parent` is the trace its rules bind into."""
    __slots__ = ("parent", "__weakref__")

    def process(self, prim, args, params):
        raise NotImplementedError

    def kind_name(self):
        return type(self).__name__


class Tracer:
    """A value inside a trace. Subclasses carry what their trace needs."""
    __slots__ = ("_trace",)

    @property
    def aval(self):
        raise NotImplementedError

    def concrete(self, why, guard=False):
        """The concrete value behind this tracer for a Python decision (bool/int/index, whose
        derivative is zero), or a ConcretizationTypeError. With `guard`, a jit trace that knows this
        call's values may answer and check the answer on later calls (transforms/jit_guards.py)."""
        raise ConcretizationTypeError(self, why)

    def host_value(self, why, guard=False):
        """The value as a host value (NumPy, DLPack, float): only where nothing is lost -- never the
        primal of a value that carries a tangent or a batch axis. Otherwise a TracerArrayConversionError.
        `guard`: as for `concrete` (float(), .item(), .tolist())."""
        raise TracerArrayConversionError(self, why)


class EvalTrace(Trace):
    """The bottom of every stack: run the primitive for real."""
    __slots__ = ()

    def process(self, prim, args, params):
        try:
            impl = impl_rules[prim]
        except KeyError:
            impl = _impl_missing(prim)
        return impl(*args, **params)


def _impl_missing(prim):
    """A primitive without an eager impl: the backend makes one (e.g. for a primitive defined after it came
    up) or says why it cannot; with no backend registered, a NoBackendError says how to bring one up."""
    impl = impl_rules[prim] = backend.impl_for(prim)
    return impl


class _State(threading.local):
    def __init__(self):
        self.trace = EVAL
        # a raw value its only holder gives up to the update under way (x[k] = v under grad; a cotangent in
        # backward_pass): primitives.indexing.dynamic_update_slice may write into its memory, once
        self.given_up = None


EVAL = EvalTrace()
EVAL.parent = None
_state = _State()
trace_state = _state   # public: `trace_state.trace is EVAL` is the hot-path test for eager execution
# How many threads have a trace other than EVAL current. While it is 0 every thread is eager, so the eager hot
# paths (bind, the namespace's wrap) skip the thread-local read (~60 ns): `not tracing[0] or trace_state.trace is
# EVAL`. A thread counts itself before its trace becomes current and uncounts itself after EVAL is back (_switch),
# so a 0 read by any thread means its own trace is EVAL.
tracing = [0]
_tracing_lock = threading.Lock()


def _after_fork_in_child():
    """A forked child has only the forking thread: the count is its own, and the lock is new (a thread of the parent
    holding it at the fork -- under the GIL only if a switch point lands in its block; on a free-threaded build at
    any time -- would never release it here)."""
    global _tracing_lock
    _tracing_lock = threading.Lock()
    tracing[0] = 0 if _state.trace is EVAL else 1


os.register_at_fork(after_in_child=_after_fork_in_child)

try:   # bind's eager case in C (transforms/_bind.c, optional): the same calls without a Python frame
    from . import _bind as _c_bind
except ImportError:
    pass
else:
    _c_bind.configure(tracing, impl_rules, bind)
    bind = _c_bind.bind


def _switch(new):
    """Make `new` this thread's current trace, keeping `tracing` counting the threads that trace."""
    cur = _state.trace
    if (cur is EVAL) == (new is EVAL):
        _state.trace = new
    elif new is EVAL:
        _state.trace = new
        with _tracing_lock:
            tracing[0] -= 1
    else:
        with _tracing_lock:
            tracing[0] += 1
        _state.trace = new


def current_trace() -> Trace:
    return _state.trace


def values_are_concrete() -> bool:
    """Whether array values are known on the host at this point (eagerly, and under grad/jvp, whose
    primals are concrete), so data-dependent shapes can be computed; false under jit and vmap."""
    t = _state.trace
    while t is not EVAL and t is not None:
        if not getattr(t, "keeps_values_concrete", False):
            return False
        t = t.parent
    return True


_on_trace_change = None   # set by the runtime: mirrors "eager or tracing" into jaxlib's C++ dispatch key


def set_trace_hook(fn):
    """fn(None) runs when eager execution becomes current, fn(True) when a trace does."""
    global _on_trace_change
    _on_trace_change = fn
    fn(None if _state.trace is EVAL else True)


class set_trace:
    """Context manager making `trace` current; restores the previous one on exit."""
    __slots__ = ("trace", "prev")

    def __init__(self, trace):
        self.trace = trace

    def __enter__(self):
        prev = self.prev = _state.trace
        try:
            _switch(self.trace)
            if _on_trace_change is not None:
                _on_trace_change(None if self.trace is EVAL else True)
        except BaseException:   # e.g. KeyboardInterrupt between the two: __exit__ will not run, so undo here
            _restore(prev)
            raise
        return self.trace

    def __exit__(self, *exc):
        _restore(self.prev)


def _restore(prev):
    """Make `prev` current again; the jaxlib mirror follows even if an interrupt lands in between."""
    try:
        _switch(prev)
    finally:
        if _on_trace_change is not None:
            _on_trace_change(None if prev is EVAL else True)


def is_tracer(x) -> bool:
    return isinstance(x, Tracer)


# -------------------------------------------------------------------------------- errors

class ConcretizationTypeError(TypeError):
    """A Python-level decision (bool/int/float/index) needs a value that is only abstract here.

    The message is built when printed, so raising and catching it stays cheap.

    Raised by bool(), int(), float(), an index or a shape given a traced value, e.g. a Python `if` on an
    argument under make_jaxpr or jit(..., guards=False) (a default jit called with concrete values
    guards it instead: transforms/jit_guards.py; vmap answers with the value every batch element shares,
    or raises BatchDisagreementError: transforms/batching.py). The message names the argument the value depends on and
    the line that asked.

    Parameters: tracer (Tracer): the abstract value. why (str): what asked for a concrete value.
    Returns: the exception.
    Raises: nothing.

    >>> def f(x):
    ...     return x if x > 0 else -x
    >>> try:
    ...     jit(f, guards=False)(xp.asarray(1.0))
    ... except ConcretizationTypeError as e:
    ...     print("argument 'x'" in str(e))
    True
    """

    def __init__(self, tracer, why):
        super().__init__()
        self.tracer = tracer
        self.why = why
        self._frame = sys._getframe(1)   # formatted lazily: which line outside this library asked

    def caller_line(self):
        """'file:line `source`' of the innermost frame outside this library (user or library code such
        as scikit-learn's validation) that asked for the value; None if there is none."""
        f = outside_frame(self._frame)
        if f is None:
            return None
        code = linecache.getline(f.f_code.co_filename, f.f_lineno).strip()
        return f"{f.f_code.co_filename}:{f.f_lineno}" + (f" `{code}`" if code else "")

    def _where(self):
        line = self.caller_line()
        return f" Asked for at {line}." if line else ""

    def __str__(self):
        t = self.tracer
        origin = t._trace.describe_origin(t) if hasattr(t._trace, "describe_origin") else None
        src = f" It depends on {origin}." if origin else ""
        return (f"{self.why} needs a concrete value, but this value is abstract: {t.aval.str_short()} "
                f"traced by {t._trace.kind_name()}.{src}{self._where()} "
                "A traced value has no Python value while the function is being transformed. "
                "Use xp.where(cond, a, b) or transforms.cond for data-dependent choices, or mark "
                "the argument static with jit(..., static_argnums=/static_argnames=) if its value "
                "decides the program's structure.")


class TracerArrayConversionError(ConcretizationTypeError):
    """A traced value was converted to a host value (NumPy, DLPack, float/complex, a NumPy ufunc).

    Handing over the primal would silently drop the derivative or the batch axis, so it raises.
    """

    def __str__(self):
        t = self.tracer
        trace = t._trace
        origin = None
        if hasattr(trace, "describe_origin"):
            origin = trace.describe_origin(t)
        lost = getattr(trace, "conversion_loses", "its traced value")
        src = f" It depends on {origin}." if origin else ""
        return (f"{self.why}: the value is traced by {trace.kind_name()} ({t.aval.str_short()}), and converting "
                f"it to a host value would lose {lost}.{src}{self._where()} Inside a transformed function use the namespace's "
                "functions instead of NumPy (xp.* , xp.special.* for scipy.special's functions, xp.linalg, "
                "xp.fft); wrap NumPy-only code in transforms.pure_callback (with transforms.custom_jvp for "
                "its derivative); or call the function outside the transform.")


_SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_OUR_DIRS = tuple(os.path.join(_SRC, p) + os.sep for p in ("transforms", "array_namespace", "xla"))


def outside_frame(f):
    """The innermost frame from `f` outwards that is not this library's (user or library code), or None."""
    while f is not None and os.path.abspath(f.f_code.co_filename).startswith(_OUR_DIRS):
        f = f.f_back
    return f


class UnexpectedTracerError(RuntimeError):
    """A tracer was used after its transform finished (it escaped, e.g. via a global).

    Parameters: message (str).
    Returns: the exception.
    Raises: nothing.

    >>> leaked = []
    >>> _ = jit(lambda a: leaked.append(a) or a)(xp.ones(2))
    >>> try:
    ...     leaked[0] + 1
    ... except UnexpectedTracerError as e:
    ...     print(str(e).startswith("a traced value"))
    True
    """


# ------------------------------------------------------------------ boxing into Arrays
# The public Array class lives in array_namespace; it registers how to box a raw value.

class _Boxing:
    box_type = None          # the Array class
    buffer_type = None       # the runtime's concrete device-array type (set by xla)
    box = staticmethod(lambda v: v)
    views = None             # array_namespace._views: which argument leaves share data (api_util.alias_pattern)


boxing = _Boxing()


def unbox(x):
    return x._v if type(x) is boxing.box_type else x
