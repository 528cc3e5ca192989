"""pmap on 8 CPU devices (run by test_pmap.py in a subprocess with ARRAY_NAMESPACE_CPU_DEVICES=8): each
collective against vmap(axis_name=) and NumPy; grad inside and around; jit/vmap compositions; the
seed's random example; bad input."""
import numpy as np
import pytest

import array_namespace as xp
import transforms
from finite_diff import central_diff
from transforms import (all_gather, all_to_all, axis_index, grad, jit, make_jaxpr, pmap, pmax, pmean, pmin,
                        ppermute, psum, psum_scatter, random, vmap)

N = 8
RNG = np.random.default_rng(0)


def test_eight_devices():
    assert transforms.device_count() == N


COLLECTIVES = {
    "psum": (lambda a: psum(a, "i"), lambda x: np.broadcast_to(x.sum(0), x.shape)),
    "pmean": (lambda a: pmean(a, "i"), lambda x: np.broadcast_to(x.mean(0), x.shape)),
    "pmax": (lambda a: pmax(a, "i"), lambda x: np.broadcast_to(x.max(0), x.shape)),
    "pmin": (lambda a: pmin(a, "i"), lambda x: np.broadcast_to(x.min(0), x.shape)),
    "all_gather": (lambda a: all_gather(a, "i"), lambda x: np.broadcast_to(x, (N,) + x.shape)),
    "all_gather_tiled_axis1": (lambda a: all_gather(a, "i", axis=1, tiled=True),
                               lambda x: np.broadcast_to(np.concatenate(list(x), 1), (N, 8, 8 * N))),
    "psum_scatter": (lambda a: psum_scatter(a, "i"), lambda x: x.sum(0)),
    "psum_scatter_tiled": (lambda a: psum_scatter(a, "i", scatter_dimension=1, tiled=True),
                           lambda x: np.stack([x.sum(0)[:, j:j + 1] for j in range(N)])),
    "all_to_all": (lambda a: all_to_all(a, "i", 0, 1),
                   lambda x: np.stack([np.stack([x[k][j] for k in range(N)], 1) for j in range(N)])),
    "all_to_all_tiled": (lambda a: all_to_all(a, "i", 1, 0, tiled=True),
                         lambda x: np.stack([np.concatenate([x[k][:, j:j + 1] for k in range(N)], 0)
                                             for j in range(N)])),
    "ppermute": (lambda a: ppermute(a, "i", [(k, (k + 1) % N) for k in range(N)]), lambda x: np.roll(x, 1, 0)),
    "ppermute_partial": (lambda a: ppermute(a, "i", [(0, 3), (5, 1)]),
                         lambda x: np.stack([x[5] if j == 1 else x[0] if j == 3 else 0 * x[0] for j in range(N)])),
    "axis_index": (lambda a: a * xp.astype(axis_index("i"), a.dtype), lambda x: x * np.arange(N)[:, None, None]),
}


@pytest.mark.parametrize("name", sorted(COLLECTIVES))
def test_collective_pmap_vs_vmap_vs_numpy(name):
    f, ref = COLLECTIVES[name]
    x = RNG.standard_normal((N, 8, 8))
    p = pmap(f, "i")(xp.asarray(x))
    v = vmap(f, axis_name="i")(xp.asarray(x))
    assert len(p._v._sharding.devices) == N   # computed on the 8 devices, not on one
    np.testing.assert_allclose(np.asarray(p), ref(x), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.asarray(p), np.asarray(v), rtol=1e-12, atol=1e-12)


def test_result_is_one_array_over_the_devices():
    from xla import _jaxlib
    out = pmap(lambda a: a + 1.0)(xp.asarray(np.zeros((N, 3))))
    raw = out._v
    assert isinstance(raw._sharding, _jaxlib.ManyDevices) and raw._sharding.stacked
    assert sorted(d.id for d in raw._sharding.devices) == list(range(N))
    np.testing.assert_array_equal(np.asarray(out), np.ones((N, 3)))
    again = pmap(lambda a: a * 2.0)(out)   # already split over the devices: passed as it is
    np.testing.assert_array_equal(np.asarray(again), np.full((N, 3), 2.0))
    np.testing.assert_array_equal(np.asarray(xp.sum(out, axis=0)), np.full(3, N))   # eager ops read it


