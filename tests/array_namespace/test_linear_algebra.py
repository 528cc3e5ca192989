"""array_namespace/_linear_algebra.py: matmul, matrix_transpose, tensordot, vecdot against NumPy eagerly,
under jit and under vmap, with promotion, complex conjugation in vecdot, and the shape errors."""
import numpy as np
import pytest

import array_namespace as xp
from ns_check import agree

R = np.random.default_rng(0)
A, B, V = R.standard_normal((3, 4)), R.standard_normal((4, 2)), R.standard_normal(4)
Z = A + 1j * R.standard_normal((3, 4))


@pytest.mark.parametrize("fn, np_fn, args", [
    (xp.matmul, np.matmul, (A, B)), (xp.matmul, np.matmul, (A, V)), (xp.matmul, np.matmul, (V, B)),
    (xp.matmul, np.matmul, (A.astype(np.float32), B.astype(np.float32))),
    (xp.matmul, np.matmul, (np.arange(6, dtype=np.int32).reshape(2, 3), np.ones((3, 2), np.int32))),
    (xp.matrix_transpose, lambda a: np.swapaxes(a, -1, -2), (Z,)),
    (lambda a, b: xp.tensordot(a, b, axes=1), lambda a, b: np.tensordot(a, b, axes=1), (A, B)),
    (lambda a, b: xp.tensordot(a, b, axes=([0, 1], [0, 1])), lambda a, b: np.tensordot(a, b, ([0, 1], [0, 1])), (A, A)),
    (xp.vecdot, lambda a, b: np.sum(np.conj(a) * b, -1), (Z, Z[::-1].copy())),
    (lambda a, b: xp.vecdot(a, b, axis=0), lambda a, b: np.sum(a * b, 0), (A, A * 2)),
])
def test_against_numpy(fn, np_fn, args):
    agree(fn, np_fn, *args, rtol=1e-6 if args[0].dtype == np.float32 else 1e-13, atol=1e-12)


def test_mixed_dtypes_promote():
    out = xp.matmul(xp.asarray(A.astype(np.float32)), xp.asarray(B))
    assert out.dtype == xp.float64
    np.testing.assert_allclose(np.asarray(out), A.astype(np.float32).astype(np.float64) @ B, rtol=1e-13)


@pytest.mark.parametrize("call, exc", [
    (lambda: xp.matmul(xp.asarray(A), xp.asarray(A)), ValueError),
    (lambda: xp.matmul(xp.asarray(1.0), xp.asarray(A)), ValueError),
    (lambda: xp.matrix_transpose(xp.asarray(V)), ValueError),
    (lambda: xp.vecdot(xp.asarray(A), xp.asarray(B)), ValueError),
    (lambda: xp.matmul(xp.asarray(np.ones((2, 2), bool)), xp.asarray(A)), (TypeError, ValueError)),
])
def test_errors(call, exc):
    with pytest.raises(exc):
        call()
