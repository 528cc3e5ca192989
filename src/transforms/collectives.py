"""Collectives over named axes: psum, pmean, pmax, pmin, all_gather, psum_scatter, all_to_all,
ppermute, axis_index.

A collective computes across the members of a named axis, bound by `vmap(..., axis_name=)` or
`pmap(..., axis_name=)`. Each primitive's block holds its abstract eval, its jvp, its transpose
(all but pmax/pmin/axis_index are linear), its batching rule over some *other* axis (the value
carries that batch axis along), and its `axis_rules` entry: what it means when the vmap that
binds its axis maps it -- the single-device reference semantics that pmap must reproduce. The
lowering to XLA collectives over a pmap's devices lives in xla/lower_collectives.py.

Every primitive carries `axes`, a tuple of axis names. Reaching eager execution means no
transform bound the axis: a NameError naming it and the bound ones.
"""
from __future__ import annotations

import numpy as np

from .api_util import box, to_raw
from .batching import axis_rules, axis_size_of, bound_axes, move_to
from .core import Primitive, ShapedArray, abstract_eval_rules, bind, get_aval, impl_rules, not_foldable
from .primitives import elementwise as E
from .primitives import reductions as R
from .primitives import structural as S
from .pytree import tree_flatten, tree_unflatten
from .rules import Zero, batch_gaps, batch_rules, deflinear, jvp_rules, transpose_rules, zero_jvp


def _unbound_impl(prim):
    def impl(*args, axes, **params):
        bound = [n for n, _ in bound_axes()]
        raise NameError(f"{prim.name}: unbound axis name {axes[0]!r}: no vmap(axis_name=) or pmap(axis_name=) "
                        f"maps it here; the axes bound here are {bound}")
    return impl


def _collective(name, abstract):
    p = Primitive(name)
    abstract_eval_rules[p] = abstract
    impl_rules[p] = _unbound_impl(p)
    not_foldable.add(p)   # never constant-folded (that would run it eagerly, outside its axis)
    return p


def _rest(axes, axis_name):
    return tuple(a for a in axes if a != axis_name)


def _shape(x):
    return tuple(get_aval(x).shape)


def _times_size(x, n):
    return E.mul(x, E.full_like_scalar(x, n))


# ----------------------------------------------------------------------------- psum
psum_p = _collective("psum", lambda x, *, axes: x)
deflinear(psum_p)
transpose_rules[psum_p] = lambda ct, x, *, axes: [Zero if ct is Zero else bind(psum_p, ct, axes=axes)]
batch_rules[psum_p] = lambda n, vals, dims, *, axes: (bind(psum_p, vals[0], axes=axes), dims[0])


def _psum_named(n, vals, dims, *, axis_name, axes):
    (x,), (d,) = vals, dims
    y = _times_size(x, n) if d is None else R.reduce_sum(x, (d,))
    rest = _rest(axes, axis_name)
    return (bind(psum_p, y, axes=rest) if rest else y), None


axis_rules[psum_p] = _psum_named

# ------------------------------------------------------------------------ pmax / pmin
pmax_p = _collective("pmax", lambda x, *, axes: x)
pmin_p = _collective("pmin", lambda x, *, axes: x)


def _extremum_rules(prim, reducer):
    def jvp(primals, tangents, *, axes):
        # the tangent of the member(s) attaining the extremum, averaged over ties
        (x,), (t,) = primals, tangents
        ans = bind(prim, x, axes=axes)
        if t is Zero:
            return ans, Zero
        loc = E.convert_element_type(bind(E.eq_p, x, ans), S.dtype_of(t))
        return ans, E.div(bind(psum_p, E.mul(t, loc), axes=axes), bind(psum_p, loc, axes=axes))

    def named(n, vals, dims, *, axis_name, axes):
        (x,), (d,) = vals, dims
        y = x if d is None else bind(reducer, x, axes=(d,))
        rest = _rest(axes, axis_name)
        return (bind(prim, y, axes=rest) if rest else y), None

    jvp_rules[prim] = jvp
    batch_rules[prim] = lambda n, vals, dims, *, axes: (bind(prim, vals[0], axes=axes), dims[0])
    axis_rules[prim] = named


