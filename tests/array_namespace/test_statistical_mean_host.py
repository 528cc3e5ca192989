"""xp.mean eagerly on the CPU: one staged call whose way (host_eager's static rule) is its host program --
the values of its two primitives bound one by one, bit for bit, every call, compiling nothing however often
it is called; eager == jit within tolerance; NumPy's values within tolerance. Special values, empty axes,
f32/f64/complex.
"""
import warnings

import numpy as np
import pytest

import array_namespace as xp
from array_namespace import _statistical as ST
from array_namespace._helpers import UNSTAGED_CALLS
from transforms import jit
from transforms.core import bind
from transforms.primitives import elementwise as P
from transforms.primitives import reductions as R
from xla import host, runtime

pytestmark = pytest.mark.skipif(host.MODE == "xla", reason="host kernels switched off (ARRAY_NAMESPACE_EAGER=xla)")


def _two_binds(x, axis):
    """What eager xp.mean bound before: a reduce_sum, then a division by the count (a weak scalar)."""
    v = x._v
    axes = tuple(range(v.aval.ndim)) if axis is None else ((axis % v.aval.ndim,) if type(axis) is int
                                                           else tuple(sorted(a % v.aval.ndim for a in axis)))
    n = 1
    for a in axes:
        n *= v.aval.shape[a]
    from array_namespace._helpers import weak_scalar
    out = bind(P.div_p, bind(R.reduce_sum_p, v, axes=axes), weak_scalar(float(n) if n else float("nan"), v.aval.dtype))
    return np.asarray(out)


def _grid(dt, shape, rng):
    x = rng.standard_normal(shape) * 1e3
    if np.dtype(dt).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    x = x.astype(dt)
    flat = x.reshape(-1)
    specials = [np.nan, np.inf, -np.inf, -0.0, 0.0, np.finfo(np.dtype(dt).char.lower() if np.dtype(dt).kind == "c"
                                                              else dt).max, 1e-300]
    if flat.size > 30:     # (in a few places: most results stay finite, compared bit for bit)
        for i, s in enumerate(specials):
            flat[(7 * i + 3) % flat.size] = s
    return x


CASES = [((20, 5), 0), ((20, 5), None), ((20, 5), 1), ((20, 5), -1), ((3, 4, 5), (0, 2)), ((7,), None),
         ((0, 4), 0), ((4, 0), 1), ((), None), ((2, 3), ())]


@pytest.mark.parametrize("dt", [np.float32, np.float64, np.complex64, np.complex128])
@pytest.mark.parametrize("shape,axis", CASES)
def test_mean_equals_the_two_binds_bit_for_bit_and_compiles_nothing(fresh_staged, dt, shape, axis):
    rng = np.random.default_rng(hash((shape, str(axis))) % 2**32)
    x_np = _grid(dt, shape, rng)
    x = xp.asarray(x_np)
    ref = _two_binds(x, axis)
    before = runtime.compile_calls[0]
    for _ in range(UNSTAGED_CALLS + 3):   # (past any first-calls threshold: every call the same bits)
        got = xp.mean(x, axis=axis)
        assert got.dtype == x.dtype and got.shape == ref.shape
        np.testing.assert_array_equal(np.asarray(got), ref)   # (NaN == NaN, -0.0 vs 0.0 checked below)
        assert np.array_equal(np.signbit(np.asarray(got).real), np.signbit(ref.real))
    kept = xp.mean(x, axis=axis, keepdims=True)
    np.testing.assert_array_equal(np.asarray(kept).reshape(ref.shape), ref)
    assert runtime.compile_calls[0] == before
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # (NumPy's "mean of empty slice": NaN, as ours)
        want = np.mean(x_np, axis=axis)
    tol = 1e-5 if dt in (np.float32, np.complex64) else 1e-12
    np.testing.assert_allclose(np.asarray(got), want, rtol=tol, atol=tol * 1e3)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_eager_mean_equals_jit(dt):
    x_np = np.random.default_rng(3).standard_normal((20, 5)).astype(dt)
    x_np[2, 1], x_np[5, 3] = np.nan, np.inf
    x = xp.asarray(x_np)
    for axis in (0, 1, None):
        eager = np.asarray(xp.mean(x, axis=axis))
        jitted = np.asarray(jit(lambda a, axis=axis: xp.mean(a, axis=axis))(x))
        if dt == np.float64:
            np.testing.assert_allclose(eager, jitted, rtol=1e-14, atol=0)
            continue
        # float32: jit sums these in float64 (issue 23), so it rounds the exact sum once to float32, then divides
        # (XLA multiplies by the rounded 1/n: up to an ulp of the mean); eager is NumPy's float32 sum, off by up to its pairwise error bound (25 roundings of
        # the absolute values' sum here), which cancellation can make large against the mean
        exact_sum = np.sum(x_np.astype(np.float64), axis=axis)
        n = x_np.size // exact_sum.size
        fin = np.isfinite(exact_sum)
        half_ulp = lambda v: np.spacing(np.abs(v).astype(np.float32)).astype(np.float64) / 2   # noqa: E731
        err = np.abs(jitted[fin] - exact_sum[fin] / n)
        assert np.all(err <= half_ulp(exact_sum[fin]) / n + 2 * half_ulp(exact_sum[fin] / n))
        bound = 25 * 2.0 ** -24 * np.max(np.abs(x_np[np.isfinite(x_np)]))
        np.testing.assert_allclose(eager, jitted, rtol=1e-6, atol=bound)


def test_mean_many_calls_stays_on_its_kernels(fresh_staged):
    """However often it runs, a small mean keeps its way: its primitives bound on host kernels, never staged
    (a staged call of two primitives costs more than binding them) and never compiled."""
    from transforms import jaxpr_transforms as JT
    x = xp.asarray(np.arange(100.0).reshape(20, 5))
    before = runtime.compile_calls[0]
    for _ in range(50):
        got = xp.mean(x, axis=0)
    assert runtime.compile_calls[0] == before and type(got._v) is host.HostValue
    assert ST._moment_raw not in JT._LAST   # (no staged call of that signature was made)
    np.testing.assert_array_equal(np.asarray(got), np.arange(100.0).reshape(20, 5).mean(0))


def test_mean_errors_unchanged():
    with pytest.raises(TypeError, match="mean"):
        xp.mean(xp.asarray([1, 2, 3]))
    with pytest.raises(IndexError):
        xp.mean(xp.asarray([[1.0, 2.0]]), axis=2)
    with pytest.raises(ValueError, match="mean"):
        xp.mean(xp.asarray([[1.0, 2.0]]), axis=(0, 0))
