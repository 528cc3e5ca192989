"""Eager while / cond / scan on the CPU: the loop in Python, each body equation on its host kernel.

Why: an eager control-flow primitive used to compile one XLA executable per (params, shapes) -- tens
to hundreds of ms -- and a staged composite holding a loop (xp.special.betainc's continued fraction,
reached by scipy.stats.pearsonr) compiled at once. On the CPU, where every equation of the cond/body
jaxprs has a host kernel (nested loops count when their own bodies do), running the loop here costs
about a microsecond per equation and compiles nothing. The bodies run on NumPy arrays as host programs
(xla/host_program.py: steps prepared once per jaxpr, no bind, no boxing per equation). Whether a loop
runs here or as its compiled executable is host_eager's static rule ("host" or not), decided from the
signature alone: a loop never changes its way midway, so its result is a function of its operands.
"""
from __future__ import annotations

from transforms.control_flow import cond_p, scan_p, while_p
from transforms.core import get_aval, impl_rules

from . import host, host_eager, runtime
from .host_program import program


def _while_np(vals, params):
    nc, nb = params["cond_nconsts"], params["body_nconsts"]
    cond, body = program(params["cond_jaxpr"]).run, program(params["body_jaxpr"]).run
    cconsts, bconsts, carry = list(vals[:nc]), list(vals[nc:nc + nb]), list(vals[nc + nb:])
    while cond(cconsts + carry)[0]:
        carry = body(bconsts + carry)
    return carry


def _cond_np(vals, params):
    branches = params["branches"]
    i = min(max(int(vals[0]), 0), len(branches) - 1)   # clamped, as the lowering does
    return program(branches[i]).run(list(vals[1:]))


def _scan_np(vals, params):
    nc, ncar, length = params["num_consts"], params["num_carry"], params["length"]
    j = params["jaxpr"]
    body = program(j).run
    consts, carry, xs = list(vals[:nc]), list(vals[nc:nc + ncar]), vals[nc + ncar:]
    y_avals = j.out_avals[ncar:]
    ys = [host.aligned_empty((length,) + a.shape, a.dtype) for a in y_avals]
    for i in (range(length - 1, -1, -1) if params["reverse"] else range(length)):
        outs = body(consts + carry + [x[i, ...] for x in xs])
        carry = outs[:ncar]
        for buf, y in zip(ys, outs[ncar:]):
            buf[i] = y
    return carry + ys


_LOOPS_NP = {while_p: _while_np, cond_p: _cond_np, scan_p: _scan_np}


def _aval_of(v):
    a = getattr(v, "aval", None)
    return a if a is not None else get_aval(v)


def _make(prim, xla_impl):
    run = _LOOPS_NP[prim]

    def impl(*args, **params):
        if not runtime._kernels_on():
            return xla_impl(*args, **params)
        avals = [_aval_of(a) for a in args]
        if host_eager.way(host_eager.inner_jaxprs(prim, params), avals, loop=prim is not cond_p) != "host":
            return xla_impl(*args, **params)
        outs = host.run_quiet(run, ([runtime._np_of(a) for a in args], params), {})
        return [runtime._box_host(o, a, prim) for o, a in zip(outs, runtime._out_avals(prim, args, params))]
    return impl


def register():
    """Install the eager impls of while_p, cond_p and scan_p (each wraps the single-executable impl)."""
    for prim in (while_p, cond_p, scan_p):
        impl_rules[prim] = _make(prim, runtime._make_impl(prim))
