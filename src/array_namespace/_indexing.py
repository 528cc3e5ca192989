"""Indexing: x[key], and the functional updates behind x.at[key].op(v) and x[key] = v.

Supported keys (NumPy semantics, a superset of the standard's 2024.12 rules):

* basic: ints, slices with any step, Ellipsis, None. A read is a (reversed) strided slice
  plus a reshape; an update is `select(mask, op(x, v'), x)` with v' padded out to x's shape.
  Eagerly (library code indexing element by element in Python loops), a key of Python ints and
  unit-step slices reads one gather and writes one scatter of its window, the starts an operand
  (so accelerators compile once per shape), from a plan cached per (shape, key) (_indexing_key.py).
* 0-d integer arrays. A concrete one acts as an int. A traced one (under jit/vmap) is a
  *dynamic* index: reads use dynamic_slice, updates dynamic_update_slice (or scatter).
* integer arrays: all integer-array indices (and the ints/0-d arrays next to them) are
  broadcast together; their result dims replace the indexed dims when the array indices
  are adjacent in the key, and go first otherwise. Reads are one gather (after slicing),
  updates one scatter.
* boolean arrays (and Python/0-d booleans): the mask becomes its nonzero() integer arrays, on
  the host eagerly; traced, at the count of True entries that jit guards and vmap's elements
  share (_datadep.py); abstract (make_jaxpr, strict jit) a read raises DataDependentShapeError.
  Updates whose value needs no count of the True entries (a scalar, say) are one select
  instead, eagerly and under every transform (_indexing_mask.py).

Bounds: an out-of-range index raises IndexError: a static one (Python int, or a concrete integer
array) at once; a traced one where its values can be known -- a jit called with concrete arrays
(whether every index is inside is guarded, so a later call with one outside raises as eager does),
vmap (its elements), grad -- by a check staged beside it (_datadep.check_bounds). Abstract
(make_jaxpr, jit(..., guards=False)) it cannot be checked: negative values are wrapped once (i + n),
and the result is then clamped into range -- the window is moved to lie inside the array, as XLA
and JAX do. So there x[i] with i = n + 5 reads x[n - 1].

Duplicate integer-array indices in updates: add/subtract/multiply/min/max accumulate every
update (like numpy.ufunc.at); set, divide and power let one of the duplicates win.

A key is first expanded into per-dimension entries (_indexing_key.py); boolean-mask updates
that stay one select live in _indexing_mask.py.
"""
from __future__ import annotations

import numpy as np

from transforms.backend import backend
from transforms.core import EVAL, bind, trace_state, tracing
from transforms.primitives import elementwise as P
from transforms.primitives import indexing as I
from transforms.primitives import structural as S

from . import _dtypes as D
from ._array import Array, _module
from ._datadep import check_bounds, host_value
from ._helpers import as_array, binary, host_key, normalize_axis, wrap
from ._indexing_key import (_IDX, _Ent, _expand, _idx_value, _np_grid, _np_index, _np_stack, _static, _traced_grid,
                            _wrap_negative, basic_key, basic_plan, index_operand)
from ._indexing_mask import has_mask, masked_update
from ._sharded import shard_row

# --------------------------------------------------------------------------------- read

def _strided_region(shape, ents, keep_dims=()):
    """The box a basic key selects: per dim (lowest index, count, positive stride), and the dims
    read in reverse (negative steps). Dims in keep_dims, or indexed dynamically, stay whole."""
    lows, counts, strides, rev = [], [], [], []
    by_dim = {e.dim: e for e in ents if e.dim is not None}
    for d, n in enumerate(shape):
        e = by_dim[d]
        if d in keep_dims or e.kind in ("dyn", "arr"):
            lo, c, st = 0, n, 1
        elif e.kind == "int":
            lo, c, st = e.start, 1, 1
        else:
            c, st = e.count, e.step
            lo = e.start + (c - 1) * st if (st < 0 and c) else e.start
            if st < 0:
                rev.append(d)
        lows.append(lo)
        counts.append(c)
        strides.append(abs(st))
    return lows, counts, strides, rev


