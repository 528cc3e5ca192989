"""Bad inputs for every namespace function, one row per function, and a classifier of what each does.

Why: the standard's exception types (TypeError for dtypes and non-arrays, ValueError for values and
shapes, IndexError for an axis out of range, MemoryError/ValueError for impossible sizes) with a message
naming the function the user called and the argument, eagerly and under jit alike. A row gives a valid
call and what each argument is (an array of which dtype kinds, an axis, a shape, a count); the categories
derive the bad calls from that, and `extra` adds the function's own (a bad `mode`, incompatible shapes).
A new function is covered by adding its row; tests/array_namespace/test_bad_inputs.py runs the matrix
and `python3 tests/array_namespace/bad_input_table.py` prints the survey (counts per outcome).
"""
from __future__ import annotations

import math
import os
import re
import signal
import sys
from dataclasses import dataclass, field

import numpy as np

if __name__ == "__main__":
    sys.path.append(os.path.join(os.path.dirname(__file__), "..", "..", "src"))   # PYTHONPATH can point elsewhere

import array_namespace as xp  # noqa: E402
from transforms import jit  # noqa: E402

CATEGORIES = ("dtype", "non_array", "axis_range", "axis_type", "shape", "empty_0d", "nonfinite", "size")

# Allowed dtype kinds of an array argument, and a dtype each kind refuses (the standard's kinds).
_BAD = {"f": "complex64", "fc": "int32", "c": "float64", "n": "bool", "r": "complex64", "i": "float32",
        "ib": "float32", "b": "int32", "ri": "float64", "any": None}


def A(shape=(2, 3), dtype="float64"):
    """A valid array: 1, 2, 3, ... (diagonally dominant when square, so linalg functions succeed)."""
    n = math.prod(shape)
    v = (np.arange(n) % 5 + 1).reshape(shape).astype("float64")
    if len(shape) >= 2 and shape[-1] == shape[-2]:
        v = v + 10 * np.eye(shape[-1])
    if dtype == "bool":
        return xp.asarray(v > 2)
    return xp.asarray(v.astype(dtype))


@dataclass
class Case:
    fn: str                 # public name: "std", "linalg.inv", "fft.rfft"
    category: str
    args: tuple
    kwargs: dict
    expected: type
    arg: tuple              # the message must name one of these
    what: str = ""

    @property
    def id(self):
        return f"{self.fn}-{self.category}-{self.what}"


@dataclass
class Row:
    fn: str
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    kinds: dict = field(default_factory=dict)   # array param -> allowed kinds (key of _BAD)
    axis: str | None = None                     # the axis parameter (checked against the first array's ndim)
    min_ndim: dict = field(default_factory=dict)  # array param -> least ndim (a lower one is refused)
    extra: list = field(default_factory=list)   # (category, what, {param: value}, expected, arg names)
    no_jit: bool = False                        # a function of host values only (no arrays to trace)

    @property
    def func(self):
        obj = xp
        for part in self.fn.split("."):
            obj = getattr(obj, part)
        return obj

    def params(self):
        """The names of the parameters a positional argument can fill (not *args, not keyword-only)."""
        import inspect
        return [p.name for p in inspect.signature(self.func).parameters.values()
                if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]

    def call_with(self, changes):
        """(args, kwargs) of the valid call with some parameters replaced."""
        names = self.params()
        args, kwargs = list(self.args), dict(self.kwargs)
        for k, v in changes.items():
            if k in names and names.index(k) < len(args):
                args[names.index(k)] = v
            elif k.startswith("*"):   # a position of *args (one past the end appends)
                args[int(k[1:]):int(k[1:]) + 1] = [v]
            else:
                kwargs[k] = v
        return tuple(args), kwargs

    def _ndim(self):
        flat = [b for a in self.args for b in (a if isinstance(a, list) else [a])]
        first = next((a for a in flat if isinstance(a, xp.Array)), None)
        return first.ndim if first is not None else 0

    def cases(self):
        out = []

        def add(cat, what, changes, exc, arg):
            a, k = self.call_with(changes)
            out.append(Case(self.fn, cat, a, k, exc, (arg,) if isinstance(arg, str) else tuple(arg), what))
        arrays = list(self.kinds)
        bad = {p: _BAD[k] for p, k in self.kinds.items() if _BAD[k]}
        if bad:
            changes = {}
            for p in arrays:
                v = self._value(p)
                dt = bad.get(p)
                if dt is not None:
                    changes[p] = A(v.shape if isinstance(v, xp.Array) else (2,), dt)
            add("dtype", "_".join(sorted(bad.values())), changes, TypeError, tuple(bad))
        for p in arrays:
            add("non_array", p, {p: [1.0, 2.0]}, TypeError, self._argname(p))
        if self.axis:
            nd = self._ndim()
            add("axis_range", "big", {self.axis: nd + 3}, IndexError, "axis")
            add("axis_range", "negative", {self.axis: -nd - 3}, IndexError, "axis")
            add("axis_type", "float", {self.axis: 1.5}, TypeError, "axis")
        for p, k in self.min_ndim.items():
            v = self._value(p)
            dt = v.dtype if isinstance(v, xp.Array) else xp.float64
            shape = (2, 2, 2)[: k - 1]
            add("empty_0d", f"{p}_{len(shape)}d", {p: xp.ones(shape, dtype=dt)}, ValueError, p)
        for cat, what, changes, exc, arg in self.extra:
            add(cat, what, changes, exc, arg)
        return out

    def _argname(self, p):
        """A parameter's name; "*i" (a position in *args) is named after the *args parameter."""
        if not p.startswith("*"):
            return p
        import inspect
        return next(q.name for q in inspect.signature(self.func).parameters.values() if q.kind == q.VAR_POSITIONAL)

    def _value(self, p):
        a, k = self.call_with({})
        names = self.params()
        return a[names.index(p)] if p in names and names.index(p) < len(a) else k.get(p)


