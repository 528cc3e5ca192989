"""Hypergeometric-type functions of xp.special: hyp1f1 (Kummer's M) and lpmv (associated Legendre
P_v^m with integer order m and real degree v), scipy.special's names, arguments and edge values.

Like the beta family (_beta.py, whose promotion and eager-bucketing helpers this module reuses)
everything is a composition of namespace functions -- power series summed under a while_loop that
stops when every element has converged -- so it runs under jit and vmap. The functions are
`custom_jvp`s: d/dx is analytic (a/b M(a+1, b+1, x); the m -> m+1 recurrence for P_v^m), and the
derivatives with respect to the real parameters (a, b of hyp1f1; v of lpmv) are forward-mode
derivatives of the same series, computed as primal values inside the rule, so reverse mode never
has to transpose a loop. Series that terminate (a non-positive integer a, polynomial P_n^m) keep
running on a shadow term with the zero factor replaced, so their parameter derivatives (which do
not terminate) are summed to convergence too.

float32 arguments are computed in float64 and the result rounded (as scipy's float32 loops do).

hyp1f1: for x < 0 Kummer's transformation M(a, b, x) = e^x M(b - a, b, -x) makes the series' terms
eventually all one sign; for |x| large against the parameters the asymptotic expansion (both
exponential scales, the subdominant one with its Stokes-line factor cos(pi a)) is summed instead;
where the series still alternates (a < 0 after the transformation) the three-term recurrence in a,
run down from a's fractional part with a condition estimate, replaces it when its error bound is
the smaller. Where both lose more than ~7 digits (|a| and |x| both large) the result is nan.
lpmv: degrees above m + 1 by the three-term recurrence in the degree from base degrees in [m, m + 2);
the base values by the Gauss series in (1 - x)/2 for x >= 0 (and for m = 0 up to x < 3, where scipy's series
also converges); for x < 0 the reflection P_n^m(-x) = (-1)^(n+m) P_n^m(x) at integer degree, and
the logarithmic expansion about x = -1 (the degenerate c - a - b = -m case of 2F1's connection
formula) at non-integer degree.
"""
from __future__ import annotations

import numbers

import numpy as np

from transforms import custom_jvp, jvp, while_loop

from .._staged import bucketed
from ._beta import _finfo, _floats, _two_prod, _xp
from ._gamma import _sinpi
from ._promote import in_float64

__all__ = ["hyp1f1", "lpmv"]


# --------------------------------------------------------------------------- helpers
def _is64(x):
    return x.dtype == _xp().float64


def _nonpos_int(v):
    xp = _xp()
    return (v <= 0) & (xp.floor(v) == v)


def _exact_add(u, v):
    """(u + v rounded, whether that is exact): Knuth's two-sum error is zero."""
    s = u + v
    bb = s - u
    return s, ((u - (s - bb)) + (v - bb)) == 0


def _exact_mul(u, v):
    """(u v rounded, whether that is exact): Dekker's product error is zero."""
    pr, err = _two_prod(u, v)
    return pr, err == 0


