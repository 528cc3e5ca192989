"""The `linalg` extension of the Array API standard (https://data-apis.org/array-api/latest/extensions/linear_algebra_functions.html).

Every function works on the trailing matrix (or vector) axes and is batched over the
leading ones. Decompositions bind the LAPACK-family primitives
(transforms/primitives/lapack.py); everything else is composed from the core primitives,
so all of it traces under jit, vmap and (where the math has a derivative) grad.

Inputs of cholesky and eigh are symmetrised, (A + A^H) / 2, before factorising: the result
then is a function of the whole matrix, and its derivative is the textbook one.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from transforms.core import bind
from transforms.custom_derivatives import custom_jvp
from transforms.primitives import elementwise as P
from transforms.primitives import lapack as LP
from transforms.primitives import reductions as R
from transforms.primitives import structural as S

from . import _dtypes as D
from ._staged import compiled
from ._array import Array
from ._helpers import as_array, as_int, axis_error, cast, check_broadcast, check_kind, normalize_axes, py_number, wrap
from ._linear_algebra import matmul, matrix_transpose, tensordot, vecdot

__all__ = ["cholesky", "cross", "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh", "inv", "matmul",
           "matrix_norm", "matrix_power", "matrix_rank", "matrix_transpose", "outer", "pinv", "qr", "slogdet",
           "solve", "svd", "svdvals", "tensordot", "trace", "vecdot", "vector_norm"]


class EighResult(NamedTuple):
    eigenvalues: object
    eigenvectors: object


class EigResult(NamedTuple):
    eigenvalues: object
    eigenvectors: object


class QRResult(NamedTuple):
    Q: object
    R: object


class SlogdetResult(NamedTuple):
    sign: object
    logabsdet: object


class SVDResult(NamedTuple):
    U: object
    S: object
    Vh: object


# --------------------------------------------------------------------------- validation

def _matrix(fname, x, *, square=True, kinds=D.FLOATING, what="a floating-point"):
    x = as_array(x, fname)
    check_kind(fname, x.dtype, kinds, what)
    if x.ndim < 2:
        raise ValueError(f"{fname}: x must have at least 2 dimensions (..., M, N), got shape {x.shape}")
    if square and x.shape[-1] != x.shape[-2]:
        raise ValueError(f"{fname}: x must be a stack of square matrices (..., M, M), got shape {x.shape}")
    return x


def _strong(x):
    """The raw value of x as a strongly typed array (weak scalars become their dtype)."""
    return cast(x._v, x.dtype)


def _c(v, value):
    return P.full_like_scalar(v, value)


def _symmetrize(v):
    """(v + v^H) / 2, halved first: the sum of two entries past half the largest float overflowed (issue 24)."""
    h = P.mul(v, _c(v, 0.5))
    return P.add(h, LP.mH(h))


def _broadcast_batch(a, b):
    """Broadcast the batch (leading) dims of two matrix stacks against each other."""
    sa, sb = S.shape_of(a), S.shape_of(b)
    batch = P.broadcast_shapes(sa[:-2], sb[:-2])
    return S.broadcast_to_shape(a, batch + sa[-2:]), S.broadcast_to_shape(b, batch + sb[-2:])


def _eye_like(v):
    shp = S.shape_of(v)
    return S.broadcast_to_shape(LP.eye(shp[-1], S.dtype_of(v)), shp)


# -------------------------------------------------------------------------- decompositions

@compiled
def cholesky(x, /, *, upper=False):
    """L with x = L L^H (or U with x = U^H U when upper=True); x Hermitian positive-definite."""
    x = _matrix("cholesky", x)
    lo = LP.cholesky(_symmetrize(_strong(x)))
    return wrap(LP.mH(lo) if upper else lo)


@compiled
def eigh(x, /):
    """Eigenvalues (ascending, real) and orthonormal eigenvectors of Hermitian matrices."""
    x = _matrix("eigh", x)
    w, v = LP.eigh(_symmetrize(_strong(x)))
    return EighResult(wrap(w), wrap(v))


@compiled
def eigvalsh(x, /):
    x = _matrix("eigvalsh", x)
    w, _ = LP.eigh(_symmetrize(_strong(x)))
    return wrap(w)


@compiled
def eig(x, /):
    """Eigenvalues and right eigenvectors of general square matrices (always complex)."""
    x = _matrix("eig", x)
    w, v = LP.eig(_strong(x))
    return EigResult(wrap(w), wrap(v))


@compiled
def eigvals(x, /):
    x = _matrix("eigvals", x)
    w, _ = LP.eig(_strong(x))
    return wrap(w)


@compiled
def qr(x, /, *, mode="reduced"):
    if mode not in ("reduced", "complete"):
        raise ValueError(f"qr: mode must be 'reduced' or 'complete', got {mode!r}")
    x = _matrix("qr", x, square=False)
    q, r = LP.qr(_strong(x), full_matrices=(mode == "complete"))
    return QRResult(wrap(q), wrap(r))


@compiled
def svd(x, /, *, full_matrices=True):
    x = _matrix("svd", x, square=False)
    s, u, vh = LP.svd(_strong(x), full_matrices=bool(full_matrices), compute_uv=True)
    return SVDResult(wrap(u), wrap(s), wrap(vh))


@compiled
def svdvals(x, /):
    x = _matrix("svdvals", x, square=False)
    (s,) = LP.svd(_strong(x), full_matrices=False, compute_uv=False)
    return wrap(s)


# ------------------------------------------------------------------- LU-based functions

def _parity_sign(piv, dtype):
    """(-1) ** (number of row swaps) for LAPACK-style 0-based pivots."""
    k = S.shape_of(piv)[-1]
    swapped = bind(P.ne_p, piv, S.iota(np.int32, (k,), 0))
    n = R.reduce_sum(P.convert_element_type(swapped, np.int32), (len(S.shape_of(piv)) - 1,))
    odd = bind(P.and_p, n, P.convert_element_type(1, np.int32, True))   # (n >= 0: its last bit)
    return P.sub(P.convert_element_type(1, dtype, True), P.mul(P.convert_element_type(odd, dtype), _c_dt(dtype, 2)))


def _c_dt(dtype, value):
    return P.convert_element_type(value, dtype, True)


@compiled
def solve(x1, x2, /):
    """x with x1 @ x = x2; x2 of shape (M,) is a single vector, else (..., M, K)."""
    x1 = as_array(x1, "solve", "x1")
    x2 = as_array(x2, "solve", "x2")
    dt = D.promote(x1.dtype, x2.dtype, "solve")
    check_kind("solve", dt, D.FLOATING, "floating-point", "x1 and x2")
    if x1.ndim < 2 or x1.shape[-1] != x1.shape[-2]:
        raise ValueError(f"solve: x1 must be a stack of square matrices (..., M, M), got shape {x1.shape}")
    m = x1.shape[-1]
    a, b = cast(x1._v, dt), cast(x2._v, dt)
    vector = x2.ndim == 1
    if vector:
        if x2.shape[0] != m:
            raise ValueError(f"solve: x2 of shape {x2.shape} does not match x1 of shape {x1.shape}")
        b = S.reshape(b, (m, 1))
    elif x2.ndim < 2 or x2.shape[-2] != m:
        raise ValueError(f"solve: x2 must have shape (M,) or (..., M, K) with M = {m}, got {x2.shape}")
    try:
        a, b = _broadcast_batch(a, b)
    except ValueError:
        raise ValueError(f"solve: batch dimensions of x1 {x1.shape} and x2 {x2.shape} do not broadcast") from None
    out = LP.solve(a, b)
    if vector:
        out = S.reshape(out, S.shape_of(out)[:-1])
    return wrap(out)


@compiled
def inv(x, /):
    x = _matrix("inv", x)
    a = _strong(x)
    return wrap(LP.solve(a, _eye_like(a)))   # (NumPy's inv is this gesv too)


@compiled
def det(x, /):
    x = _matrix("det", x)
    if x.shape[-1] == 0:
        return wrap(S.full(x.shape[:-2], 1, x.dtype))
    return _det(wrap(_strong(x)))


@custom_jvp
def _det(a):
    """det of a non-empty stack of square matrices (an Array); its derivative is tr(adj(a) da) (`_adjugate`)."""
    lu, piv, _ = LP.lu(a._v)
    return wrap(_det_of_lu(lu, piv, a.dtype))


@_det.defjvp
def _det_jvp(primals, tangents):
    (a,), (ta,) = primals, tangents
    lu, piv, perm = LP.lu(a._v)
    adj = _adjugate(lu, piv, perm)
    n = len(S.shape_of(adj)) - 2
    return wrap(_det_of_lu(lu, piv, a.dtype)), wrap(R.reduce_sum(P.mul(LP.mT(adj), ta._v), (n, n + 1)))


def _adjugate(lu, piv, perm):
    """adj(a) = det(a) inv(a) from a's LU (a[perm] = L U: adj(a) = sign adj(U) L^-1 I[perm]), right also where a
    is singular with one zero pivot, where the LU's own derivative gave det(a) inv(a) = 0 * inf: NaN. With u_kk the
    smallest pivot and V the U with u_kk replaced by r = max |u_ii| (1 where all are 0), Sherman-Morrison gives
    adj(U) = D (u_kk V^-1 - (u_kk - r) r x y), D = prod_{i != k} u_ii, x = V^-1 e_k, y = e_k^T V^-1; |u_kk| <= r,
    so nothing cancels. Two zero pivots leave V singular: NaN (adj(a) is then 0 or not by a's rank, which the LU
    does not tell). Second derivatives at a singular a still go through the LU's derivative: NaN."""
    d = LP.diagonal(lu)
    shp, dt = S.shape_of(lu), S.dtype_of(lu)
    last = len(shp) - 2
    ad = bind(P.abs_p, d)
    k = bind(R.argmin_p, ad, axes=(last,), index_dtype=np.dtype(np.int32))
    lead = tuple(range(last))
    e = bind(P.eq_p, S.iota(np.int32, S.shape_of(d), last), S.broadcast_in_dim(k, S.shape_of(d), lead))   # (i == k)
    r = bind(R.reduce_max_p, ad, axes=(last,))
    r = P.convert_element_type(P.select_n(bind(P.eq_p, r, _c(r, 0)), r, _c(r, 1)), dt)
    on_k = bind(P.and_p, bind(P.eq_p, S.iota(np.int32, shp, last), S.iota(np.int32, shp, last + 1)),
                S.broadcast_in_dim(e, shp, lead + (last + 1,)))
    v = P.select_n(on_k, lu, S.broadcast_in_dim(r, shp, lead))
    rows = S.broadcast_in_dim(perm, shp, lead + (last,))
    pm = P.convert_element_type(bind(P.eq_p, rows, S.iota(S.dtype_of(perm), shp, last + 1)), dt)   # P = I[perm]
    w = LP.triangular_solve(v, LP.triangular_solve(lu, pm, lower=True, unit_diagonal=True), lower=False)
    ek = P.convert_element_type(e, dt)
    x = LP.triangular_solve(v, S.broadcast_in_dim(ek, shp[:-1] + (1,), lead + (last,)), lower=False)  # (..., n, 1)
    yw = R.reduce_sum(P.mul(S.broadcast_in_dim(ek, shp, lead + (last,)), w), (last,))               # e_k^T W
    ukk = R.reduce_sum(P.mul(ek, d), (last,))
    dk = bind(R.reduce_prod_p, P.select_n(e, d, _c(d, 1)), axes=(last,))                            # D
    outer = P.mul(S.broadcast_in_dim(x, shp, lead + (last, last + 1)), S.broadcast_in_dim(yw, shp, lead + (last + 1,)))
    sc = lambda s: S.broadcast_in_dim(s, shp, lead)   # noqa: E731
    adj_u = P.sub(P.mul(sc(ukk), w), P.mul(sc(P.mul(P.sub(ukk, r), r)), outer))
    return P.mul(adj_u, sc(P.mul(dk, _parity_sign(piv, dt))))


