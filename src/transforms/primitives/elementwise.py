"""Elementwise primitives: unary math, binary arithmetic, comparisons, select, conversion.

Operands of an n-ary elementwise primitive share one dtype (the namespace promotes before
binding) and broadcast like NumPy, so `x * 3.0` is one equation with a scalar literal.
Transposes therefore sum a cotangent back to each operand's shape (`unbroadcast`).
"""
from __future__ import annotations

import numpy as np

from ..core import Primitive, ShapedArray, abstract_eval_rules, bind, cacheable_abstract, fold_cacheable
from ..rules import UndefPrimal, Zero, batch_rules, is_undefined, jvp_rules, transpose_rules, zero_jvp
from . import structural as S   # reductions imports this module: reduce_sum is bound late (unbroadcast)

# ------------------------------------------------------------------------ shared rules

def broadcast_shapes(*shapes):
    """NumPy broadcasting of shapes; ValueError naming the shapes when they do not broadcast."""
    first = shapes[0]
    if len(shapes) == 2:   # (the common cases without the loop: equal shapes, a 0-d operand)
        second = shapes[1]
        if first == second or not second:
            return tuple(first)
        if not first:
            return tuple(second)
    else:   # (all equal but for 0-d operands: x where cond, 0.0)
        common = None
        for s in shapes:
            if s:
                if common is None:
                    common = s
                elif s != common:
                    break
        else:
            return tuple(common) if common is not None else ()
    ndim = max(len(s) for s in shapes)
    out = []
    for i in range(ndim):
        d = 1
        for s in shapes:
            k = i - (ndim - len(s))
            if k < 0:
                continue
            e = s[k]
            if e != 1:
                if d != 1 and d != e:
                    raise ValueError("shapes " + " and ".join(str(tuple(s)) for s in shapes)
                                     + " cannot be broadcast together")
                d = e
        out.append(d)
    return tuple(out)


def _nary_abstract(out_dtype=None):
    def rule(*avals, **params):
        a0 = avals[0]
        if len(avals) == 1:   # (unary: the operand's aval itself where the dtype is kept -- a new shape's first
            return a0 if out_dtype is None else ShapedArray(a0.shape, out_dtype(a0.dtype))  # call makes none)
        dt = a0.dtype
        for a in avals[1:]:
            if a.dtype != dt:
                raise TypeError(f"elementwise operands must share a dtype, got "
                                f"{', '.join(a.dtype.name for a in avals)}")
        shape = broadcast_shapes(*[a.shape for a in avals])
        if out_dtype is not None:
            return ShapedArray(shape, out_dtype(dt))
        weak = True
        for a in avals:
            weak = weak and a.weak_type
        for a in avals:   # an operand with exactly the result's aval (x * 2, x + y): that aval, shared
            if a.weak_type == weak and a.shape == shape:
                return a
        return ShapedArray(shape, dt, weak)
    return rule


_same = _nary_abstract()
_to_bool = _nary_abstract(lambda dt: np.dtype(bool))
_to_real = _nary_abstract(lambda dt: np.dtype(np.float32) if dt == np.complex64 else
                          np.dtype(np.float64) if dt == np.complex128 else dt)


def elementwise_batch(prim):
    """Batching for broadcasting n-ary ops: put batch dims in front, pad ranks with 1s."""
    def rule(axis_size, vals, dims, **params):
        first = next(d for d in dims if d is not None)
        ranks = [np.ndim(v) if not hasattr(v, "aval") else v.aval.ndim for v in vals]
        logical = [r - (d is not None) for r, d in zip(ranks, dims)]
        out_rank = max(logical)
        if all(d == first for d in dims) and all(lr == out_rank for lr in logical):
            return bind(prim, *vals, **params), first
        moved = []
        for v, d, lr in zip(vals, dims, logical):
            if d is None:
                moved.append(v)
                continue
            v = S.moveaxis(v, d, 0)
            if lr < out_rank:
                shp = S.shape_of(v)
                v = S.reshape(v, (shp[0],) + (1,) * (out_rank - lr) + tuple(shp[1:]))
            moved.append(v)
        return bind(prim, *moved, **params), 0
    return rule


