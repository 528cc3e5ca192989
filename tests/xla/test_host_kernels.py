"""Host kernels (xla/host.py): eager-on-the-host equals XLA, compiles nothing, leaks nothing.

The oracle for a host kernel is the primitive's own lowering run by XLA (the single-op
executable the runtime falls back to): per primitive, per dtype, on grids of special values
(NaN, +-inf, +-0, subnormals, integer min/max, shifts by >= the bit width, division by zero).

Subnormals: both flush them (xla/host.py, "Subnormals"; test_subnormals_are_flushed_by_both). The grid
comparisons skip elements with a subnormal input and flush the host's subnormal results (the special-value
grids are about the other cases); test_unary_host_equals_xla_on_subnormal_inputs compares those exactly, and
tests/array_namespace/test_elementwise_subnormals.py every function of the namespace.
"""
import functools

import numpy as np
import pytest

import array_namespace as xp
from transforms.core import ShapedArray, impl_rules
from transforms.jaxpr import ClosedJaxpr, Jaxpr
from transforms.primitives import elementwise as E
from xla import host, runtime
from xla.host import HostValue, host_kernels

pytestmark = pytest.mark.skipif(host.MODE == "xla", reason="host kernels switched off (ARRAY_NAMESPACE_EAGER=xla)")

DTYPES = [np.dtype(d) for d in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                                "uint64", "float16", "float32", "float64", "complex64", "complex128")]


def specials(dt):
    if dt == np.bool_:
        return np.array([False, True])
    if dt.kind in "iu":
        info = np.iinfo(dt)
        vals = [0, 1, 2, 3, 7, info.max, info.max - 1, info.min, info.min + 1]
        if dt.kind == "i":
            vals += [-1, -2, -3, -7]
        vals += [dt.itemsize * 8 - 1, dt.itemsize * 8, dt.itemsize * 8 + 1]   # shift amounts around the width
        return np.array(sorted(set(vals)), dt)
    if dt.kind == "f":
        fi = np.finfo(dt)
        vals = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 1e-3, 2.0, 0.75, np.inf, -np.inf, np.nan,
                float(fi.max), -float(fi.max), float(fi.tiny), float(fi.tiny) / 4, 100.0, -0.3]
        return np.array(vals, dt)
    re = specials(np.dtype(np.float32 if dt == np.complex64 else np.float64))
    re = re[[0, 1, 2, 3, 4, 10, 11, 12]]
    out = np.empty((len(re), len(re)), dt)
    out.real, out.imag = re[:, None], re[None, :]
    return out.reshape(-1)


def _xla(prim, args, params):
    """The lowering's answer (the runtime's single-op executable), as NumPy arrays; None if XLA refuses."""
    xla_impl = runtime._make_impl(prim)
    bufs = [runtime.device_buffer(a) for a in args]
    try:
        out = xla_impl(*bufs, **params)
    except Exception:   # a dtype the lowering does not take: nothing to compare
        return None
    return [np.asarray(o) for o in out] if prim.multiple_results else [np.asarray(out)]


