"""`x[key] = value` eagerly under vmap on an array the function made (Array._set_locked, _batched_set): written
into the batched value's memory, as an eager array's write is, not one copy of the whole batch per write (a loop of
element writes -- scikit-learn's _fill_diagonal under vmap(euclidean_distances) -- was quadratic: 2.0 s at 3 x
1000 x 1000, now 0.14 s). The oracle is the same function run on each batch element with NumPy."""
import zlib

import numpy as np
import pytest

import array_namespace as xp
from transforms import vmap

# (key, value kind): ints, slices (steps, negative bounds), keys shorter than the array's rank
CASES = [((1, 2), "scalar"), ((-1, 0), "scalar"), ((0,), "row"), (1, "row"), ((slice(None), 2), "col"),
         ((slice(1, None, 2), slice(None, None, -2)), "block"), ((2, slice(0, 3)), "row3"),
         ((1, 1), "batched0d"), ((0,), "batchedrow"), ((slice(None), -1), "batchedcol")]


def _value(kind, a_np, i):
    """The value written for batch element i (NumPy), and how to make it inside the mapped function."""
    rows, cols = a_np.shape[-2:]
    return {"scalar": 7.5, "row": np.arange(cols) + 0.5, "col": np.arange(rows) - 0.5,
            "block": np.full(((rows - 1 + 1) // 2, (cols + 1) // 2), 3.25), "row3": np.array([9.0, 8.0, 7.0]),
            "batched0d": float(a_np[i].sum()), "batchedrow": a_np[i, 1] * 2.0,
            "batchedcol": a_np[i, :, 0] + 1.0}[kind]


def _make(kind, a):
    """The same value inside the function, from its argument a (batched kinds depend on it)."""
    rows, cols = a.shape
    if kind == "batched0d":
        return xp.sum(a)
    if kind == "batchedrow":
        return a[1] * 2.0
    if kind == "batchedcol":
        return a[:, 0] + 1.0
    if kind == "scalar":
        return 7.5
    return xp.asarray(_value(kind, np.zeros((1, rows, cols)), 0))


@pytest.mark.parametrize("in_axis", [0, 1, 2])
@pytest.mark.parametrize("key,kind", CASES)
def test_writes_under_vmap_match_numpy_per_batch_element(key, kind, in_axis):
    rng = np.random.default_rng(zlib.crc32(repr((key, kind, in_axis)).encode()))
    a_np = rng.standard_normal((3, 4, 5))      # batch of 3 (4, 5) arrays

    def f(a):
        b = a * 1.0
        b[key] = _make(kind, a)
        b[key] = b[key] * 2.0                  # a second write, reading the first
        return b
    got = vmap(f, in_axes=in_axis)(xp.asarray(np.moveaxis(a_np, 0, in_axis)))
    want = a_np.copy()
    for i in range(3):
        want[i][key] = _value(kind, a_np, i)
        want[i][key] = want[i][key] * 2.0
    # (exact but for the batched sum of 20 values, whose order over a strided batch may differ from NumPy's)
    np.testing.assert_allclose(np.asarray(got), want, rtol=0, atol=1e-13 if kind == "batched0d" else 0)


def test_an_element_write_loop_under_vmap_writes_in_place_and_leaves_other_values_alone():
    seen = []

    def fill(a):
        b = a * 1.0
        kept = b + 0.0                       # another value: never written through
        seen.append(b._v.val.np.ctypes.data)
        for i in range(b.shape[0]):
            b[i, i] = -1.0
            seen.append(b._v.val.np.ctypes.data)
        return b, kept
    a = np.arange(2 * 6 * 6, dtype=np.float64).reshape(2, 6, 6)
    got, kept = vmap(fill)(xp.asarray(a))
    assert seen == [seen[0]] * 7            # the batch's memory took every write (before: a new array each)
    want = a.copy()
    want[:, np.arange(6), np.arange(6)] = -1.0
    np.testing.assert_array_equal(np.asarray(got), want)
    np.testing.assert_array_equal(np.asarray(kept), a)


def test_aliases_views_and_copies_under_vmap_keep_numpys_semantics():
    """The same Array object and a view of it see the write (NumPy's semantics: the view is written through its
    family, the functional way), a copy made before the write does not."""
    def f(a):
        b = a * 1.0
        c = b
        d = xp.asarray(b, copy=True)
        b[0, 0] = 100.0
        e = b.T                               # b now has a view: later writes go through the view family
        b[1, 2] = -5.0
        return c, d, e
    a = np.ones((2, 3, 3))
    c, d, e = vmap(f)(xp.asarray(a))
    want = a.copy()
    want[:, 0, 0] = 100.0
    want[:, 1, 2] = -5.0
    np.testing.assert_array_equal(np.asarray(c), want)
    np.testing.assert_array_equal(np.asarray(d), a)
    np.testing.assert_array_equal(np.asarray(e), np.swapaxes(want, 1, 2))


def test_bad_keys_and_values_raise_as_without_vmap():
    def f(a):
        b = a * 1.0
        b[5, 0] = 1.0
        return b
    with pytest.raises(IndexError):
        vmap(f)(xp.ones((2, 3, 3)))

    def g(a):
        b = a * 1.0
        b[0] = xp.ones(4)
        return b
    with pytest.raises(ValueError):
        vmap(g)(xp.ones((2, 3, 3)))

    def h(a):
        b = xp.astype(a, xp.int64)
        b[0, 0] = 1.5
        return b
    with pytest.raises(TypeError):
        vmap(h)(xp.ones((2, 3, 3)))
