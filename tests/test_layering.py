"""The layering of src/ (CONTRIBUTING.md): the engine imports neither the backend nor the namespace,
the namespace uses no private engine names, no import cycles -- checked by tools/import_graph.py
(which reads the files with `ast`), plus the proof that matters: `import transforms` works, and
stages a jaxpr, in a process where jaxlib cannot be imported.

Not mirrored from one src/ module: it checks the import structure of all of src/."""
import importlib.util
import os
import re
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _load_tool(name):
    spec = importlib.util.spec_from_file_location(f"_tool_{name}", os.path.join(ROOT, "tools", f"{name}.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


ig = _load_tool("import_graph")
EDGES, PRIVATE, MODS = ig.collect()
VIOLATIONS = ig.violations(EDGES, PRIVATE)


def _fail_on(vs, what):
    assert not vs, f"{what}:\n" + "\n".join(f"  {v}" for v in vs)


# ------------------------------------------------------------------ the rules, on this checkout

def test_the_checker_sees_the_three_packages():
    tops = {ig.package_of(m) for m in MODS}
    assert tops == set(ig.PACKAGES)
    assert {"transforms.core", "transforms.primitives.elementwise", "xla.lowering",
            "array_namespace._array"} <= set(MODS)
    # the namespace imports the engine and the backend registers into it: edges it must see
    pairs = set(ig.package_edges(EDGES))
    assert ("array_namespace", "transforms") in pairs and ("xla", "transforms") in pairs


def test_engine_imports_neither_backend_nor_namespace():
    _fail_on([v for v in VIOLATIONS if v.rule.startswith("transforms must not import")],
             "the engine (transforms) imports xla or array_namespace")


def test_backend_does_not_import_namespace():
    _fail_on([v for v in VIOLATIONS if v.rule.startswith("xla must not import")],
             "xla imports array_namespace")


def test_only_the_namespace_init_brings_the_backend_up():
    _fail_on([v for v in VIOLATIONS if v.rule.startswith("only array_namespace/__init__.py")],
             "a namespace module other than array_namespace/__init__.py imports xla")


def test_namespace_uses_no_private_name_of_engine_or_backend():
    _fail_on([v for v in VIOLATIONS if v.rule.startswith("the namespace uses a private name")],
             "the namespace reaches into private names of transforms/xla")


def test_jax_is_never_imported_and_jaxlib_only_by_xla():
    _fail_on([v for v in VIOLATIONS if v.rule.startswith(("only xla may import jaxlib", "src/ never"))],
             "jax/jaxlib imported outside xla")


def test_no_import_cycle_between_packages():
    _fail_on([v for v in VIOLATIONS if v.rule == "import cycle between packages"],
             "import cycle between packages")


def test_no_module_level_import_cycle_between_files():
    _fail_on([v for v in VIOLATIONS if v.rule == "module-level import cycle between files"],
             "module-level import cycle between files")


def test_every_violation_is_covered_by_a_test_above():
    known = ("transforms must not import", "xla must not import", "only array_namespace/__init__.py",
             "the namespace uses a private name", "only xla may import jaxlib", "src/ never",
             "import cycle between packages", "module-level import cycle between files")
    assert all(v.rule.startswith(known) for v in VIOLATIONS), VIOLATIONS


# ------------------------------------------------------------------ the checker itself, on a made-up tree

def _tree(tmp_path, files):
    for rel, text in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text))
    for pkg in ig.PACKAGES:
        (tmp_path / pkg).mkdir(exist_ok=True)
        (tmp_path / pkg / "__init__.py").touch()
    edges, private, _ = ig.collect(str(tmp_path))
    return edges, ig.violations(edges, private)


def test_checker_finds_function_local_engine_imports_and_resolves_relative_imports(tmp_path):
    edges, vs = _tree(tmp_path, {
        "transforms/jit.py": """
            from . import core
            from .primitives import elementwise as P
            def run():
                from xla import runtime
                return runtime
            """,
        "transforms/core.py": "",
        "transforms/primitives/__init__.py": "",
        "transforms/primitives/elementwise.py": "from ..core import bind\nfrom .. import core\n",
        "xla/runtime.py": "",
    })
    got = {(e.src, e.dst, e.local) for e in edges}
    assert {("transforms.jit", "transforms.core", False),
            ("transforms.jit", "transforms.primitives.elementwise", False),
            ("transforms.primitives.elementwise", "transforms.core", False),
            ("transforms.jit", "xla.runtime", True)} <= got
    bad = [v for v in vs if v.rule.startswith("transforms must not import xla")]
    assert len(bad) == 1 and bad[0].where == os.path.join("src", "transforms", "jit.py") + ":5"
    assert "function-local" in bad[0].rule and "from xla import runtime" in bad[0].text


def test_checker_finds_file_cycles_at_module_level_only(tmp_path):
    _, vs = _tree(tmp_path, {
        "transforms/a.py": "from .b import f\n",
        "transforms/b.py": "from . import c\n",
        "transforms/c.py": "import transforms.a\n",
        "transforms/d.py": "from .e import g\n",
        "transforms/e.py": "def g():\n    from .d import h\n",     # function-local: no cycle
    })
    cyc = [v for v in vs if v.rule == "module-level import cycle between files"]
    assert len(cyc) == 1 and cyc[0].where == "transforms.a <-> transforms.b <-> transforms.c"


