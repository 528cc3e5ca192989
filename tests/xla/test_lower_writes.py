"""xla/lower_writes.py: runs of constant-position writes (a Python loop of `a[i, i] = v[i]`, scikit-learn's
`_add_to_diagonal`, on a view) are lowered as one scatter per run, not one dynamic_update_slice (one XLA
kernel, 10-35 ms of compile) per element: the lowered program's size does not grow with the loop's length.
Values against NumPy running the same loop; the cases the merge must leave alone (an intermediate read
between writes, windows overlapping in part, traced starts) keep their exact sequential result."""
import numpy as np
import pytest

import array_namespace as xp
from transforms import jit, make_jaxpr
from transforms.core import ShapedArray
from transforms.jaxpr import ClosedJaxpr, Eqn, Jaxpr, Var, new_literal
from xla import lower_writes, runtime


def _diag_loop(c, v):
    """scikit-learn's _add_to_diagonal on each component's view (mixture/_gaussian_mixture.py)."""
    c = xp.asarray(c, copy=True)
    for k in range(c.shape[0]):
        a = c[k, :, :]
        value = xp.linalg.diagonal(a) + v
        for i in range(a.shape[0]):
            a[i, i] = value[i]
    return c


def _np_diag_loop(c, v):
    c = c.copy()
    for k in range(c.shape[0]):
        c[k][np.diag_indices(c.shape[1])] += v
    return c


