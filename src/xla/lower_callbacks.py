"""Lowering of host callbacks: a custom call into Python on the CPU host.

jaxlib's CPU FFI target "xla_ffi_python_cpu_callback" calls the Python function at position
`index` (an attribute of the custom call) of the list given to `compile_and_load`, with NumPy
arrays, on the thread that runs the program, and writes back the arrays it returns (a tuple, in
declared order). An exception in the function becomes an error of the execution, raised as a
`JaxRuntimeError` (a RuntimeError) whose message holds the original exception's traceback text; the
runtime raises the original exception instead (`callback_failure`), as eagerly.

Each lowered module gets its own list (filed in `_jaxlib.host_callback_lists` under a key kept as a
module attribute; `_jaxlib.compile` hands it over). Ordered effects (io_callback(ordered=True),
debug_print(ordered=True)) thread a token: each takes the token of the previous ordered callback
in the same block (or a fresh one) and returns the next, so XLA keeps their program order.
"""
from __future__ import annotations

import itertools
import re
import threading

import numpy as np

from transforms.callbacks import debug_callback_p, io_callback_p, pure_callback_p, run_callback

from . import _jaxlib
from ._jaxlib import hlo, ir
from .lowering import lowering_rules, ttype

_MAX_PENDING = 256          # lowered modules whose callback lists are kept for a later compile
_keys = itertools.count()
_lock = threading.Lock()


def _module_callbacks():
    """The callback list of the module being built at the current insertion point (made on first use)."""
    op = ir.InsertionPoint.current.block.owner
    op = getattr(op, "operation", op)
    while op.name != "builtin.module":
        op = op.parent
        op = getattr(op, "operation", op)
    attrs = op.attributes
    if _jaxlib.HOST_CALLBACKS_ATTR in attrs:
        key = ir.StringAttr(attrs[_jaxlib.HOST_CALLBACKS_ATTR]).value
        return _jaxlib.host_callback_lists[key]
    key = f"callbacks{next(_keys)}"
    attrs[_jaxlib.HOST_CALLBACKS_ATTR] = ir.StringAttr.get(key)
    lists = _jaxlib.host_callback_lists
    with _lock:
        while len(lists) >= _MAX_PENDING:   # oldest first; compiled executables keep their own references
            del lists[next(iter(lists))]
        lst = lists[key] = []
    return lst


def _layout(ndim):
    """Row-major (minor-to-major = ndim-1, ..., 0): the layout NumPy arrays have."""
    return ir.DenseIntElementsAttr.get(np.arange(ndim - 1, -1, -1, dtype=np.int64), type=ir.IndexType.get())



def _token_layout():
    return ir.DenseIntElementsAttr.get(np.zeros((0,), np.int64), type=ir.IndexType.get())


def _last_token():
    """The token returned by the last ordered callback in the current block, or a new token."""
    block = ir.InsertionPoint.current.block
    last = None
    for op in block.operations:
        op = getattr(op, "operation", op)
        if op.name == "stablehlo.custom_call" and len(op.results) and hlo.TokenType.isinstance(op.results[0].type):
            last = op.results[0]
    return last if last is not None else hlo.CreateTokenOp().result


def _emit(c, operands, host, result_avals, *, side_effect, ordered=False):
    callbacks = _module_callbacks()
    index = len(callbacks)
    types = [ttype(a) for a in result_avals]
    in_layouts = [_layout(len(a.shape)) for a in c.avals_in]
    out_layouts = [_layout(len(a.shape)) for a in result_avals]
    operands = list(operands)
    if ordered:
        operands.insert(0, _last_token())
        types.insert(0, hlo.TokenType.get())
        in_layouts.insert(0, _token_layout())
        out_layouts.insert(0, _token_layout())
        untokened = host

        def host(token, *arrays):
            return (token, *untokened(*arrays))
    callbacks.append(host)
    op = hlo.CustomCallOp(types, operands, _jaxlib.HOST_CALLBACK_TARGET,
                          has_side_effect=ir.BoolAttr.get(bool(side_effect)),
                          backend_config=ir.StringAttr.get(""),
                          operand_layouts=ir.ArrayAttr.get(in_layouts),
                          result_layouts=ir.ArrayAttr.get(out_layouts))
    op.attributes["mhlo.backend_config"] = ir.DictAttr.get(
        {"index": ir.IntegerAttr.get(ir.IntegerType.get_unsigned(64), index)})
    results = list(op.results)
    return results[1:] if ordered else results


_failures: dict = {}   # token -> the exception a callback raised, until the execution's error is read (bounded)
_FAILURE = re.compile(r"\[host callback failure (\d+)\]")


def _host_fn(callback, result_avals):
    def host(*arrays):
        try:
            return tuple(run_callback(callback, result_avals, arrays))
        except Exception as e:   # noqa: BLE001 -- kept for the caller, which raises it as eagerly
            token = next(_keys)
            with _lock:
                while len(_failures) >= _MAX_PENDING:
                    del _failures[next(iter(_failures))]
                _failures[token] = e
            raise RuntimeError(f"[host callback failure {token}]") from e
    return host


def callback_failure(err):
    """The exception a host callback raised, where `err` (XLA's runtime error) reports it; else None. XLA
    words it as 'CpuCallback error calling callback: <traceback text>'; the runtime raises the original
    instead (its type, message and traceback), as the same callback raises eagerly (issue 24)."""
    m = _FAILURE.search(str(err))
    if m is None:
        return None
    with _lock:
        return _failures.pop(int(m.group(1)), None)


def has_callbacks(closed):
    """Whether a closed jaxpr calls a host callback anywhere (nested jaxprs included)."""
    for eqn in closed.jaxpr.eqns:
        if eqn.prim in (pure_callback_p, io_callback_p, debug_callback_p):
            return True
        for v in eqn.params.values():
            for sub in (v if isinstance(v, (tuple, list)) else (v,)):
                if hasattr(sub, "jaxpr") and hasattr(sub, "consts") and has_callbacks(sub):
                    return True
    return False


def _pure(c, *args, callback, result_avals, vmap_method):
    return _emit(c, args, _host_fn(callback, result_avals), result_avals, side_effect=False)


def _io(c, *args, callback, result_avals, ordered):
    return _emit(c, args, _host_fn(callback, result_avals), result_avals, side_effect=True, ordered=ordered)


def _debug(c, *args, callback, ordered):
    _emit(c, args, _host_fn(callback, ()), (), side_effect=True, ordered=ordered)
    return []


lowering_rules[pure_callback_p] = _pure
lowering_rules[io_callback_p] = _io
lowering_rules[debug_callback_p] = _debug