def _static_slice(v, shape, ents, keep_dims):
    """Apply the slices and static ints of `ents`; dims in keep_dims stay whole."""
    lows, counts, strides, rev = _strided_region(shape, ents, keep_dims)
    if any(c == 0 for c in counts):
        return None, counts
    full = all(lo == 0 and c == n and st == 1 for lo, c, st, n in zip(lows, counts, strides, shape))
    if not full:
        limits = [lo + (c - 1) * st + 1 for lo, c, st in zip(lows, counts, strides)]
        v = S.slice_(v, lows, limits, strides)
    if rev:
        v = S.rev(v, rev)
    return v, counts


def _adv_layout(ents):
    """For keys with integer arrays: (broadcast shape B, adjacent?, final result shape)."""
    adv = [i for i, e in enumerate(ents) if e.kind in ("int", "dyn", "arr")]
    B = P.broadcast_shapes(*[tuple(ents[i].shape) if ents[i].kind == "arr" else () for i in adv])
    adjacent = adv[-1] - adv[0] + 1 == len(adv)
    final, emitted = ([] if adjacent else list(B)), not adjacent
    for i, e in enumerate(ents):
        if e.kind == "none":
            final.append(1)
        elif e.kind == "slice":
            final.append(e.count)
        elif not emitted:
            final.extend(B)
            emitted = True
    return B, adjacent, tuple(final)


def _result_shape(ents):
    if any(e.kind == "arr" for e in ents):
        return _adv_layout(ents)[2]
    return tuple(1 if e.kind == "none" else e.count for e in ents if e.kind in ("none", "slice"))


def _stacked_indices(ents, adv_ents, B):
    if trace_state.trace is EVAL and all(_static(e) for e in adv_ents):   # stacked on the host: no ops
        return backend.device_put(_np_stack([_np_index(e) for e in adv_ents], tuple(B)))
    cols = []
    for e in adv_ents:
        v = _idx_value(e)
        v = S.broadcast_to_shape(v, B) if tuple(S.shape_of(v)) != tuple(B) else v
        cols.append(S.reshape(v, tuple(B) + (1,)))
    return S.concatenate(cols, len(B)) if len(cols) > 1 else cols[0]


def elements(x, n):
    """The elements of eager 1-D x, as x[i] gives them (0-d arrays of x[0]'s aval), read from one host view
    of x's values (one read, not a gather per element: `for v in xp.arange(10_000)` in library code). Each
    element is read when next() asks for it; once x is rebound (a write into x: in place it is not, while
    this view refers to its value) the rest are read as x[i]."""
    first = x[0]
    yield first
    v = x._v
    got = backend.sharding_of(v)
    if type(got) is not tuple or len(got[0]) != 1:   # (over several devices: x[i] reads the one shard)
        for i in range(1, n):
            yield x[i]
        return
    vals, put, aval = backend.to_numpy(v), backend.device_put, first._v.aval
    for i in range(1, n):
        yield wrap(put(vals[i], aval)) if x._v is v else x[i]


