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
"""
from __future__ import annotations

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
