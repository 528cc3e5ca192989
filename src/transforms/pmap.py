"""pmap: run one function on several devices at once, one member of a named axis per device.

`pmap(f, axis_name)` stages `f` once per signature at the per-member shapes (the mapped axis
removed), with the axis bound so collectives inside can name it, and binds `pmap_p`: a call
primitive holding that body. Its rules reuse the shared jaxpr transforms (jaxpr_transforms.py):
jvp is the pmap of the body's jvp, vmap the pmap of the batched body, linearize splits the body
with partial_eval_jaxpr (residuals stay mapped), and the transpose is the pmap of the body's
transpose -- cotangents of replicated outputs divided by the axis size and those of replicated
inputs psummed, so gradients through replicated values count each value once. The backend runs
`pmap_p` eagerly (`backend.pmap_call`: one program over the devices, xla/pmap_runtime.py); `pmap(f)`
itself may be the backend's native dispatcher for repeat calls (`backend.pmap_public`), which calls back
into the Python path below for everything it has not seen.

Inside the primitive every mapped operand and result carries the mapped axis first (the wrapper
moves in_axes/out_axes there and back); `in_axes`/`out_axes` params are 0 (mapped) or None
(replicated: the same value on every member). `devices` lists the ids of the axis's devices in
member order; with several processes it holds every process's, while `axis_size` (the operands' and
results' leading size) counts this process's members only, so the bound axis size is len(devices).
An optional `donated` (per operand) marks operands whose buffers the program may reuse.
"""
from __future__ import annotations

import functools

from .api_util import Store, box, flatten_fun, to_raw
from .backend import backend
from .batching import bind_axis, mapped_axis_size
from .collectives import psum_p
from .core import EVAL, Primitive, Tracer, abstract_eval_rules, bind, boxing, get_aval, impl_rules, set_trace, \
    trace_state
from .jaxpr import ClosedJaxpr
from .jaxpr_transforms import batch_jaxpr, is_unknown_in, jvp_jaxpr, partial_eval_jaxpr, run_jaxpr, stage, \
    transpose_jaxpr
from .primitives import elementwise as E
from .primitives import structural as S
from .pytree import broadcast_prefix, tree_flatten, tree_unflatten
from .rules import Zero, batch_rules, is_undefined, jvp_rules, partial_eval_rules, transpose_rules
from .staging import convert_constvars

pmap_p = Primitive("pmap", multiple_results=True)


class _Anonymous:
    """The axis of a pmap given no axis_name: unique to that pmap, so nothing else can name it."""
    __slots__ = ()

    def __repr__(self):
        return "<unnamed>"


def _global(aval, ax, n):
    return aval if ax is None else aval.update(shape=(n,) + tuple(aval.shape))


def _pmap_abstract(*avals, jaxpr, name, axis_name, axis_size, in_axes, out_axes, devices, donated=()):
    for i, (a, ax, b) in enumerate(zip(avals, in_axes, jaxpr.in_avals)):
        want = _global(b, ax, axis_size)
        if tuple(a.shape) != tuple(want.shape) or a.dtype != want.dtype:
            raise TypeError(f"pmap({name}): operand {i} is {a.str_short()}, the body expects {want.str_short()}")
    return [_global(a, ax, axis_size) for a, ax in zip(jaxpr.out_avals, out_axes)]


abstract_eval_rules[pmap_p] = _pmap_abstract
impl_rules[pmap_p] = lambda *args, **params: backend.pmap_call(list(args), params)


def bind_pmap(closed, args, in_axes, out_axes, **params):
    """Bind pmap_p on a closed body; its constants become leading replicated operands."""
    if closed.consts:
        jaxpr, consts = convert_constvars(closed)
        closed, args = ClosedJaxpr(jaxpr, []), list(consts) + list(args)
        in_axes = (None,) * len(consts) + tuple(in_axes)
    return bind(pmap_p, *args, jaxpr=closed, in_axes=tuple(in_axes), out_axes=tuple(out_axes), **params)


def _rest(params):
    return {k: params[k] for k in ("axis_name", "axis_size", "devices")}


