"""Namespace composites (xp.linalg, xp.fft) computed directly on host kernels: their first eager call at
a new signature (array_namespace/_staged.py `compiled(host=name)`).

Why: the first call at a signature ran the composite's plain body, binding primitive after primitive,
and each bind at a never-seen signature pays a miss (output avals, a specialised kernel, boxing):
~10-15 us each, 7 binds for inv, 16 for eigh -- a first call cost 4-9x a steady one. Here the same
host kernels (xla/host.py's table: the ones the body's binds and its staged op-by-op program run) are
called in the body's order on the body's values, so the results are the plain body's, bit for bit.
Only the common case is taken: anything else -- a weak or unexpected dtype, a static argument out of
the ordinary, a non-finite operand (the guards' and kernels' NaN paths), a kernel declining
(NotImplemented: a singular triangle) -- returns None, and the plain body runs (validating, raising,
falling back to XLA where a kernel declines), as before.
"""
from __future__ import annotations

import math

import numpy as np

from transforms.jaxpr_transforms import host_composites
from transforms.primitives import elementwise as E
from transforms.primitives import fft as F
from transforms.primitives import lapack as LP
from transforms.primitives import linalg as L
from transforms.primitives import reductions as R
from transforms.primitives import structural as S

from . import host, host_eager, runtime
from .host import HostValue, host_kernels as K

_FLOATS = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.complex64, np.complex128))
_REAL = frozenset((np.dtype(np.float32), np.dtype(np.float64)))
_ArrayImpl = runtime._ArrayImpl
_REAL_OF = {d: np.dtype(LP.real_dtype(d)) for d in _FLOATS}
_COMPLEX_OF = {d: np.dtype(LP.complex_dtype(d)) for d in _FLOATS}
_AS_HOST = host.MODE == "host"


def _operand(v, ndim_min, kinds=_FLOATS):
    """v's ndarray where v is an eager value of a dtype in `kinds` (strong) with at least ndim_min dims,
    small enough to run op by op on the host (host_eager.BY_OP_MAX_ELEMENTS); else None."""
    t = type(v)
    if t is HostValue:
        a = v.aval
        if a.weak_type or a.dtype not in kinds or len(a.shape) < ndim_min:
            return None
        x = v.np if v._buf is None else runtime._np_of(v)
    elif t is _ArrayImpl and runtime._kernels_on():
        a = v.aval
        if a.weak_type or a.dtype not in kinds or len(a.shape) < ndim_min:
            return None
        x = runtime._np_of(v)
    else:
        return None
    return x if x.size <= _MAX else None


_MAX = host_eager.BY_OP_MAX_ELEMENTS   # (outputs larger than their operands are checked against it too)


def _square(v):
    x = _operand(v, 2)
    return x if x is not None and x.shape[-1] == x.shape[-2] else None


def _box(o, dtype):
    """A kernel's result as an eager value of `dtype` (cast where the kernel gave another, as the eager
    impls and host programs do)."""
    if o.__class__ is not np.ndarray:
        o = np.asarray(o)
    if o.dtype != dtype:
        o = o.astype(dtype)
    a = host.shared_aval(o.shape, dtype)
    return HostValue(o, a) if _AS_HOST else runtime._box_host(o, a, LP.lu_p)


def _quiet(fn):
    """fn run with floating-point warnings silenced (host.run_quiet, as every eager kernel runs)."""
    def run(*args, **kw):
        return host.run_quiet(fn, args, kw)
    run.__name__ = fn.__name__
    return run


# ----------------------------------------------------------------------------- raw-value helpers
def _mT(x):
    n = x.ndim
    return K[S.transpose_p](x, permutation=tuple(range(n - 2)) + (n - 1, n - 2))


def _mH(x):
    t = _mT(x)
    return K[E.conj_p](t) if x.dtype.kind == "c" else t


def _symmetrize(x):
    """_linalg._symmetrize: (x + x^H) * 0.5."""
    s = K[E.add_p](x, _mH(x))
    return K[E.mul_p](s, np.asarray(0.5, x.dtype))


def _finite(x):
    return bool(np.isfinite(x).all())


# ------------------------------------------------------------------------------- decompositions
@_quiet
def _cholesky(x, *, upper=False):
    a = _square(x)
    if a is None:
        return None
    lo = K[LP.cholesky_p](_symmetrize(a))
    return (_box(_mH(lo) if upper else lo, a.dtype),)


