"""Every touchpoint with jaxlib's private Python API, in one place (pinned: jaxlib 0.10.2).

See shared/notes/jaxlib-runtime.md for the verified facts behind each call. If jaxlib is
upgraded, this file (and the op builders in lowering) is what must be re-verified.
"""
from __future__ import annotations

import contextlib
import ctypes
import os
import threading

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")

import numpy as np  # noqa: E402
from jaxlib import version as _version  # noqa: E402
from jaxlib import xla_client as xc  # noqa: E402
from jaxlib.mlir import ir  # noqa: E402
from jaxlib.mlir._mlir_libs import _jax_mlir_ext  # noqa: E402
from jaxlib.mlir.dialects import chlo, func, stablehlo as hlo  # noqa: E402,F401  (func: used by lowering)
from jaxlib.mlir.dialects import sdy  # noqa: E402  (Shardy: meshes, shardings, manual computations; xla/spmd.py)
from . import compile_flags  # noqa: E402  (the debug options every compile sets)

JAXLIB_VERSION = "0.10.2"
if _version.__version__ != JAXLIB_VERSION or xc._version != 467:
    raise ImportError(f"this package is built against jaxlib=={JAXLIB_VERSION} (API 467); found "
                      f"{_version.__version__} (API {xc._version}). Install jaxlib=={JAXLIB_VERSION}.")

ArrayImpl = xc.ArrayImpl
XlaRuntimeError = xc.XlaRuntimeError
MLIRError = ir.MLIRError

xc._xla.set_tracebacks_enabled(False)   # saves ~0.3 us per dispatch


def new_context():
    registry = ir.DialectRegistry()
    _jax_mlir_ext.register_dialects(registry)
    ctx = ir.Context()
    ctx.append_dialect_registry(registry)
    ctx.load_all_available_dialects()
    hlo.register_dialect(ctx)
    chlo.register_dialect(ctx)
    sdy.register_dialect(ctx)
    return ctx


class OneDevice(xc.SingleDeviceSharding):
    """A single-device sharding with the two hooks the C++ runtime calls back into."""

    memory_kind = None   # a class attribute: the C++ runtime reads it per output, no Python call

    def _to_xla_hlo_sharding(self, ndim):
        return xc.HloSharding.replicate()


_client = None
_shardings = {}
# One lock for every lazy, process-wide initialisation (the client, LAPACK/FFI registration, the C++
# dispatch states): threads making their first call at once must not build two clients (whose buffers
# the other's executables refuse: "on device cpu:0, but replica is assigned to device cpu:0").
_init_lock = threading.RLock()


def client():
    global _client
    if _client is None:
        with _init_lock:
            if _client is None:
                if _fork_refusal:
                    raise RuntimeError(_fork_refusal)
                with native_work:
                    # asynchronous=False: a program runs on the calling thread (README, "jit calls": why)
                    _client = _client_factory() if _client_factory else xc.make_cpu_client(
                        asynchronous=False, num_devices=cpu_device_count())
    return _client


# Set by xla/distributed.py when the process joins a run of several: it makes the client over the distributed
# runtime (with gloo collectives on the CPU) instead of the plain one. Only before the client exists.
_client_factory = None


def set_client_factory(make):
    global _client_factory
    _client_factory = make


def client_exists():
    return _client is not None


# CPU devices of the client (fixed when made): set_cpu_device_count(n) first, else ARRAY_NAMESPACE_CPU_DEVICES,
# else XLA_FLAGS' --xla_force_host_platform_device_count=N (num_devices would override it), else 1.
_requested_cpu_devices = None


def _positive_count(value, source):
    try:
        n = int(value)
    except (TypeError, ValueError):
        n = 0
    if n < 1 or isinstance(value, bool):
        raise ValueError(f"{source}: the CPU device count must be a positive integer, got {value!r}")
    return n


def cpu_device_count():
    if _requested_cpu_devices is not None:
        return _requested_cpu_devices
    env = os.environ.get("ARRAY_NAMESPACE_CPU_DEVICES")
    if env:
        return _positive_count(env, "ARRAY_NAMESPACE_CPU_DEVICES")
    import re
    found = re.findall(r"--xla_force_host_platform_device_count=(\S+)", os.environ.get("XLA_FLAGS", ""))
    if found:
        return _positive_count(found[-1], "XLA_FLAGS --xla_force_host_platform_device_count")
    return 1


