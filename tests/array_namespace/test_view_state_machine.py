"""Random sequences of views, writes, in-place operators, exports, copies and deletions, eagerly, against NumPy.

The fixed chains of test_view_writes.py check each view kind; here hypothesis's state machine interleaves them as
library code does: views of views of dead views, a write while an export or a sibling is held, `x op= y` on a
view, an array dropped and collected mid-way. The oracle is NumPy doing the same steps on a mirror of every array
(NumPy's own views, so it decides which arrays share data); an export (np.asarray) is a snapshot here, so it must
keep the values it was taken with whatever is written afterwards (our arrays are values; NumPy's would follow).
After every step every live array equals its mirror and every export its snapshot. The second test runs such
steps as one program, eagerly, under jit and under vmap, against NumPy.
"""
import gc

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, consumes, invariant, rule

import array_namespace as xp
from transforms import jit, vmap

_DT = {"float64": (xp.float64, np.float64), "int64": (xp.int64, np.int64)}


def _basic_key(draw, shape):
    """ints in range and slices (any bounds, nonzero step) on leading dims, maybe an Ellipsis or a None."""
    key = []
    for d in shape[:draw(st.integers(0, len(shape)))]:
        if d and draw(st.booleans()):
            key.append(draw(st.integers(-d, d - 1)))
        else:
            b = st.one_of(st.none(), st.integers(-d - 2, d + 2))
            key.append(slice(draw(b), draw(b), draw(st.one_of(st.none(), st.integers(-3, 3).filter(bool)))))
    extra = draw(st.sampled_from(["", "ellipsis", "none"]))
    if extra == "ellipsis":
        key.append(Ellipsis)
    elif extra == "none":
        key.insert(draw(st.integers(0, len(key))), None)
    return tuple(key) if len(key) != 1 or draw(st.booleans()) else key[0]


def _scale(v):
    v *= 2   # (a jitted function writing into its argument: the write reaches the caller's array and its family)


_jit_scale = jit(_scale)


def _one_element(key, ndim):
    t = key if type(key) is tuple else (key,)
    return all(type(k) is int for k in t) and len(t) == ndim


