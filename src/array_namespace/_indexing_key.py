"""Index keys: how x[key] is read as per-dimension entries, by NumPy's rules (see _indexing.py).

`_expand` normalizes a key (ints, slices, Ellipsis, None, integer and boolean arrays, lists) into
one `_Ent` per result position: bounds of static indices are checked here, boolean masks become
their nonzero() integer arrays (on the host; traced, at their count: _datadep.py), and traced indices
get their negative values wrapped. The read and update paths of _indexing.py and _indexing_mask.py
work on these entries only; the index arrays of integer-array keys are built from them at the end of
this module (with NumPy when every index is concrete and the call is eager, as ops otherwise).

Basic keys (Python ints, slices of ints, None, Ellipsis) are expanded once per (shape, key): `basic_plan`
caches the entries with what eager reads and updates need (library code indexes element by element in
Python loops, and the expansion cost more than the indexing itself). A key that raises is not cached.
"""
from __future__ import annotations

import numpy as np

from transforms.backend import backend
from transforms.core import bind, get_aval
from transforms.primitives import elementwise as P
from transforms.primitives import indexing as I
from transforms.primitives import structural as S

from . import _dtypes as D
from ._array import Array
from ._datadep import check_bounds, host_value, mask_hint, nonzero_sized, require_host

_INTS = (int, np.integer)
_IDX = D.DEFAULT_INDEX


class _Ent:
    """One entry of an expanded key. kind: none | slice | int | dyn (traced 0-d) | arr (int array)."""
    __slots__ = ("kind", "dim", "start", "count", "step", "val", "shape")

    def __init__(self, kind, dim=None, start=0, count=1, step=1, val=None, shape=()):
        self.kind, self.dim, self.start, self.count, self.step, self.val, self.shape = (
            kind, dim, start, count, step, val, shape)


def _is_bool_scalar(k):
    return isinstance(k, (bool, np.bool_))


def _coerce(k, fname):
    """Lists / NumPy arrays in a key become (concrete) Arrays; other entries are checked."""
    if type(k) is Array or k is None or k is Ellipsis or isinstance(k, slice) or _is_bool_scalar(k):
        return k
    if isinstance(k, _INTS):
        return k
    if isinstance(k, (list, np.ndarray)):
        from ._creation import asarray
        arr = np.asarray(k)
        if arr.dtype.kind not in "biu" and not (arr.size == 0 and arr.dtype.kind == "f"):
            raise IndexError(f"{fname}: array indices must be integer or boolean, got {arr.dtype}")
        if arr.dtype.kind == "f":
            arr = arr.astype(np.int64)
        return asarray(arr)
    raise IndexError(f"{fname}: unsupported index {k!r} of type {type(k).__name__}; use ints, slices, Ellipsis, "
                     "None, integer arrays or boolean arrays")


