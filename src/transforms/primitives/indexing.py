"""Indexing primitives: dynamic_slice, dynamic_update_slice, gather, scatter.

Index semantics (all four primitives): indices are *clamped*, never checked, because a
traced index has no value to check. A start index is clamped to [0, dim - window] so the
whole window lies inside the operand -- XLA's rule for dynamic_slice, dynamic_update_slice
and gather; the scatter lowering clamps its indices the same way explicitly (XLA itself
would skip out-of-range updates), so gather and scatter stay each other's transposes.
Negative indices are *not* wrapped here: the namespace normalises them (i < 0 -> i + n)
and raises IndexError for static out-of-range indices before binding.

gather(operand, indices) follows the StableHLO gather with the index vector in the last
dimension of `indices`; `dimension_numbers` is a `GatherDims`:
  offset_dims                  output dims that hold the slice (window) dims, sorted
  collapsed_slice_dims         operand dims whose size-1 window is dropped, sorted
  start_index_map              operand dim addressed by each index-vector entry
  operand_batching_dims        operand dims paired one-to-one with ...
  start_indices_batching_dims  ... these indices dims (elementwise "batch" gathers)
The output has the indices' leading dims (all but the last) in order, with the offset dims
interleaved at `offset_dims`. scatter(operand, indices, updates) is the mirror image, with
a `ScatterDims` and an update `mode` in {"set", "add", "mul", "min", "max"}. With duplicate
indices "add"/"mul"/"min"/"max" accumulate all updates; for "set" one of them wins
(unspecified which, like the standard's __setitem__).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..backend import backend
from ..core import Primitive, ShapedArray, abstract_eval_rules, bind, get_aval, trace_state
from ..rules import Zero, batch_rules, is_undefined, jvp_rules, transpose_rules
from . import elementwise as E
from . import structural as S


class GatherDims(NamedTuple):
    offset_dims: tuple
    collapsed_slice_dims: tuple
    start_index_map: tuple
    operand_batching_dims: tuple = ()
    start_indices_batching_dims: tuple = ()


class ScatterDims(NamedTuple):
    update_window_dims: tuple
    inserted_window_dims: tuple
    scatter_dims_to_operand_dims: tuple
    input_batching_dims: tuple = ()
    scatter_indices_batching_dims: tuple = ()


SCATTER_MODES = ("set", "add", "mul", "min", "max")


def _t(xs):
    return tuple(int(x) for x in xs)


def _shift(dims, k=1):
    return tuple(d + k for d in dims)


# ----------------------------------------------------------------------------- helpers

def dynamic_slice(x, starts, slice_sizes):
    return bind(dynamic_slice_p, x, *starts, slice_sizes=_t(slice_sizes))


def dynamic_update_slice(x, update, starts):
    if x is trace_state.given_up:   # (its only holder gave it up: eagerly, its memory may take the write)
        trace_state.given_up = None
        out = backend.eager_in_place(dynamic_update_slice_p, (x, update, *starts), {})
        if out is not None:
            return out
    return bind(dynamic_update_slice_p, x, update, *starts)


def gather(x, indices, dimension_numbers, slice_sizes):
    dn = GatherDims(*(_t(d) for d in dimension_numbers))
    return bind(gather_p, x, indices, dimension_numbers=dn, slice_sizes=_t(slice_sizes))


def scatter(x, indices, updates, dimension_numbers, mode="set"):
    dn = ScatterDims(*(_t(d) for d in dimension_numbers))
    return bind(scatter_p, x, indices, updates, dimension_numbers=dn, mode=mode)


def take_along_axis(x, idx, axis):
    """out[..., i, ...] = x[..., idx[..., i, ...], ...] along `axis`; idx matches x's shape elsewhere."""
    xs, ishape = S.shape_of(x), S.shape_of(idx)
    nd = len(xs)
    others = tuple(d for d in range(nd) if d != axis)
    dn = GatherDims((), (axis,), (axis,), others, others)
    return gather(x, S.reshape(idx, tuple(ishape) + (1,)), dn, (1,) * nd)


def _check_index_dtype(a, what):
    if a.dtype.kind not in "iu":
        raise TypeError(f"{what} must have an integer dtype, got {a.dtype.name}")


# ----------------------------------------------------------------------- dynamic_slice
dynamic_slice_p = Primitive("dynamic_slice")


