"""Views: arrays that share data with the array they were taken from, as NumPy's views do.

Values are immutable, so a view holds its own value; what makes it a view is its link to its parent,
`x._base = (parent, kind, arg)`, and the parent's weak list of its live views, `x._views`. A write into
any array of such a family (x[k] = v, x op= y, a transform's write-back) runs `write`: the new value goes
up the chain to the root, each parent getting the child's value put back in its place (RULES[kind].put),
then down from every array on that path to every live view not on it that the write can reach (its span
in the root meets the span written; RULES[kind].fwd). So a write into a view reaches its parent, the root
and every sibling, and a view read after its parent changed has the parent's new data -- NumPy's
semantics, under every transform (the ops are traced there). Arrays that never had a view pay nothing:
`_base` and `_views` stay unset slots. A write costs a recompute per live view it reaches.

Eagerly, where the family's values are host-held, there is one memory instead, as in NumPy: a basic-index
view's value is NumPy's view of its parent's memory, and a write goes into that memory, which every array of
the family reads (`write_eager`: the cost of what is written). The values stay immutable to everything else:
where anything but the family's arrays refers to the memory (an export, a device buffer, a value kept by a
transform), the backend copies it first and the family's values become views of the copy, laid out by
`layout`; the other holder keeps the values it had.

Which results are views is NumPy's rule: basic indexing (not a single element), permute_dims / .T / .mT /
moveaxis, flip, expand_dims / squeeze, and reshape where NumPy can reshape without a copy. For that last
one each view's layout in its root (strides, offset: a root is C-contiguous) is worked out along the
chain and NumPy's `_attempt_nocopy_reshape` decides; where it would copy, reshape copies here too.
"""
from __future__ import annotations

import operator
import os
import sys
import threading
import weakref

import numpy as np

from transforms.backend import backend
from transforms.batching import BatchTracer
from transforms.core import EVAL, Tracer, set_trace, trace_state
from transforms.primitives.structural import inverse_permutation

from . import _helpers as H

# One lock for every rebinding (x[i] = v, x op= y, write-through, transform write-back) and every new
# view's registration: the read of the old values and the rebinds happen as one step, so writes from
# several threads are never lost and a view registered while its parent is written sees the write.
LOCK = threading.RLock()


def _renew_lock():   # a thread of the parent holding it at the fork never releases it in the child
    global LOCK
    LOCK = threading.RLock()


os.register_at_fork(after_in_child=_renew_lock)

_INDEXING = []


def _ix():
    try:
        return _INDEXING[0]
    except IndexError:
        from . import _indexing as m
        _INDEXING.append(m)
        return m


def _perm(raw, perm):
    from transforms.primitives import structural as S
    return raw if perm == tuple(range(len(perm))) else S.transpose(raw, perm)


def _rev(raw, axes):
    from transforms.primitives import structural as S
    return S.rev(raw, axes) if axes else raw


def _reshape(raw, shape):
    from transforms.primitives import structural as S
    return raw if raw.aval.shape == tuple(shape) else S.reshape(raw, shape)


class _Rule:
    __slots__ = ("fwd", "put", "layout")

    def __init__(self, fwd, put, layout):
        self.fwd, self.put, self.layout = fwd, put, layout


# kind -> fwd(parent raw, arg) -> view raw; put(parent raw, view raw, arg) -> parent raw with the view's
# values in place; layout(shape, strides, offset, arg) -> the view's (strides, offset) in the root
RULES = {
    "index": _Rule(lambda p, key: _ix().getitem(H.wrap(p), key)._v,
                   lambda p, v, key: _ix().update(H.wrap(p), key, H.wrap(v), "set", "x[...] = value")._v,
                   lambda shape, st, off, key: _index_layout(shape, st, off, key)),
    "perm": _Rule(lambda p, perm: _perm(p, perm),
                  lambda p, v, perm: _perm(v, inverse_permutation(perm)),
                  lambda shape, st, off, perm: (tuple(st[a] for a in perm), off)),
    "flip": _Rule(lambda p, axes: _rev(p, axes),
                  lambda p, v, axes: _rev(v, axes),
                  lambda shape, st, off, axes: (tuple(-s if i in axes else s for i, s in enumerate(st)),
                                                off + sum((shape[a] - 1) * st[a] for a in axes if shape[a]))),
    "reshape": _Rule(lambda p, shape: _reshape(p, shape),
                     lambda p, v, shape: _reshape(v, p.aval.shape),
                     lambda shape, st, off, new: (nocopy_strides(shape, st, new), off)),
}


