"""I_x(p, q) for a large p and q <= 1 with x near 1, by the asymptotic expansion in 1/nu (the BGRAT expansion of
DiDonato and Morris, after Temme): Student's t distribution at large df (q = 1/2), _beta.stdtr and
_beta_inv.stdtrit.

There the continued fraction for I_x(p, q) runs on the side where its terms nearly cancel: each is formed from a
rounded x near 1, and the result loses ~eps p of its digits (stdtr(1e10, -4.2) was 2.3e-7 off, stdtr(1e16, -4.2)
7 %, stdtr(1e18, t) NaN). With nu = p + (q - 1)/2 and z = -nu log x,

    I_x(p, q) = Gamma(p + q) / (Gamma(p) nu^q) [Q(q, z) + r sum_{n>=1} d_n J_n],   r = z^q e^-z / Gamma(q),

J_0 = Q(q, z) / r, J_n = [(q + 2n - 2)(q + 2n - 1) J_n-1 + (z + q + 2n - 1) (log x / 2)^(2n-2)] / (4 nu^2), and
d_n = (q - 1) c_n + (1/n) sum_{i<n} (q i - n) c_i d_n-i with c_n = 1 / (2n + 1)!. The front factor is formed
from Stirling's series differenced term by term (no cancellation of two huge log-gammas). For p >= 15 and
|log x| < 0.36 seven terms reach double precision (five: 2e-13 at p = 15, x = 0.71).
"""
from __future__ import annotations

from ._beta import _stirling_corr, _xp

_TERMS = 7


def bgrat(p, q, lx, upper):
    """I_x(p, q) for p >= 15, 0 < q <= 1 and lx = log x (taken accurately from 1 - x by the caller); upper(z) is
    Q(q, z) (erfc(sqrt z) at q = 1/2: the general incomplete gamma function would add ~0.5 s to every compile)."""
    xp = _xp()
    from ._gamma import gammaln
    nu = p + 0.5 * (q - 1)
    z = -nu * lx
    # log(Gamma(p + q) / (Gamma(p) nu^q)), each part small
    front = ((p - 0.5) * xp.log1p(q / p) - q + q * xp.log1p((q + 1) / (2 * nu))
             + _stirling_corr(p + q) - _stirling_corr(p))
    r = xp.exp(q * xp.log(z) - z - gammaln(q))
    qz = upper(z)
    j = xp.where(r > 0, qz / xp.where(r > 0, r, 1.0), 0.0)
    v, t2 = 0.25 / (nu * nu), 0.25 * lx * lx
    t, total = xp.ones_like(z), xp.zeros_like(z)
    c, d = [1.0], [1.0]
    for n in range(1, _TERMS + 1):
        bp = q + (2 * n - 2)
        j = (bp * (bp + 1) * j + (z + bp + 1) * t) * v
        t = t * t2
        c.append(c[-1] / ((2 * n) * (2 * n + 1)))
        s = 0.0
        for i in range(1, n):
            s = s + (q * i - n) * c[i] * d[n - i]
        d.append((q - 1) * c[n] + s / n)
        total = total + d[n] * j
    return xp.exp(front) * (qz + r * total)
