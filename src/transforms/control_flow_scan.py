"""scan_p: `scan` (and `map`) as one primitive looping a body over the leading axis, with all its rules.

Operands (*consts, *carry, *xs); params `jaxpr` (consts, carry, x -> carry, y), `num_consts`,
`num_carry`, `length`, `reverse`; outputs (*carry, *stacked ys). The rules find which carries get a
tangent, a batch axis or become unknown (`carry_fixed_point`), transform the body with the shared
jaxpr transforms, and bind scan_p again; the transpose is a scan running the other way over the
transposed body (`transpose_jaxpr`), accumulating the constants' cotangents in its carry.
"""
from __future__ import annotations

import functools
import operator

import numpy as np

from .api_util import box, to_raw
from .batching import move_to
from .core import Primitive, ShapedArray, abstract_eval_rules, bind, get_aval, set_trace
from .control_flow_util import (check_avals, hoist_consts, hoist_consts_cached, intern_jaxpr, leaf_paths, permute,
                                promote_carry, same_type, split3, trace_user, tuple_tree, types_str)
from .jaxpr import ClosedJaxpr, Jaxpr, Var
from .jaxpr_transforms import (batch_jaxpr, carry_fixed_point, is_unknown_in, jvp_jaxpr, partial_eval_jaxpr,
                               run_jaxpr, stage, transpose_jaxpr)
from .primitives import elementwise as E
from .primitives import structural as S
from .pytree import tree_flatten, tree_unflatten
from .rules import Zero, batch_rules, is_undefined, jvp_rules, partial_eval_rules, transpose_rules
from .staging import dce_jaxpr
from .traceback_util import api_boundary

scan_p = Primitive("scan", multiple_results=True)

def _scan_abstract(*avals, jaxpr, num_consts, num_carry, length, reverse):
    nc, ncar = num_consts, num_carry
    consts, carry, xs = avals[:nc], avals[nc:nc + ncar], avals[nc + ncar:]
    slices = []
    for a in xs:
        if a.ndim == 0 or a.shape[0] != length:
            raise TypeError(f"scan xs operand {a.str_short()} does not have leading length {length}")
        slices.append(a.update(shape=a.shape[1:]))
    check_avals("scan jaxpr", jaxpr.in_avals, list(consts) + list(carry) + slices)
    outs = jaxpr.out_avals
    if len(outs) < ncar or not all(same_type(a, b) for a, b in zip(outs[:ncar], carry)):
        raise TypeError(f"scan jaxpr must return the carry type {types_str(carry)} first, returns {types_str(outs)}")
    return ([a.update(weak_type=a.weak_type and o.weak_type) for a, o in zip(carry, outs)]
            + [ShapedArray((length,) + y.shape, y.dtype, y.weak_type) for y in outs[ncar:]])


abstract_eval_rules[scan_p] = _scan_abstract


@functools.lru_cache(maxsize=512)
def _scan_jvp_jaxpr(jaxpr, nc, ncar, const_nz, carry_nz, x_nz):
    ny = len(jaxpr.out_avals) - ncar
    new, out_nz = jvp_jaxpr(jaxpr, const_nz + carry_nz + x_nz, carry_nz + (False,) * ny)
    new, jc = hoist_consts(new)
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
    return permute(new, in_perm, out_perm), jc, ys_nz


