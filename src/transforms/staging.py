"""Staging: record primitives into a jaxpr instead of running them.

One trace serves two purposes:
- `stage_all=True` (make_jaxpr, jit): every primitive is recorded, constants included, so
  `ones(3)` appears as an equation. Equations whose inputs are all literals and whose
  outputs are scalars are folded at trace time into literals (`log 2.0` -> `0.6931472`).
- `stage_all=False` (partial evaluation, used by linearize): only work that touches this
  trace's own tracers (the "unknowns") is recorded; everything else runs in the parent
  trace and enters the jaxpr as a captured constant (a residual).

Values from outside the trace (concrete buffers, outer tracers) become constvars, so a
staged jaxpr is closed over exactly what it captured.
"""
from __future__ import annotations

import struct

import numpy as np

from .backend import backend
from .core import (EVAL, ConcretizationTypeError, Trace, Tracer, TracerArrayConversionError, UnexpectedTracerError,
                   abstract_eval, bind, fold_cacheable, get_aval, not_foldable, set_trace)
from .jaxpr import ClosedJaxpr, Eqn, Jaxpr, Literal, Var, new_literal
from .rules import partial_eval_rules

_PY_SCALARS = (bool, int, float, complex)


class StagingTracer(Tracer):
    __slots__ = ("atom",)

    def __init__(self, trace, atom):
        self._trace = trace
        self.atom = atom

    @property
    def aval(self):
        return self.atom.aval

    def concrete(self, why, guard=False):
        if type(self.atom) is Literal:
            return self.atom.val
        if guard and self._trace.shadow is not None:   # jit called with concrete values: a guard (jit_guards.py)
            return self._trace.shadow.guard(self, why)
        raise ConcretizationTypeError(self, why)

    def host_value(self, why, guard=False):
        if type(self.atom) is Literal:
            return self.atom.val
        shadow = self._trace.shadow
        if shadow is not None:
            if guard:
                return shadow.guard(self, why)
            shadow.host()   # (a conversion to NumPy/DLPack under a jit that knows its values: that path runs eagerly)
        raise TracerArrayConversionError(self, why)


_new_tracer = object.__new__


def _tracer(trace, atom):
    """StagingTracer(trace, atom) without the __init__ call (the hot path: one per staged equation)."""
    t = _new_tracer(StagingTracer)
    t._trace = trace
    t.atom = atom
    return t


# Folds of prims in `fold_cacheable` (exact, deterministic scalar work: conversions) are memoized by
# (prim, params, input avals and bit patterns) -> the output literal's value (an immutable NumPy scalar).
_fold_cache: dict = {}
_FOLD_CACHE_MAX = 4096

_py_literals: dict = {}   # (type, value) -> (NumPy scalar, aval) of a Python scalar's literal
_py_folds: dict = {}      # (prim, type, value, params) -> (NumPy scalar, aval): a Python scalar's folded conversion


def _scalar_key(x, t):
    """A Python scalar as a key that tells apart what converts differently: 0.0 and -0.0, and NaNs (equal to
    nothing, so keyed by their bits), complex parts likewise."""
    if t is float:
        return struct.pack("<d", x) if not x or x != x else x
    if t is complex:
        return struct.pack("<dd", x.real, x.imag)
    return x


def _py_literal(x):
    """A Python scalar's (weakly typed) literal; the conversion is memoized with the sign of zero kept apart
    (never a NaN, never a value that fails to convert: its error is raised anew)."""
    t = type(x)
    key = (t, repr(x) if t is complex or (t is float and not x) else x)
    got = _py_literals.get(key)
    if got is None:
        lit = new_literal(x, get_aval(x))
        if x == x:
            if len(_py_literals) >= _FOLD_CACHE_MAX:
                _py_literals.clear()
            _py_literals[key] = (lit.val, lit.aval)
        return lit
    return Literal(*got)


