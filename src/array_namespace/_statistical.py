"""Statistical and utility reductions (https://data-apis.org/array-api/latest/API_specification/statistical_functions.html)."""
from __future__ import annotations

import builtins

from transforms.core import EVAL, bind, get_aval, trace_state
from transforms.jaxpr_transforms import staged_call
from transforms.primitives import elementwise as P
from transforms.primitives import reductions as R
from transforms.primitives import structural as S

from . import _dtypes as D
from ._array import Array
from ._helpers import as_array, cast, check_kind, normalize_axes, plain, py_number, weak_scalar, wrap


def _count(shape, axes):
    n = 1
    for a in axes:
        n *= shape[a]
    return n


_KEPT: dict = {}   # (shape, axes) -> the shape with the reduced axes kept (size 1)


def _keep(v, shape, axes, keepdims):
    if not keepdims:
        return v
    key = (shape, axes)
    kept = _KEPT.get(key)
    if kept is None:
        kept = tuple(1 if i in axes else d for i, d in enumerate(shape))
        if len(_KEPT) < 1024:
            _KEPT[key] = kept
    if kept == get_aval(v).shape:   # (nothing to reshape: every reduced axis had size 1, or none was reduced)
        return v
    return bind(S.reshape_p, v, new_sizes=kept)


# sum/prod without dtype=: small integers accumulate in the default integer (unsigned in uint64)
_DEFAULT_ACC = {d: (D.DEFAULT_INT if d == D.bool_ or d in D.SIGNED else D.uint64 if d in D.UNSIGNED else d)
                for d in D.ALL}


def _acc_dtype(fname, x, dtype):
    xd = x.dtype
    if dtype is None:
        return _DEFAULT_ACC[xd]
    dtype = D.check_dtype(dtype, fname, "dtype")   # the standard: cast to `dtype`, then reduce
    if xd in D.COMPLEX and dtype not in D.COMPLEX:
        raise TypeError(f"{fname}: cannot accumulate complex {xd.name} in real {dtype.name}")
    return dtype


# Validated plans per (operand aval, axis, dtype) for the commonest calls (axis None or a Python int, dtype None or
# a namespace dtype: scipy passes dtype= to most sums): a repeated eager call skips the validation it passed before
# (an int axis: True == 1 but is refused, so a bool or another int-like type never takes a plan). Bounded: cleared
# when full.
_SUM_PLANS: dict = {}
_SUM_RANK_PLANS: dict = {}   # (ndim, x's dtype, weak, axis, dtype) -> the plan: a new shape of a known rank skips validation
_PLANS: dict = {}   # (function name, aval, axis) -> its plan (max, min, any, all)
_PLANS_MAX = 1024


def _remember(plans, key, plan):
    if len(plans) >= _PLANS_MAX:
        plans.clear()
    plans[key] = plan


def sum(x, /, *, axis=None, dtype=None, keepdims=False):
    """The sum of x's elements over the given axes.

    Parameters: x (Array): numeric or boolean. dtype (dtype or None): the accumulation and result dtype (None: x's,
        except that bool and signed integers accumulate in int64 and unsigned ones in uint64). axis (int, tuple of int
        or None): the axes reduced (None: all). keepdims (bool): keep them with size 1.
    Returns: Array: the sums (0 over an empty axis), of x's shape less the reduced axes.
    Raises: TypeError: if x is not numeric/boolean, or a complex x is given a real dtype. AxisError (an IndexError and
        a ValueError): for an axis out of range. ValueError: for a repeated axis.

    >>> xp.sum(xp.asarray([[1.0, 2.0], [3.0, 4.0]]), axis=0)
    Array([4., 6.])
    """
    if type(x) is Array and (dtype is None or type(dtype) is D.DType) and (axis is None or type(axis) is int):
        v = x._v
        a = v.aval
        plan = _SUM_PLANS.get((a, axis, dtype))
        if plan is None:   # a new shape: the plan of its rank, dtype and weak type (what the plan depends on)
            plan = _SUM_RANK_PLANS.get((len(a[0]), a[1], a[2], axis, dtype))
            if plan is not None:
                _remember(_SUM_PLANS, (a, axis, dtype), plan)
        if plan is not None:   # (validated before for this operand type and axis)
            axes, dt = plan
            out = bind(R.reduce_sum_p, v if dt is None else cast(v, dt), axes=axes)
            return wrap(_keep(out, v.aval.shape, axes, keepdims) if keepdims else out)
    x = as_array(x, "sum")
    a = x._v.aval
    xd, shape = a.dtype, a.shape
    check_kind("sum", xd, D.NUMERIC_OR_BOOL, "a numeric")
    axes = tuple(range(len(shape))) if axis is None else normalize_axes(axis, len(shape), "sum")
    dt = _DEFAULT_ACC[xd] if dtype is None else _acc_dtype("sum", x, dtype)
    if (dtype is None or type(dtype) is D.DType) and (axis is None or type(axis) is int):
        plan = (axes, None if dt == xd and not a.weak_type else dt)
        _remember(_SUM_PLANS, (a, axis, dtype), plan)
        _remember(_SUM_RANK_PLANS, (len(shape), xd, a.weak_type, axis, dtype), plan)
    out = bind(R.reduce_sum_p, cast(x._v, dt), axes=axes)
    return wrap(_keep(out, shape, axes, keepdims) if keepdims else out)


