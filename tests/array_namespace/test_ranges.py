"""_ranges.py: arange, linspace and eye of plain Python arguments keep the small values they made (_plans.MADE); a
repeated eager call gives what the first gave, bit for bit, and that equals NumPy (and jit); arguments equal as
dict keys but not as calls (True/1, 1/1.0, -0.0/0.0) keep their own values; refusals are unchanged once a
look-alike call was kept; each call's array owns its value; large results are not kept. (The functions' values
and errors in general: test_creation.py and the official suite.)"""
import numpy as np
import pytest

import array_namespace as xp
from array_namespace import _plans as PL
from transforms import jit
from test_plans import _bits_equal, _error   # (the bit-for-bit and error comparisons of the kept plans)


# arange, linspace and eye of static arguments keep the values they made (small results): a repeated call is a copy
RANGE_CASES = [
    (lambda m: m.arange(10), None),
    (lambda m: m.arange(1.0, 2.0, 0.25), None),
    (lambda m: m.arange(5, dtype=m.float32), None),
    (lambda m: m.arange(0.0, 1.0, 0.5), None),
    (lambda m: m.arange(10, 0, -3, dtype=m.int16), None),
    (lambda m: m.eye(3), None),
    (lambda m: m.eye(2, 4, k=1, dtype=m.int32), None),
    (lambda m: m.eye(3, k=-1, dtype=m.complex64), None),
    (lambda m: m.linspace(0, 1, 5), None),
    (lambda m: m.linspace(1.0, -0.0, 3), None),
    (lambda m: m.linspace(0.0, 1.0, 4, endpoint=False), None),
    (lambda m: m.linspace(2, 7, 6, dtype=m.float32), None),
    (lambda m: m.linspace(0, 10, 4, dtype=m.int32), None),
    (lambda m: m.linspace(1j, 2 + 1j, 3), None),
    (lambda m: m.linspace(-1, 1, 6, dtype=m.float32), None),       # (float32 arithmetic: -0.19999999, 0.20000005)
    (lambda m: m.linspace(0.001, 10.0, 8, dtype=m.float32), None),
    (lambda m: m.linspace(0.3, -2.5, 8, dtype=m.complex64), None),
    (lambda m: m.linspace(1e300, 0.0, 3, dtype=m.float32), None),  # (inf, inf, 0: float32 arithmetic made NaN)
]


@pytest.mark.parametrize("i", range(len(RANGE_CASES)))
def test_arange_linspace_eye_repeated_and_jitted_equal_numpy(i):
    call, tol = RANGE_CASES[i]
    want = call(np)
    PL.MADE.clear()
    first = call(xp)
    assert PL.MADE   # (kept, small)
    for _ in range(2):
        got = call(xp)
        _bits_equal(got, first)   # a kept call gives what the first call made, bit for bit
    if tol is None:
        _bits_equal(first, want)
    else:
        assert np.asarray(first).dtype == want.dtype
        np.testing.assert_allclose(np.asarray(first), want, rtol=tol, atol=tol)
        if want.dtype.kind == "f":
            np.testing.assert_array_equal(np.signbit(np.asarray(first)[:1]), np.signbit(want[:1]))
    _bits_equal(jit(lambda: call(xp))(), first)


def test_range_creations_keep_their_arguments_apart():
    """Arguments equal as dict keys but not as calls (True/1, 1/1.0, -0.0/0.0, int/float bounds) get their own
    values: dtypes and signs as the call asks."""
    PL.MADE.clear()
    assert np.asarray(xp.arange(3)).dtype == np.int64
    assert np.asarray(xp.arange(3.0)).dtype == np.float64
    assert np.asarray(xp.arange(3)).dtype == np.int64
    assert np.signbit(np.asarray(xp.linspace(1.0, -0.0, 2))[-1])   # (the endpoint is stop itself)
    assert not np.signbit(np.asarray(xp.linspace(1.0, 0.0, 2))[-1])
    assert np.signbit(np.asarray(xp.linspace(1.0, -0.0, 2))[-1])
    assert np.asarray(xp.linspace(0, 1, 3, endpoint=False)).tolist() == [0.0, 1 / 3, 2 / 3]
    assert np.asarray(xp.linspace(0, 1, 3)).tolist() == [0.0, 0.5, 1.0]
    assert np.asarray(xp.eye(2, dtype=xp.float32)).dtype == np.float32
    assert np.asarray(xp.eye(2)).dtype == np.float64


