"""Guards: value-dependent Python under jit, specialised to this call's values and checked on every call.

When jit traces a function it was called with concrete arguments, the trace keeps those arguments
beside its input variables (a `Shadow`). Where the traced code asks a value for a Python value --
bool() (if/while/and/or/not/assert), int()/operator.index, float()/complex(), .item(), .tolist() --
the shadow evaluates the equations staged so far eagerly (each at most once per trace), hands back the
value this call has, and records the assumption as a guard. The compiled program computes every
guarded value beside its outputs, packed into one int64 vector (floats by their bits) that ends with the
variant's own tag; each call reads it back and looks it up among the vectors the variants accept (one
set per jitted function: with the tag, a vector names the variant whose program computed it, so one
lookup checks every guard). On a mismatch the call runs the variant whose
assumptions agree, or traces the function again with this call's values (it raises what eager raises)
and caches the new variant beside the others; past `max_variants` per signature, a warning and the eager
result. A conversion of a traced value to the host (np.asarray / __array__, DLPack, memoryview, a NumPy ufunc)
would feed host code whose result re-enters the trace as a constant: the shadow notes it (`Shadow.host`), the
trace stops there, and jit runs that call, and every later call of the signature no compiled variant accepts,
eagerly inside the jitted call (jit.py). make_jaxpr, .lower() and abstract tracing have no shadow:
ConcretizationTypeError (TracerArrayConversionError) as before. vmap
inside such a jit asks the shadow for the whole batched value (guarding all of it) and answers with the value
its elements share (batching.py).

A float() result the function returns (likewise int() of a real value and .item()) is the program's output
(returned.py maps the number back to its variable), converted back to a Python number on each call (as
eagerly). Returned untouched (`return float(score)`, as scikit-learn's metrics end; jit_returned.py reads the
bytecode to know), it assumes nothing, so a new value needs no new variant; used otherwise too (stored,
compared, another conversion of the value branched on), or one object standing for two values (a small int),
it is also a guard.
"""
from __future__ import annotations

import itertools
import os

import numpy as np

from .backend import backend
from .core import EVAL, ConcretizationTypeError, ShapedArray, bind, current_trace, not_foldable, set_trace
from .jaxpr import ClosedJaxpr, Jaxpr, Literal, Var, new_literal
from .jit_returned import returned_directly
from .returned import flat_code, record
from .primitives.bits import bitcast_convert_type
from .primitives.elementwise import convert_element_type, imag_p, real_p
from .primitives.structural import concatenate, reshape
from .sharding import NamedSharding, P
from .staging import StagingTrace, _tracer, dce_jaxpr

_OFF = ("0", "off", "false", "no", "strict")
_EFFECT = object()
_variant_tags = itertools.count(1)   # each guarded variant's tag, never reused (the last element of its vector)
_TAG_AVAL = ShapedArray((), np.dtype(np.int64))


def guards_default():
    """Whether jit guards value-dependent Python (ARRAY_NAMESPACE_JIT_GUARDS=0 gives JAX's strict jit)."""
    return os.environ.get("ARRAY_NAMESPACE_JIT_GUARDS", "1").strip().lower() not in _OFF


def max_variants_default():
    """Variants (guarded traces) kept per signature before jit runs the function eagerly
    (ARRAY_NAMESPACE_JIT_MAX_VARIANTS, default 8)."""
    return int(os.environ.get("ARRAY_NAMESPACE_JIT_MAX_VARIANTS", "8"))