def _det_of_lu(lu, piv, dtype):
    """det from a's LU factors (the product of U's diagonal, the permutation's sign)."""
    d = LP.diagonal(lu)
    last = (len(S.shape_of(d)) - 1,)
    sign = _parity_sign(piv, dtype)
    det = P.mul(bind(R.reduce_prod_p, d, axes=last), sign)
    # Where a partial product of the LU diagonal left the range (a determinant 1e300 * 1e300 * 1e-300 was inf, one
    # past the range NaN in complex arithmetic: inf - inf), NumPy's formula, sign * exp(log|det|): its value, an
    # infinity in the determinant's direction or 0. Elsewhere the product, which rounds less (5, NumPy 4.999...).
    unit, logabs = _unit_logabs(d, last) if dtype in D.COMPLEX else (
        bind(P.sign_p, d), R.reduce_sum(bind(P.log_p, bind(P.abs_p, d)), last))
    big = P.mul(P.mul(bind(R.reduce_prod_p, unit, axes=last), sign),
                P.convert_element_type(bind(P.exp_p, logabs), dtype))
    r, fi = bind(P.abs_p, det), np.finfo(D.real_dtype(dtype))
    normal = bind(P.and_p, bind(P.ge_p, r, _c(r, fi.tiny)), bind(P.le_p, r, _c(r, fi.max)))
    factors = bind(P.lt_p, bind(P.abs_p, logabs), _c(logabs, np.inf))   # (every |d| finite and nonzero)
    return P.select_n(bind(P.and_p, factors, bind(P.not_p, normal)), det, big)


