"""vmap's whole-function fallback: f on each batch element in turn, the results stacked.

Where a vmapped function converts a batched value to the host (np.asarray / __array__, DLPack, a NumPy ufunc:
scikit-learn's `_convert_to_numpy`, a median taken in NumPy), no one host value exists for the batch; where a
value-dependent size (unique_values, x[mask], nonzero) differs between batch elements, no one program shape
does. vmap then abandons its trace (batching.LoopInstead) and computes vmap(f)(xs) as the loop does: f on each
slice along in_axes (None axes passed whole), each output leaf stacked and placed at out_axes. It is the same
function whatever the elements hold, so it is exact where the batched trace cannot be; the price is a Python
loop, said once per library line by a RuntimeWarning (the precedent: functorch's for-loop fallback). Slicing
and stacking are primitives, so grad, jit and an outer vmap see through the loop: under an outer vmap a
conversion of a value batched by both reaches the outer one, which loops; under a jit that knows its values the
conversion runs that call eagerly (jit_guards.py), and the eager vmap loops. Python decisions (bool/int/float of
a value the elements disagree on) keep BatchDisagreementError: that is the issue's contract for them, and a
loop would hide the disagreement the message names. Abstract traces (make_jaxpr, .lower(), a strict jit) have no
values: TracerArrayConversionError as before. A vmap with axis_name does not loop (its collectives need the
batch).
"""
from __future__ import annotations

import warnings

import numpy as np

from .api_util import Store, flatten_fun
from .backend import backend
from .batching import _bits
from .core import Tracer, get_aval, outside_frame
from .primitives import structural as S
from .pytree import broadcast_prefix, tree_unflatten

_warned = set()   # (file, line) of the library lines whose conversion has been warned about


def run_loop(fun, tree, raw, dims, n, out_axes, store, err, name):
    """(outputs, their batch dims) of `fun` run on each of the n batch elements of the raw argument leaves
    (`dims`: their batch axes), as vmap_flat gives them for run_flat's flat function; `store` receives the output
    tree and the written-into argument leaves. `err`: the error that made the batched trace stop (re-raised for
    an empty batch, the cause of a stacking error)."""
    if n == 0:
        raise err
    _warn(err, name, n)
    per, first = [], None
    for i in range(n):
        st = Store()
        try:
            per.append(flatten_fun(fun, tree, st, "vmap output", writeback=True)(
                *[v if d is None else _element(v, d, i) for v, d in zip(raw, dims)]))
        except Exception as e:   # (the loop's own outcome: this element's error, as a loop raises it)
            e.add_note(f"(raised by batch element {i} of {n}, which vmap({name}) ran alone: {_because(err)})")
            raise
        if first is None:
            first = st
        elif st.val != first.val or st.mutated != first.mutated:
            raise ValueError(f"vmap({name}) ran the function on each batch element in turn ({_because(err)}); "
                             f"element {i} returns {st.val} and writes into argument leaves {list(st.mutated)}, "
                             f"element 0 {first.val} and {list(first.mutated)}: the results cannot be stacked") from err
    store.val, store.mutated = first.val, first.mutated
    oa = broadcast_prefix(out_axes, tree_unflatten(first.val, [0] * first.val.num_leaves), "vmap out_axes")
    unmapped = [a is None for a in oa] + [dims[i] is None for i in first.mutated]
    outs, odims = [], []
    for k, vals in enumerate(zip(*per)):
        if unmapped[k] and _same(vals):   # (out_axes None, or written into an unmapped argument: one value)
            outs.append(vals[0])
            odims.append(None)
        else:
            outs.append(_stack(vals, k, err, name))
            odims.append(0)
    return outs, odims


def _element(v, d, i):
    """Element i of raw v along axis d, that axis dropped (a slice: differentiable, batchable)."""
    shape = S.shape_of(v)
    start, limit = [0] * len(shape), list(shape)
    start[d], limit[d] = i, i + 1
    return S.reshape(S.slice_(v, tuple(start), tuple(limit)), shape[:d] + shape[d + 1:])


def _same(vals):
    """Whether every element gave the same value: one object, or concrete with equal type and bits."""
    if all(v is vals[0] for v in vals):
        return True
    if any(isinstance(v, Tracer) for v in vals) or len({get_aval(v) for v in vals}) > 1:
        return False
    host = [_bits(np.asarray(backend.to_numpy(v))) for v in vals]
    return all(np.array_equal(h, host[0]) for h in host)


def _stack(vals, k, err, name):
    avals = [get_aval(v) for v in vals]
    bad = [i for i, a in enumerate(avals) if (a.shape, a.dtype) != (avals[0].shape, avals[0].dtype)]
    if bad:
        show = ", ".join(f"element {i} gives {avals[i].str_short()}" for i in bad[:4])
        what = (f"vmap({name}) ran the function on each batch element in turn ({_because(err)}); its output leaf {k} "
                f"cannot be stacked: element 0 gives {avals[0].str_short()}, {show}")
        if getattr(err, "bad", None) is not None:   # sizes that differ, and so do the outputs: the error naming them
            err.add_note(what)
            raise err
        raise ValueError(what) from err
    shape = (1,) + tuple(avals[0].shape)
    return S.concatenate([S.reshape(v, shape) for v in vals], 0)


def _because(err):
    return (f"a value-dependent size differs between batch elements, {err.why}" if getattr(err, "bad", None) is not None
            else f"a batched value is converted to the host, {err.why}")


def _warn(err, name, n):
    """Once per library line: vmap of the function runs as a Python loop there."""
    f = outside_frame(err._frame)
    key = (f.f_code.co_filename, f.f_lineno) if f is not None else ("<unknown>", 0)
    if key in _warned:
        return
    _warned.add(key)
    warnings.warn_explicit(
        f"vmap({name}): {_because(err)}, at {key[0]}:{key[1]}, so vmap runs the function on each of the {n} "
        "batch elements in turn and stacks the results: the loop's result, at a Python loop's speed (warned once "
        "per line). For a batched program use the namespace's functions there instead of NumPy, or fixed-size "
        "forms (xp.where, a sum over a mask) in place of value-dependent sizes.", RuntimeWarning, key[0], key[1])