# ------------------------------------------------------------------------------- jvp
def _pmap_jvp(primals, tangents, *, jaxpr, name, in_axes, out_axes, **params):
    nonzeros = tuple(t is not Zero for t in tangents)
    new, out_nz = jvp_jaxpr(jaxpr, nonzeros)
    t_in = tuple(ax for ax, nz in zip(in_axes, nonzeros) if nz)
    t_out = tuple(ax for ax, nz in zip(out_axes, out_nz) if nz)
    outs = bind_pmap(new, list(primals) + [t for t in tangents if t is not Zero], in_axes + t_in, out_axes + t_out,
                     name=f"jvp({name})", **_rest(params))
    n = len(out_axes)
    it = iter(outs[n:])
    return outs[:n], [next(it) if nz else Zero for nz in out_nz]


jvp_rules[pmap_p] = _pmap_jvp


# -------------------------------------------------------------------------- batching
def _pmap_batch(size, vals, dims, *, jaxpr, name, in_axes, out_axes, **params):
    moved, body_dims = [], []
    for v, d, ax in zip(vals, dims, in_axes):
        if d is None:
            moved.append(v)
            body_dims.append(None)
        else:   # the vmap axis right after the mapped one: axis 0 of each member's value
            moved.append(S.moveaxis(v, d, 0 if ax is None else 1))
            body_dims.append(0)
    new, od = batch_jaxpr(jaxpr, tuple(body_dims), size, (None,) * len(out_axes))
    outs = bind_pmap(new, moved, in_axes, out_axes, name=f"vmap({name})", **_rest(params))
    return outs, [None if d is None else (0 if ax is None else 1) for d, ax in zip(od, out_axes)]


batch_rules[pmap_p] = _pmap_batch


# ------------------------------------------------------------------ partial evaluation
def _pmap_partial_eval(trace, args, params):
    jaxpr, in_axes, out_axes = params["jaxpr"], params["in_axes"], params["out_axes"]
    unknowns = tuple(map(is_unknown_in(trace), args))
    known, unk, out_unknown, n_res = partial_eval_jaxpr(jaxpr, unknowns)
    k_args = [a for a, u in zip(args, unknowns) if not u]
    k_in = tuple(ax for ax, u in zip(in_axes, unknowns) if not u)
    k_out = tuple(ax for ax, u in zip(out_axes, out_unknown) if not u) + (0,) * n_res   # residuals stay mapped
    with set_trace(trace.parent):
        k_outs = bind_pmap(known, k_args, k_in, k_out, name=params["name"], **_rest(params))
    n_known = len(k_outs) - n_res
    u_in = (0,) * n_res + tuple(ax for ax, u in zip(in_axes, unknowns) if u)
    u_out = tuple(ax for ax, u in zip(out_axes, out_unknown) if u)
    u_outs = trace.stage_eqn(pmap_p, list(k_outs[n_known:]) + [a for a, u in zip(args, unknowns) if u],
                             dict(params, jaxpr=unk, in_axes=u_in, out_axes=u_out, donated=()))
    ki, ui = iter(k_outs[:n_known]), iter(u_outs)
    return [next(ui) if u else next(ki) for u in out_unknown]


partial_eval_rules[pmap_p] = _pmap_partial_eval


# ----------------------------------------------------------------------- transpose
@functools.lru_cache(maxsize=256)
def _transposed_body(jaxpr, linear, axis_name, axis_size, in_axes, out_axes):
    tj = transpose_jaxpr(jaxpr, linear)
    n_res = sum(1 for lin in linear if not lin)
    lin_axes = [ax for ax, lin in zip(in_axes, linear) if lin]

    def f(*a):
        res, cts = list(a[:n_res]), list(a[n_res:])
        # a replicated output's cotangent reaches every member: count it once
        cts = [c if ax is not None else E.div(c, E.full_like_scalar(c, axis_size)) for c, ax in zip(cts, out_axes)]
        outs = run_jaxpr(tj)(*res, *cts)
        # a replicated input's cotangent is the sum of every member's
        return [o if ax is not None else bind(psum_p, o, axes=(axis_name,)) for o, ax in zip(outs, lin_axes)]
    return stage(f, list(tj.in_avals))


def _pmap_transpose(cts, *args, jaxpr, name, in_axes, out_axes, **params):
    linear = tuple(is_undefined(a) for a in args)
    n = params["axis_size"]
    cts = [S.zeros_of_aval(_global(a, ax, n).strip_weak()) if c is Zero else c
           for c, a, ax in zip(cts, jaxpr.out_avals, out_axes)]
    tb = _transposed_body(jaxpr, linear, params["axis_name"], len(params["devices"]), in_axes, out_axes)
    res = [a for a in args if not is_undefined(a)]
    t_in = tuple(ax for ax, lin in zip(in_axes, linear) if not lin) + tuple(out_axes)
    t_out = tuple(ax for ax, lin in zip(in_axes, linear) if lin)
    outs = iter(bind_pmap(tb, res + cts, t_in, t_out, name=f"transpose({name})", **_rest(params)))
    return [next(outs) if lin else None for lin in linear]


