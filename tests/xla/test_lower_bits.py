"""xla/lower_bits.py: bitcast_convert_type, bound directly under jit, against NumPy's view() for every
same-width pair (float <-> int <-> uint), special values' bit patterns included (-0.0, +-inf, NaN)."""
import numpy as np
import pytest

from lower_harness import Case, check, grid, lowered_by, raw
from transforms.primitives.bits import bitcast_convert_type_p

PAIRS = [("float32", "int32"), ("float32", "uint32"), ("float64", "int64"), ("float64", "uint64"),
         ("int32", "float32"), ("uint64", "float64"), ("int16", "uint16"), ("int8", "uint8")]


def _vals(dt):
    dt = np.dtype(dt)
    if dt.kind == "f":
        return grid(dt)
    info = np.iinfo(dt)
    return np.array([0, 1, 7, info.max, info.min, info.max // 3], dt)


CASES = [Case(f"{a}->{b}", raw(bitcast_convert_type_p, new_dtype=np.dtype(b)), lambda x, b=b: x.view(b),
              [_vals(a)]) for a, b in PAIRS]


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_jit_matches_numpy_view(case):
    check(case)


def test_float_bits_survive_the_round_trip():
    x = grid(np.float64)
    to = raw(bitcast_convert_type_p, new_dtype=np.dtype("int64"))
    back = raw(bitcast_convert_type_p, new_dtype=np.dtype("float64"))
    check(Case("round-trip", lambda v: back(to(v)), lambda v: v, [x]))
    assert {c.fn.__name__ for c in CASES} >= lowered_by("xla.lower_bits")
