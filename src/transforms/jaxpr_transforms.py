"""Jaxpr-level transforms and the staged call: one implementation each, used by every caller.

`stage` traces a flat raw-value function to a closed jaxpr; `jit_p` is the call primitive a staged
function becomes inside other traces (`call_jaxpr` binds it; `staged_call` stages a body once per
signature and binds it, for composite implementations such as random samplers and complex special
functions). `jvp_jaxpr`, `batch_jaxpr`, `partial_eval_jaxpr` and `transpose_jaxpr` turn one closed
jaxpr into another; jit_p's rules, control flow and remat all build on them, so jvp, vmap, partial
evaluation and transposition of a staged call stay staged as one unit.
"""
from __future__ import annotations

import functools
import time

import numpy as np

from .ad import backward_pass, jvp_flat
from .batching import move_to, rule_axis_name, vmap_flat
from .backend import backend
from .core import EVAL, Primitive, abstract_eval_rules, bind, boxing, current_trace, get_aval, set_trace
from .jaxpr import ClosedJaxpr, Literal, eval_jaxpr
from .primitives.structural import zeros_of_aval
from .rules import UndefPrimal, Zero, batch_rules, is_undefined, jvp_rules, partial_eval_rules, transpose_rules
from .staging import StagingTrace, StagingTracer, convert_constvars, dce_jaxpr

jit_p = Primitive("jit", multiple_results=True)


def call_jaxpr(closed: ClosedJaxpr, args, name):
    """Bind jit_p on a closed jaxpr, passing its constants as leading arguments."""
    if closed.consts:
        jaxpr, consts = convert_constvars(closed)
        closed, args = ClosedJaxpr(jaxpr, []), list(consts) + list(args)
    return bind(jit_p, *args, name=name, jaxpr=closed)


def stage(fun, in_avals, names=None) -> ClosedJaxpr:
    """Trace a flat raw function to a closed jaxpr, then drop dead equations."""
    trace = StagingTrace(current_trace(), stage_all=True)
    args = [trace.new_arg(a, n) for a, n in zip(in_avals, names or [None] * len(in_avals))]
    with set_trace(trace):
        outs = fun(*args)
    closed = trace.to_jaxpr(outs)
    return ClosedJaxpr(dce_jaxpr(closed.jaxpr), closed.consts)


def run_jaxpr(closed):
    """A closed jaxpr as a function of raw values (list of outputs)."""
    return lambda *a: eval_jaxpr(closed.jaxpr, closed.consts, *a)


def eval_inline(jaxpr, consts, args):
    """eval_jaxpr at the current trace, with nested jit_p equations evaluated in place (not bound)."""
    env = {}
    read = lambda a: a.val if type(a) is Literal else env[a]
    env.update(zip(jaxpr.constvars, consts))
    env.update(zip(jaxpr.invars, args))
    for eqn in jaxpr.eqns:
        ins = map(read, eqn.invars)
        if eqn.prim is jit_p:
            inner = eqn.params["jaxpr"]
            out = eval_inline(inner.jaxpr, inner.consts, list(ins))
        else:
            out = bind(eqn.prim, *ins, **eqn.params)
        if eqn.prim.multiple_results:
            env.update(zip(eqn.outvars, out))
        else:
            env[eqn.outvars[0]] = out
    return [read(v) for v in jaxpr.outvars]


