"""Creation functions of ranges and diagonals: arange, linspace, eye, tril, triu, meshgrid.

Eagerly, arange/linspace/eye of plain Python arguments keep the small values they made (array_namespace/_plans.py
`made`): library code calls them again with the same arguments, and a repeated call is a fresh copy of those values
with nothing validated or computed again. Under a transform they bind primitives like any other computation.
"""
from __future__ import annotations

import builtins
import math

import numpy as np

from transforms.backend import backend
from transforms.core import EVAL, trace_state, bind
from transforms.primitives import elementwise as P
from transforms.primitives import structural as S

from . import _dtypes as D
from ._array import Array
from ._creation import _check_device, _eager_small, _from_host, _shape_arg, _sized
from ._helpers import big_int_as_float, as_array, as_int, plain, py_number, wrap
from ._plans import MADE_MAX_ELEMENTS, SCALAR_TYPES, is_default_device, keep_made, made, remember, scalar_key


def _scalars_key(fname, scalars, rest):
    """The made-value key of an eager call of `fname` on Python scalars (or None) `scalars` and plain static `rest`
    (ints, None, bools, dtypes), or None where the call may not be kept (traced, another device, other types)."""
    if trace_state.trace is not EVAL:
        return None
    key = [fname]
    for v in scalars:
        if v is not None and type(v) not in SCALAR_TYPES:
            return None
        key += (type(v), scalar_key(v))
    for v in rest:
        t = type(v)
        if not (v is None or t is bool or t is D.DType or plain(v)):
            return None
        key += (t, v)
    return tuple(key)


_CHECKED: dict = {}   # made-value keys of creations too large to keep (MADE) -> the making of their checked arguments


def _made_by(key, make):
    """make() -- an eager creation of static arguments only -- or, where `key` is not None and the same call
    was made before, a fresh copy of the values it made (kept when small: nothing checked or computed again), or
    (too large to keep) the making its checks left (`_checked`: nothing checked again)."""
    if key is None:
        return make()
    out = made(key)
    if out is None:
        remake = _CHECKED.get(key)
        out = make() if remake is None else remake()
        if out.size <= MADE_MAX_ELEMENTS:
            keep_made(key, out)
    return out


def _checked(key, make):
    """make() -- a creation's making, once its arguments passed the checks -- kept under made-value `key` (not
    None) for `_made_by`'s next call at that key."""
    if key is not None:
        remember(_CHECKED, key, make)
    return make()


def _number_arg(v, fname, name):
    """A scalar argument as the Python number it is (NumPy scalars and 0-d arrays included, as
    NumPy, array_api_strict and JAX take them); bools are refused."""
    if type(v) is Array:
        if v.ndim != 0 or v.dtype == D.bool_:
            raise TypeError(f"{fname}: {name} must be a number or a 0-d numeric array, got a {v.dtype.name} "
                            f"array of shape {v.shape}")
        # int() reads a concrete value (under jit a traced one raises a concretization error naming int())
        return int(v) if v.dtype in D.INTEGER else float(v) if v.dtype in D.REAL_FLOAT else complex(v)
    p = py_number(v)
    if p is None or isinstance(p, bool):
        raise TypeError(f"{fname}: {name} must be a number, got {type(v).__name__}")
    return p


def _real_arg(v, fname, name):
    p = _number_arg(v, fname, name)
    if isinstance(p, complex):
        raise TypeError(f"{fname}: {name} must be an int or float, got {type(v).__name__}")
    return p


