"""The docstring table of the elementwise functions (src/array_namespace/_elementwise_docs.py): it covers
every elementwise function of the namespace, each function carries its entry, and the dtype category a
docstring states is the one the function enforces (a TypeError outside it, none inside). The examples
themselves run in tests/test_docstrings.py."""
import re

import pytest

import array_namespace as xp
from array_namespace import _elementwise as E
from array_namespace._elementwise_docs import DOCS

INLINE = {"pow", "real"}   # documented in place in _elementwise.py
ELEMENTWISE = sorted(n for n in xp.__all__ if getattr(getattr(xp, n), "__module__", None) == E.__name__)

# the category words the table uses -> the sample dtypes each admits
SAMPLES = {"bool": xp.asarray([True, False]), "int64": xp.asarray([1, 2]), "uint8": xp.asarray([1, 2], dtype=xp.uint8),
           "float64": xp.asarray([0.5, 1.5]), "float32": xp.asarray([0.5, 1.5], dtype=xp.float32),
           "complex128": xp.asarray([0.5 + 1j, 1.5 - 1j])}
INTS, REALS = {"int64", "uint8"}, {"float64", "float32"}
ADMITS = {"floating-point (real or complex)": REALS | {"complex128"}, "real floating-point": REALS,
          "complex floating-point": {"complex128"}, "numeric": INTS | REALS | {"complex128"},
          "real-valued numeric": INTS | REALS, "integer": INTS, "integer or boolean": INTS | {"bool"},
          "boolean": {"bool"}, "any": set(SAMPLES)}


def test_the_table_covers_every_elementwise_function_and_nothing_else():
    assert len(ELEMENTWISE) > 60
    assert set(DOCS) == set(ELEMENTWISE) - INLINE
    assert INLINE <= set(ELEMENTWISE)


@pytest.mark.parametrize("name", sorted(DOCS))
def test_each_function_carries_its_entry(name):
    assert getattr(xp, name).__doc__ == DOCS[name]
    assert f">>> xp.{name}(" in DOCS[name], "the example calls the function it documents"


def _category(doc):
    m = re.search(r"arrays? of (.+?) dtype", doc)
    return m.group(1)


@pytest.mark.parametrize("name", sorted(set(ELEMENTWISE) - {"clip"}))
def test_the_stated_dtype_category_is_the_enforced_one(name):
    f, doc = getattr(xp, name), getattr(xp, name).__doc__
    admitted = ADMITS[_category(doc)]
    binary = "x1, x2" in doc
    for dt, x in SAMPLES.items():
        call = (lambda: f(x, x)) if binary else (lambda: f(x))
        if dt in admitted:
            call()
        else:
            with pytest.raises(TypeError, match=name):
                call()


def test_the_category_check_can_fail():
    assert _category(DOCS["sin"]) == "floating-point (real or complex)"
    with pytest.raises(TypeError):   # sin is not numeric: an int64 input is refused
        xp.sin(SAMPLES["int64"])