def _eigh_raw(x):
    a = _square(x)
    if a is None:
        return None, None
    s = _symmetrize(a)
    if not _finite(s):       # (the finite guard's zeros-in, NaN-out path)
        return None, None
    return a, K[LP.eigh_p](s, lower=True)


@_quiet
def _eigh(x):
    a, wv = _eigh_raw(x)
    return None if a is None else (_box(wv[0], _REAL_OF[a.dtype]), _box(wv[1], a.dtype))


@_quiet
def _eigvalsh(x):
    a, wv = _eigh_raw(x)
    return None if a is None else (_box(wv[0], _REAL_OF[a.dtype]),)


def _svd_raw(x, full_matrices, compute_uv):
    a = _operand(x, 2)
    if a is None or not _finite(a):
        return None, None
    return a, K[LP.svd_p](a, full_matrices=full_matrices, compute_uv=compute_uv)


@_quiet
def _svd(x, *, full_matrices=True):
    full = bool(full_matrices)
    shp = getattr(x, "shape", ())
    if full and len(shp) >= 2 and max(shp[-2:]) ** 2 * math.prod(shp[:-2]) > _MAX:   # (U or V^H past the limit)
        return None
    a, outs = _svd_raw(x, full, True)
    if a is None:
        return None
    s, u, vh = outs
    return (_box(u, a.dtype), _box(s, _REAL_OF[a.dtype]), _box(vh, a.dtype))


@_quiet
def _svdvals(x):
    a, outs = _svd_raw(x, False, False)
    return None if a is None else (_box(outs[0], _REAL_OF[a.dtype]),)


@_quiet
def _qr(x, *, mode="reduced"):
    if type(mode) is not str or mode not in ("reduced", "complete"):
        return None
    a = _operand(x, 2)
    if a is None or (mode == "complete" and a.shape[-2] ** 2 * math.prod(a.shape[:-2]) > _MAX):
        return None
    q, r = K[LP.qr_p](a, full_matrices=(mode == "complete"))
    return (_box(q, a.dtype), _box(r, a.dtype))


# ------------------------------------------------------------------------------------ LU-based
_LOWER_UNIT = dict(left_side=True, lower=True, transpose_a=False, conjugate_a=False, unit_diagonal=True)
_UPPER = dict(left_side=True, lower=False, transpose_a=False, conjugate_a=False, unit_diagonal=False)


def _permutation_matrix(perm, dtype):
    """LP.permutation_matrix: P[..., i, j] = (perm[..., i] == j)."""
    m = perm.shape[-1]
    eq = K[E.eq_p](perm[..., :, None], np.arange(m, dtype=np.int32))
    return eq.astype(dtype)


def _lu_solve_raw(a, b):
    """_linalg._lu_solve (b given: P @ b) or _lu_inv (b None: P itself), None where a kernel declines."""
    lu, _, perm = K[LP.lu_p](a)   # (a is finite: the kernel takes it)
    p = _permutation_matrix(perm, a.dtype)
    if b is not None:
        n = a.ndim
        batch = tuple(range(n - 2))
        p = K[L.dot_general_p](p, b, dimension_numbers=(((n - 1,), (n - 2,)), (batch, batch)))
    y = K[LP.triangular_solve_p](lu, p, **_LOWER_UNIT)
    if y is NotImplemented:
        return None
    x = K[LP.triangular_solve_p](lu, y, **_UPPER)
    return None if x is NotImplemented else x


@_quiet
def _inv(x):
    a = _square(x)
    if a is None or not _finite(a):
        return None
    out = _lu_solve_raw(a, None)
    return None if out is None else (_box(out, a.dtype),)


@_quiet
def _solve(x1, x2):
    a, b = _square(x1), _operand(x2, 1)
    if a is None or b is None or a.dtype != b.dtype or not (_finite(a) and _finite(b)):
        return None
    m = a.shape[-1]
    vector = b.ndim == 1
    if vector:
        if a.ndim != 2 or b.shape[0] != m:
            return None
        b = b.reshape((m, 1))
    elif b.ndim != a.ndim or b.shape[-2] != m or b.shape[:-2] != a.shape[:-2]:
        return None        # (broadcast batches, mismatches: the plain body)
    out = _lu_solve_raw(a, b)
    if out is None:
        return None
    return (_box(out.reshape(out.shape[:-1]) if vector else out, a.dtype),)


