"""Every row of the op table, four ways: eager vs NumPy, jit vs NumPy and eager, vmap vs NumPy and a
loop, and gradients (forward, reverse, second order, float32) vs finite differences of the NumPy
function -- the oracle is never our own code alone (a sign flipped in a jvp rule fails the
second-order and float32 checks as well as the first-order one)."""
import functools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import array_namespace as xp
from finite_diff import central_diff_args, second_diff_hvp
from op_table import ALL_OPS
from transforms import grad, jit, jvp, vmap

IDS = [op.name for op in ALL_OPS]


def _arrays(vals):
    return [xp.asarray(v) for v in vals]


def _close(got, want, dtype, tol):
    got = np.asarray(got)
    rtol = tol if np.dtype(dtype) == np.float32 else 1e-9
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("op", ALL_OPS, ids=IDS)
@given(data=st.data())
def test_eager_matches_numpy(op, data):
    shape = data.draw(st.sampled_from(op.shapes), label="shape")
    dtype = data.draw(st.sampled_from(op.dtypes), label="dtype")
    seed = data.draw(st.integers(0, 2**16), label="seed")
    vals = op.inputs(np.random.default_rng(seed), shape, dtype)
    got = op.fn(*_arrays(vals))
    want = np.asarray(op.np_fn(*vals))
    assert got.dtype == want.dtype, f"{op.name}: dtype {got.dtype} != NumPy's {want.dtype}"
    assert got.shape == want.shape
    _close(got, want, dtype, op.tol)


def _jit_inputs(op):
    return op.inputs(np.random.default_rng(1), op.shapes[-1], "float64")


@functools.cache
def _jitted():
    """{op.name: jit(op.fn)(*its inputs)} for every row, from one jitted function returning them all (one compile
    for the table, not one per row)."""
    argss = [_arrays(_jit_inputs(op)) for op in ALL_OPS]
    flat = [a for args in argss for a in args]

    def every(*flat):
        outs, at = [], 0
        for op, args in zip(ALL_OPS, argss):
            outs.append(op.fn(*flat[at:at + len(args)]))
            at += len(args)
        return outs
    return dict(zip(IDS, map(np.asarray, jit(every)(*flat))))


