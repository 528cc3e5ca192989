"""SPMD programs over a mesh: sharded jit, eager shard_map, and arrays laid out over a mesh.

One program is compiled per (jaxpr, shardings) with XLA's SPMD partitioner, Shardy (num_partitions =
the mesh's size, partition k on the mesh's k-th device in row-major order): the entry computation's
parameters and results carry `sdy.sharding` annotations from their NamedShardings and XLA partitions
the global program automatically (sharded `jit(in_shardings=, out_shardings=)`); a shard_map
equation inside is a manual computation (xla/lower_shard_map.py). An eager shard_map runs as
such a program holding just its equation. Inputs are laid out per their shardings (an array already
laid out that way passes as it is); each output is one jaxlib array over the devices (a `ManyDevices`
mesh sharding, `tiled`), read back by assembling its tiles (_jaxlib.gather). A one-device mesh needs
no partitioner: its shard_map runs the reference (the body vmapped over the mesh axes).
"""
from __future__ import annotations

import ctypes
import glob
import itertools
import os

import numpy as np

from transforms.jaxpr_transforms import stage
from transforms.core import bind
from transforms.sharding import NamedSharding, P
from transforms.shard_map import reference_jaxpr, shard_map_p

from . import _jaxlib, distributed, runtime
from ._jaxlib import ir
from .lower_shard_map import declare_meshes, hlo_sharding_text, program_devices, sdy_sharding
from .lowering import lower_jaxpr

compile_count = [0]
_programs: dict = {}
_PROGRAMS_MAX = 256
_executables: dict = {}   # (module text, device ids) -> (executable, order): two jaxprs lowering to one module
                          # (a guarded variant retraced to the same program) compile once


def _devices_of(ids):
    by_id = {d.id: d for d in _jaxlib.client().devices()}
    return [by_id[i] for i in ids]


def mesh_sharding(named, ndim, ids=None):
    """The jaxlib sharding of an array of `ndim` dimensions laid out as `named` says."""
    ids = tuple(named.mesh.device_ids if ids is None else ids)
    sh = _jaxlib.mesh_sharding(_devices_of(ids), hlo_sharding_text(named, ndim, ids), named)
    sh.named = named
    return sh


def _host(x, aval, what):
    if type(x) is _jaxlib.ArrayImpl or type(x) is runtime.HostValue:
        out = runtime.to_numpy(x)
    else:
        out = np.asarray(x)
    if out.dtype != aval.dtype:
        out = out.astype(aval.dtype)
    if tuple(out.shape) != tuple(aval.shape):
        raise ValueError(f"{what}: an operand of shape {out.shape} where {aval.str_short()} was expected")
    return out


def place(x, aval, sharding, what="sharded program"):
    """A raw value laid out as `sharding` (a mesh sharding) says; as it is if it already lies that way."""
    if type(x) is _jaxlib.ArrayImpl:
        have = x._sharding
        if have is sharding or (isinstance(have, _jaxlib.ManyDevices) and have.devices == sharding.devices
                                and have._hlo_sharding == sharding._hlo_sharding):   # e.g. a pmap's result
            return x
    return _jaxlib.put_tiles(_host(x, aval, what), aval, sharding)


class ShardedProgram:
    """A compiled SPMD program: takes raw values (laid out as its inputs' shardings say) and returns
    arrays over its devices."""
    __slots__ = ("program", "in_avals", "in_shardings", "handlers", "name")   # (no `exe`: jit's C++ fast path
    # takes one-device executables only, xla/jit_dispatch.py)

    def __init__(self, program, in_avals, in_shardings, handlers, name):
        self.program, self.in_avals, self.in_shardings, self.handlers = program, in_avals, in_shardings, handlers
        self.name = name

    def __call__(self, args):
        bufs = [place(x, a, s, self.name) for x, a, s in zip(args, self.in_avals, self.in_shardings)]
        for b in bufs:
            # XLA:CPU runs each partition on a pool thread and a collective waits for all of them: a program
            # queued on a previous one's pending outputs can take the threads that one still needs (a
            # deadlock XLA aborts the process for after 40 s; jax's pmap does the same on this 2-core box).
            # Waiting for the inputs first keeps at most one collective program in flight per chain.
            b.block_until_ready()
        distributed.one_in_flight()
        return distributed.launched(self.program.execute_sharded(bufs).consume_with_handlers(self.handlers))

    def as_text(self):
        """The optimized HLO after SPMD partitioning: one partition's program, its collectives explicit."""
        return self.program.get_hlo_text()

    def cost_analysis(self):
        return self.program.cost_analysis()


def _mesh_of(shardings, what):
    meshes = [s.mesh for s in shardings if s is not None]
    if not meshes:
        raise ValueError(f"{what}: no NamedSharding among in_shardings/out_shardings")
    ids = meshes[0].device_ids
    for m in meshes[1:]:
        if sorted(m.device_ids) != sorted(ids):
            raise ValueError(f"{what}: shardings over different devices ({meshes[0]!r} and {m!r})")
    return meshes[0]


