"""Statistical and utility reductions (https://data-apis.org/array-api/latest/API_specification/statistical_functions.html)."""
from __future__ import annotations

import builtins

from transforms.core import bind
from transforms.primitives import elementwise as P
from transforms.primitives import reductions as R
from transforms.primitives import structural as S

from . import _dtypes as D
from ._helpers import as_array, cast, check_kind, normalize_axes, py_number, weak_scalar, wrap


def _count(shape, axes):
    n = 1
    for a in axes:
        n *= shape[a]
    return n


def _keep(v, shape, axes, keepdims):
    if not keepdims:
        return v
    return S.reshape(v, tuple(1 if i in axes else d for i, d in enumerate(shape)))


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


def sum(x, /, *, axis=None, dtype=None, keepdims=False):
    x = as_array(x, "sum")
    check_kind("sum", x.dtype, D.NUMERIC_OR_BOOL, "a numeric")
    axes = normalize_axes(axis, x.ndim, "sum")
    dt = _acc_dtype("sum", x, dtype)
    return wrap(_keep(R.reduce_sum(cast(x._v, dt), axes), x.shape, axes, keepdims))


def prod(x, /, *, axis=None, dtype=None, keepdims=False):
    x = as_array(x, "prod")
    check_kind("prod", x.dtype, D.NUMERIC_OR_BOOL, "a numeric")
    axes = normalize_axes(axis, x.ndim, "prod")
    dt = _acc_dtype("prod", x, dtype)
    return wrap(_keep(bind(R.reduce_prod_p, cast(x._v, dt), axes=axes), x.shape, axes, keepdims))


def _extreme(fname, prim):
    def f(x, /, *, axis=None, keepdims=False):
        x = as_array(x, fname)
        check_kind(fname, x.dtype, D.REAL_NUMERIC_OR_BOOL, "a real-valued")
        axes = normalize_axes(axis, x.ndim, fname)
        if builtins.any(x.shape[a] == 0 for a in axes):
            raise ValueError(f"{fname}: zero-size reduction of x (shape {x.shape}) has no identity")
        v = bind(prim, x._v, axes=axes)
        if x.dtype in D.REAL_FLOAT:   # NaN propagates, as in NumPy
            has_nan = bind(R.reduce_or_p, bind(P.ne_p, x._v, x._v), axes=axes)
            v = P.select_n(has_nan, v, weak_scalar(float("nan"), x.dtype))
        return wrap(_keep(v, x.shape, axes, keepdims))
    f.__name__ = fname
    return f


max = _extreme("max", R.reduce_max_p)
min = _extreme("min", R.reduce_min_p)


def mean(x, /, *, axis=None, keepdims=False):
    x = as_array(x, "mean")
    check_kind("mean", x.dtype, D.FLOATING, "a floating-point")
    axes = normalize_axes(axis, x.ndim, "mean")
    n = _count(x.shape, axes)
    s = R.reduce_sum(x._v, axes)
    return wrap(_keep(bind(P.div_p, s, weak_scalar(float(n) if n else float("nan"), x.dtype)), x.shape, axes, keepdims))


def var(x, /, *, axis=None, correction=0.0, keepdims=False):
    return _var(x, axis, correction, keepdims, "var")


def _var(x, axis, correction, keepdims, fname):
    x = as_array(x, fname)
    check_kind(fname, x.dtype, D.REAL_FLOAT, "a real floating-point")
    c = py_number(correction)
    if c is None or isinstance(c, (bool, complex)):
        raise TypeError(f"{fname}: correction must be a real number, got {type(correction).__name__}")
    correction = c
    axes = normalize_axes(axis, x.ndim, fname)
    n = _count(x.shape, axes)
    m = bind(P.div_p, R.reduce_sum(x._v, axes), weak_scalar(float(n) if n else float("nan"), x.dtype))
    kept = tuple(i for i in range(x.ndim) if i not in axes)
    d = bind(P.sub_p, x._v, S.broadcast_in_dim(m, x.shape, kept))
    ss = R.reduce_sum(bind(P.mul_p, d, d), axes)
    denom = n - correction
    out = bind(P.div_p, ss, weak_scalar(float(denom) if denom > 0 else float("nan"), x.dtype))
    return wrap(_keep(out, x.shape, axes, keepdims))


def std(x, /, *, axis=None, correction=0.0, keepdims=False):
    v = _var(x, axis, correction, keepdims, "std")
    return wrap(bind(P.sqrt_p, v._v))


def all(x, /, *, axis=None, keepdims=False):
    x = as_array(x, "all")
    axes = normalize_axes(axis, x.ndim, "all")
    b = cast(x._v, D.bool_)
    return wrap(_keep(bind(R.reduce_and_p, b, axes=axes), x.shape, axes, keepdims))


def any(x, /, *, axis=None, keepdims=False):
    x = as_array(x, "any")
    axes = normalize_axes(axis, x.ndim, "any")
    b = cast(x._v, D.bool_)
    return wrap(_keep(bind(R.reduce_or_p, b, axes=axes), x.shape, axes, keepdims))
