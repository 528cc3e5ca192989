"""Host callbacks: NumPy-only code called from inside traced and compiled programs.

Three primitives, each carrying the user's function as a static param:

- `pure_callback`: a function of its inputs only. May be dropped when its results are unused
  (dead-code elimination) and is not differentiable (wrap it in custom_jvp / custom_vjp).
  Under vmap, `vmap_method` says how: "sequential" (one call per batch element),
  "expand_dims" (one call; unbatched inputs get a leading axis of size 1), "broadcast_all"
  (one call; unbatched inputs broadcast to the batch size); None refuses.
- `io_callback`: has effects. Never folded or eliminated (it is in `not_foldable`), run once
  per execution; `ordered=True` keeps program order between ordered callbacks (the lowering
  threads a token through them). Under vmap, an unordered one runs once per batch element,
  in order; an ordered one refuses.
- `debug_callback` (behind `debug_print`): an effect with no outputs. Under jvp/grad it prints
  the primal values; under vmap it prints once per batch element, in batch order.

Eagerly the impl rules call the function at once on NumPy arrays. Under jit, `xla` lowers the
primitives to a host custom call that calls `run_callback` with NumPy arrays when the program
runs. The engine part here imports neither `xla` nor jaxlib.
"""
from __future__ import annotations

import numpy as np

from .api_util import box, to_raw
from .batching import move_to
from .core import _SHORT, Primitive, ShapedArray, Tracer, abstract_eval_rules, bind, boxing, impl_rules, not_foldable
from .primitives import structural as S
from .primitives.elementwise import convert_element_type
from .pytree import tree_flatten, tree_unflatten
from .rules import Zero, batch_rules, jvp_rules, transpose_gaps

VMAP_METHODS = (None, "sequential", "expand_dims", "broadcast_all")


class ShapeDtypeStruct:
    """A shape and a dtype, standing for an array that does not exist yet (callback results).

    Parameters: shape (sequence of ints): the shape. dtype: a dtype (xp.float64, a NumPy dtype, ...).
    Returns: the struct (attributes shape, dtype, ndim, size).
    Raises: TypeError: for something that is not a dtype.

    >>> ShapeDtypeStruct((2,), xp.float64)
    ShapeDtypeStruct(shape=(2,), dtype=float64)
    """
    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        self.shape = tuple(int(d) for d in shape)
        self.dtype = dtype
        _np_dtype(dtype, "ShapeDtypeStruct")

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return int(np.prod(self.shape, dtype=np.int64))

    def __repr__(self):
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={_np_dtype(self.dtype, '').name})"

    def __eq__(self, other):
        return (type(other) is ShapeDtypeStruct and self.shape == other.shape
                and _np_dtype(self.dtype, "") == _np_dtype(other.dtype, ""))

    def __hash__(self):
        return hash((self.shape, _np_dtype(self.dtype, "")))


def _np_dtype(dtype, where):
    try:
        dt = np.dtype(dtype)
    except TypeError:
        dt = None
    if dt is None or dt.name not in _SHORT:
        raise TypeError(f"{where}: {dtype!r} is not an array dtype; expected one of "
                        f"{', '.join(_SHORT)}")
    return dt


class Avals:
    """The result avals of a callback: a hashable sequence that prints as `(f32[3], i64[])` in jaxprs."""
    __slots__ = ("avals",)

    def __init__(self, avals):
        self.avals = tuple(avals)

    def __iter__(self):
        return iter(self.avals)

    def __len__(self):
        return len(self.avals)

    def __getitem__(self, i):
        return self.avals[i]

    def __hash__(self):
        return hash(self.avals)

    def __eq__(self, other):
        return type(other) is Avals and self.avals == other.avals

    def __repr__(self):
        return "(" + ", ".join(a.str_short() for a in self.avals) + ("," if len(self.avals) == 1 else "") + ")"