def _ratio_sum(num, den, z, renorm, with_err=False, no_tail=None):
    """sum_n t_n with t_0 = 1, t_{n+1} = t_n * prod(p + n for p in num) z / (prod(q + n for q in den) (n+1)).
    A zero factor ends the primal terms but not a shadow term (the zero factor replaced by 1), whose
    convergence is waited for, so forward derivatives through the loop are complete (but where `no_tail`:
    the caller takes no parameter derivative there, and the sum ends with its terms). With `renorm`
    the sum is kept below R by rescaling: returns (S, k) with the value S * R**k; else (S, 0).
    A terminating series whose every operation up to its zero factor was exact (checked by error-free
    transformations: integers and dyadic rationals, hyp1f1(9, 8, -8) = e^-8 M(-1, 8, 8) = 0) is exact,
    however much its terms cancelled: it is kept, exact zero included, where a rounded sum that
    cancels is nan."""
    xp = _xp()
    eps = float(_finfo(z).eps)
    big = 2.0 ** 500 if _is64(z) else 2.0 ** 60
    maxit = 6000 if _is64(z) else 2000
    one = xp.ones_like(z)
    fb = xp.zeros(z.shape, dtype=xp.bool)
    init = (xp.asarray(0, dtype=z.dtype), one, one, one, one, xp.zeros_like(z), fb, one, ~fb, fb)

    def body(s):
        n, t, S, q, Q, k, done, P, exact, ended = s
        nf = one
        nq = 1.0
        ok = ~fb
        for p in num:
            f, e1 = _exact_add(p, n)
            nf, e2 = _exact_mul(nf, f)
            ok = ok & e1 & e2
            nq = nq * xp.where(f == 0, 1.0, f)
        dd = one
        for c in den:
            g, e1 = _exact_add(c, n)
            dd, e2 = _exact_mul(dd, g)
            ok = ok & e1 & e2
        # a zero numerator factor meeting a zero denominator one (scipy's terminating series for a
        # non-positive integer a >= b): the term is 0, and the shadow stops too
        pole = dd == 0
        dd = xp.where(pole, 1.0, dd)
        top, e1 = _exact_mul(nf, z)
        bot, e2 = _exact_mul(dd, n + 1)
        r = top / bot
        back, e3 = _exact_mul(r, bot)
        tr, e4 = _exact_mul(t, r)
        _, e5 = _exact_add(S, tr)
        ok = ok & e1 & e2 & e3 & (back == top) & e4 & e5
        # exact while every step before the series ended was; ended by a zero factor (not underflow)
        live = (t != 0) & ~ended
        exact_n = exact & (~live | ok)
        ended_n = ended | (live & (nf == 0))
        rq = xp.where(pole, 0.0, xp.abs(nq * z / (dd * (n + 1))))
        tn, Sn, qn = t * r, S + t * r, q * rq
        Qn, Pn = Q + qn, P + xp.abs(t * r)
        kn = k
        if renorm:
            over = xp.abs(Sn) > big
            sc = xp.where(over, 1.0 / big, 1.0)
            tn, Sn, qn, Qn, Pn = tn * sc, Sn * sc, qn * sc, Qn * sc, Pn * sc
            kn = k + xp.where(over, 1.0, 0.0)
        # converged when the (shadow) terms are negligible and decrease from here on: past every
        # sign change of the factors and with the next ratio below 1
        m1 = n + 1
        mono = xp.ones(z.shape, dtype=xp.bool)
        nxt = 1.0
        for p in num:
            mono = mono & (p + m1 >= 0)
            nxt = nxt * xp.abs(xp.where(p + m1 == 0, 1.0, p + m1))
        dn = 1.0
        for c in den:
            mono = mono & (c + m1 > 0)
            dn = dn * (c + m1)
        mono = mono & (nxt * xp.abs(z) < dn * (m1 + 1))
        # a terminated series with |z| >= 1 has no convergent shadow: its value is exact, and
        # callers give no parameter derivative there
        conv = (xp.abs(tn) <= eps * xp.abs(Sn)) & (qn <= eps * Qn) & mono
        if len(num) > len(den):    # 2F1: the shadow's ratio tends to z
            conv = conv | ((t == 0) & (xp.abs(z) >= 1))
        if no_tail is not None:
            conv = conv | (no_tail & ended_n)
        keep = lambda old, new: xp.where(done, old, new)  # noqa: E731
        return (n + 1, keep(t, tn), keep(S, Sn), keep(q, qn), keep(Q, Qn), keep(k, kn),
                done | conv | xp.isnan(Sn), keep(P, Pn), keep(exact, exact_n), keep(ended, ended_n))

    out = while_loop(lambda s: (s[0] < maxit) & xp.any(~s[6]), body, init)
    # not converged within maxit, or cancelled below ~7 (float32: ~3) significant digits (the
    # rounding error of a sum is ~eps sum |t_n|) unless exact: nan, never a truncated or cancelled sum
    exact = out[8] & out[9]
    lost = (eps * out[7] > (1e-7 if _is64(z) else 1e-3) * xp.abs(out[2])) & ~exact
    S = xp.where(out[6] & ~lost, out[2], xp.nan)
    if with_err:     # and the relative rounding-error bound eps sum |t_n| / |S| (0 where exact)
        return S, out[5], float(np.log(big)), xp.where(exact, 0.0, eps * out[7] / xp.abs(out[2]))
    return S, out[5], float(np.log(big))


