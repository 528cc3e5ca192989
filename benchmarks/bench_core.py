"""Core performance benchmarks: this library vs NumPy vs JAX (when installed).

Run:   python benchmarks/bench_core.py            # full run (about 1-3 minutes on 2 cores)
       python benchmarks/bench_core.py --quick    # smaller sizes / fewer repeats, a smoke run
       python benchmarks/bench_core.py --samplers # only the random-sampler table (ours jit vs jax.jit)

(from the repository root, with the package installed or ``PYTHONPATH=src``.)

What it measures, in one run, printed as one table (columns: workload, ours, numpy, jax,
ours/numpy, ours/jax):

* eager per-op latency: ``x + 1`` on 10 float64 elements, and a chain of 100 small ops
  (alternating add / mul / sin on 10 elements), reported per chain and per op;
* jit steady-state call overhead: ``f(x) = x*2+1`` on 10 elements (ours ``jit(f)``, jax
  ``jax.jit(f)``, numpy the plain function); and with a guard (a branch on ``sum(x) > 0``, a mask read
  ``x[x > .5]``), which every call checks (jax: the fixed-shape ``where`` form, as JAX cannot trace these);
* trace+compile latency: first call of a fresh ``jit`` of a fresh ~50-op function (a new
  function object with a new constant each repeat, so no cache can be hit); median of repeats;
* seed workloads: row normalisation ``(x - mean(x,1)) / std(x,1)`` on 4000x4000 float32,
  2000x2000 float32 matmul, ten unrolled steps of ``x = 0.5*x + 0.1*sin(x)`` on 1000x1000,
  ``jit(hessian(sum(x**2)))`` on 1000 elements (numpy: the analytic ``2*eye``), the MLP
  ``jit(grad(mse_loss))`` step ([784, 512, 512, 10], batch 128) and per-example gradients
  ``jit(vmap(grad(example_loss), in_axes=(None, 0, 0)))`` (numpy: hand-written backprop);
* namespace per-call overhead of common functions, eager, on small inputs (10 elements / 4x4):
  add, sum, matmul, where, ``x[2:5]``, ``x[1]``, ``x.at[1].set(0.0)``.
* with --samplers, instead of the above: every random sampler jitted (``random.normal(k, (1000, 1200))``
  and the rest, float64 and float32), ours ``jit`` vs ``jax.jit`` of the same ``jax.random`` call.

Every result of ours and JAX's is waited on (``block_until_ready``) inside the timed region.
Each timing is the best of several repeats after a warm-up (trace+compile: the median).
Our results are also checked against NumPy; mismatches and errors are listed after the table.
JAX runs with ``jax_enable_x64`` so float64 workloads compare like with like; without JAX
installed its columns are left out.
"""
import argparse
import statistics
import sys
import time
import traceback

import numpy as np

# JAX is timed in a child process (`--jax-child`) so the two libraries never share one: both
# drive jaxlib's process-wide C++ dispatch state, and importing one slows the other's jit calls.
import importlib.util  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import subprocess  # noqa: E402

JAX_CHILD = "--jax-child" in sys.argv
JAX_AVAILABLE = importlib.util.find_spec("jax") is not None
jax = jnp = None
HAVE_JAX = False
if JAX_CHILD:
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    HAVE_JAX = True


# --------------------------------------------------------------------------- timing helpers

def _ours():
    """Our namespace and transforms. In the JAX child, NumPy and None instead: that process times JAX alone,
    as a JAX user runs it (importing our package there changes JAX's own timings, e.g. its jit calls
    and block_until_ready), and every cell of ours is skipped there (Runner.run), so no call of ours runs."""
    if JAX_CHILD:
        return np, None
    import array_namespace as xp
    import transforms
    return xp, transforms


def _block(out):
    """Wait for every array (ours or JAX's) in `out`: an array, or lists/tuples/dicts of them. Plain Python
    (no import or pytree walk per call: harness time would count against both libraries alike)."""
    t = type(out)
    if t is list or t is tuple:
        for o in out:
            _block(o)
    elif t is dict:
        for o in out.values():
            _block(o)
    elif hasattr(out, "block_until_ready"):
        out.block_until_ready()
    return out


def bench(fn, *, repeats=5, target=0.05, max_number=100_000):
    """Best per-call time (seconds) of ``fn()`` (which must block on its own result)."""
    fn()  # warm-up (compiles, fills caches)
    t0 = time.perf_counter()
    fn()
    one = max(time.perf_counter() - t0, 1e-7)
    number = int(min(max_number, max(1, target / one)))
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - t0) / number)
    return best


def fmt_time(t):
    if t is None:
        return "-"
    if isinstance(t, str):
        return t
    if t < 1e-3:
        return f"{t * 1e6:.1f} µs"
    if t < 1.0:
        return f"{t * 1e3:.2f} ms"
    return f"{t:.2f} s"


def fmt_ratio(a, b):
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b > 0:
        return f"{a / b:.2f}x"
    return "-"


class Runner:
    def __init__(self, quick):
        self.quick = quick
        self.rows = []        # (workload, ours, numpy, jax)
        self.problems = []    # strings
        self.notes = []       # strings

    def run(self, label, kind, fn):
        """Run one cell; returns seconds, or 'ERR' and records the traceback."""
        if fn is None or (JAX_CHILD and kind == "ours"):
            return None
        try:
            return fn()
        except Exception:
            tb = traceback.format_exc()
            self.problems.append(f"{label} [{kind}] raised:\n{tb}")
            return "ERR"

    def add(self, label, ours=None, numpy=None, jax_=None):
        self.rows.append((label, ours, numpy, jax_))

    def check(self, label, got, want, rtol=1e-4, atol=1e-4):
        try:
            g = np.asarray(got, dtype=np.float64)
            w = np.asarray(want, dtype=np.float64)
            if g.shape != w.shape or not np.allclose(g, w, rtol=rtol, atol=atol):
                err = np.max(np.abs(g - w)) if g.shape == w.shape else "shape mismatch"
                self.problems.append(f"{label}: WRONG ANSWER vs NumPy (shape {g.shape} vs {w.shape}, "
                                     f"max abs err {err})")
        except Exception:
            self.problems.append(f"{label}: check failed:\n{traceback.format_exc()}")