def _ds_abstract(x, *starts, slice_sizes):
    if len(starts) != x.ndim or len(slice_sizes) != x.ndim:
        raise TypeError(f"dynamic_slice needs {x.ndim} start indices and slice sizes, got {len(starts)} "
                        f"and {len(slice_sizes)}")
    for s in starts:
        _check_index_dtype(s, "dynamic_slice start indices")
        if s.shape != ():
            raise TypeError(f"dynamic_slice start indices must be scalars, got shape {s.shape}")
    for d, (n, k) in enumerate(zip(x.shape, slice_sizes)):
        if not 0 <= k <= n:
            raise IndexError(f"dynamic_slice size {k} out of range for axis {d} of size {n}")
    return ShapedArray(slice_sizes, x.dtype, x.weak_type)


def _ds_jvp(primals, tangents, *, slice_sizes):
    x, *starts = primals
    ans = bind(dynamic_slice_p, x, *starts, slice_sizes=slice_sizes)
    t = tangents[0]
    return ans, (Zero if t is Zero else bind(dynamic_slice_p, t, *starts, slice_sizes=slice_sizes))


def _ds_transpose(ct, x, *starts, slice_sizes):
    if any(is_undefined(s) for s in starts):
        raise TypeError("dynamic_slice is not linear in its start indices")
    if ct is Zero:
        return [Zero] + [None] * len(starts)
    return [dynamic_update_slice(S.zeros_of_aval(x.aval), ct, starts)] + [None] * len(starts)


def _index_vector(axis_size, starts, dims):
    """Stack scalar starts (some batched at 0 after moving) into an index array (B, n)."""
    dt = np.dtype(np.int64) if any(get_aval(s).dtype != get_aval(starts[0]).dtype for s in starts) else \
        get_aval(starts[0]).dtype
    cols = []
    for s, d in zip(starts, dims):
        s = E.convert_element_type(s, dt)
        s = S.broadcast_in_dim(s, (axis_size,), ()) if d is None else s   # a batched scalar is (B,)
        cols.append(S.reshape(s, (axis_size, 1)))
    return S.concatenate(cols, 1) if len(cols) > 1 else cols[0]


def _ds_batch(axis_size, vals, dims, *, slice_sizes):
    x, *starts = vals
    dx, *dstarts = dims
    nd = len(slice_sizes)
    if all(d is None for d in dstarts):
        x = S.moveaxis(x, dx, 0)
        return bind(dynamic_slice_p, x, E.convert_element_type(0, get_aval(starts[0]).dtype) if starts else 0,
                    *starts, slice_sizes=(axis_size,) + slice_sizes), 0
    idx = _index_vector(axis_size, starts, dstarts)
    dn = GatherDims(tuple(range(nd)), (), tuple(range(nd)))
    return _gather_batch(axis_size, [x, idx], [dx, 0], dimension_numbers=dn, slice_sizes=slice_sizes)


abstract_eval_rules[dynamic_slice_p] = _ds_abstract
jvp_rules[dynamic_slice_p] = _ds_jvp
transpose_rules[dynamic_slice_p] = _ds_transpose
batch_rules[dynamic_slice_p] = _ds_batch

# --------------------------------------------------------------- dynamic_update_slice
dynamic_update_slice_p = Primitive("dynamic_update_slice")


def _dus_abstract(x, update, *starts):
    if len(starts) != x.ndim or update.ndim != x.ndim:
        raise TypeError(f"dynamic_update_slice needs {x.ndim} start indices and an update of rank {x.ndim}")
    if update.dtype != x.dtype:
        raise TypeError(f"dynamic_update_slice update dtype {update.dtype.name} != operand dtype {x.dtype.name}")
    for s in starts:
        _check_index_dtype(s, "dynamic_update_slice start indices")
        if s.shape != ():
            raise TypeError("dynamic_update_slice start indices must be scalars")
    if any(u > n for u, n in zip(update.shape, x.shape)):
        raise IndexError(f"dynamic_update_slice update shape {update.shape} larger than operand {x.shape}")
    return ShapedArray(x.shape, x.dtype, x.weak_type)


def _dus_jvp(primals, tangents):
    x, u, *starts = primals
    tx, tu = tangents[0], tangents[1]
    ans = dynamic_update_slice(x, u, starts)
    if tx is Zero and tu is Zero:
        return ans, Zero
    tx = S.zeros_like(x) if tx is Zero else tx
    tu = S.zeros_like(u) if tu is Zero else tu
    return ans, dynamic_update_slice(tx, tu, starts)


