"""Data type functions (https://data-apis.org/array-api/latest/API_specification/data_type_functions.html)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _dtypes as D
from ._array import Array
from ._helpers import as_array, cast, py_number, wrap


def astype(x, dtype, /, *, copy=True, device=None):
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
    dt = type.dtype if isinstance(type, Array) else D.check_dtype(type, "finfo", "type")
    if dt not in D.FLOATING:
        raise TypeError(f"finfo: type {dt.name} is not a floating-point dtype")
    fi = np.finfo(dt)
    real = D.real_dtype(dt)
    return finfo_object(int(fi.bits), float(fi.eps), float(fi.max), float(fi.min), float(fi.smallest_normal), real)


def iinfo(type, /):
    dt = type.dtype if isinstance(type, Array) else D.check_dtype(type, "iinfo", "type")
    if dt not in D.INTEGER:
        raise TypeError(f"iinfo: type {dt.name} is not an integer dtype")
    ii = np.iinfo(dt)
    return iinfo_object(int(ii.bits), int(ii.max), int(ii.min), dt)


def isdtype(dtype, kind):
    dtype = D.check_dtype(dtype, "isdtype")
    if isinstance(kind, tuple):
        return any(isdtype(dtype, k) for k in kind)
    if isinstance(kind, str):
        if kind not in D.CATEGORIES:
            raise ValueError(f"isdtype: unknown kind {kind!r}; expected one of {sorted(D.CATEGORIES)}")
        return dtype in D.CATEGORIES[kind]
    return dtype == D.check_dtype(kind, "isdtype", "kind")


def result_type(*arrays_and_dtypes):
    """The dtype of combining arrays, dtypes and Python scalars (NumPy scalars count as the Python
    numbers they are: weak). As array_api_strict: at least one array or dtype is required
    (ValueError otherwise); scalars then take part as they do in a binary function."""
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
