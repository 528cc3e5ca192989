"""Hints for NumPy and JAX spellings this namespace does not have.

The namespace is the Array API standard, strictly: `xp.dot`, `xp.concatenate`, `x.mean()` do not
exist. Someone coming from NumPy or JAX meets that as an AttributeError, so the error should say what
to write instead. Two tables:

- MODULE: names missing from `array_namespace` -> the Array API name(s) or how to do it. Served by the
  package's module-level `__getattr__`, which Python calls only when normal lookup fails (no cost
  to the names that exist).
- METHODS: NumPy/JAX array methods missing from `Array` -> the function to call. Installed as class
  attributes whose lookup raises AttributeError with the hint (so `hasattr(x, "mean")` stays False).
  Not an `Array.__getattr__`: on Python 3.11 defining `__getattr__` on a class stops the interpreter
  specialising *every* attribute load on its instances (`x._v`, `x.shape`: measured 2-4x slower) and
  routes each expected miss (probes like `hasattr(x, "__cuda_array_interface__")`) through a
  Python call; descriptors on a fixed list of
  names cost nothing anywhere else.
"""
from __future__ import annotations

# name -> (hint text, names it points to in the namespace: each must exist; tests/array_namespace/test_hints.py)
_R = "the Array API name is "
MODULE = {
    # renamed functions
    "array": (_R + "asarray", ["asarray"]),
    "asanyarray": (_R + "asarray", ["asarray"]),
    "ascontiguousarray": (_R + "asarray", ["asarray"]),
    "concatenate": (_R + "concat", ["concat"]),
    "power": (_R + "pow", ["pow"]),
    "absolute": (_R + "abs", ["abs"]),
    "fabs": (_R + "abs", ["abs"]),
    "arccos": (_R + "acos", ["acos"]),
    "arcsin": (_R + "asin", ["asin"]),
    "arctan": (_R + "atan", ["atan"]),
    "arctan2": (_R + "atan2", ["atan2"]),
    "arccosh": (_R + "acosh", ["acosh"]),
    "arcsinh": (_R + "asinh", ["asinh"]),
    "arctanh": (_R + "atanh", ["atanh"]),
    "amax": (_R + "max", ["max"]),
    "amin": (_R + "min", ["min"]),
    "cumsum": (_R + "cumulative_sum", ["cumulative_sum"]),
    "cumprod": (_R + "cumulative_prod", ["cumulative_prod"]),
    "invert": (_R + "bitwise_invert", ["bitwise_invert"]),
    "bitwise_not": (_R + "bitwise_invert", ["bitwise_invert"]),
    "left_shift": (_R + "bitwise_left_shift", ["bitwise_left_shift"]),
    "right_shift": (_R + "bitwise_right_shift", ["bitwise_right_shift"]),
    "true_divide": (_R + "divide", ["divide"]),
    "mod": (_R + "remainder (Python's sign convention: the divisor's sign)", ["remainder"]),
    "conjugate": (_R + "conj", ["conj"]),
    "around": (_R + "round", ["round"]),
    "rint": (_R + "round", ["round"]),
    "fix": (_R + "trunc", ["trunc"]),
    "identity": (_R + "eye", ["eye"]),
    "promote_types": (_R + "result_type", ["result_type"]),
    "issubdtype": (_R + "isdtype, e.g. isdtype(x.dtype, 'real floating')", ["isdtype"]),
    "unique": ("the Array API names are unique_values, unique_counts, unique_inverse and unique_all",
               ["unique_values", "unique_counts", "unique_inverse", "unique_all"]),
    "argwhere": (_R + "nonzero (a tuple of index arrays)", ["nonzero"]),
    "swapaxes": ("use permute_dims (any order of axes) or moveaxis", ["permute_dims", "moveaxis"]),
    "transpose": ("use permute_dims(x, axes), matrix_transpose(x) for the last two axes, or x.T / x.mT",
                  ["permute_dims", "matrix_transpose"]),
    "dot": ("the Array API names are matmul (x @ y), vecdot (a dot product along an axis) and tensordot",
            ["matmul", "vecdot", "tensordot"]),
    "inner": ("use vecdot (a dot product along the last axis)", ["vecdot"]),
    "outer": ("use linalg.outer", ["linalg.outer"]),
    "trace": ("use linalg.trace", ["linalg.trace"]),
    "diagonal": ("use linalg.diagonal", ["linalg.diagonal"]),
    "diag": ("use linalg.diagonal to read a diagonal; to build a diagonal matrix, eye(n) * v", ["linalg.diagonal", "eye"]),
    "cross": ("use linalg.cross", ["linalg.cross"]),
    "det": ("use linalg.det", ["linalg.det"]),
    "inv": ("use linalg.inv", ["linalg.inv"]),
    "solve": ("use linalg.solve", ["linalg.solve"]),
    "norm": ("use linalg.vector_norm or linalg.matrix_norm", ["linalg.vector_norm", "linalg.matrix_norm"]),
    # dtypes and attributes
    "float_": (_R + "float64 (the default floating dtype)", ["float64"]),
    "double": (_R + "float64", ["float64"]),
    "single": (_R + "float32", ["float32"]),
    "int_": (_R + "int64 (the default integer dtype)", ["int64"]),
    "bool_": (_R + "bool", ["bool"]),
    "complex_": (_R + "complex128", ["complex128"]),
    "float16": ("float16 is not in the Array API standard; use float32 or float64", ["float32", "float64"]),
    "bfloat16": ("bfloat16 is not in the Array API standard; use float32 or float64", ["float32", "float64"]),
    "dtype": ("dtypes are the namespace's objects (float64, int32, ...); an array's is x.dtype", ["float64"]),
    "ndim": ("ndim is an attribute of arrays: x.ndim", []),
    "shape": ("shape is an attribute of arrays: x.shape", []),
    "size": ("size is an attribute of arrays: x.size", []),
    # how-tos
    "ravel": ("use reshape(x, (-1,))", ["reshape"]),
    "copy": ("use asarray(x, copy=True)", ["asarray"]),
    "append": ("use concat", ["concat"]),
    "hstack": ("use concat (axis=-1 for 2-D, axis=0 for 1-D)", ["concat"]),
    "vstack": ("use concat(..., axis=0) (stack for 1-D rows)", ["concat", "stack"]),
    "column_stack": ("use stack(..., axis=1)", ["stack"]),
    "split": ("use unstack, or slices: x[a:b]", ["unstack"]),
    "atleast_1d": ("use reshape or expand_dims", ["reshape", "expand_dims"]),
    "atleast_2d": ("use reshape or expand_dims", ["reshape", "expand_dims"]),
    "isclose": ("not in the Array API standard; write abs(a - b) <= atol + rtol * abs(b)", ["abs"]),
    "allclose": ("not in the Array API standard; write all(abs(a - b) <= atol + rtol * abs(b))", ["all", "abs"]),
    "array_equal": ("not in the Array API standard; write all(a == b) (after checking the shapes)", ["all"]),
    "average": ("use mean, or sum(w * x) / sum(w) for weights", ["mean", "sum"]),
    "median": ("not in the Array API standard; sort and index the middle", ["sort"]),
    "percentile": ("not in the Array API standard; sort and index", ["sort"]),
    "quantile": ("not in the Array API standard; sort and index", ["sort"]),
    "nansum": ("not in the Array API standard; write sum(where(isnan(x), 0.0, x))", ["sum", "where", "isnan"]),
    "nanmean": ("not in the Array API standard; sum(where(isnan(x), 0.0, x)) / count_nonzero(~isnan(x))",
                ["sum", "where", "isnan", "count_nonzero"]),
    "select": ("use nested where", ["where"]),
    "put": ("arrays are immutable values: y = x.at[idx].set(v), or x[idx] = v (rebinds x)", []),
    "angle": ("write atan2(imag(z), real(z))", ["atan2", "imag", "real"]),
    "degrees": ("write x * (180 / pi)", ["pi"]),
    "radians": ("write x * (pi / 180)", ["pi"]),
    "exp2": ("use pow(2.0, x), or special.exp2", ["pow", "special.exp2"]),
    "cbrt": ("use special.cbrt", ["special.cbrt"]),
    "sinc": ("use special.sinc", ["special.sinc"]),
    "divmod": ("use floor_divide and remainder", ["floor_divide", "remainder"]),
    "fmod": ("not in the Array API standard; remainder has Python's sign convention", ["remainder"]),
    "einsum": ("einsum is not in the Array API standard; write it with matmul, tensordot or vecdot "
               "(or a sum of broadcast products)", ["matmul", "tensordot", "vecdot"]),
    # the engine lives elsewhere
    "random": ("random numbers live in transforms.random (explicit keys: key = random.key(0); "
               "random.normal(key, (3,)))", []),
    "grad": ("the transforms live in the `transforms` package: from transforms import grad, jit, vmap", []),
    "jit": ("the transforms live in the `transforms` package: from transforms import grad, jit, vmap", []),
    "vmap": ("the transforms live in the `transforms` package: from transforms import grad, jit, vmap", []),
    "lax": ("control flow lives in the `transforms` package: cond, switch, scan, while_loop, fori_loop", []),
}