def _result_avals(result_shape_dtypes, where):
    leaves, tree = tree_flatten(result_shape_dtypes)
    avals = []
    for i, leaf in enumerate(leaves):
        if not (hasattr(leaf, "shape") and hasattr(leaf, "dtype")):
            raise TypeError(f"{where}: result_shape_dtypes leaf {i} is a {type(leaf).__name__}; expected an "
                            "object with .shape and .dtype (transforms.ShapeDtypeStruct(shape, dtype), an array)")
        avals.append(ShapedArray(tuple(int(d) for d in leaf.shape), _np_dtype(leaf.dtype, where)))
    return Avals(avals), tree


# ----------------------------------------------------------------- the host-side functions

class Callback:
    """The user's function on flat NumPy leaves: rebuilds (args, kwargs), calls it, flattens the result.

    Static params of the primitives, so identity-hashed. `run_callback` checks the outputs.
    """
    __slots__ = ("fun", "kind", "in_tree", "out_tree")

    def __init__(self, fun, kind, in_tree, out_tree):
        self.fun, self.kind, self.in_tree, self.out_tree = fun, kind, in_tree, out_tree

    @property
    def __name__(self):
        return getattr(self.fun, "__name__", type(self.fun).__name__)

    def describe(self):
        return f"{self.kind}({self.__name__})"

    def __call__(self, *leaves):
        if self.in_tree is None:   # the function takes the flat leaves
            out = self.fun(*leaves)
        else:
            args, kwargs = tree_unflatten(self.in_tree, list(leaves))
            out = self.fun(*args, **kwargs)
        if self.out_tree is None:
            return []
        out_leaves, tree = tree_flatten(out)
        if len(out_leaves) != self.out_tree.num_leaves:
            raise TypeError(f"{self.describe()} returned {len(out_leaves)} arrays (structure {tree}), but "
                            f"result_shape_dtypes declares {self.out_tree.num_leaves} (structure {self.out_tree})")
        return out_leaves

    def __repr__(self):
        return self.describe()


class Looped:
    """Runs an inner callback once per element of a batch (axis 0 of the batched inputs), in order,
    and stacks the results: vmap's "sequential" method."""
    __slots__ = ("inner", "inner_avals", "batched", "axis_size")

    def __init__(self, inner, inner_avals, batched, axis_size):
        self.inner, self.inner_avals, self.batched, self.axis_size = inner, inner_avals, batched, axis_size

    @property
    def __name__(self):
        return self.inner.__name__

    def describe(self):
        return self.inner.describe()

    def __call__(self, *arrays):
        per = [run_callback(self.inner, self.inner_avals, [a[i] if b else a for a, b in zip(arrays, self.batched)])
               for i in range(self.axis_size)]
        if not per:
            return [np.zeros((0,) + a.shape, a.dtype) for a in self.inner_avals]
        return [np.stack([p[k] for p in per]) for k in range(len(self.inner_avals))]

    def __repr__(self):
        return f"sequential({self.inner!r})"


def run_callback(callback, result_avals, arrays):
    """Call `callback` on NumPy arrays; its outputs as C-contiguous NumPy arrays of `result_avals`.

    A wrong number, shape or dtype of outputs raises, naming the callback and the output.
    """
    outs = callback(*arrays)
    if len(outs) != len(result_avals):
        raise TypeError(f"{callback.describe()} returned {len(outs)} outputs, expected {len(result_avals)}")
    res = []
    for i, (o, aval) in enumerate(zip(outs, result_avals)):
        a = np.asarray(o)
        if a.shape != aval.shape:
            raise ValueError(f"{callback.describe()}: output {i} has shape {a.shape}, but result_shape_dtypes "
                             f"declares shape {aval.shape} ({aval.str_short()})")
        if a.dtype != aval.dtype:
            raise TypeError(f"{callback.describe()}: output {i} has dtype {a.dtype.name}, but result_shape_dtypes "
                            f"declares dtype {aval.dtype.name} ({aval.str_short()}); convert it in the callback, "
                            f"e.g. np.asarray(out, dtype=np.{aval.dtype.name})")
        res.append(a if a.flags.c_contiguous else a.copy(order="C"))
    return res


def _host(v):
    """A concrete raw value (device buffer, Python or NumPy scalar) as a NumPy array."""
    return np.asarray(box(v)) if type(v) is boxing.buffer_type else np.asarray(v)


