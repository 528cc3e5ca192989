"""xla/host_moments.py: eager xp.mean / var / std of a small host-held float operand run their kernels directly
(the backend's `eager_moment` hook). It must be taken (not silently declined) on the common path, equal the
namespace body's primitives bound one by one bit for bit (the same kernels on the same values), compile
nothing, equal NumPy and jit within tolerance, keep every error, and decline -- the planned paths then run --
off its path (complex, weak, 0-d, empty, large, buffer-held operands, under a transform)."""
import warnings

import numpy as np
import pytest

import array_namespace as xp
from array_namespace import _statistical as ST
from transforms import grad, jit, vmap
from transforms.backend import backend
from xla import host, host_moments, runtime

pytestmark = pytest.mark.skipif(host.MODE != "host" or not runtime._kernels_on(),
                                reason="host-held eager values switched off: no direct moments")


@pytest.fixture
def taken(monkeypatch):
    """Counts, per function name, the direct runs made and the calls they answered (not declined)."""
    monkeypatch.setattr(ST, "_DIRECT", {})
    monkeypatch.setattr(ST, "_DIRECT_AXES", {})
    log = {"made": [], "ran": []}
    make = backend.eager_moment

    def spy(aval, fname, axes, correction):
        fn = make(aval, fname, axes, correction)
        log["made"].append((fname, fn is not None))
        if fn is None:
            return None

        def run(v, keepdims):
            out = fn(v, keepdims)
            log["ran"].append((fname, out is not None))
            return out
        return run
    monkeypatch.setattr(backend, "eager_moment", spy)
    return log


def _binds(x, fname, axis, correction, keepdims):
    """The namespace body's primitives bound one by one (each a host kernel), keepdims by a reshape bind."""
    v = x._v
    nd = v.aval.ndim
    axes = tuple(range(nd)) if axis is None else (axis % nd,)
    out = ST._moment_raw(v, fname=fname, axes=axes, correction=correction)
    if keepdims:
        out = ST._keep(out, v.aval.shape, axes, True)
    return np.asarray(out)


def _call(fname, x, axis, correction, keepdims):
    f = getattr(xp, fname)
    if fname == "mean":
        return f(x, axis=axis, keepdims=keepdims)
    return f(x, axis=axis, correction=correction, keepdims=keepdims)


def _data(dt, shape, rng, specials):
    x = (rng.standard_normal(shape) * 1e3).astype(dt)
    if specials:
        flat = x.reshape(-1)
        big = np.finfo(dt).max
        for i, s in enumerate([np.nan, np.inf, -np.inf, -0.0, big, -big, 1e-30]):
            flat[(7 * i + 3) % flat.size] = s
    return x


CASES = [((20, 5), 0), ((20, 5), 1), ((20, 5), -1), ((20, 5), None), ((3, 4, 5), 1), ((3, 4, 5), 2),
         ((3, 4, 5), None), ((7,), 0), ((7,), None), ((1, 1), 0), ((2, 3, 1, 4), -2), ((64, 64), 1)]


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("shape,axis", CASES)
@pytest.mark.parametrize("fname,correction", [("mean", 0), ("var", 0), ("var", 1), ("std", 0), ("std", 1.5),
                                              ("var", 7), ("std", 100)])
def test_direct_equals_the_binds_bit_for_bit_and_compiles_nothing(taken, dt, shape, axis, fname, correction):
    rng = np.random.default_rng(abs(hash((shape, axis, fname))) % 2**32)
    for specials in (False, True):
        x_np = _data(dt, shape, rng, specials)
        x = xp.asarray(x_np)
        before = runtime.compile_calls[0]
        for keepdims in (False, True):
            ref = _binds(x, fname, axis, correction, keepdims)
            for _ in range(3):   # (a first call at the signature, then its kept run)
                got = _call(fname, x, axis, correction, keepdims)
                assert type(got._v) is host.HostValue and got.dtype == x.dtype and got.shape == ref.shape
                g = np.asarray(got)
                assert g.dtype == ref.dtype
                np.testing.assert_array_equal(g, ref)   # (NaN == NaN; -0.0 checked next)
                assert np.array_equal(np.signbit(g), np.signbit(ref))
        assert runtime.compile_calls[0] == before
    assert taken["ran"] and all(ok for _, ok in taken["ran"])


@pytest.mark.parametrize("dt,tol", [(np.float32, 2e-5), (np.float64, 1e-12)])
def test_direct_equals_numpy_and_jit(taken, dt, tol):
    rng = np.random.default_rng(5)
    for shape, axis in CASES:
        x_np = rng.standard_normal(shape).astype(dt)
        x = xp.asarray(x_np)
        for fname, c in (("mean", 0), ("var", 0), ("var", 1), ("std", 0), ("std", 1)):
            for keepdims in (False, True):
                got = np.asarray(_call(fname, x, axis, c, keepdims))
                kw = {} if fname == "mean" else {"ddof": c}
                with np.errstate(all="ignore"), warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)   # (NumPy: "degrees of freedom <= 0")
                    want = getattr(np, fname)(x_np, axis=axis, keepdims=keepdims, **kw)
                np.testing.assert_allclose(got, want, rtol=tol, atol=tol, equal_nan=True)
                jitted = jit(lambda a, f=fname, ax=axis, c=c, k=keepdims: _call(f, a, ax, c, k))(x)
                np.testing.assert_allclose(got, np.asarray(jitted), rtol=tol, atol=tol, equal_nan=True)
                assert got.dtype == dt
    assert {f for f, ok in taken["ran"] if ok} == {"mean", "var", "std"}, taken


