"""The beta family of xp.special (scipy.special names, positional arguments in scipy's order).

Everything here is a composition of namespace functions, so it runs under jit and vmap and
lowers to XLA on any device. The regularised incomplete beta function I_x(a, b) is one
continued fraction (modified Lentz, under a while_loop that stops when every element has
converged) evaluated on the side of the symmetry I_x(a, b) = 1 - I_{1-x}(b, a) where it
converges fast; where that side's first parameter p is below 0.01, its complement 1 - I (which
would cancel to ~p) is a power series instead (_complement_small_p). A while_loop has no
reverse mode in this engine, so the function is a `custom_jvp`: d/dx is analytic, and d/da,
d/db come from the same continued fraction differentiated by hand inside the loop (forward
recurrences for the derivatives of Lentz's C and D), so both modes, vmap and forward-over-reverse
work. The distribution functions (stdtr, fdtr, bdtr, nbdtr and complements) are the
same core called with x and 1 - x computed separately and accurately; the inverses are in
_beta_inv.py.
Arguments are validated and promoted here, once: real inputs only, integer/bool
-> float64, float32 stays float32, all arguments to one dtype (Python scalars weak).
"""
from __future__ import annotations


import numpy as np

from transforms import cond, custom_jvp, while_loop
from transforms.core import EVAL, trace_state

from .._helpers import wrap
from .._staged import bucketed
from ._promote import check_args, in_float64, raw_floats

__all__ = ["betaln", "betainc", "betaincc", "stdtr", "fdtr", "fdtrc", "bdtr", "bdtrc", "nbdtr", "nbdtrc"]


_INT_LIMIT = 2.0 ** 31   # scipy passes k, n to C ints; larger float k, n give nan there


def _xp():
    import array_namespace as xp
    return xp


# ------------------------------------------------------------------ validation / promotion
def _floats(fname, names, args):
    """Arrays of one floating dtype (scipy's ufunc promotion), broadcast together, and that dtype."""
    raws, dt = raw_floats(fname, names, args)
    return list(_xp().broadcast_arrays(*[wrap(v) for v in raws])), dt


def _c_int(fname, name, x):
    """An integer-dtype argument as scipy's C code sees it: its long -> int cast keeps the low 32
    bits (two's complement), so 2**32 + 3 is 3 and 2**31 is -2**31. Floats pass unchanged (scipy
    gives NaN for those beyond a C int, which the callers check). A Python int beyond int64 is an
    OverflowError, as in scipy (check_args)."""
    xp = _xp()
    check_args(fname, (name,), (x,))
    if isinstance(x, (bool, np.bool_)):
        return x
    if isinstance(x, (int, np.integer)):
        return ((int(x) + 2 ** 31) % 2 ** 32) - 2 ** 31
    if hasattr(x, "dtype") and xp.isdtype(x.dtype, "integral"):
        return xp.astype(xp.astype(x, xp.int64), xp.int32)
    return x


def _finfo(x):
    return np.finfo(np.float32 if x.dtype == _xp().float32 else np.float64)


def _xlogy(c, lx):
    """c * log(x) given lx = log(x), as 0 where c == 0 (so 0 * log 0 = 0)."""
    xp = _xp()
    return xp.where(c == 0, 0.0, c * lx)


def _eager_none(mask):
    """Whether `mask` is, eagerly, all False (a form computed only for its elements is then skipped: the
    select that would take it takes none of it). Traced (staged, jit, vmap, grad): False, both are kept."""
    return trace_state.trace is EVAL and not bool(_xp().any(mask))


def _eager_all(mask):
    """Whether `mask` is, eagerly, all True (see _eager_none)."""
    return trace_state.trace is EVAL and bool(_xp().all(mask))


# ------------------------------------------------------------------------------ betaln
_LOG_SQRT_2PI = 0.5 * np.log(2 * np.pi)
_STIRLING = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360, 1 / 156, -3617 / 122400)


def _stirling_corr(z):
    """lgamma(z) - [(z - 1/2) log z - z + log sqrt(2 pi)] for z >= 10 (asymptotic series in 1/z^2)."""
    r = 1.0 / z
    r2 = r * r
    s = _STIRLING[-1]
    for c in _STIRLING[-2::-1]:
        s = c + r2 * s
    return s * r


