"""pow: its host kernel and its lowering, for real floats, integers and complex numbers (the complex kernel is
xla/lower_elementwise_complex.py's complex_pow). Registered after xla/lower_elementwise_subnormal.py, whose operand
flush a float pow takes. Tested in tests/xla/test_lower_pow.py (integers), test_host_specialized.py (float
exponents 2, 3, 0.5) and tests/array_namespace/test_elementwise_subnormals.py.
"""
from __future__ import annotations

import numpy as np

from transforms.primitives import elementwise as E

from ._jaxlib import hlo, ir
from .host import host_kernels
from .lower_elementwise import _cmp, _full, _splat
from .lower_elementwise_complex import complex_pow
from .lower_elementwise_subnormal import _daz, _flush_operands
from .lowering import broadcast_to, constant, lowering_rules, ttype


def _pow_float_scalar(x, y):
    """Float x to a 0-d float exponent y: y = 2 or 3 by multiplication -- what XLA makes of a constant exponent
    under jit (its simplifier: x*x, x*x*x; for 2 also exactly pow's correctly rounded square) -- at a fraction
    of libm pow's cost (scipy's moments: x ** 2 over large arrays); other exponents: pow."""
    e = y.item()
    if e == 2.0:
        return np.multiply(x, x)
    if e == 3.0:
        return np.multiply(np.multiply(x, x), x)
    if e == 0.5:   # NumPy's power takes sqrt for a scalar 0.5; C pow's (-0) ** 0.5 is +0, (-inf) ** 0.5 is +inf
        r = np.abs(np.sqrt(x))   # (the lowering's: XLA drops a "+ 0")
        return np.where(x == -np.inf, x.dtype.type(np.inf), r)
    return _power(x, y)


def _power(x, y):
    """np.power of flushed operands (libm's pow may read a subnormal's bits: 0 ** 5e-324 = 0, the rule's 1), with the
    sign of a flushed result ((-1.8e308) ** -1 = -5.6e-309 comes out +0, XLA's -0: xla/host.py, "Subnormals")."""
    x, y = _daz(x), _daz(y)
    r = np.power(x, y)
    zero = r == 0
    if not np.count_nonzero(zero):   # (ndarray.any's Python wrapper: ~0.5 us more)
        return r
    neg = zero & (x < 0) & (np.abs(np.fmod(y, 2)) == 1)   # (an odd integer exponent)
    return np.where(neg, -np.abs(r), r) if np.count_nonzero(neg) else r


def _h_pow(x, y):
    k = x.dtype.kind
    if k == "f":
        return _pow_float_scalar(x, y) if y.ndim == 0 else _power(x, y)
    if k == "c":
        return complex_pow(_daz(x), _daz(y))
    if k not in "iu":
        return NotImplemented
    # every bit of y, wrapping as NumPy's own; a negative y: 1 at x = 1, +-1 at x = -1, else 0 (see _int_pow)
    neg = y < 0
    r = np.power(x, np.where(neg, y.dtype.type(0), y))
    if np.count_nonzero(neg):
        at_neg = np.where(x == 1, x, np.where(x == -1, np.where((y & 1) == 1, x, -x), x.dtype.type(0)))
        r = np.where(neg, at_neg, r)
    return r


