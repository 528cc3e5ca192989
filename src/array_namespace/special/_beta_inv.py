"""Inverses of the incomplete beta function and of the distributions built on it (xp.special).

I_x(a, b) = y is solved for x by Halley steps from Numerical-Recipes-style starting values (a
normal approximation for a, b >= 1, the power-law tails otherwise), on the side y <= 1/2 of the
symmetry I_x(a, b) = 1 - I_{1-x}(b, a) so that neither y nor x loses digits to a complement.
The iteration runs under a while_loop, which has no reverse mode; the solver is therefore a
`custom_jvp` whose tangent is the implicit-function one: dx = (dy - I_a da - I_b db) / I_x, with
I_a, I_b from the differentiated continued fraction in _beta.py. stdtrit, fdtri, bdtri and nbdtri
are compositions of it, so they differentiate through it. float32 arguments are solved in float64 and the root
rounded, as scipy's float32 loops do: a small parameter amplifies the solver's rounding (t ~ q^(-1/df): float32
stdtrit(1.6e-4, 0.502) was 1.3e5 ulps off in float32 arithmetic).
"""
from __future__ import annotations

import numpy as np

from transforms import custom_jvp, stop_gradient, while_loop

from .._staged import bucketed
from ._beta import (_INT_LIMIT, _SMALL_P, _betaln_pos, _c_int, _eager_none, _finfo, _floats, _ibeta_parts,
                    _lgamma_shift, _xlogy, _xp)
from ._promote import in_float64

__all__ = ["betaincinv", "stdtrit", "fdtri", "bdtri", "nbdtri"]


def _log_pb(p, q):
    """log(p B(p, q)) for p, q > 0: the tail constant of I_x(p, q) ~ x^p / (p B(p, q)). For a small p, log p and
    log B(p, q) ~ -log p cancel to ~p, so there it is -_lgamma_shift(p, q) (fdtri(5, 1e-10, 1e-8) lost 8.6e-6 of
    its digits to log p + betaln)."""
    xp = _xp()
    small = p <= _SMALL_P
    ps = xp.where(small, p, _SMALL_P)
    return xp.where(small, -_lgamma_shift(ps, q), xp.log(p) + _betaln_pos(p, q))


def _start(p, q, y):
    """Starting value for I_x(p, q) = y (0 < y <= 1/2, p, q > 0)."""
    xp = _xp()
    # a, b >= 1: normal approximation of the quantile, mapped through a/(a + b e^(2w))
    t = xp.sqrt(-2 * xp.log(y))
    z = -((2.30753 + t * 0.27061) / (1 + t * (0.99229 + t * 0.04481)) - t)
    al = (z * z - 3) / 6
    h = 2 / (1 / (2 * p - 1) + 1 / (2 * q - 1))
    w = z * xp.sqrt(xp.maximum(al + h, 0.0)) / h - (1 / (2 * q - 1) - 1 / (2 * p - 1)) * (al + 5 / 6 - 2 / (3 * h))
    x_big = p / (p + q * xp.exp(2 * w))
    # otherwise: the tails x^p / (p B) and (1-x)^q / (q B) of the density
    lp, lq = xp.log(p / (p + q)), xp.log(q / (p + q))
    tp, tq = xp.exp(p * lp) / p, xp.exp(q * lq) / q
    s = tp + tq
    x_small = xp.where(y < tp / s, (p * s * y) ** (1 / p), 1 - (q * s * (1 - y)) ** (1 / q))
    x0 = xp.where((p >= 1) & (q >= 1), x_big, x_small)
    fi = np.finfo(np.float32 if y.dtype == xp.float32 else np.float64)
    return xp.clip(x0, float(fi.tiny), 1 - float(fi.epsneg))