# --------------------------------------------------------------------------- hyp1f1
def _rgamma_parts(a):
    """1/Gamma(a) = f * exp(g): for a < 1/2 by reflection, Gamma(1 - a) sin(pi a) / pi, so that it is a
    smooth zero at the poles (its derivative there, (-1)^n n!, is what the parameter derivatives need)."""
    xp = _xp()
    from ._gamma import gammaln
    small = a < 0.5
    g = xp.where(small, gammaln(xp.where(small, 1 - a, 1.5)), -gammaln(xp.where(small, 1.5, a)))
    return xp.where(small, _sinpi(a) / np.pi, 1.0), g


def _asym_sums(ap, b, z):
    """The two asymptotic sums of M(ap, b, z), z large and positive: A = sum (b-ap)_s (1-ap)_s / s! z^-s,
    B = sum (ap)_s (ap-b+1)_s / s! (-z)^-s. Each runs on a shadow term (zero factors replaced by 1)
    until the shadow is below eps or starts to grow (no term is added from there), so a sum that
    terminates still gets its parameter derivative summed."""
    xp = _xp()
    eps = float(_finfo(z).eps)
    one = xp.ones_like(z)
    fb = xp.zeros(z.shape, dtype=xp.bool)
    init = (xp.asarray(0, dtype=z.dtype), one, one, one, one, one, one, one, one, fb, fb)

    def nz(f):
        return xp.abs(xp.where(f == 0, 1.0, f))

    def body(s):
        n, u, A, uq, QA, w, B, wq, QB, da, db = s
        f1, f2, g1, g2 = b - ap + n, 1 - ap + n, ap + n, ap - b + 1 + n
        un = u * f1 * f2 / ((n + 1) * z)
        wn = -w * g1 * g2 / ((n + 1) * z)
        uqn = uq * nz(f1) * nz(f2) / ((n + 1) * z)
        wqn = wq * nz(g1) * nz(g2) / ((n + 1) * z)
        ga, gb = uqn > uq, wqn > wq                   # smallest term passed: stop without adding
        ca = ga | (uqn <= eps * QA)
        cb = gb | (wqn <= eps * QB)
        sa, sb = da | ga, db | gb
        keep = lambda d, old, new: xp.where(d, old, new)  # noqa: E731
        return (n + 1, keep(da, u, un), keep(sa, A, A + un), keep(da, uq, uqn), keep(sa, QA, QA + uqn),
                keep(db, w, wn), keep(sb, B, B + wn), keep(db, wq, wqn), keep(sb, QB, QB + wqn), da | ca, db | cb)

    out = while_loop(lambda s: (s[0] < 400) & xp.any(~(s[9] & s[10])), body, init)
    return out[2], out[6]


_REC_MAX = 20000


def _rec_down(a0, b, z, j, m0, m1):
    """M(a0 - j, b, z) from M(a0) = m0, M(a0 + 1) = m1 by the recurrence in a (DLMF 13.3.1)
    (b - a) M(a - 1) = (b - 2a - z) M(a) + a M(a + 1), run downwards: for a < 0 with b/2 - a past z/4
    the solutions oscillate and the recurrence is stable, where the series cancels. Returns
    (M scaled, log of its scale, condition): the two fundamental solutions started at (1, 0) and
    (0, 1) run alongside, so |m0 F0| + |m1 F1| against |M| measures how much the start's (and each
    step's) rounding is amplified."""
    xp = _xp()
    zero, one = xp.zeros_like(z), xp.ones_like(z)
    init = (xp.asarray(0, dtype=z.dtype), a0, m0, m1, one, zero, zero, one, zero)

    def body(s):
        i, a, mc, mn, fc, fn, gc, gn, lg = s
        act = i < j
        c1, c2 = (b - 2 * a - z) / (b - a), a / (b - a)
        mc2, fc2, gc2 = c1 * mc + c2 * mn, c1 * fc + c2 * fn, c1 * gc + c2 * gn
        sc = xp.maximum(xp.abs(mc2), xp.abs(mc))
        resc = (sc > 2.0 ** 300) | ((sc < 2.0 ** -300) & (sc > 0))
        d = xp.where(resc, sc, 1.0)
        new = (a - 1, mc2 / d, mc / d, fc2 / d, fc / d, gc2 / d, gc / d, lg + xp.log(d))
        return (i + 1,) + tuple(xp.where(act, n_, o_) for n_, o_ in zip(new, s[1:]))

    out = while_loop(lambda s: (s[0] < _REC_MAX) & xp.any(s[0] < j), body, init)
    mc, fc, gc = out[2], out[4], out[6]
    cond = (xp.abs(m0 * fc) + xp.abs(m1 * gc)) / xp.abs(mc)
    return mc, out[8], cond


