"""Meshes, PartitionSpecs and NamedShardings (transforms/sharding.py): construction and validation errors
naming what is wrong, the per-device blocks against NumPy slicing, jit's flattened shardings, and
device_put / sharded jit on the devices this process has (the 8-device cases: shard_map_cases.py)."""
import numpy as np
import pytest

import array_namespace as xp
import transforms
from transforms import Mesh, NamedSharding, P, PartitionSpec, device_put, jit, make_mesh
from transforms.pytree import tree_flatten
from transforms.sharding import check_shape, flat_shardings, global_shape, shard_index


class _Dev:
    def __init__(self, i):
        self.id = i

    def __repr__(self):
        return f"dev{self.id}"


def _mesh(shape, names):
    return Mesh(np.array([_Dev(i) for i in range(int(np.prod(shape)))], dtype=object).reshape(shape), names)


def test_mesh_and_its_errors():
    m = _mesh((2, 3), ("i", "j"))
    assert m.shape == {"i": 2, "j": 3} and m.size == 6 and m.device_ids == (0, 1, 2, 3, 4, 5)
    assert m == _mesh((2, 3), ("i", "j")) and hash(m) == hash(_mesh((2, 3), ("i", "j")))
    assert m != _mesh((3, 2), ("i", "j")) and m != _mesh((2, 3), ("a", "j"))
    with pytest.raises(ValueError, match=r"devices has 2 dimension\(s\) \(2, 3\) but axis_names \('i',\) names 1"):
        _mesh((2, 3), ("i",))
    with pytest.raises(ValueError, match="repeats a name"):
        _mesh((2, 3), ("i", "i"))
    with pytest.raises(ValueError, match="appears more than once"):
        Mesh(np.array([_Dev(0), _Dev(0)], dtype=object), ("i",))
    with pytest.raises(TypeError, match="must be a device"):
        Mesh(np.array([1, 2]), ("i",))
    with pytest.raises(ValueError, match=r"needs 1000 devices, only \d+ are available"):
        make_mesh((10, 100), ("a", "b"))


def test_partition_spec():
    s = P("i", None, ("j", "k"), ("l",), [])
    assert s == ("i", None, ("j", "k"), "l", None) and isinstance(s, tuple) and PartitionSpec is P
    assert s.axes_of(0) == ("i",) and s.axes_of(1) == () and s.axes_of(2) == ("j", "k") and s.axes_of(9) == ()
    assert s.names() == ("i", "j", "k", "l") and repr(P("i", None)) == "P('i', None)"


def test_named_sharding_validation_and_equality():
    m = _mesh((2, 4), ("i", "j"))
    assert NamedSharding(m, P("i")) == NamedSharding(m, P("i", None))
    assert hash(NamedSharding(m, P("i"))) == hash(NamedSharding(m, P("i", None)))
    assert NamedSharding(m, P("i")) != NamedSharding(m, P("j"))
    with pytest.raises(ValueError, match=r"names mesh axis 'k', which the mesh does not have \(its axes: \['i', 'j'\]\)"):
        NamedSharding(m, P("k"))
    with pytest.raises(ValueError, match="uses mesh axis 'j' more than once"):
        NamedSharding(m, P("j", ("i", "j")))
    with pytest.raises(TypeError, match="mesh must be a Mesh"):
        NamedSharding("m", P())
    with pytest.raises(TypeError, match="expected a PartitionSpec"):
        NamedSharding(m, "i")


def test_shapes_and_blocks_vs_numpy():
    m = _mesh((2, 4), ("i", "j"))
    spec = P(None, ("j", "i"))
    assert check_shape(m, spec, (3, 16), "t") == (3, 2) and global_shape(m, spec, (3, 2)) == (3, 16)
    with pytest.raises(ValueError, match=r"t: dimension 1 of an array of shape \(3, 12\) has size 12, not divisible "
                                         r"by the size 8 of mesh axis 'j' x 'i'"):
        check_shape(m, spec, (3, 12), "t")
    with pytest.raises(ValueError, match=r"3 entries, more than the 2 dimension\(s\)"):
        check_shape(m, P("i", None, None), (4, 4), "t")
    x = np.arange(48).reshape(3, 16)
    blocks = NamedSharding(m, spec).devices_indices_map(x.shape)
    assert len(blocks) == 8
    for dev, ix in blocks.items():
        i, j = divmod(dev.id, 4)
        k = j * 2 + i                                    # j major, then i
        np.testing.assert_array_equal(x[ix], x[:, 2 * k:2 * k + 2])
    assert shard_index(m, P("i"), (4, 5), {"i": 1, "j": 3}) == (slice(2, 4), slice(0, 5))


