"""An eager call's result is a function of its inputs (issue 23): the same call on the same values gives the
same bits, however often it was made before, whatever ran in between, in this process or a fresh one.

Every composite family is called many times on one signature with other work interleaved (the same function
at another shape, a 1M-element sin, a 700x700 matmul), for long enough that any choice made by wall clock or
by call count (op by op on host kernels for a budget of time, then compiled, then timed "probes"; the first
calls unstaged, later ones staged) would have flipped at least once, and every result's bytes must be equal.
The whole set runs twice: at the default thresholds, where these operands run op by op on host kernels, and
with every size threshold of the eager policy forced low (`xla.host_eager.BY_OP_MAX_ELEMENTS` = 16, staged
caches cleared), where they run compiled. A subprocess test checks that two fresh processes agree.

Oracle: the call's own first result (bit-for-bit equality of `np.asarray(result).tobytes()`); values are
checked against NumPy elsewhere. A failure names the calls at which each distinct result first appeared.
"""
from __future__ import annotations

import functools
import importlib
import os
import subprocess
import sys
import textwrap
import time
import zlib
from dataclasses import dataclass

import numpy as np
import pytest

import array_namespace as xp
import transforms
from transforms import jaxpr_transforms as JT


# ------------------------------------------------------------------ the cases
@dataclass(frozen=True)
class Case:
    name: str
    fn: object          # fn(*args) -> result (an Array, a tuple/namedtuple of them, a NumPy value)
    make: object        # make(variant, rng) -> args: variant 0 the signature checked, 1 another shape
    heavy: bool = False  # a decomposition, an fft, a loop: its op-by-op budget was 10x (0.5 s) on the old code


def _rng(seed):
    return np.random.default_rng(seed)


def _a(v):
    return xp.asarray(v)


def _normal(shape, dtype):
    def make(k, r):
        s = shape if k == 0 else tuple(n - 3 for n in shape)
        return (_a(r.standard_normal(s).astype(dtype)),)
    return make


def _unif(n, lo, hi, count=1, dtype=np.float64):
    def make(k, r):
        m = n if k == 0 else n - 37
        return tuple(_a(r.uniform(lo, hi, m).astype(dtype)) for _ in range(count))
    return make


def _complex(n, dtype):
    def make(k, r):
        m = n if k == 0 else n - 37
        z = (r.standard_normal(m) + 1j * r.standard_normal(m)) * 3
        z[:4] = [0, 1e-300j, 40 + 1j, -0.5 + 30j]   # (values near an edge of the kernels' domains)
        return (_a(z.astype(dtype)),)
    return make


def _square(n, dtype, spd=False, rhs=False):
    def make(k, r):
        m = n if k == 0 else n - 5
        a = r.standard_normal((m, m))
        if spd:
            a = a @ a.T + m * np.eye(m)
        out = (_a(a.astype(dtype)),)
        if rhs:
            out += (_a(r.standard_normal((m, 7)).astype(dtype)),)
        return out
    return make


def _rect(shape, dtype):
    def make(k, r):
        s = shape if k == 0 else (shape[0] - 5, shape[1] - 3)
        return (_a(r.standard_normal(s).astype(dtype)),)
    return make


def _moments():
    out = []
    for fname in ("mean", "var", "std"):
        f = getattr(xp, fname)
        for axis in (None, 0, 1):
            for dt in (np.float32, np.float64):
                out.append(Case(f"{fname}-axis{axis}-{np.dtype(dt).name}",
                                functools.partial(f, axis=axis), _normal((800, 600), dt)))
    # small operands (the old code ran these on direct kernels, then in one C call)
    out.append(Case("std-small-20x5-axis0-float64", functools.partial(xp.std, axis=0), _normal((20, 5), np.float64)))
    out.append(Case("var-small-60x40-float32", xp.var, _normal((60, 40), np.float32)))
    return out


