"""Lowering of the collectives (transforms/collectives.py) to XLA collectives over a pmap's devices.

A pmap body is lowered as a replica program (xla/pmap_runtime.py): one replica per device, each
seeing per-device shapes. The pmap's lowering binds its axis name here (`axis_env`) while its body
is emitted; a collective over that axis becomes an all_reduce / all_gather / reduce_scatter /
all_to_all / collective_permute / replica_id over every replica. A collective over an axis no pmap
binds here cannot be lowered (the engine raises before that for user code; this is the backstop).
"""
from __future__ import annotations

import threading

import numpy as np

from transforms.collectives import (all_gather_p, all_to_all_p, axis_index_p, pmax_p, pmin_p, ppermute_p,
                                    psum_p, psum_scatter_p)

from ._jaxlib import hlo, ir
from .lowering import constant, fill_region, lowering_rules, tensor_type, ttype


class _Env(threading.local):
    def __init__(self):
        self.axes = []   # [(name, size)] of the pmaps whose bodies are being lowered, innermost last
        self.mesh = None   # (axis names, sizes, partitions) of the shard_map whose body is lowered as SPMD partitions
        self.channel = 0


_env = _Env()


class axis_env:
    """Context manager: lowering a pmap body over `size` replicas whose axis is `name`."""

    def __init__(self, name, size):
        self.name, self.size = name, size

    def __enter__(self):
        _env.axes.append((self.name, self.size))

    def __exit__(self, *exc):
        _env.axes.pop()


class mesh_env:
    """Context manager: lowering a shard_map body as the manual partitions of an SPMD program over a mesh
    (xla/spmd.py); a collective over mesh axes runs within the groups of partitions that differ only along
    them, with a channel and global device ids. `partitions`: the partition of each mesh position, row-major
    (None: the positions themselves)."""

    def __init__(self, names, sizes, partitions=None):
        sizes = tuple(int(s) for s in sizes)
        if partitions is not None and list(partitions) == list(range(len(partitions))):
            partitions = None
        self.mesh = (tuple(names), sizes, None if partitions is None else np.array(partitions, np.int64))

    def __enter__(self):
        self.prev, _env.mesh = _env.mesh, self.mesh

    def __exit__(self, *exc):
        _env.mesh = self.prev


def _mesh_groups(axes, what):
    names, sizes, parts = _env.mesh
    for a in axes:
        if a not in names:
            raise NotImplementedError(f"{what}: cannot lower a collective over axis {a!r}: the mesh being lowered "
                                      f"has axes {list(names)}")
    pos = [names.index(a) for a in axes]
    rest = [k for k in range(len(names)) if k not in pos]
    ids = (np.arange(int(np.prod(sizes)), dtype=np.int64) if parts is None else parts).reshape(sizes)
    return np.ascontiguousarray(ids.transpose(rest + pos).reshape(-1, int(np.prod([sizes[k] for k in pos]))))


def _comm(axes, what, global_ids=True):
    """(members per group, replica_groups attribute, the op's SPMD keyword arguments)."""
    if _env.mesh is None or not all(a in _env.mesh[0] for a in axes):
        n = _size(axes, what)
        return n, _groups(n), {}
    g = _mesh_groups(axes, what)
    _env.channel += 1
    kw = {"channel_handle": hlo.ChannelHandle.get(_env.channel, 1)}
    if global_ids:
        kw["use_global_device_ids"] = True
    return g.shape[1], ir.DenseIntElementsAttr.get(g), kw


def _size(axes, what):
    for name in axes:
        if not any(n == name for n, _ in _env.axes):
            bound = [n for n, _ in _env.axes]
            raise NotImplementedError(f"{what}: cannot lower a collective over axis {name!r}: no pmap binds it "
                                      f"in this program (pmap axes here: {bound})")
    if len(axes) != 1:
        raise NotImplementedError(f"{what}: a collective over several pmap axes {axes} (nested pmap) is not supported")
    return dict(_env.axes)[axes[0]]


def _groups(n):
    return ir.DenseIntElementsAttr.get(np.arange(n, dtype=np.int64)[None])


def _all_reduce(op):
    def rule(c, x, *, axes):
        n, groups, kw = _comm(axes, "all_reduce")
        aval = c.avals_in[0]
        ar = hlo.AllReduceOp([ttype(aval)], [x], groups, **kw)
        scalar = tensor_type((), aval.dtype)
        fill_region(ar.computation, [scalar, scalar], lambda a, b: [op(a, b)])
        return ar.results[0]
    return rule


lowering_rules[psum_p] = _all_reduce(hlo.add)
lowering_rules[pmax_p] = _all_reduce(hlo.maximum)
lowering_rules[pmin_p] = _all_reduce(hlo.minimum)


