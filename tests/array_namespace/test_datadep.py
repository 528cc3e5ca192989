"""array_namespace/_datadep.py: host values of raw values (concrete eagerly and under grad, None under
jit/vmap), DataDependentShapeError's message (function, aval, trace, hint), the mask hints, and the functions
whose result size depends on values (unique_*, nonzero, x[mask], repeat) under jit and vmap: only the size is
guarded / must agree. Oracles: NumPy, the eager call, a Python loop over the batch, finite differences."""
import numpy as np
import pytest

import array_namespace as xp
from array_namespace import _datadep as D
from finite_diff import central_diff
from transforms import BatchDisagreementError, ConcretizationTypeError, grad, jit, make_jaxpr, vmap


def test_host_value_of_concrete_values():
    x = xp.asarray(np.array([1.5, -2.0]))
    np.testing.assert_array_equal(D.host_value(x._v), [1.5, -2.0])
    assert D.host_value(3.0) == 3.0
    np.testing.assert_array_equal(D.require_host(x._v, "f"), [1.5, -2.0])


def test_host_value_under_transforms():
    seen = {}

    def f(name):
        def g(x):
            seen[name] = D.host_value(x._v)
            return xp.sum(x * x)
        return g
    x = xp.asarray(np.array([1.0, 2.0]))
    grad(f("grad"))(x)
    jit(f("jit"))(x)
    vmap(f("vmap"))(x)
    np.testing.assert_array_equal(seen["grad"], [1.0, 2.0])    # grad's primals are concrete
    assert seen["jit"] is None and seen["vmap"] is None


def test_data_dependent_shape_error_message():
    def f(x):
        return D.require_host(x._v, "myfun", "Do it eagerly.")
    with pytest.raises(D.DataDependentShapeError) as info:
        jit(f, guards=False)(xp.ones(3))
    msg = str(info.value)
    assert msg.startswith("myfun: the shape of the result depends on the values of the input")
    assert "(f64[3] traced by jit/make_jaxpr)" in msg and msg.endswith("Do it eagerly.")
    assert isinstance(info.value, ConcretizationTypeError) and info.value.fname == "myfun"


def test_mask_hints_and_real_uses():
    assert D.mask_hint("__getitem__") is D.MASK_READ_HINT and D.mask_hint("__setitem__") is D.MASK_UPDATE_HINT
    x = xp.asarray(np.array([1.0, -1.0, 2.0]))
    np.testing.assert_array_equal(np.asarray(x[x > 0]), [1.0, 2.0])          # eagerly: NumPy's answer
    with pytest.raises(D.DataDependentShapeError, match="Reading x\\[mask\\] needs the count of True entries"):
        jit(lambda v: v[v > 0], guards=False)(x)
    with pytest.raises(D.DataDependentShapeError, match="unique_values"):
        jit(xp.unique_values, guards=False)(x)


# ------------------------------------------------------------------ value-dependent sizes: only the size is guarded
# Each case: (the function of one array, its NumPy oracle, inputs A and B of one size with different values, C of
# another size). Under jit, A and B must share one trace (only the size is guarded) and C must make a second.
NAN = np.nan
_UNIQUE_F = [np.array(v) for v in ([3.0, 1, 3, 2, NAN, 1, NAN, 5], [0.0, -0.0, 7, 7, NAN, 9, NAN, 4],
                                   [1.0, 1, 1, 1, 1, 1, 1, 1])]
_MASK_X = [np.array(v).reshape(2, 4) for v in ([1.0, -2, 3, -4, 5, -6, 7, 8], [-1.0, 2, -3, 4, -5, 6, 7, 8],
                                               [-1.0, -2, -3, -4, -5, -6, 7, -8])]

_C = np.array([complex(NAN, 1), complex(1, NAN), 1 + 1j, complex(NAN, NAN), complex(1, NAN), 0j, complex(NAN, 0),
               1 + 1j, complex(0, NAN), complex(NAN, 1)])   # NumPy's order: R + Rj, R + nanj, nan + Rj, nan + nanj
_COMPLEX_NAN = [_C, (_C * 2)[::-1], np.r_[_C[:5], np.ones(5)]]


def _np_unique(x):
    return np.unique(x, return_index=True, return_inverse=True, return_counts=True, equal_nan=False)


