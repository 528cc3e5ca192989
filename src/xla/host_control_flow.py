"""Eager while / cond / scan on the CPU: the loop in Python, each body equation on its host kernel.

Why: an eager control-flow primitive used to compile one XLA executable per (params, shapes) -- tens
to hundreds of ms -- and a staged composite holding a loop (xp.special.betainc's continued fraction,
reached by scipy.stats.pearsonr) compiled at once. On the CPU, where every equation of the cond/body
jaxprs has a host kernel (host_eager.all_host; nested loops count when their own bodies do), running
the loop here costs microseconds per equation and compiles nothing. As for staged composites, a
signature (params, operand types) may spend about one compile's time so (host_eager.budget_for);
once spent -- also in the middle of one long loop -- it runs as the compiled executable, so a hot
loop pays at most about twice the better choice. Elsewhere (an accelerator, a body with a primitive
lacking a host kernel, a kernel declining a dtype, large operands) the executable runs as before.
"""
from __future__ import annotations

import time

from transforms.control_flow import cond_p, scan_p, while_p
from transforms.core import ShapedArray, get_aval, impl_rules
from transforms.jaxpr_transforms import eval_inline

from . import host, host_eager, runtime
from .host import HostValue

_perf = time.perf_counter
_sigs: dict = {}     # (prim, params, *avals) -> [seconds of host running left (<= 0: compiled)]
_SIGS_MAX = 4096


def _aval_of(v):
    a = getattr(v, "aval", None)
    return a if a is not None else get_aval(v)


def _budget(prim, args, params):
    """The per-signature state: a one-element list holding the seconds left to run on the host."""
    avals = [_aval_of(a) for a in args]
    try:
        key = (prim, tuple(params.items()), *avals)
        ent = _sigs.get(key)
    except TypeError:    # (an unhashable parameter: decide afresh)
        key, ent = None, None
    if ent is None:
        ent = [host_eager.budget_for(_inner_jaxprs(prim, params), avals)]
        if key is not None:
            if len(_sigs) >= _SIGS_MAX:
                _sigs.clear()
            _sigs[key] = ent
    return ent


def _inner_jaxprs(prim, params):
    return host_eager.inner_jaxprs(prim, params)


def _as(v, aval, prim):
    """`v` as an eager value of exactly `aval` (weak type included: the primitive's abstract result)."""
    if type(v) is HostValue:
        return v if v.aval == aval else HostValue(v.np, aval)
    if getattr(v, "aval", None) == aval:
        return v
    return runtime._box_host(runtime._np_of(v), aval, prim)


def _truth(p):
    return bool(runtime._np_of(p))


# ----------------------------------------------------------------------------------- while

def _make_while(xla_impl):
    def impl(*args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
        params = dict(cond_jaxpr=cond_jaxpr, body_jaxpr=body_jaxpr, cond_nconsts=cond_nconsts,
                      body_nconsts=body_nconsts)
        if not runtime._kernels_on():
            return xla_impl(*args, **params)
        ent = _budget(while_p, args, params)
        left = ent[0]
        if left <= 0:
            return xla_impl(*args, **params)
        nc, nb = cond_nconsts, body_nconsts
        cconsts, bconsts, carry = list(args[:nc]), list(args[nc:nc + nb]), list(args[nc + nb:])
        cj, cc, bj, bcs = cond_jaxpr.jaxpr, cond_jaxpr.consts, body_jaxpr.jaxpr, body_jaxpr.consts
        t0 = _perf()
        done = False
        while _truth(eval_inline(cj, cc, cconsts + carry)[0]):
            carry = eval_inline(bj, bcs, bconsts + carry)
            if _perf() - t0 > left:      # spent in this very call: the compiled loop goes on from here
                break
        else:
            done = True
        ent[0] = left - (_perf() - t0)
        avals = runtime._out_avals(while_p, args, params)
        if not done:
            ent[0] = 0.0
            in_avals = [_aval_of(a) for a in args[nc + nb:]]   # (the signature a later call compiles for)
            carry = xla_impl(*args[:nc + nb], *[_as(v, a, while_p) for v, a in zip(carry, in_avals)], **params)
        return [_as(v, a, while_p) for v, a in zip(carry, avals)]
    return impl


# ------------------------------------------------------------------------------------ cond

def _make_cond(xla_impl):
    def impl(index, *ops, branches):
        if not runtime._kernels_on():
            return xla_impl(index, *ops, branches=branches)
        params = dict(branches=branches)
        ent = _budget(cond_p, (index,) + ops, params)
        left = ent[0]
        if left <= 0:
            return xla_impl(index, *ops, branches=branches)
        i = min(max(int(runtime._np_of(index)), 0), len(branches) - 1)   # clamped, as the lowering does
        br = branches[i]
        t0 = _perf()
        outs = eval_inline(br.jaxpr, br.consts, list(ops))
        ent[0] = left - (_perf() - t0)
        avals = runtime._out_avals(cond_p, (index,) + ops, params)
        return [_as(v, a, cond_p) for v, a in zip(outs, avals)]
    return impl


# ------------------------------------------------------------------------------------ scan

def _slice(x, i, aval):
    return runtime._box_host(runtime._np_of(x)[i, ...], aval, scan_p)


def _make_scan(xla_impl):
    def impl(*args, jaxpr, num_consts, num_carry, length, reverse):
        params = dict(jaxpr=jaxpr, num_consts=num_consts, num_carry=num_carry, length=length, reverse=reverse)
        if not runtime._kernels_on():
            return xla_impl(*args, **params)
        ent = _budget(scan_p, args, params)
        left = ent[0]
        if left <= 0:
            return xla_impl(*args, **params)
        nc, ncar = num_consts, num_carry
        consts, carry, xs = list(args[:nc]), list(args[nc:nc + ncar]), args[nc + ncar:]
        avals = runtime._out_avals(scan_p, args, params)
        y_avals = avals[ncar:]
        x_avals = [ShapedArray(a.shape[1:], a.dtype, a.weak_type) for a in map(_aval_of, xs)]
        ys = [host.aligned_empty(a.shape, a.dtype) for a in y_avals]
        bj, bcs = jaxpr.jaxpr, jaxpr.consts
        t0 = _perf()
        for i in (range(length - 1, -1, -1) if reverse else range(length)):
            outs = eval_inline(bj, bcs, consts + carry + [_slice(x, i, a) for x, a in zip(xs, x_avals)])
            carry = outs[:ncar]
            for buf, y in zip(ys, outs[ncar:]):
                buf[i] = runtime._np_of(y)
            if _perf() - t0 > left:      # spent in this very call: run it compiled (a scan does not resume)
                ent[0] = 0.0
                return xla_impl(*args, **params)
        ent[0] = left - (_perf() - t0)
        return ([_as(v, a, scan_p) for v, a in zip(carry, avals[:ncar])]
                + [runtime._box_host(y, a, scan_p) for y, a in zip(ys, y_avals)])
    return impl


def register():
    """Install the eager impls of while_p, cond_p and scan_p (each wraps the single-executable impl)."""
    for prim, make in ((while_p, _make_while), (cond_p, _make_cond), (scan_p, _make_scan)):
        impl_rules[prim] = make(runtime._make_impl(prim))
