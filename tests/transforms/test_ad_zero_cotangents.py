"""A zero tangent or cotangent stays zero through the jvp rules' scaling (the mul0/div0 primitives,
transforms/primitives/elementwise.py): where a `where` leaves a branch unselected or a masked write
overwrites a position, that branch's partial derivative may be inf or NaN (0/0, 1/0, exp overflow);
reverse mode must still agree with forward mode and finite differences, not spread NaN to every input
(JAX and torch do). Oracles: central finite differences, and jacfwd against grad/jacrev."""
import numpy as np
import pytest

import array_namespace as xp
from finite_diff import central_diff
from transforms import grad, hessian, jacfwd, jacrev, jit, jvp, vjp


def _fd_grad(f, x, h=1e-6):
    """Central differences (tests/finite_diff.py) of f at x, f taking an Array."""
    return central_diff(lambda v: float(f(xp.asarray(v))), x, h)


def _all_modes(f, x):
    """grad, jit(grad), jacrev and jacfwd of scalar f at x, as NumPy arrays."""
    ax = xp.asarray(x)
    return [np.asarray(d(f)(ax)) for d in (grad, lambda f: jit(grad(f)), jacrev, jacfwd)]


def _check(f, x, want):
    for got in _all_modes(f, x):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


def test_unselected_zero_over_zero_where_branch():
    x = np.array([0.0, 1.0, -2.0, 0.0, 3.5])
    f = lambda x: xp.sum(xp.where(x > 0, x / x, 0.0))
    _check(f, x, np.zeros(5))   # f is 1 on x > 0 and 0 elsewhere: derivative 0 off the jump
    np.testing.assert_allclose(_fd_grad(f, x)[[1, 2, 4]], 0.0, atol=1e-8)


def test_sinc_by_where_matches_finite_differences_at_zero():
    x = np.array([0.0, 0.7, -1.3])
    w = xp.asarray([1.0, 2.0, -0.5])
    f = lambda x: xp.sum(xp.where(x == 0, 1.0, xp.sin(x) / x) * w)
    _check(f, x, _fd_grad(f, x))


def test_masked_write_over_zero_over_zero():
    s = xp.asarray([0.0, 2.0, 0.0, -1.0])
    w = xp.asarray([1.0, -3.0, 0.5, 2.0])

    def f(x):
        y = x * x / s
        y[s == 0] = 1.0
        return xp.sum(y * w)
    x = np.array([0.0, 1.5, 0.7, -0.4])   # at 0: 0*0/0 = NaN, overwritten
    want = _fd_grad(f, x)
    assert np.isfinite(want).all()
    _check(f, x, want)
    hx = np.asarray(hessian(f)(xp.asarray(x)))
    sn, wn = np.asarray(s), np.asarray(w)
    np.testing.assert_allclose(hx, np.diag(np.where(sn == 0, 0.0, 2 * wn / np.where(sn == 0, 1.0, sn))), rtol=1e-12)


def test_unselected_overflow_and_singular_partials():
    x = np.array([1000.0, 0.5, 0.0, -2.0])
    f = lambda x: xp.sum(xp.where(x < 100, xp.exp(x), 0.0)) + xp.sum(xp.where(x > 0.1, xp.log(x) + xp.sqrt(x), 0.0))
    want = _fd_grad(f, x)   # exp(1000) overflows unselected; log and sqrt are singular unselected at 0 and -2
    assert np.isfinite(want).all()
    _check(f, x, want)
    d2 = lambda v: -1 / v ** 2 - 0.25 * v ** -1.5   # (log + sqrt)''
    want2 = np.diag([d2(1000.0), np.exp(0.5) + d2(0.5), 1.0, np.exp(-2.0)])
    for second in (hessian, lambda f: jacrev(jacrev(f)), lambda f: jacfwd(jacfwd(f))):
        np.testing.assert_allclose(np.asarray(second(f)(xp.asarray(x))), want2, rtol=1e-12)


def test_zero_tangent_through_an_infinite_partial_forward_and_reverse_agree():
    f = lambda x: xp.sqrt(x[0]) + x[1] * 2.0 + xp.pow(x[2], 0.5)
    x = xp.asarray([0.0, 1.0, 4.0])
    want = np.array([np.inf, 2.0, 0.25])
    for d in (grad, jacrev, jacfwd, lambda f: jit(jacfwd(f))):
        np.testing.assert_array_equal(np.asarray(d(f)(x)), want)
    _, t = jvp(f, (x,), (xp.asarray([0.0, 1.0, 0.0]),))   # the zero tangent of x[0] meets sqrt'(0) = inf
    assert float(t) == 2.0


def test_nonzero_cotangent_through_a_singular_partial_is_still_nonfinite():
    # zero-keeping changes nothing where the (co)tangent is nonzero: d/dx 1/x at 0 is -inf, 0/0 stays NaN
    _, pull = vjp(lambda x: 1.0 / x, xp.asarray([0.0, 2.0]))
    np.testing.assert_array_equal(np.asarray(pull(xp.asarray([1.0, 1.0]))[0]), [-np.inf, -0.25])
    g = np.asarray(grad(lambda x: xp.sum(x / x))(xp.asarray([0.0, 3.0])))
    assert np.isnan(g[0]) and g[1] == 0.0


def test_finite_gradients_are_unchanged():
    rng = np.random.default_rng(0)
    x, y = rng.random(6) + 0.5, rng.standard_normal(6)
    f = lambda x: xp.sum(xp.tanh(x * xp.asarray(y)) / x + xp.pow(x, 1.7) + xp.atan2(x, xp.asarray(y)))
    want = (1 - np.tanh(x * y) ** 2) * y / x - np.tanh(x * y) / x ** 2 + 1.7 * x ** 0.7 + y / (x * x + y * y)
    for got in _all_modes(f, x):
        np.testing.assert_allclose(got, want, rtol=1e-13)


def test_special_functions_poles_unselected():
    # gammaln' = digamma is infinite at the poles 0, -1 that `where` leaves unselected; erfinv' at +-1
    import array_namespace.special as sp
    x = np.array([0.0, -1.0, 2.5, 1.0, 0.3])
    f = lambda x: (xp.sum(xp.where(x > 0.1, sp.gammaln(x), 0.0))
                   + xp.sum(xp.where(xp.abs(x) < 0.9, sp.erfinv(xp.clip(x, -1.0, 1.0)), 0.0)))
    want = _fd_grad(f, x)
    assert np.isfinite(want).all()
    _check(f, x, want)
