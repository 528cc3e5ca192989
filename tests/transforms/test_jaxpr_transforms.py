"""jaxpr_transforms.py: each jaxpr-to-jaxpr transform against an oracle, the carry fixed point, staged_call.

jvp_jaxpr vs the analytic derivative and central differences, batch_jaxpr vs a Python loop,
partial_eval_jaxpr's known and unknown parts recombined vs eval_jaxpr of the original, and
transpose_jaxpr vs the dot-product identity <ct, L t> = <L^T ct, t> and the explicit matrix.
"""
import numpy as np
import pytest

import array_namespace as xp
from transforms import grad, jit, vmap
from transforms.api_util import box
from transforms.core import get_aval
from transforms.jaxpr_transforms import (batch_jaxpr, carry_fixed_point, jvp_jaxpr, partial_eval_jaxpr,
                                         run_jaxpr, stage, staged_call, transpose_jaxpr)

RNG = np.random.default_rng(0)


def raw(v):
    return xp.asarray(np.asarray(v))._v


def run(closed, *args):
    return [np.asarray(o) for o in run_jaxpr(closed)(*[raw(a) for a in args])]


def _f(x, y):          # raw values: sin(x) * y + exp(x), and an integer output
    x, y = box(x), box(y)
    return [(xp.sin(x) * y + xp.exp(x))._v, xp.astype(x, xp.int32)._v]


def _f_np(x, y):
    return np.sin(x) * y + np.exp(x)


X, Y = RNG.normal(size=5), RNG.normal(size=5)
F = stage(_f, [get_aval(raw(X)), get_aval(raw(Y))])


# --------------------------------------------------------------------------------- jvp_jaxpr

def test_jvp_jaxpr_vs_analytic_and_finite_differences():
    t = RNG.normal(size=5)
    new, out_nz = jvp_jaxpr(F, (True, False), False)
    assert out_nz == (True, False)          # the integer output has no tangent
    y, _, ty = run(new, X, Y, t)
    np.testing.assert_allclose(y, _f_np(X, Y), rtol=1e-13)
    np.testing.assert_allclose(ty, (np.cos(X) * Y + np.exp(X)) * t, rtol=1e-12)
    eps = 1e-6
    fd = (_f_np(X + eps * t, Y) - _f_np(X - eps * t, Y)) / (2 * eps)
    np.testing.assert_allclose(ty, fd, rtol=1e-6, atol=1e-8)
    # both tangents: linear in (tx, ty)
    new2, _ = jvp_jaxpr(F, (True, True), False)
    ty2 = RNG.normal(size=5)
    out = run(new2, X, Y, t, ty2)[2]
    np.testing.assert_allclose(out, (np.cos(X) * Y + np.exp(X)) * t + np.sin(X) * ty2, rtol=1e-12)


def test_jvp_jaxpr_instantiate_modes():
    assert jvp_jaxpr(F, (False, False), False)[1] == (False, False)       # symbolic zeros stay Zero
    new, nz = jvp_jaxpr(F, (False, False), True)                          # differentiable outputs only
    assert nz == (True, False)
    np.testing.assert_array_equal(run(new, X, Y)[2], np.zeros(5))
    new, nz = jvp_jaxpr(F, (False, False), (False, True))                 # per output, any dtype
    assert nz == (False, True)
    z = run(new, X, Y)[2]
    assert z.dtype == np.int32 and not z.any()


# ------------------------------------------------------------------------------- batch_jaxpr

@pytest.mark.parametrize("dims", [(0, None), (None, 0), (1, 0), (0, 1)])
def test_batch_jaxpr_vs_python_loop(dims):
    n = 3
    xs = RNG.normal(size=(n, 5)) if dims[0] == 0 else RNG.normal(size=(5, n)) if dims[0] == 1 else X
    ys = RNG.normal(size=(n, 5)) if dims[1] == 0 else RNG.normal(size=(5, n)) if dims[1] == 1 else Y
    new, out_dims = batch_jaxpr(F, dims, n)
    got = run(new, xs, ys)[0]
    take = lambda a, d, i: a if d is None else np.take(a, i, axis=d)
    want = np.stack([_f_np(take(xs, dims[0], i), take(ys, dims[1], i)) for i in range(n)])
    np.testing.assert_allclose(np.moveaxis(got, out_dims[0], 0), want, rtol=1e-13)
    assert (out_dims[1] is None) == (dims[0] is None)                 # the int output follows x only
    if dims[0] is not None:
        want_int = np.stack([take(xs, dims[0], i).astype(np.int32) for i in range(n)])
        np.testing.assert_array_equal(np.moveaxis(run(new, xs, ys)[1], out_dims[1], 0), want_int)


def test_batch_jaxpr_force():
    n = 4
    xs = RNG.normal(size=(n, 5))
    new, od = batch_jaxpr(F, (None, 0), n, (True, True))      # x unbatched: its int output is broadcast
    assert od == (0, 0)
    out = run(new, X, xs)
    np.testing.assert_array_equal(out[1], np.broadcast_to(X.astype(np.int32), (n, 5)))
    new, od = batch_jaxpr(F, (None, 0), n, (None, False))
    assert od == (0, None)
    with pytest.raises(AssertionError, match="forced unbatched"):
        batch_jaxpr(F, (0, None), n, (None, False))


# -------------------------------------------------------------------------- partial_eval_jaxpr