def unbroadcast(ct, aval):
    """Sum a cotangent down to the shape (and weak type) of the operand it belongs to."""
    if ct is Zero:
        return Zero
    shape = S.shape_of(ct)
    if tuple(shape) == tuple(aval.shape):
        return ct
    lead = len(shape) - len(aval.shape)
    axes = tuple(range(lead)) + tuple(i + lead for i, d in enumerate(aval.shape) if d == 1 and shape[i + lead] != 1)
    from .reductions import reduce_sum
    out = reduce_sum(ct, axes)
    if S.shape_of(out) != tuple(aval.shape):
        out = S.reshape(out, tuple(aval.shape))
    return out


def defjvp(prim, *fns):
    """jvp as a sum of per-operand contributions fn(tangent, ans, *primals)."""
    def rule(primals, tangents, **params):
        ans = bind(prim, *primals, **params)
        out = Zero
        for fn, t in zip(fns, tangents):
            if fn is None or t is Zero:
                continue
            c = fn(t, ans, *primals)
            out = c if out is Zero else add(out, c)
        return ans, out
    jvp_rules[prim] = rule


def _unop(name, jvp=None, abstract=_same):
    p = Primitive(name)
    abstract_eval_rules[p] = abstract
    cacheable_abstract.add(p)
    batch_rules[p] = lambda axis_size, vals, dims, _p=p, **params: (bind(_p, *vals, **params), dims[0])
    if jvp is not None:
        defjvp(p, jvp)
    return p


def _binop(name, abstract=_same):
    p = Primitive(name)
    abstract_eval_rules[p] = abstract
    cacheable_abstract.add(p)
    batch_rules[p] = elementwise_batch(p)
    return p


# ------------------------------------------------------------------ helpers (raw values)

def full_like_scalar(x, value):
    """A weak scalar of x's dtype (broadcasts against x)."""
    return convert_element_type(value, S.dtype_of(x), weak_type=True)


def add(x, y): return bind(add_p, x, y)
def sub(x, y): return bind(sub_p, x, y)
def mul(x, y): return bind(mul_p, x, y)
def div(x, y): return bind(div_p, x, y)
def mul0(x, y): return bind(mul0_p, x, y)
def div0(x, y): return bind(div0_p, x, y)
def neg(x): return bind(neg_p, x)
def select_n(pred, *cases): return bind(select_n_p, pred, *cases)


def convert_element_type(x, new_dtype, weak_type=False):
    return bind(convert_element_type_p, x, new_dtype=np.dtype(new_dtype), weak_type=bool(weak_type))


def _c(x, v):
    return full_like_scalar(x, v)


# ----------------------------------------------------------------- linear unary: neg
neg_p = _unop("neg", lambda t, ans, x: neg(t))
transpose_rules[neg_p] = lambda ct, x: [neg(ct) if ct is not Zero else Zero]

