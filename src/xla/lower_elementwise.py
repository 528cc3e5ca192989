"""Lowering of the elementwise family: one StableHLO/CHLO op per primitive, after broadcasting."""
from __future__ import annotations

import numpy as np

from transforms.primitives import elementwise as E

from ._jaxlib import chlo, hlo, ir
from .host import Kernel, host_kernels
from .lower_elementwise_complex import COMPLEX_KERNELS, complex_div, complex_sign
from .lowering import broadcast_to, constant, lowering_rules, ttype


def _nary(op):
    def rule(c, *xs):
        out = c.avals_out[0]
        xs = [broadcast_to(x, a, a.update(shape=out.shape)) for x, a in zip(xs, c.avals_in)]
        return op(*xs).result
    return rule


def _full(value, aval):
    return hlo.BroadcastInDimOp(ttype(aval), constant(value, aval.dtype), broadcast_dimensions=[]).result


def _compare_type(dtype):
    k = np.dtype(dtype).kind
    return "FLOAT" if k in "fc" else "SIGNED" if k == "i" else "UNSIGNED"


def _cmp(x, y, direction, dtype=np.float64):
    """x direction y of operands of `dtype`: compared as floats, signed or unsigned integers by its kind (bools
    as unsigned)."""
    return hlo.CompareOp(x, y, hlo.ComparisonDirectionAttr.get(direction),
                         compare_type=hlo.ComparisonTypeAttr.get(_compare_type(dtype))).result


def _splat(x):
    """The value of x where it is a constant with one value throughout (a literal), else None."""
    op = getattr(x.owner, "opview", None)
    a = op.value if isinstance(op, hlo.ConstantOp) else None
    ok = isinstance(a, (ir.DenseFPElementsAttr, ir.DenseIntElementsAttr)) and a.is_splat
    return a.get_splat_value().value if ok else None


def _part(aval):
    """The aval of a complex aval's real or imaginary part."""
    return aval.update(dtype=np.float32 if aval.dtype == np.complex64 else np.float64)


def _flushed(x, aval):
    """x with its subnormal values (a complex x: parts) as zeros of their sign."""
    if aval.dtype.kind == "c":
        part = _part(aval)
        return hlo.ComplexOp(_flushed(hlo.RealOp(x).result, part), _flushed(hlo.ImagOp(x).result, part)).result
    small = _cmp(hlo.AbsOp(x).result, _full(np.finfo(aval.dtype).tiny, aval), "LT")
    return hlo.SelectOp(small, hlo.MulOp(x, _full(0, aval)).result, x).result


_UNARY = {
    E.neg_p: hlo.NegOp, E.sin_p: hlo.SineOp, E.cos_p: hlo.CosineOp, E.tan_p: hlo.TanOp,
    E.asin_p: chlo.AsinOp, E.acos_p: chlo.AcosOp, E.atan_p: chlo.AtanOp, E.sinh_p: chlo.SinhOp,
    E.cosh_p: chlo.CoshOp, E.tanh_p: hlo.TanhOp, E.asinh_p: chlo.AsinhOp, E.acosh_p: chlo.AcoshOp,
    E.atanh_p: chlo.AtanhOp, E.exp_p: hlo.ExpOp, E.expm1_p: hlo.Expm1Op, E.log_p: hlo.LogOp,
    E.log1p_p: hlo.Log1pOp, E.sqrt_p: hlo.SqrtOp, E.rsqrt_p: hlo.RsqrtOp, E.cbrt_p: hlo.CbrtOp,
    E.logistic_p: hlo.LogisticOp, E.erf_p: chlo.ErfOp, E.sign_p: hlo.SignOp, E.floor_p: hlo.FloorOp,
    E.ceil_p: hlo.CeilOp, E.round_p: hlo.RoundNearestEvenOp,
    E.not_p: hlo.NotOp, E.abs_p: hlo.AbsOp, E.real_p: hlo.RealOp, E.imag_p: hlo.ImagOp,
}
_BINARY = {
    E.add_p: hlo.AddOp, E.sub_p: hlo.SubtractOp, E.mul_p: hlo.MulOp, E.div_p: hlo.DivOp,
    E.rem_p: hlo.RemOp, E.pow_p: hlo.PowOp, E.max_p: hlo.MaxOp, E.min_p: hlo.MinOp,
    E.atan2_p: hlo.Atan2Op, E.and_p: hlo.AndOp, E.or_p: hlo.OrOp, E.xor_p: hlo.XorOp,
    E.shift_left_p: hlo.ShiftLeftOp, E.shift_right_arithmetic_p: hlo.ShiftRightArithmeticOp,
    E.shift_right_logical_p: hlo.ShiftRightLogicalOp, E.nextafter_p: chlo.NextAfterOp,
}
for _p, _op in {**_UNARY, **_BINARY}.items():
    lowering_rules[_p] = _nary(_op)


