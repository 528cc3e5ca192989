"""The fast forms of a host entry (xla/host.py `Kernel.form`) give exactly what the general kernels give.

The runtime caches, per (input dtypes, ranks, params), the kernel's form for that signature (the bare ufunc of a
float add, a reduction with its axes and dtype bound, np.matmul for a 2-D dot), and uses it at every shape. Here,
per primitive with forms,
on grids of dtypes, shapes (empty ones too) and special values: the specialised function's result equals the
general kernel's bit for bit (dtype, shape, NaN, sign of zero), the eager impl (which runs the specialised one)
returns that result, and it equals the compiled (jit) result. Also the float pow by a 0-d exponent 2 or 3:
multiplication, as XLA's simplifier makes of a constant exponent under jit.
"""
import numpy as np
import pytest

import array_namespace as xp
from transforms import jit
from transforms.core import ShapedArray, impl_rules
from transforms.primitives import elementwise as E
from transforms.primitives import linalg as L
from transforms.primitives import reductions as R
from transforms.primitives import structural as S
from xla import host, host_parallel
from xla.host import HostValue, Kernel, host_kernels

from test_host_kernels import _xla, assert_same, binary_wants, compare, pairs, specials, unary_wants, xla_many

pytestmark = pytest.mark.skipif(host.MODE == "xla", reason="host kernels switched off (ARRAY_NAMESPACE_EAGER=xla)")

DTYPES = [np.dtype(d) for d in ("bool", "int8", "int32", "int64", "uint8", "uint64", "float16", "float32",
                                "float64", "complex64", "complex128")]


def _aval(a):
    return ShapedArray(a.shape, a.dtype)


def _same_bits(got, want, what):
    assert type(got) is type(want) or np.ndim(got) == 0, (what, type(got), type(want))
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (what, got.dtype, want.dtype, got.shape, want.shape)
    if got.dtype.kind in "fc":
        np.testing.assert_array_equal(got, want, err_msg=what)   # (NaN equals NaN here)
        if got.dtype.kind == "c":
            return (_same_bits(got.real.copy(), want.real.copy(), what + " (real)"),
                    _same_bits(got.imag.copy(), want.imag.copy(), what + " (imag)"))
        g, w = got.view(f"u{got.dtype.itemsize}"), want.view(f"u{want.dtype.itemsize}")
        nan = np.isnan(got)
        assert (np.where(nan, 0, g) == np.where(nan, 0, w)).all(), f"{what}: bits differ (sign of zero?)"
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


def _values(dt, n, rng):
    """n values of dt for reductions and products, whose results do not hinge on the order of summation (no
    float max, no subnormals: XLA reads those as 0) but with NaN, infinities and signed zeros among them."""
    dt = np.dtype(dt)
    if dt == np.bool_:
        return rng.random(n) < 0.5
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
    if dt.kind == "c":
        re = _values(np.float32 if dt == np.complex64 else np.float64, n, rng)
        return (re + 1j * rng.standard_normal(n)).astype(dt)
    x = (rng.standard_normal(n) * 3).astype(dt)
    special = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 1.0, -1.0], dt)
    pick = rng.random(n) < 0.15
    x[pick] = rng.choice(special, int(pick.sum()))
    return x


_ASK = object()


def _check(prim, args, params, oracle=compare, want=_ASK):
    """specialised == general kernel (bitwise), the eager impl gives it, and it equals XLA's (elementwise: with
    compare's subnormal rule; otherwise within assert_same's tolerance). `want`: XLA's answer where the caller
    has it already (a slice of an elementwise answer on a larger operand, or one program's answer for many cases;
    None: XLA refuses), else computed here."""
    k = host_kernels[prim]
    spec = k.form([_aval(a) for a in args], params) if type(k) is Kernel else None
    general = host.quiet(host_kernels[prim], *list(args), **params)
    what = f"{prim.name} {[(a.dtype.name, a.shape) for a in args]} {params}"
    if spec is not None:
        assert general is not NotImplemented, f"{what}: specialised where the kernel declines"
        _same_bits(host.quiet(spec, *list(args)), general, what)
    if general is NotImplemented:
        return 0
    out = impl_rules[prim](*[HostValue(a, _aval(a)) for a in args], **params)
    assert type(out) is HostValue, what
    _same_bits(out.np, np.asarray(general, out.aval.dtype), what)
    want = _xla(prim, args, params) if want is _ASK else want
    if want is not None:
        if oracle is compare:
            compare(out.np, want[0], list(args), what)
        else:
            oracle(out.np, want[0], what, args)
    return spec is not None


