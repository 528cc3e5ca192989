"""The gamma family of xp.special (scipy.special names, positional arguments in scipy's order).

scipy.special, run with SCIPY_ARRAY_API=1 on this namespace, finds these through
`xp.special.<name>`, so they must give scipy's values (poles, infinities, NaN, negative and huge
arguments) and run under jit, vmap and grad. Arguments are validated and promoted here, once:
real inputs only, integer/bool -> float64, float32 stays float32, all arguments to one dtype
(Python scalars weak). The primitives are in transforms/primitives/special_gamma.py; the
special values XLA's CHLO expansions get differently from scipy are fixed up here with where.
"""
from __future__ import annotations


import numpy as np

from transforms import custom_jvp
from transforms.core import bind
from transforms.custom_derivatives import stop_gradient_p
from transforms.primitives import special_gamma as G
from transforms.primitives.elementwise import full_like_scalar

from .._helpers import wrap
from ._promote import in_float64, raw_floats

__all__ = ["gammaln", "loggamma", "gamma", "gammasgn", "rgamma", "psi", "digamma", "polygamma", "zeta", "zetac",
           "multigammaln", "poch", "binom", "gammainc", "gammaincc", "gammaincinv", "gammainccinv", "chdtr",
           "chdtrc", "chdtri", "gdtr", "gdtrc", "pdtr", "pdtrc", "pdtri"]


# ------------------------------------------------------------------ validation / promotion
def _floats(fname, names, *args):
    """Like raw_floats but as Arrays (for compositions written with the namespace's operators)."""
    raw, dt = raw_floats(fname, names, args)
    return [wrap(v) for v in raw] + [dt]


def _xp():
    import array_namespace as xp
    return xp


# --------------------------------------------------------------------- log-gamma and sign
def _lgamma(x):
    """log|Gamma(x)|, exactly 0 at 1 and 2 (XLA's float32 expansion is a few ulp off there)."""
    xp = _xp()
    lg = wrap(G.lgamma(x._v))
    exact0 = lg - wrap(bind(stop_gradient_p, lg._v))      # 0, with lgamma's derivative
    return xp.where((x == 1) | (x == 2), exact0, lg)


def gammaln(x, /):
    """log|Gamma(x)| (scipy.special.gammaln)."""
    x, _ = _floats("gammaln", ("x",), x)
    xp = _xp()
    return xp.where(x == -xp.inf, -xp.inf, _lgamma(x))


def loggamma(x, /):
    """Principal branch of log Gamma(x) for real x: NaN for x < 0 (scipy.special.loggamma)."""
    x, _ = _floats("loggamma", ("x",), x)
    xp = _xp()
    return xp.where(x < 0, xp.nan, _lgamma(x))


def _is_pole(x):
    """x is 0? no: a non-positive integer other than zero, or -inf (Gamma undefined there)."""
    xp = _xp()
    return (x < 0) & (xp.floor(x) == x)


def _sign(x):
    """Sign of Gamma(x) away from its poles: +1 for x > 0, (-1)^ceil(-x) for x < 0, sign of zero at 0."""
    xp = _xp()
    one = xp.ones_like(x)
    odd = xp.remainder(xp.floor(x), 2.0) == 1
    neg = xp.where(odd, -one, one)
    zero = xp.where(xp.signbit(x), -one, one)
    return xp.where(x > 0, one, xp.where(x == 0, zero, neg))


def gammasgn(x, /):
    """Sign of Gamma(x): NaN at the poles (negative integers, -inf) and for NaN (scipy.special.gammasgn)."""
    x, _ = _floats("gammasgn", ("x",), x)
    xp = _xp()
    return xp.where(_is_pole(x) | xp.isnan(x), xp.nan, _sign(x))


def gamma(x, /):
    """Gamma(x) = sign * exp(lgamma): +-inf at +-0, NaN at negative integers and -inf (scipy.special.gamma)."""
    x, _ = _floats("gamma", ("x",), x)
    xp = _xp()
    val = _sign(x) * xp.exp(_lgamma(x))
    val = xp.where(x == 0, 1.0 / x, val)
    return xp.where(_is_pole(x), xp.nan, val)


def rgamma(x, /):
    """1 / Gamma(x): zero (signed at -0) at the poles (scipy.special.rgamma)."""
    x, _ = _floats("rgamma", ("x",), x)
    xp = _xp()
    val = _sign(x) * xp.exp(-_lgamma(x))
    return xp.where(_is_pole(x), 0.0, val)


