"""Matrix decompositions (the CPU LAPACK family) and triangular solves.

Every primitive here works on the last two axes and is batched over all leading axes, so a
batching rule only moves the vmapped axis to the front. Operands are float32/64 or
complex64/128 (the namespace converts before binding).

  cholesky(a)                  -> L, lower, A = L L^H (only the lower triangle of a is read)
  eigh(a, lower)               -> [w (real, ascending), v], A = V diag(w) V^H
  svd(a, full_matrices, compute_uv) -> [s, u, vh] or [s]
  qr(a, full_matrices)         -> [q, r]
  lu(a)                        -> [lu, pivots (int32, 0-based), permutation (int32)], A[perm] = L U
  eig(a)                       -> [w, v] complex (no derivative)
  triangular_solve(a, b, left_side, lower, transpose_a, conjugate_a, unit_diagonal)
      solves op(A) X = B (left) or X op(A) = B (right); op = transpose/conjugate as flagged
  solve(a, b)                  -> X, A X = B (b: (..., M, K)); lowered as lu_solve (XLA has no solve)

The jvp rules are the standard matrix-calculus formulas, written with the primitives below
so they stay traceable (and their tangents transposable, for reverse mode).
"""
from __future__ import annotations

import numpy as np

from ..core import Primitive, ShapedArray, abstract_eval_rules, bind
from ..rules import Zero, batch_rules, is_undefined, jvp_gaps, jvp_rules, transpose_rules
from . import elementwise as E
from . import indexing as I
from . import linalg as L
from . import reductions as R
from . import structural as S

_FLOATS = tuple(np.dtype(t) for t in (np.float32, np.float64, np.complex64, np.complex128))


def real_dtype(dt):
    dt = np.dtype(dt)
    return np.dtype(np.float32) if dt == np.complex64 else np.dtype(np.float64) if dt == np.complex128 else dt


def complex_dtype(dt):
    dt = np.dtype(dt)
    return np.dtype(np.complex64) if dt in (np.float32, np.complex64) else np.dtype(np.complex128)


def _check_matrix(name, x, square=True):
    if x.dtype not in _FLOATS:
        raise TypeError(f"{name} requires a float32, float64, complex64 or complex128 operand, got {x.dtype.name}")
    if x.ndim < 2:
        raise ValueError(f"{name} requires an operand with at least 2 dimensions, got shape {x.shape}")
    if square and x.shape[-1] != x.shape[-2]:
        raise ValueError(f"{name} requires square matrices (..., M, M), got shape {x.shape}")


# ------------------------------------------------------------------ raw-value helpers

def _ndim(x):
    return len(S.shape_of(x))


def _is_complex(x):
    return S.dtype_of(x).kind == "c"


def mT(x):
    n = _ndim(x)
    return S.transpose(x, tuple(range(n - 2)) + (n - 1, n - 2))


def conj(x):
    return bind(E.conj_p, x) if _is_complex(x) else x


def mH(x):
    return conj(mT(x))


def real(x):
    return bind(E.real_p, x) if _is_complex(x) else x


def mm(a, b):
    """Batched matrix product of a[..., m, k] and b[..., k, n] with equal batch shapes."""
    n = _ndim(a)
    batch = tuple(range(n - 2))
    return L.dot_general(a, b, (((n - 1,), (n - 2,)), (batch, batch)))


def _mask(shape, k, lower):
    """bool[m, n]: True on and below (lower) or on and above (upper) diagonal k."""
    r = S.iota(np.int32, shape, 0)
    c = S.iota(np.int32, shape, 1)
    d = E.sub(c, r)
    kk = E.convert_element_type(k, np.int32, weak_type=True)
    return bind(E.le_p, d, kk) if lower else bind(E.ge_p, d, kk)


def tril(x, k=0):
    m = _mask(S.shape_of(x)[-2:], k, True)
    return E.select_n(m, E.full_like_scalar(x, 0), x)


def triu(x, k=0):
    m = _mask(S.shape_of(x)[-2:], k, False)
    return E.select_n(m, E.full_like_scalar(x, 0), x)


def eye(n, dtype, m=None):
    m = n if m is None else m
    r = S.iota(np.int32, (n, m), 0)
    c = S.iota(np.int32, (n, m), 1)
    return E.convert_element_type(bind(E.eq_p, r, c), dtype)


