"""xla/lower_sorting.py: sort (values, with indices, descending, stable ties, NaN last) and the four
cumulative scans, reached through the namespace or bound directly, under jit, against NumPy."""
import numpy as np
import pytest

import array_namespace as xp
from lower_harness import Case, check, lowered_by, prims_of, raw
from transforms import make_jaxpr
from transforms.primitives import sorting as SO

R = np.random.default_rng(0)
X = R.standard_normal((3, 6))
NAN = np.array([3.0, np.nan, -np.inf, 1.0, -0.0, np.inf, 1.0, np.nan])
TIES = np.array([2, 1, 2, 0, 1, 2, 0], np.int32)

CASES = [
    Case("sort", lambda x: xp.sort(x, axis=1), lambda x: np.sort(x, 1), [X]),
    Case("sort-nan-last", xp.sort, np.sort, [NAN]),
    Case("sort-f32-desc", lambda x: xp.sort(x, descending=True), lambda x: -np.sort(-x), [X.astype(np.float32)]),
    Case("argsort-stable", xp.argsort, lambda x: np.argsort(x, kind="stable"), [TIES]),
    Case("argsort-desc-stable", lambda x: xp.argsort(x, descending=True),
         lambda x: (len(x) - 1 - np.argsort(x[::-1], kind="stable")[::-1]), [TIES]),
    Case("cumsum", lambda x: xp.cumulative_sum(x, axis=1), lambda x: np.cumsum(x, 1), [X], 1e-13, 1e-15),
    Case("cumprod-int", lambda x: xp.cumulative_prod(x), np.cumprod, [TIES + 1]),
    Case("cummax", raw(SO.cummax_p, axis=0, reverse=False), lambda x: np.maximum.accumulate(x, 0), [NAN]),
    Case("cummin-reverse", raw(SO.cummin_p, axis=1, reverse=True),
         lambda x: np.flip(np.minimum.accumulate(np.flip(x, 1), 1), 1), [X]),
]


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_jit_matches_numpy(case):
    check(case)


def test_every_lowered_primitive_is_reached():
    reached = set().union(*(prims_of(make_jaxpr(c.fn)(*[xp.asarray(a) for a in c.args])) for c in CASES))
    assert lowered_by("xla.lower_sorting") - reached == set()
