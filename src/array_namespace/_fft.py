"""The `fft` extension of the Array API standard (https://data-apis.org/array-api/latest/extensions/fourier_transform_functions.html).

All transforms bind the one `fft` primitive (transforms/primitives/fft.py), which handles up
to three trailing axes; other axes are moved to the end and back, and more than three axes
are done in groups (the multi-dimensional DFT is separable). `norm` follows the standard:
"backward" (no scaling forward, 1/n inverse), "ortho" (1/sqrt(n) both ways), "forward"
(1/n forward, none inverse).

Complex transforms (fft, ifft, fftn, ifftn, hfft) also accept real floating inputs, which
are converted to the complex dtype of the same precision; integer or boolean inputs raise
TypeError.
"""
from __future__ import annotations

import math

import numpy as np

from transforms.core import ShapedArray, bind, check_size
from transforms.primitives import elementwise as P
from transforms.primitives import fft as F
from transforms.primitives import structural as S

from . import _dtypes as D
from ._creation import _check_device
from ._helpers import as_array, as_int, cast, check_kind, is_int_like, normalize_axes, normalize_axis, wrap
from ._manipulation import roll
from ._staged import compiled

__all__ = ["fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft", "fftfreq",
           "rfftfreq", "fftshift", "ifftshift"]

_NORMS = ("backward", "ortho", "forward")
_SWAP = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


def _check_norm(fname, norm):
    if norm not in _NORMS:
        raise ValueError(f"{fname}: norm must be 'backward', 'ortho' or 'forward', got {norm!r}")


def _scale(v, fname, norm, n, inverse):
    """Apply the normalisation; the primitive is unscaled forward and 1/n inverse."""
    if norm == "backward":
        return v
    if norm == "ortho":
        f = math.sqrt(n) if inverse else 1.0 / math.sqrt(n)
    else:   # "forward"
        f = float(n) if inverse else 1.0 / n
    return P.mul(v, P.full_like_scalar(v, f))


def _complex_input(fname, x):
    x = as_array(x, fname)
    check_kind(fname, x.dtype, D.FLOATING, "a floating-point")
    v = cast(x._v, x.dtype)
    if x.dtype in D.REAL_FLOAT:
        v = P.convert_element_type(v, D.complex_dtype(x.dtype))
    return x, v


def _real_input(fname, x):
    x = as_array(x, fname)
    check_kind(fname, x.dtype, D.REAL_FLOAT, "a real floating-point")
    return x, cast(x._v, x.dtype)


def _check_n(fname, n, what="n"):
    n = as_int(n, fname, what)
    if n < 1:
        raise ValueError(f"{fname}: {what} must be at least 1, got {n}")
    return n


def _resize(v, axis, n, fname, arg):
    """Trim or zero-pad v along axis to length n (a length too large to hold: ValueError/MemoryError naming the
    caller and `arg`, the parameter that asked for it)."""
    shp = S.shape_of(v)
    size = shp[axis]
    if size == n:
        return v
    hi = list(shp)
    hi[axis] = n
    if size > n:
        return S.slice_(v, (0,) * len(shp), hi)
    check_size(ShapedArray(tuple(hi), S.dtype_of(v)), f"{fname} ({arg})")
    cfg = [(0, 0, 0)] * len(shp)
    cfg[axis] = (0, n - size, 0)
    return S.pad(v, P.convert_element_type(0, S.dtype_of(v)), cfg)


def _apply(v, axes, fft_type, lengths):
    """The primitive over `axes` (at most 3), moving them to the end and back."""
    nd = len(S.shape_of(v))
    rest = [i for i in range(nd) if i not in axes]
    perm = rest + list(axes)
    moved = S.transpose(v, perm)
    out = F.fft(moved, fft_type, lengths)
    return S.transpose(out, S.inverse_permutation(perm))


def _complex_nd(v, axes, fft_type):
    """FFT/IFFT over any number of axes, in groups of at most three."""
    shp = S.shape_of(v)
    axes = list(axes)
    while axes:
        group, axes = axes[-3:], axes[:-3]
        v = _apply(v, group, fft_type, tuple(shp[a] for a in group))
    return v


# ------------------------------------------------------------------------- 1-D transforms