_extremum_rules(pmax_p, R.reduce_max_p)
_extremum_rules(pmin_p, R.reduce_min_p)


# ------------------------------------------------------------------------- all_gather
def _gather_abstract(x, *, axes, axis, tiled, axis_size):
    shape = list(x.shape)
    if tiled:
        shape[axis] *= axis_size
    else:
        shape.insert(axis, axis_size)
    return ShapedArray(tuple(shape), x.dtype, x.weak_type)


all_gather_p = _collective("all_gather", _gather_abstract)
deflinear(all_gather_p)
transpose_rules[all_gather_p] = lambda ct, x, *, axes, axis, tiled, axis_size: [
    Zero if ct is Zero else bind(psum_scatter_p, ct, axes=axes, scatter_dimension=axis, tiled=tiled,
                                 axis_size=axis_size)]
batch_rules[all_gather_p] = lambda n, vals, dims, *, axes, axis, tiled, axis_size: (bind(
    all_gather_p, S.moveaxis(vals[0], dims[0], 0), axes=axes, axis=axis + 1, tiled=tiled, axis_size=axis_size), 0)


def _gather_named(n, vals, dims, *, axis_name, axes, axis, tiled, axis_size):
    (x,), (d,) = vals, dims
    shape = _shape(x) if d is None else _shape(x)[:d] + _shape(x)[d + 1:]
    y = move_to(x, d, axis, n)
    if tiled:
        y = S.reshape(y, shape[:axis] + (n * shape[axis],) + shape[axis + 1:])
    return y, None


axis_rules[all_gather_p] = _gather_named


# ----------------------------------------------------------------------- psum_scatter
def _scatter_abstract(x, *, axes, scatter_dimension, tiled, axis_size):
    shape = list(x.shape)
    sd = scatter_dimension
    if tiled:
        shape[sd] //= axis_size
    else:
        del shape[sd]
    return ShapedArray(tuple(shape), x.dtype, x.weak_type)


psum_scatter_p = _collective("psum_scatter", _scatter_abstract)
deflinear(psum_scatter_p)
transpose_rules[psum_scatter_p] = lambda ct, x, *, axes, scatter_dimension, tiled, axis_size: [
    Zero if ct is Zero else bind(all_gather_p, ct, axes=axes, axis=scatter_dimension, tiled=tiled,
                                 axis_size=axis_size)]
batch_rules[psum_scatter_p] = lambda n, vals, dims, *, axes, scatter_dimension, tiled, axis_size: (bind(
    psum_scatter_p, S.moveaxis(vals[0], dims[0], 0), axes=axes, scatter_dimension=scatter_dimension + 1,
    tiled=tiled, axis_size=axis_size), 0)


