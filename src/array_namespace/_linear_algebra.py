"""Linear algebra functions of the main namespace: matmul, tensordot, matrix_transpose, vecdot."""
from __future__ import annotations

from transforms.core import bind
from transforms.primitives import elementwise as P
from transforms.primitives import linalg as L
from transforms.primitives import reductions as R
from transforms.primitives import structural as S

from . import _dtypes as D
from ._array import Array
from ._views import view_of
from ._helpers import as_array, as_int, cast, check_broadcast, check_kind, is_int_like, normalize_axis, wrap


_NUMERIC = frozenset(D.NUMERIC)
_NUMERIC_NP = frozenset(d.dtype for d in D.NUMERIC)   # (NumPy dtypes: membership compares in C)


def _operands(fname, x1, x2):
    if type(x1) is Array and type(x2) is Array:   # the common case: one numeric dtype, no promotion
        a, b = x1._v, x2._v
        ta, tb = a.aval, b.aval
        if ta.dtype == tb.dtype and ta.dtype in _NUMERIC and not ta.weak_type and not tb.weak_type:
            return x1, x2, a, b
    x1, x2 = as_array(x1, fname, "x1"), as_array(x2, fname, "x2")
    dt = D.promote(x1.dtype, x2.dtype, fname)
    check_kind(fname, dt, D.NUMERIC, "a numeric", "x1 and x2")
    return x1, x2, cast(x1._v, dt), cast(x2._v, dt)


_MATMUL_2D = (((1,), (0,)), ((), ()))


def matmul(x1, x2, /):
    """Matrix product of x1 and x2 (the @ operator): batched over leading axes, a 1-D operand is a vector.

    Parameters: x1, x2 (Array): numeric, at least 1-D; the inner dimensions agree and the batch shapes broadcast.
    Returns: Array: of the promoted dtype; shape (..., M, N) with the vector axes dropped.
    Raises: TypeError: if an operand is not an array or the dtypes do not promote to a numeric dtype. ValueError: for
        a 0-d operand, mismatched inner dimensions or batch shapes that do not broadcast.

    >>> xp.matmul(xp.asarray([[1, 2], [3, 4]]), xp.asarray([1, 1]))
    Array([3, 7])
    """
    if type(x1) is Array and type(x2) is Array:   # the commonest case first: 2-D @ 2-D, one numeric dtype
        a, b = x1._v, x2._v
        (s1, d1, w1), (s2, d2, w2) = a.aval, b.aval   # (shape, dtype, weak_type)
        if (len(s1) == 2 and len(s2) == 2 and s1[1] == s2[0] and d1 == d2 and d1 in _NUMERIC_NP
                and not w1 and not w2):
            return wrap(bind(L.dot_general_p, a, b, dimension_numbers=_MATMUL_2D))
        if (len(s1) + len(s2) == 3 and s1 and s2 and s1[-1] == s2[0] and d1 == d2 and d1 in _NUMERIC_NP and not w1
                and not w2):   # 2-D @ 1-D, 1-D @ 2-D: the general path's three binds, without its checks (~40% of the call)
            if len(s2) == 1:
                b, shape = bind(S.reshape_p, b, new_sizes=s2 + (1,)), s1[:1]
            else:
                a, shape = bind(S.reshape_p, a, new_sizes=(1,) + s1), s2[1:]
            return wrap(bind(S.reshape_p, bind(L.dot_general_p, a, b, dimension_numbers=_MATMUL_2D), new_sizes=shape))
    x1, x2, a, b = _operands("matmul", x1, x2)
    s1, s2 = x1.shape, x2.shape
    if len(s1) == 2 and len(s2) == 2 and s1[1] == s2[0]:   # the common case: one dot_general
        return wrap(bind(L.dot_general_p, a, b, dimension_numbers=_MATMUL_2D))
    if x1.ndim == 0 or x2.ndim == 0:
        raise ValueError(f"matmul: x1 and x2 must have at least one dimension (use multiply for scalars), got "
                         f"shapes {x1.shape} and {x2.shape}")
    if x1.ndim == 1:
        a, s1 = S.reshape(a, (1,) + s1), (1,) + s1
    if x2.ndim == 1:
        b, s2 = S.reshape(b, s2 + (1,)), s2 + (1,)
    if s1[-1] != s2[-2]:
        raise ValueError(f"matmul: contracted dimensions of x1 and x2 differ: {x1.shape} @ {x2.shape} "
                         f"({s1[-1]} != {s2[-2]})")
    batch = P.broadcast_shapes(s1[:-2], s2[:-2])
    a = S.broadcast_to_shape(a, batch + s1[-2:])
    b = S.broadcast_to_shape(b, batch + s2[-2:])
    nb = len(batch)
    out = L.dot_general(a, b, (((nb + 1,), (nb,)), (tuple(range(nb)), tuple(range(nb)))))
    shape = batch + (s1[-2],) * (x1.ndim > 1) + (s2[-1],) * (x2.ndim > 1)
    return wrap(S.reshape(out, shape))