def xla_many(cases):
    """_xla for many (prim, args, params) cases from ONE compiled program: one equation per signature (prim,
    params, operand shapes and dtypes) -- the lowering the single-op executable runs -- on its own operands, the
    program run once per case of the most common signature (compiling is what these tests spend their time on).
    A case whose lowering (or StableHLO's verifier) refuses gives None, as in _xla."""
    cases = [(prim, [np.asarray(a) for a in args], params) for prim, args, params in cases]
    sigs = {}   # signature -> (its equation, the indices of its cases)
    for i, (prim, args, params) in enumerate(cases):
        avals = [ShapedArray(a.shape, a.dtype) for a in args]
        key = (prim, tuple(params.items()), *avals)
        if key not in sigs:
            try:
                one = runtime.single_jaxpr(prim, avals, params)
                ok = runtime.lower_jaxpr(one).operation.verify()
            except Exception:   # a dtype the lowering does not take: nothing to compare
                ok = False
            sigs[key] = (one.jaxpr.eqns[0] if ok else None, [])
        sigs[key][1].append(i)
    sigs = [sig for sig in sigs.values() if sig[0] is not None]
    out = [None] * len(cases)
    if not sigs:
        return out
    invars = [v for eqn, _ in sigs for v in eqn.invars]
    exe = runtime.compile_jaxpr(ClosedJaxpr(Jaxpr([], invars, [eqn for eqn, _ in sigs],
                                                  [v for eqn, _ in sigs for v in eqn.outvars]), []), name="oracles")
    for r in range(max(len(ids) for _, ids in sigs)):
        picks = [ids[min(r, len(ids) - 1)] for _, ids in sigs]   # (a signature with fewer cases: its last again)
        res = iter(np.asarray(o) for o in exe([runtime.device_buffer(a) for i in picks for a in cases[i][1]]))
        for (eqn, _), i in zip(sigs, picks):
            out[i] = [next(res) for _ in eqn.outvars]
    return out


def pairs(s):
    """Every pair of the values s, as two operands."""
    return np.repeat(s, len(s)), np.tile(s, len(s))


@functools.cache
def unary_wants(prim):
    """{dtype: XLA's answer for prim on specials(dtype), None if the lowering refuses} for each dtype the host
    kernel takes; one program (shared with test_host_specialized)."""
    xs = {dt: specials(dt) for dt in DTYPES if _host(prim, [specials(dt)], {}) is not None}
    return dict(zip(xs, xla_many((prim, [x], {}) for x in xs.values())))


@functools.cache
def binary_wants(prim):
    """unary_wants for a binary primitive on every pair of special values."""
    xys = {dt: pairs(specials(dt)) for dt in DTYPES if _host(prim, list(pairs(specials(dt))), {}) is not None}
    return dict(zip(xys, xla_many((prim, list(xy), {}) for xy in xys.values())))


def _host(prim, args, params):
    vals = [HostValue(a, ShapedArray(a.shape, a.dtype)) for a in args]
    kernel = host_kernels[prim]
    if host.quiet(kernel, *[v.np for v in vals], **params) is NotImplemented:
        return None
    out = impl_rules[prim](*vals, **params)
    outs = out if prim.multiple_results else [out]
    assert all(type(o) is HostValue for o in outs)
    return [o.np for o in outs]


def _tol(dt):
    return {"float16": 2e-3, "float32": 2e-6, "complex64": 2e-6}.get(dt.name, 1e-13)


def subnormal(a):
    if a.dtype.kind == "c":
        return subnormal(a.real) | subnormal(a.imag)
    if a.dtype.kind != "f":
        return np.zeros(a.shape, bool)
    return (a != 0) & (np.abs(a) < np.finfo(a.dtype).tiny)


def flushed(a):
    if a.dtype.kind == "c":
        out = a.copy()
        out.real, out.imag = flushed(a.real), flushed(a.imag)
        return out
    return np.where(subnormal(a), np.copysign(np.zeros((), a.dtype), a), a) if a.dtype.kind == "f" else a


def compare(got, want, inputs, what):
    """host == XLA except where an input is subnormal (XLA reads it as 0); host subnormals flushed."""
    keep = ~np.broadcast_to(np.logical_or.reduce([np.broadcast_to(subnormal(i), want.shape) for i in inputs]),
                            want.shape) if inputs else np.ones(want.shape, bool)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    assert_same(flushed(got)[keep], want[keep], what)


def assert_same(got, want, what):
    assert got.dtype == want.dtype and got.shape == want.shape, (what, got.dtype, want.dtype, got.shape, want.shape)
    if got.dtype.kind in "biu":
        bad = got != want
        assert not bad.any(), f"{what}: host {got[bad][:8]} != XLA {want[bad][:8]}"
        return
    if got.dtype.kind == "c":
        assert_same(got.real.copy(), want.real.copy(), what + " (real)")
        assert_same(got.imag.copy(), want.imag.copy(), what + " (imag)")
        return
    g, w = got.astype(np.float64), want.astype(np.float64)
    with np.errstate(invalid="ignore"):
        return _assert_close(got, want, g, w, what)


