"""XLA debug options this package sets on every program it compiles (CompileOptions.env_option_overrides).

YNNPACK reduce fusions off on the CPU (`xla_cpu_experimental_ynn_fusion_type=-reduce`): jaxlib 0.10.2's XLA:CPU
hands reductions, with the elementwise work fused into them, to YNNPACK, which runs float64 column reductions
fused with a multiply 3-8x slower than XLA's own emitter (issue 25, bench_library --size medium, jitted calls'
warm CPU time: metrics.r2_score 5.25 -> 1.15 ms, integrate.trapezoid(axis=0) 0.72 -> 0.21 ms, stats.moment
1.20 -> 0.78 ms, GaussianMixture.fit 150 -> 132 ms; upstream reports the same regression and workaround,
jax-ml/jax#37465). Row reductions lose some (special.logsumexp(axis=1) 0.94 -> 1.77 ms, still under NumPy's).
Matmuls stay on YNNPACK. A value XLA_FLAGS gives the option wins.
"""
import os

YNN_FUSIONS = "xla_cpu_experimental_ynn_fusion_type"
# jaxlib 0.10.2's default list less LIBRARY_FUSION_TYPE_REDUCE (what XLA_FLAGS' "-reduce" gives; an override
# names the enum values in full)
_WITHOUT_REDUCE = "LIBRARY_FUSION_TYPE_INDIVIDUAL_DOT,LIBRARY_FUSION_TYPE_INDIVIDUAL_CONVOLUTION"


def overrides():
    """The (option, value) pairs for CompileOptions.env_option_overrides."""
    return [] if YNN_FUSIONS in os.environ.get("XLA_FLAGS", "") else [(YNN_FUSIONS, _WITHOUT_REDUCE)]
