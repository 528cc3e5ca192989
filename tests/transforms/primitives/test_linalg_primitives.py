"""dot_general (src/transforms/primitives/linalg.py) bound directly against np.einsum: contractions
over any dims, batch dims anywhere, outer products, integer and float32 dtypes; its transposes with
respect to each operand by the dot-product identity (for dimension numbers whose contracting and
batch dims are out of order, where the argsort in the rule matters), its jvp (bilinear: finite
differences in both operands at once), the batch rule with either or both operands batched at any
axis against a Python loop, and the errors naming the mismatched dims."""
import numpy as np
import pytest

import array_namespace as xp
from prim_checks import check_jvp, check_vmap, raw
from transforms import jit, linear_transpose
from transforms.core import bind
from transforms.primitives import linalg as L

# name -> (lhs shape, rhs shape, dimension_numbers, einsum spec)
CASES = {
    "matmul": ((3, 4), (4, 5), (((1,), (0,)), ((), ())), "ij,jk->ik"),
    "vecdot": ((4,), (4,), (((0,), (0,)), ((), ())), "i,i->"),
    "outer": ((3,), (2,), (((), ()), ((), ())), "i,j->ij"),
    "batched": ((2, 3, 4), (2, 4, 5), (((2,), (1,)), ((0,), (0,))), "bij,bjk->bik"),
    "batch_last_contract_first": ((4, 3, 2), (5, 2, 4), (((0,), (2,)), ((2,), (1,))), "jib,kbj->bik"),
    "two_contract_swapped": ((3, 4, 5), (5, 2, 4), (((1, 2), (2, 0)), ((), ())), "ijk,kmj->im"),
    "two_batch": ((2, 3, 4, 6), (3, 2, 6), (((3,), (2,)), ((0, 1), (1, 0))), "abix,bax->abi"),
}


def _operands(name, dtype=np.float64, seed=0):
    ls, rs, _, _ = CASES[name]
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind in "iu":
        return rng.integers(-5, 6, ls).astype(dtype), rng.integers(-5, 6, rs).astype(dtype)
    return rng.standard_normal(ls).astype(dtype), rng.standard_normal(rs).astype(dtype)


def _f(name):
    dn = CASES[name][2]
    return lambda a, b: bind(L.dot_general_p, a._v, b._v, dimension_numbers=dn)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.int8])
@pytest.mark.parametrize("name", list(CASES))
def test_values_vs_einsum(name, dtype):
    x, y = _operands(name, dtype)
    want = np.einsum(CASES[name][3], x, y).astype(dtype)
    got = np.asarray(_f(name)(xp.asarray(x), xp.asarray(y)))
    assert got.dtype == dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-13, atol=1e-5)
    np.testing.assert_allclose(np.asarray(jit(_f(name))(xp.asarray(x), xp.asarray(y))), want,
                               rtol=1e-5 if dtype == np.float32 else 1e-13, atol=1e-5)


@pytest.mark.parametrize("name", list(CASES))
def test_transpose_each_operand(name):
    x, y = _operands(name, seed=1)
    rng = np.random.default_rng(2)
    spec = CASES[name][3]
    out = np.einsum(spec, x, y)
    c = rng.standard_normal(out.shape)
    (cx,) = linear_transpose(lambda a: _f(name)(a, xp.asarray(y)), xp.asarray(x))(xp.asarray(c))
    (cy,) = linear_transpose(lambda b: _f(name)(xp.asarray(x), b), xp.asarray(y))(xp.asarray(c))
    assert np.asarray(cx).shape == x.shape and np.asarray(cy).shape == y.shape
    # <x' y, c> == <x', cx> for every x': equivalently cx is the gradient of sum(einsum(x, y) * c)
    xr, yr = rng.standard_normal(x.shape), rng.standard_normal(y.shape)
    np.testing.assert_allclose(np.sum(np.einsum(spec, xr, y) * c), np.sum(xr * np.asarray(cx)), rtol=1e-12)
    np.testing.assert_allclose(np.sum(np.einsum(spec, x, yr) * c), np.sum(yr * np.asarray(cy)), rtol=1e-12)


def test_transpose_in_both_operands_is_refused():
    with pytest.raises(TypeError, match="not linear in both operands"):
        linear_transpose(lambda a: _f("matmul")(a, a), xp.asarray(np.ones((4, 4))))(xp.asarray(np.ones((4, 4))))


@pytest.mark.parametrize("name", list(CASES))
def test_jvp_both_operands_vs_finite_differences(name):
    x, y = _operands(name, seed=3)
    check_jvp(_f(name), lambda a, b: np.einsum(CASES[name][3], a, b), [x, y], rtol=1e-7)


@pytest.mark.parametrize("name", ["matmul", "batched", "batch_last_contract_first", "two_batch", "outer"])
def test_batching_vs_loop(name):
    x, y = _operands(name)
    xs = np.stack([x * (i + 1) for i in range(3)], axis=x.ndim)       # batch axis last
    ys = np.stack([y - i for i in range(3)], axis=0)
    tol = dict(rtol=1e-13, atol=1e-13)
    check_vmap(_f(name), [xs, ys], [x.ndim, 0], **tol)
    check_vmap(_f(name), [xs, y], [x.ndim, None], **tol)
    check_vmap(_f(name), [x, ys], [None, 0], **tol)
    check_vmap(_f(name), [x, ys], [None, 0], out_axes=-1, **tol)


@pytest.mark.parametrize("x_shape, y_shape, dn, exc, text", [
    ((3, 4), (5, 6), (((1,), (0,)), ((), ())), ValueError, "dimension 1 of lhs (3, 4) (size 4) does not match "
                                                           "dimension 0 of rhs (5, 6) (size 5)"),
    ((3, 4), (4, 6), (((1,), (0, 1)), ((), ())), ValueError, "dimension lists differ in length"),
])
def test_errors(x_shape, y_shape, dn, exc, text):
    with pytest.raises(exc) as e:
        bind(L.dot_general_p, raw(np.ones(x_shape)), raw(np.ones(y_shape)), dimension_numbers=dn)
    assert text in str(e.value)
    with pytest.raises(TypeError, match="must share a dtype, got float64 and float32"):
        bind(L.dot_general_p, raw(np.ones(3)), raw(np.ones(3, np.float32)), dimension_numbers=(((0,), (0,)), ((), ())))
