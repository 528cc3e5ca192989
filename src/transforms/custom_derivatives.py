"""User-defined derivatives: custom_jvp, custom_vjp, stop_gradient.

- `custom_jvp_call` carries the primal function as a jaxpr plus the user's jvp rule; only the
  jvp rule of the primitive looks at the user rule, every other transform sees the jaxpr.
- `custom_vjp_call` carries the primal jaxpr and the user's (fwd, bwd). Its jvp runs `fwd`
  and emits `custom_lin`, a primitive linear in the tangents whose transpose calls `bwd`;
  reverse mode therefore uses the user's backward pass, and forward mode is refused.
"""
from __future__ import annotations

import functools

from .api_util import Store, box, flatten_fun, to_raw
from .batching import move_to, vmap_flat
from .core import Primitive, abstract_eval_rules, bind, get_aval, impl_rules
from .jaxpr import eval_jaxpr
from .jaxpr_transforms import batch_jaxpr, stage
from .primitives import structural as S
from .pytree import tree_flatten, tree_unflatten
from .rules import Zero, batch_rules, is_undefined, jvp_gaps, jvp_rules, transpose_rules, zero_jvp
from .traceback_util import api_boundary


def _flat_trace(fun, args, where):
    """Trace fun(*args) (pytrees of Arrays) to a closed jaxpr; returns (jaxpr, raw args, in/out trees)."""
    leaves, in_tree = tree_flatten(tuple(args))
    raw = [to_raw(x, where) for x in leaves]
    store = Store()
    closed = stage(flatten_fun(fun, in_tree, store, where), [get_aval(r) for r in raw])
    return closed, raw, in_tree, store.val


def _split_nondiff(args, nd):
    """(static args, differentiable args, rebuild(differentiable) -> all args) for nondiff_argnums nd."""
    static = [args[i] for i in nd]
    dyn = [a for i, a in enumerate(args) if i not in nd]

    def full(dargs):
        it = iter(dargs)
        return [args[i] if i in nd else next(it) for i in range(len(args))]
    return static, dyn, full


def _call(closed, args):
    return eval_jaxpr(closed.jaxpr, closed.consts, *args)


# ------------------------------------------------------------------------ stop_gradient
stop_gradient_p = Primitive("stop_gradient")
abstract_eval_rules[stop_gradient_p] = lambda x: x
zero_jvp(stop_gradient_p)
batch_rules[stop_gradient_p] = lambda axis_size, vals, dims: (bind(stop_gradient_p, vals[0]), dims[0])


def stop_gradient(x):
    """x, but treated as a constant by differentiation (pytrees accepted).

    Parameters: x: an array or a pytree of arrays.
    Returns: the same values, with zero derivative.
    Raises: TypeError: for non-array leaves.

    >>> grad(lambda v: xp.sum(v * stop_gradient(v)))(xp.asarray([1.0, 2.0]))
    Array([1., 2.])
    """
    leaves, tree = tree_flatten(x)
    return tree_unflatten(tree, [box(bind(stop_gradient_p, to_raw(v, "stop_gradient"))) for v in leaves])


# --------------------------------------------------------------------------- custom_jvp
custom_jvp_call_p = Primitive("custom_jvp_call", multiple_results=True)
abstract_eval_rules[custom_jvp_call_p] = lambda *avals, name, call_jaxpr, jvp: list(call_jaxpr.out_avals)
impl_rules[custom_jvp_call_p] = lambda *args, name, call_jaxpr, jvp: _call(call_jaxpr, args)


def _custom_jvp_jvp(primals, tangents, *, name, call_jaxpr, jvp):
    tangents = [S.zeros_like(p) if t is Zero else t for p, t in zip(primals, tangents)]
    out, t_out = jvp(primals, tangents)
    return list(out), list(t_out)


def _custom_jvp_batch(axis_size, vals, dims, *, name, call_jaxpr, jvp):
    vals = [move_to(v, d, 0, axis_size) for v, d in zip(vals, dims)]
    dims0 = [0] * len(vals)
    new_jaxpr = _batched(call_jaxpr, axis_size)

    def batched_jvp(primals, tangents):
        n = len(primals)

        def f(*pt):
            out, t = jvp(list(pt[:n]), list(pt[n:]))
            return list(out) + list(t)
        outs, odims = vmap_flat(f, list(primals) + list(tangents), dims0 * 2, axis_size)
        outs = [move_to(o, d, 0, axis_size) for o, d in zip(outs, odims)]
        k = len(outs) // 2
        return outs[:k], outs[k:]
    out = bind(custom_jvp_call_p, *vals, name=name, call_jaxpr=new_jaxpr, jvp=batched_jvp)
    return out, [0] * len(out)


def _batched(closed, axis_size):
    """The call jaxpr with every input and output batched at axis 0."""
    return batch_jaxpr(closed, (0,) * len(closed.in_avals), axis_size, (True,) * len(closed.out_avals))[0]


