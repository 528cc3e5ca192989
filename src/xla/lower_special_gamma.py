"""Lowering of the gamma family: CHLO's lgamma/digamma/zeta ops (XLA expands them; their host kernels are
scipy.special's gammaln and psi, and a NumPy zeta: xla/host_special.py), and the composite primitives (zeta, polygamma,
incomplete gamma), whose `*_impl` compositions from transforms/primitives/special_gamma.py are staged once
per operand type and inlined -- and, eagerly on the CPU, run op by op on host kernels from that same jaxpr."""
from __future__ import annotations

import functools

import numpy as np

from transforms.jaxpr_transforms import stage
from transforms.primitives import special_gamma as G

from . import host_special as HS
from ._jaxlib import chlo, hlo
from .host import host_kernels
from .lower_elementwise import _cmp, _full, _nary
from .lowering import broadcast_to, jaxpr_subcomp, lowering_rules

lowering_rules[G.lgamma_p] = _nary(chlo.LgammaOp)
lowering_rules[G.digamma_p] = _nary(chlo.DigammaOp)
_zeta = _nary(chlo.ZetaOp)


def _zeta_rule(c, x, q):
    """CHLO's Hurwitz zeta, but for a finite x >= 1e15 and q > 0 the host kernel's (and scipy's) q^-x limit: 0 for
    q > 1, 1 at q = 1, inf below. XLA's series gives NaN there from x ~ 1e16 (jit(polygamma)(1e300, 0.5) was NaN)."""
    a = c.avals_out[0]
    out = _zeta(c, x, q)
    x, q = (broadcast_to(v, av, a) for v, av in zip((x, q), c.avals_in))
    big = hlo.AndOp(hlo.AndOp(_cmp(x, _full(1e15, a), "GE", a.dtype), _cmp(x, _full(np.inf, a), "LT", a.dtype)).result,
                    _cmp(q, _full(0, a), "GT", a.dtype)).result
    one = _cmp(q, _full(1, a), "EQ", a.dtype)
    tail = hlo.SelectOp(_cmp(q, _full(1, a), "GT", a.dtype), _full(0, a),
                        hlo.SelectOp(one, _full(1, a), _full(np.inf, a)).result).result
    return hlo.SelectOp(big, tail, out).result


lowering_rules[G.zeta_chlo_p] = _zeta_rule
host_kernels[G.lgamma_p] = HS.lgamma_kernel
host_kernels[G.digamma_p] = HS.digamma_kernel
host_kernels[G.zeta_chlo_p] = HS.zeta_kernel


@functools.lru_cache(maxsize=64)   # (a staged incomplete-gamma body holds ~0.5 MB)
def _staged(impl, avals):
    return stage(lambda *a: [impl(*a)], list(avals))


def _composite(impl):
    def rule(c, *args):
        closed = _staged(impl, tuple(c.avals_in))
        return jaxpr_subcomp(closed.jaxpr, closed.consts, list(args))[0]
    return rule


for _p, _impl in G.COMPOSITES.items():
    lowering_rules[_p] = _composite(_impl)
    # eagerly on the CPU: the same staged body, op by op on host kernels (xla/host_special.py)
    host_kernels[_p] = HS.composite_kernel(functools.partial(_staged, _impl))


# ------------------------------------------------------------------------------ eager impls
# On the CPU a composite runs its host kernel (the staged body op by op, no compile) while that is
# allowed (every equation has a host kernel, host_eager's time budget per signature). Otherwise --
# accelerators, ARRAY_NAMESPACE_EAGER=xla, a hot signature past its budget -- it compiles, and each
# composite compiles to while loops (seconds of XLA time per operand shape), while eager callers such
# as scipy come with ever-changing shapes: the operands are broadcast, flattened and padded (with
# harmless values) to a power-of-two size of at least MIN_BUCKET, so one compiled program per
# (primitive, dtype, size bucket) serves every shape. The padding costs
# little (the loops run as long as their slowest element anyway; ~0.1 ms for a scalar call).
MIN_BUCKET = 256
_FILL = (1.0, 0.5)


def _bucketed(prim):
    from . import runtime
    from transforms.core import get_aval
    from transforms.primitives import elementwise as E
    from transforms.primitives import structural as S
    base = runtime._make_impl(prim)

    def impl(*args):
        avals = [get_aval(v) for v in args]
        shape = E.broadcast_shapes(*[a.shape for a in avals])
        n = int(np.prod(shape, dtype=np.int64))
        size = max(MIN_BUCKET, 1 << (n - 1).bit_length()) if n else 0
        if n == 0 or (n == size and all(a.shape == (n,) for a in avals)):
            return base(*args)
        flat = []
        for v, av, fill in zip(args, avals, _FILL):
            v = S.reshape(S.broadcast_to_shape(v, shape), (n,))
            flat.append(S.pad(v, E.convert_element_type(fill, av.dtype, av.weak_type), [(0, size - n, 0)]))
        return S.reshape(S.slice_(base(*flat), (0,), (n,)), shape)
    return impl


def _register_impls():
    from transforms.core import impl_rules

    from . import host, runtime
    for p in G.COMPOSITES:
        bucketed = _bucketed(p)
        impl_rules[p] = bucketed if host.MODE == "xla" else runtime._make_host_impl(p, host_kernels[p], bucketed)


_register_impls()