class _Staged:
    """One staged body at one signature: its constant-free jaxpr, the constants, and how an eager
    call runs. Op by op first where the backend allows it (`backend.eager_by_op`: e.g. host kernels
    on the CPU, where a compile per new shape costs more than many whole calls), until the time spent
    so reaches the backend's budget (about one compile: a call made that often pays for its
    executable); then, or at once, the executable compiled on first need, run directly with no bind.
    Once compiled after op-by-op running, the next PROBES compiled calls are timed (to their results'
    readiness) against the fastest op-by-op call (`t_op`): where op by op was clearly faster (small
    operands: a few NumPy kernels can beat one XLA launch; a near tie stays compiled: MARGIN), the
    signature goes back to op by op for another budget, keeping its executable, and is measured again
    after it (so a hot signature compiles once and runs the faster way as measured, most recently, on
    this machine). by_op="always" (a body whose eager results must stay those of its kernels, bit for
    bit): op by op with no budget where the backend allows, else its equations are bound one by one as
    if unstaged; never compiled eagerly."""
    __slots__ = ("closed", "consts", "exe", "const_bufs", "by_op", "budget", "t_op", "t_exe", "probes")

    def __init__(self, closed):
        if closed.consts:
            jaxpr, consts = convert_constvars(closed)
            closed = ClosedJaxpr(jaxpr, [])
        else:
            consts = []
        self.closed, self.consts, self.exe, self.const_bufs = closed, list(consts), None, None
        self.by_op = None   # seconds of op-by-op running left before compiling (<= 0: compiled)
        self.budget = 0.0   # the backend's op-by-op budget for this signature (0: compiled at once)
        self.t_op = self.t_exe = _INF   # the fastest op-by-op / compiled call timed (seconds)
        self.probes = 0     # compiled calls timed since op by op last ran

    def eager(self, raw, name, allow_by_op=False):
        """The outputs, run eagerly; None where the bind path must run (no backend, or a value that
        is not a device buffer, e.g. a Python scalar, on the compiled path)."""
        buf, conv = boxing.buffer_type, boxing.as_buffer
        exe = self.exe
        by_op = self.by_op
        if exe and by_op is not None and -_INF < by_op <= 0 and (self.probes >= PROBES or self.budget <= 0):
            args = [v if v.__class__ is buf else conv(v) for v in raw]   # (compiled, chosen: the hot path)
            for a in args:
                if a.__class__ is not buf:
                    return None
            return exe(self.const_bufs + args if self.const_bufs else args)
        if buf is None or exe is False:
            return None
        if by_op == _INF:                      # (by_op="always", op by op on the backend: nothing to time)
            run = backend.run_by_op
            if run is not None:
                return run(self.closed, self.consts, raw, _INF)
        elif by_op is None:
            by_op = float(backend.eager_by_op(self.closed)) if allow_by_op else 0.0
            if allow_by_op == "always":
                by_op = _INF if by_op > 0 else -_INF     # (-inf: bound one by one)
            self.budget = by_op = self.by_op = by_op
        if by_op > 0:
            run = backend.run_by_op
            t0 = _perf()
            outs = (eval_inline(self.closed.jaxpr, self.consts, raw) if run is None
                    else run(self.closed, self.consts, raw, by_op))
            dt = _perf() - t0
            if outs is not None:
                self.by_op = by_op - dt
                if dt < self.t_op:
                    self.t_op = dt
                return outs
            self.by_op = 0.0
        elif by_op == -_INF:
            return eval_inline(self.closed.jaxpr, self.consts, raw)
        args = [v if type(v) is buf else conv(v) for v in raw]
        for a in args:
            if type(a) is not buf:
                return None
        exe = self.exe
        if exe is None:
            bufs = [c if type(c) is buf else conv(c) for c in self.consts]
            if any(type(c) is not buf for c in bufs):
                self.exe = False
                return None
            self.const_bufs = bufs
            exe = self.exe = backend.compile_jaxpr(self.closed, (), name)
        n = self.probes
        if n >= PROBES or self.budget <= 0:
            return exe(self.const_bufs + args)
        return self._probe(exe, args, n)

    def _probe(self, exe, args, n):
        """A compiled call timed to its results' readiness; after the PROBES-th, the faster way is chosen."""
        t0 = _perf()
        outs = exe(self.const_bufs + args)
        for o in outs:
            block = getattr(o, "block_until_ready", None)
            if block is not None:
                block()
        dt = _perf() - t0
        if dt < self.t_exe:
            self.t_exe = dt
        self.probes = n = n + 1
        if n >= PROBES and self.t_op < MARGIN * self.t_exe:    # op by op clearly faster: back to it, measured afresh
            self.t_op = self.t_exe = _INF
            self.probes = 0
            self.by_op = self.budget
        return outs


