"""Control flow as primitives: `cond`/`switch`, `while_loop`, `fori_loop`, `scan`, `map`.

Each public function traces its Python callables once, at the abstract values of the
operands, into closed jaxprs and binds one higher-order primitive whose params hold them:

- `cond`  operands (index, *ops); params `branches` (a tuple of jaxprs).   control_flow_cond.py
- `while` operands (*cond_consts, *body_consts, *carry); params `cond_jaxpr`, `body_jaxpr`,
  `cond_nconsts`, `body_nconsts`.                                          control_flow_while.py
- `scan`  operands (*consts, *carry, *xs); params `jaxpr` (consts, carry, x -> carry, y),
  `num_consts`, `num_carry`, `length`, `reverse`; outputs (*carry, *stacked ys).  control_flow_scan.py

Jaxprs in params never hold constants: captured values are hoisted into leading operands,
so every trace (jvp, vmap, staging) sees them as ordinary arguments (control_flow_util.py).
Each primitive's module holds it with all its rules; the rules build on the one implementation
of jvp / batching / partial evaluation / transposition of a jaxpr in jaxpr_transforms.py, and
the loops find which carries get a tangent, a batch axis or become unknown with its
`carry_fixed_point`. This module is the public face, plus `fori_loop`, which is a scan with
static bounds and a while_loop with traced ones.
"""
from __future__ import annotations

import numpy as np

from .api_util import box, to_raw
from .control_flow_cond import cond, cond_p, switch
from .control_flow_scan import map, scan, scan_p  # noqa: A004  (map: the JAX name)
from .control_flow_while import while_loop, while_p, while_raw
from .core import get_aval
from .traceback_util import api_boundary

__all__ = ["cond", "switch", "while_loop", "fori_loop", "scan", "map", "cond_p", "while_p", "scan_p", "while_raw"]


def _is_static_int(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


@api_boundary
def fori_loop(lower, upper, body_fun, init_val):
    """val = body_fun(i, val) for i in range(lower, upper).

    With Python/NumPy int bounds the trip count is static and the loop is a scan, so it
    is reverse-differentiable; with traced bounds it is a while_loop (forward mode only).

    Parameters: lower, upper (int or integer scalar Array): the range. body_fun (callable):
        (i, val) -> val. init_val: the initial value (a pytree of arrays).
    Returns: the final val.
    Raises: TypeError: for non-integer bounds or a body_fun changing val's types.

    >>> fori_loop(0, 5, lambda i, c: c + i, xp.asarray(0))
    Array(10)
    """
    if not callable(body_fun):
        raise TypeError(f"fori_loop: body_fun must be callable, got {type(body_fun).__name__}")
    if _is_static_int(lower) and _is_static_int(upper):
        n = max(int(upper) - int(lower), 0)

        def step(carry, _):
            i, x = carry
            return (i + 1, body_fun(i, x)), None
        (_, out), _ = scan(step, (box(to_raw(lower, "fori_loop lower")), init_val), None, length=n)
        return out
    lo, hi = to_raw(lower, "fori_loop lower"), to_raw(upper, "fori_loop upper")
    for v, nm in ((lo, "lower"), (hi, "upper")):
        a = get_aval(v)
        if a.shape != () or a.dtype.kind not in "iu":
            raise TypeError(f"fori_loop: {nm} must be an integer scalar, got {a.str_short()}")

    def cond_f(c):
        return c[0] < c[1]

    def body_f(c):
        i, u, x = c
        return i + 1, u, body_fun(i, x)
    return while_loop(cond_f, body_f, (box(lo), box(hi), init_val))[2]
