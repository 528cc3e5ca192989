"""Shape primitives: broadcast_in_dim, reshape, transpose, concatenate, slice, pad, rev, iota.

All are linear, so each has a transpose; all params are static tuples of ints.

This module is the bottom of the three core families: elementwise and reductions import it at
module level; the few rules here that need their primitives (a typed scalar zero, reduce_sum in a
transpose, select_n in a batch rule) import them inside the function, so no import cycle exists.
"""
from __future__ import annotations

import numpy as np

from ..core import Primitive, ShapedArray, abstract_eval_rules, bind, get_aval
from ..rules import Zero, batch_gaps, batch_rules, deflinear, is_undefined, jvp_rules, transpose_rules

# ----------------------------------------------------------------------------- helpers

aval_of = get_aval


def shape_of(x):
    return get_aval(x).shape


def dtype_of(x):
    return get_aval(x).dtype


def broadcast_in_dim(x, shape, broadcast_dimensions):
    return bind(broadcast_in_dim_p, x, shape=tuple(shape), broadcast_dimensions=tuple(broadcast_dimensions))


def broadcast_to_shape(x, shape):
    """NumPy-style broadcast of x to `shape` (trailing alignment)."""
    xs = shape_of(x)
    if tuple(xs) == tuple(shape):
        return x
    lead = len(shape) - len(xs)
    return broadcast_in_dim(x, shape, tuple(range(lead, len(shape))))


def _scalar(value, dtype, weak_type=False):
    """`value` as a scalar of `dtype` (convert_element_type is elementwise's, bound late)."""
    from .elementwise import convert_element_type
    return convert_element_type(value, dtype, weak_type)


def _reduce_sum(x, axes):
    from .reductions import reduce_sum
    return reduce_sum(x, axes)


def full(shape, value, dtype):
    return broadcast_in_dim(_scalar(value, dtype), tuple(shape), ())


def zeros_like(x):
    a = get_aval(x)
    return broadcast_in_dim(_scalar(0, a.dtype, a.weak_type), a.shape, ())


def zeros_of_aval(a):
    return broadcast_in_dim(_scalar(0, a.dtype, a.weak_type), a.shape, ())


def reshape(x, new_sizes):
    shape = shape_of(x)
    if shape == new_sizes:
        return x
    new_sizes = tuple(map(int, new_sizes))
    if shape == new_sizes:
        return x
    return bind(reshape_p, x, new_sizes=new_sizes)


def inverse_permutation(permutation):
    """The permutation undoing `permutation` (transpose(transpose(x, p), inverse_permutation(p)) is x); in Python:
    np.argsort costs ~2 us on a few axes."""
    return tuple(sorted(range(len(permutation)), key=permutation.__getitem__))


def transpose(x, permutation):
    permutation = tuple(permutation)
    if permutation == tuple(range(len(permutation))):
        return x
    return bind(transpose_p, x, permutation=permutation)


def moveaxis(x, src, dst):
    n = len(shape_of(x))
    if src == dst:
        return x
    perm = [i for i in range(n) if i != src]
    perm.insert(dst, src)
    return transpose(x, perm)


def slice_(x, start, limit, strides=None):
    strides = tuple(strides) if strides is not None else (1,) * len(start)
    return bind(slice_p, x, start_indices=tuple(start), limit_indices=tuple(limit), strides=strides)


def pad(x, padding_value, config):
    return bind(pad_p, x, padding_value, padding_config=tuple(tuple(c) for c in config))


def concatenate(xs, dimension):
    return bind(concatenate_p, *xs, dimension=dimension)


def rev(x, dimensions):
    return bind(rev_p, x, dimensions=tuple(dimensions))


def iota(dtype, shape, dimension):
    return bind(iota_p, dtype=np.dtype(dtype), shape=tuple(shape), dimension=dimension)


# ------------------------------------------------------------------- broadcast_in_dim
broadcast_in_dim_p = Primitive("broadcast_in_dim")


def _bcast_abstract(x, *, shape, broadcast_dimensions):
    xs = x.shape
    ok = len(broadcast_dimensions) == len(xs)
    if ok:
        for e, d in zip(xs, broadcast_dimensions):
            if e != 1 and e != shape[d]:
                ok = False
                break
    if not ok:
        raise ValueError(f"cannot broadcast shape {x.shape} to {shape} along dims {broadcast_dimensions}")
    return ShapedArray(shape, x.dtype, x.weak_type)


def _bcast_transpose(ct, x, *, shape, broadcast_dimensions):
    if ct is Zero:
        return [Zero]
    in_shape = x.aval.shape
    lead = tuple(d for d in range(len(shape)) if d not in broadcast_dimensions)
    ones = tuple(d for i, d in enumerate(broadcast_dimensions) if in_shape[i] == 1 and shape[d] != 1)
    out = _reduce_sum(ct, tuple(sorted(lead + ones))) if lead or ones else ct
    return [reshape(out, in_shape)]