def diagonal(x):
    """x[..., i, i] for i < min(m, n), by a strided slice of the flattened matrix."""
    shp = S.shape_of(x)
    m, n = shp[-2:]
    k = min(m, n)
    lead = tuple(shp[:-2])
    flat = S.reshape(x, lead + (m * n,))
    if k == 0:
        return S.reshape(S.slice_(flat, (0,) * len(lead) + (0,), lead + (0,)), lead + (0,))
    out = S.slice_(flat, (0,) * len(lead) + (0,), lead + ((k - 1) * (n + 1) + 1,),
                   (1,) * len(lead) + (n + 1,))
    return out


def diag_embed(v, m=None):
    """A matrix with v[..., :] on its diagonal (square, or m rows when m is given)."""
    shp = S.shape_of(v)
    n = shp[-1]
    m = n if m is None else m
    lead = tuple(shp[:-1])
    nd = len(shp)
    b = S.broadcast_in_dim(v, lead + (m, n), tuple(range(nd - 1)) + (nd,))
    return E.mul(b, eye(m, S.dtype_of(v), n))


def scale_cols(x, v):
    """x[..., i, j] * v[..., j]."""
    shp = S.shape_of(x)
    nd = len(shp)
    return E.mul(x, S.broadcast_in_dim(v, shp, tuple(range(nd - 2)) + (nd - 1,)))


def scale_rows(x, v):
    """x[..., i, j] * v[..., i]."""
    shp = S.shape_of(x)
    nd = len(shp)
    return E.mul(x, S.broadcast_in_dim(v, shp, tuple(range(nd - 1))))


def _to_dtype_of(v, like):
    dt = S.dtype_of(like)
    return v if S.dtype_of(v) == dt else E.convert_element_type(v, dt)


def _move0(x, d):
    return S.moveaxis(x, d, 0)


def _front(axis_size, x, d):
    """x with its batch axis d first (broadcast there where x is unbatched: d None)."""
    if d is not None:
        return _move0(x, d)
    shp = S.shape_of(x)
    return S.broadcast_in_dim(x, (axis_size,) + tuple(shp), tuple(range(1, len(shp) + 1)))


def _fold_batch(b, db, rows, solve_one):
    """solve_one (a solve with its matrix fixed) of every batch element of b (batch axis db) as one call: the batch
    folded into b's columns (rows: its rows), so the matrix is used once, never broadcast; the batch axis first."""
    b = _move0(b, db)
    shp = S.shape_of(b)
    nd = len(shp)
    k = nd - 2 if rows else nd - 1   # the axis the batch joins (just before it)
    perm = tuple(range(1, k)) + (0,) + tuple(range(k, nd))
    x = solve_one(S.reshape(S.transpose(b, perm), shp[1:k] + (shp[0] * shp[k],) + shp[k + 1:]))
    x = S.reshape(x, shp[1:k] + (shp[0], shp[k]) + shp[k + 1:])
    return S.transpose(x, S.inverse_permutation(perm))


def _batched_unary(prim):
    def rule(axis_size, vals, dims, **params):
        out = bind(prim, _move0(vals[0], dims[0]), **params)
        if prim.multiple_results:
            return out, [0] * len(out)
        return out, 0
    return rule


# ----------------------------------------------------------------------- triangular_solve
triangular_solve_p = Primitive("triangular_solve")


def triangular_solve(a, b, *, left_side=True, lower=True, transpose_a=False, conjugate_a=False,
                     unit_diagonal=False):
    return bind(triangular_solve_p, a, b, left_side=bool(left_side), lower=bool(lower),
                transpose_a=bool(transpose_a), conjugate_a=bool(conjugate_a), unit_diagonal=bool(unit_diagonal))