def _m_core(a, b, x):
    """M(a, b, x) for arguments away from scipy's edge cases (finite, b not a pole)."""
    xp = _xp()
    from ._gamma import gammaln
    kum = (x < 0) & ~_nonpos_int(a)
    ap = xp.where(kum, b - a, a)
    z = xp.where(kum, -x, x)         # >= 0 but for a terminating series (a a non-positive integer)
    bm = b - ap
    zmin = 50.0 if _is64(x) else 25.0
    asym = ((z >= zmin) & (xp.abs(bm * (1 - ap)) <= 0.25 * z)
            & (xp.abs(bm) + xp.abs(1 - ap) <= 0.5 * z) & (b > 0))
    # where the series alternates (ap < 0, z > 0) the recurrence in a from ap's fractional part down
    # is the fallback: the base values M(a0), M(a0 + 1), a0 in (-1, 0], are series of one sign
    cand = (ap <= -1) & (b > 0) & (z > 0) & ~asym & (-ap <= _REC_MAX)
    j = xp.where(cand, xp.floor(-ap), 0.0)
    a0 = xp.where(cand, ap + j, 1.0)
    # the power series: M(ap, b, z) (asymptotic elements get a trivial one) and the two base values,
    # stacked into one loop
    sa, sz = xp.where(asym, 1.0, ap), xp.where(asym, 0.0, z)
    zc = xp.where(cand, z, 0.0)
    S, k, lnr, err = _ratio_sum([xp.stack([sa, a0, a0 + 1])], [xp.stack([xp.where(asym, 1.0, b), b, b])],
                                xp.stack([sz, zc, zc]), True, with_err=True)
    xe = xp.where(kum, x, 0.0)
    scaled = xp.sign(S[0]) * xp.exp(xp.log(xp.abs(S[0])) + k[0] * lnr + xe)
    ser = xp.where(k[0] > 0, scaled, S[0] * xp.exp(xe))
    kmax = xp.maximum(k[1], k[2])
    m0 = S[1] * xp.exp((k[1] - kmax) * lnr)
    m1 = S[2] * xp.exp((k[2] - kmax) * lnr)
    mc, lg, cond = _rec_down(a0, xp.where(cand, b, 1.0), zc, j, m0, m1)
    rec = xp.sign(mc) * xp.exp(xp.log(xp.abs(mc)) + lg + kmax * lnr + xe)
    eps = float(_finfo(x).eps)
    rec_err = eps * cond * xp.sqrt(j + 1)
    rec = xp.where(rec_err <= 1e-7, rec, xp.nan)
    # the recurrence where the series is nan or its error bound is the larger
    ser = xp.where(cand & ~xp.isnan(rec) & (xp.isnan(ser) | (rec_err < err[0])), rec, ser)
    # asymptotic expansion (series elements get a harmless one):
    # M = Gamma(b)/Gamma(ap) e^z z^(ap-b) A + cos(pi ap) Gamma(b)/Gamma(b-ap) z^(-ap) B
    sap, sb, sz = xp.where(asym, ap, 0.5), xp.where(asym, b, 1.5), xp.where(asym, z, 100.0)
    A, B = _asym_sums(sap, sb, sz)
    lz, lgb = xp.log(sz), gammaln(sb)
    f1, g1 = _rgamma_parts(sap)
    f2, g2 = _rgamma_parts(sb - sap)
    p1 = f1 * xp.exp(lgb + g1 + (sap - sb) * lz + xp.where(kum, 0.0, sz)) * A
    p2 = _sinpi(sap + 0.5) * f2 * xp.exp(lgb + g2 - sap * lz - xp.where(kum, sz, 0.0)) * B
    return xp.where(asym, p1 + p2, ser)


