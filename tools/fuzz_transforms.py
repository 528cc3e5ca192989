"""Fuzz the namespace: random calls run eagerly, under jit and under vmap must agree (values or exception types).

Why: eager and jit follow one documented semantics, and vmap equals a loop. Random calls over the special values
(signed zeros, subnormals, infinities, NaNs, integer extremes), dtypes, shapes (0-d, empty) and arguments (axes in
and out of range, Python scalars, out-of-range indices) find the corners a table of cases misses: this found
sum(-0.0) = -0.0, cumulative_sum of -0.0s, x + 0.0 and complex x * 1 folded by XLA, a subnormal read as nonzero in
complex special values, clamped out-of-range indices and x[()] aliasing x; with the set functions, nonzero, matmul
and include_initial drawn as well, a dot of one product keeping -0.0 under jit and eager unique_*/nonzero/
cumulative sums keeping subnormals (fixed in their commits; each has its own test, since 2 x 200 calls rarely meet
them). Each call is
compared bit for bit in its zeros' signs and NaN positions, to rtol 1e-6 (float32) / 1e-13 elsewhere in values,
and exactly in exception types; vmap runs the call on two batch elements (the second's values permuted) against
the eager calls. Known differences are listed, not reported: XLA's fused multiply-add (docs/coming-from-jax.md)
complex cumulative products with infinite parts (a tree scan multiplies in another order than NumPy's loop), and a
complex matmul with an infinite or NaN part (which parts come out inf and which nan is the kernel's order: README).

    python3 tools/fuzz_transforms.py                 # 400 calls, seed 0
    python3 tools/fuzz_transforms.py --seed 3 -n 2000
"""
from __future__ import annotations

import argparse
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))
import array_namespace as xp  # noqa: E402
from transforms import jit, vmap  # noqa: E402

UNARY = ("abs acos acosh asin asinh atan atanh bitwise_invert ceil conj cos cosh exp expm1 floor imag isfinite isinf "
         "isnan log log1p log2 log10 logical_not negative positive real round sign signbit sin sinh square sqrt tan "
         "tanh trunc reciprocal").split()
BINARY = ("add atan2 bitwise_and bitwise_left_shift bitwise_or bitwise_right_shift bitwise_xor copysign divide equal "
          "floor_divide greater greater_equal hypot less less_equal logaddexp logical_and logical_or logical_xor "
          "maximum minimum multiply nextafter not_equal pow remainder subtract").split()
REDUCTIONS = "sum prod max min mean std var all any argmax argmin count_nonzero cumulative_sum cumulative_prod".split()
OTHERS = ("flip roll squeeze expand_dims moveaxis sort argsort tril triu diff clip take matrix_transpose unique_values "
          "unique_counts nonzero matmul").split()
DTYPES = ("float64 float32 int64 int32 int8 uint8 uint64 bool complex128").split()
KNOWN = {"cumulative_prod": "complex infinities: a tree scan multiplies in another order than NumPy's loop"}


def _known(name, args):
    """Whether a call's difference is a known one (not reported): KNOWN's, or a matmul with a complex operand and an
    infinite or NaN part (BLAS eagerly, XLA's dot under jit: their non-finite parts differ, README)."""
    arrays = [np.asarray(a) for a in args if isinstance(a, xp.Array)]
    return name in KNOWN or name == "matmul" and any(a.dtype.kind == "c" for a in arrays) and not all(
        np.isfinite(a).all() for a in arrays)


def _array(rng):
    shape = tuple(int(s) for s in rng.integers(0, 4, int(rng.integers(0, 4))))
    dt = np.dtype(DTYPES[rng.integers(len(DTYPES))])
    n = int(np.prod(shape))
    if dt.kind == "b":
        v = rng.random(n) < 0.5
    elif dt.kind == "f":
        v = rng.choice([0.0, -0.0, 1.5, -2.25, np.inf, -np.inf, np.nan, 1e-310, 3.0, 1e30], n)
    elif dt.kind == "c":
        v = rng.choice([0, 1 + 2j, -1j, np.inf, complex(np.nan, 1), complex(-0.0, np.inf), 1e-310], n)
    else:
        info = np.iinfo(dt)
        v = rng.choice([0, 1, 2, 7, info.max, info.min, -1 if info.min else 3], n)
    return xp.asarray(np.asarray(v).astype(dt).reshape(shape))


