"""The asymptotic expansion of I_x(p, q) for a large p and q <= 1 (special/_beta_asym.py), and Student's t
distribution at large df, which uses it: against mpmath (50 digits), eager and jit, with derivatives."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "src"))

import mpmath  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import array_namespace as xp  # noqa: E402
from array_namespace.special._beta_asym import bgrat  # noqa: E402
from transforms import grad, jit  # noqa: E402

mpmath.mp.dps = 50


def test_expansion_against_mpmath_with_q_half():
    # q = 1/2 (Q(1/2, z) = erfc(sqrt z), what stdtr passes); p from 15 up, x from 1 - 1e-12 to 0.71
    p = np.repeat([15.0, 40.0, 1e3, 1e7, 1e12], 6)
    y = np.tile([1e-12, 1e-8, 1e-4, 0.01, 0.1, 0.29], 5)
    keep = p * y < 700
    p, y = p[keep], y[keep]
    want = [float(mpmath.betainc(a, 0.5, 0, 1 - mpmath.mpf(b), regularized=True)) for a, b in zip(p, y)]
    half = xp.full(p.shape, 0.5)
    got = bgrat(xp.asarray(p), half, xp.log1p(-xp.asarray(y)), lambda z: xp.special.erfc(xp.sqrt(z)))
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-13)


def _stdtr_mp(df, t):
    df, t = mpmath.mpf(df), mpmath.mpf(t)
    v = mpmath.betainc(df / 2, mpmath.mpf(1) / 2, 0, df / (df + t * t), regularized=True) / 2
    return v if t < 0 else 1 - v


def _stdtr_exact(df, t):
    return float(_stdtr_mp(df, t))


def test_stdtr_at_large_df_against_mpmath():
    """The continued fraction ran where its terms (formed from x = df / (df + t^2) near 1) nearly cancel:
    stdtr(1e10, -4.2) was 2.3e-7 off, stdtr(1e16, -4.2) 7 %, stdtr(1e18, -4.2) NaN."""
    df = np.repeat([30.0, 64.5, 1e4, 1e8, 1e10, 1e16, 1e18], 7)
    t = np.tile([-4.2, -1e-8, 0.0, 0.3, 3.0, -12.0, -30.0], 7)
    want = np.array([_stdtr_exact(d, v) for d, v in zip(df, t)])
    for f in (xp.special.stdtr, jit(xp.special.stdtr)):
        got = np.asarray(f(xp.asarray(df), xp.asarray(t)))
        # (at t = -30, 1e-198, the value's own condition: t's last bit moves it ~1e-13)
        tail = t == -30.0
        np.testing.assert_allclose(got[~tail], want[~tail], rtol=5e-14, atol=0)
        np.testing.assert_allclose(got[tail], want[tail], rtol=3e-13, atol=0)
    import scipy.special as sc   # df = 1e300: the normal distribution function (mpmath would need 300 digits)
    np.testing.assert_allclose(np.asarray(xp.special.stdtr(1e300, xp.asarray(t[:7]))), sc.ndtr(t[:7]), rtol=5e-14)


def test_stdtr_derivatives_at_large_df():
    g = grad(lambda d, t: xp.special.stdtr(d, t), argnums=(0, 1))(xp.asarray(1e6), xp.asarray(-4.2))
    dd = float(mpmath.diff(lambda d: _stdtr_mp(d, -4.2), 1e6))
    dt = float(mpmath.diff(lambda t: _stdtr_mp(1e6, t), -4.2))
    np.testing.assert_allclose([float(g[0]), float(g[1])], [dd, dt], rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_stdtr_keeps_its_dtype_on_both_sides_of_df_30(dtype):
    df = np.array([29.0, 30.0, 1e6], dtype)
    out = xp.special.stdtr(xp.asarray(df), xp.asarray(np.array([-2.0, -2.0, -2.0], dtype)))
    assert out.dtype == xp.asarray(df).dtype
    want = [_stdtr_exact(float(d), -2.0) for d in df]
    np.testing.assert_allclose(np.asarray(out), want, rtol=1e-13 if dtype == np.float64 else 2e-6)


def test_stdtrit_at_large_df_against_mpmath():
    """The solver's fraction lost ~eps df (stdtrit(1e10, 0.01) was 1.5e-8 off, stdtrit(1e19, 0.01) 0.0); from
    df = 1e4 the root is found on stdtr's expansion. Checked through mpmath's distribution function at our t."""
    df = np.repeat([1e4, 3e4, 1e6, 1e10, 1e16, 1e19], 6)
    p = np.tile([1e-300, 1e-20, 0.01, 0.3, 0.9, 1 - 1e-12], 6)
    for f in (xp.special.stdtrit, jit(xp.special.stdtrit)):
        t = np.asarray(f(xp.asarray(df), xp.asarray(p)))
        tail = np.array([float(_stdtr_mp(d, v) if v < 0 else 1 - _stdtr_mp(d, v)) for d, v in zip(df, t)])
        np.testing.assert_allclose(tail, np.minimum(p, 1 - p), rtol=3e-13)   # the tail probability at our t
    g = grad(lambda d, q: xp.special.stdtrit(d, q), argnums=(0, 1))(xp.asarray(1e6), xp.asarray(0.01))
    dt_dp = 1 / float(mpmath.diff(lambda v: _stdtr_mp(1e6, v), float(xp.special.stdtrit(1e6, 0.01))))
    np.testing.assert_allclose(float(g[1]), dt_dp, rtol=1e-9)
