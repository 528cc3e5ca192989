"""xla/lower_structural.py: shape ops, reductions, argmax/argmin, dot_general and the nested jit call,
each reached through the namespace and run under jit against NumPy (float32, float64, int, bool,
empty and NaN operands). The last test checks the cases reach every primitive the module lowers."""
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import array_namespace as xp
from array_namespace._helpers import wrap
from lower_harness import Case, check, lowered_by, prims_of, raw
from transforms import jit, make_jaxpr, vmap
from transforms.backend import backend
from transforms.primitives import reductions as RD
from xla.lower_structural import SUM32_WIDE_MAX

R = np.random.default_rng(0)
M = R.standard_normal((3, 4))
M32 = M.astype(np.float32)
NANS = np.array([[1.0, np.nan, -2.0], [np.inf, 0.5, -np.inf]])
I = np.array([[3, -1, 7], [0, 7, 2]], np.int32)
BOOL = np.array([[True, False, True], [True, True, True]])

CASES = [
    Case("broadcast_to", lambda x: xp.broadcast_to(x, (2, 3, 4)), lambda x: np.broadcast_to(x, (2, 3, 4)), [M]),
    Case("reshape", lambda x: xp.reshape(x, (4, 3)), lambda x: x.reshape(4, 3), [M32]),
    Case("permute_dims", lambda x: xp.permute_dims(x, (1, 0)), np.transpose, [I]),
    Case("concat", lambda x, y: xp.concat([x, y, x], axis=1), lambda x, y: np.concatenate([x, y, x], 1), [M, M * 2]),
    Case("slice", lambda x: x[1:, ::2], lambda x: x[1:, ::2], [M]),
    Case("pad", lambda x: xp.cumulative_sum(x, axis=1, include_initial=True),
         lambda x: np.pad(np.cumsum(x, 1), ((0, 0), (1, 0))), [M], 1e-13, 1e-15),
    Case("flip", lambda x: xp.flip(x, axis=1), lambda x: np.flip(x, 1), [M32]),
    Case("arange", lambda x: xp.arange(5, dtype=xp.int32) + x, lambda x: np.arange(5, dtype=np.int32) + x,
         [np.int32(3)]),
    Case("sum", lambda x: xp.sum(x, axis=0), lambda x: np.sum(x, 0), [NANS]),
    Case("sum-int", lambda x: xp.sum(x, axis=1, dtype=xp.int32), lambda x: np.sum(x, 1, dtype=np.int32), [I]),
    Case("sum-empty", xp.sum, np.sum, [np.zeros((0, 3))]),
    Case("prod", lambda x: xp.prod(x, axis=1), lambda x: np.prod(x, 1), [M32], 1e-6),
    Case("max", lambda x: xp.max(x, axis=1), lambda x: np.max(x, 1), [NANS]),
    Case("min", lambda x: xp.min(x, axis=0), lambda x: np.min(x, 0), [I]),
    Case("all", lambda x: xp.all(x, axis=1), lambda x: np.all(x, 1), [BOOL]),
    Case("any", lambda x: xp.any(x, axis=0), lambda x: np.any(x, 0), [~BOOL]),
    Case("argmax", lambda x: xp.argmax(x, axis=1), lambda x: np.argmax(x, 1), [M]),
    Case("argmax-ties", xp.argmax, np.argmax, [np.array([1.0, 3.0, 3.0, -1.0])]),
    Case("argmin", lambda x: xp.argmin(x, axis=0), lambda x: np.argmin(x, 0), [I]),
    Case("matmul", xp.matmul, np.matmul, [M, M.T.copy()], 1e-13),
    Case("matmul-f32-batched", xp.matmul, np.matmul, [np.stack([M32, M32]), M32.T.copy()], 2e-6, 1e-6),
    Case("tensordot", lambda a, b: xp.tensordot(a, b, axes=([0], [0])), lambda a, b: np.tensordot(a, b, ([0], [0])),
         [M, M], 1e-13),
    Case("vecdot-int", xp.vecdot, lambda a, b: np.sum(a * b, -1, dtype=a.dtype), [I, I]),
    Case("nested-jit", jit(lambda x: xp.sin(x) * 2.0), lambda x: np.sin(x) * 2.0, [M]),
]


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_jit_matches_numpy(case):
    check(case)


