"""Lowering of the decompositions to jaxlib's CPU LAPACK kernels (typed-FFI custom calls).

Facts used (verified, see shared/notes/jaxlib-runtime.md section 5): targets are
`lapack_{s,d,c,z}<name>_ffi`, called with api_version 4 and the kernel attributes as a
dictionary backend_config of single characters (ui8). LAPACK is column-major, so matrix
operands/results get the minor-to-major layout (r-2, r-1, r-3, ..., 0); vectors and
scalars keep the default. Leading dimensions are batch dimensions. A nonzero `info`
becomes NaN outputs (select ops), as a failed factorisation has no meaningful value.

triangular_solve is LAPACK's trsm too, on one OpenBLAS thread up to host_blas's bound like every kernel here
(XLA's expander of stablehlo.triangular_solve inverts blocks of the triangle: 1.7 ms against 0.96 for a 50x50
triangle with 2000 right sides; scipy 0.43 on two threads). It was reverted once, when trsm ran on OpenBLAS's
threads inside XLA's, which then contended for the cores (a jitted GaussianMixture fit 40 -> 70 ms on 2 cores);
on one thread the fit is ~5% faster. An empty operand keeps the native op.
"""
from __future__ import annotations

import contextlib
import functools
import math
import threading

import numpy as np

from transforms.core import bind
from transforms.jaxpr_transforms import stage
from transforms.primitives import lapack as LP
from transforms.primitives.linalg import dot_general
from transforms.primitives.structural import reshape

from . import _jaxlib
from ._jaxlib import hlo, ir
from .host import host_kernels, scipy_function
from .host_blas import jit_target, one_thread, one_thread_handler, small
from .lower_shard_map import program_partitions
from .lowering import constant, fill_region, jaxpr_subcomp, lowering_rules, tensor_type, ttype

_PREFIX = {"float32": "s", "float64": "d", "complex64": "c", "complex128": "z"}


def _target(name, dtype):
    return f"lapack_{_PREFIX[np.dtype(dtype).name]}{name}_ffi"


def _layout(rank, matrix):
    if matrix and rank >= 2:
        dims = (rank - 2, rank - 1) + tuple(range(rank - 3, -1, -1))
    else:
        dims = tuple(range(rank - 1, -1, -1))
    return ir.DenseIntElementsAttr.get(np.array(dims, np.int64), type=ir.IndexType.get())


def _char(c):
    return ir.IntegerAttr.get(ir.IntegerType.get_unsigned(8), ord(c))


_registered, _register_lock = False, threading.Lock()


def _register():
    """Register jaxlib's LAPACK FFI kernels (once; without initialize() they segfault), each also under
    host_blas.jit_target's name, run on one OpenBLAS thread (the target calls on small operands use)."""
    global _registered
    with _register_lock:
        if _registered:
            return
        from jaxlib.cpu import _lapack
        for name, capsule in _lapack.registrations().items():
            for target, handler in ((name, capsule), (jit_target(name), one_thread_handler(capsule))):
                _jaxlib.xc.register_custom_call_target(target, handler, platform="cpu", api_version=1)
                if name.endswith("_ffi"):   # SPMD: partitioned along leading (batch) dimensions
                    _jaxlib.xc.register_custom_call_as_batch_partitionable(target)
        _lapack.initialize()
        _registered = True