def _unit_logabs(d, last):
    """(d / |d|, 0 where d is; sum of log|d| over `last`) of complex d: a product's direction and log-magnitude."""
    absd = bind(P.abs_p, d)
    is0 = bind(P.eq_p, absd, _c(absd, 0))
    unit = P.div(d, P.convert_element_type(P.select_n(is0, absd, _c(absd, 1)), S.dtype_of(d)))
    return P.select_n(is0, unit, _c(unit, 0)), R.reduce_sum(bind(P.log_p, absd), last)


@compiled
def slogdet(x, /):
    """(sign, log|det|); sign is 0 and logabsdet -inf for singular matrices."""
    x = _matrix("slogdet", x)
    a = _strong(x)
    rdt = D.real_dtype(x.dtype)
    if x.shape[-1] == 0:
        return SlogdetResult(wrap(S.full(x.shape[:-2], 1, x.dtype)), wrap(S.full(x.shape[:-2], 0, rdt)))
    lu, piv, _ = LP.lu(a)
    d = LP.diagonal(lu)
    last = (len(S.shape_of(d)) - 1,)
    if x.dtype in D.COMPLEX:
        unit, logabs = _unit_logabs(d, last)
    else:
        unit, logabs = bind(P.sign_p, d), R.reduce_sum(bind(P.log_p, bind(P.abs_p, d)), last)
    sign = P.mul(bind(R.reduce_prod_p, unit, axes=last), _parity_sign(piv, x.dtype))
    return SlogdetResult(wrap(sign), wrap(logabs))


