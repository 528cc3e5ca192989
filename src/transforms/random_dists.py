"""More of `jax.random`'s samplers (exponential ... poisson): the public functions and their raw-value bodies.

Same contract as `transforms.random` (which re-exports these): each public function checks its arguments
through `random_args` (TypeError for a non-key, a bad shape or dtype; ValueError for parameters that do not
broadcast to shape, or an invalid Python-number parameter) and runs one raw-value body as one staged call.
Parameters broadcast against `shape` as in JAX; shape=None means the parameters' broadcast shape.

Constructions. The continuous ones use u_m, uniform's grid midpoints (in (0, 1), symmetric about 1/2, one
word per sample, as `normal` does): exponential -log(1 - u_m), laplace and logistic their inverse CDFs, cauchy
tan(pi (u_m - 1/2)); truncated_normal is the normal quantile (ndtri) of a uniform on [Phi(lo), Phi(hi)],
computed on the side of 0 where the interval's Phi values are small (so a bound deep in either tail keeps
its precision); gamma is Marsaglia-Tsang ("A simple method for generating gamma variables", 2000) with a
rejection `while` over the whole array (each round draws fresh normals and uniforms from fold_in(key, round)
and fills the still-rejected entries; about 5% are rejected per round) and the boost u**(1/a) for a < 1,
carried in log space so beta and dirichlet normalise without underflow; beta and dirichlet normalise
gammas; chisquare is 2 gamma(df/2); t is normal / sqrt(chisquare / df); poisson is Knuth's product of
uniforms for lam < 10 and Hoermann's transformed rejection PTRS ("The transformed rejection method for
generating Poisson random variables", 1993) for lam >= 10, Knuth a `while` over the whole array, PTRS a
queue of the entries still to accept, m at a time (a rejected entry is queued again at the back);
rademacher is one random bit per sample.

Array parameters outside the domain cannot raise under jit, so they give NaN (-1 for poisson), as JAX does;
a Python-number parameter outside the domain raises ValueError.
"""
from __future__ import annotations

import numpy as np

from .control_flow_while import while_raw
from .primitives import elementwise as E
from .primitives import indexing as I
from .primitives import reductions as R
from .primitives import sorting as SO
from .primitives import special_erf as SE
from .primitives import structural as S
from .random_args import _aval, _bound, _call, _float_dtype, _int_dtype, _is_array, _key_raw, _shape
from .random_bits import I64, U64, _fold_body, _split_body, bits32, blocks, c, const, size, uniform01, unit
from .primitives.raw_ops import log_pos
from .random_samplers import _normal_body, normal_quantile, take

__all__ = ["exponential", "laplace", "logistic", "cauchy", "rademacher", "truncated_normal", "gamma", "beta",
           "dirichlet", "chisquare", "t", "poisson"]


# ---------------------------------------------------------------- raw helpers

def _b(p, x, *y, **kw): return E.bind(p, x, *y, **kw)
def _log(x): return _b(E.log_p, x)
def _where(p, x, y): return E.select_n(p, y, x)


def _log1m(u):
    """log(1 - u) for u in (0, 1) on _mid01's grid (or |2u - 1|), where 1 - u is exact: as accurate as log1p(-u)
    (float64 within 1 ulp, float32 1.2 ulp), and XLA vectorises it (raw_ops.log_pos): ~3x faster at float64."""
    return log_pos(E.sub(c(u, 1.0), u))


def _keys(k, n):
    """n independent raw keys from k (rows of split(k, n))."""
    ks = _split_body(k, num=n)
    return [S.reshape(S.slice_(ks, (i, 0), (i + 1, 2)), (2,)) for i in range(n)]


def _mid01(k, shape, dtype, start=0):
    """Uniform grid midpoints in (0, 1): never 0 or 1, symmetric about 1/2 (from the stream's word `start`)."""
    u = uniform01(k, shape, dtype, start)
    return E.add(u, c(u, 2.0 ** -(np.finfo(dtype).nmant + 1)))


def _two_mid01(k, shape, dtype):
    """Two independent arrays of _mid01: float64, the two halves of a stream of 2 * size(shape) words; float32, the
    two words of its blocks (an interleaved stream's halves keep a loop they are fused into from vectorising)."""
    if dtype == np.float32:
        return [S.reshape(E.add(unit(x), c(unit(x), 2.0 ** -24)), shape) for x in blocks(k, size(shape))]
    return [_mid01(k, shape, dtype, i * size(shape)) for i in range(2)]