def _hidden(x, y):
    """x and y (floating) through one optimization barrier. XLA's algebraic simplifier rewrites float arithmetic
    into what rounds differently from NumPy: a / constant and a / broadcast(b) into a * (1 / b), a / sqrt(b) into
    a * rsqrt(b), (a / b) / c into a / (b * c), (a + c1) + c2 into a + (c1 + c2), (a * c1) * c2 into a * (c1 * c2),
    a + 0 into a (-0.0 stays -0.0). It cannot look through the barrier, which XLA removes after that pass and
    before fusion, so the ops fuse as before (docs/coming-from-jax.md)."""
    if isinstance(ir.RankedTensorType(x.type).element_type, ir.IntegerType):
        return x, y   # (integer rewrites, e.g. division by a power of 2 into a shift, are exact)
    return tuple(hlo.OptimizationBarrierOp([x, y]).results)


def _is_constant(v, depth=6):
    """Whether v is computed from constants alone (within `depth` ops): XLA folds those exactly, on the host."""
    op = getattr(v.owner, "opview", None)
    if isinstance(op, (hlo.ConstantOp, hlo.IotaOp)):
        return True
    operands = () if op is None or depth == 0 or len(op.regions) else list(op.operands)
    return bool(operands) and all(_is_constant(o, depth - 1) for o in operands)


def _from_bool(v):
    op = getattr(v.owner, "opview", None)
    bool_type = ir.IntegerType.get_signless(1)
    return isinstance(op, hlo.ConvertOp) and ir.RankedTensorType(op.operand.type).element_type == bool_type


def _one_constant(x, y):
    return _is_constant(x) != _is_constant(y)


def _as_written(op, hide):
    """op(x, y) as NumPy rounds it: its operands hidden (_hidden) where hide(x, y) says the simplifier could
    rewrite it. Its rewrites of add, subtract and multiply need just one constant operand (where both are,
    XLA folds the constant expression on the host, as NumPy computes it); x * float(bool) it makes a select,
    which loses NaN * 0 = NaN and -x * 0 = -0.0. A constant right operand of add or multiply goes on the left
    (the same bits: IEEE's sum and product, complex ones included, do not depend on the order): past the barrier,
    XLA's fusion emitter still folds x + 0.0 into x (-0.0 stays -0.0) and a complex x * (1+0j) into x (inf+0j
    stays, where the product is inf+nanj) when x is computed in the same fusion, but not 0.0 + x or (1+0j) * x."""
    swaps = op in (hlo.AddOp, hlo.MulOp)

    def rule(c, x, y):
        out = c.avals_out[0]
        hidden = hide(x, y)
        folds = _folds_to_operand(op, x, y, out.dtype)
        x, y = [broadcast_to(v, a, a.update(shape=out.shape)) for v, a in zip((x, y), c.avals_in)]
        if hidden and swaps and _is_constant(y):
            x, y = y, x
        r = op(*(_hidden(x, y) if hidden else (x, y))).result
        return _flushed(r, out) if folds and _may_be_subnormal(y if _is_constant(x) else x, out) else r
    return rule


