"""cond_p: `cond` and `switch` as one primitive choosing among branch jaxprs, with all its rules.

Operands (index, *ops); params `branches`, a tuple of constant-free jaxprs of identical type.
The index is an int32 scalar; out-of-range indices are clamped (lowering and batching agree).
Every rule transforms each branch with the shared jaxpr transforms (jaxpr_transforms.py), after
agreeing across branches which outputs get a tangent, a batch axis or become unknown, and binds
cond_p again.
"""
from __future__ import annotations

import functools

import numpy as np

from .api_util import Store, alias_pattern, box, flatten_fun, shares_data, to_raw, write_back
from .batching import move_to, vmap_flat
from .core import Primitive, abstract_eval_rules, bind, get_aval, set_trace
from .control_flow_util import (KIND_RANK, check_avals, intern_jaxpr, join_consts, join_consts_cached, leaf_paths,
                                same_type, types_str)
from .jaxpr import eval_jaxpr
from .jaxpr_transforms import (batch_jaxpr, is_unknown_in, jvp_jaxpr, partial_eval_jaxpr, run_jaxpr, stage,
                               transpose_jaxpr)
from .primitives import elementwise as E
from .primitives import structural as S
from .pytree import tree_flatten, tree_unflatten
from .rules import Zero, batch_rules, is_undefined, jvp_rules, partial_eval_rules, transpose_rules
from .traceback_util import api_boundary

cond_p = Primitive("cond", multiple_results=True)


def _cond_abstract(index, *ops, branches):
    if index.shape != () or index.dtype != np.int32:
        raise TypeError(f"cond index must be an int32 scalar, got {index.str_short()}")
    if not branches:
        raise TypeError("cond needs at least one branch")
    for i, br in enumerate(branches):
        check_avals(f"cond branch {i}", br.in_avals, ops)
    outs0 = branches[0].out_avals
    for i, br in enumerate(branches[1:], 1):
        if len(br.out_avals) != len(outs0) or not all(same_type(a, b) for a, b in zip(br.out_avals, outs0)):
            raise TypeError(f"cond branches must return identical types: branch 0 returns {types_str(outs0)}, "
                            f"branch {i} returns {types_str(br.out_avals)}")
    return [a.update(weak_type=all(br.out_avals[k].weak_type for br in branches)) for k, a in enumerate(outs0)]


abstract_eval_rules[cond_p] = _cond_abstract


def _bind_cond(index, ops, closeds):
    branches, consts = join_consts_cached(tuple(closeds))
    return bind(cond_p, index, *consts, *ops, branches=branches)


def _any_branch(flags_of, branches, n_out):
    """Per output: whether any branch has the property (so every branch is given it)."""
    out = [False] * n_out
    for br in branches:
        out = [a or b for a, b in zip(out, flags_of(br))]
    return tuple(out)


def _cond_jvp(primals, tangents, *, branches):
    index, ops = primals[0], primals[1:]
    nz = tuple(t is not Zero for t in tangents[1:])
    n_out = len(branches[0].out_avals)
    inst = _any_branch(lambda br: jvp_jaxpr(br, nz, False)[1], branches, n_out)
    new = [jvp_jaxpr(br, nz, inst)[0] for br in branches]
    outs = _bind_cond(index, list(ops) + [t for t in tangents[1:] if t is not Zero], new)
    ts = iter(outs[n_out:])
    return outs[:n_out], [next(ts) if h else Zero for h in inst]


jvp_rules[cond_p] = _cond_jvp


def _select_per_example(axis_size, index, idim, ops, dims, branches):
    """A per-example index: run every branch on the whole batch, then pick per example."""
    idx = move_to(index, idim, 0, axis_size)
    n = len(branches)
    idx = bind(E.max_p, bind(E.min_p, idx, E.full_like_scalar(idx, n - 1)), E.full_like_scalar(idx, 0))
    if n == 2:
        idx = bind(E.ne_p, idx, E.full_like_scalar(idx, 0))
    outs = []
    for br in branches:
        o, od = vmap_flat(run_jaxpr(br), ops, dims, axis_size)
        outs.append([move_to(x, d, 0, axis_size) for x, d in zip(o, od)])
    res = []
    for k in range(len(branches[0].out_avals)):
        cases = [o[k] for o in outs]
        res.append(E.select_n(S.broadcast_in_dim(idx, S.shape_of(cases[0]), (0,)), *cases))
    return res, [0] * len(res)


