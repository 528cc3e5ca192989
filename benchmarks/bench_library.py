"""Library benchmark: scipy and scikit-learn calls on this backend vs array_api_strict, torch, NumPy, JAX.

Why: a drop-in Array API backend is used eagerly, through library code, on ever-changing
shapes (issue 10, item 3; issue 23, item 4). This script times a fixed list of scipy / scikit-learn calls on
small and medium inputs on each backend, cold and warm, and checks every result against
array_api_strict's (NumPy underneath), so it doubles as a correctness check.

Run (from the repository root; ``src`` is put on the path if the package is not installed):

    python benchmarks/bench_library.py                 # small and medium inputs
    python benchmarks/bench_library.py --quick         # small inputs, fewer repeats (smoke run)
    python benchmarks/bench_library.py --only zscore   # calls whose name contains 'zscore'
    python benchmarks/bench_library.py --size medium   # medium inputs only (same shapes as the full run)
    python benchmarks/bench_library.py --json out.json # also write every number as JSON
    python benchmarks/bench_library.py --backends ours,torch,numpy  # strict always runs (the reference)

On a shared machine, OpenBLAS's worker threads (NumPy's, and scipy's, which XLA's LAPACK calls use) wait for
cores other processes hold: a 2000x80 SVD took 1.3-1.9 s instead of 80 ms at load 11 on 2 cores. The children
inherit the environment, so ``OPENBLAS_NUM_THREADS=1`` makes such rows comparable; the warm CPU-time table is
steadier than wall time there too.

torch runs its CPU kernels on GNU OpenMP workers that spin after each parallel region (libgomp's default wait
policy), so it splits an op over the cores from ~32k elements at almost no hand-off cost; ours sleep between tasks
(issue 23: nothing spins), and waking one costs more than a 2000x70 elementwise op (2 vCPUs: a thread-pool round
trip ~90 us; add of 2024x74 float64: torch 17 us spinning, 96 us with ``OMP_WAIT_POLICY=PASSIVE``, ours 54 us).
``OMP_WAIT_POLICY=PASSIVE`` makes torch's workers sleep as ours do (only torch reads it: NumPy's and scipy's
OpenBLAS are pthread builds, XLA's pool is Eigen's), for a like-for-like torch column.

Backends: ``ours`` (array_namespace), ``strict`` (array_api_strict, the reference; required),
``torch`` (torch CPU tensors, float64; the libraries reach them through their vendored
``array_api_compat.torch``), ``numpy`` (plain NumPy arrays, which the libraries wrap in their
vendored ``array_api_compat.numpy`` under array-API dispatch; always available) and ``jax``
(jax.numpy, x64 enabled), the optional ones when installed, and ``jit`` (ours, each whole library call under
our ``transforms.jit``, its values guarded: issue 25; cold = trace + compile + run, warm = the compiled program
with its guard check; a call the library cannot run under jit reads n/a with the library line). Each backend runs in its own child
process (``--child NAME``) so that caches and jaxlib's process-wide C++ state never interfere (our
package is imported in the ``ours`` child only; each child reports the modules it imported and
the namespace scipy and scikit-learn picked), with ``SCIPY_ARRAY_API=1`` set before scipy is imported,
``sklearn.set_config(array_api_dispatch=True)``, and ``XDG_CACHE_HOME`` and
``ARRAY_NAMESPACE_CACHE_DIR`` pointed at a fresh empty directory (so a persistent compilation
cache cannot make a "cold" run warm).

COLD: the first call of each function on a never-seen shape. Every call of the list gets its
own input shape (rows and columns offset by the call's index), so no earlier call of the
process has compiled or cached anything for its shapes. Imports and backend start-up
(one tiny array op) happen before, and are reported separately.
WARM: the median of repeated calls on the same inputs after one extra warm-up call.
Before each call's timings the child collects garbage, and it pauses the collector while timing (as
`timeit` does), in every backend alike: a 10-40 ms full collection would otherwise land on one cold call.
Results are blocked on inside the timed region (ours: ``block_until_ready``; JAX:
``jax.block_until_ready``; strict, torch CPU and NumPy are synchronous).
A compile of ours stores its executable in the persistent cache from a background thread; until that write is
done, the thread and the timed calls hand the GIL back and forth at every switch interval (a 2-vCPU VM: the first
row's warm calls ran ~1.7x slower while the start-up jit's entry was written). So ours' child waits for pending
writes at the end of start-up and inside each cold timing (the cold call's own compile): warm is the steady state,
and the cold time holds all the work the first call caused.

A call whose result differs from array_api_strict's (``allclose`` with the call's tolerance),
or whose warm result differs from its cold one, or that raises on ours, is reported as FAIL
with the reason, never timed silently; totals and goals use only calls that passed on both sides. On a
backend other than ours, a call that raises (the backend lacks a function or an operation the
library needs) reads ``n/a`` and is listed with its reason: it does not fail the run.

Summary: the per-call ratios ours/strict, ours/torch, ours/numpy and ours/jax, cold and warm; their
totals; and issue 23's goals: cold and warm at or below torch CPU and array_api_strict, warm
within 2x of plain NumPy, faster than JAX on every call (cold and warm).
"""
import argparse
import contextlib
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(os.path.dirname(HERE), "src")
sys.path.insert(0, HERE)
from bench_core import fmt_time  # noqa: E402  (shared formatting helper)