@pytest.mark.parametrize("op", ALL_OPS, ids=IDS)
def test_jit_matches_eager(op):
    vals = _jit_inputs(op)
    args = _arrays(vals)
    jitted = _jitted()[op.name]
    np.testing.assert_allclose(jitted, np.asarray(op.fn(*args)), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(jitted, op.np_fn(*vals), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("op", ALL_OPS, ids=IDS)
def test_vmap_matches_loop(op):
    shape = op.shapes[-1]
    rng = np.random.default_rng(2)
    per_example = [op.inputs(rng, shape, "float64") for _ in range(3)]
    batched = [xp.asarray(np.stack([ex[i] for ex in per_example])) for i in range(op.nargs)]
    got = vmap(op.fn)(*batched)
    want = np.stack([np.asarray(op.fn(*_arrays(ex))) for ex in per_example])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-12)
    oracle = np.stack([np.asarray(op.np_fn(*ex)) for ex in per_example])
    np.testing.assert_allclose(np.asarray(got), oracle, rtol=1e-9, atol=1e-9)


GRAD_OPS = [op for op in ALL_OPS if op.grad]


@pytest.mark.parametrize("op", GRAD_OPS, ids=[op.name for op in GRAD_OPS])
def test_grad_matches_finite_differences(op):
    rng = np.random.default_rng(3)
    shape = op.shapes[-1]
    vals = op.inputs(rng, shape, "float64")
    w = rng.standard_normal(np.shape(op.np_fn(*vals)))

    def loss(*args):
        return xp.sum(op.fn(*args) * xp.asarray(w))

    def loss_np(*args):
        return float(np.sum(np.asarray(op.fn(*_arrays(args))) * w))

    got = grad(loss, argnums=tuple(range(op.nargs)))(*_arrays(vals))
    want = central_diff_args(loss_np, vals)
    for g, n in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), n, rtol=1e-5, atol=1e-6)

    # forward mode along a random direction
    ts = [rng.standard_normal(v.shape) for v in vals]
    _, t_out = jvp(op.fn, tuple(_arrays(vals)), tuple(_arrays(ts)))
    eps = 1e-6
    plus = np.asarray(op.fn(*_arrays([v + eps * t for v, t in zip(vals, ts)])))
    minus = np.asarray(op.fn(*_arrays([v - eps * t for v, t in zip(vals, ts)])))
    np.testing.assert_allclose(np.asarray(t_out), (plus - minus) / (2 * eps), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op", GRAD_OPS, ids=[op.name for op in GRAD_OPS])
def test_second_order_matches_finite_differences(op):
    """jvp of grad (forward-over-reverse) vs central differences of grad, like check_grads(order=2), and
    vs mixed second differences of the NumPy function (an oracle that shares no rule with ours)."""
    rng = np.random.default_rng(5)
    vals = op.inputs(rng, op.shapes[-1], "float64")
    w = rng.standard_normal(np.shape(op.np_fn(*vals)))

    def loss(*args):
        return xp.sum(op.fn(*args) * xp.asarray(w))
    g = grad(loss, argnums=tuple(range(op.nargs)))
    ts = [rng.standard_normal(v.shape) for v in vals]
    _, hvp = jvp(g, tuple(_arrays(vals)), tuple(_arrays(ts)))
    eps = 1e-5
    plus = g(*_arrays([v + eps * t for v, t in zip(vals, ts)]))
    minus = g(*_arrays([v - eps * t for v, t in zip(vals, ts)]))
    for h, p, m in zip(hvp, plus, minus):
        np.testing.assert_allclose(np.asarray(h), (np.asarray(p) - np.asarray(m)) / (2 * eps), rtol=1e-4, atol=1e-5)
    want = second_diff_hvp(lambda *a: float(np.sum(op.np_fn(*a) * w)), vals, ts)
    for k, (h, n) in enumerate(zip(hvp, want)):
        np.testing.assert_allclose(np.asarray(h), n, rtol=1e-4, atol=1e-5, err_msg=f"{op.name}: H.t, argument {k}")


HOLOMORPHIC = ["sin", "cos", "tan", "sinh", "cosh", "tanh", "exp", "expm1", "log", "log1p", "sqrt", "square",
               "negative", "reciprocal", "add", "subtract", "multiply", "divide", "sum", "prod", "mean", "matmul",
               "reshape", "permute_dims", "flip", "concat", "getitem_basic", "at_set"]
COMPLEX_OPS = [op for op in ALL_OPS if op.name in HOLOMORPHIC]


@pytest.mark.parametrize("op", COMPLEX_OPS, ids=[op.name for op in COMPLEX_OPS])
def test_complex_values_jvp_and_vmap(op):
    rng = np.random.default_rng(6)
    shape = op.shapes[-1]
    vals = [(a + 0.3j * b).astype(np.complex128) for a, b in zip(op.inputs(rng, shape, "float64"),
                                                              op.inputs(rng, shape, "float64"))]
    np.testing.assert_allclose(np.asarray(op.fn(*_arrays(vals))), op.np_fn(*vals), rtol=1e-10, atol=1e-12)
    ts = [(rng.standard_normal(shape) + 1j * rng.standard_normal(shape)) for _ in vals]
    _, t_out = jvp(op.fn, tuple(_arrays(vals)), tuple(_arrays(ts)))
    eps = 1e-6
    plus = np.asarray(op.fn(*_arrays([v + eps * t for v, t in zip(vals, ts)])))
    minus = np.asarray(op.fn(*_arrays([v - eps * t for v, t in zip(vals, ts)])))
    np.testing.assert_allclose(np.asarray(t_out), (plus - minus) / (2 * eps), rtol=1e-5, atol=1e-6)
    batched = [xp.asarray(np.stack([v, 2 * v])) for v in vals]
    want = np.stack([op.np_fn(*vals), op.np_fn(*[2 * v for v in vals])])
    np.testing.assert_allclose(np.asarray(vmap(op.fn)(*batched)), want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("op", GRAD_OPS, ids=[op.name for op in GRAD_OPS])
def test_float32_gradients(op):
    """Reverse mode in float32 keeps the dtype and agrees with float64, and with central differences of
    the NumPy function at the float32 inputs, to float32 precision."""
    vals = op.inputs(np.random.default_rng(7), op.shapes[-1], "float64")
    loss = lambda *a: xp.sum(op.fn(*a))
    g64 = grad(loss, argnums=tuple(range(op.nargs)))(*_arrays(vals))
    v32 = [v.astype(np.float32) for v in vals]
    g32 = grad(loss, argnums=tuple(range(op.nargs)))(*_arrays(v32))
    want = central_diff_args(lambda *a: float(np.sum(op.np_fn(*a))), [v.astype(np.float64) for v in v32])
    for a, b, n in zip(g32, g64, want):
        assert a.dtype == xp.float32
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-3, atol=2e-4)
        np.testing.assert_allclose(np.asarray(a), n, rtol=2e-3, atol=2e-4)
