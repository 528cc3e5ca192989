"""Lowering of the collectives: inside a pmap body (axis bound by lower_collectives.axis_env) each becomes its
XLA collective over every replica; outside one, a clear error. (Values on 8 devices: tests/transforms/pmap_cases.py.)"""
import numpy as np
import pytest

from transforms.collectives import (all_gather_p, all_to_all_p, axis_index_p, pmax_p, pmin_p, ppermute_p, psum_p,
                                    psum_scatter_p)
from transforms.core import ShapedArray
from transforms.jaxpr import ClosedJaxpr, Eqn, Jaxpr, Var
from transforms.core import abstract_eval
from xla.lower_collectives import axis_env
from xla.lowering import lower_jaxpr

A = ShapedArray((4, 6), np.float32)
CASES = [
    (psum_p, dict(axes=("i",)), "stablehlo.all_reduce", "stablehlo.add"),
    (pmax_p, dict(axes=("i",)), "stablehlo.all_reduce", "stablehlo.maximum"),
    (pmin_p, dict(axes=("i",)), "stablehlo.all_reduce", "stablehlo.minimum"),
    (all_gather_p, dict(axes=("i",), axis=1, tiled=True, axis_size=4), "stablehlo.all_gather", "all_gather_dim = 1"),
    (all_gather_p, dict(axes=("i",), axis=0, tiled=False, axis_size=4), "stablehlo.all_gather", "tensor<4x4x6xf32>"),
    (psum_scatter_p, dict(axes=("i",), scatter_dimension=0, tiled=False, axis_size=4), "stablehlo.reduce_scatter",
     "tensor<6xf32>"),
    (psum_scatter_p, dict(axes=("i",), scatter_dimension=1, tiled=True, axis_size=2), "stablehlo.reduce_scatter",
     "scatter_dimension = 1"),
    (all_to_all_p, dict(axes=("i",), split_axis=0, concat_axis=1, tiled=False, axis_size=4), "stablehlo.all_to_all",
     "tensor<6x4xf32>"),
    (ppermute_p, dict(axes=("i",), perm=((0, 1), (1, 2))), "stablehlo.collective_permute", "[0, 1], [1, 2]"),
]


def _text(prim, params, avals, env=("i", 4)):
    invars = [Var(a) for a in avals]
    out = Var(abstract_eval(prim, avals, params))
    closed = ClosedJaxpr(Jaxpr([], invars, [Eqn(prim, invars, [out], params)], [out]), [])
    if env is None:
        return str(lower_jaxpr(closed))
    with axis_env(*env):
        return str(lower_jaxpr(closed))


@pytest.mark.parametrize("prim,params,op,detail", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_collective_lowers_to_its_xla_op_over_every_replica(prim, params, op, detail):
    n = params.get("axis_size", 4)
    text = _text(prim, params, [A], ("i", n))
    assert op in text and detail in text
    if op != "stablehlo.collective_permute":
        groups = ", ".join(map(str, range(n)))
        assert f"replica_groups = dense<[[{groups}]]>" in text


def test_axis_index_is_the_replica_id():
    text = _text(axis_index_p, dict(axes=("i",)), [])
    assert "stablehlo.replica_id" in text and "tensor<i32>" in text


def test_unbound_axis_is_a_clear_error():
    with pytest.raises(NotImplementedError, match=r"axis 'j': no pmap binds it.*\['i'\]"):
        _text(psum_p, dict(axes=("j",)), [A])
    with pytest.raises(NotImplementedError, match=r"axis 'i': no pmap binds it in this program \(pmap axes here: \[\]\)"):
        _text(psum_p, dict(axes=("i",)), [A], env=None)
