"""xla/lower_control_flow.py: cond (two and more branches, traced predicate), while (fori_loop and a
data-dependent trip count) and scan (carry and stacked outputs, reverse), under jit, against Python
loops over NumPy."""
import numpy as np
import pytest

import array_namespace as xp
from lower_harness import Case, check, lowered_by, prims_of
from transforms import cond, fori_loop, make_jaxpr, scan, switch, while_loop

X = np.array([0.5, -1.5, 2.0])


def _np_scan(x, reverse=False):
    c, ys = 0.0, []
    for v in (x[::-1] if reverse else x):
        c = c * 0.5 + v
        ys.append(np.sin(c))
    ys = np.array(ys)
    return np.float64(c), (ys[::-1] if reverse else ys)


def _collatz_steps(n):
    k = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        k += 1
    return np.int32(k)


def _np_newton(a):
    x = a
    for _ in range(6):
        x = 0.5 * (x + a / x)
    return x


CASES = [
    Case("cond-true", lambda p, x: cond(p > 0, lambda v: xp.sin(v), lambda v: -v, x),
         lambda p, x: np.sin(x), [np.float64(1.0), X]),
    Case("cond-false", lambda p, x: cond(p > 0, lambda v: xp.sin(v), lambda v: -v, x),
         lambda p, x: -x, [np.float64(-1.0), X]),
    Case("switch-3", lambda i, x: switch(i, [lambda v: v, lambda v: v * 2.0, lambda v: v ** 2], x),
         lambda i, x: x ** 2, [np.int32(2), X]),
    Case("fori_loop", lambda a: fori_loop(0, 6, lambda i, x: 0.5 * (x + a / x), a), _np_newton,
         [np.array([2.0, 9.0, 0.25])], 1e-14),
    Case("while-data-dependent", lambda n: while_loop(lambda s: s[0] != 1,
                                                      lambda s: (xp.where(s[0] % 2 == 0, s[0] // 2, 3 * s[0] + 1),
                                                                 s[1] + 1), (n, xp.asarray(0, dtype=xp.int32)))[1],
         lambda n: _collatz_steps(int(n)), [np.int32(27)]),
    Case("scan", lambda x: scan(lambda c, v: (c * 0.5 + v, xp.sin(c * 0.5 + v)), xp.asarray(0.0), x),
         _np_scan, [X], 1e-14),
    Case("scan-reverse", lambda x: scan(lambda c, v: (c * 0.5 + v, xp.sin(c * 0.5 + v)), xp.asarray(0.0), x,
                                        reverse=True),
         lambda x: _np_scan(x, True), [X], 1e-14),
]


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_jit_matches_a_python_loop(case):
    check(case)


def test_every_lowered_primitive_is_reached():
    reached = set().union(*(prims_of(make_jaxpr(c.fn)(*[xp.asarray(a) for a in c.args])) for c in CASES))
    assert lowered_by("xla.lower_control_flow") - reached == set()
