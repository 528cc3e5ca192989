"""Complex transcendentals on the host (xla/lower_elementwise_complex.py) equal XLA; through the
namespace they compile nothing for a new shape.

The oracle for a kernel is the primitive's lowering run by XLA (test_host_kernels._xla). Grids: finite
values with +-0 parts, branch cuts (real axis beyond +-1, imaginary axis beyond +-i, the negative real
axis), huge (1e300 / 1e37) and tiny (1e-300, 1e-20) parts, and bands across the overflow thresholds of
exp. The kernels take every finite value (atan/atanh: all but a pole's neighbourhood), host == XLA there
(rtol 1e-13 for complex128, 2e-6 for complex64, signs of zeros included); non-finite parts decline and
the eager call runs XLA. Through the namespace (xp.exp, ...) the staged body with the standard's special
values runs op by op on these kernels: no compile on new shapes, values equal jit.
"""
import functools

import numpy as np
import pytest

import array_namespace as xp
from transforms import jit
from transforms.primitives import elementwise as E
from xla import host, runtime
from xla.host import host_kernels
from xla.lower_elementwise_complex import COMPLEX_KERNELS, complex_div, sign_xla, smith_div

from test_host_kernels import _host, _xla, compare, flushed, subnormal, xla_many

pytestmark = pytest.mark.skipif(host.MODE == "xla", reason="host kernels switched off (ARRAY_NAMESPACE_EAGER=xla)")

CDTYPES = [np.dtype(np.complex64), np.dtype(np.complex128)]
COVERED = sorted(COMPLEX_KERNELS, key=lambda p: p.name)
POLES = {E.atan_p, E.atanh_p}   # decline re (atanh) / im (atan) == +-1 with the other part tiny
DECLINED = [E.sin_p, E.cos_p, E.sinh_p, E.cosh_p, E.log1p_p, E.expm1_p]


def grid(dt, zeros=True, nonfinite=False):
    ft = np.float32 if dt == np.complex64 else np.float64
    big, small = (1e37, 1e-37) if ft == np.float32 else (1e300, 1e-300)
    vals = [1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, 1e-20, -1e-20, 1e-8, -1e-8, 0.999, 1.001, -1.001,
            10.0, -10.0, 100.0, -100.0, 88.0, -88.0, 700.0, -700.0, big, -big, small, -small, 1e10, -1e10]
    if zeros:
        vals += [0.0, -0.0]
    if nonfinite:
        vals += [np.inf, -np.inf, np.nan]
    r = np.array(vals, ft)
    out = np.empty((len(r), len(r)), dt)
    out.real, out.imag = r[:, None], r[None, :]
    return out.reshape(-1)


def bands(dt):
    """Across exp's overflow threshold (and twice it), against moderate and zero parts, both ways round."""
    ft = np.float32 if dt == np.complex64 else np.float64
    lim = 88.72 if ft == np.float32 else 709.78
    r = np.linspace(lim - 2, 2 * lim + 3, 25)
    r = np.concatenate([r, -r, [0.0, -0.0, 0.5, 1.5707963, 3.14159, 20.0, -20.0]]).astype(ft)
    b = (r[:, None] + 1j * r[None, :]).reshape(-1)
    return np.concatenate([b, b.imag + 1j * b.real]).astype(dt)


def _takes(prim, x):
    return host.quiet(host_kernels[prim], x) is not NotImplemented


@functools.cache
def _finite(prim, dt):
    """(the finite grid prim's kernel takes, the kernel's takes on the whole grid)"""
    x = np.concatenate([grid(dt), bands(dt)])
    takes = np.array([_takes(prim, x[i:i + 1]) for i in range(len(x))])
    return (x[takes] if prim in POLES else x), takes


@functools.cache
def _finite_xla(dt):
    """{prim: XLA's answer on _finite(prim, dt)} for every covered prim, from one program (test_host_kernels)."""
    return dict(zip(COVERED, xla_many((prim, [_finite(prim, dt)[0]], {}) for prim in COVERED)))


@pytest.mark.parametrize("prim", COVERED, ids=lambda p: p.name)
@pytest.mark.parametrize("dt", CDTYPES, ids=str)
def test_host_equals_xla_on_finite_values(prim, dt):
    x, takes = _finite(prim, dt)
    if prim in POLES:
        assert takes.mean() > 0.99
    else:
        assert takes.all(), x[~takes][:8]      # every finite value, zero parts and overflow included
    got = _host(prim, [x], {})
    assert got is not None and got[0].dtype == dt
    compare(got[0], _finite_xla(dt)[prim][0], [x], f"{prim.name}[{dt.name}]")


