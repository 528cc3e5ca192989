"""xla/pmap_runtime.py on 4 CPU devices (run by test_pmap_runtime.py with ARRAY_NAMESPACE_CPU_DEVICES=4)."""
import numpy as np
import pytest

import array_namespace as xp
import transforms
from transforms import jit, pmap, psum
from xla import _jaxlib, pmap_runtime

N = 4


def test_one_program_per_body_and_devices():
    f = pmap(lambda a: a * 2.0 + psum(a, "i"), "i")
    x = xp.asarray(np.arange(12.0).reshape(N, 3))
    before = pmap_runtime.compile_count[0]
    outs = [np.asarray(f(x)) for _ in range(3)]
    assert pmap_runtime.compile_count[0] == before + 1
    for o in outs:
        np.testing.assert_allclose(o, 2 * np.arange(12.0).reshape(N, 3) + np.arange(12.0).reshape(N, 3).sum(0))
    g = pmap(lambda a: a * 2.0 + psum(a, "i"), "i", devices=transforms.devices()[::-1])
    np.testing.assert_allclose(np.asarray(g(x)), outs[0])   # other devices: another program, same values
    assert pmap_runtime.compile_count[0] == before + 2
    assert [d.id for d in g(x)._v._sharding.devices] == [3, 2, 1, 0]


def test_shards_lie_on_their_devices_with_their_blocks():
    x = np.arange(8.0).reshape(N, 2)
    out = pmap(lambda a: a + 1.0)(xp.asarray(x))._v
    shards = _jaxlib.shards(out)
    assert [_jaxlib.device_of(s).id for s in shards] == [0, 1, 2, 3]
    for k, s in enumerate(shards):
        np.testing.assert_array_equal(np.asarray(s), x[k:k + 1] + 1)   # each buffer is exactly its block


@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "int32", "uint8", "bool", "complex64"])
def test_gather_every_dtype(dtype):
    x = (np.arange(N * 3).reshape(N, 3) * 7 % 5).astype(dtype)
    out = pmap(lambda v: v)(xp.asarray(x))
    got = np.asarray(out)
    assert got.dtype == np.dtype(dtype) and got.shape == (N, 3)
    np.testing.assert_array_equal(got, x)


def test_replicated_results_are_single_device_values():
    out = pmap(lambda a: psum(a, "i"), "i", out_axes=None)(xp.asarray(np.ones((N, 2))))
    assert out.shape == (2,)
    np.testing.assert_array_equal(np.asarray(out), [4.0, 4.0])
    np.testing.assert_array_equal(np.asarray(jit(lambda v: v * 2)(out)), [8.0, 8.0])   # any consumer takes it


def test_no_jax_import():
    import sys
    np.asarray(pmap(lambda a: a)(xp.asarray(np.ones((N, 2)))))
    assert "jax" not in sys.modules   # reading shards must not import the jax package


def test_sharding_and_addressable_shards():
    from transforms.devices import Sharding
    x = np.arange(8.0).reshape(N, 2)
    out = pmap(lambda a: a * 10.0)(xp.asarray(x))
    devs = tuple(transforms.devices())
    assert out.sharding == Sharding(devs, True)
    shards = out.addressable_shards
    assert [s.device for s in shards] == list(devs) and [s.index for s in shards] == [0, 1, 2, 3]
    for k, s in enumerate(shards):
        assert type(s.data) is xp.Array and s.data.shape == (1, 2)
        np.testing.assert_array_equal(np.asarray(s.data), 10 * x[k:k + 1])
        np.testing.assert_array_equal(np.asarray(s.data + 1.0), 10 * x[k:k + 1] + 1)   # an ordinary array
    plain = xp.asarray(x)
    assert plain.sharding == Sharding(devs[:1], False) and len(plain.addressable_shards) == 1
    assert "split along axis 0" in repr(out.sharding)
