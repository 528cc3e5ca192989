"""The downstream-library harness: one `Case` per library call, checked four ways.

A case is a function of arrays written once against the array API (scipy / scikit-learn /
array-api-extra pick the namespace from their inputs). Its oracle is the *same call on NumPy
arrays*, so nothing here compares us with our own code:

- eager:  fn(our arrays) == fn(NumPy arrays); outputs that are arrays must be our `Array`.
- jit:    jit(fn)(our arrays) == fn(NumPy arrays), twice with different data of the same shape.
- vmap:   vmap(fn)(batched arrays) == stack of fn(NumPy slice) over the leading batch axis.
- grad:   grad of sum(fn(...) * w) == central differences of the NumPy call (tests/finite_diff.py).

Each transform of a case is one of OK (must match), LIB (the library's own code makes the
transform impossible, e.g. `bool(xp.any(...))` input validation: our error must be raised and be the
clear, typed ConcretizationTypeError -- `why` names the library line), or NA (not meaningful:
integer/boolean outputs, non-differentiable, Python-scalar results).
"""
from __future__ import annotations

import traceback
from dataclasses import dataclass, field

import numpy as np

import array_namespace as xp
from finite_diff import central_diff
from transforms import ConcretizationTypeError, grad, jit, vmap

OK, LIB, NA = "ok", "lib", "na"
TRANSFORMS = ("eager", "jit", "vmap", "grad")


@dataclass
class Case:
    name: str
    fn: object                      # array-API function of arrays -> array / scalar / tuple of them
    inputs: object                  # rng -> tuple of float64/int NumPy arrays
    jit: str = OK
    vmap: str = OK
    grad: str = OK
    why: object = ""                # for LIB: "path/to/lib_file.py:line what it does" (or {transform: that})
    rtol: float = 1e-10
    atol: float = 1e-12
    argnums: tuple = (0,)           # which inputs grad differentiates
    in_axes: object = 0             # vmap: which inputs carry the batch axis (tuple of 0/None or 0)
    batch: int = 3
    grad_rtol: float = 1e-5
    grad_atol: float = 1e-6
    scalar_ok: bool = False         # the library returns a Python scalar on purpose (sklearn metrics)
    tags: tuple = field(default_factory=tuple)

    def mode(self, transform):
        return OK if transform == "eager" else getattr(self, transform)


def _leaves(out):
    if isinstance(out, (tuple, list)):
        return [leaf for o in out for leaf in _leaves(o)]
    if hasattr(out, "_asdict"):            # namedtuple-like result objects
        return _leaves(tuple(out))
    if hasattr(out, "statistic") and hasattr(out, "pvalue"):
        return _leaves((out.statistic, out.pvalue))
    return [out]


def _np(leaf):
    return np.asarray(leaf)


def _to_xp(vals):
    return tuple(xp.asarray(v) for v in vals)


def _copy(vals):
    """Fresh NumPy inputs: library code may update its arguments in place (xpx.at with copy=None)."""
    return tuple(np.array(v, copy=True) for v in vals)


def assert_close(got, want, case, what):
    g, w = _leaves(got), _leaves(want)
    assert len(g) == len(w), f"{case.name} [{what}]: {len(g)} outputs, NumPy gives {len(w)}"
    for i, (a, b) in enumerate(zip(g, w)):
        b = np.asarray(b)
        a = _np(a)
        assert a.shape == b.shape, f"{case.name} [{what}] output {i}: shape {a.shape} != NumPy's {b.shape}"
        if b.dtype.kind in "biu":
            np.testing.assert_array_equal(a, b, err_msg=f"{case.name} [{what}] output {i}")
        else:
            np.testing.assert_allclose(a, b, rtol=case.rtol, atol=case.atol, equal_nan=True,
                                       err_msg=f"{case.name} [{what}] output {i}")


def check_eager(case, rng):
    vals = case.inputs(rng)
    got = case.fn(*_to_xp(vals))
    want = case.fn(*_copy(vals))
    for a, b in zip(_leaves(got), _leaves(want)):
        if isinstance(b, np.ndarray) and b.ndim > 0:
            assert isinstance(a, xp.Array), f"{case.name}: returned {type(a).__name__}, not our Array"
            assert a.dtype == xp.asarray(b).dtype, f"{case.name}: dtype {a.dtype}, NumPy's call gives {b.dtype}"
        elif isinstance(b, np.ndarray) and not case.scalar_ok:
            assert isinstance(a, xp.Array), f"{case.name}: 0-d result is {type(a).__name__}, not our Array"
    assert_close(got, want, case, "eager")


