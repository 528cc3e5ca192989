"""while_p: `while_loop` as one primitive, with all its rules, and `while_raw` for rule authors.

Operands (*cond_consts, *body_consts, *carry); params `cond_jaxpr`, `body_jaxpr`, `cond_nconsts`,
`body_nconsts`. The rules first find which carries get a tangent, a batch axis or become unknown
(`carry_fixed_point`), so the body keeps one type, then transform the body with the shared jaxpr
transforms. Reverse mode is a declared gap: the trip count is known only at run time.
"""
from __future__ import annotations

import functools

import numpy as np

from .api_util import box, to_raw
from .batching import move_to, vmap_flat
from .core import Primitive, abstract_eval_rules, bind, get_aval, set_trace
from .control_flow_util import (check_avals, hoist_consts, hoist_consts_cached, intern_jaxpr, leaf_paths, permute,
                                promote_carry, prune, same_type, trace_user, tuple_tree, types_str)
from .jaxpr import ClosedJaxpr, Jaxpr, Var
from .jaxpr_transforms import (batch_jaxpr, carry_fixed_point, is_unknown_in, jvp_jaxpr, partial_eval_jaxpr,
                               run_jaxpr, stage)
from .primitives import elementwise as E
from .primitives import reductions as R
from .primitives import structural as S
from .pytree import tree_flatten, tree_unflatten
from .rules import Zero, batch_rules, jvp_rules, partial_eval_rules, transpose_gaps
from .traceback_util import api_boundary

while_p = Primitive("while", multiple_results=True)

transpose_gaps[while_p] = ("reverse-mode differentiation of while_loop is not supported (its trip count is only "
                           "known at run time, so there is nothing to store the forward values in); use fori_loop "
                           "with a static trip count (Python int bounds) or scan instead. Forward mode (jvp, "
                           "jacfwd) works.")


