"""xla/lower_structural.py: shape ops, reductions, argmax/argmin, dot_general and the nested jit call,
each reached through the namespace and run under jit against NumPy (float32, float64, int, bool,
empty and NaN operands). The last test checks the cases reach every primitive the module lowers."""
import numpy as np
import pytest

import array_namespace as xp
from lower_harness import Case, check, lowered_by, prims_of
from transforms import jit, make_jaxpr, vmap

R = np.random.default_rng(0)
M = R.standard_normal((3, 4))
M32 = M.astype(np.float32)
NANS = np.array([[1.0, np.nan, -2.0], [np.inf, 0.5, -np.inf]])
I = np.array([[3, -1, 7], [0, 7, 2]], np.int32)
BOOL = np.array([[True, False, True], [True, True, True]])

CASES = [
    Case("broadcast_to", lambda x: xp.broadcast_to(x, (2, 3, 4)), lambda x: np.broadcast_to(x, (2, 3, 4)), [M]),
    Case("reshape", lambda x: xp.reshape(x, (4, 3)), lambda x: x.reshape(4, 3), [M32]),
    Case("permute_dims", lambda x: xp.permute_dims(x, (1, 0)), np.transpose, [I]),
    Case("concat", lambda x, y: xp.concat([x, y, x], axis=1), lambda x, y: np.concatenate([x, y, x], 1), [M, M * 2]),
    Case("slice", lambda x: x[1:, ::2], lambda x: x[1:, ::2], [M]),
    Case("pad", lambda x: xp.cumulative_sum(x, axis=1, include_initial=True),
         lambda x: np.pad(np.cumsum(x, 1), ((0, 0), (1, 0))), [M], 1e-13, 1e-15),
    Case("flip", lambda x: xp.flip(x, axis=1), lambda x: np.flip(x, 1), [M32]),
    Case("arange", lambda x: xp.arange(5, dtype=xp.int32) + x, lambda x: np.arange(5, dtype=np.int32) + x,
         [np.int32(3)]),
    Case("sum", lambda x: xp.sum(x, axis=0), lambda x: np.sum(x, 0), [NANS]),
    Case("sum-int", lambda x: xp.sum(x, axis=1, dtype=xp.int32), lambda x: np.sum(x, 1, dtype=np.int32), [I]),
    Case("sum-empty", xp.sum, np.sum, [np.zeros((0, 3))]),
    Case("prod", lambda x: xp.prod(x, axis=1), lambda x: np.prod(x, 1), [M32], 1e-6),
    Case("max", lambda x: xp.max(x, axis=1), lambda x: np.max(x, 1), [NANS]),
    Case("min", lambda x: xp.min(x, axis=0), lambda x: np.min(x, 0), [I]),
    Case("all", lambda x: xp.all(x, axis=1), lambda x: np.all(x, 1), [BOOL]),
    Case("any", lambda x: xp.any(x, axis=0), lambda x: np.any(x, 0), [~BOOL]),
    Case("argmax", lambda x: xp.argmax(x, axis=1), lambda x: np.argmax(x, 1), [M]),
    Case("argmax-ties", xp.argmax, np.argmax, [np.array([1.0, 3.0, 3.0, -1.0])]),
    Case("argmin", lambda x: xp.argmin(x, axis=0), lambda x: np.argmin(x, 0), [I]),
    Case("matmul", xp.matmul, np.matmul, [M, M.T.copy()], 1e-13),
    Case("matmul-f32-batched", xp.matmul, np.matmul, [np.stack([M32, M32]), M32.T.copy()], 2e-6, 1e-6),
    Case("tensordot", lambda a, b: xp.tensordot(a, b, axes=([0], [0])), lambda a, b: np.tensordot(a, b, ([0], [0])),
         [M, M], 1e-13),
    Case("vecdot-int", xp.vecdot, lambda a, b: np.sum(a * b, -1, dtype=a.dtype), [I, I]),
    Case("nested-jit", jit(lambda x: xp.sin(x) * 2.0), lambda x: np.sin(x) * 2.0, [M]),
]


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_jit_matches_numpy(case):
    check(case)


def test_argmax_of_nan_is_its_first_position():
    check(Case("argmax-nan", lambda x: xp.argmax(x, axis=1), lambda x: np.argmax(x, 1), [NANS]))


def test_every_lowered_primitive_is_reached():
    reached = set().union(*(prims_of(make_jaxpr(c.fn)(*[xp.asarray(a) for a in c.args])) for c in CASES))
    assert lowered_by("xla.lower_structural") - reached == set()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_max_min_of_signed_zeros_are_one_answer_eagerly_under_jit_and_vmap(dtype):
    """max/min order -0.0 below +0.0 (IEEE 754-2019 maximum/minimum, XLA's): a slice holding both zeros has
    max +0.0 and min -0.0 in either order. NumPy's reduce keeps the zero it meets first (np.max([0., -0.]) is
    0.0 but np.max([-0., 0.]) is -0.0), so eagerly the answer moved with the order while jit's did not (issue 24)."""
    rows = np.array([[0.0, -0.0], [-0.0, 0.0], [-0.0, -0.0], [0.0, 0.0], [-0.0, -1.0], [np.nan, -0.0]], dtype)
    want_max = np.array([0.0, 0.0, -0.0, 0.0, -0.0, np.nan], dtype)   # by the rule, written out
    want_min = np.array([-0.0, -0.0, -0.0, 0.0, -1.0, np.nan], dtype)
    np.testing.assert_array_equal(want_max, np.max(rows, 1))   # (NumPy's values; only the zeros' signs differ)
    np.testing.assert_array_equal(want_min, np.min(rows, 1))
    x = xp.asarray(rows)
    for f, want in ((xp.max, want_max), (xp.min, want_min)):
        ways = {"eager": f(x, axis=1), "jit": jit(lambda v: f(v, axis=1))(x),
                "vmap": vmap(f)(x), "rows": np.stack([np.asarray(f(x[i])) for i in range(len(rows))]),
                "jit-rows": np.stack([np.asarray(jit(f)(x[i])) for i in range(len(rows))])}
        for way, got in ways.items():
            got = np.asarray(got)
            np.testing.assert_array_equal(got, want, err_msg=f"{f.__name__} {way}")
            assert (np.signbit(got) == np.signbit(want)).all(), f"{f.__name__} {way}: zero signs {got} != {want}"
