"""jit: stage a function once per input signature, compile it, and call the executable.

`jit_p` is the call primitive a staged jitted function becomes inside other traces; its
rules follow one pattern: run the transform over `eval_jaxpr` of the inner jaxpr, stage
the result into a new jaxpr, and bind `jit_p` again, so jvp, vmap, partial evaluation and
transposition of a jitted function stay compiled as one unit.
"""
from __future__ import annotations

import functools
import inspect
import itertools

from .api_util import Store, alias_pattern, box, flatten_fun, to_raw, write_back
from .core import (EVAL, Primitive, Tracer, _state, abstract_eval_rules, bind, boxing, current_trace,
                   get_aval, set_trace)
from .jaxpr import ClosedJaxpr, eval_jaxpr
from .pytree import tree_flatten, tree_unflatten
from .rules import UndefPrimal, Zero, batch_rules, is_undefined, jvp_rules, partial_eval_rules, transpose_rules
from .staging import StagingTrace, StagingTracer, convert_constvars, dce_jaxpr

from .jaxpr_transforms import call_jaxpr, jit_p, stage  # noqa: F401  (re-exported: the staged call)


# ----------------------------------------------------------------------------- jit API

class _Entry:
    __slots__ = ("closed", "consts", "out_tree", "exe", "donate", "mutated")

    def __init__(self, closed, consts, out_tree, donate, mutated=()):
        self.closed, self.consts, self.out_tree, self.exe, self.donate = closed, consts, out_tree, None, donate
        self.mutated = mutated   # argument leaves the function writes into; their final values follow the outputs


class Lowered:
    def __init__(self, closed, donate, name):
        self.closed, self.donate, self.name = closed, donate, name

    def as_text(self):
        from xla import lowering
        return str(lowering.lower_jaxpr(self.closed, self.name, self.donate))

    def compile(self):
        from xla import runtime
        return runtime.compile_jaxpr(self.closed, self.donate, self.name)


