"""Jacobians and Hessians, composed from jvp/vjp and vmap.

Built on the engine alone: the standard basis is made from primitives (iota, eq, convert) and
results are boxed through the engine's boxing hook, so this module never imports the namespace.
"""
from __future__ import annotations

import numpy as np

from .ad import jvp, vjp
from .api_util import argnums_tuple, box, to_raw, with_args
from .batching import vmap
from .core import boxing, get_aval, unbox
from .primitives import elementwise as E
from .primitives import structural as S
from .pytree import tree_flatten, tree_map, tree_unflatten
from .traceback_util import api_boundary


def _as_array(x, fname):
    """x as an Array: an Array is kept (so writes into it reach the caller's handle); a scalar,
    NumPy value or (nested) list becomes a strongly typed Array, as asarray would make it."""
    if type(x) is boxing.box_type:
        return x
    if isinstance(x, (list, tuple)):
        x = np.asarray(x)
    v = to_raw(x, fname)
    a = get_aval(v)
    return box(E.convert_element_type(v, a.dtype) if a.weak_type else v)


def _shape(x):
    return tuple(get_aval(unbox(x)).shape)


def _reshape(x, shape):
    return box(S.reshape(unbox(x), tuple(shape)))


def _std_basis(x):
    """Identity matrix with x's shape twice: (n, *shape) one-hot rows, as an Array."""
    a = get_aval(unbox(x))
    n = int(np.prod(a.shape, dtype=np.int64))
    rows, cols = S.iota(np.int64, (n, n), 0), S.iota(np.int64, (n, n), 1)
    eye = E.convert_element_type(E.bind(E.eq_p, rows, cols), a.dtype)
    return box(S.reshape(eye, (n,) + tuple(a.shape)))


@api_boundary
def jacfwd(fun, argnums=0):
    """Jacobian by forward mode: one jvp per input element, vectorised with vmap.

    Parameters: fun (callable): a function of arrays. argnums (int or tuple of ints): which arguments.
    Returns: callable: (*args) -> the Jacobian, of shape out.shape + arg.shape (tuples for tuple argnums).
    Raises: TypeError: when called, for non-floating-point differentiated arguments.

    >>> jacfwd(lambda v: v ** 2)(xp.asarray([1.0, 2.0]))
    Array([[2., 0.],
           [0., 4.]])
    """
    @api_boundary
    def jac(*args):
        nums, single = argnums_tuple(argnums, len(args), "jacfwd")
        outs = []
        for i in nums:
            x = _as_array(args[i], "jacfwd")

            def f_i(xi, i=i):
                full = list(args)
                full[i] = xi
                return fun(*full)
            basis = _std_basis(x)
            xshape = _shape(x)
            # x goes in as an (unmapped) argument, so a write into it inside fun reaches the caller's
            # handle through jvp's and vmap's write-back, as it would eagerly
            y, jt = vmap(lambda xv, t: jvp(f_i, (xv,), (t,)), in_axes=(None, 0), out_axes=(None, -1))(x, basis)
            outs.append(tree_map(lambda j: _reshape(j, _shape(j)[:-1] + xshape), jt))
        return outs[0] if single else tuple(outs)
    return jac


@api_boundary
def jacrev(fun, argnums=0):
    """Jacobian by reverse mode: one vjp per output element, vectorised with vmap.

    Parameters: fun (callable): a function of arrays. argnums (int or tuple of ints): which arguments.
    Returns: callable: (*args) -> the Jacobian, of shape out.shape + arg.shape (tuples for tuple argnums).
    Raises: TypeError: when called, for non-floating-point differentiated arguments.

    >>> jacrev(lambda v: v ** 2)(xp.asarray([1.0, 2.0]))
    Array([[2., 0.],
           [0., 4.]])
    """
    @api_boundary
    def jac(*args):
        nums, single = argnums_tuple(argnums, len(args), "jacrev")
        dyn = [args[i] for i in nums]
        y, f_vjp = vjp(with_args(fun, args, nums), *dyn)
        y_leaves, y_tree = tree_flatten(y)
        if len(y_leaves) != 1:
            raise TypeError("jacrev supports a single array output")
        yv = _as_array(y_leaves[0], "jacrev")
        basis = _std_basis(yv)
        yshape = _shape(yv)
        cts = vmap(lambda c: f_vjp(tree_unflatten(y_tree, [c])))(basis)
        res = [_reshape(c, yshape + _shape(c)[1:]) for c in cts]
        return res[0] if single else tuple(res)
    return jac


@api_boundary
def hessian(fun, argnums=0):
    """Hessian as jacfwd(jacrev(f)): forward-over-reverse.

    Parameters: fun (callable): returns a real scalar. argnums (int or tuple of ints): which arguments.
    Returns: callable: (*args) -> the Hessian, of shape arg.shape + arg.shape.
    Raises: TypeError: when called, if fun's output is not a real scalar or an argument is not floating-point.

    >>> hessian(lambda v: xp.sum(v ** 3))(xp.asarray([1.0, 2.0]))
    Array([[ 6.,  0.],
           [ 0., 12.]])
    """
    return jacfwd(jacrev(fun, argnums), argnums)