def _bcast_batch(axis_size, vals, dims, *, shape, broadcast_dimensions):
    (x,), (d,) = vals, dims
    x = moveaxis(x, d, 0)
    return broadcast_in_dim(x, (axis_size,) + shape, (0,) + tuple(b + 1 for b in broadcast_dimensions)), 0


abstract_eval_rules[broadcast_in_dim_p] = _bcast_abstract
deflinear(broadcast_in_dim_p)
transpose_rules[broadcast_in_dim_p] = _bcast_transpose
batch_rules[broadcast_in_dim_p] = _bcast_batch

# ----------------------------------------------------------------------------- reshape
reshape_p = Primitive("reshape")


def _reshape_abstract(x, *, new_sizes):
    n = 1   # (Python integers: exact, and ~20x cheaper than np.prod on a short tuple)
    for d in new_sizes:
        if d < 0:
            n = -1
            break
        n *= d
    if n != x.size:
        raise ValueError(f"cannot reshape array of shape {x.shape} (size {x.size}) into shape {new_sizes}")
    return ShapedArray(new_sizes, x.dtype, x.weak_type)


abstract_eval_rules[reshape_p] = _reshape_abstract
deflinear(reshape_p)
transpose_rules[reshape_p] = lambda ct, x, *, new_sizes: [Zero if ct is Zero else reshape(ct, x.aval.shape)]
batch_rules[reshape_p] = lambda axis_size, vals, dims, *, new_sizes: (
    reshape(moveaxis(vals[0], dims[0], 0), (axis_size,) + new_sizes), 0)

# --------------------------------------------------------------------------- transpose
transpose_p = Primitive("transpose")


def _transpose_abstract(x, *, permutation):
    xs = x.shape
    if sorted(permutation) != list(range(len(xs))):
        raise ValueError(f"permutation {permutation} is not a permutation of the {x.ndim} axes")
    return ShapedArray(tuple([xs[p] for p in permutation]), x.dtype, x.weak_type)


abstract_eval_rules[transpose_p] = _transpose_abstract
deflinear(transpose_p)
transpose_rules[transpose_p] = lambda ct, x, *, permutation: [
    Zero if ct is Zero else transpose(ct, inverse_permutation(permutation))]
batch_rules[transpose_p] = lambda axis_size, vals, dims, *, permutation: (
    transpose(moveaxis(vals[0], dims[0], 0), (0,) + tuple(p + 1 for p in permutation)), 0)

# ------------------------------------------------------------------------- concatenate
concatenate_p = Primitive("concatenate")


def _concat_abstract(*xs, dimension):
    base = xs[0]
    for x in xs[1:]:
        if x.ndim != base.ndim or any(a != b for i, (a, b) in enumerate(zip(x.shape, base.shape)) if i != dimension):
            raise ValueError(f"concatenate: shapes {[a.shape for a in xs]} differ outside axis {dimension}")
        if x.dtype != base.dtype:
            raise TypeError("concatenate operands must share a dtype")
    shape = list(base.shape)
    shape[dimension] = sum(x.shape[dimension] for x in xs)
    return ShapedArray(shape, base.dtype, all(x.weak_type for x in xs))


def _concat_transpose(ct, *xs, dimension):
    out, start = [], 0
    for x in xs:
        n = (x.aval if is_undefined(x) else get_aval(x)).shape[dimension]
        if is_undefined(x):
            if ct is Zero:
                out.append(Zero)
            else:
                shp = shape_of(ct)
                lo = [0] * len(shp)
                hi = list(shp)
                lo[dimension], hi[dimension] = start, start + n
                out.append(slice_(ct, lo, hi))
        else:
            out.append(None)
        start += n
    return out


def _concat_batch(axis_size, vals, dims, *, dimension):
    moved = []
    for v, d in zip(vals, dims):
        if d is None:
            shp = shape_of(v)
            v = broadcast_in_dim(v, (axis_size,) + tuple(shp), tuple(range(1, len(shp) + 1)))
        else:
            v = moveaxis(v, d, 0)
        moved.append(v)
    return concatenate(moved, dimension + 1), 0


abstract_eval_rules[concatenate_p] = _concat_abstract
deflinear(concatenate_p)
transpose_rules[concatenate_p] = _concat_transpose
batch_rules[concatenate_p] = _concat_batch

# ------------------------------------------------------------------------------- slice
slice_p = Primitive("slice")


