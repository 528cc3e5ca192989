"""vmap answers bool()/int()/index/float()/complex()/.item() of a batched value with the value every batch element
shares (library checks like scikit-learn's `if first_pass_isfinite:`), eagerly and inside a jit that knows its
values (which then guards the whole batched value); elements that disagree raise BatchDisagreementError naming
them and the line. Oracle: a Python loop over the batch."""
import operator

import numpy as np
import pytest

import array_namespace as xp
from transforms import BatchDisagreementError, ConcretizationTypeError, grad, jit, make_jaxpr, vmap
from transforms.core import TracerArrayConversionError

X = np.arange(12.0).reshape(3, 4) - 2.0


def f(x):
    """Every Python conversion, each of a value all rows of X agree on."""
    n = int(xp.sum(x < -100))                      # 0 for every row
    k = operator.index(xp.asarray(x.shape[0]) - 3 + n)   # 1
    s = float(xp.max(xp.abs(x)) > -1.0)            # 1.0
    c = complex(xp.asarray(2.0) * s)
    m = xp.max(x < -1000).item()                   # False
    if xp.all(xp.isfinite(x)) and not m:
        return x[k] * s + c.real + n
    return -x


def loop(fn, A):
    return np.stack([np.asarray(fn(xp.asarray(a))) for a in A])


def test_agreeing_values_eagerly_match_a_loop():
    np.testing.assert_array_equal(np.asarray(vmap(f)(xp.asarray(X))), loop(f, X))


def test_agreeing_values_under_a_guarded_jit_match_a_loop_and_recheck():
    g = jit(vmap(f))
    np.testing.assert_array_equal(np.asarray(g(xp.asarray(X))), loop(f, X))
    np.testing.assert_array_equal(np.asarray(g(xp.asarray(X * 2))), loop(f, X * 2))
    bad = X.copy()
    bad[2, 1] = np.inf   # element 2 now takes the other branch: the guard breaks, the retrace names it
    with pytest.raises(BatchDisagreementError, match=r"bool\(\).*element 2 gives False.*indices: \[2\]"):
        g(xp.asarray(bad))
    np.testing.assert_array_equal(np.asarray(g(xp.asarray(X + 1))), loop(f, X + 1))


@pytest.mark.parametrize("conv,vals", [
    ("bool", [1.0, 1.0, -1.0, 1.0, -1.0]),
    ("int", [3.0, 3.0, 3.0, 4.0, 3.0]),
    ("float", [0.5, 0.5, 0.5, 0.5, -0.5]),
    ("item", [0.0, -0.0, 0.0, 0.0, 0.0]),       # -0.0 is another Python value
])
def test_disagreeing_elements_are_named_with_their_values_and_line(conv, vals):
    code = {"bool": "x if x > 0 else -x", "int": "x * int(x)", "float": "x * float(x)", "item": "x * x.item()"}[conv]
    fn = {"bool": lambda x: x if x > 0 else -x,
          "int": lambda x: x * int(x),
          "float": lambda x: x * float(x),
          "item": lambda x: x * x.item()}[conv]
    bad = [i for i, v in enumerate(vals) if np.signbit(v) != np.signbit(vals[0]) or v != vals[0]]
    with pytest.raises(BatchDisagreementError) as e:
        vmap(fn)(xp.asarray(vals))
    msg = str(e.value)
    assert e.value.bad == bad and f"disagreeing batch indices: {bad}" in msg, msg
    assert f"element {bad[0]} gives {vals[bad[0]] if conv != 'bool' else False}" in msg, msg
    assert "test_vmap_values.py:" in msg and code in msg, msg   # the line that asked
    assert isinstance(e.value, (ValueError, ConcretizationTypeError))


