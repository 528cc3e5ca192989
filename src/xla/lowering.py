"""Lowering: jaxpr -> StableHLO module (via jaxlib's MLIR Python bindings).

`lowering_rules[prim](c, *operands, **params)` returns the result Value(s); `c` carries
the equation's input and output avals. Rules live in modules mirroring the primitive
families (lower_elementwise, lower_structural, ...), registered on import.
"""
from __future__ import annotations

import threading

import numpy as np

from transforms.jaxpr import Literal

from . import lower_writes
from ._jaxlib import func, hlo, ir, new_context

lowering_rules: dict = {}

_ctx = threading.local()


def context():
    """This thread's MLIR context: modules are built and compiled by the thread that made them, so
    threads lowering at once never share (and corrupt) one context."""
    c = getattr(_ctx, "c", None)
    if c is None:
        c = _ctx.c = new_context()
    return c


_ELEM = {
    "bool": lambda: ir.IntegerType.get_signless(1),
    "int8": lambda: ir.IntegerType.get_signless(8), "int16": lambda: ir.IntegerType.get_signless(16),
    "int32": lambda: ir.IntegerType.get_signless(32), "int64": lambda: ir.IntegerType.get_signless(64),
    "uint8": lambda: ir.IntegerType.get_unsigned(8), "uint16": lambda: ir.IntegerType.get_unsigned(16),
    "uint32": lambda: ir.IntegerType.get_unsigned(32), "uint64": lambda: ir.IntegerType.get_unsigned(64),
    "float16": lambda: ir.F16Type.get(), "bfloat16": lambda: ir.BF16Type.get(),
    "float32": lambda: ir.F32Type.get(), "float64": lambda: ir.F64Type.get(),
    "complex64": lambda: ir.ComplexType.get(ir.F32Type.get()),
    "complex128": lambda: ir.ComplexType.get(ir.F64Type.get()),
}


def elem_type(dtype):
    return _ELEM[np.dtype(dtype).name]()


def ttype(aval):
    return ir.RankedTensorType.get(list(aval.shape), elem_type(aval.dtype))


def tensor_type(shape, dtype):
    return ir.RankedTensorType.get(list(shape), elem_type(dtype))


def constant(value, dtype, shape=()):
    """A StableHLO constant of `dtype` and `shape` from a NumPy-convertible value."""
    dt = np.dtype(dtype)
    arr = np.array(np.broadcast_to(np.asarray(value, dt), shape), order="C")
    t = tensor_type(shape, dt)
    if dt.kind == "c":
        arr = np.array(arr.reshape(-1).view(np.float32 if dt == np.complex64 else np.float64), order="C")
        attr = ir.DenseElementsAttr.get(arr, type=t)
    else:
        attr = ir.DenseElementsAttr.get(arr, type=t)
    return hlo.ConstantOp(attr).result


class LowerCtx:
    __slots__ = ("avals_in", "avals_out")

    def __init__(self, avals_in, avals_out):
        self.avals_in, self.avals_out = avals_in, avals_out


def jaxpr_subcomp(jaxpr, consts, args):
    """Emit ops for `jaxpr` at the current insertion point; returns the output Values."""
    env = {}

    def read(a):
        if type(a) is Literal:
            return constant(a.val, a.aval.dtype)
        return env[a]

    for v, c in zip(jaxpr.constvars, consts):
        env[v] = constant(np.asarray(c), v.aval.dtype, v.aval.shape)
    for v, x in zip(jaxpr.invars, args):
        env[v] = x
    plan = lower_writes.plan(jaxpr)   # runs of constant-position writes: one scatter each
    for i, eqn in enumerate(jaxpr.eqns):
        if i in plan:
            if plan[i] is not None:
                env[eqn.outvars[0]] = lower_writes.emit(plan[i], read, jaxpr_subcomp, eqn.outvars[0].aval,
                                                           eqn.invars[1].aval)
            continue
        rule = lowering_rules.get(eqn.prim)
        if rule is None:
            raise NotImplementedError(f"no XLA lowering for primitive '{eqn.prim}'")
        c = LowerCtx([a.aval for a in eqn.invars], [v.aval for v in eqn.outvars])
        out = rule(c, *map(read, eqn.invars), **eqn.params)
        outs = out if eqn.prim.multiple_results else [out]
        for v, x in zip(eqn.outvars, outs):
            env[v] = x
    return [read(a) for a in jaxpr.outvars]


def lower_jaxpr(closed, name="main", donate=()):
    """A StableHLO module whose public @main computes the closed jaxpr."""
    jaxpr = closed.jaxpr
    with context(), ir.Location.unknown():
        module = ir.Module.create()
        module.operation.attributes["sym_name"] = ir.StringAttr.get(_sym(name))
        in_types = [ttype(v.aval) for v in jaxpr.invars]
        out_types = [ttype(a.aval) for a in jaxpr.outvars]
        with ir.InsertionPoint(module.body):
            f = func.FuncOp("main", ir.FunctionType.get(in_types, out_types))
            f.attributes["sym_visibility"] = ir.StringAttr.get("public")
            if any(donate):
                f.arg_attrs = ir.ArrayAttr.get([
                    ir.DictAttr.get({"jax.buffer_donor": ir.BoolAttr.get(True)} if d else {})
                    for d in donate])
            with ir.InsertionPoint(f.add_entry_block()):
                outs = jaxpr_subcomp(jaxpr, closed.consts, list(f.arguments))
                func.ReturnOp(outs)
        for rule in module_rules:
            rule(module)
    return module


module_rules: list = []   # functions of the whole module, run once it is lowered (lower_structural adds one)


def _sym(name):
    s = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in str(name))
    return ("jit_" + s) if s else "jit_fun"


# ----------------------------------------------------------------------- shared helpers

def broadcast_to(x, in_aval, out_aval):
    """NumPy-style (trailing-aligned) broadcast of an operand to the output shape."""
    if tuple(in_aval.shape) == tuple(out_aval.shape):
        return x
    lead = len(out_aval.shape) - len(in_aval.shape)
    return hlo.BroadcastInDimOp(tensor_type(out_aval.shape, in_aval.dtype), x,
                                broadcast_dimensions=list(range(lead, len(out_aval.shape)))).result


def fill_region(region, arg_types, body):
    block = region.blocks.append(*arg_types)
    with ir.InsertionPoint(block):
        hlo.ReturnOp(list(body(*block.arguments)))