def _mid01_32(k, shape, dtype, start=0):
    """Uniforms on the 2**-32 grid's midpoints (in (0, 1)), one 32-bit word each (from the stream's word `start`):
    half the threefry work of _mid01 at float64, for Knuth and for PTRS, whose n = floor(b * u + ...) steps by < 1
    per grid step below lam ~ 1e16, where float64 stops holding consecutive integers anyway."""
    w = E.convert_element_type(bits32(k, size(shape), start), dtype)
    return S.reshape(E.add(E.mul(w, c(w, 2.0 ** -32)), c(w, 2.0 ** -33)), shape)


def _any(x):
    return _b(R.reduce_or_p, x, axes=tuple(range(len(S.shape_of(x)))))


def _rejection(k, shape, init, step):
    """Run `step(key_r, vals) -> (accepted, next vals)` in rounds r = 0, 1, ... until every entry is done;
    entries not yet done take each round's vals, so a done entry keeps the vals of the round that accepted
    it. `init` = (done, vals) before round 0 (entries done from the start keep their init vals)."""
    def cond(i, done, *vals):
        return _any(_b(E.not_p, done))

    def body(i, done, *vals):
        ok, nxt = step(_fold_body(k, i), vals)
        return (E.add(i, c(i, 1)), _b(E.or_p, done, ok)) + tuple(_where(done, v, n) for n, v in zip(nxt, vals))
    done, vals = init
    return while_raw(cond, body, [const(0, U64), done] + list(vals))[2:]


# ------------------------------------------------------------ one-parameter-free continuous samplers

def _exponential_body(k, *, shape, dtype):
    u = _mid01(k, shape, dtype)
    return E.neg(_log1m(u))


def _laplace_body(k, *, shape, dtype):
    u = _mid01(k, shape, dtype)
    x = E.sub(E.add(u, u), c(u, 1.0))                  # in (-1, 1), never 0
    return E.mul(E.neg(_b(E.sign_p, x)), _log1m(_b(E.abs_p, x)))


def _logistic_body(k, *, shape, dtype):
    u = _mid01(k, shape, dtype)
    return E.sub(log_pos(u), _log1m(u))


def _cauchy_body(k, *, shape, dtype):
    u = _mid01(k, shape, dtype)
    return _b(E.tan_p, E.mul(E.sub(u, c(u, 0.5)), c(u, np.pi)))


def _rademacher_body(k, *, shape, dtype):
    b = S.reshape(_b(E.shift_right_logical_p, bits32(k, size(shape)), c(const(0, np.uint32), 31)), shape)
    b = E.convert_element_type(b, dtype)
    return E.sub(E.add(b, b), c(b, 1))


# ------------------------------------------------------------------------ truncated normal

def _truncated_normal_body(k, lo, hi, *, shape, dtype):
    # Phi of the bounds on the bounds' own shapes (scalars, usually), then broadcast: one ndtri per sample
    lo, hi = (S.broadcast_to_shape(v, E.broadcast_shapes(S.shape_of(lo), S.shape_of(hi))) for v in (lo, hi))
    flip = _b(E.gt_p, E.add(lo, hi), c(lo, 0.0))          # work where Phi of the bounds is small
    pa = _b(SE.ndtr_p, _where(flip, E.neg(hi), lo))
    pb = _b(SE.ndtr_p, _where(flip, E.neg(lo), hi))
    inf = c(lo, np.inf)
    lo_in, hi_in = _b(E.nextafter_p, lo, inf), _b(E.nextafter_p, hi, E.neg(inf))
    nan = _b(E.not_p, _b(E.lt_p, lo, hi))
    flip, pa, pb, lo_in, hi_in, nan = (S.broadcast_to_shape(v, shape) for v in (flip, pa, pb, lo_in, hi_in, nan))
    u = _mid01(k, shape, dtype)
    z = _b(SE.ndtri_p, E.add(pa, E.mul(u, E.sub(pb, pa))))
    z = _where(flip, E.neg(z), z)
    z = _b(E.min_p, _b(E.max_p, z, lo_in), hi_in)
    return _where(nan, c(z, np.nan), z)


# ------------------------------------------------------------------------------- gammas

