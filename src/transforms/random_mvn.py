"""`multivariate_normal`: mean + F z for standard normal z and a factor F with F F^T = cov (jax.random's).

The factor is the Cholesky factor of (cov + cov^T) / 2 (method "cholesky"), V sqrt(w) for the eigh of that
symmetrised matrix ("eigh"), or U sqrt(s) for the svd of cov ("svd", as JAX takes it), all from the LAPACK
primitives, so samples differentiate in mean and cov through their jvp rules. A cov the method cannot factor
gives NaN (cholesky of a matrix that is not positive definite, eigh with a clearly negative eigenvalue), as in
JAX; eigenvalues negative only by rounding count as 0, so a singular cov works with "eigh" (JAX gives NaN).
One factor serving every sample (a cov without batch axes) is applied as one matrix product; batched factors
are broadcast to the sample batch and applied as a batched product.
"""
from __future__ import annotations

import numpy as np

from .primitives import elementwise as E
from .primitives import lapack as LP
from .primitives import linalg as L
from .primitives import reductions as R
from .primitives import structural as S
from .core import unbox
from .random_args import _aval, _broadcasts_to, _call, _describe, _float_dtype, _is_array, _key_raw, _shape
from .random_bits import c
from .random_samplers import _normal_body

__all__ = ["multivariate_normal"]

METHODS = ("cholesky", "eigh", "svd")


def _factor(cov, method):
    """F with F F^T = cov (for a symmetric positive (semi)definite cov), on the trailing two axes."""
    if method == "svd":
        s, u, _ = LP.svd(cov, False, True)
        return LP.scale_cols(u, E.bind(E.sqrt_p, s))
    half = E.mul(cov, c(cov, 0.5))              # halved first: the sum of two entries past half the max overflows
    sym = E.add(half, LP.mT(half))
    if method == "cholesky":
        return LP.cholesky(sym)
    w, v = LP.eigh(sym)
    return LP.scale_cols(v, E.bind(E.sqrt_p, _rounding_to_zero(w)))


def _rounding_to_zero(w):
    """Eigenvalues w (last axis) with the negative ones within rounding of 0 (|w| <= n eps max|w|) set to 0: the
    zero eigenvalues of a singular cov come out of eigh as +-1e-16, whose square root would be NaN (as in JAX).
    More negative ones are left to give NaN: such a cov is not a covariance."""
    shp = S.shape_of(w)
    nd = len(shp)
    big = E.bind(R.reduce_max_p, E.bind(E.abs_p, w), axes=(nd - 1,))
    tol = S.broadcast_in_dim(E.mul(big, c(big, shp[-1] * float(np.finfo(S.dtype_of(w)).eps))), shp,
                             tuple(range(nd - 1)))
    return E.select_n(E.bind(E.ge_p, w, E.neg(tol)), w, E.bind(E.max_p, w, c(w, 0.0)))


def _mvn_body(k, mean, cov, *, shape, method):
    n = S.shape_of(mean)[-1]
    dtype = S.dtype_of(mean)
    z = _normal_body(k, shape=tuple(shape) + (n,), dtype=dtype)
    f = _factor(cov, method)
    nd = len(shape)
    if len(S.shape_of(f)) == 2:                 # one factor for all: out[..., i] = sum_j z[..., j] f[i, j]
        fz = L.dot_general(z, f, (((nd,), (1,)), ((), ())))
    else:
        f = S.broadcast_to_shape(f, tuple(shape) + (n, n))
        batch = tuple(range(nd))
        fz = L.dot_general(f, z, (((nd + 1,), (nd,)), (batch, batch)))
    return E.add(S.broadcast_to_shape(mean, tuple(shape) + (n,)), fz)


def _real_array(x, what, ndim):
    """x's aval, checked to be a real (integer or float) Array with at least ndim axes."""
    if not _is_array(x) or _aval(x).dtype.kind not in "iuf":
        raise TypeError(f"multivariate_normal: {what} must be a real (integer or float) array, got {_describe(x)}")
    a = _aval(x)
    if len(a.shape) < ndim:
        raise ValueError(f"multivariate_normal: {what} must have at least {ndim} dimension{'s' * (ndim > 1)}, "
                         f"got shape {tuple(a.shape)}")
    return a


def multivariate_normal(key, mean, cov, shape=None, dtype=np.float64, method="cholesky"):
    """Multivariate normal samples with mean `mean` and covariance `cov`: mean + F z, F F^T = cov.

    Parameters: key (Array): a PRNG key. mean (Array): means of shape (..., n). cov (Array): covariances of
        shape (..., n, n), symmetric positive definite (semidefinite with method "eigh" or "svd"); the batch
        shapes of mean and cov broadcast together. shape (tuple of ints or None): the result's batch shape,
        which mean.shape[:-1] and cov.shape[:-2] must broadcast to (None: their broadcast shape).
        dtype: xp.float64 (default) or xp.float32, the result's dtype (mean and cov are converted to it).
        method (str): how cov is factored: "cholesky" (default), "eigh" or "svd".
    Returns: Array: samples of shape shape + (n,); NaN where the method cannot factor cov.
    Raises: TypeError: for a non-key, a bad shape, a non-float dtype or a mean / cov that is not a real
        array; ValueError: for a mean of no dimension, a cov that is not (..., n, n), batch shapes that do not
        broadcast to shape, or an unknown method.

    >>> x = random.multivariate_normal(random.key(0), xp.asarray([1.0, -1.0]),
    ...                                xp.asarray([[1.0, 0.5], [0.5, 2.0]]), (1000,))
    >>> x.shape, bool(abs(float(xp.mean(x[:, 0])) - 1.0) < 0.1)
    ((1000, 2), True)
    """
    k = _key_raw(key, "multivariate_normal")
    if not isinstance(method, str) or method not in METHODS:
        raise ValueError(f"multivariate_normal: method must be one of {METHODS}, got {method!r}")
    dt = _float_dtype(dtype, "multivariate_normal")
    ma, ca = _real_array(mean, "mean", 1), _real_array(cov, "cov", 2)
    n = ma.shape[-1]
    if tuple(ca.shape[-2:]) != (n, n):
        raise ValueError(f"multivariate_normal: cov must have shape (..., {n}, {n}) for a mean of shape "
                         f"{tuple(ma.shape)}, got shape {tuple(ca.shape)}")
    batches = (tuple(ma.shape[:-1]), tuple(ca.shape[:-2]))
    try:
        full = E.broadcast_shapes(*batches)
    except ValueError:
        raise ValueError(f"multivariate_normal: the batch shapes {batches[0]} of mean and {batches[1]} of cov "
                         "do not broadcast together") from None
    if shape is not None:
        shape = _shape(shape, "multivariate_normal")
        if not _broadcasts_to(full, shape):
            raise ValueError(f"multivariate_normal: the batch shapes {batches[0]} of mean and {batches[1]} of "
                             f"cov do not broadcast to shape {shape}")
    raw = [unbox(x) if a.dtype == dt and not a.weak_type else E.convert_element_type(unbox(x), dt)
           for x, a in ((mean, ma), (cov, ca))]
    return _call(_mvn_body, k, *raw, shape=full if shape is None else shape, method=method)
