"""xla/spmd.py on the devices this process has (one, usually): SPMD programs compiled once per (jaxpr,
shardings), inputs already laid out passed as they are, the partitioner's output layouts named on the mesh,
one-device shard_maps run as their reference, device_put to a device. The same on 8 devices, against NumPy:
tests/transforms/shard_map_cases.py."""
import numpy as np

import array_namespace as xp
import transforms
from transforms import NamedSharding, P, device_put, jit, make_mesh, psum, shard_map
from xla import _jaxlib, spmd


def test_program_cache_and_inputs_passed_as_they_lie():
    mesh = make_mesh((1,), ("i",))
    s = NamedSharding(mesh, P("i"))
    f = jit(lambda v: v * 3.0 - 1.0, in_shardings=s, out_shardings=s)
    x = np.arange(4.0)
    before = spmd.compile_count[0]
    y = f(xp.asarray(x))
    z = f(y)                                      # y already lies as the program takes it
    np.testing.assert_allclose(np.asarray(z), (x * 3 - 1) * 3 - 1)
    assert spmd.compile_count[0] == before + 1
    sh = spmd.mesh_sharding(s, 1)
    assert y._v._sharding is sh and spmd.place(y._v, y._v.aval, sh) is y._v


def test_two_functions_lowering_to_one_module_compile_once():
    mesh = make_mesh((1,), ("i",))
    s = NamedSharding(mesh, P("i"))
    f = jit(lambda v: v * 5.0 - 2.0, in_shardings=s, out_shardings=s)
    g = jit(lambda w: w * 5.0 - 2.0, in_shardings=s, out_shardings=s)   # another jaxpr, the same module
    h = jit(lambda w: w * 5.0 + 2.0, in_shardings=s, out_shardings=s)
    x = np.arange(4.0)
    before = spmd.compile_count[0]
    for fn, want in [(f, x * 5 - 2), (g, x * 5 - 2), (h, x * 5 + 2)]:
        np.testing.assert_array_equal(np.asarray(fn(xp.asarray(x))), want)
    assert spmd.compile_count[0] == before + 2


def test_output_layout_chosen_by_the_partitioner_is_named():
    mesh = make_mesh((1,), ("i",))
    f = jit(lambda v: v + 1.0, in_shardings=NamedSharding(mesh, P("i")))
    y = f(xp.asarray(np.ones(3)))
    assert y.sharding == NamedSharding(mesh, P())
    np.testing.assert_array_equal(np.asarray(y), np.full(3, 2.0))
    assert spmd._named_matching(mesh, 2, "{replicated}", mesh.device_ids) == NamedSharding(mesh, P())


def test_one_device_shard_map_runs_its_reference():
    mesh = make_mesh((1, 1), ("i", "j"))
    x = np.arange(6.0).reshape(2, 3)
    out = shard_map(lambda a: psum(a, ("i", "j")) + 1.0, mesh, P("i", "j"), P("i", "j"))(xp.asarray(x))
    np.testing.assert_allclose(np.asarray(out), x + 1)


def test_put_on_a_device_and_over_a_mesh():
    dev = transforms.devices()[-1]
    a = device_put(xp.asarray(np.arange(3.0)), dev)
    assert _jaxlib.device_of(a._v).id == dev.id
    np.testing.assert_array_equal(np.asarray(a), np.arange(3.0))
    m = device_put(xp.asarray(np.arange(4.0)), NamedSharding(make_mesh((1,), ("i",)), P("i")))
    assert [s.index for s in m.addressable_shards] == [(slice(0, 4),)] and m.sharding.spec == P("i")
    np.testing.assert_array_equal(np.asarray(m), np.arange(4.0))


class _Dev:
    def __init__(self, i):
        self.id = i


def test_partitioner_layouts_are_named_whatever_their_text_form():
    from transforms import Mesh
    mesh = Mesh(np.array([_Dev(i) for i in range(8)], dtype=object).reshape(2, 4), ("i", "j"))
    ids = mesh.device_ids
    assert spmd._named_matching(mesh, 2, "{devices=[2,4]<=[8]}", ids) == NamedSharding(mesh, P("i", "j"))
    assert spmd._named_matching(mesh, 2, "{devices=[4,2]<=[2,4]T(1,0)}", ids) == NamedSharding(mesh, P("j", "i"))
    assert spmd._named_matching(mesh, 1, "{devices=[8]<=[8]}", ids) == NamedSharding(mesh, P(("i", "j")))
    assert spmd._named_matching(mesh, 2, "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}", ids) == \
        NamedSharding(mesh, P(None, "j"))
    assert spmd._named_matching(mesh, 1, "{devices=[8]7,6,5,4,3,2,1,0}", ids) is None   # no spec says that
