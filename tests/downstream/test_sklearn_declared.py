"""The scikit-learn case list stays complete: every estimator scikit-learn tags `array_api_support` and
every entry of its own array-API metric list (sklearn/metrics/tests/test_common.py
`array_api_metric_checkers`) has a Case in ds_cases_sklearn.py, read from the installed scikit-learn
at run time, so a new declaration fails here until it gets its Case.

A declaration is covered by the Case of the same name, a Case named `<name>_<variant>`, or the Case
ALIASES names (older cases, and `functools.partial` entries, which are named `func(k=v)` here).
"""
import functools
import warnings

from sklearn.utils import all_estimators
from sklearn.utils._test_common.instance_generator import _construct_instances

from ds_cases_sklearn import CASES

# Tags that depend on a constructor argument (the line that sets the tag): the declared variant.
VARIANTS = {
    "GaussianMixture": dict(init_params="random"),                  # mixture/_gaussian_mixture.py:1002
    "PCA": dict(svd_solver="randomized", power_iteration_normalizer="QR"),   # decomposition/_pca.py:844
    "LogisticRegression": dict(solver="lbfgs"),                     # linear_model/_logistic.py:1631
    "PoissonRegressor": dict(solver="lbfgs"),                       # linear_model/_glm/glm.py:625
}
CALIBRATED = dict(method="temperature")                             # calibration.py:594 (and a tagged estimator)

ALIASES = {
    "LinearDiscriminantAnalysis": "LDA_svd",
    "explained_variance_score": "explained_variance",
    "f1_score": "f1_macro",
    "fbeta_score": "fbeta_macro",
    "jaccard_score": "jaccard_binary",
    "precision_score": "precision_macro",
    "recall_score": "recall_multilabel",
    "paired_euclidean_distances": "paired_euclidean",
    "mean_tweedie_deviance": "mean_tweedie_deviance_default",
    "mean_tweedie_deviance(power=-0.5)": "mean_tweedie_deviance_neg",
    "mean_tweedie_deviance(power=1.5)": "mean_tweedie_deviance",
    "d2_pinball_score(alpha=0.1)": "d2_pinball_score_a01",
    "d2_pinball_score(alpha=0.9)": "d2_pinball_score_a09",
}

# Declarations that cannot be a Case, each with its reason. (Empty: every declaration is a function of
# arrays that a Case runs; keep a reason here for any entry added.)
EXCLUDED = {}


def _instances(name, cls):
    from sklearn.linear_model import LogisticRegression
    try:
        yield from _construct_instances(cls)      # scikit-learn's own test instances (meta-estimators too)
    except Exception:                             # noqa: BLE001 -- a class its generator cannot build
        pass
    if name == "CalibratedClassifierCV":
        yield cls(LogisticRegression(), **CALIBRATED)
    elif name in VARIANTS:
        yield cls(**VARIANTS[name])


def declared_estimators():
    out = set()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, cls in all_estimators():
            if any(est.__sklearn_tags__().array_api_support for est in _instances(name, cls)):
                out.add(name)
    return out


def declared_metrics():
    from sklearn.metrics.tests.test_common import array_api_metric_checkers
    out = set()
    for f in array_api_metric_checkers:
        if isinstance(f, functools.partial):
            out.add(f"{f.func.__name__}({', '.join(f'{k}={v}' for k, v in f.keywords.items())})")
        else:
            out.add(f.__name__)
    return out


def _covered(key, names):
    return key in names or any(n.startswith(key + "_") for n in names) or ALIASES.get(key) in names


def test_every_declared_estimator_and_metric_has_a_case():
    names = {c.name for c in CASES}
    declared = declared_estimators() | declared_metrics()
    assert len(declared) > 70, f"scikit-learn's declarations were not read: {sorted(declared)}"
    missing = sorted(k for k in declared if not _covered(k, names) and k not in EXCLUDED)
    assert not missing, f"scikit-learn declares array-API support for these, and no Case runs them: {missing}"


def test_aliases_and_exclusions_are_current():
    names = {c.name for c in CASES}
    declared = declared_estimators() | declared_metrics()
    assert not set(ALIASES.values()) - names, "ALIASES names a Case that does not exist"
    assert not set(ALIASES) - declared, f"ALIASES keys scikit-learn no longer declares: {set(ALIASES) - declared}"
    assert not set(EXCLUDED) - declared, "EXCLUDED keys scikit-learn no longer declares"
    assert all(isinstance(why, str) and len(why) > 20 for why in EXCLUDED.values()), "EXCLUDED needs reasons"


def test_a_declaration_without_its_case_is_reported():
    names = {c.name for c in CASES}
    assert _covered("Nystroem", names) and not _covered("Nystroem", names - {"Nystroem"})
    assert _covered("PCA", {"PCA_full"}) and not _covered("PCA", {"PCAfull"})
    assert _covered("f1_score", {"f1_macro"}) and not _covered("f1_score", {"f1_other"})