# --------------------------------------------------------------------------- workloads

def eager_ops(r):
    xp, _ = _ours()
    x_np = np.linspace(0.0, 1.0, 10)
    x = xp.asarray(x_np)
    reps = 3 if r.quick else 7

    ours = r.run("eager x + 1", "ours", lambda: bench(lambda: (x + 1).block_until_ready(), repeats=reps))
    r.check("eager x + 1", x + 1, x_np + 1)
    npt = bench(lambda: x_np + 1, repeats=reps)
    jx = None
    if HAVE_JAX:
        xj = jnp.asarray(x_np)
        jx = bench(lambda: (xj + 1).block_until_ready(), repeats=reps)
    r.add("eager x + 1 (10 f64)", ours, npt, jx)

    def chain(ns, v):
        for i in range(100):
            k = i % 3
            if k == 0:
                v = v + 0.5
            elif k == 1:
                v = v * 0.9
            else:
                v = ns.sin(v)
        return v

    ours = r.run("eager 100-op chain", "ours",
                 lambda: bench(lambda: chain(xp, x).block_until_ready(), repeats=reps, target=0.2))
    r.check("eager 100-op chain", chain(xp, x), chain(np, x_np), rtol=1e-9, atol=1e-9)
    npt = bench(lambda: chain(np, x_np), repeats=reps, target=0.2)
    jx = None
    if HAVE_JAX:
        xj = jnp.asarray(x_np)
        jx = bench(lambda: chain(jnp, xj).block_until_ready(), repeats=reps, target=0.2)
    r.add("eager 100-op chain, per chain", ours, npt, jx)
    per = lambda t: t / 100 if isinstance(t, float) else t
    r.add("eager 100-op chain, per op", per(ours), per(npt), per(jx))


def jit_overhead(r):
    xp, T = _ours()
    x_np = np.linspace(0.0, 1.0, 10)
    x = xp.asarray(x_np)
    reps = 3 if r.quick else 7

    def f(v):
        return v * 2 + 1

    def ours_fn():
        jf = T.jit(f)
        out = jf(x)
        r.check("jit f(x)=x*2+1", out, x_np * 2 + 1)
        return bench(lambda: jf(x).block_until_ready(), repeats=reps)

    ours = r.run("jit call overhead", "ours", ours_fn)
    npt = bench(lambda: f(x_np), repeats=reps)
    jx = None
    if HAVE_JAX:
        jfj = jax.jit(f)
        xj = jnp.asarray(x_np)
        jx = bench(lambda: jfj(xj).block_until_ready(), repeats=reps)
    r.add("jit steady-state call x*2+1 (10)", ours, npt, jx)
    jit_guarded(r, x_np, reps)


def jit_guarded(r, x_np, reps):
    """Guarded jit calls (issue 25): a branch on a value and a value-dependent size, each call checking its
    guards. JAX cannot trace either; its column is the fixed-shape form a JAX user writes instead."""
    xp, T = _ours()

    def branch(v):
        if xp.sum(v) > 0:
            return v * 2 + 1
        return v * 3

    def masked(v):
        return xp.sum(v[v > 0.5]) + 1
    x = xp.asarray(x_np) if T is not None else None
    for label, f, want, fj in (
            ("jit call with a bool guard: if sum(x) > 0 (10)", branch, x_np * 2 + 1,
             lambda v: jnp.where(jnp.sum(v) > 0, v * 2 + 1, v * 3)),
            ("jit call with a size guard: sum(x[x > .5]) (10)", masked, np.sum(x_np[x_np > 0.5]) + 1,
             lambda v: jnp.sum(jnp.where(v > 0.5, v, 0.0)) + 1)):
        def ours_fn(f=f, want=want, label=label):
            jf = T.jit(f)
            r.check(label, jf(x), want)
            return bench(lambda: jf(x).block_until_ready(), repeats=reps)
        ours = r.run(label, "ours", ours_fn)
        jx = None
        if HAVE_JAX:
            jfj, xj = jax.jit(fj), jnp.asarray(x_np)
            jx = bench(lambda: jfj(xj).block_until_ready(), repeats=reps)
        r.add(label, ours, None, jx)


def _make_50op(ns, c):
    """A fresh function object of ~50 ops with a fresh constant ``c`` baked in."""
    def f(x):
        y = x
        for i in range(16):
            y = ns.sin(y) * c + 0.1 * i
        return ns.sum(y * y)
    return f


def trace_compile(r):
    xp, T = _ours()
    x_np = np.linspace(0.0, 1.0, 64)
    x = xp.asarray(x_np)
    n = 3 if r.quick else 7
    counter = [0]

    def fresh_const():
        counter[0] += 1
        return 1.0 + counter[0] * 1e-6

    def median_first_call(make, wrap, arg):
        times = []
        for _ in range(n):
            f = make(fresh_const())
            t0 = time.perf_counter()
            _block(wrap(f)(arg))
            times.append(time.perf_counter() - t0)
        return statistics.median(times)

    def ours_fn():
        c = fresh_const()
        got = T.jit(_make_50op(xp, c))(x)
        r.check("trace+compile 50-op", got, _make_50op(np, c)(x_np), rtol=1e-9, atol=1e-9)
        # count the equations to label the workload honestly
        jaxpr = T.make_jaxpr(_make_50op(xp, c))(x)
        r.notes.append(f"trace+compile function has {len(jaxpr.jaxpr.eqns)} equations in our jaxpr")
        return median_first_call(lambda c: _make_50op(xp, c), T.jit, x)

    ours = r.run("trace+compile 50-op", "ours", ours_fn)
    jx = None
    if HAVE_JAX:
        xj = jnp.asarray(x_np)
        jx = median_first_call(lambda c: _make_50op(jnp, c), jax.jit, xj)
    r.add("trace+compile ~50-op fn (1st call)", ours, "n/a", jx)


