"""Control flow as primitives: `cond`/`switch`, `while_loop`, `fori_loop`, `scan`, `map`.

Each public function traces its Python callables once, at the abstract values of the
operands, into closed jaxprs and binds one higher-order primitive whose params hold them:

- `cond`  operands (index, *ops); params `branches` (a tuple of jaxprs). The index is an
  int32 scalar; out-of-range indices are clamped (lowering and batching agree).
- `while` operands (*cond_consts, *body_consts, *carry); params `cond_jaxpr`, `body_jaxpr`,
  `cond_nconsts`, `body_nconsts`.
- `scan`  operands (*consts, *carry, *xs); params `jaxpr` (consts, carry, x -> carry, y),
  `num_consts`, `num_carry`, `length`, `reverse`; outputs (*carry, *stacked ys).

Jaxprs in params never hold constants: captured values are hoisted into leading operands,
so every trace (jvp, vmap, staging) sees them as ordinary arguments.

The rules follow jit_p's pattern (transforms/jit.py): run a transform over `eval_jaxpr`
of an inner jaxpr, stage the result with `stage` (cached per jaxpr and signature), and
bind the primitive again. Loop rules first find a fixed point (which carries get a
tangent, a batch axis, or become unknown) so the loop body keeps one type.
"""
from __future__ import annotations

import functools
import operator
from collections import OrderedDict

import numpy as np

from .ad import backward_pass, jvp_flat
from .api_util import Store, box, flatten_fun, to_raw
from .batching import move_to, vmap_flat
from .core import EVAL, Primitive, ShapedArray, abstract_eval_rules, bind, get_aval, set_trace
from .jaxpr import ClosedJaxpr, Jaxpr, Var, eval_jaxpr, pp_jaxpr
from .jaxpr_transforms import stage, transpose_jaxpr as _transpose_jaxpr
from .primitives import elementwise as E
from .primitives import reductions as R
from .primitives import structural as S
from .pytree import PyTreeDef, tree_flatten, tree_unflatten
from .rules import (UndefPrimal, Zero, batch_rules, is_undefined, jvp_rules, partial_eval_rules, transpose_gaps,
                    transpose_rules)
from .staging import StagingTrace, StagingTracer, convert_constvars, dce_jaxpr

cond_p = Primitive("cond", multiple_results=True)
while_p = Primitive("while", multiple_results=True)
scan_p = Primitive("scan", multiple_results=True)

_WHILE_REVERSE = ("reverse-mode differentiation of while_loop is not supported (its trip count is only known "
                  "at run time, so there is nothing to store the forward values in); use fori_loop with a "
                  "static trip count (Python int bounds) or scan instead. Forward mode (jvp, jacfwd) works.")

# =============================================================================== helpers


def _same_type(a, b):
    return a.shape == b.shape and a.dtype == b.dtype


def _types(avals):
    return "(" + ", ".join(a.str_short() for a in avals) + ")"


def _check_avals(what, expected, got):
    if len(expected) != len(got) or not all(_same_type(e, g) for e, g in zip(expected, got)):
        raise TypeError(f"{what} takes {_types(expected)} but the operands are {_types(got)}")


def _no_consts(closed):
    """(ClosedJaxpr without constants, taking them as leading invars; the constants)."""
    if not closed.consts and not closed.jaxpr.constvars:
        return closed, []
    jaxpr, consts = convert_constvars(closed)
    return ClosedJaxpr(jaxpr, []), list(consts)


_hoisted = functools.lru_cache(maxsize=2048)(_no_consts)   # for jaxprs made by (cached) rules


def _join_consts(closeds):
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


_join_cached = functools.lru_cache(maxsize=1024)(_join_consts)


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


def _intern(closed):
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


def _permute(closed, in_perm, out_perm):
    j = closed.jaxpr
    return ClosedJaxpr(Jaxpr([], [j.invars[i] for i in in_perm], j.eqns, [j.outvars[i] for i in out_perm]), [])


def _prune(closed, n_out):
    """Keep the first n_out outputs and drop the equations only the others needed."""
    j = closed.jaxpr
    return ClosedJaxpr(dce_jaxpr(Jaxpr(j.constvars, j.invars, j.eqns, list(j.outvars[:n_out]))), closed.consts)


def _run(closed):
    return lambda *a: eval_jaxpr(closed.jaxpr, closed.consts, *a)


def _zeros(aval):
    return S.zeros_of_aval(aval)


def _tangent_zeros(x):
    return S.zeros_of_aval(get_aval(x).strip_weak())


def _tuple_tree(*trees):
    return PyTreeDef(tuple, len(trees), tuple(trees))


def _leaf_paths(tree, root):
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


def _trace(fun, in_tree, in_avals, where):
    """Stage a user function (pytrees of Arrays) at raw avals: (ClosedJaxpr, output tree)."""
    store = Store()
    closed = stage(flatten_fun(fun, in_tree, store, where), list(in_avals))
    return closed, store.val


_KIND_RANK = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


def _promote_carry(init, out_avals, paths, who, root):
    """Match a carry's initial values to what the body returns.

    A weakly typed initial value (a Python scalar) takes the body's dtype, as in JAX;
    any other change of shape or dtype is a TypeError naming the leaf.
    Returns (new init values, whether any changed).
    """
    new, changed = [], False
    for x, p, o in zip(init, paths, out_avals):
        a = get_aval(x)
        if _same_type(a, o):
            new.append(x)
        elif a.shape == o.shape and a.weak_type and _KIND_RANK[o.dtype.kind] >= _KIND_RANK[a.dtype.kind]:
            new.append(E.convert_element_type(x, o.dtype, False))
            changed = True
        else:
            raise TypeError(f"{who} must keep the carry's type: leaf {p} is {a.str_short()} in {root} but "
                            f"{o.str_short()} in the {who} output (shape and dtype must not change "
                            "across iterations; cast inside the body, e.g. with astype)")
    return new, changed


# ========================================================================= shared rules

@functools.lru_cache(maxsize=1024)
def _jvp_jaxpr(closed, nonzeros, instantiate):
    """jvp of a jaxpr: (primals, nonzero tangents) -> (outputs, tangents that are not Zero).

    Output tangents listed in `instantiate` are materialised as zeros when Zero.
    Returns (ClosedJaxpr, which outputs have a tangent).
    """
    n = len(nonzeros)
    t_avals = [a.strip_weak() for a, nz in zip(closed.in_avals, nonzeros) if nz]
    out_nz = []

    def f(*args):
        primals, ts = args[:n], iter(args[n:])
        tangents = [next(ts) if nz else Zero for nz in nonzeros]
        out_p, out_t = jvp_flat(_run(closed), primals, tangents, instantiate_zeros=False)
        out_t = [_tangent_zeros(p) if (t is Zero and inst) else t for p, t, inst in zip(out_p, out_t, instantiate)]
        out_nz[:] = [t is not Zero for t in out_t]
        return list(out_p) + [t for t in out_t if t is not Zero]
    new = stage(f, list(closed.in_avals) + t_avals)
    return new, tuple(out_nz)


