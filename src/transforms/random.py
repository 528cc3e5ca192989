"""Explicit, splittable random keys: the Threefry-2x32 counter-based PRNG, built from primitives.

    from transforms import random
    k = random.key(0)                      # a key: a uint32 Array of shape (2,)
    k1, k2 = random.split(k)               # independent-looking child keys
    x = random.normal(k1, (3, 4))          # same key -> same numbers, always
    y = random.uniform(random.fold_in(k2, 7), (5,), minval=-1.0, maxval=1.0)

Keys. A key is a plain uint32 Array of shape (2,) (the two 32-bit words of a Threefry key);
a batch of keys is a uint32 Array of shape (..., 2) -- `split(k, n)` gives (n, 2) -- and
is consumed with `vmap`. Every function checks that it received a key and raises a
TypeError naming the function otherwise; any uint32 (2,) array is accepted as a key.
Keys are data, not state: nothing is consumed or advanced, so drawing twice from one key
gives the same numbers twice. Derive new keys with `split` or `fold_in`.

The generator. threefry2x32(key, counter) is the 20-round Threefry-2x32 block function of
Salmon et al., "Parallel random numbers: as easy as 1, 2, 3" (SC'11): a keyed bijection
on pairs of 32-bit words made of additions, rotations and xors (uint32 arithmetic wraps).
Every random stream is that function applied to a key and a block of counters, with the
first counter word naming the use (so the streams of `bits`, `split` and `fold_in` of
one key never share a counter):

    bits(k, shape)     words of threefry(k, (0, i)) for i = 0, 1, ...  (two words per block,
                       interleaved for uint32; hi/lo of one block per uint64)
    split(k, n)[i]   = threefry(k, (1, i))
    fold_in(k, d)    = threefry(threefry(k, (2, lo32(d))), (3, hi32(d)))

Since every value is a pure function of (key, counter), results are identical eagerly,
under jit and under vmap (vmap over a batch of keys equals a loop over the keys), and do
not depend on evaluation order. Everything is built from elementwise and shape primitives
plus `bitcast_convert_type`, so it traces, lowers, jits and vmaps like the rest.

Distributions. Floats take the top mantissa-width bits of a 32-bit (float32) or 64-bit
(float64) word, set the exponent of 1.0 and subtract 1, giving uniform [0, 1) on the grid
2**-23 / 2**-52. normal uses Box-Muller (both outputs of each pair); gumbel is
-log(-log(u)); bernoulli compares a uniform with p; randint reduces a 64-bit word modulo
the span; permutation sorts 64-bit random keys (xp.argsort); choice uses randint,
inverse-CDF search, permutation or Gumbel top-k; categorical is Gumbel-max.

Execution. Each sampler's core is staged once per input signature and bound as one `jit`
equation, so an eager call runs one cached executable (not hundreds of single-op
dispatches) and under grad/vmap/jit it is transformed like any jitted function. Integer
and bit outputs are bit-identical everywhere; floats that are rescaled (minval/maxval,
Box-Muller) may differ by an ulp between differently fused executables (a compiler may
contract a*b + c into one fused multiply-add).

Limits. A stream has 2**32 counter blocks (2**33 uint32 words, 2**32 uint64 words);
fold_in data is taken modulo 2**64; randint's modulo reduction has a bias of at most
span / 2**64; keys are plain uint32 arrays, so they are not a distinct dtype and any
uint32 (2,) array passes the key check.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from .core import get_aval
from .primitives import bits as B
from .primitives import elementwise as E
from .primitives import structural as S

__all__ = ["key", "split", "fold_in", "bits", "uniform", "normal", "gumbel", "bernoulli", "randint",
           "permutation", "choice", "categorical", "threefry2x32", "is_key"]

KEY_SHAPE = (2,)
KEY_DTYPE = np.dtype(np.uint32)

_U32 = np.dtype(np.uint32)
_U64 = np.dtype(np.uint64)
_I64 = np.dtype(np.int64)
_ROTATIONS = (13, 15, 26, 6, 17, 29, 16, 24)
_PARITY = 0x1BD11BDA                        # the Threefry key-schedule parity constant
_TAG_BITS, _TAG_SPLIT, _TAG_FOLD_LO, _TAG_FOLD_HI = 0, 1, 2, 3


# ------------------------------------------------------------------- namespace plumbing

def _xp():
    import array_namespace
    return array_namespace


def _array_type():
    from array_namespace._array import Array
    return Array


def _wrap(v):
    from array_namespace._helpers import wrap
    return wrap(v)


def _describe(x):
    if type(x) is _array_type():
        return f"a {x.dtype.name} array of shape {tuple(x.shape)}"
    return f"a {type(x).__name__}"


def is_key(x):
    """True when x is a single PRNG key (a uint32 Array of shape (2,))."""
    return type(x) is _array_type() and x.dtype == KEY_DTYPE and tuple(x.shape) == KEY_SHAPE


def _key_raw(k, fname):
    """The raw value of a key argument; TypeError (naming fname) for anything else."""
    if is_key(k):
        return k._v
    hint = ""
    if type(k) is _array_type() and k.dtype == KEY_DTYPE and k.ndim > 1 and k.shape[-1] == 2:
        hint = "; this looks like a batch of keys: vmap over it, or index one key out"
    raise TypeError(f"{fname}: expected a PRNG key (a uint32 array of shape (2,) made by random.key, "
                    f"random.split or random.fold_in), got {_describe(k)}{hint}")


def _shape(shape, fname):
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (shape,)
    try:
        shape = tuple(shape)
    except TypeError:
        raise TypeError(f"{fname}: shape must be an int or a tuple of ints, got {type(shape).__name__}") from None
    for d in shape:
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 0:
            raise TypeError(f"{fname}: shape entries must be non-negative ints, got {shape!r}")
    return tuple(int(d) for d in shape)


def _float_dtype(dtype, fname):
    dt = np.dtype(dtype) if dtype is not None else np.dtype(np.float64)
    if dt not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise TypeError(f"{fname}: dtype must be float32 or float64, got {dt.name}")
    return dt


def _size(shape):
    return int(math.prod(shape))


@functools.lru_cache(maxsize=512)
def _staged_jaxpr(body, avals, static):
    from .jaxpr_transforms import stage

    def flat(*args):
        out = body(*args, **dict(static))
        return list(out) if isinstance(out, (tuple, list)) else [out]
    return stage(flat, list(avals))


def _call(body, *raw, **static):
    """Run a raw-value body as one staged call (a `jit` equation): staged once per input
    signature and static params, so eagerly it is one cached executable rather than a few
    hundred single-op dispatches, and under transforms it is an ordinary jit_p."""
    from .jaxpr_transforms import call_jaxpr
    avals = tuple(get_aval(v) for v in raw)
    closed = _staged_jaxpr(body, avals, tuple(sorted(static.items())))
    outs = call_jaxpr(closed, list(raw), "random" + body.__name__.rstrip("_"))
    return outs if len(outs) > 1 else outs[0]


# ---------------------------------------------------------------- raw-value building blocks

def _c(x, v):
    """A weak scalar of x's dtype."""
    return E.full_like_scalar(x, v)


