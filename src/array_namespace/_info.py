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
        fixed-shape (xp.where) paths there instead of failing."""
        concrete = values_are_concrete()
        return {"boolean indexing": concrete, "data-dependent shapes": concrete, "max dimensions": 64}

    def default_device(self):
        return default_device()

    def devices(self):
        """A tuple, as the 2025.12 standard says (earlier versions: a list)."""
        return _Devices((default_device(),))

    def default_dtypes(self, *, device=None):
        return {"real floating": D.DEFAULT_FLOAT, "complex floating": D.DEFAULT_COMPLEX,
                "integral": D.DEFAULT_INT, "indexing": D.DEFAULT_INDEX}

    def dtypes(self, *, device=None, kind=None):
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
    return _Info()