def getitem(x, key, view=False, declined=False):
    """x[key]; view: the result becomes a view of x (the namespace's __getitem__), sharing x's memory eagerly;
    declined: the backend's eager read declined the key already (the namespace's __getitem__ asks it first)."""
    x = as_array(x, "__getitem__")
    if x.ndim == 0 and (_is_empty_key(key) or key is Ellipsis):
        return x if view else wrap(x._v)   # (x[()]: NumPy's scalar, a value of its own; x[...]: a view, x itself)
    eager = not tracing[0] or trace_state.trace is EVAL
    if eager:
        out = None if declined else backend.eager_getitem(x._v, host_key(key), view)   # (a basic key or a mask)
        if out is not None:
            return wrap(out)
        if type(key) is int or type(key) is tuple and key and type(key[0]) is int:
            row = shard_row(x, key)   # an array split over devices: read the one shard holding row key[0]
            if row is not None:
                return row
    hk = basic_key(key) if eager else None
    if hk is not None:   # eager, ints / slices / None / Ellipsis: the expansion is cached per (shape, key)
        p = basic_plan(x, hk, key, "__getitem__")
        if p.read:   # unit steps, not empty: one gather of the window, its starts an operand (no recompiles)
            v = x._v if p.full else bind(I.gather_p, x._v, p.idx, dimension_numbers=p.gdn, slice_sizes=p.sizes)
            return wrap(S.reshape(v, p.shape))
        ents, out_shape = p.ents, p.shape
    else:
        x, ents = _expand(x, key, "__getitem__")
        out_shape = _result_shape(ents)
    shape, v = x.shape, x._v
    if any(e.kind == "arr" for e in ents):
        return _getitem_advanced(x, ents, out_shape)
    if trace_state.trace is EVAL and 0 not in out_shape and _unit_steps(ents):
        return wrap(S.reshape(_eager_read(v, shape, ents), out_shape))
    sv, counts = _static_slice(v, shape, ents, ())
    if sv is None or 0 in out_shape:
        from ._creation import zeros
        return zeros(out_shape, dtype=x.dtype)
    dyn = [e for e in ents if e.kind == "dyn"]
    if dyn:
        zero = np.asarray(0, _IDX)
        starts = [zero] * len(shape)
        sizes = list(counts)
        for e in dyn:
            starts[e.dim] = e.val
            sizes[e.dim] = 1
        sv = I.dynamic_slice(sv, starts, sizes)
    return wrap(S.reshape(sv, out_shape))


def _getitem_advanced(x, ents, out_shape):
    shape = x.shape
    B, adjacent, _ = _adv_layout(ents)
    adv_ents = [e for e in ents if e.kind in ("int", "dyn", "arr")]
    adv_dims = tuple(e.dim for e in adv_ents)
    if 0 in out_shape:
        from ._creation import zeros
        return zeros(out_shape, dtype=x.dtype)
    sv, counts = _static_slice(x._v, shape, ents, set(adv_dims))
    if sv is None:
        from ._creation import zeros
        return zeros(out_shape, dtype=x.dtype)
    idx = _stacked_indices(ents, adv_ents, B)
    rest = [d for d in range(len(shape)) if d not in adv_dims]
    first_adv = min(adv_dims)
    p = sum(1 for d in rest if d < first_adv) if adjacent else 0
    offset_dims = tuple(range(p)) + tuple(range(p + len(B), len(B) + len(rest)))
    slice_sizes = tuple(1 if d in adv_dims else counts[d] for d in range(len(shape)))
    dn = I.GatherDims(offset_dims, adv_dims, adv_dims)   # (key order == dim order, so sorted)
    out = I.gather(sv, idx, dn, slice_sizes)
    return wrap(S.reshape(out, out_shape))


# ------------------------------------------------------------------------------- update
_FILL = {"set": 0, "add": 0, "subtract": 0, "multiply": 1, "divide": 1, "power": 1, "min": 0, "max": 0}


_BOOL_MODES = {"add": "logical_or", "multiply": "logical_and", "min": "logical_and", "max": "logical_or"}


def _combine(mode, x, v):
    if mode == "set":
        return v
    EW = _module("_elementwise")
    if S.dtype_of(x) == np.bool_ and mode in _BOOL_MODES:   # as NumPy (and the scatter path) do on bools
        return getattr(EW, _BOOL_MODES[mode])(wrap(x), wrap(v))._v
    f = {"add": EW.add, "subtract": EW.subtract, "multiply": EW.multiply, "divide": EW.divide,
         "power": EW.pow, "min": EW.minimum, "max": EW.maximum}[mode]
    return f(wrap(x), wrap(v))._v