def _dus_transpose(ct, x, u, *starts):
    if any(is_undefined(s) for s in starts):
        raise TypeError("dynamic_update_slice is not linear in its start indices")
    rest = [None] * len(starts)
    if ct is Zero:
        return [Zero if is_undefined(x) else None, Zero if is_undefined(u) else None] + rest
    ushape = u.aval.shape if is_undefined(u) else S.shape_of(u)
    udt = u.aval if is_undefined(u) else get_aval(u)
    ct_u = dynamic_slice(ct, starts, ushape) if is_undefined(u) else None   # (first: ct may be written next)
    ct_x = dynamic_update_slice(ct, S.zeros_of_aval(udt), starts) if is_undefined(x) else None
    return [ct_x, ct_u] + rest


def _dus_batch(axis_size, vals, dims):
    x, u, *starts = vals
    dx, du, *dstarts = dims
    nd = len(starts)
    if all(d is None for d in dstarts):
        x = batch_move(x, dx, axis_size)
        u = batch_move(u, du, axis_size)
        z = E.convert_element_type(0, get_aval(starts[0]).dtype) if starts else 0
        return dynamic_update_slice(x, u, [z] + list(starts)), 0
    idx = _index_vector(axis_size, starts, dstarts)
    dn = ScatterDims(tuple(range(nd)), (), tuple(range(nd)))
    return _scatter_batch(axis_size, [x, idx, u], [dx, 0, du], dimension_numbers=dn, mode="set")


def batch_move(x, d, size):
    """x with its batch axis at 0 (broadcast when x is unbatched)."""
    if d is None:
        shp = tuple(S.shape_of(x))
        return S.broadcast_in_dim(x, (size,) + shp, tuple(range(1, len(shp) + 1)))
    return S.moveaxis(x, d, 0)


abstract_eval_rules[dynamic_update_slice_p] = _dus_abstract
jvp_rules[dynamic_update_slice_p] = _dus_jvp
transpose_rules[dynamic_update_slice_p] = _dus_transpose
batch_rules[dynamic_update_slice_p] = _dus_batch

# ------------------------------------------------------------------------------ gather
gather_p = Primitive("gather")


def _gather_shape(x_shape, idx_shape, dn, slice_sizes):
    nd = len(x_shape)
    if len(slice_sizes) != nd:
        raise TypeError(f"gather slice_sizes {slice_sizes} must have one entry per operand dim ({nd})")
    if len(idx_shape) < 1 or idx_shape[-1] != len(dn.start_index_map):
        raise TypeError(f"gather indices shape {idx_shape} must end in the index vector of length "
                        f"{len(dn.start_index_map)}")
    if len(dn.operand_batching_dims) != len(dn.start_indices_batching_dims):
        raise TypeError("gather batching dims of operand and indices must pair up")
    for od, idim in zip(dn.operand_batching_dims, dn.start_indices_batching_dims):
        if x_shape[od] != idx_shape[idim] or slice_sizes[od] != 1:
            raise TypeError(f"gather batching dim {od} of operand {x_shape} does not match indices dim {idim} "
                            f"of {idx_shape}")
    for d in dn.collapsed_slice_dims:
        if slice_sizes[d] != 1:
            raise TypeError(f"gather collapsed dim {d} must have slice size 1")
    for d, (n, k) in enumerate(zip(x_shape, slice_sizes)):
        if not 0 <= k <= n:
            raise IndexError(f"gather slice size {k} out of range for operand dim {d} of size {n}")
    window = [slice_sizes[d] for d in range(nd)
              if d not in dn.collapsed_slice_dims and d not in dn.operand_batching_dims]
    if len(window) != len(dn.offset_dims):
        raise TypeError(f"gather offset_dims {dn.offset_dims} must name {len(window)} window dims")
    batch = list(idx_shape[:-1])
    rank = len(batch) + len(window)
    out, wi, bi = [], iter(window), iter(batch)
    for d in range(rank):
        out.append(next(wi) if d in dn.offset_dims else next(bi))
    return tuple(out)


def _gather_abstract(x, idx, *, dimension_numbers, slice_sizes):
    _check_index_dtype(idx, "gather indices")
    return ShapedArray(_gather_shape(x.shape, idx.shape, dimension_numbers, slice_sizes), x.dtype, x.weak_type)


