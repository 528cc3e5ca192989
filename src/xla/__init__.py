"""The XLA backend: the only package that imports jaxlib.

Importing it registers the lowering rules and the eager impl rules into the engine's tables.
"""
from . import lower_control_flow, lower_custom, lower_elementwise, lower_structural  # noqa: F401  (register lowering rules)
from . import lower_bits, lower_fft, lower_indexing, lower_lapack, lower_sorting  # noqa: F401
from . import lower_special_erf, lower_special_gamma  # noqa: F401
from . import lower_callbacks  # noqa: F401  (host callbacks: pure_callback, io_callback, debug_print)
from . import runtime
from .runtime import compile_jaxpr, default_device, device_put, devices, to_numpy

runtime.register_impls()

__all__ = ["compile_jaxpr", "default_device", "device_put", "devices", "to_numpy", "runtime"]