def _check_all(cases):
    """[_check(*case) for case in cases] with XLA's answers from one program (compiling is what costs here)."""
    wants = xla_many(case[:3] for case in cases)
    return [_check(*case, want=want) for case, want in zip(cases, wants)]


def _summed(got, want, what, args, power=1):
    """A sum (or product) in another order: the same NaNs and infinities; finite values within a few ulps of the
    operands' magnitude (cancellation makes the result's own relative error meaningless)."""
    if got.dtype.kind not in "fc":
        return assert_same(got, want, what)
    assert got.dtype == want.dtype and got.shape == want.shape, what
    if got.dtype.kind == "c":   # (each part on its own; the operands' magnitudes bound both)
        mags = tuple(np.abs(a) for a in args)
        _summed(got.real.copy(), want.real.copy(), what + " (real)", mags, power)
        return _summed(got.imag.copy(), want.imag.copy(), what + " (imag)", mags, power)
    g, w = got.astype(np.float64), want.astype(np.float64)
    assert (np.isnan(g) == np.isnan(w)).all(), f"{what}: NaN mismatch {got} {want}"
    assert ((g == w) | ~(np.isinf(g) | np.isinf(w))).all(), f"{what}: inf mismatch {got} {want}"
    fin = np.isfinite(g) & np.isfinite(w)
    mags = [np.abs(a[np.isfinite(a)]) for a in args if a.dtype.kind in "fc"]
    scale = max([float(m.max()) for m in mags if m.size] + [1.0])
    n = max(a.size for a in args)
    tol = 8 * n * float(np.finfo(got.dtype).eps) * scale ** power
    assert (np.abs(g[fin] - w[fin]) <= tol).all(), f"{what}: host {got} != XLA {want}"


def _relative(got, want, what, args):
    return assert_same(got, want, what)


def _dotted(got, want, what, args):
    return _summed(got, want, what, args, power=2)


_FORMS = [p for p, k in host_kernels.items() if type(k) is Kernel and (k.ufunc is not None or k.special is not None)]


def test_every_specialised_primitive_is_covered_here():
    covered = set(_UNARY_PRIMS) | set(_BINARY_PRIMS) | {E.select_n_p, E.div_p, E.rem_p, L.dot_general_p,
                                                        E.not_p, E.convert_element_type_p, S.reshape_p,
                                                        S.transpose_p} | set(_REDUCERS)
    assert set(_FORMS) <= covered, set(_FORMS) - covered


_REDUCERS = [R.reduce_sum_p, R.reduce_prod_p, R.reduce_max_p, R.reduce_min_p, R.reduce_and_p, R.reduce_or_p]
_UNARY_PRIMS = [p for p in _FORMS if p.name in {
    "neg", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "exp",
    "exp2", "expm1", "log", "log1p", "sqrt", "cbrt", "floor", "ceil", "round", "is_finite", "abs", "real", "imag",
    "conj", "not"}]
_BINARY_PRIMS = [p for p in _FORMS if p.name in {
    "add", "sub", "mul", "atan2", "and", "or", "xor", "eq", "ne", "lt", "le", "gt", "ge", "max", "min"}]


@pytest.mark.parametrize("prim", _REDUCERS, ids=lambda p: p.name)
def test_reductions_specialised_equal_the_kernel(prim):
    rng = np.random.default_rng(0)
    cases = []
    for dt in map(np.dtype, ("bool", "int8", "uint64", "float16", "float32", "float64", "complex128")):
        for shape, axes_list in (((7,), [(0,)]), ((3, 4), [(1,), (0, 1)]), ((0, 3), [(0,), (1,)]),
                                 ((2, 3, 4), [(0, 2)])):
            n = int(np.prod(shape))
            x = _values(dt, n, rng).reshape(shape)
            if prim is R.reduce_prod_p and dt.kind in "fc":
                with np.errstate(all="ignore"):
                    x = x * dt.type(0.25)   # (products of magnitude ~1: no overflow whose place depends on the order)
            oracle = _summed if prim is R.reduce_sum_p else _relative
            cases += [(prim, (x,), {"axes": axes}, oracle) for axes in axes_list]
            if x.ndim == 2 and n:   # a transposed (F-ordered) operand, as library code hands over
                cases.append((prim, (np.ascontiguousarray(x).T,), {"axes": (1,)}, oracle))
    assert any(_check_all(cases))   # (the specialised path was taken at least once)


