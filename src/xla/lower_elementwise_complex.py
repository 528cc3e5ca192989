"""Host kernels (eager on the CPU) of the complex transcendentals: NumPy with XLA's results.

Why here: a kernel that declines (NotImplemented) makes its primitive compile one XLA executable
per new shape; the namespace's complex functions (array_namespace/_complex_special.py) run their
staged bodies op by op on these, so a kernel must take every value that body gives it.

What XLA computes, against NumPy (checked on grids in tests/xla/test_host_kernels_complex.py):

* exp, log, sqrt, tan, tanh, asin, acos, asinh, acosh: NumPy's result to a few ulps wherever both
  parts of the input are finite -- overflowing results and zero parts included -- except for the
  sign of a zero part, which XLA ignores for some parts: exp, sqrt, acos, acosh read -0.0 as +0.0
  in either part, tan and asinh in the real part, tanh and asin in the imaginary part (log keeps
  both). The kernel computes NumPy's function of the input with those zeros made +0.0.
* atan, atanh: likewise (NumPy's to a few ulps, the sign of a zero part aside), except at
  re == +-1 with a tiny imaginary part (atanh) and im == +-1 with a tiny real part (atan),
  where XLA's result is infinite: the kernel declines those values.
* sin, cos, sinh, cosh, log1p, expm1: XLA's own formulas lose digits in ordinary regions
  (sin(1.73 + 0.0081j) in complex64 is off in the fourth digit), so no NumPy kernel equals them;
  the namespace computes these from real primitives instead (_complex_special) and the kernels
  here decline.

A non-finite part declines: XLA's results there differ from NumPy's and from the standard's;
the namespace selects the standard's values there and feeds the primitive finite values only.

Division, sign and pow take every value, inf and NaN too: division is XLA's Smith algorithm with its
fused multiply-adds emulated (float32 through float64, float64 by Dekker/TwoSum) and its flushes of
subnormal intermediates -- bit for bit on grids and random values but where a float64 product's
rounding tie is broken by a far smaller addend (an ulp); sign is z / |z| (z itself at 0).
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from transforms.primitives import elementwise as E

from ._jaxlib import hlo
from .host import host_kernels
from .lowering import broadcast_to, lowering_rules


def _plus_zero(x, re, im):
    """x with -0.0 parts made +0.0 (re/im: which parts); a copy only where needed."""
    if re and im:
        return np.add(x, x.dtype.type(0))   # (-0) + (+0) = +0 in each part, other values unchanged
    y = x.copy()
    part = y.real if re else y.imag
    np.add(part, part.dtype.type(0), out=part)
    return y


def _all_finite(x):
    # isfinite of a complex value is that of both parts
    return bool(np.isfinite(x).all())


def _kernel(fn, re_zero, im_zero, declines=None):
    def kernel(x):
        if not _all_finite(x):
            return NotImplemented
        if declines is not None and declines(x):
            return NotImplemented
        if re_zero or im_zero:
            x = _plus_zero(x, re_zero, im_zero)
        return fn(x)
    return kernel


def _near_unit_pole(part, other):
    """atanh at re == +-1, atan at im == +-1, with the other part tiny: XLA's result is infinite."""
    def declines(x):
        a, b = (x.real, x.imag) if part == "re" else (x.imag, x.real)
        hit = (np.abs(a) == 1) & (np.abs(b) < other)
        return bool(hit.any())
    return declines


def _times_i(x, sign):
    """sign * 1j * x, exactly: the parts trade places (no multiplication, so no inf * 0)."""
    y = np.empty_like(x)
    y.real, y.imag = (-x.imag, x.real) if sign > 0 else (x.imag, -x.real)
    return y


def _atanh_declines(x):
    """XLA's atanh is infinite at re == +-1 with a tiny imaginary part, and reads the sign of a zero
    imaginary part as + beyond |re| ~ 1e18 (NumPy's keeps it)."""
    a, b = np.abs(x.real), np.abs(x.imag)
    return bool(((a == 1) & (b < 1e-8)).any() or ((b == 0) & (a > 1e18)).any())


_atanh = _kernel(np.arctanh, True, False, _atanh_declines)


def _atan(x):
    """atan(z) = -1j * atanh(1j * z), as XLA computes it (its signs of zeros follow)."""
    r = _atanh(_times_i(x, 1))
    return r if r is NotImplemented else _times_i(r, -1)