def _rotl(x, r):
    return E.bind(E.or_p, E.bind(E.shift_left_p, x, _c(x, r)), E.bind(E.shift_right_logical_p, x, _c(x, 32 - r)))


def _threefry(k0, k1, c0, c1):
    """Threefry-2x32, 20 rounds, on raw uint32 values (broadcasting); returns (x0, x1)."""
    xor = lambda a, b: E.bind(E.xor_p, a, b)  # noqa: E731
    ks = (k0, k1, xor(xor(k0, k1), _c(k0, _PARITY)))
    x0, x1 = E.add(c0, ks[0]), E.add(c1, ks[1])
    shape = S.shape_of(x0) if len(S.shape_of(x0)) >= len(S.shape_of(x1)) else S.shape_of(x1)
    x0, x1 = S.broadcast_to_shape(x0, shape), S.broadcast_to_shape(x1, shape)
    for r in range(20):
        x0 = E.add(x0, x1)
        x1 = xor(_rotl(x1, _ROTATIONS[r % 8]), x0)
        if r % 4 == 3:                      # key injection after every four rounds
            i = r // 4 + 1
            x0 = E.add(x0, ks[i % 3])
            x1 = E.add(x1, E.add(ks[(i + 1) % 3], _c(k0, i)))
    return x0, x1


