"""Automatic differentiation: forward mode by dual numbers, reverse mode as linearize + transpose.

- `JVPTrace` carries (primal, tangent) pairs and applies `jvp_rules`. Tangents may be the
  symbolic `Zero`; a result with a zero tangent is returned as its bare primal.
- `linearize` runs a JVPTrace on top of a partial-evaluation StagingTrace whose own
  tracers are the input tangents: primal work runs for real in the parent, tangent work is
  recorded into a *linear* jaxpr whose constants are the residuals.
- `backward_pass` transposes a linear jaxpr with `transpose_rules`; `vjp` and `grad` are
  built from it. Everything nests, because every step binds at the current trace.
A float() the function returns untouched (`return float(loss)`) is the traced value, derivative intact
(returned.py); a float used otherwise raises ConcretizationTypeError (it would lose the tangent).
"""
from __future__ import annotations

import sys

from .api_util import (Store, alias_pattern, argnums_tuple, box, flatten_fun, run_flat, split_mutated, to_raw,
                       write_back)
from .core import (Trace, Tracer, TracerArrayConversionError, UnexpectedTracerError, bind, boxing, current_trace,
                   get_aval, set_trace, trace_state, unbox)
from .jaxpr import Literal, Var
from .primitives import elementwise as E
from .primitives import structural as S
from .pytree import tree_flatten, tree_unflatten
from .rules import UndefPrimal, Zero, jvp_gaps, jvp_rules, transpose_gaps, transpose_rules
from .staging import StagingTrace
from .traceback_util import api_boundary


class JVPTracer(Tracer):
    __slots__ = ("primal", "tangent")

    def __init__(self, trace, primal, tangent):
        self._trace, self.primal, self.tangent = trace, primal, tangent

    @property
    def aval(self):
        return get_aval(self.primal)

    def concrete(self, why, guard=False):
        p = self.primal
        return p.concrete(why, guard) if isinstance(p, Tracer) else p

    def host_value(self, why, guard=False):
        raise TracerArrayConversionError(self, why)


class JVPTrace(Trace):
    __slots__ = ("alive",)
    conversion_loses = "its derivative (the tangent it carries)"
    returns_numbers = True   # (a float() returned untouched is an output: returned.py)
    keeps_values_concrete = True   # primals are computed by the trace below

    def describe_origin(self, tracer):
        t = tracer.tangent
        tr = getattr(t, "_trace", None)
        return tr.describe_origin(t) if hasattr(tr, "describe_origin") and hasattr(t, "atom") else None

    def __init__(self, parent):
        self.parent = parent
        self.alive = True

    def kind_name(self):
        return "jvp/grad"

    def process(self, prim, args, params):
        primals, tangents, own = [], [], False
        for a in args:
            if type(a) is JVPTracer and a._trace is self:
                primals.append(a.primal)
                tangents.append(a.tangent)
                own = True
            else:
                if isinstance(a, JVPTracer) and not a._trace.alive:
                    raise UnexpectedTracerError("a jvp/grad tracer was used after its transform finished")
                primals.append(a)
                tangents.append(Zero)
        if not own:
            return self.parent.process(prim, args, params)
        rule = jvp_rules.get(prim)
        if rule is None:
            why = jvp_gaps.get(prim, "no differentiation rule is defined")
            raise NotImplementedError(f"cannot differentiate '{prim}': {why}")
        with set_trace(self.parent):
            p, t = rule(primals, tangents, **params)
        if prim.multiple_results:
            return [pi if ti is Zero else JVPTracer(self, pi, ti) for pi, ti in zip(p, t)]
        return p if t is Zero else JVPTracer(self, p, t)


def _pair(trace, x):
    if type(x) is JVPTracer and x._trace is trace:
        return x.primal, x.tangent
    return x, Zero


def _is_diff(aval):
    return aval.dtype.kind in "fc"


def instantiate(t, primal):
    return S.zeros_like(primal) if t is Zero else t


