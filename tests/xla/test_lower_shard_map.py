"""xla/lower_shard_map.py: NamedShardings as XLA sharding text (checked against NumPy slicing of the blocks
XLA's own parse of the text assigns to each partition), and the shard_map equation's two lowerings: a manual
SPMD region (Shardy's manual computation) inside a program over the mesh's devices, the one-device reference anywhere else. (Running them
on 8 devices: tests/transforms/shard_map_cases.py.)"""
import numpy as np
import pytest

import array_namespace as xp
import transforms
from transforms import Mesh, NamedSharding, P, make_jaxpr, psum, shard_map
from transforms.jaxpr import ClosedJaxpr
from xla import _jaxlib
from xla.lower_shard_map import declare_meshes, hlo_sharding_text, program_devices
from xla.lowering import lower_jaxpr


class _Dev:
    def __init__(self, i):
        self.id = i


def _mesh(shape, names, ids=None):
    ids = list(range(int(np.prod(shape)))) if ids is None else ids
    return Mesh(np.array([_Dev(i) for i in ids], dtype=object).reshape(shape), names)


class _Stub:   # what tile_indices reads of a sharding
    def __init__(self, text, n):
        self._hlo_sharding = _jaxlib.xc.HloSharding.from_string(text)
        self.devices = tuple(range(n))


def test_texts():
    m = _mesh((2, 4), ("i", "j"))
    ids = m.device_ids
    assert hlo_sharding_text(NamedSharding(m, P()), 2, ids) == "{replicated}"
    assert hlo_sharding_text(NamedSharding(m, P("i", "j")), 2, ids) == "{devices=[2,4]0,1,2,3,4,5,6,7}"
    assert hlo_sharding_text(NamedSharding(m, P("j", "i")), 2, ids) == "{devices=[4,2]0,4,1,5,2,6,3,7}"
    assert hlo_sharding_text(NamedSharding(m, P("i")), 2, ids) == \
        "{devices=[2,1,4]0,1,2,3,4,5,6,7 last_tile_dim_replicate}"
    # partitions are numbered by the program's device order, not by device id
    assert hlo_sharding_text(NamedSharding(m, P("i", "j")), 2, tuple(reversed(ids))) == \
        "{devices=[2,4]7,6,5,4,3,2,1,0}"
    with pytest.raises(ValueError, match="must span exactly the program's devices"):
        hlo_sharding_text(NamedSharding(m, P("i")), 1, (0, 1, 2))


@pytest.mark.parametrize("spec", [P("i", "j"), P("j", "i"), P(None, ("i", "j")), P(("j", "i")), P("j"),
                                  P(None, "i"), P()])
def test_text_places_each_block_where_the_named_sharding_says(spec):
    m = _mesh((2, 4), ("i", "j"), ids=[3, 1, 0, 2, 7, 5, 4, 6])
    named = NamedSharding(m, spec)
    shape = (8, 16)
    program = tuple(range(8))                        # partition k runs on the device with id k
    text = hlo_sharding_text(named, 2, program)
    per_partition = _jaxlib.tile_indices(_Stub(text, 8), shape)
    x = np.arange(128).reshape(shape)
    for dev, ix in named.devices_indices_map(shape).items():
        np.testing.assert_array_equal(x[per_partition[dev.id]], x[ix])


def test_uneven_tiles_and_assemble():
    st = _Stub("{devices=[4,1]0,1,2,3}", 4)
    ix = _jaxlib.tile_indices(st, (7, 2))
    assert [(s[0].start, s[0].stop) for s in ix] == [(0, 2), (2, 4), (4, 6), (6, 7)]
    x = np.arange(14.0).reshape(7, 2)
    padded = [np.pad(x[i], ((0, 2 - (i[0].stop - i[0].start)), (0, 0))) for i in ix]   # XLA pads short tiles
    np.testing.assert_array_equal(_jaxlib.assemble(padded, ix, (7, 2), x.dtype), x)


def _eqn_jaxpr(mesh):
    f = shard_map(lambda a: psum(a, "j") * 2.0, mesh, P("i", "j"), P("i"))
    return make_jaxpr(f)(xp.ones((4, 8)))


def test_manual_region_inside_a_program_over_the_mesh():
    mesh = _mesh((2, 4), ("i", "j"))
    closed = _eqn_jaxpr(mesh)
    with program_devices(tuple(reversed(mesh.device_ids))):
        module = lower_jaxpr(ClosedJaxpr(closed.jaxpr, closed.consts), "f")
        declare_meshes(module)
        text = str(module)
    assert 'sdy.mesh @mesh0 = <["i"=2, "j"=4], device_ids=[7, 6, 5, 4, 3, 2, 1, 0]>' in text
    assert "sdy.manual_computation" in text and 'manual_axes={"i", "j"}' in text
    assert 'in_shardings=[<@mesh0, [{"i"}, {"j"}]>] out_shardings=[<@mesh0, [{"i"}, {}]>]' in text
    assert "(%arg1: tensor<2x2xf64>)" in text   # the body sees one device's block
    # psum over j: groups of the partitions sharing i (mesh position p runs as partition 7 - p here), with a
    # channel and global device ids
    assert "[7, 6, 5, 4], [3, 2, 1, 0]" in text and "channel_handle" in text and "use_global_device_ids" in text


def test_one_device_program_lowers_the_reference():
    mesh = _mesh((2, 4), ("i", "j"))
    closed = _eqn_jaxpr(mesh)
    text = str(lower_jaxpr(ClosedJaxpr(closed.jaxpr, closed.consts), "f"))
    assert "sdy." not in text and "all_reduce" not in text and "reduce" in text


def test_axis_index_and_ppermute_in_a_manual_region():
    mesh = _mesh((2, 4), ("i", "j"))
    f = shard_map(lambda a: transforms.ppermute(a, "i", [(0, 1)]) + xp.astype(transforms.axis_index("j"),
                                                                                a.dtype), mesh, P("i", "j"),
                  P("i", "j"))
    closed = make_jaxpr(f)(xp.ones((4, 8)))
    with program_devices(mesh.device_ids):
        module = lower_jaxpr(ClosedJaxpr(closed.jaxpr, closed.consts), "f")
        declare_meshes(module)
        text = str(module)
    assert 'sdy.mesh @mesh0 = <["i"=2, "j"=4]>' in text and "partition_id" in text and "stablehlo.remainder" in text
    # member 0 -> 1 along i, for each j: partitions (j, 4 + j)
    assert "[0, 4], [1, 5], [2, 6], [3, 7]" in text