# ------------------------------------------------------------------------------- digamma
def psi(x, /):
    """The digamma function: -inf at +0, +inf at -0, NaN at negative integers (scipy.special.psi)."""
    x, _ = _floats("psi", ("x",), x)
    return wrap(G.psi_impl(x._v))


def digamma(x, /):
    """Alias of psi (scipy.special.digamma)."""
    x, _ = _floats("digamma", ("x",), x)
    return psi(x)


# ------------------------------------------------------------------- polygamma and zeta
def polygamma(n, x, /):
    """The n-th derivative of psi (scipy.special.polygamma); NaN unless n is a non-negative integer."""
    (n, x), _ = raw_floats("polygamma", ("n", "x"), (n, x))
    return wrap(G.polygamma(n, x))


# zeta(s) - 1/(s - 1), entire: its Taylor coefficients at 0 (mpmath, 50 digits); 18 reach 2e-18 on [-1, 1]
_ZETA_ENTIRE = (0.5, 0.08106146679532726, -0.0031782279542924255, -0.000785194477042408, 0.00012070049942883505,
                -1.940896320456038e-06, -1.3011460139596242e-06, 1.6861582638922007e-07, -5.764675979949394e-09,
                -9.110164892314166e-10, 1.4970075941901138e-10, -9.406895665666177e-12, -4.092582630415831e-14,
                6.539904805891015e-14, -6.54396874989192e-15, 3.0124248713667866e-16, 3.988894706311055e-18,
                -1.858215043378503e-18)


def _zeta_near_0(s):
    """Riemann zeta for -1 <= s < 1 as 1/(s - 1) plus its entire part's Taylor series, to a few ulps. (The
    reflection formula took zeta(1 - s) of a rounded 1 - s: zeta(-1.4e-8) was off by 2e-8 in float64, by 21%
    at -1.75e-6 in float32; Euler-Maclaurin summation cancels ~20-fold near 0, 60 ulps.)"""
    acc = _ZETA_ENTIRE[-1]
    for c in _ZETA_ENTIRE[-2::-1]:
        acc = acc * s + c
    return 1.0 / (s - 1.0) + acc


def _riemann_zeta(x):
    xp = _xp()
    one = xp.ones_like(x)
    big = wrap(G.zeta(x._v, one._v))                       # x > 1 (inf at 1, 1 at +inf)
    mid = _zeta_near_0(xp.where((x >= -1) & (x < 1), x, 0.5 * one))
    # x < -1: zeta(x) = 2^x pi^(x-1) sin(pi x / 2) Gamma(1 - x) zeta(1 - x), in logs
    xn = xp.where(x < -1, x, -2 * one)
    # sin(pi x / 2) = sin(pi t / 2), t in [-1, 1] formed exactly: r = x - 4 trunc(x / 4) in (-4, 0], then r + 4 or
    # -2 - r (near an even x, x mod 4 as x + 4 rounded, and pi (x mod 4) / 2 near pi, lost eps / |sin| of the value:
    # zeta(-2 + 6.2e-12) was 3.6e-5 off)
    r = xn - 4 * xp.trunc(xn * 0.25)
    t = xp.where(r <= -3, r + 4, xp.where(r < -1, -2 - r, r))
    sin = xp.sin(t * (np.pi / 2))
    logmag = xn * np.log(2.0) + (xn - 1) * np.log(np.pi) + wrap(G.lgamma((1 - xn)._v))
    refl = sin * xp.exp(logmag) * wrap(G.zeta((1 - xn)._v, one._v))
    even_neg = (x < 0) & (xp.remainder(x, 2.0) == 0)
    refl = xp.where(even_neg, 0.0, refl)
    out = xp.where(x >= 1, big, xp.where(x >= -1, mid, refl))
    out = xp.where(x == xp.inf, 1.0, out)   # (a finite huge x: the zeta primitive's limit, 1)
    return xp.where((x == -xp.inf) | xp.isnan(x), xp.nan, out)


