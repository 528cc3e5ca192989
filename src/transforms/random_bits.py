"""Threefry-2x32 and the random streams of a key, on raw values (the generator under `transforms.random`).

Everything here takes and returns raw engine values (tracers or device buffers), never Arrays,
and is written with elementwise and shape primitives plus `bitcast_convert_type`, so it traces,
jits, vmaps and lowers like any other primitive composition. `transforms.random` validates the
user's arguments and boxes the results; `transforms.random_samplers` turns these words into
distributions. The stream layout (which counters feed `bits`, `split` and `fold_in`) is documented
in `transforms.random`.
"""
from __future__ import annotations

import math

import numpy as np

from .primitives import bits as B
from .primitives import elementwise as E
from .primitives import structural as S

KEY_SHAPE = (2,)
KEY_DTYPE = np.dtype(np.uint32)

U32 = np.dtype(np.uint32)
U64 = np.dtype(np.uint64)
I64 = np.dtype(np.int64)
_ROTATIONS = (13, 15, 26, 6, 17, 29, 16, 24)
_PARITY = 0x1BD11BDA                        # the Threefry key-schedule parity constant
TAG_BITS, TAG_SPLIT, TAG_FOLD_LO, TAG_FOLD_HI = 0, 1, 2, 3


def size(shape):
    return int(math.prod(shape))


def c(x, v):
    """A weak scalar of x's dtype."""
    return E.full_like_scalar(x, v)


def const(v, dtype):
    """A (strong) constant of `dtype` from a Python/NumPy value."""
    return E.convert_element_type(np.asarray(v, dtype)[()], dtype)


def _rotl(x, r):
    return E.bind(E.or_p, E.bind(E.shift_left_p, x, c(x, r)), E.bind(E.shift_right_logical_p, x, c(x, 32 - r)))


def threefry(k0, k1, c0, c1):
    """Threefry-2x32, 20 rounds, on raw uint32 values (broadcasting); returns (x0, x1)."""
    xor = lambda a, b: E.bind(E.xor_p, a, b)  # noqa: E731
    ks = (k0, k1, xor(xor(k0, k1), c(k0, _PARITY)))
    x0, x1 = E.add(c0, ks[0]), E.add(c1, ks[1])
    shape = S.shape_of(x0) if len(S.shape_of(x0)) >= len(S.shape_of(x1)) else S.shape_of(x1)
    x0, x1 = S.broadcast_to_shape(x0, shape), S.broadcast_to_shape(x1, shape)
    for r in range(20):
        x0 = E.add(x0, x1)
        x1 = xor(_rotl(x1, _ROTATIONS[r % 8]), x0)
        if r % 4 == 3:                      # key injection after every four rounds
            i = r // 4 + 1
            x0 = E.add(x0, ks[i % 3])
            x1 = E.add(x1, E.add(ks[(i + 1) % 3], c(k0, i)))
    return x0, x1


def words(k):
    """The two words of a raw (2,) key as 0-d raw values (made opaque to LLVM: see `_opaque`)."""
    return (_opaque(S.reshape(S.slice_(k, (0,), (1,)), ())), _opaque(S.reshape(S.slice_(k, (1,), (2,)), ())))


def _opaque(w):
    """Raw uint32 w, unchanged: uint32 -> float64 (* 2 * 0.5) -> uint32 is exact, and the multiplies keep XLA
    and LLVM from folding the round trip away. Why: a key made in the same kernel (split, fold_in: Threefry's
    add chains) is transparent to LLVM's scalar evolution; with the per-element counter (the kernel's loop
    index) that made every add of a sampler's Threefry an induction-variable use of dozens of terms, and LLVM's
    loop strength reduction took seconds on kernels of a few elements (first gamma (3, 2): 4.8 s -> 1.2 s to
    compile, poisson (5,) 12 s -> 1.7 s). A float-to-int conversion is opaque to it; a few operations per key,
    against Threefry's hundreds per word, so run time is unchanged."""
    f = E.convert_element_type(w, np.float64)
    return E.convert_element_type(E.mul(E.mul(f, c(f, 2.0)), c(f, 0.5)), U32)


def pack(x0, x1):
    """Two raw uint32 arrays of one shape -> one array with a trailing axis of 2."""
    shape = tuple(S.shape_of(x0))
    col = shape + (1,)
    return S.concatenate([S.reshape(x0, col), S.reshape(x1, col)], len(shape))


def to_u64(v):
    """A raw integer value as uint64, modulo 2**64 (signed values sign-extend first)."""
    dt = S.dtype_of(v)
    if dt == U64:
        return v
    if dt.kind == "i" and dt != I64:
        v = E.convert_element_type(v, I64)
    return E.convert_element_type(v, U64)