def _scatter_named(n, vals, dims, *, axis_name, axes, scatter_dimension, tiled, axis_size):
    (x,), (d,) = vals, dims
    sd = scatter_dimension
    y = _times_size(x, n) if d is None else R.reduce_sum(x, (d,))   # member j keeps block j of the sum
    if tiled:
        s = _shape(y)
        y = S.reshape(y, s[:sd] + (n, s[sd] // n) + s[sd + 1:])
    return y, sd


axis_rules[psum_scatter_p] = _scatter_named


# ------------------------------------------------------------------------- all_to_all
def _a2a_abstract(x, *, axes, split_axis, concat_axis, tiled, axis_size):
    shape = list(x.shape)
    if tiled:
        shape[split_axis] //= axis_size
        shape[concat_axis] *= axis_size
    else:
        del shape[split_axis]
        shape.insert(concat_axis, axis_size)
    return ShapedArray(tuple(shape), x.dtype, x.weak_type)


all_to_all_p = _collective("all_to_all", _a2a_abstract)
deflinear(all_to_all_p)
transpose_rules[all_to_all_p] = lambda ct, x, *, axes, split_axis, concat_axis, tiled, axis_size: [
    Zero if ct is Zero else bind(all_to_all_p, ct, axes=axes, split_axis=concat_axis, concat_axis=split_axis,
                                 tiled=tiled, axis_size=axis_size)]
batch_rules[all_to_all_p] = lambda n, vals, dims, *, axes, split_axis, concat_axis, tiled, axis_size: (bind(
    all_to_all_p, S.moveaxis(vals[0], dims[0], 0), axes=axes, split_axis=split_axis + 1,
    concat_axis=concat_axis + 1, tiled=tiled, axis_size=axis_size), 0)


def _a2a_named(n, vals, dims, *, axis_name, axes, split_axis, concat_axis, tiled, axis_size):
    # member k's chunk j goes to member j, which stacks the chunks from every k along concat_axis
    (x,), (d,) = vals, dims
    x = move_to(x, d, 0, n)                      # (k, per-example...)
    s = _shape(x)[1:]
    if tiled:
        x = S.reshape(x, (n,) + s[:split_axis] + (n, s[split_axis] // n) + s[split_axis + 1:])
    x = S.moveaxis(x, 1 + split_axis, 0)         # (j, k, rest...)
    x = S.moveaxis(x, 1, 1 + concat_axis)        # (j, rest with k at concat_axis)
    if tiled:
        r = _shape(x)[1:]
        c = concat_axis
        x = S.reshape(x, (n,) + r[:c] + (n * r[c + 1],) + r[c + 2:])
    return x, 0


axis_rules[all_to_all_p] = _a2a_named

# --------------------------------------------------------------------------- ppermute
ppermute_p = _collective("ppermute", lambda x, *, axes, perm: x)
deflinear(ppermute_p)
transpose_rules[ppermute_p] = lambda ct, x, *, axes, perm: [
    Zero if ct is Zero else bind(ppermute_p, ct, axes=axes, perm=tuple((d, s) for s, d in perm))]
batch_rules[ppermute_p] = lambda n, vals, dims, *, axes, perm: (bind(ppermute_p, vals[0], axes=axes, perm=perm),
                                                                 dims[0])


def _ppermute_named(n, vals, dims, *, axis_name, axes, perm):
    (x,), (d,) = vals, dims
    x = move_to(x, d, 0, n)
    s = _shape(x)
    src_of = {dst: src for src, dst in perm}
    zero = None
    pieces = []
    for j in range(n):
        if j in src_of:
            i = src_of[j]
            pieces.append(S.slice_(x, (i,) + (0,) * (len(s) - 1), (i + 1,) + s[1:]))
        else:   # a member nobody sends to receives zeros
            zero = zero if zero is not None else S.full((1,) + s[1:], 0, get_aval(x).dtype)
            pieces.append(zero)
    return S.concatenate(pieces, 0), 0


axis_rules[ppermute_p] = _ppermute_named

# ------------------------------------------------------------------------- axis_index
axis_index_p = _collective("axis_index", lambda *, axes: ShapedArray((), np.int32))
zero_jvp(axis_index_p)
batch_gaps[axis_index_p] = "it has no operands: only the trace binding its axis maps it (axis_rules)"


def _axis_index_named(n, vals, dims, *, axis_name, axes):
    # over several axes: the row-major position over them, this axis's index times its stride plus the
    # others' (each bound by the trace that maps it)
    sizes = [n if a == axis_name else axis_size_of(a, "axis_index") for a in axes]
    strides = [int(np.prod(sizes[k + 1:])) for k in range(len(axes))]
    out = S.iota(np.int32, (n,), 0)
    for a, st in zip(axes, strides):
        if a == axis_name:
            out = out if st == 1 else E.mul(out, E.full_like_scalar(out, st))
    for a, st in zip(axes, strides):
        if a != axis_name:
            other = bind(axis_index_p, axes=(a,))
            other = other if st == 1 else E.mul(other, E.full_like_scalar(other, st))
            out = E.add(out, S.broadcast_in_dim(other, (n,), ()))
    return out, 0


axis_rules[axis_index_p] = _axis_index_named


# ============================================================================ public API

def _names(axis_name, fname, single=False):
    names = tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)
    if not names:
        raise ValueError(f"{fname}: axis_name names no axis")
    if single and len(names) != 1:
        raise ValueError(f"{fname}: axis_name must name one axis, got {axis_name!r}")
    for nm in names:
        try:
            hash(nm)
        except TypeError:
            raise TypeError(f"{fname}: axis names must be hashable, got {type(nm).__name__}") from None
    sizes = [axis_size_of(nm, fname) for nm in names]   # NameError naming the bound axes if unbound
    return names, int(np.prod(sizes))


def _map(fname, x, fn):
    leaves, tree = tree_flatten(x)
    return tree_unflatten(tree, [box(fn(to_raw(v, f"{fname} argument"))) for v in leaves])


def _ndim_axis(ax, ndim, fname, what):
    if not isinstance(ax, (int, np.integer)) or isinstance(ax, bool):
        raise TypeError(f"{fname}: {what} must be an int, got {type(ax).__name__}")
    if not -ndim <= ax < ndim:
        raise ValueError(f"{fname}: {what}={ax} is out of range for an operand with {ndim} dimensions")
    return int(ax) % ndim


def psum(x, axis_name):
    """Sum of x over the members of the named axis (or axes), on every member; bool counts as int32.
    Under vmap the members are the batch entries (the single-device meaning pmap reproduces).

    Parameters: x (Array or pytree of Arrays): this member's value. axis_name (hashable, or a tuple of them): the axis (axes) bound by
        vmap(axis_name=), pmap(axis_name=) or a shard_map's mesh.
    Returns: the same pytree: the sum over the members, alike on each (bool leaves as int32).
    Raises: NameError: if no enclosing transform binds axis_name. ValueError: if axis_name names no axis.
        TypeError: if an axis name is unhashable or a leaf is not an array.

    >>> vmap(lambda v: psum(v, "i"), axis_name="i")(xp.asarray([1., 2., 3.]))
    Array([6., 6., 6.])
    """
    axes, _ = _names(axis_name, "psum")

    def one(v):
        if get_aval(v).dtype == np.bool_:
            v = E.convert_element_type(v, np.int32)
        return bind(psum_p, v, axes=axes)
    return _map("psum", x, one)


def pmean(x, axis_name):
    """Mean of x over the members of the named axis (or axes), on every member; integers and bool average
    as float64.

    Parameters: x (Array or pytree of Arrays): this member's value. axis_name (hashable, or a tuple of them): the axis (axes) bound by
        vmap(axis_name=), pmap(axis_name=) or a shard_map's mesh.
    Returns: the same pytree: the mean over the members, alike on each.
    Raises: NameError: if no enclosing transform binds axis_name. ValueError: if axis_name names no axis.
        TypeError: if an axis name is unhashable or a leaf is not an array.

    >>> vmap(lambda v: pmean(v, "i"), axis_name="i")(xp.asarray([1, 2, 6]))
    Array([3., 3., 3.])
    """
    axes, n = _names(axis_name, "pmean")

    def one(v):
        if get_aval(v).dtype.kind not in "fc":
            v = E.convert_element_type(v, np.float64)
        s = bind(psum_p, v, axes=axes)
        if n & (n - 1) == 0 and get_aval(s).dtype.kind == "f":   # (a real x / 2**k is x * 2**-k bit for bit,
            return E.mul(s, E.full_like_scalar(s, 1.0 / n))   # and a multiply costs a tenth of a divide)
        return E.div(s, E.full_like_scalar(s, n))
    return _map("pmean", x, one)


def pmax(x, axis_name):
    """Elementwise maximum of x over the members of the named axis (or axes), on every member. Its
    derivative is that of the member(s) attaining it (averaged over ties).

    Parameters: x (Array or pytree of Arrays): this member's value. axis_name (hashable, or a tuple of them): the axis (axes) bound by
        vmap(axis_name=), pmap(axis_name=) or a shard_map's mesh.
    Returns: the same pytree: the elementwise maximum over the members, alike on each.
    Raises: NameError: if no enclosing transform binds axis_name. ValueError: if axis_name names no axis.
        TypeError: if an axis name is unhashable or a leaf is not an array.

    >>> vmap(lambda v: pmax(v, "i"), axis_name="i")(xp.asarray([[1., 5.], [4., 2.]]))
    Array([[4., 5.],
           [4., 5.]])
    """
    axes, _ = _names(axis_name, "pmax")
    return _map("pmax", x, lambda v: bind(pmax_p, v, axes=axes))


def pmin(x, axis_name):
    """Elementwise minimum of x over the members of the named axis (or axes), on every member. Its
    derivative is that of the member(s) attaining it (averaged over ties).

    Parameters: x (Array or pytree of Arrays): this member's value. axis_name (hashable, or a tuple of them): the axis (axes) bound by
        vmap(axis_name=), pmap(axis_name=) or a shard_map's mesh.
    Returns: the same pytree: the elementwise minimum over the members, alike on each.
    Raises: NameError: if no enclosing transform binds axis_name. ValueError: if axis_name names no axis.
        TypeError: if an axis name is unhashable or a leaf is not an array.

    >>> vmap(lambda v: pmin(v, "i"), axis_name="i")(xp.asarray([[1., 5.], [4., 2.]]))
    Array([[1., 2.],
           [1., 2.]])
    """
    axes, _ = _names(axis_name, "pmin")
    return _map("pmin", x, lambda v: bind(pmin_p, v, axes=axes))


def all_gather(x, axis_name, *, axis=0, tiled=False):
    """Every member's x, stacked along a new `axis` (tiled: concatenated along `axis`), on every member.

    Parameters: x (Array or pytree of Arrays): this member's value. axis_name (hashable): one axis bound by
        vmap(axis_name=), pmap(axis_name=) or a shard_map's mesh. axis (int, keyword): where the members'
        axis goes in the result (default 0). tiled (bool, keyword): concatenate instead of stacking.
    Returns: the same pytree: x's shape with the axis size n inserted at `axis` (tiled: shape[axis] * n).
    Raises: NameError: if no enclosing transform binds axis_name. ValueError: if axis_name names no axis
        or several, `axis` is out of range, or tiled=True with a 0-d x. TypeError: if `axis` is not an int.

    >>> vmap(lambda v: all_gather(v, "i"), axis_name="i")(xp.asarray([1., 2., 3.]))
    Array([[1., 2., 3.],
           [1., 2., 3.],
           [1., 2., 3.]])
    """
    axes, n = _names(axis_name, "all_gather", single=True)

    def one(v):
        nd = len(_shape(v))
        ax = _ndim_axis(axis, nd if tiled else nd + 1, "all_gather", "axis")
        if tiled and nd == 0:
            raise ValueError("all_gather: tiled=True needs an operand with at least one dimension")
        return bind(all_gather_p, v, axes=axes, axis=ax, tiled=bool(tiled), axis_size=n)
    return _map("all_gather", x, one)


def psum_scatter(x, axis_name, *, scatter_dimension=0, tiled=False):
    """psum of x, of which member j keeps only block j along scatter_dimension (whose size must be the
    axis size, or with tiled=True a multiple of it).

    Parameters: x (Array or pytree of Arrays): this member's value. axis_name (hashable): one bound axis.
        scatter_dimension (int, keyword): the dimension split into blocks (default 0). tiled (bool,
        keyword): keep that dimension (each block of size shape/n) instead of dropping it.
    Returns: the same pytree: block j of the sum on member j.
    Raises: NameError: if no enclosing transform binds axis_name. ValueError: if axis_name names no axis
        or several, scatter_dimension is out of range or its size does not fit the axis size.
        TypeError: if scatter_dimension is not an int.

    Two members, each with a length-2 x: the sum is [2., 4.]; member j keeps its element j.

    >>> vmap(lambda v: psum_scatter(v, "i"), axis_name="i")(xp.asarray([[0., 1.], [2., 3.]]))
    Array([2., 4.])
    """
    axes, n = _names(axis_name, "psum_scatter", single=True)

    def one(v):
        s = _shape(v)
        sd = _ndim_axis(scatter_dimension, len(s), "psum_scatter", "scatter_dimension")
        if (s[sd] % n if tiled else s[sd] != n):
            need = f"a multiple of the axis size {n}" if tiled else f"the axis size {n}"
            raise ValueError(f"psum_scatter: dimension {sd} of the operand has size {s[sd]}; it must be {need}")
        return bind(psum_scatter_p, v, axes=axes, scatter_dimension=sd, tiled=bool(tiled), axis_size=n)
    return _map("psum_scatter", x, one)


def all_to_all(x, axis_name, split_axis, concat_axis, *, tiled=False):
    """Member k sends chunk j of x along split_axis to member j, which stacks (tiled: concatenates) the
    chunks it receives along concat_axis in member order.

    Parameters: x (Array or pytree of Arrays): this member's value. axis_name (hashable): one bound axis.
        split_axis (int): the dimension cut into one chunk per member (its size must be the axis size n,
        tiled: a multiple of it). concat_axis (int): where the received chunks go. tiled (bool, keyword):
        cut and concatenate blocks instead of dropping and inserting a dimension of size n.
    Returns: the same pytree: on member j, every member's chunk j in member order.
    Raises: NameError: if no enclosing transform binds axis_name. ValueError: if axis_name names no axis
        or several, an axis is out of range or split_axis's size does not fit the axis size.
        TypeError: if split_axis or concat_axis is not an int.

    Over a batch axis with split_axis = concat_axis = 0 it transposes the members' rows:

    >>> vmap(lambda v: all_to_all(v, "i", 0, 0), axis_name="i")(xp.asarray([[0, 1, 2], [3, 4, 5], [6, 7, 8]]))
    Array([[0, 3, 6],
           [1, 4, 7],
           [2, 5, 8]])
    """
    axes, n = _names(axis_name, "all_to_all", single=True)

    def one(v):
        s = _shape(v)
        sa = _ndim_axis(split_axis, len(s), "all_to_all", "split_axis")
        ca = _ndim_axis(concat_axis, len(s), "all_to_all", "concat_axis")
        if (s[sa] % n if tiled else s[sa] != n):
            need = f"a multiple of the axis size {n}" if tiled else f"the axis size {n}"
            raise ValueError(f"all_to_all: split_axis {sa} of the operand has size {s[sa]}; it must be {need}")
        return bind(all_to_all_p, v, axes=axes, split_axis=sa, concat_axis=ca, tiled=bool(tiled), axis_size=n)
    return _map("all_to_all", x, one)


def ppermute(x, axis_name, perm):
    """Member `dst` receives x from member `src` for each (src, dst) in perm; members no pair sends to
    receive zeros.

    Parameters: x (Array or pytree of Arrays): this member's value. axis_name (hashable): one bound axis.
        perm (sequence of (int, int)): (source, destination) member indices, each source and each
        destination at most once.
    Returns: the same pytree: on member dst, the x of its source (zeros if it has none).
    Raises: NameError: if no enclosing transform binds axis_name. TypeError: if perm is not a sequence of
        index pairs. ValueError: if an index is outside the axis or a source or destination repeats.

    >>> shift = lambda v: ppermute(v, "i", [(0, 1), (1, 2)])
    >>> vmap(shift, axis_name="i")(xp.asarray([1., 2., 3.]))
    Array([0., 1., 2.])
    """
    axes, n = _names(axis_name, "ppermute", single=True)
    try:
        pairs = tuple((int(s), int(d)) for s, d in perm)
    except (TypeError, ValueError):
        raise TypeError(f"ppermute: perm must be a sequence of (source, destination) index pairs, got {perm!r}") \
            from None
    srcs, dsts = [s for s, _ in pairs], [d for _, d in pairs]
    if any(not 0 <= i < n for i in srcs + dsts):
        raise ValueError(f"ppermute: perm {pairs} has an index outside the axis of size {n}")
    if len(set(srcs)) != len(srcs) or len(set(dsts)) != len(dsts):
        raise ValueError(f"ppermute: perm {pairs} repeats a source or a destination")
    return _map("ppermute", x, lambda v: bind(ppermute_p, v, axes=axes, perm=pairs))


def axis_index(axis_name):
    """This member's index along the named axis (int32); over several axes, its row-major position over them.

    Parameters: axis_name (hashable, or a tuple of them): the axis (axes) bound by vmap(axis_name=),
        pmap(axis_name=) or a shard_map's mesh.
    Returns: Array: int32, 0-d (a derivative of zero).
    Raises: NameError: if no enclosing transform binds axis_name. ValueError: if axis_name names no axis.
        TypeError: if an axis name is unhashable.

    >>> vmap(lambda v: v * axis_index("i"), axis_name="i")(xp.asarray([5, 5, 5]))
    Array([ 0,  5, 10])
    """
    axes, _ = _names(axis_name, "axis_index")
    return box(bind(axis_index_p, axes=axes))


__all__ = ["psum", "pmean", "pmax", "pmin", "all_gather", "psum_scatter", "all_to_all", "ppermute", "axis_index"]
