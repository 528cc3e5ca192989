"""The reductions of src/transforms/primitives/reductions.py bound directly against NumPy: sum, prod,
max, min, and, or over any set of axes; argmax/argmin with ties (the first index wins) and NaN (the
first NaN wins, as np.argmax) in float and integer dtypes and the requested index dtype. The rules:
reduce_sum's transpose (dot-product identity), max/min's jvp averaging the tangent over tied extrema,
prod's jvp exact with one or several zeros (finite differences of np.prod), and the batch rules (the
batch axis anywhere, reduced axes renumbered) against a Python loop."""
import numpy as np
import pytest

import array_namespace as xp
from prim_checks import check_jvp, check_transpose, check_vmap, raw
from transforms import jit, jvp
from transforms.core import bind, boxing
from transforms.primitives import reductions as R

PLAIN = {   # primitive name -> (primitive, NumPy oracle taking axis=tuple)
    "reduce_sum": (R.reduce_sum_p, np.sum),
    "reduce_prod": (R.reduce_prod_p, np.prod),
    "reduce_max": (R.reduce_max_p, np.max),
    "reduce_min": (R.reduce_min_p, np.min),
}
AXES = [(0,), (1,), (2,), (0, 2), (0, 1, 2), ()]


def _data(dtype, shape=(3, 4, 5), seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return (rng.standard_normal(shape) * 2).astype(dtype)
    if np.dtype(dtype).kind == "b":
        return rng.random(shape) < 0.7
    return rng.integers(-9, 9, shape).astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "uint8"])
@pytest.mark.parametrize("name", list(PLAIN))
def test_values_all_axes(name, dtype):
    prim, oracle = PLAIN[name]
    x = _data(dtype)
    if name == "reduce_prod":
        x = x[:, :, :3]
    for axes in AXES:
        got = np.asarray(bind(prim, raw(x), axes=axes))
        want = oracle(x, axis=axes).astype(dtype)
        assert got.dtype == x.dtype, f"{name}{axes}: {dtype} in, {got.dtype} out"
        np.testing.assert_allclose(got, want, rtol=2e-6 if dtype == "float32" else 1e-14, err_msg=f"{name}{axes}")


def test_max_min_nan_and_inf_propagate_like_numpy():
    x = np.array([[1.0, np.nan, 3.0], [-np.inf, 2.0, np.inf], [np.nan, np.nan, 0.0]])
    for prim, oracle in ((R.reduce_max_p, np.max), (R.reduce_min_p, np.min)):
        for axes in ((0,), (1,), (0, 1)):
            np.testing.assert_array_equal(np.asarray(bind(prim, raw(x), axes=axes)), oracle(x, axis=axes))


@pytest.mark.parametrize("prim, oracle", [(R.reduce_and_p, np.all), (R.reduce_or_p, np.any)])
def test_and_or(prim, oracle):
    x = _data(bool)
    x[1] = True
    x[2] = False
    for axes in AXES:
        got = np.asarray(bind(prim, raw(x), axes=axes))
        assert got.dtype == np.bool_
        np.testing.assert_array_equal(got, oracle(x, axis=axes))


# ------------------------------------------------------------------------------ argmax / argmin
ARG = {"argmax": (R.argmax_p, np.argmax), "argmin": (R.argmin_p, np.argmin)}


def _arg_cases(dtype):
    if np.dtype(dtype).kind == "f":
        return np.array([[1.0, 3.0, 3.0, -1.0, -1.0],          # ties: the first index wins
                         [np.nan, 2.0, np.nan, 9.0, -9.0],      # NaN wins, the first of them
                         [0.0, -0.0, 0.0, -np.inf, np.inf],
                         [2.0, 2.0, 2.0, 2.0, 2.0],
                         [5.0, np.inf, -np.inf, np.nan, 1.0]], dtype)
    info = np.iinfo(dtype)
    return np.array([[1, 3, 3, 0, 0], [info.max, info.min, info.max, info.min, 0],
                     [2, 2, 2, 2, 2], [0, 1, 2, 3, 4], [4, 3, 2, 1, 0]], dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "uint16", "int64"])
@pytest.mark.parametrize("name", list(ARG))
def test_argmax_argmin_ties_nan_both_axes(name, dtype):
    prim, oracle = ARG[name]
    x = _arg_cases(dtype)
    for axis in (0, 1):
        for index_dtype in (np.int32, np.int64):
            got = np.asarray(bind(prim, raw(x), axes=(axis,), index_dtype=np.dtype(index_dtype)))
            assert got.dtype == index_dtype
            np.testing.assert_array_equal(got, oracle(x, axis=axis), err_msg=f"{name} axis {axis}\n{x}")


