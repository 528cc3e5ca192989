"""jit: stage a function once per input signature, compile it, and call the executable.

The engine's half of jit: signature splitting (static, donated, dynamic arguments), the trace cache,
write-back of argument mutations, and binding `jit_p` (jaxpr_transforms.py) under other traces. The
backend compiles (`backend.compile_jaxpr`) and may supply a native dispatcher for repeat calls
(`backend.jit_public` / `jit_fast_call`; XLA's is jaxlib's C++ dispatcher, in xla/jit_dispatch.py).
"""
from __future__ import annotations

import inspect
import warnings

import numpy as np

from . import returned
from .api_util import Store, alias_pattern, arg_aval, box, flatten_fun, run_flat, to_raw, write_back
from .backend import backend
from .caches import LRUCache
from .core import EVAL, ConcretizationTypeError, Tracer, bind, boxing, current_trace, get_aval, set_trace, trace_state
from .jaxpr import ClosedJaxpr
from .jaxpr_transforms import jit_p, stage
from .jit_guards import guard_program, guards_default, max_variants_default, next_variant, stage_guarded
from .pytree import tree_flatten, tree_unflatten
from .shard_map import mesh_of_jaxpr
from .sharding import NamedSharding, P, flat_shardings
from .staging import StagingTrace, convert_constvars
from .traceback_util import api_boundary, filter_exception, filtering_enabled


# ----------------------------------------------------------------------------- jit API

class _Entry:
    __slots__ = ("closed", "consts", "out_tree", "exe", "donate", "mutated", "shardings", "guard", "fresh",
                 "check", "numbers", "eager")

    def __init__(self, closed, consts, out_tree, donate, mutated=(), guard=None, numbers=(), eager=False):
        self.guard = guard   # jit_guards.Guard: what this variant assumed (its last output checks it), or None
        self.numbers = numbers   # (output leaf, float): float() results returned as Python floats (jit_guards)
        self.eager = eager   # no program: the trace converted a traced value to the host (the call runs eagerly)
        self.fresh = True    # not yet run: its first run is for the call it was traced with
        self.check = None    # a guarded program with effects: its guards' own program (run first)
        self.shardings = None   # (per flat input, per flat output) NamedSharding or None: a sharded jit
        self.closed, self.consts, self.out_tree, self.exe, self.donate = closed, consts, out_tree, None, donate
        self.mutated = mutated   # argument leaves the function writes into; their final values follow the outputs


class Lowered:
    def __init__(self, closed, donate, name, shardings=None):
        self.closed, self.donate, self.name, self.shardings = closed, donate, name, shardings

    def as_text(self):
        return backend.lower_text(self.closed, self.name, self.donate)

    def compile(self):
        """The executable (a sharded jit's: the SPMD program over its mesh); .as_text() is XLA's optimized HLO."""
        if self.shardings is not None:
            return backend.compile_sharded(self.closed, self.donate, self.name, *self.shardings)
        return backend.compile_jaxpr(self.closed, self.donate, self.name)


