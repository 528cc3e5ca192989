"""Lowering of shard_map (transforms/shard_map.py) and of named shardings to XLA's sharding annotations.

Inside an SPMD program over the mesh's devices (xla/spmd.py sets `program_devices` while it lowers
one), a shard_map equation becomes a manual region: each operand is annotated with its sharding and
cut into this partition's shard (`@Sharding` then `@SPMDFullToShardShape`, manual), the body runs on
shard shapes with the mesh bound for the collectives (lower_collectives.mesh_env: groups of
partitions), and each result is annotated manual and reassembled (`@SPMDShardToFullShape`) as its
out spec says. XLA's partitioner does the rest. Anywhere else (a single-device program: jit of a
shard_map) the equation lowers as its one-device meaning, the body vmapped over the mesh axes
(transforms.shard_map.reference_jaxpr).
"""
from __future__ import annotations

import contextlib
import threading

import numpy as np

from transforms.shard_map import reference_jaxpr, shard_map_p
from transforms.sharding import NamedSharding

from ._jaxlib import hlo, ir
from .lower_collectives import mesh_env
from .lowering import jaxpr_subcomp, lowering_rules, ttype


class _Program(threading.local):
    def __init__(self):
        self.ids = None   # device ids of the SPMD program being lowered, in partition order


_program = _Program()


@contextlib.contextmanager
def program_devices(ids):
    """While lowering an SPMD program whose partition k runs on the device with id ids[k]."""
    prev, _program.ids = _program.ids, tuple(ids)
    try:
        yield
    finally:
        _program.ids = prev


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


def _custom(name, x, out_type, sharding):
    op = hlo.CustomCallOp([out_type], [x], call_target_name=ir.StringAttr.get(name),
                          has_side_effect=ir.BoolAttr.get(False), api_version=ir.IntegerAttr.get(
                              ir.IntegerType.get_signless(32), 1))
    op.attributes["mhlo.sharding"] = ir.StringAttr.get(sharding)
    return op.results[0]


def _manual_region(c, args, jaxpr, name, mesh, in_specs, out_specs):
    ids = _program.ids
    shards = []
    for x, a, spec, b in zip(args, c.avals_in, in_specs, jaxpr.in_avals):
        text = hlo_sharding_text(NamedSharding(mesh, spec), len(a.shape), ids)
        y = _custom("Sharding", x, ttype(a), text)
        shards.append(_custom("SPMDFullToShardShape", y, ttype(b), "{manual}"))
    with mesh_env(mesh.axis_names, [mesh.shape[n] for n in mesh.axis_names]):
        outs = jaxpr_subcomp(jaxpr.jaxpr, jaxpr.consts, shards)
    res = []
    for o, a, spec, b in zip(outs, c.avals_out, out_specs, jaxpr.out_avals):
        text = hlo_sharding_text(NamedSharding(mesh, spec), len(a.shape), ids)
        y = _custom("Sharding", o, ttype(b), "{manual}")
        res.append(_custom("SPMDShardToFullShape", y, ttype(a), text))
    return res


def _lower_shard_map(c, *args, jaxpr, name, mesh, in_specs, out_specs):
    ids = _program.ids
    if ids is not None and mesh.size > 1 and sorted(ids) == sorted(mesh.device_ids):
        return _manual_region(c, args, jaxpr, name, mesh, in_specs, out_specs)
    ref = reference_jaxpr(jaxpr, mesh, in_specs, out_specs)
    return jaxpr_subcomp(ref.jaxpr, ref.consts, list(args))


lowering_rules[shard_map_p] = _lower_shard_map