def view_of(out, parent, kind, arg, v0):
    """Mark `out` (RULES[kind].fwd of parent's raw value v0) as a view of `parent`; returns out."""
    if out is parent:
        return out
    out._base = (parent, kind, arg)
    with LOCK:
        views = getattr(parent, "_views", None)
        if views is None:
            views = parent._views = []
        elif len(views) >= 16 and not len(views) & (len(views) - 1):   # at powers of two: drop dead views
            views[:] = [r for r in views if r() is not None]
        views.append(weakref.ref(out))
        if parent._v is not v0:   # written (by another thread) since out was computed: out sees the write
            out._v = RULES[kind].fwd(parent._v, arg)
    return out


def has_views(a):
    return getattr(a, "_base", None) is not None or getattr(a, "_views", None)


def check_writable(a, what, cur):
    """Inside a transform only arrays the function made itself may be written (or, eagerly, any concrete one)."""
    if a._trace is not cur and not (cur is EVAL and not isinstance(a._v, Tracer)):
        raise ValueError(
            f"{what} mutates an array that was created outside the function being transformed "
            f"({cur.kind_name()}). Inside a transform, mutation is only allowed on arrays the function "
            "made itself; use y = x.at[idx].set(v) (or copy first: x = xp.asarray(x, copy=True)).")


def write(a, raw, what, key=None):
    """Rebind `a` to raw value `raw` and carry the write to every array of its family (under LOCK).
    Every new value is computed before any handle changes, so an error leaves all of them as they were
    (a root written in place eagerly changes first, but only the live views' reads follow it). `key`: the
    write was a[key] = value (a view whose elements the write cannot reach keeps its value, not recomputed).
    Eagerly, a family of host-held values takes the write in its one memory (write_eager)."""
    cur = trace_state.trace
    if cur is EVAL and write_eager(a, (), raw):
        return
    region = [a, key, _UNSET]   # (the span written: worked out when a view not on the path needs it)
    path = [(a, raw)]
    node = a
    while (base := getattr(node, "_base", None)) is not None:
        parent, kind, arg = base
        check_writable(parent, what, cur)
        if kind == "index" and getattr(parent, "_base", None) is None and sys.getrefcount(parent._v) <= 2:
            # the root, sole holder of its value: the write may go into its memory, as x[k] = v does (it is
            # the path's last step, so nothing after it can fail)
            raw = _ix().update(parent, arg, H.wrap(raw), "set", what, in_place=True)._v
        else:
            raw = RULES[kind].put(parent._v, raw, arg)
        node = parent
        path.append((node, raw))
    on_path = {id(n) for n, _ in path}
    new = list(path)
    for n, r in path:
        _refresh(n, r, on_path, new, region)
    for n, r in new:
        n._v = r
        n._trace = cur


def write_eager(a, key, value):
    """Eagerly, a[key] = value (raw, of a's dtype; key () for all of a) where a's family holds host values: the
    backend writes into the one memory they share, which every array of the family then reads, as NumPy's views
    do (a write costs what it writes, not a copy per view); where anything else refers to that memory it copies
    it first (each value then a view of the copy, where `layout` places it), so the other holder keeps the
    values it had. False where the backend declines (a value not host-held): `write`'s general path runs."""
    fam = _family(root_of(a))
    i = 0
    while fam[i] is not a:
        i += 1
    vals = [m._v for m in fam]
    out = backend.eager_family_setitem(vals, lambda: [layout(m) for m in fam], i, key, value)
    if out is None:
        return False
    if out is not vals:   # (the memory was copied: each array takes its view of the copy)
        for m, v in zip(fam, out):
            m._v = v
    return True


def batched_set(x, key, value):
    """`x[key] = value` eagerly under vmap, written into the memory of x's batched value where x alone holds it
    (as an eager array's write is): the batch axis is inserted into a key of ints and slices and the value laid
    along it, and the backend writes where it would for an eager array (host.sole_holder). The new tracer, or
    None (declined: the functional update runs, a copy of the whole batch per write -- quadratic in a loop of
    element writes, scikit-learn's _fill_diagonal under vmap(euclidean_distances))."""
    from transforms.primitives import structural as S
    t = x._v
    tr, b = t._trace, t.bdim
    keys = key if type(key) is tuple else (key,)
    shape = t.aval.shape
    if (tr is not trace_state.trace or tr.parent is not EVAL or len(keys) > len(shape) or sys.getrefcount(t.val) > 2
            or not all(type(k) is int or type(k) is slice for k in keys)):
        return None
    _, v, dt = H.binary("__setitem__", x, value, broadcast=False)
    if dt != t.aval.dtype:
        return None
    ts = tuple(len(range(*k.indices(n))) for k, n in zip(keys, shape) if type(k) is slice) + shape[len(keys):]
    p = sum(type(k) is slice for k in keys[:b]) + max(b - len(keys), 0)   # (the batch axis in the selection)
    vs = v.aval.shape
    with set_trace(EVAL):
        if type(v) is BatchTracer and v._trace is tr and vs in (ts, ()):
            raw = (S.moveaxis(v.val, v.bdim, p) if vs else
                   S.reshape(v.val, (1,) * p + (tr.axis_size,) + (1,) * (len(ts) - p)))
        elif not isinstance(v, Tracer) and vs in (ts, ()):
            raw = S.reshape(v, ts[:p] + (1,) + ts[p:]) if vs else v
        else:
            return None
    raw_key = keys[:b] + (slice(None),) + keys[b:] if b <= len(keys) else keys
    out = backend.eager_setitem(t.val, raw_key, raw)
    return None if out is None else BatchTracer(tr, out, b)


