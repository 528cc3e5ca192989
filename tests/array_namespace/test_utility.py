"""array_namespace/_utility.py: cumulative_sum, cumulative_prod (axis, dtype, include_initial) and diff
(n, axis, prepend, append) against NumPy eagerly, under jit and under vmap; and the argument errors."""
import numpy as np
import pytest

import array_namespace as xp
from ns_check import agree

R = np.random.default_rng(0)
X = R.standard_normal((3, 4))
I = np.array([[1, -2, 3, 2], [4, 5, -6, 1]], np.int32)


def _incl(f, a, axis, identity):
    out = f(a, axis=axis)
    pad = [(0, 0)] * a.ndim
    pad[axis] = (1, 0)
    return np.pad(out, pad, constant_values=identity)


@pytest.mark.parametrize("fn, np_fn, args", [
    (lambda a: xp.cumulative_sum(a, axis=1), lambda a: np.cumsum(a, 1), (X,)),
    (lambda a: xp.cumulative_sum(a, axis=0, include_initial=True), lambda a: _incl(np.cumsum, a, 0, 0), (I,)),
    (lambda a: xp.cumulative_sum(a, axis=1, dtype=xp.float64), lambda a: np.cumsum(a, 1, dtype=np.float64), (I,)),
    (lambda a: xp.cumulative_prod(a, axis=1), lambda a: np.cumprod(a, 1), (I,)),
    (lambda a: xp.cumulative_prod(a, axis=1, include_initial=True), lambda a: _incl(np.cumprod, a, 1, 1), (X,)),
    (xp.cumulative_sum, np.cumsum, (X[0],)),
    (xp.diff, np.diff, (X,)),
    (lambda a: xp.diff(a, axis=0, n=2), lambda a: np.diff(a, n=2, axis=0), (X,)),
    (lambda a: xp.diff(a, n=0), lambda a: np.diff(a, n=0), (I,)),
    (lambda a: xp.diff(a, prepend=0, append=xp.ones((2, 1), dtype=xp.int32)),
     lambda a: np.diff(a, prepend=0, append=np.ones((2, 1), np.int32)), (I,)),
])
def test_against_numpy(fn, np_fn, args):
    agree(fn, np_fn, *args, rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("call, exc, match", [
    (lambda: xp.diff(xp.asarray(1.0)), ValueError, "diff: x must have at least one dimension"),
    (lambda: xp.diff(xp.asarray(X), n=-1), ValueError, "diff: n must be a non-negative int"),
    (lambda: xp.diff(xp.asarray(X), axis=3), IndexError, "diff: axis 3 is out of bounds"),
    (lambda: xp.cumulative_sum(xp.asarray(X)), ValueError, "cumulative_sum"),
    (lambda: xp.cumulative_sum(xp.asarray(X), axis=2), IndexError, "cumulative_sum: axis 2 is out of bounds"),
])
def test_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
