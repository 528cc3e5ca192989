"""transforms.random_args: the argument checks every `transforms.random` sampler shares (each sampler's own
errors are tested in test_random.py and test_random_dists.py)."""
import numpy as np
import pytest

import array_namespace as xp
from transforms import random
from transforms.random_args import _bound, _float_dtype, _int_dtype, _key_raw, _shape, is_key


def test_shape():
    assert _shape(3, "f") == (3,) and _shape((2, np.int64(4)), "f") == (2, 4) and _shape((), "f") == ()
    for bad in ((-1,), (2.0,), (True,), "ab"):
        with pytest.raises(TypeError, match="f: shape"):
            _shape(bad, "f")
    with pytest.raises(TypeError, match="f: shape must be an int or a tuple"):
        _shape(None, "f")


def test_dtypes():
    assert _float_dtype(None, "f") == np.float64 and _float_dtype(xp.float32, "f") == np.float32
    with pytest.raises(TypeError, match="f: dtype must be float32 or float64, got int32"):
        _float_dtype(np.int32, "f")
    assert _int_dtype(np.uint8, "f") == np.uint8
    with pytest.raises(TypeError, match="f: dtype must be an integer dtype, got float64"):
        _int_dtype(np.float64, "f")


def test_keys():
    k = random.key(3)
    assert is_key(k) and not is_key(random.split(k, 2)) and not is_key(np.zeros(2, np.uint32))
    assert _key_raw(k, "f") is not None
    with pytest.raises(TypeError, match="f: expected a PRNG key.*batch of keys"):
        _key_raw(random.split(k, 2), "f")
    with pytest.raises(TypeError, match="f: expected a PRNG key"):
        _key_raw([0, 1], "f")


def test_bound():
    assert np.asarray(_bound(2, np.dtype(np.float32), (3,), "f", "x")).dtype == np.float32
    with pytest.raises(TypeError, match="f: x must be a number, got bool"):
        _bound(True, np.dtype(np.float64), (), "f", "x")
    with pytest.raises(TypeError, match="f: x must be a real number or array, got bool"):
        _bound(xp.asarray([True]), np.dtype(np.float64), (1,), "f", "x")
    with pytest.raises(ValueError, match=r"f: x of shape \(2,\) does not broadcast to shape \(3,\)"):
        _bound(xp.asarray([1.0, 2.0]), np.dtype(np.float64), (3,), "f", "x")
