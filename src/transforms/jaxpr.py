"""The IR: a jaxpr is pure data: typed variables, literals and equations in A-normal form.

`Jaxpr(constvars, invars, eqns, outvars)`; an `Eqn` binds one primitive with its params
(params may hold sub-jaxprs). `ClosedJaxpr` pairs a jaxpr with values for its constvars.
`typecheck` re-derives every type from the abstract-eval rules; `eval_jaxpr` interprets a
jaxpr by binding each equation at the current trace, which is how every transform can
run a jaxpr; `pp_jaxpr` prints JAX's text format.
"""
from __future__ import annotations

import numpy as np

from .core import ShapedArray, abstract_eval, bind


class Var:
    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval


class Literal:
    """A scalar constant inlined in an equation; `val` is a NumPy scalar."""
    __slots__ = ("val", "aval")

    def __init__(self, val, aval):
        self.val = val
        self.aval = aval


class Eqn:
    __slots__ = ("prim", "invars", "outvars", "params")

    def __init__(self, prim, invars, outvars, params):
        self.prim, self.invars, self.outvars, self.params = prim, invars, outvars, params


class Jaxpr:
    """Parameters: constvars, invars (lists of Var): the constants' and inputs' variables. eqns (list of
        Eqn): the equations, in order. outvars (list of Var or Literal): the outputs.
    Returns: the jaxpr (in_avals, out_avals; printed in JAX's text format).
    Raises: nothing (typecheck checks one).

    >>> make_jaxpr(lambda a: a + 1.0)(xp.ones(2)).jaxpr.in_avals
    [ShapedArray(f64[2])]
    """
    __slots__ = ("constvars", "invars", "eqns", "outvars", "__weakref__")

    def __init__(self, constvars, invars, eqns, outvars):
        self.constvars, self.invars, self.eqns, self.outvars = constvars, invars, eqns, outvars

    @property
    def in_avals(self):
        return [v.aval for v in self.invars]

    @property
    def out_avals(self):
        return [v.aval for v in self.outvars]

    def __str__(self):
        return pp_jaxpr(self)

    __repr__ = __str__


class ClosedJaxpr:
    """A jaxpr with its constants. Hashed by identity: it is a compile-cache key.

    Parameters: jaxpr (Jaxpr): the program. consts (sequence): values for its constvars.
    Returns: the closed jaxpr (jaxpr, consts, in_avals, out_avals).
    Raises: nothing.

    >>> closed = make_jaxpr(lambda a: a * 2.0)(xp.ones(3))
    >>> type(closed).__name__, closed.out_avals
    ('ClosedJaxpr', [ShapedArray(f64[3])])
    """
    __slots__ = ("jaxpr", "consts", "__weakref__")

    def __init__(self, jaxpr, consts):
        self.jaxpr, self.consts = jaxpr, list(consts)

    in_avals = property(lambda self: self.jaxpr.in_avals)
    out_avals = property(lambda self: self.jaxpr.out_avals)

    def __str__(self):
        return pp_jaxpr(self.jaxpr)

    __repr__ = __str__


# --------------------------------------------------------------------------- evaluation

def eval_jaxpr(jaxpr: Jaxpr, consts, *args):
    """Run a jaxpr by binding each equation at the current trace.

    Parameters: jaxpr (Jaxpr): the program. consts (sequence): values for its constvars. args: raw
        values (or arrays' raw values, x._v) for its invars.
    Returns: list: the raw output values (wrap with xp.asarray(np.asarray(v)) to print).
    Raises: whatever the primitives raise for these values.

    >>> closed = make_jaxpr(lambda a: a + 1.0)(xp.ones(2))
    >>> [np.asarray(v) for v in eval_jaxpr(closed.jaxpr, closed.consts, xp.asarray([1.0, 2.0])._v)]
    [array([2., 3.])]
    """
    env = {}
    read = lambda a: a.val if type(a) is Literal else env[a]
    for v, x in zip(jaxpr.constvars, consts):
        env[v] = x
    for v, x in zip(jaxpr.invars, args):
        env[v] = x
    for eqn in jaxpr.eqns:
        out = bind(eqn.prim, *map(read, eqn.invars), **eqn.params)
        if eqn.prim.multiple_results:
            for v, x in zip(eqn.outvars, out):
                env[v] = x
        else:
            env[eqn.outvars[0]] = out
    return [read(v) for v in jaxpr.outvars]


def jaxpr_as_fun(closed: ClosedJaxpr):
    return lambda *args: eval_jaxpr(closed.jaxpr, closed.consts, *args)


# ---------------------------------------------------------------------------- typecheck

class JaxprTypeError(TypeError):
    pass