LINALG = [
    Case("linalg.solve", xp.linalg.solve, _square(96, np.float64, rhs=True), heavy=True),
    Case("linalg.inv", xp.linalg.inv, _square(96, np.float32), heavy=True),
    Case("linalg.svd", xp.linalg.svd, _rect((96, 64), np.float64), heavy=True),
    Case("linalg.eigh", xp.linalg.eigh, _square(96, np.float64, spd=True), heavy=True),
    Case("linalg.pinv", xp.linalg.pinv, _rect((80, 50), np.float32), heavy=True),
    Case("linalg.det", xp.linalg.det, _square(96, np.float64), heavy=True),
    Case("linalg.cholesky", xp.linalg.cholesky, _square(96, np.float32, spd=True), heavy=True),
    Case("linalg.qr", xp.linalg.qr, _rect((96, 64), np.float64), heavy=True),
    Case("linalg.matrix_norm-fro", xp.linalg.matrix_norm, _rect((500, 400), np.float32)),
    Case("linalg.vector_norm", xp.linalg.vector_norm, _rect((500, 400), np.float32)),
    Case("linalg.vector_norm-ord3-axis1", functools.partial(xp.linalg.vector_norm, ord=3, axis=1),
         _rect((500, 400), np.float64)),
]

FFT = [
    Case("fft.fft", xp.fft.fft, lambda k, r: (_a((r.standard_normal((32, 1024 - 24 * k))
                                                   + 1j * r.standard_normal((32, 1024 - 24 * k))).astype(np.complex64)),),
         heavy=True),
    Case("fft.rfft", xp.fft.rfft, _normal((64, 1000), np.float64), heavy=True),
    Case("fft.irfft", xp.fft.irfft, lambda k, r: (_a((r.standard_normal((64, 513 - 20 * k))
                                                       + 1j * r.standard_normal((64, 513 - 20 * k)))),), heavy=True),
    Case("fft.fftn", xp.fft.fftn, lambda k, r: (_a(r.standard_normal((24 - k, 32, 40)).astype(np.float32)),),
         heavy=True),
]


def _special():
    S = xp.special
    out = []
    for n in (1000, 65536):
        out += [
            Case(f"special.ndtri-{n}", S.ndtri, _unif(n, 0.001, 0.999)),
            Case(f"special.erf-{n}-float32", S.erf, _unif(n, -4, 4, dtype=np.float32)),
            Case(f"special.gammaln-{n}", S.gammaln, _unif(n, 0.01, 40)),
            Case(f"special.betainc-{n}", S.betainc, lambda k, r, n=n: _unif(n, 0.5, 6, 2)(k, r)
                 + _unif(n, 0.01, 0.99)(k, r), heavy=True),
            Case(f"special.i0-{n}", S.i0, _unif(n, -30, 30)),
            Case(f"special.digamma-{n}", S.digamma, _unif(n, 0.01, 40)),
            Case(f"special.expit-{n}-float32", S.expit, _unif(n, -20, 20, dtype=np.float32)),
        ]
    out += [Case("special.i1-1000-float32", S.i1, _unif(1000, -30, 30, dtype=np.float32)),
            Case("special.logit-65536", S.logit, _unif(65536, 0.001, 0.999))]
    # (an inverse: its two while_loops staged once per size bucket, its first call at a bucket run plain)
    out.append(Case("special.stdtrit-64", S.stdtrit, lambda k, r: _unif(64, 0.5, 30)(k, r)
                    + _unif(64, 0.01, 0.99)(k, r), heavy=True))
    # (at 1,000 only: op by op, its series takes ~4 s a call at 65,536 elements)
    out.append(Case("special.hyp1f1-1000", S.hyp1f1, lambda k, r: _unif(1000, 0.1, 3, 2)(k, r)
                    + _unif(1000, -5, 5)(k, r), heavy=True))
    return out


COMPLEX = [Case(f"complex.{f}-{np.dtype(dt).name}", getattr(xp, f), _complex(20000, dt))
           for f in ("sin", "cos", "exp", "log") for dt in (np.complex64, np.complex128)]


# eager control flow: module-level bodies, so that a call's jaxpr is the same object each time
def _while_cond(c):
    return c[0] < 60


def _while_body(c):
    i, x = c
    return i + 1, x * 0.97 + xp.sin(x) * 0.05


def _while(x):
    return transforms.while_loop(_while_cond, _while_body, (xp.asarray(0), x))[1]


def _fori_body(i, x):
    return xp.cos(x) * 0.5 + x * 0.25


