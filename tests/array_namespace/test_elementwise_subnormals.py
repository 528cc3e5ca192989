"""Subnormal floats follow one rule eagerly and under jit (README, "Eager work on the CPU"; xla/host.py,
"Subnormals"): on the CPU a floating-point operation reads a subnormal operand as a zero of its sign and writes
a subnormal result as a zero of its sign (DAZ+FTZ, XLA's mode), while operations that only move bits or change a
sign bit keep them.

Every elementwise function of the namespace runs on values around the subnormal range (zeros, subnormals and the
smallest normals of both signs, and ordinary values; binary functions on every pair): eager, jit and vmap agree,
and agree with NumPy run in that mode (tests/fpmode_util.py subnormals_flushed: NumPy's own arithmetic, its operands flushed
and its result flushed, since a few libm functions -- fmod, hypot -- work on the bits and are not flushed by the
control register), to the tolerances of the op table's transcendental functions."""
import functools

import numpy as np
import pytest

import array_namespace as xp
from transforms import jit, vmap
from xla import host
from fpmode_util import subnormals_flushed

pytestmark = [pytest.mark.skipif(not host.FLUSHES, reason="host kernels do not flush subnormals here (no mode to set)"),
              pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")]   # (inf - inf)

TOL = {"float32": 1e-5, "float64": 1e-9}   # tests/test_op_table.py's rtol for eager against NumPy


def values(dt):
    fi = np.finfo(dt)
    t, s = float(fi.tiny), float(fi.smallest_subnormal)
    v = [0.0, s, t / 3, t - s, t, 2 * t, 0.5, 1.0, 1.5, 3.0]
    return np.array(v + [-x for x in v], dtype=dt)


NP = {"acos": np.arccos, "acosh": np.arccosh, "asin": np.arcsin, "asinh": np.arcsinh, "atan": np.arctan,
      "atanh": np.arctanh, "atan2": np.arctan2, "conj": np.conjugate, "pow": np.power}
UNARY = ("abs acos acosh asin asinh atan atanh ceil conj cos cosh exp expm1 floor isfinite isinf isnan log log10 "
         "log1p log2 negative positive real reciprocal round sign signbit sin sinh sqrt square tan tanh trunc").split()
BINARY = ("add atan2 copysign divide equal floor_divide greater greater_equal hypot less less_equal logaddexp "
          "maximum minimum multiply nextafter not_equal pow remainder subtract").split()
# only move bits or change a sign bit: subnormals kept (nextafter steps by ulps, on the bits)
KEEP = {"abs", "conj", "negative", "positive", "real", "copysign", "signbit", "nextafter", "isfinite", "isinf",
        "isnan"}


def flush(a):
    a = np.asarray(a)
    if a.dtype.kind == "c":   # (part by part: the zeros keep their signs)
        out = a.copy()
        out.real, out.imag = flush(a.real), flush(a.imag)
        return out
    if a.dtype.kind != "f":
        return a
    return np.where(np.abs(a) < np.finfo(a.dtype).tiny, a * 0, a)


def oracle(name, *args):
    fn = NP.get(name, getattr(np, name, None))
    with subnormals_flushed(), np.errstate(all="ignore"):
        if name in KEEP:
            return fn(*args)
        return flush(fn(*map(flush, args)))


def same(got, want, dt, zero_sign=True):
    """got == want to TOL[dt] relative (no absolute slack: a subnormal is not a zero), NaN == NaN, and zeros
    of the same sign (unless zero_sign is False)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype or want.dtype.kind == "b", (got.dtype, want.dtype)
    if got.dtype.kind == "b":
        return got == want
    rtol = TOL[dt]
    ok = (got == want) | (np.isnan(got) & np.isnan(want)) | (np.abs(got - want) <= rtol * np.abs(want))
    if zero_sign:
        ok &= ~((got == 0) & (want == 0) & (np.signbit(got) != np.signbit(want)))
    return ok


def check(name, got, want, dt, args, what, zero_sign=True):
    ok = same(got, want, dt, zero_sign)
    if not np.all(ok):
        bad = np.argwhere(~np.asarray(ok))[:5]
        rows = [(tuple(float(np.asarray(a)[tuple(i)]) for a in args), np.asarray(got)[tuple(i)],
                 np.asarray(want)[tuple(i)]) for i in bad]
        pytest.fail(f"{name} {dt} {what}: {int(np.size(ok) - np.count_nonzero(ok))} differ, e.g. "
                    f"(inputs, got, want) {rows}")


@functools.cache
def jitted_all(names, dt, make_args):
    """{name: jit(xp.<name>)(*make_args(dt))} for every name, from ONE jitted function returning each one's
    result (one program per dtype: compiling is what these tests spend their time on)."""
    fs = [getattr(xp, n) for n in names]
    outs = jit(lambda *xs: [f(*xs) for f in fs])(*[xp.asarray(a) for a in make_args(dt)])
    return dict(zip(names, map(np.asarray, outs)))


def run_all(name, args, dt, jitted):
    f = getattr(xp, name)
    xs = [xp.asarray(a) for a in args]
    eager = np.asarray(f(*xs))
    mapped = np.asarray(vmap(f)(*xs))
    want = oracle(name, *args)
    # max/min of two zeros: XLA's +0.0 (max) and -0.0 (min), where NumPy picks either
    zs = name not in ("maximum", "minimum")
    check(name, eager, want, dt, args, "eager vs NumPy in the mode", zs)
    check(name, jitted, eager, dt, args, "jit vs eager")
    check(name, mapped, eager, dt, args, "vmap vs eager")


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("name", UNARY)
def test_unary(name, dt):
    run_all(name, (values(dt),), dt, jitted_all(tuple(UNARY), dt, _unary_args)[name])


def _unary_args(dt):
    return (values(dt),)


def _binary_args(dt):
    v = values(dt)
    return np.repeat(v, v.size), np.tile(v, v.size)


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("name", BINARY)
def test_binary(name, dt):
    run_all(name, _binary_args(dt), dt, jitted_all(tuple(BINARY), dt, _binary_args)[name])


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_clip(dt):
    v = values(dt)
    t = np.finfo(dt).tiny
    lo, hi = np.asarray(-2 * t, dt), np.asarray(2 * t, dt)
    f = lambda x: xp.clip(x, -2 * t, 2 * t)   # noqa: E731
    x = xp.asarray(v)
    eager = np.asarray(f(x))
    check("clip", eager, oracle("clip", v, lo, hi), dt, (v,), "eager vs NumPy in the mode")
    check("clip", np.asarray(jit(f)(x)), eager, dt, (v,), "jit vs eager")


# Functions that are x + O(x^2) near 0, and pow: libm may pass a tiny argument through by its bits, or branch on
# its bits, where the mode reads it as zero. Which forms do depends on the CPU (NumPy picks a SIMD loop per CPU,
# glibc a libm form): on an AVX2-only CPU NumPy's float arcsinh, arctanh, log1p, sinh and power are glibc's, and
# returned 1e-45 for arcsinh(1e-45) and 0 for 0 ** 5e-324.
_PASS_THROUGH = ["sin", "tan", "tanh", "atan", "expm1", "asin", "asinh", "atanh", "log1p", "sinh"]
_SCALAR_LOOPS = """
import sys
import numpy as np
sys.path[:0] = sys.argv[1:]
import test_elementwise_subnormals as T
for dt in ("float32", "float64"):
    for name in T._PASS_THROUGH:
        x = T.values(dt)
        T.check(name, getattr(T.xp, name)(T.xp.asarray(x)), T.oracle(name, x), dt, (x,), "eager vs NumPy in the mode")
    a, b = T._binary_args(dt)
    T.check("pow", T.xp.pow(T.xp.asarray(a), T.xp.asarray(b)), T.oracle("pow", a, b), dt, (a, b), "eager vs NumPy in the mode")
    z, w = T._complex_binary_args(dt)
    jitted = np.asarray(T.jit(T.xp.pow)(T.xp.asarray(z), T.xp.asarray(w)))
    assert T.close_complex(T.xp.pow(T.xp.asarray(z), T.xp.asarray(w)), jitted, dt).all(), ("complex pow", dt)
print("ok")
"""


def test_the_rule_holds_on_numpy_s_loops_without_avx512():
    """The functions above eagerly, in a process whose NumPy runs the loops of a CPU without AVX-512
    (NPY_DISABLE_CPU_FEATURES), against NumPy in the mode (complex pow: against jit)."""
    import os
    import subprocess
    import sys
    here = os.path.dirname(os.path.abspath(__file__))
    src = os.path.join(os.path.dirname(os.path.dirname(here)), "src")
    env = dict(os.environ, NPY_DISABLE_CPU_FEATURES="X86_V4 AVX512_ICL AVX512_SPR", PYTHONPATH=src)
    r = subprocess.run([sys.executable, "-c", _SCALAR_LOOPS, here, os.path.dirname(here)], capture_output=True,
                       text=True, timeout=300, env=env)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stdout[-3000:] + r.stderr[-3000:]


# ------------------------------------------------------------------ complex
def complex_values(dt, big=30.0, specials=()):
    fi = np.finfo(dt)
    t, s = float(fi.tiny), float(fi.smallest_subnormal)
    parts = np.array([0.0, -0.0, s, -s, t / 3, t, -t, 1.0, -2.5, big, *specials], dt)
    re, im = np.meshgrid(parts, parts)
    return (re + 1j * im).ravel()


def close_complex(got, want, dt):
    """Parts equal to TOL[dt] relative to |want| (a part near zero beside a large one is rounding)."""
    got, want = np.asarray(got), np.asarray(want)
    if got.dtype.kind == "b":
        return got == want
    scale = np.abs(want)
    ok = np.ones(got.shape, bool)
    for g, w in ((got.real, want.real), (got.imag, want.imag)):
        ok &= (g == w) | (np.isnan(g) & np.isnan(w)) | (np.abs(g - w) <= TOL[dt] * scale)
    return ok


COMPLEX_UNARY = ("abs acos acosh asin asinh atan atanh conj cos cosh exp expm1 log log10 log1p log2 negative "
                 "reciprocal sign sin sinh sqrt square tan tanh").split()
COMPLEX_BINARY = ["add", "subtract", "multiply", "divide", "equal", "not_equal", "pow"]


def _complex_unary_args(dt):
    # (with infinite and NaN parts: the standard's special-value lists meet subnormal parts there; tanh(s + inf j)
    # is 0 + NaN j, a subnormal read as zero, which under jit was NaN + NaN j)
    return (complex_values(dt, specials=(np.inf, -np.inf, np.nan)).astype(np.result_type(dt, np.complex64)),)


def _complex_binary_args(dt):
    z = complex_values(dt, big=3.0).astype(np.result_type(dt, np.complex64))
    return np.repeat(z, z.size), np.tile(z, z.size)


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("name", COMPLEX_UNARY)
def test_complex_unary_jit_and_vmap_agree_with_eager(name, dt):
    z = _complex_unary_args(dt)[0]
    f, x = getattr(xp, name), xp.asarray(z)
    eager = np.asarray(f(x))
    jitted = jitted_all(tuple(COMPLEX_UNARY), dt, _complex_unary_args)[name]
    for what, got in (("jit", jitted), ("vmap", vmap(f)(x))):
        ok = close_complex(got, eager, dt)
        assert ok.all(), (name, what, z[~ok][:4], np.asarray(got)[~ok][:4], eager[~ok][:4])


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("name", ["acos", "acosh", "asin", "asinh"])
def test_complex_inverse_trig_at_branch_points(name, dt):
    """At +-1 + yj with tiny <= |y| < 2 * tiny (asinh: y +- 1j) XLA's formula halves |y| into a subnormal; the
    lowering keeps the part of size sqrt(|y|) that it would lose: jit and vmap give eager's (NumPy's) bits."""
    t = float(np.finfo(dt).tiny)
    ct = np.result_type(dt, np.complex64)
    ys = np.array([t, -t, 1.5 * t, -1.5 * t], dt)
    z = np.array([complex(u, y) for u in (1.0, -1.0) for y in ys], ct)
    if name == "asinh":
        z = (z.imag + 1j * z.real).astype(ct)
    f, x = getattr(xp, name), xp.asarray(z)
    eager = np.asarray(f(x))
    want = getattr(np, "arc" + name[1:])(z)
    np.testing.assert_array_equal(eager, want)
    lost = eager.imag if name in ("acos", "asin") else eager.real      # the part of size sqrt(|y|)
    np.testing.assert_array_equal(np.abs(lost), np.sqrt(np.abs(np.tile(ys, 2))))
    for got in (jit(f)(x), vmap(f)(x)):
        got = np.asarray(got)
        np.testing.assert_array_equal(got.real, eager.real)
        np.testing.assert_array_equal(got.imag, eager.imag)
        assert (np.signbit(got.real) == np.signbit(eager.real)).all()
        assert (np.signbit(got.imag) == np.signbit(eager.imag)).all()


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("name", COMPLEX_BINARY)
def test_complex_binary_jit_agrees_with_eager(name, dt):
    z = complex_values(dt, big=3.0).astype(np.result_type(dt, np.complex64))
    a, b = map(xp.asarray, _complex_binary_args(dt))
    f = getattr(xp, name)
    eager = np.asarray(f(a, b))
    ok = close_complex(jitted_all(tuple(COMPLEX_BINARY), dt, _complex_binary_args)[name], eager, dt)
    assert ok.all(), (name, np.repeat(z, z.size)[~ok][:4], np.tile(z, z.size)[~ok][:4])
    if name in ("add", "subtract", "multiply", "equal", "not_equal"):   # (exact: NumPy in the mode is the oracle)
        assert close_complex(eager, oracle(name, np.repeat(z, z.size), np.tile(z, z.size)), dt).all()


# ------------------------------------------------------------------ the cases of issue 23
def test_floor_divide_of_a_quotient_below_the_smallest_normal():
    t = np.finfo(np.float64).tiny
    a = xp.asarray([-t, t, -t, t, -t / 3, 0.0, -0.0, -1.0])
    b = xp.asarray([3.0, -3.0, -3.0, 3.0, 3.0, -3.0, 3.0, xp.inf])
    want = np.array([-1.0, -1.0, 0.0, 0.0, -0.0, -0.0, -0.0, -0.0])   # -t / 3: a subnormal read as -0
    for got in (xp.floor_divide(a, b), jit(xp.floor_divide)(a, b), vmap(xp.floor_divide)(a, b)):
        got = np.asarray(got)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    assert float(jit(xp.floor_divide)(xp.asarray(-t), xp.asarray(3.0))) == -1.0
    with subnormals_flushed():
        assert np.floor_divide(-t, 3.0) == -1.0


@pytest.mark.parametrize("im", [800.0, 1e4])
@pytest.mark.parametrize("name", ["cos", "sin", "cosh", "sinh"])
def test_complex_trig_of_a_smallest_normal_part(name, im):
    """cos(2.2e-308 + 800j) = inf - 3.03e+39j: sin(2.2e-308) * sinh(800) is normal; halved before it was scaled
    up, sin(2.2e-308) / 2 was subnormal and flushed (inf - 0j), and at 1e4 inf * 0 gave NaN."""
    t = np.finfo(np.float64).tiny
    zs = np.array([complex(t, im), complex(-t, im), complex(t, -im), complex(-t, -im)])
    if name in ("cosh", "sinh"):   # (cosh(z) = cos(z j): the large part is the real one)
        zs = zs.imag + 1j * zs.real
    with np.errstate(all="ignore"):
        want = getattr(np, name)(zs)   # (IEEE NumPy: the true result is normal, so no flush touches it)
    f, x = getattr(xp, name), xp.asarray(zs)
    for what, got in (("eager", f(x)), ("jit", jit(f)(x)), ("vmap", vmap(f)(x))):
        got = np.asarray(got)
        for g, w in ((got.real, want.real), (got.imag, want.imag)):
            assert np.all((g == w) | (np.abs(g - w) <= 1e-12 * np.abs(w))), (what, zs, got, want)


@pytest.mark.parametrize("dt", ["float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("n", [7, 1 << 17])   # (the large one runs on host_parallel's workers)
def test_count_nonzero_counts_subnormals_as_zero(dt, n):
    s = np.finfo(np.float32 if dt in ("float32", "complex64") else np.float64).smallest_subnormal
    v = np.zeros(n, dt)
    v[::7] = s
    v[1::7] = -s
    v[2::7] = 1.0
    if dt.startswith("complex"):
        v[3::7] = 1j * s
    x = xp.asarray(v)
    want = int(np.count_nonzero(v == 1.0))
    assert int(xp.count_nonzero(x)) == want
    assert int(jit(xp.count_nonzero)(x)) == want
    assert int(xp.sum(x != 0)) == want
    with subnormals_flushed():
        assert int(np.count_nonzero(v != 0)) == want   # (NumPy's comparison in the mode; np.count_nonzero reads bits)
    assert np.count_nonzero(v) > want   # (and NumPy in IEEE mode outside a kernel: the thread's mode is restored)


def test_bit_moves_keep_subnormals():
    s = np.finfo(np.float64).smallest_subnormal
    v = np.array([s, -s, 3 * s, 1.0])
    x = xp.asarray(v)
    cases = [(x, v), (x[:3], v[:3]), (xp.reshape(x, (2, 2)), v.reshape(2, 2)), (xp.asarray(v, copy=True), v),
             (xp.negative(x), -v), (xp.abs(x), np.abs(v)), (xp.copysign(x, xp.asarray(-1.0)), -np.abs(v)),
             (xp.flip(x), v[::-1]), (xp.where(x != 0, x, x), v)]
    for got, want in cases:
        got = np.asarray(got)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    np.testing.assert_array_equal(np.from_dlpack(x), v)


@pytest.mark.parametrize("dt", ["float32", "float64", "complex64", "complex128"])
def test_nonzero_and_unique_read_subnormals_as_zero(dt):
    """Their eager forms compare on the host with NumPy (outside the kernels' mode): they read a subnormal as a zero
    of its sign, as their traced forms (compared in XLA) and count_nonzero do; the values keep x's bits (the first
    occurrence's)."""
    s = float(np.finfo(np.float32 if dt in ("float32", "complex64") else np.float64).smallest_subnormal)
    v = np.array([3 * s, 0.0, 2.0, -s, np.nan, -0.0, 2.0] + ([complex(s, 1.0), complex(0.0, 1.0)]
                                                           if dt.startswith("complex") else []), dt)
    x = xp.asarray(v)
    with subnormals_flushed(), np.errstate(invalid="ignore"):
        nz = np.nonzero(v != 0)   # (NumPy's comparison in the mode)
    f = flush(v)
    _, first, inv, counts = np.unique(f, return_index=True, return_inverse=True, return_counts=True, equal_nan=False)
    for how, g in (("eager", lambda f: f), ("jit", jit)):
        np.testing.assert_array_equal(np.asarray(g(xp.nonzero)(x)[0]), nz[0], err_msg=how)
        got = g(xp.unique_all)(x)
        np.testing.assert_array_equal(np.asarray(got.indices), first, err_msg=how)
        np.testing.assert_array_equal(np.asarray(got.inverse_indices), inv, err_msg=how)
        np.testing.assert_array_equal(np.asarray(got.counts), counts, err_msg=how)
        vals = np.asarray(g(xp.unique_values)(x))
        assert vals.tobytes() == v[first].tobytes(), (how, vals, v[first])
    assert len(np.unique(v)) > len(first)   # (NumPy in IEEE mode tells the subnormals from the zeros)


@pytest.mark.parametrize("dt", ["float32", "float64", "complex128"])
@pytest.mark.parametrize("fname", ["cumulative_sum", "cumulative_prod"])
def test_cumulative_first_output_is_flushed_like_the_rest(fname, dt):
    """NumPy's accumulate copies the first element without arithmetic; the scan computes it (x + -0.0, x * 1):
    a subnormal there is a zero of its sign, eagerly, under jit and vmap, at either end (include_initial, axis)."""
    s = float(np.finfo(np.float32 if dt == "float32" else np.float64).smallest_subnormal)
    v = np.array([[-3 * s, 2.0, -0.0], [s, -0.0, 1.5]], dt)
    f_np = getattr(np, "cumsum" if fname == "cumulative_sum" else "cumprod")
    for axis in (0, 1):
        for incl in (False, True):
            f = functools.partial(getattr(xp, fname), axis=axis, include_initial=incl)
            with subnormals_flushed():
                want = flush(f_np(flush(v), axis=axis))
            if incl:
                pad = np.full_like(np.take(v, [0], axis=axis), 0.0 if fname == "cumulative_sum" else 1.0)
                want = np.concatenate([pad, want], axis=axis)
            for how, got in (("eager", f(xp.asarray(v))), ("jit", jit(f)(xp.asarray(v))),
                             ("vmap", vmap(f)(xp.asarray(v[None]))[0])):
                got = np.asarray(got)
                assert got.tobytes() == want.tobytes(), (how, axis, incl, got, want)


def test_cumulative_prod_first_output_of_complex_infinities_is_numpys():
    """The eager kernel flushes a complex first output part by part: (1+0j) * (inf+0j) is inf+nanj, while the
    first output of NumPy's cumprod (and of ours before the flush) is inf+0j."""
    v = np.array([complex(np.inf, 0.0), complex(-0.0, np.inf), 2 + 0j])
    for i in range(2):
        got = np.asarray(xp.cumulative_prod(xp.asarray(v[i:])))[0]
        assert got.tobytes() == v[i].tobytes(), (got, v[i])


@pytest.mark.parametrize("dt", ["float32", "float64", "complex128"])
def test_reductions_and_scans_over_one_element_flush_it(dt):
    """Over an axis of length 1 (or axes whose sizes multiply to 1) a sum, product, max, min or cumulative sum or
    product is that element, and XLA's simplifier made it that element unchanged: a subnormal stayed under jit
    (jit(xp.max)(xp.asarray([1.5e-323])) was 1.5e-323, eagerly 0.0; prod and the scans too, found by the fuzzer).
    It is a result of arithmetic: a zero of its sign, eagerly, under jit and vmap, as NumPy's in the mode."""
    s = float(np.finfo(np.float32 if dt == "float32" else np.float64).smallest_subnormal)
    v = np.array([[3 * s, -3 * s, -0.0, 2.0, np.nan]], dt)
    if dt.startswith("complex"):
        v = v + 1j * np.array([[-s, 1.0, s, -0.0, 0.0]])
    cases = [("sum", "sum", 0), ("prod", "prod", 0), ("cumulative_sum", "cumsum", 0),
             ("cumulative_prod", "cumprod", 0), ("sum", "sum", (0, 1))]
    if not dt.startswith("complex"):   # (no max or min of complex numbers in the standard)
        cases += [("max", "max", 0), ("min", "min", 0), ("max", "max", (0, 1))]
    for fname, npname, axis in cases:
        x = v if axis == 0 else v.reshape(1, 1, -1)
        with subnormals_flushed(), np.errstate(invalid="ignore"):
            want = flush(getattr(np, npname)(flush(x), axis=axis))
        f = functools.partial(getattr(xp, fname), axis=axis)
        for how, got in (("eager", f(xp.asarray(x))), ("jit", jit(f)(xp.asarray(x))),
                         ("vmap", vmap(f)(xp.asarray(x[None]))[0])):
            got = np.asarray(got)
            assert got.tobytes() == want.tobytes(), (fname, axis, how, got, want)


@pytest.mark.parametrize("dt", ["float32", "float64", "complex64", "complex128"])
def test_identities_with_a_literal_flush_under_jit(dt):
    """x + -0.0, -0.0 - x, x - 0.0, x * +-1 and x / +-1 with a literal are IEEE identities but for a subnormal x; LLVM
    folds them into x (or -x) past XLA's barriers, and a complex operation's parts the same way, so under jit a
    subnormal came back as it was (jit(lambda v: v / 1) of 1e-310 was 1e-310, eagerly 0.0; z - 1.0 kept a subnormal
    imaginary part; found by the fuzzer, seeds 119, 307 and 321). Eager, jit and vmap against NumPy in the mode."""
    v = values(dt)
    if dt.startswith("complex"):
        v = v + 1j * v[::-1]
    cases = {"x * 1.0": lambda x: x * 1.0, "1.0 * x": lambda x: 1.0 * x, "x * -1.0": lambda x: x * -1.0,
             "multiply(x, 1)": lambda x: x.__array_namespace__().multiply(x, 1.0), "x / 1": lambda x: x / 1,
             "x / -1.0": lambda x: x / -1.0, "x - 0.0": lambda x: x - 0.0, "x + -0.0": lambda x: x + -0.0,
             "-0.0 + x": lambda x: -0.0 + x, "x + 0.0": lambda x: x + 0.0, "-0.0 - x": lambda x: -0.0 - x,
             "x - 1.0": lambda x: x - 1.0, "x - 1j": lambda x: x - 1j, "x + (-0-1j)": lambda x: x + complex(-0.0, -1.0),
             "x - (-0-0j)": lambda x: x - complex(-0.0, -0.0), "x * 1j": lambda x: x * 1j,
             "x * (1+0j)": lambda x: x * (1 + 0j), "1j - x": lambda x: 1j - x}
    for what, f in cases.items():
        with subnormals_flushed():
            want = flush(f(flush(v)))
        for how, got in (("eager", f(xp.asarray(v))), ("jit", jit(f)(xp.asarray(v))), ("vmap", vmap(f)(xp.asarray(v)))):
            got = np.asarray(got)
            assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), (what, how, got, want)


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_identities_on_a_computed_operand_flush_only_where_the_mode_may_not_have(dt):
    """x * 1 where x is an arithmetic result needs no flush (the mode writes a subnormal result as zero: such an x
    never is one), so its lowering has no select (a select kept XLA from fusing jit(r2_score)'s weight * (y - yh)
    ** 2 into its sum); x from a bit op (abs, negation) or an argument still is flushed. Eager, jit and vmap
    against NumPy in the mode, on products and quotients that underflow."""
    tiny = np.finfo(dt).tiny
    a = np.array([tiny, -tiny, 3 * tiny, 1.0, -2.5, 0.0, tiny / 4, -tiny / 3], dt)
    b = np.array([0.25, 0.5, 1 / 3, 2.0, tiny, -0.0, 1.0, 1.0], dt)
    cases = {"(a * b) * 1.0": lambda a, b: (a * b) * 1.0, "(a / 8) / 1": lambda a, b: (a / 8) / 1,
             "(a - b) + -0.0": lambda a, b: (a - b) + -0.0, "-0.0 - (a * b)": lambda a, b: -0.0 - (a * b),
             "abs(a) * 1.0": lambda a, b: a.__array_namespace__().abs(a) * 1.0, "(-a) * -1.0": lambda a, b: (-a) * -1.0,
             "a * 1.0": lambda a, b: a * 1.0}
    for what, f in cases.items():
        with subnormals_flushed():
            want = flush(f(flush(a), flush(b)))
        for how, got in (("eager", f(xp.asarray(a), xp.asarray(b))), ("jit", jit(f)(xp.asarray(a), xp.asarray(b))),
                         ("vmap", vmap(f)(xp.asarray(a), xp.asarray(b)))):
            got = np.asarray(got)
            assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), (what, how, got, want)
    text = jit(lambda a, b: (a * b) * 1.0).lower(xp.asarray(a), xp.asarray(b)).as_text()
    assert "select" not in text and "compare" not in text
