"""Creation functions (https://data-apis.org/array-api/latest/API_specification/creation_functions.html).

Host data (Python values, NumPy, DLPack producers) becomes a device buffer at once; the
structured creators (zeros, full, arange, eye, ...) bind primitives, so inside jit they
are staged like any other computation.
"""
from __future__ import annotations

import builtins
import math

import numpy as np

from transforms.backend import backend
from transforms.core import EVAL, ShapedArray, Tracer, trace_state, bind, boxing, check_size
from transforms.primitives import elementwise as P
from transforms.primitives import structural as S

from . import _dtypes as D
from ._array import Array, default_device
from ._helpers import as_array, as_int, cast, is_int_like, py_number, wrap
from ._plans import MADE_MAX_ELEMENTS, SCALAR_TYPES, is_default_device, keep_made, made, plain, scalar_key


def _check_device(device, fname):
    if device is not None and not is_default_device(device) and device != default_device():
        raise ValueError(f"{fname}: unknown device {device!r}; available: {default_device()!r}")


def _shape_arg(shape, fname, arg="shape"):
    """A shape: an int or a sequence of ints (anything operator.index takes: np.int64 too)."""
    if type(shape) is int or is_int_like(shape):
        shape = (shape,)
    if isinstance(shape, (str, bytes)):
        raise TypeError(f"{fname}: {arg} must be an int or a tuple of ints, got {type(shape).__name__}")
    try:
        shape = tuple(shape)
    except TypeError:
        raise TypeError(f"{fname}: {arg} must be an int or a tuple of ints, got {type(shape).__name__}") from None
    out = []
    for d in shape:
        if type(d) is not int:
            d = as_int(d, fname, f"{arg} entry")
        if d < 0:
            raise ValueError(f"{fname}: negative dimension {d} in {arg} {shape}")
        out.append(int(d))
    return tuple(out)


def _sized(shape, dtype, fname, arg):
    """ValueError/MemoryError (transforms.core.check_size) for a result too large, named after the caller."""
    check_size(ShapedArray(shape, dtype), f"{fname} ({arg})")
    return shape


def _host_dtype(obj):
    """The standard's default dtype for nested Python data (bool < int < float < complex)."""
    arr = np.asarray(obj)
    if arr.dtype == object:
        raise TypeError(f"asarray: cannot convert {type(obj).__name__} with mixed/unsupported elements")
    k = arr.dtype.kind
    return {"b": D.bool_, "i": D.DEFAULT_INT, "u": D.DEFAULT_INT, "f": D.DEFAULT_FLOAT,
            "c": D.DEFAULT_COMPLEX}.get(k)


def _contains_array(obj):
    if type(obj) is Array:
        return True
    if isinstance(obj, (list, tuple)):
        return builtins.any(_contains_array(o) for o in obj)
    return False


def _from_host(arr, dtype, fname):
    if arr.dtype.kind not in "biufc":
        raise TypeError(f"{fname}: data of dtype {arr.dtype} is not numeric")
    if dtype is None:
        dtype = arr.dtype if arr.dtype in D._ALLSET else (
            D.DEFAULT_FLOAT if arr.dtype.kind == "f" else D.DEFAULT_COMPLEX if arr.dtype.kind == "c" else None)
        if dtype is None:
            raise TypeError(f"{fname}: dtype {arr.dtype} is not supported")
    elif arr.dtype != dtype:
        if dtype.kind in "iu" and arr.dtype.kind in "iu" and arr.size:
            info = np.iinfo(dtype)
            if arr.min() < info.min or arr.max() > info.max:
                raise OverflowError(f"{fname}: values out of range for {dtype.name}")
        with np.errstate(all="ignore"):
            arr = arr.astype(dtype)
    return wrap(backend.device_put(arr, None))


