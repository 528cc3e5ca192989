"""result_type with Python (and NumPy) scalars: array_api_strict's rules.

scipy's array-API tests expect strict's errors: ValueError when no array or dtype is given
(only scalars), TypeError for kinds that do not combine, OverflowError for ints out of range.
"""
import numpy as np
import pytest

import array_namespace as xp

SCALARS = (True, 1, -1, 300, 1.5, 1j, 2 ** 70)
# array_api_strict 2.6 (standard 2025.12) answers, row per dtype, one entry per scalar above:
# a dtype name, or the exception it raises
_T, _O = TypeError, OverflowError
STRICT = {
    "bool": ("bool", _T, _T, _T, _T, _T, _T),
    "int8": (_T, "int8", "int8", _O, _T, _T, _O),
    "int64": (_T, "int64", "int64", "int64", _T, _T, _O),
    "uint8": (_T, "uint8", _O, _O, _T, _T, _O),
    "float32": (_T, "float32", "float32", "float32", "float32", "complex64", "float32"),
    "float64": (_T, "float64", "float64", "float64", "float64", "complex128", "float64"),
    "complex64": (_T,) + ("complex64",) * 6,
    "complex128": (_T,) + ("complex128",) * 6,
}
CASES = [(d, s, want) for d, row in STRICT.items() for s, want in zip(SCALARS, row)]


@pytest.mark.parametrize("args", [(1, 2.0), (1,), (2.0,), (True, 1), (1j,), (1, 2.0, 3j), ()])
def test_scalars_only_is_a_value_error_as_strict(args):
    with pytest.raises(ValueError, match="result_type"):
        xp.result_type(*args)


@pytest.mark.parametrize("dname,scalar,want", CASES)
def test_dtype_with_scalar_matches_strict(dname, scalar, want):
    dt = getattr(xp, dname)
    if isinstance(want, type):
        for args in ((dt, scalar), (scalar, dt), (xp.ones(1, dtype=dt), scalar)):
            with pytest.raises(want):
                xp.result_type(*args)
        return
    assert xp.result_type(dt, scalar).name == want
    assert xp.result_type(scalar, dt).name == want                   # order does not matter
    assert xp.result_type(xp.ones(1, dtype=dt), scalar).name == want  # an array behaves as its dtype


def test_result_type_agrees_with_binary_functions():
    for dname, scalar, _ in CASES:
        x = xp.ones(2, dtype=getattr(xp, dname))
        try:
            got = xp.result_type(x, scalar)
        except (TypeError, OverflowError) as e:
            with pytest.raises(type(e)):
                xp.equal(x, scalar)
            continue
        assert xp.where(x == x, x, scalar).dtype == got


def test_numpy_scalars_are_weak_in_result_type():
    assert xp.result_type(xp.float32, np.float64(1.0)) == xp.float32
    assert xp.result_type(xp.int8, np.int64(3)) == xp.int8
    assert xp.result_type(xp.float32, np.complex128(1j)) == xp.complex64
    assert xp.result_type(np.float32, 1.0) == xp.float32   # a NumPy scalar *type* is a dtype
    with pytest.raises(ValueError):
        xp.result_type(np.float64(1.0), 2)
    with pytest.raises(TypeError):
        xp.result_type(xp.int32, np.float64(1.5))


def test_non_dtype_arguments_are_type_errors():
    for bad in ("float64", None, [1, 2]):
        with pytest.raises(TypeError, match="result_type"):
            xp.result_type(xp.float64, bad)