# ------------------------------------------------------------- transcendental unary ops
# (the tangent is scaled by mul0/div0, which keep an exactly zero tangent zero: see mul0 below)
sin_p = _unop("sin", lambda t, ans, x: mul0(t, bind(cos_p, x)))
cos_p = _unop("cos", lambda t, ans, x: neg(mul0(t, bind(sin_p, x))))
tan_p = _unop("tan", lambda t, ans, x: mul0(t, add(_c(ans, 1), mul(ans, ans))))
asin_p = _unop("asin", lambda t, ans, x: mul0(t, bind(rsqrt_p, sub(_c(x, 1), mul(x, x)))))
acos_p = _unop("acos", lambda t, ans, x: neg(mul0(t, bind(rsqrt_p, sub(_c(x, 1), mul(x, x))))))
atan_p = _unop("atan", lambda t, ans, x: div0(t, add(_c(x, 1), mul(x, x))))
sinh_p = _unop("sinh", lambda t, ans, x: mul0(t, bind(cosh_p, x)))
cosh_p = _unop("cosh", lambda t, ans, x: mul0(t, bind(sinh_p, x)))
tanh_p = _unop("tanh", lambda t, ans, x: mul0(t, sub(_c(ans, 1), mul(ans, ans))))
asinh_p = _unop("asinh", lambda t, ans, x: mul0(t, bind(rsqrt_p, add(mul(x, x), _c(x, 1)))))
acosh_p = _unop("acosh", lambda t, ans, x: mul0(t, bind(rsqrt_p, mul(sub(x, _c(x, 1)), add(x, _c(x, 1))))))
atanh_p = _unop("atanh", lambda t, ans, x: div0(t, sub(_c(x, 1), mul(x, x))))
exp_p = _unop("exp", lambda t, ans, x: mul0(t, ans))
exp2_p = _unop("exp2", lambda t, ans, x: mul0(t, mul(ans, _c(ans, np.log(2.0)))))
expm1_p = _unop("expm1", lambda t, ans, x: mul0(t, add(ans, _c(ans, 1))))
log_p = _unop("log", lambda t, ans, x: div0(t, x))
log1p_p = _unop("log1p", lambda t, ans, x: div0(t, add(x, _c(x, 1))))
sqrt_p = _unop("sqrt", lambda t, ans, x: div0(t, mul(ans, _c(ans, 2))))
rsqrt_p = _unop("rsqrt", lambda t, ans, x: mul0(t, mul(div(ans, x), _c(x, -0.5))))
cbrt_p = _unop("cbrt", lambda t, ans, x: div0(t, mul(mul(ans, ans), _c(ans, 3))))
logistic_p = _unop("logistic", lambda t, ans, x: mul0(t, mul(ans, sub(_c(ans, 1), ans))))
erf_p = _unop("erf", lambda t, ans, x: mul0(t, mul(_c(x, 2 / np.sqrt(np.pi)), bind(exp_p, neg(mul(x, x))))))

# --------------------------------------------------------------- piecewise / integer ops
sign_p = _unop("sign")
floor_p = _unop("floor")
ceil_p = _unop("ceil")
round_p = _unop("round")          # half to even, as the standard asks
is_finite_p = _unop("is_finite", abstract=_to_bool)
not_p = _unop("not")              # logical not for bool, bitwise not for integers
for _p in (sign_p, floor_p, ceil_p, round_p, is_finite_p, not_p):
    zero_jvp(_p)


def _abs_jvp(t, ans, x):
    if np.issubdtype(S.dtype_of(x), np.complexfloating):
        # d|z| = Re(conj(z) dz) / |z|
        num = bind(real_p, mul(bind(conj_p, x), t))
        return div(num, select_n(bind(eq_p, ans, _c(ans, 0)), ans, _c(ans, 1)))
    return mul0(t, bind(sign_p, x))


abs_p = _unop("abs", _abs_jvp, abstract=_to_real)

# ------------------------------------------------------------------------ complex parts
real_p = _unop("real", lambda t, ans, x: bind(real_p, t), abstract=_to_real)
imag_p = _unop("imag", lambda t, ans, x: bind(imag_p, t), abstract=_to_real)
conj_p = _unop("conj", lambda t, ans, x: bind(conj_p, t))


def _complex_of(ct_real, aval, imag=False):
    z = convert_element_type(ct_real, aval.dtype)
    return mul(z, full_like_scalar(z, -1j)) if imag else z


transpose_rules[real_p] = lambda ct, x: [Zero if ct is Zero else _complex_of(ct, x.aval)]
transpose_rules[imag_p] = lambda ct, x: [Zero if ct is Zero else _complex_of(ct, x.aval, imag=True)]
transpose_rules[conj_p] = lambda ct, x: [Zero if ct is Zero else bind(conj_p, ct)]

# ------------------------------------------------------------- complex from parts
# complex(re, im) = re + im*1j, exactly (no multiplication, so no inf * 0 = NaN): how complex results
# are assembled from real formulas (array_namespace/_complex_special.py). Linear in both operands;
# its transpose under the real pairing Re(ct * z) gives re the real part of ct and im minus its imaginary part.
_COMPLEX_OF = {np.dtype(np.float32): np.dtype(np.complex64), np.dtype(np.float64): np.dtype(np.complex128)}