def test_argmax_of_nan_is_its_first_position():
    check(Case("argmax-nan", lambda x: xp.argmax(x, axis=1), lambda x: np.argmax(x, 1), [NANS]))


_ARG_POOL = np.array([0.0, -0.0, 1e-310, -1e-310, 2.0, -2.0, 2.0, np.nan, -np.nan, np.inf, -np.inf, 0.5])


def _flushed(x):
    """x with subnormals as zeros of their sign: how XLA's CPU runtime (and the host kernels) compare them."""
    if x.dtype.kind != "f":
        return x
    return np.where(np.abs(x) < np.finfo(x.dtype).tiny, np.copysign(np.zeros_like(x), x), x)


@pytest.mark.parametrize("chain_max", [0, 64])   # every axis by the two reductions / but (300, 2)'s first, the chain
@pytest.mark.parametrize("fname", ["argmax", "argmin"])
@pytest.mark.parametrize("dt", ["float64", "float32", "int32", "bool"])
def test_argmax_argmin_under_jit_equal_numpy_on_ties_nans_zeros_and_subnormals(dt, fname, chain_max, monkeypatch):
    # oracle: NumPy's first extremum (its first NaN, -0.0 tying 0.0) on x with subnormals flushed (XLA's CPU mode);
    # the eager host kernel must give the same
    from xla import lower_structural
    monkeypatch.setattr(lower_structural, "ARG_CHAIN_MAX", chain_max)
    rng = np.random.default_rng(len(dt) + chain_max % 7)
    f, npf = getattr(xp, fname), getattr(np, fname)
    for shape in [(40,), (6, 7), (3, 5, 33), (300, 2)]:
        pool = _ARG_POOL if dt.startswith("float") else np.arange(4)
        x = rng.choice(pool, shape).astype(dt)
        x[..., 0] = x[..., -1]   # (a tie at both ends)
        for axis in range(x.ndim):
            want = npf(_flushed(x), axis=axis)
            got = jit(lambda v: f(v, axis=axis))(xp.asarray(x))
            assert got.dtype == xp.int64 and np.array_equal(np.asarray(got), want), (shape, axis)
            assert np.array_equal(np.asarray(f(xp.asarray(x), axis=axis)), want)


@pytest.mark.parametrize("dt", ["float64", "float32"])
def test_max_min_and_arg_of_rows_holding_nan_are_nan_under_jit_at_sizes_xla_hands_to_a_library(dt):
    # oracle: NumPy. At these sizes XLA:CPU hands a row reduction to YNNPACK, whose max and min drop NaN: a row
    # with a NaN was its largest number, a row of NaNs -inf, argmax an index past the row's end
    rng = np.random.default_rng(3)
    for shape in [(100, 256), (1000, 67), (8, 4096)]:
        x = rng.standard_normal(shape).astype(dt)
        x[0, :] = np.nan
        x[1, rng.integers(shape[1])] = np.nan
        x[2, -1] = np.nan
        x[3, 5] = -np.inf
        x[4, 7] = np.inf
        for fname in ["max", "min", "argmax", "argmin"]:
            f, npf = getattr(xp, fname), getattr(np, fname)
            for axis in [1, 0, None] if fname in ("max", "min") else [1, 0]:
                got = np.asarray(jit(lambda v: f(v, axis=axis))(xp.asarray(x)))
                assert np.array_equal(got, npf(x, axis=axis), equal_nan=True), (shape, fname, axis)


def test_every_lowered_primitive_is_reached():
    reached = set().union(*(prims_of(make_jaxpr(c.fn)(*[xp.asarray(a) for a in c.args])) for c in CASES))
    assert lowered_by("xla.lower_structural") - reached == set()


# ------------------------------ accuracy of float32/complex64/float16 sums, products and means (issue 23)
# Oracles in Python: exact sums (math.fsum) and exact products (integers), each rounded once to float64.
# Products of the narrow dtypes accumulate in float64 (complex128) under jit, so they are correctly rounded (up
# to the float64 accumulation's relative n*2^-53); float32 sums too up to SUM32_WIDE_MAX elements. Larger float32
# sums run XLA's own float32 kernel: their error must stay within NumPy's pairwise-summation error bound.
U32 = 2.0 ** -24