def asarray(obj, /, *, dtype=None, device=None, copy=None):
    """Convert obj (Array, Python scalar or nested sequence, NumPy array, buffer or DLPack producer) to an Array.

    Parameters: obj: the data. dtype (dtype or None): the result's dtype (None: obj's, or the standard's default for
        Python data: bool, int64, float64, complex128). device (Device or None): None or the one device. copy (bool or
        None): True always copies, False never does (host data and dtype changes then raise), None copies only when
        needed.
    Returns: Array: obj's values, of shape obj's nesting.
    Raises: TypeError: if obj (or one of its elements) cannot be converted or a value does not fit the dtype's kind.
        ValueError: for a ragged sequence, an unknown device, or copy=False where a copy is needed. OverflowError: for
        an int out of the dtype's range.

    >>> xp.asarray([[1, 2], [3, 4]], dtype=xp.float32)
    Array([[1., 2.],
           [3., 4.]], dtype=float32)
    """
    if type(obj) in SCALAR_TYPES and copy is None and (dtype is None or type(dtype) is D.DType) and \
            is_default_device(device):
        key = ("asarray", type(obj), scalar_key(obj), dtype)
        out = made(key)
        if out is not None:
            return out
        return keep_made(key, _asarray_scalar(obj, dtype))
    if device is not None and not is_default_device(device) and device != default_device():
        # another device, or a layout over several
        from ._sharded import to_device
        return to_device(asarray(obj, dtype=dtype, copy=copy), device, "asarray")
    if dtype is not None:
        dtype = D.check_dtype(dtype, "asarray")
    if type(obj) is Array:
        if dtype is not None and dtype != obj.dtype:
            if copy is False:
                raise ValueError("asarray: copy=False but changing the dtype requires a copy")
            return wrap(cast(obj._v, dtype))
        return wrap(obj._v) if copy else obj
    if isinstance(obj, (np.ndarray, np.generic)):
        return _from_host(np.asarray(obj), dtype, "asarray")
    if isinstance(obj, (bool, int, float, complex)):
        return _asarray_scalar(obj, dtype)
    if copy is False:
        raise ValueError("asarray: copy=False is impossible for host data; it must be copied to the device")
    if isinstance(obj, (list, tuple)) and _contains_array(obj):
        from ._manipulation import stack
        items = [asarray(o, dtype=dtype) for o in obj]
        return stack(items) if items else asarray(np.zeros((0,)), dtype=dtype)
    if isinstance(obj, (list, tuple)):
        try:
            if dtype is None:
                dt = _host_dtype(obj)
                if dt is None:
                    raise TypeError("asarray: obj, a nested sequence, has unsupported elements")
                return _from_host(np.asarray(obj, dtype=dt), dt, "asarray")
            return _from_host(np.asarray(obj), dtype, "asarray")
        except ValueError as e:
            if "inhomogeneous" not in str(e) and "sequence" not in str(e):
                raise
            raise ValueError(f"asarray: obj is a ragged nested sequence (its lists differ in length): {e}") from None
    if isinstance(obj, Tracer) or type(obj) is boxing.buffer_type:
        return wrap(obj if dtype is None else cast(obj, dtype))
    if hasattr(obj, "__dlpack__"):
        return _from_host(np.from_dlpack(obj), dtype, "asarray")
    if hasattr(obj, "__array__") or hasattr(obj, "__array_interface__"):
        return _from_host(np.asarray(obj), dtype, "asarray")
    if isinstance(obj, (bytes, bytearray, memoryview)) or hasattr(obj, "__buffer__"):
        return _from_host(np.asarray(memoryview(obj)), dtype, "asarray")
    raise TypeError(f"asarray: cannot convert obj of type {type(obj).__name__} to an array; expected an "
                    "array, a Python scalar, a (nested) sequence of them, or a DLPack/buffer-protocol object")


def _asarray_scalar(obj, dtype):
    """asarray of a Python scalar (dtype checked or None)."""
    dt = dtype or D.default_dtype_of_scalar(obj)
    if isinstance(obj, complex) and dt not in D.COMPLEX:
        raise TypeError(f"asarray: cannot store a complex value in {dt.name}")
    if isinstance(obj, float) and dt in D.INTEGER_OR_BOOL:
        raise TypeError(f"asarray: cannot store a float in {dt.name}")
    if isinstance(obj, int) and not isinstance(obj, bool) and dt in D.INTEGER:
        info = np.iinfo(dt)
        if not info.min <= obj <= info.max:
            raise OverflowError(f"asarray: Python int {obj} is out of bounds for {dt.name}")
    return _from_host(np.asarray(obj), dt, "asarray")