# primitive -> (NumPy function, whether XLA reads -0.0 as +0.0 in the real part, in the imaginary part)
COMPLEX_KERNELS = {
    E.exp_p: _kernel(np.exp, True, True),
    E.log_p: _kernel(np.log, False, False),
    E.sqrt_p: _kernel(np.sqrt, True, True),
    E.tan_p: _kernel(np.tan, True, False),
    E.tanh_p: _kernel(np.tanh, False, True),
    E.asin_p: _kernel(np.arcsin, False, True),
    E.acos_p: _kernel(np.arccos, True, True),
    E.asinh_p: _kernel(np.arcsinh, True, False),
    E.acosh_p: _kernel(np.arccosh, True, True),
    E.atanh_p: _atanh,
    E.atan_p: _atan,
}


# ------------------------------------------------------------------ complex(re, im): exact on both paths
def _lower_complex(c, re, im):
    out = c.avals_out[0]
    re, im = (broadcast_to(v, a, a.update(shape=out.shape)) for v, a in zip((re, im), c.avals_in))
    return hlo.ComplexOp(re, im).result


def _h_complex(re, im):
    if re.dtype.kind != "f" or re.dtype.itemsize < 4:
        return NotImplemented          # (the abstract eval takes float32 and float64 only)
    out = np.empty(np.broadcast_shapes(re.shape, im.shape), np.result_type(re.dtype, np.complex64))
    out.real, out.imag = re, im   # (parts copied as they are: inf, NaN and signed zeros kept)
    return out


lowering_rules[E.complex_p] = _lower_complex
host_kernels[E.complex_p] = _h_complex


# ------------------------------------------------------------------ pow: XLA's expansion
def _flushed(v):
    tiny = np.finfo(v.dtype).tiny
    return np.where(np.abs(v) < tiny, v.dtype.type(0), v) if (np.abs(v) < tiny).any() else v


def complex_pow(x, y):
    """x ** y for complex x, y as XLA expands it: with r = |x| (hypot) and t = arg x (atan2),
    r^c e^(-d t) (cos q + i sin q), q = c t + d log r, for y = c + di (the two factors of the
    coefficient flushed to zero where subnormal, as XLA's CPU code does); at x == 0 (either sign of
    either part): 1 where y == 0, 0 where y is real and positive, NaN + NaN j elsewhere. Equal to
    XLA to a few ulps on grids of finite values (tests/xla/test_host_kernels_complex.py); a
    non-finite part declines (NotImplemented: XLA runs it)."""
    if not (_all_finite(x) and _all_finite(y)):
        return NotImplemented
    with np.errstate(all="ignore"):
        a, b, c, d = x.real, x.imag, y.real, y.imag
        r, t = np.abs(x), np.arctan2(b, a)
        # (XLA's CPU code flushes subnormal results to zero: so do the two factors, whose product
        # would otherwise be normal where XLA's is 0 -- or NaN, as inf * 0)
        coeff = np.multiply(_flushed(np.power(r, c)), _flushed(np.exp(np.negative(np.multiply(d, t)))))
        q = np.add(np.multiply(c, t), np.multiply(d, np.log(r)))
        out = np.empty(np.broadcast_shapes(x.shape, y.shape), x.dtype)
        out.real, out.imag = np.multiply(coeff, np.cos(q)), np.multiply(coeff, np.sin(q))
    zero = (a == 0) & (b == 0)
    if zero.any():
        at_zero = np.where((c == 0) & (d == 0), x.dtype.type(1),
                           np.where((d == 0) & (c > 0), x.dtype.type(0), x.dtype.type(complex(np.nan, np.nan))))
        out = np.where(zero, at_zero, out)
    return out


# ------------------------------------------------------------------ division: XLA's Smith algorithm
# XLA's CPU code divides (a + bi) / (c + di) by Smith's method, its products and sums contracted into
# fused multiply-adds (checked against XLA bit for bit on random values), with subnormal intermediates
# flushed to zero, and fixes a (NaN, NaN) result at a zero divisor, an infinite numerator over a finite
# divisor and a finite numerator over an infinite divisor.
_SPLIT = np.float64(2.0 ** 27 + 1)   # Veltkamp's splitter: x = hi + lo, each 26 bits