def _solve(p, q, y):
    """x with I_x(p, q) = y for valid p, q > 0 and 0 < y <= 1/2, by Halley's method."""
    xp = _xp()
    fi = np.finfo(np.float32 if y.dtype == xp.float32 else np.float64)
    eps = float(fi.eps)
    bl = _betaln_pos(p, q)
    maxit = 40

    def body(s):
        i, x, done, hi = s
        ib = _ibeta_parts(p, q, x, 1 - x, derivs=False)[0]
        # Halley's method on g = log(I_x / y) as a function of log x: in the lower tail I_x is near a power of x,
        # on which it steps exactly, where steps on I_x - y in x crawl or halve (betaincinv(100, 1, 1e-20) stopped
        # after 40 of them at 0.043, not 0.631); near the root the steps are Halley's on I_x - y in x
        g = xp.log(ib / y)
        xv = x * xp.exp(_xlogy(p - 1, xp.log(x)) + _xlogy(q - 1, xp.log1p(-x)) - bl) / ib   # dg / dlog x
        u = g / xv
        corr = xp.minimum(u * (p - (q - 1) * x / (1 - x) - xv), 1.0)
        step = u / (1 - 0.5 * corr)
        step = xp.where(xp.isfinite(step), step, 0.0)
        xn = x * xp.exp(-step)
        xn = xp.where(xn <= 0, 0.5 * x, xp.where(xn >= 1, 0.5 * (x + 1), xn))
        # I_x underflowed (flushed below the smallest normal): x is too small, by how much unknown -- halfway in
        # logs to the smallest x seen above the root (hi; 1 at first). Where y is itself near the smallest normal,
        # a step ending an ulp below the root underflows: a jump to sqrt(x) there cycled until maxit
        # (betaincinv(3, 3, 2.2250738585072014e-308) was 3.6e-52 under jit, not 1.9e-103)
        hi = xp.where(ib > y, xp.minimum(hi, x), hi)
        xn = xp.where(ib == 0, xp.sqrt(x) * xp.sqrt(hi), xn)
        conv = (xp.abs(xn - x) <= 4 * eps * xn) | (g == 0)
        # I_x itself failed (its fraction out of terms, parameters beyond ~1e11): nan, not a step of 0
        fail = xp.isnan(ib)
        xn = xp.where(fail, xp.nan, xn)
        return i + 1, xp.where(done, x, xn), done | conv | fail, hi

    init = (xp.asarray(0), _start(p, q, y), xp.zeros(y.shape, dtype=xp.bool), xp.ones_like(y))
    return while_loop(lambda s: (s[0] < maxit) & xp.any(~s[2]), body, init)[1]


def _inv_edges(a, b, y, yc):
    xp = _xp()
    nan = xp.isnan(a) | xp.isnan(b) | xp.isnan(y) | (y < 0) | (y > 1) | (a <= 0) | (b <= 0)
    nan = nan | (xp.isinf(a) & xp.isinf(b))
    x0 = (y == 0) | xp.isinf(b)
    x1 = (yc == 0) | xp.isinf(a)
    val = xp.where(nan, xp.nan, xp.where(x0, 0.0, 1.0))
    return ~(nan | x0 | x1), val


def _ibinv_value(a, b, y, yc):
    """(x, 1 - x) with I_x(a, b) = y; yc = 1 - y supplied by the caller."""
    xp = _xp()
    valid, edge = _inv_edges(a, b, y, yc)
    sa, sb = xp.where(valid, a, 1.0), xp.where(valid, b, 1.0)
    comp = yc < y
    p, q = xp.where(comp, sb, sa), xp.where(comp, sa, sb)
    r = xp.where(valid, xp.where(comp, yc, y), 0.5)
    s = _solve(p, q, r)
    x, xc = xp.where(comp, 1 - s, s), xp.where(comp, s, 1 - s)
    # 1 - s cancels where the wanted side is tiny (betaincinv(0.0123, 0.5, 0.6125) = 2.3e-17 came out 0):
    # solve those in their own tail, I_x(a, b) = y (or I_xc(b, a) = yc), whatever side y is on, and keep that
    # where its I is the nearer to the smaller of y, yc (the other side's may have lost its digits to 1 - y:
    # betaincinv(1e5, 0.5, 1e-20) = 0.99956 came out 1.1e-16 from yc = 1)
    lo, hi = valid & comp & (x < 1e-3), valid & ~comp & (xc < 1e-3)
    d = _solve(xp.where(lo, sa, xp.where(hi, sb, 1.0)), xp.where(lo, sb, xp.where(hi, sa, 1.0)),
               xp.where(lo, y, xp.where(hi, yc, 0.5)))
    x2, xc2 = xp.where(lo, d, 1 - d), xp.where(lo, 1 - d, d)
    i1, i2 = (_ibeta_parts(sa, sb, xp.where(lo | hi, u, 0.5), xp.where(lo | hi, v, 0.5), derivs=False)
              for u, v in ((x, xc), (x2, xc2)))
    miss1, miss2 = (xp.where(comp, xp.abs(i[1] - yc), xp.abs(i[0] - y)) for i in (i1, i2))
    take = (lo | hi) & (miss2 < miss1)
    x, xc = xp.where(take, x2, x), xp.where(take, xc2, xc)
    return xp.where(valid, x, edge), xp.where(valid, xc, 1 - edge)