def arange(start, /, stop=None, step=1, *, dtype=None, device=None):
    """Evenly spaced values in the half-open interval [start, stop), step apart.

    Parameters: start (int or float): the first value (the stop when stop is None, starting from 0). stop (int, float
        or None): the end, excluded. step (int or float): the spacing, not 0. dtype (dtype or None): None is int64
        when all three are ints, else float64. device (Device or None): None or the one device.
    Returns: Array: 1-D, ceil((stop - start) / step) values (none if that is negative), start + i * step computed
        in double precision and rounded once to dtype.
    Raises: TypeError: for a bool, complex or non-numeric argument or a bool dtype. ValueError: for step 0, a
        non-finite bound or an unknown device. OverflowError: for values outside an integer dtype's range.

    >>> xp.arange(1.0, 2.0, 0.25)
    Array([1.  , 1.25, 1.5 , 1.75])
    """
    key = _scalars_key("arange", (start, stop, step), (dtype,)) if is_default_device(device) else None
    return _made_by(key, lambda: _arange(start, stop, step, dtype, device))


def _arange(start, stop, step, dtype, device):
    _check_device(device, "arange")
    if stop is None:
        start, stop = 0, start
    start, stop, step = (_real_arg(v, "arange", name) for name, v in (("start", start), ("stop", stop),
                                                                      ("step", step)))
    if step == 0:
        raise ValueError("arange: step must not be zero")
    for name, v in (("start", start), ("stop", stop), ("step", step)):
        if isinstance(v, float) and not math.isfinite(v):
            raise ValueError(f"arange: {name} must be finite, got {v!r}")
    all_int = builtins.all(isinstance(v, int) for v in (start, stop, step))
    dt = D.check_dtype(dtype, "arange") if dtype is not None else (D.DEFAULT_INT if all_int else D.DEFAULT_FLOAT)
    if dt == D.bool_:
        raise TypeError("arange: dtype must be a real numeric dtype, got bool")
    n = builtins.max(0, math.ceil((stop - start) / step)) if not all_int else builtins.max(0, -(-(stop - start) // step))
    if dt in D.INTEGER:
        info = np.iinfo(dt)
        if n and not (info.min <= start <= info.max and info.min <= start + (n - 1) * step <= info.max):
            raise OverflowError(f"arange: values do not fit in {dt.name}")
    _sized((n,), dt, "arange", "start, stop, step")
    wide = _WIDE.get(dt, dt)   # (single precision: computed in double and rounded once, as linspace)
    if _eager_small((n,)):
        v = np.arange(n, dtype=wide) * wide.type(step) + wide.type(start) if n else np.zeros(0, wide)
        return _from_host(v.astype(dt, copy=False), dt, "arange", fresh=True)
    idx = S.iota(wide, (n,), 0)
    if step != 1:
        idx = bind(P.mul_p, idx, P.convert_element_type(step, wide, weak_type=True))
    if start != 0:
        idx = bind(P.add_p, idx, P.convert_element_type(start, wide, weak_type=True))
    return wrap(P.convert_element_type(idx, dt) if wide != dt else idx)


_WIDE = {D.float32: D.float64, D.complex64: D.complex128}


def linspace(start, stop, /, num, *, dtype=None, device=None, endpoint=True):
    """num evenly spaced values from start to stop.

    Parameters: start, stop (int, float or complex): the interval. num (int): how many values, >= 0. dtype (dtype or
        None): None is float64 (complex128 for complex bounds). device (Device or None): None or the one device.
        endpoint (bool): whether stop is the last value (default True).
    Returns: Array: 1-D, num values, computed in double precision and rounded once to dtype, as NumPy's (for an
        integer dtype the float values rounded toward -inf).
    Raises: TypeError: for a non-numeric bound, a non-integer num, or complex bounds with a real dtype. ValueError:
        for a negative num or an unknown device.

    >>> xp.linspace(0, 1, 5)
    Array([0.  , 0.25, 0.5 , 0.75, 1.  ])
    """
    key = (_scalars_key("linspace", (start, stop), (num, dtype, endpoint))
           if is_default_device(device) and type(endpoint) is bool else None)
    return _made_by(key, lambda: _linspace(start, stop, num, dtype, device, endpoint))


def _linspace(start, stop, num, dtype, device, endpoint):
    _check_device(device, "linspace")
    num = as_int(num, "linspace", "num")
    if num < 0:
        raise ValueError(f"linspace: num must be a non-negative int, got {num!r}")
    start, stop = _number_arg(start, "linspace", "start"), _number_arg(stop, "linspace", "stop")
    is_c = isinstance(start, complex) or isinstance(stop, complex)
    dt = D.check_dtype(dtype, "linspace") if dtype is not None else (D.DEFAULT_COMPLEX if is_c else D.DEFAULT_FLOAT)
    _sized((num,), dt, "linspace", "num")
    if is_c and dt not in D.COMPLEX:
        raise TypeError(f"linspace: complex start/stop need a complex dtype, got {dt.name}")
    if dt not in D.FLOATING:
        # NumPy's (and array_api_strict's) meaning: the points computed in the default float, then
        # rounded toward -inf for integer dtypes (NumPy >= 2.0), nonzero -> True for bool
        f = linspace(start, stop, num, dtype=D.DEFAULT_FLOAT, endpoint=endpoint)._v
        if dt in D.INTEGER:
            f = bind(P.floor_p, f)
        return wrap(P.convert_element_type(f, dt))
    start, stop = big_int_as_float(start, dt, "linspace"), big_int_as_float(stop, dt, "linspace")   # (ints past int64: floats)
    div = (num - 1) if endpoint else num
    # computed in double precision and rounded once, as NumPy does: float32 arithmetic rounded i * step and the
    # sum apart (linspace(-1, 1, 6) had -0.19999999 and 0.20000005; 1e300 bounds gave NaN for NumPy's inf)
    wide = _WIDE.get(dt, dt)
    i = S.iota(wide, (num,), 0)
    step = (stop - start) / div if div > 0 else 0.0
    out = bind(P.add_p, bind(P.mul_p, i, P.convert_element_type(step, wide, True)),
               P.convert_element_type(start, wide, True))
    if endpoint and num > 1:
        last = bind(P.eq_p, i, P.convert_element_type(num - 1, wide, True))
        out = P.select_n(last, out, P.convert_element_type(stop, wide, True))
    return wrap(P.convert_element_type(out, dt) if dt != wide else out)


def eye(n_rows, n_cols=None, /, *, k=0, dtype=None, device=None):
    """A 2-D array with ones on the k-th diagonal and zeros elsewhere.

    Parameters: n_rows (int): rows. n_cols (int or None): columns (None: n_rows). k (int): the diagonal (0 the main
        one, > 0 above it, < 0 below). dtype (dtype or None): None is float64. device (Device or None): None or the
        one device.
    Returns: Array: of shape (n_rows, n_cols).
    Raises: TypeError: for a non-integer size or k, or an unknown dtype. ValueError: for a negative size or an unknown
        device.

    >>> xp.eye(2, 3, k=1)
    Array([[0., 1., 0.],
           [0., 0., 1.]])
    """
    key = _scalars_key("eye", (), (n_rows, n_cols, k, dtype)) if is_default_device(device) else None
    return _made_by(key, lambda: _eye(n_rows, n_cols, k, dtype, device, key))


def _eye(n_rows, n_cols, k, dtype, device, key=None):
    _check_device(device, "eye")
    n_cols = n_rows if n_cols is None else n_cols
    shape = (_shape_arg(n_rows, "eye", "n_rows")[0], _shape_arg(n_cols, "eye", "n_cols")[0])
    dt = D.check_dtype(dtype, "eye") if dtype is not None else D.DEFAULT_FLOAT
    _sized(shape, dt, "eye", "n_rows, n_cols")
    k = as_int(k, "eye", "k")   # also under jit, where k is a parameter
    k = max(-shape[0], min(k, shape[1]))   # (a diagonal past the matrix: none, however far; no int64 wrap)
    if _eager_small(shape):   # (np.eye's values as they are: _from_host's checks are for data from outside)
        return _checked(key, lambda: wrap(backend.device_put(np.eye(*shape, k=k, dtype=dt), None, fresh=True)))
    r, c = S.iota(D.int64, shape, 0), S.iota(D.int64, shape, 1)
    mask = bind(P.eq_p, bind(P.sub_p, c, r), P.convert_element_type(k, D.int64, True))
    return wrap(P.convert_element_type(mask, dt))


def _tri(fname, x, k, lower):
    x = as_array(x, fname)
    k = as_int(k, fname, "k")
    if x.ndim < 2:
        raise ValueError(f"{fname}: x must have at least 2 dimensions, got {x.ndim}")
    shape = x.shape
    k = max(-shape[-2], min(k, shape[-1]))   # (a diagonal past the matrix keeps all or none; no int64 wrap)
    r, c = S.iota(D.int64, shape, len(shape) - 2), S.iota(D.int64, shape, len(shape) - 1)
    d = bind(P.sub_p, c, r)
    kk = P.convert_element_type(k, D.int64, True)
    keep = bind(P.le_p, d, kk) if lower else bind(P.ge_p, d, kk)
    zero = P.convert_element_type(0, x.dtype, True) if x.dtype != D.bool_ else P.convert_element_type(False, D.bool_, True)
    return wrap(P.select_n(keep, zero, x._v))


def tril(x, /, *, k=0):
    """The lower triangle of each matrix of x (the last two axes): elements above the k-th diagonal set to 0.

    Parameters: x (Array): at least 2-D. k (int): the diagonal kept up to (0 the main one, > 0 above it).
    Returns: Array: of x's shape and dtype.
    Raises: TypeError: if x is not an array or k not an int. ValueError: if x has fewer than 2 dimensions.

    >>> xp.tril(xp.ones((3, 3)))
    Array([[1., 0., 0.],
           [1., 1., 0.],
           [1., 1., 1.]])
    """
    return _tri("tril", x, k, True)


def triu(x, /, *, k=0):
    """The upper triangle of each matrix of x (the last two axes): elements below the k-th diagonal set to 0.

    Parameters: x (Array): at least 2-D. k (int): the diagonal kept from (0 the main one, > 0 above it).
    Returns: Array: of x's shape and dtype.
    Raises: TypeError: if x is not an array or k not an int. ValueError: if x has fewer than 2 dimensions.

    >>> xp.triu(xp.ones((2, 3)), k=1)
    Array([[0., 1., 1.],
           [0., 0., 1.]])
    """
    return _tri("triu", x, k, False)


def meshgrid(*arrays, indexing="xy"):
    """Coordinate grids from 1-D coordinate vectors.

    Parameters: *arrays (Array): 1-D, all of one dtype. indexing (str): 'xy' (default: the first two output axes
        swapped, as for plotting) or 'ij' (matrix indexing).
    Returns: tuple of Array: one per input, each of the grid's shape.
    Raises: TypeError: if an input is not an array or the dtypes differ. ValueError: if an input is not 1-D or
        indexing is not 'xy' or 'ij'.

    >>> X, Y = xp.meshgrid(xp.asarray([1, 2]), xp.asarray([3, 4, 5]))
    >>> X
    Array([[1, 2],
           [1, 2],
           [1, 2]])
    >>> Y
    Array([[3, 3],
           [4, 4],
           [5, 5]])
    """
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    arrays = [as_array(a, "meshgrid", "arrays entry") for a in arrays]
    for a in arrays:
        if a.ndim != 1:
            raise ValueError(f"meshgrid: arrays must be 1-D, got shape {a.shape}")
    if len({a.dtype for a in arrays}) > 1:
        raise TypeError("meshgrid: all inputs must have the same dtype")
    shape = [a.shape[0] for a in arrays]
    if indexing == "xy" and len(arrays) > 1:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, a in enumerate(arrays):
        dim = i
        if indexing == "xy" and len(arrays) > 1 and i < 2:
            dim = 1 - i
        out.append(wrap(S.broadcast_in_dim(a._v, tuple(shape), (dim,))))
    return tuple(out)