def _family(root):
    """root and every live view of it, parents before their views (each array's dead views pruned from its list).
    (Every array of a family has its `_views` slot set: view_of sets it on a view and on its parent.)"""
    out = [root]
    for m in out:   # (the list grows while walked: breadth first; ~0.5 us for a family of two, half _live_views')
        views = m._views
        if views:
            n = len(out)
            for r in views:
                c = r()
                if c is not None:
                    out.append(c)
            if len(out) - n != len(views):
                views[:] = [r for r in views if r() is not None]
    return out


def _live_views(a):
    """a's live views; its list of weak references is pruned of dead ones."""
    views = getattr(a, "_views", None)
    if not views:
        return ()
    live = [(r, c) for r in views if (c := r()) is not None]
    if len(live) != len(views):
        views[:] = [r for r, _ in live]
    return [c for _, c in live]


def _refresh(node, raw, skip, out, region):
    """Append (view, its new raw value) for every live view below `node` (whose new value is raw), but
    those in `skip` and those (with their views) whose elements lie outside `region`."""
    for c in _live_views(node):
        if id(c) in skip or _apart(_span(c), _region(region)):
            continue
        _, kind, arg = c._base
        v = RULES[kind].fwd(raw, arg)
        out.append((c, v))
        _refresh(c, v, skip, out, region)


def wrote_through(value, target, key):
    """`x[k] op= v`: v (x[k], updated in place) is a view of x at k, so it already wrote itself there."""
    base = getattr(value, "_base", None)
    if base is None or base[0] is not target or base[1] != "index":
        return False
    return _is_basic_key(key) and base[2] == key


def selects_one_element(key):
    """All-integer keys (and ()) pick one element: NumPy returns a scalar copy there, not a view."""
    if type(key) is not tuple:
        return type(key) is int
    for k in key:   # (a loop: every x[...] asks, and a generator costs ~0.2 us more)
        if type(k) is not int:
            return False
    return True


def _is_basic_key(key):
    if type(key) is tuple:   # (a loop: every x[...] asks, and a generator costs ~0.2 us more)
        for k in key:
            if not (k is None or k is Ellipsis or type(k) is int or type(k) is slice):
                return False
        return True
    return key is None or key is Ellipsis or type(key) is int or type(key) is slice


def int_bounds(key):
    """Eagerly, a basic key's slice bounds that are not Python ints (a 0-d integer Array, a NumPy integer: LDA's
    Vt[:rank]) as the ints they stand for, as NumPy reads them (__index__); None where there is none to convert or
    one is refused (the namespace's path then raises its error)."""
    keys = key if type(key) is tuple else (key,)
    out, changed = [], False
    for k in keys:
        if type(k) is slice:
            a, b, c = k.start, k.stop, k.step
            if not ((a is None or type(a) is int) and (b is None or type(b) is int) and (c is None or type(c) is int)):
                try:
                    k = slice(_int(a), _int(b), _int(c))
                except TypeError:
                    return None
                changed = True
        out.append(k)
    return None if not changed else tuple(out) if type(key) is tuple else out[0]


def _int(b):
    return b if b is None or type(b) is int else operator.index(b)


# ---------------------------------------------------------------- layouts (NumPy's view-or-copy rule)

def layout(a):
    """(strides, offset) of a's elements in its root's memory (the root C-contiguous), in elements."""
    chain = []
    while (base := getattr(a, "_base", None)) is not None:
        chain.append((base[0].shape, base[1], base[2]))
        a = base[0]
    st, off = _c_strides(a.shape), 0
    for shape, kind, arg in reversed(chain):
        st, off = RULES[kind].layout(shape, st, off, arg)
        if st is None:   # (not reached: a reshape link exists only where its strides allowed it)
            break
    return st, off