def jvp_flat(f, primals, tangents, instantiate_zeros=True):
    """f: raw -> list of raw. Returns (out_primals, out_tangents)."""
    trace = JVPTrace(current_trace())
    ins = [p if t is Zero else JVPTracer(trace, p, t) for p, t in zip(primals, tangents)]
    with set_trace(trace):
        outs = f(*ins)
    trace.alive = False
    pairs = [_pair(trace, o) for o in outs]
    out_p = [p for p, _ in pairs]
    out_t = [t for _, t in pairs]
    if instantiate_zeros:
        out_t = [instantiate(t, p) if _is_diff(get_aval(p)) else t for p, t in zip(out_p, out_t)]
    return out_p, out_t


def linearize_flat(f, primals, names=None):
    """Returns (out_primals, linear ClosedJaxpr from input tangents to output tangents).

    `names` label the inputs, so an error about a traced value can say which argument it came from.
    """
    pe = StagingTrace(current_trace(), stage_all=False)
    jt = JVPTrace(pe)
    names = names or [None] * len(primals)
    t_in = [pe.new_arg(get_aval(p).strip_weak(), n) for p, n in zip(primals, names)]
    ins = [JVPTracer(jt, p, t) for p, t in zip(primals, t_in)]
    with set_trace(jt):
        outs = f(*ins)
    jt.alive = False
    pairs = [_pair(jt, o) for o in outs]
    out_p = [p for p, _ in pairs]
    with set_trace(pe):
        out_t = [instantiate(t, p) if _is_diff(get_aval(p)) else S.zeros_like(p) for p, t in pairs]
        linear = pe.to_jaxpr(out_t)
    return out_p, linear


# ------------------------------------------------------------------------- transposition

def _add_ct(a, b):
    if a is Zero:
        return b
    if b is Zero:
        return a
    return E.add(a, b)


def backward_pass(jaxpr, consts, cts_out, primals=None):
    """Transpose a jaxpr linear in the invars marked UndefPrimal in `primals` (default: all).

    Returns a cotangent (or Zero) per invar.
    """
    env = dict(zip(jaxpr.constvars, consts))
    if primals is None:
        lin = set(jaxpr.invars)
    else:
        lin = {v for v, p in zip(jaxpr.invars, primals) if type(p) is UndefPrimal}
        env.update((v, p) for v, p in zip(jaxpr.invars, primals) if type(p) is not UndefPrimal)
    read = lambda a: a.val if type(a) is Literal else env[a]
    lin_eqns = []
    for eqn in jaxpr.eqns:   # forward: evaluate what does not depend on the linear inputs
        if any(type(a) is Var and a in lin for a in eqn.invars):
            lin.update(eqn.outvars)
            lin_eqns.append(eqn)
        else:
            out = bind(eqn.prim, *map(read, eqn.invars), **eqn.params)
            for v, x in zip(eqn.outvars, out if eqn.prim.multiple_results else [out]):
                env[v] = x
    ct_env = {}
    for v, ct in zip(jaxpr.outvars, cts_out):
        if type(v) is Var and v in lin and ct is not Zero:
            ct_env[v] = _add_ct(ct_env.get(v, Zero), ct)
    for eqn in reversed(lin_eqns):
        cts = [ct_env.pop(v, Zero) for v in eqn.outvars]
        if all(c is Zero for c in cts):
            continue
        args = [UndefPrimal(a.aval) if type(a) is Var and a in lin else read(a) for a in eqn.invars]
        rule = transpose_rules.get(eqn.prim)
        if rule is None:
            why = transpose_gaps.get(eqn.prim, "it is not linear")
            raise NotImplementedError(f"cannot transpose '{eqn.prim}': {why}")
        # a cotangent `cts` alone holds is given up to the rule, which may write into it; anything else is not
        # (set every time: a rule running a backward pass of its own must not see an outer one's)
        trace_state.given_up = cts[0] if len(cts) == 1 and sys.getrefcount(cts[0]) <= 2 else None
        try:
            cts_in = rule(cts if eqn.prim.multiple_results else cts[0], *args, **eqn.params)
        finally:
            trace_state.given_up = None
        for a, c in zip(eqn.invars, cts_in):
            if type(a) is Var and a in lin and c is not None and c is not Zero:
                ct_env[a] = _add_ct(ct_env.get(a, Zero), c)
        cts_in = c = None   # (ct_env alone holds them now)
    return [ct_env.get(v, Zero) for v in jaxpr.invars]


