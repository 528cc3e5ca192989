"""The standard's dtypes (NumPy dtype objects), their categories and the promotion table.

Promotion follows the Array API standard exactly: within a kind only, with the
signed/unsigned integer rules; mixing kinds (bool with numbers, integers with floats)
raises TypeError. Python scalars (and weakly typed arrays) take the array's dtype if
their kind fits.
"""
from __future__ import annotations

import numpy as np

class DType:
    """A dtype of this namespace: equal only to the same dtype.

    A bare NumPy dtype would compare equal to None and to strings (np.dtype('float64') == None
    is True), which the standard's dtype objects must not. NumPy still accepts these objects
    wherever it takes a dtype (through the `dtype` attribute), and they hash like the NumPy
    dtype they wrap, so lookups keyed by NumPy dtypes (the engine's avals) find them.
    """
    __slots__ = ("_np", "name", "kind", "itemsize", "char", "type", "_hash")

    def __init__(self, np_dtype):
        d = np.dtype(np_dtype)
        self._np, self.name, self.kind, self.itemsize, self.char, self.type = d, d.name, d.kind, d.itemsize, \
            d.char, d.type
        self._hash = hash(d)

    @property
    def dtype(self):
        return self._np

    def __eq__(self, other):
        if other is self or other is self._np:   # (NumPy's builtin dtypes are one object each)
            return True
        t = type(other)
        if t is DType:
            return other._np == self._np
        if isinstance(other, np.dtype):
            return other == self._np
        if isinstance(other, type) and issubclass(other, np.generic):
            return np.dtype(other) == self._np
        return False

    def __hash__(self):
        return self._hash

    def __repr__(self):
        return f"array_namespace.{self.name}"

    def __str__(self):
        return self.name

    def __reduce__(self):
        return (DType, (self.name,))


bool_ = DType(np.bool_)
int8, int16, int32, int64 = (DType(t) for t in (np.int8, np.int16, np.int32, np.int64))
uint8, uint16, uint32, uint64 = (DType(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64))
float32, float64 = DType(np.float32), DType(np.float64)
complex64, complex128 = DType(np.complex64), DType(np.complex128)

ALL = (bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float32, float64, complex64, complex128)
# ordered tuples, for building tables
SIGNED_ORDER = (int8, int16, int32, int64)
UNSIGNED_ORDER = (uint8, uint16, uint32, uint64)
# categories are frozensets: `dtype in tuple` runs NumPy's slow dtype __eq__ per element
SIGNED = frozenset(SIGNED_ORDER)
UNSIGNED = frozenset(UNSIGNED_ORDER)
INTEGER = SIGNED | UNSIGNED
REAL_FLOAT = frozenset((float32, float64))
COMPLEX = frozenset((complex64, complex128))
FLOATING = REAL_FLOAT | COMPLEX
NUMERIC = INTEGER | FLOATING
REAL_NUMERIC = INTEGER | REAL_FLOAT
BOOL = frozenset((bool_,))
NUMERIC_OR_BOOL = NUMERIC | BOOL
REAL_NUMERIC_OR_BOOL = REAL_NUMERIC | BOOL
INTEGER_OR_BOOL = INTEGER | BOOL

DEFAULT_FLOAT, DEFAULT_INT, DEFAULT_COMPLEX, DEFAULT_INDEX = float64, int64, complex128, int64

CATEGORIES = {
    "bool": BOOL, "signed integer": SIGNED, "unsigned integer": UNSIGNED, "integral": INTEGER,
    "real floating": REAL_FLOAT, "complex floating": COMPLEX, "numeric": NUMERIC,
}


def _build_table():
    t = {}
    for a in ALL:
        t[a, a] = a
    for group in (SIGNED_ORDER, UNSIGNED_ORDER, (float32, float64), (complex64, complex128)):
        for i, a in enumerate(group):
            for b in group[i:]:
                t[a, b] = t[b, a] = b
    mixed = {uint8: (int16, int16, int32, int64), uint16: (int32, int32, int32, int64),
             uint32: (int64, int64, int64, int64)}
    for u, res in mixed.items():
        for s, r in zip(SIGNED_ORDER, res):
            t[u, s] = t[s, u] = r
    for f in (float32, float64):
        for c in (complex64, complex128):
            r = complex128 if (f == float64 or c == complex128) else complex64
            t[f, c] = t[c, f] = r
    return t


PROMOTION = _build_table()


_BY_NP = {d._np: d for d in ALL}


