"""Functions whose output *shape* depends on input *values*: nonzero, unique_*, boolean-mask reads, repeat.

Eagerly (and under grad, whose primals are concrete) they read the input on the host. Traced, they compute the
size inside the program (a count of True entries, of unique values, a sum of repeats) and ask only for that int
(`sized`): a jit called with concrete values answers with this call's size and guards it alone, so new data of
the same size runs the same compiled variant (transforms/jit_guards.py); vmap answers with the size all batch
elements share (else BatchDisagreementError naming them). The values are then computed at that static size from
the traced input (`nonzero_sized`: running counts and a histogram; `unique_sized`: a stable sort). Abstract
(make_jaxpr, jit(..., guards=False)) they raise `DataDependentShapeError`.
"""
from __future__ import annotations

import numpy as np

from transforms.backend import backend
from transforms.batching import BatchDisagreementError, BatchTrace, loop_instead
from transforms.core import EVAL, ConcretizationTypeError, Tracer, bind, current_trace
from transforms.primitives import elementwise as P
from transforms.primitives import indexing as I
from transforms.primitives import reductions as R
from transforms.primitives import sorting as T
from transforms.primitives import structural as S

_IDX = np.dtype(np.int64)


class DataDependentShapeError(ConcretizationTypeError):
    """The output shape of `fname` depends on the values of an abstract (traced) array."""

    def __init__(self, tracer, fname, hint):
        super().__init__(tracer, fname)
        self.fname, self.hint = fname, hint

    def __str__(self):
        t = self.tracer
        return (f"{self.fname}: the shape of the result depends on the values of the input, but here the input "
                f"is abstract ({t.aval.str_short()} traced by {t._trace.kind_name()}), so its size cannot be "
                f"known.{self._where()} {self.hint}")


DEFAULT_HINT = ("Call it outside jit/vmap (eagerly), or restructure with a fixed-size formulation such as "
                "xp.where(mask, x, fill) or a sum over a mask.")


def host_value(v, guard=False, why=""):
    """The NumPy value of a raw value, or None if it is abstract (traced). With `guard`, a jit called with
    concrete values answers with this call's value and guards all of it (transforms/jit_guards.py), and
    vmap answers with the value all batch elements share (else BatchDisagreementError naming them)."""
    if isinstance(v, Tracer):
        try:
            v = v.concrete(why, guard)
        except BatchDisagreementError:
            raise
        except ConcretizationTypeError:
            return None
        if isinstance(v, Tracer):
            return None
    if hasattr(v, "aval") and not isinstance(v, np.ndarray):
        return np.asarray(backend.to_numpy(v))
    return np.asarray(v)


def compared(hv):
    """A host value as comparisons read it: each subnormal part a zero (README: subnormals). For the NumPy calls
    that compare outside the kernels' mode (np.unique, np.nonzero), so that eager agrees with the traced forms,
    compared in XLA: unique_values([0.0, 1e-310]) had two values eagerly, one under jit."""
    if hv.dtype.kind not in "fc":
        return hv
    parts = lambda a: (a.real, a.imag) if a.dtype.kind == "c" else (a,)  # noqa: E731
    small = [np.abs(p) < np.finfo(hv.dtype).tiny for p in parts(hv)]
    if not any(m.any() for m in small):
        return hv
    hv = hv.copy()
    for p, m in zip(parts(hv), small):
        p[m] = 0
    return hv


def _size_value(v, fname):
    """host_value(v, True, fname) for a value that decides a size: where the batch elements of a vmap disagree,
    that vmap runs the function element by element (transforms/vmap_loop.py: a size is no Python decision of the
    caller's, and each element's result is well defined) -- the error stands where it cannot."""
    try:
        return host_value(v, True, fname)
    except BatchDisagreementError as e:
        loop_instead(e)
        raise