def _exact_prod(v):
    m, e = np.frexp(np.asarray(v, np.float64).ravel())
    ints = (m * 2.0 ** 53).astype(np.int64).tolist()   # exact
    return float(Fraction(math.prod(ints)) / 2 ** (53 * len(ints) - int(e.sum())))


def _exact_cprod(v):
    re, im, scale = 1, 0, 0   # (re + i*im) / 2**scale, exactly
    for z in np.asarray(v).ravel():
        a, b = int(float(z.real) * 2.0 ** 160), int(float(z.imag) * 2.0 ** 160)   # exact for |x| >= 2^-149 or 0
        re, im, scale = re * a - im * b, re * b + im * a, scale + 160
    return complex(Fraction(re, 2 ** scale), Fraction(im, 2 ** scale))


def _per_output(fn, x, axis):
    """fn over each output's values (axis None or an int or a tuple of ints), as a float64/complex128 array."""
    axes = tuple(range(x.ndim)) if axis is None else (axis,) if isinstance(axis, int) else tuple(axis)
    kept = [d for d in range(x.ndim) if d not in axes]
    rows = np.transpose(x, kept + list(axes)).reshape([x.shape[d] for d in kept] + [-1])
    out = [fn(r) for r in rows.reshape(-1, rows.shape[-1])]
    return np.array(out).reshape(rows.shape[:-1])


def _fsum(v):
    return math.fsum(np.asarray(v, np.float64).tolist())


def _assert_rounded(got, exact, slack, dtype=np.float32, ulps=0.5):
    """got within `ulps` of `exact`'s spacing in dtype (per real component), plus the float64 accumulation's
    slack (an absolute array)."""
    got, exact = np.asarray(got), np.asarray(exact)
    for g, e in ([(got.real, exact.real), (got.imag, exact.imag)] if np.iscomplexobj(got) else [(got, exact)]):
        err = np.abs(g.astype(np.float64) - e)
        tol = ulps * np.spacing(np.abs(e).astype(dtype)).astype(np.float64) + slack
        assert np.all(err <= tol), (np.max(err / tol), g[err > tol][:3], e[err > tol][:3])


PROD_SHAPES = [((4096,), None), ((64, 70), 0), ((64, 70), 1), ((5, 33, 40), (0, 2)), ((3, 17), None), ((7, 5), 1)]


@pytest.mark.parametrize("shape,axis", PROD_SHAPES, ids=str)
def test_float32_prod_under_jit_is_correctly_rounded(shape, axis):
    x = (1 + 1e-2 * R.standard_normal(shape)).astype(np.float32)
    exact = _per_output(_exact_prod, x, axis)
    got = np.asarray(jit(lambda a: xp.prod(a, axis=axis))(xp.asarray(x)))
    assert got.dtype == np.float32 and got.shape == np.shape(exact)
    _assert_rounded(got, exact, x.size * 2.0 ** -52 * np.abs(exact))
    eager = np.asarray(xp.prod(xp.asarray(x), axis=axis))   # eager stays NumPy's
    assert np.array_equal(eager, np.prod(x, axis=axis))


def test_complex64_prod_and_sum_under_jit_are_correctly_rounded():
    z = (1 + 1e-2 * (R.standard_normal((6, 700)) + 1j * R.standard_normal((6, 700)))).astype(np.complex64)
    exact = _per_output(_exact_cprod, z, 1)
    got = np.asarray(jit(lambda a: xp.prod(a, axis=1))(xp.asarray(z)))
    assert got.dtype == np.complex64
    _assert_rounded(got, exact, 700 * 2.0 ** -51 * np.abs(exact))
    w = (R.standard_normal(50_000) + 1j * R.standard_normal(50_000)).astype(np.complex64)
    exact = complex(_fsum(w.real), _fsum(w.imag))
    _assert_rounded(np.asarray(jit(xp.sum)(xp.asarray(w))), exact, 50_000 * 2.0 ** -52 * np.sum(np.abs(w)))


