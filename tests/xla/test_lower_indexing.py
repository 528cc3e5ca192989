"""xla/lower_indexing.py: dynamic_slice, dynamic_update_slice, gather and scatter (set/add/multiply/
min/max modes), reached through indexing with traced indices under jit, against NumPy's indexing
(negative and out-of-range starts clamp as the standard's dynamic slices do)."""
import numpy as np
import pytest

import array_namespace as xp
from lower_harness import Case, check, lowered_by, prims_of
from transforms import make_jaxpr

X = np.arange(20.0).reshape(4, 5)
IDX = np.array([3, 0, 3, 1], np.int32)


def _np_at(x, idx, v, op):
    y = x.copy()
    getattr(np, op).at(y, idx, v)
    return y


CASES = [
    Case("dynamic_slice", lambda x, i: x[i], lambda x, i: x[i], [X, np.int32(2)]),
    Case("dynamic_slice-negative", lambda x, i: x[i, 1:3], lambda x, i: x[i, 1:3], [X, np.int32(-1)]),
    Case("dynamic_update_slice", lambda x, i: x.at[i].set(xp.full(5, -1.0)),
         lambda x, i: np.where(np.arange(4)[:, None] == i, -1.0, x), [X, np.int32(1)]),
    Case("gather", lambda x, i: x[i], lambda x, i: x[i], [X, IDX]),
    Case("gather-2d", lambda x, i: x[i, i % 5], lambda x, i: x[i, i % 5], [X, IDX]),
    Case("take-f32", lambda x, i: xp.take(x, i, axis=1), lambda x, i: np.take(x, i, axis=1),
         [X.astype(np.float32), IDX]),
    Case("scatter-set", lambda x, i: x.at[i].set(-1.0), lambda x, i: np.where(np.isin(np.arange(4), i)[:, None], -1.0, x),
         [X, IDX]),
    Case("scatter-add-repeated", lambda x, i: x.at[i].add(1.0), lambda x, i: _np_at(x, i, 1.0, "add"), [X, IDX]),
    Case("scatter-multiply", lambda x, i: x.at[i].multiply(2.0), lambda x, i: _np_at(x, i, 2.0, "multiply"), [X, IDX]),
    Case("scatter-min", lambda x, i: x.at[i].min(7.0), lambda x, i: _np_at(x, i, 7.0, "minimum"), [X, IDX]),
    Case("scatter-max", lambda x, i: x.at[i].max(7.0), lambda x, i: _np_at(x, i, 7.0, "maximum"), [X, IDX]),
]


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_jit_matches_numpy(case):
    check(case)


def test_every_lowered_primitive_is_reached():
    reached = set().union(*(prims_of(make_jaxpr(c.fn)(*[xp.asarray(a) for a in c.args])) for c in CASES))
    assert lowered_by("xla.lower_indexing") - reached == set()