class Jitted:
    """The callable `jit(f)` returns; caches one trace and executable per signature."""

    def __init__(self, fun, static_argnums=(), static_argnames=(), donate_argnums=()):
        if not callable(fun):
            raise TypeError(f"jit expects a callable, got {type(fun).__name__}")
        self.fun = fun
        self.__name__ = getattr(fun, "__name__", "fun")
        self.__wrapped__ = fun
        as_tuple = lambda v: (v,) if isinstance(v, (int, str)) else tuple(v)
        self.static_argnums = as_tuple(static_argnums)
        self.static_argnames = as_tuple(static_argnames)
        self.donate_argnums = as_tuple(donate_argnums)
        inner = getattr(fun, "_jitted", None)
        if isinstance(inner, Jitted):
            self._sig = inner._sig    # jit(jit(f)): reuse, never re-walk the chain (constant time per level)
        else:
            try:
                self._sig = inspect.signature(fun)
            except (TypeError, ValueError):
                self._sig = None
        if self._sig is not None and self.static_argnames:
            params = list(self._sig.parameters)
            self.static_argnums = tuple(sorted(set(self.static_argnums) | {
                params.index(n) for n in self.static_argnames if n in params}))
        self._simple = not (self.static_argnums or self.static_argnames or self.donate_argnums)
        self._cache = {}
        self._cpp = None
        self._public = None   # the C++ dispatcher handed to the user, when jit returned that
        self.trace_count = 0

    def _arg_names(self, nargs):
        if self._sig is None:
            return [f"args[{i}]" for i in range(nargs)]
        names = []
        for i, p in enumerate(self._sig.parameters.values()):
            if p.kind == p.VAR_POSITIONAL:
                names += [f"{p.name}[{j}]" for j in range(nargs - i)]
                break
            names.append(p.name)
        return names + [f"args[{j}]" for j in range(len(names), nargs)]

    def _split(self, args, kwargs):
        nargs = len(args)
        statics, dyn, dyn_idx = [], [], []
        for i, a in enumerate(args):
            if i in self.static_argnums or (i - nargs) in self.static_argnums:
                try:
                    hash(a)
                except TypeError:
                    raise TypeError(f"jit({self.__name__}): static argument {i} of type {type(a).__name__} is "
                                    "not hashable; static arguments key the compile cache, so pass a hashable "
                                    "value (e.g. a tuple instead of a list)") from None
                statics.append((i, a))
            else:
                dyn.append(a)
                dyn_idx.append(i)
        kw_static, kw_dyn = [], {}
        for k, v in sorted(kwargs.items()):
            if k in self.static_argnames:
                try:
                    hash(v)
                except TypeError:
                    raise TypeError(f"jit({self.__name__}): static argument '{k}' of type {type(v).__name__} "
                                    "is not hashable") from None
                kw_static.append((k, v))
            else:
                kw_dyn[k] = v
        return tuple(statics), tuple(kw_static), dyn, dyn_idx, kw_dyn

    def _entry(self, args, kwargs):
        statics, kw_static, dyn, dyn_idx, kw_dyn = self._split(args, kwargs)
        leaves, tree = tree_flatten((tuple(dyn), kw_dyn))
        raw = [to_raw(x, f"jit({self.__name__}) argument") for x in leaves]
        avals = tuple(get_aval(r) for r in raw)
        aliases = alias_pattern(leaves)
        if aliases == tuple(range(len(leaves))):
            aliases = None   # the common case: no handle passed twice
        key = (tree, avals, statics, kw_static, aliases)
        ent = self._cache.get(key)
        if ent is None:
            ent = self._trace(tree, avals, statics, kw_static, dyn_idx, len(args), aliases)
            if not any(isinstance(c, Tracer) for c in ent.consts):
                self._cache[key] = ent
        return ent, raw, leaves

    def _trace(self, tree, avals, statics, kw_static, dyn_idx, nargs, aliases=None):
        self.trace_count += 1
        if self._public is not None:
            self._public.trace_count = self.trace_count
        fun, static_map, kw_static_d = self.fun, dict(statics), dict(kw_static)

        def f(*dyn_args, **kw):
            it = iter(dyn_args)
            full = [static_map[i] if i in static_map else next(it) for i in range(nargs)]
            return fun(*full, **kw, **kw_static_d)

        store = Store()
        flat = flatten_fun(lambda dyn, kw: f(*dyn, **kw), tree, store, f"jit({self.__name__}) output",
                           aliases=aliases, writeback=True)
        names = self._leaf_names(tree, dyn_idx, nargs)
        closed = stage(flat, list(avals), names)
        jaxpr, consts = convert_constvars(closed)
        donate = self._donate_mask(tree, dyn_idx, len(consts))
        return _Entry(ClosedJaxpr(jaxpr, []), consts, store.val, donate, store.mutated)

    def _leaf_names(self, tree, dyn_idx, nargs):
        base = self._arg_names(nargs)
        (pos_tree, kw_tree) = tree.children
        names = []
        for i, sub in zip(dyn_idx, pos_tree.children):
            nm = base[i] if i < len(base) else f"args[{i}]"
            names += [nm] if sub.num_leaves == 1 and sub.kind is None else [
                f"{nm}[{j}]" for j in range(sub.num_leaves)]
        for k, sub in zip(kw_tree.aux or (), kw_tree.children):
            names += [k] * sub.num_leaves
        return names

    def _donate_mask(self, tree, dyn_idx, n_consts):
        mask = [False] * n_consts
        pos_tree, kw_tree = tree.children
        for i, sub in zip(dyn_idx, pos_tree.children):
            mask += [i in self.donate_argnums] * sub.num_leaves
        mask += [False] * kw_tree.num_leaves
        return tuple(mask)

    def _run(self, ent, raw):
        if _state.trace is EVAL:   # host-held eager values enter XLA as (cached) device buffers
            self._mark_donors(ent, raw)
            raw, ent.consts = _buffers(raw), _buffers(ent.consts)
        if _state.trace is EVAL and all(type(r) is boxing.buffer_type for r in raw):
            if ent.exe is None:
                from xla import runtime
                ent.exe = runtime.compile_jaxpr(ent.closed, ent.donate, self.__name__)
            outs = ent.exe(list(ent.consts) + raw)
        else:
            outs = bind(jit_p, *ent.consts, *raw, name=self.__name__, jaxpr=ent.closed)
        return outs

    def __call__(self, *args, **kwargs):
        if _state.trace is EVAL:
            cpp = self._cpp
            if cpp is None:
                cpp = self._cpp = _cpp_dispatcher(self)
            if cpp is not False:
                try:
                    return cpp(*args, **kwargs)
                except ValueError as e:
                    if "Non-hashable static" not in str(e):
                        raise
                    # fall through: our own check names the argument and raises TypeError
        return self._call_py(args, kwargs)

    def _call_py(self, args, kwargs):
        ent, raw, leaves = self._entry(args, kwargs)
        return self._finish(ent, leaves, self._run(ent, raw))

    def _finish(self, ent, leaves, outs):
        """Box the outputs; rebind the caller's handles the function wrote into (as eagerly)."""
        if ent.mutated:
            n = len(outs) - len(ent.mutated)
            outs, finals = outs[:n], outs[n:]
            write_back(leaves, ent.mutated, finals, f"jit({self.__name__})")
        return tree_unflatten(ent.out_tree, [box(o) for o in outs])

    def _mark_donors(self, ent, raw):
        """Host-held values this call donates remember its name, for the error if one is used again."""
        if any(ent.donate):
            for r, d in zip(raw, ent.donate[len(ent.consts):]):
                if d and hasattr(r, "donor"):
                    r.donor = self.__name__

    def _cache_miss(self, *args, **kwargs):
        """Called by the C++ dispatcher on a signature it has no executable for."""
        from xla import _jaxlib
        if _state.trace is not EVAL:
            return self._call_py(args, kwargs), None, True
        dyn = [a for i, a in enumerate(args) if i not in self.static_argnums]
        dyn_kw = {k: v for k, v in kwargs.items() if k not in self.static_argnames}
        leaves = _jaxlib.cpp_flatten((tuple(dyn), dyn_kw))[0]   # before running: donation deletes inputs
        ent, raw, arg_leaves = self._entry(args, kwargs)
        self._mark_donors(ent, raw)
        raw = _buffers(raw)
        outs = self._run(ent, raw)
        result = self._finish(ent, arg_leaves, outs)
        # writes into arguments and donations stay on this path (write-back; naming the donating call)
        fp = None if ent.mutated or any(ent.donate) else _fastpath(ent, raw, outs, result, leaves)
        return result, fp, fp is None

    def lower(self, *args, **kwargs):
        ent = self._entry(args, kwargs)[0]
        return Lowered(ent.closed, ent.donate, self.__name__)

    def trace(self, *args, **kwargs):
        return self._entry(args, kwargs)[0].closed