BACKENDS = ("strict", "ours", "jit", "torch", "numpy", "jax")      # the order the children run in
COLUMNS = ("ours", "strict", "jit", "torch", "numpy", "jax")       # the order of the table's columns
BACKEND_MODULE = {"ours": "array_namespace", "jit": "array_namespace", "strict": "array_api_strict",
                  "jax": "jax", "torch": "torch", "numpy": "numpy"}
# Modules whose presence in a child's sys.modules is reported: a child imports its own backend only.
WATCHED_MODULES = ("array_namespace", "array_api_strict", "jax", "torch")
SMALL, MEDIUM = (50, 20), (2000, 50)
CHILD_TIMEOUT_S = 3600


# --------------------------------------------------------------------------- the fixed call list
# Each case: (name, make_inputs(rng, n, p) -> dict of NumPy arrays, call(L, a) -> array or
# tuple of arrays, rtol, atol). ``L`` holds the imported libraries; ``a`` the inputs converted
# to the backend. Inputs are float64 (labels int64).

def _x(rng, n, p):
    return {"X": rng.standard_normal((n, p))}


def _xy(rng, n, p):
    X = rng.standard_normal((n, p))
    return {"X": X, "Y": 0.6 * X + 0.8 * rng.standard_normal((n, p))}


def _reg(rng, n, p):
    X = rng.standard_normal((n, p))
    return {"X": X, "y": X @ rng.standard_normal(p) + 0.1 * rng.standard_normal(n)}


def _r2(rng, n, p):
    y = rng.standard_normal(n * p)
    return {"y": y, "yhat": y + 0.3 * rng.standard_normal(n * p)}


def _cls(k):
    def make(rng, n, p):
        X = rng.standard_normal((n, p))
        y = np.arange(n) % k                      # every class present, balanced
        X[:, :2] += y[:, None] * 1.5              # separable-ish along two features
        return {"X": X, "y": y.astype(np.int64)}
    return make


def _gmm(rng, n, p):
    centers = rng.standard_normal((3, p)) * 4.0
    return {"X": centers[np.arange(n) % 3] + rng.standard_normal((n, p))}


def _pearsonr(L, a):
    r = L.stats.pearsonr(a["X"], a["Y"], axis=0)
    return r.statistic, r.pvalue


def _gmm_fit(L, a):
    gm = L.sk.mixture.GaussianMixture(n_components=3, covariance_type="full", init_params="random",
                                      max_iter=10, tol=0.0, random_state=0).fit(a["X"])
    return gm.weights_, gm.means_, gm.covariances_