def zeta(x, q=None, /):
    """Hurwitz zeta(x, q) for x > 1 (scipy.special.zeta), or Riemann's zeta(x) when q is None."""
    if q is None:
        (x,), _ = raw_floats("zeta", ("x",), (x,))
        return in_float64(_riemann_zeta, (wrap(x),))
    x, q, _ = _floats("zeta", ("x", "q"), x, q)
    xp = _xp()
    out = wrap(G.zeta(x._v, q._v))
    # huge q: the leading terms of the asymptotic series (as scipy); huge x: q^-x decides
    qs = xp.where(q > 1e8, q, 2.0)
    asym = (1.0 / (x - 1) + 0.5 / qs) * xp.exp((1 - x) * xp.log(qs))
    out = xp.where((q > 1e8) & (x > 1), asym, out)
    tail = xp.where(q > 1, 0.0, xp.where(q == 1, 1.0, xp.inf))
    return xp.where((x >= 1e15) & ~xp.isnan(q) & ~_nonpos_int(q), tail, out)


def zetac(x, /):
    """zeta(x) - 1 without the cancellation for large x: Hurwitz zeta(x, 2) for x > 1 (scipy.special.zetac)."""
    x, _ = _floats("zetac", ("x",), x)
    xp = _xp()
    two = 2 * xp.ones_like(x)
    big = wrap(G.zeta(x._v, two._v))
    small = _riemann_zeta(xp.where(x < 1, x, 0.5 * xp.ones_like(x))) - 1
    out = xp.where(x >= 1, big, small)
    # 2**-x underflows for x > 1100 (and the Hurwitz series gives NaN for x ~ 1e18): exactly 0 there
    return xp.where(x > 1100.0, 0.0, xp.where(xp.isnan(x), xp.nan, out))


# ------------------------------------------------------------ multigammaln, poch, binom
_MULTIGAMMALN_MAX_D = 1 << 24   # the sum has d terms, held at once


def multigammaln(a, d, /):
    """log of the multivariate gamma function of dimension d (scipy.special.multigammaln).

    d (static: a Python or NumPy int, 1 <= d <= 2**24) is checked with a ValueError both eagerly and
    under jit; a must exceed (d - 1) / 2, where it does not the value is NaN both eagerly and under
    jit (a traced value cannot raise, so the eager call does not either; scipy raises there)."""
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or not 1 <= d <= _MULTIGAMMALN_MAX_D:
        raise ValueError(f"multigammaln: d must be a positive integer (the dimension) up to 2**24, got {d!r}")
    a, _ = _floats("multigammaln", ("a",), a)
    xp = _xp()
    d = int(d)
    half = 0.5 * xp.arange(d, dtype=a.dtype)
    out = xp.sum(gammaln(a[..., None] - half), axis=-1) + (d * (d - 1) * 0.25) * np.log(np.pi)
    return xp.where(a <= 0.5 * (d - 1), xp.nan, out)


def _zero_times_exp(s, lg):
    """s exp(lg), where a zero s gives 0 even if exp(lg) overflows: a smooth zero times a factor that may overflow
    (poch at a pole of Gamma(z)). Its derivatives are ds exp(lg) + (s exp(lg)) dlg, so they overflow to inf
    where the true ones do (grad of poch(z, 400.5) at z = -200 was 0: the NaN of inf * 0 had been selected
    away, and with it the derivative)."""
    xp = _xp()
    return xp.where(s == 0, s, s * xp.exp(lg))


def _zero_times_exp_jvp(primals, tangents):
    s, lg = primals
    ds, dlg = tangents
    out = _zero_times_exp(s, lg)
    return out, ds * _xp().exp(lg) + out * dlg


_zero_times_exp = custom_jvp(_zero_times_exp)
_zero_times_exp.defjvp(_zero_times_exp_jvp)


def _nonpos_int(x):
    xp = _xp()
    return (x <= 0) & (xp.floor(x) == x)


def _sinpi(a):
    """sin(pi a), exactly zero at the integers (its derivative pi cos(pi a) is kept)."""
    xp = _xp()
    n = xp.round(a)
    return xp.sin(np.pi * (a - n)) * (1.0 - 2.0 * xp.remainder(n, 2.0))