def set_cpu_device_count(n):
    """Ask for n CPU devices; only before the client exists (a clear RuntimeError after, unless n matches)."""
    global _requested_cpu_devices
    n = _positive_count(n, "set_cpu_device_count")
    with _init_lock:
        if _client is not None:
            have = len(_client.devices())
            if n == have:
                return
            raise RuntimeError(f"set_cpu_device_count({n}): the CPU client already exists with {have} device(s); the "
                               "count is fixed when the first array or device is made. Call it before any other use, "
                               "or set ARRAY_NAMESPACE_CPU_DEVICES=N (or XLA_FLAGS=--xla_force_host_platform_device_"
                               "count=N) before starting Python.")
        _requested_cpu_devices = n


def sharding_for(device):
    s = _shardings.get(device)
    if s is None:
        with _init_lock:
            s = _shardings.get(device)
            if s is None:
                here = current_device(device)   # (a device of the parent's client, before a fork: this one's)
                check_addressable((here,), "place an array on a device of another process")   # (once per device)
                s = _shardings[device] = _shardings[here] = OneDevice(here)
    return s


_IMMUTABLE = xc.HostBufferSemantics.IMMUTABLE_ONLY_DURING_CALL


def device_put(x: np.ndarray, aval, device):
    """Copy a host array to `device`; `aval` (shape, dtype, weak_type) is attached to the result."""
    # enable_x64=True always: we canonicalise dtypes ourselves and never want silent f64->f32
    s = sharding_for(device)
    return xc.batched_device_put(aval, s, [x], [s._device], True, False, _IMMUTABLE, True)


def compile(module, device, donated=()):
    return compile_and_load(module, (device,), compile_options(device), host_callbacks_of(module))


# In a forked child of a process that compiled (xla/fork.py): compiling here would signal XLA's slow-operation
# alarm, whose thread the fork did not copy, and abort or hang; then compiling is done by `compile_elsewhere`
# (another process), and `compiled_here` says whether this process ever compiled.
compiled_here = False
compile_elsewhere = None
native_work = contextlib.nullcontext()   # compiles, loads, client creation: xla/fork.py counts them in flight


def compile_and_load(module, devices, opts, callbacks=None):
    global compiled_here
    opts.env_option_overrides = compile_flags.overrides(module)
    if compile_elsewhere is not None:
        return compile_elsewhere(module, devices, opts, callbacks)
    compiled_here = True
    c, devs = client(), xc.DeviceList(tuple(devices))
    with native_work:
        return c.compile_and_load(module, devs, opts, callbacks) if callbacks else c.compile_and_load(module, devs, opts)


# Persistent compilation cache (xla/compile_cache.py): the executable's bytes and what they depend on.
def compile_options(device):
    opts = xc.CompileOptions()   # without an assignment XLA runs on device 0 whatever the DeviceList says
    opts.device_assignment = xc.DeviceAssignment.create(np.array([[device.id]]))
    return opts


def module_text(module) -> str:
    """A module's text without locations: what the cache fingerprints."""
    if isinstance(module, ir.Module):
        return module.operation.get_asm(enable_debug_info=False)
    return module if isinstance(module, str) else bytes(module).decode("latin-1")


def executable_key_parts(device) -> list:
    """Everything besides the module that a compiled executable depends on."""
    c = client()
    return [JAXLIB_VERSION, str(xc._version), c.platform, c.platform_version, c.runtime_type, device.platform,
            device.device_kind, str(device.id), compile_options(device).SerializeAsString().hex(),
            str(len(c.devices())), os.environ.get("XLA_FLAGS", ""), repr(compile_flags.overrides())]


def serialize_executable(exe) -> bytes:
    return client().serialize_executable(exe)


def deserialize_executable(blob: bytes, device):
    """Never pass bytes from an untrusted source: they become machine code."""
    c = client()
    with native_work:
        return c.deserialize_executable(blob, xc.DeviceList((device,)), compile_options(device))