@pytest.mark.parametrize("name", list(ARG))
def test_argmax_argmin_under_jit_and_vmap(name):
    prim, oracle = ARG[name]
    x = np.stack([_arg_cases("float64") + 0] * 2 + [np.round(_data("float64", (5, 5)))])
    f = lambda a: bind(prim, a._v, axes=(1,), index_dtype=np.dtype(np.int32))
    np.testing.assert_array_equal(np.asarray(jit(f)(xp.asarray(x[0]))), oracle(x[0], axis=1))
    got = check_vmap(f, [x], [0])
    np.testing.assert_array_equal(got, oracle(x, axis=2))
    check_vmap(f, [np.moveaxis(x, 0, 2)], [2])
    # integer output, computed below the jvp (a raw value, boxed as the namespace would)
    _, tan = jvp(lambda a: boxing.box(f(a)), (xp.asarray(x[0]),), (xp.asarray(np.ones((5, 5))),))
    assert not np.any(np.asarray(tan).astype(bool))       # integer output: a zero tangent


# ------------------------------------------------------------------------------------ rules
@pytest.mark.parametrize("axes", AXES)
def test_reduce_sum_transpose(axes):
    check_transpose(lambda a: bind(R.reduce_sum_p, a._v, axes=axes), _data("float64"))


@pytest.mark.parametrize("name", ["reduce_sum", "reduce_prod", "reduce_max", "reduce_min"])
def test_jvp_vs_finite_differences_distinct_values(name):
    prim, oracle = PLAIN[name]
    x = _data("float64", (3, 4, 3), seed=2)
    for axes in ((1,), (0, 2)):
        check_jvp(lambda a: bind(prim, a._v, axes=axes), lambda v: oracle(v, axis=axes), [x])


def test_max_min_jvp_averages_over_ties():
    x = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0], [-1.0, 0.0, -1.0]])
    t = np.array([[10.0, 1.0, 2.0], [3.0, 6.0, 9.0], [4.0, 5.0, 8.0]])
    for prim, want in ((R.reduce_max_p, [1.5, 6.0, 5.0]), (R.reduce_min_p, [10.0, 6.0, 6.0])):
        _, tan = jvp(lambda a: bind(prim, a._v, axes=(1,)), (xp.asarray(x),), (xp.asarray(t),))
        np.testing.assert_allclose(np.asarray(tan), want, rtol=1e-15)


@pytest.mark.parametrize("zeros", [0, 1, 2])
def test_prod_jvp_exact_with_zeros(zeros):
    rng = np.random.default_rng(4)
    x = rng.uniform(0.5, 2.0, (4, 5))
    x[:, :zeros] = 0.0                  # no zero, one zero, two zeros per row
    t = rng.standard_normal(x.shape)
    _, tan = jvp(lambda a: bind(R.reduce_prod_p, a._v, axes=(1,)), (xp.asarray(x),), (xp.asarray(t),))
    # np.prod is a polynomial: the directional derivative to O(h^2) by central differences
    h = 1e-4
    fd = (np.prod(x + h * t, axis=1) - np.prod(x - h * t, axis=1)) / (2 * h)
    np.testing.assert_allclose(np.asarray(tan), fd, rtol=1e-5, atol=1e-6)
    if zeros == 2:
        np.testing.assert_array_equal(np.asarray(tan), 0.0)
    assert np.all(np.isfinite(np.asarray(tan)))


@pytest.mark.parametrize("name", list(PLAIN) + ["reduce_and", "reduce_or"])
@pytest.mark.parametrize("bdim", [0, 1, 3])
def test_batch_rules_vs_loop(name, bdim):
    prim = PLAIN[name][0] if name in PLAIN else getattr(R, name + "_p")
    x = _data(bool if name in ("reduce_and", "reduce_or") else "float64", (3, 4, 2, 5))
    for axes in ((0,), (2,), (0, 1), ()):
        check_vmap(lambda a: bind(prim, a._v, axes=axes), [x], [bdim], rtol=1e-14) if name in PLAIN else \
            check_vmap(lambda a: bind(prim, a._v, axes=axes), [x], [bdim])


def test_axis_out_of_range_is_a_value_error():
    for prim, extra in ((R.reduce_sum_p, {}), (R.argmax_p, {"index_dtype": np.dtype(np.int32)})):
        with pytest.raises(ValueError, match="reduction axis 2 out of range for 2 dimensions"):
            bind(prim, raw(np.ones((2, 3))), axes=(2,), **extra)
