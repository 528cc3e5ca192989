"""Lowering of the indexing family: dynamic_slice, dynamic_update_slice, gather, scatter.

Out-of-range indices are clamped (see transforms/primitives/indexing.py): XLA clamps
dynamic slices and gathers itself; scatter indices are clamped here explicitly because
XLA would instead drop out-of-range updates.
"""
from __future__ import annotations

import numpy as np

from transforms.primitives import indexing as I

from ._jaxlib import hlo
from .host import Kernel, host_kernels
from .lowering import constant, fill_region, lowering_rules, tensor_type, ttype


def _as_i64(v, aval, hi):
    """A start index as int64; an unsigned one is first capped at `hi` (the last valid start), so a huge
    uint64 clamps to the end, as the host kernel's, instead of wrapping negative in the conversion."""
    if aval.dtype == np.int64:
        return v
    if aval.dtype.kind == "u" and hi < np.iinfo(aval.dtype).max:
        v = hlo.MinOp(v, constant(hi, aval.dtype)).result
    return hlo.ConvertOp(tensor_type((), np.int64), v).result


def _dynamic_slice(c, x, *starts, slice_sizes):
    shape = c.avals_in[0].shape
    starts = [_as_i64(s, a, n - k) for s, a, n, k in zip(starts, c.avals_in[1:], shape, slice_sizes)]
    return hlo.DynamicSliceOp(x, starts, list(slice_sizes)).result


def _dynamic_update_slice(c, x, u, *starts):
    shape, ushape = c.avals_in[0].shape, c.avals_in[1].shape
    starts = [_as_i64(s, a, n - k) for s, a, n, k in zip(starts, c.avals_in[2:], shape, ushape)]
    return hlo.DynamicUpdateSliceOp(x, u, starts).result


def _gather(c, x, idx, *, dimension_numbers, slice_sizes):
    dn = dimension_numbers
    idx_aval = c.avals_in[1]
    attr = hlo.GatherDimensionNumbers.get(
        offset_dims=list(dn.offset_dims), collapsed_slice_dims=list(dn.collapsed_slice_dims),
        operand_batching_dims=list(dn.operand_batching_dims),
        start_indices_batching_dims=list(dn.start_indices_batching_dims),
        start_index_map=list(dn.start_index_map), index_vector_dim=idx_aval.ndim - 1)
    return hlo.GatherOp(x, idx, attr, list(slice_sizes), indices_are_sorted=False).result


def _combiner(mode, dtype):
    is_bool = np.dtype(dtype) == np.bool_
    if mode == "set":
        return lambda a, b: [b]
    op = {"add": hlo.OrOp if is_bool else hlo.AddOp, "mul": hlo.AndOp if is_bool else hlo.MulOp,
          "min": hlo.AndOp if is_bool else hlo.MinOp, "max": hlo.OrOp if is_bool else hlo.MaxOp}[mode]
    return lambda a, b: [op(a, b).result]


def _scatter(c, x, idx, u, *, dimension_numbers, mode):
    dn = dimension_numbers
    xa, ia, ua = c.avals_in
    # clamp every index so its window lies inside the operand (consistent with gather)
    sizes = I._window_sizes(xa.shape, ua.shape, dn)
    hi = [max(0, xa.shape[d] - sizes[d]) for d in dn.scatter_dims_to_operand_dims]
    if ia.size:
        hi_c = hlo.BroadcastInDimOp(ttype(ia), constant(np.array(hi), ia.dtype, (len(hi),)),
                                    broadcast_dimensions=[ia.ndim - 1]).result
        lo_c = hlo.BroadcastInDimOp(ttype(ia), constant(0, ia.dtype), broadcast_dimensions=[]).result
        idx = hlo.ClampOp(lo_c, idx, hi_c).result
    attr = hlo.ScatterDimensionNumbers.get(
        update_window_dims=list(dn.update_window_dims), inserted_window_dims=list(dn.inserted_window_dims),
        input_batching_dims=list(dn.input_batching_dims),
        scatter_indices_batching_dims=list(dn.scatter_indices_batching_dims),
        scattered_dims_to_operand_dims=list(dn.scatter_dims_to_operand_dims), index_vector_dim=ia.ndim - 1)
    op = hlo.ScatterOp([ttype(c.avals_out[0])], [x], idx, [u], attr, indices_are_sorted=False,
                       unique_indices=False)
    scalar = tensor_type((), xa.dtype)
    fill_region(op.update_computation, [scalar, scalar], _combiner(mode, xa.dtype))
    return op.results[0]


