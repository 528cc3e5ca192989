"""The eager policy on the CPU: how a staged call or an eager loop runs, decided from static facts.

Why: composites (xp.linalg, xp.fft, var/std, the complex special cases, a special function's series)
and eager while/cond/scan are staged once per signature. Compiled, each new shape costs an XLA compile
(tens to hundreds of ms), which library code on ever-changing shapes pays again and again; on the CPU
their equations can instead run one by one on host kernels (xla/host.py), a few microseconds each,
compiling nothing. Which way a signature runs is a function of the signature alone -- never of a clock,
a call count or what ran before -- so the same call gives the same bits every time (the two ways round
differently, and XLA fuses):

- "host": every equation (nested calls and loop bodies included) has a host kernel covering its dtypes
  and the operands total at most BY_OP_MAX_ELEMENTS elements -- LOOP_MAX_ELEMENTS where it holds a while
  or a scan: its host program (xla/host_program.py);
- "bind": some equation has no such kernel, operands as small: its equations bound one by one, each on
  its host kernel or its single-op executable -- what the unstaged body does, so a composite's first
  calls (array_namespace/_staged.py runs them unstaged) and its staged calls give the same bits;
- "compile": larger operands (one fused, multithreaded executable beats NumPy op by op by more than its
  compile: a 4000x4000 std ~35 ms op by op, ~9 ms fused + ~30 ms compile; a loop runs every body
  equation over its whole operands each iteration), an accelerator, or host kernels switched off
  (ARRAY_NAMESPACE_EAGER=xla).
"""
from __future__ import annotations

import math

import numpy as np

from transforms.primitives import elementwise as E

from . import host, runtime
from .host import host_kernels

# The thresholds: above this many operand elements a staged call runs compiled, and above LOOP_MAX_ELEMENTS one
# holding a while or a scan (and an eager loop) does. Where a loop's single op-by-op run costs about its compile
# (xp.special.hyp1f1 on 3 x 65,536 elements: ~2 s op by op a call, ~3 s to compile, then ~0.18 s a call; betainc
# on 4 x 65,536: ~0.2 s against ~1.2 s, then ~0.04 s), compiling loses little on a call made once and wins
# many times over on repeated calls (and a later process loads it from the compilation cache).
BY_OP_MAX_ELEMENTS = 1 << 22
LOOP_MAX_ELEMENTS = 1 << 17

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
    key = (p, dts, tuple(eqn.params.items()))   # (an elementwise primitive's params are hashable scalars)
    hit = _covers.get(key)
    if hit is None:
        try:
            k = host_kernels[p]
            hit = any(host.quiet(k, *[fill((), d) for d in dts], **eqn.params) is not NotImplemented
                      for fill in (np.zeros, np.ones))
        except Exception:    # (a kernel that cannot take the probe: it does not cover the dtypes)
            hit = False
        _covers[key] = hit
    return hit


def eager_way(closed, in_avals=None):
    """How a call of closed jaxpr `closed` runs eagerly: "host", "bind" or "compile" (see the module docstring;
    the backend's `eager_way` hook; an eager loop asks for the one-equation jaxpr of its loop). in_avals: its
    operands where not its own (a shape-free staged call run at another shape, jaxpr_transforms._ShapeFree);
    closed None: the way of any body on in_avals, a loop included (array_namespace/_staged.py's plain runs).
    Whether every equation has a covering host kernel, and whether a loop is held, is noted while its host
    program is built (xla/host_program.py), once per jaxpr."""
    if not runtime._kernels_on():
        return "compile"
    n = sum(math.prod(a.shape) for a in (closed.in_avals if in_avals is None else in_avals))
    if n > BY_OP_MAX_ELEMENTS or closed is None and n > LOOP_MAX_ELEMENTS:
        return "compile"
    if closed is None:
        return "host"
    from .host_program import program
    prog = program(closed)
    if n > LOOP_MAX_ELEMENTS and prog.loops:
        return "compile"
    return "host" if prog.host else "bind"
