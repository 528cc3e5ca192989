"""The mutation matrix: a write into any view -- slices (steps, negative steps), integer indices, transposes,
flips, expand_dims, moveaxis, reshapes of contiguous and strided views, in chains of 1-3 -- reaches every array it
shares data with, exactly where NumPy's does (the root, the view, the chain's intermediate views and a sibling
view read afterwards), eagerly and under jit, grad, vmap, cond, while_loop and scan. The oracle is NumPy doing
the same steps on np arrays (it decides view or copy: a reshape NumPy copies is a copy here too)."""
import itertools
import threading

import numpy as np
import pytest

import array_namespace as xp
import transforms as T

ROOT = np.arange(24.0).reshape(4, 6)


def _ns(a):
    return np if isinstance(a, np.ndarray) else xp


# (name, applies to shape, step): each step works on our Arrays and on np arrays alike
STEPS = {
    "slice": (lambda s: len(s) >= 1, lambda a: a[1:3]),
    "step": (lambda s: len(s) >= 1, lambda a: a[::2]),
    "neg": (lambda s: len(s) >= 1, lambda a: a[..., ::-2]),
    "int": (lambda s: len(s) >= 2 and s[0] >= 2, lambda a: a[1]),
    "T": (lambda s: len(s) >= 2, lambda a: _ns(a).permute_dims(a, tuple(range(a.ndim))[::-1])
          if _ns(a) is xp else np.transpose(a)),
    "flip": (lambda s: len(s) >= 1, lambda a: _ns(a).flip(a, axis=0)),
    "expand": (lambda s: len(s) <= 3, lambda a: _ns(a).expand_dims(a, axis=0)),
    "moveaxis": (lambda s: len(s) >= 2, lambda a: _ns(a).moveaxis(a, 0, -1)),
    "flat": (lambda s: True, lambda a: _ns(a).reshape(a, (-1,))),
    "rows2": (lambda s: int(np.prod(s)) % 2 == 0 and int(np.prod(s)) > 0, lambda a: _ns(a).reshape(a, (2, -1))),
}


def _chains():
    names = list(STEPS)
    out = [(n,) for n in names] + list(itertools.product(names, names))
    triples = list(itertools.product(names, names, names))
    out += triples[::37]   # a deterministic spread of 27 triples
    ok = []
    for ch in out:
        shape = ROOT.shape
        good = True
        for n in ch:
            if not STEPS[n][0](shape):
                good = False
                break
            shape = STEPS[n][1](np.empty(shape)).shape
        if good and 0 not in shape:
            ok.append(ch)
    return ok


CHAINS = _chains()
SOME = [ch for i, ch in enumerate(CHAINS) if len(ch) == 1 or i % 7 == 0]   # the transforms' share


def _apply(a, chain):
    views = [a]
    for n in chain:
        views.append(STEPS[n][1](views[-1]))
    return views


def _write(v, kind):
    """One in-place write into view v (the same statement for np and ours)."""
    ns = _ns(v)
    if kind == "scalar":
        v[(0,) * v.ndim] = -100.0
    elif kind == "array":
        v[...] = ns.reshape(ns.arange(v.size, dtype=ns.float64), v.shape) * -1.0 - 0.5
    elif kind == "slice":
        if v.ndim:
            v[:1] = 7.0
        else:
            v[...] = 7.0
    elif kind == "mask":
        v[v > 5.0] = 0.0
    elif kind == "iadd":
        v += 1000.0
    elif kind == "imul":
        v *= -2.0
    return v


KINDS = ["scalar", "array", "slice", "mask", "iadd", "imul"]
# the transforms' cases: each chain of SOME with write kinds in turn (every kind meets every transform)
ONE_KIND = [(ch, KINDS[i % len(KINDS)]) for i, ch in enumerate(SOME)]
TWO_KINDS = ONE_KIND + [(ch, KINDS[(i + 3) % len(KINDS)]) for i, ch in enumerate(SOME)]


