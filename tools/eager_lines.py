"""Print the size of the eager layer: the code that exists only to run eager work on the CPU.

What counts: every non-blank, non-comment line (docstrings included; C comments stripped) of the items listed
below -- whole files (the host modules of src/xla, the C loops and floating-point switch beside them, the complex
host kernels), the host kernels inside the lower_*.py files (`_h_*`/`_s_*`/`_H_*` definitions, every statement
storing into `host_kernels[...]` (or into an attribute of an entry of it), and the kernel-only helpers
named with them), and the eager-only functions, classes and assignments inside mixed files (the staged call's
op-by-op and probe machinery in src/transforms/jaxpr_transforms.py, the namespace's unstaged and direct paths in
src/array_namespace/_staged.py and _statistical.py, the host impls of src/xla/runtime.py). Why: none of it is
needed for correctness -- with it gone every eager primitive would run its single-op XLA executable and every
staged call its compiled one -- so its size is what the eager policy costs to read and keep right (issue 23:
~5,100 lines in ~20 files; the goal is <= 2,500). Regions inside mixed files are found by name with `ast`
(top-level `def`/`class`/assignment spans, dotted for a nested one), so the list survives edits around them; a
missing file or name counts 0 and is printed as gone. A region is a whole definition: eager-only branches inside
a shared function (e.g. `mean`'s plan path) are not counted.

    python3 tools/eager_lines.py              # every item, then the total
    python3 tools/eager_lines.py --check 2500 # exit 1 when the total is above 2500
"""
from __future__ import annotations

import argparse
import ast
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

# Whole files: all of them exists only for eager work on the CPU.
FILES = [
    "src/xla/host.py",                  # the host-kernel tables, HostValue, quiet error state
    "src/xla/host_basic_index.py",      # x[k] / x[k] = v of a host-held value on NumPy
    "src/xla/host_blas.py",             # LAPACK kernels' BLAS on one thread
    "src/xla/host_control_flow.py",     # eager while/cond/scan on host programs
    "src/xla/host_eager.py",            # the eager policy: host program, bind or compile
    "src/xla/host_parallel.py",         # large host kernels over the cores
    "src/xla/host_program.py",          # a staged jaxpr as a flat list of bound kernels
    "src/xla/host_special.py",          # special functions' host kernels
    "src/xla/lower_elementwise_complex.py",   # the complex transcendentals' host kernels
    "src/xla/_fpmode.c",                # host kernels in XLA's floating-point mode (FTZ/DAZ)
]

# Files holding host kernels beside their lowerings: the kernel rule (see `_kernel_lines`) plus the helpers named.
KERNEL_FILES = {
    "src/xla/lower_bits.py": [],
    "src/xla/lower_elementwise.py": ["_max_zeros", "_min_zeros", "_zero_signs", "_safe_divisor", "_shift_parts"],
    "src/xla/lower_elementwise_subnormal.py": ["_ONE", "_ftz", "_daz", "_flushing_result"],
    "src/xla/lower_fft.py": [],
    "src/xla/lower_indexing.py": [],
    "src/xla/lower_pow.py": ["_pow_float_scalar"],
    "src/xla/lower_lapack.py": ["_per_matrix", "_scipy_routine"],
    "src/xla/lower_sorting.py": ["STABLE_SORT_MAX"],
    "src/xla/lower_special_erf.py": [],
    "src/xla/lower_special_gamma.py": [],
    "src/xla/lower_structural.py": [],
}

# Eager-only regions of mixed files, by name.
NAMES = {
    "src/transforms/jaxpr_transforms.py": [
        "_Staged",                                                     # host program, bound equations or compiled
        "_ShapeFree", "_FREE", "_FREE_MAX", "_eager_shape_free",       # a shape-free body's host program at any shape
        "_pointwise_at", "_pointwise_jaxpr"],
    "src/array_namespace/_staged.py": [
        "_identity", "_plain_runs_on_host", "_host_by_op", "_SEEN"],
    "src/array_namespace/_statistical.py": [
        "_MOMENT_PLANS"],
    "src/array_namespace/_helpers.py": ["UNSTAGED_CALLS"],
    "src/array_namespace/_elementwise.py": ["_in_place", "IN_PLACE_MIN_BYTES"],   # x op= y written into x's memory
    "src/xla/runtime.py": [
        "_kernels_on", "_np_of", "_box_host", "eager_in_place", "_make_host_impl"],
}

_TABLES = {"host_kernels"}
_KERNEL_PREFIXES = ("_h_", "_s_", "_H_")


# ------------------------------------------------------------------ counting
def _code_lines_py(lines, span):
    return {i for i in span if lines[i - 1].strip() and not lines[i - 1].lstrip().startswith("#")}


