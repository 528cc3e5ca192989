"""betaincinv and the distribution inverses built on it (special/_beta_inv.py: stdtrit, fdtri, bdtri,
nbdtri) against scipy.special and mpmath: values (float32 and float64, edges), jit and vmap, gradients
against finite differences, the tails where solving the complement would cancel, and parameters near
1e9 where scipy itself is off (mpmath is the oracle there).
"""
import os
import sys

os.environ["SCIPY_ARRAY_API"] = "1"

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import scipy.special as sc  # noqa: E402

import array_namespace as xp  # noqa: E402
from transforms import jit  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from harness import N_JIT, check_float32_ulps, check_grad, check_transforms, check_values  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:non-integer arg n is deprecated:DeprecationWarning")
RNG = np.random.default_rng(20240611)
inf, nan = np.inf, np.nan

# ---------------------------------------------------------------------------- inverses
INV_EDGE = [(1, 1, -0.1), (1, 1, 1.1), (inf, 1, .5), (1, inf, .5), (inf, inf, .5), (0, 1, .5), (1, 0, .5),
            (-1, 2, .5), (2, 3, nan), (nan, 3, .5), (2, 3, 0), (2, 3, 1), (2, 3, 0.5), (0.1, 0.2, 1e-10),
            (50, 0.5, 0.999), (0.3, 40, 0.7), (1, 1, 0.25)]


@pytest.mark.slow   # compiles nested while_loops for several shapes and transforms
def test_betaincinv_values():
    check_values("betaincinv", list(np.array(INV_EDGE, dtype=float).T), rtol=1e-12)
    # atol: x ~ 1e-100 underflows float32; scipy's float32 loop gives the smallest normal, we give 0
    check_values("betaincinv", list(np.array(INV_EDGE, dtype=float).T), dtype=np.float32, rtol=2e-5, atol=2e-38)
    a, b = 10 ** RNG.uniform(-1, 2.5, 60), 10 ** RNG.uniform(-1, 2.5, 60)
    y = np.concatenate([RNG.uniform(0, 1, 45), 10 ** RNG.uniform(-12, -1, 15)])
    check_values("betaincinv", [a, b, y], rtol=1e-10, atol=1e-300)
    # float32: where x underflows float32 (x ~ 1e-64 for a = 0.12, y = 1e-8) scipy's double result
    # rounds to 0 as ours does; elsewhere the solve is float32 throughout
    check_values("betaincinv", [a[:45], b[:45], y[:45]], dtype=np.float32, rtol=2e-4, atol=1e-30)


def test_betaincinv_roundtrip_transforms_grads():
    a, b, y = np.array([0.5, 2.0, 8.0, 30.0, 1.0]), np.array([0.7, 3.0, 1.5, 45.0, 1.0]), \
        np.array([0.2, 0.9, 0.5, 0.01, 0.33])
    x = xp.special.betaincinv(*[xp.asarray(v) for v in (a, b, y)])
    np.testing.assert_allclose(sc.betainc(a, b, np.asarray(x)), y, rtol=1e-13)
    check_transforms("betaincinv", [a, b, y], rtol=1e-12)
    check_grad("betaincinv", [a, b, y], argnums=(2,), rtol=1e-5, second=False)
    check_grad("betaincinv", [a, b, y], argnums=(0, 1), rtol=1e-5, second=False)