@pytest.mark.parametrize("prim", COVERED, ids=lambda p: p.name)
@pytest.mark.parametrize("dt", CDTYPES, ids=str)
def test_nonfinite_values_decline_and_run_on_xla(prim, dt):
    x = grid(dt, zeros=True, nonfinite=True)
    assert not _takes(prim, x)
    bad = x[~np.isfinite(x)]
    assert not any(_takes(prim, bad[i:i + 1]) for i in range(len(bad)))
    got = np.asarray(prim.bind(x))                    # the eager path: XLA's executable
    assert got.dtype == dt
    compare(got, _xla(prim, [x], {})[0], [x], f"{prim.name}[{dt.name}] eager")


def test_the_pole_neighbourhoods_decline():
    for dt in CDTYPES:
        assert not _takes(E.atanh_p, np.array([1 + 1e-20j], dt)) and not _takes(E.atan_p, np.array([1e-20 - 1j], dt))
        assert _takes(E.atanh_p, np.array([1 + 0.5j], dt)) and _takes(E.atan_p, np.array([0.5 - 1j], dt))


@pytest.mark.parametrize("prim", DECLINED, ids=lambda p: p.name)
def test_these_complex_functions_still_decline(prim):
    """sin/cos/sinh/cosh/log1p/expm1: XLA's formulas lose digits in ordinary regions (sin(1.73 +
    0.0081j) in complex64 is off in the fourth digit, sinh(1e-20 + 1e-20j) has real part 0), so no
    NumPy kernel equals them."""
    for dt in CDTYPES:
        assert not _takes(prim, np.array([0.5 + 0.25j], dt))


# ------------------------------------------------------------------ through the namespace
NAMES = ["exp", "log", "sqrt", "tan", "tanh", "asin", "acos", "asinh", "acosh", "atan", "atanh", "log2", "log10",
         "sin", "cos", "sinh", "cosh", "expm1", "log1p"]
SPECIAL = [0, -0.0, complex(0, -0.0), complex(-0.0, -0.0), complex(np.inf, 1), complex(-np.inf, 0),
           complex(np.nan, 0), complex(1, -np.inf), complex(-0.0, np.nan), complex(np.inf, np.inf),
           complex(-np.inf, np.nan), complex(np.nan, np.nan), 1, -1, 1j, -1j, complex(800, 1), complex(-2, 0)]


def _values(dt, n, seed):
    rng = np.random.default_rng(seed)
    z = (rng.normal(size=n) * 3 + 1j * rng.normal(size=n) * 3).astype(dt)
    z[:len(SPECIAL)] = SPECIAL
    return z


SIZES = (29, 31, 37)


@functools.cache
def _jit_oracles(dt):
    """{name: jit(xp.<name>) on the SIZES operands concatenated} for every name in NAMES, from one jitted function
    returning them all (elementwise: one compile per dtype, not one per shape and function)."""
    fs = [getattr(xp, name) for name in NAMES]
    z = xp.asarray(np.concatenate([_values(dt, n, n) for n in SIZES]))
    outs = jit(lambda v: [f(v) for f in fs])(z)
    return {name: np.split(np.asarray(o), np.cumsum(SIZES[:-1])) for name, o in zip(NAMES, outs)}


@pytest.mark.parametrize("name", NAMES)
def test_namespace_compiles_nothing_on_new_shapes_and_equals_jit(name, fresh_staged):
    f = getattr(xp, name)
    sizes = SIZES
    for dt in CDTYPES:
        zs, gots = [_values(dt, n, n) for n in sizes], []
        for n, zn in zip(sizes, zs):   # new shapes each
            before = runtime.compile_calls[0]
            gots.append(np.asarray(f(xp.asarray(zn))))
            assert runtime.compile_calls[0] == before, (name, dt, n)
        wants = _jit_oracles(dt)[name]   # (jit on the three operands at once, every name in one program)
        for zn, got, want in zip(zs, gots, wants):
            assert got.dtype == want.dtype == dt
            compare(got, want, [zn], f"xp.{name}[{dt.name}]")