def typecheck(jaxpr: Jaxpr):
    """Check every variable is bound once before use and every eqn's types follow its rule.

    Parameters: jaxpr (Jaxpr): the program to check.
    Returns: True when it is well typed.
    Raises: JaxprTypeError (a TypeError): naming the first variable or equation at fault.

    >>> typecheck(make_jaxpr(lambda a: xp.sin(a))(xp.ones(2)).jaxpr)
    True
    """
    env = set()

    def bind_var(v):
        if v in env:
            raise JaxprTypeError(f"variable rebound: {v.aval.str_short()}")
        env.add(v)

    def check_atom(a):
        if type(a) is Literal:
            if np.shape(a.val) != a.aval.shape:
                raise JaxprTypeError("literal shape does not match its type")
        elif a not in env:
            raise JaxprTypeError(f"unbound variable of type {a.aval.str_short()}")

    for v in list(jaxpr.constvars) + list(jaxpr.invars):
        bind_var(v)
    for eqn in jaxpr.eqns:
        for a in eqn.invars:
            check_atom(a)
        out = abstract_eval(eqn.prim, [a.aval for a in eqn.invars], eqn.params)
        out = out if eqn.prim.multiple_results else [out]
        if len(out) != len(eqn.outvars):
            raise JaxprTypeError(f"{eqn.prim}: expected {len(out)} outputs, got {len(eqn.outvars)}")
        for v, aval in zip(eqn.outvars, out):
            if (v.aval.shape, v.aval.dtype) != (aval.shape, aval.dtype):
                raise JaxprTypeError(f"{eqn.prim}: output typed {v.aval.str_short()} but rule gives "
                                     f"{aval.str_short()}")
            bind_var(v)
        for p in eqn.params.values():
            for sub in (p if isinstance(p, tuple) else (p,)):
                if isinstance(sub, ClosedJaxpr):
                    typecheck(sub.jaxpr)
    for a in jaxpr.outvars:
        check_atom(a)
    return True


# ------------------------------------------------------------------------- pretty print

class _Names:
    """JAX's variable names: a..z, then ba, bb, ... continuing into sub-jaxprs."""

    def __init__(self):
        self.names = {}

    def __call__(self, v):
        if type(v) is Literal:
            return _pp_literal(v)
        name = self.names.get(v)
        if name is None:
            name = self.names[v] = _letters(len(self.names))
        return name


def _letters(i):
    s = ""
    while True:
        s = chr(ord("a") + i % 26) + s
        i //= 26
        if i == 0:
            return s


def _pp_literal(lit):
    v = lit.val
    if lit.aval.dtype.kind == "b":
        return "True" if bool(v) else "False"
    return str(v)


def _has_jaxpr(v):
    return isinstance(v, (ClosedJaxpr, Jaxpr)) or (isinstance(v, tuple) and any(_has_jaxpr(x) for x in v))


def _pp_param(v, names, indent):
    if isinstance(v, (ClosedJaxpr, Jaxpr)):
        return _pp(v.jaxpr if isinstance(v, ClosedJaxpr) else v, names, indent)
    if isinstance(v, np.dtype):
        return v.name
    if isinstance(v, tuple) and _has_jaxpr(v):   # e.g. cond's branches: one jaxpr per line
        pad = " " * (indent + 2)
        return "(\n" + "\n".join(pad + _pp_param(x, names, indent + 2) for x in v) + "\n" + " " * indent + ")"
    if isinstance(v, tuple):
        items = [_pp_param(x, names, indent) for x in v]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    if callable(v) and hasattr(v, "__name__"):
        return v.__name__
    return str(v)


def _pp(jaxpr, names, indent=0):
    pad = " " * indent
    decl = lambda v: f"{names(v)}:{v.aval.str_short()}"
    head = "{ lambda " + " ".join(map(decl, jaxpr.constvars)) + "; " + " ".join(map(decl, jaxpr.invars)) + ". let"
    lines = [head]
    for eqn in jaxpr.eqns:
        lhs = " ".join(map(decl, eqn.outvars))
        if eqn.params:
            has_jaxpr = any(_has_jaxpr(p) for p in eqn.params.values())
            if has_jaxpr:
                inner = [f"{pad}      {k}={_pp_param(p, names, indent + 6)}" for k, p in eqn.params.items()]
                params = "[\n" + "\n".join(inner) + f"\n{pad}    ]"
            else:
                params = "[" + " ".join(f"{k}={_pp_param(p, names, indent)}" for k, p in eqn.params.items()) + "]"
        else:
            params = ""
        rhs = f"{eqn.prim.name}{params} " + " ".join(map(names, eqn.invars))
        lines.append(f"{pad}    {lhs} = {rhs.rstrip()}")
    outs = ", ".join(map(names, jaxpr.outvars))
    lines.append(f"{pad}  in ({outs}{',' if len(jaxpr.outvars) == 1 else ''}) }}")
    return "\n".join(lines)


def pp_jaxpr(jaxpr: Jaxpr) -> str:
    return _pp(jaxpr, _Names())


def new_literal(val, aval: ShapedArray) -> Literal:
    return Literal(np.asarray(val, aval.dtype)[()], aval)