def _axis_n(fname, x, n, axis, default=None):
    if x.ndim == 0:
        raise ValueError(f"{fname}: x must have at least one dimension")
    axis = normalize_axis(axis, x.ndim, fname)
    if n is None:
        n = x.shape[axis] if default is None else default(x.shape[axis])
    return axis, _check_n(fname, n)


def _c2c(fname, x, n, axis, norm, inverse):
    _check_norm(fname, norm)
    x, v = _complex_input(fname, x)
    axis, n = _axis_n(fname, x, n, axis)
    v = _resize(v, axis, n, fname, "n")
    out = _apply(v, [axis], "IFFT" if inverse else "FFT", (n,))
    return wrap(_scale(out, fname, norm, n, inverse))


@compiled
def fft(x, /, *, n=None, axis=-1, norm="backward"):
    """The one-dimensional discrete Fourier transform along axis.

    Parameters: x (Array): floating-point (a real x is taken as complex of its precision). n (int or None): the length
        transformed along axis (x is trimmed or zero-padded; None: its length). axis (int): the axis (default -1).
        norm (str): 'backward' (default: no scaling forward, 1/n inverse), 'ortho' (1/sqrt(n) both ways) or 'forward'
        (1/n forward, none inverse).
    Returns: Array: complex, of x's precision; x's shape with n along axis.
    Raises: TypeError: if x is not floating-point. ValueError: for 0-d x, n < 1 or an unknown norm. AxisError (an
        IndexError and a ValueError): for an axis out of range.

    >>> xp.fft.fft(xp.asarray([1.0, 2.0, 3.0, 4.0]))
    Array([10.+0.j, -2.+2.j, -2.+0.j, -2.-2.j], dtype=complex128)
    """
    return _c2c("fft", x, n, axis, norm, False)


@compiled
def ifft(x, /, *, n=None, axis=-1, norm="backward"):
    """The one-dimensional inverse discrete Fourier transform along axis.

    Parameters: x (Array): floating-point (a real x is taken as complex of its precision). n (int or None): the length
        transformed along axis (x is trimmed or zero-padded; None: its length). axis (int): the axis (default -1).
        norm (str): 'backward' (default: no scaling forward, 1/n inverse), 'ortho' (1/sqrt(n) both ways) or 'forward'
        (1/n forward, none inverse).
    Returns: Array: complex, of x's precision; x's shape with n along axis.
    Raises: TypeError: if x is not floating-point. ValueError: for 0-d x, n < 1 or an unknown norm. AxisError (an
        IndexError and a ValueError): for an axis out of range.

    >>> xp.fft.ifft(xp.asarray([10.0, -2 + 2j, -2.0, -2 - 2j]))
    Array([1.+0.j, 2.+0.j, 3.+0.j, 4.+0.j], dtype=complex128)
    """
    return _c2c("ifft", x, n, axis, norm, True)


def _rfft_raw(fname, x, v, n, axis, norm):
    v = _resize(v, axis, n, fname, "n")
    out = _apply(v, [axis], "RFFT", (n,))
    return _scale(out, fname, norm, n, False)