def _complex_abstract(re, im):
    if re.dtype not in _COMPLEX_OF or im.dtype != re.dtype:
        raise TypeError(f"complex takes two float32 or two float64 operands, got {re.dtype.name} and {im.dtype.name}")
    return ShapedArray(broadcast_shapes(re.shape, im.shape), _COMPLEX_OF[re.dtype], re.weak_type and im.weak_type)


complex_p = _binop("complex", abstract=_complex_abstract)
defjvp(complex_p,
       lambda t, ans, re, im: S.broadcast_to_shape(bind(complex_p, t, S.zeros_like(t)), S.shape_of(ans)),
       lambda t, ans, re, im: S.broadcast_to_shape(bind(complex_p, S.zeros_like(t), t), S.shape_of(ans)))


def _complex_transpose(ct, re, im):
    if ct is Zero:
        return [Zero if is_undefined(re) else None, Zero if is_undefined(im) else None]
    return [unbroadcast(bind(real_p, ct), _aval(re)) if is_undefined(re) else None,
            unbroadcast(neg(bind(imag_p, ct)), _aval(im)) if is_undefined(im) else None]


transpose_rules[complex_p] = _complex_transpose

# ------------------------------------------------------------------- linear binary ops
add_p = _binop("add")
sub_p = _binop("sub")
defjvp(add_p, lambda t, ans, x, y: S.broadcast_to_shape(t, S.shape_of(ans)),
       lambda t, ans, x, y: S.broadcast_to_shape(t, S.shape_of(ans)))
defjvp(sub_p, lambda t, ans, x, y: S.broadcast_to_shape(t, S.shape_of(ans)),
       lambda t, ans, x, y: S.broadcast_to_shape(neg(t), S.shape_of(ans)))


def _aval(x):
    return x.aval if isinstance(x, UndefPrimal) else S.aval_of(x)


def _add_transpose(ct, x, y):
    return [unbroadcast(ct, _aval(x)) if is_undefined(x) else None,
            unbroadcast(ct, _aval(y)) if is_undefined(y) else None]


def _sub_transpose(ct, x, y):
    return [unbroadcast(ct, _aval(x)) if is_undefined(x) else None,
            unbroadcast(neg(ct), _aval(y)) if is_undefined(y) and ct is not Zero else None]


transpose_rules[add_p] = _add_transpose
transpose_rules[sub_p] = _sub_transpose

# ------------------------------------------------------------------- bilinear: mul, div
mul_p = _binop("mul")
defjvp(mul_p, lambda t, ans, x, y: mul0(t, y), lambda t, ans, x, y: mul0(x, t))


def _product_transpose(name, op):
    """The transpose of a product op(x, y) (mul, mul0), linear in the one operand being transposed."""
    def rule(ct, x, y):
        if ct is Zero:
            return [None, None]
        if is_undefined(x) and is_undefined(y):
            raise TypeError(f"{name} is not linear in both operands at once")
        if is_undefined(x):
            return [unbroadcast(op(ct, y), x.aval), None]
        return [None, unbroadcast(op(x, ct), y.aval)]
    return rule


def _quotient_transpose(name, op):
    """The transpose of a quotient op(x, y) (div, div0), linear in its numerator only."""
    def rule(ct, x, y):
        if is_undefined(y):
            raise TypeError(f"{name} is linear only in its numerator")
        return [Zero if ct is Zero else unbroadcast(op(ct, y), x.aval), None]
    return rule


transpose_rules[mul_p] = _product_transpose("mul", mul)

div_p = _binop("div")
defjvp(div_p, lambda t, ans, x, y: div0(t, y), lambda t, ans, x, y: neg(mul0(t, div(ans, y))))

transpose_rules[div_p] = _quotient_transpose("div", div)