@_quiet
def _det(x):
    a = _square(x)
    if a is None or a.shape[-1] == 0 or not _finite(a):
        return None
    lu, piv, _ = K[LP.lu_p](a)
    m = a.shape[-1]
    lead = a.shape[:-2]
    d = lu.reshape(lead + (m * m,))[..., 0:(m - 1) * (m + 1) + 1:m + 1]     # LP.diagonal: a strided slice
    last = (len(lead),)
    prod = K[R.reduce_prod_p](d, axes=last)
    return (_box(K[E.mul_p](prod, _parity_sign(piv, a.dtype)), a.dtype),)


@_quiet
def _slogdet(x):
    a = _square(x)
    if a is None or a.shape[-1] == 0 or not _finite(a):
        return None
    dt, rdt = a.dtype, _REAL_OF[a.dtype]
    lu, piv, _ = K[LP.lu_p](a)
    m = a.shape[-1]
    lead = a.shape[:-2]
    d = lu.reshape(lead + (m * m,))[..., 0:(m - 1) * (m + 1) + 1:m + 1]     # LP.diagonal
    last = (len(lead),)
    absd = _fit(K[E.abs_p](d), rdt)
    logabs = K[R.reduce_sum_p](_fit(K[E.log_p](absd), rdt), axes=last)
    if dt.kind == "c":
        is0 = K[E.eq_p](absd, np.asarray(0, rdt))
        den = K[E.convert_element_type_p](np.where(is0, np.asarray(1, rdt), absd), new_dtype=dt, weak_type=False)
        unit = np.where(is0, np.asarray(0, dt), _fit(K[E.div_p](d, den), dt))
    else:
        unit = K[E.sign_p](d)
    if any(o is NotImplemented for o in (absd, logabs, unit)):
        return None
    sign = K[E.mul_p](K[R.reduce_prod_p](unit, axes=last), _parity_sign(piv, dt))
    return (_box(sign, dt), _box(logabs, rdt))


def _parity_sign(piv, dtype):
    """_linalg._parity_sign: (-1) ** (row swaps), in dtype."""
    k = piv.shape[-1]
    swapped = K[E.ne_p](piv, np.arange(k, dtype=np.int32))
    n = K[R.reduce_sum_p](swapped.astype(np.int32), axes=(piv.ndim - 1,))
    odd = np.remainder(n, np.int32(2))
    one, two = np.asarray(1, dtype), np.asarray(2, dtype)
    return K[E.sub_p](one, K[E.mul_p](odd.astype(dtype), two))


# ------------------------------------------------------------------------------------------ fft
_NORMS = ("backward", "ortho", "forward")


def _fft_args(x, n, axis, norm, kinds, default=None):
    """(ndarray, axis, n) for a 1-D transform's usual arguments, or None. default: n from the axis length."""
    if type(norm) is not str or norm not in _NORMS or type(axis) is not int:
        return None
    a = _operand(x, 1, kinds)
    if a is None or not -a.ndim <= axis < a.ndim:
        return None
    axis %= a.ndim
    if n is None:
        n = a.shape[axis] if default is None else default(a.shape[axis])
    elif type(n) is not int:
        return None
    if n < 1 or a.size // max(a.shape[axis], 1) * n > _MAX:    # (an output past the limit: the plain body's
        return None                                          # shape rules refuse it with a typed error)
    return a, axis, n


def _resize(v, axis, n):
    """_fft._resize: trim or zero-pad along axis."""
    size = v.shape[axis]
    if size == n:
        return v
    if size > n:
        return v[(slice(None),) * axis + (slice(0, n),)]
    cfg = [(0, 0)] * v.ndim
    cfg[axis] = (0, n - size)
    return np.pad(v, cfg)


def _apply(v, axis, fft_type, n):
    """_fft._apply for one axis."""
    return _apply_group(v, [axis], fft_type, (n,))


def _apply_group(v, group, fft_type, lengths):
    """_fft._apply: the kernel over `group` (at most 3 axes) moved to the end, moved back (the moves are the
    transpose kernel's; where nothing moves they would copy C-contiguous data, and are skipped: the same values)."""
    nd = v.ndim
    dt = v.dtype if fft_type in ("FFT", "IFFT") else _COMPLEX_OF[v.dtype] if fft_type == "RFFT" else _REAL_OF[v.dtype]
    perm = tuple([i for i in range(nd) if i not in group] + list(group))
    if perm == tuple(range(nd)):
        return _fit(K[F.fft_p](v, fft_type=fft_type, fft_lengths=tuple(lengths)), dt)
    back = tuple(perm.index(i) for i in range(nd))
    out = _fit(K[F.fft_p](K[S.transpose_p](v, permutation=perm), fft_type=fft_type, fft_lengths=tuple(lengths)), dt)
    return K[S.transpose_p](out, permutation=back)


