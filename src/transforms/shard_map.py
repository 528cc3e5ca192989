"""shard_map: run a per-shard function over a mesh of devices, each device on its block of the inputs.

`shard_map(f, mesh, in_specs, out_specs)(*args)` splits each argument over the mesh as its
PartitionSpec says (mesh axes the spec leaves out replicate it), runs `f` once per device on that
device's blocks, with every mesh axis bound by name so collectives inside can name them (several at
once: `psum(x, ('i', 'j'))`), and assembles the outputs as `out_specs` say (an output whose spec leaves
out a mesh axis is promised to be the same along it; member 0's value is taken). pmap is its 1-D case;
nested pmap is a 2-D mesh.

`f` is staged once per signature at the per-shard shapes and bound as `shard_map_p`, a call primitive
holding that body. Its rules reuse the shared jaxpr transforms (jaxpr_transforms.py): jvp is the
shard_map of the body's jvp (tangents laid out as their primals), vmap the shard_map of the batched
body (the batch axis unsplit, first), linearize splits the body with partial_eval_jaxpr (residuals
split over every mesh axis along a new leading axis), and the transpose is the shard_map of the body's
transpose, cotangents of replicated outputs divided by the replication and those of replicated inputs
psummed over the axes they are replicated along. The backend runs `shard_map_p` eagerly as one SPMD
program over the mesh (`backend.shard_map_call`, xla/spmd.py); `reference_jaxpr` is its meaning on one
device -- the body vmapped over each mesh axis with its name -- which single-device programs run.
"""
from __future__ import annotations

import contextlib
import functools

from .api_util import Store, box, flatten_fun, to_raw
from .backend import backend
from .batching import bind_axis, move_to, vmap_flat
from .collectives import psum_p
from .core import Primitive, Tracer, abstract_eval_rules, bind, get_aval, impl_rules, set_trace
from .jaxpr import ClosedJaxpr
from .jaxpr_transforms import batch_jaxpr, is_unknown_in, jvp_jaxpr, partial_eval_jaxpr, run_jaxpr, stage, \
    transpose_jaxpr
from .primitives import elementwise as E
from .primitives import structural as S
from .pytree import broadcast_prefix, tree_flatten, tree_unflatten
from .rules import Zero, batch_rules, is_undefined, jvp_rules, partial_eval_rules, transpose_rules
from .sharding import Mesh, P, PartitionSpec, check_shape, check_spec, global_shape
from .staging import convert_constvars

shard_map_p = Primitive("shard_map", multiple_results=True)


def _glob(mesh, spec, aval):
    return aval.update(shape=global_shape(mesh, spec, aval.shape))


def _shard_map_abstract(*avals, jaxpr, name, mesh, in_specs, out_specs):
    for i, (a, spec, b) in enumerate(zip(avals, in_specs, jaxpr.in_avals)):
        want = _glob(mesh, spec, b)
        if tuple(a.shape) != tuple(want.shape) or a.dtype != want.dtype:
            raise TypeError(f"shard_map({name}): operand {i} is {a.str_short()}, the body expects "
                            f"{want.str_short()} (per shard {b.str_short()}, spec {spec!r})")
    return [_glob(mesh, s, a) for a, s in zip(jaxpr.out_avals, out_specs)]


abstract_eval_rules[shard_map_p] = _shard_map_abstract
impl_rules[shard_map_p] = lambda *args, **params: backend.shard_map_call(list(args), params)


def bind_shard_map(closed, args, in_specs, out_specs, **params):
    """Bind shard_map_p on a closed body; its constants become leading replicated operands."""
    if closed.consts:
        jaxpr, consts = convert_constvars(closed)
        closed, args = ClosedJaxpr(jaxpr, []), list(consts) + list(args)
        in_specs = (P(),) * len(consts) + tuple(in_specs)
    return bind(shard_map_p, *args, jaxpr=closed, in_specs=tuple(in_specs), out_specs=tuple(out_specs), **params)


