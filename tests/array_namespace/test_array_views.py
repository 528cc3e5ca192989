"""In-place updates through a slice are never lost: a value obtained by basic indexing writes its
in-place updates through to the array it came from (eagerly and under every transform), a
slice sees its parent's later writes (as NumPy's views do), np.asarray gives NumPy code a writable array, and
rebinding one handle from many threads loses no write."""
import threading

import numpy as np
import pytest

import array_namespace as xp
from transforms import grad, jit, vmap

BASE = np.arange(12.0).reshape(3, 4)


def _numpy_and_ours(body):
    n = BASE.copy()
    body(n)
    x = xp.asarray(BASE)
    body(x)
    np.testing.assert_array_equal(np.asarray(x), n)


@pytest.mark.parametrize("case", ["row +=", "row[i] =", "col *=", "strided", "nested", "ellipsis", "two rows"])
def test_inplace_updates_through_basic_slices_write_through_like_numpy(case):
    def body(a):
        if case == "row +=":
            r = a[1]
            r += 100
        elif case == "row[i] =":
            r = a[2]
            r[0] = -5
        elif case == "col *=":
            c = a[:, 1]
            c *= 3
        elif case == "strided":
            s = a[::2, 1::2]
            s -= 1
        elif case == "nested":
            r = a[1]
            part = r[1:3]
            part += 7
        elif case == "ellipsis":
            e = a[..., 0]
            e[...] = 0
        elif case == "two rows":
            r0, r1 = a[0], a[1]
            r0 += 1
            r1 += 2           # r1's region was not touched by r0's write: still valid
    _numpy_and_ours(body)


def test_updates_of_unstacked_parts_reach_the_parent():
    x = xp.asarray(BASE)
    a, b, c = xp.unstack(x)
    b += 100.0
    cols = xp.unstack(x, axis=1)
    cols[3][0] = -1.0
    want = BASE.copy()
    want[1] += 100.0
    want[0, 3] = -1.0
    np.testing.assert_array_equal(np.asarray(x), want)


def test_a_slice_sees_later_writes_into_its_parent_as_numpy():
    def body(a):
        r = a[0]
        a[0, 1] = 50.0          # changes the slice's region after the slice was taken: r sees it
        r += 1
        a[0, 2] = r[1] * 2      # (r[1] is 51 now)
    _numpy_and_ours(body)


def test_write_through_under_transforms_matches_eager():
    def f(a):
        r = a[1]
        r *= 3.0
        return xp.sum(a ** 2)
    e = f(xp.asarray(BASE))
    np.testing.assert_allclose(float(jit(f)(xp.asarray(BASE))), float(e))
    want = 2 * BASE.copy()
    want[1] *= 9.0
    np.testing.assert_allclose(np.asarray(grad(f)(xp.asarray(BASE))), want)
    batch = xp.asarray(np.stack([BASE, 2 * BASE]))
    np.testing.assert_allclose(np.asarray(vmap(f)(batch)), [float(f(xp.asarray(b))) for b in (BASE, 2 * BASE)])


def test_single_elements_are_copies_as_in_numpy():
    def body(a):
        e = a[1, 2]           # NumPy: a scalar copy
        e += 100
        z = a[0][()]
        z *= 0
    _numpy_and_ours(body)
    n, x = np.zeros(()), xp.zeros(())
    for a in (n, x):
        v = a[...]            # a 0-d view in NumPy
        v += 3
    np.testing.assert_array_equal(np.asarray(x), n)


def test_advanced_indexing_results_are_copies_as_in_numpy():
    _numpy_and_ours(lambda a: a[[0, 2]].__iadd__(1))


def test_np_asarray_is_writable_and_does_not_alias():
    x = xp.asarray(BASE)
    n = np.asarray(x)
    assert n.flags.writeable
    n[0, 0] = 99.0
    assert float(x[0, 0]) == 0.0
    v = np.asarray(x, copy=False) if np.lib.NumpyVersion(np.__version__) >= "2.0.0" else None
    if v is not None:
        assert not v.flags.writeable        # the zero-copy view of an immutable buffer is read-only
    assert np.asarray(x, dtype=np.float32).dtype == np.float32


def test_rebinding_from_many_threads_loses_no_write():
    """Each thread writes its own elements of one shared handle (as joblib threads do in
    scikit-learn): every write survives."""
    n_threads, per = 8, 40
    x = xp.zeros(n_threads * per, dtype=xp.int64)
    counts = xp.zeros(n_threads, dtype=xp.int64)

    def work(t):
        for k in range(per):
            x[t * per + k] = t * 1000 + k
            counts[t] += 1
    threads = [threading.Thread(target=work, args=(t,)) for t in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    want = np.array([t * 1000 + k for t in range(n_threads) for k in range(per)])
    np.testing.assert_array_equal(np.asarray(x), want)
    np.testing.assert_array_equal(np.asarray(counts), [per] * n_threads)


def test_augmented_item_assignment_writes_once():
    x = xp.asarray(BASE)
    x[1] += 5.0
    x[0, 1:3] *= 2.0
    want = BASE.copy()
    want[1] += 5.0
    want[0, 1:3] *= 2.0
    np.testing.assert_array_equal(np.asarray(x), want)


def test_transform_views_write_through_like_numpy():
    """permute_dims / .T / .mT / moveaxis / flip / expand_dims / squeeze / reshape return views in NumPy
    (scipy.signal.oaconvolve adds into a moveaxis view of its output); reshape of a non-contiguous view
    is a copy there, and here."""
    def body(a):
        ours = not isinstance(a, np.ndarray)
        t = xp.moveaxis(a, 0, -1) if ours else np.moveaxis(a, 0, -1)
        t[0, 1:3] += 10
        u = xp.permute_dims(a, (1, 0)) if ours else a.T
        u[2] *= -1
        f = xp.flip(a, axis=0) if ours else np.flip(a, axis=0)
        f[0, 0] = 99
        r = xp.reshape(a, (-1,)) if ours else a.reshape(-1)
        r[1] = -7
        e = xp.expand_dims(a, axis=0) if ours else a[None]
        e[0, 1, 1] = 55
        s = xp.squeeze(e, axis=0) if ours else np.squeeze(e, axis=0)
        s[2, 3] = 77
        m = a.mT if ours else np.swapaxes(a, -1, -2)
        m[1, 0] = 123
        c = xp.reshape(a.T, (-1,)) if ours else a.T.reshape(-1)   # NumPy: a copy
        c[0] = 1000
    _numpy_and_ours(body)


def test_scipy_oaconvolve_overlap_add_through_a_moveaxis_view():
    import scipy.signal as ss
    rng = np.random.default_rng(0)
    a, b = rng.random(100), rng.random(10)
    np.testing.assert_allclose(np.asarray(ss.oaconvolve(xp.asarray(a), xp.asarray(b))), ss.oaconvolve(a, b),
                               rtol=1e-12, atol=1e-12)