def _inputs(p, k=3, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((k, p, p)), rng.standard_normal(p)


@pytest.mark.parametrize("p", [1, 2, 9])
def test_element_writes_through_a_view_match_numpy(p):
    c, v = _inputs(p)
    got = jit(_diag_loop)(xp.asarray(c), xp.asarray(v))
    np.testing.assert_array_equal(np.asarray(got), _np_diag_loop(c, v))


def test_lowered_size_does_not_grow_with_the_number_of_writes():
    texts = {p: jit(_diag_loop).lower(*map(xp.asarray, _inputs(p))).as_text() for p in (8, 64)}
    for t in texts.values():
        assert t.count("stablehlo.dynamic_update_slice") == 3   # each view put back once
        assert t.count('"stablehlo.scatter"') == 3   # each view's element writes
    # the element reads v[i] stay (one slice each), the writes and the write-backs of the view do not
    ops = {p: sum(1 for line in t.splitlines() if " = " in line) for p, t in texts.items()}
    assert ops[64] - ops[8] <= 3 * (64 - 8) + 3


def test_plan_of_a_chain_and_of_a_view_write_back():
    c, v = _inputs(4, k=2)
    jaxpr = make_jaxpr(_diag_loop)(xp.asarray(c), xp.asarray(v)).jaxpr
    plan = lower_writes.plan(jaxpr)
    runs = [r for r in plan.values() if r is not None]
    diagonal = [(i, i) for i in range(4)]
    # per component: the view's 4 element writes as one run, then one write of the view into c (the 3
    # write-backs before it, each covered by the next, are not emitted)
    assert [[s for _, s in r.writes] for r in runs] == [diagonal, [(0, 0, 0)], diagonal, [(1, 0, 0)]]
    dus = [i for i, e in enumerate(jaxpr.eqns) if e.prim is lower_writes.DUS]
    assert len(dus) == 2 * 4 * 2 and all(i in plan for i in dus)   # each element write and each write-back


def _np_run(x, writes):
    x = x.copy()
    for idx, val in writes:
        x[idx] = val
    return x


def test_a_window_written_twice_keeps_its_last_value():
    def f(x):
        x = xp.asarray(x, copy=True)
        x[1, 2] = 5.0
        x[0, 0] = 1.0
        x[1, 2] = 7.0
        x[3, 1] = 2.0
        return x
    x = np.zeros((4, 3))
    np.testing.assert_array_equal(np.asarray(jit(f)(xp.asarray(x))),
                                  _np_run(x, [((1, 2), 5.0), ((0, 0), 1.0), ((1, 2), 7.0), ((3, 1), 2.0)]))
    assert jit(f).lower(xp.asarray(x)).as_text().count('"stablehlo.scatter"') == 1


def test_windows_overlapping_in_part_keep_sequential_order():
    def f(x, r):
        x = xp.asarray(x, copy=True)
        x[0:2, :] = r[0:2, :]
        x[1:3, :] = r[2:4, :] * 2.0   # overlaps the first write's row 1: a new run
        x[3:5, :] = r[4:6, :]
        x[0, :] = r[6, :]            # inside the first window, after the second: sequential order
        return x
    x, r = np.zeros((5, 3)), np.arange(21.0).reshape(7, 3)
    want = _np_run(x, [((slice(0, 2),), r[0:2]), ((slice(1, 3),), r[2:4] * 2.0), ((slice(3, 5),), r[4:6])])
    want[0, :] = r[6]
    np.testing.assert_array_equal(np.asarray(jit(f)(xp.asarray(x), xp.asarray(r))), want)


def test_an_intermediate_read_between_writes_sees_the_writes_before_it():
    def f(x):
        x = xp.asarray(x, copy=True)
        x[0] = 1.0
        x[1] = 2.0
        s = xp.sum(x)     # reads the intermediate: the chain is split here
        x[2] = s
        x[3] = 4.0
        return x, s
    x = np.full(5, 10.0)
    got, s = jit(f)(xp.asarray(x))
    np.testing.assert_array_equal(np.asarray(got), [1.0, 2.0, 33.0, 4.0, 10.0])
    assert float(s) == 33.0


def test_traced_starts_stay_a_write_of_their_own():
    def f(x, i):
        x = xp.asarray(x, copy=True)
        x[i] = -1.0             # traced start: a dynamic_update_slice of its own
        x[1] = -2.0
        x[2] = -3.0
        return x
    x = np.arange(6.0)
    got = jit(f)(xp.asarray(x), xp.asarray(np.int64(4)))
    np.testing.assert_array_equal(np.asarray(got), [0.0, -2.0, -3.0, 3.0, -1.0, 5.0])


def test_literal_starts_clamp_as_xla_does():
    f64, i64 = ShapedArray((4,), np.float64), ShapedArray((), np.int64)
    x, u, w, y1, y2 = Var(f64), Var(ShapedArray((2,), np.float64)), Var(ShapedArray((2,), np.float64)), Var(f64), \
        Var(f64)
    eqns = [Eqn(lower_writes.DUS, [x, u, new_literal(7, i64)], [y1], {}),     # clamped to start 2
            Eqn(lower_writes.DUS, [y1, w, new_literal(-3, i64)], [y2], {})]   # clamped to start 0
    closed = ClosedJaxpr(Jaxpr([], [x, u, w], eqns, [y2]), [])
    plan = lower_writes.plan(closed.jaxpr)
    assert plan[0] is None and [s for _, s in plan[1].writes] == [(2,), (0,)]
    bufs = [runtime.device_buffer(np.asarray(v, np.float64)) for v in (np.zeros(4), [1.0, 2.0], [3.0, 4.0])]
    got = runtime.compile_jaxpr(closed)(bufs)
    np.testing.assert_array_equal(runtime.to_numpy(got[0]), [3.0, 4.0, 1.0, 2.0])


@pytest.mark.parametrize("size", [(1, 1), (1, 3), (2, 2), (3, 1), (2, 4)])
def test_random_runs_of_equal_windows_match_numpy(size):
    """Writes of one window size at random literal starts (rewrites, windows overlapping in part, in the same
    and in neighbouring cells of the run's grid) give NumPy's sequential result."""
    rng = np.random.default_rng(sum(size))
    starts = [(int(rng.integers(0, 8 - size[0])), int(rng.integers(0, 7 - size[1]))) for _ in range(40)]

    def f(x, r):
        x = xp.asarray(x, copy=True)
        for k, (i, j) in enumerate(starts):
            x[i:i + size[0], j:j + size[1]] = r[k]
        return x
    x, r = np.zeros((8, 7)), np.arange(40.0 * size[0] * size[1]).reshape((40,) + size) + 1.0
    want = _np_run(x, [((slice(i, i + size[0]), slice(j, j + size[1])), r[k]) for k, (i, j) in enumerate(starts)])
    np.testing.assert_array_equal(np.asarray(jit(f)(xp.asarray(x), xp.asarray(r))), want)


def test_a_long_run_is_planned_in_linear_time(monkeypatch):
    """scikit-learn's _fill_diagonal writes a[i, i] once per row (2,032 writes under jit(euclidean_distances)):
    each write is checked against the windows of its own and the neighbouring cells only (9 in 2-D), not
    against every earlier write of the run (2 million checks, 1.5 s of planning, before)."""
    def fill(a):
        a = a * 1.0
        for i in range(a.shape[0]):
            a[i, i] = 0.0
        return a
    n = 300
    jaxpr = make_jaxpr(fill)(xp.ones((n, n))).jaxpr
    calls = []
    meets = lower_writes._meets
    monkeypatch.setattr(lower_writes, "_meets", lambda a, b: calls.append(1) or meets(a, b))
    runs = [r for r in lower_writes.plan(jaxpr).values() if r is not None]
    assert [len(r.writes) for r in runs] == [n]
    assert len(calls) <= 9 * n


@pytest.mark.slow   # (~6 s: the fit's 2 EM steps compile as one program)
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_gaussian_mixture_fit_under_jit_matches_numpy():
    sklearn = pytest.importorskip("sklearn")
    from sklearn.mixture import GaussianMixture

    def fit(X):
        with sklearn.config_context(array_api_dispatch=True):
            gm = GaussianMixture(3, covariance_type="full", init_params="random", max_iter=2, tol=0.0,
                                 random_state=0).fit(X)
        return gm.weights_, gm.means_, gm.covariances_
    rng = np.random.default_rng(3)
    X = (rng.standard_normal((3, 12)) * 4.0)[np.arange(60) % 3] + rng.standard_normal((60, 12))
    got = jit(fit)(xp.asarray(X))
    want = GaussianMixture(3, covariance_type="full", init_params="random", max_iter=2, tol=0.0,
                           random_state=0).fit(X)
    for g, w in zip(got, (want.weights_, want.means_, want.covariances_)):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-9, atol=1e-12)
