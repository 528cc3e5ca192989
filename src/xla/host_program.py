"""A jaxpr prepared once to run on NumPy arrays: a flat list of pre-resolved steps over a list of slots.

Why: eager op-by-op work on the CPU (staged composites, eager while/cond/scan, the special functions' kernels)
interpreted each equation afresh -- a dict environment, the kernel's dtype dispatch, a dtype fix-up: ~2 us of
bookkeeping against NumPy's ~0.5-1 us, on loops such as betainc's continued fraction (~1300 equations a call).
Here each equation becomes a closure `step(r)` reading its inputs from and writing its output to slots of one list
`r`, its kernel's form for the signature bound (xla/host.py `form`); nested calls (jit, custom_jvp/vjp) are inlined,
stop_gradient is an alias, and while/cond/scan run their bodies' steps in place. A form that is one NumPy ufunc
giving the output's dtype runs unchecked; any other's result is checked (NotImplemented: the equation binds;
another dtype: cast). A ufunc step writes into an intermediate it reads last (_step_in_place: NumPy std's out=).
Building costs about one interpreted run (generating Python source cost ~50 us an equation to compile).
"""
from __future__ import annotations

import operator
import sys

import numpy as np

from transforms.control_flow import cond_p, scan_p, while_p
from transforms.core import bind
from transforms.custom_derivatives import custom_jvp_call_p, custom_vjp_call_p, stop_gradient_p
from transforms.jaxpr import Literal
from transforms.jaxpr_transforms import jit_p

from . import host, host_eager, runtime
from .host import HostValue, host_kernels
from .host_parallel import _natural_dtype, split

_nd = np.ndarray
_asarray = np.asarray


# ----------------------------------------------------------------------------- the steps
def _bind_vals(p, params, vals, in_avals, out_avals):
    """One equation through its eager impl (a kernel declining a value; a primitive met only here). A
    value of another shape than its aval's (a pointwise program run at another shape) binds as it is."""
    out = bind(p, *[HostValue(v, a if v.shape == a.shape else a.update(shape=v.shape))
                    for v, a in zip(vals, in_avals)], **params)
    return [_fit(runtime._np_of(o), a) for o, a in zip(out if p.multiple_results else [out], out_avals)]


def _fit(o, aval):
    if type(o) is not _nd:
        o = _asarray(o)
    return o if o.dtype == aval.dtype else o.astype(aval.dtype)


def _step_kernel(eqn, k, ins, outs, reuse=None):
    """The kernel's form for the equation's signature (xla/host.py `form`: a bare ufunc, a reduction with its
    axes bound, a dot), its result checked (but where it is a ufunc giving the output's dtype): NotImplemented
    binds the equation, another dtype (a NumPy scalar included) is cast. reuse: the slot of an operand this
    equation reads last (_Builder.jaxpr), which a ufunc giving the output's dtype and shape writes into."""
    p, params = eqn.prim, eqn.params
    in_avals = [v.aval for v in eqn.invars]
    out_avals = [v.aval for v in eqn.outvars]
    kern = host.form(k, in_avals, params, split)
    if p.multiple_results:
        def step(r):
            vals = [r[i] for i in ins]
            res = kern(*vals)
            if res is NotImplemented:
                res = _bind_vals(p, params, vals, in_avals, out_avals)
            for i, v, a in zip(outs, res, out_avals):
                r[i] = _fit(v, a)
        return step
    (o,), (aval,) = outs, out_avals
    dt, sc = aval.dtype, aval.dtype.type   # (sc: a ufunc's result type at a 0-d output, which only needs the array)
    # a ufunc whose own result dtype is the output's, at a non-0-d output, gives an ndarray of that dtype: unchecked
    exact = type(kern) is np.ufunc and kern.nout == 1 and kern.nin == len(ins) and aval.shape != () and \
        _natural_dtype(kern, tuple(a.dtype for a in in_avals)) == dt

    if exact and reuse is not None and len(ins) <= 2:
        return _step_in_place(kern, ins, o, reuse)

    def slow(res, vals):
        if res is NotImplemented:
            return _bind_vals(p, params, vals, in_avals, out_avals)[0]
        return _fit(res, aval)
    if len(ins) == 1:
        (a,) = ins
        if exact:
            def step(r):
                r[o] = kern(r[a])
            return step

        def step(r):
            res = kern(r[a])
            if res.__class__ is not _nd or res.dtype is not dt:
                res = _asarray(res) if res.__class__ is sc else slow(res, [r[a]])
            r[o] = res
    elif len(ins) == 2:
        a, b = ins
        if exact:
            def step(r):
                r[o] = kern(r[a], r[b])
            return step

        def step(r):
            res = kern(r[a], r[b])
            if res.__class__ is not _nd or res.dtype is not dt:
                res = _asarray(res) if res.__class__ is sc else slow(res, [r[a], r[b]])
            r[o] = res
    else:
        get = operator.itemgetter(*ins) if ins else lambda r: ()   # (3+ operands: ~0.15 us under a list's cost)

        def step(r):
            vals = get(r)
            res = kern(*vals)
            if res.__class__ is not _nd or res.dtype is not dt:
                res = _asarray(res) if res.__class__ is sc else slow(res, vals)
            r[o] = res
    return step