# ops whose real result the CPU's mode (FTZ) writes as a zero where it would be subnormal: where LLVM folds x * 1
# into such an x, the product needs no flush (jit(r2_score): its weight * (y - yh) ** 2 was a select XLA then
# wrote out whole, 195 us of 320)
_RESULT_FLUSHED = (hlo.AddOp, hlo.SubtractOp, hlo.MulOp, hlo.DivOp, hlo.SqrtOp, hlo.ExpOp, hlo.LogOp)


def _may_be_subnormal(v, aval):
    return aval.dtype.kind == "c" or not isinstance(getattr(v.owner, "opview", None), _RESULT_FLUSHED)


# x + -0.0, -0.0 + x, x - 0.0, -0.0 - x, x * +-1 and x / +-1 are IEEE identities but for a subnormal x, which the
# rule flushes (README: subnormals); LLVM folds them into x (or -x) past every barrier (jit(lambda v: v / 1)(5e-324)
# was 5e-324, eagerly 0.0), and a complex operation's real and imaginary parts the same way (z - 1.0 kept a
# subnormal imaginary part). Where a float constant operand is one of these, the result is flushed explicitly; a
# complex result with any constant operand is (its constant's parts are not readable here; two selects a part).
_FOLDED = {hlo.AddOp: ((-0.0,), (-0.0,)), hlo.SubtractOp: ((-0.0,), (0.0,)), hlo.MulOp: ((1.0, -1.0), (1.0, -1.0)),
           hlo.DivOp: ((), (1.0, -1.0))}   # (the left operand's values, the right's)


def _folds_to_operand(op, x, y, dtype):
    dt = np.dtype(dtype)
    if dt in (np.complex64, np.complex128):
        return _is_constant(x) or _is_constant(y)
    if dt not in (np.float32, np.float64):   # (float16's arithmetic runs in float32: nothing flushed)
        return False
    return any(s is not None and s == f and np.signbit(s) == np.signbit(f)
               for v, fs in zip((x, y), _FOLDED[op]) for s in [_splat(v)] for f in fs)


lowering_rules[E.div_p] = _as_written(hlo.DivOp, lambda x, y: True)
lowering_rules[E.add_p] = _as_written(hlo.AddOp, _one_constant)
_sub = _as_written(hlo.SubtractOp, _one_constant)


def _sub_rule(c, x, y):
    """x - c for a complex constant c as x + (-c), as IEEE defines it: LLVM folded the real part of x - (-0-0j)
    into x's (a subnormal -s came out -0.0 flushed, where -0.0 - -0.0 is +0.0), and leaves x + 0.0 alone."""
    if c.avals_out[0].dtype.kind == "c" and _is_constant(y) and not _is_constant(x):
        return lowering_rules[E.add_p](c, x, hlo.NegOp(y).result)
    return _sub(c, x, y)


lowering_rules[E.sub_p] = _sub_rule
lowering_rules[E.mul_p] = _as_written(hlo.MulOp, lambda x, y: _one_constant(x, y) or _from_bool(x) or _from_bool(y))


def _exp2(c, x):
    a = c.avals_in[0]
    return hlo.PowOp(_full(2, a), x).result


def _conj(c, x):
    a = c.avals_in[0]
    if a.dtype.kind != "c":
        return x
    return hlo.ComplexOp(hlo.RealOp(x).result, hlo.NegOp(hlo.ImagOp(x).result).result).result


lowering_rules[E.exp2_p] = _exp2
lowering_rules[E.conj_p] = _conj


def _log1p(c, x):
    """A real log1p as Goldberg's log(u) * (x / (u - 1)), u = 1 + x (x itself where u rounds to 1, a subnormal
    x flushed; inf where u is): XLA's own float64 log1p is off by up to 128 ulps near x = -0.41 while its log is
    good to an ulp, so jit's log1p (and logaddexp, atanh, the special functions built on it) strayed from the
    host kernel's (NumPy's). u - 1 behind the barrier: XLA folds (1 + x) - 1 into x."""
    a = c.avals_in[0]
    return _log1p_of(x, a) if a.dtype.kind == "f" else hlo.Log1pOp(x).result