def _pairwise_bound(n):
    """NumPy's pairwise summation's error bound, in units of sum(|x|): blocks of up to 128 summed by 8 running
    sums (15 additions, 3 to combine them, up to 7 for a tail), then ceil(log2(n/128)) halving levels."""
    return (25 + max(0, math.ceil(math.log2(n / 128)))) * U32


@pytest.mark.parametrize("shape,axis", [((1000,), None), ((16384,), None), ((40, 400), 1), ((400, 40), 0),
                                        ((300, 1000), None), ((300, 1000), 0), ((300, 1000), 1), ((2**20,), None)],
                         ids=str)
@pytest.mark.parametrize("data", ["uniform", "normal"])
def test_float32_sum_and_mean_under_jit_are_within_numpy_pairwise_bound(shape, axis, data):
    r = np.random.default_rng(0)   # (its own draws, whatever ran before: the sequential sum's error below is the data's)
    x = (r.random(shape) if data == "uniform" else r.standard_normal(shape)).astype(np.float32)
    exact, abs_sum = _per_output(_fsum, x, axis), _per_output(lambda r: _fsum(np.abs(r)), x, axis)
    n = x.size // exact.size
    total = np.asarray(jit(lambda a: xp.sum(a, axis=axis))(xp.asarray(x)))
    mean = np.asarray(jit(lambda a: xp.mean(a, axis=axis))(xp.asarray(x)))
    assert total.dtype == mean.dtype == np.float32
    if x.size <= SUM32_WIDE_MAX:   # accumulated in float64: correctly rounded
        _assert_rounded(total, exact, n * 2.0 ** -52 * abs_sum)
    else:
        assert np.all(np.abs(total - exact) <= _pairwise_bound(n) * abs_sum)
    # the mean: the sum's error, divided, and one more rounding
    assert np.all(np.abs(mean - exact / n) <= _pairwise_bound(n) * abs_sum / n + np.spacing(np.abs(mean)))
    # what it is bound to beat: a sequential float32 sum of these 2^20 values is 6.5 times the bound off (0.8 to 8.6
    # times over seeds 0-11)
    if data == "uniform" and x.size == 2**20:
        assert abs(np.cumsum(x)[-1] - exact) > 4 * _pairwise_bound(n) * abs_sum


@settings(max_examples=15, deadline=None)
@given(st.lists(st.integers(1, 24), min_size=1, max_size=3).flatmap(
    lambda s: st.tuples(st.just(tuple(s)), st.sets(st.integers(0, len(s) - 1), min_size=1))))
def test_float32_reductions_over_any_axes_are_correctly_rounded(shape_axes):
    shape, axes = shape_axes[0], tuple(sorted(shape_axes[1]))
    x = (1 + 1e-2 * np.random.default_rng(len(shape)).standard_normal(shape)).astype(np.float32)
    got = jit(lambda a: (xp.prod(a, axis=axes), xp.sum(a, axis=axes)))(xp.asarray(x))
    p, s = (np.asarray(g) for g in got)
    exact_p, exact_s = _per_output(_exact_prod, x, axes), _per_output(_fsum, x, axes)
    n = x.size // max(exact_s.size, 1)
    _assert_rounded(p, exact_p, n * 2.0 ** -52 * np.abs(exact_p))
    _assert_rounded(s, exact_s, n * 2.0 ** -52 * _per_output(lambda r: _fsum(np.abs(r)), x, axes))


def test_float16_sum_and_prod_accumulate_wide():
    h = (1 + 1e-2 * R.standard_normal(4096)).astype(np.float16)
    for p, exact in [(RD.reduce_sum_p, _fsum(h)), (RD.reduce_prod_p, _exact_prod(h))]:
        got = np.asarray(jit(raw(p, axes=(0,)))(wrap(backend.device_put(h, None))))   # (a float16 engine value)
        assert got.dtype == np.float16
        _assert_rounded(got, exact, 1e-9 * abs(exact), np.float16)


