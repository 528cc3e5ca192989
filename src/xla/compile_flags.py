"""XLA debug options this package sets on every program it compiles (CompileOptions.env_option_overrides).

One table, option -> value; a value XLA_FLAGS gives an option wins (the user's flags are read by XLA itself).
The overrides are part of the persistent cache key (xla/_jaxlib.executable_key_parts).

- YNNPACK reduce fusions off on the CPU (`xla_cpu_experimental_ynn_fusion_type` less REDUCE): jaxlib 0.10.2's
  XLA:CPU hands reductions, with the elementwise work fused into them, to YNNPACK, which runs float64 column
  reductions fused with a multiply 3-8x slower than XLA's own emitter (issue 25, bench_library --size medium,
  jitted calls' warm CPU time: metrics.r2_score 5.25 -> 1.15 ms, integrate.trapezoid(axis=0) 0.72 -> 0.21 ms,
  stats.moment 1.20 -> 0.78 ms, GaussianMixture.fit 150 -> 132 ms; upstream reports the same regression and
  workaround, jax-ml/jax#37465). Row reductions lose some (special.logsumexp(axis=1) 0.94 -> 1.77 ms, still
  under NumPy's). Matmuls stay on YNNPACK.
Tried and left out: `xla_cpu_use_fusion_emitters=false` (XLA:CPU's elemental emitter) halves the compile time of
most programs for the same bits, but compiling `jit(vmap(random.poisson))` with it did not end (killed after 2 and 7 min)
(tests/transforms/test_random_dists.py::test_poisson_chi_square; 5 s with the MLIR emitters).
"""
import os

# jaxlib 0.10.2's default YNNPACK fusion list less LIBRARY_FUSION_TYPE_REDUCE (what XLA_FLAGS' "-reduce" gives;
# an override names the enum values in full)
OPTIONS = {
    "xla_cpu_experimental_ynn_fusion_type": "LIBRARY_FUSION_TYPE_INDIVIDUAL_DOT,LIBRARY_FUSION_TYPE_INDIVIDUAL_CONVOLUTION",
}


def overrides():
    """The (option, value) pairs for CompileOptions.env_option_overrides: those XLA_FLAGS does not set."""
    flags = os.environ.get("XLA_FLAGS", "")
    return [(k, v) for k, v in OPTIONS.items() if k not in flags]