@compiled(arrays=("x",))     # (n is static: an Array n is refused, as under jit)
def matrix_power(x, n, /):
    x = _matrix("matrix_power", x, kinds=D.NUMERIC, what="a numeric")
    n = as_int(n, "matrix_power", "n")
    a = _strong(x)
    if n == 0:
        return wrap(_eye_like(a))
    if n < 0:
        check_kind("matrix_power", x.dtype, D.FLOATING, "a floating-point (for negative powers)")
        a = LP.solve(a, _eye_like(a))
        n = -n
    result = None
    while True:
        if n & 1:
            result = a if result is None else LP.mm(result, a)
        n >>= 1
        if not n:
            break
        a = LP.mm(a, a)
    return wrap(result)


# ----------------------------------------------------------------------- SVD-based helpers

def _default_rtol(x):
    return max(x.shape[-2:]) * float(np.finfo(D.real_dtype(x.dtype)).eps)


def _rtol_value(fname, x, rtol, batch):
    """The relative tolerance as a raw value broadcastable to the batch shape (..., )."""
    rdt = D.real_dtype(x.dtype)
    if rtol is None:
        return _c_dt(rdt, _default_rtol(x))
    if type(rtol) is not Array and type(py_number(rtol)) in (int, float):   # NumPy scalars too
        return _c_dt(rdt, float(rtol))
    r = as_array(rtol, fname, "rtol")
    check_kind(fname, r.dtype, D.REAL_NUMERIC, "a real-valued rtol")
    v = cast(r._v, rdt)
    try:
        P.broadcast_shapes(r.shape, batch)
    except ValueError:
        raise ValueError(f"{fname}: rtol of shape {r.shape} does not broadcast against the batch shape {batch}") \
            from None
    return v


