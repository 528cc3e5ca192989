"""Boolean-mask updates with a fixed shape: x[mask] = v and x.at[mask].op(v) as one select.

Reading x[mask] has a data-dependent shape (the number of True entries): see _datadep.py.
An *update* whose value does not need that number -- a scalar, a 0-d or size-1 array, or any
value that broadcasts without the masked axis (x[rows] = row_vector) -- keeps x's shape:

    out = where(M, op(x, v'), x)

with M the mask spread over x's dims (and-ed with the region the rest of the key selects:
ints, slices, None, Ellipsis, 0-d integer arrays, traced ones too) and v' the value spread
the same way. It runs identically eagerly and under jit, vmap and grad, even with a traced
mask, and its derivatives come from select_n's rules: for set, d/dx is 0 under the mask and 1
elsewhere, d/dv the sum over the mask. For multiply/divide/power both operands are replaced by
1 outside the mask first, so an inf/NaN derivative there cannot leak into the gradient.

Keys pairing the mask with integer arrays, and values that need the count, go back to the
general (nonzero) path, which needs the count: DataDependentShapeError where it is abstract.
"""
from __future__ import annotations

import math

import numpy as np

from transforms.core import bind
from transforms.primitives import elementwise as P
from transforms.primitives import structural as S

from . import _dtypes as D
from ._array import Array, _module
from ._datadep import check_bounds, host_value
from ._helpers import wrap

_INTS = (int, np.integer)
_IDX = D.DEFAULT_INDEX


def has_mask(key):
    """Cheap gate: could the key hold a boolean array?"""
    for k in (key if type(key) is tuple else (key,)):
        if type(k) is Array:
            if k.dtype == D.bool_:
                return True
        elif isinstance(k, (list, np.ndarray)):
            return True
    return False


def _as_mask(k):
    """The key entry as a boolean Array, or None. Lists / NumPy arrays of bools count."""
    if type(k) is Array:
        return k if k.dtype == D.bool_ else None
    if isinstance(k, (list, np.ndarray)):
        a = np.asarray(k)
        if a.dtype == np.bool_:
            from ._creation import asarray
            return asarray(a)
    return None


def _parse(shape, key, fname):
    """-> (entries, mask Array, first mask dim) or None when the key is not mask + basic entries.

    Entries: ("none",) | ("slice", d, start, count, step) | ("int", d, i) | ("dyn", d, traced i)
    | ("mask", d)."""
    key = list(key) if type(key) is tuple else [key]
    mask, mpos = None, None
    for i, k in enumerate(key):
        m = _as_mask(k)
        if m is not None:
            if mask is not None:
                return None             # two masks: the general path pairs their nonzero()s
            mask, mpos = m, i
            key[i] = m
        elif type(k) is Array:
            if k.ndim != 0 or k.dtype not in D.INTEGER:
                return None             # integer arrays pair with the mask's nonzero(): data-dependent
        elif not (k is None or k is Ellipsis or isinstance(k, slice)
                  or (isinstance(k, _INTS) and not isinstance(k, (bool, np.bool_)))):
            return None                 # Python bools, floats, ...: the general path decides
    if mask is None or sum(1 for k in key if k is Ellipsis) > 1:
        return None
    consumed = sum(mask.ndim if i == mpos else 0 if (k is None or k is Ellipsis) else 1
                   for i, k in enumerate(key))
    if consumed > len(shape):
        raise IndexError(f"{fname}: too many indices ({consumed}) for an array with {len(shape)} dimensions")
    if any(k is Ellipsis for k in key):
        i = next(j for j, k in enumerate(key) if k is Ellipsis)
        if i < mpos:
            mpos += len(shape) - consumed - 1
        key = key[:i] + [slice(None)] * (len(shape) - consumed) + key[i + 1:]
    else:
        key = key + [slice(None)] * (len(shape) - consumed)
    ents, d, d0 = [], 0, None
    for i, k in enumerate(key):
        if i == mpos:
            ents.append(("mask", d))
            d0, d = d, d + mask.ndim
        elif k is None:
            ents.append(("none",))
        elif isinstance(k, slice):
            start, stop, step = k.indices(shape[d])
            ents.append(("slice", d, start, len(range(start, stop, step)), step))
            d += 1
        else:
            n = shape[d]
            hv = host_value(k._v) if type(k) is Array else k
            if hv is None:
                from ._indexing_key import _wrap_negative
                check_bounds(k._v, n, fname, d)   # (known: eager's error; unknown: clamped, as traced reads)
                iv = _wrap_negative(k._v, n)   # then clamp into range, as traced reads do
                iv = bind(P.max_p, bind(P.min_p, iv, P.convert_element_type(n - 1, _IDX)),
                          P.convert_element_type(0, _IDX))
                ents.append(("dyn", d, iv))
            else:
                i_ = int(hv)
                if not -n <= i_ < n:
                    raise IndexError(f"{fname}: index {i_} is out of bounds for axis {d} with size {n}")
                ents.append(("int", d, i_ % n))
            d += 1
    return ents, mask, d0