_GOOD = {"c": "complex128", "i": "int32", "ib": "int32", "b": "bool", "ri": "int32"}


def unary(name, kinds):
    return Row(name, (A((2, 3), _GOOD.get(kinds, "float64")),), kinds={"x": kinds})


def binary(name, kinds):
    dt = _GOOD.get(kinds, "float64")
    shapes = ("shape", "incompatible", {"x1": A((2, 3), dt), "x2": A((4,), dt)}, ValueError, ("x1", "x2"))
    return Row(name, (A((2, 3), dt), A((2, 3), dt)), kinds={"x1": kinds, "x2": kinds}, extra=[shapes])


_UNARY = dict(
    abs="n", acos="fc", acosh="fc", asin="fc", asinh="fc", atan="fc", atanh="fc", bitwise_invert="ib",
    ceil="r", conj="n", cos="fc", cosh="fc", exp="fc", expm1="fc", floor="r", imag="c", isfinite="n",
    isinf="n", isnan="n", log="fc", log1p="fc", log2="fc", log10="fc", logical_not="b", negative="n",
    positive="n", real="n", reciprocal="fc", round="n", sign="n", signbit="f", sin="fc", sinh="fc", sqrt="fc",
    square="n", tan="fc", tanh="fc", trunc="r")
_BINARY = dict(
    add="n", atan2="f", bitwise_and="ib", bitwise_or="ib", bitwise_xor="ib", bitwise_left_shift="i",
    bitwise_right_shift="i", copysign="f", divide="n", equal="any", not_equal="any", floor_divide="r",
    greater="r", greater_equal="r", less="r", less_equal="r", hypot="f", logaddexp="f", logical_and="b",
    logical_or="b", logical_xor="b", maximum="r", minimum="r", multiply="n", nextafter="f", pow="n",
    remainder="r", subtract="n")

NAN, INF = float("nan"), float("inf")
X23, X33, X3 = A((2, 3)), A((3, 3)), A((3,))
SHAPE_CASES = [("shape", "negative", (-1, 3), ValueError), ("shape", "float_entry", (2.5, 3), TypeError),
               ("shape", "not_a_shape", "ab", TypeError), ("size", "overflow", (2 ** 40, 2 ** 40), ValueError),
               ("size", "huge", (10 ** 7, 10 ** 7), MemoryError)]


def _shape_cases(p="shape"):
    return [(c, w, {p: v}, e, p) for c, w, v, e in SHAPE_CASES]


def _creation(name, *args, **kw):
    return Row(name, ((2, 3),) + args, kw, no_jit=True,
               extra=_shape_cases() + [("dtype", "string_dtype", {"dtype": "float64"}, TypeError, "dtype")])


def _like(name, *args):
    return Row(name, (X23,) + args, kinds={"x": "any"},
               extra=[("dtype", "string_dtype", {"dtype": "float64"}, TypeError, "dtype")])


def _reduction(name, kinds, **kw):
    return Row(name, (X23,), kw, kinds={"x": kinds}, axis="axis",
               extra=[("axis_range", "repeated", {"axis": (0, 0)}, ValueError, "axis"),
                      ("axis_range", "tuple_entry", {"axis": (0, 5)}, IndexError, "axis")])


def _linalg(name, kinds="fc", *args, square=True, **kw):
    extra = [("shape", "not_square", {"x": A((2, 3))}, ValueError, "x")] if square else []
    return Row("linalg." + name, (X33,) + args, kw, kinds={"x": kinds}, min_ndim={"x": 2}, extra=extra)