def _m_edges(a, b, x):
    """(mask of scipy's special cases, their values)."""
    xp = _xp()
    nan = xp.isnan(a) | xp.isnan(b) | xp.isnan(x)
    bpole = _nonpos_int(b)
    apoly = (a < 0) & (xp.floor(a) == a) & (a >= b) & xp.isfinite(a)
    inf = bpole & ~apoly
    # a = 0 with x finite is left to the series (1, with its parameter derivatives)
    one = (((a == 0) & xp.isinf(x)) | (x == 0) | (b == xp.inf)) & ~inf
    infx = xp.isinf(x) & ~one & ~inf
    special = nan | inf | one | xp.isinf(a) | infx
    val = xp.where(one, 1.0, xp.where(inf | (infx & apoly) | (infx & _nonpos_int(a)), xp.inf, xp.nan))
    val = xp.where(nan, xp.nan, val)
    # a non-positive integer a >= b with b a pole: scipy sums the terminating series (not special)
    return special & ~(apoly & bpole & ~xp.isinf(x) & ~nan), val


def _m_impl(a, b, x):
    xp = _xp()
    special, val = _m_edges(a, b, x)
    sa, sb, sx = xp.where(special, 1.0, a), xp.where(special, 1.0, b), xp.where(special, 0.0, x)
    return xp.where(special, val, _m_core(sa, sb, sx))


@custom_jvp
def _m(a, b, x):
    return _m_impl(a, b, x)


@_m.defjvp
def _m_jvp(primals, tangents):
    xp = _xp()
    a, b, x = primals
    ta, tb, tx = tangents
    # M(a, b, x) and M(a+1, b+1, x) in one (stacked) evaluation, the two parameter derivatives in another
    both = _m(xp.stack([a, a + 1]), xp.stack([b, b + 1]), xp.stack([x, x]))
    out = both[0]
    # d/dx M(a, b, x) = a/b M(a+1, b+1, x); for a = -1 that is a/b (M(0, ., x) = 1 even where scipy's
    # edge rule would call b + 1 a pole)
    dx = xp.where(a == -1, a / b, a / b * both[1])
    dx = xp.where(a == 0, 0.0, dx)
    one, zero = xp.ones_like(a), xp.zeros_like(a)
    _, dab = jvp(_m_impl, (xp.stack([a, a]), xp.stack([b, b]), xp.stack([x, x])),
                 (xp.stack([one, zero]), xp.stack([zero, one]), xp.stack([zero, zero])))
    da, db = dab[0], dab[1]
    # where scipy's value is inf (b a pole) or x, a, b are infinite the parameter derivatives do not
    # exist (nan there; dx is inf or nan at those points anyway)
    bad = (_nonpos_int(b) & ~((a < 0) & (xp.floor(a) == a) & (a >= b))) | xp.isinf(x) | xp.isinf(a) | xp.isinf(b)
    da, db = xp.where(bad, xp.nan, da), xp.where(bad, xp.nan, db)
    return out, da * ta + db * tb + dx * tx


def hyp1f1(a, b, x, /):
    """Confluent hypergeometric function M(a, b, x) = 1F1(a; b; x) for real arguments
    (scipy.special.hyp1f1), differentiable in a, b and x."""
    (a, b, x), dt = _floats("hyp1f1", ("a", "b", "x"), (a, b, x))
    return in_float64(lambda *v: bucketed(_m, v, (1.0, 1.0, 0.0)), (a, b, x))


