"""CONTRIBUTING.md's recipe is true: every test it names exists, and a made-up primitive walked through
the steps is caught, at each step forgotten, by the test the recipe names for that step."""
import importlib
import importlib.util
import os
import pkgutil
import re

import numpy as np
import pytest

import array_namespace as xp
import transforms
from transforms.core import Primitive, abstract_eval_rules, bind, impl_rules
from transforms.rules import batch_gaps, batch_rules, jvp_gaps, jvp_rules, transpose_rules
from xla.lower_elementwise import hlo
from xla.lowering import lowering_rules

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTS = os.path.join(ROOT, "tests")


def _load(rel):
    path = os.path.join(TESTS, rel)
    spec = importlib.util.spec_from_file_location("contrib_" + os.path.basename(path)[:-3], path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_every_test_the_recipe_names_exists():
    text = open(os.path.join(ROOT, "CONTRIBUTING.md")).read()
    refs = re.findall(r"`(tests/[\w/]+\.py)::(\w+)`", text)
    assert len(refs) >= 7, refs
    for path, name in refs:
        src = open(os.path.join(ROOT, path)).read()
        assert re.search(rf"^def {name}\(", src, re.M), f"CONTRIBUTING.md names {path}::{name}, which does not exist"


def primitives_without_abstract_eval(pairs):
    return [f"{where}.{p.name}" for where, p in pairs if p not in abstract_eval_rules]


def _engine_primitive_objects():
    for info in pkgutil.walk_packages(transforms.__path__, "transforms."):
        mod = importlib.import_module(info.name)
        for v in list(vars(mod).values()):
            if isinstance(v, Primitive):
                yield info.name, v


def test_every_primitive_object_has_an_abstract_eval():
    pairs = list(_engine_primitive_objects())
    assert len(pairs) > 100
    missing = primitives_without_abstract_eval(pairs)
    assert not missing, f"primitives defined without an abstract eval rule: {missing}"


@pytest.fixture
def demo():
    """A made-up unary primitive (2x), removed from every table afterwards."""
    p = Primitive("contrib_demo")
    yield p
    for table in (abstract_eval_rules, jvp_rules, batch_rules, transpose_rules, jvp_gaps, batch_gaps,
                  lowering_rules, impl_rules):
        table.pop(p, None)


def test_each_forgotten_step_is_caught(demo, monkeypatch):
    coverage = _load("transforms/test_rule_coverage.py")
    vocabulary = _load("transforms/primitives/test_vocabulary.py")

    # step 1 forgotten: defined, no abstract eval
    assert primitives_without_abstract_eval([("demo", demo)]) == ["demo.contrib_demo"]
    abstract_eval_rules[demo] = lambda a: a

    # step 3 forgotten: no lowering
    with pytest.raises(AssertionError, match="has no XLA lowering"):
        coverage.test_every_primitive_is_complete(demo)
    lowering_rules[demo] = lambda c, x: hlo.add(x, x)
    x = np.array([1.0, -2.0, 3.5])
    got = bind(demo, xp.asarray(x)._v)       # eager impl made on first use
    np.testing.assert_array_equal(np.asarray(xp.asarray(got)), 2 * x)

    # step 2 forgotten: no jvp rule, then no batching rule
    with pytest.raises(AssertionError, match="no jvp rule"):
        coverage.test_every_primitive_is_complete(demo)
    jvp_rules[demo] = lambda primals, tangents: (bind(demo, *primals), bind(demo, *tangents))
    with pytest.raises(AssertionError, match="no batching rule"):
        coverage.test_every_primitive_is_complete(demo)
    batch_rules[demo] = lambda axis_size, vals, dims: (bind(demo, *vals), dims[0])
    coverage.test_every_primitive_is_complete(demo)   # complete now

    # step 4 forgotten: nothing checks its values against an oracle
    monkeypatch.syspath_prepend(os.path.join(TESTS, "array_namespace"))
    with pytest.raises(AssertionError, match="contrib_demo"):
        vocabulary.test_every_primitive_is_reached_by_an_oracle_test(monkeypatch)


def test_forgotten_export_and_oracle_are_caught(monkeypatch):
    exports = _load("array_namespace/test_exports.py")
    table = _load("array_namespace/test_namespace_table.py")
    # step 6 forgotten: a standard function not exported
    monkeypatch.setattr(xp, "__all__", [n for n in xp.__all__ if n != "hypot"])
    with pytest.raises(AssertionError, match="hypot"):
        exports.test_all_is_the_standard_plus_documented_extensions()
    monkeypatch.undo()
    # step 7 forgotten: a function no oracle test uses
    monkeypatch.setattr(table, "MAIN", list(table.MAIN) + ["contrib_new_function"])
    with pytest.raises(AssertionError, match="contrib_new_function"):
        table.test_every_function_has_an_oracle_test()


def test_forgotten_mirrored_test_is_caught(monkeypatch):
    mirror = _load("test_mirror.py")
    real = list(mirror.source_modules())
    monkeypatch.setattr(mirror, "source_modules", lambda: real + ["transforms/primitives/contrib_new_family.py"])
    with pytest.raises(AssertionError, match="contrib_new_family"):
        mirror.test_every_source_module_has_a_mirrored_test_or_a_reason()