def split64(u):
    """A raw uint64 value -> (hi, lo) uint32 words."""
    hi = E.convert_element_type(E.bind(E.shift_right_logical_p, u, c(u, 32)), U32)
    lo = E.convert_element_type(E.bind(E.and_p, u, c(u, 0xFFFFFFFF)), U32)
    return hi, lo


def _check_blocks(m):
    if m > 2 ** 32:
        raise ValueError(f"random: a draw of {m} Threefry blocks exceeds the 2**32 counters of one key; "
                         "split the key and draw in pieces")


def bits32(k, n, start=0):
    """Words start, ..., start + n - 1 (flat uint32) of raw key k's stream: the words of blocks (0, 0), (0, 1), ...
    interleaved. (A later start draws a later part of the same stream as a computation of its own: XLA's CPU
    code reads one computation at two offsets through an outlined call, which does not vectorise.)"""
    if n == 0:
        return S.full((0,), 0, U32)
    m0, m1 = start // 2, (start + n + 1) // 2
    x0, x1 = blocks(k, m1 - m0, m0)
    out = S.reshape(pack(x0, x1), (2 * (m1 - m0),))
    lo = start - 2 * m0
    return out if (lo, n) == (0, 2 * (m1 - m0)) else S.slice_(out, (lo,), (lo + n,))


def blocks(k, n, start=0):
    """The words (x0, x1) of the stream's blocks start, ..., start + n - 1 (uint32, flat; n > 0)."""
    _check_blocks(start + n)
    k0, k1 = words(k)
    ctr = S.iota(U32, (n,), 0)
    return threefry(k0, k1, const(TAG_BITS, U32), E.add(ctr, c(ctr, start)) if start else ctr)


def bits64(k, n, start=0):
    """Words start, ..., start + n - 1 (flat uint64) of raw key k's 64-bit stream: block i gives hi word x0 and
    lo word x1."""
    if n == 0:
        return S.full((0,), 0, U64)
    hi, lo = (E.convert_element_type(x, U64) for x in blocks(k, n, start))
    return E.bind(E.or_p, E.bind(E.shift_left_p, hi, c(hi, 32)), lo)


def uniform01(k, shape, dtype, start=0):
    """Raw uniform [0, 1) of `dtype` (float32: 23 random bits, float64: 52), from the stream's word `start` on."""
    n = size(shape)
    return S.reshape(unit(bits32(k, n, start) if dtype == np.float32 else bits64(k, n, start)), shape)


def unit(b):
    """Raw uint32 (uint64) words -> float32 (float64) uniforms in [0, 1), from their high 23 (52) bits."""
    if S.dtype_of(b) == U32:
        b = E.bind(E.or_p, E.bind(E.shift_right_logical_p, b, c(b, 9)), c(b, 0x3F800000))
        f = B.bitcast_convert_type(b, np.float32)
    else:
        b = E.bind(E.or_p, E.bind(E.shift_right_logical_p, b, c(b, 12)), c(b, 0x3FF0000000000000))
        f = B.bitcast_convert_type(b, np.float64)
    return E.sub(f, c(f, 1.0))


# ------------------------------------------------------------- staged bodies: keys and words
# Each `_*_body` is run by `transforms.random` as one staged call (jaxpr_transforms.staged_call).

def _key_body(u):
    return pack(*split64(u))


def _split_body(k, *, num):
    k0, k1 = words(k)
    return pack(*threefry(k0, k1, const(TAG_SPLIT, U32), S.iota(U32, (num,), 0)))


def _fold_body(k, d):
    hi, lo = split64(d)
    k0, k1 = words(k)
    k0, k1 = threefry(k0, k1, const(TAG_FOLD_LO, U32), lo)
    return pack(*threefry(k0, k1, const(TAG_FOLD_HI, U32), hi))


def _tf_body(k, ctr):
    rest = tuple(S.shape_of(ctr)[1:])
    n = len(rest)
    c0 = S.reshape(S.slice_(ctr, (0,) * (n + 1), (1,) + rest), rest)
    c1 = S.reshape(S.slice_(ctr, (1,) + (0,) * n, (2,) + rest), rest)
    k0, k1 = words(k)
    x0, x1 = threefry(k0, k1, c0, c1)
    return S.concatenate([S.reshape(x0, (1,) + rest), S.reshape(x1, (1,) + rest)], 0)


def _bits_body(k, *, shape, dtype):
    n = size(shape)
    return S.reshape(bits32(k, n) if dtype == U32 else bits64(k, n), shape)
