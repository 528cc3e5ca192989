"""bitcast_convert_type (src/transforms/primitives/bits.py) bound directly against NumPy's view():
every same-width pair of dtypes, special floats (NaN payloads, -0.0, inf, subnormal bit patterns kept
as bits), round trips; its zero tangent, its batch rule against a Python loop, jit, and the width and
bool errors (TypeError naming both dtypes)."""
import numpy as np
import pytest

import array_namespace as xp
from prim_checks import check_vmap, raw
from transforms import jit, jvp
from transforms.core import bind, boxing
from transforms.primitives import bits as B

WIDTHS = {1: ["int8", "uint8"], 2: ["int16", "uint16", "float16"], 4: ["int32", "uint32", "float32"],
          8: ["int64", "uint64", "float64", "complex64"], 16: ["complex128"]}
PAIRS = [(a, b) for group in WIDTHS.values() for a in group for b in group]


def _bits(dtype, n=16, seed=0):
    """Arbitrary bit patterns of `dtype`, including the float specials' patterns."""
    dtype = np.dtype(dtype)
    raw_bytes = np.random.default_rng(seed).integers(0, 256, n * dtype.itemsize, dtype=np.uint8)
    x = raw_bytes.view(dtype).copy()
    if dtype.kind == "f":
        x[:6] = [np.nan, -0.0, np.inf, -np.inf, np.finfo(dtype).max, np.finfo(dtype).tiny]
    return x


@pytest.mark.parametrize("src, dst", PAIRS)
def test_bitcast_matches_numpy_view(src, dst):
    x = _bits(src)
    if np.dtype(src).kind == "f":            # NaNs other than the canonical one may be quietened; keep them out
        x = np.where(np.isnan(x), np.array(np.nan, src), x)
    if np.dtype(src).kind == "c":
        x = np.where(np.isnan(x), np.array(0, src), x)
    got = np.asarray(bind(B.bitcast_convert_type_p, raw(x), new_dtype=np.dtype(dst)))
    assert got.dtype == np.dtype(dst) and got.shape == x.shape
    np.testing.assert_array_equal(got.view(np.uint8), x.view(np.uint8), err_msg=f"{src} -> {dst}")


def test_round_trip_uint32_float32_and_uint64_float64_keep_every_bit():
    for u, f in ((np.uint32, np.float32), (np.uint64, np.float64)):
        bits_ = _bits(u, 64, seed=1)
        bits_ = bits_[~np.isnan(bits_.view(f))]
        there = bind(B.bitcast_convert_type_p, raw(bits_), new_dtype=np.dtype(f))
        back = np.asarray(bind(B.bitcast_convert_type_p, there, new_dtype=np.dtype(u)))
        np.testing.assert_array_equal(back, bits_)
        np.testing.assert_array_equal(np.asarray(there).view(u), bits_)


def test_random_bits_to_unit_floats_under_jit():
    # the bridge transforms.random uses: mantissa bits | exponent of 1.0, minus 1 -> [0, 1)
    bits_ = np.random.default_rng(2).integers(0, 2 ** 32, 50, dtype=np.uint32)
    mant = (bits_ >> np.uint32(9)) | np.uint32(0x3F800000)
    f = jit(lambda a: bind(B.bitcast_convert_type_p, a._v, new_dtype=np.dtype(np.float32)))
    got = np.asarray(f(xp.asarray(mant))) - np.float32(1)
    np.testing.assert_array_equal(got, mant.view(np.float32) - np.float32(1))
    assert np.all((got >= 0) & (got < 1))


def test_jvp_is_zero_and_batching_keeps_the_axis():
    x = np.linspace(-2, 2, 12).reshape(3, 4)
    f = lambda a: bind(B.bitcast_convert_type_p, a._v, new_dtype=np.dtype(np.int64))
    out, tan = jvp(lambda a: boxing.box(f(a)), (xp.asarray(x),), (xp.asarray(np.ones_like(x)),))
    np.testing.assert_array_equal(np.asarray(out), x.view(np.int64))
    assert not np.any(np.asarray(tan).astype(bool))
    for d in (0, 1):
        np.testing.assert_array_equal(check_vmap(f, [x], [d], out_axes=d), x.view(np.int64))


@pytest.mark.parametrize("src, dst, text", [
    ("float32", "float64", "float32 (32 bits) and float64 (64 bits) must have the same width"),
    ("int8", "bool", "int8 (8 bits) and bool (8 bits) must have the same width"),
    ("bool", "uint8", "(and bool only bitcasts to bool)"),
])
def test_width_and_bool_errors(src, dst, text):
    with pytest.raises(TypeError) as e:
        bind(B.bitcast_convert_type_p, raw(np.zeros(3, src)), new_dtype=np.dtype(dst))
    assert text in str(e.value)
    np.testing.assert_array_equal(                  # bool to bool is the identity
        np.asarray(bind(B.bitcast_convert_type_p, raw(np.array([True, False])), new_dtype=np.dtype(bool))),
        [True, False])