def _fft1(name, kinds, x=None):
    x = A((4,)) if x is None else x
    return Row("fft." + name, (x,), kinds={"x": kinds}, axis="axis", min_ndim={"x": 1}, extra=[
        ("size", "n_zero", {"n": 0}, ValueError, "n"), ("size", "n_negative", {"n": -2}, ValueError, "n"),
        ("axis_type", "n_float", {"n": 2.5}, TypeError, "n"), ("shape", "norm", {"norm": "xx"}, ValueError, "norm"),
        ("size", "n_huge", {"n": 2 ** 62}, MemoryError, "n")])


def _fftn(name, kinds, x=None):
    x = A((2, 4)) if x is None else x
    return Row("fft." + name, (x,), kinds={"x": kinds}, min_ndim={"x": 1} if name.startswith(("rfft", "irfft")) else {},
               extra=[
        ("axis_range", "axes", {"axes": (0, 5)}, IndexError, "axes"),
        ("axis_type", "axes_float", {"axes": (0, 1.5)}, TypeError, "axes"),
        ("shape", "s_axes_length", {"s": (2, 4), "axes": (0,)}, ValueError, ("s", "axes")),
        ("size", "s_negative", {"s": (2, -3)}, ValueError, "s"),
        ("size", "s_huge", {"s": (2 ** 31, 2 ** 31)}, MemoryError, "s"),
        ("shape", "norm", {"norm": "xx"}, ValueError, "norm")])