def _betaln_pos(a, b, big=True):
    """log B(a, b) for a, b > 0 (finite): Stirling forms where a or b is large (no cancellation
    between huge log-gammas), the log-gamma sum where both are small. big=False: where both are
    >= 10 the value is left unspecified (finite), for callers that use another form there. The
    form for one of them >= 10 gives log|B| for the other negative too, where a + b >= 10."""
    xp = _xp()
    from ._gamma import gammaln
    lo, hi = xp.minimum(a, b), xp.maximum(a, b)
    both = lo >= 10.0
    mixed = (hi >= 10.0) & ~both
    gen = ~(both | mixed)
    out = None
    if not _eager_none(gen):
        # both < 10
        a3, b3 = xp.where(gen, a, 1.0), xp.where(gen, b, 1.0)
        out = gammaln(a3) + gammaln(b3) - gammaln(a3 + b3)
    if not _eager_none(mixed):
        # lo < 10 <= hi: lgamma(lo) + [lgamma(hi) - lgamma(hi + lo)] with the bracket by Stirling
        l2, h2 = xp.where(mixed, lo, 1.0), xp.where(mixed, hi, 10.0)
        r = l2 / h2
        lp = xp.log1p(r)
        v_mixed = (gammaln(l2) - h2 * (lp - r) + 0.5 * lp - l2 * xp.log(h2 + l2)
                   + _stirling_corr(h2) - _stirling_corr(h2 + l2))
        out = v_mixed if out is None else xp.where(mixed, v_mixed, out)
    if out is None:            # (every element both >= 10, eagerly)
        out = xp.zeros_like(a)
    if not big:
        return out
    # both >= 10: log sqrt(2pi) - log(lo)/2 + lo log(lo/(lo+hi)) - (hi - 1/2) log1p(lo/hi) + corrections
    l1, h1 = xp.where(both, lo, 10.0), xp.where(both, hi, 10.0)
    r = l1 / h1
    v_big = (_LOG_SQRT_2PI - 0.5 * xp.log(l1) + l1 * (xp.log(r) - xp.log1p(r)) - (h1 - 0.5) * xp.log1p(r)
             + _stirling_corr(l1) + _stirling_corr(h1) - _stirling_corr(l1 + h1))
    return xp.where(both, v_big, out)


def betaln(a, b, /):
    """log|B(a, b)| (scipy.special.betaln), with scipy's values at the poles and infinities; float32 in float64."""
    (a, b), _ = _floats("betaln", ("a", "b"), (a, b))
    return in_float64(_betaln, (a, b))


def _betaln(a, b):
    xp = _xp()
    from ._gamma import gammaln
    pos = (a > 0) & (b > 0) & xp.isfinite(a) & xp.isfinite(b)
    v_pos = _betaln_pos(xp.where(pos, a, 1.0), xp.where(pos, b, 1.0))
    a_pole = (a <= 0) & (xp.floor(a) == a)
    b_pole = (b <= 0) & (xp.floor(b) == b)
    # negative arguments away from the poles: log|Gamma| sum (as scipy); where the larger and the sum are >= 10,
    # _betaln_pos's Stirling form of its difference (log|Gamma(-2.5)| + lgamma(1e10) - lgamma(1e10 - 2.5) lost
    # 1.5e-7 of 57.5 to the cancellation of the huge log-gammas)
    other = ~pos & ~a_pole & ~b_pole & xp.isfinite(a) & xp.isfinite(b)
    a4, b4 = xp.where(other, a, 1.0), xp.where(other, b, 1.0)
    stir = other & (xp.maximum(a, b) >= 10.0) & (a + b >= 10.0)
    v_neg = xp.where(stir, _betaln_pos(xp.where(stir, a, 1.0), xp.where(stir, b, 10.0), big=False),
                     gammaln(a4) + gammaln(b4) - gammaln(a4 + b4))
    # a (or b) a non-positive integer: finite only if the other is a positive integer n with
    # a + n < 1, where B is the limit B(1 - a - n, n) (scipy's lbeta_negint); otherwise +inf
    pole = a_pole | b_pole
    oth = xp.where(a_pole, b, a)
    fin_pole = pole & (oth > 0) & (xp.floor(oth) == oth) & (1.0 - a - b > 0) & ~(a_pole & b_pole)
    # scipy takes that branch only for a pole a that fits a C int (its (int)a == a test) and whose
    # int 1 - a does not overflow, i.e. a >= 2 - 2**31: else +inf
    fin_pole = fin_pole & (xp.minimum(a, b) >= 2.0 - _INT_LIMIT)
    m, n = xp.where(fin_pole, 1.0 - a - b, 1.0), xp.where(fin_pole, oth, 1.0)
    v_pole = xp.where(fin_pole, _betaln_pos(m, n), xp.inf)
    out = xp.where(pos, v_pos, xp.where(pole, v_pole, v_neg))
    # infinities: B(inf, b) = 0 for finite b > 0; scipy gives +inf when the other is <= 0, nan for both inf
    ainf, binf = xp.isinf(a), xp.isinf(b)
    inf_v = xp.where(ainf & binf, xp.nan, xp.where((a > 0) & (b > 0), -xp.inf, xp.inf))
    out = xp.where(ainf | binf, inf_v, out)
    return xp.where(xp.isnan(a) | xp.isnan(b), xp.nan, out)