_SAME = "x"          # a plan's answer: the update selects nothing, x is the result
_PLANS: dict = {}    # (x's shape, the key's static form, v's shape, mode) -> the plan (`_plan`)
_PLANS_MAX = 1024


def _static_key(key):
    """The key as a hashable form holding all a plan depends on -- each boolean mask Array as its shape --
    or None where an entry's value matters beyond that (a 0-d integer Array, a list or NumPy mask, ...)."""
    out = []
    for k in (key if type(key) is tuple else (key,)):
        t = type(k)
        if t is Array:
            if k.dtype != D.bool_:
                return None
            out.append(("mask", k.shape))
        elif t is int or k is None or k is Ellipsis:
            out.append(k)
        elif t is slice and all(e is None or type(e) is int for e in (k.start, k.stop, k.step)):
            out.append(("slice", k.start, k.stop, k.step))
        else:
            return None
    return type(key) is tuple, tuple(out)


def masked_update(x, key, v, mode, fname):
    """x (Array) updated at key (holding one boolean mask) with raw value v (already x's dtype),
    as a select; None when this key/value needs the general path. What to bind is worked out from
    static facts (`_plan`), once per (shape, key form, value shape, mode) where the key is static."""
    shape = tuple(x.shape)
    vshape0 = tuple(S.shape_of(v))
    sk = _static_key(key)
    if sk is not None:
        pk = (shape, sk, vshape0, mode)
        plan = _PLANS.get(pk)
        if plan is None:
            plan, _, _ = _plan(shape, key, vshape0, mode, fname)   # (raises as the function documents)
            if len(_PLANS) >= _PLANS_MAX:
                _PLANS.clear()
            _PLANS[pk] = plan
        mask = next((k for k in (key if type(key) is tuple else (key,)) if type(k) is Array), None)
        dyn = ()
    else:
        plan, mask, dyn = _plan(shape, key, vshape0, mode, fname)
    if plan is False:
        return None
    if plan is _SAME:
        return x
    return wrap(_emit(x._v, mask, v, dyn, mode, plan))


