"""One meaning for mutation: a transformed function's writes into its arguments reach the caller's
handles exactly as they do eagerly -- for jit, grad, jvp, vjp, linearize, jacfwd, jacrev, hessian and
vmap, nested too; aliases (one handle passed twice) behave as they do eagerly."""
import numpy as np
import pytest

import array_namespace as xp
from transforms import grad, hessian, jacfwd, jacrev, jit, jvp, linearize, vjp, vmap

X0 = np.array([1.0, 2.0, 3.0])


def mutate(x):
    x[0] = x[1] * 3.0
    x *= 2.0
    return xp.sum(x ** 2)


def mutate_tree(d):
    d["a"][1:] = d["b"] + 1.0
    d["b"] += d["a"][0]
    return xp.sum(d["a"]) * xp.sum(d["b"])


def _eager_final(f, x0):
    x = xp.asarray(x0)
    f(x)
    return np.asarray(x)


def _grad_oracle(f, x0, eps=1e-6):
    """d f(x)/dx at the caller's original x, by finite differences of eager runs on fresh copies."""
    g = np.zeros_like(x0)
    for i in range(x0.size):
        p, m = x0.copy(), x0.copy()
        p[i] += eps
        m[i] -= eps
        g[i] = (float(f(xp.asarray(p))) - float(f(xp.asarray(m)))) / (2 * eps)
    return g


TRANSFORMS = {
    "jit": lambda f: jit(f),
    "grad": lambda f: grad(f),
    "jit(grad)": lambda f: jit(grad(f)),
    "grad(jit)": lambda f: grad(jit(f)),
    "jvp": lambda f: (lambda x: jvp(f, (x,), (xp.ones_like(x),))),
    "vjp": lambda f: (lambda x: vjp(f, x)[0]),
    "linearize": lambda f: (lambda x: linearize(f, x)[0]),
    "jacfwd": lambda f: jacfwd(f),
    "jacrev": lambda f: jacrev(f),
    "hessian": lambda f: hessian(f),
}


@pytest.mark.parametrize("name", list(TRANSFORMS))
def test_writes_into_an_argument_reach_the_caller_as_eagerly(name):
    x = xp.asarray(X0)
    TRANSFORMS[name](mutate)(x)
    np.testing.assert_allclose(np.asarray(x), _eager_final(mutate, X0))


@pytest.mark.parametrize("name", ["grad", "jit(grad)", "grad(jit)", "jacfwd", "jacrev"])
def test_derivative_of_a_mutating_function_is_the_eager_functions(name):
    g = TRANSFORMS[name](mutate)(xp.asarray(X0))
    np.testing.assert_allclose(np.asarray(g), _grad_oracle(mutate, X0), rtol=1e-6, atol=1e-6)


def test_jit_value_and_repeat_calls_mutate_each_time():
    jf = jit(mutate)
    x, e = xp.asarray(X0), xp.asarray(X0)
    for _ in range(3):
        np.testing.assert_allclose(float(jf(x)), float(mutate(e)))
        np.testing.assert_allclose(np.asarray(x), np.asarray(e))


def test_jit_pytree_and_keyword_arguments():
    def fresh():
        return {"a": xp.asarray([1.0, 2.0, 3.0]), "b": xp.asarray([10.0, 20.0])}
    d, e = fresh(), fresh()
    out = jit(mutate_tree)(d)
    want = mutate_tree(e)
    np.testing.assert_allclose(float(out), float(want))
    for k in d:
        np.testing.assert_allclose(np.asarray(d[k]), np.asarray(e[k]))

    def kw(x, *, y):
        y[0] = 7.0
        return x + y
    a, b = xp.asarray([1.0, 1.0]), xp.asarray([2.0, 2.0])
    np.testing.assert_allclose(np.asarray(jit(kw)(a, y=b)), [8.0, 3.0])
    np.testing.assert_allclose(np.asarray(b), [7.0, 2.0])


def test_aliased_handles_behave_as_eagerly():
    def f(a, b):
        a += 1.0
        return b * 1.0     # eagerly b is the same handle as a, so it sees the write
    for T in (lambda g: g, jit, lambda g: (lambda a, b: vjp(g, a, b)[0])):
        x = xp.asarray([1.0, 2.0])
        out = T(f)(x, x)
        np.testing.assert_allclose(np.asarray(out), [2.0, 3.0])
        np.testing.assert_allclose(np.asarray(x), [2.0, 3.0])
    x, y = xp.asarray([1.0, 2.0]), xp.asarray([1.0, 2.0])   # equal values, distinct handles: no alias
    np.testing.assert_allclose(np.asarray(jit(f)(x, y)), [1.0, 2.0])
    np.testing.assert_allclose(np.asarray(y), [1.0, 2.0])


