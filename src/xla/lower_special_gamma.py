"""Lowering of the gamma family: CHLO's lgamma/digamma/zeta ops (XLA expands them), and the
composite primitives (zeta, polygamma, incomplete gamma), whose `*_impl` compositions from
transforms/primitives/special_gamma.py are staged once per operand type and inlined."""
from __future__ import annotations

import functools

from transforms.jit import stage
from transforms.primitives import special_gamma as G

from ._jaxlib import chlo
from .lower_elementwise import _nary
from .lowering import jaxpr_subcomp, lowering_rules

lowering_rules[G.lgamma_p] = _nary(chlo.LgammaOp)
lowering_rules[G.digamma_p] = _nary(chlo.DigammaOp)
lowering_rules[G.zeta_chlo_p] = _nary(chlo.ZetaOp)


@functools.lru_cache(maxsize=256)
def _staged(impl, avals):
    return stage(lambda *a: [impl(*a)], list(avals))


def _composite(impl):
    def rule(c, *args):
        closed = _staged(impl, tuple(c.avals_in))
        return jaxpr_subcomp(closed.jaxpr, closed.consts, list(args))[0]
    return rule


for _p, _impl in G.COMPOSITES.items():
    lowering_rules[_p] = _composite(_impl)
