"""The elementwise ops whose XLA or NumPy form breaks the subnormal rule, given its values on both paths.

The rule (README, "Eager work on the CPU"; xla/host.py): on the CPU a floating-point operation reads a subnormal
operand as zero and writes a subnormal result as zero, eagerly and under jit. XLA's CPU runtime and the host
kernels both run in that mode, yet a few lowerings and kernels still break it (a tiny argument passed through by a
select or by its bits, a formula's intermediate going subnormal though the result is normal, a branch reading a
subnormal as zero while the arithmetic does not). This module replaces those lowerings and wraps those kernels;
it is imported after xla/lower_elementwise.py, whose rules and kernels it starts from. Tested in
tests/array_namespace/test_elementwise_subnormals.py (eager == jit == vmap == NumPy in the mode).
"""
from __future__ import annotations

import numpy as np

from transforms.primitives import elementwise as E

from ._jaxlib import chlo, hlo
from .host import host_kernels
from .lower_elementwise import _UNARY, _cmp, _flushed, _full, _nary, _part
from .lower_elementwise_complex import _h_complex
from .lowering import broadcast_to, lowering_rules


# ------------------------------------------------------------------ subnormals (xla/host.py, "Subnormals")
# XLA runs on the CPU with subnormals flushed (FTZ+DAZ), as the host kernels do, but a few of its kernels still
# break the rule: sin, tan, tanh, atan and expm1 pass a tiny argument through by a select (a subnormal comes back
# unflushed where sin(0) = 0 is the rule's value), asin's formula takes its smallest normal arguments through a
# subnormal intermediate (asin(tiny) = 0), and pow and atan2 branch on comparisons that read a subnormal operand
# as zero while their arithmetic does not agree (0 ** 5e-324 = 0, not 1; atan2(5e-324, 0) = pi/2, not 0;
# complex pow takes (-2.5 + 5e-324j) as -2.5 - 0j), and float32 cbrt on an AVX-512 CPU reads a subnormal by its
# bits, not as a zero (cbrt(1e-45) = -5.6e-16; on an AVX2 CPU 0). These get the rule's values here (pow's in
# xla/lower_pow.py, with _flush_operands): their result, or their operands, flushed explicitly. (|x| < tiny ? x * 0
# : x is not an IEEE identity, so no simplifier removes it, as XLA's and LLVM's do with select(x == 0, 0 * x, x).)
def _flushes(dtype, complex_too=False):
    return np.dtype(dtype) in ("f4", "f8", "c8", "c16")[:4 if complex_too else 2]


def _flush_result(op, passthrough=False):
    """`op` with its result flushed; `passthrough`: |x| < 2^-30 (float32), 2^-60 (float64) gives x itself,
    to the last bit the value of asin (x + x^3/6 + ...) without its formula's subnormal intermediate."""
    plain = _nary(op)

    def rule(c, x):
        out = plain(c, x)
        a = c.avals_out[0]
        if not _flushes(a.dtype):
            return out
        if passthrough:
            tiny = 2.0 ** (-30 if a.dtype == np.float32 else -60)
            out = hlo.SelectOp(_cmp(hlo.AbsOp(x).result, _full(tiny, a), "LT"), x, out).result
        return _flushed(out, a)
    return rule


def _flush_operands(op):
    plain = _nary(op)

    def rule(c, *xs):
        xs = [_flushed(x, a) if _flushes(a.dtype, True) else x for x, a in zip(xs, c.avals_in)]
        return plain(c, *xs)
    return rule


for _p in (E.sin_p, E.tan_p, E.tanh_p, E.atan_p, E.expm1_p):
    lowering_rules[_p] = _flush_result(_UNARY[_p])
lowering_rules[E.asin_p] = _flush_result(chlo.AsinOp, passthrough=True)
lowering_rules[E.atan2_p] = _flush_operands(hlo.Atan2Op)
lowering_rules[E.cbrt_p] = _flush_operands(hlo.CbrtOp)


