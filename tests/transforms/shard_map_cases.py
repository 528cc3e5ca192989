"""shard_map and sharded jit on 8 CPU devices (run by test_shard_map.py in a subprocess with
ARRAY_NAMESPACE_CPU_DEVICES=8): 1-D and 2-D meshes against NumPy and against pmap / vmap(axis_name=);
psum over one and two mesh axes; grad through shard_map against finite differences; jit with
in/out shardings against unsharded jit and NumPy; device_put over a mesh; bad input."""
import numpy as np
import pytest

import array_namespace as xp
import transforms
from finite_diff import central_diff
from transforms import (Mesh, NamedSharding, P, all_gather, axis_index, device_put, grad, jit, make_jaxpr, pmap,
                        pmax, pmean, ppermute, psum, psum_scatter, shard_map, vmap)

N = 8
RNG = np.random.default_rng(1)


def _mesh(shape, names):
    return Mesh(np.array(transforms.devices()[:int(np.prod(shape))]).reshape(shape), names)


def _devices_of(arr):
    return sorted(d.id for d in arr._v._sharding.devices)


def test_eight_devices():
    assert transforms.device_count() == N


# ------------------------------------------------------------------ 1-D mesh: pmap's case
ONE_D = {
    "psum": lambda a: psum(a, "i"),
    "pmean_minus": lambda a: a - pmean(a, "i"),
    "pmax": lambda a: pmax(a, "i"),
    "all_gather": lambda a: all_gather(a, "i", axis=0, tiled=True),
    "psum_scatter": lambda a: psum_scatter(a, "i", scatter_dimension=1, tiled=True),
    "ppermute": lambda a: ppermute(a, "i", [(k, (k + 1) % N) for k in range(N)]),
    "axis_index": lambda a: a * xp.astype(axis_index("i"), a.dtype),
}


@pytest.mark.parametrize("name", sorted(ONE_D))
def test_one_d_mesh_vs_pmap_and_vmap(name):
    f = ONE_D[name]
    mesh = _mesh((N,), ("i",))
    x = RNG.standard_normal((N, 8))
    s = shard_map(f, mesh, P("i"), P("i"))(xp.asarray(x))      # each device: a (1, 8) block
    p = pmap(f, "i")(xp.asarray(x[:, None, :]))                  # each member: the same (1, 8) block
    v = vmap(f, axis_name="i")(xp.asarray(x[:, None, :]))
    assert _devices_of(s) == list(range(N))
    np.testing.assert_allclose(np.asarray(s), np.asarray(p).reshape(np.asarray(s).shape), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.asarray(s), np.asarray(v).reshape(np.asarray(s).shape), rtol=1e-12, atol=1e-12)


def test_one_d_mesh_vs_numpy():
    mesh = _mesh((N,), ("i",))
    x = RNG.standard_normal((4 * N, 3))
    out = shard_map(lambda a: a - pmean(xp.mean(a, axis=0), "i"), mesh, P("i"), P("i"))(xp.asarray(x))
    np.testing.assert_allclose(np.asarray(out), x - x.mean(0), rtol=1e-12, atol=1e-12)
    tot = shard_map(lambda a: psum(xp.sum(a, axis=0), "i"), mesh, P("i"), P())(xp.asarray(x))
    assert tot.shape == (3,)
    np.testing.assert_allclose(np.asarray(tot), x.sum(0), rtol=1e-12)


