"""Shared checks for the tests/xla/test_lower_<family>.py modules.

A `Case` is a function on Arrays with its NumPy/scipy oracle and inputs. `check` runs it under jit
(so the family's lowering rules produce the values) and compares with the oracle; `prims_of`
lists the primitives the staged program contains, so each module can assert that its cases reach
every primitive the lowering module registers (`lowered_by`).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

import array_namespace as xp
from transforms import jit, make_jaxpr
from transforms.core import boxing
from transforms.jaxpr import ClosedJaxpr, Jaxpr
from xla.lowering import lowering_rules


def lowered_by(module: str) -> set:
    """Names of the primitives whose lowering rule is defined in `module` (e.g. 'xla.lower_fft')."""
    out = set()
    for p, rule in lowering_rules.items():
        mod = getattr(rule, "__module__", None) or getattr(getattr(rule, "func", None), "__module__", None)
        if mod == module:
            out.add(p.name)
    return out


def prims_of(closed) -> set:
    """Every primitive name in a (closed) jaxpr, sub-jaxprs included."""
    names = set()

    def walk(j):
        for e in j.eqns:
            names.add(e.prim.name)
            for p in e.params.values():
                for sub in (p if isinstance(p, tuple) else (p,)):
                    if isinstance(sub, ClosedJaxpr):
                        walk(sub.jaxpr)
                    elif isinstance(sub, Jaxpr):
                        walk(sub)
    walk(closed.jaxpr if isinstance(closed, ClosedJaxpr) else closed)
    return names


def raw(prim, **params):
    """A function on Arrays that binds `prim` directly (outputs boxed)."""
    def f(*args):
        out = prim.bind(*[a._v for a in args], **params)
        return tuple(map(boxing.box, out)) if prim.multiple_results else boxing.box(out)
    f.__name__ = prim.name
    return f


@dataclass
class Case:
    name: str
    fn: object              # Arrays -> Array or tuple of Arrays
    oracle: object          # ndarrays -> ndarray or tuple
    args: list
    rtol: float = 1e-13
    atol: float = 0.0
    check_dtype: bool = True
    extra: dict = field(default_factory=dict)

    def __repr__(self):
        return self.name


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def jit_all(cases) -> dict:
    """{case.name: jit(case.fn)'s outputs} for every case, from ONE jitted function returning them all (each case
    on its own operands): one compile for many cases, where a jit per case compiles as many programs."""
    flat = [xp.asarray(a) for c in cases for a in c.args]

    def every(*flat):
        outs, at = [], 0
        for c in cases:
            outs.append(_as_tuple(c.fn(*flat[at:at + len(c.args)])))
            at += len(c.args)
        return outs
    return dict(zip([c.name for c in cases], jit(every)(*flat)))


def check(case: Case, eager=False, jitted=None) -> set:
    """jit(fn) (and, with eager=True, fn) against the oracle; returns the primitives staged. `jitted`: jit(fn)'s
    outputs where the caller has them already (jit_all), else computed here."""
    args = [xp.asarray(a) for a in case.args]
    want = [np.asarray(w) for w in _as_tuple(case.oracle(*case.args))]
    runs = [("jit", jit(case.fn)(*args) if jitted is None else jitted)] + ([("eager", case.fn(*args))] if eager else [])
    for mode, got in runs:
        got = [np.asarray(g) for g in _as_tuple(got)]
        assert len(got) == len(want), f"{case.name} ({mode}): {len(got)} outputs, oracle has {len(want)}"
        for g, w in zip(got, want):
            if case.check_dtype:
                assert g.dtype == w.dtype, f"{case.name} ({mode}): dtype {g.dtype} != oracle's {w.dtype}"
            assert g.shape == w.shape, f"{case.name} ({mode}): shape {g.shape} != oracle's {w.shape}"
            if g.dtype.kind in "biu":
                np.testing.assert_array_equal(g, w, err_msg=f"{case.name} ({mode})")
            else:   # the oracle's value rounded to the result's dtype (overflow to inf included)
                with np.errstate(over="ignore", under="ignore"):
                    w = w.astype(g.dtype)
                np.testing.assert_allclose(g, w, rtol=case.rtol, atol=case.atol, equal_nan=True,
                                           err_msg=f"{case.name} ({mode})")
    return prims_of(make_jaxpr(case.fn)(*args))


# Elementwise cases of the special functions run at this one length (their points repeated cyclically,
# see `tiled`), the size test_host_special's XLA oracle pads to: jit of a bound primitive is the same module as
# its single-op executable, so each (primitive, dtype) compiles once per session (the compile cache's hit).
XLA_LEN = 8192


def tiled(case: Case) -> Case:
    """case with every argument repeated cyclically to XLA_LEN elements (every point still checked)."""
    assert len({np.size(a) for a in case.args}) == 1, case.name      # (so the points stay paired)
    case.args = [np.resize(a, XLA_LEN) for a in case.args]
    return case


SPECIAL = [-np.inf, -3.5, -1.0, -0.5, -0.0, 0.0, 1e-300, 0.25, 0.5, 1.0, 2.0, 7.5, 1e10, np.inf, np.nan]


def grid(dtype, values=SPECIAL):
    """Special and ordinary values in `dtype` (1e-300 flushes to 0 in float32)."""
    with np.errstate(over="ignore", under="ignore"):
        return np.array(values, dtype=np.float64).astype(dtype)