def test_flat_shardings_for_jit():
    m = _mesh((2,), ("i",))
    a, b = NamedSharding(m, P("i")), NamedSharding(m, P())
    _, in_tree = tree_flatten(((1, {"x": 2, "y": 3}), {"kw": 4}))
    _, out_tree = tree_flatten([5, 6])
    ins, outs = flat_shardings((a, b), a, in_tree, 2, out_tree, 1, "f")
    assert ins == (None, None, a, b, b, None) and outs == (a, a, None)
    ins, outs = flat_shardings(None, [None, b], in_tree, 0, out_tree, 0, "f")
    assert ins == (None,) * 4 and outs == (None, b)
    with pytest.raises(TypeError, match="in_shardings: each entry must be a NamedSharding or None, got P"):
        flat_shardings(P("i"), None, in_tree, 0, out_tree, 0, "f")
    with pytest.raises(ValueError, match="out_shardings"):
        flat_shardings(None, (a, a, a), in_tree, 0, out_tree, 0, "f")


def test_device_put_and_sharded_jit_on_one_device():
    mesh = make_mesh((1,), ("i",))
    x = np.arange(6.0).reshape(2, 3)
    s = NamedSharding(mesh, P("i"))
    a = device_put(xp.asarray(x), s)
    assert a.sharding == s
    np.testing.assert_array_equal(np.asarray(a), x)
    np.testing.assert_array_equal(np.asarray(a + 1.0), x + 1)
    d = device_put(xp.asarray(x), transforms.devices()[0])
    np.testing.assert_array_equal(np.asarray(d), x)
    f = jit(lambda v: xp.sum(v * v, axis=1), in_shardings=s, out_shardings=s)
    y = f(xp.asarray(x))
    np.testing.assert_allclose(np.asarray(y), (x * x).sum(1))
    assert y.sharding == s and f(a).shape == (2,)
    with pytest.raises(ValueError, match=r"device_put: dimension 1 of an array of shape \(2, 3\) has size 3, not "
                                         r"divisible by the size 2 of mesh axis 'i' that P\(None, 'i'\)"):
        device_put(xp.asarray(x), NamedSharding(_mesh((2,), ("i",)), P(None, "i")))


def test_device_put_takes_runtime_devices_and_namespace_devices_and_refuses_others():
    import array_namespace as xp
    import numpy as np
    import pytest
    from transforms import device_put, devices
    x = xp.arange(3.0)
    for d in (devices()[0], x.device, None):
        y = device_put(x, d)
        np.testing.assert_array_equal(np.asarray(y), [0.0, 1.0, 2.0])
        assert y.device == devices()[0] and y.device == x.device
    for bad in ("cpu", 0, object()):
        with pytest.raises(TypeError, match="device_put: device_or_sharding must be a NamedSharding"):
            device_put(x, bad)


def test_sharded_jit_of_a_guarded_function_and_its_compiled_program():
    """A guarded trace's guard vector is one more output of the SPMD program (replicated); each branch is its
    own variant, as eagerly. .compiled(x) is the program a call with x runs; a sharded jit's lower().compile()
    is the SPMD program too."""
    s = NamedSharding(make_mesh((1,), ("i",)), P("i"))
    f = jit(lambda v: v * 2.0 if xp.sum(v) > 0 else -v, in_shardings=s)
    pos, neg = np.arange(1.0, 5.0), -np.arange(1.0, 5.0)
    for x, want in ((pos, pos * 2), (neg, -neg), (pos + 1, (pos + 1) * 2)):
        y = f(xp.asarray(x))
        np.testing.assert_array_equal(np.asarray(y), want)
    assert f.trace_count == 2
    assert "negate(" in f.compiled(xp.asarray(neg)).as_text()
    assert "negate(" not in f.compiled(xp.asarray(pos)).as_text()
    g = jit(lambda v: xp.sum(v * v), in_shardings=s)
    prog = g.lower(xp.asarray(pos)).compile()
    assert "multiply" in prog.as_text() and type(prog) is type(f.compiled(xp.asarray(pos)))
    assert "multiply(" in jit(lambda v: v * 3.0).compiled(xp.asarray(pos)).as_text()   # (one device, C++ dispatch)
    with pytest.raises(TypeError, match=r"compiled: needs concrete arguments"):
        transforms.vmap(lambda v: f.compiled(v))(xp.asarray(np.ones((2, 4))))
