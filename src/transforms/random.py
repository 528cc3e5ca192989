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
2**-23 / 2**-52. normal is the standard normal quantile (inverse CDF, a piecewise polynomial
in -log(4u(1 - u))) of the midpoints of that grid, so one word per sample; gumbel is
-log(-log(u)); bernoulli compares a uniform with p; randint reduces a 64-bit word modulo
the span; permutation stably sorts 64-bit random keys; choice uses randint,
inverse-CDF search, permutation or Gumbel top-k; categorical is Gumbel-max. exponential, laplace,
logistic, cauchy, rademacher, truncated_normal, gamma, beta, dirichlet, chisquare, t and poisson live in
`random_dists`, multivariate_normal in `random_mvn` (re-exported here; their constructions are described there).

Execution. Each sampler's core is a raw-value body (the streams in `random_bits`, the
distributions in `random_samplers`) run through `jaxpr_transforms.staged_call`: staged once
per input signature and bound as one `jit` equation, so an eager call runs one cached
executable (not hundreds of single-op dispatches) and under grad/vmap/jit it is transformed
like any jitted function. This module only checks arguments and boxes results (through the
engine's boxing hook), so it depends on primitives and the engine, not on the namespace.
Integer and bit outputs are bit-identical everywhere; floats that are rescaled
(minval/maxval, normal's quantile) may differ by an ulp between differently fused executables (a
compiler may contract a*b + c into one fused multiply-add).

Limits. A stream has 2**32 counter blocks (2**33 uint32 words, 2**32 uint64 words);
fold_in data is taken modulo 2**64; randint's modulo reduction has a bias of at most
span / 2**64; keys are plain uint32 arrays, so they are not a distinct dtype and any
uint32 (2,) array passes the key check.
"""
from __future__ import annotations

import numpy as np

from .api_util import box
from .primitives import elementwise as E
from .primitives import structural as S
from .random_args import (_aval, _bound, _broadcasts_to, _call, _describe, _float_dtype, _int_dtype, _int_raw,
                          _is_array, _is_int, _axis, _key_raw, _shape, _sized, is_key)
from .core import unbox
from .random_bits import U32, U64, _bits_body, _fold_body, _key_body, _split_body, _tf_body, const, size
from .random_dists import (beta, cauchy, chisquare, dirichlet, exponential, gamma, laplace, logistic, poisson,
                           rademacher, t, truncated_normal)
from .random_mvn import multivariate_normal
from .random_samplers import (_bernoulli_body, _categorical_body, _choice_body, _gumbel_body, _normal_body,
                              _permutation_body, _randint_body, _randint_const_body, _uniform_body)

__all__ = ["key", "split", "fold_in", "bits", "uniform", "normal", "gumbel", "bernoulli", "randint",
           "permutation", "choice", "categorical", "threefry2x32", "is_key", "exponential", "laplace", "logistic",
           "cauchy", "rademacher", "truncated_normal", "gamma", "beta", "dirichlet", "chisquare", "t", "poisson",
           "multivariate_normal"]


# ---------------------------------------------------------------------------------- keys

def key(seed):
    """A PRNG key from an integer seed: a uint32 Array of shape (2,) = (seed >> 32, seed & 0xffffffff).

    Parameters: seed (int or 0-d integer Array): a Python int (taken modulo 2**64) or an integer Array
        (may be traced, e.g. under vmap over an array of seeds).
    Returns: Array: the key, uint32 of shape (2,).
    Raises: TypeError: if seed is not an integer.

    >>> random.key(42)
    Array([ 0, 42], dtype=uint32)
    """
    if _is_int(seed):
        s = int(seed) % 2 ** 64
        return box(const(np.array([s >> 32, s & 0xFFFFFFFF], U32), U32))
    return _call(_key_body, _int_raw(seed, "key", "seed"))


def split(key, num=2):
    """`num` new keys derived from `key`, as a uint32 Array of shape (num, 2).

    Parameters: key (Array): a PRNG key. num (int): how many keys (default 2).
    Returns: Array: uint32 of shape (num, 2); row i is threefry(key, (1, i)).
    Raises: TypeError: if key is not a key or num is not a non-negative int.

    >>> random.split(random.key(0), 3)
    Array([[1351547692, 3235790642],
           [2473972575,  935721516],
           [1390163619, 3131650755]], dtype=uint32)
    """
    k = _key_raw(key, "split")
    if isinstance(num, bool) or not isinstance(num, (int, np.integer)) or num < 0:
        raise TypeError(f"split: num must be a non-negative int, got {num!r}")
    if num == 0:
        return box(S.full((0, 2), 0, U32))
    return _call(_split_body, k, num=int(num))


def fold_in(key, data):
    """A new key from `key` and an integer `data` (taken modulo 2**64).

    Parameters: key (Array): a PRNG key. data (int or 0-d integer Array): what to fold in (may be traced).
    Returns: Array: a new key, uint32 of shape (2,).
    Raises: TypeError: if key is not a key or data is not an integer.

    >>> random.fold_in(random.key(0), 1)
    Array([2993808388, 1990433514], dtype=uint32)
    """
    k = _key_raw(key, "fold_in")
    return _call(_fold_body, k, _int_raw(data, "fold_in", "data"))


def threefry2x32(key, counter):
    """The raw Threefry-2x32 (20 rounds) block function of `key` on a block of counters.

    Parameters: key (Array): a PRNG key. counter (Array): uint32 of shape (2, ...), the two counter words.
    Returns: Array: the two output words, uint32 in the same layout as counter.
    Raises: TypeError: if key is not a key or counter is not uint32 of shape (2, ...).

    >>> random.threefry2x32(random.key(0), xp.asarray([[0, 1], [0, 0]], dtype=xp.uint32))
    Array([[1797259609, 1351547692],
           [2579123966, 3235790642]], dtype=uint32)
    """
    k = _key_raw(key, "threefry2x32")
    a = _aval(counter) if _is_array(counter) else None
    if a is None or a.dtype != U32 or len(a.shape) < 1 or a.shape[0] != 2:
        raise TypeError(f"threefry2x32: counter must be a uint32 array of shape (2, ...), got {_describe(counter)}")
    return _call(_tf_body, k, unbox(counter))


# ------------------------------------------------------------------------- distributions

def bits(key, shape=(), dtype=np.uint32):
    """Uniformly random bits: an Array of `shape` and dtype uint32 or uint64.

    Parameters: key (Array): a PRNG key. shape (int or tuple of ints): the result's shape.
        dtype: xp.uint32 (default) or xp.uint64.
    Returns: Array: random words of that shape and dtype.
    Raises: TypeError: for a non-key, a bad shape, or another dtype.

    >>> random.bits(random.key(0), (3,))
    Array([1797259609, 2579123966,  928981903], dtype=uint32)
    """
    k = _key_raw(key, "bits")
    shape = _shape(shape, "bits")
    dt = np.dtype(dtype)
    if dt not in (U32, U64):
        raise TypeError(f"bits: dtype must be uint32 or uint64, got {dt.name}")
    return _call(_bits_body, k, shape=shape, dtype=dt)


def uniform(key, shape=(), dtype=np.float64, minval=0.0, maxval=1.0):
    """Uniform floats in [minval, maxval).

    Parameters: key (Array): a PRNG key. shape (int or tuple of ints): the result's shape.
        dtype: xp.float64 (default) or xp.float32. minval, maxval (float or Array): bounds broadcasting to shape.
    Returns: Array: samples of that shape and dtype (on the grid 2**-52, or 2**-23 for float32, scaled).
    Raises: TypeError: for a non-key, a bad shape or a non-float dtype; ValueError if the bounds do not
        broadcast to shape.

    >>> random.uniform(random.key(0), (3,))
    Array([0.41845711, 0.21629545, 0.96532146])
    """
    k = _key_raw(key, "uniform")
    shape = _shape(shape, "uniform")
    dt = _float_dtype(dtype, "uniform")
    lo = _bound(minval, dt, shape, "uniform", "minval")
    hi = _bound(maxval, dt, shape, "uniform", "maxval")
    return _call(_uniform_body, k, lo, hi, shape=shape, dtype=dt)


def normal(key, shape=(), dtype=np.float64):
    """Standard normal samples: the normal quantile of uniforms of the dtype's precision (the midpoints of
    uniform's grid), so |samples| <= 8.21 (float64) or 5.29 (float32).

    Parameters: key (Array): a PRNG key. shape (int or tuple of ints): the result's shape.
        dtype: xp.float64 (default) or xp.float32.
    Returns: Array: samples of that shape and dtype.
    Raises: TypeError: for a non-key, a bad shape or a non-float dtype.

    >>> x = random.normal(random.key(0), (1000,))
    >>> x.shape, x.dtype, abs(float(xp.mean(x))) < 0.1, abs(float(xp.std(x)) - 1.0) < 0.1
    ((1000,), array_namespace.float64, True, True)
    """
    k = _key_raw(key, "normal")
    return _call(_normal_body, k, shape=_shape(shape, "normal"), dtype=_float_dtype(dtype, "normal"))


def gumbel(key, shape=(), dtype=np.float64):
    """Standard Gumbel samples: -log(-log(u)) for uniform u.

    Parameters: key (Array): a PRNG key. shape (int or tuple of ints): the result's shape.
        dtype: xp.float64 (default) or xp.float32.
    Returns: Array: samples of that shape and dtype.
    Raises: TypeError: for a non-key, a bad shape or a non-float dtype.

    >>> g = random.gumbel(random.key(0), (2000,))
    >>> g.shape, abs(float(xp.mean(g)) - 0.5772) < 0.1    # the mean is Euler's constant
    ((2000,), True)
    """
    k = _key_raw(key, "gumbel")
    return _call(_gumbel_body, k, shape=_shape(shape, "gumbel"), dtype=_float_dtype(dtype, "gumbel"))


def bernoulli(key, p=0.5, shape=None):
    """Booleans that are True with probability p.

    Parameters: key (Array): a PRNG key. p (float or float Array): the probability, broadcasting to shape.
        shape (tuple of ints or None): the result's shape; None means p's shape.
    Returns: Array: bool of that shape.
    Raises: TypeError: for a non-key or a non-float p; ValueError if p does not broadcast to shape.

    >>> random.bernoulli(random.key(0), 0.5, (5,))
    Array([ True,  True, False, False, False])
    """
    k = _key_raw(key, "bernoulli")
    if _is_array(p):
        a = _aval(p)
        if a.dtype.kind != "f":
            raise TypeError(f"bernoulli: p must be a float or a float array, got {a.dtype.name}")
        dt, pshape = a.dtype, tuple(a.shape)
    elif isinstance(p, (int, float, np.integer, np.floating)) and not isinstance(p, (bool, np.bool_)):
        dt, pshape = np.dtype(np.float64), ()
    else:
        raise TypeError(f"bernoulli: p must be a probability (float or float array), got {type(p).__name__}")
    shape = pshape if shape is None else _shape(shape, "bernoulli")
    pr = _bound(p, dt, shape, "bernoulli", "p")
    return _call(_bernoulli_body, k, pr, shape=shape)


def randint(key, shape=(), minval=0, maxval=None, dtype=np.int64):
    """Uniform integers in [minval, maxval) of an integer dtype.

    minval/maxval: Python ints (clipped to the dtype's range; maxval may be one past its max) or integer
    Arrays broadcasting to shape. Where maxval <= minval the result is minval. Sampling reduces a 64-bit
    random word modulo the span, so the bias is at most span / 2**64. randint(key, shape, n) means
    randint(key, shape, 0, n).

    Parameters: key (Array): a PRNG key. shape (int or tuple of ints): the result's shape.
        minval, maxval (int or integer Array): the bounds. dtype: an integer dtype (default xp.int64).
    Returns: Array: integers of that shape and dtype.
    Raises: TypeError: for a non-key, a bad shape, a non-integer dtype or non-integer bounds.

    >>> random.randint(random.key(0), (5,), 0, 10)
    Array([0, 7, 9, 6, 0])
    """
    k = _key_raw(key, "randint")
    shape = _shape(shape, "randint")
    dt = _int_dtype(dtype, "randint")
    if maxval is None:
        minval, maxval = 0, minval
    info = np.iinfo(dt)
    if _is_int(minval) and _is_int(maxval):
        lo = min(max(int(minval), info.min), info.max)
        hi = min(max(int(maxval), info.min), info.max + 1)
        span = hi - lo
        if span <= 0:
            return box(S.full(shape, lo, dt))
        return _call(_randint_const_body, k, const(lo % 2 ** 64, U64), const(span % 2 ** 64, U64),
                     shape=shape, dtype=dt, full_range=span == 2 ** 64)
    for v, what in ((minval, "minval"), (maxval, "maxval")):
        if not _is_int(v) and not (_is_array(v) and _aval(v).dtype.kind in "iu"):
            raise TypeError(f"randint: {what} must be an int or an integer array, got {_describe(v)}")
    clip = lambda v: min(max(int(v), info.min), info.max) if _is_int(v) else v  # noqa: E731
    lo = _bound(clip(minval), dt, shape, "randint", "minval")
    hi = _bound(clip(maxval), dt, shape, "randint", "maxval")
    return _call(_randint_body, k, lo, hi, shape=shape, dtype=dt)


def permutation(key, x, axis=0):
    """A random permutation: of arange(x) for an int x, else of x's entries along `axis`.

    Implemented as a stable argsort of 64-bit random sort keys (ties, which would favour the original
    order, have probability ~ n**2 / 2**65).

    Parameters: key (Array): a PRNG key. x (int or Array): n (permute arange(n)) or the array to shuffle.
        axis (int): the axis of x to shuffle along (default 0).
    Returns: Array: the permuted values (int64 for an int x; x's dtype and shape otherwise).
    Raises: TypeError: for a non-key or an x that is neither an int nor an array; ValueError for a 0-d x
        or an axis out of range.

    >>> random.permutation(random.key(0), 5)
    Array([1, 0, 4, 3, 2])
    """
    k = _key_raw(key, "permutation")
    n, arr, axis = _sized(x, axis, "permutation", "x")
    return _call(_permutation_body, k, *([] if arr is None else [arr]), n=n, axis=axis)


def choice(key, a, shape=(), replace=True, p=None, axis=0):
    """Random samples from a (an int n means arange(n)) along `axis`.

    replace=True draws independently (uniformly, or with probabilities p by inverse-CDF search);
    replace=False draws distinct entries (a prefix of a random permutation, or Gumbel top-k with p).
    The sampled axis of `a` is replaced by `shape` in the result.

    Parameters: key (Array): a PRNG key. a (int or Array): the population. shape (tuple of ints): how many
        samples. replace (bool): with replacement (default True). p (float Array of shape (n,) or None):
        the probabilities. axis (int): the axis of a to sample along.
    Returns: Array: the samples.
    Raises: TypeError: for a non-key or a bad a; ValueError for an empty population, a bad p, or more
        samples than entries without replacement.

    >>> random.choice(random.key(0), 5, (3,), replace=False)
    Array([1, 0, 4])
    """
    k = _key_raw(key, "choice")
    shape = _shape(shape, "choice")
    n, arr, axis = _sized(a, axis, "choice", "a")
    m = size(shape)
    if n == 0 and m:
        raise ValueError("choice: cannot take samples from an empty population")
    if p is not None and (not _is_array(p) or _aval(p).dtype.kind != "f" or tuple(_aval(p).shape) != (n,)):
        raise ValueError(f"choice: p must be a float array of shape ({n},), got {_describe(p)}")
    if not replace and m > n:
        raise ValueError(f"choice: cannot take {m} samples from {n} entries without replacement")
    ops = ([] if arr is None else [arr]) + ([] if p is None else [unbox(p)])
    return _call(_choice_body, k, *ops, n=n, shape=shape, replace=bool(replace), axis=axis,
                 has_arr=arr is not None, has_p=p is not None)


def categorical(key, logits, axis=-1, shape=None):
    """Category indices sampled with probabilities softmax(logits) along `axis` (Gumbel-max).

    Parameters: key (Array): a PRNG key. logits (float Array): unnormalised log-probabilities.
        axis (int): the category axis (default -1). shape (tuple or None): the result's batch shape;
        default logits.shape without axis; a given shape must broadcast-contain that batch shape.
    Returns: Array: int64 indices of that shape.
    Raises: TypeError: for a non-key or non-float logits; ValueError for an empty category axis or an
        incompatible shape.

    >>> random.categorical(random.key(0), xp.asarray([0.0, 10.0, 0.0]), shape=(4,))
    Array([1, 1, 1, 1])
    """
    k = _key_raw(key, "categorical")
    a = _aval(logits) if _is_array(logits) else None
    if a is None or a.dtype.kind != "f" or len(a.shape) == 0:
        raise TypeError(f"categorical: logits must be a float array with at least one dimension, "
                        f"got {_describe(logits)}")
    lshape = tuple(a.shape)
    axis = _axis(axis, len(lshape), "categorical")
    if lshape[axis] == 0:
        raise ValueError(f"categorical: logits has no categories along axis {axis} (shape {lshape})")
    batch = lshape[:axis] + lshape[axis + 1:]
    if shape is None:
        shape = batch
    else:
        shape = _shape(shape, "categorical")
        if not _broadcasts_to(batch, shape):
            raise ValueError(f"categorical: shape {shape} is not compatible with the batch shape {batch} of logits")
    return _call(_categorical_body, k, unbox(logits), axis=axis, shape=shape)
