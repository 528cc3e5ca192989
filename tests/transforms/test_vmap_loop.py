"""vmap of a function that converts a batched value to the host (np.asarray, a NumPy median), or whose value-dependent
sizes differ between batch elements, runs it on each element in turn and stacks the results (transforms/vmap_loop.py).
Oracles: a Python loop of the same function (values), central differences (gradients)."""
import warnings

import numpy as np
import pytest

import array_namespace as xp
from finite_diff import central_diff
from transforms import BatchDisagreementError, grad, jit, make_jaxpr, vmap
from transforms.core import TracerArrayConversionError

RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 5))
Y = RNG.standard_normal((4, 5))


def centred(x):
    """x less its median, the median taken in NumPy (as scikit-learn's _median does)."""
    return x - xp.asarray(np.median(np.asarray(x)))


def scaled(x, y):
    """x times a host value of y: differentiable in x, y only converted."""
    return x * xp.asarray(np.abs(np.asarray(y)).max()) + xp.sin(x)


def loop(f, *args, axes=None):
    axes = axes or (0,) * len(args)
    n = next(np.shape(a)[d] for a, d in zip(args, axes) if d is not None)
    per = [f(*[xp.asarray(a if d is None else np.take(a, i, axis=d)) for a, d in zip(args, axes)]) for i in range(n)]
    return np.stack([np.asarray(p) for p in per])


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_a_host_conversion_under_vmap_gives_the_loops_result():
    np.testing.assert_array_equal(np.asarray(vmap(centred)(xp.asarray(X))), loop(centred, X))
    np.testing.assert_array_equal(np.asarray(vmap(scaled)(xp.asarray(X), xp.asarray(Y))), loop(scaled, X, Y))
    g = jit(vmap(centred))   # (the conversion makes the jitted call eager: the eager vmap loops)
    for A in (X, Y * 3.0):
        np.testing.assert_array_equal(np.asarray(g(xp.asarray(A))), loop(centred, A))
    np.testing.assert_array_equal(np.asarray(vmap(jit(centred))(xp.asarray(X))), loop(centred, X))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_in_axes_out_axes_none_axes_and_pytrees():
    got = vmap(centred, in_axes=1, out_axes=1)(xp.asarray(X))
    np.testing.assert_array_equal(np.asarray(got), loop(centred, X, axes=(1,)).T)
    got = vmap(scaled, in_axes=(0, None))(xp.asarray(X), xp.asarray(Y[0]))
    np.testing.assert_array_equal(np.asarray(got), loop(scaled, X, Y[0], axes=(0, None)))

    def tree(d, s):
        m = float(np.asarray(d["q"]).sum())
        return {"a": d["p"] * m + s, "n": xp.asarray(np.asarray(d["p"]).shape[0])}
    got = vmap(tree, in_axes=({"p": 0, "q": 1}, None), out_axes={"a": 1, "n": None})(
        {"p": xp.asarray(X), "q": xp.asarray(Y.T)}, 2.0)
    np.testing.assert_allclose(np.asarray(got["a"]), (X * Y.sum(1)[:, None] + 2.0).T, rtol=1e-15)
    assert int(got["n"]) == 5 and got["n"].shape == ()   # (the same for every element: out_axes None takes it)
    with pytest.raises(ValueError, match="out_axes=None but the output varies"):
        vmap(centred, out_axes=None)(xp.asarray(X))
    got = vmap(lambda: xp.asarray(np.asarray(xp.ones(2))) * 2.0, axis_size=3)()   # (nothing mapped: axis_size)
    np.testing.assert_array_equal(np.asarray(got), np.full((3, 2), 2.0))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_nested_vmaps_fall_back_at_the_level_that_batched_the_value():
    calls = []

    def inner(a, b):
        calls.append(1)
        return a * xp.asarray(np.asarray(b).sum()) + b
    A, B = X[:2], Y[:3]
    # b is batched by the inner vmap only: the inner one loops (one batched try, then its 3 elements), the outer
    # stays batched (it runs its function once)
    got = vmap(lambda a: vmap(lambda b: inner(a, b))(xp.asarray(B)))(xp.asarray(A))
    assert len(calls) == 1 + 3
    want = np.stack([np.stack([a * b.sum() + b for b in B]) for a in A])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-14)
    # a is batched by the outer vmap only: the outer one loops, each inner vmap stays batched
    calls.clear()
    got = vmap(lambda a: vmap(lambda b: inner(b, a))(xp.asarray(B)))(xp.asarray(A))
    assert len(calls) == 1 + 2
    want = np.stack([np.stack([b * a.sum() + a for b in B]) for a in A])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-14)
    # batched by both: the outer loops, and in each of its elements the inner one
    got = vmap(vmap(centred))(xp.asarray(np.stack([X, Y])))
    np.testing.assert_array_equal(np.asarray(got), np.stack([loop(centred, X), loop(centred, Y)]))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_grad_through_the_loop_matches_finite_differences():
    def loss(A):
        return xp.sum(vmap(scaled)(A, xp.asarray(Y)) ** 2)

    def loss_np(A):
        return float(sum(np.sum((a * np.abs(y).max() + np.sin(a)) ** 2) for a, y in zip(A, Y)))
    got = grad(loss)(xp.asarray(X))
    np.testing.assert_allclose(np.asarray(got), central_diff(loss_np, X), rtol=1e-6, atol=1e-8)
    got = jit(grad(loss))(xp.asarray(X))   # (under jit: eager inside the jitted call, grad still through the loop)
    np.testing.assert_allclose(np.asarray(got), central_diff(loss_np, X), rtol=1e-6, atol=1e-8)