def _words(k):
    """The two words of a raw (2,) key as 0-d raw values."""
    return (S.reshape(S.slice_(k, (0,), (1,)), ()), S.reshape(S.slice_(k, (1,), (2,)), ()))


def _pack(x0, x1):
    """Two raw uint32 arrays of one shape -> one array with a trailing axis of 2."""
    shape = tuple(S.shape_of(x0))
    col = shape + (1,)
    return S.concatenate([S.reshape(x0, col), S.reshape(x1, col)], len(shape))


def _const(v, dtype):
    return E.convert_element_type(np.asarray(v, dtype)[()], dtype)


def _to_u64(v):
    """A raw integer value as uint64, modulo 2**64 (signed values sign-extend first)."""
    dt = S.dtype_of(v)
    if dt == _U64:
        return v
    if dt.kind == "i" and dt != _I64:
        v = E.convert_element_type(v, _I64)
    return E.convert_element_type(v, _U64)


def _split64(u):
    """A raw uint64 value -> (hi, lo) uint32 words."""
    hi = E.convert_element_type(E.bind(E.shift_right_logical_p, u, _c(u, 32)), _U32)
    lo = E.convert_element_type(E.bind(E.and_p, u, _c(u, 0xFFFFFFFF)), _U32)
    return hi, lo


def _int_raw(x, fname, what):
    """A Python/NumPy integer or a 0-d integer Array -> raw uint64 (mod 2**64)."""
    if isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)):
        return _const(int(x) % 2 ** 64, _U64)
    if type(x) is _array_type() and x.dtype.kind in "iu":
        if x.ndim != 0:
            raise TypeError(f"{fname}: {what} must be a scalar (0-d) integer, got shape {tuple(x.shape)}; "
                            "vmap over an array of them instead")
        return _to_u64(x._v)
    raise TypeError(f"{fname}: {what} must be an integer (Python int or 0-d integer array), got {_describe(x)}")


def _check_blocks(m):
    if m > 2 ** 32:
        raise ValueError(f"random: a draw of {m} Threefry blocks exceeds the 2**32 counters of one key; "
                         "split the key and draw in pieces")


def _bits32(k, n):
    """n uint32 words (flat) from raw key k: the words of blocks (0, 0), (0, 1), ... interleaved."""
    if n == 0:
        return S.full((0,), 0, _U32)
    m = (n + 1) // 2
    _check_blocks(m)
    k0, k1 = _words(k)
    x0, x1 = _threefry(k0, k1, _const(_TAG_BITS, _U32), S.iota(_U32, (m,), 0))
    out = S.reshape(_pack(x0, x1), (2 * m,))
    return out if 2 * m == n else S.slice_(out, (0,), (n,))


def _bits64(k, n):
    """n uint64 words (flat): block i gives hi word x0 and lo word x1."""
    if n == 0:
        return S.full((0,), 0, _U64)
    _check_blocks(n)
    k0, k1 = _words(k)
    x0, x1 = _threefry(k0, k1, _const(_TAG_BITS, _U32), S.iota(_U32, (n,), 0))
    hi, lo = E.convert_element_type(x0, _U64), E.convert_element_type(x1, _U64)
    return E.bind(E.or_p, E.bind(E.shift_left_p, hi, _c(hi, 32)), lo)


def _uniform01(k, shape, dtype):
    """Raw uniform [0, 1) of `dtype` (float32: 23 random bits, float64: 52)."""
    n = _size(shape)
    if dtype == np.float32:
        b = _bits32(k, n)
        b = E.bind(E.or_p, E.bind(E.shift_right_logical_p, b, _c(b, 9)), _c(b, 0x3F800000))
        f = B.bitcast_convert_type(b, np.float32)
    else:
        b = _bits64(k, n)
        b = E.bind(E.or_p, E.bind(E.shift_right_logical_p, b, _c(b, 12)), _c(b, 0x3FF0000000000000))
        f = B.bitcast_convert_type(b, np.float64)
    return S.reshape(E.sub(f, _c(f, 1.0)), shape)