def lapack_call(name, dtype, operands, operand_matrix, results, result_matrix, **attrs):
    """Emit a LAPACK FFI custom call. `results` are (shape, dtype) pairs; *_matrix flag the
    operands/results stored column-major. Returns the result Values. Operands totalling at most
    host_blas's bound run their BLAS on one thread, as eager kernels do (see xla/host_blas.py)."""
    if not _registered:
        _register()
    in_shapes = [ir.RankedTensorType(o.type).shape for o in operands]
    in_ranks = [len(s) for s in in_shapes]
    target = _target(name, dtype)
    if small(sum(math.prod(s) for s in in_shapes)):
        target = jit_target(target)
    op = hlo.CustomCallOp(
        [tensor_type(s, d) for s, d in results], list(operands), target,
        api_version=ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 4),
        backend_config=ir.DictAttr.get({k: _char(v) for k, v in attrs.items()}),
        operand_layouts=ir.ArrayAttr.get([_layout(r, m) for r, m in zip(in_ranks, operand_matrix)]),
        result_layouts=ir.ArrayAttr.get([_layout(len(s), m) for (s, _), m in zip(results, result_matrix)]))
    nb = max(in_ranks) - 2   # (leading dimensions of the matrix operands: batch, partitionable in SPMD)
    if nb > 0 and min(in_ranks + [len(s) for s, _ in results]) >= nb:
        op.attributes["mhlo.frontend_attributes"] = ir.DictAttr.get({"num_batch_dims": ir.StringAttr.get(str(nb))})
        op.attributes["sdy.sharding_rule"] = _batch_rule(nb, in_shapes,
                                                         [s for s, _ in results])
    return list(op.results)


def _batch_rule(nb, in_shapes, out_shapes):
    """Shardy's rule for a kernel mapped over `nb` leading dimensions: those shared by every operand and result
    (split alike), every other dimension a factor of its own (XLA's batch partitioner replicates those)."""
    sizes = []   # factor k's size; its name is Shardy's k-th symbol (i, j, ..., z, z_1, z_2, ...)

    def factor(size):
        sizes.append(size)
        k = len(sizes) - 1
        return chr(ord("i") + k) if k < 18 else f"z_{k - 17}"
    batch = [factor(size) for size in in_shapes[0][:nb]]
    maps = [", ".join("[" + ", ".join(batch + [factor(size) for size in shape[nb:]]) + "]" for shape in shapes)
            for shapes in (in_shapes, out_shapes)]
    decl = ", ".join(f"{chr(ord('i') + k) if k < 18 else f'z_{k - 17}'}={v}" for k, v in enumerate(sizes))
    return ir.Attribute.parse(f"#sdy.op_sharding_rule<({maps[0]})->({maps[1]}) {{{decl}}}, custom>")


# --------------------------------------------------------------------------- helpers

def _cmp(x, y, direction, kind="SIGNED"):
    return hlo.CompareOp(x, y, hlo.ComparisonDirectionAttr.get(direction),
                         compare_type=hlo.ComparisonTypeAttr.get(kind)).result


def _to(x, dtype):
    """x converted to dtype (a real to a complex: imaginary part 0), of x's shape."""
    t = ir.RankedTensorType(x.type)
    return hlo.ConvertOp(tensor_type(tuple(t.shape), dtype), x).result


def _bcast(x, shape, dtype, dims):
    return hlo.BroadcastInDimOp(tensor_type(shape, dtype), x, broadcast_dimensions=list(dims)).result


def _splat(value, shape, dtype):
    return _bcast(constant(value, dtype), shape, dtype, ())


def _nan_if_failed(x, ok, shape, dtype):
    """x where ok (bool[batch]) holds, NaN elsewhere; ok's dims are x's leading dims."""
    nb = len(ir.RankedTensorType(ok.type).shape)
    okb = _bcast(ok, shape, np.bool_, range(nb))
    return hlo.SelectOp(okb, x, _splat(np.nan, shape, dtype)).result


def _guarded(rule):
    """The lowering of svd_p, eigh_p, eig_p under their contract (LP.finite_guard): the kernel runs on the batch with
    each non-finite matrix zeroed (gesdd, syevd/heevd and geev may never return on inf/NaN), and every output of
    such a matrix is NaN."""
    def lower(c, a, **params):
        closed = _guard_jaxpr(c.avals_in[0])
        ok, safe = jaxpr_subcomp(closed.jaxpr, closed.consts, [a])
        return [_nan_if_failed(o, ok, av.shape, av.dtype) for o, av in zip(rule(c, safe, **params), c.avals_out)]
    return lower