# ------------------------------------------------------------- the continued fraction
def _maxit(x):
    return 1000 if x.dtype == _xp().float64 else 300


_CF_CAP = 100000   # no element runs more terms than this (budget: pq/(p+q) up to ~1.6e11)


def _budget(p, q, x):
    """Terms the fraction may take: near the mean x0 = p/(p+q) of a beta with both p, q large it needs
    up to ~sqrt(m)/4 of them, m = pq/(p+q) (~2.5e4 at m = 1e10), far from it fewer."""
    xp = _xp()
    return _maxit(x) + 0.3 * xp.sqrt(p * q / (p + q))


def _cf(p, q, x, derivs):
    """The continued fraction h of I_x(p, q) = x^p (1-x)^q / (p B(p, q)) * h (valid everywhere;
    fast for x < (p+1)/(p+q+2)), by modified Lentz; with `derivs` also d log h/dp and d log h/dq
    by differentiating Lentz's recurrences. Returns (h, [dlogh_dp, dlogh_dq] or [])."""
    xp = _xp()
    fi = _finfo(x)
    eps, tiny = float(fi.eps), float(fi.tiny) * 1e8
    zero = xp.zeros_like(x)
    nd = 2 if derivs else 0

    def fix(v):
        return xp.where(xp.abs(v) < tiny, tiny, v)

    # first coefficient: d_1 = -(p+q) x / (p+1)
    a1 = -(p + q) * x / (p + 1)
    a1_d = [a1 * (1 / (p + q) - 1 / (p + 1)), a1 / (p + q)][:nd]
    u = fix(1 + a1)
    d = 1 / u
    dd = [-ad * d * d for ad in a1_d]
    g = [-ad / u for ad in a1_d]
    budget = _budget(p, q, x)
    pq = p + q
    init = (xp.asarray(1, dtype=x.dtype), d, xp.ones_like(x), d, tuple(dd), tuple(zero for _ in dd),
            tuple(g), xp.zeros(x.shape, dtype=xp.bool))

    def step(c, d, dc, dd, aa, aa_d, diag):
        t, r = aa * d, aa / c
        u = fix(1 + t)
        dn = 1 / u
        cn = fix(1 + r)
        ddn = [-dn * dn * (ad * d + aa * dv) for ad, dv in zip(aa_d, dd)]
        dcn = [ad / c - aa * dcv / (c * c) for ad, dcv in zip(aa_d, dc)]
        inc = [ddv / dn + dcv / cn for ddv, dcv in zip(ddn, dcn)]
        # how much this step amplifies rounding (1 + aa d and 1 + aa/c cancelling)
        amp = xp.abs(t * dn) + xp.abs(r / cn) if diag else None
        return cn, dn, dcn, ddn, dn * cn, inc, amp

    def body(s, diag):
        # c, d (and their derivatives) run on past an element's convergence: h, g and the last
        # iteration's diagnostics (diag: past the first _maxit terms) are frozen there (done); nothing else reads them
        m, h, c, d, dd, dc, g, done = s[:8]
        pm2 = p + 2 * m
        # even coefficient d_2m = m (q - m) x / ((p + 2m - 1)(p + 2m))
        den = (pm2 - 1) * pm2
        ae = m * (q - m) * x / den
        ae_d = [-ae * (1 / (pm2 - 1) + 1 / pm2), m * x / den][:nd]
        c1, d1, dc1, dd1, del1, inc1, amp1 = step(c, d, dc, dd, ae, ae_d, diag)
        # odd coefficient d_2m+1 = -(p + m)(p + q + m) x / ((p + 2m)(p + 2m + 1))
        pqm = pq + m
        ao = -(p + m) * pqm * x / (pm2 * (pm2 + 1))
        ao_d = [ao * (1 / (p + m) + 1 / pqm - 1 / pm2 - 1 / (pm2 + 1)), ao / pqm][:nd]
        c2, d2, dc2, dd2, del2, inc2, amp2 = step(c1, d1, dc1, dd1, ao, ao_d, diag)
        delta = del1 * del2
        err = xp.abs(delta - 1)
        new_g = [gv + i1 + i2 for gv, i1, i2 in zip(g, inc1, inc2)]
        conv = err <= eps
        for gv, i1, i2 in zip(new_g, inc1, inc2):
            conv = conv & (xp.abs(i1 + i2) <= eps * (1 + xp.abs(gv)))
        keep = lambda old, new: xp.where(done, old, new)  # noqa: E731
        out = (m + 1, keep(h, h * delta), c2, d2, tuple(dd2), tuple(dc2),
               tuple(keep(o, n) for o, n in zip(g, new_g)), done | conv | xp.isnan(delta))
        if not diag:
            return out
        last_m, last_err, last_amp = s[8:]
        return out[:7] + (out[7] | (m >= budget), keep(last_m, m), keep(last_err, err), keep(last_amp, amp1 + amp2))

    # the first _maxit terms, where no element is at its budget (>= _maxit), without the diagnostics only that reads
    # (~20% of the body's equations); then the rest with them (eagerly, only if an element needs more terms)
    first = while_loop(lambda s: (s[0] < min(_maxit(x), _CF_CAP)) & xp.any(~s[7]), lambda s: body(s, False), init)
    first += (zero, zero, zero)
    out = first if _eager_all(first[7]) else while_loop(lambda s: (s[0] < _CF_CAP) & xp.any(~s[7]),
                                                          lambda s: body(s, True), first)
    # out of terms before the fraction converged: nan, never a truncated value. Near the mean of a
    # beta with large p, q the steps cancel ~1e3-fold and delta wanders by ~1e3 eps about 1 once
    # converged, so the strict test may never pass: an element that ran to its budget (past the
    # ~sqrt(m)/4 terms needed) counts as converged if its last factor was 1 to within that step's own
    # rounding (the derivatives may stop there too). Stopped by the cap (budget not reached): nan.
    at_budget = out[8] >= budget
    ok = out[7] & (~at_budget | (out[9] <= eps * (1 + 8 * out[10])))
    return xp.where(ok, out[1], xp.nan), list(out[6])


