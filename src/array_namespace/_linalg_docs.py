"""The docstrings of the linalg extension's own functions, as a table that linalg.py applies.

Why a table: _linalg.py is near the 600-line budget (tools/size_budget.py). Where a function carries a
one-line docstring in _linalg.py, its entry here begins with that line (tests/array_namespace/
test_linalg_docs.py checks it), so the two never disagree. matmul, matrix_transpose, tensordot and vecdot
are the main namespace's functions, documented in _linear_algebra.py. tests/test_docstrings.py runs the
examples.
"""

_X = "x (Array): a floating-point stack of matrices, shape (..., M, N)"
_SQ = "x (Array): a floating-point stack of square matrices, shape (..., M, M)"
_R = "TypeError: if x is not a floating-point array. ValueError: if x has fewer than 2 dimensions"
_RSQ = _R + " or its matrices are not square"
_SING = "A singular matrix gives non-finite values (no error is raised, as under jit)."


def _doc(summary, params, returns, raises, example):
    return f"{summary}\n\nParameters: {params}\nReturns: {returns}\nRaises: {raises}\n\n{example}\n"


DOCS = {
    "cholesky": _doc(
        "L with x = L L^H (or U with x = U^H U when upper=True); x Hermitian positive-definite.\n\n"
        "Only the Hermitian part (x + x^H) / 2 is read; a matrix that is not positive-definite gives NaNs.",
        f"{_SQ}. upper (bool): return the upper factor U instead of L.",
        "Array: the triangular factor, of x's shape and dtype.", f"{_RSQ}.",
        ">>> xp.linalg.cholesky(xp.asarray([[4.0, 2.0], [2.0, 5.0]]))\nArray([[2., 0.],\n       [1., 2.]])"),
    "eigh": _doc(
        "Eigenvalues (ascending, real) and orthonormal eigenvectors of Hermitian matrices.\n\n"
        "Only the Hermitian part (x + x^H) / 2 is read.",
        f"{_SQ}.",
        "EighResult: eigenvalues (..., M), real of x's precision; eigenvectors (..., M, M), the columns.",
        f"{_RSQ}.",
        ">>> xp.linalg.eigh(xp.asarray([[2.0, 1.0], [1.0, 2.0]])).eigenvalues\nArray([1., 3.])"),
    "eigvalsh": _doc(
        "The eigenvalues (ascending, real) of Hermitian matrices (their Hermitian part (x + x^H) / 2).",
        f"{_SQ}.", "Array: (..., M), real of x's precision.", f"{_RSQ}.",
        ">>> xp.linalg.eigvalsh(xp.asarray([[2.0, 1.0], [1.0, 2.0]]))\nArray([1., 3.])"),
    "eig": _doc(
        "Eigenvalues and right eigenvectors of general square matrices (always complex).",
        f"{_SQ}.",
        "EigResult: eigenvalues (..., M) and eigenvectors (..., M, M) (the columns, of unit norm), complex of "
        "x's precision.", f"{_RSQ}.",
        ">>> xp.linalg.eig(xp.asarray([[2.0, 0.0], [0.0, 3.0]])).eigenvalues\n"
        "Array([2.+0.j, 3.+0.j], dtype=complex128)"),
    "eigvals": _doc(
        "The eigenvalues of general square matrices (always complex).",
        f"{_SQ}.", "Array: (..., M), complex of x's precision.", f"{_RSQ}.",
        ">>> xp.linalg.eigvals(xp.asarray([[0.0, -1.0], [1.0, 0.0]]))\nArray([0.+1.j, 0.-1.j], dtype=complex128)"),
    "qr": _doc(
        "The QR decomposition x = Q R: Q with orthonormal columns, R upper triangular.",
        f"{_X}. mode (str): 'reduced' (default: Q (..., M, K), R (..., K, N), K = min(M, N)) or 'complete' "
        "(Q (..., M, M), R (..., M, N)).",
        "QRResult: Q and R, of x's dtype.", f"{_R}, or mode is neither 'reduced' nor 'complete'.",
        ">>> A = xp.asarray([[3.0, 1.0], [4.0, 2.0]])\n>>> Q, R = xp.linalg.qr(A)\n"
        ">>> bool(xp.all(xp.abs(Q @ R - A) < 1e-12))\nTrue"),
    "svd": _doc(
        "The singular value decomposition x = U diag(S) Vh.",
        f"{_X}. full_matrices (bool): U (..., M, M) and Vh (..., N, N) (default True); False: (..., M, K) and "
        "(..., K, N), K = min(M, N).",
        "SVDResult: U, S (..., K) (real, descending) and Vh.", f"{_R}.",
        ">>> A = xp.asarray([[3.0, 1.0], [4.0, 2.0]])\n>>> U, S, Vh = xp.linalg.svd(A)\n"
        ">>> S\nArray([5.4649857 , 0.36596619])\n>>> bool(xp.all(xp.abs((U * S) @ Vh - A) < 1e-12))\nTrue"),
    "svdvals": _doc(
        "The singular values of each matrix, descending.",
        f"{_X}.", "Array: (..., min(M, N)), real of x's precision.", f"{_R}.",
        ">>> xp.linalg.svdvals(xp.asarray([[3.0, 0.0], [0.0, -2.0]]))\nArray([3., 2.])"),
    "solve": _doc(
        f"x with x1 @ x = x2; x2 of shape (M,) is a single vector, else (..., M, K).\n\n{_SING}",
        "x1 (Array): a floating-point stack of square matrices (..., M, M). x2 (Array): (M,) or (..., M, K); "
        "the batch shapes broadcast.",
        "Array: of the promoted dtype; x2's shape (with the broadcast batch shape).",
        "TypeError: if an operand is not an array or the dtypes do not promote to a floating-point one. "
        "ValueError: if x1 is not a stack of square matrices or the shapes do not fit.",
        ">>> xp.linalg.solve(xp.asarray([[2.0, 0.0], [0.0, 4.0]]), xp.asarray([2.0, 2.0]))\n"
        "Array([1. , 0.5])"),
    "inv": _doc(
        f"The inverse of each square matrix (LU with partial pivoting).\n\n{_SING}",
        f"{_SQ}.", "Array: of x's shape and dtype.", f"{_RSQ}.",
        ">>> xp.linalg.inv(xp.asarray([[2.0, 0.0], [0.0, 4.0]]))\nArray([[0.5 , 0.  ],\n       [0.  , 0.25]])"),
    "det": _doc(
        "The determinant of each square matrix (LU with partial pivoting; 1 for 0 x 0).",
        f"{_SQ}.", "Array: (...), of x's dtype.", f"{_RSQ}.",
        ">>> xp.linalg.det(xp.asarray([[1.0, 2.0], [3.0, 4.0]]))\nArray(-2.)"),
    "slogdet": _doc(
        "(sign, log|det|); sign is 0 and logabsdet -inf for singular matrices.",
        f"{_SQ}.",
        "SlogdetResult: sign (...) of x's dtype (for complex x of modulus 1) and logabsdet (...), real.",
        f"{_RSQ}.",
        ">>> xp.linalg.slogdet(xp.asarray([[-2.0, 0.0], [0.0, 3.0]]))\n"
        "SlogdetResult(sign=Array(-1.), logabsdet=Array(1.79175947))"),
    "matrix_power": _doc(
        "Each square matrix raised to the integer power n (repeated squaring; n < 0 inverts first, n = 0 gives "
        "the identity).",
        "x (Array): a numeric stack of square matrices (..., M, M). n (int): the power.",
        "Array: of x's shape and dtype.",
        "TypeError: if x is not numeric, n is not an int, or n < 0 for a non-floating x. ValueError: if x has "
        "fewer than 2 dimensions or its matrices are not square.",
        ">>> xp.linalg.matrix_power(xp.asarray([[1, 1], [0, 1]]), 3)\nArray([[1, 3],\n       [0, 1]])"),
    "matrix_rank": _doc(
        "The rank of each matrix: how many singular values exceed rtol times the largest.",
        f"{_X}. rtol (float, Array or None): the relative tolerance, broadcast against the batch shape "
        "(None: max(M, N) * eps).",
        "Array: (...), int64.",
        f"{_R}; TypeError or ValueError also for an rtol that is not real-valued or does not broadcast.",
        ">>> xp.linalg.matrix_rank(xp.asarray([[1.0, 2.0], [2.0, 4.0]]))\nArray(1)"),
    "pinv": _doc(
        "The Moore-Penrose pseudo-inverse of each matrix (SVD; singular values up to rtol times the largest "
        "count as zero).",
        f"{_X}. rtol (float, Array or None): the relative cutoff (None: max(M, N) * eps).",
        "Array: (..., N, M), of x's dtype.",
        f"{_R}; TypeError or ValueError also for an rtol that is not real-valued or does not broadcast.",
        ">>> xp.linalg.pinv(xp.asarray([[2.0, 0.0], [0.0, 0.0]]))\nArray([[0.5, 0. ],\n       [0. , 0. ]])"),
    "vector_norm": _doc(
        "The vector p-norm over the given axes: (sum |x|**ord) ** (1/ord); ord inf/-inf: max/min |x|, 0: the "
        "number of non-zeros.",
        "x (Array): floating-point. axis (int, tuple of int or None): the axes (None: all, as one vector). "
        "keepdims (bool): keep them with size 1. ord (int or float): the order (default 2).",
        "Array: real of x's precision, x's shape less the axes.",
        "TypeError: if x is not floating-point. ValueError: if ord is not a number, for ord=-inf of an empty "
        "vector, or a repeated axis. AxisError (an IndexError and a ValueError): for an axis out of range.",
        ">>> xp.linalg.vector_norm(xp.asarray([[3.0, 4.0], [6.0, 8.0]]), axis=1)\nArray([ 5., 10.])"),
    "matrix_norm": _doc(
        "The matrix norm of each matrix: 'fro' (Frobenius), 'nuc' (sum of singular values), 1/-1 (max/min "
        "column sum of |x|), inf/-inf (max/min row sum), 2/-2 (largest/smallest singular value).",
        f"{_X}. keepdims (bool): keep the two matrix axes with size 1. ord (str, int or float): one of the "
        "above (default 'fro').",
        "Array: (...), real of x's precision (0 for a max or sum over nothing, as NumPy's).",
        f"{_R}, for another ord, or for -1/-2/-inf where there is nothing to take the minimum of.",
        ">>> xp.linalg.matrix_norm(xp.asarray([[1.0, 2.0], [3.0, 4.0]]), ord=1)\nArray(6.)"),
    "diagonal": _doc(
        "The offset-th diagonal of each matrix of x (the last two axes).",
        "x (Array): any dtype, at least 2-D. offset (int): 0 the main diagonal, > 0 above it, < 0 below.",
        "Array: (..., K), of x's dtype, K the diagonal's length.",
        "TypeError: if x is not an array or offset not an int. ValueError: if x has fewer than 2 dimensions.",
        ">>> xp.linalg.diagonal(xp.asarray([[1, 2], [3, 4]]), offset=1)\nArray([2])"),
    "trace": _doc(
        "The sum of the offset-th diagonal of each matrix of x.",
        "x (Array): numeric, at least 2-D. offset (int): the diagonal (0 the main one). dtype (dtype or None): "
        "as for xp.sum (None: x's, small integers widen to int64/uint64).",
        "Array: (...), the sums.",
        "TypeError: if x is not numeric or offset not an int. ValueError: if x has fewer than 2 dimensions.",
        ">>> xp.linalg.trace(xp.asarray([[1, 2], [3, 4]]))\nArray(5)"),
    "outer": _doc(
        "The outer product of two vectors: out[i, j] = x1[i] * x2[j].",
        "x1, x2 (Array): numeric, 1-D.", "Array: (len(x1), len(x2)), of the promoted dtype.",
        "TypeError: if an operand is not an array or the dtypes do not promote to a numeric one. ValueError: if "
        "an operand is not 1-D.",
        ">>> xp.linalg.outer(xp.asarray([1, 2]), xp.asarray([1, 10, 100]))\n"
        "Array([[  1,  10, 100],\n       [  2,  20, 200]])"),
    "cross": _doc(
        "The cross product of 3-element vectors along axis, batched over the other (broadcast) axes.",
        "x1, x2 (Array): numeric, of size 3 along axis. axis (int): a negative axis, a dimension of both "
        "(default -1).",
        "Array: of the promoted dtype and the broadcast shape.",
        "TypeError: if an operand is not an array or the dtypes do not promote to a numeric one. ValueError: "
        "for 0-d operands, a size other than 3 along axis, a non-negative axis or shapes that do not broadcast. "
        "AxisError (an IndexError and a ValueError): for an axis out of range.",
        ">>> xp.linalg.cross(xp.asarray([1.0, 0.0, 0.0]), xp.asarray([0.0, 1.0, 0.0]))\nArray([0., 0., 1.])"),
}
