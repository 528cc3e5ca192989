"""xla/compile_flags.py: every compiled program runs with XLA:CPU's YNNPACK reduce fusions off (jaxlib 0.10.2 runs
float64 column sums fused with elementwise work 3-8x slower there: issue 25), matmuls still on YNNPACK, and
a value XLA_FLAGS gives the option wins. Checked on XLA's optimized HLO; values against NumPy."""
import numpy as np

import array_namespace as xp
from transforms import jit
from xla import compile_flags

X = np.random.default_rng(0).standard_normal((2024, 74))


def test_column_reductions_leave_ynnpack_and_matmuls_stay():
    trapezoid = jit(lambda x: xp.sum((x[1:] + x[:-1]) / 2.0, axis=0))
    gram = jit(lambda x: x @ x.T)
    a = xp.asarray(X)
    assert "__ynn_fusion" not in trapezoid.compiled(a).as_text()
    assert "__ynn_fusion" in gram.compiled(a).as_text()   # (the override names jaxlib's other fusion types)
    np.testing.assert_allclose(np.asarray(trapezoid(a)), ((X[1:] + X[:-1]) / 2.0).sum(0), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(gram(a)), X @ X.T, rtol=1e-12, atol=1e-12)


def test_xla_flags_setting_the_option_wins(monkeypatch):
    assert compile_flags.overrides() == [(compile_flags.YNN_FUSIONS, compile_flags._WITHOUT_REDUCE)]
    monkeypatch.setenv("XLA_FLAGS", "--xla_cpu_experimental_ynn_fusion_type=+reduce")
    assert compile_flags.overrides() == []