def _while_abstract(*avals, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    nc, nb = cond_nconsts, body_nconsts
    carry = avals[nc + nb:]
    check_avals("while cond_jaxpr", cond_jaxpr.in_avals, list(avals[:nc]) + list(carry))
    check_avals("while body_jaxpr", body_jaxpr.in_avals, avals[nc:])
    outs = body_jaxpr.out_avals
    if len(outs) != len(carry) or not all(same_type(a, b) for a, b in zip(outs, carry)):
        raise TypeError(f"while body_jaxpr must return the carry type {types_str(carry)}, returns {types_str(outs)}")
    co = cond_jaxpr.out_avals
    if len(co) != 1 or co[0].shape != () or co[0].dtype != np.bool_:
        raise TypeError(f"while cond_jaxpr must return a bool scalar, returns {types_str(co)}")
    return [a.update(weak_type=a.weak_type and o.weak_type) for a, o in zip(carry, outs)]


abstract_eval_rules[while_p] = _while_abstract


@functools.lru_cache(maxsize=512)
def _while_jvp_jaxprs(cond_jaxpr, body_jaxpr, bconst_nz, carry_nz):
    nb, n = len(bconst_nz), len(carry_nz)
    body, jc = hoist_consts(jvp_jaxpr(body_jaxpr, bconst_nz + carry_nz, carry_nz)[0])
    k, m, nj = sum(bconst_nz), sum(carry_nz), len(jc)
    # invars: jc | bconsts | carry | bconst tangents | carry tangents  ->  jc, bconsts, bconst_t | carry, carry_t
    in_perm = (list(range(nj + nb)) + list(range(nj + nb + n, nj + nb + n + k))
               + list(range(nj + nb, nj + nb + n)) + list(range(nj + nb + n + k, nj + nb + n + k + m)))
    body = permute(body, in_perm, range(n + m))
    cj = cond_jaxpr.jaxpr
    t_avals = [a.strip_weak() for a, z in zip(body_jaxpr.in_avals[nb:], carry_nz) if z]
    cond = ClosedJaxpr(Jaxpr([], list(cj.invars) + [Var(a) for a in t_avals], cj.eqns, cj.outvars), [])
    return cond, body, jc


def _while_jvp(primals, tangents, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    nc, nb = cond_nconsts, body_nconsts
    bconsts, init = primals[nc:nc + nb], primals[nc + nb:]
    n = len(init)
    bconst_nz = tuple(t is not Zero for t in tangents[nc:nc + nb])
    carry_nz = carry_fixed_point([t is not Zero for t in tangents[nc + nb:]],
                                 lambda c: jvp_jaxpr(body_jaxpr, bconst_nz + c, False)[1])
    cond, body, jc = _while_jvp_jaxprs(cond_jaxpr, body_jaxpr, bconst_nz, carry_nz)
    bconst_t = [t for t in tangents[nc:nc + nb] if t is not Zero]
    init_t = [S.zeros_of_aval(get_aval(x).strip_weak()) if t is Zero else t
              for x, t, z in zip(init, tangents[nc + nb:], carry_nz) if z]
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
        (p,), (d,) = vmap_flat(run_jaxpr(cond_jaxpr), list(cc) + list(carry),
                               [0 if b else None for b in cc_b] + [0] * n, axis_size)
        return move_to(p, d, 0, axis_size)

    def cond_f(*args):
        return [bind(R.reduce_or_p, pred_of(args[:nc], args[nc:]), axes=(0,))]

    def body_f(*args):
        cc, bc, carry = args[:nc], args[nc:nc + nb], args[nc + nb:]
        p = pred_of(cc, carry)
        new, nd = vmap_flat(run_jaxpr(body_jaxpr), list(bc) + list(carry),
                            [0 if b else None for b in bc_b] + [0] * n, axis_size)
        out = []
        for old, x, d in zip(carry, new, nd):
            x = move_to(x, d, 0, axis_size)
            out.append(E.select_n(S.broadcast_in_dim(p, S.shape_of(old), (0,)), old, x))
        return out
    cond, cx = hoist_consts(stage(cond_f, cc_avals + carry_avals))
    body, bx = hoist_consts(stage(body_f, cc_avals + bc_avals + carry_avals))
    return cond, cx, body, bx


def _while_batch(axis_size, vals, dims, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    nc, nb = cond_nconsts, body_nconsts
    vals = [v if d is None else move_to(v, d, 0, axis_size) for v, d in zip(vals, dims)]
    bat = [d is not None for d in dims]
    cc, bc, carry = vals[:nc], vals[nc:nc + nb], vals[nc + nb:]
    cc_b, bc_b = tuple(bat[:nc]), tuple(bat[nc:nc + nb])
    at0 = lambda flags: tuple(0 if b else None for b in flags)
    carry_b = carry_fixed_point(bat[nc + nb:], lambda c: [d is not None for d in
                                                          batch_jaxpr(body_jaxpr, at0(bc_b + c), axis_size)[1]])
    if batch_jaxpr(cond_jaxpr, at0(cc_b + carry_b), axis_size)[1][0] is not None:
        carry = [v if b else move_to(v, None, 0, axis_size) for v, b in zip(carry, bat[nc + nb:])]
        cond, cx, body, bx = _while_batched_pred(cond_jaxpr, body_jaxpr, cc_b, bc_b, axis_size)
        outs = bind(while_p, *cx, *cc, *bx, *cc, *bc, *carry, cond_jaxpr=cond, body_jaxpr=body,
                    cond_nconsts=len(cx) + nc, body_nconsts=len(bx) + nc + nb)
        return outs, [0] * len(carry)
    carry = [move_to(v, None, 0, axis_size) if b and not ib else v
             for v, b, ib in zip(carry, carry_b, bat[nc + nb:])]
    body, bx = hoist_consts_cached(batch_jaxpr(body_jaxpr, at0(bc_b + carry_b), axis_size, carry_b)[0])
    cond, cx = hoist_consts_cached(batch_jaxpr(cond_jaxpr, at0(cc_b + carry_b), axis_size, (False,))[0])
    outs = bind(while_p, *cx, *cc, *bx, *bc, *carry, cond_jaxpr=cond, body_jaxpr=body,
                cond_nconsts=len(cx) + nc, body_nconsts=len(bx) + nb)
    return outs, [0 if b else None for b in carry_b]


batch_rules[while_p] = _while_batch


@functools.lru_cache(maxsize=256)
def _while_known_jaxprs(cond_jaxpr, body_jaxpr, nc, bc_uk, carry_uk):
    n_known = len(carry_uk) - sum(carry_uk)
    known_b = partial_eval_jaxpr(body_jaxpr, bc_uk + carry_uk, carry_uk)[0]
    known_c = partial_eval_jaxpr(cond_jaxpr, (False,) * nc + carry_uk)[0]
    return hoist_consts(prune(known_c, 1)), hoist_consts(prune(known_b, n_known))


def _while_partial_eval(trace, args, params):
    """Known carries run in a known loop; unknown ones in a staged loop that recomputes the rest.

    This is enough for linearize (forward mode); transposing the staged loop then fails with
    the reason in transpose_gaps.
    """
    nc, nb = params["cond_nconsts"], params["body_nconsts"]
    cond_jaxpr, body_jaxpr = params["cond_jaxpr"], params["body_jaxpr"]
    uk = [is_unknown_in(trace)(a) for a in args]
    if any(uk[:nc]):
        return trace.stage_eqn(while_p, args, params)
    bc_uk = tuple(uk[nc:nc + nb])
    carry_uk = carry_fixed_point(uk[nc + nb:], lambda c: partial_eval_jaxpr(body_jaxpr, bc_uk + c)[2])
    if partial_eval_jaxpr(cond_jaxpr, (False,) * nc + carry_uk)[2][0]:
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


# ---------------------------------------------------------------------------- public API

def _bind_while(cond, body, init):
    cond, cconsts = hoist_consts(cond)
    body, bconsts = hoist_consts(body)
    return bind(while_p, *cconsts, *bconsts, *init, cond_jaxpr=intern_jaxpr(cond), body_jaxpr=intern_jaxpr(body),
                cond_nconsts=len(cconsts), body_nconsts=len(bconsts))


def while_raw(cond, body, init):
    """while_loop on raw values, for primitive implementations and rules (no pytrees, no Arrays).

    cond(*carry) -> a bool scalar; body(*carry) -> the carry (same avals). Returns the final carry.
    """
    avals = [get_aval(v) for v in init]
    return _bind_while(stage(lambda *c: [cond(*c)], avals), stage(lambda *c: list(body(*c)), avals), list(init))


@api_boundary
def while_loop(cond_fun, body_fun, init_val):
    """Repeat `val = body_fun(val)` while `cond_fun(val)`; returns the final val.

    The carry (a pytree) must keep its structure, shapes and dtypes. Differentiable in
    forward mode only; for reverse mode use fori_loop with Python-int bounds, or scan.

    Parameters: cond_fun (callable): carry -> bool scalar. body_fun (callable): carry -> carry.
        init_val: the initial carry (a pytree of arrays).
    Returns: the final carry.
    Raises: TypeError: for non-callables, a non-boolean-scalar cond_fun, or a body_fun changing the
        carry's types.

    >>> while_loop(lambda c: c < 10, lambda c: c * 2, xp.asarray(1))
    Array(16)
    """
    for fn, nm in ((cond_fun, "cond_fun"), (body_fun, "body_fun")):
        if not callable(fn):
            raise TypeError(f"while_loop: {nm} must be callable, got {type(fn).__name__}")
    leaves, tree = tree_flatten(init_val)
    init = [to_raw(x, "while_loop init_val") for x in leaves]
    paths = leaf_paths(tree, "init_val")
    in_tree = tuple_tree(tree)
    for _ in range(3):
        avals = [get_aval(x) for x in init]
        body, body_tree = trace_user(body_fun, in_tree, avals, "while_loop body_fun output")
        if body_tree != tree:
            raise TypeError(f"while_loop body_fun must return a carry with the structure of init_val, {tree}, "
                            f"but returned {body_tree}")
        init, changed = promote_carry(init, body.out_avals, paths, "while_loop body_fun", "init_val")
        if not changed:
            break
    cond, cond_tree = trace_user(cond_fun, in_tree, avals, "while_loop cond_fun output")
    co = cond.out_avals
    if len(co) != 1 or co[0].shape != () or co[0].dtype != np.bool_:
        got = co[0].str_short() if len(co) == 1 else f"a pytree of {len(co)} leaves {types_str(co)}"
        raise TypeError(f"while_loop cond_fun must return a boolean scalar (shape (), dtype bool), but it "
                        f"returned {got}; reduce it (e.g. xp.all / xp.any) or compare it to get a bool")
    return tree_unflatten(tree, [box(o) for o in _bind_while(cond, body, init)])
