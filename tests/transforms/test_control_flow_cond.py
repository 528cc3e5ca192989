"""cond_p (control_flow_cond.py): cond/switch under eager, jit, vmap, jvp and grad, against NumPy and
finite differences.
"""
import numpy as np
import pytest

import array_namespace as xp
from transforms import cond, grad, jit, jvp, make_jaxpr, switch, vmap
from cf_util import a, close, fd  # noqa: F401  (shared helpers)


# ------------------------------------------------------------------------------------ cond

def branchy(x):
    return cond(x > 0.5, lambda y: xp.sin(y) * y, lambda y: xp.cos(y), x)


def branchy_np(x):
    return np.sin(x) * x if x > 0.5 else np.cos(x)


def test_cond_values_eager_and_jit():
    for v in (0.2, 0.9):
        close(branchy(a(v)), branchy_np(v))
        close(jit(branchy)(a(v)), branchy_np(v))


def test_cond_pytrees_and_closures():
    w = a([1.0, 2.0])

    def f(p, tree):
        return cond(p, lambda t: {"s": t[0] * w, "n": t[1] + 1},
                    lambda t: {"s": t[0] - w, "n": t[1] - 1}, tree)
    out = f(a(True), (a([3.0, 4.0]), a(5)))
    close(out["s"], [3.0, 8.0])
    assert int(out["n"]) == 6
    out = jit(f)(a(False), (a([3.0, 4.0]), a(5)))
    close(out["s"], [2.0, 2.0])
    assert int(out["n"]) == 4


def test_cond_numeric_predicate_and_weak_branch_output():
    x = a(np.float32(2.0))
    out = cond(a(0), lambda y: y * 2.0, lambda y: 1.0, x)   # 1.0 (weak) takes the other branch's float32
    assert out.dtype == xp.float32 and float(out) == 1.0


def test_switch_values_clamping_jit_vmap():
    branches = [lambda x: x + 1.0, lambda x: x * 10.0, lambda x: -x]
    for i, want in [(-3, 3.0), (0, 3.0), (1, 20.0), (2, -2.0), (7, -2.0)]:
        close(switch(a(i), branches, a(2.0)), want)
        close(jit(lambda i, x: switch(i, branches, x))(a(i), a(2.0)), want)
    idx = np.array([0, 1, 2, 5, -1])
    xs = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    got = vmap(lambda i, x: switch(i, branches, x))(a(idx), a(xs))
    want = [[lambda x: x + 1, lambda x: x * 10, lambda x: -x][min(max(i, 0), 2)](x) for i, x in zip(idx, xs)]
    close(got, want)


def test_cond_vmap_batched_predicate_matches_loop():
    xs = np.array([0.1, 0.7, 0.3, 1.5])
    close(vmap(branchy)(a(xs)), [branchy_np(v) for v in xs])
    close(jit(vmap(branchy))(a(xs)), [branchy_np(v) for v in xs])


def test_cond_vmap_unbatched_predicate():
    def g(p, x, y):
        return cond(p, lambda u, v: (u * v, v), lambda u, v: (u - v, v * 2.0), x, y)
    xs = np.array([1.0, 2.0, 3.0])
    for p in (True, False):
        s, t = vmap(g, in_axes=(None, 0, None))(a(p), a(xs), a(4.0))
        close(s, xs * 4 if p else xs - 4)
        close(t, np.full(3, 4.0 if p else 8.0))   # unbatched inside one branch, broadcast to agree


def test_cond_grad_and_jvp_vs_finite_differences():
    for v in (0.2, 0.9):
        close(grad(branchy)(a(v)), fd(branchy, v), 1e-6)
        _, t = jvp(branchy, (a(v),), (a(1.0),))
        close(t, fd(branchy, v), 1e-6)
        close(jit(grad(branchy))(a(v)), fd(branchy, v), 1e-6)


def test_cond_grad_wrt_closed_over_value_and_switch():
    def f(w, x):
        return switch(a(1), [lambda y: y * w, lambda y: xp.sin(w * y), lambda y: w], x)
    gw, gx = grad(f, argnums=(0, 1))(a(0.3), a(2.0))
    close(gw, 2.0 * np.cos(0.6))
    close(gx, 0.3 * np.cos(0.6))


def test_cond_per_example_grads_with_batched_predicate():
    xs = np.array([0.1, 0.7, 0.3, 1.5])
    close(vmap(grad(branchy))(a(xs)), [fd(branchy, v) for v in xs], 1e-6)


def test_cond_jaxpr_text():
    text = str(make_jaxpr(lambda p, x: cond(p, xp.sin, xp.cos, x))(a(True), a(np.float32(0.5))))
    assert text == """{ lambda ; a:bool[] b:f32[]. let
    c:i32[] = convert_element_type[new_dtype=int32 weak_type=False] a
    d:f32[] = cond[
      branches=(
        { lambda ; e:f32[]. let
            f:f32[] = cos e
          in (f,) }
        { lambda ; g:f32[]. let
            h:f32[] = sin g
          in (h,) }
      )
    ] c b
  in (d,) }"""



def test_cond_errors():
    with pytest.raises(TypeError, match=r"but output\[1\] is f64\[2\] in false_fun and f64\[3\] in true_fun"):
        cond(a(True), lambda x: (x, x), lambda x: (x, x[:2]), a([1.0, 2.0, 3.0]))
    with pytest.raises(TypeError, match=r"f32\[\] in branches\[0\] and i32\[\] in branches\[1\]"):
        switch(a(0), [lambda x: x, lambda x: xp.astype(x, xp.int32)], a(np.float32(1)))
    with pytest.raises(TypeError, match="same pytree structure"):
        cond(a(True), lambda x: (x, x), lambda x: [x, x], a(1.0))
    with pytest.raises(TypeError, match="predicate must be a scalar"):
        cond(a([True, False]), lambda x: x, lambda x: x, a(1.0))
    with pytest.raises(TypeError, match="integer scalar"):
        switch(a(1.0), [lambda x: x, lambda x: x], a(1.0))