def of(np_dtype):
    """The namespace dtype object for a NumPy dtype (what Array.dtype reports)."""
    return _BY_NP[np_dtype]


def check_dtype(dtype, fname="function", arg="dtype"):
    """Canonicalise a dtype argument to this namespace's dtype object; TypeError otherwise.

    NumPy dtypes and scalar types are accepted too (they name the same dtypes)."""
    if type(dtype) is DType:
        return dtype
    if isinstance(dtype, np.dtype) or (isinstance(dtype, type) and issubclass(dtype, np.generic)):
        d = _BY_NP.get(np.dtype(dtype))
        if d is not None:
            return d
    raise TypeError(f"{fname}: {arg}={dtype!r} is not a dtype of this namespace; use one of "
                    f"{', '.join(d.name for d in ALL)}")


def promote(d1, d2, fname="function"):
    r = PROMOTION.get((d1, d2))
    if r is None:
        raise TypeError(f"{fname}: dtypes {d1.name} and {d2.name} cannot be combined; the standard does not "
                        f"promote between these kinds. Convert one explicitly with astype.")
    return r


def kind_name(dt):
    return ("bool" if dt == bool_ else "integer" if dt in INTEGER else "real floating" if dt in REAL_FLOAT
            else "complex floating")


def scalar_dtype_for(value, dtype, fname):
    """The result dtype of a Python scalar combined with an array of `dtype`, per the standard.

    It is the array's dtype, except that a complex scalar next to a real floating array gives
    the complex dtype of the array's precision (2024.12: float32 + 1j -> complex64)."""
    t = type(value)
    ok = _SCALAR_OK.get((t, type(dtype), dtype))
    if ok is not None:   # (a pair that passed before, with no per-value check)
        return ok
    if t is bool:
        if dtype != bool_:
            raise TypeError(f"{fname}: a Python bool can only be combined with a bool array, not {dtype.name}")
        return _scalar_ok(t, dtype, dtype)
    if t is int:
        if dtype == bool_:
            raise TypeError(f"{fname}: a Python int cannot be combined with a bool array")
        if dtype in INTEGER:   # (the value's bounds: checked every time)
            lo, hi = _INT_BOUNDS[dtype]
            if not lo <= value <= hi:
                raise OverflowError(f"{fname}: Python int {value} is out of bounds for {dtype.name}")
            return dtype
        return _scalar_ok(t, dtype, dtype)
    if t is float:
        if dtype not in FLOATING:
            raise TypeError(f"{fname}: a Python float cannot be combined with an array of dtype {dtype.name}; "
                            "convert the array with astype first")
        return _scalar_ok(t, dtype, dtype)
    if t is complex:
        if dtype in REAL_FLOAT:
            return _scalar_ok(t, dtype, complex_dtype(dtype))
        if dtype not in COMPLEX:
            raise TypeError(f"{fname}: a Python complex can only be combined with a floating-point array, "
                            f"not {dtype.name}; convert the array with astype first")
        return _scalar_ok(t, dtype, dtype)
    raise TypeError(f"{fname}: expected an array or a Python scalar, got {t.__name__}")


# (Python scalar type, dtype's type, array dtype) -> result dtype, for the pairs without a per-value check. The
# dtype's type is part of the key: a NumPy dtype equals the namespace dtype of its name, and each caller gets
# back the kind it gave (xp.result_type returns namespace dtypes; the engine's callers pass NumPy's).
_SCALAR_OK: dict = {}
_INT_BOUNDS = {d: (int(np.iinfo(d._np).min), int(np.iinfo(d._np).max)) for d in INTEGER}   # (np.iinfo: ~1 us a call)
_INT_BOUNDS.update({d._np: b for d, b in list(_INT_BOUNDS.items())})   # (keyed by NumPy dtypes too)


def _scalar_ok(t, dtype, out):
    if len(_SCALAR_OK) < 256:
        _SCALAR_OK[(t, type(dtype), dtype)] = out
    return out


def default_dtype_of_scalar(value):
    t = type(value)
    if t is bool:
        return bool_
    if t is int:
        return DEFAULT_INT
    if t is float:
        return DEFAULT_FLOAT
    if t is complex:
        return DEFAULT_COMPLEX
    raise TypeError(f"expected a Python scalar, got {t.__name__}")


def real_dtype(dt):
    return float32 if dt == complex64 else float64 if dt == complex128 else dt


def complex_dtype(dt):
    return complex64 if dt == float32 else complex128
