"""Run scikit-learn's, array-api-extra's or scipy's own array-API tests on a backend.

Why: those libraries' test suites are the best available check that real
array-API code runs on our namespace; this script runs a chosen suite for
``ours`` (array_namespace) or ``strict`` (array_api_strict) through
``plugin.py`` and writes a JSON + text summary that ``compare`` can diff.

    python3 tools/library_suites/run.py run xpx --backend ours
    python3 tools/library_suites/run.py run sklearn --select subset --backend strict
    python3 tools/library_suites/run.py run scipy --select special --backend ours -- -x
    python3 tools/library_suites/run.py compare results/xpx-all-ours.json results/xpx-all-strict.json
    python3 tools/library_suites/run.py show results/xpx-all-ours.json

Selections (``--select``): xpx ``all``; sklearn ``subset`` (sklearn.utils,
preprocessing, metrics, decomposition) or ``full`` (the whole package) or a comma
list of sklearn subpackages;
scipy one or more of ``special,cluster,integrate,stats,signal,fft`` or paths under
scipy/ such as ``signal/tests/test_windows.py`` or ``stats/tests/test_stats.py::TestKruskal`` (comma list, ``-m array_api_backends``),
or ``signal-lite`` (signal without its 12k-case test_signaltools.py).  Only items parametrised with the chosen backend run.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import sysconfig
import tempfile
import zlib
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SITE = sysconfig.get_paths()["purelib"]
RESULTS = os.path.join(HERE, "results")

SKLEARN_SUBSET = ["utils", "preprocessing", "metrics", "decomposition"]
SCIPY_SUBPACKAGES = ["special", "cluster", "integrate", "stats", "signal", "fft"]


def _pkg_dir(name):
    import importlib.util
    spec = importlib.util.find_spec(name)
    return os.path.dirname(spec.origin)


def selection_args(suite, select):
    """pytest positional args and options for a named selection."""
    if suite == "xpx":
        # upstream's pyproject: filterwarnings = ["error"], xfail_strict = true
        return ([os.path.join(_pkg_dir("array_api_extra"), "tests", "main")],
                ["-W", "error", "-o", "xfail_strict=true"])
    if suite == "sklearn":
        root = _pkg_dir("sklearn")
        if select == "full":
            return [root], []
        if select == "subset":
            # no -k: "-k array_api" would match array_api_strict's ids but not ours
            return [os.path.join(root, d) for d in SKLEARN_SUBSET], []
        return [os.path.join(root, d) for d in select.split(",")], []
    if suite == "scipy":
        root = _pkg_dir("scipy")
        if select == "signal-lite":   # signal without test_signaltools.py (12k param cases)
            tdir = os.path.join(root, "signal", "tests")
            select = ",".join(f"signal/tests/{f}" for f in sorted(os.listdir(tdir))
                              if f.startswith("test_") and f.endswith(".py")
                              and f != "test_signaltools.py")
        names = select.split(",")   # subpackages, or paths under scipy/ (dirs, files, file::Class)
        bad = [n for n in names if not os.path.exists(os.path.join(root, n.split("::")[0]))]
        if bad:
            raise SystemExit(f"run.py: unknown scipy subpackage(s) {bad}")
        return [os.path.join(root, n) for n in names], ["-m", "array_api_backends"]
    raise SystemExit(f"run.py: unknown suite {suite!r}")


def cmd_run(a):
    select = a.select or {"xpx": "all", "sklearn": "subset", "scipy": "special"}[a.suite]
    paths, opts = selection_args(a.suite, select)
    if a.k:
        if "-k" in opts:   # combine with the selection's own expression
            i = opts.index("-k")
            opts = opts[:i] + ["-k", f"({opts[i + 1]}) and ({a.k})"] + opts[i + 2:]
        else:
            opts = opts + ["-k", a.k]
    a.out = os.path.abspath(a.out)   # pytest runs in a temporary directory
    os.makedirs(a.out, exist_ok=True)
    tag = select if len(select) < 60 else select[:40] + f"..{zlib.crc32(select.encode()):08x}"
    stem = (f"{a.suite}-{re.sub(r'[^A-Za-z0-9_.]+', '+', tag)}-{a.backend}"
            + (f"-first{a.per_group}" if a.per_group else "") + ("-jit" if a.jit else ""))
    report = os.path.join(a.out, stem + ".json")
    env = dict(os.environ)
    env["SCIPY_ARRAY_API"] = "1"
    src = os.path.join(REPO, "src")
    if a.commit:   # the namespace as committed (others' uncommitted edits left out)
        rev = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", a.commit],
                             capture_output=True, text=True, check=True).stdout.strip()
        dest = os.path.join(tempfile.gettempdir(), "library_suites_src", rev)
        if not os.path.isdir(os.path.join(dest, "src")):
            os.makedirs(dest, exist_ok=True)
            archive = subprocess.run(["git", "-C", REPO, "archive", rev, "src"],
                                     capture_output=True, check=True).stdout
            subprocess.run(["tar", "-x", "-C", dest], input=archive, check=True)
        src = os.path.join(dest, "src")
        env["LIBRARY_SUITES_COMMIT"] = rev
        print(f"run.py: namespace from commit {rev} ({src})")
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.join(REPO, "tools"), src, env.get("PYTHONPATH", "")])
    cmd = [sys.executable, "-m", "pytest", "-c", os.path.join(HERE, "pytest.ini"),
           "--rootdir", SITE, "-p", "library_suites.plugin",
           "--xp-suite", a.suite, "--xp-backend", a.backend, "--xp-report", report,
           "--xp-label", select, "-q", "-rN", "--tb=line", *(["--xp-jit"] if a.jit else []),
           *([f"--xp-per-group={a.per_group}"] if a.per_group else []),
           *opts, *paths, *a.pytest_args]
    print("+", " ".join(cmd), flush=True)
    log = open(os.path.join(a.out, stem + ".log"), "w")
    with tempfile.TemporaryDirectory() as cwd:   # keep .hypothesis etc. out of the repo
        proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
        timed_out = False
        try:
            rc = proc.wait(timeout=a.timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            print(f"run.py: timeout after {a.timeout}s; interrupting (partial report)")
            os.killpg(proc.pid, signal.SIGINT)      # pytest still writes its report
            try:
                rc = proc.wait(timeout=120)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                rc = proc.wait()
    log.close()
    if not os.path.exists(report):
        print(f"run.py: no report written (rc={rc}); see {log.name}")
        return 1
    data = json.load(open(report))
    data["timed_out"] = timed_out
    json.dump(data, open(report, "w"), indent=1)
    eager = _eager_outcomes(report) if a.jit else None
    text = summary_text(data, eager=eager)
    open(os.path.join(a.out, stem + ".txt"), "w").write(text)
    print(text)
    return 0


# ----------------------------------------------------------------------- summaries
_NUM = re.compile(r"0x[0-9a-f]+|\d+(\.\d+)?(e[-+]?\d+)?")


def cause_key(rec):
    """Group failures: exception line with numbers and array contents blurred."""
    msg = rec.get("message", "")
    msg = re.sub(r"\[[^\]]{20,}\]", "[...]", msg)
    msg = re.sub(r"\(.{60,}\)", "(...)", msg)
    return _NUM.sub("#", msg)[:160]


def passed(d):
    return d["counts"].get("passed", 0)


def bad(d):
    c = d["counts"]
    return c.get("failed", 0) + c.get("error", 0)


def summary_text(d, max_groups=60, eager=None):
    c = d["counts"]
    lines = [
        f"{d['suite']} [{d['label']}] backend={d['backend']} commit={d['commit']}",
        f"  pass {passed(d)}  fail {c.get('failed', 0)}  error {c.get('error', 0)}  "
        f"skip {c.get('skipped', 0)}  xfail {c.get('xfailed', 0)}  xpass {c.get('xpassed', 0)}"
        f"  (deselected {d['deselected']})  wall {d['wall_s']}s"
        + ("  TIMED OUT (partial)" if d.get("timed_out") else ""),
    ]
    groups = defaultdict(list)
    for nid, rec in d["failures"].items():
        if rec["outcome"] not in ("failed", "error"):
            continue
        groups[cause_key(rec)].append((nid, rec))
    if groups and max_groups:
        lines.append(f"  failures by cause ({len(groups)} groups):")
    for key, items in sorted(groups.items(), key=lambda kv: -len(kv[1]))[:max_groups]:
        nid, rec = items[0]
        lines.append(f"   {len(items):4d} x {rec.get('message', '')[:200]}")
        lines.append(f"          e.g. {nid}")
        if rec.get("where"):
            lines.append(f"          at {rec['where']}")
    if "jit" in d:
        lines += jit_text(d["jit"], max_groups, eager)
    return "\n".join(lines) + "\n"


def jit_status(row, eager):
    """A function's status; 'fail' becomes 'eager-fail' where every failing test fails eagerly too
    (eager: nodeid -> outcome of the run without --jit, or None)."""
    if row["status"] != "fail" or eager is None:
        return row["status"]
    jit_only = [n for n in row.get("failing", ()) if eager.get(n) not in ("failed", "error")]
    return "fail" if jit_only else "eager-fail"


STATUSES = ("pass", "fail", "eager-fail", "other", "untested")


def jit_counts(fns, eager=None):
    """status -> number of tagged functions, overall and for those tagged jax_jit=True."""
    out = {"all": defaultdict(int), "jax_jit": defaultdict(int)}
    for row in fns.values():
        st = jit_status(row, eager)
        out["all"][st] += 1
        if row["jax_jit"]:
            out["jax_jit"][st] += 1
    return out


def jit_text(j, max_groups, eager=None):
    """Tagged functions under our jit: how many pass, and the failing ones grouped by first error
    (with an eager report: 'eager-fail' where every failing test fails without our jit too)."""
    fns = j["functions"]
    c = jit_counts(fns, eager)
    fmt = lambda k: " ".join(f"{s} {c[k].get(s, 0)}" for s in STATUSES if s in c[k] or s != "eager-fail")  # noqa
    lines = [f"  under our jit: {len(fns)} tagged functions: {fmt('all')}; "
             f"of the {sum(c['jax_jit'].values())} tagged jax_jit=True: {fmt('jax_jit')}",
             f"  tests calling a tagged function: {j['tests_calling']}, not calling one: "
             f"{j['tests_not_calling']}" + ("" if eager is None else "  (compared with the eager run)")]
    groups = defaultdict(list)
    for key, row in sorted(fns.items()):
        st = jit_status(row, eager)
        if st in ("fail", "eager-fail"):
            groups[(st, cause_key(row))].append(key)
    if groups and max_groups:
        lines.append(f"  failing functions by their first failure ({len(groups)} groups):")
    for (st, _), keys in sorted(groups.items(), key=lambda kv: (kv[0][0] != "fail", -len(kv[1])))[:max_groups]:
        row = fns[keys[0]]
        lines.append(f"   {len(keys):4d} x [{st}] {row.get('message', '')[:200]}")
        lines.append(f"          {', '.join(k.rsplit('.', 1)[-1] for k in keys[:12])}"
                     + (" ..." if len(keys) > 12 else ""))
        if row.get("where"):
            lines.append(f"          at {row['where']}")
    return lines


_BACKEND_TOKENS = re.compile(r"'?\b(array_api_strict|array_namespace)\b'?(?!=)")
_DEVICE_AFTER = re.compile(r"\bXP-(None|CPU_DEVICE|device1)\b")
_DEVICE_KW = re.compile(r"device(_name)?=(None|'CPU_DEVICE'|'device1'|CPU_DEVICE|device1)")


def normalise(nodeid):
    """One key for the same test on either backend (names and devices blurred)."""
    s = _BACKEND_TOKENS.sub("XP", nodeid)
    return _DEVICE_KW.sub("device=DEV", _DEVICE_AFTER.sub("XP-DEV", s))


def cmd_compare(a):
    A, B = json.load(open(a.a)), json.load(open(a.b))
    print(summary_text(A, max_groups=0) + summary_text(B, max_groups=0))
    na = defaultdict(list)
    nb = defaultdict(list)
    for nid, o in A["all"].items():
        na[normalise(nid)].append(o)
    for nid, o in B["all"].items():
        nb[normalise(nid)].append(o)
    good = {"passed", "skipped", "xfailed", "xpassed"}

    def fails(outs):
        return any(o not in good for o in outs)

    def split(x, y):
        """Keys failing in x but fine in y: (y passed, y skipped/xfailed)."""
        keys = [k for k in x if fails(x[k]) and k in y and not fails(y[k])]
        return ([k for k in keys if "passed" in y[k]],
                [k for k in keys if "passed" not in y[k]])

    a_vs_pass, a_vs_skip = split(na, nb)
    b_vs_pass, b_vs_skip = split(nb, na)
    both = [k for k in na if fails(na[k]) and k in nb and fails(nb[k])]
    ta, tb = A["backend"], B["backend"]
    print(f"fail on {ta}, pass on {tb}: {len(a_vs_pass)};  fail on {ta}, skipped on {tb}: "
          f"{len(a_vs_skip)};  fail on {tb}, pass on {ta}: {len(b_vs_pass)};  fail on {tb}, "
          f"skipped on {ta}: {len(b_vs_skip)};  fail on both: {len(both)};  "
          f"only run on {ta}: {len(set(na) - set(nb))};  only run on {tb}: {len(set(nb) - set(na))}")
    for title, keys in ((f"fail on {ta}, pass on {tb}", a_vs_pass),
                        (f"fail on {ta}, skipped on {tb}", a_vs_skip),
                        (f"fail on {tb}, pass on {ta}", b_vs_pass),
                        (f"fail on {tb}, skipped on {ta}", b_vs_skip),
                        ("fail on both", both)):
        if keys:
            print(f"-- {title}:")
            for k in sorted(keys)[: a.limit]:
                print("  ", k)
    return 0


_NAME_PATTERNS = {
    "sklearn": re.compile(r"""["']array_api_strict["']"""),
    "xpx": re.compile(r"Backend\.ARRAY_API_STRICT\b|like\(Backend\.ARRAY_API_STRICT"),
    "scipy": re.compile(r"""(skip|xfail)_xp_backends\(\s*["']array_api_strict|"""
                        r"""is_array_api_strict\(|["']array_api_strict["']"""),
}