def from_dlpack(x, /, *, device=None, copy=None):
    """An Array from an object that implements the DLPack protocol (its data is copied to the device).

    Parameters: x: the producer (it has __dlpack__). device (Device or None): None or the one device. copy (bool or
        None): accepted for the standard's signature.
    Returns: Array: x's values, dtype and shape.
    Raises: TypeError: if x has no __dlpack__ or its dtype is not one of the namespace's. ValueError: for an unknown
        device.

    >>> xp.from_dlpack(np.arange(3))
    Array([0, 1, 2])
    """
    _check_device(device, "from_dlpack")
    if not hasattr(x, "__dlpack__"):
        raise TypeError(f"from_dlpack: x of type {type(x).__name__} does not implement __dlpack__")
    if type(x) is Array:
        return wrap(x._v)
    return _from_host(np.from_dlpack(x), None, "from_dlpack")


def _fill_value(fill_value, fname):
    """An Array, or the Python scalar a fill value is (NumPy scalars included)."""
    if type(fill_value) is Array or type(fill_value) in (bool, int, float, complex):
        return fill_value
    v = py_number(fill_value)
    if v is None:
        raise TypeError(f"{fname}: fill_value must be a Python scalar or an array, got {type(fill_value).__name__}")
    return v


def _fill_dtype(fill_value, dtype, fname):
    if dtype is not None:
        return D.check_dtype(dtype, fname)
    if type(fill_value) is Array:
        return fill_value.dtype
    return D.default_dtype_of_scalar(fill_value)


_HOST_FILL_MAX = 1 << 16   # eager creations up to this size are filled on the host: no compile per shape


def _eager_small(shape):
    return trace_state.trace is EVAL and math.prod(shape) <= _HOST_FILL_MAX


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


def _made_by(key, make):
    """make() -- an eager creation of static arguments only -- or, where `key` is not None and the same call
    was made before, a fresh copy of the values it made (kept when small: nothing checked or computed again)."""
    if key is None:
        return make()
    out = made(key)
    if out is None:
        out = make()
        if out.size <= MADE_MAX_ELEMENTS:
            keep_made(key, out)
    return out


def full(shape, fill_value, *, dtype=None, device=None):
    """An array of the given shape, every element fill_value.

    Parameters: shape (int or tuple of int): the shape. fill_value (Python scalar or 0-d Array): the value. dtype
        (dtype or None): None takes fill_value's (the default dtype of a Python scalar's kind). device (Device or
        None): None or the one device.
    Returns: Array: of that shape and dtype.
    Raises: TypeError: for a non-integer shape, an unknown dtype, or a fill value the dtype cannot hold (complex in a
        real dtype, a fractional float in an integer one). ValueError: for a negative dimension or an unknown device.

    >>> xp.full((2, 2), 7)
    Array([[7, 7],
           [7, 7]])
    """
    return _full(shape, fill_value, dtype, device, "full")


def _full(shape, fill_value, dtype, device, fname):
    if trace_state.trace is EVAL and type(fill_value) in SCALAR_TYPES and (dtype is None or type(dtype) is D.DType) \
            and is_default_device(device) and plain(shape):
        key = ("full", shape, type(fill_value), scalar_key(fill_value), dtype)
        out = made(key)
        if out is not None:
            return out
        out = _full_checked(shape, fill_value, dtype, device, fname)
        return keep_made(key, out) if out.size <= MADE_MAX_ELEMENTS else out
    return _full_checked(shape, fill_value, dtype, device, fname)


