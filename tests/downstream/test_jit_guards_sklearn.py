"""scikit-learn under jit with guards (transforms/jit_guards.py): its input validation (`if first_pass_isfinite:`)
and label sets (only their size: array_namespace/_datadep.py) are specialised to each call's values and checked
on every call; its metrics' `return float(...)` is a program output, a Python float each call (jit_returned.py);
a path that converts to NumPy (`_convert_to_numpy`, scipy.optimize's lbfgs) runs eagerly inside the jitted call.
Oracle: the same call on NumPy arrays. Each jitted function is called on several datasets of one shape."""
import numpy as np
import pytest
import sklearn
from sklearn.decomposition import PCA
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, mean_squared_error, r2_score
from sklearn.preprocessing import LabelEncoder, StandardScaler

import array_namespace as xp
from transforms import ConcretizationTypeError, jit
from transforms.jit_returned import ON


def _sk(fn):
    def wrapped(*args):
        with sklearn.config_context(array_api_dispatch=True):
            return fn(*args)
    return wrapped


def _data(seed, shape=(40, 5)):
    return np.random.default_rng(seed).random(shape)


def test_standard_scaler_fit_transform_on_new_data_matches_numpy():
    f = jit(_sk(lambda X: StandardScaler().fit_transform(X)))
    for seed in (0, 1, 2):
        X = _data(seed)
        np.testing.assert_allclose(np.asarray(f(xp.asarray(X))), (X - X.mean(0)) / X.std(0), rtol=1e-12)
    assert f._jitted.trace_count == 1   # its guards (finite input, no zero variance) hold for all three


def test_r2_score_float_result_is_each_calls_own():
    f = jit(_sk(r2_score))
    for seed in (0, 1, 0, 2):
        y, p = _data(seed, (30,)), _data(seed + 10, (30,))
        got = f(xp.asarray(y), xp.asarray(p))
        assert type(got) is float   # as NumPy-backed scikit-learn returns it
        assert got == pytest.approx(_sk(r2_score)(y, p), rel=1e-12)


@pytest.mark.parametrize("name", ["r2_score", "PCA"])
def test_nan_input_raises_sklearns_own_error_under_jit(name):
    fn = _sk(r2_score) if name == "r2_score" else _sk(lambda X, _: PCA(n_components=2).fit_transform(X))
    f = jit(fn)
    X = _data(0, (12, 3)) if name == "PCA" else _data(0, (12,))
    f(xp.asarray(X), xp.asarray(X * 0.5))   # a clean call first: its guards assume finite input
    bad = X.copy()
    bad[1] = np.nan
    with pytest.raises(ValueError, match="Input (X )?contains NaN"):
        f(xp.asarray(bad), xp.asarray(X * 0.5))
    with pytest.raises(ValueError, match="Input (X )?contains NaN"):
        fn(bad, X * 0.5)   # (NumPy: the same error)
    again = f(xp.asarray(X * 2.0), xp.asarray(X))
    np.testing.assert_allclose(np.asarray(again), np.asarray(fn(X * 2.0, X)), rtol=1e-9, atol=1e-12)


def test_strict_jit_keeps_the_error_at_sklearns_validation():
    with pytest.raises(ConcretizationTypeError, match="first_pass_isfinite"):
        jit(_sk(r2_score), guards=False)(xp.asarray(_data(0, (8,))), xp.asarray(_data(1, (8,))))


def _labels(seed, n=30, classes=(0, 1, 2)):
    rng = np.random.default_rng(seed)
    return np.asarray(classes)[rng.permutation(n) % len(classes)]


def test_label_encoder_runs_one_variant_for_label_sets_of_one_size():
    calls = []
    f = jit(_sk(lambda y: calls.append(1) or LabelEncoder().fit_transform(y)))
    sets = [(0, 1, 2), (5, 7, 9), (-3, 0, 40), (2, 3, 4)]   # other labels, the same number of them
    for seed, classes in enumerate(sets):
        y = _labels(seed, classes=classes)
        np.testing.assert_array_equal(np.asarray(f(xp.asarray(y))), LabelEncoder().fit_transform(y))
    assert len(calls) == 1 and f._jitted.trace_count == 1   # only the size of the label set is guarded
    y = _labels(9, classes=(1, 2, 3, 4))                    # four classes: a second variant
    np.testing.assert_array_equal(np.asarray(f(xp.asarray(y))), LabelEncoder().fit_transform(y))
    assert len(calls) == 2


def test_accuracy_score_label_sets_are_guarded_by_size_only():
    f = jit(_sk(accuracy_score))
    y, p = _labels(0), _labels(1)
    perm = np.random.default_rng(2).permutation(len(y))
    # other labels and orders: only the size of the label set is guarded
    for yy, pp in ((y, p), (y[perm], p[perm]), (y * 3 + 1, p * 3 + 1)):
        got = f(xp.asarray(yy), xp.asarray(pp))
        assert float(got) == accuracy_score(yy, pp)
    assert f._jitted.trace_count == 1


def _classes(seed, n=30):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    y = rng.permutation(n) % 2
    X[:, 0] += 1.5 * y
    return X, y


def test_logistic_regression_host_round_trip_under_jit_is_each_calls_own():
    fit_proba = _sk(lambda X, y: LogisticRegression().fit(X, y).predict_proba(X))
    f = jit(fit_proba)
    for seed in (0, 1, 2):
        X, y = _classes(seed)
        got = f(xp.asarray(X), xp.asarray(y))
        assert isinstance(got, xp.Array)
        np.testing.assert_allclose(np.asarray(got), fit_proba(X, y), rtol=1e-8, atol=1e-10)
    assert f._jitted.trace_count == 1   # traced once (to its first NumPy conversion); its guards hold for all three
    X, y = _classes(3)
    X[4, 1] = np.nan
    with pytest.raises(ValueError, match="Input X contains NaN"):
        f(xp.asarray(X), xp.asarray(y))
    with pytest.raises(ValueError, match="Input X contains NaN"):
        fit_proba(X, y)   # (NumPy: the same error)
    X, y = _classes(4)
    np.testing.assert_allclose(np.asarray(f(xp.asarray(X), xp.asarray(y))), fit_proba(X, y), rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("metric", [accuracy_score, r2_score, mean_squared_error])
def test_metrics_return_each_calls_python_float_from_one_trace(metric):
    # the metrics end in `return float(...)`: returned untouched, a program output rather than a guard
    calls = []
    f = jit(_sk(lambda y, p: calls.append(1) or metric(y, p)))
    got_values = set()
    for seed in range(6):
        if metric is accuracy_score:
            y, p = _labels(seed), _labels(seed + 20)
        else:
            y, p = _data(seed, (30,)), _data(seed + 20, (30,))
        got, want = f(xp.asarray(y), xp.asarray(p)), metric(y, p)
        assert type(got) is type(want) is float
        assert got == pytest.approx(want, rel=1e-12)
        got_values.add(got)
    assert len(got_values) > 3   # (different results: a stale constant would show)
    assert len(calls) == f._jitted.trace_count == (1 if ON else len(got_values))   # (else: a guard per value)