def seed_workloads(r):
    xp, T = _ours()
    rng = np.random.default_rng(0)
    big_reps = 2 if r.quick else 5
    first_calls = []

    def timed_jit(label, jfun, args, want=None, rtol=1e-4, atol=1e-4, reps=big_reps):
        """First-call time (trace+compile+run) and steady-state best time of a jitted callable."""
        t0 = time.perf_counter()
        out = _block(jfun(*args))
        first = time.perf_counter() - t0
        first_calls.append((label, first))
        if want is not None:
            r.check(label, out[0] if isinstance(out, tuple) else out, want, rtol=rtol, atol=atol)
        return bench(lambda: _block(jfun(*args)), repeats=reps, target=0.0)

    # --- row normalisation
    n = 500 if r.quick else 4000
    xn = rng.standard_normal((n, n)).astype(np.float32)

    def rownorm(ns):
        def f(x):
            return (x - ns.mean(x, axis=1, keepdims=True)) / ns.std(x, axis=1, keepdims=True)
        return f

    def rownorm_np(x):
        return (x - x.mean(1, keepdims=True)) / x.std(1, keepdims=True)

    want = rownorm_np(xn)
    ours = r.run("rownorm", "ours",
                 lambda: timed_jit("rownorm (ours)", T.jit(rownorm(xp)), (xp.asarray(xn),), want[:, :],
                                   rtol=1e-3, atol=1e-3))
    npt = bench(lambda: rownorm_np(xn), repeats=big_reps, target=0.0)
    jx = None
    if HAVE_JAX:
        jx = timed_jit("rownorm (jax)", jax.jit(rownorm(jnp)), (jnp.asarray(xn),))
    r.add(f"rownorm {n}x{n} f32 (jit)", ours, npt, jx)

    # --- matmul
    m = 300 if r.quick else 2000
    a_np = rng.standard_normal((m, m)).astype(np.float32)
    b_np = rng.standard_normal((m, m)).astype(np.float32)
    want = a_np.astype(np.float64) @ b_np.astype(np.float64)

    def ours_mm():
        a, b = xp.asarray(a_np), xp.asarray(b_np)
        r.check("matmul (ours eager)", a @ b, want, rtol=1e-3, atol=1e-2)
        return bench(lambda: (a @ b).block_until_ready(), repeats=big_reps, target=0.0)

    ours = r.run("matmul", "ours", ours_mm)
    npt = bench(lambda: a_np @ b_np, repeats=big_reps, target=0.0)
    jx = None
    if HAVE_JAX:
        aj, bj = jnp.asarray(a_np), jnp.asarray(b_np)
        jx = bench(lambda: (aj @ bj).block_until_ready(), repeats=big_reps, target=0.0)
    r.add(f"matmul {m}x{m} f32 (eager)", ours, npt, jx)

    # --- ten steps of x = 0.5*x + 0.1*sin(x)
    k = 200 if r.quick else 1000
    x0 = rng.standard_normal((k, k))

    def steps(ns):
        def f(x):
            for _ in range(10):
                x = 0.5 * x + 0.1 * ns.sin(x)
            return x
        return f

    want = steps(np)(x0)
    ours = r.run("10 steps", "ours",
                 lambda: timed_jit("10 steps (ours)", T.jit(steps(xp)), (xp.asarray(x0),), want,
                                   rtol=1e-9, atol=1e-9))
    npt = bench(lambda: steps(np)(x0), repeats=big_reps, target=0.0)
    jx = None
    if HAVE_JAX:
        jx = timed_jit("10 steps (jax)", jax.jit(steps(jnp)), (jnp.asarray(x0),))
    r.add(f"10x (0.5x+0.1sin x) {k}x{k} f64 (jit)", ours, npt, jx)

    # --- hessian of sum(x**2)
    h = 200 if r.quick else 1000
    v_np = rng.standard_normal(h)
    ours = r.run("hessian", "ours",
                 lambda: timed_jit("hessian (ours)", T.jit(T.hessian(lambda v: xp.sum(v ** 2))),
                                   (xp.asarray(v_np),), 2 * np.eye(h)))
    npt = bench(lambda: 2 * np.eye(h), repeats=big_reps)
    jx = None
    if HAVE_JAX:
        jx = timed_jit("hessian (jax)", jax.jit(jax.hessian(lambda v: jnp.sum(v ** 2))), (jnp.asarray(v_np),))
    r.add(f"jit(hessian(sum x**2)) n={h} f64", ours, npt, jx)
    r.notes.append("hessian: the numpy column is the analytic 2*eye(n), not a derivative computation")

    # --- MLP
    sizes = [64, 32, 32, 10] if r.quick else [784, 512, 512, 10]
    batch = 16 if r.quick else 128
    params_np = [((rng.standard_normal((p, q)) / np.sqrt(p)).astype(np.float32),
                  (rng.standard_normal(q) * 0.1).astype(np.float32)) for p, q in zip(sizes[:-1], sizes[1:])]
    xin = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    tgt = rng.standard_normal((batch, sizes[-1])).astype(np.float32)

    def make_mlp(ns):
        def predict(params, inputs):
            for W, b in params[:-1]:
                inputs = ns.tanh(inputs @ W + b)
            W, b = params[-1]
            return inputs @ W + b

        def mse_loss(params, batch):
            inputs, targets = batch
            preds = predict(params, inputs)
            return ns.mean(ns.sum((preds - targets) ** 2, axis=-1))

        def example_loss(params, x, y):
            return mse_loss(params, (x[None], y[None]))
        return mse_loss, example_loss

    def np_forward(params, inputs):
        hs = [inputs]
        for W, b in params[:-1]:
            hs.append(np.tanh(hs[-1] @ W + b))
        W, b = params[-1]
        return hs, hs[-1] @ W + b

    def np_grad(params, batch_):
        inputs, targets = batch_
        hs, preds = np_forward(params, inputs)
        d = 2.0 * (preds - targets) / inputs.shape[0]
        grads = []
        for li in range(len(params) - 1, -1, -1):
            W, _ = params[li]
            grads.append((hs[li].T @ d, d.sum(0)))
            if li:
                d = (d @ W.T) * (1.0 - hs[li] ** 2)
        return grads[::-1]

    def np_per_example(params, inputs, targets):
        hs, preds = np_forward(params, inputs)
        d = 2.0 * (preds - targets)                       # per example, batch of one each
        grads = []
        for li in range(len(params) - 1, -1, -1):
            W, _ = params[li]
            grads.append((np.einsum("bi,bj->bij", hs[li], d), d))
            if li:
                d = (d @ W.T) * (1.0 - hs[li] ** 2)
        return grads[::-1]

    want_g = np_grad(params_np, (xin, tgt))
    want_pe = np_per_example(params_np, xin, tgt)

    mse_xp, ex_xp = make_mlp(xp)
    params = [(xp.asarray(W), xp.asarray(b)) for W, b in params_np]
    xin_o, tgt_o = xp.asarray(xin), xp.asarray(tgt)

    def ours_grad():
        jg = T.jit(T.grad(mse_xp))
        t0 = time.perf_counter()
        g = _block(jg(params, (xin_o, tgt_o)))
        first_calls.append(("MLP grad (ours)", time.perf_counter() - t0))
        for li in range(len(params)):
            r.check(f"MLP grad W{li}", g[li][0], want_g[li][0], rtol=1e-3, atol=1e-4)
            r.check(f"MLP grad b{li}", g[li][1], want_g[li][1], rtol=1e-3, atol=1e-4)
        return bench(lambda: _block(jg(params, (xin_o, tgt_o))), repeats=big_reps, target=0.1)

    ours = r.run("MLP grad", "ours", ours_grad)
    npt = bench(lambda: np_grad(params_np, (xin, tgt)), repeats=big_reps, target=0.1)
    jx = None
    if HAVE_JAX:
        mse_j, ex_j = make_mlp(jnp)
        params_j = [(jnp.asarray(W), jnp.asarray(b)) for W, b in params_np]
        xj, tj = jnp.asarray(xin), jnp.asarray(tgt)
        jgj = jax.jit(jax.grad(mse_j))
        t0 = time.perf_counter()
        _block(jgj(params_j, (xj, tj)))
        first_calls.append(("MLP grad (jax)", time.perf_counter() - t0))
        jx = bench(lambda: _block(jgj(params_j, (xj, tj))), repeats=big_reps, target=0.1)
    label_sizes = "-".join(map(str, sizes))
    r.add(f"MLP jit(grad(mse)) {label_sizes} b{batch}", ours, npt, jx)

    def ours_pe():
        jpe = T.jit(T.vmap(T.grad(ex_xp), in_axes=(None, 0, 0)))
        t0 = time.perf_counter()
        g = _block(jpe(params, xin_o, tgt_o))
        first_calls.append(("MLP per-example (ours)", time.perf_counter() - t0))
        for li in range(len(params)):
            r.check(f"per-example grad W{li}", g[li][0], want_pe[li][0], rtol=1e-3, atol=1e-4)
            r.check(f"per-example grad b{li}", g[li][1], want_pe[li][1], rtol=1e-3, atol=1e-4)
        return bench(lambda: _block(jpe(params, xin_o, tgt_o)), repeats=big_reps, target=0.1)

    ours = r.run("MLP per-example", "ours", ours_pe)
    npt = bench(lambda: np_per_example(params_np, xin, tgt), repeats=big_reps, target=0.1)
    jx = None
    if HAVE_JAX:
        jpej = jax.jit(jax.vmap(jax.grad(ex_j), in_axes=(None, 0, 0)))
        t0 = time.perf_counter()
        _block(jpej(params_j, xj, tj))
        first_calls.append(("MLP per-example (jax)", time.perf_counter() - t0))
        jx = bench(lambda: _block(jpej(params_j, xj, tj)), repeats=big_reps, target=0.1)
    r.add(f"MLP per-example grads b{batch} (jit vmap)", ours, npt, jx)
    r.notes.append("MLP: the numpy column is a hand-written backprop (per-example: einsum outer products)")

    # --- float32 product, sum and mean of 2^20 values near 1 (issue 23: products accumulate in float64 under
    # jit; XLA's float32 product tree was ~4,000 ulps off, so the product is checked to ~8 ulps)
    nr = 2**16 if r.quick else 2**20
    xr = (1 + 1e-3 * rng.standard_normal(nr)).astype(np.float32)

    def reductions(ns):
        return lambda x: (ns.prod(x), ns.sum(x), ns.mean(x))

    ours = r.run("reductions", "ours",
                 lambda: timed_jit("f32 prod/sum/mean (ours)", T.jit(reductions(xp)), (xp.asarray(xr),),
                                   np.prod(xr.astype(np.float64)), rtol=1e-6, atol=0))
    npt = bench(lambda: reductions(np)(xr), repeats=big_reps, target=0.0)
    jx = None
    if HAVE_JAX:
        jx = timed_jit("f32 prod/sum/mean (jax)", jax.jit(reductions(jnp)), (jnp.asarray(xr),))
    r.add(f"prod+sum+mean {nr} f32 (jit)", ours, npt, jx)

    r.notes.append("first-call (trace+compile+run) times of the jitted seed workloads: " +
                   ", ".join(f"{lab} {fmt_time(t)}" for lab, t in first_calls))


