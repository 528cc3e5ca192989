"""Searching functions (https://data-apis.org/array-api/latest/API_specification/searching_functions.html)."""
from __future__ import annotations

from transforms.backend import backend
from transforms.core import bind
from transforms.primitives import elementwise as P
from transforms.primitives import indexing as I
from transforms.primitives import reductions as R
from transforms.primitives import structural as S

from . import _dtypes as D
from ._datadep import compared, host_value, nonzero_sized
from ._helpers import as_array, binary, check_kind, normalize_axes, normalize_axis, wrap
from ._staged import compiled


def _arg(fname, prim):
    def f(x, /, *, axis=None, keepdims=False):
        x = as_array(x, fname)
        check_kind(fname, x.dtype, D.REAL_NUMERIC_OR_BOOL, "a real-valued")
        v = x._v
        if axis is None:
            if x.size == 0:
                raise ValueError(f"{fname}: attempt to get {fname} of x, an empty array")
            v = S.reshape(v, (x.size,))
            out = bind(prim, v, axes=(0,), index_dtype=D.DEFAULT_INDEX)
            return wrap(S.reshape(out, (1,) * x.ndim) if keepdims else out)
        ax = normalize_axis(axis, x.ndim, fname)
        if x.shape[ax] == 0:   # (other axes may be empty: an empty result, as NumPy's)
            raise ValueError(f"{fname}: attempt to get {fname} along axis {axis} of x, which has length 0")
        out = bind(prim, v, axes=(ax,), index_dtype=D.DEFAULT_INDEX)
        if keepdims:
            out = S.reshape(out, tuple(1 if i == ax else d for i, d in enumerate(x.shape)))
        return wrap(out)
    f.__name__ = f.__qualname__ = fname   # (Python names a function by its qualname in a bad-call TypeError)
    return f


argmax = _arg("argmax", R.argmax_p)
argmin = _arg("argmin", R.argmin_p)
_ARG_DOC = """The index of the {0} element along axis (the first one on ties; of the flattened x if axis is None).

Parameters: x (Array): real-valued or boolean, not empty. axis (int or None): the axis (None: flattened).
    keepdims (bool): keep the reduced axis (all axes for None) with size 1.
Returns: Array: int64 indices, of x's shape without axis (0-d for axis None).
Raises: TypeError: if x is not real-valued or boolean, or axis is not an int. ValueError: if x is empty.
    AxisError (an IndexError and a ValueError): for an axis out of range.

>>> xp.{1}(xp.asarray([[1, 5], [7, 2]]), axis=1)
{2}
"""
argmax.__doc__ = _ARG_DOC.format("largest", "argmax", "Array([1, 0])")
argmin.__doc__ = _ARG_DOC.format("smallest", "argmin", "Array([0, 1])")


def where(condition, x1, x2, /):
    """Elements of x1 where condition is true, else of x2 (all three broadcast).

    Parameters: condition (Array): boolean. x1, x2 (Array or Python scalar): the values to choose from; their dtypes
        promote.
    Returns: Array: of the promoted dtype and the broadcast shape.
    Raises: TypeError: if condition is not boolean, an operand is not an array or scalar, or x1 and x2 do not promote.
        ValueError: if the shapes do not broadcast.

    >>> xp.where(xp.asarray([True, False]), xp.asarray([1, 2]), 0)
    Array([1, 0])
    """
    c = as_array(condition, "where", "condition")
    if c.dtype is not D.bool_:   # (DTypes are canonical: no __eq__ call per where)
        raise TypeError(f"where: condition must be a boolean array, got {c.dtype.name}")
    a, b, _ = binary("where", x1, x2)
    try:
        return wrap(P.select_n(c._v, b, a))
    except ValueError as e:
        raise ValueError(f"where: {e}") from None


# ------------------------------------------------------------- nonzero / count_nonzero

def nonzero(x, /):
    """Indices of the non-zero elements, one index array per dimension (row-major order).

    The result's length depends on x's values: eagerly computed on the host; traced, the count is what jit
    guards and vmap's elements must share, and the indices are computed at that size (_datadep.py).

    Parameters: x (Array): at least 1-D.
    Returns: tuple of Array: x.ndim int64 index arrays of equal length.
    Raises: TypeError: if x is not an array. ValueError: if x is 0-d. DataDependentShapeError: without concrete
        values (make_jaxpr, strict jit). BatchDisagreementError: under vmap, for elements with different counts.

    >>> xp.nonzero(xp.asarray([[0, 1], [2, 0]]))
    (Array([0, 1]), Array([1, 0]))
    """
    import numpy as np

    x = as_array(x, "nonzero")
    if x.ndim == 0:
        raise ValueError("nonzero: x must have at least one dimension (0-d input is not allowed)")
    hv = host_value(x._v)
    if hv is None:   # traced: only the count is asked for (_datadep.py)
        v = x._v
        mask = v if x.dtype == D.bool_ else bind(P.ne_p, v, P.convert_element_type(0, x.dtype))
        return tuple(wrap(i) for i in nonzero_sized(mask, x.shape, "nonzero", _NONZERO_HINT))
    return tuple(wrap(backend.device_put(np.asarray(i, D.DEFAULT_INDEX))) for i in np.nonzero(compared(hv)))