def _expand(x, key, fname):
    """Expand the key: -> (x possibly with inserted axes for 0-d booleans, list of _Ent)."""
    if not isinstance(key, tuple):
        key = (key,)
    key = [_coerce(k, fname) for k in key]
    if sum(1 for k in key if k is Ellipsis) > 1:
        raise IndexError(f"{fname}: an index can only have a single ellipsis ('...')")

    def ndims(k):   # how many dims of x an entry consumes
        if k is None or k is Ellipsis or _is_bool_scalar(k):
            return 0
        if type(k) is Array:
            if k.dtype == D.bool_:
                return k.ndim
            if k.dtype not in D.INTEGER:
                raise IndexError(f"{fname}: array indices must be integer or boolean, got {k.dtype.name}")
        return 1
    consumed = sum(ndims(k) for k in key)
    # 0-d boolean entries: True/False add a new axis of length 1/0 -> insert a size-1 axis there
    # and index it with the integer array [0] or []
    def is_b0(k):
        return _is_bool_scalar(k) or (type(k) is Array and k.dtype == D.bool_ and k.ndim == 0)
    if any(is_b0(k) for k in key):
        from ._creation import asarray
        from ._manipulation import expand_dims
        n_ell = max(len(x.shape) - consumed, 0)
        new_key, inserts, d = [], [], 0
        for k in key:
            if is_b0(k):
                b = bool(require_host(k._v, fname, mask_hint(fname))) if type(k) is Array else bool(k)
                inserts.append(d)
                new_key.append(asarray(np.zeros(1 if b else 0, np.int64)))
                d += 1
            else:
                new_key.append(k)
                d += n_ell if k is Ellipsis else ndims(k)
        x = expand_dims(x, axis=tuple(inserts))
        key = new_key
        consumed += len(inserts)
    shape = x.shape
    if consumed > len(shape):
        raise IndexError(f"{fname}: too many indices ({consumed}) for an array with {len(shape)} dimensions")
    if Ellipsis in [k for k in key if not isinstance(k, Array)]:
        i = next(j for j, k in enumerate(key) if k is Ellipsis)
        key = key[:i] + [slice(None)] * (len(shape) - consumed) + key[i + 1:]
    else:
        key = key + [slice(None)] * (len(shape) - consumed)
    ents, d = [], 0
    for k in key:
        if k is None:
            ents.append(_Ent("none"))
            continue
        if isinstance(k, slice):
            n = shape[d]
            start, stop, step = k.indices(n)
            ents.append(_Ent("slice", d, start, len(range(start, stop, step)), step))
            d += 1
            continue
        if type(k) is not Array:     # a Python / NumPy int
            i, n = int(k), shape[d]
            if not -n <= i < n:
                raise IndexError(f"{fname}: index {i} is out of bounds for axis {d} with size {n}")
            ents.append(_Ent("int", d, i % n))
            d += 1
            continue
        if k.dtype == D.bool_:      # a mask: its nonzero() integer arrays (on the host, or traced at their count)
            dims = tuple(shape[d:d + k.ndim])
            if len(dims) != k.ndim or not all(ms in (xs, 0) for ms, xs in zip(k.shape, dims)):
                raise IndexError(f"{fname}: boolean index of shape {k.shape} does not match the indexed dims "
                                 f"{shape[d:d + k.ndim]} of the array")
            m = host_value(k._v)
            nzs = (nonzero_sized(k._v, k.shape, fname, mask_hint(fname)) if m is None
                   else [nz.astype(_IDX) for nz in np.nonzero(m)])
            for nz in nzs:
                ents.append(_Ent("arr", d, val=nz, shape=tuple(S.shape_of(nz))))
                d += 1
            continue
        n = shape[d]
        hv = host_value(k._v)
        if hv is not None:          # a concrete integer array: check bounds now
            lo = hv.min() if hv.size else 0
            if hv.size and (lo < -n or hv.max() >= n):
                bad = hv[(hv < -n) | (hv >= n)].flat[0]
                raise IndexError(f"{fname}: index {bad} is out of bounds for axis {d} with size {n}")
            if hv.ndim == 0:
                ents.append(_Ent("int", d, int(hv) % n))
            else:
                hv = np.where(hv < 0, hv + n, hv).astype(_IDX) if lo < 0 else hv.astype(_IDX, copy=False)
                ents.append(_Ent("arr", d, val=hv, shape=hv.shape))
        else:
            check_bounds(k._v, n, fname, d)   # (a jit that knows its values guards it: eager's error, not a clamp)
            v = _wrap_negative(k._v, n)
            ents.append(_Ent("dyn" if k.ndim == 0 else "arr", d, val=v, shape=k.shape))
        d += 1
    return x, ents


def _wrap_negative(v, n):
    """A traced index as int64 with negative values wrapped once (i + n)."""
    v = P.convert_element_type(v, _IDX) if S.dtype_of(v) != _IDX else v
    neg = bind(P.lt_p, v, P.convert_element_type(0, _IDX))
    return P.select_n(neg, v, P.add(v, P.convert_element_type(n, _IDX)))


def _idx_value(e):
    """The raw index value of an int / dyn / arr entry."""
    if e.kind == "int":
        return np.asarray(e.start, _IDX)
    if isinstance(e.val, np.ndarray):
        return backend.device_put(e.val)
    return e.val


# ------------------------------------------------------------------ basic keys, expanded once