def namespace_overhead(r):
    xp, _ = _ours()
    reps = 3 if r.quick else 7
    x_np = np.linspace(-1.0, 1.0, 10)
    y_np = np.linspace(2.0, 3.0, 10)
    a_np = np.arange(16.0).reshape(4, 4)
    b_np = np.eye(4) + 0.5
    c_np = x_np > 0

    def np_set(v):
        v = v.copy()
        v[1] = 0.0
        return v

    cases = [
        ("add", lambda ns, x, y, a, b, c: ns.add(x, y), lambda: x_np + y_np),
        ("sum", lambda ns, x, y, a, b, c: ns.sum(x), lambda: np.sum(x_np)),
        ("matmul 4x4", lambda ns, x, y, a, b, c: ns.matmul(a, b), lambda: a_np @ b_np),
        ("where", lambda ns, x, y, a, b, c: ns.where(c, x, y), lambda: np.where(c_np, x_np, y_np)),
        ("x[2:5]", lambda ns, x, y, a, b, c: x[2:5], lambda: x_np[2:5]),
        ("x[1]", lambda ns, x, y, a, b, c: x[1], lambda: x_np[1]),
        ("x.at[1].set(0.0)", lambda ns, x, y, a, b, c: x.at[1].set(0.0), lambda: np_set(x_np)),
    ]
    want = {"add": x_np + y_np, "sum": np.sum(x_np), "matmul 4x4": a_np @ b_np,
            "where": np.where(c_np, x_np, y_np), "x[2:5]": x_np[2:5], "x[1]": x_np[1],
            "x.at[1].set(0.0)": np_set(x_np)}
    args_o = args_j = None
    try:
        args_o = tuple(xp.asarray(v) for v in (x_np, y_np, a_np, b_np, c_np))
    except Exception:
        r.problems.append(f"namespace setup raised:\n{traceback.format_exc()}")
    if HAVE_JAX:
        args_j = tuple(jnp.asarray(v) for v in (x_np, y_np, a_np, b_np, c_np))
    for name, op, npop in cases:
        def ours_fn(op=op, name=name):
            r.check(f"xp {name}", op(xp, *args_o), want[name], rtol=1e-12, atol=1e-12)
            return bench(lambda: op(xp, *args_o).block_until_ready(), repeats=reps)
        ours = r.run(f"xp {name}", "ours", ours_fn if args_o is not None else lambda: 1 / 0)
        npt = bench(npop, repeats=reps)
        jx = None
        if HAVE_JAX:
            jx = bench(lambda: op(jnp, *args_j).block_until_ready(), repeats=reps)
        r.add(f"eager {name}", ours, npt, jx)


