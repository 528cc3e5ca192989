"""xla/lower_custom.py: stop_gradient, custom_jvp/custom_vjp calls, checkpoint and custom_lin lower to
their inlined bodies: under jit the values are the primal function's (NumPy oracle), the derivatives
are the custom rules' (checked against their closed forms), and nothing of the rule leaks into values."""
import numpy as np
import pytest

import array_namespace as xp
from lower_harness import Case, check, lowered_by, prims_of
from transforms import checkpoint, custom_jvp, custom_vjp, grad, jit, jvp, make_jaxpr, stop_gradient, vjp

X = np.array([0.3, -1.2, 2.0])


@custom_jvp
def softplus(x):
    return xp.log1p(xp.exp(x))


softplus.defjvp(lambda p, t: (softplus(p[0]), t[0] * 7.0))   # a deliberately different derivative


@custom_vjp
def cube(x):
    return x * x * x


cube.defvjp(lambda x: (cube(x), x), lambda x, g: (g * 100.0 * x,))

CASES = [
    Case("stop_gradient", lambda x: stop_gradient(x) * x, lambda x: x * x, [X]),
    Case("custom_jvp_call", softplus, lambda x: np.log1p(np.exp(x)), [X]),
    Case("custom_vjp_call", cube, lambda x: x ** 3, [X]),
    Case("checkpoint", checkpoint(lambda x: xp.sin(xp.sin(x))), lambda x: np.sin(np.sin(x)), [X]),
    Case("grad-stop_gradient", grad(lambda x: xp.sum(stop_gradient(x) * x)), lambda x: x, [X]),
    Case("grad-custom_jvp", grad(lambda x: xp.sum(softplus(x))), lambda x: np.full_like(x, 7.0), [X]),
    Case("grad-custom_vjp", grad(lambda x: xp.sum(cube(x))), lambda x: 100.0 * x, [X]),
    Case("grad-checkpoint", grad(lambda x: xp.sum(checkpoint(lambda y: xp.sin(xp.sin(y)))(x))),
         lambda x: np.cos(np.sin(x)) * np.cos(x), [X]),
]


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_jit_matches_the_closed_forms(case):
    check(case, eager=True)


def test_custom_vjp_inside_a_jitted_vjp():
    def f(x):
        _, pull = vjp(cube, x)
        return pull(xp.ones_like(x))[0]
    got = jit(f)(xp.asarray(X))
    np.testing.assert_allclose(np.asarray(got), 100.0 * X, rtol=1e-15)


FWD = lambda x: jvp(cube, (x,), (xp.ones_like(x),))[1]   # forward mode of a custom_vjp: custom_lin


def test_custom_lin_lowering_refuses_forward_mode_like_eager():
    assert "custom_lin" in prims_of(make_jaxpr(FWD)(xp.asarray(X)))
    for fn in (FWD, jit(FWD)):
        with pytest.raises(TypeError, match="forward-mode differentiation .* of a custom_vjp function is not supported"):
            fn(xp.asarray(X))


def test_every_lowered_primitive_is_reached():
    args = [xp.asarray(X)]
    reached = set().union(*(prims_of(make_jaxpr(c.fn)(*args)) for c in CASES))
    reached |= prims_of(make_jaxpr(FWD)(*args))
    missing = lowered_by("xla.lower_custom") - reached
    assert missing == set(), missing