@pytest.mark.slow   # nested while_loops compiled per shape, dtype and transform
@pytest.mark.parametrize("name", ["stdtrit", "fdtri", "bdtri", "nbdtri"])
def test_distribution_inverses(name):
    if name == "stdtrit":
        args = [10 ** RNG.uniform(-1, 3, 30), RNG.uniform(0, 1, 30)]
        edge = [(inf, .3), (0, .3), (-1, .3), (1, 1), (1, 1.5), (3, .5), (nan, .3), (1, nan), (4, 1e-8)]
        small = [np.array([0.8, 3.0, 12.0]), np.array([0.2, 0.6, 0.93])]
    elif name == "fdtri":
        args = [RNG.uniform(.5, 50, 30), RNG.uniform(.5, 50, 30), RNG.uniform(0, 1, 30)]
        edge = [(1, 1, 0), (1, 1, 1), (1, 1, -.1), (0, 1, .5), (1, inf, .5), (inf, 1, .5), (2, 3, nan)]
        small = [np.array([1.0, 4.0, 12.0]), np.array([2.5, 8.0, 30.0]), np.array([0.3, 0.5, 0.95])]
    else:
        n = np.floor(RNG.uniform(21, 60, 30))
        args = [np.floor(RNG.uniform(0, 20, 30)), n, RNG.uniform(0, 1, 30)]
        edge = [(2.5, 5, .3), (-1, 5, .3), (-0.5, 5, .3), (5, 5, .3), (0, 5, .3), (2, 5, 0), (2, 5, 1),
                (2, 5.5, .3), (2, 0, .3), (2, 5, nan), (2, 5, -.1)]
        small = [np.array([1.0, 3.0, 10.0]), np.array([4.0, 12.0, 40.0]), np.array([0.3, 0.45, 0.8])]
    check_values(name, args, rtol=1e-10)
    check_values(name, list(np.array(edge, dtype=float).T), rtol=1e-10)
    check_values(name, args, dtype=np.float32, rtol=1e-4)
    check_transforms(name, [v[:4] for v in args], rtol=1e-10)
    check_grad(name, small, argnums=(len(small) - 1,), rtol=1e-5, second=False)


def test_stdtrit_at_zero_is_minus_inf():
    # scipy 1.17.1 returns +inf at p = 0 (and for tiny p); the quantile of probability 0 is -inf
    got = np.asarray(xp.special.stdtrit(xp.asarray([3.0, 3.0]), xp.asarray([0.0, 1.0])))
    np.testing.assert_array_equal(got, [-inf, inf])
    assert sc.stdtr(3.0, float(xp.special.stdtrit(3.0, 1e-30))) == pytest.approx(1e-30, rel=1e-9)


def test_stdtrit_whose_x_is_below_the_smallest_normal_number():
    """A tiny df puts x = df / (df + t^2) below the smallest normal number while t is finite (t ~ q^(-1/df)):
    stdtrit(0.001, 0.3) = -1.1e220 was -inf. Checked through mpmath's distribution function (50 digits) at our t,
    eager and jit; where the root is beyond the largest double, mpmath's tail at -max is above p (-inf right).
    (scipy 1.17.1 returns ~+-2e152 for all of these.)"""
    import mpmath
    mpmath.mp.dps = 50

    def cdf(df, t):
        df, t = mpmath.mpf(df), mpmath.mpf(t)
        return mpmath.betainc(df / 2, 0.5, 0, df / (df + t * t), regularized=True) / 2
    df = np.array([0.001, 0.05, 0.002, 0.01, 0.02, 0.001, 0.00133, 0.004])
    p = np.array([0.3, 1e-10, 0.2, 1e-20, 0.49, 0.7, 0.18, 0.999])
    for f in (xp.special.stdtrit, jit(xp.special.stdtrit)):
        t = np.asarray(f(xp.asarray(df), xp.asarray(p)))
        for d, q, v in zip(df, p, t):
            if np.isinf(v):
                assert (v < 0) == (q < 0.5) and float(cdf(d, -np.finfo(np.float64).max)) > min(q, 1 - q), (d, q)
            else:
                got = float(cdf(d, -abs(v))) if v < 0 else 1 - float(cdf(d, -v))
                assert got == pytest.approx(q, rel=1e-11), (d, q, v)
        assert np.isfinite(t).sum() == 5
    # derivatives there (they were NaN: the solver's x = 0), against central differences
    from transforms import grad
    g = grad(lambda d, q: xp.special.stdtrit(d, q), argnums=(0, 1))(xp.asarray(0.001), xp.asarray(0.3))
    st = lambda d, q: float(xp.special.stdtrit(d, q))  # noqa: E731
    fd = [(st(0.001 + 1e-9, 0.3) - st(0.001 - 1e-9, 0.3)) / 2e-9,
          (st(0.001, 0.3 + 1e-7) - st(0.001, 0.3 - 1e-7)) / 2e-7]
    np.testing.assert_allclose([float(v) for v in g], fd, rtol=1e-5)


