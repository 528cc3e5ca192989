"""The seam between the engine and a backend: hooks the backend fills in when it comes up.

The engine (tracing, rule tables, transforms, jit's caching) never imports a backend. A backend
(`xla`, brought up by `array_namespace/__init__.py`) registers what only it can do: put host data
on a device and read it back, compile and lower a jaxpr, make an eager impl for a primitive, and
optionally a native fast path for jitted calls. Until one registers, each hook raises a clear
error instead of an AttributeError or a bare KeyError deep inside a trace.
"""
from __future__ import annotations

_HOOKS = ("device_put", "to_numpy", "default_device", "devices", "compile_jaxpr", "lower_text", "impl_for",
          "to_dlpack", "jit_fast_call", "jit_public", "profiler")
_HOOKS += ("local_devices", "process_index", "process_count", "set_cpu_device_count")   # transforms/devices.py
_HOOKS += ("eager_way", "run_by_op")   # how a staged call runs eagerly, and its op-by-op run (jaxpr_transforms)
_HOOKS += ("eager_in_place",)   # eager_in_place(prim, args, params) -> output | None: args[0] may be overwritten
_HOOKS += ("eager_element", "eager_getitem", "eager_setitem", "eager_family_setitem",   # namespace fast paths
           "box_fn")   # (see Backend)
_HOOKS += ("pmap_call", "pmap_public")   # pmap_call(args, params) -> outputs: run a pmap equation;
# pmap_public(pmapped) -> callable | None: a native dispatcher for repeat calls (transforms/pmap.py)
_HOOKS += ("sharding_of", "shards_of")   # where an eager value lies over devices (transforms/devices.py)
_HOOKS += ("shard_map_call", "put_sharded", "compile_sharded")   # transforms/shard_map.py, sharding.py, jit.py
_HOOKS += ("adopt",)   # adopt(raw) -> raw: another runtime's array of the backend's own type (a jax.Array) copied in
_HOOKS += ("distributed_initialize", "distributed_shutdown", "distributed_barrier",
           "distributed_is_initialized")   # several processes as one run (transforms/distributed.py)


class NoBackendError(RuntimeError):
    """An operation needs a backend (execution, compilation, devices) and none is registered."""


def _missing(hook):
    def fail(*args, **kwargs):
        raise NoBackendError(f"{hook}: no array backend is registered; `import array_namespace` brings up "
                             "the XLA backend (the engine alone can trace and transform, not execute)")
    fail.__name__ = hook
    return fail


class Backend:
    """The registered backend's hooks; each one raises NoBackendError until a backend registers.

    device_put(np_array[, aval, device, fresh]) -> raw value (fresh: the array is given up, not copied)
    to_numpy(raw) -> np.ndarray                    to_dlpack(raw) -> DLPack capsule
    default_device() / devices()
    compile_jaxpr(closed, donate, name) -> callable(list of raw) -> list of raw
    lower_text(closed, name, donate) -> str        impl_for(prim) -> eager impl (or raises)
    jit_fast_call(jitted) -> callable | None       the native dispatcher for a Python-wrapped jit
    jit_public(jitted) -> callable | None          the object `jit(f)` returns, when the backend has one
    pmap_public(pmapped) -> callable | None        likewise for `pmap(f)` (pmapped.call(args, kwargs) -> (result,
                                                   (params, operands, raw outputs) of an eager call, or None))
    eager_way(closed, in_avals=None) -> str        how a staged call runs eagerly, from static facts only:
                                                   "host" (run_by_op), "bind" (its equations bound one by
                                                   one) or "compile" (in_avals: the operands, where not
                                                   closed's own avals; closed None: any body's, loops too)
    run_by_op(closed, consts, raw, out_avals=None) -> outputs   the "host" run (out_avals: where not
                                                   closed's own)
    eager_in_place(prim, args, params) -> output | None   prim run eagerly writing its result into args[0]'s
                                                   memory, which the caller gives up (None: not done; bind)
    eager_element(raw, key) -> raw | None          x[key] for an eager value and a key of ints selecting one element
                                                   (None: eager_getitem, then the namespace's path)
    eager_getitem(raw, key, view=False) -> raw | None   x[key] of an eager value run by the backend directly (None:
                                                   the namespace's path; it validates and raises); key: the
                                                   namespace's, a boolean mask Array given as its raw value; view:
                                                   the result shares raw's memory where it can (a namespace view)
    eager_setitem(raw, key, value, copy=False) -> raw | None   x[key] = value (value checked and cast) written into
                                                   the memory of x's value, which its only holder gives up, else
                                                   (copy: another array holds raw too) into a copy (None: not done)
    eager_family_setitem(raws, layouts, i, key, value) -> raws | None   x[key] = value for x the i-th array of a
                                                   view family (raws: their values, the root's first, each given up
                                                   by its array; layouts() -> (strides, offset) in the root), written
                                                   into the memory they share (copied first where anything else
                                                   refers to it): the family's values (None: not done)
    box_fn(box_type, wrap) -> fn                   the namespace's box of a raw value (its `wrap`, giving the same
                                                   Arrays), as the backend runs it fastest (wrap: none faster)
    profiler() -> its profiler (memory profile, live values, stats, traces; see transforms/profiler.py)
    """
    name = None

    def __init__(self):
        for h in _HOOKS:
            setattr(self, h, _missing(h))
        self.jit_fast_call = lambda jitted: None     # no native fast path: jit dispatches in Python
        self.jit_public = lambda jitted: None
        self.pmap_public = lambda pmapped: None      # (pmap dispatches in Python)
        self.eager_way = lambda closed, in_avals=None: "compile"   # staged calls run eagerly as one executable
        self.run_by_op = None                        # (None: the engine binds the equations one by one)
        self.eager_in_place = lambda prim, args, params: None   # (no in-place updates: always a new value)
        self.eager_element = lambda raw, key: None
        self.eager_getitem = lambda raw, key, view=False: None   # (indexing binds its gather)
        self.eager_setitem = lambda raw, key, value, copy=False: None   # (and its scatter)
        self.eager_family_setitem = lambda raws, layouts, i, key, value: None   # (a view family: its rules)
        self.box_fn = lambda box_type, wrap: wrap
        self.adopt = lambda raw: raw                 # (every value of the buffer type is the backend's own)

    def register(self, name, **hooks):
        unknown = set(hooks) - set(_HOOKS)
        if unknown:
            raise TypeError(f"register: unknown backend hooks {sorted(unknown)}; known: {list(_HOOKS)}")
        for h, fn in hooks.items():
            setattr(self, h, fn)
        self.name = name


backend = Backend()
