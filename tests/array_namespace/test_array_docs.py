"""The docstring table of Array (src/array_namespace/_array_docs.py): its entries reach the class, a member is
documented either in the table or in place in _array.py (never both: one text to keep true), and every
public attribute or method defined in the class body is documented one way or the other with the house
sections and an example. tests/test_docstrings.py runs the examples."""
import ast
import inspect
import os

import pytest

import array_namespace as xp
from array_namespace import _array_docs as T

SRC = os.path.join(os.path.dirname(xp.__file__), "_array.py")


def _class_body_members():
    """{name: has a docstring in the source} for the functions and properties defined in class Array."""
    tree = ast.parse(open(SRC).read())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Array")
    return {f.name: ast.get_docstring(f) is not None for f in cls.body if isinstance(f, ast.FunctionDef)}


def test_the_class_docstring_is_the_table_s():
    assert xp.Array.__doc__ == T.ARRAY
    assert ">>>" in T.ARRAY and "Raises:" in T.ARRAY


@pytest.mark.parametrize("name", sorted(T.MEMBERS))
def test_each_entry_reaches_its_member_and_is_not_also_written_in_place(name):
    members = _class_body_members()
    assert name in members, f"MEMBERS names {name}, which class Array does not define"
    assert not members[name], f"Array.{name} has a docstring in _array.py and one in the table: keep one"
    assert inspect.getattr_static(xp.Array, name).__doc__ == T.MEMBERS[name]


@pytest.mark.parametrize("name", sorted(n for n in _class_body_members() if not n.startswith("_")))
def test_every_public_member_is_documented(name):
    doc = inspect.getattr_static(xp.Array, name).__doc__ or ""
    for section in ("Returns:", "Raises:", ">>>"):
        assert section in doc, f"Array.{name}'s docstring lacks {section!r}"


def test_the_check_sees_an_undocumented_member():
    assert "__init__" in _class_body_members() and not _class_body_members()["__init__"]
