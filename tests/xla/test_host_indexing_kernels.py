"""Host kernels of the indexing family (xla/lower_indexing.py) against XLA running the same primitive.

The kernels have fast forms for what eager indexing makes most -- gather as `take` along one dim or as
a pointwise read, scatter pointwise, dynamic_(update_)slice windows -- and a general form for the rest.
Oracle: the primitive's lowering run by XLA (test_host_kernels.xla_many), on every index dtype, with
negative, out-of-range (clamped), huge unsigned and empty indices, duplicates for the accumulating
scatter modes, and special values in the operand."""
import functools

import numpy as np
import pytest

from test_host_kernels import _host, assert_same, xla_many
from transforms.primitives import indexing as I
from xla import host

pytestmark = pytest.mark.skipif(host.MODE == "xla", reason="host kernels switched off (ARRAY_NAMESPACE_EAGER=xla)")

X = np.array([np.nan, -0.0, np.inf, -np.inf, 1.5, -2.25, 0.0, 3e300, -1e-300, 7.0, 8.0, -9.5] * 5).reshape(3, 4, 5)
INDEX_DTYPES = [np.int8, np.int32, np.int64, np.uint8, np.uint64]


def _check(cases):
    """Each (prim, args, params) case: host == XLA, XLA's answers from one program (compiling is what costs)."""
    for (prim, args, params), want in zip(cases, xla_many(cases)):
        got = _host(prim, args, params)
        assert want is not None and got is not None
        for g, w in zip(got, want):
            assert_same(np.asarray(g), w, f"{prim.name} {params}")


def _idx(vals, dt):
    a = np.array(vals)
    if np.dtype(dt).kind == "u":
        a = np.where(a < 0, np.iinfo(dt).max, a)   # a huge unsigned index: clamps to the last position
    return a.astype(dt)


def _take_dn(d, nd, nb):
    return I.GatherDims(tuple(range(d)) + tuple(range(d + nb, nd - 1 + nb)), (d,), (d,))


@pytest.mark.parametrize("dt", INDEX_DTYPES, ids=lambda d: np.dtype(d).name)
def test_gather_take_and_point_forms_equal_xla(dt):
    cases = []
    for d in range(3):
        n = X.shape[d]
        sizes = tuple(1 if e == d else X.shape[e] for e in range(3))
        for vals in ([0, n - 1, 1], [[2, -1], [n + 3, 0]], [-7], []):
            idx = _idx(vals, dt)[..., None]
            dn = _take_dn(d, 3, idx.ndim - 1)
            cases.append((I.gather_p, [X, idx], dict(dimension_numbers=dn, slice_sizes=sizes)))
    for x in (X[0, 0], X[0], X):   # pointwise: every dim indexed, one element each
        nd = x.ndim
        for vals in ([[0] * nd, [1] * nd], [[[-1] * nd], [[9] * nd]], np.zeros((0, nd), int).tolist()):
            idx = _idx(vals, dt).reshape(-1, nd) if len(vals) == 0 else _idx(vals, dt)
            dn = I.GatherDims((), tuple(range(nd)), tuple(range(nd)))
            cases.append((I.gather_p, [x, idx], dict(dimension_numbers=dn, slice_sizes=(1,) * nd)))
    _check(cases)


def test_gather_general_forms_still_equal_xla():
    idx = np.array([[0, 1], [2, 3], [-1, 9]], np.int32)
    cases = [  # partial windows, windows placed first, one collapsed dim of two indexed, an index-ordered map
        (I.GatherDims((1, 2), (0,), (0, 1)), (1, 2, 3)),
        (I.GatherDims((0, 1), (2,), (1, 2)), (3, 2, 1)),
        (I.GatherDims((1,), (0, 1), (1, 0)), (1, 1, 5)),
        (I.GatherDims((1, 2, 3), (), (0, 2)), (2, 4, 2)),
    ]
    cases = [(I.gather_p, [X, idx], dict(dimension_numbers=dn, slice_sizes=sizes)) for dn, sizes in cases]
    # take form with whole windows but the batch dims elsewhere: the general path
    i1 = np.array([[1], [0]], np.int64)
    cases.append((I.gather_p, [X, i1], dict(dimension_numbers=I.GatherDims((0, 1), (1,), (1,)), slice_sizes=(3, 1, 5))))
    _check(cases)


@pytest.mark.parametrize("mode", ["set", "add", "mul", "min", "max"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.bool_], ids=lambda d: np.dtype(d).name)
def test_pointwise_scatter_equals_xla(mode, dtype):
    with np.errstate(all="ignore"):   # (NaN / inf / 3e300 into int32 and float32: whatever they become)
        x = X.astype(dtype) if dtype != np.bool_ else X > 0
    cases = []
    for idt in INDEX_DTYPES:
        if mode == "set":   # (duplicates: which update wins is not specified)
            vals = [[0, 1, 2], [2, -3, 4], [1, 9, 0]]
        else:
            vals = [[0, 1, 2], [0, 1, 2], [2, -3, 4], [-1, 9, 9], [2, 3, 4]]
        idx = _idx(vals, idt)
        u = (np.arange(len(vals)) * 1.5 - 2).astype(dtype) if dtype != np.bool_ else np.arange(len(vals)) % 2 == 0
        dn = I.ScatterDims((), (0, 1, 2), (0, 1, 2))
        cases.append((I.scatter_p, [x, idx, u], dict(dimension_numbers=dn, mode=mode)))
        cases.append((I.scatter_p, [x, idx[:0], u[:0]], dict(dimension_numbers=dn, mode=mode)))
    # one-dimensional operand, a grid of indices
    x1 = x.reshape(-1)[:10]
    idx = _idx([[[1], [3]], [[-2], [12]]], np.int64)
    u = (np.ones((2, 2)) * 3).astype(dtype) if dtype != np.bool_ else np.ones((2, 2), bool)
    if mode != "set":
        cases.append((I.scatter_p, [x1, idx, u], dict(dimension_numbers=I.ScatterDims((), (0,), (0,)), mode=mode)))
    _check(cases)