_INF = float("inf")
# Compiled calls timed before a signature that ran op by op chooses its way, and by how much op by op must
# win: its best call is the least of thousands and the executable's of a few, the first of them cold, so a
# near tie would go to op by op by chance (xp.std of 20x5 did: op by op 6.7 us a call, compiled 5.6).
PROBES = 16
MARGIN = 0.8
_perf = time.perf_counter


@functools.lru_cache(maxsize=512)
def _staged_jaxpr(body, avals, static):
    def flat(*args):
        out = body(*args, **dict(static))
        return list(out) if isinstance(out, (tuple, list)) else [out]
    return _Staged(stage(flat, list(avals)))


# body -> (static, avals, by_op, entry) of its last eager call outside the shape-free path: a call with the
# same static values (==, as the cache's key compares them) and the same operand avals (identity, else ==)
# skips building and hashing the cache key (~1 us of a ~5 us small call)
_LAST: dict = {}
_LAST_MAX = 512


def staged_call(body, raw, name, by_op=False, shape_free=False, **static):
    """Run a raw-value `body(*raw, **static)` as one staged call (a jit_p equation), staged once
    per input signature and static params: eagerly one cached executable instead of many
    single-op dispatches, under transforms an ordinary jit_p. `body` and the static values key
    the cache, so they must be hashable (a module-level function, not a fresh lambda).
    by_op=True: eagerly, the body may run op by op where the backend allows (see `_Staged`), for
    bodies whose eager results need not equal the compiled ones bit for bit (XLA may fuse a*b + c).
    by_op="always": eagerly always op by op (see `_Staged`): the same kernels as unstaged, bit for bit.
    shape_free=True (with by_op): the caller promises the body's Python never looks at its operands'
    shapes (no branch, no validation, no array built from them), so its jaxpr at one shape, where it
    is pointwise (`_ShapeFree`), is its jaxpr at every shape: eagerly, op by op, it is staged once per
    dtypes rather than per shape.
    Returns the list of outputs."""
    if current_trace() is EVAL:
        if shape_free and by_op:
            skey = tuple(sorted(static.items())) if static else ()
            outs = _eager_shape_free(body, raw, name, skey)
            if outs is not None:
                return outs
        else:
            last = _LAST.get(body)
            try:
                avals = [v.aval for v in raw]
            except AttributeError:     # (a Python scalar operand)
                avals = None
            if last is not None and avals is not None and last[1] == avals and last[0] == static and last[2] == by_op:
                ent = last[3]
                outs = ent.eager(raw, name, by_op)
                if outs is not None:
                    return outs
                return bind(jit_p, *ent.consts, *raw, name=name, jaxpr=ent.closed)
            skey = tuple(sorted(static.items())) if static else ()
            ent = _staged_jaxpr(body, tuple(map(get_aval, raw)), skey)
            if avals is not None:
                if len(_LAST) >= _LAST_MAX:
                    _LAST.clear()
                _LAST[body] = (static, avals, by_op, ent)
            outs = ent.eager(raw, name, by_op)
            if outs is not None:
                return outs
            return bind(jit_p, *ent.consts, *raw, name=name, jaxpr=ent.closed)
        ent = _staged_jaxpr(body, tuple(map(get_aval, raw)), skey)
        outs = ent.eager(raw, name, by_op)
        if outs is not None:
            return outs
    else:
        skey = tuple(sorted(static.items())) if static else ()
        ent = _staged_jaxpr(body, tuple(map(get_aval, raw)), skey)
    return bind(jit_p, *ent.consts, *raw, name=name, jaxpr=ent.closed)