METHODS = {
    "reshape": "xp.reshape(x, shape)",
    "astype": "xp.astype(x, dtype)",
    "transpose": "xp.permute_dims(x, axes), or x.T / x.mT",
    "swapaxes": "xp.permute_dims(x, axes)",
    "flatten": "xp.reshape(x, (-1,))",
    "ravel": "xp.reshape(x, (-1,))",
    "squeeze": "xp.squeeze(x, axis)",
    "copy": "xp.asarray(x, copy=True)",
    "mean": "xp.mean(x)",
    "sum": "xp.sum(x)",
    "prod": "xp.prod(x)",
    "max": "xp.max(x)",
    "min": "xp.min(x)",
    "std": "xp.std(x)",
    "var": "xp.var(x)",
    "all": "xp.all(x)",
    "any": "xp.any(x)",
    "argmax": "xp.argmax(x)",
    "argmin": "xp.argmin(x)",
    "argsort": "xp.argsort(x)",
    "sort": "xp.sort(x) (a new array; arrays are immutable values)",
    "cumsum": "xp.cumulative_sum(x)",
    "cumprod": "xp.cumulative_prod(x)",
    "clip": "xp.clip(x, min, max)",
    "round": "xp.round(x)",
    "conj": "xp.conj(x)",
    "conjugate": "xp.conj(x)",
    "real": "xp.real(x)",
    "imag": "xp.imag(x)",
    "dot": "x @ y (xp.matmul) or xp.vecdot(x, y)",
    "nonzero": "xp.nonzero(x)",
    "repeat": "xp.repeat(x, repeats)",
    "take": "xp.take(x, indices, axis=...)",
    "trace": "xp.linalg.trace(x)",
    "diagonal": "xp.linalg.diagonal(x)",
    "fill": "xp.full_like(x, value), or x[...] = value",
    "numpy": "np.asarray(x)",
}


def module_getattr(name):
    """The namespace's `__getattr__`: called only for a name it does not have."""
    hint = MODULE.get(name)
    if hint is None:
        raise AttributeError(f"module 'array_namespace' has no attribute {name!r}")
    raise AttributeError(f"array_namespace has no {name!r}; {hint[0]}")


class _Missing:
    """A class attribute standing for a NumPy/JAX method Arrays do not have: any lookup raises
    AttributeError saying which function to call (so hasattr() answers False, as for any missing name)."""
    __slots__ = ("name", "hint")

    def __init__(self, name, hint):
        self.name, self.hint = name, hint

    def __get__(self, obj, cls=None):
        raise AttributeError(f"Array has no method {self.name!r}; use {self.hint}")


def install_array_hints(cls):
    for name, hint in METHODS.items():
        if name not in cls.__dict__:
            setattr(cls, name, _Missing(name, hint))
