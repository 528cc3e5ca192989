"""remat.py (checkpoint): values and derivatives under every transform against NumPy and finite
differences; the saving policies change only what the backward pass keeps.

(The first checkpoint tests live in test_custom_derivatives.py; these cover jvp, vmap, jit, second
order and the policies, all built on the shared jaxpr transforms.)
"""
import numpy as np

import array_namespace as xp
from finite_diff import central_diff
from transforms import (checkpoint, dots_saveable, everything_saveable, grad, jit, jvp, make_jaxpr,
                        nothing_saveable, vmap)

RNG = np.random.default_rng(3)
W = RNG.standard_normal((3, 3))


def block(x):
    return xp.tanh(xp.sin(x @ xp.asarray(W)) * 2.0)


def block_np(x):
    return np.tanh(np.sin(x @ W) * 2.0)


def loss_np(x):
    return float(np.sum(block_np(block_np(x)) ** 2))


def test_values_eager_jit_vmap_match_numpy():
    f = checkpoint(block)
    x = RNG.standard_normal((4, 3))
    np.testing.assert_allclose(np.asarray(f(xp.asarray(x))), block_np(x), rtol=1e-13)
    np.testing.assert_allclose(np.asarray(jit(f)(xp.asarray(x))), block_np(x), rtol=1e-13)
    xs = RNG.standard_normal((5, 2, 3))
    np.testing.assert_allclose(np.asarray(vmap(f)(xp.asarray(xs))), np.stack([block_np(v) for v in xs]),
                               rtol=1e-13)


def test_grad_and_jvp_vs_finite_differences_for_every_policy():
    x = RNG.standard_normal((2, 3))
    want = central_diff(loss_np, x)
    t = RNG.standard_normal((2, 3))
    for policy in (nothing_saveable, dots_saveable, everything_saveable):
        f = checkpoint(block, policy=policy)
        loss = lambda v: xp.sum(f(f(v)) ** 2)
        np.testing.assert_allclose(np.asarray(grad(loss)(xp.asarray(x))), want, rtol=1e-6, atol=1e-8)
        _, tan = jvp(loss, (xp.asarray(x),), (xp.asarray(t),))
        np.testing.assert_allclose(float(tan), np.sum(want * t), rtol=1e-6, atol=1e-8)


def test_second_order_vs_finite_differences_of_the_gradient():
    f = checkpoint(lambda v: xp.sin(v) * v)
    g = grad(lambda v: xp.sum(f(v)))                  # d/dv sum(sin v * v) = cos v * v + sin v
    x = RNG.standard_normal(4)
    gg = grad(lambda v: xp.sum(g(v)))(xp.asarray(x))
    fd = central_diff(lambda v: float(np.sum(np.cos(v) * v + np.sin(v))), x)
    np.testing.assert_allclose(np.asarray(gg), fd, rtol=1e-6, atol=1e-8)


def test_per_example_gradients_vmap_of_grad_vs_loop():
    f = checkpoint(block)
    xs = RNG.standard_normal((3, 1, 3))
    got = vmap(grad(lambda v: xp.sum(f(v) ** 2)))(xp.asarray(xs))
    for i in range(3):
        fd = central_diff(lambda v: float(np.sum(block_np(v) ** 2)), xs[i])
        np.testing.assert_allclose(np.asarray(got[i]), fd, rtol=1e-6, atol=1e-8)


def test_policy_decides_what_is_saved():
    """y = x @ W; y * y: the backward pass needs only y. Saving nothing recomputes the matmul there;
    saving dots keeps y (one matmul fewer); the gradient is the same and matches 2 y W^T."""
    x = RNG.standard_normal((2, 3))

    def square_of_dot(v):
        y = v @ xp.asarray(W)
        return y * y

    def n_dots_and_grad(policy):
        f = checkpoint(square_of_dot, policy=policy)
        g = grad(lambda v: xp.sum(f(v)))
        return str(make_jaxpr(g)(xp.asarray(x))).count("dot_general"), np.asarray(g(xp.asarray(x)))
    (n_none, g_none), (n_dots, g_dots) = n_dots_and_grad(nothing_saveable), n_dots_and_grad(dots_saveable)
    assert (n_none, n_dots) == (3, 2)
    want = 2 * (x @ W) @ W.T
    np.testing.assert_allclose(g_none, want, rtol=1e-12)
    np.testing.assert_allclose(g_dots, want, rtol=1e-12)


def test_a_policy_that_is_not_callable_is_a_type_error_at_checkpoint():
    """checkpoint(f, policy="nope") was accepted silently (issue 24): a TypeError naming policy now."""
    import pytest
    for bad in ("nope", 3):
        with pytest.raises(TypeError, match="checkpoint: policy"):
            checkpoint(lambda v: v, policy=bad)
    with pytest.raises(TypeError, match="checkpoint: fun"):
        checkpoint(3)
    assert float(grad(checkpoint(lambda v: v * v, policy=None))(xp.asarray(3.0))) == 6.0