@contextlib.contextmanager
def mesh_axes(mesh):
    """Bind every axis of the mesh by name (outermost first) while a body is staged."""
    with contextlib.ExitStack() as st:
        for nm in mesh.axis_names:
            st.enter_context(bind_axis(nm, mesh.shape[nm]))
        yield


def _stage_body(f, avals, mesh):
    with mesh_axes(mesh):
        return stage(f, list(avals))


def _replicated_over(mesh, spec):
    used = set(spec.names())
    return tuple(a for a in mesh.axis_names if a not in used)


# ------------------------------------------------------------------------------- jvp
def _shard_map_jvp(primals, tangents, *, jaxpr, name, mesh, in_specs, out_specs):
    nonzeros = tuple(t is not Zero for t in tangents)
    with mesh_axes(mesh):
        new, out_nz = jvp_jaxpr(jaxpr, nonzeros)
    t_in = tuple(s for s, nz in zip(in_specs, nonzeros) if nz)
    t_out = tuple(s for s, nz in zip(out_specs, out_nz) if nz)
    outs = bind_shard_map(new, list(primals) + [t for t in tangents if t is not Zero], in_specs + t_in,
                          out_specs + t_out, name=f"jvp({name})", mesh=mesh)
    n = len(out_specs)
    it = iter(outs[n:])
    return outs[:n], [next(it) if nz else Zero for nz in out_nz]


jvp_rules[shard_map_p] = _shard_map_jvp


# -------------------------------------------------------------------------- batching
def _shard_map_batch(size, vals, dims, *, jaxpr, name, mesh, in_specs, out_specs):
    moved = [v if d is None else S.moveaxis(v, d, 0) for v, d in zip(vals, dims)]
    body_dims = tuple(None if d is None else 0 for d in dims)
    with mesh_axes(mesh):
        new, od = batch_jaxpr(jaxpr, body_dims, size, (None,) * len(out_specs))
    specs = tuple(s if d is None else P(None, *s) for s, d in zip(in_specs, dims))
    o_specs = tuple(s if d is None else P(None, *s) for s, d in zip(out_specs, od))
    outs = bind_shard_map(new, moved, specs, o_specs, name=f"vmap({name})", mesh=mesh)
    return outs, [None if d is None else 0 for d in od]


batch_rules[shard_map_p] = _shard_map_batch


# ------------------------------------------------------------------ partial evaluation
@functools.lru_cache(maxsize=256)
def _split_bodies(jaxpr, unknowns, mesh):
    """partial_eval_jaxpr's halves, with each residual given a leading axis of size 1 per shard so it
    can be split over every mesh axis (its global value: every shard's residual, stacked)."""
    with mesh_axes(mesh):
        known, unk, out_unknown, n_res = partial_eval_jaxpr(jaxpr, unknowns)
    n_known = len(known.out_avals) - n_res
    res_avals = known.out_avals[n_known:]

    def k(*a):
        outs = run_jaxpr(known)(*a)
        return outs[:n_known] + [S.reshape(r, (1,) + tuple(ra.shape)) for r, ra in zip(outs[n_known:], res_avals)]

    def u(*a):
        res = [S.reshape(r, tuple(ra.shape)) for r, ra in zip(a[:n_res], res_avals)]
        return run_jaxpr(unk)(*res, *a[n_res:])
    k_body = _stage_body(k, known.in_avals, mesh)
    u_body = _stage_body(u, [ra.update(shape=(1,) + tuple(ra.shape)) for ra in res_avals]
                         + list(unk.in_avals[n_res:]), mesh)
    return k_body, u_body, out_unknown, n_res


