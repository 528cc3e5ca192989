"""array_namespace/special/_promote.py: scipy's ufunc promotion for xp.special -- integers and bools to
float64, float32 kept, Python scalars weak, mixed float32/float64 to float64 -- checked on raw_floats
itself and through xp.special.gammaln against scipy's output dtypes and values; complex and non-numeric
arguments are TypeErrors naming the function and the argument."""
import numpy as np
import pytest
import scipy.special as sc

import array_namespace as xp
from array_namespace.special._promote import raw_floats


@pytest.mark.parametrize("args, want", [
    ((np.array([1, 2], np.int32),), np.float64), ((np.array([True]),), np.float64),
    ((np.array([1.0], np.float32),), np.float32), ((np.array([1.0], np.float32), 2.5), np.float32),
    ((np.array([1.0], np.float32), np.array([2.0])), np.float64), ((np.array([1], np.int8), 0.5), np.float64),
    ((np.array([1.0], np.float32), np.array([2], np.int16)), np.float64),
])
def test_dtype_follows_scipy(args, want):
    arrs = [xp.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
    raws, dt = raw_floats("f", [f"x{i}" for i in range(len(args))], arrs)
    assert dt == want and [xp.asarray(r).dtype for r in map(_box, raws)] == [want] * len(args)
    if all(isinstance(a, np.ndarray) for a in args):   # arrays only: scipy's own ufunc promotion agrees
        assert sc.beta(*args).dtype == want if len(args) == 2 else sc.gammaln(*args).dtype == want


def _box(r):
    from transforms.core import boxing
    return boxing.box(r)


def test_through_a_special_function_against_scipy():
    for a in (np.array([1, 5, 10], np.int64), np.array([True, False]), np.array([0.5, 3.5], np.float32)):
        got = xp.special.gammaln(xp.asarray(a))
        want = sc.gammaln(a)
        assert np.asarray(got).dtype == want.dtype
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6 if a.dtype == np.float32 else 1e-14)


@pytest.mark.parametrize("bad, match", [
    (xp.asarray(np.array([1 + 1j])), "f: x must be a real .* got complex128; complex input is not supported"),
    (1j, "f: x must be real, got a complex scalar"),
    ("a", "f: x must be an array or a real Python scalar, got str"),
])
def test_errors_name_the_argument(bad, match):
    with pytest.raises(TypeError, match=match):
        raw_floats("f", ["x"], [bad])
