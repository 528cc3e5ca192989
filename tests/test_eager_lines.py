"""tools/eager_lines.py: the size of the eager layer. Its output adds up, every item it lists is found or reported
gone, and `--check` fails above the budget it is given. Oracle: the files themselves (ast, the filesystem)."""
import ast
import glob
import os
import re
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), ".."))
TOOL = os.path.join(ROOT, "tools", "eager_lines.py")
sys.path.insert(0, os.path.join(ROOT, "tools"))

import eager_lines  # noqa: E402

ITEM = re.compile(r"^\s*(\d+)  (\S+)(  \(gone\))?$")


def _run(*args):
    return subprocess.run([sys.executable, TOOL, *args], capture_output=True, text=True, timeout=120)


def _parse(out):
    items, total = [], None
    for line in out.splitlines()[1:]:
        m = re.match(r"^\s*(\d+)  total$", line)
        if m:
            total = int(m.group(1))
            continue
        m = ITEM.match(line)
        assert m, f"unexpected line {line!r}"
        items.append((m.group(2), int(m.group(1)), bool(m.group(3))))
    return items, total


def test_the_total_is_the_sum_of_the_items_and_every_item_exists_or_is_gone():
    p = _run()
    assert p.returncode == 0, p.stderr
    items, total = _parse(p.stdout)
    assert total is not None and items
    assert total == sum(n for _, n, _ in items)
    expected = (len(eager_lines.FILES) + len(eager_lines.KERNEL_FILES)
                + sum(map(len, eager_lines.KERNEL_FILES.values())) + sum(map(len, eager_lines.NAMES.values())))
    assert len(items) == expected
    for label, n, gone in items:
        rel, _, name = label.partition("::")
        path = os.path.join(ROOT, rel)
        if not os.path.isfile(path):
            assert gone and n == 0, f"{label}: no such file, but not reported gone"
            continue
        if not name or name == "[host-kernels]":
            assert not gone, f"{label}: the file exists, but is reported gone"
            continue
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read())
        found = eager_lines._find(tree.body, name) is not None
        assert found != gone, f"{label}: {'found' if found else 'not found'} in the file, but reported otherwise"
        if gone:
            assert n == 0


def test_check_fails_only_above_the_budget():
    _, total = _parse(_run().stdout)
    assert _run("--check", str(total)).returncode == 0
    p = _run("--check", str(total - 1))
    assert p.returncode == 1 and "over budget" in p.stderr


def test_every_host_module_and_host_kernel_file_is_listed():
    """A new src/xla/host*.py, or a lower_*.py that registers host kernels, must be added to the tool's list."""
    listed = set(eager_lines.FILES) | set(eager_lines.KERNEL_FILES)
    for path in sorted(glob.glob(os.path.join(ROOT, "src", "xla", "*.py"))):
        rel = os.path.relpath(path, ROOT).replace(os.sep, "/")
        name = os.path.basename(path)
        if name.startswith("host"):
            assert rel in listed, f"{rel}: not in tools/eager_lines.py"
        elif name.startswith("lower_"):
            with open(path, encoding="utf-8") as f:
                tree = ast.parse(f.read())
            if eager_lines._kernel_spans(tree):
                assert rel in listed, f"{rel} registers host kernels: not in tools/eager_lines.py"


def test_counting_rules(tmp_path, monkeypatch):
    """Blank and comment lines never count; a named region is its def (decorators included) or assignment; the
    kernel rule takes _h_ definitions, whole registration loops, single registrations inside other code, and stores
    into an entry's attribute."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "m.py").write_text(
        "import functools\n"
        "\n"
        "# a comment\n"
        "@functools.cache\n"
        "def _h_k(x):\n"
        "    '''doc'''\n"
        "\n"
        "    return x  # trailing\n"
        "host_kernels[1] = _h_k\n"
        "for _p in (2, 3):\n"
        "    host_kernels[_p] = _h_k\n"
        "def _lower(c):\n"
        "    lowering_rules[4] = c\n"
        "    host_kernels[4] = (\n"
        "        c)\n"
        "X, Y = 1, 2\n"
        "host_kernels[5].wrap = _h_k\n")
    (src / "c.c").write_text("/* a\n   block */\nint x; // note\n\n// line\nint y; /* inline */ int z;\n")
    monkeypatch.setattr(eager_lines, "ROOT", str(tmp_path))
    monkeypatch.setattr(eager_lines, "FILES", ["src/c.c", "src/none.c"])
    monkeypatch.setattr(eager_lines, "KERNEL_FILES", {"src/m.py": ["Y", "_h_k", "missing"]})
    monkeypatch.setattr(eager_lines, "NAMES", {"src/m.py": ["_lower"], "src/gone.py": ["f"]})
    got = dict(eager_lines.measure())
    assert got == {"src/c.c": 2, "src/none.c": None,
                   "src/m.py::[host-kernels]": 4 + 1 + 2 + 2 + 1,   # _h_k (4 code lines), line 9, the loop,
                                                                    # lines 14-15, an entry's attribute (line 17)
                   "src/m.py::Y": 1, "src/m.py::_h_k": 0, "src/m.py::missing": None,   # (_h_k: already counted)
                   "src/m.py::_lower": 2, "src/gone.py::f": None}