def _tsolve_abstract(a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    _check_matrix("triangular_solve", a)
    if b.dtype != a.dtype:
        raise TypeError(f"triangular_solve operands must share a dtype, got {a.dtype.name} and {b.dtype.name}")
    if b.ndim != a.ndim or b.shape[:-2] != a.shape[:-2]:
        raise ValueError(f"triangular_solve: batch dimensions differ: a {a.shape}, b {b.shape}")
    m = a.shape[-1]
    if (b.shape[-2] if left_side else b.shape[-1]) != m:
        raise ValueError(f"triangular_solve: a {a.shape} does not fit b {b.shape} (left_side={left_side})")
    return ShapedArray(b.shape, b.dtype)


def _op(x, transpose_a, conjugate_a):
    if conjugate_a:
        x = conj(x)
    return mT(x) if transpose_a else x


def _tsolve_jvp(primals, tangents, **p):
    a, b = primals
    ta, tb = tangents
    x = bind(triangular_solve_p, a, b, **p)
    out = Zero
    if tb is not Zero:
        out = bind(triangular_solve_p, a, tb, **p)
    if ta is not Zero:
        ta = tril(ta) if p["lower"] else triu(ta)
        if p["unit_diagonal"]:
            ta = tril(ta, -1) if p["lower"] else triu(ta, 1)
        opda = _op(ta, p["transpose_a"], p["conjugate_a"])
        rhs = mm(opda, x) if p["left_side"] else mm(x, opda)
        c = E.neg(bind(triangular_solve_p, a, rhs, **p))
        out = c if out is Zero else E.add(out, c)
    return x, out


def _tsolve_transpose(ct, a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    if is_undefined(a):
        raise TypeError("triangular_solve is linear only in b")
    if ct is Zero:
        return [None, Zero]
    # X = op(A)^-1 B is linear in B; its transpose applies op(A)^-T (transpose flag flipped)
    ct_b = bind(triangular_solve_p, a, ct, left_side=left_side, lower=lower, transpose_a=not transpose_a,
                conjugate_a=conjugate_a, unit_diagonal=unit_diagonal)
    return [None, ct_b]


def _tsolve_batch(axis_size, vals, dims, **p):
    (a, b), (da, db) = vals, dims
    if da is None:   # one triangle for the whole batch: b's batch as more columns (rows, solving on the right)
        return _fold_batch(b, db, not p["left_side"], lambda c: bind(triangular_solve_p, a, c, **p)), 0
    return bind(triangular_solve_p, _front(axis_size, a, da), _front(axis_size, b, db), **p), 0


abstract_eval_rules[triangular_solve_p] = _tsolve_abstract
jvp_rules[triangular_solve_p] = _tsolve_jvp
transpose_rules[triangular_solve_p] = _tsolve_transpose
batch_rules[triangular_solve_p] = _tsolve_batch

# ----------------------------------------------------------------------------------- solve
solve_p = Primitive("solve")


def solve(a, b):
    """X with A X = B. One primitive, LAPACK's gesv (getrf + getrs), rather than its steps: eagerly one host call
    where lu, a gather and two triangular solves were four (36x36: ~120 -> ~50 us), and a derivative that
    solves with A again instead of differentiating the factorisation (as JAX's custom_linear_solve does)."""
    return bind(solve_p, a, b)


def lu_solve(a, b):
    """A X = B by LU with partial pivoting, from the primitives: solve's lowering."""
    lu_, _, perm = lu(a)
    y = triangular_solve(lu_, permute_rows(perm, b), left_side=True, lower=True, unit_diagonal=True)
    return triangular_solve(lu_, y, left_side=True, lower=False)


def _solve_abstract(a, b):
    _check_matrix("solve", a)
    if b.dtype != a.dtype:
        raise TypeError(f"solve operands must share a dtype, got {a.dtype.name} and {b.dtype.name}")
    if b.ndim != a.ndim or b.shape[:-2] != a.shape[:-2] or b.shape[-2] != a.shape[-1]:
        raise ValueError(f"solve: a {a.shape} does not fit b {b.shape} (b: (..., M, K), a's batch dims)")
    return ShapedArray(b.shape, b.dtype)


def _solve_jvp(primals, tangents):
    a, b = primals
    ta, tb = tangents
    x = solve(a, b)
    rhs = tb   # d(A^-1 B) = A^-1 (dB - dA X)
    if ta is not Zero:
        ax = mm(ta, x)
        rhs = E.neg(ax) if tb is Zero else E.sub(tb, ax)
    return x, Zero if rhs is Zero else solve(a, rhs)


def _solve_transpose(ct, a, b):
    if is_undefined(a):
        raise TypeError("solve is linear only in b")
    return [None, Zero if ct is Zero else solve(mT(a), ct)]   # (B -> A^-1 B transposes to C -> A^-T C)


def _solve_batch(axis_size, vals, dims):
    (a, b), (da, db) = vals, dims
    if da is None:   # one A for the whole batch: b's batch as more right-hand-side columns (one factorisation, not n)
        return _fold_batch(b, db, False, lambda c: solve(a, c)), 0
    return solve(_front(axis_size, a, da), _front(axis_size, b, db)), 0


abstract_eval_rules[solve_p] = _solve_abstract
jvp_rules[solve_p] = _solve_jvp
transpose_rules[solve_p] = _solve_transpose
batch_rules[solve_p] = _solve_batch

# ------------------------------------------------------------------------------ cholesky
cholesky_p = Primitive("cholesky")


def cholesky(a):
    return bind(cholesky_p, a)


def _chol_abstract(a):
    _check_matrix("cholesky", a)
    return ShapedArray(a.shape, a.dtype)


def _chol_jvp(primals, tangents):
    (a,), (ta,) = primals, tangents
    lo = cholesky(a)
    if ta is Zero:
        return lo, Zero
    # dL = L Phi(L^-1 dA L^-H), Phi = lower triangle with the diagonal halved
    tmp = triangular_solve(lo, ta, left_side=False, lower=True, transpose_a=True, conjugate_a=True)
    tmp = triangular_solve(lo, tmp, left_side=True, lower=True)
    phi = E.sub(tril(tmp), E.mul(tril(triu(tmp)), E.full_like_scalar(tmp, 0.5)))
    return lo, mm(lo, phi)


abstract_eval_rules[cholesky_p] = _chol_abstract
jvp_rules[cholesky_p] = _chol_jvp
batch_rules[cholesky_p] = _batched_unary(cholesky_p)

# ---------------------------------------------------------------------------------- eigh
eigh_p = Primitive("eigh", multiple_results=True)   # a matrix with a non-finite entry: NaN outputs (finite_guard)


def finite_guard(a):
    """(ok, safe) for the iterative kernels' contract (svd_p, eigh_p, eig_p: gesdd, syevd/heevd and geev may never
    return on inf/NaN): ok (bool, a's batch shape) where a matrix is finite, safe = a with the others zeroed. Their
    lowerings run the kernel on safe and put NaN in every output of a matrix not ok; their host kernels skip it."""
    n = _ndim(a)
    fin = (bind(E.is_finite_p, a) if not _is_complex(a) else
           bind(E.and_p, bind(E.is_finite_p, bind(E.real_p, a)), bind(E.is_finite_p, bind(E.imag_p, a))))
    ok = bind(R.reduce_and_p, fin, axes=(n - 2, n - 1))
    return ok, E.select_n(S.broadcast_in_dim(ok, S.shape_of(a), tuple(range(n - 2))), E.full_like_scalar(a, 0), a)


def eigh(a, lower=True):
    """[w, v]: ascending real eigenvalues and orthonormal eigenvectors (columns)."""
    return bind(eigh_p, a, lower=bool(lower))


def _eigh_abstract(a, *, lower):
    _check_matrix("eigh", a)
    return [ShapedArray(a.shape[:-1], real_dtype(a.dtype)), ShapedArray(a.shape, a.dtype)]


def _eigh_jvp(primals, tangents, *, lower):
    (a,), (ta,) = primals, tangents
    w, v = eigh(a, lower)
    if ta is Zero:
        return [w, v], [Zero, Zero]
    n = S.shape_of(a)[-1]
    shp = S.shape_of(a)
    nd = len(shp)
    vdv = mm(mH(v), mm(ta, v))
    dw = real(diagonal(vdv))
    wc = _to_dtype_of(w, a)
    # F[i, j] = 1 / (w_j - w_i) off the diagonal, 0 on it
    wj = S.broadcast_in_dim(wc, shp, tuple(range(nd - 2)) + (nd - 1,))
    wi = S.broadcast_in_dim(wc, shp, tuple(range(nd - 1)))
    one = eye(n, S.dtype_of(a))
    f = E.sub(E.div(E.full_like_scalar(wc, 1), E.add(E.sub(wj, wi), one)), one)
    dv = mm(v, E.mul(f, vdv))
    return [w, v], [dw, dv]


abstract_eval_rules[eigh_p] = _eigh_abstract
jvp_rules[eigh_p] = _eigh_jvp
batch_rules[eigh_p] = _batched_unary(eigh_p)

# ----------------------------------------------------------------------------------- svd
svd_p = Primitive("svd", multiple_results=True)   # a matrix with a non-finite entry: NaN outputs (finite_guard)


def svd(a, full_matrices=False, compute_uv=True):
    return bind(svd_p, a, full_matrices=bool(full_matrices), compute_uv=bool(compute_uv))


def _svd_abstract(a, *, full_matrices, compute_uv):
    _check_matrix("svd", a, square=False)
    m, n = a.shape[-2:]
    k = min(m, n)
    lead = a.shape[:-2]
    s = ShapedArray(lead + (k,), real_dtype(a.dtype))
    if not compute_uv:
        return [s]
    ucols, vrows = (m, n) if full_matrices else (k, k)
    return [s, ShapedArray(lead + (m, ucols), a.dtype), ShapedArray(lead + (vrows, n), a.dtype)]


def _svd_jvp(primals, tangents, *, full_matrices, compute_uv):
    (a,), (ta,) = primals, tangents
    m, n = S.shape_of(a)[-2:]
    if compute_uv and full_matrices and m != n:
        raise NotImplementedError("the derivative of svd with full_matrices=True is defined only for square "
                                  "matrices; use full_matrices=False")
    s, u, vh = svd(a, False, True)
    outs = [s, u, vh] if compute_uv else [s]
    if ta is Zero:
        return outs, [Zero] * len(outs)
    v = mH(vh)
    dp = mm(mH(u), mm(ta, v))                      # U^H dA V, k x k
    ds = real(diagonal(dp))
    if not compute_uv:
        return outs, [ds]
    k = min(m, n)
    dt = S.dtype_of(a)
    sc = _to_dtype_of(s, a)
    shp = S.shape_of(dp)
    nd = len(shp)
    s2 = E.mul(sc, sc)
    sj = S.broadcast_in_dim(s2, shp, tuple(range(nd - 2)) + (nd - 1,))
    si = S.broadcast_in_dim(s2, shp, tuple(range(nd - 1)))
    one = eye(k, dt)
    f = E.sub(E.div(E.full_like_scalar(sc, 1), E.add(E.sub(sj, si), one)), one)
    is0 = bind(E.eq_p, sc, E.full_like_scalar(sc, 0))
    s_inv = E.select_n(is0, E.div(E.full_like_scalar(sc, 1), E.select_n(is0, sc, E.full_like_scalar(sc, 1))),
                       E.full_like_scalar(sc, 0))
    dph = mH(dp)
    om_u = E.mul(f, E.add(scale_cols(dp, sc), scale_rows(dph, sc)))
    om_v = E.mul(f, E.add(scale_rows(dp, sc), scale_cols(dph, sc)))
    if _is_complex(a):
        im = E.convert_element_type(bind(E.imag_p, diagonal(dp)), dt)
        om_u = E.add(om_u, diag_embed(E.mul(E.mul(im, E.full_like_scalar(im, 1j)), s_inv)))
    du = mm(u, om_u)
    dv = mm(v, om_v)
    if m > k:
        x = scale_cols(mm(ta, v), s_inv)               # dA V S^-1
        du = E.add(du, E.sub(x, mm(u, mm(mH(u), x))))
    if n > k:
        y = scale_cols(mm(mH(ta), u), s_inv)           # dA^H U S^-1
        dv = E.add(dv, E.sub(y, mm(v, mm(vh, y))))
    return outs, [ds, du, mH(dv)]


abstract_eval_rules[svd_p] = _svd_abstract
jvp_rules[svd_p] = _svd_jvp
batch_rules[svd_p] = _batched_unary(svd_p)

# ------------------------------------------------------------------------------------ qr
qr_p = Primitive("qr", multiple_results=True)


def qr(a, full_matrices=False):
    return bind(qr_p, a, full_matrices=bool(full_matrices))


def _qr_abstract(a, *, full_matrices):
    _check_matrix("qr", a, square=False)
    m, n = a.shape[-2:]
    k = m if full_matrices else min(m, n)
    lead = a.shape[:-2]
    return [ShapedArray(lead + (m, k), a.dtype), ShapedArray(lead + (k, n), a.dtype)]


def _qr_jvp(primals, tangents, *, full_matrices):
    """Square and tall: the rule on dA R^-1. Wide (m < n): A = [X | Y] with X square gives Q U = X and
    R = [U | Q^H Y], so Q and U move with X by the square rule and dV = dQ^H Y + Q^H dY."""
    (a,), (ta,) = primals, tangents
    q, r = qr(a, full_matrices)
    if ta is Zero:
        return [q, r], [Zero, Zero]
    shape = tuple(S.shape_of(a))
    m, n = shape[-2:]
    if full_matrices and m > n:
        raise NotImplementedError("the derivative of qr with full_matrices=True is implemented for square and "
                                  f"wide matrices; got shape {shape}")
    if m >= n:
        dq, dr = _qr_square_jvp(a, q, r, ta)
        return [q, r], [dq, dr]
    zero, cut = (0,) * len(shape), shape[:-1] + (m,)

    def cols(x, lo, hi):
        return S.slice_(x, zero[:-1] + (lo,), shape[:-1] + (hi,))
    dq, du = _qr_square_jvp(a, q, S.slice_(r, zero, cut), cols(ta, 0, m))
    dv = E.add(mm(mH(dq), cols(a, m, n)), mm(mH(q), cols(ta, m, n)))
    return [q, r], [dq, S.concatenate([du, dv], len(shape) - 1)]


def _qr_square_jvp(a, q, r, ta):
    """(dQ, dR) of Q R = A for square upper-triangular R (A's tall or square part)."""
    x = triangular_solve(r, ta, left_side=False, lower=False)        # dA R^-1
    c = mm(mH(q), x)
    low = tril(c, -1)
    om = E.sub(low, mH(low))
    if _is_complex(a):
        im = E.convert_element_type(bind(E.imag_p, diagonal(c)), S.dtype_of(a))
        om = E.add(om, diag_embed(E.mul(im, E.full_like_scalar(im, 1j))))
    return E.add(mm(q, E.sub(om, c)), x), mm(E.sub(c, om), r)


abstract_eval_rules[qr_p] = _qr_abstract
jvp_rules[qr_p] = _qr_jvp
batch_rules[qr_p] = _batched_unary(qr_p)

# ------------------------------------------------------------------------------------ lu
lu_p = Primitive("lu", multiple_results=True)


def lu(a):
    """[lu, pivots, permutation]: a[..., perm, :] = L U, L unit lower (below lu's diagonal), U upper."""
    return bind(lu_p, a)


def _lu_abstract(a):
    _check_matrix("lu", a, square=False)
    m, n = a.shape[-2:]
    lead = a.shape[:-2]
    return [ShapedArray(a.shape, a.dtype), ShapedArray(lead + (min(m, n),), np.int32),
            ShapedArray(lead + (m,), np.int32)]


def permute_rows(perm, b):
    """b[..., perm[..., i], :] as row i: P @ b for P the permutation matrix of perm, by a gather of whole rows
    (O(m k), where the product is O(m^2 k): a solve with a square right side paid 1.5x its LU for it)."""
    shp = S.shape_of(b)
    nd = len(shp)
    if 0 in shp:
        return b   # (empty: nothing to permute, and no window of size one to gather along a dim of size 0)
    batch = tuple(range(nd - 2))
    dn = ((nd - 1,), (nd - 2,), (nd - 2,), batch, batch)   # (offset, collapsed, index map, batching dims)
    idx = S.reshape(perm, tuple(S.shape_of(perm)) + (1,))
    return I.gather(b, idx, dn, (1,) * (nd - 1) + (shp[-1],))


def _lu_jvp(primals, tangents):
    (a,), (ta,) = primals, tangents
    lu_, piv, perm = lu(a)
    outs = [lu_, piv, perm]
    if ta is Zero:
        return outs, [Zero, Zero, Zero]
    m, n = S.shape_of(a)[-2:]
    if m != n:
        raise NotImplementedError(f"the derivative of lu is implemented for square matrices; got {S.shape_of(a)}")
    dt = S.dtype_of(a)
    pa = permute_rows(perm, ta)
    x = triangular_solve(lu_, pa, left_side=True, lower=True, unit_diagonal=True)
    x = triangular_solve(lu_, x, left_side=False, lower=False)
    lower = E.add(tril(lu_, -1), eye(m, dt))
    upper = triu(lu_)
    dlu = E.add(mm(lower, tril(x, -1)), mm(triu(x), upper))
    return outs, [dlu, Zero, Zero]


abstract_eval_rules[lu_p] = _lu_abstract
jvp_rules[lu_p] = _lu_jvp
batch_rules[lu_p] = _batched_unary(lu_p)

# ----------------------------------------------------------------------------------- eig
eig_p = Primitive("eig", multiple_results=True)   # a matrix with a non-finite entry: NaN outputs (finite_guard)


def eig(a):
    """[w, v]: complex eigenvalues and right eigenvectors (unit-norm columns). For a real `a` the
    lowering uses the real LAPACK path, so non-real eigenpairs come in exactly conjugate pairs."""
    return bind(eig_p, a)


def _eig_abstract(a):
    _check_matrix("eig", a)
    c = complex_dtype(a.dtype)
    return [ShapedArray(a.shape[:-1], c), ShapedArray(a.shape, c)]


abstract_eval_rules[eig_p] = _eig_abstract
batch_rules[eig_p] = _batched_unary(eig_p)
jvp_gaps[eig_p] = ("eigenvectors of a general matrix are defined only up to a complex scale, and the "
                   "eigenvalue derivative is not implemented; differentiate eigh for Hermitian matrices")