# ----------------------------------------------------------------------- public API

def _check_diff_input(x, fname, i):
    a = get_aval(x)
    if not _is_diff(a):
        raise TypeError(f"{fname} requires real or complex floating-point inputs, but argument {i} has "
                        f"dtype {a.dtype.name}. Integer and boolean inputs have no derivative; convert "
                        "with astype(x, float64) or leave the argument out of argnums.")


@api_boundary
def jvp(fun, primals, tangents, has_aux=False):
    """(primals_out, tangents_out) of fun at primals along tangents (pytrees matching).

    Parameters: fun (callable): a function of arrays (pytrees allowed). primals (tuple): its arguments.
        tangents (tuple): one tangent per primal, same structure and shapes. has_aux (bool): fun returns
        (out, aux); aux is passed through.
    Returns: tuple: (fun(*primals), the directional derivative), plus aux with has_aux.
    Raises: ValueError: if primals and tangents differ in structure or shape; TypeError: for non-array
        leaves, or has_aux with fun not returning a pair.

    >>> jvp(lambda x: x ** 2, (xp.asarray([1.0, 2.0]),), (xp.ones(2),))
    (Array([1., 4.]), Array([2., 4.]))
    """
    p_leaves, tree = tree_flatten(tuple(primals))
    t_leaves, t_tree = tree_flatten(tuple(tangents))
    if tree != t_tree:
        raise ValueError(f"jvp: primals and tangents must have the same structure, got {tree} and {t_tree}")
    ps = [to_raw(x, "jvp primal") for x in p_leaves]
    ts = [to_raw(x, "jvp tangent") for x in t_leaves]
    for i, (p, t) in enumerate(zip(ps, ts)):
        if get_aval(p).shape != get_aval(t).shape:
            raise ValueError(f"jvp: tangent {i} has shape {get_aval(t).shape} but its primal has "
                             f"shape {get_aval(p).shape}")
    store = Store()
    out_p, out_t = run_flat(lambda flat: jvp_flat(flat, ps, ts), fun, tree, store, alias_pattern(p_leaves),
                            differentiated=("jvp", len(ps), [f"primal leaf {i}" for i in range(len(ps))]))
    out_p, finals = split_mutated(out_p, store)
    write_back(p_leaves, store.mutated, finals, "jvp")
    _aux_pair(store.val, has_aux)
    return _unaux(store.val, out_p, out_t[:len(out_p)], has_aux)


def _aux_pair(out_tree, has_aux):
    """has_aux: the function's output must be a pair (output, aux). (Checked on the output's tree, not by a
    wrapper: a wrapper holding the output would keep a float() it returns from being returned untouched.)"""
    if has_aux and not (out_tree.kind in (tuple, list) and len(out_tree.children) == 2):
        raise TypeError("has_aux=True requires the function to return a pair (output, aux)")


def _unaux(out_tree, out_p, out_t, has_aux):
    bp = [box(v) for v in out_p]
    bt = [box(S.zeros_like(p)) if t is Zero else box(t) for p, t in zip(out_p, out_t)]
    if not has_aux:
        return tree_unflatten(out_tree, bp), tree_unflatten(out_tree, bt)
    (y, aux) = tree_unflatten(out_tree, bp)
    ty, _ = tree_unflatten(out_tree, bt)
    return (y, ty, aux)