class Shadow:
    """The concrete values of one trace's variables for this call, computed only when asked."""
    __slots__ = ("trace", "env", "nconst", "producer", "nindexed", "atoms", "values", "converted", "used",
                 "numbers")

    def __init__(self, trace, invals):
        self.trace, self.nconst, self.nindexed, self.converted = trace, 0, 0, False
        self.env = dict(zip(trace.invars, invals))
        self.producer = {}   # Var -> index of the staged equation that makes it
        self.atoms, self.values = [], []   # the guarded variables and the host values assumed for them
        self.used = set()     # of those, the ones Python code used (all but numbers only returned)
        self.numbers = ()     # (output leaf index, Python type, traced value) of the numbers the program outputs

    def _value(self, atom):
        """atom's value for this call: the staged equations it depends on (not yet run) run eagerly, in
        order, each at most once per trace; equations nothing guarded depends on never run here (a
        debug_print runs only in the program)."""
        if type(atom) is Literal:
            return atom.val
        tr, env = self.trace, self.env
        if len(tr.constvars) > self.nconst:
            env.update(zip(tr.constvars[self.nconst:], tr.constvals[self.nconst:]))
            self.nconst = len(tr.constvars)
        if atom in env:
            return env[atom]
        eqns, producer = tr.eqns, self.producer
        for i in range(self.nindexed, len(eqns)):
            for v in eqns[i].outvars:
                producer[v] = i
        self.nindexed = len(eqns)
        need, stack = set(), [atom]
        while stack:
            v = stack.pop()
            i = producer[v]
            if i not in need:
                need.add(i)
                stack.extend(a for a in eqns[i].invars if type(a) is not Literal and a not in env)
        order = sorted(need)
        if any(eqns[i].prim in not_foldable for i in order):
            return _EFFECT   # (running it here would run its effect once more than eagerly)
        free = list(dict.fromkeys(a for i in order for a in eqns[i].invars if type(a) is not Literal and a in env))
        laid = [_mesh_sharding(env[a]) for a in free]
        if any(s is not None for s in laid):   # inputs over a mesh: the slice runs partitioned there, read back
            mesh = next(s for s in laid if s is not None).mesh   # replicated (no gather of the inputs, whose
            prog = backend.compile_sharded(   # shards may lie in other processes)
                ClosedJaxpr(Jaxpr([], free, [eqns[i] for i in order], [atom]), []), (False,) * len(free), "guard",
                laid, (NamedSharding(mesh, P()),))
            env[atom] = prog([env[a] for a in free])[0]
            return env[atom]
        with set_trace(EVAL):
            for i in order:
                eqn = eqns[i]
                out = bind(eqn.prim, *[a.val if type(a) is Literal else env[a] for a in eqn.invars], **eqn.params)
                env.update(zip(eqn.outvars, out if eqn.prim.multiple_results else (out,)))
        return env[atom]

    def guard(self, tracer, why, used=True):
        """This call's value of `tracer` (a NumPy array); the program will check it on every call."""
        if used:
            self.used.add(tracer.atom)
        v = self._value(tracer.atom)
        if v is _EFFECT:
            raise ConcretizationTypeError(tracer, why + " (of a value computed by a callback with effects)")
        v = np.asarray(backend.to_numpy(v))
        if tracer.atom not in self.atoms:
            self.atoms.append(tracer.atom)
            self.values.append(v)
        return v

    def host(self):
        """A traced value is converted to the host: this call runs eagerly (the caller raises the conversion
        error, which stops the trace; code that catches it still leaves this call eager, as eager converts)."""
        self.converted = True

    def number(self, tracer, why, frame, callee=float):
        """float(x) of a 0-d traced x (`callee` int: int(x) of a real one; "item": x.item()), called from
        `frame`: this call's value. Returned as an output, the number is the program's output on each call
        (returned.py maps it back to `tracer`); it is a guard unless returned untouched (jit_returned.py).
        (complex() makes a new object of what __complex__ returns, so a complex is not followed: it is a guard.)"""
        conv = (lambda v: v.item()) if callee == "item" else callee
        if type(tracer.atom) is Literal:
            out = conv(np.asarray(tracer.atom.val))
        else:
            out = conv(self.guard(tracer, why, used=not returned_directly(frame, flat_code(), callee)))
        return record(out, tracer)

    def packed(self, tag):
        """The staged int64 vector of every guarded value and last the variant's `tag` (call with the trace
        current), or None. The value of a number only returned (no conversion of it used otherwise) is left
        out: the program outputs it."""
        out = {getattr(v, "atom", None) for _, _, v in self.numbers} - self.used
        if out:
            keep = [k for k, a in enumerate(self.atoms) if a not in out]
            self.atoms, self.values = [self.atoms[k] for k in keep], [self.values[k] for k in keep]
        if not self.atoms:
            return None
        pieces = [p for a in self.atoms for p in _int64_pieces(_tracer(self.trace, a))]
        return concatenate(pieces + [reshape(_tracer(self.trace, new_literal(tag, _TAG_AVAL)), (1,))], 0)


def _mesh_sharding(v):
    """v's NamedSharding where v is an eager array laid out over a mesh of several devices, else None."""
    got = backend.sharding_of(v) if not isinstance(v, (np.ndarray, np.generic, int, float, complex)) else None
    return got if isinstance(got, NamedSharding) and got.mesh.size > 1 else None


def _int64_pieces(x):
    aval = x.aval
    x = reshape(x, (aval.size,))
    kind = aval.dtype.kind
    if kind == "c":
        return _int64_pieces(bind(real_p, x)) + _int64_pieces(bind(imag_p, x))
    if kind == "f":
        x = bitcast_convert_type(x, np.dtype(f"int{aval.dtype.itemsize * 8}"))
    return [convert_element_type(x, np.int64)]


def host_pieces(v):
    """A guarded host value as the int64 pieces the program computes for it (same order and bits)."""
    v = np.asarray(v).ravel()
    if v.dtype.kind == "c":
        return host_pieces(v.real) + host_pieces(v.imag)
    if v.dtype.kind == "f":
        v = v.view(np.dtype(f"int{v.dtype.itemsize * 8}"))
    return [v.astype(np.int64)]