jvp_rules[custom_jvp_call_p] = _custom_jvp_jvp
batch_rules[custom_jvp_call_p] = _custom_jvp_batch


class custom_jvp:
    """Decorate f, then give its derivative with @f.defjvp: jvp(primals, tangents) -> (out, t_out).

    Parameters: fun (callable): the function. nondiff_argnums (tuple of ints): arguments passed to the
        rule unchanged (first) and not differentiated.
    Returns: a callable wrapper; its defjvp(rule) sets the rule and returns it.
    Raises: TypeError: when called without a rule, or when the rule's output does not match fun's.

    >>> f = custom_jvp(lambda v: xp.sin(v))
    >>> _ = f.defjvp(lambda p, t: (xp.sin(p[0]), 2.0 * t[0]))   # a made-up derivative, to see it used
    >>> grad(f)(xp.asarray(0.0))
    Array(2.)
    """

    def __init__(self, fun, nondiff_argnums=()):
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.jvp_rule = None
        functools.update_wrapper(self, fun)

    def defjvp(self, jvp):
        self.jvp_rule = jvp
        return jvp

    @api_boundary
    def __call__(self, *args):
        if self.jvp_rule is None:
            raise TypeError(f"custom_jvp function {self.__name__} has no jvp rule; define one with @f.defjvp")
        nd = self.nondiff_argnums
        static, dyn, full = _split_nondiff(args, nd)
        fun = lambda *d: self.fun(*full(d))
        closed, raw, in_tree, out_tree = _flat_trace(fun, dyn, f"custom_jvp({self.__name__})")
        rule = self.jvp_rule

        def jvp(primals, tangents):
            ps = tree_unflatten(in_tree, [box(p) for p in primals])
            ts = tree_unflatten(in_tree, [box(t) for t in tangents])
            out, t_out = rule(*static, ps, ts) if nd else rule(ps, ts)
            o_leaves, o_tree = tree_flatten(out)
            t_leaves, t_tree = tree_flatten(t_out)
            if o_tree != out_tree or t_tree != out_tree:
                raise TypeError(f"custom_jvp rule of {self.__name__} must return (out, tangent_out) with the "
                                f"structure of the function's output {out_tree}; got {o_tree} and {t_tree}")
            return [to_raw(o) for o in o_leaves], [to_raw(t) for t in t_leaves]
        outs = bind(custom_jvp_call_p, *raw, name=self.__name__, call_jaxpr=closed, jvp=jvp)
        return tree_unflatten(out_tree, [box(o) for o in outs])


# --------------------------------------------------------------------------- custom_vjp
custom_vjp_call_p = Primitive("custom_vjp_call", multiple_results=True)
abstract_eval_rules[custom_vjp_call_p] = lambda *avals, name, call_jaxpr, fwd, bwd: list(call_jaxpr.out_avals)
impl_rules[custom_vjp_call_p] = lambda *args, name, call_jaxpr, fwd, bwd: _call(call_jaxpr, args)

custom_lin_p = Primitive("custom_lin", multiple_results=True)
abstract_eval_rules[custom_lin_p] = lambda *avals, num_res, bwd, out_avals: list(out_avals)


def _custom_lin_impl(*args, num_res, bwd, out_avals):
    raise TypeError("forward-mode differentiation (jvp/jacfwd) of a custom_vjp function is not supported: its "
                    "derivative is only given as a backward pass. Use grad/vjp/jacrev, or define it with custom_jvp.")


impl_rules[custom_lin_p] = _custom_lin_impl
jvp_gaps[custom_lin_p] = "it only exists inside reverse-mode linearization; forward mode of custom_vjp is refused"


def _custom_lin_transpose(cts, *args, num_res, bwd, out_avals):
    res = args[:num_res]
    cts = [S.zeros_of_aval(a.strip_weak()) if c is Zero else c for c, a in zip(cts, out_avals)]
    cts_in = bwd(list(res), cts)
    lin = args[num_res:]
    return [None] * num_res + [c if is_undefined(a) else None for a, c in zip(lin, cts_in)]


transpose_rules[custom_lin_p] = _custom_lin_transpose


def _custom_lin_batch(axis_size, vals, dims, *, num_res, bwd, out_avals):
    vals = [move_to(v, d, 0, axis_size) for v, d in zip(vals, dims)]

    def batched_bwd(res, cts):
        n = len(res)
        outs, odims = vmap_flat(lambda *a: bwd(list(a[:n]), list(a[n:])), list(res) + list(cts),
                                [0] * (n + len(cts)), axis_size)
        return [move_to(o, d, 0, axis_size) for o, d in zip(outs, odims)]
    new_avals = tuple(a.update(shape=(axis_size,) + a.shape) for a in out_avals)
    out = bind(custom_lin_p, *vals, num_res=num_res, bwd=batched_bwd, out_avals=new_avals)
    return out, [0] * len(out)


batch_rules[custom_lin_p] = _custom_lin_batch