_ibinv = custom_jvp(_ibinv_value)


@_ibinv.defjvp
def _ibinv_jvp(primals, tangents):
    xp = _xp()
    a, b, y, yc = primals
    ta, tb, ty, tyc = tangents
    x, xc = _ibinv(a, b, y, yc)
    valid, _ = _inv_edges(a, b, y, yc)
    sa, sb = xp.where(valid, a, 1.0), xp.where(valid, b, 1.0)
    sx, sxc = xp.where(valid, x, 0.5), xp.where(valid, xc, 0.5)
    _, _, i_a, i_b = _ibeta_parts(sa, sb, sx, sxc, derivs=True)
    i_x = xp.exp(_xlogy(sa - 1, xp.log(sx)) + _xlogy(sb - 1, xp.log(sxc)) - _betaln_pos(sa, sb))
    # y and yc move oppositely: dy = (ty - tyc) / 2
    t = ((ty - tyc) * 0.5 - i_a * ta - i_b * tb) / i_x
    t = xp.where(valid, t, 0.0)
    return (x, xc), (t, -t)


def _ibinv_call(a, b, y, yc):
    """_ibinv on Arrays of one shape; eagerly staged once per power-of-two size bucket, as betainc's _ibeta: its
    while_loops were traced again on every eager call (stdtrit of 6 values: ~70 ms a call)."""
    return bucketed(_ibinv, (a, b, y, yc), (1.0, 1.0, 0.5, 0.5), first=_ibinv_value)


def betaincinv(a, b, y, /):
    """x with I_x(a, b) = y (scipy.special.betaincinv)."""
    (a, b, y), _ = _floats("betaincinv", ("a", "b", "y"), (a, b, y))
    return in_float64(lambda a, b, y: _ibinv_call(a, b, y, 1 - y)[0], (a, b, y))


def _ndtri(p):
    from ._erf_bessel import ndtri
    return ndtri(p)


def stdtrit(df, p, /):
    """The t with stdtr(df, t) = p (scipy.special.stdtrit); -inf at p = 0 (scipy gives +inf there)."""
    (df, p), _ = _floats("stdtrit", ("df", "p"), (df, p))
    return in_float64(_stdtrit, (df, p))


