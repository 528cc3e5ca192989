"""The documents under docs/ stay true: every ```python block of each document runs, top to bottom in
one namespace per document (the blocks assert what the text claims)."""
import os
import re

import pytest

import transforms.traceback_util as TU

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = os.path.join(ROOT, "docs")
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def _documents():
    return sorted(f for f in os.listdir(DOCS) if f.endswith(".md"))


def python_blocks(text):
    return _BLOCK.findall(text)


def test_there_are_documents_with_code():
    assert "coming-from-jax.md" in _documents()
    with open(os.path.join(DOCS, "coming-from-jax.md")) as f:
        assert len(python_blocks(f.read())) >= 8


@pytest.mark.parametrize("doc", _documents())
def test_python_blocks_run(doc):
    path = os.path.join(DOCS, doc)
    with open(path) as f:
        text = f.read()
    ns = {"__name__": f"docs.{doc}"}
    prev = TU.filtering_enabled()
    try:
        for i, block in enumerate(python_blocks(text)):
            line = text[:text.index(block)].count("\n") + 1
            code = compile(block, f"{path}:block{i}@line{line}", "exec")
            exec(code, ns)
    finally:
        TU.set_filtering(prev)


def test_block_extraction():
    text = "x\n```python\na = 1\n```\n```text\nnot run\n```\n```python\nb = a + 1\n```\n"
    assert python_blocks(text) == ["a = 1\n", "b = a + 1\n"]