def _shard_map_partial_eval(trace, args, params):
    jaxpr, mesh, in_specs, out_specs = params["jaxpr"], params["mesh"], params["in_specs"], params["out_specs"]
    unknowns = tuple(map(is_unknown_in(trace), args))
    known, unk, out_unknown, n_res = _split_bodies(jaxpr, unknowns, mesh)
    res_spec = P(tuple(mesh.axis_names))
    k_args = [a for a, u in zip(args, unknowns) if not u]
    k_in = tuple(s for s, u in zip(in_specs, unknowns) if not u)
    k_out = tuple(s for s, u in zip(out_specs, out_unknown) if not u) + (res_spec,) * n_res
    with set_trace(trace.parent):
        k_outs = bind_shard_map(known, k_args, k_in, k_out, name=params["name"], mesh=mesh)
    n_known = len(k_outs) - n_res
    u_in = (res_spec,) * n_res + tuple(s for s, u in zip(in_specs, unknowns) if u)
    u_out = tuple(s for s, u in zip(out_specs, out_unknown) if u)
    u_outs = trace.stage_eqn(shard_map_p, list(k_outs[n_known:]) + [a for a, u in zip(args, unknowns) if u],
                             dict(params, jaxpr=unk, in_specs=u_in, out_specs=u_out))
    ki, ui = iter(k_outs[:n_known]), iter(u_outs)
    return [next(ui) if u else next(ki) for u in out_unknown]


partial_eval_rules[shard_map_p] = _shard_map_partial_eval


# ----------------------------------------------------------------------- transpose
@functools.lru_cache(maxsize=256)
def _transposed_body(jaxpr, linear, mesh, in_specs, out_specs):
    with mesh_axes(mesh):
        tj = transpose_jaxpr(jaxpr, linear)
    n_res = sum(1 for lin in linear if not lin)
    lin_specs = [s for s, lin in zip(in_specs, linear) if lin]

    def f(*a):
        res, cts = list(a[:n_res]), list(a[n_res:])
        # an output replicated over some axes reaches each of their members: count it once
        cts = [_div(c, mesh.axis_size(_replicated_over(mesh, s))) for c, s in zip(cts, out_specs)]
        outs = run_jaxpr(tj)(*res, *cts)
        # an input replicated over some axes: its cotangent is the sum over their members
        return [_psum(o, _replicated_over(mesh, s)) for o, s in zip(outs, lin_specs)]
    return _stage_body(f, list(tj.in_avals), mesh)


def _div(c, n):
    return c if n == 1 else E.div(c, E.full_like_scalar(c, n))


def _psum(o, axes):
    return bind(psum_p, o, axes=axes) if axes else o


def _shard_map_transpose(cts, *args, jaxpr, name, mesh, in_specs, out_specs):
    linear = tuple(is_undefined(a) for a in args)
    cts = [S.zeros_of_aval(_glob(mesh, s, a).strip_weak()) if c is Zero else c
           for c, a, s in zip(cts, jaxpr.out_avals, out_specs)]
    tb = _transposed_body(jaxpr, linear, mesh, in_specs, out_specs)
    res = [a for a in args if not is_undefined(a)]
    t_in = tuple(s for s, lin in zip(in_specs, linear) if not lin) + tuple(out_specs)
    t_out = tuple(s for s, lin in zip(in_specs, linear) if lin)
    outs = iter(bind_shard_map(tb, res + cts, t_in, t_out, name=f"transpose({name})", mesh=mesh))
    return [next(outs) if lin else None for lin in linear]


transpose_rules[shard_map_p] = _shard_map_transpose