def _stdtrit(df, p):
    xp = _xp()
    # two-sided tail probability q = 2 min(p, 1-p): I_x(df/2, 1/2) = q with x = df/(df + t^2)
    q = 2 * xp.minimum(p, 1 - p)
    qc = xp.abs(1 - 2 * p)              # exact for p in [1/4, 3/4]
    half = xp.full_like(df, 0.5)
    # a small df puts x far into the tail (t ~ q^(-1/df)), where I_x(df/2, 1/2) = x^(df/2) / (df/2 B(df/2, 1/2))
    # to within x, so log x is explicit: taken wherever x < eps/4 (stdtrit(0.001, 0.3) = -1.1e220, x below the
    # smallest normal, came out -inf from the solver; stdtrit(1e-4, 0.49), x = e^-404, lost 6e-12 in it: a
    # relative error r of I_x is r / (df/2) in x)
    pa = xp.where(df > 0, df * 0.5, 1.0)
    bl = _betaln_pos(pa, half)
    lx = (xp.log(q) + _log_pb(pa, half)) / pa
    under = lx < float(np.log(_finfo(df).eps / 4))
    ds = xp.where(under, 1.0, df)   # (the solver's x would be 0 there, its derivatives NaN)
    x, xc = _ibinv_call(ds * 0.5, half, q, qc)
    t = xp.sqrt(ds * (xc / x))
    t = xp.where(under, xp.exp(0.5 * (xp.log(df) - lx)), t)
    # df >= 1e4: the solver's fraction loses ~eps df there (stdtrit(1e10, 0.01) was 1.5e-8 off, at 1e19 0.0); the
    # root is found on stdtr's expansion instead, which holds for every root whose tail is a normal number there
    large = (df >= 1e4) & (q > 0) & (q < 1)
    if not _eager_none(large):
        dl = xp.where(large, df, 1e4)
        t = xp.where(large, _large_df_quantile(dl, xp.where(large, q * 0.5, 0.25), -0.5 * xp.log(dl) - bl), t)
    t = xp.where(p < 0.5, -t, t)
    t = xp.where(p == 0.5, 0.0, t)
    normal = df >= 1e20   # (as stdtr: the normal distribution to double precision)
    t = xp.where(normal, _ndtri(xp.where(normal, p, 0.5)), t)
    return xp.where((df <= 0) | xp.isnan(df), xp.nan, t)


def _large_df_quantile(df, q, log_front):
    """s > 0 with stdtr(df, -s) = q < 1/2 for df >= 1e4: Newton on log stdtr (nearly quadratic in s in the tails)
    from Cornish and Fisher's expansion about the normal quantile, stdtr by _beta_asym's expansion; log_front is
    log(1 / (sqrt(df) B(df/2, 1/2))), the log of the density's constant."""
    xp = _xp()
    from ._beta_asym import bgrat
    from ._erf_bessel import erfc
    z = -_ndtri(q)
    s = z + (z ** 3 + z) / (4 * df) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * df * df)
    lq = xp.log(q)
    for _ in range(2):
        u = xp.log1p(s * s / df)
        f = 0.5 * bgrat(df * 0.5, 0.5, -u, lambda w: erfc(xp.sqrt(w)))
        dens = xp.exp(log_front - 0.5 * (df + 1) * u)
        s = s + (xp.log(f) - lq) * (f / dens)   # (not (...) * f: below 1e-300 that product is subnormal, flushed)
    return s


def fdtri(dfn, dfd, p, /):
    """The x with fdtr(dfn, dfd, x) = p (scipy.special.fdtri)."""
    (dfn, dfd, p), _ = _floats("fdtri", ("dfn", "dfd", "p"), (dfn, dfd, p))
    return in_float64(_fdtri, (dfn, dfd, p))