def test_one_handle_passed_twice_is_two_inputs_where_nothing_writes_into_it():
    # what JAX gives: the two positions are independent inputs (their tangents, cotangents and batch axes
    # apart); once, a handle passed twice became one input, and a jitted f(x, x) then answered f(a, x)
    rng = np.random.default_rng(7)
    xn, an, tn = rng.standard_normal(4), rng.standard_normal(4), rng.standard_normal(4)
    x, a = xp.asarray(xn), xp.asarray(an)
    f = jit(lambda u, v: u * v + 1.0)
    for _ in range(3):   # the C++ dispatcher's fast path as well as the first (Python) call
        np.testing.assert_allclose(np.asarray(f(x, x)), xn * xn + 1.0, rtol=1e-15)
        np.testing.assert_allclose(np.asarray(f(a, x)), an * xn + 1.0, rtol=1e-15)
        np.testing.assert_allclose(np.asarray(f(x, a)), xn * an + 1.0, rtol=1e-15)
    dot = lambda u, v: xp.sum(xp.sin(u) * v)
    gu, gv = grad(dot, argnums=(0, 1))(x, x)
    np.testing.assert_allclose(np.asarray(gu), np.cos(xn) * xn, rtol=1e-14)
    np.testing.assert_allclose(np.asarray(gv), np.sin(xn), rtol=1e-14)
    _, ct = vjp(lambda u, v: xp.sin(u) * v, x, x)
    cu, cv = ct(xp.asarray(tn))
    np.testing.assert_allclose(np.asarray(cu), np.cos(xn) * xn * tn, rtol=1e-14)
    np.testing.assert_allclose(np.asarray(cv), np.sin(xn) * tn, rtol=1e-14)
    _, t = jvp(lambda u, v: xp.sin(u) * v, (x, x), (xp.asarray(tn), xp.zeros(4)))
    eps = 1e-6   # finite differences in u alone
    fd = (np.sin(xn + eps * tn) * xn - np.sin(xn - eps * tn) * xn) / (2 * eps)
    np.testing.assert_allclose(np.asarray(t), fd, rtol=1e-6, atol=1e-9)
    outer = vmap(lambda u, v: u * v, in_axes=(0, None))(x, x)
    np.testing.assert_allclose(np.asarray(outer), np.array([xi * xn for xi in xn]), rtol=1e-15)


def test_the_function_runs_twice_only_when_it_writes_into_a_handle_passed_twice():
    calls = []

    def pure(u, v):
        calls.append(1)
        return u * v

    def writes(u, v):
        calls.append(1)
        u += 1.0
        return v * 1.0
    x = xp.asarray([1.0, 2.0])
    for T in (jit, lambda g: (lambda *a: jvp(g, a, (xp.ones(2), xp.ones(2)))[0]), vmap):
        calls.clear()
        T(pure)(x, x)
        assert len(calls) == 1
        calls.clear()
        y = xp.asarray([1.0, 2.0])
        np.testing.assert_allclose(np.asarray(T(writes)(y, y)), [2.0, 3.0])   # the write shows through v
        np.testing.assert_allclose(np.asarray(y), [2.0, 3.0])
        assert len(calls) == 2
        calls.clear()
        y, z = xp.asarray([1.0, 2.0]), xp.asarray([1.0, 2.0])
        np.testing.assert_allclose(np.asarray(T(writes)(y, z)), [1.0, 2.0])  # distinct handles: once
        assert len(calls) == 1


@pytest.mark.parametrize("in_axes", [0, 1])
def test_vmap_writes_back_batched_values_like_a_python_loop(in_axes):
    base = np.arange(6.0).reshape(2, 3)
    xb = xp.asarray(base if in_axes == 0 else base.T)
    out = vmap(mutate, in_axes=in_axes)(xb)
    rows = [xp.asarray(r) for r in base]
    want = [float(mutate(r)) for r in rows]
    np.testing.assert_allclose(np.asarray(out), want)
    final = np.stack([np.asarray(r) for r in rows])
    np.testing.assert_allclose(np.asarray(xb), final if in_axes == 0 else final.T)


def test_nested_vmap_of_jit_and_jit_of_vmap_write_back():
    base = np.arange(6.0).reshape(2, 3)
    for T in (lambda f: vmap(jit(f)), lambda f: jit(vmap(f)), lambda f: jit(vmap(grad(f)))):
        xb = xp.asarray(base)
        T(mutate)(xb)
        np.testing.assert_allclose(np.asarray(xb), np.stack([_eager_final(mutate, r) for r in base]))


def test_vmap_write_of_batched_value_into_unmapped_argument_raises():
    def f(t, acc):
        acc[0] = t
        return t
    with pytest.raises(ValueError, match="not mapped"):
        vmap(f, in_axes=(0, None))(xp.asarray([1.0, 2.0]), xp.zeros(2))
    acc = xp.zeros(2)
    vmap(lambda t, a: (a.__setitem__(0, 5.0), t)[1], in_axes=(0, None))(xp.asarray([1.0, 2.0]), acc)
    np.testing.assert_allclose(np.asarray(acc), [5.0, 0.0])   # an unbatched write is fine


def test_non_mutating_jit_keeps_the_fast_path_and_inputs():
    f = jit(lambda x: x * 2.0)
    x = xp.asarray(X0)
    for _ in range(3):
        f(x)
    np.testing.assert_allclose(np.asarray(x), X0)


@pytest.mark.parametrize("name", ["grad", "jit(grad)", "grad(jit)", "value_and_grad", "grad has_aux"])
def test_writes_into_non_differentiated_arguments_reach_the_caller(name):
    from transforms import value_and_grad

    def f(w, acc, n):
        acc[0] = acc[0] + xp.sum(w)
        n += 1
        return xp.sum(w ** 2)
    T = {"grad": lambda g: grad(g), "jit(grad)": lambda g: jit(grad(g)), "grad(jit)": lambda g: grad(jit(g)),
         "value_and_grad": lambda g: value_and_grad(g),
         "grad has_aux": lambda g: grad(lambda *a: (g(*a), a[2] * 1), has_aux=True)}[name]
    w, acc, n = xp.asarray([1.0, 2.0]), xp.zeros(2), xp.asarray(3)
    ew, eacc, en = xp.asarray([1.0, 2.0]), xp.zeros(2), xp.asarray(3)
    f(ew, eacc, en)
    T(f)(w, acc, n)
    np.testing.assert_array_equal(np.asarray(acc), np.asarray(eacc))
    np.testing.assert_array_equal(np.asarray(n), np.asarray(en))
    np.testing.assert_array_equal(np.asarray(w), np.asarray(ew))
