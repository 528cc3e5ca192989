"""The namespace exports exactly the 2025.12 standard's names plus our documented extensions.

The standard's lists are copied as data from the spec's stubs (array_api_stubs/_2025_12, each module's
__all__); a name forgotten in array_namespace/__init__.py, or a helper leaking into the namespace, fails here.
"""
import array_namespace as xp

STANDARD = {
    "constants": ["e", "inf", "nan", "newaxis", "pi"],
    "creation": ["arange", "asarray", "empty", "empty_like", "eye", "from_dlpack", "full", "full_like", "linspace",
                 "meshgrid", "ones", "ones_like", "tril", "triu", "zeros", "zeros_like"],
    "data types functions": ["astype", "can_cast", "finfo", "iinfo", "isdtype", "result_type"],
    "data types": ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32",
                   "float64", "complex64", "complex128"],
    "elementwise": [
        "abs", "acos", "acosh", "add", "asin", "asinh", "atan", "atan2", "atanh", "bitwise_and", "bitwise_left_shift",
        "bitwise_invert", "bitwise_or", "bitwise_right_shift", "bitwise_xor", "ceil", "clip", "conj", "copysign",
        "cos", "cosh", "divide", "equal", "exp", "expm1", "floor", "floor_divide", "greater", "greater_equal",
        "hypot", "imag", "isfinite", "isinf", "isnan", "less", "less_equal", "log", "log1p", "log2", "log10",
        "logaddexp", "logical_and", "logical_not", "logical_or", "logical_xor", "maximum", "minimum", "multiply",
        "negative", "nextafter", "not_equal", "positive", "pow", "real", "reciprocal", "remainder", "round", "sign",
        "signbit", "sin", "sinh", "square", "sqrt", "subtract", "tan", "tanh", "trunc"],
    "indexing": ["take", "take_along_axis"],
    "inspection": ["__array_namespace_info__"],
    "linear algebra": ["matmul", "matrix_transpose", "tensordot", "vecdot"],
    "manipulation": ["broadcast_arrays", "broadcast_shapes", "broadcast_to", "concat", "expand_dims", "flip",
                     "moveaxis", "permute_dims", "repeat", "reshape", "roll", "squeeze", "stack", "tile", "unstack"],
    "searching": ["argmax", "argmin", "count_nonzero", "nonzero", "searchsorted", "where"],
    "set": ["isin", "unique_all", "unique_counts", "unique_inverse", "unique_values"],
    "sorting": ["argsort", "sort"],
    "statistical": ["cumulative_sum", "cumulative_prod", "max", "mean", "min", "prod", "std", "sum", "var"],
    "utility": ["all", "any", "diff"],
    "extensions and version": ["linalg", "fft", "__array_api_version__"],
}
LINALG = ["cholesky", "cross", "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh", "inv", "matmul", "matrix_norm",
          "matrix_power", "matrix_rank", "matrix_transpose", "outer", "pinv", "qr", "slogdet", "solve", "svd",
          "svdvals", "tensordot", "trace", "vecdot", "vector_norm"]
FFT = ["fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft", "fftfreq", "rfftfreq",
       "fftshift", "ifftshift"]
INFO = ["capabilities", "default_device", "default_dtypes", "devices", "dtypes"]
OURS = {"Array", "Device", "special", "SUPPORTED_VERSIONS"}   # documented in the README


def test_all_is_the_standard_plus_documented_extensions():
    standard = {n for names in STANDARD.values() for n in names}
    assert set(xp._EXTENSIONS) == OURS
    missing, extra = standard - set(xp.__all__), set(xp.__all__) - standard - OURS
    assert not missing, f"standard names not exported: {sorted(missing)}"
    assert not extra, f"exported names that are neither standard nor documented extensions: {sorted(extra)}"
    assert len(xp.__all__) == len(set(xp.__all__))


def test_every_exported_name_resolves_and_star_import_gives_all():
    ns = {}
    exec("from array_namespace import *", ns)
    assert set(ns) - {"__builtins__"} == set(xp.__all__)
    for n in xp.__all__:
        assert getattr(xp, n) is ns[n]
    assert xp.__array_api_version__ == "2025.12"


def test_no_stray_public_names_outside_all():
    public = {n for n in dir(xp) if not n.startswith("_")}
    assert public <= set(xp.__all__), sorted(public - set(xp.__all__))


def test_submodules_export_exactly_the_standard_lists():
    assert sorted(xp.linalg.__all__) == sorted(LINALG)
    assert sorted(xp.fft.__all__) == sorted(FFT)
    assert {n for n in dir(xp.linalg) if not n.startswith("_")} == set(LINALG)
    assert {n for n in dir(xp.fft) if not n.startswith("_")} == set(FFT)
    info = xp.__array_namespace_info__()
    assert {n for n in dir(info) if not n.startswith("_")} == set(INFO)


def test_dtypes_and_constants_have_the_standard_values():
    import math
    import numpy as np
    for n in STANDARD["data types"]:
        assert getattr(xp, n) == np.dtype(n if n != "bool" else "bool")
    assert xp.e == math.e and xp.pi == math.pi and math.isinf(xp.inf) and math.isnan(xp.nan) and xp.newaxis is None