SIZED = {
    "unique_values": (lambda x: xp.unique_values(x), lambda x: np.unique(x, equal_nan=False), _UNIQUE_F),
    "unique_counts": (lambda x: tuple(xp.unique_counts(x)),
                      lambda x: np.unique(x, return_counts=True, equal_nan=False), _UNIQUE_F),
    "unique_inverse": (lambda x: tuple(xp.unique_inverse(x)),
                       lambda x: np.unique(x, return_inverse=True, equal_nan=False),
                       [v.reshape(2, 4) for v in _UNIQUE_F]),
    "unique_all": (lambda x: tuple(xp.unique_all(x)), _np_unique, _UNIQUE_F),
    "unique_all_int": (lambda x: tuple(xp.unique_all(x)), _np_unique,
                       [np.array(v) for v in ([4, 4, -1, 2, 9], [0, 3, 3, 1, 7], [5, 5, 5, 5, 6])]),
    "unique_all_bool": (lambda x: tuple(xp.unique_all(x)), _np_unique,
                        [np.array(v) for v in ([True, False, True], [False, False, True], [True, True, True])]),
    "unique_all_complex": (lambda x: tuple(xp.unique_all(x)), _np_unique,
                           [np.array(v) for v in ([1 + 2j, 1 - 2j, 1 + 2j, 0j], [3j, 3j, 2, -1j], [1j, 1j, 1j, 1j])]),
    "unique_all_complex_nan": (lambda x: tuple(xp.unique_all(x)), _np_unique, _COMPLEX_NAN),
    "nonzero": (lambda x: xp.nonzero(x), np.nonzero,
                [np.array(v).reshape(2, 3)
                 for v in ([0.0, 1, 0, 2, 0, NAN], [3.0, 0, 0, 0, 2, 1], [0.0, 0, 0, 0, 0, 1])]),
    "mask_read": (lambda x: x[x > 0], lambda x: x[x > 0], _MASK_X),
    "mask_read_rows": (lambda x: xp.reshape(x, (2, 2, 2))[x[:, :2] > 0],
                       lambda x: x.reshape(2, 2, 2)[x[:, :2] > 0], _MASK_X),
    "take_computed": (lambda x: xp.take(x, xp.nonzero(x > 0)[0]), lambda x: x[np.nonzero(x > 0)[0]],
                      [v.reshape(-1) for v in _MASK_X]),
    "repeat": (lambda r: xp.repeat(xp.asarray([1.0, 2.0, 3.0, 4.0]), r), lambda r: np.repeat([1.0, 2.0, 3.0, 4.0], r),
               [np.array(v) for v in ([1, 0, 2, 3], [3, 3, 0, 0], [0, 0, 0, 1])]),
    "repeat_axis": (lambda r: xp.repeat(xp.reshape(xp.arange(8.0), (2, 4)), r, axis=1),
                    lambda r: np.repeat(np.arange(8.0).reshape(2, 4), r, axis=1),
                    [np.array(v) for v in ([2, 0, 0, 1], [0, 1, 1, 1], [0, 0, 0, 0])]),
}


def _check(got, want):
    got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert isinstance(g, xp.Array) and g.shape == w.shape
        np.testing.assert_array_equal(np.asarray(g), w)


def _check_batch(out, batch, oracle):
    """vmap's result against the oracle in a Python loop over the batch, stacked."""
    want = [oracle(x) for x in batch]
    if isinstance(want[0], tuple):
        _check(tuple(out), tuple(np.stack([w[i] for w in want]) for i in range(len(want[0]))))
    else:
        _check(out, np.stack(want))


@pytest.mark.parametrize("name", sorted(SIZED))
def test_jit_guards_only_the_size(name):
    fn, oracle, (a, b, c) = SIZED[name]
    calls = []
    f = jit(lambda x: calls.append(1) or fn(x))
    for x in (a, b, a):
        _check(f(xp.asarray(x)), oracle(x))
        _check(fn(xp.asarray(x)), oracle(x))   # (eager: the host path, the same answer)
    assert len(calls) == 1 and f._jitted.trace_count == 1   # B has other values but A's size: A's variant ran
    _check(f(xp.asarray(c)), oracle(c))
    assert len(calls) == 2
    _check(f(xp.asarray(b)), oracle(b))
    assert len(calls) == 2


@pytest.mark.parametrize("name", sorted(SIZED))
def test_vmap_needs_only_the_sizes_to_agree(name):
    fn, oracle, (a, b, c) = SIZED[name]
    _check_batch(vmap(fn)(xp.asarray(np.stack([a, b, a]))), [a, b, a], oracle)
    with pytest.raises(BatchDisagreementError, match=r"disagreeing batch indices: \[2\]"):
        vmap(fn)(xp.asarray(np.stack([a, b, c])))
    with pytest.raises(BatchDisagreementError):
        jit(vmap(fn))(xp.asarray(np.stack([a, c])))


@pytest.mark.parametrize("name", ["unique_all", "mask_read", "repeat"])
def test_vmap_inside_jit_guards_the_shared_sizes(name):
    fn, oracle, (a, b, _) = SIZED[name]
    f = jit(vmap(fn))
    for batch in ([a, b, a], [b, a, b]):
        _check_batch(f(xp.asarray(np.stack(batch))), batch, oracle)
    assert f._jitted.trace_count == 1


