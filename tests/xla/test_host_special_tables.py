"""xla/host_special_tables.py: the erfcx fits and erf's Taylor coefficients are what `derive_tables` (mpmath,
50 digits) gives; their accuracy in use is tested in test_host_special.py (erf/erfc against mpmath to ~2 ulps)."""
import numpy as np

from xla import host_special_tables


def derive_tables(mp):
    """The erfcx fits of host_special_tables.py: Chebyshev interpolation (first-kind nodes) of erfcx(x) on
    [lo, hi) in x, or of x erfcx(x) in u = 1/x, at 50 digits, converted to monomials in s in [-1, 1]."""
    mp.mp.dps = 50
    out = []
    for lo, hi, var, c0, h0, coefs in host_special_tables._ERFCX:
        deg = len(coefs) - 1
        n = deg + 8
        a, b = (mp.mpf(lo), mp.mpf(hi)) if var == "x" else (1 / mp.mpf(hi), 1 / mp.mpf(lo))
        f = (lambda v: mp.exp(v * v) * mp.erfc(v)) if var == "x" else (lambda u: mp.exp(1 / u**2) * mp.erfc(1 / u) / u)
        nodes = [mp.cos(mp.pi * (k + mp.mpf(1) / 2) / n) for k in range(n)]
        fs = [f((b - a) / 2 * t + (a + b) / 2) for t in nodes]
        c = [2 * mp.fsum(fs[k] * mp.cos(mp.pi * j * (k + mp.mpf(1) / 2) / n) for k in range(n)) / n for j in range(n)]
        c[0] /= 2
        cheb = [[mp.mpf(1)], [mp.mpf(0), mp.mpf(1)]]
        for _ in range(2, deg + 1):
            p = [mp.mpf(0)] + [2 * v for v in cheb[-1]]
            for i, v in enumerate(cheb[-2]):
                p[i] -= v
            cheb.append(p)
        m = [mp.mpf(0)] * (deg + 1)
        for j in range(deg + 1):
            for i, v in enumerate(cheb[j]):
                m[i] += c[j] * v
        out.append((float((a + b) / 2), float((b - a) / 2), [float(v) for v in reversed(m)]))
    taylor = [float(2 / mp.sqrt(mp.pi) * (-1) ** k / (mp.factorial(k) * (2 * k + 1)))
              for k in reversed(range(len(host_special_tables._ERF_TAYLOR)))]
    return out, taylor


def test_tables_are_the_derived_ones():
    import mpmath as mp   # (a test extra: pyproject [test])
    fits, taylor = derive_tables(mp)
    for (c, h, m), iv in zip(fits, host_special_tables._ERFCX):
        assert (c, h) == iv[3:5]
        np.testing.assert_allclose(iv[5], m, rtol=1e-14, atol=1e-30)
    np.testing.assert_allclose(host_special_tables._ERF_TAYLOR, taylor, rtol=1e-15)