def update(x, key, value, mode, fname, in_place=False):
    """x with x[key] replaced by (or combined with) value; x's dtype and shape are kept. in_place: x's
    value is given up by its only holder (`x[key] = value`), so eagerly its memory may take the write."""
    x = as_array(x, fname)
    if type(value) is not Array:
        if isinstance(value, np.generic) and value.ndim == 0:
            value = value.item()        # a NumPy scalar is stored like the Python scalar it holds
        elif not isinstance(value, (bool, int, float, complex)):
            value = _to_array(value, fname)
    _, v, dt = binary(fname, x, value, broadcast=False)
    if dt != x.dtype:
        raise TypeError(f"{fname}: a {dt.name} value cannot be stored into a {x.dtype.name} array without "
                        "changing its dtype; cast the value with astype first")
    if mode == "divide" and dt not in D.FLOATING:
        raise TypeError(f"{fname}: dividing a {dt.name} array gives floating-point values, which cannot be "
                        "stored back without changing its dtype; cast x with astype first")
    if mode in ("min", "max") and dt in D.COMPLEX:
        raise TypeError(f"{fname}: complex values have no order; min/max updates need a real-valued array")
    if in_place and mode == "set" and trace_state.trace is EVAL:   # (a basic key, host-held: straight into x)
        out = backend.eager_setitem(x._v, host_key(key), v)
        if out is not None:
            return wrap(out)
    x0, p = x, None
    hk = basic_key(key) if trace_state.trace is EVAL else None
    if hk is not None:   # eager, ints / slices / None / Ellipsis: the expansion is cached per (shape, key)
        p = basic_plan(x, hk, key, fname)
        ents, target = p.ents, p.shape
    else:
        if has_mask(key):
            out = masked_update(x, key, v, mode, fname)   # a select, when no count of True entries is needed
            if out is not None:
                return out
        if x.ndim == 0 and (_is_empty_key(key) or key is Ellipsis):
            ents = []
        else:
            x, ents = _expand(x, key, fname)   # (0-d booleans in the key insert axes into x)
        target = _result_shape(ents) if ents else ()
    vshape = S.shape_of(v)
    try:
        if vshape and vshape != target and (len(vshape) > len(target) or
                                            P.broadcast_shapes(vshape, target) != tuple(target)):
            raise ValueError
    except ValueError:
        raise ValueError(f"{fname}: value of shape {vshape} cannot be broadcast to the indexed shape "
                         f"{target}") from None
    if 0 in target:
        return x0
    if p is not None and p.unit:   # eager: one dynamic_update_slice whose starts are operands
        return wrap(_update_window(x._v, p, v, mode, in_place))
    v = S.broadcast_to_shape(v, target)
    kinds = {e.kind for e in ents}
    if "arr" in kinds:
        out = _update_scatter(x, ents, v, mode)
    elif all(abs(e.step) == 1 or e.count <= 1 for e in ents if e.kind == "slice"):
        # one dynamic_update_slice of the window (eagerly: starts as operands, no recompiles); under a trace
        # O(window) where a pad + select is O(x) per write (a loop of such writes: issue 25's GaussianMixture)
        out = _update_dynamic(x, ents, v, mode)
    elif "dyn" in kinds:
        out = _update_scatter(x, ents, v, mode)
    else:
        out = _update_basic(x, ents, v, mode)
    return wrap(S.reshape(out, x0.shape))


def _is_empty_key(key):
    return isinstance(key, tuple) and len(key) == 0


def _unit_steps(ents):
    return all(e.kind in ("int", "none") or (e.kind == "slice" and (e.step == 1 or e.count <= 1)) for e in ents)


def _index_operand(i):
    """A static index as a runtime int64 scalar (cached eagerly), so eager indexing compiles once per shape."""
    if trace_state.trace is EVAL:
        return index_operand(int(i))
    return P.convert_element_type(int(i), _IDX)