def _eager(callback, result_avals, args):
    outs = run_callback(callback, result_avals, [_host(a) for a in args])
    return [convert_element_type(o, a.dtype) for o, a in zip(outs, result_avals)]


def _no_derivative(callback, how):
    raise NotImplementedError(
        f"cannot differentiate {callback.describe()}: a host callback runs opaque NumPy code and has no "
        f"derivative. {how}")


_WRAP = ("Wrap the function that calls it in transforms.custom_jvp (give the derivative with @f.defjvp, "
         "computed by another pure_callback or by xp code) or in transforms.custom_vjp.")


def _batched_avals(avals, n):
    return Avals(a.update(shape=(n,) + a.shape) for a in avals)


def _to_front(vals, dims):
    return [v if d is None else S.moveaxis(v, d, 0) for v, d in zip(vals, dims)]


# --------------------------------------------------------------------------- pure_callback
pure_callback_p = Primitive("pure_callback", multiple_results=True)
abstract_eval_rules[pure_callback_p] = lambda *avals, callback, result_avals, vmap_method: list(result_avals)
impl_rules[pure_callback_p] = lambda *args, callback, result_avals, vmap_method: _eager(callback, result_avals, args)


def _pure_jvp(primals, tangents, *, callback, result_avals, vmap_method):
    if any(a.dtype.kind in "fc" for a in result_avals):
        _no_derivative(callback, _WRAP)
    # integer / boolean results only: piecewise constant, their tangent is zero
    outs = bind(pure_callback_p, *primals, callback=callback, result_avals=result_avals, vmap_method=vmap_method)
    return outs, [Zero] * len(outs)


def _pure_batch(axis_size, vals, dims, *, callback, result_avals, vmap_method):
    if vmap_method is None:
        raise NotImplementedError(
            f"cannot vmap {callback.describe()}: it was called with vmap_method=None. Pass "
            "vmap_method='sequential' (call it once per batch element), 'expand_dims' (call it once with "
            "batched inputs, unbatched ones given a leading axis of size 1) or 'broadcast_all' (call it once "
            "with every input broadcast to the batch size) to pure_callback.")
    out_avals = _batched_avals(result_avals, axis_size)
    if vmap_method == "sequential":
        vals = _to_front(vals, dims)
        callback = Looped(callback, result_avals, tuple(d is not None for d in dims), axis_size)
    elif vmap_method == "expand_dims":
        vals = [S.moveaxis(v, d, 0) if d is not None else S.reshape(v, (1,) + _shape(v)) for v, d in zip(vals, dims)]
    else:   # broadcast_all
        vals = [move_to(v, d, 0, axis_size) for v, d in zip(vals, dims)]
    outs = bind(pure_callback_p, *vals, callback=callback, result_avals=out_avals, vmap_method=vmap_method)
    return outs, [0] * len(outs)


def _shape(v):
    from .core import get_aval
    return tuple(get_aval(v).shape)


jvp_rules[pure_callback_p] = _pure_jvp
batch_rules[pure_callback_p] = _pure_batch
transpose_gaps[pure_callback_p] = ("a host callback is opaque NumPy code, not a linear primitive; give a derivative "
                                   "with transforms.custom_vjp")


def pure_callback(callback, result_shape_dtypes, *args, vmap_method=None, **kwargs):
    """Call the NumPy function `callback(*args, **kwargs)` from array code, also under jit and vmap.

    `result_shape_dtypes` is a pytree of objects with .shape and .dtype (ShapeDtypeStruct, arrays)
    describing the outputs, which `callback` must match exactly. The callback receives NumPy
    arrays and must be pure: it may be skipped when its results are unused, or called more than
    once. It has no derivative (wrap it in custom_jvp/custom_vjp); under vmap, `vmap_method`
    ("sequential", "expand_dims", "broadcast_all") says how to call it.

    Parameters: callback (callable): NumPy in, NumPy out, no side effects. result_shape_dtypes: a
        pytree of ShapeDtypeStructs (or arrays) describing the outputs. args, kwargs: arrays and values
        passed to callback. vmap_method (str or None): how vmap calls it ("sequential",
        "expand_dims", "broadcast_all"; None: vmap raises).
    Returns: the callback's outputs, as arrays.
    Raises: TypeError/ValueError: if the callback's outputs do not match result_shape_dtypes.

    >>> jit(lambda a: pure_callback(np.cumsum, ShapeDtypeStruct((2,), xp.float64), a))(xp.asarray([1.0, 2.0]))
    Array([1., 3.])
    """
    raw, cb, avals, out_tree = _prepare("pure_callback", callback, result_shape_dtypes, args, kwargs)
    if vmap_method not in VMAP_METHODS:
        raise ValueError(f"pure_callback({getattr(callback, '__name__', type(callback).__name__)}): vmap_method "
                         f"must be one of {VMAP_METHODS}, got {vmap_method!r}")
    outs = bind(pure_callback_p, *raw, callback=cb, result_avals=avals, vmap_method=vmap_method)
    return tree_unflatten(out_tree, [box(o) for o in outs])