def test_nan_elements_agree_and_nested_vmaps_check_each_axis():
    nan = np.full((2, 3), np.nan)
    got = vmap(vmap(lambda x: x * 0 + float(x)))(xp.asarray(nan))
    assert np.isnan(np.asarray(got)).all() and got.shape == (2, 3)
    A = np.ones((2, 3))
    A[1, 2] = 2.0
    with pytest.raises(BatchDisagreementError):
        vmap(vmap(lambda x: x * int(x)))(xp.asarray(A))


def test_value_dependent_sizes_work_when_the_batch_agrees():
    m = np.array([True, False, True, True])
    fn = lambda x, m: x[m] * 2.0   # noqa: E731
    A = np.arange(12.0).reshape(3, 4)
    got = vmap(fn)(xp.asarray(A), xp.asarray(np.tile(m, (3, 1))))
    np.testing.assert_array_equal(np.asarray(got), np.stack([a[m] * 2.0 for a in A]))
    u = vmap(lambda x: xp.unique_values(xp.floor(x / 100.0)))(xp.asarray(A))   # one label set: {0}
    np.testing.assert_array_equal(np.asarray(u), np.zeros((3, 1)))
    M = np.tile(m, (3, 1))
    M[1, 0] = False
    with pytest.raises(BatchDisagreementError, match=r"__getitem__.*indices: \[1\]"):
        vmap(fn)(xp.asarray(A), xp.asarray(M))


def test_abstract_traces_keep_their_error():
    g = lambda x: x if x > 0 else -x   # noqa: E731
    for run in (lambda: make_jaxpr(vmap(g))(xp.ones(3)), lambda: jit(vmap(g), guards=False)(xp.ones(3))):
        with pytest.raises(ConcretizationTypeError, match="needs a concrete value") as e:
            run()
        assert not isinstance(e.value, BatchDisagreementError)
    h = lambda x: xp.asarray(np.asarray(x))   # noqa: E731  (a host conversion that is no decision)
    for run in (lambda: make_jaxpr(vmap(h))(xp.ones(3)), lambda: jit(vmap(h), guards=False)(xp.ones(3))):
        with pytest.raises(TracerArrayConversionError, match="batch axis"):
            run()


def test_an_empty_batch_has_no_value():
    with pytest.raises(ConcretizationTypeError, match="empty batch"):
        vmap(lambda x: x if x > 0 else -x)(xp.ones(0))


def test_a_laziness_probe_is_told_lazy_so_the_library_takes_its_data_independent_path():
    # array_api_compat's is_lazy_array calls bool() on element [0]; answering "known" when element 0 happens to
    # agree would send SciPy down `if xp.any(mask):`, which the other elements can break
    import array_api_compat
    from scipy._lib import array_api_compat as scipy_compat   # (the copy SciPy vendors and calls)
    for is_lazy_array in (array_api_compat.is_lazy_array, scipy_compat.is_lazy_array):
        seen = []
        vmap(lambda x: seen.append(is_lazy_array(x)) or x)(xp.ones((3, 2)))
        assert seen == [True]
        assert is_lazy_array(xp.ones(2)) is False   # (eagerly: known)


def test_compositions_with_grad_and_an_inner_jit_match_a_loop():
    def h(x):
        if xp.all(x > -100):
            return xp.sum(x ** 2)
        return xp.sum(x)
    want_h = np.sum(X ** 2, axis=1)
    want_g = 2 * X
    np.testing.assert_array_equal(np.asarray(vmap(jit(h))(xp.asarray(X))), want_h)
    np.testing.assert_array_equal(np.asarray(vmap(grad(h))(xp.asarray(X))), want_g)
    np.testing.assert_array_equal(np.asarray(grad(lambda A: xp.sum(vmap(h)(A)))(xp.asarray(X))), want_g)
    np.testing.assert_array_equal(np.asarray(jit(vmap(grad(h)))(xp.asarray(X))), want_g)
    with pytest.raises(ConcretizationTypeError):   # a strict jit inside vmap keeps JAX's error
        vmap(jit(h, guards=False))(xp.asarray(X))
