"""Eager while / cond / scan on the CPU: the host program of the loop's one-equation jaxpr (xla/host_program.py),
each body equation on its host kernel, about a microsecond each and no compile -- where host_eager's static rule
says "host" (else the loop's compiled executable: one XLA compile per new shape, tens to hundreds of ms).
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