_NONZERO_HINT = ("Use it outside jit/vmap, or a fixed-shape formulation such as xp.where(x != 0, ..., ...) or "
                 "xp.count_nonzero.")


def count_nonzero(x, /, *, axis=None, keepdims=False):
    """The number of non-zero (for bool: True) elements along the given axes.

    Parameters: x (Array): the input. axis (int, tuple of int or None): the axes counted over (None: all). keepdims
        (bool): keep the counted axes with size 1.
    Returns: Array: int64 counts, of x's shape less the counted axes.
    Raises: TypeError: if x is not an array or an axis not an int. ValueError: for a repeated axis. AxisError (an
        IndexError and a ValueError): for an axis out of range.

    >>> xp.count_nonzero(xp.asarray([[0, 1], [2, 0]]), axis=0)
    Array([1, 1])
    """
    x = as_array(x, "count_nonzero")
    axes = normalize_axes(axis, x.ndim, "count_nonzero")
    v = x._v
    nz = v if x.dtype == D.bool_ else bind(P.ne_p, v, P.convert_element_type(0, x.dtype))
    out = R.reduce_sum(P.convert_element_type(nz, D.DEFAULT_INDEX), axes)
    if keepdims:
        out = S.reshape(out, tuple(1 if i in axes else d for i, d in enumerate(x.shape)))
    return wrap(out)


# ------------------------------------------------------------------------ searchsorted

@compiled(arrays=("x1", "x2", "sorter"))
def searchsorted(x1, x2, /, *, side="left", sorter=None):
    """Insertion indices of x2 into the sorted 1-D x1 (NaNs sort last, as in xp.sort).

    A binary search of all of x2 at once (O(m log n)), so it traces, compiles and vectorises.

    Parameters: x1 (Array): 1-D, sorted ascending (or sorted by sorter). x2 (Array or Python scalar): the values to
        place. side (str): 'left' (the first suitable index) or 'right' (the last). sorter (Array or None): integer
        indices that sort x1.
    Returns: Array: int64 indices, of x2's shape.
    Raises: TypeError: if x1 is not an array, sorter is not integer, the dtypes do not promote or are complex.
        ValueError: if x1 is not 1-D, sorter's shape differs from x1's, or side is neither 'left' nor 'right'.

    >>> xp.searchsorted(xp.asarray([1.0, 2.0, 3.0]), xp.asarray([2.0, 2.5]))
    Array([1, 2])
    """
    from ._array import Array
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    if type(x1) is not Array:
        raise TypeError(f"searchsorted: x1 must be an array, got {type(x1).__name__}")
    if x1.ndim != 1:
        raise ValueError(f"searchsorted: x1 must be one-dimensional, got shape {x1.shape}")
    if sorter is not None:
        from ._indexing import take
        sorter = as_array(sorter, "searchsorted", "sorter")
        if sorter.dtype not in D.INTEGER:
            raise TypeError(f"searchsorted: sorter must be an integer array, got {sorter.dtype.name}")
        if sorter.shape != x1.shape:
            raise ValueError(f"searchsorted: sorter must have x1's shape {x1.shape}, got {sorter.shape}")
        x1 = take(x1, sorter)
    a, b, dt = binary("searchsorted", x1, x2, broadcast=False)
    if dt in D.COMPLEX:
        raise TypeError("searchsorted: complex values of x1 and x2 have no order")
    n = x1.shape[0]
    out_shape = tuple(S.shape_of(b))
    m = 1
    for d in out_shape:
        m *= d
    if n == 0 or m == 0:
        return wrap(S.full(out_shape, 0, D.DEFAULT_INDEX))
    b = S.reshape(b, (m,))
    if dt == D.bool_:
        a, b = P.convert_element_type(a, D.uint8), P.convert_element_type(b, D.uint8)
    return wrap(S.reshape(_count_before(a, b, n, m, side), out_shape))


def _count_before(a, b, n, m, side):
    """For each of the m values b, how many of the n sorted values a come before it (left: a < b; right: a <= b,
    in xp.sort's order: numbers ascending, then NaNs): the largest prefix of a that does, found by adding the
    powers of two below n from the largest down, each where a's element at the new prefix's end still does (one
    gather and compare per power, the same steps for every value). Two sorts of all n + m values did it before,
    26x slower under jit at 2000 into 2000 (XLA:CPU sorts with a called comparator: 1369 -> 53 us); eagerly
    416 -> 309 us there, 242 -> 63 us for 2030 values into 3, 62 -> 98 us for 50 into 50."""
    idx = D.DEFAULT_INDEX
    floating = S.dtype_of(a).kind == "f"

    def lt(x, y):   # x < y with NaN after every number
        r = bind(P.lt_p, x, y)
        return bind(P.or_p, r, bind(P.and_p, bind(P.ne_p, y, y), bind(P.eq_p, x, x))) if floating else r
    pos, last = S.full((m,), 0, idx), P.convert_element_type(n, idx)
    step = 1 << (n.bit_length() - 1)
    while step:
        cand = P.add(pos, P.convert_element_type(step, idx))
        v = I.take_along_axis(a, P.sub(bind(P.min_p, cand, last), P.convert_element_type(1, idx)), 0)
        ok = lt(v, b) if side == "left" else bind(P.not_p, lt(b, v))
        pos = P.select_n(bind(P.and_p, ok, bind(P.le_p, cand, last)), pos, cand)
        step >>= 1
    return pos