def test_range_creation_refusals_unchanged_after_lookalikes():
    PL.MADE.clear()
    bad = [lambda: xp.arange(True), lambda: xp.arange(0, 1, 0), lambda: xp.arange(0.0, float("nan")),
           lambda: xp.arange(3, dtype=xp.bool), lambda: xp.arange(1j), lambda: xp.arange(3, device="gpu:7"),
           lambda: xp.linspace(0, 1, -1), lambda: xp.linspace(0, 1, 2.0), lambda: xp.linspace(0, 1, True),
           lambda: xp.linspace(1j, 2, 3, dtype=xp.float64), lambda: xp.eye(True), lambda: xp.eye(2.0),
           lambda: xp.eye(-1), lambda: xp.eye(2, k=1.0), lambda: xp.eye(2, dtype="float64")]
    before = [_error(f) for f in bad]
    assert all(b is not None for b in before)
    for _ in range(2):
        xp.arange(1), xp.arange(0, 1, 1), xp.arange(0.0, 1.0), xp.arange(3, dtype=xp.int64)
        xp.linspace(0, 1, 1), xp.linspace(0, 1, 2), xp.eye(1), xp.eye(2), xp.eye(2, k=1)
        assert [_error(f) for f in bad] == before


def test_each_range_creation_owns_its_value():
    a, b = xp.arange(4.0), xp.arange(4.0)
    a[0] = 7.0
    assert np.asarray(b).tolist() == [0.0, 1.0, 2.0, 3.0]
    assert np.asarray(xp.arange(4.0)).tolist() == [0.0, 1.0, 2.0, 3.0]
    e = xp.eye(2)
    e[0, 1] = 5.0
    assert np.asarray(xp.eye(2)).tolist() == [[1.0, 0.0], [0.0, 1.0]]


def test_large_range_creations_are_not_kept():
    PL.MADE.clear()
    xp.arange(PL.MADE_MAX_ELEMENTS + 1)
    xp.eye(17)
    xp.linspace(0, 1, PL.MADE_MAX_ELEMENTS + 1)
    assert len(PL.MADE) == 0


@pytest.mark.parametrize("args", [(0.3, 2.0, 0.1), (-2.5, 7.0, 0.01), (100.7, 0.0, -0.3), (1e-3, 5.0, 1.7),
                                  (-1.0, 1.0, 2.0 ** -17)])
def test_single_precision_arange_is_computed_in_double_and_rounded_once(args):
    """float32 (complex64) arange is start + i * step in float64, rounded once to the dtype, as linspace: float32
    arithmetic rounded the product and the sum apart, so a quarter of the values were an ulp or more off (NumPy's
    own float32 arange: half). Eagerly (the last case has 2**18 values: past the host-filled sizes) and under jit,
    where XLA may fuse the multiply-add (docs/coming-from-jax.md): at most a float64 ulp of the terms apart."""
    start, stop, step = args
    i = np.arange(len(np.arange(start, stop, step)))
    want = (start + i * step).astype(np.float32)
    np.testing.assert_array_equal(np.asarray(xp.arange(start, stop, step, dtype=xp.float32)), want)
    np.testing.assert_array_equal(np.asarray(xp.arange(start, stop, step, dtype=xp.complex64)),
                                  want.astype(np.complex64))
    got = np.asarray(jit(lambda: xp.arange(start, stop, step, dtype=xp.float32))())
    fused = np.abs(got.astype(np.float64) - (start + i * step))
    assert (fused <= np.spacing(np.float32(np.abs(start + i * step))) / 2 + 4e-16 * (abs(start) + np.abs(i * step))).all()