def check_bounds(v, n, fname, axis):
    """Raise eager's IndexError where a traced integer index array v into axis `axis` (of length n) holds an index
    outside [-n, n) (named; "an index" where the batch elements of a vmap hold different ones). A jit called with
    concrete values asks this call's answer and guards it (a later call with an index out of range raises as
    eager does, never a clamped read); vmap asks its elements; abstract (make_jaxpr, strict jit) no check is
    staged and XLA's gather clamps, as JAX's does."""
    t = current_trace()   # (asked only where an answer can come: else no check is staged)
    while t is not EVAL:
        if not (getattr(t, "keeps_values_concrete", False) or type(t) is BatchTrace
                or getattr(t, "shadow", None) is not None):
            return
        t = t.parent
    # compared in v's own dtype, each bound where that dtype holds it (-n fits no unsigned dtype and n > 127 no
    # int8: a bound it cannot hold, no index passes; converted, a uint64 index past 2**63 would read as negative)
    dt = S.dtype_of(v)
    info = np.iinfo(dt)
    below, above = info.min <= -n, n <= info.max
    tests = ([bind(P.lt_p, v, P.convert_element_type(-n, dt))] if below else []) + (
        [bind(P.ge_p, v, P.convert_element_type(n, dt))] if above else [])
    if not tests:
        return
    bad = tests[0] if len(tests) == 1 else bind(P.or_p, *tests)
    if S.shape_of(bad):
        bad = bind(R.reduce_or_p, bad, axes=tuple(range(len(S.shape_of(bad)))))
    try:   # (raising: this trace is dropped, its guards with it)
        if not host_value(bad, True, fname):   # (None: unknown; False: all inside)
            return
        vals = np.asarray(host_value(v, True, fname))
        outside = ((vals < dt.type(-n)) if below else False) | ((vals >= dt.type(n)) if above else False)
        which = f"index {vals[outside].flat[0]}"
    except BatchDisagreementError:   # (some elements' indices are outside: a loop over them would raise there)
        which = "an index"
    raise IndexError(f"{fname}: {which} is out of bounds for axis {axis} with size {n}")


def require_host(v, fname, hint=DEFAULT_HINT):
    out = _size_value(v, fname)   # (under jit with concrete values: the program is specialised to this value)
    if out is None:
        raise DataDependentShapeError(v, fname, hint)
    return out


def sized(count, v, fname, hint=DEFAULT_HINT):
    """The Python int of `count`, a raw 0-d integer the trace computed from `v`: the size of a result. Under jit
    called with concrete values only this size is guarded; under vmap it is the size every element shares (else
    that vmap runs the function element by element: _size_value); abstract, a DataDependentShapeError naming v."""
    n = _size_value(count, fname)
    if n is None:
        raise DataDependentShapeError(v, fname, hint)
    return int(n)


def _count(mask):
    return R.reduce_sum(P.convert_element_type(mask, _IDX), (0,))


def _first_true(mask, n):
    """The positions of the first n True entries of a 1-D bool mask, ascending. With c the running count of True
    entries, the (r+1)-th True one's position is how many entries have c <= r: the running sum of a histogram of c
    (one scatter-add, counts past n in one dropped bin). Two scans and a scatter, where a stable sort of ~mask took
    5x as long (2030 entries: 193 -> 37 us; jitted LDA ran 8 such sorts)."""
    N = S.shape_of(mask)[0]
    c = T.cumsum(P.convert_element_type(mask, _IDX), 0)
    at = bind(P.min_p, c, P.convert_element_type(n, _IDX))
    bins = _put(n + 1, at, S.full((N,), 1, _IDX), "add")
    return T.cumsum(S.slice_(bins, (0,), (n,)), 0)


def _take(x, idx):
    """x[idx] for 1-D x and idx (a gather: carries x's gradient)."""
    return I.take_along_axis(x, idx, 0)


def _put(size, idx, updates, mode="set"):
    """A 1-D int64 array of `size` zeros with `updates` put (mode "set") or added ("add") at 1-D positions idx."""
    return I.scatter(S.full((size,), 0, _IDX), S.reshape(idx, (S.shape_of(idx)[0], 1)), updates,
                     I.ScatterDims((), (0,), (0,)), mode=mode)


def nonzero_sized(mask, shape, fname, hint):
    """The row-major indices (one raw int64 array per dim of `shape`) of the True entries of the traced bool
    `mask` of that shape, at the size `sized` gives for their count."""
    total = int(np.prod(shape, dtype=np.int64))
    if not total:
        return [S.full((0,), 0, _IDX) for _ in shape]
    n = sized(_count(S.reshape(mask, (total,))), mask, fname, hint)
    pos = _first_true(S.reshape(mask, (total,)), n)
    out, stride = [], total
    for j, d in enumerate(shape):
        stride //= d
        i = pos if stride == 1 else P.div(pos, P.convert_element_type(stride, _IDX))
        out.append(i if j == 0 else bind(P.rem_p, i, P.convert_element_type(d, _IDX)))
    return out


