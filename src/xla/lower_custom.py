"""Lowering of stop_gradient, custom derivative calls and checkpoint: identity or inlined calls."""
from __future__ import annotations

from transforms.core import impl_rules
from transforms.custom_derivatives import custom_jvp_call_p, custom_lin_p, custom_vjp_call_p, stop_gradient_p
from transforms.remat import checkpoint_p

from .lowering import jaxpr_subcomp, lowering_rules

lowering_rules[stop_gradient_p] = lambda c, x: x
impl_rules[stop_gradient_p] = lambda x: x   # eagerly the value itself (no executable compiled per shape)
lowering_rules[custom_jvp_call_p] = lambda c, *args, name, call_jaxpr, jvp: jaxpr_subcomp(
    call_jaxpr.jaxpr, call_jaxpr.consts, list(args))
lowering_rules[custom_vjp_call_p] = lambda c, *args, name, call_jaxpr, fwd, bwd: jaxpr_subcomp(
    call_jaxpr.jaxpr, call_jaxpr.consts, list(args))
lowering_rules[checkpoint_p] = lambda c, *args, name, jaxpr, policy: jaxpr_subcomp(
    jaxpr.jaxpr, jaxpr.consts, list(args))


def _custom_lin(c, *args, num_res, bwd, out_avals):
    from transforms.custom_derivatives import _custom_lin_impl
    return _custom_lin_impl(*args, num_res=num_res, bwd=bwd, out_avals=out_avals)


lowering_rules[custom_lin_p] = _custom_lin