def _times_smax(s, rtol_v, batch):
    smax = bind(R.reduce_max_p, s, axes=(len(S.shape_of(s)) - 1,))
    return P.mul(smax, rtol_v)


@compiled(arrays=("x", "rtol"))
def matrix_rank(x, /, *, rtol=None):
    x = _matrix("matrix_rank", x, square=False)
    batch = x.shape[:-2]
    if min(x.shape[-2:]) == 0:
        return wrap(S.full(batch, 0, D.DEFAULT_INT))
    (s,) = LP.svd(_strong(x), full_matrices=False, compute_uv=False)
    tol = _times_smax(s, _rtol_value("matrix_rank", x, rtol, batch), batch)
    tshape = S.shape_of(tol)
    k = S.shape_of(s)[-1]
    out_batch = P.broadcast_shapes(tshape, batch)
    s = S.broadcast_to_shape(s, out_batch + (k,))
    tol = S.broadcast_in_dim(tol, out_batch + (k,), tuple(range(len(out_batch) - len(tshape), len(out_batch))))
    big = P.convert_element_type(bind(P.gt_p, s, tol), D.DEFAULT_INT)
    return wrap(R.reduce_sum(big, (len(out_batch),)))


@compiled(arrays=("x", "rtol"))
def pinv(x, /, *, rtol=None):
    x = _matrix("pinv", x, square=False)
    a = _strong(x)
    m, n = x.shape[-2:]
    batch = x.shape[:-2]
    if min(m, n) == 0:
        return wrap(S.full(batch + (n, m), 0, x.dtype))
    s, u, vh = LP.svd(a, full_matrices=False, compute_uv=True)
    cutoff = _times_smax(s, _rtol_value("pinv", x, rtol, batch), batch)
    cshape = S.shape_of(cutoff)
    if cshape != tuple(batch):
        raise ValueError(f"pinv: rtol must broadcast to the batch shape {batch}")
    k = S.shape_of(s)[-1]
    cut = S.broadcast_in_dim(cutoff, batch + (k,), tuple(range(len(batch))))
    keep = bind(P.gt_p, s, cut)
    s_inv = P.select_n(keep, _c(s, 0), P.div(_c(s, 1), P.select_n(keep, _c(s, 1), s)))
    s_inv = P.convert_element_type(s_inv, x.dtype)
    return wrap(LP.mm(LP.mH(vh), LP.scale_rows(LP.mH(u), s_inv)))


# ------------------------------------------------------------------------------- norms

def _keep(v, shape, axes, keepdims):
    if not keepdims:
        return v
    return S.reshape(v, tuple(1 if i in axes else d for i, d in enumerate(shape)))