@functools.lru_cache(maxsize=1024)
def _batch_jaxpr(closed, batched, axis_size, force):
    """vmap of a jaxpr whose batched inputs carry the batch axis at 0.

    force: None (outputs batched where they come out batched) or, per output, True (move
    or broadcast the batch axis to 0), False (must come out unbatched) or None.
    Returns (ClosedJaxpr, which outputs are batched at 0).
    """
    avals = [a.update(shape=(axis_size,) + a.shape) if b else a for a, b in zip(closed.in_avals, batched)]
    out_bat = []

    def f(*args):
        outs, od = vmap_flat(_run(closed), args, [0 if b else None for b in batched], axis_size)
        res, bat = [], []
        for k, (o, d) in enumerate(zip(outs, od)):
            want = d is not None if force is None or force[k] is None else force[k]
            if want:
                o = move_to(o, d, 0, axis_size)
            elif d is not None:
                raise AssertionError("internal: an output forced unbatched came out batched")
            res.append(o)
            bat.append(want)
        out_bat[:] = bat
        return res
    return stage(f, avals), tuple(out_bat)


@functools.lru_cache(maxsize=1024)
def _pe_jaxpr(closed, unknowns, instantiate):
    """Partial evaluation of a jaxpr for the given unknown inputs.

    Returns (known, unknown, out_unknown, n_res): `known` takes the known inputs and
    returns the known outputs then the residuals; `unknown` takes the residuals then the
    unknown inputs and returns the unknown outputs. Outputs in `instantiate` are unknown.
    """
    known_tr = StagingTrace(EVAL, stage_all=True)
    unk_tr = StagingTrace(known_tr, stage_all=False)
    args = [unk_tr.new_arg(a) if u else known_tr.new_arg(a) for a, u in zip(closed.in_avals, unknowns)]
    with set_trace(unk_tr):
        outs = eval_jaxpr(closed.jaxpr, closed.consts, *args)
    out_uk = tuple(bool(inst) or (type(o) is StagingTracer and o._trace is unk_tr)
                   for o, inst in zip(outs, instantiate))
    unk = unk_tr.to_jaxpr([o for o, u in zip(outs, out_uk) if u])
    residuals = unk.consts
    known = known_tr.to_jaxpr([o for o, u in zip(outs, out_uk) if not u] + list(residuals))
    known = ClosedJaxpr(dce_jaxpr(known.jaxpr), known.consts)
    unk_jaxpr, _ = convert_constvars(unk)
    return known, ClosedJaxpr(dce_jaxpr(unk_jaxpr), []), out_uk, len(residuals)


def _is_unknown(trace):
    return lambda a: type(a) is StagingTracer and a._trace is trace


# ============================================================================ cond / switch

def _cond_abstract(index, *ops, branches):
    if index.shape != () or index.dtype != np.int32:
        raise TypeError(f"cond index must be an int32 scalar, got {index.str_short()}")
    if not branches:
        raise TypeError("cond needs at least one branch")
    for i, br in enumerate(branches):
        _check_avals(f"cond branch {i}", br.in_avals, ops)
    outs0 = branches[0].out_avals
    for i, br in enumerate(branches[1:], 1):
        if len(br.out_avals) != len(outs0) or not all(_same_type(a, b) for a, b in zip(br.out_avals, outs0)):
            raise TypeError(f"cond branches must return identical types: branch 0 returns {_types(outs0)}, "
                            f"branch {i} returns {_types(br.out_avals)}")
    return [a.update(weak_type=all(br.out_avals[k].weak_type for br in branches)) for k, a in enumerate(outs0)]


abstract_eval_rules[cond_p] = _cond_abstract


def _bind_cond(index, ops, closeds):
    branches, consts = _join_cached(tuple(closeds))
    return bind(cond_p, index, *consts, *ops, branches=branches)


def _cond_jvp(primals, tangents, *, branches):
    index, ops = primals[0], primals[1:]
    nz = tuple(t is not Zero for t in tangents[1:])
    n_out = len(branches[0].out_avals)
    inst = [False] * n_out
    for br in branches:
        _, has = _jvp_jaxpr(br, nz, (False,) * n_out)
        inst = [a or b for a, b in zip(inst, has)]
    inst = tuple(inst)
    new = [_jvp_jaxpr(br, nz, inst)[0] for br in branches]
    outs = _bind_cond(index, list(ops) + [t for t in tangents[1:] if t is not Zero], new)
    ts = iter(outs[n_out:])
    return outs[:n_out], [next(ts) if h else Zero for h in inst]


jvp_rules[cond_p] = _cond_jvp


def _cond_batch(axis_size, vals, dims, *, branches):
    index, ops = vals[0], list(vals[1:])
    ops = [v if d is None else move_to(v, d, 0, axis_size) for v, d in zip(ops, dims[1:])]
    batched = tuple(d is not None for d in dims[1:])
    n_out = len(branches[0].out_avals)
    if dims[0] is not None:
        # a per-example index: run every branch on the whole batch, then pick per example
        idx = move_to(index, dims[0], 0, axis_size)
        n = len(branches)
        idx = bind(E.max_p, bind(E.min_p, idx, E.full_like_scalar(idx, n - 1)), E.full_like_scalar(idx, 0))
        if n == 2:
            idx = bind(E.ne_p, idx, E.full_like_scalar(idx, 0))
        outs = []
        for br in branches:
            o, od = vmap_flat(_run(br), ops, [0 if b else None for b in batched], axis_size)
            outs.append([move_to(x, d, 0, axis_size) for x, d in zip(o, od)])
        res = []
        for k in range(n_out):
            cases = [o[k] for o in outs]
            shape = S.shape_of(cases[0])
            res.append(E.select_n(S.broadcast_in_dim(idx, shape, (0,)), *cases))
        return res, [0] * n_out
    out_bat = [False] * n_out
    for br in branches:
        _, ob = _batch_jaxpr(br, batched, axis_size, None)
        out_bat = [a or b for a, b in zip(out_bat, ob)]
    new = [_batch_jaxpr(br, batched, axis_size, tuple(out_bat))[0] for br in branches]
    return _bind_cond(index, ops, new), [0 if b else None for b in out_bat]


batch_rules[cond_p] = _cond_batch


