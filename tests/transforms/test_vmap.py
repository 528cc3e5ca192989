"""vmap: in_axes/out_axes (ints, None, pytrees), axis_size, errors, compositions."""
import numpy as np
import pytest

import array_namespace as xp
from transforms import grad, jit, vmap


def test_in_axes_out_axes():
    a = np.random.default_rng(0).standard_normal((3, 4))
    b = np.random.default_rng(1).standard_normal(4)
    out = vmap(lambda x, y: x * y, in_axes=(1, None), out_axes=1)(xp.asarray(a.T), xp.asarray(b))
    np.testing.assert_allclose(np.asarray(out), (a * b).T)


def test_pytree_in_axes():
    def f(p, x):
        return p["w"] * x + p["b"]
    p = {"w": xp.asarray([1.0, 2.0, 3.0]), "b": xp.asarray(0.5)}
    xs = xp.asarray([[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]])
    out = vmap(f, in_axes=({"w": None, "b": None}, 0))(p, xs)
    np.testing.assert_allclose(np.asarray(out), np.asarray(xs) * [1, 2, 3] + 0.5)


def test_axis_size_with_no_mapped_inputs():
    out = vmap(lambda: xp.ones(2), in_axes=(), axis_size=3)()
    assert out.shape == (3, 2)


def test_mismatched_axis_sizes_name_them():
    with pytest.raises(ValueError, match="size 3.*size 4|size 4.*size 3"):
        vmap(lambda x, y: x + y)(xp.ones(3), xp.ones(4))


def test_in_axes_length_mismatch():
    with pytest.raises(ValueError, match="in_axes"):
        vmap(lambda x, y: x + y, in_axes=(0,))(xp.ones(3), xp.ones(3))


def test_nested_vmap_matches_loop():
    a = np.random.default_rng(2).standard_normal((2, 3, 4))
    out = vmap(vmap(lambda r: xp.sum(r ** 2)))(xp.asarray(a))
    np.testing.assert_allclose(np.asarray(out), (a ** 2).sum(-1))


def test_per_example_gradients():
    def loss(w, x):
        return xp.sum((x @ w) ** 2)
    w = xp.asarray(np.random.default_rng(3).standard_normal((3,)))
    xs = xp.asarray(np.random.default_rng(4).standard_normal((6, 3)))
    got = jit(vmap(grad(loss), in_axes=(None, 0)))(w, xs)
    want = np.stack([np.asarray(grad(loss)(w, xs[i])) for i in range(6)])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)


def test_vmap_of_mutation_matches_at():
    def f(x):
        y = x * 1.0
        y[0] = y[1] + 1.0
        return y
    xs = xp.asarray(np.arange(6.0).reshape(2, 3))
    want = np.stack([np.asarray(f(xs[i])) for i in range(2)])
    np.testing.assert_allclose(np.asarray(vmap(f)(xs)), want)


def test_branching_on_batched_value_is_type_error():
    # (every element agreeing, the branch they all take runs: tests/transforms/test_vmap_values.py)
    with pytest.raises(TypeError, match="vmap"):
        vmap(lambda x: x if x > 0 else -x)(xp.asarray([1.0, -1.0, 1.0]))