@compiled
def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    x = as_array(x, "vector_norm")
    check_kind("vector_norm", x.dtype, D.FLOATING, "a floating-point")
    axes = normalize_axes(axis, x.ndim, "vector_norm")
    p = py_number(ord)
    if type(p) not in (int, float):
        raise ValueError(f"vector_norm: ord must be a number, got {ord!r}")
    ord = p
    a = bind(P.abs_p, _strong(x))           # real dtype
    rdt = D.real_dtype(x.dtype)
    if ord == math.inf or ord == -math.inf:
        if any(x.shape[i] == 0 for i in axes) and ord == -math.inf:
            raise ValueError("vector_norm: ord=-inf of an empty vector is undefined")
        if any(x.shape[i] == 0 for i in axes):
            out = S.full(tuple(d for i, d in enumerate(x.shape) if i not in axes), 0, rdt)
        else:
            out = bind(R.reduce_max_p if ord > 0 else R.reduce_min_p, a, axes=axes)
    elif ord == 0:
        out = R.reduce_sum(P.convert_element_type(bind(P.ne_p, a, _c(a, 0)), rdt), axes)
    elif ord == 1:
        out = R.reduce_sum(a, axes)
    elif ord == 2:
        out = bind(P.sqrt_p, R.reduce_sum(P.mul(a, a), axes))
    else:
        p = float(ord)
        out = bind(P.pow_p, R.reduce_sum(bind(P.pow_p, a, _c(a, p)), axes), _c(a, 1.0 / p))
    return wrap(_keep(out, x.shape, axes, keepdims))


@compiled
def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    x = _matrix("matrix_norm", x, square=False)
    if not isinstance(ord, str) and type(py_number(ord)) in (int, float):   # NumPy scalars too
        ord = py_number(ord)
    numeric = type(ord) in (int, float)
    if not ((isinstance(ord, str) and ord in ("fro", "nuc"))
            or (numeric and ord in (1, -1, 2, -2, math.inf, -math.inf))):
        raise ValueError(f"matrix_norm: ord must be one of 'fro', 'nuc', 1, -1, 2, -2, inf, -inf; got {ord!r}")
    v = _strong(x)
    nd = x.ndim
    axes = (nd - 2, nd - 1)
    m, n = x.shape[-2:]
    if ord != "fro" and {1: n, -1: n, math.inf: m, -math.inf: m}.get(ord, min(m, n)) == 0:
        # the largest of no column sums, row sums or singular values is 0 (a norm; NumPy's); the smallest is none
        if ord in (-1, -2, -math.inf):
            raise ValueError(f"matrix_norm: ord={ord!r} of a matrix of shape {(m, n)} is the minimum of an empty set")
        out = S.full(x.shape[:-2], 0, D.real_dtype(x.dtype))
    elif ord in ("nuc", 2, -2):
        (s,) = LP.svd(v, full_matrices=False, compute_uv=False)
        last = (nd - 2,)
        out = (R.reduce_sum(s, last) if ord == "nuc"
               else bind(R.reduce_max_p if ord == 2 else R.reduce_min_p, s, axes=last))
    elif ord == "fro":
        a = bind(P.abs_p, v)
        out = bind(P.sqrt_p, R.reduce_sum(P.mul(a, a), axes))
    else:
        a = bind(P.abs_p, v)
        if ord in (1, -1):      # max/min over columns of the column sums
            sums = R.reduce_sum(a, (nd - 2,))
        else:                   # inf, -inf: over rows of the row sums
            sums = R.reduce_sum(a, (nd - 1,))
        out = bind(R.reduce_max_p if ord > 0 else R.reduce_min_p, sums, axes=(nd - 2,))
    return wrap(_keep(out, x.shape, axes, keepdims))


# ------------------------------------------------------------------------ other functions

def diagonal(x, /, *, offset=0):
    return _diagonal(x, offset, "diagonal")


