"""Runs of constant-position writes lowered as one scatter instead of one dynamic_update_slice each.

Why: library code written for NumPy updates arrays element by element in Python loops (scikit-learn's
`_add_to_diagonal` writes `a[i, i]` once per feature, on a view of one component's covariance). Under jit
each write is a dynamic_update_slice with literal starts, and XLA's CPU compiler builds one kernel per
such op (~10-35 ms of compile each): a 10-step GaussianMixture fit at 82 features staged 5,505 of them.
Here, before a jaxpr's ops are emitted, `plan` finds

- a write that the next write of its chain covers whole (`x2 = dus(dus(x0, u1, s), u2, s)`, the
  intermediate used nowhere else: a view's write-back puts the whole view back after each element
  write): not emitted, the later write goes into x0 (and what only it used is not emitted either);
- chains `x1 = dus(x0, u1, s1), x2 = dus(x1, u2, s2), ...` (literal starts, one update shape, every
  intermediate used only by the next write): lowered at the chain's last write as one scatter of the
  updates at constant indices.

Values are unchanged: the same elements get the same values (a window written twice keeps only its last
write; a write overlapping an earlier one of the chain in part starts a new chain).
"""
from __future__ import annotations

import functools
import itertools
from collections import Counter

import numpy as np

from transforms.core import not_foldable
from transforms.jaxpr import Literal, Var
from transforms.primitives import indexing as I
from transforms.primitives import structural as S

DUS = I.dynamic_update_slice_p


