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

hyp1f1: for x < 0 Kummer's transformation M(a, b, x) = e^x M(b - a, b, -x) makes the series' terms
eventually all one sign; for |x| large against the parameters the asymptotic expansion (both
exponential scales, the subdominant one with its Stokes-line factor cos(pi a)) is summed instead.
lpmv: the Gauss series in (1 - x)/2 for x >= 0 (and for m = 0 up to x < 3, where scipy's series
also converges); for x < 0 the reflection P_n^m(-x) = (-1)^(n+m) P_n^m(x) at integer degree, and
the logarithmic expansion about x = -1 (the degenerate c - a - b = -m case of 2F1's connection
formula) at non-integer degree.
"""
from __future__ import annotations

import numbers

import numpy as np

from transforms import custom_jvp, jvp, while_loop

from ._beta import _finfo, _floats, _xp

__all__ = ["hyp1f1", "lpmv"]


# --------------------------------------------------------------------------- helpers
def _is64(x):
    return x.dtype == _xp().float64


def _nonpos_int(v):
    xp = _xp()
    return (v <= 0) & (xp.floor(v) == v)


def _ratio_sum(num, den, z, renorm):
    """sum_n t_n with t_0 = 1, t_{n+1} = t_n * prod(p + n for p in num) z / (prod(q + n for q in den) (n+1)).
    A zero factor ends the primal terms but not a shadow term (the zero factor replaced by 1), whose
    convergence is waited for, so forward derivatives through the loop are complete. With `renorm`
    the sum is kept below R by rescaling: returns (S, k) with the value S * R**k; else (S, 0)."""
    xp = _xp()
    eps = float(_finfo(z).eps)
    big = 2.0 ** 500 if _is64(z) else 2.0 ** 60
    maxit = 6000 if _is64(z) else 2000
    one = xp.ones_like(z)
    init = (xp.asarray(0, dtype=z.dtype), one, one, one, one, xp.zeros_like(z), xp.zeros(z.shape, dtype=xp.bool), one)

    def body(s):
        n, t, S, q, Q, k, done, P = s
        nf = 1.0
        nq = 1.0
        for p in num:
            f = p + n
            nf = nf * f
            nq = nq * xp.where(f == 0, 1.0, f)
        dd = 1.0
        for c in den:
            dd = dd * (c + n)
        # a zero numerator factor meeting a zero denominator one (scipy's terminating series for a
        # non-positive integer a >= b): the term is 0, and the shadow stops too
        pole = dd == 0
        dd = xp.where(pole, 1.0, dd)
        r = nf * z / (dd * (n + 1))
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
        keep = lambda old, new: xp.where(done, old, new)  # noqa: E731
        return (n + 1, keep(t, tn), keep(S, Sn), keep(q, qn), keep(Q, Qn), keep(k, kn),
                done | conv | xp.isnan(Sn), keep(P, Pn))

    out = while_loop(lambda s: (s[0] < maxit) & xp.any(~s[6]), body, init)
    # not converged within maxit, or cancelled below ~7 (float32: ~3) significant digits (the
    # rounding error of a sum is ~eps sum |t_n|): nan, never a truncated or cancelled sum
    lost = eps * out[7] > (1e-7 if _is64(z) else 1e-3) * xp.abs(out[2])
    S = xp.where(out[6] & ~lost, out[2], xp.nan)
    return S, out[5], float(np.log(big))


# --------------------------------------------------------------------------- hyp1f1
def _asym_sums(ap, b, z):
    """The two asymptotic sums of M(ap, b, z), z large and positive, each summed until its terms are
    below eps or start to grow: A = sum (b-ap)_s (1-ap)_s / s! z^-s, B = sum (ap)_s (ap-b+1)_s / s! (-z)^-s."""
    xp = _xp()
    eps = float(_finfo(z).eps)
    one, zero = xp.ones_like(z), xp.zeros_like(z)
    fb = xp.zeros(z.shape, dtype=xp.bool)
    init = (xp.asarray(0, dtype=z.dtype), one, one, one, one, fb, fb)

    def body(s):
        n, u, A, w, B, da, db = s
        un = u * (b - ap + n) * (1 - ap + n) / ((n + 1) * z)
        wn = -w * (ap + n) * (ap - b + 1 + n) / ((n + 1) * z)
        sa = (xp.abs(un) > xp.abs(u)) & (u != 0)     # smallest term passed: stop without adding
        sb = (xp.abs(wn) > xp.abs(w)) & (w != 0)
        ca = sa | (xp.abs(un) <= eps * xp.abs(A))
        cb = sb | (xp.abs(wn) <= eps * xp.abs(B))
        An = xp.where(da | sa, A, A + un)
        Bn = xp.where(db | sb, B, B + wn)
        return (n + 1, xp.where(da, u, un), An, xp.where(db, w, wn), Bn, da | ca, db | cb)

    out = while_loop(lambda s: (s[0] < 400) & xp.any(~(s[5] & s[6])), body, init)
    return out[2], out[4]


def _m_core(a, b, x):
    """M(a, b, x) for arguments away from scipy's edge cases (finite, b not a pole)."""
    xp = _xp()
    from ._gamma import gammaln, gammasgn
    kum = (x < 0) & ~_nonpos_int(a)
    ap = xp.where(kum, b - a, a)
    z = xp.where(kum, -x, x)         # >= 0 but for a terminating series (a a non-positive integer)
    bm = b - ap
    zmin = 50.0 if _is64(x) else 25.0
    asym = ((z >= zmin) & ~_nonpos_int(ap) & (xp.abs(bm * (1 - ap)) <= 0.25 * z)
            & (xp.abs(bm) + xp.abs(1 - ap) <= 0.5 * z) & (b > 0))
    # power series (asymptotic elements get a trivial one)
    S, k, lnr = _ratio_sum([xp.where(asym, 1.0, ap)], [xp.where(asym, 1.0, b)], xp.where(asym, 0.0, z), True)
    xe = xp.where(kum, x, 0.0)
    scaled = xp.sign(S) * xp.exp(xp.log(xp.abs(S)) + k * lnr + xe)
    ser = xp.where(k > 0, scaled, S * xp.exp(xe))
    # asymptotic expansion (series elements get a harmless one)
    sap, sb, sz = xp.where(asym, ap, 0.5), xp.where(asym, b, 1.5), xp.where(asym, z, 100.0)
    A, B = _asym_sums(sap, sb, sz)
    lz, lgb = xp.log(sz), gammaln(sb)
    sbm = sb - sap
    p1 = gammasgn(sb) * gammasgn(sap) * xp.exp(lgb - gammaln(sap) + (sap - sb) * lz + xp.where(kum, 0.0, sz)) * A
    bm_pole = _nonpos_int(sbm)
    sbm_ = xp.where(bm_pole, 0.5, sbm)
    p2 = (xp.cos(np.pi * sap) * gammasgn(sb) * gammasgn(sbm_)
          * xp.exp(lgb - gammaln(sbm_) - sap * lz - xp.where(kum, sz, 0.0)) * B)
    out = p1 + xp.where(bm_pole, 0.0, p2)
    return xp.where(asym, out, ser)


