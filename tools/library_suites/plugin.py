"""pytest plugin: run a library's own array-API tests with our namespace as a backend.

Why: scikit-learn, array-api-extra and scipy each keep a hard-coded list of array
backends their tests iterate over. This plugin adds ``array_namespace`` to those
lists at collection time (monkeypatching only; the installed packages stay
untouched), so the libraries' own tests become a conformance check for us, run
next to ``array_api_strict`` for comparison.

Load with ``-p library_suites.plugin`` (``tools/`` on ``sys.path``) and pass
``--xp-suite {sklearn,xpx,scipy}`` and ``--xp-backend {ours,strict}``.  By default
only the test items parametrised with the chosen backend are kept (everything
else is deselected); ``--xp-keep-all`` keeps the rest.  ``--xp-report FILE``
writes a JSON summary (outcome counts, wall time, failures with their error
line).  ``--xp-jit`` (our backend, scipy and xpx) puts every function the tests tag with
``lazy_xp_function`` under our jit while a test runs, where upstream puts jax.jit for JAX
(``lazy_jit.py``); the report then says per tagged function whether its tests pass.
``--xp-per-group N`` keeps the first N cases of each test class / module-level test (a sample).
``tools/library_suites/run.py`` drives all of this.
"""
from __future__ import annotations

import functools
import importlib
import json
import os
import subprocess
import sys
import time
import types

import pytest

from library_suites import lazy_jit

OURS = "array_namespace"
STRICT = "array_api_strict"
BACKEND_MODULES = {"ours": OURS, "strict": STRICT}


def pytest_addoption(parser):
    g = parser.getgroup("library_suites", "run library array-API suites on our namespace")
    g.addoption("--xp-suite", choices=("sklearn", "xpx", "scipy"), default=None)
    g.addoption("--xp-backend", choices=tuple(BACKEND_MODULES), default="ours")
    g.addoption("--xp-keep-all", action="store_true", default=False,
                help="keep test items that are not parametrised with the backend")
    g.addoption("--xp-report", default=None, help="write a JSON summary here")
    g.addoption("--xp-label", default="", help="free text stored in the report")
    g.addoption("--xp-per-group", type=int, default=0,
                help="keep only the first N cases of each test class or module-level test function (a sample)")
    g.addoption("--xp-jit", action="store_true", default=False,
                help="our backend: functions tagged with lazy_xp_function run under our jit")


class _State:
    suite = None
    backend = None           # "ours" | "strict"
    modname = None           # importable module name of the backend
    token = None             # what identifies the backend in test params
    xpx_member = None        # array-api-extra Backend enum member
    scipy_param = None       # pytest.param for scipy's xp fixture
    jit = False              # --xp-jit: tagged functions under our jit
    jit_testing = None       # the library's array_api_extra.testing module (patched)
    tagged = {}              # tagged functions the kept tests' modules reach -> jax_jit tag
    xpx_param = None         # pytest.param for array-api-extra's library fixture


S = _State()


# --------------------------------------------------------------------- sklearn hooks
def _patch_sklearn():
    from sklearn.utils import _array_api as aa

    name = S.modname

    def yield_namespaces(include_numpy_namespaces=True):
        yield name

    def yield_namespace_device_dtype_combinations(include_numpy_namespaces=True):
        if name == STRICT:   # sklearn's own pair for array_api_strict
            yield name, "CPU_DEVICE", "float64"
            yield name, "device1", "float32"
        else:                # one device: the default one, both float widths
            yield name, None, "float64"
            yield name, None, "float32"

    def yield_mixed_namespace_input_permutations():
        dev = "device1" if name == STRICT else None
        yield (aa.NamespaceAndDevice("numpy", None), aa.NamespaceAndDevice(name, dev),
               f"numpy to {name}")
        yield (aa.NamespaceAndDevice(name, dev), aa.NamespaceAndDevice("numpy", None),
               f"{name} to numpy")

    aa.yield_namespaces = yield_namespaces
    aa.yield_namespace_device_dtype_combinations = yield_namespace_device_dtype_combinations
    aa.yield_mixed_namespace_input_permutations = yield_mixed_namespace_input_permutations
    # modules that imported the names before us (estimator_checks, _testing) see them too
    for modname in ("sklearn.utils.estimator_checks", "sklearn.utils._testing"):
        mod = sys.modules.get(modname)
        if mod is None:
            continue
        for attr in ("yield_namespaces", "yield_namespace_device_dtype_combinations",
                     "yield_mixed_namespace_input_permutations"):
            if hasattr(mod, attr):
                setattr(mod, attr, getattr(aa, attr))
    # _array_api_for_tests needs no patch: for an unknown name it imports the module,
    # takes get_namespace(mod.asarray(1)) and passes the device name through.