def _cond_batch(axis_size, vals, dims, *, branches):
    index, ops = vals[0], list(vals[1:])
    ops = [v if d is None else move_to(v, d, 0, axis_size) for v, d in zip(ops, dims[1:])]
    in_dims = tuple(None if d is None else 0 for d in dims[1:])
    if dims[0] is not None:
        return _select_per_example(axis_size, index, dims[0], ops, in_dims, branches)
    n_out = len(branches[0].out_avals)
    out_bat = _any_branch(lambda br: [d is not None for d in batch_jaxpr(br, in_dims, axis_size)[1]],
                          branches, n_out)
    new = [batch_jaxpr(br, in_dims, axis_size, out_bat)[0] for br in branches]
    return _bind_cond(index, ops, new), [0 if b else None for b in out_bat]


batch_rules[cond_p] = _cond_batch


@functools.lru_cache(maxsize=512)
def _cond_pe_branches(branches, unknowns, out_uk):
    """Known and unknown branches whose residual lists agree.

    Every branch's residuals get their own slots; a branch fills the others' slots with
    zeros in its known part and ignores them in its unknown part.
    """
    parts = [partial_eval_jaxpr(br, unknowns, out_uk) for br in branches]
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
                full += list(outs[n_known:]) if j == i else [S.zeros_of_aval(a) for a in r]
            return full

        def fu(*args, unk=unk, i=i):
            own = args[offs[i]:offs[i + 1]]
            return eval_jaxpr(unk.jaxpr, unk.consts, *own, *args[len(flat_res):])
        kb.append(stage(fk, known_in))
        ub.append(stage(fu, flat_res + unk_in))
    return join_consts(kb), join_consts(ub)


def _cond_partial_eval(trace, args, params):
    branches = params["branches"]
    is_uk = is_unknown_in(trace)
    index, ops = args[0], args[1:]
    if is_uk(index):
        return trace.stage_eqn(cond_p, args, params)
    unknowns = tuple(is_uk(a) for a in ops)
    n_out = len(branches[0].out_avals)
    out_uk = _any_branch(lambda br: partial_eval_jaxpr(br, unknowns)[2], branches, n_out)
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
    cts = [S.zeros_of_aval(a.strip_weak()) if c is Zero else c for c, a in zip(cts, branches[0].out_avals)]
    new = [transpose_jaxpr(br, linear) for br in branches]
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
        if all(same_type(a, avs[0]) for a in avs):
            targets.append(None)
            continue
        strong = {a.dtype for a in avs if not a.weak_type}
        if all(a.shape == avs[0].shape for a in avs) and len(strong) == 1:
            dt = next(iter(strong))
            if all(KIND_RANK[dt.kind] >= KIND_RANK[a.dtype.kind] for a in avs):
                targets.append(dt)
                need = True
                continue
        j = next(j for j, a in enumerate(avs) if not same_type(a, avs[0]))
        raise TypeError(f"{who}: all branches must return identical types (shape and dtype), but "
                        f"{paths[k]} is {avs[0].str_short()} in {names[0]} and {avs[j].str_short()} in "
                        f"{names[j]}")
    if not need:
        return closeds
    out = []
    for c in closeds:
        def f(*args, c=c):
            return [o if t is None or get_aval(o).dtype == t else E.convert_element_type(o, t)
                    for o, t in zip(run_jaxpr(c)(*args), targets)]
        out.append(stage(f, c.in_avals))
    return out


