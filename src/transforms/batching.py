"""Vectorisation: `vmap` runs a function on a batch by carrying (value, batch dim) pairs.

A `BatchTracer` holds a value with one extra axis (`bdim`); its aval is the per-example
aval. `batch_rules` say where each primitive's batch axis goes. Unbatched values are
plain parent values, so a function that ignores the batch costs nothing extra.

A Python value asked of a batched value (bool() of an `if`, int(), float(), .item(), a value-dependent size)
is the value every batch element shares, where the batched value is concrete (eager vmap, or inside a jit
that knows its values and guards it): library checks such as scikit-learn's finiteness test take the one
path all elements take. Elements that disagree raise BatchDisagreementError naming them. A float() the
function returns untouched (`return float(score)`) is no Python value but vmap's output: each element's own
(returned.py). A conversion of a concrete batched value to the host (np.asarray, DLPack, a NumPy ufunc), or a
value-dependent size the elements disagree on, has no one answer: vmap runs the function on each element in
turn and stacks the results (vmap_loop.py).

`vmap(..., axis_name=)` names the batch axis: collectives (transforms/collectives.py) naming it
run their `axis_rules` here (the single-device reference semantics of pmap), and the axis is
bound in the axis environment (`bound_axes`, `axis_size_of`) while the function runs. Batching
rules that batch a sub-jaxpr (`vmap_flat` inside a rule) inherit the name of the trace running them.
"""
from __future__ import annotations

import functools
import sys
import threading

import numpy as np

from .api_util import Store, alias_pattern, box, run_flat, split_mutated, to_raw, write_back
from .backend import backend
from .core import (ConcretizationTypeError, Trace, Tracer, TracerArrayConversionError, UnexpectedTracerError,
                   current_trace, get_aval, outside_frame, set_trace)
from .primitives import structural as S
from .pytree import broadcast_prefix, tree_flatten, tree_unflatten
from .rules import batch_gaps, batch_rules
from .traceback_util import api_boundary


class BatchTracer(Tracer):
    __slots__ = ("val", "bdim", "_aval")

    def __init__(self, trace, val, bdim):
        self._trace, self.val, self.bdim, self._aval = trace, val, bdim, None

    @property
    def aval(self):
        a = self._aval
        if a is None:
            va = get_aval(self.val)
            shape = va.shape[:self.bdim] + va.shape[self.bdim + 1:]
            a = self._aval = va.update(shape=shape)
        return a

    def concrete(self, why, guard=False):
        if not guard:
            raise ConcretizationTypeError(self, why)
        return self._common(why, ConcretizationTypeError)

    def host_value(self, why, guard=False):
        if guard:
            return self._common(why, TracerArrayConversionError)
        v = self.val
        if isinstance(v, Tracer):   # batched over an outer vmap too, or staged: that one decides (an outer vmap
            try:                    # loops, a jit that knows its values runs eagerly); else nothing has a value
                v.host_value(why)
            except TracerArrayConversionError as e:   # (its reason too: abstract, or a tangent it carries)
                raise TracerArrayConversionError(self, why) from e
        err = TracerArrayConversionError(self, why)
        loop_instead(err)   # (the concrete batch: vmap runs the function element by element, vmap_loop.py)
        raise err

    def _common(self, why, err):
        """The value every batch element has, for a Python decision or number (bool/int/index/float/.item()):
        vmap runs the function once for the whole batch, so it may take the one path all elements take.
        The batched value must be concrete (eager vmap, or a jit that knows its values, which then guards
        all of it); elements that disagree raise BatchDisagreementError naming them."""
        asker = outside_frame(sys._getframe(1))
        if asker is not None and asker.f_code.co_name in _LAZY_PROBES:
            raise err(self, why)   # (the honest answer to "are the values known?": each element has its own)
        v = self.val
        if isinstance(v, Tracer):
            try:
                v = v.concrete(why, True)
            except BatchDisagreementError:
                raise
            except ConcretizationTypeError:
                raise err(self, why) from None
            if isinstance(v, Tracer):
                raise err(self, why)
        v = np.ascontiguousarray(np.moveaxis(np.asarray(backend.to_numpy(v) if hasattr(v, "aval") else v),
                                             self.bdim, 0))
        if not len(v):
            raise err(self, why + " (of an empty batch: no element gives a value)")
        key = _bits(v)
        bad = [i for i in range(1, len(v)) if not np.array_equal(key[i], key[0])]
        if bad:
            raise BatchDisagreementError(self, why, v, bad)
        return v[0]