# ------------------------------------------------------------------ pow (xla/lower_elementwise_complex.complex_pow)
def _pow_grid(dt):
    """Pairs of bases and exponents: zero parts of either sign, integers, halves, huge and tiny parts,
    and random values."""
    big, small = (1e200, 1e-200) if dt == np.complex128 else (1e30, 1e-30)
    v = np.array([0.0, -0.0, 1, -1, 2, -2.5, 0.5, 1e-3, 3.7, 30, -7, big, small, -small])
    g = (v[:, None] + 1j * v[None, :]).reshape(-1)
    x, y = np.repeat(g, len(g)), np.tile(g, len(g))
    rng = np.random.default_rng(3)
    r = rng.normal(size=(4, 2000))
    x = np.concatenate([x, 3 * r[0] + 3j * r[1]])
    y = np.concatenate([y, 2 * r[2] + 1j * r[3]])
    return x.astype(dt), y.astype(dt)


def pow_close(got, want, x, y, what):
    """host == XLA for x ** y to the conditioning of pow: a relative error eps in log x or in the
    exponent's product moves x ** y by ~eps |y| |log x|, and XLA's float32 log/atan2/exp/cos differ
    from NumPy's by an ulp or so, so the tolerance is a few eps (1 + |y| (|log|x|| + pi)). NaN and
    inf where XLA has them; an infinite part's sign only where the angle q is determined (tol < 0.1)
    and the part is not a rounding error's worth of it (|cos q| or |sin q| > 10 tol)."""
    assert got.dtype == want.dtype and got.shape == want.shape, (what, got.dtype, want.dtype)
    x, y = np.broadcast_to(x, want.shape), np.broadcast_to(y, want.shape)
    ft = np.float32 if want.dtype == np.complex64 else np.float64
    with np.errstate(all="ignore"):
        lx = np.abs(np.log(np.abs(x.astype(np.complex128))))
        tol = 8 * np.finfo(ft).eps * (1 + np.abs(y) * (np.where(np.isfinite(lx), lx, 0) + np.pi))
        x2, y2 = x.astype(np.complex128), y.astype(np.complex128)
        q = y2.real * np.angle(x2) + y2.imag * np.log(np.abs(x2))     # the angle of x ** y
        for g, w, share in ((got.real, want.real, np.cos(q)), (got.imag, want.imag, np.sin(q))):
            assert (np.isnan(g) == np.isnan(w)).all(), (what, x[np.isnan(g) != np.isnan(w)][:4])
            assert (np.isinf(g) == np.isinf(w)).all(), (what, x[np.isinf(g) != np.isinf(w)][:4])
            sure = np.isinf(w) & (tol < 0.1) & (np.abs(share) > 10 * tol)
            assert (g[sure] == w[sure]).all(), (what, x[sure][g[sure] != w[sure]][:4])
        fin = np.isfinite(want) & np.isfinite(got)
        err = np.abs(got[fin].astype(np.complex128) - want[fin])
        bad = err > tol[fin] * np.abs(want[fin]) + 4 * np.finfo(ft).tiny
    assert not bad.any(), (what, x[fin][bad][:4], y[fin][bad][:4], got[fin][bad][:4], want[fin][bad][:4])


@pytest.mark.parametrize("dt", CDTYPES, ids=str)
def test_complex_pow_on_host_equals_xla(dt):
    x, y = _pow_grid(dt)
    got = _host(E.pow_p, [x, y], {})
    assert got is not None and got[0].dtype == dt
    pow_close(got[0], _xla(E.pow_p, [x, y], {})[0], x, y, f"pow[{dt.name}]")
    # broadcasting: a 0-d exponent, a 0-d base
    for a, b in ((x[:50], np.asarray(y[7])), (np.asarray(x[9]), y[:50]), (x[:50], np.asarray(dt.type(0)))):
        pow_close(_host(E.pow_p, [a, b], {})[0], _xla(E.pow_p, [a, b], {})[0], a, b, f"pow[{dt.name}] 0-d")