def _first_accepted(k, done, draw, dtype):
    """Each entry's first accepted candidate of rounds r = 0, 1, ...: draw(fold_in(k, r)) gives fresh candidates
    (of `dtype`, done's shape), NaN where rejected; entries `done` at the start come back NaN. A round's draw is
    merged in the next round (or past the loop), so XLA computes it in one fusion with one output: merged where
    drawn, its accept test and its value were fusions of their own, each computing its Threefry words again."""
    def merge(done, out, cand):
        return _b(E.or_p, done, _b(E.eq_p, cand, cand)), _where(done, out, cand)

    cond = lambda i, done, out, cand: _any(_b(E.and_p, _b(E.not_p, done), _b(E.ne_p, cand, cand)))  # noqa: E731
    body = lambda i, *dc: (E.add(i, c(i, 1)),) + merge(*dc) + (draw(_fold_body(k, i)),)  # noqa: E731
    nan = S.full(S.shape_of(done), np.nan, dtype)
    return merge(*while_raw(cond, body, [const(0, U64), done, nan, nan])[1:])[1]


def _log_gamma(k, a, shape):
    """log of Gamma(a, 1) samples (raw a of its own shape, broadcasting to shape); NaN where a is not in
    (0, inf]. Marsaglia-Tsang's constants stay on a's own shape (a scalar a: scalars in the draw's fusion)."""
    one = c(a, 1.0)
    boost = _b(E.lt_p, a, one)
    ap = _where(boost, E.add(a, one), a)
    d = E.sub(ap, c(a, 1.0 / 3.0))
    cc = _b(E.rsqrt_p, E.mul(d, c(d, 9.0)))
    valid = _b(E.and_p, _b(E.gt_p, a, c(a, 0.0)), _b(E.lt_p, a, c(a, np.inf)))
    dtype = S.dtype_of(a)
    full = lambda v: S.broadcast_to_shape(v, shape)  # noqa: E731

    def draw(kr):
        x, u = _two_mid01(kr, shape, dtype)               # one stream for both (a smaller loop body to compile)
        x = normal_quantile(x)
        v = E.add(c(x, 1.0), E.mul(full(cc), x))
        pos = _b(E.gt_p, v, c(v, 0.0))
        v = _where(pos, E.mul(E.mul(v, v), v), c(x, 1.0))
        bound = E.add(E.mul(E.mul(x, x), c(x, 0.5)), E.mul(full(d), E.add(E.sub(c(x, 1.0), v), _log(v))))
        ok = _b(E.and_p, pos, _b(E.lt_p, _log(u), bound))
        return _where(ok, v, c(v, np.nan))

    kloop, kboost = _keys(k, 2)
    v = _first_accepted(kloop, full(_b(E.not_p, valid)), draw, dtype)
    a, boost, valid = full(a), full(boost), full(valid)
    lg = E.add(E.add(full(_log(d)), _log(v)),
               _where(boost, E.div(_log(_mid01(kboost, shape, dtype)), a), c(a, 0.0)))
    lg = _where(valid, lg, c(lg, np.nan))
    return _where(_b(E.eq_p, a, c(a, np.inf)), c(lg, np.inf), lg)


def _gamma_body(k, a, *, shape):
    return _b(E.exp_p, _log_gamma(k, a, shape))


def _chisquare_body(k, df, *, shape):
    g = _gamma_body(k, E.mul(df, c(df, 0.5)), shape=shape)
    return E.add(g, g)


def _t_body(k, df, *, shape):
    kn, kg = _keys(k, 2)
    df = S.broadcast_to_shape(df, shape)
    chi = _chisquare_body(kg, df, shape=shape)
    z = _normal_body(kn, shape=shape, dtype=S.dtype_of(df))
    return E.mul(z, _b(E.sqrt_p, E.div(df, chi)))


def _normalise_logs(lx, axis):
    """exp(lx) / sum(exp(lx)) along axis, scaled by the max first (no underflow of the whole row)."""
    m = _b(R.reduce_max_p, lx, axes=(axis,))
    shape = S.shape_of(lx)
    keep = tuple(i for i in range(len(shape)) if i != axis)
    x = _b(E.exp_p, E.sub(lx, S.broadcast_in_dim(m, shape, keep)))
    s = _b(R.reduce_sum_p, x, axes=(axis,))
    return E.div(x, S.broadcast_in_dim(s, shape, keep))


def _beta_body(k, a, b, *, shape):
    ka, kb = _keys(k, 2)
    la, lb = _log_gamma(ka, a, shape), _log_gamma(kb, b, shape)
    m = _b(E.max_p, la, lb)
    x, y = _b(E.exp_p, E.sub(la, m)), _b(E.exp_p, E.sub(lb, m))
    return E.div(x, E.add(x, y))