def _assert_close(got, want, g, w, what):
    same_nan = np.isnan(g) == np.isnan(w)
    assert same_nan.all(), f"{what}: NaN mismatch host {got[~same_nan][:8]} XLA {want[~same_nan][:8]}"
    fin = np.isfinite(w) & np.isfinite(g)
    inf_ok = (g == w) | ~(np.isinf(g) | np.isinf(w))
    assert inf_ok.all(), f"{what}: inf mismatch host {got[~inf_ok][:8]} XLA {want[~inf_ok][:8]}"
    tiny = float(np.finfo(got.dtype).tiny)
    close = np.abs(g - w) <= _tol(got.dtype) * np.abs(w) + 4 * tiny
    bad = fin & ~close
    assert not bad.any(), f"{what}: host {got[bad][:8]} != XLA {want[bad][:8]}"
    zeros = (w == 0) & (g == 0) & (np.abs(w) == 0)
    sb = zeros & (np.signbit(g) != np.signbit(w))
    assert not sb.any(), f"{what}: sign of zero differs where XLA gives {want[sb][:8]}"


UNARY = [p for p in host_kernels if p.name in {
    "neg", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "exp",
    "exp2", "expm1", "log", "log1p", "sqrt", "rsqrt", "cbrt", "logistic", "erf", "sign", "floor", "ceil", "round",
    "is_finite", "not", "abs", "real", "imag", "conj"}]
BINARY = [p for p in host_kernels if p.name in {
    "add", "sub", "mul", "div", "rem", "pow", "max", "min", "atan2", "and", "or", "xor", "shift_left",
    "shift_right_arithmetic", "shift_right_logical", "nextafter", "mul0", "div0", "eq", "ne", "lt", "le", "gt", "ge", "complex"}]


def test_every_elementwise_host_kernel_is_covered_here():
    elementwise = {p for p in host_kernels if getattr(E, p.name + "_p", None) is p}
    assert elementwise - {E.select_n_p, E.convert_element_type_p} == set(UNARY) | set(BINARY)


@pytest.mark.parametrize("prim", UNARY, ids=lambda p: p.name)
def test_unary_host_equals_xla(prim):
    compared = 0
    for dt, want in unary_wants(prim).items():
        x = specials(dt)
        got = _host(prim, [x], {})
        if want is None:
            continue
        compare(got[0], want[0], [x], f"{prim.name}[{dt.name}]")
        compared += 1
    assert compared > 0


def _subnormal_values(dt):
    t, s = float(np.finfo(dt).tiny), float(np.finfo(dt).smallest_subnormal)
    v = [0.0, s, t / 3, t - s, t, 2 * t, 0.5, 1.0]
    return np.array(v + [-x for x in v], dt)


def test_unary_host_equals_xla_on_subnormal_inputs():
    """Where the input is subnormal too (the rule reads it as a zero of its sign, xla/host.py "Subnormals"): the
    float kernels, unflushed, give the lowering's values (sign(5e-324) was 5e-324, XLA's 0)."""
    cases = [(p, [_subnormal_values(dt)], {}) for p in UNARY for dt in (np.float32, np.float64)
             if _host(p, [_subnormal_values(dt)], {}) is not None]
    for (prim, args, _), want in zip(cases, xla_many(cases)):
        if want is None:
            continue
        g, w = _host(prim, args, {})[0], want[0]
        ok = (g == w) | (np.isnan(g) & np.isnan(w)) if g.dtype.kind in "fc" else g == w
        if g.dtype.kind == "f":   # (no absolute slack: a subnormal is not a zero; zeros of the same sign)
            ok |= np.abs(g - w) <= _tol(g.dtype) * np.abs(w)
            ok &= ~((g == 0) & (w == 0) & (np.signbit(g) != np.signbit(w)))
        assert ok.all(), (prim.name, args[0][~ok], g[~ok], w[~ok])