class Run:
    """Emitted at its chain's last write: x0's value with each (update var, starts) written in order.
    While `plan` grows it, `writes` is {starts: update var} (a window written again moves last) and `cells`
    files each window's starts by the cell of a grid of the update's size that holds them: a window meets
    only windows in its own or a neighbouring cell, so a chain of n writes is checked in O(n), not O(n^2)."""
    __slots__ = ("x0", "writes", "size", "cells")

    def __init__(self, x0, u, starts, size):
        self.x0, self.writes, self.size, self.cells = x0, {starts: u}, size, {}
        self._file(starts)

    def _cell(self, starts):
        return tuple(s // k for s, k in zip(starts, self.size))

    def _file(self, starts):
        if 0 not in self.size:   # (an empty window meets nothing)
            self.cells.setdefault(self._cell(starts), []).append(starts)

    def add(self, u, starts):
        """Write u at starts, or return False where the window meets another of the run's in part."""
        w = (starts, self.size)
        if 0 not in self.size:
            if 3 ** len(starts) > len(self.writes):   # (fewer windows than neighbouring cells: each of them)
                near = self.writes
            else:
                cell = self._cell(starts)
                near = itertools.chain.from_iterable(self.cells.get(tuple(c + d for c, d in zip(cell, dc)), ())
                                                     for dc in _neighbours(len(cell)))
            if any(s != starts and _meets((s, self.size), w) for s in near):
                return False
        if self.writes.pop(starts, None) is None:
            self._file(starts)
        self.writes[starts] = u
        return True


def _window(eqn):
    """(starts clamped as XLA clamps them, sizes) of a dynamic_update_slice with literal starts, else None."""
    x, u, *starts = eqn.invars
    if not all(type(s) is Literal for s in starts):
        return None
    shape, sizes = x.aval.shape, u.aval.shape
    return tuple(min(max(int(s.val), 0), n - k) for s, n, k in zip(starts, shape, sizes)), tuple(sizes)


def _covers(a, b):
    return all(sa <= sb and sb + kb <= sa + ka for sa, ka, sb, kb in zip(*a, *b))


def _meets(a, b):
    return all(sa < sb + kb and sb < sa + ka for sa, ka, sb, kb in zip(*a, *b))


@functools.lru_cache(maxsize=None)
def _neighbours(nd):
    return tuple(itertools.product((-1, 0, 1), repeat=nd))


def plan(jaxpr):
    """{eqn index: None (not emitted) or a Run emitted there}; empty when nothing merges."""
    eqns = jaxpr.eqns
    win = {i: w for i, e in enumerate(eqns) if e.prim is DUS and (w := _window(e)) is not None}
    if len(win) < 2:
        return {}
    uses = Counter(a for e in eqns for a in e.invars if type(a) is Var)
    uses.update(a for a in jaxpr.outvars if type(a) is Var)
    made_by = {e.outvars[0]: i for i, e in enumerate(eqns) if len(e.outvars) == 1}
    out, operand = {}, {i: eqns[i].invars[0] for i in win}

    def release(v):   # one use of v gone: an equation computing it for nobody else is not emitted
        todo = [v]
        while todo:
            v = todo.pop()
            uses[v] -= 1
            j = made_by.get(v)
            if uses[v] == 0 and j is not None and j not in out and eqns[j].prim not in not_foldable:
                out[j] = None
                todo.extend(a for a in eqns[j].invars if type(a) is Var)

    for i in win:   # writes the next write of their chain covers whole
        j = made_by.get(operand[i])
        if j in win and j not in out and uses[operand[i]] == 1 and _covers(win[i], win[j]):
            out[j] = None
            operand[i] = operand[j]
            release(eqns[j].invars[1])
    runs = {}   # a chain's last write -> the chain
    for i in win:   # chains of writes, each intermediate used only by the next write
        if i in out:
            continue
        x, u, w = operand[i], eqns[i].invars[1], win[i]
        j = made_by.get(x)
        run = runs.get(j)
        if run is not None and uses[x] == 1 and run.size == w[1] and run.add(u, w[0]):
            del runs[j]
            out[j] = None
            runs[i] = run
            continue
        runs[i] = Run(x, u, *w)
    for i, run in runs.items():
        run.writes = [(u, s) for s, u in run.writes.items()]
        if len(run.writes) > 1 or run.x0 is not eqns[i].invars[0]:
            out[i] = run
            for k, (u, s) in enumerate(run.writes):   # the updates as the values they reshape
                src = _unreshaped(u, eqns, made_by)
                if src is not u:
                    uses[src] += 1
                    release(u)
                    run.writes[k] = (src, s)
    return out


def _unreshaped(u, eqns, made_by):
    """The value u reshapes (through any chain of reshapes): the scatter's updates are these values
    concatenated flat, so that XLA sees `concatenate(x[0:1], x[1:2], ...)`, which it simplifies to x."""
    while (j := made_by.get(u)) is not None and eqns[j].prim is S.reshape_p:
        u = eqns[j].invars[0]
    return u


def emit(run, read, lower_subcomp, x_aval, u_aval):
    """The Run's result value: one dynamic_update_slice, or one scatter at constant indices."""
    closed = _program(x_aval, u_aval, tuple(u.aval for u, _ in run.writes), tuple(s for _, s in run.writes))
    return lower_subcomp(closed.jaxpr, closed.consts, [read(run.x0)] + [read(u) for u, _ in run.writes])[0]


@functools.lru_cache(maxsize=256)
def _program(x_aval, u_aval, src_avals, starts):
    """x with the values of `src_avals` (each u_aval's elements, in any shape) written at `starts`."""
    from transforms.core import EVAL
    from transforms.staging import trace_to_jaxpr
    nd, shape, size = len(x_aval.shape), tuple(u_aval.shape), int(np.prod(u_aval.shape))

    def fun(x, *srcs):
        if len(srcs) == 1:
            return [I.dynamic_update_slice(x, S.reshape(srcs[0], shape), [np.int64(s) for s in starts[0]])]
        flat = S.concatenate([S.reshape(u, (size,)) for u in srcs], 0)
        upd = S.reshape(flat, (len(srcs),) + shape)
        dn = I.ScatterDims(tuple(range(1, nd + 1)), (), tuple(range(nd)))
        return [I.scatter(x, np.array(starts, np.int64).reshape(len(starts), nd), upd, dn, "set")]
    return trace_to_jaxpr(fun, [x_aval, *src_avals], parent=EVAL)