CASES = [
    ("special.logsumexp(axis=1)", _x, lambda L, a: L.special.logsumexp(a["X"], axis=1), 1e-9, 1e-12),
    ("stats.zscore(axis=0)", _x, lambda L, a: L.stats.zscore(a["X"], axis=0), 1e-9, 1e-12),
    ("stats.pearsonr(axis=0)", _xy, _pearsonr, 1e-7, 1e-12),
    ("stats.skew(axis=0)", _x, lambda L, a: L.stats.skew(a["X"], axis=0), 1e-8, 1e-12),
    ("stats.moment(order=3)", _x, lambda L, a: L.stats.moment(a["X"], order=3, axis=0), 1e-8, 1e-12),
    ("signal.envelope(axis=-1)", _x, lambda L, a: L.signal.envelope(a["X"], axis=-1), 1e-8, 1e-10),
    ("signal.gauss_spline(n=3)", _x, lambda L, a: L.signal.gauss_spline(a["X"], 3), 1e-9, 1e-12),
    ("integrate.trapezoid(axis=0)", _x, lambda L, a: L.integrate.trapezoid(a["X"], axis=0), 1e-9, 1e-12),
    ("integrate.cumulative_trapezoid", _x,
     lambda L, a: L.integrate.cumulative_trapezoid(a["X"], axis=0), 1e-9, 1e-12),
    ("StandardScaler.fit_transform", _x,
     lambda L, a: L.sk.preprocessing.StandardScaler().fit_transform(a["X"]), 1e-9, 1e-12),
    ("PCA(5, full).fit_transform", _x,
     lambda L, a: L.sk.decomposition.PCA(n_components=5, svd_solver="full").fit_transform(a["X"]),
     1e-7, 1e-9),
    ("Ridge.fit+predict", _reg,
     lambda L, a: L.sk.linear_model.Ridge(alpha=1.0).fit(a["X"], a["y"]).predict(a["X"]), 1e-8, 1e-10),
    ("LogisticRegression(lbfgs).fit+proba", _cls(2),
     lambda L, a: L.sk.linear_model.LogisticRegression().fit(a["X"], a["y"]).predict_proba(a["X"]),
     1e-4, 1e-5),
    ("LDA.fit+predict_proba", _cls(3),
     lambda L, a: L.sk.discriminant_analysis.LinearDiscriminantAnalysis().fit(
         a["X"], a["y"]).predict_proba(a["X"]), 1e-7, 1e-9),
    ("metrics.r2_score", _r2, lambda L, a: L.sk.metrics.r2_score(a["y"], a["yhat"]), 1e-9, 1e-12),
    ("metrics.euclidean_distances", _x,
     lambda L, a: L.sk.metrics.pairwise.euclidean_distances(a["X"]), 1e-7, 1e-7),
    ("GaussianMixture(3, random).fit", _gmm, _gmm_fit, 1e-5, 1e-7),
]

NOTES = [
    "signal: envelope and gauss_spline are array-API generic in scipy 1.17.1 (default "
    "xp_capabilities, no cpu_only conversion to NumPy); most other scipy.signal functions convert "
    "to NumPy for backends other than cupy/jax/torch",
    "scikit-learn 1.9.1 array-API support (estimator tags): LogisticRegression only with "
    "solver='lbfgs' (the default, used here); GaussianMixture only with init_params 'random' or "
    "'random_from_data' and warm_start=False (used: init_params='random', 10 EM steps, tol=0)",
]


def call_list(sizes, only):
    """[(index, name, size_label, (n, p), case)] — the shape is offset by the index so every
    call sees shapes no earlier call in the process has seen."""
    out, i = [], 0
    for label, size in sizes:
        for case in CASES:
            if size is not None and (only is None or only.lower() in case[0].lower()):
                n0, p0 = size
                out.append((i, case[0], label, (n0 + i, p0 + i), case))
            i += 1
    return out


# --------------------------------------------------------------------------- child process

class Libs:
    """The libraries a call uses, imported after SCIPY_ARRAY_API is set."""

    def __init__(self):
        import scipy.integrate
        import scipy.signal
        import scipy.special
        import scipy.stats
        import sklearn
        import sklearn.decomposition
        import sklearn.discriminant_analysis
        import sklearn.linear_model
        import sklearn.metrics
        import sklearn.metrics.pairwise
        import sklearn.mixture
        import sklearn.preprocessing
        sklearn.set_config(array_api_dispatch=True)
        self.special, self.stats, self.signal = scipy.special, scipy.stats, scipy.signal
        self.integrate, self.sk = scipy.integrate, sklearn


def _settle_for(name):
    """A function that waits for the backend's background work (ours: pending compile-cache writes)."""
    if name in ("ours", "jit"):
        from xla import compile_cache
        return compile_cache.flush
    return lambda: None