def test_float32_prod_keeps_ieee_specials_and_its_float64_range():
    x = np.array([[np.inf, 0, 1], [np.nan, 1, 1], [3e38, 10, 1], [-0.0, 2, 3], [1e30, 1e30, 1e-30]], np.float32)
    got = np.asarray(jit(lambda a: xp.prod(a, axis=1))(xp.asarray(x)))
    assert np.isnan(got[:2]).all() and got[2] == np.inf and got[3] == 0 and np.signbit(got[3])
    # the partial product 1e60 overflows float32, not the float64 accumulator: jit rounds the true product
    # (eagerly, NumPy's float32 loop gives inf)
    _assert_rounded(got[4], _exact_prod(x[4]), 0.0)


def test_only_narrow_float_sums_and_products_widen():
    def text(f, x):
        return jit(f).lower(xp.asarray(x)).as_text()
    small, big = np.ones((8, 40), np.float32), np.ones(SUM32_WIDE_MAX + 1, np.float32)
    assert "xf64>" in text(xp.prod, small) and "xf64>" in text(xp.prod, big) and "xf64>" in text(xp.sum, small)
    assert "complex<f64>" in text(xp.sum, small.astype(np.complex64))
    assert "stablehlo.convert" not in text(xp.sum, big)   # XLA's float32 sum kernel
    for f, x in [(xp.prod, np.ones(40)), (xp.sum, np.ones(40)), (xp.prod, np.ones(40, np.int64))]:
        assert "stablehlo.convert" not in text(f, x)
    for f in [xp.max, xp.min]:   # (their only convert: the NaN flags to bytes, _any_nan)
        assert "f64" not in text(f, small)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_max_min_of_signed_zeros_are_one_answer_eagerly_under_jit_and_vmap(dtype):
    """max/min order -0.0 below +0.0 (IEEE 754-2019 maximum/minimum, XLA's): a slice holding both zeros has
    max +0.0 and min -0.0 in either order. NumPy's reduce keeps the zero it meets first (np.max([0., -0.]) is
    0.0 but np.max([-0., 0.]) is -0.0), so eagerly the answer moved with the order while jit's did not (issue 24)."""
    rows = np.array([[0.0, -0.0], [-0.0, 0.0], [-0.0, -0.0], [0.0, 0.0], [-0.0, -1.0], [np.nan, -0.0]], dtype)
    want_max = np.array([0.0, 0.0, -0.0, 0.0, -0.0, np.nan], dtype)   # by the rule, written out
    want_min = np.array([-0.0, -0.0, -0.0, 0.0, -1.0, np.nan], dtype)
    np.testing.assert_array_equal(want_max, np.max(rows, 1))   # (NumPy's values; only the zeros' signs differ)
    np.testing.assert_array_equal(want_min, np.min(rows, 1))
    x = xp.asarray(rows)
    for f, want in ((xp.max, want_max), (xp.min, want_min)):
        ways = {"eager": f(x, axis=1), "jit": jit(lambda v: f(v, axis=1))(x),
                "vmap": vmap(f)(x), "rows": np.stack([np.asarray(f(x[i])) for i in range(len(rows))]),
                "jit-rows": np.stack([np.asarray(jit(f)(x[i])) for i in range(len(rows))])}
        for way, got in ways.items():
            got = np.asarray(got)
            np.testing.assert_array_equal(got, want, err_msg=f"{f.__name__} {way}")
            assert (np.signbit(got) == np.signbit(want)).all(), f"{f.__name__} {way}: zero signs {got} != {want}"


