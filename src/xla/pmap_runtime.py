"""Running pmap: one replica program per (body, axis, devices), cached; inputs split over the devices;
the mapped results one array sharded over them.

The body is lowered once at per-member shapes with its axis bound (lower_collectives.axis_env), so
collectives become XLA collectives over every replica, and compiled with one replica per device
(replica i on the pmap's device i). Mapped operands are split along axis 0, one block per device
(an operand that already lies there, e.g. a previous pmap's result, is passed as it is); replicated
operands are copied to each device. A mapped result is one jaxlib array over the devices (a stacked
sharding), read back by gathering its shards (_jaxlib.gather); a replicated result (out_axes=None)
is member 0's value, as an ordinary single-device value.

Inside a single-device program (jit of pmap) a pmap equation is lowered as its body vmapped over the
named axis (transforms.pmap.as_vmap_jaxpr): the same values, computed on the jit's device.
"""
from __future__ import annotations

import numpy as np

from transforms.jaxpr_transforms import run_jaxpr, stage
from transforms.pmap import as_vmap_jaxpr, pmap_p
from transforms.primitives import structural as S

from . import _jaxlib, runtime
from .lower_collectives import axis_env
from .lowering import jaxpr_subcomp, lower_jaxpr, lowering_rules


class _Program:
    __slots__ = ("exe", "devices", "in_shardings", "in_avals", "handlers", "replicated_out")

    def __init__(self, exe, devices, in_shardings, in_avals, handlers, replicated_out):
        self.exe, self.devices, self.in_shardings, self.in_avals = exe, devices, in_shardings, in_avals
        self.handlers, self.replicated_out = handlers, replicated_out


_programs: dict = {}
_PROGRAMS_MAX = 256
compile_count = [0]


def _global(aval, ax, n):
    return aval if ax is None else aval.update(shape=(n,) + tuple(aval.shape))


def _program(jaxpr, name, axis_name, axis_size, in_axes, out_axes, devices):
    key = (jaxpr, axis_name, axis_size, in_axes, out_axes, devices)
    prog = _programs.get(key)
    if prog is not None:
        return prog
    compile_count[0] += 1
    by_id = {d.id: d for d in _jaxlib.client().devices()}
    devs = [by_id[i] for i in devices]
    with axis_env(axis_name, axis_size):
        module = lower_jaxpr(_blocked(jaxpr, in_axes, out_axes), f"pmap_{name}")
    exe, order = _jaxlib.compile_replicas(module, devs)
    in_avals = [_global(a, ax, axis_size) for a, ax in zip(jaxpr.in_avals, in_axes)]
    in_sh = [_jaxlib.many_devices(order, len(a.shape), ax is not None) for a, ax in zip(in_avals, in_axes)]
    handlers = []
    for a, ax in zip(jaxpr.out_avals, out_axes):
        g = _global(a, ax, axis_size).strip_weak() if ax is not None else a
        handlers.append(_jaxlib.many_result_handler(g, _jaxlib.many_devices(order, len(g.shape), ax is not None)))
    prog = _Program(exe, order, in_sh, in_avals, handlers, tuple(ax is None for ax in out_axes))
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
                    params["devices"])
    bufs = []
    for x, aval, sh in zip(args, prog.in_avals, prog.in_shardings):
        if type(x) is _jaxlib.ArrayImpl and x._sharding is sh:
            bufs.append(x)   # already split over these devices this way
        else:
            bufs.append(_jaxlib.put_on_devices(_host(x, aval), aval, sh, prog.devices))
    outs = prog.exe.execute_sharded(bufs).consume_with_handlers(prog.handlers)
    return [runtime.device_put(_jaxlib.gather(o)) if rep else o for o, rep in zip(outs, prog.replicated_out)]


def _lower_pmap_on_one_device(c, *args, jaxpr, name, axis_name, axis_size, in_axes, out_axes, devices):
    vm = as_vmap_jaxpr(jaxpr, axis_name, axis_size, in_axes, out_axes)
    return jaxpr_subcomp(vm.jaxpr, vm.consts, list(args))


lowering_rules[pmap_p] = _lower_pmap_on_one_device


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
