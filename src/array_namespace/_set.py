"""Set functions (https://data-apis.org/array-api/latest/API_specification/set_functions.html).

unique_*: the number of unique values depends on the data. Eagerly (and under grad) the *positions* (first
indices, inverse indices, counts) are computed on the host from the concrete input; traced, by a stable sort
at the number of unique values, the only thing jit guards and vmap's elements must share (_datadep.py). The
values are gathered from x either way, so they carry gradients; without concrete values (make_jaxpr, strict
jit) DataDependentShapeError. Values come out sorted (NaNs last); every NaN is distinct and -0.0 == +0.0, as
the standard asks.

isin is fully traceable: a sort of x2 and a searchsorted (or, for complex or tiny inputs, a
broadcast comparison).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from transforms.backend import backend
from transforms.core import Tracer, bind
from transforms.primitives import elementwise as P
from transforms.primitives import reductions as R
from transforms.primitives import sorting as T
from transforms.primitives import structural as S

from . import _dtypes as D
from ._array import Array
from ._datadep import compared, host_value, unique_sized
from ._helpers import as_array, binary, wrap


class UniqueAllResult(NamedTuple):
    values: Array
    indices: Array
    inverse_indices: Array
    counts: Array


class UniqueCountsResult(NamedTuple):
    values: Array
    counts: Array


class UniqueInverseResult(NamedTuple):
    values: Array
    inverse_indices: Array


_HINT = ("Call it outside jit/vmap (eagerly); inside, use a fixed-size formulation, e.g. sort the array "
         "and compare neighbours (xp.sort, xp.diff) or count with a mask.")


# what each function returns besides the values: (inverse indices, counts); first indices are always computed
_ASKED = {"unique_all": (True, True), "unique_counts": (False, True), "unique_inverse": (True, False),
          "unique_values": (False, False)}


def _unique(x, fname):
    """(x, values, first indices, inverse indices, counts); the last two None where `fname` does not return them."""
    x = as_array(x, fname)
    v = x._v
    want_inv, want_counts = _ASKED[fname]
    hv = host_value(v)
    if hv is None and x.size:   # traced: only the number of unique values is asked for (_datadep.unique_sized)
        values, first, inv, counts = unique_sized(v, fname, _HINT, want_inv)
        return (x, wrap(values), wrap(first), wrap(S.reshape(inv, x.shape)) if want_inv else None,
                wrap(counts) if want_counts else None)
    hv = np.asarray(hv if hv is not None else np.zeros(0, x.dtype)).reshape(-1)
    plain = not isinstance(v, Tracer) and not v.aval.weak_type   # (no gradient to carry)
    # first indices where asked for or where they pick the values' bits: equal integers (and booleans) have equal
    # bits, so np.unique skips the stable sort the indices need (1M int64: ~85 -> ~25 ms); so do equal real floats
    # but for the zeros (signed, and the subnormals compared as zeros) and the NaNs (each its own value), whose
    # bits the first occurrences then give (`_first_bits`) where no inverse asks for the order of the NaNs
    index = fname == "unique_all" or not (plain and (hv.dtype.kind in "biu" or hv.dtype.kind == "f" and not want_inv))
    c = compared(hv)
    got = np.unique(c, return_index=index, return_inverse=want_inv, return_counts=want_counts, equal_nan=False)
    got = got if type(got) is tuple else (got,)
    if not index and hv.dtype.kind == "f":
        _first_bits(got[0], hv, c)
    first = got[1] if index else None
    put = lambda a, shape: wrap(backend.device_put(np.asarray(a, D.DEFAULT_INDEX).reshape(shape)))  # noqa: E731
    if plain:
        # x's values at their first indices read on the host (what the gather would give, bit for bit: -0.0 or 0.0
        # and NaN payloads as they stand in x), or np.unique's own where no index picks bits
        values = wrap(backend.device_put(hv[first] if index else got[0]))
    elif len(first):
        from transforms.primitives import indexing as I
        flat = S.reshape(v, (x.size,))
        idx = backend.device_put(np.asarray(first, D.DEFAULT_INDEX).reshape(-1, 1))
        values = wrap(I.gather(flat, idx, I.GatherDims((), (0,), (0,)), (1,)))
    else:
        values = wrap(S.reshape(v, (x.size,)))
    inv = put(got[1 + index], x.shape) if want_inv else None
    counts = put(got[-1], (-1,)) if want_counts else None
    return x, values, put(first, (-1,)) if fname == "unique_all" else None, inv, counts


def _first_bits(vals, hv, c):
    """np.unique's sorted real values `vals` of `c` (hv compared) given the bits of their first occurrences in hv: its
    zero (any zero or subnormal) the first one's, its NaNs (one per NaN of hv, last) hv's in their order."""
    i = np.searchsorted(vals, 0)   # (vals are sorted, NaNs last)
    if i < len(vals) and vals[i] == 0:
        vals[i] = hv[np.argmax(c == 0)]
    if len(vals) and np.isnan(vals[-1]):
        nan = np.isnan(c)
        vals[len(vals) - np.count_nonzero(nan):] = hv[nan]


def unique_all(x, /):
    """The unique values of x with their first indices, inverse indices and counts.

    The number of unique values depends on the data: under jit it is guarded, under vmap shared by the batch.

    Parameters: x (Array): any shape (flattened).
    Returns: UniqueAllResult: values (sorted, NaNs last, each NaN distinct), indices (int64: first occurrence in the
        flattened x), inverse_indices (int64, x's shape: x == values[inverse_indices]) and counts (int64).
    Raises: TypeError: if x is not an array. DataDependentShapeError: without concrete values (make_jaxpr, strict jit).
        BatchDisagreementError: under vmap, for elements with different numbers of unique values.

    >>> xp.unique_all(xp.asarray([3, 1, 3]))
    UniqueAllResult(values=Array([1, 3]), indices=Array([1, 0]), inverse_indices=Array([1, 0, 1]),
                    counts=Array([1, 2]))
    """
    _, values, first, inv, counts = _unique(x, "unique_all")
    return UniqueAllResult(values, first, inv, counts)


def unique_counts(x, /):
    """The unique values of x and how often each occurs.

    The number of unique values depends on the data: under jit it is guarded, under vmap shared by the batch.

    Parameters: x (Array): any shape (flattened).
    Returns: UniqueCountsResult: values (sorted, NaNs last, each NaN distinct) and counts (int64).
    Raises: TypeError: if x is not an array. DataDependentShapeError: without concrete values (make_jaxpr, strict jit).
        BatchDisagreementError: under vmap, for elements with different numbers of unique values.

    >>> xp.unique_counts(xp.asarray([3, 1, 3]))
    UniqueCountsResult(values=Array([1, 3]), counts=Array([1, 2]))
    """
    _, values, _, _, counts = _unique(x, "unique_counts")
    return UniqueCountsResult(values, counts)


def unique_inverse(x, /):
    """The unique values of x and, for each element of x, the index of its value among them.

    The number of unique values depends on the data: under jit it is guarded, under vmap shared by the batch.

    Parameters: x (Array): any shape.
    Returns: UniqueInverseResult: values (sorted, NaNs last, each NaN distinct) and inverse_indices (int64, of x's
        shape: x == values[inverse_indices]).
    Raises: TypeError: if x is not an array. DataDependentShapeError: without concrete values (make_jaxpr, strict jit).
        BatchDisagreementError: under vmap, for elements with different numbers of unique values.

    >>> xp.unique_inverse(xp.asarray([3, 1, 3]))
    UniqueInverseResult(values=Array([1, 3]), inverse_indices=Array([1, 0, 1]))
    """
    _, values, _, inv, _ = _unique(x, "unique_inverse")
    return UniqueInverseResult(values, inv)


def unique_values(x, /):
    """The unique values of x, sorted (NaNs last, each NaN distinct; -0.0 == 0.0).

    The number of unique values depends on the data: under jit it is guarded, under vmap shared by the batch.

    Parameters: x (Array): any shape (flattened).
    Returns: Array: 1-D, of x's dtype.
    Raises: TypeError: if x is not an array. DataDependentShapeError: without concrete values (make_jaxpr, strict jit).
        BatchDisagreementError: under vmap, for elements with different numbers of unique values.

    >>> xp.unique_values(xp.asarray([3, 1, 3, 2]))
    Array([1, 2, 3])
    """
    return _unique(x, "unique_values")[1]


def isin(x1, x2, /, *, invert=False):
    """Elementwise: is x1's element equal to some element of x2 (NaN is in nothing)?

    Parameters: x1 (Array or Python scalar): the elements tested. x2 (Array or Python scalar): the set (any shape).
        invert (bool): test "not in" instead. At least one of x1, x2 is an Array.
    Returns: Array: bool, of x1's shape.
    Raises: TypeError: if neither is an array, an operand is not an array or scalar, or the dtypes do not promote.

    >>> xp.isin(xp.asarray([1, 2, 3]), xp.asarray([2, 4]))
    Array([False,  True, False])
    """
    if type(x1) is not Array and type(x2) is not Array:
        raise TypeError("isin: at least one of x1 and x2 must be an array")
    a, b, dt = binary("isin", x1, x2, broadcast=False)
    shape = tuple(S.shape_of(a))
    m = int(np.prod(S.shape_of(b), dtype=np.int64))
    size = int(np.prod(shape, dtype=np.int64))
    if m == 0 or size == 0:
        return wrap(S.full(shape, bool(invert), D.bool_))
    b = S.reshape(b, (m,))
    if dt in D.COMPLEX or m * size <= 4096:
        flat = S.reshape(a, (size, 1))
        eq = bind(P.eq_p, flat, S.reshape(b, (1, m)))
        found = S.reshape(bind(R.reduce_or_p, eq, axes=(1,)), shape)
    else:
        from ._searching import searchsorted
        (sb,) = T.sort([b], 0)
        pos = searchsorted(wrap(sb), wrap(a))._v
        pos = P.select_n(bind(P.lt_p, pos, P.convert_element_type(m, D.DEFAULT_INDEX)),
                         P.convert_element_type(m - 1, D.DEFAULT_INDEX), pos)
        from transforms.primitives import indexing as I
        hit = I.gather(sb, S.reshape(pos, shape + (1,)), I.GatherDims((), (0,), (0,)), (1,))
        found = bind(P.eq_p, hit, a)
    return wrap(bind(P.not_p, found) if invert else found)