def _dirichlet_body(k, alpha, *, shape):
    full = tuple(shape) + (S.shape_of(alpha)[-1],)
    return _normalise_logs(_log_gamma(k, alpha, full), len(full) - 1)


# ------------------------------------------------------------------------------ poisson

def _knuth(k, lam, small, shape):
    """Knuth: the number of uniforms whose product stays >= exp(-lam), for the entries `small`. The product
    itself, not a sum of logs (no log per round; it stops before going below exp(-10) * 2**-32, far from
    underflow), of uniforms on the 2**-32 grid (one 32-bit word each: half the threefry work)."""
    limit = _b(E.exp_p, E.neg(lam))

    def step(kr, vals):
        n, prod = vals
        prod = E.mul(prod, _mid01_32(kr, shape, S.dtype_of(lam)))
        ok = _b(E.lt_p, prod, limit)
        return ok, (_where(ok, n, E.add(n, c(n, 1.0))), prod)
    return _rejection(k, shape, (_b(E.not_p, small), (S.full(shape, 0.0, S.dtype_of(lam)),
                                                      S.full(shape, 1.0, S.dtype_of(lam)))), step)[0]


def _log_factorial(n):
    """log(n!) = st - log(p) for integer-valued float n >= 0, as (st, p): Stirling's series to 1/y**9 at y = n + 1,
    shifted up by 8 below 8 (error < 2e-12); p = 1 above 8, so a caller folds log(p) into a log of its own.
    Far cheaper than a float64 lgamma, which dominated PTRS's rounds."""
    f = lambda v: c(n, v)  # noqa: E731
    x = E.add(n, f(1.0))
    small = _b(E.lt_p, x, f(8.0))
    xs = _where(small, x, f(1.0))
    prod = xs
    for i in range(1, 8):
        prod = E.mul(prod, E.add(xs, f(float(i))))
    y = _where(small, E.add(x, f(8.0)), x)
    r = E.div(f(1.0), y)
    r2 = E.mul(r, r)
    series = E.mul(r, E.add(f(1 / 12), E.mul(r2, E.add(f(-1 / 360), E.mul(r2, E.add(f(1 / 1260), E.mul(
        r2, E.add(f(-1 / 1680), E.mul(r2, f(1 / 1188))))))))))
    st = E.add(E.sub(E.mul(E.sub(y, f(0.5)), _log(y)), y), E.add(f(0.5 * np.log(2 * np.pi)), series))
    return st, _where(small, prod, f(1.0))


def _ptrs_params(lam):
    """PTRS's constants (lam, log lam, b, a, 1/alpha, v_r) for lam >= 10, elementwise on lam's own shape."""
    f = lambda v: c(lam, v)  # noqa: E731
    b = E.add(f(0.931), E.mul(f(2.53), _b(E.sqrt_p, lam)))
    return (lam, _log(lam), b, E.add(f(-0.059), E.mul(f(0.02483), b)),
            E.add(f(1.1239), E.div(f(1.1328), E.sub(b, f(3.4)))), E.sub(f(0.9277), E.div(f(3.6224), E.sub(b, f(2.0)))))


def _ptrs_draw(kr, prm):
    """One PTRS candidate (Hoermann's transformed rejection with squeeze) per entry of the 1-D `_ptrs_params`
    arrays prm: (accepted, n)."""
    lam, loglam, b, a, inv_alpha, v_r = prm
    f = lambda v: c(lam, v)  # noqa: E731
    u, v = (_mid01_32(kr, S.shape_of(lam), S.dtype_of(lam), i * size(S.shape_of(lam))) for i in range(2))
    u = E.sub(u, f(0.5))
    us = E.sub(f(0.5), _b(E.abs_p, u))
    n = _b(E.floor_p, E.add(E.mul(E.add(E.div(E.add(a, a), us), b), u), E.add(lam, f(0.43))))
    st, p = _log_factorial(_b(E.max_p, n, f(0.0)))
    s = _log(E.div(E.div(E.mul(v, inv_alpha), E.add(E.div(a, E.mul(us, us)), b)), p))   # s - log(p) <= t - log(p)
    t = E.sub(E.sub(E.mul(n, loglam), lam), st)
    accept1 = _b(E.and_p, _b(E.ge_p, us, f(0.07)), _b(E.le_p, v, v_r))
    reject = _b(E.or_p, _b(E.lt_p, n, f(0.0)), _b(E.and_p, _b(E.lt_p, us, f(0.013)), _b(E.gt_p, v, us)))
    return _b(E.or_p, accept1, _b(E.and_p, _b(E.not_p, reject), _b(E.le_p, s, t))), n