def _bound(v, dtype, shape, fname, what):
    """A scalar or Array bound as a raw value of dtype, checked to broadcast to shape."""
    if isinstance(v, (bool, np.bool_)):
        raise TypeError(f"{fname}: {what} must be a number, got bool")
    if isinstance(v, (int, float, np.integer, np.floating)):
        return _const(v, dtype)
    if type(v) is not _array_type():
        raise TypeError(f"{fname}: {what} must be a number or an array, got {type(v).__name__}")
    if v.dtype.kind not in "iuf":
        raise TypeError(f"{fname}: {what} must be a real number or array, got {v.dtype.name}")
    vshape = tuple(v.shape)
    try:
        ok = E.broadcast_shapes(vshape, shape) == tuple(shape)
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"{fname}: {what} of shape {vshape} does not broadcast to shape {shape}")
    return E.convert_element_type(v._v, dtype) if v.dtype != dtype or get_aval(v._v).weak_type else v._v


# ---------------------------------------------------------------------------------- keys

def _key_body(u):
    return _pack(*_split64(u))


def key(seed):
    """A PRNG key from an integer seed: a uint32 Array of shape (2,) = (seed >> 32, seed & 0xffffffff).

    seed: a Python int (taken modulo 2**64) or a 0-d integer Array (may be traced, e.g.
    under vmap over an array of seeds).
    """
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, (bool, np.bool_)):
        s = int(seed) % 2 ** 64
        return _wrap(_const(np.array([s >> 32, s & 0xFFFFFFFF], _U32), _U32))
    return _wrap(_call(_key_body, _int_raw(seed, "key", "seed")))


def _split_body(k, *, num):
    k0, k1 = _words(k)
    return _pack(*_threefry(k0, k1, _const(_TAG_SPLIT, _U32), S.iota(_U32, (num,), 0)))


def split(key, num=2):
    """`num` new keys derived from `key`, as a uint32 Array of shape (num, 2)."""
    k = _key_raw(key, "split")
    if isinstance(num, bool) or not isinstance(num, (int, np.integer)) or num < 0:
        raise TypeError(f"split: num must be a non-negative int, got {num!r}")
    if num == 0:
        return _wrap(S.full((0, 2), 0, _U32))
    return _wrap(_call(_split_body, k, num=int(num)))


def _fold_body(k, d):
    hi, lo = _split64(d)
    k0, k1 = _words(k)
    k0, k1 = _threefry(k0, k1, _const(_TAG_FOLD_LO, _U32), lo)
    return _pack(*_threefry(k0, k1, _const(_TAG_FOLD_HI, _U32), hi))


def fold_in(key, data):
    """A new key from `key` and an integer `data` (Python int or 0-d integer Array, taken mod 2**64)."""
    k = _key_raw(key, "fold_in")
    return _wrap(_call(_fold_body, k, _int_raw(data, "fold_in", "data")))


def _tf_body(k, c):
    rest = tuple(S.shape_of(c)[1:])
    n = len(rest)
    c0 = S.reshape(S.slice_(c, (0,) * (n + 1), (1,) + rest), rest)
    c1 = S.reshape(S.slice_(c, (1,) + (0,) * n, (2,) + rest), rest)
    k0, k1 = _words(k)
    x0, x1 = _threefry(k0, k1, c0, c1)
    return S.concatenate([S.reshape(x0, (1,) + rest), S.reshape(x1, (1,) + rest)], 0)


def threefry2x32(key, counter):
    """The raw Threefry-2x32 (20 rounds) block function: counter is uint32 of shape (2, ...)
    holding the two counter words; returns the two output words in the same layout."""
    k = _key_raw(key, "threefry2x32")
    if type(counter) is not _array_type() or counter.dtype != _U32 or counter.ndim < 1 or counter.shape[0] != 2:
        raise TypeError(f"threefry2x32: counter must be a uint32 array of shape (2, ...), got {_describe(counter)}")
    return _wrap(_call(_tf_body, k, counter._v))


# ------------------------------------------------------------------------- distributions

def _bits_body(k, *, shape, dtype):
    n = _size(shape)
    return S.reshape(_bits32(k, n) if dtype == _U32 else _bits64(k, n), shape)


def bits(key, shape=(), dtype=np.uint32):
    """Uniformly random bits: an Array of `shape` and dtype uint32 or uint64."""
    k = _key_raw(key, "bits")
    shape = _shape(shape, "bits")
    dt = np.dtype(dtype)
    if dt not in (_U32, _U64):
        raise TypeError(f"bits: dtype must be uint32 or uint64, got {dt.name}")
    return _wrap(_call(_bits_body, k, shape=shape, dtype=dt))


