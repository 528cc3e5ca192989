"""Arrays over several devices (array_namespace/_sharded.py): the cases in sharded_array_cases.py need 8 CPU
devices, fixed when the client is made, so they run in a fresh process with ARRAY_NAMESPACE_CPU_DEVICES=8;
here, what holds on this process's device (x.device, devices(), to_device, asarray(device=), x[i])."""
import os

import numpy as np
import pytest

import array_namespace as xp
from array_namespace._sharded import shard_row
from transforms import jit, pmap
from multi_device import run_cases_on_devices

HERE = os.path.dirname(__file__)


def test_arrays_over_eight_devices_in_a_subprocess():
    run_cases_on_devices(os.path.join(HERE, "sharded_array_cases.py"), 8)


def test_one_device_array():
    x = xp.asarray([[1.0, 2.0], [3.0, 4.0]])
    d = x.device
    assert d == xp.__array_namespace_info__().default_device() and x.devices() == {d}
    assert x.to_device(d) is x and xp.asarray(x, device=d) is x
    np.testing.assert_array_equal(np.asarray(xp.asarray(np.ones(3), device=d)), np.ones(3))
    assert jit(lambda a: xp.asarray(a.device == d))(x)
    with pytest.raises(ValueError, match="to_device: unknown device 'gpu'"):
        x.to_device("gpu")
    with pytest.raises(ValueError, match="streams are not supported"):
        x.to_device(d, stream=1)


def test_ordinary_arrays_take_the_ordinary_path():
    x = xp.asarray(np.arange(12.0).reshape(4, 3))
    assert shard_row(x, 1) is None and shard_row(x, (1, 2)) is None and shard_row(xp.asarray(1.0), 0) is None
    y = pmap(lambda a: a + 1.0)(xp.asarray(np.arange(3.0)[None]))   # a pmap over this one device
    assert shard_row(y, 0) is None
    np.testing.assert_array_equal(np.asarray(y[0]), np.arange(3.0) + 1)
    np.testing.assert_array_equal(np.asarray(x[-1]), np.arange(9.0, 12.0))
