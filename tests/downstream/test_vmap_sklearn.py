"""scikit-learn under vmap (transforms/batching.py): its Python checks on values (`if first_pass_isfinite:`) take
the one path every batch element takes, so an estimator or metric maps over a stack of datasets; where the
elements disagree (a NaN in one dataset, a per-dataset score computed on) the error names the batch elements
and scikit-learn's line; `return float(...)` of per-dataset scores is each dataset's score (transforms/returned.py);
a host round trip (labels moved to NumPy) or label sets of other sizes run dataset by dataset (transforms/vmap_loop.py).
Oracle: a loop of the same calls on NumPy arrays."""
import numpy as np
import pytest
import sklearn
from sklearn.metrics import accuracy_score, confusion_matrix, r2_score
from sklearn.preprocessing import StandardScaler

import array_namespace as xp
from transforms import BatchDisagreementError, jit, vmap


def _sk(fn):
    def wrapped(*args):
        with sklearn.config_context(array_api_dispatch=True):
            return fn(*args)
    return wrapped


def _scale(X):
    return StandardScaler().fit_transform(X)


STACK = np.random.default_rng(0).random((3, 40, 5))


@pytest.mark.parametrize("transform", ["vmap", "jit(vmap)"])
def test_standard_scaler_over_a_stack_of_datasets_matches_a_numpy_loop(transform):
    f = vmap(_sk(_scale)) if transform == "vmap" else jit(vmap(_sk(_scale)))
    for S in (STACK, STACK[::-1] * 3.0):   # (jit: a second call on other data)
        want = np.stack([_scale(X) for X in S])
        np.testing.assert_allclose(np.asarray(f(xp.asarray(S))), want, rtol=1e-12, atol=1e-12)


def test_r2_score_over_datasets_with_one_score_matches_numpy():
    y, p = STACK[0, :, 0], STACK[0, :, 1]
    Y, P = np.stack([y, 2 * y, 4 * y]), np.stack([p, 2 * p, 4 * p])   # (exact scalings: one score, bit for bit)
    got = vmap(_sk(r2_score))(xp.asarray(Y), xp.asarray(P))
    np.testing.assert_array_equal(np.asarray(got), [r2_score(a, b) for a, b in zip(Y, P)])


@pytest.mark.parametrize("transform", ["vmap", "jit(vmap)", "vmap(jit)"])
def test_r2_scores_that_differ_are_each_datasets_own(transform):
    # (`return float(...)` reaches vmap's output untouched: the float is each dataset's score, returned.py)
    Y, P = STACK[:, :, 0], STACK[:, :, 1]
    f = {"vmap": vmap(_sk(r2_score)), "jit(vmap)": jit(vmap(_sk(r2_score))), "vmap(jit)": vmap(jit(_sk(r2_score)))}
    got = f[transform](xp.asarray(Y), xp.asarray(P))
    want = [r2_score(a, b) for a, b in zip(Y, P)]
    assert len(set(want)) == 3
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-13)


def test_r2_scores_that_differ_and_are_computed_on_name_the_elements_and_sklearns_line():
    Y, P = STACK[:, :, 0], STACK[:, :, 1]
    with pytest.raises(BatchDisagreementError, match=r"float\(\).*indices: \[1, 2\].*_regression\.py:\d+ `return float"):
        vmap(_sk(lambda y, p: 1.0 - r2_score(y, p)))(xp.asarray(Y), xp.asarray(P))   # (the float is used)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("transform", ["vmap", "jit(vmap)"])
def test_host_round_trips_and_label_sets_of_other_sizes_run_dataset_by_dataset(transform):
    # confusion_matrix moves the labels to NumPy (sklearn/utils/_array_api.py:1025 numpy.asarray); accuracy_score's
    # label sets have 2 or 3 labels (sklearn/utils/_unique.py:78): vmap runs each dataset in turn, as the loop
    Y = np.array([[0, 1, 2, 2, 1, 0], [2, 1, 0, 0, 1, 2], [0, 0, 1, 2, 2, 2]])
    P = np.array([[0, 2, 2, 2, 1, 0], [2, 1, 1, 0, 0, 2], [0, 1, 1, 1, 2, 0]])
    for fn in (confusion_matrix, accuracy_score):
        f = vmap(_sk(fn)) if transform == "vmap" else jit(vmap(_sk(fn)))
        for A, B in ((Y, P), (P % 2, Y % 2)):   # (jit: a second call on other data)
            want = np.stack([fn(a, b) for a, b in zip(A, B)])
            np.testing.assert_allclose(np.asarray(f(xp.asarray(A), xp.asarray(B))), want, rtol=1e-15)


def test_nan_in_one_dataset_names_it_and_sklearns_finiteness_check():
    Y = STACK[:, :, 0].copy()
    Y[1, 3] = np.nan
    with pytest.raises(ValueError, match="Input contains NaN"):
        r2_score(Y[1], Y[1])   # (NumPy, that dataset alone)
    with pytest.raises(BatchDisagreementError, match=r"indices: \[1\].*validation\.py:\d+ `if first_pass_isfinite"):
        vmap(_sk(r2_score))(xp.asarray(Y), xp.asarray(Y))