def basic_key(key):
    """A hashable stand-in of a basic key (Python ints, slices of Python ints / None, None, Ellipsis),
    or None for any other key (bools, NumPy ints, arrays, lists: the general path)."""
    out = []
    for k in (key if type(key) is tuple else (key,)):
        t = type(k)
        if t is int or k is None or k is Ellipsis:
            out.append(k)
        elif t is slice:
            a, b, c = k.start, k.stop, k.step
            if not ((a is None or type(a) is int) and (b is None or type(b) is int) and (c is None or type(c) is int)):
                return None
            out.append((a, b, c))
        else:
            return None
    return tuple(out)


class _Plan:
    """A basic key expanded against a shape: its entries, the result shape, and -- when every slice has
    unit step (`unit`) -- the window one gather reads and one scatter writes: `idx` (its starts, an
    int64 operand), `sizes` (its extent per dim), `wshape` (the extent without the int-indexed dims,
    which the gather drops and the scatter inserts), `gdn` / `sdn` (their dimension numbers); `full`
    when the window is the whole array."""
    __slots__ = ("ents", "shape", "unit", "read", "starts", "idx_aval", "idx", "sizes", "wshape", "gdn", "sdn", "full")


_PLANS: dict = {}     # (shape, basic_key) -> _Plan; cleared when it grows past the bound
_PLANS_MAX = 4096
_OPERANDS: dict = {}  # int -> the eager int64 scalar operand (only ever filled eagerly)


def index_operand(i):
    """A static index as an eager int64 scalar operand (so eager indexing compiles once per shape), cached."""
    op = _OPERANDS.get(i)
    if op is None:
        op = P.convert_element_type(int(i), _IDX)
        if len(_OPERANDS) < 4096:
            _OPERANDS[i] = op
    return op


def basic_plan(x, hk, key, fname):
    """The cached _Plan of basic key `key` (hashable form `hk`) on x's shape. Eager only (the plan's
    operands are eager values); raises what _expand raises for a bad key."""
    ck = (x.shape, hk)
    p = _PLANS.get(ck)
    if p is not None:
        return p
    p = _DERIVED.get(ck)
    if p is not None:
        return p
    p = _from_template(x.shape, hk)
    if p is not None:    # kept apart: a loop over x[i] floods its table, not the one of expanded keys
        if len(_DERIVED) >= _PLANS_MAX:
            _DERIVED.clear()
        _DERIVED[ck] = p
        return p
    _, ents = _expand(x, key, fname)
    p = _plan(x.shape, ents)
    if len(_PLANS) >= _PLANS_MAX:
        _PLANS.clear()   # (dict ops are atomic under the GIL)
    _PLANS[ck] = p
    return p


def _plan(shape, ents):
    p = _Plan()
    p.ents = ents
    p.shape = tuple(1 if e.kind == "none" else e.count for e in ents if e.kind in ("none", "slice"))
    p.unit = all(e.kind in ("int", "none") or e.step == 1 or e.count <= 1 for e in ents)
    p.read = p.unit and 0 not in p.shape
    if p.unit:
        nd = len(shape)
        by_dim = {e.dim: e for e in ents if e.dim is not None}
        ints = tuple(d for d in range(nd) if by_dim[d].kind == "int")
        p.sizes = tuple(1 if d in ints else by_dim[d].count for d in range(nd))
        p.wshape = tuple(n for d, n in enumerate(p.sizes) if d not in ints)
        p.starts = np.array([by_dim[d].start for d in range(nd)], _IDX)
        p.idx_aval = get_aval(p.starts)
        p.idx = backend.device_put(p.starts, p.idx_aval)
        win = tuple(range(nd - len(ints)))
        p.gdn = I.GatherDims(win, ints, tuple(range(nd)))
        p.sdn = I.ScatterDims(win, ints, tuple(range(nd)))
        p.full = p.sizes == tuple(shape)
    return p


_INT = object()        # an int's place in a template key
_TEMPLATES: dict = {}  # (shape, key with its ints as _INT) -> the plan of that key with every int 0
_DERIVED: dict = {}    # (shape, key) -> its plan, derived from its template


