"""control_flow.py, the public face: fori_loop (scan with static bounds, while_loop with traced ones)
and jaxprs mixing the three primitives.
"""
import numpy as np

import array_namespace as xp
from transforms import cond, fori_loop, grad, jit, make_jaxpr, scan, typecheck, vmap, while_loop
from cf_util import a, close, fd  # noqa: F401  (shared helpers)


# ------------------------------------------------------------------------------- fori_loop

def test_fori_loop_static_and_dynamic():
    body = lambda i, x: x * 2.0 + xp.astype(i, xp.float64)
    want = 1.0
    for i in range(2, 7):
        want = want * 2 + i
    close(fori_loop(2, 7, body, a(1.0)), want)
    close(jit(lambda x: fori_loop(2, 7, body, x))(a(1.0)), want)
    close(jit(lambda lo, hi, x: fori_loop(lo, hi, body, x))(a(2), a(7), a(1.0)), want)
    close(fori_loop(5, 3, body, a(1.0)), 1.0)   # empty range
    assert "scan" in str(make_jaxpr(lambda x: fori_loop(0, 3, body, x))(a(1.0)))
    assert "while" in str(make_jaxpr(lambda n, x: fori_loop(0, n, body, x))(a(3), a(1.0)))


def test_fori_loop_vmap_over_trip_count():
    f = lambda n, x: fori_loop(a(0), n, lambda i, c: c * x, a(1.0))
    ns, xs = np.array([0, 3, 5]), np.array([2.0, 3.0, 1.5])
    close(vmap(f)(a(ns), a(xs)), xs ** ns)


def test_fori_loop_static_grad_and_second_order():
    f = lambda x: fori_loop(0, 4, lambda i, c: xp.sin(c) * x + c, x)
    for v in (0.3, 1.1):
        close(grad(f)(a(v)), fd(f, v), 1e-6)
    close(grad(grad(f))(a(0.3)), fd(grad(f), 0.3, 1e-5), 1e-5)




def test_jaxprs_with_control_flow_typecheck():
    def g(x):
        y = cond(x[0] > 0, lambda v: v * 2.0, lambda v: v, x)
        c, ys = scan(lambda c, v: (c + v, c * v), 0.0, y)
        return c + xp.sum(ys)

    def f(x):
        return while_loop(lambda c: c < 100.0, lambda c: c * 2.0 + 1.0, g(x))
    assert typecheck(make_jaxpr(f)(a([1.0, 2.0])).jaxpr)
    assert typecheck(make_jaxpr(grad(g))(a([1.0, 2.0])).jaxpr)
    assert typecheck(make_jaxpr(vmap(f))(a([[1.0, 2.0], [-1.0, 0.5]])).jaxpr)
