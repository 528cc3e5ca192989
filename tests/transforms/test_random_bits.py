"""transforms.random_bits: the raw-value Threefry generator and the streams of a key.

The raw helpers are called directly on raw values (eagerly and under jit) and compared with an
oracle written on Python integers (mod 2**32 arithmetic by masking), independent of the NumPy
oracle in test_random.py; the float mapping is checked against the bits it is made from, and
the public samplers are checked to be one staged call each (jaxpr_transforms.staged_call).
"""
import numpy as np
import pytest

import array_namespace as xp
from transforms import jit, make_jaxpr, random
from transforms import random_bits as RB
from transforms.api_util import box

M32 = 0xFFFFFFFF
ROT = (13, 15, 26, 6, 17, 29, 16, 24)


def py_threefry(k0, k1, c0, c1):
    """Threefry-2x32 (20 rounds) on Python ints, from the Random123 description."""
    ks = [k0, k1, k0 ^ k1 ^ 0x1BD11BDA]
    x0, x1 = (c0 + ks[0]) & M32, (c1 + ks[1]) & M32
    for r in range(20):
        x0 = (x0 + x1) & M32
        s = ROT[r % 8]
        x1 = (((x1 << s) | (x1 >> (32 - s))) & M32) ^ x0
        if r % 4 == 3:
            i = r // 4 + 1
            x0 = (x0 + ks[i % 3]) & M32
            x1 = (x1 + ks[(i + 1) % 3] + i) & M32
    return x0, x1


def raw(a, dtype=None):
    return xp.asarray(np.asarray(a, dtype))._v


def npv(v):
    return np.asarray(box(v))


KEYS = [(0, 0), (M32, M32), (0x13198A2E, 0x03707344), (0x12345678, 0x9ABCDEF0)]


def test_oracle_known_answers():
    assert py_threefry(0, 0, 0, 0) == (0x6B200159, 0x99BA4EFE)
    assert py_threefry(M32, M32, M32, M32) == (0x1CB996FC, 0xBB002BE7)
    assert py_threefry(0x13198A2E, 0x03707344, 0x243F6A88, 0x85A308D3) == (0xC4923A9C, 0x483DF7A0)


@pytest.mark.parametrize("k", KEYS)
def test_raw_threefry_matches_python_int_oracle(k):
    rng = np.random.default_rng(k[0] & 0xFFFF)
    c = rng.integers(0, 2 ** 32, size=(2, 6), dtype=np.uint32)
    x0, x1 = RB.threefry(raw(k[0], np.uint32), raw(k[1], np.uint32), raw(c[0]), raw(c[1]))
    want = [py_threefry(k[0], k[1], int(a), int(b)) for a, b in zip(c[0], c[1])]
    assert npv(x0).tolist() == [w[0] for w in want]
    assert npv(x1).tolist() == [w[1] for w in want]


@pytest.mark.parametrize("n", [0, 1, 2, 5, 8])
def test_bits32_and_bits64_layout(n):
    k0, k1 = KEYS[3]
    kr = raw([k0, k1], np.uint32)
    blocks = [py_threefry(k0, k1, 0, i) for i in range(n)]
    w32 = npv(RB.bits32(kr, n))
    assert w32.dtype == np.uint32 and w32.tolist() == [w for b in blocks for w in b][:n]
    w64 = npv(RB.bits64(kr, n))
    assert w64.dtype == np.uint64 and w64.tolist() == [(a << 32) | b for a, b in blocks]


def test_key_split_fold_bodies_match_oracle():
    k0, k1 = KEYS[2]
    kr = raw([k0, k1], np.uint32)
    assert npv(RB._split_body(kr, num=3)).tolist() == [list(py_threefry(k0, k1, 1, i)) for i in range(3)]
    d = (9 << 32) | 123
    a = py_threefry(k0, k1, 2, 123)
    assert npv(RB._fold_body(kr, raw(d, np.uint64))).tolist() == list(py_threefry(*a, 3, 9))
    assert npv(RB._key_body(raw(d, np.uint64))).tolist() == [9, 123]