@api_boundary
def linearize(fun, *primals):
    """(out, f_jvp) where f_jvp(*tangents) evaluates the linearized function.

    Parameters: fun (callable): a function of arrays. primals: its arguments.
    Returns: tuple: (fun(*primals), f_jvp) with f_jvp(*tangents) the linear map at primals (evaluated
        without re-running fun).
    Raises: TypeError: for non-array arguments; ValueError: if f_jvp gets tangents of another structure.

    >>> y, f_jvp = linearize(xp.sin, xp.asarray(0.0))
    >>> y, f_jvp(xp.asarray(2.0))
    (Array(0.), Array(2.))
    """
    leaves, tree = tree_flatten(primals)
    ps = [to_raw(x, "linearize primal") for x in leaves]
    store = Store()
    out_p, linear = run_flat(lambda flat: linearize_flat(flat, ps), fun, tree, store, alias_pattern(leaves),
                             differentiated=("linearize", len(ps), [f"primal leaf {i}" for i in range(len(ps))]))
    out_p, finals = split_mutated(out_p, store)
    write_back(leaves, store.mutated, finals, "linearize")
    n_user = len(out_p)
    out_tree = store.val

    @api_boundary
    def f_jvp(*tangents):
        t_leaves, t_tree = tree_flatten(tangents)
        if t_tree != tree:
            raise ValueError(f"linearize: tangents have structure {t_tree}, expected {tree}")
        from .jaxpr import eval_jaxpr
        outs = eval_jaxpr(linear.jaxpr, linear.consts, *[to_raw(t) for t in t_leaves])
        return tree_unflatten(out_tree, [box(o) for o in outs[:n_user]])
    return tree_unflatten(out_tree, [box(p) for p in out_p]), f_jvp


def _leaf_labels(tree, labels):
    """One label per leaf of a tuple-of-arguments tree: 'args[1]', or 'args[1][0]' inside a pytree."""
    out = []
    for lab, sub in zip(labels, tree.children):
        out += [lab] if sub.num_leaves == 1 and sub.kind is None else [f"{lab}[{j}]" for j in range(sub.num_leaves)]
    return out


@api_boundary
def vjp(fun, *primals, has_aux=False, _labels=None, _n_asked=None):
    """(out, f_vjp) or (out, f_vjp, aux); f_vjp(ct) returns a tuple of cotangents per primal.

    Parameters: fun (callable): a function of arrays. primals: its (floating-point) arguments.
        has_aux (bool): fun returns (out, aux).
    Returns: tuple: (out, f_vjp) or (out, f_vjp, aux); f_vjp(cotangent shaped like out) returns a tuple
        with one cotangent per primal.
    Raises: TypeError: for integer or boolean primals; ValueError: if f_vjp gets a cotangent of another
        structure or shape.

    >>> y, f_vjp = vjp(lambda x: x * 3.0, xp.asarray([1.0, 2.0]))
    >>> y, f_vjp(xp.ones(2))
    (Array([3., 6.]), (Array([3., 3.]),))
    """
    leaves, tree = tree_flatten(primals)
    ps = [to_raw(x, "vjp primal") for x in leaves]
    for i, p in enumerate(ps):
        _check_diff_input(p, "vjp", i)
    store = Store()
    names = _leaf_labels(tree, _labels or [f"args[{i}]" for i in range(len(primals))])
    out_p, linear = run_flat(lambda flat: linearize_flat(flat, ps, names), fun, tree, store, alias_pattern(leaves),
                             differentiated=("vjp/grad", len(ps) if _n_asked is None else _n_asked, names))
    n_out = len(out_p)   # the linear map's outputs include the written-into arguments' finals (zero cotangent)
    out_p, finals = split_mutated(out_p, store)
    write_back(leaves, store.mutated, finals, "vjp/grad")
    out_tree = store.val
    _aux_pair(out_tree, has_aux)
    if has_aux:
        y_tree, aux_tree = out_tree.children
        n_y = y_tree.num_leaves
        aux = tree_unflatten(aux_tree, [box(p) for p in out_p[n_y:]])
        out = tree_unflatten(y_tree, [box(p) for p in out_p[:n_y]])
    else:
        y_tree, n_y, out = out_tree, len(out_p), tree_unflatten(out_tree, [box(p) for p in out_p])

    @api_boundary
    def f_vjp(ct):
        ct_leaves, ct_tree = tree_flatten(ct)
        if ct_tree != y_tree:
            raise ValueError(f"vjp: cotangent structure {ct_tree} does not match output structure {y_tree}")
        cts = [to_raw(c, "vjp cotangent") for c in ct_leaves]
        for i, (c, p) in enumerate(zip(cts, out_p)):
            if get_aval(c).shape != get_aval(p).shape:
                raise ValueError(f"vjp: cotangent {i} has shape {get_aval(c).shape}, output has "
                                 f"shape {get_aval(p).shape}")
        cts = cts + [Zero] * (n_out - n_y)
        cts_in = backward_pass(linear.jaxpr, linear.consts, cts)
        res = [box(S.zeros_like(p) if c is Zero else _match(c, p)) for c, p in zip(cts_in, ps)]
        return tree_unflatten(tree, res)
    return (out, f_vjp, aux) if has_aux else (out, f_vjp)