def _log1p_of(x, a):
    u = hlo.AddOp(_full(1, a), x).result
    d = hlo.SubtractOp(*_hidden(u, _full(1, a))).result
    r = hlo.MulOp(hlo.LogOp(u).result, hlo.DivOp(x, d).result).result
    r = hlo.SelectOp(_cmp(d, _full(0, a), "EQ"), _flushed(x, a), r).result   # (x itself, a subnormal flushed)
    return hlo.SelectOp(_cmp(u, _full(np.inf, a), "EQ"), u, r).result


lowering_rules[E.log1p_p] = _log1p


def _atanh(c, x):
    """A real atanh as log1p(2v / (1 - v)) / 2, v = |x| (x's sign after; -0.0 kept), on the log1p above (XLA's
    own is its log1p's: 128 ulps off near x = 0.41); 1 - v is exact from v = 1/2 on, 2v always, and with v >= 0
    no 1 + t cancels near x = -1."""
    a = c.avals_in[0]
    if a.dtype.kind != "f":
        return chlo.AtanhOp(x).result
    neg = _cmp(x, _full(0, a), "LT")
    v = hlo.SelectOp(neg, hlo.NegOp(x).result, x).result
    t = hlo.DivOp(hlo.MulOp(v, _full(2, a)).result, hlo.SubtractOp(_full(1, a), v).result).result
    r = hlo.MulOp(_log1p_of(t, a), _full(0.5, a)).result
    return hlo.SelectOp(neg, hlo.NegOp(r).result, r).result


lowering_rules[E.atanh_p] = _atanh


def _hyperbolic(sinh):
    """Real cosh as (e/2) e + (1/2) / (e e) with e = exp(|x|/2) (|x|/2 is exact; e/2 first: no overflow below
    cosh's), and sinh likewise, with -, where |x| >= 1 (below, XLA's own). XLA's formulas take exp(|x| + log(1/2)),
    whose rounded argument is off by an ulp of |x|: cosh(599.0) and sinh(583.0) were 495 ulps from the host
    kernel's (NumPy's) in float64, 24 in float32."""
    def rule(c, x):
        a = c.avals_in[0]
        if a.dtype.kind != "f":
            return (chlo.SinhOp if sinh else chlo.CoshOp)(x).result
        ax = hlo.AbsOp(x).result
        e = hlo.ExpOp(hlo.MulOp(ax, _full(0.5, a)).result).result
        big = hlo.MulOp(hlo.MulOp(e, _full(0.5, a)).result, e).result
        small = hlo.DivOp(_full(0.5, a), hlo.MulOp(e, e).result).result
        if not sinh:
            return hlo.AddOp(big, small).result
        m = hlo.SubtractOp(big, small).result
        m = hlo.SelectOp(_cmp(x, _full(0, a), "LT"), hlo.NegOp(m).result, m).result
        return hlo.SelectOp(_cmp(ax, _full(1, a), "GE"), m, chlo.SinhOp(x).result).result
    return rule


lowering_rules[E.sinh_p] = _hyperbolic(True)
lowering_rules[E.cosh_p] = _hyperbolic(False)


def _complex(c, re, im):   # complex(re, im): its host kernel (exact too) is in lower_elementwise_complex.py
    out = c.avals_out[0]
    re, im = (broadcast_to(v, a, a.update(shape=out.shape)) for v, a in zip((re, im), c.avals_in))
    return hlo.ComplexOp(re, im).result


lowering_rules[E.complex_p] = _complex

_DIRECTIONS = {E.eq_p: "EQ", E.ne_p: "NE", E.lt_p: "LT", E.le_p: "LE", E.gt_p: "GT", E.ge_p: "GE"}