def _complex_nd(v, axes, fft_type):
    """_fft._complex_nd: FFT/IFFT over any number of axes, in groups of at most three from the last."""
    shp = v.shape
    axes = list(axes)
    while axes:
        group, axes = axes[-3:], axes[:-3]
        v = _apply_group(v, group, fft_type, [shp[a] for a in group])
    return v


def _nd_args(x, s, axes, norm, kinds):
    """The ndarray of an n-D transform over all of x's axes at x's lengths (s and axes None), or None."""
    if s is not None or axes is not None or type(norm) is not str or norm not in _NORMS:
        return None
    a = _operand(x, 1, kinds)
    return None if a is None or 0 in a.shape else a


def _c2cn(x, s, axes, norm, inverse):
    a = _nd_args(x, s, axes, norm, _FLOATS)
    if a is None:
        return None
    cdt = _COMPLEX_OF[a.dtype]
    v = a if a.dtype == cdt else a.astype(cdt)
    out = _complex_nd(v, range(a.ndim), "IFFT" if inverse else "FFT")
    return (_box(_scale(out, norm, math.prod(a.shape), inverse), cdt),)


@_quiet
def _fftn(x, *, s=None, axes=None, norm="backward"):
    return _c2cn(x, s, axes, norm, False)


@_quiet
def _ifftn(x, *, s=None, axes=None, norm="backward"):
    return _c2cn(x, s, axes, norm, True)


@_quiet
def _rfftn(x, *, s=None, axes=None, norm="backward"):
    a = _nd_args(x, s, axes, norm, _REAL)
    if a is None:
        return None
    nd = a.ndim
    v = _apply(a, nd - 1, "RFFT", a.shape[-1])
    v = _complex_nd(v, range(nd - 1), "FFT")
    return (_box(_scale(v, norm, math.prod(a.shape), False), _COMPLEX_OF[a.dtype]),)


def _scale(v, norm, n, inverse):
    if norm == "backward":
        return v
    if norm == "ortho":
        f = math.sqrt(n) if inverse else 1.0 / math.sqrt(n)
    else:
        f = float(n) if inverse else 1.0 / n
    return K[E.mul_p](v, np.asarray(f, v.dtype))


def _c2c(x, n, axis, norm, inverse):
    got = _fft_args(x, n, axis, norm, _FLOATS)
    if got is None:
        return None
    a, axis, n = got
    cdt = _COMPLEX_OF[a.dtype]
    v = a if a.dtype == cdt else a.astype(cdt)
    out = _apply(_resize(v, axis, n), axis, "IFFT" if inverse else "FFT", n)
    return (_box(_scale(out, norm, n, inverse), cdt),)


def _fit(o, dtype):
    """A kernel's result in its aval's dtype (cast, as the eager impls do)."""
    o = np.asarray(o)
    return o if o.dtype == dtype else o.astype(dtype)


@_quiet
def _fft(x, *, n=None, axis=-1, norm="backward"):
    return _c2c(x, n, axis, norm, False)


@_quiet
def _ifft(x, *, n=None, axis=-1, norm="backward"):
    return _c2c(x, n, axis, norm, True)


@_quiet
def _rfft(x, *, n=None, axis=-1, norm="backward"):
    got = _fft_args(x, n, axis, norm, _REAL)
    if got is None:
        return None
    a, axis, n = got
    cdt = _COMPLEX_OF[a.dtype]
    out = _apply(_resize(a, axis, n), axis, "RFFT", n)
    return (_box(_scale(out, norm, n, False), cdt),)