# --------------------------------------------------------------------------- lpmv
def _lpmv_pos(m, v, x, lower):
    """P_v^m(x) by the Gauss series in (1 - x)/2, m >= 0, v >= -1/2 (x >= 0; m = 0 also 1 < x < 3); where `lower`
    (an integer v < m), P_v^-m(x) = ((1 - x)/(1 + x))^(m/2) / m! 2F1(-v, v + 1; m + 1; (1 - x)/2) for -1 < x <= 1
    (P_v^m's Gamma ratio, 0 there, is not in it), the 2F1 by Pfaff's transformation ((1 + x)/2)^v
    2F1(-v, m - v; m + 1; (x - 1)/(x + 1)): v + 1 terms of one sign (the other form cancels), summed without the
    tail a v-derivative would need (_lpmv_jvp gives none there)."""
    xp = _xp()
    from ._gamma import poch, gammaln
    z = xp.where(lower, (x - 1) / (x + 1), (1 - x) * 0.5)
    F, _, _ = _ratio_sum([xp.where(lower, -v, m - v), m + xp.where(lower, -v, v + 1)], [m + 1], z, False,
                         no_tail=lower)
    # (-1)^m (1 - x^2)^(m/2) Gamma(v+m+1) / (Gamma(v-m+1) 2^m m!)
    pre = xp.exp(0.5 * m * xp.log1p(-x * x) - m * np.log(2.0) - gammaln(m + 1)) * poch(v - m + 1, 2 * m)
    pre = xp.where(m == 0, 1.0, xp.where(xp.abs(x) == 1, 0.0, pre))
    sign = 1.0 - 2.0 * (m % 2)
    low = xp.exp(0.5 * m * (xp.log1p(-x) - xp.log1p(x)) + v * (xp.log1p(x) - np.log(2.0)) - gammaln(m + 1))
    return xp.where(lower, low, sign * pre) * F


def _lpmv_log(m, v, x):
    """P_v^m(x) for -1 < x < 0 and non-integer v (m >= 0): the logarithmic expansion in w = (1 + x)/2
    (A&S 15.3.12 with a = m - v, b = m + v + 1, c = m + 1, simplified by the reflection formula)."""
    xp = _xp()
    from ._gamma import digamma, gammaln, poch
    w = (1 + x) * 0.5
    lw = xp.log(w)
    eps = float(_finfo(x).eps)
    s_pi = xp.sin(np.pi * v) / np.pi
    fb = xp.zeros(x.shape, dtype=xp.bool)
    one, zero = xp.ones_like(x), xp.zeros_like(x)
    c0 = xp.exp(-gammaln(m + 1))
    psi = (xp.full_like(x, -0.5772156649015329), digamma(m + 1), digamma(m - v), digamma(m + v + 1))
    g0 = lw - psi[0] - psi[1] + psi[2] + psi[3]
    init = (xp.asarray(0, dtype=x.dtype), one, xp.where(m >= 1, one, zero), c0, c0 * g0, psi, fb)

    def body(s):
        n, u, U, c, T, ps, done = s
        # finite sum: u_{n+1} = u_n (-v+n)(v+1+n) w / ((n+1)(1-m+n)), for n + 1 < m
        un = u * (n - v) * (v + 1 + n) * w / ((n + 1) * xp.where(n + 1 < m, 1 - m + n, 1.0))
        Un = xp.where(n + 1 < m, U + un, U)
        cn = c * (m - v + n) * (m + v + 1 + n) * w / ((n + 1) * (n + m + 1))
        psn = (ps[0] + 1 / (n + 1), ps[1] + 1 / (n + m + 1), ps[2] + 1 / (m - v + n), ps[3] + 1 / (m + v + 1 + n))
        term = cn * (lw - psn[0] - psn[1] + psn[2] + psn[3])
        Tn = T + term
        conv = (n + 1 >= m) & (xp.abs(term) <= eps * xp.abs(Tn)) & (n + 1 > v - m) & (xp.abs(cn) <= eps * xp.abs(c0))
        keep = lambda old, new: xp.where(done, old, new)  # noqa: E731
        return (n + 1, keep(u, un), keep(U, Un), keep(c, cn), keep(T, Tn), tuple(keep(o, q) for o, q in zip(ps, psn)),
                done | conv | xp.isnan(Tn))

    out = while_loop(lambda s: (s[0] < 3000) & xp.any(~s[6]), body, init)
    U, T = out[2], xp.where(out[6], out[4], xp.nan)
    # T1 = -((1-x)/(1+x))^(m/2) (m-1)! sin(pi v)/pi U  (m >= 1)
    t1 = -xp.exp(0.5 * m * (xp.log1p(-x) - xp.log1p(x)) + gammaln(xp.maximum(m, 1.0))) * s_pi * U
    t1 = xp.where(m >= 1, t1, 0.0)
    # T2 = (1-x^2)^(m/2) / 2^m Gamma(v+m+1)/Gamma(v-m+1) sin(pi v)/pi T
    t2 = xp.exp(0.5 * m * xp.log1p(-x * x) - m * np.log(2.0)) * poch(v - m + 1, 2 * m) * s_pi * T
    return t1 + t2