def _peak_rss_delta(fn):
    """Extra resident memory (bytes) at the peak of fn(), over the resident size before it (Linux:
    VmHWM reset through /proc/self/clear_refs); None where that is unavailable."""
    def status(key):
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(key):
                    return int(line.split()[1]) * 1024
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        before = status("VmRSS:")
        out = fn()
        _block(out) if not isinstance(out, np.ndarray) else None
        peak = status("VmHWM:")
        del out
        return max(peak - before, 0)
    except OSError:
        return None


def eager_small(r):
    """Eager per-call cost of loops and reductions on small arrays (no jit anywhere)."""
    xp, _ = _ours()
    reps = 3 if r.quick else 7
    v_np = np.linspace(0.0, 1.0, 100)
    a_np = np.random.default_rng(0).standard_normal((20, 5))

    def loop(ns, v):   # x[i] in a Python loop, as library code writes it
        return [v[i] for i in range(100)]

    def stack_loop(ns, v):   # the example: xp.stack([f(x) for x in xp.arange(n)])
        return ns.stack([x * 2.0 + 1.0 for x in v])

    cases = [
        ("x[i] loop (100 items), per item", lambda ns, v, a: loop(ns, v), 100),
        ("stack([x*2+1 for x in v]) (100 items), per item", lambda ns, v, a: stack_loop(ns, v), 100),
        ("mean 20x5 axis=0", lambda ns, v, a: ns.mean(a, axis=0), 1),
        ("std 20x5 axis=0", lambda ns, v, a: ns.std(a, axis=0), 1),
        ("var 20x5", lambda ns, v, a: ns.var(a), 1),
        ("matmul 20x5 @ 5x20", lambda ns, v, a: ns.matmul(a, ns.matrix_transpose(a) if ns is not np else a.T), 1),
        ("where 100", lambda ns, v, a: ns.where(v > 0.5, v, 0.0 * v), 1),
    ]
    args_o = (xp.asarray(v_np), xp.asarray(a_np))
    args_j = (jnp.asarray(v_np), jnp.asarray(a_np)) if HAVE_JAX else None
    for name, op, per in cases:
        scale = lambda t, per=per: t / per if isinstance(t, float) else t  # noqa: E731
        ours = r.run(f"eager {name}", "ours", lambda op=op: bench(lambda: _block(op(xp, *args_o)), repeats=reps))
        npt = bench(lambda op=op: op(np, v_np, a_np), repeats=reps)
        jx = bench(lambda op=op: _block(op(jnp, *args_j)), repeats=reps) if HAVE_JAX else None
        r.add(f"eager {name}", scale(ours), scale(npt), scale(jx))

    # first call on a never-seen shape vs the steady state (ours: host kernels, no compile)
    shapes = iter(range(1000, 100000))

    def first_new_shape(ns, asarray):
        best = float("inf")
        for _ in range(reps):
            n = next(shapes)
            v = asarray(np.ones(n))
            t0 = time.perf_counter()
            _block(ns.sin(v) * 2.0 + 1.0) if ns is not np else ns.sin(v) * 2.0 + 1.0
            best = min(best, time.perf_counter() - t0)
        return best
    ours = r.run("eager first call, new shape", "ours", lambda: first_new_shape(xp, xp.asarray))
    npt = first_new_shape(np, np.asarray)
    jx = first_new_shape(jnp, jnp.asarray) if HAVE_JAX else None
    r.add("eager sin(x)*2+1, first call on a new shape", ours, npt, jx)
    v = xp.asarray(np.ones(1000)) if not JAX_CHILD else None
    ours = r.run("eager steady", "ours", lambda: bench(lambda: _block(xp.sin(v) * 2.0 + 1.0), repeats=reps))
    npt = bench(lambda: np.sin(v_np) * 2.0 + 1.0, repeats=reps)
    vj = jnp.asarray(np.ones(1000)) if HAVE_JAX else None
    jx = bench(lambda: _block(jnp.sin(vj) * 2.0 + 1.0), repeats=reps) if HAVE_JAX else None
    r.add("eager sin(x)*2+1, steady state (same shape)", ours, npt, jx)