def _match(ct, primal):
    """Cotangents carry the primal's dtype (weak scalars made strong are converted back)."""
    a, p = get_aval(ct), get_aval(primal)
    if a.dtype != p.dtype:
        return E.convert_element_type(ct, p.dtype, p.weak_type)
    return ct


@api_boundary
def value_and_grad(fun, argnums=0, has_aux=False):
    """f -> (value, gradient) for scalar-output f; gradient w.r.t. argnums (int or tuple).

    Parameters: fun (callable): returns a real float scalar. argnums (int or tuple of ints): which
        arguments to differentiate (default 0). has_aux (bool): fun returns (value, aux).
    Returns: callable: (*args) -> (value, gradient) (((value, aux), gradient) with has_aux); the gradient
        has the argument's structure (a tuple for a tuple argnums).
    Raises: TypeError: when called, if fun's output is not a real scalar float or a differentiated
        argument is not floating-point.

    >>> value_and_grad(lambda x: xp.sum(x ** 2))(xp.asarray([1.0, 2.0]))
    (Array(5.), Array([2., 4.]))
    """
    @api_boundary
    def vg(*args, **kwargs):
        nums, single = argnums_tuple(argnums, len(args), "grad")
        leaves, _ = tree_flatten(tuple(args[i] for i in nums))
        for i, x in enumerate(leaves):
            _check_diff_input(to_raw(x, "grad argument"), "grad", i)
        n_asked = len(nums)
        nums += _sharing_data(args, nums, leaves)   # (differentiated too, their gradients dropped)
        dyn = [args[i] for i in nums]
        fixed = [i for i, a in enumerate(args) if i not in nums and type(a) is boxing.box_type]
        f_dyn = _with_fixed_handles(fun, args, nums, kwargs, fixed, has_aux)
        res = vjp(f_dyn, *dyn, has_aux=True, _labels=[f"args[{i}]" for i in nums], _n_asked=len(leaves))
        out, f_vjp, (user_aux, finals) = res
        written = [k for k, (i, v) in enumerate(zip(fixed, finals)) if v._v is not args[i]._v]
        if written and boxing.views is not None:   # (fixed views of one array overlapping: held apart inside)
            boxing.views.check_unshared(args, [fixed[k] for k in written], "grad", False)
        for k in written:   # writes into the arguments not differentiated reach the caller too
            i = fixed[k]
            args[i]._rebind(finals[k], f"grad: a write into argument {i}")
        res = (out, f_vjp, user_aux)
        out_leaves, _ = tree_flatten(out)
        o = get_aval(unbox(out_leaves[0])) if len(out_leaves) == 1 else None
        if o is None or o.shape != () or o.dtype.kind not in "fc":
            what = (f"a {o.dtype.name} array of shape {tuple(o.shape)}"
                    if o is not None else f"a pytree with {len(out_leaves)} leaves")
            raise TypeError(f"grad requires a function returning a real scalar float, but it returned {what}. "
                            "Reduce the output (e.g. xp.sum), or use jacrev/vjp for non-scalar outputs.")
        if o.dtype.kind == "c":
            raise TypeError("grad requires a real-valued output; use vjp for complex outputs")
        one = box(E.convert_element_type(1.0, o.dtype))
        g = f_vjp(one)
        g = g[0] if single else tuple(g)[:n_asked]
        return ((out, res[2]), g) if has_aux else (out, g)
    return vg