def _fori(x):
    return transforms.fori_loop(0, 60, _fori_body, x)


def _scan_body(c, row):
    c = c * 0.9 + xp.tanh(row)
    return c, xp.sum(c)


def _scan(x):
    return transforms.scan(_scan_body, xp.zeros_like(x[0]), x)


CONTROL_FLOW = [
    Case("while_loop", _while, _normal((40, 500), np.float64), heavy=True),
    Case("fori_loop", _fori, _normal((40, 500), np.float32), heavy=True),
    Case("scan", _scan, _normal((120, 400), np.float64), heavy=True),
]


def _scipy_cases():
    os.environ["SCIPY_ARRAY_API"] = "1"   # (tests/conftest.py sets it before anything imports scipy)
    from scipy import special as sc, stats as st
    return [
        Case("scipy.special.logsumexp", lambda x: sc.logsumexp(x, axis=1), _normal((300, 200), np.float64)),
        Case("scipy.stats.zscore", lambda x: st.zscore(x, axis=0), _normal((300, 200), np.float32)),
        Case("scipy.stats.skew", lambda x: st.skew(x, axis=0), _normal((300, 200), np.float64)),
    ]


def _sk(fn):
    def run(*args):
        import sklearn
        with sklearn.config_context(array_api_dispatch=True):
            return fn(*args)
    return run


def _sklearn_cases():
    from sklearn.metrics.pairwise import euclidean_distances
    from sklearn.preprocessing import StandardScaler
    return [
        Case("sklearn.StandardScaler", _sk(lambda X: StandardScaler().fit_transform(X)),
             _normal((400, 30), np.float64)),
        Case("sklearn.euclidean_distances", _sk(euclidean_distances),
             lambda k, r: (_a(r.standard_normal((200 - 7 * k, 20))), _a(r.standard_normal((150, 20))))),
    ]


def _all_cases():
    cases = _moments() + LINALG + FFT + _special() + COMPLEX + CONTROL_FLOW
    try:
        cases += _scipy_cases()
    except ImportError:
        pass
    try:
        cases += _sklearn_cases()
    except ImportError:
        pass
    return {c.name: c for c in cases}


CASES = _all_cases()


# ------------------------------------------------------------------ the harness
def _bytes(r):
    """The bytes of a result: every array leaf's dtype, shape and data."""
    if isinstance(r, (tuple, list)):
        return b"|".join(_bytes(x) for x in r)
    a = np.asarray(r)
    return f"{a.dtype.str}{a.shape}".encode() + a.tobytes()


@functools.lru_cache(maxsize=None)
def _distractors():
    """Other work between calls: a large elementwise op (the host kernels' worker threads, fresh memory) and
    a matmul large enough for BLAS's own threads."""
    r = _rng(99)
    big = _a(r.standard_normal(1 << 20).astype(np.float32))
    m1 = _a(r.standard_normal((500, 500)).astype(np.float32))
    m2 = _a(r.standard_normal((500, 500)).astype(np.float32))
    return (lambda: xp.sin(big), lambda: m1 @ m2)


