"""Oracle checks shared by the tests that bind primitives directly (tests/transforms/primitives/):
a jvp against central differences of a NumPy oracle along the tangent, a vmap against a Python loop
of the unbatched call, and a transpose against the dot-product identity <f(x), c> == <x, f^T(c)>."""
import numpy as np

import array_namespace as xp
from transforms import jvp, linear_transpose, vmap
from transforms.backend import backend


def raw(x):
    """A NumPy value as the engine's raw value (what primitives are bound on), in its own dtype (float16 too,
    which the namespace's asarray turns into its default float)."""
    return backend.device_put(np.asarray(x), None)


def check_jvp(f, oracle, args, diff=None, h=1e-6, rtol=1e-6, atol=1e-8, seed=0, tangents=None):
    """jvp of f (Arrays -> raw value) at float64 `args`, tangents random (or `tangents`) on the args
    listed in `diff` (default all), against the central difference of the NumPy oracle along them."""
    rng = np.random.default_rng(seed)
    diff = range(len(args)) if diff is None else diff
    args = [np.asarray(a) for a in args]
    ts = [rng.standard_normal(a.shape) if i in diff else np.zeros(a.shape) for i, a in enumerate(args)]
    ts = ts if tangents is None else [np.asarray(t) for t in tangents]
    wrapped = lambda *vs: f(*vs)
    out, tan = jvp(wrapped, tuple(xp.asarray(a) for a in args),
                   tuple(xp.asarray(t.astype(a.dtype)) for a, t in zip(args, ts)))
    np.testing.assert_allclose(np.asarray(out), oracle(*args), rtol=1e-12, atol=1e-12)
    plus = oracle(*[a + h * t if i in diff else a for i, (a, t) in enumerate(zip(args, ts))])
    minus = oracle(*[a - h * t if i in diff else a for i, (a, t) in enumerate(zip(args, ts))])
    np.testing.assert_allclose(np.asarray(tan), (np.asarray(plus) - np.asarray(minus)) / (2 * h), rtol=rtol,
                               atol=atol)
    return np.asarray(tan)


def check_vmap(f, args, in_axes, out_axes=0, **tol):
    """vmap(f, in_axes) against a Python loop of f over the mapped axis (None: not mapped)."""
    args = [np.asarray(a) for a in args]
    n = next(a.shape[d] for a, d in zip(args, in_axes) if d is not None)
    got = np.asarray(vmap(f, in_axes=tuple(in_axes), out_axes=out_axes)(*[xp.asarray(a) for a in args]))
    rows = [np.asarray(f(*[xp.asarray(a if d is None else np.take(a, i, axis=d)) for a, d in zip(args, in_axes)]))
            for i in range(n)]
    want = np.stack(rows, axis=out_axes)
    if tol:
        np.testing.assert_allclose(got, want, **tol)
    else:
        np.testing.assert_array_equal(got, want)
    return got


def check_transpose(f, x, seed=0, rtol=1e-12):
    """The transpose of the linear f (one Array -> raw) satisfies <f(x), c> == <x, f^T(c)> for random
    x and c, and f^T(c) has x's shape and dtype."""
    rng = np.random.default_rng(seed)
    x = np.asarray(x)
    xr = rng.standard_normal(x.shape).astype(x.dtype)
    y = np.asarray(f(xp.asarray(xr)))
    c = rng.standard_normal(y.shape).astype(y.dtype)
    (ft,) = linear_transpose(f, xp.asarray(x))(xp.asarray(c))
    ft = np.asarray(ft)
    assert ft.shape == x.shape and ft.dtype == x.dtype, (ft.shape, ft.dtype, x.shape, x.dtype)
    np.testing.assert_allclose(np.sum(y * c), np.sum(xr * ft), rtol=rtol, atol=1e-12)
    return ft