def _update_window(xv, p, v, mode, in_place=False):
    """x's raw value with the window of basic plan `p` (unit steps) replaced by / combined with v (whose
    shape broadcasts to p.shape): one scatter of the window (a gather first to combine), starts an operand."""
    if p.full:
        v = _strong(_fit(v, p.shape, p.sizes), xv)
        return v if mode == "set" else _combine(mode, xv, v)
    v = _fit(v, p.shape, p.wshape)
    if mode != "set":
        v = _combine(mode, bind(I.gather_p, xv, p.idx, dimension_numbers=p.gdn, slice_sizes=p.sizes), v)
    if in_place:
        out = backend.eager_in_place(I.scatter_p, (xv, p.idx, v), {"dimension_numbers": p.sdn, "mode": "set"})
        if out is not None:
            return out
    return bind(I.scatter_p, xv, p.idx, v, dimension_numbers=p.sdn, mode="set")


def _fit(v, target, shape):
    """v (which broadcasts to `target`) as an array of `shape`, a shape with target's element count."""
    vs = S.shape_of(v)
    if vs == shape:
        return v
    if vs == ():   # a scalar: into a one-element window as a reshape (cheaper than a broadcast)
        return S.broadcast_in_dim(v, shape, ()) if any(n != 1 for n in shape) else S.reshape(v, shape)
    return S.reshape(S.broadcast_to_shape(v, target), shape)


def _strong(v, xv):
    """v as x's type: a Python scalar's weak type must not pass to x when v replaces x whole."""
    if S.aval_of(v).weak_type != S.aval_of(xv).weak_type:
        return P.convert_element_type(v, S.dtype_of(xv), S.aval_of(xv).weak_type)
    return v


def _eager_read(v, shape, ents):
    """Eager basic read: one dynamic_slice whose starts are operands, not compile-time params."""
    by_dim = {e.dim: e for e in ents if e.dim is not None}
    starts, sizes = [], []
    for d, n in enumerate(shape):
        e = by_dim[d]
        starts.append(_index_operand(e.start))
        sizes.append(1 if e.kind == "int" else e.count)
    if all(sz == n for sz, n in zip(sizes, shape)):
        return v
    return I.dynamic_slice(v, starts, sizes)


def _update_basic(x, ents, v, mode):
    shape = x.shape
    lows, counts, strides, rev = _strided_region(shape, ents)
    v = S.reshape(v, tuple(counts))
    if rev:
        v = S.rev(v, rev)
    xv = x._v
    if all(lo == 0 and c == n for lo, c, n in zip(lows, counts, shape)):
        return _combine(mode, xv, _strong(v, xv))
    config = [(lo, n - (lo + (c - 1) * st + 1), st - 1) for lo, c, st, n in zip(lows, counts, strides, shape)]
    mask = S.pad(S.full(tuple(counts), True, D.bool_), P.convert_element_type(False, D.bool_), config)
    fill = P.convert_element_type(_FILL[mode], x.dtype)
    padded = S.pad(v, fill, config)
    return P.select_n(mask, xv, _combine(mode, xv, padded))


def _update_dynamic(x, ents, v, mode):
    """Traced scalar indices (plus unit-step slices): one dynamic_update_slice."""
    shape = x.shape
    by_dim = {e.dim: e for e in ents if e.dim is not None}
    starts, counts, rev = [], [], []
    for d in range(len(shape)):
        e = by_dim[d]
        if e.kind == "dyn":
            starts.append(e.val)
            counts.append(1)
        elif e.kind == "int":
            starts.append(_index_operand(e.start))
            counts.append(1)
        else:
            c, st = e.count, e.step
            starts.append(_index_operand(e.start + (c - 1) * st if (st < 0 and c) else e.start))
            counts.append(c)
            if st < 0 and c > 1:
                rev.append(d)
    v = S.reshape(v, tuple(counts))
    if rev:
        v = S.rev(v, rev)
    xv = x._v
    if mode != "set":
        cur = I.dynamic_slice(xv, starts, counts)
        v = _combine(mode, cur, v)
    return I.dynamic_update_slice(xv, v, starts)


