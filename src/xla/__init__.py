"""The XLA backend: the only package that imports jaxlib.

Importing it registers the lowering rules and the eager impl rules into the engine's tables, and
the runtime (devices, compile, the C++ jit dispatcher) into the engine's backend hooks.
"""
from . import lower_control_flow, lower_custom, lower_elementwise, lower_structural  # noqa: F401  (register lowering rules)
from . import lower_bits, lower_fft, lower_indexing, lower_lapack, lower_sorting  # noqa: F401
from . import lower_special_erf, lower_special_gamma  # noqa: F401
from . import lower_elementwise_subnormal  # noqa: F401  (after lower_elementwise: the subnormal rule where it breaks)
from . import lower_pow  # noqa: F401  (after lower_elementwise_subnormal: pow, its float operands flushed)
from . import lower_callbacks  # noqa: F401  (host callbacks: pure_callback, io_callback, debug_print)
from . import lower_collectives  # noqa: F401  (psum, all_gather, ... over a pmap's devices)
from . import pmap_runtime  # noqa: E402  (pmap's programs over several devices)
from . import lower_shard_map, spmd  # noqa: E402,F401  (shard_map, sharded jit: SPMD programs over a mesh)
from . import distributed  # noqa: E402  (several processes: PJRT's distributed runtime)
from . import fork  # noqa: E402,F401  (a forked child gets its own runtime: os.register_at_fork)
from transforms.backend import backend

from . import _jaxlib, host_control_flow, host_eager, host_basic_index, host_program, jit_dispatch, runtime
from .lowering import lower_jaxpr
from .runtime import compile_jaxpr, default_device, device_put, devices, to_numpy

runtime.register_impls()


def _lower_text(closed, name="main", donate=()):
    return str(lower_jaxpr(closed, name, donate))


def _profiler():
    from . import profiling   # (loaded on first use: it loads jaxlib's profiler extension)
    return profiling


def _register_backend():
    """Fill in the engine's backend hooks (transforms/backend.py) with this package's runtime."""
    backend.register("xla", device_put=runtime.device_put, to_numpy=runtime.to_numpy,
                     default_device=runtime.default_device, devices=runtime.devices,
                     compile_jaxpr=runtime.compile_jaxpr, lower_text=_lower_text, impl_for=runtime.late_impl,
                     to_dlpack=_jaxlib.to_dlpack, jit_fast_call=jit_dispatch.fast_call,
                     jit_public=jit_dispatch.public, pmap_public=jit_dispatch.pmap_public, profiler=_profiler,
                     adopt=lambda r: r if _jaxlib.is_ours(r) else runtime.device_put(_jaxlib.to_numpy(r)))
    backend.register("xla", eager_way=host_eager.eager_way,   # staged calls op by op on host kernels
                     run_by_op=host_program.run_eager, eager_in_place=runtime.eager_in_place,
                     eager_element=host_basic_index.eager_element,   # x[i, j] of a host-held value (C)
                     eager_getitem=host_basic_index.eager_getitem,   # x[basic key] of a host-held value
                     eager_setitem=host_basic_index.eager_setitem,   # x[basic key] = v into its own memory
                     eager_family_setitem=host_basic_index.eager_family_setitem,   # ... into a view family's
                     box_fn=jit_dispatch.box_fn)   # the namespace's wrap in C
    c = _jaxlib.client
    backend.register("xla", local_devices=lambda: c().local_devices(), process_index=lambda: c().process_index(),
                     process_count=lambda: len({d.process_index for d in c().devices()}),
                     set_cpu_device_count=_jaxlib.set_cpu_device_count)   # devices (transforms/devices.py)
    backend.register("xla", pmap_call=pmap_runtime.pmap_call, sharding_of=pmap_runtime.sharding_of,
                     compile_jaxpr=pmap_runtime.compile_jaxpr,   # (jit of pmaps alone: their programs)
                     shards_of=pmap_runtime.shards_of)   # transforms/pmap.py, transforms/devices.py
    backend.register("xla", shard_map_call=spmd.shard_map_call, put_sharded=spmd.put_sharded,
                     compile_sharded=spmd.compile_sharded,   # shard_map, device_put, jit(in_shardings=...)
                     sharding_of=lambda r: spmd.sharding_of(r, pmap_runtime.sharding_of),
                     shards_of=lambda r: spmd.shards_of(r, pmap_runtime.shards_of))   # arrays over a mesh
    backend.register("xla", distributed_initialize=distributed.initialize, distributed_shutdown=distributed.shutdown,
                     distributed_barrier=distributed.barrier,
                     distributed_is_initialized=distributed.is_initialized)   # transforms/distributed.py


_register_backend()

__all__ = ["compile_jaxpr", "default_device", "device_put", "devices", "to_numpy", "runtime"]
