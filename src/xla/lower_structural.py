"""Lowering of shape primitives, reductions, dot_general and the jit call."""
from __future__ import annotations

import math

import numpy as np

from transforms.jaxpr_transforms import jit_p
from transforms.primitives import linalg as L
from transforms.primitives import reductions as R
from transforms.primitives import structural as S

from ._jaxlib import hlo, ir
from .compile_flags import own_reductions
from .host import Kernel, host_kernels
from .lower_elementwise import _cmp, _flushed, _full, _hidden
from .lowering import constant, fill_region, jaxpr_subcomp, lowering_rules, module_rules, tensor_type, ttype

# ----------------------------------------------------------------------------- shapes
lowering_rules[S.broadcast_in_dim_p] = lambda c, x, *, shape, broadcast_dimensions: hlo.BroadcastInDimOp(
    ttype(c.avals_out[0]), x, broadcast_dimensions=list(broadcast_dimensions)).result
lowering_rules[S.reshape_p] = lambda c, x, *, new_sizes: hlo.ReshapeOp(ttype(c.avals_out[0]), x).result
lowering_rules[S.transpose_p] = lambda c, x, *, permutation: hlo.TransposeOp(x, list(permutation)).result
lowering_rules[S.concatenate_p] = lambda c, *xs, dimension: hlo.ConcatenateOp(list(xs), dimension).result
lowering_rules[S.slice_p] = lambda c, x, *, start_indices, limit_indices, strides: hlo.SliceOp(
    x, list(start_indices), list(limit_indices), list(strides)).result
lowering_rules[S.pad_p] = lambda c, x, pv, *, padding_config: hlo.PadOp(
    x, pv, [p[0] for p in padding_config], [p[1] for p in padding_config],
    [p[2] for p in padding_config]).result
lowering_rules[S.rev_p] = lambda c, x, *, dimensions: hlo.ReverseOp(x, list(dimensions)).result \
    if dimensions else x
lowering_rules[S.iota_p] = lambda c, *, dtype, shape, dimension: hlo.IotaOp(
    ttype(c.avals_out[0]), dimension).result

# ------------------------------------------------------------------------- reductions


def _identity(kind, dtype):
    dt = np.dtype(dtype)
    if kind == "sum":
        return 0
    if kind == "prod":
        return 1
    if kind in ("and", "or"):
        if dt == np.bool_:
            return kind == "and"
        return (np.iinfo(dt).max if dt.kind == "u" else -1) if kind == "and" else 0   # (and: all bits set)
    if dt.kind == "f":
        return -np.inf if kind == "max" else np.inf
    if dt.kind == "b":
        return kind == "min"
    info = np.iinfo(dt)
    return info.min if kind == "max" else info.max


def _reduce(x, dtype, out_shape, axes, kind, op):
    shape = list(ir.RankedTensorType(x.type).shape)
    nan = _any_nan(x, shape, out_shape, axes) if kind in ("max", "min") and np.dtype(dtype).kind == "f" else None
    if axes and len(shape) - 1 not in axes and max(shape[d] for d in axes) > TREE_WINDOW:
        x, shape = _column_first_level(x, dtype, shape, axes, kind, op)
    init = constant(_identity(kind, dtype), dtype)
    r = hlo.ReduceOp([tensor_type(out_shape, dtype)], [x], [init], dimensions=list(axes))
    scalar = tensor_type((), dtype)
    fill_region(r.body, [scalar, scalar], lambda p, q: [op(p, q).result])
    if nan is None:
        return r.result
    repair = hlo.SelectOp(nan, hlo.BroadcastInDimOp(r.result.type, constant(np.nan, dtype), []).result, r.result)
    repair.operation.attributes[_NAN_REPAIR] = ir.UnitAttr.get()
    return repair.result