def staged_runner(body, raw, name, by_op=False, **static):
    """staged_call(body, raw, name, by_op, **static) as a function `run(raw)` of operands with raw's avals,
    for a caller that keeps it per signature (a validated plan): eagerly (only there) it runs the staged
    entry with no signature lookup at all. A caller keeping runners registers its store's clear with
    `on_staged_clear` (forgetting staged bodies -- tests' fresh budgets -- must reach it too)."""
    ent = _staged_jaxpr(body, tuple(map(get_aval, raw)), tuple(sorted(static.items())) if static else ())
    eager, consts, closed = ent.eager, ent.consts, ent.closed

    def run(raw):
        outs = eager(raw, name, by_op)
        return outs if outs is not None else bind(jit_p, *consts, *raw, name=name, jaxpr=closed)
    run.entry = ent
    return run


# name -> fn(*operands, **statics): a namespace composite's first eager call at a new signature computed
# directly on host kernels (xla/host_composites.py), without a bind per primitive: a tuple of raw outputs,
# or None where it declines (the plain body then runs). Filled by the backend; used by
# array_namespace/_staged.py `compiled(host=name)`.
host_composites: dict = {}

_CLEAR_HOOKS: list = []


def on_staged_clear(fn):
    """Call fn() whenever the staged bodies are forgotten (`_staged_jaxpr.cache_clear`)."""
    _CLEAR_HOOKS.append(fn)


# ------------------------------------------------------------- staged once for every shape
class _ShapeFree:
    """A shape_free body's staged call at one shape `shape` (its template, a `_Staged`), found pointwise
    there (`_pointwise_at`): every equation elementwise (or a call of such a body), every value either
    0-d or of `shape`, constants 0-d. Its jaxpr at another shape S (the same dtypes and weak types, the
    same operands 0-d) then differs only in putting S for `shape`, and the template's host program run
    on operands of shape S (NumPy kernels broadcast the 0-d values as the avals do) gives each kernel
    exactly the operands the exact jaxpr's program would: the same values, bit for bit. So eagerly a new
    shape costs no staging and no program build, only its budget: each shape keeps its own op-by-op
    budget (`shapes`: shape -> [seconds left, its output avals]), and one that has spent it is staged at
    its exact shape and compiled as before (`_Staged`), as is any call where the backend has no
    op-by-op run (an accelerator, large operands)."""
    __slots__ = ("st", "shapes")

    def __init__(self, st):
        self.st, self.shapes = st, {}


_FREE: dict = {}      # (body, static, (dtype, weak_type, 0-d) per operand) -> _ShapeFree, or False (not pointwise)
_FREE_MAX, _SHAPES_MAX = 512, 1024


def _eager_shape_free(body, raw, name, skey):
    """The outputs of a shape_free by_op staged call run eagerly on its template's host program, or None
    (the exact-shape path runs: no backend run, operands of different non-0-d shapes, all operands 0-d,
    a body not pointwise, the shape's budget spent)."""
    if boxing.buffer_type is None or backend.run_by_op is None:
        return None
    avals = [get_aval(v) for v in raw]
    shape = ()
    for a in avals:
        s = a.shape
        if s:
            if not shape:
                shape = s
            elif s != shape:
                return None
    if not shape:          # (all 0-d: one signature per dtypes anyway)
        return None
    key = (body, skey, tuple([(a.dtype, a.weak_type, not a.shape) for a in avals]))
    try:
        ent = _FREE.get(key)
    except TypeError:      # an unhashable static value
        return None
    if ent is None:
        st = _staged_jaxpr(body, tuple(avals), skey)
        ent = _ShapeFree(st) if _pointwise_at(st, shape) else False
        if len(_FREE) >= _FREE_MAX:
            _FREE.clear()
        _FREE[key] = ent
    if ent is False:
        return None
    per = ent.shapes.get(shape)
    st = ent.st
    if per is None:
        out_avals = [a if not a.shape else a.update(shape=shape) for a in st.closed.out_avals]
        per = [float(backend.eager_by_op(st.closed, avals)), out_avals]   # (sized by the operands: consts are 0-d)
        if len(ent.shapes) >= _SHAPES_MAX:
            ent.shapes.clear()
        ent.shapes[shape] = per
    left = per[0]
    if left > 0:
        t0 = time.perf_counter()
        outs = backend.run_by_op(st.closed, st.consts, raw, left, per[1])
        per[0] = left - (time.perf_counter() - t0) if outs is not None else 0.0
        if outs is not None:
            return outs
    exact = _staged_jaxpr(body, tuple(avals), skey)     # (spent: staged at this shape, compiled)
    if exact.by_op is None:
        exact.by_op = 0.0
    return None