def _annotate(module, in_attrs, out_attrs):
    """sdy.sharding on @main's parameters and results (None: none)."""
    n = None
    with module.context:
        for op in module.body.operations:
            if ir.StringAttr(op.attributes["sym_name"]).value != "main":
                continue
            olds = list(op.arg_attrs) if "arg_attrs" in op.attributes else [None] * len(in_attrs)
            new = []
            for old, t in zip(olds, in_attrs):
                d = {} if old is None else {a.name: a.attr for a in ir.DictAttr(old)}
                if t is not None:
                    d["sdy.sharding"] = t
                new.append(ir.DictAttr.get(d))
            op.arg_attrs = ir.ArrayAttr.get(new)
            op.res_attrs = ir.ArrayAttr.get([ir.DictAttr.get({} if t is None else {"sdy.sharding": t})
                                             for t in out_attrs])
            n = True
        assert n, "no @main in the lowered module"
    return module


def compile_sharded(closed, donate=(), name="main", in_shardings=(), out_shardings=()):
    """An SPMD program for a closed jaxpr whose inputs/outputs are laid out as the NamedShardings say
    (None: an input replicated, an output as XLA's partitioner chooses)."""
    key = (closed, tuple(donate), tuple(in_shardings), tuple(out_shardings))
    prog = _programs.get(key)
    if prog is not None:
        return prog
    mesh = _mesh_of(list(in_shardings) + list(out_shardings), f"jit({name})")
    ids = mesh.device_ids
    in_avals = list(closed.in_avals)
    out_avals = [a.strip_weak() for a in closed.out_avals]
    if (len(in_shardings), len(out_shardings)) != (len(in_avals), len(out_avals)):   # (XLA crashes on a
        raise RuntimeError(f"jit({name}): {len(in_shardings)} input and {len(out_shardings)} output shardings "
                           f"for a program of {len(in_avals)} inputs and {len(out_avals)} outputs")   # mismatch)
    for i, (s, a) in enumerate(zip(in_shardings, in_avals)):
        if s is not None:
            s.shard_shape(a.shape, f"jit({name}) in_shardings entry {i}")
    for i, (s, a) in enumerate(zip(out_shardings, out_avals)):
        if s is not None:
            s.shard_shape(a.shape, f"jit({name}) out_shardings entry {i}")
    in_sh = [s if s is not None else NamedSharding(mesh, P()) for s in in_shardings]
    with program_devices(ids):
        module = lower_jaxpr(closed, name, donate)
        with module.context, ir.Location.unknown():
            in_attrs = [sdy_sharding(s, len(a.shape)) for s, a in zip(in_sh, in_avals)]
            out_attrs = [None if s is None else sdy_sharding(s, len(a.shape)) for s, a in zip(out_shardings, out_avals)]
            i32 = ir.IntegerType.get_signless(32)
            module.operation.attributes["mhlo.num_partitions"] = ir.IntegerAttr.get(i32, len(ids))
            module.operation.attributes["mhlo.num_replicas"] = ir.IntegerAttr.get(i32, 1)
        _annotate(module, in_attrs, out_attrs)
        declare_meshes(module)
    text_key = (_jaxlib.module_text(module), tuple(ids))
    if text_key not in _executables:
        compile_count[0] += 1
        if len(_executables) >= _PROGRAMS_MAX:
            _executables.clear()
        _executables[text_key] = _jaxlib.compile_spmd(module, _devices_of(ids))
    exe, order = _executables[text_key]
    if len(order) > 1 and "lapack_" in text_key[0]:
        serial_lapack()   # (its partitions' threads call LAPACK at once: one OpenBLAS thread each)
    in_shardings_j = [mesh_sharding(s, len(a.shape), ids) for s, a in zip(in_sh, in_avals)]
    chosen = _jaxlib.output_hlo_shardings(exe, len(out_avals)) if any(s is None for s in out_shardings) else None
    handlers = []
    for k, (s, a) in enumerate(zip(out_shardings, out_avals)):
        if s is None:   # as the partitioner chose: named on the mesh where some spec says the same
            sh = _jaxlib.mesh_sharding(_devices_of(ids), chosen[k])
            if getattr(sh, "named", None) is None:
                sh.named = _named_matching(mesh, len(a.shape), sh.text, ids)
        else:
            sh = mesh_sharding(s, len(a.shape), ids)
        handlers.append(_jaxlib.many_result_handler(a, sh))
    prog = ShardedProgram(exe, in_avals, in_shardings_j, handlers, f"jit({name})")
    if len(_programs) >= _PROGRAMS_MAX:
        _programs.clear()
    _programs[key] = prog
    return prog