def _uniform_body(k, lo, hi, *, shape, dtype):
    lo, hi = S.broadcast_to_shape(lo, shape), S.broadcast_to_shape(hi, shape)
    u = _uniform01(k, shape, dtype)
    out = E.add(E.mul(u, E.sub(hi, lo)), lo)
    # rounding of lo + u * (hi - lo) can reach hi; keep the interval half-open
    return E.bind(E.min_p, E.bind(E.max_p, out, lo), E.bind(E.nextafter_p, hi, lo))


def uniform(key, shape=(), dtype=np.float64, minval=0.0, maxval=1.0):
    """Uniform floats in [minval, maxval) (minval/maxval: scalars or arrays broadcasting to shape)."""
    k = _key_raw(key, "uniform")
    shape = _shape(shape, "uniform")
    dt = _float_dtype(dtype, "uniform")
    lo = _bound(minval, dt, shape, "uniform", "minval")
    hi = _bound(maxval, dt, shape, "uniform", "maxval")
    return _wrap(_call(_uniform_body, k, lo, hi, shape=shape, dtype=dt))


def _normal_body(k, *, shape, dtype):
    n = _size(shape)
    if n == 0:
        return S.full(shape, 0, dtype)
    m = (n + 1) // 2
    u = _uniform01(k, (2, m), dtype)
    u1 = S.reshape(S.slice_(u, (0, 0), (1, m)), (m,))
    u2 = S.reshape(S.slice_(u, (1, 0), (2, m)), (m,))
    r = E.bind(E.sqrt_p, E.mul(_c(u1, -2.0), E.bind(E.log1p_p, E.neg(u1))))   # sqrt(-2 log(1 - u1)), 1-u1 in (0, 1]
    theta = E.mul(u2, _c(u2, 2 * math.pi))
    z = S.concatenate([E.mul(r, E.bind(E.cos_p, theta)), E.mul(r, E.bind(E.sin_p, theta))], 0)
    if 2 * m != n:
        z = S.slice_(z, (0,), (n,))
    return S.reshape(z, shape)


def normal(key, shape=(), dtype=np.float64):
    """Standard normal samples (Box-Muller on uniforms of the dtype's precision)."""
    k = _key_raw(key, "normal")
    return _wrap(_call(_normal_body, k, shape=_shape(shape, "normal"), dtype=_float_dtype(dtype, "normal")))


def _gumbel_body(k, *, shape, dtype):
    tiny = float(np.finfo(dtype).tiny)
    u = _uniform01(k, shape, dtype)
    u = E.bind(E.max_p, u, _c(u, tiny))                  # u in (0, 1): -log(u) > 0
    return E.neg(E.bind(E.log_p, E.neg(E.bind(E.log_p, u))))


def gumbel(key, shape=(), dtype=np.float64):
    """Standard Gumbel samples: -log(-log(u))."""
    k = _key_raw(key, "gumbel")
    return _wrap(_call(_gumbel_body, k, shape=_shape(shape, "gumbel"), dtype=_float_dtype(dtype, "gumbel")))


def _bernoulli_body(k, p, *, shape):
    return E.bind(E.lt_p, _uniform01(k, shape, S.dtype_of(p)), S.broadcast_to_shape(p, shape))


def bernoulli(key, p=0.5, shape=None):
    """Booleans that are True with probability p (p: scalar or array broadcasting to shape;
    shape=None means p's shape)."""
    k = _key_raw(key, "bernoulli")
    if type(p) is _array_type():
        if p.dtype.kind != "f":
            raise TypeError(f"bernoulli: p must be a float or a float array, got {p.dtype.name}")
        dt, pshape = p.dtype, tuple(p.shape)
    elif isinstance(p, (int, float, np.integer, np.floating)) and not isinstance(p, (bool, np.bool_)):
        dt, pshape = np.dtype(np.float64), ()
    else:
        raise TypeError(f"bernoulli: p must be a probability (float or float array), got {type(p).__name__}")
    shape = pshape if shape is None else _shape(shape, "bernoulli")
    pr = _bound(p, dt, shape, "bernoulli", "p")
    return _wrap(_call(_bernoulli_body, k, pr, shape=shape))


def _int_dtype(dtype, fname):
    dt = np.dtype(dtype)
    if dt.kind not in "iu":
        raise TypeError(f"{fname}: dtype must be an integer dtype, got {dt.name}")
    return dt