# Host callbacks (xla/lower_callbacks.py): a compiled program calls Python through jaxlib's
# "xla_ffi_python_cpu_callback" FFI target; each custom call names its function by an index into
# the list handed to compile_and_load (only an `ir.Module` is accepted with that list). Lowering
# files each module's list here under a key it stores as a module attribute.
HOST_CALLBACKS_ATTR = "array_namespace.host_callbacks"
HOST_CALLBACK_TARGET = "xla_ffi_python_cpu_callback"
host_callback_lists: dict = {}   # key -> list of callables (bounded: see lower_callbacks)


def host_callbacks_of(module):
    if not host_callback_lists:
        return None
    if not isinstance(module, ir.Module):   # text has no way to carry them: running it would crash
        if HOST_CALLBACK_TARGET in (module if isinstance(module, str) else bytes(module).decode("latin-1")):
            raise RuntimeError("a module with host callbacks must be compiled from its ir.Module")
        return None
    attrs = module.operation.attributes
    if HOST_CALLBACKS_ATTR not in attrs:
        return None
    key = ir.StringAttr(attrs[HOST_CALLBACKS_ATTR]).value
    callbacks = host_callback_lists.get(key)
    if callbacks is None:
        raise RuntimeError("the host callbacks of this lowered module were dropped (too many modules were "
                           "lowered since); lower it again before compiling")
    return callbacks


def result_handler(aval, device):
    return xc.array_result_handler(aval, sharding_for(device), True, _skip_checks=True)


def to_numpy(arr) -> np.ndarray:
    if isinstance(arr._sharding, ManyDevices):   # (not np.asarray first: with `jax` imported that runs JAX's own
        return gather(arr)                        # ArrayImpl.__array__, its errors and its slower readback)
    out = np.asarray(arr)
    if out.dtype == object:   # bf16 etc. are not exported through the buffer protocol
        out = arr._single_device_array_to_np_array_did_copy()[0]
    return out


# ------------------------------------------------ after os.fork(): the child's own client (xla/fork.py)
_forsaken = []        # the clients of the process this one was forked from: never used, never destroyed here
_fork_refusal = None  # why this forked child cannot make a client (it was forked from a distributed run)


def forsake_client(refusal=None):
    """In a forked child: drop the parent's client and what was made from it (shardings, the C++ dispatchers'
    executables); the next use makes a new client. The old one is kept alive for good: destroying it would
    wait forever on its thread pools' threads, which a fork does not copy. `refusal`: the error the next
    client() raises instead of making one."""
    global _client, _init_lock, _fork_refusal
    if _client is not None:
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(_client))   # (not even at interpreter exit)
        _forsaken.append(_client)
    _client, _init_lock, _fork_refusal = None, threading.RLock(), refusal
    _shardings.clear()
    if _states_ready:
        _jax.PjitFunctionCache.clear_all()


def is_forsaken(x):
    """Whether a device array or a device belongs to a client of the parent process (before a fork)."""
    if not _forsaken:
        return False
    if type(x) is ArrayImpl:
        x = x._sharding.devices[0] if on_many_devices(x) else device_of(x)
    return x.client in _forsaken


def current_device(device):
    """`device`, or where it is a device of the parent process's client (before a fork), this client's
    device of the same id."""
    if not _forsaken or device.client not in _forsaken:
        return device
    for d in client().devices():
        if d.id == device.id:
            return d
    raise RuntimeError(f"{device} of the process this one was forked from has no counterpart here")


# ------------------------------------------------------- arrays over several devices (pmap)
class ManyDevices(xc.GSPMDSharding):
    """A sharding over several devices: `stacked` (split along axis 0, one block per device, in the device
    list's order) or replicated. Carries the two hooks the C++ runtime calls back into."""

    memory_kind = None

    def _to_xla_hlo_sharding(self, ndim):
        return self._hlo_sharding


def many_devices(devices, ndim, stacked):
    key = (tuple(d.id for d in devices), ndim if stacked else -1)
    s = _shardings.get(key)
    if s is None:
        hs = xc.HloSharding.iota_tile([len(devices)] + [1] * (ndim - 1)) if stacked else xc.HloSharding.replicate()
        s = ManyDevices(xc.DeviceList(tuple(devices)), hs)
        s.stacked, s.devices = stacked, tuple(devices)
        _shardings[key] = s
    return s