# ------------------------------------------------ zero-keeping products: mul0, div0 (for jvp rules)
# A jvp rule scales the tangent by a partial derivative that can be inf or NaN where the primal is
# singular (1/y at y = 0, sqrt' at 0, exp overflowing). Where the tangent -- or, transposed, the
# cotangent -- is exactly zero (an unselected `where` branch, a position a masked write overwrote), the
# product must stay zero, else 0 * inf = NaN spreads to every input in reverse mode while forward mode
# and finite differences are finite (JAX and torch give that NaN). So the rules scale with
#   mul0(a, b) = a * b, but 0 where a == 0 or b == 0   (bilinear; each transpose is mul0 again)
#   div0(a, b) = a / b, but 0 where a == 0             (linear in a; its transpose is div0 again)
# equal to mul/div wherever the result is finite; one compare and select that XLA fuses into the product.
mul0_p = _binop("mul0")
div0_p = _binop("div0")
defjvp(mul0_p, lambda t, ans, x, y: mul0(t, y), lambda t, ans, x, y: mul0(x, t))
defjvp(div0_p, lambda t, ans, x, y: div0(t, y), lambda t, ans, x, y: neg(mul0(t, div0(ans, y))))  # (ans is 0 where x is)
transpose_rules[mul0_p] = _product_transpose("mul0", mul0)
transpose_rules[div0_p] = _quotient_transpose("div0", div0)

# --------------------------------------------------------------------- nonlinear binary
max_p = _binop("max")
min_p = _binop("min")


def _minmax_jvp(prim, cmp):
    # ties split the tangent evenly, so max(x, x) has derivative 1
    def rule(primals, tangents):
        x, y = primals
        ans = bind(prim, x, y)
        half = _c(ans, 0.5)
        wx = select_n(bind(cmp, x, y), select_n(bind(eq_p, x, y), _c(ans, 0), half), _c(ans, 1))
        wy = sub(_c(ans, 1), wx)
        out = Zero
        for w, t in ((wx, tangents[0]), (wy, tangents[1])):
            if t is not Zero:
                c = mul(t, w)
                out = c if out is Zero else add(out, c)
        return ans, out
    return rule


pow_p = _binop("pow")
atan2_p = _binop("atan2")
rem_p = _binop("rem")
nextafter_p = _binop("nextafter")


def _pow_dx(t, ans, x, y):
    # y * x**(y-1), with 0**0 handled by where y == 0 -> 0
    ym1 = sub(y, _c(y, 1))
    d = mul(y, bind(pow_p, x, ym1))
    d = select_n(bind(eq_p, y, _c(y, 0)), d, _c(d, 0))
    return mul0(t, d)


def _pow_dy(t, ans, x, y):
    safe_x = select_n(bind(eq_p, x, _c(x, 0)), x, _c(x, 1))
    d = mul(ans, bind(log_p, safe_x))
    return mul0(t, d)


defjvp(pow_p, _pow_dx, _pow_dy)


def _atan2_jvp(primals, tangents):
    y, x = primals
    ans = bind(atan2_p, y, x)
    denom = add(mul(x, x), mul(y, y))
    out = Zero
    if tangents[0] is not Zero:
        out = mul0(tangents[0], div(x, denom))
    if tangents[1] is not Zero:
        c = neg(mul0(tangents[1], div(y, denom)))
        out = c if out is Zero else add(out, c)
    return ans, out


jvp_rules[atan2_p] = _atan2_jvp


def _rem_dy(t, ans, x, y):
    q = div(sub(x, ans), y)   # the integer quotient trunc(x / y)
    return neg(mul0(t, q))


defjvp(rem_p, lambda t, ans, x, y: S.broadcast_to_shape(t, S.shape_of(ans)), _rem_dy)
zero_jvp(nextafter_p)

# ------------------------------------------------------------- comparisons and logic
eq_p = _binop("eq", _to_bool)
ne_p = _binop("ne", _to_bool)
lt_p = _binop("lt", _to_bool)
le_p = _binop("le", _to_bool)
gt_p = _binop("gt", _to_bool)
ge_p = _binop("ge", _to_bool)
and_p = _binop("and")
or_p = _binop("or")
xor_p = _binop("xor")
shift_left_p = _binop("shift_left")
shift_right_arithmetic_p = _binop("shift_right_arithmetic")
shift_right_logical_p = _binop("shift_right_logical")
for _p in (eq_p, ne_p, lt_p, le_p, gt_p, ge_p, and_p, or_p, xor_p, shift_left_p,
           shift_right_arithmetic_p, shift_right_logical_p):
    zero_jvp(_p)