def _step_in_place(kern, ins, o, t):
    """A ufunc step (one or two operands) writing into slot t's array, the operand's last read: where that array is
    a fresh kernel result nothing else refers to (the slot, this frame's x, getrefcount's argument; no view: its own
    memory), as NumPy's std squares its deviations (out=: the same bits, no new array, the memory still in cache).
    Slot t is emptied, so that the next step's check sees the result's own references only. (Operands read by name
    and the output passed positionally: a call with *[...] and out= cost ~0.3 us more, as much as the ufunc.)"""
    a, b = ins[0], ins[-1]
    two = len(ins) == 2

    def step(r):
        x = r[t]
        if sys.getrefcount(x) <= 3 and x.base is None and x.flags.writeable:
            res = kern(r[a], r[b], x) if two else kern(r[a], x)
            r[t] = None
        else:
            res = kern(r[a], r[b]) if two else kern(r[a])
        r[o] = res
    return step


class _Builder:
    """Assigns slots and emits steps; `template` holds the constants (literals, closed-over values).
    Notes whether every equation runs on a host kernel covering its dtypes (`host`) and whether it holds a
    while or a scan, nested ones included (`loops`)."""

    def __init__(self):
        self.template = []
        self.host, self.loops = True, False
        self.top = True   # (building the program's own jaxpr, not a nested one)

    def new(self, val=None):
        t = self.template
        t.append(val)
        return len(t) - 1

    def closed(self, closed, in_slots, steps):
        """Emit `closed` (a ClosedJaxpr) reading its inputs from in_slots; returns its output slots."""
        j = closed.jaxpr
        env = dict(zip(j.constvars, [self.new(runtime._np_of(c)) for c in closed.consts]))
        env.update(zip(j.invars, in_slots))
        return self.jaxpr(j, env, steps)

    def jaxpr(self, j, env, steps):
        """Emit j's steps. In the program's own jaxpr (straight-line at this level: loops and branches are
        single steps here) its kernel steps are made last, once every read of every slot is known: a ufunc
        step may then write into an operand's array where that is its last read of a slot a kernel step of
        this level filled (never an input, constant or output; slots shared by aliases count every read)."""
        top, self.top = self.top, False
        t = self.template
        covers = host_eager._kernel_covers
        last, fresh, later = {}, set(), []   # slot -> index of its last reading equation; kernel-filled slots
        for n, eqn in enumerate(j.eqns):
            p = eqn.prim
            ins = []
            for v in eqn.invars:
                if type(v) is Literal:
                    t.append(np.asarray(v.val, v.aval.dtype))
                    ins.append(len(t) - 1)
                else:
                    ins.append(env[v])
            for i in ins:
                last[i] = n
            k = host_kernels.get(p)
            if k is not None:
                outs = [self.new() for _ in eqn.outvars]
                if top:
                    later.append((len(steps), n, eqn, k, ins, outs))
                    steps.append(None)
                    fresh.update(outs)
                else:
                    steps.append(_step_kernel(eqn, k, ins, outs))
                if self.host and not covers(eqn):
                    self.host = False
            elif p is jit_p:
                outs = self.closed(eqn.params["jaxpr"], ins, steps)
            elif p is custom_jvp_call_p or p is custom_vjp_call_p:
                outs = self.closed(eqn.params["call_jaxpr"], ins, steps)
            elif p is stop_gradient_p:
                outs = ins
            elif p is while_p:
                outs = self.while_(eqn, ins, steps)
            elif p is cond_p:
                outs = self.cond(eqn, ins, steps)
            elif p is scan_p:
                outs = self.scan(eqn, ins, steps)
            else:
                outs = [self.new() for _ in eqn.outvars]
                steps.append(_step_kernel(eqn, host.declines, ins, outs))   # (it binds)
                self.host = False
            env.update(zip(eqn.outvars, outs))
        outs = []
        for v in j.outvars:
            outs.append(self.new(np.asarray(v.val, v.aval.dtype)) if type(v) is Literal else env[v])
        for i in outs:
            last[i] = len(j.eqns)
        for at, n, eqn, k, ins, kouts in later:
            a = eqn.outvars[0].aval
            dead = [i for i, v in zip(ins, eqn.invars) if i in fresh and last[i] == n and v.aval.shape == a.shape
                    and v.aval.dtype == a.dtype]
            steps[at] = _step_kernel(eqn, k, ins, kouts, dead[0] if dead and len(kouts) == 1 else None)
        self.top = top
        return outs

    def while_(self, eqn, ins, steps):
        prm = eqn.params
        nc, nb = prm["cond_nconsts"], prm["body_nconsts"]
        cconsts, bconsts, init = ins[:nc], ins[nc:nc + nb], ins[nc + nb:]
        carry = [self.new() for _ in init]
        cs, bs = [], []
        self.loops = True
        (pred,) = self.closed(prm["cond_jaxpr"], cconsts + carry, cs)
        new = self.closed(prm["body_jaxpr"], bconsts + carry, bs)
        outs = [self.new() for _ in init]

        def step(r):
            for k, i in zip(carry, init):
                r[k] = r[i]
            while True:
                for s in cs:
                    s(r)
                if not r[pred]:
                    break
                for s in bs:
                    s(r)
                vals = [r[i] for i in new]
                for k, v in zip(carry, vals):
                    r[k] = v
            for o, k in zip(outs, carry):
                r[o] = r[k]
        steps.append(step)
        return outs

    def cond(self, eqn, ins, steps):
        branches = eqn.params["branches"]
        idx, ops = ins[0], ins[1:]
        compiled = []
        for br in branches:
            bsteps = []
            compiled.append((bsteps, self.closed(br, ops, bsteps)))
        outs = [self.new() for _ in eqn.outvars]
        last = len(compiled) - 1

        def step(r):
            bsteps, res = compiled[min(max(int(r[idx]), 0), last)]   # clamped, as the lowering does
            for s in bsteps:
                s(r)
            vals = [r[i] for i in res]
            for o, v in zip(outs, vals):
                r[o] = v
        steps.append(step)
        return outs

    def scan(self, eqn, ins, steps):
        prm = eqn.params
        nc, ncar, length, rev = prm["num_consts"], prm["num_carry"], prm["length"], prm["reverse"]
        body = prm["jaxpr"]
        consts, init, xs = ins[:nc], ins[nc:nc + ncar], ins[nc + ncar:]
        carry = [self.new() for _ in init]
        xsl = [self.new() for _ in xs]
        bs = []
        self.loops = True
        res = self.closed(body, consts + carry + xsl, bs)
        new, ys = res[:ncar], res[ncar:]
        y_avals = body.out_avals[ncar:]
        outs = [self.new() for _ in eqn.outvars]
        order = range(length - 1, -1, -1) if rev else range(length)

        def step(r):
            for k, i in zip(carry, init):
                r[k] = r[i]
            xv = [r[i] for i in xs]
            bufs = [host.aligned_empty((length,) + a.shape, a.dtype) for a in y_avals]
            for t in order:
                for k, x in zip(xsl, xv):
                    r[k] = x[t, ...]
                for s in bs:
                    s(r)
                for buf, i in zip(bufs, ys):
                    buf[t] = r[i]   # (first: an output may be a carry's slot, moved on next)
                vals = [r[i] for i in new]
                for k, v in zip(carry, vals):
                    r[k] = v
            for o, v in zip(outs, [r[k] for k in carry] + bufs):
                r[o] = v
        steps.append(step)
        return outs


