"""Reductions over static axes: sum, max, min, prod, and, or, argmax, argmin."""
from __future__ import annotations

import numpy as np

from ..core import Primitive, ShapedArray, abstract_eval_rules, bind
from ..rules import Zero, batch_rules, deflinear, jvp_rules, transpose_rules, zero_jvp
from . import elementwise as E
from . import structural as S


_KEPT: dict = {}     # (ndim, axes) -> the axes kept, checked once (a new shape of a known rank and axes: no re-check)
_SCALARS: dict = {}  # (dtype, weak) -> the 0-d aval: a full reduction's result, shared (no new aval per shape)


def _reduce_abstract(out_dtype=None, keep_weak=True):
    def rule(x, *, axes, **params):
        xs = x.shape
        nd = len(xs)
        if type(axes) is not tuple:
            axes = tuple(axes)
        kept = _KEPT.get((nd, axes))
        if kept is None:
            for a in axes:
                if not 0 <= a < nd:
                    raise ValueError(f"reduction axis {a} out of range for {nd} dimensions")
            kept = tuple([i for i in range(nd) if i not in axes])
            if len(_KEPT) < 4096:
                _KEPT[(nd, axes)] = kept
        dt = out_dtype(x, params) if out_dtype else x.dtype
        weak = x.weak_type and keep_weak and out_dtype is None
        if kept:
            return ShapedArray(tuple([xs[i] for i in kept]), dt, weak)
        out = _SCALARS.get((dt, weak))
        if out is None:
            out = _SCALARS[(dt, weak)] = ShapedArray((), dt, weak)
        return out
    return rule


def _physical_axes(axes, d):
    """Logical reduction axes -> physical axes of a value batched at dim d; and the out dim."""
    phys = tuple(a + (a >= d) for a in axes)
    out_d = d - sum(1 for a in phys if a < d)
    return phys, out_d


def _reduce_batch(prim):
    def rule(axis_size, vals, dims, *, axes, **params):
        phys, out_d = _physical_axes(axes, dims[0])
        return bind(prim, vals[0], axes=phys, **params), out_d
    return rule


def _keepdims_bcast(y, x_shape, axes):
    """Broadcast a reduced value back to the operand's shape."""
    kept = tuple(i for i in range(len(x_shape)) if i not in axes)
    return S.broadcast_in_dim(y, x_shape, kept)


def _reducer(name):
    p = Primitive(name)
    abstract_eval_rules[p] = _reduce_abstract()
    batch_rules[p] = _reduce_batch(p)
    return p


def reduce_sum(x, axes):
    return bind(reduce_sum_p, x, axes=tuple(axes))


# --------------------------------------------------------------------------- reduce_sum
reduce_sum_p = _reducer("reduce_sum")
deflinear(reduce_sum_p)
transpose_rules[reduce_sum_p] = lambda ct, x, *, axes: [
    Zero if ct is Zero else _keepdims_bcast(ct, x.aval.shape, axes)]

# ------------------------------------------------------------------- reduce_max / min
reduce_max_p = _reducer("reduce_max")
reduce_min_p = _reducer("reduce_min")


def _chooser_jvp(prim):
    # the tangent is averaged over the positions that attain the extremum
    def rule(primals, tangents, *, axes):
        (x,), (t,) = primals, tangents
        ans = bind(prim, x, axes=axes)
        if t is Zero:
            return ans, Zero
        shape = S.shape_of(x)
        loc = E.convert_element_type(bind(E.eq_p, x, _keepdims_bcast(ans, shape, axes)), S.dtype_of(t))
        count = reduce_sum(loc, axes)
        return ans, E.div(reduce_sum(E.mul(t, loc), axes), count)
    return rule


jvp_rules[reduce_max_p] = _chooser_jvp(reduce_max_p)
jvp_rules[reduce_min_p] = _chooser_jvp(reduce_min_p)

# -------------------------------------------------------------------------- reduce_prod
reduce_prod_p = _reducer("reduce_prod")


def _prod_jvp(primals, tangents, *, axes):
    # exact with zeros: d prod / d x_i = prod of the others, computed without dividing by 0
    (x,), (t,) = primals, tangents
    ans = bind(reduce_prod_p, x, axes=axes)
    if t is Zero:
        return ans, Zero
    shape = S.shape_of(x)
    zero = E.full_like_scalar(x, 0)
    one = E.full_like_scalar(x, 1)
    is0 = bind(E.eq_p, x, zero)
    nz = reduce_sum(E.convert_element_type(is0, np.int32), axes)
    nz = _keepdims_bcast(nz, shape, axes)
    prod_nonzero = _keepdims_bcast(bind(reduce_prod_p, E.select_n(is0, x, one), axes=axes), shape, axes)
    safe_x = E.select_n(is0, x, one)
    no_zero = bind(E.eq_p, nz, E.convert_element_type(0, np.int32))
    one_zero = bind(E.eq_p, nz, E.convert_element_type(1, np.int32))
    others = E.select_n(is0,
                        E.select_n(no_zero, zero, E.div(prod_nonzero, safe_x)),
                        E.select_n(one_zero, zero, prod_nonzero))
    return ans, reduce_sum(E.mul(t, others), axes)


jvp_rules[reduce_prod_p] = _prod_jvp

# ----------------------------------------------------------------- reduce_and / or
reduce_and_p = _reducer("reduce_and")
reduce_or_p = _reducer("reduce_or")
zero_jvp(reduce_and_p)
zero_jvp(reduce_or_p)

# --------------------------------------------------------------------- argmax / argmin
argmax_p = Primitive("argmax")
argmin_p = Primitive("argmin")
for _p in (argmax_p, argmin_p):
    abstract_eval_rules[_p] = _reduce_abstract(out_dtype=lambda x, params: params["index_dtype"])
    batch_rules[_p] = _reduce_batch(_p)
    zero_jvp(_p)