transpose_rules[pmap_p] = _pmap_transpose


@functools.lru_cache(maxsize=256)
def as_vmap_jaxpr(jaxpr, axis_name, axis_size, in_axes, out_axes, devices=None):
    """The pmap's computation on one device: its body vmapped over the named axis (the reference
    semantics). What a pmap inside a single-device program computes."""
    from .batching import vmap_flat, move_to
    if devices is not None and len(devices) != axis_size:
        raise NotImplementedError(f"a pmap over {len(devices)} devices of several processes inside a larger "
                                  "jitted program: jit the pmap alone (jit of a function that only calls pmaps "
                                  "runs them as their multi-device programs), or call it outside jit")
    avals = [_global(a, ax, axis_size) for a, ax in zip(jaxpr.in_avals, in_axes)]

    def f(*args):
        outs, od = vmap_flat(run_jaxpr(jaxpr), list(args), list(in_axes), axis_size, axis_name)
        return [o if ax is None else move_to(o, d, 0, axis_size) for o, d, ax in zip(outs, od, out_axes)]
    return stage(f, avals)


# ============================================================================ pmap API

def _norm_axis(ax, ndim, what):
    if ax is None:
        return None
    if not isinstance(ax, int) or isinstance(ax, bool):
        raise TypeError(f"pmap {what} entries must be int or None, got {ax!r}")
    if not -ndim <= ax < ndim:
        raise ValueError(f"pmap {what}={ax} does not fit an argument with {ndim} dimensions")
    return ax % ndim


def _as_tuple(v, what):
    if isinstance(v, int):
        return (v,)
    try:
        return tuple(int(i) for i in v)
    except TypeError:
        raise TypeError(f"pmap {what} must be an int or a sequence of ints, got {v!r}") from None


class _Entry:
    __slots__ = ("closed", "consts", "out_tree", "out_axes")

    def __init__(self, closed, consts, out_tree, out_axes):
        self.closed, self.consts, self.out_tree, self.out_axes = closed, consts, out_tree, out_axes


