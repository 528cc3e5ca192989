"""Eager staging of namespace-level composites: `compiled` runs a namespace function as one staged call
per signature (transforms.jaxpr_transforms.staged_call), and `bucketed` does so on inputs padded to a
power-of-two size, for composites whose loops would otherwise be staged for every new shape.

Used by xp.linalg, xp.fft and searchsorted (compiled) and by xp.special's iterative functions (bucketed); under a
transform both trace the function inline. Where eager work runs on host kernels (the CPU), the first
UNSTAGED_CALLS calls at a signature run the plain body op by op instead of staging it: staging and
building its host program cost several times a run, and library code calls most shapes once or a few
times. The plain body binds the same primitives on the same kernels as the staged call's way there
("host" or "bind", xla/host_eager.py), so the switch never changes a result's bits.
"""
from __future__ import annotations

import functools
import inspect
import math

from transforms.api_util import to_raw
from transforms.backend import backend
from transforms.core import EVAL, ShapedArray, get_aval, trace_state, tracing
from transforms.jaxpr_transforms import staged_call
from transforms.pytree import LEAF, tree_flatten, tree_unflatten

from ._array import Array
from ._creation import full
from ._helpers import UNSTAGED_CALLS, wrap
from ._manipulation import concat, reshape


class _Signature:
    """`fn` with its static arguments fixed, as a raw-value body for `staged_call`: which positions
    and keywords are Arrays (traced), the other arguments (static). Records the output pytree per
    input signature while staging."""
    __slots__ = ("fn", "args", "kwargs", "pos", "kws", "out_trees", "tree", "__name__", "plain", "seen")

    def __init__(self, fn, args, kwargs, pos, kws, plain):
        self.fn, self.pos, self.kws = fn, pos, kws
        self.args = tuple(None if i in pos else a for i, a in enumerate(args))     # holds no Array alive
        self.kwargs = {k: v for k, v in kwargs.items() if k not in kws}
        self.out_trees, self.tree, self.__name__ = {}, None, fn.__name__
        self.plain = plain       # whether a first call at new avals may run the plain body (see `compiled`)
        self.seen = {}           # operand avals it was called at -> plain calls left there (0: staged, or not on host)

    def __call__(self, *raw):
        full, kw = list(self.args), dict(self.kwargs)
        for i, x in zip(self.pos, raw):
            full[i] = wrap(x)
        kw.update((k, wrap(x)) for k, x in zip(self.kws, raw[len(self.pos):]))
        leaves, tree = tree_flatten(self.fn(*full, **kw))
        self.out_trees[tuple(get_aval(x) for x in raw)] = tree
        trees = set(self.out_trees.values())
        self.tree = tree if len(trees) == 1 else None      # the usual case: one tree, no lookup per call
        return [to_raw(x, f"{self.__name__} output") for x in leaves]