def _lgamma_ratio(b, m):
    """lgamma(b + m) - lgamma(b) without the cancellation of two huge logs: Stirling's series for
    both when b, b + m >= 20 (5 correction terms: error below 1e-17 there), else directly."""
    xp = _xp()
    a = b + m
    big = (a >= 20) & (b >= 20)
    sa, sb, sm = xp.where(big, a, 20.0), xp.where(big, b, 20.0), xp.where(big, m, 0.0)

    def corr(x):
        x2 = 1.0 / (x * x)
        return (1 / 12 + x2 * (-1 / 360 + x2 * (1 / 1260 + x2 * (-1 / 1680 + x2 * (1 / 1188))))) / x
    stir = (sb - 0.5) * xp.log1p(sm / sb) + sm * (xp.log(sa) - 1.0) + (corr(sa) - corr(sb))
    return xp.where(big, stir, _lgamma(a) - _lgamma(b))


def poch(z, m, /):
    """Pochhammer's rising factorial Gamma(z + m) / Gamma(z) (scipy.special.poch); float32 in float64."""
    z, m, _ = _floats("poch", ("z", "m"), z, m)
    return in_float64(_poch, (z, m))


def _poch(z, m):
    xp = _xp()
    zm = z + m
    val = _sign(zm) * _sign(z) * xp.exp(_lgamma_ratio(z, m))
    # an integer m with z + m <= 0 and z < 1: (-1)^m Gamma(1 - z) / Gamma(1 - z - m), both arguments positive (the
    # limit at two poles; no lgamma of a large negative argument; no pole made by rounding z + m: poch(2.4e-27,
    # -9.8e24) is ~1/(9.8e24)!, not inf)
    z_pole, m_int = _nonpos_int(z), xp.floor(m) == m
    refl = m_int & (zm <= 0) & (z < 1)
    sgn = xp.where(xp.remainder(m, 2.0) == 0, 1.0, -1.0)
    lim = sgn * xp.exp(-_lgamma_ratio(xp.where(refl, 1 - z, 1.0), xp.where(refl, -m, 1.0)))
    # Gamma(z) at a pole: 0, also where a non-integer m is lost in rounding z + m (poch(-2.4e23, 1.24) was -1); as
    # Gamma(z + m) Gamma(1 - z) sin(pi z) / pi, a smooth zero whose z-derivatives are poch's (a constant 0 had
    # none: grad of poch(z, 3) at z = -1 was 0, not -1)
    zp = xp.where(z_pole, z, 0.0)
    at_pole = _sign(zm) * _zero_times_exp(_sinpi(zp) / np.pi, _lgamma(xp.where(z_pole, zm, 1.0)) + _lgamma(1 - zp))
    at_pole = at_pole - wrap(bind(stop_gradient_p, at_pole._v))   # (exactly +0.0, as scipy's; the derivatives kept)
    val = xp.where(_nonpos_int(zm) & ~z_pole, xp.inf, xp.where(z_pole, at_pole, val))
    val = xp.where(refl, lim, val)
    # infinite arguments, as scipy's recurrences leave them
    odd_m = xp.remainder(m, 2.0) == 1
    pos_int_m = (m > 0) & (xp.floor(m) == m)
    val = xp.where(z == xp.inf, xp.where(m > 0, xp.inf, 0.0), val)
    val = xp.where(z == -xp.inf, xp.where(pos_int_m, xp.where(odd_m, -xp.inf, xp.inf), xp.nan), val)
    val = xp.where(xp.isfinite(z) & (m == xp.inf), xp.inf, xp.where(m == -xp.inf, xp.nan, val))
    return xp.where(m == 0, 1.0, val)


def binom(n, k, /):
    """Binomial coefficient n choose k for real n, k (scipy.special.binom): exact products for
    integer k below 20 (after the symmetry k -> n - k), Gamma ratios otherwise; float32 in float64."""
    n, k, _ = _floats("binom", ("n", "k"), n, k)
    return in_float64(_binom, (n, k))