def prod(x, /, *, axis=None, dtype=None, keepdims=False):
    """The product of x's elements over the given axes.

    Parameters: x (Array): numeric or boolean. dtype (dtype or None): the accumulation and result dtype (None: x's,
        except that bool and signed integers accumulate in int64 and unsigned ones in uint64). axis (int, tuple of int
        or None): the axes reduced (None: all). keepdims (bool): keep them with size 1.
    Returns: Array: the products (1 over an empty axis), of x's shape less the reduced axes.
    Raises: TypeError: if x is not numeric/boolean, or a complex x is given a real dtype. AxisError (an IndexError and
        a ValueError): for an axis out of range. ValueError: for a repeated axis.

    >>> xp.prod(xp.asarray([[1.0, 2.0], [3.0, 4.0]]), axis=1)
    Array([ 2., 12.])
    """
    x = as_array(x, "prod")
    check_kind("prod", x.dtype, D.NUMERIC_OR_BOOL, "a numeric")
    axes = normalize_axes(axis, x.ndim, "prod")
    dt = _acc_dtype("prod", x, dtype)
    return wrap(_keep(bind(R.reduce_prod_p, cast(x._v, dt), axes=axes), x.shape, axes, keepdims))


def _planned(fname, x, axis, make):
    """(x's raw value, the plan for x and axis): kept from an earlier call on the same operand type and axis (None
    or a Python int), or made by make(x) -- which validates, raising as the function documents -- and kept."""
    if type(x) is Array and (axis is None or type(axis) is int):
        v = x._v
        key = (fname, v.aval, axis)
        plan = _PLANS.get(key)
        if plan is None:
            plan = make(x, axis)
            _remember(_PLANS, key, plan)
        return v, plan
    x = as_array(x, fname)
    return x._v, make(x, axis)


def _extreme(fname, prim):
    def make(x, axis):
        check_kind(fname, x.dtype, D.REAL_NUMERIC_OR_BOOL, "a real-valued")
        axes = normalize_axes(axis, x.ndim, fname)
        if builtins.any(x.shape[a] == 0 for a in axes):
            raise ValueError(f"{fname}: zero-size reduction of x (shape {x.shape}) has no identity")
        return axes

    def f(x, /, *, axis=None, keepdims=False):
        v, axes = _planned(fname, x, axis, make)
        # NaN propagates, as in NumPy: XLA's max/min reductions propagate it (jit, eager executables; JAX's
        # jnp.max relies on it too), and so do the host kernels (np.maximum.reduce)
        out = bind(prim, v, axes=axes)
        return wrap(_keep(out, v.aval.shape, axes, keepdims) if keepdims else out)
    f.__name__ = f.__qualname__ = fname   # (Python names a function by its qualname in a bad-call TypeError)
    return f


max = _extreme("max", R.reduce_max_p)
min = _extreme("min", R.reduce_min_p)
_EXTREME_DOC = """The {0} element of x over the given axes (NaN if one of them is NaN).

Parameters: x (Array): real-valued or boolean. axis (int, tuple of int or None): the axes reduced (None: all).
    keepdims (bool): keep them with size 1.
Returns: Array: of x's dtype, of x's shape less the reduced axes.
Raises: TypeError: if x is not real-valued or boolean. ValueError: for a reduction over an empty axis (no
    identity) or a repeated axis. AxisError (an IndexError and a ValueError): for an axis out of range.

>>> xp.{1}(xp.asarray([[1.0, 2.0], [3.0, 4.0]]), axis=1)
{2}
"""
max.__doc__ = _EXTREME_DOC.format("largest", "max", "Array([2., 4.])")
min.__doc__ = _EXTREME_DOC.format("smallest", "min", "Array([1., 3.])")


