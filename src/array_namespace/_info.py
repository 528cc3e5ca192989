"""Inspection: __array_namespace_info__() (https://data-apis.org/array-api/latest/API_specification/inspection.html)."""
from __future__ import annotations

from transforms.core import values_are_concrete

from . import _dtypes as D
from ._array import default_device


class _Devices(tuple):
    """A tuple (the 2025.12 standard) that still concatenates with a list, as code written against
    earlier versions does (scipy 1.17's conftest: `devices() + [None]`)."""
    __slots__ = ()

    def __add__(self, other):
        if isinstance(other, list):
            return list(self) + other
        return tuple.__add__(self, other)


class _Info:
    """What this namespace supports: capabilities, devices and dtypes."""

    def capabilities(self):
        """Boolean-mask reads and data-dependent shapes need concrete values: true eagerly and under
        grad, false while jit or vmap traces (as JAX reports), so array-API libraries take their
        fixed-shape (xp.where) paths there instead of failing.

        Returns: dict: {"boolean indexing": bool, "data-dependent shapes": bool, "max dimensions": 64}.
        Raises: none.

        >>> xp.__array_namespace_info__().capabilities()
        {'boolean indexing': True, 'data-dependent shapes': True, 'max dimensions': 64}
        """
        concrete = values_are_concrete()
        return {"boolean indexing": concrete, "data-dependent shapes": concrete, "max dimensions": 64}

    def default_device(self):
        """The device arrays are created on when no device is given.

        Returns: Device: the namespace's one device.
        Raises: none.

        >>> xp.__array_namespace_info__().default_device() == xp.asarray([1.0]).device
        True
        """
        return default_device()

    def devices(self):
        """A tuple, as the 2025.12 standard says (earlier versions: a list).

        Returns: tuple of Device: the devices arrays may live on (one here); `devices() + [None]` still gives a list.
        Raises: none.

        >>> len(xp.__array_namespace_info__().devices())
        1
        """
        return _Devices((default_device(),))

    def default_dtypes(self, *, device=None):
        """The default dtypes: of Python floats, complex numbers, ints, and of indices.

        Parameters: device (Device or None): accepted for the standard's signature (one device).
        Returns: dict: {"real floating": float64, "complex floating": complex128, "integral": int64, "indexing":
            int64}.
        Raises: none.

        >>> xp.__array_namespace_info__().default_dtypes()["real floating"]
        array_namespace.float64
        """
        return {"real floating": D.DEFAULT_FLOAT, "complex floating": D.DEFAULT_COMPLEX,
                "integral": D.DEFAULT_INT, "indexing": D.DEFAULT_INDEX}

    def dtypes(self, *, device=None, kind=None):
        """The dtypes the namespace supports, by name, optionally of given kinds.

        Parameters: device (Device or None): accepted for the standard's signature. kind (str, tuple of str or None):
            a category ('bool', 'signed integer', 'unsigned integer', 'integral', 'real floating', 'complex floating',
            'numeric') or several (their union); None: all.
        Returns: dict: dtype name -> dtype.
        Raises: ValueError: for an unknown kind.

        >>> sorted(xp.__array_namespace_info__().dtypes(kind="real floating"))
        ['float32', 'float64']
        """
        if kind is None:
            return {d.name: d for d in D.ALL}
        kinds = kind if isinstance(kind, tuple) else (kind,)
        out = {}
        for k in kinds:
            if k not in D.CATEGORIES:
                raise ValueError(f"dtypes: unknown kind {k!r}")
            out.update({d.name: d for d in D.CATEGORIES[k]})
        return out


def __array_namespace_info__():
    """The inspection API of the standard: what this namespace supports.

    Returns: an object with capabilities(), default_device(), devices(), default_dtypes() and dtypes().
    Raises: none.

    >>> info = xp.__array_namespace_info__()
    >>> info.capabilities()["max dimensions"], sorted(info.dtypes(kind="bool"))
    (64, ['bool'])
    """
    return _Info()