def shards(arr):
    """The per-device arrays of a multi-device array, in its device list's order. (jaxlib's `_arrays` would
    import the `jax` package to give each an aval when it is installed: kept out while it runs.)"""
    if "jax" in sys.modules:
        return arr._arrays
    sys.modules["jax"] = None
    try:
        return arr._arrays
    finally:
        if sys.modules.get("jax", 0) is None:
            del sys.modules["jax"]


def gather(arr) -> np.ndarray:
    """The host value of an array over several devices (its shards assembled)."""
    if arr._sharding.stacked or getattr(arr._sharding, "tiled", False):   # (a replicated value: any shard is all)
        check_addressable(arr._sharding.devices, "read back an array with shards held by other processes",
                          ": read its addressable_shards, or all_gather the values inside a pmap first")
    parts = shards(arr)
    shape = tuple(arr.aval.shape)
    if getattr(arr._sharding, "tiled", False):   # laid out over a mesh (shard_map, sharded jit)
        return assemble([_one_to_numpy(p) for p in parts], tile_indices(arr._sharding, shape), shape,
                        arr.aval.dtype)
    if not arr._sharding.stacked:
        return _one_to_numpy(parts[0]).reshape(shape)
    block = (shape[0] // len(parts),) + shape[1:]
    return np.concatenate([_one_to_numpy(p).reshape(block) for p in parts], 0)


def check_addressable(devices, what, hint=""):
    """A clear error (not a crash, not a silently partial value) for data held by another process."""
    me = client().process_index()
    away = [d for d in devices if d.process_index != me]
    if away:
        raise RuntimeError(f"cannot {what}: {', '.join(f'{d} belongs to process {d.process_index}' for d in away[:4])}"
                           f"{', ...' if len(away) > 4 else ''}; this is process {me}, which can only address "
                           f"its local_devices(){hint}")


def on_many_devices(x):
    """Whether a raw value is an array over several devices (a pmap's mapped result)."""
    return type(x) is ArrayImpl and isinstance(x._sharding, ManyDevices)


def shard_arrays(arr):
    """The per-device blocks of an array over several devices as ordinary single-device arrays (no copy)."""
    sh = arr._sharding
    shape = tuple(arr.aval.shape)
    if getattr(sh, "tiled", False):
        return [a._rewrap_with_aval_and_sharding(arr.aval.update(shape=tuple(s.stop - s.start for s in ix)),
                                                 sharding_for(d))
                for a, (d, ix) in zip(shards(arr), local_tiles(sh, shape))]
    block = arr.aval.update(shape=((shape[0] // len(sh.devices),) + shape[1:]) if sh.stacked else shape)
    return [a._rewrap_with_aval_and_sharding(block, sharding_for(d)) for a, d in zip(shards(arr), sh.devices)]


def _one_to_numpy(a):
    out = np.asarray(a)
    return a._single_device_array_to_np_array_did_copy()[0] if out.dtype == object else out


def put_on_devices(x: np.ndarray, aval, sharding, devices):
    """Host data onto several devices: split along axis 0 (a stacked sharding) or copied to each."""
    n = len(devices)
    parts = [x[i * (x.shape[0] // n):(i + 1) * (x.shape[0] // n)] for i in range(n)] if sharding.stacked else [x] * n
    return xc.batched_device_put(aval, sharding, parts, list(devices), True, False, _IMMUTABLE, True)


def compile_replicas(module, devices):
    """One program run as len(devices) replicas, replica i on devices[i]; returns (executable, device order)."""
    opts = xc.CompileOptions()
    opts.num_replicas, opts.num_partitions = len(devices), 1
    opts.device_assignment = xc.DeviceAssignment.create(np.array([[d.id] for d in devices]))
    exe = compile_and_load(module, devices, opts)
    return exe, tuple(exe.local_devices())


# ------------------------------------------ arrays over a mesh of devices (shard_map, sharded jit)
def mesh_sharding(devices, hlo, tag=None):
    """A ManyDevices sharding laid out as `hlo` (an HloSharding, or its text) says over `devices`, whose
    positions are the sharding's device numbers (the SPMD partitions); one object per (devices, text, tag)."""
    text = hlo if isinstance(hlo, str) else str(hlo)
    key = ("mesh", tuple(d.id for d in devices), text, tag)
    s = _shardings.get(key)
    if s is None:
        hs = xc.HloSharding.from_string(text) if isinstance(hlo, str) else hlo
        s = ManyDevices(xc.DeviceList(tuple(devices)), hs)
        s.stacked, s.devices, s.tiled, s.text = False, tuple(devices), not hs.is_replicated(), text
        _shardings[key] = s
    return s


def same_layout(text_a, text_b):
    """Whether two HloSharding texts describe one layout (e.g. an iota tile list and its explicit form)."""
    return text_a == text_b or xc.HloSharding.from_string(text_a) == xc.HloSharding.from_string(text_b)


def local_tiles(sharding, shape):
    """(device, slices) of the devices of this process, in the sharding's device order -- the order of the
    buffers a multi-device array holds here (in a run of several processes, only its own devices' tiles)."""
    me = client().process_index()
    return [(d, ix) for d, ix in zip(sharding.devices, tile_indices(sharding, shape)) if d.process_index == me]


def tile_indices(sharding, shape):
    """Per device of a mesh sharding (in its device order): the slices of an array of `shape` it holds
    (the last tiles of an unevenly split dimension are short; XLA pads their buffers)."""
    hs, n = sharding._hlo_sharding, len(sharding.devices)
    whole = tuple(slice(0, s) for s in shape)
    if hs.is_replicated():
        return [whole] * n
    dims = list(hs.tile_assignment_dimensions())
    tiles = np.array(hs.tile_assignment_devices(), dtype=np.int64).reshape(dims)
    out = [whole] * n
    for pos in np.ndindex(*dims):
        idx = []
        for k, size in enumerate(shape):
            b = -(-size // dims[k])
            idx.append(slice(min(pos[k] * b, size), min((pos[k] + 1) * b, size)))
        out[int(tiles[pos])] = tuple(idx)
    return out


def assemble(parts, indices, shape, dtype):
    out = np.empty(shape, dtype)
    for p, ix in zip(parts, indices):
        out[ix] = p[tuple(slice(0, s.stop - s.start) for s in ix)].reshape(out[ix].shape)
    return out


def put_tiles(x: np.ndarray, aval, sharding):
    """Host data laid out over a mesh sharding's devices, each getting its tile (a copy)."""
    me = client().process_index()
    bufs = [device_put(np.array(x[ix], order="C"), aval.update(shape=tuple(s.stop - s.start for s in ix)), d)
            for ix, d in zip(tile_indices(sharding, tuple(x.shape)), sharding.devices)
            if d.process_index == me]   # (in a run of several processes, each feeds its own devices' tiles)
    # (batched_device_put fails on partially replicated shardings: the array is made from its shards)
    return xc.ArrayImpl(aval, sharding, bufs, committed=True, _skip_checks=True)


def compile_spmd(module, devices):
    """One SPMD program partitioned over len(devices) partitions, partition i on devices[i]; returns
    (executable, this process's devices in the order the executable takes and gives their buffers)."""
    opts = xc.CompileOptions()
    opts.num_replicas, opts.num_partitions = 1, len(devices)
    opts.executable_build_options.use_spmd_partitioning = True
    opts.executable_build_options.use_shardy_partitioner = True
    opts.device_assignment = xc.DeviceAssignment.create(np.array([[d.id for d in devices]]))
    exe = compile_and_load(module, devices, opts)
    order = tuple(exe.local_devices())
    me = client().process_index()
    if [d.id for d in order] != [d.id for d in devices if d.process_index == me]:
        raise RuntimeError(f"SPMD program: XLA placed the partitions on {order}, not on {tuple(devices)}")
    return exe, order


def output_hlo_shardings(exe, n):
    """The HloShardings XLA chose for an SPMD executable's n outputs."""
    got = exe.get_output_shardings()   # (None for a program of one partition)
    return [xc.HloSharding.replicate()] * n if got is None else [xc.HloSharding.from_proto(o) for o in got]


def many_result_handler(aval, sharding):
    return xc.array_result_handler(aval, sharding, True, _skip_checks=True)


def to_dlpack(arr):
    """A zero-copy (legacy, unversioned) DLPack capsule of a device buffer (or of a host value's buffer)."""
    if type(arr) is not ArrayImpl:
        arr = arr.buffer(client().local_devices()[0])
    return xc._xla.buffer_to_dlpack_managed_tensor(arr, stream=None)


def device_of(arr):
    return arr._sharding._device if hasattr(arr._sharding, "_device") else arr._sharding.device_set.pop()


def is_ours(arr):
    """Whether a device array belongs to our client, not another of this jaxlib's (a jax.Array has the same
    ArrayImpl type; our executables refuse it: 'Buffer ... is on device cpu:0, but replica is assigned to
    device cpu:0')."""
    sh = arr._sharding
    if type(sh) is OneDevice or type(sh) is ManyDevices:   # (every array our runtime makes)
        return True
    try:
        d = sh._device if hasattr(sh, "_device") else next(iter(sh.device_set))
    except (AttributeError, StopIteration, TypeError):
        return True   # (no device to tell by: taken as ours, as before)
    return d.client is client()


# --------------------------------------------------------------------- C++ jit dispatch
# jaxlib's C++ `pjit` dispatcher checks a call's signature and runs a cached executable
# without entering Python. Protocol (learned from jaxlib 0.10.2's pjit.cc): it flattens the
# arguments with a C++ pytree registry, calls `cache_miss(*args, **kw)` on a miss, which
# returns (outputs, FastpathData or None, drop_entry), and reads three process-wide config
# states on every call. `import jax` installs its own states; then we leave them alone.
import collections  # noqa: E402
import sys  # noqa: E402

from jaxlib import _jax  # noqa: E402

FastpathData = collections.namedtuple("FastpathData", [
    "xla_executable", "out_pytree_def", "in_shardings", "out_shardings", "out_avals", "out_committed",
    "kept_var_bitvec", "in_device_local_layouts", "const_args"])

cpp_registry = _jax.pytree.PyTreeRegistry()   # None, tuple, namedtuple, list, dict built in
cpp_registry.register_node(collections.OrderedDict, lambda d: (tuple(d.values()), tuple(d.keys())),
                           lambda keys, vals: collections.OrderedDict(zip(keys, vals)))
_pjit_cache = None
_states_ready = False


def jax_owns_states():
    mod = sys.modules.get("jax")
    return mod is not None


def _ensure_states():
    if not _states_ready:
        with _init_lock:
            if not _states_ready:
                _make_states()


def _make_states():
    global _states_ready, _pjit_cache
    if not jax_owns_states():
        Config = _jax.config.Config
        _jax.jax_jit.set_enable_x64_state(Config("array_namespace_enable_x64", True, include_in_jit_key=True))
        _jax.jax_jit.set_disable_jit_state(Config("array_namespace_disable_jit", False, include_in_jit_key=True))
        _jax.jax_jit.set_post_hook_state(Config("array_namespace_post_hook", None))
    from transforms.caches import cache_size   # (jaxlib's own LRU over all dispatchers' signatures)
    _pjit_cache = _jax.PjitFunctionCache(capacity=cache_size("jit_dispatch"))
    # "eager or tracing" is part of every C++ call signature, so calls under a transform never
    # hit an entry that executes eagerly (they reach cache_miss, which stages them)
    from transforms.core import set_trace_hook
    set_trace_hook(_jax.config.Config("array_namespace_tracing", None, include_in_jit_key=True).set_local)
    _states_ready = True


def _shard_arg_fallback(x, sharding, layout):
    from . import pmap_runtime, runtime
    if type(sharding) is ManyDevices:   # a pmap's operand not yet on its devices (pmap_runtime.fastpath)
        return pmap_runtime.place(x, sharding)
    return x if type(x) is ArrayImpl else runtime.device_buffer(x)


def set_dispatch_cache_size(n):
    """A new cap for the C++ dispatchers' shared LRU. jaxlib fixes a cache's capacity when made, so
    dispatchers made from now on share a new cache of `n` signatures (each existing one keeps its own)."""
    global _pjit_cache
    with _init_lock:
        if _states_ready:
            _pjit_cache = _jax.PjitFunctionCache(capacity=n)


def cpp_dispatcher(name, fun, cache_miss, static_argnums, static_argnames, key):
    """A C++ callable running cached executables; `cache_miss` handles everything else."""
    _ensure_states()
    return _jax.pjit(name, fun, cache_miss, list(static_argnums), list(static_argnames), key, cpp_registry,
                     _shard_arg_fallback, _pjit_cache)


def cpp_flatten(tree):
    return cpp_registry.flatten(tree)