@pytest.mark.parametrize("prim", _UNARY_PRIMS, ids=lambda p: p.name)
def test_unary_specialised_equal_the_kernel(prim):
    wants, empties = unary_wants(prim), {dt: np.zeros((0, 2), dt) for dt in DTYPES}
    empty_wants = dict(zip(DTYPES, xla_many((prim, (e,), {}) for e in empties.values())))
    for dt in DTYPES:
        _check(prim, (specials(dt),), {}, want=wants.get(dt))
        _check(prim, (empties[dt],), {}, want=empty_wants[dt])


@pytest.mark.parametrize("prim", _BINARY_PRIMS + [E.div_p, E.rem_p, E.pow_p], ids=lambda p: p.name)
def test_binary_specialised_equal_the_kernel(prim):
    wants, empties = binary_wants(prim), {dt: (np.zeros((0,), dt), np.zeros((0,), dt)) for dt in DTYPES}
    empty_wants = dict(zip(DTYPES, xla_many((prim, e, {}) for e in empties.values())))
    for dt in DTYPES:
        _check(prim, pairs(specials(dt)), {}, want=wants.get(dt))
        _check(prim, empties[dt], {}, want=empty_wants[dt])


@pytest.mark.parametrize("dt", [np.float16, np.float32, np.float64])
def test_pow_by_a_scalar_exponent(dt):
    x = specials(np.dtype(dt))
    x = np.concatenate([x, np.random.default_rng(1).standard_normal(200).astype(dt) * 3])
    for e in (2.0, 3.0, 0.0, 1.0, -1.0, 0.5, -0.5, 2.5, 4.0, -2.0, np.nan, np.inf, -np.inf):
        y = np.asarray(e, dt)
        _check(E.pow_p, (x, y), {})
    with np.errstate(all="ignore"):
        sq = host.quiet(host_kernels[E.pow_p], x, np.asarray(2.0, dt))
        cube = host.quiet(host_kernels[E.pow_p], x, np.asarray(3.0, dt))
        _same_bits(sq, np.power(x, dt(2)), "x ** 2 is pow's correctly rounded square")
        _same_bits(cube, x * x * x, "x ** 3 is x * x * x")
        fin = np.isfinite(cube) & (np.abs(cube) > np.finfo(dt).tiny)
        np.testing.assert_allclose(cube[fin], np.power(x, dt(3))[fin], rtol=2 * np.finfo(dt).eps)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_eager_pow_equals_jit_bit_for_bit_for_2_3_and_half(dt):
    a = np.concatenate([specials(np.dtype(dt)), np.random.default_rng(2).standard_normal(300).astype(dt) * 5])
    x = xp.asarray(a)
    for e in (2, 3, 2.0, 3.0, 0.5):
        eager = x ** e
        assert eager.dtype == x.dtype
        comp = jit(lambda v, e=e: v ** e)(x)
        _same_bits(np.asarray(eager), np.asarray(comp), f"x ** {e!r}")
    half = np.asarray(x ** 0.5)   # pow's correctly rounded value: sqrt's, with +0 at -0 and +inf at -inf
    want = np.where(a == -np.inf, np.inf, np.abs(np.sqrt(np.where(np.abs(a) < np.finfo(dt).tiny, 0, a))))
    _same_bits(half, want.astype(dt), "x ** 0.5")
    text = jit(lambda v: v ** 0.5).lower(x).as_text()   # (XLA's pow costs ~15x sqrt on the CPU)
    assert "stablehlo.sqrt" in text and "stablehlo.power" not in text, text


