"""The import graph of src/ (transforms, xla, array_namespace), read with `ast` -- nothing is imported.

Why: the layering rules of CONTRIBUTING.md (the engine never imports the backend or the namespace, no
import cycles) are easy to break with one innocent line, and a cycle between files at module level
only shows up as an ImportError in whichever order someone happens to import things. This script is
the one place those rules are written down as code; tests/test_layering.py runs it.

    python3 tools/import_graph.py           # package graph, each edge with file:line, then violations
    python3 tools/import_graph.py --check   # exit status 1 when a rule is broken

Rules checked:
  * the engine (`transforms`, all of it) imports neither `xla` nor `array_namespace`, not even
    inside a function;
  * `xla` may import `transforms` (it registers into the engine's tables), never `array_namespace`;
  * `array_namespace` may import `transforms`; only `array_namespace/__init__.py` imports `xla`
    (it brings the backend up);
  * the namespace (`array_namespace`, its subpackages) uses no private name (`_x`) of the engine
    or the backend: neither `from transforms.core import _state` nor `core._state`;
  * no cycle between the three packages; no cycle between files at module level (function-local
    imports run later and do not count).
"""
import argparse
import ast
import os
import sys
from dataclasses import dataclass

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "src")
PACKAGES = ("transforms", "xla", "array_namespace")
ENGINE, BACKEND, NAMESPACE = PACKAGES

# package -> packages it may import (an edge to itself is always allowed)
ALLOWED = {ENGINE: set(), BACKEND: {ENGINE}, NAMESPACE: {ENGINE, BACKEND}}
# imported by no file of src/, except jaxlib by the backend (its private protocol stays there)
FOREIGN = ("jax", "jaxlib")
# the only namespace modules allowed to import the backend
NAMESPACE_BACKEND_IMPORTERS = {NAMESPACE}


@dataclass(frozen=True)
class Edge:
    src: str          # importing module, dotted ("transforms.jit")
    dst: str          # imported module, dotted ("xla.runtime")
    path: str         # file of src, relative to the repository root
    line: int
    local: bool       # inside a function (runs later, when the function is called)
    text: str         # the import statement as written

    @property
    def where(self):
        return f"{self.path}:{self.line}"


@dataclass(frozen=True)
class Violation:
    rule: str
    where: str
    text: str

    def __str__(self):
        return f"{self.where}: {self.rule}: {self.text}"


def package_of(mod):
    return mod.split(".")[0]


def discover(src=SRC):
    """{dotted module name: file path} for every .py file of the three packages, and every C source (an
    extension module of the same name, built by the install: see pyproject.toml; it imports nothing of ours)."""
    mods = {}
    for pkg in PACKAGES:
        for dirpath, dirnames, files in os.walk(os.path.join(src, pkg)):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith((".", "__pycache__")))
            for f in sorted(files):
                if not f.endswith((".py", ".c")):
                    continue
                rel = os.path.relpath(os.path.join(dirpath, f), src).rsplit(".", 1)[0].split(os.sep)
                if rel[-1] == "__init__":
                    rel = rel[:-1]
                mods[".".join(rel)] = os.path.join(dirpath, f)
    return mods


def _is_package(mod, mods):
    return mods[mod].endswith("__init__.py")


def _resolve_from(mod, node, mods):
    """The absolute module a `from ... import` names (relative imports resolved)."""
    if not node.level:
        return node.module
    base = mod.split(".")
    if not _is_package(mod, mods):
        base = base[:-1]
    if node.level > 1:
        base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


class _Visitor(ast.NodeVisitor):
    def __init__(self, mod, mods, lines):
        self.mod, self.mods, self.lines = mod, mods, lines
        self.depth = 0                # > 0 inside a function or lambda body
        self.imports = []             # (node, [(target module, imported name or None)], local)

    def _func(self, node):
        for d in getattr(node, "decorator_list", []):   # decorators and defaults run at def time
            self.visit(d)
        self.depth += 1
        self.visit(node.body) if isinstance(node, ast.Lambda) else [self.visit(s) for s in node.body]
        self.depth -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _func

    def visit_Import(self, node):
        targets = [(a.name, None) for a in node.names]
        self.imports.append((node, targets, self.depth > 0))

    def visit_ImportFrom(self, node):
        base = _resolve_from(self.mod, node, self.mods)
        targets = []
        for a in node.names:
            sub = f"{base}.{a.name}"
            targets.append((sub, None) if sub in self.mods else (base, a.name))
        self.imports.append((node, targets, self.depth > 0))