# Probes that call bool() to ask whether an array's values are known (array_api_compat's is_lazy_array, which
# SciPy and scikit-learn use to choose a data-independent path). Under vmap the path every element can take
# is the data-independent one, so they get the error that says "lazy", even where element 0's value is known.
_LAZY_PROBES = frozenset({"is_lazy_array"})


def _bits(v):
    """v's elements as comparable bits: equal exactly when Python would see the same value (-0.0 is not
    0.0; every NaN is one NaN)."""
    if v.dtype.kind == "c":
        v = v.view(np.dtype(f"f{v.dtype.itemsize // 2}"))
    if v.dtype.kind == "f":
        v = np.where(np.isnan(v), np.nan, v).astype(v.dtype)
        return v.view(np.dtype(f"u{v.dtype.itemsize}"))
    return v


class BatchDisagreementError(TracerArrayConversionError, ValueError):
    """Under vmap, a Python value (bool/int/float, an index, a value-dependent size) was asked of a batched
    value whose batch elements give different values: vmap runs the function once for all of them, so
    it cannot take each element's own path. A ConcretizationTypeError and TracerArrayConversionError
    (what vmap raised before it took the common value) and a ValueError (the values are the problem).
    The message names the disagreeing elements, their values and the line that asked.

    Parameters: tracer (BatchTracer): the batched value. why (str): what asked. values (ndarray): the
        elements' values, batch axis first. bad (list of int): the batch indices that differ from element 0.
    Returns: the exception.
    Raises: nothing.

    >>> try:
    ...     vmap(lambda x: x if x > 0 else -x)(xp.asarray([1.0, -1.0]))
    ... except BatchDisagreementError as e:
    ...     print(e.bad)
    [1]
    """

    def __init__(self, tracer, why, values, bad):
        super().__init__(tracer, why)
        self.values, self.bad = values, bad

    def __str__(self):
        v, bad = self.values, self.bad
        show = lambda x: repr(x.item()) if x.size == 1 else np.array2string(x, threshold=8)  # noqa: E731
        listed = ", ".join(f"element {i} gives {show(v[i])}" for i in bad[:4]) + (
            f" (and {len(bad) - 4} more elements)" if len(bad) > 4 else "")
        return (f"{self.why or 'a Python value'} under vmap: the batch elements disagree -- element 0 gives "
                f"{show(v[0])}, {listed} (disagreeing batch indices: {bad[:16]}).{self._where()} vmap runs "
                "the function once for the whole batch, so a Python value (an `if`, int(), float(), a "
                "value-dependent size) must be the same for every element. Use xp.where(cond, a, b) or "
                "transforms.cond for a per-element choice, put NumPy-only code in transforms.pure_callback, or call "
                "the function in a Python loop over the batch.")


# ------------------------------------------------------------------ named axes (axis env)
axis_rules: dict = {}   # collective prim -> rule(axis_size, axis_name, vals, dims, **params) -> (out, dim)


class _AxisState(threading.local):
    def __init__(self):
        self.env = []          # [(name, size)], innermost last: the axes bound while a function runs
        self.rule_axis = None  # the axis name of the BatchTrace whose rule is running


_axes = _AxisState()


def bound_axes():
    """The named axes bound here (vmap(axis_name=), pmap), outermost first: [(name, size)]."""
    return list(_axes.env)


