"""Running pmap: one replica program per (body, axis, devices), cached; inputs split over the devices;
the mapped results one array sharded over them.

The body is lowered once at per-member shapes with its axis bound (lower_collectives.axis_env), so
collectives become XLA collectives over every replica, and compiled with one replica per device
(replica i on the pmap's device i). Mapped operands are split along axis 0, one block per device
(an operand that already lies there, e.g. a previous pmap's result, is passed as it is); replicated
operands are copied to each device. A mapped result is one jaxlib array over the devices (a stacked
sharding), read back by gathering its shards (_jaxlib.gather); a replicated result (out_axes=None)
is member 0's value, as an ordinary single-device value.

jit of a function that only calls pmaps (its jaxpr is pmap equations alone, e.g. jit(pmap(f))) runs
those pmaps' programs (`compile_jaxpr`, registered as the backend's compile hook). Inside any other
single-device program a pmap equation is lowered as its body vmapped over the named axis
(transforms.pmap.as_vmap_jaxpr): the same values, computed on the jit's device, one process only.

Several processes (transforms/distributed.py): a pmap's `devices` then lists every process's devices
(member k on devices[k]) while its operands and results hold this process's members only; the replica
program is compiled over the global device ids and each process feeds its local replicas.

Repeat calls (xla/jit_dispatch.pmap_public, `fastpath`): a call whose operands already lay on the devices as
the program takes them is repeated by jaxlib's C++ dispatcher with no Python, as jit's are; so is one whose
arguments are NumPy arrays or values on one device, each put on the devices in one transfer per call (`place`,
the dispatcher's fallback for an argument laid out otherwise). A program whose replicas communicate cannot be
(each such program waits for its inputs and for the last one to finish: `_execute`, against XLA:CPU's
rendezvous deadlock): in one process its plain repeats (arguments on the devices) run those same steps in C (the
extension's Dispatcher, `_native_repeats`), the others from the dispatcher's miss (`repeat`), placing arguments.

Donation (pmap's donate_argnums, or jit's on a pmaps-only function): the operand is a buffer donor of the
replica program; an operand already on the pmap's devices is consumed (deleted) by the call.
"""
from __future__ import annotations

import functools
import threading

import numpy as np

from transforms.core import get_aval, impl_rules
from transforms.jaxpr import Literal
from transforms.jaxpr_transforms import jit_p, run_jaxpr, stage
from transforms.pmap import as_vmap_jaxpr, pmap_p
from transforms.primitives import structural as S

from . import _jaxlib, distributed, runtime
from .lower_callbacks import has_callbacks
from .lower_collectives import axis_env
from .lowering import jaxpr_subcomp, lower_jaxpr, lowering_rules


class _Program:
    __slots__ = ("exe", "devices", "in_shardings", "in_avals", "handlers", "replicated_out", "out_shardings",
                 "communicates")

    def __init__(self, exe, devices, in_shardings, in_avals, handlers, replicated_out, out_shardings, replicas):
        self.exe, self.devices, self.in_shardings, self.in_avals = exe, devices, in_shardings, in_avals
        self.handlers, self.replicated_out, self.out_shardings = handlers, replicated_out, out_shardings
        # whether its replicas wait for each other (a collective among several: one replica waits for none):
        # then a call waits first (_execute)
        self.communicates = replicas > 1 and any(op in m.to_string() for m in exe.hlo_modules()
                                                 for op in _COLLECTIVE_OPS)


_COLLECTIVE_OPS = ("all-reduce", "all-gather", "all-to-all", "collective-permute", "reduce-scatter",
                   "collective-broadcast")


_programs: dict = {}
_PROGRAMS_MAX = 256
compile_count = [0]


def _global(aval, ax, n):
    return aval if ax is None else aval.update(shape=(n,) + tuple(aval.shape))