def _c_strides(shape):
    st, n = [], 1
    for d in reversed(shape):
        st.append(n)
        n *= d
    return tuple(reversed(st))


def _index_layout(shape, st, off, key, dims=None):
    """(strides, offset) of x[key] (a basic key) for x of `shape` laid out as (st, off); its shape into `dims`."""
    key = key if type(key) is tuple else (key,)
    n_real = sum(1 for k in key if k is not None and k is not Ellipsis)
    out, i, dims = [], 0, [] if dims is None else dims
    for k in key:
        if k is Ellipsis:
            for _ in range(len(shape) - n_real):
                out.append(st[i])
                dims.append(shape[i])
                i += 1
        elif k is None:
            out.append(0)
            dims.append(1)
        elif type(k) is int:
            off += (k % shape[i]) * st[i]
            i += 1
        else:
            start, _, step = k.indices(shape[i])
            n = len(range(*k.indices(shape[i])))
            off += start * st[i] if n else 0
            out.append(st[i] * step)
            dims.append(n)
            i += 1
    out += st[i:]
    dims += shape[i:]
    return tuple(out), off


def _bounds(shape, st, off):
    """(lowest, highest) element index in the root of a strided layout; None for no elements (or unknown)."""
    if st is None or 0 in shape:
        return None
    lo = hi = off
    for d, s in zip(shape, st):
        lo, hi = lo + min(0, (d - 1) * s), hi + max(0, (d - 1) * s)
    return lo, hi


_UNSET = object()


def _layout_span(a):
    """(strides, offset, _bounds) of a in its root (a's layout never changes: worked out once)."""
    try:
        return a._span
    except AttributeError:
        st, off = layout(a)
        a._span = (st, off, _bounds(a.shape, st, off))
        return a._span


def _span(a):
    return _layout_span(a)[2]


def _region(r):
    """r = [a, key, span]: the span of the root that the write a[key] = ... (key None: a itself) can change;
    None: all of it."""
    if r[2] is _UNSET:
        a, key = r[0], r[1]
        basic = key is not None and _is_basic_key(key)
        if getattr(a, "_base", None) is None and not basic:
            r[2] = None
        elif not basic:
            r[2] = _span(a)
        else:
            st, off, _ = _layout_span(a)
            dims = []
            st, off = _index_layout(a.shape, st, off, key, dims) if st is not None else (None, 0)
            r[2] = None if st is None else _bounds(tuple(dims), st, off) or (0, -1)   # (0, -1): nothing written
    return r[2]


def _apart(span, region):
    return region is not None and (span is None or span[1] < region[0] or region[1] < span[0])


def nocopy_strides(old, st, new):
    """The strides of `old`-shaped strided elements reshaped to `new` without a copy, or None where NumPy
    copies (numpy/core/src/multiarray/shape.c: _attempt_nocopy_reshape, C order)."""
    if 0 in old or st is None:
        return _c_strides(new)
    od = [(d, s) for d, s in zip(old, st) if d != 1]
    olddims, oldst = [d for d, _ in od], [s for _, s in od]
    newst = [0] * len(new)
    oi, oj, ni, nj = 0, 1, 0, 1
    while ni < len(new) and oi < len(olddims):
        np_, op = new[ni], olddims[oi]
        while np_ != op:
            if np_ < op:
                np_ *= new[nj]
                nj += 1
            else:
                op *= olddims[oj]
                oj += 1
        for ok in range(oi, oj - 1):
            if oldst[ok] != olddims[ok + 1] * oldst[ok + 1]:
                return None
        newst[nj - 1] = oldst[oj - 1]
        for nk in range(nj - 1, ni, -1):
            newst[nk - 1] = newst[nk] * new[nk]
        ni, oi = nj, oj
        nj, oj = nj + 1, oj + 1
    return tuple(newst)


def reshape_is_view(x, new, copy=None):
    """Whether NumPy's reshape of x (a view or not) to `new` is a view (else it copies; copy=False raises)."""
    if getattr(x, "_base", None) is None:
        return True
    st, _ = layout(x)
    if st is not None and nocopy_strides(x.shape, st, new) is not None:
        return True
    if copy is False:
        raise ValueError(f"reshape: x (a view of shape {x.shape}, strided in the array it was taken from) cannot "
                         f"have shape {new} without a copy, and copy=False was given")
    return False


def elements(a):
    """The root's flat element indices a's elements occupy (an int array of a's shape), or None."""
    st, off = layout(a)
    if st is None:
        return None
    idx = np.full(a.shape, off, dtype=np.int64)
    for ax, (d, s) in enumerate(zip(a.shape, st)):
        sh = [1] * len(a.shape)
        sh[ax] = d
        idx = idx + (np.arange(d, dtype=np.int64) * s).reshape(sh)
    return idx