def _compare(direction):
    def rule(c, x, y):
        out = c.avals_out[0]
        ax, ay = c.avals_in
        x = broadcast_to(x, ax, ax.update(shape=out.shape))
        y = broadcast_to(y, ay, ay.update(shape=out.shape))
        return _cmp(x, y, direction, ax.dtype)
    return rule


def _is_finite(c, x):
    """|x| < inf (NaN compares false): XLA's CPU emitter runs IsFinite element by element (180 us on 2026x76
    float64), while an absolute value and a compare vectorize (64 us); the same booleans."""
    a = c.avals_in[0]
    return _cmp(hlo.AbsOp(x).result, _full(np.inf, a), "LT", a.dtype)


lowering_rules[E.is_finite_p] = _is_finite


for _p, _d in _DIRECTIONS.items():
    lowering_rules[_p] = _compare(_d)


def _select_n(c, pred, *cases):
    out = c.avals_out[0]
    pa = c.avals_in[0]
    pred = broadcast_to(pred, pa, pa.update(shape=out.shape))
    cases = [broadcast_to(x, a, a.update(shape=out.shape)) for x, a in zip(cases, c.avals_in[1:])]
    if len(cases) == 1:
        return cases[0]
    if len(cases) == 2:
        return hlo.SelectOp(pred, cases[1], cases[0]).result
    # integer predicate: pick case i where pred == i (binary search would also do)
    res = cases[-1]
    for i in range(len(cases) - 2, -1, -1):
        is_i = _cmp(pred, _full(i, pa.update(shape=out.shape)), "EQ", pa.dtype)
        res = hlo.SelectOp(is_i, cases[i], res).result
    return res


lowering_rules[E.select_n_p] = _select_n


def _zero_keeping(op, both):
    """mul0/div0 (transforms/primitives/elementwise.py): op(a, b), but 0 where a == 0 (or b == 0 if both)."""
    def rule(c, a, b):
        out = c.avals_out[0]
        a, b = [broadcast_to(x, av, av.update(shape=out.shape)) for x, av in zip((a, b), c.avals_in)]
        zero = _full(0, out)
        pred = _cmp(a, zero, "EQ", out.dtype)
        if both:
            pred = hlo.OrOp(pred, _cmp(b, zero, "EQ", out.dtype)).result
        return hlo.SelectOp(pred, zero, op(a, b).result).result
    return rule


lowering_rules[E.mul0_p] = _zero_keeping(hlo.MulOp, True)
lowering_rules[E.div0_p] = _zero_keeping(lambda a, b: hlo.DivOp(*_hidden(a, b)), False)


def _convert(c, x, *, new_dtype, weak_type):
    a = c.avals_in[0]
    out = c.avals_out[0]
    if a.dtype == new_dtype:
        return x
    if a.dtype.kind == "c" and new_dtype.kind != "c":
        x = hlo.RealOp(x).result
        a = a.update(dtype=np.float32 if a.dtype == np.complex64 else np.float64)
        if a.dtype == new_dtype:
            return x
    if new_dtype == np.bool_ and a.dtype.kind != "b":
        return _cmp(x, _full(0, a), "NE", a.dtype)
    return hlo.ConvertOp(ttype(out), x).result


lowering_rules[E.convert_element_type_p] = _convert


