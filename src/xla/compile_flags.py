"""XLA debug options this package sets on every program it compiles (CompileOptions.env_option_overrides).

Two tables, option -> value (every program's, and a program with a column reduction's); a value XLA_FLAGS gives an
option wins (the user's flags are read by XLA itself).
The overrides are part of the persistent cache key (xla/_jaxlib.executable_key_parts; the module, which decides
them, is too).

- YNNPACK reduce fusions off on the CPU for a program with a column reduction (one that reduces a leading
  dimension and keeps the last: `xla_cpu_experimental_ynn_fusion_type` less REDUCE); every other program keeps
  XLA's default, which hands reductions, with the elementwise work fused into them, to YNNPACK. A static rule
  of the module's reductions (`overrides(module)`), from one A/B of jitted library calls (2031x81 float64,
  wall time per call, the same process, taking turns; XLA's emitter vs YNNPACK):
  - column reductions lose with YNNPACK: metrics.r2_score 844 vs 1089 us, integrate.trapezoid(axis=0) 339 vs
    639, stats.zscore(axis=0) 589 vs 810, stats.moment 755 vs 839 (upstream reports the same,
    jax-ml/jax#37465);
  - row reductions win: special.logsumexp(axis=1) 1839 vs 922 us, a row softmax 1707 vs 1056,
    stats.pearsonr(axis=0) (it reduces the last axis after a moveaxis) 1976 vs 1685; sum(exp(a), axis=1) 5x.
  Matmuls stay on YNNPACK either way. On the emitter a column reduction's first level is one reduce fused
  with its elementwise producer (lower_structural._column_first_level): without it XLA wrote the producer out
  whole, and a 4000x4000 column sum of an expression lost 4-5x to YNNPACK. (A change of the rule changes
  executables the persistent cache keys by the module's text: bump compile_cache.FORMAT_VERSION with it.)
Tried and left out: `xla_cpu_use_fusion_emitters=false` (XLA:CPU's elemental emitter) halves the compile time of
most programs for the same bits, but compiling `jit(vmap(random.poisson))` with it did not end (killed after 2 and 7 min)
(tests/transforms/test_random_dists.py::test_poisson_chi_square; 5 s with the MLIR emitters).
"""
import os

from jaxlib.mlir import ir

OPTIONS: dict = {}   # every program's

# a program with a column reduction's: jaxlib 0.10.2's default YNNPACK fusion list less
# LIBRARY_FUSION_TYPE_REDUCE (what XLA_FLAGS' "-reduce" gives; an override names the enum values in full)
COLUMN_OPTIONS = {
    "xla_cpu_experimental_ynn_fusion_type": "LIBRARY_FUSION_TYPE_INDIVIDUAL_DOT,LIBRARY_FUSION_TYPE_INDIVIDUAL_CONVOLUTION",
}


def overrides(module=None):
    """The (option, value) pairs for CompileOptions.env_option_overrides of `module`, those XLA_FLAGS does not
    set: OPTIONS, and COLUMN_OPTIONS where it has a column reduction (`reduces_columns`; without a module, both:
    the persistent cache key's part, beside the module's text)."""
    flags = os.environ.get("XLA_FLAGS", "")
    opts = dict(OPTIONS)
    if module is None or reduces_columns(module):
        opts.update(COLUMN_OPTIONS)
    return [(k, v) for k, v in opts.items() if k not in flags]


def reduces_columns(module):
    """Whether some reduction in `module` reduces a leading dimension of its operand and keeps the last one
    (True for a module given as text, which is not read)."""
    if not isinstance(module, ir.Module):
        return True
    found = []

    def visit(op):
        if op.name == "stablehlo.reduce":
            dims = list(ir.DenseI64ArrayAttr(op.attributes["dimensions"]))
            rank = ir.RankedTensorType(op.operands[0].type).rank
            if dims and rank - 1 not in dims:
                found.append(op.name)
                return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE
    with module.context:
        module.operation.walk(visit)
    return bool(found)


def own_reductions(module):
    """Whether XLA compiles `module`'s reductions with its own emitter, not YNNPACK (COLUMN_OPTIONS apply to it:
    it reduces columns, and XLA_FLAGS does not set those options)."""
    return set(COLUMN_OPTIONS) <= {k for k, _ in overrides(module)}
