"""Data type functions (https://data-apis.org/array-api/latest/API_specification/data_type_functions.html)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _dtypes as D
from ._array import Array
from ._helpers import as_array, cast, py_number, wrap
from ._statistical import _remember


def astype(x, dtype, /, *, copy=True, device=None):
    """x converted to dtype (C-style casting: floats to integers truncate toward zero).

    Parameters: x (Array or Python scalar): the input. dtype (dtype): the target. copy (bool): False returns x itself
        when it already has that dtype (default True: always a new array). device (Device or None): None or x's
        device.
    Returns: Array: x's values in dtype, of x's shape.
    Raises: TypeError: for an unknown dtype, a non-array x, or complex x to a real dtype (take xp.real or xp.abs
        first). ValueError: for another device.

    >>> xp.astype(xp.asarray([1.7, -1.7]), xp.int32)
    Array([ 1, -1], dtype=int32)
    """
    x = as_array(x, "astype")
    dtype = D.check_dtype(dtype, "astype")
    if device is not None and device != x.device:
        raise ValueError(f"astype: unknown device {device!r}")
    if dtype == x.dtype:
        return wrap(x._v) if copy else x
    if x.dtype in D.COMPLEX and dtype not in D.COMPLEX:
        raise TypeError(f"astype: casting x of complex dtype {x.dtype.name} to {dtype.name} discards the imaginary "
                        "part; use xp.real or xp.abs first")
    return wrap(cast(x._v, dtype))


def can_cast(from_, to, /):
    """Whether the type promotion rules allow casting from_ to `to` (no loss of kind or precision).

    Parameters: from_ (dtype or Array): the source dtype (an Array stands for its dtype). to (dtype): the target.
    Returns: bool: True if promoting from_ with `to` gives `to`.
    Raises: TypeError: if from_ or `to` is not a dtype of the namespace.

    >>> xp.can_cast(xp.int8, xp.int16), xp.can_cast(xp.float64, xp.float32)
    (True, False)
    """
    to = D.check_dtype(to, "can_cast", "to")
    f = from_.dtype if type(from_) is Array else D.check_dtype(from_, "can_cast", "from_")
    return D.PROMOTION.get((f, to)) == to


@dataclass(frozen=True)
class finfo_object:
    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    dtype: np.dtype


@dataclass(frozen=True)
class iinfo_object:
    bits: int
    max: int
    min: int
    dtype: np.dtype


def finfo(type, /):
    """Machine limits of a floating-point dtype.

    Parameters: type (dtype or Array): a floating-point dtype (an Array stands for its dtype).
    Returns: finfo_object: bits, eps, max, min, smallest_normal (Python floats) and dtype (the real dtype: float64 for
        complex128).
    Raises: TypeError: if type is not a floating-point dtype of the namespace.

    >>> xp.finfo(xp.float32).eps
    1.1920928955078125e-07
    """
    dt = type.dtype if isinstance(type, Array) else D.check_dtype(type, "finfo", "type")
    info = _FINFO.get(dt)
    if info is None:
        if dt not in D.FLOATING:
            raise TypeError(f"finfo: type {dt.name} is not a floating-point dtype")
        fi = np.finfo(dt)
        real = D.real_dtype(dt)
        info = _FINFO[dt] = finfo_object(int(fi.bits), float(fi.eps), float(fi.max), float(fi.min),
                                         float(fi.smallest_normal), real)
    return info


# finfo/iinfo results per dtype (frozen objects: one per dtype serves every call)
_FINFO: dict = {}
_IINFO: dict = {}


def iinfo(type, /):
    """Machine limits of an integer dtype.

    Parameters: type (dtype or Array): an integer dtype (an Array stands for its dtype).
    Returns: iinfo_object: bits, max, min (Python ints) and dtype.
    Raises: TypeError: if type is not an integer dtype of the namespace.

    >>> xp.iinfo(xp.int8)
    iinfo_object(bits=8, max=127, min=-128, dtype=array_namespace.int8)
    """
    dt = type.dtype if isinstance(type, Array) else D.check_dtype(type, "iinfo", "type")
    info = _IINFO.get(dt)
    if info is None:
        if dt not in D.INTEGER:
            raise TypeError(f"iinfo: type {dt.name} is not an integer dtype")
        ii = np.iinfo(dt)
        info = _IINFO[dt] = iinfo_object(int(ii.bits), int(ii.max), int(ii.min), dt)
    return info


def isdtype(dtype, kind):
    """Whether dtype is of the given kind.

    Parameters: dtype (dtype): the dtype asked about. kind (dtype, str or tuple): a dtype (equality), a category name
        ('bool', 'signed integer', 'unsigned integer', 'integral', 'real floating', 'complex floating', 'numeric') or
        a tuple of these (any of them).
    Returns: bool: whether dtype is of that kind.
    Raises: TypeError: if dtype or a kind dtype is not a dtype of the namespace. ValueError: for an unknown category
        name.

    >>> xp.isdtype(xp.float32, "real floating"), xp.isdtype(xp.int8, ("bool", "unsigned integer"))
    (True, False)
    """
    if type(dtype) is D.DType:
        key = (dtype, kind)
        try:
            r = _ISDTYPE.get(key)
        except TypeError:   # (an unhashable kind: the checked path below says what is wrong with it)
            r = key = None
        if r is not None:
            return r
        if key is not None:
            r = _isdtype(dtype, kind)
            _remember(_ISDTYPE, key, r)   # (kept only once answered: a refused kind raised above)
            return r
    return _isdtype(dtype, kind)


_ISDTYPE: dict = {}   # (dtype, kind) -> isdtype's answer


def _isdtype(dtype, kind):
    dtype = D.check_dtype(dtype, "isdtype")
    if isinstance(kind, tuple):
        return any(_isdtype(dtype, k) for k in kind)
    if isinstance(kind, str):
        if kind not in D.CATEGORIES:
            raise ValueError(f"isdtype: unknown kind {kind!r}; expected one of {sorted(D.CATEGORIES)}")
        return dtype in D.CATEGORIES[kind]
    return dtype == D.check_dtype(kind, "isdtype", "kind")


def result_type(*arrays_and_dtypes):
    """The dtype of combining arrays, dtypes and Python scalars (NumPy scalars count as the Python
    numbers they are: weak). As array_api_strict: at least one array or dtype is required; scalars then take
    part as they do in a binary function.

    Parameters: *arrays_and_dtypes (Array, dtype or Python scalar): the operands.
    Returns: dtype: the promoted dtype.
    Raises: TypeError: for an entry that is not an array, dtype or number, or dtypes that do not promote. ValueError:
        if no array or dtype is given.

    >>> xp.result_type(xp.asarray([1.0], dtype=xp.float32), 2.0)
    array_namespace.float32
    """
    dt, scalars = None, []
    for a in arrays_and_dtypes:
        if type(a) in (bool, int, float, complex):
            scalars.append(a)
            continue
        if isinstance(a, Array):
            d = a.dtype
        else:
            p = py_number(a) if not isinstance(a, type) else None
            if p is not None:
                scalars.append(p)
                continue
            d = D.check_dtype(a, "result_type", "arrays_and_dtypes entry")
        dt = d if dt is None else D.promote(dt, d, "result_type")
    if dt is None:
        raise ValueError("result_type: at least one array or dtype is required"
                         + (f" (got only Python scalars {tuple(scalars)!r})" if scalars else ""))
    for s in scalars:
        dt = D.scalar_dtype_for(s, dt, "result_type")
    return dt