def test_fdtri_whose_complement_is_below_the_smallest_normal_number():
    """A tiny dfd puts 1 - w (w = dfn x / (dfd + dfn x)) below the smallest normal number while x is finite:
    fdtri(1, 0.001, 0.3) = 1.6e306 was inf. Through mpmath's survival function (60 digits) at our x, eager and jit;
    where the root is beyond the largest double, mpmath at that double is below p (inf right)."""
    import mpmath
    mpmath.mp.dps = 60

    def cdf(a, b, x):
        a, b, x = mpmath.mpf(a), mpmath.mpf(b), mpmath.mpf(x)
        return 1 - mpmath.betainc(b / 2, a / 2, 0, b / (b + a * x), regularized=True)
    dfn = np.array([1.0, 5.0, 3.0, 418.493919498276, 2.0, 1.0])
    dfd = np.array([0.001, 0.004, 0.01, 0.0027243865343930846, 0.003, 0.0012])
    p = np.array([0.3, 0.6, 0.5, 0.7799406507915625, 0.01, 0.35])
    for f in (xp.special.fdtri, jit(xp.special.fdtri)):
        x = np.asarray(f(xp.asarray(dfn), xp.asarray(dfd), xp.asarray(p)))
        for a, b, q, v in zip(dfn, dfd, p, x):
            if np.isinf(v):
                assert float(cdf(a, b, np.finfo(np.float64).max)) < q, (a, b, q)
            else:
                assert float(cdf(a, b, v)) == pytest.approx(q, rel=1e-11), (a, b, q, v)
        assert np.isfinite(x).sum() == 4


def test_inverse_is_accurate_where_the_complement_would_cancel():
    """For y > 1/2 the inverse solves the complement and takes 1 - s, which is 0 where the answer is
    below eps (betaincinv(0.0123, 0.5, 0.6125) = 2.3e-17; stdtrit at df = 0.0247 came out -inf):
    those are solved in their own tail. Eager and jit, against scipy."""
    from transforms import jit
    rng = np.random.default_rng(0)
    a = 10 ** rng.uniform(-3, 0.5, 300)
    b = 10 ** rng.uniform(-3, 0.5, 300)
    y = rng.uniform(0.01, 0.99, 300)
    want = sc.betaincinv(a, b, y)
    keep = (want > 1e-300) & (want < 1)          # where the answer is a normal float
    for f in (xp.special.betaincinv, jit(xp.special.betaincinv)):
        got = np.asarray(f(xp.asarray(a), xp.asarray(b), xp.asarray(y)))
        small = np.minimum(want, 1 - want)[keep]
        np.testing.assert_array_less(np.abs(got[keep] - want[keep]) / small, 1e-7)
    df, p = 0.024697149340741038, 0.30625543914454534
    np.testing.assert_allclose(float(xp.special.stdtrit(xp.asarray(df), xp.asarray(p))), sc.stdtrit(df, p),
                               rtol=1e-9)


# (k, n, y, p): nbdtr(k, n, p) = I_p(n, k + 1) = y solved in mpmath (40 digits); k, n as scipy's C int
# sees the int64 draws of scipy's test_support_alternative_backends[nbdtri-*-shapes3]. scipy itself is
# 1.5e-6 (y float64) and 3e-7 (y from float32) off at these points (0.3671731834653209 for the first),
# so that test, which compares with scipy at rtol 6e-8, fails for an accurate nbdtri.
NBDTRI_BIG = [(1703621934, 988459838, 0.5301100251013665, 0.36717373791474245),
              (1185531110, 988459838, 0.5301100251013665, 0.45467603827442477),
              (1703621934, 536837432, 0.4953603446483612, 0.23961032489890619),
              (1281330012, 988459838, 0.4953603446483612, 0.4354850572592412)]