def _program(jaxpr, name, axis_name, axis_size, in_axes, out_axes, devices, donated=()):
    key = (jaxpr, axis_name, axis_size, in_axes, out_axes, devices, donated)
    prog = _programs.get(key)
    if prog is not None:
        return prog
    compile_count[0] += 1
    c = _jaxlib.client()
    by_id = {d.id: d for d in c.devices()}
    devs = [by_id[i] for i in devices]   # every process's: replica k runs member k on devices[k]
    with axis_env(axis_name, len(devs)):
        module = lower_jaxpr(_blocked(jaxpr, in_axes, out_axes), f"pmap_{name}", donated)
    exe, order = _jaxlib.compile_replicas(module, devs)
    mine = [d for d in devs if d.process_index == c.process_index()]
    if [d.id for d in order] != [d.id for d in mine] or len(mine) != axis_size:
        raise RuntimeError(f"pmap({name}): XLA runs this process's replicas on {list(order)}, expected {mine}")
    in_avals = [_global(a, ax, axis_size) for a, ax in zip(jaxpr.in_avals, in_axes)]
    in_sh = [_jaxlib.many_devices(order, len(a.shape), ax is not None) for a, ax in zip(in_avals, in_axes)]
    handlers, out_sh = [], []
    for a, ax in zip(jaxpr.out_avals, out_axes):
        g = _global(a, ax, axis_size).strip_weak() if ax is not None else a
        out_sh.append(_jaxlib.many_devices(order, len(g.shape), ax is not None))
        handlers.append(_jaxlib.many_result_handler(g, out_sh[-1]))
    prog = _Program(exe, order, in_sh, in_avals, handlers, tuple(ax is None for ax in out_axes), out_sh, len(devs))
    if len(_programs) >= _PROGRAMS_MAX:
        _programs.clear()
    _programs[key] = prog
    return prog


def _blocked(jaxpr, in_axes, out_axes):
    """The body taking and giving each mapped value as this device's block of the stacked array (a leading
    axis of size 1), so every buffer has exactly its shard's shape."""
    def f(*args):
        vals = [a if ax is None else S.reshape(a, tuple(b.shape)) for a, ax, b in zip(args, in_axes, jaxpr.in_avals)]
        outs = run_jaxpr(jaxpr)(*vals)
        return [o if ax is None else S.reshape(o, (1,) + tuple(b.shape)) for o, ax, b in zip(outs, out_axes,
                                                                                            jaxpr.out_avals)]
    return stage(f, [_global(a, ax, 1) for a, ax in zip(jaxpr.in_avals, in_axes)])


def _host(x, aval):
    t = type(x)
    if t is _jaxlib.ArrayImpl and x.is_deleted():
        raise RuntimeError("pmap: an operand was deleted or donated to an earlier call; it cannot be used again")
    if t is _jaxlib.ArrayImpl or t is runtime.HostValue:
        out = runtime.to_numpy(x)
    else:
        out = np.asarray(x)
    if out.dtype != aval.dtype:
        out = out.astype(aval.dtype)
    if tuple(out.shape) != tuple(aval.shape):
        raise ValueError(f"pmap: an operand of shape {out.shape} where {aval.str_short()} was expected")
    return np.ascontiguousarray(out) if out.ndim else out


def pmap_call(args, params):
    """Run a pmap equation eagerly (the backend's `pmap_call` hook)."""
    jaxpr, n = params["jaxpr"], params["axis_size"]
    prog = _program(jaxpr, params["name"], params["axis_name"], n, params["in_axes"], params["out_axes"],
                    params["devices"], params.get("donated", ()))
    bufs = []
    for x, aval, sh in zip(args, prog.in_avals, prog.in_shardings):
        if type(x) is _jaxlib.ArrayImpl and x._sharding is sh:
            if x.is_deleted():   # (jaxlib crashes executing a replica program on a deleted buffer)
                raise RuntimeError(f"pmap({params['name']}): operand {len(bufs)} was deleted or donated to an "
                                   "earlier call; it cannot be used again")
            bufs.append(x)   # already split over these devices this way
        else:
            bufs.append(_jaxlib.put_on_devices(_host(x, aval), aval, sh, prog.devices))
    outs = _launch(prog, bufs, params["name"], len(params["devices"]) != n)
    return [runtime.device_put(_jaxlib.gather(o)) if rep else o for o, rep in zip(outs, prog.replicated_out)]


def _launch(prog, bufs, name, across):
    """Run the program on its laid-out operands (pmap_call, repeat); `across`: over several processes' devices,
    where one multi-device program runs at a time (distributed.one_in_flight) and a failure says so."""
    distributed.one_in_flight()
    try:
        return distributed.launched(_execute(prog, bufs))
    except _jaxlib.XlaRuntimeError as e:
        if not across:
            raise
        raise RuntimeError(f"pmap({name}) across processes failed in process {_jaxlib.client().process_index()} "
                           f"(another process of the run may have died or be running something else): {e}") from e


