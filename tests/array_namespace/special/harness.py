"""One oracle harness for every xp.special function: values against scipy.special (float32 and
float64, special values included), jit against eager and scipy, vmap against a Python loop, and
gradients (forward and reverse, first and second order) against central finite differences of
scipy's own function -- never against our code."""
from __future__ import annotations

import numpy as np
import scipy.special as sc

import array_namespace as xp
from transforms import grad, jit, jvp, vmap

TOL = {np.float32: 2e-5, np.float64: 1e-11}
# jit runs each function on its points repeated cyclically to this length (tests/xla/lower_harness.XLA_LEN):
# then one program per function (and argument types) serves every test of it, test_special_coverage's too,
# and one that is a single primitive of its name is the module tests/xla's special tests run: each compiled
# once per session (the compile cache's hit), every point still checked
N_JIT = 8192


def tiled(arrays):
    """1-D arrays of one length repeated cyclically to N_JIT (None where they are not: the caller jits as is)."""
    if len({np.shape(a) for a in arrays}) != 1 or np.ndim(arrays[0]) != 1:
        return None
    return [np.resize(a, N_JIT) for a in arrays]


def check_values(name, args, *, dtype=np.float64, rtol=None, atol=0.0, oracle=None):
    """xp.special.<name>(*args) against scipy.special.<name> (or `oracle`), same dtype out."""
    f, ref = getattr(xp.special, name), oracle or getattr(sc, name)
    np_args = [np.asarray(a, dtype) if np.ndim(a) or isinstance(a, float) else a for a in args]
    want = np.asarray(ref(*np_args))
    got = f(*[xp.asarray(a) if isinstance(a, np.ndarray) else a for a in np_args])
    assert got.dtype == xp.asarray(want.astype(dtype)).dtype, f"{name}: dtype {got.dtype}, want {dtype}"
    rt = TOL[np.dtype(dtype).type] if rtol is None else rtol
    np.testing.assert_allclose(np.asarray(got), want.astype(dtype), rtol=rt, atol=atol, equal_nan=True,
                               err_msg=f"{name}{tuple(np.asarray(a).tolist() for a in np_args)}")


def check_float32_ulps(name, args, *, ulps=1.0, under_jit=True):
    """xp.special.<name> of float32 `args` within `ulps` of scipy's float64 value at those points (what scipy's
    float32 loops round), eagerly and, with under_jit, under jit (on the points tiled to N_JIT where they are 1-D
    and of one length: the program other float32 tests of the function compile)."""
    f = getattr(xp.special, name)
    want = getattr(sc, name)(*[np.asarray(a, np.float64) for a in args])
    ok = np.isfinite(want) & (np.abs(want) < 1e38) & (np.abs(want) > 1e-37)
    runs = [(f, args, want, ok)]
    if under_jit:
        big = tiled(args)
        runs.append((jit(f), args, want, ok) if big is None else
                    (jit(f), big, np.resize(want, N_JIT), np.resize(ok, N_JIT)))
    for g, a, w, k in runs:
        got = np.asarray(g(*map(xp.asarray, a)))
        assert got.dtype == np.float32, (name, got.dtype)
        err = np.abs(got[k] - w[k]) / np.spacing(np.abs(w[k]).astype(np.float32))
        assert err.max() <= ulps, (name, err.max(), [np.asarray(v)[k][np.argmax(err)] for v in a])


def check_transforms(name, args, *, rtol=1e-10, atol=0.0, oracle=None):
    """jit == eager == scipy, vmap == loop over the first axis of every array argument."""
    f, ref = getattr(xp.special, name), oracle or getattr(sc, name)
    arrs = [xp.asarray(np.asarray(a, np.float64)) for a in args]
    want = np.asarray(ref(*[np.asarray(a, np.float64) for a in args]))
    eager = np.asarray(f(*arrs))
    np.testing.assert_allclose(eager, want, rtol=rtol, atol=atol, equal_nan=True)
    big = tiled([np.asarray(a, np.float64) for a in args])
    if big is None:
        np.testing.assert_allclose(np.asarray(jit(f)(*arrs)), want, rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_allclose(np.asarray(jit(f)(*map(xp.asarray, big))), np.resize(want, N_JIT), rtol=rtol,
                                   atol=atol, equal_nan=True)
    n = arrs[0].shape[0]
    loop = np.stack([np.asarray(f(*[a[i] for a in arrs])) for i in range(n)])
    np.testing.assert_allclose(np.asarray(vmap(f)(*arrs)), loop, rtol=rtol, atol=atol, equal_nan=True)


def _fd(ref, args, i, eps):
    a = [np.asarray(v, np.float64) for v in args]
    p, m = list(a), list(a)
    p[i], m[i] = a[i] + eps, a[i] - eps
    return (np.asarray(ref(*p)) - np.asarray(ref(*m))) / (2 * eps)


def check_grad(name, args, argnums=(0,), *, rtol=1e-5, atol=1e-7, eps=1e-6, oracle=None, second=True):
    """Elementwise d/d(arg) by reverse mode (grad of sum) and forward mode (jvp) against finite
    differences of scipy's function; with `second`, d2/d(arg)2 by forward-over-reverse against
    finite differences of scipy's function too."""
    f, ref = getattr(xp.special, name), oracle or getattr(sc, name)
    arrs = [xp.asarray(np.asarray(a, np.float64)) for a in args]
    for i in argnums:
        want = _fd(ref, args, i, eps)

        def fi(v, i=i):
            return f(*arrs[:i], v, *arrs[i + 1:])
        rev = grad(lambda v: xp.sum(fi(v)))(arrs[i])
        np.testing.assert_allclose(np.asarray(rev), want, rtol=rtol, atol=atol, err_msg=f"grad {name} arg {i}")
        _, fwd = jvp(fi, (arrs[i],), (xp.ones_like(arrs[i]),))
        np.testing.assert_allclose(np.asarray(fwd), want, rtol=rtol, atol=atol, err_msg=f"jvp {name} arg {i}")
        if second:
            e2 = 1e-4
            a = [np.asarray(v, np.float64) for v in args]
            p, m = list(a), list(a)
            p[i], m[i] = a[i] + e2, a[i] - e2
            want2 = (np.asarray(ref(*p)) - 2 * np.asarray(ref(*a)) + np.asarray(ref(*m))) / e2 ** 2
            d1 = lambda v: grad(lambda u: xp.sum(fi(u)))(v)
            _, d2 = jvp(d1, (arrs[i],), (xp.ones_like(arrs[i]),))
            np.testing.assert_allclose(np.asarray(d2), want2, rtol=1e-3, atol=1e-5,
                                       err_msg=f"second derivative {name} arg {i}")