def root_of(a):
    while (base := getattr(a, "_base", None)) is not None:
        a = base[0]
    return a


# ---------------------------------------------------------------- views among a transform's arguments

class _Slice(tuple):
    """A slice as a hashable value (a key in a chain keys jit's cache; slices hash only from Python 3.12)."""
    __slots__ = ()


def _frozen(kind, arg):
    if kind != "index":
        return arg
    key = arg if type(arg) is tuple else (arg,)
    return tuple(_Slice((k.start, k.stop, k.step)) if type(k) is slice else k for k in key)


def _thawed(kind, arg):
    if kind != "index":
        return arg
    return tuple(slice(*k) if type(k) is _Slice else k for k in arg)


def derivations(leaves, pat):
    """In the alias pattern `pat` (api_util.alias_pattern), mark each leaf that is a view of another leaf
    as (the outermost such leaf's index, the chain of (kind, arg) from it): inside the transform that leaf
    is then that view of the other's box, so writes through either reach both, as eagerly."""
    from ._array import Array
    if not any(type(x) is Array and getattr(x, "_base", None) is not None for x in leaves):
        return
    own = {id(x): i for i, x in enumerate(leaves) if type(x) is Array and pat[i] == i}
    for i, x in enumerate(leaves):
        if pat[i] != i or type(x) is not Array:
            continue
        chain, top, a = [], None, x
        while (base := getattr(a, "_base", None)) is not None:
            chain.append((base[1], _frozen(base[1], base[2])))
            a = base[0]
            j = own.get(id(a))
            if j is not None:
                top = (j, tuple(reversed(chain)))
        if top is not None:
            pat[i] = top
    for i, j in enumerate(pat):   # a leaf derived from one itself derived: from that one's outermost leaf
        while type(j) is tuple and type(pat[j[0]]) is tuple:
            j = (pat[j[0]][0], pat[j[0]][1] + j[1])
        pat[i] = j


def derive(box, chain):
    """The view of `box` that `chain` (derivations') describes, each step a view of the one before."""
    for kind, arg in chain:
        arg = _thawed(kind, arg)
        v = box._v
        box = view_of(H.wrap(RULES[kind].fwd(v, arg)), box, kind, arg, v)
    return box


def _is_view_of(a, b):
    while (base := getattr(a, "_base", None)) is not None:
        a = base[0]
        if a is b:
            return True
    return False


def _chain_str(a):
    """a's chain from its root `r` as code, e.g. `permute_dims(r, (1, 0))[1:3]`."""
    chain = []
    while (base := getattr(a, "_base", None)) is not None:
        chain.append(base[1:])
        a = base[0]
    s = "r"
    for kind, arg in reversed(chain):
        if kind == "index":
            key = arg if type(arg) is tuple else (arg,)
            s += "[" + ", ".join(_key_str(k) for k in key) + "]"
        else:
            s = {"perm": "permute_dims", "flip": "flip", "reshape": "reshape"}[kind] + f"({s}, {arg})"
    return s


def _key_str(k):
    if type(k) is slice:
        return ":".join("" if v is None else str(v) for v in (k.start, k.stop, k.step)).rstrip(":") or ":"
    return "..." if k is Ellipsis else str(k)


def check_unshared(leaves, mutated, transform, derived):
    """Raise where a leaf the transformed function wrote into overlaps another leaf that the trace held
    apart (views of one array not derived from each other, or, without `derived`, any views): eagerly the
    write would show through the other, and after the transform it would not."""
    from ._array import Array
    if not any(type(leaves[i]) is Array and has_views(leaves[i]) for i in mutated):
        return
    for i in mutated:
        a = leaves[i]
        if type(a) is not Array or not has_views(a):
            continue
        root = root_of(a)
        for k, b in enumerate(leaves):
            if k == i or type(b) is not Array or b is a or root_of(b) is not root:
                continue
            if derived and (_is_view_of(b, a) or _is_view_of(a, b)):
                continue
            ea, eb = elements(a), elements(b)
            if ea is None or eb is None or np.intersect1d(ea, eb).size:
                raise ValueError(
                    f"{transform}: the function writes into argument leaf {i}, which shares data with argument "
                    f"leaf {k} (views of one array r: leaf {i} is {_chain_str(a)}, leaf {k} is {_chain_str(b)}). "
                    "Inside the transform they are separate values, so the write would not reach leaf "
                    f"{k} as it does eagerly; pass the array they are views of instead (or a copy of one)")