ROWS = [unary(n, k) for n, k in _UNARY.items()] + [binary(n, k) for n, k in _BINARY.items()] + [
    Row("clip", (X23,), {"min": 1.0, "max": 2.0}, kinds={"x": "r"}, extra=[
        ("non_array", "min_str", {"min": "a"}, TypeError, "min"),
        ("shape", "max_shape", {"max": A((4,))}, ValueError, "max")]),
    # creation
    Row("arange", (0, 5), no_jit=True, extra=[
        ("shape", "step_zero", {"step": 0}, ValueError, "step"), ("non_array", "start_str", {"start": "a"}, TypeError,
                                                                   "start"),
        ("nonfinite", "stop_inf", {"stop": INF}, ValueError, "stop"),
        ("nonfinite", "start_nan", {"start": NAN}, ValueError, "start"),
        ("dtype", "bool", {"dtype": xp.bool}, TypeError, "dtype"),
        ("size", "huge", {"stop": 10 ** 14}, MemoryError, "stop")]),
    Row("asarray", ([1.0, 2.0],), no_jit=True, extra=[
        ("non_array", "object", {"obj": object()}, TypeError, "obj"),
        ("non_array", "string", {"obj": "abc"}, TypeError, "obj"),
        ("shape", "ragged", {"obj": [[1.0], [1.0, 2.0]]}, ValueError, "obj"),
        ("shape", "copy_false_numpy", {"obj": np.ones(2), "copy": False}, ValueError, "copy"),
        ("dtype", "string_dtype", {"dtype": "float64"}, TypeError, "dtype")]),
    _creation("empty"), _creation("zeros"), _creation("ones"),
    Row("full", ((2, 3), 1.5), no_jit=True, extra=_shape_cases() + [
        ("non_array", "fill_str", {"fill_value": "a"}, TypeError, "fill_value"),
        ("dtype", "string_dtype", {"dtype": "float64"}, TypeError, "dtype")]),
    _like("empty_like"), _like("zeros_like"), _like("ones_like"), Row("full_like", (X23, 2.0), kinds={"x": "any"}, extra=[
        ("non_array", "fill_str", {"fill_value": "a"}, TypeError, "fill_value"),
        ("dtype", "bool_fill_half", {"x": A((2, 3), "bool"), "fill_value": 0.5}, TypeError, "fill_value"),
        ("dtype", "string_dtype", {"dtype": "float64"}, TypeError, "dtype")]),
    Row("eye", (3, 3), no_jit=True, extra=[
        ("size", "negative", {"n_rows": -1}, ValueError, "n_rows"), ("axis_type", "float", {"n_rows": 2.5}, TypeError,
                                                                      "n_rows"),
        ("size", "cols_negative", {"n_cols": -2}, ValueError, "n_cols"), ("axis_type", "k_float", {"k": 1.5}, TypeError, "k"),
        ("size", "huge", {"n_rows": 10 ** 7, "n_cols": 10 ** 7}, MemoryError, ("n_rows", "n_cols"))]),
    Row("from_dlpack", (X3,), extra=[("non_array", "object", {"x": object()}, TypeError, "x")]),
    Row("linspace", (0.0, 1.0, 5), no_jit=True, extra=[
        ("size", "num_negative", {"num": -1}, ValueError, "num"), ("axis_type", "num_float", {"num": 2.5}, TypeError, "num"),
        ("non_array", "start_str", {"start": "a"}, TypeError, "start"),
        ("size", "huge", {"num": 10 ** 14}, MemoryError, "num")]),
    Row("meshgrid", (X3, A((2,))), kinds={"*0": "any"}, extra=[
        ("shape", "indexing", {"indexing": "zz"}, ValueError, "indexing"),
        ("empty_0d", "two_d", {"*0": X23}, ValueError, "arrays")]),
    Row("tril", (X33,), kinds={"x": "any"}, min_ndim={"x": 2}, extra=[("axis_type", "k_float", {"k": 1.5}, TypeError, "k")]),
    Row("triu", (X33,), kinds={"x": "any"}, min_ndim={"x": 2}, extra=[("axis_type", "k_float", {"k": 1.5}, TypeError, "k")]),
    # data types
    Row("astype", (X23, xp.float32), kinds={"x": "any"}, extra=[
        ("dtype", "string_dtype", {"dtype": "float32"}, TypeError, "dtype"),
        ("dtype", "complex_to_real", {"x": A((2,), "complex64")}, TypeError, ("x", "dtype"))]),
    Row("can_cast", (xp.int8, xp.int16), no_jit=True, extra=[
        ("dtype", "to_string", {"to": "int16"}, TypeError, "to"), ("dtype", "from_string", {"from_": "x"}, TypeError,
                                                                    "from_")]),
    Row("finfo", (xp.float32,), no_jit=True, extra=[("dtype", "integer", {"type": xp.int8}, TypeError, "type"),
                                                    ("dtype", "string", {"type": "float32"}, TypeError, "type")]),
    Row("iinfo", (xp.int8,), no_jit=True, extra=[("dtype", "float", {"type": xp.float32}, TypeError, "type"),
                                                 ("dtype", "string", {"type": "int8"}, TypeError, "type")]),
    Row("isdtype", (xp.int8, "integral"), no_jit=True, extra=[
        ("shape", "kind_name", {"kind": "nonsense"}, ValueError, "kind"),
        ("dtype", "kind_type", {"kind": 5}, TypeError, "kind"), ("dtype", "dtype_string", {"dtype": "int8"}, TypeError,
                                                                 "dtype")]),
    Row("result_type", (xp.int8, xp.int16), no_jit=True, extra=[
        ("dtype", "no_promotion", {"*1": xp.float32, "*0": xp.bool}, TypeError,
         ("arrays_and_dtypes", "dtypes")),
        ("non_array", "string", {"*0": "int8"}, TypeError, "arrays_and_dtypes")]),
    # linear algebra (top level)
    Row("matmul", (X33, X33), kinds={"x1": "n", "x2": "n"}, min_ndim={"x1": 1, "x2": 1}, extra=[
        ("shape", "contract", {"x2": A((2, 3))}, ValueError, ("x1", "x2"))]),
    Row("matrix_transpose", (X23,), kinds={"x": "any"}, min_ndim={"x": 2}),
    Row("tensordot", (X33, X33), {"axes": 1}, kinds={"x1": "n", "x2": "n"}, extra=[
        ("size", "axes_negative", {"axes": -1}, ValueError, "axes"), ("axis_type", "axes_float", {"axes": 1.5}, TypeError,
                                                                      "axes"),
        ("shape", "contract", {"x2": A((2, 3))}, ValueError, ("x1", "x2", "axes")),
        ("axis_range", "axes_pair", {"axes": ((5,), (0,))}, IndexError, "axes")]),
    Row("vecdot", (X23, X23), kinds={"x1": "n", "x2": "n"}, axis="axis", min_ndim={"x1": 1, "x2": 1}, extra=[
        ("shape", "contract", {"x2": A((2, 4))}, ValueError, ("x1", "x2"))]),
    # manipulation
    Row("broadcast_arrays", (X23, X3), kinds={"*0": "any"}, extra=[
        ("shape", "incompatible", {"*1": A((4,))}, ValueError, "arrays")]),
    Row("broadcast_shapes", ((2, 3), (3,)), no_jit=True, extra=[
        ("shape", "incompatible", {"*1": (4,)}, ValueError, "shapes"),
        ("shape", "negative", {"*1": (-1,)}, ValueError, "shapes"),
        ("shape", "float_entry", {"*1": (2.5,)}, TypeError, "shapes")]),
    Row("broadcast_to", (X3, (2, 3)), kinds={"x": "any"}, extra=[
        ("shape", "negative", {"shape": (-1, 3)}, ValueError, "shape"),
        ("shape", "float_entry", {"shape": (2.5, 3)}, TypeError, "shape"),
        ("shape", "not_a_shape", {"shape": "ab"}, TypeError, "shape"),
        ("size", "overflow", {"shape": (2 ** 40, 2 ** 40, 3)}, ValueError, "shape"),
        ("size", "huge", {"shape": (10 ** 7, 10 ** 7, 3)}, MemoryError, "shape"),
        ("shape", "incompatible", {"shape": (2, 4)}, ValueError, "shape")]),
    Row("concat", ([X23, X23],), axis="axis", extra=[
        ("non_array", "element", {"arrays": [X23, [1.0, 2.0]]}, TypeError, "arrays"),
        ("non_array", "bare_array", {"arrays": X23}, TypeError, "arrays"),
        ("shape", "mismatch", {"arrays": [X23, A((2, 4))]}, ValueError, "arrays"),
        ("shape", "ndim", {"arrays": [X23, X3]}, ValueError, "arrays"),
        ("empty_0d", "no_arrays", {"arrays": []}, ValueError, "arrays"),
        ("empty_0d", "zero_d", {"arrays": [A(()), A(())]}, ValueError, "arrays")]),
    Row("expand_dims", (X23,), kinds={"x": "any"}, axis="axis", extra=[
        ("axis_range", "repeated", {"axis": (0, 0)}, ValueError, "axis")]),
    Row("flip", (X23,), kinds={"x": "any"}, axis="axis"),
    Row("moveaxis", (X23, 0, 1), kinds={"x": "any"}, extra=[
        ("axis_range", "source", {"source": 5}, IndexError, "source"),
        ("axis_range", "destination", {"destination": -5}, IndexError, "destination"),
        ("axis_type", "source_float", {"source": 0.5}, TypeError, "source"),
        ("shape", "lengths", {"source": (0, 1), "destination": (0,)}, ValueError, ("source", "destination"))]),
    Row("permute_dims", (X23, (1, 0)), kinds={"x": "any"}, extra=[
        ("shape", "length", {"axes": (0,)}, ValueError, "axes"), ("axis_range", "entry", {"axes": (0, 5)}, IndexError,
                                                                    "axes"),
        ("axis_type", "entry_float", {"axes": (0, 1.5)}, TypeError, "axes"),
        ("shape", "repeated", {"axes": (0, 0)}, ValueError, "axes")]),
    Row("repeat", (X23, 2), {"axis": 0}, kinds={"x": "any"}, axis="axis", extra=[
        ("size", "negative", {"repeats": -1}, ValueError, "repeats"),
        ("axis_type", "repeats_float", {"repeats": 1.5}, TypeError, "repeats"),
        ("shape", "repeats_length", {"repeats": xp.asarray([1, 2, 3])}, ValueError, "repeats"),
        ("dtype", "repeats_dtype", {"repeats": xp.asarray([1.0, 2.0])}, TypeError, "repeats"),
        ("size", "huge", {"repeats": 10 ** 12}, MemoryError, "repeats"),
        ("size", "overflow", {"repeats": 2 ** 62}, ValueError, "repeats")]),
    Row("reshape", (X23, (3, 2)), kinds={"x": "any"}, extra=[
        ("shape", "size", {"shape": (4,)}, ValueError, "shape"), ("shape", "two_unknown", {"shape": (-1, -1)}, ValueError,
                                                                   "shape"),
        ("shape", "negative", {"shape": (-2, 3)}, ValueError, "shape"),
        ("shape", "float_entry", {"shape": (2.0, 3)}, TypeError, "shape")]),
    Row("roll", (X23, 1), kinds={"x": "any"}, axis="axis", extra=[
        ("axis_type", "shift_float", {"shift": 1.5}, TypeError, "shift"),
        ("shape", "lengths", {"shift": (1, 2), "axis": (0,)}, ValueError, ("shift", "axis")),
        ("axis_range", "zero_d", {"x": xp.asarray(1.0), "axis": 0}, IndexError, "axis")]),
    Row("squeeze", (A((1, 3)), 0), kinds={"x": "any"}, axis="axis", extra=[
        ("shape", "not_one", {"axis": 1}, ValueError, "axis")]),
    Row("stack", ([X23, X23],), axis="axis", extra=[
        ("non_array", "element", {"arrays": [X23, [1.0]]}, TypeError, "arrays"),
        ("shape", "mismatch", {"arrays": [X23, X3]}, ValueError, "arrays"),
        ("empty_0d", "no_arrays", {"arrays": []}, ValueError, "arrays")]),
    Row("tile", (X23, (2, 1)), kinds={"x": "any"}, extra=[
        ("size", "negative", {"repetitions": (-1, 2)}, ValueError, "repetitions"),
        ("axis_type", "float_entry", {"repetitions": (1.5, 2)}, TypeError, "repetitions"),
        ("size", "huge", {"repetitions": (10 ** 6, 10 ** 6)}, MemoryError, "repetitions"),
        ("size", "overflow", {"repetitions": (2 ** 62, 1)}, ValueError, "repetitions")]),
    Row("unstack", (X23,), kinds={"x": "any"}, axis="axis", min_ndim={"x": 1}),
    # searching
    Row("argmax", (X23,), kinds={"x": "r"}, axis="axis", extra=[("empty_0d", "empty", {"x": A((0,))}, ValueError, "x")]),
    Row("argmin", (X23,), kinds={"x": "r"}, axis="axis", extra=[("empty_0d", "empty", {"x": A((0,))}, ValueError, "x")]),
    Row("count_nonzero", (X23,), kinds={"x": "any"}, axis="axis"),
    Row("nonzero", (X23,), kinds={"x": "any"}, min_ndim={"x": 1}),
    Row("searchsorted", (X3, X23), kinds={"x1": "r", "x2": "r"}, extra=[
        ("empty_0d", "x1_2d", {"x1": X33}, ValueError, "x1"), ("shape", "side", {"side": "middle"}, ValueError, "side"),
        ("shape", "sorter_shape", {"sorter": xp.asarray([0, 1])}, ValueError, "sorter"),
        ("dtype", "sorter_dtype", {"sorter": A((3,))}, TypeError, "sorter")]),
    Row("where", (A((2, 3), "bool"), X23, X23), kinds={"condition": "b", "x1": "any", "x2": "any"}, extra=[
        ("shape", "incompatible", {"x2": A((4,))}, ValueError, ("condition", "x1", "x2"))]),
    # sets
    Row("isin", (X23, X3), kinds={"x1": "any", "x2": "any"}),
    Row("unique_all", (X23,), kinds={"x": "any"}), Row("unique_counts", (X23,), kinds={"x": "any"}),
    Row("unique_inverse", (X23,), kinds={"x": "any"}), Row("unique_values", (X23,), kinds={"x": "any"}),
    # sorting
    Row("argsort", (X23,), kinds={"x": "r"}, axis="axis"), Row("sort", (X23,), kinds={"x": "r"}, axis="axis"),
    # statistical
    _reduction("max", "r"), _reduction("min", "r"), _reduction("mean", "fc"), _reduction("prod", "any"),
    _reduction("sum", "any"), _reduction("all", "any"), _reduction("any", "any"),
    Row("cumulative_sum", (X3,), kinds={"x": "any"}, axis="axis", extra=[
        ("shape", "axis_none_2d", {"x": X23}, ValueError, "axis")]),
    Row("cumulative_prod", (X3,), kinds={"x": "any"}, axis="axis", extra=[
        ("shape", "axis_none_2d", {"x": X23}, ValueError, "axis")]),
    Row("diff", (X23,), kinds={"x": "any"}, axis="axis", min_ndim={"x": 1}, extra=[
        ("size", "n_negative", {"n": -1}, ValueError, "n"), ("axis_type", "n_float", {"n": 1.5}, TypeError, "n"),
        ("shape", "prepend", {"prepend": A((3, 1))}, ValueError, "prepend"),
        ("non_array", "append_list", {"append": [[1.0], [2.0]]}, TypeError, "append")]),
    # indexing
    Row("take", (X23, xp.asarray([0, 1])), {"axis": 1}, kinds={"x": "any", "indices": "ri"}, axis="axis", extra=[
        ("shape", "axis_none_2d", {"axis": None}, ValueError, "axis")]),
    Row("take_along_axis", (X23, xp.asarray([[0], [1]])), kinds={"x": "any", "indices": "ri"}, axis="axis", extra=[
        ("shape", "ndim", {"indices": xp.asarray([0, 1])}, ValueError, "indices")]),
    Row("__array_namespace_info__", (), no_jit=True, extra=[("shape", "argument", {"*0": 1}, TypeError, "arguments")]),
]

