"""Collectives under vmap(axis_name=) (their single-device reference semantics) against NumPy and
Python loops; gradients against finite differences; jit inside and around; unbound axes and bad input."""
import numpy as np
import pytest

import array_namespace as xp
from finite_diff import central_diff
from transforms import (all_gather, all_to_all, axis_index, grad, jit, make_jaxpr, pmax, pmean, pmin, ppermute,
                        psum, psum_scatter, vmap)

RNG = np.random.default_rng(0)


def _run(f, x, **kw):
    return np.asarray(vmap(f, axis_name="i", **kw)(xp.asarray(x)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
@pytest.mark.parametrize("shape", [(5,), (4, 3), (2, 3, 2)])
def test_reductions_vs_numpy(dtype, shape):
    x = (RNG.standard_normal(shape) * 10).astype(dtype)
    n = shape[0]
    for f, ref in [(psum, x.sum(0)), (pmax, x.max(0)), (pmin, x.min(0))]:
        out = _run(lambda a: f(a, "i"), x)
        assert out.dtype == dtype
        np.testing.assert_allclose(out, np.broadcast_to(ref, x.shape), rtol=1e-6)
    m = _run(lambda a: pmean(a, "i"), x)
    assert m.dtype == (np.float64 if dtype == np.int32 else dtype)
    np.testing.assert_allclose(m, np.broadcast_to(x.sum(0, dtype=np.float64) / n, x.shape), rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [2, 3, 4, 8])
def test_pmean_is_the_psum_divided_bit_for_bit(dtype, n):
    """pmean over n members is psum / n exactly, also where n is a power of two (then a multiply by 1 / n, the
    same bits: one correctly rounded x / 2**k either way, subnormal results included), eagerly and under jit."""
    tiny = np.finfo(dtype).tiny
    x = (RNG.standard_normal((n, 7)) * 10).astype(dtype)
    x[:, 0] = tiny * np.arange(1, n + 1)   # (sums whose mean is subnormal or just above)
    x[:, 1] = np.finfo(dtype).max / n
    x[:, 2] = 3 * tiny / n
    for run in (lambda f: _run(f, x), lambda f: np.asarray(jit(vmap(f, axis_name="i"))(xp.asarray(x)))):
        total = run(lambda a: psum(a, "i"))
        mean = run(lambda a: pmean(a, "i"))
        assert mean.dtype == dtype
        np.testing.assert_array_equal(mean, total / np.asarray(n, dtype))


def test_psum_bool_counts_and_pytree():
    x = np.array([True, False, True, True])
    np.testing.assert_array_equal(_run(lambda a: psum(a, "i"), x), [3] * 4)
    tree = {"a": xp.asarray(np.arange(4.0)), "b": (xp.asarray(np.ones((4, 2))),)}
    out = vmap(lambda t: psum(t, "i"), axis_name="i")(tree)
    np.testing.assert_allclose(np.asarray(out["a"]), [6.0] * 4)
    np.testing.assert_allclose(np.asarray(out["b"][0]), np.full((4, 2), 4.0))


def test_unmapped_operand_and_in_axes_out_axes():
    x = RNG.standard_normal((3, 5))
    c = RNG.standard_normal(3)
    # an operand that is not mapped sums to n copies of itself
    out = vmap(lambda a, b: psum(b, "i") + a, in_axes=(1, None), axis_name="i")(xp.asarray(x), xp.asarray(c))
    np.testing.assert_allclose(np.asarray(out), x.T + 5 * c)
    out = vmap(lambda a: a - pmean(a, "i"), in_axes=1, out_axes=1, axis_name="i")(xp.asarray(x))
    np.testing.assert_allclose(np.asarray(out), x - x.mean(1, keepdims=True))
    out = vmap(lambda a: psum(1.0, "i") * a, axis_name="i")(xp.asarray(c))
    np.testing.assert_allclose(np.asarray(out), 3 * c)


def test_nested_axes_multi_axis_and_outer_axis():
    x = RNG.standard_normal((3, 4, 2))
    both = vmap(vmap(lambda a: psum(a, ("i", "j")), axis_name="j"), axis_name="i")(xp.asarray(x))
    np.testing.assert_allclose(np.asarray(both), np.broadcast_to(x.sum((0, 1)), x.shape))
    outer = vmap(vmap(lambda a: psum(a, "i")), axis_name="i")(xp.asarray(x))   # inner axis unnamed
    np.testing.assert_allclose(np.asarray(outer), np.broadcast_to(x.sum(0), x.shape))
    inner = vmap(vmap(lambda a: pmax(a, "j"), axis_name="j"), axis_name="i")(xp.asarray(x))
    np.testing.assert_allclose(np.asarray(inner), np.broadcast_to(x.max(1, keepdims=True), x.shape))
    # same name twice: the innermost binding wins
    shadow = vmap(vmap(lambda a: psum(a, "i"), axis_name="i"), axis_name="i")(xp.asarray(x))
    np.testing.assert_allclose(np.asarray(shadow), np.broadcast_to(x.sum(1, keepdims=True), x.shape))


@pytest.mark.parametrize("tiled", [False, True])
@pytest.mark.parametrize("axis", [0, 1])
def test_all_gather(tiled, axis):
    x = RNG.standard_normal((4, 3, 2))
    out = _run(lambda a: all_gather(a, "i", axis=axis, tiled=tiled), x)
    ref = np.concatenate(list(x), axis) if tiled else np.stack(list(x), axis)
    np.testing.assert_allclose(out, np.broadcast_to(ref, (4,) + ref.shape))
    # over an outer axis while an inner (unnamed) vmap carries its own batch axis along
    y = RNG.standard_normal((4, 5, 3, 2))
    out = np.asarray(vmap(vmap(lambda a: all_gather(a, "i", axis=axis, tiled=tiled)), axis_name="i")(xp.asarray(y)))
    for k in range(4):
        for b in range(5):
            parts = [y[m, b] for m in range(4)]
            np.testing.assert_allclose(out[k, b], np.concatenate(parts, axis) if tiled else np.stack(parts, axis))


@pytest.mark.parametrize("tiled", [False, True])
@pytest.mark.parametrize("sd", [0, 1])
def test_psum_scatter_vs_loop(tiled, sd):
    n = 4
    shape = [3, 2]
    shape[sd] = n * 2 if tiled else n
    x = RNG.standard_normal((n,) + tuple(shape))
    out = _run(lambda a: psum_scatter(a, "i", scatter_dimension=sd, tiled=tiled), x)
    total = x.sum(0)
    for j in range(n):
        blk = np.take(total, range(2 * j, 2 * j + 2), axis=sd) if tiled else np.take(total, j, axis=sd)
        np.testing.assert_allclose(out[j], blk)


@pytest.mark.parametrize("tiled", [False, True])
@pytest.mark.parametrize("split,concat", [(0, 1), (1, 0), (0, 0), (1, 1)])
def test_all_to_all_vs_loop(tiled, split, concat):
    n = 3
    shape = [2, 5]
    shape[split] = n * 2 if tiled else n
    x = RNG.standard_normal((n,) + tuple(shape))
    out = _run(lambda a: all_to_all(a, "i", split, concat, tiled=tiled), x)
    for j in range(n):
        if tiled:
            chunks = [np.take(x[k], range(2 * j, 2 * j + 2), axis=split) for k in range(n)]
            ref = np.concatenate(chunks, concat)
        else:
            chunks = [np.take(x[k], j, axis=split) for k in range(n)]
            ref = np.stack(chunks, concat)
        np.testing.assert_allclose(out[j], ref)


def test_ppermute_and_axis_index():
    x = RNG.standard_normal((4, 3))
    perm = [(0, 1), (1, 2), (2, 3), (3, 0)]
    np.testing.assert_allclose(_run(lambda a: ppermute(a, "i", perm), x), np.roll(x, 1, 0))
    part = _run(lambda a: ppermute(a, "i", [(0, 2), (3, 1)]), x)
    np.testing.assert_allclose(part, np.stack([np.zeros(3), x[3], x[0], np.zeros(3)]))
    np.testing.assert_array_equal(_run(lambda a: axis_index("i") * 10, x), [0, 10, 20, 30])
    np.testing.assert_array_equal(vmap(lambda: axis_index("i"), in_axes=(), axis_size=3, axis_name="i")(), [0, 1, 2])


def _total_fd(f_np, x, w):
    return central_diff(lambda v: float(np.sum(w * f_np(v))), x)


CASES = {
    "psum": (lambda a: psum(a, "i"), lambda v: np.broadcast_to(v.sum(0), v.shape)),
    "pmean": (lambda a: pmean(a, "i"), lambda v: np.broadcast_to(v.mean(0), v.shape)),
    "pmax": (lambda a: pmax(a, "i"), lambda v: np.broadcast_to(v.max(0), v.shape)),
    "pmin": (lambda a: pmin(a, "i"), lambda v: np.broadcast_to(v.min(0), v.shape)),
    "all_gather": (lambda a: all_gather(a, "i", axis=1), lambda v: np.broadcast_to(np.stack(list(v), 1), (4,) + v.shape[1:2] + (4,) + v.shape[2:])),
    "psum_scatter": (lambda a: psum_scatter(a, "i", scatter_dimension=1),
                     lambda v: np.stack([v.sum(0)[:, j] for j in range(4)])),
    "all_to_all": (lambda a: all_to_all(a, "i", 1, 0),
                   lambda v: np.stack([np.stack([v[k][:, j] for k in range(4)], 0) for j in range(4)])),
    "ppermute": (lambda a: ppermute(a, "i", [(0, 2), (2, 1), (1, 3)]),
                 lambda v: np.stack([np.zeros_like(v[0]), v[2], v[0], v[1]])),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradients_vs_finite_differences(name):
    f, f_np = CASES[name]
    x = RNG.standard_normal((4, 3, 4))
    out_shape = f_np(x).shape
    w = RNG.standard_normal(out_shape)
    np.testing.assert_allclose(np.asarray(vmap(f, axis_name="i")(xp.asarray(x))), f_np(x), rtol=1e-12, atol=1e-12)
    # grad around the vmap: of the total over members
    g_out = grad(lambda v: xp.sum(xp.asarray(w) * vmap(f, axis_name="i")(v)))(xp.asarray(x))
    np.testing.assert_allclose(np.asarray(g_out), _total_fd(f_np, x, w), rtol=1e-6, atol=1e-6)
    # grad inside the vmap (transpose rules): member k's cotangent is w[k]; the result is the gradient of
    # the total over members, as JAX's transposes give it (pmax/pmin: their jvp, then psum's transpose)
    g_in = vmap(grad(lambda v, wk: xp.sum(wk * f(v))), axis_name="i")(xp.asarray(x), xp.asarray(w))
    np.testing.assert_allclose(np.asarray(g_in), _total_fd(f_np, x, w), rtol=1e-6, atol=1e-6)


def test_psum_grad_inside_is_psum_of_cotangent():
    x = np.arange(4.0)
    g = vmap(grad(lambda a: psum(a ** 2, "i")), axis_name="i")(xp.asarray(x))
    np.testing.assert_allclose(np.asarray(g), 2 * x * 4)   # JAX: psum transposes to psum
    g = vmap(grad(lambda a: pmean(a ** 2, "i")), axis_name="i")(xp.asarray(x))
    np.testing.assert_allclose(np.asarray(g), 2 * x)


def test_pmax_jvp_averages_ties():
    from transforms import jvp
    x = np.array([1.0, 3.0, 3.0, 2.0])
    t = np.array([10.0, 20.0, 40.0, 80.0])
    _, tan = jvp(vmap(lambda a: pmax(a, "i"), axis_name="i"), (xp.asarray(x),), (xp.asarray(t),))
    np.testing.assert_allclose(np.asarray(tan), [30.0] * 4)


def test_jit_inside_and_around():
    x = RNG.standard_normal((4, 3))
    inner = vmap(lambda a: jit(lambda b: b - pmean(b, "i"))(a), axis_name="i")(xp.asarray(x))
    np.testing.assert_allclose(np.asarray(inner), x - x.mean(0))
    outer = jit(vmap(lambda a: all_gather(a, "i", tiled=True) * xp.astype(axis_index("i"), xp.float64), axis_name="i"))(xp.asarray(x))
    np.testing.assert_allclose(np.asarray(outer), np.arange(4)[:, None] * x.reshape(-1)[None])
    # a jitted body whose inputs are not mapped but which computes over the axis
    const = vmap(lambda a: jit(lambda: psum(1.0, "i") + xp.astype(axis_index("i"), xp.float64))(), axis_name="i")(xp.asarray(x))
    np.testing.assert_allclose(np.asarray(const), 4.0 + np.arange(4))
    text = str(make_jaxpr(vmap(lambda a: psum(a, "i"), axis_name="i"))(xp.asarray(x)))
    assert "reduce_sum" in text and "psum" not in text
    staged = str(make_jaxpr(vmap(vmap(lambda b: psum(b, "j"), axis_name="i"), axis_name="j"))(
        xp.asarray(RNG.standard_normal((2, 3, 4)))))
    assert "reduce_sum[axes=(0,)]" in staged and "psum" not in staged


def test_unbound_axis_errors_name_the_axes():
    x = xp.asarray(np.ones(3))
    with pytest.raises(NameError, match=r"'i'.*bound here are \[\]"):
        psum(x, "i")
    with pytest.raises(NameError, match=r"'k'.*bound here are \['i', 'j'\]"):
        vmap(vmap(lambda a: all_gather(a, "k"), axis_name="j"), axis_name="i")(xp.ones((2, 3)))
    with pytest.raises(NameError, match="'i'"):
        make_jaxpr(lambda a: axis_index("i"))(x)
    with pytest.raises(NameError, match="'i'"):
        jit(lambda a: pmax(a, "i"))(x)


def test_bad_input():
    x = xp.ones((4, 3))
    with pytest.raises(ValueError, match="psum_scatter.*size 3.*axis size 4"):
        vmap(lambda a: psum_scatter(a, "i", scatter_dimension=0), axis_name="i")(x)
    with pytest.raises(ValueError, match="all_to_all.*split_axis"):
        vmap(lambda a: all_to_all(a, "i", 0, 0), axis_name="i")(x)
    with pytest.raises(ValueError, match="ppermute.*outside"):
        vmap(lambda a: ppermute(a, "i", [(0, 4)]), axis_name="i")(x)
    with pytest.raises(ValueError, match="ppermute.*repeats"):
        vmap(lambda a: ppermute(a, "i", [(0, 1), (2, 1)]), axis_name="i")(x)
    with pytest.raises(ValueError, match="all_gather: axis=3"):
        vmap(lambda a: all_gather(a, "i", axis=3), axis_name="i")(x)
    with pytest.raises(ValueError, match="one axis"):
        vmap(lambda a: all_gather(a, ("i", "i")), axis_name="i")(x)
    with pytest.raises(TypeError, match="hashable"):
        vmap(lambda a: a, axis_name=["i"])