lowering_rules[I.dynamic_slice_p] = _dynamic_slice
lowering_rules[I.dynamic_update_slice_p] = _dynamic_update_slice
lowering_rules[I.gather_p] = _gather
lowering_rules[I.scatter_p] = _scatter


# ------------------------------------------------------------------ host kernels (eager on the CPU)
# Same clamping as the lowering: every start index is clamped so the whole window lies inside.

def _h_window(shape, sizes, starts):
    """The NumPy index of the window of `sizes` at `starts`, each start clamped into [0, n - size]."""
    idx = []
    for s, n, k in zip(starts, shape, sizes):
        s, hi = int(s), n - k
        s = 0 if s < 0 else hi if s > hi else s
        idx.append(slice(s, s + k))
    return tuple(idx)


def _h_dynamic_slice(x, *starts, slice_sizes):
    return x[_h_window(x.shape, slice_sizes, starts)]


def _h_dynamic_update_slice(x, u, *starts, in_place=False):
    out = x if in_place else x.copy()
    out[_h_window(x.shape, u.shape, starts)] = u
    return out


def _h_window_index(x_shape, idx, dn, sizes):
    """NumPy index arrays (one per operand dim, broadcast over the gather output) for gather dims `dn`."""
    batch_shape = idx.shape[:-1]
    nb = len(batch_shape)
    out_nd = nb + len(dn.offset_dims)
    batch_out = [d for d in range(out_nd) if d not in dn.offset_dims]
    window_dims = [d for d in range(len(x_shape))
                   if d not in dn.collapsed_slice_dims and d not in dn.operand_batching_dims]
    if idx.dtype.kind == "u":   # clamp before a signed cast can wrap a huge unsigned index negative
        idx = np.minimum(idx, np.iinfo(np.int64).max)
    idx = idx.astype(np.int64)

    def on_batch(a):   # an array over the batch dims, placed at the output's batch positions
        shape = [1] * out_nd
        for pos, n in zip(batch_out, batch_shape):
            shape[pos] = n
        return a.reshape(shape)
    index = []
    for d, (n, k) in enumerate(zip(x_shape, sizes)):
        if d in dn.start_index_map:
            s = on_batch(np.clip(idx[..., dn.start_index_map.index(d)], 0, n - k))
        elif d in dn.operand_batching_dims:
            b = dn.start_indices_batching_dims[dn.operand_batching_dims.index(d)]
            s = on_batch(np.broadcast_to(
                np.arange(batch_shape[b]).reshape([-1 if i == b else 1 for i in range(nb)]), batch_shape))
        else:
            s = np.zeros([1] * out_nd, np.int64)
        if d in window_dims:
            pos = dn.offset_dims[window_dims.index(d)]
            s = s + np.arange(k).reshape([-1 if i == pos else 1 for i in range(out_nd)])
        index.append(s)
    out_shape = [0] * out_nd
    for pos, n in zip(batch_out, batch_shape):
        out_shape[pos] = n
    for pos, d in zip(dn.offset_dims, window_dims):
        out_shape[pos] = sizes[d]
    return tuple(np.broadcast_to(i, out_shape) for i in index)


def _h_clamped(i, n):
    """Index column `i` clamped into [0, n - 1] as intp (an unsigned huge index clamps to n - 1)."""
    if i.dtype.kind == "u":
        return np.minimum(i, n - 1).astype(np.intp)
    return np.minimum(np.maximum(i, 0), n - 1).astype(np.intp, copy=False)


_WINDOW_FORM: dict = {}   # (gather dims, ndim) -> whether they read one window (see _h_one_window)


def _h_one_window(x, idx, dn, sizes):
    """The NumPy index of a gather / scatter of one window (no batch dims: `idx` holds a start per dim,
    in order; the collapsed dims as ints, the window dims in order), or None for another form. `dn`:
    GatherDims or ScatterDims (same field order: window dims, collapsed / inserted dims, index map, batching)."""
    nd = x.ndim
    if idx.ndim != 1:
        return None
    form = _WINDOW_FORM.get((dn, nd))
    if form is None:
        window, ints, index_map, batching = dn[:4]
        form = index_map == tuple(range(nd)) and not batching and window == tuple(range(nd - len(ints)))
        if len(_WINDOW_FORM) < 4096:
            _WINDOW_FORM[(dn, nd)] = form
    if not form:
        return None
    out = []
    ints = dn[1]
    for d, (s, n, k) in enumerate(zip(idx.tolist(), x.shape, sizes)):
        hi = n - k
        s = 0 if s < 0 else hi if s > hi else s
        out.append(s if d in ints else slice(s, s + k))
    return tuple(out)


