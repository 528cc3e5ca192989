"""array_namespace/_statistical.py: mean, var and std over a grid of shapes, axes, keepdims, corrections,
dtypes and special values, eagerly (host kernels), under jit and on the staged path taken by large
inputs -- each against NumPy, and eager against jit; float32 stays float32; the staged path compiles
once per signature and small inputs compile nothing."""
import numpy as np
import pytest

import array_namespace as xp
from transforms import grad, jit
from xla import host, runtime

R = np.random.default_rng(7)
SPECIAL = np.array([[1.0, np.nan, 2.0, -0.0], [np.inf, -1.0, 0.5, 3.0], [-np.inf, np.inf, 1e300, -1e300]])

CASES = [   # (shape, axis)
    ((), None), ((5,), None), ((5,), 0), ((4, 6), None), ((4, 6), 0), ((4, 6), 1), ((4, 6), -1),
    ((2, 3, 4), (0, 2)), ((2, 3, 4), (1, 2)), ((2, 3, 4), (0, 1)), ((2, 3, 4), ()), ((2, 3, 4), 1),
    ((0, 3), 0), ((0, 3), 1), ((0, 3), None), ((3, 0), 1),
]


def _np_moment(fname, a, axis, correction, keepdims):
    with np.errstate(all="ignore"):
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            if fname == "mean":
                return np.mean(a, axis=axis, keepdims=keepdims)
            return getattr(np, fname)(a, axis=axis, ddof=correction, keepdims=keepdims)


def _ours(fname, axis, correction, keepdims):
    if fname == "mean":
        return lambda a: xp.mean(a, axis=axis, keepdims=keepdims)
    return lambda a: getattr(xp, fname)(a, axis=axis, correction=correction, keepdims=keepdims)


def _check(fname, a, axis, correction, keepdims, rtol):
    want = np.asarray(_np_moment(fname, a, axis, correction, keepdims))
    f = _ours(fname, axis, correction, keepdims)
    x = xp.asarray(a)
    eager, jitted = np.asarray(f(x)), np.asarray(jit(f)(x))
    for mode, got in (("eager", eager), ("jit", jitted)):
        assert got.dtype == a.dtype, f"{mode}: {got.dtype} from {a.dtype}"
        assert got.shape == want.shape, f"{mode}: shape {got.shape} != {want.shape}"
        np.testing.assert_allclose(got, want.astype(a.dtype), rtol=rtol, atol=rtol, equal_nan=True, err_msg=mode)
    np.testing.assert_allclose(eager, jitted, rtol=rtol, atol=rtol, equal_nan=True, err_msg="eager vs jit")


@pytest.mark.parametrize("fname", ["mean", "var", "std"])
@pytest.mark.parametrize("shape, axis", CASES)
@pytest.mark.parametrize("keepdims", [False, True])
def test_grid_against_numpy_and_jit(fname, shape, axis, keepdims):
    a = R.standard_normal(shape) * 3 + 1
    _check(fname, a, axis, 0, keepdims, 1e-12)
    _check(fname, a.astype(np.float32), axis, 0, keepdims, 2e-5)


@pytest.mark.parametrize("fname", ["var", "std"])
@pytest.mark.parametrize("correction", [1, 1.5, 4, 6, 7.0])
def test_corrections_including_none_left(fname, correction):
    # N - correction <= 0 gives NaN (N = 6 along axis 1); NumPy returns inf or NaN there, we NaN throughout
    a = R.standard_normal((4, 6))
    f = _ours(fname, 1, correction, False)
    got, jitted = np.asarray(f(xp.asarray(a))), np.asarray(jit(f)(xp.asarray(a)))
    if 6 - correction > 0:
        np.testing.assert_allclose(got, _np_moment(fname, a, 1, correction, False), rtol=1e-12)
    else:
        assert np.isnan(got).all()
    np.testing.assert_allclose(got, jitted, rtol=1e-12, equal_nan=True)


@pytest.mark.parametrize("fname", ["mean", "var", "std"])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_special_values(fname, axis):
    _check(fname, SPECIAL, axis, 0, False, 1e-12)
    _check(fname, np.where(np.abs(SPECIAL) == 1e300, SPECIAL * 1e-270, SPECIAL).astype(np.float32), axis, 0, False,
           1e-5)


def test_integer_input_refused_and_complex_var_refused():
    with pytest.raises(TypeError, match="mean"):
        xp.mean(xp.asarray([1, 2]))
    with pytest.raises(TypeError, match="var"):
        xp.var(xp.asarray([1 + 1j]))
    with pytest.raises(TypeError, match="correction"):
        xp.std(xp.asarray([1.0, 2.0]), correction=True)