_one_at_a_time = threading.Lock()
_in_flight = [None]   # the completion token of the last program whose replicas communicate


def _execute(prog, bufs):
    """Launch the program; one whose replicas communicate starts once its inputs are ready and the last such
    program has finished. XLA:CPU runs each replica on a pool thread and a collective blocks its thread until
    every replica arrives: replicas of two such programs, or of one queued on pending inputs, can hold the
    threads the others need (a deadlock XLA aborts the process for after 40 s; issuing `f(x)` with a psum in
    a loop did so, as it does with JAX's pmap). Replicas that never wait for each other cannot: not held."""
    if not prog.communicates:
        return prog.exe.execute_sharded(bufs).consume_with_handlers(prog.handlers)
    with _one_at_a_time:
        for b in bufs:
            b.block_until_ready()
        if _in_flight[0] is not None:
            try:
                _in_flight[0].block_until_ready()
            except _jaxlib.XlaRuntimeError:
                pass   # (that program's failure is its own results' error, not this call's)
            _in_flight[0] = None
        res = prog.exe.execute_sharded(bufs, with_tokens=True)
        _in_flight[0] = res.consume_token()
        return res.consume_with_handlers(prog.handlers)


# Finished calls of programs whose replicas communicate, repeated from the dispatcher's miss (C++ cannot: the
# program waits first, _execute): (dispatcher token, argument tree, (aval, sharding) per argument) ->
# (program, result tree).
_repeats: dict = {}
_REPEATS_MAX = 256
_armed: set = set()   # the tokens whose plain repeats the C extension may run: one process, no run (_native_repeats)


def _laid_out(token, leaves, tree):
    """The key of flattened arguments that are all live arrays or NumPy arrays (None otherwise: such calls take
    the whole path, which converts other host data or raises)."""
    buf = _jaxlib.ArrayImpl
    key = [token, tree]
    for x in leaves:
        t = type(x)
        if t is buf:
            if x.is_deleted():
                return None
            key.append((x.aval, x._sharding))
        elif t is np.ndarray:
            key.append((x.dtype, x.shape))
        else:
            return None
    return tuple(key)


def repeat(token, args, kwargs):
    """(the result,) of a call repeating a remembered one (fastpath), or None."""
    if not _repeats:
        return None
    leaves, tree = _jaxlib.cpp_flatten((args, kwargs))
    key = _laid_out(token, leaves, tree)
    hit = _repeats.get(key) if key is not None else None
    if hit is None:
        return None
    prog, out_def, consts, name, across = hit
    shs = prog.in_shardings[len(consts):]
    bufs = [x if type(x) is _jaxlib.ArrayImpl and x._sharding is sh else place(x, sh) for x, sh in zip(leaves, shs)]
    return (out_def.unflatten(_launch(prog, [*consts, *bufs], name, across)),)


def place(x, sharding):
    """An operand not yet on a pmap's devices (a NumPy array, a value on one device) laid out as the program takes
    it, in one transfer: split along axis 0 over the devices, or copied to each (what pmap_call does with it).
    Also jaxlib's C++ dispatcher's way to lay such an operand out (_jaxlib._shard_arg_fallback)."""
    if type(x) is np.ndarray and not x.dtype.isnative:   # (one dispatcher signature for either byte order)
        x = x.astype(x.dtype.newbyteorder("="))
    aval = x.aval if type(x) is _jaxlib.ArrayImpl else get_aval(x)
    return _jaxlib.put_on_devices(_host(x, aval), aval, sharding, sharding.devices)


def _placeable(leaf, aval):
    """Whether a repeat may lay the argument `leaf` out itself (place) and get the operand of aval `aval` the
    first call took: a NumPy array or a live value on one device, of that aval."""
    t = type(leaf)
    if t is np.ndarray:
        return get_aval(leaf) == aval
    return t is _jaxlib.ArrayImpl and not isinstance(leaf._sharding, _jaxlib.ManyDevices) and not \
        leaf.is_deleted() and leaf.aval == aval


