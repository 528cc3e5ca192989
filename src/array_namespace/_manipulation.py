"""Manipulation functions (https://data-apis.org/array-api/latest/API_specification/manipulation_functions.html)."""
from __future__ import annotations

import math

import numpy as np

from transforms.core import ShapedArray, bind, check_size
from transforms.primitives import elementwise as P
from transforms.primitives import structural as S

from . import _dtypes as D
from ._array import Array
from ._datadep import REPEAT_HINT, repeat_sized, require_host
from ._views import reshape_is_view, view_of
from ._helpers import as_array, as_int, cast, is_int_like, normalize_axes, normalize_axis, plain as _plain, wrap
from ._plans import remember as _remember

# Validated plans of the shape functions (_plans.py), per (operand shape, static arguments of plain ints): a repeated
# call (eager or traced) skips the validation it passed before and binds its one primitive with the params kept.
_RESHAPE_PLANS: dict = {}      # (x.shape, shape) -> the new shape
_TRANSPOSE_PLANS: dict = {}    # ("p", ndim, axes) / ("m", ndim, source, destination) -> (permutation, inverse)
_SQUEEZE_PLANS: dict = {}      # ("s", x.shape, axis) / ("e", x.shape, axis) -> the new shape
_BROADCAST_PLANS: dict = {}    # (x.shape, x.dtype, shape) -> the new shape (x.shape itself: nothing to broadcast)
_BROADCAST_ARRAYS_PLANS: dict = {}   # ((shape, dtype) of each array, ...) -> the common shape


def _ints(v, fname, arg):
    """An int or a sequence of ints (NumPy integers and 0-d integer arrays included) as a tuple of ints."""
    if type(v) is int or is_int_like(v):
        return (as_int(v, fname, arg),)
    try:
        items = tuple(v)
    except TypeError:
        raise TypeError(f"{fname}: {arg} must be an int or a tuple of ints, got {type(v).__name__}") from None
    return tuple(d if type(d) is int else as_int(d, fname, f"{arg} entry") for d in items)


def reshape(x, /, shape, *, copy=None):
    """x's elements (row-major order) in a new shape.

    Parameters: x (Array): the input. shape (int or tuple of int): the new shape; one entry may be -1 (inferred). copy
        (bool or None): True copies; otherwise a view of x where NumPy's is one (writes into either reach the other),
        else a copy (x a view whose strides do not allow it, as x.T flattened).
    Returns: Array: of x's dtype and the new shape.
    Raises: TypeError: if x is not an array or shape not ints. ValueError: if the sizes differ, or for more than one
        -1 or an entry below -1, or with copy=False where a copy is needed.

    >>> xp.reshape(xp.asarray([[1, 2, 3], [4, 5, 6]]), (3, -1))
    Array([[1, 2],
           [3, 4],
           [5, 6]])
    """
    if type(x) is Array and _plain(shape):
        v = x._v
        key = (v.aval.shape, shape)
        new = _RESHAPE_PLANS.get(key)
        if new is None:
            new = _reshape_plan(x, shape)
            _remember(_RESHAPE_PLANS, key, new)
        return _reshaped(x, v, new, copy)
    x = as_array(x, "reshape")
    return _reshaped(x, x._v, _reshape_plan(x, shape), copy)