def test_windowed_scatter_still_equals_xla():
    idx = np.array([[1], [-4], [7]], np.int32)
    u = np.arange(3 * 3 * 5, dtype=np.float64).reshape(3, 3, 5)
    u2 = np.arange(2 * 3 * 5, dtype=np.float64).reshape(3, 2, 5)
    idx2 = np.array([[0, 1], [2, 3], [1, 0]], np.int64)
    _check([(I.scatter_p, [X, idx, u], dict(dimension_numbers=I.ScatterDims((0, 2), (1,), (1,)), mode="add")),
            (I.scatter_p, [X, idx2, u2[:, 0]],
             dict(dimension_numbers=I.ScatterDims((1,), (0, 1), (0, 1)), mode="max"))])


@pytest.mark.parametrize("dt", INDEX_DTYPES, ids=lambda d: np.dtype(d).name)
def test_dynamic_windows_clamp_as_xla(dt):
    cases = []
    for starts in ([0, 0, 0], [2, 3, 4], [-1, 5, 1], [9, -9, 2], [200, 1, 300]):
        s = [_idx(v, dt) for v in starts]
        for sizes in ((1, 1, 1), (2, 4, 3), (3, 4, 5), (0, 2, 1)):
            cases += [(I.dynamic_slice_p, [X, *s], dict(slice_sizes=sizes)),
                      (I.dynamic_update_slice_p, [X, np.full(sizes, -4.5), *s], {})]
    _check(cases)


@pytest.mark.parametrize("dt", [np.int8, np.int64, np.uint64], ids=lambda d: np.dtype(d).name)
def test_one_window_gather_and_scatter_equal_xla(dt):
    """Eager x[i, 2:5] reads and writes: one window, a start per dim (clamped), the int dims dropped."""
    cases = []
    for ints in [(), (0,), (1,), (0, 2), (0, 1, 2)]:
        win = tuple(range(3 - len(ints)))
        gdn, sdn = I.GatherDims(win, ints, (0, 1, 2)), I.ScatterDims(win, ints, (0, 1, 2))
        for starts in ([0, 0, 0], [2, 1, 3], [-1, 7, 2], [5, -3, 9]):
            idx = _idx(starts, dt)
            for sizes in ((1, 2, 3), (1, 4, 5), (1, 0, 2)):
                sizes = tuple(1 if d in ints else (sizes[d] if d else 2) for d in range(3))
                cases.append((I.gather_p, [X, idx], dict(dimension_numbers=gdn, slice_sizes=sizes)))
                ushape = tuple(n for d, n in enumerate(sizes) if d not in ints)
                u = np.arange(float(np.prod(ushape))).reshape(ushape) - 2.5
                for mode in ("set", "add", "mul", "min", "max") if ints == (1,) else ("set", "add"):
                    cases.append((I.scatter_p, [X, idx, u], dict(dimension_numbers=sdn, mode=mode)))
    b = X > 0   # booleans: add/mul/min/max are or/and
    for mode in ("set", "add", "mul", "min", "max"):
        cases.append((I.scatter_p, [b, _idx([1, 2, 0], dt), np.array([True, False])],
                      dict(dimension_numbers=I.ScatterDims((0,), (0, 1), (0, 1, 2)), mode=mode)))
    _check(cases)


def test_in_place_scatter_writes_its_operand_and_equals_the_copying_kernel():
    """host_kernels[scatter_p].in_place (used by runtime.eager_in_place for `x[k] = v` on a sole holder) gives
    the copying kernel's values, in the operand's own memory, for the one-window, pointwise and general forms."""
    entry = host.host_kernels[I.scatter_p]
    assert entry.in_place is True
    ip = functools.partial(entry.rest, in_place=True)
    cases = [
        (np.array([1, -1, 2], np.int64), np.arange(10.0).reshape(2, 5) - 3,   # one window
         dict(dimension_numbers=I.ScatterDims((0, 1), (0,), (0, 1, 2)), mode="set")),
        (np.array([0, 2, 1], np.int32), np.arange(5.0), dict(dimension_numbers=I.ScatterDims((0,), (0, 1), (0, 1, 2)),
                                                            mode="add")),
        (_idx([[0, 1, 2], [0, 1, 2], [2, -3, 4]], np.int64), np.array([1.5, 2.5, -1.0]),   # pointwise, duplicates
         dict(dimension_numbers=I.ScatterDims((), (0, 1, 2), (0, 1, 2)), mode="add")),
        (np.array([[1], [-4], [7]], np.int32), np.arange(45.0).reshape(3, 3, 5),          # general
         dict(dimension_numbers=I.ScatterDims((0, 2), (1,), (1,)), mode="max")),
    ]
    xla = xla_many((I.scatter_p, [X, idx, u], params) for idx, u, params in cases)
    for (idx, u, params), (xla_want,) in zip(cases, xla):
        want = host.host_kernels[I.scatter_p](X, idx, u, **params)
        x = X.copy()
        got = ip(x, idx, u, **params)
        assert got is x
        assert_same(got, want, f"in place {params}")
        assert_same(np.asarray(xla_want), want, f"xla {params}")