@pytest.mark.parametrize("prim", BINARY, ids=lambda p: p.name)
def test_binary_host_equals_xla(prim):
    compared = 0
    for dt, want in binary_wants(prim).items():
        s = specials(dt)
        x, y = pairs(s)
        got = _host(prim, [x, y], {})
        if want is None:
            continue
        compare(got[0], want[0], [x, y], f"{prim.name}[{dt.name}]")
        # broadcasting against a 0-d operand (how scalars reach primitives); XLA's answer for (x[i], y[3]) =
        # (s[i // n], s[3 % n]) is the one above at (i // n) * n + 3 % n (elementwise: no second compile)
        n = len(s)
        want = [want[0][np.arange(len(x[:5])) // n * n + 3 % n]]
        got = _host(prim, [x[:5], y[3:4].reshape(())], {})
        compare(got[0], want[0], [x[:5], y[3:4].reshape(())], f"{prim.name}[{dt.name}] with a 0-d operand")
        compared += 1
    assert compared > 0


@pytest.mark.parametrize("src", DTYPES, ids=lambda d: d.name)
def test_convert_element_type_host_equals_xla(src):
    x = specials(src)
    if src.kind == "f":   # saturation bounds of every integer type, and values just inside/outside them
        extra = [v for d in DTYPES if d.kind in "iu" for v in (np.iinfo(d).max, np.iinfo(d).min)]
        x = np.concatenate([x, np.array(extra, np.float64).astype(src), np.array([-0.9, 0.9, 255.5, -128.7], src)])
    params = {dst: dict(new_dtype=dst, weak_type=False) for dst in DTYPES}
    gots = {dst: _host(E.convert_element_type_p, [x], params[dst]) for dst in DTYPES}
    gots = {dst: g for dst, g in gots.items() if g is not None}
    wants = xla_many((E.convert_element_type_p, [x], params[dst]) for dst in gots)
    for (dst, got), want in zip(gots.items(), wants):
        if want is not None:
            compare(got[0], want[0], [x], f"convert {src.name} -> {dst.name}")


def test_select_n_host_equals_xla():
    argss, whats = [], []
    for dt in DTYPES:
        s = specials(dt)
        pred = (np.arange(len(s)) % 3 == 0)
        argss += [[pred, s, s[::-1].copy()], [pred[:1].reshape(()), s, s[::-1].copy()], [pred, s]]
        whats += [f"select_n[{dt.name}]"] * 3
    ipred = np.array([0, 1, 2, 3, -1, 7], np.int32)
    argss.append([ipred] + [np.full(6, float(i)) for i in range(3)])
    whats.append("select_n with an integer predicate (out of range: the last case)")
    wants = xla_many((E.select_n_p, args, {}) for args in argss)
    for args, want, what in zip(argss, wants, whats):
        compare(_host(E.select_n_p, args, {})[0], want[0], args[1:], what)


def test_subnormals_are_flushed_by_both():
    """Pinned: XLA (jit) flushes subnormals on the CPU, and so do host kernels (xla/host.py, "Subnormals"), where
    NumPy outside a kernel keeps them."""
    from transforms import jit
    x = xp.asarray(np.array([1e-45, 1.0], np.float32))
    assert np.asarray(x)[0] == np.float32(1e-45)   # (a move keeps it)
    assert np.asarray(x * 2.0)[0] == 0.0
    assert np.asarray(jit(lambda v: v * 2.0)(x))[0] == 0.0
    assert np.float32(1e-45) * np.float32(2.0) == np.float32(2.8e-45)


# ------------------------------------------------------------ max/min: the signs of zeros, every operand form
@pytest.mark.parametrize("prim", [E.max_p, E.min_p], ids=lambda p: p.name)
@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_max_min_zero_signs_equal_xla_in_every_operand_form(prim, dt):
    """The kernel fixes NumPy's signs of zeros only where needed (no fix for a 0-d operand of the right sign or a
    nonzero one, max(x, +0.0) by adding +0.0, zeros by a select): each route == XLA bit for bit, signs of zeros
    included, with a few zeros or many."""
    rng = np.random.default_rng(11)
    vals = np.array([0.0, -0.0, 1.0, -1.0, np.nan, np.inf, -np.inf, 2.5, -3.5], dt)
    few = rng.standard_normal(400).astype(dt)        # (a few zeros of each sign)
    few[[3, 50, 99]], few[[7, 120]] = 0.0, -0.0
    many = np.where(rng.random(400) < 0.5, 0.0, rng.standard_normal(400)).astype(dt)   # (many zeros)
    many[::3] = -0.0
    arrays = [vals, few, many, np.zeros(0, dt)]
    scalars = [np.asarray(v, dt) for v in vals]
    cases = [(a, b) for a in arrays for b in (np.flip(a), a)]
    cases += [(a, s) for a in arrays for s in scalars] + [(s, a) for a in arrays for s in scalars]
    cases += [(s, t) for s in scalars for t in scalars]
    for (x, y), (want,) in zip(cases, xla_many((prim, [x, y], {}) for x, y in cases)):
        got = _host(prim, [x, y], {})[0]
        assert got.dtype == want.dtype and got.shape == want.shape
        assert np.array_equal(got, want, equal_nan=True), (prim.name, x, y, got, want)
        num = ~np.isnan(want)   # (a NaN's sign bit carries no meaning: XLA's and NumPy's differ)
        assert np.array_equal(np.signbit(got)[num], np.signbit(want)[num]), (prim.name, x, y, got, want)


def test_broadcast_in_dim_and_iota_kernels_are_numpys_read_only_views():
    """broadcast_in_dim's kernel (and iota's, built on it) makes its view with the ndarray constructor: on random
    shapes, dims and layouts (reversed, Fortran-ordered, 0-d, empty) it equals np.broadcast_to's, is read-only
    (host.sole_holder never writes into it), and is a view of x's memory where x is C-contiguous."""
    from transforms.primitives import structural as S
    bcast, iota = host_kernels[S.broadcast_in_dim_p], host_kernels[S.iota_p]
    rng = np.random.default_rng(5)
    for _ in range(400):
        nd, extra = int(rng.integers(0, 4)), int(rng.integers(0, 3))
        xs = tuple(int(v) for v in rng.integers(0, 4, nd))
        x = rng.standard_normal(xs)
        if nd and rng.random() < 0.4:
            x = x[..., ::-1] if rng.random() < 0.5 else np.asfortranarray(x)
        dims = tuple(sorted(int(d) for d in rng.choice(nd + extra, nd, replace=False)))
        shape = [int(v) for v in rng.integers(0, 4, nd + extra)]
        for d, n in zip(dims, xs):
            shape[d] = n if n != 1 else int(rng.integers(0, 4))
        full = [1] * len(shape)
        for d, n in zip(dims, xs):
            full[d] = n
        got = bcast(x, shape=tuple(shape), broadcast_dimensions=dims)
        np.testing.assert_array_equal(got, np.broadcast_to(x.reshape(full), tuple(shape)))
        assert got.shape == tuple(shape) and not got.flags.writeable
        assert not x.flags.c_contiguous or not got.size or np.shares_memory(got, x)
    for shape, d in (((3, 4), 0), ((3, 4), 1), ((0, 5), 1), ((2, 3, 4), 2), ((5,), 0)):
        want = np.arange(shape[d], dtype=np.int32).reshape([-1 if i == d else 1 for i in range(len(shape))])
        np.testing.assert_array_equal(iota(dtype=np.dtype(np.int32), shape=shape, dimension=d),
                                      np.broadcast_to(want, shape))