def _two_prod(u, v):
    """(u v rounded, its rounding error) exactly, by Veltkamp splitting (Dekker's product)."""
    xp = _xp()
    split = 134217729.0 if u.dtype == xp.float64 else 4097.0
    cu, cv = split * u, split * v
    uh, vh = cu - (cu - u), cv - (cv - v)
    ul, vl = u - uh, v - vh
    pr = u * v
    return pr, ((uh * vh - pr) + uh * vl + ul * vh) + ul * vl


def _log_front_big(p, q, x, y):
    """log(x^p y^q / (p B(p, q))) for p, q >= 10 without the cancellation of p log x + q log y against
    log B (each ~p log p: eps p lost, 1e-7 at p = 1e9). With n = p + q and x0 = p/n it is
    p log1p(d/p) + q log1p(-d/q) + log sqrt(q/(2 pi p n)) + corr(n) - corr(p) - corr(q), d = n x - p
    = -(n y - q) taken from the smaller (exact) one of x, y by an exact product (corr: Stirling's
    series); the first two terms then cancel only to the accuracy of d, eps sqrt(pq/n)."""
    xp = _xp()
    n = p + q
    ne = (p - (n - (n - p))) + (q - (n - p))        # n + ne = p + q exactly (two-sum)
    small_x = x <= y
    w = xp.where(small_x, x, y)
    pr, err = _two_prod(w, n)
    dw = (pr - xp.where(small_x, p, q)) + err + w * ne   # n w - p (or n y - q), Sterbenz-exact first difference
    pw, qw = xp.where(small_x, p, q), xp.where(small_x, q, p)
    r = dw / pw   # n w / pw - 1: near -1 where w is far below its mean, where log1p(r) kept only eps / (1 + r) of
    # its digits (betainc(10, 10, 1e-11) was off by 8e-7) and log(n w / pw) is good to eps
    e = pw * xp.where(r < -0.5, xp.log(w * n / pw), xp.log1p(r)) + qw * xp.log1p(-dw / qw)
    return (e + 0.5 * (xp.log(q) - xp.log(p) - xp.log(n)) - _LOG_SQRT_2PI
            + _stirling_corr(n) - _stirling_corr(p) - _stirling_corr(q))


