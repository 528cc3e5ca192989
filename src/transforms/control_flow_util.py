"""Helpers shared by the control-flow primitives (cond, while, scan) and their public functions.

Kept apart from control_flow.py so the primitive modules (control_flow_cond.py,
control_flow_while.py, control_flow_scan.py) import them without an import cycle: type checks
for abstract evaluation, hoisting constants out of params jaxprs (params jaxprs never hold
constants), interning traced jaxprs so eager calls hit the compile cache, reordering a jaxpr's
inputs and outputs, and tracing user functions with carry-type promotion.
"""
from __future__ import annotations

import functools
from collections import OrderedDict

import numpy as np

from .api_util import Store, flatten_fun
from .core import get_aval
from .jaxpr import ClosedJaxpr, Jaxpr, Var, pp_jaxpr
from .jaxpr_transforms import stage
from .primitives import elementwise as E
from .pytree import PyTreeDef
from .staging import convert_constvars, dce_jaxpr

KIND_RANK = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


# ------------------------------------------------------------------------------ type checks

def same_type(a, b):
    return a.shape == b.shape and a.dtype == b.dtype


def types_str(avals):
    return "(" + ", ".join(a.str_short() for a in avals) + ")"


def check_avals(what, expected, got):
    if len(expected) != len(got) or not all(same_type(e, g) for e, g in zip(expected, got)):
        raise TypeError(f"{what} takes {types_str(expected)} but the operands are {types_str(got)}")


# ------------------------------------------------------------------ params jaxprs, no constants

def hoist_consts(closed):
    """(ClosedJaxpr without constants, taking them as leading invars; the constants)."""
    if not closed.consts and not closed.jaxpr.constvars:
        return closed, []
    jaxpr, consts = convert_constvars(closed)
    return ClosedJaxpr(jaxpr, []), list(consts)


hoist_consts_cached = functools.lru_cache(maxsize=2048)(hoist_consts)   # for jaxprs made by (cached) rules


def join_consts(closeds):
    """Give every jaxpr the constants of all of them as leading invars (a branch ignores the others')."""
    closeds = tuple(closeds)
    allvars = [v for c in closeds for v in c.jaxpr.constvars]
    if not allvars:
        return closeds, []
    consts = [x for c in closeds for x in c.consts]
    out = []
    for c in closeds:
        own = set(c.jaxpr.constvars)
        lead = [v if v in own else Var(v.aval) for v in allvars]
        out.append(ClosedJaxpr(Jaxpr([], lead + list(c.jaxpr.invars), c.jaxpr.eqns, c.jaxpr.outvars), []))
    return tuple(out), consts


join_consts_cached = functools.lru_cache(maxsize=1024)(join_consts)

_INTERNED: dict = {}


def _printable_exactly(jaxpr):
    """Whether the printed text determines the jaxpr (callable params print only their name)."""
    def ok(p):
        if isinstance(p, ClosedJaxpr):
            return _printable_exactly(p.jaxpr)
        if isinstance(p, Jaxpr):
            return _printable_exactly(p)
        if isinstance(p, tuple):
            return all(ok(x) for x in p)
        return not callable(p) or isinstance(p, (type, np.dtype))
    return all(ok(p) for e in jaxpr.eqns for p in e.params.values())


def intern_jaxpr(closed):
    """One object per structurally equal constant-free jaxpr traced by the public functions.

    Params jaxprs key compile caches by identity; without this every eager call of cond /
    scan / while_loop would trace new jaxprs and compile again. The key is the printed
    text plus the weak types it leaves out of the in/out types.
    """
    if closed.consts or closed.jaxpr.constvars or not _printable_exactly(closed.jaxpr):
        return closed
    key = (pp_jaxpr(closed.jaxpr), tuple(a.weak_type for a in closed.in_avals),
           tuple(a.weak_type for a in closed.out_avals))
    got = _INTERNED.get(key)
    if got is None:
        if len(_INTERNED) >= 4096:
            _INTERNED.clear()
        got = _INTERNED[key] = closed
    return got


def permute(closed, in_perm, out_perm):
    """The constant-free jaxpr with its invars and outvars reordered (by index lists)."""
    j = closed.jaxpr
    return ClosedJaxpr(Jaxpr([], [j.invars[i] for i in in_perm], j.eqns, [j.outvars[i] for i in out_perm]), [])


def prune(closed, n_out):
    """Keep the first n_out outputs and drop the equations only the others needed."""
    j = closed.jaxpr
    return ClosedJaxpr(dce_jaxpr(Jaxpr(j.constvars, j.invars, j.eqns, list(j.outvars[:n_out]))), closed.consts)


def split3(seq, a, b):
    return list(seq[:a]), list(seq[a:a + b]), list(seq[a + b:])


# ------------------------------------------------------------------------- user functions

def tuple_tree(*trees):
    return PyTreeDef(tuple, len(trees), tuple(trees))


def leaf_paths(tree, root):
    """A readable path per leaf of a PyTreeDef: init_val[0]['w'], xs.field, ..."""
    out = []

    def rec(td, path):
        if td.kind is None:
            out.append(path)
        elif td.kind in (dict, OrderedDict):
            for k, c in zip(td.aux, td.children):
                rec(c, f"{path}[{k!r}]")
        elif isinstance(td.kind, type) and issubclass(td.kind, tuple) and hasattr(td.kind, "_fields"):
            for f, c in zip(td.kind._fields, td.children):
                rec(c, f"{path}.{f}")
        else:
            for i, c in enumerate(td.children):
                rec(c, f"{path}[{i}]")
    rec(tree, root)
    return out


def trace_user(fun, in_tree, in_avals, where):
    """Stage a user function (pytrees of Arrays) at raw avals: (ClosedJaxpr, output tree)."""
    store = Store()
    closed = stage(flatten_fun(fun, in_tree, store, where), list(in_avals))
    return closed, store.val


def promote_carry(init, out_avals, paths, who, root):
    """Match a carry's initial values to what the body returns.

    A weakly typed initial value (a Python scalar) takes the body's dtype, as in JAX;
    any other change of shape or dtype is a TypeError naming the leaf.
    Returns (new init values, whether any changed).
    """
    new, changed = [], False
    for x, p, o in zip(init, paths, out_avals):
        a = get_aval(x)
        if same_type(a, o):
            new.append(x)
        elif a.shape == o.shape and a.weak_type and KIND_RANK[o.dtype.kind] >= KIND_RANK[a.dtype.kind]:
            new.append(E.convert_element_type(x, o.dtype, False))
            changed = True
        else:
            raise TypeError(f"{who} must keep the carry's type: leaf {p} is {a.str_short()} in {root} but "
                            f"{o.str_short()} in the {who} output (shape and dtype must not change "
                            "across iterations; cast inside the body, e.g. with astype)")
    return new, changed
