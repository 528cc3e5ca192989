"""scikit-learn on data whose rows are split over 8 CPU devices (run by test_sharded_sklearn.py in a fresh process
with ARRAY_NAMESPACE_CPU_DEVICES=8; distributed_worker.py's 'sklearn' scenario reuses the helpers over 2 processes
x 4 devices): PCA.fit_transform and Ridge fit + predict under jit(in_shardings=rows) equal the one-device jit and
NumPy-backed scikit-learn, and the compiled program (XLA's HLO after SPMD partitioning) reduces across devices
(all-reduce) without ever gathering the whole dataset onto one device."""
import os
import re

os.environ["SCIPY_ARRAY_API"] = "1"

import numpy as np  # noqa: E402
import sklearn  # noqa: E402
from sklearn.decomposition import PCA  # noqa: E402
from sklearn.linear_model import Ridge  # noqa: E402

import array_namespace as xp  # noqa: E402
import transforms  # noqa: E402
from transforms import NamedSharding, P, device_put, jit, make_mesh  # noqa: E402

N, D = 1024, 8   # rows split over the devices: each holds N / devices rows


def data(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, D)) * np.linspace(1.0, 3.0, D) + 0.5
    y = X @ rng.standard_normal(D) + 0.1 * rng.standard_normal(N) + 2.0
    return X, y


def pca(X):
    with sklearn.config_context(array_api_dispatch=True):
        return PCA(n_components=5).fit_transform(X)


def ridge(X, y):
    with sklearn.config_context(array_api_dispatch=True):
        m = Ridge(alpha=1.0, solver="svd").fit(X, y)
        return m.coef_, m.intercept_, m.predict(X)


def numpy_pca(X):
    return PCA(n_components=5).fit_transform(X)


def numpy_ridge(X, y):
    m = Ridge(alpha=1.0, solver="svd").fit(X, y)
    return m.coef_, m.intercept_, m.predict(X)


def shardings(mesh):
    return NamedSharding(mesh, P("d", None)), NamedSharding(mesh, P("d"))


def collectives(hlo):
    """{collective kind: [its result shapes]} in an optimized HLO module's text."""
    out = {}
    for shape, kind in re.findall(r"(?m)^\s*(?:ROOT )?%\S+ = (.+?) (all-reduce|all-gather|reduce-scatter|all-to-all|"
                                  r"collective-permute)(?:-start)?\(", hlo):
        out.setdefault(kind, []).append(shape)
    return out


def gathers_rows(hlo, n):
    """The all-gathers in `hlo` whose result has `n` or more rows (a whole dataset of n rows put together)."""
    return [s for s in collectives(hlo).get("all-gather", []) if int(re.search(r"\[(\d+)", s + "[0").group(1)) >= n]


def check_partitioned(compiled, what):
    hlo = compiled.as_text()
    got = collectives(hlo)
    assert got.get("all-reduce"), f"{what}: no all-reduce in the partitioned program: {got}"
    assert not gathers_rows(hlo, N), f"{what}: the whole dataset is gathered: {got}"
    assert re.search(rf"f64\[{N // transforms.device_count()},{D}\]", hlo), f"{what}: no per-device block of X"
    return got


# ---------------------------------------------------------------------------------------------- 8 devices

def _mesh():
    assert transforms.device_count() == 8, "run with ARRAY_NAMESPACE_CPU_DEVICES=8"
    return make_mesh((8,), ("d",))


def test_pca_fit_transform_on_rows_over_8_devices():
    rows, _ = shardings(_mesh())
    X, _ = data(0)
    f = jit(pca, in_shardings=rows)
    Xs = device_put(xp.asarray(X), rows)
    got = f(Xs)
    assert got.sharding == rows   # (the partitioner keeps the transformed rows where their inputs are)
    one = jit(pca)(xp.asarray(X))
    np.testing.assert_allclose(np.asarray(got), np.asarray(one), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(np.asarray(got), numpy_pca(X), rtol=1e-10, atol=1e-10)
    check_partitioned(f.compiled(Xs), "PCA")
    X2, _ = data(1)   # new data, same guards: the same program
    np.testing.assert_allclose(np.asarray(f(device_put(xp.asarray(X2), rows))), numpy_pca(X2), rtol=1e-10,
                               atol=1e-10)
    assert f.trace_count == 1


def test_ridge_fit_predict_on_rows_over_8_devices():
    rows, vec = shardings(_mesh())
    X, y = data(2)
    f = jit(ridge, in_shardings=(rows, vec))
    Xs, ys = device_put(xp.asarray(X), rows), device_put(xp.asarray(y), vec)
    got = f(Xs, ys)
    one = jit(ridge)(xp.asarray(X), xp.asarray(y))
    for g, o, n in zip(got, one, numpy_ridge(X, y)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(o), rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(np.asarray(g), n, rtol=1e-10, atol=1e-10)
    check_partitioned(f.compiled(Xs, ys), "Ridge")


def test_svd_of_rows_over_8_devices_vs_numpy():
    """The tall-skinny svd an SPMD program lowers (blocks' QRs, then the small svd) against NumPy's: the same
    singular values and the same factorisation (vectors up to sign), real and complex, with and without
    vectors; a non-finite matrix gives NaN as on one device."""
    mesh = _mesh()
    rows = NamedSharding(mesh, P("d", None))
    rng = np.random.default_rng(3)
    for dt in (np.float64, np.complex128):
        A = rng.standard_normal((64, 5)).astype(dt)
        if dt == np.complex128:
            A = A + 1j * rng.standard_normal((64, 5))
        As = device_put(xp.asarray(A), rows)
        u, s, vt = jit(lambda a: xp.linalg.svd(a, full_matrices=False), in_shardings=rows)(As)
        u, s, vt = np.asarray(u), np.asarray(s), np.asarray(vt)
        ws = np.linalg.svd(A, compute_uv=False)
        np.testing.assert_allclose(s, ws, rtol=1e-12)
        np.testing.assert_allclose((u * s) @ vt, A, atol=1e-12)
        np.testing.assert_allclose(u.conj().T @ u, np.eye(5), atol=1e-12)
        np.testing.assert_allclose(np.asarray(jit(xp.linalg.svdvals, in_shardings=rows)(As)), ws, rtol=1e-12)
    import threadpoolctl   # LAPACK's OpenBLAS (scipy's) is single-threaded once partitions' threads call it at once
    scipy_blas = [i for i in threadpoolctl.threadpool_info() if "scipy.libs" in i["filepath"]]
    assert scipy_blas and all(i["num_threads"] == 1 for i in scipy_blas), scipy_blas
    bad = np.ones((64, 5))
    bad[7, 2] = np.inf
    got = jit(xp.linalg.svdvals, in_shardings=rows)(device_put(xp.asarray(bad), rows))
    assert np.isnan(np.asarray(got)).all()