def axis_size_of(name, what="collective"):
    """The size of the innermost bound axis `name`; NameError naming the bound ones if unbound."""
    for n, size in reversed(_axes.env):
        if n == name:
            return size
    bound = [n for n, _ in _axes.env]
    raise NameError(f"{what}: unbound axis name {name!r}; the axes bound here are {bound} (bind a name with "
                    "vmap(..., axis_name=...) or pmap(..., axis_name=...))")


class bind_axis:
    """Context manager binding a named axis of a given size while a mapped function runs."""
    __slots__ = ("name", "size")

    def __init__(self, name, size):
        self.name, self.size = name, size

    def __enter__(self):
        if self.name is not None:
            _axes.env.append((self.name, self.size))

    def __exit__(self, *exc):
        if self.name is not None:
            _axes.env.pop()


def _jaxprs_in(v):
    if hasattr(v, "eqns"):
        yield v
    elif hasattr(v, "jaxpr") and hasattr(v.jaxpr, "eqns"):
        yield v.jaxpr
    elif isinstance(v, (tuple, list)):
        for x in v:
            yield from _jaxprs_in(x)


@functools.lru_cache(maxsize=1024)
def _jaxpr_uses_axis(jaxpr, name):
    for eqn in jaxpr.eqns:
        if (eqn.prim in axis_rules and name in eqn.params["axes"]) or params_use_axis(eqn.params, name):
            return True
    return False


def params_use_axis(params, name):
    """Whether a (higher-order) primitive's sub-jaxprs run a collective over axis `name`."""
    for v in params.values():
        for j in _jaxprs_in(v):
            if _jaxpr_uses_axis(j, name):
                return True
    return False


class LoopInstead(Exception):
    """vmap_flat(loops=True): the function converted a batched value to the host, or a value-dependent size
    differs between batch elements (`err`, the error that said so): vmap runs it element by element."""

    def __init__(self, err):
        super().__init__(err)
        self.err = err


def loop_instead(err):
    """Mark the vmap whose batched value `err` (a ConcretizationTypeError) is about to run its function element
    by element (vmap_loop.py), where it can: a public vmap without axis_name; other traces are unchanged. The mark
    holds even if library code catches `err` and goes on (as jit's Shadow.host)."""
    t = err.tracer._trace
    if type(t) is BatchTrace and t.loop is not None:
        t.loop.append(err)


class BatchTrace(Trace):
    __slots__ = ("axis_size", "alive", "axis_name", "loop")
    conversion_loses = "its batch axis (each batch element has its own value)"
    returns_numbers = True   # (a float() returned untouched is an output: returned.py)

    def __init__(self, parent, axis_size, axis_name=None):
        self.parent, self.axis_size, self.alive, self.axis_name = parent, axis_size, True, axis_name
        self.loop = None   # (vmap_flat(loops=True): [], then the errors that make it run element by element)

    def kind_name(self):
        return "vmap (each batch element may take a different value)"

    def process(self, prim, args, params):
        vals, dims, own = [], [], False
        for a in args:
            if type(a) is BatchTracer and a._trace is self:
                vals.append(a.val)
                dims.append(a.bdim)
                own = True
            else:
                if type(a) is BatchTracer and not a._trace.alive:
                    raise UnexpectedTracerError("a vmap tracer was used after its vmap finished")
                vals.append(a)
                dims.append(None)
        name = self.axis_name
        if name is not None and prim in axis_rules and name in params["axes"]:
            rule = functools.partial(axis_rules[prim], axis_name=name)   # this trace binds the collective's axis
        else:
            if not own and (name is None or not params_use_axis(params, name)):
                return self.parent.process(prim, args, params)
            rule = batch_rules.get(prim)
            if rule is None:
                why = batch_gaps.get(prim, "no batching rule is defined")
                raise NotImplementedError(f"cannot vmap '{prim}': {why}")
        st, prev = _axes, _axes.rule_axis
        st.rule_axis = name
        try:
            with set_trace(self.parent):
                out, d = rule(self.axis_size, vals, dims, **params)
        finally:
            st.rule_axis = prev
        if prim.multiple_results:
            return [o if od is None else BatchTracer(self, o, od) for o, od in zip(out, d)]
        return out if d is None else BatchTracer(self, out, d)


