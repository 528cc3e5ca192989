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
from .jaxpr import ClosedJaxpr, Jaxpr, Literal, Var
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


class _Unkeyable(Exception):
    """A jaxpr whose structure has no exact hashable key here (a callable or a constant in its params)."""


def _param_key(p):
    t = type(p)
    if t is ClosedJaxpr:
        if p.consts or p.jaxpr.constvars:
            raise _Unkeyable
        return ("closed", _structure(p.jaxpr))
    if t is Jaxpr:
        return ("jaxpr", _structure(p))
    if t is tuple or t is list:
        return (t, tuple([_param_key(x) for x in p]))
    if t is float:
        return (t, p.hex())                  # (-0.0 and 0.0 apart, NaN equal to itself)
    if isinstance(p, (np.ndarray, np.generic)):
        a = np.asarray(p)
        return ("array", a.dtype, a.shape, a.tobytes())
    if callable(p) and not isinstance(p, (type, np.dtype)):
        raise _Unkeyable                     # (a function: its behaviour is not its structure)
    return (t, p)                            # (with its type: True, 1 and 1.0 stay apart)


def _structure(jaxpr):
    """A hashable key equal for two jaxprs exactly when they compute the same thing the same way: each
    variable by its position of definition, each equation by primitive, operands, result avals (weak types
    included) and params, each literal by its aval and bits."""
    ids = {}
    for v in jaxpr.constvars:
        ids[v] = len(ids)
    for v in jaxpr.invars:
        ids[v] = len(ids)

    def ref(v):
        if type(v) is Literal:
            return (v.aval, np.asarray(v.val).tobytes())
        return ids[v]
    parts = [tuple([v.aval for v in jaxpr.constvars]), tuple([v.aval for v in jaxpr.invars])]
    for e in jaxpr.eqns:
        ins = tuple([ref(v) for v in e.invars])
        for v in e.outvars:
            ids[v] = len(ids)
        parts.append((e.prim, ins, tuple([v.aval for v in e.outvars]),
                      tuple([(k, _param_key(x)) for k, x in e.params.items()])))
    parts.append(tuple([ref(v) for v in jaxpr.outvars]))
    return tuple(parts)


def intern_jaxpr(closed):
    """One object per structurally equal constant-free jaxpr traced by the public functions.

    Params jaxprs key compile caches (and host programs) by identity; without this every eager call of
    cond / scan / while_loop would trace new jaxprs and compile again. The key is the jaxpr's structure
    (`_structure`: built in about a microsecond per equation, where printing it took ~10); a jaxpr with a
    function or a constant in its params is not interned.
    """
    if closed.consts or closed.jaxpr.constvars:
        return closed
    try:
        key = _structure(closed.jaxpr)
        got = _INTERNED.get(key)
    except (_Unkeyable, TypeError):          # (TypeError: an unhashable param)
        return closed
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
