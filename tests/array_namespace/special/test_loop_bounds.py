"""Loops inside xp.special never run a number of trips that grows with an argument's value (issue 24,
item 3): the calls that used to (yn at order 2**40 ran ~2**40 trips in one executable, deaf to Ctrl-C;
zeta and polygamma at q ~ -1e6 ran a million) finish, in a subprocess with a timeout, so a regression
fails instead of hanging the suite; and their values are right, against scipy.special where scipy is
right and against closed forms where scipy itself wraps the order to a C int or loops |q| times.
Eagerly, under jit and under vmap alike.
"""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import scipy.special as sc

import array_namespace as xp
from transforms import jit, vmap

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def _three_ways(f, *arrays):
    """f eagerly, under jit and under vmap (over the first axis), as NumPy arrays."""
    return (np.asarray(f(*arrays)), np.asarray(jit(f)(*arrays)), np.asarray(vmap(f)(*arrays)))


def test_huge_orders_and_negative_q_finish():
    """The calls of the issue, each eagerly, under jit and vmap, in a fresh process: a loop growing with
    n (2**40 trips) or |q| could not finish within the timeout."""
    code = textwrap.dedent("""
        import numpy as np, scipy.special as sc, array_namespace as xp
        from transforms import jit, vmap
        x = xp.asarray([0.5])
        for n in (2 ** 40, 1e12, -2 ** 40):
            for f in (lambda v: xp.special.yn(n, v), jit(lambda v: xp.special.yn(n, v)),
                      vmap(lambda v: xp.special.yn(n, v))):
                assert np.asarray(f(x)).tolist() == [-np.inf], (n, np.asarray(f(x)))
        q = xp.asarray([-3e15 - 0.5, -1e6 - 0.5])
        for f in (lambda v: xp.special.zeta(2.0, v), jit(lambda v: xp.special.polygamma(1.0, v)),
                  vmap(lambda v: xp.special.zeta(2.0, v))):
            want = np.pi ** 2 - sc.zeta(2.0, [3e15 + 1.5, 1e6 + 1.5])   # the terms below 0 mirror those above
            np.testing.assert_allclose(np.asarray(f(q)), want, rtol=1e-14)
        print("finished")
    """)
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src"))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and "finished" in out.stdout, out.stderr[-2000:]


def test_yn_at_the_recurrence_bound_matches_scipy():
    """Orders up to the bound run the recurrence (scipy's method): the same values there; one element
    per order in one call, so a small order does not stop at a large one's trip count or vice versa."""
    from xla.lower_special_erf import YN_REC_MAX
    n = np.array([2.0, 7.0, 1000.0, YN_REC_MAX, -YN_REC_MAX + 1, YN_REC_MAX, 3.0])
    x = np.array([0.3, 40.0, 900.0, 1.1 * YN_REC_MAX, 1.2 * YN_REC_MAX, 0.999 * YN_REC_MAX, 1e-300])
    for got in _three_ways(xp.special.yn, xp.asarray(n), xp.asarray(x)):
        np.testing.assert_allclose(got, sc.yn(n.astype(int), x), rtol=1e-9, atol=1e-300)


def test_yn_beyond_the_bound():
    """Above the bound: -inf (+inf for odd negative n) where Y_n(x) overflows -- scipy.special.yv, whose
    large-order method (AMOS) is not a recurrence, agrees -- and NaN where Y_n(x) is finite (no
    large-order asymptotic form here), never a value from a wrapped or truncated order."""
    from xla.lower_special_erf import YN_REC_MAX
    big = float(YN_REC_MAX + 1)
    n = np.array([big, -big, 2.0 ** 40, 1e12, -(2.0 ** 40), 1e300, big, 2.0 ** 40, big, 1e12])
    x = np.array([0.5, 0.5, 1e11, 0.99e12, 3.0, 1e299, 0.9 * big, 2.0 ** 40, 2 * big, 1e13])
    want = np.array([-np.inf, np.inf] + [-np.inf] * 5)
    amos = sc.yv(n, x)
    np.testing.assert_array_equal(amos[[0, 1, 2, 3, 4, 6]], want[[0, 1, 2, 3, 4, 6]])   # (yv gives up at 1e300)
    for got in _three_ways(xp.special.yn, xp.asarray(n), xp.asarray(x)):
        np.testing.assert_array_equal(got[:7], want)
        assert np.isnan(got[7:]).all(), got


def test_yn_infinite_order():
    """yn(+-inf, x): the limit -inf at finite x >= 0 (scipy too), NaN at x = inf, x < 0 and x = NaN."""
    x = np.array([0.0, 1e-300, 0.5, 3.0, 1e300, np.inf, -1.0, np.nan])
    for n in (np.inf, -np.inf):
        want = np.array([-np.inf] * 5 + [np.nan] * 3)
        for got in _three_ways(lambda v: xp.special.yn(n, v), xp.asarray(x)):
            np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(sc.yn(n, x[[0, 1, 2, 5, 6, 7]]), want[[0, 1, 2, 5, 6, 7]])


@pytest.mark.parametrize("x", [2.0, 3.0, 6.0, 7.0])
def test_zeta_far_negative_q(x):
    """zeta(x, q) at negative non-integer q below the summed range (-64), in closed form: against scipy
    (which sums the |q| terms one by one) over q in (-1e4, -64), to rounding of the terms' scale (odd x
    cancels: terms mirror each other); polygamma(n, q) = (-1)^(n+1) n! zeta(n+1, q) likewise. (x is an array
    argument, so the four cases run through one jit, one vmap and one polygamma program.)"""
    from transforms.primitives.special_gamma import ZETA_LOOP
    q = -np.geomspace(ZETA_LOOP, 1e4, 200) - np.linspace(0.013, 0.987, 200)
    want = sc.zeta(x, q)
    scale = sc.zeta(x, np.ceil(q) - q) + sc.zeta(x, q - np.floor(q))
    xs = np.full(q.shape, x)
    for got in _three_ways(xp.special.zeta, xp.asarray(xs), xp.asarray(q)):
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=4e-15 * scale.max())
        assert (np.abs(got - want) <= 4e-15 * scale).all()
    got = np.asarray(jit(xp.special.polygamma)(xp.asarray(xs - 1), xp.asarray(q)))
    np.testing.assert_allclose(got, sc.polygamma(x - 1, q), rtol=1e-13, atol=4e-15 * (scale * sc.gamma(x)).max())