@pytest.mark.parametrize("unknowns", [(True, False), (False, True), (True, True), (False, False)])
def test_partial_eval_jaxpr_recombined_equals_eval(unknowns):
    known, unk, out_uk, n_res = partial_eval_jaxpr(F, unknowns)
    args = [X, Y]
    k_outs = run(known, *[a for a, u in zip(args, unknowns) if not u])
    n_known = len(k_outs) - n_res
    assert n_known == sum(not u for u in out_uk)
    u_outs = run(unk, *k_outs[n_known:], *[a for a, u in zip(args, unknowns) if u])
    ki, ui = iter(k_outs[:n_known]), iter(u_outs)
    got = [next(ui) if u else next(ki) for u in out_uk]
    want = run(F, X, Y)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    assert out_uk[1] == unknowns[0]      # the int output depends on x only


def test_partial_eval_jaxpr_instantiate():
    known, unk, out_uk, n_res = partial_eval_jaxpr(F, (False, False), True)
    assert out_uk == (True, True) and len(known.out_avals) == n_res
    outs = run(unk, *run(known, X, Y))
    np.testing.assert_allclose(outs[0], _f_np(X, Y), rtol=1e-13)


# ----------------------------------------------------------------------------- transpose_jaxpr

A = RNG.normal(size=(4, 3))


def _lin(a, t):         # linear in t (a is a residual): 2 a @ t + (a @ t)[::-1] * a[:, 0]
    at = xp.matmul(box(a), box(t))
    return [(2.0 * at + xp.flip(at) * box(a)[:, 0])._v]


def _lin_np(a, t):
    at = a @ t
    return 2 * at + at[::-1] * a[:, 0]


def test_transpose_jaxpr_dot_product_identity_and_matrix():
    L = stage(_lin, [get_aval(raw(A)), get_aval(raw(np.zeros(3)))])
    LT = transpose_jaxpr(L, (False, True))
    for _ in range(3):
        t, ct = RNG.normal(size=3), RNG.normal(size=4)
        (lt,) = run(L, A, t)
        (ltct,) = run(LT, A, ct)
        np.testing.assert_allclose(lt, _lin_np(A, t), rtol=1e-12)
        np.testing.assert_allclose(np.dot(ct, lt), np.dot(ltct, t), rtol=1e-12)
    M = np.stack([_lin_np(A, e) for e in np.eye(3)], axis=1)        # the matrix of t -> L t
    (ltct,) = run(LT, A, np.eye(4)[1])
    np.testing.assert_allclose(ltct, M.T[:, 1], rtol=1e-12)


def test_transpose_jaxpr_zero_cotangent_for_unused_input():
    g = stage(lambda t, u: [(box(t) * 3.0)._v], [get_aval(raw(np.zeros(2)))] * 2)
    ct_t, ct_u = run(transpose_jaxpr(g, (True, True)), np.array([1.0, 2.0]))
    np.testing.assert_array_equal(ct_t, [3.0, 6.0])
    np.testing.assert_array_equal(ct_u, [0.0, 0.0])


# ---------------------------------------------------------------------------- carry_fixed_point

def test_carry_fixed_point_propagates_along_a_chain():
    shift = lambda c: (False, c[0], c[1], False)          # carry i takes carry i-1's property
    assert carry_fixed_point([True, False, False, False], shift) == (True, True, True, False)
    assert carry_fixed_point([False] * 4, shift) == (False,) * 4
    calls = []
    swap = lambda c: (calls.append(c), (c[1], c[0]))[1]
    assert carry_fixed_point([False, True], swap) == (True, True)
    assert len(calls) == 2                                  # one step to grow, one to confirm


# --------------------------------------------------------------------------------- staged_call

def _poly(x, *, k):
    x = box(x)
    return [(x * x + x * float(k))._v]


def test_staged_call_eager_jit_vmap_grad_match_numpy():
    x = RNG.normal(size=6)
    want = x * x + 3 * x
    call = _wrap_call
    np.testing.assert_allclose(np.asarray(call(xp.asarray(x))), want, rtol=1e-14)
    np.testing.assert_allclose(np.asarray(jit(call)(xp.asarray(x))), want, rtol=1e-14)
    np.testing.assert_allclose(np.asarray(vmap(call)(xp.asarray(x.reshape(3, 2)))), want.reshape(3, 2), rtol=1e-14)
    g = grad(lambda v: xp.sum(call(v)))(xp.asarray(x))
    np.testing.assert_allclose(np.asarray(g), 2 * x + 3, rtol=1e-13)
    # a Python scalar argument takes the bind path; same value
    np.testing.assert_allclose(float(_wrap_scalar(2.0)), 10.0)


def _wrap_call(v):
    return box(staged_call(_poly, [v._v], "poly", k=3)[0])


def _wrap_scalar(s):
    return box(staged_call(_poly, [s], "poly", k=3)[0])


def test_staged_call_stages_once_per_signature():
    from transforms import jaxpr_transforms as T
    x = xp.asarray(RNG.normal(size=7))
    _wrap_call(x)
    before = T._staged_jaxpr.cache_info()
    for _ in range(3):
        _wrap_call(x)
    after = T._staged_jaxpr.cache_info()
    # staged once: no new miss (a repeat is served by the last entry of its body, T._LAST, or by the cache)
    assert after.misses == before.misses
    assert T._LAST[_poly][3] is T._staged_jaxpr(_poly, (x._v.aval,), (("k", 3),))
    _wrap_call(xp.asarray(RNG.normal(size=8)))                   # another signature: staged anew
    assert T._staged_jaxpr.cache_info().misses == before.misses + 1