def test_select_n_specialised_equals_the_kernel():
    rng = np.random.default_rng(3)
    cases, two_way = [], []
    for dt in DTYPES:
        s = specials(dt)
        a, b = rng.choice(s, 12), rng.choice(s, 12)
        p = rng.random(12) < 0.5
        args = [(p, a, b), (p.reshape(3, 4), a.reshape(3, 4), b.reshape(3, 4)), (np.zeros((0,), bool), a[:0], b[:0]),
                (p.astype(np.int32) * 2, a, b, a)]   # (the last, 3-way: the general kernel)
        for v in (0, 1):   # one predicate value broadcast (linalg's finiteness guard): a whole case, not copied
            args += [(np.broadcast_to(np.bool_(v), (12,)), a, b), (np.broadcast_to(np.bool_(v), (3, 4)), a[:4], b.reshape(3, 4)),
                     (np.broadcast_to(np.int32(3 * v), (12,)), a, b, a[5]),
                     (np.asarray(np.bool_(v)), a, b), (np.asarray(np.bool_(v)), a[0], b[1]),   # (0-d: a view)
                     (np.asarray(np.bool_(v)), a[0], b)]   # (the output takes every operand's shape, not the chosen one's)
        cases += [(E.select_n_p, arg, {}) for arg in args]
        two_way += [len(arg) == 3 for arg in args]
    assert _check_all(cases) == two_way   # (2-way: specialised)


def test_select_by_one_broadcast_value_is_never_written_through():
    a, b = xp.asarray([1.0, 2.0, 3.0]), xp.asarray([5.0, 6.0, 7.0])
    for cond, src in ((True, a), (False, b)):
        y = xp.where(xp.asarray(cond), a, b)
        y += 1.0
        y[0] = -1.0
        assert np.array_equal(np.asarray(a), [1.0, 2.0, 3.0]) and np.array_equal(np.asarray(b), [5.0, 6.0, 7.0])
        assert np.array_equal(np.asarray(y), np.concatenate([[-1.0], np.asarray(src)[1:] + 1.0]))


def test_reshape_and_transpose_specialised_equal_the_kernel():
    rng = np.random.default_rng(8)
    cases = []
    for dt in DTYPES:
        a = _values(dt, 24, rng).reshape(2, 3, 4)
        cases += [(S.reshape_p, (a,), {"new_sizes": new}, _relative) for new in ((24,), (4, 6), (2, 3, 4), (1, 24, 1))]
        cases.append((S.reshape_p, (np.zeros((0, 3), dt),), {"new_sizes": (3, 0)}, _relative))
        cases += [(S.transpose_p, (a,), {"permutation": perm}, _relative) for perm in ((1, 0, 2), (2, 1, 0), (0, 1, 2))]
        cases.append((S.transpose_p, (a[:, :, 0].T,), {"permutation": (1, 0)}, _relative))   # (a strided operand)
    assert all(_check_all(cases))


def test_dot_general_specialised_equals_the_kernel():
    rng = np.random.default_rng(4)
    mm = (((1,), (0,)), ((), ()))
    cases, hits = [], []
    for dt in DTYPES:
        for m, k, n in ((3, 4, 2), (1, 1, 1), (0, 3, 2), (2, 0, 3), (4, 4, 4)):
            x, y = _values(dt, m * k, rng).reshape(m, k), _values(dt, k * n, rng).reshape(k, n)
            if dt.kind in "fc":   # (no NaN/inf here: a 0 * inf inside BLAS vs XLA is not what is tested)
                x, y = np.nan_to_num(x, posinf=2.0, neginf=-2.0), np.nan_to_num(y, posinf=2.0, neginf=-2.0)
            hits.append(len(cases))
            cases.append((L.dot_general_p, (x, y), {"dimension_numbers": mm}, _dotted))
        x = _values(dt, 12, rng).reshape(4, 3)
        if dt.kind in "fc":
            x = np.nan_to_num(x, posinf=2.0, neginf=-2.0)
        cases.append((L.dot_general_p, (x.T, x), {"dimension_numbers": mm}, _dotted))   # a transposed operand
        cases.append((L.dot_general_p, (x, x), {"dimension_numbers": (((0,), (0,)), ((), ()))}, _dotted))
    checked = _check_all(cases)
    assert any(checked[i] for i in hits)