def _scan_jvp(primals, tangents, *, jaxpr, num_consts, num_carry, length, reverse):
    nc, ncar = num_consts, num_carry
    ny = len(jaxpr.out_avals) - ncar
    nz = [t is not Zero for t in tangents]
    const_nz, x_nz = tuple(nz[:nc]), tuple(nz[nc + ncar:])
    carry_nz = carry_fixed_point(nz[nc:nc + ncar], lambda c: jvp_jaxpr(jaxpr, const_nz + c + x_nz, False)[1][:ncar])
    body, jc, ys_nz = _scan_jvp_jaxpr(jaxpr, nc, ncar, const_nz, carry_nz, x_nz)
    consts, init, xs = split3(primals, nc, ncar)
    c_t = [t for t in tangents[:nc] if t is not Zero]
    init_t = [S.zeros_of_aval(get_aval(x).strip_weak()) if t is Zero else t
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
    const_b, x_b = tuple(bat[:nc]), tuple(bat[nc + ncar:])
    at0 = lambda carry_b: tuple(0 if b else None for b in const_b + carry_b + x_b)
    carry_b = carry_fixed_point(bat[nc:nc + ncar], lambda c: [d is not None for d in
                                                              batch_jaxpr(jaxpr, at0(c), axis_size)[1][:ncar]])
    new, out_d = batch_jaxpr(jaxpr, at0(carry_b), axis_size, carry_b + (None,) * ny)
    body, bc = hoist_consts_cached(new)
    consts, init, xs = split3(vals, nc, ncar)
    init = [move_to(v, None, 0, axis_size) if b and not ib else v
            for v, b, ib in zip(init, carry_b, bat[nc:nc + ncar])]
    outs = bind(scan_p, *bc, *consts, *init, *xs, jaxpr=body, num_consts=len(bc) + nc, num_carry=ncar,
                length=length, reverse=reverse)
    return outs, [0 if b else None for b in carry_b] + [None if d is None else 1 for d in out_d[ncar:]]


batch_rules[scan_p] = _scan_batch


@functools.lru_cache(maxsize=512)
def _scan_pe_jaxprs(jaxpr, nc, ncar, const_uk, carry_uk, x_uk):
    """Split a scan body into a known scan (which also stacks residuals) and an unknown scan.

    Residuals that are just known loop constants are passed to the unknown scan as
    constants instead of being stacked per iteration.
    """
    ny = len(jaxpr.out_avals) - ncar
    known, unk, out_uk, n_res = partial_eval_jaxpr(jaxpr, const_uk + carry_uk + x_uk, carry_uk + (False,) * ny)
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
    kbody, kconsts = hoist_consts(ClosedJaxpr(dce_jaxpr(known_body), known.consts))
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
    uk = [is_unknown_in(trace)(a) for a in args]
    const_uk, x_uk = tuple(uk[:nc]), tuple(uk[nc + ncar:])
    carry_uk = carry_fixed_point(uk[nc:nc + ncar],
                                 lambda c: partial_eval_jaxpr(jaxpr, const_uk + c + x_uk)[2][:ncar])
    kbody, kconsts, ubody, ys_uk, invariant = _scan_pe_jaxprs(jaxpr, nc, ncar, const_uk, carry_uk, x_uk)
    consts, init, xs = split3(args, nc, ncar)
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
    """Body of the reversed scan: (res consts | const-ct accumulators, carry cts | y cts, res xs).

    The body's transpose (linear in the carries and the linear consts/xs) gives the cotangents
    of the linear consts (added to the accumulators), of the carries and of the linear xs.
    """
    c_avals, car_avals, x_avals = split3(jaxpr.in_avals, nc, ncar)
    transposed = transpose_jaxpr(jaxpr, const_lin + (True,) * ncar + x_lin)
    res_c = [a for a, lin in zip(c_avals, const_lin) if not lin]
    acc_avals = [a.strip_weak() for a, lin in zip(c_avals, const_lin) if lin]
    ct_car = [a.strip_weak() for a in car_avals]
    ct_y = [a.strip_weak() for a in jaxpr.out_avals[ncar:]]
    res_x = [a for a, lin in zip(x_avals, x_lin) if not lin]
    sizes = np.cumsum([0, len(res_c), len(acc_avals), len(ct_car), len(ct_y), len(res_x)]).tolist()

    def f(*args):
        rc, acc, cc, cy, rx = [args[sizes[i]:sizes[i + 1]] for i in range(5)]
        out = run_jaxpr(transposed)(*rc, *rx, *cc, *cy)
        return [E.add(a, o) for a, o in zip(acc, out)] + list(out[len(acc):])
    return hoist_consts(stage(f, res_c + acc_avals + ct_car + ct_y + res_x))


def _scan_transpose(cts, *args, jaxpr, num_consts, num_carry, length, reverse):
    """Transpose of a scan linear in its carries and the UndefPrimal consts/xs: a reversed scan.

    Carries are treated as linear (in a linearized scan they are tangents; a known initial
    carry there is an instantiated zero), constants' cotangents accumulate in the carry.
    """
    nc, ncar = num_consts, num_carry
    consts, init, xs = split3(args, nc, ncar)
    const_lin = tuple(is_undefined(a) for a in consts)
    x_lin = tuple(is_undefined(a) for a in xs)
    outs_avals = jaxpr.out_avals
    ct_car = [S.zeros_of_aval(a.strip_weak()) if c is Zero else c for c, a in zip(cts[:ncar], outs_avals[:ncar])]
    ct_ys = [S.zeros_of_aval(ShapedArray((length,) + a.shape, a.dtype)) if c is Zero else c
             for c, a in zip(cts[ncar:], outs_avals[ncar:])]
    body, tconsts = _scan_transpose_jaxpr(jaxpr, nc, ncar, const_lin, x_lin)
    res_c = [a for a in consts if not is_undefined(a)]
    res_x = [a for a in xs if not is_undefined(a)]
    acc0 = [S.zeros_of_aval(a.aval.strip_weak()) for a in consts if is_undefined(a)]
    outs = bind(scan_p, *tconsts, *res_c, *acc0, *ct_car, *ct_ys, *res_x, jaxpr=body,
                num_consts=len(tconsts) + len(res_c), num_carry=len(acc0) + ncar, length=length,
                reverse=not reverse)
    na = len(acc0)
    ct_c, ct_init, ct_x = iter(outs[:na]), outs[na:na + ncar], iter(outs[na + ncar:])
    return ([next(ct_c) if lin else None for lin in const_lin]
            + [c if is_undefined(a) else None for c, a in zip(ct_init, init)]
            + [next(ct_x) if lin else None for lin in x_lin])


transpose_rules[scan_p] = _scan_transpose


@api_boundary
def scan(f, init, xs, length=None, reverse=False):
    """Loop `carry, y = f(carry, x)` over the leading axis of xs; returns (carry, stacked ys).

    xs (a pytree, or None with `length`) is sliced along axis 0; `reverse=True` walks it
    from the end (ys keep xs' order). Differentiable in forward and reverse mode.

    Parameters: f (callable): (carry, x) -> (carry, y). init: the initial carry (a pytree).
        xs: a pytree of arrays sliced along axis 0 (or None with length). length (int): the trip count
        when xs is None. reverse (bool): walk xs from the end.
    Returns: tuple: (final carry, ys stacked along a new leading axis).
    Raises: TypeError: if f is not callable or changes the carry's types; ValueError: if xs' leading
        sizes disagree or neither xs nor length gives the trip count.

    >>> scan(lambda c, v: (c + v, c), xp.asarray(0.0), xp.arange(4.0))
    (Array(6.), Array([0., 0., 1., 3.]))
    """
    if not callable(f):
        raise TypeError(f"scan: f must be callable, got {type(f).__name__}")
    c_leaves, c_tree = tree_flatten(init)
    x_leaves, x_tree = tree_flatten(xs)
    carry = [to_raw(x, "scan init") for x in c_leaves]
    xs_raw = [to_raw(x, "scan xs") for x in x_leaves]
    x_paths = leaf_paths(x_tree, "xs")
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
    c_paths = leaf_paths(c_tree, "init")
    in_tree = tuple_tree(c_tree, x_tree)
    x_avals = [get_aval(x).update(shape=get_aval(x).shape[1:]) for x in xs_raw]
    for _ in range(3):
        c_avals = [get_aval(c) for c in carry]
        body, out_tree = trace_user(f, in_tree, c_avals + x_avals, "scan body output")
        if out_tree.kind not in (tuple, list) or len(out_tree.children) != 2:
            raise TypeError(f"scan: the body must return a pair (carry, y), but returned {out_tree}")
        if out_tree.children[0] != c_tree:
            raise TypeError(f"scan: the body must return a carry with the structure of init, {c_tree}, but "
                            f"returned {out_tree.children[0]}")
        carry, changed = promote_carry(carry, body.out_avals[:len(carry)], c_paths, "scan body", "init")
        if not changed:
            break
    y_tree = out_tree.children[1]
    body, consts = hoist_consts(body)
    outs = bind(scan_p, *consts, *carry, *xs_raw, jaxpr=intern_jaxpr(body), num_consts=len(consts), num_carry=len(carry),
                length=n, reverse=bool(reverse))
    nc = len(carry)
    return (tree_unflatten(c_tree, [box(o) for o in outs[:nc]]),
            tree_unflatten(y_tree, [box(o) for o in outs[nc:]]))




@api_boundary
def map(f, xs):  # noqa: A001  (the JAX name)
    """[f(x) for x in xs] along the leading axis, stacked; one scan.

    Parameters: f (callable): applied to each slice. xs: a pytree of arrays mapped along axis 0.
    Returns: the stacked results.
    Raises: as scan.

    >>> transforms.map(lambda v: v ** 2, xp.arange(3.0))
    Array([0., 1., 4.])
    """
    return scan(lambda c, x: (c, f(x)), (), xs)[1]