class Jitted:
    """The callable `jit(f)` returns; caches one trace and executable per signature."""

    def __init__(self, fun, static_argnums=(), static_argnames=(), donate_argnums=(), in_shardings=None,
                 out_shardings=None, guards=None, max_variants=None):
        if not callable(fun):
            raise TypeError(f"jit expects a callable, got {type(fun).__name__}")
        self.fun = fun
        self.guards = guards_default() if guards is None else bool(guards)
        self.max_variants = max_variants_default() if max_variants is None else int(max_variants)
        self.__name__ = getattr(fun, "__name__", "fun")
        self.__wrapped__ = fun
        as_tuple = lambda v: (v,) if isinstance(v, str) or hasattr(v, "__index__") else tuple(v)
        self.static_argnums = as_tuple(static_argnums)
        self.static_argnames = as_tuple(static_argnames)
        self.donate_argnums = as_tuple(donate_argnums)
        inner = getattr(fun, "_jitted", None)
        if isinstance(inner, Jitted):
            self.signature = inner.signature    # jit(jit(f)): reuse, never re-walk the chain (constant time per level)
        else:
            try:
                self.signature = inspect.signature(fun)
            except (TypeError, ValueError):
                self.signature = None
        self._check_argnums()
        if self.signature is not None and self.static_argnames:
            params = list(self.signature.parameters)
            self.static_argnums = tuple(sorted(set(self.static_argnums) | {
                params.index(n) for n in self.static_argnames if n in params}))
        self._cache = LRUCache(kind="jit")   # signature -> [_Entry] (trace + executable; one per guarded variant)
        self.accepted = set()   # the guard vectors (bytes) its guarded variants accept, each ending with its tag
        self._fast = None     # the backend's native dispatcher for this wrapper (False: none)
        self._public = None   # the C++ dispatcher handed to the user, when jit returned that
        self.trace_count = 0
        self.in_shardings, self.out_shardings = in_shardings, out_shardings
        self._sharded = in_shardings is not None or out_shardings is not None
        if self._sharded:
            self._fast = False   # an SPMD program over a mesh (backend.compile_sharded), dispatched in Python

    def _check_argnums(self):
        """static_argnums/donate_argnums must be ints naming positions fun has (as JAX checks at jit time)."""
        params = self.signature.parameters.values() if self.signature is not None else ()
        var = any(p.kind == p.VAR_POSITIONAL for p in params)
        n = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)
        for what, nums in (("static_argnums", self.static_argnums), ("donate_argnums", self.donate_argnums)):
            for i in nums:
                if isinstance(i, bool) or not hasattr(i, "__index__"):
                    raise TypeError(f"jit({self.__name__}): {what} must be ints, got {i!r} in {nums}")
                if self.signature is not None and not var and not -n <= i < n:
                    raise ValueError(f"jit({self.__name__}): {what}={nums} names position {i}, but "
                                     f"{self.__name__} takes {n} positional argument{'' if n == 1 else 's'}")

    def _arg_names(self, nargs):
        if self.signature is None:
            return [f"args[{i}]" for i in range(nargs)]
        names = []
        for i, p in enumerate(self.signature.parameters.values()):
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

    def _entry(self, args, kwargs, concrete=False):
        """(the variants for this signature, raw argument values, argument leaves, what _trace needs).
        With `concrete` (a call at EVAL), the first trace knows this call's values and may guard them;
        without, a signature whose trace has guards is traced again abstractly (not cached)."""
        statics, kw_static, dyn, dyn_idx, kw_dyn = self._split(args, kwargs)
        leaves, tree = tree_flatten((tuple(dyn), kw_dyn))
        raw = [to_raw(x, f"jit({self.__name__}) argument") for x in leaves]
        avals = tuple(get_aval(r) for r in raw)
        aliases = alias_pattern(leaves)
        if aliases == tuple(range(len(leaves))):
            aliases = None   # the common case: no handle passed twice
        key = (tree, avals, statics, kw_static, aliases)
        parts = (tree, avals, statics, kw_static, dyn_idx, len(args), aliases)
        ents = self._cache.get(key)
        if ents is None or (not concrete and (ents[0].guard is not None or ents[0].eager or ents[0].numbers)):
            shadow = concrete and self.guards and not any(isinstance(r, Tracer) for r in raw)
            ent = self._trace(*parts, invals=raw if shadow else None)
            if not concrete and ents is not None:
                return [ent], raw, leaves, parts
            ents = _Variants([ent])
            if not any(isinstance(c, Tracer) for c in ent.consts) and (self.guards or not ent.numbers):
                self._cache.put(key, ents)   # (a strict jit's trace under vmap/grad returning a float: not at EVAL)
        return ents, raw, leaves, parts

    def _trace(self, tree, avals, statics, kw_static, dyn_idx, nargs, aliases=None, invals=None):
        self.trace_count += 1
        if self._public is not None:
            self._public.trace_count = self.trace_count
        fun, static_map, kw_static_d = self.fun, dict(statics), dict(kw_static)

        def f(*dyn_args, **kw):
            it = iter(dyn_args)
            full = [static_map[i] if i in static_map else next(it) for i in range(nargs)]
            return fun(*full, **kw, **kw_static_d)

        store = Store()
        names = self._leaf_names(tree, dyn_idx, nargs)
        if invals is None:   # (a float() returned under vmap/AD is an output too: returned.py)
            run = lambda flat: (stage(flat, list(avals), names), None, None)
        else:   # with this call's values: value-dependent Python specialises and is guarded
            run = lambda flat: stage_guarded(flat, list(avals), names, invals, self.accepted)
        closed, guard, numbers = run_flat(run, lambda dyn, kw: f(*dyn, **kw), tree, store, aliases,
                                          f"jit({self.__name__}) output")
        if numbers is None:
            numbers = tuple((n, t) for n, t, _ in store.numbers)
        if closed is None:   # the trace converted a traced value to the host: this call runs eagerly
            return _Entry(None, (), None, (), eager=True)
        jaxpr, consts = convert_constvars(closed)
        consts = [backend.device_put(c) if isinstance(c, (np.ndarray, np.generic)) else c for c in consts]
        donate = self._donate_mask(tree, dyn_idx, len(consts))
        if guard is not None:
            donate = (False,) * len(donate)   # a variant whose guards fail runs another: its inputs must live
        ent = _Entry(ClosedJaxpr(jaxpr, []), consts, store.val, donate, store.mutated, guard, numbers)
        if guard is not None:
            ent.check = guard_program(jaxpr)
        if self._sharded:
            ent.shardings = flat_shardings(self.in_shardings, self.out_shardings, tree, len(consts), store.val,
                                           len(store.mutated) + (guard is not None), self.__name__)
            if guard is not None:   # the guard vector replicated: every process reads it back whole
                mesh = next(s for s in ent.shardings[0] + ent.shardings[1] if s is not None).mesh
                ent.shardings = (ent.shardings[0], ent.shardings[1][:-1] + (NamedSharding(mesh, P()),))
        elif (mesh := mesh_of_jaxpr(ent.closed)) is not None:   # shard_maps over several devices: SPMD there
            ent.shardings = ((NamedSharding(mesh, P()),) * len(ent.closed.in_avals),
                             (None,) * len(ent.closed.out_avals))
        return ent

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

    def _exe(self, ent):
        """ent's executable, compiled on first use (a sharded entry's: the SPMD program over its mesh)."""
        if ent.exe is None:
            ent.exe = backend.compile_jaxpr(ent.closed, ent.donate, self.__name__) if ent.shardings is None \
                else backend.compile_sharded(ent.closed, ent.donate, self.__name__, *ent.shardings)
        return ent.exe

    def _run(self, ent, raw):
        if trace_state.trace is EVAL:   # host-held eager values enter XLA as (cached) device buffers
            self._mark_donors(ent, raw)
            raw, ent.consts = _buffers(raw), _buffers(ent.consts)
        if trace_state.trace is EVAL and all(type(r) is boxing.buffer_type for r in raw):
            outs = self._exe(ent)(list(ent.consts) + raw)
        else:
            outs = bind(jit_p, *ent.consts, *raw, name=self.__name__, jaxpr=ent.closed)
        return outs

    def __call__(self, *args, **kwargs):
        # api_boundary's work done inline (this is the static-argument jit's hot path: one frame fewer);
        # under a trace the native dispatcher stages the call through its miss callback
        try:
            fast = self._fast
            if fast is None:
                fast = self._fast = backend.jit_fast_call(self) or False
            if fast is not False:
                return fast(*args, **kwargs)
            return self.call_python(args, kwargs)
        except Exception as e:
            if filtering_enabled():
                filter_exception(e)
            raise

    @api_boundary
    def call_python(self, args, kwargs):
        """Trace (once per signature) and run, dispatching in Python; under a trace, bind jit_p."""
        if trace_state.trace is EVAL:
            return self._call_concrete(args, kwargs)[0]
        try:
            ents, raw, leaves, _ = self._entry(args, kwargs)
        except ConcretizationTypeError:
            if not self.guards:
                raise
            # value-dependent Python inside a jit under another transform: jit(f) means f, so f runs
            # inline there (under a jit that knows its values, its conversions become that jit's guards;
            # a float() it returns untouched is the traced value, as the trace would give: returned.py)
            return returned.call(self.fun, args, kwargs)
        return self._finish(ents[0], leaves, self._run(ents[0], raw))

    def dynamic_args(self, args, kwargs):
        """The non-static positional and keyword arguments (what a native dispatcher flattens)."""
        return ([a for i, a in enumerate(args) if i not in self.static_argnums],
                {k: v for k, v in kwargs.items() if k not in self.static_argnames})

    def call_eager(self, args, kwargs, failed=None):
        """Run eagerly for a native dispatcher's cache miss: (result, the entry that ran, device buffers in, its
        raw outputs -- a guarded entry's end with its guard vector), what the dispatcher needs to repeat the call
        without Python (entry None: the function ran eagerly). `failed`: the guard vector a variant's program
        computed for this call, in the dispatcher, that no variant accepts (that variant is not run again)."""
        return self._call_concrete(args, kwargs, failed)

    def call_variant(self, ent, args, kwargs):
        """Run guarded variant `ent` (one that ran: compiled, no effects, no writes) on a call of its signature,
        for a native dispatcher that repeats it: (whether its guards hold, the result where they do, device
        buffers in, its outputs -- the guard vector last)."""
        _, _, dyn, _, kw_dyn = self._split(args, kwargs)
        leaves = tree_flatten((tuple(dyn), kw_dyn))[0]
        raw = _buffers([to_raw(x, f"jit({self.__name__}) argument") for x in leaves])
        outs = ent.exe(list(ent.consts) + raw)
        if not ent.guard.holds(np.asarray(backend.to_numpy(outs[-1]))):
            return False, None, raw, outs
        return True, self._finish(ent, leaves, outs[:-1]), raw, outs

    def _call_concrete(self, args, kwargs, failed=None):
        ents, raw, arg_leaves, parts = self._entry(args, kwargs, concrete=True)
        ent = ents[0]
        if ent.eager:   # the signature's first trace converted a value to the host: every call runs eagerly
            return self._eagerly(args, kwargs), None, None, None
        self._mark_donors(ent, raw)
        raw = _buffers(raw)
        if ent.guard is None:
            outs = self._run(ent, raw)
            return self._finish(ent, arg_leaves, outs), ent, raw, outs
        got = self._run_guarded(ents, parts, raw, failed)
        if got is None:   # a host conversion, past the variant cap, or the program disagrees with eager
            return self._eagerly(args, kwargs, ent.numbers), None, raw, None
        ent, outs = got
        return self._finish(ent, arg_leaves, outs[:-1]), ent, raw, outs

    def _eagerly(self, args, kwargs, numbers=()):
        """The function run eagerly on its arguments as its trace sees them: NumPy arrays and Python scalars as
        Arrays (so a library picks this namespace, as under the trace), the caller's Array handles themselves
        (its writes reach them), static arguments as given."""
        _, _, dyn, dyn_idx, kw_dyn = self._split(args, kwargs)
        leaves, tree = tree_flatten((tuple(dyn), kw_dyn))
        bt = boxing.box_type
        if any(type(x) is not bt for x in leaves):
            dyn, kw_dyn = tree_unflatten(tree, [x if type(x) is bt else box(to_raw(x, f"jit({self.__name__}) argument"))
                                                for x in leaves])
            args = list(args)
            for i, v in zip(dyn_idx, dyn):
                args[i] = v
            kwargs = {**kwargs, **kw_dyn}
        return _as_arrays(self.fun(*args, **kwargs), self.__name__, numbers)

    def _run_guarded(self, ents, parts, raw, failed=None):
        """Run the variant whose guards hold for this call: (entry, its outputs, the guard vector last), or None
        where the result must come from running the function eagerly: past the cap, or where this call (or,
        once one has, any call no variant accepts) converts a traced value to the host. `failed`: a guard vector
        a variant already computed for this call (the native dispatcher's run), which no variant accepts."""
        ent, tried = ents[0], []
        ran = failed is not None and next((e for e in ents if e.guard.tag == failed[-1]), None)
        if ran:   # go on from the variant that ran, as after running it here
            tried.append(ran)
            ent = next_variant(ents, ran, failed, tried)
        while ent is not None:
            if ent.check is not None and not ent.fresh:   # effects: run only where the guards hold
                if type(ent.check) is ClosedJaxpr:
                    ent.check = backend.compile_jaxpr(ent.check, (False,) * len(ent.donate), self.__name__)
                got = np.asarray(backend.to_numpy(ent.check(list(_buffers(ent.consts)) + raw)[0]))
                if not ent.guard.holds(got):
                    tried.append(ent)
                    ent = next_variant(ents, ent, got, tried)
                    continue
            outs = ent.exe(list(ent.consts) + raw) if ent.exe is not None else self._run(ent, raw)
            got = np.asarray(backend.to_numpy(outs[-1]))
            if ent.guard.holds(got) or ent.fresh:
                if ent.fresh and not ent.guard.holds(got):
                    # traced with this call's values: the program computes a guarded float otherwise rounded
                    # than eager did, but followed eager's decisions, so its values mean these assumptions
                    ent.guard.accept(got)
                ent.fresh = False
                return ent, outs
            tried.append(ent)
            ent = next_variant(ents, ent, got, tried)
        if ents.eager:   # (its path is likely the one that converted; eager is right whichever it takes)
            return None
        if ents.traces >= self.max_variants:
            warnings.warn(f"jit({self.__name__}): {ents.traces} traces for one signature, each guarding "
                          "different values of a Python conversion (bool/int/float/.item()); this call runs "
                          "eagerly. Raise the cap with jit(..., max_variants=n) or ARRAY_NAMESPACE_JIT_MAX_VARIANTS",
                          RuntimeWarning, stacklevel=3)
            return None
        new = self._trace(*parts, invals=raw)   # this call's branch (raises what eager raises: not counted)
        ents.traces += 1
        if new.eager:
            ents.eager = True
            return None
        if new.guard is None or any(e.guard.same(new.guard) for e in ents):
            return None   # (eager assumed what a variant did, whose program disagrees here: eager decides)
        ents.append(new)
        return self._run_guarded(_Variants([new]), parts, raw)

    def _finish(self, ent, leaves, outs):
        """Box the outputs; rebind the caller's handles the function wrote into (as eagerly)."""
        if ent.mutated:
            n = len(outs) - len(ent.mutated)
            outs, finals = outs[:n], outs[n:]
            write_back(leaves, ent.mutated, finals, f"jit({self.__name__})")
        vals = [box(o) for o in outs]
        if trace_state.trace is EVAL:   # (under vmap/AD the outputs are traced: Arrays to that transform)
            for n, conv in ent.numbers:   # a float() the function returned: this call's, as a Python float
                vals[n] = conv(np.asarray(backend.to_numpy(outs[n])))
        return tree_unflatten(ent.out_tree, vals)

    def _mark_donors(self, ent, raw):
        """Host-held values this call donates remember its name, for the error if one is used again. A value
        donated and also passed again (f(x, x) with x donated) is refused here: XLA would fail mid-call with
        'Attempt to use a buffer that was previously donated'."""
        if any(ent.donate):
            donate = ent.donate[len(ent.consts):]
            if len({id(r) for r in raw}) < len(raw):
                first = {}
                for i, r in enumerate(raw):
                    j = first.setdefault(id(r), i)
                    if j != i and (donate[i] or donate[j]):
                        raise ValueError(f"jit({self.__name__}): one array is passed as flat arguments {j} and {i} "
                                         f"and donated (donate_argnums={self.donate_argnums}); the same array "
                                         "cannot be donated twice or donated and read: pass a copy")
            for r, d in zip(raw, donate):
                if d and hasattr(r, "donor"):
                    r.donor = self.__name__

    @api_boundary
    def lower(self, *args, **kwargs):
        ent = self._entry(args, kwargs)[0][0]
        return Lowered(ent.closed, ent.donate, self.__name__, ent.shardings)

    @api_boundary
    def compiled(self, *args, **kwargs):
        """The executable a call with these (concrete) arguments runs: for a guarded function, the variant whose
        guards hold for their values (found by running the call), which `lower` cannot trace abstractly. Its
        .as_text() is XLA's optimized HLO (a sharded jit's after SPMD partitioning: its collectives explicit)."""
        if trace_state.trace is not EVAL:
            raise TypeError(f"jit({self.__name__}).compiled: needs concrete arguments, not traced values")
        ents, raw, _, parts = self._entry(args, kwargs, concrete=True)
        ent = ents[0]
        if ent.guard is not None:
            got = self._run_guarded(ents, parts, _buffers(raw))
            if got is None:
                raise ValueError(f"jit({self.__name__}).compiled: no compiled variant runs these arguments (past "
                                 "max_variants, or the program disagrees with eager: the call runs eagerly)")
            ent = got[0]
        return self._exe(ent)

    @api_boundary
    def trace(self, *args, **kwargs):
        return self._entry(args, kwargs)[0][0].closed