def eager_composites(r):
    """Eager composites on a large float64 matrix: time, and peak extra resident memory."""
    xp, _ = _ours()
    n = 800 if r.quick else 4000
    reps = 2 if r.quick else 3
    x_np = np.random.default_rng(0).standard_normal((n, n))
    xo = xp.asarray(x_np) if not JAX_CHILD else None
    xj = jnp.asarray(x_np) if HAVE_JAX else None
    cases = [
        ("mean(x, axis=1)", lambda ns, x: ns.mean(x, axis=1)),
        ("std(x, axis=1)", lambda ns, x: ns.std(x, axis=1)),
        ("var(x)", lambda ns, x: ns.var(x)),
        ("vector_norm(x, axis=0)", lambda ns, x: ns.linalg.vector_norm(x, axis=0) if ns is not np
         else np.linalg.norm(x, axis=0)),
        ("rownorm (x - mean(x,1)) / std(x,1)", lambda ns, x: (x - ns.mean(x, axis=1, keepdims=True))
         / ns.std(x, axis=1, keepdims=True)),
    ]
    mb = lambda b: f"{b / 2**20:.0f} MiB" if b is not None else "n/a"  # noqa: E731
    for name, op in cases:
        label = f"eager {name} {n}x{n} f64"
        ours = r.run(label, "ours", lambda op=op: bench(lambda: _block(op(xp, xo)), repeats=reps, target=0.0))
        npt = bench(lambda op=op: op(np, x_np), repeats=reps, target=0.0)
        jx = bench(lambda op=op: _block(op(jnp, xj)), repeats=reps, target=0.0) if HAVE_JAX else None
        r.add(label, ours, npt, jx)
        if name.startswith("rownorm"):
            if not JAX_CHILD:
                r.check(label, op(xp, xo), op(np, x_np), rtol=1e-9, atol=1e-9)
                r.notes.append(f"peak extra RSS, {label}: ours {mb(_peak_rss_delta(lambda: op(xp, xo)))}, "
                               f"numpy {mb(_peak_rss_delta(lambda: op(np, x_np)))} (input {mb(x_np.nbytes)})")
            else:
                r.notes.append(f"peak extra RSS, {label}: jax {mb(_peak_rss_delta(lambda: op(jnp, xj)))}")