def check_jit(case, rng):
    """Two calls of one jitted function on different data of the same shape: the second must match NumPy
    on the second data (a guard assumed on the first call is checked, never a stale value returned)."""
    f = jit(case.fn)
    for what in ("jit", "jit, second data"):
        vals = case.inputs(rng)
        assert_close(f(*_to_xp(vals)), case.fn(*_copy(vals)), case, what)


def _axes(case, n):
    return case.in_axes if isinstance(case.in_axes, tuple) else (case.in_axes,) * n


def batched_inputs(case, rng):
    """(per-example NumPy inputs, batched NumPy inputs); unbatched inputs are shared."""
    first = case.inputs(rng)
    axes = _axes(case, len(first))
    examples = [first] + [case.inputs(rng) for _ in range(case.batch - 1)]
    examples = [tuple(ex[i] if a == 0 else first[i] for i, a in enumerate(axes)) for ex in examples]
    stacked = tuple(np.stack([ex[i] for ex in examples]) if a == 0 else first[i] for i, a in enumerate(axes))
    return examples, stacked, axes


def check_vmap(case, rng):
    examples, stacked, axes = batched_inputs(case, rng)
    got = vmap(case.fn, in_axes=axes)(*_to_xp(stacked))
    per = [_leaves(case.fn(*_copy(ex))) for ex in examples]
    want = [np.stack([np.asarray(p[i]) for p in per]) for i in range(len(per[0]))]
    assert_close(got, want, case, "vmap")


def check_grad(case, rng):
    vals = case.inputs(rng)
    wrng = np.random.default_rng(7)
    out_np = case.fn(*_copy(vals))
    ws = [wrng.standard_normal(np.shape(leaf)) for leaf in _leaves(out_np)]

    def loss(*args):
        outs = _leaves(case.fn(*args))
        return sum(xp.sum(o * xp.asarray(w)) for o, w in zip(outs, ws))

    def loss_np(*args):
        outs = _leaves(case.fn(*_copy(args)))
        return float(sum(np.sum(np.asarray(o) * w) for o, w in zip(outs, ws)))

    if type(out_np) is float:   # a metric returning a Python float: differentiated as it is, as a user would
        got = [g * ws[0] for g in grad(case.fn, argnums=case.argnums)(*_to_xp(vals))]   # (loss = w * fn)
    else:
        got = grad(loss, argnums=case.argnums)(*_to_xp(vals))
    for g, i in zip(got, case.argnums):
        want = central_diff(lambda v, i=i: loss_np(*vals[:i], v, *vals[i + 1:]), vals[i])
        np.testing.assert_allclose(np.asarray(g), want, rtol=case.grad_rtol, atol=case.grad_atol,
                                   err_msg=f"{case.name} [grad] argument {i}")


CHECKS = {"eager": check_eager, "jit": check_jit, "vmap": check_vmap, "grad": check_grad}


def _ours(e):
    """Our ConcretizationTypeError, raised or as the cause: NumPy re-raises the TypeError of float() in
    `ndarray[i] = traced` as ValueError('setting an array element with a sequence') from it (as with JAX)."""
    while e is not None and not isinstance(e, ConcretizationTypeError):
        e = e.__cause__ if isinstance(e, ValueError) else None
    return e


def check_library_limited(case, transform, rng):
    """The library's own code makes `transform` impossible: our error must be the clear, typed one."""
    why = case.why[transform] if isinstance(case.why, dict) else case.why
    where = why.split(":")[0]
    assert where.endswith(".py"), f"{case.name}: `why` must start with the library's file:line, got {why!r}"
    try:
        CHECKS[transform](case, rng)
    except Exception as raised:
        e = _ours(raised)
        if e is None:
            raise
        text = str(e)
        assert text and len(text) > 40, f"{case.name} [{transform}]: unhelpful error text {text!r}"
        files = [f.filename.replace("\\", "/") for x in (raised, e) for f in traceback.extract_tb(x.__traceback__)]
        assert any(f.endswith(where) for f in files), (
            f"{case.name} [{transform}]: raised {type(e).__name__} but not from {where} ({why}); "
            f"it came from {files[-1]}: {text[:300]}")
        return e
    raise AssertionError(f"{case.name} [{transform}] is declared library-limited ({why}) but ran: "
                         "promote it to OK")


def run(case, transform, seed=0):
    rng = np.random.default_rng(seed)
    if case.mode(transform) == LIB:
        return check_library_limited(case, transform, rng)
    return CHECKS[transform](case, rng)
