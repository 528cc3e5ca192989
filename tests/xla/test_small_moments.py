"""xla/_small_moments.c through xla/host_moments.py: a small eager mean / var / std of a C-contiguous 2-d array over
one axis, or of any C-contiguous array over all axes, runs as one C call giving the bits of the NumPy calls it
replaces (hypothesis over shapes, axes, dtypes, corrections and special values); other layouts are declined to
those calls; a NumPy whose reduction order differs is caught by the probe; bad plans are refused."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import array_namespace as xp
from transforms.core import ShapedArray
from xla import host, host_moments, host_parallel, runtime

pytestmark = pytest.mark.skipif(host_moments._small is None or host.MODE != "host" or not runtime._kernels_on(),
                                reason="the C extension is not built (the default install builds it: "
                                       "test_dispatch_nodes.py asserts so), or host kernels are off")


def _numpy_calls(x, fname, axes, correction):
    """The NumPy calls host_moments makes without the extension, in its order."""
    dt = x.dtype
    n = int(np.prod([x.shape[a] for a in axes]))
    kept = [1 if i in axes else d for i, d in enumerate(x.shape)]
    with np.errstate(all="ignore"):
        s = np.true_divide(np.add.reduce(x, axes, dt), dt.type(n))
        if fname != "mean":
            d = np.subtract(x, s.reshape(kept))
            np.multiply(d, d, out=d)
            denom = n - correction
            s = np.true_divide(np.add.reduce(d, axes, dt), dt.type(denom if denom > 0 else np.nan))
            if fname == "std":
                s = np.sqrt(s)
    return np.asarray(s)


def _same_bits(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    assert np.array_equal(np.signbit(got) & ~np.isnan(got), np.signbit(want) & ~np.isnan(want))


SPECIALS = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-30, 3e38]


@settings(max_examples=150, deadline=None)
@given(m=st.integers(1, 70), n=st.integers(1, 70), axis=st.sampled_from([0, 1, None]),
       dt=st.sampled_from([np.float32, np.float64]), fname=st.sampled_from(["mean", "var", "std"]),
       correction=st.sampled_from([0, 1, 2.5, 80]), seed=st.integers(0, 2**31),
       specials=st.lists(st.tuples(st.integers(0, 10**6), st.sampled_from(SPECIALS)), max_size=4),
       zero_line=st.booleans())
def test_equals_the_numpy_calls_bit_for_bit(m, n, axis, dt, fname, correction, seed, specials, zero_line):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((m, n)) * 10.0 ** rng.integers(-4, 4, (m, n))).astype(dt)
    flat = x.reshape(-1)
    for i, v in specials:
        flat[i % flat.size] = v
    if zero_line:
        x[:, 0] = -0.0   # (a column of -0.0: the sum's start shows in its sign)
        x[-1] = -0.0
    a = xp.asarray(x)
    kw = {} if fname == "mean" else {"correction": correction}
    got = np.asarray(getattr(xp, fname)(a, axis=axis, **kw))
    axes = (0, 1) if axis is None else (axis,)
    _same_bits(got, _numpy_calls(x, fname, axes, 0 if fname == "mean" else correction))


def test_the_extension_is_taken_where_it_applies(monkeypatch):
    calls = []
    real = host_moments._run_fused

    def spy(plan, x, out):
        calls.append(real(plan, x, out))
        return calls[-1]
    monkeypatch.setattr(host_moments, "_run_fused", spy)
    taken = [((20, 5), 0), ((20, 5), 1), ((20, 5), None), ((3, 4, 5), None), ((7,), None), ((64, 64), 1)]
    declined = [((3, 4, 5), 1), ((1, 9), 0), ((9, 1), 1), ((65, 65), 0)]   # (3-d over one axis, a line, large)
    for shape, axis in taken + declined:
        x = np.random.default_rng(0).standard_normal(shape)
        calls.clear()
        got = np.asarray(xp.std(xp.asarray(x), axis=axis))
        np.testing.assert_allclose(got, np.std(x, axis=axis), rtol=1e-12)
        assert calls == ([True] if (shape, axis) in taken else []), (shape, axis)


@pytest.mark.parametrize("layout", ["F", "transposed", "strided"])
def test_other_layouts_are_declined_to_the_numpy_calls(layout):
    rng = np.random.default_rng(1)
    base = rng.standard_normal((30, 24))
    x = {"F": np.asfortranarray(base), "transposed": base.T, "strided": base[::2, ::2]}[layout]
    aval = ShapedArray(x.shape, x.dtype)
    for fname, axes in (("std", (0,)), ("var", (1,)), ("mean", (0, 1))):
        moment = host_moments.make(aval, fname, axes, 0)
        got = np.asarray(moment(host.HostValue(x, aval), False).np)
        _same_bits(got, _numpy_calls(x, fname, axes, 0))   # (NumPy's bits for this layout, not a copy's)


def test_the_probe_catches_a_reduction_order_of_another_numpy(monkeypatch):
    """The extension's sums start where NumPy 2's do (+0.0); starting at the first element (NumPy 1's) differs in
    a -0.0 column's sign, and the probe must then refuse the extension."""
    assert all(host_moments._probe(np.dtype(dt), axis) for dt in (np.float32, np.float64) for axis in (0, 1, 2))
    monkeypatch.setattr(host_parallel, "sum_start", lambda dt: None)
    assert not any(host_moments._probe(np.dtype(np.float64), axis) for axis in (0, 1, 2))


def test_bad_plans_are_refused_and_foreign_operands_declined():
    dt = np.dtype(np.float64)
    add = host_parallel.native_loop(np.add, [dt, dt], dt)
    div = host_parallel.native_loop(np.true_divide, [dt, dt], dt)
    sqrt = host_parallel.native_loop(np.sqrt, [dt], dt)
    one = np.array(1.0).tobytes()
    with pytest.raises(ValueError, match="axis"):
        host_moments._small.plan(add, None, None, add, None, "d", 8, 3, one, None, None)
    with pytest.raises(TypeError, match="arity"):
        host_moments._small.plan(add, None, None, sqrt, None, "d", 8, 0, one, None, None)
    with pytest.raises(TypeError, match="bytes"):
        host_moments._small.plan(add, None, None, add, None, "d", 8, 0, b"1", None, None)
    with pytest.raises(TypeError, match="sub and mul"):
        host_moments._small.plan(add, None, None, add, None, "d", 8, 0, one, one, None)
    plan = host_moments._small.plan(add, None, None, div, None, "d", 8, 0, np.array(4.0).tobytes(), None, None)
    out = np.full(5, 7.0)
    assert host_moments._small.run(plan, np.ones((4, 5), np.float32), out) is False   # (another dtype)
    assert host_moments._small.run(plan, np.ones((4, 6)), out) is False                # (out's length)
    assert (out == 7.0).all()
    assert host_moments._small.run(plan, np.full((4, 5), 3.0), out) is True and (out == 3.0).all()   # (the mean)
