"""_views.py's layout rule against NumPy: a reshape of a view is a view exactly where NumPy's is (its strides
allow it without a copy), and the layout worked out along a chain is NumPy's own (strides and offset)."""
import itertools

import numpy as np
import pytest

import array_namespace as xp
from transforms import jit
from array_namespace import _views as V

ROOT = np.arange(60.0).reshape(3, 4, 5)
KEYS = [(slice(None),), (slice(1, 3),), (slice(None, None, 2),), (slice(None), slice(None, None, -1)),
        (1,), (Ellipsis, slice(1, 4)), (None, slice(0, 2)), (slice(None), 2, slice(None, None, 3))]
SHAPES = [(-1,), (2, -1), (-1, 2), (1, -1, 1)]


def _np_layout(view, root):
    item = view.itemsize
    off = (view.__array_interface__["data"][0] - root.__array_interface__["data"][0]) // item
    return tuple(s // item for s in view.strides), off


@pytest.mark.parametrize("key,perm", list(itertools.product(KEYS, [None, "T", "flip"])))
def test_layout_and_reshape_rule_match_numpy(key, perm):
    n = ROOT.copy()
    x = xp.asarray(n)
    nv, v = n[key], x[key]
    if perm == "T":
        nv, v = nv.T, xp.permute_dims(v, tuple(range(v.ndim))[::-1])
    elif perm == "flip":
        nv, v = np.flip(nv, axis=0), xp.flip(v, axis=0)
    st, off = V.layout(v)
    nst, noff = _np_layout(nv, n)
    assert off == noff
    assert all(a == b for a, b, d in zip(st, nst, nv.shape) if d > 1)
    for shape in SHAPES:
        try:
            r = nv.reshape(shape)
        except ValueError:
            continue
        assert V.reshape_is_view(v, r.shape) == np.shares_memory(r, n), (key, perm, shape)


def test_dead_views_are_dropped_from_the_parent():
    x = xp.arange(10.0)
    for i in range(100):
        x[i % 5:]   # (a temporary view each time)
    keep = x[1:3]
    assert len(x._views) < 40
    x[2] = -1.0
    assert float(keep[1]) == -1.0


def test_an_empty_key_of_a_0d_array_is_a_value_of_its_own_and_an_ellipsis_a_view():
    """NumPy: x[()] of a 0-d array is a scalar (a copy), x[...] a 0-d view. An in-place operator on the result
    then leaves x as it is, or writes into it, as NumPy's does -- eagerly and inside jit (the state machine of
    test_view_state_machine.py found x[()] returning x itself: y += 3 wrote into x)."""
    def steps(x):
        y = x[()]
        y += 3.0
        z = x[...]
        z += 1.0
        return x, y, z

    n = np.asarray(1.0)
    ny = n[()]
    ny += 3.0
    nz = n[...]
    nz += 1.0
    for f in (steps, jit(steps)):
        got = f(xp.asarray(1.0))
        np.testing.assert_array_equal([float(g) for g in got], [float(n), float(ny), float(nz)])


def test_many_live_views_follow_random_writes_as_numpy():
    """Writes (basic keys, whole-array updates) into random members of a family of live views: after each,
    every view equals its NumPy twin (a view the write cannot reach is left as it is, not recomputed)."""
    rng = np.random.default_rng(0)
    n = np.arange(48.0).reshape(6, 8)
    x = xp.asarray(n)
    makers = [lambda a: a[1], lambda a: a[:, 2], lambda a: a[::2, 1::3], lambda a: a[4:, ::-1],
              lambda a: (a.T if isinstance(a, np.ndarray) else a.mT)[3], lambda a: a[2:4],
              lambda a: (np if isinstance(a, np.ndarray) else xp).flip(a, axis=1)[5],
              lambda a: (np if isinstance(a, np.ndarray) else xp).reshape(a, (12, 4))[5:9]]
    ns, ours = [n], [x]
    for mk in makers:
        ns.append(mk(n))
        ours.append(mk(x))
    keys = [(0,), (slice(1, 3),), (slice(None, None, -2),), (Ellipsis, 0), ()]
    for step in range(60):
        k = int(rng.integers(len(ns)))
        a, b = ns[k], ours[k]
        key = keys[int(rng.integers(len(keys)))]
        key = key[:max(a.ndim, 0)] if key and key[0] is not Ellipsis else key
        val = float(step + 100)
        if rng.random() < 0.3:
            a += val
            b += val
        else:
            a[key] = val
            b[key] = val
        for i, (p, q) in enumerate(zip(ns, ours)):
            np.testing.assert_array_equal(np.asarray(q), p, err_msg=f"step {step}: view {i} after writing view {k}")


def test_a_forked_child_writes_while_a_parent_thread_held_the_lock_at_the_fork():
    """The one mutation lock (rebinds and view registration alike) is renewed in a forked child: a parent
    thread holding it at the fork never releases it there. The child writes through a view and exits;
    killed past a deadline if it hangs."""
    import os
    import threading
    import time
    held, release = threading.Event(), threading.Event()

    def holder():
        with V.LOCK:
            held.set()
            release.wait(10)
    t = threading.Thread(target=holder)
    t.start()
    held.wait(10)
    pid = os.fork()
    if pid == 0:
        try:
            x = xp.arange(6.0)
            v = x[2:4]
            v[0] = -1.0
            os._exit(0 if float(x[2]) == -1.0 and float(v[0]) == -1.0 else 3)
        except BaseException:
            os._exit(4)
    release.set()
    t.join()
    deadline = time.monotonic() + 60
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            raise AssertionError("the forked child hung on the mutation lock")
        time.sleep(0.02)
    assert os.waitstatus_to_exitcode(status) == 0