def _pointwise_at(st, shape):
    """Whether staged call `st` is pointwise at `shape` (see `_ShapeFree`)."""
    j = st.closed.jaxpr
    return (all(not v.aval.shape for v in j.invars[:len(st.consts)])
            and _pointwise_jaxpr(j, shape))


def _pointwise_jaxpr(j, shape):
    from .custom_derivatives import custom_jvp_call_p, custom_vjp_call_p, stop_gradient_p
    from .primitives import elementwise as E
    from .primitives.bits import bitcast_convert_type_p

    def ok(a):
        return a.shape == () or a.shape == shape
    if not all(ok(v.aval) for v in list(j.constvars) + list(j.invars) + list(j.outvars)):
        return False
    for eqn in j.eqns:
        p = eqn.prim
        ins = [v.aval for v in eqn.invars]
        outs = [v.aval for v in eqn.outvars]
        if not all(map(ok, ins)) or not all(map(ok, outs)):
            return False
        if getattr(E, p.name + "_p", None) is p or p is bitcast_convert_type_p or p is stop_gradient_p:
            want = shape if any(a.shape for a in ins) else ()
            if len(outs) != 1 or outs[0].shape != want:
                return False
        elif p is jit_p or p is custom_jvp_call_p or p is custom_vjp_call_p:
            inner = eqn.params["jaxpr" if p is jit_p else "call_jaxpr"]
            ij = inner.jaxpr
            if (any(np.shape(c) for c in inner.consts) or len(ij.invars) != len(ins)
                    or any(v.aval.shape != a.shape for v, a in zip(ij.invars, ins))
                    or any(v.aval.shape != a.shape for v, a in zip(ij.outvars, outs))
                    or not _pointwise_jaxpr(ij, shape)):
                return False
        else:
            return False
    return True


def _clear_staged():
    """Forget every staged body (the exact-shape cache, the last call per body, the shape-free entries
    with their budgets)."""
    _staged_clear()
    _LAST.clear()
    _FREE.clear()
    for fn in _CLEAR_HOOKS:
        fn()


_staged_clear = _staged_jaxpr.cache_clear
_staged_jaxpr.cache_clear = _clear_staged   # (tests' fresh budgets clear both)


# ------------------------------------------------------------------------- jit_p rules

abstract_eval_rules[jit_p] = lambda *avals, name, jaxpr: list(jaxpr.out_avals)


def _instantiate_mask(instantiate, n):
    return (bool(instantiate),) * n if isinstance(instantiate, bool) else tuple(instantiate)


@functools.lru_cache(maxsize=1024)
def jvp_jaxpr(closed, nonzeros, instantiate=True):
    """jvp of a jaxpr: (primals, the nonzero tangents) -> (outputs, the output tangents that are not Zero).

    nonzeros: per input, whether it has a tangent. instantiate: True (every differentiable output
    gets a tangent, zeros where it has none: what `jvp_flat` does), False (symbolic Zero stays
    Zero), or a tuple per output (True: a zero tangent is materialised, whatever the dtype).
    Returns (ClosedJaxpr, which outputs have a tangent).
    """
    n = len(nonzeros)
    t_avals = [a.strip_weak() for a, nz in zip(closed.in_avals, nonzeros) if nz]
    per_output = not isinstance(instantiate, bool)
    out_nz = []

    def f(*args):
        primals, ts = args[:n], iter(args[n:])
        tangents = [next(ts) if nz else Zero for nz in nonzeros]
        out_p, out_t = jvp_flat(run_jaxpr(closed), primals, tangents,
                                instantiate_zeros=False if per_output else instantiate)
        if per_output:
            out_t = [zeros_of_aval(get_aval(p).strip_weak()) if (t is Zero and inst) else t
                     for p, t, inst in zip(out_p, out_t, instantiate)]
        out_nz[:] = [t is not Zero for t in out_t]
        return list(out_p) + [t for t in out_t if t is not Zero]
    new = stage(f, list(closed.in_avals) + t_avals)
    return new, tuple(out_nz)