def _reshape(x, shape, dtype):
    return hlo.ReshapeOp(tensor_type(shape, dtype), x).result


def _all_gather(c, x, *, axes, axis, tiled, axis_size):
    n, groups, kw = _comm(axes, "all_gather")
    a = c.avals_in[0]
    if not tiled:   # gather size-1 blocks along a new axis
        shape = list(a.shape)
        shape.insert(axis, 1)
        x = _reshape(x, shape, a.dtype)
    return hlo.AllGatherOp([ttype(c.avals_out[0])], [x], axis, groups, **kw).results[0]


lowering_rules[all_gather_p] = _all_gather


def _psum_scatter(c, x, *, axes, scatter_dimension, tiled, axis_size):
    n, groups, kw = _comm(axes, "psum_scatter")
    a, out = c.avals_in[0], c.avals_out[0]
    shape = list(a.shape)
    shape[scatter_dimension] //= n
    rs = hlo.ReduceScatterOp(tensor_type(shape, a.dtype), x, scatter_dimension, groups, **kw)
    scalar = tensor_type((), a.dtype)
    fill_region(rs.computation, [scalar, scalar], lambda p, q: [hlo.add(p, q)])
    y = rs.result
    return y if tiled else _reshape(y, out.shape, a.dtype)


lowering_rules[psum_scatter_p] = _psum_scatter


def _all_to_all(c, x, *, axes, split_axis, concat_axis, tiled, axis_size):
    n, groups, kw = _comm(axes, "all_to_all", global_ids=False)
    a, out = c.avals_in[0], c.avals_out[0]
    if tiled:
        return hlo.AllToAllOp([x], split_axis, concat_axis, n, groups, **kw).results[0]
    # untiled: a size-1 axis where the sources stack, a tiled exchange into it, then drop the split axis
    p = concat_axis if concat_axis <= split_axis else concat_axis + 1
    shape = list(a.shape)
    shape.insert(p, 1)
    x = _reshape(x, shape, a.dtype)
    sa = split_axis + (p <= split_axis)
    y = hlo.AllToAllOp([x], sa, p, n, groups, **kw).results[0]
    return _reshape(y, out.shape, a.dtype)


lowering_rules[all_to_all_p] = _all_to_all


def _ppermute(c, x, *, axes, perm):
    if _env.mesh is not None and all(a in _env.mesh[0] for a in axes):   # pairs of partition ids, per group
        g = _mesh_groups(axes, "ppermute")
        _env.channel += 1
        pairs = ir.DenseIntElementsAttr.get(np.array([(row[s], row[d]) for row in g for s, d in perm],
                                                     dtype=np.int64).reshape(-1, 2))
        return hlo.CollectivePermuteOp(x, pairs, channel_handle=hlo.ChannelHandle.get(_env.channel, 1)).result
    _size(axes, "ppermute")
    pairs = ir.DenseIntElementsAttr.get(np.array(perm, dtype=np.int64).reshape(-1, 2))
    return hlo.CollectivePermuteOp(x, pairs).result


lowering_rules[ppermute_p] = _ppermute


def _mesh_coord(names, sizes, parts, k, pid):
    """The coordinate along mesh axis k of the partition `pid` (int32 scalar Values)."""
    i32 = tensor_type((), np.int32)
    if parts is not None:   # partitions not in mesh order: look the coordinate up by partition id
        coord = np.zeros(len(parts), np.int32)
        coord[parts] = np.unravel_index(np.arange(len(parts)), sizes)[k]
        table = hlo.ConstantOp(ir.DenseElementsAttr.get(coord, type=tensor_type((len(parts),), np.int32))).result
        return hlo.ReshapeOp(i32, hlo.DynamicSliceOp(table, [pid], [1]).result).result
    stride = int(np.prod(sizes[k + 1:]))
    q = hlo.DivOp(pid, constant(stride, np.int32)).result
    return hlo.RemOp(q, constant(sizes[k], np.int32)).result


def _axis_index(c, *, axes):
    if _env.mesh is not None and all(a in _env.mesh[0] for a in axes):   # from the partition id
        names, sizes, parts = _env.mesh
        pid = hlo.ConvertOp(tensor_type((), np.int32), hlo.PartitionIdOp().result).result
        out = None
        for a in axes:   # row-major over the named axes
            k = names.index(a)
            co = _mesh_coord(names, sizes, parts, k, pid)
            out = co if out is None else hlo.AddOp(hlo.MulOp(out, constant(sizes[k], np.int32)).result, co).result
        return out
    _size(axes, "axis_index")
    rid = hlo.ReplicaIdOp().result
    return hlo.ConvertOp(tensor_type((), np.int32), rid).result


lowering_rules[axis_index_p] = _axis_index