def unique_sized(v, fname, hint, inverse=True):
    """np.unique(v.ravel(), return_index, return_inverse, return_counts) for a traced raw v of size > 0, each NaN
    distinct and -0.0 == 0.0: (values gathered from v, first indices, inverse indices (flat; None unless
    `inverse`), counts), all raw, at the size `sized` gives for the number of unique values. A stable sort puts
    equal values together in order of first occurrence; a group starts where a value differs from the one before."""
    N = int(np.prod(S.shape_of(v), dtype=np.int64))
    flat = S.reshape(v, (N,))
    kind = S.dtype_of(flat).kind
    if kind == "c":   # NumPy's order: R + Rj < R + nanj < nan + Rj < nan + nanj, each by real then imag
        re, im = bind(P.real_p, flat), bind(P.imag_p, flat)
        nan_re, nan_im = (P.convert_element_type(bind(P.ne_p, a, a), np.int8) for a in (re, im))
        keys = [P.add(P.add(nan_re, nan_re), nan_im), re, im]
    else:
        keys = [P.convert_element_type(flat, np.uint8) if kind == "b" else flat]
    perm = T.sort(keys + [S.iota(_IDX, (N,), 0)], 0, True, len(keys))[-1]
    sx = _take(flat, perm)
    differs = bind(P.ne_p, S.slice_(sx, (1,), (N,)), S.slice_(sx, (0,), (N - 1,)))
    start = S.concatenate([S.full((1,), True, np.bool_), differs], 0)   # sorted position begins a group
    n = sized(_count(start), v, fname, hint)
    starts = _first_true(start, n)
    first = _take(perm, starts)
    counts = P.sub(S.concatenate([S.slice_(starts, (1,), (n,)), S.full((1,), N, _IDX)], 0), starts)
    inv = None
    if inverse:   # each sorted position's group, back in x's order: scattered to perm's (distinct) positions
        group = P.sub(T.cumsum(P.convert_element_type(start, _IDX), 0), P.convert_element_type(1, _IDX))
        inv = _put(N, perm, group)
    return _take(flat, first), first, inv, counts


REPEAT_HINT = ("The output length is the sum of the repeat counts, so the counts must be concrete: pass "
                "repeats as a Python int or a concrete array (compute it outside jit/vmap).")


def repeat_sized(x, repeats, axis, hint=REPEAT_HINT):
    """repeat(x, repeats, axis) for traced integer counts (1-D, one per element along axis): the output length
    sum(repeats) is all that is asked for (`sized`); output position j reads element
    searchsorted(cumsum(repeats), j, side='right'). None (the caller reads the whole value, as eagerly) for
    concrete counts, or -- one guarded bool -- when a count is negative or so large that their sum could wrap
    (uint64 counts past 2**63 read as negative), so that eager's error is raised."""
    from transforms.core import ShapedArray, check_size

    from . import _dtypes as D
    from ._array import Array
    from ._helpers import wrap
    from ._indexing import take
    from ._searching import searchsorted
    if not (type(repeats) is Array and repeats.dtype in D.INTEGER and repeats.ndim == 1 and repeats.size > 1
            and host_value(repeats._v) is None):
        return None
    r = P.convert_element_type(repeats._v, _IDX)
    lim = P.convert_element_type(np.iinfo(np.int64).max // repeats.size, _IDX)
    odd = bind(P.or_p, bind(P.lt_p, r, P.convert_element_type(0, _IDX)), bind(P.gt_p, r, lim))
    got = host_value(bind(R.reduce_or_p, odd, axes=(0,)), True, "repeat")
    if got is None or bool(got):
        return None
    total = sized(R.reduce_sum(r, (0,)), r, "repeat", hint)
    check_size(ShapedArray(x.shape[:axis] + (total,) + x.shape[axis + 1:], x.dtype), "repeat (repeats)")
    src = searchsorted(wrap(T.cumsum(r, 0)), wrap(S.iota(_IDX, (total,), 0)), side="right")
    return take(x, src, axis=axis)


MASK_READ_HINT = ("Reading x[mask] needs the count of True entries (eagerly, or jit called with concrete arrays). "
                  "Traced without values use a fixed-shape form: "
                  "xp.where(mask, x, fill) to keep x's shape, x.at[mask].set(v) (or x[mask] = v) with a scalar v "
                  "to update, or a reduction over the mask such as xp.sum(xp.where(mask, x, 0)); or do the "
                  "masking outside the jitted function.")
MASK_UPDATE_HINT = ("A masked update is traceable when its value needs no count of the True entries: a "
                    "scalar (Python scalar, 0-d or size-1 array), or a value that broadcasts along x's other "
                    "dims, with a key made of one mask and ints/slices/None/Ellipsis. Here the value (or a "
                    "key pairing the mask with integer arrays) needs the count; use "
                    "xp.where(mask, new_values, x) with full-shape new_values instead.")


def mask_hint(fname):
    """The hint for a boolean mask that is abstract: reads and updates have different remedies."""
    return MASK_READ_HINT if fname == "__getitem__" else MASK_UPDATE_HINT
