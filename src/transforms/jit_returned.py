"""Whether a float() of a traced value is returned as it is, untouched, up to a transform's traced function.

A guarded jit (jit_guards.py) makes such a number a program output instead of a guard: a value the code only
returns needs no assumption about it, so `jit(accuracy_score)` runs one trace for every dataset; vmap and AD
make it their output (returned.py), so `vmap(r2_score)` is each dataset's score and `grad(r2_score)` its
derivative. The number
cannot report its own uses (CPython turns whatever `__float__` returns into an exact float), so the bytecode
is read instead (CPython 3.11; elsewhere, and for any pattern not below, the conversion stays a guard, which is
always right). In each frame from the one calling float() up to the innermost `flat` (api_util.flatten_fun):
- the current instruction is a call whose callable is loaded by name (a global, local or closure variable, or
  a module's function: `metrics.r2_score(...)`): the builtin float with one argument in the first frame, then
  the function of the frame below, or a functools.partial of it (scikit-learn's `_average_binary_score` calls
  one: its C `__call__` returns the function's result as it is);
- the call's result reaches RETURN_VALUE untouched, on every path: whatever runs in between works on the stack
  above it (a `with` block's exit, the other items of a returned tuple) or packs it, as an item, into the
  tuple, list or dict returned.
A fresh object that lives only on the value stack is reachable by nothing else, so nothing else read it.
"""
from __future__ import annotations

import builtins
import dis
import sys
from functools import lru_cache, partial
from types import FunctionType, MethodType, ModuleType

ON = sys.version_info[:2] == (3, 11)
_NAMED = {"LOAD_FAST", "LOAD_DEREF", "LOAD_CLOSURE", "LOAD_NAME", "LOAD_GLOBAL"}
_PUSH0 = {"NOP", "RESUME", "PRECALL", "KW_NAMES", "POP_TOP", "RETURN_VALUE", "STORE_FAST", "STORE_DEREF",
          "STORE_NAME", "STORE_GLOBAL", "STORE_ATTR", "STORE_SUBSCR", "DELETE_FAST", "DICT_MERGE", "DICT_UPDATE",
          "LIST_EXTEND", "LIST_APPEND", "SET_UPDATE", "JUMP_FORWARD", "JUMP_BACKWARD", "POP_JUMP_FORWARD_IF_FALSE",
          "POP_JUMP_FORWARD_IF_TRUE", "POP_JUMP_FORWARD_IF_NONE", "POP_JUMP_FORWARD_IF_NOT_NONE",
          "POP_JUMP_BACKWARD_IF_FALSE", "POP_JUMP_BACKWARD_IF_TRUE", "POP_JUMP_BACKWARD_IF_NONE",
          "POP_JUMP_BACKWARD_IF_NOT_NONE"}
_PUSH1 = {"LOAD_FAST", "LOAD_DEREF", "LOAD_CLOSURE", "LOAD_NAME", "LOAD_CONST", "LOAD_ATTR", "PUSH_NULL",
          "BINARY_OP", "COMPARE_OP", "IS_OP", "CONTAINS_OP", "BINARY_SUBSCR", "UNARY_NEGATIVE", "UNARY_NOT",
          "UNARY_INVERT", "UNARY_POSITIVE", "CALL", "CALL_FUNCTION_EX", "BUILD_TUPLE", "BUILD_LIST", "BUILD_MAP",
          "BUILD_CONST_KEY_MAP", "BUILD_SET", "BUILD_STRING", "BUILD_SLICE", "FORMAT_VALUE", "LIST_TO_TUPLE",
          "MAKE_FUNCTION", "GET_ITER"}
_UNCONDITIONAL = {"JUMP_FORWARD", "JUMP_BACKWARD"}
_MAX_FRAMES, _MAX_STEPS = 32, 400


