"""Sorting functions (https://data-apis.org/array-api/latest/API_specification/sorting_functions.html).

Both sorts are stable (stable=False is accepted and still sorts stably). Order: ascending
by value, NaNs last (NumPy's order); descending reverses the order of the numbers, keeps
equal elements in their original relative order and still puts NaNs last. Descending is
an ascending sort of a transformed key: -x for floats, ~x for integers and booleans.
"""
from __future__ import annotations

from transforms.core import bind
from transforms.primitives import elementwise as P
from transforms.primitives import sorting as T
from transforms.primitives import structural as S

from . import _dtypes as D
from ._helpers import as_array, as_int, normalize_axis, wrap


def _check(fname, x, axis):
    x = as_array(x, fname)
    if x.dtype in D.COMPLEX:
        raise TypeError(f"{fname}: complex x has no order; sort the real part or the absolute value instead")
    axis = as_int(axis, fname, "axis")
    if x.ndim == 0:
        if axis not in (0, -1):
            raise IndexError(f"{fname}: axis {axis} is out of bounds for a 0-d array")
        return x, 0
    ax = normalize_axis(axis, x.ndim, fname)
    return x, ax


def descending_key(v):
    """A key whose ascending order is v's descending order (NaNs still last)."""
    dt = S.dtype_of(v)
    if dt.kind == "f":
        return P.neg(v)
    return bind(P.not_p, v)


def sort(x, /, *, axis=-1, descending=False, stable=True):
    """x sorted along axis (stably; NaNs last, also when descending).

    Parameters: x (Array): real-valued or boolean. axis (int): the axis (default -1). descending (bool): largest
        first. stable (bool): accepted; the sort is always stable.
    Returns: Array: of x's shape and dtype.
    Raises: TypeError: if x is not an array, is complex, or axis is not an int. AxisError (an IndexError and a
        ValueError): for an axis out of range.

    >>> xp.sort(xp.asarray([3.0, xp.nan, 1.0]))
    Array([ 1.,  3., nan])
    """
    x, ax = _check("sort", x, axis)
    if x.ndim == 0 or x.shape[ax] <= 1:
        return wrap(x._v)
    v = x._v
    if descending:
        (k,) = T.sort([descending_key(v)], ax)
        return wrap(descending_key(k))
    (out,) = T.sort([v], ax)
    return wrap(out)


def argsort(x, /, *, axis=-1, descending=False, stable=True):
    """The indices that sort x along axis (stably: equal elements keep their order; NaNs last).

    Parameters: x (Array): real-valued or boolean. axis (int): the axis (default -1). descending (bool): largest
        first. stable (bool): accepted; the sort is always stable.
    Returns: Array: int64 indices, of x's shape.
    Raises: TypeError: if x is not an array, is complex, or axis is not an int. AxisError (an IndexError and a
        ValueError): for an axis out of range.

    >>> xp.argsort(xp.asarray([3, 1, 2]), descending=True)
    Array([0, 2, 1])
    """
    x, ax = _check("argsort", x, axis)
    if x.ndim == 0:
        return wrap(P.convert_element_type(0, D.DEFAULT_INDEX))
    iota = S.iota(D.DEFAULT_INDEX, x.shape, ax)
    if x.shape[ax] <= 1:
        return wrap(iota)
    key = descending_key(x._v) if descending else x._v
    _, perm = T.sort([key, iota], ax, num_keys=1)
    return wrap(perm)