def _lpmv_base(sm, sv, x, ok, refl, use_log, lower):
    """P_sv^sm(x) by a series: the Gauss series (at -x, with the parity sign, where `refl`; P_sv^-sm where `lower`),
    or the logarithmic expansion about x = -1 (where `use_log`)."""
    xp = _xp()
    xpos = xp.where(ok & ~use_log, xp.where(refl, -x, x), 0.5)
    p_pos = _lpmv_pos(sm, sv, xpos, lower)
    p_pos = xp.where(refl & (((sv + sm) % 2) == 1), -p_pos, p_pos)
    xlog = xp.where(ok & use_log, x, -0.5)
    svl = xp.where(ok & use_log, sv, 0.5)
    p_log = _lpmv_log(sm, svl, xlog)
    return xp.where(use_log, p_log, p_pos)


def _deg_rec(m, w1, x, steps, p0, p1):
    """P_{w1+steps}^m(x) from P_{w1-1}^m = p0, P_{w1}^m = p1 by (w - m + 1) P_{w+1} = (2w + 1) x P_w - (w + m) P_{w-1}."""
    xp = _xp()

    def body(s):
        i, w, pa, pb = s
        act = i < steps
        pn = ((2 * w + 1) * x * pb - (w + m) * pa) / (w - m + 1)
        return (i + 1, xp.where(act, w + 1, w), xp.where(act, pb, pa), xp.where(act, pn, pb))

    out = while_loop(lambda s: xp.any(s[0] < steps), body, (xp.asarray(0, dtype=x.dtype), w1, p0, p1))
    return out[3]


