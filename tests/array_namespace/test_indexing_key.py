"""Key expansion (src/array_namespace/_indexing_key.py) against NumPy's indexing rules: `_expand` turns
a key into one entry per result position; rebuilt as a NumPy key, those entries must select exactly
what NumPy's x[key] selects -- ellipsis and newaxis placement, negative and out-of-range slice bounds,
negative integers and integer arrays wrapped, boolean masks as their nonzero() arrays, 0-d booleans
as new axes of length 1 or 0 -- and the namespace's x[key] must equal NumPy's. Where NumPy raises
IndexError, so does _expand, with a message naming the function, the index and the axis. Traced
indices (under jit) become 'dyn'/'arr' entries whose negative values are wrapped once."""
import numpy as np
import pytest

import array_namespace as xp
from array_namespace._indexing_key import _expand, _wrap_negative
from transforms import jit
from transforms.core import boxing

XN = np.arange(120).reshape(4, 5, 6)
MASK = (XN[:, :, 0] % 3) == 0           # (4, 5)
KEYS = [
    1, -1, (1, 2), (-4, -5, -6), (Ellipsis, 2), (2, Ellipsis), (None, Ellipsis, None), (Ellipsis,), (),
    (1, None, Ellipsis, None, -1), slice(None, None, -1), (slice(1, None, 2), None, -2), slice(10, -10, -1),
    (Ellipsis, slice(-100, 100)), (slice(3, 1), 0), (slice(None), slice(None, None, -2), slice(-2, None, -3)),
    [0, -1, 2], np.array([3, -4]), (np.array([[0, 1], [2, -1]]), Ellipsis, np.array([1, -2])),
    (np.array([0, 1]), slice(None), np.array([1, 2])), (slice(None), np.array([], np.int64)),
    (np.array(2), slice(1, 3)), MASK, (MASK[:, 0], 2), (Ellipsis, XN[0, 0] > 2), np.ones((4, 5, 6), bool),
    np.zeros((4, 5), bool), True, False, (0, True), (np.True_, Ellipsis, False), (None, 1, True, None),
]


def _numpy_key(ents):
    """The entries of an expanded key rebuilt as a NumPy key."""
    out = []
    for e in ents:
        if e.kind == "none":
            out.append(None)
        elif e.kind == "slice":
            stop = e.start + e.count * e.step
            out.append(slice(e.start, None if stop < 0 else stop, e.step))
        elif e.kind == "int":
            assert 0 <= e.start, e.start      # wrapped
            out.append(e.start)
        else:
            assert e.kind == "arr" and isinstance(e.val, np.ndarray), e.kind
            assert e.val.min(initial=0) >= 0    # wrapped
            out.append(e.val)
    return tuple(out)


@pytest.mark.parametrize("key", KEYS, ids=range(len(KEYS)))
def test_expanded_entries_select_what_numpy_selects(key):
    want = XN[key]
    x2, ents = _expand(xp.asarray(XN), key, "__getitem__")
    got = np.asarray(x2)[_numpy_key(ents)]
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    for e in ents:                 # a slice entry is normalised: start inside the axis unless empty
        if e.kind == "slice" and e.count:
            assert 0 <= e.start < x2.shape[e.dim] and e.count <= x2.shape[e.dim]
    np.testing.assert_array_equal(np.asarray(xp.asarray(XN)[key]), want)


def test_entries_record_the_indexed_dimension():
    _, ents = _expand(xp.asarray(XN), (None, Ellipsis, -1, None), "f")
    assert [(e.kind, e.dim) for e in ents] == [("none", None), ("slice", 0), ("slice", 1), ("int", 2),
                                               ("none", None)]
    assert ents[3].start == 5
    _, ents = _expand(xp.asarray(XN), (MASK,), "f")          # a 2-d mask: two array entries, dims 0 and 1
    assert [(e.kind, e.dim) for e in ents] == [("arr", 0), ("arr", 1), ("slice", 2)]
    np.testing.assert_array_equal(ents[0].val, np.nonzero(MASK)[0])
    x2, ents = _expand(xp.asarray(XN), (0, True), "f")       # a 0-d True inserts a length-1 axis
    assert x2.shape == (4, 1, 5, 6)
    assert [e.kind for e in ents] == ["int", "arr", "slice", "slice"]


def _numpy_error(key):
    with pytest.raises(IndexError) as e:
        XN[key]
    return str(e.value)


@pytest.mark.parametrize("key, text", [
    (4, "index 4 is out of bounds for axis 0 with size 4"),
    (-5, "index -5 is out of bounds for axis 0 with size 4"),
    ((0, 5), "index 5 is out of bounds for axis 1 with size 5"),
    ((Ellipsis, -7), "index -7 is out of bounds for axis 2 with size 6"),
    (np.array([0, 4]), "index 4 is out of bounds for axis 0 with size 4"),
    ((slice(None), [1, -6]), "index -6 is out of bounds for axis 1 with size 5"),
    ((0, 0, 0, 0), "too many indices (4) for an array with 3 dimensions"),
    ((Ellipsis, 0, Ellipsis), "an index can only have a single ellipsis ('...')"),
    (np.ones((4, 4), bool), "boolean index of shape (4, 4) does not match the indexed dims (4, 5) of the array"),
    ((0, np.ones(6, bool)), "boolean index of shape (6,) does not match the indexed dims (5,) of the array"),
])
def test_index_errors_where_numpy_raises(key, text):
    _numpy_error(key)                      # NumPy refuses it too
    with pytest.raises(IndexError) as e:
        _expand(xp.asarray(XN), key, "__getitem__")
    assert str(e.value) == f"__getitem__: {text}"
    with pytest.raises(IndexError, match="__getitem__"):
        xp.asarray(XN)[key]


@pytest.mark.parametrize("key, text", [
    (1.5, "unsupported index 1.5 of type float"),
    ("a", "unsupported index 'a' of type str"),
    (np.array([0.5]), "array indices must be integer or boolean, got float64"),
    ([1.0, 2.0], "array indices must be integer or boolean, got float64"),
])
def test_keys_numpy_refuses_are_refused_with_a_reason(key, text):
    _numpy_error(key)
    with pytest.raises(IndexError) as e:
        _expand(xp.asarray(XN), key, "f")
    assert str(e.value).startswith(f"f: {text}")


def test_float_array_index_entries_under_the_namespace_are_refused():
    with pytest.raises(IndexError, match="array indices must be integer or boolean, got float32"):
        _expand(xp.asarray(XN), xp.asarray(np.array([1.0], np.float32)), "f")


def test_traced_indices_become_dynamic_entries_with_negatives_wrapped():
    seen = {}

    def f(x, i, idx):
        _, ents = _expand(x, (i, slice(None), idx), "__getitem__")
        seen["kinds"] = [e.kind for e in ents]
        return x[i, :, idx]

    i, idx = np.int64(-1), np.array([0, -1, -6, 5])
    got = jit(f)(xp.asarray(XN), xp.asarray(i), xp.asarray(idx))
    assert seen["kinds"] == ["dyn", "slice", "arr"]
    np.testing.assert_array_equal(np.asarray(got), XN[-1, :, idx])
    wrap = jit(lambda v: boxing.box(_wrap_negative(v._v, 6)))
    vals = np.array([-6, -1, 0, 3, 5], np.int32)
    out = np.asarray(wrap(xp.asarray(vals)))
    assert out.dtype == np.int64
    np.testing.assert_array_equal(out, np.where(vals < 0, vals + 6, vals))