def _m_edges(a, b, x):
    """(mask of scipy's special cases, their values)."""
    xp = _xp()
    nan = xp.isnan(a) | xp.isnan(b) | xp.isnan(x)
    bpole = _nonpos_int(b)
    apoly = (a < 0) & (xp.floor(a) == a) & (a >= b) & xp.isfinite(a)
    inf = bpole & ~apoly
    one = ((a == 0) | (x == 0) | (b == xp.inf)) & ~inf
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
    out = _m(a, b, x)
    # d/dx M(a, b, x) = a/b M(a+1, b+1, x); for a = -1 that is a/b (M(0, ., x) = 1 even where scipy's
    # edge rule would call b + 1 a pole)
    dx = xp.where(a == -1, a / b, a / b * _m(a + 1, b + 1, x))
    dx = xp.where(a == 0, 0.0, dx)
    one, zero = xp.ones_like(a), xp.zeros_like(a)
    _, da = jvp(_m_impl, (a, b, x), (one, zero, zero))
    _, db = jvp(_m_impl, (a, b, x), (zero, one, zero))
    # where scipy's value is inf (b a pole) or x, a, b are infinite the parameter derivatives do not
    # exist (nan there; dx is inf or nan at those points anyway)
    bad = (_nonpos_int(b) & ~((a < 0) & (xp.floor(a) == a) & (a >= b))) | xp.isinf(x) | xp.isinf(a) | xp.isinf(b)
    da, db = xp.where(bad, xp.nan, da), xp.where(bad, xp.nan, db)
    return out, da * ta + db * tb + dx * tx


_JIT = {}