class Program:
    """`closed` compiled to steps: run(args) -> outputs, all NumPy arrays (args: one per invar of the
    jaxpr, after its constvars, which take `closed.consts`). `host`: whether every equation runs on a
    host kernel covering its dtypes (else some bind, and may run a single-op executable); `loops`: whether
    it holds a while or a scan."""
    __slots__ = ("closed", "template", "ins", "outs", "steps", "host", "loops", "out_avals")

    def __init__(self, closed):
        b = _Builder()
        self.ins = [b.new() for _ in closed.jaxpr.invars]
        self.steps = []
        self.outs = b.closed(closed, self.ins, self.steps)
        self.closed, self.template, self.host, self.loops = closed, b.template, b.host, b.loops
        self.out_avals = [v.aval for v in closed.jaxpr.outvars]

    def run(self, args):
        r = self.template.copy()
        for i, v in zip(self.ins, args):
            r[i] = v
        for s in self.steps:
            s(r)
        return [r[i] for i in self.outs]


_programs: dict = {}   # id(closed) -> Program (which keeps `closed` alive, so the id stays its own)
_PROGRAMS_MAX = 256    # (a staged special-function body is ~1 MB of jaxpr)


def program(closed):
    """The Program of closed jaxpr `closed` (built once, cached by identity)."""
    pr = _programs.get(id(closed))
    if pr is not None and pr.closed is closed:
        return pr
    pr = Program(closed)
    if len(_programs) >= _PROGRAMS_MAX:
        _programs.clear()
    _programs[id(closed)] = pr
    return pr


def run(closed, args):
    """The outputs of `closed` on NumPy arrays `args`, with warnings silenced."""
    return host.quiet(program(closed).run, args)


def run_eager(closed, consts, raw, out_avals=None):
    """A staged body run eagerly on its program (the backend's `run_by_op` hook): the outputs as eager
    values. out_avals: the outputs' avals where not closed's own (a pointwise body run on operands of
    another shape: transforms.jaxpr_transforms._ShapeFree). The per-call bookkeeping is trimmed: a small
    staged call such as xp.mean of 20x5 spends ~1.5 us in kernels."""
    pr = _programs.get(id(closed))
    if pr is None or pr.closed is not closed:
        pr = program(closed)
    r = pr.template.copy()
    hv = HostValue
    np_of = runtime._np_of
    for i, v in zip(pr.ins, [*consts, *raw]):
        r[i] = v.np if v.__class__ is hv and v._buf is None else np_of(v)
    _quiet(_run_steps, pr.steps, r)
    avals = pr.out_avals if out_avals is None else out_avals
    return [runtime._box_host(r[k], a, jit_p) for k, a in zip(pr.outs, avals)]


def _run_steps(steps, r):
    for s in steps:
        s(r)


_quiet = host.quiet