def test_new_shapes_of_a_known_rank_are_validated_once_and_compile_nothing(taken):
    before = runtime.compile_calls[0]
    for n in range(2, 40):
        a = np.random.default_rng(n).standard_normal((n, 3))
        x = xp.asarray(a)
        np.testing.assert_allclose(np.asarray(xp.std(x, axis=0, correction=1)), np.std(a, axis=0, ddof=1),
                                   rtol=1e-12)
        np.testing.assert_allclose(np.asarray(xp.mean(x, axis=1)), np.mean(a, axis=1), rtol=1e-12)
    assert runtime.compile_calls[0] == before
    assert len(ST._DIRECT_AXES) == 2 and len(ST._DIRECT) == 2 * 38
    assert len(taken["ran"]) == 2 * 38 and all(ok for _, ok in taken["ran"])


def test_declines_off_its_path_and_the_planned_paths_answer(taken):
    rng = np.random.default_rng(9)
    a = rng.standard_normal((30, 4))
    big = rng.standard_normal((host_moments.VAR_MAX_ELEMENTS // 4 + 1, 4))
    cases = [
        ("mean", xp.asarray(a.astype(np.complex128) * 1j), np.mean(a * 1j, axis=0)),   # complex
        ("mean", xp.asarray(np.float64(2.5)), 2.5),                                    # 0-d
        ("var", xp.asarray(np.zeros((0, 4))), np.full(4, np.nan)),                     # empty
        ("std", xp.asarray(big), np.std(big, axis=0)),                                 # above VAR_MAX_ELEMENTS
    ]
    for fname, x, want in cases:
        axis = None if x.ndim == 0 else 0
        with np.errstate(all="ignore"):
            got = np.asarray(getattr(xp, fname)(x, axis=axis))
        np.testing.assert_allclose(got, want, rtol=1e-12, equal_nan=True)
    assert taken["made"] == [("mean", False), ("mean", False), ("var", False), ("std", False)]
    assert not taken["ran"]
    # a value a jit call also holds as a device buffer still runs directly; once donated, it declines and the
    # planned path raises as before
    x = xp.asarray(a)
    jit(lambda t: t + 1.0)(x)
    assert x._v._buf is not None
    np.testing.assert_allclose(np.asarray(xp.var(x, axis=0)), np.var(a, axis=0), rtol=1e-12)
    assert taken["ran"] == [("var", True)]
    jit(lambda t: t * 2.0, donate_argnums=0)(x)
    with pytest.raises(RuntimeError, match="donated"):
        xp.var(x, axis=0)
    assert taken["ran"] == [("var", True), ("var", False)]


def test_transforms_never_run_it_and_gradients_are_right(taken):
    a = np.random.default_rng(2).standard_normal((6, 4))
    x = xp.asarray(a)
    xp.std(x, axis=0)   # (its direct run exists for this signature)
    n_ran = len(taken["ran"])

    def f(t):
        return xp.sum(xp.std(t, axis=0) ** 2) + xp.sum(xp.mean(t, axis=1))
    g = np.asarray(grad(f)(x))
    eps, num = 1e-6, np.zeros_like(a)
    for i in np.ndindex(a.shape):
        d = np.zeros_like(a)
        d[i] = eps
        num[i] = (float(f(xp.asarray(a + d))) - float(f(xp.asarray(a - d)))) / (2 * eps)
    np.testing.assert_allclose(g, num, rtol=1e-6, atol=1e-8)
    b = np.asarray(vmap(lambda r: xp.var(r, correction=1))(x))
    np.testing.assert_allclose(b, [np.var(r, ddof=1) for r in a], rtol=1e-12)
    j = np.asarray(jit(lambda t: xp.std(t, axis=0))(x))
    np.testing.assert_allclose(j, np.std(a, axis=0), rtol=1e-12)
    # (the finite differences ran eagerly: their own direct runs; none under grad/vmap/jit)
    assert all(f == "std" or f == "mean" for f, _ in taken["ran"][n_ran:])
    assert len(taken["ran"]) - n_ran == 2 * 2 * a.size


def test_errors_are_unchanged_after_a_direct_run_exists(taken):
    x = xp.asarray(np.ones((4, 3)))
    xp.var(x, axis=0, correction=1)
    xp.mean(x, axis=1)
    with pytest.raises(TypeError, match="correction"):
        xp.var(x, axis=0, correction=True)   # (True == 1: must not find the int correction's run)
    with pytest.raises(TypeError, match="std"):
        xp.std(xp.asarray([1, 2, 3]))
    with pytest.raises(TypeError, match="mean"):
        xp.mean(xp.asarray([1, 2, 3]), axis=0)
    with pytest.raises(IndexError):
        xp.mean(x, axis=2)
    with pytest.raises(IndexError):
        xp.std(x, axis=-3)
    with pytest.raises(TypeError):
        xp.mean(x, axis=True)
    assert np.isnan(np.asarray(xp.var(x, axis=0, correction=float("nan")))).all()


def test_results_are_fresh_values_the_operand_unchanged(taken):
    a = np.random.default_rng(4).standard_normal((5, 4))
    x = xp.asarray(a)
    outs = [xp.std(x, axis=1), xp.std(x, axis=1), xp.mean(x, axis=0, keepdims=True)]
    assert outs[0]._v.np is not outs[1]._v.np
    np.testing.assert_array_equal(np.asarray(x), a)
    want = np.std(a, axis=1)
    w = np.asarray(outs[0])
    w[...] = 0.0   # (NumPy's writable copy: the value is immutable)
    np.testing.assert_array_equal(np.asarray(outs[0]), want)
    np.testing.assert_array_equal(np.asarray(outs[2]), a.mean(0, keepdims=True))
