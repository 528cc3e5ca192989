"""scikit-learn 1.9.1 cases (estimators tagged array_api_support, metrics and pairwise functions from
its array-API support list), each run under `config_context(array_api_dispatch=True)`; the oracle is
the same call on NumPy arrays under the same config.
"""
import functools

import sklearn
from sklearn import metrics
from sklearn.decomposition import PCA
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.linear_model import LogisticRegression, Ridge, RidgeClassifier
from sklearn.metrics import pairwise
from sklearn.naive_bayes import GaussianNB
from sklearn.preprocessing import (Binarizer, KernelCenterer, LabelBinarizer, MaxAbsScaler, MinMaxScaler,
                                   Normalizer, PolynomialFeatures, StandardScaler, normalize)

from ds_harness import LIB, NA, Case


def _sk(fn):
    @functools.wraps(fn)
    def wrapped(*args):
        with sklearn.config_context(array_api_dispatch=True):
            return fn(*args)
    return wrapped


def _X(n=8, d=3):
    return lambda rng: (rng.standard_normal((n, d)),)


def _Xy(n=12, d=3, classes=None):
    def make(rng):
        X = rng.standard_normal((n, d))
        y = rng.standard_normal(n) if classes is None else (rng.permutation(n) % classes)
        return X, y
    return make


def _yy(n=8, lo=None):
    def make(rng):
        if lo is None:
            return rng.standard_normal(n), rng.standard_normal(n)
        return rng.uniform(lo, 3.0, n), rng.uniform(lo, 3.0, n)
    return make


def _labels(n=10, k=3):
    return lambda rng: (rng.integers(0, k, n), rng.integers(0, k, n))


# (check_array -> _assert_all_finite branches in Python on xp.isfinite(...) of the data: under jit a guard,
# transforms/jit_guards.py; under vmap the path every dataset takes, transforms/batching.py.)
_LABELS = "sklearn/utils/_unique.py:78 xp.unique_values(y) (the label set: a data-dependent size)"


ESTIMATORS = [
    # grad: sklearn/utils/extmath.py:1252 computes last_sum / last_over_new_count = 0/0 = NaN for the
    # first batch and masks it out at :1260 (`updated[zeros] = new[zeros]`); the zero cotangent of the
    # masked position stays zero through the jvp rules' mul0/div0 (JAX gives NaN everywhere here).
    Case("StandardScaler", _sk(lambda X: StandardScaler().fit_transform(X)), _X()),
    Case("StandardScaler_center", _sk(lambda X: StandardScaler(with_std=False).fit_transform(X)), _X()),
    Case("MinMaxScaler", _sk(lambda X: MinMaxScaler().fit_transform(X)), _X()),
    Case("MaxAbsScaler", _sk(lambda X: MaxAbsScaler().fit_transform(X)), _X()),
    Case("Normalizer", _sk(lambda X: Normalizer().fit_transform(X)), _X()),
    Case("normalize_l1", _sk(lambda X: normalize(X, norm="l1")), _X()),
    Case("Binarizer", _sk(lambda X: Binarizer(threshold=0.1).fit_transform(X)), _X(), grad=NA),
    Case("KernelCenterer", _sk(lambda K: KernelCenterer().fit_transform(K @ K.T)), _X(4, 4)),
    Case("PolynomialFeatures", _sk(lambda X: PolynomialFeatures(2).fit_transform(X)), _X()),
    Case("PCA_full", _sk(lambda X: PCA(n_components=2, svd_solver="full").fit_transform(X)), _X(10, 4),
         rtol=1e-8, atol=1e-10, grad_rtol=1e-4, grad_atol=1e-5),
    Case("PCA_covariance_eigh", _sk(lambda X: PCA(n_components=2, svd_solver="covariance_eigh")
                                    .fit(X).explained_variance_), _X(10, 4),
         rtol=1e-8),
    Case("Ridge_svd", _sk(lambda X, y: Ridge(alpha=0.5, solver="svd").fit(X, y).predict(X)), _Xy(),
         argnums=(0, 1), rtol=1e-9),
    Case("LDA_svd", _sk(lambda X, y: LinearDiscriminantAnalysis(solver="svd").fit(X, y).predict_proba(X)),
         _Xy(12, 3, classes=3), rtol=1e-8),   # (vmap: every element's label set has 3 classes, a shared size)
    Case("GaussianNB", _sk(lambda X, y: GaussianNB().fit(X, y).predict_proba(X)), _Xy(12, 3, classes=2),
         rtol=1e-8),
    # Host round trips (sklearn/utils/_array_api.py:1025 numpy.asarray in _convert_to_numpy; LogisticRegression's
    # lbfgs is scipy.optimize on NumPy): under jit that path runs eagerly inside the jitted call
    Case("LogisticRegression", _sk(lambda X, y: LogisticRegression().fit(X, y).predict_proba(X)),
         _Xy(12, 3, classes=2), vmap=LIB, grad=LIB, rtol=1e-8, atol=1e-10, why={"vmap": (
             "sklearn/utils/_array_api.py:1025 numpy.asarray (_convert_to_numpy for lbfgs: a batched value has no "
             "one host value)"), "grad": (
             "sklearn/linear_model/_linear_loss.py:349 float(xp.sum(loss) / sw_sum) (lbfgs: scipy.optimize on host "
             "floats)")}),
    Case("RidgeClassifier", _sk(lambda X, y: RidgeClassifier(alpha=0.5).fit(X, y).decision_function(X)),
         _Xy(12, 3, classes=3), vmap=LIB, rtol=1e-9, why=(
             "sklearn/utils/_array_api.py:620 _convert_to_numpy (move_to of the binarized labels: a batched value "
             "has no one host value)")),
    Case("LabelBinarizer", _sk(lambda y: LabelBinarizer().fit_transform(y)), lambda rng: (rng.integers(0, 4, 10),),
         vmap=LIB, grad=NA, why=_LABELS),
]