def _gather_jvp(primals, tangents, *, dimension_numbers, slice_sizes):
    x, idx = primals
    ans = bind(gather_p, x, idx, dimension_numbers=dimension_numbers, slice_sizes=slice_sizes)
    t = tangents[0]
    if t is Zero:
        return ans, Zero
    return ans, bind(gather_p, t, idx, dimension_numbers=dimension_numbers, slice_sizes=slice_sizes)


def _scatter_dims_of(dn: GatherDims):
    return ScatterDims(dn.offset_dims, dn.collapsed_slice_dims, dn.start_index_map, dn.operand_batching_dims,
                       dn.start_indices_batching_dims)


def _gather_dims_of(dn: ScatterDims):
    return GatherDims(dn.update_window_dims, dn.inserted_window_dims, dn.scatter_dims_to_operand_dims,
                      dn.input_batching_dims, dn.scatter_indices_batching_dims)


gather_dims_of = _gather_dims_of   # public: the gather reading where a scatter with `dn` writes


def _gather_transpose(ct, x, idx, *, dimension_numbers, slice_sizes):
    if is_undefined(idx):
        raise TypeError("gather is not linear in its indices")
    if ct is Zero:
        return [Zero, None]
    zeros = S.zeros_of_aval(x.aval)
    return [scatter(zeros, idx, ct, _scatter_dims_of(dimension_numbers), "add"), None]


def _gather_batch(axis_size, vals, dims, *, dimension_numbers, slice_sizes):
    x, idx = vals
    dx, di = dims
    dn = dimension_numbers
    if di is None:       # only the operand is batched: its batch axis becomes a leading window dim
        x = S.moveaxis(x, dx, 0)
        dn2 = GatherDims((0,) + _shift(dn.offset_dims), _shift(dn.collapsed_slice_dims), _shift(dn.start_index_map),
                         _shift(dn.operand_batching_dims), dn.start_indices_batching_dims)
        return gather(x, idx, dn2, (axis_size,) + slice_sizes), 0
    idx = S.moveaxis(idx, di, 0)
    if dx is None:       # only the indices: one more leading batch dim of the output
        dn2 = dn._replace(offset_dims=_shift(dn.offset_dims),
                          start_indices_batching_dims=_shift(dn.start_indices_batching_dims))
        return gather(x, idx, dn2, slice_sizes), 0
    x = S.moveaxis(x, dx, 0)   # both: pair the two batch axes as gather batching dims
    dn2 = GatherDims(_shift(dn.offset_dims), _shift(dn.collapsed_slice_dims), _shift(dn.start_index_map),
                     (0,) + _shift(dn.operand_batching_dims), (0,) + _shift(dn.start_indices_batching_dims))
    return gather(x, idx, dn2, (1,) + slice_sizes), 0


abstract_eval_rules[gather_p] = _gather_abstract
jvp_rules[gather_p] = _gather_jvp
transpose_rules[gather_p] = _gather_transpose
batch_rules[gather_p] = _gather_batch

# ----------------------------------------------------------------------------- scatter
scatter_p = Primitive("scatter")


def _window_sizes(x_shape, u_shape, dn):
    """Per operand dim, the update window's extent (1 for inserted / batching dims)."""
    it = iter(u_shape[d] for d in dn.update_window_dims)
    return tuple(1 if (d in dn.inserted_window_dims or d in dn.input_batching_dims) else next(it)
                 for d in range(len(x_shape)))


def _scatter_abstract(x, idx, u, *, dimension_numbers, mode):
    dn = dimension_numbers
    if mode not in SCATTER_MODES:
        raise ValueError(f"scatter mode must be one of {SCATTER_MODES}, got {mode!r}")
    _check_index_dtype(idx, "scatter indices")
    if u.dtype != x.dtype:
        raise TypeError(f"scatter updates dtype {u.dtype.name} != operand dtype {x.dtype.name}")
    n_window = x.ndim - len(dn.inserted_window_dims) - len(dn.input_batching_dims)
    if len(dn.update_window_dims) != n_window:
        raise TypeError(f"scatter update_window_dims {dn.update_window_dims} must name {n_window} dims")
    sizes = _window_sizes(x.shape, u.shape, dn)
    expect = _gather_shape(x.shape, idx.shape, _gather_dims_of(dn), sizes)
    if tuple(u.shape) != expect:
        raise TypeError(f"scatter updates shape {u.shape} does not match the indexed shape {expect}")
    return ShapedArray(x.shape, x.dtype, x.weak_type)