def _same_bits(got, want):
    got, want = np.asarray(got), np.asarray(want)
    return got.dtype == want.dtype and got.shape == want.shape and got.tobytes() == want.tobytes()


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128, np.complex64])
@pytest.mark.parametrize("shape,axis", [((1,), None), ((1, 3), 0), ((3, 1), 1), ((2, 1, 2), 1), ((1, 1), None)])
def test_sum_and_prod_of_one_element_per_result_are_identity_op_x_eagerly_and_under_jit(dtype, shape, axis):
    """A reduction of one element per result is 0 + x (sum) and 1 * x (prod), as the host kernels (NumPy's) give
    it: sum(-0.0) is 0.0, prod(inf+0j) is inf+nanj. XLA's simplifier made it x itself under jit (-0.0, inf+0j),
    so jit and eager disagreed (found by fuzzing eager against jit)."""
    vals = [-0.0, complex(np.inf, 0.0), complex(-0.0, np.inf), np.nan] if np.dtype(dtype).kind == "c" else [-0.0, -np.inf]
    for v in vals:
        a = np.full(shape, v, dtype)
        x = xp.asarray(a)
        for f, ref in ((xp.sum, np.sum), (xp.prod, np.prod)):
            want = np.asarray(ref(a, axis=axis))
            for way, got in (("eager", f(x, axis=axis)), ("jit", jit(lambda t: f(t, axis=axis))(x))):
                assert _same_bits(got, want), f"{f.__name__}({v!r}) {way}: {np.asarray(got)} != NumPy's {want}"


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128, np.complex64])
def test_dot_of_one_product_per_result_is_a_sum_from_zero_eagerly_and_under_jit(dtype):
    """A dot product sums from +0.0 (NumPy's and XLA's own for longer sums): of one product -0.0 it is 0.0. XLA's
    simplifier turned a dot with a contraction of size 1 into a multiply, so jit(matmul) kept -0.0 (fuzzing)."""
    a = np.array([[-0.0], [1.0], [np.inf]], dtype)
    b = np.array([[0.0, -2.0, -0.0]], dtype)
    cases = [(xp.matmul, np.matmul, (a, b)), (lambda p, q: xp.tensordot(p, q, axes=1), np.matmul, (a[0], b[:, 0])),
             (lambda p, q: xp.tensordot(p, q, axes=([1], [0])), np.matmul, (a, b)),
             (xp.matmul, np.matmul, (a[None], b[None]))]
    for f, ref, args in cases:
        want = np.asarray(ref(*args))
        xs = [xp.asarray(t) for t in args]
        for way, got in (("eager", f(*xs)), ("jit", jit(f)(*xs)), ("vmap", vmap(f)(*[t[None] for t in xs])[0])):
            assert _same_bits(got, want), f"{way}: {np.asarray(got)} != NumPy's {want}"


@settings(max_examples=20, deadline=None, derandomize=True)
@given(st.lists(st.integers(0, 5), min_size=0, max_size=3), st.data())
def test_boolean_reductions_lowered_as_byte_min_max_equal_numpy(shape, data):
    """all / any (and min / max of booleans) lower to a min / max of the booleans as uint8 (XLA's CPU emitter
    vectorizes that, not a reduction of booleans); the results are NumPy's, for every axis, empty ones too."""
    shape = tuple(shape)
    b = np.asarray(data.draw(st.lists(st.booleans(), min_size=math.prod(shape), max_size=math.prod(shape))),
                   bool).reshape(shape)
    axes = [None] + list(range(len(shape))) + ([(0, len(shape) - 1)] if len(shape) > 1 else [])
    for axis in axes:
        for ours, ref in ((xp.all, np.all), (xp.any, np.any)):
            got = jit(lambda v: ours(v, axis=axis))(xp.asarray(b))
            assert got.dtype == xp.bool and np.array_equal(np.asarray(got), ref(b, axis=axis)), (ours, axis)
        nonempty = all(shape[a] for a in (range(len(shape)) if axis is None else np.atleast_1d(axis)))
        if nonempty and b.size:
            for ours, ref in ((xp.max, np.max), (xp.min, np.min)):
                got = jit(lambda v: ours(v, axis=axis))(xp.asarray(b))
                assert got.dtype == xp.bool and np.array_equal(np.asarray(got), ref(b, axis=axis)), (ours, axis)
    text = jit(lambda v: (xp.all(v), xp.any(v))).lower(xp.asarray(b)).as_text()
    assert "stablehlo.and across" not in text and "stablehlo.or across" not in text


def _entry_shapes(compiled_text):
    """The result shapes of the ENTRY computation's instructions other than its parameters (optimized HLO)."""
    entry = compiled_text[compiled_text.index("\nENTRY "):]
    return [ln.split(" = ")[1].split()[0].split("{")[0] for ln in entry.splitlines()[1:]
            if " = " in ln and "parameter(" not in ln]


@pytest.mark.parametrize("shape,axis", [((2024, 74), 0), ((2024, 1), 0), ((300, 7, 5), (0, 1)), ((33, 6), 0)],
                         ids=str)