class Views(RuleBasedStateMachine):
    pairs = Bundle("pairs")

    def __init__(self):
        super().__init__()
        self.live = []        # (ours, mirror) of every array held
        self.exports = []     # (np.asarray(ours) taken then, its values then)
        self.fill = 0.0

    def _values(self, shape, dt):
        n = int(np.prod(shape))
        self.fill += 1000.0
        return (self.fill + np.arange(n)).astype(dt).reshape(shape)

    def _add(self, ours, mirror):
        assert ours.shape == mirror.shape, (ours.shape, mirror.shape)
        self.live.append((ours, mirror))
        return len(self.live) - 1

    @rule(target=pairs, shape=st.lists(st.integers(0, 4), min_size=0, max_size=3), dt=st.sampled_from(list(_DT)))
    def root(self, shape, dt):
        m = self._values(tuple(shape), _DT[dt][1])
        return self._add(xp.asarray(m, dtype=_DT[dt][0]), m.copy())

    @rule(target=pairs, i=pairs, data=st.data())
    def index(self, i, data):
        a, m = self.live[i]
        key = _basic_key(data.draw, m.shape)
        if _one_element(key, m.ndim):   # (NumPy: a scalar copy; ours: a 0-d copy)
            return self._add(a[key], np.array(m[key]))
        return self._add(a[key], m[key])

    @rule(target=pairs, i=pairs, data=st.data())
    def reshape_view(self, i, data):
        a, m = self.live[i]
        shapes = [[m.size], [1, m.size], [m.size, 1], list(m.shape[::-1]), [-1]]
        if m.ndim >= 2:
            shapes.append([m.shape[0] * m.shape[1], *m.shape[2:]])
        new = data.draw(st.sampled_from(shapes))
        try:
            mv = m.reshape(new, copy=False)   # (NumPy decides: a view where it can, else a copy)
        except ValueError:
            mv = m.reshape(new).copy()
        return self._add(xp.reshape(a, tuple(new)), mv)

    @rule(target=pairs, i=pairs, data=st.data())
    def permute(self, i, data):
        a, m = self.live[i]
        perm = data.draw(st.permutations(range(m.ndim)))
        if data.draw(st.booleans()) and m.ndim == 2:
            return self._add(a.T, m.T)
        return self._add(xp.permute_dims(a, tuple(perm)), np.transpose(m, perm))

    @rule(target=pairs, i=pairs, data=st.data())
    def flip_expand_squeeze(self, i, data):
        a, m = self.live[i]
        what = data.draw(st.sampled_from(["flip", "expand", "squeeze", "moveaxis"]))
        if what == "flip" and m.ndim:
            ax = data.draw(st.integers(0, m.ndim - 1))
            return self._add(xp.flip(a, axis=ax), np.flip(m, axis=ax))
        if what == "squeeze" and 1 in m.shape:
            ax = m.shape.index(1)
            return self._add(xp.squeeze(a, axis=ax), np.squeeze(m, axis=ax))
        if what == "moveaxis" and m.ndim:
            s, d = data.draw(st.integers(0, m.ndim - 1)), data.draw(st.integers(0, m.ndim - 1))
            return self._add(xp.moveaxis(a, s, d), np.moveaxis(m, s, d))
        ax = data.draw(st.integers(0, m.ndim))
        return self._add(xp.expand_dims(a, axis=ax), np.expand_dims(m, ax))

    @rule(i=pairs, data=st.data())
    def write(self, i, data):
        a, m = self.live[i]
        key = _basic_key(data.draw, m.shape)
        if None in (key if type(key) is tuple else (key,)):
            return
        sel = m[key]
        how = data.draw(st.sampled_from(["array", "scalar", "python"]))
        if how == "array":
            v = self._values(np.shape(sel), m.dtype)
            a[key] = xp.asarray(v, dtype=a.dtype)
        else:
            self.fill += 1.0
            v = m.dtype.type(self.fill)
            a[key] = xp.asarray(v, dtype=a.dtype) if how == "scalar" else v.item()
        m[key] = v

    @rule(i=pairs, data=st.data())
    def in_place(self, i, data):
        a, m = self.live[i]
        op = data.draw(st.sampled_from(["+=", "*=", "-="]))
        other = data.draw(st.sampled_from(["scalar", "array", "view"]))
        if other == "scalar":
            o, om = 3, 3
        else:
            om = self._values(m.shape[1:] if m.ndim and data.draw(st.booleans()) else m.shape, m.dtype) % 7
            o = xp.asarray(om, dtype=a.dtype)
            if other == "view" and m.ndim and m.shape[0]:   # (the operand a view of the same family: NumPy reads it first)
                o, om = a[0], m[0].copy()
        if op == "+=":
            a += o
            m += om
        elif op == "*=":
            a *= o
            m *= om
        else:
            a -= o
            m -= om

    @rule(i=pairs, how=st.sampled_from(["asarray", "dlpack"]))
    def export(self, i, how):
        a, m = self.live[i]   # (DLPack shares the family's memory, read-only: a later write copies it first)
        self.exports.append((np.asarray(a) if how == "asarray" else np.from_dlpack(a), m.copy()))

    @rule(i=pairs)
    def jit_write(self, i):
        a, m = self.live[i]
        _jit_scale(a)
        m *= 2

    @rule(target=pairs, i=pairs)
    def alias(self, i):
        a, m = self.live[i]
        return self._add(xp.asarray(a), m)   # (the same array: a write into either is a write into both)

    @rule(target=pairs, i=pairs)
    def copy(self, i):
        a, m = self.live[i]
        return self._add(xp.asarray(a, copy=True), m.copy())

    @rule(i=consumes(pairs))
    def drop(self, i):
        self.live[i] = None   # (the arrays die: their family's weak lists and memory must not care)
        gc.collect(1)   # (the young generations, where its cycles are: a full collection costs ~80 ms a step
        #                  once earlier tests' caches hold ~650k objects, 60 of the suite's seconds)

    @invariant()
    def every_array_equals_numpy(self):
        for p in self.live:
            if p is not None:
                a, m = p
                assert a.dtype == _DT[m.dtype.name][0] and a.shape == m.shape
                np.testing.assert_array_equal(np.asarray(a), m)
        for got, want in self.exports:
            np.testing.assert_array_equal(got, want)

    def teardown(self):
        self.live.clear()


Views.TestCase.settings = settings(max_examples=50, stateful_step_count=30, deadline=None, derandomize=True)
test_views_writes_exports_and_deletions_in_any_order_equal_numpy = pytest.mark.slow(Views.TestCase)


# ---------------------------------------------------------------- the same steps as one program, under jit and vmap
def _ns(a):
    return np if isinstance(a, np.ndarray) else xp


