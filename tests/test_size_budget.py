"""Every file under src/ stays within the line budget (tools/size_budget.py; CONTRIBUTING.md).

Not mirrored from one src/ module: it checks the size of all of src/."""
import importlib.util
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_spec = importlib.util.spec_from_file_location("_tool_size_budget", os.path.join(ROOT, "tools", "size_budget.py"))
sb = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sb)


def test_no_source_file_over_the_budget():
    bad = sb.offenders()
    assert not bad, (f"files under src/ over {sb.BUDGET} lines (split them by subject):\n"
                     + "\n".join(f"  {p}: {n} lines" for p, n in bad))


def test_the_budget_counts_every_source_file(tmp_path):
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "small.py").write_text("x = 1\n" * sb.BUDGET)
    (tmp_path / "pkg" / "sub" / "big.py").write_text("x = 1\n" * (sb.BUDGET + 1))
    (tmp_path / "pkg" / "notes.txt").write_text("x\n" * 5000)
    assert sb.offenders(str(tmp_path)) == [(os.path.join("src", "pkg", "sub", "big.py"), sb.BUDGET + 1)]
    counts = sb.line_counts()
    assert counts[os.path.join("src", "transforms", "core.py")] > 100
    assert all(p.endswith(".py") for p in counts) and len(counts) > 50
