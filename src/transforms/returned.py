"""Python floats a transformed function returns: float() of a traced value, mapped back to that value.

scikit-learn's metrics end in `return float(score)`. Under a transform the score is a traced value (batched,
carrying a tangent, staged), which has no one Python value. Where float() of it reaches `return` untouched,
through every frame up to the transform's flat function (api_util.flatten_fun; jit_returned.py reads the
bytecode to know), nothing but the transform receives the number: float() hands back a placeholder, a fresh
float object, and the flat function's output step puts the traced value in its place, found by identity
(CPython's float() returns the very object __float__ returned). vmap(r2_score) is then each dataset's score,
grad(r2_score) its derivative. Any other use of the number keeps what float() does without this: under vmap the
value all batch elements share (else BatchDisagreementError), under AD ConcretizationTypeError, under a guarded
jit a guard (jit_guards.Shadow.number, which registers its floats here too: a returned one is a program output).

Each run of a flat function opens a `Returned` (a thread's stack of them): the numbers made while its function
runs. A placeholder is made only where a transform's output reaches Arrays (`takes_numbers`): vmap and AD, and a
jit or other staging nested in them; at the top of make_jaxpr or a strict jit float() still raises, as in JAX.
"""
from __future__ import annotations

import threading
from functools import lru_cache

from .jit_returned import returned_directly

_local = threading.local()


class Returned:
    """The float() results of one run of a flat function: id -> (the float, the traced value it stands for,
    whether the float is a placeholder rather than this call's value)."""
    __slots__ = ("by_id",)

    def __init__(self):
        self.by_id = {}

    def add(self, number, value, placeholder=False):
        self.by_id[id(number)] = (number, value, placeholder)   # (keeps `number` alive: its id stays its own)
        return number

    def numbers(self, leaves):
        """((leaf index, Python type, traced value), ...) of the output leaves that are recorded numbers. An
        object that is more than one leaf (a small int is one object wherever it is) is none: which leaf is the
        number is unknown (a guarded jit then guards its value). (Two numbers one object: the last recorded,
        whose value a guard pins unless it is returned too, then as a second leaf.)"""
        by_id, out = self.by_id, []
        if not by_id:
            return ()
        for n, x in enumerate(leaves):
            got = by_id.get(id(x))
            if got is not None and got[0] is x:
                out.append((n, type(x), got[1]))
        return tuple(o for o in out if sum(y is leaves[o[0]] for y in leaves) == 1)


def _stack():
    s = getattr(_local, "stack", None)
    if s is None:
        s = _local.stack = []
    return s


def enter():
    """Open the numbers of a flat function's run (api_util.flatten_fun); `leave` closes it."""
    reg = Returned()
    _stack().append(reg)
    return reg


def leave(reg):
    s = _stack()
    if s and s[-1] is reg:
        s.pop()


def record(number, value, placeholder=False):
    """`number` (a float() result) stands for traced `value` in the innermost flat function's outputs."""
    s = _stack()
    return s[-1].add(number, value, placeholder) if s else number


def call(fun, args, kwargs):
    """fun(*args, **kwargs) run inline by a transform under another (jit's fallback under vmap/grad, whose
    outputs are Arrays there): a placeholder it returns comes back as its traced value, an Array; a float that
    is this call's value (a guarded jit's) stays a float, still mapped for the flat function above."""
    reg = enter()
    try:
        out = fun(*args, **kwargs)
    finally:
        leave(reg)
    if not reg.by_id:
        return out
    from .api_util import box
    from .pytree import tree_flatten, tree_unflatten
    leaves, tree = tree_flatten(out)
    for n, _, _ in reg.numbers(leaves):
        number, value, placeholder = reg.by_id[id(leaves[n])]
        leaves[n] = box(value) if placeholder else record(number, value)
    return tree_unflatten(tree, leaves)


@lru_cache(maxsize=1)
def flat_code():
    """(the code of api_util.flatten_fun's flat function,): where a returned number becomes an output. (A guarded
    jit's float proven only up to `call` goes on as a float, unproven beyond: jit_guards keeps it a guard.)"""
    from .api_util import flatten_fun
    return (flatten_fun(None, None, None).__code__,)


@lru_cache(maxsize=1)
def _stops():
    return flat_code() + (call.__code__,)   # (a placeholder reaching `call` comes back as an Array)


def takes_numbers(trace):
    """Whether `trace`'s outputs reach Arrays, so a number returned untouched may be its traced value: vmap and AD
    (class attribute True); a staging trace (None) as its parent, unless it is a guarded jit's (Shadow decides)."""
    while True:
        says = getattr(trace, "returns_numbers", False)
        if says is not None:
            return says
        if trace.shadow is not None:
            return False
        trace = trace.parent


def placeholder(tracer, frame):
    """float() of a 0-d real `tracer` called from `frame`: a placeholder float standing for it where it is returned
    untouched under a transform that takes numbers, else None (the caller converts as before)."""
    if not _stack() or not takes_numbers(tracer._trace) or not returned_directly(frame, _stops()):
        return None
    if tracer.aval.dtype.kind != "f":   # (a Python float of an integer or bool: its value as a float)
        from .core import get_aval
        from .primitives.elementwise import convert_element_type
        tracer = convert_element_type(tracer, get_aval(0.0).dtype, True)
    return record(float("nan"), tracer, True)   # (a fresh object; its value is never read: only returned)