def _h_window_sizes(x, u, dn):
    """A one-window scatter's extent per dim (1 at the inserted dims), from the update's shape."""
    it = iter(u.shape)
    return tuple(1 if d in dn.inserted_window_dims else next(it, 1) for d in range(x.ndim))


def _h_gather_fast(x, idx, dn, sizes):
    """The gathers eager indexing makes most, as one NumPy index (None for any other form): `window`
    (one start per dim: x[i, 2:5] read eagerly), `take` (one collapsed dim d, whole windows elsewhere,
    the batch dims where d was) and `point` (every dim collapsed, windows of one element)."""
    nd, nb = x.ndim, idx.ndim - 1
    w = _h_one_window(x, idx, dn, sizes)
    if w is not None:
        return x[w]
    if dn.operand_batching_dims or dn.start_index_map != dn.collapsed_slice_dims:
        return None
    if nd and dn.start_index_map == tuple(range(nd)) and not dn.offset_dims and all(k == 1 for k in sizes):
        return x[tuple(_h_clamped(idx[..., k], n) for k, n in enumerate(x.shape))]
    if len(dn.start_index_map) == 1 and nd:
        d = dn.start_index_map[0]
        if (sizes[d] == 1 and all(sizes[e] == x.shape[e] for e in range(nd) if e != d)
                and dn.offset_dims == tuple(range(d)) + tuple(range(d + nb, nd - 1 + nb))):
            return np.take(x, _h_clamped(idx[..., 0], x.shape[d]), axis=d)
    return None


def _h_gather(x, idx, *, dimension_numbers, slice_sizes):
    out = _h_gather_fast(x, idx, dimension_numbers, slice_sizes)
    if out is None:
        out = x[_h_window_index(x.shape, idx, dimension_numbers, slice_sizes)]
    return out


_H_AT = {"add": np.add, "mul": np.multiply, "min": np.minimum, "max": np.maximum}
_H_AT_BOOL = {"add": np.logical_or, "mul": np.logical_and, "min": np.logical_and, "max": np.logical_or}


def _h_scatter(x, idx, u, *, dimension_numbers, mode, in_place=False):
    dn = dimension_numbers
    if mode in ("min", "max") and x.dtype.kind == "c":
        return NotImplemented
    w = None
    if idx.ndim == 1 and not dn.input_batching_dims:
        w = _h_one_window(x, idx, dn, _h_window_sizes(x, u, dn))
    if w is not None:   # one window (eager x[i, 2:5] op= v): no duplicates, a plain NumPy update
        out = x if in_place else x.copy()
        if mode == "set":
            out[w] = u
        else:
            out[w] = (_H_AT_BOOL if x.dtype == np.bool_ else _H_AT)[mode](out[w], u)
        return out
    sizes = I._window_sizes(x.shape, u.shape, dn)
    if (x.ndim and not dn.update_window_dims and not dn.input_batching_dims
            and dn.inserted_window_dims == tuple(range(x.ndim))
            and dn.scatter_dims_to_operand_dims == dn.inserted_window_dims):   # pointwise (eager x[arrays] op= v)
        index = tuple(_h_clamped(idx[..., k], n) for k, n in enumerate(x.shape))
    else:
        index = _h_window_index(x.shape, idx, I.gather_dims_of(dn), sizes)
    out = x if in_place else x.copy()
    if mode == "set":
        out[index] = u
    else:
        (_H_AT_BOOL if x.dtype == np.bool_ else _H_AT)[mode].at(out, index, u)
    return out


host_kernels[I.dynamic_slice_p] = _h_dynamic_slice
host_kernels[I.dynamic_update_slice_p] = Kernel(rest=_h_dynamic_update_slice, in_place=True)
host_kernels[I.gather_p] = _h_gather
host_kernels[I.scatter_p] = Kernel(rest=_h_scatter, in_place=True)