def _irfft_raw(fname, v, n, axis, norm):
    v = _resize(v, axis, n // 2 + 1, fname, "n")
    out = _apply(v, [axis], "IRFFT", (n,))
    return _scale(out, fname, norm, n, True)


@compiled
def rfft(x, /, *, n=None, axis=-1, norm="backward"):
    """The one-dimensional discrete Fourier transform of a real signal: the n // 2 + 1 non-negative frequencies.

    Parameters: x (Array): real floating-point. n (int or None): the length transformed along axis (x is trimmed or
        zero-padded; None: its length). axis (int): the axis (default -1). norm (str): 'backward' (default: no scaling
        forward, 1/n inverse), 'ortho' (1/sqrt(n) both ways) or 'forward' (1/n forward, none inverse).
    Returns: Array: complex, of x's precision; x's shape with n // 2 + 1 along axis.
    Raises: TypeError: if x is not real floating-point. ValueError: for 0-d x, n < 1 or an unknown norm. AxisError (an
        IndexError and a ValueError): for an axis out of range.

    >>> xp.fft.rfft(xp.asarray([1.0, 2.0, 3.0, 4.0]))
    Array([10.+0.j, -2.+2.j, -2.+0.j], dtype=complex128)
    """
    _check_norm("rfft", norm)
    x, v = _real_input("rfft", x)
    axis, n = _axis_n("rfft", x, n, axis)
    return wrap(_rfft_raw("rfft", x, v, n, axis, norm))


@compiled
def irfft(x, /, *, n=None, axis=-1, norm="backward"):
    """The inverse of rfft: a real signal of length n from its non-negative frequencies.

    Parameters: x (Array): floating-point, the n // 2 + 1 non-negative frequencies along axis. n (int or None): the
        output length along axis (None: 2 * (m - 1) for m input points). axis (int): the axis (default -1). norm
        (str): 'backward' (default: no scaling forward, 1/n inverse), 'ortho' (1/sqrt(n) both ways) or 'forward' (1/n
        forward, none inverse).
    Returns: Array: real, of x's precision; x's shape with n along axis.
    Raises: TypeError: if x is not floating-point. ValueError: for 0-d x, n < 1 or an unknown norm. AxisError (an
        IndexError and a ValueError): for an axis out of range.

    >>> xp.fft.irfft(xp.asarray([10.0, -2 + 2j, -2.0]))
    Array([1., 2., 3., 4.])
    """
    _check_norm("irfft", norm)
    x, v = _complex_input("irfft", x)
    axis, n = _axis_n("irfft", x, n, axis, default=lambda m: 2 * (m - 1))
    return wrap(_irfft_raw("irfft", v, n, axis, norm))


@compiled
def hfft(x, /, *, n=None, axis=-1, norm="backward"):
    """The FFT of a signal with Hermitian symmetry (given by its first half): a real spectrum.

    Parameters: x (Array): floating-point, the first half of the signal along axis. n (int or None): the output length
        along axis (None: 2 * (m - 1) for m input points). axis (int): the axis (default -1). norm (str): 'backward'
        (default: no scaling forward, 1/n inverse), 'ortho' (1/sqrt(n) both ways) or 'forward' (1/n forward, none
        inverse).
    Returns: Array: real, of x's precision; x's shape with n along axis.
    Raises: TypeError: if x is not floating-point. ValueError: for 0-d x, n < 1 or an unknown norm. AxisError (an
        IndexError and a ValueError): for an axis out of range.

    >>> xp.fft.hfft(xp.asarray([1.0, 2.0, 3.0]))
    Array([ 8., -2.,  0., -2.])
    """
    _check_norm("hfft", norm)
    x, v = _complex_input("hfft", x)
    axis, n = _axis_n("hfft", x, n, axis, default=lambda m: 2 * (m - 1))
    return wrap(_irfft_raw("hfft", bind(P.conj_p, v), n, axis, _SWAP[norm]))


@compiled
def ihfft(x, /, *, n=None, axis=-1, norm="backward"):
    """The inverse of hfft: the first half (n // 2 + 1 points) of the Hermitian signal whose FFT is the real x.

    Parameters: x (Array): real floating-point. n (int or None): the length transformed along axis (x is trimmed or
        zero-padded; None: its length). axis (int): the axis (default -1). norm (str): 'backward' (default: no scaling
        forward, 1/n inverse), 'ortho' (1/sqrt(n) both ways) or 'forward' (1/n forward, none inverse).
    Returns: Array: complex, of x's precision; x's shape with n // 2 + 1 along axis.
    Raises: TypeError: if x is not real floating-point. ValueError: for 0-d x, n < 1 or an unknown norm. AxisError (an
        IndexError and a ValueError): for an axis out of range.

    >>> xp.fft.ihfft(xp.asarray([1.0, 2.0, 3.0, 4.0]))[1]
    Array(-0.5-0.5j, dtype=complex128)
    """
    _check_norm("ihfft", norm)
    x, v = _real_input("ihfft", x)
    axis, n = _axis_n("ihfft", x, n, axis)
    return wrap(bind(P.conj_p, _rfft_raw("ihfft", x, v, n, axis, _SWAP[norm])))


# ------------------------------------------------------------------------- n-D transforms

def _axes_s(fname, x, s, axes, last_default=None):
    """Normalised (axes, lengths) for the n-D transforms."""
    if axes is None:
        if s is None:
            axes = tuple(range(x.ndim))
        else:
            s = tuple(s)
            if len(s) > x.ndim:
                raise ValueError(f"{fname}: s has {len(s)} entries but x has only {x.ndim} dimensions")
            axes = tuple(range(x.ndim - len(s), x.ndim))
    else:
        axes = (axes,) if is_int_like(axes) or not isinstance(axes, (tuple, list)) else tuple(axes)
        axes = tuple(normalize_axis(a, x.ndim, fname, "axes") for a in axes)
    if len(set(axes)) != len(axes):
        raise ValueError(f"{fname}: repeated axes in {axes}")
    if s is None:
        s = [x.shape[a] for a in axes]
        if last_default is not None and axes:
            s[-1] = last_default(x.shape[axes[-1]])
    else:
        s = list(s)
        if len(s) != len(axes):
            raise ValueError(f"{fname}: s and axes must have the same length, got {len(s)} and {len(axes)}")
        for i, (n, a) in enumerate(zip(s, axes)):
            if n == -1:
                s[i] = x.shape[a] if (last_default is None or i != len(s) - 1) else last_default(x.shape[a])
    return list(axes), [_check_n(fname, n, "s entries") for n in s]


def _c2cn(fname, x, s, axes, norm, inverse):
    _check_norm(fname, norm)
    x, v = _complex_input(fname, x)
    axes, s = _axes_s(fname, x, s, axes)
    if not axes:
        return wrap(v)
    for a, n in zip(axes, s):
        v = _resize(v, a, n, fname, "s")
    out = _complex_nd(v, axes, "IFFT" if inverse else "FFT")
    return wrap(_scale(out, fname, norm, math.prod(s), inverse))


@compiled
def fftn(x, /, *, s=None, axes=None, norm="backward"):
    """The n-dimensional discrete Fourier transform over the given axes.

    Parameters: x (Array): floating-point (a real x is taken as complex of its precision). s (sequence of int or
        None): the lengths transformed (x trimmed or zero-padded; None: x's). axes (sequence of int or None): the axes
        (None: the last len(s), or all). norm (str): 'backward' (default: no scaling forward, 1/n inverse), 'ortho'
        (1/sqrt(n) both ways) or 'forward' (1/n forward, none inverse).
    Returns: Array: complex, of x's precision; x's shape with s along axes.
    Raises: TypeError: if x is not floating-point. ValueError: for s and axes of different lengths, repeated axes, an
        s entry < 1 or an unknown norm. AxisError (an IndexError and a ValueError): for an axis out of range.

    >>> xp.fft.fftn(xp.asarray([[1.0, 2.0], [3.0, 4.0]]))
    Array([[10.+0.j, -2.+0.j],
           [-4.+0.j,  0.+0.j]], dtype=complex128)
    """
    return _c2cn("fftn", x, s, axes, norm, False)


@compiled
def ifftn(x, /, *, s=None, axes=None, norm="backward"):
    """The n-dimensional inverse discrete Fourier transform over the given axes.

    Parameters: x (Array): floating-point (a real x is taken as complex of its precision). s (sequence of int or
        None): the lengths transformed (x trimmed or zero-padded; None: x's). axes (sequence of int or None): the axes
        (None: the last len(s), or all). norm (str): 'backward' (default: no scaling forward, 1/n inverse), 'ortho'
        (1/sqrt(n) both ways) or 'forward' (1/n forward, none inverse).
    Returns: Array: complex, of x's precision; x's shape with s along axes.
    Raises: TypeError: if x is not floating-point. ValueError: for s and axes of different lengths, repeated axes, an
        s entry < 1 or an unknown norm. AxisError (an IndexError and a ValueError): for an axis out of range.

    >>> xp.fft.ifftn(xp.asarray([[10.0, -2.0], [-4.0, 0.0]]))
    Array([[1.+0.j, 2.+0.j],
           [3.+0.j, 4.+0.j]], dtype=complex128)
    """
    return _c2cn("ifftn", x, s, axes, norm, True)


@compiled
def rfftn(x, /, *, s=None, axes=None, norm="backward"):
    """The n-dimensional discrete Fourier transform of a real x: the last axis keeps s[-1] // 2 + 1 frequencies.

    Parameters: x (Array): real floating-point. s (sequence of int or None): the lengths transformed (x trimmed or
        zero-padded; None: x's). axes (sequence of int or None): the axes (None: the last len(s), or all). norm (str):
        'backward' (default: no scaling forward, 1/n inverse), 'ortho' (1/sqrt(n) both ways) or 'forward' (1/n
        forward, none inverse).
    Returns: Array: complex, of x's precision; x's shape with s along axes, s[-1] // 2 + 1 along the last.
    Raises: TypeError: if x is not real floating-point. ValueError: for s and axes of different lengths, repeated
        axes, an s entry < 1 or an unknown norm. AxisError (an IndexError and a ValueError): for an axis out of range.
        ValueError: also if no axis is transformed.

    >>> xp.fft.rfftn(xp.asarray([[1.0, 2.0], [3.0, 4.0]]))
    Array([[10.+0.j, -2.+0.j],
           [-4.+0.j,  0.+0.j]], dtype=complex128)
    """
    _check_norm("rfftn", norm)
    x, v = _real_input("rfftn", x)
    axes, s = _axes_s("rfftn", x, s, axes)
    if not axes:
        raise ValueError(f"rfftn: at least one axis must be transformed, got x of shape {x.shape} and axes {axes}")
    for a, n in zip(axes, s):
        v = _resize(v, a, n, "rfftn", "s")
    v = _apply(v, [axes[-1]], "RFFT", (s[-1],))
    v = _complex_nd(v, axes[:-1], "FFT")
    return wrap(_scale(v, "rfftn", norm, math.prod(s), False))


@compiled
def irfftn(x, /, *, s=None, axes=None, norm="backward"):
    """The inverse of rfftn: a real x of shape s over axes from its half spectrum.

    Parameters: x (Array): floating-point. s (sequence of int or None): the output lengths over axes (None: x's, the
        last 2 * (m - 1)). axes (sequence of int or None): the axes (None: the last len(s), or all). norm (str):
        'backward' (default: no scaling forward, 1/n inverse), 'ortho' (1/sqrt(n) both ways) or 'forward' (1/n
        forward, none inverse).
    Returns: Array: real, of x's precision; x's shape with s along axes.
    Raises: TypeError: if x is not floating-point. ValueError: for s and axes of different lengths, repeated axes, an
        s entry < 1 or an unknown norm. AxisError (an IndexError and a ValueError): for an axis out of range.
        ValueError: also if no axis is transformed.

    >>> xp.fft.irfftn(xp.asarray([[10.0, -2.0], [-4.0, 0.0]]), s=(2, 2))
    Array([[1., 2.],
           [3., 4.]])
    """
    _check_norm("irfftn", norm)
    x, v = _complex_input("irfftn", x)
    axes, s = _axes_s("irfftn", x, s, axes, last_default=lambda m: 2 * (m - 1))
    if not axes:
        raise ValueError(f"irfftn: at least one axis must be transformed, got x of shape {x.shape} and axes {axes}")
    for a, n in zip(axes[:-1], s[:-1]):
        v = _resize(v, a, n, "irfftn", "s")
    v = _resize(v, axes[-1], s[-1] // 2 + 1, "irfftn", "s")
    v = _complex_nd(v, axes[:-1], "IFFT")
    v = _apply(v, [axes[-1]], "IRFFT", (s[-1],))
    return wrap(_scale(v, "irfftn", norm, math.prod(s), True))


# ---------------------------------------------------------------------------- helpers

def _freq_dtype(fname, dtype, device):
    _check_device(device, fname)
    if dtype is None:
        return D.DEFAULT_FLOAT
    dtype = D.check_dtype(dtype, fname)
    check_kind(fname, dtype, D.REAL_FLOAT, "a real floating-point dtype;")
    return dtype


def _freq_d(fname, d):
    if isinstance(d, bool) or not isinstance(d, (int, float)):
        raise TypeError(f"{fname}: d must be a Python float, got {type(d).__name__}")
    if d == 0:
        raise ValueError(f"{fname}: d must be nonzero")
    return float(d)


def fftfreq(n, /, *, d=1.0, dtype=None, device=None):
    """The sample frequencies of fft for a window of length n: [0, 1, ..., -(n // 2), ..., -1] / (d * n).

    Parameters: n (int): the window length (>= 1). d (float): the sample spacing (default 1.0, nonzero). dtype (dtype
        or None): a real floating dtype (None: float64). device (Device or None): None or the one device.
    Returns: Array: 1-D, n frequencies.
    Raises: TypeError: for a non-int n, a d that is not an int or float, or a non-real-floating dtype.
        ValueError: for n < 1, d == 0 or an unknown device.

    >>> xp.fft.fftfreq(4)
    Array([ 0.  ,  0.25, -0.5 , -0.25])
    """
    n = _check_n("fftfreq", n)
    dt = _freq_dtype("fftfreq", dtype, device)
    check_size(ShapedArray((n,), np.dtype(np.int64)), "fftfreq (n)")   # (the int64 iota it is built from)
    d = _freq_d("fftfreq", d)
    k = S.iota(D.int64, (n,), 0)
    half = (n - 1) // 2 + 1
    shifted = P.select_n(bind(P.lt_p, k, P.convert_element_type(half, D.int64, True)),
                         P.sub(k, P.convert_element_type(n, D.int64, True)), k)
    v = P.convert_element_type(shifted, dt)
    return wrap(P.div(v, P.convert_element_type(n * d, dt, True)))


def rfftfreq(n, /, *, d=1.0, dtype=None, device=None):
    """The sample frequencies of rfft for a window of length n: [0, 1, ..., n // 2] / (d * n).

    Parameters: n (int): the window length (>= 1). d (float): the sample spacing (default 1.0, nonzero). dtype (dtype
        or None): a real floating dtype (None: float64). device (Device or None): None or the one device.
    Returns: Array: 1-D, n // 2 + 1 frequencies.
    Raises: TypeError: for a non-int n, a d that is not an int or float, or a non-real-floating dtype.
        ValueError: for n < 1, d == 0 or an unknown device.

    >>> xp.fft.rfftfreq(4)
    Array([0.  , 0.25, 0.5 ])
    """
    n = _check_n("rfftfreq", n)
    dt = _freq_dtype("rfftfreq", dtype, device)
    check_size(ShapedArray((n // 2 + 1,), np.dtype(np.int64)), "rfftfreq (n)")
    d = _freq_d("rfftfreq", d)
    v = P.convert_element_type(S.iota(D.int64, (n // 2 + 1,), 0), dt)
    return wrap(P.div(v, P.convert_element_type(n * d, dt, True)))


def _shift(fname, x, axes, sign):
    x = as_array(x, fname)
    if axes is None:
        axes = tuple(range(x.ndim))
    else:
        axes = (axes,) if is_int_like(axes) or not isinstance(axes, (tuple, list)) else tuple(axes)
        axes = tuple(normalize_axes(a, x.ndim, fname, "axes")[0] for a in axes)   # (strict: a 0-d x has none)
    if not axes:
        return x
    shifts = tuple(sign * (x.shape[a] // 2) for a in axes)
    return roll(x, shifts, axis=axes)


@compiled
def fftshift(x, /, *, axes=None):
    """x with the zero-frequency term moved to the centre: each axis rolled by half its length.

    Parameters: x (Array): the input. axes (int, sequence of int or None): the axes (None: all).
    Returns: Array: of x's shape and dtype.
    Raises: TypeError: if x is not an array or an axis not an int. AxisError (an IndexError and a ValueError): for an
        axis out of range.

    >>> xp.fft.fftshift(xp.fft.fftfreq(4))
    Array([-0.5 , -0.25,  0.  ,  0.25])
    """
    return _shift("fftshift", x, axes, 1)


@compiled
def ifftshift(x, /, *, axes=None):
    """The inverse of fftshift: each axis rolled back by half its length.

    Parameters: x (Array): the input. axes (int, sequence of int or None): the axes (None: all).
    Returns: Array: of x's shape and dtype.
    Raises: TypeError: if x is not an array or an axis not an int. AxisError (an IndexError and a ValueError): for an
        axis out of range.

    >>> xp.fft.ifftshift(xp.asarray([-2.0, -1.0, 0.0, 1.0]))
    Array([ 0.,  1., -2., -1.])
    """
    return _shift("ifftshift", x, axes, -1)