def matrix_transpose(x, /):
    """x with its last two axes swapped (a view: writes through .at stay consistent).

    Parameters: x (Array): at least 2-D.
    Returns: Array: of shape (..., N, M) for x of shape (..., M, N).
    Raises: TypeError: if x is not an array. ValueError: if x has fewer than 2 dimensions.

    >>> xp.matrix_transpose(xp.asarray([[1, 2, 3]]))
    Array([[1],
           [2],
           [3]])
    """
    x = as_array(x, "matrix_transpose")
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose: x must have at least 2 dimensions, got shape {x.shape}")
    perm = tuple(range(x.ndim - 2)) + (x.ndim - 1, x.ndim - 2)
    v = x._v
    return view_of(wrap(S.transpose(v, perm)), x, "perm", perm, v)


def tensordot(x1, x2, /, *, axes=2):
    """Tensor contraction of x1 and x2 over the given axes.

    Parameters: x1, x2 (Array): numeric. axes (int or pair of sequences): N contracts the last N axes of x1 with the
        first N of x2 (default 2; 0 is the outer product); a pair lists the axes of x1 and of x2.
    Returns: Array: of the promoted dtype; x1's free axes then x2's.
    Raises: TypeError: if an operand is not an array or the dtypes do not promote to a numeric dtype. ValueError: if
        contracted sizes differ or axes is out of range or of unequal lengths.

    >>> xp.tensordot(xp.asarray([1, 2]), xp.asarray([3, 4]), axes=0)
    Array([[3, 4],
           [6, 8]])
    """
    x1, x2, a, b = _operands("tensordot", x1, x2)
    if is_int_like(axes):
        axes = as_int(axes, "tensordot", "axes")
        if axes < 0 or axes > min(x1.ndim, x2.ndim):
            raise ValueError(f"tensordot: axes={axes} is invalid for shapes {x1.shape} and {x2.shape}")
        ax1 = tuple(range(x1.ndim - axes, x1.ndim))
        ax2 = tuple(range(axes))
    else:
        if not isinstance(axes, (tuple, list)) or len(axes) != 2:
            raise TypeError(f"tensordot: axes must be an int or a pair of sequences of axes, got {axes!r}")
        ax1, ax2 = (tuple(a_) if not is_int_like(a_) else (a_,) for a_ in axes)
        ax1 = tuple(normalize_axis(a_, x1.ndim, "tensordot", "axes") for a_ in ax1)
        ax2 = tuple(normalize_axis(a_, x2.ndim, "tensordot", "axes") for a_ in ax2)
    if len(ax1) != len(ax2):
        raise ValueError("tensordot: the two axes sequences must have the same length")
    for i, j in zip(ax1, ax2):
        if x1.shape[i] != x2.shape[j]:
            raise ValueError(f"tensordot: axis {i} of x1 {x1.shape} and axis {j} of x2 {x2.shape} differ in size")
    return wrap(L.dot_general(a, b, ((ax1, ax2), ((), ()))))


def vecdot(x1, x2, /, *, axis=-1):
    """Dot product of vectors along axis: sum(conj(x1) * x2), batched over the other (broadcast) axes.

    Parameters: x1, x2 (Array): numeric, at least 1-D, of equal size along axis. axis (int): the axis of the broadcast
        shape (default -1), a dimension of both.
    Returns: Array: of the promoted dtype; the broadcast shape without axis.
    Raises: TypeError: if an operand is not an array or the dtypes do not promote to a numeric dtype. ValueError: for
        a 0-d operand, shapes that do not broadcast, or sizes along axis that differ.

    >>> xp.vecdot(xp.asarray([1j, 2.0]), xp.asarray([1j, 1.0]))
    Array(3.+0.j, dtype=complex128)
    """
    x1, x2, a, b = _operands("vecdot", x1, x2)
    if x1.ndim == 0 or x2.ndim == 0:
        raise ValueError(f"vecdot: x1 and x2 must have at least one dimension, got shapes {x1.shape} and {x2.shape}")
    check_broadcast("vecdot", x1.shape, x2.shape)
    shape = P.broadcast_shapes(x1.shape, x2.shape)
    axis = normalize_axis(axis, len(shape), "vecdot")
    if not -min(x1.ndim, x2.ndim) <= axis - len(shape) < 0:
        raise ValueError("vecdot: axis must refer to a dimension of both operands")
    if x1.shape[axis - len(shape)] != x2.shape[axis - len(shape)]:
        raise ValueError(f"vecdot: sizes along axis differ: {x1.shape} and {x2.shape}")
    a, b = S.broadcast_to_shape(a, shape), S.broadcast_to_shape(b, shape)
    if D.complex64 == a.aval.dtype or D.complex128 == a.aval.dtype:
        a = bind(P.conj_p, a)
    return wrap(R.reduce_sum(bind(P.mul_p, a, b), (axis,)))
