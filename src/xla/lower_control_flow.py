"""Lowering of the control-flow primitives: cond -> stablehlo.case, while and scan -> stablehlo.while.

Branch regions of `case` read the operands from the enclosing scope (as JAX does); loop
constants travel in the `while` state, so loop regions only use their block arguments.
A scan's state is (counter, consts, carry, xs, ys buffers): each iteration reads x with
dynamic_slice and writes y with dynamic_update_slice at the (possibly reversed) counter.
"""
from __future__ import annotations

import numpy as np

from transforms.control_flow import cond_p, scan_p, while_p

from ._jaxlib import hlo
from .lowering import constant, fill_region, jaxpr_subcomp, lowering_rules, tensor_type, ttype


def _cond(c, index, *ops, branches):
    n = len(branches)
    if n == 1:
        return jaxpr_subcomp(branches[0].jaxpr, branches[0].consts, list(ops))
    # clamp like switch does (stablehlo.case alone sends every out-of-range index to the last branch)
    index = hlo.ClampOp(constant(0, np.int32), index, constant(n - 1, np.int32)).result
    case = hlo.CaseOp([ttype(a) for a in c.avals_out], index, num_branches=n)
    for region, br in zip(case.branches, branches):
        fill_region(region, [], lambda br=br: jaxpr_subcomp(br.jaxpr, br.consts, list(ops)))
    return list(case.results)


def _while(c, *args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    nc, nb = cond_nconsts, body_nconsts
    types = [ttype(a) for a in c.avals_in]
    w = hlo.WhileOp(types, list(args))

    def cond_fn(*a):
        return jaxpr_subcomp(cond_jaxpr.jaxpr, cond_jaxpr.consts, list(a[:nc]) + list(a[nc + nb:]))

    def body_fn(*a):
        return list(a[:nc + nb]) + jaxpr_subcomp(body_jaxpr.jaxpr, body_jaxpr.consts, list(a[nc:]))
    fill_region(w.cond, types, cond_fn)
    fill_region(w.body, types, body_fn)
    return list(w.results)[nc + nb:]


def _lt(x, y):
    return hlo.CompareOp(x, y, hlo.ComparisonDirectionAttr.get("LT"),
                         compare_type=hlo.ComparisonTypeAttr.get("SIGNED")).result


def _scan(c, *args, jaxpr, num_consts, num_carry, length, reverse):
    nc, ncar = num_consts, num_carry
    init, xs = list(args[nc:nc + ncar]), list(args[nc + ncar:])
    x_avals = c.avals_in[nc + ncar:]
    y_avals = c.avals_out[ncar:]
    ys0 = [hlo.BroadcastInDimOp(ttype(a), constant(0, a.dtype), broadcast_dimensions=[]).result for a in y_avals]
    if length == 0:
        return init + ys0
    i32 = tensor_type((), np.int32)
    types = [i32] + [ttype(a) for a in c.avals_in] + [ttype(a) for a in y_avals]
    w = hlo.WhileOp(types, [constant(0, np.int32)] + list(args) + ys0)
    nx = len(xs)

    def cond_fn(i, *rest):
        return [_lt(i, constant(length, np.int32))]

    def body_fn(i, *rest):
        cs, carry = rest[:nc], rest[nc:nc + ncar]
        xs_, ys = rest[nc + ncar:nc + ncar + nx], rest[nc + ncar + nx:]
        idx = hlo.SubtractOp(constant(length - 1, np.int32), i).result if reverse else i
        zero = constant(0, np.int32)
        x_sl = []
        for x, a in zip(xs_, x_avals):
            sl = hlo.DynamicSliceOp(x, [idx] + [zero] * (a.ndim - 1), [1] + list(a.shape[1:])).result
            x_sl.append(hlo.ReshapeOp(tensor_type(a.shape[1:], a.dtype), sl).result)
        outs = jaxpr_subcomp(jaxpr.jaxpr, jaxpr.consts, list(cs) + list(carry) + x_sl)
        new_carry, y = outs[:ncar], outs[ncar:]
        new_ys = []
        for buf, yv, a in zip(ys, y, y_avals):
            upd = hlo.ReshapeOp(tensor_type((1,) + a.shape[1:], a.dtype), yv).result
            new_ys.append(hlo.DynamicUpdateSliceOp(buf, upd, [idx] + [zero] * (a.ndim - 1)).result)
        return [hlo.AddOp(i, constant(1, np.int32)).result, *cs, *new_carry, *xs_, *new_ys]
    fill_region(w.cond, types, cond_fn)
    fill_region(w.body, types, body_fn)
    res = list(w.results)
    return res[1 + nc:1 + nc + ncar] + res[1 + nc + ncar + nx:]


lowering_rules[cond_p] = _cond
lowering_rules[while_p] = _while
lowering_rules[scan_p] = _scan

from . import host_control_flow  # noqa: E402  (their eager impls: on host kernels on the CPU, else these lowerings)

host_control_flow.register()
