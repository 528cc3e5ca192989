"""Two scikit-learn 1.9.1 calls on its array-API list that step outside the standard with their default
arguments; the cases in ds_cases_sklearn.py take the documented way round (roc_curve with
drop_intermediate=False, CalibratedClassifierCV on 3 classes). Here: our error is the clear, typed one and
comes from the library line. When scikit-learn fixes the line, this fails: give the case its default back.
"""
import traceback

import numpy as np
import pytest
import sklearn
from sklearn.calibration import CalibratedClassifierCV
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_curve

import array_namespace as xp


def _raised_at(exc_info, where):
    files = [f"{f.filename.replace(chr(92), '/')}:{f.lineno}" for f in traceback.extract_tb(exc_info.tb)]
    assert any(f.endswith(where) for f in files), files[-3:]


def test_roc_curve_passes_diff_n_positionally():
    rng = np.random.default_rng(0)
    y, s = rng.permutation(10) % 2, rng.uniform(0, 1, 10)
    with sklearn.config_context(array_api_dispatch=True), pytest.raises(TypeError, match="diff") as e:
        roc_curve(xp.asarray(y), xp.asarray(s))        # xp.diff(fps, 2): n is keyword-only in the standard
    _raised_at(e, "sklearn/metrics/_ranking.py:1337")


def test_calibrated_classifier_binary_calls_the_reshape_method():
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((12, 3)), rng.permutation(12) % 2
    est = CalibratedClassifierCV(LogisticRegression(), method="temperature", cv=2)
    with sklearn.config_context(array_api_dispatch=True), pytest.raises(AttributeError, match="xp.reshape") as e:
        est.fit(xp.asarray(X), xp.asarray(y))          # predictions.reshape(-1, 1): not an array-API method
    _raised_at(e, "sklearn/calibration.py:668")
