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
    """One staged body at one signature: its constant-free jaxpr, the constants, and how an eager call
    runs, decided once from static facts (`way`; never a clock or a call count, so an eager call's
    bits are a function of the call): the backend's `eager_way` says "host" (its host program: every
    equation on a host kernel, no compile), "bind" (the equations bound one by one, as the unstaged
    body would be) or "compile" (the executable compiled on first need, run directly with no bind).
    by_op=False: always compiled eagerly; by_op="always" (a body whose eager results must stay those
    of its kernels, bit for bit): never compiled eagerly ("compile" becomes "bind"). The way is kept per
    by_op value (`ways`), so callers staging one body with different by_op never share a stale one."""
    __slots__ = ("closed", "consts", "exe", "const_bufs", "ways")

    def __init__(self, closed):
        if closed.consts:
            jaxpr, consts = convert_constvars(closed)
            closed = ClosedJaxpr(jaxpr, [])
        else:
            consts = []
        self.closed, self.consts, self.exe, self.const_bufs = closed, list(consts), None, None
        self.ways = {}   # by_op -> the way

    def eager(self, raw, name, by_op=False):
        """The outputs, run eagerly; None where the bind path must run (no backend, or a value that
        is not a device buffer, e.g. a Python scalar, on the compiled path)."""
        way = self.ways.get(by_op)
        if way is None:
            way = "compile" if not by_op else backend.eager_way(self.closed)
            if by_op == "always" and way == "compile":
                way = "bind"
            self.ways[by_op] = way
        if way == "host":
            return backend.run_by_op(self.closed, self.consts, raw)
        if way == "bind":
            return eval_inline(self.closed.jaxpr, self.consts, raw)
        buf, conv = boxing.buffer_type, boxing.as_buffer
        exe = self.exe
        if buf is None or exe is False:
            return None
        args = [v if v.__class__ is buf else conv(v) for v in raw]
        for a in args:
            if a.__class__ is not buf:
                return None
        if exe is None:
            bufs = [c if type(c) is buf else conv(c) for c in self.consts]
            if any(type(c) is not buf for c in bufs):
                self.exe = False
                return None
            self.const_bufs = bufs
            exe = self.exe = backend.compile_jaxpr(self.closed, (), name)
        return exe(self.const_bufs + args if self.const_bufs else args)


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
    shape costs no staging and no program build (`shapes`: shape -> (whether the backend's way there is
    "host", its output avals)); where it is not (an accelerator, large operands), the call is staged at
    its exact shape and runs by that entry's way (`_Staged`)."""
    __slots__ = ("st", "shapes")

    def __init__(self, st):
        self.st, self.shapes = st, {}


_FREE: dict = {}      # (body, static, (dtype, weak_type, 0-d) per operand) -> _ShapeFree, or False (not pointwise)
_FREE_MAX, _SHAPES_MAX = 512, 1024


def _eager_shape_free(body, raw, name, skey):
    """The outputs of a shape_free by_op staged call run eagerly on its template's host program, or None
    (the exact-shape path runs: no backend run, operands of different non-0-d shapes, all operands 0-d,
    a body not pointwise, a way other than "host" at this shape)."""
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
        # (how this shape runs: the template's way at these operands -- consts are 0-d -- decided once)
        out_avals = [a if not a.shape else a.update(shape=shape) for a in st.closed.out_avals]
        per = (backend.eager_way(st.closed, avals) == "host", out_avals)
        if len(ent.shapes) >= _SHAPES_MAX:
            ent.shapes.clear()
        ent.shapes[shape] = per
    if per[0]:
        return backend.run_by_op(st.closed, st.consts, raw, per[1])
    return None          # (the exact-shape staged call runs, by its own static way)


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
