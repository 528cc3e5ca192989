"""pickle, copy.copy and copy.deepcopy of Arrays (array_namespace/_pickle.py): dtype, shape, values and device
round trip, checked against NumPy; copies are independent of the original (NumPy's semantics)."""
import copy
import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import array_namespace as xp
import transforms as T
from transforms.core import ShapedArray

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64",
          "complex64", "complex128"]


def _numpy_value(dtype, shape):
    n = int(np.prod(shape))
    base = np.arange(n) - n // 2
    if dtype == "bool":
        return (base % 3 == 0).reshape(shape)
    if dtype.startswith("complex"):
        return (base * 0.5 + 1j * base[::-1]).astype(dtype).reshape(shape)
    if dtype.startswith("uint"):
        return np.abs(base).astype(dtype).reshape(shape)
    return (base * (0.25 if dtype.startswith("float") else 1)).astype(dtype).reshape(shape)


def _same(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape and a.device == b.device
    assert np.array_equal(np.asarray(a), np.asarray(b), equal_nan=np.asarray(a).dtype.kind in "fc")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (0,), (0, 3), (2, 3)])
def test_round_trip_every_dtype_and_shape(dtype, shape):
    ref = _numpy_value(dtype, shape)
    x = xp.asarray(ref)
    for protocol in (2, pickle.HIGHEST_PROTOCOL):
        y = pickle.loads(pickle.dumps(x, protocol=protocol))
        _same(x, y)
        assert y.dtype == getattr(xp, "bool" if dtype == "bool" else dtype)
        assert np.array_equal(np.asarray(y), ref)
    for c in (copy.copy(x), copy.deepcopy(x)):
        _same(x, c)


def test_special_float_values_keep_their_bits():
    ref = np.array([np.nan, -0.0, np.inf, -np.inf, 5e-324, 1.0])
    y = pickle.loads(pickle.dumps(xp.asarray(ref)))
    assert np.asarray(y).tobytes() == ref.tobytes()


def test_views_jit_and_random_outputs_round_trip():
    base = np.arange(24.0).reshape(4, 6)
    x = xp.asarray(base)
    cases = [
        (x[1:3, ::2], base[1:3, ::2]),
        (xp.permute_dims(x, (1, 0)), base.T),
        (xp.flip(x, axis=1), base[:, ::-1]),
        (T.jit(lambda v: xp.sin(v) * 2.0)(x), np.sin(base) * 2.0),
        (T.jit(lambda v: xp.sum(v, axis=0))(x), base.sum(0)),
    ]
    for arr, ref in cases:
        y = pickle.loads(pickle.dumps(arr))
        _same(arr, y)
        np.testing.assert_allclose(np.asarray(y), ref, rtol=1e-15)
    k = T.random.key(3)
    for r in (T.random.uniform(k, (5,)), T.random.normal(k, (2, 2)), k, T.random.split(k)):
        y = pickle.loads(pickle.dumps(r))
        _same(r, y)
    # a container holding one array twice keeps the sharing (pickle's and deepcopy's memo)
    a = xp.arange(3.0)
    for got in (pickle.loads(pickle.dumps([a, a])), copy.deepcopy([a, a])):
        assert got[0] is got[1] and got[0] is not a
        _same(got[0], a)


def test_the_aval_pickles():
    for aval in (ShapedArray((2, 3), np.float32, True), ShapedArray((), np.int64)):
        assert pickle.loads(pickle.dumps(aval)) == aval and copy.deepcopy(aval) == aval


def test_copies_are_independent_of_the_original():
    x = xp.arange(6.0)
    c = copy.copy(x)
    c[0] = 100.0
    x[1] = -1.0
    assert np.array_equal(np.asarray(x), [0.0, -1.0, 2.0, 3.0, 4.0, 5.0])
    assert np.array_equal(np.asarray(c), [100.0, 1.0, 2.0, 3.0, 4.0, 5.0])
    v = x[2:5]                      # a view: writes to it reach x, writes to its copy do not
    d = copy.deepcopy(v)
    d += 1000.0
    assert np.array_equal(np.asarray(x), [0.0, -1.0, 2.0, 3.0, 4.0, 5.0])
    assert np.array_equal(np.asarray(d), [1002.0, 1003.0, 1004.0])
    u = pickle.loads(pickle.dumps(v))
    u[0] = 7.0
    assert float(x[2]) == 2.0


def test_a_traced_array_raises_a_clear_error_and_copies_under_transforms():
    with pytest.raises(TypeError, match="pickle: cannot pickle a traced Array"):
        T.jit(lambda v: pickle.dumps(v))(xp.arange(2.0))
    with pytest.raises(TypeError, match="traced Array"):
        T.grad(lambda v: (pickle.dumps(v), xp.sum(v))[1])(xp.arange(2.0))
    assert np.array_equal(np.asarray(T.jit(lambda v: copy.copy(v) + 1.0)(xp.arange(2.0))), [1.0, 2.0])
    g = T.grad(lambda v: xp.sum(copy.deepcopy(v) ** 2))(xp.arange(3.0))
    assert np.array_equal(np.asarray(g), [0.0, 2.0, 4.0])
    vm = T.vmap(lambda v: copy.copy(v) * 2.0)(xp.reshape(xp.arange(4.0), (2, 2)))
    assert np.array_equal(np.asarray(vm), np.arange(4.0).reshape(2, 2) * 2)


def test_devices_round_trip_and_sharded_arrays_gather():
    # in a fresh process with two CPU devices: an array on device 1 unpickles on device 1; a pmap result (over
    # both devices) unpickles gathered on the default device; in a process with one device, device 1's array
    # raises a clear ValueError; Arrays cross a multiprocessing pool as arguments and results
    src = textwrap.dedent('''
        import pickle, copy, sys, numpy as np, multiprocessing as mp
        import array_namespace as xp, transforms as T
        d0, d1 = T.devices()
        a = T.device_put(xp.asarray([1.0, 2.0, 3.0]), d1)
        b = pickle.loads(pickle.dumps(a))
        assert b.device == d1 and np.array_equal(np.asarray(b), [1.0, 2.0, 3.0])
        c = copy.deepcopy(a)
        assert c.device == d1 and np.array_equal(np.asarray(c), [1.0, 2.0, 3.0])
        p = T.pmap(lambda v: v * 2.0)(xp.reshape(xp.arange(4.0), (2, 2)))
        q = pickle.loads(pickle.dumps(p))
        assert q.device == d0 and np.array_equal(np.asarray(q), np.arange(4.0).reshape(2, 2) * 2)
        def work(v):
            return v * 2.0 + 1.0
        pool = mp.get_context("fork").Pool(2)
        try:
            got = pool.map_async(work, [xp.arange(3.0), a]).get(timeout=120)
        finally:
            pool.terminate()
            pool.join()
        assert np.array_equal(np.asarray(got[0]), [1.0, 3.0, 5.0]) and np.array_equal(np.asarray(got[1]), [3.0, 5.0, 7.0])
        sys.stdout.buffer.write(pickle.dumps(a))
    ''')
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src"), ARRAY_NAMESPACE_CPU_DEVICES="2")
    p = subprocess.run([sys.executable, "-c", src], capture_output=True, timeout=240, env=env)
    assert p.returncode == 0, p.stderr.decode()
    if len(T.devices()) < 2:
        with pytest.raises(ValueError, match="saved on device 1"):
            pickle.loads(p.stdout)
    else:
        assert pickle.loads(p.stdout).device == T.devices()[1]