def mean(x, /, *, axis=None, keepdims=False):
    """The arithmetic mean of x's elements over the given axes.

    Parameters: x (Array): floating-point (real or complex). axis (int, tuple of int or None): the axes reduced (None:
        all). keepdims (bool): keep them with size 1.
    Returns: Array: of x's dtype (NaN over an empty axis), of x's shape less the reduced axes.
    Raises: TypeError: if x is not floating-point. AxisError (an IndexError and a ValueError): for an axis out of
        range. ValueError: for a repeated axis.

    >>> xp.mean(xp.asarray([[1.0, 2.0], [3.0, 4.0]]), axis=0)
    Array([2., 3.])
    """
    return _moment_call(x, axis, 0, keepdims, "mean")


def var(x, /, *, axis=None, correction=0.0, keepdims=False):
    """The variance of x's elements over the given axes: sum((x - mean)**2) / (N - correction).

    Parameters: x (Array): real floating-point. axis (int, tuple of int or None): the axes reduced (None: all).
        correction (int or float): subtracted from the count N (0: the population variance, 1: the sample variance).
        keepdims (bool): keep them with size 1.
    Returns: Array: of x's dtype (NaN where N - correction <= 0), of x's shape less the reduced axes.
    Raises: TypeError: if x is not real floating-point or correction not a real number. AxisError (an IndexError and a
        ValueError): for an axis out of range. ValueError: for a repeated axis.

    >>> xp.var(xp.asarray([[1.0, 2.0], [3.0, 4.0]]), axis=1, correction=1)
    Array([0.5, 0.5])
    """
    return _moment_call(x, axis, correction, keepdims, "var")


# mean/var/std keep a plan per (function, operand aval, axis, correction): the reduced axes, validated once, and,
# found at the first eager call, whether the backend runs the signature on host kernels (the CPU, up to
# host_eager.BY_OP_MAX_ELEMENTS). There `_moment_raw`'s few primitives are bound one by one: the kernels its staged
# host program would run, so the same bits, without the staged call's fixed cost (2-7 primitives: a host program
# never paid; xp.mean of 20x5 5.4 -> 3.6 us); elsewhere it runs as one staged call of `_moment_raw` per signature
# (on the CPU: one compiled fused pass). Under a transform its primitives are traced inline. A NaN correction never
# keys a plan or a staged signature (NaN != NaN).
_MOMENT_PLANS: dict = {}   # (fname, aval, axis, type(correction), correction) -> [axes, runs on host kernels or None]
# (axis: None or `plain`, an int or a tuple of ints; a bool, which == 1, never keys a plan)


def _moment_call(x, axis, correction, keepdims, fname):
    tc = type(correction)
    if type(x) is Array and (axis is None or plain(axis)) and (tc is float or tc is int) and correction == correction:
        v = x._v
        key = (fname, v.aval, axis, tc, correction)
        plan = _MOMENT_PLANS.get(key)
        if plan is None:
            plan = [_moment_axes(x, axis, correction, fname), None]
            _remember(_MOMENT_PLANS, key, plan)
    else:
        plan = [_moment_axes(x, axis, correction, fname), None]
        v, correction = as_array(x, fname)._v, py_number(correction)
    axes = plan[0]
    if trace_state.trace is EVAL and correction == correction:
        if plan[1] is None:
            from ._staged import _plain_runs_on_host   # (here: _staged imports what imports this module)
            plan[1] = _plain_runs_on_host((v.aval,))
        if plan[1]:
            out = _moment_raw(v, fname=fname, axes=axes, correction=correction)
        else:
            out = staged_call(_moment_raw, [v], fname, by_op=True, fname=fname, axes=axes, correction=correction)[0]
    else:
        out = _moment_raw(v, fname=fname, axes=axes, correction=correction)
    return wrap(_keep(out, v.aval.shape, axes, keepdims) if keepdims else out)


def _moment_axes(x, axis, correction, fname):
    """The reduced axes, once x (and for var/std the correction) are checked."""
    x = as_array(x, fname)
    if fname == "mean":
        check_kind("mean", x.dtype, D.FLOATING, "a floating-point")
        return normalize_axes(axis, x.ndim, "mean")
    check_kind(fname, x.dtype, D.REAL_FLOAT, "a real floating-point")
    c = py_number(correction)
    if c is None or isinstance(c, (bool, complex)):
        raise TypeError(f"{fname}: correction must be a real number, got {type(correction).__name__}")
    return normalize_axes(axis, x.ndim, fname)