def _plan(shape, key, vshape0, mode, fname):
    """(plan, mask Array, traced-int entries): the plan False (the general path runs), _SAME, or the
    static facts `_emit` binds from; it raises for a key or value that cannot be used (IndexError,
    ValueError)."""
    parsed = _parse(shape, key, fname)
    if parsed is None:
        return False, None, ()
    ents, mask, d0 = parsed
    mshape, xdims = tuple(mask.shape), shape[d0:d0 + mask.ndim]
    if mshape != xdims:
        if all(ms in (xs, 0) for ms, xs in zip(mshape, xdims)):
            return _SAME, mask, ()      # a mask with a size-0 dim selects nothing
        raise IndexError(f"{fname}: boolean index of shape {mshape} does not match the indexed dims "
                         f"{xdims} of the array")
    # the indexed shape: the count of True entries (q) replaces the advanced entries where they
    # stand if they are adjacent in the key, else it goes first
    adv = [i for i, e in enumerate(ents) if e[0] in ("int", "dyn", "mask")]
    adjacent = adv[-1] - adv[0] + 1 == len(adv)
    target, q = ([None], 0) if not adjacent else ([], None)
    for i, e in enumerate(ents):
        if e[0] == "none":
            target.append(1)
        elif e[0] == "slice":
            target.append(e[3])
        elif adjacent and i == adv[0]:
            q = len(target)
            target.append(None)
    vshape = vshape0
    while len(vshape) > len(target) and vshape[0] == 1:      # NumPy drops leading unit dims
        vshape = vshape[1:]
    shown = tuple("n" if t is None else t for t in target)
    if len(vshape) > len(target):
        raise ValueError(f"{fname}: value of shape {vshape0} cannot be broadcast to the indexed "
                         f"shape {shown} (n: the number of True entries of the mask)")
    off = len(target) - len(vshape)
    for j, s in enumerate(vshape):
        t = target[off + j]
        if t is None:
            if s != 1:
                return False, None, ()  # needs the count of True entries: data-dependent
        elif s not in (1, t):
            raise ValueError(f"{fname}: value of shape {vshape0} cannot be broadcast to the "
                             f"indexed shape {shown} (n: the number of True entries of the mask)")
    if 0 in shape or any(e[0] == "slice" and e[3] == 0 for e in ents):
        return _SAME, mask, ()          # nothing selected
    # per dim of x: a slice keeps its count, everything else is 1 (the count axis is 1 here, so
    # moving it to the mask's place is a reshape)
    by_dim = {e[1]: e for e in ents if e[0] not in ("none", "mask")}
    sizes, cfg, rev, dyn = [], [], [], []
    for dim, n in enumerate(shape):
        e = ("mask",) if d0 <= dim < d0 + mask.ndim else by_dim[dim]
        if e[0] == "slice":
            _, _, start, c, st = e
            lo = start + (c - 1) * st if st < 0 else start
            sizes.append(c)
            cfg.append((lo, n - (lo + (c - 1) * abs(st) + 1), abs(st) - 1))
            if st < 0 and c > 1:
                rev.append(dim)
        elif e[0] == "int":
            sizes.append(1)
            cfg.append((e[2], n - e[2] - 1, 0))
        else:                                       # mask dims and traced ints: broadcast
            sizes.append(1)
            cfg.append((0, 0, 0))
            if e[0] == "dyn":
                dyn.append(e)
    padded = any(c != (0, 0, 0) for c in cfg)
    tgt1 = tuple(1 if t is None else t for t in target)
    mdims = None if mshape == shape else tuple(range(d0, d0 + mask.ndim))
    return (shape, vshape, tgt1, tuple(sizes), tuple(cfg), tuple(rev), padded, mdims), mask, dyn


def _emit(xv, mask, v, dyn, mode, plan):
    """The binds of a planned masked update: x's raw value with v put (or combined) where the mask is."""
    ix = _module("_indexing")
    _FILL, _combine = ix._FILL, ix._combine
    shape, vshape, tgt1, sizes, cfg, rev, padded, mdims = plan
    dt = S.dtype_of(xv)
    alld = tuple(range(len(shape)))
    if math.prod(vshape) == 1:          # one value: 0-d, select_n broadcasts it; M picks where it lands
        vfull = v if S.shape_of(v) == () else S.reshape(v, ())
    else:
        vt = S.reshape(S.broadcast_to_shape(S.reshape(v, vshape), tgt1), sizes)
        if rev:
            vt = S.rev(vt, rev)
        if padded:
            vt = S.pad(vt, P.convert_element_type(_FILL[mode], dt), cfg)
        vfull = S.broadcast_in_dim(vt, shape, alld) if tuple(S.shape_of(vt)) != shape else vt
    M = mask._v if mdims is None else S.broadcast_in_dim(mask._v, shape, mdims)
    if padded:
        region = S.pad(S.full(sizes, True, D.bool_), P.convert_element_type(False, D.bool_), cfg)
        M = bind(P.and_p, M, S.broadcast_in_dim(region, shape, alld))
    for _, dim, iv in dyn:
        at = bind(P.eq_p, S.iota(_IDX, shape, dim), S.broadcast_in_dim(iv, shape, ()))
        M = bind(P.and_p, M, at)
    if mode in ("multiply", "divide", "power"):
        one = S.full(shape, 1, dt)
        new = _combine(mode, P.select_n(M, one, xv), P.select_n(M, one, vfull))
    else:
        new = _combine(mode, xv, vfull)
    return P.select_n(M, xv, new)