def _int_pow(c, x, y):
    """Integer x ** y, wrapping as NumPy's and torch's, by squaring over every bit of y (a while loop until no
    element's exponent has bits left). XLA's own integer pow squares over y's low 6 bits only (int64 3 ** 64 was
    1) and reads an unsigned y as signed (uint8 7 ** 255 was 0). A negative y (NumPy raises; the standard leaves
    it unspecified) gives 1 at x = 1, +-1 at x = -1, else 0: XLA's values, kept."""
    a = c.avals_out[0]
    n = _splat(y) if c.avals_in[1].shape == () else None
    x, y = broadcast_to(x, c.avals_in[0], a), broadcast_to(y, c.avals_in[1], a)
    if n is not None and 0 <= n < 2 ** 31:   # a literal exponent: its own bits, unrolled (x ** 2 is x * x)
        acc, sq = _full(1, a), x
        for k in range(n.bit_length()):
            sq = hlo.MulOp(sq, sq).result if k else sq
            acc = hlo.MulOp(acc, sq).result if n >> k & 1 else acc
        return acc
    one, zero, t = _full(1, a), _full(0, a), ttype(a)
    neg = _cmp(y, zero, "LT", a.dtype)
    loop = hlo.WhileOp([t, t, t], [one, x, hlo.SelectOp(neg, zero, y).result])   # (acc, x^(2^k), bits left)
    with ir.InsertionPoint(loop.cond.blocks.append(t, t, t)):
        _, _, e = loop.cond.blocks[0].arguments
        pred = hlo.ConvertOp(ttype(a.update(dtype=np.dtype(bool))), e).result   # (e != 0)
        red = hlo.ReduceOp([ttype(a.update(shape=(), dtype=np.dtype(bool)))], [pred], [constant(False, np.bool_)],
                           dimensions=list(range(len(a.shape))))
        with ir.InsertionPoint(red.body.blocks.append(*[ttype(a.update(shape=(), dtype=np.dtype(bool)))] * 2)):
            hlo.ReturnOp([hlo.OrOp(*red.body.blocks[0].arguments).result])
        hlo.ReturnOp([red.result])
    with ir.InsertionPoint(loop.body.blocks.append(t, t, t)):
        acc, sq, e = loop.body.blocks[0].arguments
        bit = _cmp(hlo.AndOp(e, one).result, zero, "NE", a.dtype)
        hlo.ReturnOp([hlo.SelectOp(bit, hlo.MulOp(acc, sq).result, acc).result, hlo.MulOp(sq, sq).result,
                      hlo.ShiftRightLogicalOp(e, one).result])
    acc = loop.results[0]
    if a.dtype.kind == "u":
        return acc
    odd = _cmp(hlo.AndOp(y, one).result, zero, "NE", a.dtype)
    at_neg = hlo.SelectOp(_cmp(x, one, "EQ", a.dtype), one, hlo.SelectOp(
        _cmp(x, _full(-1, a), "EQ", a.dtype), hlo.SelectOp(odd, x, one).result, zero).result).result
    return hlo.SelectOp(neg, at_neg, acc).result


host_kernels[E.pow_p] = _h_pow


_flush_pow = _flush_operands(hlo.PowOp)


def _pow(c, x, y):
    """A real float to a literal 2 or 3 is x * x (* x), what XLA's simplifier makes of it and the host kernel
    computes (pow's correctly rounded square; the multiply reads a subnormal x as zero by itself, so no flush); to a
    literal 0.5 it is the host kernel's sqrt with pow's -0 and -inf cases (the correctly rounded value, as XLA's pow
    gives it, at ~1/15 of its cost); any other pow gets its operands flushed; an integer pow is _int_pow."""
    a = c.avals_out[0]
    if a.dtype.kind in "iu":
        return _int_pow(c, x, y)
    e = _splat(y) if c.avals_in[0].dtype.kind == "f" and c.avals_in[1].shape == () else None
    if e in (2.0, 3.0, 0.5):
        x = broadcast_to(x, c.avals_in[0], a)
    if e == 2.0 or e == 3.0:
        sq = hlo.MulOp(x, x).result
        return sq if e == 2.0 else hlo.MulOp(sq, x).result
    if e == 0.5:   # (|sqrt(-0)| is +0, as is sqrt of a subnormal x, flushed as pow's operand)
        r = hlo.AbsOp(hlo.SqrtOp(x).result).result
        return hlo.SelectOp(_cmp(x, _full(-np.inf, a), "EQ", a.dtype), _full(np.inf, a), r).result
    return _flush_pow(c, x, y)


lowering_rules[E.pow_p] = _pow