def after_fork():
    """In a forked child: the parent's programs and completion token are unusable; its lock may be held."""
    global _one_at_a_time
    _one_at_a_time = threading.Lock()
    _in_flight[0] = None
    _repeats.clear()
    _armed.clear()
    _programs.clear()
    _native_repeats()


def _native_repeats():
    """Let the C extension (xla/_dispatch_nodes.c, where built) run the plain repeats of the tokens in `_armed`
    (its Dispatcher with a pmap's token, xla/jit_dispatch.pmap_public): the steps of `repeat` and `_execute`,
    sharing their table, lock and completion token."""
    if _native is not None:
        _native.configure_repeats(_repeats, _armed, _jaxlib.ArrayImpl, _jaxlib.cpp_registry.flatten,
                                  _one_at_a_time, _in_flight, _jaxlib.XlaRuntimeError)


try:
    from . import _dispatch_nodes as _native
except ImportError:   # not built (an optional extension: see pyproject.toml): every repeat runs `repeat`
    _native = None
if not hasattr(_native, "configure_repeats"):   # (or built before it ran repeats)
    _native = None
native_repeats = _native is not None   # whether pmap_public's Dispatcher may run them
_native_repeats()


def fastpath(token, params, operands, outs, n_consts, call, result):
    """How to repeat a finished eager pmap call on new values laid out alike: `FastpathData` for jaxlib's C++
    dispatcher `token` (xla/jit_dispatch.pmap_public: no Python), or for a program whose replicas communicate
    remembered for `repeat` (then None); None where a repeat needs the whole Python path: an argument neither
    laid out on the devices as the program takes it nor one `place` lays out (a NumPy array or a value on one
    device, of the operand's aval), a result re-laid out (out_axes other than 0), donation, host callbacks
    (pmap_call raises their own exceptions). Over several processes' devices only a program whose replicas
    communicate is remembered (its repeats wait for the last program as pmap_call's calls do: `_launch`); the
    others keep the whole path. The first `n_consts` operands are the body's constants: put on the devices once,
    here, and kept with the description. `call`: the call's (args, kwargs); `result`: what it returned."""
    if params.get("donated") and any(params["donated"]):
        return None
    prog = _program(params["jaxpr"], params["name"], params["axis_name"], params["axis_size"],
                    params["in_axes"], params["out_axes"], params["devices"])
    across = len(params["devices"]) != params["axis_size"]
    if across and not prog.communicates:
        return None   # (the C++ dispatcher would launch it with another program in flight)
    args = operands[n_consts:]
    leaves, in_tree = _jaxlib.cpp_flatten(call)   # the arguments as the dispatcher flattens them
    if len(leaves) != len(args) or has_callbacks(params["jaxpr"]):
        return None
    placed = False   # whether some argument is laid out per call (place)
    for leaf, x, sh, aval in zip(leaves, args, prog.in_shardings[n_consts:], prog.in_avals[n_consts:]):
        if leaf is x and type(x) is _jaxlib.ArrayImpl and x._sharding is sh:
            continue   # already on the devices as the program takes it
        if not _placeable(leaf, aval):
            return None
        placed = True
    out_leaves, out_def = _jaxlib.cpp_flatten(result)
    if len(out_leaves) != len(outs) or any(a is not b or a._sharding is not sh
                                           for a, b, sh in zip(out_leaves, outs, prog.out_shardings)):
        return None
    consts = [x if type(x) is _jaxlib.ArrayImpl and x._sharding is sh else
              _jaxlib.put_on_devices(_host(x, aval), aval, sh, prog.devices)
              for x, aval, sh in zip(operands[:n_consts], prog.in_avals, prog.in_shardings)]
    if prog.communicates:
        if len(_repeats) >= _REPEATS_MAX:
            _repeats.clear()
        _repeats[_laid_out(token, leaves, in_tree)] = (prog, out_def, consts, params["name"], across)
        if not across and not distributed.joined():
            _armed.add(token)
        return None
    if placed and _jaxlib.jax_owns_states():
        return None   # (jax's dtype rules would then make the dispatcher's signature of a NumPy argument)
    n = len(operands)
    return _jaxlib.FastpathData(
        xla_executable=prog.exe, out_pytree_def=out_def, in_shardings=list(prog.in_shardings),
        out_shardings=list(prog.out_shardings), out_avals=[o.aval for o in outs], out_committed=[True] * len(outs),
        kept_var_bitvec=[True] * n, in_device_local_layouts=[None] * n, const_args=consts)


