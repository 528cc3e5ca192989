"""Every source file under src/ stays under the line budget (CONTRIBUTING.md: keep files small).

Why: a file past ~600 lines has usually grown a second subject; splitting it then is cheap, later
it is not. tests/test_size_budget.py runs this in CI.

    python3 tools/size_budget.py            # the offenders, largest first, with their line counts
    python3 tools/size_budget.py --check    # exit status 1 when a file is over the budget
"""
import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "src")
BUDGET = 600          # lines per .py file
SKIP_DIRS = ("__pycache__",)


def line_counts(src=SRC):
    """{path relative to the repository root: number of lines} for every .py file under src/."""
    out = {}
    for dirpath, dirnames, files in os.walk(src):
        dirnames[:] = sorted(d for d in dirnames
                             if d not in SKIP_DIRS and not d.startswith(".") and not d.endswith(".egg-info"))
        for f in sorted(files):
            if f.endswith(".py"):
                path = os.path.join(dirpath, f)
                with open(path, "rb") as fh:
                    out[os.path.join("src", os.path.relpath(path, src))] = sum(1 for _ in fh)
    return out


def offenders(src=SRC, budget=BUDGET):
    """[(path, lines)] of the files over the budget, largest first."""
    over = [(p, n) for p, n in line_counts(src).items() if n > budget]
    return sorted(over, key=lambda t: (-t[1], t[0]))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when a file is over the budget")
    ap.add_argument("--budget", type=int, default=BUDGET)
    args = ap.parse_args(argv)
    bad = offenders(budget=args.budget)
    for path, n in bad:
        print(f"{path}: {n} lines (budget {args.budget})")
    if not bad:
        print(f"every file under src/ is within {args.budget} lines")
    return 1 if (args.check and bad) else 0


if __name__ == "__main__":
    sys.exit(main())
