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
- XLA:CPU's MLIR fusion emitters off (`xla_cpu_use_fusion_emitters=false`: its elemental LLVM emitter instead):
  the MLIR emitters build a pass pipeline per fusion, which made compiling ~2x slower (a gammaincinv program
  3.8-5.1 -> 1.7-2.8 s, random.gamma 1.4 -> 0.6-0.7 s; first calls and the test suite are compile-bound) for the
  same bits (sha256 equal over samplers, special functions, reductions and elementwise chains) and the same or
  better run time (random.normal 1000x1200 f64 33-43 -> 29-34 ms).
"""
import os

# jaxlib 0.10.2's default YNNPACK fusion list less LIBRARY_FUSION_TYPE_REDUCE (what XLA_FLAGS' "-reduce" gives;
# an override names the enum values in full)
OPTIONS = {
    "xla_cpu_experimental_ynn_fusion_type": "LIBRARY_FUSION_TYPE_INDIVIDUAL_DOT,LIBRARY_FUSION_TYPE_INDIVIDUAL_CONVOLUTION",
    "xla_cpu_use_fusion_emitters": False,
}


def overrides():
    """The (option, value) pairs for CompileOptions.env_option_overrides: those XLA_FLAGS does not set."""
    flags = os.environ.get("XLA_FLAGS", "")
    return [(k, v) for k, v in OPTIONS.items() if k not in flags]