def _reshape_plan(x, shape):
    """The shape x is reshaped to (a -1 worked out); the errors reshape documents."""
    shape = _ints(shape, "reshape", "shape")
    if sum(1 for d in shape if d == -1) > 1:
        raise ValueError(f"reshape: at most one -1 is allowed in shape {shape}")
    if any(d < -1 for d in shape):
        raise ValueError(f"reshape: invalid shape {shape}")
    if -1 in shape:
        known = math.prod(d for d in shape if d != -1)
        if known == 0 or x.size % known:
            raise ValueError(f"reshape: cannot reshape array of size {x.size} into shape {shape}")
        shape = tuple(x.size // known if d == -1 else d for d in shape)
    if math.prod(shape) != x.size:
        raise ValueError(f"reshape: cannot reshape array of shape {x.shape} (size {x.size}) into shape {shape}")
    return tuple(map(int, shape))


def _reshaped(x, v, new, copy):
    old = v.aval.shape
    out = wrap(v if new == old else bind(S.reshape_p, v, new_sizes=new))
    if copy or not reshape_is_view(x, new, copy):   # (NumPy copies a view whose strides do not allow it: so do we)
        return out
    return view_of(out, x, "reshape", new, v)


def permute_dims(x, /, axes):
    """x with its axes reordered: axis i of the result is axis axes[i] of x (a view of x).

    Parameters: x (Array): the input. axes (tuple of int): a permutation of range(x.ndim) (negative axes count from
        the end).
    Returns: Array: of x's dtype, shape tuple(x.shape[a] for a in axes).
    Raises: TypeError: if x is not an array or axes not ints. ValueError: if axes is not a permutation of x's axes.
        AxisError (an IndexError and a ValueError): for an axis out of range.

    >>> xp.permute_dims(xp.asarray([[1, 2, 3], [4, 5, 6]]), (1, 0))
    Array([[1, 4],
           [2, 5],
           [3, 6]])
    """
    if type(x) is Array and _plain(axes):
        key = ("p", len(x._v.aval.shape), axes)
        plan = _TRANSPOSE_PLANS.get(key)
        if plan is None:
            plan = _permutation(_permute_dims_order(x, axes))
            _remember(_TRANSPOSE_PLANS, key, plan)
        return _transposed(x, plan)
    x = as_array(x, "permute_dims")
    return _transposed(x, _permutation(_permute_dims_order(x, axes)))


def _permute_dims_order(x, axes):
    axes = _ints(axes, "permute_dims", "axes")
    if len(axes) != x.ndim:
        raise ValueError(f"permute_dims: axes {axes} must name each of the {x.ndim} dimensions once")
    norm = [normalize_axis(a, x.ndim, "permute_dims", "axes") for a in axes]
    if sorted(norm) != list(range(x.ndim)):
        raise ValueError(f"permute_dims: axes {axes} is not a permutation of {x.ndim} dimensions")
    return norm


def _permutation(order):
    """(the permutation, its inverse); () for the identity (nothing to transpose)."""
    perm = tuple(order)
    if perm == tuple(range(len(perm))):
        return ()
    return perm, tuple(sorted(range(len(perm)), key=lambda i: perm[i]))


def _transposed(x, plan):
    """x with its axes permuted by plan (_permutation's): a view of x (in-place updates reach x), as in NumPy."""
    v = x._v
    if not plan:
        return view_of(wrap(v), x, "perm", tuple(range(x.ndim)), v)
    perm, inv = plan
    return view_of(wrap(bind(S.transpose_p, v, permutation=perm)), x, "perm", perm, v)


def expand_dims(x, /, axis=0):
    """x with new axes of size 1 inserted at the given positions of the result (a view of x).

    Parameters: x (Array): the input. axis (int or tuple of int): positions in the result (default 0).
    Returns: Array: of x's dtype, ndim x.ndim + len(axis).
    Raises: TypeError: if x is not an array or axis not ints. IndexError: for a position out of the result's range.
        ValueError: for a repeated position.

    >>> xp.expand_dims(xp.asarray([1, 2]), axis=0)
    Array([[1, 2]])
    """
    return _unit_axes_call("e", "expand_dims", _expand_dims_plan, x, axis)


def _unit_axes_call(tag, fname, plan_of, x, axis):
    """expand_dims/squeeze: x reshaped to the shape `plan_of` validates, kept per (shape, axis) for plain axes."""
    if type(x) is Array and _plain(axis):
        key = (tag, x._v.aval.shape, axis)
        new = _SQUEEZE_PLANS.get(key)
        if new is None:
            new = plan_of(x, axis)
            _remember(_SQUEEZE_PLANS, key, new)
        return _unit_axes_changed(x, new)
    x = as_array(x, fname)
    return _unit_axes_changed(x, plan_of(x, axis))


def _expand_dims_plan(x, axis):
    axes = _ints(axis, "expand_dims", "axis")
    nd = x.ndim + len(axes)
    norm = []
    for a in axes:
        if not -nd <= a < nd:
            raise IndexError(f"expand_dims: axis {a} is out of bounds for the result's {nd} dimensions")
        norm.append(a % nd)
    if len(set(norm)) != len(norm):
        raise ValueError(f"expand_dims: repeated axis in {axis}")
    it = iter(x.shape)
    return tuple(1 if i in norm else next(it) for i in range(nd))


def squeeze(x, /, axis):
    """x without the given axes of size 1 (a view of x).

    Parameters: x (Array): the input. axis (int or tuple of int): axes of size 1 to remove.
    Returns: Array: of x's dtype, those axes removed.
    Raises: TypeError: if x is not an array or axis not ints. ValueError: if an axis does not have size 1, or is
        repeated. AxisError (an IndexError and a ValueError): for an axis out of range.

    >>> xp.squeeze(xp.asarray([[1], [2]]), axis=1)
    Array([1, 2])
    """
    return _unit_axes_call("s", "squeeze", _squeeze_plan, x, axis)


def _squeeze_plan(x, axis):
    axes = normalize_axes(axis, x.ndim, "squeeze")
    for a in axes:
        if x.shape[a] != 1:
            raise ValueError(f"squeeze: axis {a} has size {x.shape[a]}, not 1")
    return tuple(d for i, d in enumerate(x.shape) if i not in axes)


def _unit_axes_changed(x, new):
    """x reshaped to `new` (x's shape with axes of size 1 removed or inserted): a view of x."""
    v = x._v
    old = v.aval.shape
    return view_of(wrap(v if new == old else bind(S.reshape_p, v, new_sizes=new)), x, "reshape", new, v)


def broadcast_shapes(*shapes):
    """The shape that arrays of the given shapes broadcast to.

    Parameters: *shapes (tuple of int): the shapes.
    Returns: tuple of int: the broadcast shape (() for no shapes).
    Raises: TypeError: for a shape that is not ints. ValueError: for a negative dimension or shapes that do not
        broadcast.

    >>> xp.broadcast_shapes((2, 1), (3,))
    (2, 3)
    """
    return _broadcast_shapes([_ints(s, "broadcast_shapes", "shapes entry") for s in shapes], "broadcast_shapes",
                             "shapes")


def _broadcast_shapes(shapes, fname, arg):
    """The shape `shapes` broadcast to, or a ValueError naming the function and the argument."""
    for s in shapes:
        if any(d < 0 for d in s):
            raise ValueError(f"{fname}: {arg} entry {s} has a negative dimension")
    try:
        return P.broadcast_shapes(*shapes) if shapes else ()
    except ValueError:
        raise ValueError(f"{fname}: {arg} of shapes {' and '.join(str(tuple(s)) for s in shapes)} cannot be "
                         "broadcast together") from None


def broadcast_to(x, /, shape):
    """x broadcast to the given shape.

    Parameters: x (Array): the input. shape (tuple of int): a shape x broadcasts to.
    Returns: Array: of x's dtype and that shape.
    Raises: TypeError: if x is not an array or shape not ints. ValueError: if x does not broadcast to shape or shape
        has a negative dimension.

    >>> xp.broadcast_to(xp.asarray([1, 2]), (2, 2))
    Array([[1, 2],
           [1, 2]])
    """
    if type(x) is Array and _plain(shape):
        v = x._v
        a = v.aval
        key = (a.shape, a.dtype, shape)
        new = _BROADCAST_PLANS.get(key)
        if new is None:
            new = _broadcast_to_plan(x, shape)
            _remember(_BROADCAST_PLANS, key, new)
        if new == a.shape:
            return wrap(v)
        return wrap(bind(S.broadcast_in_dim_p, v, shape=new,
                         broadcast_dimensions=tuple(range(len(new) - len(a.shape), len(new)))))
    x = as_array(x, "broadcast_to")
    return wrap(S.broadcast_to_shape(x._v, _broadcast_to_plan(x, shape)))


def _broadcast_to_plan(x, shape):
    shape = tuple(map(int, _ints(shape, "broadcast_to", "shape")))
    if any(d < 0 for d in shape):
        raise ValueError(f"broadcast_to: shape {shape} has a negative dimension")
    if len(shape) < x.ndim or any(d not in (1, s) for d, s in zip(x.shape[::-1], shape[::-1])):
        raise ValueError(f"broadcast_to: cannot broadcast x of shape {x.shape} to shape {shape}")
    check_size(ShapedArray(shape, x.dtype), "broadcast_to (shape)")
    return shape


def broadcast_arrays(*arrays):
    """The arrays broadcast to their common shape.

    Parameters: *arrays (Array): the inputs.
    Returns: tuple of Array: each input broadcast to the common shape (dtypes unchanged).
    Raises: TypeError: for an entry that is not an array. ValueError: if the shapes do not broadcast.

    >>> a, b = xp.broadcast_arrays(xp.asarray([1, 2]), xp.asarray([[3], [4]]))
    >>> b
    Array([[3, 3],
           [4, 4]])
    """
    key = []
    for a in arrays:
        if type(a) is not Array:
            break
        av = a._v.aval
        key.append((av.shape, av.dtype))
    else:   # all Arrays: the common shape kept per (shapes, dtypes)
        key = tuple(key)
        shape = _BROADCAST_ARRAYS_PLANS.get(key)
        if shape is None:
            shape = _broadcast_arrays_shape(arrays)
            _remember(_BROADCAST_ARRAYS_PLANS, key, shape)
        return tuple(wrap(a._v) if s == shape else
                     wrap(bind(S.broadcast_in_dim_p, a._v, shape=shape,
                               broadcast_dimensions=tuple(range(len(shape) - len(s), len(shape)))))
                     for a, (s, _) in zip(arrays, key))
    arrays = [as_array(a, "broadcast_arrays", "arrays entry") for a in arrays]
    shape = _broadcast_arrays_shape(arrays)
    return tuple(broadcast_to(a, shape) for a in arrays)


def _broadcast_arrays_shape(arrays):
    """The common shape (each array's size checked as broadcast_to checks it)."""
    shape = _broadcast_shapes([a.shape for a in arrays], "broadcast_arrays", "arrays")
    for a in arrays:
        _broadcast_to_plan(a, shape)
    return shape


def _common(arrays, fname):
    if not isinstance(arrays, (tuple, list)):
        raise TypeError(f"{fname}: arrays must be a tuple or list of arrays, got {type(arrays).__name__}")
    arrays = [as_array(a, fname, "arrays entry") for a in arrays]
    if not arrays:
        raise ValueError(f"{fname}: arrays must hold at least one array")
    dt = arrays[0].dtype
    for a in arrays[1:]:
        dt = D.promote(dt, a.dtype, fname)
    return arrays, dt


def concat(arrays, /, *, axis=0):
    """The arrays joined along an existing axis.

    Parameters: arrays (tuple or list of Array): of one ndim (>= 1) and equal shapes outside axis. axis (int or None):
        the axis (default 0); None flattens them first.
    Returns: Array: of the promoted dtype.
    Raises: TypeError: if arrays is not a tuple/list of arrays or the dtypes do not promote. ValueError: for no
        arrays, 0-d arrays, differing ndims or shapes outside axis. AxisError (an IndexError and a ValueError): for an
        axis out of range.

    >>> xp.concat([xp.asarray([1, 2]), xp.asarray([3])])
    Array([1, 2, 3])
    """
    arrays, dt = _common(arrays, "concat")
    if axis is None:
        arrays = [reshape(a, (-1,)) for a in arrays]
        axis = 0
    nd = arrays[0].ndim
    if any(a.ndim != nd for a in arrays):
        raise ValueError(f"concat: arrays must have the same number of dimensions, got "
                         f"{[a.ndim for a in arrays]}")
    if nd == 0:
        raise ValueError("concat: cannot concatenate 0-d arrays")
    axis = normalize_axis(axis, nd, "concat")
    for a in arrays[1:]:
        if any(d1 != d2 for i, (d1, d2) in enumerate(zip(a.shape, arrays[0].shape)) if i != axis):
            raise ValueError(f"concat: arrays of shapes {[a.shape for a in arrays]} differ outside axis {axis}")
    vals = [cast(a._v, dt) for a in arrays]
    return wrap(S.concatenate(vals, axis) if len(vals) > 1 else vals[0])


def stack(arrays, /, *, axis=0):
    """The arrays joined along a new axis.

    Parameters: arrays (tuple or list of Array): of equal shapes. axis (int): the new axis's position in the result
        (default 0).
    Returns: Array: of the promoted dtype, ndim one more than the inputs'.
    Raises: TypeError: if arrays is not a tuple/list of arrays or the dtypes do not promote. ValueError: for no arrays
        or differing shapes. AxisError (an IndexError and a ValueError): for an axis out of range.

    >>> xp.stack([xp.asarray([1, 2]), xp.asarray([3, 4])], axis=1)
    Array([[1, 3],
           [2, 4]])
    """
    arrays, dt = _common(arrays, "stack")
    shape = arrays[0].shape
    if any(a.shape != shape for a in arrays):
        raise ValueError(f"stack: all arrays must have the same shape, got {[a.shape for a in arrays]}")
    axis = normalize_axis(axis, len(shape) + 1, "stack")
    new = shape[:axis] + (1,) + shape[axis:]
    vals = [S.reshape(cast(a._v, dt), new) for a in arrays]
    return wrap(S.concatenate(vals, axis) if len(vals) > 1 else vals[0])


def unstack(x, /, *, axis=0):
    """x split along axis into a tuple of arrays (each a view of x).

    Parameters: x (Array): at least 1-D. axis (int): the axis removed (default 0).
    Returns: tuple of Array: x.shape[axis] arrays of x's dtype.
    Raises: TypeError: if x is not an array. ValueError: if x is 0-d. AxisError (an IndexError and a ValueError): for
        an axis out of range.

    >>> xp.unstack(xp.asarray([[1, 2], [3, 4]]))
    (Array([1, 2]), Array([3, 4]))
    """
    x = as_array(x, "unstack")
    if x.ndim == 0:
        raise ValueError("unstack: x must have at least one dimension")
    axis = normalize_axis(axis, x.ndim, "unstack")
    # through Array.__getitem__: the parts are slices of x, so in-place updates of a part reach x
    return tuple(x[(slice(None),) * axis + (i,)] for i in range(x.shape[axis]))


def flip(x, /, *, axis=None):
    """x with the order of elements reversed along the given axes (a view of x).

    Parameters: x (Array): the input. axis (int, tuple of int or None): the axes (None: all).
    Returns: Array: of x's shape and dtype.
    Raises: TypeError: if x is not an array or axis not ints. ValueError: for a repeated axis. AxisError (an
        IndexError and a ValueError): for an axis out of range.

    >>> xp.flip(xp.asarray([[1, 2, 3], [4, 5, 6]]), axis=1)
    Array([[3, 2, 1],
           [6, 5, 4]])
    """
    x = as_array(x, "flip")
    axes = normalize_axes(axis, x.ndim, "flip")
    v = x._v
    return view_of(wrap(S.rev(v, axes)), x, "flip", axes, v)


def moveaxis(x, source, destination, /):
    """x with the source axes moved to the destination positions, the others in their order (a view).

    Parameters: x (Array): the input. source, destination (int or tuple of int): the axes, as many of each.
    Returns: Array: of x's dtype, its axes reordered.
    Raises: TypeError: if x is not an array or an axis not an int. ValueError: for unequal numbers of axes or a
        repeated axis. AxisError (an IndexError and a ValueError): for an axis out of range.

    >>> xp.moveaxis(xp.zeros((2, 3, 4)), 0, -1).shape
    (3, 4, 2)
    """
    if type(x) is Array and _plain(source) and _plain(destination):
        key = ("m", len(x._v.aval.shape), source, destination)
        plan = _TRANSPOSE_PLANS.get(key)
        if plan is None:
            plan = _permutation(_moveaxis_order(x, source, destination))
            _remember(_TRANSPOSE_PLANS, key, plan)
        return _transposed(x, plan)
    x = as_array(x, "moveaxis")
    return _transposed(x, _permutation(_moveaxis_order(x, source, destination)))


def _moveaxis_order(x, source, destination):
    src = _ints(source, "moveaxis", "source")
    dst = _ints(destination, "moveaxis", "destination")
    if len(src) != len(dst):
        raise ValueError("moveaxis: source and destination must have the same number of axes")
    src = [normalize_axis(a, x.ndim, "moveaxis", "source") for a in src]
    dst = [normalize_axis(a, x.ndim, "moveaxis", "destination") for a in dst]
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise ValueError("moveaxis: repeated axis")
    order = [i for i in range(x.ndim) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return order


def roll(x, /, shift, *, axis=None):
    """x's elements shifted along the given axes, wrapping around.

    Parameters: x (Array): the input. shift (int or tuple of int): the shift per axis (one shift applies to all). axis
        (int, tuple of int or None): the axes (None: the flattened x, shape restored).
    Returns: Array: of x's shape and dtype.
    Raises: TypeError: if x is not an array or shift/axis not ints. ValueError: if shift and axis differ in length.
        AxisError (an IndexError and a ValueError): for an axis out of range.

    >>> xp.roll(xp.asarray([1, 2, 3, 4]), 1)
    Array([4, 1, 2, 3])
    """
    x = as_array(x, "roll")
    if axis is None:
        flat = reshape(x, (-1,))
        return reshape(roll(flat, shift, axis=0), x.shape)
    shifts = _ints(shift, "roll", "shift")
    axes = _ints(axis, "roll", "axis")
    if len(shifts) != len(axes):
        if len(shifts) == 1:
            shifts = shifts * len(axes)
        else:
            raise ValueError("roll: shift and axis must have the same length")
    v = x._v
    for s, a in zip(shifts, axes):
        (a,) = normalize_axes(a, x.ndim, "roll")   # (strict: a 0-d x has no axis 0 to roll, as NumPy)
        n = x.shape[a]
        if n == 0:
            continue
        s %= n
        if s == 0:
            continue
        lo = [0] * x.ndim
        hi = list(x.shape)
        mid = n - s
        hi1 = list(hi)
        hi1[a] = mid
        lo2 = list(lo)
        lo2[a] = mid
        v = S.concatenate([S.slice_(v, lo2, hi), S.slice_(v, lo, hi1)], a)
    return wrap(v)


def _repeat_counts(repeats, fname="repeat"):
    """The repeat counts as a host int64 array, or None for a single int count."""
    from ._array import Array
    if type(repeats) is int or (isinstance(repeats, np.integer)):
        return None
    if type(repeats) is Array:
        if repeats.dtype not in D.INTEGER:   # a float count would be silently truncated
            raise TypeError(f"{fname}: repeats must be an int or an integer array, got a {repeats.dtype.name} "
                            "array")
        return np.asarray(require_host(repeats._v, fname, REPEAT_HINT), np.int64)
    if isinstance(repeats, np.ndarray) and repeats.dtype.kind in "iu":
        return repeats.astype(np.int64)
    raise TypeError(f"{fname}: repeats must be an int or an integer array, got {type(repeats).__name__}")


def repeat(x, repeats, /, *, axis=None):
    """Each element of x along axis repeated `repeats` times (one count, or one per element).

    The output length depends on per-element counts: eagerly they are read on the host; traced, only
    their sum is asked for (_datadep.py). The result is one gather, whose derivative with respect to
    x is the sum over each element's copies (a segment sum).

    Parameters: x (Array): the input. repeats (int or 1-D integer Array): one count, or one per element along axis.
        axis (int or None): the axis (None: the flattened x).
    Returns: Array: of x's dtype; the axis has sum(repeats) elements.
    Raises: TypeError: if x is not an array or repeats not an int or integer array. ValueError: for a negative count
        or a count array of the wrong shape. DataDependentShapeError: for abstract counts (make_jaxpr). AxisError
        (an IndexError and a ValueError): for an axis out of range.

    >>> xp.repeat(xp.asarray([1, 2]), xp.asarray([1, 3]))
    Array([1, 2, 2, 2])
    """
    x = as_array(x, "repeat")
    if axis is None:
        x = reshape(x, (-1,))
        axis = 0
    axis = normalize_axis(axis, x.ndim, "repeat")
    if getattr(repeats, "ndim", 0) == 1 and repeats.shape[0] not in (1, x.shape[axis]):   # before reading values
        raise ValueError(f"repeat: repeats has {repeats.shape[0]} entries for an axis of size {x.shape[axis]}")
    if (out := repeat_sized(x, repeats, axis)) is not None:   # traced counts: only their sum is asked for
        return out
    reps = _repeat_counts(repeats)
    if reps is not None:
        if reps.ndim > 1:
            raise ValueError(f"repeat: repeats must be an int or a 1-D array, got shape {reps.shape}")
        if reps.size == 1:
            repeats = int(reps.reshape(-1)[0])
        else:
            n = x.shape[axis]
            if reps.size != n:
                raise ValueError(f"repeat: repeats has {reps.size} entries for an axis of size {n}")
            if reps.size and reps.min() < 0:
                raise ValueError("repeat: repeats must be non-negative")
            total = x.shape[:axis] + (int(reps.sum(dtype=object)),) + x.shape[axis + 1:]   # (exact: no int64 wrap)
            check_size(ShapedArray(total, x.dtype), "repeat (repeats)")
            from ._creation import asarray
            from ._indexing import take
            src = np.repeat(np.arange(n, dtype=np.int64), reps)   # the source of each output position
            return take(x, asarray(src), axis=axis)
    repeats = int(repeats)
    if repeats < 0:
        raise ValueError("repeat: repeats must be non-negative")
    shape = list(x.shape)
    check_size(ShapedArray(x.shape[:axis] + (shape[axis] * repeats,) + x.shape[axis + 1:], x.dtype), "repeat (repeats)")
    expanded = shape[:axis + 1] + [repeats] + shape[axis + 1:]
    v = S.broadcast_in_dim(x._v, tuple(expanded), tuple(i for i in range(len(expanded)) if i != axis + 1))
    shape[axis] *= repeats
    return wrap(S.reshape(v, tuple(shape)))


def tile(x, repetitions, /):
    """x repeated `repetitions` times along each axis (leading 1s pad the shorter of the two).

    Parameters: x (Array): the input. repetitions (tuple of int): non-negative repeats per axis.
    Returns: Array: of x's dtype, ndim max(x.ndim, len(repetitions)).
    Raises: TypeError: if x is not an array or repetitions not ints. ValueError: for a negative repetition.

    >>> xp.tile(xp.asarray([1, 2]), (2, 1))
    Array([[1, 2],
           [1, 2]])
    """
    x = as_array(x, "tile")
    reps = _ints(repetitions, "tile", "repetitions")
    if any(r < 0 for r in reps):
        raise ValueError(f"tile: repetitions must be non-negative, got {reps}")
    nd = max(x.ndim, len(reps))
    reps = (1,) * (nd - len(reps)) + reps
    shape = (1,) * (nd - x.ndim) + x.shape
    check_size(ShapedArray(tuple(r * d for r, d in zip(reps, shape)), x.dtype), "tile (repetitions)")
    v = S.reshape(x._v, shape)
    big, dims = [], []
    for i, (r, d) in enumerate(zip(reps, shape)):
        big += [r, d]
        dims.append(2 * i + 1)
    v = S.broadcast_in_dim(v, tuple(big), tuple(dims))
    return wrap(S.reshape(v, tuple(r * d for r, d in zip(reps, shape))))
