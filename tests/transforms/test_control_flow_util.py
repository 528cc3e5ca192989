"""control_flow_util.py: the helpers the control-flow primitives share (carry promotion, constant
hoisting and joining, interning, leaf paths), each checked on what it promises."""
from collections import namedtuple

import numpy as np
import pytest

import array_namespace as xp
from transforms.control_flow_util import (hoist_consts, intern_jaxpr, join_consts, leaf_paths, promote_carry)
from transforms.core import get_aval
from transforms.jaxpr import eval_jaxpr
from transforms.jaxpr_transforms import stage
from transforms.pytree import tree_flatten


def raw(v):
    return xp.asarray(np.asarray(v))._v


def test_promote_carry_weak_scalar_takes_body_dtype_and_errors_name_the_leaf():
    f32 = get_aval(raw(np.float32(1)))
    new, changed = promote_carry([0.0], [f32], ["init[0]"], "scan body", "init")
    assert changed and get_aval(new[0]).dtype == np.float32 and not get_aval(new[0]).weak_type
    same, changed = promote_carry([raw(np.float32(2))], [f32], ["init[0]"], "scan body", "init")
    assert not changed
    with pytest.raises(TypeError, match=r"leaf init\[0\] is f64\[3\] in init but f32\[\]"):
        promote_carry([raw(np.zeros(3))], [f32], ["init[0]"], "scan body", "init")


def test_hoist_and_join_consts_keep_values():
    c1, c2 = raw(np.array([1.0, 2.0])), raw(np.array([10.0, 20.0]))
    av = [get_aval(c1)]
    b1 = stage(lambda x: [(xp.asarray(x) * xp.asarray(c1))._v], av)
    b2 = stage(lambda x: [(xp.asarray(x) + xp.asarray(c2))._v], av)
    h, consts = hoist_consts(b1)
    assert not h.consts and len(consts) == 1
    x = raw(np.array([3.0, 4.0]))
    np.testing.assert_array_equal(np.asarray(eval_jaxpr(h.jaxpr, [], *consts, x)[0]), [3.0, 8.0])
    (j1, j2), jc = join_consts([b1, b2])
    assert len(jc) == 2 and j1.in_avals == j2.in_avals            # every branch takes every constant
    np.testing.assert_array_equal(np.asarray(eval_jaxpr(j1.jaxpr, [], *jc, x)[0]), [3.0, 8.0])
    np.testing.assert_array_equal(np.asarray(eval_jaxpr(j2.jaxpr, [], *jc, x)[0]), [13.0, 24.0])


def test_intern_jaxpr_one_object_per_structure():
    av = [get_aval(raw(np.zeros(2)))]
    mk = lambda: stage(lambda x: [(xp.asarray(x) * 2.0)._v], av)
    assert intern_jaxpr(mk()) is intern_jaxpr(mk())
    other = stage(lambda x: [(xp.asarray(x) * 3.0)._v], av)
    assert intern_jaxpr(other) is not intern_jaxpr(mk())


def test_leaf_paths():
    P = namedtuple("P", "w b")
    _, tree = tree_flatten((P(1.0, 2.0), {"k": [3.0]}))
    assert leaf_paths(tree, "init") == ["init[0].w", "init[0].b", "init[1]['k'][0]"]