def _sibling(a):
    return a[1:3, 2:5] if a.ndim == 2 else a[2:5]


def _np_case(chain, kind, root=ROOT):
    r = root.copy()
    sib = _sibling(r)
    views = _apply(r, chain)
    _write(views[-1], kind)
    return [r, sib] + views[1:]


def _assert_all(got, want, what):
    for i, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w), err_msg=f"{what}: array {i} (0 root, 1 sibling, "
                                      "2.. the chain's views)")


def _ids(cases):
    return ["-".join(c) for c in cases]


def _kind_ids(cases):
    return ["-".join(c) + ":" + k for c, k in cases]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("chain", CHAINS, ids=_ids(CHAINS))
def test_eager_writes_through_view_chains_as_numpy(chain, kind):
    r = xp.asarray(ROOT)
    sib = _sibling(r)
    views = _apply(r, chain)
    _write(views[-1], kind)
    _assert_all([r, sib] + views[1:], _np_case(chain, kind), f"{chain} {kind}")


@pytest.mark.parametrize("chain,kind", TWO_KINDS, ids=_kind_ids(TWO_KINDS))
def test_jit_writes_through_views_of_an_argument_reach_the_caller(chain, kind):
    def f(a):
        views = _apply(a, chain)
        _write(views[-1], kind)
        return [v * 1.0 for v in views]
    r = xp.asarray(ROOT)
    sib = _sibling(r)
    outs = T.jit(f)(r)
    want = _np_case(chain, kind)
    _assert_all([r, sib], want[:2], f"jit {chain} {kind} caller")
    _assert_all(outs, [want[0]] + want[2:], f"jit {chain} {kind} outputs")


