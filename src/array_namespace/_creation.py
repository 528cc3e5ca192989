"""Creation functions (https://data-apis.org/array-api/latest/API_specification/creation_functions.html).

Host data (Python values, NumPy, DLPack producers) becomes a device buffer at once; the
filled creators (zeros, full, ...) bind primitives, so inside jit they are staged like any other
computation. Ranges and diagonals (arange, linspace, eye, tril, triu, meshgrid) are in _ranges.py.
"""
from __future__ import annotations

import builtins
import math

import numpy as np

from transforms.backend import backend
from transforms.core import EVAL, ShapedArray, Tracer, trace_state, boxing, check_size
from transforms.primitives import elementwise as P
from transforms.primitives import structural as S

from . import _dtypes as D
from ._array import Array, default_device
from ._helpers import big_int_as_float, as_array, as_int, cast, is_int_like, plain, py_number, wrap
from ._plans import MADE_MAX_ELEMENTS, SCALAR_TYPES, is_default_device, keep_made, made, remember, scalar_key


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


def _from_host(arr, dtype, fname, fresh=False):
    """arr (host data; fresh: made by the caller, who gives it up) as an Array of dtype (None: arr's)."""
    if arr.dtype.kind not in "biufc":
        raise TypeError(f"{fname}: data of dtype {arr.dtype} is not numeric")
    if dtype is None:
        dtype = arr.dtype if arr.dtype in D._BY_NP else (   # (NumPy dtype keys: compared in C)
            D.DEFAULT_FLOAT if arr.dtype.kind == "f" else D.DEFAULT_COMPLEX if arr.dtype.kind == "c" else None)
        if dtype is None:
            raise TypeError(f"{fname}: dtype {arr.dtype} is not supported")
    if arr.dtype != dtype:   # (a float or complex dtype the standard lacks, e.g. float16, becomes the default one)
        if dtype.kind in "iu" and arr.dtype.kind in "iu" and arr.size:
            info = np.iinfo(dtype)
            if arr.min() < info.min or arr.max() > info.max:
                raise OverflowError(f"{fname}: values out of range for {dtype.name}")
        with np.errstate(all="ignore"):
            arr = arr.astype(dtype)
        fresh = True   # (astype's copy)
    return wrap(backend.device_put(arr, None, fresh=fresh))


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
    if isinstance(obj, (bool, int, float, complex)) and not isinstance(obj, np.generic):
        return _asarray_scalar(obj, dtype)
    if copy is False:   # (an Array cannot share a NumPy buffer: the owner could write to it behind the Array's back)
        raise ValueError(f"asarray: copy=False, but obj (a {type(obj).__name__}) must be copied into an Array (its "
                         "memory cannot be shared: Arrays keep their values); pass copy=None or copy=True")
    if isinstance(obj, (np.ndarray, np.generic)):
        return _from_host(np.asarray(obj), dtype, "asarray")
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
                return _from_host(np.asarray(obj, dtype=dt), dt, "asarray", fresh=True)   # (a list's: new memory)
            return _from_host(np.asarray(obj), dtype, "asarray", fresh=True)
        except ValueError as e:
            if "inhomogeneous" not in str(e) and "sequence" not in str(e):
                raise
            raise ValueError(f"asarray: obj is a ragged nested sequence (its lists differ in length): {e}") from None
    if isinstance(obj, Tracer) or type(obj) is boxing.buffer_type:
        obj = obj if isinstance(obj, Tracer) else backend.adopt(obj)   # (a jax.Array: copied in, as from NumPy)
        return wrap(obj if dtype is None else cast(obj, dtype))
    if hasattr(obj, "__dlpack__"):
        return _from_host(_dlpack_to_numpy(obj, "asarray"), dtype, "asarray")
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
    return _from_host(np.asarray(obj), dt, "asarray", fresh=True)


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
    arr = _dlpack_to_numpy(x, "from_dlpack")
    if arr.dtype not in D._BY_NP:   # (x's dtype is kept, so one the namespace lacks cannot be)
        raise TypeError(f"from_dlpack: x has dtype {arr.dtype}, which is not one of the namespace's (bool, int8-64, "
                        "uint8-64, float32, float64, complex64, complex128); convert it first, or use asarray, which "
                        "turns other floating dtypes into float64")
    return _from_host(arr, None, "from_dlpack")


def _dlpack_to_numpy(x, fname):
    """x's data through NumPy's DLPack import; a dtype NumPy lacks (bfloat16) is a TypeError, not its RuntimeError."""
    try:
        return np.from_dlpack(x)
    except RuntimeError as e:
        raise TypeError(f"{fname}: cannot import x (a {type(x).__name__}) through DLPack: {e} (NumPy raises this for "
                        "a dtype it lacks, e.g. bfloat16: convert x to float32 first)") from None


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


_FULL_CHECKED: dict = {}   # made-value keys of creations too large to keep (MADE) -> their checked (shape, fill, dtype)


def _full(shape, fill_value, dtype, device, fname):
    if trace_state.trace is EVAL and type(fill_value) in SCALAR_TYPES and (dtype is None or type(dtype) is D.DType) \
            and is_default_device(device) and plain(shape):
        key = ("full", shape, type(fill_value), scalar_key(fill_value), dtype)
        out = made(key)
        if out is not None:
            return out
        checked = _FULL_CHECKED.get(key)
        if checked is not None:   # (these arguments passed the checks before: only the making is left)
            return _full_made(*checked)
        out = _full_checked(shape, fill_value, dtype, device, fname)
        if out.size <= MADE_MAX_ELEMENTS:
            return keep_made(key, out)
        remember(_FULL_CHECKED, key, (out.shape, fill_value, out.dtype, fname))
        return out
    return _full_checked(shape, fill_value, dtype, device, fname)


def _full_checked(shape, fill_value, dtype, device, fname):
    _check_device(device, fname)
    shape = _shape_arg(shape, fname)
    fill_value = _fill_value(fill_value, fname)
    dtype = _fill_dtype(fill_value, dtype, fname)
    _sized(shape, dtype, fname, "shape")
    if type(fill_value) is Array:
        return wrap(S.broadcast_in_dim(cast(fill_value._v, dtype), shape, ()))
    if isinstance(fill_value, complex) and dtype not in D.COMPLEX:
        raise TypeError(f"{fname}: the complex fill_value {fill_value!r} cannot fill a {dtype.name} array")
    info = np.iinfo(dtype) if type(fill_value) is int and dtype in D.INTEGER else None
    if info is not None and not info.min <= fill_value <= info.max:
        raise OverflowError(f"{fname}: fill_value {fill_value} is out of bounds for {dtype.name}")
    if isinstance(fill_value, float) and dtype in D.INTEGER_OR_BOOL and not fill_value.is_integer():
        raise TypeError(f"{fname}: the non-integral fill_value {fill_value!r} cannot fill an array of dtype "
                        f"{dtype.name}")
    return _full_made(shape, fill_value, dtype, fname)


def _full_made(shape, fill_value, dtype, fname):
    """An array of checked `shape` and `dtype`, every element the Python scalar fill_value."""
    fill_value = big_int_as_float(fill_value, dtype, fname)   # (an int past int64 for a float dtype: its float)
    if _eager_small(shape):   # (np.full's work without its Python frame, nor _from_host's checks of a made array)
        arr = np.empty(shape, dtype)
        arr.fill(fill_value)
        return wrap(backend.device_put(arr, None, fresh=True))
    return wrap(S.broadcast_in_dim(P.convert_element_type(fill_value, dtype), shape, ()))


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
