"""scipy, scikit-learn and array-api-extra on our namespace, against the same calls on NumPy:
eagerly, under jit, under vmap (vs a loop) and grad (vs finite differences). One row per library
call lives in ds_cases_*.py; (case, transform) pairs that fail because of OUR engine are listed in
ds_registry.KNOWN_OURS with their causes and are not run here until fixed (survey.py shows them).
"""
import pytest

from ds_harness import LIB, NA, TRANSFORMS, run
from ds_registry import ALL_CASES, KNOWN_OURS

# Finite differences of whole estimator fits are the slow part.
_SLOW = {("grad", c.name) for c in ALL_CASES if "sklearn" in c.fn.__module__ or c.name[0].isupper()}
_SLOW |= {(t[len("slow:"):], c.name) for c in ALL_CASES for t in c.tags if t.startswith("slow:")}


def _params(transform):
    out = []
    for case in ALL_CASES:
        if case.mode(transform) == NA or (case.name, transform) in KNOWN_OURS:
            continue
        marks = [pytest.mark.slow] if (transform, case.name) in _SLOW else []
        out.append(pytest.param(case, id=case.name, marks=marks))
    return out


@pytest.mark.parametrize("case", _params("eager"))
def test_eager_matches_numpy(case):
    run(case, "eager")


@pytest.mark.parametrize("case", _params("jit"))
def test_jit_matches_numpy_or_library_limited(case):
    run(case, "jit")


@pytest.mark.parametrize("case", _params("vmap"))
def test_vmap_matches_numpy_loop_or_library_limited(case):
    run(case, "vmap")


@pytest.mark.parametrize("case", _params("grad"))
def test_grad_matches_finite_differences_or_library_limited(case):
    run(case, "grad")


def test_registry_is_consistent():
    names = [c.name for c in ALL_CASES]
    assert len(names) == len(set(names)), "duplicate case names"
    by_name = {c.name: c for c in ALL_CASES}
    for (name, transform), cause in KNOWN_OURS.items():
        assert name in by_name, f"KNOWN_OURS names an unknown case {name!r}"
        assert transform in TRANSFORMS and by_name[name].mode(transform) != NA, (name, transform)
        assert isinstance(cause, str) and len(cause) > 20, f"KNOWN_OURS[{name}, {transform}] needs its cause"
    for c in ALL_CASES:
        for t in TRANSFORMS:
            if c.mode(t) == LIB:
                why = c.why[t] if isinstance(c.why, dict) else c.why
                assert why.split(":")[0].endswith(".py"), f"{c.name} [{t}]: LIB needs the library file:line"