# ------------------------------------------------------------------ array-api-extra
def _xpx_backend_member():
    """Add ARRAY_NAMESPACE to array-api-extra's Backend enum (a real member)."""
    from array_api_extra._lib._backends import Backend

    if S.modname == STRICT:
        return Backend.ARRAY_API_STRICT
    if "ARRAY_NAMESPACE" in Backend.__members__:
        return Backend.ARRAY_NAMESPACE
    member = object.__new__(Backend)
    member._name_ = "ARRAY_NAMESPACE"
    member._value_ = OURS
    member.__objclass__ = Backend
    member._sort_order_ = len(Backend._member_names_)
    type.__setattr__(Backend, "ARRAY_NAMESPACE", member)
    Backend._member_names_.append("ARRAY_NAMESPACE")
    Backend._member_map_["ARRAY_NAMESPACE"] = member
    Backend._value2member_map_[OURS] = member
    return member


# -------------------------------------------------------------------------- scipy
def _scipy_param():
    mod = importlib.import_module(S.modname)
    marks = [pytest.mark.array_api_backends]
    return pytest.param(mod, id=S.modname, marks=marks)


def _patch_scipy_conftest(conftest):
    # Names listed here are the ones skip/xfail markers (np_only=..., exceptions=...)
    # know about; without ours, np_only tests would not be skipped for us.
    conftest.xp_known_backends.add(OURS)


# ------------------------------------------------------------------------ config
def pytest_configure(config):
    S.suite = config.getoption("--xp-suite")
    if S.suite is None:
        return
    S.backend = config.getoption("--xp-backend")
    S.modname = BACKEND_MODULES[S.backend]
    S.t0 = time.perf_counter()
    S.results = {}
    S.deselected = 0
    if S.suite == "sklearn":
        _patch_sklearn()
    elif S.suite == "xpx":
        S.xpx_member = _xpx_backend_member()
        S.xpx_param = S.xpx_member.pytest_param()
    elif S.suite == "scipy":
        if not os.environ.get("SCIPY_ARRAY_API"):
            raise pytest.UsageError("scipy suite: set SCIPY_ARRAY_API=1 before pytest starts")
        S.scipy_param = _scipy_param()
        if "scipy.conftest" in sys.modules:   # initial conftests load before configure
            _patch_scipy_conftest(sys.modules["scipy.conftest"])
    if S.backend == "strict":
        import array_api_strict  # noqa: F401  (fail early if missing)
    if config.getoption("--xp-jit"):
        if S.backend != "ours" or S.suite == "sklearn":
            raise pytest.UsageError("--xp-jit: our backend, scipy or xpx suite")
        S.jit = True
        pkg = "scipy._lib.array_api_extra.testing" if S.suite == "scipy" else "array_api_extra.testing"
        public = importlib.import_module(pkg)
        # array-api-extra 0.11: testing is a package; the tags and the patch live in testing._testing
        S.jit_testing = (importlib.import_module(pkg + "._testing")
                         if hasattr(public, "__path__") else public)
        holders = [public] + [m for n, m in list(sys.modules.items()) if n.endswith("conftest")]
        lazy_jit.install(S.jit_testing, holders, _is_ours)