def move_to(x, dim, to, size):
    """Place the batch axis of x (None = unbatched) at `to`, broadcasting if needed."""
    if dim is None:
        shape = list(get_aval(x).shape)
        shape.insert(to, size)
        dims = [i for i in range(len(shape)) if i != to]
        return S.broadcast_in_dim(x, tuple(shape), tuple(dims))
    return S.moveaxis(x, dim, to)


_INHERIT = object()


def rule_axis_name():
    """The axis name of the BatchTrace whose batching rule is running (None: unnamed or none) -- what a
    cache of batched sub-jaxprs must key on, since the name changes what collectives in them become."""
    return _axes.rule_axis


def mapped_axis_size(raw, dims, axis_size, who, what="size"):
    """The size of a mapped axis from the arguments mapped along it (`dims[i]` is the axis of `raw[i]`, or
    None), checked for agreement and against an explicit `axis_size`; vmap's and pmap's one rule."""
    sizes = {}
    for i, (v, d) in enumerate(zip(raw, dims)):
        if d is not None:
            sizes.setdefault(get_aval(v).shape[d], []).append(i)
    if len(sizes) > 1:
        desc = "; ".join(f"size {k} for argument leaves {ix}" for k, ix in sizes.items())
        raise ValueError(f"{who} got inconsistent sizes for the mapped axis: {desc}")
    if sizes:
        n = next(iter(sizes))
        if axis_size is not None and axis_size != n:
            raise ValueError(f"{who} axis_size={axis_size} but the mapped arguments have {what} {n}")
        return n
    if axis_size is None:
        raise ValueError(f"{who} needs at least one mapped argument (an in_axes entry that is not None) or an "
                         "explicit axis_size")
    return axis_size


def vmap_flat(f, vals, dims, axis_size, axis_name=_INHERIT, loops=False):
    """f: raw -> list of raw. Returns (outputs, their batch dims).

    axis_name: the batch axis's name; by default that of the BatchTrace whose batching rule calls
    this (a rule batching a sub-jaxpr batches it over the same, possibly named, axis).
    loops: where f converts a concrete batched value to the host, or a value-dependent size differs between
    batch elements, raise LoopInstead (the public vmap then runs f element by element: vmap_loop.py)."""
    if axis_name is _INHERIT:
        axis_name = _axes.rule_axis
    trace = BatchTrace(current_trace(), axis_size, axis_name)
    if loops:
        trace.loop = []
    ins = [v if d is None else BatchTracer(trace, v, d) for v, d in zip(vals, dims)]
    st, prev = _axes, _axes.rule_axis
    st.rule_axis = None
    try:
        with set_trace(trace), bind_axis(axis_name, axis_size):
            outs = f(*ins)
    except Exception:
        if not trace.loop:
            raise
    finally:
        st.rule_axis = prev
    trace.alive = False
    if trace.loop:
        raise LoopInstead(trace.loop[0])
    res = []
    for o in outs:
        if type(o) is BatchTracer and o._trace is trace:
            res.append((o.val, o.bdim))
        else:
            res.append((o, None))
    return [r for r, _ in res], [d for _, d in res]


def _norm_axis(ax, ndim, what):
    if ax is None:
        return None
    if not isinstance(ax, int):
        raise TypeError(f"vmap {what} entries must be int or None, got {ax!r}")
    if not -ndim <= ax < ndim:
        raise ValueError(f"vmap {what}={ax} is out of range for an argument with {ndim} dimensions")
    return ax % ndim


def _written_back(val, d, in_dim, n, leaf):
    """A written-into argument's final batched value, with its batch axis where the caller's was."""
    if in_dim is None:
        if d is not None:
            raise ValueError(f"vmap: the function writes a value that varies over the batch into argument leaf "
                             f"{leaf}, which is not mapped (in_axes None); map that argument too, or write into "
                             "a copy (y = xp.asarray(x, copy=True))")
        return val
    nd = len(get_aval(val).shape) + (d is None)
    return move_to(val, d, in_dim, n) if nd else val