def _interleaved(i):
    """Whether other work follows call i: after calls 0-3, 2^k and 3*2^k (0-4, 6, 8, 12, 16, 24, 32, ...)."""
    return i < 4 or (i & (i - 1)) == 0 or (i % 3 == 0 and ((i // 3) & (i // 3 - 1)) == 0)


def _first_leaf(r):
    while isinstance(r, (tuple, list)):
        r = r[0]
    return r


# The old code ran a composite's first 8 calls at a signature unstaged (array_namespace/_helpers.py
# UNSTAGED_CALLS), then staged, op by op for 0.05 s (0.5 s where the body held a decomposition, an fft or a
# loop) of such calls, then compiled, then timed 16 compiled calls and went back to op by op where that was
# faster. Time is counted from the 8th call on.
_UNSTAGED = 8


def _check(case, spend_s, min_calls, other_shapes=True, max_calls=1000):
    """Call `case` at least min_calls times and until its calls from the _UNSTAGED-th on have taken spend_s
    seconds, other work interleaved (the same function at another shape where other_shapes, a large sin, a
    matmul); every result's bytes must be the first's."""
    r = _rng(zlib.crc32(case.name.encode()))
    args, other = case.make(0, r), case.make(1, r)
    sin_big, matmul = _distractors()
    work = ([lambda: case.fn(*other)] if other_shapes else []) + [sin_big, matmul]
    seen = {}            # result bytes -> the calls that gave it
    spent, i, k = 0.0, 0, 0
    while i < min_calls or (spent < spend_s and i < max_calls):
        t0 = time.perf_counter()
        b = _bytes(case.fn(*args))
        if i >= _UNSTAGED:
            spent += time.perf_counter() - t0
        seen.setdefault(b, []).append(i)
        if _interleaved(i):
            np.asarray(_first_leaf(work[k % len(work)]()))
            k += 1
        i += 1
    if len(seen) > 1:
        firsts = sorted(calls[0] for calls in seen.values())
        counts = [len(seen[b]) for b in sorted(seen, key=lambda b: seen[b][0])]
        pytest.fail(f"{case.name}: {len(seen)} distinct results over {i} calls ({spent:.2f} s of staged calls); "
                    f"first seen at calls {firsts}, {counts} times")


def _clear_staged():
    """Forget every staged body and what was decided per signature (the hooks registered with
    `on_staged_clear` run too), and what the namespace remembers per signature where it does."""
    JT._staged_jaxpr.cache_clear()
    for mod, fn in (("array_namespace._staged", "forget_signatures"),):
        f = getattr(importlib.import_module(mod), fn, None)
        if f is not None:
            f()
    for mod, attr in (("xla.host_eager", "_left"), ("array_namespace._staged", "_SEEN")):
        store = getattr(importlib.import_module(mod), attr, None)
        if isinstance(store, (dict, set)):
            store.clear()


@pytest.fixture
def fresh():
    _clear_staged()
    yield
    _clear_staged()


# every size threshold of the eager policy (xla/host_eager.py), forced low
_THRESHOLDS = [("xla.host_eager", "BY_OP_MAX_ELEMENTS"), ("xla.host_eager", "LOOP_MAX_ELEMENTS")]


def _force_low(monkeypatch, names):
    for mod, attr in names:
        m = importlib.import_module(mod)
        assert hasattr(m, attr), f"the eager policy's threshold {mod}.{attr} moved: update this test"
        monkeypatch.setattr(m, attr, 16)
    _clear_staged()


@pytest.fixture
def low_thresholds(monkeypatch):
    _force_low(monkeypatch, _THRESHOLDS)
    yield
    _clear_staged()


@pytest.fixture
def low_loop_threshold(monkeypatch):
    """Only the loops' threshold low: bodies holding a loop compile, the others run on the host -- the first
    calls of a composite (run unstaged) and its staged calls must still agree."""
    _force_low(monkeypatch, _THRESHOLDS[1:])
    yield
    _clear_staged()


# seconds of calls (from the _UNSTAGED-th on) per case: twice the old light budget, 1.2x the heavy one
_SPEND = {False: 0.1, True: 0.6}

# with thresholds low every case compiles (twice with another shape): a subset, one or more per family,
# without the slowest compiles (hyp1f1's series: ~7 s a bucket on 2 cores)
LOW = ["mean-axis0-float32", "var-axisNone-float64", "std-axis1-float32", "std-small-20x5-axis0-float64",
       "linalg.solve", "linalg.eigh", "linalg.pinv", "linalg.cholesky", "linalg.matrix_norm-fro",
       "linalg.vector_norm-ord3-axis1", "fft.rfft", "fft.fftn",
       "special.ndtri-1000", "special.erf-65536-float32", "special.betainc-1000", "special.i0-1000",
       "special.digamma-65536", "special.expit-1000-float32", "special.logit-65536",
       "complex.sin-complex64", "complex.exp-complex128", "complex.log-complex128",
       "while_loop", "fori_loop", "scan",
       "scipy.special.logsumexp", "scipy.stats.zscore", "scipy.stats.skew",
       "sklearn.StandardScaler", "sklearn.euclidean_distances"]


def _params(names):
    """The cases, the heavy ones (~1-3 s each: a decomposition, an fft, a loop, a series) marked slow."""
    return [pytest.param(n, marks=[pytest.mark.slow] if CASES[n].heavy else []) for n in names if n in CASES]


@pytest.mark.parametrize("name", _params(CASES))
def test_repeated_calls_give_the_same_bits(name, fresh):
    case = CASES[name]
    _check(case, _SPEND[case.heavy], min_calls=12)


@pytest.mark.parametrize("name", _params(LOW))
def test_repeated_calls_give_the_same_bits_with_thresholds_low(name, low_thresholds):
    _check(CASES[name], 0.0, min_calls=14, other_shapes=False)


@pytest.mark.parametrize("name", _params(["special.betainc-1000", "special.i0-1000", "while_loop", "fori_loop",
                                           "scan", "std-small-20x5-axis0-float64", "linalg.solve"]))
def test_repeated_calls_give_the_same_bits_with_the_loop_threshold_low(name, low_loop_threshold):
    _check(CASES[name], 0.0, min_calls=14, other_shapes=False)


def test_the_low_subset_names_cases():
    optional = {n for n in LOW if n.startswith(("scipy.", "sklearn."))}   # (absent where the library is)
    assert set(LOW) - optional <= set(CASES)


# ------------------------------------------------------------------ fresh processes
_SCRIPT = textwrap.dedent("""
    import hashlib, sys, time
    import numpy as np
    import array_namespace as xp
    warm = sys.argv[1] == "warm"
    r = np.random.default_rng(0)
    a = r.standard_normal((96, 96))
    cases = {
        "std": (lambda x: xp.std(x, axis=0), xp.asarray(r.standard_normal((300, 300)).astype(np.float32))),
        "eigh": (lambda x: xp.linalg.eigh(x).eigenvectors, xp.asarray(a @ a.T + 96 * np.eye(96))),
        "pinv": (xp.linalg.pinv, xp.asarray(r.standard_normal((80, 50)).astype(np.float32))),
        "ndtri": (xp.special.ndtri, xp.asarray(r.uniform(0.001, 0.999, 65536))),
    }
    if warm:          # other work first: a large op, a matmul, the cases at other shapes
        np.asarray(xp.sin(xp.asarray(r.standard_normal(1 << 20).astype(np.float32))))
        m = xp.asarray(r.standard_normal((700, 700)))
        np.asarray(m @ m)
        np.asarray(xp.std(xp.ones((299, 300), dtype=xp.float32), axis=0))
        np.asarray(xp.special.ndtri(xp.full(1000, 0.3)))
    for name, (f, x) in cases.items():
        seen = set()
        t0 = time.perf_counter()
        n = 0
        while n < 3 or (warm and time.perf_counter() - t0 < (0.2 if name == "std" else 0.6) and n < 2000):
            seen.add(hashlib.sha256(np.asarray(f(x)).tobytes()).hexdigest())
            n += 1
        print(name, n, " ".join(sorted(seen)))
""")


def _run_fresh(mode):
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([src, os.environ.get("PYTHONPATH", "")]))
    p = subprocess.run([sys.executable, "-c", _SCRIPT, mode], capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    return {line.split()[0]: (int(line.split()[1]), line.split()[2:]) for line in p.stdout.splitlines() if line}


@pytest.mark.slow
def test_two_fresh_processes_give_the_same_bits():
    """A process that calls each function a few times, cold, and one that runs other work first and then calls
    each long enough to cross any budget, see one result each, and the same one."""
    cold, warm = _run_fresh("cold"), _run_fresh("warm")
    assert set(cold) == set(warm) == {"std", "eigh", "pinv", "ndtri"}
    for name in cold:
        (_, c), (n, w) = cold[name], warm[name]
        assert len(c) == 1, f"{name}: {len(c)} distinct results in the cold process"
        assert len(w) == 1, f"{name}: {len(w)} distinct results over {n} calls in the warm process"
        assert c == w, f"{name}: the cold and warm processes disagree"


def test_the_result_bytes_include_shape_and_dtype():
    """(the harness) equal data at another shape or dtype is another result."""
    z = np.zeros(4, np.float32)
    assert len({_bytes(z), _bytes(z.reshape(2, 2)), _bytes(z.view(np.int32)), _bytes(z.astype(np.float64))}) == 4
    assert _bytes((z, z)) == _bytes([z, z]) != _bytes(z)