def _is_ours(xp):
    return getattr(xp, "__name__", None) == OURS


def _jit_conftest(plugin):
    """A conftest loaded after configure that imported patch_lazy_xp_functions gets ours too."""
    if S.jit and isinstance(plugin, types.ModuleType) and hasattr(plugin, "patch_lazy_xp_functions"):
        lazy_jit.install(S.jit_testing, [plugin], _is_ours)


@pytest.hookimpl(tryfirst=True)
def pytest_plugin_registered(plugin, manager):
    if S.suite == "scipy" and getattr(plugin, "__name__", "") == "scipy.conftest":
        _patch_scipy_conftest(plugin)
    _jit_conftest(plugin)


@pytest.hookimpl(tryfirst=True)
def pytest_generate_tests(metafunc):
    """Swap the params of the libraries' backend fixtures before pytest expands them."""
    if S.suite == "scipy":
        replacements = {"xp": [S.scipy_param]}
    elif S.suite == "xpx":
        replacements = {"library": [S.xpx_param]}
    else:
        return
    for argname, params in replacements.items():
        for fixturedef in metafunc._arg2fixturedefs.get(argname, ()):
            if fixturedef.params is not None and _is_backend_fixture(fixturedef):
                fixturedef.params = params
                fixturedef.ids = None


def _is_backend_fixture(fixturedef):
    mod = getattr(fixturedef.func, "__module__", "") or ""
    return mod.endswith("conftest")


# ------------------------------------------------------------------- selection
def _mentions_backend(value, depth=0):
    if depth > 3:
        return False
    if isinstance(value, str):
        return value == S.modname
    if isinstance(value, types.ModuleType):
        return value.__name__ == S.modname
    if S.xpx_member is not None and value is S.xpx_member:
        return True
    if isinstance(value, functools.partial):
        vals = list(value.args) + list(value.keywords.values())
        return any(_mentions_backend(v, depth + 1) for v in vals)
    if isinstance(value, (tuple, list)):
        return any(_mentions_backend(v, depth + 1) for v in value)
    if hasattr(value, "values") and getattr(value, "__name__", None) == S.modname:
        return True
    return False


def pytest_collection_modifyitems(session, config, items):
    if S.suite is None or config.getoption("--xp-keep-all"):
        return
    keep, drop = [], []
    for item in items:
        cs = getattr(item, "callspec", None)
        ok = cs is not None and any(_mentions_backend(v) for v in cs.params.values())
        (keep if ok else drop).append(item)
    per_group = config.getoption("--xp-per-group")
    if per_group:   # a sample: the first N cases of each test class / module-level test, in order
        seen = {}
        sample = []
        for item in keep:
            group = "::".join(item.nodeid.split("[", 1)[0].split("::")[:2])
            seen[group] = seen.get(group, 0) + 1
            (sample if seen[group] <= per_group else drop).append(item)
        keep = sample
    if drop:
        config.hook.pytest_deselected(items=drop)
    S.deselected = len(drop)
    items[:] = keep
    if S.jit:   # now, before any test has swapped a tagged function for its wrapper
        mods = {id(m): m for it in keep if (m := getattr(it, "module", None))}.values()
        S.tagged = lazy_jit.inventory(mods, S.jit_testing._ufuncs_tags)


# --------------------------------------------------------------------- reporting
def _crash_line(report):
    lr = report.longrepr
    crash = getattr(lr, "reprcrash", None)
    if crash is not None:
        msg = [ln.strip() for ln in (crash.message or "").splitlines() if ln.strip()]
        # numpy's assert_allclose puts the reason on later lines ("nan location mismatch")
        return " | ".join(msg[:3]), f"{crash.path}:{crash.lineno}"
    if isinstance(lr, tuple) and len(lr) == 3:   # skip tuples
        return str(lr[2]), f"{lr[0]}:{lr[1]}"
    text = str(lr).strip().splitlines()
    return (text[-1] if text else ""), ""