def test_checker_finds_package_rules_and_private_names(tmp_path):
    _, vs = _tree(tmp_path, {
        "transforms/core.py": "_state = None\nEVAL = None\n",
        "xla/lowering.py": "import array_namespace._array\n",
        "array_namespace/_array.py": ("from transforms.core import EVAL, _state\n"
                                      "from transforms import core\n"
                                      "def f():\n    from xla import lowering\n    return core._state\n"),
        "array_namespace/__init__.py": "import xla\nfrom ._array import f\n",
        "array_namespace/special/_x.py": "import jax\nimport jaxlib\nimport transforms.core\nf = transforms.core._state\n",
        "xla/_jaxlib.py": "import jaxlib\n",
    })
    rules = sorted((v.rule.split(" (")[0], v.where) for v in vs)
    src = os.path.join("src", "")
    assert rules == sorted([
        ("import cycle between packages", "array_namespace <-> xla"),
        ("only array_namespace/__init__.py may import xla", f"{src}array_namespace/_array.py:4"),
        ("only xla may import jaxlib", f"{src}array_namespace/special/_x.py:2"),
        ("src/ never imports jax", f"{src}array_namespace/special/_x.py:1"),
        ("the namespace uses a private name transforms.core._state", f"{src}array_namespace/special/_x.py:4"),
        ("the namespace uses a private name transforms.core._state", f"{src}array_namespace/_array.py:1"),
        ("the namespace uses a private name transforms.core._state", f"{src}array_namespace/_array.py:5"),
        ("xla must not import array_namespace", f"{src}xla/lowering.py:1"),
    ]), rules


def test_check_flag_exits_nonzero_on_a_violation(tmp_path):
    _tree(tmp_path, {"transforms/jit.py": "import array_namespace\n"})
    tool = os.path.join(ROOT, "tools", "import_graph.py")
    bad = subprocess.run([sys.executable, tool, "--check", "--src", str(tmp_path)],
                         capture_output=True, text=True)
    assert bad.returncode == 1 and "transforms must not import array_namespace" in bad.stdout
    (tmp_path / "transforms" / "jit.py").write_text("from . import core\n")
    (tmp_path / "transforms" / "core.py").touch()
    good = subprocess.run([sys.executable, tool, "--check", "--src", str(tmp_path)],
                          capture_output=True, text=True)
    assert good.returncode == 0, good.stdout


# ------------------------------------------------------------------ the engine without jaxlib

_NO_BACKEND = r"""
import sys
BLOCKED = ("jaxlib", "jax", "xla", "array_namespace")

class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError(f"{name} is made unimportable by this test")
        return None

sys.meta_path.insert(0, Block())
sys.path.insert(0, sys.argv[1])

import numpy as np
import transforms
from transforms.core import bind
from transforms.primitives import elementwise as P
from transforms.primitives import reductions as R

def f(x, y):
    return bind(P.sin_p, P.mul(x, y))

x = np.ones(3, np.float32)
check = sys.argv[2]
if check == "stage":
    print(transforms.make_jaxpr(f)(x, x))
    print(transforms.make_jaxpr(transforms.vmap(f, in_axes=(0, None)))(np.ones((2, 3), np.float32), x))
    print(transforms.make_jaxpr(lambda x, t: transforms.jvp(lambda x: f(x, x), (x,), (t,)))(x, x))
else:
    print(transforms.make_jaxpr(transforms.grad(lambda x: R.reduce_sum(f(x, x), (0,))))(x))
leaked = sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED)
assert not leaked, leaked
print("OK")
"""

_STAGED = """{ lambda ; a:f32[3] b:f32[3]. let
    c:f32[3] = mul a b
    d:f32[3] = sin c
  in (d,) }
{ lambda ; a:f32[2,3] b:f32[3]. let
    c:f32[2,3] = mul a b
    d:f32[2,3] = sin c
  in (d,) }
{ lambda ; a:f32[3] b:f32[3]. let
    c:f32[3] = mul a a
    d:f32[3] = mul0 b a
    e:f32[3] = mul0 a b
    f:f32[3] = add d e
    g:f32[3] = sin c
    h:f32[3] = cos c
    i:f32[3] = mul0 f h
  in (g, i) }
OK"""


def _run_without_backend(check):
    res = subprocess.run([sys.executable, "-c", _NO_BACKEND, os.path.join(ROOT, "src"), check],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
    return res.stdout.strip()


def test_import_transforms_and_stage_jaxprs_without_jaxlib():
    """make_jaxpr of primitives, of their vmap and of their jvp: the engine alone, no backend."""
    assert _run_without_backend("stage") == _STAGED


def test_grad_stages_without_the_namespace():
    """grad is the engine's too: staging it needs neither jaxlib nor the namespace's Array."""
    out = _run_without_backend("grad").splitlines()
    # d/dx sum(sin(x * x)) = 2 x cos(x * x): one f32[3] in, one f32[3] out, through cos
    assert out[0] == "{ lambda ; a:f32[3]. let" and out[-1] == "OK", out
    assert re.fullmatch(r"  in \([a-z]+,\) \}", out[-2]) and any(" = cos " in ln for ln in out), out