def test_in_axes_out_axes_and_replicated_values():
    x = RNG.standard_normal((3, N))
    w = RNG.standard_normal(3)
    out = pmap(lambda a, b: a * b, in_axes=(1, None), out_axes=1)(xp.asarray(x), xp.asarray(w))
    np.testing.assert_allclose(np.asarray(out), x * w[:, None])
    tot = pmap(lambda a: psum(a, "i"), "i", in_axes=1, out_axes=None)(xp.asarray(x))
    assert tot.shape == (3,)
    np.testing.assert_allclose(np.asarray(tot), x.sum(1))
    tree = pmap(lambda d: {"s": d["a"] + d["b"], "n": psum(1, "i")}, "i")({"a": xp.asarray(np.ones((N, 2))),
                                                                          "b": xp.asarray(np.ones((N, 2)))})
    np.testing.assert_array_equal(np.asarray(tree["s"]), np.full((N, 2), 2.0))
    np.testing.assert_array_equal(np.asarray(tree["n"]), np.full(N, N))
    two = pmap(lambda a: a * 3.0, devices=transforms.devices()[2:4])(xp.asarray(np.ones((2, 2))))
    np.testing.assert_array_equal(np.asarray(two), np.full((2, 2), 3.0))
    assert sorted(d.id for d in two._v._sharding.devices) == [2, 3]
    st = pmap(lambda a, k: a * k, static_broadcasted_argnums=1)(xp.asarray(np.ones(N)), 5.0)
    np.testing.assert_array_equal(np.asarray(st), np.full(N, 5.0))


def _loss_np(x, w):
    h = np.tanh(x @ w)
    return float(np.sum((h - h.mean(0)) ** 2))