def _put(x, idx, u):
    """x with x[idx[i]] = u[i] (1-D; in-range indices; of repeated indices one update wins)."""
    dn = I.ScatterDims((), (0,), (0,))
    return I.scatter(x, S.reshape(idx, (S.shape_of(idx)[0], 1)), u, dn, "set")


def _at(x, shape, idx):
    """broadcast_to(x, shape).ravel()[idx] for 1-D in-range flat indices, without materialising the broadcast
    (nor gathering at all for a one-element x)."""
    xs = (1,) * (len(shape) - len(S.shape_of(x))) + tuple(S.shape_of(x))
    x = S.reshape(x, (size(xs),))
    if size(xs) == 1:
        return S.broadcast_to_shape(S.reshape(x, ()), S.shape_of(idx))
    j, step, xstep = c(idx, 0), 1, 1
    for d in reversed(range(len(shape))):
        if xs[d] > 1:
            j = E.add(j, E.mul(_b(E.rem_p, E.div(idx, c(idx, step)), c(idx, shape[d])), c(idx, xstep)))
        step, xstep = step * shape[d], xstep * xs[d]
    return take(x, j, 0)


_ROUNDS = 32    # the queue takes n / _ROUNDS entries (at least 1024) a round


def _ptrs(k, lam, large, shape):
    """PTRS for the entries `large` of broadcast_to(lam, shape) (lam >= 10 there), flattened, as a queue of them: each
    round draws one candidate for each of the next m queued entries and queues the rejected ones again at the
    back, until the queue is empty. Each candidate is a fresh independent draw, so the sample is PTRS's exactly,
    at ~1.2 candidates per entry plus a tail of ~6 rounds of m, where rounds over the whole array until its last
    entry was accepted were ~8 candidates per entry at n = 1.2e6. lam's constants stay on lam's own shape, read
    at the round's entries (`_at`), so a scalar lam is never materialised at full size."""
    n_all = size(shape)
    m = min(n_all, max(-(-n_all // _ROUNDS), 1024))
    prm = _ptrs_params(lam)
    slot = S.iota(I64, (m,), 0)

    def cond(i, head, count, queue, out):
        return _b(E.gt_p, count, c(count, 0))

    def body(i, head, count, queue, out):
        valid = _b(E.lt_p, slot, count)
        idx = take(queue, _b(E.rem_p, E.add(slot, head), c(slot, n_all)), 0)
        ok, n = _ptrs_draw(_fold_body(k, i), [_at(q, shape, idx) for q in prm])
        out = _put(out, _where(_b(E.and_p, valid, ok), idx, c(idx, n_all)), n)
        again = _b(E.and_p, valid, _b(E.not_p, ok))
        rank = E.convert_element_type(SO.cumsum(E.convert_element_type(again, np.float64), 0), I64)  # 1-based
        back = _b(E.rem_p, E.add(E.add(head, count), E.sub(rank, c(rank, 1))), c(rank, n_all))
        queue = _put(queue, _where(again, back, c(back, n_all)), idx)
        taken = _b(E.min_p, count, c(count, m))
        return (E.add(i, c(i, 1)), _b(E.rem_p, E.add(head, taken), c(head, n_all)),
                E.add(E.sub(count, taken), S.reshape(S.slice_(rank, (m - 1,), (m,)), ())), queue, out)
    queue, count = _large_first(large, shape)
    init = [const(0, U64), const(0, I64), count, queue,
            S.full((n_all + 1,), 0.0, S.dtype_of(lam))]          # the last entries: where unused slots write
    return S.slice_(while_raw(cond, body, init)[4], (0,), (n_all,))


def _large_first(large, shape):
    """(queue, count): the flat indices of broadcast_to(large, shape) with the `large` ones first (n + 1 slots,
    the last a sink), and how many are large. A one-element `large` needs no scan."""
    n_all = size(shape)
    iota = S.iota(I64, (n_all + 1,), 0)
    if size(S.shape_of(large)) == 1:
        return iota, _where(S.reshape(large, ()), const(n_all, I64), const(0, I64))
    flat = S.reshape(S.broadcast_to_shape(large, shape), (n_all,))
    pos = E.convert_element_type(SO.cumsum(E.convert_element_type(flat, np.float64), 0), I64)    # 1-based
    queue = _put(iota, _where(flat, E.sub(pos, c(pos, 1)), c(pos, n_all)), S.slice_(iota, (0,), (n_all,)))
    return queue, S.reshape(S.slice_(pos, (n_all - 1,), (n_all,)), ())


def _poisson_body(k, lam, *, shape, dtype):
    if size(shape) == 0:
        return S.full(shape, 0, dtype)
    valid = _b(E.and_p, _b(E.ge_p, lam, c(lam, 0.0)), _b(E.lt_p, lam, c(lam, np.inf)))
    large = _b(E.and_p, valid, _b(E.ge_p, lam, c(lam, 10.0)))
    kk, kp = _keys(k, 2)
    n_large = S.reshape(_ptrs(kp, _where(large, lam, c(lam, 10.0)), large, shape), shape)   # on lam's own shape
    lam, valid = S.broadcast_to_shape(lam, shape), S.broadcast_to_shape(valid, shape)
    small = _b(E.and_p, valid, _b(E.lt_p, lam, c(lam, 10.0)))
    n = _where(small, _knuth(kk, lam, small, shape), n_large)
    return E.convert_element_type(_where(valid, n, c(n, -1.0)), dtype)


# ------------------------------------------------------------------------- public functions

def _params(fname, shape, dtype, named, lead=()):
    """(shape, raw params of dtype) for {what: number or Array}; shape None means their broadcast shape.
    `lead` = (what, n): that one parameter has a trailing axis of n (dirichlet's alpha) outside the shape."""
    shapes = [tuple(_aval(v).shape) for v in named.values() if _is_array(v)]
    if lead:
        shapes = [s[:-1] for s in shapes]
    if shape is None:
        try:
            shape = E.broadcast_shapes(*shapes) if shapes else ()
        except ValueError:
            raise ValueError(f"{fname}: the parameters' shapes {shapes} do not broadcast together") from None
    else:
        shape = _shape(shape, fname)
    full = shape + ((lead[1],) if lead else ())
    return shape, [_bound(v, dtype, full, fname, what) for what, v in named.items()]


def _domain(fname, named, ok, want):
    """ValueError for a Python-number parameter outside its domain (arrays give NaN instead)."""
    for what, v in named.items():
        if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_)) \
                and not ok(v):
            raise ValueError(f"{fname}: {what} must be {want}, got {v!r}")


def _simple(body, fname, key, shape, dtype):
    k = _key_raw(key, fname)
    return _call(body, k, shape=_shape(shape, fname), dtype=_float_dtype(dtype, fname))


_STD = """
    Parameters: key (Array): a PRNG key. shape (int or tuple of ints): the result's shape.
        dtype: xp.float64 (default) or xp.float32.
    Returns: Array: samples of that shape and dtype.
    Raises: TypeError: for a non-key, a bad shape or a non-float dtype.
"""


def exponential(key, shape=(), dtype=np.float64):
    return _simple(_exponential_body, "exponential", key, shape, dtype)


def laplace(key, shape=(), dtype=np.float64):
    return _simple(_laplace_body, "laplace", key, shape, dtype)


def logistic(key, shape=(), dtype=np.float64):
    return _simple(_logistic_body, "logistic", key, shape, dtype)


def cauchy(key, shape=(), dtype=np.float64):
    return _simple(_cauchy_body, "cauchy", key, shape, dtype)


for _f, _what, _ex in ((exponential, "Standard exponential samples (rate 1): -log(1 - u).", "exponential"),
                       (laplace, "Standard Laplace samples (location 0, scale 1), by the inverse CDF.", "laplace"),
                       (logistic, "Standard logistic samples: log(u / (1 - u)).", "logistic"),
                       (cauchy, "Standard Cauchy samples: tan(pi (u - 1/2)).", "cauchy")):
    _f.__doc__ = (f"{_what}\n{_STD}\n    >>> random.{_ex}(random.key(0), (2, 3)).shape\n    (2, 3)\n")


def rademacher(key, shape=(), dtype=np.int64):
    """Random signs: -1 or +1 with probability 1/2 each (one random bit per sample).

    Parameters: key (Array): a PRNG key. shape (int or tuple of ints): the result's shape.
        dtype: an integer or float dtype (default xp.int64).
    Returns: Array: -1s and 1s of that shape and dtype.
    Raises: TypeError: for a non-key, a bad shape or a bool/complex dtype.

    >>> sorted(set(random.rademacher(random.key(0), (100,)).tolist()))
    [-1, 1]
    """
    k = _key_raw(key, "rademacher")
    dt = np.dtype(dtype)
    if dt.kind not in "iuf" or dt.kind == "u":
        raise TypeError(f"rademacher: dtype must be a signed integer or float dtype, got {dt.name}")
    return _call(_rademacher_body, k, shape=_shape(shape, "rademacher"), dtype=dt)


def truncated_normal(key, lower, upper, shape=None, dtype=np.float64):
    """Standard normal samples conditioned on lower < x < upper (inverse CDF of a uniform on [Phi(lower),
    Phi(upper)], taken on the tail side where those are small, so far-tail bounds keep their precision).

    Parameters: key (Array): a PRNG key. lower, upper (float or Array): the bounds (may be -inf / inf),
        broadcasting to shape. shape (tuple of ints or None): the result's shape; None means the bounds'
        broadcast shape. dtype: xp.float64 (default) or xp.float32.
    Returns: Array: samples in the open interval (lower, upper); NaN where an array lower >= upper.
    Raises: TypeError: for a non-key, a bad shape, a non-float dtype or non-numeric bounds; ValueError for
        bounds not broadcasting to shape, or number bounds with lower >= upper.

    >>> x = random.truncated_normal(random.key(0), -1.0, 2.0, (1000,))
    >>> bool(xp.all((x > -1.0) & (x < 2.0)))
    True
    """
    k = _key_raw(key, "truncated_normal")
    dt = _float_dtype(dtype, "truncated_normal")
    if all(isinstance(v, (int, float, np.integer, np.floating)) for v in (lower, upper)) and not lower < upper:
        raise ValueError(f"truncated_normal: lower must be below upper, got {lower!r} and {upper!r}")
    shape, (lo, hi) = _params("truncated_normal", shape, dt, {"lower": lower, "upper": upper})
    return _call(_truncated_normal_body, k, lo, hi, shape=shape, dtype=dt)


def _shaped(body, fname, key, named, shape, dtype, ok, want):
    k = _key_raw(key, fname)
    dt = _float_dtype(dtype, fname)
    _domain(fname, named, ok, want)
    shape, raw = _params(fname, shape, dt, named)
    return _call(body, k, *raw, shape=shape)


def gamma(key, a, shape=None, dtype=np.float64):
    """Gamma(a, 1) samples (Marsaglia-Tsang rejection; for a < 1, Gamma(a + 1) u**(1/a)).

    Parameters: key (Array): a PRNG key. a (float or Array): the shape parameter, > 0, broadcasting to
        shape. shape (tuple of ints or None): the result's shape (None: a's shape).
        dtype: xp.float64 (default) or xp.float32.
    Returns: Array: samples of that shape and dtype; NaN where an array a <= 0 or is NaN, inf where a = inf.
    Raises: TypeError: for a non-key, a bad shape, a non-float dtype or a non-numeric a; ValueError if a does
        not broadcast to shape or a number a is not > 0.

    >>> random.gamma(random.key(0), 2.0, (4, 2)).shape
    (4, 2)
    """
    return _shaped(_gamma_body, "gamma", key, {"a": a}, shape, dtype, lambda v: v > 0, "> 0")


def beta(key, a, b, shape=None, dtype=np.float64):
    """Beta(a, b) samples: X / (X + Y) for X ~ Gamma(a), Y ~ Gamma(b) (normalised in log space).

    Parameters: key (Array): a PRNG key. a, b (float or Array): the parameters, > 0, broadcasting to shape.
        shape (tuple of ints or None): the result's shape (None: the parameters' broadcast shape).
        dtype: xp.float64 (default) or xp.float32.
    Returns: Array: samples in [0, 1]; NaN where an array parameter is not > 0.
    Raises: TypeError: for a non-key, a bad shape, a non-float dtype or a non-numeric parameter; ValueError
        for parameters not broadcasting to shape or a number parameter not > 0.

    >>> random.beta(random.key(0), 2.0, xp.asarray([1.0, 3.0])).shape
    (2,)
    """
    return _shaped(_beta_body, "beta", key, {"a": a, "b": b}, shape, dtype, lambda v: v > 0, "> 0")


def chisquare(key, df, shape=None, dtype=np.float64):
    """Chi-square samples with df degrees of freedom: 2 Gamma(df / 2).

    Parameters: key (Array): a PRNG key. df (float or Array): degrees of freedom, > 0, broadcasting to shape.
        shape (tuple of ints or None): the result's shape (None: df's shape). dtype: xp.float64 or xp.float32.
    Returns: Array: samples of that shape and dtype; NaN where an array df is not > 0.
    Raises: TypeError: for a non-key, a bad shape, a non-float dtype or a non-numeric df; ValueError if df does
        not broadcast to shape or a number df is not > 0.

    >>> random.chisquare(random.key(0), 3.0, (4,)).shape
    (4,)
    """
    return _shaped(_chisquare_body, "chisquare", key, {"df": df}, shape, dtype, lambda v: v > 0, "> 0")


def t(key, df, shape=None, dtype=np.float64):
    """Student's t samples with df degrees of freedom: Z / sqrt(chisquare(df) / df).

    Parameters: key (Array): a PRNG key. df (float or Array): degrees of freedom, > 0, broadcasting to shape.
        shape (tuple of ints or None): the result's shape (None: df's shape). dtype: xp.float64 or xp.float32.
    Returns: Array: samples of that shape and dtype; NaN where an array df is not > 0.
    Raises: TypeError: for a non-key, a bad shape, a non-float dtype or a non-numeric df; ValueError if df does
        not broadcast to shape or a number df is not > 0.

    >>> random.t(random.key(0), 5.0, (4,)).shape
    (4,)
    """
    return _shaped(_t_body, "t", key, {"df": df}, shape, dtype, lambda v: v > 0, "> 0")


def dirichlet(key, alpha, shape=None, dtype=np.float64):
    """Dirichlet(alpha) samples: Gamma(alpha_i) samples normalised along the last axis (in log space).

    Parameters: key (Array): a PRNG key. alpha (Array): concentrations, > 0, of shape (..., K) with K >= 1.
        shape (tuple of ints or None): the batch shape, which alpha.shape[:-1] broadcasts to (None: that
        shape). dtype: xp.float64 (default) or xp.float32.
    Returns: Array: samples of shape shape + (K,), each row summing to 1; NaN rows where an alpha is not > 0.
    Raises: TypeError: for a non-key, a bad shape, a non-float dtype or an alpha that is not a real array of
        at least one dimension; ValueError if alpha.shape[:-1] does not broadcast to shape.

    >>> random.dirichlet(random.key(0), xp.asarray([1.0, 2.0, 3.0]), (8,)).shape
    (8, 3)
    """
    k = _key_raw(key, "dirichlet")
    dt = _float_dtype(dtype, "dirichlet")
    if not _is_array(alpha) or not _aval(alpha).shape or _aval(alpha).dtype.kind not in "iuf":
        raise TypeError(f"dirichlet: alpha must be a real array with at least one dimension, got "
                        f"{type(alpha).__name__ if not _is_array(alpha) else _aval(alpha).str_short()}")
    shape, (al,) = _params("dirichlet", shape, dt, {"alpha": alpha}, lead=("alpha", _aval(alpha).shape[-1]))
    return _call(_dirichlet_body, k, al, shape=shape)


def poisson(key, lam, shape=None, dtype=np.int64):
    """Poisson(lam) counts: Knuth's product of uniforms for lam < 10, Hoermann's PTRS rejection for lam >= 10.

    Parameters: key (Array): a PRNG key. lam (float or Array): the rate, >= 0, broadcasting to shape.
        shape (tuple of ints or None): the result's shape (None: lam's shape). dtype: an integer dtype
        (default xp.int64).
    Returns: Array: counts of that shape and dtype; -1 where an array lam is negative, NaN or inf.
    Raises: TypeError: for a non-key, a bad shape, a non-integer dtype or a non-numeric lam; ValueError if lam
        does not broadcast to shape or a number lam is negative or not finite.

    >>> random.poisson(random.key(0), 3.0, (8,)).dtype
    array_namespace.int64
    """
    k = _key_raw(key, "poisson")
    dt = _int_dtype(dtype, "poisson")
    _domain("poisson", {"lam": lam}, lambda v: 0 <= v < np.inf, "finite and >= 0")
    shape, (lm,) = _params("poisson", shape, np.dtype(np.float64), {"lam": lam})
    return _call(_poisson_body, k, lm, shape=shape, dtype=dt)