def _prod_err(x, y, p):
    """x * y - p exactly (p = x * y rounded; Dekker), for finite x, y whose splits do not overflow."""
    t = np.multiply(_SPLIT, x)
    xh = np.subtract(t, np.subtract(t, x))
    xl = np.subtract(x, xh)
    t = np.multiply(_SPLIT, y)
    yh = np.subtract(t, np.subtract(t, y))
    yl = np.subtract(y, yh)
    e = np.add(np.add(np.subtract(np.multiply(xh, yh), p), np.multiply(xh, yl)), np.multiply(xl, yh))
    return np.add(e, np.multiply(xl, yl))


def _two_sum_err(s, x, y):
    """x + y - s exactly (s = x + y rounded; Knuth's TwoSum)."""
    bb = np.subtract(s, x)
    return np.add(np.subtract(x, np.subtract(s, bb)), np.subtract(y, bb))


def _fma64(x, y, z):
    """x * y + z fused, for float64 x with |x| <= 1 (or NaN): the rounding errors of the product (Dekker)
    and of the sum (TwoSum) added back to the sum, so the result is the fused one (a cancelling sum
    exactly; a double rounding aside). A non-finite operand: x * y + z, which is then the fused result
    (|x| <= 1: no finite product overflows)."""
    p = np.multiply(x, y)
    e = _prod_err(x, y, p)
    ok = np.isfinite(e)
    if not ok.all():
        huge = ~ok & np.isfinite(p)          # |y| beyond 2^996: its split overflows; split y / 2^64 instead
        k = np.float64(2.0 ** 64)
        e2 = np.multiply(_prod_err(x, np.divide(y, k), np.divide(p, k)), k) if huge.any() else 0.0
        e = np.where(ok, e, np.where(huge, e2, 0.0))
    s = np.add(p, z)
    t = _two_sum_err(s, p, z)
    t = np.where(np.isfinite(t), t, 0.0) if not ok.all() else t
    # s + (t + e), where a zero correction (of either sign) leaves s as it is (a -0.0 sum stays -0.0)
    out = np.subtract(s, np.add(np.negative(np.add(t, e)), 0.0))
    # near underflow the error terms are themselves subnormal (inexact) and a product may underflow to
    # zero: there (rare: a nonzero product and a result below 2^-900) the fused result is computed exactly,
    # and one below the smallest normal is XLA's zero of its sign
    near = np.abs(out) < _NEAR_UNDERFLOW
    if near.any() and (near := near & (x != 0) & (y != 0)).any():
        x, y, z, out = np.broadcast_arrays(x, y, z, out)
        out = out.copy()
        out[near] = [_exact_fma(*v) for v in zip(x[near].tolist(), y[near].tolist(), z[near].tolist())]
    return out


def _exact_fma(x, y, z):
    """x * y + z rounded once (finite x, y, z; x * y != 0); a signed zero where that is below the smallest normal."""
    v = Fraction(x) * Fraction(y) + Fraction(z)
    if v == 0:
        return 0.0   # an exact cancellation: +0.0
    r = float(v * _UP)   # rounded to 53 bits as if the exponent were unbounded: XLA flushes it if below tiny
    return float(Fraction(r) / _UP) if abs(r) >= _TINY_UP else (-0.0 if v < 0 else 0.0)


_NEAR_UNDERFLOW = np.float64(2.0 ** -900)
_UP = Fraction(2) ** 1100
_TINY_UP = float(Fraction(float(np.finfo(np.float64).tiny)) * _UP)
_MID32 = np.int64(1 << 28)   # a float64 whose low 29 mantissa bits are this lies halfway between two float32


def _fma32(x, y, z):
    """x * y + z fused, for float32: float64's product of two float32 is exact and its sum is rounded to
    float64 and then to float32; where the float64 sum lies exactly halfway between two float32 and is
    inexact, it moves one float64 ulp toward the exact sum first (so the second rounding is the fused one)."""
    f = np.float64
    p, z = np.multiply(x.astype(f), y.astype(f)), z.astype(f)
    s = np.add(p, z)
    bits = s.view(np.int64)
    mid = (bits & np.int64((1 << 29) - 1)) == _MID32
    if mid.any():
        err = _two_sum_err(s, p, z)
        step = np.where((err > 0) == (s > 0), np.int64(1), np.int64(-1))
        s = np.where(mid & (err != 0), (bits + step).view(f), s)
    return s.astype(np.float32)


def _ftz(t):
    """XLA's CPU code flushes subnormal results to (signed) zero."""
    m = np.abs(t) < np.finfo(t.dtype).tiny
    return np.where(m, np.multiply(t, t.dtype.type(0)), t) if m.any() else t