# std and var share the reduction cases and add their own `correction` checks
for _n in ("std", "var"):
    ROWS.append(Row(_n, (X23,), kinds={"x": "f"}, axis="axis", extra=[
        ("axis_range", "repeated", {"axis": (0, 0)}, ValueError, "axis"),
        ("non_array", "correction_str", {"correction": "a"}, TypeError, "correction")]))

ROWS += [
    _linalg("cholesky"), _linalg("det"), _linalg("eig"), _linalg("eigh"), _linalg("eigvals"), _linalg("eigvalsh"),
    _linalg("inv"), _linalg("slogdet"), _linalg("svdvals", square=False),
    _linalg("svd", square=False), _linalg("matrix_rank", square=False),
    _linalg("pinv", square=False), _linalg("qr", "fc", square=False),
    _linalg("matrix_power", "any", 2),
    _linalg("matrix_norm", square=False),
    _linalg("diagonal", "any", square=False), _linalg("trace", "n", square=False),
    Row("linalg.solve", (X33, X3), kinds={"x1": "fc", "x2": "fc"}, min_ndim={"x1": 2, "x2": 1}, extra=[
        ("shape", "not_square", {"x1": X23}, ValueError, "x1"), ("shape", "mismatch", {"x2": A((4,))}, ValueError,
                                                                  ("x1", "x2"))]),
    Row("linalg.cross", (X23, X23), kinds={"x1": "n", "x2": "n"}, axis="axis", extra=[
        ("shape", "not_three", {"x1": A((2, 2)), "x2": A((2, 2))}, ValueError, ("x1", "x2")),
        ("shape", "incompatible", {"x2": A((4, 3))}, ValueError, ("x1", "x2"))]),
    Row("linalg.outer", (X3, X3), kinds={"x1": "n", "x2": "n"}, min_ndim={"x1": 1, "x2": 1}, extra=[
        ("shape", "two_d", {"x1": X23}, ValueError, "x1")]),
    Row("linalg.vector_norm", (X23,), kinds={"x": "fc"}, axis="axis", extra=[
        ("shape", "ord_string", {"ord": "fro"}, ValueError, "ord"),
        ("axis_range", "repeated", {"axis": (0, 0)}, ValueError, "axis")]),
    Row("linalg.matmul", (X33, X33), kinds={"x1": "n", "x2": "n"}, min_ndim={"x1": 1, "x2": 1}),
    Row("linalg.matrix_transpose", (X23,), kinds={"x": "any"}, min_ndim={"x": 2}),
    Row("linalg.tensordot", (X33, X33), {"axes": 1}, kinds={"x1": "n", "x2": "n"}, extra=[
        ("size", "axes_negative", {"axes": -1}, ValueError, "axes")]),
    Row("linalg.vecdot", (X23, X23), kinds={"x1": "n", "x2": "n"}, axis="axis"),
    _fft1("fft", "fc"), _fft1("ifft", "fc"), _fft1("rfft", "f"), _fft1("irfft", "fc"), _fft1("hfft", "fc"),
    _fft1("ihfft", "f"), _fftn("fftn", "fc"), _fftn("ifftn", "fc"), _fftn("rfftn", "f"), _fftn("irfftn", "fc"),
    Row("fft.fftfreq", (4,), no_jit=True, extra=[
        ("size", "n_huge", {"n": 2 ** 62}, MemoryError, "n"), ("size", "n_zero", {"n": 0}, ValueError, "n"), ("axis_type", "n_float", {"n": 2.5}, TypeError, "n"),
        ("non_array", "d_str", {"d": "a"}, TypeError, "d")]),
    Row("fft.rfftfreq", (4,), no_jit=True, extra=[
        ("size", "n_huge", {"n": 2 ** 62}, MemoryError, "n"), ("size", "n_zero", {"n": 0}, ValueError, "n"), ("axis_type", "n_float", {"n": 2.5}, TypeError, "n"),
        ("non_array", "d_str", {"d": "a"}, TypeError, "d")]),
    Row("fft.fftshift", (X23,), kinds={"x": "any"}, extra=[("axis_range", "axes", {"axes": (0, 5)}, IndexError, "axes"),
                                                           ("axis_type", "float", {"axes": 1.5}, TypeError, "axes"),
                                                           ("axis_range", "zero_d", {"x": xp.asarray(1.0), "axes": 0},
                                                            IndexError, "axes")]),
    Row("fft.ifftshift", (X23,), kinds={"x": "any"}, extra=[("axis_range", "axes", {"axes": 5}, IndexError, "axes"),
                                                            ("axis_range", "zero_d", {"x": xp.asarray(1.0),
                                                                                      "axes": (-1,)}, IndexError, "axes")]),
]
# linalg functions with a parameter of their own
_LINALG_EXTRA = {
    "linalg.qr": [("shape", "mode", {"mode": "xx"}, ValueError, "mode")],
    "linalg.matrix_norm": [("shape", "ord", {"ord": "xx"}, ValueError, "ord"),
                           ("nonfinite", "ord_nan", {"ord": NAN}, ValueError, "ord")],
    "linalg.matrix_power": [("axis_type", "n_float", {"n": 1.5}, TypeError, "n"),
                            ("dtype", "int_negative_power", {"x": A((3, 3), "int32"), "n": -1}, TypeError, "x")],
    "linalg.diagonal": [("axis_type", "offset_float", {"offset": 1.5}, TypeError, "offset")],
    "linalg.trace": [("axis_type", "offset_float", {"offset": 1.5}, TypeError, "offset")],
    "linalg.pinv": [("non_array", "rtol_str", {"rtol": "a"}, TypeError, "rtol")],
    "linalg.matrix_rank": [("non_array", "rtol_str", {"rtol": "a"}, TypeError, "rtol")],
}
for _r in ROWS:
    _r.extra = _r.extra + _LINALG_EXTRA.get(_r.fn, [])