def _custom_vjp_jvp(primals, tangents, *, name, call_jaxpr, fwd, bwd):
    out, res = fwd(primals)
    tangents = [S.zeros_like(p) if t is Zero else t for p, t in zip(primals, tangents)]
    out_avals = tuple(get_aval(o) for o in out)
    t_out = bind(custom_lin_p, *res, *tangents, num_res=len(res), bwd=bwd, out_avals=out_avals)
    return list(out), list(t_out)


def _custom_vjp_batch(axis_size, vals, dims, *, name, call_jaxpr, fwd, bwd):
    vals = [move_to(v, d, 0, axis_size) for v, d in zip(vals, dims)]
    n_out = len(call_jaxpr.out_avals)

    def batched_fwd(primals):
        outs, odims = vmap_flat(lambda *a: _flatten_fwd(fwd, a), list(primals), [0] * len(primals), axis_size)
        outs = [move_to(o, d, 0, axis_size) for o, d in zip(outs, odims)]
        return outs[:n_out], outs[n_out:]

    def batched_bwd(res, cts):
        n = len(res)
        outs, odims = vmap_flat(lambda *a: bwd(list(a[:n]), list(a[n:])), list(res) + list(cts),
                                [0] * (n + len(cts)), axis_size)
        return [move_to(o, d, 0, axis_size) for o, d in zip(outs, odims)]
    out = bind(custom_vjp_call_p, *vals, name=name, call_jaxpr=_batched(call_jaxpr, axis_size),
               fwd=batched_fwd, bwd=batched_bwd)
    return out, [0] * len(out)


def _flatten_fwd(fwd, primals):
    out, res = fwd(list(primals))
    return list(out) + list(res)


jvp_rules[custom_vjp_call_p] = _custom_vjp_jvp
batch_rules[custom_vjp_call_p] = _custom_vjp_batch


class custom_vjp:
    """Decorate f, then f.defvjp(fwd, bwd): fwd(*args) -> (out, residuals); bwd(residuals, ct) -> cts tuple.

    Parameters: fun (callable): the function. nondiff_argnums (tuple of ints): arguments passed to
        fwd and bwd unchanged and not differentiated.
    Returns: a callable wrapper; defvjp(fwd, bwd) sets the rule.
    Raises: TypeError: when called without a rule, or when fwd/bwd return the wrong structure.

    >>> f = custom_vjp(lambda v: v * 3.0)
    >>> f.defvjp(lambda v: (v * 3.0, None), lambda res, g: (g * 100.0,))
    >>> grad(f)(xp.asarray(1.0))
    Array(100.)
    """

    def __init__(self, fun, nondiff_argnums=()):
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.fwd = self.bwd = None
        functools.update_wrapper(self, fun)

    def defvjp(self, fwd, bwd):
        self.fwd, self.bwd = fwd, bwd

    @api_boundary
    def __call__(self, *args):
        if self.fwd is None:
            raise TypeError(f"custom_vjp function {self.__name__} has no vjp; define it with f.defvjp(fwd, bwd)")
        nd = self.nondiff_argnums
        static, dyn, full = _split_nondiff(args, nd)
        closed, raw, in_tree, out_tree = _flat_trace(lambda *d: self.fun(*full(d)), dyn,
                                                     f"custom_vjp({self.__name__})")
        user_fwd, user_bwd, name = self.fwd, self.bwd, self.__name__
        res_tree_box = []

        def fwd(primals):
            out, res = user_fwd(*full(tree_unflatten(in_tree, [box(p) for p in primals])))
            o_leaves, o_tree = tree_flatten(out)
            if o_tree != out_tree:
                raise TypeError(f"custom_vjp fwd of {name} must return (out, residuals) with out shaped like the "
                                f"function's output {out_tree}, got {o_tree}")
            r_leaves, r_tree = tree_flatten(res)
            res_tree_box[:] = [r_tree]
            return [to_raw(o) for o in o_leaves], [to_raw(r, "custom_vjp residual") for r in r_leaves]

        def bwd(res, cts):
            r = tree_unflatten(res_tree_box[0], [box(v) for v in res])
            ct = tree_unflatten(out_tree, [box(c) for c in cts])
            out = user_bwd(*static, r, ct) if nd else user_bwd(r, ct)
            if not isinstance(out, tuple):
                raise TypeError(f"custom_vjp bwd of {name} must return a tuple with one cotangent per "
                                f"differentiable argument, got {type(out).__name__}")
            leaves, tree = tree_flatten(out)
            if tree != in_tree:
                raise TypeError(f"custom_vjp bwd of {name} returned cotangents with structure {tree}, "
                                f"expected {in_tree}")
            return [to_raw(c) for c in leaves]
        outs = bind(custom_vjp_call_p, *raw, name=name, call_jaxpr=closed, fwd=fwd, bwd=bwd)
        return tree_unflatten(out_tree, [box(o) for o in outs])