def test_the_eager_signature_cache_keeps_dtypes_apart():
    """One primitive, several signatures in turn (the per-signature cache must not mix them up)."""
    for _ in range(3):
        for dt in (np.float32, np.float64, np.int8, np.uint8, np.bool_):
            a = np.arange(6).astype(dt).reshape(2, 3)
            out = xp.sum(xp.asarray(a), axis=0)
            want = a.sum(axis=0, dtype=np.int64 if dt in (np.int8, np.bool_) else np.uint64 if dt == np.uint8
                         else dt)
            assert np.asarray(out).dtype == want.dtype
            np.testing.assert_array_equal(np.asarray(out), want)
            f = xp.logical_and if dt == np.bool_ else xp.multiply
            prod = f(xp.asarray(a), xp.asarray(a))
            assert np.asarray(prod).dtype == np.dtype(dt)
            np.testing.assert_array_equal(np.asarray(prod), a & a if dt == np.bool_ else a * a)


@pytest.mark.parametrize("prim", [R.reduce_max_p, R.reduce_min_p], ids=lambda p: p.name)
def test_max_min_reductions_propagate_nan_in_xla_and_on_the_host(prim):
    """xp.max/xp.min bind the bare reduction and rely on this (NumPy's answer: NaN wherever one is reduced)."""
    rng = np.random.default_rng(5)
    npf = np.max if prim is R.reduce_max_p else np.min
    cases = []
    for dt in (np.float16, np.float32, np.float64):
        for shape, axes in (((1,), (0,)), ((8,), (0,)), ((33,), (0,)), ((1000,), (0,)), ((5, 17), (0,)),
                            ((5, 17), (1,)), ((64, 3), (0, 1)), ((2, 3, 40), (0, 2))):
            for trial in range(3):
                a = rng.standard_normal(shape).astype(dt)
                flat = a.reshape(-1)
                flat[rng.integers(0, flat.size)] = np.nan
                if trial == 1:
                    flat[[0, -1]] = np.nan
                if trial == 2:
                    flat[rng.integers(0, flat.size)] = np.inf
                cases.append((prim, (a,), {"axes": axes}))
    for (_, (a,), params), (got_xla,) in zip(cases, xla_many(cases)):
        want = npf(a, axis=params["axes"])
        got_host = impl_rules[prim](HostValue(a, _aval(a)), **params).np
        np.testing.assert_array_equal(got_xla, want)
        np.testing.assert_array_equal(got_host, want)


def test_convert_element_type_specialised_equals_the_kernel():
    hits = 0
    xs = {a: specials(a) for a in DTYPES}
    params = {b: {"new_dtype": b, "weak_type": False} for b in DTYPES}
    fulls = iter(xla_many((E.convert_element_type_p, [x], params[b]) for x in xs.values() for b in DTYPES))
    for a in DTYPES:
        x = xs[a]
        for b in DTYPES:
            full = next(fulls)   # (the 0-d and empty operands' answers: its slices)
            cut = lambda v: full and [full[0][:v.size].reshape(v.shape)]  # noqa: E731
            for v in (x, x[:1].reshape(()), x[:0]):
                with np.errstate(all="ignore"):
                    hits += _check(E.convert_element_type_p, (v,), params[b], want=cut(v))
    assert hits