def _update_scatter(x, ents, v, mode):
    """Integer-array (or strided + traced) updates: a pointwise scatter over the indexed grid."""
    shape = x.shape
    B, adjacent, _ = _adv_layout(ents) if any(e.kind == "arr" for e in ents) else ((), True, None)
    # the grid layout G: the result dims without the None axes
    layout, emitted = ([] if adjacent else [("B", None)]), not adjacent
    for e in ents:
        if e.kind == "slice":
            layout.append(("S", e))
        elif e.kind in ("int", "dyn", "arr") and not emitted:
            layout.append(("B", None))
            emitted = True
    G, bpos, spos = [], [], {}
    for tag, e in layout:
        if tag == "B":
            bpos = list(range(len(G), len(G) + len(B)))
            G.extend(B)
        else:
            spos[e.dim] = len(G)
            G.append(e.count)
    G = tuple(G)
    by_dim = {e.dim: e for e in ents if e.dim is not None}
    if trace_state.trace is EVAL and all(e.kind == "slice" or _static(e) for e in by_dim.values()):
        idx = backend.device_put(_np_grid(len(shape), by_dim, G, B, bpos, spos))   # built on the host: no ops
    else:
        idx = _traced_grid(len(shape), by_dim, G, B, bpos, spos)
    upd = S.reshape(v, G)
    nd = len(shape)
    dn = I.ScatterDims((), tuple(range(nd)), tuple(range(nd)))
    xv = x._v
    if mode in ("set", "add", "min", "max"):
        return I.scatter(xv, idx, upd, dn, mode)
    if mode == "multiply":
        return I.scatter(xv, idx, upd, dn, "mul")
    if mode == "subtract" and x.dtype != D.bool_:
        return I.scatter(xv, idx, P.neg(upd), dn, "add")
    cur = I.gather(xv, idx, I.gather_dims_of(dn), (1,) * nd)
    return I.scatter(xv, idx, _combine(mode, cur, upd), dn, "set")


# ----------------------------------------------------------------- indexing functions

def take(x, indices, /, *, axis=None):
    """Elements of x at `indices` (1-D integer array) along axis: x[(:,)*axis + (indices,)].

    Parameters: x (Array): at least 1-D. indices (integer Array, list or tuple): positions (negative ones count from
        the end). axis (int or None): the axis (may be None only for 1-D x).
    Returns: Array: of x's dtype; the axis replaced by indices' length.
    Raises: TypeError: if indices is not integer. ValueError: if x is 0-d or axis is None for x of more than one
        dimension. IndexError: for an index out of range (eagerly, under vmap and under a jit called with concrete
        arrays; abstractly traced -- make_jaxpr, jit(..., guards=False) -- it is clamped into range after a
        negative one is counted from the end: XLA's rule, as in JAX). AxisError (an
        IndexError and a ValueError): for an axis out of range.

    >>> xp.take(xp.asarray([10, 20, 30]), xp.asarray([2, 0]))
    Array([30, 10])
    """
    x = as_array(x, "take")
    if type(indices) is not Array:
        if isinstance(indices, (list, tuple, np.ndarray)):
            indices = _to_array(np.asarray(indices), "take")
        else:
            raise TypeError(f"take: indices must be an integer array, got {type(indices).__name__}")
    if indices.dtype not in D.INTEGER:
        raise TypeError(f"take: indices must have an integer dtype, got {indices.dtype.name}")
    if axis is None:
        if x.ndim != 1:
            raise ValueError(f"take: axis is required for an array of {x.ndim} dimensions")
        axis = 0
    ax = normalize_axis(axis, x.ndim, "take")
    if x.ndim == 0:
        raise ValueError("take: x must have at least one dimension")
    return getitem(x, (slice(None),) * ax + (indices,))