def test_nbdtri_near_1e9_against_mpmath():
    k, n, y, want = (np.array(v) for v in zip(*NBDTRI_BIG))
    args = [xp.asarray(k.astype(np.int64)), xp.asarray(n.astype(np.int64)), xp.asarray(y)]
    # (jit on the points repeated to 128: the int64 program test_beta's integer-wrap test compiled, loaded from
    # the session's compile cache; nbdtri is elementwise, so each entry is its point's answer)
    tiled = [xp.asarray(np.resize(np.asarray(v), 128)) for v in args]
    for got in (xp.special.nbdtri(*args), jit(xp.special.nbdtri)(*tiled)):
        np.testing.assert_allclose(np.asarray(got), np.resize(want, np.size(got)), rtol=1e-13)
    # the same through betaincinv and back through nbdtr
    np.testing.assert_allclose(np.asarray(xp.special.betaincinv(xp.asarray(n * 1.0), xp.asarray(k + 1.0), xp.asarray(y))),
                               want, rtol=1e-13)
    np.testing.assert_allclose(np.asarray(xp.special.nbdtr(args[0], args[1], xp.asarray(want))), y, rtol=1e-10)


def test_fdtri_tiny_quantile_against_mpmath():
    # scipy's test_support_alternative_backends[fdtri-float64-shapes3] point: the answer ~4e-14 is in
    # the tail where 1 - s of the complement solution cancels (was 2.7e-14); mpmath at 40 digits
    # (the point repeated N_JIT times: the jit program test_distribution_inverses[fdtri]'s check_transforms
    # compiled; fdtri is elementwise, so each entry is that point's answer)
    dfn, dfd, p = 0.024697149340741038, 1.2151931669903688, 0.6438355111480759
    for f in (xp.special.fdtri, jit(xp.special.fdtri)):
        got = np.asarray(f(*[xp.asarray(np.full(N_JIT, v)) for v in (dfn, dfd, p)]))
        np.testing.assert_allclose(got, np.full(N_JIT, 4.0538300510887386e-14), rtol=1e-13)


def test_betaincinv_far_tails():
    """Far in a tail I_x is near a power of x: Halley steps on I_x - y in x crawled or halved there and stopped
    after 40 at a wrong x (betaincinv(100, 1, 1e-20) was 0.043, not 0.631; bdtri(0, 100, 1e-300) 1.0, not
    0.999), and the complement's redo solved from 1 - y = 1 (betaincinv(1e5, 0.5, 1e-20) was 1.1e-16). Closed
    forms where b = 1 (x = y^(1/a)) and a = 1 (1 - x = (1 - y)^(1/b)); elsewhere I_x by mpmath at 40 digits."""
    import mpmath
    a = np.array([100.0, 1.5, 3.0, 10.0, 1e5, 1.0, 10.0, 10.0, 1e5, 1.5])
    b = np.array([1.0, 1.0, 1.0, 1.0, 1.0, 50.0, 10.0, 1e3, 0.5, 1.5])
    y = np.array([1e-20, 1e-300, 1e-100, 1e-300, 1e-20, 1e-200, 1e-100, 1e-300, 1e-20, 1e-300])
    want = np.where(b == 1, y ** (1 / a), -np.expm1(np.log1p(-y) / b))
    for f in (xp.special.betaincinv, jit(xp.special.betaincinv)):
        got = np.asarray(f(*[xp.asarray(np.resize(v, N_JIT)) for v in (a, b, y)]))[:len(a)]
        closed = (a == 1) | (b == 1)
        np.testing.assert_allclose(got[closed], want[closed], rtol=1e-13)
        mpmath.mp.dps = 40
        for i in np.nonzero(~closed)[0]:
            back = float(mpmath.betainc(a[i], b[i], 0, got[i], regularized=True))
            cond = a[i] + abs(b[i] - 1) * got[i] / (1 - got[i])   # (d log I / d log x: an ulp of x moves I so)
            assert abs(back - y[i]) <= 1e-13 * cond * y[i], (a[i], b[i], y[i], got[i], back)
    k, n = xp.asarray(np.zeros(3)), xp.asarray(np.array([100.0, 800.0, 10.0]))
    np.testing.assert_allclose(np.asarray(xp.special.bdtri(k, n, xp.asarray(np.array([1e-300, 1e-20, 1e-100])))),
                               [0.999, -np.expm1(np.log(1e-20) / 800), 1 - 1e-10], rtol=1e-13)