@_quiet
def _irfft(x, *, n=None, axis=-1, norm="backward"):
    got = _fft_args(x, n, axis, norm, _FLOATS, default=lambda m: 2 * (m - 1))
    if got is None:
        return None
    a, axis, n = got
    cdt = _COMPLEX_OF[a.dtype]
    rdt = _REAL_OF[cdt]
    v = a if a.dtype == cdt else a.astype(cdt)
    v = _resize(v, axis, n // 2 + 1)
    out = _apply(v, axis, "IRFFT", n)
    return (_box(_scale(out, norm, n, True), rdt),)


def _shift(x, axes, sign):
    """_fft._shift (fftshift / ifftshift): roll's slices and concatenations along each axis."""
    if type(x) is not HostValue or not _AS_HOST or x.aval.weak_type:
        return None
    v = x.np if x._buf is None else runtime._np_of(x)
    nd = v.ndim
    if axes is None:
        axes = tuple(range(nd))
    elif type(axes) is int:
        axes = (axes,)
    elif type(axes) is not tuple or any(type(a) is not int for a in axes):
        return None
    if not axes or any(not -nd <= a < nd for a in axes):
        return None
    shape = v.shape
    for a in axes:
        a %= nd
        n = shape[a]
        s = (sign * (n // 2)) % n if n else 0
        if s:
            mid = n - s
            head = (slice(None),) * a
            v = K[S.concatenate_p](v[head + (slice(mid, n),)], v[head + (slice(0, mid),)], dimension=a)
    return (x,) if v is x.np else (_box(v, v.dtype),)


@_quiet
def _fftshift(x, *, axes=None):
    return _shift(x, axes, 1)


@_quiet
def _ifftshift(x, *, axes=None):
    return _shift(x, axes, -1)


_NUMERIC = frozenset(np.dtype(c) for c in "bhilqBHILQfdFD")   # (the namespace's NUMERIC: no bool, no float16)


@_quiet
def _outer(x1, x2):
    """_linalg.outer: x1 and x2 broadcast to (m, n) and multiplied (one dtype, both 1-D)."""
    a, b = _operand(x1, 1, _NUMERIC), _operand(x2, 1, _NUMERIC)
    if a is None or b is None or a.ndim != 1 or b.ndim != 1 or a.dtype != b.dtype:
        return None
    shape = (a.shape[0], b.shape[0])
    if shape[0] * shape[1] > _MAX:
        return None
    out = K[E.mul_p](np.broadcast_to(a[:, None], shape), np.broadcast_to(b[None, :], shape))
    return None if out is NotImplemented else (_box(out, a.dtype),)


# ---------------------------------------------------------------------------------------- norms
def _axes(axis, nd):
    """_helpers.normalize_axes for ints and tuples of ints (sorted, unique), else None."""
    if axis is None:
        return tuple(range(nd))
    axes = (axis,) if type(axis) is int else axis if type(axis) is tuple else None
    if axes is None or any(type(a) is not int or not -nd <= a < nd for a in axes):
        return None
    out = sorted(a % nd for a in axes)
    return tuple(out) if len(set(out)) == len(out) else None


def _two_norm(a, axes):
    """sqrt(sum(|a|^2)) over axes, by the kernels _linalg's ord=2 / 'fro' bind."""
    m = K[E.abs_p](a)
    if m is NotImplemented:
        return None
    m = _fit(m, _REAL_OF[a.dtype])
    return K[E.sqrt_p](K[R.reduce_sum_p](K[E.mul_p](m, m), axes=axes))


def _kept(out, shape, axes, keepdims):
    return out.reshape(tuple(1 if i in axes else d for i, d in enumerate(shape))) if keepdims else out


@_quiet
def _vector_norm(x, *, axis=None, keepdims=False, ord=2):
    if type(ord) not in (int, float) or ord != 2 or type(keepdims) is not bool:
        return None
    a = _operand(x, 0)
    axes = None if a is None else _axes(axis, a.ndim)
    if axes is None:
        return None
    out = _two_norm(a, axes)
    return None if out is None else (_box(_kept(out, a.shape, axes, keepdims), _REAL_OF[a.dtype]),)


@_quiet
def _matrix_norm(x, *, keepdims=False, ord="fro"):
    if type(ord) is not str or ord != "fro" or type(keepdims) is not bool:
        return None
    a = _operand(x, 2)
    if a is None:
        return None
    axes = (a.ndim - 2, a.ndim - 1)
    out = _two_norm(a, axes)
    return None if out is None else (_box(_kept(out, a.shape, axes, keepdims), _REAL_OF[a.dtype]),)


host_composites.update({
    "linalg.cholesky": _cholesky, "linalg.eigh": _eigh, "linalg.eigvalsh": _eigvalsh, "linalg.svd": _svd,
    "linalg.svdvals": _svdvals, "linalg.qr": _qr, "linalg.inv": _inv, "linalg.solve": _solve,
    "linalg.det": _det, "linalg.slogdet": _slogdet, "linalg.outer": _outer, "linalg.vector_norm": _vector_norm, "linalg.matrix_norm": _matrix_norm,
    "fft.fft": _fft, "fft.ifft": _ifft, "fft.rfft": _rfft, "fft.irfft": _irfft, "fft.fftshift": _fftshift,
    "fft.ifftshift": _ifftshift, "fft.fftn": _fftn, "fft.ifftn": _ifftn, "fft.rfftn": _rfftn,
})
