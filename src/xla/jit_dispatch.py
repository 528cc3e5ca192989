"""jit's native fast path: jaxlib's C++ dispatcher (private protocol, so it lives here, in the backend).

The engine's `Jitted` (transforms/jit.py) traces, caches and runs in Python. This module hands it to
jaxlib's C++ `pjit` dispatcher: the dispatcher flattens the arguments in C++, and on a signature it has
seen runs the executable with no Python frame; on a miss it calls back into `Jitted`, and we describe
the finished call (`FastpathData`) so the next one stays in C++. A guarded function (transforms/jit_guards.py)
cannot return unchecked: its variant's program outputs the guard vector beside the result, and the output
tree's root is a `_Checked` node whose rebuild (xla/_dispatch_nodes.c `check`) reads the vector and looks it
up among the accepted ones, in C, before the result is handed back. A vector no variant accepts gives a
`GuardMiss` in the result's place; `jit(f)` is a thin C wrapper around the dispatcher (`Dispatcher`) that
sends such a call to `Jitted` (which goes on from that variant); the variant that then holds gets a
dispatcher of its own, which a later call failing with the same vector runs next. Without the optional C extension a guarded signature has no
fast path (every call runs in Python). Registered as the backend's `jit_fast_call` / `jit_public` hooks. The
dispatchers share one jaxlib LRU of signatures (process-wide; cap: transforms.caches 'jit_dispatch', default
4096); `Jitted` keeps its own LRU per function ('jit').
"""
from __future__ import annotations

import itertools

import numpy as np

from transforms.caches import on_resize
from transforms.api_util import box
from transforms.core import EVAL, boxing, get_aval, trace_state, tracing
from transforms.pytree import add_registration_hook, registered_nodes, tree_unflatten
from transforms.traceback_util import api_boundary

from . import _jaxlib, runtime
from .host import HostValue
from .lower_callbacks import has_callbacks

try:
    from . import _dispatch_nodes as _native
except ImportError:   # not built (an optional extension: see pyproject.toml)
    _native = None

_cpp_ready = False
_wrapper_tokens = itertools.count()
on_resize("jit_dispatch", _jaxlib.set_dispatch_cache_size)


def _register_cpp_nodes():
    """Mirror our pytree nodes into the C++ registry the dispatcher flattens with (once)."""
    _jaxlib.cpp_registry.register_node(boxing.box_type, *array_node())
    number = _number
    if _native is not None:   # the guard check and a number output read in place, in C (Python where it cannot)
        _native.configure_guards(GuardMiss, _vector_bytes, _number)
        number = _native.number
        _jaxlib.cpp_registry.register_node(_Checked, lambda c: ((c.result, c.vector), c.accepted), _native.check)
    _jaxlib.cpp_registry.register_node(_Number, lambda n: ((n.buf,), n.conv), number)
    for cls, (flat, unflat) in registered_nodes():
        _jaxlib.cpp_registry.register_node(cls, flat, unflat)
    add_registration_hook(lambda cls, flat, unflat: _jaxlib.cpp_registry.register_node(cls, flat, unflat))


def array_node(native=True):
    """(flatten, unflatten) of the Array node as the dispatcher calls them, once per Array argument and
    result of every jit call: the C versions (xla/_dispatch_nodes.c, ~0.15 us less per Array each way
    than a Python frame) where the extension was built, else Python's. Same results either way."""
    box_type = boxing.box_type
    if native and _native is not None:
        _native.configure(box_type, HostValue, EVAL, _arg_buffer)   # (_arg_buffer: its fallback)
        return _native.flatten, _native.unflatten
    new = object.__new__

    def unflatten(aux, kids):   # only reached on the eager fast path, so the owner is EVAL
        a = new(box_type)
        a._v = kids[0]
        a._trace = EVAL
        a._base = a._views = None   # (as the namespace's wrap makes it)
        return a
    return _arg_buffer, unflatten


def box_fn(box_type, wrap):
    """The namespace's box of a raw value (the backend's `box_fn` hook): its `wrap` in C (_dispatch_nodes.wrap,
    the same Array as an eager wrap makes, ~1,400 CPU instructions less a call), or `wrap` itself where the
    extension was not built. Inside a trace the C version calls `wrap`."""
    if not hasattr(_native, "wrap"):   # (not built, or built before wrap was)
        return wrap
    _native.configure(box_type, HostValue, EVAL, _arg_buffer)
    _native.configure_wrap(tracing, wrap)
    return _native.wrap