def _any_nan(x, shape, out_shape, axes):
    """Whether the values a max or min reduces into each result hold a NaN (bools of the result's shape). XLA's
    max and min propagate NaN, but XLA:CPU hands a row reduction to YNNPACK, whose max and min drop it:
    jit(xp.max(x, axis=1)) of a 100x256 float64 x was a row's largest number where the row held a NaN, and -inf
    for a row of NaNs (JAX 0.10.2 the same; argmax, built on it, an index out of range). Dropped from a module
    whose reductions XLA's emitter runs (_settle_nan_repairs). The cost, one more reduction over uint8s: jit
    row max of 2017x67 float64 59 -> 119 us (NumPy 96), of 4000x4000 3.0 -> 8.8 ms (NumPy 8.5). Tried and
    slower: a float max or sum of the NaN flags (YNNPACK's select: 40 ms there), XLA's emitter for the whole
    program (21 ms), a reduce body YNNPACK does not take (9 ms, a full reduction 22), an integer max of the
    masked bits (50 ms)."""
    u = hlo.ConvertOp(tensor_type(shape, np.uint8), _cmp(x, x, "NE")).result
    flags = _reduce(u, np.uint8, out_shape, axes, "max", hlo.MaxOp)
    return hlo.ConvertOp(tensor_type(out_shape, np.bool_), flags).result


_NAN_REPAIR = "array_namespace.nan_repair"


def _settle_nan_repairs(module):
    """_any_nan's repairs kept where YNNPACK may run a row reduction, dropped (XLA removes what computed their
    flags) from a module it compiles with YNNPACK's reductions off (compile_flags.own_reductions), whose max and
    min are XLA's own, which keep NaN. Where they stay they cost: jit(stats.moment) of 2021x71 ~390 -> ~470 us."""
    marked = []

    def visit(op):
        if _NAN_REPAIR in op.attributes:
            marked.append(op)
        return ir.WalkResult.ADVANCE
    with module.context:
        module.operation.walk(visit)
        drop = own_reductions(module)
        for op in marked:
            del op.attributes[_NAN_REPAIR]
            if drop:
                op.results[0].replace_all_uses_with(op.operands[2])
                op.erase()


module_rules.append(_settle_nan_repairs)


# XLA:CPU rewrites a reduction over an axis longer than TREE_WINDOW into a tree of reduce-windows, and fuses no
# elementwise producer into a reduce-window: the producer is first written out whole. A column reduction (a
# leading axis reduced, the last kept; such programs run XLA's own emitter: compile_flags) of an expression
# paid a full-size temporary a call: jit(sum((y - yh) ** 2, axis=0)) on 4000x4000 float64 wrote 128 MB, 63-72
# ms (JAX, on YNNPACK: 14); the same on (300000, 3): 2.3 ms.
TREE_WINDOW = 32