def test_betaincinv_at_the_smallest_normal_number():
    """y = the smallest normal: a Halley step ending an ulp below the root underflows I_x to 0, and the jump
    for an underflowed I_x went to sqrt(x) whatever the iterates above the root had shown, cycling until the
    iteration limit (betaincinv(3, 3, 2.2e-308) was 3.6e-52 under jit, not 1.9e-103; float32 betaincinv(2, 10,
    1.2e-38) eagerly 1.2e-10, not 1.5e-20). I_x of the answer by mpmath at 40 digits; d log I / d log x ~ a."""
    import mpmath
    mpmath.mp.dps = 40
    a, b = np.array([3.0, 2.0, 10.0]), np.array([3.0, 10.0, 2.0])
    for dt, fs, rtol in ((np.float64, (xp.special.betaincinv, jit(xp.special.betaincinv)), 1e-12),
                         (np.float32, (xp.special.betaincinv,), 2e-4)):
        y = float(np.finfo(dt).tiny)
        for f in fs:
            n = N_JIT if dt == np.float64 else len(a)
            got = np.asarray(f(*[xp.asarray(np.resize(v, n).astype(dt)) for v in (a, b, np.full(n, y))]))[:len(a)]
            for i in range(len(a)):
                back = float(mpmath.betainc(a[i], b[i], 0, float(got[i]), regularized=True))
                assert abs(back / y - 1) <= rtol, (dt, a[i], b[i], got[i], back)


@pytest.mark.parametrize("name", ["stdtrit", "fdtri", "betaincinv"])
def test_float32_inverses_are_solved_in_float64(name):
    """scipy's float32 loops call the float64 kernel; solved in float32 arithmetic, a small parameter amplified
    the solver's rounding (t ~ q^(-1/df): float32 stdtrit(1.6e-4, 0.502) was 1.3e5 ulps off). Within 1 ulp of
    scipy's float64 value at 2,000 points (parameters of mixed magnitude, probabilities uniform), eagerly (and
    stdtrit under jit: one compile, the three share the solver)."""
    rng = np.random.default_rng(8)
    par = lambda: (rng.choice([1e-3, 1e-1, 1.0, 10.0, 1e3], 2000) * rng.random(2000)).astype(np.float32)  # noqa: E731
    args = [par() for _ in range(1 if name == "stdtrit" else 2)] + [rng.random(2000).astype(np.float32)]
    check_float32_ulps(name, args, under_jit=name == "stdtrit")