def _arg_buffer(a, default_device=runtime.default_device):
    """An Array argument as the executable takes it (C++ calls this per Array argument of every call):
    its value, or for a host-held one its cached device buffer (HostValue.buffer's hit, inlined)."""
    v = a._v
    if type(v) is HostValue:
        b = v._buf
        if b is None or b.is_deleted():
            b = v.buffer(default_device())   # makes it, or raises the donated-value error
        return (b,), None
    return (v,), None


def _dispatcher(jitted, miss=None):
    """The C++ dispatcher for `jitted` (calling `miss`, default _cache_miss, on a signature it has no executable
    for), or None where it cannot apply (then Python dispatches)."""
    global _cpp_ready
    if any(i < 0 for i in jitted.static_argnums):
        return None
    if not _cpp_ready:
        _register_cpp_nodes()
        _cpp_ready = True
    # A token owned by this wrapper, never reused: id() of a freed wrapper comes back, and the C++ cache
    # would then run the dead wrapper's executable (or donate where this wrapper does not).
    key = ("array_namespace.jit", next(_wrapper_tokens))
    return _jaxlib.cpp_dispatcher(jitted.__name__, _signature_carrier(jitted), miss or _cache_miss(jitted),
                                  sorted(jitted.static_argnums), list(jitted.static_argnames), key)


class _Number:
    """A Python number the function returns (`return float(...)`, returned.py), in the result a repeat call's
    C++ dispatcher rebuilds: the program's 0-d output, converted on every call (as Jitted._finish does)."""
    __slots__ = ("buf", "conv")

    def __init__(self, buf, conv):
        self.buf, self.conv = buf, conv


def _number(conv, kids):
    return conv(_jaxlib.to_numpy(kids[0]))


class GuardMiss:
    """What a guarded variant's check (in C) gives in place of the result when no variant accepts its guard
    vector (bytes); the Dispatcher (or fast_call) that made the call hands the call to the engine. (Not an
    exception: one raised through jaxlib's C++ dispatcher costs ~20 us.)"""
    __slots__ = ("vector",)

    def __init__(self, vector):
        self.vector = vector


class _Checked:
    """The result of a guarded variant's run, as the dispatcher repeats it: the result, the guard vector (a raw
    output, last) and the set of accepted vectors; rebuilding it checks the vector (_dispatch_nodes.check)."""
    __slots__ = ("result", "vector", "accepted")

    def __init__(self, result, vector, accepted):
        self.result, self.vector, self.accepted = result, vector, accepted


def _vector_bytes(vec):
    return np.asarray(_jaxlib.to_numpy(vec)).tobytes()


def _template(ent, outs):
    """The result of ent's run whose flattening the dispatcher repeats: Arrays, and _Number for its numbers."""
    vals = [box(o) for o in outs]
    for n, conv in ent.numbers:
        vals[n] = _Number(outs[n], conv)
    return tree_unflatten(ent.out_tree, vals)


def _cache_miss(jitted):
    @api_boundary   # a user error while tracing shows the user's frames (not the C++ call's per-call path)
    def miss(*args, **kwargs):
        """Called by the C++ dispatcher on a signature it has no executable for (or whose calls stay in
        Python)."""
        if trace_state.trace is not EVAL:
            return jitted.call_python(args, kwargs), None, True
        leaves = _leaves(jitted, args, kwargs)   # before running: donation deletes inputs
        result, ent, raw, outs = jitted.call_eager(args, kwargs)
        return _described(jitted, leaves, ent, raw, outs, result)
    return miss


def _described(jitted, leaves, ent, raw, outs, result):
    """What a miss returns for a call run in Python: (result, the call's FastpathData or None, whether to
    call back next time). Writes into arguments and donations stay on the Python path (write-back; naming
    the donating call), as do guarded variants with effects (their guards are checked before they run) and,
    without the C extension, every guarded one; ent None: the call ran eagerly."""
    if ent is None or ent.mutated or any(ent.donate):
        return result, None, True
    if ent.guard is None:
        fp = _fastpath(ent, raw, outs, _template(ent, outs) if ent.numbers else result, leaves)
    elif ent.check is None and _native is not None:
        fp = _fastpath(ent, raw, outs, _Checked(_template(ent, outs[:-1]), outs[-1], jitted.accepted), leaves)
    else:
        fp = None
    return result, fp, fp is None