def _column_first_level(x, dtype, shape, axes, kind, op):
    """The tree's first level written out for a column reduction: the longest reduced axis cut into SLAB slabs
    (padded with the identity), reduced over them by one reduce XLA fuses with x's producer (SLAB <= TREE_WINDOW:
    no tree), behind a barrier (XLA's simplifier would merge two reduces back into one). (x, its new shape):
    that axis SLAB times shorter, the rest of the reduction the caller's (4000x4000 above: 10-12 ms)."""
    d = max(axes, key=lambda a: shape[a])
    m = -(-shape[d] // SLAB)
    if m * SLAB != shape[d]:
        hi = [0] * len(shape)
        hi[d] = m * SLAB - shape[d]
        x = hlo.PadOp(x, constant(_identity(kind, dtype), dtype), [0] * len(shape), hi, [0] * len(shape)).result
    x = hlo.ReshapeOp(tensor_type(shape[:d] + [SLAB, m] + shape[d + 1:], dtype), x).result
    shape = shape[:d] + [m] + shape[d + 1:]
    first = hlo.ReduceOp([tensor_type(shape, dtype)], [x], [constant(_identity(kind, dtype), dtype)], dimensions=[d])
    scalar = tensor_type((), dtype)
    fill_region(first.body, [scalar, scalar], lambda p, q: [op(p, q).result])
    return hlo.OptimizationBarrierOp([first.result]).results[0], shape


# Sums and products of the narrow floating dtypes accumulate in float64 (complex64 in complex128) and round
# once (cumulative sums and products too, in lower_sorting): a float32 product of 2^20 values near 1 was off by
# ~4000 ulps under XLA's float32 tree (NumPy's ~400: a product's error does not shrink with a tree, only with
# a wider accumulator), float16 ones by ~300 (issue 23). float32 sums over more than SUM32_WIDE_MAX elements are
# left to XLA's vectorized float32 kernel (YNNPACK): its error is about NumPy's pairwise sum's (sometimes 2x,
# sometimes 1/20th), far inside NumPy's error bound, while a float64 sum there is 1.5-3x slower; below it XLA's
# float32 tree of 32-element windows was ~2x NumPy's error and a float64 sum costs nothing measurable.
WIDE_ACCUMULATOR = {"float16": np.float64, "bfloat16": np.float64, "float32": np.float64,
                    "complex64": np.complex128}
SLAB = 16
SUM32_WIDE_MAX = 2 ** 14


def _wide_reduce(x, a, out, axes, kind, op, wide):
    """Reduce in the wide dtype, fast: XLA does not fuse a convert into its tree of reduce-windows (a plain
    float64 reduce of float32 was 3-30x slower than today's). So the longest reduced axis is first cut into SLAB
    contiguous slabs, converted and combined pairwise elementwise (one vectorized loop over the input), and
    the SLAB-times smaller wide result reduced by XLA, then rounded once."""
    shape, dt = list(a.shape), np.dtype(wide)
    if np.prod([shape[d] for d in axes], dtype=np.int64) <= SLAB:
        x = hlo.ConvertOp(tensor_type(shape, dt), x).result
    else:
        d = max(axes, key=lambda d: shape[d])
        m = -(-shape[d] // SLAB)   # k <= SLAB slabs of m, padded with fewer than m identities
        k = -(-shape[d] // m)
        if k * m != shape[d]:
            hi = [0] * a.ndim
            hi[d] = k * m - shape[d]
            x = hlo.PadOp(x, constant(_identity(kind, a.dtype), a.dtype), [0] * a.ndim, hi, [0] * a.ndim).result
        shape[d] = m
        parts = []
        for i in range(k):
            start, limit = [0] * a.ndim, shape[:d] + [(i + 1) * m] + shape[d + 1:]
            start[d] = i * m
            part = hlo.SliceOp(x, start, limit, [1] * a.ndim).result
            parts.append(hlo.ConvertOp(tensor_type(shape, dt), part).result)
        while len(parts) > 1:
            parts = [op(p, q).result for p, q in zip(parts[::2], parts[1::2])] + parts[len(parts) // 2 * 2:]
        x = parts[0]
    return hlo.ConvertOp(ttype(out), _reduce(x, dt, out.shape, axes, kind, op)).result


def _reducer(kind, op):
    def rule(c, x, *, axes):
        a, out = c.avals_in[0], c.avals_out[0]
        if a.dtype == np.bool_ and kind in ("and", "or", "min", "max"):
            # all / any as the min / max of the booleans as uint8: XLA's CPU emitter reduces booleans element by
            # element, bytes vectorized (xp.all(xp.isfinite(x)) on 2026x76 float64: 190 -> 45 us); the same result
            k, o = ("min", hlo.MinOp) if kind in ("and", "min") else ("max", hlo.MaxOp)
            u = hlo.ConvertOp(tensor_type(a.shape, np.uint8), x).result
            return hlo.ConvertOp(ttype(out), _reduce(u, np.uint8, out.shape, axes, k, o)).result
        if kind in ("sum", "prod", "max", "min") and a.dtype.kind in "fc" and math.prod(a.shape[d] for d in axes) == 1:
            # one element per result: XLA's simplifier turns the reduce into that element, dropping the identity,
            # so sum(-0.0) was -0.0 and prod(inf+0j) inf+0j where the host kernels (NumPy's) give identity op x,
            # 0.0 and inf+nanj. Written out, behind a barrier (x + 0 is folded to x too: _hidden). That element is
            # a result of arithmetic, so a subnormal is a zero of its sign (README: subnormals), as eagerly; LLVM
            # still folds 1 * x into x, and max and min have no identity to add: flushed explicitly
            # (jit(xp.max)(xp.asarray([1.5e-323])) was 1.5e-323, eagerly 0.0)
            one = hlo.ReshapeOp(ttype(out), x).result
            if kind in ("max", "min"):
                return _flushed(one, out)
            r = op(*_hidden(_full(_identity(kind, a.dtype), out), one)).result
            return r if kind == "sum" else _flushed(r, out)
        wide = WIDE_ACCUMULATOR.get(a.dtype.name) if kind == "prod" or (
            kind == "sum" and (a.dtype != np.float32 or a.size <= SUM32_WIDE_MAX)) else None
        if wide is not None:
            return _wide_reduce(x, a, out, axes, kind, op, wide)
        return _reduce(x, a.dtype, out.shape, axes, kind, op)
    return rule


lowering_rules[R.reduce_sum_p] = _reducer("sum", hlo.AddOp)
lowering_rules[R.reduce_prod_p] = _reducer("prod", hlo.MulOp)
lowering_rules[R.reduce_max_p] = _reducer("max", hlo.MaxOp)
lowering_rules[R.reduce_min_p] = _reducer("min", hlo.MinOp)
lowering_rules[R.reduce_and_p] = _reducer("and", hlo.AndOp)
lowering_rules[R.reduce_or_p] = _reducer("or", hlo.OrOp)


# argmax/argmin along an axis up to this long: a select chain over its slices (elementwise, one fused loop over the
# other axes). Longer: two reductions of one operand each. XLA's CPU emitter runs a variadic reduce over (value,
# index) element by element: float64, per call, variadic / chain / two reductions (NumPy):
#   (320000, 5) along 5: 553 / 546 / 855 us (5400);  (25000, 64) along 64: ~2800 / 484 / 956 (949);
#   (2000, 80) along 80: 369 / 84 / 162 (55);  (1000000,): 3458 / - / 615 (312).
ARG_CHAIN_MAX = 32


def _arg_reducer(direction):
    """The first extremum's index (NaN counts as the extremum, the first NaN wins; -0.0 ties 0.0), without a variadic
    reduce (see ARG_CHAIN_MAX). Complex operands are refused by the namespace (the standard's argmax is real)."""
    kind, op = ("max", hlo.MaxOp) if direction == "GT" else ("min", hlo.MinOp)

    def rule(c, x, *, axes, index_dtype):
        a, out = c.avals_in[0], c.avals_out[0]
        (axis,) = axes
        k = a.shape[axis]
        if 0 < k <= ARG_CHAIN_MAX:
            lo, hi = [0] * a.ndim, list(a.shape)
            best = idx = None
            for j in range(k):   # slice j wins where it beats the best so far, or is the first NaN
                lo[axis], hi[axis] = j, j + 1
                v = hlo.ReshapeOp(ttype(out.update(dtype=a.dtype)), hlo.SliceOp(x, lo, hi, [1] * a.ndim).result).result
                at = hlo.BroadcastInDimOp(ttype(out), constant(j, index_dtype), []).result
                if best is None:
                    best, idx = v, at
                    continue
                win = _cmp(v, best, direction, a.dtype)
                if a.dtype.kind == "f":
                    first_nan = hlo.AndOp(_cmp(v, v, "NE", a.dtype), _cmp(best, best, "EQ", a.dtype)).result
                    win = hlo.OrOp(win, first_nan).result
                best, idx = hlo.SelectOp(win, v, best).result, hlo.SelectOp(win, at, idx).result
            return idx
        ext = _reduce(x, a.dtype, out.shape, axes, kind, op)   # (NaN-propagating: _any_nan)
        ext = hlo.BroadcastInDimOp(ttype(a), ext, broadcast_dimensions=[d for d in range(a.ndim) if d != axis]).result
        hit = _cmp(x, ext, "EQ", a.dtype)
        if a.dtype.kind == "f":   # (an extremum that is NaN: the NaNs hold it)
            hit = hlo.OrOp(hit, hlo.AndOp(_cmp(ext, ext, "NE", a.dtype), _cmp(x, x, "NE", a.dtype)).result).result
        it = np.int32 if k < 2 ** 31 else index_dtype   # (the least index holding it, int32 where it fits: faster)
        n = constant(k, it)
        pos = hlo.SelectOp(hit, hlo.IotaOp(tensor_type(a.shape, it), axis).result,
                           hlo.BroadcastInDimOp(tensor_type(a.shape, it), n, []).result).result
        r = hlo.ReduceOp([tensor_type(out.shape, it)], [pos], [n], dimensions=[axis])
        scalar = tensor_type((), it)
        fill_region(r.body, [scalar, scalar], lambda p, q: [hlo.MinOp(p, q).result])
        return hlo.ConvertOp(ttype(out), r.result).result
    return rule


lowering_rules[R.argmax_p] = _arg_reducer("GT")
lowering_rules[R.argmin_p] = _arg_reducer("LT")

# ------------------------------------------------------------------------ dot_general


def _dot_general(c, x, y, *, dimension_numbers):
    (lc, rc), (lb, rb) = dimension_numbers
    dn = hlo.DotDimensionNumbers.get(lhs_batching_dimensions=list(lb), rhs_batching_dimensions=list(rb),
                                     lhs_contracting_dimensions=list(lc), rhs_contracting_dimensions=list(rc))
    prec = ir.ArrayAttr.get([hlo.PrecisionAttr.get("HIGHEST")] * 2)
    out = c.avals_out[0]
    d = hlo.DotGeneralOp(ttype(out), x, y, dn, precision_config=prec).result
    if out.dtype.kind in "fc" and math.prod(c.avals_in[0].shape[i] for i in lc) == 1:
        # one product per result: XLA's simplifier turns the dot into a multiply, whose -0.0 stayed where a
        # dot's sum (from +0.0, as NumPy's and XLA's own for longer sums) gives 0.0 (jit(matmul) of (2, 1) and
        # (1, 2) arrays gave -0.0 where eagerly 0.0). Written out, behind a barrier (x + 0 is folded: _hidden)
        return hlo.AddOp(*_hidden(_full(0, out), d)).result
    return d


lowering_rules[L.dot_general_p] = _dot_general

# --------------------------------------------------------------------------- jit call
lowering_rules[jit_p] = lambda c, *args, jaxpr, name: jaxpr_subcomp(jaxpr.jaxpr, jaxpr.consts, list(args))


# ------------------------------------------------------------------ host kernels (eager on the CPU)
# Shape primitives return NumPy views where NumPy can (no copy); reductions accumulate in the
# operand's dtype (integers wrap) and give the reduction's identity over empty axes, as XLA does.

def _h_broadcast_in_dim(x, *, shape, broadcast_dimensions):
    """np.broadcast_to's read-only view, made by the ndarray constructor (~0.6 us; broadcast_to builds an
    iterator, ~2.5 us) on x's buffer: a strided x, the smaller side, is copied first."""
    x = x if x.flags.c_contiguous else x.copy()
    st = [0] * len(shape)
    for d, n, s in zip(broadcast_dimensions, x.shape, x.strides):
        st[d] = s if n == shape[d] else 0
    out = np.ndarray(shape, x.dtype, x, 0, tuple(st))
    out.flags.writeable = False   # (one element seen at several places is never written: host.sole_holder)
    return out


def _h_pad(x, pv, *, padding_config):
    dt = x.dtype
    inner = [n + max(n - 1, 0) * it for n, (_, _, it) in zip(x.shape, padding_config)]
    if any(it for _, _, it in padding_config):
        tmp = np.full(inner, pv, dt)
        tmp[tuple(slice(None, None, it + 1) for _, _, it in padding_config)] = x
    else:
        tmp = x
    out_shape = [n + lo + hi for n, (lo, hi, _) in zip(inner, padding_config)]
    out = np.full(out_shape, pv, dt)
    src, dst = [], []
    for n, (lo, hi, _) in zip(inner, padding_config):
        s0, s1 = max(-lo, 0), n - max(-hi, 0)
        if s1 <= s0:
            return out
        src.append(slice(s0, s1))
        dst.append(slice(max(lo, 0), max(lo, 0) + s1 - s0))
    out[tuple(dst)] = tmp[tuple(src)]
    return out


host_kernels[S.broadcast_in_dim_p] = _h_broadcast_in_dim
host_kernels[S.reshape_p] = Kernel(rest=lambda x, *, new_sizes: x.reshape(new_sizes),   # (its form: no kwargs per call)
                                   special=lambda avals, p: (lambda x, s=p["new_sizes"]: x.reshape(s)))
host_kernels[S.transpose_p] = Kernel(rest=lambda x, *, permutation: x.transpose(permutation),   # (NumPy's view)
                                     special=lambda avals, p: (lambda x, q=p["permutation"]: x.transpose(q)))
host_kernels[S.concatenate_p] = lambda *xs, dimension: np.concatenate(xs, axis=dimension)
host_kernels[S.slice_p] = lambda x, *, start_indices, limit_indices, strides: x[tuple(
    slice(s, l, st) for s, l, st in zip(start_indices, limit_indices, strides))]
host_kernels[S.pad_p] = _h_pad
host_kernels[S.rev_p] = lambda x, *, dimensions: np.flip(x, dimensions) if dimensions else x
host_kernels[S.iota_p] = lambda *, dtype, shape, dimension: np.arange(shape[0], dtype=dtype) if len(shape) == 1 else \
    _h_broadcast_in_dim(np.arange(shape[dimension], dtype=dtype), shape=shape, broadcast_dimensions=(dimension,))


def _zero_signs(kind, x, axes, r):
    """XLA's max/min reduction orders -0.0 below +0.0 (max of a slice holding both zeros is +0.0, min -0.0);
    NumPy's reduce keeps the zero its loop meets first (so the answer moved with the order). A zero result is
    fixed to XLA's, so eager and jit agree; r is right wherever it is not zero."""
    if (r if r.ndim == 0 else np.count_nonzero(r) == r.size):   # (no zero: r == 0 then a count was ~0.45 us more)
        return r
    z = r == 0
    sign = np.signbit(x)
    other = (x == 0) & (~sign if kind == "max" else sign)   # (a +0.0 for max, a -0.0 for min: it wins)
    won = np.logical_or.reduce(other, axis=axes)
    zero = np.where(won, 0.0, -0.0) if kind == "max" else np.where(won, -0.0, 0.0)
    return np.where(z, zero.astype(x.dtype), r)


def _h_reducer(kind, ufunc, bool_ufunc=None, with_dtype=False):
    """reduce_<kind>'s host entry: the ufunc's reduce method (np.sum/np.max add ~1 us of Python wrapper per call
    on small arrays) with the axes (and the dtype) bound. An empty reduction gives XLA's identity: NumPy's where
    the ufunc has one; max and min, which have none, fill it."""
    reduce, bool_reduce = ufunc.reduce, (bool_ufunc.reduce if bool_ufunc is not None else None)

    def special(avals, params):
        (a,), axes = avals, params["axes"]
        k = a.dtype.kind
        if k in "fc" and kind in ("and", "or") or k == "c" and kind in ("max", "min"):
            return None   # (declined)
        if k == "b" and bool_reduce is not None:
            return lambda x: bool_reduce(x, axes)
        if with_dtype:
            dt = a.dtype
            return lambda x: reduce(x, axes, dt)
        if ufunc.identity is not None:
            return lambda x: reduce(x, axes)
        fill = _identity(kind, a.dtype)
        fn = (lambda x: _zero_signs(kind, x, axes, reduce(x, axes))) if k == "f" else (lambda x: reduce(x, axes))
        return lambda x: fn(x) if x.size else np.full(
            [n for i, n in enumerate(x.shape) if i not in axes], fill, x.dtype)

    def kernel(x, *, axes):
        fn = special((x,), {"axes": axes})
        return NotImplemented if fn is None else fn(x)
    return Kernel(rest=kernel, special=special)


host_kernels[R.reduce_sum_p] = _h_reducer("sum", np.add, np.logical_or, True)
host_kernels[R.reduce_prod_p] = _h_reducer("prod", np.multiply, np.logical_and, True)
host_kernels[R.reduce_max_p] = _h_reducer("max", np.maximum)
host_kernels[R.reduce_min_p] = _h_reducer("min", np.minimum)
host_kernels[R.reduce_and_p] = _h_reducer("and", np.bitwise_and, np.logical_and)
host_kernels[R.reduce_or_p] = _h_reducer("or", np.bitwise_or, np.logical_or)


def _h_arg(fn):
    def kernel(x, *, axes, index_dtype):
        (axis,) = axes
        if x.dtype.kind == "c":
            return NotImplemented
        if x.shape[axis] == 0:
            return np.zeros([n for i, n in enumerate(x.shape) if i != axis], index_dtype)
        return fn(x, axis=axis).astype(index_dtype)   # first extremum; the first NaN wins (as the lowering)
    return kernel


host_kernels[R.argmax_p] = _h_arg(np.argmax)
host_kernels[R.argmin_p] = _h_arg(np.argmin)


def _h_dot_general(x, y, *, dimension_numbers):
    """(batch, lhs free, rhs free) as one batched matmul (BLAS for floats)."""
    (lc, rc), (lb, rb) = dimension_numbers
    if lc == (1,) and rc == (0,) and not lb and x.ndim == 2 and y.ndim == 2:   # (matmul: checked first)
        return np.matmul(x, y)
    lf = [d for d in range(x.ndim) if d not in lc and d not in lb]
    rf = [d for d in range(y.ndim) if d not in rc and d not in rb]
    bshape = [x.shape[d] for d in lb]
    nb, nk = math.prod(bshape), math.prod([x.shape[d] for d in lc])   # (math.prod: ~0.1 us, np.prod ~3)
    fx, fy = [x.shape[d] for d in lf], [y.shape[d] for d in rf]
    a = np.transpose(x, list(lb) + lf + list(lc)).reshape(nb, math.prod(fx), nk)
    b = np.transpose(y, list(rb) + list(rc) + rf).reshape(nb, nk, math.prod(fy))
    out = np.matmul(a.astype(np.int64), b.astype(np.int64)) != 0 if x.dtype == np.bool_ else np.matmul(a, b)   # (bool)
    return out.reshape(bshape + fx + fy)


def _s_dot_general(avals, params):
    (lc, rc), (lb, rb) = params["dimension_numbers"]
    x, y = avals
    if lc == (1,) and rc == (0,) and not lb and len(x.shape) == 2 and len(y.shape) == 2 and x.dtype != np.bool_:
        return np.matmul   # (what the kernel's first branch calls)
    return None


host_kernels[L.dot_general_p] = Kernel(rest=_h_dot_general, special=_s_dot_general)
