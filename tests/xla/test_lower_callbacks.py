"""xla/lower_callbacks.py: pure_callback, io_callback (ordered and not) and debug_print lowered into
host calls: under jit the host function sees the run-time values, its results (any dtype, several
outputs) come back as NumPy computes them, io effects run once per execution and in order."""
import numpy as np
import pytest

import array_namespace as xp
from lower_harness import Case, check, lowered_by, prims_of
from transforms import ShapeDtypeStruct, debug_print, io_callback, jit, make_jaxpr, pure_callback

X = np.array([[0.5, -1.5, 2.0], [3.0, 0.0, -0.25]])


def _host_svals(a):
    return np.linalg.svd(np.asarray(a), compute_uv=False), np.int32(np.asarray(a).size)


CASES = [
    Case("pure_callback", lambda a: pure_callback(lambda v: np.cumsum(np.asarray(v), axis=1),
                                                  ShapeDtypeStruct((2, 3), np.float64), a),
         lambda a: np.cumsum(a, axis=1), [X]),
    Case("pure_callback-two-outputs", lambda a: pure_callback(_host_svals, (ShapeDtypeStruct((2,), np.float64),
                                                                            ShapeDtypeStruct((), np.int32)), a),
         _host_svals, [X], 1e-14),
    Case("pure_callback-f32", lambda a: xp.sin(pure_callback(lambda v: np.asarray(v) * 2, ShapeDtypeStruct((2, 3),
                                                                                                         np.float32), a)),
         lambda a: np.sin(a * 2), [X.astype(np.float32)], 1e-6),
]


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_jit_matches_the_host_function(case):
    check(case)


def test_io_callback_runs_once_per_execution_in_order():
    log = []

    def f(x):
        io_callback(lambda v: log.append(("a", float(np.asarray(v).sum()))), None, x, ordered=True)
        y = x * 2.0
        io_callback(lambda v: log.append(("b", float(np.asarray(v).sum()))), None, y, ordered=True)
        return y
    jf = jit(f)
    for k in (1.0, 2.0):
        np.testing.assert_array_equal(np.asarray(jf(xp.full(3, k))), np.full(3, 2 * k))
    assert log == [("a", 3.0), ("b", 6.0), ("a", 6.0), ("b", 12.0)]


def test_unordered_io_callback_result_and_debug_print(capfd):
    out = jit(lambda x: io_callback(lambda v: np.asarray(v) + 1, ShapeDtypeStruct((3,), np.float64), x))(
        xp.asarray(np.arange(3.0)))
    np.testing.assert_array_equal(np.asarray(out), [1.0, 2.0, 3.0])
    jit(lambda x: debug_print("value {}", x) or x)(xp.asarray(np.array([1.5, 2.5])))
    assert "value [1.5 2.5]" in capfd.readouterr().out


def test_every_lowered_primitive_is_reached():
    args = [xp.asarray(X)]
    reached = set().union(*(prims_of(make_jaxpr(c.fn)(*[xp.asarray(a) for a in c.args])) for c in CASES))
    reached |= prims_of(make_jaxpr(lambda x: io_callback(lambda v: None, None, x))(*args))
    reached |= prims_of(make_jaxpr(lambda x: debug_print("{}", x) or x)(*args))
    assert lowered_by("xla.lower_callbacks") - reached == set()