def _register_cpp_nodes():
    """Mirror our pytree nodes into the C++ registry the dispatcher flattens with (once)."""
    from xla import _jaxlib
    from .pytree import _registry, add_registration_hook
    box_type = boxing.box_type
    new = object.__new__

    def unflatten(aux, kids):   # only reached on the eager fast path, so the owner is EVAL
        a = new(box_type)
        a._v = kids[0]
        a._trace = EVAL
        return a
    as_buffer, buf = boxing.as_buffer, boxing.buffer_type
    _jaxlib.cpp_registry.register_node(
        box_type, lambda a: ((a._v if type(a._v) is buf else as_buffer(a._v),), None), unflatten)
    for cls, (flat, unflat) in list(_registry.items()):
        _jaxlib.cpp_registry.register_node(cls, flat, unflat)
    add_registration_hook(lambda cls, flat, unflat: _jaxlib.cpp_registry.register_node(cls, flat, unflat))


def _cpp_dispatcher(jitted):
    """The C++ fast path for `jitted`, or False where it cannot apply (then Python dispatches)."""
    from xla import _jaxlib
    global _cpp_ready
    if any(i < 0 for i in jitted.static_argnums):
        return False
    if not _cpp_ready:
        _register_cpp_nodes()
        _cpp_ready = True
    # A token owned by this wrapper, never reused: id() of a freed wrapper comes back, and the C++ cache
    # would then run the dead wrapper's executable (or donate where this wrapper does not).
    key = ("array_namespace.jit", next(_wrapper_tokens))
    return _jaxlib.cpp_dispatcher(jitted.__name__, _signature_carrier(jitted), jitted._cache_miss,
                                  sorted(jitted.static_argnums), list(jitted.static_argnames), key)


