"""Lowering of the gamma family: CHLO's lgamma/digamma/polygamma/zeta ops (XLA expands them)."""
from __future__ import annotations

from transforms.primitives import special_gamma as G

from ._jaxlib import chlo
from .lower_elementwise import _nary
from .lowering import lowering_rules

lowering_rules[G.lgamma_p] = _nary(chlo.LgammaOp)
lowering_rules[G.digamma_p] = _nary(chlo.DigammaOp)
lowering_rules[G.polygamma_p] = _nary(chlo.PolygammaOp)
lowering_rules[G.zeta_p] = _nary(chlo.ZetaOp)