jvp_rules[max_p] = _minmax_jvp(max_p, gt_p)
jvp_rules[min_p] = _minmax_jvp(min_p, lt_p)

# ---------------------------------------------------------------------------- select_n
select_n_p = Primitive("select_n")


def _select_abstract(pred, *cases):
    if pred.dtype != np.bool_ and not (pred.dtype.kind in "iu" and len(cases) > 2):
        raise TypeError(f"select_n predicate must be bool, got {pred.dtype.name}")
    case = _same(*cases)
    shape = broadcast_shapes(pred.shape, *[c.shape for c in cases])
    return case if case.shape == shape else ShapedArray(shape, case.dtype, case.weak_type)


abstract_eval_rules[select_n_p] = _select_abstract
cacheable_abstract.add(select_n_p)
batch_rules[select_n_p] = elementwise_batch(select_n_p)


def _select_jvp(primals, tangents):
    pred, *cases = primals
    ans = select_n(pred, *cases)
    if all(t is Zero for t in tangents[1:]):
        return ans, Zero
    ts = [S.zeros_like(c) if t is Zero else t for c, t in zip(cases, tangents[1:])]
    return ans, select_n(pred, *ts)


jvp_rules[select_n_p] = _select_jvp


def _select_transpose(ct, pred, *cases):
    if is_undefined(pred):
        raise TypeError("select_n is not linear in its predicate")
    out = [None]
    for i, c in enumerate(cases):
        if not is_undefined(c) or ct is Zero:
            out.append(None if not is_undefined(c) else Zero)
            continue
        z = S.zeros_like(ct)
        picks = [z] * len(cases)
        picks[i] = ct
        out.append(unbroadcast(select_n(pred, *picks), c.aval))
    return out


transpose_rules[select_n_p] = _select_transpose

# ------------------------------------------------------------------ convert_element_type
convert_element_type_p = Primitive("convert_element_type")


def _convert_abstract(x, *, new_dtype, weak_type):
    return ShapedArray(x.shape, new_dtype, weak_type)


abstract_eval_rules[convert_element_type_p] = _convert_abstract
cacheable_abstract.add(convert_element_type_p)
fold_cacheable.add(convert_element_type_p)   # (a scalar conversion is exact: its folds are memoized)
batch_rules[convert_element_type_p] = lambda axis_size, vals, dims, **p: (
    bind(convert_element_type_p, vals[0], **p), dims[0])


def _convert_jvp(primals, tangents, *, new_dtype, weak_type):
    (x,), (t,) = primals, tangents
    ans = convert_element_type(x, new_dtype, weak_type)
    if t is Zero or new_dtype.kind not in "fc" or S.dtype_of(x).kind not in "fc":
        return ans, Zero
    return ans, convert_element_type(t, new_dtype, weak_type)


jvp_rules[convert_element_type_p] = _convert_jvp


def _convert_transpose(ct, x, *, new_dtype, weak_type):
    if ct is Zero:
        return [Zero]
    old = x.aval.dtype
    if old.kind != "c" and new_dtype.kind == "c":
        ct = bind(real_p, ct)
    return [convert_element_type(ct, old, x.aval.weak_type)]


transpose_rules[convert_element_type_p] = _convert_transpose

# ------------------------------------------------------------------------------- clamp
# (clip is composed from max/min in the namespace; no extra primitive needed)

UNARY_FLOAT = [sin_p, cos_p, tan_p, asin_p, acos_p, atan_p, sinh_p, cosh_p, tanh_p, asinh_p, acosh_p,
               atanh_p, exp_p, exp2_p, expm1_p, log_p, log1p_p, sqrt_p, rsqrt_p, cbrt_p, logistic_p, erf_p]