_SMALL_P = 1e-2   # below it 1 - I_x(p, q) is taken from the series (_complement_small_p), not from 1 - I
_EULER = 0.5772156649015329
_ZETA = (1.6449340668482264, 1.2020569031595943, 1.0823232337111382, 1.0369277551433699, 1.0173430619844491,
         1.0083492773819228, 1.0040773561979443)   # zeta(2) ... zeta(8)


def _lgamma_shift(p, q):
    """lgamma(q + p) - lgamma(q) - lgamma(1 + p) for 0 < p <= _SMALL_P, q > 0, to a few ulps of its size (~p):
    q is raised by the recurrence to Q = q + k >= 10 (the factors 1 + p / (q + i), multiplied as 1 + U), where
    Stirling's form of lgamma(Q + p) - lgamma(Q) keeps p's digits (its correction series differenced term by
    term: (Q / (Q + p))^n - 1 by the recurrence w_n+2 = w_n + (1 + w_n) v, all of one sign); lgamma(1 + p) =
    -gamma p + sum_k (-1)^k zeta(k) p^k / k."""
    xp = _xp()
    big, u_sum = q, xp.zeros_like(p)
    for _ in range(10):
        low = big < 10.0
        u = xp.where(low, p / big, 0.0)
        u_sum = u_sum + u + u_sum * u     # (1 + U)(1 + u) - 1
        big = xp.where(low, big + 1.0, big)
    out = (big - 0.5) * xp.log1p(p / big) + p * xp.log(big + p) - p - xp.log1p(u_sum)
    u = -p / (big + p)                    # Q / (Q + p) - 1
    v, w = u * (2 + u), u
    r, r2 = 1.0 / big, 1.0 / (big * big)
    for c in _STIRLING:                   # corr(Q + p) - corr(Q) = sum_k c_k Q^-(2k+1) ((Q / (Q + p))^(2k+1) - 1)
        out = out + c * r * w
        r, w = r * r2, w + (1 + w) * v
    lg1p, pk = -_EULER * p, -p
    for k, z in enumerate(_ZETA, start=2):
        pk = -pk * p
        lg1p = lg1p + z * pk / k
    return out - lg1p


def _complement_small_p(p, q, x, lx):
    """1 - I_x(p, q) for 0 < p <= _SMALL_P and x <= ~1/2 (where the callers put a small p: see _ibeta_parts),
    with lx = log x, to its own relative accuracy. 1 - I cancels there to ~p (betainc(10, 1e-10, 0.999) =
    1 - I_0.001(1e-10, 10) lost eps/p of it; at p = 1e-300 it was negative). The series I = x^p / (p B(p, q))
    (1 + p S), S = sum_j>=1 (1 - q)_j / j! x^j / (p + j), gives it as -(E1 + E2 + E1 E2 + (1 + E1)(1 + E2) p S),
    E1 = x^p - 1, E2 = 1 / (p B(p, q)) - 1, each computed from p (DiDonato and Morris's BPSER complement)."""
    xp = _xp()
    e1 = xp.expm1(p * lx)
    e2 = xp.expm1(_lgamma_shift(p, q))
    eps = float(_finfo(x).eps)

    def term(c):   # (x <= ~1/2, q x < ~3: the terms soon fall by ~x per step; x = 0 stops at once)
        j, t, s = c
        t = t * ((j - q) / j) * x
        return j + 1, t, s + t / (p + j)
    more = lambda c: (c[0] < 200) & xp.any(xp.abs(c[1]) > eps * xp.abs(c[2]))  # noqa: E731
    _, _, s = while_loop(more, term, (xp.asarray(1.0, dtype=x.dtype), xp.ones_like(p), xp.zeros_like(p)))
    return -(e1 + e2 + e1 * e2 + (1 + e1) * (1 + e2) * p * s)


