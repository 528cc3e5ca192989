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

Division, sign and pow take every value, inf and NaN too. Division is Smith's algorithm, as XLA's: NumPy's
quotient (Smith's too) where it is finite -- a few ulps from XLA's normwise, which fuses its multiply-adds and
flushes subnormal intermediates -- and XLA's steps in plain float operations (its flushes, its values for zero
and infinite parts) where not; sign is z / |z| (z itself at 0), likewise NumPy's where finite.
"""
from __future__ import annotations

import numpy as np

from transforms.primitives import elementwise as E

from .host import host_kernels


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
        if x.dtype.kind != "c" or not _all_finite(x):   # (other dtypes: the ufunc, or not covered)
            return NotImplemented
        if declines is not None and declines(x):
            return NotImplemented
        if re_zero or im_zero:
            x = _plus_zero(x, re_zero, im_zero)
        return fn(x)
    return kernel


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
    if x.dtype.kind != "c":
        return NotImplemented
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
def _h_complex(re, im):
    if re.dtype.kind != "f" or re.dtype.itemsize < 4:
        return NotImplemented          # (the abstract eval takes float32 and float64 only)
    out = np.empty(np.broadcast_shapes(re.shape, im.shape), np.result_type(re.dtype, np.complex64))
    out.real, out.imag = re, im   # (parts copied as they are: inf, NaN and signed zeros kept)
    return out


host_kernels[E.complex_p] = _h_complex


# ------------------------------------------------------------------ pow: XLA's expansion
def complex_pow(x, y):
    """x ** y for complex x, y as XLA expands it: with r = |x| (hypot) and t = arg x (atan2),
    r^c e^(-d t) (cos q + i sin q), q = c t + d log r, for y = c + di (the two factors of the
    coefficient flushed to zero where subnormal, as XLA's CPU code does); 1 + 0j where y == 0 or x == 1;
    at x == 0 (either sign of either part): 0 where y is real and positive, NaN + NaN j elsewhere. Equal to
    XLA to a few ulps on grids of finite values (tests/xla/test_host_kernels_complex.py); a
    non-finite part declines (NotImplemented: XLA runs it)."""
    if not (_all_finite(x) and _all_finite(y)):
        return NotImplemented
    with np.errstate(all="ignore"):
        a, b, c, d = x.real, x.imag, y.real, y.imag
        r, t = np.abs(x), np.arctan2(b, a)
        # (XLA's CPU code flushes subnormal results to zero: so do the two factors, whose product
        # would otherwise be normal where XLA's is 0 -- or NaN, as inf * 0)
        coeff = np.multiply(_ftz(np.power(r, c)), _ftz(np.exp(np.negative(np.multiply(d, t)))))
        q = np.add(np.multiply(c, t), np.multiply(d, np.log(r)))
        out = np.empty(np.broadcast_shapes(x.shape, y.shape), x.dtype)
        out.real, out.imag = np.multiply(coeff, np.cos(q)), np.multiply(coeff, np.sin(q))
    # XLA's special cases: 1 (+0j) at y == 0 and at x == 1 (the formula's imaginary part is -0.0 for some: pow(1,
    # -1-1j) was 1-0j eagerly, 1+0j under jit); at x == 0, 0 where y is real and positive, NaN + NaN j elsewhere
    one, zero = ((c == 0) & (d == 0)) | ((a == 1) & (b == 0)), (a == 0) & (b == 0)
    if one.any() or zero.any():
        at_zero = np.where((d == 0) & (c > 0), x.dtype.type(0), x.dtype.type(complex(np.nan, np.nan)))
        out = np.where(one, x.dtype.type(1), np.where(zero, at_zero, out))
    return out


# ------------------------------------------------------------------ division: Smith's algorithm, as XLA's
# XLA's CPU code divides (a + bi) / (c + di) by Smith's method (r = d / c where |c| >= |d|, then
# (a + r b) / (c + r d) and (b - r a) / (c + r d); the parts trade roles where |c| < |d|), its products and
# sums contracted into fused multiply-adds, subnormal intermediates flushed to zero, and it fixes a (NaN, NaN)
# result at a zero divisor, an infinite numerator over a finite divisor and a finite numerator over an
# infinite divisor. NumPy's complex division is Smith's method too (the same branches, a reciprocal of
# the denominator multiplied in, no fused operations): on finite results it equals XLA's to a few ulps
# normwise (a part that cancels may differ in its low digits), so the kernel takes NumPy's, and recomputes
# as XLA does (plain float operations) only the elements where NumPy's is not finite.
_vdot = np.vdot


def _finite(out):
    """Whether every part of a complex array is finite, cheaply: the sum of |z|^2 (one BLAS call) is; a sum
    that overflows reads as not finite (the caller then checks element by element)."""
    s = _vdot(out, out)
    return s - s == 0


def complex_div(x, y):
    """x / y for complex x, y with XLA's results (see above): NumPy's quotient where it is finite, XLA's
    algorithm in plain float operations (with its flushes and corner cases) where not, and where y's larger part
    is so large that NumPy's scale 1 / (c + d (d / c)) is subnormal, flushed in the kernels' mode (xla/host.py)
    where XLA's quotient is normal (1e300j / 1.8e308j = 5.6e-9)."""
    out = np.divide(x, y)
    lim = 0.25 / np.finfo(y.real.dtype).tiny
    huge = np.maximum(np.abs(y.real), np.abs(y.imag)) >= lim
    if _finite(out) and not huge.any():
        return out
    out = np.array(out)   # (a 0-d quotient is a NumPy scalar)
    bad = ~np.isfinite(out) | huge
    if bad.any():
        xb, yb = (np.broadcast_to(v, out.shape) for v in (x, y))
        out[bad] = smith_div(xb[bad], yb[bad])
    return out


def _ftz(t):
    """XLA's CPU code flushes subnormal results to (signed) zero."""
    m = np.abs(t) < np.finfo(t.dtype).tiny
    return np.where(m, np.multiply(t, t.dtype.type(0)), t) if m.any() else t


def smith_div(x, y):
    """XLA's division step by step in plain float operations: with |c| < |d|, r = c / d, (r a + b) / (d + r c),
    (r b - a) / (d + r c), else r = d / c, (r b + a) / (c + r d), (b - r a) / (c + r d); subnormal
    intermediates flushed; XLA's values where that gives (NaN, NaN). To a few ulps of XLA normwise."""
    a, b, c, d = x.real, x.imag, y.real, y.imag
    lt = np.abs(c) < np.abs(d)
    p, q = np.where(lt, d, c), np.where(lt, c, d)
    r = _ftz(np.divide(q, p))
    u, v = np.where(lt, a, b), np.where(lt, b, a)
    den = _ftz(np.add(np.multiply(r, q), p))
    re = _ftz(np.add(np.multiply(r, u), v))
    im = _ftz(np.add(np.multiply(np.where(lt, r, np.negative(r)), v), np.where(lt, np.negative(a), b)))
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
    """XLA's complex sign, z / |z|: NumPy's quotient of z by |z| (its |z| is XLA's to the bit on random
    values), to an ulp or so, where that is finite; else sign_xla's. (NumPy's own sign differs at zeros and
    infinities, and is slower.)"""
    out = np.divide(x, np.abs(x))
    return out if _finite(out) else sign_xla(x)


def sign_xla(x):
    """XLA's complex sign step by step: each part divided by |z| (an inf part over |z| = inf is NaN, a
    finite one 0; a NaN part makes |z| and so both parts NaN), and z itself, its zeros' signs kept, where
    |z| == 0."""
    ab = np.abs(x)
    out = np.empty(x.shape, x.dtype)
    out.real, out.imag = np.divide(x.real, ab), np.divide(x.imag, ab)
    zero = ab == 0
    return np.where(zero, x, out) if zero.any() else out