def _randint_const_body(k, lo64, span, *, shape, dtype, full_range):
    r = _bits64(k, _size(shape))
    if not full_range:
        r = E.bind(E.rem_p, r, span)
    return S.reshape(E.convert_element_type(E.add(r, lo64), dtype), shape)


def _randint_body(k, lo, hi, *, shape, dtype):
    lo, hi = S.broadcast_to_shape(lo, shape), S.broadcast_to_shape(hi, shape)
    lo64, hi64 = _to_u64(lo), _to_u64(hi)
    ok = E.bind(E.gt_p, hi, lo)
    span = E.select_n(ok, _c(lo64, 1), E.sub(hi64, lo64))
    r = E.bind(E.rem_p, S.reshape(_bits64(k, _size(shape)), shape), span)
    return E.select_n(ok, lo, E.convert_element_type(E.add(lo64, r), dtype))


def randint(key, shape=(), minval=0, maxval=None, dtype=np.int64):
    """Uniform integers in [minval, maxval) of an integer dtype.

    minval/maxval: Python ints (clipped to the dtype's range; maxval may be one past its
    max) or integer Arrays broadcasting to shape. Where maxval <= minval the result is
    minval. Sampling reduces a 64-bit random word modulo the span, so the bias is at
    most span / 2**64 (negligible below spans of ~2**40). randint(key, shape, n) means
    randint(key, shape, 0, n).
    """
    k = _key_raw(key, "randint")
    shape = _shape(shape, "randint")
    dt = _int_dtype(dtype, "randint")
    if maxval is None:
        minval, maxval = 0, minval
    info = np.iinfo(dt)
    py = lambda v: isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))  # noqa: E731
    if py(minval) and py(maxval):
        lo = min(max(int(minval), info.min), info.max)
        hi = min(max(int(maxval), info.min), info.max + 1)
        span = hi - lo
        if span <= 0:
            return _wrap(S.full(shape, lo, dt))
        return _wrap(_call(_randint_const_body, k, _const(lo % 2 ** 64, _U64), _const(span % 2 ** 64, _U64),
                           shape=shape, dtype=dt, full_range=span == 2 ** 64))
    for v, what in ((minval, "minval"), (maxval, "maxval")):
        if not py(v) and not (type(v) is _array_type() and v.dtype.kind in "iu"):
            raise TypeError(f"randint: {what} must be an int or an integer array, got {_describe(v)}")
    clip = lambda v: min(max(int(v), info.min), info.max) if py(v) else v  # noqa: E731
    lo = _bound(clip(minval), dt, shape, "randint", "minval")
    hi = _bound(clip(maxval), dt, shape, "randint", "maxval")
    return _wrap(_call(_randint_body, k, lo, hi, shape=shape, dtype=dt))


def _sized(x, axis, fname, what):
    """(n, array or None, axis) for an int-or-array argument."""
    if isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)):
        if x < 0:
            raise ValueError(f"{fname}: {what} must be non-negative, got {x}")
        return int(x), None, axis
    if type(x) is _array_type():
        if x.ndim == 0:
            raise ValueError(f"{fname}: {what} must be an int or an array with at least one dimension")
        from array_namespace._helpers import normalize_axis
        axis = normalize_axis(axis, x.ndim, fname)
        return x.shape[axis], x, axis
    raise TypeError(f"{fname}: {what} must be an int or an array, got {type(x).__name__}")


_JITS = {}


def _jit_call(fn, *args, **static):
    """Call a namespace-level implementation through `jit` (cached per fn; static kwargs
    key its compile cache), so eager use compiles once instead of dispatching op by op."""
    j = _JITS.get(fn)
    if j is None:
        from .jit import jit
        j = _JITS[fn] = jit(fn, static_argnames=tuple(sorted(static)))
    return j(*args, **static)


def _perm(k, n):
    xp = _xp()
    if n <= 1:
        return xp.arange(n, dtype=xp.int64)
    return xp.argsort(_wrap(_call(_bits_body, k, shape=(n,), dtype=_U64)))


def _permutation_impl(key, arr, *, n, axis):
    perm = _perm(key._v, n)
    return perm if arr is None else _xp().take(arr, perm, axis=axis)