# Complex acos, acosh, asin and asinh at their branch points: at z = +-1 + yj with tiny <= |y| < 2 * tiny
# (asinh: x +- 1j, tiny <= |x| < 2 * tiny) XLA's formula halves |y| into a subnormal, flushed, and loses a part
# of size sqrt(|y|) (acos(1 + tiny*j) = 1.49e-154 - 1.49e-154j in float64, XLA's 1.49e-154 - 0j). There
# acos(+-1 + yj) = acos(+-1) - sign(y) * sqrt(|y|) * (1 +- 1j) * (1 + O(y)) (acos(1 + w) = sqrt(-2w) (1 + O(w))),
# so the lost part is, to the last bit, +-sqrt(|y|): acos's imaginary part -sign(y) sqrt(|y|), acosh's real part
# sqrt(|y|) (acosh = +-i acos), asin's imaginary part sign(y) sqrt(|y|) (asin = pi/2 - acos), asinh's real part
# sign(x) sqrt(|x|) (asinh(z) = -i asin(iz)). Selected there only; every other value keeps XLA's bits.
_BRANCH_POINT = {   # primitive: (the part that is +-1, the tiny part, the result part it fixes, sign)
    E.acos_p: ("re", "im", "im", -1), E.acosh_p: ("re", "im", "re", 0),
    E.asin_p: ("re", "im", "im", 1), E.asinh_p: ("im", "re", "re", 1),
}


def _kept_at_branch_points(p, rule):
    one_part, tiny_part, out_part, sign = _BRANCH_POINT[p]

    def fixed(c, x):
        out = rule(c, x)
        a = c.avals_out[0]
        if a.dtype.kind != "c":
            return out
        fa = _part(a)
        ai = c.avals_in[0]
        x = broadcast_to(x, ai, ai.update(shape=a.shape))
        part = {"re": lambda v: hlo.RealOp(v).result, "im": lambda v: hlo.ImagOp(v).result}
        u, v = part[one_part](x), part[tiny_part](x)
        tiny = np.finfo(fa.dtype).tiny
        av = hlo.AbsOp(v).result
        where = hlo.AndOp(_cmp(hlo.AbsOp(u).result, _full(1, fa), "EQ"),
                          hlo.AndOp(_cmp(av, _full(tiny, fa), "GE"),
                                    _cmp(av, _full(2 * tiny, fa), "LT")).result).result
        value = hlo.SqrtOp(av).result
        if sign:
            value = hlo.MulOp(hlo.SignOp(v).result, value).result
            if sign < 0:
                value = hlo.NegOp(value).result
        re, im = hlo.RealOp(out).result, hlo.ImagOp(out).result
        if out_part == "re":
            re = hlo.SelectOp(where, value, re).result
        else:
            im = hlo.SelectOp(where, value, im).result
        return hlo.ComplexOp(re, im).result
    return fixed


for _p in _BRANCH_POINT:
    lowering_rules[_p] = _kept_at_branch_points(_p, lowering_rules[_p])


# Subnormals (xla/host.py): kernels run with them flushed, but libm may pass a tiny argument through by its bits
# (sin(5e-324) = 5e-324), NumPy's float32 arctan2 divides two flushed operands (atan2(1e-45, 1e-45) = NaN) and its
# float32 cbrt on an AVX2 CPU reads a subnormal by its bits (cbrt(1e-45) = -5.6e-16, as XLA's on AVX-512): as
# in the lowerings above, these results (or operands) are flushed explicitly. Which libm forms return the bits
# depends on the machine (glibc picks a form per CPU, NumPy a SIMD loop per CPU: on an AVX2-only CPU asinh, atanh,
# log1p and sinh did, on an AVX-512 one they did not), so every function that is x + O(x^2) near 0 gets its result
# flushed. In the kernels' mode multiplying by 1 is that flush: one pass, in place on a fresh result.
_ONE = {np.dtype(np.float32): np.float32(1), np.dtype(np.float64): np.float64(1)}


def _ftz(r):
    one = _ONE.get(getattr(r, "dtype", None))
    if one is None:
        return r
    return np.multiply(r, one, out=r) if r.__class__ is np.ndarray and r.flags.writeable else r * one


def _daz(x):   # (a complex number's parts each: a complex product by 1 would add signed zeros)
    if x.dtype.kind == "c":
        return _h_complex(_daz(x.real), _daz(x.imag))
    one = _ONE.get(x.dtype)
    return x if one is None else np.multiply(x, one)


def _flushing_result(fn):
    def kernel(*xs):
        r = fn(*xs)
        return r if r is NotImplemented else _ftz(r)
    return kernel


for _p in (E.sin_p, E.tan_p, E.tanh_p, E.atan_p, E.expm1_p, E.asin_p, E.asinh_p, E.atanh_p, E.log1p_p, E.sinh_p):
    host_kernels[_p].wrap = _flushing_result
for _p in (E.atan2_p, E.cbrt_p):
    host_kernels[_p].wrap = lambda fn: lambda *xs: fn(*map(_daz, xs))
