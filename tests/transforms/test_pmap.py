"""pmap (transforms/pmap.py): the cases in pmap_cases.py need 8 CPU devices, fixed when the client is made,
so they run in a fresh process with ARRAY_NAMESPACE_CPU_DEVICES=8; in this process, what holds on any
device count (the staged equation, its rules, errors before any device is used)."""
import os

import numpy as np
import pytest

import array_namespace as xp
import transforms
from transforms import grad, jvp, make_jaxpr, pmap, psum, vmap
from multi_device import run_cases_on_devices

HERE = os.path.dirname(__file__)


def test_pmap_on_eight_devices_in_a_subprocess():
    run_cases_on_devices(os.path.join(HERE, "pmap_cases.py"), 8)


def test_one_device_pmap_and_its_jaxprs():
    x = np.arange(3.0)[None]
    f = pmap(lambda a: a * 2.0 + psum(a, "i"), "i")
    np.testing.assert_allclose(np.asarray(f(xp.asarray(x))), 3 * x)
    text = str(make_jaxpr(f)(xp.asarray(x)))
    assert text.count("pmap[") == 1 and "psum[axes=(i,)]" in text and "in_axes=(0,)" in text
    # jvp and vmap stay one pmap equation each, with the transformed body
    jt = str(make_jaxpr(lambda v, t: jvp(f, (v,), (t,)))(xp.asarray(x), xp.asarray(x)))
    assert jt.count("pmap[") == 1 and "name=jvp(<lambda>)" in jt
    vt = str(make_jaxpr(vmap(f, in_axes=1, out_axes=1))(xp.asarray(np.ones((1, 5, 3)))))
    assert vt.count("pmap[") == 1 and "name=vmap(<lambda>)" in vt
    g = grad(lambda v: xp.sum(f(v) ** 2))(xp.asarray(x))
    np.testing.assert_allclose(np.asarray(g), 2 * 3 * x * 3)


def test_errors_before_any_device_is_used():
    n = transforms.device_count()
    with pytest.raises(ValueError, match=rf"size {n + 1}, more than the {n} local devices"):
        pmap(lambda a: a)(xp.ones((n + 1, 2)))
    with pytest.raises(ValueError, match="needs at least one mapped argument"):
        pmap(lambda a: a, in_axes=None)(xp.ones(2))
    with pytest.raises(TypeError, match="callable"):
        pmap(3)
    with pytest.raises(TypeError, match="hashable"):
        pmap(lambda a: a, axis_name=["i"])
    with pytest.raises(TypeError, match="in_axes entries must be int or None"):
        pmap(lambda a: a, in_axes="x")(xp.ones((1, 2)))