def cmd_hardcoded(a):
    """Lines that single out array_api_strict by name (ours takes the other branch)."""
    root = {"sklearn": "sklearn", "xpx": "array_api_extra", "scipy": "scipy"}[a.suite]
    base = _pkg_dir(root)
    sub = [os.path.join(base, s) for s in a.paths] if a.paths else [base]
    pat = _NAME_PATTERNS[a.suite]
    n = 0
    for top in sub:
        for dirpath, _, files in os.walk(top):
            for fn in sorted(files):
                is_test = fn.startswith("test_") or fn == "conftest.py"
                # scipy names backends in the library too: xp_capabilities(skip_backends=...)
                if not fn.endswith(".py") or not (is_test or a.suite == "scipy"):
                    continue
                path = os.path.join(dirpath, fn)
                for i, line in enumerate(open(path, encoding="utf-8"), 1):
                    if pat.search(line):
                        n += 1
                        print(f"{os.path.relpath(path, os.path.dirname(base))}:{i}: {line.strip()}")
    print(f"# {n} lines", file=sys.stderr)
    return 0


def cmd_table(a):
    """Markdown table: one row per (suite, selection) with both backends' reports."""
    reports = {}
    for fn in sorted(os.listdir(a.dir)):
        if fn.endswith(".json"):
            d = json.load(open(os.path.join(a.dir, fn)))
            reports[(d["suite"], d["label"], d["backend"])] = d
    print("| suite [selection] | ours pass / fail+error | strict pass / fail+error "
          "| wall ours vs strict (s) | commit (ours) |")
    print("|---|---|---|---|---|")
    for (suite, label) in sorted({(k[0], k[1]) for k in reports}):
        o, t = reports.get((suite, label, "ours")), reports.get((suite, label, "strict"))
        cell = (lambda d: f"{passed(d)} / {bad(d)}" + (" (partial)" if d.get("timed_out") else "")
                if d else "-")
        wall = f"{o['wall_s'] if o else '-'} vs {t['wall_s'] if t else '-'}"
        print(f"| {suite} [{label}] | {cell(o)} | {cell(t)} | {wall} | {o['commit'] if o else '-'} |")
    return 0