def _fdtri(dfn, dfd, p):
    xp = _xp()
    # a small dfd puts 1 - w far into the tail, where 1 - p = I_(1-w)(b, a) (b = dfd/2, a = dfn/2) is
    # (1-w)^b / (b B(b, a)) to within |1 - a| b (1 - w): log(1 - w) is explicit, taken wherever (|1 - a| + 1) (1 - w)
    # < eps/4 (fdtri(1, 0.001, 0.3) = 1.5e306, 1 - w below the smallest normal, came out inf from the solver, and
    # fdtri(5, 1e-10, 1e-8) lost 8.6e-6 there: it solves for the rounded 1 - p, whose error is amplified by 1/b)
    a = xp.where(dfn > 0, dfn * 0.5, 1.0)
    b = xp.where(dfd > 0, dfd * 0.5, 1.0)
    lwc = (xp.log1p(-p) + _log_pb(b, a)) / b
    under = lwc + xp.log1p(xp.abs(1 - a)) < float(np.log(_finfo(p).eps / 4))
    # likewise a small p puts w far into its lower tail, where p = I_w(a, b) is w^a / (a B(a, b)) to within |1 - b| a w
    # (fdtri(0.026, 14.9, 8.9e-5) = 1.27e-305 came out 0: the solver's w = 2.2e-309 is below the smallest normal)
    lw = (xp.log(p) + _log_pb(a, b)) / a
    low = ~under & (lw + xp.log1p(xp.abs(1 - b)) < float(np.log(_finfo(p).eps / 4)))
    ds, ps = xp.where(under, 1.0, dfd), xp.where(low, 0.5, p)   # (the solver's 1 - w or w would be 0 there)
    w, wc = _ibinv_call(dfn * 0.5, ds * 0.5, ps, 1 - ps)
    bad = (dfn <= 0) | (dfd <= 0) | xp.isinf(dfn) | xp.isinf(dfd)
    # nearer in, a small b amplifies the same rounding (fdtri(2, 1e-8, 1e-7) was 1e-8 off): the solver's 1 - w is
    # polished by Newton steps on log(1 - I_z(b, a)) = log p in log z, whose 1 - I is computed, not 1 - p rounded;
    # its derivatives stay the solver's (the root moved by ~1e-8 of itself)
    polish = ~under & ~bad & (b <= _SMALL_P) & (wc > 0) & (wc <= 0.5) & (p > 0)
    if not _eager_none(polish):
        bs, as_ = xp.where(polish, b, _SMALL_P), xp.where(polish, a, 1.0)
        pp, z = xp.where(polish, p, 0.5), xp.where(polish, wc, 0.25)
        bl = _betaln_pos(bs, as_)
        for _ in range(2):   # (quadratic: from the solver's ~1e-8, one step is enough; the second checks it)
            lz = xp.log(z)
            c = _ibeta_parts(bs, as_, z, 1 - z, derivs=False)[1]
            dc = -xp.exp(bs * lz + (as_ - 1) * xp.log1p(-z) - bl)   # d(1 - I_z) / d log z
            z = xp.exp(lz - (xp.log(c) - xp.log(pp)) * (c / dc))
        wc = wc + stop_gradient(xp.where(polish, z, wc) - wc)
        w = xp.where(polish, 1 - wc, w)   # (1 - wc is exact for wc <= 1/2; elsewhere w is the solver's own)
    x = xp.where(under, xp.exp(xp.log(dfd / dfn) - lwc), ds * w / (dfn * wc))
    x = xp.where(low, xp.exp(xp.log(dfd / dfn) + lw), x)
    return xp.where(bad, xp.nan, x)


def bdtri(k, n, y, /):
    """The p with bdtr(k, n, p) = y (scipy.special.bdtri)."""
    n = _c_int("bdtri", "n", n)
    (k, n, y), _ = _floats("bdtri", ("k", "n", "y"), (k, n, y))
    return in_float64(_bdtri, (k, n, y))


def _bdtri(k, n, y):
    xp = _xp()
    fk, n = xp.floor(k), xp.trunc(n)
    # I_{1-p}(n - k, k + 1) = y
    _, p = _ibinv_call(n - fk, fk + 1, y, 1 - y)
    bad = xp.isnan(k) | xp.isnan(n) | xp.isinf(k) | (fk < 0) | (n <= fk) | (n >= _INT_LIMIT)
    return xp.where(bad, xp.nan, p)


def nbdtri(k, n, y, /):
    """The p with nbdtr(k, n, p) = y (scipy.special.nbdtri)."""
    k, n = _c_int("nbdtri", "k", k), _c_int("nbdtri", "n", n)
    (k, n, y), _ = _floats("nbdtri", ("k", "n", "y"), (k, n, y))
    return in_float64(_nbdtri, (k, n, y))


def _nbdtri(k, n, y):
    xp = _xp()
    k, n = xp.trunc(k), xp.trunc(n)
    p, _ = _ibinv_call(n, k + 1, y, 1 - y)
    bad = (xp.isnan(k) | xp.isnan(n) | xp.isinf(k) | xp.isinf(n) | (k < 0) | (n <= 0)
           | (n >= _INT_LIMIT) | (k >= _INT_LIMIT - 1))   # C int k + 1 overflows
    return xp.where(bad, xp.nan, p)
