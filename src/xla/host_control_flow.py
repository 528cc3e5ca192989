"""Eager while / cond / scan on the CPU: the loop in Python, each body equation on its host kernel.

Why: an eager control-flow primitive used to compile one XLA executable per (params, shapes) -- tens
to hundreds of ms -- and a staged composite holding a loop (xp.special.betainc's continued fraction,
reached by scipy.stats.pearsonr) compiled at once. On the CPU, where every equation of the cond/body
jaxprs has a host kernel (nested loops count when their own bodies do), running the loop here costs
about a microsecond per equation and compiles nothing. The loop runs as the host program of its
one-equation jaxpr (xla/host_program.py: steps prepared once per jaxpr, no bind, no boxing per equation). Whether a loop
runs here or as its compiled executable is host_eager's static rule ("host" or not), decided from the
signature alone: a loop never changes its way midway, so its result is a function of its operands.
"""
from __future__ import annotations

import functools

from transforms.control_flow import cond_p, scan_p, while_p
from transforms.core import get_aval, impl_rules

from . import host_eager, host_program, runtime


@functools.lru_cache(maxsize=256)
def _single(prim, params, avals):
    """The one-equation jaxpr of `prim` (params: its items) on operands of `avals`."""
    return runtime.single_jaxpr(prim, list(avals), dict(params))


def _make(prim, xla_impl):
    def impl(*args, **params):
        if runtime._kernels_on():
            closed = _single(prim, tuple(params.items()), tuple(map(get_aval, args)))
            if host_eager.eager_way(closed) == "host":
                outs = host_program.run(closed, [runtime._np_of(a) for a in args])
                return [runtime._box_host(o, v.aval, prim) for o, v in zip(outs, closed.jaxpr.outvars)]
        return xla_impl(*args, **params)
    return impl


def register():
    """Install the eager impls of while_p, cond_p and scan_p (each wraps the single-executable impl)."""
    for prim in (while_p, cond_p, scan_p):
        impl_rules[prim] = _make(prim, runtime._make_impl(prim))