def _moment_raw(v, *, fname, axes, correction):
    """mean, var or std of raw value v over `axes` (sorted, unique), in few primitives: the mean
    broadcasts against v without a broadcast_in_dim where the reduced axes lead (axis=None, axis=0)."""
    a = get_aval(v)
    shape, dt = a.shape, a.dtype
    n = _count(shape, axes)
    m = bind(P.div_p, bind(R.reduce_sum_p, v, axes=axes), weak_scalar(float(n) if n else float("nan"), dt))
    if fname == "mean":
        return m
    k = len(axes)
    if axes != tuple(range(k)):   # reduced axes not leading: keep them (size 1) so that m broadcasts
        m = S.reshape(m, tuple(1 if i in axes else d for i, d in enumerate(shape)))
    d = bind(P.sub_p, v, m)
    denom = n - correction
    out = bind(P.div_p, bind(R.reduce_sum_p, bind(P.mul_p, d, d), axes=axes),
               weak_scalar(float(denom) if denom > 0 else float("nan"), dt))
    return bind(P.sqrt_p, out) if fname == "std" else out


def std(x, /, *, axis=None, correction=0.0, keepdims=False):
    """The standard deviation of x's elements over the given axes: the square root of var.

    Parameters: x (Array): real floating-point. axis (int, tuple of int or None): the axes reduced (None: all).
        correction (int or float): subtracted from the count N (0: population, 1: sample). keepdims (bool): keep them
        with size 1.
    Returns: Array: of x's dtype (NaN where N - correction <= 0), of x's shape less the reduced axes.
    Raises: TypeError: if x is not real floating-point or correction not a real number. AxisError (an IndexError and a
        ValueError): for an axis out of range. ValueError: for a repeated axis.

    >>> xp.std(xp.asarray([1.0, 3.0]))
    Array(1.)
    """
    return _moment_call(x, axis, correction, keepdims, "std")


_BOOL = D.bool_.dtype


def _all_axes(x, axis):
    return normalize_axes(axis, x.ndim, "all")


def _any_axes(x, axis):
    return normalize_axes(axis, x.ndim, "any")


def all(x, /, *, axis=None, keepdims=False):
    """Whether every element of x over the given axes is true (non-zero).

    Parameters: x (Array): any dtype. axis (int, tuple of int or None): the axes reduced (None: all). keepdims (bool):
        keep them with size 1.
    Returns: Array: bool (True over an empty axis), of x's shape less the reduced axes.
    Raises: TypeError: if x is not an array or an axis not an int. AxisError (an IndexError and a ValueError): for an
        axis out of range. ValueError: for a repeated axis.

    >>> xp.all(xp.asarray([[True, False], [True, True]]), axis=1)
    Array([False,  True])
    """
    return _truth_reduce("all", x, axis, keepdims, _all_axes, R.reduce_and_p)


def _truth_reduce(fname, x, axis, keepdims, axes_of, prim):
    """all/any: x's truth values reduced by `prim` over the validated (planned) axes."""
    v, axes = _planned(fname, x, axis, axes_of)
    # (complex: true unless 0+0j, NaN parts included, as NumPy and the standard; a cast would read the real part)
    b = bind(P.ne_p, v, P.full_like_scalar(v, 0)) if get_aval(v).dtype.kind == "c" else cast(v, _BOOL)
    if not axes:   # (nothing reduced, e.g. a 0-d x: the truth values themselves)
        return wrap(b)
    out = bind(prim, b, axes=axes)
    return wrap(_keep(out, v.aval.shape, axes, keepdims) if keepdims else out)


def any(x, /, *, axis=None, keepdims=False):
    """Whether some element of x over the given axes is true (non-zero).

    Parameters: x (Array): any dtype. axis (int, tuple of int or None): the axes reduced (None: all). keepdims (bool):
        keep them with size 1.
    Returns: Array: bool (False over an empty axis), of x's shape less the reduced axes.
    Raises: TypeError: if x is not an array or an axis not an int. AxisError (an IndexError and a ValueError): for an
        axis out of range. ValueError: for a repeated axis.

    >>> xp.any(xp.asarray([0, 0, 2]))
    Array(True)
    """
    return _truth_reduce("any", x, axis, keepdims, _any_axes, R.reduce_or_p)