# ----------------------------------------------------------------------------- 2-D mesh
def _blocks(x, mi, mj):
    """NumPy reference: x split into an (mi x mj) grid of blocks."""
    return [[x[r * x.shape[0] // mi:(r + 1) * x.shape[0] // mi, c * x.shape[1] // mj:(c + 1) * x.shape[1] // mj]
             for c in range(mj)] for r in range(mi)]


def test_two_d_mesh_psum_over_one_and_two_axes():
    mesh = _mesh((2, 4), ("i", "j"))
    x = RNG.standard_normal((4, 8))
    b = _blocks(x, 2, 4)
    over_i = shard_map(lambda a: psum(a, "i"), mesh, P("i", "j"), P("i", "j"))(xp.asarray(x))
    ref_i = np.block([[b[0][c] + b[1][c] for c in range(4)]] * 2)
    np.testing.assert_allclose(np.asarray(over_i), ref_i, rtol=1e-12)
    over_j = shard_map(lambda a: psum(a, "j"), mesh, P("i", "j"), P("i"))(xp.asarray(x))
    np.testing.assert_allclose(np.asarray(over_j), np.vstack([sum(b[r]) for r in range(2)]), rtol=1e-12)
    both = shard_map(lambda a: psum(a, ("i", "j")), mesh, P("i", "j"), P())(xp.asarray(x))
    np.testing.assert_allclose(np.asarray(both), sum(b[r][c] for r in range(2) for c in range(4)), rtol=1e-12)
    assert both.sharding == NamedSharding(mesh, P()) and over_j.sharding.spec == P("i")


def test_two_d_mesh_axis_index_and_ppermute_vs_nested_vmap():
    mesh = _mesh((2, 4), ("i", "j"))
    x = RNG.standard_normal((4, 8))

    def f(a):
        k = xp.astype(axis_index("i") * 10 + axis_index("j"), a.dtype)
        return ppermute(a, "j", [(c, (c + 1) % 4) for c in range(4)]) + k
    out = np.asarray(shard_map(f, mesh, P("i", "j"), P("i", "j"))(xp.asarray(x)))
    # nested pmap expressed as a 2-D mesh: the same as vmap over i of vmap over j on the blocks
    blocks = xp.asarray(x.reshape(2, 2, 4, 2).transpose(0, 2, 1, 3))        # (i, j, 2, 2)
    ref = np.asarray(vmap(vmap(f, axis_name="j"), axis_name="i")(blocks)).transpose(0, 2, 1, 3).reshape(4, 8)
    np.testing.assert_allclose(out, ref, rtol=1e-12)
    b = _blocks(x, 2, 4)
    np.testing.assert_allclose(out[:2, 2:4], b[0][0] + 1.0)            # block (0, 1) got (0, 0)'s data
    np.testing.assert_allclose(out[2:, 0:2], b[1][3] + 10.0)           # block (1, 0) got (1, 3)'s data


def test_multi_axis_spec_and_replicated_inputs():
    mesh = _mesh((2, 4), ("i", "j"))
    x = RNG.standard_normal((16, 3))
    w = RNG.standard_normal(3)
    # dim 0 split over both axes (i major), w replicated everywhere
    out = shard_map(lambda a, v: a * v + xp.astype(axis_index("i") * 4 + axis_index("j"), a.dtype), mesh,
                    (P(("i", "j")), P()), P(("i", "j")))(xp.asarray(x), xp.asarray(w))
    np.testing.assert_allclose(np.asarray(out), x * w + np.repeat(np.arange(8.0), 2)[:, None], rtol=1e-12)
    # j major: the device order along dim 0 follows the spec
    out2 = shard_map(lambda a: a + xp.astype(axis_index("i"), a.dtype), mesh, P(("j", "i")), P(("j", "i")))(
        xp.asarray(x))
    np.testing.assert_allclose(np.asarray(out2), x + np.tile(np.repeat([0.0, 1.0], 2), 4)[:, None], rtol=1e-12)


def _loss_np(x, w):
    h = np.tanh(x @ w)
    return float(np.sum((h - h.mean(0)) ** 2))


def test_grad_through_shard_map_vs_finite_differences():
    mesh = _mesh((2, 4), ("i", "j"))
    x = RNG.standard_normal((8, 3))
    w = RNG.standard_normal((3, 4))

    def per_shard(a, wv):      # rows over i, columns of w over j
        h = xp.tanh(a @ wv)
        mean = psum(xp.sum(h, axis=0), "i") / 8.0
        return (h - mean) ** 2

    def total(xv, wv):
        return xp.sum(shard_map(per_shard, mesh, (P("i"), P(None, "j")), P("i", "j"))(xv, wv))
    gx, gw = grad(total, argnums=(0, 1))(xp.asarray(x), xp.asarray(w))
    np.testing.assert_allclose(np.asarray(gx), central_diff(lambda v: _loss_np(v, w), x), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(np.asarray(gw), central_diff(lambda v: _loss_np(x, v), w), rtol=1e-6, atol=1e-6)
    # a replicated output and a replicated input: each counted once
    g2 = grad(lambda v: xp.sum(shard_map(lambda a: psum(a * a, ("i", "j")), mesh, P(("i", "j")), P())(v)))(
        xp.asarray(x[:, 0]))
    np.testing.assert_allclose(np.asarray(g2), 2 * x[:, 0], rtol=1e-12)


def test_compositions_jit_vmap_and_jaxpr():
    mesh = _mesh((2, 4), ("i", "j"))
    x = RNG.standard_normal((4, 8))
    f = shard_map(lambda a: a - pmean(a, ("i", "j")), mesh, P("i", "j"), P("i", "j"))
    ref = x - np.tile(x.reshape(2, 2, 4, 2).mean((0, 2)), (2, 4))   # minus the mean of the 8 blocks
    np.testing.assert_allclose(np.asarray(f(xp.asarray(x))), ref, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(jit(f)(xp.asarray(x))), ref, rtol=1e-12)   # one-device program
    xs = np.stack([x, 2 * x])
    np.testing.assert_allclose(np.asarray(vmap(f)(xp.asarray(xs))), np.stack([ref, 2 * ref]), rtol=1e-12)
    text = str(make_jaxpr(f)(xp.asarray(x)))
    assert text.count("shard_map[") == 1 and "psum[axes=(i, j)]" in text


# -------------------------------------------------------------------------- sharded jit
def test_jit_with_shardings_vs_unsharded_jit_and_numpy():
    mesh = _mesh((2, 4), ("i", "j"))
    x = RNG.standard_normal((8, 16))
    w = RNG.standard_normal((16, 4))

    def f(a, b):
        return xp.tanh(a @ b) + xp.sum(a, axis=1, keepdims=True)
    ref = np.tanh(x @ w) + x.sum(1, keepdims=True)
    out_sh = NamedSharding(mesh, P("i", "j"))
    jf = jit(f, in_shardings=(NamedSharding(mesh, P("i", "j")), NamedSharding(mesh, P("j"))), out_shardings=out_sh)
    y = jf(xp.asarray(x), xp.asarray(w))
    np.testing.assert_allclose(np.asarray(y), ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.asarray(y), np.asarray(jit(f)(xp.asarray(x), xp.asarray(w))), rtol=1e-12)
    assert y.sharding == out_sh and _devices_of(y) == list(range(N))
    shards = y.addressable_shards
    assert len(shards) == N and all(s.data.shape == (4, 1) for s in shards)
    for s in shards:
        np.testing.assert_allclose(np.asarray(s.data), ref[s.index], rtol=1e-12)
    # a second call reuses the program; an input already laid out that way passes as it is
    xs = device_put(xp.asarray(x), NamedSharding(mesh, P("i", "j")))
    np.testing.assert_allclose(np.asarray(jf(xs, xp.asarray(w))), ref, rtol=1e-12, atol=1e-12)
    assert jf.trace_count == 1
    # output sharding left to the partitioner, a single sharding for every argument
    jg = jit(f, in_shardings=NamedSharding(mesh, P("i")))
    np.testing.assert_allclose(np.asarray(jg(xp.asarray(x), xp.asarray(w))), ref, rtol=1e-12, atol=1e-12)


def test_device_put_over_a_mesh():
    mesh = _mesh((2, 4), ("i", "j"))
    x = RNG.standard_normal((8, 8))
    for spec in (P("i", "j"), P(None, "j"), P("j", None), P(), P(None, ("i", "j"))):
        a = device_put(xp.asarray(x), NamedSharding(mesh, spec))
        assert a.sharding == NamedSharding(mesh, spec)
        np.testing.assert_array_equal(np.asarray(a), x)
        np.testing.assert_allclose(np.asarray(a * 2.0), 2 * x)   # eager ops read it
    a = device_put(xp.asarray(x), NamedSharding(mesh, P("i", "j")))
    idx = {s.device.id: s.index for s in a.addressable_shards}
    assert idx[5] == (slice(4, 8), slice(2, 4))   # device 5 = mesh position (1, 1)


# --------------------------------------------------------------------------- bad input
def test_bad_input():
    mesh = _mesh((2, 4), ("i", "j"))
    with pytest.raises(ValueError, match=r"mesh axis 'k'.*axes: \['i', 'j'\]"):
        shard_map(lambda a: a, mesh, P("k"), P("k"))(xp.ones((8,)))
    with pytest.raises(ValueError, match=r"dimension 0 .* size 6, not divisible by the size 4 of mesh axis 'j'"):
        shard_map(lambda a: a, mesh, P("j"), P("j"))(xp.ones((6,)))
    with pytest.raises(ValueError, match=r"dimension 1 .* size 3, not divisible by the size 2 of mesh axis 'i'"):
        device_put(xp.ones((4, 3)), NamedSharding(mesh, P(None, "i")))
    with pytest.raises(ValueError, match="out_shardings entry 0.*dimension 0 .* size 5"):
        jit(lambda a: a[:5], out_shardings=NamedSharding(mesh, P("j")))(xp.ones(8))
    with pytest.raises(NameError, match="unbound axis name 'k'"):
        shard_map(lambda a: psum(a, "k"), mesh, P("i"), P("i"))(xp.ones((8,)))


def test_jit_of_shard_map_runs_over_the_mesh():
    mesh = _mesh((2, 4), ("i", "j"))
    x = RNG.standard_normal((4, 8))
    f = shard_map(lambda a: psum(a, "j") * 2.0, mesh, P("i", "j"), P("i"))
    jf = jit(lambda a: f(a) + 1.0)
    y = jf(xp.asarray(x))
    np.testing.assert_allclose(np.asarray(y), x.reshape(2, 2, 4, 2).sum(2).reshape(4, 2) * 2 + 1, rtol=1e-12)
    assert _devices_of(y) == list(range(N))   # one SPMD program over the mesh, not the one-device reference
    np.testing.assert_allclose(np.asarray(jf(xp.asarray(x))), np.asarray(y), rtol=1e-12)   # the cached program
    assert jf.trace_count == 1


def test_mesh_on_some_devices_in_any_order_closures_and_pytrees():
    devs = transforms.devices()
    mesh = Mesh(np.array([devs[7], devs[5], devs[6], devs[4]]).reshape(2, 2), ("a", "b"))
    x = RNG.standard_normal((4, 6))
    c = xp.asarray(RNG.standard_normal(3))               # a closure constant: replicated on every device

    def f(d):
        k = xp.astype(axis_index("a") * 2 + axis_index("b"), d["x"].dtype)
        return {"y": d["x"] * c + k, "s": psum(d["x"], "b")}
    out = shard_map(f, mesh, ({"x": P("a", "b")},), {"y": P("a", "b"), "s": P("a")})({"x": xp.asarray(x)})
    ids = np.array([[0.0, 1.0], [2.0, 3.0]]).repeat(2, 0).repeat(3, 1)
    np.testing.assert_allclose(np.asarray(out["y"]), x * np.tile(np.asarray(c), 2) + ids, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(out["s"]), x[:, :3] + x[:, 3:], rtol=1e-12)
    assert _devices_of(out["y"]) == [4, 5, 6, 7]
    # device 5 sits at mesh position (0, 1): it holds rows 0:2, columns 3:6
    idx = {s.device.id: s.index for s in out["y"].addressable_shards}
    assert idx[5] == (slice(0, 2), slice(3, 6)) and idx[4] == (slice(2, 4), slice(3, 6))


def test_device_put_inside_jit_keeps_the_value():
    mesh = _mesh((2, 4), ("i", "j"))
    x = RNG.standard_normal((4, 8))
    f = jit(lambda a: device_put(a * 2.0, NamedSharding(mesh, P("i", "j"))) + 1.0)
    np.testing.assert_allclose(np.asarray(f(xp.asarray(x))), 2 * x + 1, rtol=1e-12)


def test_shard_map_on_a_mesh_ordered_unlike_the_program():
    # jit's shardings name mesh A; the shard_map inside runs on mesh B, the same devices in another order:
    # its collectives and axis_index must follow B's positions, not the program's partition numbers
    devs = transforms.devices()
    mesh_a = _mesh((8,), ("d",))
    mesh_b = Mesh(np.array([devs[k] for k in (5, 2, 7, 0, 3, 6, 1, 4)]).reshape(2, 4), ("i", "j"))
    x = RNG.standard_normal((4, 8))

    def body(a):
        k = xp.astype(axis_index("i") * 4 + axis_index("j"), a.dtype)
        return ppermute(a, "j", [(c, (c + 1) % 4) for c in range(4)]) * 100.0 + psum(a, "i") + k
    f = shard_map(body, mesh_b, P("i", "j"), P("i", "j"))
    jf = jit(lambda v: f(v) * 1.0, in_shardings=NamedSharding(mesh_a, P(None, "d")))
    blocks = xp.asarray(x.reshape(2, 2, 4, 2).transpose(0, 2, 1, 3))
    ref = np.asarray(vmap(vmap(body, axis_name="j"), axis_name="i")(blocks)).transpose(0, 2, 1, 3).reshape(4, 8)
    np.testing.assert_allclose(np.asarray(jf(xp.asarray(x))), ref, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(f(xp.asarray(x))), ref, rtol=1e-12)


def test_scalars_over_a_mesh():
    mesh = _mesh((2, 4), ("i", "j"))
    x = RNG.standard_normal(8)
    f = jit(lambda a, s: a * s, in_shardings=(NamedSharding(mesh, P("j")), NamedSharding(mesh, P())))
    np.testing.assert_allclose(np.asarray(f(xp.asarray(x), xp.asarray(3.0))), 3 * x, rtol=1e-12)
    tot = shard_map(lambda a: psum(xp.sum(a), ("i", "j")), mesh, P(("i", "j")), P())(xp.asarray(x))
    assert tot.shape == ()
    np.testing.assert_allclose(float(tot), x.sum(), rtol=1e-12)


def test_chained_calls_do_not_deadlock():
    # each call takes the previous one's pending outputs: without waiting for them, XLA:CPU's pool threads
    # fill with partitions blocked in the next call's psum and the process is aborted
    mesh = _mesh((N,), ("i",))
    f = shard_map(lambda a: psum(a, "i") / 8.0, mesh, P("i"), P("i"))
    g = jit(lambda a: a - xp.mean(a, axis=0) + 1.0, in_shardings=NamedSharding(mesh, P("i")),
            out_shardings=NamedSharding(mesh, P("i")))
    y = xp.asarray(np.ones((N, 4)))
    for _ in range(100):
        y = g(f(y))
    np.testing.assert_allclose(np.asarray(y), np.ones((N, 4)))


def test_grad_with_jit_around_and_inside():
    mesh = _mesh((2, 4), ("i", "j"))
    x = RNG.standard_normal((4, 8))
    f = shard_map(lambda a: psum(a * a, "j"), mesh, P("i", "j"), P("i"))
    loss = lambda v: xp.sum(f(v) ** 2)
    s = (x.reshape(4, 4, 2) ** 2).sum(1)
    ref = 4 * np.repeat(s[:, None, :], 4, 1).reshape(4, 8) * x     # d/dx sum_rc (sum_j x^2)^2
    np.testing.assert_allclose(np.asarray(grad(jit(loss))(xp.asarray(x))), ref, rtol=1e-12)
    g = jit(grad(loss))(xp.asarray(x))                                # one SPMD program over the mesh
    np.testing.assert_allclose(np.asarray(g), ref, rtol=1e-12)
    assert isinstance(g.sharding, NamedSharding) and _devices_of(g) == list(range(N))


def test_arrays_already_laid_out_pass_as_they_are(monkeypatch):
    from xla import _jaxlib
    puts = []
    real = _jaxlib.put_tiles
    monkeypatch.setattr(_jaxlib, "put_tiles", lambda *a: puts.append(a) or real(*a))
    mesh = _mesh((N,), ("i",))
    x = RNG.standard_normal((N, 3))
    stacked = pmap(lambda a: a * 2.0)(xp.asarray(x))              # split along axis 0 over the 8 devices
    f = shard_map(lambda a: a + 1.0, mesh, P("i"), P("i"))
    out = f(stacked)
    auto = jit(lambda a: a * 1.0, in_shardings=NamedSharding(mesh, P("i")))(out)   # the partitioner's layout
    again = f(auto)
    np.testing.assert_allclose(np.asarray(again), 2 * x + 2, rtol=1e-12)
    assert len(puts) == 0   # no host round trip: every input already lay on the devices as asked
    f(xp.asarray(x))
    assert len(puts) == 1


def test_axis_index_over_several_axes_vs_vmap_and_numpy():
    devs = transforms.devices()
    for order in (range(8), (5, 2, 7, 0, 3, 6, 1, 4)):
        mesh = Mesh(np.array([devs[k] for k in order]).reshape(2, 4), ("i", "j"))

        def body(a):
            return a + xp.astype(axis_index(("i", "j")) * 100 + axis_index(("j", "i")), a.dtype)
        f = shard_map(body, mesh, P("i", "j"), P("i", "j"))
        x = np.zeros((2, 8))
        ij = np.arange(8).reshape(2, 4)                                    # row-major over (i, j)
        ji = np.arange(8).reshape(4, 2).T                                  # row-major over (j, i)
        ref = (ij * 100 + ji).repeat(2, 1)
        np.testing.assert_array_equal(np.asarray(f(xp.asarray(x))), ref)
        np.testing.assert_array_equal(np.asarray(jit(lambda v: f(v) * 1.0,
                                                     in_shardings=NamedSharding(_mesh((8,), ("d",)), P()))(
            xp.asarray(x))), ref)
        nested = vmap(vmap(body, axis_name="j"), axis_name="i")(xp.asarray(np.zeros((2, 4, 1, 2))))
        np.testing.assert_array_equal(np.asarray(nested).transpose(0, 2, 1, 3).reshape(2, 8), ref)