def _lpmv_impl(m, v, x, reflect=True):
    xp = _xp()
    from ._gamma import poch
    bad = (xp.isnan(m) | xp.isnan(v) | xp.isnan(x) | (xp.floor(m) != m) | xp.isinf(m) | xp.isinf(v)
           | xp.isinf(x))
    neg = m < 0
    mm = xp.abs(m)
    vv = xp.where(v < -0.5, -v - 1, v)          # P_v = P_{-v-1}
    vint = xp.floor(vv) == vv
    ax = xp.abs(x)
    out_dom = (ax > 1) & ((mm != 0) | (~vint & ((x < -1) | (x >= 3))))
    bad = bad | out_dom
    # negative order at an integer degree below it: P_v^m = 0 and Gamma(v-m+1) has a pole, so the relation at the end
    # is 0/0 (NaN, scipy's too); a terminating Gauss series gives P_v^-m itself (_lpmv_pos), at x itself (no parity)
    lower = neg & vint & (vv < mm)
    end_neg = (x == -1) & (~vint | lower)        # the singularity at x = -1 (logarithmic at a non-integer degree)
    # integer degree: reflect x < 0 onto x > 0
    refl = (x < 0) & vint & reflect & ~lower
    use_log = (x < 0) & ~vint & ~end_neg
    ok = ~bad & ~end_neg
    sm, sv = xp.where(ok, mm, 0.0), xp.where(ok, vv, 0.5)
    xr0 = xp.where(ok, x, 0.5)
    # degree >= m + 2: the three-term recurrence in the degree from base degrees w0, w0 + 1 with
    # w0 - m in [0, 1), where the series do not cancel (upwards it is stable for |x| <= 1, where P and
    # Q oscillate alike, and for x > 1, where P dominates)
    j = xp.where(ok & (sv - sm >= 2), xp.floor(sv - sm), 0.0)
    # but near x = -1 at non-integer degree (angle t from -1) the recurrence starts where P is the
    # decaying solution (v sin t < m) and amplifies rounding by ~t^(-2m); the logarithmic expansion
    # there loses only ~e^(v t): the smaller loss wins
    t = xp.acos(xp.clip(-xr0, -1.0, 1.0))
    j = xp.where(use_log & (sv * t < 2 * sm * xp.log(1 / xp.maximum(t, 1e-300)) + 3), 0.0, j)
    too_far = j > _REC_MAX
    j = xp.where(too_far, 0.0, j)
    w0 = sv - j
    st = lambda t: xp.stack([t, t])  # noqa: E731
    pb = _lpmv_base(st(sm), xp.stack([w0, w0 + 1]), st(x), st(ok), st(refl), st(use_log), st(lower))
    xr = xp.where(ok, x, 0.5)
    p = xp.where(j >= 2, _deg_rec(sm, w0 + 1, xr, j - 1, pb[0], pb[1]), pb[0])
    bad = bad | too_far
    # negative order: P_v^{-m} = (-1)^m Gamma(v-m+1)/Gamma(v+m+1) P_v^m
    p = xp.where(neg & ~lower, (1.0 - 2.0 * (sm % 2)) / poch(sv - sm + 1, 2 * sm) * p, p)
    p = xp.where(end_neg, xp.where(mm == 0, -xp.inf, xp.inf), p)
    return xp.where(bad, xp.nan, p)


@custom_jvp
def _lpmv(m, v, x):
    return _lpmv_impl(m, v, x)


@_lpmv.defjvp
def _lpmv_jvp(primals, tangents):
    xp = _xp()
    m, v, x = primals
    _, tv, tx = tangents          # m is an integer order: it has no derivative
    both = _lpmv(xp.stack([m, m + 1]), xp.stack([v, v]), xp.stack([x, x]))      # one stacked evaluation
    out = both[0]
    # dP^m/dx = -(m x P^m / (1 - x^2) + P^(m+1) / sqrt(1 - x^2)); P_v'(1) = v (v + 1) / 2
    s = 1 - x * x
    dx = -(m * x * out / s + both[1] / xp.sqrt(s))
    dx = xp.where((x == 1) & (m == 0), v * (v + 1) * 0.5, dx)
    # at integer degree with x < 0 the value comes by reflection, which has no v-derivative: the
    # derivative there is that of the Gauss series at x itself (converging for x > -1)
    _, dv = jvp(lambda v: _lpmv_impl(m, v, x, reflect=False), (v,), (xp.ones_like(v),))
    # a negative order below an integer degree: its terminating series is summed without the tail a v-derivative
    # needs (_lpmv_pos): NaN, never a truncated one
    vv = xp.where(v < -0.5, -v - 1, v)
    dv = xp.where((m < 0) & (xp.floor(vv) == vv) & (vv < -m), xp.nan, dv)
    return out, dv * tv + dx * tx


def lpmv(m, v, x, /):
    """Associated Legendre function P_v^m(x) of integer order m and real degree v, with the
    Condon-Shortley phase (scipy.special.lpmv); nan for non-integer m and outside scipy's domain."""
    for name, arg in (("m", m), ("v", v), ("x", x)):
        if isinstance(arg, numbers.Complex) and not isinstance(arg, numbers.Real):
            raise TypeError(f"lpmv: {name} must be real, got a complex scalar; complex input is not supported")
    (m, v, x), _ = _floats("lpmv", ("m", "v", "x"), (m, v, x))
    return in_float64(lambda *v: bucketed(_lpmv, v, (0.0, 0.5, 0.5)), (m, v, x))