def _call(key, fn, args, fills):
    """fn(*args) (equal-shape arrays); eagerly, one jitted executable per power-of-two size bucket, as
    _beta._ibeta_call does for the incomplete beta (while_loops compile per shape)."""
    from transforms.core import EVAL, _state
    if _state.trace is not EVAL:
        return fn(*args)
    if key not in _JIT:
        from transforms import jit
        _JIT[key] = jit(fn)
    xp = _xp()
    shape, n = args[0].shape, int(np.prod(args[0].shape))
    size = max(8, 1 << max(n - 1, 0).bit_length())
    flat = []
    for v, fill in zip(args, fills):
        v = xp.reshape(v, (n,))
        flat.append(xp.concat([v, xp.full((size - n,), fill, dtype=v.dtype)]) if size > n else v)
    return xp.reshape(_JIT[key](*flat)[:n], shape)


def hyp1f1(a, b, x, /):
    """Confluent hypergeometric function M(a, b, x) = 1F1(a; b; x) for real arguments
    (scipy.special.hyp1f1), differentiable in a, b and x."""
    (a, b, x), _ = _floats("hyp1f1", ("a", "b", "x"), (a, b, x))
    return _call("hyp1f1", _m, (a, b, x), (1.0, 1.0, 0.0))


# --------------------------------------------------------------------------- lpmv
def _lpmv_pos(m, v, x):
    """P_v^m(x) by the Gauss series in (1 - x)/2, m >= 0, v >= -1/2 (x >= 0; m = 0 also 1 < x < 3)."""
    xp = _xp()
    from ._gamma import poch, gammaln
    z = (1 - x) * 0.5
    F, _, _ = _ratio_sum([m - v, m + v + 1], [m + 1], z, False)
    # (-1)^m (1 - x^2)^(m/2) Gamma(v+m+1) / (Gamma(v-m+1) 2^m m!)
    pre = xp.exp(0.5 * m * xp.log1p(-x * x) - m * np.log(2.0) - gammaln(m + 1)) * poch(v - m + 1, 2 * m)
    pre = xp.where(m == 0, 1.0, xp.where(xp.abs(x) == 1, 0.0, pre))
    sign = 1.0 - 2.0 * (m % 2)
    return sign * pre * F


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
    end_neg = (x == -1) & ~vint                  # logarithmic singularity at x = -1
    # integer degree: reflect x < 0 onto x > 0
    refl = (x < 0) & vint & reflect
    use_log = (x < 0) & ~vint & ~end_neg
    ok = ~bad & ~end_neg
    sm, sv = xp.where(ok, mm, 0.0), xp.where(ok, vv, 0.5)
    xpos = xp.where(ok & ~use_log, xp.where(refl, -x, x), 0.5)
    p_pos = _lpmv_pos(sm, sv, xpos)
    p_pos = xp.where(refl & (((sv + sm) % 2) == 1), -p_pos, p_pos)
    xlog = xp.where(ok & use_log, x, -0.5)
    svl = xp.where(ok & use_log, sv, 0.5)
    p_log = _lpmv_log(sm, svl, xlog)
    p = xp.where(use_log, p_log, p_pos)
    # negative order: P_v^{-m} = (-1)^m Gamma(v-m+1)/Gamma(v+m+1) P_v^m
    p = xp.where(neg, (1.0 - 2.0 * (sm % 2)) / poch(sv - sm + 1, 2 * sm) * p, p)
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
    out = _lpmv(m, v, x)
    # dP^m/dx = -(m x P^m / (1 - x^2) + P^(m+1) / sqrt(1 - x^2)); P_v'(1) = v (v + 1) / 2
    s = 1 - x * x
    dx = -(m * x * out / s + _lpmv(m + 1, v, x) / xp.sqrt(s))
    dx = xp.where((x == 1) & (m == 0), v * (v + 1) * 0.5, dx)
    # at integer degree with x < 0 the value comes by reflection, which has no v-derivative: the
    # derivative there is that of the Gauss series at x itself (converging for x > -1)
    _, dv = jvp(lambda v: _lpmv_impl(m, v, x, reflect=False), (v,), (xp.ones_like(v),))
    return out, dv * tv + dx * tx


def lpmv(m, v, x, /):
    """Associated Legendre function P_v^m(x) of integer order m and real degree v, with the
    Condon-Shortley phase (scipy.special.lpmv); nan for non-integer m and outside scipy's domain."""
    for name, arg in (("m", m), ("v", v), ("x", x)):
        if isinstance(arg, numbers.Complex) and not isinstance(arg, numbers.Real):
            raise TypeError(f"lpmv: {name} must be real, got a complex scalar; complex input is not supported")
    (m, v, x), _ = _floats("lpmv", ("m", "v", "x"), (m, v, x))
    return _call("lpmv", _lpmv, (m, v, x), (0.0, 0.5, 0.5))
