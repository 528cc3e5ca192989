"""shard_map (transforms/shard_map.py): the cases in shard_map_cases.py need 8 CPU devices, fixed when the
client is made, so they run in a fresh process with ARRAY_NAMESPACE_CPU_DEVICES=8; here, on one device, what
holds on any device count: the staged equation and its rules, the one-device reference semantics (the body
vmapped over each mesh axis by name) against NumPy and vmap(axis_name=), grad against finite differences,
errors before any device is used."""
import os

import numpy as np
import pytest

import array_namespace as xp
import transforms
from finite_diff import central_diff
from transforms import Mesh, P, grad, jit, jvp, make_jaxpr, pmean, psum, shard_map, vmap
from transforms.shard_map import reference_jaxpr
from multi_device import run_cases_on_devices

HERE = os.path.dirname(__file__)


def test_shard_map_on_eight_devices_in_a_subprocess():
    run_cases_on_devices(os.path.join(HERE, "shard_map_cases.py"), 8)


def _one_device_mesh(names=("i", "j")):
    return Mesh(np.array(transforms.devices()[:1]).reshape((1,) * len(names)), names)


class _Dev:
    def __init__(self, i):
        self.id = i


def _fake_mesh(shape, names):
    """A mesh of stand-in devices: enough to stage and to build the reference (nothing runs on it)."""
    return Mesh(np.array([_Dev(i) for i in range(int(np.prod(shape)))], dtype=object).reshape(shape), names)


def test_one_device_mesh_runs_and_matches_numpy():
    mesh = _one_device_mesh()
    x = np.arange(12.0).reshape(3, 4)
    f = shard_map(lambda a: a * 2.0 + psum(a, ("i", "j")), mesh, P("i", "j"), P("i", "j"))
    np.testing.assert_allclose(np.asarray(f(xp.asarray(x))), 3 * x)
    np.testing.assert_allclose(np.asarray(jit(f)(xp.asarray(x))), 3 * x)
    g = grad(lambda v: xp.sum(f(v) ** 2))(xp.asarray(x))
    np.testing.assert_allclose(np.asarray(g), central_diff(lambda v: float(np.sum((3 * v) ** 2)), x), rtol=1e-6)


def _staged_eqn(f, *args):
    eqn = make_jaxpr(f)(*args).jaxpr.eqns[0]
    assert eqn.prim.name == "shard_map"
    return eqn.params


def _run_reference(f, *args):
    p = _staged_eqn(f, *args)
    ref = reference_jaxpr(p["jaxpr"], p["mesh"], p["in_specs"], p["out_specs"])
    return transforms.eval_jaxpr(ref.jaxpr, ref.consts, *[a._v for a in args])


def test_reference_on_a_two_by_four_mesh_vs_numpy_and_nested_vmap():
    mesh = _fake_mesh((2, 4), ("i", "j"))
    x = np.arange(32.0).reshape(4, 8)

    def body(a):
        return psum(a, "i") * 10.0 + pmean(a, ("i", "j"))
    f = shard_map(body, mesh, P("i", "j"), P("i", "j"))
    (out,) = _run_reference(f, xp.asarray(x))
    blocks = x.reshape(2, 2, 4, 2)                      # (i, rows, j, cols)
    ref = np.broadcast_to(blocks.sum(0, keepdims=True) * 10 + blocks.mean((0, 2), keepdims=True), blocks.shape)
    np.testing.assert_allclose(np.asarray(out), ref.reshape(4, 8))
    # nested pmap is a 2-D mesh: the same as vmap over i of vmap over j
    nested = vmap(vmap(body, axis_name="j"), axis_name="i")(xp.asarray(blocks.transpose(0, 2, 1, 3)))
    np.testing.assert_allclose(np.asarray(out), np.asarray(nested).transpose(0, 2, 1, 3).reshape(4, 8))


def test_reference_replicated_and_multi_axis_specs():
    mesh = _fake_mesh((2, 3), ("i", "j"))
    x = np.arange(12.0)
    w = np.array([1.0, -1.0])
    f = shard_map(lambda a, v: psum(xp.sum(a) * v, "j"), mesh, (P(("j", "i")), P()), P("i"))
    (out,) = _run_reference(f, xp.asarray(x), xp.asarray(w))
    # dim 0 split over (j, i), j major: block k = 2 * j + i holds x[2k:2k+2]
    sums = x.reshape(3, 2, 2).sum(2)                    # (j, i)
    np.testing.assert_allclose(np.asarray(out), np.concatenate([sums[:, i].sum() * w for i in range(2)]))


def test_staged_equation_and_its_transforms():
    mesh = _one_device_mesh()
    x = xp.asarray(np.ones((2, 3)))
    f = shard_map(lambda a: xp.sin(a) + psum(a, "j"), mesh, P("i"), P("i"))
    text = str(make_jaxpr(f)(x))
    assert text.count("shard_map[") == 1 and "psum[axes=(j,)]" in text and "mesh=Mesh(" in text
    jt = str(make_jaxpr(lambda v, t: jvp(f, (v,), (t,)))(x, x))
    assert jt.count("shard_map[") == 1 and "name=jvp(<lambda>)" in jt
    vt = str(make_jaxpr(vmap(f, in_axes=1, out_axes=1))(xp.asarray(np.ones((2, 5, 3)))))
    assert vt.count("shard_map[") == 1 and "name=vmap(<lambda>)" in vt
    gt = str(make_jaxpr(grad(lambda v: xp.sum(f(v))))(x))
    assert "transpose(" in gt
    xv = np.linspace(-1, 1, 6).reshape(2, 3)
    np.testing.assert_allclose(np.asarray(vmap(f)(xp.asarray(np.stack([xv, 2 * xv])))),
                               np.stack([np.sin(xv) + xv, np.sin(2 * xv) + 2 * xv]))


def test_errors_name_what_is_wrong():
    mesh = _fake_mesh((2, 4), ("i", "j"))
    with pytest.raises(ValueError, match=r"mesh axis 'k', which the mesh does not have.*\['i', 'j'\]"):
        shard_map(lambda a: a, mesh, P("k"), P())(xp.ones(8))
    with pytest.raises(ValueError, match=r"dimension 0 .* size 6, not divisible by the size 4 of mesh axis 'j'"):
        shard_map(lambda a: a, mesh, P("j"), P("j"))(xp.ones(6))
    with pytest.raises(ValueError, match=r"size 4, not divisible by the size 8 of mesh axis 'i' x 'j'"):
        shard_map(lambda a: a, mesh, P(("i", "j")), P())(xp.ones(4))
    with pytest.raises(ValueError, match="out_specs.*names mesh axis 'z'"):
        shard_map(lambda a: a, mesh, P("i"), P("z"))(xp.ones(8))
    with pytest.raises(ValueError, match="out_specs: P.'i', 'j'. has 2 entries, more than the 1"):
        shard_map(lambda a: a, mesh, P("i"), P("i", "j"))(xp.ones(8))
    with pytest.raises(ValueError, match="uses mesh axis 'i' more than once"):
        shard_map(lambda a: a, mesh, P("i", "i"), P())(xp.ones((2, 2)))
    with pytest.raises(NameError, match="unbound axis name 'q'"):
        shard_map(lambda a: psum(a, "q"), mesh, P("i"), P("i"))(xp.ones(8))
    with pytest.raises(TypeError, match="mesh must be a transforms.Mesh"):
        shard_map(lambda a: a, "mesh", P(), P())
    with pytest.raises(TypeError, match="callable"):
        shard_map(3, mesh, P(), P())
