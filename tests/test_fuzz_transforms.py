"""tools/fuzz_transforms.py in the suite: a fixed sample of random calls agrees eagerly, under jit and under vmap.

Each disagreement it found (sum(-0.0), cumulative sums of -0.0s, XLA's folds of x + 0.0 and complex x * 1, a
subnormal read as nonzero in complex special values, clamped out-of-range indices) fails this sample on the
commits before their fixes; larger runs: `python3 tools/fuzz_transforms.py --seed S -n N`."""
import importlib.util
import os
import warnings

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_spec = importlib.util.spec_from_file_location("_tool_fuzz", os.path.join(ROOT, "tools", "fuzz_transforms.py"))
fz = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fz)


def test_random_calls_agree_eagerly_under_jit_and_under_vmap():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        found = [d for seed in (0, 1) for d in fz.fuzz(seed, 200)]
    assert not found, "\n".join(f"{n}{tuple(w)} {kw} under {how}: {a} vs {b}" for n, how, w, kw, a, b in found[:10])


def test_the_comparison_sees_zero_signs_nan_positions_and_exception_types():
    r = lambda *v: ("returns", [np.array(v)])   # noqa: E731
    assert fz._agree(r(0.0, np.nan, 1.0), r(0.0, np.nan, 1.0 + 1e-15))
    assert not fz._agree(r(0.0), r(-0.0))
    assert not fz._agree(r(np.nan, 1.0), r(1.0, np.nan))
    assert not fz._agree(r(1.0), r(1.0 + 1e-9))
    assert not fz._agree(("raises", "IndexError"), ("raises", "ValueError"))
    assert not fz._agree(("raises", "IndexError"), r(1.0))
    assert not fz._agree(("returns", [np.array([complex(0.0, -0.0)])]), ("returns", [np.array([complex(0.0, 0.0)])]))