def test_a_kept_plan_for_tuple_axes_still_refuses_a_bool_axis():
    """mean/var/std keep a plan per axis tuple of ints (NumPy integers mean the same axes); a bool, which == 1 and
    hashes as 1, never takes one: True is refused after (1,) and 1 were planned, as before."""
    a = R.standard_normal((3, 4))
    x = xp.asarray(a)
    for _ in range(2):
        for axis in ((1,), (np.int64(1),), 1, (0, 1)):
            np.testing.assert_allclose(np.asarray(xp.var(x, axis=axis, correction=1)), np.var(a, axis=axis, ddof=1),
                                       rtol=1e-14)
        for axis in ((True,), True, (0, True)):
            with pytest.raises(TypeError, match="bool"):
                xp.var(x, axis=axis, correction=1)


def test_gradients_against_finite_differences():
    a = R.standard_normal((3, 4))
    for fname in ("mean", "var", "std"):
        f = lambda v, fname=fname: xp.sum(_ours(fname, 1, 1 if fname != "mean" else 0, False)(v) ** 2)
        g = np.asarray(grad(f)(xp.asarray(a)))
        eps, num = 1e-6, np.zeros_like(a)
        for i in np.ndindex(a.shape):
            d = np.zeros_like(a)
            d[i] = eps
            num[i] = (float(f(xp.asarray(a + d))) - float(f(xp.asarray(a - d)))) / (2 * eps)
        np.testing.assert_allclose(g, num, rtol=1e-6, atol=1e-8, err_msg=fname)


# ----------------------------------------------------------------------- the staged path of large inputs

@pytest.mark.parametrize("fname, axis, correction, keepdims", [
    ("mean", 1, 0, False), ("var", None, 0, False), ("std", 1, 1, True), ("std", 0, 0, False),
    ("var", (0, 1), 2.5, True),
])
def test_large_inputs_are_staged_and_compiled_once_per_signature(monkeypatch, fname, axis, correction, keepdims):
    from xla import host_eager
    monkeypatch.setattr(host_eager, "BY_OP_MAX_ELEMENTS", 1000)
    a = R.standard_normal((200, 170))   # (above host_eager's op-by-op size: the backend compiles at once)
    a[3, 4] = np.nan
    f = _ours(fname, axis, correction, keepdims)
    for dt, rtol in ((np.float64, 1e-12), (np.float32, 2e-5)):
        arr = a.astype(dt)
        before = runtime.compile_calls[0]
        f(xp.asarray(arr))
        if host.MODE != "xla":   # (without host kernels the keepdims reshape compiles one more executable)
            assert runtime.compile_calls[0] == before + 1, "the large input did not take the staged, compiled path"
        _check(fname, arr, axis, correction, keepdims, rtol)
        before = runtime.compile_calls[0]
        out = f(xp.asarray(arr))
        assert runtime.compile_calls[0] == before, "a second call on the same signature compiled again"
        assert np.asarray(out).dtype == dt


@pytest.mark.skipif(host.MODE == "xla", reason="host kernels switched off (ARRAY_NAMESPACE_EAGER=xla)")
def test_small_inputs_compile_nothing_on_new_shapes(fresh_staged):
    before = runtime.compile_calls[0]
    for n in range(3, 9):
        a = xp.asarray(R.standard_normal((n, n + 1)))
        xp.mean(a, axis=0)
        xp.var(a, axis=1, correction=1)
        xp.std(a, keepdims=True)
        xp.std(xp.astype(a, xp.float32), axis=(0, 1))
    assert runtime.compile_calls[0] == before


def test_nan_correction_gives_nan_and_is_never_a_staging_key(monkeypatch):
    from xla import host_eager
    monkeypatch.setattr(host_eager, "BY_OP_MAX_ELEMENTS", 1000)
    x = xp.asarray(R.standard_normal((200, 170)))
    before = runtime.compile_calls[0]
    assert np.isnan(np.asarray(xp.var(x, axis=0, correction=float("nan")))).all()
    if host.MODE != "xla":   # (without host kernels, eager single ops compile once per signature)
        assert runtime.compile_calls[0] == before
    before = runtime.compile_calls[0]
    assert np.isnan(np.asarray(xp.var(x, axis=0, correction=float("nan")))).all()
    assert runtime.compile_calls[0] == before   # (NaN != NaN: as a cache key it would compile every call)


def test_medium_inputs_run_on_host_kernels_every_call_with_the_same_bits():
    a = R.standard_normal((200, 171))
    a[2, 3] = np.inf
    for dt, rtol in ((np.float64, 1e-12), (np.float32, 2e-5)):
        arr = a.astype(dt)
        with np.errstate(invalid="ignore"):
            want = np.std(arr, axis=1, ddof=1, keepdims=True)
        x = xp.asarray(arr)
        before = runtime.compile_calls[0]
        seen = set()
        for _ in range(30):
            got = xp.std(x, axis=1, correction=1, keepdims=True)
            assert np.asarray(got).dtype == dt
            seen.add(np.asarray(got).tobytes())
        if host.MODE != "xla":
            assert runtime.compile_calls[0] == before
        assert len(seen) == 1
        np.testing.assert_allclose(np.asarray(got), want, rtol=rtol, equal_nan=True)


