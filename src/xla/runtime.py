"""Execution: compile jaxprs once, run executables asynchronously, and run eager primitives.

Eager mode runs each primitive as a single-equation executable cached by
(primitive, params, input avals): the dispatch path is one dict lookup and one execute.
Results are device arrays returned before the computation finishes.
"""
from __future__ import annotations

import numpy as np

from transforms.core import (ShapedArray, Tracer, UnexpectedTracerError, abstract_eval, abstract_eval_rules, boxing,
                             get_aval, impl_rules)
from transforms.jaxpr import ClosedJaxpr, Eqn, Jaxpr, Var
from transforms.jit import jit_p
from transforms.primitives import elementwise as E

from . import _jaxlib, compile_cache
from .lowering import lower_jaxpr, lowering_rules

boxing.buffer_type = _jaxlib.ArrayImpl
_default_device = None


def default_device():
    global _default_device
    if _default_device is None:
        _default_device = _jaxlib.client().devices()[0]
    return _default_device


def devices():
    return _jaxlib.client().devices()


class Compiled:
    """A loaded executable plus the result handlers that turn its outputs into arrays."""
    __slots__ = ("exe", "handlers", "out_avals", "text")

    def __init__(self, exe, handlers, out_avals):
        self.exe, self.handlers, self.out_avals = exe, handlers, out_avals

    def __call__(self, bufs):
        try:
            return self.exe.execute_sharded(bufs).consume_with_handlers(self.handlers)
        except TypeError:
            _raise_if_tracer(bufs)
            raise

    def cost_analysis(self):
        return self.exe.cost_analysis()


def _raise_if_tracer(args):
    for a in args:
        if isinstance(a, Tracer):
            raise UnexpectedTracerError(
                f"a traced value ({a.aval.str_short()}) reached eager execution: it escaped from the "
                f"transform that created it ({a._trace.kind_name()}), e.g. through a global or a side "
                "effect. Return it from the transformed function instead.")


def compile_jaxpr(closed: ClosedJaxpr, donate=(), name="main", device=None) -> Compiled:
    device = device or default_device()
    module = lower_jaxpr(closed, name, donate)
    exe = compile_cache.compile(module, device)   # persistent on-disk cache, else _jaxlib.compile
    avals = [a.aval for a in closed.jaxpr.outvars]
    return Compiled(exe, [_jaxlib.result_handler(a, device) for a in avals], avals)


def device_put(x, aval=None, device=None):
    x = np.asarray(x)
    aval = aval or get_aval(x)
    if x.dtype != aval.dtype:
        x = x.astype(aval.dtype)
    if not x.flags.c_contiguous:
        x = x.copy(order="C")   # (np.ascontiguousarray would turn 0-d into 1-d)
    return _jaxlib.device_put(x, aval, device or default_device())


def to_numpy(buf):
    return _jaxlib.to_numpy(buf)


# ------------------------------------------------------------------------ eager impls
_exe_cache: dict = {}


def _compile_single(prim, avals, params):
    invars = [Var(a) for a in avals]
    out = abstract_eval(prim, avals, params)
    outs = out if prim.multiple_results else [out]
    outvars = [Var(a) for a in outs]
    jaxpr = Jaxpr([], invars, [Eqn(prim, invars, outvars, params)], outvars)
    return compile_jaxpr(ClosedJaxpr(jaxpr, []), name=prim.name)


def _to_buffer(x):
    if type(x) is _jaxlib.ArrayImpl:
        return x
    if isinstance(x, Tracer):
        _raise_if_tracer([x])
    return device_put(x, get_aval(x))


def _make_impl(prim):
    multi = prim.multiple_results

    def impl(*args, **params):
        try:
            key = (prim, tuple(params.items()), *[a.aval for a in args])
            ent = _exe_cache[key]
        except (KeyError, AttributeError):
            args = [_to_buffer(a) for a in args]
            avals = [a.aval for a in args]
            key = (prim, tuple(params.items()), *avals)
            ent = _exe_cache.get(key)
            if ent is None:
                ent = _exe_cache[key] = _compile_single(prim, avals, params)
        outs = ent(args)
        return outs if multi else outs[0]
    return impl


_scalar_cache: dict = {}


def _convert_impl(x, *, new_dtype, weak_type):
    """Host values (Python/NumPy scalars and arrays) convert on the host: no XLA launch."""
    if type(x) is _jaxlib.ArrayImpl or isinstance(x, Tracer):
        if type(x) is _jaxlib.ArrayImpl and x.aval.dtype == new_dtype and x.aval.weak_type == weak_type:
            return x
        return _generic_convert(x, new_dtype=new_dtype, weak_type=weak_type)
    t = type(x)
    if t in (bool, int, float, complex):
        key = (t, x, new_dtype, weak_type)
        buf = _scalar_cache.get(key)
        if buf is None:
            buf = device_put(_host_convert(x, new_dtype), ShapedArray((), new_dtype, weak_type))
            if x == x and len(_scalar_cache) < 4096:
                _scalar_cache[key] = buf
        return buf
    arr = _host_convert(x, new_dtype)
    return device_put(arr, ShapedArray(arr.shape, new_dtype, weak_type))


def _host_convert(x, dtype):
    arr = np.asarray(x)
    if dtype.kind in "iu" and arr.dtype.kind in "iub" and not np.can_cast(arr, dtype):
        info = np.iinfo(dtype)
        if np.any(arr < info.min) or np.any(arr > info.max):
            raise OverflowError(f"Python integer {x} is out of bounds for {dtype.name}")
    with np.errstate(all="ignore"):
        return arr.astype(dtype)


def register_impls():
    for prim in list(abstract_eval_rules):
        if prim in lowering_rules and prim not in impl_rules:
            impl_rules[prim] = _make_impl(prim)


_generic_convert = _make_impl(E.convert_element_type_p)
impl_rules[E.convert_element_type_p] = _convert_impl
impl_rules[jit_p] = _make_impl(jit_p)