def _prepare(kind, callback, result_shape_dtypes, args, kwargs):
    """What pure_callback and io_callback both bind: raw arguments, the Callback, result avals, out tree."""
    if not callable(callback):
        raise TypeError(f"{kind}: callback must be callable, got {type(callback).__name__}")
    where = f"{kind}({getattr(callback, '__name__', type(callback).__name__)})"
    avals, out_tree = _result_avals(result_shape_dtypes, where)
    leaves, in_tree = tree_flatten((tuple(args), kwargs))
    raw = [to_raw(x, f"{where} argument") for x in leaves]
    return raw, Callback(callback, kind, in_tree, out_tree), avals, out_tree


# ----------------------------------------------------------------------------- io_callback
io_callback_p = Primitive("io_callback", multiple_results=True)
abstract_eval_rules[io_callback_p] = lambda *avals, callback, result_avals, ordered: list(result_avals)
impl_rules[io_callback_p] = lambda *args, callback, result_avals, ordered: _eager(callback, result_avals, args)
not_foldable.add(io_callback_p)


def _io_jvp(primals, tangents, *, callback, result_avals, ordered):
    _no_derivative(callback, "An io_callback has effects and cannot be differentiated; compute its inputs "
                             "under transforms.stop_gradient, or use pure_callback inside transforms.custom_jvp "
                             "for a differentiable host function.")


def _io_batch(axis_size, vals, dims, *, callback, result_avals, ordered):
    if ordered:
        raise NotImplementedError(
            f"cannot vmap {callback.describe()} with ordered=True: the order of its effects over the batch is "
            "not defined. Use ordered=False (then it runs once per batch element, in batch order) or call it "
            "in a Python loop.")
    looped = Looped(callback, result_avals, tuple(d is not None for d in dims), axis_size)
    outs = bind(io_callback_p, *_to_front(vals, dims), callback=looped,
                result_avals=_batched_avals(result_avals, axis_size), ordered=False)
    return outs, [0] * len(outs)


jvp_rules[io_callback_p] = _io_jvp
batch_rules[io_callback_p] = _io_batch


def io_callback(callback, result_shape_dtypes, *args, ordered=False, **kwargs):
    """Call `callback(*args, **kwargs)` for its effects (and results), once per execution.

    Never removed as dead code or folded at trace time. With `ordered=True`, ordered callbacks
    of one program run in program order. Results must match `result_shape_dtypes` (a pytree of
    objects with .shape and .dtype, or None for no results). No derivative; under vmap an
    unordered io_callback runs once per batch element in order, an ordered one raises.

    Parameters: callback (callable): called for its effects. result_shape_dtypes: a pytree of
        ShapeDtypeStructs, or None for no results. args, kwargs: passed to callback. ordered (bool): run
        in program order with other ordered callbacks.
    Returns: the callback's outputs, as arrays (None for none).
    Raises: TypeError/ValueError: if the callback's outputs do not match result_shape_dtypes.

    >>> seen = []
    >>> io_callback(lambda a: seen.append(float(a[0])), None, xp.asarray([1.0, 2.0]))
    >>> seen
    [1.0]
    """
    raw, cb, avals, out_tree = _prepare("io_callback", callback, result_shape_dtypes, args, kwargs)
    outs = bind(io_callback_p, *raw, callback=cb, result_avals=avals, ordered=bool(ordered))
    return tree_unflatten(out_tree, [box(o) for o in outs])