class _Variants(list):
    """The entries traced for one signature (one unless guarded), how many traces that took, and whether one
    of them converted a traced value to the host (then a call no variant accepts runs eagerly, untraced)."""
    __slots__ = ("traces", "eager")

    def __init__(self, ents):
        super().__init__(ents)
        self.traces, self.eager = 1, False


def _as_arrays(out, name, numbers=()):
    """An eager result as jit returns it: Python and NumPy numbers (and arrays) as Arrays, except the leaves a
    traced variant returns as Python numbers (`numbers`)."""
    leaves, tree = tree_flatten(out)
    keep = {n for n, conv in numbers if n < len(leaves) and type(leaves[n]) is conv}
    return tree_unflatten(tree, [x if type(x) is boxing.box_type or n in keep else
                                 box(to_raw(x, f"jit({name}) output")) for n, x in enumerate(leaves)])


def _buffers(vals):
    """Eager values as XLA takes them (the runtime's `as_buffer`: host-held values -> device buffers), a list.
    (One comprehension: a guarded call's hot path; all() and a generator took ~0.9 us more per call.)"""
    buf, conv = boxing.buffer_type, boxing.as_buffer
    return [v if type(v) is buf else conv(v) for v in vals]


@api_boundary
def jit(fun=None, *, static_argnums=(), static_argnames=(), donate_argnums=(), in_shardings=None,
        out_shardings=None, guards=None, max_variants=None):
    """Compile `fun` with XLA; usable as @jit or @jit(static_argnums=...).

    Without static arguments the result is the backend's native dispatcher where it has one (XLA:
    jaxlib's C++ dispatcher, no Python frame per call); with them, a Python wrapper that validates
    them first and then uses the dispatcher.

    Parameters: fun (callable): a function of arrays. static_argnums (int or tuple): positions of
        arguments that are Python values deciding the program (hashable; one compile per value).
        static_argnames (str or tuple): the same by name. donate_argnums (int or tuple): arguments whose
        buffers the computation may reuse (they must not be used afterwards). guards (bool): whether
        value-dependent Python (bool()/if/while, int()/index, float()/complex(), .item(), .tolist() of a traced
        value) specialises to the call's values and is guarded (default; ARRAY_NAMESPACE_JIT_GUARDS=0 turns it
        off) or raises ConcretizationTypeError as in JAX (False). A guarded function pays a read-back of its
        guard values on every call (its variant's program runs from the C++ dispatcher and
        returns the guard vector beside the result, checked in C: a few microseconds) and a trace and compile per new branch;
        a guarded float() value takes a new variant per new value (a float(), an int() or
        an .item() only returned is no guard: each call returns its own value as a Python number). A trace that converts a traced value to the
        host (np.asarray, DLPack, memoryview, a NumPy ufunc: host code whose result would re-enter the program
        as a constant) stops there and the call runs eagerly inside the jitted call, as does from then on every
        call of that signature its compiled variants (if any) do not accept (without guards:
        TracerArrayConversionError). max_variants (int): variants kept per
        signature (default 8, ARRAY_NAMESPACE_JIT_MAX_VARIANTS); past it a RuntimeWarning and the eager result.
    Returns: callable: the compiled function, with .lower(*args).as_text() (StableHLO), .trace(*args),
        .compiled(*args).as_text() (XLA's optimized HLO of the program those arguments run; a sharded jit's
        after SPMD partitioning, collectives explicit) and trace_count.
    Raises: TypeError: if fun is not callable, or, when called, for a non-hashable static argument.

    >>> f = jit(lambda a: a * 2 + 1)
    >>> f(xp.asarray([1.0, 2.0]))
    Array([3., 5.])
    """
    if fun is None:
        return lambda f: jit(f, static_argnums=static_argnums, static_argnames=static_argnames,
                             donate_argnums=donate_argnums, in_shardings=in_shardings, out_shardings=out_shardings,
                             guards=guards, max_variants=max_variants)
    jitted = Jitted(fun, static_argnums, static_argnames, donate_argnums, in_shardings, out_shardings, guards,
                    max_variants)
    if jitted.static_argnums or jitted.static_argnames or jitted._sharded:
        return jitted
    public = backend.jit_public(jitted)
    if public is None:
        return jitted
    jitted._fast = jitted._public = public
    return public