def _eager_outcomes(jit_report, path=None):
    """nodeid -> outcome of the same selection run without --jit (its report next to the jit one), or None."""
    path = path or jit_report[: -len("-jit.json")] + ".json"
    return json.load(open(path))["all"] if os.path.exists(path) else None


def merge_jit(reports):
    """One function table from several --jit reports (a suite run in parts): test outcomes summed,
    failing tests joined, status recomputed."""
    from lazy_jit import status_of
    fns = {}
    for d in reports:
        for key, row in d["jit"]["functions"].items():
            m = fns.setdefault(key, {"jax_jit": None, "tests": defaultdict(int), "failing": []})
            if m["jax_jit"] is None:
                m["jax_jit"] = row["jax_jit"]
            for outcome, n in row["tests"].items():
                m["tests"][outcome] += n
            m["failing"] += [n for n in row.get("failing", ()) if n not in m["failing"]]
            for k in ("message", "where"):
                if k in row and k not in m:
                    m[k] = row[k]
    for m in fns.values():
        m["tests"] = dict(m["tests"])
        m["status"] = status_of(m["tests"])
    return {"functions": fns,
            "tests_calling": sum(d["jit"]["tests_calling"] for d in reports),
            "tests_not_calling": sum(d["jit"]["tests_not_calling"] for d in reports)}