_MAX_ROUTES = 64   # per jitted function: failed vectors remembered with the variant that held for them


def _guard_missed(jitted):
    """A call whose guard vector (in the GuardMiss) no variant accepts: the engine runs it, from that variant.
    The variant that held then gets a C++ dispatcher of its own (_variant_dispatcher), where a later call
    failing with the same vector goes first (a function alternating between branches: each call two programs
    in C++, no engine); where that variant's guards fail too, the engine goes on from it."""
    routes, dispatchers = {}, {}

    @api_boundary
    def fallback(args, kwargs, miss):
        route = routes.get(miss.vector)
        if route is not None:
            out = route(*args, **kwargs)
            if type(out) is not GuardMiss:
                return out
            miss = out
        result, ent = jitted.call_eager(args, kwargs, np.frombuffer(miss.vector, np.int64))[:2]
        if route is None and ent is not None and ent.guard is not None and ent.check is None \
                and not ent.mutated and len(routes) < _MAX_ROUTES:
            if ent.guard.tag not in dispatchers:
                dispatchers[ent.guard.tag] = _dispatcher(jitted, _variant_miss(jitted, ent))
            routes[miss.vector] = dispatchers[ent.guard.tag]
        return result
    return fallback


def _variant_miss(jitted, ent):
    def miss(*args, **kwargs):
        """A variant's own dispatcher's miss: run that variant (Jitted.call_variant) and describe the call, or
        where its guards fail, a GuardMiss in the result's place (the fallback then asks the engine)."""
        leaves = _leaves(jitted, args, kwargs)
        held, result, raw, outs = jitted.call_variant(ent, args, kwargs)
        if not held:
            return GuardMiss(_vector_bytes(outs[-1])), None, True
        fp = _fastpath(ent, raw, outs, _Checked(_template(ent, outs[:-1]), outs[-1], jitted.accepted), leaves)
        return result, fp, fp is None
    return miss


def _leaves(jitted, args, kwargs):
    dyn, dyn_kw = jitted.dynamic_args(args, kwargs)
    return _jaxlib.cpp_flatten((tuple(dyn), dyn_kw))[0]


def _signature_carrier(jitted):
    """What the C++ dispatcher's __signature__ property inspects: the function itself, or, where we
    know its signature, a forwarder carrying it -- so jit(jit(...)) never re-walks the chain per level
    (inspect would otherwise probe __signature__ at each level, each probing the rest: 2^depth)."""
    fun = jitted.fun
    if jitted.signature is None:
        return fun

    def forward(*args, **kwargs):
        return fun(*args, **kwargs)
    forward.__signature__ = jitted.signature
    forward.__name__ = forward.__qualname__ = jitted.__name__
    forward.__doc__ = getattr(fun, "__doc__", None)
    return forward


def _fastpath(ent, raw, outs, result, leaves):
    """Describe a finished call to the C++ dispatcher so it can repeat it without Python."""
    buf = boxing.buffer_type
    if ent.exe is None or len(leaves) != len(raw):
        return None
    if not hasattr(ent.exe, "exe"):
        return None   # no single executable (jit of pmaps alone runs their programs: pmap_runtime.PmapSequence)
    if has_callbacks(ent.closed):
        return None   # the Python path raises a failing callback's own exception (runtime.Compiled)
    if not all(type(c) is buf for c in ent.consts) or not all(type(o) is buf for o in outs):
        return None
    if any(_jaxlib.on_many_devices(r) for r in raw):
        return None   # an array over several devices is gathered on the Python path (C++ would take it as is)
    for leaf, r in zip(leaves, raw):
        if type(leaf) is buf:
            if leaf is not r:
                return None
        elif _jaxlib.jax_owns_states() or get_aval(leaf) != r.aval:
            return None   # host scalars: C++ converts them, which must agree with our avals
    out_leaves, out_def = _jaxlib.cpp_flatten(result)
    if len(out_leaves) != len(outs) or any(a is not b for a, b in zip(out_leaves, outs)):
        return None
    s = _jaxlib.sharding_for(runtime.default_device())
    n_in = len(ent.consts) + len(raw)
    return _jaxlib.FastpathData(
        xla_executable=ent.exe.exe, out_pytree_def=out_def, in_shardings=[s] * n_in,
        out_shardings=[s] * len(outs), out_avals=[o.aval for o in outs], out_committed=[True] * len(outs),
        kept_var_bitvec=[True] * n_in, in_device_local_layouts=[None] * n_in, const_args=list(ent.consts))