def _jit_jvp(primals, tangents, *, jaxpr, name):
    nonzeros = tuple(t is not Zero for t in tangents)
    new, out_has_t = jvp_jaxpr(jaxpr, nonzeros)
    outs = call_jaxpr(new, list(primals) + [t for t in tangents if t is not Zero], f"jvp({name})")
    n = len(out_has_t)
    it = iter(outs[n:])
    return outs[:n], [next(it) if h else Zero for h in out_has_t]


def batch_jaxpr(closed, dims, axis_size, force=None):
    """vmap of a jaxpr whose inputs carry the batch axis at `dims`; see _batch_jaxpr. Cached per axis
    name too (the name of the vmap whose rule runs this): it changes what collectives in the body become."""
    return _batch_jaxpr(closed, tuple(dims), axis_size, None if force is None else tuple(force),
                        rule_axis_name())


@functools.lru_cache(maxsize=1024)
def _batch_jaxpr(closed, dims, axis_size, force, axis_name):
    """vmap of a jaxpr whose inputs carry the batch axis at `dims` (per input: an axis or None).

    force: None (each output keeps the batch axis it comes out with, or none) or a tuple per
    output: True (batched at axis 0, broadcast if it came out unbatched), False (must come out
    unbatched), None (at axis 0 if batched at all).
    Returns (ClosedJaxpr, the batch axis of each output or None).
    """
    avals = []
    for a, d in zip(closed.in_avals, dims):
        shape = list(a.shape)
        if d is not None:
            shape.insert(d, axis_size)
        avals.append(a.update(shape=tuple(shape)))
    out_dims = []

    def f(*args):
        outs, od = vmap_flat(run_jaxpr(closed), args, dims, axis_size, axis_name)
        if force is not None:
            res = []
            for k, (o, d) in enumerate(zip(outs, od)):
                want = d is not None if force[k] is None else force[k]
                if not want and d is not None:
                    raise AssertionError("internal: an output forced unbatched came out batched")
                res.append(move_to(o, d, 0, axis_size) if want else o)
                od[k] = 0 if want else None
            outs = res
        out_dims[:] = od
        return outs
    return stage(f, avals), tuple(out_dims)


def _jit_batch(axis_size, vals, dims, *, jaxpr, name):
    new, out_dims = batch_jaxpr(jaxpr, tuple(dims), axis_size)
    return call_jaxpr(new, vals, f"vmap({name})"), list(out_dims)


@functools.lru_cache(maxsize=1024)
def partial_eval_jaxpr(closed, unknowns, instantiate=False):
    """Split a jaxpr for the given unknown inputs into a known and an unknown part.

    Returns (known, unknown, out_unknown, n_res): `known` takes the known inputs and returns the
    known outputs then the residuals; `unknown` takes the residuals then the unknown inputs and
    returns the unknown outputs. instantiate (a bool, or a tuple per output): outputs made unknown
    even where they are known.
    """
    inst = _instantiate_mask(instantiate, len(closed.out_avals))
    known_tr = StagingTrace(EVAL, stage_all=True)
    unk_tr = StagingTrace(known_tr, stage_all=False)
    args = [unk_tr.new_arg(a) if u else known_tr.new_arg(a) for a, u in zip(closed.in_avals, unknowns)]
    with set_trace(unk_tr):
        outs = eval_jaxpr(closed.jaxpr, closed.consts, *args)
    out_unknown = tuple(bool(i) or (type(o) is StagingTracer and o._trace is unk_tr) for o, i in zip(outs, inst))
    unk = unk_tr.to_jaxpr([o for o, u in zip(outs, out_unknown) if u])
    residuals = unk.consts
    known = known_tr.to_jaxpr([o for o, u in zip(outs, out_unknown) if not u] + list(residuals))
    known = ClosedJaxpr(dce_jaxpr(known.jaxpr), known.consts)
    unk_jaxpr, _ = convert_constvars(unk)
    return known, ClosedJaxpr(dce_jaxpr(unk_jaxpr), []), out_unknown, len(residuals)