def _strip_c_comments(text):
    """C text with /* */ and // comments blanked (newlines kept, so line numbers stay)."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
        elif text[i] in "\"'":
            q, j = text[i], i + 1
            while j < n and text[j] != q:
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def _read(rel):
    path = os.path.join(ROOT, rel)
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as f:
        return f.read()


def _file_count(rel):
    text = _read(rel)
    if text is None:
        return None
    if rel.endswith((".c", ".h")):
        text = _strip_c_comments(text)
        return sum(1 for line in text.splitlines() if line.strip())
    lines = text.splitlines()
    return len(_code_lines_py(lines, range(1, len(lines) + 1)))


def _span(node):
    first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
    return range(first, node.end_lineno + 1)


def _assigned_names(node):
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
        targets = [node.target]
    else:
        return set()
    names = set()
    for t in targets:
        for n in ast.walk(t):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                names.add(n.id)
    return names


def _find(body, dotted):
    """The top-level (or, dotted, nested) def/class/assignment named `dotted` in `body`, or None."""
    head, _, rest = dotted.partition(".")
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == head:
            return _find(node.body, rest) if rest else node
        if not rest and head in _assigned_names(node):
            return node
    return None


def _stores_into_table(stmt):
    """Whether simple statement `stmt` stores into host_kernels[...] (or host_kernels[...].attr)."""
    targets = (stmt.targets if isinstance(stmt, ast.Assign)
               else [stmt.target] if isinstance(stmt, (ast.AnnAssign, ast.AugAssign)) else [])
    for t in targets:
        if isinstance(t, ast.Attribute):
            t = t.value
        if isinstance(t, ast.Subscript):
            v = t.value
            name = v.id if isinstance(v, ast.Name) else v.attr if isinstance(v, ast.Attribute) else None
            if name in _TABLES:
                return True
    return False


def _simple_statements(node):
    if isinstance(node, (ast.For, ast.AsyncFor, ast.While, ast.If, ast.With, ast.AsyncWith, ast.Try)):
        for field in ("body", "orelse", "finalbody"):
            for s in getattr(node, field, []):
                yield from _simple_statements(s)
        for h in getattr(node, "handlers", []):
            for s in h.body:
                yield from _simple_statements(s)
    else:
        yield node


def _kernel_spans(tree):
    """The host-kernel rule: top-level definitions named _h_*/_s_*/_H_*; top-level statements whose simple
    statements all store into a kernel table (a registration loop: whole); and, anywhere else, each statement
    storing into one (inside a function that also lowers: that statement only)."""
    spans = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node.name.startswith(_KERNEL_PREFIXES):
                spans.append(_span(node))
                continue
        elif any(n.startswith(_KERNEL_PREFIXES) for n in _assigned_names(node)):
            spans.append(_span(node))
            continue
        simple = list(_simple_statements(node))
        if simple and all(_stores_into_table(s) or isinstance(s, ast.Pass) for s in simple) and \
                any(_stores_into_table(s) for s in simple):
            spans.append(_span(node))
            continue
        for s in ast.walk(node):
            if isinstance(s, ast.stmt) and _stores_into_table(s):
                spans.append(_span(s))
    return spans


def measure():
    """[(label, lines, or None where gone)] for every item, in the order listed. Within a file a line counts once,
    for the first item that holds it."""
    items = [(rel, _file_count(rel)) for rel in FILES]
    for rel in list(KERNEL_FILES) + [r for r in NAMES if r not in KERNEL_FILES]:
        rule = rel in KERNEL_FILES
        names = KERNEL_FILES.get(rel, []) + NAMES.get(rel, [])
        text = _read(rel)
        if text is None:
            items += [(f"{rel}::[host-kernels]", None)] if rule else []
            items += [(f"{rel}::{n}", None) for n in names]
            continue
        lines = text.splitlines()
        tree = ast.parse(text, rel)
        claimed = set()
        if rule:
            for sp in _kernel_spans(tree):
                claimed |= _code_lines_py(lines, sp)
            items.append((f"{rel}::[host-kernels]", len(claimed)))
        for n in names:
            node = _find(tree.body, n)
            if node is None:
                items.append((f"{rel}::{n}", None))
                continue
            got = _code_lines_py(lines, _span(node)) - claimed
            claimed |= got
            items.append((f"{rel}::{n}", len(got)))
    return items


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", type=int, metavar="N", help="exit 1 when the total is above N")
    args = ap.parse_args(argv)
    items = measure()
    total = sum(n or 0 for _, n in items)
    print("eager layer: non-blank, non-comment lines of the code that exists only to run eager work on the CPU")
    for label, n in items:
        print(f"{n or 0:6d}  {label}" + ("  (gone)" if n is None else ""))
    print(f"{total:6d}  total")
    if args.check is not None and total > args.check:
        print(f"eager layer over budget: {total} lines > {args.check}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