@pytest.mark.parametrize("dt", CDTYPES, ids=str)
def test_complex_pow_at_a_zero_exponent_or_base_one_is_xlas_one_bit_for_bit(dt):
    """XLA's expansion gives 1 + 0j where y == 0 (either sign of either part) and where x == 1; the formula's
    imaginary part is -0.0 at some of them (pow(2, -0-0j), pow(1, -1-1j) were 1-0j eagerly, 1+0j under jit;
    found by tools/fuzz_transforms.py, seed 202). Host == XLA there, signs of zeros included; eager == jit."""
    x, y = _pow_grid(dt)
    k = ((y.real == 0) & (y.imag == 0)) | (x == 1)
    x, y = x[k], y[k]
    got, want = _host(E.pow_p, [x, y], {})[0], _xla(E.pow_p, [x, y], {})[0]
    bad = (got.view(np.uint8).reshape(len(x), -1) != want.view(np.uint8).reshape(len(x), -1)).any(axis=1)
    assert not bad.any(), (x[bad][:4], y[bad][:4], got[bad][:4], want[bad][:4])
    assert (want == 1).all()
    f = lambda a, b: xp.pow(a, b)  # noqa: E731
    for base, exps in ((1, xp.asarray(y)), (xp.asarray(x), xp.asarray(dt.type(complex(-0.0, -0.0))))):
        assert np.asarray(f(base, exps)).tobytes() == np.asarray(jit(f)(base, exps)).tobytes()


def test_complex_pow_declines_nonfinite_parts_and_eager_equals_xla():
    for dt in CDTYPES:
        x = np.array([complex(np.inf, 1), complex(1, np.nan), 2 + 1j], dt)
        y = np.array([0.5 + 0j, 2 + 0j, complex(-np.inf, 0)], dt)
        assert host.quiet(host_kernels[E.pow_p], x, y) is NotImplemented
        pow_close(np.asarray(E.pow_p.bind(x, y)), _xla(E.pow_p, [x, y], {})[0], x, y, f"pow[{dt.name}] eager")


def test_namespace_pow_compiles_nothing_on_new_shapes_and_equals_jit(fresh_staged):
    f = lambda a, b: xp.pow(a, b)
    for dt in CDTYPES:
        zws, gots = [], []
        for n in (29, 31, 37):
            z, w = _values(dt, n, n), _values(dt, n, n + 1)[::-1].copy()
            z, w = z[np.isfinite(z)], w[np.isfinite(z)]
            w = np.where(np.isfinite(w), w, 1.5 - 0.5j).astype(dt)
            a, b = xp.asarray(z), xp.asarray(w)
            before = runtime.compile_calls[0]
            gots.append([np.asarray(f(a, b)), np.asarray(a ** 2.5), np.asarray(xp.pow(a, 0.5 + 1j))])
            assert runtime.compile_calls[0] == before, (dt, n)
            zws.append((z, w))
        # the jit oracles on the three operands at once (elementwise: one compile each, not one per shape)
        a, b = (xp.asarray(np.concatenate(v)) for v in zip(*zws))
        cuts = np.cumsum([len(z) for z, _ in zws])[:-1]
        wants = zip(*(np.split(np.asarray(o), cuts) for o in (
            jit(f)(a, b), jit(lambda v: v ** 2.5)(a), jit(lambda v: xp.pow(v, 0.5 + 1j))(a))))
        for (z, w), got, want in zip(zws, gots, wants):
            for g, wnt, e in zip(got, want, (w, 2.5, 0.5 + 1j)):
                assert g.dtype == wnt.dtype == dt
                pow_close(g, wnt, z, np.asarray(e, dt), f"xp.pow[{dt.name}]")


# ------------------------------------------------------------------ division, sign, multiplication
# The host divides by NumPy's Smith algorithm (XLA's own, but without XLA's fused multiply-adds and flushes of
# subnormal intermediates) and recomputes XLA's way where NumPy's quotient is not finite; multiplication is
# NumPy's. Against XLA: normwise to a few ulps (a part that cancels may differ in its low digits), NaN where
# XLA has NaN, the same infinities, the same signs of zero parts where the sign is not a rounding artefact.
def _parts_grid(dt, vals):
    ft = np.float32 if dt == np.complex64 else np.float64
    v = np.array(vals, ft)
    g = np.empty((len(v), len(v)), dt)
    g.real, g.imag = v[:, None], v[None, :]
    return g.reshape(-1)



