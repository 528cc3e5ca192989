"""Lowering of shard_map (transforms/shard_map.py) and of named shardings to XLA's sharding annotations.

Inside an SPMD program over the mesh's devices (xla/spmd.py sets `program_devices` while it lowers
one), a shard_map equation becomes Shardy's manual computation (`sdy.manual_computation` over every
mesh axis, its operands and results annotated with their shardings on an `sdy.mesh` the module
declares): the body runs on shard shapes with the mesh bound for the collectives
(lower_collectives.mesh_env: groups of partitions, by each mesh position's partition in the
program). XLA's Shardy partitioner does the rest (jaxlib-runtime.md §4 variant 2; the GSPMD custom
calls of variant 1 work too but XLA warns they are deprecated). Anywhere else (a single-device
program) the equation lowers as its one-device meaning, the body vmapped over the mesh axes
(transforms.shard_map.reference_jaxpr). `hlo_sharding_text` gives the runtime's view of a
NamedSharding (XLA's HloSharding text, for the arrays over the devices).
"""
from __future__ import annotations

import contextlib
import threading

import numpy as np

from transforms.shard_map import reference_jaxpr, shard_map_p
from transforms.sharding import NamedSharding

from ._jaxlib import ir, sdy
from .lower_collectives import mesh_env
from .lowering import jaxpr_subcomp, lowering_rules, ttype


class _Program(threading.local):
    def __init__(self):
        self.ids = None      # device ids of the SPMD program being lowered, in partition order
        self.meshes = None   # {Mesh: its symbol} the program's shardings name (declared by declare_meshes)


_program = _Program()


@contextlib.contextmanager
def program_devices(ids):
    """While lowering an SPMD program whose partition k runs on the device with id ids[k]."""
    prev = _program.ids, _program.meshes
    _program.ids, _program.meshes = tuple(ids), {}
    try:
        yield
    finally:
        _program.ids, _program.meshes = prev


def program_partitions():
    """How many partitions the SPMD program being lowered has (1 outside one)."""
    return 1 if _program.ids is None else len(_program.ids)


def _axis(name):
    return str(name)


def sdy_sharding(named, ndim):
    """Shardy's sharding attribute for an array of `ndim` dimensions laid out as `named` says (inside
    program_devices: its mesh gets a symbol, declared in the module by declare_meshes)."""
    mesh = named.mesh
    sym = _program.meshes.setdefault(mesh, f"mesh{len(_program.meshes)}")
    dims = [sdy.DimensionShardingAttr.get([sdy.AxisRefAttr.get(_axis(a)) for a in named.spec.axes_of(d)], True)
            for d in range(ndim)]
    return sdy.TensorShardingAttr.get(sym, dims)


def declare_meshes(module):
    """An `sdy.mesh` per mesh the program's shardings named, first in the module; devices numbered by
    their partition in the program."""
    pos = {d: k for k, d in enumerate(_program.ids)}
    with module.context, ir.Location.unknown(), ir.InsertionPoint.at_block_begin(module.body):
        for mesh, sym in _program.meshes.items():
            ids = [pos[d] for d in mesh.device_ids]
            axes = [sdy.MeshAxisAttr.get(_axis(n), mesh.shape[n]) for n in mesh.axis_names]
            sdy.MeshOp(sym, sdy.MeshAttr.get(axes, [] if ids == list(range(len(ids))) else ids))


def hlo_sharding_text(named, ndim, ids):
    """XLA's sharding text for an array of `ndim` dimensions laid out as `named` (a NamedSharding) says,
    numbering devices by their partition in a program over the devices with `ids`."""
    mesh, spec = named.mesh, named.spec
    pos = {d: k for k, d in enumerate(ids)}
    missing = [d for d in mesh.device_ids if d not in pos]
    if missing or len(ids) != mesh.size:
        raise ValueError(f"a sharding over the mesh {mesh!r} in a program over the devices {list(ids)}: every mesh "
                         "must span exactly the program's devices")
    names = mesh.axis_names
    grid = np.array([pos[d] for d in mesh.device_ids], dtype=np.int64).reshape(mesh.devices.shape)
    order, dims = [], []
    for d in range(ndim):
        axes = spec.axes_of(d)
        order += [names.index(a) for a in axes]
        dims.append(mesh.axis_size(axes))
    rest = [k for k in range(len(names)) if k not in order]
    rep = int(np.prod([grid.shape[k] for k in rest])) if rest else 1
    if all(d == 1 for d in dims):
        return "{replicated}"
    tiles = grid.transpose(order + rest).reshape(dims + ([rep] if rep > 1 else []))
    text = ",".join(str(int(i)) for i in tiles.flat)
    shape = ",".join(str(int(i)) for i in tiles.shape)
    return "{devices=[" + shape + "]" + text + (" last_tile_dim_replicate}" if rep > 1 else "}")


def _manual_region(c, args, jaxpr, name, mesh, in_specs, out_specs):
    """An `sdy.manual_computation` over every mesh axis: the body on each partition's shards."""
    per_value = sdy.TensorShardingPerValueAttr.get
    ins = per_value([sdy_sharding(NamedSharding(mesh, s), len(a.shape)) for s, a in zip(in_specs, c.avals_in)])
    outs = per_value([sdy_sharding(NamedSharding(mesh, s), len(a.shape)) for s, a in zip(out_specs, c.avals_out)])
    manual = sdy.ManualAxesAttr.get([ir.StringAttr.get(_axis(n)) for n in mesh.axis_names])
    op = sdy.ManualComputationOp([ttype(a) for a in c.avals_out], list(args), ins, outs, manual)
    block = op.body.blocks.append(*[ttype(b) for b in jaxpr.in_avals])
    pos = {d: k for k, d in enumerate(_program.ids)}
    env = mesh_env(mesh.axis_names, [mesh.shape[n] for n in mesh.axis_names], [pos[d] for d in mesh.device_ids])
    with ir.InsertionPoint(block), env:
        sdy.ReturnOp(jaxpr_subcomp(jaxpr.jaxpr, jaxpr.consts, list(block.arguments)))
    return list(op.results)


def _lower_shard_map(c, *args, jaxpr, name, mesh, in_specs, out_specs):
    ids = _program.ids
    if ids is not None and mesh.size > 1 and sorted(ids) == sorted(mesh.device_ids):
        return _manual_region(c, args, jaxpr, name, mesh, in_specs, out_specs)
    ref = reference_jaxpr(jaxpr, mesh, in_specs, out_specs)
    return jaxpr_subcomp(ref.jaxpr, ref.consts, list(args))


lowering_rules[shard_map_p] = _lower_shard_map