def is_unknown_in(trace):
    """The test partial-evaluation rules use: whether an argument is an unknown of `trace`."""
    return lambda a: type(a) is StagingTracer and a._trace is trace


def _jit_partial_eval(trace, args, params):
    jaxpr, name = params["jaxpr"], params["name"]
    unknowns = tuple(map(is_unknown_in(trace), args))
    known, unk, out_unknown, n_res = partial_eval_jaxpr(jaxpr, unknowns)
    with set_trace(trace.parent):
        k_outs = call_jaxpr(known, [a for a, u in zip(args, unknowns) if not u], name)
    n_known = len(k_outs) - n_res
    residuals = k_outs[n_known:]
    u_outs = trace.stage_eqn(jit_p, list(residuals) + [a for a, u in zip(args, unknowns) if u],
                             dict(name=name, jaxpr=unk))
    ki, ui = iter(k_outs[:n_known]), iter(u_outs)
    return [next(ui) if u else next(ki) for u in out_unknown]


@functools.lru_cache(maxsize=1024)
def transpose_jaxpr(closed, linear):
    """Transpose of a jaxpr linear in the inputs marked in `linear`.

    The result takes (the non-linear inputs, in order; a cotangent per output) and returns a
    cotangent per linear input, zeros where it gets none.
    """
    res_avals = [a for a, lin in zip(closed.in_avals, linear) if not lin]
    ct_avals = [a.strip_weak() for a in closed.out_avals]
    lin_avals = [a for a, lin in zip(closed.in_avals, linear) if lin]

    def f(*args):
        res, cts = iter(args[:len(res_avals)]), args[len(res_avals):]
        primals = [UndefPrimal(a) if lin else next(res) for a, lin in zip(closed.in_avals, linear)]
        out = backward_pass(closed.jaxpr, closed.consts, list(cts), primals)
        out = [c for c, lin in zip(out, linear) if lin]
        return [zeros_of_aval(a) if c is Zero else c for c, a in zip(out, lin_avals)]
    return stage(f, res_avals + ct_avals)


def _jit_transpose(cts, *args, jaxpr, name):
    linear = tuple(is_undefined(a) for a in args)
    cts = [zeros_of_aval(a.strip_weak()) if c is Zero else c for c, a in zip(cts, jaxpr.out_avals)]
    new = transpose_jaxpr(jaxpr, linear)
    outs = iter(call_jaxpr(new, [a for a in args if not is_undefined(a)] + cts, f"transpose({name})"))
    return [next(outs) if lin else None for lin in linear]


def carry_fixed_point(flags, out_flags):
    """The loop-carry fixed point of a per-carry property (has a tangent, is batched, is unknown).

    flags: the property of each initial carry; out_flags(flags) -> the property of each carry the
    body returns given those. A carry has the property if it starts with it or the body can give
    it after any number of iterations: the smallest superset of `flags` closed under the body.
    """
    flags = tuple(bool(f) for f in flags)
    while True:
        new = tuple(a or bool(b) for a, b in zip(flags, out_flags(flags)))
        if new == flags:
            return flags
        flags = new


jvp_rules[jit_p] = _jit_jvp
batch_rules[jit_p] = _jit_batch
partial_eval_rules[jit_p] = _jit_partial_eval
transpose_rules[jit_p] = _jit_transpose