@pytest.mark.parametrize("dtype,shift,eps", [(np.float32, 9, 2.0 ** -23), (np.float64, 12, 2.0 ** -52)])
def test_uniform01_is_the_top_mantissa_bits(dtype, shift, eps):
    kr = raw(KEYS[3], np.uint32)
    n = 37
    u = npv(RB.uniform01(kr, (n,), np.dtype(dtype)))
    words = npv(RB.bits32(kr, n) if dtype == np.float32 else RB.bits64(kr, n))
    want = (words >> words.dtype.type(shift)).astype(np.float64) * eps
    assert u.dtype == dtype
    np.testing.assert_array_equal(u.astype(np.float64), want)
    assert u.min() >= 0 and u.max() < 1


@pytest.mark.parametrize("dt,v,want", [(np.int8, -1, 2 ** 64 - 1), (np.int32, -5, 2 ** 64 - 5), (np.uint8, 200, 200),
                                       (np.int64, 2 ** 40, 2 ** 40), (np.uint64, 2 ** 63 + 1, 2 ** 63 + 1)])
def test_to_u64_and_split64(dt, v, want):
    u = RB.to_u64(raw(v, dt))
    assert npv(u).dtype == np.uint64 and int(npv(u)) == want
    hi, lo = RB.split64(u)
    assert (int(npv(hi)), int(npv(lo))) == (want >> 32, want & M32)


def test_raw_helpers_under_jit_match_eager():
    f = jit(lambda k: box(RB.bits64(k._v, 9)))
    k = xp.asarray(np.array(KEYS[1], np.uint32))
    np.testing.assert_array_equal(np.asarray(f(k)), npv(RB.bits64(k._v, 9)))


@pytest.mark.parametrize("k", KEYS + [(1, 2 ** 31), (2 ** 32 - 2, 2 ** 31 - 1)])
def test_key_words_come_back_exact_eagerly_and_under_jit(k):
    # words() sends each word through float64 (to hide it from LLVM's loop strength reduction)
    kr = xp.asarray(np.array(k, np.uint32))
    assert [int(npv(w)) for w in RB.words(kr._v)] == list(k)
    got = jit(lambda a: [box(w) for w in RB.words(a._v)])(kr)
    assert [int(np.asarray(w)) for w in got] == list(k)


@pytest.mark.parametrize("n", [6, 15])
def test_bits_of_a_key_folded_in_the_same_program_match_oracle(n):
    # the composition the opaque words are for: a key made and used in one compiled kernel
    k0, k1 = KEYS[3]
    f = jit(lambda a: box(RB.bits32(RB._fold_body(a._v, RB.to_u64(RB.const(7, np.uint32))), n)))
    kf = py_threefry(*py_threefry(k0, k1, 2, 7), 3, 0)
    blocks = [py_threefry(*kf, 0, i) for i in range((n + 1) // 2)]
    assert np.asarray(f(xp.asarray(np.array([k0, k1], np.uint32)))).tolist() == [w for b in blocks for w in b][:n]


def test_too_many_blocks_is_a_value_error():
    with pytest.raises(ValueError, match="2\\*\\*32 counters"):
        random.bits(random.key(0), (2 ** 33 + 2,))
    with pytest.raises(ValueError, match="2\\*\\*32 counters"):
        random.bits(random.key(0), (2 ** 32 + 1,), xp.uint64)


@pytest.mark.parametrize("name,f", [
    ("random_bits_body", lambda k: random.bits(k, (3,))),
    ("random_split_body", lambda k: random.split(k, 4)),
    ("random_fold_body", lambda k: random.fold_in(k, 3)),
    ("random_uniform_body", lambda k: random.uniform(k, (3,))),
    ("random_permutation_body", lambda k: random.permutation(k, 5)),
    ("random_choice_body", lambda k: random.choice(k, 5, (2,), p=xp.asarray([0.2] * 5))),
    ("random_categorical_body", lambda k: random.categorical(k, xp.zeros((2, 3)))),
])
def test_each_sampler_is_one_staged_call(name, f):
    eqns = make_jaxpr(f)(random.key(0)).jaxpr.eqns
    calls = [e for e in eqns if e.prim.name == "jit"]
    assert len(calls) == 1 and calls[0].params["name"] == name