def fast_call(jitted):
    """A jit with static arguments: the dispatcher, with its error for a non-hashable static argument
    replaced by the engine's own check (which names the argument and raises TypeError)."""
    cpp = _dispatcher(jitted)
    if cpp is None:
        return None

    missed = _guard_missed(jitted)

    def call(*args, **kwargs):
        try:
            out = cpp(*args, **kwargs)
        except ValueError as e:
            if "Non-hashable static" not in str(e):
                raise
            return jitted.call_python(args, kwargs)
        return missed(args, kwargs, out) if type(out) is GuardMiss else out
    return call


def public(jitted):
    """What `jit(f)` returns without static arguments: the C++ dispatcher (no Python frame per call), in the
    C extension's thin Dispatcher that hands a failed guard check to the engine, carrying jit's attributes (lower, trace,
    trace_count)."""
    cpp = _dispatcher(jitted)
    if cpp is None:
        return None
    cpp.__name__ = jitted.__name__
    cpp.__wrapped__ = jitted.fun   # (the wrapper's attributes not its own are the dispatcher's)
    if _native is not None:
        cpp = _native.Dispatcher(cpp, _guard_missed(jitted))
        cpp.__qualname__ = getattr(jitted.fun, "__qualname__", jitted.__name__)
        cpp.__module__ = getattr(jitted.fun, "__module__", None)
        cpp.__doc__ = getattr(jitted.fun, "__doc__", None)
    cpp.lower, cpp.trace, cpp.trace_count, cpp._jitted = jitted.lower, jitted.trace, 0, jitted
    cpp.compiled = jitted.compiled
    return cpp


def pmap_public(pmapped):
    """What `pmap(f)` returns without static or donated arguments: the C++ dispatcher over pmapped's
    replica program (as JAX's pmap is a C++-dispatched jit). A repeat call of a signature (avals and, for
    each argument, where it lies) whose first call took its operands as they were (pmap_runtime.fastpath)
    runs with no Python frame, or for a program that must wait before it runs (collectives) in the C
    extension's Dispatcher (pmap_runtime.native_repeats; else pmap_runtime.repeat, from the miss); everything
    else -- host data, transforms -- is pmapped's."""
    global _cpp_ready
    if not _cpp_ready:
        _register_cpp_nodes()
        _cpp_ready = True
    from .pmap_runtime import fastpath, native_repeats, repeat
    token = ("array_namespace.pmap", next(_wrapper_tokens))

    @api_boundary
    def miss(*args, **kwargs):
        if trace_state.trace is not EVAL:
            return pmapped(*args, **kwargs), None, True
        out = repeat(token, args, kwargs)
        if out is not None:
            return out[0], None, True
        result, ran = pmapped.call(args, kwargs)   # (ran: None where the call donated: its inputs are gone)
        fp = None if ran is None else fastpath(token, *ran, (args, kwargs), result)
        return result, fp, fp is None
    cpp = _jaxlib.cpp_dispatcher(pmapped.__name__, pmapped.__wrapped__, miss, [], [], token)
    cpp.__name__ = pmapped.__name__
    cpp.__wrapped__ = pmapped.__wrapped__
    if not native_repeats:
        return cpp
    # (its plain repeats of a program whose replicas communicate run in C; a GuardMiss never comes from a pmap)
    out = _native.Dispatcher(cpp, lambda args, kwargs, _: pmapped(*args, **kwargs), token)
    out.__qualname__ = getattr(pmapped.__wrapped__, "__qualname__", pmapped.__name__)
    out.__module__ = getattr(pmapped.__wrapped__, "__module__", None)
    out.__doc__ = getattr(pmapped.__wrapped__, "__doc__", None)
    return out