def pmap(fun, axis_name=None, *, in_axes=0, out_axes=0, static_broadcasted_argnums=(), devices=None,
         axis_size=None, donate_argnums=()):
    """Run `fun` on several devices at once: member k of the mapped axis (axis `in_axes` of each
    argument; None: the same value for every member) on device k. Collectives inside name the axis
    `axis_name`. Returns the members' results stacked along `out_axes` (None: a result the same on
    every member, returned once).

    donate_argnums: positional arguments whose buffers the call may reuse for its results; one already
    on the pmap's devices (e.g. an earlier pmap's result) is consumed: using it again raises.
    In a run of several processes (transforms.distributed) the axis spans the first n devices of every
    process: each process passes and gets back the n members on its own devices, while collectives see
    all n * process_count members.

    Parameters: fun (callable): the per-member function. axis_name (hashable): the name collectives use
        (default: an anonymous axis). in_axes (int, None or a pytree prefix of the arguments, keyword):
        the mapped axis of each argument (default 0). out_axes (keyword): likewise for the results.
        static_broadcasted_argnums (int or tuple, keyword): positional arguments passed as Python values
        (hashable; a new trace per value). devices (list of Device, keyword): the devices, member order
        (default: the first n local devices). axis_size (int, keyword): n when no argument is mapped.
        donate_argnums (int or tuple, keyword): see above.
    Returns: callable: the pmapped function; its results lie over the devices (split along out_axes).
    Raises: TypeError: if fun is not callable or axis_name / a static argument is unhashable.
        ValueError (when called): if the mapped axes disagree in size, in_axes does not fit the
        arguments, the axis has more members than the (given or local) devices, or an argument is both
        static and donated. RuntimeError (when called): if a donated argument is used again.

    One member per device: with one device the axis has size 1.

    >>> f = pmap(lambda v: xp.sum(v) / psum(1., "i"), axis_name="i")   # a row's sum / the member count
    >>> f(xp.asarray([[1., 2., 3.]]))
    Array([6.])
    """
    if not callable(fun):
        raise TypeError(f"pmap expects a callable, got {type(fun).__name__}")
    try:
        hash(axis_name)
    except TypeError:
        raise TypeError(f"pmap axis_name must be hashable, got {type(axis_name).__name__}") from None
    static = _as_tuple(static_broadcasted_argnums, "static_broadcasted_argnums")
    donate = _as_tuple(donate_argnums, "donate_argnums")
    name = axis_name if axis_name is not None else _Anonymous()
    fname = getattr(fun, "__name__", "fun")
    cache = {}
    lanes = {}   # eager calls of plain Arrays: their avals -> (entry, params), the work below done once

    def pmapped(*args, **kwargs):
        return call(args, kwargs)[0]

    def call(args, kwargs):
        """(the result, what ran: (the pmap's params, its operands, its raw outputs, how many operands lead as
        the body's constants) for an eager call of no static or donated arguments, each mapped along axis 0 or
        replicated, else None) -- what a native dispatcher needs to repeat the call."""
        if lanes and not kwargs and trace_state.trace is EVAL:
            hit = lanes.get(_lane_key(args))
            if hit is not None:
                ent, params = hit
                operands = [*ent.consts, *[a._v for a in args]]
                outs = bind(pmap_p, *operands, **params)
                return tree_unflatten(ent.out_tree, [box(o) for o in outs]), (params, operands, outs,
                                                                               len(ent.consts))
        nargs = len(args)
        st = tuple(i % nargs for i in static if -nargs <= i < nargs) if nargs else ()
        for i in st:
            try:
                hash(args[i])
            except TypeError:
                raise TypeError(f"pmap({fname}): static argument {i} of type {type(args[i]).__name__} is not "
                                "hashable") from None
        dyn_idx = [i for i in range(nargs) if i not in st]
        dyn = tuple(args[i] for i in dyn_idx)
        ia = tuple(in_axes) if isinstance(in_axes, list) else in_axes
        if isinstance(ia, tuple):
            if len(ia) != nargs:
                raise ValueError(f"pmap in_axes has {len(ia)} entries but the function was called with {nargs} "
                                 "positional arguments")
            ia = tuple(ia[i] for i in dyn_idx)
        axes = broadcast_prefix(ia, dyn, "pmap in_axes") + [0] * len(tree_flatten(kwargs)[0])
        leaves, tree = tree_flatten((dyn, kwargs))
        raw = [to_raw(x, f"pmap({fname}) argument") for x in leaves]
        axes = [_norm_axis(a, len(get_aval(v).shape), "in_axes") for v, a in zip(raw, axes)]
        n = mapped_axis_size(raw, axes, axis_size, "pmap", "leading size")
        devs = _devices(n)
        moved = [v if a in (None, 0) else S.moveaxis(v, a, 0) for v, a in zip(raw, axes)]
        body_avals = tuple(get_aval(v) if a is None else get_aval(v).update(shape=get_aval(v).shape[1:])
                           for v, a in zip(moved, axes))
        key = (tree, body_avals, tuple(args[i] for i in st), tuple(a is None for a in axes), n, len(devs))
        ent = cache.get(key)
        if ent is None:   # collectives see the whole axis: every process's members
            ent = _trace(tree, body_avals, st, nargs, args, len(devs))
            if not any(isinstance(c, Tracer) for c in ent.consts):
                cache[key] = ent
        ins = tuple(None if a is None else 0 for a in axes)
        extra = {"donated": _donated(tree, dyn_idx, st, nargs, len(ent.consts))} if donate else {}
        params = dict(jaxpr=ent.closed, name=fname, axis_name=name, axis_size=n,
                      in_axes=(None,) * len(ent.consts) + ins,
                      out_axes=tuple(None if a is None else 0 for a in ent.out_axes), devices=devs, **extra)
        operands = [*ent.consts, *moved]
        outs = bind(pmap_p, *operands, **params)
        res = [box(o if a in (None, 0) else S.moveaxis(o, 0, a)) for o, a in zip(outs, ent.out_axes)]
        ran = (params, operands, outs, len(ent.consts)) if trace_state.trace is EVAL and not (st or donate) and \
            all(a in (None, 0) for a in axes) else None   # (each operand its argument as given, or that put)
        if ran is not None and not kwargs and cache.get(key) is ent and \
                all(a in (None, 0) for a in ent.out_axes) and (lk := _lane_key(args)) is not None:
            if len(lanes) >= 64:
                lanes.clear()
            lanes[lk] = (ent, params)
        return tree_unflatten(ent.out_tree, res), ran

    def _donated(tree, dyn_idx, st, nargs, n_consts):
        """Per operand: whether its buffers may be reused for the results (deleted by the call); the pmap's
        devices get fresh copies of host data, so only values already on them are consumed."""
        for i in donate:
            if -nargs <= i < nargs and i % nargs in st:
                raise ValueError(f"pmap({fname}): argument {i % nargs} is both static and donated")
        want = {i % nargs for i in donate if -nargs <= i < nargs}
        pos_tree = tree.children[0]
        mask = [False] * n_consts
        for i, sub in zip(dyn_idx, pos_tree.children):
            mask += [i in want] * sub.num_leaves
        return tuple(mask + [False] * tree.children[1].num_leaves)

    def _devices(n):
        """The ids of the axis's devices, member order: this process's n and, in a run of several processes,
        the others' (each process passes the members on its own devices: its slice of the axis)."""
        if devices is not None:
            devs = list(devices)
            me = backend.process_index()
            mine = sum(1 for d in devs if getattr(d, "process_index", me) == me)
            if mine != n:
                raise ValueError(f"pmap: the mapped axis has size {n} but devices= lists {mine} devices"
                                 f"{f' of this process ({len(devs)} in all)' if mine != len(devs) else ''}")
            return tuple(d.id for d in devs)
        avail = backend.local_devices()
        if n > len(avail):
            raise ValueError(f"pmap: the mapped axis has size {n}, more than the {len(avail)} local devices "
                             "available; ask for more CPU devices with transforms.set_cpu_device_count(n) before "
                             "first use, ARRAY_NAMESPACE_CPU_DEVICES=n, or XLA_FLAGS="
                             "--xla_force_host_platform_device_count=n")
        if backend.process_count() == 1:
            return tuple(d.id for d in avail[:n])
        return _across_processes(n)

    def _trace(tree, body_avals, st, nargs, args, n):
        statics = {i: args[i] for i in st}

        def f(dyn, kw):
            it = iter(dyn)
            return fun(*[statics[i] if i in statics else next(it) for i in range(nargs)], **kw)
        store = Store()
        flat = flatten_fun(f, tree, store, f"pmap({fname}) output")
        with bind_axis(name, n):
            closed = stage(flat, list(body_avals))
        out_tree = store.val
        outs_obj = tree_unflatten(out_tree, [0] * out_tree.num_leaves)
        oa = broadcast_prefix(out_axes, outs_obj, "pmap out_axes")
        oa = [_norm_axis(a, len(o.shape) + 1, "out_axes") for a, o in zip(oa, closed.out_avals)]
        jaxpr, consts = convert_constvars(closed)
        return _Entry(ClosedJaxpr(jaxpr, []), consts, out_tree, oa)

    pmapped.__name__ = f"pmap_{fname}"
    pmapped.__wrapped__ = fun
    pmapped.call = call
    if static or donate:
        return pmapped
    # repeat calls of a signature seen before, on arguments already on the devices (or NumPy arrays and values
    # on one device, put on them per call): the backend's native dispatcher where it has one (it calls `call`
    # for everything else)
    return backend.pmap_public(pmapped) or pmapped


def _lane_key(args):
    """The avals of positional arguments that are all Arrays (else None): with no keywords, what decides
    everything a pmap call works out before it runs (tree, mapped size, body avals, devices)."""
    bt = boxing.box_type
    for a in args:
        if type(a) is not bt:
            return None
    try:
        return tuple([a._v.aval for a in args])
    except AttributeError:
        return None


def _across_processes(n):
    """The first n devices of every process, in process order (each process must map the same n)."""
    by_proc = {}
    for d in backend.devices():
        by_proc.setdefault(d.process_index, []).append(d)
    short = {p: len(ds) for p, ds in by_proc.items() if len(ds) < n}
    if short:
        raise ValueError(f"pmap: the mapped axis has size {n} per process, more than processes {short} have")
    return tuple(d.id for p in sorted(by_proc) for d in sorted(by_proc[p], key=lambda d: d.id)[:n])


__all__ = ["pmap", "pmap_p"]