def _from_template(shape, hk):
    """The plan of a key with ints, derived from the plan of its form (`x[i]` for a new i in a Python loop
    costs no expansion); None when the key has no ints or an int is out of bounds (the expansion raises)."""
    if int not in map(type, hk):
        return None
    tk = (shape, tuple(_INT if type(k) is int else k for k in hk))
    t = _TEMPLATES.get(tk)
    if t is None:
        try:
            _, ents = _expand(_Shaped(shape), tuple(0 if type(k) is int else _slice(k) for k in hk), "")
        except IndexError:
            return None
        t = _plan(shape, ents)
        if len(_TEMPLATES) >= _PLANS_MAX:
            _TEMPLATES.clear()
        _TEMPLATES[tk] = t
    ints = [k for k in hk if type(k) is int]
    ents, j = list(t.ents), 0
    for a, e in enumerate(ents):
        if e.kind == "int":
            i, n = ints[j], shape[e.dim]
            if not -n <= i < n:
                return None
            ents[a] = _Ent("int", e.dim, i % n)
            j += 1
    p = _Plan()
    p.ents, p.shape, p.unit, p.read = ents, t.shape, t.unit, t.read
    if t.unit:
        p.sizes, p.wshape, p.gdn, p.sdn, p.full = t.sizes, t.wshape, t.gdn, t.sdn, t.full
        p.starts = starts = t.starts.copy()
        for e in ents:
            if e.kind == "int":
                starts[e.dim] = e.start
        p.idx_aval = t.idx_aval
        p.idx = backend.device_put(starts, t.idx_aval)
    return p


def _slice(k):
    return slice(*k) if type(k) is tuple else k


class _Shaped:
    """A stand-in for an array in `_expand` of a key without boolean or array entries: only .shape is read."""
    __slots__ = ("shape",)

    def __init__(self, shape):
        self.shape = shape


# ------------------------------------------------------------------ index arrays of integer-array keys

def _static(e):
    """Whether an entry's index is known on the host (an int, or a concrete integer array)."""
    return e.kind == "int" or (e.kind == "arr" and isinstance(e.val, np.ndarray))


def _np_index(e):
    return np.asarray(e.start if e.kind == "int" else e.val, _IDX)


def _np_stack(cols, shape):
    """Index columns broadcast to `shape`, stacked along a new last axis."""
    cols = [c if c.shape == shape else np.broadcast_to(c, shape) for c in cols]
    return cols[0].reshape(shape + (1,)) if len(cols) == 1 else np.stack(cols, axis=-1)


def _np_grid(nd, by_dim, G, B, bpos, spos):
    """The pointwise scatter's indices (shape G + (nd,)) when every index is static: NumPy on the host."""
    cols = []
    for d in range(nd):
        e = by_dim[d]
        if e.kind == "slice":
            col = (e.start + e.step * np.arange(e.count, dtype=_IDX)).reshape(
                [-1 if i == spos[d] else 1 for i in range(len(G))])
        else:
            col = _np_index(e)
            col = (col if col.shape == B else np.broadcast_to(col, B)).reshape(
                [G[i] if i in bpos else 1 for i in range(len(G))])
        cols.append(col)
    return _np_stack(cols, G)


def _traced_grid(nd, by_dim, G, B, bpos, spos):
    """The pointwise scatter's indices (shape G + (nd,)) as ops (some index is traced)."""
    cols = []
    for d in range(nd):
        e = by_dim[d]
        if e.kind == "slice":
            vec = P.add(P.mul(S.iota(_IDX, (e.count,), 0), P.convert_element_type(e.step, _IDX)),
                        P.convert_element_type(e.start, _IDX))
            col = vec if len(G) == 1 else S.broadcast_in_dim(vec, G, (spos[d],))
        else:
            iv = _idx_value(e)
            iv = S.broadcast_to_shape(iv, B) if tuple(S.shape_of(iv)) != tuple(B) else iv
            col = iv if len(B) == len(G) else S.broadcast_in_dim(iv, G, tuple(bpos))
        cols.append(S.reshape(col, G + (1,)))
    return S.concatenate(cols, len(G)) if len(cols) > 1 else cols[0]