def _statement_text(node, lines):
    end = getattr(node, "end_lineno", node.lineno)
    return " ".join(s.strip() for s in lines[node.lineno - 1:end])


def parse_module(mod, path, mods, src=SRC):
    """(edges, [(file, line, name, text)]) of one file: the edges go to modules of the three
    packages only; the second list holds private names of other packages it uses, and its
    imports of jax/jaxlib (name "jax"/"jaxlib") where the rules forbid them."""
    if path.endswith(".c"):
        return [], []
    with open(path, encoding="utf-8") as fh:
        source = fh.read()
    lines = source.splitlines()
    tree = ast.parse(source, path)
    v = _Visitor(mod, mods, lines)
    v.visit(tree)
    rel = os.path.join("src", os.path.relpath(path, src))
    edges, private, foreign, seen = [], [], [], set()
    bound = {}                        # local name -> module it names (for attribute checks)
    for node, targets, local in v.imports:
        text = _statement_text(node, lines)
        for (target, name), alias in zip(targets, node.names):
            top = package_of(target)
            if top in FOREIGN and not (top == "jaxlib" and package_of(mod) == BACKEND):
                foreign.append((rel, node.lineno, top, text))
            if top not in PACKAGES:
                continue
            dst = target
            while dst not in mods and "." in dst:   # `import a.b.c` where a.b.c is not a file
                dst = dst.rsplit(".", 1)[0]
            if dst not in mods:
                continue
            if (dst, node.lineno) not in seen:
                seen.add((dst, node.lineno))
                edges.append(Edge(mod, dst, rel, node.lineno, local, text))
            if (name is not None and name.startswith("_") and not name.startswith("__")
                    and package_of(dst) != package_of(mod)):
                private.append((rel, node.lineno, f"{dst}.{name}", text))
            if name is None:
                if isinstance(node, ast.ImportFrom) or alias.asname:
                    bound[alias.asname or alias.name.split(".")[-1]] = dst
                else:
                    bound[alias.name.split(".")[0]] = package_of(dst)
    # `core._state` after `from transforms import core`, `transforms.core._state` after `import transforms.core`
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and node.attr.startswith("_")
                and not node.attr.startswith("__")):
            continue
        chain, base = [], node.value
        while isinstance(base, ast.Attribute):
            chain.append(base.attr)
            base = base.value
        if isinstance(base, ast.Name) and base.id in bound:
            target = ".".join([bound[base.id]] + chain[::-1])
            if package_of(target) != package_of(mod):
                private.append((rel, node.lineno, f"{target}.{node.attr}",
                                lines[node.lineno - 1].strip()))
    return edges, private + foreign


def collect(src=SRC):
    """(all edges, private-name uses, modules) of src/."""
    mods = discover(src)
    edges, private = [], {}
    for mod, path in mods.items():
        e, p = parse_module(mod, path, mods, src)
        edges += e
        private[mod] = p
    return edges, private, mods