def take_along_axis(x, indices, /, *, axis=-1):
    """out[..., i, ...] = x[..., indices[..., i, ...], ...] along axis (other dims broadcast).

    Parameters: x (Array): the input. indices (Array): integer, of x's ndim; outside axis its shape broadcasts with
        x's. axis (int): the axis (default -1).
    Returns: Array: of x's dtype, the broadcast shape with indices' size along axis.
    Raises: TypeError: if indices is not an integer array. ValueError: for another ndim or shapes that do not
        broadcast. IndexError: for an index out of range (clamped where abstractly traced, as in take) or an
        empty axis. AxisError
        (an IndexError and a ValueError): for an axis out of range.

    >>> xp.take_along_axis(xp.asarray([[3, 1], [2, 4]]), xp.asarray([[1], [0]]), axis=1)
    Array([[1],
           [2]])
    """
    x = as_array(x, "take_along_axis")
    if type(indices) is not Array or indices.dtype not in D.INTEGER:
        raise TypeError("take_along_axis: indices must be an integer array")
    if indices.ndim != x.ndim:
        raise ValueError(f"take_along_axis: indices must have x's rank {x.ndim}, got {indices.ndim}")
    ax = normalize_axis(axis, x.ndim, "take_along_axis")
    n = x.shape[ax]
    try:
        bshape = P.broadcast_shapes(tuple(d for i, d in enumerate(x.shape) if i != ax),
                                    tuple(d for i, d in enumerate(indices.shape) if i != ax))
    except ValueError:
        raise ValueError(f"take_along_axis: shapes {x.shape} and {indices.shape} do not broadcast outside "
                         f"axis {ax}") from None
    hv = host_value(indices._v)
    if hv is not None:
        if hv.size and (hv.min() < -n or hv.max() >= n):   # (the message check_bounds gives a traced index)
            bad = hv[(hv < -n) | (hv >= n)].flat[0]
            raise IndexError(f"take_along_axis: index {bad} is out of bounds for axis {ax} with size {n}")
        iv = _idx_value(_Ent("arr", val=np.where(hv < 0, hv + n, hv).astype(_IDX)))
    else:
        check_bounds(indices._v, n, "take_along_axis", ax)
        iv = _wrap_negative(indices._v, n)
    full = lambda m: tuple(bshape[:ax]) + (m,) + tuple(bshape[ax:])  # noqa: E731
    xv = S.broadcast_to_shape(x._v, full(n)) if x.shape != full(n) else x._v
    ishape = full(indices.shape[ax])
    if tuple(S.shape_of(iv)) != ishape:
        iv = S.broadcast_to_shape(iv, ishape)
    if 0 in ishape:
        from ._creation import zeros
        return zeros(ishape, dtype=x.dtype)
    if n == 0:
        raise IndexError("take_along_axis: cannot take from an empty axis")
    return wrap(I.take_along_axis(xv, iv, ax))


def _to_array(value, fname):
    from ._creation import asarray
    return asarray(value)


class _AtIndex:
    __slots__ = ("x", "key")

    def __init__(self, x, key):
        self.x, self.key = x, key

    def get(self):
        return getitem(self.x, self.key)

    def set(self, value):
        return update(self.x, self.key, value, "set", "at[].set")

    def add(self, value):
        return update(self.x, self.key, value, "add", "at[].add")

    def subtract(self, value):
        return update(self.x, self.key, value, "subtract", "at[].subtract")

    def multiply(self, value):
        return update(self.x, self.key, value, "multiply", "at[].multiply")

    def divide(self, value):
        return update(self.x, self.key, value, "divide", "at[].divide")

    def power(self, value):
        return update(self.x, self.key, value, "power", "at[].power")

    def min(self, value):
        return update(self.x, self.key, value, "min", "at[].min")

    def max(self, value):
        return update(self.x, self.key, value, "max", "at[].max")


class _At:
    """x.at[key] -> an object whose methods return updated copies of x."""
    __slots__ = ("x",)

    def __init__(self, x):
        self.x = x

    def __getitem__(self, key):
        return _AtIndex(self.x, key)

