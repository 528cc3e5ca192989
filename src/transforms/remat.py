"""checkpoint (remat): trade compute for memory in reverse mode.

`checkpoint_p` is a call primitive like `jit_p`. Its partial-evaluation rule differs: the
residuals the backward pass needs are *recomputed* from the call's known inputs instead of
being stored, except those a policy allows saving (e.g. `dots_saveable` keeps matmul
outputs). Forward values and gradients are unchanged; only what is kept alive differs.
"""
from __future__ import annotations

import functools

from .api_util import Store, box, flatten_fun, to_raw
from .core import Primitive, abstract_eval_rules, bind, get_aval, impl_rules, set_trace
from .jaxpr import ClosedJaxpr, Jaxpr, eval_jaxpr
from .jaxpr_transforms import batch_jaxpr, is_unknown_in, jvp_jaxpr, partial_eval_jaxpr, stage, transpose_jaxpr
from .primitives.structural import zeros_of_aval
from .pytree import tree_flatten, tree_unflatten
from .rules import Zero, batch_rules, is_undefined, jvp_rules, partial_eval_rules, transpose_rules
from .staging import convert_constvars, dce_jaxpr
from .traceback_util import api_boundary

checkpoint_p = Primitive("checkpoint", multiple_results=True)


def nothing_saveable(prim):
    """The checkpoint policy that saves no intermediate (recompute everything: the default).

    Parameters: prim (Primitive): the primitive that made an intermediate.
    Returns: bool: False.
    Raises: nothing.

    >>> checkpoint(lambda v: v * v, policy=nothing_saveable)(xp.asarray(3.0))
    Array(9.)
    """
    return False


def everything_saveable(prim):
    """The checkpoint policy that saves every intermediate (no recomputation).

    Parameters: prim (Primitive): the primitive that made an intermediate.
    Returns: bool: True.
    Raises: nothing.

    >>> grad(checkpoint(lambda v: v * v, policy=everything_saveable))(xp.asarray(3.0))
    Array(6.)
    """
    return True


def dots_saveable(prim):
    """The checkpoint policy that saves the results of matrix products (dot_general) only.

    Parameters: prim (Primitive): the primitive that made an intermediate.
    Returns: bool: whether prim is dot_general.
    Raises: nothing.

    >>> grad(checkpoint(lambda v: xp.sum(v @ v), policy=dots_saveable))(xp.ones((2, 2)))
    Array([[4., 4.],
           [4., 4.]])
    """
    return prim.name == "dot_general"


def _bind(closed, args, name, policy):
    if closed.consts:
        jaxpr, consts = convert_constvars(closed)
        closed, args = ClosedJaxpr(jaxpr, []), list(consts) + list(args)
    return bind(checkpoint_p, *args, name=name, jaxpr=closed, policy=policy)


abstract_eval_rules[checkpoint_p] = lambda *avals, name, jaxpr, policy: list(jaxpr.out_avals)
impl_rules[checkpoint_p] = lambda *args, name, jaxpr, policy: eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *args)


def _jvp(primals, tangents, *, name, jaxpr, policy):
    nonzeros = tuple(t is not Zero for t in tangents)
    new, out_has_t = jvp_jaxpr(jaxpr, nonzeros)
    outs = _bind(new, list(primals) + [t for t in tangents if t is not Zero], name, policy)
    n = len(out_has_t)
    it = iter(outs[n:])
    return outs[:n], [next(it) if h else Zero for h in out_has_t]


def _batch(axis_size, vals, dims, *, name, jaxpr, policy):
    new, out_dims = batch_jaxpr(jaxpr, tuple(dims), axis_size)
    return _bind(new, vals, name, policy), list(out_dims)