@functools.lru_cache(maxsize=512)
def _cond_pe_branches(branches, unknowns, out_uk):
    """Known and unknown branches whose residual lists agree.

    Every branch's residuals get their own slots; a branch fills the others' slots with
    zeros in its known part and ignores them in its unknown part.
    """
    parts = [_pe_jaxpr(br, unknowns, out_uk) for br in branches]
    n_known = len(out_uk) - sum(out_uk)
    res_avals = [list(known.out_avals[n_known:]) for known, _, _, _ in parts]
    flat_res = [a for r in res_avals for a in r]
    offs = np.cumsum([0] + [len(r) for r in res_avals]).tolist()
    known_in = [a for a, u in zip(branches[0].in_avals, unknowns) if not u]
    unk_in = [a for a, u in zip(branches[0].in_avals, unknowns) if u]
    kb, ub = [], []
    for i, (known, unk, _, _) in enumerate(parts):
        def fk(*args, known=known, i=i):
            outs = eval_jaxpr(known.jaxpr, known.consts, *args)
            full = list(outs[:n_known])
            for j, r in enumerate(res_avals):
                full += list(outs[n_known:]) if j == i else [_zeros(a) for a in r]
            return full

        def fu(*args, unk=unk, i=i):
            own = args[offs[i]:offs[i + 1]]
            return eval_jaxpr(unk.jaxpr, unk.consts, *own, *args[len(flat_res):])
        kb.append(stage(fk, known_in))
        ub.append(stage(fu, flat_res + unk_in))
    return _join_consts(kb), _join_consts(ub)


def _cond_partial_eval(trace, args, params):
    branches = params["branches"]
    is_uk = _is_unknown(trace)
    index, ops = args[0], args[1:]
    if is_uk(index):
        return trace.stage_eqn(cond_p, args, params)
    unknowns = tuple(is_uk(a) for a in ops)
    n_out = len(branches[0].out_avals)
    out_uk = [False] * n_out
    for br in branches:
        out_uk = [a or b for a, b in zip(out_uk, _pe_jaxpr(br, unknowns, (False,) * n_out)[2])]
    out_uk = tuple(out_uk)
    (kb, kconsts), (ub, uconsts) = _cond_pe_branches(branches, unknowns, out_uk)
    with set_trace(trace.parent):
        k_outs = bind(cond_p, index, *kconsts, *[a for a, u in zip(ops, unknowns) if not u], branches=kb)
    n_known = n_out - sum(out_uk)
    residuals = k_outs[n_known:]
    if not any(out_uk):
        return k_outs[:n_known]
    u_outs = trace.stage_eqn(cond_p, [index, *uconsts, *residuals, *[a for a, u in zip(ops, unknowns) if u]],
                             dict(branches=ub))
    ki, ui = iter(k_outs[:n_known]), iter(u_outs)
    return [next(ui) if u else next(ki) for u in out_uk]


partial_eval_rules[cond_p] = _cond_partial_eval


def _cond_transpose(cts, index, *ops, branches):
    if is_undefined(index):
        raise TypeError("cond is not linear in its index")
    linear = tuple(is_undefined(a) for a in ops)
    cts = [_zeros(a.strip_weak()) if c is Zero else c for c, a in zip(cts, branches[0].out_avals)]
    new = [_transpose_jaxpr(br, linear) for br in branches]
    outs = iter(_bind_cond(index, [a for a in ops if not is_undefined(a)] + cts, new))
    return [None] + [next(outs) if lin else None for lin in linear]


transpose_rules[cond_p] = _cond_transpose


# ---------------------------------------------------------------------------- public API

def _unify_outputs(closeds, names, paths, who):
    """Branch outputs must agree in shape and dtype; weakly typed scalars take the others' dtype."""
    n_out = len(closeds[0].out_avals)
    targets, need = [], False
    for k in range(n_out):
        avs = [c.out_avals[k] for c in closeds]
        if all(_same_type(a, avs[0]) for a in avs):
            targets.append(None)
            continue
        strong = {a.dtype for a in avs if not a.weak_type}
        if all(a.shape == avs[0].shape for a in avs) and len(strong) == 1:
            dt = next(iter(strong))
            if all(_KIND_RANK[dt.kind] >= _KIND_RANK[a.dtype.kind] for a in avs):
                targets.append(dt)
                need = True
                continue
        j = next(j for j, a in enumerate(avs) if not _same_type(a, avs[0]))
        raise TypeError(f"{who}: all branches must return identical types (shape and dtype), but "
                        f"{paths[k]} is {avs[0].str_short()} in {names[0]} and {avs[j].str_short()} in "
                        f"{names[j]}")
    if not need:
        return closeds
    out = []
    for c in closeds:
        def f(*args, c=c):
            return [o if t is None or get_aval(o).dtype == t else E.convert_element_type(o, t)
                    for o, t in zip(_run(c)(*args), targets)]
        out.append(stage(f, c.in_avals))
    return out


def _cond(index, funs, names, operands, who):
    for fn, nm in zip(funs, names):
        if not callable(fn):
            raise TypeError(f"{who}: {nm} must be callable, got {type(fn).__name__}")
    leaves, tree = tree_flatten(tuple(operands))
    ops = [to_raw(x, f"{who} operand") for x in leaves]
    avals = [get_aval(x) for x in ops]
    closeds, trees = [], []
    for fn, nm in zip(funs, names):
        c, t = _trace(fn, tree, avals, f"{who} {nm} output")
        closeds.append(c)
        trees.append(t)
    for nm, t in zip(names[1:], trees[1:]):
        if t != trees[0]:
            raise TypeError(f"{who}: all branches must return the same pytree structure, but {names[0]} returns "
                            f"{trees[0]} and {nm} returns {t}")
    closeds = _unify_outputs(closeds, names, _leaf_paths(trees[0], "output"), who)
    branches, consts = _join_consts(closeds)
    outs = bind(cond_p, index, *consts, *ops, branches=tuple(_intern(b) for b in branches))
    return tree_unflatten(trees[0], [box(o) for o in outs])


def cond(pred, true_fun, false_fun, *operands):
    """true_fun(*operands) if pred else false_fun(*operands), as one staged primitive.

    Both branches are traced; they must return the same pytree of identical types.
    Under vmap with a batched predicate both branches run and the results are selected.
    """
    p = to_raw(pred, "cond predicate")
    a = get_aval(p)
    if a.shape != ():
        raise TypeError(f"cond predicate must be a scalar, got an array of shape {a.shape}; for elementwise "
                        "choices use xp.where, or vmap the cond")
    if a.dtype != np.bool_:
        if a.dtype.kind not in "iuf":
            raise TypeError(f"cond predicate must be a boolean (or numeric) scalar, got {a.dtype.name}")
        p = bind(E.ne_p, p, E.full_like_scalar(p, 0))
    index = E.convert_element_type(p, np.int32)
    return _cond(index, (false_fun, true_fun), ("false_fun", "true_fun"), operands, "cond")


