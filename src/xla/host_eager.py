"""Whether a staged call runs eagerly op by op on host kernels instead of as one compiled executable.

Why: composites (xp.linalg, xp.fft, the complex special cases, random samplers) are staged once per
signature and, eagerly, used to run as one XLA executable -- a compile (tens to hundreds of ms) for
every new shape, which library code on ever-changing shapes pays again and again. On the CPU, where
every primitive of the staged jaxpr has a host kernel (xla/host.py), running its equations one by one
costs microseconds each and compiles nothing: `eager_by_op` (the engine's backend hook, used by
`jaxpr_transforms.staged_call`) allows that for a budget of running time per signature -- about
what a compile costs, so a call repeated often enough (a hot loop on one shape) still gets its fused
executable, and pays at most twice the better of the two choices. Control flow (while, cond, scan)
counts as host where every equation of its bodies does: xla/host_control_flow.py runs such loops
in Python on the same budget per signature. Elsewhere -- an accelerator, a primitive without a host
kernel (a callback, a collective), an elementwise kernel that declines the dtype (complex
transcendentals: they would compile one by one, and differ from the fused body in the last bit), or
large operands where XLA's fusion outweighs one compile -- the executable is compiled at once.
"""
from __future__ import annotations

import math

import numpy as np

from transforms.control_flow import cond_p, while_p
from transforms.primitives import elementwise as E
from transforms.primitives import fft as F
from transforms.primitives import lapack as LP

from . import host, runtime
from .host import host_kernels

# Above this many input elements a staged call compiles at once: one fused, multithreaded executable
# then beats NumPy op by op by more than its compile costs (a 4000x4000 std: ~35 ms op by op, ~9 ms
# fused + ~30 ms compile), so even a first call pays at most about twice. Below it, with freed memory
# reused rather than page-faulted afresh (xla/host_alloc.py), op by op costs little more than a fused
# run (vector_norm of 800x800: 0.3 ms against 0.1 ms) and compiling per new shape would not pay; a
# hot signature still gets its executable once it has spent its budget.
BY_OP_MAX_ELEMENTS = 1 << 22
# The op-by-op time a signature may spend before it is compiled: about what its compile costs on a
# small CPU (an elementwise body ~20-50 ms; one with a decomposition or a loop 0.2-4 s: lu's pivot loop,
# the LAPACK custom calls, a special function's series), so a hot loop pays at most about twice the
# better choice.
BY_OP_BUDGET_S = 0.05
BY_OP_BUDGET_HEAVY_S = 0.5

# primitives whose compile is slow (0.2-4 s): a body holding one gets the larger budget (so do loops)
_HEAVY = {F.fft_p, LP.cholesky_p, LP.eigh_p, LP.svd_p, LP.qr_p, LP.lu_p, LP.eig_p, LP.triangular_solve_p}


_covers: dict = {}   # (elementwise prim, input dtypes, params) -> whether its host kernel takes them


def _kernel_covers(eqn):
    """Whether an elementwise kernel takes these dtypes: asked once, on 0-d zeros and then on 0-d
    ones. A kernel that declines the dtype declines both; one that declines only some values (the
    complex transcendentals: non-finite parts, a pole's neighbourhood) takes one of them, and the
    values it declines run on XLA singly."""
    p = eqn.prim
    if getattr(E, p.name + "_p", None) is not p:
        return True          # (other families decline only for values: those then run on XLA singly)
    dts = tuple(v.aval.dtype for v in eqn.invars)
    try:
        key = (p, dts, tuple(eqn.params.items()))
        hit = _covers.get(key)
    except TypeError:        # an unhashable parameter
        key, hit = None, None
    if hit is None:
        try:
            k = host_kernels[p]
            hit = any(host.run_quiet(k, [fill((), d) for d in dts], eqn.params) is not NotImplemented
                      for fill in (np.zeros, np.ones))
        except Exception:    # (a kernel that cannot take the probe: let XLA run the body)
            hit = False
        if key is not None:
            _covers[key] = hit
    return hit


def inner_jaxprs(prim, params):
    """The closed jaxprs a control-flow primitive runs (cond and body; the branches; the scan body)."""
    if prim is while_p:
        return (params["cond_jaxpr"], params["body_jaxpr"])
    if prim is cond_p:
        return tuple(params["branches"])
    return (params["jaxpr"],)


def budget_for(jaxprs, in_avals, loop=False):
    """Seconds a call running `jaxprs` (closed) on operands `in_avals` may spend on host kernels op by op
    before it is compiled (0: compile now). Whether every equation has a host kernel covering its dtypes
    (nested calls and loop bodies included) and which heavy primitives it meets are noted while its
    host program is built (xla/host_program.py), once per jaxpr; the program then runs the call."""
    if not runtime._kernels_on():
        return 0.0
    if sum(math.prod(a.shape) for a in in_avals) > BY_OP_MAX_ELEMENTS:
        return 0.0
    from .host_program import program
    heavy = loop                            # (the eager impl of a while or scan itself)
    for j in jaxprs:
        pr = program(j)
        if not pr.host:
            return 0.0
        heavy = heavy or bool(pr.heavy)
    return BY_OP_BUDGET_HEAVY_S if heavy else BY_OP_BUDGET_S


def eager_by_op(closed, in_avals=None):
    """Seconds `closed` may run eagerly equation by equation before it is compiled (0: compile now);
    in_avals: the operands it runs on where not its own (a shape-free staged call run at another shape:
    transforms.jaxpr_transforms._ShapeFree)."""
    return budget_for((closed,), closed.in_avals if in_avals is None else in_avals)


# ------------------------------------------------------------ op-by-op budgets per signature
# One store for the eager loops (xla/host_control_flow.py: key (prim, params, *operand avals)) and the
# composite special kernels (xla/host_special.py: key (closed_at, operand avals)). A staged call keeps its
# own on its cache entry (transforms.jaxpr_transforms._Staged.by_op, reset with that cache): the engine
# layer does not import this module, and an attribute read is all a hot staged call can afford.
_left: dict = {}     # signature key -> seconds it may still run op by op (<= 0: it runs compiled)
_LEFT_MAX = 4096


def op_budget(key, decide):
    """Seconds signature `key` may still run op by op; a key met for the first time gets decide() (0:
    compile at once). An unhashable key (a parameter without a hash) decides afresh."""
    store = _left
    try:
        left = store.get(key)
    except TypeError:
        return decide()
    if left is None:
        left = decide()
        if len(store) >= _LEFT_MAX:
            store.clear()
        store[key] = left
    return left


def set_op_budget(key, left):
    """Record what `key` has left after an op-by-op run (0.0 once it gave up: it runs compiled from then)."""
    try:
        _left[key] = left
    except TypeError:
        pass