def _div_pairs(dt):
    """Every pair from a grid of parts (+-0, +-inf, NaN, the largest and smallest normal, huge, tiny, ordinary),
    random pairs, pairs whose numerator parts cancel (y = x (1 + 1e-7 t)), pairs over a wide exponent range."""
    ft = np.float32 if dt == np.complex64 else np.float64
    fi = np.finfo(ft)
    big, small, e = (1e30, 1e-30, 40) if ft == np.float32 else (1e300, 1e-300, 300)
    g = _parts_grid(dt, [0.0, -0.0, 1, -1, 2.5, -3, 1e-3, 7, np.inf, -np.inf, np.nan, big, -big, small,
                         1e10, 1e-10, float(fi.max), float(fi.tiny), 3e-20, 1e20])
    x, y = np.repeat(g, len(g)), np.tile(g, len(g))
    rng = np.random.default_rng(5)
    r = rng.normal(size=(4, 4000))
    sc = 10.0 ** rng.uniform(-e, e, size=(4, 4000))
    xr = (r[0] + 1j * r[1]).astype(dt)
    with np.errstate(over="ignore"):   # (complex64: some scaled parts overflow to inf)
        x = np.concatenate([x, xr, xr, (r[0] * sc[0] + 1j * r[1] * sc[1]).astype(dt)])
        y = np.concatenate([y, (r[2] + 1j * r[3]).astype(dt), (xr * (1 + 1e-7 * r[2])).astype(dt),
                            (r[2] * sc[2] + 1j * r[3] * sc[3]).astype(dt)])
    return x, y


def _structural(x, y):
    """Per part (re, im) of x / y or x * y: whether each of its two products has a zero factor, so that a zero
    part is exactly zero with the sign IEEE's rules give it (elsewhere a zero part is a cancellation or an
    underflow, and its sign a rounding artefact)."""
    a, b, c, d = x.real, x.imag, y.real, y.imag
    return (((a == 0) | (c == 0)) & ((b == 0) | (d == 0)), ((b == 0) | (c == 0)) & ((a == 0) | (d == 0)))


def assert_normwise(got, want, inputs, what, ulps=8, underflow=None, structural=(True, True), overflowed=None):
    """got == want to `ulps` eps normwise (|got - want| <= ulps eps |want| + 4 tiny + underflow, where
    `underflow` bounds what XLA's flushed subnormal intermediates move), NaN where NaN and the same
    infinities part by part (but where `overflowed`), the same sign of a zero part where `structural` or an
    input part is not finite. Inputs with a subnormal part are left out (XLA reads them as 0); the host's
    subnormal results are flushed (XLA's CPU code flushes them). Returns the largest error beyond
    the underflow allowances, in eps of |want|."""
    assert got.dtype == want.dtype and got.shape == want.shape, (what, got.dtype, want.dtype, got.shape, want.shape)
    shape = want.shape
    keep = ~np.logical_or.reduce([np.broadcast_to(subnormal(i), shape) for i in inputs])
    nonfinite = np.logical_or.reduce([np.broadcast_to(~np.isfinite(i), shape) for i in inputs])
    ins = [np.broadcast_to(i, shape)[keep] for i in inputs]
    g, w = flushed(got)[keep], want[keep]
    skip = np.zeros(w.shape, bool) if overflowed is None else np.broadcast_to(overflowed, shape)[keep]
    for gp, wp, st, part in ((g.real, w.real, structural[0], "re"), (g.imag, w.imag, structural[1], "im")):
        odd = (np.isnan(gp) != np.isnan(wp)) | ((np.isinf(gp) | np.isinf(wp)) & (gp != wp))
        assert not (odd & ~skip).any(), (what, part, ins[0][odd & ~skip][:4], ins[-1][odd & ~skip][:4],
                                         gp[odd & ~skip][:4], wp[odd & ~skip][:4])
        sure = (np.broadcast_to(st, shape)[keep] | nonfinite[keep]) & (gp == 0) & (wp == 0)
        sb = sure & (np.signbit(gp) != np.signbit(wp))
        assert not sb.any(), (what, part, "sign of zero", ins[0][sb][:4], ins[-1][sb][:4], gp[sb][:4], wp[sb][:4])
    fi = np.finfo(g.real.dtype)
    fin = np.isfinite(g) & np.isfinite(w)
    err = np.abs(g[fin].astype(np.complex128) - w[fin])
    allow = 4 * float(fi.tiny) + (0 if underflow is None else np.broadcast_to(underflow, shape)[keep][fin])
    bound = ulps * float(fi.eps) * np.abs(w[fin]) + allow
    bad = err > bound
    assert not bad.any(), (what, ins[0][fin][bad][:4], ins[-1][fin][bad][:4], g[fin][bad][:4], w[fin][bad][:4])
    nz = np.abs(w[fin]) > 0
    return float((np.maximum(err - allow, 0)[nz] / np.abs(w[fin][nz])).max(initial=0) / fi.eps)