def _lower_pmap_on_one_device(c, *args, jaxpr, name, axis_name, axis_size, in_axes, out_axes, devices, donated=()):
    # (donation is at a program's boundary: operands inside a larger program are its own intermediates)
    vm = as_vmap_jaxpr(jaxpr, axis_name, axis_size, in_axes, out_axes, devices)
    return jaxpr_subcomp(vm.jaxpr, vm.consts, list(args))


lowering_rules[pmap_p] = _lower_pmap_on_one_device


# ---------------------------------------------------------------------------- jit of pmap
# A jitted function that only calls pmaps (its jaxpr is pmap equations and nothing else, e.g. jit(pmap(f)))
# runs each as its own program over the devices (what pmap_call runs), not as one single-device program
# with the bodies vmapped; and so it spans processes. A jaxpr mixing pmaps with other work keeps the
# single-device lowering above (the same values, on the jit's device; not across processes).
@functools.lru_cache(maxsize=256)
def pmaps_only(jaxpr):
    return bool(jaxpr.eqns) and all(e.prim is pmap_p for e in jaxpr.eqns)


class PmapSequence:
    """What compile_jaxpr gives for a pmaps-only jaxpr: called like a compiled program (buffers in, raw
    values out); the jit's donated operands are donated to the pmaps that take them. It has no single
    executable, so the C++ jit fast path leaves it to Python."""
    __slots__ = ("closed", "donate", "out_avals")

    def __init__(self, closed, donate):
        self.closed, self.out_avals = closed, [v.aval for v in closed.jaxpr.outvars]
        self.donate = {v for v, d in zip(closed.jaxpr.invars, donate) if d}

    def __call__(self, bufs):
        jaxpr = self.closed.jaxpr
        env = dict(zip(jaxpr.constvars, self.closed.consts))
        env.update(zip(jaxpr.invars, bufs))
        read = lambda v: v.val if type(v) is Literal else env[v]
        for eqn in jaxpr.eqns:
            params = eqn.params
            if self.donate and any(v in self.donate for v in eqn.invars):
                old = params.get("donated") or (False,) * len(eqn.invars)
                params = dict(params, donated=tuple(d or v in self.donate for d, v in zip(old, eqn.invars)))
            env.update(zip(eqn.outvars, pmap_call([read(v) for v in eqn.invars], params)))
        return [read(v) for v in jaxpr.outvars]


def compile_jaxpr(closed, donate=(), name="main", device=None):
    """The backend's compile hook: pmaps-only jaxprs run as their pmaps' programs, the rest compile as usual."""
    if device is None and pmaps_only(closed.jaxpr):
        return PmapSequence(closed, tuple(donate) or (False,) * len(closed.jaxpr.invars))
    return runtime.compile_jaxpr(closed, donate, name, device)


_jit_impl = impl_rules[jit_p]


def _jit_impl_or_pmaps(*args, jaxpr, **params):
    """jit_p run eagerly (a jit reached under another transform, e.g. grad of jit of pmap)."""
    if pmaps_only(jaxpr.jaxpr):
        return PmapSequence(jaxpr, (False,) * len(jaxpr.jaxpr.invars))(list(args))
    return _jit_impl(*args, jaxpr=jaxpr, **params)


impl_rules[jit_p] = _jit_impl_or_pmaps


def sharding_of(raw):
    """(devices, stacked) of an eager value: a pmap result's devices, or the one device an ordinary value is on."""
    if type(raw) is _jaxlib.ArrayImpl:
        sh = raw._sharding
        if isinstance(sh, _jaxlib.ManyDevices):
            return sh.devices, sh.stacked
        return (_jaxlib.device_of(raw),), False
    return (runtime.default_device(),), False


def shards_of(raw):
    """[(device, the block's index along axis 0 or None, the block as a single-device value)]."""
    if type(raw) is _jaxlib.ArrayImpl and isinstance(raw._sharding, _jaxlib.ManyDevices):
        sh = raw._sharding
        return [(d, k if sh.stacked else None, a) for k, (d, a) in enumerate(zip(sh.devices,
                                                                                  _jaxlib.shard_arrays(raw)))]
    return [(sharding_of(raw)[0][0], None, raw)]