def _classify(report):
    if hasattr(report, "wasxfail"):
        return "xpassed" if report.passed else "xfailed"
    if report.failed:
        return "failed" if report.when == "call" else "error"
    if report.skipped:
        return "skipped"
    return "passed" if report.when == "call" else None


def pytest_runtest_logreport(report):
    if S.suite is None:
        return
    outcome = _classify(report)
    rec = S.results.get(report.nodeid)
    if outcome is None:                       # setup/teardown passed: no news
        S.results.setdefault(report.nodeid, {"outcome": "pending"})
        return
    if rec is not None and rec["outcome"] in ("failed", "error"):
        return                                # keep the first failure
    entry = {"outcome": outcome, "duration": round(report.duration, 3)}
    if outcome != "passed" and outcome != "xpassed":
        line, where = _crash_line(report)
        entry["message"] = line[:400]
        entry["where"] = where
    S.results[report.nodeid] = entry


def _git_commit():
    if os.environ.get("LIBRARY_SUITES_COMMIT"):   # run.py --commit: src/ exported as committed
        return os.environ["LIBRARY_SUITES_COMMIT"]
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=here,
                                capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", ":/src"], cwd=here,
                               capture_output=True, text=True).stdout.strip()
        return commit + ("+dirty-src" if dirty else "")
    except OSError:
        return "unknown"


def pytest_sessionfinish(session, exitstatus):
    if S.suite is None:
        return
    path = session.config.getoption("--xp-report")
    if not path:
        return
    counts = {}
    for rec in S.results.values():
        counts[rec["outcome"]] = counts.get(rec["outcome"], 0) + 1
    failures = {nid: rec for nid, rec in sorted(S.results.items())
                if rec["outcome"] in ("failed", "error")}   # XPASS(strict) arrives as failed
    skips = {nid: rec.get("message", "") for nid, rec in sorted(S.results.items())
             if rec["outcome"] == "skipped"}
    out = {
        "suite": S.suite,
        "backend": S.backend,
        "module": S.modname,
        "label": session.config.getoption("--xp-label"),
        "commit": _git_commit(),
        "namespace_file": getattr(sys.modules.get(OURS), "__file__", None),
        "args": list(session.config.invocation_params.args),
        "exitstatus": int(exitstatus),
        "wall_s": round(time.perf_counter() - S.t0, 1),
        "collected": len(S.results),
        "deselected": S.deselected,
        "counts": counts,
        "failures": failures,
        "skips": skips,
        "all": {nid: rec["outcome"] for nid, rec in sorted(S.results.items())},
    }
    if S.jit:
        out["jit"] = _jit_report(S.results)
    with open(path, "w") as f:
        json.dump(out, f, indent=1)


def _jit_report(results):
    """Per tagged function (under our jit): jax_jit tag, outcomes of the tests calling it, status, and
    for a failing one its failing tests and the first one's error line."""
    outcomes = {nid: rec["outcome"] for nid, rec in results.items()}
    table = lazy_jit.function_table(outcomes, lazy_jit.CALLS, S.tagged)
    for key, row in table.items():
        if row["status"] == "fail":
            row["failing"] = [n for n in sorted(lazy_jit.CALLS) if key in lazy_jit.CALLS[n]
                              and outcomes.get(n) in ("failed", "error")]
            row["message"] = results[row["failing"][0]].get("message", "")
            row["where"] = results[row["failing"][0]].get("where", "")
    return {"functions": table,
            "tests_calling": sum(1 for n, c in lazy_jit.CALLS.items() if c and n in outcomes),
            "tests_not_calling": sum(1 for n in outcomes if not lazy_jit.CALLS.get(n))}