def test_grad_around_and_inside_pmap():
    x = RNG.standard_normal((N, 3))
    w = RNG.standard_normal((3, 2))

    def per_member(a, wv):
        h = xp.tanh(a @ wv)
        return xp.sum((h - pmean(h, "i")) ** 2)
    # around: the gradient of the total over members, by x (mapped) and w (replicated)
    total = lambda xv, wv: xp.sum(pmap(per_member, "i", in_axes=(0, None))(xv, wv))
    gx, gw = grad(total, argnums=(0, 1))(xp.asarray(x), xp.asarray(w))
    np.testing.assert_allclose(np.asarray(gx), central_diff(lambda v: _loss_np(v, w), x), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(np.asarray(gw), central_diff(lambda v: _loss_np(x, v), w), rtol=1e-6, atol=1e-6)
    # inside: data-parallel gradients of a replicated parameter, averaged with pmean
    def step(a, wv):
        g = grad(lambda v: xp.sum(xp.tanh(a @ v) ** 2))(wv)
        return pmean(g, "i")
    g_p = pmap(step, "i", in_axes=(0, None))(xp.asarray(x), xp.asarray(w))
    g_v = vmap(step, in_axes=(0, None), axis_name="i")(xp.asarray(x), xp.asarray(w))
    ref = central_diff(lambda v: float(np.sum(np.tanh(x @ v) ** 2)), w) / N
    np.testing.assert_allclose(np.asarray(g_p), np.broadcast_to(ref, (N, 3, 2)), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(np.asarray(g_p), np.asarray(g_v), rtol=1e-12, atol=1e-12)
    # psum's transpose inside pmap is psum, as under vmap(axis_name=)
    gi = pmap(grad(lambda a: psum(a ** 2, "i")), "i")(xp.asarray(x[:, 0]))
    np.testing.assert_allclose(np.asarray(gi), 2 * x[:, 0] * N)


def test_compositions_with_jit_and_vmap():
    x = RNG.standard_normal((N, 4, 3))
    f = lambda a: a - pmean(a, "i")
    ref = x - x.mean(0)
    np.testing.assert_allclose(np.asarray(jit(pmap(f, "i"))(xp.asarray(x))), ref)          # jit of pmap
    np.testing.assert_allclose(np.asarray(pmap(jit(f), "i")(xp.asarray(x))), ref)          # pmap of jit
    # vmap of pmap: the vmapped axis (size 4) rides along inside each member
    out = vmap(pmap(f, "i"), in_axes=1, out_axes=1)(xp.asarray(x))
    np.testing.assert_allclose(np.asarray(out), ref)
    # pmap of vmap, with a collective over each axis
    g = pmap(vmap(lambda a: psum(a, "i") + pmax(a, "j"), axis_name="j"), "i")
    np.testing.assert_allclose(np.asarray(g(xp.asarray(x))), x.sum(0) + x.max(1, keepdims=True))
    # vmap of pmap with the vmap axis named and used inside the pmap body
    h = vmap(pmap(lambda a: psum(a, "i") * psum(a, "v"), "i"), in_axes=1, out_axes=1, axis_name="v")
    np.testing.assert_allclose(np.asarray(h(xp.asarray(x))), x.sum(0) * x.sum(1, keepdims=True))
    text = str(make_jaxpr(pmap(f, "i"))(xp.asarray(x)))
    assert "pmap[" in text and "psum[axes=(i,)]" in text and "axis_size=8" in text


def test_seed_random_example():
    keys = random.split(random.key(0), N)
    mats = pmap(lambda key: random.normal(key, (50, 60)))(keys)
    assert mats.shape == (N, 50, 60)
    # bit for bit what one device computes for each key, with jit and eagerly (samplers are one staged call,
    # compiled eagerly too)
    one = jit(lambda key: random.normal(key, (50, 60)))
    np.testing.assert_array_equal(np.asarray(mats), np.stack([np.asarray(one(keys[i])) for i in range(N)]))
    per_key = np.stack([np.asarray(random.normal(keys[i], (50, 60))) for i in range(N)])
    np.testing.assert_array_equal(np.asarray(mats), per_key)


def test_bad_input():
    with pytest.raises(ValueError, match=r"size 9, more than the 8 local devices"):
        pmap(lambda a: a)(xp.ones((9, 2)))
    with pytest.raises(ValueError, match=r"inconsistent sizes.*size 8.*size 4|inconsistent sizes.*size 4.*size 8"):
        pmap(lambda a, b: a + b)(xp.ones((8, 2)), xp.ones((4, 2)))
    with pytest.raises(ValueError, match=r"axis_size=4 but the mapped arguments have leading size 8"):
        pmap(lambda a: a, axis_size=4)(xp.ones((8, 2)))
    with pytest.raises(ValueError, match=r"in_axes=2 does not fit an argument with 2 dimensions"):
        pmap(lambda a: a, in_axes=2)(xp.ones((8, 2)))
    with pytest.raises(ValueError, match=r"in_axes has 1 entries but the function was called with 2"):
        pmap(lambda a, b: a, in_axes=(0,))(xp.ones(8), xp.ones(8))
    with pytest.raises(ValueError, match=r"axis has size 8 but devices= lists 2"):
        pmap(lambda a: a, devices=transforms.devices()[:2])(xp.ones(8))
    with pytest.raises(NameError, match=r"'j'.*bound here are \['i'\]"):
        pmap(lambda a: psum(a, "j"), "i")(xp.ones(8))


def test_more_compositions():
    x = RNG.standard_normal((N, 3))
    c = RNG.standard_normal(3)
    cap = xp.asarray(c)
    f = pmap(lambda a: xp.sin(a) * cap - pmean(a, "i"), "i")   # a captured array becomes a replicated operand
    ref = lambda v: np.sin(v) * c - v.mean(0)
    np.testing.assert_allclose(np.asarray(f(xp.asarray(x))), ref(x))
    g = grad(lambda v: xp.sum(jit(f)(v) ** 2))(xp.asarray(x))             # grad of jit of pmap
    np.testing.assert_allclose(np.asarray(g), central_diff(lambda v: float(np.sum(ref(v) ** 2)), x),
                               rtol=1e-6, atol=1e-6)
    # vmap over an argument the pmap replicates (in_axes=None): it stays replicated per vmap element
    h = vmap(pmap(lambda a, b: a * b, in_axes=(0, None)), in_axes=(None, 0))
    w = RNG.standard_normal((5, 3))
    np.testing.assert_allclose(np.asarray(h(xp.asarray(x), xp.asarray(w))), x[None] * w[:, None])
    # a pmap inside a pmap's body runs as its vmap on the outer member's device
    inner = pmap(lambda r: pmap(lambda s: s - pmean(s, "j"), "j")(r) + psum(r, "i"), "i")
    y = RNG.standard_normal((N, 2, 3))
    np.testing.assert_allclose(np.asarray(inner(xp.asarray(y))), y - y.mean(1, keepdims=True) + y.sum(0))


def test_pmap_result_into_one_device_programs():
    """A result sharded over the devices given to jit (first call and the C++ fast path) and to eager ops:
    gathered, values as NumPy's."""
    x = xp.reshape(xp.arange(16.0), (8, 2))
    y = pmap(lambda a: a * 2 + psum(a, "i"), axis_name="i")(x)
    want = np.arange(16.0).reshape(8, 2) * 2 + np.arange(16.0).reshape(8, 2).sum(0)
    g = jit(lambda b: xp.sum(b, axis=0) + 1)
    for _ in range(3):
        np.testing.assert_allclose(np.asarray(g(y)), want.sum(0) + 1)
    np.testing.assert_allclose(np.asarray(xp.sin(y)), np.sin(want))


def test_batched_sub_jaxpr_cache_keys_on_the_axis_name():
    f = jit(lambda a: psum(a, "i"))
    x3, x2 = np.ones((2, 3, 4)), np.arange(12.0).reshape(3, 4)
    np.testing.assert_allclose(np.asarray(vmap(vmap(f), axis_name="i")(x3)), np.full((2, 3, 4), 2.0))
    np.testing.assert_allclose(np.asarray(vmap(f, axis_name="i")(x2)), np.broadcast_to(x2.sum(0), (3, 4)))


def test_chained_collective_calls_do_not_deadlock():
    """y = f(y) with a psum, many times: each program waits for its inputs before it is queued (XLA:CPU
    aborted the process on a rendezvous timeout when programs queued on pending outputs)."""
    f = pmap(lambda a: psum(a, "i") * (1.0 / N) + 1.0, axis_name="i")
    y = xp.ones((N, 1000))
    for _ in range(100):
        y = f(y)
    np.testing.assert_array_equal(np.asarray(y), np.full((N, 1000), 101.0))