def _call(rng):
    """(name, function, positional arguments, keywords) of one random call."""
    kind = rng.integers(4)
    if kind == 0:
        name = UNARY[rng.integers(len(UNARY))]
        return name, getattr(xp, name), [_array(rng)], {}
    if kind == 1:
        name = BINARY[rng.integers(len(BINARY))]
        a = _array(rng)
        b = _array(rng) if rng.random() < 0.7 else [1, 2.5, True, -3, 1j, 0.0][rng.integers(6)]
        return name, getattr(xp, name), [a, b] if rng.random() < 0.8 else [b, a], {}
    a, kw = _array(rng), {}
    if kind == 2:
        name = REDUCTIONS[rng.integers(len(REDUCTIONS))]
        if rng.random() < 0.6:
            kw["axis"] = int(rng.integers(-4, 4))
        if rng.random() < 0.3 and not name.startswith(("arg", "cumulative")):
            kw["keepdims"] = True
        if name.startswith("cumulative") and rng.random() < 0.4:
            kw["include_initial"] = True
        return name, getattr(xp, name), [a], kw
    name = OTHERS[rng.integers(len(OTHERS))]
    args = [a]
    if name in ("flip", "squeeze", "expand_dims", "roll", "sort", "argsort", "diff", "take") and rng.random() < 0.7:
        kw["axis"] = int(rng.integers(-4, 4))
    if name == "roll":
        args.append(int(rng.integers(-3, 4)))
    if name == "moveaxis":
        args += [int(rng.integers(-3, 3)), int(rng.integers(-3, 3))]
    if name == "clip":
        kw["min"], kw["max"] = [None, -1, 0.5][rng.integers(3)], [None, 1, 3.5][rng.integers(3)]
    if name == "matmul":   # (a contraction of the last axis, often of size 1: a dot of one product)
        args.append(xp.asarray(np.asarray(_array(rng)).reshape(-1)[:1].repeat(a.shape[-1] if a.ndim else 1)))
    if name == "take":   # (indices of every integer dtype: a bound check must hold for each)
        idx = rng.integers(-4, 4, int(rng.integers(0, 4)))
        dt = np.dtype(["int64", "int32", "int8", "uint8", "uint64"][rng.integers(5)])
        args.append(xp.asarray((idx % 4 if dt.kind == "u" else idx).astype(dt)))
    return name, getattr(xp, name), args, kw


def _outcome(f, args):
    try:
        out = f(*args)
    except Exception as e:   # (the type is what must agree)
        return ("raises", type(e).__name__)
    return ("returns", [np.asarray(o) for o in (out if isinstance(out, (tuple, list)) else [out])])


def _same(x, y):
    """Whether two results agree: shape and dtype, NaN positions, zeros' signs, values to the dtype's tolerance."""
    if x.shape != y.shape or x.dtype != y.dtype:
        return False
    if x.dtype.kind not in "fc":
        return np.array_equal(x, y)
    rtol = 1e-6 if x.dtype in (np.float32, np.complex64) else 1e-13
    parts = [(x.real, y.real), (x.imag, y.imag)] if x.dtype.kind == "c" else [(x, y)]
    for p, q in parts:
        zeros = (p == 0) & (q == 0)
        if not (np.array_equal(np.isnan(p), np.isnan(q)) and np.allclose(p, q, rtol=rtol, atol=0, equal_nan=True)
                and np.array_equal(np.signbit(p[zeros]), np.signbit(q[zeros]))):
            return False
    return True


def _agree(a, b):
    if a[0] != b[0]:
        return False
    return a[1] == b[1] if a[0] == "raises" else all(_same(x, y) for x, y in zip(a[1], b[1]))


def fuzz(seed, n):
    """The disagreements of n random calls: (name, transform, argument dtypes and shapes, keywords, outcomes)."""
    rng, found = np.random.default_rng(seed), []
    for _ in range(n):
        name, f, args, kw = _call(rng)
        pos = [i for i, x in enumerate(args) if isinstance(x, xp.Array)]

        def g(*arrays, f=f, args=args, kw=kw, pos=pos):
            full = list(args)
            for i, x in zip(pos, arrays):
                full[i] = x
            return f(*full, **kw)
        arrays = [args[i] for i in pos]
        eager = _outcome(g, arrays)
        where = [(str(x.dtype), x.shape) if isinstance(x, xp.Array) else x for x in args]
        jitted = _outcome(jit(g), arrays)
        if not _agree(eager, jitted) and not _known(name, arrays):
            found.append((name, "jit", where, kw, eager, jitted))
        if eager[0] != "returns":
            continue
        other = []
        for x in arrays:   # (a second batch element: the values permuted)
            v = np.asarray(x).copy()
            rng.shuffle(v.reshape(-1))
            other.append(xp.asarray(v))
        second = _outcome(g, other)
        if second[0] != "returns" or any(p.shape != q.shape for p, q in zip(eager[1], second[1])):
            continue   # (a value-dependent size the two elements do not share: no stack to compare with)
        batched = _outcome(vmap(g), [xp.stack([x, y]) for x, y in zip(arrays, other)])
        loop = ("returns", [np.stack([p, q]) for p, q in zip(eager[1], second[1])])
        if not _agree(loop, batched) and not _known(name, arrays):
            found.append((name, "vmap", where, kw, loop, batched))
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("-n", type=int, default=400, help="random calls")
    a = ap.parse_args()
    warnings.simplefilter("ignore")
    found = fuzz(a.seed, a.n)
    for name, how, where, kw, want, got in found:
        print(f"{name}{tuple(where)} {kw} under {how}: {want} vs {got}")
    print(f"{len(found)} disagreement(s) in {a.n} calls (seed {a.seed})")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