def _pushes(ins):
    """How many items `ins` leaves on the stack (None: an instruction this analysis does not follow)."""
    name = ins.opname
    if name == "LOAD_GLOBAL":
        return 1 + (ins.arg & 1)
    if name in ("LOAD_METHOD", "BEFORE_WITH"):
        return 2
    return 0 if name in _PUSH0 else 1 if name in _PUSH1 else None


def _pops(ins, pushes, jump=False):
    return pushes - dis.stack_effect(ins.opcode, ins.arg, jump=jump)


@lru_cache(maxsize=512)
def _code(code):
    ins = list(dis.get_instructions(code))
    return ins, {i.offset: k for k, i in enumerate(ins)}


def _call_index(frame):
    """Index of the call instruction `frame` is executing (f_lasti may point into its inline caches), or None.
    (A specialised PRECALL, e.g. of a builtin class such as float, makes the call itself: its CALL's index.)"""
    ins, _ = _code(frame.f_code)
    k = max((j for j, i in enumerate(ins) if i.offset <= frame.f_lasti), default=None)
    if k is not None and ins[k].opname == "PRECALL" and k + 1 < len(ins) and ins[k + 1].opname == "CALL":
        k += 1
    return k if k is not None and ins[k].opname in ("CALL", "CALL_FUNCTION_EX") else None


def _pusher(ins, k, slot, stored):
    """(index, its stack height after) of the instruction before `k` that pushed stack `slot` (heights relative
    to just before k) on the straight-line stretch before k, else None; names stored on the way go to `stored`."""
    h = 0
    for j in range(k - 1, -1, -1):
        i = ins[j]
        if ins[j + 1].is_jump_target or i.opcode in dis.hasjrel or i.opcode in dis.hasjabs:
            return None
        pushes = _pushes(i)
        if pushes is None:
            return None
        if h - pushes <= slot < h:
            return j, h
        if i.opname.startswith(("STORE_", "DELETE_")):
            stored.add(i.argval)
        h -= dis.stack_effect(i.opcode, i.arg, jump=False)
        if h <= slot:
            return None
    return None


@lru_cache(maxsize=512)
def _callee(code, k):
    """(opname, name, argument count) of the load by name of call k's callable (count -1: a *args call or
    keywords), or None where the callable is anything else (a method, an expression) or the stretch branches."""
    ins, _ = _code(code)
    call = ins[k]
    base, stored = -_pops(call, 1), set()   # the call takes [NULL, callable, args...] from `base` up
    kw = any(i.opname == "KW_NAMES" for i in ins[max(k - 2, 0):k])   # (KW_NAMES, PRECALL, CALL: keywords)
    nargs = call.arg if call.opname == "CALL" and not kw else -1
    got = _pusher(ins, k, base + 1, stored)
    if got is None:
        return None
    i, attr = ins[got[0]], None
    if i.opname in ("LOAD_METHOD", "LOAD_ATTR") and got[0] > 0 and not i.is_jump_target:
        # a module's function, `metrics.r2_score(...)` (resolved in _resolve): LOAD_METHOD pushes NULL and it;
        # LOAD_ATTR replaces the module pushed after a NULL (LOAD_GLOBAL's NULL bit, or PUSH_NULL)
        j, method = got[0] - 1, i.opname == "LOAD_METHOD"
        attr, i = i.argval, ins[got[0] - 1]
        if i.opname not in _NAMED or not (
                (method and got[1] - 2 == base and _pushes(i) == 1) or (not method and got[1] - 2 == base and (
                    _pushes(i) == 2 or (j > 0 and not i.is_jump_target and ins[j - 1].opname == "PUSH_NULL")))):
            # a method of what an expression made (`xp.sum(x).item()`): its name, nothing resolvable
            return ("METHOD", None, nargs, attr) if method and got[1] - 2 == base else None
    elif i.opname == "LOAD_GLOBAL" and i.arg & 1 and got[1] - 2 == base:
        pass   # (NULL + global)
    elif i.opname in _NAMED and _pushes(i) == 1:
        null = _pusher(ins, k, base, set())
        if null is None or ins[null[0]].opname != "PUSH_NULL":
            return None
    else:
        return None
    return None if i.argval in stored else (i.opname, i.argval, nargs, attr)