@api_boundary
def vmap(fun, in_axes=0, out_axes=0, axis_size=None, axis_name=None):
    """Vectorise fun over a leading (or in_axes-given) axis of its arguments.

    axis_name (hashable): names the mapped axis, so collectives (psum, all_gather, ...) inside `fun`
    can compute across it -- the single-device reference semantics of pmap.

    Parameters: fun (callable): a function of arrays. in_axes (int, None or pytree): the mapped axis
        of each argument (None: not mapped). out_axes (int, None or pytree): where the mapped axis goes in
        the outputs. axis_size (int): the size when no argument is mapped. axis_name (hashable): a name
        for collectives (psum, ...) inside fun.
    Returns: callable: the vectorised function.
    Raises: ValueError: when called, if mapped sizes disagree or an axis is out of range; TypeError: for
        an in_axes that does not match the arguments' structure.

    >>> vmap(lambda r: xp.sum(r))(xp.reshape(xp.arange(6.0), (2, 3)))
    Array([ 3., 12.])
    """
    if not callable(fun):
        raise TypeError(f"vmap expects a callable, got {type(fun).__name__}")
    if axis_name is not None:
        try:
            hash(axis_name)
        except TypeError:
            raise TypeError(f"vmap axis_name must be hashable, got {type(axis_name).__name__}") from None

    @api_boundary
    def vmapped(*args):
        leaves, tree = tree_flatten(args)
        ia = tuple(in_axes) if isinstance(in_axes, list) else in_axes
        if isinstance(ia, tuple) and len(ia) != len(args):
            raise ValueError(f"vmap in_axes has {len(ia)} entries but the function was called with "
                             f"{len(args)} positional arguments")
        axes = broadcast_prefix(ia, args, "vmap in_axes")
        raw = [to_raw(x, "vmap argument") for x in leaves]
        dims = [_norm_axis(a, len(get_aval(v).shape), "in_axes") for v, a in zip(raw, axes)]
        n = mapped_axis_size(raw, dims, axis_size, "vmap", "size")
        store = Store()
        # (views among the arguments are not shared inside: a view's chain is on the whole batch, the
        # function sees one example; a write into one that overlaps another raises in write_back)
        try:
            outs, odims = run_flat(lambda flat: vmap_flat(flat, raw, dims, n, axis_name, loops=axis_name is None),
                                   fun, tree, store, alias_pattern(leaves, views=False))
        except LoopInstead as e:   # (a host conversion or sizes that differ: element by element, as a loop)
            from .vmap_loop import run_loop
            outs, odims = run_loop(fun, tree, raw, dims, n, out_axes, store, e.err,
                                   getattr(fun, "__name__", "fun"))
        outs, finals = split_mutated(outs, store)
        odims, fdims = odims[:len(outs)], odims[len(outs):]
        if finals:
            write_back(leaves, store.mutated, [_written_back(o, d, dims[i], n, i) for o, d, i in
                                               zip(finals, fdims, store.mutated)], "vmap", derived=False)
        out_tree = store.val
        out_tree_obj = tree_unflatten(out_tree, [0] * out_tree.num_leaves)
        oa = broadcast_prefix(out_axes, out_tree_obj, "vmap out_axes")
        res = []
        for o, d, a in zip(outs, odims, oa):
            if a is None:
                if d is not None:
                    raise ValueError("vmap out_axes=None but the output varies over the batch")
                res.append(box(o))
                continue
            nd = len(get_aval(o).shape) + (d is None)
            res.append(box(move_to(o, d, _norm_axis(a, nd, "out_axes"), n)))
        return tree_unflatten(out_tree, res)
    vmapped.__name__ = f"vmap_{getattr(fun, '__name__', 'fun')}"
    return vmapped