def test_abstract_traces_keep_the_conversion_error():
    for run in (lambda: make_jaxpr(vmap(centred))(xp.asarray(X)),
                lambda: jit(vmap(centred), guards=False)(xp.asarray(X)),
                lambda: jit(vmap(centred)).lower(xp.asarray(X)),
                lambda: vmap(centred, axis_name="i")(xp.asarray(X)),   # (collectives need the batch: no loop)
                lambda: vmap(centred)(xp.ones((0, 5)))):              # (an empty batch: no element to run)
        with pytest.raises(TracerArrayConversionError, match="batch axis"):
            run()


def test_one_performance_warning_per_line_naming_it():
    def medians(x):
        return x * 0.0 + xp.asarray(np.median(np.asarray(x)))   # the warned line
    line = medians.__code__.co_firstlineno + 1
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        for _ in range(2):
            vmap(medians)(xp.asarray(X))
            jit(vmap(medians))(xp.asarray(Y))
    assert len(seen) == 1 and seen[0].category is RuntimeWarning, [str(w.message) for w in seen]
    msg = str(seen[0].message)
    assert f"test_vmap_loop.py:{line}" in msg and "converted to the host" in msg and "4 batch elements" in msg, msg
    assert seen[0].filename.endswith("test_vmap_loop.py") and seen[0].lineno == line


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_writes_and_a_caught_conversion_behave_as_in_the_loop():
    def write(x):
        x[0] = float(np.asarray(x).mean())
        return x * 2.0
    A, want_A = xp.asarray(X.copy()), X.copy()
    want = np.stack([write(r) for r in want_A])   # (rows of want_A: views, written in place)
    np.testing.assert_array_equal(np.asarray(vmap(write)(A)), want)
    np.testing.assert_array_equal(np.asarray(A), want_A)

    def catches(x):
        try:
            v = xp.asarray(np.asarray(x)[::-1].copy())   # eagerly this path is taken
        except TypeError:
            v = x   # (a library's fallback: under the batched trace it would be another answer)
        return v * 3.0
    np.testing.assert_array_equal(np.asarray(vmap(catches)(xp.asarray(X))), X[:, ::-1] * 3.0)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_sizes_that_differ_between_elements_loop_and_decisions_keep_their_error():
    L = np.array([[0, 1, 1, 2], [3, 3, 3, 3], [1, 2, 1, 2]])   # label sets of 3, 1 and 2 labels
    f = lambda y: xp.sum(xp.unique_values(y)) + xp.sum(y[y > 1])   # noqa: E731
    np.testing.assert_array_equal(np.asarray(vmap(f)(xp.asarray(L))), loop(f, L))
    g = jit(vmap(f))   # (the loop staged: each element's sizes guarded)
    for M in (L, L[::-1] + 1):
        np.testing.assert_array_equal(np.asarray(g(xp.asarray(M))), loop(f, M))
    h = lambda x: xp.sum(x[x > 0] ** 2)   # noqa: E731  (rows of X with 3, 3 and 1 positive entries)
    want = central_diff(lambda A: float(sum(np.sum(a[a > 0] ** 2) for a in A)), X[:3])
    for d in (grad(lambda A: xp.sum(vmap(h)(A))), jit(grad(lambda A: xp.sum(vmap(h)(A))))):
        np.testing.assert_allclose(np.asarray(d(xp.asarray(X[:3]))), want, rtol=1e-6, atol=1e-8)
    # outputs of another size per element cannot be stacked: the disagreement is the error
    with pytest.raises(BatchDisagreementError, match=r"unique_values.*indices: \[1, 2\]") as e:
        vmap(xp.unique_values)(xp.asarray(L))
    assert "cannot be stacked: element 0 gives i64[3], element 1 gives i64[1]" in "".join(e.value.__notes__)
    with pytest.raises(ValueError, match=r"output leaf 0 cannot be stacked.*element 1 gives f64\[1\]") as e:
        vmap(lambda y: xp.asarray(np.unique(np.asarray(y)) * 1.0))(xp.asarray(L))   # (after a host conversion)
    assert isinstance(e.value.__cause__, TracerArrayConversionError)
    # a Python decision the elements disagree on keeps BatchDisagreementError (no loop)
    with pytest.raises(BatchDisagreementError, match=r"bool\(\).*indices: \[1, 2\]"):
        vmap(lambda y: y if xp.sum(y) < 5 else -y)(xp.asarray(L))