@pytest.mark.parametrize("chain", SOME, ids=_ids(SOME))
def test_grad_through_writes_into_views(chain):
    def f(a):
        a = a * 1.0
        v = _apply(a, chain)[-1]
        v *= 3.0
        v += 1.0
        return xp.sum(a * a)

    def f_np(a):
        r = a.copy()
        v = _apply(r, chain)[-1]
        v *= 3.0
        v += 1.0
        return float(np.sum(r * r))
    r = xp.asarray(ROOT)
    val, g = T.value_and_grad(f)(r)
    assert float(val) == f_np(ROOT.copy())
    fd = np.zeros(ROOT.shape)
    for i in np.ndindex(ROOT.shape):
        e = np.zeros(ROOT.shape)
        e[i] = 0.5
        fd[i] = (f_np(ROOT + e) - f_np(ROOT - e)) / 1.0   # quadratic: central differences are exact
    np.testing.assert_allclose(np.asarray(g), fd, rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("chain,kind", ONE_KIND, ids=_kind_ids(ONE_KIND))
def test_vmap_writes_through_views_of_the_mapped_argument(chain, kind):
    def f(a):
        v = _apply(a, chain)[-1]
        _write(v, kind)
        return a * 1.0
    b = xp.asarray(np.stack([ROOT, -ROOT]))
    out = T.vmap(f)(b)
    want = np.stack([_np_case(chain, kind, ROOT)[0], _np_case(chain, kind, -ROOT)[0]])
    np.testing.assert_array_equal(np.asarray(out), want)
    np.testing.assert_array_equal(np.asarray(b), want)   # the write reaches the caller's array, as eagerly


@pytest.mark.parametrize("chain,kind", ONE_KIND, ids=_kind_ids(ONE_KIND))
def test_cond_branch_writes_through_views_of_its_operand(chain, kind):
    def branch(a):
        _write(_apply(a, chain)[-1], kind)
        return a * 1.0
    r = xp.asarray(ROOT)
    out = T.cond(True, branch, lambda a: a * 1.0, r)
    want = _np_case(chain, kind)[0]
    np.testing.assert_array_equal(np.asarray(out), want)
    np.testing.assert_array_equal(np.asarray(r), want)   # the operand was written, as eagerly
    r2 = xp.asarray(ROOT)
    T.cond(False, branch, lambda a: a * 1.0, r2)
    np.testing.assert_array_equal(np.asarray(r2), ROOT)


@pytest.mark.parametrize("loop", ["while", "scan"])
@pytest.mark.parametrize("chain,kind", ONE_KIND, ids=_kind_ids(ONE_KIND))
def test_loop_bodies_write_through_views_of_the_carry(chain, kind, loop):
    def body(a):
        _write(_apply(a, chain)[-1], kind)
        return a
    r = xp.asarray(ROOT)
    if loop == "while":
        out = T.while_loop(lambda c: c[0] < 1, lambda c: (c[0] + 1, body(c[1])), (0, r))[1]
    else:
        out = T.scan(lambda c, _: (body(c), None), r, None, length=1)[0]
    np.testing.assert_array_equal(np.asarray(out), _np_case(chain, kind)[0])


# ---------------------------------------------------------------- the cases, one by one

def test_a_write_into_a_reshape_of_a_slice_reaches_the_slice_and_the_root():
    x = xp.arange(24.0)
    y = x[0:12]
    z = xp.reshape(y, (3, 4))
    z[1, 1] = -100
    assert float(x[5]) == -100.0 and float(y[5]) == -100.0


def test_a_write_into_a_reshape_of_a_reshape_reaches_the_root():
    x = xp.arange(24.0)
    z = xp.reshape(xp.reshape(x, (4, 6)), (6, 4))
    z += 1000
    np.testing.assert_array_equal(np.asarray(x), np.arange(24.0) + 1000)


def test_a_reshape_numpy_must_copy_is_a_copy_and_copy_false_raises():
    x = xp.reshape(xp.arange(24.0), (4, 6))
    c = xp.reshape(x.T, (-1,))
    c[0] = 1000.0
    assert float(x[0, 0]) == 0.0
    with pytest.raises(ValueError, match="reshape"):
        xp.reshape(x.T, (-1,), copy=False)
    s = xp.reshape(x[:, ::2], (2, 6))   # NumPy: a view (the strides combine)
    s[0, 0] = -1.0
    n = np.arange(24.0).reshape(4, 6)
    ns = n[:, ::2].reshape(2, 6)
    ns[0, 0] = -1.0
    np.testing.assert_array_equal(np.asarray(x), n)


def test_reading_a_view_after_its_parent_changed_sees_the_new_data():
    x = xp.asarray(ROOT)
    r, t = x[0], x.T
    x[0, 1] = 50.0
    assert float(r[1]) == 50.0 and float(t[1, 0]) == 50.0
    r += 1
    want = ROOT.copy()
    want[0, 1] = 50.0
    want[0] += 1
    np.testing.assert_array_equal(np.asarray(x), want)
    np.testing.assert_array_equal(np.asarray(t), want.T)


def test_jit_of_a_view_and_its_parent_behaves_as_eagerly():
    def g(a, b):
        a[0] = 100.0
        b[3] = -1.0
        return xp.sum(b), a * 1.0
    results = []
    for run in (g, T.jit(g)):
        x = xp.arange(4.0)
        y = x[1:3]
        s, a = run(y, x)
        results.append((float(s), np.asarray(a), np.asarray(x), np.asarray(y)))
    (s0, a0, x0, y0), (s1, a1, x1, y1) = results
    np.testing.assert_array_equal(x0, [0.0, 100.0, 2.0, -1.0])
    assert s0 == s1 == 101.0
    for e, j in ((a0, a1), (x0, x1), (y0, y1)):
        np.testing.assert_array_equal(j, e)


def test_cond_writes_into_its_operand_reach_the_caller():
    x = xp.arange(3.0)
    out = T.cond(True, lambda a: (a.__setitem__(0, 5.0), a * 1.0)[1], lambda a: a * 1.0, x)
    np.testing.assert_array_equal(np.asarray(x), [5.0, 1.0, 2.0])
    np.testing.assert_array_equal(np.asarray(out), [5.0, 1.0, 2.0])
    y = xp.arange(3.0)
    T.switch(1, [lambda a: a * 1.0, lambda a: (a.__setitem__(2, -1.0), a * 1.0)[1]], y)
    np.testing.assert_array_equal(np.asarray(y), [0.0, 1.0, -1.0])


def test_threads_writing_reshapes_of_disjoint_slices_lose_nothing():
    x = xp.zeros(32)

    def work(t):
        for _ in range(20):
            v = xp.reshape(x[t * 4:(t + 1) * 4], (2, 2))
            v += 1
    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    np.testing.assert_array_equal(np.asarray(x), np.full(32, 20.0))


def test_jit_keys_its_cache_on_which_views_are_passed():
    def g(a, b):
        a[0] = 100.0
        return xp.sum(b)
    f = T.jit(g)
    for lo in (1, 0, 1):
        x, n = xp.arange(4.0), np.arange(4.0)
        n[lo] = 100.0
        assert float(f(x[lo:lo + 2], x)) == n.sum()
        np.testing.assert_array_equal(np.asarray(x), n)


def test_overlapping_views_a_transform_holds_apart_raise_naming_both():
    def g(a, b):
        a[0] = 100.0
        return xp.sum(b)
    x = xp.arange(6.0)
    with pytest.raises(ValueError, match=r"leaf 0 is r\[0:3\], leaf 1 is r\[2:6\]"):
        T.jit(g)(x[0:3], x[2:6])
    np.testing.assert_array_equal(np.asarray(x), np.arange(6.0))   # nothing written
    T.jit(g)(x[0:2], x[2:6])                                      # disjoint: no sharing to lose
    np.testing.assert_array_equal(np.asarray(x), [100.0, 1, 2, 3, 4, 5])
    b = xp.reshape(xp.arange(8.0), (2, 4))
    with pytest.raises(ValueError, match="vmap: the function writes into argument leaf 0"):
        T.vmap(g)(b[:, 1:3], b)
    np.testing.assert_array_equal(np.asarray(b), np.arange(8.0).reshape(2, 4))


def test_grad_of_a_view_and_its_parent():
    def g(a, b):
        a[0] = 100.0
        b[3] = -1.0
        return xp.sum(b * b * b)
    x = xp.arange(4.0)
    val, gb = T.value_and_grad(g, argnums=1)(x[1:3], x)   # the view goes in with its parent
    assert float(val) == 1e6 + 8 - 1
    np.testing.assert_array_equal(np.asarray(x), [0.0, 100.0, 2.0, -1.0])
    np.testing.assert_array_equal(np.asarray(gb), [0.0, 0.0, 12.0, 0.0])   # d/db of b**3 where b survives
    x = xp.arange(4.0)
    with pytest.raises(ValueError, match=r"args\[0\] is a view of args\[1\].*Differentiate with respect to args\[1\]"):
        T.grad(g)(x[1:3], x)                # the view's own derivative would be lost: raise
    with pytest.raises(ValueError, match="grad: the function writes into argument leaf 1"):
        T.grad(lambda w, a, b: g(a, b) * w)(2.0, x[1:3], x)   # both held apart (not differentiated)
    np.testing.assert_array_equal(np.asarray(x), np.arange(4.0))
    with pytest.raises(ValueError, match="jvp: the function writes into primal leaf 0"):
        T.jvp(g, (x[1:3], x), (xp.ones(2), xp.ones(4)))
    y, t = T.jvp(lambda a, b: xp.sum(a) * xp.sum(b), (x[1:3], x), (xp.ones(2), xp.zeros(4)))   # no write:
    assert float(y) == 18.0 and float(t) == 12.0                                            # independent


def test_cond_of_a_view_and_its_parent_behaves_as_eagerly():
    def br(a, b):
        a[0] = 100.0
        b[3] = -1.0
        return xp.sum(b)
    x = xp.arange(4.0)
    s = T.cond(True, br, lambda a, b: xp.sum(b), x[1:3], x)
    assert float(s) == 101.0
    np.testing.assert_array_equal(np.asarray(x), [0.0, 100.0, 2.0, -1.0])


def test_element_writes_into_a_view_reach_the_root_and_spare_every_other_holder():
    # sklearn's _add_to_diagonal: a[i, i] = d[i] on a = c[k]; the view's own value is written in its memory
    # (only it holds it), and nothing else that refers to memory -- an export, a transpose of the view, an
    # Array sharing the view's value, a sibling view -- may change but as NumPy's views do
    rng = np.random.default_rng(3)
    ref = rng.standard_normal((3, 5, 5))
    c = xp.asarray(ref)
    a, sib = c[1], c[2]
    exported = np.asarray(a)                 # a read-only export taken before the writes
    before = exported.copy()
    t = xp.permute_dims(a, (1, 0))           # a view of the view
    d = xp.linalg.diagonal(a) + 1.0
    for i in range(5):
        a[i, i] = d[i]
    want = ref.copy()
    want[1][np.diag_indices(5)] += 1.0
    np.testing.assert_array_equal(np.asarray(c), want)
    np.testing.assert_array_equal(np.asarray(a), want[1])
    np.testing.assert_array_equal(np.asarray(t), want[1].T)
    np.testing.assert_array_equal(np.asarray(sib), want[2])
    np.testing.assert_array_equal(exported, before)
    shared = xp.asarray(a, copy=False)       # the same handle: writes show through it, as in NumPy
    a[0, 1] = 7.0
    assert float(shared[0, 1]) == 7.0 and float(c[1, 0, 1]) == 7.0
    other = a[...]                           # another view holding a's value: it follows a's writes
    kept = xp.asarray(a, copy=True)          # a copy: it does not
    a[2, 3] = -4.0
    assert float(other[2, 3]) == -4.0 and float(c[1, 2, 3]) == -4.0
    assert float(kept[2, 3]) == want[1][2, 3]


def _basic_keys(draw, shape, st):
    """A tuple of ints (in range) and slices (any start, stop, step but 0), one per leading dim of `shape`."""
    n = draw(st.integers(0, len(shape)))
    key = []
    for d in shape[:n]:
        if d and draw(st.booleans()):
            key.append(draw(st.integers(-d, d - 1)))
        else:
            b = st.one_of(st.none(), st.integers(-d - 2, d + 2))
            key.append(slice(draw(b), draw(b), draw(st.one_of(st.none(), st.integers(-3, 3).filter(bool)))))
    return tuple(key) if len(key) != 1 or draw(st.booleans()) else key[0]


def _data(a):
    """The address of the memory an eager Array's host value reads (white-box: where its elements live)."""
    return a._v.np.__array_interface__["data"][0]


def test_a_write_into_a_view_goes_into_the_memory_its_family_shares_as_numpy():
    """Eagerly a basic-index view is NumPy's view of its parent's memory, and a write through it goes into that
    memory (_views.write_eager: the cost of what is written, no copy): the root keeps its memory, the view and a
    flipped sibling read it, and all three equal NumPy's after the write."""
    from hypothesis import assume, given, settings, strategies as st

    @settings(max_examples=300, deadline=None, derandomize=True)
    @given(st.data())
    def check(data):
        shape = tuple(data.draw(st.lists(st.integers(0, 5), min_size=1, max_size=3)))
        root = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
        arg = _basic_keys(data.draw, shape, st)
        t = arg if type(arg) is tuple else (arg,)
        assume(len(t) < len(shape) or any(type(e) is slice for e in t))   # (one element is a copy, not a view)
        r, ours = root.copy(), xp.asarray(root)
        v, ov = r[arg], ours[arg]
        sib = ours[..., ::-1]
        key = _basic_keys(data.draw, v.shape, st)
        at = _data(ours)
        v[key] = -1.0 - np.arange(v[key].size).reshape(v[key].shape)
        ov[key] = xp.asarray(-1.0 - np.arange(v[key].size).reshape(v[key].shape))
        for got, want in ((ours, r), (ov, v), (sib, r[..., ::-1])):
            np.testing.assert_array_equal(np.asarray(got), want)
        if r.size:
            assert _data(ours) == at   # written in place: nothing else referred to the family's memory
            assert np.shares_memory(ov._v.np, ours._v.np) or ov.size == 0
            assert np.shares_memory(sib._v.np, ours._v.np)
    check()


def test_a_loop_of_writes_through_a_view_stays_in_one_memory():
    """scikit-learn's _add_to_diagonal (array[i, i] = value[i] on array = covariances[k]): each write costs an
    element, not a copy of the root or the view (before: two writes and a walk of the family per element)."""
    c = xp.zeros((3, 40, 40))
    at = _data(c)
    for k in range(3):
        a = c[k, :, :]
        d = xp.linalg.diagonal(a) + float(k + 1)
        for i in range(40):
            a[i, i] = d[i]
        assert _data(c) == at and np.shares_memory(a._v.np, c._v.np)
    want = np.zeros((3, 40, 40))
    for k in range(3):
        np.fill_diagonal(want[k], k + 1.0)
    np.testing.assert_array_equal(np.asarray(c), want)


@pytest.mark.parametrize("holder", ["export", "dlpack", "alias", "jit", "broadcast", "value"])
@pytest.mark.parametrize("via", ["root", "view"])
def test_a_family_written_while_something_else_refers_to_its_memory_copies_first(holder, via):
    """Whatever else refers to a view family's memory -- a NumPy export, a DLPack capsule's array, an Array
    sharing a view's value, the device buffer a jitted call read, a kernel's result viewing the memory, the
    written value itself -- keeps the values it had: the family's memory is copied before the write (each
    array then a view of the copy), and every array of the family follows the write as NumPy's views do."""
    ref = np.arange(30.0).reshape(5, 6)
    c = xp.asarray(ref)
    a, t = c[1:4, ::2], c.mT[2]            # a slice and a row of a transpose (a view of a view)
    n = ref.copy()
    na, nt = n[1:4, ::2], n.T[2]
    keep, want_kept = None, None
    if holder == "export":
        keep, want_kept = np.asarray(a), ref[1:4, ::2].copy()
    elif holder == "dlpack":
        keep, want_kept = np.from_dlpack(c), ref.copy()
    elif holder == "alias":
        keep, want_kept = a._v, ref[1:4, ::2].copy()
    elif holder == "jit":
        f = T.jit(lambda x: x * 2.0)
        np.testing.assert_array_equal(np.asarray(f(c)), ref * 2.0)
    elif holder == "broadcast":
        keep, want_kept = xp.broadcast_to(c, (2, 5, 6)), np.broadcast_to(ref, (2, 5, 6)).copy()
    target, ntarget = (c, n) if via == "root" else (a, na)
    if holder == "value":   # the written value is a view of the family itself
        target[0] = c[4, :target.shape[1]]
        ntarget[0] = n[4, :ntarget.shape[1]]
    else:
        target[0] = -1.0
        ntarget[0] = -1.0
    target[1:] += 100.0
    ntarget[1:] += 100.0
    for got, want in ((c, n), (a, na), (t, nt)):
        np.testing.assert_array_equal(np.asarray(got), want)
    if holder == "alias":
        keep = np.asarray(keep)
    if keep is not None:
        np.testing.assert_array_equal(np.asarray(keep), want_kept)
    if holder == "jit":
        np.testing.assert_array_equal(np.asarray(f(c)), n * 2.0)   # the call reads the written values
    assert np.shares_memory(a._v.np, c._v.np) and np.shares_memory(t._v.np, c._v.np)


def test_families_of_every_view_kind_end_in_one_memory():
    """A family whose views were computed apart (a transpose, a flip, a reshape, expand_dims: their kernels'
    results) is copied into one memory by its first write; later writes go into it, and all arrays equal NumPy's."""
    n = np.arange(24.0).reshape(4, 6)
    c = xp.asarray(n)
    ours = [c, xp.permute_dims(c, (1, 0)), xp.flip(c, axis=1), xp.reshape(c, (2, 12)), xp.expand_dims(c[1], axis=0),
            c.mT[::-1, 1:]]
    ns = [n, n.T, np.flip(n, axis=1), n.reshape(2, 12), np.expand_dims(n[1], 0), n.T[::-1, 1:]]
    for step, k in enumerate([1, 2, 3, 4, 5, 0, 3, 1]):
        ns[k][(0,) * (ns[k].ndim - 1)] = -step - 1.0
        ours[k][(0,) * (ns[k].ndim - 1)] = -step - 1.0
        for i, (p, q) in enumerate(zip(ns, ours)):
            np.testing.assert_array_equal(np.asarray(q), p, err_msg=f"step {step}: array {i} after writing {k}")
        if step == 0:
            at = _data(c)
        assert _data(c) == at and all(np.shares_memory(q._v.np, c._v.np) for q in ours)


def test_key_classifiers_decide_view_or_copy_as_numpy():
    """Basic keys (ints, slices, None, Ellipsis; no bools or NumPy ints) make a view unless ints pick one element
    (a copy, as NumPy's scalar): the classifiers against NumPy's own answer (does a[key] share a's memory)."""
    from array_namespace._views import _is_basic_key, selects_one_element
    a = np.arange(24.0).reshape(2, 3, 4)
    keys = [(), 1, (1, 2), (1, 2, 3), (1, slice(None)), (None,), (Ellipsis, None), slice(1), None, Ellipsis,
            (0, Ellipsis, 1), (slice(None), 1, slice(0, 2))]
    for key in keys:
        assert _is_basic_key(key), key
        one = selects_one_element(key) and (1 if type(key) is int else len(key)) == a.ndim
        assert one == (not isinstance(a[key], np.ndarray)), key   # (NumPy: a scalar exactly there)
        assert one or np.shares_memory(a[key], a), key
        got = xp.asarray(a)[key]
        np.testing.assert_array_equal(np.asarray(got), a[key])
    for key in ([1], (np.int64(1),), (True,), 3.0, (1, [0, 1])):
        assert not _is_basic_key(key) and not selects_one_element(key), key


@pytest.mark.parametrize("bound", [lambda n: xp.asarray(n), lambda n: xp.asarray(n, dtype=xp.int32), np.int64])
def test_slice_bounds_given_as_arrays_or_numpy_ints_read_and_write_as_numpy_views(bound):
    """x[:n] with n a 0-d integer Array (LDA's Vt[:rank], rank = xp.sum(...)) or a NumPy integer is NumPy's basic
    indexing: the same elements, a view both ways, eagerly on the backend's basic path (as with Python ints)."""
    want, got = ROOT.copy(), xp.asarray(ROOT)
    vn, vx = want[bound(1):bound(4):bound(2), :bound(-1)], got[bound(1):bound(4):bound(2), :bound(-1)]
    assert np.asarray(vx).tolist() == vn.tolist()
    vn[0, 0] = vx[0, 0] = -7.0
    got[3, 1] = want[3, 1] = 99.0
    assert np.asarray(got).tolist() == want.tolist() and np.asarray(vx).tolist() == vn.tolist()


@pytest.mark.parametrize("bad", [lambda: xp.asarray(True), lambda: xp.asarray(1.5), lambda: xp.asarray([1, 2])])
def test_slice_bounds_that_are_not_integer_scalars_raise_type_error(bad):
    with pytest.raises(TypeError, match="only 0-d integer arrays can be used as an index"):
        xp.asarray(ROOT)[:bad()]
