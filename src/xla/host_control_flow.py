"""Eager while / cond / scan on the CPU: the loop in Python, each body equation on its host kernel.

Why: an eager control-flow primitive used to compile one XLA executable per (params, shapes) -- tens
to hundreds of ms -- and a staged composite holding a loop (xp.special.betainc's continued fraction,
reached by scipy.stats.pearsonr) compiled at once. On the CPU, where every equation of the cond/body
jaxprs has a host kernel (host_eager.budget_for; nested loops count when their own bodies do),
running the loop here costs about a microsecond per equation and compiles nothing. The bodies run
on NumPy arrays as host programs (xla/host_program.py: steps prepared once per jaxpr, no bind, no
boxing per equation; what the eager impls do per equation -- dtype of the result, a kernel declining
a value -- is done there too; loops nested in a body run in place there).
As for staged composites, a signature (params, operand types) may spend about one compile's time so;
once spent -- also in the middle of a long loop, nested ones included -- it runs as the compiled
executable, so a hot loop pays at most about twice the better choice. Elsewhere (an accelerator, a
body with a primitive lacking a host kernel, a kernel declining a dtype, large operands) the
executable runs as before.
"""
from __future__ import annotations

import time

from transforms.control_flow import cond_p, scan_p, while_p
from transforms.core import get_aval, impl_rules
from transforms.jaxpr_transforms import jit_p

from . import host, host_eager, runtime
from .host_program import OverBudget, program

_perf = time.perf_counter


def _while_np(vals, params, deadline, state=None):
    nc, nb = params["cond_nconsts"], params["body_nconsts"]
    cond, body = program(params["cond_jaxpr"]).run, program(params["body_jaxpr"]).run
    cconsts, bconsts, carry = list(vals[:nc]), list(vals[nc:nc + nb]), list(vals[nc + nb:])
    while cond(cconsts + carry, deadline)[0]:
        carry = body(bconsts + carry, deadline)
        if state is not None:
            state[0] = carry
        if _perf() > deadline:
            raise OverBudget
    return carry


def _cond_np(vals, params, deadline):
    branches = params["branches"]
    i = min(max(int(vals[0]), 0), len(branches) - 1)   # clamped, as the lowering does
    return program(branches[i]).run(list(vals[1:]), deadline)


def _scan_np(vals, params, deadline):
    nc, ncar, length = params["num_consts"], params["num_carry"], params["length"]
    j = params["jaxpr"]
    body = program(j).run
    consts, carry, xs = list(vals[:nc]), list(vals[nc:nc + ncar]), vals[nc + ncar:]
    y_avals = j.out_avals[ncar:]
    ys = [host.aligned_empty((length,) + a.shape, a.dtype) for a in y_avals]
    for i in (range(length - 1, -1, -1) if params["reverse"] else range(length)):
        outs = body(consts + carry + [x[i, ...] for x in xs], deadline)
        carry = outs[:ncar]
        for buf, y in zip(ys, outs[ncar:]):
            buf[i] = y
        if _perf() > deadline:
            raise OverBudget
    return carry + ys


_LOOPS_NP = {while_p: _while_np, cond_p: _cond_np, scan_p: _scan_np}


# ----------------------------------------------------------------------------- eager impls

def _aval_of(v):
    a = getattr(v, "aval", None)
    return a if a is not None else get_aval(v)


def _key(prim, args, params):
    """The signature of an eager loop (its budget's key in host_eager's store) and its operand avals."""
    avals = [_aval_of(a) for a in args]
    return (prim, tuple(params.items()), *avals), avals


def _boxed(outs, avals, prim):
    return [runtime._box_host(o, a, prim) for o, a in zip(outs, avals)]


def _make(prim, xla_impl):
    run = _LOOPS_NP[prim]

    def impl(*args, **params):
        if not runtime._kernels_on():
            return xla_impl(*args, **params)
        key, avals = _key(prim, args, params)
        left = host_eager.op_budget(key, lambda: host_eager.budget_for(host_eager.inner_jaxprs(prim, params),
                                                                        avals, loop=prim is not cond_p))
        if left <= 0:
            return xla_impl(*args, **params)
        vals = [runtime._np_of(a) for a in args]
        t0 = _perf()
        state = [None]
        try:
            if prim is while_p:
                outs = host.run_quiet(run, (vals, params, t0 + left, state), {})
            else:
                outs = host.run_quiet(run, (vals, params, t0 + left), {})
        except OverBudget:
            host_eager.set_op_budget(key, 0.0)
            if prim is while_p and state[0] is not None:   # the compiled loop goes on from the last iteration
                n = len(args) - len(state[0])
                carry = _boxed(state[0], avals[n:], prim)
                return xla_impl(*args[:n], *carry, **params)
            return xla_impl(*args, **params)   # (a scan or a cond starts again, compiled)
        host_eager.set_op_budget(key, left - (_perf() - t0))
        return _boxed(outs, runtime._out_avals(prim, args, params), prim)
    return impl


def run_by_op(closed, consts, raw, seconds, out_avals=None):
    """A staged body (`closed`, constants first) run eagerly on host kernels op by op, on NumPy arrays
    (its host program, xla/host_program.py: what `_Staged.eager` does with eval_inline, several times as
    fast per equation); its loops give up once `seconds` have passed. Returns the output values, or None
    when the time ran out (the caller compiles). out_avals: the outputs' avals where not closed's own (a
    pointwise body run on operands of another shape: transforms.jaxpr_transforms._ShapeFree)."""
    vals = [runtime._np_of(v) for v in raw]
    cvals = [runtime._np_of(c) for c in consts]
    try:
        outs = host.run_quiet(program(closed).run, (cvals + vals, _perf() + seconds), {})
    except OverBudget:
        return None
    if out_avals is None:
        out_avals = [v.aval for v in closed.jaxpr.outvars]
    return [runtime._box_host(o, a, jit_p) for o, a in zip(outs, out_avals)]


def register():
    """Install the eager impls of while_p, cond_p and scan_p (each wraps the single-executable impl)."""
    for prim in (while_p, cond_p, scan_p):
        impl_rules[prim] = _make(prim, runtime._make_impl(prim))
