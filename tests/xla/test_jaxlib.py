"""xla/_jaxlib.py: the wrappers around jaxlib's private API behave as the runtime relies on: the
version pin, one client, cached shardings, device_put/to_numpy/DLPack round trips per dtype, module
text without locations, and an executable that survives serialisation with the same results."""
import numpy as np
import pytest

import array_namespace as xp
from transforms import make_jaxpr
from transforms.core import ShapedArray
from xla import _jaxlib as J
from xla.lowering import lower_jaxpr


def test_version_pin_and_single_client():
    import jaxlib.version
    assert J.JAXLIB_VERSION == jaxlib.version.__version__ == "0.10.2"
    assert J.client() is J.client()
    dev = J.client().devices()[0]
    assert J.sharding_for(dev) is J.sharding_for(dev)


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint32", "int64", "float16", "float32", "float64",
                                   "complex64", "complex128"])
def test_device_put_round_trip(dtype):
    dev = J.client().devices()[0]
    x = (np.arange(6).reshape(2, 3) % 3).astype(dtype)
    buf = J.device_put(x, ShapedArray(x.shape, x.dtype), dev)
    back = J.to_numpy(buf)
    assert back.dtype == x.dtype and back.shape == x.shape
    np.testing.assert_array_equal(back, x)
    assert J.device_of(buf) == dev
    np.testing.assert_array_equal(np.from_dlpack(_Dl(J.to_dlpack(buf))), x)


class _Dl:
    def __init__(self, cap):
        self.cap = cap

    def __dlpack__(self, **kw):
        return self.cap

    def __dlpack_device__(self):
        return (1, 0)


def test_module_text_has_no_locations_and_accepts_text():
    module = lower_jaxpr(make_jaxpr(lambda x: x * 2.0)(xp.ones(2)))
    text = J.module_text(module)
    assert "loc(" not in text and "stablehlo.multiply" in text
    assert J.module_text(text) == text and J.module_text(text.encode("latin-1")) == text


def test_compiled_executable_serialises_and_runs_the_same():
    dev = J.client().devices()[0]
    module = lower_jaxpr(make_jaxpr(lambda x: xp.sin(x) + 1.0)(xp.ones(3)))
    exe = J.compile(module, dev)
    again = J.deserialize_executable(J.serialize_executable(exe), dev)
    x = np.array([0.1, 2.0, -3.0])
    for e in (exe, again):
        buf = J.device_put(x, ShapedArray((3,), np.float64), dev)
        # (execute_sharded with our result handlers, as the runtime runs programs: jaxlib's convenience
        # `execute` imports the jax package, which would then own jaxlib's C++ states for the whole process)
        (out,) = e.execute_sharded([buf]).consume_with_handlers([J.result_handler(ShapedArray((3,), np.float64), dev)])
        np.testing.assert_allclose(J.to_numpy(out), np.sin(x) + 1.0, rtol=1e-15)
    parts = J.executable_key_parts(dev)
    assert parts[0] == "0.10.2" and all(isinstance(p, str) for p in parts)


def test_is_ours_tells_our_arrays_from_a_jax_array():
    """jax.Array has our ArrayImpl type but another client (issue 24): is_ours tells them apart; the arrays
    our runtime makes are ours."""
    from transforms import jit
    assert J.is_ours(jit(lambda v: v * 2)(xp.ones(3))._v)
    assert J.is_ours(J.device_put(np.ones(2), ShapedArray((2,), np.dtype("float64")), J.client().local_devices()[0]))
    # (a jax.Array is not: checked in a fresh process by tests/array_namespace/test_bad_inputs.py, as importing
    # jax here would change how the rest of this process shares jaxlib's state)
