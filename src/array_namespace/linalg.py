"""The linalg extension of the standard: its functions only (the implementation is in _linalg)."""
from ._linalg import (  # noqa: F401
    cholesky, cross, det, diagonal, eig, eigh, eigvals, eigvalsh, inv, matmul, matrix_norm, matrix_power,
    matrix_rank, matrix_transpose, outer, pinv, qr, slogdet, solve, svd, svdvals, tensordot, trace, vecdot,
    vector_norm,
)

__all__ = [
    "cholesky", "cross", "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh", "inv", "matmul",
    "matrix_norm", "matrix_power", "matrix_rank", "matrix_transpose", "outer", "pinv", "qr", "slogdet",
    "solve", "svd", "svdvals", "tensordot", "trace", "vecdot", "vector_norm",
]