def test_a_column_reduction_of_an_expression_writes_no_temporary_of_the_operands_size(shape, axis):
    """A column reduction (a leading axis reduced, the last kept) longer than XLA's tree window (32) used to write its
    elementwise producer out whole before XLA's tree of reduce-windows (jit(sum((y - yh) ** 2, axis=0)) on 4000x4000
    float64: a 128 MB temporary a call, 4-5x JAX's time): its first level is now one reduce fused with the producer.
    No instruction of the optimized program has the operand's shape; values are NumPy's for every reduction kind."""
    y = R.standard_normal(shape)
    yh = y + R.standard_normal(shape)
    yi = (y * 100).astype(np.int32)
    cases = [(lambda a, b: xp.sum((a - b) ** 2, axis=axis), lambda a, b: ((a - b) ** 2).sum(axis), (y, yh)),
             (lambda a, b: xp.max(xp.abs(a - b), axis=axis), lambda a, b: np.abs(a - b).max(axis), (y, yh)),
             (lambda a, b: xp.min(a * b, axis=axis), lambda a, b: (a * b).min(axis), (y, yh)),
             (lambda a, b: xp.prod(1.0 + (a - b) * 1e-3, axis=axis), lambda a, b: (1.0 + (a - b) * 1e-3).prod(axis),
              (y, yh)),
             (lambda a, b: xp.any(a > b + 2.0, axis=axis), lambda a, b: (a > b + 2.0).any(axis), (y, yh)),
             (lambda a, b: xp.all(a > b - 2.0, axis=axis), lambda a, b: (a > b - 2.0).all(axis), (y, yh)),
             (lambda a, b: xp.max(a - b, axis=axis), lambda a, b: (a - b).max(axis), (yi, yi[::-1])),
             (lambda a, b: xp.sum(a * b, axis=axis), lambda a, b: (a * b).sum(axis), (yi, yi[::-1]))]
    fused = len(cases)   # (the cases before argmax's)
    if not isinstance(axis, tuple):   # (values only: argmax reads its operand twice, so XLA writes it out)
        cases.append((lambda a, b: xp.argmax(a - b, axis=axis), lambda a, b: (a - b).argmax(axis), (y, yh)))
    for i, (ours, ref, args) in enumerate(cases):
        f = jit(ours)
        xs = [xp.asarray(v) for v in args]
        got, want = np.asarray(f(*xs)), ref(*args)
        if want.dtype.kind == "f":
            np.testing.assert_allclose(got, want, rtol=1e-13, atol=0)
        else:
            np.testing.assert_array_equal(got, want)
        full = f"{np.asarray(args[0]).dtype.name.replace('float', 'f').replace('int', 's')}[{','.join(map(str, shape))}]"
        assert i >= fused or full not in _entry_shapes(f.compiled(*xs).as_text()), (i, full)


def test_nan_repairs_of_max_and_min_stay_only_where_xla_may_hand_the_reduction_to_ynnpack():
    # a module with a column reduction runs XLA's own reductions (compile_flags), whose max keeps NaN: its repair
    # is dropped (XLA removes the byte reduction left behind); a module of row reductions keeps it. Against NumPy
    x = np.random.default_rng(4).standard_normal((300, 64))
    x[3, 5] = np.nan
    x[7, :] = np.nan
    rows = lambda v: xp.max(v, axis=1)   # noqa: E731
    mixed = lambda v: (xp.max(v, axis=1), xp.sum(v, axis=0))   # noqa: E731
    assert "stablehlo.select" in jit(rows).lower(xp.asarray(x)).as_text()
    assert "stablehlo.select" not in jit(mixed).lower(xp.asarray(x)).as_text()
    assert "nan_repair" not in jit(rows).lower(xp.asarray(x)).as_text()
    got_max, got_sum = jit(mixed)(xp.asarray(x))
    assert np.array_equal(np.asarray(got_max), np.max(x, axis=1), equal_nan=True)
    assert np.allclose(np.asarray(got_sum), np.sum(x, axis=0), equal_nan=True)
    assert np.array_equal(np.asarray(jit(rows)(xp.asarray(x))), np.max(x, axis=1), equal_nan=True)
