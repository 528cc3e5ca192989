"""transforms/api_util.py: how user arguments (pytrees of Arrays, scalars, NumPy) become raw values,
how a pytree function is flattened (output tree, aliases, writes into arguments), and argnums checks."""
import numpy as np
import pytest

import array_namespace as xp
from transforms import api_util as U
from transforms.core import ShapedArray, get_aval
from transforms.pytree import tree_flatten, tree_unflatten


def _np(v):
    return np.asarray(xp.asarray(v))


def test_to_raw_of_each_kind_of_leaf():
    a = xp.asarray(np.array([1.0, 2.0], np.float32))
    assert U.to_raw(a) is a._v
    r = U.to_raw(3)
    assert get_aval(r) == ShapedArray((), np.int64, weak_type=True) and _np(r) == 3
    r = U.to_raw(np.arange(4, dtype=np.int16))
    assert get_aval(r) == ShapedArray((4,), np.int16)
    np.testing.assert_array_equal(_np(r), np.arange(4, dtype=np.int16))
    assert get_aval(U.to_raw(np.float32(2.5))) == ShapedArray((), np.float32)


@pytest.mark.parametrize("bad, match", [
    ("text", "myfun argument: expected an array, a Python scalar or a pytree of them, got str"),
    (np.array(["a"]), "myfun argument: NumPy dtype <U1 is not an array dtype"),
    (object(), "got object"),
])
def test_to_raw_rejects_non_arrays(bad, match):
    with pytest.raises(TypeError, match=match):
        U.to_raw(bad, "myfun argument")


def test_flatten_fun_records_the_output_tree():
    store = U.Store()
    args = ({"w": xp.asarray(2.0), "b": xp.asarray(1.0)}, xp.asarray(np.array([1.0, 3.0])))
    leaves, tree = tree_flatten(args)
    flat = U.flatten_fun(lambda p, x: {"y": p["w"] * x + p["b"], "n": 7}, tree, store)
    outs = flat(*[l._v for l in leaves])
    out = tree_unflatten(store.val, [_np(o) for o in outs])
    np.testing.assert_array_equal(out["y"], [3.0, 7.0])
    assert out["n"] == 7 and store.mutated == ()


def test_flatten_fun_with_writeback_reports_written_arguments():
    x, y = xp.asarray(np.zeros(3)), xp.asarray(np.ones(3))
    leaves, tree = tree_flatten((x, y))

    def f(a, b):
        b[1] = 5.0          # writes into the second argument only
        return a + 1.0
    store = U.Store()
    outs = U.flatten_fun(f, tree, store, writeback=True)(x._v, y._v)
    own, finals = U.split_mutated(outs, store)
    assert store.mutated == (1,) and len(own) == 1
    np.testing.assert_array_equal(_np(own[0]), [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(_np(finals[0]), [1.0, 5.0, 1.0])
    U.write_back(leaves, store.mutated, finals, "test")
    np.testing.assert_array_equal(np.asarray(y), [1.0, 5.0, 1.0])
    np.testing.assert_array_equal(np.asarray(x), [0.0, 0.0, 0.0])


def test_alias_pattern_and_aliased_leaves_stay_one_handle():
    a, b = xp.ones(2), xp.ones(2)
    assert U.alias_pattern([a, b, a, 3, a]) == (0, 1, 0, 3, 0)
    seen = []
    leaves, tree = tree_flatten((a, a))
    U.flatten_fun(lambda p, q: seen.append(p is q) or p, tree, U.Store(), aliases=U.alias_pattern(leaves))(a._v, a._v)
    assert seen == [True]


def test_flatten_args_and_with_args():
    raw, tree = U.flatten_args((xp.asarray(1.0), [2.0, np.int32(3)]))
    assert tree.num_leaves == 3 and [get_aval(r).dtype for r in raw] == [np.float64, np.float64, np.int32]
    f = U.with_args(lambda a, b, c, k=0: (a, b, c, k), (1, 2, 3), (0, 2), {"k": 9})
    assert f(10, 30) == (10, 2, 30, 9)


@pytest.mark.parametrize("argnums, n, want", [(0, 2, ((0,), True)), ((0, -1), 3, ((0, 2), False)),
                                               (-2, 2, ((0,), True)), ((), 1, ((), False))])
def test_argnums_tuple(argnums, n, want):
    assert U.argnums_tuple(argnums, n, "grad") == want


@pytest.mark.parametrize("argnums", [2, (0, 5), -3, (0.5,)])
def test_argnums_out_of_range(argnums):
    with pytest.raises(ValueError, match=r"grad: argnums .* out of range for 2 positional arguments"):
        U.argnums_tuple(argnums, 2, "grad")