@functools.lru_cache(maxsize=64)
def _guard_jaxpr(aval):
    return stage(lambda a: list(LP.finite_guard(a)), [aval])


def _info_ok(info, batch, strict=True):
    zero = _splat(0, batch, np.int32)
    return _cmp(info, zero, "EQ" if strict else "GE")


def _tri_keep(shape, lower, k=0):
    """bool[shape]: True on the kept triangle of the trailing matrix dims."""
    nd = len(shape)
    r = hlo.IotaOp(tensor_type(shape, np.int32), nd - 2).result
    c = hlo.IotaOp(tensor_type(shape, np.int32), nd - 1).result
    d = hlo.SubtractOp(c, r).result
    return _cmp(d, _splat(k, shape, np.int32), "LE" if lower else "GE")


def _zero_outside(x, shape, dtype, lower, k=0):
    return hlo.SelectOp(_tri_keep(shape, lower, k), x, _splat(0, shape, dtype)).result


def _slice(x, limits):
    return hlo.SliceOp(x, [0] * len(limits), list(limits), [1] * len(limits)).result


# -------------------------------------------------------------------------- cholesky

def _cholesky(c, a):
    av = c.avals_in[0]
    shape, dt, batch = av.shape, av.dtype, av.shape[:-2]
    fac, info = lapack_call("potrf", dt, [a], [True], [(shape, dt), (batch, np.int32)], [True, False],
                            uplo="L")
    fac = _zero_outside(fac, shape, dt, lower=True)
    return _nan_if_failed(fac, _info_ok(info, batch), shape, dt)


lowering_rules[LP.cholesky_p] = _cholesky

# ------------------------------------------------------------------------------ eigh


def _eigh(c, a, *, lower):
    av = c.avals_in[0]
    w_av = c.avals_out[0]
    shape, dt, batch = av.shape, av.dtype, av.shape[:-2]
    v, w, info = lapack_call("heevd" if dt.kind == "c" else "syevd", dt, [a], [True],
                             [(shape, dt), (w_av.shape, w_av.dtype), (batch, np.int32)], [True, False, False],
                             mode="V", uplo="L" if lower else "U")
    ok = _info_ok(info, batch)
    return [_nan_if_failed(w, ok, w_av.shape, w_av.dtype), _nan_if_failed(v, ok, shape, dt)]


lowering_rules[LP.eigh_p] = _guarded(_eigh)

# ------------------------------------------------------------------------------- svd


def _svd(c, a, *, full_matrices, compute_uv):
    av = c.avals_in[0]
    shape, dt, batch = av.shape, av.dtype, av.shape[:-2]
    m, n = shape[-2:]
    p = program_partitions()
    if p > 1 and not batch and not full_matrices and m % p == 0 and m // p >= n > 0:
        closed = _tsqr_svd(av, p, compute_uv)
        return jaxpr_subcomp(closed.jaxpr, closed.consts, [a])
    k = min(m, n)
    s_av = c.avals_out[0]
    full = full_matrices and compute_uv
    ushape = batch + ((m, m) if full else (m, k))
    vshape = batch + ((n, n) if full else (k, n))
    if k == 0:
        outs = [_splat(0, s_av.shape, s_av.dtype)]
        if compute_uv:
            outs += [_eye(ushape, dt), _eye(vshape, dt)]
        return outs
    _, s, u, vt, info = lapack_call(
        "gesdd", dt, [a], [True],
        [(shape, dt), (s_av.shape, s_av.dtype), (ushape, dt), (vshape, dt), (batch, np.int32)],
        [True, False, True, True, False], mode="A" if full else "S" if compute_uv else "N")
    ok = _info_ok(info, batch)
    outs = [_nan_if_failed(s, ok, s_av.shape, s_av.dtype)]
    if compute_uv:
        outs += [_nan_if_failed(u, ok, ushape, dt), _nan_if_failed(vt, ok, vshape, dt)]
    return outs