def _signature_carrier(jitted):
    """What the C++ dispatcher's __signature__ property inspects: the function itself, or, where we
    know its signature, a forwarder carrying it -- so jit(jit(...)) never re-walks the chain per level
    (inspect would otherwise probe __signature__ at each level, each probing the rest: 2^depth)."""
    fun = jitted.fun
    if jitted._sig is None:
        return fun

    def forward(*args, **kwargs):
        return fun(*args, **kwargs)
    forward.__signature__ = jitted._sig
    forward.__name__ = forward.__qualname__ = jitted.__name__
    forward.__doc__ = getattr(fun, "__doc__", None)
    return forward


_cpp_ready = False
_wrapper_tokens = itertools.count()


def _buffers(vals):
    """Eager values as XLA takes them (the runtime's `as_buffer`: host-held values -> device buffers)."""
    buf = boxing.buffer_type
    if all(type(v) is buf for v in vals):
        return vals
    conv = boxing.as_buffer
    return type(vals)(v if type(v) is buf else conv(v) for v in vals)


def _fastpath(ent, raw, outs, result, leaves):
    """Describe a finished call to the C++ dispatcher so it can repeat it without Python."""
    from xla import _jaxlib, runtime
    buf = boxing.buffer_type
    if ent.exe is None or len(leaves) != len(raw):
        return None
    if not all(type(c) is buf for c in ent.consts) or not all(type(o) is buf for o in outs):
        return None
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


def jit(fun=None, *, static_argnums=(), static_argnames=(), donate_argnums=()):
    """Compile `fun` with XLA; usable as @jit or @jit(static_argnums=...).

    Without static arguments the result is jaxlib's C++ dispatcher itself (no Python frame per
    call); with them, a Python wrapper that validates them first and then uses the dispatcher.
    """
    if fun is None:
        return lambda f: jit(f, static_argnums=static_argnums, static_argnames=static_argnames,
                             donate_argnums=donate_argnums)
    jitted = Jitted(fun, static_argnums, static_argnames, donate_argnums)
    if jitted.static_argnums or jitted.static_argnames:
        return jitted
    cpp = _cpp_dispatcher(jitted)
    if cpp is False:
        return jitted
    jitted._cpp = cpp
    jitted._public = cpp
    cpp.__name__ = jitted.__name__
    cpp.__wrapped__ = fun
    cpp.lower, cpp.trace, cpp.trace_count, cpp._jitted = jitted.lower, jitted.trace, 0, jitted

    return cpp


def make_jaxpr(fun, static_argnums=()):
    """make_jaxpr(f)(*args) -> the ClosedJaxpr f stages to (prints in JAX's text format)."""
    static = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)

    def mk(*args, **kwargs):
        dyn = [a for i, a in enumerate(args) if i not in static]
        leaves, tree = tree_flatten((tuple(dyn), kwargs))
        raw = [to_raw(x, "make_jaxpr argument") for x in leaves]

        def f(d, kw):
            it = iter(d)
            full = [a if i in static else next(it) for i, a in enumerate(args)]
            return fun(*full, **kw)
        store = Store()
        trace = StagingTrace(current_trace(), stage_all=True)
        tracers = [trace.new_arg(get_aval(r).strip_weak() if not get_aval(r).weak_type else get_aval(r))
                   for r in raw]
        with set_trace(trace):
            outs = flatten_fun(f, tree, store)(*tracers)
        return trace.to_jaxpr(outs)
    return mk