# ------------------------------------------------------------------ host kernels (eager on the CPU)
# NumPy with the lowering's semantics (xla/host.py); inputs share one dtype (the abstract eval checks).
# NotImplemented: the dtype (or, for complex, these values) is left to the XLA executable.
# Complex transcendentals: xla/lower_elementwise_complex.py (NumPy with XLA's results, declining
# non-finite parts and the few values where XLA's result is not NumPy's).
# The primitives whose kernel is one ufunc for some dtype kinds: (ufunc, those kinds) -> a Kernel (the complex
# transcendentals' kernel covering the complex kind).
_F, _INT, _NUM = "f", "iu", "iufc"
_H_UFUNCS = {
    E.neg_p: (np.negative, _NUM), E.sin_p: (np.sin, _F), E.cos_p: (np.cos, _F), E.tan_p: (np.tan, _F),
    E.asin_p: (np.arcsin, _F), E.acos_p: (np.arccos, _F), E.atan_p: (np.arctan, _F),
    E.sinh_p: (np.sinh, _F), E.cosh_p: (np.cosh, _F), E.tanh_p: (np.tanh, _F),
    E.asinh_p: (np.arcsinh, _F), E.acosh_p: (np.arccosh, _F), E.atanh_p: (np.arctanh, _F),
    E.exp_p: (np.exp, _F), E.exp2_p: (np.exp2, _F), E.expm1_p: (np.expm1, _F), E.log_p: (np.log, _F),
    E.log1p_p: (np.log1p, _F), E.sqrt_p: (np.sqrt, _F), E.cbrt_p: (np.cbrt, _F),
    E.floor_p: (np.floor, _F), E.ceil_p: (np.ceil, _F), E.round_p: (np.rint, _F),
    E.is_finite_p: (np.isfinite, _F), E.real_p: (np.real, _NUM), E.imag_p: (np.imag, "c"), E.conj_p: (np.conj, _NUM),
    E.add_p: (np.add, "b" + _NUM), E.sub_p: (np.subtract, _NUM), E.mul_p: (np.multiply, "b" + _NUM),
    E.atan2_p: (np.arctan2, _F),
    E.and_p: (np.bitwise_and, "biu"), E.or_p: (np.bitwise_or, "biu"), E.xor_p: (np.bitwise_xor, "biu"),
    E.eq_p: (np.equal, "biufc"), E.ne_p: (np.not_equal, "biufc"), E.lt_p: (np.less, "biuf"),
    E.le_p: (np.less_equal, "biuf"), E.gt_p: (np.greater, "biuf"), E.ge_p: (np.greater_equal, "biuf"),
}
for _p, (_fn, _kinds) in _H_UFUNCS.items():
    host_kernels[_p] = Kernel(_fn, _kinds, COMPLEX_KERNELS.get(_p))   # (complex kernels decline other dtypes)


def _h_rsqrt(x):
    return np.divide(1, np.sqrt(x), dtype=x.dtype) if x.dtype.kind == "f" else NotImplemented


def _h_logistic(x):
    return np.divide(1, np.add(1, np.exp(np.negative(x)))) if x.dtype.kind == "f" else NotImplemented   # (1: weak)


def _h_sign(x):
    k = x.dtype.kind
    if k == "u":
        return np.minimum(x, 1)
    if k in "if":   # (NaN -> NaN; XLA keeps the sign of zero: sign(-0.0) = -0.0, a subnormal's is its signed 0)
        return np.copysign(np.sign(x), x) if k == "f" else np.sign(x)
    return complex_sign(x) if k == "c" else NotImplemented


def _h_abs_complex(x):
    if x.dtype.kind != "c":
        return NotImplemented
    out = np.abs(x)   # hypot, except that XLA's |inf + nan j| is NaN (C99's is inf): fixed where out has an inf
    if np.count_nonzero(np.isinf(out)):
        out = np.where(np.isnan(x.real) | np.isnan(x.imag), out.dtype.type(np.nan), out)
    return out


host_kernels[E.abs_p] = Kernel(np.abs, "iuf", _h_abs_complex)
host_kernels[E.rsqrt_p] = _h_rsqrt
host_kernels[E.logistic_p] = _h_logistic
host_kernels[E.sign_p] = _h_sign
host_kernels[E.not_p] = Kernel(np.logical_not, "b", lambda x: np.invert(x) if x.dtype.kind in _INT else NotImplemented)


def _max_zeros(x, y):
    return np.add(x, y)   # (of two zeros: +0.0 unless both are -0.0)


def _min_zeros(x, y):
    return np.negative(np.add(np.negative(x), np.negative(y)))   # (-0.0 unless both are +0.0)