def all_cases():
    return [c for r in ROWS for c in r.cases()]


def row_of(fn):
    return next(r for r in ROWS if r.fn == fn)


# ------------------------------------------------------------------------------------ running a case

def _split(tree, leaves):
    """`tree` with its Arrays replaced by their positions in `leaves` (lists, tuples and dicts walked)."""
    if isinstance(tree, xp.Array):
        leaves.append(tree)
        return _Leaf(len(leaves) - 1)
    if isinstance(tree, (list, tuple)):
        return type(tree)(_split(t, leaves) for t in tree)
    if isinstance(tree, dict):
        return {k: _split(v, leaves) for k, v in tree.items()}
    return tree


def _join(tree, leaves):
    if isinstance(tree, _Leaf):
        return leaves[tree.i]
    if isinstance(tree, (list, tuple)):
        return type(tree)(_join(t, leaves) for t in tree)
    if isinstance(tree, dict):
        return {k: _join(v, leaves) for k, v in tree.items()}
    return tree


class _Leaf:
    def __init__(self, i):
        self.i = i


def call(fn, args, kwargs, under_jit=False):
    """Call `fn` eagerly, or under transforms.jit with every Array argument traced (the rest static)."""
    if not under_jit:
        return fn(*args, **kwargs)
    leaves = []
    skeleton = _split((args, kwargs), leaves)

    def body(*arrays):
        a, k = _join(skeleton, list(arrays))
        return fn(*a, **k)
    return jit(body)(*leaves)