@pytest.mark.parametrize("name", sorted(SIZED))
def test_abstract_tracing_keeps_the_data_dependent_error(name):
    fn, _, (a, _, _) = SIZED[name]
    with pytest.raises(D.DataDependentShapeError):
        jit(fn, guards=False)(xp.asarray(a))
    with pytest.raises(D.DataDependentShapeError):
        make_jaxpr(fn)(xp.asarray(a))


def test_empty_inputs_need_no_guard():
    f = jit(lambda x: (xp.unique_values(x), xp.nonzero(x)[0], x[x > 0]))
    for out in f(xp.asarray(np.zeros(0))):
        assert out.shape == (0,)


def test_grad_through_a_mask_read_under_jit():
    def loss(x):
        return xp.sum(x[x > 0] ** 3) + xp.sum(xp.unique_values(x) * 2.0)
    g, gg = jit(grad(loss)), grad(jit(loss))
    for x in (np.array([1.0, -2.0, 3.0, 0.5]), np.array([-1.0, 2.0, 3.5, 1.5]), np.array([0.3, -1.0, -3.0, -4.0])):
        want = central_diff(lambda v: float(np.sum(v[v > 0] ** 3) + np.sum(np.unique(v) * 2.0)), x)
        np.testing.assert_allclose(np.asarray(g(xp.asarray(x))), want, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(np.asarray(gg(xp.asarray(x))), want, rtol=1e-6, atol=1e-6)
    assert g._jitted.trace_count == 2   # the first two have 3 positives and 4 unique values each


def test_repeat_with_a_bad_count_raises_eagers_error_under_jit():
    f = jit(lambda r: xp.repeat(xp.asarray([1.0, 2.0]), r))
    _check(f(xp.asarray(np.array([1, 2]))), np.repeat([1.0, 2.0], [1, 2]))
    for bad in ([1, -1], [2**62, 2**62]):
        for g in (f, lambda r: xp.repeat(xp.asarray([1.0, 2.0]), r)):
            with pytest.raises((ValueError, MemoryError)) as e:
                g(xp.asarray(np.array(bad)))
            assert "repeat" in str(e.value)


@pytest.mark.parametrize("n", [1, 7, 2030, 100_000])
def test_jitted_mask_reads_and_nonzero_find_the_true_entries_without_a_sort(n):
    """Under jit the positions of a mask's True entries come from running counts and a histogram of them (two scans
    and one scatter-add; a stable sort of ~mask took 5x as long): x[mask] and nonzero equal NumPy's for masks with
    none, some, and all entries True, in 1-D and 2-D; a later call with another count retraces to its size."""
    rng = np.random.default_rng(n)
    a = rng.standard_normal(n)
    read, where = jit(lambda x, t: x[x > t]), jit(lambda x, t: xp.nonzero(x > t)[0])
    for t in (np.inf, 0.3, -np.inf):
        x, tt = xp.asarray(a), xp.asarray(t)
        np.testing.assert_array_equal(np.asarray(read(x, tt)), a[a > t])
        np.testing.assert_array_equal(np.asarray(where(x, tt)), np.nonzero(a > t)[0])
    assert " sort(" not in read.compiled(xp.asarray(a), xp.asarray(0.3)).as_text()
    b = a.reshape(-1, 7) if n % 7 == 0 else a[None]
    got = jit(lambda x: xp.nonzero(x > 0.3))(xp.asarray(b))
    for g, w in zip(got, np.nonzero(b > 0.3)):
        np.testing.assert_array_equal(np.asarray(g), w)


@pytest.mark.parametrize("n", [1, 9, 2030])
def test_jitted_unique_inverse_is_scattered_back_with_one_sort(n):
    """Under jit unique_inverse/unique_all put each sorted position's group back in x's order with a scatter to the
    sort's (distinct) positions (a second sort, by those positions, took as long as the first): the values,
    inverse, first indices and counts equal NumPy's, NaNs each their own value, 2-D input included; the compiled
    program sorts at most once."""
    rng = np.random.default_rng(n)
    a = rng.integers(0, 5, n).astype(np.float64)
    a[rng.random(n) < 0.1] = np.nan
    for x in (a, a.reshape(1, n)):
        vals, idx, inv, counts = (np.asarray(v) for v in jit(xp.unique_all)(xp.asarray(x)))
        want = np.unique(x, return_index=True, return_inverse=True, return_counts=True, equal_nan=False)
        for g, w in zip((vals, idx, inv, counts), want):
            np.testing.assert_array_equal(g, w.reshape(g.shape))
    text = jit(lambda x: xp.unique_inverse(x)[1]).compiled(xp.asarray(a)).as_text()
    assert text.count(" sort(") <= 1   # (none at n = 1: XLA folds a sort of one element)