METRICS = [
    # (they end in `return float(...)`: under vmap and grad the float is returned untouched, so it is the
    # transform's output, transforms/returned.py: each dataset's score, its derivative)
    Case("r2_score", _sk(metrics.r2_score), _yy(), scalar_ok=True),
    Case("mean_squared_error", _sk(metrics.mean_squared_error), _yy(), scalar_ok=True),
    Case("mean_absolute_error", _sk(metrics.mean_absolute_error), _yy(), scalar_ok=True),
    Case("explained_variance", _sk(metrics.explained_variance_score), _yy(), scalar_ok=True),
    Case("mean_tweedie_deviance", _sk(lambda a, b: metrics.mean_tweedie_deviance(a, b, power=1.5)), _yy(lo=0.5),
         scalar_ok=True),
    Case("mean_pinball_loss", _sk(metrics.mean_pinball_loss), _yy(), scalar_ok=True),
    Case("r2_multioutput_raw", _sk(lambda a, b: metrics.r2_score(a, b, multioutput="raw_values")),
         lambda r: (r.standard_normal((8, 2)), r.standard_normal((8, 2)))),
    Case("accuracy_score", _sk(metrics.accuracy_score), _labels(), vmap=LIB, grad=NA, scalar_ok=True,
         why=_LABELS),
    Case("zero_one_loss", _sk(metrics.zero_one_loss), _labels(), vmap=LIB, grad=NA, scalar_ok=True,
         why=_LABELS),
    # (jit: sklearn/utils/_array_api.py:1025 numpy.asarray of the labels, a host conversion: eager inside jit)
    Case("confusion_matrix", _sk(metrics.confusion_matrix), _labels(), vmap=LIB, grad=NA,
         why="sklearn/utils/_array_api.py:1025 numpy.asarray(array) (_convert_to_numpy of the labels)"),
    Case("f1_macro", _sk(lambda a, b: metrics.f1_score(a, b, average="macro")), _labels(), vmap=LIB,
         grad=NA, scalar_ok=True, why=_LABELS),
    Case("precision_per_class", _sk(lambda a, b: metrics.precision_recall_fscore_support(a, b)[0]), _labels(),
         vmap=LIB, grad=NA, why=_LABELS),
    Case("log_loss", _sk(metrics.log_loss), lambda rng: (rng.permutation(10) % 2, rng.uniform(0.1, 0.9, 10)),
         argnums=(1,), vmap=LIB, scalar_ok=True,
         why="sklearn/utils/_array_api.py:1025 numpy.asarray(array) (_convert_to_numpy of the labels)"),
]

PAIRWISE = [
    Case("euclidean_distances", _sk(pairwise.euclidean_distances), lambda r: (r.standard_normal((4, 3)),
         r.standard_normal((5, 3))), argnums=(0, 1), rtol=1e-9),
    Case("rbf_kernel", _sk(lambda a, b: pairwise.rbf_kernel(a, b, gamma=0.3)), lambda r: (
         r.standard_normal((4, 3)), r.standard_normal((5, 3))), argnums=(0, 1), rtol=1e-9),
    Case("cosine_similarity", _sk(pairwise.cosine_similarity), lambda r: (r.standard_normal((4, 3)),
         r.standard_normal((5, 3))), argnums=(0, 1)),
    Case("linear_kernel", _sk(pairwise.linear_kernel), lambda r: (r.standard_normal((4, 3)),
         r.standard_normal((5, 3))), argnums=(0, 1)),
    Case("polynomial_kernel", _sk(lambda a, b: pairwise.polynomial_kernel(a, b, degree=2)), lambda r: (
         r.standard_normal((4, 3)), r.standard_normal((5, 3))), argnums=(0, 1)),
    Case("pairwise_cosine", _sk(lambda a: pairwise.pairwise_distances(a, metric="cosine")), _X(5, 3)),
    Case("paired_euclidean", _sk(pairwise.paired_euclidean_distances), lambda r: (
         r.standard_normal((6, 3)), r.standard_normal((6, 3))), argnums=(0, 1)),
]

CASES = ESTIMATORS + METRICS + PAIRWISE