def backend_funcs(name):
    """(to_backend(np_array), block(result), to_numpy(array)) for one backend."""
    if name in ("ours", "jit"):
        import array_namespace as xp
        from bench_core import _block
        return xp.asarray, _block, np.asarray
    if name == "strict":
        import array_api_strict as xp
        return xp.asarray, (lambda r: r), np.from_dlpack
    if name == "jax":
        import jax
        jax.config.update("jax_enable_x64", True)
        import jax.numpy as jnp
        return jnp.asarray, jax.block_until_ready, np.asarray
    if name == "torch":
        import torch
        return ((lambda v: torch.asarray(v, device="cpu")), (lambda r: r),
                (lambda t: t.detach().cpu().numpy()))
    if name == "numpy":
        return np.asarray, (lambda r: r), np.asarray
    raise ValueError(f"unknown backend {name!r}")


def _leaves(r):
    return list(r) if isinstance(r, (tuple, list)) else [r]


def _as_np(to_np, v):
    """A result leaf as a float64 NumPy array (Python/NumPy scalars, e.g. r2_score, as 0-d)."""
    if isinstance(v, (bool, int, float, complex, np.generic, np.ndarray)):
        return np.asarray(v, dtype=np.float64)
    return np.asarray(to_np(v), dtype=np.float64)