class _Hang(Exception):
    pass


def _alarm(signum, frame):
    raise _Hang()


OUTCOMES = ("typed-clear", "unclear", "wrong-type", "crash", "hang", "accepted")


def names_function(msg, fn):
    short = fn.rsplit(".", 1)[-1]
    return re.search(rf"(?<![\w]){re.escape(short)}(?![\w])", msg) is not None


def names_argument(msg, args):
    return any(re.search(rf"(?<![\w]){re.escape(a)}(?![\w])", msg) for a in args)


def classify(case, under_jit=False, timeout=30):
    """(outcome, exception or None). typed-clear: the expected type (or a subclass), the message naming the
    function and the argument; unclear: right type, message lacking either; wrong-type: another standard
    exception; crash: anything else (an internal error); hang: no answer within `timeout` seconds;
    accepted: no error at all."""
    fn = row_of(case.fn).func
    old = signal.signal(signal.SIGALRM, _alarm) if timeout else None
    if timeout:
        signal.alarm(timeout)
    try:
        call(fn, case.args, case.kwargs, under_jit)
        return "accepted", None
    except _Hang as e:
        return "hang", e
    except (TypeError, ValueError, IndexError, MemoryError, OverflowError) as e:
        if not isinstance(e, case.expected):
            return "wrong-type", e
        msg = str(e)
        return ("typed-clear" if names_function(msg, case.fn) and names_argument(msg, case.arg) else "unclear"), e
    except Exception as e:   # noqa: BLE001 -- sorting what escapes is the point
        return "crash", e
    finally:
        if timeout:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, old)


