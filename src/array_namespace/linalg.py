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

# The docstrings of the functions above that _linalg.py defines live in a table (_linalg.py is near the line
# budget); the four shared with the main namespace are documented where they are defined.
from ._linalg_docs import DOCS as _DOCS  # noqa: E402
for _name, _doc in _DOCS.items():
    globals()[_name].__doc__ = _doc
del _name, _doc