@functools.lru_cache(maxsize=64)
def _tsqr_svd(av, p, compute_uv):
    """The thin svd of a tall [m, n] matrix in an SPMD program of p partitions, as a jaxpr XLA can partition
    over rows (gesdd on the whole matrix would gather it onto every device): a QR of each of p row blocks (one
    batched, batch-partitioned geqrf), a QR of their stacked [p n, n] R factors, the svd of that small R; U is
    each block's Q times its part of the small factors. The same factorisation up to rounding (and each
    singular vector's sign, which LAPACK does not fix either)."""
    m, n = av.shape
    dims = lambda a, b: (((a,), (b,)), ((), ()))

    def tsqr(x):
        q1, r1 = bind(LP.qr_p, reshape(x, (p, m // p, n)), full_matrices=False)
        q2, r2 = bind(LP.qr_p, reshape(r1, (p * n, n)), full_matrices=False)
        outs = bind(LP.svd_p, r2, full_matrices=False, compute_uv=compute_uv)
        if not compute_uv:
            return outs
        s, u2, vt = outs
        w = reshape(dot_general(q2, u2, dims(1, 0)), (p, n, n))
        u = dot_general(q1, w, (((2,), (1,)), ((0,), (0,))))
        return [s, reshape(u, (m, n)), vt]
    return stage(tsqr, [av])


def _eye(shape, dtype):
    nd = len(shape)
    r = hlo.IotaOp(tensor_type(shape, np.int32), nd - 2).result
    c = hlo.IotaOp(tensor_type(shape, np.int32), nd - 1).result
    return hlo.SelectOp(_cmp(r, c, "EQ"), _splat(1, shape, dtype), _splat(0, shape, dtype)).result


lowering_rules[LP.svd_p] = _guarded(_svd)

# -------------------------------------------------------------------------------- qr


def _qr(c, a, *, full_matrices):
    av = c.avals_in[0]
    shape, dt, batch = av.shape, av.dtype, av.shape[:-2]
    m, n = shape[-2:]
    k = min(m, n)
    q_av, r_av = c.avals_out
    if k == 0:
        return [_eye(q_av.shape, dt), _splat(0, r_av.shape, dt)]
    fac, tau = lapack_call("geqrf", dt, [a], [True], [(shape, dt), (batch + (k,), dt)], [True, False])
    qcols = q_av.shape[-1]
    if qcols > n:      # complete Q of a tall matrix: extend with zero columns, orgqr fills them in
        zshape = batch + (m, qcols - n)
        qin = hlo.ConcatenateOp([fac, _splat(0, zshape, dt)], len(shape) - 1).result
    elif qcols < n:    # wide matrix: the reflectors live in the first m columns
        qin = _slice(fac, batch + (m, qcols))
    else:
        qin = fac
    qshape = batch + (m, qcols)
    (q,) = lapack_call("ungqr" if dt.kind == "c" else "orgqr", dt, [qin, tau], [True, False],
                       [(qshape, dt)], [True])
    r = fac if r_av.shape[-2] == m else _slice(fac, batch + (r_av.shape[-2], n))
    if r_av.shape[-2] > m:
        raise AssertionError("unreachable: R has at most m rows")
    r = _zero_outside(r, r_av.shape, dt, lower=False)
    return [q, r]


lowering_rules[LP.qr_p] = _qr

# -------------------------------------------------------------------------------- lu


def _perm_from_pivots(piv, batch, m, k):
    """The row permutation LAPACK's pivots stand for: the swaps i <-> piv[i] (i = 0..k-1, in order) applied to the
    identity, i.e. the composition t_0 o t_1 o ... o t_{k-1} of the transpositions t_i (perm[j] = t_0(t_1(...(j)))).
    Composition is associative, so the k transpositions, as rows of index vectors, are composed pairwise in
    ceil(log2 k) levels of one gather each (a o b = a[b]). A while loop over the swaps ran ~12 XLA thunks per swap:
    ~300 us for one 66x66 solve, a third of a jitted GaussianMixture fit."""
    i32 = np.int32
    nb = len(batch)
    tshape = batch + (k, m)
    j = hlo.IotaOp(tensor_type(tshape, i32), nb + 1).result
    i = hlo.IotaOp(tensor_type(tshape, i32), nb).result
    p = _bcast(piv, tshape, i32, range(nb + 1))
    t = hlo.SelectOp(_cmp(j, i, "EQ"), p, hlo.SelectOp(_cmp(j, p, "EQ"), i, j).result).result   # t_i(j)
    h = k
    while h > 1:
        if h % 2:   # (an odd count: the identity composed last)
            ident = hlo.IotaOp(tensor_type(batch + (1, m), i32), nb + 1).result
            t, h = hlo.ConcatenateOp([t, ident], nb).result, h + 1
        half = batch + (h // 2, m)
        ends = list(batch + (h, m))
        first, second = [0] * (nb + 2), [0] * nb + [1, 0]
        strides = [1] * nb + [2, 1]
        a = hlo.SliceOp(t, first, ends, strides).result    # t_0, t_2, ...
        b = hlo.SliceOp(t, second, ends, strides).result   # t_1, t_3, ...
        idx = hlo.ReshapeOp(tensor_type(half + (1,), i32), b).result
        dims = hlo.GatherDimensionNumbers.get(
            offset_dims=[], collapsed_slice_dims=[nb + 1], operand_batching_dims=list(range(nb + 1)),
            start_indices_batching_dims=list(range(nb + 1)), start_index_map=[nb + 1], index_vector_dim=nb + 2)
        t = hlo.GatherOp(a, idx, dims, [1] * (nb + 2), indices_are_sorted=False).result   # a[..., b]
        h //= 2
    return hlo.ReshapeOp(tensor_type(batch + (m,), i32), t).result


def _lu(c, a):
    av = c.avals_in[0]
    shape, dt, batch = av.shape, av.dtype, av.shape[:-2]
    m, n = shape[-2:]
    k = min(m, n)
    i32 = np.int32
    if k == 0:
        return [a, _splat(0, batch + (0,), i32), hlo.IotaOp(tensor_type(batch + (m,), i32), len(batch)).result]
    fac, ipiv, info = lapack_call("getrf", dt, [a], [True],
                                  [(shape, dt), (batch + (k,), i32), (batch, i32)], [True, False, False])
    piv = hlo.SubtractOp(ipiv, _splat(1, batch + (k,), i32)).result   # LAPACK pivots are 1-based
    perm = _perm_from_pivots(piv, batch, m, k)
    # info > 0 only reports an exactly singular U (the factorisation is still valid)
    fac = _nan_if_failed(fac, _info_ok(info, batch, strict=False), shape, dt)
    return [fac, piv, perm]


lowering_rules[LP.lu_p] = _lu

# ------------------------------------------------------------------------------- eig


def _geev_scale(a, shape, rdt):
    """Per matrix, a power of two s (real, shape batch) bringing max|a| into [2, 4) where it lies outside LAPACK's
    safe range [sqrt(tiny)/eps, its inverse], 1 elsewhere (and for 0, a subnormal max, inf, NaN). jaxlib's geev
    scales such a matrix into that range but returns the scaled matrix's eigenvalues (jit(eigvals) of a matrix
    times 1e150 gave 1.9e138, issue 24); scaled here first, its eigenvalues are right once divided by s. Both
    steps are exact (powers of two), s and 1/s normal numbers (XLA's CPU flushes subnormals)."""
    rdt = np.dtype(rdt)
    nd, batch = len(shape), shape[:-2]
    info, idt = np.finfo(rdt), np.dtype(f"int{rdt.itemsize * 8}")
    bias, mbits = info.maxexp - 1, info.nmant
    r = hlo.ReduceOp([tensor_type(batch, rdt)], [hlo.AbsOp(a).result], [constant(0, rdt)], dimensions=[nd - 2, nd - 1])
    scalar = tensor_type((), rdt)
    fill_region(r.body, [scalar, scalar], lambda p, q: [hlo.MaxOp(p, q).result])
    m = r.result
    small = float(np.sqrt(info.tiny) / info.eps)
    out = hlo.OrOp(_cmp(m, _splat(1 / small, batch, rdt), "GT", "FLOAT"),
                   hlo.AndOp(_cmp(m, _splat(small, batch, rdt), "LT", "FLOAT"),
                             _cmp(m, _splat(info.tiny, batch, rdt), "GE", "FLOAT")).result).result
    ok = hlo.AndOp(out, _cmp(m, _splat(info.max, batch, rdt), "LE", "FLOAT")).result   # (not inf, not NaN)
    e = hlo.ShiftRightLogicalOp(hlo.BitcastConvertOp(tensor_type(batch, idt), m).result,
                                _splat(mbits, batch, idt)).result   # m's biased exponent, 1 .. 2 * bias here
    sbits = hlo.ShiftLeftOp(hlo.SubtractOp(_splat(2 * bias + 1, batch, idt), e).result, _splat(mbits, batch, idt))
    s = hlo.BitcastConvertOp(tensor_type(batch, rdt), sbits.result).result   # 2 ** (1 - exponent of m)
    return hlo.SelectOp(ok, s, _splat(1, batch, rdt)).result


def _eig(c, a):
    av = c.avals_in[0]
    shape, batch = av.shape, av.shape[:-2]
    cdt = c.avals_out[0].dtype
    wshape = batch + (shape[-1],)
    s = _geev_scale(a, shape, LP.real_dtype(av.dtype))
    a = hlo.MulOp(a, _bcast(_to(s, av.dtype), shape, av.dtype, range(len(batch)))).result
    if av.dtype != cdt:
        # real input: the real geev (wr + i*wi). Its complex eigenvalues come in exactly conjugate
        # pairs (wr equal, wi negated), as do the eigenvectors the kernel unpacks from LAPACK's
        # packed form, so real polynomials built from them (np.poly, scipy.signal.zpk2tf) stay real.
        rdt = av.dtype
        wr, wi, _vl, vr, info = lapack_call("geev", rdt, [a], [True],
                                            [(wshape, rdt), (wshape, rdt), (shape, cdt), (shape, cdt),
                                             (batch, np.int32)],
                                            [False, False, True, True, False], compute_left="N", compute_right="V")
        w = hlo.ComplexOp(wr, wi).result
    else:
        w, _vl, vr, info = lapack_call("geev", cdt, [a], [True],
                                       [(wshape, cdt), (shape, cdt), (shape, cdt), (batch, np.int32)],
                                       [False, True, True, False], compute_left="N", compute_right="V")
    ok = _info_ok(info, batch)
    w = hlo.DivOp(w, _bcast(_to(s, cdt), wshape, cdt, range(len(batch)))).result
    return [_nan_if_failed(w, ok, wshape, cdt), _nan_if_failed(vr, ok, shape, cdt)]


lowering_rules[LP.eig_p] = _guarded(_eig)

# --------------------------------------------------------------------- triangular_solve


def _triangular_solve(c, a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    av, bv = c.avals_in
    cplx = av.dtype.kind == "c"
    if conjugate_a and cplx and not transpose_a:
        a = hlo.ComplexOp(hlo.RealOp(a).result, hlo.NegOp(hlo.ImagOp(a).result).result).result
    trans = ("C" if conjugate_a and cplx else "T") if transpose_a else "N"
    if 0 not in bv.shape:   # (LAPACK's trsm, as numpy/scipy run it; LAPACK refuses a leading dimension of 0)
        return lapack_call("trsm", av.dtype, [a, b], [True, True], [(bv.shape, bv.dtype)], [True],
                           side="L" if left_side else "R", uplo="L" if lower else "U", trans_x=trans,
                           diag="U" if unit_diagonal else "N")[0]
    mode = {"N": "NO_TRANSPOSE", "T": "TRANSPOSE", "C": "ADJOINT"}[trans]
    return hlo.TriangularSolveOp(a, b, bool(left_side), bool(lower), bool(unit_diagonal),
                                 hlo.TransposeAttr.get(mode), results=[ttype(c.avals_out[0])]).result


lowering_rules[LP.triangular_solve_p] = _triangular_solve


def _solve(c, a, b):
    closed = stage(lambda x, y: [LP.lu_solve(x, y)], list(c.avals_in))
    return jaxpr_subcomp(closed.jaxpr, closed.consts, [a, b])[0]


lowering_rules[LP.solve_p] = _solve


# ============================================================== host kernels (eager on the CPU)
# numpy.linalg runs the same LAPACK drivers the lowerings call (potrf, syevd/heevd, gesdd, geqrf+orgqr,
# geev), single precision staying single. Where one matrix of a batch fails (LinAlgError: not positive
# definite, no convergence), that matrix's outputs are NaN, as the lowering's info check makes them.
# NumPy exposes no getrf or trsm: lu calls scipy's getrf and triangular_solve its trsm (scipy.linalg.lapack/blas,
# the library jaxlib's kernels call under jit; jaxlib requires scipy); both decline (NotImplemented: the XLA
# executable runs) where scipy is missing, on non-finite input, whose NaN placement is the LAPACK kernel's own,
# and triangular_solve on a singular triangle.
# solve is NumPy's gesv (getrf + getrs: the same factorisation as its lowering's, the two triangular solves
# LAPACK's instead of XLA's, equal to rounding); it declines non-finite input and an exactly singular matrix.

def _per_matrix(fn, a, spec, finite=False):
    """fn(a) -> list of arrays, batched; where NumPy refuses the batch, one matrix at a time, NaN outputs for those it
    refuses; with `finite` (LP.finite_guard's: svd's, eigh's, eig's LAPACK may never return) for any non-finite too."""
    with contextlib.suppress(np.linalg.LinAlgError):
        if not finite or np.isfinite(a).all():
            return list(fn(a))
    outs = [np.full(a.shape[:-2] + shp, np.nan, dt) for shp, dt in spec]
    for idx in np.ndindex(*a.shape[:-2]):
        with contextlib.suppress(np.linalg.LinAlgError):
            for o, r in zip(outs, fn(a[idx]) if not finite or np.isfinite(a[idx]).all() else ()):
                o[idx] = r
    return outs


def _stack(x):
    return x.reshape((math.prod(x.shape[:-2]),) + x.shape[-2:])   # (its matrices; math.prod: ~0.1 us, np.prod ~3)


def _h_cholesky(a):
    return _per_matrix(lambda x: [np.linalg.cholesky(x)], a, [(a.shape[-2:], a.dtype)])[0]


def _h_eigh(a, *, lower):
    rdt = np.dtype(LP.real_dtype(a.dtype))
    return _per_matrix(lambda x: np.linalg.eigh(x, UPLO="L" if lower else "U"), a,
                       [(a.shape[-1:], rdt), (a.shape[-2:], a.dtype)], finite=True)


def _h_svd(a, *, full_matrices, compute_uv):
    m, n = a.shape[-2:]
    k = min(m, n)
    rdt = np.dtype(LP.real_dtype(a.dtype))
    full = full_matrices and compute_uv
    uc, vr = (m, n) if full else (k, k)   # (k == 0: NumPy's empty factors, identities where full, as the lowering's)
    if not compute_uv:   # (gesdd's values-only path, as the lowering's mode "N")
        return _per_matrix(lambda x: [np.linalg.svd(x, compute_uv=False)], a, [((k,), rdt)], finite=True)
    u, s, vh = _per_matrix(lambda x: np.linalg.svd(x, full_matrices=full), a,
                           [((m, uc), a.dtype), ((k,), rdt), ((vr, n), a.dtype)], finite=True)
    return [s, u, vh]


def _h_qr(a, *, full_matrices):   # (an empty matrix: NumPy's identity Q and empty R, as the lowering's)
    return list(np.linalg.qr(a, mode="complete" if full_matrices else "reduced"))


def _h_eig(a):
    cdt = np.dtype(LP.complex_dtype(a.dtype))
    n = a.shape[-1]
    w, v = _per_matrix(np.linalg.eig, a, [((n,), cdt), ((n, n), cdt)], finite=True)
    return [w.astype(cdt, copy=False), v.astype(cdt, copy=False)]


def _h_lu(a):
    getrf = _scipy_routine(a.dtype, "getrf")
    if getrf is None or not np.isfinite(a).all():
        return NotImplemented
    batch, (m, n) = a.shape[:-2], a.shape[-2:]
    k = min(m, n)
    x = _stack(a).copy()
    piv = np.zeros((x.shape[0], k), np.int32)
    for b in range(x.shape[0] if k else 0):
        x[b], piv[b], _ = getrf(x[b])   # (0-based pivots; info > 0: U exactly singular, still valid)
    perm = np.empty((x.shape[0], m), np.int32)
    for b, pv in enumerate(piv.tolist()):   # the row swaps j <-> piv[j], in order, on the identity
        pm = list(range(m))
        for j, p in enumerate(pv):
            pm[j], pm[p] = pm[p], pm[j]
        perm[b] = pm
    return [x.reshape(a.shape), piv.reshape(batch + (k,)), perm.reshape(batch + (m,))]


@functools.lru_cache(maxsize=None)
def _scipy_routine(dtype, name):
    """scipy's LAPACK or BLAS routine `name` for `dtype` (getrf -> dgetrf for float64; f2py's calls cost ~1 us),
    or None: another dtype, or no scipy. (Cached: the lookup cost ~1.7 us, dtype.name alone ~1.)"""
    full = _PREFIX.get(dtype.name, "?") + name
    return scipy_function("linalg.lapack", full) or scipy_function("linalg.blas", full)


def _h_triangular_solve(a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    """BLAS trsm, one matrix at a time (the triangle of `a` it names read, the other ignored). trsm is column-major,
    where a row-major matrix reads as its transpose: op(A) X = B is X^T op(A)^T = B^T, the side and the triangle
    swapped, the same op."""
    trsm = _scipy_routine(a.dtype, "trsm")
    if trsm is None or not (np.isfinite(a).all() and np.isfinite(b).all()) or not (
            unit_diagonal or np.diagonal(a, 0, -2, -1).all()):
        return NotImplemented   # (a zero on the diagonal: the lowering's inf/NaN pattern is XLA's own)
    t = np.conj(a) if conjugate_a and not transpose_a else a
    x = np.array(b, order="C")   # (solved in place, matrix by matrix)
    flags = dict(side=int(left_side), lower=int(not lower), diag=int(unit_diagonal),
                 trans_a=(2 if conjugate_a else 1) if transpose_a else 0)
    for tm, xm in zip(_stack(t), _stack(x)) if x.size else ():
        xm[...] = trsm(1.0, tm.T, xm.T, **flags).T
    return x


def _h_solve(a, b):
    """LAPACK gesv; declines non-finite operands and a singular matrix (the lowering's LU: XLA's inf/NaN)."""
    try:
        return np.linalg.solve(a, b) if np.isfinite(a).all() and np.isfinite(b).all() else NotImplemented
    except np.linalg.LinAlgError:
        return NotImplemented


for _p, _k in ((LP.cholesky_p, _h_cholesky), (LP.eigh_p, _h_eigh), (LP.svd_p, _h_svd), (LP.qr_p, _h_qr),
               (LP.eig_p, _h_eig), (LP.lu_p, _h_lu), (LP.triangular_solve_p, _h_triangular_solve),
               (LP.solve_p, _h_solve)):
    host_kernels[_p] = one_thread(_k)