@functools.lru_cache(maxsize=256)
def _remat_split(closed, unknowns, policy):
    known, unk, out_unknown, n_res = partial_eval_jaxpr(closed, unknowns)
    kj = known.jaxpr
    n_known_out = len(kj.outvars) - n_res
    producer = {v: e.prim for e in kj.eqns for v in e.outvars}
    res_vars = kj.outvars[n_known_out:]
    saved = tuple(policy(producer[v]) if v in producer else True for v in res_vars)
    # the known side keeps its outputs and only the residuals the policy saves
    keep = list(kj.outvars[:n_known_out]) + [v for v, s in zip(res_vars, saved) if s]
    known_pruned = ClosedJaxpr(dce_jaxpr(Jaxpr(kj.constvars, kj.invars, kj.eqns, keep)), known.consts)
    k_avals = [v.aval for v in kj.invars]
    s_avals = [v.aval for v, s in zip(res_vars, saved) if s]
    u_avals = [a for a, u in zip(closed.in_avals, unknowns) if u]

    def recompute(*args):
        ns = len(s_avals)
        saved_vals, rest = iter(args[:ns]), args[ns:]
        kin, uin = rest[:len(k_avals)], rest[len(k_avals):]
        outs = eval_jaxpr(kj, known.consts, *kin)
        res = [next(saved_vals) if s else r for r, s in zip(outs[n_known_out:], saved)]
        return eval_jaxpr(unk.jaxpr, unk.consts, *res, *uin)
    return known_pruned, stage(recompute, s_avals + k_avals + u_avals), out_unknown, n_known_out


def _partial_eval(trace, args, params):
    name, jaxpr, policy = params["name"], params["jaxpr"], params["policy"]
    unknowns = tuple(map(is_unknown_in(trace), args))
    known, recompute, out_unknown, n_known_out = _remat_split(jaxpr, unknowns, policy)
    known_args = [a for a, u in zip(args, unknowns) if not u]
    with set_trace(trace.parent):
        k_outs = _bind(known, known_args, name, policy)
    saved = k_outs[n_known_out:]
    u_outs = trace.stage_eqn(checkpoint_p, list(saved) + known_args + [a for a, u in zip(args, unknowns) if u],
                             dict(name=name, jaxpr=recompute, policy=policy))
    ki, ui = iter(k_outs[:n_known_out]), iter(u_outs)
    return [next(ui) if u else next(ki) for u in out_unknown]


def _transpose(cts, *args, name, jaxpr, policy):
    linear = tuple(is_undefined(a) for a in args)
    cts = [zeros_of_aval(a.strip_weak()) if c is Zero else c for c, a in zip(cts, jaxpr.out_avals)]
    outs = iter(_bind(transpose_jaxpr(jaxpr, linear), [a for a in args if not is_undefined(a)] + cts,
                      f"transpose({name})", policy))
    return [next(outs) if lin else None for lin in linear]


jvp_rules[checkpoint_p] = _jvp
batch_rules[checkpoint_p] = _batch
partial_eval_rules[checkpoint_p] = _partial_eval
transpose_rules[checkpoint_p] = _transpose


def checkpoint(fun, policy=None):
    """Wrap fun so reverse mode recomputes its intermediates instead of storing them.

    policy(primitive) -> bool says which intermediate results may be saved (default: none).

    Parameters: fun (callable): a function of arrays. policy (callable or None): primitive -> bool,
        e.g. dots_saveable; default nothing_saveable.
    Returns: callable: fun, with the same values and derivatives (remat is the same function).
    Raises: TypeError: for a fun or policy that is not callable; when called, for non-array arguments.

    >>> f = checkpoint(lambda v: xp.sin(v) * 2.0)
    >>> f(xp.asarray(0.0)), grad(f)(xp.asarray(0.0))
    (Array(0.), Array(2.))
    """
    if not callable(fun):
        raise TypeError(f"checkpoint: fun must be callable, got {type(fun).__name__}")
    if policy is not None and not callable(policy):
        raise TypeError(f"checkpoint: policy must be None or a callable primitive -> bool (e.g. dots_saveable), "
                        f"got {policy!r}")
    policy = nothing_saveable if policy is None else policy
    name = getattr(fun, "__name__", "fun")

    @api_boundary
    @functools.wraps(fun)
    def wrapped(*args):
        leaves, tree = tree_flatten(tuple(args))
        raw = [to_raw(x, f"checkpoint({name})") for x in leaves]
        store = Store()
        closed = stage(flatten_fun(fun, tree, store), [get_aval(r) for r in raw])
        outs = _bind(closed, raw, name, policy)
        return tree_unflatten(store.val, [box(o) for o in outs])
    return wrapped


remat = checkpoint