def switch(index, branches, *operands):
    """branches[index](*operands); the index is clamped to [0, len(branches) - 1]."""
    branches = tuple(branches)
    if not branches:
        raise ValueError("switch needs at least one branch")
    i = to_raw(index, "switch index")
    a = get_aval(i)
    if a.shape != () or a.dtype.kind not in "iu":
        raise TypeError(f"switch index must be an integer scalar, got {a.str_short()}")
    if len(branches) == 1:
        if not callable(branches[0]):
            raise TypeError(f"switch: branches[0] must be callable, got {type(branches[0]).__name__}")
        return branches[0](*operands)
    n = len(branches)
    i = bind(E.max_p, bind(E.min_p, i, E.full_like_scalar(i, n - 1)), E.full_like_scalar(i, 0))
    if a.dtype != np.int32 or a.weak_type:
        i = E.convert_element_type(i, np.int32)
    return _cond(i, branches, tuple(f"branches[{k}]" for k in range(n)), operands, "switch")


# ================================================================================ while

def _while_abstract(*avals, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    nc, nb = cond_nconsts, body_nconsts
    carry = avals[nc + nb:]
    _check_avals("while cond_jaxpr", cond_jaxpr.in_avals, list(avals[:nc]) + list(carry))
    _check_avals("while body_jaxpr", body_jaxpr.in_avals, avals[nc:])
    outs = body_jaxpr.out_avals
    if len(outs) != len(carry) or not all(_same_type(a, b) for a, b in zip(outs, carry)):
        raise TypeError(f"while body_jaxpr must return the carry type {_types(carry)}, returns {_types(outs)}")
    co = cond_jaxpr.out_avals
    if len(co) != 1 or co[0].shape != () or co[0].dtype != np.bool_:
        raise TypeError(f"while cond_jaxpr must return a bool scalar, returns {_types(co)}")
    return [a.update(weak_type=a.weak_type and o.weak_type) for a, o in zip(carry, outs)]


abstract_eval_rules[while_p] = _while_abstract


@functools.lru_cache(maxsize=512)
def _while_jvp_jaxprs(cond_jaxpr, body_jaxpr, bconst_nz, carry_nz):
    nb, n = len(bconst_nz), len(carry_nz)
    body, _ = _jvp_jaxpr(body_jaxpr, bconst_nz + carry_nz, carry_nz)
    body, jc = _no_consts(body)
    k, m, nj = sum(bconst_nz), sum(carry_nz), len(jc)
    # invars: jc | bconsts | carry | bconst tangents | carry tangents  ->  jc, bconsts, bconst_t | carry, carry_t
    in_perm = (list(range(nj + nb)) + list(range(nj + nb + n, nj + nb + n + k))
               + list(range(nj + nb, nj + nb + n)) + list(range(nj + nb + n + k, nj + nb + n + k + m)))
    body = _permute(body, in_perm, range(n + m))
    cj = cond_jaxpr.jaxpr
    t_avals = [a.strip_weak() for a, z in zip(body_jaxpr.in_avals[nb:], carry_nz) if z]
    cond = ClosedJaxpr(Jaxpr([], list(cj.invars) + [Var(a) for a in t_avals], cj.eqns, cj.outvars), [])
    return cond, body, jc


def _while_jvp(primals, tangents, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    nc, nb = cond_nconsts, body_nconsts
    bconsts, init = primals[nc:nc + nb], primals[nc + nb:]
    n = len(init)
    bconst_nz = tuple(t is not Zero for t in tangents[nc:nc + nb])
    carry_nz = [t is not Zero for t in tangents[nc + nb:]]
    while True:
        _, out_nz = _jvp_jaxpr(body_jaxpr, bconst_nz + tuple(carry_nz), (False,) * n)
        new = [a or b for a, b in zip(carry_nz, out_nz)]
        if new == carry_nz:
            break
        carry_nz = new
    carry_nz = tuple(carry_nz)
    cond, body, jc = _while_jvp_jaxprs(cond_jaxpr, body_jaxpr, bconst_nz, carry_nz)
    bconst_t = [t for t in tangents[nc:nc + nb] if t is not Zero]
    init_t = [_tangent_zeros(x) if t is Zero else t for x, t, z in zip(init, tangents[nc + nb:], carry_nz) if z]
    outs = bind(while_p, *primals[:nc], *jc, *bconsts, *bconst_t, *init, *init_t, cond_jaxpr=cond,
                body_jaxpr=body, cond_nconsts=nc, body_nconsts=len(jc) + nb + len(bconst_t))
    ts = iter(outs[n:])
    return outs[:n], [next(ts) if z else Zero for z in carry_nz]


jvp_rules[while_p] = _while_jvp


@functools.lru_cache(maxsize=256)
def _while_batched_pred(cond_jaxpr, body_jaxpr, cc_b, bc_b, axis_size):
    """A loop that runs until every lane's predicate is false; finished lanes keep their carry."""
    nc, nb = len(cc_b), len(bc_b)
    bat = lambda a, b: a.update(shape=(axis_size,) + a.shape) if b else a
    cc_avals = [bat(a, b) for a, b in zip(cond_jaxpr.in_avals[:nc], cc_b)]
    bc_avals = [bat(a, b) for a, b in zip(body_jaxpr.in_avals[:nb], bc_b)]
    carry_avals = [bat(a, True) for a in body_jaxpr.in_avals[nb:]]
    n = len(carry_avals)

    def pred_of(cc, carry):
        (p,), (d,) = vmap_flat(_run(cond_jaxpr), list(cc) + list(carry),
                               [0 if b else None for b in cc_b] + [0] * n, axis_size)
        return move_to(p, d, 0, axis_size)

    def cond_f(*args):
        return [bind(R.reduce_or_p, pred_of(args[:nc], args[nc:]), axes=(0,))]

    def body_f(*args):
        cc, bc, carry = args[:nc], args[nc:nc + nb], args[nc + nb:]
        p = pred_of(cc, carry)
        new, nd = vmap_flat(_run(body_jaxpr), list(bc) + list(carry), [0 if b else None for b in bc_b] + [0] * n,
                            axis_size)
        out = []
        for old, x, d in zip(carry, new, nd):
            x = move_to(x, d, 0, axis_size)
            out.append(E.select_n(S.broadcast_in_dim(p, S.shape_of(old), (0,)), old, x))
        return out
    cond, cx = _no_consts(stage(cond_f, cc_avals + carry_avals))
    body, bx = _no_consts(stage(body_f, cc_avals + bc_avals + carry_avals))
    return cond, cx, body, bx


def _while_batch(axis_size, vals, dims, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    nc, nb = cond_nconsts, body_nconsts
    vals = [v if d is None else move_to(v, d, 0, axis_size) for v, d in zip(vals, dims)]
    bat = [d is not None for d in dims]
    cc, bc, carry = vals[:nc], vals[nc:nc + nb], vals[nc + nb:]
    cc_b, bc_b, carry_b = tuple(bat[:nc]), tuple(bat[nc:nc + nb]), list(bat[nc + nb:])
    while True:
        _, ob = _batch_jaxpr(body_jaxpr, bc_b + tuple(carry_b), axis_size, None)
        new = [a or b for a, b in zip(carry_b, ob)]
        if new == carry_b:
            break
        carry_b = new
    _, (pred_b,) = _batch_jaxpr(cond_jaxpr, cc_b + tuple(carry_b), axis_size, None)
    if pred_b:
        carry_b = [True] * len(carry)
        carry = [v if b else move_to(v, None, 0, axis_size) for v, b in zip(carry, bat[nc + nb:])]
        cond, cx, body, bx = _while_batched_pred(cond_jaxpr, body_jaxpr, cc_b, bc_b, axis_size)
        outs = bind(while_p, *cx, *cc, *bx, *cc, *bc, *carry, cond_jaxpr=cond, body_jaxpr=body,
                    cond_nconsts=len(cx) + nc, body_nconsts=len(bx) + nc + nb)
        return outs, [0] * len(carry)
    carry = [move_to(v, None, 0, axis_size) if b and not ib else v
             for v, b, ib in zip(carry, carry_b, bat[nc + nb:])]
    body, bx = _hoisted(_batch_jaxpr(body_jaxpr, bc_b + tuple(carry_b), axis_size, tuple(carry_b))[0])
    cond, cx = _hoisted(_batch_jaxpr(cond_jaxpr, cc_b + tuple(carry_b), axis_size, (False,))[0])
    outs = bind(while_p, *cx, *cc, *bx, *bc, *carry, cond_jaxpr=cond, body_jaxpr=body,
                cond_nconsts=len(cx) + nc, body_nconsts=len(bx) + nb)
    return outs, [0 if b else None for b in carry_b]


batch_rules[while_p] = _while_batch


@functools.lru_cache(maxsize=256)
def _while_known_jaxprs(cond_jaxpr, body_jaxpr, nc, bc_uk, carry_uk):
    n_known = len(carry_uk) - sum(carry_uk)
    known_b = _pe_jaxpr(body_jaxpr, bc_uk + carry_uk, carry_uk)[0]
    known_c = _pe_jaxpr(cond_jaxpr, (False,) * nc + carry_uk, (False,))[0]
    return _no_consts(_prune(known_c, 1)), _no_consts(_prune(known_b, n_known))


def _while_partial_eval(trace, args, params):
    """Known carries run in a known loop; unknown ones in a staged loop that recomputes the rest.

    This is enough for linearize (forward mode); transposing the staged loop then fails with
    the reason in transpose_gaps.
    """
    nc, nb = params["cond_nconsts"], params["body_nconsts"]
    cond_jaxpr, body_jaxpr = params["cond_jaxpr"], params["body_jaxpr"]
    is_uk = _is_unknown(trace)
    uk = [is_uk(a) for a in args]
    if any(uk[:nc]):
        return trace.stage_eqn(while_p, args, params)
    bc_uk, carry_uk = tuple(uk[nc:nc + nb]), list(uk[nc + nb:])
    n = len(carry_uk)
    while True:
        out_uk = _pe_jaxpr(body_jaxpr, bc_uk + tuple(carry_uk), (False,) * n)[2]
        new = [a or b for a, b in zip(carry_uk, out_uk)]
        if new == carry_uk:
            break
        carry_uk = new
    carry_uk = tuple(carry_uk)
    if _pe_jaxpr(cond_jaxpr, (False,) * nc + carry_uk, (False,))[2][0]:
        return trace.stage_eqn(while_p, args, params)
    (kc, kcx), (kb, kbx) = _while_known_jaxprs(cond_jaxpr, body_jaxpr, nc, bc_uk, carry_uk)
    bc, carry = args[nc:nc + nb], args[nc + nb:]
    kbc = [a for a, u in zip(bc, bc_uk) if not u]
    with set_trace(trace.parent):
        k_outs = bind(while_p, *kcx, *args[:nc], *kbx, *kbc, *[a for a, u in zip(carry, carry_uk) if not u],
                      cond_jaxpr=kc, body_jaxpr=kb, cond_nconsts=len(kcx) + nc, body_nconsts=len(kbx) + len(kbc))
    if not any(carry_uk):
        return k_outs
    u_outs = trace.stage_eqn(while_p, args, params)
    ki = iter(k_outs)
    return [u_outs[i] if u else next(ki) for i, u in enumerate(carry_uk)]


partial_eval_rules[while_p] = _while_partial_eval
transpose_gaps[while_p] = _WHILE_REVERSE


def while_loop(cond_fun, body_fun, init_val):
    """Repeat `val = body_fun(val)` while `cond_fun(val)`; returns the final val.

    The carry (a pytree) must keep its structure, shapes and dtypes. Differentiable in
    forward mode only; for reverse mode use fori_loop with Python-int bounds, or scan.
    """
    for fn, nm in ((cond_fun, "cond_fun"), (body_fun, "body_fun")):
        if not callable(fn):
            raise TypeError(f"while_loop: {nm} must be callable, got {type(fn).__name__}")
    leaves, tree = tree_flatten(init_val)
    init = [to_raw(x, "while_loop init_val") for x in leaves]
    paths = _leaf_paths(tree, "init_val")
    in_tree = _tuple_tree(tree)
    for _ in range(3):
        avals = [get_aval(x) for x in init]
        body, body_tree = _trace(body_fun, in_tree, avals, "while_loop body_fun output")
        if body_tree != tree:
            raise TypeError(f"while_loop body_fun must return a carry with the structure of init_val, {tree}, "
                            f"but returned {body_tree}")
        init, changed = _promote_carry(init, body.out_avals, paths, "while_loop body_fun", "init_val")
        if not changed:
            break
    cond, cond_tree = _trace(cond_fun, in_tree, avals, "while_loop cond_fun output")
    co = cond.out_avals
    if len(co) != 1 or co[0].shape != () or co[0].dtype != np.bool_:
        got = co[0].str_short() if len(co) == 1 else f"a pytree of {len(co)} leaves {_types(co)}"
        raise TypeError(f"while_loop cond_fun must return a boolean scalar (shape (), dtype bool), but it "
                        f"returned {got}; reduce it (e.g. xp.all / xp.any) or compare it to get a bool")
    cond, cconsts = _no_consts(cond)
    body, bconsts = _no_consts(body)
    outs = bind(while_p, *cconsts, *bconsts, *init, cond_jaxpr=_intern(cond), body_jaxpr=_intern(body),
                cond_nconsts=len(cconsts), body_nconsts=len(bconsts))
    return tree_unflatten(tree, [box(o) for o in outs])


# ================================================================================= scan

def _scan_abstract(*avals, jaxpr, num_consts, num_carry, length, reverse):
    nc, ncar = num_consts, num_carry
    consts, carry, xs = avals[:nc], avals[nc:nc + ncar], avals[nc + ncar:]
    slices = []
    for a in xs:
        if a.ndim == 0 or a.shape[0] != length:
            raise TypeError(f"scan xs operand {a.str_short()} does not have leading length {length}")
        slices.append(a.update(shape=a.shape[1:]))
    _check_avals("scan jaxpr", jaxpr.in_avals, list(consts) + list(carry) + slices)
    outs = jaxpr.out_avals
    if len(outs) < ncar or not all(_same_type(a, b) for a, b in zip(outs[:ncar], carry)):
        raise TypeError(f"scan jaxpr must return the carry type {_types(carry)} first, returns {_types(outs)}")
    return ([a.update(weak_type=a.weak_type and o.weak_type) for a, o in zip(carry, outs)]
            + [ShapedArray((length,) + y.shape, y.dtype, y.weak_type) for y in outs[ncar:]])


abstract_eval_rules[scan_p] = _scan_abstract


def _split3(seq, a, b):
    return list(seq[:a]), list(seq[a:a + b]), list(seq[a + b:])


@functools.lru_cache(maxsize=512)
def _scan_jvp_jaxpr(jaxpr, nc, ncar, const_nz, carry_nz, x_nz):
    ny = len(jaxpr.out_avals) - ncar
    new, out_nz = _jvp_jaxpr(jaxpr, const_nz + carry_nz + x_nz, carry_nz + (False,) * ny)
    new, jc = _no_consts(new)
    nx, nj = len(x_nz), len(jc)
    kc, kcar, kx = sum(const_nz), sum(carry_nz), sum(x_nz)
    b = nj
    t0 = b + nc + ncar + nx
    in_perm = (list(range(nj)) + list(range(b, b + nc)) + list(range(t0, t0 + kc))
               + list(range(b + nc, b + nc + ncar)) + list(range(t0 + kc, t0 + kc + kcar))
               + list(range(b + nc + ncar, t0)) + list(range(t0 + kc + kcar, t0 + kc + kcar + kx)))
    ys_nz = out_nz[ncar:]
    kys = sum(ys_nz)
    out_perm = (list(range(ncar)) + list(range(ncar + ny, ncar + ny + kcar)) + list(range(ncar, ncar + ny))
                + list(range(ncar + ny + kcar, ncar + ny + kcar + kys)))
    return _permute(new, in_perm, out_perm), jc, ys_nz


def _scan_jvp(primals, tangents, *, jaxpr, num_consts, num_carry, length, reverse):
    nc, ncar = num_consts, num_carry
    ny = len(jaxpr.out_avals) - ncar
    nz = [t is not Zero for t in tangents]
    const_nz, carry_nz, x_nz = tuple(nz[:nc]), list(nz[nc:nc + ncar]), tuple(nz[nc + ncar:])
    while True:
        _, out_nz = _jvp_jaxpr(jaxpr, const_nz + tuple(carry_nz) + x_nz, (False,) * (ncar + ny))
        new = [a or b for a, b in zip(carry_nz, out_nz[:ncar])]
        if new == carry_nz:
            break
        carry_nz = new
    carry_nz = tuple(carry_nz)
    body, jc, ys_nz = _scan_jvp_jaxpr(jaxpr, nc, ncar, const_nz, carry_nz, x_nz)
    consts, init, xs = _split3(primals, nc, ncar)
    c_t = [t for t in tangents[:nc] if t is not Zero]
    init_t = [_tangent_zeros(x) if t is Zero else t
              for x, t, z in zip(init, tangents[nc:nc + ncar], carry_nz) if z]
    x_t = [t for t in tangents[nc + ncar:] if t is not Zero]
    outs = bind(scan_p, *jc, *consts, *c_t, *init, *init_t, *xs, *x_t, jaxpr=body,
                num_consts=len(jc) + nc + len(c_t), num_carry=ncar + len(init_t), length=length, reverse=reverse)
    k = len(init_t)
    carry_t, ys_t = iter(outs[ncar:ncar + k]), iter(outs[ncar + k + ny:])
    primal_out = list(outs[:ncar]) + list(outs[ncar + k:ncar + k + ny])
    return primal_out, [next(carry_t) if z else Zero for z in carry_nz] + [next(ys_t) if z else Zero for z in ys_nz]


jvp_rules[scan_p] = _scan_jvp


def _scan_batch(axis_size, vals, dims, *, jaxpr, num_consts, num_carry, length, reverse):
    nc, ncar = num_consts, num_carry
    ny = len(jaxpr.out_avals) - ncar
    # consts and carries get the batch axis at 0; xs at 1 (axis 0 is scanned over)
    vals = [v if d is None else move_to(v, d, 1 if i >= nc + ncar else 0, axis_size)
            for i, (v, d) in enumerate(zip(vals, dims))]
    bat = [d is not None for d in dims]
    const_b, carry_b, x_b = tuple(bat[:nc]), list(bat[nc:nc + ncar]), tuple(bat[nc + ncar:])
    while True:
        _, ob = _batch_jaxpr(jaxpr, const_b + tuple(carry_b) + x_b, axis_size, None)
        new = [a or b for a, b in zip(carry_b, ob[:ncar])]
        if new == carry_b:
            break
        carry_b = new
    force = tuple(carry_b) + (None,) * ny
    new, out_b = _batch_jaxpr(jaxpr, const_b + tuple(carry_b) + x_b, axis_size, force)
    body, bc = _hoisted(new)
    consts, init, xs = _split3(vals, nc, ncar)
    init = [move_to(v, None, 0, axis_size) if b and not ib else v
            for v, b, ib in zip(init, carry_b, bat[nc:nc + ncar])]
    outs = bind(scan_p, *bc, *consts, *init, *xs, jaxpr=body, num_consts=len(bc) + nc, num_carry=ncar,
                length=length, reverse=reverse)
    return outs, [0 if b else None for b in carry_b] + [1 if b else None for b in out_b[ncar:]]


batch_rules[scan_p] = _scan_batch


@functools.lru_cache(maxsize=512)
def _scan_pe_jaxprs(jaxpr, nc, ncar, const_uk, carry_uk, x_uk):
    """Split a scan body into a known scan (which also stacks residuals) and an unknown scan.

    Residuals that are just known loop constants are passed to the unknown scan as
    constants instead of being stacked per iteration.
    """
    ny = len(jaxpr.out_avals) - ncar
    known, unk, out_uk, n_res = _pe_jaxpr(jaxpr, const_uk + carry_uk + x_uk, carry_uk + (False,) * ny)
    ys_uk = out_uk[ncar:]
    kj = known.jaxpr
    n_kc = nc - sum(const_uk)
    n_kout = len(kj.outvars) - n_res
    res_vars = kj.outvars[n_kout:]
    const_pos = {v: i for i, v in enumerate(kj.invars[:n_kc])}
    constvar_pos = {v: i for i, v in enumerate(kj.constvars)}
    invariant, stacked = [], []
    for j, v in enumerate(res_vars):
        if type(v) is Var and v in const_pos:
            invariant.append((j, "op", const_pos[v]))
        elif type(v) is Var and v in constvar_pos:
            invariant.append((j, "kc", constvar_pos[v]))
        else:
            stacked.append(j)
    known_body = Jaxpr(kj.constvars, kj.invars, kj.eqns, list(kj.outvars[:n_kout]) + [res_vars[j] for j in stacked])
    kbody, kconsts = _no_consts(ClosedJaxpr(dce_jaxpr(known_body), known.consts))
    uj = unk.jaxpr
    res_in, uk_in = uj.invars[:n_res], uj.invars[n_res:]
    n_ukc, n_ukcar = sum(const_uk), sum(carry_uk)
    invars = ([res_in[j] for j, _, _ in invariant] + list(uk_in[:n_ukc]) + list(uk_in[n_ukc:n_ukc + n_ukcar])
              + [res_in[j] for j in stacked] + list(uk_in[n_ukc + n_ukcar:]))
    ubody = ClosedJaxpr(Jaxpr([], invars, uj.eqns, uj.outvars), [])
    return kbody, kconsts, ubody, ys_uk, tuple((kind, i) for _, kind, i in invariant)


def _scan_partial_eval(trace, args, params):
    jaxpr, nc, ncar = params["jaxpr"], params["num_consts"], params["num_carry"]
    length, reverse = params["length"], params["reverse"]
    ny = len(jaxpr.out_avals) - ncar
    is_uk = _is_unknown(trace)
    uk = [is_uk(a) for a in args]
    const_uk, carry_uk, x_uk = tuple(uk[:nc]), list(uk[nc:nc + ncar]), tuple(uk[nc + ncar:])
    while True:
        out_uk = _pe_jaxpr(jaxpr, const_uk + tuple(carry_uk) + x_uk, (False,) * (ncar + ny))[2]
        new = [a or b for a, b in zip(carry_uk, out_uk[:ncar])]
        if new == carry_uk:
            break
        carry_uk = new
    carry_uk = tuple(carry_uk)
    kbody, kconsts, ubody, ys_uk, invariant = _scan_pe_jaxprs(jaxpr, nc, ncar, const_uk, carry_uk, x_uk)
    consts, init, xs = _split3(args, nc, ncar)
    k_consts = [a for a, u in zip(consts, const_uk) if not u]
    n_kcar, n_kys = ncar - sum(carry_uk), ny - sum(ys_uk)
    with set_trace(trace.parent):
        k_outs = bind(scan_p, *kconsts, *k_consts, *[a for a, u in zip(init, carry_uk) if not u],
                      *[a for a, u in zip(xs, x_uk) if not u], jaxpr=kbody, num_consts=len(kconsts) + len(k_consts),
                      num_carry=n_kcar, length=length, reverse=reverse)
    k_carry, k_ys, stacked = k_outs[:n_kcar], k_outs[n_kcar:n_kcar + n_kys], k_outs[n_kcar + n_kys:]
    if any(carry_uk) or any(ys_uk):
        inv = [k_consts[i] if kind == "op" else kconsts[i] for kind, i in invariant]
        u_args = (inv + [a for a, u in zip(consts, const_uk) if u] + [a for a, u in zip(init, carry_uk) if u]
                  + list(stacked) + [a for a, u in zip(xs, x_uk) if u])
        u_outs = trace.stage_eqn(scan_p, u_args, dict(jaxpr=ubody, num_consts=len(inv) + sum(const_uk),
                                                      num_carry=sum(carry_uk), length=length, reverse=reverse))
    else:
        u_outs = []
    ui, kc, ky = iter(u_outs), iter(k_carry), iter(k_ys)
    return [next(ui) if u else next(kc) for u in carry_uk] + [next(ui) if u else next(ky) for u in ys_uk]


partial_eval_rules[scan_p] = _scan_partial_eval


@functools.lru_cache(maxsize=512)
def _scan_transpose_jaxpr(jaxpr, nc, ncar, const_lin, x_lin):
    """Body of the reversed scan: (res consts | const-ct accumulators, carry cts | y cts, res xs)."""
    c_avals, car_avals, x_avals = _split3(jaxpr.in_avals, nc, ncar)
    y_avals = jaxpr.out_avals[ncar:]
    res_c = [a for a, lin in zip(c_avals, const_lin) if not lin]
    acc_avals = [a.strip_weak() for a, lin in zip(c_avals, const_lin) if lin]
    ct_car = [a.strip_weak() for a in car_avals]
    ct_y = [a.strip_weak() for a in y_avals]
    res_x = [a for a, lin in zip(x_avals, x_lin) if not lin]
    lin_x = [a.strip_weak() for a, lin in zip(x_avals, x_lin) if lin]
    sizes = np.cumsum([0, len(res_c), len(acc_avals), len(ct_car), len(ct_y), len(res_x)]).tolist()

    def f(*args):
        rc, acc, cc, cy, rx = [args[sizes[i]:sizes[i + 1]] for i in range(5)]
        rci, rxi = iter(rc), iter(rx)
        primals = ([UndefPrimal(a) if lin else next(rci) for a, lin in zip(c_avals, const_lin)]
                   + [UndefPrimal(a) for a in car_avals]
                   + [UndefPrimal(a) if lin else next(rxi) for a, lin in zip(x_avals, x_lin)])
        out = backward_pass(jaxpr.jaxpr, jaxpr.consts, list(cc) + list(cy), primals)
        ct_c = [o for o, lin in zip(out[:nc], const_lin) if lin]
        ct_c = [a if o is Zero else E.add(a, o) for a, o in zip(acc, ct_c)]
        ct_init = [_zeros(a) if o is Zero else o for o, a in zip(out[nc:nc + ncar], ct_car)]
        ct_x = [o for o, lin in zip(out[nc + ncar:], x_lin) if lin]
        ct_x = [_zeros(a) if o is Zero else o for o, a in zip(ct_x, lin_x)]
        return ct_c + ct_init + ct_x
    return _no_consts(stage(f, res_c + acc_avals + ct_car + ct_y + res_x))


def _scan_transpose(cts, *args, jaxpr, num_consts, num_carry, length, reverse):
    """Transpose of a scan linear in its carries and the UndefPrimal consts/xs: a reversed scan.

    Carries are treated as linear (in a linearized scan they are tangents; a known initial
    carry there is an instantiated zero), constants' cotangents accumulate in the carry.
    """
    nc, ncar = num_consts, num_carry
    consts, init, xs = _split3(args, nc, ncar)
    const_lin = tuple(is_undefined(a) for a in consts)
    x_lin = tuple(is_undefined(a) for a in xs)
    outs_avals = jaxpr.out_avals
    ct_car = [_zeros(a.strip_weak()) if c is Zero else c for c, a in zip(cts[:ncar], outs_avals[:ncar])]
    ct_ys = [_zeros(ShapedArray((length,) + a.shape, a.dtype)) if c is Zero else c
             for c, a in zip(cts[ncar:], outs_avals[ncar:])]
    body, tconsts = _scan_transpose_jaxpr(jaxpr, nc, ncar, const_lin, x_lin)
    res_c = [a for a in consts if not is_undefined(a)]
    res_x = [a for a in xs if not is_undefined(a)]
    acc0 = [_zeros(a.aval.strip_weak()) for a in consts if is_undefined(a)]
    outs = bind(scan_p, *tconsts, *res_c, *acc0, *ct_car, *ct_ys, *res_x, jaxpr=body,
                num_consts=len(tconsts) + len(res_c), num_carry=len(acc0) + ncar, length=length,
                reverse=not reverse)
    na = len(acc0)
    ct_c, ct_init, ct_x = iter(outs[:na]), outs[na:na + ncar], iter(outs[na + ncar:])
    return ([next(ct_c) if lin else None for lin in const_lin]
            + [c if is_undefined(a) else None for c, a in zip(ct_init, init)]
            + [next(ct_x) if lin else None for lin in x_lin])


transpose_rules[scan_p] = _scan_transpose


def scan(f, init, xs, length=None, reverse=False):
    """Loop `carry, y = f(carry, x)` over the leading axis of xs; returns (carry, stacked ys).

    xs (a pytree, or None with `length`) is sliced along axis 0; `reverse=True` walks it
    from the end (ys keep xs' order). Differentiable in forward and reverse mode.
    """
    if not callable(f):
        raise TypeError(f"scan: f must be callable, got {type(f).__name__}")
    c_leaves, c_tree = tree_flatten(init)
    x_leaves, x_tree = tree_flatten(xs)
    carry = [to_raw(x, "scan init") for x in c_leaves]
    xs_raw = [to_raw(x, "scan xs") for x in x_leaves]
    x_paths = _leaf_paths(x_tree, "xs")
    lens = []
    for x, p in zip(xs_raw, x_paths):
        a = get_aval(x)
        if a.ndim == 0:
            raise ValueError(f"scan: every leaf of xs needs a leading axis to scan over, but {p} is a scalar "
                             f"({a.str_short()})")
        lens.append(a.shape[0])
    if length is not None:
        try:
            length = operator.index(length)
        except TypeError:
            raise TypeError(f"scan: length must be a Python int, got {type(length).__name__}") from None
        if length < 0:
            raise ValueError(f"scan: length must be non-negative, got {length}")
    if len(set(lens)) > 1:
        desc = ", ".join(f"{p} has length {n}" for p, n in zip(x_paths, lens))
        raise ValueError(f"scan: all leaves of xs must have the same leading length, but {desc}")
    if lens and length is not None and lens[0] != length:
        raise ValueError(f"scan: length={length} but the leaves of xs have leading length {lens[0]} "
                         f"({x_paths[0]})")
    if not lens and length is None:
        raise ValueError("scan: pass length= when xs has no leaves (e.g. xs=None)")
    n = lens[0] if lens else length
    c_paths = _leaf_paths(c_tree, "init")
    in_tree = _tuple_tree(c_tree, x_tree)
    x_avals = [get_aval(x).update(shape=get_aval(x).shape[1:]) for x in xs_raw]
    for _ in range(3):
        c_avals = [get_aval(c) for c in carry]
        body, out_tree = _trace(f, in_tree, c_avals + x_avals, "scan body output")
        if out_tree.kind not in (tuple, list) or len(out_tree.children) != 2:
            raise TypeError(f"scan: the body must return a pair (carry, y), but returned {out_tree}")
        if out_tree.children[0] != c_tree:
            raise TypeError(f"scan: the body must return a carry with the structure of init, {c_tree}, but "
                            f"returned {out_tree.children[0]}")
        carry, changed = _promote_carry(carry, body.out_avals[:len(carry)], c_paths, "scan body", "init")
        if not changed:
            break
    y_tree = out_tree.children[1]
    body, consts = _no_consts(body)
    outs = bind(scan_p, *consts, *carry, *xs_raw, jaxpr=_intern(body), num_consts=len(consts), num_carry=len(carry),
                length=n, reverse=bool(reverse))
    nc = len(carry)
    return (tree_unflatten(c_tree, [box(o) for o in outs[:nc]]),
            tree_unflatten(y_tree, [box(o) for o in outs[nc:]]))


def _is_static_int(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def fori_loop(lower, upper, body_fun, init_val):
    """val = body_fun(i, val) for i in range(lower, upper).

    With Python/NumPy int bounds the trip count is static and the loop is a scan, so it
    is reverse-differentiable; with traced bounds it is a while_loop (forward mode only).
    """
    if not callable(body_fun):
        raise TypeError(f"fori_loop: body_fun must be callable, got {type(body_fun).__name__}")
    if _is_static_int(lower) and _is_static_int(upper):
        n = max(int(upper) - int(lower), 0)

        def step(carry, _):
            i, x = carry
            return (i + 1, body_fun(i, x)), None
        (_, out), _ = scan(step, (box(to_raw(lower, "fori_loop lower")), init_val), None, length=n)
        return out
    lo, hi = to_raw(lower, "fori_loop lower"), to_raw(upper, "fori_loop upper")
    for v, nm in ((lo, "lower"), (hi, "upper")):
        a = get_aval(v)
        if a.shape != () or a.dtype.kind not in "iu":
            raise TypeError(f"fori_loop: {nm} must be an integer scalar, got {a.str_short()}")

    def cond_f(c):
        return c[0] < c[1]

    def body_f(c):
        i, u, x = c
        return i + 1, u, body_fun(i, x)
    return while_loop(cond_f, body_f, (box(lo), box(hi), init_val))[2]


def map(f, xs):  # noqa: A001  (the JAX name)
    """[f(x) for x in xs] along the leading axis, stacked; one scan."""
    return scan(lambda c, x: (c, f(x)), (), xs)[1]