def div_underflow(y):
    """What XLA's flushes move a quotient by: a subnormal numerator part (below tiny) flushed before it is
    divided by a denominator of at least max(|c|, |d|)."""
    tiny = float(np.finfo(y.real.dtype).tiny)
    with np.errstate(divide="ignore"):
        return 4 * tiny / np.maximum(np.abs(y.real), np.abs(y.imag)).astype(np.float64)


def assert_div_close(got, want, x, y, what):
    return assert_normwise(got, want, [x, y], what, underflow=div_underflow(y), structural=_structural(x, y))


@pytest.mark.parametrize("dt", CDTYPES, ids=str)
def test_complex_div_on_host_equals_xla_normwise(dt):
    x, y = _div_pairs(dt)
    assert host.quiet(host_kernels[E.div_p], x, y) is not NotImplemented   # every value, inf/NaN too
    got, want = _host(E.div_p, [x, y], {})[0], _xla(E.div_p, [x, y], {})[0]
    assert got.dtype == want.dtype == dt
    worst = assert_div_close(got, want, x, y, f"div[{dt.name}]")
    assert 0 < worst <= 4, worst                  # (2.4 / 2.6 ulps seen: NumPy's reciprocal of the denominator)
    # XLA's algorithm step by step, which the kernel takes where NumPy's quotient is not finite: on every pair
    got = host.quiet(smith_div, x, y)
    assert_div_close(got, want, x, y, f"smith_div[{dt.name}]")
    # broadcasting: a 0-d divisor, a 0-d numerator, a zero divisor, both 0-d
    for a, b in ((x[:60], np.asarray(y[70])), (np.asarray(x[90]), y[:60]), (x[:60], np.asarray(dt.type(0))),
                 (np.asarray(x[61]), np.asarray(dt.type(complex(-0.0, 0.0)))), (np.asarray(x[61]), np.asarray(y[61]))):
        got = _host(E.div_p, [a, b], {})[0]
        assert_div_close(got, _xla(E.div_p, [a, b], {})[0], a, b, f"div[{dt.name}] 0-d")


@pytest.mark.parametrize("dt", CDTYPES, ids=str)
def test_complex_div_keeps_xla_values_at_zero_and_infinite_parts(dt):
    """XLA's fix-ups where Smith's algorithm gives (NaN, NaN), and where NumPy's own values differ from XLA's:
    x / (-0 + 0j) is x times -inf (NumPy: x / +0); a finite numerator over (inf + inf j) is a zero (NumPy: NaN)."""
    inf, nan = np.inf, np.nan
    x = np.array([1 + 2j, complex(-1, 0.5), 0j, complex(inf, 1), complex(1, -inf), complex(inf, inf), 3 - 4j,
                  complex(-2, 1), complex(nan, 1), complex(inf, nan), 1 + 1j], dt)
    y = np.array([complex(-0.0, 0), complex(0, -0.0), 1j, 1 - 1j, 2 + 0j, complex(0, -0.0), complex(inf, inf),
                  complex(-inf, nan), 0j, 1 + 0j, complex(nan, inf)], dt)
    got, want = host.quiet(complex_div, x, y), _xla(E.div_p, [x, y], {})[0]
    assert_div_close(got, want, x, y, f"div[{dt.name}] specials")
    with np.errstate(all="ignore"):
        numpy = x / y
    assert not np.array_equal(numpy, want, equal_nan=True)     # (so the fix-ups are what this checks)
    for g, w in ((got.real, want.real), (got.imag, want.imag)):  # and to the bit here
        assert ((g == w) & (np.signbit(g) == np.signbit(w)) | np.isnan(g) & np.isnan(w)).all(), (got, want)


@pytest.mark.parametrize("dt", CDTYPES, ids=str)
def test_complex_sign_on_host_equals_xla(dt):
    ft = np.float32 if dt == np.complex64 else np.float64
    fi = np.finfo(ft)
    rng = np.random.default_rng(7)
    r = rng.normal(size=(2, 4000))
    x = np.concatenate([_parts_grid(dt, [0.0, -0.0, 1, -1, 2.5, -3, 1e-3, 7, np.inf, -np.inf, np.nan, 1e30, -1e-30,
                                         float(fi.max), float(fi.tiny), 3e-20, 1e20]), (r[0] + 1j * r[1]).astype(dt)])
    want = _xla(E.sign_p, [x], {})[0]
    for fn in (host_kernels[E.sign_p], sign_xla):   # the kernel, and its way where NumPy's quotient is not finite
        got = host.quiet(fn, x)
        assert got.dtype == dt
        assert assert_normwise(got, want, [x], f"sign[{dt.name}]", ulps=4, structural=(x.real == 0, x.imag == 0)) <= 2