def _zero_signs(x, y, r, zeros):
    """XLA's max/min of two zeros is `zeros(x, y)` in either order (max(-0.0, +0.0) = +0.0, min = -0.0); NumPy's
    maximum/minimum `r` (a fresh array) picks either zero (its SIMD loops differ). Fixed where needed only: r is
    right wherever it is not zero, so everywhere when a 0-d operand is nonzero; max with a 0-d +0.0 (relu) is
    >= +0.0 everywhere, so adding +0.0 turns its only wrong values, -0.0, into +0.0 in one pass; otherwise by one
    select where r holds a zero (0-d operands, whose result is NumPy's scalar: that)."""
    for s in (x, y):
        if s.ndim == 0 and r.ndim:
            if s != 0:
                return r
            if zeros is _max_zeros and not np.signbit(s):
                return np.add(r, s, out=r)
    if not np.count_nonzero(r == 0):   # (ndarray.any's Python wrapper: ~0.5 us more)
        return r
    return np.where((x == 0) & (y == 0), zeros(x, y), r)


def _zero_signs_of(zeros):
    """max/min's Kernel wrap: the ufunc's result (NaN-propagating, as XLA's; over the cores where large) with
    the zeros' signs made XLA's."""
    def wrap(fn):
        def kernel(x, y):
            r = fn(x, y)
            return _zero_signs(x, y, r, zeros) if x.dtype.kind == "f" else r
        return kernel
    return wrap


def _h_nextafter(x, y):   # (x == y gives y: so the sign of a zero y)
    return np.where(x == y, y, np.nextafter(x, y)) if x.dtype.kind == "f" else NotImplemented


host_kernels[E.max_p] = Kernel(np.maximum, "biuf", wrap=_zero_signs_of(_max_zeros))
host_kernels[E.min_p] = Kernel(np.minimum, "biuf", wrap=_zero_signs_of(_min_zeros))
host_kernels[E.nextafter_p] = _h_nextafter


def _safe_divisor(x, y):
    """XLA's integer division: x / 0 = -1 (all bits set), x % 0 = x, MIN / -1 = MIN, MIN % -1 = 0.
    Returns the divisor with the undefined cases replaced by 1, and the division-by-zero mask."""
    zero = y == 0
    d = np.where(zero, y.dtype.type(1), y)
    if y.dtype.kind == "i":
        d = np.where((x == np.iinfo(x.dtype).min) & (y == -1), y.dtype.type(1), d)
    return d, zero


def _h_div(x, y):   # (floats: the Kernel's ufunc)
    k = x.dtype.kind
    if k == "c":
        return complex_div(x, y)   # (XLA's Smith algorithm, not NumPy's: xla/lower_elementwise_complex.py)
    if k not in _INT:
        return NotImplemented
    d, zero = _safe_divisor(x, y)
    r = np.fmod(x, d)                          # truncated remainder: sign of x
    q = np.floor_divide(np.subtract(x, r), d)  # exact division, rounds toward zero
    return np.where(zero, x.dtype.type(-1) if k == "i" else np.iinfo(x.dtype).max, q)


def _h_rem(x, y):   # (floats: the Kernel's ufunc)
    k = x.dtype.kind
    if k not in _INT:
        return NotImplemented
    d, zero = _safe_divisor(x, y)
    return np.where(zero, x, np.fmod(x, d))


host_kernels[E.div_p] = Kernel(np.true_divide, "f", _h_div)
host_kernels[E.rem_p] = Kernel(np.fmod, "f", _h_rem)


def _shift_parts(x, y):
    """(shift amounts clipped into range, mask of out-of-range shifts: >= width or negative)."""
    bits = x.dtype.itemsize * 8
    out = (y < 0) | (y >= bits) if y.dtype.kind == "i" else y >= bits
    return np.where(out, y.dtype.type(0), y), out


def _h_shift_left(x, y):
    if x.dtype.kind not in _INT:
        return NotImplemented
    s, out = _shift_parts(x, y)
    return np.where(out, x.dtype.type(0), np.left_shift(x, s))