def survey(verbose=True):
    counts = {m: dict.fromkeys(OUTCOMES, 0) for m in ("eager", "jit")}
    mismatch = 0
    lines = []
    for case in all_cases():
        row = row_of(case.fn)
        e_out, e_exc = classify(case)
        counts["eager"][e_out] += 1
        j_out, j_exc = (e_out, e_exc) if row.no_jit else classify(case, under_jit=True)
        counts["jit"][j_out] += 1
        if type(e_exc) is not type(j_exc):
            mismatch += 1
        if e_out != "typed-clear" or j_out != "typed-clear":
            lines.append(f"{case.id:45s} want {case.expected.__name__:11s} eager {e_out:11s} "
                         f"{type(e_exc).__name__}: {str(e_exc)[:90]!r}"
                         + ("" if row.no_jit or type(e_exc) is type(j_exc) else
                            f"  | jit {j_out} {type(j_exc).__name__}: {str(j_exc)[:70]!r}"))
    if verbose:
        print("\n".join(lines))
    n = len(all_cases())
    print(f"\n{n} cases over {len(ROWS)} functions and {len(CATEGORIES)} categories")
    for mode, c in counts.items():
        print(f"{mode:5s} " + "  ".join(f"{k}={v}" for k, v in c.items()))
    print(f"eager and jit raise different types: {mismatch}")
    return counts


if __name__ == "__main__":
    survey(verbose="-q" not in sys.argv)