class Guard:
    """What a variant assumed: one int64 piece per guarded value; `expected` is their concatenation. The program
    outputs them followed by the variant's `tag`; `accepted` holds the vectors (as bytes) that pass, shared
    by all variants of one jitted function (a vector's tag tells whose it is, so one set serves them all)."""
    __slots__ = ("pieces", "expected", "bounds", "alts", "accepted", "tag")

    def __init__(self, values, tag, accepted=None):
        self.pieces = [np.concatenate(host_pieces(v)) for v in values]
        self.expected = np.concatenate(self.pieces) if self.pieces else np.zeros(0, np.int64)
        self.bounds = np.cumsum([0] + [p.size for p in self.pieces])
        self.alts = []   # the program's own values for the same assumptions (a float rounded otherwise)
        self.tag = tag
        self.accepted = set() if accepted is None else accepted   # (the per-call check: one bytes lookup)
        self.accepted.add(np.append(self.expected, np.int64(tag)).tobytes())

    def accept(self, got):
        self.alts.append(got[:-1])
        self.accepted.add(got.tobytes())

    def holds(self, got):
        """Whether `got`, the vector this variant's program computed, passes (its tag is this variant's)."""
        return got.tobytes() in self.accepted

    def agreed(self, got):
        """How much of `got` (the program's values, in its order) to match in another variant: through the
        first guard `got` breaks in the longest prefix it shares with an accepted vector (None: it breaks none)."""
        k, got = 0, got[:-1]
        for vec in [self.expected] + self.alts:
            bad = np.flatnonzero(vec != got) if vec.shape == got.shape else [0]
            if len(bad) == 0:
                return None
            k = max(k, int(np.searchsorted(self.bounds, bad[0], side="right")) - 1)
        return int(self.bounds[k + 1])

    def same(self, other):
        return self.expected.shape == other.expected.shape and np.array_equal(self.expected, other.expected)


def next_variant(variants, ent, got, tried):
    """The variant to run after `ent`'s guards failed with `got`: one that assumed the same up to the first
    broken guard and this call's value there (traces are deterministic, so it is the only candidate)."""
    end = ent.guard.agreed(got)
    if end is None:
        return None
    for v in variants:
        if v not in tried and v.guard is not None and any(
                a.size >= end and np.array_equal(a[:end], got[:end]) for a in [v.guard.expected] + v.guard.alts):
            return v
    return None


def stage_guarded(fun, in_avals, names, invals, accepted=None):
    """Stage a flat raw function as `stage` does, with a shadow of the concrete inputs `invals`: (closed jaxpr
    whose last output is the packed guard vector when there are guards, Guard or None, (output leaf index,
    Python type) of the numbers returned as Python numbers), or (None, None, None) where the trace converted a
    traced value to the host (this call runs eagerly). `accepted`: the jitted function's set of passing vectors."""
    tag = next(_variant_tags)
    trace = StagingTrace(current_trace(), stage_all=True)
    args = [trace.new_arg(a, n) for a, n in zip(in_avals, names or [None] * len(in_avals))]
    shadow = trace.shadow = Shadow(trace, invals)
    try:
        try:
            with set_trace(trace):
                outs = list(fun(*args))
                packed = shadow.packed(tag)
        except Exception:
            if not shadow.converted:
                raise
        if shadow.converted:
            return None, None, None
        if packed is not None:
            outs.append(packed)
        closed = trace.to_jaxpr(outs)
    finally:
        trace.shadow = None   # (drops the concrete values)
    guard = Guard(shadow.values, tag, accepted) if packed is not None else None
    return ClosedJaxpr(dce_jaxpr(closed.jaxpr), closed.consts), guard, tuple((n, t) for n, t, _ in shadow.numbers)


def _has_effects(jaxpr):
    for eqn in jaxpr.eqns:
        if eqn.prim in not_foldable:
            return True
        for p in eqn.params.values():
            for q in (p if isinstance(p, (tuple, list)) else (p,)):
                inner = q.jaxpr if isinstance(q, ClosedJaxpr) else q
                if isinstance(inner, Jaxpr) and _has_effects(inner):
                    return True
    return False


def guard_program(jaxpr):
    """For a guarded jaxpr (no constvars) with effects (a callback, a debug_print): the program of its guard
    vector alone, run before the whole one so that a call breaking a guard runs no effect; else None. (A
    guarded value never depends on an effect: Shadow refuses that.)"""
    if not _has_effects(jaxpr):
        return None
    live, kept = {jaxpr.outvars[-1]}, []
    for eqn in reversed(jaxpr.eqns):
        if any(v in live for v in eqn.outvars):
            kept.append(eqn)
            live.update(a for a in eqn.invars if type(a) is Var)
    kept.reverse()
    return ClosedJaxpr(Jaxpr([], jaxpr.invars, kept, [jaxpr.outvars[-1]]), [])