@contextlib.contextmanager
def _no_gc_pauses():
    """Garbage collected before a call's timings and the collector paused during them (as `timeit` does),
    the same in every backend's child: a full collection of a process holding scipy, scikit-learn and a
    backend takes 10-40 ms and otherwise lands on whichever single cold call happens to trigger it."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def run_child(backend, quick, only, results_dir, size=None):
    t0 = time.perf_counter()
    os.environ["SCIPY_ARRAY_API"] = "1"           # before anything imports scipy
    L = Libs()
    to_b, block, to_np = backend_funcs(backend)
    settle = _settle_for(backend)
    t_import = time.perf_counter() - t0
    t0 = time.perf_counter()
    block(to_b(np.ones(3)) * 2.0)                 # start the device / client once, on shape (3,)
    if backend in ("ours", "jit"):   # ours starts its runtime at its first XLA use (jaxlib's client, whose first
        from transforms import jit   # conversion from NumPy imports ml_dtypes: ~1 s on a 2-core VM), JAX at import
        block(jit(lambda v: v * 2.0)(to_b(np.ones(3))))
    settle()
    t_init = time.perf_counter() - t0
    print("META " + json.dumps({"import_s": t_import, "init_s": t_init,
                                "namespaces": _library_namespaces(to_b(np.ones(3)))}), flush=True)

    reps, budget = (5, 0.5) if quick else (15, 3.0)
    for idx, name, label, (n, p), case in call_list(sizes_for(quick, size), only):
        _, make, call, rtol, atol = case
        if backend == "jit":   # the whole library call under our jit (guarded specialisation, issue 25)
            call = _jitted(call, L)
        rec = {"idx": idx, "name": name, "size": label, "shape": [n, p], "cold": None,
               "warm": None, "error": None}
        try:
            inputs = make(np.random.default_rng(1000 + idx), n, p)
            a = {k: to_b(v) for k, v in inputs.items()}
            block(list(a.values()))
            with warnings.catch_warnings(), _no_gc_pauses():
                warnings.simplefilter("ignore")
                t = time.perf_counter()
                out = block(call(L, a))
                settle()
                rec["cold"] = time.perf_counter() - t
                cold_np = [_as_np(to_np, v) for v in _leaves(out)]
                block(call(L, a))                 # one more warm-up call
                times, cpu, t_all = [], [], time.perf_counter()
                while len(times) < reps and (len(times) < 3 or time.perf_counter() - t_all < budget):
                    t, c = time.perf_counter(), time.process_time()
                    out = block(call(L, a))
                    times.append(time.perf_counter() - t)
                    cpu.append(time.process_time() - c)
            rec["warm"] = statistics.median(times)
            rec["warm_cpu"] = statistics.median(cpu)
            if hasattr(call, "jitted"):           # traces over the cold, warm-up and warm calls (1 = no retrace)
                rec["traces"] = call.jitted.trace_count
            rec["warm_reps"] = len(times)
            warm_np = [_as_np(to_np, v) for v in _leaves(out)]
            bad = [i for i, (c, w) in enumerate(zip(cold_np, warm_np))
                   if c.shape != w.shape or not np.allclose(c, w, rtol=rtol, atol=atol, equal_nan=True)]
            if len(cold_np) != len(warm_np) or bad:
                rec["error"] = f"warm result differs from the cold one (output(s) {bad})"
            np.savez(os.path.join(results_dir, f"{backend}-{idx}.npz"), *cold_np)
        except Exception as e:
            rec["error"] = f"{type(e).__name__}: {e}".splitlines()[0][:300]
            rec["traceback"] = traceback.format_exc()[-3000:]
        print("CASE " + json.dumps(rec), flush=True)
    print("MODULES " + json.dumps(sorted(m for m in WATCHED_MODULES if m in sys.modules)), flush=True)
    return 0


def _jitted(call, L):
    """call(L, a) as one jitted function of the inputs `a` (a dict of arrays): traced and compiled on the first
    (cold) call, then the compiled program with its guard check (warm)."""
    import functools
    from transforms import jit
    f = jit(functools.partial(call, L))
    g = lambda L, a: f(a)
    g.jitted = f
    return g


def _library_namespaces(x):
    """The array namespace scipy and scikit-learn pick for one of the backend's arrays (their private
    helpers; 'unknown: ...' if those move): shows the torch and NumPy columns go through the libraries'
    vendored array_api_compat.torch / array_api_compat.numpy."""
    out = {}
    try:
        from scipy._lib._array_api import array_namespace
        out["scipy"] = array_namespace(x).__name__
    except Exception as e:
        out["scipy"] = f"unknown: {type(e).__name__}"
    try:
        from sklearn.utils._array_api import get_namespace
        out["scikit-learn"] = get_namespace(x)[0].__name__
    except Exception as e:
        out["scikit-learn"] = f"unknown: {type(e).__name__}"
    return out


def sizes_for(quick, size=None):
    """The input sizes run: small only with --quick, else small and medium, or the one --size names (the call
    indices, hence the shapes, stay those of the full run, so a --size medium run times the same shapes)."""
    sizes = [("small", SMALL)] if quick else [("small", SMALL), ("medium", MEDIUM)]
    return [(label, s if size in (None, label) else None) for label, s in sizes]


# --------------------------------------------------------------------------- parent

def available_backends():
    import importlib.util
    out = []
    for b in BACKENDS:
        if b in ("ours", "jit"):
            out.append(b)           # made importable through PYTHONPATH=src if needed
        elif importlib.util.find_spec(BACKEND_MODULE[b]) is not None:
            out.append(b)
    return out


def spawn(backend, args, results_dir):
    """Run one backend's child; returns (meta, {idx: record}, problem or None)."""
    cmd = [sys.executable, os.path.abspath(__file__), "--child", backend, "--results-dir", results_dir]
    cmd += (["--quick"] if args.quick else []) + (["--only", args.only] if args.only else [])
    cmd += ["--size", args.size] if args.size else []
    cache = os.path.join(results_dir, f"cache-{backend}")       # fresh: a cold run stays cold
    env = dict(os.environ, SCIPY_ARRAY_API="1", XDG_CACHE_HOME=cache, ARRAY_NAMESPACE_CACHE_DIR=cache)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [SRC, env.get("PYTHONPATH")]))
    t0 = time.perf_counter()
    problem, stdout = None, ""
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=CHILD_TIMEOUT_S)
        stdout = proc.stdout
        if proc.returncode != 0:
            problem = f"{backend} child exited with {proc.returncode}:\n{proc.stderr[-2000:]}"
    except subprocess.TimeoutExpired as e:
        stdout = (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        problem = f"{backend} child timed out after {CHILD_TIMEOUT_S} s (partial results kept)"
    meta, recs = {}, {}
    for ln in stdout.splitlines():
        if ln.startswith("META "):
            meta.update(json.loads(ln[5:]))
        elif ln.startswith("MODULES "):
            meta["modules"] = json.loads(ln[8:])
            foreign = [m for m in meta["modules"] if m != BACKEND_MODULE[backend]]
            if foreign and problem is None:
                problem = f"{backend} child imported another backend's module(s): {', '.join(foreign)}"
        elif ln.startswith("CASE "):
            r = json.loads(ln[5:])
            recs[r["idx"]] = r
    print(f"  ... {backend}: {len(recs)} calls in {time.perf_counter() - t0:.1f} s", flush=True)
    return meta, recs, problem


def check_against_strict(recs, results_dir, calls):
    """Mark each non-strict record whose result differs from strict's as failed."""
    for idx, name, _, _, case in calls:
        ref_path = os.path.join(results_dir, f"strict-{idx}.npz")
        for b, by_idx in recs.items():
            r = by_idx.get(idx)
            if b == "strict" or r is None or r["error"]:
                continue
            if not os.path.exists(ref_path):
                r["error"] = "no array_api_strict result to check against"
                continue
            with np.load(ref_path) as ref, np.load(os.path.join(results_dir, f"{b}-{idx}.npz")) as got:
                keys = sorted(ref.files)
                if sorted(got.files) != keys:
                    r["error"] = f"WRONG: {len(got.files)} outputs, strict has {len(keys)}"
                    continue
                for k in keys:
                    w, g = ref[k], got[k]
                    if g.shape != w.shape:
                        r["error"] = f"WRONG: output {k} shape {g.shape}, strict {w.shape}"
                        break
                    if not np.allclose(g, w, rtol=case[3], atol=case[4], equal_nan=True):
                        err = np.nanmax(np.abs(g - w)) if g.size else 0.0
                        r["error"] = (f"WRONG vs strict: output {k} max abs err {err:.3g} "
                                      f"(rtol {case[3]}, atol {case[4]})")
                        break


def did_not_run(backend, r):
    """A call that raised on a backend other than ours: that backend cannot run it (it lacks a function
    or an operation the library needs). Recorded as n/a with its reason; it does not fail the run."""
    return backend != "ours" and r is not None and bool(r["error"]) and "traceback" in r


def ok(r):
    return r is not None and not r["error"]


def cell(backend, r, key):
    if r is None:
        return "-"
    if did_not_run(backend, r):
        return "n/a"
    return "FAIL" if r["error"] else fmt_time(r[key])


def fmt_ratio(a, b):
    """a/b as '1.23x'; below 0.1 with two significant digits ('0.00063x': JAX's cold calls), not '0.00x'."""
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b > 0:
        r = a / b
        return f"{r:.2f}x" if r >= 0.1 else f"{r:.2g}x"
    return "-"


def ratio(ra, rb, key):
    if not ok(ra) or not ok(rb):
        return "-"
    return fmt_ratio(ra[key], rb[key])


def print_table(rows, out=sys.stdout):
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    line = lambda row: "  ".join(c.ljust(w) if i < 2 else c.rjust(w)
                                 for i, (c, w) in enumerate(zip(row, widths)))
    print(line(rows[0]), file=out)
    print("  ".join("-" * w for w in widths), file=out)
    for row in rows[1:]:
        print(line(row), file=out)


BACKEND_LABEL = {"strict": "array_api_strict", "jit": "ours under jit", "torch": "torch CPU", "numpy": "plain NumPy",
                 "jax": "JAX"}
# Issue 23's goals: (other backend, cold/warm, limit on ours/other per call and in total, goal).
GOALS = [
    ("strict", "cold", 1.0, "cold at or below array_api_strict"),
    ("strict", "warm", 1.0, "warm at or below array_api_strict"),
    ("torch", "cold", 1.0, "cold at or below torch CPU"),
    ("torch", "warm", 1.0, "warm at or below torch CPU"),
    ("numpy", "warm", 2.0, "warm within 2x of plain NumPy"),
    ("jax", "cold", 1.0, "faster than JAX on every call, cold"),
    ("jax", "warm", 1.0, "faster than JAX on every call, warm"),
]


def summarize(calls, recs, present, missing_why):
    """Totals (per pair of backends, over calls passing on both) and issue 23's goals."""
    ours = recs.get("ours", {})
    totals, goals = {}, []
    for other in [b for b in COLUMNS if b != "ours" and b in present]:
        both = [i for i, *_ in calls if ok(ours.get(i)) and ok(recs[other].get(i))]
        t = {"calls": len(both)}
        for key in ("cold", "warm"):
            t[f"ours_{key}"] = sum(ours[i][key] for i in both)
            t[f"{other}_{key}"] = sum(recs[other][i][key] for i in both)
        totals[other] = t
    n_calls = len(calls)
    n_fail = sum(1 for i, *_ in calls if not ok(ours.get(i)))
    goals.append(("(prerequisite) ours passes every call (checked against array_api_strict)",
                  n_fail == 0, f"{n_calls - n_fail}/{n_calls} pass"))
    for other, key, limit, text in GOALS:
        if other not in present:
            goals.append((text, None, f"{BACKEND_LABEL[other]} {missing_why.get(other, 'not run')}"))
            continue
        t = totals[other]
        if not t["calls"]:
            goals.append((text, False, f"no call passed on both ours and {BACKEND_LABEL[other]}"))
            continue
        over = []
        for i, name, label, *_ in calls:
            a, b = ours.get(i), recs[other].get(i)
            if ok(a) and ok(b) and a[key] > limit * b[key]:
                over.append(f"{name} [{label}] {fmt_ratio(a[key], b[key])}")
        tot = t[f"ours_{key}"] / t[f"{other}_{key}"] if t[f"{other}_{key}"] else float("nan")
        tot_s = fmt_ratio(t[f"ours_{key}"], t[f"{other}_{key}"])
        n_na = sum(1 for i, *_ in calls if did_not_run(other, recs[other].get(i)))
        detail = (f"total {tot_s} over the {t['calls']} call(s) passing on both"
                  + (f" ({n_na} n/a on {BACKEND_LABEL[other]})" if n_na else "")
                  + f"; {len(over)} call(s) over {limit:g}x" + (": " + "; ".join(over) if over else ""))
        goals.append((text, not over and tot <= limit and n_fail == 0, detail))
    return totals, goals


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="small inputs only, fewer repeats")
    ap.add_argument("--only", default=None, help="run only calls whose name contains this substring")
    ap.add_argument("--size", default=None, choices=("small", "medium"), help="run only this input size")
    ap.add_argument("--json", default=None, help="also write all numbers to this JSON file")
    ap.add_argument("--backends", default=None, help="comma list (default: all installed of "
                    + ",".join(BACKENDS) + "); ours and strict (the reference) always run")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--results-dir", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        return run_child(args.child, args.quick, args.only, args.results_dir, args.size)

    calls = call_list(sizes_for(args.quick, args.size), args.only)
    if not calls:
        print(f"no call matches --only {args.only!r}")
        return 2
    installed = available_backends()
    if "strict" not in installed:
        print("array_api_strict is required as the reference: pip install array-api-strict")
        return 2
    present = list(installed)
    if args.backends:
        want = set(args.backends.split(",")) | {"strict", "ours"}
        unknown = want - set(BACKENDS)
        if unknown:
            print(f"unknown backend(s) {', '.join(sorted(unknown))}; choose from {','.join(BACKENDS)}")
            return 2
        present = [b for b in present if b in want]
    missing_why = {b: ("not installed" if b not in installed else "not selected (--backends)")
                   for b in BACKENDS if b not in present}
    from importlib.metadata import version
    versions = {}
    for pkg in ("numpy", "scipy", "scikit-learn", "array-api-strict", "array-api-compat", "jax", "jaxlib",
                "torch"):
        try:
            versions[pkg] = version(pkg)
        except Exception:
            versions[pkg] = None
    load0 = os.getloadavg()
    print("; ".join(f"{k} {v}" for k, v in versions.items() if v) +
          f"; backends {','.join(present)}; load average {load0[0]:.1f}" +
          ("; --quick" if args.quick else ""), flush=True)
    t_start = time.perf_counter()
    recs, metas, problems = {}, {}, []
    with tempfile.TemporaryDirectory(prefix="bench_library-") as results_dir:
        for b in present:
            metas[b], recs[b], problem = spawn(b, args, results_dir)
            if problem:
                problems.append(problem)
        check_against_strict(recs, results_dir, calls)

    cols = [b for b in COLUMNS if b in present]
    others = cols[1:]
    rows = [["call", "size"] + [f"{b} cold" for b in cols] + [f"{b} warm" for b in cols]]
    rrows = [["call", "size"] + [f"ours/{b} {key}" for b in others for key in ("cold", "warm")]]
    for i, name, label, (n, p), _ in calls:
        rs = {b: recs[b].get(i) for b in cols}
        head = [name, f"{label} {n}x{p}"]
        rows.append(head + [cell(b, rs[b], "cold") for b in cols] + [cell(b, rs[b], "warm") for b in cols])
        rrows.append(head + [ratio(rs["ours"], rs[b], key) for b in others for key in ("cold", "warm")])
    print("\ntimes (cold = first call on a fresh shape in a fresh process; warm = median of repeats; "
          "n/a = the call raises on that backend; FAIL = wrong or unstable result):")
    print_table(rows)
    print("\nratios ours/other per call (> 1 = ours slower; '-' where either side has no time):")
    print_table(rrows)
    print("\nwarm CPU time per call (median; process time of all the child's threads: on a loaded machine "
          "steadier than wall time, which counts time the process waits for a core):")
    print_table([["call", "size"] + [f"{b} warm cpu" for b in cols]] + [
        [name, f"{label} {n}x{p}"] + [cell(b, recs[b].get(i), "warm_cpu") for b in cols]
        for i, name, label, (n, p), _ in calls])
    totals, goals = summarize(calls, recs, present, missing_why)
    print("\ntotals (sum over the calls that passed on both backends of a pair):")
    trows = [["pair", "calls", "ours cold", "other cold", "ours/other cold", "ours warm", "other warm",
              "ours/other warm"]]
    for b, t in totals.items():
        trows.append([f"ours vs {b}", str(t["calls"]), fmt_time(t["ours_cold"]), fmt_time(t[f"{b}_cold"]),
                      fmt_ratio(t["ours_cold"], t[f"{b}_cold"]), fmt_time(t["ours_warm"]),
                      fmt_time(t[f"{b}_warm"]), fmt_ratio(t["ours_warm"], t[f"{b}_warm"])])
    print_table(trows)
    print("\ngoals (issue 23; each per call and in total, over the calls passing on both sides):")
    for text, met, detail in goals:
        print(f"  [{'NOT MEASURED' if met is None else 'MET' if met else 'NOT MET'}] {text}: {detail}")
    load1 = os.getloadavg()
    print(f"\n(total {time.perf_counter() - t_start:.1f} s; load average {load0[0]:.1f} at start, "
          f"{load1[0]:.1f} at end; cold = first call on a fresh shape in a fresh process, warm = median "
          "of repeats; ratios > 1 mean ours is slower)")
    for b in present:
        m = metas.get(b) or {}
        if m:
            ns = m.get("namespaces") or {}
            print(f"note: {b}: imports {fmt_time(m['import_s'])}, backend start-up {fmt_time(m['init_s'])} "
                  "(not in the cold times)"
                  + (f"; namespace used: {'; '.join(f'{k} {v}' for k, v in ns.items())}" if ns else ""))
    for b, why in missing_why.items():
        print(f"note: {b} {why}: its columns are left out")
    for note in NOTES:
        print(f"note: {note}")
    if "jit" in present:
        traces = [f"{r['name']} [{r['size']}] {r['traces']}" for i, *_ in calls for r in [recs["jit"].get(i)]
                  if r and "traces" in r]
        print("note: jit traces over all of a call's runs (1 = traced once): " + "; ".join(traces))
    failures = [(b, r) for b in cols for i, *_ in calls for r in [recs[b].get(i)]
                if r and r["error"] and not did_not_run(b, r)]
    not_run = {}                                  # (backend, reason) -> [call [size]]
    for b in others:
        for i, *_ in calls:
            r = recs[b].get(i)
            if did_not_run(b, r):
                not_run.setdefault((b, r["error"]), []).append(f"{r['name']} [{r['size']}]")
    absent = [(b, name) for b in cols for i, name, *_ in calls if recs[b].get(i) is None]
    if not_run:
        print("\ncalls that do not run on a backend (n/a; recorded, not a failure of the run):")
        for (b, why), where in not_run.items():
            print(f"- [{b}] {len(where)} call(s): {', '.join(where)}: {why}")
    if failures or absent or problems:
        print(f"\n{len(failures) + len(absent) + len(problems)} problem(s):")
        for b, r in failures:
            print(f"- [{b}] {r['name']} [{r['size']}]: {r['error']}")
        for b, name in absent:
            print(f"- [{b}] {name}: no result (child died or timed out)")
        for p in problems:
            print("-", p.rstrip())
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"versions": versions, "quick": args.quick, "only": args.only,
                       "load_average": {"start": load0, "end": load1}, "backends": present,
                       "meta": metas, "calls": [{"idx": i, "name": nm, "size": lb, "shape": [n, p],
                                                 "results": {b: recs[b].get(i) for b in cols},
                                                 "did_not_run": [b for b in others
                                                                 if did_not_run(b, recs[b].get(i))]}
                                                for i, nm, lb, (n, p), _ in calls],
                       "totals": totals, "goals": [{"goal": g, "met": met, "detail": d} for g, met, d in goals],
                       "problems": problems, "notes": NOTES}, f, indent=1)
        print(f"wrote {args.json}")
    ours_fail = any(b == "ours" for b, _ in failures) or any(b == "ours" for b, _ in absent)
    return 1 if ours_fail or problems else 0


if __name__ == "__main__":
    sys.exit(main())