def _ibeta_parts(a, b, x, y, derivs):
    """(I, 1 - I) for valid a, b > 0 and 0 <= x <= 1 with y = 1 - x given separately; with derivs
    also (dI/da, dI/db)."""
    xp = _xp()
    # the fraction for I_x(p, q) converges fast for x < (p+1)/(p+q+2); but where its first term
    # 1 - (p+q)x/(p+1) = (a(1-x) - bx + 1)/(a+1) nearly cancels (a >> b, x near 1) it is
    # ill-conditioned, while the swapped side converges in ~a(1-x) terms and 1 - J keeps its
    # accuracy as long as a(1-x) < b + 3 (and a(1-x) < 30 bounds its length)
    ay = a * y
    swap = (x * (a + b + 2) > a + 1) | ((ay < b + 3) & (ay < 30) & (ay - b * x + 1 < 0.05 * (a + 1)))
    p, q = xp.where(swap, b, a), xp.where(swap, a, b)
    xx, yy = xp.where(swap, y, x), xp.where(swap, x, y)
    h, dh = _cf(p, q, xx, derivs)
    big = (p >= 10) & (q >= 10)
    all_big = not derivs and _eager_all(big)
    if not all_big:
        # log of x near 1 from the small y by log1p (y may be a rounded 1 - x); not beyond 0.25,
        # where XLA's log1p is log(1 + x) and a rounded 1 - x is as good
        lx = xp.where(y < 0.25, xp.log1p(-y), xp.log(x))
        ly = xp.where(x < 0.25, xp.log1p(-x), xp.log(y))
        lxx, lyy = xp.where(swap, ly, lx), xp.where(swap, lx, ly)
    if derivs:
        from transforms import jvp
        one, zero = xp.ones_like(p), xp.zeros_like(p)
        bl, bl_p = jvp(_betaln_pos, (p, q), (one, zero))
        _, bl_q = jvp(_betaln_pos, (p, q), (zero, one))
    elif not all_big:
        bl = _betaln_pos(p, q, big=False)     # (where p, q >= 10 the front is _log_front_big's)
    if all_big:                # (what the select below would take, without the other form)
        front = xp.exp(_log_front_big(p, q, xx, yy))
    else:
        front = xp.exp(_xlogy(p, lxx) + _xlogy(q, lyy) - bl) / p
        if not _eager_none(big):
            front = xp.where(big, xp.exp(_log_front_big(xp.where(big, p, 10.0), xp.where(big, q, 10.0),
                                                        xp.where(big, xx, 0.5), xp.where(big, yy, 0.5))), front)
    j = front * h
    cj = 1 - j
    small = p <= _SMALL_P

    def series(cj):
        ps = xp.where(small, p, _SMALL_P)
        return xp.where(small, _complement_small_p(ps, q, xp.where(small, xx, 0.0), xp.where(small, lxx, -1.0)), cj)
    if not all_big and not _eager_none(small):   # (a cond: jit runs the series only where an element needs it)
        cj = cond(xp.any(small), series, lambda cj: cj, cj)
    ib = xp.where(swap, cj, j)
    ic = xp.where(swap, j, cj)
    if not derivs:
        return ib, ic
    dj_p = j * (lxx - bl_p - 1 / p + dh[0])
    dj_q = j * (lyy - bl_q + dh[1])
    # I = J(a, b) unswapped; I = 1 - J(b, a) swapped
    di_a = xp.where(swap, -dj_q, dj_p)
    di_b = xp.where(swap, -dj_p, dj_q)
    return ib, ic, di_a, di_b


def _edges(a, b, x, y):
    """(valid mask, value of I where not valid): scipy's edge values of betainc."""
    xp = _xp()
    nan = xp.isnan(a) | xp.isnan(b) | xp.isnan(x) | (x < 0) | (x > 1) | (y < 0) | (y > 1)
    nan = nan | (a < 0) | (b < 0) | ((a == 0) & (b == 0)) | (xp.isinf(a) & xp.isinf(b))
    x0, x1 = x == 0, y == 0
    a0 = (a == 0) | xp.isinf(b)      # I = 1 for x > 0
    b0 = (b == 0) | xp.isinf(a)      # I = 0 for x < 1
    val = xp.where(x0, 0.0, xp.where(x1, 1.0, xp.where(a0, 1.0, 0.0)))
    val = xp.where(nan, xp.nan, val)
    valid = ~(nan | x0 | x1 | a0 | b0)
    return valid, val


def _safe(valid, a, b, x, y):
    xp = _xp()
    return (xp.where(valid, a, 1.0), xp.where(valid, b, 1.0), xp.where(valid, x, 0.5), xp.where(valid, y, 0.5))


def _ibeta_value(a, b, x, y):
    """(I_x(a, b), 1 - I_x(a, b)) with y = 1 - x supplied by the caller (so complements are accurate)."""
    xp = _xp()
    valid, edge = _edges(a, b, x, y)
    ib, ic = _ibeta_parts(*_safe(valid, a, b, x, y), derivs=False)
    return xp.where(valid, ib, edge), xp.where(valid, ic, 1 - edge)


_ibeta = custom_jvp(_ibeta_value)