def compiled(fn=None, *, arrays=None, plain_first=True):
    """Run a namespace function eagerly as one staged call per signature (`staged_call`).

    Each of these functions is a composition of many primitives. Called eagerly with Array
    arguments, the whole function is staged once per signature: Array arguments are traced, every
    other argument is static (part of the cache key, with its type, so True and 1 stay apart).
    On the CPU it then runs op by op on host kernels (no compile per new shape) unless its operands
    are large, where it runs as one compiled executable (`staged_call(by_op=True)`: the way is
    decided once per signature from static facts, xla/host_eager.py).
    Validation runs while staging, so errors are the same. Under a transform the function is
    traced inline.

    The first UNSTAGED_CALLS calls at a signature (statics and operand avals) where eager work runs on host kernels
    (`_plain_runs_on_host`) runs fn's plain body instead, its primitives bound one by one on those
    kernels: the same kernels on the same values as the staged body's op-by-op run, so the same
    results, and the same Python (validation included) on the same shapes. Staging pays from the
    call after those. Only where every Array argument is one of fn's array parameters (`arrays`: their
    names; default its positional-only ones): an Array given for a static parameter (an axis, n)
    is traced when staged, and refused there (a traced value has no Python value) -- run plain it
    would be read and taken. plain_first=False: always staged (bucketed's padded bodies).
    """
    if fn is None:
        return functools.partial(compiled, arrays=arrays, plain_first=plain_first)
    signatures = {}
    _ALL_SIGNATURES.append(signatures)
    params = list(inspect.signature(fn).parameters.values())
    if arrays is None:
        arrays = [p.name for p in params if p.kind is p.POSITIONAL_ONLY]
    arr_pos = frozenset(i for i, p in enumerate(params)
                        if p.name in arrays and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
    arr_kw = frozenset(p.name for p in params if p.name in arrays and p.kind is not p.POSITIONAL_ONLY)
    name = fn.__name__

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if tracing[0] and trace_state.trace is not EVAL:
            return fn(*args, **kwargs)
        # the key: which positions and keywords (in sorted order) are Arrays, and every other argument with its
        # type; their raw values in that order (one pass: generators and sorts cost ~2 us of a ~10 us call)
        pos, statics, kws, raw = [], [len(args)], [], []
        for i, a in enumerate(args):
            if type(a) is Array:
                pos.append(i)
                raw.append(a._v)
            else:
                statics += (i, type(a), a)
        for k in (sorted(kwargs) if len(kwargs) > 1 else kwargs):
            v = kwargs[k]
            if type(v) is Array:
                kws.append(k)
                raw.append(v._v)
            else:
                statics += (k, type(v), v)
        key = (tuple(pos), tuple(kws), *statics)
        try:
            body = signatures.get(key)
        except TypeError:          # an unhashable static argument: run op by op
            return fn(*args, **kwargs)
        if body is None:
            pos, kws = tuple(pos), tuple(kws)
            plain = plain_first and arr_pos.issuperset(pos) and arr_kw.issuperset(kws)
            body = signatures[key] = _Signature(fn, args, kwargs, pos, kws, plain)
        if body.plain:
            avals = tuple([get_aval(x) for x in raw])
            seen = body.seen
            left = seen.get(avals)
            if left is None:   # (whether it runs on host kernels: a static fact of the avals, asked once)
                left = UNSTAGED_CALLS if _plain_runs_on_host(avals) else 0
                if len(seen) >= _SEEN_MAX:
                    seen.clear()
                seen[avals] = left
            if left > 0:
                seen[avals] = left - 1
                leaves, tree = tree_flatten(fn(*args, **kwargs))
                return tree_unflatten(tree, [wrap(to_raw(x, f"{name} output")) for x in leaves])
        outs = staged_call(body, raw, name, by_op=True)   # (on the CPU: host kernels, no compile)
        tree = body.tree if body.tree is not None else body.out_trees[tuple(get_aval(x) for x in raw)]
        return wrap(outs[0]) if tree is LEAF else tree_unflatten(tree, [wrap(o) for o in outs])   # (LEAF: ~0.25 us less)
    return wrapper


_ALL_SIGNATURES: list = []     # every `compiled` function's signature table


def forget_signatures():
    """Every `compiled` function meets its signatures afresh (its next call at each is a first call)."""
    for table in _ALL_SIGNATURES:
        table.clear()


_SEEN_MAX = 4096     # remembered signatures (of one static signature of `compiled`; of `bucketed`'s buckets)


def _plain_runs_on_host(avals):
    """Whether the backend would run any staged body on operands `avals` op by op on host kernels (its way for no
    particular body: a loop's size limit, the smaller, included): there a plain eager run binds exactly the
    kernels the staged call would run, so the two give the same bits; elsewhere (an accelerator, host kernels
    switched off, larger operands) the plain body's loops would compile once per exact shape."""
    return backend.eager_way(None, avals) == "host"


_PADS: dict = {}      # (length, fill, dtype, device) -> a padding Array (values are immutable: shared)


def _padding(k, fill, like):
    dev = like.device
    key = (k, fill, like.dtype, dev)
    pad = _PADS.get(key)
    if pad is None:
        if len(_PADS) >= 256:
            _PADS.clear()
        pad = _PADS[key] = full((k,), fill, dtype=like.dtype, device=dev)
    return pad


_BUCKETED = {}
_SEEN: set = set()     # (fn, bucket size, dtypes) that have run once eagerly


def bucketed(fn, args, fills, first=None):
    """fn(*args) on Arrays of one shape. Eagerly, the arguments are flattened and padded (with `fills`,
    values at which fn is cheap and finite) to a power-of-two size, so fn is staged once per size bucket
    rather than per shape (an iterative body compiles); the outputs (an Array or a tuple of them) are cut
    back and reshaped.
    first: fn's body without its transform rules (e.g. a custom_jvp's function), or None. Given, and where
    eager work runs on host kernels (the CPU), the first eager call at a bucket runs it op by op on the
    unpadded arguments instead: staging costs ~10 us per equation and pays only once a bucket is met
    again (library code on one new shape calls once)."""
    if trace_state.trace is not EVAL:
        return fn(*args)
    shape = args[0].shape
    n = math.prod(shape)
    size = max(8, 1 << max(n - 1, 0).bit_length())
    # (the first call runs plain only where the staged bucket would run op by op too: padded operands of
    # `size` elements, under the eager policy's threshold -- else it would give other bits than the later calls)
    if first is not None:
        key = (fn, size, tuple(v.dtype for v in args))
        if key not in _SEEN:   # (whether it runs on host kernels: a static fact of the bucket, asked once)
            if len(_SEEN) >= _SEEN_MAX:
                _SEEN.clear()
            _SEEN.add(key)
            if _plain_runs_on_host(tuple(ShapedArray((size,), get_aval(a._v).dtype) for a in args)):
                return first(*args)
    run = _BUCKETED.get(fn)
    if run is None:
        run = _BUCKETED[fn] = compiled(fn, plain_first=False)
    flat = []
    for v, fill in zip(args, fills):
        if len(shape) != 1:
            v = reshape(v, (n,))
        flat.append(concat([v, _padding(size - n, fill, v)]) if size > n else v)
    out = run(*flat)
    cut = (lambda o: o[:n]) if len(shape) == 1 else (lambda o: reshape(o[:n], shape))
    return tuple(cut(o) for o in out) if isinstance(out, tuple) else cut(out)