def _cond(index, funs, names, operands, who):
    for fn, nm in zip(funs, names):
        if not callable(fn):
            raise TypeError(f"{who}: {nm} must be callable, got {type(fn).__name__}")
    leaves, tree = tree_flatten(tuple(operands))
    ops = [to_raw(x, f"{who} operand") for x in leaves]
    avals = [get_aval(x) for x in ops]
    aliases = alias_pattern(leaves)
    closeds, stores = _trace_branches(funs, names, tree, avals, who, None)
    if any(shares_data(st.mutated, aliases) for st in stores):   # (a written operand shares data with another)
        closeds, stores = _trace_branches(funs, names, tree, avals, who, aliases)
    trees = [st.val for st in stores]
    for nm, t in zip(names[1:], trees[1:]):
        if t != trees[0]:
            raise TypeError(f"{who}: all branches must return the same pytree structure, but {names[0]} returns "
                            f"{trees[0]} and {nm} returns {t}")
    mutated = sorted(set().union(*(st.mutated for st in stores)))
    if mutated:
        closeds = [_with_finals(c, st.mutated, mutated) for c, st in zip(closeds, stores)]
    paths = leaf_paths(trees[0], "output") + [f"operand leaf {i} (written into)" for i in mutated]
    closeds = _unify_outputs(closeds, names, paths, who)
    branches, consts = join_consts(closeds)
    outs = bind(cond_p, index, *consts, *ops, branches=tuple(intern_jaxpr(b) for b in branches))
    n = len(outs) - len(mutated)
    if mutated:
        write_back(leaves, mutated, outs[n:], who)
    return tree_unflatten(trees[0], [box(o) for o in outs[:n]])


def _trace_branches(funs, names, tree, avals, who, aliases):
    """Each branch staged with the final values of the operands it writes into after its outputs, as eager
    code writes into the caller's arrays: (closed jaxprs, their Stores: output tree and written leaves)."""
    closeds, stores = [], []
    for fn, nm in zip(funs, names):
        st = Store()
        closeds.append(stage(flatten_fun(fn, tree, st, f"{who} {nm} output", aliases=aliases, writeback=True),
                             list(avals)))
        stores.append(st)
    return closeds, stores


def _with_finals(closed, own, mutated):
    """closed, whose outputs end with the final values of operand leaves `own`, made to end with those of
    `mutated` (every branch's written leaves): a leaf this branch leaves alone comes out as it went in."""
    n = len(closed.out_avals) - len(own)

    def f(*args):
        outs = run_jaxpr(closed)(*args)
        fin = dict(zip(own, outs[n:]))
        return list(outs[:n]) + [fin.get(i, args[i]) for i in mutated]
    return stage(f, closed.in_avals)


@api_boundary
def cond(pred, true_fun, false_fun, *operands):
    """true_fun(*operands) if pred else false_fun(*operands), as one staged primitive.

    Both branches are traced; they must return the same pytree of identical types.
    Under vmap with a batched predicate both branches run and the results are selected.

    Parameters: pred (bool or numeric scalar Array): which branch. true_fun, false_fun (callable):
        the branches, each taking *operands. operands: the branches' arguments (pytrees).
    Returns: the chosen branch's output.
    Raises: TypeError: for a non-scalar or non-numeric pred, or branches returning different types.

    >>> x = xp.asarray([1.0, 2.0])
    >>> cond(x[0] > 0, lambda v: v + 1, lambda v: v - 1, x)
    Array([2., 3.])
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


@api_boundary
def switch(index, branches, *operands):
    """branches[index](*operands); the index is clamped to [0, len(branches) - 1].

    Parameters: index (int or integer scalar Array): which branch. branches (sequence of callables):
        each takes *operands. operands: the branches' arguments.
    Returns: the chosen branch's output.
    Raises: ValueError: for no branches; TypeError: for a non-integer index, or branches returning
        different types.

    >>> switch(1, [lambda v: v, lambda v: v * 10], xp.asarray([1.0, 2.0]))
    Array([10., 20.])
    """
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
