"""Arrays over 8 CPU devices (run by test_sharded.py in a subprocess with ARRAY_NAMESPACE_CPU_DEVICES=8):
x[i] on the split axis of a pmap result or a mesh array vs NumPy, read from one shard (nothing gathered);
x.device / x.devices() / to_device / asarray(device=) on arrays over several devices."""
import numpy as np
import pytest

import array_namespace as xp
import transforms
from transforms import NamedSharding, P, device_put, jit, make_mesh, pmap
from transforms.backend import backend
from transforms.devices import Sharding

N = 8
RNG = np.random.default_rng(0)
DEFAULT = xp.asarray(0.0).device


def test_eight_devices():
    assert transforms.device_count() == N


@pytest.fixture
def no_gather(monkeypatch):
    """Fail on any gather of a whole array over several devices; record the shapes read back to the host."""
    from xla import _jaxlib
    read = []

    def refuse(*a, **k):
        raise AssertionError("x[i] gathered the whole array")
    monkeypatch.setattr(_jaxlib, "gather", refuse)
    to_numpy = backend.to_numpy
    monkeypatch.setattr(backend, "to_numpy", lambda raw: read.append(tuple(raw.aval.shape)) or to_numpy(raw))
    return read


def _pmapped(x_np):
    return pmap(lambda a: a * 2 - 1)(xp.asarray(x_np))


KEYS = [lambda i: i, lambda i: (i,), lambda i: (i, slice(1, None)), lambda i: (i, None), lambda i: (i, Ellipsis, 0),
        lambda i: (i, -1, slice(None, None, -1)), lambda i: (i, np.array([0, 2]))]


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "complex128"])
@pytest.mark.parametrize("k", range(len(KEYS)))
def test_getitem_int_on_a_pmap_result_reads_one_shard(dtype, k, no_gather):
    x_np = (RNG.standard_normal((N, 3, 4)) * 10).astype(dtype)
    if dtype == "complex128":
        x_np = x_np + 1j * RNG.standard_normal((N, 3, 4))
    y = _pmapped(x_np)
    want = x_np * 2 - 1
    no_gather.clear()
    for i in list(range(-N, N)):
        got = y[KEYS[k](i)]
        assert got.dtype == y.dtype and got.device == DEFAULT
        np.testing.assert_array_equal(np.asarray(got), want[KEYS[k](i)])
    assert no_gather[:1] == [(1, 3, 4)] and (N, 3, 4) not in no_gather   # only single shards were read


def test_getitem_out_of_range_and_other_keys_take_the_ordinary_path():
    x_np = RNG.standard_normal((N, 5))
    y = _pmapped(x_np)
    for i in (N, -N - 1):
        with pytest.raises(IndexError):
            y[i]
    for key in (slice(2, 5), (slice(None), 3), Ellipsis, np.array([1, 6])):
        np.testing.assert_array_equal(np.asarray(y[key]), (x_np * 2 - 1)[key])


def test_getitem_under_jit_and_a_one_dimensional_result():
    x_np = RNG.standard_normal((N, 2))
    y = _pmapped(x_np)
    np.testing.assert_array_equal(np.asarray(jit(lambda a: a[3] + a[-1])(y)), (x_np * 2 - 1)[3] + (x_np * 2 - 1)[-1])
    s = pmap(lambda a: xp.sum(a))(xp.asarray(x_np))   # shape (8,): x[i] is a 0-d array
    for i in range(N):
        assert s[i].shape == () and float(s[i]) == pytest.approx(x_np[i].sum(), rel=1e-15)


def test_iterating_a_pmap_result_reads_one_shard_per_element(no_gather):
    x_np = RNG.standard_normal((N, 2))
    s = pmap(lambda a: xp.sum(a))(xp.asarray(x_np))   # shape (8,): each element on its own device
    no_gather.clear()
    got = [float(e) for e in s]
    assert got == pytest.approx(x_np.sum(1).tolist(), rel=1e-15)
    assert (N,) not in no_gather   # (read shard by shard, as x[i] does: nothing gathered)


