"""Jacobians and Hessians, composed from jvp/vjp and vmap."""
from __future__ import annotations

from .ad import jvp, vjp
from .api_util import argnums_tuple, with_args
from .batching import vmap
from .pytree import tree_flatten, tree_map, tree_unflatten


def _std_basis(x):
    """Identity matrix with x's shape twice: (n, *shape) one-hot rows, as an Array."""
    import array_namespace as xp
    x = xp.asarray(x)
    n = x.size
    return xp.reshape(xp.eye(n, dtype=x.dtype), (n,) + tuple(x.shape))


def jacfwd(fun, argnums=0):
    """Jacobian by forward mode: one jvp per input element, vectorised with vmap."""
    def jac(*args):
        import array_namespace as xp
        nums, single = argnums_tuple(argnums, len(args), "jacfwd")
        outs = []
        for i in nums:
            x = xp.asarray(args[i])

            def f_i(xi, i=i):
                full = list(args)
                full[i] = xi
                return fun(*full)
            basis = _std_basis(x)
            # x goes in as an (unmapped) argument, so a write into it inside fun reaches the caller's
            # handle through jvp's and vmap's write-back, as it would eagerly
            y, jt = vmap(lambda xv, t: jvp(f_i, (xv,), (t,)), in_axes=(None, 0), out_axes=(None, -1))(x, basis)
            outs.append(tree_map(lambda j: xp.reshape(j, tuple(j.shape[:-1]) + tuple(x.shape)), jt))
        return outs[0] if single else tuple(outs)
    return jac


def jacrev(fun, argnums=0):
    """Jacobian by reverse mode: one vjp per output element, vectorised with vmap."""
    def jac(*args):
        import array_namespace as xp
        nums, single = argnums_tuple(argnums, len(args), "jacrev")
        dyn = [args[i] for i in nums]
        y, f_vjp = vjp(with_args(fun, args, nums), *dyn)
        y_leaves, y_tree = tree_flatten(y)
        if len(y_leaves) != 1:
            raise TypeError("jacrev supports a single array output")
        yv = y_leaves[0]
        basis = _std_basis(yv)
        cts = vmap(lambda c: f_vjp(tree_unflatten(y_tree, [c])))(basis)
        res = [xp.reshape(c, tuple(yv.shape) + tuple(c.shape[1:])) for c in cts]
        return res[0] if single else tuple(res)
    return jac


def hessian(fun, argnums=0):
    """Hessian as jacfwd(jacrev(f)): forward-over-reverse."""
    return jacfwd(jacrev(fun, argnums), argnums)