def _binom(n, k):
    xp = _xp()
    kx = xp.floor(k)
    int_k = (k == kx) & ((xp.abs(n) > 1e-8) | (n == 0))
    nx = xp.floor(n)
    sym = (nx == n) & (kx > nx / 2) & (nx > 0)
    kx = xp.where(sym, nx - kx, kx)
    small = int_k & (kx >= 0) & (kx < 20)
    r = xp.ones_like(n)
    for i in range(1, 20):
        r = xp.where(kx >= i, (r * (i + n - kx)) / i, r)   # exact while below 2**53
    # general: Gamma(n+1) / (Gamma(n-k+1) Gamma(k+1)), 0 where n - k + 1 is a pole
    # (inputs made safe where this branch is not taken, so reverse mode sends no 0 * inf there)
    # (n - k + 1 is a pole only for an integer n where k is one: a rounded n - k can look like one otherwise)
    pole = (_nonpos_int(n - k + 1) & ((n == nx) | (k != xp.floor(k)))) | _nonpos_int(k + 1)
    off = small | pole
    ng, kg = xp.where(off, 3.5, n), xp.where(off, 1.5, k)
    a, b, c = ng + 1, ng - kg + 1, kg + 1
    g = _sign(a) * _sign(b) * _sign(c) * xp.exp(_lgamma_ratio(b, kg) - _lgamma(c))
    # an integer k >= 20 past n + 1: (-1)^k Gamma(k - n) / (Gamma(k + 1) Gamma(-n)), k - n and k + 1 positive (n - k + 1
    # is a large negative argument whose fraction n - k rounds away: binom(1.73, 3.2e15) was 1e8 times too large)
    refl = (k == xp.floor(k)) & (k >= 20) & (n - k + 1 < 0) & ~pole
    nr, kr = xp.where(refl, n, 0.5), xp.where(refl, k, 20.0)
    g_refl = (xp.where(xp.remainder(kr, 2.0) == 0, 1.0, -1.0) * _sign(-nr)
              * xp.exp(_lgamma_ratio(kr + 1, -nr - 1) - _lgamma(-nr)))
    g = xp.where(refl, g_refl, g)
    # at a pole of Gamma(n-k+1) the value is 0; its derivative is Gamma(n+1)/Gamma(k+1) times
    # d(1/Gamma)(-p) = (-1)^p p!, carried by (b - stop_gradient(b)) (exactly 0 in value)
    bt, c = n - k + 1, k + 1
    bp = xp.where(_nonpos_int(bt), bt, -1.0)
    p = -bp
    np1, kp1 = xp.where(pole, n, 3.5) + 1, xp.where(pole, k, 1.5) + 1
    sgn = _sign(np1) * _sign(kp1) * xp.where(xp.remainder(p, 2.0) == 0, 1.0, -1.0)
    # (a coefficient that overflows, e.g. n, k ~ 1e18, keeps the exact 0; its derivative is then +-inf)
    g_pole = _zero_times_exp(sgn * (bt - wrap(bind(stop_gradient_p, bt._v))),
                             _lgamma(np1) - _lgamma(kp1) + _lgamma(p + 1))
    g = xp.where(pole, xp.where(_nonpos_int(c), 0.0, g_pole), g)
    b = bt
    # derivatives of the exact product: it is a polynomial in n (right d/dn) unless the symmetry
    # k -> n - k made it one in floor(n); it never depends on k. The missing parts come from the
    # Gamma form's log, through a factor exp(L - stop_gradient(L)) that is exactly 1.
    def unit(lv):
        return xp.exp(lv - wrap(bind(stop_gradient_p, lv._v)))
    ns = wrap(bind(stop_gradient_p, n._v))
    ok = small & xp.isfinite(n) & ~_nonpos_int(n - k + 1) & ~_nonpos_int(c)   # (safe inputs elsewhere)
    nn, kk = xp.where(ok, n, 3.5), xp.where(ok, k, 1.5)
    nns = xp.where(ok, ns, 3.5)
    lk = xp.where(ok, _lgamma_ratio(nns - kk + 1, kk) - _lgamma(kk + 1), 0.0)
    lnk = xp.where(ok, _lgamma_ratio(nn - kk + 1, kk) - _lgamma(kk + 1), 0.0)
    r = xp.where(sym, wrap(bind(stop_gradient_p, r._v)) * unit(lnk), r * unit(lk))
    out = xp.where(small, r, g)
    return xp.where((n < 0) & (nx == n), xp.nan, out)


# ------------------------------------------------------ regularized incomplete gamma and inverses
def gammainc(a, x, /):
    """Regularized lower incomplete gamma P(a, x) (scipy.special.gammainc); differentiable in a and x
    (the second derivative in a is not implemented)."""
    (a, x), _ = raw_floats("gammainc", ("a", "x"), (a, x))
    return wrap(G.igamma(a, x))


def gammaincc(a, x, /):
    """Regularized upper incomplete gamma Q(a, x) = 1 - P(a, x) (scipy.special.gammaincc)."""
    (a, x), _ = raw_floats("gammaincc", ("a", "x"), (a, x))
    return wrap(G.igammac(a, x))