# ------------------------------------------------------------------- debug_callback / print
debug_callback_p = Primitive("debug_callback", multiple_results=True)
abstract_eval_rules[debug_callback_p] = lambda *avals, callback, ordered: []
not_foldable.add(debug_callback_p)


def _debug_impl(*args, callback, ordered):
    callback(*[_host(a) for a in args])
    return []


def _debug_jvp(primals, tangents, *, callback, ordered):
    bind(debug_callback_p, *primals, callback=callback, ordered=ordered)
    return [], []


def _debug_batch(axis_size, vals, dims, *, callback, ordered):
    looped = Looped(callback, Avals(()), tuple(d is not None for d in dims), axis_size)
    bind(debug_callback_p, *_to_front(vals, dims), callback=looped, ordered=ordered)
    return [], []


impl_rules[debug_callback_p] = _debug_impl
jvp_rules[debug_callback_p] = _debug_jvp
batch_rules[debug_callback_p] = _debug_batch


class _Printer:
    """Formats and prints: dynamic leaves arrive as NumPy arrays, static ones are kept here."""
    __slots__ = ("fmt", "tree", "static", "dynamic")

    def __init__(self, fmt, tree, static, dynamic):
        self.fmt, self.tree, self.static, self.dynamic = fmt, tree, static, dynamic

    @property
    def __name__(self):
        return repr(self.fmt)

    def __call__(self, *arrays):
        it, st = iter(arrays), iter(self.static)
        args, kwargs = tree_unflatten(self.tree, [next(it) if d else next(st) for d in self.dynamic])
        print(self.fmt.format(*args, **kwargs), flush=True)
        return []


class _Blank:
    """Stands for any value while a format string is checked before tracing goes on."""

    def __format__(self, spec):
        return ""

    def __getattr__(self, name):
        return self

    def __getitem__(self, key):
        return self


def _is_dynamic(x):
    return type(x) is boxing.box_type or isinstance(x, (Tracer, np.ndarray, np.generic)) or \
        type(x) is boxing.buffer_type


def debug_print(fmt, *args, ordered=False, **kwargs):
    """Print `fmt.format(*args, **kwargs)` with the run-time values of array arguments.

    Eagerly it prints at once; under jit, each time the compiled program runs (not while tracing);
    under jvp/grad it prints the primal values; under vmap it prints once per batch element, in
    batch order, each line showing that element's values. Never removed as dead code. Returns None.
    Within one compiled program, unordered prints (the default) may run in any order relative to
    other callbacks; `ordered=True` keeps program order among ordered prints and io_callbacks.

    Parameters: fmt (str): a str.format string. args, kwargs: arrays (printed with their values) and
        other values. ordered (bool): keep program order with other ordered effects.
    Returns: None.
    Raises: nothing at trace time; a bad format string raises when it prints.

    >>> jit(lambda a: debug_print("a = {}", a))(xp.asarray([1.0, 2.0]))
    a = [1. 2.]
    """
    if not isinstance(fmt, str):
        raise TypeError(f"debug_print: fmt must be a str, got {type(fmt).__name__}")
    leaves, tree = tree_flatten((tuple(args), kwargs))
    try:
        fmt.format(*[_Blank()] * len(args), **{k: _Blank() for k in kwargs})
    except (IndexError, KeyError, ValueError) as e:
        raise ValueError(f"debug_print: format string {fmt!r} does not fit the arguments given "
                         f"({len(args)} positional, keywords {sorted(kwargs)}): {e!r}") from None
    dynamic = tuple(_is_dynamic(x) for x in leaves)
    static = tuple(x for x, d in zip(leaves, dynamic) if not d)
    raw = [to_raw(x, "debug_print argument") for x, d in zip(leaves, dynamic) if d]
    printer = _Printer(fmt, tree, static, dynamic)
    cb = Callback(printer, "debug_print", None, None)
    bind(debug_callback_p, *raw, callback=cb, ordered=bool(ordered))
    return None