def _h_shift_right_arithmetic(x, y):
    if x.dtype.kind not in _INT:
        return NotImplemented
    if x.dtype.kind == "u":   # arithmetic shift of an unsigned value: its bits as signed (a huge y stays out of range)
        i = np.dtype(f"i{x.dtype.itemsize}")
        return _h_shift_right_arithmetic(x.view(i), y.view(i)).view(x.dtype)
    s, out = _shift_parts(x, y)
    fill = np.where(x < 0, x.dtype.type(-1), x.dtype.type(0))
    return np.where(out, fill, np.right_shift(x, s))


def _h_shift_right_logical(x, y):
    if x.dtype.kind not in _INT:
        return NotImplemented
    s, out = _shift_parts(x, y)
    u = np.dtype(f"u{x.dtype.itemsize}")
    r = np.right_shift(x.view(u), s.view(u)).view(x.dtype)
    return np.where(out, x.dtype.type(0), r)


host_kernels[E.shift_left_p] = _h_shift_left
host_kernels[E.shift_right_arithmetic_p] = _h_shift_right_arithmetic
host_kernels[E.shift_right_logical_p] = _h_shift_right_logical


def _h_select_n(pred, *cases):
    i = int(pred.flat[0]) if pred.size and not any(pred.strides) else None   # (one value broadcast: linalg's guard)
    if len(cases) == 1 or i is not None:   # (one whole case, not copied; as the lowering: case i, else the last)
        case, shape = cases[i if i is not None and 0 <= i < len(cases) else -1], np.broadcast_shapes(
            pred.shape, *(c.shape for c in cases))
        out = np.asarray(case).view() if case.shape == shape else np.broadcast_to(case, shape)
        out.flags.writeable = False   # (a view never written through; broadcast_to's iterator cost ~6 us at 0-d)
        return out
    res = cases[-1]
    for i in range(len(cases) - 2, -1, -1):
        res = np.where(pred == i, cases[i], res)
    return res


def _s_select_n(avals, params):   # (np.where; but a 0-d pred's whole case, among larger ones, is not copied)
    return (lambda p, a, b: np.where(p, b, a) if any(p.strides) or not (a.ndim or b.ndim) else _h_select_n(p, a, b)
            ) if len(avals) == 3 else None


host_kernels[E.select_n_p] = Kernel(rest=_h_select_n, special=_s_select_n)


host_kernels[E.mul0_p] = lambda a, b: np.where((a == 0) | (b == 0), a.dtype.type(0), np.multiply(a, b))
host_kernels[E.div0_p] = lambda a, b: (np.where(a == 0, a.dtype.type(0), np.true_divide(a, b)) if a.dtype.kind == "f"
                                        else NotImplemented)   # (XLA: integers truncate, complex special values differ)


def _s_convert(avals, params):
    a, b = avals[0].dtype, np.dtype(params["new_dtype"])
    if a == b:
        return lambda x: x
    if a.kind == "c" and b.kind != "c" or a.kind == "f" and b.kind in _INT:
        return None   # (the kernel: the real part first; XLA's saturating float -> int)
    if b.kind == "b":
        return lambda x: np.not_equal(x, 0)
    return lambda x: x.astype(b)


def _h_convert(x, *, new_dtype, weak_type):
    b = np.dtype(new_dtype)
    if x.dtype.kind == "c" and b.kind != "c":
        x = x.real   # as the lowering: the real part, then (for bool) != 0
    a = x.dtype
    if a.kind == "f" and b.kind in _INT:
        # XLA converts saturating: NaN -> 0, out-of-range -> the nearest bound
        info = np.iinfo(b)
        hi, lo = a.type(info.max), a.type(info.min)
        r = x.astype(b)
        r = np.where(x >= hi, b.type(info.max), r)
        r = np.where(x <= lo, b.type(info.min), r)
        return np.where(np.isnan(x), b.type(0), r)
    return _s_convert((x,), {"new_dtype": b})(x)


host_kernels[E.convert_element_type_p] = Kernel(rest=_h_convert, special=_s_convert)