def _slice_abstract(x, *, start_indices, limit_indices, strides):
    shape = []
    for d, (s, l, st) in enumerate(zip(start_indices, limit_indices, strides)):
        if not (0 <= s <= l <= x.shape[d]) or st < 1:
            raise IndexError(f"slice [{s}:{l}:{st}] out of bounds for axis {d} of size {x.shape[d]}")
        shape.append(max(0, -(-(l - s) // st)))
    return ShapedArray(shape, x.dtype, x.weak_type)


def _slice_transpose(ct, x, *, start_indices, limit_indices, strides):
    if ct is Zero:
        return [Zero]
    shape = x.aval.shape
    out_shape = shape_of(ct)
    config = []
    for d in range(len(shape)):
        lo = start_indices[d]
        interior = strides[d] - 1
        used = lo + (out_shape[d] - 1) * strides[d] + 1 if out_shape[d] else lo
        config.append((lo, shape[d] - used, interior if out_shape[d] else 0))
    return [pad(ct, _scalar(0, x.aval.dtype), config)]


def _slice_batch(axis_size, vals, dims, *, start_indices, limit_indices, strides):
    x = moveaxis(vals[0], dims[0], 0)
    return slice_(x, (0,) + start_indices, (axis_size,) + limit_indices, (1,) + strides), 0


abstract_eval_rules[slice_p] = _slice_abstract
deflinear(slice_p)
transpose_rules[slice_p] = _slice_transpose
batch_rules[slice_p] = _slice_batch

# --------------------------------------------------------------------------------- pad
pad_p = Primitive("pad")


def _pad_abstract(x, pv, *, padding_config):
    if pv.shape != () or pv.dtype != x.dtype:
        raise TypeError("pad value must be a scalar of the operand's dtype")
    shape = []
    for d, (lo, hi, interior) in zip(x.shape, padding_config):
        n = lo + hi + d + max(0, d - 1) * interior
        if n < 0 or interior < 0:
            raise ValueError(f"pad config {padding_config} invalid for shape {x.shape}")
        shape.append(n)
    return ShapedArray(shape, x.dtype, x.weak_type)


def _pad_transpose(ct, x, pv, *, padding_config):
    if ct is Zero:
        return [Zero if is_undefined(x) else None, Zero if is_undefined(pv) else None]
    t_x = None
    if is_undefined(x) or is_undefined(pv):
        # undo negative padding by padding the cotangent with zeros, then slice out x's positions
        neg_cfg = [(max(0, -lo), max(0, -hi), 0) for lo, hi, _ in padding_config]
        ctp = pad(ct, _scalar(0, dtype_of(ct)), neg_cfg) if any(
            a or b for a, b, _ in neg_cfg) else ct
        shp = shape_of(ctp)
        start = [max(0, lo) for lo, _, _ in padding_config]
        limit = [s - max(0, hi) for s, (_, hi, _) in zip(shp, padding_config)]
        strides = [i + 1 for _, _, i in padding_config]
        t_x = slice_(ctp, start, limit, strides)
    res_x = t_x if is_undefined(x) else None
    res_pv = None
    if is_undefined(pv):
        from .elementwise import sub
        res_pv = sub(_reduce_sum(ct, tuple(range(len(shape_of(ct))))),
                     _reduce_sum(t_x, tuple(range(len(shape_of(t_x))))))
    return [res_x, res_pv]


def _pad_batch(axis_size, vals, dims, *, padding_config):
    x, pv = vals
    dx, dpv = dims
    if dpv is not None:
        # batched padding value: pad with zero, then select the padding positions per lane
        xb = moveaxis(x, dx, 0) if dx is not None else broadcast_in_dim(
            x, (axis_size,) + tuple(shape_of(x)), tuple(range(1, len(shape_of(x)) + 1)))
        mask = pad(full(shape_of(xb)[1:], True, np.bool_), False, padding_config)
        padded = pad(xb, _scalar(0, dtype_of(xb)), ((0, 0, 0),) + tuple(padding_config))
        pvb = moveaxis(pv, dpv, 0)
        pvb = reshape(pvb, (axis_size,) + (1,) * len(shape_of(mask)))
        from .elementwise import select_n
        return select_n(mask, pvb, padded), 0
    x = moveaxis(x, dx, 0)
    return pad(x, pv, ((0, 0, 0),) + tuple(padding_config)), 0


abstract_eval_rules[pad_p] = _pad_abstract
deflinear(pad_p)
transpose_rules[pad_p] = _pad_transpose
batch_rules[pad_p] = _pad_batch

# --------------------------------------------------------------------------------- rev
rev_p = Primitive("rev")
abstract_eval_rules[rev_p] = lambda x, *, dimensions: x
deflinear(rev_p)
transpose_rules[rev_p] = lambda ct, x, *, dimensions: [Zero if ct is Zero else rev(ct, dimensions)]
batch_rules[rev_p] = lambda axis_size, vals, dims, *, dimensions: (
    rev(vals[0], tuple(d + (d >= dims[0]) for d in dimensions)), dims[0])

# -------------------------------------------------------------------------------- iota
iota_p = Primitive("iota")
abstract_eval_rules[iota_p] = lambda *, dtype, shape, dimension: ShapedArray(shape, dtype)
jvp_rules[iota_p] = lambda primals, tangents, **p: (bind(iota_p, **p), Zero)
batch_gaps[iota_p] = "takes no operands, so it is never batched"
