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

from .core import EVAL, Primitive, abstract_eval_rules, bind, current_trace, get_aval, set_trace
from .jaxpr import ClosedJaxpr, eval_jaxpr
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


@functools.lru_cache(maxsize=512)
def _staged_jaxpr(body, avals, static):
    def flat(*args):
        out = body(*args, **dict(static))
        return list(out) if isinstance(out, (tuple, list)) else [out]
    return stage(flat, list(avals))


def staged_call(body, raw, name, **static):
    """Run a raw-value `body(*raw, **static)` as one staged call (a jit_p equation), staged once
    per input signature and static params: eagerly one cached executable instead of many
    single-op dispatches, under transforms an ordinary jit_p. Returns the list of outputs."""
    avals = tuple(get_aval(v) for v in raw)
    closed = _staged_jaxpr(body, avals, tuple(sorted(static.items())))
    return call_jaxpr(closed, list(raw), name)


# ------------------------------------------------------------------------- jit_p rules

abstract_eval_rules[jit_p] = lambda *avals, name, jaxpr: list(jaxpr.out_avals)


@functools.lru_cache(maxsize=512)
def jvp_jaxpr(closed, nonzeros):
    from .ad import jvp_flat
    n = len(nonzeros)
    in_avals = closed.in_avals
    t_avals = [a.strip_weak() for a, nz in zip(in_avals, nonzeros) if nz]
    out_has_t = []

    def f(*args):
        primals, ts = args[:n], iter(args[n:])
        tangents = [next(ts) if nz else Zero for nz in nonzeros]
        out_p, out_t = jvp_flat(lambda *a: eval_jaxpr(closed.jaxpr, closed.consts, *a), primals, tangents)
        out_has_t[:] = [t is not Zero for t in out_t]
        return list(out_p) + [t for t in out_t if t is not Zero]
    new = stage(f, list(in_avals) + t_avals)
    return new, tuple(out_has_t)


def _jit_jvp(primals, tangents, *, jaxpr, name):
    nonzeros = tuple(t is not Zero for t in tangents)
    new, out_has_t = jvp_jaxpr(jaxpr, nonzeros)
    outs = call_jaxpr(new, list(primals) + [t for t in tangents if t is not Zero], f"jvp({name})")
    n = len(out_has_t)
    it = iter(outs[n:])
    return outs[:n], [next(it) if h else Zero for h in out_has_t]


@functools.lru_cache(maxsize=512)
def batch_jaxpr(closed, dims, axis_size):
    from .batching import vmap_flat
    avals = []
    for a, d in zip(closed.in_avals, dims):
        shape = list(a.shape)
        if d is not None:
            shape.insert(d, axis_size)
        avals.append(a.update(shape=tuple(shape)))
    out_dims = []

    def f(*args):
        outs, od = vmap_flat(lambda *a: eval_jaxpr(closed.jaxpr, closed.consts, *a), args, dims, axis_size)
        out_dims[:] = od
        return outs
    return stage(f, avals), tuple(out_dims)


def _jit_batch(axis_size, vals, dims, *, jaxpr, name):
    new, out_dims = batch_jaxpr(jaxpr, tuple(dims), axis_size)
    return call_jaxpr(new, vals, f"vmap({name})"), list(out_dims)


@functools.lru_cache(maxsize=512)
def partial_eval_jaxpr(closed, unknowns):
    """Split a jaxpr into a known part (outputs + residuals) and an unknown part (residuals + unknowns)."""
    known_tr = StagingTrace(EVAL, stage_all=True)
    unk_tr = StagingTrace(known_tr, stage_all=False)
    args = [unk_tr.new_arg(a) if u else known_tr.new_arg(a) for a, u in zip(closed.in_avals, unknowns)]
    with set_trace(unk_tr):
        outs = eval_jaxpr(closed.jaxpr, closed.consts, *args)
    out_unknown = tuple(type(o) is StagingTracer and o._trace is unk_tr for o in outs)
    unk = unk_tr.to_jaxpr([o for o, u in zip(outs, out_unknown) if u])
    residuals = unk.consts
    known = known_tr.to_jaxpr([o for o, u in zip(outs, out_unknown) if not u] + list(residuals))
    unk_jaxpr, _ = convert_constvars(unk)
    return known, ClosedJaxpr(unk_jaxpr, []), out_unknown, len(residuals)


def _jit_partial_eval(trace, args, params):
    jaxpr, name = params["jaxpr"], params["name"]
    unknowns = tuple(type(a) is StagingTracer and a._trace is trace for a in args)
    known, unk, out_unknown, n_res = partial_eval_jaxpr(jaxpr, unknowns)
    with set_trace(trace.parent):
        k_outs = call_jaxpr(known, [a for a, u in zip(args, unknowns) if not u], name)
    n_known = len(k_outs) - n_res
    residuals = k_outs[n_known:]
    u_outs = trace.stage_eqn(jit_p, list(residuals) + [a for a, u in zip(args, unknowns) if u],
                             dict(name=name, jaxpr=unk))
    ki, ui = iter(k_outs[:n_known]), iter(u_outs)
    return [next(ui) if u else next(ki) for u in out_unknown]


@functools.lru_cache(maxsize=512)
def transpose_jaxpr(closed, linear):
    from .ad import backward_pass
    from .primitives.structural import zeros_of_aval
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
    from .primitives.structural import zeros_of_aval
    linear = tuple(is_undefined(a) for a in args)
    cts = [zeros_of_aval(a.strip_weak()) if c is Zero else c for c, a in zip(cts, jaxpr.out_avals)]
    new = transpose_jaxpr(jaxpr, linear)
    outs = iter(call_jaxpr(new, [a for a in args if not is_undefined(a)] + cts, f"transpose({name})"))
    return [next(outs) if lin else None for lin in linear]


jvp_rules[jit_p] = _jit_jvp
batch_rules[jit_p] = _jit_batch
partial_eval_rules[jit_p] = _jit_partial_eval
transpose_rules[jit_p] = _jit_transpose
