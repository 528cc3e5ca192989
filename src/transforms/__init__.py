"""transforms: trace array code into jaxprs and transform it (grad, jvp, vjp, vmap, jit).

    from transforms import grad, jit, vmap, make_jaxpr

The engine imports no backend: it traces and transforms on its own, and executes through the hooks
a backend registers (transforms/backend.py). `import array_namespace` brings up the XLA backend.
"""
from . import primitives  # noqa: F401  (registers the primitive vocabulary)
from .ad import grad, jvp, linear_transpose, linearize, value_and_grad, vjp
from .batching import BatchDisagreementError, vmap
from .control_flow import cond, fori_loop, map, scan, switch, while_loop
from .core import ConcretizationTypeError, UnexpectedTracerError
from .jacobians import hessian, jacfwd, jacrev
from .jaxpr import ClosedJaxpr, Jaxpr, eval_jaxpr, typecheck
from .custom_derivatives import custom_jvp, custom_vjp, stop_gradient
from .callbacks import ShapeDtypeStruct, debug_print, io_callback, pure_callback
from .collectives import (all_gather, all_to_all, axis_index, pmax, pmean, pmin, ppermute, psum,  # noqa: F401
                          psum_scatter)
from .devices import (device_count, devices, local_device_count, local_devices, process_count,  # noqa: F401
                      process_index, set_cpu_device_count)
from .jit import jit, make_jaxpr
from .pmap import pmap
from .remat import checkpoint, dots_saveable, everything_saveable, nothing_saveable, remat
from .pytree import (register_pytree_node, tree_flatten, tree_leaves, tree_map, tree_structure,
                     tree_unflatten)

from . import random  # noqa: E402,F401  (explicit-key Threefry PRNG: transforms.random)
from . import profiler  # noqa: E402,F401  (memory profiles, live arrays, traces: transforms.profiler)
from . import distributed  # noqa: E402,F401  (multi-process runs: transforms.distributed.initialize)


def block_until_ready(tree):
    """Wait for every array in a pytree to be computed (dispatch is asynchronous); returns the tree.
    Leaves without a `block_until_ready` method (Python numbers, None) pass as they are.

    Parameters: tree (pytree): arrays and other leaves.
    Returns: the same tree, its arrays computed.
    Raises: RuntimeError: the runtime's, if an array's buffer was deleted (e.g. donated to a pmap).

    >>> block_until_ready({"x": xp.ones(2) * 3, "n": 1})
    {'x': Array([3., 3.]), 'n': 1}
    """
    for leaf in tree_leaves(tree):
        if hasattr(leaf, "block_until_ready"):
            leaf.block_until_ready()
    return tree


__all__ = ["grad", "jvp", "linearize", "value_and_grad", "vjp", "vmap", "jit", "make_jaxpr", "hessian",
           "jacfwd", "jacrev", "ClosedJaxpr", "Jaxpr", "eval_jaxpr", "typecheck", "tree_flatten",
           "tree_leaves", "tree_map", "tree_structure", "tree_unflatten", "register_pytree_node",
           "block_until_ready", "ConcretizationTypeError", "BatchDisagreementError",
           "UnexpectedTracerError", "custom_jvp", "custom_vjp",
           "stop_gradient", "checkpoint", "remat", "dots_saveable", "everything_saveable", "nothing_saveable",
           "linear_transpose", "cond", "switch", "while_loop", "fori_loop", "scan", "map",
           "pure_callback", "io_callback", "debug_print", "ShapeDtypeStruct"]
__all__ += ["psum", "pmean", "pmax", "pmin", "all_gather", "psum_scatter", "all_to_all", "ppermute",
            "axis_index"]   # collectives over named axes (transforms/collectives.py)
__all__ += ["devices", "local_devices", "device_count", "local_device_count", "process_index", "process_count",
            "set_cpu_device_count"]   # transforms/devices.py
__all__ += ["pmap"]   # transforms/pmap.py
from .sharding import Mesh, NamedSharding, P, PartitionSpec, device_put, make_mesh  # noqa: E402
from .shard_map import shard_map  # noqa: E402
__all__ += ["Mesh", "NamedSharding", "P", "PartitionSpec", "device_put", "make_mesh",
            "shard_map"]   # meshes and SPMD: transforms/sharding.py, transforms/shard_map.py
