"""The cumulative primitives of src/transforms/primitives/sorting.py bound directly against NumPy's
accumulate: cummax and cummin have no namespace function yet, so nothing else checks their values,
their jvp (the tangent of the running extreme) or their batching. All axes, both directions, float and
integer dtypes; NaN propagates as in NumPy; jit and vmap against NumPy too."""
import numpy as np
import pytest

import array_namespace as xp
from finite_diff import central_diff
from transforms import jit, jvp, vmap
from transforms.core import bind
from transforms.primitives import sorting as SO

DIRECT = {   # primitive name -> (primitive, NumPy oracle along an axis)
    "cummax": (SO.cummax_p, np.maximum.accumulate),
    "cummin": (SO.cummin_p, np.minimum.accumulate),
}


def _oracle(name, x, axis, reverse):
    acc = DIRECT[name][1]
    if reverse:
        return np.flip(acc(np.flip(x, axis), axis=axis), axis)
    return acc(x, axis=axis)


def _data(dtype, shape=(3, 5)):
    rng = np.random.default_rng(0)
    if np.dtype(dtype).kind == "f":
        x = rng.standard_normal(shape)
        x[1, 2], x[2, 0] = np.nan, -np.inf
        return x.astype(dtype)
    return rng.integers(-50, 50, shape).astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "uint8"])
@pytest.mark.parametrize("name", list(DIRECT))
def test_values_all_axes_and_directions(name, dtype):
    x = _data(dtype)
    for axis in (0, 1):
        for reverse in (False, True):
            got = np.asarray(bind(DIRECT[name][0], xp.asarray(x)._v, axis=axis, reverse=reverse))
            assert got.dtype == x.dtype
            np.testing.assert_array_equal(got, _oracle(name, x, axis, reverse), err_msg=f"{name} {axis} {reverse}")


@pytest.mark.parametrize("name", list(DIRECT))
def test_jit_and_vmap_against_numpy(name):
    x = _data("float64", (4, 3, 5))
    f = lambda a: bind(DIRECT[name][0], a._v, axis=1, reverse=True)
    np.testing.assert_array_equal(np.asarray(jit(f)(xp.asarray(x[0]))), _oracle(name, x[0], 1, True))
    want = np.stack([_oracle(name, v, 1, True) for v in x])
    np.testing.assert_array_equal(np.asarray(vmap(f)(xp.asarray(x))), want)
    np.testing.assert_array_equal(np.asarray(vmap(f, in_axes=2, out_axes=2)(xp.asarray(x))),
                                  np.stack([_oracle(name, x[..., i], 1, True) for i in range(5)], axis=2))


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("name", list(DIRECT))
def test_jvp_vs_finite_differences(name, reverse):
    rng = np.random.default_rng(1)
    x, t = rng.standard_normal((3, 6)), rng.standard_normal((3, 6))     # distinct values: differentiable
    w = rng.standard_normal((3, 6))
    f = lambda a: bind(DIRECT[name][0], a._v, axis=1, reverse=reverse)
    _, tan = jvp(f, (xp.asarray(x),), (xp.asarray(t),))
    g = central_diff(lambda v: float(np.sum(_oracle(name, v, 1, reverse) * w)), x)
    np.testing.assert_allclose(np.sum(np.asarray(tan) * w), np.sum(g * t), rtol=1e-7)
    h = 1e-6
    fd = (_oracle(name, x + h * t, 1, reverse) - _oracle(name, x - h * t, 1, reverse)) / (2 * h)
    np.testing.assert_allclose(np.asarray(tan), fd, rtol=1e-6, atol=1e-8)