# ------------------------------------------------------------- one-device reference
def _split_dims(mesh, spec, shape):
    """A global value reshaped so each mesh axis splitting it is its own dimension, those dimensions
    first in mesh order: (the new shape before the transpose, the permutation, the axes present)."""
    split_shape, axis_pos, block_pos = [], {}, []
    for d, size in enumerate(shape):
        axes = spec.axes_of(d)
        k = mesh.axis_size(axes)
        for a in axes:
            axis_pos[a] = len(split_shape)
            split_shape.append(mesh.shape[a])
        block_pos.append(len(split_shape))
        split_shape.append(size // k)
    present = [a for a in mesh.axis_names if a in axis_pos]
    return split_shape, [axis_pos[a] for a in present] + block_pos, present


@functools.lru_cache(maxsize=256)
def reference_jaxpr(jaxpr, mesh, in_specs, out_specs):
    """What a shard_map computes, on one device: the body vmapped over each mesh axis by name, each
    argument split over the axes its spec names and unmapped along the others."""
    avals = [_glob(mesh, s, a) for a, s in zip(jaxpr.in_avals, in_specs)]
    names = mesh.axis_names

    def f(*args):
        vals, present = [], []
        for x, s, a in zip(args, in_specs, avals):
            shp, perm, pres = _split_dims(mesh, s, a.shape)
            vals.append(S.transpose(S.reshape(x, tuple(shp)), tuple(perm)))
            present.append(pres)

        def level(m, vs):
            if m == len(names):
                return run_jaxpr(jaxpr)(*vs)
            nm, n = names[m], mesh.shape[names[m]]
            dims = [0 if nm in pres else None for pres in present]
            outs, od = vmap_flat(lambda *a: level(m + 1, list(a)), vs, dims, n, nm)
            res = []
            for o, d, s in zip(outs, od, out_specs):
                if nm in s.names():
                    res.append(move_to(o, d, 0, n))
                elif d is not None:   # promised the same along this axis: member 0's value
                    res.append(_take0(o, d))
                else:
                    res.append(o)
            return res
        outs = level(0, vals)
        final = []
        for o, s, a in zip(outs, out_specs, jaxpr.out_avals):
            g = global_shape(mesh, s, a.shape)
            shp, perm, _ = _split_dims(mesh, s, g)
            inv = [0] * len(perm)
            for i, p in enumerate(perm):
                inv[p] = i
            final.append(S.reshape(S.transpose(o, tuple(inv)), tuple(g)))
        return final
    return stage(f, avals)


def _take0(o, d):
    shape = tuple(get_aval(o).shape)
    start = (0,) * len(shape)
    limit = shape[:d] + (1,) + shape[d + 1:]
    return S.reshape(S.slice_(o, start, limit), shape[:d] + shape[d + 1:])


def mesh_of_jaxpr(closed):
    """The mesh (of more than one device) of the first shard_map a jaxpr runs, looking into nested calls:
    jit of such a function is compiled as an SPMD program over it (None if there is none)."""
    for eqn in closed.jaxpr.eqns:
        if eqn.prim is shard_map_p and eqn.params["mesh"].size > 1:
            return eqn.params["mesh"]
        inner = eqn.params.get("jaxpr")
        if isinstance(inner, ClosedJaxpr):
            m = mesh_of_jaxpr(inner)
            if m is not None:
                return m
    return None


# ======================================================================== shard_map API

class _SpecLeaf:
    __slots__ = ("spec",)

    def __init__(self, spec):
        self.spec = spec


def _wrap_specs(specs):
    """PartitionSpec is a tuple: mark each one a leaf before matching the prefix against a pytree."""
    if isinstance(specs, PartitionSpec) or specs is None:
        return _SpecLeaf(specs if specs is not None else P())
    if isinstance(specs, (tuple, list)):
        return type(specs)(_wrap_specs(s) for s in specs)
    if isinstance(specs, dict):
        return {k: _wrap_specs(v) for k, v in specs.items()}
    raise TypeError(f"shard_map: a spec must be a PartitionSpec (or a pytree of them), got {type(specs).__name__}")


def _specs_for(specs, tree_obj, mesh, what):
    leaves = broadcast_prefix(_wrap_specs(specs), tree_obj, f"shard_map {what}")
    return [check_spec(mesh, leaf.spec, f"shard_map {what}") for leaf in leaves]


class _Entry:
    __slots__ = ("closed", "consts", "out_tree", "out_specs")

    def __init__(self, closed, consts, out_tree, out_specs):
        self.closed, self.consts, self.out_tree, self.out_specs = closed, consts, out_tree, out_specs


def shard_map(f, mesh, in_specs, out_specs, check_rep=None, check_vma=None, auto=frozenset()):
    """Run `f` on each device of `mesh` with that device's blocks of the arguments (split as `in_specs`
    say: a pytree prefix of the positional arguments), mesh axes bound by name for collectives; results
    assembled as `out_specs` (a pytree prefix of f's output) say. check_rep/check_vma are accepted and
    not checked: an output whose spec leaves out a mesh axis is taken from member 0 along it.

    Parameters: f (callable): the per-shard function. mesh (Mesh): its axes are bound by name inside f.
        in_specs, out_specs (PartitionSpec or pytree prefix of them): how arguments are split and results
        assembled. check_rep, check_vma: accepted, ignored. auto: must be empty.
    Returns: callable: the mapped function (its results laid out over the mesh).
    Raises: TypeError: if f is not callable or mesh is not a Mesh. NotImplementedError: if auto is not
        empty. ValueError (when called): if a spec names an axis the mesh lacks or does not fit its
        argument's or result's shape.

    On a one-device mesh, f sees the whole array; psum over the axis is its own block's sum:

    >>> total = shard_map(lambda b: psum(xp.sum(b), "i"), make_mesh((1,), ("i",)), in_specs=P("i"), out_specs=P())
    >>> total(xp.arange(4.))
    Array(6.)
    """
    if not callable(f):
        raise TypeError(f"shard_map expects a callable, got {type(f).__name__}")
    if not isinstance(mesh, Mesh):
        raise TypeError(f"shard_map: mesh must be a transforms.Mesh, got {type(mesh).__name__}")
    if auto:
        raise NotImplementedError("shard_map: auto= (axes left to the automatic partitioner) is not supported")
    fname = getattr(f, "__name__", "fun")
    cache = {}

    def mapped(*args):
        leaves, tree = tree_flatten(args)
        specs = _specs_for(in_specs, args, mesh, "in_specs")
        raw = [to_raw(x, f"shard_map({fname}) argument") for x in leaves]
        body_avals = []
        for i, (v, s) in enumerate(zip(raw, specs)):
            a = get_aval(v)
            body_avals.append(a.update(shape=check_shape(mesh, s, a.shape, f"shard_map({fname}) argument {i}")))
        key = (tree, tuple(body_avals), tuple(specs))
        ent = cache.get(key)
        if ent is None:
            ent = _trace(tree, body_avals)
            if not any(isinstance(c, Tracer) for c in ent.consts):
                cache[key] = ent
        outs = bind(shard_map_p, *ent.consts, *raw, jaxpr=ent.closed, name=fname, mesh=mesh,
                    in_specs=(P(),) * len(ent.consts) + tuple(specs), out_specs=ent.out_specs)
        return tree_unflatten(ent.out_tree, [box(o) for o in outs])

    def _trace(tree, body_avals):
        store = Store()
        flat = flatten_fun(f, tree, store, f"shard_map({fname}) output")
        closed = _stage_body(flat, body_avals, mesh)
        out_tree = store.val
        outs_obj = tree_unflatten(out_tree, [0] * out_tree.num_leaves)
        o_specs = _specs_for(out_specs, outs_obj, mesh, "out_specs")
        for i, (s, a) in enumerate(zip(o_specs, closed.out_avals)):
            if len(s) > len(a.shape):
                raise ValueError(f"shard_map({fname}) out_specs: {s!r} has {len(s)} entries, more than the "
                                 f"{len(a.shape)} dimension(s) of output {i} ({a.str_short()})")
        jaxpr, consts = convert_constvars(closed)
        return _Entry(ClosedJaxpr(jaxpr, []), consts, out_tree, tuple(o_specs))

    mapped.__name__ = f"shard_map_{fname}"
    mapped.__wrapped__ = f
    return mapped


__all__ = ["shard_map", "shard_map_p", "reference_jaxpr", "mesh_of_jaxpr"]