@api_boundary
def make_jaxpr(fun, static_argnums=()):
    """make_jaxpr(f)(*args) -> the ClosedJaxpr f stages to (prints in JAX's text format).

    Parameters: fun (callable): a function of arrays. static_argnums (int or tuple): arguments
        passed as Python values instead of traced.
    Returns: callable: (*args) -> the ClosedJaxpr; arguments may be arrays or ShapeDtypeStructs (only
        shapes and dtypes are used; nothing runs).
    Raises: TypeError: when called, for an argument that is neither an array nor a shape-and-dtype.

    >>> print(make_jaxpr(lambda a: xp.sin(a) * 2.0)(xp.asarray([1.0, 2.0])))
    { lambda ; a:f64[2]. let
        b:f64[2] = sin a
        c:f64[2] = mul b 2.0
      in (c,) }
    """
    static = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)

    @api_boundary
    def mk(*args, **kwargs):
        dyn = [a for i, a in enumerate(args) if i not in static]
        leaves, tree = tree_flatten((tuple(dyn), kwargs))
        avals = [arg_aval(x, "make_jaxpr argument") for x in leaves]

        def f(d, kw):
            it = iter(d)
            full = [a if i in static else next(it) for i, a in enumerate(args)]
            return fun(*full, **kw)
        store = Store()
        trace = StagingTrace(current_trace(), stage_all=True)
        tracers = [trace.new_arg(a) for a in avals]
        with set_trace(trace):
            outs = flatten_fun(f, tree, store)(*tracers)
        return trace.to_jaxpr(outs)
    return mk

