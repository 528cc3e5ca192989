"""scikit-learn 1.9.1 cases (estimators tagged array_api_support, metrics and pairwise functions from
its array-API support list), each run under `config_context(array_api_dispatch=True)`; the oracle is
the same call on NumPy arrays under the same config.
"""
import functools

import numpy as np

import sklearn
from sklearn import metrics
from sklearn.calibration import CalibratedClassifierCV
from sklearn.decomposition import PCA
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.kernel_approximation import Nystroem
from sklearn.linear_model import (LogisticRegression, PoissonRegressor, Ridge, RidgeClassifier, RidgeClassifierCV,
                                  RidgeCV)
from sklearn.metrics import pairwise
from sklearn.mixture import GaussianMixture
from sklearn.model_selection import GridSearchCV, RandomizedSearchCV
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import FeatureUnion, make_pipeline
from sklearn.preprocessing import (Binarizer, KernelCenterer, LabelBinarizer, LabelEncoder, MaxAbsScaler,
                                   MinMaxScaler, Normalizer, PolynomialFeatures, StandardScaler, normalize)

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


def _bin(n=10):
    return lambda rng: (rng.permutation(n) % 2, rng.permutation(n) % 2)


def _multilabel(n=8, k=3):
    return lambda rng: (rng.integers(0, 2, (n, k)), rng.integers(0, 2, (n, k)))


def _proba(n=10):
    """Binary labels and the probability of class 1 (argnums=(1,): the probabilities)."""
    return lambda rng: (rng.permutation(n) % 2, rng.uniform(0.1, 0.9, n))


def _proba3(n=9):
    def make(rng):
        p = rng.uniform(0.2, 1.0, (n, 3))
        return rng.permutation(n) % 3, p / p.sum(axis=1, keepdims=True)
    return make


def _XY(n=4, m=5, d=3, lo=None):
    if lo is None:
        return lambda r: (r.standard_normal((n, d)), r.standard_normal((m, d)))
    return lambda r: (r.uniform(lo, 2.0, (n, d)), r.uniform(lo, 2.0, (m, d)))


# (check_array -> _assert_all_finite branches in Python on xp.isfinite(...) of the data: under jit a guard,
# transforms/jit_guards.py; under vmap the path every dataset takes, transforms/batching.py. Host round trips --
# sklearn/utils/_array_api.py:1025 numpy.asarray in _convert_to_numpy of labels or medians, lbfgs in scipy.optimize
# -- and label sets whose size differs per dataset: under jit eager inside the jitted call, under vmap the function
# on each dataset in turn, stacked, transforms/vmap_loop.py.)
_LABELS = ("sklearn/utils/_unique.py:78 xp.unique_values(y) (each dataset's label set has its own size, and so has "
           "the binarized output: vmap runs the loop, whose results cannot be stacked)")


# (error_score="raise": the default turns our error into a NaN score and quietly picks another alpha)
_SEARCH = ("sklearn/metrics/_regression.py:992 `return float(...)` (r2_score of each fold: the model selection "
           "is a host decision on Python floats)")


def _clf_float(line):
    return f"sklearn/metrics/_classification.py:{line} `return float(...)` (under vmap: each dataset's own score)"