def permutation(key, x, axis=0):
    """A random permutation: of arange(x) for an int x, else of x's entries along `axis`.

    Implemented as a stable argsort of 64-bit random sort keys (ties, which would favour
    the original order, have probability ~ n**2 / 2**65).
    """
    _key_raw(key, "permutation")
    n, arr, axis = _sized(x, axis, "permutation", "x")
    return _jit_call(_permutation_impl, key, arr, n=n, axis=axis)


def _choice_impl(key, arr, p, *, n, shape, replace, axis):
    xp = _xp()
    k = key._v
    m = _size(shape)
    if replace and p is None:
        idx = _wrap(_call(_randint_const_body, k, _const(0, _U64), _const(n, _U64), shape=shape, dtype=_I64,
                          full_range=False))
    elif replace:
        cdf = xp.cumulative_sum(p)
        u = _wrap(_call(_uniform_body, k, _const(0.0, p.dtype), _last(cdf), shape=(m,), dtype=p.dtype))
        idx = xp.reshape(xp.clip(xp.searchsorted(cdf, u, side="right"), 0, n - 1), shape)
    elif p is None:
        idx = xp.reshape(_perm(k, n)[:m], shape)
    else:
        g = _wrap(_call(_gumbel_body, k, shape=(n,), dtype=p.dtype)) + xp.log(p)
        idx = xp.reshape(xp.argsort(g, descending=True)[:m], shape)
    idx = xp.astype(idx, xp.int64)
    if arr is None:
        return idx
    out = xp.take(arr, xp.reshape(idx, (m,)), axis=axis)
    return xp.reshape(out, arr.shape[:axis] + shape + arr.shape[axis + 1:])


def choice(key, a, shape=(), replace=True, p=None, axis=0):
    """Random samples from a (an int n means arange(n)) along `axis`.

    replace=True draws independently (uniformly, or with probabilities p by inverse-CDF
    search); replace=False draws distinct entries (a prefix of a random permutation, or
    Gumbel top-k with p). The sampled axis of `a` is replaced by `shape` in the result.
    """
    _key_raw(key, "choice")
    shape = _shape(shape, "choice")
    n, arr, axis = _sized(a, axis, "choice", "a")
    m = _size(shape)
    if n == 0 and m:
        raise ValueError("choice: cannot take samples from an empty population")
    if p is not None and (type(p) is not _array_type() or p.dtype.kind != "f" or tuple(p.shape) != (n,)):
        raise ValueError(f"choice: p must be a float array of shape ({n},), got {_describe(p)}")
    if not replace and m > n:
        raise ValueError(f"choice: cannot take {m} samples from {n} entries without replacement")
    return _jit_call(_choice_impl, key, arr, p, n=n, shape=shape, replace=bool(replace), axis=axis)


def _last(x):
    return S.reshape(S.slice_(x._v, (x.shape[0] - 1,), (x.shape[0],)), ())


def _categorical_impl(key, logits, *, axis, shape):
    xp = _xp()
    lg = xp.moveaxis(logits, axis, -1)
    g = _wrap(_call(_gumbel_body, key._v, shape=shape + (lg.shape[-1],), dtype=logits.dtype))
    return xp.argmax(g + lg, axis=-1)


def categorical(key, logits, axis=-1, shape=None):
    """Category indices sampled with probabilities softmax(logits) along `axis` (Gumbel-max).

    shape: the batch shape of the result; defaults to logits.shape without `axis`; a
    given shape must broadcast-contain that batch shape (e.g. (n,) + batch).
    """
    _key_raw(key, "categorical")
    if type(logits) is not _array_type() or logits.dtype.kind != "f" or logits.ndim == 0:
        raise TypeError(f"categorical: logits must be a float array with at least one dimension, "
                        f"got {_describe(logits)}")
    from array_namespace._helpers import normalize_axis
    axis = normalize_axis(axis, logits.ndim, "categorical")
    batch = tuple(logits.shape[:axis] + logits.shape[axis + 1:])
    if shape is None:
        shape = batch
    else:
        shape = _shape(shape, "categorical")
        try:
            ok = E.broadcast_shapes(shape, batch) == shape
        except ValueError:
            ok = False
        if not ok:
            raise ValueError(f"categorical: shape {shape} is not compatible with the batch shape {batch} of logits")
    return _jit_call(_categorical_impl, key, logits, axis=axis, shape=shape)