def _sharing_data(args, nums, leaves):
    """The Array arguments not differentiated that share data with a differentiated one (views of one
    array): they go in with the differentiated ones, so that inside the trace a view and its parent are one
    data, as eagerly (api_util.alias_pattern)."""
    views = boxing.views
    if views is None or not any(type(x) is boxing.box_type and views.has_views(x) for x in leaves):
        return ()
    roots = {id(views.root_of(x)) for x in leaves if type(x) is boxing.box_type}
    return tuple(i for i, a in enumerate(args) if i not in nums and type(a) is boxing.box_type
                 and views.has_views(a) and id(views.root_of(a)) in roots)


def _with_fixed_handles(fun, args, nums, kwargs, fixed, has_aux):
    """fun of the differentiated arguments only; the other Array arguments enter as fresh handles made
    inside the trace (so fun may write into them, as eagerly), and their final values come out as aux."""
    def f(*dyn):
        full = list(args)
        for i, d in zip(nums, dyn):
            full[i] = d
        handles = [box(args[i]._v) for i in fixed]
        for i, h in zip(fixed, handles):
            full[i] = h
        if not has_aux:   # (the output on the stack: a float() it returns stays returned untouched, returned.py)
            return fun(*full, **kwargs), (None, handles)
        out = fun(*full, **kwargs)
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise TypeError("has_aux=True requires the function to return a pair (output, aux)")
        return out[0], (out[1], handles)
    return f


@api_boundary
def grad(fun, argnums=0, has_aux=False):
    """Gradient of a scalar-valued function w.r.t. argnums.

    Parameters: fun (callable): returns a real float scalar. argnums (int or tuple of ints): which
        arguments to differentiate (default 0). has_aux (bool): fun returns (value, aux).
    Returns: callable: (*args) -> the gradient (with has_aux: (gradient, aux)).
    Raises: TypeError: when called, if fun's output is not a real scalar float or a differentiated
        argument is not floating-point.

    >>> grad(lambda x: xp.sum(x ** 2))(xp.asarray([1.0, 2.0]))
    Array([2., 4.])
    """
    vg = value_and_grad(fun, argnums, has_aux)

    @api_boundary
    def g(*args, **kwargs):
        (val, grads) = vg(*args, **kwargs)
        if has_aux:
            return grads, val[1]
        return grads
    g.__name__ = f"grad_{getattr(fun, '__name__', 'fun')}"
    return g


@api_boundary
def linear_transpose(fun, *primals):
    """The transpose of a linear function: ct (shaped like fun's output) -> cotangents of the inputs.

    Parameters: fun (callable): a linear function of arrays. primals: example arguments (their
        shapes and dtypes are used).
    Returns: callable: ct -> a tuple with one cotangent per primal.
    Raises: ValueError: if the cotangent's structure or shapes differ from fun's output; an error from
        the transpose rules if fun is not linear.

    >>> linear_transpose(lambda v: 2.0 * v, xp.asarray([1.0, 2.0]))(xp.ones(2))
    (Array([2., 2.]),)
    """
    from .jaxpr_transforms import stage
    leaves, tree = tree_flatten(primals)
    ps = [to_raw(x, "linear_transpose primal") for x in leaves]
    store = Store()
    closed = stage(flatten_fun(fun, tree, store), [get_aval(p) for p in ps])
    out_tree = store.val

    @api_boundary
    def transposed(ct):
        ct_leaves, ct_tree = tree_flatten(ct)
        if ct_tree != out_tree:
            raise ValueError(f"linear_transpose: cotangent structure {ct_tree} does not match the output {out_tree}")
        cts = [to_raw(c, "linear_transpose cotangent") for c in ct_leaves]
        for c, a in zip(cts, closed.out_avals):
            if get_aval(c).shape != a.shape:
                raise ValueError(f"linear_transpose: cotangent shape {get_aval(c).shape} != output shape {a.shape}")
        res = backward_pass(closed.jaxpr, closed.consts, cts)
        return tree_unflatten(tree, [box(S.zeros_like(p) if c is Zero else _match(c, p)) for c, p in zip(res, ps)])
    return transposed