def gammaincinv(a, y, /):
    """x with gammainc(a, x) = y (scipy.special.gammaincinv): 0 at y = 0, inf at y = 1."""
    (a, y), _ = raw_floats("gammaincinv", ("a", "y"), (a, y))
    return wrap(G.igammainv(a, y))


def gammainccinv(a, y, /):
    """x with gammaincc(a, x) = y (scipy.special.gammainccinv): inf at y = 0, 0 at y = 1."""
    (a, y), _ = raw_floats("gammainccinv", ("a", "y"), (a, y))
    return wrap(G.igammacinv(a, y))


# ----------------------------------------------- chi-square, gamma and Poisson distributions
def chdtr(v, x, /):
    """Chi-square CDF with v degrees of freedom: gammainc(v/2, x/2) (scipy.special.chdtr)."""
    (v, x), _ = raw_floats("chdtr", ("v", "x"), (v, x))
    half = lambda t: G.mul(t, full_like_scalar(t, 0.5))
    return wrap(G.igamma(half(v), half(x)))


def chdtrc(v, x, /):
    """Chi-square survival function: gammaincc(v/2, x/2) (scipy.special.chdtrc)."""
    (v, x), _ = raw_floats("chdtrc", ("v", "x"), (v, x))
    half = lambda t: G.mul(t, full_like_scalar(t, 0.5))
    return wrap(G.igammac(half(v), half(x)))


def chdtri(v, p, /):
    """x with chdtrc(v, x) = p: 2 gammainccinv(v/2, p) (scipy.special.chdtri)."""
    (v, p), _ = raw_floats("chdtri", ("v", "p"), (v, p))
    x = G.igammacinv(G.mul(v, full_like_scalar(v, 0.5)), p)
    return wrap(G.mul(x, full_like_scalar(x, 2)))


def _gdist(fname, a, b, x, upper):
    a, b, x, _ = _floats(fname, ("a", "b", "x"), a, b, x)
    xp = _xp()
    ax = a * x
    val = wrap((G.igammac if upper else G.igamma)(b._v, ax._v))
    return xp.where(x < 0, xp.nan, val)


def gdtr(a, b, x, /):
    """Gamma distribution CDF with rate a and shape b: gammainc(b, a x); NaN for x < 0 (scipy.special.gdtr)."""
    return _gdist("gdtr", a, b, x, False)


def gdtrc(a, b, x, /):
    """Gamma distribution survival function: gammaincc(b, a x); NaN for x < 0 (scipy.special.gdtrc)."""
    return _gdist("gdtrc", a, b, x, True)


def _pdist(fname, k, m, upper):
    k, m, _ = _floats(fname, ("k", "m"), k, m)
    xp = _xp()
    kk = xp.floor(k) + 1
    val = wrap((G.igamma if upper else G.igammac)(kk._v, m._v))
    val = xp.where(m == 0, 0.0 if upper else 1.0, val)
    return xp.where((k < 0) | (m < 0), xp.nan, val)


def pdtr(k, m, /):
    """Poisson CDF: P(N <= k) for mean m, gammaincc(floor(k) + 1, m); NaN for k < 0 or m < 0, 1 at m = 0
    (scipy.special.pdtr)."""
    return _pdist("pdtr", k, m, False)


def pdtrc(k, m, /):
    """Poisson survival function P(N > k): gammainc(floor(k) + 1, m) (scipy.special.pdtrc)."""
    return _pdist("pdtrc", k, m, True)


def pdtri(k, y, /):
    """m with pdtr(k, m) = y: gammainccinv(k + 1, y), k truncated toward zero to a C int as scipy does
    (an integer k keeps its low 32 bits; NaN for k < 0 after that or a float k >= 2**31, and for y
    outside [0, 1)) (scipy.special.pdtri)."""
    from ._beta import _c_int
    k, y, _ = _floats("pdtri", ("k", "y"), _c_int("pdtri", "k", k), y)   # integer k: low 32 bits, as scipy's C cast
    xp = _xp()
    kt = xp.trunc(k)
    val = wrap(G.igammacinv((kt + 1)._v, y._v))
    bad = ~((kt >= 0) & (k < 2.0 ** 31 - 1) & (y >= 0) & (y < 1))   # C int k + 1 overflows at 2**31 - 1
    return xp.where(bad, xp.nan, val)