def test_alternating_signatures_on_one_operand_stay_apart():
    """The eager impls recognise the last signature per first operand by identity: one operand met in turn with
    other params, other second operands and another arity must give each call its own result."""
    a = np.arange(12.0).reshape(3, 4)
    v = HostValue(a, _aval(a))
    w0, w1 = np.asarray(2.0), np.full((3, 4), 3.0)
    hw0, hw1 = HostValue(w0, _aval(w0)), HostValue(w1, _aval(w1))
    p = np.array([[True, False, True, False]] * 3)
    hp = HostValue(p, _aval(p))
    sum_, conv, add, sel = (impl_rules[q] for q in (R.reduce_sum_p, E.convert_element_type_p, E.add_p, E.select_n_p))
    for _ in range(3):
        for axes, want in (((0,), a.sum(0)), ((1,), a.sum(1)), ((0, 1), a.sum())):
            np.testing.assert_array_equal(sum_(v, axes=axes).np, want)
        for dt in (np.dtype(np.float32), np.dtype(bool), np.dtype(np.int32)):
            out = conv(v, new_dtype=dt, weak_type=False)
            assert out.np.dtype == dt and out.aval.dtype == dt and not out.aval.weak_type
        assert conv(v, new_dtype=np.dtype(np.float64), weak_type=True).aval.weak_type
        np.testing.assert_array_equal(add(v, hw0).np, a + 2.0)
        np.testing.assert_array_equal(add(v, hw1).np, a + 3.0)
        np.testing.assert_array_equal(add(v, v).np, a + a)
        np.testing.assert_array_equal(sel(hp, v, hw1).np, np.where(p, w1, a))
        np.testing.assert_array_equal(sel(hp, hw1, v).np, np.where(p, a, w1))
        np.testing.assert_array_equal(sel(hp, v).np, a)


def test_transposes_are_numpys_views():
    """A host transpose is NumPy's view of its operand (no copy, as in NumPy and torch; its consumers -- BLAS,
    ufuncs, reductions -- take strided operands), with XLA's values, of every dtype, F-ordered operands included."""
    rng = np.random.default_rng(6)
    arrays = [_values(dt, 60, rng).reshape(3, 4, 5) for dt in (np.float32, np.float64, np.int8, np.bool_, np.complex64)]
    cases = [(S.transpose_p, (a,), {"permutation": perm}) for a in arrays
             for perm in ((1, 0, 2), (2, 1, 0), (0, 2, 1), (0, 1, 2))]
    for (_, (a,), params), (want,) in zip(cases, xla_many(cases)):
        perm = params["permutation"]
        out = impl_rules[S.transpose_p](HostValue(a, _aval(a)), permutation=perm)
        _same_bits(out.np, np.transpose(a, perm), f"transpose {perm}")
        assert np.shares_memory(out.np, a)
        compare(out.np, want, [], f"transpose {perm} vs XLA")
    for shape in ((2020, 70), (70, 2020), (600, 600)):
        a = _values(np.float64, shape[0] * shape[1], rng).reshape(shape)
        v = np.ascontiguousarray(a.T).T   # (an F-ordered operand)
        _same_bits(host_kernels[S.transpose_p](v, permutation=(1, 0)), a.T, "F-ordered operand")
        out = impl_rules[S.transpose_p](HostValue(a, _aval(a)), permutation=(1, 0))
        assert np.shares_memory(out.np, a) and out.np.flags.f_contiguous
    x = xp.asarray(np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(np.asarray(xp.permute_dims(x, (1, 0))), np.arange(6.0).reshape(2, 3).T)


def test_a_form_made_at_one_shape_serves_every_shape_of_its_rank(spy):
    """The eager impls key a kernel's form by the operands' dtypes, ranks and params: a new shape of a known rank
    makes no new form, and the form made at one shape gives the kernel's values at others (empty ones too)."""
    made = spy(host, "form")
    rng = np.random.default_rng(9)
    for prim, params in ((E.sin_p, {}), (E.add_p, {}), (R.reduce_max_p, {"axes": (0,)}),
                         (R.reduce_sum_p, {"axes": (1,)}), (E.convert_element_type_p,
                                                            {"new_dtype": np.dtype(np.float32), "weak_type": False})):
        for shape in ((3, 4), (5, 2), (0, 3), (2, 0), (7, 7)):
            args = [rng.standard_normal(shape)] * (2 if prim is E.add_p else 1)
            out = impl_rules[prim](*[HostValue(a, _aval(a)) for a in args], **params)
            _same_bits(out.np, np.asarray(host.quiet(host_kernels[prim], *args, **params), out.aval.dtype),
                       f"{prim.name} {shape}")
            if shape == (3, 4):
                del made[:]   # (the first shape may make this rank's form, unless an earlier test did)
        assert not made, (prim.name, len(made))
    assert host_parallel.MIN_ELEMENTS > 7 * 7   # (none of these shapes is large enough to be split: one form each)