@pytest.mark.parametrize("shape,spec,split_rows", [((N, 3), ("i",), True), ((16, 3), ("i",), True),
                                                   ((8, 6), ("i", "j"), False), ((12, 3), ("i",), True),
                                                   ((8, 4), (None, "i"), False), ((8, 4), (("i", "j"),), True)])
def test_getitem_int_on_a_mesh_array(shape, spec, split_rows):
    mesh = make_mesh((4, 2), ("i", "j"))
    x_np = RNG.standard_normal(shape)
    m = device_put(xp.asarray(x_np), NamedSharding(mesh, P(*spec)))
    assert len(m.devices()) == N and m.device == m.sharding
    from xla import _jaxlib
    gathers = []
    real = _jaxlib.gather
    _jaxlib.gather = lambda *a, **k: gathers.append(1) or real(*a, **k)
    try:
        for i in range(-shape[0], shape[0]):
            np.testing.assert_array_equal(np.asarray(m[i]), x_np[i])
            np.testing.assert_array_equal(np.asarray(m[i, 1:]), x_np[i, 1:])
    finally:
        _jaxlib.gather = real
    assert (not gathers) == split_rows   # rows whole on one device: read from it; rows split: the ordinary path


def test_device_and_devices_of_arrays_over_several_devices():
    y = _pmapped(np.arange(24.0).reshape(N, 3))
    assert isinstance(y.device, Sharding) and y.device == y.sharding and y.device.stacked
    assert y.devices() == {s.data.device for s in y.addressable_shards} and len(y.devices()) == N
    assert [s.data.device for s in y.addressable_shards] != [DEFAULT] * N   # each block reports its own device
    assert y.addressable_shards[0].data.devices() == {y.addressable_shards[0].data.device}
    z = xp.asarray([1.0, 2.0])
    assert z.device == DEFAULT and z.devices() == {DEFAULT}
    # under a transform the value is the program's: it reports the default device
    assert jit(lambda a: xp.asarray(a.device == DEFAULT))(y)


def test_to_device_and_asarray_device():
    x_np = np.arange(24.0).reshape(N, 3)
    y = _pmapped(x_np)
    want = x_np * 2 - 1
    assert y.to_device(y.device) is y and xp.asarray(y, device=y.device) is y
    one = y.to_device(DEFAULT)   # gathered onto the default device
    assert one.device == DEFAULT and one.devices() == {DEFAULT}
    np.testing.assert_array_equal(np.asarray(one), want)
    again = xp.asarray(x_np, device=y.device)   # host data split like y
    assert again.sharding == y.sharding
    np.testing.assert_array_equal(np.asarray(again), x_np)
    np.testing.assert_array_equal(np.asarray(again[5]), x_np[5])
    blk = y.addressable_shards[3].data
    assert blk.device != DEFAULT and blk.to_device(blk.device) is blk
    moved = blk.to_device(DEFAULT)
    assert moved.device == DEFAULT
    np.testing.assert_array_equal(np.asarray(moved), want[3:4])
    other = xp.asarray([1.0, 2.0]).to_device(blk.device)
    assert other.device == blk.device and other.tolist() == [1.0, 2.0]
    mesh = make_mesh((N,), ("i",))
    ns = NamedSharding(mesh, P("i"))
    m = xp.asarray(x_np, device=ns)
    assert m.device == ns and xp.asarray(m, device=m.device) is m and m.to_device(ns) is m
    np.testing.assert_array_equal(np.asarray(m), x_np)
    with pytest.raises(ValueError, match="unknown device 'cpu:1'"):
        y.to_device("cpu:1")
    with pytest.raises(ValueError, match="asarray: unknown device"):
        xp.asarray(x_np, device=3)
    with pytest.raises(ValueError, match="whole on each of several devices is not supported"):
        y.to_device(Sharding(y.sharding.devices, False))
    with pytest.raises(ValueError, match="8 devices"):
        xp.asarray(np.ones((3, 2)), device=y.device)   # 3 rows cannot be split over 8 devices