class StagingTrace(Trace):
    __slots__ = ("stage_all", "eqns", "invars", "arg_names", "constvars", "constvals", "_const_ids",
                 "alive", "producers", "shadow")

    def __init__(self, parent, stage_all=True):
        self.parent = parent
        self.stage_all = stage_all
        self.eqns, self.invars, self.arg_names = [], [], {}
        self.constvars, self.constvals, self._const_ids = [], [], {}
        self.alive = True
        self.shadow = None   # jit_guards.Shadow: this call's concrete values, where jit was called with them

    conversion_loses = "its place in the program being staged (it has no value until the program runs)"
    returns_numbers = None   # (as its parent's, unless a guarded jit's: returned.takes_numbers)

    @property
    def keeps_values_concrete(self):   # partial evaluation (linearize) runs the known values for real
        return not self.stage_all

    def kind_name(self):
        return "jit/make_jaxpr" if self.stage_all else "linearize"

    def new_arg(self, aval, name=None):
        v = Var(aval)
        self.invars.append(v)
        if name is not None:
            self.arg_names[v] = name
        return StagingTracer(self, v)

    def to_tracer(self, x):
        if isinstance(x, StagingTracer):
            if x._trace is self:
                return x
            if not x._trace.alive:
                raise UnexpectedTracerError(_escaped_message(x))
        elif type(x) in _PY_SCALARS:
            return _tracer(self, _py_literal(x))
        elif isinstance(x, np.generic) or (isinstance(x, np.ndarray) and x.ndim == 0):
            aval = get_aval(x)
            return StagingTracer(self, new_literal(x, aval))
        elif isinstance(x, Tracer) and not getattr(x._trace, "alive", True):
            raise UnexpectedTracerError(_escaped_message(x))
        key = id(x)
        v = self._const_ids.get(key)
        if v is None:
            v = self._const_ids[key] = Var(get_aval(x).strip_weak() if isinstance(x, np.ndarray) else get_aval(x))
            self.constvars.append(v)
            self.constvals.append(x)
        return StagingTracer(self, v)

    def process(self, prim, args, params):
        if not self.stage_all:
            for a in args:
                if type(a) is StagingTracer and a._trace is self:
                    break
            else:
                return self.parent.process(prim, args, params)
            rule = partial_eval_rules.get(prim)
            if rule is not None:
                return rule(self, args, params)
        return self.stage_eqn(prim, args, params)

    def stage_eqn(self, prim, args, params):
        if prim in fold_cacheable and len(args) == 1 and type(args[0]) in _PY_SCALARS:
            return self._fold_py(prim, args[0], params)
        atoms = [a.atom if type(a) is StagingTracer and a._trace is self else self.to_tracer(a).atom for a in args]
        out_avals = abstract_eval(prim, [a.aval for a in atoms], params)
        if prim.multiple_results:
            outvars = [Var(a) for a in out_avals]
            self.eqns.append(Eqn(prim, atoms, outvars, params))
            return [_tracer(self, v) for v in outvars]
        if (not out_avals[0] and prim not in not_foldable and backend.name is not None
                and all(type(a) is Literal for a in atoms)):
            # scalar arithmetic on literals, run by the backend (none registered: staged as is); calls
            # and loops are never folded
            return self._fold(prim, atoms, params, out_avals)
        v = Var(out_avals)
        self.eqns.append(Eqn(prim, atoms, [v], params))
        return _tracer(self, v)

    def _fold(self, prim, atoms, params, out_aval):
        key = None
        if prim in fold_cacheable:
            try:   # the literals by bit pattern: -0.0 and 0.0 (and NaNs' payloads) stay apart
                key = (prim, tuple(params.items()), *[(a.aval, a.val.tobytes()) for a in atoms])
                val = _fold_cache.get(key)
            except (TypeError, AttributeError):   # an unhashable parameter
                key = val = None
            if val is not None:
                return _tracer(self, Literal(val, out_aval))
        with set_trace(EVAL):
            out = bind(prim, *[a.val for a in atoms], **params)
        lit = new_literal(np.asarray(out), out_aval)
        if key is not None:
            if len(_fold_cache) >= _FOLD_CACHE_MAX:
                _fold_cache.clear()
            _fold_cache[key] = lit.val
        return _tracer(self, lit)

    def _fold_py(self, prim, x, params):
        """A conversion of a Python scalar (the namespace's `x * 2.0`): memoized from the scalar itself, with
        its type and sign of zero kept apart; otherwise (a miss, a NaN, an error) staged as any equation."""
        t = type(x)
        try:
            key = (prim, t, _scalar_key(x, t), tuple(params.items()))
            got = _py_folds.get(key)
        except TypeError:   # an unhashable parameter
            key = got = None
        if got is not None:
            return _tracer(self, Literal(*got))
        if t is int and not -2 ** 63 <= x < 2 ** 63 and "new_dtype" in params:
            # an int past int64 (uint64's upper half): its literal is of the dtype it converts to, as eagerly
            # (int64's overflowed), and a value outside that dtype is eager's OverflowError
            dt = np.dtype(params["new_dtype"])
            if dt.kind in "iu" and not np.iinfo(dt).min <= x <= np.iinfo(dt).max:
                raise OverflowError(f"Python integer {x} is out of bounds for {dt.name}")
            lit = new_literal(x, get_aval(np.asarray(x, dt)[()]).update(weak_type=True))
        else:
            lit = _py_literal(x)
        out = self.stage_eqn(prim, [_tracer(self, lit)], params)
        if key is not None and type(out.atom) is Literal:
            if len(_py_folds) >= _FOLD_CACHE_MAX:
                _py_folds.clear()
            _py_folds[key] = (out.atom.val, out.atom.aval)
        return out

    # ------------------------------------------------------------------ building the jaxpr
    def to_jaxpr(self, outs) -> ClosedJaxpr:
        atoms = [self.to_tracer(o).atom for o in outs]
        jaxpr = Jaxpr(list(self.constvars), list(self.invars), list(self.eqns), atoms)
        self.alive = False
        return ClosedJaxpr(jaxpr, list(self.constvals))

    # --------------------------------------------------------------- error provenance
    def describe_origin(self, tracer):
        """Which named inputs a tracer's value depends on (computed only for error text)."""
        target = {tracer.atom}
        for eqn in reversed(self.eqns):
            if any(v in target for v in eqn.outvars):
                target.update(a for a in eqn.invars if type(a) is Var)
        names = [self.arg_names[v] for v in self.invars if v in target and v in self.arg_names]
        if not names:
            return None
        return "argument " + ", ".join(repr(n) for n in names) if len(names) < 4 else f"arguments {names}"