def _diagonal(x, offset, fname):
    x = as_array(x, fname)
    if x.ndim < 2:
        raise ValueError(f"{fname}: x must have at least 2 dimensions, got shape {x.shape}")
    offset = as_int(offset, fname, "offset")
    m, n = x.shape[-2:]
    lead = x.shape[:-2]
    if offset >= 0:
        count, start = max(0, min(m, n - offset)), offset
    else:
        count, start = max(0, min(m + offset, n)), -offset * n
    flat = S.reshape(x._v, lead + (m * n,))
    z = (0,) * len(lead)
    if count == 0:
        return wrap(S.slice_(flat, z + (0,), lead + (0,)))
    limit = start + (count - 1) * (n + 1) + 1
    return wrap(S.slice_(flat, z + (start,), lead + (limit,), (1,) * len(lead) + (n + 1,)))


@compiled
def trace(x, /, *, offset=0, dtype=None):
    x = as_array(x, "trace")
    check_kind("trace", x.dtype, D.NUMERIC, "a numeric")
    from ._statistical import sum as _sum
    return _sum(_diagonal(x, offset, "trace"), axis=-1, dtype=dtype)


@compiled
def outer(x1, x2, /):
    x1, x2 = as_array(x1, "outer", "x1"), as_array(x2, "outer", "x2")
    dt = D.promote(x1.dtype, x2.dtype, "outer")
    check_kind("outer", dt, D.NUMERIC, "a numeric", "x1 and x2")
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError(f"outer: x1 and x2 must be 1-D, got shapes {x1.shape} and {x2.shape}")
    shape = (x1.shape[0], x2.shape[0])
    a = S.broadcast_in_dim(cast(x1._v, dt), shape, (0,))
    b = S.broadcast_in_dim(cast(x2._v, dt), shape, (1,))
    return wrap(P.mul(a, b))


@compiled
def cross(x1, x2, /, *, axis=-1):
    x1, x2 = as_array(x1, "cross", "x1"), as_array(x2, "cross", "x2")
    dt = D.promote(x1.dtype, x2.dtype, "cross")
    check_kind("cross", dt, D.NUMERIC, "a numeric", "x1 and x2")
    if x1.ndim == 0 or x2.ndim == 0:
        raise ValueError("cross: x1 and x2 must have at least one dimension")
    axis = as_int(axis, "cross", "axis")
    nmin = min(x1.ndim, x2.ndim)
    if not -nmin <= axis < 0:
        if not -nmin <= axis < nmin:
            raise axis_error("cross", axis, nmin)   # an IndexError and a ValueError, as NumPy's
        raise ValueError(f"cross: axis must be in [-{nmin}, -1] (a dimension of both inputs), got {axis}")
    if x1.shape[axis] != 3 or x2.shape[axis] != 3:
        raise ValueError(f"cross: the size of x1 and x2 along axis {axis} must be 3, got shapes {x1.shape} and "
                         f"{x2.shape}")
    check_broadcast("cross", x1.shape, x2.shape)
    shape = P.broadcast_shapes(x1.shape, x2.shape)
    ax = len(shape) + axis
    a = S.broadcast_to_shape(cast(x1._v, dt), shape)
    b = S.broadcast_to_shape(cast(x2._v, dt), shape)

    def comp(v, i):
        lo = [0] * len(shape)
        hi = list(shape)
        lo[ax], hi[ax] = i, i + 1
        return S.slice_(v, lo, hi)
    a0, a1, a2 = (comp(a, i) for i in range(3))
    b0, b1, b2 = (comp(b, i) for i in range(3))
    c0 = P.sub(P.mul(a1, b2), P.mul(a2, b1))
    c1 = P.sub(P.mul(a2, b0), P.mul(a0, b2))
    c2 = P.sub(P.mul(a0, b1), P.mul(a1, b0))
    return wrap(S.concatenate([c0, c1, c2], ax))

