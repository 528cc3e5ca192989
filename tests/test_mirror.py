"""tests/ mirrors src/: every source module src/<pkg>/<path>/<name>.py has its test module
tests/<pkg>/<path>/test_<name without a leading underscore>.py, or a one-line reason in REASONS saying
where it is checked instead. The table is kept honest: an entry whose module is gone, or whose module
now has its mirrored test, fails too, and a tests/ path a reason names must exist.

pytest imports test modules by basename (tests/ has no packages), so two test files may not share a
name: where test_<name>.py is taken elsewhere (primitives/sorting.py vs array_namespace/_sorting.py),
the mirror is test_<name>_<its folder>.py (tests/transforms/primitives/test_sorting_primitives.py)."""
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "src")
TESTS = os.path.join(ROOT, "tests")

# module path under src/ -> why it has no mirrored test module (one line)
REASONS = {
    "xla/lower_elementwise_subnormal.py": "the subnormal rule's fixes to elementwise lowerings and kernels, checked "
                                          "on every elementwise function by tests/array_namespace/test_elementwise_subnormals.py",
    "xla/lower_elementwise_complex.py": "the complex host kernels (and the complex primitive's lowering), checked "
                                        "against XLA in tests/xla/test_host_kernels_complex.py and "
                                        "tests/transforms/primitives/test_complex_parts.py",
    "xla/_special_erf_tables.py": "coefficient tables only, checked through every function that reads them in "
                                  "tests/xla/test_lower_special_erf.py",
    "xla/host.py": "the host kernels' value type, checked through tests/xla/test_host_kernels.py and "
                   "tests/xla/test_host_kernels_programs.py",
    "transforms/primitives/raw_ops.py": "thin binds for the composite implementations, checked through their users in "
                                        "tests/xla/test_lower_special_erf.py and tests/xla/test_lower_special_gamma.py",
    "array_namespace/_complex_special.py": "the complex special-value tables of the standard, checked case by case in "
                                           "tests/array_namespace/test_special_cases.py",
}


def source_modules():
    for dirpath, dirnames, files in os.walk(SRC):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith((".", "__")) and not d.endswith(".egg-info"))
        for f in sorted(files):
            if f.endswith(".py") and f != "__init__.py":
                yield os.path.relpath(os.path.join(dirpath, f), SRC).replace(os.sep, "/")


def mirror_of(module):
    """'xla/_jaxlib.py' -> 'xla/test_jaxlib.py' (relative to tests/)."""
    head, name = os.path.split(module)
    return (head + "/" if head else "") + "test_" + name.lstrip("_")


def _alternative(module):
    """The basename-collision form: 'transforms/primitives/sorting.py' -> '.../test_sorting_primitives.py'."""
    head, name = os.path.split(mirror_of(module))
    return f"{head}/{name[:-3]}_{os.path.basename(head)}.py" if head else None


def _has_test(module):
    return any(p and os.path.isfile(os.path.join(TESTS, p)) for p in (mirror_of(module), _alternative(module)))


def test_every_source_module_has_a_mirrored_test_or_a_reason():
    missing = [f"src/{m} -> tests/{mirror_of(m)}" for m in source_modules() if not _has_test(m) and m not in REASONS]
    # (where that basename is taken by another test module: tests/<same dir>/test_<name>_<dir>.py)
    assert not missing, "source modules without a mirrored test module (write it, or add a one-line reason to " \
                        "tests/test_mirror.py REASONS):\n  " + "\n  ".join(missing)


def test_reasons_are_current():
    modules = set(source_modules())
    stale = [m for m in REASONS if m not in modules]
    assert not stale, f"REASONS names modules that no longer exist: {stale}"
    covered = [m for m in REASONS if _has_test(m)]
    assert not covered, f"these modules now have their mirrored test; drop their REASONS entries: {covered}"


def test_reasons_are_one_line_and_name_real_tests():
    for module, why in REASONS.items():
        assert why.strip() and "\n" not in why and len(why) <= 200, module
        for path in re.findall(r"tests/[\w/]+\.py", why):
            assert os.path.isfile(os.path.join(ROOT, path)), f"{module}: its reason names {path}, which does not exist"


def test_test_module_basenames_are_unique():
    seen = {}
    for dirpath, dirnames, files in os.walk(TESTS):
        dirnames[:] = [d for d in dirnames if not d.startswith((".", "__"))]
        for f in files:
            if f.startswith("test_") and f.endswith(".py"):
                seen.setdefault(f, []).append(os.path.relpath(dirpath, ROOT))
    clashes = {f: d for f, d in seen.items() if len(d) > 1}
    assert not clashes, f"test modules sharing a basename (pytest cannot import both): {clashes}"


def test_mirror_of():
    assert _alternative("transforms/primitives/sorting.py") == "transforms/primitives/test_sorting_primitives.py"
    assert mirror_of("xla/_jaxlib.py") == "xla/test_jaxlib.py"
    assert mirror_of("array_namespace/special/_beta.py") == "array_namespace/special/test_beta.py"
    assert mirror_of("transforms/core.py") == "transforms/test_core.py"
    assert "transforms/core.py" in set(source_modules())
    assert not any(m.endswith("__init__.py") for m in source_modules())