def test_fdtri_and_stdtrit_with_a_small_dfd_against_mpmath():
    """A small b = dfd/2 amplifies by 1/b the rounding of 1 - p, for which the solver solved (fdtri(5, 1e-10, 1e-8)
    was 8.6e-6 off; these draws up to 1e-2), and the tail form's log b + betaln(b, a) cancelled to ~b
    (stdtrit(1e-4, 0.49) was 6e-12 off). The forward check cdf(x) = p cannot see such errors (a relative change r
    of x moves the cdf by ~b r), so the oracle is the root itself: p = 1 - I_z(b, a) from a drawn z (then rounded)
    is solved again for z in mpmath (40 digits), x = dfd (1 - z) / (dfn z). Eager and jit; derivatives against
    central differences in the tail form and in the polished solve."""
    import mpmath
    mpmath.mp.dps = 40
    rng = np.random.default_rng(5)
    dfd, dfn, lz = 10 ** rng.uniform(-12, -1.5, 40), 10 ** rng.uniform(-1, 2.5, 40), -rng.uniform(0.7, 700, 40)
    p, want = [], []
    for a, b, u in zip(dfn / 2, dfd / 2, lz):
        a, b = mpmath.mpf(a), mpmath.mpf(b)
        q = float(mpmath.betainc(b, a, mpmath.exp(u), 1, regularized=True))
        z = mpmath.exp(mpmath.findroot(lambda v: mpmath.log(mpmath.betainc(b, a, mpmath.exp(v), 1, regularized=True)
                                                            / q), u))
        p.append(q)
        want.append(float(b * (1 - z) / (a * z)))
    for f in (xp.special.fdtri, jit(xp.special.fdtri)):
        np.testing.assert_allclose(np.asarray(f(xp.asarray(dfn), xp.asarray(dfd), xp.asarray(p))), want, rtol=5e-13)
    # stdtrit(df, q), q < 1/2: I_x(df/2, 1/2) = 2q, x = df / (df + t^2), t < 0; x = e^-404, e^-356, e^-4000
    df, q = np.array([1e-4, 1e-3, 2e-5]), np.array([0.49, 0.3, 0.45])
    want = []
    for d, v in zip(df, q):
        h = mpmath.mpf(d) / 2
        lx0 = (mpmath.log(2 * v) + mpmath.log(h * mpmath.beta(h, 0.5))) / h
        x = mpmath.exp(mpmath.findroot(lambda u: mpmath.log(mpmath.betainc(h, 0.5, 0, mpmath.exp(u), regularized=True)
                                                            / (2 * v)), lx0))
        want.append(-float(mpmath.sqrt(2 * h * (1 / x - 1))))
    for f in (xp.special.stdtrit, jit(xp.special.stdtrit)):
        np.testing.assert_allclose(np.asarray(f(xp.asarray(df), xp.asarray(q))), want, rtol=1e-13)
    from transforms import grad
    fd = lambda a, b, q: float(xp.special.fdtri(a, b, q))  # noqa: E731
    for a, b, q, h in ((2.0, 1e-8, 1e-7, (1e-7, 1e-14, 1e-14)), (5.0, 1e-10, 1e-8, (1e-6, 1e-16, 1e-16))):
        g = grad(xp.special.fdtri, argnums=(0, 1, 2))(xp.asarray(a), xp.asarray(b), xp.asarray(q))
        num = [(fd(a + h[0], b, q) - fd(a - h[0], b, q)) / (2 * h[0]),
               (fd(a, b + h[1], q) - fd(a, b - h[1], q)) / (2 * h[1]),
               (fd(a, b, q + h[2]) - fd(a, b, q - h[2])) / (2 * h[2])]
        np.testing.assert_allclose([float(v) for v in g], num, rtol=1e-5)


def test_fdtri_whose_w_is_below_the_smallest_normal_number():
    """x = (dfd / dfn) w / (1 - w) is a normal number while w is not, where dfd / dfn is large: fdtri(0.026, 14.9,
    8.9e-5) = 1.27e-305 came out 0 (the solver's w, flushed). Points drawn by their answer (log x in [-708, -695]),
    p = I_w(dfn/2, dfd/2) there and rounded, then solved again for x in mpmath (40 digits); eager and jit. The
    p-derivative there is x / (p dfn/2) (the tail's x ~ p^(2/dfn))."""
    import mpmath
    mpmath.mp.dps = 40
    rng = np.random.default_rng(7)
    dfn, dfd, lx = 10 ** rng.uniform(-2, -0.5, 30), 10 ** rng.uniform(1, 3, 30), rng.uniform(-708, -695, 30)
    p, want = [], []
    for a, b, u in zip(dfn / 2, dfd / 2, lx):
        a, b = mpmath.mpf(a), mpmath.mpf(b)
        w = lambda v: 1 / (1 + b / (a * mpmath.exp(v)))  # noqa: E731  (x = (b/a) w / (1 - w))
        q = float(mpmath.betainc(a, b, 0, w(u), regularized=True))
        p.append(q)
        want.append(float(mpmath.exp(mpmath.findroot(lambda v: mpmath.log(mpmath.betainc(a, b, 0, w(v),
                                                                                          regularized=True) / q), u))))
    assert min(want) < 1e-305 and min(p) > 0
    for f in (xp.special.fdtri, jit(xp.special.fdtri)):
        np.testing.assert_allclose(np.asarray(f(xp.asarray(dfn), xp.asarray(dfd), xp.asarray(p))), want, rtol=1e-12)
    from transforms import grad
    i = int(np.argmin(want))
    g = grad(xp.special.fdtri, argnums=2)(xp.asarray(dfn[i]), xp.asarray(dfd[i]), xp.asarray(p[i]))
    np.testing.assert_allclose(float(g), want[i] / (p[i] * dfn[i] / 2), rtol=1e-9)