def _sampler_cases(shape, n_pop, n_cat):
    """(label, make(random) -> f(key, *operands), operands (NumPy), check(NumPy output) -> error or None) per
    sampler: one call written once, run with our `transforms.random` and with `jax.random` (same names and
    signatures). Array operands are arguments of the jitted function, never closed-over constants a compiler
    could fold (JAX folds cumsum(p) of a constant p at compile time)."""
    h, w = shape
    logits = np.broadcast_to(np.linspace(-2.0, 2.0, n_cat), (h, n_cat)).copy()
    p = np.linspace(1.0, 2.0, n_pop) / np.linspace(1.0, 2.0, n_pop).sum()

    def moments(mean, std, tol=0.01):
        def check(v):   # (the tolerance is at least 6 standard errors of the mean: --quick draws 48k samples)
            m, s, t = float(np.mean(v)), float(np.std(v)), max(tol, 6 * std / v.size ** 0.5)
            return None if abs(m - mean) < t and abs(s - std) < t else f"mean {m:.4f} std {s:.4f}, " \
                f"want {mean:.4f} {std:.4f}"
        return check

    cases = [("split 1000 keys", lambda rnd: lambda k: rnd.split(k, 1000), (), None),
             ("fold_in", lambda rnd: lambda k: rnd.fold_in(k, 7), (), None)]
    for dt in (np.uint32, np.uint64):
        cases.append((f"bits {h}x{w} {np.dtype(dt).name}", lambda rnd, dt=dt: lambda k: rnd.bits(k, shape, dt),
                      (), None))
    for dt in (np.float64, np.float32):
        d = np.dtype(dt).name.replace("float", "f")
        cases += [
            (f"uniform {h}x{w} {d}", lambda rnd, dt=dt: lambda k: rnd.uniform(k, shape, dt), (),
             moments(0.5, (1 / 12) ** 0.5)),
            (f"normal {h}x{w} {d}" + (" (the seed's)" if dt == np.float64 else ""),
             lambda rnd, dt=dt: lambda k: rnd.normal(k, shape, dt), (), moments(0.0, 1.0)),
            (f"gumbel {h}x{w} {d}", lambda rnd, dt=dt: lambda k: rnd.gumbel(k, shape, dt), (),
             moments(0.5772156649, np.pi / 6 ** 0.5, 0.02)),
        ]
    cases += [
        (f"bernoulli p=0.3 {h}x{w}", lambda rnd: lambda k: rnd.bernoulli(k, 0.3, shape), (),
         moments(0.3, 0.21 ** 0.5)),
        (f"randint [0, 100) {h}x{w} int64", lambda rnd: lambda k: rnd.randint(k, shape, 0, 100, np.int64), (),
         moments(49.5, (9999 / 12) ** 0.5, 0.2)),
        (f"permutation {n_pop}", lambda rnd: lambda k: rnd.permutation(k, n_pop), (),
         lambda v: None if np.array_equal(np.sort(v), np.arange(n_pop)) else "not a permutation"),
        (f"choice {n_pop} -> 1000, replace", lambda rnd: lambda k: rnd.choice(k, n_pop, (1000,)), (), None),
        (f"choice {n_pop} -> 1000, no replace", lambda rnd: lambda k: rnd.choice(k, n_pop, (1000,), False), (),
         lambda v: None if len(set(v.tolist())) == 1000 else "repeated entries"),
        (f"choice {n_pop} -> 1000, replace, p", lambda rnd: lambda k, q: rnd.choice(k, n_pop, (1000,), True, q),
         (p,), None),
        (f"choice {n_pop} -> 1000, no replace, p",
         lambda rnd: lambda k, q: rnd.choice(k, n_pop, (1000,), False, q), (p,), None),
        (f"categorical {h}x{n_cat} logits f64", lambda rnd: lambda k, lg: rnd.categorical(k, lg), (logits,), None),
    ]
    for name, mean, std in (("exponential", 1.0, 1.0), ("laplace", 0.0, 2 ** 0.5), ("logistic", 0.0, np.pi / 3 ** 0.5),
                            ("cauchy", None, None)):
        cases.append((f"{name} {h}x{w} f64", lambda rnd, name=name: lambda k: getattr(rnd, name)(k, shape),
                      (), moments(mean, std, 0.02) if mean is not None else None))
    a, lam = np.float64(2.5), np.float64(4.0)      # parameters are jit arguments, as the other operands
    mean3, cov3 = np.array([1.0, -2.0, 0.5]), np.array([[2.0, 0.6, -0.4], [0.6, 1.0, 0.3], [-0.4, 0.3, 0.5]])
    cases += [
        (f"rademacher {h}x{w} int64", lambda rnd: lambda k: rnd.rademacher(k, shape, np.int64), (), moments(0.0, 1.0)),
        (f"truncated_normal [-1, 2] {h}x{w} f64",
         lambda rnd: lambda k, lo, hi: rnd.truncated_normal(k, lo, hi, shape), (np.float64(-1.0), np.float64(2.0)),
         moments(0.2296, 0.7209, 0.01)),
        (f"gamma a=2.5 {h}x{w} f64", lambda rnd: lambda k, a: rnd.gamma(k, a, shape), (a,),
         moments(2.5, 2.5 ** 0.5, 0.02)),
        (f"gamma a=0.3 {h}x{w} f64", lambda rnd: lambda k, a: rnd.gamma(k, a, shape), (np.float64(0.3),),
         moments(0.3, 0.3 ** 0.5, 0.02)),
        (f"gamma a=2.5 {h}x{w} f32", lambda rnd: lambda k, a: rnd.gamma(k, a, shape, np.float32), (np.float32(2.5),),
         moments(2.5, 2.5 ** 0.5, 0.02)),
        (f"beta 2, 5 {h}x{w} f64", lambda rnd: lambda k, a, b: rnd.beta(k, a, b, shape),
         (np.float64(2.0), np.float64(5.0)),
         moments(2 / 7, (10 / (49 * 8)) ** 0.5)),
        (f"dirichlet [1, 2, 3] {h}x{w // 3}x3", lambda rnd: lambda k, al: rnd.dirichlet(k, al, (h, w // 3)),
         (np.array([1.0, 2.0, 3.0]),), None),
        (f"multivariate_normal n=3 {h * w // 3}x3 f64", lambda rnd: lambda k, m, cv: rnd.multivariate_normal(
            k, m, cv, (h * w // 3,)), (mean3, cov3),
         lambda v: None if np.allclose(v.mean(0), mean3, atol=0.02) and np.allclose(np.cov(v.T), cov3, atol=0.03)
         else f"mean {v.mean(0)}, cov {np.cov(v.T)}"),
        (f"chisquare df=3 {h}x{w} f64", lambda rnd: lambda k, d: rnd.chisquare(k, d, shape), (np.float64(3.0),),
         moments(3.0, 6 ** 0.5, 0.03)),
        (f"t df=5 {h}x{w} f64", lambda rnd: lambda k, d: rnd.t(k, d, shape), (np.float64(5.0),),
         moments(0.0, (5 / 3) ** 0.5, 0.03)),
        (f"poisson lam=4 {h}x{w}", lambda rnd: lambda k, m: rnd.poisson(k, m, shape), (lam,), moments(4.0, 2.0, 0.02)),
        (f"poisson lam=50 {h}x{w}", lambda rnd: lambda k, m: rnd.poisson(k, m, shape), (np.float64(50.0),),
         moments(50.0, 50 ** 0.5, 0.05)),
    ]
    return cases


def samplers(r):
    """Every random sampler, jitted, on a fixed key: ours (`jit`) against JAX (`jax.jit`, x64, threefry keys).
    Run alone with --samplers. Our outputs get a loose moment / validity check where one is cheap."""
    xp, T = _ours()
    shape = (200, 240) if r.quick else (1000, 1200)
    reps = 3 if r.quick else 7
    cases = _sampler_cases(shape, 10_000 if r.quick else 100_000, 100 if r.quick else 1000)
    for label, make, operands, check in cases:
        label = f"random.{label} (jit)"

        def ours_fn(make=make, operands=operands, check=check, label=label):
            from transforms import random as rnd
            f, args = T.jit(make(rnd)), (rnd.key(0),) + tuple(xp.asarray(o) for o in operands)
            err = check(np.asarray(f(*args))) if check is not None else None
            if err:
                r.problems.append(f"{label}: implausible sample: {err}")
            return bench(lambda: f(*args).block_until_ready(), repeats=reps)
        ours = r.run(label, "ours", ours_fn)
        jx = None
        if HAVE_JAX:
            fj, args = jax.jit(make(jax.random)), (jax.random.PRNGKey(0),) + tuple(jnp.asarray(o) for o in operands)
            jx = bench(lambda: fj(*args).block_until_ready(), repeats=reps)
        r.add(label, ours, None, jx)


# --------------------------------------------------------------------------- table

def print_table(r, out=sys.stdout):
    header = ("workload", "ours", "numpy", "jax", "ours/numpy", "ours/jax")
    rows = [header] + [(lab, fmt_time(o), fmt_time(n), fmt_time(j), fmt_ratio(o, n), fmt_ratio(o, j))
                       for lab, o, n, j in r.rows]
    if not JAX_AVAILABLE:   # no JAX installed: drop its two columns
        rows = [row[:3] + row[4:5] for row in rows]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    line = lambda row: "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths)))
    print(line(rows[0]), file=out)
    print("  ".join("-" * w for w in widths), file=out)
    for row in rows[1:]:
        print(line(row), file=out)


def run_sections(r, sections):
    """Run each benchmark section, recording (not raising) failures; prints progress."""
    for section in sections:
        t0 = time.perf_counter()
        try:
            section(r)
        except Exception:
            r.problems.append(f"section {section.__name__} aborted:\n{traceback.format_exc()}")
        print(f"  ... {section.__name__} done in {time.perf_counter() - t0:.1f} s", flush=True)


def jax_child_payload(script, quick, problems):
    """Run `script --jax-child` (JAX in its own process) and return its JSON payload, or None."""
    t0 = time.perf_counter()
    cmd = [sys.executable, os.path.abspath(script), "--jax-child"] + (["--quick"] if quick else []) + \
        (["--samplers"] if SECTIONS == (samplers,) else [])
    proc = subprocess.run(cmd, capture_output=True, text=True)
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("JAXROWS ")), None)
    print(f"  ... JAX (child process) done in {time.perf_counter() - t0:.1f} s", flush=True)
    if line is None:
        problems.append(f"JAX child process failed:\n{proc.stderr[-2000:]}")
        return None
    return json.loads(line[len("JAXROWS "):])


def jax_version_line(quick):
    jax_version = "not installed (column omitted)"
    if JAX_AVAILABLE:
        from importlib.metadata import version
        jax_version = version("jax") + " (timed in a separate process)"
    return f"numpy {np.__version__}; jax {jax_version}{'; --quick' if quick else ''}"


SECTIONS = (eager_ops, jit_overhead, trace_compile, seed_workloads, namespace_overhead, eager_small, eager_composites)
EAGER_SECTIONS = (eager_ops, namespace_overhead, eager_small, eager_composites)


def eager_modes_table(script, quick, problems):
    """Our eager rows under each ARRAY_NAMESPACE_EAGER mode (host kernels with host-held values, XLA single-op
    executables), each in a child process."""
    cols = {}
    for mode in ("host", "xla"):
        t0 = time.perf_counter()
        env = dict(os.environ, ARRAY_NAMESPACE_EAGER=mode)
        cmd = [sys.executable, os.path.abspath(script), "--ours-child"] + (["--quick"] if quick else [])
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
        line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("OURSROWS ")), None)
        print(f"  ... eager mode {mode} (child process) done in {time.perf_counter() - t0:.1f} s", flush=True)
        if line is None:
            problems.append(f"eager mode {mode} child failed:\n{proc.stderr[-2000:]}")
            continue
        cols[mode] = dict((lab, t) for lab, t in json.loads(line[len("OURSROWS "):]))
    labels = [lab for lab in next(iter(cols.values()), {})]
    rows = [("workload (ours, by eager mode)", "host", "xla", "xla/host")]
    for lab in labels:
        h, x = (cols.get(m, {}).get(lab) for m in ("host", "xla"))
        rows.append((lab, fmt_time(h), fmt_time(x), fmt_ratio(x, h)))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    line = lambda row: "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths)))  # noqa: E731
    print()
    print(line(rows[0]))
    print("  ".join("-" * w for w in widths))
    for row in rows[1:]:
        print(line(row))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes and few repeats (smoke run)")
    ap.add_argument("--jax-child", action="store_true", help="internal: time only JAX, print JSON rows")
    ap.add_argument("--ours-child", action="store_true", help="internal: time only our eager rows, print JSON")
    ap.add_argument("--eager-modes", action="store_true",
                    help="also time our eager rows under ARRAY_NAMESPACE_EAGER=host/xla (child processes)")
    ap.add_argument("--only-eager", action="store_true", help="run only the eager sections")
    ap.add_argument("--samplers", action="store_true", help="run only the random-sampler table (ours jit vs jax.jit)")
    args = ap.parse_args(argv)
    r = Runner(args.quick)
    t_start = time.perf_counter()
    if args.ours_child:
        run_sections(r, EAGER_SECTIONS)
        print("OURSROWS " + json.dumps([(lab, o) for lab, o, _, _ in r.rows]))
        return 0
    global SECTIONS
    if args.only_eager:
        SECTIONS = EAGER_SECTIONS
    if args.samplers:
        SECTIONS = (samplers,)
    if args.jax_child:
        run_sections(r, SECTIONS)
        print("JAXROWS " + json.dumps({"rows": [(lab, j) for lab, _, _, j in r.rows],
                                       "notes": [n for n in r.notes if "jax" in n],
                                       "problems": [p for p in r.problems if "jax" in p.lower()]}))
        return 0
    print(jax_version_line(args.quick), flush=True)
    run_sections(r, SECTIONS)
    if JAX_AVAILABLE:
        payload = jax_child_payload(__file__, args.quick, r.problems)
        if payload is not None:
            jax_rows = dict((lab, t) for lab, t in payload["rows"])
            r.rows = [(lab, o, n, jax_rows.get(lab)) for lab, o, n, _ in r.rows]
            r.notes += [f"(from the JAX process) {n}" for n in payload["notes"]]
            r.problems += [f"(JAX process) {p}" for p in payload["problems"]]
    print()
    print_table(r)
    print(f"\n(total {time.perf_counter() - t_start:.1f} s; times are per call, best of repeats; "
          "ratios > 1 mean ours is slower)")
    for note in r.notes:
        print(f"note: {note}")
    if args.eager_modes:
        eager_modes_table(__file__, args.quick, r.problems)
    if r.problems:
        print(f"\n{len(r.problems)} problem(s):")
        for p in r.problems:
            print("-", p.rstrip())
    return 1 if r.problems else 0


def _fresh_compile_cache():
    """An empty persistent compilation cache for this run (and its child processes): first-call rows time a
    trace and compile, never a load of what an earlier run wrote (the fresh functions' constants repeat)."""
    import atexit
    import shutil
    import tempfile
    if "ARRAY_NAMESPACE_BENCH_CACHE_SET" in os.environ:   # (a child: the parent's empty directory)
        return
    d = tempfile.mkdtemp(prefix="bench_core_xla_cache_")
    os.environ["ARRAY_NAMESPACE_CACHE_DIR"] = d
    os.environ["ARRAY_NAMESPACE_BENCH_CACHE_SET"] = "1"
    atexit.register(shutil.rmtree, d, True)


if __name__ == "__main__":
    _fresh_compile_cache()
    sys.exit(main())
