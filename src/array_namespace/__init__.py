"""array_namespace: a strict Python Array API standard namespace on XLA, traceable by `transforms`.

    import array_namespace as xp
    x = xp.linspace(0.0, 1.0, 5)
    y = xp.sum(xp.sin(x) ** 2)
"""
import math as _math

import transforms as _transforms  # noqa: F401  (the engine)
import xla as _xla  # noqa: F401  (brings up the XLA backend: lowerings, eager impls, the runtime hooks)

from ._array import Array, Device
from . import _pickle  # noqa: F401,E402  (Arrays pickle and deep-copy; a forked child's lock)
from ._creation import asarray, empty, empty_like, from_dlpack, full, full_like, ones, ones_like, zeros, zeros_like
from ._ranges import arange, eye, linspace, meshgrid, tril, triu
from ._data_types import astype, can_cast, finfo, iinfo, isdtype, result_type
from ._dtypes import (bool_ as bool, complex64, complex128, float32, float64, int8, int16, int32, int64, uint8,
                      uint16, uint32, uint64)
from ._elementwise import (abs, acos, acosh, add, asin, asinh, atan, atan2, atanh, bitwise_and,
                           bitwise_invert, bitwise_left_shift, bitwise_or, bitwise_right_shift, bitwise_xor, ceil,
                           clip, conj, copysign, cos, cosh, divide, equal, exp, expm1, floor, floor_divide,
                           greater, greater_equal, hypot, imag, isfinite, isinf, isnan, less, less_equal, log,
                           log1p, log2, log10, logaddexp, logical_and, logical_not, logical_or, logical_xor,
                           maximum, minimum, multiply, negative, nextafter, not_equal, positive, pow, real,
                           reciprocal, remainder, round, sign, signbit, sin, sinh, sqrt, square, subtract, tan,
                           tanh, trunc)
from ._info import __array_namespace_info__
from ._linear_algebra import matmul, matrix_transpose, tensordot, vecdot
from ._manipulation import (broadcast_arrays, broadcast_shapes, broadcast_to, concat, expand_dims, flip,
                            moveaxis, permute_dims, repeat, reshape, roll, squeeze, stack, tile, unstack)
from ._indexing import take, take_along_axis
from ._searching import argmax, argmin, count_nonzero, nonzero, searchsorted, where
from ._set import isin, unique_all, unique_counts, unique_inverse, unique_values
from ._sorting import argsort, sort
from ._statistical import all, any, max, mean, min, prod, std, sum, var
from ._utility import cumulative_prod, cumulative_sum, diff

__array_api_version__ = "2025.12"
SUPPORTED_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12", "2025.12")

e = _math.e
pi = _math.pi
inf = float("inf")
nan = float("nan")
newaxis = None

from . import linalg, fft, special  # noqa: E402,F401  (the linalg and fft extensions; scipy.special's hook)

# The public names: the standard's (functions, dtypes, constants, the linalg and fft extensions, the
# inspection entry point), then ours, each documented in the README: `Array` and `Device` (the classes
# behind arrays and devices), `special` (scipy.special's array-API hook), SUPPORTED_VERSIONS.
# tests/array_namespace/test_exports.py checks this equals the 2025.12 standard's list plus these.
_EXTENSIONS = ("Array", "Device", "special", "SUPPORTED_VERSIONS")
__all__ = sorted(
    {n for n, v in list(globals().items()) if not n.startswith("_") and not isinstance(v, type(_math))}
    | {"linalg", "fft", "special", "__array_namespace_info__", "__array_api_version__"})

# A NumPy/JAX name the namespace lacks (xp.dot, xp.concatenate) answers with the Array API name (_hints.py);
# Python calls this only when normal lookup fails.
from ._hints import module_getattr as __getattr__  # noqa: E402,F401
