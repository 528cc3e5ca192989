"""grad through scikit-learn's StandardScaler (array-API dispatch): its first fit computes 0/0
(sklearn/utils/extmath.py _incremental_mean_and_var, `last_sum / last_over_new_count` with no samples
seen) and overwrites the NaN with a masked write. The overwritten position's zero cotangent must stay
zero through the backward rules (mul0/div0), else every entry of the gradient is NaN (as in JAX and
torch). Oracles: central finite differences of the same call; jacfwd."""
import numpy as np
import sklearn
from sklearn.preprocessing import StandardScaler

import array_namespace as xp
from finite_diff import central_diff
from transforms import grad, jacfwd, jit


def _loss(W):
    def f(X):
        with sklearn.config_context(array_api_dispatch=True):
            return xp.sum(StandardScaler().fit(X).transform(X) * W)
    return f


def _fd(f, x, h=1e-6):
    """Central differences (tests/finite_diff.py) of f at x, f taking an Array."""
    return central_diff(lambda v: float(f(xp.asarray(v))), x, h)


def test_standard_scaler_grad_matches_finite_differences_and_jacfwd():
    rng = np.random.default_rng(0)
    X, W = rng.random((6, 3)), rng.standard_normal((6, 3))
    f = _loss(xp.asarray(W))
    g = np.asarray(grad(f)(xp.asarray(X)))
    assert np.isfinite(g).all()
    np.testing.assert_allclose(g, _fd(f, X), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(np.asarray(jacfwd(f)(xp.asarray(X))), g, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(np.asarray(jit(grad(f))(xp.asarray(X))), g, rtol=1e-12, atol=1e-14)
    # the analytic gradient of sum(W * (X - mean) / std) per column: (W - mean W - z mean(W z)) / std
    z = (X - X.mean(0)) / X.std(0)
    want = (W - W.mean(0) - z * (W * z).mean(0)) / X.std(0)
    np.testing.assert_allclose(g, want, rtol=1e-10)


def test_standard_scaler_constant_column_grad_agrees_with_jacfwd():
    # a constant column: scale 0 is replaced by 1 (another masked write), so transform is X - mean there
    rng = np.random.default_rng(1)
    X, W = rng.random((5, 3)), rng.standard_normal((5, 3))
    X[:, 1] = 0.25
    f = _loss(xp.asarray(W))
    g = np.asarray(grad(f)(xp.asarray(X)))
    np.testing.assert_allclose(np.asarray(jacfwd(f)(xp.asarray(X))), g, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(g[:, 1], W[:, 1] - W[:, 1].mean(), rtol=1e-12)
    np.testing.assert_allclose(g[:, [0, 2]], _fd(f, X)[:, [0, 2]], rtol=1e-6, atol=1e-7)
