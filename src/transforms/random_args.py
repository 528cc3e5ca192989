"""Argument checking and result boxing shared by `transforms.random`'s samplers (`random`, `random_dists`).

Every public sampler checks its arguments here, so each bad input raises the same typed error (naming the
function and the argument) in every sampler, eagerly and under jit; `_call` runs a raw-value body as one
staged call and boxes its result.
"""
from __future__ import annotations

import operator

import numpy as np

from .api_util import box
from .core import boxing, get_aval, unbox
from .jaxpr_transforms import staged_call
from .primitives import elementwise as E
from .random_bits import KEY_DTYPE, KEY_SHAPE, U64, const, to_u64

# ------------------------------------------------------------------ arguments and results

def _is_array(x):
    return boxing.box_type is not None and type(x) is boxing.box_type


def _aval(x):
    return get_aval(unbox(x))


def _describe(x):
    if _is_array(x):
        a = _aval(x)
        return f"a {a.dtype.name} array of shape {tuple(a.shape)}"
    return f"a {type(x).__name__}"


def _call(body, *raw, **static):
    """Run a raw-value body as one staged call (a `jit` equation) and box its result as an Array."""
    (out,) = staged_call(body, list(raw), "random" + body.__name__.rstrip("_"), **static)
    return box(out)


def is_key(x):
    """Whether x is a single PRNG key (a uint32 Array of shape (2,)).

    Parameters: x (any): the value to test.
    Returns: bool: True for a uint32 Array of shape (2,), else False (a batch of keys is not a key).
    Raises: nothing.

    >>> random.is_key(random.key(0)), random.is_key(random.split(random.key(0), 3)), random.is_key(3)
    (True, False, False)
    """
    if not _is_array(x):
        return False
    a = _aval(x)
    return a.dtype == KEY_DTYPE and tuple(a.shape) == KEY_SHAPE


def _key_raw(k, fname):
    """The raw value of a key argument; TypeError (naming fname) for anything else."""
    if is_key(k):
        return unbox(k)
    hint = ""
    if _is_array(k):
        a = _aval(k)
        if a.dtype == KEY_DTYPE and len(a.shape) > 1 and a.shape[-1] == 2:
            hint = "; this looks like a batch of keys: vmap over it, or index one key out"
    raise TypeError(f"{fname}: expected a PRNG key (a uint32 array of shape (2,) made by random.key, "
                    f"random.split or random.fold_in), got {_describe(k)}{hint}")


def _is_int(x):
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _shape(shape, fname):
    if _is_int(shape):
        shape = (shape,)
    try:
        shape = tuple(shape)
    except TypeError:
        raise TypeError(f"{fname}: shape must be an int or a tuple of ints, got {type(shape).__name__}") from None
    for d in shape:
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 0:
            raise TypeError(f"{fname}: shape entries must be non-negative ints, got {shape!r}")
    return tuple(int(d) for d in shape)


def _axis(axis, ndim, fname):
    """A non-negative axis of an ndim >= 1 array; TypeError for a non-integer, IndexError out of bounds."""
    if isinstance(axis, (bool, np.bool_)) or not hasattr(type(axis), "__index__"):
        raise TypeError(f"{fname}: axis must be an int, got {type(axis).__name__} {axis!r}")
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise IndexError(f"{fname}: axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def _float_dtype(dtype, fname):
    dt = np.dtype(dtype) if dtype is not None else np.dtype(np.float64)
    if dt not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise TypeError(f"{fname}: dtype must be float32 or float64, got {dt.name}")
    return dt


def _int_dtype(dtype, fname):
    dt = np.dtype(dtype)
    if dt.kind not in "iu":
        raise TypeError(f"{fname}: dtype must be an integer dtype, got {dt.name}")
    return dt


def _int_raw(x, fname, what):
    """A Python/NumPy integer or a 0-d integer Array -> raw uint64 (mod 2**64)."""
    if _is_int(x):
        return const(int(x) % 2 ** 64, U64)
    if _is_array(x) and _aval(x).dtype.kind in "iu":
        if _aval(x).shape != ():
            raise TypeError(f"{fname}: {what} must be a scalar (0-d) integer, got shape {tuple(_aval(x).shape)}; "
                            "vmap over an array of them instead")
        return to_u64(unbox(x))
    raise TypeError(f"{fname}: {what} must be an integer (Python int or 0-d integer array), got {_describe(x)}")


def _bound(v, dtype, shape, fname, what):
    """A scalar or Array bound as a raw value of dtype, checked to broadcast to shape."""
    if isinstance(v, (bool, np.bool_)):
        raise TypeError(f"{fname}: {what} must be a number, got bool")
    if isinstance(v, (int, float, np.integer, np.floating)):
        return const(v, dtype)
    if not _is_array(v):
        raise TypeError(f"{fname}: {what} must be a number or an array, got {type(v).__name__}")
    a = _aval(v)
    if a.dtype.kind not in "iuf":
        raise TypeError(f"{fname}: {what} must be a real number or array, got {a.dtype.name}")
    vshape = tuple(a.shape)
    if not _broadcasts_to(vshape, shape):
        raise ValueError(f"{fname}: {what} of shape {vshape} does not broadcast to shape {shape}")
    return E.convert_element_type(unbox(v), dtype) if a.dtype != dtype or a.weak_type else unbox(v)


def _broadcasts_to(batch, shape):
    """Whether shape `batch` broadcasts to exactly `shape`."""
    try:
        return E.broadcast_shapes(tuple(batch), tuple(shape)) == tuple(shape)
    except ValueError:
        return False


def _sized(x, axis, fname, what):
    """(n, raw array or None, axis) for an int-or-array argument."""
    if _is_int(x):
        if x < 0:
            raise ValueError(f"{fname}: {what} must be non-negative, got {x}")
        return int(x), None, axis
    if _is_array(x):
        shape = tuple(_aval(x).shape)
        if not shape:
            raise ValueError(f"{fname}: {what} must be an int or an array with at least one dimension")
        axis = _axis(axis, len(shape), fname)
        return shape[axis], unbox(x), axis
    raise TypeError(f"{fname}: {what} must be an int or an array, got {type(x).__name__}")
