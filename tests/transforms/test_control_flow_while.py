"""while_p (control_flow_while.py): while_loop under eager, jit, vmap and jvp; reverse mode is a
declared gap.
"""
import numpy as np
import pytest

import array_namespace as xp
from transforms import grad, jacfwd, jit, jvp, vmap, while_loop
from cf_util import a, close, fd  # noqa: F401  (shared helpers)


# ------------------------------------------------------------------------------ while_loop

def collatz_steps(n):
    def body(c):
        k, steps = c
        k = xp.where(k % 2 == 0, k // 2, 3 * k + 1)
        return k, steps + 1
    return while_loop(lambda c: c[0] != 1, body, (n, a(0)))[1]


def collatz_np(n):
    s = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        s += 1
    return s


def test_while_values_eager_jit_and_vmap_batched_predicate():
    ns = [1, 6, 7, 27]
    for n in ns[:2]:
        assert int(collatz_steps(a(n))) == collatz_np(n)
    assert int(jit(collatz_steps)(a(27))) == collatz_np(27)
    got = vmap(collatz_steps)(a(ns))
    assert np.asarray(got).tolist() == [collatz_np(n) for n in ns]
    assert np.asarray(jit(vmap(collatz_steps))(a(ns))).tolist() == [collatz_np(n) for n in ns]


def test_while_vmap_unbatched_predicate_batched_carry():
    def f(x):
        return while_loop(lambda c: c[0] < 4, lambda c: (c[0] + 1, c[1] * 2.0), (a(0), x))[1]
    close(vmap(f)(a([1.0, 3.0])), [16.0, 48.0])


def test_while_closure_consts_and_jvp():
    scale = a(1.5)

    def f(x):
        return while_loop(lambda c: c[1] < 10.0, lambda c: (c[0] * scale + x, c[1] + 1.0), (x, a(0.0)))[0]

    def f_np(x):
        c = x
        for _ in range(10):
            c = c * 1.5 + x
        return c
    close(f(a(0.3)), f_np(0.3))
    close(jit(f)(a(0.3)), f_np(0.3))
    _, t = jvp(f, (a(0.3),), (a(1.0),))
    close(t, (f_np(0.3 + 1e-6) - f_np(0.3 - 1e-6)) / 2e-6, 1e-6)
    close(jacfwd(f)(a(0.3)), float(t), 1e-12)


def test_while_reverse_mode_error():
    f = lambda x: while_loop(lambda c: c < 10.0, lambda c: c * 2.0, x)
    with pytest.raises(NotImplementedError, match="reverse-mode differentiation of while_loop is not supported"):
        grad(f)(a(1.0))


def test_while_errors():
    with pytest.raises(TypeError, match=r"leaf init_val\[1\] is f64\[\] in init_val but f64\[2\]"):
        while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, xp.stack([c[1], c[1]])), (a(0), a(1.0)))
    with pytest.raises(TypeError, match=r"leaf init_val\['x'\] is f64\[\] in init_val but f32\[\]"):
        while_loop(lambda c: c["x"] < 3, lambda c: {"x": xp.astype(c["x"], xp.float32)}, {"x": a(1.0)})
    with pytest.raises(TypeError, match="cond_fun must return a boolean scalar"):
        while_loop(lambda c: c, lambda c: c + 1.0, a(1.0))
    with pytest.raises(TypeError, match="cond_fun must return a boolean scalar"):
        while_loop(lambda c: c < 1.0, lambda c: c + 1.0, a([1.0, 2.0]))
    with pytest.raises(TypeError, match="structure of init_val"):
        while_loop(lambda c: c[0] < 1.0, lambda c: [c[0]], (a(1.0),))