def _apply(step, arrs):
    kind, i, arg = step
    a = arrs[i]
    ns = _ns(a)
    if kind == "index":
        if _one_element(arg, a.ndim) and ns is np:
            arrs.append(np.array(a[arg]))
        else:
            arrs.append(a[arg])
    elif kind == "reshape":
        if ns is np:
            try:
                arrs.append(a.reshape(arg, copy=False))
            except ValueError:
                arrs.append(a.reshape(arg).copy())
        else:
            arrs.append(xp.reshape(a, arg))
    elif kind == "perm":
        arrs.append(np.transpose(a, arg) if ns is np else xp.permute_dims(a, arg))
    elif kind == "flip":
        arrs.append(ns.flip(a, axis=arg))
    elif kind == "expand":
        arrs.append(np.expand_dims(a, arg) if ns is np else xp.expand_dims(a, axis=arg))
    elif kind == "write":
        key, vals = arg
        a[key] = vals if ns is np else xp.asarray(vals)
    elif kind == "iadd":
        a += arg
    elif kind == "iadd_view":
        if ns is np:
            a += a[0].copy()
        else:
            a += a[0]


def _draw_program(data, shape, n):
    root = np.arange(float(np.prod(shape))).reshape(shape)
    arrs = [root.copy()]
    steps = []
    for s in range(n):
        i = data.draw(st.integers(0, len(arrs) - 1))
        a = arrs[i]
        kind = data.draw(st.sampled_from(["index", "reshape", "perm", "flip", "expand", "write", "write", "iadd", "iadd_view"]))
        if kind == "index":
            arg = _basic_key(data.draw, a.shape)
        elif kind == "reshape":
            cands = [(a.size,), (1, a.size), tuple(a.shape[::-1])]
            if a.ndim >= 2:
                cands.append((a.shape[0] * a.shape[1],) + a.shape[2:])
            arg = data.draw(st.sampled_from(cands))
        elif kind == "perm":
            arg = tuple(data.draw(st.permutations(range(a.ndim))))
        elif kind == "flip":
            if not a.ndim:
                continue
            arg = data.draw(st.integers(0, a.ndim - 1))
        elif kind == "expand":
            arg = data.draw(st.integers(0, a.ndim))
        elif kind == "write":
            key = _basic_key(data.draw, a.shape)
            if None in (key if type(key) is tuple else (key,)):
                continue
            arg = (key, 1000.0 * (s + 1) + np.arange(np.size(a[key]), dtype=np.float64).reshape(np.shape(a[key])))
        elif kind == "iadd":
            arg = float(s + 1)
        else:
            if not (a.ndim and a.shape[0]):
                continue
            arg = None
        step = (kind, i, arg)
        _apply(step, arrs)
        steps.append(step)
    return root, steps, arrs


def _run_ours(steps, x):
    arrs = [x]
    for st_ in steps:
        _apply(st_, arrs)
    return arrs


@pytest.mark.slow
@settings(max_examples=15, deadline=None, derandomize=True)
@given(st.data(), st.lists(st.integers(1, 4), min_size=1, max_size=3), st.integers(1, 12))
def test_random_view_programs_under_jit_and_vmap_equal_numpy(data, shape, n):
    """A random program of views and writes (drawn while NumPy runs it) run eagerly, as one jitted function of
    its root (every array it made returned; its writes into the root reach the caller) and under vmap over two
    roots (a loop of NumPy runs): each equals NumPy's arrays (500 random programs found nothing)."""
    root, steps, want = _draw_program(data, tuple(shape), n)
    # eager
    x = xp.asarray(root)
    got = _run_ours(steps, x)
    for k, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_array_equal(np.asarray(g), w, err_msg=f"eager array {k}; steps {steps}")
    # jit: every array returned; the caller's root written as the program wrote it
    x = xp.asarray(root)
    f = jit(lambda v: _run_ours(steps, v))
    got = f(x)
    for k, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_array_equal(np.asarray(g), w, err_msg=f"jit array {k}; steps {steps}")
    np.testing.assert_array_equal(np.asarray(x), want[0], err_msg=f"jit caller's root; steps {steps}")
    # vmap over the root and another root (the batch axis leading): a loop of NumPy runs is the oracle
    other = root + 0.5
    want2 = _run_ours(steps, other.copy())   # (NumPy arrays: NumPy runs the steps)
    xb = xp.asarray(np.stack([root, other]))
    got = vmap(lambda v: _run_ours(steps, v))(xb)
    for k, (g, w, w2) in enumerate(zip(got, want, want2)):
        np.testing.assert_array_equal(np.asarray(g), np.stack([w, w2]), err_msg=f"vmap array {k}; steps {steps}")
    np.testing.assert_array_equal(np.asarray(xb), np.stack([want[0], want2[0]]), err_msg=f"vmap root; steps {steps}")