@_ibeta.defjvp
def _ibeta_jvp(primals, tangents):
    xp = _xp()
    a, b, x, y = primals
    ta, tb, tx, ty = tangents
    valid, edge = _edges(a, b, x, y)
    sa, sb, sx, sy = _safe(valid, a, b, x, y)
    ib, ic, di_a, di_b = _ibeta_parts(sa, sb, sx, sy, derivs=True)
    ib, ic = xp.where(valid, ib, edge), xp.where(valid, ic, 1 - edge)
    # dI/dx = x^(a-1) (1-x)^(b-1) / B(a, b); x and y move oppositely, so dx = (tx - ty) / 2
    ok = valid | ((x == 0) | (y == 0)) & (a > 0) & (b > 0) & xp.isfinite(a) & xp.isfinite(b)
    sa, sb = xp.where(ok, a, 1.0), xp.where(ok, b, 1.0)
    di_x = xp.exp(_xlogy(sa - 1, xp.log(x)) + _xlogy(sb - 1, xp.log(y)) - _betaln_pos(sa, sb))
    di_x = xp.where(ok, di_x, xp.where(valid | ~xp.isnan(edge), 0.0, xp.nan))
    zero = xp.zeros_like(ib)
    di_a, di_b = xp.where(valid, di_a, zero), xp.where(valid, di_b, zero)
    t = di_a * ta + di_b * tb + di_x * ((tx - ty) * 0.5)
    return (ib, ic), (t, -t)


def _ibeta_call(a, b, x, y):
    """_ibeta; eagerly staged once per power-of-two size bucket (a while_loop compiles per shape, and
    eager callers such as scipy come with ever-changing shapes)."""
    return bucketed(_ibeta, (a, b, x, y), (1.0, 1.0, 0.5, 0.5), first=_ibeta_value)


def betainc(a, b, x, /):
    """Regularised incomplete beta function I_x(a, b) (scipy.special.betainc)."""
    (a, b, x), _ = _floats("betainc", ("a", "b", "x"), (a, b, x))
    return _ibeta_call(a, b, x, 1 - x)[0]


def betaincc(a, b, x, /):
    """Complement 1 - I_x(a, b), computed without cancellation (scipy.special.betaincc)."""
    (a, b, x), _ = _floats("betaincc", ("a", "b", "x"), (a, b, x))
    return _ibeta_call(a, b, x, 1 - x)[1]


# ------------------------------------------------------------- distribution functions
def _ndtr(t):
    from ._erf_bessel import ndtr
    return ndtr(t)


def _student_xy(df, t):
    """x = df / (df + t^2) and y = t^2 / (df + t^2), each without cancellation."""
    xp = _xp()
    t2 = t * t
    s = df + t2
    return df / s, xp.where(xp.isinf(t2), 1.0, t2 / s)


def stdtr(df, t, /):
    """Student t distribution function P(T <= t) with df degrees of freedom (scipy.special.stdtr)."""
    (df, t), _ = _floats("stdtr", ("df", "t"), (df, t))
    xp = _xp()
    x, y = _student_xy(df, t)
    ib, ic = _ibeta_call(df * 0.5, xp.full_like(df, 0.5), x, y)
    # df >= 30 with x near 1: the fraction runs where its terms, formed from x, nearly cancel (stdtr(1e10, -4.2)
    # was 2.3e-7 off, stdtr(1e18, t) NaN); the expansion in 1/df keeps every digit (_beta_asym.py)
    big = (df >= 30) & (y > 0) & (y < 0.3)   # (y = 0: t = 0, the edge value)
    if not _eager_none(big):
        from ._beta_asym import bgrat
        from ._erf_bessel import erfc
        e = bgrat(xp.where(big, df * 0.5, 15.0), 0.5, xp.where(big, xp.log1p(-y), -0.1), lambda z: erfc(xp.sqrt(z)))
        ib, ic = xp.where(big, e, ib), xp.where(big, 1 - e, ic)
    out = xp.where(t < 0, 0.5 * ib, 0.5 + 0.5 * ic)
    # from df = 1e20 on the t distribution is the normal one to double precision (t^2 / df under eps where Phi(t) is
    # not 0 or 1), and t^2 / (df + t^2) would underflow for small t (stdtr(1e300, -1e-8) came out 0.5)
    normal = df >= 1e20
    out = xp.where(normal, _ndtr(xp.where(normal, t, 0.0)), out)
    return xp.where((df <= 0) | xp.isnan(df) | xp.isnan(t), xp.nan, out)


