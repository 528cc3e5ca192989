"""The docstring table of the linalg extension (src/array_namespace/_linalg_docs.py): it covers every function
linalg defines in _linalg.py (the four shared with the main namespace are documented in _linear_algebra.py),
each function carries its entry, and where _linalg.py keeps a one-line docstring in place the entry begins
with it, so the two texts never disagree. tests/test_docstrings.py runs the examples."""
import ast
import os

import pytest

import array_namespace as xp
from array_namespace import _linalg
from array_namespace._linalg_docs import DOCS

SHARED = {"matmul", "matrix_transpose", "tensordot", "vecdot"}
SRC = os.path.join(os.path.dirname(xp.__file__), "_linalg.py")


def _in_place_docstrings():
    tree = ast.parse(open(SRC).read())
    return {f.name: ast.get_docstring(f) for f in tree.body if isinstance(f, ast.FunctionDef)}


def test_the_table_covers_the_extension_less_the_shared_functions():
    assert set(DOCS) == set(xp.linalg.__all__) - SHARED
    assert all(getattr(xp.linalg, n).__module__ == "array_namespace._linear_algebra" for n in SHARED)


@pytest.mark.parametrize("name", sorted(DOCS))
def test_each_function_carries_its_entry(name):
    assert getattr(xp.linalg, name) is getattr(_linalg, name)
    assert getattr(xp.linalg, name).__doc__ == DOCS[name]
    assert f">>> xp.linalg.{name}(" in DOCS[name] or f"= xp.linalg.{name}(" in DOCS[name]


@pytest.mark.parametrize("name", sorted(n for n, d in _in_place_docstrings().items() if d and n in DOCS))
def test_an_in_place_docstring_is_the_start_of_the_entry(name):
    assert DOCS[name].startswith(_in_place_docstrings()[name].strip())


def test_the_in_place_check_has_cases():
    assert {"cholesky", "solve", "slogdet"} <= {n for n, d in _in_place_docstrings().items() if d}