def _full_checked(shape, fill_value, dtype, device, fname):
    _check_device(device, fname)
    shape = _shape_arg(shape, fname)
    fill_value = _fill_value(fill_value, fname)
    dtype = _fill_dtype(fill_value, dtype, fname)
    _sized(shape, dtype, fname, "shape")
    if type(fill_value) is Array:
        v = cast(fill_value._v, dtype)
    else:
        if isinstance(fill_value, complex) and dtype not in D.COMPLEX:
            raise TypeError(f"full: cannot fill a {dtype.name} array with a complex value")
        if isinstance(fill_value, float) and dtype in D.INTEGER_OR_BOOL and not fill_value.is_integer():
            raise TypeError(f"full: cannot fill an integer array with {fill_value!r}")
        if _eager_small(shape):
            return _from_host(np.full(shape, fill_value, dtype=dtype), dtype, "full")
        v = P.convert_element_type(fill_value, dtype)
    return wrap(S.broadcast_in_dim(v, shape, ()))


def zeros(shape, *, dtype=None, device=None):
    """An array of zeros.

    Parameters: shape (int or tuple of int): the shape. dtype (dtype or None): None is float64. device (Device or
        None): None or the one device.
    Returns: Array: zeros of that shape and dtype.
    Raises: TypeError: for a non-integer shape or an unknown dtype. ValueError: for a negative dimension or an unknown
        device.

    >>> xp.zeros(3)
    Array([0., 0., 0.])
    """
    return _full(shape, 0, dtype or D.DEFAULT_FLOAT, device, "zeros")


def ones(shape, *, dtype=None, device=None):
    """An array of ones.

    Parameters: shape (int or tuple of int): the shape. dtype (dtype or None): None is float64. device (Device or
        None): None or the one device.
    Returns: Array: ones of that shape and dtype.
    Raises: TypeError: for a non-integer shape or an unknown dtype. ValueError: for a negative dimension or an unknown
        device.

    >>> xp.ones((2,), dtype=xp.int32)
    Array([1, 1], dtype=int32)
    """
    return _full(shape, 1, dtype or D.DEFAULT_FLOAT, device, "ones")


def empty(shape, *, dtype=None, device=None):
    """An array whose values are not to be relied on (here: zeros).

    Parameters: shape (int or tuple of int): the shape. dtype (dtype or None): None is float64. device (Device or
        None): None or the one device.
    Returns: Array: of that shape and dtype.
    Raises: TypeError: for a non-integer shape or an unknown dtype. ValueError: for a negative dimension or an unknown
        device.

    >>> xp.empty((2, 3)).shape
    (2, 3)
    """
    return _full(shape, 0, dtype or D.DEFAULT_FLOAT, device, "empty")


def _like(fname, x, dtype, device):
    x = as_array(x, fname)
    _check_device(device, fname)
    return x, D.check_dtype(dtype, fname) if dtype is not None else x.dtype


def full_like(x, /, fill_value, *, dtype=None, device=None):
    """An array of x's shape (and dtype, unless given), every element fill_value.

    Parameters: x (Array): the model. fill_value (Python scalar or 0-d Array): the value. dtype (dtype or None): None
        is x's. device (Device or None): None or the one device.
    Returns: Array: of x's shape.
    Raises: TypeError: if x is not an array, for an unknown dtype or a fill value the dtype cannot hold. ValueError:
        for an unknown device.

    >>> xp.full_like(xp.asarray([1, 2]), 9)
    Array([9, 9])
    """
    x, dt = _like("full_like", x, dtype, device)
    return _full(x.shape, fill_value, dt, None, "full_like")


def zeros_like(x, /, *, dtype=None, device=None):
    """Zeros of x's shape (and dtype, unless given).

    Parameters: x (Array): the model. dtype (dtype or None): None is x's. device (Device or None): None or the one
        device.
    Returns: Array: zeros (False for bool) of x's shape.
    Raises: TypeError: if x is not an array or for an unknown dtype. ValueError: for an unknown device.

    >>> xp.zeros_like(xp.asarray([[1.5, 2.5]]))
    Array([[0., 0.]])
    """
    x, dt = _like("zeros_like", x, dtype, device)
    return _full(x.shape, False if dt == D.bool_ else 0, dt, None, "zeros_like")