def _f_xy(dfn, dfd, x):
    xp = _xp()
    s = dfd + dfn * x
    inf = xp.isinf(x)
    return xp.where(inf, 1.0, dfn * x / s), xp.where(inf, 0.0, dfd / s)


def _fdist(fname, dfn, dfd, x, which):
    (dfn, dfd, x), _ = _floats(fname, ("dfn", "dfd", "x"), (dfn, dfd, x))
    xp = _xp()
    w, y = _f_xy(dfn, dfd, x)
    out = _ibeta_call(dfn * 0.5, dfd * 0.5, w, y)[which]
    bad = (dfn <= 0) | (dfd <= 0) | xp.isinf(dfn) | xp.isinf(dfd) | (x < 0) | xp.isnan(x)
    return xp.where(bad, xp.nan, out)


def fdtr(dfn, dfd, x, /):
    """F distribution function P(F <= x) (scipy.special.fdtr)."""
    return _fdist("fdtr", dfn, dfd, x, 0)


def fdtrc(dfn, dfd, x, /):
    """F survival function P(F > x) (scipy.special.fdtrc)."""
    return _fdist("fdtrc", dfn, dfd, x, 1)




def _binom_args(fname, k, n, p):
    """floor(k), n as scipy's C code sees it, p, and where scipy's common domain check (NaN p, k or n; infinite n;
    p outside [0, 1]; n < floor(k)) fails. scipy's double loop casts n to a C int: a float n beyond the int range
    becomes INT_MIN there (x86's conversion), so the check fails unless k is as low. Where it passes, bdtrc of a
    k < 0 is 1, a negative n included."""
    n = _c_int(fname, "n", n)
    (k, n, p), _ = _floats(fname, ("k", "n", "p"), (k, n, p))
    xp = _xp()
    fk, t = xp.floor(k), xp.trunc(n)
    n = xp.where((t >= _INT_LIMIT) | (t < -_INT_LIMIT), -_INT_LIMIT, t)
    bad = xp.isnan(p) | xp.isnan(k) | xp.isnan(t) | xp.isinf(t) | (p < 0) | (p > 1) | (n < fk)
    return fk, n, p, bad


def bdtr(k, n, p, /):
    """Binomial distribution function: P(at most floor(k) successes in n trials) (scipy.special.bdtr)."""
    fk, n, p, bad = _binom_args("bdtr", k, n, p)
    xp = _xp()
    out = _ibeta_call(n - fk, fk + 1, 1 - p, p)[0]
    out = xp.where(fk == n, 1.0, out)
    return xp.where(bad | (fk < 0), xp.nan, out)


def bdtrc(k, n, p, /):
    """Binomial survival function: P(more than floor(k) successes in n trials) (scipy.special.bdtrc)."""
    fk, n, p, bad = _binom_args("bdtrc", k, n, p)
    xp = _xp()
    out = _ibeta_call(n - fk, fk + 1, 1 - p, p)[1]
    out = xp.where(fk < 0, 1.0, xp.where(fk == n, 0.0, out))   # (scipy's order: bdtrc(-1, -1, p) is 1)
    return xp.where(bad, xp.nan, out)


def _nbinom_args(fname, k, n, p):
    k, n = _c_int(fname, "k", k), _c_int(fname, "n", n)
    (k, n, p), _ = _floats(fname, ("k", "n", "p"), (k, n, p))
    xp = _xp()
    k, n = xp.trunc(k), xp.trunc(n)   # scipy casts both to C ints (see _c_int)
    bad = (xp.isnan(p) | xp.isnan(k) | xp.isnan(n) | xp.isinf(k) | xp.isinf(n) | (p < 0) | (p > 1)
           | (k < 0) | (n <= 0) | (n >= _INT_LIMIT) | (k >= _INT_LIMIT - 1))   # C int k + 1 overflows
    return k, n, p, bad


def nbdtr(k, n, p, /):
    """Negative binomial distribution function: P(at most k failures before the n-th success)
    (scipy.special.nbdtr)."""
    k, n, p, bad = _nbinom_args("nbdtr", k, n, p)
    xp = _xp()
    return xp.where(bad, xp.nan, _ibeta_call(n, k + 1, p, 1 - p)[0])


def nbdtrc(k, n, p, /):
    """Negative binomial survival function (scipy.special.nbdtrc)."""
    k, n, p, bad = _nbinom_args("nbdtrc", k, n, p)
    xp = _xp()
    return xp.where(bad, xp.nan, _ibeta_call(n, k + 1, p, 1 - p)[1])