def complex_div(x, y):
    """x / y for complex x, y as XLA's CPU code computes it (see above). With |c| < |d| it takes
    r = c / d, (r a + b) / (d + r c), (r b - a) / (d + r c), else r = d / c, (r b + a) / (c + r d),
    (b - r a) / (c + r d), each numerator and denominator one fused multiply-add."""
    a, b, c, d = x.real, x.imag, y.real, y.imag
    ft = a.dtype
    fma = _fma64 if ft == np.float64 else _fma32
    with np.errstate(all="ignore"):
        lt = np.abs(c) < np.abs(d)
        p, q = np.where(lt, d, c), np.where(lt, c, d)
        r = _ftz(np.divide(q, p))
        u, v = np.where(lt, a, b), np.where(lt, b, a)
        den = _ftz(fma(r, q, p))
        re = _ftz(fma(r, u, v))
        im = _ftz(fma(np.where(lt, r, np.negative(r)), v, np.where(lt, np.negative(a), b)))
        cr, ci = np.divide(re, den), np.divide(im, den)
        both_nan = np.isnan(cr) & np.isnan(ci)
        if both_nan.any():
            cr, ci = _div_corner_cases(a, b, c, d, cr, ci, both_nan)
    out = np.empty(cr.shape, x.dtype)
    out.real, out.imag = cr, ci
    return out


def _div_corner_cases(a, b, c, d, cr, ci, both_nan):
    """XLA's values where Smith's gives (NaN, NaN): a zero divisor (a numerator part not NaN): the numerator
    times copysign(inf, c); an infinite numerator part over a finite divisor: inf times the product with
    the divisor's conjugate of the numerator's infinities as +-1 (its finite parts 0); a finite numerator
    over an infinite divisor part: 0 times the numerator's product with the divisor's infinities as +-1."""
    ft = cr.dtype.type
    inf, one, zero = ft(np.inf), ft(1), ft(0)
    ainf_r, ainf_i, binf_r, binf_i = np.isinf(a), np.isinf(b), np.isinf(c), np.isinf(d)
    zero_den = (c == 0) & (d == 0) & ~(np.isnan(a) & np.isnan(b))
    s = np.copysign(inf, c)
    z_r, z_i = np.multiply(s, a), np.multiply(s, b)
    inf_num = (ainf_r | ainf_i) & np.isfinite(c) & np.isfinite(d)
    ar, ai = np.copysign(np.where(ainf_r, one, zero), a), np.copysign(np.where(ainf_i, one, zero), b)
    n_r = np.multiply(inf, np.add(np.multiply(ar, c), np.multiply(ai, d)))
    n_i = np.multiply(inf, np.subtract(np.multiply(ai, c), np.multiply(ar, d)))
    inf_den = (binf_r | binf_i) & np.isfinite(a) & np.isfinite(b)
    br, bi = np.copysign(np.where(binf_r, one, zero), c), np.copysign(np.where(binf_i, one, zero), d)
    d_r = np.multiply(zero, np.add(np.multiply(a, br), np.multiply(b, bi)))
    d_i = np.multiply(zero, np.subtract(np.multiply(b, br), np.multiply(a, bi)))
    fix_r = np.where(zero_den, z_r, np.where(inf_num, n_r, np.where(inf_den, d_r, cr)))
    fix_i = np.where(zero_den, z_i, np.where(inf_num, n_i, np.where(inf_den, d_i, ci)))
    return np.where(both_nan, fix_r, cr), np.where(both_nan, fix_i, ci)


# ------------------------------------------------------------------ sign: z / |z|, z itself where |z| == 0
def complex_sign(x):
    """XLA's complex sign: each part divided by |z| (its |z| is NumPy's hypot to the bit on random values,
    but NaN wherever a part is NaN), and z itself (its zeros' signs kept) where |z| == 0."""
    with np.errstate(all="ignore"):
        ab = np.abs(x)
        nan = np.isnan(ab)   # (NumPy's |inf + nan j| is inf; XLA's is NaN)
        if not nan.all() and (np.isnan(x.real) | np.isnan(x.imag)).any():
            ab = np.where(np.isnan(x.real) | np.isnan(x.imag), ab.dtype.type(np.nan), ab)
        out = np.empty(x.shape, x.dtype)
        out.real, out.imag = np.divide(x.real, ab), np.divide(x.imag, ab)
        zero = ab == 0
        return np.where(zero, x, out) if zero.any() else out