def _sccs(nodes, succ):
    """Strongly connected components with more than one node, or a node importing itself."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def strong(v):
        work = [(v, iter(sorted(succ.get(v, ()))))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        while work:
            node, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(succ.get(w, ())))))
                    break
                if w in on:
                    low[node] = min(low[node], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == node:
                            break
                    if len(comp) > 1 or node in succ.get(node, ()):
                        out.append(sorted(comp))

    for n in sorted(nodes):
        if n not in index:
            strong(n)
    return sorted(out)


def file_cycles(edges):
    """Cycles between files through module-level imports: [(modules, edges inside the cycle)]."""
    succ = {}
    for e in edges:
        if not e.local and e.src != e.dst:
            succ.setdefault(e.src, set()).add(e.dst)
    nodes = set(succ) | {d for s in succ.values() for d in s}
    out = []
    for comp in _sccs(nodes, succ):
        members = set(comp)
        inside = [e for e in edges if not e.local and e.src in members and e.dst in members
                  and e.src != e.dst]
        out.append((comp, inside))
    return out


def package_edges(edges):
    """{(src package, dst package): [edges]} for edges between different packages."""
    out = {}
    for e in edges:
        a, b = package_of(e.src), package_of(e.dst)
        if a != b:
            out.setdefault((a, b), []).append(e)
    return out


def package_cycles(edges):
    succ = {}
    for a, b in package_edges(edges):
        succ.setdefault(a, set()).add(b)
    return _sccs(set(PACKAGES), succ)


def violations(edges=None, private=None):
    """Every broken rule, as Violation(rule, file:line, import text)."""
    if edges is None:
        edges, private, _ = collect()
    out = []
    for (a, b), es in sorted(package_edges(edges).items()):
        for e in es:
            kind = "function-local" if e.local else "module-level"
            if b not in ALLOWED[a]:
                out.append(Violation(f"{a} must not import {b} ({kind}, {e.dst})", e.where, e.text))
            elif a == NAMESPACE and b == BACKEND and e.src not in NAMESPACE_BACKEND_IMPORTERS:
                out.append(Violation(f"only array_namespace/__init__.py may import xla "
                                     f"({kind}, {e.src} -> {e.dst})", e.where, e.text))
    for mod in sorted(private or {}):
        for rel, line, name, text in private[mod]:
            if name in FOREIGN:
                who = "only xla may import jaxlib" if name == "jaxlib" else "src/ never imports jax"
                out.append(Violation(who, f"{rel}:{line}", text))
            elif package_of(mod) == NAMESPACE:
                out.append(Violation(f"the namespace uses a private name {name}", f"{rel}:{line}",
                                     text))
    for comp in package_cycles(edges):
        out.append(Violation("import cycle between packages", " <-> ".join(comp),
                             "see the package graph above"))
    for comp, inside in file_cycles(edges):
        detail = "; ".join(f"{e.src} -> {e.dst} ({e.where})" for e in inside)
        out.append(Violation("module-level import cycle between files",
                             " <-> ".join(comp), detail))
    return out


def report(edges, private):
    lines = ["Package-level import graph (edges between transforms / xla / array_namespace):"]
    pe = package_edges(edges)
    for a in PACKAGES:
        for b in PACKAGES:
            es = pe.get((a, b))
            if not es:
                continue
            n_mod = sum(not e.local for e in es)
            lines.append(f"  {a} -> {b}: {len(es)} imports ({n_mod} module-level, "
                         f"{len(es) - n_mod} function-local)")
            for e in sorted(es, key=lambda e: (e.path, e.line)):
                kind = "local " if e.local else "module"
                lines.append(f"    [{kind}] {e.where}  {e.src} -> {e.dst}")
    cyc = package_cycles(edges)
    lines.append("Package cycles: " + ("; ".join(" <-> ".join(c) for c in cyc) if cyc else "none"))
    fc = file_cycles(edges)
    lines.append(f"Module-level cycles between files: {len(fc) or 'none'}")
    for comp, inside in fc:
        lines.append("  cycle: " + " <-> ".join(comp))
        for e in sorted(inside, key=lambda e: (e.path, e.line)):
            lines.append(f"    {e.where}  {e.src} -> {e.dst}")
    vs = violations(edges, private)
    lines.append(f"Violations: {len(vs) or 'none'}")
    lines += [f"  {v}" for v in vs]
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when a rule is broken")
    ap.add_argument("--src", default=SRC, help="the src/ folder to read (default: this checkout's)")
    args = ap.parse_args(argv)
    edges, private, _ = collect(args.src)
    print(report(edges, private))
    if args.check and violations(edges, private):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