def _float(line):
    """Regression metrics return Python floats: float() of a value carrying a tangent or a trace."""
    return f"sklearn/metrics/_regression.py:{line} `return float(...)` (under vmap: each dataset's own score)"


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
    # (LogisticRegression's lbfgs is scipy.optimize on NumPy: under jit and vmap a host round trip, see above)
    Case("LogisticRegression", _sk(lambda X, y: LogisticRegression().fit(X, y).predict_proba(X)),
         _Xy(12, 3, classes=2), grad=LIB, rtol=1e-8, atol=1e-10, why=(
             "sklearn/linear_model/_linear_loss.py:349 float(xp.sum(loss) / sw_sum) (lbfgs: scipy.optimize on host "
             "floats)")),
    Case("RidgeClassifier", _sk(lambda X, y: RidgeClassifier(alpha=0.5).fit(X, y).decision_function(X)),
         _Xy(12, 3, classes=3), rtol=1e-9),
    Case("LabelBinarizer", _sk(lambda y: LabelBinarizer().fit_transform(y)), lambda rng: (rng.integers(0, 4, 10),),
         vmap=LIB, grad=NA, why=_LABELS),
    # -- completing the list against scikit-learn 1.9.1's array_api_support tags (test_sklearn_declared.py) --
    Case("LabelEncoder", _sk(lambda y: LabelEncoder().fit_transform(y)), lambda rng: (rng.integers(0, 4, 10),),
         grad=NA),
    Case("PoissonRegressor", _sk(lambda X, y: PoissonRegressor(alpha=0.5).fit(X, y).predict(X)),
         lambda rng: (rng.standard_normal((12, 3)), rng.uniform(0.5, 3.0, 12)), argnums=(0, 1), rtol=1e-7,
         vmap=LIB, grad=LIB, why=(
             "sklearn/linear_model/_glm/glm.py:267 coef[-1] = link(_average(y)) (lbfgs starts from a NumPy coef: "
             "scipy.optimize on host floats)")),
    Case("Nystroem", _sk(lambda X: Nystroem(gamma=0.3, n_components=4, random_state=0).fit_transform(X)),
         _X(8, 3), rtol=1e-8, atol=1e-10),
    Case("RidgeCV", _sk(lambda X, y: RidgeCV(alphas=(0.1, 1.0)).fit(X, y).predict(X)), _Xy(),
         argnums=(0, 1), rtol=1e-9),
    Case("RidgeClassifierCV", _sk(lambda X, y: RidgeClassifierCV(alphas=(0.1, 1.0)).fit(X, y)
                                  .decision_function(X)), _Xy(12, 3, classes=3), rtol=1e-9),
    Case("GaussianMixture_random", _sk(lambda X: GaussianMixture(2, init_params="random", max_iter=2, tol=0.0,
                                                                 random_state=0).fit(X).predict_proba(X)),
         _X(12, 2), rtol=1e-7, atol=1e-9, tags=("slow:jit",)),
    Case("FeatureUnion", _sk(lambda X: FeatureUnion([("s", StandardScaler()), ("m", MinMaxScaler())])
                             .fit_transform(X)), _X()),
    Case("GridSearchCV", _sk(lambda X, y: GridSearchCV(Ridge(), {"alpha": [0.1, 1.0]}, cv=2, error_score="raise")
                             .fit(X, y).predict(X)), _Xy(), argnums=(0, 1), rtol=1e-9, vmap=LIB, grad=LIB,
         why=_SEARCH),
    Case("RandomizedSearchCV", _sk(lambda X, y: RandomizedSearchCV(Ridge(), {"alpha": [0.1, 1.0, 3.0]}, n_iter=2,
                                                                   cv=2, random_state=0, error_score="raise")
                                   .fit(X, y).predict(X)), _Xy(), argnums=(0, 1), rtol=1e-9, vmap=LIB, grad=LIB,
         why=_SEARCH),
    # (3 classes: with 2, sklearn/calibration.py:668 calls predictions.reshape(-1, 1), a method the standard
    # does not have -- our AttributeError names xp.reshape)
    Case("CalibratedClassifierCV_temperature", _sk(
        lambda X, y: CalibratedClassifierCV(LogisticRegression(), method="temperature", cv=2).fit(X, y)
        .predict_proba(X)), _Xy(12, 3, classes=3), rtol=1e-7, atol=1e-9, grad=LIB, why=(
            "sklearn/linear_model/_linear_loss.py:349 float(xp.sum(loss) / sw_sum) (lbfgs: scipy.optimize on host "
            "floats)")),
    Case("PCA_randomized_QR", _sk(lambda X: PCA(n_components=2, svd_solver="randomized",
                                                power_iteration_normalizer="QR", random_state=0).fit_transform(X)),
         _X(10, 4), rtol=1e-8, atol=1e-10, grad_rtol=1e-4, grad_atol=1e-5),
    Case("Pipeline_scaler_pca_ridge", _sk(lambda X, y: make_pipeline(StandardScaler(), PCA(2), Ridge(alpha=0.5))
                                          .fit(X, y).predict(X)), _Xy(12, 4), argnums=(0, 1), rtol=1e-8),
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
    Case("accuracy_score", _sk(metrics.accuracy_score), _labels(), grad=NA, scalar_ok=True),
    Case("zero_one_loss", _sk(metrics.zero_one_loss), _labels(), grad=NA, scalar_ok=True),
    # (jit: sklearn/utils/_array_api.py:1025 numpy.asarray of the labels, a host conversion: eager inside jit)
    Case("confusion_matrix", _sk(metrics.confusion_matrix), _labels(), grad=NA),
    Case("f1_macro", _sk(lambda a, b: metrics.f1_score(a, b, average="macro")), _labels(),
         grad=NA, scalar_ok=True),
    Case("precision_per_class", _sk(lambda a, b: metrics.precision_recall_fscore_support(a, b)[0]), _labels(),
         grad=NA),
    Case("log_loss", _sk(metrics.log_loss), lambda rng: (rng.permutation(10) % 2, rng.uniform(0.1, 0.9, 10)),
         argnums=(1,), scalar_ok=True),
    # -- completing the list against array_api_metric_checkers of sklearn/metrics/tests/test_common.py --
    Case("average_precision_score", _sk(metrics.average_precision_score), _proba(), scalar_ok=True, grad=NA),
    Case("balanced_accuracy_score", _sk(metrics.balanced_accuracy_score), _labels(), scalar_ok=True,
         grad=NA),
    Case("cohen_kappa_score", _sk(metrics.cohen_kappa_score), _labels(), scalar_ok=True, grad=NA),
    Case("det_curve", _sk(metrics.det_curve), _proba(), vmap=LIB, grad=NA,
         why="sklearn/metrics/_ranking.py:460 fps[sl] (the curve's points: a data-dependent size)"),
    Case("fbeta_macro", _sk(lambda a, b: metrics.fbeta_score(a, b, beta=0.5, average="macro")), _labels(),
         scalar_ok=True, grad=NA),
    Case("jaccard_binary", _sk(metrics.jaccard_score), _bin(), scalar_ok=True, grad=NA),
    Case("multilabel_confusion_matrix", _sk(metrics.multilabel_confusion_matrix), _labels(), grad=NA),
    Case("precision_macro", _sk(lambda a, b: metrics.precision_score(a, b, average="macro")), _labels(),
         scalar_ok=True, grad=NA),
    Case("precision_recall_curve", _sk(metrics.precision_recall_curve), _proba(), grad=NA),
    Case("recall_multilabel", _sk(lambda a, b: metrics.recall_score(a, b, average="micro")), _multilabel(),
         scalar_ok=True, vmap=LIB, grad=NA, why=_clf_float(2213)),
    Case("hamming_loss", _sk(metrics.hamming_loss), _labels(), scalar_ok=True, grad=NA),
    Case("brier_score_loss", _sk(metrics.brier_score_loss), _proba(), argnums=(1,), scalar_ok=True),
    Case("log_loss_multiclass", _sk(metrics.log_loss), _proba3(), argnums=(1,), scalar_ok=True),
    Case("d2_brier_score", _sk(metrics.d2_brier_score), _proba(), argnums=(1,), scalar_ok=True),
    Case("d2_log_loss_score", _sk(metrics.d2_log_loss_score), _proba(), argnums=(1,), scalar_ok=True, grad=LIB,
         why=_clf_float(3458)),
    Case("mean_tweedie_deviance_neg", _sk(lambda a, b: metrics.mean_tweedie_deviance(a, b, power=-0.5)), _yy(lo=0.5),
         argnums=(0, 1), scalar_ok=True),
    Case("mean_tweedie_deviance_default", _sk(metrics.mean_tweedie_deviance), _yy(), argnums=(0, 1), scalar_ok=True),
    Case("mean_squared_log_error", _sk(metrics.mean_squared_log_error), _yy(lo=0.5), argnums=(0, 1), scalar_ok=True),
    Case("median_absolute_error", _sk(metrics.median_absolute_error), _yy(9), argnums=(0, 1), scalar_ok=True,
         grad=LIB, why=("sklearn/utils/_array_api.py:1025 numpy.asarray (_convert_to_numpy, from move_to at "
                       "sklearn/utils/_array_api.py:881: _median in NumPy)")),
    Case("d2_absolute_error_score", _sk(metrics.d2_absolute_error_score), _yy(9), argnums=(0, 1), scalar_ok=True),
    Case("d2_pinball_score", _sk(metrics.d2_pinball_score), _yy(9), argnums=(0, 1), scalar_ok=True),
    Case("d2_pinball_score_a01", _sk(lambda a, b: metrics.d2_pinball_score(a, b, alpha=0.1)), _yy(9), argnums=(0, 1),
         scalar_ok=True),
    Case("d2_pinball_score_a09", _sk(lambda a, b: metrics.d2_pinball_score(a, b, alpha=0.9)), _yy(9), argnums=(0, 1),
         scalar_ok=True),
    Case("d2_tweedie_score", _sk(metrics.d2_tweedie_score), _yy(), argnums=(0, 1), scalar_ok=True, vmap=LIB,
         grad=LIB, why=_float(1395)),
    Case("mean_poisson_deviance", _sk(metrics.mean_poisson_deviance), _yy(lo=0.5), argnums=(0, 1), scalar_ok=True),
    Case("mean_gamma_deviance", _sk(metrics.mean_gamma_deviance), _yy(lo=0.5), argnums=(0, 1), scalar_ok=True),
    Case("max_error", _sk(metrics.max_error), _yy(), argnums=(0, 1), scalar_ok=True),
    Case("mean_absolute_percentage_error", _sk(metrics.mean_absolute_percentage_error), _yy(lo=0.5), argnums=(0, 1),
         scalar_ok=True),
    Case("root_mean_squared_error", _sk(metrics.root_mean_squared_error), _yy(), argnums=(0, 1), scalar_ok=True),
    Case("root_mean_squared_log_error", _sk(metrics.root_mean_squared_log_error), _yy(lo=0.5), argnums=(0, 1),
         scalar_ok=True),
    Case("mse_multioutput_raw", _sk(lambda a, b: metrics.mean_squared_error(a, b, multioutput="raw_values")),
         lambda r: (r.standard_normal((8, 2)), r.standard_normal((8, 2))), argnums=(0, 1)),
    # (drop_intermediate=False: sklearn/metrics/_ranking.py:1337 calls xp.diff(fps, 2), n positional where the
    # standard makes it keyword-only -- a TypeError on any strict namespace once the curve has over 2 points)
    Case("roc_curve", _sk(lambda a, b: metrics.roc_curve(a, b, drop_intermediate=False)), _proba(), grad=NA),
    # (the multilabel and multiclass-probability inputs scikit-learn's checkers also run)
    Case("accuracy_multilabel", _sk(metrics.accuracy_score), _multilabel(), scalar_ok=True, grad=NA),
    Case("f1_multilabel_macro", _sk(lambda a, b: metrics.f1_score(a, b, average="macro")), _multilabel(),
         scalar_ok=True, vmap=LIB, grad=NA, why=_clf_float(2213)),
    Case("jaccard_multilabel_samples", _sk(lambda a, b: metrics.jaccard_score(a, b, average="samples")), _multilabel(),
         scalar_ok=True, grad=NA),
    Case("hamming_multilabel", _sk(metrics.hamming_loss), _multilabel(), scalar_ok=True, vmap=LIB, grad=NA,
         why=_clf_float(3298)),
    Case("multilabel_confusion_matrix_ml", _sk(metrics.multilabel_confusion_matrix), _multilabel(), grad=NA),
    Case("average_precision_multilabel", _sk(metrics.average_precision_score), lambda r: (
         np.stack([r.permutation(8) % 2 for _ in range(3)], axis=1), r.uniform(0, 1, (8, 3))), scalar_ok=True,
         vmap=LIB, grad=NA, why="sklearn/metrics/_ranking.py:260 `return float(...)` (each dataset's own score)"),
    Case("brier_multiclass", _sk(metrics.brier_score_loss), _proba3(), argnums=(1,), scalar_ok=True),
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
    # -- completing the list against array_api_metric_checkers (pairwise functions and kernels) --
    Case("cosine_distances", _sk(pairwise.cosine_distances), _XY(), argnums=(0, 1)),
    Case("manhattan_distances", _sk(pairwise.manhattan_distances), _XY(), argnums=(0, 1)),
    Case("laplacian_kernel", _sk(lambda a, b: pairwise.laplacian_kernel(a, b, gamma=0.3)), _XY(), argnums=(0, 1)),
    Case("sigmoid_kernel", _sk(lambda a, b: pairwise.sigmoid_kernel(a, b, gamma=0.3)), _XY(), argnums=(0, 1)),
    Case("additive_chi2_kernel", _sk(pairwise.additive_chi2_kernel), _XY(lo=0.1), argnums=(0, 1)),
    Case("chi2_kernel", _sk(lambda a, b: pairwise.chi2_kernel(a, b, gamma=0.3)), _XY(lo=0.1), argnums=(0, 1)),
    Case("paired_cosine_distances", _sk(pairwise.paired_cosine_distances), _XY(6, 6), argnums=(0, 1)),
    Case("paired_manhattan_distances", _sk(pairwise.paired_manhattan_distances), _XY(6, 6), argnums=(0, 1)),
    Case("pairwise_kernels", _sk(pairwise.pairwise_kernels), _XY(), argnums=(0, 1)),
    Case("pairwise_distances", _sk(pairwise.pairwise_distances), _XY(), argnums=(0, 1), rtol=1e-9),
    Case("pairwise_distances_argmin", _sk(pairwise.pairwise_distances_argmin), _XY(), grad=NA),
]

CASES = ESTIMATORS + METRICS + PAIRWISE
