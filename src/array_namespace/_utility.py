"""Utility functions (https://data-apis.org/array-api/latest/API_specification/utility_functions.html)
and the cumulative statistical functions: all, any, diff, cumulative_sum, cumulative_prod.

(all/any are implemented in _statistical and re-exported here.)
"""
from __future__ import annotations

import builtins

from transforms.core import bind
from transforms.primitives import elementwise as P
from transforms.primitives import sorting as T
from transforms.primitives import structural as S

from . import _dtypes as D
from ._helpers import as_array, as_int, cast, check_kind, normalize_axis, wrap
from ._statistical import _acc_dtype, all, any  # noqa: F401  (re-exported)


def _cumulative(fname, prim, identity, x, axis, dtype, include_initial):
    x = as_array(x, fname)
    check_kind(fname, x.dtype, D.NUMERIC_OR_BOOL, "a numeric")
    if axis is None:
        if x.ndim != 1:
            raise ValueError(f"{fname}: axis must be given for an array of {x.ndim} dimensions "
                             "(it may only be omitted for one-dimensional input)")
        axis = 0
    if x.ndim == 0:
        raise ValueError(f"{fname}: x must have at least one dimension")
    ax = normalize_axis(axis, x.ndim, fname)
    dt = _acc_dtype(fname, x, dtype)
    v = cast(x._v, dt)
    if x.shape[ax] > 0:
        v = bind(prim, v, axis=ax, reverse=False)
    if include_initial:
        cfg = [(0, 0, 0)] * x.ndim
        cfg[ax] = (1, 0, 0)
        v = S.pad(v, P.convert_element_type(identity, dt), cfg)
    return wrap(v)


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    """Cumulative sum along axis (optionally starting with the empty sum 0).

    Parameters: x (Array): numeric or boolean, at least 1-D. axis (int or None): the axis (may be None only for 1-D
        x). dtype (dtype or None): the accumulation dtype (None: x's; bool and narrower integers widen to int64/uint64
        as in sum/prod). include_initial (bool): start with the identity (0), so the axis grows by one.
    Returns: Array: the running sums.
    Raises: TypeError: if x is not numeric/boolean or dtype is not allowed. ValueError: if x is 0-d, or axis is None
        for x of more than one dimension. AxisError (an IndexError and a ValueError): for an axis out of range.

    >>> xp.cumulative_sum(xp.asarray([1, 2, 3]), include_initial=True)
    Array([0, 1, 3, 6])
    """
    return _cumulative("cumulative_sum", T.cumsum_p, 0, x, axis, dtype, include_initial)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    """Cumulative product along axis (optionally starting with the empty product 1).

    Parameters: x (Array): numeric or boolean, at least 1-D. axis (int or None): the axis (may be None only for 1-D
        x). dtype (dtype or None): the accumulation dtype (None: x's; bool and narrower integers widen to int64/uint64
        as in sum/prod). include_initial (bool): start with the identity (1), so the axis grows by one.
    Returns: Array: the running products.
    Raises: TypeError: if x is not numeric/boolean or dtype is not allowed. ValueError: if x is 0-d, or axis is None
        for x of more than one dimension. AxisError (an IndexError and a ValueError): for an axis out of range.

    >>> xp.cumulative_prod(xp.asarray([1.0, 2.0, 3.0]))
    Array([1., 2., 6.])
    """
    return _cumulative("cumulative_prod", T.cumprod_p, 1, x, axis, dtype, include_initial)


def diff(x, /, *, axis=-1, n=1, prepend=None, append=None):
    """n-th discrete difference along axis; prepend/append are joined to x first.

    Parameters: x (Array): numeric or boolean, at least 1-D. axis (int): the axis (default -1). n (int): how many
        times to difference (>= 0). prepend, append (Array, Python scalar or None): values joined before/after x along
        axis (a scalar as one slice; an array of x's shape except along axis).
    Returns: Array: of x's dtype (bool: "differs"), the axis n shorter.
    Raises: TypeError: if x is not numeric/boolean or n not an int. ValueError: if x is 0-d, n < 0, or prepend/append
        do not fit. AxisError (an IndexError and a ValueError): for an axis out of range.

    >>> xp.diff(xp.asarray([1, 4, 9, 16]))
    Array([3, 5, 7])
    """
    from ._manipulation import concat
    x = as_array(x, "diff")
    if x.ndim == 0:
        raise ValueError("diff: x must have at least one dimension")
    n = as_int(n, "diff", "n")
    if n < 0:
        raise ValueError(f"diff: n must be a non-negative int, got {n!r}")
    ax = normalize_axis(axis, x.ndim, "diff")
    parts = []
    for name, extra in (("prepend", prepend), ("append", append)):
        if extra is None:
            parts.append(None)
            continue
        e = as_array(extra, "diff", name)
        if e.ndim == 0:
            shape = list(x.shape)
            shape[ax] = 1
            from ._manipulation import broadcast_to
            e = broadcast_to(e, tuple(shape))
        elif e.ndim != x.ndim or builtins.any(a != b for i, (a, b) in enumerate(zip(e.shape, x.shape)) if i != ax):
            raise ValueError(f"diff: {name} of shape {e.shape} must match x's shape {x.shape} except along "
                             f"axis {ax}")
        parts.append(e)
    if parts[0] is not None or parts[1] is not None:
        x = concat([p for p in (parts[0], x, parts[1]) if p is not None], axis=ax)
    if x.dtype not in D.NUMERIC_OR_BOOL:
        raise TypeError(f"diff: unsupported dtype {x.dtype.name}")
    v = x._v
    shape = list(x.shape)
    for _ in range(n):
        m = shape[ax]
        if m == 0:
            break
        hi = list(shape)
        lo = [0] * len(shape)
        hi[ax] = m - 1
        lo[ax] = 1
        a, b = S.slice_(v, lo, shape), S.slice_(v, [0] * len(shape), hi)
        v = bind(P.ne_p, a, b) if x.dtype == D.bool_ else P.sub(a, b)
        shape[ax] = m - 1
    return wrap(v)
