"""Small helpers shared by the control-flow test modules (Arrays from values, closeness, a scalar
central difference)."""
import numpy as np

import array_namespace as xp


def a(v, dtype=None):
    return xp.asarray(np.asarray(v), dtype=dtype)


def close(got, want, tol=1e-10):
    np.testing.assert_allclose(np.asarray(got), want, rtol=tol, atol=tol)


def fd(f, x, eps=1e-6):
    """Central finite difference of a scalar function of a scalar (float64)."""
    return (float(f(a(x + eps))) - float(f(a(x - eps)))) / (2 * eps)
