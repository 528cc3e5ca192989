"""Lowering of the bits family (transforms/primitives/bits.py): stablehlo.bitcast_convert."""
from __future__ import annotations

from transforms.primitives import bits as B

from ._jaxlib import hlo
from .host import host_kernels
from .lowering import lowering_rules, ttype


def _bitcast(c, x, *, new_dtype):
    a, out = c.avals_in[0], c.avals_out[0]
    if a.dtype == out.dtype:
        return x
    return hlo.BitcastConvertOp(ttype(out), x).result


lowering_rules[B.bitcast_convert_type_p] = _bitcast

host_kernels[B.bitcast_convert_type_p] = lambda x, *, new_dtype: x.view(new_dtype)
