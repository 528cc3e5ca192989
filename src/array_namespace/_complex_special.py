"""Special values of complex elementwise functions (the standard's lists, which follow C99 Annex G).

XLA's complex kernels compute the ordinary formulas and return NaN + NaN j in most of the
corners the standard pins down (``exp(-inf + inf j)`` is ``0 + 0j``, ``sqrt(-inf + NaN j)`` is
``NaN + inf j``, ...). Each function here has a rule table transcribed from the standard's
list; one generic evaluator computes the ordinary result and then selects the listed value
wherever the input's parts match a rule.

How a table is read:

* The lists leave no input with a non-finite part unmatched (a few rules the standard leaves
  unspecified take C99's value, as marked), so the primitive itself is only ever given finite
  values (`_SAFE` elsewhere): what its host kernels take.
* A rule is ``(condition on a, condition on b, value)`` for the input ``a + bj``. The
  conditions are the tokens of `_PREDICATES`; the first matching rule wins, as in the
  standard's lists.
* A value is a pair ``(re, im)`` of constants, or a `Cis` for the ``±0 * cis(b)`` and
  ``+infinity * cis(b)`` rules, whose signs follow ``cos(b)`` and ``sin(b)``.
* The standard lists only the half plane ``b >= +0`` (``conj`` symmetry), or the quadrant
  ``a >= +0, b >= +0`` for odd and even functions, and extends the lists by symmetry
  (``f(conj(x)) == conj(f(x))``, ``f(-x) == -f(x)`` or ``f(x)``). The evaluator folds the
  input into that region (flipping the signs of its parts), computes the ordinary result and
  the listed value there, and unfolds the result. So the symmetries hold everywhere, also at
  points off the lists (XLA gives ``acos(2 - 0j)`` the sign of ``acos(2 + 0j)``).
* ``cos``, ``sin``, ``tan``, ``asin`` and ``atan`` are specified "as if" computed from the
  hyperbolic functions of ``x*1j`` (``-1j * sinh(x*1j)`` for ``sin``, ...); ``log2`` and
  ``log10`` scale ``log``. They reuse those tables, restated once at import (`_restate`).

Everything is built from primitives on the raw values (no host round trips), inside one
staged call: under jit/vmap/grad an ordinary `jit` equation, eagerly on the CPU op by op on host
kernels (no compile per new shape), the same values as the compiled body to floating tolerance. Values are selected as whole complex constants and flipped with ``conj``
and ``neg`` (both exact), so no complex number is ever assembled from parts: XLA's complex
multiply would turn ``inf * 0`` into NaN.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from transforms.core import bind, get_aval
from transforms.jaxpr_transforms import staged_call
from transforms.primitives import elementwise as P

inf, nan, pi = np.inf, np.nan, np.pi
NANS = (nan, nan)


class Cis(NamedTuple):
    """``mag * cis(b) + shift`` for mag in {0, inf}: re = mag*cos(b) + shift, im = mag*sin(b)."""
    mag: float
    shift: float = 0.0


# ------------------------------------------------------------------------------ rule tables
# Transcribed in the standard's order; the region each list covers is noted by its symmetry.

# symmetry "conj": f(conj(z)) == conj(f(z)); the list covers b >= +0.
EXP = ("conj", [
    ("0", "+0", (1.0, 0.0)),
    ("finite", "+inf", NANS),
    ("finite", "nan", NANS),
    ("+inf", "+0", (inf, 0.0)),
    ("-inf", "finite", Cis(0.0)),
    ("+inf", "nzfinite", Cis(inf)),
    ("-inf", "+inf", (0.0, 0.0)),
    ("+inf", "+inf", (inf, nan)),
    ("-inf", "nan", (0.0, 0.0)),
    ("+inf", "nan", (inf, nan)),
    ("nan", "+0", (nan, 0.0)),
    ("nan", "nonzero", NANS),
    ("nan", "nan", NANS),
])

EXPM1 = ("conj", [
    ("0", "+0", (0.0, 0.0)),
    ("finite", "+inf", NANS),
    ("finite", "nan", NANS),
    ("+inf", "+0", (inf, 0.0)),
    ("-inf", "finite", Cis(0.0, -1.0)),
    ("+inf", "nzfinite", Cis(inf, -1.0)),
    ("-inf", "+inf", (-1.0, 0.0)),
    ("+inf", "+inf", (inf, nan)),
    ("-inf", "nan", (-1.0, 0.0)),
    ("+inf", "nan", (inf, nan)),
    ("nan", "+0", (nan, 0.0)),
    ("nan", "nonzero", NANS),
    ("nan", "nan", NANS),
])

LOG = ("conj", [
    ("-0", "+0", (-inf, pi)),
    ("+0", "+0", (-inf, 0.0)),
    ("finite", "+inf", (inf, pi / 2)),
    ("finite", "nan", NANS),
    ("-inf", "+finite", (inf, pi)),
    ("+inf", "+finite", (inf, 0.0)),
    ("-inf", "+inf", (inf, 3 * pi / 4)),
    ("+inf", "+inf", (inf, pi / 4)),
    ("inf", "nan", (inf, nan)),
    ("nan", "finite", NANS),
    ("nan", "+inf", (inf, nan)),
    ("nan", "nan", NANS),
])

LOG1P = ("conj", [
    ("-1", "+0", (-inf, 0.0)),
    ("finite", "+inf", (inf, pi / 2)),
    ("finite", "nan", NANS),
    ("-inf", "+finite", (inf, pi)),
    ("+inf", "+finite", (inf, 0.0)),
    ("-inf", "+inf", (inf, 3 * pi / 4)),
    ("+inf", "+inf", (inf, pi / 4)),
    ("inf", "nan", (inf, nan)),
    ("nan", "finite", NANS),
    ("nan", "+inf", (inf, nan)),
    ("nan", "nan", NANS),
])

SQRT = ("conj", [
    ("0", "+0", (0.0, 0.0)),
    ("any", "+inf", (inf, inf)),
    ("finite", "nan", NANS),
    ("-inf", "+finite", (0.0, inf)),
    ("+inf", "+finite", (inf, 0.0)),
    ("-inf", "nan", (nan, inf)),
    ("+inf", "nan", (inf, nan)),
    ("nan", "any", NANS),
])

ACOS = ("conj", [
    ("0", "+0", (pi / 2, -0.0)),
    ("0", "nan", (pi / 2, nan)),
    ("finite", "+inf", (pi / 2, -inf)),
    ("nzfinite", "nan", NANS),
    ("-inf", "+finite", (pi, -inf)),
    ("+inf", "+finite", (0.0, -inf)),
    ("-inf", "+inf", (3 * pi / 4, -inf)),
    ("+inf", "+inf", (pi / 4, -inf)),
    ("inf", "nan", (nan, inf)),
    ("nan", "finite", NANS),
    ("nan", "+inf", (nan, -inf)),
    ("nan", "nan", NANS),
])

ACOSH = ("conj", [
    ("0", "+0", (0.0, pi / 2)),
    ("finite", "+inf", (inf, pi / 2)),
    ("nzfinite", "nan", NANS),
    ("0", "nan", (nan, pi / 2)),      # the standard lists +0; acosh(-0 + NaN j) is its mirror image
    ("-inf", "+finite", (inf, pi)),
    ("+inf", "+finite", (inf, 0.0)),
    ("-inf", "+inf", (inf, 3 * pi / 4)),
    ("+inf", "+inf", (inf, pi / 4)),
    ("inf", "nan", (inf, nan)),
    ("nan", "finite", NANS),
    ("nan", "+inf", (inf, nan)),
    ("nan", "nan", NANS),
])

# symmetry "odd": also f(-z) == -f(z); "even": also f(-z) == f(z). The lists cover a >= +0, b >= +0.
ASINH = ("odd", [
    ("+0", "+0", (0.0, 0.0)),
    ("+finite", "+inf", (inf, pi / 2)),
    ("finite", "nan", NANS),
    ("+inf", "+finite", (inf, 0.0)),
    ("+inf", "+inf", (inf, pi / 4)),
    ("nan", "+0", (nan, 0.0)),
    ("nan", "nzfinite", NANS),
    ("nan", "+inf", (inf, nan)),
    ("nan", "nan", NANS),
    ("+inf", "nan", (inf, nan)),      # unspecified by the standard; C99's value
])

ATANH = ("odd", [
    ("+0", "+0", (0.0, 0.0)),
    ("+0", "nan", (0.0, nan)),
    ("1", "+0", (inf, 0.0)),
    ("+finite", "+inf", (0.0, pi / 2)),
    ("nzfinite", "nan", NANS),
    ("+inf", "+finite", (0.0, pi / 2)),
    ("+inf", "+inf", (0.0, pi / 2)),
    ("+inf", "nan", (0.0, nan)),
    ("nan", "finite", NANS),
    ("nan", "+inf", (0.0, pi / 2)),
    ("nan", "nan", NANS),
])

COSH = ("even", [
    ("+0", "+0", (1.0, 0.0)),
    ("+0", "+inf", (nan, 0.0)),
    ("+0", "nan", (nan, 0.0)),
    ("nzfinite", "+inf", NANS),
    ("nzfinite", "nan", NANS),
    ("+inf", "+0", (inf, 0.0)),
    ("+inf", "nzfinite", Cis(inf)),
    ("+inf", "+inf", (inf, nan)),
    ("+inf", "nan", (inf, nan)),
    ("nan", "0", (nan, 0.0)),
    ("nan", "nzfinite", NANS),
    ("nan", "nan", NANS),
    ("nan", "+inf", NANS),            # unspecified by the standard; C99's value
])

SINH = ("odd", [
    ("+0", "+0", (0.0, 0.0)),
    ("+0", "+inf", (0.0, nan)),
    ("+0", "nan", (0.0, nan)),
    ("+finite", "+inf", NANS),
    ("+finite", "nan", NANS),
    ("+inf", "+0", (inf, 0.0)),
    ("+inf", "+finite", Cis(inf)),
    ("+inf", "+inf", (inf, nan)),
    ("+inf", "nan", (inf, nan)),
    ("nan", "+0", (nan, 0.0)),
    ("nan", "nzfinite", NANS),
    ("nan", "nan", NANS),
    ("nan", "+inf", NANS),            # unspecified by the standard; C99's value
])

TANH = ("odd", [
    ("+0", "+0", (0.0, 0.0)),
    ("nzfinite", "+inf", NANS),
    ("+0", "+inf", (0.0, nan)),
    ("nzfinite", "nan", NANS),
    ("+0", "nan", (0.0, nan)),
    ("+inf", "+finite", (1.0, 0.0)),
    ("+inf", "+inf", (1.0, 0.0)),
    ("+inf", "nan", (1.0, 0.0)),
    ("nan", "+0", (nan, 0.0)),
    ("nan", "nonzero", NANS),
    ("nan", "nan", NANS),
])


# Each function's table: (table, whether its input is rotated to x*1j, map of the values).
# "-1j" maps a value u + vj to -1j * (u + vj) = v - uj; a number scales both parts.
_MINUS_I = "-1j"
TABLES = {
    "exp": (EXP, False, None), "expm1": (EXPM1, False, None),
    "log": (LOG, False, None), "log1p": (LOG1P, False, None),
    "log2": (LOG, False, 1 / np.log(2.0)), "log10": (LOG, False, 1 / np.log(10.0)),
    "sqrt": (SQRT, False, None), "acos": (ACOS, False, None), "acosh": (ACOSH, False, None),
    "asinh": (ASINH, False, None), "atanh": (ATANH, False, None),
    "cosh": (COSH, False, None), "sinh": (SINH, False, None), "tanh": (TANH, False, None),
    "cos": (COSH, True, None),           # cosh(x*1j)
    "sin": (SINH, True, _MINUS_I),       # -1j * sinh(x*1j)
    "tan": (TANH, True, _MINUS_I),       # -1j * tanh(x*1j)
    "asin": (ASINH, True, _MINUS_I),     # -1j * asinh(x*1j)
    "atan": (ATANH, True, _MINUS_I),     # -1j * atanh(x*1j)
}


# ------------------------------------------------------------------------------- evaluator
def _k(value, like):
    return P.convert_element_type(value, get_aval(like).dtype, weak_type=True)


def signbit_raw(v):
    """The sign bit itself (so -0.0 and -NaN count as negative): reinterpret as a signed integer."""
    from transforms.primitives.bits import bitcast_convert_type
    it = np.dtype(np.int32) if get_aval(v).dtype == np.float32 else np.dtype(np.int64)
    return bind(P.lt_p, bitcast_convert_type(v, it), P.convert_element_type(0, it))


def _is_finite(x): return bind(P.is_finite_p, x)
def _eq(x, c): return bind(P.eq_p, x, _k(c, x))
def _and(p, q): return bind(P.and_p, p, q)
def _not(p): return bind(P.not_p, p)


def _is_zero(x):
    """|x| below the smallest normal: a zero as the floating-point mode reads a subnormal (DAZ), eagerly and under
    jit. (x == 0 beside another test of x was folded by XLA's compiler into one test of x's bits that takes a
    subnormal for nonzero, though the CPU's compare reads it as zero: tanh(1e-310 + inf j) was NaN + NaN j under
    jit, 0 + NaN j eagerly.)"""
    return bind(P.lt_p, bind(P.abs_p, x), _k(float(np.finfo(get_aval(x).dtype).smallest_normal), x))


# Conditions on one part x of the folded input.
_PREDICATES = {
    "+0": lambda x: _and(_is_zero(x), _not(signbit_raw(x))),
    "-0": lambda x: _and(_is_zero(x), signbit_raw(x)),
    "0": _is_zero,
    "1": lambda x: _eq(x, 1),
    "-1": lambda x: _eq(x, -1),
    "finite": _is_finite,
    "nzfinite": lambda x: _and(_is_finite(x), _not(_is_zero(x))),
    # The standard's "positive (i.e., greater than 0) finite number". C99 says "positive-signed
    # finite", which also takes +0 where the standard lists nothing for it (log(-inf + 0j) is
    # +inf + pi j, sqrt(+inf + 0j) is +inf + 0j, ...); the tables never list +0 differently.
    "+finite": lambda x: _and(_is_finite(x), _not(signbit_raw(x))),
    "nonzero": lambda x: _not(_is_zero(x)),     # NaN and infinities included
    "+inf": lambda x: _eq(x, inf),
    "-inf": lambda x: _eq(x, -inf),
    "inf": lambda x: _eq(bind(P.abs_p, x), inf),
    "nan": lambda x: bind(P.ne_p, x, x),
}


class _Rule(NamedTuple):
    """A rule restated for the folded input z = x + yj of the function itself."""
    on_x: str            # condition on x
    on_y: str            # condition on y
    value: complex       # the value, or its magnitudes for a Cis rule
    cos_flips: str       # for a Cis rule: the part ("re"/"im"/"") negated where cos(t) < 0 ...
    sin_flips: str       # ... and where sin(t) < 0; t is the table's b


def _restate(table, rotate, post):
    """The rules of a table for a function derived from it (see TABLES), on its folded input."""
    symmetry, rules = table
    out = []
    for ca, cb, val in rules:
        if isinstance(val, Cis):
            re, im = val.mag + val.shift, val.mag
            cos_flips, sin_flips = ("re" if val.shift == 0 or np.isinf(val.mag) else ""), "im"
        else:
            (re, im), cos_flips, sin_flips = val, "", ""
        if rotate:
            # The folded z = x + yj (x, y >= +0) becomes z*1j = -y + xj, which the table folds
            # again to y + xj: its a is our y, its b our x, and unfolding -y negates the real
            # part (odd table) or the imaginary part (even table) of the value.
            ca, cb = cb, ca
            re, im = (-re, im) if symmetry == "odd" else (re, -im)
        if post == _MINUS_I:      # -1j * (u + vj) = v - uj: the parts trade places
            re, im = im, -re
            swap = {"re": "im", "im": "re", "": ""}
            cos_flips, sin_flips = swap[cos_flips], swap[sin_flips]
        elif post is not None:
            re, im = re * post, im * post
        out.append(_Rule(ca, cb, complex(re, im), cos_flips, sin_flips))
    return symmetry, rotate, out


def _flip_re(z): return bind(P.neg_p, bind(P.conj_p, z))   # -re + im j, exactly
def _flip_im(z): return bind(P.conj_p, z)                  # re - im j, exactly


def _flip(z, flip_re=None, flip_im=None):
    """Negate the real / imaginary part of complex z where the masks hold (None: nowhere)."""
    if flip_re is not None:
        z = P.select_n(flip_re, z, _flip_re(z))
    if flip_im is not None:
        z = P.select_n(flip_im, z, _flip_im(z))
    return z


def _fold(z, symmetry):
    """Fold z into the region a table lists: (folded z, unfold mask for re, for im)."""
    sa, sb = signbit_raw(bind(P.real_p, z)), signbit_raw(bind(P.imag_p, z))
    z = _flip(z, None, sb)                                  # f(conj(z)) == conj(f(z))
    if symmetry == "conj":
        return z, None, sb
    z = _flip(z, sa, None)                                  # f(-z) == -f(z) or f(z)
    return z, (sa if symmetry == "odd" else None), (sb if symmetry == "odd" else bind(P.xor_p, sa, sb))


def special_values(rules, rotate, z):
    """(hit, value): where the standard fixes the function at the folded z, and that value."""
    x, y = bind(P.real_p, z), bind(P.imag_p, z)
    preds, t_signs = {}, {}

    def pred(tok, part):
        if tok == "any":
            return None
        if (tok, part) not in preds:
            preds[tok, part] = _PREDICATES[tok](x if part == "x" else y)
        return preds[tok, part]

    def cis_flip(fn):
        if fn not in t_signs:
            t_signs[fn] = signbit_raw(bind(fn, x if rotate else y))
        return t_signs[fn]

    hit = value = None
    for r in reversed(rules):                                # earlier rules are applied last: they win
        masks = [m for m in (pred(r.on_x, "x"), pred(r.on_y, "y")) if m is not None]
        m = masks[0] if len(masks) == 1 else _and(*masks)
        v = _k(r.value, z)
        for fn, part in ((P.cos_p, r.cos_flips), (P.sin_p, r.sin_flips)):
            if part:
                v = _flip(v, *((cis_flip(fn), None) if part == "re" else (None, cis_flip(fn))))
        value = v if value is None else P.select_n(m, value, v)
        hit = m if hit is None else bind(P.or_p, hit, m)
    return hit, value


_RESTATED = {name: _restate(*spec) for name, spec in TABLES.items()}


# Where the standard fixes the value, the primitive is given this instead of the input: every
# non-finite input is such a place (the lists are complete there), and the host kernels
# (xla/lower_elementwise_complex.py) take finite values only.
_SAFE = 0.5 + 0.5j


# ----------------------------------------------------------- formulas from real primitives
# XLA's own complex sin, cos, sinh, cosh, expm1 and log1p lose digits in ordinary regions (complex64
# sin(1.73 + 0.0081j) is off in the fourth digit, complex128 sin near the real axis loses ~10 digits),
# and so have no host kernel that could equal them. These are computed here instead from real
# primitives and `complex` (exact assembly), the same formulas under jit and eagerly, each part to a few
# ulps of its real factors. They take the folded, finite input (x, y >= +0 for the odd and even
# functions; y >= +0 for expm1 and log1p).

def _re(z): return bind(P.real_p, z)
def _im(z): return bind(P.imag_p, z)
def _mul(a, b): return bind(P.mul_p, a, b)
def _add(a, b): return bind(P.add_p, a, b)
def _sub(a, b): return bind(P.sub_p, a, b)
def _cplx(re, im): return bind(P.complex_p, re, im)


def _big(dtype):
    """Beyond this, exp/cosh/sinh of the argument is formed as exp(t/2) * s * exp(t/2) (no early
    overflow: sinh(711 + 1e-300j) is finite); below, the ordinary product."""
    return 700.0 if dtype == np.float64 else 85.0


def _grow(kind, t, s):
    """kind(t) * s for kind in exp, cosh, sinh, without spurious overflow for large t, and exactly s's
    zero where s == 0 and even exp(t/2) overflows (inf * 0 would be NaN). cosh and sinh only for t >= 0.
    Far out, s is scaled up by exp(t/2) before it is halved: a small normal s (sin(2.2e-308)) halved first
    would be subnormal, flushed to zero on the CPU (xla/host.py, "Subnormals"), and the product lost."""
    big = _big(get_aval(t).dtype)
    small = _mul(bind(kind, bind(P.min_p, t, _k(big, t))), s)      # (clamped: no inf in its derivative)
    half = bind(P.exp_p, _mul(t, _k(0.5, t)))
    hs = _mul(half, s)
    far = _mul(hs if kind is P.exp_p else _mul(hs, _k(0.5, hs)), half)
    out = P.select_n(bind(P.gt_p, t, _k(big, t)), small, far)
    return P.select_n(_and(_eq(s, 0), _eq(half, inf)), out, s)


def _sinh(w):      # sinh(x) cos(y) + i cosh(x) sin(y)
    x, y = _re(w), _im(w)
    return _cplx(_grow(P.sinh_p, x, bind(P.cos_p, y)), _grow(P.cosh_p, x, bind(P.sin_p, y)))


def _cosh(w):      # cosh(x) cos(y) + i sinh(x) sin(y)
    x, y = _re(w), _im(w)
    return _cplx(_grow(P.cosh_p, x, bind(P.cos_p, y)), _grow(P.sinh_p, x, bind(P.sin_p, y)))


def _sin(w):       # sin(x) cosh(y) + i cos(x) sinh(y)
    x, y = _re(w), _im(w)
    return _cplx(_grow(P.cosh_p, y, bind(P.sin_p, x)), _grow(P.sinh_p, y, bind(P.cos_p, x)))


def _cos(w):       # cos(x) cosh(y) - i sin(x) sinh(y)
    x, y = _re(w), _im(w)
    return _cplx(_grow(P.cosh_p, y, bind(P.cos_p, x)), bind(P.neg_p, _grow(P.sinh_p, y, bind(P.sin_p, x))))


def _expm1(w):
    """e^x cos y - 1 = expm1(x) cos y - 2 sin(y/2)^2 (no cancellation near 0) + i e^x sin y."""
    x, y = _re(w), _im(w)
    big = _big(get_aval(x).dtype)
    s = bind(P.sin_p, _mul(y, _k(0.5, y)))
    near = _sub(_mul(bind(P.expm1_p, bind(P.min_p, x, _k(big, x))), bind(P.cos_p, y)), _mul(_mul(s, s), _k(2.0, s)))
    far = _sub(_grow(P.exp_p, x, bind(P.cos_p, y)), _k(1.0, x))
    re = P.select_n(bind(P.gt_p, x, _k(big, x)), near, far)
    return _cplx(re, _grow(P.exp_p, x, bind(P.sin_p, y)))


def _log1p(w):
    """log|1 + z| + i arg(1 + z); near 0 (|x|, y < 1) log|1 + z| = log1p(x (2 + x) + y^2) / 2, which keeps
    the digits of a small z; elsewhere log(|1 + z|) (|.| is hypot: no overflow)."""
    x, y = _re(w), _im(w)
    a = _add(x, _k(1.0, x))
    near = _mul(bind(P.log1p_p, _add(_mul(x, _add(x, _k(2.0, x))), _mul(y, y))), _k(0.5, x))
    far = bind(P.log_p, bind(P.abs_p, _cplx(a, y)))
    small = _and(bind(P.lt_p, bind(P.abs_p, x), _k(1.0, x)), bind(P.lt_p, y, _k(1.0, y)))
    return _cplx(P.select_n(small, far, near), bind(P.atan2_p, y, a))


def _atanh_fixed(fname, w, out):
    """XLA's atanh (atan is -1j atanh(1j z)) on the folded w, right where it is not: at 1 + bj (atan: b + 1j) it
    squares b, so its real part (atan: imaginary part) was inf for 0 < b < ~1e-154 (float32: 1e-19); there it is
    (log 2 - log b) / 2 to b^2 / 8. And atan(x + 0j) had the imaginary part -0.0 (XLA reads 1j z's -0.0 as +0.0)."""
    x, y = _re(w), _im(w)
    one, b = (x, y) if fname == "atanh" else (y, x)
    part = _re(out) if fname == "atanh" else _im(out)
    pole = _mul(_sub(_k(np.log(2.0), b), bind(P.log_p, b)), _k(0.5, b))
    part = P.select_n(_and(_eq(one, 1), bind(P.lt_p, b, _k(1e-8, b))), part, pole)
    if fname == "atanh":
        return _cplx(part, _im(out))
    return _cplx(_re(out), P.select_n(_eq(y, 0), part, y))


_FORMULAS = {"sinh": _sinh, "cosh": _cosh, "sin": _sin, "cos": _cos, "expm1": _expm1, "log1p": _log1p}


def _body(z, *, fname, prim, divisor):
    symmetry, rotate, rules = _RESTATED[fname]
    z, unfold_re, unfold_im = _fold(z, symmetry)
    hit, value = special_values(rules, rotate, z)
    w = P.select_n(hit, z, _k(_SAFE, z))
    formula = _FORMULAS.get(fname)
    out = bind(prim, w) if formula is None else formula(w)
    if fname in ("atan", "atanh"):
        out = _atanh_fixed(fname, w, out)
    if divisor is not None:   # (a product: complex division has no host kernel)
        out = bind(P.mul_p, out, _k(1.0 / divisor, out))
    return _flip(P.select_n(hit, out, value), unfold_re, unfold_im)


def apply(name, prim, z, divisor=None):
    """name(z) for a complex raw value z: prim's ordinary result (divided by `divisor`, for
    log2/log10) on the folded input, with the standard's special values selected in and the
    symmetry unfolded; one staged call (staged once per signature). Eagerly on the CPU it runs op
    by op on host kernels (compiling nothing for a new shape) where every primitive of the body
    has one, until its signature has spent its budget (xla/host_eager.py). The body never looks at z's
    shape (shape_free): eagerly it is staged once per dtype, not per shape."""
    return staged_call(_body, [z], name, by_op=True, shape_free=True, fname=name, prim=prim, divisor=divisor)[0]