def _escaped_message(t):
    return (f"a traced value ({t.aval.str_short()}) was used after the transform that created it "
            f"({t._trace.kind_name()}) finished. It escaped, e.g. through a global, a closure or a "
            "side effect. Return it from the transformed function instead.")


def trace_to_jaxpr(fun, in_avals, arg_names=None, parent=None) -> ClosedJaxpr:
    """Stage `fun` (raw values -> list of raw values) at the given avals."""
    from .core import current_trace
    trace = StagingTrace(parent if parent is not None else current_trace(), stage_all=True)
    names = arg_names or [None] * len(in_avals)
    args = [trace.new_arg(a, n) for a, n in zip(in_avals, names)]
    with set_trace(trace):
        outs = fun(*args)
    return trace.to_jaxpr(outs)


def convert_constvars(closed: ClosedJaxpr):
    """Turn constvars into leading invars; returns (jaxpr with no constvars, consts)."""
    j = closed.jaxpr
    return Jaxpr([], list(j.constvars) + list(j.invars), j.eqns, j.outvars), closed.consts


def dce_jaxpr(jaxpr: Jaxpr) -> Jaxpr:
    """Drop equations whose outputs are never used (no primitive here has side effects)."""
    live = {a for a in jaxpr.outvars if type(a) is Var}
    kept = []
    add = live.add
    for eqn in reversed(jaxpr.eqns):
        outs = eqn.outvars
        if (outs[0] in live if len(outs) == 1 else any(v in live for v in outs)) or eqn.prim in not_foldable:
            kept.append(eqn)
            for a in eqn.invars:
                if type(a) is Var:
                    add(a)
    kept.reverse()
    return Jaxpr(jaxpr.constvars, jaxpr.invars, kept, jaxpr.outvars)