def serial_lapack():
    """Run the LAPACK jaxlib's kernels call (scipy's OpenBLAS) on one thread from now on: done when an SPMD program
    calling it runs several partitions in this process, whose threads then call it at once; each call spawning
    OpenBLAS threads too oversubscribes the cores (measured: a 65536x32 svd over 8 CPU devices of a 2-core box,
    20 s a call with OpenBLAS threads, 0.09 s without). Where that library is not found, nothing changes."""
    if _lapack_serial:
        return
    _lapack_serial.append(True)
    try:
        import scipy
    except ImportError:
        return
    libs = os.path.join(os.path.dirname(scipy.__file__), os.pardir, "scipy.libs")
    for path in glob.glob(os.path.join(libs, "libscipy_openblas*.so")):
        fn = getattr(ctypes.CDLL(path), "scipy_openblas_set_num_threads", None)
        if fn is not None:
            fn.argtypes, fn.restype = [ctypes.c_int], None
            fn(1)


_lapack_serial = []   # (non-empty once done)


def _named_matching(mesh, ndim, text, ids):
    """A NamedSharding on `mesh` laid out as the sharding text says (None if no spec says so)."""
    names = mesh.axis_names
    if len(names) > 4:
        return None
    if _jaxlib.same_layout(text, "{replicated}"):
        return NamedSharding(mesh, P())
    for dims in itertools.product(range(-1, ndim), repeat=len(names)):
        groups = [[a for a, d in zip(names, dims) if d == k] for k in range(ndim)]
        for perms in itertools.product(*(itertools.permutations(g) for g in groups)):
            cand = NamedSharding(mesh, P(*[tuple(p) if p else None for p in perms]))
            if _jaxlib.same_layout(hlo_sharding_text(cand, ndim, ids), text):
                return cand
    return None


def shard_map_call(args, params):
    """Run a shard_map equation eagerly (the backend's `shard_map_call` hook): one SPMD program holding it."""
    mesh, jaxpr = params["mesh"], params["jaxpr"]
    in_specs, out_specs = params["in_specs"], params["out_specs"]
    if mesh.size == 1:   # one device: the reference semantics, compiled on it
        key = ("one", jaxpr, mesh, in_specs, out_specs)
        exe = _programs.get(key)
        if exe is None:
            exe = runtime.compile_jaxpr(reference_jaxpr(jaxpr, mesh, in_specs, out_specs),
                                        name=f"shard_map_{params['name']}", device=_devices_of(mesh.device_ids)[0])
            _programs[key] = exe
        return exe([runtime.device_buffer(_host(a, av, "shard_map")) if type(a) is not _jaxlib.ArrayImpl else a
                    for a, av in zip(args, _in_avals(params))])
    key = ("eqn", jaxpr, mesh, in_specs, out_specs)
    closed = _programs.get(key)
    if closed is None:
        closed = _programs[key] = stage(lambda *a: bind(shard_map_p, *a, **params), _in_avals(params))
    prog = compile_sharded(closed, (), f"shard_map_{params['name']}",
                           tuple(NamedSharding(mesh, s) for s in in_specs),
                           tuple(NamedSharding(mesh, s) for s in out_specs))
    return prog(args)


def _in_avals(params):
    from transforms.sharding import global_shape
    mesh = params["mesh"]
    return [a.update(shape=global_shape(mesh, s, a.shape)) for a, s in zip(params["jaxpr"].in_avals,
                                                                          params["in_specs"])]


def put_sharded(raw, where):
    """device_put: a raw value laid out over a mesh (a NamedSharding), or whole on one device."""
    from transforms.core import get_aval
    aval = get_aval(raw).strip_weak() if isinstance(where, NamedSharding) else get_aval(raw)
    if isinstance(where, NamedSharding):
        return place(raw, aval, mesh_sharding(where, len(aval.shape)), "device_put")
    return runtime.device_buffer(_host(raw, aval, "device_put"), aval, where)


def sharding_of(raw, fallback):
    """A mesh-laid-out array's NamedSharding; anything else as `fallback` (pmap's hook) says."""
    if type(raw) is _jaxlib.ArrayImpl:
        named = getattr(raw._sharding, "named", None)
        if named is not None:
            return named
    return fallback(raw)


def shards_of(raw, fallback):
    """[(device, the slices of the value it holds, its tile as a single-device value)] of a mesh array."""
    if type(raw) is _jaxlib.ArrayImpl and (getattr(raw._sharding, "tiled", False) or
                                           getattr(raw._sharding, "named", None) is not None):
        tiles = _jaxlib.local_tiles(raw._sharding, tuple(raw.aval.shape))   # this process's devices only
        return [(d, ix, a) for (d, ix), a in zip(tiles, _jaxlib.shard_arrays(raw))]
    return fallback(raw)