def cmd_jitsum(a):
    """Tagged functions under our jit over several reports (and the eager runs to compare with)."""
    reports = [json.load(open(p)) for p in a.reports]
    eager = {}
    for p in a.eager or ():
        eager.update(json.load(open(p))["all"])
    j = merge_jit(reports)
    print("\n".join(jit_text(j, a.limit, eager if a.eager else None)))
    if a.list:
        for key, row in sorted(j["functions"].items()):
            print(f"{jit_status(row, eager if a.eager else None):10s} {str(row['jax_jit']):5s} {key} {row['tests']}")
    return 0


def cmd_show(a):
    eager = _eager_outcomes(a.report, a.eager) if a.report.endswith("-jit.json") or a.eager else None
    print(summary_text(json.load(open(a.report)), max_groups=a.limit, eager=eager))
    return 0


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run a suite on a backend")
    r.add_argument("suite", choices=("sklearn", "xpx", "scipy"))
    r.add_argument("--backend", choices=("ours", "strict"), default="ours")
    r.add_argument("--select", default=None, help="named selection (see module doc)")
    r.add_argument("-k", default=None, help="extra pytest -k expression")
    r.add_argument("--jit", action="store_true",
                   help="functions the tests tag with lazy_xp_function run under our jit (ours; scipy, xpx)")
    r.add_argument("--per-group", type=int, default=0,
                   help="run only the first N cases of each test class or module-level test function (a sample)")
    r.add_argument("--timeout", type=int, default=900, help="seconds before interrupting")
    r.add_argument("--out", default=RESULTS)
    r.add_argument("--commit", default=None,
                   help="run the namespace as of this commit (git archive of src/ to a temp dir)"
                        " instead of the working tree")
    r.add_argument("pytest_args", nargs="*", default=[], help="after --: passed to pytest")
    c = sub.add_parser("compare", help="compare two JSON reports")
    c.add_argument("a")
    c.add_argument("b")
    c.add_argument("--limit", type=int, default=200)
    s = sub.add_parser("show", help="print a report's summary")
    s.add_argument("report")
    s.add_argument("--limit", type=int, default=60)
    s.add_argument("--eager", default=None, help="a --jit report: the run without --jit to compare with "
                   "(default: the same name without -jit, if present)")
    h = sub.add_parser("hardcoded", help="list test lines naming array_api_strict")
    h.add_argument("suite", choices=("sklearn", "xpx", "scipy"))
    h.add_argument("paths", nargs="*", help="subpackages (e.g. special cluster)")
    j = sub.add_parser("jitsum", help="tagged functions under our jit over several --jit reports")
    j.add_argument("reports", nargs="+")
    j.add_argument("--eager", nargs="*", default=None, help="the runs without --jit to compare with")
    j.add_argument("--limit", type=int, default=60)
    j.add_argument("--list", action="store_true", help="one line per function")
    t = sub.add_parser("table", help="markdown table of all reports in a folder")
    t.add_argument("dir", nargs="?", default=RESULTS)
    argv = list(sys.argv[1:] if argv is None else argv)
    extra = []
    if "--" in argv:   # argparse drops a subcommand's "--" (Python 3.11): split it off here
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1:]
    a = p.parse_args(argv)
    if extra:
        a.pytest_args = [*getattr(a, "pytest_args", []), *extra]
    return {"run": cmd_run, "compare": cmd_compare, "show": cmd_show, "table": cmd_table,
            "hardcoded": cmd_hardcoded, "jitsum": cmd_jitsum}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