@pytest.mark.parametrize("dt", CDTYPES, ids=str)
def test_complex_multiply_on_host_equals_xla_normwise(dt):
    """NumPy's product (ac - bd) + (ad + bc) i against XLA's (whose fused multiply-adds differ in the low digits
    of a part that cancels): to an ulp normwise, NaN and inf alike but where a product of finite parts overflows
    (XLA's fused product is not rounded to inf: (1 + 2.5j) (max - inf j) is inf - inf j in XLA, inf + NaN j in
    NumPy). Pairs: the division grid, and pairs whose product's imaginary part cancels (y ~ conj(x))."""
    x, y = _div_pairs(dt)
    rng = np.random.default_rng(11)
    r = rng.normal(size=(3, 4000))
    xr = (r[0] + 1j * r[1]).astype(dt)
    x, y = np.concatenate([x, xr]), np.concatenate([y, np.conj(xr * (1 + 1e-7 * r[2])).astype(dt)])
    got, want = _host(E.mul_p, [x, y], {})[0], _xla(E.mul_p, [x, y], {})[0]
    a, b, c, d = x.real, x.imag, y.real, y.imag
    with np.errstate(over="ignore", invalid="ignore"):
        over = [np.isinf(p * q) & np.isfinite(p) & np.isfinite(q) for p, q in ((a, c), (b, d), (a, d), (b, c))]
    overflowed = np.logical_or.reduce(over)
    worst = assert_normwise(got, want, [x, y], f"mul[{dt.name}]", ulps=4, structural=_structural(x, y),
                            overflowed=overflowed)
    assert worst <= 1.5, worst     # (an ulp seen)
    # where a product overflowed and the parts differ, NumPy's part is NaN or infinite, as XLA's is
    odd = overflowed & ((np.isnan(got) != np.isnan(want)) | (got != want) & ~np.isnan(got))
    assert odd.any() and not np.isfinite(got[odd]).any() and not np.isfinite(want[odd]).any()


DIVS = {"divide": lambda a, b: xp.divide(a, b), "sign": lambda a, b: xp.sign(a), "truediv": lambda a, b: a / b,
        "reciprocal": lambda a, b: 1 / b, "multiply": lambda a, b: xp.multiply(a, b)}


def _div_operands(dt, n):
    z, w = _values(dt, n, n), _values(dt, n, n + 1)[::-1].copy()
    w[3] = 0   # a zero divisor
    return z, w


@functools.cache
def _div_jit_oracles(dt):
    """{name: [jit(DIVS[name]) per size of SIZES]}: one jitted function returning every DIVS entry on the SIZES
    operands concatenated (elementwise: one compile per dtype, not one per shape and function)."""
    zws = [_div_operands(dt, n) for n in SIZES]
    a, b = (xp.asarray(np.concatenate([zw[i] for zw in zws])) for i in (0, 1))
    outs = jit(lambda a, b: [f(a, b) for f in DIVS.values()])(a, b)
    return {name: np.split(np.asarray(o), np.cumsum(SIZES[:-1])) for name, o in zip(DIVS, outs)}


@pytest.mark.parametrize("name", list(DIVS))
def test_namespace_division_and_sign_compile_nothing_on_new_shapes_and_equal_jit(name, fresh_staged):
    f = DIVS[name]
    for dt in CDTYPES:
        for k, n in enumerate(SIZES):   # new shapes each
            z, w = _div_operands(dt, n)
            a, b = xp.asarray(z), xp.asarray(w)
            before = runtime.compile_calls[0]
            got = np.asarray(f(a, b))
            assert runtime.compile_calls[0] == before, (name, dt, n)
            want = _div_jit_oracles(dt)[name][k]
            assert got.dtype == want.dtype == dt
            x, y = (z, w) if name in ("divide", "truediv", "multiply") else (np.ones_like(w), w) if name == "reciprocal" \
                else (z, np.ones_like(z))
            under = div_underflow(y) if name != "multiply" else None
            assert_normwise(got, want, [z, w], f"xp.{name}[{dt.name}]", underflow=under, structural=_structural(x, y))