def _scatter_jvp(primals, tangents, *, dimension_numbers, mode):
    x, idx, u = primals
    tx, _, tu = tangents
    dn = dimension_numbers
    ans = scatter(x, idx, u, dn, mode)
    if tx is Zero and tu is Zero:
        return ans, Zero
    if mode in ("set", "add"):          # linear in (operand, updates) jointly
        tx = S.zeros_like(x) if tx is Zero else tx
        tu = S.zeros_like(u) if tu is Zero else tu
        return ans, scatter(tx, idx, tu, dn, mode)
    if mode == "mul":
        # out = x * P with P = scatter_mul(1, idx, u). The updates' term assumes unique indices.
        out = Zero
        if tx is not Zero:
            P = scatter(S.full(S.shape_of(x), 1, S.dtype_of(x)), idx, u, dn, "mul")
            out = E.mul(tx, P)
        if tu is not Zero:
            t2 = E.mul(x, scatter(S.zeros_like(x), idx, tu, dn, "set"))
            out = t2 if out is Zero else E.add(out, t2)
        return ans, out
    # min / max: the tangent of whichever value won; ties average their tangents
    g = gather(ans, idx, _gather_dims_of(dn), _window_sizes(S.shape_of(x), S.shape_of(u), dn))
    u_wins = bind(E.eq_p, u, g)
    x_wins = bind(E.eq_p, x, ans)
    dt = S.dtype_of(x)
    zx, zu = S.zeros_like(x), S.zeros_like(u)
    count = E.add(E.convert_element_type(x_wins, dt),
                  scatter(zx, idx, E.convert_element_type(u_wins, dt), dn, "add"))
    num = zx if tx is Zero else E.select_n(x_wins, zx, tx)
    if tu is not Zero:
        num = E.add(num, scatter(zx, idx, E.select_n(u_wins, zu, tu), dn, "add"))
    return ans, E.div(num, count)


def _scatter_transpose(ct, x, idx, u, *, dimension_numbers, mode):
    if is_undefined(idx):
        raise TypeError("scatter is not linear in its indices")
    if mode not in ("set", "add"):
        raise NotImplementedError(f"scatter mode {mode!r} is not linear, so it has no transpose")
    dn = dimension_numbers
    if ct is Zero:
        return [Zero if is_undefined(x) else None, None, Zero if is_undefined(u) else None]
    u_aval = u.aval if is_undefined(u) else get_aval(u)
    ct_x = ct_u = None
    if is_undefined(x):
        ct_x = ct if mode == "add" else scatter(ct, idx, S.zeros_of_aval(u_aval), dn, "set")
    if is_undefined(u):
        x_shape = x.aval.shape if is_undefined(x) else S.shape_of(x)
        ct_u = gather(ct, idx, _gather_dims_of(dn), _window_sizes(x_shape, u_aval.shape, dn))
    return [ct_x, None, ct_u]


def _scatter_batch(axis_size, vals, dims, *, dimension_numbers, mode):
    x, idx, u = vals
    dx, di, du = dims
    dn = dimension_numbers
    x = batch_move(x, dx, axis_size)
    u = batch_move(u, du, axis_size)
    if di is None:       # the batch axis is a leading window dim of operand and updates
        dn2 = ScatterDims((0,) + _shift(dn.update_window_dims), _shift(dn.inserted_window_dims),
                          _shift(dn.scatter_dims_to_operand_dims), _shift(dn.input_batching_dims),
                          dn.scatter_indices_batching_dims)
        return scatter(x, idx, u, dn2, mode), 0
    idx = S.moveaxis(idx, di, 0)
    dn2 = ScatterDims(_shift(dn.update_window_dims), _shift(dn.inserted_window_dims),
                      _shift(dn.scatter_dims_to_operand_dims), (0,) + _shift(dn.input_batching_dims),
                      (0,) + _shift(dn.scatter_indices_batching_dims))
    return scatter(x, idx, u, dn2, mode), 0


abstract_eval_rules[scatter_p] = _scatter_abstract
jvp_rules[scatter_p] = _scatter_jvp
transpose_rules[scatter_p] = _scatter_transpose
batch_rules[scatter_p] = _scatter_batch