def ones_like(x, /, *, dtype=None, device=None):
    """Ones of x's shape (and dtype, unless given).

    Parameters: x (Array): the model. dtype (dtype or None): None is x's. device (Device or None): None or the one
        device.
    Returns: Array: ones (True for bool) of x's shape.
    Raises: TypeError: if x is not an array or for an unknown dtype. ValueError: for an unknown device.

    >>> xp.ones_like(xp.asarray([True, False]))
    Array([ True,  True])
    """
    x, dt = _like("ones_like", x, dtype, device)
    return _full(x.shape, True if dt == D.bool_ else 1, dt, None, "ones_like")


def empty_like(x, /, *, dtype=None, device=None):
    """An array of x's shape (and dtype, unless given) whose values are not to be relied on (here: zeros).

    Parameters: x (Array): the model. dtype (dtype or None): None is x's. device (Device or None): None or the one
        device.
    Returns: Array: of x's shape.
    Raises: TypeError: if x is not an array or for an unknown dtype. ValueError: for an unknown device.

    >>> xp.empty_like(xp.asarray([1, 2])).shape
    (2,)
    """
    x, dt = _like("empty_like", x, dtype, device)
    return _full(x.shape, False if dt == D.bool_ else 0, dt, None, "empty_like")


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
    Returns: Array: 1-D, ceil((stop - start) / step) values (none if that is negative).
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
    if _eager_small((n,)):
        return _from_host(np.arange(n, dtype=dt) * dt.type(step) + dt.type(start) if n else np.zeros(0, dt),
                          dt, "arange")
    idx = S.iota(dt, (n,), 0)
    if step != 1:
        idx = bind(P.mul_p, idx, P.convert_element_type(step, dt, weak_type=True))
    if start != 0:
        idx = bind(P.add_p, idx, P.convert_element_type(start, dt, weak_type=True))
    return wrap(idx)


def linspace(start, stop, /, num, *, dtype=None, device=None, endpoint=True):
    """num evenly spaced values from start to stop.

    Parameters: start, stop (int, float or complex): the interval. num (int): how many values, >= 0. dtype (dtype or
        None): None is float64 (complex128 for complex bounds). device (Device or None): None or the one device.
        endpoint (bool): whether stop is the last value (default True).
    Returns: Array: 1-D, num values (for an integer dtype the float values rounded toward -inf).
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
    div = (num - 1) if endpoint else num
    i = S.iota(dt, (num,), 0)
    step = (stop - start) / div if div > 0 else 0.0
    out = bind(P.add_p, bind(P.mul_p, i, P.convert_element_type(step, dt, True)),
               P.convert_element_type(start, dt, True))
    if endpoint and num > 1:
        last = bind(P.eq_p, i, P.convert_element_type(num - 1, dt, True))
        out = P.select_n(last, out, P.convert_element_type(stop, dt, True))
    return wrap(out)


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
    return _made_by(key, lambda: _eye(n_rows, n_cols, k, dtype, device))


def _eye(n_rows, n_cols, k, dtype, device):
    _check_device(device, "eye")
    n_cols = n_rows if n_cols is None else n_cols
    shape = (_shape_arg(n_rows, "eye", "n_rows")[0], _shape_arg(n_cols, "eye", "n_cols")[0])
    dt = D.check_dtype(dtype, "eye") if dtype is not None else D.DEFAULT_FLOAT
    _sized(shape, dt, "eye", "n_rows, n_cols")
    k = as_int(k, "eye", "k")   # also under jit, where k is a parameter
    if _eager_small(shape):
        return _from_host(np.eye(shape[0], shape[1], k=k, dtype=dt), dt, "eye")
    r, c = S.iota(D.int64, shape, 0), S.iota(D.int64, shape, 1)
    mask = bind(P.eq_p, bind(P.sub_p, c, r), P.convert_element_type(k, D.int64, True))
    return wrap(P.convert_element_type(mask, dt))


def _tri(fname, x, k, lower):
    x = as_array(x, fname)
    k = as_int(k, fname, "k")
    if x.ndim < 2:
        raise ValueError(f"{fname}: x must have at least 2 dimensions, got {x.ndim}")
    shape = x.shape
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