@lru_cache(maxsize=512)
def _flows_to_return(code, k):
    """Whether the result of instruction k reaches RETURN_VALUE untouched on every path (alone or as an item)."""
    ins, at = _code(code)
    todo, seen, steps = [(k + 1, 1, 0)], set(), 0   # (instruction, stack height, position of the value)
    while todo:
        j, h, p = todo.pop()
        if (j, h, p) in seen:
            continue
        seen.add((j, h, p))
        steps += 1
        if steps > _MAX_STEPS or j >= len(ins):
            return False
        i = ins[j]
        name = i.opname
        if name == "RETURN_VALUE":
            if p != h - 1:
                return False
            continue
        if name == "SWAP":
            p = h - i.arg if p == h - 1 else h - 1 if p == h - i.arg else p
            todo.append((j + 1, h, p))
            continue
        if name == "COPY":
            if p == h - i.arg:
                return False
            todo.append((j + 1, h + 1, p))
            continue
        pushes = _pushes(i)
        if pushes is None:
            return False
        jumps = i.opcode in dis.hasjrel or i.opcode in dis.hasjabs
        branches = [(at[i.argval], True)] if jumps else []
        if name not in _UNCONDITIONAL:
            branches.append((j + 1, False))
        for nxt, taken in branches:
            pops = _pops(i, pushes, taken)
            base = h - pops
            q = p
            if base <= p:   # the instruction takes the value: only to pack it into a tuple/list/dict value slot
                off = p - base
                if not (name in ("BUILD_TUPLE", "BUILD_LIST") or (name == "BUILD_MAP" and off % 2 == 1)
                        or (name == "BUILD_CONST_KEY_MAP" and off < pops - 1)):
                    return False
                q = base
            todo.append((nxt, base + pushes, q))
    return True


def _resolve(frame, op, name, attr=None):
    """The object the frame loaded by name (with `attr`: that module's attribute; a module's dict lookup runs no
    code, another object's attribute might)."""
    if attr is not None:
        mod = _resolve(frame, op, name)
        return vars(mod).get(attr) if type(mod) is ModuleType else None
    if op == "LOAD_GLOBAL":
        g = frame.f_globals
        return g[name] if name in g else frame.f_builtins.get(name)
    loc = frame.f_locals
    if name in loc:
        return loc[name]
    if op == "LOAD_NAME":
        return frame.f_globals.get(name, frame.f_builtins.get(name))
    return None


def returned_directly(frame, stop_codes, callee=builtins.float):
    """Whether `frame` is calling `callee` and the result is returned untouched through every frame up to the
    first one running one of `stop_codes` (a tuple: a transform's flat function). `callee`: the builtin float or
    int on one argument (whose __float__/__int__ made the result: they return that very object), or a method
    name (a str, `.item()`: the method called with no argument, whose frame asks)."""
    if not ON:
        return False
    child = None
    for _ in range(_MAX_FRAMES):
        if frame is None:
            return False
        k = _call_index(frame)
        got = None if k is None else _callee(frame.f_code, k)
        if got is None:
            return False
        op, name, nargs, attr = got
        obj = None if op == "METHOD" else _resolve(frame, op, name, attr)
        if child is None:
            if (attr != callee or nargs != 0) if type(callee) is str else (obj is not callee or nargs != 1):
                return False
        else:
            obj = obj.func if type(obj) is partial else obj
            if type(obj) not in (FunctionType, MethodType) or obj.__code__ is not child:
                return False
        if any(frame.f_code is c for c in stop_codes):
            return True
        if not _flows_to_return(frame.f_code, k):
            return False
        child, frame = frame.f_code, frame.f_back
    return False
